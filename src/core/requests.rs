//! The requests the core serves, declared once.
//!
//! [`requests!`] below is the one list of request types. From it come:
//! - [`Call`], a request decoded with its typed parameters, which `Core::dispatch` matches
//!   exhaustively (a new request that dispatch does not serve does not compile);
//! - [`REQUESTS`], the capability list `hello` reports and the names "did you mean" picks from;
//! - [`typescript`], the package's `protocol.d.ts`: every request's name, parameter type and
//!   result type, generated from the same Rust types by ts-rs (`tests/protocol_types.rs` keeps
//!   the committed file equal to it), and every event's payload type (from `events.rs`).
//!
//! A request's result is the type its handler returns; [`Reply`] makes dispatch check it.

use std::any::TypeId;
use std::collections::BTreeSet;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::OnceLock;

use futures_util::FutureExt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use ts_rs::{Config, TypeVisitor, TS};

use crate::error::{Error, ProtocolError};

use super::results::{self, ProjectSummary};
use super::{
    agents, approvals, bible, chapters, events, jobs, local, mcp, memory, proactive, research, run,
    run_state, sync,
};

/// Parameters of a request that takes none. Whatever the page sends is ignored.
#[derive(Deserialize, TS)]
#[ts(rename = "NoParams")]
pub(super) struct NoParams {}

/// `debug_panic` params: the panic's message (a string; checked before panicking).
#[derive(Deserialize, TS)]
#[ts(rename = "DebugPanicParams", optional_fields)]
pub(super) struct DebugPanic {
    #[serde(default)]
    #[ts(type = "string", optional)]
    pub(super) message: Option<Value>,
}

/// Turns a handler's result into the response's JSON. A request's `Reply` takes exactly the
/// result type its declaration names, so the handler, the response and `protocol.d.ts` agree.
pub(super) struct Reply<R>(PhantomData<fn(R)>);

impl<R: Serialize> Reply<R> {
    /// The response's result (or error), as its JSON text: written once, straight from the
    /// typed result.
    pub(super) fn send(self, result: Result<R, Error>) -> Result<Box<RawValue>, Error> {
        let result = result?;
        // Only a map with keys that are not strings fails: said in the result, as a string.
        Ok(
            serde_json::value::to_raw_value(&result).unwrap_or_else(|e| {
                serde_json::value::to_raw_value(&e.to_string()).unwrap_or_default()
            }),
        )
    }

    /// [`Reply::send`] of what `handler` comes to, once it is done. The handler waits on the
    /// heap, so the request's future holds a pointer to it rather than room for the largest
    /// handler's.
    pub(super) fn wait<'a>(
        self,
        handler: impl Future<Output = Result<R, Error>> + 'a,
    ) -> impl Future<Output = Result<Box<RawValue>, Error>> + 'a
    where
        R: 'a,
    {
        let handler = handler.boxed_local();
        async move { self.send(handler.await) }
    }

    /// [`Reply::send`] for a result that is the same for the program's life (`hello`'s):
    /// written into `written` on the first call, copied from there after.
    pub(super) fn send_constant(
        self,
        written: &'static OnceLock<Box<RawValue>>,
        result: impl FnOnce() -> R,
    ) -> Result<Box<RawValue>, Error> {
        if let Some(text) = written.get() {
            return Ok(text.clone());
        }
        let text = self.send(Ok(result()))?;
        Ok(written.get_or_init(|| text).clone())
    }
}

macro_rules! requests {
    ($( $(#[doc = $doc:literal])* $variant:ident = $name:literal ($params:ty) -> $result:ty, )*) => {
        /// A request decoded with its typed parameters.
        // A call lives for one dispatch; boxing the large params would buy nothing.
        #[allow(clippy::large_enum_variant)]
        pub(super) enum Call {
            $( $(#[doc = $doc])* $variant($params, Reply<$result>), )*
        }

        /// The request types the core serves, in the order `hello` lists them.
        pub const REQUESTS: &[&str] = &[$($name),*];

        impl Call {
            /// Decode request `kind` with parameters `params` (a JSON object's text, decoded
            /// straight into the typed parameters). An unknown name gets `unknown_request` with
            /// the closest known one; parameters of the wrong shape get `invalid_params`.
            pub(super) fn decode(kind: &str, params: &RawValue) -> Result<Call, Error> {
                match kind {
                    $( $name => Ok(Call::$variant(decode_params(kind, params)?, Reply(PhantomData))), )*
                    other => Err(ProtocolError::UnknownRequest {
                        name: other.to_string(),
                        hint: crate::names::did_you_mean(other, REQUESTS.iter().copied()),
                    }
                    .into()),
                }
            }
        }

        /// Every request's name with its parameters' and result's TypeScript types, and the
        /// declarations of the types those name.
        fn declare(cfg: &Config, out: &mut Declarations) {
            $(
                out.request(
                    $name,
                    &<$params as TS>::name(cfg),
                    &<$result as TS>::name(cfg),
                    &[$($doc),*],
                );
                out.visit::<$params>();
                out.visit::<$result>();
            )*
        }
    };
}

requests! {
    /// Who we are: name, version, build profile, protocol version and these capabilities.
    Hello = "hello" (NoParams) -> results::Hello,
    /// Create a project (with chapters) and make it the open one.
    CreateProject = "create_project" (super::CreateProject) -> ProjectSummary,
    /// Make an existing project the open one.
    OpenProject = "open_project" (super::OpenProject) -> ProjectSummary,
    /// Every stored project, most recently changed first.
    ListProjects = "list_projects" (NoParams) -> results::ProjectList,
    /// Rename a project (the open one by default).
    RenameProject = "rename_project" (super::RenameProject) -> ProjectSummary,
    /// Delete a project and everything in it.
    DeleteProject = "delete_project" (super::OpenProject) -> results::Deleted,
    /// The project as one JSON document.
    ExportProject = "export_project" (super::ProjectRef) -> crate::persist::ExportDocument,
    /// Import an exported document as a new project.
    ImportProject = "import_project" (super::ImportProject) -> ProjectSummary,
    /// The manuscript as Markdown.
    ExportMarkdown = "export_markdown" (super::ProjectRef) -> results::Markdown,
    /// Read a project again from the store (another writer changed it).
    ReloadProject = "reload_project" (super::OpenProject) -> results::Reloaded,
    /// Save each changed chapter's whole text and the lazily saved state.
    Checkpoint = "checkpoint" (super::ProjectRef) -> results::Checkpointed,
    /// Share the open project through a sync server, or, with `project`, fetch one that exists only there and open it.
    SyncConnect = "sync_connect" (sync::SyncConnect) -> sync::SyncStatus,
    /// Stop sharing a project (it stays here as it is).
    SyncDisconnect = "sync_disconnect" (sync::SyncProject) -> sync::SyncStatus,
    /// How a project's sync connection stands.
    SyncStatus = "sync_status" (sync::SyncProject) -> sync::SyncStatus,
    /// The device lost or regained its network: links drop their connections or reconnect.
    SyncNetwork = "sync_network" (sync::SyncNetwork) -> Vec<sync::SyncStatus>,
    /// The agent's memory: notes, goals, watched entities.
    Memory = "memory" (NoParams) -> results::MemoryView,
    /// The memory block a run's prompt would get for a request.
    MemoryContext = "memory_context" (super::MemoryContext) -> results::MemoryBlock,
    /// The editor-context block a run's prompt gets: the project, the active chapter, the
    /// cursor, the selection and the paragraph at the cursor, the bible and the toolset.
    EditorContext = "editor_context" (super::EditorContext) -> results::EditorBlock,
    /// Write notes as the writer.
    WriteMemoryNotes = "write_memory_notes" (memory::WriteNotes) -> results::Written,
    /// The deleted notes that can still be restored.
    MemoryTrash = "memory_trash" (NoParams) -> memory::Trash,
    /// Bring a deleted note back.
    MemoryRestore = "memory_restore" (memory::MemoryRestore) -> memory::Restored,
    /// The proactive memory's suggestions.
    Suggestions = "suggestions" (proactive::ListSuggestions) -> proactive::SuggestionList,
    /// A pending suggestion becomes a goal or a note.
    AcceptSuggestion = "accept_suggestion" (proactive::SuggestionRef) -> proactive::Accepted,
    /// Set a pending suggestion aside.
    DismissSuggestion = "dismiss_suggestion" (proactive::SuggestionRef) -> proactive::Dismissed,
    /// The writer stopped typing: the idle thinker may think.
    WriterIdle = "writer_idle" (proactive::WriterIdle) -> proactive::IdleResult,
    /// Storage use and quota.
    StorageEstimate = "storage_estimate" (NoParams) -> results::StorageEstimate,
    /// The model files the browser keeps for the local provider.
    LocalModels = "local_models" (NoParams) -> local::LocalModels,
    /// Download (unless kept) and load the local model the settings name.
    LoadLocalModel = "load_local_model" (NoParams) -> crate::llm::local::LocalInfo,
    /// Delete a kept model file.
    DeleteLocalModel = "delete_local_model" (local::DeleteLocalModel) -> local::LocalModelDeleted,
    /// The MCP servers the settings list: their connection and tools.
    McpServers = "mcp_servers" (NoParams) -> mcp::McpServers,
    /// Connect an MCP server again and list its tools anew.
    McpConnect = "mcp_connect" (mcp::McpConnect) -> mcp::McpServers,
    /// A chapter's text, or its changes since a version.
    GetChapter = "get_chapter" (super::GetChapter) -> results::ChapterText,
    /// Add a chapter.
    AddChapter = "add_chapter" (chapters::AddChapter) -> results::ChapterInProject,
    /// Rename a chapter.
    RenameChapter = "rename_chapter" (chapters::RenameChapter) -> results::ChapterInProject,
    /// Move a chapter to a position.
    MoveChapter = "move_chapter" (chapters::MoveChapter) -> results::ChapterInProject,
    /// Delete a chapter (never the last one).
    DeleteChapter = "delete_chapter" (chapters::DeleteChapter) -> results::DeletedChapter,
    /// Run one tool call.
    Execute = "execute" (super::Execute) -> crate::tools::ToolResult,
    /// The writer's change, made on a chapter version.
    ApplyUserChange = "apply_user_change" (super::UserChange) -> results::UserChangeResult,
    /// Undo the newest group (of an origin).
    Undo = "undo" (super::Undo) -> results::HistoryMove,
    /// Redo the last undone group.
    Redo = "redo" (NoParams) -> results::HistoryMove,
    /// End the open undo group.
    CloseGroup = "close_group" (NoParams) -> results::Done,
    /// The undo history, newest first.
    History = "history" (NoParams) -> results::HistoryList,
    /// The tool catalog in a provider's format, or neutral definitions.
    ListTools = "list_tools" (super::ListTools) -> results::ToolList,
    /// The model settings.
    GetSettings = "get_settings" (NoParams) -> crate::settings::PublicSettings,
    /// Change the model settings.
    SetSettings = "set_settings" (crate::settings::SettingsPatch) -> crate::settings::PublicSettings,
    /// Start an agent run on the open project.
    Run = "run" (run::RunParams) -> run_state::RunResult,
    /// Abort a run.
    AbortRun = "abort_run" (run::AbortParams) -> run::RunsAborted,
    /// Start a background job.
    StartJob = "start_job" (jobs::StartJob) -> jobs::JobView,
    /// A job with its units.
    JobStatus = "job_status" (jobs::JobRef) -> jobs::JobView,
    /// The open project's jobs.
    ListJobs = "list_jobs" (NoParams) -> jobs::JobList,
    /// Pause a job.
    PauseJob = "pause_job" (jobs::JobRef) -> jobs::JobView,
    /// Resume a paused job.
    ResumeJob = "resume_job" (jobs::JobRef) -> jobs::JobView,
    /// Cancel a job.
    CancelJob = "cancel_job" (jobs::JobRef) -> jobs::JobView,
    /// A job's unit and its transcript.
    JobUnit = "job_unit" (jobs::UnitRef) -> jobs::UnitDetail,
    /// The open project's research notes.
    ResearchList = "research_list" (NoParams) -> research::ResearchList,
    /// Delete a research note.
    ResearchDelete = "research_delete" (research::DeleteResearch) -> research::ResearchDeleted,
    /// Define or replace an agent of the open project.
    DefineAgent = "define_agent" (agents::DefineAgent) -> agents::AgentDefined,
    /// The presets and every agent.
    ListAgents = "list_agents" (NoParams) -> agents::AgentList,
    /// Delete an agent the open project defined.
    DeleteAgent = "delete_agent" (agents::DeleteAgent) -> agents::AgentDeleted,
    /// Calls waiting for the writer's approval.
    ListApprovals = "list_approvals" (approvals::ListApprovals) -> approvals::ApprovalList,
    /// Decide a call waiting for approval.
    Approve = "approve" (approvals::ApproveParams) -> approvals::ApprovalResult,
    /// The story bible's entities.
    BibleList = "bible_list" (bible::BibleList) -> bible::Listing,
    /// Create or update a story-bible entity as the writer.
    BibleSave = "bible_save" (bible::BibleSave) -> crate::bible::flat::FlatEntity,
    /// The writes of a story-bible entity's fields (from every device), newest first.
    BibleRevisions = "bible_revisions" (bible::BibleRevisions) -> bible::Revisions,
    /// Delete a story-bible entity.
    BibleDelete = "bible_delete" (bible::BibleDelete) -> bible::Deleted,
    /// Panic inside the core (tests of the worker's recovery).
    DebugPanic = "debug_panic" (DebugPanic) -> results::Never,
    /// Make the next saves fail (tests of failed saves).
    DebugFailSaves = "debug_fail_saves" (super::FailSaves) -> results::FailingSaves,
}

/// A request's parameters, decoded into their type.
fn decode_params<T: DeserializeOwned>(request: &str, params: &RawValue) -> Result<T, Error> {
    serde_json::from_str(params.get()).map_err(|err| params_error(request, err))
}

/// [`decode_params`]' error (one copy for every params type).
#[inline(never)]
fn params_error(request: &str, err: serde_json::Error) -> Error {
    ProtocolError::InvalidParams {
        request: request.to_string(),
        reason: err.to_string(),
    }
    .into()
}

/// The TypeScript declarations of the protocol: the requests' `RequestType`, `RequestParams`
/// (each request's parameters by name) and `RequestResults`, the events' `CoreEventMap` (each
/// event's payload by name), and every type they name. This is the text of the package's
/// `protocol.d.ts`.
pub fn typescript() -> String {
    // JS numbers: the core's u64 values (versions, times in ms) stay below 2^53.
    let cfg = Config::new().with_large_int("number");
    let mut out = Declarations {
        cfg: &cfg,
        seen: BTreeSet::new(),
        requests: Vec::new(),
        events: Vec::new(),
        types: Vec::new(),
    };
    declare(&cfg, &mut out);
    for (name, payload, doc) in events::declarations(&cfg) {
        out.event(name, &payload, doc);
    }
    events::visit_payloads(&mut out);
    let mut text = String::from(
        "// Generated from src/core/requests.rs and src/core/events.rs by ts-rs; do not edit.\n\
         // Regenerate: DRAFTSMITH_WRITE_TS=1 cargo test --test protocol_types\n\n",
    );
    text.push_str("/** The request types the core serves. */\n");
    text.push_str("export type RequestType =\n");
    for (name, _, _, _) in &out.requests {
        text.push_str(&format!("  | '{name}'\n"));
    }
    text.push_str(";\n\n/** Each request's parameters, by request type. */\n");
    text.push_str("export interface RequestParams {\n");
    for (name, params, _, doc) in &out.requests {
        if !doc.is_empty() {
            text.push_str(&format!("  /** {doc} */\n"));
        }
        text.push_str(&format!("  {name}: {params};\n"));
    }
    text.push_str("}\n\n/** Each request's result, by request type. */\n");
    text.push_str("export interface RequestResults {\n");
    for (name, _, result, _) in &out.requests {
        text.push_str(&format!("  {name}: {result};\n"));
    }
    text.push_str("}\n\n");
    text.push_str(
        "/** What the worker adds to an event caused by another tab's request: `remote: true`. */\n\
         export interface Relayed {\n  remote?: boolean;\n}\n\n",
    );
    text.push_str("/** The events the core pushes, by type: each one's payload. */\n");
    text.push_str("export interface CoreEventMap {\n");
    for (name, payload, doc) in &out.events {
        if !doc.is_empty() {
            text.push_str(&format!("  /** {doc} */\n"));
        }
        text.push_str(&format!("  {name}: {payload} & Relayed;\n"));
    }
    text.push_str("}\n");
    out.types.sort();
    for (_, decl) in &out.types {
        text.push('\n');
        text.push_str("export ");
        text.push_str(decl);
        text.push('\n');
    }
    text
}

/// What [`typescript`] collects: the requests and the events in order, and each named type
/// once.
struct Declarations<'a> {
    cfg: &'a Config,
    seen: BTreeSet<TypeId>,
    requests: Vec<(&'static str, String, String, String)>,
    events: Vec<(&'static str, String, String)>,
    types: Vec<(String, String)>,
}

impl Declarations<'_> {
    fn event(&mut self, name: &'static str, payload: &str, doc: &[&str]) {
        self.events.push((name, payload.to_string(), one_line(doc)));
    }

    fn request(&mut self, name: &'static str, params: &str, result: &str, doc: &[&str]) {
        self.requests
            .push((name, params.to_string(), result.to_string(), one_line(doc)));
    }
}

/// A doc comment's lines as one line.
fn one_line(doc: &[&str]) -> String {
    doc.iter()
        .map(|line| line.trim())
        .collect::<Vec<_>>()
        .join(" ")
}

impl TypeVisitor for Declarations<'_> {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        if !self.seen.insert(TypeId::of::<T>()) {
            return;
        }
        // Types declared inline (primitives, arrays, maps, `JsonValue`'s parts) have no output
        // path; each declared type is written once, with the types it names.
        // (`serde_json::Value` and ts-rs's own `JsonValue` are two Rust types of one name.)
        if T::output_path().is_some() {
            let name = T::ident(self.cfg);
            if self.types.iter().all(|(known, _)| *known != name) {
                let decl = T::decl_concrete(self.cfg);
                self.types.push((name, decl));
            }
        }
        T::visit_dependencies(self);
    }
}
