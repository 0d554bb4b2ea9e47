//! [`Session`]: one open project and its history, and the one exclusive edit path.
//!
//! Every mutation goes through a `&mut Session`: tool calls ([`Session::execute`], or
//! [`Session::execute_command`] for a command built elsewhere, such as a generation tool's
//! edit after its model call), writer changes from the page
//! ([`Session::apply_user_change`]), undo and redo. Holding the only mutable reference
//! serializes them: no two commands interleave. A command edits through
//! an [`EditContext`], which applies each change at once (so the command reads its own
//! edits) and records its effect; if the command fails, every edit it made and every UI
//! change is rolled back before the error result is returned.
//!
//! The session owns what runs on the edit path and what comes back: a [`Command`], found by
//! name through a [`CommandSource`] (the tool registry is one), and one [`ToolResult`] per
//! call ([`result`]).
//!
//! The session also holds the free files of the `data/` view ([`Files`]); a command writes
//! them through [`EditContext::write_file`], and a failing command's file writes are rolled
//! back with its other changes. A successful command's file writes are in its history entry
//! (the file before and after), so undo and redo take them back and bring them again with
//! its chapter edits, even when the command changed no chapter.
//!
//! The session also holds the agent's [`Memory`]. Memory changes are not undoable and are not
//! snapshotted: the memory tools validate everything before they change the memory, in one
//! step, so a failing memory call has changed nothing (see [`crate::memory`]).

use std::collections::BTreeSet;

use serde_json::json;
use serde_json::Value;

use crate::bible::{Actor, Bible, Entity, Judge, Kind};
use crate::commands::history::{Applied, ChapterEffect, Grouping, HistoryError};
use crate::commands::{Effect, Entry, FileEffect, History, Moved, Origin, OriginFilter};
use crate::env::{Clock, IdSource};
use crate::error::ToolError;
use crate::files::{Files, FreeFile};
use crate::memory::Memory;
use crate::policy::{self, Action, FieldChange, Grant, Policies};
use crate::project::changeset::{Assoc, ChangeSet, Op};
use crate::project::{Chapter, EditError, Project, UiState};

pub mod result;

pub use self::result::{ResultMeta, Status, ToolResult};

/// A tool call to execute.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The model's (or page's) call id, recorded in history.
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments (a JSON object).
    pub args: Value,
}

/// A command built from a tool call's arguments, ready to run through the edit path.
pub trait Command {
    /// Run it. Edits go through `cx`; if this returns an error, every edit it made is
    /// rolled back by the caller.
    fn execute(self: Box<Self>, cx: &mut EditContext<'_>) -> Result<Value, ToolError>;
}

/// Where [`Session::execute`] gets the command a tool call names: the call's arguments are
/// checked against the tool's schema, then the typed command is built. The tool registry
/// (`tools::ToolRegistry`) is the one the crate uses.
pub trait CommandSource {
    /// The command for a call of `name` with `args`, or the error that says what is wrong
    /// (an unknown tool, arguments that do not fit).
    fn command(&self, name: &str, args: Value) -> Result<Box<dyn Command>, ToolError>;
}

/// What a tool call did.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The result for the model.
    pub result: ToolResult,
    /// Chapter changes made (empty for reads and failures).
    pub edits: Vec<Applied>,
    /// Whether the editor UI state changed.
    pub ui_changed: bool,
    /// Story-bible entities the call changed (created, updated or deleted).
    pub bible: Vec<(Kind, String)>,
    /// Free files of the `data/` view the call changed (paths).
    pub files: Vec<String>,
    /// Chapters the call added to the chapter list (ids).
    pub chapters_added: Vec<String>,
    /// Memory items the call changed (also when it failed after changing them: memory is not
    /// rolled back).
    pub memory: Vec<crate::memory::Changed>,
}

/// What a call runs under besides its origin: the approval policies, the writer's approval
/// (when the call is the approved one) and the run's single-use guards.
#[derive(Default)]
pub struct CallExtras<'a> {
    /// The policies (the defaults when absent).
    pub policies: Option<&'a Policies>,
    /// The writer's approval of this call.
    pub grant: Option<&'a Grant>,
    /// Keys of single-use writes already made in this run.
    pub guards: Option<&'a mut (dyn Guards + 'static)>,
    /// The machine-translation endpoint of the settings (`None` or empty: none).
    pub mtl_endpoint: Option<&'a str>,
    /// The undo group the call's edits join (an agent run's tree), whatever its origin.
    pub group: Option<&'a str>,
    /// The run may not overwrite what it wrote already (a job without `allowOverwrite`): a
    /// tool's `overwrite` argument is ignored, so single-use guards hold.
    pub no_overwrite: bool,
    /// Told how far a long call has come (see [`EditContext::progress`]).
    pub progress: Option<&'a dyn Fn(Progress<'_>)>,
}

/// How far a long call has come: `done` of its `total` steps, `stage` the one it does now
/// (`done` when `done == total`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress<'s> {
    pub done: usize,
    pub total: usize,
    pub stage: &'s str,
}

/// What a run keeps between its calls ([`CallExtras::guards`]): the keys of its single-use
/// writes, and the version of each story-bible entity it last read or wrote (conflicts are
/// judged against what the run saw). A `BTreeSet<String>` in the core (saved with a paused
/// run), or anything a caller keeps.
pub trait Guards {
    /// Add `key`: true when it was not there yet.
    fn take(&mut self, key: &str) -> bool;
    /// The version of entity `entity` (`kind/id`) the run last read or wrote, if it did.
    fn seen(&self, entity: &str) -> Option<u64>;
    /// The run read or wrote entity `entity` at `version`.
    fn saw(&mut self, entity: &str, version: u64);
}

/// The key a version seen is kept under in a set of guards: `seen:<kind/id>@<version>`.
fn seen_prefix(entity: &str) -> String {
    format!("seen:{entity}@")
}

impl Guards for BTreeSet<String> {
    fn take(&mut self, key: &str) -> bool {
        self.insert(key.to_string())
    }

    fn seen(&self, entity: &str) -> Option<u64> {
        let prefix = seen_prefix(entity);
        self.range(prefix.clone()..)
            .take_while(|key| key.starts_with(&prefix))
            .find_map(|key| key[prefix.len()..].parse().ok())
    }

    fn saw(&mut self, entity: &str, version: u64) {
        let prefix = seen_prefix(entity);
        let old: Vec<String> = self
            .range(prefix.clone()..)
            .take_while(|key| key.starts_with(&prefix))
            .filter(|key| key[prefix.len()..].parse::<u64>().is_ok())
            .cloned()
            .collect();
        for key in old {
            self.remove(&key);
        }
        self.insert(format!("{prefix}{version}"));
    }
}

/// A rolled-back bible change: the entity as it was before the command first touched it.
type BibleUndo = (Kind, String, Option<Entity>);

/// A rolled-back free-file change: the file as it was before the command first wrote it.
type FileUndo = (String, Option<FreeFile>);

/// What commands edit through.
pub struct EditContext<'a> {
    project: &'a mut Project,
    memory: &'a mut Memory,
    bible: &'a mut Bible,
    files: &'a mut Files,
    history: &'a History,
    ids: &'a dyn IdSource,
    effects: Vec<Effect>,
    /// Chapters added to the list, in order.
    chapters: Vec<ChapterEffect>,
    ui_changed: bool,
    description: Option<String>,
    now_ms: u64,
    tool: &'a str,
    actor: Actor,
    policies: Policies,
    grant: Option<&'a Grant>,
    guards: Option<&'a mut (dyn Guards + 'static)>,
    no_overwrite: bool,
    mtl_endpoint: Option<&'a str>,
    bible_undo: Vec<BibleUndo>,
    /// The origin recorded on free files this call writes.
    file_origin: String,
    files_undo: Vec<FileUndo>,
    /// The tool whose approval policy judges this call's bible writes, when the call's own
    /// tool has no configured policy (the file tools judge a bible write as the bible's own
    /// tool for that kind and action would be judged).
    policy_tool: Option<String>,
    /// What the result reports as `bytes_written`, when the command says.
    bytes_written: Option<usize>,
    progress: Option<&'a dyn Fn(Progress<'_>)>,
}

/// The parts of a session an [`EditContext`] works on.
struct Parts<'a> {
    project: &'a mut Project,
    memory: &'a mut Memory,
    bible: &'a mut Bible,
    files: &'a mut Files,
    history: &'a History,
}

impl<'a> EditContext<'a> {
    fn new(
        parts: Parts<'a>,
        ids: &'a dyn IdSource,
        now_ms: u64,
        tool: &'a str,
        origin: &Origin,
        extras: CallExtras<'a>,
    ) -> Self {
        Self {
            project: parts.project,
            memory: parts.memory,
            bible: parts.bible,
            files: parts.files,
            history: parts.history,
            ids,
            effects: Vec::new(),
            chapters: Vec::new(),
            ui_changed: false,
            description: None,
            now_ms,
            tool,
            actor: Actor::from_origin(origin, now_ms),
            policies: extras.policies.cloned().unwrap_or_default(),
            grant: extras.grant,
            guards: extras.guards,
            no_overwrite: extras.no_overwrite,
            mtl_endpoint: extras.mtl_endpoint,
            bible_undo: Vec::new(),
            file_origin: crate::files::file_origin(origin),
            files_undo: Vec::new(),
            policy_tool: None,
            bytes_written: None,
            progress: extras.progress,
        }
    }

    /// The free files of the `data/` view, to read them.
    pub fn files(&self) -> &Files {
        self.files
    }

    /// The undo history, to read it (such as when a chapter last changed).
    pub fn history(&self) -> &History {
        self.history
    }

    /// Write a free file (a path the sandbox resolved as one, see
    /// [`crate::files::path`]) as this call's origin, replacing it whole. Rolled back if the
    /// command fails; saved with the call. Returns the file as it was.
    pub fn write_file(
        &mut self,
        path: &str,
        content: String,
    ) -> Result<Option<FreeFile>, ToolError> {
        self.files
            .check_write(path, &content)
            .map_err(|e| ToolError::invalid_args(e.to_string()))?;
        if !self.files_undo.iter().any(|(p, _)| p == path) {
            self.files_undo
                .push((path.to_string(), self.files.get(path).cloned()));
        }
        self.files
            .write(path, content, self.file_origin.clone(), self.now_ms)
            .map_err(|e| ToolError::invalid_args(e.to_string()))
    }

    /// Judge this call's story-bible writes by the approval policy of `tool` (unless the
    /// call's own tool has a configured policy). The file tools use this so that writing
    /// `bible/character/mara.json` asks the writer exactly when `character_update_entry`
    /// or `character_create_entry` would.
    pub fn judge_bible_as(&mut self, tool: impl Into<String>) {
        self.policy_tool = Some(tool.into());
    }

    /// Report `bytes` as the result's `bytes_written` (instead of the bytes the call's
    /// chapter edits inserted).
    pub fn set_bytes_written(&mut self, bytes: usize) {
        self.bytes_written = Some(bytes);
    }

    /// The approval mode of this call's bible writes.
    fn mode(&self) -> policy::Mode {
        match &self.policy_tool {
            Some(other) if !self.policies.modes.contains_key(self.tool) => {
                self.policies.mode(other)
            }
            _ => self.policies.mode(self.tool),
        }
    }

    /// The story bible, to read it.
    pub fn bible(&self) -> &Bible {
        self.bible
    }

    /// Who is writing (the provenance recorded on bible fields).
    pub fn actor(&self) -> &Actor {
        &self.actor
    }

    /// The approval policies in force.
    pub fn policies(&self) -> &Policies {
        &self.policies
    }

    /// The writer's approval this call runs under, if it is an approved call.
    pub fn grant(&self) -> Option<&Grant> {
        self.grant
    }

    /// Who is calling, as a history origin (`user`, `agent:<name>` or `import`).
    pub fn origin(&self) -> Origin {
        match &self.actor {
            Actor::Human => Origin::User,
            Actor::Agent { name, .. } => Origin::Agent(name.clone()),
            Actor::Import => Origin::Import,
        }
    }

    /// The machine-translation endpoint the caller configured, if any (not empty).
    pub fn mtl_endpoint(&self) -> Option<&'a str> {
        self.mtl_endpoint.filter(|url| !url.trim().is_empty())
    }

    /// Whether a call that asks to overwrite (`overwrite: true`) may: not in a run that is
    /// not allowed to (a job without `allowOverwrite`).
    pub fn may_overwrite(&self, asked: bool) -> bool {
        asked && !self.no_overwrite
    }

    /// Take a single-use guard of the run (such as "this scene's summary"): true the first
    /// time in a run, false after. Outside a run every call may write.
    pub fn take_guard(&mut self, key: &str) -> bool {
        match self.guards.as_deref_mut() {
            Some(guards) => guards.take(key),
            None => true,
        }
    }

    /// The call's run read entity `id` of `kind` as it is now (its updates are then judged
    /// against this version). Nothing outside a run.
    pub fn saw(&mut self, kind: Kind, id: &str) {
        let version = self.bible.get(kind, id).map(|e| e.version);
        if let (Some(guards), Some(version)) = (self.guards.as_deref_mut(), version) {
            guards.saw(&format!("{kind}/{id}"), version);
        }
    }

    fn remember(&mut self, kind: Kind, id: &str) {
        if !self
            .bible_undo
            .iter()
            .any(|(k, i, _)| *k == kind && i == id)
        {
            let before = self.bible.get(kind, id).cloned();
            self.bible_undo.push((kind, id.to_string(), before));
        }
    }

    /// Check the writer's approval of a change to an entity now at `version` (0: absent):
    /// `Ok(true)` when the writer approved it as it is, `Ok(false)` when the approval does not
    /// cover it, and a conflict when it changed since the writer was asked.
    fn granted(
        &self,
        kind: Kind,
        id: &str,
        version: u64,
        proposed: &[(String, Value)],
    ) -> Result<bool, ToolError> {
        let Some(granted) = self
            .grant
            .and_then(|g| g.versions.get(&Grant::key(kind, id)))
        else {
            return Ok(false);
        };
        if *granted == version {
            return Ok(true);
        }
        // Other fields may have changed meanwhile (another subagent filling them): the
        // approval still holds when none of the fields it is about was written since.
        if !proposed.is_empty() {
            if let Some(entity) = self.bible.get(kind, id) {
                let untouched = proposed.iter().all(|(field, _)| {
                    entity
                        .stamps
                        .get(field)
                        .is_none_or(|s| s.version <= *granted)
                });
                if untouched {
                    return Ok(true);
                }
            }
        }
        let current = self.bible.get(kind, id).map_or(Value::Null, Entity::flat);
        let mut changes = serde_json::Map::new();
        changes.extend(proposed.iter().cloned());
        Err(ToolError::new(
            "conflict",
            format!(
                "The {kind} '{id}' changed since the writer was asked to approve this call (version {granted} then, {version} now); nothing was changed. Read it again and propose the change anew if it still applies."
            ),
        )
        .with_details(json!({
            "current": current,
            "proposed": Value::Object(changes),
        })))
    }

    /// Refuse an agent's change to fields of an entity (none: the whole entity) another call
    /// has asked the writer about.
    fn check_lock(&self, kind: Kind, id: &str, fields: &[&str]) -> Result<(), ToolError> {
        match self.bible.locked_by(kind, id, fields) {
            Some(call) => Err(ToolError::new(
                "locked",
                format!("The {kind} '{id}' is locked: call '{call}' waits for the writer's approval of a change to it. Nothing was changed; try again after the writer decides."),
            )
            .with_details(json!({"kind": kind, "id": id, "lockedBy": call}))),
            None => Ok(()),
        }
    }

    fn changes_for_approval(
        entity: Option<&Entity>,
        changes: &[(String, Value)],
    ) -> Vec<FieldChange> {
        changes
            .iter()
            .map(|(field, proposed)| FieldChange {
                field: field.clone(),
                current: entity.map_or(Value::Null, |e| e.get(field).clone()),
                current_origin: entity.and_then(|e| e.origin(field)).map(str::to_string),
                proposed: proposed.clone(),
            })
            .collect()
    }

    /// Create a bible entity as this call's actor, under the tool's policy. Returns its flat
    /// view.
    pub fn bible_create(
        &mut self,
        kind: Kind,
        id: &str,
        fields: Vec<(String, Value)>,
    ) -> Result<Value, ToolError> {
        if self.bible.get(kind, id).is_some() {
            return Err(ToolError::new(
                "exists",
                format!("a {kind} with id '{id}' already exists; update it instead"),
            ));
        }
        if !self.granted(kind, id, 0, &fields)? {
            let mode = self.mode();
            if let Some(reason) =
                policy::needs_approval(mode, Action::Create, &self.actor, None, &[])
            {
                let changes = Self::changes_for_approval(None, &fields);
                return Err(policy::approval_required(
                    self.tool, kind, id, 0, changes, &reason,
                ));
            }
        }
        self.remember(kind, id);
        let entity = self
            .bible
            .create(kind, id, fields, &self.actor, self.now_ms)?;
        let flat = entity.flat();
        self.saw(kind, id);
        Ok(flat)
    }

    /// Change fields of a bible entity as this call's actor: under the tool's policy (a
    /// protected field asks the writer first), with conflict detection (a field another
    /// origin wrote within the recent-update window is not overwritten). Returns the flat
    /// view after the change.
    pub fn bible_update(
        &mut self,
        kind: Kind,
        id: &str,
        changes: Vec<(String, Value)>,
    ) -> Result<Value, ToolError> {
        let entity = self.bible.require(kind, id)?;
        let names: Vec<&str> = changes.iter().map(|(f, _)| f.as_str()).collect();
        if self.actor.is_agent() && !self.granted(kind, id, entity.version, &changes)? {
            self.check_lock(kind, id, &names)?;
            let mode = self.mode();
            if let Some(reason) =
                policy::needs_approval(mode, Action::Update, &self.actor, Some(entity), &names)
            {
                let fields = Self::changes_for_approval(Some(entity), &changes);
                return Err(policy::approval_required(
                    self.tool,
                    kind,
                    id,
                    entity.version,
                    fields,
                    &reason,
                ));
            }
            let unchanged = changes.iter().all(|(f, v)| entity.get(f) == v);
            let judged_by = match self.guards.as_deref() {
                Some(guards) => Judge::Seen(guards.seen(&format!("{kind}/{id}"))),
                None => Judge::Origin(&self.actor),
            };
            if !unchanged {
                if let Some(c) = self.bible.concurrent(
                    entity,
                    &names,
                    judged_by,
                    self.now_ms,
                    self.policies.window_ms,
                ) {
                    let proposed = changes
                        .iter()
                        .find(|(f, _)| *f == c.field)
                        .map_or(Value::Null, |(_, v)| v.clone());
                    return Err(concurrent_update(kind, id, &c, &proposed));
                }
            }
        }
        self.remember(kind, id);
        let entity = self
            .bible
            .update(kind, id, changes, &self.actor, self.now_ms)?;
        let flat = entity.flat();
        self.saw(kind, id);
        Ok(flat)
    }

    /// Delete a bible entity as this call's actor, under the tool's policy. Returns it as it
    /// was.
    pub fn bible_delete(&mut self, kind: Kind, id: &str) -> Result<Entity, ToolError> {
        let entity = self.bible.require(kind, id)?;
        if self.actor.is_agent() && !self.granted(kind, id, entity.version, &[])? {
            self.check_lock(kind, id, &[])?;
            let mode = self.mode();
            if let Some(reason) =
                policy::needs_approval(mode, Action::Delete, &self.actor, Some(entity), &[])
            {
                let fields = entity
                    .fields
                    .iter()
                    .map(|(field, value)| FieldChange {
                        field: field.clone(),
                        current: value.clone(),
                        current_origin: entity.origin(field).map(str::to_string),
                        proposed: Value::Null,
                    })
                    .collect();
                return Err(policy::approval_required(
                    self.tool,
                    kind,
                    id,
                    entity.version,
                    fields,
                    &reason,
                ));
            }
        }
        self.remember(kind, id);
        Ok(self.bible.remove(kind, id)?)
    }

    /// Tell whoever runs the call how far it has come (nothing when nobody listens).
    pub fn progress(&self, done: usize, total: usize, stage: &str) {
        if let Some(progress) = self.progress {
            progress(Progress { done, total, stage });
        }
    }

    /// The project, as edited so far.
    pub fn project(&self) -> &Project {
        self.project
    }

    /// Now, from the injected clock.
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// The injected id source, for new notes, goals and entities.
    pub fn ids(&self) -> &'a dyn IdSource {
        self.ids
    }

    /// The agent's memory, to change it. Memory changes are neither undoable nor rolled
    /// back: a command must finish validating before it changes the memory, and change it
    /// last (the [`Memory`] methods themselves change nothing when they fail).
    pub fn memory(&mut self) -> &mut Memory {
        self.memory
    }

    /// The agent's memory, to read it.
    pub fn memory_ref(&self) -> &Memory {
        self.memory
    }

    /// The chapter named by `name` (id, number or title), or the active chapter.
    pub fn chapter(&self, name: Option<&str>) -> Result<&Chapter, ToolError> {
        match name {
            Some(name) if !name.trim().is_empty() => Ok(self.project.find_chapter(name)?),
            _ => self.project.active_chapter().ok_or_else(|| {
                ToolError::not_found("the project has no chapters; create one first")
            }),
        }
    }

    /// Apply a change to a chapter now, recording it for history (and for rollback). The
    /// editor's positions in the chapter (cursor, selection, scroll, highlights) follow the
    /// change ([`Project::apply_change`]), so a later call in the same turn still finds the
    /// writer's selection on the text the writer selected. A failing command's rollback
    /// restores them with the rest of the UI state.
    pub fn edit(&mut self, chapter_id: &str, change: ChangeSet) -> Result<u64, ToolError> {
        let chapter = self
            .project
            .chapter(chapter_id)
            .ok_or_else(|| ToolError::not_found(format!("no chapter with id '{chapter_id}'")))?;
        let inverse = change
            .invert(chapter.text())
            .map_err(|e| ToolError::invalid_args(e.to_string()))?;
        let version = self.project.apply_change(chapter_id, &change)?;
        self.effects.push(Effect {
            chapter: chapter_id.to_string(),
            change,
            inverse,
        });
        Ok(version)
    }

    /// Add an empty chapter titled `title` at `index` (0-based, at most the number of
    /// chapters), recorded for history with the call's other edits: undo takes it out again
    /// after taking back its text. Returns its id; fill it with [`EditContext::edit`].
    pub fn add_chapter(&mut self, index: usize, title: &str) -> Result<String, ToolError> {
        if index > self.project.chapters.len() {
            return Err(ToolError::invalid_args(format!(
                "a new chapter goes at position {} at most (the project has {})",
                self.project.chapters.len() + 1,
                self.project.chapters.len()
            )));
        }
        let id = self.ids.next_id();
        self.project
            .insert_chapter(index, Chapter::new(id.clone(), title, ""))?;
        self.chapters.push(ChapterEffect {
            chapter: id.clone(),
            index,
            title: title.to_string(),
            added: true,
        });
        Ok(id)
    }

    /// The editor UI state, to change it (reported to the page as a `ui` event).
    pub fn ui(&mut self) -> &mut UiState {
        self.ui_changed = true;
        &mut self.project.ui
    }

    /// Describe the edit for the history (defaults to the tool name).
    pub fn describe(&mut self, description: impl Into<String>) {
        self.description = Some(description.into());
    }

    fn rollback(&mut self) {
        for (path, before) in self.files_undo.drain(..).rev() {
            self.files.restore(&path, before);
        }
        for (kind, id, before) in self.bible_undo.drain(..).rev() {
            self.bible.restore(kind, &id, before);
        }
        for fx in self.effects.drain(..).rev() {
            if let Some(chapter) = self.project.chapter_mut(&fx.chapter) {
                // The inverse was computed against this very text; it fits.
                let _ = chapter.rollback(&fx.inverse);
            }
        }
        for fx in self.chapters.drain(..).rev() {
            if let Some(index) = self.project.chapter_index(&fx.chapter) {
                self.project.detach_chapter(index);
            }
        }
    }
}

/// An open project with its history.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// The project.
    pub project: Project,
    /// Its undo history.
    pub history: History,
    /// The agent's memory (notes, goals, watched entities, the bedside note).
    pub memory: Memory,
    /// The story bible.
    pub bible: Bible,
    /// The free files of the `data/` view (`plans/`, `notes/`).
    pub files: Files,
}

impl Session {
    /// A session for `project` with an empty history and an empty memory. The bedside note
    /// is created on first use (see [`Memory::ensure_bedside`]).
    pub fn new(project: Project) -> Self {
        Self::with_memory(project, Memory::new())
    }

    /// A session for `project` with an empty history and the given memory (such as one
    /// loaded from the store), whose search index is rebuilt if it is not current.
    pub fn with_memory(project: Project, mut memory: Memory) -> Self {
        if !memory.is_indexed() {
            memory.reindex();
        }
        Self {
            project,
            history: History::default(),
            memory,
            bible: Bible::new(),
            files: Files::new(),
        }
    }

    /// Execute one tool call as `origin`. Never panics; every call gets exactly one result,
    /// and a failing call changes nothing.
    ///
    /// The generation tools ([`crate::tools::generation`]) need a model call, which this
    /// synchronous path cannot make: they fail here with `needs_model` (after their arguments
    /// are checked) and change nothing. The core runs them in two phases instead and applies
    /// their edit with [`Session::execute_command`].
    pub fn execute(
        &mut self,
        registry: &dyn CommandSource,
        call: ToolCall,
        origin: Origin,
        clock: &dyn Clock,
        ids: &dyn IdSource,
    ) -> Outcome {
        self.execute_with(registry, call, origin, clock, ids, CallExtras::default())
    }

    /// [`Session::execute`] under explicit approval policies, with the writer's approval of
    /// this call or a run's single-use guards. A story-bible change that needs approval fails
    /// with `approval_required` (details: what would change) and changes nothing.
    pub fn execute_with(
        &mut self,
        registry: &dyn CommandSource,
        call: ToolCall,
        origin: Origin,
        clock: &dyn Clock,
        ids: &dyn IdSource,
        extras: CallExtras<'_>,
    ) -> Outcome {
        let started = clock.now_ms();
        // Validate against the schema the model saw, then build the typed command.
        let command = registry.command(&call.name, call.args);
        match command {
            // Policy (approvals by provenance) is checked by the bible's write path in the
            // edit context; the manuscript tools are all permitted.
            Ok(command) => self.run_command(
                started, call.id, &call.name, command, origin, clock, ids, extras,
            ),
            Err(error) => failed(&error, started, clock),
        }
    }

    /// Run an already built command as the tool call `name` (with the model's `call_id`)
    /// through the one edit path, exactly as [`Session::execute`] runs a tool's command: its
    /// edits become one history entry with `origin`, the call id and the command name (and
    /// the description the command set); if it fails, every edit and UI change it made is
    /// rolled back and the error result is returned. The core uses this to apply a generation
    /// tool's edit ([`crate::tools::generation::finish`]) after the model call.
    pub fn execute_command(
        &mut self,
        call_id: Option<String>,
        name: &str,
        command: Box<dyn Command>,
        origin: Origin,
        clock: &dyn Clock,
        ids: &dyn IdSource,
    ) -> Outcome {
        self.execute_command_with(
            call_id,
            name,
            command,
            origin,
            clock,
            ids,
            CallExtras::default(),
        )
    }

    /// [`Session::execute_command`] with the call's extras (such as its undo group).
    #[allow(clippy::too_many_arguments)]
    pub fn execute_command_with(
        &mut self,
        call_id: Option<String>,
        name: &str,
        command: Box<dyn Command>,
        origin: Origin,
        clock: &dyn Clock,
        ids: &dyn IdSource,
        extras: CallExtras<'_>,
    ) -> Outcome {
        let started = clock.now_ms();
        self.run_command(started, call_id, name, command, origin, clock, ids, extras)
    }

    #[allow(clippy::too_many_arguments)]
    fn run_command(
        &mut self,
        started: u64,
        call_id: Option<String>,
        name: &str,
        command: Box<dyn Command>,
        origin: Origin,
        clock: &dyn Clock,
        ids: &dyn IdSource,
        extras: CallExtras<'_>,
    ) -> Outcome {
        let meta = |command_id: Option<String>, bytes: Option<usize>| ResultMeta {
            execution_time_ms: clock.now_ms().saturating_sub(started),
            command_id,
            bytes_written: bytes,
        };
        let ui_before = self.project.ui.clone();
        let group = extras.group.map(str::to_string);
        self.memory.track_changes();
        let parts = Parts {
            project: &mut self.project,
            memory: &mut self.memory,
            bible: &mut self.bible,
            files: &mut self.files,
            history: &self.history,
        };
        let mut cx = EditContext::new(parts, ids, started, name, &origin, extras);
        let data = match command.execute(&mut cx) {
            Ok(data) => data,
            Err(error) => {
                cx.rollback();
                self.project.ui = ui_before;
                return Outcome {
                    memory: self.memory.take_changes(),
                    ..failed(&error, started, clock)
                };
            }
        };
        let EditContext {
            effects,
            chapters,
            ui_changed,
            description,
            bible_undo,
            files_undo,
            bytes_written,
            ..
        } = cx;
        let file_effects: Vec<FileEffect> = files_undo
            .into_iter()
            .filter(|(path, before)| self.files.get(path) != before.as_ref())
            .map(|(path, before)| FileEffect {
                after: self.files.get(&path).map(FreeFile::state),
                before: before.as_ref().map(FreeFile::state),
                path,
            })
            .collect();
        let files: Vec<String> = file_effects.iter().map(|fx| fx.path.clone()).collect();
        let bible: Vec<(Kind, String)> = bible_undo
            .into_iter()
            .filter(|(kind, id, before)| self.bible.get(*kind, id) != before.as_ref())
            .map(|(kind, id, _)| (kind, id))
            .collect();
        let ui_changed = ui_changed && self.project.ui != ui_before;
        let memory = self.memory.take_changes();
        if effects.is_empty() && file_effects.is_empty() && chapters.is_empty() {
            return Outcome {
                result: ToolResult::success(data, meta(None, bytes_written)),
                edits: Vec::new(),
                ui_changed,
                bible,
                files,
                chapters_added: Vec::new(),
                memory,
            };
        }
        let chapters_added: Vec<String> = chapters.iter().map(|fx| fx.chapter.clone()).collect();
        let bytes: usize = bytes_written
            .unwrap_or_else(|| effects.iter().map(|fx| inserted_bytes(&fx.change)).sum());
        let edits: Vec<Applied> = effects
            .iter()
            .map(|fx| Applied {
                chapter: fx.chapter.clone(),
                change: fx.change.clone(),
                inverse: fx.inverse.clone(),
                version: 0,
            })
            .collect();
        let edits = self.with_versions(edits);
        let entry_id = ids.next_id();
        let mut entry = Entry::edit(
            entry_id.clone(),
            origin,
            description.unwrap_or_else(|| name.to_string()),
            started,
            effects,
        );
        entry.files = file_effects;
        entry.chapters = chapters;
        entry.tool_call_id = call_id;
        entry.command = Some(name.to_string());
        if let Some(group) = group {
            entry.group = group;
        }
        self.history.record(entry, Grouping::Command, ids);
        Outcome {
            result: ToolResult::success(data, meta(Some(entry_id), Some(bytes))),
            edits,
            ui_changed,
            bible,
            files,
            chapters_added,
            memory,
        }
    }

    /// Fill in each edit's resulting version: for several edits to one chapter, the
    /// versions count up to the chapter's current one.
    fn with_versions(&self, mut edits: Vec<Applied>) -> Vec<Applied> {
        for i in (0..edits.len()).rev() {
            let later_same = edits[i + 1..]
                .iter()
                .filter(|e| e.chapter == edits[i].chapter)
                .count() as u64;
            let current = self
                .project
                .chapter(&edits[i].chapter)
                .map_or(0, Chapter::version);
            edits[i].version = current.saturating_sub(later_same);
        }
        edits
    }

    /// Apply a writer's change made on `base_version` of a chapter, rebased over whatever
    /// happened since: the writer's text is never dropped because an agent was editing. The
    /// editor's positions follow the change; a cursor where the writer typed moves past
    /// their text.
    pub fn apply_user_change(
        &mut self,
        chapter_id: &str,
        base_version: u64,
        change: ChangeSet,
        clock: &dyn Clock,
        ids: &dyn IdSource,
    ) -> Result<Applied, EditError> {
        let chapter = self
            .project
            .chapter(chapter_id)
            .ok_or_else(|| EditError::NoSuchChapter {
                query: chapter_id.to_string(),
                hint: String::new(),
            })?;
        let rebased = chapter.rebase(base_version, change)?;
        if rebased.is_identity() {
            return Ok(Applied {
                chapter: chapter_id.to_string(),
                inverse: rebased.clone(),
                change: rebased,
                version: chapter.version(),
            });
        }
        let inverse = rebased
            .invert(chapter.text())
            .map_err(|source| EditError::BadChange {
                chapter: chapter_id.to_string(),
                source,
            })?;
        // The writer types at their cursor: it moves past what they typed.
        let version = self
            .project
            .apply_change_with(chapter_id, &rebased, Assoc::After)?;
        let description = if rebased.ops().iter().any(|op| matches!(op, Op::Insert(_))) {
            "Typing"
        } else {
            "Deletion"
        };
        let entry = Entry::edit(
            ids.next_id(),
            Origin::User,
            description,
            clock.now_ms(),
            vec![Effect {
                chapter: chapter_id.to_string(),
                change: rebased.clone(),
                inverse: inverse.clone(),
            }],
        );
        self.history.record(entry, Grouping::Typing, ids);
        Ok(Applied {
            chapter: chapter_id.to_string(),
            change: rebased,
            inverse,
            version,
        })
    }

    /// Undo: the newest group, or with `scope` the newest group of that origin (keeping
    /// later edits, and free files written since by others). `by` is who asked. Chapter
    /// edits and free files go back together.
    pub fn undo(
        &mut self,
        scope: Option<&OriginFilter>,
        by: Origin,
        clock: &dyn Clock,
        ids: &dyn IdSource,
    ) -> Result<Moved, HistoryError> {
        // Past a change from another device, plain undo reverts this device's newest group
        // and keeps what arrived since, as an origin-scoped undo does.
        let local = OriginFilter::Local;
        let scope = match scope {
            None if self.history.has_remote() => Some(&local),
            scope => scope,
        };
        match scope {
            None => self.history.undo(&mut self.project, &mut self.files),
            Some(filter) => self.history.undo_scoped(
                &mut self.project,
                &mut self.files,
                filter,
                by,
                clock.now_ms(),
                ids,
            ),
        }
    }

    /// Redo the last undone group (its chapter edits and free files).
    pub fn redo(&mut self) -> Result<Moved, HistoryError> {
        self.history.redo(&mut self.project, &mut self.files)
    }
}

/// The outcome of a call that failed before or while running: an error, no edits.
fn failed(error: &ToolError, started: u64, clock: &dyn Clock) -> Outcome {
    Outcome {
        result: ToolResult::error(
            error,
            ResultMeta {
                execution_time_ms: clock.now_ms().saturating_sub(started),
                command_id: None,
                bytes_written: None,
            },
        ),
        edits: Vec::new(),
        ui_changed: false,
        bible: Vec::new(),
        files: Vec::new(),
        chapters_added: Vec::new(),
        memory: Vec::new(),
    }
}

/// The `concurrent_update` error: another origin wrote the field a moment ago.
fn concurrent_update(
    kind: Kind,
    id: &str,
    c: &crate::bible::Concurrent,
    proposed: &Value,
) -> ToolError {
    let secs = c.ago_ms as f64 / 1000.0;
    ToolError::new(
        "concurrent_update",
        format!(
            "CONCURRENT UPDATE DETECTED: '{}' of {kind} '{id}' was updated by {} {:.1} s ago. Current value: {}. Proposed value: {}. Nothing was changed; read the entry again and decide whether your update still applies.",
            c.field, c.by, secs, c.current, proposed
        ),
    )
    .with_details(json!({
        "kind": kind,
        "id": id,
        "field": c.field,
        "updatedBy": c.by,
        "agoMs": c.ago_ms,
        "current": c.current,
        "proposed": proposed,
    }))
}

fn inserted_bytes(change: &ChangeSet) -> usize {
    change
        .ops()
        .iter()
        .map(|op| match op {
            Op::Insert(s) => s.len(),
            _ => 0,
        })
        .sum()
}
