//! [`Core`]: serves decoded requests from the page.
//!
//! The core is the only place that knows which request types exist; the worker entry in
//! `src/web/` only moves JSON text in and out. The requests are declared once, in
//! `requests.rs`: their names ([`REQUESTS`], `hello`'s capability list), their typed
//! parameters, and the package's generated TypeScript declarations ([`typescript`]).
//!
//! Open projects are cached in memory; the [`Store`] is the source of truth. Every mutation
//! goes through the open project's [`Session`], borrowed mutably for the length of one
//! synchronous operation (the one exclusive edit path), marks what it changed as pending, and
//! is then saved (`saving.rs`): the state change, its history records and its audit record
//! commit together or not at all. If a save fails (a full quota, say), the in-memory state
//! stays, the page gets a `storage_error` event, and everything the failed save held stays
//! pending until a later save that includes it commits.
//!
//! The state every client shares is split into parts (`core/parts/`): open projects, runs,
//! approvals, jobs, agents, research, proactive memory, settings, the model client and fault
//! injection. Each part owns its cells and changes them only through its own methods; the
//! handlers here and in the sibling files call those methods, and no part reaches into
//! another. What runs, run trees, approvals and jobs share lives below them in `run_state.rs`.
//! The records a change puts in the store's `meta` table are typed in `records.rs`.

mod agents;
mod approvals;
mod bible;
mod chapters;
mod events;
mod generate;
mod jobs;
mod local;
mod mcp;
mod memory;
pub mod mtl;
mod parts;
mod proactive;
mod records;
mod requests;
mod research;
mod results;
mod run;
mod run_state;
mod saving;
mod sync;
mod tree;

use std::cell::RefCell;
use std::rc::Rc;

use futures_util::FutureExt;

use serde::Deserialize;
use serde_json::json;
use serde_json::Value;
use ts_rs::TS;

use crate::commands::history::Applied;
use crate::commands::{Moved, Origin, OriginFilter};
use crate::env::{Clock, EventSink, IdSource, TextDecoding};
use crate::error::{Error, ProtocolError};
use crate::llm::client::{LlmTransport, Sleeper};
use crate::persist::pending::{Append, Include, Key};
use crate::persist::{self, AuditRecord};
use crate::project::changeset::ChangeSet;
use crate::project::{Chapter, Project};
use crate::protocol::{
    decode_request, ErrorBody, Event, Request, RequestId, Response, PROTOCOL_VERSION,
};
use crate::replica::Replica;
use crate::session::{Session, ToolCall};
use crate::store::{Store, Table};
use crate::tools::{CatalogFormat, ToolRegistry, ToolResult};
pub use events::EVENTS;
use events::{
    BibleChangedEvent, Concerns, CoreEvent, EditEvent, FilesChangedEvent, HistoryChangedEvent,
    ProjectDeletedEvent, ProjectsChangedEvent,
};
use memory::MemoryChangedEvent;
pub use parts::{FailSwitch, Llm, Spawner};
use records::MetaRecord;
use requests::Call;
pub use requests::{typescript, REQUESTS};
use results::ProjectSummary;
use saving::Open;
use saving::ProjectReloadedEvent;
pub use saving::FEED_LEN;

/// Tools whose calls are not audited when they edit nothing: cursor and selection moves.
const UNAUDITED: &[&str] = &["set_selection"];

/// What the core needs from the outside world.
pub struct Env {
    /// Wall-clock time.
    pub clock: Rc<dyn Clock>,
    /// Unique ids.
    pub ids: Rc<dyn IdSource>,
    /// Decodes the bytes of research pages written in encodings other than UTF-8.
    pub decoder: Rc<dyn TextDecoding>,
    /// Where events go.
    pub events: Rc<dyn EventSink>,
    /// Where projects are kept.
    pub store: Rc<dyn Store>,
}

/// The function an answer known before its save goes to, with the request's text (see
/// [`Core::handle_text_ahead`]).
type Ahead<'a> = Option<(&'a dyn Fn(&str), &'a str)>;

/// A mutation's value, its save still to be made (see [`Core::answer_then_save`]).
struct Unsaved<'a, T> {
    value: T,
    /// The project to save, with the mutation's events held until the save is placed; `None`
    /// when nothing changed.
    save: Option<(String, parts::Hold<'a>)>,
}

impl<T> Unsaved<'_, T> {
    /// A value that needs no save.
    fn saved(value: T) -> Self {
        Self { value, save: None }
    }
}

/// What a mutation touched, for its save.
#[derive(Default)]
struct Touched {
    /// The project record changed (its name or chapter list).
    project: bool,
    /// The UI state may have changed (saved at once only when its essentials did: see
    /// [`saving::ui_essentials`]).
    ui: bool,
    chapters: Vec<String>,
    /// Chapters deleted (their records are deleted).
    deleted_chapters: Vec<String>,
    /// The chapter changes applied (for the change feed and their records).
    changes: Vec<persist::ChangeRecord>,
    audit: Option<AuditRecord>,
    /// Memory items changed (saved, or deleted when gone).
    memory: Vec<crate::memory::Changed>,
    /// Notes written in bulk (saved as they are).
    notes_written: Vec<String>,
    /// Notes written in bulk whose records the request saves itself (mirrored, not marked
    /// pending: see [`Core::write_memory_notes`]).
    notes_streamed: Vec<String>,
    /// Story-bible entities changed (saved, or deleted when gone).
    bible: Vec<(crate::bible::Kind, String)>,
    /// Free files of the `data/` view changed (saved, or deleted when gone).
    files: Vec<String>,
    /// Meta records to put with the change (approval records, job records, research notes).
    meta_puts: Vec<MetaRecord>,
    /// Meta records to delete with the change (research notes), by key.
    meta_deletes: Vec<String>,
    /// A job unit's hold to release into this save (its writes go with its progress mark).
    release: Option<String>,
    /// The update from another device this change applied: stored as it came, not mirrored
    /// back into the project's document.
    remote: Option<Vec<u8>>,
}

impl Touched {
    /// Whether its mirroring into the document may wait ([`Open::defer_mirror`]): not an
    /// update from another device (kept as it came), nor changes to the story bible (whose
    /// field log records each write with the value it had, which a later mirroring would
    /// take from a later state).
    fn deferrable(&self) -> bool {
        self.remote.is_none() && self.bible.is_empty()
    }

    /// What [`mirror`] reads of it, for a caller that marks the rest pending now and mirrors
    /// later (see [`Core::mutate_on`]).
    fn to_mirror(&self) -> Touched {
        Touched {
            project: self.project,
            chapters: self.chapters.clone(),
            deleted_chapters: self.deleted_chapters.clone(),
            changes: self.changes.clone(),
            memory: self.memory.clone(),
            notes_written: self.notes_written.clone(),
            notes_streamed: self.notes_streamed.clone(),
            bible: self.bible.clone(),
            files: self.files.clone(),
            ..Touched::default()
        }
    }
}

/// Mirror what a mutation touched into the project's Yjs document (or, for an update from
/// another device, keep that update), after what earlier mutations left to be mirrored
/// later: the update is saved (deferred, if made here: see [`crate::persist::pending`]), and
/// sent once saved.
fn mirror(open: &mut Open, touched: &mut Touched, ids: &dyn IdSource) {
    open.mirror_deferred(ids);
    mirror_now(open, touched, ids);
}

/// [`mirror`], with nothing left to be mirrored before it.
fn mirror_now(open: &mut Open, touched: &mut Touched, ids: &dyn IdSource) {
    let project = open.session.project.id.clone();
    let append = match touched.remote.take() {
        Some(update) => Append::Remote(persist::SyncRecord::new(&project, &update, ids)),
        None => {
            let origin = touched
                .changes
                .first()
                .map_or("local", |c| c.origin.as_str())
                .to_string();
            let mut memory = touched.memory.clone();
            memory.extend(
                (touched.notes_written.iter())
                    .chain(&touched.notes_streamed)
                    .map(|id| crate::memory::Changed::Note(id.clone())),
            );
            let bible = touched.bible.clone();
            let local = crate::replica::Local {
                texts: touched
                    .changes
                    .iter()
                    .map(|c| (c.chapter.as_str(), &c.changeset))
                    .collect(),
                project: touched.project
                    || !touched.chapters.is_empty()
                    || !touched.deleted_chapters.is_empty(),
                bible: &bible,
                files: &touched.files,
                memory: &memory,
            };
            let Some(update) = open
                .replica
                .record_local(&open.session, &project, &origin, &local)
            else {
                return;
            };
            let record = persist::SyncRecord::new(&project, &update, ids);
            open.queue(update);
            Append::Sync(record)
        }
    };
    open.pending.append(append);
}

/// [`mark_touched`], under `hold` if given: what the mutation touched then waits under the
/// hold instead of being pending now.
fn mark_held(open: &mut Open, touched: Touched, hold: Option<&str>, ids: &dyn IdSource) {
    match hold {
        None => mark_touched(open, touched, ids),
        Some(hold) => {
            let pending = std::mem::take(&mut open.pending);
            mark_touched(open, touched, ids);
            let marked = std::mem::replace(&mut open.pending, pending);
            open.pending.hold(hold, marked);
        }
    }
}

/// Mark what a mutation touched as pending for the project's next save, with the update of
/// the project's document that mirrors it.
fn mark_touched(open: &mut Open, mut touched: Touched, ids: &dyn IdSource) {
    mirror(open, &mut touched, ids);
    mark_pending(open, touched);
}

/// [`mark_touched`] without the update of the project's document: for a caller that makes it
/// later ([`Open::defer_mirror`]).
fn mark_pending(open: &mut Open, touched: Touched) {
    open.record_changes(&touched.changes);
    for change in touched.changes {
        let due = open
            .session
            .project
            .chapter(&change.chapter)
            .is_some_and(|c| {
                open.stored
                    .checkpoint_due(&change.chapter, c.version(), c.text().len_chars())
                    && !open.pending.has(&Key::Chapter(change.chapter.clone()))
            });
        if due {
            open.pending.mark(Key::Chapter(change.chapter.clone()));
        }
        open.pending.append(Append::Change(change));
    }
    if touched.project {
        open.pending.mark(Key::Project);
    }
    if touched.ui {
        let essentials = saving::ui_essentials(&open.session.project.ui);
        if essentials != open.ui_saved {
            open.ui_saved = essentials;
            open.pending.mark(Key::Project);
        } else {
            open.pending.mark_lazy(Key::Project);
        }
    } else if touched.project {
        open.ui_saved = saving::ui_essentials(&open.session.project.ui);
    }
    for chapter in &touched.deleted_chapters {
        open.feeds.remove(chapter);
    }
    let pending = &mut open.pending;
    for chapter in touched.chapters.into_iter().chain(touched.deleted_chapters) {
        pending.mark(Key::Chapter(chapter));
    }
    pending.take_history(&mut open.session);
    for item in touched.memory {
        pending.mark(Key::from(item));
    }
    for note in touched.notes_written {
        pending.mark(Key::Note(note));
    }
    for (kind, id) in touched.bible {
        pending.mark(Key::Bible(kind, id));
    }
    for path in touched.files {
        pending.mark(Key::File(path));
    }
    if let Some(audit) = touched.audit {
        pending.append(Append::Audit(audit));
    }
    if let Some(hold) = &touched.release {
        pending.release(hold);
    }
    for record in touched.meta_puts {
        pending.append(Append::Meta(record.to_value()));
    }
    for key in touched.meta_deletes {
        pending.append(Append::MetaDelete(key));
    }
}

/// Which open project a mutation changes ([`Core::mutate_on`]), and when what it touched is
/// saved.
#[derive(Clone, Copy, Default)]
struct On<'a> {
    /// The project; the page's open project when `None`.
    project: Option<&'a str>,
    /// A job unit's hold: what the mutation touched waits under it, and is saved only when
    /// the job releases it with the unit's progress mark, in one batch (`jobs.rs`). Saved at
    /// once when `None`.
    hold: Option<&'a str>,
}

impl<'a> On<'a> {
    /// The page's open project.
    fn page() -> Self {
        Self::default()
    }

    /// Open project `project` (not necessarily the page's).
    fn project(project: &'a str) -> Self {
        Self {
            project: Some(project),
            hold: None,
        }
    }

    /// The same project, under `hold` if given.
    fn held(self, hold: Option<&'a str>) -> Self {
        Self { hold, ..self }
    }
}

/// What a tool call runs under besides its origin.
#[derive(Default, Clone)]
struct CallCtx {
    /// The run it belongs to (single-use guards; pending approvals name it).
    run: Option<String>,
    /// The writer's approval, when this is the approved call.
    grant: Option<crate::policy::Grant>,
    /// The claimed approval record this call carries out: saved as `done`, with the result,
    /// in the call's own batch.
    approval: Option<records::ApprovalRecord>,
    /// The undo group its edits join (its run's tree group).
    group: Option<String>,
    /// The job unit's hold its writes wait under (saved with the unit's progress mark).
    hold: Option<String>,
    /// The tools its agent always asks the writer about (the spec's `interruptOn`).
    interrupt_on: Vec<String>,
    /// Its run may not overwrite what it wrote (see `CallExtras::no_overwrite`).
    no_overwrite: bool,
    /// The agent, path and session of the call in its run's tree (kept with a pending
    /// approval, so the events of its decision name them too).
    who: Option<run_state::SubAgentOrigin>,
    /// A call its run's drive makes: a card it needs waits (in the `Runs` part) for the
    /// run's pause, which saves the cards and the paused run in one batch, so a worker that
    /// dies between them leaves neither a card no run will hear of nor a run waiting for a
    /// card that does not exist.
    card_with_pause: bool,
}

/// The state every client of one core shares: the environment, the tools, and the parts
/// (see [`parts`]), each owning its own data.
pub struct Shared {
    env: Env,
    /// The standard tools, built on first use.
    registry: parts::Tools,
    /// The open projects.
    projects: parts::Projects,
    /// The runs going on, their guards and approval cards.
    runs: parts::Runs,
    /// The approvals being decided.
    approvals: parts::Approvals,
    /// The jobs alive, and the way to run them.
    jobs: parts::Jobs,
    /// Defined agents, kept conversations, agent sessions.
    agents: parts::Agents,
    /// Research notes and per-run page counts.
    research: parts::ResearchState,
    /// MCP tool servers: the client runtime and each server's connection and tools.
    mcp: parts::McpServers,
    /// Proactive memory: suggestions, analysis figures, the thinker's budget, the monitor.
    proactive: parts::ProactiveMemory,
    /// The model settings in force.
    settings: parts::SettingsState,
    /// The way to call models.
    model: parts::ModelClient,
    /// Fault injection for tests of failed saves (`debug_fail_saves`).
    faults: parts::Faults,
    /// The projects shared through sync servers.
    sync: parts::SyncLinks,
    /// The events on their way out, held while a mutation's save is placed.
    outbox: parts::Outbox,
}

/// The agent core behind the worker, as one client (one page) sees it.
///
/// A core serves one page, or, as the writer of its database, every tab's page: each tab is a
/// client ([`Core::client`]) with its own open project, over one shared state ([`Shared`]):
/// one copy of each open project, saved by one worker. Everything but `current` is shared.
pub struct Core {
    shared: Rc<Shared>,
    /// The project this client has open.
    current: RefCell<Option<String>>,
    /// Which client this is (`None`: the worker's own page).
    client: Option<String>,
}

impl std::ops::Deref for Core {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.shared
    }
}

impl Core {
    /// A core in the given environment, with the standard tools.
    pub fn new(env: Env) -> Self {
        let shared = Shared {
            env,
            registry: parts::Tools::default(),
            projects: parts::Projects::default(),
            runs: parts::Runs::default(),
            approvals: parts::Approvals::default(),
            jobs: parts::Jobs::default(),
            agents: parts::Agents::default(),
            research: parts::ResearchState::default(),
            mcp: parts::McpServers::default(),
            proactive: parts::ProactiveMemory::default(),
            settings: parts::SettingsState::default(),
            model: parts::ModelClient::default(),
            faults: parts::Faults::default(),
            sync: parts::SyncLinks::default(),
            outbox: parts::Outbox::default(),
        };
        Self {
            shared: Rc::new(shared),
            current: RefCell::new(None),
            client: None,
        }
    }

    /// The same core, able to call models through `transport` (runs, generation tools).
    pub fn with_llm(self, transport: Rc<dyn LlmTransport>, sleeper: Rc<dyn Sleeper>) -> Self {
        self.shared.model.set(Llm { transport, sleeper });
        self
    }

    /// The same core, able to make its saves fail on request (`debug_fail_saves`):
    /// `switch(n)` must make the next `n` commits of its environment's store fail (as a full
    /// quota), as [`crate::store::faulty::Faulty::fail_next`] does.
    pub fn with_fail_switch(self, switch: FailSwitch) -> Self {
        self.shared.faults.set(switch);
        self
    }

    /// Another client of this core (another tab's page, named `id`): it shares the open
    /// projects, settings and runs, and has its own open project (none at first). The events
    /// its requests cause name it ([`Event::client`]).
    pub fn client(&self, id: impl Into<String>) -> Core {
        Core {
            shared: Rc::clone(&self.shared),
            current: RefCell::new(None),
            client: Some(id.into()),
        }
    }

    /// How many agent sessions are alive now (each routing call opens one for its sub-agent
    /// and ends it when the sub-agent answers; a paused tree keeps none alive).
    pub fn open_agent_sessions(&self) -> usize {
        self.agents.open_agent_sessions()
    }

    /// The project this client has open, if any.
    pub fn current_project(&self) -> Option<String> {
        self.current.borrow().clone()
    }

    /// The way to call models, if this core has one.
    fn llm(&self) -> Option<Rc<Llm>> {
        self.model.get()
    }

    /// The environment (clock, ids, event sink).
    pub fn env(&self) -> &Env {
        &self.env
    }

    /// The tool registry.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// Serve one message given as JSON text and return the response as JSON text. Never
    /// panics on any input: malformed messages get a `malformed` error response.
    pub async fn handle_text(&self, text: &str) -> String {
        self.handle_text_ahead(text, None).await
    }

    /// [`Core::handle_text`], giving the answer to `ahead` as soon as it is known when what
    /// is left is to save the change it reports (a keystroke's `apply_user_change`, a bulk
    /// `write_memory_notes`): the caller may send it once that save has landed, without
    /// waiting for the core to wake and answer. The future still resolves to the same answer
    /// once the core is done with the request: if the save failed, that is the answer to
    /// send, after the `storage_error` event. `ahead` is called at most once, before the save
    /// is placed.
    async fn handle_text_ahead(&self, text: &str, ahead: Option<&dyn Fn(&str)>) -> String {
        let response = match decode_request(text) {
            Ok(request) => {
                self.respond(request, ahead.map(|ahead| (ahead, text)))
                    .await
            }
            Err(decode) => Response {
                id: decode.id,
                outcome: Err(error_body(&Error::from(decode.error))),
            },
        };
        response_text(&response, text)
    }

    /// [`Core::handle_text`] for a page that shows `project`: if this client does not have
    /// it open (a new client of the writing worker, or a core restarted after a failure),
    /// it is opened first, so the page's requests reach the project it shows. If it cannot
    /// be opened, the request is served as it is (and fails as it would without a project).
    pub async fn handle_in(&self, text: &str, project: Option<&str>) -> String {
        self.handle_in_ahead(text, project, None).await
    }

    /// [`Core::handle_in`], with the answer given ahead of its save to `ahead` (see
    /// [`Core::handle_text_ahead`]).
    pub async fn handle_in_ahead(
        &self,
        text: &str,
        project: Option<&str>,
        ahead: Option<&dyn Fn(&str)>,
    ) -> String {
        if let Some(project) = project {
            if self.current_project().as_deref() != Some(project) {
                let _ = self
                    .open_project(OpenProject {
                        id: project.to_string(),
                    })
                    .boxed_local()
                    .await;
            }
        }
        self.handle_text_ahead(text, ahead).await
    }

    /// Serve one decoded request.
    pub async fn handle(&self, request: Request) -> Response {
        self.respond(request, None).await
    }

    /// Serve `request`; with `ahead`, a function and the request's text, an answer known
    /// before its save is given to the function as its JSON text (see
    /// [`Core::handle_text_ahead`]).
    async fn respond(&self, request: Request, ahead: Ahead<'_>) -> Response {
        let Request { id, kind, params } = request;
        let early = |result: &serde_json::value::RawValue| {
            if let Some((ahead, text)) = ahead {
                let response = Response {
                    id: Some(id.clone()),
                    outcome: Ok(result.to_owned()),
                };
                ahead(&response_text(&response, text));
            }
        };
        let outcome = self
            .dispatch(&kind, &params, &early)
            .await
            .map_err(|e| error_body(&e));
        Response {
            id: Some(id),
            outcome,
        }
    }

    /// Serve request `kind`; its handler takes the parameters `p`, decoded from their text
    /// into its typed parameters (a request may carry a whole manuscript or a batch of notes).
    /// A handler whose last step is its save gives its result to `ahead` before it saves
    /// (see [`Core::handle_text_ahead`]). A handler that waits is awaited on the heap
    /// (`boxed_local`, most through `Reply::wait`): the request's future then holds a pointer
    /// to it rather than room for the largest handler's (an agent's run, an approval:
    /// kilobytes), which would be copied whole as it is built and moved into its task, for a
    /// `hello` too.
    async fn dispatch(
        &self,
        kind: &str,
        p: &serde_json::value::RawValue,
        ahead: &dyn Fn(&serde_json::value::RawValue),
    ) -> Result<Box<serde_json::value::RawValue>, Error> {
        match Call::decode(kind, p)? {
            Call::Hello(_, reply) => {
                static HELLO: std::sync::OnceLock<Box<serde_json::value::RawValue>> =
                    std::sync::OnceLock::new();
                reply.send_constant(&HELLO, || self.hello())
            }
            Call::CreateProject(p, reply) => reply.wait(self.create_project(p)).await,
            Call::OpenProject(p, reply) => reply.wait(self.open_project(p)).await,
            Call::ListProjects(_, reply) => reply.wait(self.list_projects()).await,
            Call::RenameProject(p, reply) => reply.wait(self.rename_project(p)).await,
            Call::DeleteProject(p, reply) => reply.wait(self.delete_project(p)).await,
            Call::StorageEstimate(_, reply) => reply.wait(self.storage_estimate()).await,
            Call::LocalModels(_, reply) => reply.wait(self.local_models()).await,
            Call::LoadLocalModel(_, reply) => reply.wait(self.load_local_model()).await,
            Call::McpServers(_, reply) => reply.wait(self.mcp_servers()).await,
            Call::McpConnect(p, reply) => reply.wait(self.mcp_connect(p)).await,
            Call::DeleteLocalModel(p, reply) => reply.wait(self.delete_local_model(p)).await,
            Call::ReloadProject(p, reply) => reply.wait(self.reload_project(p)).await,
            Call::SyncConnect(p, reply) => reply.wait(self.sync_connect(p)).await,
            Call::SyncDisconnect(p, reply) => reply.send(self.sync_disconnect(p)),
            Call::SyncStatus(p, reply) => reply.send(self.sync_status(p)),
            Call::SyncNetwork(p, reply) => reply.send(Ok(self.sync_network(p))),
            Call::Checkpoint(p, reply) => reply.wait(self.checkpoint(p)).await,
            Call::Memory(_, reply) => reply.send(self.with_session(|s| memory_json(s))),
            Call::MemoryContext(p, reply) => reply.send(self.memory_context(p)),
            Call::EditorContext(p, reply) => reply.send(self.editor_context(p)),
            Call::WriteMemoryNotes(p, reply) => {
                self.write_memory_notes(p, |written| reply.send(Ok(written)), ahead)
                    .boxed_local()
                    .await
            }
            Call::MemoryTrash(_, reply) => reply.send(self.memory_trash()),
            Call::MemoryRestore(p, reply) => reply.wait(self.memory_restore(p)).await,
            Call::Suggestions(p, reply) => reply.wait(self.list_suggestions(p)).await,
            Call::AcceptSuggestion(p, reply) => reply.wait(self.accept_suggestion(p)).await,
            Call::DismissSuggestion(p, reply) => reply.wait(self.dismiss_suggestion(p)).await,
            Call::WriterIdle(p, reply) => reply.wait(self.writer_idle(p)).await,
            Call::ExportProject(p, reply) => reply.wait(self.export_project(p)).await,
            Call::ImportProject(p, reply) => reply.wait(self.import_project(p)).await,
            Call::ExportMarkdown(p, reply) => reply.wait(self.export_markdown(p)).await,
            Call::GetChapter(p, reply) => reply.send(self.get_chapter(p)),
            Call::AddChapter(p, reply) => reply.wait(self.add_chapter(p)).await,
            Call::RenameChapter(p, reply) => reply.wait(self.rename_chapter(p)).await,
            Call::MoveChapter(p, reply) => reply.wait(self.move_chapter(p)).await,
            Call::DeleteChapter(p, reply) => reply.wait(self.delete_chapter(p)).await,
            Call::Execute(p, reply) => reply.wait(self.execute(p)).await,
            Call::ApplyUserChange(p, reply) => {
                let unsaved = self.apply_user_change(p).boxed_local().await;
                self.answer_then_save(reply, unsaved, ahead)
                    .boxed_local()
                    .await
            }
            Call::Undo(p, reply) => reply.wait(self.undo(p)).await,
            Call::Redo(_, reply) => reply.wait(self.redo()).await,
            Call::CloseGroup(_, reply) => {
                reply
                    .wait(self.mutate(|s| {
                        s.history.close_group();
                        Ok((results::Done {}, Touched::default()))
                    }))
                    .await
            }
            Call::History(_, reply) => reply.send(self.with_session(|s| history_json(s))),
            Call::ListTools(p, reply) => reply.send(self.list_tools(p)),
            Call::GetSettings(_, reply) => reply.wait(self.get_settings()).await,
            Call::SetSettings(p, reply) => reply.wait(self.set_settings(p)).await,
            Call::Run(p, reply) => reply.wait(self.run(p)).await,
            Call::AbortRun(p, reply) => reply.wait(self.abort_run(p)).await,
            Call::StartJob(p, reply) => reply.wait(self.start_job(p)).await,
            Call::JobStatus(p, reply) => reply.wait(self.job_status(p)).await,
            Call::ListJobs(_, reply) => reply.wait(self.list_jobs()).await,
            Call::PauseJob(p, reply) => reply.wait(self.pause_job(p)).await,
            Call::ResumeJob(p, reply) => reply.wait(self.resume_job(p)).await,
            Call::CancelJob(p, reply) => reply.wait(self.cancel_job(p)).await,
            Call::JobUnit(p, reply) => reply.wait(self.job_unit(p)).await,
            Call::ResearchList(_, reply) => reply.wait(self.research_list()).await,
            Call::ResearchDelete(p, reply) => reply.wait(self.research_delete(p)).await,
            Call::DefineAgent(p, reply) => reply.wait(self.define_agent(p)).await,
            Call::ListAgents(_, reply) => reply.wait(self.list_agents()).await,
            Call::DeleteAgent(p, reply) => reply.wait(self.delete_agent(p)).await,
            Call::ListApprovals(p, reply) => reply.wait(self.list_approvals(p)).await,
            Call::Approve(p, reply) => reply.wait(self.approve(p)).await,
            Call::BibleList(p, reply) => reply.send(self.bible_list(p)),
            Call::BibleRevisions(p, reply) => reply.send(self.bible_revisions(p)),
            Call::BibleSave(p, reply) => reply.wait(self.bible_save(p)).await,
            Call::BibleDelete(p, reply) => reply.wait(self.bible_delete(p)).await,
            Call::DebugPanic(p, reply) => reply.send(debug_panic(kind, p)),
            Call::DebugFailSaves(p, reply) => reply.send(self.debug_fail_saves(p)),
        }
    }

    /// The `hello` result: who we are and what we serve.
    pub fn hello(&self) -> results::Hello {
        results::Hello {
            name: "draftsmith",
            version: crate::VERSION,
            profile: if cfg!(debug_assertions) {
                results::Profile::Debug
            } else {
                results::Profile::Release
            },
            protocol: PROTOCOL_VERSION,
            capabilities: REQUESTS,
        }
    }

    /// Send an event: the one place an event leaves the core. It concerns the project its
    /// payload names, else this client's open project; the events every page needs (the
    /// project list, settings, memory, which holds global notes) concern none.
    fn emit(&self, event: impl Into<CoreEvent>) {
        self.send_event(event.into());
    }

    fn send_event(&self, event: CoreEvent) {
        let project = match event.concerns() {
            Concerns::EveryPage => None,
            Concerns::Project(id) => Some(id.to_string()),
            Concerns::OpenProject => self.current_project(),
        };
        self.outbox.send(
            self.env.events.as_ref(),
            Event::new(event.name(), event.data())
                .in_project(project)
                .by_client(self.client.clone()),
        );
    }

    fn emit_edits(&self, edits: &[Applied], origin: &Origin) {
        for edit in edits {
            self.emit(EditEvent {
                chapter: edit.chapter.clone(),
                changeset: edit.change.clone(),
                version: edit.version,
                origin: origin.clone(),
                tag: None,
            });
        }
    }

    /// Announce changed story-bible entities (`entity` is `null` when it was deleted).
    fn emit_bible(
        &self,
        session: &Session,
        changed: &[(crate::bible::Kind, String)],
        origin: &Origin,
    ) {
        for (kind, id) in changed {
            self.emit(BibleChangedEvent {
                project: session.project.id.clone(),
                kind: *kind,
                id: id.clone(),
                origin: origin.clone(),
                entity: session.bible.get(*kind, id).map(crate::bible::Entity::flat),
            });
        }
    }

    /// Announce changed free files of the `data/` view (`deleted: true` and no size when
    /// it is gone).
    fn emit_files(&self, session: &Session, changed: &[String], origin: &Origin) {
        for path in changed {
            let file = session.files.get(path);
            self.emit(FilesChangedEvent {
                project: session.project.id.clone(),
                path: path.clone(),
                origin: crate::files::file_origin(origin),
                size: file.map(|f| f.size()),
                mod_time: file.map(|f| f.mod_time),
                deleted: file.is_none().then_some(true),
            });
        }
    }

    fn emit_history(&self, session: &Session) {
        self.emit(HistoryChangedEvent {
            can_undo: session.history.can_undo(),
            can_redo: session.history.can_redo(),
            groups: session.history.undo_groups(),
        });
    }

    fn current(&self) -> Result<String, Error> {
        self.current.borrow().clone().ok_or_else(|| {
            Error::NoProject("no project is open; create_project or open_project first".into())
        })
    }

    /// Run `f` on the open project's session, for reads.
    fn with_session<T>(
        &self,
        f: impl FnOnce(&mut Session) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let current = self.current()?;
        self.with_project(&current, f)
    }

    /// Run `f` on an open project's session, for reads.
    fn with_project<T>(
        &self,
        current: &str,
        f: impl FnOnce(&mut Session) -> Result<T, Error>,
    ) -> Result<T, Error> {
        f(&mut *self.session_mut(current)?)
    }

    /// The session of open project `current` (one copy for every [`Core::with_project`]).
    fn session_mut(&self, current: &str) -> Result<std::cell::RefMut<'_, Session>, Error> {
        self.projects.session_mut(current)
    }

    /// Run `f` on an open project (its session and change feeds), for reads.
    fn with_open<T>(
        &self,
        project: &str,
        f: impl FnOnce(&Open) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.projects
            .read(project, f)
            .unwrap_or_else(|| Err(parts::not_open(project)))
    }

    /// [`Core::mutate_on`] the page's open project.
    async fn mutate<T>(
        &self,
        f: impl FnOnce(&mut Session) -> Result<(T, Touched), Error>,
    ) -> Result<T, Error> {
        self.mutate_on(On::page(), f).await
    }

    /// The one way to change a project: run `f` on the session of the open project `on`
    /// names (the exclusive edit path), mark what it touched as pending (under `on`'s hold,
    /// if any), then save what is pending as one batch.
    async fn mutate_on<T>(
        &self,
        on: On<'_>,
        f: impl FnOnce(&mut Session) -> Result<(T, Touched), Error>,
    ) -> Result<T, Error> {
        let Unsaved { value, save } = self.mutate_unsaved(on, f)?;
        if let Some((project, hold)) = save {
            self.settle_while(&project, hold, |_| {}).await;
        }
        Ok(value)
    }

    /// [`Core::mutate_on`] but the save, left to the caller: for a request whose last step
    /// is the mutation, which answers before it saves ([`Core::answer_then_save`]).
    fn mutate_unsaved<T>(
        &self,
        on: On<'_>,
        f: impl FnOnce(&mut Session) -> Result<(T, Touched), Error>,
    ) -> Result<Unsaved<'_, T>, Error> {
        let project = match on.project {
            Some(project) => project.to_string(),
            None => self.current()?,
        };
        // What the mutation tells the pages goes out once its save is placed.
        let hold = self.hold_events();
        let value = self.mutate_marking(&project, on.hold, f)?;
        Ok(Unsaved {
            value,
            save: Some((project, hold)),
        })
    }

    /// Answer with `unsaved`'s value, then save it: the answer is given to `ahead` (see
    /// [`Core::handle_text_ahead`]) when there is a save to wait for, before the save is
    /// placed, and returned once the save has ended (or failed, which the page hears as a
    /// `storage_error`: the change stays in memory and pending, as with any mutation).
    async fn answer_then_save<R: serde::Serialize>(
        &self,
        reply: requests::Reply<R>,
        unsaved: Result<Unsaved<'_, R>, Error>,
        ahead: &dyn Fn(&serde_json::value::RawValue),
    ) -> Result<Box<serde_json::value::RawValue>, Error> {
        let Unsaved { value, save } = unsaved?;
        let answer = reply.send(Ok(value))?;
        if let Some((project, hold)) = save {
            ahead(&answer);
            self.settle_while(&project, hold, |_| {}).await;
        }
        Ok(answer)
    }

    /// The synchronous part of [`Core::mutate_on`]: run `f` on project `current`'s session
    /// and mark what it touched as pending (under `hold`, if given). The saving is left to
    /// the caller, so each mutation's future holds only its value across the save, and the
    /// save's code is not repeated per closure. An unshared project's save leaves its
    /// document's update for later (see `Include`), and so does the mutation: unless held,
    /// what it touched (but an update from another device) is mirrored into the document
    /// once the core is idle ([`Core::idle`]), or before anything needs the document.
    fn mutate_marking<T>(
        &self,
        current: &str,
        hold: Option<&str>,
        f: impl FnOnce(&mut Session) -> Result<(T, Touched), Error>,
    ) -> Result<T, Error> {
        let later = hold.is_none() && self.sync.get(current).is_none();
        let mut open = self.open_mut(current)?;
        let (value, touched) = f(&mut open.session)?;
        if later && touched.deferrable() {
            open.defer_mirror(touched.to_mirror());
            mark_pending(&mut open, touched);
        } else {
            mark_held(&mut open, touched, hold, self.env.ids.as_ref());
        }
        drop(open);
        // A shared project's link sends what changed once it is saved, and where the
        // writer's cursor is now.
        self.sync.wake(current);
        Ok(value)
    }

    /// Open project `current`, for a mutation (one copy for every [`Core::mutate_marking`]).
    fn open_mut(&self, current: &str) -> Result<std::cell::RefMut<'_, Open>, Error> {
        self.projects.open_mut(current)
    }

    /// Hold the events until the hold ends (see [`parts::Outbox::hold`]).
    fn hold_events(&self) -> parts::Hold<'_> {
        self.outbox.hold(self.env.events.as_ref())
    }

    /// Save what a mutation left pending, doing `work` on the open project while IndexedDB
    /// writes the save: the save places its writes at its first poll, then the mutation's
    /// events held by `hold` go out and `work` runs (before anything else can), then the save
    /// is awaited. A failed save is reported to the page (`storage_error`) and stays pending;
    /// the change itself is kept in memory.
    async fn settle_while(
        &self,
        current: &str,
        hold: parts::Hold<'_>,
        work: impl FnOnce(&mut Open),
    ) {
        let meanwhile = async {
            drop(hold);
            self.projects.update(current, work);
        };
        let _ = futures_util::future::join(self.flush(current, false), meanwhile).await;
    }

    /// Mirror into project `project`'s document what mutations left to be mirrored later
    /// (see [`Open::mirror_deferred`]): for what reads the document or its queued updates.
    fn mirror_deferred(&self, project: &str) {
        let ids = self.env.ids.as_ref();
        self.projects
            .update(project, |open| open.mirror_deferred(ids));
    }

    /// The core's work that waits until it is idle (the worker calls it once it has answered
    /// a request): what mutations of unshared projects touched is mirrored into their
    /// documents. It is also done before anything needs it, so a core never called idle is
    /// as correct, only slower there.
    pub fn idle(&self) {
        let ids = self.env.ids.as_ref();
        self.projects.update_each(|open| open.mirror_deferred(ids));
    }

    /// Whether [`Core::idle`] has anything to do.
    pub fn has_idle_work(&self) -> bool {
        self.projects.any(Open::has_deferred)
    }

    async fn create_project(&self, p: CreateProject) -> Result<ProjectSummary, Error> {
        let name = p.name.trim();
        if name.is_empty() {
            return Err(invalid("create_project", "'name' must not be empty"));
        }
        let specs = if p.chapters.is_empty() {
            vec![NewChapter {
                title: "Chapter 1".into(),
                text: String::new(),
            }]
        } else {
            p.chapters
        };
        let chapters: Vec<Chapter> = specs
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let title = if c.title.trim().is_empty() {
                    format!("Chapter {}", i + 1)
                } else {
                    c.title
                };
                Chapter::new(self.env.ids.next_id(), title, &c.text)
            })
            .collect();
        let id = self.env.ids.next_id();
        let now = self.env.clock.now_ms();
        let mut session = Session::new(Project::new(id.clone(), name, chapters));
        session
            .memory
            .ensure_bedside(&id, now, self.env.ids.as_ref());
        let summary = ProjectSummary::of(&session.project);
        // Nothing is created unless it is stored.
        let (stored, replica) = self.store_new(&mut session, now, now).await?;
        self.projects
            .insert(&id, Open::new(session, now, stored, replica));
        self.fresh_proactive(&id);
        *self.current.borrow_mut() = Some(id);
        self.emit_projects_changed();
        Ok(summary)
    }

    /// Store a project fetched from a sync server, whole, with its document (one update),
    /// and open it.
    async fn store_fetched(
        &self,
        mut session: Session,
        replica: Replica,
        now: u64,
    ) -> Result<(), Error> {
        let id = session.project.id.clone();
        session
            .memory
            .ensure_bedside(&id, now, self.env.ids.as_ref());
        let stored = self
            .store_whole(&mut session, &replica.snapshot(), now, now)
            .await?;
        self.projects
            .insert(&id, Open::new(session, now, stored, replica));
        self.fresh_proactive(&id);
        Ok(())
    }

    /// Write a new (or imported) project whole, with its first Yjs document, in one batch.
    async fn store_new(
        &self,
        session: &mut Session,
        created_ms: u64,
        now_ms: u64,
    ) -> Result<(persist::pending::Stored, Replica), Error> {
        let id = session.project.id.clone();
        let client = crate::replica::client_id(self.env.ids.as_ref());
        let (replica, update) = Replica::of_session(session, &id, client);
        let stored = self
            .store_whole(session, &update, created_ms, now_ms)
            .await?;
        Ok((stored, replica))
    }

    /// Write a project whole with `update`, its Yjs document, in one batch.
    async fn store_whole(
        &self,
        session: &mut Session,
        update: &[u8],
        created_ms: u64,
        now_ms: u64,
    ) -> Result<persist::pending::Stored, Error> {
        let _ = session.history.take_changes();
        let id = session.project.id.clone();
        let mut pending = persist::pending::Pending::everything(session);
        let record = persist::SyncRecord::new(&id, update, self.env.ids.as_ref());
        pending.append(Append::Sync(record));
        let mut stored = persist::pending::Stored::default();
        let (batch, receipt) =
            persist::pending::batch(session, &pending, &stored, created_ms, now_ms, Include::ALL)?;
        self.env.store.commit(batch).await?;
        stored.apply(&receipt);
        Ok(stored)
    }

    async fn open_project(&self, p: OpenProject) -> Result<ProjectSummary, Error> {
        let unsaved = self.projects.read(&p.id, Open::unsaved);
        if unsaved == Some(true) {
            // Open already, with work a failed save left: try to save it again (a failure is
            // reported and it stays pending; the open copy is never replaced).
            let _ = self.flush(&p.id, false).await;
        }
        if unsaved.is_none() {
            let loaded = self
                .load_session_reporting(&p.id, &self.reporter(&p.id, "open_project"))
                .await?
                .ok_or_else(|| Error::NoProject(format!("no project with id '{}'", p.id)))?;
            self.projects
                .insert_if_closed(&p.id, || Open::loaded(loaded, self.env.ids.as_ref()));
        }
        let summary = self
            .projects
            .read(&p.id, open_summary)
            .ok_or_else(|| Error::NoProject(format!("project '{}' is not open", p.id)))?;
        *self.current.borrow_mut() = Some(p.id.clone());
        if unsaved.is_none() {
            // Loaded now: one read of the project's `meta` records serves both. Unfinished
            // jobs an earlier worker left go on, and the suggestions and analysis figures are
            // loaded (a failed read is not the opening's: the jobs wait for the next loading,
            // the suggestions are read again on first use).
            if let Ok(records) = self
                .env
                .store
                .get_by_index(Table::Meta, "project", json!(p.id))
                .await
            {
                self.load_proactive(&p.id, &records);
                self.wake_jobs(&p.id, &records);
                self.wake_runs(&p.id, &records);
            }
        }
        Ok(summary)
    }

    async fn list_projects(&self) -> Result<results::ProjectList, Error> {
        let projects = persist::list(self.env.store.as_ref()).await?;
        let projects = projects
            .into_iter()
            .map(|p| results::ProjectListing {
                chapters: p.chapters.len(),
                id: p.id,
                name: p.name,
                created_ms: p.created_ms,
                updated_ms: p.updated_ms,
            })
            .collect();
        Ok(results::ProjectList {
            projects,
            current: self.current.borrow().clone(),
        })
    }

    async fn rename_project(&self, p: RenameProject) -> Result<ProjectSummary, Error> {
        let name = p.name.trim().to_string();
        if name.is_empty() {
            return Err(invalid("rename_project", "'name' must not be empty"));
        }
        if let Some(id) = p.id.filter(|id| Some(id) != self.current.borrow().as_ref()) {
            self.open_project(OpenProject { id }).await?;
        }
        let result = self
            .mutate(|s| {
                s.project.name = name.clone();
                let touched = Touched {
                    project: true,
                    ..Touched::default()
                };
                Ok((ProjectSummary::of(&s.project), touched))
            })
            .await?;
        self.emit_projects_changed();
        Ok(result)
    }

    async fn delete_project(&self, p: OpenProject) -> Result<results::Deleted, Error> {
        let known = self.projects.is_open(&p.id)
            || self.env.store.get(Table::Projects, &p.id).await?.is_some();
        if !known {
            return Err(Error::NoProject(format!("no project with id '{}'", p.id)));
        }
        persist::delete(self.env.store.as_ref(), &p.id).await?;
        self.abort_project_runs(&p.id);
        self.forget_jobs(&p.id);
        self.forget_proactive(&p.id);
        self.projects.remove(&p.id);
        self.agents.forget_project(&p.id);
        self.research.forget_project(&p.id);
        if self.current.borrow().as_deref() == Some(p.id.as_str()) {
            *self.current.borrow_mut() = None;
        }
        self.emit_projects_changed();
        Ok(results::Deleted { deleted: p.id })
    }

    /// Make `id` (or the current project) the open one, and return its id.
    async fn target_project(&self, id: Option<String>) -> Result<String, Error> {
        match id {
            Some(id) => {
                self.open_project(OpenProject { id: id.clone() }).await?;
                Ok(id)
            }
            None => self.current(),
        }
    }

    async fn export_project(&self, p: ProjectRef) -> Result<persist::ExportDocument, Error> {
        let id = self.target_project(p.id).await?;
        let now = self.env.clock.now_ms();
        let mut doc = self
            .projects
            .read(&id, |open| {
                persist::export_document(&open.session, open.created_ms, now)
            })
            .ok_or_else(|| parts::not_open(&id))?;
        doc.agents = self.agents_for_export(&id).await?;
        doc.research = self.research_for_export(&id).await?;
        Ok(doc)
    }

    async fn export_markdown(&self, p: ProjectRef) -> Result<results::Markdown, Error> {
        self.target_project(p.id).await?;
        self.with_session(|s| {
            Ok(results::Markdown {
                markdown: persist::markdown(&s.project),
            })
        })
    }

    async fn import_project(&self, p: ImportProject) -> Result<ProjectSummary, Error> {
        let agents = p
            .document
            .get("agents")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let agents = self.check_imported_agents(&agents)?;
        let research = p
            .document
            .get("research")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let (mut session, created_ms) = persist::import_document(p.document)
            .map_err(|reason| invalid("import_project", &reason))?;
        let id = session.project.id.clone();
        let research = self.check_imported_research(&id, &research)?;
        let exists =
            self.projects.is_open(&id) || self.env.store.get(Table::Projects, &id).await?.is_some();
        if exists {
            return Err(invalid(
                "import_project",
                &format!("a project with id '{id}' already exists; delete it first to replace it"),
            ));
        }
        let (stored, replica) = self
            .store_new(&mut session, created_ms, self.env.clock.now_ms())
            .await?;
        self.store_imported_agents(&id, agents).await?;
        self.store_imported_research(&id, research).await?;
        let summary = ProjectSummary::of(&session.project);
        self.projects
            .insert(&id, Open::new(session, created_ms, stored, replica));
        *self.current.borrow_mut() = Some(id);
        self.emit_projects_changed();
        Ok(summary)
    }

    /// Where long work on `project` tells its steps: `progress` events of `task`.
    fn reporter<'a>(
        &'a self,
        project: &'a str,
        task: &'a str,
    ) -> impl Fn(crate::session::Progress<'_>) + 'a {
        move |step| self.emit(events::ProgressEvent::of(project, task, step))
    }

    /// A stored project, with the locks of the approvals that wait in it.
    async fn load_session(&self, id: &str) -> Result<Option<persist::Loaded>, Error> {
        self.load_session_reporting(id, &|_| {}).await
    }

    /// [`Core::load_session`] with `progress` events for the page (task `open_project`).
    async fn load_session_reporting(
        &self,
        id: &str,
        progress: &dyn Fn(crate::session::Progress<'_>),
    ) -> Result<Option<persist::Loaded>, Error> {
        let Some(mut loaded) =
            persist::load_reporting(self.env.store.as_ref(), id, progress).await?
        else {
            return Ok(None);
        };
        self.relock(&mut loaded.session).await?;
        Ok(Some(loaded))
    }

    /// Another tab (worker) saved project `id`: read it again from the store, so this tab
    /// does not show stale text. Unsaved work is never discarded: whatever this core has
    /// pending is saved first, and if that save fails the cached copy stays (the result says
    /// `reloaded: false, unsaved: true`; the next save tries again). The page hears
    /// `project_reloaded` when it was open here.
    async fn reload_project(&self, p: OpenProject) -> Result<results::Reloaded, Error> {
        let not_now = |unsaved| results::Reloaded {
            reloaded: false,
            unsaved,
        };
        // A few tries: a change made while the stored copy was being read is saved first too.
        for _ in 0..3 {
            let unsaved = match self.projects.read(&p.id, Open::unsaved) {
                None => return Ok(not_now(None)),
                Some(unsaved) => unsaved,
            };
            if unsaved && self.flush(&p.id, true).await.is_err() {
                return Ok(not_now(Some(true)));
            }
            let loaded = self.load_session(&p.id).await?;
            match self.projects.read(&p.id, Open::unsaved) {
                None => return Ok(not_now(None)),
                // Changed while we read: save that first, then read again.
                Some(true) => continue,
                Some(false) => {}
            }
            match loaded {
                Some(loaded) => {
                    let open = Open::loaded(loaded, self.env.ids.as_ref());
                    let event = ProjectReloadedEvent {
                        project: p.id.clone(),
                        summary: open_summary(&open),
                        rebased: None,
                        copies: None,
                        overridden: None,
                    };
                    self.projects.insert(&p.id, open);
                    self.emit(event);
                }
                None => {
                    // Deleted elsewhere.
                    self.projects.remove(&p.id);
                    if self.current.borrow().as_deref() == Some(p.id.as_str()) {
                        *self.current.borrow_mut() = None;
                    }
                    self.emit(ProjectDeletedEvent { id: p.id.clone() });
                }
            }
            return Ok(results::Reloaded {
                reloaded: true,
                unsaved: None,
            });
        }
        Ok(not_now(Some(true)))
    }

    /// `checkpoint {id?}`: write the whole text of every chapter of the project (the current
    /// one by default) that changed since its last checkpoint, and whatever waits to be saved
    /// lazily (the cursor and selection). The worker sends it when the writer is idle.
    /// Answers `{checkpointed: [chapter ids], saved}` (`saved: false` after a failed save,
    /// which is also reported as `storage_error`; it stays pending).
    async fn checkpoint(&self, p: ProjectRef) -> Result<results::Checkpointed, Error> {
        let id = match p.id {
            Some(id) => id,
            None => self.current()?,
        };
        let checkpointed: Vec<String> = {
            let mut open = self.projects.open_mut(&id)?;
            let due: Vec<String> = open
                .session
                .project
                .chapters
                .iter()
                .filter(|c| {
                    open.stored
                        .chapters
                        .get(&c.id)
                        .is_none_or(|s| s.checkpoint != c.version())
                })
                .map(|c| c.id.clone())
                .collect();
            for chapter in &due {
                open.pending.mark(Key::Chapter(chapter.clone()));
            }
            due
        };
        let saved = self.flush(&id, true).await.is_ok();
        Ok(results::Checkpointed {
            checkpointed,
            saved,
        })
    }

    fn memory_context(&self, p: MemoryContext) -> Result<results::MemoryBlock, Error> {
        self.with_session(|s| {
            let block =
                s.memory
                    .context_block(&s.project.id, &p.request, p.budget.unwrap_or(2_000));
            Ok(results::MemoryBlock { block })
        })
    }

    fn editor_context(&self, p: EditorContext) -> Result<results::EditorBlock, Error> {
        let toolset = p.toolset.unwrap_or_else(|| "all".to_string());
        let budget = p
            .budget
            .unwrap_or(crate::editor_context::EDITOR_CONTEXT_TOKENS);
        self.with_session(|s| {
            let block =
                crate::editor_context::editor_context_block(&s.project, &s.bible, &toolset, budget);
            Ok(results::EditorBlock { block })
        })
    }

    async fn storage_estimate(&self) -> Result<results::StorageEstimate, Error> {
        let estimate = self.env.store.estimate().await?;
        Ok(results::StorageEstimate {
            usage: estimate.map(|(usage, _)| usage),
            quota: estimate.map(|(_, quota)| quota),
            models: self.local_model_bytes().await,
        })
    }

    fn emit_projects_changed(&self) {
        self.emit(ProjectsChangedEvent {
            current: self.current.borrow().clone(),
        });
    }

    /// `get_chapter {chapter?, since?}`: the chapter's text and version; with `since`, also
    /// `changes`: the changes after version `since` (`{version, changeset, origin, tag?}`,
    /// oldest first), or `null` when the change feed no longer holds all of them.
    fn get_chapter(&self, p: GetChapter) -> Result<results::ChapterText, Error> {
        let current = self.current()?;
        self.with_open(&current, |open| {
            let s = &open.session;
            let chapter = match p.chapter.as_deref() {
                Some(name) => s.project.find_chapter(name)?,
                None => s
                    .project
                    .active_chapter()
                    .ok_or_else(|| Error::NoProject("the project has no chapters".into()))?,
            };
            let number = s.project.chapter_index(&chapter.id).map_or(0, |i| i + 1);
            let changes = p.since.map(|since| {
                open.changes_since(&chapter.id, since).map(|changes| {
                    changes
                        .into_iter()
                        .map(|c| results::ChapterChange {
                            version: c.version,
                            changeset: c.changeset.clone(),
                            origin: c.origin.clone(),
                            tag: c.tag.clone(),
                        })
                        .collect()
                })
            });
            Ok(results::ChapterText {
                id: chapter.id.clone(),
                title: chapter.title.clone(),
                number,
                text: chapter.text().to_string(),
                version: chapter.version(),
                changes,
            })
        })
    }

    /// `execute {tool, args, origin?, callId?}`. A call whose `callId` the history already
    /// holds for the same tool was applied before (a resend after a lost response): it is
    /// not run again, and answers `{status: "success", data: {duplicate: true}}` with the
    /// history entry as its `command_id`.
    async fn execute(&self, p: Execute) -> Result<ToolResult, Error> {
        let origin = parse_origin("execute", p.origin.as_deref())?;
        let current = self.current()?;
        if let Some(call_id) = &p.call_id {
            let applied = self.with_project(&current, |s| {
                Ok(s.history
                    .entries()
                    .iter()
                    .chain(s.history.redo_runs().iter().flatten())
                    .find(|e| {
                        e.tool_call_id.as_deref() == Some(call_id.as_str())
                            && e.command.as_deref() == Some(p.tool.as_str())
                    })
                    .map(|e| e.id.clone()))
            })?;
            if let Some(entry) = applied {
                let result = ToolResult::success(
                    json!({ "duplicate": true }),
                    crate::tools::ResultMeta {
                        command_id: Some(entry),
                        ..crate::tools::ResultMeta::default()
                    },
                );
                return Ok(result);
            }
        }
        // A call that may wait for approval needs an id to approve it by.
        let call_id = match (&origin, p.call_id) {
            (Origin::Agent(_), None) => Some(self.env.ids.next_id()),
            (_, id) => id,
        };
        let call = ToolCall {
            id: call_id,
            name: p.tool,
            args: p.args,
        };
        let (result, _) = self.execute_call(&current, call, origin, None).await?;
        Ok(result)
    }

    /// Execute one tool call on project `project` as `origin` through the edit path: saved,
    /// audited and announced. Returns the result and the edits it made. Calls that need a
    /// model (generation tools, `run_analysis`' reading) make it here; `abort` stops it.
    async fn execute_call(
        &self,
        project: &str,
        call: ToolCall,
        origin: Origin,
        abort: Option<&crate::agent::AbortSignal>,
    ) -> Result<(ToolResult, Vec<Applied>), Error> {
        self.execute_call_with(project, call, origin, abort, CallCtx::default())
            .await
    }

    /// [`Core::execute_call`] in a run, or as the approved call of a pending approval.
    async fn execute_call_with(
        &self,
        project: &str,
        call: ToolCall,
        origin: Origin,
        abort: Option<&crate::agent::AbortSignal>,
        ctx: CallCtx,
    ) -> Result<(ToolResult, Vec<Applied>), Error> {
        if crate::tools::generation::is_generation(&call.name) {
            return self
                .execute_generation(project, call, origin, abort, &ctx)
                .await;
        }
        if crate::tools::bible::language::is_mtl(&call.name) {
            return self.execute_mtl(project, call, origin, abort, &ctx).await;
        }
        if crate::mcp::is_mcp(&call.name) {
            return self.execute_mcp(project, call, origin, abort, ctx).await;
        }
        if crate::tools::research::is_research(&call.name) {
            return self
                .execute_research(project, call, origin, abort, &ctx)
                .await;
        }
        let interpret = call.name == "run_analysis"
            && crate::tools::generation::interpretation_requested(
                &call.args,
                self.model_configured(),
            );
        let analysis = call.name == "run_analysis";
        let analyst = analysis.then(|| origin.clone());
        let (hold, in_run) = (ctx.hold.clone(), ctx.run.is_some());
        let (mut result, edits) = self.execute_tool(project, call, origin, ctx).await?;
        if interpret && result.is_success() {
            self.interpret_analysis(&mut result, abort).await;
        }
        // The page's Analysis panel shows the latest result, whoever asked for it.
        if let Some(origin) = analyst.filter(|_| result.is_success()) {
            self.emit(events::AnalysisEvent {
                project: project.to_string(),
                origin,
                at_ms: self.env.clock.now_ms(),
                result: result.data.clone(),
            });
        }
        // The bedside note's status takes the new figures (the model's plan only for an
        // analysis outside a run: a run's end brings its own).
        if analysis && result.is_success() {
            if let Some((section, scope, headline)) = crate::tools::analysis::headline(&result.data)
            {
                let figures = crate::memory::bedside::AnalysisFigures {
                    section,
                    scope,
                    headline,
                    at_ms: self.env.clock.now_ms(),
                };
                self.evolve_bedside_auto(project, hold.as_deref(), !in_run, Some(figures))
                    .await;
            }
        }
        Ok((result, edits))
    }

    /// [`Core::execute_call`] for a tool that needs no model.
    async fn execute_tool(
        &self,
        project: &str,
        call: ToolCall,
        origin: Origin,
        ctx: CallCtx,
    ) -> Result<(ToolResult, Vec<Applied>), Error> {
        self.ensure_settings().await?;
        let agent = match &origin {
            Origin::Agent(name) => Some(name.as_str()),
            _ => None,
        };
        let policies = self
            .settings
            .read(|s| s.policies_for(agent, &ctx.interrupt_on));
        let args_digest = persist::digest(&call.args.to_string());
        #[cfg(debug_assertions)]
        let memory_tool = self
            .registry
            .definition(&call.name)
            .is_some_and(|d| d.category == crate::commands::Category::Memory && !d.read_only);
        let (tool, call_id) = (call.name.clone(), call.id.clone());
        let progress = self.reporter(project, &tool);
        let mut guards = ctx.run.as_ref().map(|run| self.runs.take_guards(run));
        let mut requested = None;
        let hold = ctx.hold.clone();
        let done = self
            .mutate_on(On::project(project).held(hold.as_deref()), |s| {
                // Debug builds (the tests) check the memory changes the outcome names against
                // a copy of the memory tools' memory before.
                #[cfg(debug_assertions)]
                let memory_before = memory_tool.then(|| persist::MemorySnapshot::of(&s.memory));
                let outcome = s.execute_with(
                    &*self.registry,
                    call.clone(),
                    origin.clone(),
                    self.env.clock.as_ref(),
                    self.env.ids.as_ref(),
                    crate::session::CallExtras {
                        policies: Some(&policies),
                        grant: ctx.grant.as_ref(),
                        guards: guards
                            .as_mut()
                            .map(|g| g as &mut (dyn crate::session::Guards + 'static)),
                        mtl_endpoint: None,
                        group: ctx.group.as_deref(),
                        no_overwrite: ctx.no_overwrite,
                        progress: Some(&progress),
                    },
                );
                #[cfg(debug_assertions)]
                if let Some(before) = memory_before {
                    before.check(&s.memory, &outcome.memory);
                }
                let mut meta_puts = Vec::new();
                let needs_approval = run_state::is_approval_required(&outcome.result)
                    && matches!(origin, Origin::Agent(_));
                let mut outcome = outcome;
                if needs_approval {
                    if let Some(details) = outcome.result.data.get_mut("details") {
                        details["callId"] = json!(call.id);
                        details["pending"] = json!(true);
                    }
                    let mut record = self.approval_record(
                        &s.project.id,
                        ctx.run.as_deref(),
                        &call,
                        &origin,
                        &outcome.result,
                    );
                    record.group = ctx.group.clone();
                    record.who = ctx.who.clone();
                    approvals::lock(s, &record);
                    match &ctx.run {
                        Some(run) if ctx.card_with_pause && ctx.hold.is_none() => {
                            self.runs.add_card(run, record);
                        }
                        _ => {
                            requested = Some(record.clone());
                            meta_puts.push(MetaRecord::Approval(record));
                        }
                    }
                } else if let Some(mut record) = ctx.approval.clone() {
                    record.state = records::ApprovalState::Done;
                    record.result = Some(outcome.result.clone());
                    meta_puts.push(MetaRecord::Approval(record));
                }
                let (value, mut touched) =
                    self.after_call(s, &tool, call_id, args_digest, origin.clone(), outcome)?;
                touched.meta_puts.extend(meta_puts);
                Ok((value, touched))
            })
            .await;
        if let (Some(run), Some(guards)) = (ctx.run, guards) {
            self.runs.put_guards(&run, guards);
        }
        if let Some(record) = requested {
            self.emit_approvals_changed(project, Some(&record));
        }
        done
    }

    /// The audit record of one tool call.
    fn audit_record(
        &self,
        project: &str,
        tool: &str,
        call_id: Option<String>,
        args_digest: String,
        origin: &Origin,
        result: &ToolResult,
    ) -> AuditRecord {
        AuditRecord {
            id: self.env.ids.next_id(),
            project: project.to_string(),
            time: self.env.clock.now_ms(),
            tool: tool.chars().take(200).collect(),
            args_digest,
            origin: origin.to_string(),
            status: if result.is_success() {
                "success"
            } else {
                "error"
            }
            .into(),
            call_id,
            command_id: result.meta.command_id.clone(),
        }
    }

    /// Announce what a call did, and say what its save must write.
    #[allow(clippy::too_many_arguments)]
    fn after_call(
        &self,
        s: &mut Session,
        tool: &str,
        call_id: Option<String>,
        args_digest: String,
        origin: Origin,
        outcome: crate::session::Outcome,
    ) -> Result<((ToolResult, Vec<Applied>), Touched), Error> {
        if !outcome.edits.is_empty() {
            self.emit_edits(&outcome.edits, &origin);
        }
        // A history entry was recorded (chapter edits, free files, or both).
        if outcome.result.meta.command_id.is_some() {
            self.emit_history(s);
        }
        if outcome.ui_changed {
            self.emit(s.project.ui.clone());
        }
        let audit = self.audit_record(
            &s.project.id,
            tool,
            call_id,
            args_digest,
            &origin,
            &outcome.result,
        );
        if !outcome.memory.is_empty() {
            self.emit(MemoryChangedEvent {
                project: s.project.id.clone(),
                tool: Some(tool.to_string()),
                ..MemoryChangedEvent::default()
            });
        }
        self.emit_bible(s, &outcome.bible, &origin);
        self.emit_files(s, &outcome.files, &origin);
        if !outcome.chapters_added.is_empty() {
            self.emit(results::ProjectSummary::of(&s.project));
        }
        // Cursor and selection moves are not audited.
        let audit = (!(UNAUDITED.contains(&tool) && outcome.edits.is_empty())).then_some(audit);
        let mut touched = Touched {
            ui: outcome.ui_changed || !outcome.edits.is_empty(),
            changes: persist::ChangeRecord::of(&outcome.edits, &origin, None),
            audit,
            memory: outcome.memory,
            bible: outcome.bible.clone(),
            files: outcome.files.clone(),
            project: !outcome.chapters_added.is_empty(),
            chapters: outcome.chapters_added.clone(),
            ..Touched::default()
        };
        // Watched entities the edits mentioned, misspelt or contradicted.
        self.monitor_edits(s, &outcome.edits, None, &mut touched);
        self.monitor_bible(s, &outcome.bible, &origin, &mut touched);
        Ok(((outcome.result, outcome.edits), touched))
    }

    /// `apply_user_change {chapter, baseVersion, changes, tag?}`: the writer's change, rebased
    /// over whatever happened since `baseVersion`. A change whose `tag` was already applied
    /// to the chapter (it is still in the chapter's change feed) is not applied again: the
    /// result is the first one's, with `duplicate: true`, and no `edit` event (so the page can
    /// resend a change whose response it lost).
    async fn apply_user_change(
        &self,
        p: UserChange,
    ) -> Result<Unsaved<'_, results::UserChangeResult>, Error> {
        let current = self.current()?;
        if let Some(tag) = &p.tag {
            let first = self.with_open(&current, |open| {
                let chapter = open.session.project.find_chapter(&p.chapter)?;
                Ok(open.tagged(&chapter.id, tag).cloned())
            })?;
            if let Some(first) = first {
                return Ok(Unsaved::saved(results::UserChangeResult {
                    rebased: p.base_version.saturating_add(1) < first.version,
                    applied: results::AppliedChange {
                        chapter: first.chapter,
                        version: first.version,
                        changeset: first.changeset,
                    },
                    tag: Some(tag.clone()),
                    duplicate: Some(true),
                }));
            }
        }
        // Suggestions are loaded before the monitor looks at the change.
        let _ = self.ensure_proactive(&current).await;
        self.writer_typed(&current);
        self.mutate_unsaved(On::page(), |s| {
            let chapter = s.project.find_chapter(&p.chapter)?;
            let (chapter_id, current) = (chapter.id.clone(), chapter.version());
            let applied = s.apply_user_change(
                &chapter_id,
                p.base_version,
                p.changes,
                self.env.clock.as_ref(),
                self.env.ids.as_ref(),
            )?;
            let rebased = p.base_version < current;
            let event = EditEvent {
                chapter: applied.chapter.clone(),
                changeset: applied.change.clone(),
                version: applied.version,
                origin: Origin::User,
                tag: p.tag.clone(),
            };
            // A change that came to nothing (all of it undone meanwhile) applies nothing.
            let changes = if applied.version > current {
                persist::ChangeRecord::of(
                    std::slice::from_ref(&applied),
                    &Origin::User,
                    p.tag.as_deref(),
                )
            } else {
                Vec::new()
            };
            self.emit(event);
            self.emit_history(s);
            let result = results::UserChangeResult {
                applied: results::AppliedChange {
                    chapter: applied.chapter.clone(),
                    version: applied.version,
                    changeset: applied.change.clone(),
                },
                rebased,
                tag: p.tag,
                duplicate: None,
            };
            let mut touched = Touched {
                ui: true,
                changes,
                ..Touched::default()
            };
            // Watched entities the writer's typing mentioned, misspelt or contradicted (the
            // word at the caret is still being typed).
            if applied.version > current {
                let caret = applied.change.touched_range().map(|(_, end)| end);
                self.monitor_edits(s, std::slice::from_ref(&applied), caret, &mut touched);
            }
            Ok((result, touched))
        })
    }

    async fn undo(&self, p: Undo) -> Result<results::HistoryMove, Error> {
        let scope = match p.origin.as_deref() {
            None => None,
            Some(o) => Some(
                o.parse::<OriginFilter>()
                    .map_err(|e| invalid("undo", &e.to_string()))?,
            ),
        };
        let by = parse_origin("undo", p.by.as_deref())?;
        self.mutate(|s| {
            let moved = s.undo(
                scope.as_ref(),
                by.clone(),
                self.env.clock.as_ref(),
                self.env.ids.as_ref(),
            )?;
            self.after_history_move(s, moved, &by)
        })
        .await
    }

    async fn redo(&self) -> Result<results::HistoryMove, Error> {
        self.mutate(|s| {
            let moved = s.redo()?;
            self.after_history_move(s, moved, &Origin::User)
        })
        .await
    }

    /// Announce what undo or redo did, and say what its save must write: the chapter
    /// changes, and the free files it put back (`files_changed`, saved or deleted). The
    /// result lists the files put back (`files`) and those left as a later write made them
    /// (`filesKept`, with a `note` saying so).
    fn after_history_move(
        &self,
        s: &mut Session,
        moved: Moved,
        by: &Origin,
    ) -> Result<(results::HistoryMove, Touched), Error> {
        let Moved {
            applied,
            files,
            kept,
            added,
            removed,
        } = moved;
        if !applied.is_empty() {
            self.emit_edits(&applied, by);
        }
        let chapters_changed = !(added.is_empty() && removed.is_empty());
        if chapters_changed {
            self.emit(results::ProjectSummary::of(&s.project));
        }
        self.emit_files(s, &files, by);
        self.emit_history(s);
        let note = (!kept.is_empty()).then(|| {
            format!(
                "{} changed since (a later write), so the later content was kept: {}",
                if kept.len() == 1 {
                    "a file"
                } else {
                    "some files"
                },
                kept.join(", ")
            )
        });
        let result = results::HistoryMove {
            applied: applied
                .iter()
                .map(|a| results::AppliedChange {
                    chapter: a.chapter.clone(),
                    changeset: a.change.clone(),
                    version: a.version,
                })
                .collect(),
            files: files.clone(),
            files_kept: kept,
            note,
            can_undo: s.history.can_undo(),
            can_redo: s.history.can_redo(),
        };
        let mut touched = Touched {
            ui: true,
            changes: persist::ChangeRecord::of(&applied, by, None),
            files,
            project: chapters_changed,
            chapters: added,
            deleted_chapters: removed,
            ..Touched::default()
        };
        // What undo or redo brought back, or took away, of the watched entities.
        self.monitor_edits(s, &applied, None, &mut touched);
        Ok((result, touched))
    }

    fn list_tools(&self, p: ListTools) -> Result<results::ToolList, Error> {
        let toolset = p.toolset.as_deref().unwrap_or(crate::tools::ALL);
        match p.format.as_deref() {
            None | Some("neutral") => {
                let tools = self.registry.toolset(toolset)?;
                Ok(results::ToolList::Neutral {
                    tools: tools.into_iter().cloned().collect(),
                })
            }
            Some(f) => {
                let format: CatalogFormat =
                    f.parse().map_err(|e: String| invalid("list_tools", &e))?;
                Ok(results::ToolList::Catalog(
                    self.registry.catalog(format, toolset)?,
                ))
            }
        }
    }
}

fn history_json(s: &Session) -> Result<results::HistoryList, Error> {
    let entry = results::HistoryEntry::of;
    Ok(results::HistoryList {
        entries: s.history.entries().iter().rev().map(entry).collect(),
        redo: s
            .history
            .redo_runs()
            .iter()
            .rev()
            .flatten()
            .map(entry)
            .collect(),
        can_undo: s.history.can_undo(),
        can_redo: s.history.can_redo(),
        memory_bytes: s.history.memory_bytes(),
    })
}

/// Everything the memory panel shows: the bedside note, goals, watched entities and notes
/// visible from the project (newest first).
fn memory_json(s: &Session) -> Result<results::MemoryView, Error> {
    let id = s.project.id.as_str();
    let mut notes: Vec<&crate::memory::MemoryNote> = s.memory.visible_notes(id).collect();
    notes.sort_by_key(|n| std::cmp::Reverse(n.updated_ms));
    Ok(results::MemoryView {
        bedside: s.memory.bedside(id).cloned(),
        goals: s.memory.project_goals(id).cloned().collect(),
        watched: s.memory.project_watched(id).cloned().collect(),
        notes: notes
            .into_iter()
            .filter(|n| !n.is_bedside())
            .cloned()
            .collect(),
    })
}

/// An open project's summary, with `problems` when its stored data was damaged.
fn open_summary(open: &Open) -> ProjectSummary {
    let mut summary = ProjectSummary::of(&open.session.project);
    if !open.problems.is_empty() {
        summary.problems = Some(open.problems.clone());
    }
    summary
}

fn invalid(request: &str, reason: &str) -> Error {
    ProtocolError::InvalidParams {
        request: request.to_string(),
        reason: reason.to_string(),
    }
    .into()
}

fn parse_origin(request: &str, origin: Option<&str>) -> Result<Origin, Error> {
    match origin {
        None => Ok(Origin::User),
        Some(o) => o
            .parse()
            .map_err(|e: crate::commands::BadOrigin| invalid(request, &e.to_string())),
    }
}

#[derive(Deserialize, TS)]
#[ts(rename = "NewChapter", optional_fields)]
struct NewChapter {
    #[serde(default)]
    #[ts(as = "Option<String>", optional)]
    title: String,
    #[serde(default)]
    #[ts(as = "Option<String>", optional)]
    text: String,
}

#[derive(Deserialize, TS)]
#[ts(rename = "CreateProjectParams", optional_fields)]
struct CreateProject {
    name: String,
    #[serde(default)]
    #[ts(as = "Option<Vec<NewChapter>>", optional)]
    chapters: Vec<NewChapter>,
}

#[derive(Deserialize, TS)]
#[ts(rename = "OpenProjectParams", optional_fields)]
struct OpenProject {
    id: String,
}

#[derive(Deserialize, TS)]
#[ts(rename = "MemoryContextParams", optional_fields)]
struct MemoryContext {
    #[serde(default)]
    #[ts(as = "Option<String>", optional)]
    request: String,
    #[serde(default)]
    budget: Option<usize>,
}

#[derive(Deserialize, TS)]
#[ts(rename = "EditorContextParams", optional_fields)]
struct EditorContext {
    /// The toolset the block names (default `all`).
    #[serde(default)]
    toolset: Option<String>,
    /// Tokens at most (default: what a run's prompt gives it).
    #[serde(default)]
    budget: Option<usize>,
}

#[derive(Deserialize, TS)]
#[ts(rename = "ProjectRefParams", optional_fields)]
struct ProjectRef {
    #[serde(default)]
    id: Option<String>,
}

#[derive(Deserialize, TS)]
#[ts(rename = "ImportProjectParams", optional_fields)]
struct ImportProject {
    document: Value,
}

#[derive(Deserialize, TS)]
#[ts(rename = "RenameProjectParams", optional_fields)]
struct RenameProject {
    #[serde(default)]
    id: Option<String>,
    name: String,
}

#[derive(Deserialize, TS)]
#[ts(rename = "GetChapterParams", optional_fields)]
struct GetChapter {
    #[serde(default)]
    chapter: Option<String>,
    #[serde(default)]
    since: Option<u64>,
}

#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "ExecuteParams", optional_fields)]
struct Execute {
    tool: String,
    #[serde(default)]
    #[ts(as = "Option<Value>", optional)]
    args: Value,
    #[serde(default)]
    origin: Option<String>,
    #[serde(default, alias = "call_id")]
    call_id: Option<String>,
}

#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "ApplyUserChangeParams", optional_fields)]
struct UserChange {
    chapter: String,
    #[serde(alias = "base_version")]
    base_version: u64,
    #[serde(alias = "changeset")]
    #[ts(as = "Vec<crate::project::changeset::Op>")]
    changes: ChangeSet,
    /// The page's label for this change, echoed in its `edit` event and the result (so an
    /// editor can tell its own change from others').
    #[serde(default)]
    tag: Option<String>,
}

#[derive(Deserialize, TS)]
#[ts(rename = "UndoParams", optional_fields)]
struct Undo {
    #[serde(default)]
    origin: Option<String>,
    #[serde(default)]
    by: Option<String>,
}

#[derive(Deserialize, TS)]
#[ts(rename = "ListToolsParams", optional_fields)]
struct ListTools {
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    toolset: Option<String>,
}

/// `debug_panic {message?}`: panics on purpose, so that tests and embedders can check that a
/// panic in the worker reaches the page as an error event and the worker recovers.
#[derive(Deserialize, TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "DebugFailSavesParams", optional_fields)]
struct FailSaves {
    count: u64,
}

impl Core {
    /// For tests: make the next `count` saves fail as with a full quota; `count: 0` disarms.
    fn debug_fail_saves(&self, p: FailSaves) -> Result<results::FailingSaves, Error> {
        let switch = self.faults.switch().ok_or_else(|| {
            invalid(
                "debug_fail_saves",
                "this core's store cannot inject failures",
            )
        })?;
        switch(p.count);
        Ok(results::FailingSaves { failing: p.count })
    }
}

fn debug_panic(kind: &str, p: requests::DebugPanic) -> Result<results::Never, Error> {
    let message = match &p.message {
        None => "debug_panic requested",
        Some(Value::String(s)) => s.as_str(),
        Some(other) => {
            return Err(invalid(
                kind,
                &format!(
                    "'message' must be a string, got {}",
                    crate::protocol::json_kind(other)
                ),
            ))
        }
    };
    panic!("{message}");
}

/// A response's JSON text. A non-integer id is echoed as the request (`text`) wrote it (see
/// `protocol::id_text`).
fn response_text(response: &Response, text: &str) -> String {
    let id_text = match &response.id {
        Some(RequestId::Number(n)) if n.is_f64() => crate::protocol::id_text(text),
        _ => None,
    };
    response.to_json_with_id(id_text)
}

fn error_body(error: &Error) -> ErrorBody {
    ErrorBody {
        code: error.code(),
        message: error.to_string(),
    }
}
