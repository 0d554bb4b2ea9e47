//! File tools (the TextCraft seed's): the project seen as a `data/` directory.
//!
//! ```text
//! data/
//!   manuscripts/NN-<slug>.md   one file per chapter, in reading order (its text)
//!   bible/<kind>/<id>.json     one file per story-bible entity (its fields with origins)
//!   plans/…  notes/…           free files (outlines, plans, task lists), any depth
//! ```
//!
//! `read_file(path)`, `write_file(path, content)`, `edit_file(path, search_text,
//! replace_text)`, `list_files(directory)` and `search_code(query, directory =
//! "manuscripts")`. Every path goes through the sandbox ([`crate::files::path`]): a path that
//! escapes or is not plainly inside `data/` gets a `security` error naming the rule, and
//! nothing is read or changed.
//!
//! How writes land:
//! - a chapter file: as a change set of what differs (see [`crate::files::diff`]) through
//!   [`EditContext::edit`], so it is one undoable history entry with the caller's origin,
//!   and the writer's later typing survives `undo {origin: "agent"}`. A chapter file is
//!   named by its number only (`manuscripts/03.md` and `manuscripts/03-old-title.md` both
//!   name chapter 3). `write_file` to the next number (one past the last chapter:
//!   `manuscripts/ch04.md`, `manuscripts/04-the-storm.md`) creates that chapter, titled by
//!   the content's first heading, else by the file name's words, else "Chapter N"; the new
//!   chapter and its text are one history entry, so one undo takes the chapter away. A number
//!   further on is an error naming the chapters there are;
//! - a story-bible file: the JSON is compared with the entity, and only the fields that
//!   differ are written, through the bible's write path: provenance is recorded, a field the
//!   writer wrote still needs the writer's approval (judged as `<kind>_update_entry` or
//!   `<kind>_create_entry` would be, unless a policy is configured for the file tool
//!   itself), and a concurrent update is reported. A field left out of the JSON is left as
//!   it is; `null` clears it. `kind`, `id`, `version` and `<field>_origin` keys are read,
//!   not written: a `version` other than the entity's current one is a conflict (it changed
//!   since it was read). Unknown fields are refused. Entities are not deleted through files;
//!   context documents are the writer's and refuse agents' writes;
//! - a free file: replaced whole, in one step, saved with the call's audit record, and
//!   recorded in the call's history entry (the file before and after), so plain undo takes
//!   it back (removing a file the call created) with the rest of the agent's turn.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use serde_json::{Map, Value};

use super::{ToolError, ToolRegistry, ToolSpec};
use crate::bible::{check_value, Entity, Kind};
use crate::commands::Category;
use crate::files::diff::diff;
use crate::files::path::{
    self, bible_name, bible_path, manuscript_path, resolve, DataPath, DirPath, Folder, PathError,
    Want,
};
use crate::files::{FreeFile, Listed};
use crate::project::changeset::ChangeSet;
use crate::project::pattern::Pattern;
use crate::project::{search, Chapter};
use crate::session::EditContext;

/// The most chars `read_file` returns of one file; a longer file is cut, with a note.
pub const MAX_READ_CHARS: usize = 100_000;
/// The default and largest number of lines `search_code` returns.
pub const DEFAULT_SEARCH_RESULTS: usize = 50;
/// The largest `limit` of `search_code`.
pub const MAX_SEARCH_RESULTS: usize = 200;
/// The longest line excerpt in a `search_code` result, in chars.
const EXCERPT_CHARS: usize = 200;

/// Register the file tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.add::<ReadFile>();
    registry.add::<WriteFile>();
    registry.add::<EditFile>();
    registry.add::<ListFiles>();
    registry.add::<SearchCode>();
}

/// The names of the file tools.
pub const FILE_TOOLS: [&str; 5] = [
    "read_file",
    "write_file",
    "edit_file",
    "list_files",
    "search_code",
];

// ---------------------------------------------------------------------------------------
// Resolution
// ---------------------------------------------------------------------------------------

fn path_error(error: PathError, raw: &str) -> ToolError {
    match error {
        PathError::Security(e) => {
            let mut error = ToolError::from(e);
            if let Some(details) = error.details.as_mut() {
                details["path"] = json!(path::shown(raw));
            }
            error
        }
        PathError::Invalid(message) => ToolError::invalid_args(message),
    }
}

fn resolve_path(raw: &str, want: Want) -> Result<DataPath, ToolError> {
    resolve(raw, want).map_err(|e| path_error(e, raw))
}

/// The chapter with a 1-based number, or `not_found` listing the chapter files.
fn chapter_at<'c>(cx: &'c EditContext<'_>, number: usize) -> Result<&'c Chapter, ToolError> {
    let project = cx.project();
    project.chapters.get(number - 1).ok_or_else(|| {
        let count = project.chapters.len();
        let files: Vec<String> = project
            .chapters
            .iter()
            .enumerate()
            .take(12)
            .map(|(i, c)| manuscript_path(i + 1, count, &c.title))
            .collect();
        ToolError::not_found(format!(
            "manuscripts/ has no chapter {number}: the project has {count} chapter{} ({}{}). write_file to manuscripts/{:02}-<title>.md creates the next chapter; a chapter further on needs the ones before it.",
            if count == 1 { "" } else { "s" },
            files.join(", "),
            if count > 12 { ", …" } else { "" },
            count + 1
        ))
    })
}

fn chapter_file(cx: &EditContext<'_>, chapter: &Chapter) -> String {
    let project = cx.project();
    let number = project.chapter_index(&chapter.id).map_or(0, |i| i + 1);
    manuscript_path(number, project.chapters.len(), &chapter.title)
}

/// When a chapter last changed: the time of the newest history entry that touched it
/// (0 when none has).
fn chapter_mod_time(cx: &EditContext<'_>, chapter: &str) -> u64 {
    let history = cx.history();
    history
        .entries()
        .iter()
        .chain(history.redo_runs().iter().flatten())
        .filter(|e| e.effects.iter().any(|fx| fx.chapter == chapter))
        .map(|e| e.timestamp_ms)
        .max()
        .unwrap_or(0)
}

fn entity_mod_time(entity: &Entity) -> u64 {
    entity.stamps.values().map(|s| s.at).max().unwrap_or(0)
}

/// A story-bible entity as its file shows it: pretty JSON of its flat view.
fn entity_json(entity: &Entity) -> String {
    serde_json::to_string_pretty(&entity.flat()).unwrap_or_default()
}

fn file_entry(name: &str, path: &str, size: usize, mod_time: u64) -> Value {
    json!({"name": name, "path": path, "type": "file", "size": size, "mod_time": mod_time})
}

fn dir_entry(name: &str, path: &str, size: usize, mod_time: u64, entries: usize) -> Value {
    json!({"name": name, "path": format!("{path}/"), "type": "directory", "size": size,
           "mod_time": mod_time, "entries": entries})
}

/// A file's content as read: its text, size, time and what it is.
struct Read {
    path: String,
    content: String,
    mod_time: u64,
    extra: Map<String, Value>,
}

fn read(cx: &EditContext<'_>, at: &DataPath) -> Result<Read, ToolError> {
    match at {
        DataPath::Manuscript { number } => {
            let chapter = chapter_at(cx, *number)?;
            let mut extra = Map::new();
            extra.insert("kind".into(), json!("manuscript"));
            extra.insert(
                "chapter".into(),
                json!({"id": chapter.id, "number": number, "title": chapter.title,
                       "version": chapter.version()}),
            );
            Ok(Read {
                path: chapter_file(cx, chapter),
                content: chapter.text().to_string(),
                mod_time: chapter_mod_time(cx, &chapter.id),
                extra,
            })
        }
        DataPath::Bible { kind, id } => {
            let entity = cx.bible().require(*kind, id).map_err(|e| {
                ToolError::not_found(format!(
                    "{}: no file {}; list_files \"bible/{kind}\" shows its entries",
                    e,
                    bible_path(*kind, id)
                ))
            })?;
            let mut extra = Map::new();
            extra.insert("kind".into(), json!("bible"));
            extra.insert("entity".into(), json!({"kind": kind, "id": id}));
            extra.insert("version".into(), json!(entity.version));
            Ok(Read {
                path: bible_path(*kind, id),
                content: entity_json(entity),
                mod_time: entity_mod_time(entity),
                extra,
            })
        }
        DataPath::Free { path } => {
            let file = free_file(cx, path)?;
            let mut extra = Map::new();
            extra.insert("kind".into(), json!("free"));
            extra.insert("origin".into(), json!(file.origin));
            Ok(Read {
                path: file.path.clone(),
                content: file.content.clone(),
                mod_time: file.mod_time,
                extra,
            })
        }
        DataPath::Dir(_) => Err(ToolError::invalid_args(
            "that path is a folder; list_files shows what it holds",
        )),
    }
}

fn free_file<'c>(cx: &'c EditContext<'_>, path: &str) -> Result<&'c FreeFile, ToolError> {
    cx.files().get(path).ok_or_else(|| {
        let folder = path.rsplit_once('/').map_or(path, |(dir, _)| dir);
        let message = if cx.files().is_folder(path) {
            format!("'{path}' is a folder, not a file; list_files \"{path}\" shows what it holds")
        } else {
            format!(
                "no file '{path}'; list_files \"{folder}\" shows what exists (write_file creates it)"
            )
        };
        ToolError::not_found(message)
    })
}

// ---------------------------------------------------------------------------------------
// read_file
// ---------------------------------------------------------------------------------------

/// Arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadFileArgs {
    /// The file, relative to data/: manuscripts/NN-title.md (a chapter, named by its
    /// number), bible/<kind>/<id>.json (a story-bible entry) or a file under plans/ or notes/.
    pub path: String,
}

/// `read_file`: a file's content with its size and modification time.
pub struct ReadFile;

impl ToolSpec for ReadFile {
    type Args = ReadFileArgs;
    const NAME: &'static str = "read_file";
    const CATEGORY: Category = Category::Knowledge;
    const DESCRIPTION: &'static str = "Read a file of the project's data/ folder: manuscripts/NN-title.md (a chapter's text; NN is the chapter number), bible/<kind>/<id>.json (a story-bible entry as JSON, with each field's origin) or a free file under plans/ or notes/. Returns content, size (bytes) and mod_time (ms). Paths are relative to data/; '..', absolute paths and encoded characters are refused.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let at = resolve_path(&args.path, Want::File)?;
        let file = read(cx, &at)?;
        let size = file.content.len();
        let total_chars = file.content.chars().count();
        let mut data = Map::new();
        data.insert("path".into(), json!(file.path));
        data.insert("size".into(), json!(size));
        data.insert("mod_time".into(), json!(file.mod_time));
        if total_chars > MAX_READ_CHARS {
            let cut: String = file.content.chars().take(MAX_READ_CHARS).collect();
            data.insert("content".into(), json!(cut));
            data.insert("truncated".into(), json!(true));
            data.insert(
                "note".into(),
                json!(format!(
                    "only the first {MAX_READ_CHARS} of {total_chars} chars are shown; do not write_file this content back (it would cut the file): change it with edit_file, and find text with search_code"
                )),
            );
        } else {
            data.insert("content".into(), json!(file.content));
        }
        data.extend(file.extra);
        Ok(Value::Object(data))
    }
}

// ---------------------------------------------------------------------------------------
// write_file and edit_file
// ---------------------------------------------------------------------------------------

/// Arguments of `write_file`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteFileArgs {
    /// The file, relative to data/: manuscripts/NN-title.md (a chapter; the next number
    /// creates it),
    /// bible/<kind>/<id>.json (a story-bible entry) or any file under plans/ or notes/
    /// (its folders are created as needed).
    pub path: String,
    /// The whole new content. It replaces the file completely (for a bible entry: the JSON
    /// of the entry; fields left out stay as they are, null clears one).
    pub content: String,
}

/// `write_file`: replace a file's content (create it under plans/ or notes/).
pub struct WriteFile;

impl ToolSpec for WriteFile {
    type Args = WriteFileArgs;
    const NAME: &'static str = "write_file";
    const CATEGORY: Category = Category::Editing;
    const DESCRIPTION: &'static str = "Write a file of the project's data/ folder, replacing its whole content. Under plans/ and notes/ any file may be created (folders are created as needed): use them for outlines, plans and task lists. manuscripts/NN-title.md replaces a chapter's text (recorded as one undoable edit of what changed; prefer edit_file for small changes); the next number after the last chapter (such as manuscripts/04-the-storm.md or manuscripts/ch04.md when there are 3) creates that chapter, titled by the content's first '# heading' or else the file name. bible/<kind>/<id>.json creates or updates a story-bible entry from JSON (as read_file shows it); fields the writer wrote need the writer's approval.";
    const REVERSIBLE: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let at = resolve_path(&args.path, Want::File)?;
        let bytes = args.content.len();
        let data = match at {
            DataPath::Manuscript { number } if number > cx.project().chapters.len() => {
                create_chapter(cx, number, &args.path, &args.content)?
            }
            _ => write(cx, &at, args.content, "Write")?,
        };
        cx.set_bytes_written(bytes);
        Ok(data)
    }
}

/// Arguments of `edit_file`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditFileArgs {
    /// The file, relative to data/ (as for read_file).
    pub path: String,
    /// The exact text to replace, copied from read_file. Only its first occurrence is
    /// replaced.
    pub search_text: String,
    /// The text to put in its place (may be empty to delete).
    pub replace_text: String,
}

/// `edit_file`: replace the first occurrence of a text in a file.
pub struct EditFile;

impl ToolSpec for EditFile {
    type Args = EditFileArgs;
    const NAME: &'static str = "edit_file";
    const CATEGORY: Category = Category::Editing;
    const DESCRIPTION: &'static str = "Replace the first occurrence of search_text with replace_text in a file of the project's data/ folder (a chapter manuscripts/NN-title.md, a story-bible entry bible/<kind>/<id>.json, or a file under plans/ or notes/). search_text must be copied exactly from read_file; if it is absent the error starts with 'Text not found'.";
    const REVERSIBLE: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let at = resolve_path(&args.path, Want::File)?;
        if args.search_text.is_empty() {
            return Err(ToolError::invalid_args(
                "'search_text' must not be empty; give the exact text to replace, copied from read_file",
            ));
        }
        if args.search_text == args.replace_text {
            return Err(ToolError::invalid_args(
                "replace_text is the same as search_text; there is nothing to change",
            ));
        }
        let bytes = args.replace_text.len();
        let data = match &at {
            DataPath::Manuscript { number } => {
                let chapter = chapter_at(cx, *number)?;
                let id = chapter.id.clone();
                let (start, end) =
                    super::editing::locate(chapter, *number, &args.search_text, "search_text")?;
                let change =
                    ChangeSet::replace(chapter.len_chars(), start, end, &args.replace_text)
                        .map_err(|e| ToolError::new("out_of_range", e.to_string()))?;
                let path = chapter_file(cx, chapter);
                cx.describe(format!("Edit {path}"));
                let version = cx.edit(&id, change)?;
                manuscript_result(cx, &id, version)
            }
            _ => {
                let file = read(cx, &at)?;
                let Some(byte) = file.content.find(&args.search_text) else {
                    return Err(text_not_found(&file.path, &file.content, &args.search_text));
                };
                let mut content = file.content;
                content.replace_range(byte..byte + args.search_text.len(), &args.replace_text);
                write(cx, &at, content, "Edit")?
            }
        };
        cx.set_bytes_written(bytes);
        Ok(data)
    }
}

/// The `not_found` error of an edit whose text is absent, naming the closest text.
fn text_not_found(path: &str, content: &str, needle: &str) -> ToolError {
    let mut message = format!(
        "Text not found in {path}: \"{}\". search_text must match the file exactly (case, spaces and line breaks included); read_file shows its content.",
        super::editing::preview(needle, 80)
    );
    let mut details = json!({ "path": path });
    if let Some(close) = search::closest(content, needle) {
        message.push_str(&format!(
            " The closest text is \"{}\" (similarity {:.2}); copy it exactly.",
            super::editing::preview(&close.text, 200),
            close.score
        ));
        details["closest"] = json!({"text": close.text, "score": close.score});
    }
    ToolError::not_found(message).with_details(details)
}

fn manuscript_result(cx: &EditContext<'_>, id: &str, version: u64) -> Value {
    let project = cx.project();
    match project.chapter(id) {
        Some(chapter) => {
            let number = project.chapter_index(id).map_or(0, |i| i + 1);
            json!({
                "path": chapter_file(cx, chapter),
                "size": chapter.text().len_bytes(),
                "mod_time": cx.now_ms(),
                "kind": "manuscript",
                "chapter": {"id": id, "number": number, "title": chapter.title, "version": version},
            })
        }
        None => json!({ "chapter": id, "version": version }),
    }
}

/// The longest title a new chapter takes from its first heading or its file name, in chars.
const MAX_TITLE_CHARS: usize = 300;

/// Create chapter `number` (the next one: one past the last) from a new chapter file: its
/// title from the content's first Markdown heading, else from the file name's words, else
/// "Chapter N"; its text the content as written. The chapter and its text are one history
/// entry, so one undo takes the new chapter away.
fn create_chapter(
    cx: &mut EditContext<'_>,
    number: usize,
    raw: &str,
    content: &str,
) -> Result<Value, ToolError> {
    let count = cx.project().chapters.len();
    if number != count + 1 {
        return Err(chapter_at(cx, number).err().unwrap_or_else(|| {
            ToolError::not_found(format!("manuscripts/ has no chapter {number}"))
        }));
    }
    let title = first_heading(content)
        .or_else(|| path::chapter_title_from_name(raw))
        .map(|t| t.chars().take(MAX_TITLE_CHARS).collect::<String>())
        .unwrap_or_else(|| cx.project().default_title(number));
    let id = cx.add_chapter(count, &title)?;
    let path = manuscript_path(number, count + 1, &title);
    cx.describe(format!("Create {path}"));
    let version = if content.is_empty() {
        0
    } else {
        let change = ChangeSet::replace(0, 0, 0, content)
            .map_err(|e| ToolError::new("out_of_range", e.to_string()))?;
        cx.edit(&id, change)?
    };
    let mut data = manuscript_result(cx, &id, version);
    data["created"] = json!(true);
    Ok(data)
}

/// The text of the first ATX heading (`# Title`, `## Title #`) of Markdown content.
fn first_heading(content: &str) -> Option<String> {
    content.lines().find_map(|line| {
        let line = line.trim_start();
        let hashes = line.chars().take_while(|&c| c == '#').count();
        let rest = &line[hashes..];
        if !(1..=6).contains(&hashes) || !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
            return None;
        }
        let text = rest.trim().trim_end_matches('#').trim();
        (!text.is_empty()).then(|| text.to_string())
    })
}

/// Write `content` to the file at `at`, as `verb` ("Write", "Edit") in the history.
fn write(
    cx: &mut EditContext<'_>,
    at: &DataPath,
    content: String,
    verb: &str,
) -> Result<Value, ToolError> {
    match at {
        DataPath::Manuscript { number } => {
            let chapter = chapter_at(cx, *number)?;
            let id = chapter.id.clone();
            let old = chapter.text().to_string();
            let path = chapter_file(cx, chapter);
            let change = diff(&old, &content);
            if change.is_identity() {
                let mut data = manuscript_result(cx, &id, chapter.version());
                data["unchanged"] = json!(true);
                return Ok(data);
            }
            cx.describe(format!("{verb} {path}"));
            let version = cx.edit(&id, change)?;
            Ok(manuscript_result(cx, &id, version))
        }
        DataPath::Bible { kind, id } => write_entity(cx, *kind, id, &content),
        DataPath::Free { path } => {
            cx.describe(format!("{verb} {path}"));
            let before = cx.write_file(path, content)?;
            let file = cx.files().get(path).ok_or_else(|| {
                ToolError::new("failed", format!("'{path}' vanished while it was written"))
            })?;
            Ok(json!({
                "path": file.path,
                "size": file.size(),
                "mod_time": file.mod_time,
                "kind": "free",
                "origin": file.origin,
                "created": before.is_none(),
            }))
        }
        DataPath::Dir(_) => Err(ToolError::invalid_args(
            "that path is a folder; give a file path such as plans/outline.md",
        )),
    }
}

/// Create or update a story-bible entity from the JSON of its file.
fn write_entity(
    cx: &mut EditContext<'_>,
    kind: Kind,
    id: &str,
    content: &str,
) -> Result<Value, ToolError> {
    let path = bible_path(kind, id);
    let value: Value = serde_json::from_str(content).map_err(|e| {
        ToolError::invalid_args(format!(
            "{path} must hold a JSON object (as read_file shows it), but this is not valid JSON: {e}"
        ))
    })?;
    let Value::Object(object) = value else {
        return Err(ToolError::invalid_args(format!(
            "{path} must hold a JSON object of the entry's fields (as read_file shows it)"
        )));
    };
    if kind == Kind::Contextdoc && cx.actor().is_agent() {
        return Err(ToolError::new(
            "read_only",
            format!("{path} is a context document: a reference text agents read but never change. Nothing was changed; ask the writer to change it."),
        ));
    }
    let current = cx.bible().get(kind, id).cloned();
    // What the file says about itself first: the kind, the id and the version it was read
    // at (a stale version is a conflict whatever else the content holds).
    if let Some(value) = object.get("kind").filter(|v| **v != json!(kind.name())) {
        return Err(ToolError::invalid_args(format!(
            "\"kind\" is {value} but {path} holds a {kind}; the kind comes from the path (write to bible/<kind>/<id>.json)"
        )));
    }
    if let Some(value) = object.get("id").filter(|v| **v != json!(id)) {
        return Err(ToolError::invalid_args(format!(
            "\"id\" is {value} but the file is {path}; the id comes from the file name"
        )));
    }
    if let (Some(entity), Some(value)) = (&current, object.get("version")) {
        if !value.is_null() && value.as_u64() != Some(entity.version) {
            return Err(ToolError::new(
                "conflict",
                format!(
                    "{path} changed since it was read: its version is {} now, the content says {value}. Nothing was changed; read_file it again and write your change on the current content.",
                    entity.version
                ),
            )
            .with_details(json!({"current": entity.flat()})));
        }
    }
    let mut fields: Vec<(String, Value)> = Vec::new();
    for (key, value) in object {
        match key.as_str() {
            "kind" | "id" | "version" => {}
            name if name
                .strip_suffix("_origin")
                .is_some_and(|field| kind.field(field).is_some()) => {}
            name => {
                let checked = check_value(kind, name, value)?;
                fields.push((name.to_string(), checked));
            }
        }
    }
    match &current {
        Some(entity) => {
            let changes: Vec<(String, Value)> = fields
                .into_iter()
                .filter(|(field, value)| entity.get(field) != value)
                .collect();
            if changes.is_empty() {
                return Ok(json!({
                    "path": path,
                    "size": entity_json(entity).len(),
                    "mod_time": entity_mod_time(entity),
                    "kind": "bible",
                    "version": entity.version,
                    "unchanged": true,
                }));
            }
            cx.judge_bible_as(format!("{kind}_update_entry"));
            cx.bible_update(kind, id, changes)?;
        }
        None => {
            cx.judge_bible_as(format!("{kind}_create_entry"));
            cx.bible_create(kind, id, fields)?;
        }
    }
    let entity = cx
        .bible()
        .get(kind, id)
        .ok_or_else(|| ToolError::new("failed", format!("{path} vanished while it was written")))?;
    let changed: Vec<&str> = kind
        .fields()
        .iter()
        .filter(|f| current.as_ref().map_or(&Value::Null, |c| c.get(f.name)) != entity.get(f.name))
        .map(|f| f.name)
        .collect();
    Ok(json!({
        "path": path,
        "size": entity_json(entity).len(),
        "mod_time": entity_mod_time(entity),
        "kind": "bible",
        "version": entity.version,
        "created": current.is_none(),
        "changed": changed,
        "entry": entity.flat(),
    }))
}

// ---------------------------------------------------------------------------------------
// list_files
// ---------------------------------------------------------------------------------------

/// Arguments of `list_files`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListFilesArgs {
    /// The folder, relative to data/: "" for the root (manuscripts/, bible/, plans/,
    /// notes/), "manuscripts", "bible", "bible/character", "plans", "notes/ideas"...
    #[serde(default)]
    pub directory: String,
}

/// `list_files`: what a folder holds.
pub struct ListFiles;

impl ToolSpec for ListFiles {
    type Args = ListFilesArgs;
    const NAME: &'static str = "list_files";
    const CATEGORY: Category = Category::Knowledge;
    const DESCRIPTION: &'static str = "List a folder of the project's data/ folder: each entry's name, path, type (file or directory), size (bytes) and mod_time (ms). \"\" lists the root: manuscripts/ (one NN-title.md per chapter), bible/ (one folder per kind of story-bible entry), plans/ and notes/ (free files).";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let at = resolve_path(&args.directory, Want::Dir)?;
        let DataPath::Dir(dir) = at else {
            return Err(ToolError::invalid_args(format!(
                "\"{}\" is a file; read_file reads it, and list_files lists its folder",
                path::shown(&args.directory)
            )));
        };
        let (directory, entries, omitted) = list(cx, &dir)?;
        let mut data = json!({
            "directory": directory,
            "count": entries.len(),
            "entries": entries,
        });
        if omitted > 0 {
            data["omitted"] = json!(omitted);
            data["note"] = json!(format!(
                "{omitted} entries have ids that cannot be file names (such as translation lines '<scene>:<line>'); read them with the story-bible tools"
            ));
        }
        Ok(data)
    }
}

/// The entries of a folder: (its path, entries, entities left out).
fn list(cx: &EditContext<'_>, dir: &DirPath) -> Result<(String, Vec<Value>, usize), ToolError> {
    Ok(match dir {
        DirPath::Root => {
            let entries = Folder::ALL
                .iter()
                .map(|folder| {
                    let (size, mod_time, count) = folder_totals(cx, *folder);
                    dir_entry(folder.name(), folder.name(), size, mod_time, count)
                })
                .collect();
            (String::new(), entries, 0)
        }
        DirPath::Manuscripts => {
            let project = cx.project();
            let count = project.chapters.len();
            let entries = project
                .chapters
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let path = manuscript_path(i + 1, count, &c.title);
                    let name = path.rsplit('/').next().unwrap_or_default().to_string();
                    file_entry(
                        &name,
                        &path,
                        c.text().len_bytes(),
                        chapter_mod_time(cx, &c.id),
                    )
                })
                .collect();
            ("manuscripts/".into(), entries, 0)
        }
        DirPath::Bible => {
            let entries = Kind::ALL
                .iter()
                .map(|kind| {
                    let (size, mod_time, count) = kind_totals(cx, *kind);
                    dir_entry(kind.name(), &format!("bible/{kind}"), size, mod_time, count)
                })
                .collect();
            ("bible/".into(), entries, 0)
        }
        DirPath::BibleKind(kind) => {
            let mut omitted = 0;
            let mut entries = Vec::new();
            for entity in cx.bible().list(*kind) {
                match bible_name(&entity.id) {
                    Some(name) => entries.push(file_entry(
                        &name,
                        &bible_path(*kind, &entity.id),
                        entity_json(entity).len(),
                        entity_mod_time(entity),
                    )),
                    None => omitted += 1,
                }
            }
            (format!("bible/{kind}/"), entries, omitted)
        }
        DirPath::Free(dir) => {
            let files = cx.files();
            let top = !dir.contains('/');
            if !top && !files.is_folder(dir) {
                return Err(if files.get(dir).is_some() {
                    ToolError::invalid_args(format!(
                        "'{dir}' is a file; read_file reads it, and list_files lists its folder"
                    ))
                } else {
                    ToolError::not_found(format!(
                        "no folder '{dir}' (a folder exists while a file lies in it; write_file creates both)"
                    ))
                });
            }
            let entries = files
                .list(dir)
                .into_iter()
                .map(|entry| match entry {
                    Listed::File(file) => {
                        let name = file.path.rsplit('/').next().unwrap_or_default();
                        file_entry(name, &file.path, file.size(), file.mod_time)
                    }
                    Listed::Folder {
                        name,
                        size,
                        mod_time,
                    } => {
                        let path = format!("{dir}/{name}");
                        let count = files.list(&path).len();
                        dir_entry(&name, &path, size, mod_time, count)
                    }
                })
                .collect();
            (format!("{dir}/"), entries, 0)
        }
    })
}

/// Bytes, newest time and entry count of a top-level folder.
fn folder_totals(cx: &EditContext<'_>, folder: Folder) -> (usize, u64, usize) {
    match folder {
        Folder::Manuscripts => {
            let chapters = &cx.project().chapters;
            (
                chapters.iter().map(|c| c.text().len_bytes()).sum(),
                chapters
                    .iter()
                    .map(|c| chapter_mod_time(cx, &c.id))
                    .max()
                    .unwrap_or(0),
                chapters.len(),
            )
        }
        Folder::Bible => Kind::ALL.iter().fold((0, 0, 0), |(s, t, _), kind| {
            let (size, time, _) = kind_totals(cx, *kind);
            (s + size, t.max(time), Kind::ALL.len())
        }),
        Folder::Plans | Folder::Notes => {
            let files = cx.files();
            let name = folder.name();
            (
                files.under(name).map(FreeFile::size).sum(),
                files.under(name).map(|f| f.mod_time).max().unwrap_or(0),
                files.list(name).len(),
            )
        }
    }
}

fn kind_totals(cx: &EditContext<'_>, kind: Kind) -> (usize, u64, usize) {
    cx.bible().list(kind).fold((0, 0, 0), |(s, t, n), e| {
        (
            s + entity_json(e).len(),
            t.max(entity_mod_time(e)),
            n + usize::from(bible_name(&e.id).is_some()),
        )
    })
}

// ---------------------------------------------------------------------------------------
// search_code
// ---------------------------------------------------------------------------------------

fn default_directory() -> String {
    "manuscripts".into()
}

/// Arguments of `search_code`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchCodeArgs {
    /// The text to find (a literal string, case-insensitive), or a regular expression when
    /// `regex` is true.
    pub query: String,
    /// Where to search, relative to data/: a folder ("manuscripts", the default; "" for
    /// everything; "bible", "plans"...) or one file.
    #[serde(default = "default_directory")]
    pub directory: String,
    /// Treat the query as a regular expression (Perl-like syntax without look-around or
    /// backreferences). Default: false (the query is matched as written).
    #[serde(default)]
    pub regex: bool,
    /// Match case exactly. Default: false.
    #[serde(default)]
    pub case_sensitive: bool,
    /// The most matching lines to return (1 to 200; default 50).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `search_code`: matching lines with their file paths and line numbers.
pub struct SearchCode;

impl ToolSpec for SearchCode {
    type Args = SearchCodeArgs;
    const NAME: &'static str = "search_code";
    const CATEGORY: Category = Category::Knowledge;
    const DESCRIPTION: &'static str = "Search the files of the project's data/ folder for a string (or a regular expression with regex: true) and return each matching line with its file path, line number (1-based), column and text. directory defaults to \"manuscripts\" (every chapter); \"\" searches everything, or give a folder or one file.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let at = resolve_path(&args.directory, Want::Any)?;
        let pattern = Pattern::new(&args.query, args.regex, args.case_sensitive)
            .map_err(|e| ToolError::invalid_args(e.to_string()))?;
        let limit = match args.limit {
            None => DEFAULT_SEARCH_RESULTS,
            Some(n) if (1..=MAX_SEARCH_RESULTS).contains(&n) => n,
            Some(n) => {
                return Err(ToolError::invalid_args(format!(
                    "'limit' must be 1 to {MAX_SEARCH_RESULTS}, got {n}"
                )))
            }
        };
        let files = searched_files(cx, &at)?;
        let mut results = Vec::new();
        let mut total = 0usize;
        let mut files_matched = 0usize;
        for (path, text) in &files {
            let mut matched = false;
            for (i, line) in text.split('\n').enumerate() {
                let Some(m) = pattern.find(line) else {
                    continue;
                };
                matched = true;
                total += 1;
                if results.len() < limit {
                    results.push(json!({
                        "path": path,
                        "line": i + 1,
                        "column": m.start + 1,
                        "text": excerpt(line, m.start, m.end),
                    }));
                }
            }
            files_matched += usize::from(matched);
        }
        let shown = results.len();
        let mut data = json!({
            "query": args.query,
            "regex": pattern.is_regex(),
            "directory": args.directory,
            "results": results,
            "total": total,
            "files_searched": files.len(),
            "files_matched": files_matched,
        });
        if total > shown {
            data["more"] = json!(total - shown);
            data["note"] = json!(format!(
                "{shown} of {total} matching lines shown; narrow the query or the directory, or raise limit (at most {MAX_SEARCH_RESULTS})"
            ));
        }
        Ok(data)
    }
}

/// A line's excerpt around a match (chars `start..end`), at most [`EXCERPT_CHARS`].
fn excerpt(line: &str, start: usize, end: usize) -> String {
    let len = line.chars().count();
    if len <= EXCERPT_CHARS {
        return line.to_string();
    }
    let room = EXCERPT_CHARS.saturating_sub(end.saturating_sub(start)) / 2;
    let from = start.saturating_sub(room);
    let to = (from + EXCERPT_CHARS).min(len);
    let cut: String = line.chars().skip(from).take(to - from).collect();
    format!(
        "{}{cut}{}",
        if from > 0 { "…" } else { "" },
        if to < len { "…" } else { "" }
    )
}

/// The files a search covers, as (path, text).
fn searched_files(cx: &EditContext<'_>, at: &DataPath) -> Result<Vec<(String, String)>, ToolError> {
    let chapters = |cx: &EditContext<'_>| -> Vec<(String, String)> {
        let count = cx.project().chapters.len();
        cx.project()
            .chapters
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (
                    manuscript_path(i + 1, count, &c.title),
                    c.text().to_string(),
                )
            })
            .collect()
    };
    let entities = |cx: &EditContext<'_>, kind: Option<Kind>| -> Vec<(String, String)> {
        cx.bible()
            .all()
            .filter(|e| kind.is_none_or(|k| e.kind == k) && bible_name(&e.id).is_some())
            .map(|e| (bible_path(e.kind, &e.id), entity_json(e)))
            .collect()
    };
    let free = |cx: &EditContext<'_>, dir: &str| -> Vec<(String, String)> {
        cx.files()
            .under(dir)
            .map(|f| (f.path.clone(), f.content.clone()))
            .collect()
    };
    Ok(match at {
        DataPath::Dir(DirPath::Root) => {
            let mut all = chapters(cx);
            all.extend(entities(cx, None));
            all.extend(free(cx, Folder::Plans.name()));
            all.extend(free(cx, Folder::Notes.name()));
            all
        }
        DataPath::Dir(DirPath::Manuscripts) => chapters(cx),
        DataPath::Dir(DirPath::Bible) => entities(cx, None),
        DataPath::Dir(DirPath::BibleKind(kind)) => entities(cx, Some(*kind)),
        DataPath::Dir(DirPath::Free(dir)) => free(cx, dir),
        // A free path without a trailing slash: the file, else the folder.
        DataPath::Free { path } if cx.files().get(path).is_none() => {
            if !cx.files().is_folder(path) {
                return Err(ToolError::not_found(format!(
                    "no file or folder '{path}'; list_files shows what exists"
                )));
            }
            free(cx, path)
        }
        file => {
            let read = read(cx, file)?;
            vec![(read.path, read.content)]
        }
    })
}
