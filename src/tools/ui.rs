//! UI tools: change the editor UI state held in the core (`switch_panel`, `toggle_zen_mode`,
//! `highlight_text`, `clear_highlights`, `set_selection`). They are not reversible and not in
//! the history; the page hears of every change through a `ui` event and shows it (the demo
//! page: panels, zen mode, highlights with their style and note, the selection).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use serde_json::Value;

use super::editing::locate;
use super::{ToolError, ToolRegistry, ToolSpec};
use crate::commands::Category;
use crate::project::Highlight;
use crate::session::EditContext;

/// Most highlights kept; the oldest go first.
pub const MAX_HIGHLIGHTS: usize = 500;

/// Register the ui tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.add::<SwitchPanel>();
    registry.add::<ToggleZenMode>();
    registry.add::<HighlightText>();
    registry.add::<ClearHighlights>();
    registry.add::<SetSelection>();
}

/// A panel of the editor page: the side panel's tabs, and the story bible beside the
/// chapters. The page shows exactly these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Panel {
    // The chat with the agent.
    Chat,
    // The undo history.
    History,
    // Memory: the bedside note, notes, goals, watched entities, suggestions.
    Memory,
    // The data/ files (plans, notes, chapters and story-bible entries as files).
    Files,
    // Background jobs (rentl's pipelines): progress, units, transcripts.
    Jobs,
    // Research: web pages read into research notes.
    Research,
    // The latest run_analysis result (the writer's or an agent's).
    Analysis,
    // The story bible: characters, locations, glossary, scenes.
    Bible,
    // Settings.
    Settings,
}

/// Arguments of `switch_panel`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SwitchPanelArgs {
    /// The panel to show.
    pub panel: Panel,
}

/// `switch_panel`.
pub struct SwitchPanel;

impl ToolSpec for SwitchPanel {
    type Args = SwitchPanelArgs;
    const NAME: &'static str = "switch_panel";
    const CATEGORY: Category = Category::Ui;
    const DESCRIPTION: &'static str =
        "Show a panel of the editor: chat, history, memory, files, jobs, research, analysis (the latest run_analysis result), bible (the story bible) or settings.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let name = crate::error::to_json(&args.panel);
        cx.ui().panel = name.as_str().unwrap_or("chat").to_string();
        Ok(json!({ "panel": name }))
    }
}

/// Arguments of `toggle_zen_mode`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ToggleZenArgs {
    /// Turn zen mode on (true) or off (false); omit to toggle.
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// `toggle_zen_mode`.
pub struct ToggleZenMode;

impl ToolSpec for ToggleZenMode {
    type Args = ToggleZenArgs;
    const NAME: &'static str = "toggle_zen_mode";
    const CATEGORY: Category = Category::Ui;
    const DESCRIPTION: &'static str =
        "Turn distraction-free (zen) mode on or off; without 'enabled' it toggles.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let ui = cx.ui();
        ui.zen_mode = args.enabled.unwrap_or(!ui.zen_mode);
        Ok(json!({ "zenMode": ui.zen_mode }))
    }
}

/// How a highlight looks.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HighlightStyle {
    // A problem.
    Warning,
    // A proposed change.
    Suggestion,
    // Neutral information (the default).
    #[default]
    Info,
}

/// A style's name, as highlights keep it.
fn style_name(style: HighlightStyle) -> String {
    crate::error::to_json(&style)
        .as_str()
        .map_or_else(|| "info".into(), str::to_string)
}

/// A target range: exact text, or start and end.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RangeArgs {
    /// Exact text from the manuscript (its first occurrence). Give this or start and end.
    #[serde(default)]
    pub text: Option<String>,
    /// Start (chars from the chapter start).
    #[serde(default)]
    pub start: Option<usize>,
    /// End (chars from the chapter start, exclusive).
    #[serde(default)]
    pub end: Option<usize>,
    /// The chapter: id, number or title. Defaults to the active chapter.
    #[serde(default)]
    pub chapter: Option<String>,
}

/// Resolve a range target to (chapter id, start, end).
fn resolve_range(
    cx: &EditContext<'_>,
    args: &RangeArgs,
) -> Result<(String, usize, usize), ToolError> {
    let chapter = cx.chapter(args.chapter.as_deref())?;
    let number = cx.project().chapter_index(&chapter.id).map_or(0, |i| i + 1);
    let len = chapter.len_chars();
    let (start, end) = match (&args.text, args.start, args.end) {
        (Some(text), None, None) => locate(chapter, number, text, "text")?,
        (None, Some(start), Some(end)) => {
            if start > end || end > len {
                return Err(ToolError::new(
                    "out_of_range",
                    format!(
                        "range {start}..{end} is outside chapter {number} (length {len} chars)"
                    ),
                ));
            }
            (start, end)
        }
        _ => {
            return Err(ToolError::invalid_args(
                "give either 'text' (exact text to find) or both 'start' and 'end'",
            ))
        }
    };
    Ok((chapter.id.clone(), start, end))
}

/// Arguments of `highlight_text`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct HighlightArgs {
    /// What to highlight.
    #[serde(flatten)]
    pub range: RangeArgs,
    /// warning, suggestion or info (default).
    #[serde(default)]
    pub style: HighlightStyle,
    /// A note shown with the highlight.
    #[serde(default)]
    pub note: Option<String>,
}

/// `highlight_text`.
pub struct HighlightText;

impl ToolSpec for HighlightText {
    type Args = HighlightArgs;
    const NAME: &'static str = "highlight_text";
    const CATEGORY: Category = Category::Ui;
    const DESCRIPTION: &'static str = "Highlight a passage in the editor (by exact text, or by start and end) as a warning, suggestion or info, with an optional note.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let (chapter, start, end) = resolve_range(cx, &args.range)?;
        let style = style_name(args.style);
        let highlight = Highlight {
            chapter: chapter.clone(),
            start,
            end,
            style: style.clone(),
            note: args.note,
        };
        let ui = cx.ui();
        ui.highlights.push(highlight);
        if ui.highlights.len() > MAX_HIGHLIGHTS {
            let extra = ui.highlights.len() - MAX_HIGHLIGHTS;
            ui.highlights.drain(..extra);
        }
        Ok(json!({ "chapter": chapter, "start": start, "end": end, "style": style }))
    }
}

/// Arguments of `clear_highlights`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ClearHighlightsArgs {
    /// Only this chapter's highlights (id, number or title); default: every chapter's.
    #[serde(default)]
    pub chapter: Option<String>,
    /// Only highlights of this style (warning, suggestion or info); default: every style.
    #[serde(default)]
    pub style: Option<HighlightStyle>,
}

/// `clear_highlights`.
pub struct ClearHighlights;

impl ToolSpec for ClearHighlights {
    type Args = ClearHighlightsArgs;
    const NAME: &'static str = "clear_highlights";
    const CATEGORY: Category = Category::Ui;
    const DESCRIPTION: &'static str = "Remove highlights from the editor: all of them, or only one chapter's, or only one style's (warning, suggestion or info).";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let chapter = match args.chapter.as_deref().filter(|c| !c.trim().is_empty()) {
            Some(name) => Some(cx.project().find_chapter(name)?.id.clone()),
            None => None,
        };
        let style = args.style.map(style_name);
        let ui = cx.ui();
        let before = ui.highlights.len();
        ui.highlights.retain(|h| {
            !(chapter.as_ref().is_none_or(|c| *c == h.chapter)
                && style.as_ref().is_none_or(|s| *s == h.style))
        });
        Ok(json!({ "removed": before - ui.highlights.len(), "left": ui.highlights.len() }))
    }
}

/// `set_selection`.
pub struct SetSelection;

impl ToolSpec for SetSelection {
    type Args = RangeArgs;
    const NAME: &'static str = "set_selection";
    const CATEGORY: Category = Category::Ui;
    const DESCRIPTION: &'static str = "Select a passage in the editor (by exact text, or by start and end), making its chapter the active one.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let (chapter, start, end) = resolve_range(cx, &args)?;
        let selected = cx
            .project()
            .chapter(&chapter)
            .map(|c| c.slice(start, end))
            .unwrap_or_default();
        let ui = cx.ui();
        ui.active_chapter = Some(chapter.clone());
        ui.selection = Some((start, end));
        ui.cursor = end;
        ui.scroll = start;
        Ok(json!({
            "chapter": chapter, "start": start, "end": end,
            "text": super::editing::preview(&selected, 200),
        }))
    }
}
