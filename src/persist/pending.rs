//! [`Pending`]: what an open project still has to write, kept until a save that includes it
//! commits.
//!
//! A mutation does not build its own batch. It marks the records it changed as pending
//! ([`Key`]: the project record, a chapter, a history entry, a story-bible entity, ...) and
//! appends the records that are written once as they were made ([`Append`]: audit records,
//! approval records). A save builds one batch from everything pending at that moment
//! ([`batch`]): each marked record as the session holds it *now* (a put), or a delete when it
//! no longer exists. Only when that batch commits is what it held dropped from the pending set
//! ([`Pending::committed`]), and only the marks it saw: a record changed again while the save
//! was in flight stays pending. So a failed save loses nothing, and a later save, however
//! small its own change, writes everything an earlier failed one held: there is no flag a
//! later success could clear.
//!
//! Some changes are *lazy* ([`Pending::mark_lazy`]): the editor's cursor and selection, say.
//! They do not cause a save of their own; they are written with the next save that asks for
//! them (a checkpoint, a reload, or any save that writes the same record anyway).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{
    chapter_record, goal_record, history_state_key, note_record, project_record, put_entity,
    put_file, watched_record, AuditRecord,
};
use crate::bible::{entity_key, Kind};
use crate::files::file_key;
use crate::memory::Memory;
use crate::session::Session;
use crate::store::{Batch, StoreError, Table};

/// A record whose content the session decides: written as the session holds it when the
/// save is built, or deleted if the session no longer has it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    /// The project record (name, chapter order, UI state).
    Project,
    /// A chapter's record (its title and text); deleted with the chapter.
    Chapter(String),
    /// An undo entry's record (deleted when it is undone or dropped).
    HistoryEntry(String),
    /// The history's state record (redo runs, open group, limits).
    HistoryState,
    /// A memory note.
    Note(String),
    /// A goal.
    Goal(String),
    /// A watched entity.
    Watched(String),
    /// A story-bible entity.
    Bible(Kind, String),
    /// A free file of the `data/` view, by path.
    File(String),
}

/// A record written once, as it was made.
#[derive(Debug, Clone, PartialEq)]
pub enum Append {
    /// An audit record of a tool call.
    Audit(AuditRecord),
    /// A `meta` record (an approval record the call claimed or requested).
    Meta(Value),
}

/// When a key was last marked, and whether only lazily.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mark {
    seq: u64,
    lazy: bool,
}

/// What an open project still has to write (see the module docs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pending {
    /// Counts marks and appends; a batch covers everything up to the count when it was built.
    seq: u64,
    keys: BTreeMap<Key, Mark>,
    appends: Vec<(u64, Append)>,
}

impl Pending {
    /// Nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Everything of a session pending: what a new (or imported) project writes.
    pub fn everything(session: &Session) -> Self {
        let mut pending = Self::new();
        let project = &session.project.id;
        pending.mark(Key::Project);
        for chapter in &session.project.chapters {
            pending.mark(Key::Chapter(chapter.id.clone()));
        }
        for entry in session.history.entries() {
            pending.mark(Key::HistoryEntry(entry.id.clone()));
        }
        pending.mark(Key::HistoryState);
        for note in session.memory.visible_notes(project) {
            pending.mark(Key::Note(note.id.clone()));
        }
        for goal in session.memory.project_goals(project) {
            pending.mark(Key::Goal(goal.id.clone()));
        }
        for entity in session.memory.project_watched(project) {
            pending.mark(Key::Watched(entity.id.clone()));
        }
        for entity in session.bible.all() {
            pending.mark(Key::Bible(entity.kind, entity.id.clone()));
        }
        for file in session.files.all() {
            pending.mark(Key::File(file.path.clone()));
        }
        pending
    }

    fn next(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// The count of marks and appends so far: a batch built now covers up to it.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Mark a record as changed: the next save writes it.
    pub fn mark(&mut self, key: Key) {
        let seq = self.next();
        self.keys.insert(key, Mark { seq, lazy: false });
    }

    /// Mark a record as changed in a way that does not need a save of its own (see the
    /// module docs). A record already pending for a real change stays so.
    pub fn mark_lazy(&mut self, key: Key) {
        let seq = self.next();
        let lazy = self.keys.get(&key).is_none_or(|m| m.lazy);
        self.keys.insert(key, Mark { seq, lazy });
    }

    /// Add a record to write once.
    pub fn append(&mut self, append: Append) {
        let seq = self.next();
        self.appends.push((seq, append));
    }

    /// Mark the records the history's change journal names (and clear the journal).
    pub fn take_history(&mut self, session: &mut Session) {
        let changes = session.history.take_changes();
        for entry in changes.put {
            self.mark(Key::HistoryEntry(entry.id));
        }
        for id in changes.delete {
            self.mark(Key::HistoryEntry(id));
        }
        if changes.state.is_some() {
            self.mark(Key::HistoryState);
        }
    }

    /// True when nothing at all is pending.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.appends.is_empty()
    }

    /// Whether something marked or appended up to `seq` still waits to be written (lazy
    /// marks count only when `lazy`).
    pub fn waiting(&self, seq: u64, lazy: bool) -> bool {
        self.appends.iter().any(|(s, _)| *s <= seq)
            || self
                .keys
                .values()
                .any(|m| m.seq <= seq && (lazy || !m.lazy))
    }

    /// Whether a record is pending (lazily or not).
    pub fn has(&self, key: &Key) -> bool {
        self.keys.contains_key(key)
    }

    /// The keys pending, in order.
    pub fn keys(&self) -> impl Iterator<Item = &Key> {
        self.keys.keys()
    }

    /// A batch that wrote everything pending up to `receipt.seq` committed: drop it (and
    /// keep whatever was marked again since, or was lazy and not included).
    pub fn committed(&mut self, receipt: &Receipt) {
        self.keys
            .retain(|_, m| m.seq > receipt.seq || (m.lazy && !receipt.lazy));
        self.appends.retain(|(s, _)| *s > receipt.seq);
    }
}

/// What a built batch covers, to drop from [`Pending`] once it commits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// Everything marked or appended up to here.
    pub seq: u64,
    /// Whether lazy marks were included.
    pub lazy: bool,
}

/// The ids of memory items that differ between two memories (changed, added or removed).
pub fn memory_keys(before: &super::MemorySnapshot, memory: &Memory) -> Vec<Key> {
    fn diff<T: PartialEq>(
        before: &[T],
        after: &[T],
        id: impl Fn(&T) -> &str,
        key: impl Fn(String) -> Key,
    ) -> Vec<Key> {
        let old: BTreeMap<&str, &T> = before.iter().map(|t| (id(t), t)).collect();
        let new: BTreeMap<&str, &T> = after.iter().map(|t| (id(t), t)).collect();
        let mut keys: Vec<Key> = new
            .iter()
            .filter(|(k, v)| old.get(*k) != Some(*v))
            .map(|(k, _)| key(k.to_string()))
            .collect();
        keys.extend(
            old.keys()
                .filter(|k| !new.contains_key(*k))
                .map(|k| key(k.to_string())),
        );
        keys
    }
    let mut keys = diff(&before.notes, &memory.notes, |n| &n.id, Key::Note);
    keys.extend(diff(&before.goals, &memory.goals, |g| &g.id, Key::Goal));
    keys.extend(diff(
        &before.watched,
        &memory.watched,
        |w| &w.id,
        Key::Watched,
    ));
    keys
}

/// The batch that writes everything pending (lazy marks only when `lazy`), with the
/// receipt to hand to [`Pending::committed`] once it commits.
pub fn batch(
    session: &Session,
    pending: &Pending,
    created_ms: u64,
    now_ms: u64,
    lazy: bool,
) -> Result<(Batch, Receipt), StoreError> {
    let project = &session.project;
    let id = project.id.as_str();
    let mut batch = Batch::new();
    let undo: BTreeMap<&str, &crate::commands::Entry> = session
        .history
        .entries()
        .iter()
        .map(|e| (e.id.as_str(), e))
        .collect();
    for (key, mark) in &pending.keys {
        if mark.lazy && !lazy {
            continue;
        }
        match key {
            Key::Project => batch.put(
                Table::Projects,
                &project_record(project, created_ms, now_ms),
            )?,
            Key::Chapter(chapter) => match project.chapter(chapter) {
                Some(c) => batch.put(Table::Chapters, &chapter_record(id, c))?,
                None => batch.delete(Table::Chapters, chapter.clone()),
            },
            Key::HistoryEntry(entry) => match undo.get(entry.as_str()) {
                Some(e) => batch.put_value(
                    Table::History,
                    json!({"id": e.id, "project": id, "entry": e}),
                ),
                None => batch.delete(Table::History, entry.clone()),
            },
            Key::HistoryState => {
                let state = session.history.state();
                batch.put_value(
                    Table::Meta,
                    json!({"id": history_state_key(id), "project": id, "state": state}),
                );
            }
            Key::Note(note) => match session.memory.note(note) {
                Some(n) => batch.put_value(Table::Notes, note_record(n)),
                None => batch.delete(Table::Notes, note.clone()),
            },
            Key::Goal(goal) => match session.memory.goal(goal) {
                Some(g) => batch.put_value(Table::Goals, goal_record(g)),
                None => batch.delete(Table::Goals, goal.clone()),
            },
            Key::Watched(entity) => match session.memory.watched_entity(entity) {
                Some(w) => batch.put_value(Table::Watched, watched_record(w)),
                None => batch.delete(Table::Watched, entity.clone()),
            },
            Key::Bible(kind, entity) => match session.bible.get(*kind, entity) {
                Some(e) => put_entity(&mut batch, id, e),
                None => batch.delete(Table::Bible, entity_key(id, *kind, entity)),
            },
            Key::File(path) => match session.files.get(path) {
                Some(f) => put_file(&mut batch, id, f),
                None => batch.delete(Table::Files, file_key(id, path)),
            },
        }
    }
    for (_, append) in &pending.appends {
        match append {
            Append::Audit(record) => batch.put(Table::Audit, record)?,
            Append::Meta(record) => batch.put_value(Table::Meta, record.clone()),
        }
    }
    Ok((
        batch,
        Receipt {
            seq: pending.seq,
            lazy,
        },
    ))
}
