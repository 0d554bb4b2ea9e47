//! [`Core`]: serves decoded requests from the page.
//!
//! The core is the only place that knows which request types exist; the worker entry in
//! `src/web/` only moves JSON text in and out. Each request type is one entry of
//! [`REQUEST_TYPES`], which is also what `hello` reports as the capability list.
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

mod agents;
mod approvals;
mod bible;
mod chapters;
mod generate;
mod jobs;
mod memory;
pub mod mtl;
mod parts;
mod proactive;
mod research;
mod run;
mod run_state;
mod saving;
mod tree;

use std::cell::RefCell;
use std::rc::Rc;

use serde::Deserialize;
use serde_json::json;
use serde_json::{Map, Value};

use crate::commands::history::Applied;
use crate::commands::{Entry, Moved, Origin, OriginFilter};
use crate::env::{Clock, EventSink, IdSource};
use crate::error::{Error, ProtocolError};
use crate::llm::client::{LlmTransport, Sleeper};
use crate::persist::pending::{Append, Key};
use crate::persist::{self, AuditRecord};
use crate::project::changeset::ChangeSet;
use crate::project::{Chapter, Project};
use crate::protocol::{
    decode_request, ErrorBody, Event, Request, RequestId, Response, PROTOCOL_VERSION,
};
use crate::session::{Session, ToolCall};
use crate::store::{Store, Table};
use crate::tools::{CatalogFormat, ToolRegistry, ToolResult};
pub use parts::{FailSwitch, Llm, Spawner};
use saving::Open;
pub use saving::FEED_LEN;

/// The request types the core serves, in the order `hello` lists them.
pub const REQUEST_TYPES: &[&str] = &[
    "hello",
    "create_project",
    "open_project",
    "list_projects",
    "rename_project",
    "delete_project",
    "export_project",
    "import_project",
    "export_markdown",
    "reload_project",
    "checkpoint",
    "memory",
    "memory_context",
    "write_memory_notes",
    "memory_trash",
    "memory_restore",
    "suggestions",
    "accept_suggestion",
    "dismiss_suggestion",
    "writer_idle",
    "storage_estimate",
    "get_chapter",
    "add_chapter",
    "rename_chapter",
    "move_chapter",
    "delete_chapter",
    "execute",
    "apply_user_change",
    "undo",
    "redo",
    "close_group",
    "history",
    "list_tools",
    "get_settings",
    "set_settings",
    "run",
    "abort_run",
    "start_job",
    "job_status",
    "list_jobs",
    "pause_job",
    "resume_job",
    "cancel_job",
    "job_unit",
    "research_list",
    "research_delete",
    "define_agent",
    "list_agents",
    "delete_agent",
    "list_approvals",
    "approve",
    "bible_list",
    "bible_save",
    "bible_delete",
    "debug_panic",
    "debug_fail_saves",
];

/// Tools whose calls are not audited when they edit nothing: cursor and selection moves.
const UNAUDITED: &[&str] = &["set_selection"];

/// What the core needs from the outside world.
pub struct Env {
    /// Wall-clock time.
    pub clock: Rc<dyn Clock>,
    /// Unique ids.
    pub ids: Rc<dyn IdSource>,
    /// Where events go.
    pub events: Rc<dyn EventSink>,
    /// Where projects are kept.
    pub store: Rc<dyn Store>,
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
    /// Story-bible entities changed (saved, or deleted when gone).
    bible: Vec<(crate::bible::Kind, String)>,
    /// Free files of the `data/` view changed (saved, or deleted when gone).
    files: Vec<String>,
    /// Meta records to put with the change (approval records, job records, research notes).
    meta_puts: Vec<Value>,
    /// Meta records to delete with the change (research notes), by key.
    meta_deletes: Vec<String>,
    /// A job unit's hold to release into this save (its writes go with its progress mark).
    release: Option<String>,
}

/// [`mark_touched`], under `hold` if given: what the mutation touched then waits under the
/// hold instead of being pending now.
fn mark_held(open: &mut Open, touched: Touched, hold: Option<&str>) {
    match hold {
        None => mark_touched(open, touched),
        Some(hold) => {
            let pending = std::mem::take(&mut open.pending);
            mark_touched(open, touched);
            let marked = std::mem::replace(&mut open.pending, pending);
            open.pending.hold(hold, marked);
        }
    }
}

/// Mark what a mutation touched as pending for the project's next save.
fn mark_touched(open: &mut Open, touched: Touched) {
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
        pending.append(Append::Meta(record));
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
    approval: Option<Value>,
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
    who: Option<Value>,
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
    registry: ToolRegistry,
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
    /// Proactive memory: suggestions, analysis figures, the thinker's budget, the monitor.
    proactive: parts::ProactiveMemory,
    /// The model settings in force.
    settings: parts::SettingsState,
    /// The way to call models.
    model: parts::ModelClient,
    /// Fault injection for tests of failed saves (`debug_fail_saves`).
    faults: parts::Faults,
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
            registry: ToolRegistry::standard(),
            projects: parts::Projects::default(),
            runs: parts::Runs::default(),
            approvals: parts::Approvals::default(),
            jobs: parts::Jobs::default(),
            agents: parts::Agents::default(),
            research: parts::ResearchState::default(),
            proactive: parts::ProactiveMemory::default(),
            settings: parts::SettingsState::default(),
            model: parts::ModelClient::default(),
            faults: parts::Faults::default(),
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
        self.agents.open_sessions()
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
        let response = match decode_request(text) {
            Ok(request) => self.handle(request).await,
            Err(decode) => Response {
                id: decode.id,
                outcome: Err(error_body(&Error::from(decode.error))),
            },
        };
        // A non-integer id is echoed as the page wrote it (see `protocol::id_text`).
        let id_text = match &response.id {
            Some(RequestId::Number(n)) if n.is_f64() => crate::protocol::id_text(text),
            _ => None,
        };
        response.to_json_with_id(id_text)
    }

    /// [`Core::handle_text`] for a page that shows `project`: if this client does not have
    /// it open (a new client of the writing worker, or a core restarted after a failure),
    /// it is opened first, so the page's requests reach the project it shows. If it cannot
    /// be opened, the request is served as it is (and fails as it would without a project).
    pub async fn handle_in(&self, text: &str, project: Option<&str>) -> String {
        if let Some(project) = project {
            if self.current_project().as_deref() != Some(project) {
                let _ = self
                    .open_project(OpenProject {
                        id: project.to_string(),
                    })
                    .await;
            }
        }
        self.handle_text(text).await
    }

    /// Serve one decoded request.
    pub async fn handle(&self, request: Request) -> Response {
        let Request {
            id,
            kind,
            mut params,
        } = request;
        let outcome = self
            .dispatch(&kind, &mut params)
            .await
            .map_err(|e| error_body(&e));
        Response {
            id: Some(id),
            outcome,
        }
    }

    /// Serve request `kind`; its handler takes the parameters `p` (they are moved out, not
    /// copied: a request may carry a whole manuscript or a batch of notes).
    async fn dispatch(&self, kind: &str, p: &mut Map<String, Value>) -> Result<Value, Error> {
        match kind {
            "hello" => Ok(self.hello()),
            "create_project" => self.create_project(params(kind, p)?).await,
            "open_project" => self.open_project(params(kind, p)?).await,
            "list_projects" => self.list_projects().await,
            "rename_project" => self.rename_project(params(kind, p)?).await,
            "delete_project" => self.delete_project(params(kind, p)?).await,
            "storage_estimate" => self.storage_estimate().await,
            "reload_project" => self.reload_project(params(kind, p)?).await,
            "checkpoint" => self.checkpoint(params(kind, p)?).await,
            "memory" => self.with_session(|s| memory_json(s)),
            "memory_context" => self.memory_context(params(kind, p)?),
            "write_memory_notes" => self.write_memory_notes(params(kind, p)?).await,
            "memory_trash" => self.memory_trash(),
            "memory_restore" => self.memory_restore(params(kind, p)?).await,
            "suggestions" => self.list_suggestions(params(kind, p)?).await,
            "accept_suggestion" => self.accept_suggestion(params(kind, p)?).await,
            "dismiss_suggestion" => self.dismiss_suggestion(params(kind, p)?).await,
            "writer_idle" => self.writer_idle(params(kind, p)?).await,
            "export_project" => self.export_project(params(kind, p)?).await,
            "import_project" => self.import_project(params(kind, p)?).await,
            "export_markdown" => self.export_markdown(params(kind, p)?).await,
            "get_chapter" => self.get_chapter(params(kind, p)?),
            "add_chapter" => self.add_chapter(params(kind, p)?).await,
            "rename_chapter" => self.rename_chapter(params(kind, p)?).await,
            "move_chapter" => self.move_chapter(params(kind, p)?).await,
            "delete_chapter" => self.delete_chapter(params(kind, p)?).await,
            "execute" => self.execute(params(kind, p)?).await,
            "apply_user_change" => self.apply_user_change(params(kind, p)?).await,
            "undo" => self.undo(params(kind, p)?).await,
            "redo" => self.redo().await,
            "close_group" => {
                self.mutate(|s| {
                    s.history.close_group();
                    Ok((json!({}), Touched::default()))
                })
                .await
            }
            "history" => self.with_session(|s| history_json(s)),
            "list_tools" => self.list_tools(params(kind, p)?),
            "get_settings" => self.get_settings().await,
            "set_settings" => self.set_settings(params(kind, p)?).await,
            "run" => self.run(params(kind, p)?).await,
            "abort_run" => self.abort_run(params(kind, p)?).await,
            "start_job" => self.start_job(params(kind, p)?).await,
            "job_status" => self.job_status(params(kind, p)?).await,
            "list_jobs" => self.list_jobs().await,
            "pause_job" => self.pause_job(params(kind, p)?).await,
            "resume_job" => self.resume_job(params(kind, p)?).await,
            "cancel_job" => self.cancel_job(params(kind, p)?).await,
            "job_unit" => self.job_unit(params(kind, p)?).await,
            "research_list" => self.research_list().await,
            "research_delete" => self.research_delete(params(kind, p)?).await,
            "define_agent" => self.define_agent(params(kind, p)?).await,
            "list_agents" => self.list_agents().await,
            "delete_agent" => self.delete_agent(params(kind, p)?).await,
            "list_approvals" => self.list_approvals(params(kind, p)?).await,
            "approve" => self.approve(params(kind, p)?).await,
            "bible_list" => self.bible_list(params(kind, p)?),
            "bible_save" => self.bible_save(params(kind, p)?).await,
            "bible_delete" => self.bible_delete(params(kind, p)?).await,
            "debug_panic" => debug_panic(kind, p),
            "debug_fail_saves" => self.debug_fail_saves(params(kind, p)?),
            other => Err(ProtocolError::UnknownRequest {
                name: other.to_string(),
                hint: crate::names::did_you_mean(other, REQUEST_TYPES.iter().copied()),
            }
            .into()),
        }
    }

    /// The `hello` result: who we are and what we serve.
    pub fn hello(&self) -> Value {
        json!({
            "name": "draftsmith",
            "version": crate::VERSION,
            "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
            "protocol": PROTOCOL_VERSION,
            "capabilities": REQUEST_TYPES,
        })
    }

    /// Send an event. It concerns the project its data names (`project`, or `id` for
    /// `project_deleted`), else this client's open project; the events every page needs
    /// (the project list, settings, memory, which holds global notes) concern none.
    fn emit(&self, kind: &str, data: Value) {
        let project = match kind {
            "projects_changed" | "settings_changed" | "memory_changed" => None,
            _ => {
                let named = if kind == "project_deleted" {
                    data.get("id")
                } else {
                    data.get("project")
                };
                named
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(|| self.current_project())
            }
        };
        self.env.events.emit(
            Event::new(kind, data)
                .in_project(project)
                .by_client(self.client.clone()),
        );
    }

    fn emit_edits(&self, edits: &[Applied], origin: &Origin) {
        for edit in edits {
            self.emit(
                "edit",
                json!({
                    "chapter": edit.chapter,
                    "changeset": edit.change,
                    "version": edit.version,
                    "origin": origin,
                }),
            );
        }
    }

    /// Announce changed story-bible entities: `bible_changed {project, kind, id, origin,
    /// entity}` (`entity` is `null` when it was deleted).
    fn emit_bible(
        &self,
        session: &Session,
        changed: &[(crate::bible::Kind, String)],
        origin: &Origin,
    ) {
        for (kind, id) in changed {
            self.emit(
                "bible_changed",
                json!({
                    "project": session.project.id,
                    "kind": kind,
                    "id": id,
                    "origin": origin.to_string(),
                    "entity": session.bible.get(*kind, id).map(crate::bible::Entity::flat),
                }),
            );
        }
    }

    /// Announce changed free files of the `data/` view: `files_changed {project, path,
    /// origin, size?, mod_time?}` (`deleted: true` and no size when it is gone).
    fn emit_files(&self, session: &Session, changed: &[String], origin: &Origin) {
        for path in changed {
            let mut data = json!({
                "project": session.project.id,
                "path": path,
                "origin": crate::files::file_origin(origin),
            });
            match session.files.get(path) {
                Some(file) => {
                    data["size"] = json!(file.size());
                    data["mod_time"] = json!(file.mod_time);
                }
                None => data["deleted"] = json!(true),
            }
            self.emit("files_changed", data);
        }
    }

    fn emit_history(&self, session: &Session) {
        self.emit(
            "history_changed",
            json!({
                "canUndo": session.history.can_undo(),
                "canRedo": session.history.can_redo(),
                "groups": session.history.undo_groups(),
            }),
        );
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
        let page;
        let project = match on.project {
            Some(project) => project,
            None => {
                page = self.current()?;
                &page
            }
        };
        let value = self.mutate_now(project, on.hold, f)?;
        self.settle(project).await;
        Ok(value)
    }

    /// The synchronous part of [`Core::mutate_on`]: run `f` on project `current`'s session
    /// and mark what it touched as pending (under `hold`, if given). The saving is left to
    /// [`Core::settle`], so each mutation's future holds only its value across the save, and
    /// the save's code is not repeated per closure.
    fn mutate_now<T>(
        &self,
        current: &str,
        hold: Option<&str>,
        f: impl FnOnce(&mut Session) -> Result<(T, Touched), Error>,
    ) -> Result<T, Error> {
        let mut open = self.open_mut(current)?;
        let (value, touched) = f(&mut open.session)?;
        mark_held(&mut open, touched, hold);
        Ok(value)
    }

    /// Open project `current`, for a mutation (one copy for every [`Core::mutate_now`]).
    fn open_mut(&self, current: &str) -> Result<std::cell::RefMut<'_, Open>, Error> {
        self.projects.open_mut(current)
    }

    /// Save what a mutation left pending. A failed save is reported to the page
    /// (`storage_error`) and stays pending; the change itself is kept in memory.
    async fn settle(&self, current: &str) {
        let _ = self.flush(current, false).await;
    }

    async fn create_project(&self, p: CreateProject) -> Result<Value, Error> {
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
        let summary = project_json(&session.project);
        // Nothing is created unless it is stored.
        let stored = self.store_new(&mut session, now, now).await?;
        self.projects.insert(&id, Open::new(session, now, stored));
        self.fresh_proactive(&id);
        *self.current.borrow_mut() = Some(id);
        self.emit_projects_changed();
        Ok(summary)
    }

    /// Write a new (or imported) project whole, in one batch.
    async fn store_new(
        &self,
        session: &mut Session,
        created_ms: u64,
        now_ms: u64,
    ) -> Result<persist::pending::Stored, Error> {
        let _ = session.history.take_changes();
        let pending = persist::pending::Pending::everything(session);
        let mut stored = persist::pending::Stored::default();
        let (batch, receipt) =
            persist::pending::batch(session, &pending, &stored, created_ms, now_ms, true)?;
        self.env.store.commit(batch).await?;
        stored.apply(&receipt);
        Ok(stored)
    }

    async fn open_project(&self, p: OpenProject) -> Result<Value, Error> {
        let unsaved = self.projects.read(&p.id, Open::unsaved);
        if unsaved == Some(true) {
            // Open already, with work a failed save left: try to save it again (a failure is
            // reported and it stays pending; the open copy is never replaced).
            let _ = self.flush(&p.id, false).await;
        }
        if unsaved.is_none() {
            let loaded = self
                .load_session(&p.id)
                .await?
                .ok_or_else(|| Error::NoProject(format!("no project with id '{}'", p.id)))?;
            self.projects
                .insert_if_closed(&p.id, || Open::loaded(loaded));
        }
        let summary = self.projects.read(&p.id, open_json).unwrap_or_default();
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

    async fn list_projects(&self) -> Result<Value, Error> {
        let projects = persist::list(self.env.store.as_ref()).await?;
        let list: Vec<Value> = projects
            .iter()
            .map(|p| {
                json!({"id": p.id, "name": p.name, "chapters": p.chapters.len(),
                       "createdMs": p.created_ms, "updatedMs": p.updated_ms})
            })
            .collect();
        Ok(json!({ "projects": list, "current": *self.current.borrow() }))
    }

    async fn rename_project(&self, p: RenameProject) -> Result<Value, Error> {
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
                Ok((project_json(&s.project), touched))
            })
            .await?;
        self.emit_projects_changed();
        Ok(result)
    }

    async fn delete_project(&self, p: OpenProject) -> Result<Value, Error> {
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
        Ok(json!({ "deleted": p.id }))
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

    async fn export_project(&self, p: ProjectRef) -> Result<Value, Error> {
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
        Ok(crate::error::to_json(&doc))
    }

    async fn export_markdown(&self, p: ProjectRef) -> Result<Value, Error> {
        self.target_project(p.id).await?;
        self.with_session(|s| Ok(json!({ "markdown": persist::markdown(&s.project) })))
    }

    async fn import_project(&self, p: ImportProject) -> Result<Value, Error> {
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
        let stored = self
            .store_new(&mut session, created_ms, self.env.clock.now_ms())
            .await?;
        self.store_imported_agents(&id, agents).await?;
        self.store_imported_research(&id, research).await?;
        let summary = project_json(&session.project);
        self.projects
            .insert(&id, Open::new(session, created_ms, stored));
        *self.current.borrow_mut() = Some(id);
        self.emit_projects_changed();
        Ok(summary)
    }

    /// A stored project, with the locks of the approvals that wait in it.
    async fn load_session(&self, id: &str) -> Result<Option<persist::Loaded>, Error> {
        let Some(mut loaded) = persist::load(self.env.store.as_ref(), id).await? else {
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
    async fn reload_project(&self, p: OpenProject) -> Result<Value, Error> {
        // A few tries: a change made while the stored copy was being read is saved first too.
        for _ in 0..3 {
            let unsaved = match self.projects.read(&p.id, Open::unsaved) {
                None => return Ok(json!({ "reloaded": false })),
                Some(unsaved) => unsaved,
            };
            if unsaved && self.flush(&p.id, true).await.is_err() {
                return Ok(json!({ "reloaded": false, "unsaved": true }));
            }
            let loaded = self.load_session(&p.id).await?;
            match self.projects.read(&p.id, Open::unsaved) {
                None => return Ok(json!({ "reloaded": false })),
                // Changed while we read: save that first, then read again.
                Some(true) => continue,
                Some(false) => {}
            }
            match loaded {
                Some(loaded) => {
                    let open = Open::loaded(loaded);
                    let mut summary = open_json(&open);
                    summary["project"] = json!(p.id);
                    self.projects.insert(&p.id, open);
                    self.emit("project_reloaded", summary);
                }
                None => {
                    // Deleted elsewhere.
                    self.projects.remove(&p.id);
                    if self.current.borrow().as_deref() == Some(p.id.as_str()) {
                        *self.current.borrow_mut() = None;
                    }
                    self.emit("project_deleted", json!({ "id": p.id }));
                }
            }
            return Ok(json!({ "reloaded": true }));
        }
        Ok(json!({ "reloaded": false, "unsaved": true }))
    }

    /// `checkpoint {id?}`: write the whole text of every chapter of the project (the current
    /// one by default) that changed since its last checkpoint, and whatever waits to be saved
    /// lazily (the cursor and selection). The worker sends it when the writer is idle.
    /// Answers `{checkpointed: [chapter ids], saved}` (`saved: false` after a failed save,
    /// which is also reported as `storage_error`; it stays pending).
    async fn checkpoint(&self, p: ProjectRef) -> Result<Value, Error> {
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
        Ok(json!({ "checkpointed": checkpointed, "saved": saved }))
    }

    /// Write many notes at once (an import, or a benchmark): all of them or, if one is
    /// invalid, none, with an error naming which one. At most 1,000 per request.
    async fn write_memory_notes(&self, p: WriteNotes) -> Result<Value, Error> {
        if p.notes.len() > 1_000 {
            return Err(invalid(
                "write_memory_notes",
                "at most 1000 notes per request; send them in batches",
            ));
        }
        let current = self.current()?;
        let value = {
            let mut open = self.projects.open_mut(&current)?;
            let open = &mut *open;
            let s = &mut open.session;
            let project = s.project.id.clone();
            let now = self.env.clock.now_ms();
            let written = s
                .memory
                .write_notes(&project, p.notes, now, self.env.ids.as_ref())
                .map_err(|(i, e)| {
                    invalid(
                        "write_memory_notes",
                        &format!("note {i}: {e}; no note was written"),
                    )
                })?;
            if !written.is_empty() {
                self.emit(
                    "memory_changed",
                    json!({ "project": project, "written": written.len() }),
                );
            }
            let result = json!({ "written": written });
            // Expired deleted notes go with this write (their records are deleted).
            let mut notes_written = written;
            notes_written.extend(s.memory.purge_expired(now));
            let touched = Touched {
                notes_written,
                ..Touched::default()
            };
            mark_touched(open, touched);
            result
        };
        // The new notes are indexed for search while IndexedDB writes them: the save places
        // its writes at its first poll, then the index is brought up to date, then the save
        // is awaited.
        let index = async {
            self.projects
                .update(&current, |open| open.session.memory.catch_up_index());
        };
        let _ = futures_util::future::join(self.flush(&current, false), index).await;
        Ok(value)
    }

    fn memory_context(&self, p: MemoryContext) -> Result<Value, Error> {
        self.with_session(|s| {
            let block =
                s.memory
                    .context_block(&s.project.id, &p.request, p.budget.unwrap_or(2_000));
            Ok(json!({ "block": block }))
        })
    }

    async fn storage_estimate(&self) -> Result<Value, Error> {
        Ok(match self.env.store.estimate().await? {
            Some((usage, quota)) => json!({"usage": usage, "quota": quota}),
            None => json!({"usage": null, "quota": null}),
        })
    }

    fn emit_projects_changed(&self) {
        self.emit(
            "projects_changed",
            json!({ "current": *self.current.borrow() }),
        );
    }

    /// `get_chapter {chapter?, since?}`: the chapter's text and version; with `since`, also
    /// `changes`: the changes after version `since` (`{version, changeset, origin, tag?}`,
    /// oldest first), or `null` when the change feed no longer holds all of them.
    fn get_chapter(&self, p: GetChapter) -> Result<Value, Error> {
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
            let mut result = json!({
                "id": chapter.id,
                "title": chapter.title,
                "number": number,
                "text": chapter.text().to_string(),
                "version": chapter.version(),
            });
            if let Some(since) = p.since {
                result["changes"] = match open.changes_since(&chapter.id, since) {
                    Some(changes) => changes.iter().map(|c| c.feed_json()).collect(),
                    None => Value::Null,
                };
            }
            Ok(result)
        })
    }

    /// `execute {tool, args, origin?, callId?}`. A call whose `callId` the history already
    /// holds for the same tool was applied before (a resend after a lost response): it is
    /// not run again, and answers `{status: "success", data: {duplicate: true}}` with the
    /// history entry as its `command_id`.
    async fn execute(&self, p: Execute) -> Result<Value, Error> {
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
                return Ok(crate::error::to_json(&result));
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
        Ok(crate::error::to_json(&result))
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
        let (hold, in_run) = (ctx.hold.clone(), ctx.run.is_some());
        let (mut result, edits) = self.execute_tool(project, call, origin, ctx).await?;
        if interpret && result.is_success() {
            self.interpret_analysis(&mut result, abort).await;
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
                    &self.registry,
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
                    if let Some(group) = &ctx.group {
                        record["group"] = json!(group);
                    }
                    if let Some(who) = &ctx.who {
                        record["who"] = who.clone();
                    }
                    approvals::lock(s, &record);
                    match &ctx.run {
                        Some(run) if ctx.card_with_pause && ctx.hold.is_none() => {
                            self.runs.add_card(run, record);
                        }
                        _ => {
                            requested = Some(record.clone());
                            meta_puts.push(record);
                        }
                    }
                } else if let Some(mut record) = ctx.approval.clone() {
                    record["state"] = json!("done");
                    record["result"] = crate::error::to_json(&outcome.result);
                    meta_puts.push(record);
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
            self.emit("ui", crate::error::to_json(&s.project.ui));
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
            self.emit(
                "memory_changed",
                json!({ "project": s.project.id, "tool": tool }),
            );
        }
        self.emit_bible(s, &outcome.bible, &origin);
        self.emit_files(s, &outcome.files, &origin);
        // Cursor and selection moves are not audited.
        let audit = (!(UNAUDITED.contains(&tool) && outcome.edits.is_empty())).then_some(audit);
        let mut touched = Touched {
            ui: outcome.ui_changed || !outcome.edits.is_empty(),
            changes: persist::ChangeRecord::of(&outcome.edits, &origin, None),
            audit,
            memory: outcome.memory,
            bible: outcome.bible.clone(),
            files: outcome.files.clone(),
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
    async fn apply_user_change(&self, p: UserChange) -> Result<Value, Error> {
        let current = self.current()?;
        if let Some(tag) = &p.tag {
            let first = self.with_open(&current, |open| {
                let chapter = open.session.project.find_chapter(&p.chapter)?;
                Ok(open.tagged(&chapter.id, tag).cloned())
            })?;
            if let Some(first) = first {
                return Ok(json!({
                    "chapter": first.chapter,
                    "version": first.version,
                    "changeset": first.changeset,
                    "rebased": p.base_version.saturating_add(1) < first.version,
                    "tag": tag,
                    "duplicate": true,
                }));
            }
        }
        // Suggestions are loaded before the monitor looks at the change.
        let _ = self.ensure_proactive(&current).await;
        self.writer_typed(&current);
        self.mutate(|s| {
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
            let mut event = json!({
                "chapter": applied.chapter,
                "changeset": applied.change,
                "version": applied.version,
                "origin": Origin::User,
            });
            if let Some(tag) = &p.tag {
                event["tag"] = json!(tag);
            }
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
            self.emit("edit", event);
            self.emit_history(s);
            let mut result = json!({
                "chapter": applied.chapter,
                "version": applied.version,
                "changeset": applied.change,
                "rebased": rebased,
            });
            if let Some(tag) = p.tag {
                result["tag"] = json!(tag);
            }
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
        .await
    }

    async fn undo(&self, p: Undo) -> Result<Value, Error> {
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

    async fn redo(&self) -> Result<Value, Error> {
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
    ) -> Result<(Value, Touched), Error> {
        let Moved {
            applied,
            files,
            kept,
        } = moved;
        if !applied.is_empty() {
            self.emit_edits(&applied, by);
        }
        self.emit_files(s, &files, by);
        self.emit_history(s);
        let edits: Vec<Value> = applied
            .iter()
            .map(|a| json!({"chapter": a.chapter, "changeset": a.change, "version": a.version}))
            .collect();
        let mut result = json!({
            "applied": edits,
            "files": files,
            "filesKept": kept,
            "canUndo": s.history.can_undo(),
            "canRedo": s.history.can_redo(),
        });
        if !kept.is_empty() {
            result["note"] = json!(format!(
                "{} changed since (a later write), so the later content was kept: {}",
                if kept.len() == 1 {
                    "a file"
                } else {
                    "some files"
                },
                kept.join(", ")
            ));
        }
        let mut touched = Touched {
            ui: true,
            changes: persist::ChangeRecord::of(&applied, by, None),
            files,
            ..Touched::default()
        };
        // What undo or redo brought back, or took away, of the watched entities.
        self.monitor_edits(s, &applied, None, &mut touched);
        Ok((result, touched))
    }

    fn list_tools(&self, p: ListTools) -> Result<Value, Error> {
        let toolset = p.toolset.as_deref().unwrap_or(crate::tools::ALL);
        match p.format.as_deref() {
            None | Some("neutral") => {
                let tools = self.registry.toolset(toolset)?;
                Ok(json!({ "tools": tools }))
            }
            Some(f) => {
                let format: CatalogFormat =
                    f.parse().map_err(|e: String| invalid("list_tools", &e))?;
                Ok(self.registry.catalog(format, toolset)?)
            }
        }
    }
}

fn entry_json(e: &Entry) -> Value {
    json!({
        "id": e.id,
        "group": e.group,
        "origin": e.origin,
        "description": e.description,
        "timestamp": e.timestamp_ms,
        "toolCallId": e.tool_call_id,
        "command": e.command,
        "kind": e.kind,
        "reverted": e.reverted_by.is_some(),
        "files": e.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
    })
}

fn history_json(s: &Session) -> Result<Value, Error> {
    Ok(json!({
        "entries": s.history.entries().iter().rev().map(entry_json).collect::<Vec<_>>(),
        "redo": s.history.redo_runs().iter().rev().flatten().map(entry_json).collect::<Vec<_>>(),
        "canUndo": s.history.can_undo(),
        "canRedo": s.history.can_redo(),
        "memoryBytes": s.history.memory_bytes(),
    }))
}

/// Everything the memory panel shows: the bedside note, goals, watched entities and notes
/// visible from the project (newest first).
fn memory_json(s: &Session) -> Result<Value, Error> {
    let id = s.project.id.as_str();
    let mut notes: Vec<&crate::memory::MemoryNote> = s.memory.visible_notes(id).collect();
    notes.sort_by_key(|n| std::cmp::Reverse(n.updated_ms));
    Ok(json!({
        "bedside": s.memory.bedside(id),
        "goals": s.memory.project_goals(id).collect::<Vec<_>>(),
        "watched": s.memory.project_watched(id).collect::<Vec<_>>(),
        "notes": notes.into_iter().filter(|n| !n.is_bedside()).collect::<Vec<_>>(),
    }))
}

fn project_json(project: &Project) -> Value {
    let chapters: Vec<Value> = project
        .chapters
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({"id": c.id, "title": c.title, "number": i + 1, "version": c.version(), "length": c.len_chars()})
        })
        .collect();
    json!({
        "id": project.id,
        "name": project.name,
        "chapters": chapters,
        "ui": project.ui,
    })
}

/// An open project's summary, with `problems` when its stored data was damaged.
fn open_json(open: &Open) -> Value {
    let mut summary = project_json(&open.session.project);
    if !open.problems.is_empty() {
        summary["problems"] = json!(open.problems);
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

/// Parse a request's params into a typed struct, naming the field that does not fit.
fn params<T: serde::de::DeserializeOwned>(
    request: &str,
    params: &mut Map<String, Value>,
) -> Result<T, Error> {
    serde_json::from_value(take_params(params)).map_err(|err| params_error(request, err))
}

/// A request's parameters moved out of it (one copy for every params type).
#[inline(never)]
fn take_params(params: &mut Map<String, Value>) -> Value {
    Value::Object(std::mem::take(params))
}

/// [`params`]' error (one copy for every params type).
#[inline(never)]
fn params_error(request: &str, err: serde_json::Error) -> Error {
    invalid(request, &err.to_string())
}

#[derive(Deserialize)]
struct NewChapter {
    #[serde(default)]
    title: String,
    #[serde(default)]
    text: String,
}

#[derive(Deserialize)]
struct CreateProject {
    name: String,
    #[serde(default)]
    chapters: Vec<NewChapter>,
}

#[derive(Deserialize)]
struct OpenProject {
    id: String,
}

#[derive(Deserialize)]
struct WriteNotes {
    notes: Vec<crate::memory::NewNote>,
}

#[derive(Deserialize)]
struct MemoryContext {
    #[serde(default)]
    request: String,
    #[serde(default)]
    budget: Option<usize>,
}

#[derive(Deserialize)]
struct ProjectRef {
    #[serde(default)]
    id: Option<String>,
}

#[derive(Deserialize)]
struct ImportProject {
    document: Value,
}

#[derive(Deserialize)]
struct RenameProject {
    #[serde(default)]
    id: Option<String>,
    name: String,
}

#[derive(Deserialize)]
struct GetChapter {
    #[serde(default)]
    chapter: Option<String>,
    #[serde(default)]
    since: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Execute {
    tool: String,
    #[serde(default)]
    args: Value,
    #[serde(default)]
    origin: Option<String>,
    #[serde(default, alias = "call_id")]
    call_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UserChange {
    chapter: String,
    #[serde(alias = "base_version")]
    base_version: u64,
    #[serde(alias = "changeset")]
    changes: ChangeSet,
    /// The page's label for this change, echoed in its `edit` event and the result (so an
    /// editor can tell its own change from others').
    #[serde(default)]
    tag: Option<String>,
}

#[derive(Deserialize)]
struct Undo {
    #[serde(default)]
    origin: Option<String>,
    #[serde(default)]
    by: Option<String>,
}

#[derive(Deserialize)]
struct ListTools {
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    toolset: Option<String>,
}

/// `debug_panic {message?}`: panics on purpose, so that tests and embedders can check that a
/// panic in the worker reaches the page as an error event and the worker recovers.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FailSaves {
    count: u64,
}

impl Core {
    /// For tests: make the next `count` saves fail as with a full quota; `count: 0` disarms.
    fn debug_fail_saves(&self, p: FailSaves) -> Result<Value, Error> {
        let switch = self.faults.switch().ok_or_else(|| {
            invalid(
                "debug_fail_saves",
                "this core's store cannot inject failures",
            )
        })?;
        switch(p.count);
        Ok(json!({ "failing": p.count }))
    }
}

fn debug_panic(kind: &str, p: &Map<String, Value>) -> Result<Value, Error> {
    let message = match p.get("message") {
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

fn error_body(error: &Error) -> ErrorBody {
    ErrorBody {
        code: error.code(),
        message: error.to_string(),
    }
}
