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
//!
//! The updates of the project's Yjs document made here ([`Append::Sync`]) are *deferred*
//! too: a save writes them only when it includes them ([`Include::sync`]), which the core
//! asks for while the project is shared, and for a checkpoint or a reload. So a keystroke in
//! a project that is not shared writes its change and its history entry, and its update
//! waits for the writer's pause, where the updates waiting are written as one. Nothing is
//! lost if they never are: opening a project brings its document up to what the project
//! holds, and an update that was never written was never sent either. An update from
//! another device ([`Append::Remote`]) is never deferred, and the save that writes it writes
//! the deferred ones with it, so the stored updates never lack one that a stored one
//! builds on.

use std::collections::BTreeMap;

use serde_json::json;
use serde_json::Value;

use super::{
    change_record, chapter_record, entity_record, file_record, goal_record, head_key,
    history_record, history_state_key, note_record, project_record, watched_record, AuditRecord,
    ChangeRecord,
};
use crate::bible::{entity_key, Kind};
use crate::files::file_key;
use crate::memory::{Changed, Memory};
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
    /// An applied chapter change.
    Change(ChangeRecord),
    /// An audit record of a tool call.
    Audit(AuditRecord),
    /// A `meta` record (an approval record the call claimed or requested).
    Meta(Value),
    /// The deletion of a `meta` record, by key (a research note dropped or deleted).
    MetaDelete(String),
    /// An update of the project's Yjs document made here (deferred: see the module docs).
    Sync(super::SyncRecord),
    /// The deletion of a `sync` record, by key (updates folded into one; deferred with the
    /// update that holds them).
    SyncDelete(String),
    /// An update of the project's Yjs document from another device, stored as it came.
    Remote(super::SyncRecord),
}

impl Append {
    /// Whether it waits for a save that includes the document's updates.
    fn deferred(&self) -> bool {
        matches!(self, Append::Sync(_) | Append::SyncDelete(_))
    }
}

/// What a save writes besides what every save writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Include {
    /// The lazy marks ([`Pending::mark_lazy`]).
    pub lazy: bool,
    /// The deferred updates of the project's Yjs document (see the module docs).
    pub sync: bool,
}

impl Include {
    /// What a checkpoint or a reload writes: everything.
    pub const ALL: Include = Include {
        lazy: true,
        sync: true,
    };
}

/// A chapter of up to [`CHECKPOINT_CHARS`] chars is checkpointed (its record rewritten with
/// its whole text) once this many changes were applied to it since its last checkpoint;
/// a longer one after proportionally more, up to [`CHECKPOINT_MOST`] (see
/// [`checkpoint_every`]). Between checkpoints a change writes only its own record. The
/// worker also checkpoints every changed chapter when the writer pauses, so these counts
/// only bound a load's replay during long unbroken typing, while keeping a long chapter's
/// rewrite (about 55 ms for 5 MB in IndexedDB) off most keystrokes.
pub const CHECKPOINT_EVERY: u64 = 100;

/// The chapter length (chars) per [`CHECKPOINT_EVERY`] changes.
pub const CHECKPOINT_CHARS: u64 = 64 * 1024;

/// The most changes between two checkpoints a keystroke's save makes.
pub const CHECKPOINT_MOST: u64 = 1_000;

/// After how many changes a chapter of `len_chars` chars is due for a checkpoint:
/// [`CHECKPOINT_EVERY`] per started [`CHECKPOINT_CHARS`], at most [`CHECKPOINT_MOST`].
pub fn checkpoint_every(len_chars: usize) -> u64 {
    let blocks = (len_chars as u64).div_ceil(CHECKPOINT_CHARS).max(1);
    (CHECKPOINT_EVERY * blocks).min(CHECKPOINT_MOST)
}

/// How many change records are kept behind a checkpoint (older ones are deleted when it is
/// written), so that the change feed of a freshly loaded chapter reaches back that far
/// (a resent change is still recognized by its tag; other tabs can catch up).
pub const KEEP_BEHIND: u64 = 200;

/// What the store holds of a chapter, as far as this core knows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoredChapter {
    /// The version of its checkpoint (its chapter record).
    pub checkpoint: u64,
    /// The oldest and newest version of its change records, if it has any.
    pub changes: Option<(u64, u64)>,
    /// Its checkpoint record's revision (`None`: a record written before revisions).
    pub rev: Option<u64>,
    /// The version its head record names (`None`: no head record yet): the chapter's
    /// version at its newest checkpoint (or first save). Change records appended since do
    /// not move it; each of them is inserted, which fails if another writer wrote it first.
    pub head: Option<u64>,
}

impl StoredChapter {
    /// The newest version the store holds (by its checkpoint or a change record).
    pub fn newest(&self) -> u64 {
        self.changes
            .map_or(self.checkpoint, |(_, n)| n.max(self.checkpoint))
    }
}

/// What this core knows the store holds of a project.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stored {
    /// By chapter id.
    pub chapters: BTreeMap<String, StoredChapter>,
    /// The revision of each versioned record (the project record, the history state,
    /// story-bible entities, free files), by `<table>/<key>` ([`Stored::rev`]). A record
    /// absent here is absent from the store or has no revision yet.
    pub revs: BTreeMap<String, u64>,
}

/// The key of a record's revision in [`Stored::revs`] (table names have no '/').
pub fn rev_key(table: Table, key: &str) -> String {
    format!("{}/{key}", table.name())
}

impl Stored {
    /// Whether a chapter of `len_chars` chars is due for a checkpoint at `version`
    /// ([`checkpoint_every`]).
    pub fn checkpoint_due(&self, chapter: &str, version: u64, len_chars: usize) -> bool {
        self.chapters
            .get(chapter)
            .is_none_or(|c| version.saturating_sub(c.checkpoint) >= checkpoint_every(len_chars))
    }

    /// What a committed batch changed.
    pub fn apply(&mut self, receipt: &Receipt) {
        // A project has tens or hundreds of chapters: one by one.
        for (chapter, stored) in &receipt.chapters {
            match stored {
                Some(stored) => self.chapters.insert(chapter.clone(), *stored),
                None => self.chapters.remove(chapter),
            };
        }
        for ((table, key), rev) in &receipt.revs {
            match rev {
                Some(rev) => self.revs.insert(rev_key(*table, key), *rev),
                None => self.revs.remove(&rev_key(*table, key)),
            };
        }
    }

    /// The revision this core last saw of a record (`None`: absent, or written before
    /// revisions).
    pub fn rev(&self, table: Table, key: &str) -> Option<u64> {
        self.revs.get(&rev_key(table, key)).copied()
    }
}

/// The key of a chapter's change record of `version`: `<chapter>/<version, 20 digits>`
/// (so a chapter's records sort by version).
pub fn change_key(chapter: &str, version: u64) -> String {
    format!("{chapter}/{version:020}")
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
    /// A keystroke marks a key that is mostly pending already; a save drops what it wrote,
    /// so few keys stay pending; [`Pending::everything`] marks every key.
    keys: BTreeMap<Key, Mark>,
    /// The appends every save writes.
    appends: Vec<(u64, Append)>,
    /// The deferred appends ([`Append::deferred`]): one per keystroke, waiting for the
    /// writer's pause. Kept apart so that a save that leaves them does not look at each.
    deferred: Vec<(u64, Append)>,
    /// Marks and appends held back for a job's unit, by hold: saved only when the hold is
    /// released, with the unit's progress mark, in one batch ([`Pending::release`]). (A few,
    /// one per running unit.)
    held: BTreeMap<String, Held>,
}

/// What a hold keeps back: keys (with whether only lazily) and appends.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Held {
    /// Marks whose `seq` is always 0 (the map type [`Pending`]'s own keys use: a map of
    /// flags would be another map type in the wasm).
    keys: BTreeMap<Key, Mark>,
    appends: Vec<Append>,
}

impl Held {
    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.appends.is_empty()
    }
}

impl Pending {
    /// Nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Everything of a session pending: what a new (or imported) project writes.
    pub fn everything(session: &Session) -> Self {
        let project = &session.project.id;
        let mut keys = vec![Key::Project];
        keys.extend(
            session
                .project
                .chapters
                .iter()
                .map(|c| Key::Chapter(c.id.clone())),
        );
        keys.extend(
            session
                .history
                .entries()
                .iter()
                .map(|e| Key::HistoryEntry(e.id.clone())),
        );
        keys.push(Key::HistoryState);
        // Deleted notes too: they are kept (and restorable) for 30 days.
        let notes = session
            .memory
            .notes
            .iter()
            .filter(|n| n.belongs_to(project));
        keys.extend(notes.map(|n| Key::Note(n.id.clone())));
        keys.extend(
            session
                .memory
                .project_goals(project)
                .map(|g| Key::Goal(g.id.clone())),
        );
        let watched = session.memory.project_watched(project);
        keys.extend(watched.map(|w| Key::Watched(w.id.clone())));
        keys.extend(
            session
                .bible
                .all()
                .map(|e| Key::Bible(e.kind, e.id.clone())),
        );
        keys.extend(session.files.all().map(|f| Key::File(f.path.clone())));
        // Marked as `mark` marks them.
        let mut pending = Self::new();
        for key in keys {
            let mark = Mark {
                seq: pending.next(),
                lazy: false,
            };
            pending.keys.insert(key, mark);
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
        if append.deferred() {
            self.deferred.push((seq, append));
        } else {
            self.appends.push((seq, append));
        }
    }

    /// Keep what `marked` marked and appended under `hold` instead of pending it: nothing
    /// of it is saved until [`Pending::release`]. (A record held here and also marked for
    /// another reason is written by that other save as the session holds it then.)
    pub fn hold(&mut self, hold: &str, marked: Pending) {
        let Pending {
            keys,
            appends,
            deferred,
            held: more_held,
            ..
        } = marked;
        let held = self.held.entry(hold.to_string()).or_default();
        for (key, mark) in keys {
            let lazy = held.keys.get(&key).is_none_or(|m| m.lazy) && mark.lazy;
            held.keys.insert(key, Mark { seq: 0, lazy });
        }
        held.appends
            .extend(appends.into_iter().chain(deferred).map(|(_, a)| a));
        for (name, more) in more_held {
            let held = self.held.entry(name).or_default();
            // One by one (`extend` would sort, with a copy of the sort of its own).
            for (key, mark) in more.keys {
                held.keys.insert(key, mark);
            }
            held.appends.extend(more.appends);
        }
    }

    /// Pend everything held under `hold` (and forget the hold), so that the next save writes
    /// it, together with whatever is marked with it. Returns whether anything was held.
    pub fn release(&mut self, hold: &str) -> bool {
        let Some(held) = self.held.remove(hold) else {
            return false;
        };
        let any = !held.is_empty();
        for (key, mark) in held.keys {
            if mark.lazy {
                self.mark_lazy(key);
            } else {
                self.mark(key);
            }
        }
        for append in held.appends {
            self.append(append);
        }
        any
    }

    /// Whether anything is held under `hold`.
    pub fn holds(&self, hold: &str) -> bool {
        self.held.get(hold).is_some_and(|h| !h.is_empty())
    }

    /// Take every hold (to carry them over when the pending set is replaced after a merge).
    pub fn take_held(&mut self) -> BTreeMap<String, Held> {
        std::mem::take(&mut self.held)
    }

    /// Put back holds taken with [`Pending::take_held`].
    pub fn restore_held(&mut self, held: BTreeMap<String, Held>) {
        // One by one (`extend` would sort, with a copy of the sort of its own).
        for (name, h) in held {
            self.held.insert(name, h);
        }
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
        self.keys.is_empty() && self.appends.is_empty() && self.deferred.is_empty()
    }

    /// Whether something marked or appended up to `seq` still waits to be written by a
    /// save that includes `include`.
    pub fn waiting(&self, seq: u64, include: Include) -> bool {
        // Each list is in the order of its counts: its first is its oldest.
        let from = |list: &[(u64, Append)]| list.first().is_some_and(|(s, _)| *s <= seq);
        from(&self.appends)
            || (include.sync && from(&self.deferred))
            || self
                .keys
                .values()
                .any(|m| m.seq <= seq && (include.lazy || !m.lazy))
    }

    /// Whether a record is pending (lazily or not).
    pub fn has(&self, key: &Key) -> bool {
        self.keys.contains_key(key)
    }

    /// The keys pending, in order.
    pub fn keys(&self) -> impl Iterator<Item = &Key> {
        self.keys.keys()
    }

    /// Whether a key is pending only lazily (`None`: not pending).
    pub fn lazy(&self, key: &Key) -> Option<bool> {
        self.keys.get(key).map(|m| m.lazy)
    }

    /// The records pending to be written once: those every save writes, in order, then the
    /// deferred ones, in order.
    pub fn appends(&self) -> impl Iterator<Item = &Append> {
        self.appends.iter().chain(&self.deferred).map(|(_, a)| a)
    }

    /// The same marks and appends, all counted as made before any save now waiting, and
    /// the count continuing from `seq`: what replaces a project's pending set after a
    /// merge, so that every save waiting for the old set waits for this one.
    pub fn settled(mut self, seq: u64) -> Self {
        for (_, mark) in self.keys.iter_mut() {
            mark.seq = 0;
        }
        for (s, _) in self.appends.iter_mut().chain(&mut self.deferred) {
            *s = 0;
        }
        self.seq = self.seq.max(seq);
        self
    }

    /// A batch that wrote everything pending up to `receipt.seq` committed: drop it (and
    /// keep whatever was marked again since, or was lazy or deferred and not included).
    pub fn committed(&mut self, receipt: &Receipt) {
        self.keys
            .retain(|_, m| m.seq > receipt.seq || (m.lazy && !receipt.include.lazy));
        self.appends.retain(|(s, _)| *s > receipt.seq);
        if receipt.include.sync {
            self.deferred.retain(|(s, _)| *s > receipt.seq);
        }
    }
}

/// What a built batch covers, to drop from [`Pending`] once it commits, and what the store
/// then holds ([`Stored::apply`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// Everything marked or appended up to here.
    pub seq: u64,
    /// What the batch included besides what every save writes.
    pub include: Include,
    /// What the store holds of each chapter the batch wrote (`None`: deleted).
    pub chapters: Vec<(String, Option<StoredChapter>)>,
    /// The revision of each versioned record the batch wrote (`None`: deleted).
    pub revs: Vec<((Table, String), Option<u64>)>,
}

/// `null`, or the number.
fn expected(known: Option<u64>) -> Value {
    known.map_or(Value::Null, |n| json!(n))
}

/// Put a versioned record: checked against the revision this core last saw (the batch
/// fails with a conflict, writing nothing, if another writer changed it since), written
/// with the next one.
fn put_versioned(
    batch: &mut Batch,
    receipt: &mut Receipt,
    stored: &Stored,
    table: Table,
    mut value: Value,
) {
    let key = value["id"].as_str().unwrap_or_default().to_string();
    let known = stored.rev(table, &key);
    batch.expect(table, key.clone(), "rev", expected(known));
    let rev = known.unwrap_or(0) + 1;
    value["rev"] = json!(rev);
    batch.put_value(table, value);
    receipt.revs.push(((table, key), Some(rev)));
}

/// Delete a versioned record, checked like [`put_versioned`].
fn delete_versioned(
    batch: &mut Batch,
    receipt: &mut Receipt,
    stored: &Stored,
    table: Table,
    key: String,
) {
    batch.expect(table, key.clone(), "rev", expected(stored.rev(table, &key)));
    batch.delete(table, key.clone());
    receipt.revs.push(((table, key), None));
}

impl From<Changed> for Key {
    fn from(item: Changed) -> Self {
        match item {
            Changed::Note(id) => Key::Note(id),
            Changed::Goal(id) => Key::Goal(id),
            Changed::Watched(id) => Key::Watched(id),
        }
    }
}

/// The ids of memory items that differ between two memories (changed, added or removed).
pub fn memory_keys(before: &super::MemorySnapshot, memory: &Memory) -> Vec<Key> {
    fn diff<T: PartialEq>(
        before: &[T],
        after: &[T],
        id: impl Fn(&T) -> &str,
        key: impl Fn(String) -> Key,
    ) -> Vec<Key> {
        let old: Vec<&str> = before.iter().map(&id).collect();
        let new: Vec<&str> = after.iter().map(&id).collect();
        differing(&old, &new, &|o, n| before[o] == after[n])
            .into_iter()
            .map(|k| key(k.to_string()))
            .collect()
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

/// The ids (of items with ids `old` before and `new` after) whose item changed or was added,
/// sorted, then those removed, sorted. Of equal ids the last item counts; `same(o, n)` says
/// whether old item `o` equals new item `n`.
fn differing<'s>(
    old: &[&'s str],
    new: &[&'s str],
    same: &dyn Fn(usize, usize) -> bool,
) -> Vec<&'s str> {
    // Each id with the position of its last item.
    let last = |ids: &[&'s str]| -> BTreeMap<&'s str, usize> {
        ids.iter().enumerate().map(|(i, &id)| (id, i)).collect()
    };
    let (old_ids, new_ids) = (last(old), last(new));
    let mut ids: Vec<&str> = new_ids
        .iter()
        .filter(|&(k, &n)| old_ids.get(k).is_none_or(|&o| !same(o, n)))
        .map(|(&k, _)| k)
        .collect();
    ids.extend(
        old_ids
            .keys()
            .filter(|k| !new_ids.contains_key(*k))
            .copied(),
    );
    ids
}

/// The undo entries that the history-entry keys of a save name, by id ([`entries_named`]).
struct Named<'e, 'k> {
    /// Each wanted id, with its entry once found.
    found: BTreeMap<&'k str, Option<&'e crate::commands::Entry>>,
}

impl<'e> Named<'e, '_> {
    fn get(&self, id: &str) -> Option<&'e crate::commands::Entry> {
        self.found.get(id).copied().flatten()
    }
}

/// The undo entries (of `entries`, oldest first) that history-entry keys among `keys` name,
/// by id. The entries a save writes are nearly always the newest, so they are looked for
/// from the top, stopping once all are found: a keystroke does not index the whole history.
fn entries_named<'e, 'k>(
    entries: &'e [crate::commands::Entry],
    keys: impl Iterator<Item = &'k Key>,
) -> Named<'e, 'k> {
    let mut found: BTreeMap<&str, Option<&crate::commands::Entry>> = keys
        .filter_map(|key| match key {
            Key::HistoryEntry(id) => Some((id.as_str(), None)),
            _ => None,
        })
        .collect();
    let mut left = found.len();
    if left == 0 {
        return Named { found };
    }
    for entry in entries.iter().rev() {
        if let Some(slot) = found.get_mut(entry.id.as_str()) {
            if slot.is_none() {
                left -= 1;
            }
            *slot = Some(entry);
            if left == 0 {
                break;
            }
        }
    }
    Named { found }
}

/// The batch that writes everything pending (lazy marks and deferred updates only when
/// `include` says so), with the receipt to hand to [`Pending::committed`] and
/// [`Stored::apply`] once it commits.
///
/// A chapter's changes are written as change records; its checkpoint (its record, with
/// the whole text at its current version) is written when it was marked (a new, renamed or
/// due chapter, or a checkpoint request), when the store holds nothing of it, and when its
/// pending changes do not continue the stored ones exactly (so a load never replays a
/// gap). A checkpoint deletes the change records more than [`KEEP_BEHIND`] versions behind
/// it, and any stored above it (left by a damaged store). A deleted chapter's record and all
/// its change records are deleted.
pub fn batch(
    session: &Session,
    pending: &Pending,
    stored: &Stored,
    created_ms: u64,
    now_ms: u64,
    include: Include,
) -> Result<(Batch, Receipt), StoreError> {
    let project = &session.project;
    let id = project.id.as_str();
    let mut batch = Batch::new();
    // An update from another device goes with the deferred ones made here before it.
    let include = Include {
        sync: include.sync
            || pending
                .appends
                .iter()
                .any(|(_, a)| matches!(a, Append::Remote(_))),
        ..include
    };
    let lazy = include.lazy;
    let mut receipt = Receipt {
        seq: pending.seq,
        include,
        chapters: Vec::new(),
        revs: Vec::new(),
    };
    // Chapters: marked ones and those with changes to write.
    // By chapter (sorted): a marked chapter with no change, and each change, in order.
    let (mut names, mut appended): (Vec<&str>, Vec<Option<&ChangeRecord>>) = Default::default();
    for key in pending.keys.keys() {
        if let Key::Chapter(chapter) = key {
            names.push(chapter);
            appended.push(None);
        }
    }
    for (_, append) in &pending.appends {
        if let Append::Change(change) = append {
            names.push(&change.chapter);
            appended.push(Some(change));
        }
    }
    let mut by_chapter: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, name) in names.iter().enumerate() {
        by_chapter.entry(*name).or_default().push(i);
    }
    for (&chapter, at) in &by_chapter {
        let records: Vec<&ChangeRecord> = at.iter().filter_map(|&i| appended[i]).collect();
        let known = stored.chapters.get(chapter).copied();
        // Every write of a chapter checks that its head is where this core last saw it:
        // another writer's checkpoint moved it, or its deletion removed it.
        batch.expect(
            Table::Meta,
            head_key(chapter),
            "version",
            expected(known.and_then(|k| k.head)),
        );
        // And that no other writer appended the change after the newest one this core saw
        // (appends do not move the head): its change records are inserted when they continue
        // the stored ones, and otherwise that record is read.
        let current = project.chapter(chapter);
        let mut next = known.map_or(0, |k| k.newest()) + 1;
        let appends = known.is_some()
            && current.is_some()
            && records.first().is_some_and(|r| r.version == next);
        if let (Some(_), false) = (known, appends) {
            batch.expect(Table::Changes, change_key(chapter, next), "id", Value::Null);
        }
        let Some(current) = current else {
            // Deleted: its record, its head and every change record it may have.
            batch.expect(
                Table::Chapters,
                chapter,
                "rev",
                expected(known.and_then(|k| k.rev)),
            );
            batch.delete(Table::Chapters, chapter);
            batch.delete(Table::Meta, head_key(chapter));
            if let Some(known) = known {
                let from = known.changes.map_or(known.checkpoint, |(o, _)| o);
                for version in from..=known.newest() {
                    batch.delete(Table::Changes, change_key(chapter, version));
                }
            }
            receipt.chapters.push((chapter.to_string(), None));
            continue;
        };
        let mut contiguous = known.is_some();
        for record in &records {
            contiguous &= record.version == next;
            next = record.version + 1;
            let value = change_record(id, record);
            // A record that continues the stored ones cannot be there yet, unless another
            // writer wrote it; one after a gap may replace a damaged store's leftover.
            if contiguous {
                batch.insert_record(Table::Changes, value);
            } else {
                batch.put_record(Table::Changes, value);
            }
        }
        let version = current.version();
        let oldest = known.and_then(|k| k.changes.map(|(o, _)| o));
        let newest_change = records.last().map(|r| r.version);
        let mut after = StoredChapter {
            rev: known.and_then(|k| k.rev),
            head: known.and_then(|k| k.head),
            checkpoint: known.map_or(0, |k| k.checkpoint),
            changes: match (oldest, newest_change) {
                (Some(o), Some(n)) => Some((o, n)),
                (None, Some(n)) => records.first().map(|f| (f.version, n)),
                (Some(o), None) => known.and_then(|k| k.changes).map(|(_, n)| (o, n)),
                (None, None) => None,
            },
        };
        let checkpoint =
            pending.has(&Key::Chapter(chapter.to_string())) || !contiguous || next != version + 1;
        if checkpoint {
            let known_rev = known.and_then(|k| k.rev);
            batch.expect(Table::Chapters, chapter, "rev", expected(known_rev));
            let rev = known_rev.unwrap_or(0) + 1;
            let mut value = crate::error::to_json(&chapter_record(id, current));
            value["rev"] = json!(rev);
            batch.put_value(Table::Chapters, value);
            after.rev = Some(rev);
            // Change records above the checkpoint are not this chapter's (a damaged store).
            if let Some(stale_to) = known.map(|k| k.newest()).filter(|n| *n > version) {
                for v in version + 1..=stale_to {
                    batch.delete(Table::Changes, change_key(chapter, v));
                }
            }
            after.checkpoint = version;
            after.changes = match after.changes {
                Some((o, n)) => {
                    let keep_from = version.saturating_sub(KEEP_BEHIND - 1).max(1);
                    for v in o..keep_from {
                        batch.delete(Table::Changes, change_key(chapter, v));
                    }
                    let n = n.min(version);
                    (keep_from.max(o) <= n).then_some((keep_from.max(o), n))
                }
                None => None,
            };
        }
        // The head moves with a checkpoint (and is written once for a chapter that has
        // none): appending changes leaves it, so a keystroke writes two records.
        if checkpoint || after.head.is_none() {
            batch.put_value(
                Table::Meta,
                json!({"id": head_key(chapter), "project": id, "chapter": chapter, "version": version}),
            );
            after.head = Some(version);
        }
        receipt.chapters.push((chapter.to_string(), Some(after)));
    }
    let undo = entries_named(session.history.entries(), pending.keys.keys());
    for (key, mark) in &pending.keys {
        if mark.lazy && !lazy {
            continue;
        }
        match key {
            Key::Project => {
                let record = crate::error::to_json(&project_record(project, created_ms, now_ms));
                put_versioned(&mut batch, &mut receipt, stored, Table::Projects, record);
            }
            // Written above, with the chapter's changes.
            Key::Chapter(_) => {}
            Key::HistoryEntry(entry) => match undo.get(entry) {
                Some(e) => batch.put_record(Table::History, history_record(id, e)),
                None => batch.delete(Table::History, entry.clone()),
            },
            Key::HistoryState => {
                let state = session.history.state();
                put_versioned(
                    &mut batch,
                    &mut receipt,
                    stored,
                    Table::Meta,
                    json!({"id": history_state_key(id), "project": id, "state": state}),
                );
            }
            Key::Note(id) => match session.memory.note(id) {
                Some(n) => batch.put_record(Table::Notes, note_record(n)),
                None => batch.delete(Table::Notes, id.clone()),
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
                Some(e) => put_versioned(
                    &mut batch,
                    &mut receipt,
                    stored,
                    Table::Bible,
                    entity_record(id, e),
                ),
                None => delete_versioned(
                    &mut batch,
                    &mut receipt,
                    stored,
                    Table::Bible,
                    entity_key(id, *kind, entity),
                ),
            },
            Key::File(path) => match session.files.get(path) {
                Some(f) => put_versioned(
                    &mut batch,
                    &mut receipt,
                    stored,
                    Table::Files,
                    file_record(id, f),
                ),
                None => delete_versioned(
                    &mut batch,
                    &mut receipt,
                    stored,
                    Table::Files,
                    file_key(id, path),
                ),
            },
        }
    }
    let deferred: &[(u64, Append)] = if include.sync { &pending.deferred } else { &[] };
    for (_, append) in pending.appends.iter().chain(deferred) {
        match append {
            Append::Change(_) => {}
            Append::Audit(record) => batch.put(Table::Audit, record),
            Append::Meta(record) => batch.put_value(Table::Meta, record.clone()),
            Append::MetaDelete(key) => batch.delete(Table::Meta, key.clone()),
            // Written below, as one.
            Append::Sync(_) => {}
            Append::SyncDelete(key) => batch.delete(Table::Sync, key.clone()),
            Append::Remote(record) => batch.put(Table::Sync, record),
        }
    }
    if include.sync {
        put_updates(&mut batch, pending)?;
    }
    Ok((batch, receipt))
}

/// Put the deferred updates of the project's document: as one record, under the key of
/// the first, when there are several.
fn put_updates(batch: &mut Batch, pending: &Pending) -> Result<(), StoreError> {
    let records: Vec<&super::SyncRecord> = pending
        .deferred
        .iter()
        .filter_map(|(_, a)| match a {
            Append::Sync(record) => Some(record),
            _ => None,
        })
        .collect();
    match records.as_slice() {
        [] => {}
        [one] => batch.put(Table::Sync, one),
        [first, ..] => {
            let updates: Vec<&[u8]> = records.iter().map(|r| r.update.as_slice()).collect();
            let merged = yrs::merge_updates_v1(&updates).map_err(|e| StoreError::Invalid {
                table: Table::Sync.name(),
                reason: format!("the document's updates do not merge: {e}"),
            })?;
            batch.put(
                Table::Sync,
                &super::SyncRecord::from_bytes(&first.id, &first.project, &merged),
            );
        }
    }
    Ok(())
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::commands::Origin;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        /// `differing` says what the maps of ids to items (of equal ids, the last) it
        /// replaced said: changed or added ids, sorted, then removed ones, sorted.
        #[test]
        fn differing_ids_are_those_of_maps_by_id(
            old in proptest::collection::vec(("[a-d]", 0u8..3), 0..12),
            new in proptest::collection::vec(("[a-d]", 0u8..3), 0..12),
        ) {
            let map = |v: &[(String, u8)]| -> BTreeMap<String, u8> {
                v.iter().cloned().collect()
            };
            let (old_map, new_map) = (map(&old), map(&new));
            let mut expected: Vec<&str> = new_map
                .iter()
                .filter(|(k, v)| old_map.get(*k) != Some(*v))
                .map(|(k, _)| k.as_str())
                .collect();
            expected.extend(
                old_map.keys().filter(|k| !new_map.contains_key(*k)).map(String::as_str),
            );
            let old_ids: Vec<&str> = old.iter().map(|(k, _)| k.as_str()).collect();
            let new_ids: Vec<&str> = new.iter().map(|(k, _)| k.as_str()).collect();
            let got = differing(&old_ids, &new_ids, &|o, n| old[o].1 == new[n].1);
            prop_assert_eq!(got, expected);
        }

        /// What `Memory` records while tracking is what differs from a copy taken before,
        /// whatever its methods did (some of them changing nothing, some failing): the save
        /// writes every change without comparing copies. Over one call it is exactly the
        /// items that differ; over several, each item once (an item changed and changed back,
        /// or added and removed, is recorded though it is the same at both ends).
        #[test]
        fn recorded_memory_changes_are_the_differences(
            before in proptest::collection::vec(memory_op(), 0..12),
            tracked in proptest::collection::vec(memory_op(), 0..12),
        ) {
            let ids = crate::env::SequentialIds::new("m");
            let mut memory = Memory::default();
            let mut now = 1_000;
            for op in &before {
                apply(&mut memory, op, &mut now, &ids);
            }
            prop_assert!(memory.take_changes().is_empty(), "nothing is recorded untracked");
            let sorted = |mut keys: Vec<Key>| {
                keys.sort();
                keys
            };
            // One call at a time, on a copy.
            let (mut each, mut each_now) = (memory.clone(), now);
            for op in &tracked {
                let copy = super::super::MemorySnapshot::of(&each);
                each.track_changes();
                apply(&mut each, op, &mut each_now, &ids);
                let recorded: Vec<Key> = each.take_changes().into_iter().map(Key::from).collect();
                prop_assert_eq!(sorted(recorded), sorted(memory_keys(&copy, &each)), "{:?}", op);
            }
            // All the calls at once.
            let copy = super::super::MemorySnapshot::of(&memory);
            memory.track_changes();
            for op in &tracked {
                apply(&mut memory, op, &mut now, &ids);
            }
            let recorded = sorted(memory.take_changes().into_iter().map(Key::from).collect());
            for key in memory_keys(&copy, &memory) {
                prop_assert!(recorded.contains(&key), "{:?} changed, not recorded", key);
            }
            let mut once = recorded.clone();
            once.dedup();
            prop_assert_eq!(once.len(), recorded.len(), "each item recorded once");
        }
    }

    /// What `Pending` does with its appends, against a model that keeps them all in one
    /// list: keeping the deferred ones apart (so that a save that leaves them does not look
    /// at each) changes nothing of what waits, what a commit drops, or what is left.
    #[derive(Debug, Clone)]
    enum AppendOp {
        /// Append a record every save writes (`false`) or a deferred one (`true`).
        Append(bool),
        /// A batch built `back` counts ago (so not covering what came since), with the
        /// document's updates or without, commits.
        Commit { sync: bool, back: u64 },
        /// Replaced after a merge: everything counted as made before any save now waiting.
        Settled,
    }

    fn append_op() -> impl Strategy<Value = AppendOp> {
        prop_oneof![
            3 => any::<bool>().prop_map(AppendOp::Append),
            2 => (any::<bool>(), 0u64..4).prop_map(|(sync, back)| AppendOp::Commit { sync, back }),
            1 => Just(AppendOp::Settled),
        ]
    }

    proptest! {
        #[test]
        fn deferred_appends_wait_and_go_as_in_one_list(
            ops in proptest::collection::vec(append_op(), 0..40),
        ) {
            let mut pending = Pending::new();
            // The model: every append with its count, in the order made.
            let mut model: Vec<(u64, Append)> = Vec::new();
            let mut n = 0;
            for op in &ops {
                match op {
                    AppendOp::Append(deferred) => {
                        n += 1;
                        let append = if *deferred {
                            Append::SyncDelete(format!("s{n}"))
                        } else {
                            Append::MetaDelete(format!("m{n}"))
                        };
                        pending.append(append.clone());
                        model.push((pending.seq(), append));
                    }
                    AppendOp::Commit { sync, back } => {
                        let receipt = Receipt {
                            seq: pending.seq().saturating_sub(*back),
                            include: Include { lazy: false, sync: *sync },
                            chapters: Vec::new(),
                            revs: Vec::new(),
                        };
                        pending.committed(&receipt);
                        model.retain(|(s, a)| *s > receipt.seq || (a.deferred() && !sync));
                    }
                    AppendOp::Settled => {
                        let seq = pending.seq();
                        pending = pending.settled(seq);
                        for (s, _) in &mut model {
                            *s = 0;
                        }
                    }
                }
                for seq in 0..=pending.seq() {
                    for sync in [false, true] {
                        let include = Include { lazy: false, sync };
                        let waits = model.iter().any(|(s, a)| *s <= seq && (sync || !a.deferred()));
                        prop_assert_eq!(pending.waiting(seq, include), waits, "{:?} at {}", include, seq);
                    }
                }
                prop_assert_eq!(pending.is_empty(), model.is_empty());
                // Those every save writes, in order, then the deferred ones, in order.
                let (deferred, every): (Vec<_>, Vec<_>) = model.iter().map(|(_, a)| a).partition(|a| a.deferred());
                let expected: Vec<&Append> = every.into_iter().chain(deferred).collect();
                prop_assert_eq!(pending.appends().collect::<Vec<_>>(), expected);
            }
        }
    }

    /// A call of one of `Memory`'s changing methods, with arguments from small sets (so that
    /// some calls change nothing and some name items that do not exist).
    #[derive(Debug, Clone)]
    enum MemoryOp {
        Write(u8),
        WriteMany(u8),
        Update(u8, Option<u8>, Option<u8>, bool),
        Delete(u8),
        Restore(u8),
        Purge,
        Remove(u8),
        Bedside,
        Evolve(u8),
        CreateGoal(u8),
        UpdateGoal(u8, Option<u8>, Option<bool>),
        Watch(u8, u8, Option<bool>),
        Later(bool),
    }

    fn memory_op() -> impl Strategy<Value = MemoryOp> {
        prop_oneof![
            (0u8..3).prop_map(MemoryOp::Write),
            (0u8..3).prop_map(MemoryOp::WriteMany),
            (
                0u8..6,
                proptest::option::of(0u8..3),
                proptest::option::of(1u8..4),
                any::<bool>()
            )
                .prop_map(|(n, t, i, user)| MemoryOp::Update(n, t, i, user)),
            (0u8..6).prop_map(MemoryOp::Delete),
            (0u8..6).prop_map(MemoryOp::Restore),
            Just(MemoryOp::Purge),
            (0u8..6).prop_map(MemoryOp::Remove),
            Just(MemoryOp::Bedside),
            (0u8..3).prop_map(MemoryOp::Evolve),
            (0u8..3).prop_map(MemoryOp::CreateGoal),
            (
                0u8..4,
                proptest::option::of(0u8..3),
                proptest::option::of(any::<bool>())
            )
                .prop_map(|(g, t, done)| MemoryOp::UpdateGoal(g, t, done)),
            (0u8..2, 0u8..2, proptest::option::of(any::<bool>()))
                .prop_map(|(n, r, high)| MemoryOp::Watch(n, r, high)),
            any::<bool>().prop_map(MemoryOp::Later),
        ]
    }

    fn apply(memory: &mut Memory, op: &MemoryOp, now: &mut u64, ids: &dyn crate::env::IdSource) {
        use crate::memory::{
            EntityType, GoalPatch, GoalStatus, NewGoal, NewNote, NewWatch, NotePatch, NoteType,
            Priority, Scope, TRASH_RETENTION_MS,
        };
        let texts = ["a lamp", "the sea", "grey"];
        let new_note = |t: u8| NewNote {
            text: texts[usize::from(t) % 3].to_string(),
            note_type: NoteType::Fact,
            scope: Scope::Project,
            tags: Vec::new(),
            importance: None,
        };
        let note_id = |memory: &Memory, n: u8| {
            memory
                .notes
                .get(usize::from(n))
                .map_or("none".to_string(), |n| n.id.clone())
        };
        let goal_id = |memory: &Memory, g: u8| {
            memory
                .goals
                .get(usize::from(g))
                .map_or("none".to_string(), |g| g.id.clone())
        };
        // Errors are part of the test: a failing call changes and records nothing.
        match *op {
            MemoryOp::Write(t) => {
                let _ = memory.write_note("p", new_note(t), *now, ids);
            }
            MemoryOp::WriteMany(count) => {
                let _ = memory.write_notes("p", (0..count).map(new_note).collect(), *now, ids);
            }
            MemoryOp::Update(n, text, importance, user) => {
                let id = note_id(memory, n);
                let patch = NotePatch {
                    text: text.map(|t| texts[usize::from(t)].to_string()),
                    note_type: None,
                    tags: None,
                    importance,
                };
                let by = if user {
                    Origin::User
                } else {
                    Origin::Agent("a".into())
                };
                let _ = memory.update_note_by(&id, patch, &by, *now);
            }
            MemoryOp::Delete(n) => {
                let id = note_id(memory, n);
                let _ = memory.delete_note(&id, &Origin::User, *now);
            }
            MemoryOp::Restore(n) => {
                let id = note_id(memory, n);
                let _ = memory.restore_note(&id, *now);
            }
            MemoryOp::Purge => {
                memory.purge_expired(*now);
            }
            MemoryOp::Remove(n) => {
                let id = note_id(memory, n);
                let _ = memory.remove_note(&id);
            }
            MemoryOp::Bedside => {
                memory.ensure_bedside("p", *now, ids);
            }
            MemoryOp::Evolve(t) => {
                let _ = memory.evolve_bedside("p", texts[usize::from(t)], *now, ids);
            }
            MemoryOp::CreateGoal(t) => {
                let goal = NewGoal {
                    title: texts[usize::from(t)].to_string(),
                    description: None,
                    status: None,
                    progress: None,
                };
                let _ = memory.create_goal("p", goal, *now, ids);
            }
            MemoryOp::UpdateGoal(g, title, done) => {
                let id = goal_id(memory, g);
                let patch = GoalPatch {
                    title: title.map(|t| texts[usize::from(t)].to_string()),
                    description: None,
                    status: done.map(|d| {
                        if d {
                            GoalStatus::Completed
                        } else {
                            GoalStatus::Active
                        }
                    }),
                    progress: None,
                };
                let _ = memory.update_goal(&id, patch, *now);
            }
            MemoryOp::Watch(name, reason, high) => {
                let watch = NewWatch {
                    name: ["Mara", "MARA", "Jonas"][usize::from(name)].to_string(),
                    entity_type: EntityType::Character,
                    reason: texts[usize::from(reason)].to_string(),
                    priority: high.map(|h| if h { Priority::High } else { Priority::Low }),
                };
                let _ = memory.watch_entity("p", watch, *now, ids);
            }
            // A moment later, or long enough later for deleted notes to expire.
            MemoryOp::Later(long) => *now += if long { TRASH_RETENTION_MS + 1 } else { 1 },
        }
    }
}
