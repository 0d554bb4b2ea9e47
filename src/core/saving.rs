//! Saving an open project: one save in flight per project, and nothing dropped until it is
//! written.
//!
//! A mutation marks what it changed as pending ([`crate::persist::pending`]) and then waits
//! in [`Core::flush`] until everything it marked is committed, or a save that held it has
//! failed (then the page hears `storage_error` and the pending records stay, to be written
//! by the next save). One save at a time per project: a mutation that arrives while a save is
//! in flight waits for it and then saves whatever is still pending, its own changes and any
//! that a failed save left, in one batch.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use serde::Serialize;

use super::results::ProjectSummary;
use super::Core;
use crate::env::IdSource;
use crate::persist::merge::{self, Ours};
use crate::persist::pending::{self, Append, Include, Key, Pending, Stored};
use crate::persist::{ChangeRecord, Feeds, Loaded, SyncRecord};
use crate::project::UiState;
use crate::replica::{self, Replica};
use crate::session::Session;
use crate::store::{StoreError, Table};
use ts_rs::TS;

/// Wakes the tasks waiting for a project's save in flight.
#[derive(Default)]
pub(super) struct Notify {
    epoch: Cell<u64>,
    wakers: RefCell<Vec<Waker>>,
}

impl Notify {
    /// A future that resolves at the next [`Notify::notify_all`].
    pub(super) fn wait(self: &Rc<Self>) -> Wait {
        Wait {
            notify: Rc::clone(self),
            epoch: self.epoch.get(),
        }
    }

    pub(super) fn notify_all(&self) {
        self.epoch.set(self.epoch.get() + 1);
        for waker in self.wakers.borrow_mut().drain(..) {
            waker.wake();
        }
    }
}

pub(super) struct Wait {
    notify: Rc<Notify>,
    epoch: u64,
}

impl Future for Wait {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.notify.epoch.get() != self.epoch {
            return Poll::Ready(());
        }
        self.notify.wakers.borrow_mut().push(cx.waker().clone());
        Poll::Pending
    }
}

/// How many times a save merges and tries again when other writers keep getting there first
/// (then it reports `storage_error` and keeps everything pending, for the next save).
const MAX_REBASES: usize = 8;

/// How many recent changes each chapter's change feed keeps in memory (`get_chapter
/// {since}`, and the tags that make a resent writer change a duplicate).
pub const FEED_LEN: usize = 1_000;

/// An open project: its session and what saving needs to know.
pub(super) struct Open {
    pub(super) session: Session,
    pub(super) created_ms: u64,
    /// Each chapter's recent changes, oldest first (at most [`FEED_LEN`]).
    pub(super) feeds: ChangeFeeds,
    /// What is still to be written.
    pub(super) pending: Pending,
    /// What the store holds of the project's chapters.
    pub(super) stored: Stored,
    /// The parts of the UI state that are saved at once when they change (the rest, such
    /// as the cursor, is saved lazily): see [`ui_essentials`].
    pub(super) ui_saved: UiEssentials,
    /// What was wrong with the stored data when the project was loaded.
    pub(super) problems: Vec<String>,
    /// A save of this project is in flight.
    saving: bool,
    /// Save attempts that ended, and the last one that failed: what it covered (up to
    /// which pending seq) and why.
    attempts: u64,
    failed: Option<(u64, u64, StoreError)>,
    notify: Rc<Notify>,
    /// The project as a Yjs document.
    pub(super) replica: Replica,
    /// Updates this device made that were not yet sent to the sync server, oldest first
    /// (see [`Open::queue`]).
    pub(super) outbox: Vec<Vec<u8>>,
    /// How many more updates the outbox holds than it has entries: while offline, they are
    /// folded into one now and then.
    pub(super) folded: usize,
    /// What mutations of the unshared project touched that is not mirrored into its document
    /// yet, oldest first: mirrored when the core is idle ([`super::Core::idle`]), and before
    /// anything reads the document or saves its updates ([`Open::mirror_deferred`]).
    unmirrored: Vec<super::Touched>,
}

/// While offline, the outbox is folded into one update when it holds this many.
const OUTBOX_MOST: usize = 256;

/// A project loaded with more stored Yjs updates than this has them folded into one.
const SYNC_RECORDS_MOST: usize = 200;

/// The UI state that matters enough to save at once: the active chapter, the panel, zen
/// mode and which highlights there are (not where: positions only follow edits).
pub(super) type UiEssentials = (Option<String>, String, bool, Vec<(String, String)>);

/// The [`UiEssentials`] of a UI state.
pub(super) fn ui_essentials(ui: &UiState) -> UiEssentials {
    (
        ui.active_chapter.clone(),
        ui.panel.clone(),
        ui.zen_mode,
        ui.highlights
            .iter()
            .map(|h| (h.chapter.clone(), h.style.clone()))
            .collect(),
    )
}

impl Open {
    /// A project just written whole (created or imported), with its document: nothing
    /// pending.
    pub(super) fn new(session: Session, created_ms: u64, stored: Stored, replica: Replica) -> Self {
        Self {
            replica,
            outbox: Vec::new(),
            folded: 0,
            unmirrored: Vec::new(),
            ui_saved: ui_essentials(&session.project.ui),
            session,
            created_ms,
            feeds: ChangeFeeds::default(),
            pending: Pending::new(),
            stored,
            problems: Vec::new(),
            saving: false,
            attempts: 0,
            failed: None,
            notify: Rc::new(Notify::default()),
        }
    }

    /// A project as loaded from the store (chapters it could not load whole are
    /// checkpointed by the next save).
    ///
    /// Its Yjs document is the stored updates, brought up to what the project holds (all of
    /// it, the first time a project is opened with sync); many stored updates are folded
    /// into one by the next save.
    pub(super) fn loaded(loaded: Loaded, ids: &dyn IdSource) -> Self {
        let id = loaded.session.project.id.clone();
        let client = replica::client_id(ids);
        let updates: Vec<Vec<u8>> = loaded.sync.iter().map(|(_, u)| u.clone()).collect();
        let mut problems = loaded.problems;
        let mut replica = Replica::load(&updates, client).unwrap_or_else(|e| {
            problems.push(format!(
                "the project's sync document could not be read ({e}); it was made again from the project"
            ));
            Replica::new(client)
        });
        let update = replica.reconcile(&loaded.session, &id);
        let mut open = Self::new(loaded.session, loaded.created_ms, loaded.stored, replica);
        open.feeds = ChangeFeeds::of(loaded.feeds);
        for chapter in loaded.repair {
            open.pending.mark(Key::Chapter(chapter));
        }
        open.problems = problems;
        if loaded.sync.len() > SYNC_RECORDS_MOST {
            let snapshot = open.replica.snapshot();
            open.pending
                .append(Append::Sync(SyncRecord::new(&id, &snapshot, ids)));
            for (key, _) in loaded.sync {
                open.pending.append(Append::SyncDelete(key));
            }
        } else if let Some(update) = &update {
            open.pending
                .append(Append::Sync(SyncRecord::new(&id, update, ids)));
        }
        if let Some(update) = update {
            open.queue(update);
        }
        open
    }

    /// Leave what a mutation touched to be mirrored into the document later (see
    /// [`Open::mirror_deferred`]).
    pub(super) fn defer_mirror(&mut self, touched: super::Touched) {
        self.unmirrored.push(touched);
    }

    /// Whether mutations left anything to be mirrored later.
    pub(super) fn has_deferred(&self) -> bool {
        !self.unmirrored.is_empty()
    }

    /// Mirror into the document, in order, what mutations left to be mirrored later: their
    /// updates are then in the document, queued to send and pending (lazily) to be saved.
    pub(super) fn mirror_deferred(&mut self, ids: &dyn IdSource) {
        for mut touched in std::mem::take(&mut self.unmirrored) {
            super::mirror_now(self, &mut touched, ids);
        }
    }

    /// Queue an update this device made, to send once saved (folding the queue into one
    /// update when it grows long: a writer offline for hours keeps one update, not each
    /// keystroke's).
    pub(super) fn queue(&mut self, update: Vec<u8>) {
        self.outbox.push(update);
        if self.outbox.len() >= OUTBOX_MOST {
            if let Ok(one) = yrs::merge_updates_v1(&self.outbox) {
                self.folded += self.outbox.len() - 1;
                self.outbox = vec![one];
            }
        }
    }

    /// The updates made here not yet sent: queued ones, folded ones counted.
    pub(super) fn unsent(&self) -> usize {
        self.outbox.len()
            + if self.outbox.is_empty() {
                0
            } else {
                self.folded
            }
    }

    /// Take the queued updates to send (the folded count goes with them).
    pub(super) fn take_outbox(&mut self) -> (Vec<Vec<u8>>, usize) {
        let folded = std::mem::take(&mut self.folded);
        (std::mem::take(&mut self.outbox), folded)
    }

    /// Add applied changes to their chapters' feeds.
    pub(super) fn record_changes(&mut self, changes: &[ChangeRecord]) {
        for change in changes {
            self.feeds.push(change);
        }
    }

    /// The changes of a chapter after version `since`, if the feed still holds every one of
    /// them (`None` when some are gone, or `since` is not a version the chapter had).
    pub(super) fn changes_since(&self, chapter: &str, since: u64) -> Option<Vec<&ChangeRecord>> {
        let current = self.session.project.chapter(chapter)?.version();
        if since > current {
            return None;
        }
        if since == current {
            return Some(Vec::new());
        }
        let feed = self.feeds.get(chapter)?;
        let later: Vec<&ChangeRecord> = feed.iter().filter(|c| c.version > since).collect();
        let complete = later.len() as u64 == current - since
            && later
                .iter()
                .zip(since + 1..)
                .all(|(c, version)| c.version == version);
        complete.then_some(later)
    }

    /// The writer's change with this tag in a chapter's feed, if it was applied.
    pub(super) fn tagged(&self, chapter: &str, tag: &str) -> Option<&ChangeRecord> {
        self.feeds.tagged(chapter, tag)
    }

    /// Whether anything is still to be written (lazily or not).
    pub(super) fn unsaved(&self) -> bool {
        !self.pending.is_empty()
    }
}

/// Clears a project's "save in flight" mark and wakes its waiters, even if the save's
/// future is dropped half-way.
struct InFlight<'a> {
    core: &'a Core,
    project: String,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let notify = self.core.projects.try_update(&self.project, |open| {
            open.saving = false;
            open.attempts += 1;
            Rc::clone(&open.notify)
        });
        if let Some(notify) = notify {
            notify.notify_all();
        }
    }
}

enum Step {
    Done,
    Wait(Rc<Notify>, u64),
    Save(crate::store::Batch, pending::Receipt),
    Failed(StoreError),
}

impl Core {
    /// Write what project `project` has pending, up to now (lazy changes too when `lazy`):
    /// returns when it is committed, or with the error of the save that failed to write it
    /// (already reported to the page as `storage_error`; it stays pending).
    pub(super) async fn flush(&self, project: &str, lazy: bool) -> Result<(), StoreError> {
        // A shared project's document updates are written with each save: they are sent once
        // saved.
        let include = Include {
            lazy,
            sync: lazy || self.sync.get(project).is_some(),
        };
        if include.sync {
            // The document's updates go with this save: all of them.
            self.mirror_deferred(project);
        }
        let Some(target) = self.projects.read(project, |open| open.pending.seq()) else {
            return Ok(());
        };
        let mut waited_from: Option<u64> = None;
        loop {
            let step = {
                let Ok(mut open) = self.projects.open_mut(project) else {
                    return Ok(());
                };
                let open = &mut *open;
                match waited_from {
                    // A save that ended while we waited and held our changes failed.
                    Some(from) if open.attempts > from => match &open.failed {
                        Some((attempt, covered, error))
                            if *attempt > from && *covered >= target =>
                        {
                            return Err(error.clone());
                        }
                        _ => {}
                    },
                    _ => {}
                }
                if !open.pending.waiting(target, include) {
                    Step::Done
                } else if open.saving {
                    Step::Wait(Rc::clone(&open.notify), open.attempts)
                } else {
                    let now = self.env.clock.now_ms();
                    match pending::batch(
                        &open.session,
                        &open.pending,
                        &open.stored,
                        open.created_ms,
                        now,
                        include,
                    ) {
                        Ok((batch, receipt)) => {
                            open.saving = true;
                            Step::Save(batch, receipt)
                        }
                        Err(e) => Step::Failed(e),
                    }
                }
            };
            match step {
                Step::Done => return Ok(()),
                Step::Failed(e) => {
                    self.save_failed(project, &e);
                    return Err(e);
                }
                Step::Wait(notify, attempts) => {
                    waited_from = Some(attempts);
                    notify.wait().await;
                }
                Step::Save(batch, receipt) => {
                    let guard = InFlight {
                        core: self,
                        project: project.to_string(),
                    };
                    // Whether anything but the audit log changed (other tabs reload only then).
                    let mut changed = batch.tables().iter().any(|t| *t != Table::Audit);
                    let (mut batch, mut receipt) = (batch, receipt);
                    let mut rebases = 0;
                    // Another writer got there first: merge what this core has not saved into
                    // what it wrote, and save that instead (never overwrite it).
                    let result = loop {
                        match self.env.store.commit(batch).await {
                            Err(StoreError::Conflict(_)) if rebases < MAX_REBASES => {
                                rebases += 1;
                                if let Err(e) = self.rebase(project).await {
                                    break Err(match e {
                                        crate::error::Error::Store(e) => *e,
                                        other => StoreError::Failed(other.to_string()),
                                    });
                                }
                                let rebuilt = self.projects.read(project, |open| {
                                    pending::batch(
                                        &open.session,
                                        &open.pending,
                                        &open.stored,
                                        open.created_ms,
                                        self.env.clock.now_ms(),
                                        include,
                                    )
                                });
                                let Some(rebuilt) = rebuilt else {
                                    break Ok(());
                                };
                                match rebuilt {
                                    Ok((b, r)) => {
                                        changed = true;
                                        batch = b;
                                        receipt = r;
                                    }
                                    Err(e) => break Err(e),
                                }
                            }
                            other => break other,
                        }
                    };
                    self.projects.update(project, |open| match &result {
                        Ok(()) => {
                            open.pending.committed(&receipt);
                            open.stored.apply(&receipt);
                        }
                        Err(e) => open.failed = Some((open.attempts + 1, receipt.seq, e.clone())),
                    });
                    drop(guard);
                    match result {
                        Ok(()) => self.saved(project, changed),
                        Err(e) => {
                            self.save_failed(project, &e);
                            return Err(e);
                        }
                    }
                }
            }
        }
    }

    /// The store refused a save because another writer changed the project since this core
    /// last read it: read it again and merge what this core has not saved into it
    /// ([`crate::persist::merge`]); the caller then saves the result. The page hears
    /// `project_reloaded` (with `rebased: true`, and the chapters kept as copies and what the
    /// other writer's newer version won over, if any).
    async fn rebase(&self, project: &str) -> Result<(), crate::error::Error> {
        let loaded = self.load_session(project).await?;
        let now = self.env.clock.now_ms();
        let their_sync: Vec<Vec<u8>> = loaded
            .iter()
            .flat_map(|l| l.sync.iter().map(|(_, u)| u.clone()))
            .collect();
        let summary = {
            let Ok(mut open) = self.projects.open_mut(project) else {
                return Ok(());
            };
            let open = &mut *open;
            // The document is made to hold the merge below: first what it has yet to mirror
            // of this core's changes (mirrored after, it would hold them twice).
            open.mirror_deferred(self.env.ids.as_ref());
            let merged = match loaded {
                Some(theirs) => merge::merge(
                    Ours {
                        session: &open.session,
                        pending: &open.pending,
                        stored: &open.stored,
                        feeds: open.feeds.all(),
                    },
                    theirs,
                    self.env.ids.as_ref(),
                    now,
                ),
                None => {
                    // Deleted elsewhere: unsaved work is never dropped, so this core's copy
                    // is written whole again.
                    let _ = open.session.history.take_changes();
                    let mut pending = Pending::everything(&open.session);
                    for append in open.pending.appends() {
                        pending.append(append.clone());
                    }
                    merge::Merged {
                        session: open.session.clone(),
                        stored: Stored::default(),
                        pending,
                        feeds: open.feeds.all().clone(),
                        copies: Vec::new(),
                        overridden: vec![
                            "the project was deleted elsewhere; this tab's copy was written again"
                                .into(),
                        ],
                    }
                }
            };
            let seq = open.pending.seq();
            let held = open.pending.take_held();
            open.session = merged.session;
            open.stored = merged.stored;
            open.pending = merged.pending.settled(seq);
            open.pending.restore_held(held);
            open.feeds = ChangeFeeds::of(merged.feeds);
            open.ui_saved = ui_essentials(&open.session.project.ui);
            // The document holds what the other writer stored of it too, then the merge.
            open.replica.absorb(&their_sync);
            if let Some(update) = open.replica.reconcile(&open.session, project) {
                let ids = self.env.ids.as_ref();
                open.pending
                    .append(Append::Sync(SyncRecord::new(project, &update, ids)));
                open.queue(update);
            }
            ProjectReloadedEvent {
                project: project.to_string(),
                summary: super::open_summary(open),
                rebased: Some(true),
                copies: (!merged.copies.is_empty()).then_some(merged.copies),
                overridden: (!merged.overridden.is_empty()).then_some(merged.overridden),
            }
        };
        self.emit(summary);
        Ok(())
    }

    /// Tell the page a save failed; what it held stays pending.
    /// A save of project `project` landed (`changed`: see [`SavedEvent`]): the pages hear
    /// it, and what was saved may now be sent.
    pub(super) fn saved(&self, project: &str, changed: bool) {
        self.emit(SavedEvent {
            project: project.to_string(),
            at: self.env.clock.now_ms(),
            changed,
        });
        self.sync.wake(project);
    }

    pub(super) fn save_failed(&self, project: &str, error: &StoreError) {
        let code = match error {
            StoreError::Quota(_) => "quota_exceeded",
            _ => "storage_failed",
        };
        self.emit(StorageErrorEvent {
            project: project.to_string(),
            code,
            message: format!(
                "{error}. Your work is kept in memory; it will be saved when storage works again."
            ),
        });
    }
}

/// The change feeds as kept in memory: the newest [`FEED_LEN`] changes of each chapter, and
/// the version of each tagged one by chapter and tag, so that a writer's tagged change finds
/// whether it was applied already without reading its chapter's feed.
#[derive(Default)]
pub(super) struct ChangeFeeds {
    feeds: Feeds,
    /// Chapter → tag → the version of the newest change in the feed with that tag.
    tags: BTreeMap<String, BTreeMap<String, u64>>,
}

impl ChangeFeeds {
    /// The newest [`FEED_LEN`] changes of each chapter of `feeds`.
    pub(super) fn of(mut feeds: Feeds) -> Self {
        let mut tags: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for (chapter, feed) in feeds.iter_mut() {
            while feed.len() > FEED_LEN {
                feed.pop_front();
            }
            for change in feed.iter() {
                if let Some(tag) = &change.tag {
                    tags.entry(chapter.clone())
                        .or_default()
                        .insert(tag.clone(), change.version);
                }
            }
        }
        Self { feeds, tags }
    }

    /// Every chapter's feed.
    pub(super) fn all(&self) -> &Feeds {
        &self.feeds
    }

    /// A chapter's feed.
    pub(super) fn get(&self, chapter: &str) -> Option<&VecDeque<ChangeRecord>> {
        self.feeds.get(chapter)
    }

    /// Add an applied change to its chapter's feed (dropping the oldest beyond
    /// [`FEED_LEN`]).
    pub(super) fn push(&mut self, change: &ChangeRecord) {
        let feed = self.feeds.entry(change.chapter.clone()).or_default();
        feed.push_back(change.clone());
        let tags = self.tags.entry(change.chapter.clone()).or_default();
        if let Some(tag) = &change.tag {
            tags.insert(tag.clone(), change.version);
        }
        while feed.len() > FEED_LEN {
            let Some(old) = feed.pop_front() else { break };
            if let Some(tag) = old.tag {
                if tags.get(&tag) == Some(&old.version) {
                    tags.remove(&tag);
                }
            }
        }
    }

    /// Forget a deleted chapter's feed.
    pub(super) fn remove(&mut self, chapter: &str) {
        self.feeds.remove(chapter);
        self.tags.remove(chapter);
    }

    /// The newest change with this tag in a chapter's feed.
    pub(super) fn tagged(&self, chapter: &str, tag: &str) -> Option<&ChangeRecord> {
        let version = *self.tags.get(chapter)?.get(tag)?;
        self.feeds
            .get(chapter)?
            .iter()
            .rev()
            .find(|c| c.version == version && c.tag.as_deref() == Some(tag))
    }
}

/// `saved`: a project's pending changes were stored.
#[derive(Serialize, TS)]
pub(super) struct SavedEvent {
    /// The project.
    pub(super) project: String,
    /// When (ms since the epoch).
    pub(super) at: u64,
    /// False when the save held nothing another tab shows (an audit record only).
    pub(super) changed: bool,
}

/// `storage_error`: a save failed; what it held stays pending.
#[derive(Serialize, TS)]
pub(super) struct StorageErrorEvent {
    /// The project.
    pub(super) project: String,
    /// `quota_exceeded` when storage is full, else `storage_failed`.
    #[ts(type = "'quota_exceeded' | 'storage_failed'")]
    pub(super) code: &'static str,
    /// What failed, for the writer.
    pub(super) message: String,
}

/// `project_reloaded`: a project's state after another tab saved it (or after this tab's
/// unsaved changes were rebased over what another tab saved).
#[derive(Serialize, TS)]
#[ts(optional_fields)]
pub(super) struct ProjectReloadedEvent {
    /// The project.
    pub(super) project: String,
    /// Its new state.
    #[serde(flatten)]
    pub(super) summary: ProjectSummary,
    /// True when this tab's unsaved changes were rebased over the stored project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) rebased: Option<bool>,
    /// What the rebase kept as copies (it could not merge them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) copies: Option<Vec<String>>,
    /// What the rebase overrode in the stored project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) overridden: Option<Vec<String>>,
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::project::changeset::ChangeSet;
    use proptest::prelude::*;

    /// The newest change with this tag, found by reading the feed.
    fn scanned<'a>(feeds: &'a Feeds, chapter: &str, tag: &str) -> Option<&'a ChangeRecord> {
        feeds
            .get(chapter)?
            .iter()
            .rev()
            .find(|c| c.tag.as_deref() == Some(tag))
    }

    #[derive(Debug, Clone)]
    enum FeedOp {
        /// A change to chapter `.0` with tag `.1` (if any).
        Push(u8, Option<u16>),
        /// The chapter was deleted.
        Remove(u8),
        /// The feeds were loaded again (from what is held).
        Reload,
    }

    fn feed_op() -> impl Strategy<Value = FeedOp> {
        prop_oneof![
            // Tags as a writer's keystrokes have them (nearly all different), and a few
            // that come again.
            2_000 => (0u8..2, prop::option::of(0u16..5_000)).prop_map(|(c, t)| FeedOp::Push(c, t)),
            2_000 => (0u8..2, prop::option::of(0u16..6)).prop_map(|(c, t)| FeedOp::Push(c, t)),
            1 => (0u8..2).prop_map(FeedOp::Remove),
            2 => Just(FeedOp::Reload),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        /// A tag's change is the one a read of the feed finds, through pushes past
        /// `FEED_LEN`, deleted chapters and reloads; and the tags kept are the feed's.
        #[test]
        fn tagged_changes_are_found_as_a_scan_finds_them(
            ops in prop::collection::vec(feed_op(), 2_100..3_000),
        ) {
            let mut feeds = ChangeFeeds::default();
            let mut versions = [0u64; 2];
            for (step, op) in ops.into_iter().enumerate() {
                // The tags looked up after this step: the few that come again, and the new one.
                let mut look: Vec<String> = (0..6).map(|t| format!("k{t}")).collect();
                match op {
                    FeedOp::Push(c, tag) => {
                        look.extend(tag.map(|t| format!("k{t}")));
                        versions[usize::from(c)] += 1;
                        feeds.push(&ChangeRecord {
                            chapter: format!("c{c}"),
                            version: versions[usize::from(c)],
                            changeset: ChangeSet::default(),
                            origin: "user".into(),
                            tag: tag.map(|t| format!("k{t}")),
                        });
                    }
                    FeedOp::Remove(c) => feeds.remove(&format!("c{c}")),
                    FeedOp::Reload => feeds = ChangeFeeds::of(feeds.all().clone()),
                }
                for c in 0..2 {
                    let chapter = format!("c{c}");
                    let held = feeds.get(&chapter).map_or(0, VecDeque::len);
                    prop_assert!(held <= FEED_LEN);
                    // No tag is kept for a change the feed no longer holds (checked now and
                    // then: the feed is read whole).
                    if step % 64 == 0 {
                        let held: std::collections::BTreeSet<(&str, u64)> = feeds
                            .get(&chapter)
                            .into_iter()
                            .flatten()
                            .filter_map(|c| c.tag.as_deref().map(|t| (t, c.version)))
                            .collect();
                        for (tag, version) in feeds.tags.get(&chapter).into_iter().flatten() {
                            prop_assert!(
                                held.contains(&(tag.as_str(), *version)),
                                "{} (version {}) is kept, not held",
                                tag,
                                version
                            );
                        }
                    }
                    for tag in &look {
                        prop_assert_eq!(
                            feeds.tagged(&chapter, tag),
                            scanned(feeds.all(), &chapter, tag)
                        );
                    }
                }
            }
        }
    }
}
