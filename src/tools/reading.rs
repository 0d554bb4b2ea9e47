//! Reading tools: what lets an agent see the manuscript before it changes it. They change
//! nothing (read-only, not in the history).
//!
//! - `list_chapters`: the project's name and, per chapter, its number (current order), id,
//!   title, length in chars, words and lines, version, and which one is active.
//! - `read_chapter`: a chapter's text with line numbers, at most [`READ_BUDGET_CHARS`] chars
//!   of text per call, with a continuation hint ("lines 1–120 of 412; call again with
//!   from_line 121").
//! - `search_manuscript`: every match of a literal query or a bounded regular expression
//!   ([`crate::project::pattern`]) across chapters, with chapter, line and a one-line
//!   excerpt, capped by `limit`, with the count of the rest.
//!
//! **Lines** are what lies between newlines (`\n`); line numbers are 1-based, and a
//! chapter of `n` newlines has `n + 1` lines (an empty chapter has one empty line). A `\r`
//! before a newline is not shown. `read_chapter` shows each line as `<number>│ <text>`: the
//! number (right-aligned), the bar `│` and the one space after it are not part of the text.

use crate::project::Text;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use serde_json::Value;

use super::{ToolError, ToolRegistry, ToolSpec};
use crate::commands::Category;
use crate::names::thousands;
use crate::project::pattern::{Pattern, MAX_LINE_BYTES};
use crate::project::{Chapter, Project};
use crate::session::EditContext;

/// The reading tools' names.
pub const TOOLS: [&str; 3] = ["list_chapters", "read_chapter", "search_manuscript"];

/// At most this many chars of chapter text per `read_chapter` call (line numbers not
/// counted). A call stops at a whole line before going over; a single longer line is cut.
pub const READ_BUDGET_CHARS: usize = 8_000;
/// Matches `search_manuscript` shows by default.
pub const DEFAULT_SEARCH_LIMIT: usize = 20;
/// The most matches `search_manuscript` shows in one call.
pub const MAX_SEARCH_LIMIT: usize = 200;
/// About how long an excerpt of `search_manuscript` is, in chars (ellipses not counted).
pub const EXCERPT_CHARS: usize = 160;

/// What separates a line number from the line's text in `read_chapter`.
pub const LINE_MARK: &str = "│ ";

/// Register the reading tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.add::<ListChapters>();
    registry.add::<ReadChapter>();
    registry.add::<SearchManuscript>();
}

/// The text of line `index` (0-based) of a text, without its newline (or a `\r` before it).
fn line_text(rope: &Text, index: usize) -> String {
    without_newline(rope.line(index).to_string())
}

/// A line without its newline (or a `\r` before it).
fn without_newline(mut line: String) -> String {
    if line.ends_with('\n') {
        line.pop();
        if line.ends_with('\r') {
            line.pop();
        }
    }
    line
}

fn number_of(project: &Project, chapter: &Chapter) -> usize {
    project.chapter_index(&chapter.id).map_or(0, |i| i + 1)
}

// ---------------------------------------------------------------------------------------
// list_chapters
// ---------------------------------------------------------------------------------------

/// Arguments of `list_chapters` (none).
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ListChaptersArgs {}

/// `list_chapters`.
pub struct ListChapters;

impl ToolSpec for ListChapters {
    type Args = ListChaptersArgs;
    const NAME: &'static str = "list_chapters";
    const CATEGORY: Category = Category::Knowledge;
    const DESCRIPTION: &'static str = "List the project's chapters in reading order: for each its number (1-based, the current order), id, title, length in chars, words and lines, version, and active: true for the chapter open in the editor. Also the project's name and chapter count. Use it first to find a chapter, then read_chapter to see its text. Other tools name a chapter by its id, its number (\"3\") or its title.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(_args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let project = cx.project();
        let active = project.active_chapter().map(|c| c.id.as_str());
        let chapters: Vec<Value> = project
            .chapters
            .iter()
            .enumerate()
            .map(|(i, c)| {
                json!({
                    "number": i + 1,
                    "id": c.id,
                    "title": c.title,
                    "chars": c.len_chars(),
                    "words": c.word_count(),
                    "lines": c.len_lines(),
                    "version": c.version(),
                    "active": Some(c.id.as_str()) == active,
                })
            })
            .collect();
        Ok(json!({
            "project": project.name,
            "chapterCount": project.chapters.len(),
            "activeChapter": active,
            "chapters": chapters,
        }))
    }
}

// ---------------------------------------------------------------------------------------
// read_chapter
// ---------------------------------------------------------------------------------------

/// Arguments of `read_chapter`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ReadChapterArgs {
    /// The chapter: id, number ("3") or title. Defaults to the active chapter (the one open
    /// in the editor).
    #[serde(default)]
    pub chapter: Option<String>,
    /// The first line to show (1-based). Defaults to 1.
    #[serde(default, alias = "fromLine")]
    pub from_line: Option<usize>,
    /// The last line to show (inclusive). Defaults to as far as fits in one call (about
    /// 8,000 chars of text).
    #[serde(default, alias = "toLine")]
    pub to_line: Option<usize>,
}

/// `read_chapter`.
pub struct ReadChapter;

impl ToolSpec for ReadChapter {
    type Args = ReadChapterArgs;
    const NAME: &'static str = "read_chapter";
    const CATEGORY: Category = Category::Knowledge;
    const DESCRIPTION: &'static str = "Read a chapter's text (the active chapter unless 'chapter' names one by id, number or title), with line numbers. A line is the text between two newlines; lines are numbered from 1. Each line of 'text' is shown as '<number>│ <text>': the number, the bar '│' and the one space after it are NOT part of the manuscript. At most about 8,000 chars per call: 'note' says which lines were shown and where to go on (for example 'lines 1–120 of 412; call again with from_line 121'). Read the passage before changing it, then give update_manuscript a searchText copied exactly from the text after '│ ' (without the line numbers), long enough to be unique.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let chapter = cx.chapter(args.chapter.as_deref())?;
        read(cx.project(), chapter, args.from_line, args.to_line)
    }
}

/// What `read_chapter` shows of `chapter`, from `from_line` up to `to_line` (1-based,
/// inclusive) or the budget.
fn read(
    project: &Project,
    chapter: &Chapter,
    from_line: Option<usize>,
    to_line: Option<usize>,
) -> Result<Value, ToolError> {
    let number = number_of(project, chapter);
    let rope = chapter.text();
    let total = chapter.len_lines();
    let name = format!("chapter {number} \"{}\"", chapter.title);
    let valid = format!(
        "{name} has {} line{} (1 to {total})",
        thousands(total),
        if total == 1 { "" } else { "s" }
    );
    let from = from_line.unwrap_or(1);
    if from == 0 {
        return Err(ToolError::invalid_args(format!(
            "from_line is 1-based (the first line is 1), got 0; {valid}"
        )));
    }
    if from > total {
        return Err(ToolError::new(
            "out_of_range",
            format!("from_line {from} is past the end: {valid}; ask for a line from 1 to {total}"),
        )
        .with_details(json!({ "totalLines": total })));
    }
    if let Some(to) = to_line {
        if to == 0 || to < from {
            return Err(ToolError::invalid_args(format!(
                "to_line {to} is before from_line {from}; give a to_line from {from} to {total} (or leave it out to read as far as fits); {valid}"
            )));
        }
    }
    let last_wanted = to_line.map_or(total, |to| to.min(total));
    let width = last_wanted.to_string().len();

    let mut text = String::new();
    let mut used = 0;
    let mut to = from - 1;
    let mut cut: Option<Value> = None;
    for line_no in from..=last_wanted {
        let line = line_text(rope, line_no - 1);
        let chars = line.chars().count();
        if used + chars > READ_BUDGET_CHARS && line_no > from {
            break;
        }
        let shown = if chars > READ_BUDGET_CHARS {
            let kept: String = line.chars().take(READ_BUDGET_CHARS).collect();
            cut = Some(json!({
                "line": line_no,
                "chars": chars,
                "shownChars": READ_BUDGET_CHARS,
            }));
            kept
        } else {
            line
        };
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!("{line_no:>width$}{LINE_MARK}{shown}"));
        used += chars.min(READ_BUDGET_CHARS);
        to = line_no;
        if cut.is_some() {
            break;
        }
    }
    let start = rope.line_to_char(from - 1);
    let end = if to >= total {
        rope.len_chars()
    } else {
        // The end of line `to`, before its newline.
        rope.line_to_char(to).saturating_sub(1)
    };
    let end = match &cut {
        Some(_) => start + READ_BUDGET_CHARS,
        None => end,
    };
    let next = (to < last_wanted).then_some(to + 1);
    let mut note = format!("lines {from}–{to} of {total}");
    match next {
        Some(next) => {
            let until = match to_line {
                Some(t) if t < total => format!(" to_line {t}"),
                _ => String::new(),
            };
            note.push_str(&format!(
                "; call again with from_line {next}{}",
                if until.is_empty() {
                    String::new()
                } else {
                    format!(" and{until}")
                }
            ));
        }
        None if to >= total && from == 1 => note.push_str(" (the whole chapter)"),
        None if to >= total => note.push_str(" (to the end of the chapter)"),
        None => note.push_str(&format!(
            " (as asked; the chapter goes on: call again with from_line {} to read on)",
            to + 1
        )),
    }
    if let Some(c) = &cut {
        note.push_str(&format!(
            "; line {} is {} chars long and only its first {} are shown (use search_manuscript or navigate_to_text to reach text further in it)",
            c["line"],
            thousands(c["chars"].as_u64().unwrap_or_default() as usize),
            thousands(READ_BUDGET_CHARS)
        ));
    }
    let mut data = json!({
        "chapter": chapter.id,
        "chapterNumber": number,
        "chapterTitle": chapter.title,
        "version": chapter.version(),
        "fromLine": from,
        "toLine": to,
        "totalLines": total,
        "start": start,
        "end": end,
        "nextFromLine": next,
        "note": note,
        "text": text,
    });
    if let Some(c) = cut {
        data["cutLine"] = c;
    }
    Ok(data)
}

// ---------------------------------------------------------------------------------------
// search_manuscript
// ---------------------------------------------------------------------------------------

/// Arguments of `search_manuscript`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchManuscriptArgs {
    /// What to find: text as written (the default), or a regular expression with regex: true.
    pub query: String,
    /// Read the query as a regular expression (Perl-like syntax without look-around or
    /// backreferences; patterns are limited in size and nesting). Default false.
    #[serde(default)]
    pub regex: bool,
    /// Search only this chapter: id, number ("3") or title. Defaults to every chapter.
    #[serde(default)]
    pub chapter: Option<String>,
    /// The most matches to show (default 20, at most 200). The total is always counted.
    #[serde(default)]
    pub limit: Option<usize>,
    /// Match upper and lower case exactly. Default false (case-insensitive).
    #[serde(default, alias = "caseSensitive")]
    pub case_sensitive: bool,
}

/// `search_manuscript`.
pub struct SearchManuscript;

impl ToolSpec for SearchManuscript {
    type Args = SearchManuscriptArgs;
    const NAME: &'static str = "search_manuscript";
    const CATEGORY: Category = Category::Knowledge;
    const DESCRIPTION: &'static str = "Find every occurrence of a text (or, with regex: true, a regular expression) in the manuscript, or in one chapter. Case-insensitive unless case_sensitive: true; a match never spans two lines. Returns the total count and the first matches (limit, default 20, at most 200), each with the chapter (number, id, title), the line number (as read_chapter numbers them), 'match' (the exact text matched, which update_manuscript can take as searchText when it is unique enough), start and end (char positions in the chapter) and a one-line excerpt; 'more' counts the matches not shown. Use it to find where something is, then read_chapter around that line.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let limit = args.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
        if limit == 0 {
            return Err(ToolError::invalid_args(format!(
                "limit must be at least 1 (default {DEFAULT_SEARCH_LIMIT}, at most {MAX_SEARCH_LIMIT})"
            )));
        }
        let capped = limit > MAX_SEARCH_LIMIT;
        let limit = limit.min(MAX_SEARCH_LIMIT);
        let pattern = Pattern::new(&args.query, args.regex, args.case_sensitive)
            .map_err(|e| ToolError::invalid_args(e.to_string()))?;
        let project = cx.project();
        let scope: Vec<&Chapter> = match args.chapter.as_deref().map(str::trim) {
            Some(name) if !name.is_empty() => vec![project.find_chapter(name)?],
            _ => project.chapters.iter().collect(),
        };
        let mut matches = Vec::new();
        let mut total = 0usize;
        let mut long_lines = 0usize;
        for chapter in &scope {
            let number = number_of(project, chapter);
            let rope = chapter.text();
            let mut line_start = 0;
            for (index, line) in rope.lines().enumerate() {
                let line_chars = line.len_chars();
                let text = without_newline(line.to_string());
                if text.len() > MAX_LINE_BYTES {
                    long_lines += 1;
                }
                let found = pattern.find_all(&text);
                for m in found {
                    total += 1;
                    if matches.len() < limit {
                        matches.push(json!({
                            "chapter": chapter.id,
                            "chapterNumber": number,
                            "chapterTitle": chapter.title,
                            "line": index + 1,
                            "start": line_start + m.start,
                            "end": line_start + m.end,
                            "match": slice_chars(&text, m.start, m.end),
                            "excerpt": excerpt(&text, m.start, m.end),
                        }));
                    }
                }
                line_start += line_chars;
            }
        }
        let shown = matches.len();
        let more = total - shown;
        let where_ = match scope.as_slice() {
            [one]
                if args
                    .chapter
                    .as_deref()
                    .is_some_and(|c| !c.trim().is_empty()) =>
            {
                format!("chapter {} \"{}\"", number_of(project, one), one.title)
            }
            _ => format!(
                "{} chapter{}",
                scope.len(),
                if scope.len() == 1 { "" } else { "s" }
            ),
        };
        let kind = if pattern.is_regex() {
            "the regular expression"
        } else {
            "the text"
        };
        let case = if args.case_sensitive {
            "case-sensitive"
        } else {
            "case-insensitive"
        };
        let mut note = if total == 0 {
            format!(
                "No match for {kind} '{}' in {where_} ({case}). Check the spelling, try a shorter part of it{}, or search every chapter.",
                args.query,
                if args.case_sensitive { ", or case_sensitive: false" } else { "" }
            )
        } else if more > 0 {
            format!(
                "{} matches in {where_}; the first {shown} are shown, {more} more are not. Narrow the query, name a chapter, or raise limit (at most {MAX_SEARCH_LIMIT}).",
                thousands(total)
            )
        } else {
            format!(
                "{} match{} in {where_}, all shown.",
                thousands(total),
                if total == 1 { "" } else { "es" }
            )
        };
        if capped {
            note.push_str(&format!(
                " limit {limit_asked} is above the most shown at once; {MAX_SEARCH_LIMIT} were allowed.",
                limit_asked = args.limit.unwrap_or_default()
            ));
        }
        if long_lines > 0 {
            note.push_str(&format!(
                " {long_lines} line{} longer than {} KB {} searched only in their first {} KB.",
                if long_lines == 1 { "" } else { "s" },
                MAX_LINE_BYTES / 1024,
                if long_lines == 1 { "was" } else { "were" },
                MAX_LINE_BYTES / 1024
            ));
        }
        Ok(json!({
            "query": args.query,
            "regex": pattern.is_regex(),
            "caseSensitive": args.case_sensitive,
            "total": total,
            "shown": shown,
            "more": more,
            "limit": limit,
            "matches": matches,
            "note": note,
        }))
    }
}

/// Chars `start..end` of `text`.
fn slice_chars(text: &str, start: usize, end: usize) -> String {
    text.chars().skip(start).take(end - start).collect()
}

/// About [`EXCERPT_CHARS`] chars of `line` around the match `start..end`, with `…` where the
/// line was cut.
fn excerpt(line: &str, start: usize, end: usize) -> String {
    let chars: Vec<char> = line.chars().collect();
    let len = chars.len();
    if len <= EXCERPT_CHARS {
        return line.to_string();
    }
    let match_len = end - start;
    let (from, to) = if match_len >= EXCERPT_CHARS {
        (start, start + EXCERPT_CHARS)
    } else {
        let room = EXCERPT_CHARS - match_len;
        let before = (room / 2).min(start);
        let from = start - before;
        let to = (end + (room - before)).min(len);
        // Use what is left at the end of the line before the match.
        let from = from.saturating_sub(EXCERPT_CHARS - (to - from));
        (from, to)
    };
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    out.extend(&chars[from..to]);
    if to < len {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_cut_around_the_match() {
        let line = format!("{}needle{}", "a".repeat(300), "b".repeat(300));
        let e = excerpt(&line, 300, 306);
        assert!(e.starts_with('…') && e.ends_with('…'), "{e}");
        assert!(e.contains("needle"));
        assert_eq!(e.chars().count(), EXCERPT_CHARS + 2);
        let e = excerpt(&line, 0, 3);
        assert!(!e.starts_with('…') && e.ends_with('…'));
        assert_eq!(e.chars().count(), EXCERPT_CHARS + 1);
        let e = excerpt(&line, 600, 606);
        assert!(e.starts_with('…') && !e.ends_with('…'));
        assert_eq!(e.chars().count(), EXCERPT_CHARS + 1);
        assert_eq!(excerpt("short line", 0, 5), "short line");
    }

    #[test]
    fn thousands_separates_groups() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
