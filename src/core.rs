//! [`Core`]: serves decoded requests from the page.
//!
//! The core is the only place that knows which request types exist; the worker entry in
//! `src/web/` only moves JSON text in and out. Each request type is one entry of
//! [`REQUEST_TYPES`], which is also what `hello` reports as the capability list.
//!
//! Projects live in memory here (persistence comes with the store). Every mutation goes
//! through the open project's [`Session`], borrowed mutably for the length of one
//! synchronous operation: that is the one exclusive edit path.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::commands::history::Applied;
use crate::commands::{Entry, Origin, OriginFilter};
use crate::env::{Clock, EventSink, IdSource};
use crate::error::{Error, ProtocolError};
use crate::project::changeset::ChangeSet;
use crate::project::{Chapter, Project};
use crate::protocol::{decode_request, ErrorBody, Event, Request, Response, PROTOCOL_VERSION};
use crate::session::{Session, ToolCall};
use crate::tools::{CatalogFormat, ToolRegistry};

/// The request types the core serves, in the order `hello` lists them.
pub const REQUEST_TYPES: &[&str] = &[
    "hello",
    "create_project",
    "open_project",
    "list_projects",
    "get_chapter",
    "execute",
    "apply_user_change",
    "undo",
    "redo",
    "close_group",
    "history",
    "list_tools",
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
}

/// The agent core behind the worker.
pub struct Core {
    env: Env,
    registry: ToolRegistry,
    sessions: RefCell<BTreeMap<String, Session>>,
    current: RefCell<Option<String>>,
}

impl Core {
    /// A core in the given environment, with the standard tools.
    pub fn new(env: Env) -> Self {
        Self {
            env,
            registry: ToolRegistry::standard(),
            sessions: RefCell::new(BTreeMap::new()),
            current: RefCell::new(None),
        }
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
            "create_project" => self.create_project(params(kind, p)?),
            "open_project" => self.open_project(params(kind, p)?),
            "list_projects" => Ok(self.list_projects()),
            "get_chapter" => self.get_chapter(params(kind, p)?),
            "execute" => self.execute(params(kind, p)?),
            "apply_user_change" => self.apply_user_change(params(kind, p)?),
            "undo" => self.undo(params(kind, p)?),
            "redo" => self.redo(),
            "close_group" => self.with_session(|s| {
                s.history.close_group();
                Ok(json!({}))
            }),
            "history" => self.with_session(|s| history_json(s)),
            "list_tools" => self.list_tools(params(kind, p)?),
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

    /// Run `f` on the open project's session (the exclusive edit path).
    fn with_session<T>(
        &self,
        f: impl FnOnce(&mut Session) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let current = self.current.borrow().clone().ok_or_else(|| {
            Error::NoProject("no project is open; create_project or open_project first".into())
        })?;
        let mut sessions = self.sessions.borrow_mut();
        let session = sessions
            .get_mut(&current)
            .ok_or_else(|| Error::NoProject(format!("project '{current}' is gone")))?;
        f(session)
    }

    fn create_project(&self, p: CreateProject) -> Result<Value, Error> {
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
        let project = Project::new(id.clone(), name, chapters);
        let summary = project_json(&project);
        self.sessions
            .borrow_mut()
            .insert(id.clone(), Session::new(project));
        *self.current.borrow_mut() = Some(id);
        Ok(summary)
    }

    fn open_project(&self, p: OpenProject) -> Result<Value, Error> {
        let sessions = self.sessions.borrow();
        let session = sessions
            .get(&p.id)
            .ok_or_else(|| Error::NoProject(format!("no project with id '{}'", p.id)))?;
        let summary = project_json(&session.project);
        drop(sessions);
        *self.current.borrow_mut() = Some(p.id);
        Ok(summary)
    }

    fn list_projects(&self) -> Value {
        let sessions = self.sessions.borrow();
        let list: Vec<Value> = sessions
            .values()
            .map(|s| json!({"id": s.project.id, "name": s.project.name, "chapters": s.project.chapters.len()}))
            .collect();
        json!({ "projects": list, "current": *self.current.borrow() })
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

    fn execute(&self, p: Execute) -> Result<Value, Error> {
        let origin = parse_origin("execute", p.origin.as_deref())?;
        let call = ToolCall {
            id: p.call_id,
            name: p.tool,
            args: p.args,
        };
        self.with_session(|s| {
            let outcome = s.execute(
                &self.registry,
                call,
                origin.clone(),
                self.env.clock.as_ref(),
                self.env.ids.as_ref(),
            );
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
            Ok(serde_json::to_value(&outcome.result).unwrap_or_default())
        })
    }

    fn apply_user_change(&self, p: UserChange) -> Result<Value, Error> {
        self.with_session(|s| {
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
            self.emit_edits(std::slice::from_ref(&applied), &Origin::User);
            self.emit_history(s);
            Ok(json!({
                "chapter": applied.chapter,
                "version": applied.version,
                "changeset": applied.change,
                "rebased": rebased,
            }))
        })
    }

    fn undo(&self, p: Undo) -> Result<Value, Error> {
        let scope = match p.origin.as_deref() {
            None => None,
            Some(o) => Some(
                o.parse::<OriginFilter>()
                    .map_err(|e| invalid("undo", &e.to_string()))?,
            ),
        };
        let by = parse_origin("undo", p.by.as_deref())?;
        self.with_session(|s| {
            let applied = s.undo(
                scope.as_ref(),
                by.clone(),
                self.env.clock.as_ref(),
                self.env.ids.as_ref(),
            )?;
            self.after_history_move(s, &applied, &by)
        })
    }

    fn redo(&self) -> Result<Value, Error> {
        self.with_session(|s| {
            let applied = s.redo()?;
            self.after_history_move(s, &applied, &Origin::User)
        })
    }

    fn after_history_move(
        &self,
        s: &Session,
        applied: &[Applied],
        by: &Origin,
    ) -> Result<Value, Error> {
        if !applied.is_empty() {
            self.emit_edits(applied, by);
        }
        self.emit_history(s);
        let edits: Vec<Value> = applied
            .iter()
            .map(|a| json!({"chapter": a.chapter, "changeset": a.change, "version": a.version}))
            .collect();
        Ok(json!({
            "applied": edits,
            "canUndo": s.history.can_undo(),
            "canRedo": s.history.can_redo(),
        }))
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
