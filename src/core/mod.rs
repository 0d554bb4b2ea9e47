//! [`Core`]: serves decoded requests from the page.
//!
//! The core is the only place that knows which request types exist; the worker entry in
//! `src/web/` only moves JSON text in and out. Each request type is one entry of
//! [`REQUEST_TYPES`], which is also what `hello` reports as the capability list.
//!
//! Open projects are cached in memory; the [`Store`] is the source of truth. Every mutation
//! goes through the open project's [`Session`], borrowed mutably for the length of one
//! synchronous operation (the one exclusive edit path), and is then saved as one batch: the
//! state change, its history records and its audit record commit together or not at all. If
//! a save fails (a full quota, say), the in-memory state stays, the page gets a
//! `storage_error` event, and the next save writes the whole project.

mod approvals;
mod bible;
mod chapters;
mod generate;
mod memory;
pub mod mtl;
mod run;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::commands::history::Applied;
use crate::commands::{Category, Entry, Origin, OriginFilter};
use crate::env::{Clock, EventSink, IdSource};
use crate::error::{Error, ProtocolError};
use crate::llm::client::{LlmTransport, Sleeper};
use crate::persist::{self, AuditRecord};
use crate::project::changeset::ChangeSet;
use crate::project::{Chapter, Project};
use crate::protocol::{decode_request, ErrorBody, Event, Request, Response, PROTOCOL_VERSION};
use crate::session::{Session, ToolCall};
use crate::settings::Settings;
use crate::store::{Batch, Op, Store, StoreError, Table};
use crate::tools::{CatalogFormat, ToolRegistry, ToolResult};

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
    "memory",
    "memory_context",
    "write_memory_notes",
    "memory_trash",
    "memory_restore",
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
    "list_approvals",
    "approve",
    "bible_list",
    "bible_save",
    "bible_delete",
    "debug_panic",
];

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

/// An open project: its session and what saving needs to know.
struct Open {
    session: Session,
    created_ms: u64,
    /// The last save failed: the next one writes everything.
    needs_full_save: bool,
    /// Deletes of saves that failed (history entries undone or dropped, chapters deleted):
    /// a full save writes what exists but cannot know what should no longer be there, so
    /// these go first in the next save.
    pending_deletes: Vec<(Table, String)>,
}

impl Open {
    fn new(session: Session, created_ms: u64) -> Self {
        Self {
            session,
            created_ms,
            needs_full_save: false,
            pending_deletes: Vec::new(),
        }
    }
}

/// What a mutation touched, for its save.
#[derive(Default)]
struct Touched {
    /// The project record changed (name, UI state, history position).
    project: bool,
    chapters: Vec<String>,
    /// Chapters deleted (their records are deleted).
    deleted_chapters: Vec<String>,
    audit: Option<AuditRecord>,
    /// The memory before a memory tool ran (its changes are saved).
    memory_before: Option<persist::MemorySnapshot>,
    /// Notes written in bulk (saved as they are).
    notes_written: Vec<String>,
    /// Story-bible entities changed (saved, or deleted when gone).
    bible: Vec<(crate::bible::Kind, String)>,
    /// Free files of the `data/` view changed (saved, or deleted when gone).
    files: Vec<String>,
    /// Meta records to put with the change (approval records).
    meta_puts: Vec<Value>,
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
}

/// How the core reaches models: a transport and a sleeper (for backoff and timeouts).
pub struct Llm {
    /// Sends model requests.
    pub transport: Rc<dyn LlmTransport>,
    /// Waits.
    pub sleeper: Rc<dyn Sleeper>,
}

/// The agent core behind the worker.
pub struct Core {
    env: Env,
    registry: ToolRegistry,
    sessions: RefCell<BTreeMap<String, Open>>,
    current: RefCell<Option<String>>,
    llm: Option<Llm>,
    settings: RefCell<Settings>,
    settings_loaded: Cell<bool>,
    runs: RefCell<BTreeMap<String, run::RunHandle>>,
    /// Run ids aborted before their run began.
    early_aborts: RefCell<std::collections::BTreeSet<String>>,
    /// Each run's single-use guards (see [`crate::session::EditContext::take_guard`]).
    guards: RefCell<BTreeMap<String, std::collections::BTreeSet<String>>>,
    /// Each project's conversation with the assistant (without the system prompt).
    conversations: RefCell<BTreeMap<String, Vec<crate::llm::Message>>>,
    jitter: Cell<u64>,
}

impl Core {
    /// A core in the given environment, with the standard tools.
    pub fn new(env: Env) -> Self {
        Self {
            env,
            registry: ToolRegistry::standard(),
            sessions: RefCell::new(BTreeMap::new()),
            current: RefCell::new(None),
            llm: None,
            settings: RefCell::new(Settings::default()),
            settings_loaded: Cell::new(false),
            runs: RefCell::new(BTreeMap::new()),
            early_aborts: RefCell::new(std::collections::BTreeSet::new()),
            guards: RefCell::new(BTreeMap::new()),
            conversations: RefCell::new(BTreeMap::new()),
            jitter: Cell::new(0x9e37_79b9_7f4a_7c15),
        }
    }

    /// The same core, able to call models through `transport` (runs, generation tools).
    pub fn with_llm(mut self, transport: Rc<dyn LlmTransport>, sleeper: Rc<dyn Sleeper>) -> Self {
        self.llm = Some(Llm { transport, sleeper });
        self
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
        response.to_json()
    }

    /// Serve one decoded request.
    pub async fn handle(&self, request: Request) -> Response {
        let outcome = self.dispatch(&request).await.map_err(|e| error_body(&e));
        Response {
            id: Some(request.id),
            outcome,
        }
    }

    async fn dispatch(&self, request: &Request) -> Result<Value, Error> {
        let p = &request.params;
        let kind = request.kind.as_str();
        match kind {
            "hello" => Ok(self.hello()),
            "create_project" => self.create_project(params(kind, p)?).await,
            "open_project" => self.open_project(params(kind, p)?).await,
            "list_projects" => self.list_projects().await,
            "rename_project" => self.rename_project(params(kind, p)?).await,
            "delete_project" => self.delete_project(params(kind, p)?).await,
            "storage_estimate" => self.storage_estimate().await,
            "reload_project" => self.reload_project(params(kind, p)?).await,
            "memory" => self.with_session(|s| memory_json(s)),
            "memory_context" => self.memory_context(params(kind, p)?),
            "write_memory_notes" => self.write_memory_notes(params(kind, p)?).await,
            "memory_trash" => self.memory_trash(),
            "memory_restore" => self.memory_restore(params(kind, p)?).await,
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
            "list_approvals" => self.list_approvals(params(kind, p)?).await,
            "approve" => self.approve(params(kind, p)?).await,
            "bible_list" => self.bible_list(params(kind, p)?),
            "bible_save" => self.bible_save(params(kind, p)?).await,
            "bible_delete" => self.bible_delete(params(kind, p)?).await,
            "debug_panic" => debug_panic(request),
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

    fn emit(&self, kind: &str, data: Value) {
        self.env.events.emit(Event::new(kind, data));
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
        let mut sessions = self.sessions.borrow_mut();
        let open = sessions
            .get_mut(current)
            .ok_or_else(|| Error::NoProject(format!("project '{current}' is not open")))?;
        f(&mut open.session)
    }

    /// Run a mutation on the open project's session (the exclusive edit path), then save
    /// what it touched as one batch.
    async fn mutate<T>(
        &self,
        f: impl FnOnce(&mut Session) -> Result<(T, Touched), Error>,
    ) -> Result<T, Error> {
        let current = self.current()?;
        self.mutate_in(&current, f).await
    }

    /// [`Core::mutate`] on project `current` (open, but not necessarily the page's).
    async fn mutate_in<T>(
        &self,
        current: &str,
        f: impl FnOnce(&mut Session) -> Result<(T, Touched), Error>,
    ) -> Result<T, Error> {
        let now = self.env.clock.now_ms();
        let (value, batch) = {
            let mut sessions = self.sessions.borrow_mut();
            let open = sessions
                .get_mut(current)
                .ok_or_else(|| Error::NoProject(format!("project '{current}' is not open")))?;
            let (value, touched) = f(&mut open.session)?;
            let batch = if open.needs_full_save {
                persist::full_save(&mut open.session, open.created_ms, now)
            } else {
                persist::changes(
                    &mut open.session,
                    touched.project,
                    &touched.chapters,
                    touched.audit.as_ref(),
                    touched.memory_before.as_ref(),
                    open.created_ms,
                    now,
                )
            };
            let batch = batch.map(|mut batch| {
                batch.extend(persist::note_puts(
                    &open.session.memory,
                    &touched.notes_written,
                ));
                batch.extend(persist::chapter_deletes(&touched.deleted_chapters));
                batch.extend(persist::bible_changes(&open.session, &touched.bible));
                batch.extend(persist::file_changes(&open.session, &touched.files));
                for record in touched.meta_puts {
                    batch.put_value(Table::Meta, record);
                }
                // Deletes first: what this batch puts wins over an older delete of it.
                let pending = open
                    .pending_deletes
                    .drain(..)
                    .map(|(table, key)| Op::Delete { table, key });
                batch.ops.splice(0..0, pending);
                batch
            });
            (value, batch)
        };
        match batch {
            Ok(batch) => self.save(current, batch).await,
            Err(e) => self.save_failed(current, &e),
        }
        Ok(value)
    }

    /// Commit a batch for a project; on failure keep the in-memory state and say so.
    async fn save(&self, project: &str, batch: Batch) {
        // Whether anything but the audit log changed (other tabs reload only then).
        let changed = batch.tables().iter().any(|t| *t != Table::Audit);
        let deletes: Vec<(Table, String)> = batch
            .ops
            .iter()
            .filter_map(|op| match op {
                Op::Delete { table, key } => Some((*table, key.clone())),
                Op::Put { .. } | Op::Expect { .. } => None,
            })
            .collect();
        match self.env.store.commit(batch).await {
            Ok(()) => {
                if let Some(open) = self.sessions.borrow_mut().get_mut(project) {
                    open.needs_full_save = false;
                }
                self.emit(
                    "saved",
                    json!({ "project": project, "at": self.env.clock.now_ms(), "changed": changed }),
                );
            }
            Err(e) => {
                if let Some(open) = self.sessions.borrow_mut().get_mut(project) {
                    open.pending_deletes.extend(deletes);
                }
                self.save_failed(project, &e);
            }
        }
    }

    fn save_failed(&self, project: &str, error: &StoreError) {
        if let Some(open) = self.sessions.borrow_mut().get_mut(project) {
            open.needs_full_save = true;
        }
        let code = match error {
            StoreError::Quota(_) => "quota_exceeded",
            _ => "storage_failed",
        };
        self.emit(
            "storage_error",
            json!({
                "project": project,
                "code": code,
                "message": format!("{error}. Your work is kept in memory; it will be saved when storage works again."),
            }),
        );
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
        let batch = persist::full_save(&mut session, now, now)?;
        // Nothing is created unless it is stored.
        self.env.store.commit(batch).await?;
        self.sessions
            .borrow_mut()
            .insert(id.clone(), Open::new(session, now));
        *self.current.borrow_mut() = Some(id);
        self.emit_projects_changed();
        Ok(summary)
    }

    async fn open_project(&self, p: OpenProject) -> Result<Value, Error> {
        if !self.sessions.borrow().contains_key(&p.id) {
            let (session, created_ms) = self
                .load_session(&p.id)
                .await?
                .ok_or_else(|| Error::NoProject(format!("no project with id '{}'", p.id)))?;
            self.sessions
                .borrow_mut()
                .entry(p.id.clone())
                .or_insert(Open::new(session, created_ms));
        }
        let summary = self
            .sessions
            .borrow()
            .get(&p.id)
            .map(|o| project_json(&o.session.project))
            .unwrap_or_default();
        *self.current.borrow_mut() = Some(p.id);
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
        let known = self.sessions.borrow().contains_key(&p.id)
            || self.env.store.get(Table::Projects, &p.id).await?.is_some();
        if !known {
            return Err(Error::NoProject(format!("no project with id '{}'", p.id)));
        }
        persist::delete(self.env.store.as_ref(), &p.id).await?;
        self.sessions.borrow_mut().remove(&p.id);
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
        let sessions = self.sessions.borrow();
        let open = sessions
            .get(&id)
            .ok_or_else(|| Error::NoProject(format!("project '{id}' is not open")))?;
        let doc = persist::export_document(&open.session, open.created_ms, now);
        Ok(serde_json::to_value(doc).unwrap_or_default())
    }

    async fn export_markdown(&self, p: ProjectRef) -> Result<Value, Error> {
        self.target_project(p.id).await?;
        self.with_session(|s| Ok(json!({ "markdown": persist::markdown(&s.project) })))
    }

    async fn import_project(&self, p: ImportProject) -> Result<Value, Error> {
        let (mut session, created_ms) = persist::import_document(p.document)
            .map_err(|reason| invalid("import_project", &reason))?;
        let id = session.project.id.clone();
        let exists = self.sessions.borrow().contains_key(&id)
            || self.env.store.get(Table::Projects, &id).await?.is_some();
        if exists {
            return Err(invalid(
                "import_project",
                &format!("a project with id '{id}' already exists; delete it first to replace it"),
            ));
        }
        let batch = persist::full_save(&mut session, created_ms, self.env.clock.now_ms())?;
        self.env.store.commit(batch).await?;
        let summary = project_json(&session.project);
        self.sessions
            .borrow_mut()
            .insert(id.clone(), Open::new(session, created_ms));
        *self.current.borrow_mut() = Some(id);
        self.emit_projects_changed();
        Ok(summary)
    }

    /// A stored project, with the locks of the approvals that wait in it.
    async fn load_session(&self, id: &str) -> Result<Option<(Session, u64)>, Error> {
        let Some((mut session, created_ms)) = persist::load(self.env.store.as_ref(), id).await?
        else {
            return Ok(None);
        };
        self.relock(&mut session).await?;
        Ok(Some((session, created_ms)))
    }

    /// Another tab (worker) saved project `id`: drop the cached copy and read it again from
    /// the store, so this tab neither shows stale text nor overwrites the other's work. The
    /// page hears `project_reloaded` when it was open here.
    async fn reload_project(&self, p: OpenProject) -> Result<Value, Error> {
        if !self.sessions.borrow().contains_key(&p.id) {
            return Ok(json!({ "reloaded": false }));
        }
        match self.load_session(&p.id).await? {
            Some((session, created_ms)) => {
                let summary = project_json(&session.project);
                self.sessions
                    .borrow_mut()
                    .insert(p.id.clone(), Open::new(session, created_ms));
                self.emit("project_reloaded", summary);
            }
            None => {
                // Deleted elsewhere.
                self.sessions.borrow_mut().remove(&p.id);
                if self.current.borrow().as_deref() == Some(p.id.as_str()) {
                    *self.current.borrow_mut() = None;
                }
                self.emit("project_deleted", json!({ "id": p.id }));
            }
        }
        Ok(json!({ "reloaded": true }))
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
        self.mutate(|s| {
            let project = s.project.id.clone();
            let now = self.env.clock.now_ms();
            let mut written: Vec<String> = Vec::with_capacity(p.notes.len());
            for (i, note) in p.notes.into_iter().enumerate() {
                match s
                    .memory
                    .write_note(&project, note, now, self.env.ids.as_ref())
                {
                    Ok(note) => written.push(note.id.clone()),
                    Err(e) => {
                        for id in &written {
                            let _ = s.memory.remove_note(id);
                        }
                        return Err(invalid(
                            "write_memory_notes",
                            &format!("note {i}: {e}; no note was written"),
                        ));
                    }
                }
            }
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
            Ok((
                result,
                Touched {
                    notes_written,
                    ..Touched::default()
                },
            ))
        })
        .await
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

    fn get_chapter(&self, p: GetChapter) -> Result<Value, Error> {
        self.with_session(|s| {
            let chapter = match p.chapter.as_deref() {
                Some(name) => s.project.find_chapter(name)?,
                None => s
                    .project
                    .active_chapter()
                    .ok_or_else(|| Error::NoProject("the project has no chapters".into()))?,
            };
            let number = s.project.chapter_index(&chapter.id).map_or(0, |i| i + 1);
            Ok(json!({
                "id": chapter.id,
                "title": chapter.title,
                "number": number,
                "text": chapter.text().to_string(),
                "version": chapter.version(),
            }))
        })
    }

    async fn execute(&self, p: Execute) -> Result<Value, Error> {
        let origin = parse_origin("execute", p.origin.as_deref())?;
        let current = self.current()?;
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
        Ok(serde_json::to_value(&result).unwrap_or_default())
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
            return self.execute_generation(project, call, origin, abort).await;
        }
        if crate::tools::bible::language::is_mtl(&call.name) {
            return self.execute_mtl(project, call, origin, abort).await;
        }
        let interpret = call.name == "run_analysis"
            && crate::tools::generation::interpretation_requested(
                &call.args,
                self.model_configured(),
            );
        let (mut result, edits) = self.execute_tool(project, call, origin, ctx).await?;
        if interpret && result.is_success() {
            self.interpret_analysis(&mut result, abort).await;
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
        let policies = self.settings.borrow().policies();
        let args_digest = persist::digest(&call.args.to_string());
        let memory_tool = self
            .registry
            .definition(&call.name)
            .is_some_and(|d| d.category == Category::Memory && !d.read_only);
        let (tool, call_id) = (call.name.clone(), call.id.clone());
        let mut guards = ctx
            .run
            .as_ref()
            .map(|run| self.guards.borrow_mut().remove(run).unwrap_or_default());
        let mut requested = None;
        let done = self
            .mutate_in(project, |s| {
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
                        guards: guards.as_mut(),
                        mtl_endpoint: None,
                    },
                );
                let mut meta_puts = Vec::new();
                let needs_approval = approvals::is_approval_required(&outcome.result)
                    && matches!(origin, Origin::Agent(_));
                let mut outcome = outcome;
                if needs_approval {
                    if let Some(details) = outcome.result.data.get_mut("details") {
                        details["callId"] = json!(call.id);
                        details["pending"] = json!(true);
                    }
                    let record = self.approval_record(
                        &s.project.id,
                        ctx.run.as_deref(),
                        &call,
                        &origin,
                        &outcome.result,
                    );
                    approvals::lock(s, &record);
                    requested = Some(record.clone());
                    meta_puts.push(record);
                } else if let Some(mut record) = ctx.approval.clone() {
                    record["state"] = json!("done");
                    record["result"] = serde_json::to_value(&outcome.result).unwrap_or_default();
                    meta_puts.push(record);
                }
                let (value, mut touched) = self.after_call(
                    s,
                    &tool,
                    call_id,
                    args_digest,
                    origin.clone(),
                    outcome,
                    memory_before,
                )?;
                touched.meta_puts = meta_puts;
                Ok((value, touched))
            })
            .await;
        if let (Some(run), Some(guards)) = (ctx.run, guards) {
            self.guards.borrow_mut().insert(run, guards);
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
        memory_before: Option<persist::MemorySnapshot>,
    ) -> Result<((ToolResult, Vec<Applied>), Touched), Error> {
        if !outcome.edits.is_empty() {
            self.emit_edits(&outcome.edits, &origin);
            self.emit_history(s);
        }
        if outcome.ui_changed {
            self.emit(
                "ui",
                serde_json::to_value(&s.project.ui).unwrap_or_default(),
            );
        }
        let audit = self.audit_record(
            &s.project.id,
            tool,
            call_id,
            args_digest,
            &origin,
            &outcome.result,
        );
        if memory_before.as_ref().is_some_and(|m| m.differs(&s.memory)) {
            self.emit(
                "memory_changed",
                json!({ "project": s.project.id, "tool": tool }),
            );
        }
        self.emit_bible(s, &outcome.bible, &origin);
        self.emit_files(s, &outcome.files, &origin);
        let touched = Touched {
            project: outcome.ui_changed || !outcome.edits.is_empty(),
            chapters: outcome.edits.iter().map(|e| e.chapter.clone()).collect(),
            audit: Some(audit),
            memory_before,
            bible: outcome.bible.clone(),
            files: outcome.files.clone(),
            ..Touched::default()
        };
        Ok(((outcome.result, outcome.edits), touched))
    }

    async fn apply_user_change(&self, p: UserChange) -> Result<Value, Error> {
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
            Ok((
                result,
                Touched {
                    project: true,
                    chapters: vec![chapter_id],
                    ..Touched::default()
                },
            ))
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
            let applied = s.undo(
                scope.as_ref(),
                by.clone(),
                self.env.clock.as_ref(),
                self.env.ids.as_ref(),
            )?;
            self.after_history_move(s, applied, &by)
        })
        .await
    }

    async fn redo(&self) -> Result<Value, Error> {
        self.mutate(|s| {
            let applied = s.redo()?;
            self.after_history_move(s, applied, &Origin::User)
        })
        .await
    }

    fn after_history_move(
        &self,
        s: &Session,
        applied: Vec<Applied>,
        by: &Origin,
    ) -> Result<(Value, Touched), Error> {
        if !applied.is_empty() {
            self.emit_edits(&applied, by);
        }
        self.emit_history(s);
        let edits: Vec<Value> = applied
            .iter()
            .map(|a| json!({"chapter": a.chapter, "changeset": a.change, "version": a.version}))
            .collect();
        let result = json!({
            "applied": edits,
            "canUndo": s.history.can_undo(),
            "canRedo": s.history.can_redo(),
        });
        let mut chapters: Vec<String> = applied.into_iter().map(|a| a.chapter).collect();
        chapters.dedup();
        Ok((
            result,
            Touched {
                project: true,
                chapters,
                ..Touched::default()
            },
        ))
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
fn params<T: DeserializeOwned>(request: &str, params: &Map<String, Value>) -> Result<T, Error> {
    serde_json::from_value(Value::Object(params.clone()))
        .map_err(|err| invalid(request, &err.to_string()))
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
fn debug_panic(request: &Request) -> Result<Value, Error> {
    let message = match request.params.get("message") {
        None => "debug_panic requested",
        Some(Value::String(s)) => s.as_str(),
        Some(other) => {
            return Err(invalid(
                &request.kind,
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
