//! Generation tools: text written by a model. `rewrite_selection` rewrites the writer's
//! selection, `continue_writing` continues the text at the cursor, `suggest_dialogue` returns
//! lines of dialogue as data; and `run_analysis` gets an optional reading of its figures.
//!
//! ## Two phases
//!
//! These tools need a nested model call, which is async and made by the core, so they run in
//! two phases:
//!
//! 1. [`plan`] checks the arguments (against the tool's schema, with the same messages as
//!    [`Session::execute`]) and reads what the call needs from the session: the selection or
//!    the cursor, the text around it, and the chapter's version. It returns a
//!    [`GenerationPlan`]: a system prompt, a user prompt, a token limit and a [`Finish`] that
//!    says what to do with the answer. It changes nothing.
//! 2. The core calls the model with the plan, then [`finish`] turns the answer into either an
//!    edit command ([`Finished::Command`], run with [`Session::execute_command`] so it is
//!    recorded, undoable and rolled back on failure like any tool's edit) or result data
//!    ([`Finished::Data`]).
//!
//! [`Session::execute`] cannot make the model call: on a generation tool it returns the error
//! `needs_model` (after checking the arguments) and changes nothing.
//!
//! ## Edits land where they were meant to
//!
//! The plan records the chapter version it read. The writer may keep typing while the model
//! writes; the edit built on the old version is rebased over everything applied since
//! ([`crate::project::Chapter::rebase`]), so it lands at the right place and nothing typed
//! meanwhile is lost (text the writer typed inside a selection being rewritten stays, next to
//! the rewrite). The edit fails with `conflict`, changing nothing, if the version is too old to
//! rebase (or newer than the chapter, as after a reload), if the project or chapter is no
//! longer the one planned for (`not_found` for a deleted chapter), or if the writer deleted
//! the whole selected passage meanwhile. After a rewrite, if the editor still shows that
//! chapter, the selection covers the new text.
//!
//! ## Prompts
//!
//! Each tool has a short fixed system prompt (a fiction-writing assistant that answers with
//! only the text). The user prompt holds the tool's arguments and the manuscript around the
//! target, all bounded:
//!
//! - `rewrite_selection`: the instruction (at most [`MAX_INSTRUCTION_CHARS`]), the tone (at
//!   most [`MAX_SHORT_ARG_CHARS`]), the selected passage (at most [`MAX_SELECTION_CHARS`];
//!   a longer selection is refused with `out_of_range`), and up to [`CONTEXT_CHARS`] of text
//!   before and after it. The token limit grows with the passage.
//! - `continue_writing`: the length and direction, up to [`CONTINUE_BEFORE_CHARS`] of text
//!   before the insertion point and up to [`CONTINUE_AFTER_CHARS`] after it.
//! - `suggest_dialogue`: the character, the scene context (at most
//!   [`MAX_INSTRUCTION_CHARS`]) and up to [`CONTEXT_CHARS`] of the active chapter before the
//!   cursor, for the voice.
//! - `run_analysis`' reading: the analysis result as JSON, at most [`MAX_ANALYSIS_CHARS`].
//!
//! Context excerpts are cut at word boundaries and marked with `…` where they were cut.
//!
//! ## Answers
//!
//! An answer is trimmed and a surrounding code fence is removed. Matching quotation marks
//! around the whole answer (with no other such mark inside) are removed from a rewrite, unless
//! the selected passage itself was quoted that way, and from each dialogue suggestion; a
//! continuation keeps them, since it may well be one quoted line of dialogue. An answer left
//! empty is an error (`failed`, "the model returned no text") and changes nothing.
//! Continuations are joined to the text before them with a space (or, when the answer began
//! with a line break, as a new paragraph), and followed by a space when a word follows.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use serde_json::Value;

use super::editing::preview;
use super::Command;
use super::{parse_args, ToolError, ToolRegistry, ToolSpec};
use crate::commands::Category;
use crate::project::changeset::{ChangeSet, Op};
use crate::project::{Chapter, Project};
use crate::session::{EditContext, Session};

/// The generation tools' names.
pub const TOOLS: [&str; 3] = [
    RewriteSelection::NAME,
    ContinueWriting::NAME,
    SuggestDialogue::NAME,
];

/// Text around a selection (before and after, each) given to the model as context; also how
/// much of the chapter before the cursor `suggest_dialogue` shows.
pub const CONTEXT_CHARS: usize = 2_000;
/// Text before the insertion point given to `continue_writing`.
pub const CONTINUE_BEFORE_CHARS: usize = 4_000;
/// Text after the insertion point given to `continue_writing`.
pub const CONTINUE_AFTER_CHARS: usize = 1_000;
/// The longest selection `rewrite_selection` takes.
pub const MAX_SELECTION_CHARS: usize = 12_000;
/// Longest instruction, direction or scene context put in a prompt (longer ones are cut).
pub const MAX_INSTRUCTION_CHARS: usize = 2_000;
/// Longest tone or character name put in a prompt (longer ones are cut).
pub const MAX_SHORT_ARG_CHARS: usize = 200;
/// Longest analysis JSON put in the interpretation prompt (longer is cut).
pub const MAX_ANALYSIS_CHARS: usize = 12_000;
/// Most dialogue suggestions asked for at once.
pub const MAX_SUGGESTIONS: u64 = 10;

const REWRITE_SYSTEM: &str = "You are a fiction-writing assistant inside a writer's manuscript editor. You rewrite the passage you are given as instructed, keeping its point of view, tense, names and conventions (paragraph breaks, quotation marks for dialogue) unless the instruction says otherwise. Your answer replaces the passage exactly as you write it: answer with only the text, with no title, no commentary, and no quotation marks or code fences around it.";
const CONTINUE_SYSTEM: &str = "You are a fiction-writing assistant inside a writer's manuscript editor. You continue the manuscript at the marked point in the writer's voice, point of view and tense, consistent with the text before it and leading into the text after it, if any. Your answer is inserted exactly as you write it: answer with only the new text, with no commentary and no code fences, and no quotation marks around it unless it is dialogue. Do not repeat the text before or after the point.";
const DIALOGUE_SYSTEM: &str = "You are a fiction-writing assistant inside a writer's manuscript editor. You suggest lines of dialogue for a character, in their voice and fitting the scene, each different from the others. Answer with only the lines, one per line, with no numbering, no speaker names, no quotation marks and no commentary.";
const INTERPRET_SYSTEM: &str = "You are a fiction-writing assistant. You are given figures from a local, mechanical analysis of a manuscript, as JSON. Give the writer a short reading of them in 3 to 5 plain sentences: what stands out and what it may mean for the story. Cite a figure only where it matters and claim nothing the figures do not support. Answer with only the text.";

/// Register the generation tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.add_with_factory::<RewriteSelection>(needs_model_command::<RewriteSelection>);
    registry.add_with_factory::<ContinueWriting>(needs_model_command::<ContinueWriting>);
    registry.add_with_factory::<SuggestDialogue>(needs_model_command::<SuggestDialogue>);
}

/// Whether `name` is a generation tool (one that needs a model call: run it with [`plan`]
/// and [`finish`], not [`Session::execute`]).
pub fn is_generation(name: &str) -> bool {
    TOOLS.contains(&name)
}

/// Whether a `run_analysis` call asked for the model's reading of its figures: its
/// `interpret` argument, or when that is absent (or not a boolean), whether a model is
/// configured.
pub fn interpretation_requested(args: &Value, model_configured: bool) -> bool {
    args.get("interpret")
        .and_then(Value::as_bool)
        .unwrap_or(model_configured)
}

/// The error of a generation tool run without a model call.
pub fn needs_model(name: &str) -> ToolError {
    ToolError::new(
        "needs_model",
        format!(
            "'{name}' needs a model call; run it through the core (execute or run) with a model configured"
        ),
    )
}

/// The synchronous command of a generation tool: its arguments are parsed (so a bad one is
/// named), then it fails with `needs_model`.
fn needs_model_command<T: ToolSpec>(_: &str, args: Value) -> Result<Box<dyn Command>, ToolError> {
    parse_args::<T::Args>(args)?;
    Err(needs_model(T::NAME))
}

/// What the nested model call needs, and what to do with its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenerationPlan {
    /// The system prompt.
    pub system: String,
    /// The user prompt.
    pub prompt: String,
    /// The most tokens the answer may use.
    pub max_tokens: u32,
    /// What to do with the answer ([`finish`]).
    pub finish: Finish,
}

/// What to do with the model's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    /// Replace `start..end` (chars) of a chapter, as it was at `version`, with the answer.
    Replace {
        /// The project's id.
        project: String,
        /// The chapter's id.
        chapter: String,
        /// Start of the selection (chars).
        start: usize,
        /// End of the selection (chars, exclusive).
        end: usize,
        /// The chapter's version the selection was read at.
        version: u64,
        /// The selected text.
        original: String,
        /// The history description.
        description: String,
    },
    /// Insert the answer at `at` (chars) of a chapter, as it was at `version`.
    Insert {
        /// The project's id.
        project: String,
        /// The chapter's id.
        chapter: String,
        /// Where to insert (chars).
        at: usize,
        /// The chapter's version the position was read at.
        version: u64,
        /// The history description.
        description: String,
    },
    /// Parse up to `count` lines of dialogue for `character` into `{"character",
    /// "suggestions": [..]}`.
    Suggestions {
        /// The character (as given).
        character: String,
        /// How many lines were asked for.
        count: usize,
    },
    /// The reading of `run_analysis` figures, as `{"interpretation": text}` (the core adds
    /// it to the local result under `interpretation`).
    Interpretation,
}

/// The model's answer, made into what the tool returns.
pub enum Finished {
    /// An edit to run with [`Session::execute_command`].
    Command(Box<dyn Command>),
    /// The tool's result data.
    Data(Value),
}

impl std::fmt::Debug for Finished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finished::Command(_) => f.write_str("Command(..)"),
            Finished::Data(data) => f.debug_tuple("Data").field(data).finish(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The tools (their schemas and descriptions; see `plan` for what they read).

/// Arguments of `rewrite_selection`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RewriteSelectionArgs {
    /// What to do with the selected passage, such as "make it tenser", "cut it by half" or
    /// "fix the grammar only".
    pub instruction: String,
    /// The tone to write in, such as "wry" or "ominous".
    #[serde(default)]
    pub tone: Option<String>,
    /// The chapter the selection is in: id, number or title. Defaults to the active chapter.
    /// The selection is the editor's, in the active chapter; naming another chapter fails
    /// with no_selection.
    #[serde(default)]
    pub chapter: Option<String>,
}

/// `rewrite_selection`.
pub struct RewriteSelection;

impl ToolSpec for RewriteSelection {
    type Args = RewriteSelectionArgs;
    const NAME: &'static str = "rewrite_selection";
    const CATEGORY: Category = Category::Generation;
    const DESCRIPTION: &'static str = "Rewrite the passage the writer selected, following an instruction (and an optional tone); the model's rewrite replaces the selection and becomes the new selection. Fails with no_selection when nothing is selected: select a passage with set_selection or navigate_to_text first.";
    const REVERSIBLE: bool = true;

    fn run(_: Self::Args, _: &mut EditContext<'_>) -> Result<Value, ToolError> {
        Err(needs_model(Self::NAME))
    }
}

/// How much `continue_writing` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Length {
    // One sentence (about 30 words).
    Sentence,
    // One paragraph (about 120 words).
    Paragraph,
    // About a page (about 300 words).
    Page,
}

impl Length {
    fn words(self) -> u32 {
        match self {
            Length::Sentence => 30,
            Length::Paragraph => 120,
            Length::Page => 300,
        }
    }

    fn max_tokens(self) -> u32 {
        match self {
            Length::Sentence => 120,
            Length::Paragraph => 400,
            Length::Page => 1_000,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Length::Sentence => "one sentence",
            Length::Paragraph => "one paragraph",
            Length::Page => "about a page",
        }
    }
}

/// Where `continue_writing` inserts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Position {
    // At the writer's cursor (the default).
    #[default]
    Cursor,
    // At the end of the chapter.
    End,
}

/// Arguments of `continue_writing`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContinueWritingArgs {
    /// How much to write: sentence (about 30 words), paragraph (about 120 words) or page
    /// (about 300 words).
    pub length: Length,
    /// Where the story should go next, such as "she finds the letter".
    #[serde(default)]
    pub direction: Option<String>,
    /// The chapter: id, number or title. Defaults to the active chapter.
    #[serde(default)]
    pub chapter: Option<String>,
    /// cursor (default): insert at the writer's cursor in the active chapter; end: at the end
    /// of the chapter. In a chapter other than the active one the text always goes at the end.
    #[serde(default)]
    pub position: Position,
}

/// `continue_writing`.
pub struct ContinueWriting;

impl ToolSpec for ContinueWriting {
    type Args = ContinueWritingArgs;
    const NAME: &'static str = "continue_writing";
    const CATEGORY: Category = Category::Generation;
    const DESCRIPTION: &'static str = "Continue the manuscript in the writer's voice: the model writes a sentence, a paragraph or about a page (optionally in a direction) and it is inserted at the writer's cursor in the active chapter (or at the end of the chapter with position end, or of a named chapter that is not the active one).";
    const REVERSIBLE: bool = true;

    fn run(_: Self::Args, _: &mut EditContext<'_>) -> Result<Value, ToolError> {
        Err(needs_model(Self::NAME))
    }
}

/// Arguments of `suggest_dialogue`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuggestDialogueArgs {
    /// Who speaks, such as "Mara".
    pub character: String,
    /// The situation: who they speak to, what just happened, what they want.
    pub context: String,
    /// How many different lines to suggest, 1 to 10.
    #[schemars(range(min = 1, max = 10))]
    pub count: u64,
}

/// `suggest_dialogue`.
pub struct SuggestDialogue;

impl ToolSpec for SuggestDialogue {
    type Args = SuggestDialogueArgs;
    const NAME: &'static str = "suggest_dialogue";
    const CATEGORY: Category = Category::Generation;
    const DESCRIPTION: &'static str = "Suggest lines of dialogue for a character in a situation, in their voice (the model also reads the text before the writer's cursor). Returns {suggestions: [..]} and changes nothing; insert the one the writer picks with insert_text.";
    const REVERSIBLE: bool = true;

    fn run(_: Self::Args, _: &mut EditContext<'_>) -> Result<Value, ToolError> {
        Err(needs_model(Self::NAME))
    }
}

// ---------------------------------------------------------------------------------------
// Phase one: plans.

/// Check `args` against the tool's schema (like [`Session::execute`] does, with the same
/// error messages) and read what the call needs from the session. Changes nothing.
///
/// Errors: `unknown_tool`, `invalid_args` (also for a tool that is not a generation tool),
/// `not_found` (chapter), `no_selection` (`rewrite_selection` without a selection in the
/// chapter), `out_of_range` (a selection longer than [`MAX_SELECTION_CHARS`]).
pub fn plan(
    registry: &ToolRegistry,
    name: &str,
    args: Value,
    session: &Session,
) -> Result<GenerationPlan, ToolError> {
    let (_, args) = registry.validate_call(name, args)?;
    let args = Value::Object(args);
    let project = &session.project;
    match name {
        RewriteSelection::NAME => plan_rewrite(parse_args(args)?, project),
        ContinueWriting::NAME => plan_continue(parse_args(args)?, project),
        SuggestDialogue::NAME => plan_dialogue(parse_args(args)?, project),
        _ => Err(ToolError::invalid_args(format!(
            "'{name}' is not a generation tool (those are {}); run it with execute",
            TOOLS.join(", ")
        ))),
    }
}

/// The plan for `run_analysis`' LLM pass over its local result data.
pub fn interpretation_plan(analysis: &Value) -> GenerationPlan {
    let section = analysis["section"].as_str().unwrap_or("analysis");
    let scope = analysis["scope"].as_str().unwrap_or("manuscript");
    let figures = analysis.to_string();
    let (figures, cut) = clip(&figures, MAX_ANALYSIS_CHARS);
    let prompt = format!(
        "The {section} analysis of the {scope} gave these figures (JSON{}):\n{figures}\n\nGive the writer a short reading of them.",
        if cut { ", cut short" } else { "" }
    );
    GenerationPlan {
        system: INTERPRET_SYSTEM.into(),
        prompt,
        max_tokens: 400,
        finish: Finish::Interpretation,
    }
}

/// The chapter named by `name`, or the active one.
fn target<'p>(project: &'p Project, name: Option<&str>) -> Result<&'p Chapter, ToolError> {
    match name {
        Some(name) if !name.trim().is_empty() => Ok(project.find_chapter(name)?),
        _ => project
            .active_chapter()
            .ok_or_else(|| ToolError::not_found("the project has no chapters; create one first")),
    }
}

fn number(project: &Project, chapter: &Chapter) -> usize {
    project.chapter_index(&chapter.id).map_or(0, |i| i + 1)
}

fn is_active(project: &Project, chapter: &Chapter) -> bool {
    project.active_chapter().is_some_and(|c| c.id == chapter.id)
}

/// At most `max` chars of `text`, and whether it was cut.
fn clip(text: &str, max: usize) -> (String, bool) {
    match text.char_indices().nth(max) {
        Some((byte, _)) => (format!("{}…", &text[..byte]), true),
        None => (text.to_string(), false),
    }
}

/// Up to `max` chars before `at`, starting at a word boundary when cut.
fn before(chapter: &Chapter, at: usize, max: usize) -> String {
    let from = at.saturating_sub(max);
    let text = chapter.slice(from, at);
    if from == 0 {
        return text;
    }
    match text.find(char::is_whitespace) {
        Some(i) => format!("…{}", text[i..].trim_start()),
        None => format!("…{text}"),
    }
}

/// Up to `max` chars from `at`, ending at a word boundary when cut.
fn after(chapter: &Chapter, at: usize, max: usize) -> String {
    let to = at.saturating_add(max).min(chapter.len_chars());
    let text = chapter.slice(at, to);
    if to == chapter.len_chars() {
        return text;
    }
    match text.rfind(char::is_whitespace) {
        Some(i) => format!("{}…", text[..i].trim_end()),
        None => format!("{text}…"),
    }
}

/// A block of manuscript text for a prompt, or a note that there is none.
fn block(text: &str, none: &str) -> String {
    if text.trim().is_empty() {
        format!("({none})")
    } else {
        format!("<<<\n{text}\n>>>")
    }
}

fn no_selection(message: impl Into<String>) -> ToolError {
    ToolError::new("no_selection", message)
}

fn plan_rewrite(
    args: RewriteSelectionArgs,
    project: &Project,
) -> Result<GenerationPlan, ToolError> {
    let instruction = args.instruction.trim();
    if instruction.is_empty() {
        return Err(ToolError::invalid_args(
            "'instruction' must not be empty; say how to rewrite the passage",
        ));
    }
    let chapter = target(project, args.chapter.as_deref())?;
    let n = number(project, chapter);
    if !is_active(project, chapter) {
        return Err(no_selection(format!(
            "Nothing is selected in chapter {n} \"{}\": the selection is in the active chapter. Select the passage with set_selection (it makes its chapter the active one) first.",
            chapter.title
        )));
    }
    let len = chapter.len_chars();
    let selection = project
        .ui
        .selection
        .map(|(s, e)| (s.min(len), e.min(len)))
        .filter(|(s, e)| s < e);
    let Some((start, end)) = selection else {
        return Err(no_selection(
            "Nothing is selected. Ask the writer to select the passage to rewrite, or select it with set_selection or navigate_to_text first.",
        ));
    };
    if end - start > MAX_SELECTION_CHARS {
        return Err(ToolError::new(
            "out_of_range",
            format!(
                "The selection is {} chars; rewrite_selection takes at most {MAX_SELECTION_CHARS}. Select a shorter passage (a scene or a few paragraphs) and rewrite it in parts.",
                end - start
            ),
        ));
    }
    let original = chapter.slice(start, end);
    if original.trim().is_empty() {
        return Err(no_selection(
            "The selection is only white space; select the passage to rewrite.",
        ));
    }
    let (instruction, _) = clip(instruction, MAX_INSTRUCTION_CHARS);
    let tone = args
        .tone
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| clip(t, MAX_SHORT_ARG_CHARS).0);
    let mut prompt = format!(
        "Rewrite the PASSAGE below, from chapter {n} \"{}\".\nInstruction: {instruction}\n",
        chapter.title
    );
    if let Some(tone) = &tone {
        prompt.push_str(&format!("Tone: {tone}\n"));
    }
    prompt.push_str(&format!(
        "\nText before the passage (context only; do not repeat it):\n{}\n\nPASSAGE:\n<<<\n{original}\n>>>\n\nText after the passage (context only; do not repeat it):\n{}\n\nAnswer with only the rewritten passage.",
        block(&before(chapter, start, CONTEXT_CHARS), "the passage starts the chapter"),
        block(&after(chapter, end, CONTEXT_CHARS), "the passage ends the chapter"),
    ));
    // About 4 chars per token, room for the rewrite to grow by half, and a floor.
    let chars = (end - start) as u32;
    let max_tokens = (chars / 4 * 3 / 2 + 100).clamp(128, 4_096);
    let description = match &tone {
        Some(tone) => format!(
            "Rewrote the selection (\"{}\", {})",
            preview(instruction.as_str(), 40),
            preview(tone, 20)
        ),
        None => format!(
            "Rewrote the selection (\"{}\")",
            preview(instruction.as_str(), 40)
        ),
    };
    Ok(GenerationPlan {
        system: REWRITE_SYSTEM.into(),
        prompt,
        max_tokens,
        finish: Finish::Replace {
            project: project.id.clone(),
            chapter: chapter.id.clone(),
            start,
            end,
            version: chapter.version(),
            original,
            description,
        },
    })
}

fn plan_continue(
    args: ContinueWritingArgs,
    project: &Project,
) -> Result<GenerationPlan, ToolError> {
    let chapter = target(project, args.chapter.as_deref())?;
    let n = number(project, chapter);
    let len = chapter.len_chars();
    let at = match args.position {
        Position::Cursor if is_active(project, chapter) => project.ui.cursor.min(len),
        _ => len,
    };
    let direction = args
        .direction
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| clip(d, MAX_INSTRUCTION_CHARS).0);
    let mut prompt = format!(
        "Continue chapter {n} \"{}\" at the point marked [CONTINUE HERE]: write {} (about {} words).\n",
        chapter.title,
        args.length.describe(),
        args.length.words()
    );
    if let Some(direction) = &direction {
        prompt.push_str(&format!("Direction: {direction}\n"));
    }
    let following = after(chapter, at, CONTINUE_AFTER_CHARS);
    prompt.push_str(&format!(
        "\nText before the point:\n{}\n[CONTINUE HERE]\n",
        block(
            &before(chapter, at, CONTINUE_BEFORE_CHARS),
            "the chapter starts here"
        ),
    ));
    if following.trim().is_empty() {
        prompt.push_str("(nothing follows: this is the end of the chapter so far)\n");
    } else {
        prompt.push_str(&format!(
            "Text after the point (your text must lead into it; do not repeat it):\n{}\n",
            block(&following, "")
        ));
    }
    prompt.push_str("\nAnswer with only the new text.");
    let description = match &direction {
        Some(direction) => format!(
            "Continued the text ({}: \"{}\")",
            args.length.describe(),
            preview(direction, 40)
        ),
        None => format!("Continued the text ({})", args.length.describe()),
    };
    Ok(GenerationPlan {
        system: CONTINUE_SYSTEM.into(),
        prompt,
        max_tokens: args.length.max_tokens(),
        finish: Finish::Insert {
            project: project.id.clone(),
            chapter: chapter.id.clone(),
            at,
            version: chapter.version(),
            description,
        },
    })
}

fn plan_dialogue(
    args: SuggestDialogueArgs,
    project: &Project,
) -> Result<GenerationPlan, ToolError> {
    let count = args.count;
    if !(1..=MAX_SUGGESTIONS).contains(&count) {
        return Err(ToolError::invalid_args(format!(
            "'count' must be 1 to {MAX_SUGGESTIONS}, got {count}"
        )));
    }
    let character = args.character.trim();
    if character.is_empty() {
        return Err(ToolError::invalid_args(
            "'character' must not be empty; name who speaks",
        ));
    }
    let (character, _) = clip(character, MAX_SHORT_ARG_CHARS);
    let (context, _) = clip(args.context.trim(), MAX_INSTRUCTION_CHARS);
    let mut prompt = format!(
        "Suggest {count} different line{} of dialogue for {character}.\nSituation: {}\n",
        if count == 1 { "" } else { "s" },
        if context.is_empty() {
            "(not given)"
        } else {
            &context
        }
    );
    if let Some(chapter) = project.active_chapter() {
        let at = project.ui.cursor.min(chapter.len_chars());
        let recent = before(chapter, at, CONTEXT_CHARS);
        if !recent.trim().is_empty() {
            prompt.push_str(&format!(
                "\nThe manuscript just before the writer's cursor (chapter {} \"{}\"), for the voice and situation:\n{}\n",
                number(project, chapter),
                chapter.title,
                block(&recent, "")
            ));
        }
    }
    prompt.push_str(&format!(
        "\nAnswer with exactly {count} line{}, one line of dialogue per line.",
        if count == 1 { "" } else { "s" }
    ));
    Ok(GenerationPlan {
        system: DIALOGUE_SYSTEM.into(),
        prompt,
        max_tokens: count as u32 * 80 + 50,
        finish: Finish::Suggestions {
            character,
            count: count as usize,
        },
    })
}

// ---------------------------------------------------------------------------------------
// Phase two: answers.

/// Turn the model's answer into an edit command (run by the core with
/// [`Session::execute_command`]) or result data. An answer with no text is `failed`.
pub fn finish(finish: Finish, answer: &str) -> Result<Finished, ToolError> {
    match finish {
        Finish::Replace {
            project,
            chapter,
            start,
            end,
            version,
            original,
            description,
        } => {
            let text = clean(answer, Some(&original))?;
            Ok(Finished::Command(Box::new(GeneratedEdit {
                project,
                chapter,
                version,
                description,
                text,
                target: Target::Replace {
                    start,
                    end,
                    original,
                },
            })))
        }
        Finish::Insert {
            project,
            chapter,
            at,
            version,
            description,
        } => {
            let unfenced = strip_fence(answer);
            let new_paragraph = unfenced
                .trim_start_matches([' ', '\t', '\r'])
                .starts_with('\n');
            let text = non_empty(unfenced.trim())?;
            Ok(Finished::Command(Box::new(GeneratedEdit {
                project,
                chapter,
                version,
                description,
                text,
                target: Target::Insert { at, new_paragraph },
            })))
        }
        Finish::Suggestions { character, count } => {
            let suggestions = suggestions(answer, &character, count);
            if suggestions.is_empty() {
                return Err(no_text());
            }
            Ok(Finished::Data(
                json!({ "character": character, "suggestions": suggestions }),
            ))
        }
        Finish::Interpretation => {
            let text = clean(answer, None)?;
            Ok(Finished::Data(json!({ "interpretation": text })))
        }
    }
}

fn no_text() -> ToolError {
    ToolError::new("failed", "the model returned no text")
}

fn non_empty(text: &str) -> Result<String, ToolError> {
    if text.is_empty() {
        Err(no_text())
    } else {
        Ok(text.to_string())
    }
}

/// Without a code fence around it (the opening fence's info string, such as `text`, goes
/// too; an unclosed fence is removed as well).
fn strip_fence(answer: &str) -> &str {
    let trimmed = answer.trim();
    for fence in ["```", "~~~"] {
        let Some(rest) = trimmed.strip_prefix(fence) else {
            continue;
        };
        let rest = rest.strip_suffix(fence).unwrap_or(rest);
        return match rest.split_once('\n') {
            // The first line is an info string (a word) or empty.
            Some((info, body)) if !info.trim().contains(char::is_whitespace) => body,
            Some(_) => rest,
            None => rest,
        };
    }
    answer
}

/// Quotation mark pairs a model may wrap its answer in.
const QUOTES: &[(char, char)] = &[
    ('"', '"'),
    ('“', '”'),
    ('„', '“'),
    ('«', '»'),
    ('»', '«'),
    ('‘', '’'),
    ('\'', '\''),
    ('「', '」'),
];

/// The pair of quotation marks `text` is wrapped in, with no other such mark inside.
fn wrapping_quotes(text: &str) -> Option<(char, char)> {
    let mut chars = text.chars();
    let (first, last) = (chars.next()?, chars.next_back()?);
    let inner = chars.as_str();
    QUOTES.iter().copied().find(|&(open, close)| {
        first == open && last == close && !inner.contains(open) && !inner.contains(close)
    })
}

/// Trimmed, without a code fence and (unless `original` is quoted the same way) without
/// quotation marks around the whole answer; an error when nothing is left.
fn clean(answer: &str, original: Option<&str>) -> Result<String, ToolError> {
    let text = strip_fence(answer).trim();
    let text = match wrapping_quotes(text) {
        Some(pair) if original.and_then(|o| wrapping_quotes(o.trim())) != Some(pair) => {
            let inner = text.chars().count() - 2;
            let unquoted: String = text.chars().skip(1).take(inner).collect();
            return non_empty(unquoted.trim());
        }
        _ => text,
    };
    non_empty(text)
}

/// One suggestion per line: numbering, bullets, a leading speaker name and quotation marks
/// removed; empty lines and lines ending in a colon (a preamble) skipped; at most `count`.
fn suggestions(answer: &str, character: &str, count: usize) -> Vec<String> {
    let name = character.to_lowercase();
    strip_fence(answer)
        .lines()
        .filter_map(|line| {
            let mut line = strip_marker(line.trim());
            // "Mara: ..." (the speaker's name, as given, in any case).
            let named = line
                .get(..character.len())
                .is_some_and(|head| head.to_lowercase() == name);
            if let Some(rest) = named
                .then(|| line[character.len()..].strip_prefix(':'))
                .flatten()
            {
                line = rest.trim_start();
            }
            let line = match wrapping_quotes(line) {
                Some(_) => {
                    let inner = line.chars().count() - 2;
                    line.chars().skip(1).take(inner).collect::<String>()
                }
                None => line.to_string(),
            };
            let line = line.trim();
            // A preamble such as "Here are three lines:" is not a suggestion.
            (!line.is_empty() && !line.ends_with(':')).then(|| line.to_string())
        })
        .take(count)
        .collect()
}

/// A line without a list marker: `1.`, `1)`, `(1)`, `-`, `*`, `•`, `–`, `—`.
fn strip_marker(line: &str) -> &str {
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits > 0 && digits <= 3 {
        if let Some(rest) = line[digits..]
            .strip_prefix('.')
            .or_else(|| line[digits..].strip_prefix(')'))
            .or_else(|| line[digits..].strip_prefix(':'))
        {
            return rest.trim_start();
        }
    }
    if let Some(rest) = line.strip_prefix('(') {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            if let Some(rest) = rest[digits..].strip_prefix(')') {
                return rest.trim_start();
            }
        }
    }
    for bullet in ['-', '*', '•', '–', '—'] {
        if let Some(rest) = line.strip_prefix(bullet) {
            if rest.is_empty() || rest.starts_with(char::is_whitespace) {
                return rest.trim_start();
            }
        }
    }
    line
}

/// Where a generated edit goes, in the chapter as it was planned.
enum Target {
    Replace {
        start: usize,
        end: usize,
        original: String,
    },
    Insert {
        at: usize,
        new_paragraph: bool,
    },
}

/// A generated edit: the model's text, rebased onto the chapter as it is now.
struct GeneratedEdit {
    project: String,
    chapter: String,
    version: u64,
    description: String,
    text: String,
    target: Target,
}

fn conflict(message: impl Into<String>) -> ToolError {
    ToolError::new("conflict", message)
}

/// Where a change's (only) insert lands in the new text.
fn insert_position(change: &ChangeSet) -> usize {
    let mut at = 0;
    for op in change.ops() {
        match op {
            Op::Retain(n) => at += n,
            Op::Insert(_) => return at,
            Op::Delete(_) => {}
        }
    }
    at
}

fn deleted(change: &ChangeSet) -> usize {
    change
        .ops()
        .iter()
        .map(|op| match op {
            Op::Delete(n) => *n,
            _ => 0,
        })
        .sum()
}

impl Command for GeneratedEdit {
    fn execute(self: Box<Self>, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let GeneratedEdit {
            project,
            chapter: id,
            version,
            description,
            text,
            target,
        } = *self;
        if cx.project().id != project {
            return Err(conflict(
                "Another project was opened while the text was being generated; nothing was changed. Run the tool again.",
            ));
        }
        let chapter = cx.project().chapter(&id).ok_or_else(|| {
            ToolError::not_found(format!(
                "chapter '{id}' was deleted while the text was being generated; nothing was changed"
            ))
        })?;
        let rebased = chapter.version() != version;
        let stale = |error: crate::project::EditError| {
            conflict(format!(
                "The chapter changed too much while the text was being generated ({error}); nothing was changed. Run the tool again."
            ))
        };
        let text_chars = text.chars().count();
        match target {
            Target::Replace {
                start,
                end,
                original,
            } => {
                if text == original {
                    // Nothing to change: no edit, no history entry.
                    return Ok(json!({
                        "chapter": id, "changed": false, "text": text, "original": original,
                        "note": "The model's rewrite is the same as the selected passage; nothing was changed.",
                    }));
                }
                let planned = ChangeSet::from_ops([
                    Op::Retain(start),
                    Op::Insert(text.clone()),
                    Op::Delete(end - start),
                ]);
                let change = chapter.rebase(version, planned).map_err(stale)?;
                if deleted(&change) == 0 && !original.is_empty() {
                    return Err(conflict(
                        "The selected passage was deleted while the rewrite was being written; nothing was changed. Select a passage and run rewrite_selection again.",
                    ));
                }
                let at = insert_position(&change);
                let new_version = cx.edit(&id, change)?;
                cx.describe(description);
                if cx.project().active_chapter().is_some_and(|c| c.id == id) {
                    let ui = cx.ui();
                    ui.selection = Some((at, at + text_chars));
                    ui.cursor = at + text_chars;
                }
                let (number, title) = info(cx.project(), &id);
                Ok(json!({
                    "chapter": id, "chapterNumber": number, "chapterTitle": title,
                    "start": at, "end": at + text_chars, "version": new_version,
                    "text": text, "original": original, "rebased": rebased, "changed": true,
                }))
            }
            Target::Insert { at, new_paragraph } => {
                let planned = ChangeSet::from_ops([Op::Retain(at), Op::Insert(text.clone())]);
                let change = chapter.rebase(version, planned).map_err(stale)?;
                let at = insert_position(&change);
                let len = chapter.len_chars();
                let before = chapter.slice(at.saturating_sub(2), at);
                let next = chapter.slice(at, at + 1).chars().next();
                let lead = if at == 0 || before.ends_with("\n\n") {
                    ""
                } else if new_paragraph {
                    if before.ends_with('\n') {
                        "\n"
                    } else {
                        "\n\n"
                    }
                } else if before.ends_with(char::is_whitespace)
                    || text.starts_with([',', '.', ';', ':', '!', '?', '…', ')', '”', '’'])
                {
                    ""
                } else {
                    " "
                };
                let trail = match next {
                    Some(c) if !c.is_whitespace() && !text.ends_with(char::is_whitespace) => " ",
                    _ => "",
                };
                let full = format!("{lead}{text}{trail}");
                let change = ChangeSet::replace(len, at, at, &full)
                    .map_err(|e| ToolError::new("out_of_range", e.to_string()))?;
                let new_version = cx.edit(&id, change)?;
                cx.describe(description);
                let start = at + lead.chars().count();
                let (number, title) = info(cx.project(), &id);
                Ok(json!({
                    "chapter": id, "chapterNumber": number, "chapterTitle": title,
                    "start": start, "end": start + text_chars, "version": new_version,
                    "text": text, "rebased": rebased,
                }))
            }
        }
    }
}

fn info(project: &Project, id: &str) -> (usize, String) {
    let number = project.chapter_index(id).map_or(0, |i| i + 1);
    let title = project
        .chapter(id)
        .map(|c| c.title.clone())
        .unwrap_or_default();
    (number, title)
}
