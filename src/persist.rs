//! Sessions to and from store records.
//!
//! A project is stored as:
//! - `projects/{id}`: name, UI state, chapter order, times;
//! - `chapters/{id}`: title, text and version (with its `project`); the project record's
//!   list is the reading order, and a deleted chapter's record is deleted with the batch that
//!   removes it from that list ([`chapter_deletes`]);
//! - `history/{entry id}`: one record per undo entry (`project`, `entry`);
//! - `meta/history:{project}`: the rest of the history (redo runs, open group, limits);
//! - `audit/{id}`: one record per tool call (tool, argument digest, origin, status, time);
//! - `notes/{id}`, `goals/{id}`, `watched/{id}`: the agent's memory (global notes are stored
//!   under the project key [`GLOBAL_PROJECT`] and load with every project; deleted notes stay,
//!   marked, until they are purged 30 days later, see [`crate::memory`]);
//! - `bible/{project}/{kind}/{id}`: one record per story-bible entity (`project`, `entity`);
//! - `files/{project}/{path}`: one record per free file of the `data/` view (`project`,
//!   `file`: path, content, mod time, origin).
//!
//! [`changes`] builds the batch for one mutation from the history's change journal, so a
//! keystroke writes a chapter, a history entry and the history state, not the whole
//! history. [`full_save`] writes everything (new projects, and after a failed save).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::bible::{Bible, Entity, Kind};
use crate::commands::{Entry, History, HistoryState, Origin};
use crate::files::{file_key, Files, FreeFile};
use crate::memory::{Goal, Memory, MemoryNote, WatchedEntity};
use crate::project::{Chapter, Project, UiState};
use crate::session::Session;
use crate::store::{Batch, Store, StoreError, Table};

/// The stored form of a project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// The memory items as they were before a memory tool ran, to save only what it changed.
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

    /// Whether `memory` differs from this snapshot.
    pub fn differs(&self, memory: &Memory) -> bool {
        self.notes != memory.notes || self.goals != memory.goals || self.watched != memory.watched
    }
}

fn note_record(note: &MemoryNote) -> Value {
    json!({"id": note.id, "project": note.project.as_deref().unwrap_or(GLOBAL_PROJECT),
           "tags": note.tags, "updatedMs": note.updated_ms, "note": note})
}

fn goal_record(goal: &Goal) -> Value {
    json!({"id": goal.id, "project": goal.project, "goal": goal})
}

fn watched_record(entity: &WatchedEntity) -> Value {
    json!({"id": entity.id, "project": entity.project, "entity": entity})
}

/// Puts and deletes for the items of one kind that differ between `before` and `after`.
fn diff_items<T: PartialEq>(
    batch: &mut Batch,
    table: Table,
    before: &[T],
    after: &[T],
    id: impl Fn(&T) -> &str,
    record: impl Fn(&T) -> Value,
) {
    let old: std::collections::BTreeMap<&str, &T> = before.iter().map(|t| (id(t), t)).collect();
    let new: std::collections::BTreeSet<&str> = after.iter().map(&id).collect();
    for item in after {
        if old.get(id(item)) != Some(&item) {
            batch.put_value(table, record(item));
        }
    }
    for key in old.keys().filter(|k| !new.contains(*k)) {
        batch.delete(table, *key);
    }
}

/// The memory writes that turn `before` into `memory`.
pub fn memory_changes(before: &MemorySnapshot, memory: &Memory) -> Batch {
    let mut batch = Batch::new();
    diff_items(
        &mut batch,
        Table::Notes,
        &before.notes,
        &memory.notes,
        |n| &n.id,
        note_record,
    );
    diff_items(
        &mut batch,
        Table::Goals,
        &before.goals,
        &memory.goals,
        |g| &g.id,
        goal_record,
    );
    diff_items(
        &mut batch,
        Table::Watched,
        &before.watched,
        &memory.watched,
        |w| &w.id,
        watched_record,
    );
    batch
}

/// Puts of the notes with these ids (a bulk write, a restore), and deletes of those that
/// are gone (purged from the trash).
pub fn note_puts(memory: &Memory, ids: &[String]) -> Batch {
    let mut batch = Batch::new();
    for id in ids {
        match memory.note(id) {
            Some(note) => batch.put_value(Table::Notes, note_record(note)),
            None => batch.delete(Table::Notes, id.clone()),
        }
    }
    batch
}

fn put_memory(batch: &mut Batch, project: &str, memory: &Memory) {
    // Deleted notes too: they are kept (and restorable) for 30 days.
    for note in memory.notes.iter().filter(|n| n.belongs_to(project)) {
        batch.put_value(Table::Notes, note_record(note));
    }
    for goal in memory.project_goals(project) {
        batch.put_value(Table::Goals, goal_record(goal));
    }
    for entity in memory.project_watched(project) {
        batch.put_value(Table::Watched, watched_record(entity));
    }
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

/// Deletes of the records of deleted chapters (their project record, written in the same
/// batch, no longer lists them).
pub fn chapter_deletes(ids: &[String]) -> Batch {
    let mut batch = Batch::new();
    for id in ids {
        batch.delete(Table::Chapters, id.clone());
    }
    batch
}

fn put_history(batch: &mut Batch, project: &str, entries: &[Entry], state: Option<&HistoryState>) {
    for entry in entries {
        batch.put_value(
            Table::History,
            json!({"id": entry.id, "project": project, "entry": entry}),
        );
    }
    if let Some(state) = state {
        batch.put_value(
            Table::Meta,
            json!({"id": history_state_key(project), "project": project, "state": state}),
        );
    }
}

/// The writes for story-bible entities a mutation changed: a put for each that exists, a
/// delete for each that no longer does.
pub fn bible_changes(session: &Session, changed: &[(Kind, String)]) -> Batch {
    let project = &session.project.id;
    let mut batch = Batch::new();
    for (kind, id) in changed {
        match session.bible.get(*kind, id) {
            Some(entity) => put_entity(&mut batch, project, entity),
            None => batch.delete(Table::Bible, crate::bible::entity_key(project, *kind, id)),
        }
    }
    batch
}

/// The writes for free files a mutation changed: a put for each that exists, a delete for
/// each that no longer does.
pub fn file_changes(session: &Session, changed: &[String]) -> Batch {
    let project = &session.project.id;
    let mut batch = Batch::new();
    for path in changed {
        match session.files.get(path) {
            Some(file) => put_file(&mut batch, project, file),
            None => batch.delete(Table::Files, file_key(project, path)),
        }
    }
    batch
}

fn put_file(batch: &mut Batch, project: &str, file: &FreeFile) {
    batch.put_value(
        Table::Files,
        json!({"id": file_key(project, &file.path), "project": project, "file": file}),
    );
}

fn put_entity(batch: &mut Batch, project: &str, entity: &Entity) {
    batch.put_value(
        Table::Bible,
        json!({"id": entity.key(project), "project": project, "entity": entity}),
    );
}

/// Everything of a session, as one batch (a new or imported project, or a save after a
/// failed one). Clears the history's change journal.
pub fn full_save(session: &mut Session, created_ms: u64, now_ms: u64) -> Result<Batch, StoreError> {
    let project = &session.project;
    let mut batch = Batch::new();
    batch.put(
        Table::Projects,
        &project_record(project, created_ms, now_ms),
    )?;
    for chapter in &project.chapters {
        batch.put(Table::Chapters, &chapter_record(&project.id, chapter))?;
    }
    let _ = session.history.take_changes();
    let (entries, state) = session.history.snapshot();
    put_history(&mut batch, &project.id, &entries, Some(&state));
    put_memory(&mut batch, &project.id, &session.memory);
    for entity in session.bible.all() {
        put_entity(&mut batch, &project.id, entity);
    }
    for file in session.files.all() {
        put_file(&mut batch, &project.id, file);
    }
    Ok(batch)
}

/// The batch for one mutation, to be committed together: the project record (when
/// `project_changed`: its name, UI state or chapters changed), the chapters it touched, what the
/// history's journal says changed, the memory a memory tool changed, and an audit record. A
/// read-only tool call writes its audit record and nothing else.
pub fn changes(
    session: &mut Session,
    project_changed: bool,
    touched: &[String],
    audit: Option<&AuditRecord>,
    memory_before: Option<&MemorySnapshot>,
    created_ms: u64,
    now_ms: u64,
) -> Result<Batch, StoreError> {
    let project = &session.project;
    let mut batch = Batch::new();
    if project_changed || !touched.is_empty() {
        batch.put(
            Table::Projects,
            &project_record(project, created_ms, now_ms),
        )?;
    }
    for id in touched {
        if let Some(chapter) = project.chapter(id) {
            batch.put(Table::Chapters, &chapter_record(&project.id, chapter))?;
        }
    }
    let project_id = project.id.clone();
    let changes = session.history.take_changes();
    for id in &changes.delete {
        batch.delete(Table::History, id.clone());
    }
    put_history(
        &mut batch,
        &project_id,
        &changes.put,
        changes.state.as_ref(),
    );
    if let Some(audit) = audit {
        batch.put(Table::Audit, audit)?;
    }
    if let Some(before) = memory_before {
        batch.extend(memory_changes(before, &session.memory));
    }
    Ok(batch)
}

fn parse<T: for<'de> Deserialize<'de>>(table: Table, value: Value) -> Result<T, StoreError> {
    serde_json::from_value(value).map_err(|e| StoreError::Invalid {
        table: table.name(),
        reason: e.to_string(),
    })
}

/// A stored project with its creation time, or `None` if there is no such project.
pub async fn load(store: &dyn Store, id: &str) -> Result<Option<(Session, u64)>, StoreError> {
    let Some(record) = store.get(Table::Projects, id).await? else {
        return Ok(None);
    };
    let record: ProjectRecord = parse(Table::Projects, record)?;
    let mut stored: Vec<ChapterRecord> = store
        .get_by_index(Table::Chapters, "project", json!(id))
        .await?
        .into_iter()
        .map(|v| parse(Table::Chapters, v))
        .collect::<Result<_, _>>()?;
    let mut chapters = Vec::with_capacity(record.chapters.len());
    for chapter_id in &record.chapters {
        if let Some(i) = stored.iter().position(|c| &c.id == chapter_id) {
            let c = stored.swap_remove(i);
            chapters.push(Chapter::restore(c.id, c.title, &c.text, c.version));
        }
    }
    let entries: Vec<Entry> = store
        .get_by_index(Table::History, "project", json!(id))
        .await?
        .into_iter()
        .map(|mut v| parse(Table::History, v["entry"].take()))
        .collect::<Result<_, _>>()?;
    let state: HistoryState = match store.get(Table::Meta, &history_state_key(id)).await? {
        Some(mut v) => parse(Table::Meta, v["state"].take())?,
        None => HistoryState::default(),
    };
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
    let entities: Vec<Entity> = store
        .get_by_index(Table::Bible, "project", json!(id))
        .await?
        .into_iter()
        .map(|mut v| parse(Table::Bible, v["entity"].take()))
        .collect::<Result<_, _>>()?;
    let files: Vec<FreeFile> = store
        .get_by_index(Table::Files, "project", json!(id))
        .await?
        .into_iter()
        .map(|mut v| parse(Table::Files, v["file"].take()))
        .collect::<Result<_, _>>()?;
    let mut project = Project::new(record.id, record.name, chapters);
    project.ui = record.ui;
    let mut session = Session::with_memory(project, memory);
    session.history = History::from_parts(entries, state);
    session.bible = Bible::from_entities(entities);
    session.files = Files::from_files(files);
    // History that names a chapter the project no longer has (a deletion whose history
    // records were not all written, say) is forgotten, so undo never trips over it; the
    // next save writes the trimmed history.
    let missing: std::collections::BTreeSet<String> = session
        .history
        .entries()
        .iter()
        .chain(session.history.redo_runs().iter().flatten())
        .flat_map(|e| e.effects.iter().map(|fx| fx.chapter.clone()))
        .filter(|id| session.project.chapter(id).is_none())
        .collect();
    for chapter in missing {
        session.history.forget_chapter(&chapter);
    }
    Ok(Some((session, record.created_ms)))
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExportDocument {
    /// Always [`EXPORT_FORMAT`].
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
        if !id_ok || !seen.insert((entity.kind, entity.id.clone())) {
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
        if !free || !paths.insert(file.path.as_str()) {
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
            .map(|field| (field.clone(), "import".to_string()))
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
