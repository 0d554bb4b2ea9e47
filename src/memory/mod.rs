//! The agent's memory: notes, goals, watched entities and the bedside note. Pure data and
//! rules, no I/O; persistence is the store's business.
//!
//! One [`Memory`] may hold several projects' notes plus the global ones: a note of
//! [`Scope::Global`] has no project and is visible from every project, a note of
//! [`Scope::Project`] only from its own. Goals and watched entities always belong to one
//! project.
//!
//! **A failed call changes nothing.** Every mutating method validates its whole input first
//! (text not empty and at most [`MAX_NOTE_CHARS`] characters, importance 1 to 5, progress 0 to
//! 100, tags normalized and within [`MAX_TAGS`] × [`MAX_TAG_CHARS`], known ids) and only then
//! changes the memory, in one step. The memory tools rely on this: a tool call that fails
//! leaves the memory as it was without a snapshot.
//!
//! **The bedside note** is each project's running plan: one `plan` note, project scope,
//! tagged [`BEDSIDE_TAG`], importance 5. It is created on first use
//! ([`Memory::ensure_bedside`], or implicitly by [`Memory::evolve_bedside`]), rewritten with
//! [`Memory::evolve_bedside`] (earlier texts are kept in [`MemoryNote::previous`], oldest first,
//! at most [`MAX_BEDSIDE_VERSIONS`]), and never deleted.
//!
//! **Authors and the trash.** Every note carries its [`MemoryNote::author`]: the writer
//! (`user`, also what a stored note without one loads as), an agent (`agent:<name>`) or an
//! `import`. Who may change what is the business of the policy, a floor above; this module only
//! records it. Deleting a note is soft ([`Memory::delete_note`]): the note stays, marked with
//! [`MemoryNote::deleted_ms`], but no longer shows anywhere (search, the context block,
//! listings: [`MemoryNote::visible_from`] is false), and it can be restored
//! ([`Memory::restore_note`]) for [`TRASH_RETENTION_MS`] (30 days). After that it can no longer
//! be restored, and [`Memory::purge_expired`] removes it for good; the callers purge on every
//! note write (the memory tools and the page's memory requests), so an expired note leaves
//! the store with the next note written, changed, deleted or restored.
//!
//! - [`search`]: BM25 search over notes ([`Memory::search`]).
//! - [`context`]: the `[AGENT MEMORY]` block of a system prompt ([`Memory::context_block`]).
//! - [`bedside`]: the bedside note's automatic status section (goals, analysis figures).
//! - [`monitor`]: what an edit did to the watched entities (mentions, misspellings,
//!   contradictions).
//! - [`suggest`]: suggestions for the writer (from the monitor and the idle thinker).

pub mod bedside;
pub mod context;
pub mod monitor;
pub mod search;
pub mod suggest;

use rustc_hash::{FxHashMap, FxHashSet};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::commands::Origin;
use crate::env::IdSource;
pub use crate::error::MemoryError;

pub use self::context::{estimate_tokens, CHARS_PER_TOKEN};
pub use self::search::{tokenize, SearchHit, SearchQuery};

/// The tag that marks a project's bedside note. Reserved: other notes cannot carry it.
pub const BEDSIDE_TAG: &str = "meta:bedside-note";
/// The longest note text, in characters. The same limit applies to goal titles and
/// descriptions, entity names and reasons.
pub const MAX_NOTE_CHARS: usize = 8_000;
/// Most tags on one note.
pub const MAX_TAGS: usize = 32;
/// The longest tag, in characters (after trimming).
pub const MAX_TAG_CHARS: usize = 64;
/// Most earlier versions of the bedside note kept; the oldest go first.
pub const MAX_BEDSIDE_VERSIONS: usize = 50;
/// The importance of a note written without one (1 = trivia, 5 = essential).
pub const DEFAULT_IMPORTANCE: u8 = 3;
/// The agent name of the bedside note's author (the core creates it for the agents).
pub const BEDSIDE_AUTHOR: &str = "bedside";
/// How long a deleted note can be restored: 30 days, in ms. After that it is purged.
pub const TRASH_RETENTION_MS: u64 = 30 * 24 * 60 * 60 * 1_000;
/// The bedside note's text until the agent first rewrites it.
pub const BEDSIDE_DEFAULT_TEXT: &str = "No plan yet. Rewrite this note with evolve_bedside_note to keep the current plan, open threads and next steps.";

/// What kind of thing a note records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum NoteType {
    /// Something true about the story or the project.
    Fact,
    /// Something noticed (a pattern, a weakness, a habit of the prose).
    Observation,
    /// An intention: what to do next.
    Plan,
    /// How the writer likes things done.
    Preference,
    /// A problem to fix.
    Issue,
}

impl NoteType {
    /// The wire name: `fact`, `observation`, `plan`, `preference` or `issue`.
    pub fn as_str(self) -> &'static str {
        match self {
            NoteType::Fact => "fact",
            NoteType::Observation => "observation",
            NoteType::Plan => "plan",
            NoteType::Preference => "preference",
            NoteType::Issue => "issue",
        }
    }
}

/// Where a note is visible.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "NoteScope")]
pub enum Scope {
    /// Only in its own project (the default).
    #[default]
    Project,
    /// In every project.
    Global,
}

impl Scope {
    /// The wire name: `project` or `global`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::Global => "global",
        }
    }
}

/// An earlier text of a note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NoteVersion {
    /// The text as it was.
    pub text: String,
    /// When that text was written.
    pub updated_ms: u64,
    /// Its version number.
    pub version: u32,
}

/// One note in memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MemoryNote {
    /// Unique id.
    pub id: String,
    /// The project it belongs to; `None` for a global note.
    #[serde(default)]
    pub project: Option<String>,
    /// The content (trimmed, 1 to [`MAX_NOTE_CHARS`] characters).
    pub text: String,
    /// What kind of note.
    pub note_type: NoteType,
    /// Where it is visible.
    pub scope: Scope,
    /// Normalized tags: trimmed, lowercase, unique.
    #[serde(default)]
    pub tags: Vec<String>,
    /// 1 (trivia) to 5 (essential).
    pub importance: u8,
    /// When it was written.
    pub created_ms: u64,
    /// When it last changed.
    pub updated_ms: u64,
    /// 1 when written, one more per change.
    pub version: u32,
    /// Earlier texts, oldest first. Kept for the bedside note (at most
    /// [`MAX_BEDSIDE_VERSIONS`]); other notes keep only their current text.
    #[serde(default)]
    pub previous: Vec<NoteVersion>,
    /// Who wrote it: the writer (`user`), an agent (`agent:<name>`) or an `import`. A stored
    /// note from before authors were recorded loads as the writer's (the protected case).
    #[serde(default = "writer")]
    pub author: Origin,
    /// When it was deleted (ms); `None` while it is live. A deleted note is in the trash: it
    /// shows nowhere but can be restored for [`TRASH_RETENTION_MS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_ms: Option<u64>,
    /// Who deleted it (with `deleted_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_by: Option<Origin>,
}

/// The author of a stored note that names none: the writer.
fn writer() -> Origin {
    Origin::User
}

impl MemoryNote {
    /// Whether `project` can see this note: global notes are visible everywhere, project
    /// notes only in their project, and a deleted note nowhere.
    pub fn visible_from(&self, project: &str) -> bool {
        !self.is_deleted() && self.belongs_to(project)
    }

    /// Whether the note is global or `project`'s, deleted or not.
    pub fn belongs_to(&self, project: &str) -> bool {
        match self.scope {
            Scope::Global => true,
            Scope::Project => self.project.as_deref() == Some(project),
        }
    }

    /// Whether the note is in the trash.
    pub fn is_deleted(&self) -> bool {
        self.deleted_ms.is_some()
    }

    /// When a deleted note is purged (no longer restorable); `None` for a live note.
    pub fn purge_ms(&self) -> Option<u64> {
        self.deleted_ms
            .map(|at| at.saturating_add(TRASH_RETENTION_MS))
    }

    /// Whether the note is deleted and its time in the trash is over at `now_ms`.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.purge_ms().is_some_and(|purge| now_ms >= purge)
    }

    /// Whether this is a project's bedside note.
    pub fn is_bedside(&self) -> bool {
        self.scope == Scope::Project && self.tags.iter().any(|t| t == BEDSIDE_TAG)
    }
}

/// A new note. On the wire (`write_memory_notes`) its fields are `text`, `noteType`, `scope`,
/// `tags` and `importance`; any other field is refused with that list (so the agents' tool
/// spelling `type` is not silently dropped).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(optional_fields)]
pub struct NewNote {
    /// The content.
    pub text: String,
    /// What kind of note.
    pub note_type: NoteType,
    /// Where it is visible.
    #[serde(default)]
    #[ts(as = "Option<Scope>", optional)]
    pub scope: Scope,
    /// Tags (normalized on write).
    #[serde(default)]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub tags: Vec<String>,
    /// 1 to 5; [`DEFAULT_IMPORTANCE`] when `None`.
    #[serde(default)]
    pub importance: Option<u8>,
}

impl NewNote {
    /// A project note of `note_type` with default importance and no tags.
    pub fn new(text: impl Into<String>, note_type: NoteType) -> Self {
        Self {
            text: text.into(),
            note_type,
            scope: Scope::Project,
            tags: Vec::new(),
            importance: None,
        }
    }
}

/// Changes to a note; `None` keeps the current value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotePatch {
    /// New content.
    #[serde(default)]
    pub text: Option<String>,
    /// New kind.
    #[serde(default)]
    pub note_type: Option<NoteType>,
    /// New tags (replacing the old ones).
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// New importance, 1 to 5.
    #[serde(default)]
    pub importance: Option<u8>,
}

impl NotePatch {
    fn is_empty(&self) -> bool {
        self.text.is_none()
            && self.note_type.is_none()
            && self.tags.is_none()
            && self.importance.is_none()
    }
}

/// Where a goal stands.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    /// Being worked on (the default). Only active goals appear in the context block.
    #[default]
    Active,
    /// Done.
    Completed,
    /// On hold.
    Paused,
    /// Given up.
    Abandoned,
}

impl GoalStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            GoalStatus::Active => "active",
            GoalStatus::Completed => "completed",
            GoalStatus::Paused => "paused",
            GoalStatus::Abandoned => "abandoned",
        }
    }
}

/// A goal of a project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Goal {
    /// Unique id.
    pub id: String,
    /// The project it belongs to.
    pub project: String,
    /// A short title.
    pub title: String,
    /// More detail (may be empty).
    #[serde(default)]
    pub description: String,
    /// Where it stands.
    pub status: GoalStatus,
    /// Percent done, 0 to 100.
    pub progress: u8,
    /// When it was created.
    pub created_ms: u64,
    /// When it last changed.
    pub updated_ms: u64,
}

/// A new goal.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewGoal {
    /// A short title.
    pub title: String,
    /// More detail.
    #[serde(default)]
    pub description: Option<String>,
    /// Initial status; active when `None`.
    #[serde(default)]
    pub status: Option<GoalStatus>,
    /// Percent done, 0 to 100; 0 when `None` (100 for a completed goal).
    #[serde(default)]
    pub progress: Option<u8>,
}

/// Changes to a goal; `None` keeps the current value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoalPatch {
    /// New title.
    #[serde(default)]
    pub title: Option<String>,
    /// New description (may be empty to clear it).
    #[serde(default)]
    pub description: Option<String>,
    /// New status. Completing a goal without a progress sets progress to 100.
    #[serde(default)]
    pub status: Option<GoalStatus>,
    /// New progress, 0 to 100.
    #[serde(default)]
    pub progress: Option<u8>,
}

/// What kind of thing a watched entity is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum EntityType {
    /// A person in the story.
    Character,
    /// An object.
    Item,
    /// A rule of the world (magic, law, physics).
    Rule,
    /// A place.
    Location,
    /// A storyline that must be followed up.
    PlotThread,
}

impl EntityType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            EntityType::Character => "character",
            EntityType::Item => "item",
            EntityType::Rule => "rule",
            EntityType::Location => "location",
            EntityType::PlotThread => "plot_thread",
        }
    }
}

/// How much a watched entity matters.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    Serialize,
    Deserialize,
    JsonSchema,
    TS,
)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Keep in mind.
    Low,
    /// Check regularly (the default).
    #[default]
    Medium,
    /// Check on every change.
    High,
}

impl Priority {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Medium => "medium",
            Priority::High => "high",
        }
    }
}

/// An entity the agent keeps an eye on (for consistency checks).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WatchedEntity {
    /// Unique id.
    pub id: String,
    /// The project it belongs to.
    pub project: String,
    /// The entity's name.
    pub name: String,
    /// What kind of entity.
    pub entity_type: EntityType,
    /// Why it is watched.
    pub reason: String,
    /// How much it matters.
    pub priority: Priority,
    /// When it was first watched.
    pub created_ms: u64,
}

/// An entity to watch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewWatch {
    /// The entity's name.
    pub name: String,
    /// What kind of entity.
    pub entity_type: EntityType,
    /// Why to watch it.
    pub reason: String,
    /// How much it matters; medium when `None` (an existing entry keeps its priority).
    #[serde(default)]
    pub priority: Option<Priority>,
}

/// A project's memory (plus the global notes it can see). It may hold several projects;
/// every query names the project it looks from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Memory {
    /// Notes of every project, and the global ones, in writing order.
    #[serde(default)]
    pub notes: Vec<MemoryNote>,
    /// Goals, in creation order.
    #[serde(default)]
    pub goals: Vec<Goal>,
    /// Watched entities, in creation order.
    #[serde(default)]
    pub watched: Vec<WatchedEntity>,
    /// The search index over `notes`: derived, not serialized, ignored by `==`. Every method
    /// here keeps it current; after changing `notes` directly or deserializing, call
    /// [`Memory::reindex`] to make searches fast again (they are correct either way).
    #[serde(skip)]
    index: search::NoteIndex,
    /// The items changed while tracking (see [`Memory::track_changes`]): not serialized,
    /// ignored by `==`.
    #[serde(skip)]
    changes: Changes,
    /// Where each note stands in `notes`, by id: derived, not serialized, ignored by `==`.
    #[serde(skip)]
    positions: Positions,
}

/// Note id → position in [`Memory::notes`]. A lookup checks the note it finds and falls back
/// to a scan, so a map left behind by a direct change to `notes` is slow, never wrong; the
/// methods here keep it current, and [`Memory::reindex`] rebuilds it.
#[derive(Clone, Default)]
struct Positions(FxHashMap<String, u32>);

impl Positions {
    fn of(notes: &[MemoryNote]) -> Self {
        let mut positions = Self::default();
        positions.rebuild(notes);
        positions
    }

    fn rebuild(&mut self, notes: &[MemoryNote]) {
        self.0.clear();
        self.0.reserve(notes.len());
        // The first of equal ids wins, as in a scan.
        for (i, note) in notes.iter().enumerate().rev() {
            self.0.insert(note.id.clone(), search::small(i));
        }
    }

    /// After `notes` got a note at its end.
    fn pushed(&mut self, notes: &[MemoryNote]) {
        if let Some(note) = notes.last() {
            self.0
                .insert(note.id.clone(), search::small(notes.len() - 1));
        }
    }

    /// After the note `id` at `position` was removed from `notes`.
    fn removed(&mut self, notes: &[MemoryNote], position: usize, id: &str) {
        self.0.remove(id);
        for (i, note) in notes.iter().enumerate().skip(position) {
            if let Some(at) = self.0.get_mut(&note.id) {
                *at = search::small(i);
            }
        }
    }

    /// Make sure every note has an entry: the map is rebuilt when its count is not the
    /// notes' (notes changed directly, or two notes share an id).
    fn cover(&mut self, notes: &[MemoryNote]) {
        if self.0.len() != notes.len() {
            self.rebuild(notes);
        }
    }

    /// Whether a note has the id `id`, without a scan, once [`Positions::cover`] made sure
    /// every note has an entry: a position found is checked (a scan if it is not that
    /// note's), and an id the map does not hold is no note's.
    fn holds(&self, notes: &[MemoryNote], id: &str) -> bool {
        match self.0.get(id) {
            Some(&i) if notes.get(i as usize).is_some_and(|n| n.id == id) => true,
            Some(_) => notes.iter().any(|n| n.id == id),
            None => false,
        }
    }

    fn find(&self, notes: &[MemoryNote], id: &str) -> Option<usize> {
        let held = self.0.get(id).map(|&i| i as usize);
        match held {
            Some(i) if notes.get(i).is_some_and(|n| n.id == id) => Some(i),
            _ => notes.iter().position(|n| n.id == id),
        }
    }
}

impl PartialEq for Positions {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Positions {}

impl std::fmt::Debug for Positions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Positions")
            .field("notes", &self.0.len())
            .finish()
    }
}

/// A whole memory item (one that arrived from another device).
#[derive(Debug, Clone, PartialEq)]
pub enum MemoryItem {
    /// A note.
    Note(MemoryNote),
    /// A goal.
    Goal(Goal),
    /// A watched entity.
    Watched(WatchedEntity),
}

/// A memory item a method changed, added or removed, by id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Changed {
    /// A note.
    Note(String),
    /// A goal.
    Goal(String),
    /// A watched entity.
    Watched(String),
}

/// The items changed since [`Memory::track_changes`] (an item changed twice is there twice).
/// Not tracking, nothing is recorded (so memory written in bulk collects nothing).
#[derive(Debug, Clone, Default)]
struct Changes {
    tracking: bool,
    items: Vec<Changed>,
}

impl PartialEq for Changes {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Changes {}

/// A new id from `ids` for which `taken` is false (and not empty): the next ids first, then,
/// after eight taken ones, ids with a counter appended.
fn fresh_id_among(ids: &dyn IdSource, taken: impl Fn(&str) -> bool) -> String {
    let mut id = ids.next_id();
    let mut n = 1u64;
    while id.is_empty() || taken(&id) {
        id = if n < 8 {
            ids.next_id()
        } else {
            format!("{}-{n}", ids.next_id())
        };
        n += 1;
    }
    id
}

/// Shorten text for messages.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// Keep `old`, the text a bedside note had until now, as its newest earlier version (at most
/// [`MAX_BEDSIDE_VERSIONS`] are kept).
fn keep_version(note: &mut MemoryNote, old: String) {
    note.previous.push(NoteVersion {
        text: old,
        updated_ms: note.updated_ms,
        version: note.version,
    });
    if note.previous.len() > MAX_BEDSIDE_VERSIONS {
        let excess = note.previous.len() - MAX_BEDSIDE_VERSIONS;
        note.previous.drain(..excess);
    }
}

/// Check a required text field: trimmed, not empty, at most [`MAX_NOTE_CHARS`] characters.
fn required_text(field: &str, text: &str) -> Result<String, MemoryError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(MemoryError::Invalid(format!(
            "'{field}' is empty (or only whitespace); write out the {field}"
        )));
    }
    optional_text(field, trimmed)
}

/// Check a text field that may be empty: trimmed, at most [`MAX_NOTE_CHARS`] characters.
fn optional_text(field: &str, text: &str) -> Result<String, MemoryError> {
    let trimmed = text.trim();
    let chars = trimmed.chars().count();
    if chars > MAX_NOTE_CHARS {
        return Err(MemoryError::Invalid(format!(
            "'{field}' is {chars} characters long, over the limit of {MAX_NOTE_CHARS}; shorten it or split it into several notes"
        )));
    }
    Ok(trimmed.to_string())
}

fn check_importance(importance: u8) -> Result<u8, MemoryError> {
    if (1..=5).contains(&importance) {
        Ok(importance)
    } else {
        Err(MemoryError::Invalid(format!(
            "'importance' must be 1 (trivia) to 5 (essential), got {importance}"
        )))
    }
}

fn check_progress(progress: u8) -> Result<u8, MemoryError> {
    if progress <= 100 {
        Ok(progress)
    } else {
        Err(MemoryError::Invalid(format!(
            "'progress' must be a percentage from 0 to 100, got {progress}"
        )))
    }
}

/// Normalize tags: trimmed, lowercase, duplicates dropped (first kept). Errors for an empty
/// tag, a tag over [`MAX_TAG_CHARS`] characters, more than [`MAX_TAGS`] tags, and the
/// reserved [`BEDSIDE_TAG`].
pub fn normalize_tags(tags: &[String]) -> Result<Vec<String>, MemoryError> {
    let mut out: Vec<String> = Vec::with_capacity(tags.len().min(MAX_TAGS));
    for (i, tag) in tags.iter().enumerate() {
        let tag = tag.trim();
        if tag.is_empty() {
            return Err(MemoryError::Invalid(format!(
                "tag {} is empty; every tag needs at least one visible character",
                i + 1
            )));
        }
        let chars = tag.chars().count();
        if chars > MAX_TAG_CHARS {
            return Err(MemoryError::Invalid(format!(
                "tag '{}' is {chars} characters long, over the limit of {MAX_TAG_CHARS}; use a short topic word",
                shorten(tag, 40)
            )));
        }
        let tag = tag.to_lowercase();
        if tag == BEDSIDE_TAG {
            return Err(MemoryError::Invalid(format!(
                "the tag '{BEDSIDE_TAG}' is reserved for the bedside note; rewrite that note with evolve_bedside_note"
            )));
        }
        if !out.contains(&tag) {
            out.push(tag);
        }
    }
    if out.len() > MAX_TAGS {
        return Err(MemoryError::Invalid(format!(
            "{} different tags given, at most {MAX_TAGS} allowed; keep the most telling ones",
            out.len()
        )));
    }
    Ok(out)
}

/// A bulk write of new notes under way ([`Memory::bulk`]).
pub struct BulkNotes<'a> {
    memory: &'a mut Memory,
    project: &'a str,
    now_ms: u64,
    ids: &'a dyn IdSource,
    /// The ids of goals and watched entities, which a note's id must not take.
    others: FxHashSet<String>,
    /// The ids given so far.
    fresh: FxHashSet<String>,
    /// The notes added so far, in order.
    notes: Vec<MemoryNote>,
}

impl BulkNotes<'_> {
    /// Check `input` and make it a note with a fresh id: the note, as it will join the
    /// memory. An invalid note is refused, and the bulk write can go on without it.
    pub fn add(&mut self, input: NewNote) -> Result<&MemoryNote, MemoryError> {
        let checked = Checked::of(input)?;
        let memory = &*self.memory;
        let (others, fresh) = (&self.others, &self.fresh);
        let id = fresh_id_among(self.ids, |id| {
            memory.positions.holds(&memory.notes, id) || others.contains(id) || fresh.contains(id)
        });
        self.fresh.insert(id.clone());
        self.notes
            .push(checked.into_note(id, self.project, Origin::User, self.now_ms));
        Ok(&self.notes[self.notes.len() - 1])
    }

    /// The notes added join the memory. Returns their ids, in order.
    pub fn finish(self) -> Vec<String> {
        let memory = self.memory;
        let ids: Vec<String> = self.notes.iter().map(|n| n.id.clone()).collect();
        memory.notes.reserve(self.notes.len());
        for note in self.notes {
            memory.notes.push(note);
            memory.positions.pushed(&memory.notes);
        }
        for id in &ids {
            memory.changed(|| Changed::Note(id.clone()));
        }
        ids
    }
}

/// A new note's fields, checked: its text, tags and importance are valid.
struct Checked {
    scope: Scope,
    note_type: NoteType,
    text: String,
    tags: Vec<String>,
    importance: u8,
}

impl Checked {
    fn of(input: NewNote) -> Result<Self, MemoryError> {
        Ok(Self {
            text: required_text("text", &input.text)?,
            tags: normalize_tags(&input.tags)?,
            importance: check_importance(input.importance.unwrap_or(DEFAULT_IMPORTANCE))?,
            scope: input.scope,
            note_type: input.note_type,
        })
    }

    /// The note, version 1, written by `author` at `now_ms` (in `project` when its scope is
    /// the project's).
    fn into_note(self, id: String, project: &str, author: Origin, now_ms: u64) -> MemoryNote {
        MemoryNote {
            id,
            project: match self.scope {
                Scope::Project => Some(project.to_string()),
                Scope::Global => None,
            },
            text: self.text,
            note_type: self.note_type,
            scope: self.scope,
            tags: self.tags,
            importance: self.importance,
            created_ms: now_ms,
            updated_ms: now_ms,
            version: 1,
            previous: Vec::new(),
            author,
            deleted_ms: None,
            deleted_by: None,
        }
    }
}

impl Memory {
    /// An empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// The note with `id`, in any project, deleted or not.
    pub fn note(&self, id: &str) -> Option<&MemoryNote> {
        self.positions.find(&self.notes, id).map(|i| &self.notes[i])
    }

    /// The goal with `id`.
    pub fn goal(&self, id: &str) -> Option<&Goal> {
        self.goals.iter().find(|g| g.id == id)
    }

    /// The watched entity with `id`.
    pub fn watched_entity(&self, id: &str) -> Option<&WatchedEntity> {
        self.watched.iter().find(|w| w.id == id)
    }

    /// The notes `project` can see (its own and the global ones), in writing order.
    pub fn visible_notes<'a>(&'a self, project: &'a str) -> impl Iterator<Item = &'a MemoryNote> {
        self.notes.iter().filter(move |n| n.visible_from(project))
    }

    /// The goals of `project`, in creation order.
    pub fn project_goals<'a>(&'a self, project: &'a str) -> impl Iterator<Item = &'a Goal> {
        self.goals.iter().filter(move |g| g.project == project)
    }

    /// The entities `project` watches, in creation order.
    pub fn project_watched<'a>(
        &'a self,
        project: &'a str,
    ) -> impl Iterator<Item = &'a WatchedEntity> {
        self.watched.iter().filter(move |w| w.project == project)
    }

    fn id_taken(&self, id: &str) -> bool {
        self.positions.find(&self.notes, id).is_some()
            || self.goals.iter().any(|g| g.id == id)
            || self.watched.iter().any(|w| w.id == id)
    }

    /// A new id from `ids` that no note, goal or entity has (an id source restarted after a
    /// reload could repeat one).
    fn fresh_id(&self, ids: &dyn IdSource) -> String {
        fresh_id_among(ids, |id| self.id_taken(id))
    }

    /// Start recording which items the methods here change (forgetting what was recorded):
    /// [`Memory::take_changes`] then says what to save, without a copy of the memory to
    /// compare with. Items changed directly through the public fields are not recorded.
    pub fn track_changes(&mut self) {
        self.changes = Changes {
            tracking: true,
            items: Vec::new(),
        };
    }

    /// The items changed, added or removed since [`Memory::track_changes`], sorted, each
    /// once; and stop recording.
    pub fn take_changes(&mut self) -> Vec<Changed> {
        let mut items = std::mem::take(&mut self.changes).items;
        items.sort();
        items.dedup();
        items
    }

    /// Record that an item changed (when tracking).
    fn changed(&mut self, item: impl FnOnce() -> Changed) {
        if self.changes.tracking {
            self.changes.items.push(item());
        }
    }

    fn not_found<'a>(
        kind: &'static str,
        id: &str,
        known: impl Iterator<Item = &'a str>,
        how: &str,
    ) -> MemoryError {
        // Suggesting close ids costs O(id length) per candidate; skip it for absurd ids.
        let close = if id.chars().count() <= 100 {
            crate::names::did_you_mean(id, known)
        } else {
            String::new()
        };
        MemoryError::NotFound {
            kind,
            id: shorten(id, 80),
            hint: format!("{close}; {how}"),
        }
    }

    /// The position of the live note `id` (a deleted one is not found: it must be restored
    /// first).
    fn note_index(&self, id: &str) -> Result<usize, MemoryError> {
        match self.positions.find(&self.notes, id) {
            Some(i) if !self.notes[i].is_deleted() => Ok(i),
            Some(_) => Err(MemoryError::NotFound {
                kind: "note",
                id: shorten(id, 80),
                hint: " among the live notes: it was deleted; restore it first to change it"
                    .to_string(),
            }),
            None => Err(Self::not_found(
                "note",
                id,
                self.notes
                    .iter()
                    .filter(|n| !n.is_deleted())
                    .map(|n| n.id.as_str()),
                "search_memory lists notes with their ids",
            )),
        }
    }

    fn bedside_index(&self, project: &str) -> Option<usize> {
        self.notes
            .iter()
            .position(|n| n.is_bedside() && n.project.as_deref() == Some(project))
    }

    /// The project's bedside note, if it has been created.
    pub fn bedside(&self, project: &str) -> Option<&MemoryNote> {
        self.bedside_index(project).map(|i| &self.notes[i])
    }

    /// Ensures the project's bedside note exists (a `plan` note, project scope, tagged
    /// [`BEDSIDE_TAG`], importance 5, text [`BEDSIDE_DEFAULT_TEXT`], author
    /// `agent:`[`BEDSIDE_AUTHOR`]: it is the agents' plan). Returns its id. Idempotent.
    pub fn ensure_bedside(&mut self, project: &str, now_ms: u64, ids: &dyn IdSource) -> String {
        if let Some(i) = self.bedside_index(project) {
            return self.notes[i].id.clone();
        }
        let id = self.fresh_id(ids);
        self.notes.push(MemoryNote {
            id: id.clone(),
            project: Some(project.to_string()),
            text: BEDSIDE_DEFAULT_TEXT.to_string(),
            note_type: NoteType::Plan,
            scope: Scope::Project,
            tags: vec![BEDSIDE_TAG.to_string()],
            importance: 5,
            created_ms: now_ms,
            updated_ms: now_ms,
            version: 1,
            previous: Vec::new(),
            author: Origin::Agent(BEDSIDE_AUTHOR.into()),
            deleted_ms: None,
            deleted_by: None,
        });
        self.index.pushed(&self.notes);
        self.positions.pushed(&self.notes);
        self.changed(|| Changed::Note(id.clone()));
        id
    }

    /// Rewrites the bedside note (creating it first if needed), pushing the old text into
    /// `previous` (at most [`MAX_BEDSIDE_VERSIONS`] kept, the oldest dropped first). The same
    /// text again changes nothing.
    pub fn evolve_bedside(
        &mut self,
        project: &str,
        text: &str,
        now_ms: u64,
        ids: &dyn IdSource,
    ) -> Result<&MemoryNote, MemoryError> {
        let text = required_text("text", text)?;
        self.ensure_bedside(project, now_ms, ids);
        let i = self.bedside_index(project).ok_or_else(|| {
            MemoryError::Invalid("the bedside note could not be created".to_string())
        })?;
        let note = &mut self.notes[i];
        if note.text != text {
            let old = std::mem::replace(&mut note.text, text);
            keep_version(note, old);
            note.version = note.version.saturating_add(1);
            note.updated_ms = now_ms;
            self.index.replaced(&self.notes, i);
            let id = self.notes[i].id.clone();
            self.changed(|| Changed::Note(id));
        }
        Ok(&self.notes[i])
    }

    /// Write a new note as the writer (author `user`). A project note belongs to `project`; a
    /// global one to no project.
    pub fn write_note(
        &mut self,
        project: &str,
        input: NewNote,
        now_ms: u64,
        ids: &dyn IdSource,
    ) -> Result<&MemoryNote, MemoryError> {
        self.write_note_as(project, input, Origin::User, now_ms, ids)
    }

    /// Write a new note by `author`.
    pub fn write_note_as(
        &mut self,
        project: &str,
        input: NewNote,
        author: Origin,
        now_ms: u64,
        ids: &dyn IdSource,
    ) -> Result<&MemoryNote, MemoryError> {
        let checked = Checked::of(input)?;
        let id = self.fresh_id(ids);
        self.changed(|| Changed::Note(id.clone()));
        self.notes
            .push(checked.into_note(id, project, author, now_ms));
        self.index.pushed(&self.notes);
        self.positions.pushed(&self.notes);
        let last = self.notes.len() - 1;
        Ok(&self.notes[last])
    }

    /// Write many new notes at once as the writer (author `user`): all of them, or none if
    /// one is invalid (the error gives its position, from 0). Returns the new notes' ids, in
    /// order. See [`Memory::bulk`], which this is, for the notes given all at once.
    pub fn write_notes(
        &mut self,
        project: &str,
        inputs: Vec<NewNote>,
        now_ms: u64,
        ids: &dyn IdSource,
    ) -> Result<Vec<String>, (usize, MemoryError)> {
        let mut bulk = self.bulk(project, now_ms, ids);
        for (i, input) in inputs.into_iter().enumerate() {
            bulk.add(input).map_err(|e| (i, e))?;
        }
        Ok(bulk.finish())
    }

    /// A bulk write of new notes as the writer (author `user`), a note at a time: each is
    /// checked and given its id as it is added ([`BulkNotes::add`]), so that its record can be
    /// saved before the next is read. They join the memory together when
    /// [`BulkNotes::finish`] is called; dropped before, it changes nothing. A new id is
    /// checked against the notes' positions (no scan), so a bulk write costs
    /// O(notes added + goals + watched entities), whatever the number of notes held. The new
    /// notes are not indexed yet: [`Memory::catch_up_index`] indexes them (searches are
    /// correct before, only slower), so that a caller can index them while the notes are
    /// being saved.
    pub fn bulk<'a>(
        &'a mut self,
        project: &'a str,
        now_ms: u64,
        ids: &'a dyn IdSource,
    ) -> BulkNotes<'a> {
        self.positions.cover(&self.notes);
        let others = self
            .goals
            .iter()
            .map(|g| g.id.clone())
            .chain(self.watched.iter().map(|w| w.id.clone()))
            .collect();
        BulkNotes {
            memory: self,
            project,
            now_ms,
            ids,
            others,
            fresh: FxHashSet::default(),
            notes: Vec::new(),
        }
    }

    /// Index the notes appended since the search index was last current (after
    /// [`Memory::write_notes`]); a full resync if anything else changed.
    pub fn catch_up_index(&mut self) {
        self.index.appended(&self.notes);
    }

    /// Check a change to a note without making it: the note must be live and not the bedside
    /// note, and the patch must change at least one field with valid values. Returns the
    /// patch as it would be applied (text trimmed, tags normalized).
    pub fn check_patch(&self, id: &str, patch: &NotePatch) -> Result<NotePatch, MemoryError> {
        let i = self.note_index(id)?;
        let note = &self.notes[i];
        if note.is_bedside()
            && (patch.note_type.is_some_and(|t| t != note.note_type) || patch.tags.is_some())
        {
            return Err(MemoryError::Invalid(format!(
                "note '{id}' is the bedside note: its type and tags stay as they are; change its text or importance"
            )));
        }
        if patch.is_empty() {
            return Err(MemoryError::Invalid(
                "nothing to update; give at least one of text, type, topicTags or importance"
                    .to_string(),
            ));
        }
        Ok(NotePatch {
            text: patch
                .text
                .as_deref()
                .map(|t| required_text("text", t))
                .transpose()?,
            note_type: patch.note_type,
            tags: patch.tags.as_deref().map(normalize_tags).transpose()?,
            importance: patch.importance.map(check_importance).transpose()?,
        })
    }

    /// Change a note; a deleted note must be restored first. A patch that changes nothing
    /// leaves the version as it is. The author stays (see [`Memory::update_note_by`]). The
    /// bedside note takes a new text or importance (not another type or tags), and its
    /// earlier text is kept as a version, as [`Memory::evolve_bedside`] keeps it.
    pub fn update_note(
        &mut self,
        id: &str,
        patch: NotePatch,
        now_ms: u64,
    ) -> Result<&MemoryNote, MemoryError> {
        let patch = self.check_patch(id, &patch)?;
        let i = self.note_index(id)?;
        let note = &mut self.notes[i];
        let mut changed = false;
        if let Some(text) = patch.text {
            if note.text != text {
                changed = true;
                let old = std::mem::replace(&mut note.text, text);
                if note.is_bedside() {
                    keep_version(note, old);
                }
            }
        }
        if let Some(note_type) = patch.note_type {
            changed |= note.note_type != note_type;
            note.note_type = note_type;
        }
        if let Some(tags) = patch.tags {
            changed |= note.tags != tags;
            note.tags = tags;
        }
        if let Some(importance) = patch.importance {
            changed |= note.importance != importance;
            note.importance = importance;
        }
        if changed {
            note.version = note.version.saturating_add(1);
            note.updated_ms = now_ms;
            self.index.replaced(&self.notes, i);
            self.changed(|| Changed::Note(id.to_string()));
        }
        Ok(&self.notes[i])
    }

    /// [`Memory::update_note`] by `by`: a note the writer changes becomes the writer's (an
    /// agent's change, approved or not, leaves the author as it was).
    pub fn update_note_by(
        &mut self,
        id: &str,
        patch: NotePatch,
        by: &Origin,
        now_ms: u64,
    ) -> Result<&MemoryNote, MemoryError> {
        let version = self.note_index(id).map(|i| self.notes[i].version)?;
        self.update_note(id, patch, now_ms)?;
        let i = self.note_index(id)?;
        let note = &mut self.notes[i];
        if *by == Origin::User && note.version != version {
            note.author = Origin::User;
        }
        Ok(&self.notes[i])
    }

    /// Delete a note (softly: it goes to the trash, see the module docs) and return it as it
    /// is now. The bedside note cannot be deleted, nor a note already deleted.
    pub fn delete_note(
        &mut self,
        id: &str,
        by: &Origin,
        now_ms: u64,
    ) -> Result<&MemoryNote, MemoryError> {
        let i = self.note_index(id)?;
        if self.notes[i].is_bedside() {
            return Err(MemoryError::Invalid(format!(
                "note '{id}' is the bedside note and cannot be deleted; rewrite it with evolve_bedside_note instead"
            )));
        }
        let note = &mut self.notes[i];
        note.deleted_ms = Some(now_ms);
        note.deleted_by = Some(by.clone());
        self.changed(|| Changed::Note(id.to_string()));
        Ok(&self.notes[i])
    }

    /// Take a deleted note out of the trash (unless its [`TRASH_RETENTION_MS`] are over at
    /// `now_ms`) and return it.
    pub fn restore_note(&mut self, id: &str, now_ms: u64) -> Result<&MemoryNote, MemoryError> {
        let Some(i) = self.positions.find(&self.notes, id) else {
            return Err(Self::not_found(
                "note",
                id,
                self.notes
                    .iter()
                    .filter(|n| n.is_deleted())
                    .map(|n| n.id.as_str()),
                "only deleted notes of the last 30 days can be restored",
            ));
        };
        let note = &mut self.notes[i];
        if !note.is_deleted() {
            return Err(MemoryError::Invalid(format!(
                "note '{}' is not deleted; there is nothing to restore",
                shorten(id, 80)
            )));
        }
        if note.is_expired(now_ms) {
            return Err(MemoryError::NotFound {
                kind: "note",
                id: shorten(id, 80),
                hint: " to restore: it was deleted more than 30 days ago and is gone for good"
                    .to_string(),
            });
        }
        note.deleted_ms = None;
        note.deleted_by = None;
        self.changed(|| Changed::Note(id.to_string()));
        Ok(&self.notes[i])
    }

    /// Remove, for good, the deleted notes whose time in the trash is over at `now_ms`.
    /// Returns their ids (their records are to be deleted).
    pub fn purge_expired(&mut self, now_ms: u64) -> Vec<String> {
        if !self.notes.iter().any(|n| n.is_expired(now_ms)) {
            return Vec::new();
        }
        let mut purged = Vec::new();
        self.notes.retain(|n| {
            let expired = n.is_expired(now_ms);
            if expired {
                purged.push(n.id.clone());
            }
            !expired
        });
        self.index.sync(&self.notes);
        self.positions.rebuild(&self.notes);
        for id in &purged {
            self.changed(|| Changed::Note(id.clone()));
        }
        purged
    }

    /// Put an item as another copy of the project has it (`None`: it is gone there), in
    /// place of the one with its id.
    pub fn put_item(&mut self, item: &Changed, value: Option<MemoryItem>) {
        match (item, value) {
            (_, Some(MemoryItem::Note(note))) => match self.positions.find(&self.notes, &note.id) {
                Some(i) => {
                    self.notes[i] = note;
                    self.index.replaced(&self.notes, i);
                }
                None => {
                    self.notes.push(note);
                    self.index.pushed(&self.notes);
                    self.positions.pushed(&self.notes);
                }
            },
            (_, Some(MemoryItem::Goal(goal))) => {
                match self.goals.iter_mut().find(|g| g.id == goal.id) {
                    Some(g) => *g = goal,
                    None => self.goals.push(goal),
                }
            }
            (_, Some(MemoryItem::Watched(w))) => {
                match self.watched.iter_mut().find(|x| x.id == w.id) {
                    Some(x) => *x = w,
                    None => self.watched.push(w),
                }
            }
            (Changed::Note(id), None) => {
                let _ = self.remove_note(id);
            }
            (Changed::Goal(id), None) => self.goals.retain(|g| &g.id != id),
            (Changed::Watched(id), None) => self.watched.retain(|w| &w.id != id),
        }
    }

    /// Remove a note at once, without the trash (taking back a write that is part of a
    /// failed bulk write, say). Returns it.
    pub fn remove_note(&mut self, id: &str) -> Result<MemoryNote, MemoryError> {
        let i = self.note_index(id)?;
        let note = self.notes.remove(i);
        self.index.removed(&self.notes, i, &note.id);
        self.positions.removed(&self.notes, i, &note.id);
        self.changed(|| Changed::Note(note.id.clone()));
        Ok(note)
    }

    /// The deleted notes `project` can restore at `now_ms` (its own and the global ones, not
    /// yet expired), most recently deleted first.
    pub fn trash<'a>(&'a self, project: &'a str, now_ms: u64) -> Vec<&'a MemoryNote> {
        let mut notes: Vec<&MemoryNote> = self
            .notes
            .iter()
            .filter(|n| n.is_deleted() && !n.is_expired(now_ms) && n.belongs_to(project))
            .collect();
        notes.sort_by_key(|n| std::cmp::Reverse(n.deleted_ms));
        notes
    }

    fn goal_index(&self, id: &str) -> Result<usize, MemoryError> {
        self.goals.iter().position(|g| g.id == id).ok_or_else(|| {
            Self::not_found(
                "goal",
                id,
                self.goals.iter().map(|g| g.id.as_str()),
                "the goals and their ids are listed in the [AGENT MEMORY] block; create_goal makes a new one",
            )
        })
    }

    /// Create a goal for `project`.
    pub fn create_goal(
        &mut self,
        project: &str,
        input: NewGoal,
        now_ms: u64,
        ids: &dyn IdSource,
    ) -> Result<&Goal, MemoryError> {
        let title = required_text("title", &input.title)?;
        let description = optional_text("description", input.description.as_deref().unwrap_or(""))?;
        let status = input.status.unwrap_or_default();
        let default_progress = if status == GoalStatus::Completed {
            100
        } else {
            0
        };
        let progress = check_progress(input.progress.unwrap_or(default_progress))?;
        let id = self.fresh_id(ids);
        self.changed(|| Changed::Goal(id.clone()));
        self.goals.push(Goal {
            id,
            project: project.to_string(),
            title,
            description,
            status,
            progress,
            created_ms: now_ms,
            updated_ms: now_ms,
        });
        let last = self.goals.len() - 1;
        Ok(&self.goals[last])
    }

    /// Change a goal. Completing it without giving a progress sets progress to 100.
    pub fn update_goal(
        &mut self,
        id: &str,
        patch: GoalPatch,
        now_ms: u64,
    ) -> Result<&Goal, MemoryError> {
        let i = self.goal_index(id)?;
        if patch == GoalPatch::default() {
            return Err(MemoryError::Invalid(
                "nothing to update; give at least one of title, description, status or progress"
                    .to_string(),
            ));
        }
        let title = patch
            .title
            .as_deref()
            .map(|t| required_text("title", t))
            .transpose()?;
        let description = patch
            .description
            .as_deref()
            .map(|d| optional_text("description", d))
            .transpose()?;
        let progress = match (patch.progress, patch.status) {
            (Some(p), _) => Some(check_progress(p)?),
            (None, Some(GoalStatus::Completed)) => Some(100),
            (None, _) => None,
        };
        let goal = &mut self.goals[i];
        let mut changed = goal.updated_ms != now_ms;
        if let Some(title) = title {
            changed |= goal.title != title;
            goal.title = title;
        }
        if let Some(description) = description {
            changed |= goal.description != description;
            goal.description = description;
        }
        if let Some(status) = patch.status {
            changed |= goal.status != status;
            goal.status = status;
        }
        if let Some(progress) = progress {
            changed |= goal.progress != progress;
            goal.progress = progress;
        }
        goal.updated_ms = now_ms;
        if changed {
            self.changed(|| Changed::Goal(id.to_string()));
        }
        Ok(&self.goals[i])
    }

    /// Watch an entity in `project`. The same name (case-insensitive) and type again updates
    /// the reason (and the priority, if given) of the existing entry instead of adding one.
    pub fn watch_entity(
        &mut self,
        project: &str,
        input: NewWatch,
        now_ms: u64,
        ids: &dyn IdSource,
    ) -> Result<&WatchedEntity, MemoryError> {
        let name = required_text("name", &input.name)?;
        let reason = required_text("reason", &input.reason)?;
        let key = name.to_lowercase();
        let existing = self.watched.iter().position(|w| {
            w.project == project
                && w.entity_type == input.entity_type
                && w.name.to_lowercase() == key
        });
        if let Some(i) = existing {
            let entry = &mut self.watched[i];
            let priority = input.priority.unwrap_or(entry.priority);
            if entry.reason != reason || entry.priority != priority {
                entry.reason = reason;
                entry.priority = priority;
                let id = entry.id.clone();
                self.changed(|| Changed::Watched(id));
            }
            return Ok(&self.watched[i]);
        }
        let id = self.fresh_id(ids);
        self.changed(|| Changed::Watched(id.clone()));
        self.watched.push(WatchedEntity {
            id,
            project: project.to_string(),
            name,
            entity_type: input.entity_type,
            reason,
            priority: input.priority.unwrap_or_default(),
            created_ms: now_ms,
        });
        let last = self.watched.len() - 1;
        Ok(&self.watched[last])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::SequentialIds;

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        /// Whatever happened to the notes, through the methods or directly, a note is found by
        /// its id, and an id no note has is not.
        #[test]
        fn every_note_is_found_by_its_id(
            ops in proptest::collection::vec((0u8..6, 0usize..40), 1..60)
        ) {
            let ids = SequentialIds::new("n");
            let mut m = Memory::new();
            for (op, k) in ops {
                let live: Vec<String> = m
                    .notes
                    .iter()
                    .filter(|n| !n.is_deleted())
                    .map(|n| n.id.clone())
                    .collect();
                let pick = (!live.is_empty()).then(|| live[k % live.len()].clone());
                let note = |text: String| NewNote::new(text, NoteType::Fact);
                match (op, pick) {
                    (0, _) => {
                        m.write_note("p", note(format!("note {k}")), 1, &ids).unwrap();
                    }
                    (1, _) => {
                        let batch = (0..k % 5 + 1).map(|i| note(format!("batch {i}"))).collect();
                        m.write_notes("p", batch, 1, &ids).unwrap();
                    }
                    (2, Some(id)) => {
                        m.remove_note(&id).unwrap();
                    }
                    (3, Some(id)) => {
                        m.delete_note(&id, &Origin::User, 1).unwrap();
                        m.purge_expired(u64::MAX);
                    }
                    // Direct changes, which the methods do not see.
                    (4, _) if m.notes.len() > 1 => {
                        let (last, i) = (m.notes.len() - 1, k % m.notes.len());
                        m.notes.swap(i, last);
                    }
                    (5, _) if !m.notes.is_empty() => {
                        let i = k % m.notes.len();
                        m.notes.remove(i);
                    }
                    _ => {}
                }
                for n in &m.notes {
                    proptest::prop_assert_eq!(m.note(&n.id).map(|n| &n.id), Some(&n.id));
                }
                proptest::prop_assert!(m.note("absent").is_none());
            }
        }
    }

    #[test]
    fn tags_are_trimmed_lowercased_and_deduplicated() {
        let tags = normalize_tags(&[" Lighthouse ".into(), "lighthouse".into(), "Mara".into()]);
        assert_eq!(tags, Ok(vec!["lighthouse".to_string(), "mara".to_string()]));
        assert!(normalize_tags(&["  ".into()]).is_err());
        assert!(normalize_tags(&["x".repeat(65)]).is_err());
        assert!(normalize_tags(&[BEDSIDE_TAG.to_uppercase()]).is_err());
        let many: Vec<String> = (0..33).map(|i| format!("t{i}")).collect();
        assert!(normalize_tags(&many).is_err());
        // Duplicates do not count against the limit.
        let dupes: Vec<String> = (0..40).map(|i| format!("t{}", i % 32)).collect();
        assert_eq!(normalize_tags(&dupes).map(|t| t.len()), Ok(32));
    }

    #[test]
    fn fresh_ids_skip_ids_in_use() {
        let mut memory = Memory::new();
        let ids = SequentialIds::new("n");
        memory.ensure_bedside("p", 0, &ids);
        // A restarted id source repeats "n-1".
        let restarted = SequentialIds::new("n");
        let note = memory
            .write_note("p", NewNote::new("x", NoteType::Fact), 0, &restarted)
            .map(|n| n.id.clone());
        assert_eq!(note, Ok("n-2".to_string()));
    }

    #[test]
    fn errors_have_codes() {
        let mut memory = Memory::new();
        let err = memory.delete_note("nope", &Origin::User, 0).unwrap_err();
        assert_eq!(err.code(), "not_found");
        assert!(err.to_string().contains("'nope'"), "{err}");
        let err = memory
            .write_note(
                "p",
                NewNote::new(" ", NoteType::Fact),
                0,
                &SequentialIds::new("n"),
            )
            .unwrap_err();
        assert_eq!(err.code(), "invalid_args");
    }
}
