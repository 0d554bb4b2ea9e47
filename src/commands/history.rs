//! [`History`]: one undo history for the writer and the agents.
//!
//! Each applied command becomes an [`Entry`] holding its text [`Effect`]s (change and
//! inverse per chapter), its origin, description, time and tool call id. Entries form
//! groups: an agent turn is one group (opened with [`History::begin_group`]); the writer's
//! typing joins the previous entry's group while edits come less than [`TYPING_GAP_MS`] apart
//! and touch adjacent text (prosemirror-history's rule); [`History::close_group`] ends a
//! group explicitly.
//!
//! **Undo and redo** work on the newest run of entries of one group, last in, first out, so
//! every inverse applies to exactly the text it was made for: undoing everything restores
//! the original text and redoing everything restores the final text.
//!
//! **Origin-scoped undo** ([`History::undo_scoped`], "undo the agent's last change") reverts
//! the newest group of an origin even when other edits came after it. Each inverse is
//! transformed over every later change, and those over it, so later edits survive: text the
//! writer typed after the agent's change stays as it is. The revert is itself a new entry, so
//! plain undo brings the agent's change back, and redo right after re-applies it.
//!
//! **Free files** (the `plans/` and `notes/` files of the project's `data/` view) are in the
//! same history: an entry holds each free file it wrote as a [`FileEffect`] (the file before
//! and after), and undo and redo put them back with the chapter changes of the same entries,
//! through a [`FileSet`] the session's files implement. A file is put back only while it is
//! still as the history left it: undo restores the file as it was before the entry when the
//! file is still the entry's `after` (redo the reverse). When a later write of another origin
//! changed it since (only an origin-scoped undo can see that: plain undo and redo are last in,
//! first out), the later content stays and the path is reported in [`Moved::kept`]: undoing an
//! agent never throws away what the writer, or another agent, wrote after it.
//!
//! **New chapters** an agent created are in the history too: an entry holds each chapter it
//! added as a [`ChapterEffect`], added (empty) before its text effects fill it. Undo takes the
//! text back and then the chapter out of the list; redo puts it back and then its text, all or
//! nothing. An origin-scoped undo takes the chapter out only when nothing is left in it (text
//! typed there since by others keeps it).
//!
//! The history is bounded by a number of groups and an estimate of its memory; the oldest
//! groups are dropped first.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{Origin, OriginFilter};
use crate::env::IdSource;
pub use crate::error::HistoryError;
use crate::project::changeset::{ChangeError, ChangeSet};
use crate::project::{EditError, Project};

/// Writer edits less than this far apart (and adjacent) share one undo group.
pub const TYPING_GAP_MS: u64 = 500;

/// One chapter change and its inverse.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(rename = "HistoryEffect")]
pub struct Effect {
    /// Chapter id.
    pub chapter: String,
    /// The change as applied.
    #[ts(as = "Vec<crate::project::changeset::Op>")]
    pub change: ChangeSet,
    /// The change that undoes it (applies to the text right after `change`).
    #[ts(as = "Vec<crate::project::changeset::Op>")]
    pub inverse: ChangeSet,
}

impl Effect {
    /// Bytes held: both change sets (their structs included) and the chapter id.
    fn weight(&self) -> usize {
        self.change.weight() + self.inverse.weight() + self.chapter.len()
    }
}

/// A free file as the history keeps it (the file of the `data/` view without its path).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileState {
    /// Its text.
    pub content: String,
    /// When it was written (ms).
    pub mod_time: u64,
    /// Who wrote it: `human`, `agent:<name>` or `import`.
    pub origin: String,
}

impl FileState {
    fn weight(&self) -> usize {
        self.content.len() + self.origin.len()
    }
}

/// One free file's change: the file before and after it (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct FileEffect {
    /// Its path in the `data/` view (such as `plans/ch3.md`).
    pub path: String,
    /// The file before the change (`None`: it did not exist).
    pub before: Option<FileState>,
    /// The file after the change (`None`: it was removed).
    pub after: Option<FileState>,
}

impl FileEffect {
    /// Bytes held: the struct, the path and both files' strings.
    fn weight(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.path.len()
            + self.before.as_ref().map_or(0, FileState::weight)
            + self.after.as_ref().map_or(0, FileState::weight)
    }
}

/// A chapter an entry added or took out. An entry adds its chapters (empty) before its text
/// effects fill them, and takes its chapters out after its text effects emptied them, so undo
/// and redo replay the chapter list and the text in one order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ChapterEffect {
    /// Chapter id.
    pub chapter: String,
    /// Its 0-based place in the chapter list (where it was added, or where it was).
    pub index: usize,
    /// Its title.
    pub title: String,
    /// True: the entry added it; false: the entry took it out.
    pub added: bool,
}

impl ChapterEffect {
    fn weight(&self) -> usize {
        std::mem::size_of::<Self>() + self.chapter.len() + self.title.len()
    }

    /// The same chapter the other way round (an addition for a removal).
    fn reversed(&self) -> Self {
        Self {
            added: !self.added,
            ..self.clone()
        }
    }
}

/// The free files undo and redo put back (the session's files implement it).
pub trait FileSet {
    /// Whether the file at `path` is exactly `state` now (`None`: there is none).
    fn is(&self, path: &str, state: Option<&FileState>) -> bool;
    /// Whether `state` could be put at `path` now: removing always can; a file cannot where
    /// a folder is (files lie under the path) or under a file.
    fn fits(&self, path: &str, state: Option<&FileState>) -> bool;
    /// Put `state` at `path` (`None`: remove the file).
    fn put(&mut self, path: &str, state: Option<FileState>);
}

/// What kind of entry this is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(rename = "HistoryEntryKind")]
pub enum EntryKind {
    /// A command's edits.
    Edit,
    /// An origin-scoped undo of the entries `targets`.
    Revert {
        /// Ids of the reverted entries.
        targets: Vec<String>,
    },
    /// Re-applies what revert `revert` took back (redo after an origin-scoped undo).
    Restore {
        /// The revert entry's id.
        revert: String,
        /// Ids of the restored entries.
        targets: Vec<String>,
    },
}

/// One recorded command, as it is stored and exported (the page's `history` shows it as a
/// `HistoryEntry`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(rename = "HistoryRecord")]
pub struct Entry {
    /// Entry id.
    pub id: String,
    /// Group id: entries of one group are undone together.
    pub group: String,
    /// Who made it.
    pub origin: Origin,
    /// What it did, for people.
    pub description: String,
    /// When (ms since the epoch).
    pub timestamp_ms: u64,
    /// The tool call that produced it, if any.
    pub tool_call_id: Option<String>,
    /// The command (tool) name, if any.
    pub command: Option<String>,
    /// Edit, revert or restore.
    pub kind: EntryKind,
    /// Its text changes, in the order applied.
    pub effects: Vec<Effect>,
    /// Its free-file changes, in the order applied (absent in entries stored before free files
    /// were undoable).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<FileEffect>>", optional)]
    pub files: Vec<FileEffect>,
    /// The chapters it added or took out (see [`ChapterEffect`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<ChapterEffect>>", optional)]
    pub chapters: Vec<ChapterEffect>,
    /// The revert entry that currently takes this entry back, if any.
    pub reverted_by: Option<String>,
    /// Position in the undo stack (increasing), so stored entries load in order.
    #[serde(default)]
    pub seq: u64,
}

impl Entry {
    /// A new edit entry; `group` is filled in when recorded.
    pub fn edit(
        id: String,
        origin: Origin,
        description: impl Into<String>,
        timestamp_ms: u64,
        effects: Vec<Effect>,
    ) -> Self {
        Self {
            id,
            group: String::new(),
            origin,
            description: description.into(),
            timestamp_ms,
            tool_call_id: None,
            command: None,
            kind: EntryKind::Edit,
            effects,
            files: Vec::new(),
            chapters: Vec::new(),
            reverted_by: None,
            seq: 0,
        }
    }

    /// Whether it changed anything: a chapter's text, the chapter list or a free file.
    pub fn is_empty(&self) -> bool {
        self.effects.is_empty() && self.files.is_empty() && self.chapters.is_empty()
    }

    /// Bytes held (estimated from lengths, so it is the same after a round trip): the entry
    /// itself, its strings and its effects. `reverted_by` changes after recording and is left
    /// out so the running total stays exact.
    fn weight(&self) -> usize {
        let text = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        let origin = match &self.origin {
            Origin::Agent(name) | Origin::Remote(name) => name.len(),
            _ => 0,
        };
        let targets = match &self.kind {
            EntryKind::Edit => 0,
            EntryKind::Revert { targets } | EntryKind::Restore { targets, .. } => {
                targets.iter().map(String::len).sum::<usize>()
                    + targets.len() * std::mem::size_of::<String>()
            }
        };
        std::mem::size_of::<Self>()
            + self.effects.len() * std::mem::size_of::<Effect>()
            + self.effects.iter().map(Effect::weight).sum::<usize>()
            - self.effects.len() * 2 * std::mem::size_of::<ChangeSet>()
            + self.files.iter().map(FileEffect::weight).sum::<usize>()
            + self
                .chapters
                .iter()
                .map(ChapterEffect::weight)
                .sum::<usize>()
            + self.id.len()
            + self.group.len()
            + self.description.len()
            + text(&self.tool_call_id)
            + text(&self.command)
            + origin
            + targets
    }
}

/// How a new entry joins groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    /// Join the group the entry names (an agent run's tree group, whatever the entry's
    /// origin), else the open group of the same origin, else start a group of its own.
    Command,
    /// The writer typing: join the previous entry's group if it is the writer's, recent and
    /// adjacent; else start a new group.
    Typing,
}

/// Bounds on the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct HistoryLimits {
    /// Most undo groups kept.
    pub max_groups: usize,
    /// Most bytes (estimated) kept across undo and redo.
    pub max_bytes: usize,
}

impl Default for HistoryLimits {
    fn default() -> Self {
        Self {
            max_groups: 1000,
            max_bytes: 64 * 1024 * 1024,
        }
    }
}

/// A chapter change that undo, redo or a revert applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// Chapter id.
    pub chapter: String,
    /// The change applied.
    pub change: ChangeSet,
    /// Its inverse (from the text after it back to the text before it): what the change
    /// removed, for those that look at what an edit took away (the watched-entity monitor).
    pub inverse: ChangeSet,
    /// The chapter's version after it.
    pub version: u64,
}

/// What undo, redo or an origin-scoped undo did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Moved {
    /// The chapter changes applied, in order.
    pub applied: Vec<Applied>,
    /// The free files put back (written, or removed), by path.
    pub files: Vec<String>,
    /// The free files left as they are because a later write changed them since the undone
    /// (or redone) entries: the later content wins.
    pub kept: Vec<String>,
    /// Chapters put back into the chapter list (ids).
    pub added: Vec<String>,
    /// Chapters taken out of the chapter list (ids).
    pub removed: Vec<String>,
}

impl Moved {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.applied.is_empty()
            && self.files.is_empty()
            && self.added.is_empty()
            && self.removed.is_empty()
    }
}

/// What [`History::forget_chapter`] took out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Forgotten {
    /// Entries (undo or redo) dropped because they touched only the forgotten chapter.
    pub dropped: usize,
    /// Entries that keep their effects on other chapters but lost those on it.
    pub trimmed: usize,
}

impl Forgotten {
    /// Whether anything changed.
    pub fn changed(&self) -> bool {
        self.dropped + self.trimmed > 0
    }
}

/// The undo history of one project.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct History {
    undo: Vec<Entry>,
    /// Runs of entries, each in the order they were applied; the last run is redone first.
    redo: Vec<Vec<Entry>>,
    /// The group open for an origin (an agent turn), if any.
    open: Option<(String, Origin)>,
    /// More origins whose entries join the open group (the sub-agents of an agent run).
    #[serde(default)]
    open_members: Vec<Origin>,
    /// When true the newest group accepts no more typing.
    sealed: bool,
    limits: HistoryLimits,
    /// The next entry's `seq`.
    #[serde(default)]
    next_seq: u64,
    #[serde(skip)]
    bytes: usize,
    /// How many undo groups there are (runs of entries of one group), kept as entries come
    /// and go so that a keystroke does not count them all.
    #[serde(skip)]
    groups: usize,
    #[serde(skip)]
    journal: Journal,
}

/// What changed since the last save: undo entries to (re)write and to delete. Bookkeeping
/// for persistence, not history state: two histories are equal whatever their journals.
#[derive(Debug, Clone, Default)]
struct Journal {
    dirty: std::collections::BTreeSet<String>,
    removed: std::collections::BTreeSet<String>,
    /// The state apart from the undo entries (redo runs, open group, seal) changed.
    state: bool,
    /// The state [`History::take_changes`] last reported, with `next_seq` 0 when the newest
    /// undo entry gives it: typing into one group changes only `next_seq`, which a load
    /// derives from the newest entry, so a keystroke writes no state record.
    reported: Option<HistoryState>,
}

impl PartialEq for Journal {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// The history's state apart from its undo entries (which are stored one record each): the
/// redo runs, the open group and the limits.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HistoryState {
    /// Runs that can be redone.
    pub redo: Vec<Vec<Entry>>,
    /// The open group and its origin.
    pub open: Option<(String, Origin)>,
    /// More origins whose entries join the open group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<Origin>>", optional)]
    pub open_members: Vec<Origin>,
    /// Whether the newest group accepts more typing.
    pub sealed: bool,
    /// Bounds.
    pub limits: HistoryLimits,
    /// The next entry's `seq`.
    pub next_seq: u64,
}

/// The changes to save since the last [`History::take_changes`].
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryChanges {
    /// Undo entries to write (new, moved back by redo, or re-marked).
    pub put: Vec<Entry>,
    /// Ids of undo entries to delete (undone or dropped by the bounds).
    pub delete: Vec<String>,
    /// The rest of the state, when it changed.
    pub state: Option<HistoryState>,
}

impl History {
    /// An empty history with these limits.
    pub fn with_limits(limits: HistoryLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// Entries that can be undone, oldest first.
    pub fn entries(&self) -> &[Entry] {
        &self.undo
    }

    /// Runs that can be redone; the last is redone first.
    pub fn redo_runs(&self) -> &[Vec<Entry>] {
        &self.redo
    }

    /// Whether undo would do something.
    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    /// Whether redo would do something.
    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// How many undo groups there are.
    pub fn undo_groups(&self) -> usize {
        self.groups
    }

    /// Count the undo groups (runs of entries of one group) of this device's changes:
    /// changes received from other devices are kept only to map positions through, and
    /// do not count against the limit.
    fn count_groups(&self) -> usize {
        let mut count = 0;
        let mut last: Option<&str> = None;
        for entry in &self.undo {
            if last != Some(entry.group.as_str()) {
                count += usize::from(entry.origin.is_local());
                last = Some(&entry.group);
            }
        }
        count
    }

    /// Whether the undo stack holds changes received from other devices: plain undo then
    /// reverts this device's newest group while keeping them ([`OriginFilter::Local`]).
    pub fn has_remote(&self) -> bool {
        self.undo.iter().any(|e| !e.origin.is_local())
    }

    /// Record a change received from another device (its entry's origin is remote): a group
    /// of its own, never undone, kept so that undoing this device's earlier changes maps
    /// through it. The redo runs go (they were made for the text before it), and the
    /// writer's typing group stays open only if nothing else came between.
    pub fn record_remote(&mut self, mut entry: Entry, ids: &dyn IdSource) {
        self.journal.state = true;
        entry.group = ids.next_id();
        self.clear_redo();
        self.sealed = true;
        self.bytes += entry.weight();
        self.push_undo(entry);
        self.enforce_limits();
    }

    /// Estimated memory held, in bytes.
    pub fn memory_bytes(&self) -> usize {
        self.bytes
    }

    /// The limits.
    pub fn limits(&self) -> HistoryLimits {
        self.limits
    }

    /// Recompute derived state after deserializing.
    pub fn restore_derived(&mut self) {
        self.bytes = self.undo.iter().map(Entry::weight).sum::<usize>()
            + self.redo.iter().flatten().map(Entry::weight).sum::<usize>();
        self.groups = self.count_groups();
    }

    /// Open a group for `origin` (an agent turn); entries of that origin recorded with
    /// [`Grouping::Command`] join it until [`History::close_group`].
    pub fn begin_group(&mut self, origin: Origin, ids: &dyn IdSource) -> String {
        self.journal.state = true;
        let id = ids.next_id();
        self.open = Some((id.clone(), origin));
        self.open_members.clear();
        id
    }

    /// Let the entries of `origin` join the open group too (a sub-agent of the run that
    /// opened it: the whole run is one undo group, and each entry keeps its own origin, so
    /// an origin-scoped undo can still take back one sub-agent's changes).
    pub fn join_group(&mut self, origin: Origin) {
        if self.open.as_ref().is_some_and(|(_, o)| *o != origin)
            && !self.open_members.contains(&origin)
        {
            self.journal.state = true;
            self.open_members.push(origin);
        }
    }

    /// The open group, if any.
    pub fn open_group(&self) -> Option<&(String, Origin)> {
        self.open.as_ref()
    }

    /// Close the open group, and keep the newest group from absorbing more typing.
    pub fn close_group(&mut self) {
        self.journal.state = true;
        self.open = None;
        self.open_members.clear();
        self.sealed = true;
    }

    /// Seal the newest group: the writer's next typing starts a group of its own.
    pub fn seal(&mut self) {
        if !self.sealed {
            self.journal.state = true;
            self.sealed = true;
        }
    }

    /// Record an applied entry. Clears redo.
    pub fn record(&mut self, mut entry: Entry, grouping: Grouping, ids: &dyn IdSource) {
        self.journal.state = true;
        entry.group = match grouping {
            Grouping::Command if !entry.group.is_empty() => entry.group.clone(),
            Grouping::Command => match &self.open {
                Some((group, origin))
                    if *origin == entry.origin || self.open_members.contains(&entry.origin) =>
                {
                    group.clone()
                }
                _ => ids.next_id(),
            },
            Grouping::Typing => match self.typing_group(&entry) {
                Some(group) => group,
                None => ids.next_id(),
            },
        };
        // Only the writer's typing can be typed onto: after anything else the newest group
        // is sealed already (so the end of an agent's turn has no seal to write).
        self.sealed = !(entry.origin == Origin::User && entry.kind == EntryKind::Edit);
        self.clear_redo();
        self.bytes += entry.weight();
        self.push_undo(entry);
        self.enforce_limits();
    }

    /// Push onto the undo stack, numbering it and noting it for the next save.
    fn push_undo(&mut self, mut entry: Entry) {
        entry.seq = self.next_seq;
        self.next_seq += 1;
        self.journal.removed.remove(&entry.id);
        self.journal.dirty.insert(entry.id.clone());
        if entry.origin.is_local()
            && self
                .undo
                .last()
                .is_none_or(|last| last.group != entry.group)
        {
            self.groups += 1;
        }
        self.undo.push(entry);
    }

    /// Note that an entry left the undo stack.
    fn note_removed(&mut self, id: &str) {
        self.journal.dirty.remove(id);
        self.journal.removed.insert(id.to_string());
    }

    /// Take what changed since the last call: the records to write and delete.
    pub fn take_changes(&mut self) -> HistoryChanges {
        let mut journal = std::mem::take(&mut self.journal);
        let state = if journal.state {
            let state = self.state();
            let mut seen = state.clone();
            // `from_parts` takes the newest entry's seq + 1 when it is more.
            if self.undo.last().is_some_and(|e| e.seq + 1 == seen.next_seq) {
                seen.next_seq = 0;
            }
            let changed = journal.reported.as_ref() != Some(&seen);
            journal.reported = Some(seen);
            changed.then_some(state)
        } else {
            None
        };
        self.journal.reported = journal.reported.take();
        // The entries written since are (nearly always) the newest: look from the top and
        // stop once all are found, so a keystroke does not walk the whole history.
        let mut put: Vec<Entry> = Vec::with_capacity(journal.dirty.len());
        if !journal.dirty.is_empty() {
            for entry in self.undo.iter().rev() {
                if journal.dirty.contains(&entry.id) {
                    put.push(entry.clone());
                    if put.len() == journal.dirty.len() {
                        break;
                    }
                }
            }
            put.reverse();
        }
        HistoryChanges {
            put,
            delete: journal.removed.into_iter().collect(),
            state,
        }
    }

    /// Everything, for a full save: every undo entry and the state.
    pub fn snapshot(&self) -> (Vec<Entry>, HistoryState) {
        (self.undo.clone(), self.state())
    }

    /// The state apart from the undo entries (what the history's state record holds).
    pub fn state(&self) -> HistoryState {
        HistoryState {
            redo: self.redo.clone(),
            open: self.open.clone(),
            open_members: self.open_members.clone(),
            sealed: self.sealed,
            limits: self.limits,
            next_seq: self.next_seq,
        }
    }

    /// Rebuild a history from stored undo entries (in any order) and its state.
    pub fn from_parts(mut entries: Vec<Entry>, state: HistoryState) -> Self {
        entries.sort_by_key(|e| e.seq);
        let next_seq = entries.last().map_or(0, |e| e.seq + 1).max(state.next_seq);
        let mut history = Self {
            undo: entries,
            redo: state.redo,
            open: state.open,
            open_members: state.open_members,
            sealed: state.sealed,
            limits: state.limits,
            next_seq,
            bytes: 0,
            groups: 0,
            journal: Journal::default(),
        };
        history.restore_derived();
        history
    }

    fn typing_group(&self, entry: &Entry) -> Option<String> {
        let top = self.undo.last()?;
        if self.sealed
            || entry.origin != Origin::User
            || top.origin != Origin::User
            || top.kind != EntryKind::Edit
            || entry.timestamp_ms.saturating_sub(top.timestamp_ms) > TYPING_GAP_MS
        {
            return None;
        }
        let (prev, next) = match (top.effects.as_slice(), entry.effects.as_slice()) {
            ([.., prev], [next]) => (prev, next),
            _ => return None,
        };
        if prev.chapter != next.chapter {
            return None;
        }
        let (prev_start, prev_end) = prev.change.touched_range()?;
        let (start, end) = next.change.touched_range_before()?;
        (start <= prev_end && end >= prev_start).then(|| top.group.clone())
    }

    fn clear_redo(&mut self) {
        let freed: usize = self.redo.iter().flatten().map(Entry::weight).sum();
        self.bytes = self.bytes.saturating_sub(freed);
        self.redo.clear();
    }

    fn enforce_limits(&mut self) {
        while !self.undo.is_empty()
            && (self.undo_groups() > self.limits.max_groups.max(1)
                || self.bytes > self.limits.max_bytes)
        {
            let group = self.undo[0].group.clone();
            let n = self.undo.iter().take_while(|e| e.group == group).count();
            // Never drop the newest group: it is what the writer just did.
            if n == self.undo.len() {
                break;
            }
            // The oldest group's run of entries.
            let dropped: Vec<Entry> = self.undo.drain(..n).collect();
            if dropped.iter().any(|e| e.origin.is_local()) {
                self.groups = self.groups.saturating_sub(1);
            }
            for entry in dropped {
                self.bytes = self.bytes.saturating_sub(entry.weight());
                self.note_removed(&entry.id);
            }
        }
    }

    /// Forget chapter `chapter` (it was deleted): every effect on it goes from the undo
    /// entries and the redo runs, and an entry left with no effect (it touched only that
    /// chapter, and no free file) goes altogether, as does a redo run left empty. What remains undoes and
    /// redoes exactly as before in every other chapter: each chapter's effects form their own
    /// chain (an inverse applies to the text right after its change in that chapter), which
    /// no other chapter's effects take part in. Entries that were reverted by a dropped entry
    /// are no longer marked reverted. The newest group is sealed (typing after a deletion
    /// starts a new group).
    pub fn forget_chapter(&mut self, chapter: &str) -> Forgotten {
        let mut forgotten = Forgotten::default();
        let mut dropped: std::collections::BTreeSet<String> = Default::default();
        let mut kept = Vec::with_capacity(self.undo.len());
        for mut entry in std::mem::take(&mut self.undo) {
            let before = entry.effects.len() + entry.chapters.len();
            entry.effects.retain(|fx| fx.chapter != chapter);
            entry.chapters.retain(|fx| fx.chapter != chapter);
            if entry.effects.len() + entry.chapters.len() == before {
                kept.push(entry);
            } else if entry.is_empty() {
                forgotten.dropped += 1;
                dropped.insert(entry.id);
            } else {
                forgotten.trimmed += 1;
                self.journal.dirty.insert(entry.id.clone());
                kept.push(entry);
            }
        }
        self.undo = kept;
        self.groups = self.count_groups();
        for id in &dropped {
            self.note_removed(id);
        }
        for run in &mut self.redo {
            run.retain_mut(|entry| {
                let before = entry.effects.len() + entry.chapters.len();
                entry.effects.retain(|fx| fx.chapter != chapter);
                entry.chapters.retain(|fx| fx.chapter != chapter);
                if entry.effects.len() + entry.chapters.len() == before {
                    return true;
                }
                if entry.is_empty() {
                    forgotten.dropped += 1;
                    dropped.insert(entry.id.clone());
                    false
                } else {
                    forgotten.trimmed += 1;
                    true
                }
            });
        }
        self.redo.retain(|run| !run.is_empty());
        if forgotten.changed() {
            let by_dropped = |e: &Entry| {
                e.reverted_by
                    .as_ref()
                    .is_some_and(|by| dropped.contains(by))
            };
            for entry in self.undo.iter_mut().filter(|e| by_dropped(e)) {
                entry.reverted_by = None;
                self.journal.dirty.insert(entry.id.clone());
            }
            for entry in self.redo.iter_mut().flatten().filter(|e| by_dropped(e)) {
                entry.reverted_by = None;
            }
            self.restore_derived();
        }
        self.sealed = true;
        self.journal.state = true;
        forgotten
    }

    /// Undo the newest group's newest run of entries: its chapter changes and its free files
    /// together, all or nothing (a chapter change that does not fit fails the whole undo and
    /// changes nothing). Returns what changed (nothing when there is nothing to undo).
    pub fn undo(
        &mut self,
        project: &mut Project,
        files: &mut dyn FileSet,
    ) -> Result<Moved, HistoryError> {
        self.journal.state = true;
        let Some(group) = self.undo.last().map(|e| e.group.clone()) else {
            return Ok(Moved::default());
        };
        let n = self
            .undo
            .iter()
            .rev()
            .take_while(|e| e.group == group)
            .count();
        let start = self.undo.len() - n;
        let changes: Vec<(String, ChangeSet)> = self.undo[start..]
            .iter()
            .rev()
            .flat_map(|e| e.effects.iter().rev())
            .map(|fx| (fx.chapter.clone(), fx.inverse.clone()))
            .collect();
        let plan = plan_files(
            self.undo[start..]
                .iter()
                .rev()
                .flat_map(|e| e.files.iter().rev())
                .map(|fx| (fx.path.as_str(), fx.after.as_ref(), fx.before.as_ref())),
            files,
        );
        let replayed = if self.undo[start..].iter().any(|e| !e.chapters.is_empty()) {
            let steps = self.undo[start..].iter().rev().flat_map(|e| {
                let reinsert = e.chapters.iter().rev().filter(|fx| !fx.added);
                let text = e.effects.iter().rev();
                let take_out = e.chapters.iter().rev().filter(|fx| fx.added);
                reinsert
                    .map(|fx| Step::Add(fx.clone()))
                    .chain(text.map(|fx| Step::Text(fx.chapter.clone(), fx.inverse.clone())))
                    .chain(take_out.map(|fx| Step::Remove(fx.chapter.clone())))
            });
            replay(project, steps.collect())?
        } else {
            Replayed::text(apply_all(project, &changes)?)
        };
        let (files_moved, kept) = put_files(files, plan);
        // The newest group's run of entries.
        let run: Vec<Entry> = self.undo.drain(start..).collect();
        self.groups = self.groups.saturating_sub(1);
        for entry in &run {
            self.note_removed(&entry.id);
        }
        for entry in run.iter().rev() {
            match &entry.kind {
                EntryKind::Edit => {}
                EntryKind::Revert { targets } => self.mark(targets, None),
                EntryKind::Restore { revert, targets } => self.mark(targets, Some(revert)),
            }
        }
        self.redo.push(run);
        self.sealed = true;
        Ok(replayed.moved(files_moved, kept))
    }

    /// Redo the last undone run: its chapter changes and free files together, all or
    /// nothing. Returns what changed (nothing when there is nothing to redo).
    pub fn redo(
        &mut self,
        project: &mut Project,
        files: &mut dyn FileSet,
    ) -> Result<Moved, HistoryError> {
        self.journal.state = true;
        let Some(run) = self.redo.last() else {
            return Ok(Moved::default());
        };
        let changes: Vec<(String, ChangeSet)> = run
            .iter()
            .flat_map(|e| e.effects.iter())
            .map(|fx| (fx.chapter.clone(), fx.change.clone()))
            .collect();
        let plan = plan_files(
            run.iter()
                .flat_map(|e| e.files.iter())
                .map(|fx| (fx.path.as_str(), fx.before.as_ref(), fx.after.as_ref())),
            files,
        );
        let replayed = if run.iter().any(|e| !e.chapters.is_empty()) {
            let steps = run.iter().flat_map(|e| {
                let add = e.chapters.iter().filter(|fx| fx.added);
                let text = e.effects.iter();
                let take_out = e.chapters.iter().filter(|fx| !fx.added);
                add.map(|fx| Step::Add(fx.clone()))
                    .chain(text.map(|fx| Step::Text(fx.chapter.clone(), fx.change.clone())))
                    .chain(take_out.map(|fx| Step::Remove(fx.chapter.clone())))
            });
            replay(project, steps.collect())?
        } else {
            Replayed::text(apply_all(project, &changes)?)
        };
        let (files_moved, kept) = put_files(files, plan);
        let run = self.redo.pop().unwrap_or_default();
        for entry in &run {
            match &entry.kind {
                EntryKind::Edit => {}
                EntryKind::Revert { targets } => self.mark(targets, Some(&entry.id)),
                EntryKind::Restore { targets, .. } => self.mark(targets, None),
            }
        }
        for entry in run {
            self.push_undo(entry);
        }
        self.sealed = true;
        Ok(replayed.moved(files_moved, kept))
    }

    fn mark(&mut self, targets: &[String], by: Option<&String>) {
        for entry in self.undo.iter_mut() {
            if targets.contains(&entry.id) {
                entry.reverted_by = by.cloned();
                self.journal.dirty.insert(entry.id.clone());
            }
        }
    }

    /// The group an origin-scoped undo with `filter` would revert: the newest group with an
    /// edit of a matching origin that is not reverted already.
    pub fn scoped_target(&self, filter: &OriginFilter) -> Option<&str> {
        self.undo
            .iter()
            .rev()
            .find(|e| {
                e.kind == EntryKind::Edit
                    && e.reverted_by.is_none()
                    && !e.is_empty()
                    && filter.matches(&e.origin)
            })
            .map(|e| e.group.as_str())
    }

    /// Origin-scoped undo: revert the newest group of an origin matching `filter`, keeping
    /// every later change. Recorded as a revert entry by `by`; redo right after re-applies
    /// the reverted change. Returns what changed (nothing when nothing matches).
    ///
    /// A free file the reverted entries wrote goes back to what it was before them only if it
    /// is still as they left it. If a later entry of another origin (or of another group)
    /// wrote it since, the later content stays and the path is reported in [`Moved::kept`]:
    /// as with text typed after an agent's change, what came later is never thrown away. (If
    /// another origin wrote it *between* two writes of the reverted entries, it goes back to
    /// that other origin's content: only the reverted entries' last writes are taken back.)
    pub fn undo_scoped(
        &mut self,
        project: &mut Project,
        files: &mut dyn FileSet,
        filter: &OriginFilter,
        by: Origin,
        now_ms: u64,
        ids: &dyn IdSource,
    ) -> Result<Moved, HistoryError> {
        self.journal.state = true;
        let Some(group) = self.scoped_target(filter).map(str::to_string) else {
            return Ok(Moved::default());
        };
        let first = self
            .undo
            .iter()
            .position(|e| e.group == group)
            .unwrap_or_default();
        // Within the group, only the entries of a matching origin (a run's group holds the
        // entries of its sub-agents too, each under its own origin).
        let is_target = |e: &Entry| {
            e.group == group
                && e.kind == EntryKind::Edit
                && e.reverted_by.is_none()
                && filter.matches(&e.origin)
        };
        let targets: Vec<String> = self.undo[first..]
            .iter()
            .filter(|e| is_target(e))
            .map(|e| e.id.clone())
            .collect();
        let description = self.undo[first..]
            .iter()
            .find(|e| is_target(e))
            .map(|e| format!("Undo {}: {}", e.origin, e.description))
            .unwrap_or_default();

        // Per chapter, the effects from the first target on, in order, flagged as targets.
        let (mut chapters, mut all): (Vec<&str>, Vec<(bool, &Effect)>) = Default::default();
        for entry in &self.undo[first..] {
            let target = is_target(entry);
            for fx in &entry.effects {
                chapters.push(&fx.chapter);
                all.push((target, fx));
            }
        }
        let mut changes: Vec<(String, ChangeSet)> = Vec::new();
        let mut by_chapter: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, chapter) in chapters.iter().enumerate() {
            by_chapter.entry(*chapter).or_default().push(i);
        }
        for (chapter, at) in by_chapter {
            let effects: Vec<(bool, &Effect)> = at.iter().map(|&i| all[i]).collect();
            if !effects.iter().any(|(target, _)| *target) {
                continue;
            }
            let revert = revert_change(&effects).map_err(|source| HistoryError::Mismatch {
                chapter: chapter.to_string(),
                source,
            })?;
            if !revert.is_identity() {
                changes.push((chapter.to_string(), revert));
            }
        }
        // Per free file, the effects from the first target on, in order, flagged as targets.
        let mut per_file: Vec<(&str, Vec<(bool, &FileEffect)>)> = Vec::new();
        for entry in &self.undo[first..] {
            let target = is_target(entry);
            for fx in &entry.files {
                match per_file.iter_mut().find(|(path, _)| *path == fx.path) {
                    Some((_, list)) => list.push((target, fx)),
                    None => per_file.push((fx.path.as_str(), vec![(target, fx)])),
                }
            }
        }
        let mut file_reverts: Vec<FileEffect> = Vec::new();
        let mut kept: Vec<String> = Vec::new();
        for (path, list) in &per_file {
            if !list.iter().any(|(target, _)| *target) {
                continue;
            }
            // The reverted entries' trailing writes of the file (none: a later one is
            // another's).
            let trailing: Vec<&FileEffect> = list
                .iter()
                .rev()
                .take_while(|(target, _)| *target)
                .map(|(_, fx)| *fx)
                .collect();
            let (Some(last), Some(earliest)) = (trailing.first(), trailing.last()) else {
                kept.push(path.to_string());
                continue;
            };
            let (now, to) = (last.after.as_ref(), earliest.before.as_ref());
            if now == to {
                continue;
            }
            if files.is(path, now) && files.fits(path, to) {
                file_reverts.push(FileEffect {
                    path: path.to_string(),
                    before: now.cloned(),
                    after: to.cloned(),
                });
            } else {
                kept.push(path.to_string());
            }
        }
        let effects = effects_of(project, &changes)?;
        let applied = apply_all(project, &changes)?;
        for fx in &file_reverts {
            files.put(&fx.path, fx.after.clone());
        }
        // A chapter the reverted entries added goes when the revert left it empty; one the
        // writer (or another origin) wrote in since keeps that text, and stays.
        let added: Vec<&ChapterEffect> = self.undo[first..]
            .iter()
            .filter(|e| is_target(e))
            .flat_map(|e| e.chapters.iter().filter(|fx| fx.added))
            .collect();
        let mut chapter_reverts: Vec<ChapterEffect> = Vec::new();
        for fx in added {
            let Some(index) = project.chapter_index(&fx.chapter) else {
                continue;
            };
            if project.chapters[index].len_chars() > 0 {
                continue;
            }
            if let Some(chapter) = project.detach_chapter(index) {
                chapter_reverts.push(ChapterEffect {
                    chapter: chapter.id,
                    index,
                    title: chapter.title,
                    added: false,
                });
            }
        }
        let revert_id = ids.next_id();
        let restore = Entry {
            id: ids.next_id(),
            group: ids.next_id(),
            origin: by.clone(),
            description: description.replacen("Undo", "Redo", 1),
            timestamp_ms: now_ms,
            tool_call_id: None,
            command: None,
            kind: EntryKind::Restore {
                revert: revert_id.clone(),
                targets: targets.clone(),
            },
            effects: effects
                .iter()
                .rev()
                .map(|fx| Effect {
                    chapter: fx.chapter.clone(),
                    change: fx.inverse.clone(),
                    inverse: fx.change.clone(),
                })
                .collect(),
            files: file_reverts
                .iter()
                .rev()
                .map(|fx| FileEffect {
                    path: fx.path.clone(),
                    before: fx.after.clone(),
                    after: fx.before.clone(),
                })
                .collect(),
            chapters: chapter_reverts
                .iter()
                .rev()
                .map(ChapterEffect::reversed)
                .collect(),
            reverted_by: None,
            seq: 0,
        };
        let revert = Entry {
            id: revert_id.clone(),
            group: ids.next_id(),
            origin: by,
            description,
            timestamp_ms: now_ms,
            tool_call_id: None,
            command: None,
            kind: EntryKind::Revert {
                targets: targets.clone(),
            },
            effects,
            files: file_reverts.clone(),
            chapters: chapter_reverts.clone(),
            reverted_by: None,
            seq: 0,
        };
        let files_moved = file_reverts.into_iter().map(|fx| fx.path).collect();
        self.mark(&targets, Some(&revert_id));
        self.clear_redo();
        self.bytes += revert.weight() + restore.weight();
        self.push_undo(revert);
        self.redo.push(vec![restore]);
        self.sealed = true;
        self.enforce_limits();
        Ok(Moved {
            applied,
            files: files_moved,
            kept,
            added: Vec::new(),
            removed: chapter_reverts.into_iter().map(|fx| fx.chapter).collect(),
        })
    }
}

/// One step of replaying entries that change the chapter list.
enum Step {
    /// Apply a change to a chapter's text.
    Text(String, ChangeSet),
    /// Put an empty chapter into the list.
    Add(ChapterEffect),
    /// Take an empty chapter out of the list.
    Remove(String),
}

/// What [`replay`] (or [`apply_all`]) did.
struct Replayed {
    applied: Vec<Applied>,
    added: Vec<String>,
    removed: Vec<String>,
}

impl Replayed {
    fn text(applied: Vec<Applied>) -> Self {
        Self {
            applied,
            added: Vec::new(),
            removed: Vec::new(),
        }
    }

    fn moved(self, files: Vec<String>, kept: Vec<String>) -> Moved {
        Moved {
            applied: self.applied,
            files,
            kept,
            added: self.added,
            removed: self.removed,
        }
    }
}

/// Carry out `steps` in order, all or nothing: on a copy of the project, which replaces it
/// only when every step fitted. A chapter is added only where its id is free and removed
/// only when empty (the steps before emptied it).
fn replay(project: &mut Project, steps: Vec<Step>) -> Result<Replayed, HistoryError> {
    let mut work = project.clone();
    let mut done = Replayed::text(Vec::new());
    for step in steps {
        match step {
            Step::Text(chapter, change) => {
                let mismatch = |source| HistoryError::Mismatch {
                    chapter: chapter.clone(),
                    source,
                };
                let text = work
                    .chapter(&chapter)
                    .ok_or_else(|| HistoryError::MissingChapter(chapter.clone()))?
                    .text();
                let inverse = change.invert(text).map_err(mismatch)?;
                let version = work.apply_change(&chapter, &change).map_err(|e| match e {
                    EditError::BadChange { source, .. } => mismatch(source),
                    _ => HistoryError::MissingChapter(chapter.clone()),
                })?;
                done.applied.push(Applied {
                    chapter,
                    change,
                    inverse,
                    version,
                });
            }
            Step::Add(fx) => {
                work.insert_chapter(
                    fx.index,
                    crate::project::Chapter::new(fx.chapter.clone(), fx.title, ""),
                )
                .map_err(|_| HistoryError::ChapterList(fx.chapter.clone()))?;
                done.removed.retain(|id| *id != fx.chapter);
                done.added.push(fx.chapter);
            }
            Step::Remove(chapter) => {
                let index = work
                    .chapter_index(&chapter)
                    .ok_or_else(|| HistoryError::MissingChapter(chapter.clone()))?;
                if work.chapters[index].len_chars() > 0 {
                    return Err(HistoryError::ChapterList(chapter));
                }
                work.detach_chapter(index);
                done.added.retain(|id| *id != chapter);
                done.removed.push(chapter);
            }
        }
    }
    *project = work;
    Ok(done)
}

/// What a file move would do: per path, the file it goes to, or `None` when it stays
/// (the path is then reported as kept).
type FilePlan = Vec<(String, Option<Option<FileState>>)>;

/// Plan putting back the free files of a run of effects, given as `(path, from, to)` in the
/// order they are taken back (newest first for undo, oldest first for redo). Per path, the
/// file must still be the first effect's `from` (as the history left it); it then goes to
/// the last effect's `to`. A path whose file changed since, or that could not take the file
/// now, stays as it is. Nothing changes here: [`put_files`] carries the plan out.
fn plan_files<'a>(
    moves: impl Iterator<Item = (&'a str, Option<&'a FileState>, Option<&'a FileState>)>,
    files: &dyn FileSet,
) -> FilePlan {
    let mut per_path: Vec<(&str, Option<&FileState>, Option<&FileState>)> = Vec::new();
    for (path, from, to) in moves {
        match per_path.iter_mut().find(|(p, _, _)| *p == path) {
            Some((_, _, last)) => *last = to,
            None => per_path.push((path, from, to)),
        }
    }
    per_path
        .into_iter()
        .filter(|(_, from, to)| from != to)
        .map(|(path, from, to)| {
            let fits = files.is(path, from) && files.fits(path, to);
            (path.to_string(), fits.then(|| to.cloned()))
        })
        .collect()
}

/// Carry out a [`plan_files`] plan: returns the paths put back and the paths kept.
fn put_files(files: &mut dyn FileSet, plan: FilePlan) -> (Vec<String>, Vec<String>) {
    let (mut moved, mut kept) = (Vec::new(), Vec::new());
    for (path, to) in plan {
        match to {
            Some(state) => {
                files.put(&path, state);
                moved.push(path);
            }
            None => kept.push(path),
        }
    }
    (moved, kept)
}

/// The change that reverts the target effects of one chapter, applying to its current text.
/// `effects` runs from the first target to the newest change, in order.
///
/// Walking back from the newest, each target's inverse is transformed over the later
/// non-target changes, and those are transformed over the inverse, so that earlier targets
/// see the later changes as if the later targets had never happened.
fn revert_change(effects: &[(bool, &Effect)]) -> Result<ChangeSet, ChangeError> {
    let mut tail: VecDeque<ChangeSet> = VecDeque::new();
    let mut reverts: Vec<ChangeSet> = Vec::new();
    for (target, fx) in effects.iter().rev() {
        if !*target {
            tail.push_front(fx.change.clone());
            continue;
        }
        let mut inverse = fx.inverse.clone();
        for later in tail.iter_mut() {
            let later_without = later.transform_side(&inverse, false)?;
            inverse = inverse.transform_side(later, true)?;
            *later = later_without;
        }
        reverts.push(inverse);
    }
    let mut total: Option<ChangeSet> = None;
    for revert in reverts {
        total = Some(match total {
            None => revert,
            Some(done) => done.compose(&revert)?,
        });
    }
    Ok(total.unwrap_or_default())
}

/// The effects (with inverses) that `changes` would have, computed so that nothing changes
/// if a later change does not fit: a chapter changed again later in `changes` on a scratch
/// copy of its text, else on its text itself, only read (a change that inverts applies).
fn effects_of(
    project: &Project,
    changes: &[(String, ChangeSet)],
) -> Result<Vec<Effect>, HistoryError> {
    let mut scratch: std::collections::BTreeMap<&str, crate::project::Text> =
        std::collections::BTreeMap::new();
    let mut effects = Vec::new();
    for (k, (chapter, change)) in changes.iter().enumerate() {
        let mismatch = |source| HistoryError::Mismatch {
            chapter: chapter.clone(),
            source,
        };
        let inverse = match scratch.get_mut(chapter.as_str()) {
            Some(rope) => {
                let inverse = change.invert(rope).map_err(mismatch)?;
                change.apply(rope).map_err(mismatch)?;
                inverse
            }
            None => {
                let text = project
                    .chapter(chapter)
                    .ok_or_else(|| HistoryError::MissingChapter(chapter.clone()))?
                    .text();
                let inverse = change.invert(text).map_err(mismatch)?;
                if changes[k + 1..].iter().any(|(c, _)| c == chapter) {
                    let mut rope = text.clone();
                    change.apply(&mut rope).map_err(mismatch)?;
                    scratch.insert(chapter.as_str(), rope);
                }
                inverse
            }
        };
        effects.push(Effect {
            chapter: chapter.clone(),
            change: change.clone(),
            inverse,
        });
    }
    Ok(effects)
}

/// Apply changes in order, all or nothing: they are checked on scratch copies first. The
/// editor's positions follow each change ([`Project::apply_change`]).
fn apply_all(
    project: &mut Project,
    changes: &[(String, ChangeSet)],
) -> Result<Vec<Applied>, HistoryError> {
    let effects = effects_of(project, changes)?;
    let mut applied = Vec::with_capacity(changes.len());
    for ((chapter_id, change), effect) in changes.iter().zip(effects) {
        let version = project
            .apply_change(chapter_id, change)
            .map_err(|e| match e {
                EditError::BadChange { source, .. } => HistoryError::Mismatch {
                    chapter: chapter_id.clone(),
                    source,
                },
                _ => HistoryError::MissingChapter(chapter_id.clone()),
            })?;
        applied.push(Applied {
            chapter: chapter_id.clone(),
            change: change.clone(),
            inverse: effect.inverse,
            version,
        });
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::SequentialIds;
    use crate::project::Chapter;

    /// Free files in a map; `blocked` paths refuse a file (as a folder there would).
    #[derive(Default)]
    struct Map {
        files: std::collections::BTreeMap<String, FileState>,
        blocked: Vec<String>,
    }

    impl FileSet for Map {
        fn is(&self, path: &str, state: Option<&FileState>) -> bool {
            self.files.get(path) == state
        }
        fn fits(&self, path: &str, state: Option<&FileState>) -> bool {
            state.is_none() || !self.blocked.iter().any(|p| p == path)
        }
        fn put(&mut self, path: &str, state: Option<FileState>) {
            match state {
                Some(s) => self.files.insert(path.to_string(), s),
                None => self.files.remove(path),
            };
        }
    }

    fn file(content: &str, origin: &str, at: u64) -> FileState {
        FileState {
            content: content.into(),
            mod_time: at,
            origin: origin.into(),
        }
    }

    fn project() -> Project {
        Project::new("p", "P", vec![Chapter::new("c1", "One", "abc")])
    }

    fn text(p: &Project) -> String {
        p.chapter("c1").unwrap().text().to_string()
    }

    /// Apply an entry's effects to the project and files, then record it.
    fn apply(
        h: &mut History,
        p: &mut Project,
        files: &mut Map,
        mut entry: Entry,
        ids: &SequentialIds,
    ) {
        for fx in &entry.effects {
            p.apply_change(&fx.chapter, &fx.change).unwrap();
        }
        for fx in &entry.files {
            assert!(files.is(&fx.path, fx.before.as_ref()));
            files.put(&fx.path, fx.after.clone());
        }
        entry.group = String::new();
        h.record(entry, Grouping::Command, ids);
    }

    /// An agent entry that writes `path` (from what is there now) and inserts `ins` at the
    /// start of chapter c1.
    #[allow(clippy::too_many_arguments)]
    fn agent_write(
        p: &Project,
        files: &Map,
        id: &str,
        agent: &str,
        path: &str,
        content: &str,
        ins: Option<&str>,
        at: u64,
    ) -> Entry {
        let origin = Origin::Agent(agent.into());
        let mut effects = Vec::new();
        if let Some(ins) = ins {
            let rope = p.chapter("c1").unwrap().text().clone();
            let change = ChangeSet::replace(rope.len_chars(), 0, 0, ins).unwrap();
            let inverse = change.invert(&rope).unwrap();
            effects.push(Effect {
                chapter: "c1".into(),
                change,
                inverse,
            });
        }
        let mut entry = Entry::edit(id.into(), origin, format!("Write {path}"), at, effects);
        entry.files = vec![FileEffect {
            path: path.into(),
            before: files.files.get(path).cloned(),
            after: Some(file(content, &format!("agent:{agent}"), at)),
        }];
        entry
    }

    #[test]
    fn undo_and_redo_take_back_and_bring_again_a_file_with_the_chapter_edits() {
        let ids = SequentialIds::new("g");
        let (mut h, mut p, mut files) = (History::default(), project(), Map::default());
        h.begin_group(Origin::Agent("architect".into()), &ids);
        // A file-only entry (the plan) and an entry with a file and a chapter edit, one group.
        let plan = agent_write(&p, &files, "e1", "architect", "plans/a.md", "plan", None, 5);
        apply(&mut h, &mut p, &mut files, plan, &ids);
        let edit = agent_write(
            &p,
            &files,
            "e2",
            "architect",
            "plans/a.md",
            "plan 2",
            Some("X"),
            6,
        );
        apply(&mut h, &mut p, &mut files, edit, &ids);
        h.close_group();
        assert_eq!(h.undo_groups(), 1);
        let after = files.files.clone();
        assert_eq!(text(&p), "Xabc");

        let moved = h.undo(&mut p, &mut files).unwrap();
        assert_eq!(moved.files, ["plans/a.md"]);
        assert!(moved.kept.is_empty());
        assert_eq!(moved.applied.len(), 1);
        assert!(files.files.is_empty(), "the file the group created is gone");
        assert_eq!(text(&p), "abc");
        assert!(!h.can_undo());

        let moved = h.redo(&mut p, &mut files).unwrap();
        assert_eq!(moved.files, ["plans/a.md"]);
        assert_eq!(files.files, after);
        assert_eq!(text(&p), "Xabc");

        // Through a save and a load (the entries as stored records), undo still works.
        let (entries, state) = h.snapshot();
        let json: Vec<String> = entries
            .iter()
            .map(|e| serde_json::to_string(e).unwrap())
            .collect();
        let entries: Vec<Entry> = json
            .iter()
            .map(|j| serde_json::from_str(j).unwrap())
            .collect();
        let mut loaded = History::from_parts(entries, state);
        assert_eq!(loaded, h);
        assert_eq!(loaded.memory_bytes(), h.memory_bytes());
        loaded.undo(&mut p, &mut files).unwrap();
        assert!(files.files.is_empty());
        assert_eq!(text(&p), "abc");
    }

    #[test]
    fn the_weight_counts_the_files() {
        let ids = SequentialIds::new("g");
        let (mut h, mut p, mut files) = (History::default(), project(), Map::default());
        let big = "x".repeat(10_000);
        let entry = agent_write(&p, &files, "e1", "a", "notes/big.md", &big, None, 1);
        apply(&mut h, &mut p, &mut files, entry, &ids);
        assert!(h.memory_bytes() > 10_000, "{}", h.memory_bytes());
        // The newest group is never dropped, but an older one goes when the bytes run out.
        h.limits.max_bytes = 15_000;
        h.close_group();
        let entry = agent_write(&p, &files, "e2", "b", "notes/big.md", &big, None, 2);
        apply(&mut h, &mut p, &mut files, entry, &ids);
        assert_eq!(h.entries().len(), 1);
        assert_eq!(h.entries()[0].id, "e2");
    }

    #[test]
    fn a_failing_chapter_change_leaves_the_files_as_they_were() {
        let ids = SequentialIds::new("g");
        let (mut h, mut p, mut files) = (History::default(), project(), Map::default());
        let entry = agent_write(&p, &files, "e1", "a", "plans/a.md", "plan", Some("X"), 1);
        apply(&mut h, &mut p, &mut files, entry, &ids);
        // The chapter changed behind the history's back: its inverse no longer fits.
        p.apply_change("c1", &ChangeSet::replace(4, 0, 0, "YY").unwrap())
            .unwrap();
        let before = files.files.clone();
        assert!(h.undo(&mut p, &mut files).is_err());
        assert_eq!(files.files, before, "all or nothing");
        assert_eq!(text(&p), "YYXabc");
        assert!(h.can_undo());
    }

    #[test]
    fn scoped_undo_reverts_a_file_only_while_it_is_as_the_agent_left_it() {
        let ids = SequentialIds::new("g");
        let (mut h, mut p, mut files) = (History::default(), project(), Map::default());
        let a = agent_write(&p, &files, "a1", "a", "plans/a.md", "a's plan", None, 1);
        apply(&mut h, &mut p, &mut files, a, &ids);
        h.close_group();
        let b = agent_write(&p, &files, "b1", "b", "plans/b.md", "b's plan", None, 2);
        apply(&mut h, &mut p, &mut files, b, &ids);
        h.close_group();
        // The writer rewrites b's file afterwards.
        let mut w = agent_write(&p, &files, "w1", "x", "plans/b.md", "mine", None, 3);
        w.origin = Origin::User;
        w.files[0].after = Some(file("mine", "human", 3));
        apply(&mut h, &mut p, &mut files, w, &ids);
        h.close_group();

        // Undoing agent b keeps the writer's later content, and says so.
        let b_only = OriginFilter::Exact(Origin::Agent("b".into()));
        let moved = h
            .undo_scoped(&mut p, &mut files, &b_only, Origin::User, 9, &ids)
            .unwrap();
        assert!(moved.files.is_empty());
        assert_eq!(moved.kept, ["plans/b.md"]);
        assert_eq!(files.files["plans/b.md"].content, "mine");
        assert!(h
            .entries()
            .iter()
            .any(|e| e.id == "b1" && e.reverted_by.is_some()));

        // Undoing agent a (untouched since) removes the file it created, as a revert entry:
        // plain undo brings it back, redo takes it away again.
        let a_only = OriginFilter::Exact(Origin::Agent("a".into()));
        let moved = h
            .undo_scoped(&mut p, &mut files, &a_only, Origin::User, 10, &ids)
            .unwrap();
        assert_eq!(moved.files, ["plans/a.md"]);
        assert!(!files.files.contains_key("plans/a.md"));
        let back = h.undo(&mut p, &mut files).unwrap();
        assert_eq!(back.files, ["plans/a.md"]);
        assert_eq!(files.files["plans/a.md"].content, "a's plan");
        h.redo(&mut p, &mut files).unwrap();
        assert!(!files.files.contains_key("plans/a.md"));
        // Nothing of a's is left to revert.
        let moved = h
            .undo_scoped(&mut p, &mut files, &a_only, Origin::User, 11, &ids)
            .unwrap();
        assert!(moved.is_empty(), "a is reverted already: {moved:?}");
    }

    #[test]
    fn a_file_changed_outside_the_history_or_with_no_room_is_kept() {
        let ids = SequentialIds::new("g");
        let (mut h, mut p, mut files) = (History::default(), project(), Map::default());
        let a = agent_write(&p, &files, "a1", "a", "plans/a.md", "one", None, 1);
        apply(&mut h, &mut p, &mut files, a, &ids);
        // Changed behind the history's back (a merge of another tab's save, say).
        files.put("plans/a.md", Some(file("other", "human", 2)));
        let moved = h.undo(&mut p, &mut files).unwrap();
        assert_eq!(moved.kept, ["plans/a.md"]);
        assert_eq!(files.files["plans/a.md"].content, "other");
        // Redo cannot put it back where it does not fit either.
        files.files.clear();
        files.blocked.push("plans/a.md".into());
        let moved = h.redo(&mut p, &mut files).unwrap();
        assert_eq!(moved.kept, ["plans/a.md"]);
        assert!(files.files.is_empty());
    }

    #[test]
    fn stored_entries_without_files_still_load_and_file_entries_survive_forgetting_a_chapter() {
        let ids = SequentialIds::new("g");
        let old = r#"{"id":"e1","group":"g1","origin":"user","description":"Typing","timestamp_ms":1,"tool_call_id":null,"command":null,"kind":{"type":"edit"},"effects":[],"reverted_by":null,"seq":0}"#;
        let entry: Entry = serde_json::from_str(old).unwrap();
        assert!(entry.files.is_empty());
        // Text-only entries are stored as before (no `files` key).
        assert!(!serde_json::to_string(&entry).unwrap().contains("files"));

        let (mut h, mut p, mut files) = (History::default(), project(), Map::default());
        let e = agent_write(&p, &files, "e1", "a", "plans/a.md", "plan", Some("X"), 1);
        apply(&mut h, &mut p, &mut files, e, &ids);
        let forgotten = h.forget_chapter("c1");
        assert_eq!(forgotten.trimmed, 1);
        assert_eq!(forgotten.dropped, 0);
        let moved = h.undo(&mut p, &mut files).unwrap();
        assert_eq!(moved.files, ["plans/a.md"]);
        assert!(moved.applied.is_empty());
    }
}
