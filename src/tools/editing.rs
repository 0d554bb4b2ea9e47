//! Editing tools: change the manuscript's text, anchored by text rather than raw offsets so a
//! model cannot miscount. Each call is one reversible command in the history.
//!
//! `update_manuscript`, `append_to_manuscript`, `insert_text`, `delete_text`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use serde_json::Value;

use super::{ToolError, ToolRegistry, ToolSpec};
use crate::commands::Category;
use crate::project::changeset::ChangeSet;
use crate::project::search;
use crate::project::Chapter;
use crate::session::EditContext;

/// Register the editing tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.add::<UpdateManuscript>();
    registry.add::<AppendToManuscript>();
    registry.add::<InsertText>();
    registry.add::<DeleteText>();
}

/// Shorten text for messages.
pub(crate) fn preview(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// Where `needle` first occurs in the chapter, as a char range; or a `not_found` error that
/// names the closest fuzzy candidate so the model can retry with the exact text.
pub(crate) fn locate(
    chapter: &Chapter,
    number: usize,
    needle: &str,
    field: &str,
) -> Result<(usize, usize), ToolError> {
    if needle.is_empty() {
        return Err(ToolError::invalid_args(format!(
            "'{field}' must not be empty; give the exact text to find"
        )));
    }
    if let Some(found) = chapter.find(needle) {
        return Ok(found);
    }
    let text = chapter.text().to_string();
    let mut message = format!(
        "Text not found in chapter {number} \"{}\": \"{}\".",
        chapter.title,
        preview(needle, 80)
    );
    let mut details = json!({ "chapter": chapter.id });
    if let Some(close) = search::closest(&text, needle) {
        message.push_str(&format!(
            " The closest text is \"{}\" (similarity {:.2}); use the exact text from the chapter.",
            preview(&close.text, 200),
            close.score
        ));
        details["closest"] = json!({
            "text": close.text, "start": close.start, "end": close.end, "score": close.score
        });
    }
    Err(ToolError::not_found(message).with_details(details))
}

fn chapter_info(cx: &EditContext<'_>, id: &str) -> (usize, String) {
    let project = cx.project();
    let number = project.chapter_index(id).map_or(0, |i| i + 1);
    let title = project
        .chapter(id)
        .map(|c| c.title.clone())
        .unwrap_or_default();
    (number, title)
}

/// Resolve the target chapter: its id, number and a snapshot for searching.
fn target(cx: &EditContext<'_>, chapter: Option<&str>) -> Result<(String, usize), ToolError> {
    let chapter = cx.chapter(chapter)?;
    let id = chapter.id.clone();
    let number = cx.project().chapter_index(&id).map_or(0, |i| i + 1);
    Ok((id, number))
}

/// Replace `start..end` of a chapter with `text` and report the result.
fn replace(
    cx: &mut EditContext<'_>,
    id: &str,
    start: usize,
    end: usize,
    text: &str,
) -> Result<Value, ToolError> {
    let len = cx.project().chapter(id).map_or(0, Chapter::len_chars);
    let change = ChangeSet::replace(len, start, end, text)
        .map_err(|e| ToolError::new("out_of_range", e.to_string()))?;
    let version = cx.edit(id, change)?;
    let (number, title) = chapter_info(cx, id);
    Ok(json!({
        "chapter": id,
        "chapterNumber": number,
        "chapterTitle": title,
        "start": start,
        "end": start + text.chars().count(),
        "version": version,
    }))
}

/// Arguments of `update_manuscript`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateManuscriptArgs {
    /// The exact text to replace, copied from the manuscript. Its first occurrence is
    /// replaced.
    #[serde(alias = "search_text")]
    pub search_text: String,
    /// The text to put in its place (may be empty to delete).
    #[serde(alias = "replacement_text")]
    pub replacement_text: String,
    /// A short description of the change, shown in the history.
    #[serde(default)]
    pub description: Option<String>,
    /// The chapter to edit: id, number ("3") or title. Defaults to the active chapter.
    #[serde(default)]
    pub chapter: Option<String>,
}

/// `update_manuscript`: replace the first occurrence of a text.
pub struct UpdateManuscript;

impl ToolSpec for UpdateManuscript {
    type Args = UpdateManuscriptArgs;
    const NAME: &'static str = "update_manuscript";
    const CATEGORY: Category = Category::Editing;
    const DESCRIPTION: &'static str = "Replace the first occurrence of searchText with replacementText in the active chapter (or the named one). searchText must be copied exactly from the manuscript; if it is not found, the error names the closest text.";
    const REVERSIBLE: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        if args.search_text == args.replacement_text {
            return Err(ToolError::invalid_args(
                "replacementText is the same as searchText; there is nothing to change",
            ));
        }
        let (id, number) = target(cx, args.chapter.as_deref())?;
        let chapter = cx
            .project()
            .chapter(&id)
            .ok_or_else(|| ToolError::not_found(id.clone()))?;
        let (start, end) = locate(chapter, number, &args.search_text, "searchText")?;
        cx.describe(args.description.unwrap_or_else(|| {
            format!(
                "Replace \"{}\" with \"{}\"",
                preview(&args.search_text, 40),
                preview(&args.replacement_text, 40)
            )
        }));
        replace(cx, &id, start, end, &args.replacement_text)
    }
}

/// Arguments of `append_to_manuscript`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppendArgs {
    /// The text to append. It starts a new paragraph unless `sameParagraph` is true.
    pub text: String,
    /// The chapter: id, number or title. Defaults to the active chapter.
    #[serde(default)]
    pub chapter: Option<String>,
    /// Append directly after the last character instead of as a new paragraph.
    #[serde(default, alias = "same_paragraph")]
    pub same_paragraph: bool,
    /// A short description for the history.
    #[serde(default)]
    pub description: Option<String>,
}

/// `append_to_manuscript`: add text at the end of a chapter.
pub struct AppendToManuscript;

impl ToolSpec for AppendToManuscript {
    type Args = AppendArgs;
    const NAME: &'static str = "append_to_manuscript";
    const CATEGORY: Category = Category::Editing;
    const DESCRIPTION: &'static str = "Append text at the end of the active chapter (or the named one), as a new paragraph unless sameParagraph is true.";
    const REVERSIBLE: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        if args.text.is_empty() {
            return Err(ToolError::invalid_args("'text' must not be empty"));
        }
        let (id, _) = target(cx, args.chapter.as_deref())?;
        let chapter = cx
            .project()
            .chapter(&id)
            .ok_or_else(|| ToolError::not_found(id.clone()))?;
        let len = chapter.len_chars();
        let ending = chapter.slice(len.saturating_sub(2), len);
        let separator = if args.same_paragraph || len == 0 || ending.ends_with("\n\n") {
            ""
        } else if ending.ends_with('\n') {
            "\n"
        } else {
            "\n\n"
        };
        let text = format!("{separator}{}", args.text);
        cx.describe(
            args.description
                .unwrap_or_else(|| format!("Append \"{}\"", preview(&args.text, 40))),
        );
        replace(cx, &id, len, len, &text)
    }
}

/// Where to insert relative to the anchor.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    // Before the anchor text.
    Before,
    // After the anchor text (the default).
    #[default]
    After,
}

/// Arguments of `insert_text`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InsertTextArgs {
    /// The text to insert.
    pub text: String,
    /// Exact text from the manuscript to insert next to (its first occurrence).
    #[serde(alias = "anchor_text")]
    pub anchor_text: String,
    /// Insert before or after the anchor (default after).
    #[serde(default)]
    pub position: Placement,
    /// The chapter: id, number or title. Defaults to the active chapter.
    #[serde(default)]
    pub chapter: Option<String>,
    /// A short description for the history.
    #[serde(default)]
    pub description: Option<String>,
}

/// `insert_text`: insert text before or after an anchor text.
pub struct InsertText;

impl ToolSpec for InsertText {
    type Args = InsertTextArgs;
    const NAME: &'static str = "insert_text";
    const CATEGORY: Category = Category::Editing;
    const DESCRIPTION: &'static str = "Insert text right before or after the first occurrence of anchorText (copied exactly from the manuscript) in the active or named chapter.";
    const REVERSIBLE: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        if args.text.is_empty() {
            return Err(ToolError::invalid_args("'text' must not be empty"));
        }
        let (id, number) = target(cx, args.chapter.as_deref())?;
        let chapter = cx
            .project()
            .chapter(&id)
            .ok_or_else(|| ToolError::not_found(id.clone()))?;
        let (start, end) = locate(chapter, number, &args.anchor_text, "anchorText")?;
        let at = match args.position {
            Placement::Before => start,
            Placement::After => end,
        };
        cx.describe(
            args.description
                .unwrap_or_else(|| format!("Insert \"{}\"", preview(&args.text, 40))),
        );
        replace(cx, &id, at, at, &args.text)
    }
}

/// Arguments of `delete_text`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteTextArgs {
    /// The exact text to delete (its first occurrence), copied from the manuscript.
    pub text: String,
    /// The chapter: id, number or title. Defaults to the active chapter.
    #[serde(default)]
    pub chapter: Option<String>,
    /// A short description for the history.
    #[serde(default)]
    pub description: Option<String>,
}

/// `delete_text`: delete the first occurrence of a text.
pub struct DeleteText;

impl ToolSpec for DeleteText {
    type Args = DeleteTextArgs;
    const NAME: &'static str = "delete_text";
    const CATEGORY: Category = Category::Editing;
    const DESCRIPTION: &'static str = "Delete the first occurrence of text (copied exactly from the manuscript) in the active or named chapter.";
    const REVERSIBLE: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let (id, number) = target(cx, args.chapter.as_deref())?;
        let chapter = cx
            .project()
            .chapter(&id)
            .ok_or_else(|| ToolError::not_found(id.clone()))?;
        let (start, end) = locate(chapter, number, &args.text, "text")?;
        cx.describe(
            args.description
                .unwrap_or_else(|| format!("Delete \"{}\"", preview(&args.text, 40))),
        );
        replace(cx, &id, start, end, "")
    }
}
