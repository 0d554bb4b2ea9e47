//! The results of requests, as types: what a handler returns and the page receives. Each
//! request names its result type in `requests.rs`; the package's `protocol.d.ts` declares the
//! same types for TypeScript.

use serde::Serialize;
use ts_rs::TS;

use crate::commands::history::EntryKind;
use crate::commands::{Entry, Origin};
use crate::memory::{Goal, MemoryNote, WatchedEntity};
use crate::project::{Project, UiState};

/// `hello`: who we are and what we serve.
#[derive(Serialize, TS)]
pub struct Hello {
    /// Always `draftsmith`.
    #[ts(type = "'draftsmith'")]
    pub name: &'static str,
    /// The crate's version.
    pub version: &'static str,
    /// The build profile.
    pub profile: Profile,
    /// The protocol's version.
    pub protocol: u32,
    /// The request types the core serves.
    pub capabilities: &'static [&'static str],
}

/// Which build the core is.
#[derive(Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// A debug build.
    Debug,
    /// A release build.
    Release,
}

/// `list_projects`: every stored project, most recently changed first.
#[derive(Serialize, TS)]
pub struct ProjectList {
    /// The projects.
    pub projects: Vec<ProjectListing>,
    /// This client's open project.
    pub current: Option<String>,
}

/// One stored project.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProjectListing {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// How many chapters it has.
    pub chapters: usize,
    /// When it was created (ms since the epoch).
    pub created_ms: u64,
    /// When it last changed (ms since the epoch).
    pub updated_ms: u64,
}

/// An open project: its chapters and editor state.
#[derive(Serialize, TS)]
#[ts(optional_fields)]
pub struct ProjectSummary {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its chapters, in order.
    pub chapters: Vec<ChapterSummary>,
    /// The editor's state.
    pub ui: UiState,
    /// What was damaged in its stored data and could not be read (only when something was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problems: Option<Vec<String>>,
}

impl ProjectSummary {
    /// The summary of `project`.
    pub fn of(project: &Project) -> Self {
        Self {
            id: project.id.clone(),
            name: project.name.clone(),
            chapters: project
                .chapters
                .iter()
                .enumerate()
                .map(|(i, c)| ChapterSummary {
                    id: c.id.clone(),
                    title: c.title.clone(),
                    number: i + 1,
                    version: c.version(),
                    length: c.len_chars(),
                })
                .collect(),
            ui: project.ui.clone(),
            problems: None,
        }
    }
}

/// One chapter of a project summary.
#[derive(Clone, Serialize, TS)]
pub struct ChapterSummary {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its position, from 1.
    pub number: usize,
    /// Its version (one more per change).
    pub version: u64,
    /// Its length in chars.
    pub length: usize,
}

/// `delete_project`, `research_delete`, `delete_agent`: what was deleted.
#[derive(Serialize, TS)]
pub struct Deleted {
    /// The id (or name) of what was deleted.
    pub deleted: String,
}

/// `export_markdown`: the manuscript as Markdown.
#[derive(Serialize, TS)]
pub struct Markdown {
    /// The Markdown text.
    pub markdown: String,
}

/// `reload_project`: whether the project was read again.
#[derive(Serialize, TS)]
#[ts(optional_fields)]
pub struct Reloaded {
    /// Read again from the store (or found deleted there).
    pub reloaded: bool,
    /// Not read again: this core has work that could not be saved first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsaved: Option<bool>,
}

/// `checkpoint`: the chapters checkpointed, and whether the save committed.
#[derive(Serialize, TS)]
#[ts(rename = "CheckpointResult")]
pub struct Checkpointed {
    /// The ids of the chapters whose whole text was written.
    pub checkpointed: Vec<String>,
    /// `false` after a failed save (also a `storage_error` event; it stays pending).
    pub saved: bool,
}

/// `storage_estimate`: storage use and quota in bytes (`null` where the browser does not say).
#[derive(Serialize, TS)]
pub struct StorageEstimate {
    /// Bytes used.
    pub usage: Option<u64>,
    /// Bytes available in all.
    pub quota: Option<u64>,
    /// Bytes of the model files kept for the local provider (counted in `usage` too;
    /// `null` where this core runs no models in the browser).
    pub models: Option<u64>,
}

/// `get_chapter`: a chapter's text and version.
#[derive(Serialize, TS)]
#[ts(optional_fields)]
pub struct ChapterText {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its position, from 1.
    pub number: usize,
    /// Its whole text.
    pub text: String,
    /// Its version.
    pub version: u64,
    /// With `since`: the changes after that version, oldest first; `null` when the change
    /// feed no longer holds all of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Option<Vec<ChapterChange>>>,
}

/// One applied change of a chapter.
#[derive(Serialize, TS)]
#[ts(optional_fields)]
pub struct ChapterChange {
    /// The chapter's version after it.
    pub version: u64,
    /// The change.
    #[ts(as = "Vec<crate::project::changeset::Op>")]
    pub changeset: crate::project::changeset::ChangeSet,
    /// Who made it (`user`, `import`, `agent:<name>`).
    pub origin: String,
    /// The page's label for it, when the page sent one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

/// `history`: the undo history, newest first.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HistoryList {
    /// The entries that can be undone, newest first.
    pub entries: Vec<HistoryEntry>,
    /// The entries that can be redone, the next one first.
    pub redo: Vec<HistoryEntry>,
    /// Whether there is anything to undo.
    pub can_undo: bool,
    /// Whether there is anything to redo.
    pub can_redo: bool,
    /// The history's size in memory, in bytes.
    pub memory_bytes: usize,
}

/// One entry of the undo history.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    /// Its id.
    pub id: String,
    /// The group it is undone with.
    pub group: String,
    /// Who made it.
    pub origin: Origin,
    /// What it did, for a person.
    pub description: String,
    /// When (ms since the epoch).
    pub timestamp: u64,
    /// The tool call that made it.
    pub tool_call_id: Option<String>,
    /// The command (tool) that made it.
    pub command: Option<String>,
    /// An edit, a revert or a restore.
    pub kind: EntryKind,
    /// Whether a later entry reverted it.
    pub reverted: bool,
    /// The free files it wrote (paths).
    pub files: Vec<String>,
}

impl HistoryEntry {
    /// The entry as the page sees it.
    pub fn of(e: &Entry) -> Self {
        Self {
            id: e.id.clone(),
            group: e.group.clone(),
            origin: e.origin.clone(),
            description: e.description.clone(),
            timestamp: e.timestamp_ms,
            tool_call_id: e.tool_call_id.clone(),
            command: e.command.clone(),
            kind: e.kind.clone(),
            reverted: e.reverted_by.is_some(),
            files: e.files.iter().map(|f| f.path.clone()).collect(),
        }
    }
}

/// `memory`: what the memory panel shows.
#[derive(Serialize, TS)]
pub struct MemoryView {
    /// The bedside note.
    pub bedside: Option<MemoryNote>,
    /// The project's goals.
    pub goals: Vec<Goal>,
    /// The entities the monitor watches.
    pub watched: Vec<WatchedEntity>,
    /// The notes visible from the project, newest first (without the bedside note).
    pub notes: Vec<MemoryNote>,
}

/// `memory_context`: the memory block a run's prompt would get.
#[derive(Serialize, TS)]
pub struct MemoryBlock {
    /// The block's text.
    pub block: String,
}

/// `editor_context`: the editor-context block a run's prompt gets.
#[derive(Serialize, TS)]
pub struct EditorBlock {
    /// The block's text.
    pub block: String,
}

/// `write_memory_notes`: the ids of the notes written.
#[derive(Serialize, TS)]
pub struct Written {
    /// Their ids, in the order given.
    pub written: Vec<String>,
}

/// `close_group`: an acknowledgement.
#[derive(Serialize, TS)]
pub struct Done {}

/// `add_chapter`, `rename_chapter`, `move_chapter`: the chapter, and the project it is in.
#[derive(Serialize, TS)]
pub struct ChapterInProject {
    /// The chapter.
    #[serde(flatten)]
    pub chapter: ChapterSummary,
    /// The project, after the change.
    pub project: ProjectSummary,
}

impl ChapterInProject {
    /// The chapter at `index` of `project` (where the request found or put it, so always a
    /// position of its chapter list), with the project's summary.
    pub fn of(project: &Project, index: usize) -> Self {
        let summary = ProjectSummary::of(project);
        Self {
            chapter: summary.chapters[index].clone(),
            project: summary,
        }
    }
}

/// `delete_chapter`: the deleted chapter's text, what its history lost, and the project.
#[derive(Serialize, TS)]
pub struct DeletedChapter {
    /// The chapter as it was.
    pub deleted: ChapterRemoved,
    /// What the history forgot with it.
    pub history: HistoryForgot,
    /// The project, after the change.
    pub project: ProjectSummary,
}

/// A deleted chapter.
#[derive(Serialize, TS)]
pub struct ChapterRemoved {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The position it had, from 1.
    pub number: usize,
    /// Its whole text.
    pub text: String,
}

/// What the history forgot with a deleted chapter.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HistoryForgot {
    /// Entries that only changed that chapter, dropped.
    pub dropped: usize,
    /// Entries that also changed others, trimmed to those.
    pub trimmed: usize,
    /// Whether there is anything to undo.
    pub can_undo: bool,
    /// Whether there is anything to redo.
    pub can_redo: bool,
}

/// One chapter change that undo, redo or the writer applied.
#[derive(Serialize, TS)]
pub struct AppliedChange {
    /// The chapter.
    pub chapter: String,
    /// The change.
    #[ts(as = "Vec<crate::project::changeset::Op>")]
    pub changeset: crate::project::changeset::ChangeSet,
    /// The chapter's version after it.
    pub version: u64,
}

/// `apply_user_change`: the writer's change as applied.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "UserChangeResult", optional_fields)]
pub struct UserChangeResult {
    /// The change as applied.
    #[serde(flatten)]
    pub applied: AppliedChange,
    /// Whether it was rebased over newer changes.
    pub rebased: bool,
    /// The page's label for it, when the page sent one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// The change with this tag had been applied already (sent again): nothing changed now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate: Option<bool>,
}

/// `undo`, `redo`: the chapter changes applied, the free files put back (written or removed),
/// and the free files left as a later write made them (`filesKept`, explained in `note`).
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct HistoryMove {
    /// The chapter changes applied.
    pub applied: Vec<AppliedChange>,
    /// The free files put back.
    pub files: Vec<String>,
    /// The free files a later write changed, kept as it made them.
    pub files_kept: Vec<String>,
    /// Why files were kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Whether there is anything to undo.
    pub can_undo: bool,
    /// Whether there is anything to redo.
    pub can_redo: bool,
}

/// `list_tools`: a toolset's tool definitions, or its catalog in a provider's format.
#[derive(Serialize, TS)]
#[serde(untagged)]
pub enum ToolList {
    /// Without a format (or `neutral`): the definitions as the core keeps them.
    Neutral {
        /// The toolset's tools, in registration order.
        tools: Vec<crate::tools::ToolDefinition>,
    },
    /// With a provider's format: the catalog as that provider's API takes it.
    Catalog(serde_json::Value),
}

/// `debug_fail_saves`: how many of the next saves fail.
#[derive(Serialize, TS)]
pub struct FailingSaves {
    /// The number of saves that fail (0: none).
    pub failing: u64,
}

/// The result of a request that never answers (`debug_panic` panics).
#[derive(Serialize, TS)]
pub enum Never {}
