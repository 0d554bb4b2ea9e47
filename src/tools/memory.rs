//! Memory tools: the agent's long-term notes, goals, watched entities and bedside note
//! (`write_memory_note`, `search_memory`, `update_memory_note`, `delete_memory_note`,
//! `restore_memory_note`, `create_goal`, `update_goal`, `watch_entity`,
//! `evolve_bedside_note`).
//!
//! They act on the session's [`Memory`](crate::memory::Memory) as seen from the session's
//! project: notes of other projects do not exist for them. They are not reversible and make
//! no history entries. Each validates its whole input before it changes the memory, in one
//! call, so a failing call changes nothing (memory is not snapshotted for rollback).
//!
//! A note written by a tool carries the caller's origin as its author. An agent that updates
//! or deletes a note the writer (or an import) wrote, or a global note, changes nothing: the
//! call fails with `approval_required` under the approval policies
//! ([`crate::policy::note_needs_approval`]), the core makes it a card for the writer, and the
//! approved call runs again with a grant naming the note's version. Deleting is soft: the note
//! goes to the trash, from which `restore_memory_note` (or the writer, from the page) brings it
//! back for 30 days. An agent may restore only what an agent deleted. Every call that changes a
//! note also purges the deleted notes whose 30 days are over.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use serde_json::Value;

use super::{ToolError, ToolRegistry, ToolSpec};
use crate::commands::Category;
use crate::commands::Origin;
use crate::memory::{
    shorten, EntityType, Goal, GoalPatch, GoalStatus, MemoryError, MemoryNote, NewGoal, NewNote,
    NewWatch, NotePatch, NoteType, Priority, Scope, SearchQuery, WatchedEntity,
};
use crate::policy::{self, Action, Grant};
use crate::session::EditContext;

/// Characters of a note's text shown in a search hit.
pub const PREVIEW_CHARS: usize = 200;

/// Register the memory tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.add::<WriteMemoryNote>();
    registry.add::<SearchMemory>();
    registry.add::<UpdateMemoryNote>();
    registry.add::<DeleteMemoryNote>();
    registry.add::<RestoreMemoryNote>();
    registry.add::<CreateGoal>();
    registry.add::<UpdateGoal>();
    registry.add::<WatchEntity>();
    registry.add::<EvolveBedsideNote>();
}

impl From<MemoryError> for ToolError {
    fn from(error: MemoryError) -> Self {
        ToolError::new(error.code(), error.to_string())
    }
}

/// A note as a tool result: its fields (camelCase) without the earlier texts, which the
/// bedside note reports as a count (`previousVersions`).
fn note_json(note: &MemoryNote) -> Value {
    let mut value = crate::error::to_json(note);
    if let Value::Object(map) = &mut value {
        map.remove("previous");
        if note.is_bedside() {
            map.insert("previousVersions".into(), json!(note.previous.len()));
        }
    }
    value
}

fn goal_json(goal: &Goal) -> Value {
    crate::error::to_json(goal)
}

fn entity_json(entity: &WatchedEntity) -> Value {
    crate::error::to_json(entity)
}

/// `importance` as given (any non-negative integer) to 1..=5, or an error naming the value.
fn importance(value: Option<u64>) -> Result<Option<u8>, ToolError> {
    match value {
        None => Ok(None),
        Some(v) => match u8::try_from(v) {
            Ok(i) if (1..=5).contains(&i) => Ok(Some(i)),
            _ => Err(ToolError::invalid_args(format!(
                "'importance' must be 1 (trivia) to 5 (essential), got {v}"
            ))),
        },
    }
}

/// `progress` as given to 0..=100, or an error naming the value.
fn progress(value: Option<u64>) -> Result<Option<u8>, ToolError> {
    match value {
        None => Ok(None),
        Some(v) => match u8::try_from(v) {
            Ok(p) if p <= 100 => Ok(Some(p)),
            _ => Err(ToolError::invalid_args(format!(
                "'progress' must be a percentage from 0 to 100, got {v}"
            ))),
        },
    }
}

/// The project the session has open.
fn project_id(cx: &EditContext<'_>) -> String {
    cx.project().id.clone()
}

/// Check that the note exists and is visible from the session's project; otherwise a
/// `not_found` error naming the closest visible ids (or, for a deleted note, saying so).
fn visible_note(cx: &EditContext<'_>, id: &str) -> Result<(), ToolError> {
    let project = &cx.project().id;
    let memory = cx.memory_ref();
    match memory.note(id) {
        Some(n) if n.visible_from(project) => return Ok(()),
        Some(n) if n.is_deleted() && n.belongs_to(project) => {
            return Err(ToolError::not_found(format!(
                "note '{}' was deleted; restore_memory_note brings it back (within 30 days of the deletion) before it can be changed",
                shorten(id, 80)
            )))
        }
        _ => {}
    }
    // Suggesting close ids costs O(id length) per note; skip it for absurd ids.
    let close = if id.chars().count() <= 100 {
        crate::names::did_you_mean(id, memory.visible_notes(project).map(|n| n.id.as_str()))
    } else {
        String::new()
    };
    Err(ToolError::not_found(format!(
        "no note with id '{}' in this project's memory{close}; search_memory lists notes with their ids",
        shorten(id, 80)
    )))
}

/// Whether an agent may make this change to `note` now: yes for the writer, for the approved
/// call (when the note is still at the version the writer saw; a `conflict` when it changed
/// since), and when the policy does not protect the note; otherwise `approval_required`.
fn may_change(
    cx: &EditContext<'_>,
    tool: &str,
    note: &MemoryNote,
    patch: Option<&NotePatch>,
) -> Result<(), ToolError> {
    if !cx.actor().is_agent() {
        return Ok(());
    }
    if let Some(granted) = cx
        .grant()
        .and_then(|g| g.versions.get(&Grant::note_key(&note.id)))
    {
        if *granted == u64::from(note.version) {
            return Ok(());
        }
        return Err(ToolError::new(
            "conflict",
            format!(
                "The memory note '{}' changed since the writer was asked to approve this call (version {granted} then, {} now); nothing was changed. Read it again with search_memory and propose the change anew if it still applies.",
                shorten(&note.id, 80),
                note.version
            ),
        )
        .with_details(json!({ "current": note_json(note) })));
    }
    let action = if patch.is_some() {
        Action::Update
    } else {
        Action::Delete
    };
    let mode = cx.policies().mode(tool);
    match policy::note_needs_approval(mode, action, cx.actor(), note) {
        Some(reason) => Err(policy::note_approval_required(tool, note, patch, &reason)),
        None => Ok(()),
    }
}

/// Purge the deleted notes whose 30 days in the trash are over (after a note changed; the
/// save deletes their records).
fn purge(cx: &mut EditContext<'_>) {
    let now = cx.now_ms();
    cx.memory().purge_expired(now);
}

/// Arguments of `write_memory_note`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteNoteArgs {
    /// The note: one fact, observation, plan, preference or issue, in a sentence or a short
    /// paragraph (at most 8000 characters).
    pub text: String,
    /// What kind of note: fact (true about the story), observation (something noticed),
    /// plan (what to do), preference (how the writer likes things) or issue (a problem to
    /// fix).
    #[serde(rename = "type")]
    pub note_type: NoteType,
    /// project (seen only in this project, the default) or global (seen in every project,
    /// such as the writer's general preferences).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// Topic tags to find the note again, such as character, place or plot-thread names (at
    /// most 32 tags of 64 characters; stored lowercase).
    #[serde(default, alias = "topic_tags", alias = "tags")]
    pub topic_tags: Option<Vec<String>>,
    /// How much the note matters, 1 (trivia) to 5 (essential); default 3.
    #[serde(default)]
    #[schemars(range(min = 1, max = 5))]
    pub importance: Option<u64>,
}

/// `write_memory_note`: save a note.
pub struct WriteMemoryNote;

impl ToolSpec for WriteMemoryNote {
    type Args = WriteNoteArgs;
    const NAME: &'static str = "write_memory_note";
    const CATEGORY: Category = Category::Memory;
    const DESCRIPTION: &'static str = "Save a note to long-term memory: a fact about the story, an observation, a plan, a preference of the writer or an issue to fix. Project notes are seen only in this project, global notes in every project. Tag it with topics (character, place, thread names) so search_memory finds it again. Returns the note with its id.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let input = NewNote {
            text: args.text,
            note_type: args.note_type,
            scope: args.scope.unwrap_or_default(),
            tags: args.topic_tags.unwrap_or_default(),
            importance: importance(args.importance)?,
        };
        let (project, now, author) = (project_id(cx), cx.now_ms(), cx.origin());
        let ids = cx.ids();
        let note = cx
            .memory()
            .write_note_as(&project, input, author, now, ids)?;
        let result = json!({ "note": note_json(note) });
        purge(cx);
        Ok(result)
    }
}

/// Arguments of `search_memory`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchMemoryArgs {
    /// Words to look for; hits are ranked by relevance. Omit to list notes by importance and
    /// recency.
    #[serde(default)]
    pub query: Option<String>,
    /// Only notes that carry every one of these tags.
    #[serde(default, alias = "topic_tags", alias = "topicTags")]
    pub tags: Option<Vec<String>>,
    /// Only project notes or only global notes; omit for both.
    #[serde(default)]
    pub scope: Option<Scope>,
    /// Most hits to return, 1 to 100; default 10.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u64>,
}

/// `search_memory`: find notes.
pub struct SearchMemory;

impl ToolSpec for SearchMemory {
    type Args = SearchMemoryArgs;
    const NAME: &'static str = "search_memory";
    const CATEGORY: Category = Category::Memory;
    const DESCRIPTION: &'static str = "Search long-term memory notes by words (ranked by relevance), by topic tags (a note must carry every tag given), or both; scope keeps only project or only global notes. Without query and tags it lists notes by importance and recency. Returns hits with id, type, tags, importance, score and a preview of the text.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let limit = match args.limit {
            None => crate::memory::search::DEFAULT_LIMIT,
            Some(n) if (1..=100).contains(&n) => n as usize,
            Some(n) => {
                return Err(ToolError::invalid_args(format!(
                    "'limit' must be 1 to 100, got {n}"
                )))
            }
        };
        let query = SearchQuery {
            text: args.query,
            tags: args.tags.unwrap_or_default(),
            scope: args.scope,
            limit,
        };
        let project = project_id(cx);
        let hits = cx.memory_ref().search(&project, &query);
        let list: Vec<Value> = hits
            .iter()
            .map(|hit| {
                let n = &hit.note;
                json!({
                    "id": n.id,
                    "type": n.note_type,
                    "scope": n.scope,
                    "tags": n.tags,
                    "importance": n.importance,
                    "author": n.author,
                    "score": (hit.score * 1000.0).round() / 1000.0,
                    "preview": shorten(&n.text, PREVIEW_CHARS),
                    "updatedMs": n.updated_ms,
                })
            })
            .collect();
        let mut result = json!({ "count": list.len(), "hits": list });
        if hits.is_empty() {
            result["hint"] =
                json!("no note matched; try other or fewer words, fewer tags, or no scope");
        }
        Ok(result)
    }
}

/// Arguments of `update_memory_note`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateNoteArgs {
    /// The note's id (from write_memory_note or search_memory).
    pub id: String,
    /// The new text, replacing the old (at most 8000 characters).
    #[serde(default)]
    pub text: Option<String>,
    /// The new kind: fact, observation, plan, preference or issue.
    #[serde(default, rename = "type")]
    pub note_type: Option<NoteType>,
    /// The new topic tags, replacing the old ones.
    #[serde(default, alias = "topic_tags", alias = "tags")]
    pub topic_tags: Option<Vec<String>>,
    /// The new importance, 1 (trivia) to 5 (essential).
    #[serde(default)]
    #[schemars(range(min = 1, max = 5))]
    pub importance: Option<u64>,
}

/// `update_memory_note`: change a note.
pub struct UpdateMemoryNote;

impl ToolSpec for UpdateMemoryNote {
    type Args = UpdateNoteArgs;
    const NAME: &'static str = "update_memory_note";
    const CATEGORY: Category = Category::Memory;
    const DESCRIPTION: &'static str = "Change a memory note by id: its text, type, topic tags (replacing the old ones) or importance. Give only what changes. Changing a note the writer wrote (or imported) or a global note needs the writer's approval: the call then changes nothing yet and waits for the writer's decision; notes agents wrote in this project change at once. The bedside note (your running plan) takes a new text or importance here too, under the same rules, its earlier text kept as a version; evolve_bedside_note rewrites it as well.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let patch = NotePatch {
            text: args.text,
            note_type: args.note_type,
            tags: args.topic_tags,
            importance: importance(args.importance)?,
        };
        visible_note(cx, &args.id)?;
        let checked = cx.memory_ref().check_patch(&args.id, &patch)?;
        if let Some(note) = cx.memory_ref().note(&args.id) {
            may_change(cx, Self::NAME, note, Some(&checked))?;
        }
        let (now, by) = (cx.now_ms(), cx.origin());
        let note = cx.memory().update_note_by(&args.id, checked, &by, now)?;
        let result = json!({ "note": note_json(note) });
        purge(cx);
        Ok(result)
    }
}

/// Arguments of `delete_memory_note`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DeleteNoteArgs {
    /// The note's id (from write_memory_note or search_memory).
    pub id: String,
}

/// `delete_memory_note`: delete a note.
pub struct DeleteMemoryNote;

impl ToolSpec for DeleteMemoryNote {
    type Args = DeleteNoteArgs;
    const NAME: &'static str = "delete_memory_note";
    const CATEGORY: Category = Category::Memory;
    const DESCRIPTION: &'static str = "Delete a memory note by id, when it is wrong or no longer useful. Deleting is soft: the note leaves search and your memory block, and restore_memory_note brings it back within 30 days. Deleting a note the writer wrote (or imported) or a global note needs the writer's approval: the call then deletes nothing yet and waits for the writer's decision; notes agents wrote in this project go at once. The bedside note cannot be deleted. Returns the deleted note.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        visible_note(cx, &args.id)?;
        if let Some(note) = cx.memory_ref().note(&args.id) {
            if note.is_bedside() {
                return Err(MemoryError::Invalid(format!(
                    "note '{}' is the bedside note and cannot be deleted; rewrite it with evolve_bedside_note instead",
                    shorten(&args.id, 80)
                ))
                .into());
            }
            may_change(cx, Self::NAME, note, None)?;
        }
        let (now, by) = (cx.now_ms(), cx.origin());
        let note = cx.memory().delete_note(&args.id, &by, now)?;
        let result = json!({
            "deleted": note_json(note),
            "restorableUntilMs": note.purge_ms(),
            "hint": "deleted notes can be restored with restore_memory_note for 30 days",
        });
        purge(cx);
        Ok(result)
    }
}

/// Arguments of `restore_memory_note`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RestoreNoteArgs {
    /// The deleted note's id (from delete_memory_note's result).
    pub id: String,
}

/// `restore_memory_note`: take a deleted note out of the trash.
pub struct RestoreMemoryNote;

impl ToolSpec for RestoreMemoryNote {
    type Args = RestoreNoteArgs;
    const NAME: &'static str = "restore_memory_note";
    const CATEGORY: Category = Category::Memory;
    const DESCRIPTION: &'static str = "Bring back a memory note deleted in the last 30 days, by id, as it was before the deletion. An agent can restore the notes an agent deleted; a note the writer deleted only the writer can restore. Returns the restored note.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let project = project_id(cx);
        let now = cx.now_ms();
        let note = cx
            .memory_ref()
            .note(&args.id)
            .filter(|n| n.belongs_to(&project));
        match note {
            None => {
                return Err(ToolError::not_found(format!(
                    "no deleted note with id '{}' in this project's memory; only notes deleted in the last 30 days can be restored",
                    shorten(&args.id, 80)
                )))
            }
            Some(n) if cx.actor().is_agent() && n.is_deleted() => {
                if !matches!(n.deleted_by, Some(Origin::Agent(_))) {
                    return Err(ToolError::new(
                        "not_allowed",
                        format!(
                            "note '{}' was deleted by the writer; only the writer can restore it (from the Memory view). Nothing was changed.",
                            shorten(&args.id, 80)
                        ),
                    ));
                }
            }
            Some(_) => {}
        }
        let note = cx.memory().restore_note(&args.id, now)?;
        let result = json!({ "note": note_json(note) });
        purge(cx);
        Ok(result)
    }
}

/// Arguments of `create_goal`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateGoalArgs {
    /// A short title, such as "Finish the chapter 3 draft".
    pub title: String,
    /// More detail: what done looks like.
    #[serde(default)]
    pub description: Option<String>,
    /// active (the default), completed, paused or abandoned.
    #[serde(default)]
    pub status: Option<GoalStatus>,
    /// Percent done, 0 to 100; default 0.
    #[serde(default)]
    #[schemars(range(min = 0, max = 100))]
    pub progress: Option<u64>,
}

/// `create_goal`: create a goal.
pub struct CreateGoal;

impl ToolSpec for CreateGoal {
    type Args = CreateGoalArgs;
    const NAME: &'static str = "create_goal";
    const CATEGORY: Category = Category::Memory;
    const DESCRIPTION: &'static str = "Create a goal for this project (such as \"Finish the chapter 3 draft\"), with an optional description, status and progress in percent. Active goals are shown in your memory block. Returns the goal with its id.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let input = NewGoal {
            title: args.title,
            description: args.description,
            status: args.status,
            progress: progress(args.progress)?,
        };
        let (project, now) = (project_id(cx), cx.now_ms());
        let ids = cx.ids();
        let goal = cx.memory().create_goal(&project, input, now, ids)?;
        Ok(json!({ "goal": goal_json(goal) }))
    }
}

/// Arguments of `update_goal`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateGoalArgs {
    /// The goal's id (from create_goal or the memory block).
    pub id: String,
    /// A new title.
    #[serde(default)]
    pub title: Option<String>,
    /// A new description (empty to clear it).
    #[serde(default)]
    pub description: Option<String>,
    /// active, completed, paused or abandoned. Completing without a progress sets it to 100.
    #[serde(default)]
    pub status: Option<GoalStatus>,
    /// Percent done, 0 to 100.
    #[serde(default)]
    #[schemars(range(min = 0, max = 100))]
    pub progress: Option<u64>,
}

/// `update_goal`: change a goal.
pub struct UpdateGoal;

impl ToolSpec for UpdateGoal {
    type Args = UpdateGoalArgs;
    const NAME: &'static str = "update_goal";
    const CATEGORY: Category = Category::Memory;
    const DESCRIPTION: &'static str = "Change a goal of this project by id: title, description, status (active, completed, paused, abandoned) or progress (0 to 100 percent). Give only what changes; completing a goal without a progress sets it to 100.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let patch = GoalPatch {
            title: args.title,
            description: args.description,
            status: args.status,
            progress: progress(args.progress)?,
        };
        let project = project_id(cx);
        if let Some(goal) = cx.memory_ref().goal(&args.id) {
            if goal.project != project {
                return Err(ToolError::not_found(format!(
                    "no goal with id '{}' in this project; the memory block lists the active goals with their ids",
                    shorten(&args.id, 80)
                )));
            }
        }
        let now = cx.now_ms();
        let goal = cx.memory().update_goal(&args.id, patch, now)?;
        Ok(json!({ "goal": goal_json(goal) }))
    }
}

/// Arguments of `watch_entity`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WatchEntityArgs {
    /// The entity's name, as the manuscript calls it.
    pub name: String,
    /// character, item, rule, location or plot_thread.
    #[serde(rename = "type")]
    pub entity_type: EntityType,
    /// Why to watch it: what must stay consistent or be followed up.
    pub reason: String,
    /// low, medium (the default) or high.
    #[serde(default)]
    pub priority: Option<Priority>,
}

/// `watch_entity`: keep an eye on an entity.
pub struct WatchEntity;

impl ToolSpec for WatchEntity {
    type Args = WatchEntityArgs;
    const NAME: &'static str = "watch_entity";
    const CATEGORY: Category = Category::Memory;
    const DESCRIPTION: &'static str = "Watch a character, item, rule, location or plot thread of this project for consistency, saying why and how much it matters. Watching the same name and type again updates its reason (and priority) instead of adding a second entry. Watched entities are shown in your memory block.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let input = NewWatch {
            name: args.name,
            entity_type: args.entity_type,
            reason: args.reason,
            priority: args.priority,
        };
        let (project, now) = (project_id(cx), cx.now_ms());
        let ids = cx.ids();
        let entity = cx.memory().watch_entity(&project, input, now, ids)?;
        Ok(json!({ "entity": entity_json(entity) }))
    }
}

/// Arguments of `evolve_bedside_note`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EvolveBedsideArgs {
    /// The whole new plan: current focus, open threads, next steps (at most 8000
    /// characters). It replaces the old text, which is kept as an earlier version.
    pub text: String,
}

/// `evolve_bedside_note`: rewrite the running plan.
pub struct EvolveBedsideNote;

impl ToolSpec for EvolveBedsideNote {
    type Args = EvolveBedsideArgs;
    const NAME: &'static str = "evolve_bedside_note";
    const CATEGORY: Category = Category::Memory;
    const DESCRIPTION: &'static str = "Rewrite the bedside note: your running plan for this project (current focus, open threads, next steps), shown first in your memory block. Write the whole new plan; earlier versions are kept.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let (project, now) = (project_id(cx), cx.now_ms());
        let ids = cx.ids();
        let note = cx.memory().evolve_bedside(&project, &args.text, now, ids)?;
        Ok(json!({ "note": note_json(note) }))
    }
}
