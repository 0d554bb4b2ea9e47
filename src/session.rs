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
//! The session also holds the agent's [`Memory`]. Memory changes are not undoable and are not
//! snapshotted: the memory tools validate everything before they change the memory, in one
//! step, so a failing memory call has changed nothing (see [`crate::memory`]).

use serde_json::Value;

use crate::commands::history::{Applied, Grouping, HistoryError};
use crate::commands::{Command, Effect, Entry, History, Origin, OriginFilter};
use crate::env::{Clock, IdSource};
use crate::memory::Memory;
use crate::project::changeset::{ChangeSet, Op};
use crate::project::{Chapter, EditError, Project, UiState};
use crate::tools::{ResultMeta, ToolError, ToolRegistry, ToolResult};

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

/// What a tool call did.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The result for the model.
    pub result: ToolResult,
    /// Chapter changes made (empty for reads and failures).
    pub edits: Vec<Applied>,
    /// Whether the editor UI state changed.
    pub ui_changed: bool,
}

/// What commands edit through.
pub struct EditContext<'a> {
    project: &'a mut Project,
    memory: &'a mut Memory,
    ids: &'a dyn IdSource,
    effects: Vec<Effect>,
    ui_changed: bool,
    description: Option<String>,
    now_ms: u64,
}

impl<'a> EditContext<'a> {
    fn new(
        project: &'a mut Project,
        memory: &'a mut Memory,
        ids: &'a dyn IdSource,
        now_ms: u64,
    ) -> Self {
        Self {
            project,
            memory,
            ids,
            effects: Vec::new(),
            ui_changed: false,
            description: None,
            now_ms,
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

    /// Apply a change to a chapter now, recording it for history (and for rollback).
    pub fn edit(&mut self, chapter_id: &str, change: ChangeSet) -> Result<u64, ToolError> {
        let chapter = self
            .project
            .chapter_mut(chapter_id)
            .ok_or_else(|| ToolError::not_found(format!("no chapter with id '{chapter_id}'")))?;
        let inverse = change
            .invert(chapter.text())
            .map_err(|e| ToolError::invalid_args(e.to_string()))?;
        let version = chapter.apply(&change)?;
        self.effects.push(Effect {
            chapter: chapter_id.to_string(),
            change,
            inverse,
        });
        Ok(version)
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
        for fx in self.effects.drain(..).rev() {
            if let Some(chapter) = self.project.chapter_mut(&fx.chapter) {
                // The inverse was computed against this very text; it fits.
                let _ = chapter.rollback(&fx.inverse);
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
        registry: &ToolRegistry,
        call: ToolCall,
        origin: Origin,
        clock: &dyn Clock,
        ids: &dyn IdSource,
    ) -> Outcome {
        let started = clock.now_ms();
        // Validate against the schema the model saw, then build the typed command.
        let command = registry
            .validate_call(&call.name, call.args)
            .and_then(|(meta, args)| (meta.factory)(Value::Object(args)));
        match command {
            // Policy (approvals by provenance) is checked here once the story bible exists;
            // the manuscript tools are all permitted.
            Ok(command) => {
                self.run_command(started, call.id, &call.name, command, origin, clock, ids)
            }
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
        let started = clock.now_ms();
        self.run_command(started, call_id, name, command, origin, clock, ids)
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
    ) -> Outcome {
        let meta = |command_id: Option<String>, bytes: Option<usize>| ResultMeta {
            execution_time_ms: clock.now_ms().saturating_sub(started),
            command_id,
            bytes_written: bytes,
        };
        let ui_before = self.project.ui.clone();
        let mut cx = EditContext::new(&mut self.project, &mut self.memory, ids, started);
        let data = match command.execute(&mut cx) {
            Ok(data) => data,
            Err(error) => {
                cx.rollback();
                self.project.ui = ui_before;
                return failed(&error, started, clock);
            }
        };
        let EditContext {
            effects,
            ui_changed,
            description,
            ..
        } = cx;
        let ui_changed = ui_changed && self.project.ui != ui_before;
        if effects.is_empty() {
            return Outcome {
                result: ToolResult::success(data, meta(None, None)),
                edits: Vec::new(),
                ui_changed,
            };
        }
        let bytes: usize = effects.iter().map(|fx| inserted_bytes(&fx.change)).sum();
        let edits: Vec<Applied> = effects
            .iter()
            .map(|fx| Applied {
                chapter: fx.chapter.clone(),
                change: fx.change.clone(),
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
        entry.tool_call_id = call_id;
        entry.command = Some(name.to_string());
        self.history.record(entry, Grouping::Command, ids);
        Outcome {
            result: ToolResult::success(data, meta(Some(entry_id), Some(bytes))),
            edits,
            ui_changed,
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
    /// happened since: the writer's text is never dropped because an agent was editing.
    pub fn apply_user_change(
        &mut self,
        chapter_id: &str,
        base_version: u64,
        change: ChangeSet,
        clock: &dyn Clock,
        ids: &dyn IdSource,
    ) -> Result<Applied, EditError> {
        let chapter =
            self.project
                .chapter_mut(chapter_id)
                .ok_or_else(|| EditError::NoSuchChapter {
                    query: chapter_id.to_string(),
                    hint: String::new(),
                })?;
        let rebased = chapter.rebase(base_version, change)?;
        if rebased.is_identity() {
            return Ok(Applied {
                chapter: chapter_id.to_string(),
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
        let version = chapter.apply(&rebased)?;
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
                inverse,
            }],
        );
        self.history.record(entry, Grouping::Typing, ids);
        Ok(Applied {
            chapter: chapter_id.to_string(),
            change: rebased,
            version,
        })
    }

    /// Undo: the newest group, or with `scope` the newest group of that origin (keeping
    /// later edits). `by` is who asked.
    pub fn undo(
        &mut self,
        scope: Option<&OriginFilter>,
        by: Origin,
        clock: &dyn Clock,
        ids: &dyn IdSource,
    ) -> Result<Vec<Applied>, HistoryError> {
        match scope {
            None => self.history.undo(&mut self.project),
            Some(filter) => {
                self.history
                    .undo_scoped(&mut self.project, filter, by, clock.now_ms(), ids)
            }
        }
    }

    /// Redo the last undone group.
    pub fn redo(&mut self) -> Result<Vec<Applied>, HistoryError> {
        self.history.redo(&mut self.project)
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
    }
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
