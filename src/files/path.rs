//! The sandbox: the one place where a path of the `data/` view is read, checked and turned
//! into a [`DataPath`]. No tool builds or splits a path itself; names of files in the view
//! ([`manuscript_name`], [`bible_name`]) are made here too.
//!
//! A path is relative to `data/` (a leading `data/` is accepted and dropped). It is refused
//! with a [`SecurityError`] naming the broken [`Rule`], before anything is read or changed,
//! when it:
//! - contains a NUL or another control character ([`Rule::Control`]);
//! - contains `%` at all: no percent-encoding, once or twice ([`Rule::Percent`]);
//! - contains a backslash ([`Rule::Backslash`]);
//! - starts with a drive letter (`C:`) ([`Rule::Drive`]) or with `/` ([`Rule::Absolute`]);
//! - contains a Unicode look-alike of a dot, slash or backslash (fullwidth `．／＼`, `∕`,
//!   `⁄`, `․`, `‥`, `﹒`...) ([`Rule::Lookalike`]) or any other character that is not a
//!   letter, an ASCII digit, `-`, `_`, `.` or a space ([`Rule::Character`]): `:`, `~`, `*`,
//!   `?`, `<`, `>`, `|`, quotes, zero-width and direction marks are all refused;
//! - is longer than [`MAX_PATH_BYTES`] bytes, or has a segment longer than
//!   [`MAX_SEGMENT_CHARS`] chars ([`Rule::TooLong`]);
//! - has an empty segment (`a//b`) ([`Rule::EmptySegment`]), a `.` or `..` segment (or any
//!   segment of dots only) ([`Rule::DotSegment`]), a segment starting with a dot (hidden
//!   files such as `.htaccess`) ([`Rule::Hidden`]) or starting or ending with a space, or
//!   ending with a dot ([`Rule::Edge`]);
//! - ends with `/` where a file is meant ([`Rule::TrailingSlash`]);
//! - does not start with one of the view's four folders, `manuscripts`, `bible`, `plans`,
//!   `notes` ([`Rule::Outside`]). Every write lands in one of them.
//!
//! The root itself is named by `""`, `"."`, `"data"` or `"data/"` (for listing); `"/"` is an
//! absolute path and refused.
//!
//! A path that passes the sandbox but names nothing the view has (a bible kind that does not
//! exist, a subfolder of `manuscripts/`, a folder where a file is meant) is a
//! [`PathError::Invalid`], which tools report as `invalid_args` or `not_found`.
//!
//! Chapter files are named `manuscripts/NN-<slug>.md` and resolved **by their number** only:
//! `manuscripts/03.md`, `manuscripts/03-the-stair.md` and `manuscripts/3-old-title.md` all
//! name chapter 3, whatever its title is now.

use std::fmt;

use crate::bible::Kind;

/// The longest path accepted, in bytes (after a leading `data/` is dropped, or before).
pub const MAX_PATH_BYTES: usize = 255;
/// The longest segment (file or folder name) accepted, in chars.
pub const MAX_SEGMENT_CHARS: usize = 100;
/// The longest slug of a chapter file name, in chars.
pub const MAX_SLUG_CHARS: usize = 40;

/// A top-level folder of the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Folder {
    /// `manuscripts/`: one file per chapter.
    Manuscripts,
    /// `bible/`: one folder per kind, one JSON file per entity.
    Bible,
    /// `plans/`: free files (outlines, plans, task lists).
    Plans,
    /// `notes/`: free files.
    Notes,
}

impl Folder {
    /// The four folders, in listing order.
    pub const ALL: [Folder; 4] = [
        Folder::Manuscripts,
        Folder::Bible,
        Folder::Plans,
        Folder::Notes,
    ];

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Folder::Manuscripts => "manuscripts",
            Folder::Bible => "bible",
            Folder::Plans => "plans",
            Folder::Notes => "notes",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        Folder::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// A folder of the view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirPath {
    /// `data/` itself.
    Root,
    /// `manuscripts/`.
    Manuscripts,
    /// `bible/`.
    Bible,
    /// `bible/<kind>/`.
    BibleKind(Kind),
    /// A folder of free files: `plans`, `notes` or below (no trailing slash).
    Free(String),
}

/// What a path names, once it passed the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataPath {
    /// A folder.
    Dir(DirPath),
    /// A chapter's file, by its 1-based number in reading order.
    Manuscript {
        /// The chapter number (1-based).
        number: usize,
    },
    /// A story-bible entity's file.
    Bible {
        /// Its kind.
        kind: Kind,
        /// Its id.
        id: String,
    },
    /// A free file under `plans/` or `notes/` (its full path, such as `plans/outline.md`).
    Free {
        /// The path, relative to `data/`.
        path: String,
    },
}

/// What the caller means a path to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// A file (to read, write or edit).
    File,
    /// A folder (to list).
    Dir,
    /// Either (to search): a free path without a trailing slash resolves as a file, which
    /// the caller may treat as a folder when no such file exists.
    Any,
}

/// The sandbox rule a path broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// NUL or another control character.
    Control,
    /// `%` (percent-encoding).
    Percent,
    /// A backslash.
    Backslash,
    /// A drive letter (`C:`).
    Drive,
    /// A leading `/`.
    Absolute,
    /// A Unicode look-alike of `.`, `/` or `\`.
    Lookalike,
    /// Any other character outside letters, ASCII digits, `-`, `_`, `.` and space.
    Character,
    /// Too long, as a whole or in one segment.
    TooLong,
    /// An empty segment (`a//b`).
    EmptySegment,
    /// A `.` or `..` segment (or dots only).
    DotSegment,
    /// A segment starting with a dot.
    Hidden,
    /// A segment starting or ending with a space, or ending with a dot.
    Edge,
    /// A trailing `/` where a file is meant.
    TrailingSlash,
    /// Not inside one of the four folders.
    Outside,
}

impl Rule {
    /// A stable name, as in the error's details.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Control => "control_character",
            Rule::Percent => "percent_encoding",
            Rule::Backslash => "backslash",
            Rule::Drive => "drive_letter",
            Rule::Absolute => "absolute_path",
            Rule::Lookalike => "lookalike_character",
            Rule::Character => "forbidden_character",
            Rule::TooLong => "too_long",
            Rule::EmptySegment => "empty_segment",
            Rule::DotSegment => "dot_segment",
            Rule::Hidden => "hidden_name",
            Rule::Edge => "name_edge",
            Rule::TrailingSlash => "trailing_slash",
            Rule::Outside => "outside_data",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A path that is not plainly inside `data/`. Nothing was read or changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SecurityError: {message}")]
pub struct SecurityError {
    /// The rule it broke.
    pub rule: Rule,
    /// What was wrong and what would work.
    pub message: String,
}

/// Why a path could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The sandbox refused it.
    #[error(transparent)]
    Security(#[from] SecurityError),
    /// It is inside `data/` but names nothing of the view's shape (the message says what
    /// would).
    #[error("{0}")]
    Invalid(String),
}

const ROOT_HINT: &str = "paths are relative to data/ and start with manuscripts/, bible/, plans/ or notes/ (for example plans/outline.md); list_files with \"\" shows the root";

/// The path as shown in messages: escaped, at most 80 chars.
pub fn shown(raw: &str) -> String {
    let escaped: String = raw.chars().flat_map(char::escape_debug).collect();
    if escaped.chars().count() > 80 {
        let cut: String = escaped.chars().take(80).collect();
        format!("{cut}…")
    } else {
        escaped
    }
}

fn refuse(rule: Rule, raw: &str, why: impl fmt::Display) -> SecurityError {
    SecurityError {
        rule,
        message: format!(
            "the path \"{}\" was refused ({}): {why}. Nothing was read or changed; {ROOT_HINT}.",
            shown(raw),
            rule.name()
        ),
    }
}

/// What a character looks like, if it is a known look-alike of `.`, `/` or `\`.
fn lookalike(c: char) -> Option<&'static str> {
    match c {
        '\u{FF0E}' | '\u{2024}' | '\u{2025}' | '\u{2026}' | '\u{FE52}' | '\u{00B7}'
        | '\u{2027}' | '\u{0701}' | '\u{0702}' | '\u{06D4}' | '\u{3002}' | '\u{FF61}'
        | '\u{2E31}' | '\u{A4F8}' | '\u{0660}' | '\u{06F0}' | '\u{2219}' | '\u{22C5}'
        | '\u{FE30}' => Some("a dot"),
        '\u{FF0F}' | '\u{2215}' | '\u{2044}' | '\u{29F8}' | '\u{2571}' | '\u{1735}'
        | '\u{0338}' | '\u{0337}' | '\u{2CC6}' => Some("a slash"),
        '\u{FF3C}' | '\u{2216}' | '\u{29F5}' | '\u{29F9}' | '\u{FE68}' | '\u{2572}'
        | '\u{20E5}' => Some("a backslash"),
        _ => None,
    }
}

/// Whether a character may appear in a path segment.
fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c, '-' | '_' | '.' | ' ')
        || (!c.is_ascii() && c.is_alphabetic() && lookalike(c).is_none())
}

/// Check the characters and the shape of a raw path and split it into segments (after a
/// leading `data/`). Returns the segments (empty for the root) and whether it ended with
/// `/`.
fn split(raw: &str) -> Result<(Vec<&str>, bool), SecurityError> {
    for c in raw.chars() {
        if c.is_control() {
            return Err(refuse(
                Rule::Control,
                raw,
                format!(
                    "it contains the control character U+{:04X}; paths hold no control characters",
                    u32::from(c)
                ),
            ));
        }
    }
    if raw.contains('%') {
        return Err(refuse(
            Rule::Percent,
            raw,
            "it contains '%'; paths are never percent-encoded (write '.' and '/' as themselves, and no '..')",
        ));
    }
    if raw.contains('\\') {
        return Err(refuse(
            Rule::Backslash,
            raw,
            "it contains a backslash; separate folders with '/'",
        ));
    }
    let mut chars = raw.chars();
    if let (Some(letter), Some(':')) = (chars.next(), chars.next()) {
        if letter.is_ascii_alphabetic() {
            return Err(refuse(
                Rule::Drive,
                raw,
                "it starts with a drive letter; there are no drives, only data/",
            ));
        }
    }
    if raw.starts_with('/') {
        return Err(refuse(
            Rule::Absolute,
            raw,
            "it is absolute (starts with '/'); give it relative to data/ (use \"\" for the root)",
        ));
    }
    for c in raw.chars() {
        if let Some(what) = lookalike(c) {
            return Err(refuse(
                Rule::Lookalike,
                raw,
                format!(
                    "it contains U+{:04X}, which looks like {what}; use plain ASCII '.' and '/'",
                    u32::from(c)
                ),
            ));
        }
        if c != '/' && !allowed(c) {
            return Err(refuse(
                Rule::Character,
                raw,
                format!(
                    "it contains '{}' (U+{:04X}); names may hold letters, digits, '-', '_', '.' and spaces",
                    c.escape_debug(),
                    u32::from(c)
                ),
            ));
        }
    }
    if raw.len() > MAX_PATH_BYTES {
        return Err(refuse(
            Rule::TooLong,
            raw,
            format!(
                "it is {} bytes long; at most {MAX_PATH_BYTES} are accepted",
                raw.len()
            ),
        ));
    }
    let rest = if raw == "data" {
        ""
    } else {
        raw.strip_prefix("data/").unwrap_or(raw)
    };
    if rest.is_empty() || rest == "." {
        return Ok((Vec::new(), false));
    }
    let (body, trailing) = match rest.strip_suffix('/') {
        Some(body) => (body, true),
        None => (rest, false),
    };
    if body.is_empty() {
        return Err(refuse(
            Rule::EmptySegment,
            raw,
            "it has an empty folder name ('//')",
        ));
    }
    let segments: Vec<&str> = body.split('/').collect();
    for segment in &segments {
        if segment.is_empty() {
            return Err(refuse(
                Rule::EmptySegment,
                raw,
                "it has an empty folder name ('//')",
            ));
        }
        if segment.chars().all(|c| c == '.') {
            return Err(refuse(
                Rule::DotSegment,
                raw,
                format!(
                    "it has a '{segment}' segment; '.' and '..' are not allowed anywhere in a path"
                ),
            ));
        }
        if segment.starts_with('.') {
            return Err(refuse(
                Rule::Hidden,
                raw,
                format!(
                    "'{}' starts with a dot; hidden names are not allowed",
                    shown(segment)
                ),
            ));
        }
        if segment.starts_with(' ') || segment.ends_with(' ') || segment.ends_with('.') {
            return Err(refuse(
                Rule::Edge,
                raw,
                format!(
                    "'{}' starts or ends with a space or ends with a dot",
                    shown(segment)
                ),
            ));
        }
        let len = segment.chars().count();
        if len > MAX_SEGMENT_CHARS {
            return Err(refuse(
                Rule::TooLong,
                raw,
                format!("a name is {len} chars long; at most {MAX_SEGMENT_CHARS} are accepted"),
            ));
        }
    }
    if Folder::from_name(segments[0]).is_none() {
        return Err(refuse(
            Rule::Outside,
            raw,
            format!(
                "'{}' is not one of data/'s folders (manuscripts, bible, plans, notes)",
                shown(segments[0])
            ),
        ));
    }
    Ok((segments, trailing))
}

/// Check a path against the sandbox and resolve it as `want`.
pub fn resolve(raw: &str, want: Want) -> Result<DataPath, PathError> {
    let (segments, trailing) = split(raw)?;
    if trailing && want == Want::File {
        return Err(refuse(
            Rule::TrailingSlash,
            raw,
            "it ends with '/', which names a folder, where a file is meant",
        )
        .into());
    }
    let as_file = want == Want::File || (want == Want::Any && !trailing);
    let Some((first, rest)) = segments.split_first() else {
        return dir_or_folder_error(raw, want, DirPath::Root);
    };
    let folder = Folder::from_name(first).ok_or_else(|| {
        PathError::Security(refuse(Rule::Outside, raw, "not one of data/'s folders"))
    })?;
    match folder {
        Folder::Manuscripts => match rest {
            [] => dir_or_folder_error(raw, want, DirPath::Manuscripts),
            [name] if as_file || name.ends_with(".md") => {
                Ok(DataPath::Manuscript {
                    number: chapter_number(name)?,
                })
            }
            [_] => Err(PathError::Invalid(format!(
                "'{}' is not a folder: manuscripts/ holds only chapter files (NN-title.md); list_files \"manuscripts\" shows them",
                shown(raw)
            ))),
            _ => Err(PathError::Invalid(format!(
                "manuscripts/ has no subfolders; chapter files are manuscripts/NN-title.md (\"{}\" names none)",
                shown(raw)
            ))),
        },
        Folder::Bible => match rest {
            [] => dir_or_folder_error(raw, want, DirPath::Bible),
            [kind] => {
                let kind = parse_kind(kind)?;
                dir_or_folder_error(raw, want, DirPath::BibleKind(kind))
            }
            [kind, name] => {
                let kind = parse_kind(kind)?;
                if want == Want::Dir || trailing {
                    return Err(PathError::Invalid(format!(
                        "'{}' is an entry's file, not a folder; list bible/{kind} instead",
                        shown(raw)
                    )));
                }
                let id = name.strip_suffix(".json").filter(|id| !id.is_empty()).ok_or_else(|| {
                    PathError::Invalid(format!(
                        "story-bible files are bible/<kind>/<id>.json (such as bible/{kind}/mara.json); \"{}\" is not",
                        shown(raw)
                    ))
                })?;
                Ok(DataPath::Bible {
                    kind,
                    id: id.to_string(),
                })
            }
            _ => Err(PathError::Invalid(format!(
                "bible/ holds one folder per kind and one file per entry (bible/<kind>/<id>.json); \"{}\" is deeper",
                shown(raw)
            ))),
        },
        Folder::Plans | Folder::Notes => {
            let path = segments.join("/");
            if rest.is_empty() || !as_file {
                dir_or_folder_error(raw, want, DirPath::Free(path))
            } else {
                Ok(DataPath::Free { path })
            }
        }
    }
}

fn dir_or_folder_error(raw: &str, want: Want, dir: DirPath) -> Result<DataPath, PathError> {
    if want == Want::File {
        return Err(PathError::Invalid(format!(
            "\"{}\" is a folder, not a file; list_files shows what it holds",
            shown(raw)
        )));
    }
    Ok(DataPath::Dir(dir))
}

fn parse_kind(name: &str) -> Result<Kind, PathError> {
    name.parse::<Kind>().map_err(|_| {
        PathError::Invalid(format!(
            "bible/ has no folder '{}'; its folders are the kinds: {}",
            shown(name),
            Kind::ALL.map(Kind::name).join(", ")
        ))
    })
}

/// The chapter number a `manuscripts/` file name names: its leading digits, after an
/// optional `ch` or `chapter` (the TextCraft seed's `ch01.md`, `chapter-4.md`). The rest of
/// the name (`-<slug>`) is ignored, so a stale or shortened title still names the chapter.
fn chapter_number(name: &str) -> Result<usize, PathError> {
    chapter_name(name).map(|(number, _)| number)
}

/// The title a `manuscripts/` file name gives a new chapter: the words of its slug
/// (`04-the-storm.md` → "The storm"), or `None` when the name has none (`ch04.md`,
/// `chapter-4.md`, `04.md`). Only the file name counts, not its folders.
pub fn chapter_title_from_name(path: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (_, slug) = chapter_name(name).ok()?;
    let words: Vec<&str> = slug.split(['-', '_']).filter(|w| !w.is_empty()).collect();
    let title = words.join(" ");
    let mut chars = title.chars();
    let first = chars.next()?;
    Some(first.to_uppercase().chain(chars).collect())
}

/// A `manuscripts/` file name's chapter number and the slug after it (`""` when none).
fn chapter_name(name: &str) -> Result<(usize, &str), PathError> {
    let bad = || {
        PathError::Invalid(format!(
            "chapter files are named by number: manuscripts/NN-title.md (such as manuscripts/03-the-stair.md, or just manuscripts/03.md or manuscripts/ch03.md); \"{}\" is not",
            shown(name)
        ))
    };
    let stem = name.strip_suffix(".md").ok_or_else(bad)?;
    let lower = stem.to_ascii_lowercase();
    let prefix = ["chapter", "ch"]
        .into_iter()
        .find(|p| lower.starts_with(p))
        .map_or(0, str::len);
    let stem = &stem[prefix..];
    let stem = match prefix {
        0 => stem,
        _ => stem.strip_prefix(['-', '_']).unwrap_or(stem),
    };
    let digits: String = stem.chars().take_while(char::is_ascii_digit).collect();
    let rest = &stem[digits.len()..];
    if digits.is_empty() || digits.len() > 6 || !(rest.is_empty() || rest.starts_with('-')) {
        return Err(bad());
    }
    match digits.parse::<usize>() {
        Ok(n) if n > 0 => Ok((n, rest.trim_start_matches('-'))),
        _ => Err(PathError::Invalid(
            "chapters are numbered from 1 (manuscripts/01-….md is the first)".into(),
        )),
    }
}

/// A chapter title as a file-name slug: lowercase ASCII letters and digits joined by
/// hyphens; accented Latin letters are folded (`é` → `e`, `ß` → `ss`), other characters
/// dropped; at most [`MAX_SLUG_CHARS`] chars; `chapter` when nothing is left.
pub fn slug(title: &str) -> String {
    let mut out = String::new();
    let mut gap = false;
    for c in title.chars().flat_map(char::to_lowercase) {
        let folded: &str = match fold(c) {
            Some(f) => f,
            None if c.is_ascii_alphanumeric() => {
                if gap && !out.is_empty() {
                    out.push('-');
                }
                gap = false;
                out.push(c);
                continue;
            }
            None => {
                // Spaces and punctuation become hyphens; other characters (letters of
                // other scripts, combining marks) vanish.
                if c.is_whitespace()
                    || c.is_ascii_punctuation()
                    || ('\u{2000}'..='\u{206F}').contains(&c)
                {
                    gap = true;
                }
                continue;
            }
        };
        if gap && !out.is_empty() {
            out.push('-');
        }
        gap = false;
        out.push_str(folded);
    }
    if out.chars().count() > MAX_SLUG_CHARS {
        let cut: String = out.chars().take(MAX_SLUG_CHARS).collect();
        out = match cut.rfind('-') {
            Some(i) if i >= MAX_SLUG_CHARS / 2 => cut[..i].to_string(),
            _ => cut,
        };
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() {
        "chapter".into()
    } else {
        out
    }
}

/// The ASCII form of an accented Latin letter (lowercase), if it has one.
fn fold(c: char) -> Option<&'static str> {
    Some(match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => "a",
        'æ' => "ae",
        'ç' | 'ć' | 'ĉ' | 'ċ' | 'č' => "c",
        'ď' | 'đ' | 'ð' => "d",
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ĕ' | 'ė' | 'ę' | 'ě' => "e",
        'ĝ' | 'ğ' | 'ġ' | 'ģ' => "g",
        'ĥ' | 'ħ' => "h",
        'ì' | 'í' | 'î' | 'ï' | 'ĩ' | 'ī' | 'ĭ' | 'į' | 'ı' => "i",
        'ĵ' => "j",
        'ķ' => "k",
        'ĺ' | 'ļ' | 'ľ' | 'ŀ' | 'ł' => "l",
        'ñ' | 'ń' | 'ņ' | 'ň' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ŏ' | 'ő' => "o",
        'œ' => "oe",
        'ŕ' | 'ŗ' | 'ř' => "r",
        'ś' | 'ŝ' | 'ş' | 'š' => "s",
        'ß' => "ss",
        'ţ' | 'ť' | 'ŧ' => "t",
        'þ' => "th",
        'ù' | 'ú' | 'û' | 'ü' | 'ũ' | 'ū' | 'ŭ' | 'ů' | 'ű' | 'ų' => "u",
        'ŵ' => "w",
        'ý' | 'ÿ' | 'ŷ' => "y",
        'ź' | 'ż' | 'ž' => "z",
        _ => return None,
    })
}

/// The file name of chapter `number` (1-based) of `count`, titled `title`: `NN-<slug>.md`,
/// with two digits (three or more when there are more than 99 chapters).
pub fn manuscript_name(number: usize, count: usize, title: &str) -> String {
    let width = count.to_string().len().max(2);
    format!("{number:0width$}-{}.md", slug(title))
}

/// The path of chapter `number` of `count`: `manuscripts/NN-<slug>.md`.
pub fn manuscript_path(number: usize, count: usize, title: &str) -> String {
    format!(
        "{}/{}",
        Folder::Manuscripts.name(),
        manuscript_name(number, count, title)
    )
}

/// The file name of a story-bible entity (`<id>.json`), or `None` when its id cannot be a
/// file name in the sandbox (such as a translation's `<scene>:<line>`): such entities are
/// left out of the view and reached through the bible tools.
pub fn bible_name(id: &str) -> Option<String> {
    let name = format!("{id}.json");
    let path = format!("bible/character/{name}");
    match resolve(&path, Want::File) {
        Ok(DataPath::Bible { id: got, .. }) if got == id => Some(name),
        _ => None,
    }
}

/// The path of a story-bible entity's file: `bible/<kind>/<id>.json`.
pub fn bible_path(kind: Kind, id: &str) -> String {
    format!("{}/{kind}/{id}.json", Folder::Bible.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(raw: &str) -> Rule {
        match resolve(raw, Want::Any) {
            Err(PathError::Security(e)) => e.rule,
            other => panic!("{raw:?} was not refused: {other:?}"),
        }
    }

    #[test]
    fn names_the_rule() {
        assert_eq!(rule("../etc/passwd"), Rule::DotSegment);
        assert_eq!(rule("plans/../../x"), Rule::DotSegment);
        assert_eq!(rule("plans/./x"), Rule::DotSegment);
        assert_eq!(rule("/etc/passwd"), Rule::Absolute);
        assert_eq!(rule("/"), Rule::Absolute);
        assert_eq!(rule("C:\\x"), Rule::Backslash);
        assert_eq!(rule("C:"), Rule::Drive);
        assert_eq!(rule("c:/windows"), Rule::Drive);
        assert_eq!(rule("plans/%2e%2e/x"), Rule::Percent);
        assert_eq!(rule("plans/a\0b"), Rule::Control);
        assert_eq!(rule("plans/\u{FF0E}\u{FF0E}/x"), Rule::Lookalike);
        assert_eq!(rule("plans\u{2215}x"), Rule::Lookalike);
        assert_eq!(rule("plans/a\u{200B}b"), Rule::Character);
        assert_eq!(rule("plans//x"), Rule::EmptySegment);
        assert_eq!(rule("plans/.htaccess"), Rule::Hidden);
        assert_eq!(rule("etc/passwd"), Rule::Outside);
        assert_eq!(rule(&format!("plans/{}", "a".repeat(101))), Rule::TooLong);
        assert_eq!(rule(&format!("plans/{}", "a/".repeat(140))), Rule::TooLong);
        assert_eq!(rule("plans/x "), Rule::Edge);
        match resolve("plans/x/", Want::File) {
            Err(PathError::Security(e)) => assert_eq!(e.rule, Rule::TrailingSlash),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn resolves_the_view() {
        assert_eq!(
            resolve("", Want::Dir).unwrap(),
            DataPath::Dir(DirPath::Root)
        );
        assert_eq!(
            resolve(".", Want::Dir).unwrap(),
            DataPath::Dir(DirPath::Root)
        );
        assert_eq!(
            resolve("data/", Want::Dir).unwrap(),
            DataPath::Dir(DirPath::Root)
        );
        assert_eq!(
            resolve("data/manuscripts/03-old.md", Want::File).unwrap(),
            DataPath::Manuscript { number: 3 }
        );
        assert_eq!(
            resolve("manuscripts/3.md", Want::File).unwrap(),
            DataPath::Manuscript { number: 3 }
        );
        // The TextCraft seed's own style.
        for name in [
            "ch03.md",
            "CH3.md",
            "chapter-03.md",
            "chapter_3-the-stair.md",
        ] {
            assert_eq!(
                resolve(&format!("manuscripts/{name}"), Want::File).unwrap(),
                DataPath::Manuscript { number: 3 },
                "{name}"
            );
        }
        assert!(resolve("manuscripts/chx.md", Want::File).is_err());
        assert_eq!(
            chapter_title_from_name("manuscripts/04-the-storm.md").as_deref(),
            Some("The storm")
        );
        assert_eq!(
            chapter_title_from_name("chapter_3-the-stair.md").as_deref(),
            Some("The stair")
        );
        for name in ["manuscripts/ch04.md", "chapter-4.md", "04.md", "04-.md"] {
            assert_eq!(chapter_title_from_name(name), None, "{name}");
        }
        assert!(resolve("manuscripts/03x.md", Want::File).is_err());
        assert!(resolve("manuscripts/00.md", Want::File).is_err());
        assert_eq!(
            resolve("bible/character/mara.json", Want::File).unwrap(),
            DataPath::Bible {
                kind: Kind::Character,
                id: "mara".into()
            }
        );
        assert_eq!(
            resolve("bible/character", Want::Dir).unwrap(),
            DataPath::Dir(DirPath::BibleKind(Kind::Character))
        );
        assert!(matches!(
            resolve("bible/wizard/x.json", Want::File),
            Err(PathError::Invalid(_))
        ));
        assert_eq!(
            resolve("plans/book one/outline.md", Want::File).unwrap(),
            DataPath::Free {
                path: "plans/book one/outline.md".into()
            }
        );
        assert_eq!(
            resolve("notes/ideas/", Want::Any).unwrap(),
            DataPath::Dir(DirPath::Free("notes/ideas".into()))
        );
        assert_eq!(
            resolve("notes/café.md", Want::File).unwrap(),
            DataPath::Free {
                path: "notes/café.md".into()
            }
        );
        assert!(matches!(
            resolve("plans", Want::File),
            Err(PathError::Invalid(_))
        ));
    }

    #[test]
    fn slugs_are_plain() {
        assert_eq!(slug("The Stair"), "the-stair");
        assert_eq!(slug("  Café — Noël!  "), "cafe-noel");
        assert_eq!(slug("Straße 9"), "strasse-9");
        assert_eq!(slug("北京"), "chapter");
        assert_eq!(slug(""), "chapter");
        assert!(slug(&"word ".repeat(30)).len() <= MAX_SLUG_CHARS);
        assert_eq!(manuscript_name(3, 12, "The Stair"), "03-the-stair.md");
        assert_eq!(manuscript_name(3, 120, "X"), "003-x.md");
        assert_eq!(bible_name("mara"), Some("mara.json".into()));
        assert_eq!(bible_name("s1:3"), None);
    }
}
