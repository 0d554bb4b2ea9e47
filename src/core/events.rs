//! The events the core pushes to the page, declared once.
//!
//! [`events!`] below is the one list of event types, each with the Rust type of its payload.
//! From it come:
//! - [`CoreEvent`], an event with its typed payload: `Core::emit` takes one, and is the one
//!   place an event leaves the core (as `env::Event`, its payload turned into JSON there);
//! - [`EVENTS`], the event names;
//! - the `CoreEventMap` of the package's `protocol.d.ts` (each event's payload type by name),
//!   written by `requests::typescript` with the same ts-rs types.
//!
//! A payload type lives beside the part that sends it (`jobs.rs` has `JobProgressEvent`,
//! `run_state.rs` the `run` event's types); this file has the payloads of the events only
//! the dispatcher sends. Which pages hear an event depends on the project it concerns
//! ([`CoreEvent::concerns`]).

use serde::Serialize;
use serde_json::Value;
use ts_rs::{Config, TypeVisitor, TS};

use super::agents::AgentsChangedEvent;
use super::approvals::{ApprovalDecidedEvent, ApprovalsChangedEvent};
use super::jobs::{JobFinishedEvent, JobProgressEvent};
use super::local::ModelProgressEvent;
use super::mcp::McpServers;
use super::memory::MemoryChangedEvent;
use super::proactive::SuggestionEvent;
use super::research::ResearchChangedEvent;
use super::results::ProjectSummary;
use super::run_state::RunEvent;
use super::saving::{ProjectReloadedEvent, SavedEvent, StorageErrorEvent};
use super::sync::SyncStatus;
use crate::commands::Origin;
use crate::project::UiState;
use crate::settings::PublicSettings;

macro_rules! events {
    ($( $(#[doc = $doc:literal])* $variant:ident = $name:literal ($payload:ty), )*) => {
        /// An event of the core with its typed payload.
        // An event lives until it is turned into JSON; boxing the large payloads would buy
        // nothing.
        #[allow(clippy::large_enum_variant)]
        pub(super) enum CoreEvent {
            $( $(#[doc = $doc])* $variant($payload), )*
        }

        /// The event types the core emits, in the order `protocol.d.ts` lists them.
        pub const EVENTS: &[&str] = &[$($name),*];

        impl CoreEvent {
            /// The event's type, such as `edit`.
            pub(super) fn name(&self) -> &'static str {
                match self {
                    $( Self::$variant(_) => $name, )*
                }
            }

            /// The event's payload as JSON.
            pub(super) fn data(&self) -> Value {
                match self {
                    $( Self::$variant(payload) => crate::error::to_json(payload), )*
                }
            }
        }

        $(
            impl From<$payload> for CoreEvent {
                fn from(payload: $payload) -> Self {
                    Self::$variant(payload)
                }
            }
        )*

        /// Every event's name, its payload's TypeScript type and its doc lines.
        pub(super) fn declarations(cfg: &Config) -> Vec<(&'static str, String, &'static [&'static str])> {
            vec![$( ($name, <$payload as TS>::name(cfg), &[$($doc),*]), )*]
        }

        /// Visit every payload type (to declare it and the types it names).
        pub(super) fn visit_payloads(out: &mut impl TypeVisitor) {
            $( out.visit::<$payload>(); )*
            // Flattened into `RunEvent`, and declared by name too for code that reads them.
            out.visit::<super::run_state::SubAgentOrigin>();
            out.visit::<super::run_state::JobUnitOrigin>();
        }
    };
}

events! {
    /// A chapter changed (by the writer, an agent, undo or redo).
    Edit = "edit" (EditEvent),
    /// Editor UI state changed (a ui or navigation tool ran).
    Ui = "ui" (UiState),
    /// `run_analysis` produced a result (the writer's or an agent's): the page's Analysis panel shows it.
    Analysis = "analysis" (AnalysisEvent),
    /// The undo history changed.
    HistoryChanged = "history_changed" (HistoryChangedEvent),
    /// A change was stored.
    Saved = "saved" (SavedEvent),
    /// A change could not be stored; it is kept in memory and saved with the next change.
    StorageError = "storage_error" (StorageErrorEvent),
    /// Projects were created, renamed or deleted (here or, with `remote`, in another tab).
    ProjectsChanged = "projects_changed" (ProjectsChangedEvent),
    /// Another tab saved the open project; this is its new state.
    ProjectReloaded = "project_reloaded" (ProjectReloadedEvent),
    /// Another tab deleted a project that was open here.
    ProjectDeleted = "project_deleted" (ProjectDeletedEvent),
    /// An agent run's event (see `run()`, which filters them by run).
    Run = "run" (RunEvent),
    /// The settings changed.
    SettingsChanged = "settings_changed" (PublicSettings),
    /// A model running in the browser is being downloaded or loaded, is ready, or failed.
    ModelProgress = "model_progress" (ModelProgressEvent),
    /// An MCP server connected, failed, or listed other tools; or the server list changed.
    McpChanged = "mcp_changed" (McpServers),
    /// Chapters were added, renamed, moved or deleted.
    ChaptersChanged = "chapters_changed" (ProjectSummary),
    /// The agent's memory changed (`bedside`: its automatic update; `monitor`: an observation note).
    MemoryChanged = "memory_changed" (MemoryChangedEvent),
    /// A suggestion was added or updated (a pending one), or accepted or dismissed.
    Suggestion = "suggestion" (SuggestionEvent),
    /// A story-bible entity changed (by the writer, an agent or an import); `entity` is null once deleted.
    BibleChanged = "bible_changed" (BibleChangedEvent),
    /// A free file of the data/ view (under plans/ or notes/) was written or deleted.
    FilesChanged = "files_changed" (FilesChangedEvent),
    /// An agent of the project was defined (or replaced), or deleted (`defined: false`).
    AgentsChanged = "agents_changed" (AgentsChangedEvent),
    /// Approvals were requested (`requested`: the new card) or decided (`requested: null`).
    ApprovalsChanged = "approvals_changed" (ApprovalsChangedEvent),
    /// A waiting call was decided (here or in another tab).
    ApprovalDecided = "approval_decided" (ApprovalDecidedEvent),
    /// A job's or one of its units' state changed.
    JobProgress = "job_progress" (JobProgressEvent),
    /// A research note was added, updated (the same address read again) or deleted.
    ResearchChanged = "research_changed" (ResearchChangedEvent),
    /// A job ended: `done`, `failed` or `cancelled`.
    JobFinished = "job_finished" (JobFinishedEvent),
    /// A shared project's sync connection changed: its state, unsent updates or peers.
    SyncStatus = "sync_status" (SyncStatus),
    /// How far a long piece of work has come: opening a project, `run_analysis`.
    Progress = "progress" (ProgressEvent),
}

/// The project an event concerns, which decides the pages that hear it.
pub(super) enum Concerns<'a> {
    /// Every page (the project list, the settings, the memory, which holds global notes).
    EveryPage,
    /// The pages that show this project.
    Project(&'a str),
    /// The project open for the client whose request caused the event.
    OpenProject,
}

impl CoreEvent {
    /// The project the event concerns: the one its payload names, else the open one.
    pub(super) fn concerns(&self) -> Concerns<'_> {
        match self {
            Self::ProjectsChanged(_)
            | Self::SettingsChanged(_)
            | Self::MemoryChanged(_)
            | Self::ModelProgress(_)
            | Self::McpChanged(_) => Concerns::EveryPage,
            Self::ProjectDeleted(e) => Concerns::Project(&e.id),
            Self::Saved(e) => Concerns::Project(&e.project),
            Self::StorageError(e) => Concerns::Project(&e.project),
            Self::ProjectReloaded(e) => Concerns::Project(&e.project),
            Self::Suggestion(e) => Concerns::Project(&e.project),
            Self::BibleChanged(e) => Concerns::Project(&e.project),
            Self::FilesChanged(e) => Concerns::Project(&e.project),
            Self::AgentsChanged(e) => Concerns::Project(&e.project),
            Self::ApprovalsChanged(e) => Concerns::Project(&e.project),
            Self::ApprovalDecided(e) => Concerns::Project(&e.project),
            Self::JobProgress(e) => Concerns::Project(&e.project),
            Self::ResearchChanged(e) => Concerns::Project(&e.project),
            Self::JobFinished(e) => Concerns::Project(&e.project),
            Self::SyncStatus(e) => Concerns::Project(&e.project),
            Self::Analysis(e) => Concerns::Project(&e.project),
            Self::Progress(e) => Concerns::Project(&e.project),
            Self::Run(e) => e.project().map_or(Concerns::OpenProject, Concerns::Project),
            Self::Edit(_) | Self::Ui(_) | Self::HistoryChanged(_) | Self::ChaptersChanged(_) => {
                Concerns::OpenProject
            }
        }
    }
}

/// `edit`: a change applied to a chapter.
#[derive(Serialize, TS)]
pub(super) struct EditEvent {
    /// The chapter.
    pub(super) chapter: String,
    /// The change.
    #[ts(as = "Vec<crate::project::changeset::Op>")]
    pub(super) changeset: crate::project::changeset::ChangeSet,
    /// The chapter's version after it.
    pub(super) version: u64,
    /// Who made it.
    pub(super) origin: Origin,
    /// The tag the writer's change was sent with.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub(super) tag: Option<String>,
}

/// `progress`: how far a long piece of work on a project has come. It starts at `done: 0`
/// and ends at `done == total` (`stage: "done"`); the worker posts it to the page at once, even
/// while the work goes on.
#[derive(Serialize, TS)]
pub(super) struct ProgressEvent {
    /// The project.
    pub(super) project: String,
    /// The work: `open_project`, or the tool (`run_analysis`).
    pub(super) task: String,
    /// Steps done.
    pub(super) done: usize,
    /// Steps in all.
    pub(super) total: usize,
    /// The step under way (`done` at the end), such as `chapters` or `characters`.
    pub(super) stage: String,
}

impl ProgressEvent {
    pub(super) fn of(project: &str, task: &str, p: crate::session::Progress<'_>) -> Self {
        Self {
            project: project.to_string(),
            task: task.to_string(),
            done: p.done,
            total: p.total,
            stage: p.stage.to_string(),
        }
    }
}

/// `analysis`: a successful `run_analysis` call's result.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub(super) struct AnalysisEvent {
    /// The project analysed.
    pub(super) project: String,
    /// Who ran it (`user`, `agent:<name>`).
    pub(super) origin: Origin,
    /// When (ms since the epoch).
    pub(super) at_ms: u64,
    /// The result's data: `section` (`full`, or the one section), `scope`, the section
    /// reports, `suggestions`, and `interpretation` when the model read the figures.
    #[ts(type = "Record<string, unknown>")]
    pub(super) result: Value,
}

/// `history_changed`: what undo and redo can do now.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub(super) struct HistoryChangedEvent {
    /// Whether there is a group to undo.
    pub(super) can_undo: bool,
    /// Whether there is a group to redo.
    pub(super) can_redo: bool,
    /// How many groups can be undone.
    pub(super) groups: usize,
}

/// `projects_changed`: the project list changed.
#[derive(Serialize, TS)]
pub(super) struct ProjectsChangedEvent {
    /// The open project (absent when another tab without a writer lock relayed it).
    #[ts(optional = nullable)]
    pub(super) current: Option<String>,
}

/// `project_deleted`: a project open here was deleted in another tab.
#[derive(Serialize, TS)]
pub(super) struct ProjectDeletedEvent {
    /// The project.
    pub(super) id: String,
}

/// `bible_changed`: a story-bible entity changed.
#[derive(Serialize, TS)]
pub(super) struct BibleChangedEvent {
    /// The project.
    pub(super) project: String,
    /// The entity's kind.
    #[ts(type = "BibleKind")]
    pub(super) kind: crate::bible::Kind,
    /// The entity's id.
    pub(super) id: String,
    /// Who changed it.
    pub(super) origin: Origin,
    /// The entity, flat (its fields and their origins); `null` once deleted.
    #[ts(type = "BibleEntity | null")]
    pub(super) entity: Option<Value>,
}

/// `files_changed`: a free file of the `data/` view was written or deleted.
#[derive(Serialize, TS)]
#[ts(optional_fields)]
pub(super) struct FilesChangedEvent {
    /// The project.
    pub(super) project: String,
    /// The file's path.
    pub(super) path: String,
    /// Who changed it: `human`, `agent:<name>` or `import`.
    pub(super) origin: String,
    /// Its size in bytes (absent once deleted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) size: Option<usize>,
    /// When it was last written (ms since the epoch; absent once deleted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) mod_time: Option<u64>,
    /// True when it was deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) deleted: Option<bool>,
}
