//! Sessions to and from store records.
//!
//! A project is stored as:
//! - `projects/{id}`: name, UI state, chapter order, times;
//! - `chapters/{id}`: a chapter's *checkpoint*: title, text and the version the text is at
//!   (with its `project`); the project record's list is the reading order;
//! - `changes/{chapter}/{version, 20 digits}`: one record per change applied to a chapter
//!   (`project`, `chapter`, `version` after it, `changeset`, `origin`, the page's `tag`);
//! - `history/{entry id}`: one record per undo entry (`project`, `entry`);
//! - `meta/history:{project}`: the rest of the history (redo runs, open group, limits);
//! - `audit/{id}`: one record per tool call (tool, argument digest, origin, status, time);
//!   cursor and selection moves (`set_selection`) are not audited;
//! - `notes/{id}`, `goals/{id}`, `watched/{id}`: the agent's memory (global notes are stored
//!   under the project key [`GLOBAL_PROJECT`] and load with every project; deleted notes stay,
//!   marked, until they are purged 30 days later, see [`crate::memory`]);
//! - `bible/{project}/{kind}/{id}`: one record per story-bible entity (`project`, `entity`);
//! - `files/{project}/{path}`: one record per free file of the `data/` view (`project`,
//!   `file`: path, content, mod time, origin).
//!
//! **Incremental chapters.** A keystroke (or an agent's edit, an undo) writes its change
//! record and its history entry (and the history state when more than its next entry number
//! changed): a few hundred bytes, whatever the chapter's size. The
//! chapter record is rewritten (a checkpoint of the whole text) only every
//! [`pending::checkpoint_every`] changes (100 for a chapter of up to 64 K chars, up to
//! 1,000 for long ones), when the chapter is added or renamed, and on
//! a `checkpoint` request (the worker sends one when the writer is idle). A checkpoint deletes
//! the change records more than [`pending::KEEP_BEHIND`] versions behind it; those it keeps
//! let a freshly loaded chapter serve its change feed and rebase a writer's change based on
//! one of those versions. [`load`] rebuilds each chapter from its checkpoint and the change
//! records after it, in order; a record that does not continue the chapter (missing or not
//! fitting the text) stops the replay there, is reported ([`Loaded::problems`]) and makes
//! the next save write a checkpoint and delete the records after it. The project record
//! is written when the name, the chapter list or the UI state that matters (active chapter,
//! panel, zen mode, highlights) changes; positions (cursor, selection, scroll) follow every
//! edit in memory and are saved lazily, with the next save that writes the project record
//! anyway or the next checkpoint.
//!
//! **Saving.** A mutation marks what it changed as pending ([`pending::Pending`]); a save
//! builds one batch from everything pending ([`pending::batch`]) and drops it from the
//! pending set only once that batch commits. Export writes whole chapter texts; an import
//! (like a new project) is written whole, each chapter as a checkpoint.
//!
//! **Versioned writes.** Every write of a versioned record checks, in the same transaction
//! ([`crate::store::Op::Expect`]), the revision this core last saw of it, and writes the next
//! one: the project record, the history state, story-bible entities and free files carry a
//! `rev` field; a chapter's checkpoint carries a `rev`. Every write of a chapter checks its
//! head record (`meta/head:{chapter}`: the version of its newest checkpoint, which a
//! checkpoint moves on and a deletion removes) and that the change after the newest one
//! this core saw is not stored yet: change records that continue the stored ones are
//! inserted ([`crate::store::Op::Insert`], refused when another writer wrote that version
//! first), and a write without them reads that record. So appending a change (a keystroke)
//! writes two records and reads one. Records
//! written before revisions have none, which the first check expects. A stale write (another
//! writer got there first) is refused whole ([`crate::store::StoreError::Conflict`]); the core
//! then reads the project again and merges what it had not saved into it ([`merge`]) before
//! it saves again, so nothing is silently overwritten.

pub mod merge;
pub mod pending;

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};
use serde_json::json;
use serde_json::Value;
use ts_rs::TS;

use crate::bible::{Bible, Entity};
use crate::commands::history::Applied;
use crate::commands::{Entry, History, HistoryState, Origin};
use crate::env::IdSource;
use crate::files::{file_key, Files, FreeFile};
use crate::memory::{Goal, Memory, MemoryNote, WatchedEntity};
use crate::project::changeset::ChangeSet;
use crate::project::{Chapter, Project, UiState};
use crate::session::Session;
use crate::store::{Batch, Record, Store, StoreError, Table};

/// The stored form of a project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProjectRecord {
    /// Project id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Creation time (ms).
    pub created_ms: u64,
    /// Last change (ms).
    pub updated_ms: u64,
    /// Chapter ids in reading order.
    pub chapters: Vec<String>,
    /// Editor UI state.
    pub ui: UiState,
}

/// The stored form of a chapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChapterRecord {
    /// Chapter id.
    pub id: String,
    /// Its project.
    pub project: String,
    /// Title.
    pub title: String,
    /// Text.
    pub text: String,
    /// Version.
    pub version: u64,
}

/// One update of a project's Yjs document (`sync` table, key `<project>/<id>`). The updates
/// of a project apply in any order; together they are its document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncRecord {
    /// `<project>/<id>`.
    pub id: String,
    /// The project's id.
    pub project: String,
    /// The update (Yjs v1 encoding); stored in base64.
    #[serde(with = "base64_text")]
    pub update: Vec<u8>,
}

impl SyncRecord {
    /// The record of an update of `project`'s document, under a fresh key.
    pub fn new(project: &str, update: &[u8], ids: &dyn IdSource) -> Self {
        Self::from_bytes(&format!("{project}/{}", ids.next_id()), project, update)
    }

    /// The record of an update under key `id`.
    pub fn from_bytes(id: &str, project: &str, update: &[u8]) -> Self {
        SyncRecord {
            id: id.to_string(),
            project: project.to_string(),
            update: update.to_vec(),
        }
    }
}

/// Bytes as base64 text (standard alphabet, padded).
mod base64_text {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .map_err(|e| serde::de::Error::custom(format!("the update is not base64: {e}")))
    }
}

/// A project's stored Yjs updates: each record's key and bytes.
pub async fn load_sync(
    store: &dyn Store,
    project: &str,
) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
    let mut updates = Vec::new();
    for v in store
        .get_by_index(Table::Sync, "project", json!(project))
        .await?
    {
        let record: SyncRecord = parse(Table::Sync, v)?;
        updates.push((record.id, record.update));
    }
    Ok(updates)
}

/// One applied chapter change, as the change feed (`get_chapter`'s `changes`) and the
/// `changes` table keep it: the chapter's version after it, the change set, who made it and
/// the page's tag (for the writer's changes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeRecord {
    /// Chapter id.
    pub chapter: String,
    /// The chapter's version after the change.
    pub version: u64,
    /// The change, as applied.
    pub changeset: ChangeSet,
    /// Who made it: `user`, `agent:<name>` or `import`.
    pub origin: String,
    /// The page's label of a writer's change (`apply_user_change {tag}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

impl ChangeRecord {
    /// The records of chapter changes a mutation applied, by `origin`.
    pub fn of(edits: &[Applied], origin: &Origin, tag: Option<&str>) -> Vec<ChangeRecord> {
        edits
            .iter()
            .map(|e| ChangeRecord {
                chapter: e.chapter.clone(),
                version: e.version,
                changeset: e.change.clone(),
                origin: origin.to_string(),
                tag: tag.map(str::to_string),
            })
            .collect()
    }
}

/// One tool call in the audit log. Arguments are kept only as a digest: the log holds no
/// text, and never a key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    /// Record id.
    pub id: String,
    /// Project.
    pub project: String,
    /// When (ms).
    pub time: u64,
    /// Tool name.
    pub tool: String,
    /// FNV-1a 64 digest of the arguments' JSON, in hex.
    pub args_digest: String,
    /// Who called it.
    pub origin: String,
    /// `success` or `error`.
    pub status: String,
    /// The model's call id, if any.
    pub call_id: Option<String>,
    /// The history entry it created, if any.
    pub command_id: Option<String>,
}

/// FNV-1a 64 of a string, in hex: a stable digest for the audit log.
pub fn digest(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The project key of global notes (visible from every project).
pub const GLOBAL_PROJECT: &str = "*";

/// The memory items as they were before a memory tool ran: debug builds (the tests) check
/// that the changes [`Memory`] recorded cover every difference, so none goes unsaved.
#[derive(Debug, Clone, Default)]
pub struct MemorySnapshot {
    notes: Vec<MemoryNote>,
    goals: Vec<Goal>,
    watched: Vec<WatchedEntity>,
}

impl MemorySnapshot {
    /// A copy of the memory's items.
    pub fn of(memory: &Memory) -> Self {
        Self {
            notes: memory.notes.clone(),
            goals: memory.goals.clone(),
            watched: memory.watched.clone(),
        }
    }

    /// Panics unless `changes` (recorded by `memory` since this copy) names every item that
    /// differs between this copy and `memory`.
    pub fn check(&self, memory: &Memory, changes: &[crate::memory::Changed]) {
        let recorded: Vec<pending::Key> = changes.iter().cloned().map(pending::Key::from).collect();
        for key in pending::memory_keys(self, memory) {
            assert!(
                recorded.contains(&key),
                "memory item {key:?} changed but was not recorded (recorded: {recorded:?})"
            );
        }
    }
}

/// A note as the `notes` table keeps it: the note, and the fields its indexes read.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NoteRecord {
    id: String,
    project: String,
    tags: Vec<String>,
    updated_ms: u64,
    note: MemoryNote,
}

pub(crate) fn note_record(note: &MemoryNote) -> Record {
    Record::typed(
        note.id.clone(),
        NoteRecord {
            id: note.id.clone(),
            project: note
                .project
                .clone()
                .unwrap_or_else(|| GLOBAL_PROJECT.to_string()),
            tags: note.tags.clone(),
            updated_ms: note.updated_ms,
            note: note.clone(),
        },
    )
}

/// A history entry as the `history` table keeps it.
#[derive(Serialize)]
struct HistoryRecord {
    id: String,
    project: String,
    entry: Entry,
}

fn history_record(project: &str, entry: &Entry) -> Record {
    Record::typed(
        entry.id.clone(),
        HistoryRecord {
            id: entry.id.clone(),
            project: project.to_string(),
            entry: entry.clone(),
        },
    )
}

/// A chapter change as the `changes` table keeps it (see [`pending::change_key`]).
#[derive(Serialize)]
struct StoredChange {
    id: String,
    project: String,
    chapter: String,
    version: u64,
    changeset: ChangeSet,
    origin: String,
    tag: Option<String>,
}

fn change_record(project: &str, change: &ChangeRecord) -> Record {
    let id = pending::change_key(&change.chapter, change.version);
    Record::typed(
        id.clone(),
        StoredChange {
            id,
            project: project.to_string(),
            chapter: change.chapter.clone(),
            version: change.version,
            changeset: change.changeset.clone(),
            origin: change.origin.clone(),
            tag: change.tag.clone(),
        },
    )
}

fn goal_record(goal: &Goal) -> Value {
    json!({"id": goal.id, "project": goal.project, "goal": goal})
}

fn watched_record(entity: &WatchedEntity) -> Value {
    json!({"id": entity.id, "project": entity.project, "entity": entity})
}

fn history_state_key(project: &str) -> String {
    format!("history:{project}")
}

/// The project record of a session.
pub fn project_record(project: &Project, created_ms: u64, updated_ms: u64) -> ProjectRecord {
    ProjectRecord {
        id: project.id.clone(),
        name: project.name.clone(),
        created_ms,
        updated_ms,
        chapters: project.chapters.iter().map(|c| c.id.clone()).collect(),
        ui: project.ui.clone(),
    }
}

fn chapter_record(project: &str, chapter: &Chapter) -> ChapterRecord {
    ChapterRecord {
        id: chapter.id.clone(),
        project: project.to_string(),
        title: chapter.title.clone(),
        text: chapter.text().to_string(),
        version: chapter.version(),
    }
}

fn file_record(project: &str, file: &FreeFile) -> Value {
    json!({"id": file_key(project, &file.path), "project": project, "file": file})
}

fn entity_record(project: &str, entity: &Entity) -> Value {
    json!({"id": entity.key(project), "project": project, "entity": entity})
}

/// The key of a chapter's head record (`meta/head:<chapter>`): the newest version its
/// stored changes reach, which every write of its changes checks and moves on.
pub fn head_key(chapter: &str) -> String {
    format!("head:{chapter}")
}

fn parse<T: serde::de::DeserializeOwned>(table: Table, value: Value) -> Result<T, StoreError> {
    serde_json::from_value(value).map_err(|e| StoreError::Invalid {
        table: table.name(),
        reason: e.to_string(),
    })
}

/// Change feeds by chapter id (a chapter is added once, when it is loaded or first
/// changed).
pub type Feeds = std::collections::BTreeMap<String, VecDeque<ChangeRecord>>;

/// A project as loaded from the store: its session, and what the core needs to go on saving
/// it and to serve its change feeds.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The session.
    pub session: Session,
    /// The project's creation time (ms).
    pub created_ms: u64,
    /// What the store holds of each chapter.
    pub stored: pending::Stored,
    /// Each chapter's stored change records, oldest first (those behind its checkpoint too).
    /// (A `VecDeque`, as the open project keeps them: one map type in the wasm.)
    pub feeds: Feeds,
    /// What was wrong with the stored data (a change record that does not continue its
    /// chapter), for the page to show; the project loads anyway.
    pub problems: Vec<String>,
    /// Chapters whose checkpoint the next save must rewrite (after such a problem).
    pub repair: Vec<String>,
    /// The project's Yjs document: each stored update's key and bytes.
    pub sync: Vec<(String, Vec<u8>)>,
}

/// Rebuild a chapter from its checkpoint and its change records (any order): the records
/// behind the checkpoint become its rebase log and change feed, those after it are applied
/// in order. A record that does not continue the chapter (a gap, or a change that does not
/// fit the text) stops the replay: the chapter keeps the checkpoint and every change before
/// that record, and the problem is returned.
fn rebuild(
    record: ChapterRecord,
    rev: Option<u64>,
    head: Option<u64>,
    mut records: Vec<ChangeRecord>,
) -> (
    Chapter,
    Vec<ChangeRecord>,
    pending::StoredChapter,
    Option<String>,
) {
    records.sort_by_key(|r| r.version);
    let checkpoint = record.version;
    let changes = match (records.first(), records.last()) {
        (Some(first), Some(last)) => Some((first.version, last.version)),
        _ => None,
    };
    // The run of records that ends exactly at the checkpoint is the rebase log.
    let behind: Vec<&ChangeRecord> = records.iter().filter(|r| r.version <= checkpoint).collect();
    let mut log_from = behind.len();
    let mut expect = checkpoint;
    while log_from > 0 && behind[log_from - 1].version == expect {
        log_from -= 1;
        expect = expect.saturating_sub(1);
    }
    let log = behind[log_from..].iter().map(|r| r.changeset.clone());
    let mut chapter = Chapter::restore_with_log(
        record.id.clone(),
        record.title,
        &record.text,
        checkpoint,
        log,
    );
    let mut feed: Vec<ChangeRecord> = Vec::with_capacity(records.len());
    let mut problem = None;
    for r in records {
        if r.version <= checkpoint {
            feed.push(r);
            continue;
        }
        if problem.is_some() {
            continue;
        }
        let expected = chapter.version() + 1;
        if r.version != expected {
            problem = Some(format!(
                "chapter '{}': the stored change of version {} does not follow version {} (a change is missing); the chapter was loaded at version {}",
                record.id, r.version, chapter.version(), chapter.version()
            ));
            continue;
        }
        match chapter.apply(&r.changeset) {
            Ok(_) => feed.push(r),
            Err(e) => {
                problem = Some(format!(
                    "chapter '{}': the stored change of version {} does not fit its text ({e}); the chapter was loaded at version {}",
                    record.id, r.version, chapter.version()
                ))
            }
        }
    }
    let stored = pending::StoredChapter {
        checkpoint,
        changes,
        rev,
        head,
    };
    (chapter, feed, stored, problem)
}

/// A stored project, or `None` if there is no such project. Each chapter is rebuilt from
/// its checkpoint and the change records after it.
pub async fn load(store: &dyn Store, id: &str) -> Result<Option<Loaded>, StoreError> {
    load_reporting(store, id, &|_| {}).await
}

/// What [`load_reporting`] reads, in order: its progress stages.
const LOAD_STAGES: [&str; 7] = [
    "chapters", "changes", "history", "memory", "bible", "files", "sync",
];

/// [`load`], telling `progress` as it reads each part of the project (a step of
/// [`LOAD_STAGES`] each, then `done`). Nothing is told of a project that is not stored.
pub async fn load_reporting(
    store: &dyn Store,
    id: &str,
    progress: &dyn Fn(crate::session::Progress<'_>),
) -> Result<Option<Loaded>, StoreError> {
    let step = |done: usize| {
        progress(crate::session::Progress {
            done,
            total: LOAD_STAGES.len(),
            stage: LOAD_STAGES.get(done).copied().unwrap_or("done"),
        })
    };
    let Some(record) = store.get(Table::Projects, id).await? else {
        return Ok(None);
    };
    step(0);
    let mut stored = pending::Stored::default();
    let rev = |v: &Value| v.get("rev").and_then(Value::as_u64);
    // The revisions, put into `stored` at the end.
    let mut revs = Vec::new();
    let mut note_rev = |table: Table, v: &Value| {
        if let (Some(key), Some(r)) = (v["id"].as_str(), rev(v)) {
            revs.push((pending::rev_key(table, key), r));
        }
    };
    note_rev(Table::Projects, &record);
    let record: ProjectRecord = parse(Table::Projects, record)?;
    // The chapter records with their revs, each taken once; found by id through
    // a map of ids to positions (of equal ids, the last).
    let (mut checkpoint_ids, mut checkpoints) = (Vec::new(), Vec::new());
    for v in store
        .get_by_index(Table::Chapters, "project", json!(id))
        .await?
    {
        let r = rev(&v);
        let c: ChapterRecord = parse(Table::Chapters, v)?;
        checkpoint_ids.push(c.id.clone());
        checkpoints.push(Some((c, r)));
    }
    let checkpoint_of: BTreeMap<&str, usize> = (checkpoint_ids.iter().enumerate())
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    // The project's meta records: chapter heads and the history state.
    let mut heads: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
    let mut state = HistoryState::default();
    for mut v in store
        .get_by_index(Table::Meta, "project", json!(id))
        .await?
    {
        let key = v["id"].as_str().unwrap_or_default().to_string();
        if key == history_state_key(id) {
            note_rev(Table::Meta, &v);
            state = parse(Table::Meta, v["state"].take())?;
        } else if let (Some(chapter), Some(version)) =
            (v["chapter"].as_str(), v["version"].as_u64())
        {
            if key == head_key(chapter) {
                heads.insert(chapter.to_string(), version);
            }
        }
    }
    step(1);
    // The change records, each taken once by its chapter (through a map of chapters to positions).
    let mut records: Vec<Option<ChangeRecord>> = Vec::new();
    for v in store
        .get_by_index(Table::Changes, "project", json!(id))
        .await?
    {
        records.push(Some(parse(Table::Changes, v)?));
    }
    let record_chapters: Vec<String> = (records.iter().flatten())
        .map(|c| c.chapter.clone())
        .collect();
    let record_chapters: Vec<&str> = record_chapters.iter().map(String::as_str).collect();
    let mut records_of: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, key) in record_chapters.iter().enumerate() {
        records_of.entry(*key).or_default().push(i);
    }
    let mut chapters = Vec::with_capacity(record.chapters.len());
    let mut feeds = Feeds::new();
    let (mut problems, mut repair) = (Vec::new(), Vec::new());
    for chapter_id in &record.chapters {
        let at = checkpoint_of.get(chapter_id.as_str()).copied();
        if let Some((c, rev)) = at.and_then(|i| checkpoints[i].take()) {
            let head = heads.get(chapter_id).copied();
            let records: Vec<ChangeRecord> =
                (records_of.get(chapter_id.as_str()).into_iter().flatten())
                    .filter_map(|&i| records[i].take())
                    .collect();
            let (chapter, feed, known, problem) = rebuild(c, rev, head, records);
            if let Some(problem) = problem {
                problems.push(problem);
                repair.push(chapter.id.clone());
            }
            stored.chapters.insert(chapter.id.clone(), known);
            feeds.insert(chapter.id.clone(), VecDeque::from(feed));
            chapters.push(chapter);
        }
    }
    step(2);
    let entries: Vec<Entry> = store
        .get_by_index(Table::History, "project", json!(id))
        .await?
        .into_iter()
        .map(|mut v| parse(Table::History, v["entry"].take()))
        .collect::<Result<_, _>>()?;
    step(3);
    let mut memory = Memory::new();
    for key in [id, GLOBAL_PROJECT] {
        for mut v in store
            .get_by_index(Table::Notes, "project", json!(key))
            .await?
        {
            memory.notes.push(parse(Table::Notes, v["note"].take())?);
        }
    }
    for mut v in store
        .get_by_index(Table::Goals, "project", json!(id))
        .await?
    {
        memory.goals.push(parse(Table::Goals, v["goal"].take())?);
    }
    for mut v in store
        .get_by_index(Table::Watched, "project", json!(id))
        .await?
    {
        memory
            .watched
            .push(parse(Table::Watched, v["entity"].take())?);
    }
    step(4);
    let mut entities: Vec<Entity> = Vec::new();
    for mut v in store
        .get_by_index(Table::Bible, "project", json!(id))
        .await?
    {
        note_rev(Table::Bible, &v);
        entities.push(parse(Table::Bible, v["entity"].take())?);
    }
    step(5);
    let mut files: Vec<FreeFile> = Vec::new();
    for mut v in store
        .get_by_index(Table::Files, "project", json!(id))
        .await?
    {
        note_rev(Table::Files, &v);
        files.push(parse(Table::Files, v["file"].take())?);
    }
    stored.revs.extend(revs);
    let mut project = Project::new(record.id, record.name, chapters);
    project.ui = record.ui;
    let mut session = Session::with_memory(project, memory);
    session.history = History::from_parts(entries, state);
    session.bible = Bible::from_entities(entities);
    session.files = Files::from_files(files);
    // History that names a chapter the project no longer has (a deletion whose history
    // records were not all written, say) is forgotten, so undo never trips over it; the
    // next save writes the trimmed history. A chapter the history itself adds or takes out
    // (one undo took away, which redo brings back) is the history's own.
    let history = &session.history;
    let entries = || {
        history
            .entries()
            .iter()
            .chain(history.redo_runs().iter().flatten())
    };
    let own: std::collections::BTreeSet<&str> = entries()
        .flat_map(|e| e.chapters.iter())
        .map(|fx| fx.chapter.as_str())
        .collect();
    let mut missing = std::collections::BTreeSet::new();
    for fx in entries().flat_map(|e| e.effects.iter()) {
        if session.project.chapter(&fx.chapter).is_none() && !own.contains(fx.chapter.as_str()) {
            missing.insert(fx.chapter.clone());
        }
    }
    for chapter in missing {
        session.history.forget_chapter(&chapter);
    }
    step(6);
    let sync = load_sync(store, id).await?;
    step(LOAD_STAGES.len());
    Ok(Some(Loaded {
        session,
        created_ms: record.created_ms,
        stored,
        feeds,
        problems,
        repair,
        sync,
    }))
}

/// Every stored project, most recently changed first.
pub async fn list(store: &dyn Store) -> Result<Vec<ProjectRecord>, StoreError> {
    let mut projects: Vec<ProjectRecord> = store
        .get_all(Table::Projects)
        .await?
        .into_iter()
        .map(|v| parse(Table::Projects, v))
        .collect::<Result<_, _>>()?;
    projects.sort_by(|a, b| {
        b.updated_ms
            .cmp(&a.updated_ms)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(projects)
}

/// Delete a project and everything that belongs to it, in one batch.
pub async fn delete(store: &dyn Store, id: &str) -> Result<(), StoreError> {
    let mut batch = Batch::new();
    for table in [
        Table::Chapters,
        Table::History,
        Table::Notes,
        Table::Goals,
        Table::Watched,
        Table::Meta,
        Table::Audit,
        Table::Bible,
        Table::Files,
        Table::Changes,
        Table::Sync,
    ] {
        for record in store.get_by_index(table, "project", json!(id)).await? {
            if let Some(key) = record["id"].as_str() {
                batch.delete(table, key);
            }
        }
    }
    batch.delete(Table::Projects, id);
    store.commit(batch).await
}

/// The largest version or sequence number an import accepts: 2^53-1, the largest integer a
/// JavaScript number holds exactly.
pub const MAX_IMPORTED_NUMBER: u64 = (1 << 53) - 1;

/// The `format` field of an exported project document.
pub const EXPORT_FORMAT: &str = "draftsmith-project";
/// The export document's version.
pub const EXPORT_VERSION: u32 = 1;

/// A whole project as one JSON document: chapters, history, UI state, memory, the story
/// bible and the free files of the `data/` view. Importing it reproduces the project
/// exactly. Fields added after version 1 (memory, bible, files) default to empty, so older
/// exports stay importable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(optional_fields)]
pub struct ExportDocument {
    /// Always [`EXPORT_FORMAT`].
    #[ts(type = "'draftsmith-project'")]
    pub format: String,
    /// [`EXPORT_VERSION`].
    pub version: u32,
    /// When it was exported (ms).
    pub exported_ms: u64,
    /// The project record.
    pub project: ProjectRecord,
    /// Chapters, in reading order.
    pub chapters: Vec<ChapterRecord>,
    /// Undo entries, oldest first.
    pub history: Vec<Entry>,
    /// The rest of the history.
    pub history_state: HistoryState,
    /// The project's memory notes (global notes are not part of a project).
    #[serde(default)]
    pub notes: Vec<MemoryNote>,
    /// The project's goals.
    #[serde(default)]
    pub goals: Vec<Goal>,
    /// The project's watched entities.
    #[serde(default)]
    pub watched: Vec<WatchedEntity>,
    /// The story bible's entities, with their provenance and versions.
    #[serde(default)]
    pub bible: Vec<Entity>,
    /// The free files of the `data/` view (`plans/`, `notes/`), by path.
    #[serde(default)]
    pub files: Vec<FreeFile>,
    /// The agents the app defined for the project, as `define_agent` takes them (checked by
    /// the core on import).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<Value>>")]
    pub agents: Vec<Value>,
    /// The project's research notes (web pages read for it; checked by the core on import).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<crate::research::ResearchNote>>")]
    pub research: Vec<Value>,
}

/// Export a session.
pub fn export_document(session: &Session, created_ms: u64, now_ms: u64) -> ExportDocument {
    let project = &session.project;
    let (history, history_state) = session.history.snapshot();
    ExportDocument {
        format: EXPORT_FORMAT.into(),
        version: EXPORT_VERSION,
        exported_ms: now_ms,
        project: project_record(project, created_ms, now_ms),
        chapters: project
            .chapters
            .iter()
            .map(|c| chapter_record(&project.id, c))
            .collect(),
        history,
        history_state,
        notes: session
            .memory
            .notes
            .iter()
            .filter(|n| n.project.as_deref() == Some(project.id.as_str()))
            .cloned()
            .collect(),
        goals: session.memory.project_goals(&project.id).cloned().collect(),
        watched: session
            .memory
            .project_watched(&project.id)
            .cloned()
            .collect(),
        bible: session.bible.all().cloned().collect(),
        files: session.files.all().cloned().collect(),
        agents: Vec::new(),
        research: Vec::new(),
    }
}

/// Check and read an export document. Everything is checked before anything is built: the
/// format and version, that chapters match the project's chapter list, and that the history
/// fits the chapters (its newest inverses apply to the current texts).
pub fn import_document(value: Value) -> Result<(Session, u64), String> {
    let format = value.get("format").and_then(Value::as_str);
    if format != Some(EXPORT_FORMAT) {
        return Err(format!(
            "not a draftsmith project export (expected \"format\": \"{EXPORT_FORMAT}\", got {})",
            format.map_or_else(|| "none".to_string(), |f| format!("\"{f}\""))
        ));
    }
    let version = value.get("version").and_then(Value::as_u64);
    if version != Some(u64::from(EXPORT_VERSION)) {
        return Err(format!(
            "unsupported export version {version:?}; this draftsmith reads version {EXPORT_VERSION}"
        ));
    }
    let mut doc: ExportDocument =
        serde_json::from_value(value).map_err(|e| format!("the export is malformed: {e}"))?;
    // Numbers the page must read exactly (JavaScript's safe integers), and counters that
    // must be able to go on counting.
    let too_big = |what: &str, n: u64| -> Result<(), String> {
        if n > MAX_IMPORTED_NUMBER {
            return Err(format!(
                "the export's {what} is {n}, beyond 2^53-1 (9007199254740991); it cannot be imported"
            ));
        }
        Ok(())
    };
    for c in &doc.chapters {
        too_big(&format!("version of chapter '{}'", c.id), c.version)?;
    }
    for e in &doc.bible {
        too_big(&format!("version of {} '{}'", e.kind, e.id), e.version)?;
    }
    too_big("history sequence", doc.history_state.next_seq)?;
    for entry in doc
        .history
        .iter()
        .chain(doc.history_state.redo.iter().flatten())
    {
        too_big(
            &format!("sequence of history entry '{}'", entry.id),
            entry.seq,
        )?;
    }
    // Limits are this installation's, not the document's.
    doc.history_state.limits = crate::commands::history::HistoryLimits::default();
    if doc.project.id.trim().is_empty() || doc.project.name.trim().is_empty() {
        return Err("the export's project needs an id and a name".into());
    }
    let listed: Vec<&String> = doc.project.chapters.iter().collect();
    let present: Vec<&String> = doc.chapters.iter().map(|c| &c.id).collect();
    if listed != present {
        return Err("the export's chapters do not match its project's chapter list".into());
    }
    if doc.chapters.iter().any(|c| c.project != doc.project.id) {
        return Err("a chapter of the export belongs to another project".into());
    }
    let chapters: Vec<Chapter> = doc
        .chapters
        .iter()
        .map(|c| Chapter::restore(c.id.clone(), c.title.clone(), &c.text, c.version))
        .collect();
    let mut project = Project::new(doc.project.id.clone(), doc.project.name.clone(), chapters);
    project.ui = doc.project.ui.clone();
    let history = History::from_parts(doc.history, doc.history_state);
    let id = &doc.project.id;
    if doc
        .notes
        .iter()
        .any(|n| n.project.as_deref() != Some(id.as_str()))
        || doc.goals.iter().any(|g| &g.project != id)
        || doc.watched.iter().any(|w| &w.project != id)
    {
        return Err("a memory item of the export belongs to another project".into());
    }
    let mut seen = std::collections::BTreeSet::new();
    for entity in &doc.bible {
        let id_ok = !entity.id.trim().is_empty() && !entity.id.contains('/');
        // `kind/id` (an id has no '/'): one set type for every set of names.
        if !id_ok || !seen.insert(format!("{}/{}", entity.kind, entity.id)) {
            return Err(format!(
                "the export's story bible has a bad or repeated {} id '{}'",
                entity.kind, entity.id
            ));
        }
        if let Some(field) = entity
            .fields
            .keys()
            .find(|f| entity.kind.field(f).is_none())
        {
            return Err(format!(
                "the export's {} '{}' has an unknown field '{field}'",
                entity.kind, entity.id
            ));
        }
    }
    let mut paths = std::collections::BTreeSet::new();
    for file in &doc.files {
        let free = matches!(
            crate::files::path::resolve(&file.path, crate::files::path::Want::File),
            Ok(crate::files::path::DataPath::Free { ref path }) if *path == file.path
        );
        if !free || !paths.insert(file.path.clone()) {
            return Err(format!(
                "the export's file '{}' is not a file path under plans/ or notes/, or is repeated",
                crate::files::path::shown(&file.path)
            ));
        }
        if file.content.len() > crate::files::MAX_FILE_BYTES {
            return Err(format!(
                "the export's file '{}' is larger than {} bytes",
                file.path,
                crate::files::MAX_FILE_BYTES
            ));
        }
    }
    if doc.files.len() > crate::files::MAX_FILES {
        return Err(format!(
            "the export has {} files; a project holds at most {}",
            doc.files.len(),
            crate::files::MAX_FILES
        ));
    }
    // A file may not lie under another file (folders are implicit).
    if let Some(file) = doc.files.iter().find(|f| {
        f.path
            .match_indices('/')
            .any(|(i, _)| paths.contains(&f.path[..i]))
    }) {
        return Err(format!(
            "the export's file '{}' lies under another file",
            file.path
        ));
    }
    let files = Files::from_files(doc.files);
    let bible = Bible::from_entities(doc.bible.into_iter().map(|mut e| {
        // Whatever the document says wrote a field, it came from outside: every field is an
        // import's (so an agent cannot overwrite an imported field without the writer, the
        // way it could if the document called the writer's field an agent's).
        e.origins = e
            .fields
            .keys()
            .map(|f| (f.clone(), "import".to_string()))
            .collect();
        e
    }));
    let mut memory = Memory::new();
    // Whoever the document says wrote (or deleted) a note, it came from outside: an import's,
    // which agents cannot change without the writer. The bedside note is the agents' plan
    // (never updated or deleted through the note tools, only evolved): its author is the
    // usual one, and it is never deleted.
    memory.notes = doc
        .notes
        .into_iter()
        .map(|mut n| {
            if n.is_bedside() {
                n.author = Origin::Agent(crate::memory::BEDSIDE_AUTHOR.into());
                n.deleted_ms = None;
            } else {
                n.author = Origin::Import;
            }
            n.deleted_by = n.deleted_ms.map(|_| Origin::Import);
            n
        })
        .collect();
    memory.goals = doc.goals;
    memory.watched = doc.watched;
    // The newest entry's inverses must fit the texts, or undo would fail later.
    if let Some(entry) = history.entries().last() {
        for fx in &entry.effects {
            let fits = project
                .chapter(&fx.chapter)
                .is_some_and(|c| c.len_chars() == fx.change.len_after());
            if !fits {
                return Err(format!(
                    "the export's history does not fit chapter '{}'",
                    fx.chapter
                ));
            }
        }
    }
    let created_ms = doc.project.created_ms;
    let mut session = Session::with_memory(project, memory);
    session.history = history;
    session.bible = bible;
    session.files = files;
    Ok((session, created_ms))
}

/// The manuscript as Markdown: the project name as a title, each chapter under a heading.
pub fn markdown(project: &Project) -> String {
    let mut out = format!("# {}\n", project.name.trim());
    for chapter in &project.chapters {
        out.push_str(&format!("\n## {}\n\n", chapter.title.trim()));
        let text = chapter.text().to_string();
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}
