//! [`Faulty`]: a store wrapper that fails on demand, for tests of what the core does when
//! storage fails (natively over [`super::MemoryStore`], in the browser over IndexedDB).
//!
//! - [`Faulty::set_failing`]: every commit fails (a full quota) until cleared;
//!   [`Faulty::fail_next`]: the next `n` do;
//! - [`Faulty::crash_at`]: the `k`-th commit from now fails, by [`Crash::Refuse`] (nothing
//!   reaches the store) or [`Crash::Abort`] (the batch goes to the store with
//!   [`Batch::abort_after`] set, so the store itself aborts the transaction half-way) or
//!   [`Crash::AfterCommit`] (it commits, but the caller hears an error), and every commit
//!   after it fails too, as if the process had died there;
//! - [`Faulty::fail_put_at`]: the next bulk write of puts ([`Store::begin_puts`]) refuses
//!   its `k`-th put (from 0), as a transaction that has ended does;
//! - [`Faulty::set_yielding`]: every operation yields to the executor once before it runs, so
//!   that two cores on one store really interleave;
//! - [`Faulty::commits`] counts commits (to find how many crash points a session has), and
//!   [`Faulty::reads`] reads;
//!   [`Faulty::set_recording`] keeps a copy of each batch.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;

use super::{Batch, Puts, Record, Store, StoreError, StoreFuture, Table};

/// How the crashing commit fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crash {
    /// The commit is refused before it reaches the store.
    Refuse,
    /// The store runs the batch but aborts it after this many writes (at most all but the
    /// last), so nothing of it is kept.
    Abort(usize),
    /// The batch commits, and then the process dies before it hears so (the commit reports
    /// an error): the change is stored but was never acknowledged.
    AfterCommit,
}

/// A store that fails on demand (see the module docs).
pub struct Faulty<S> {
    inner: S,
    failing: Cell<bool>,
    fail_next: Cell<u64>,
    yielding: Cell<bool>,
    commits: Cell<u64>,
    reads: Cell<u64>,
    crash: Cell<Option<(u64, Crash)>>,
    dead: Cell<bool>,
    recording: Cell<bool>,
    recorded: RefCell<Vec<Batch>>,
    put_fails_at: Cell<Option<usize>>,
}

impl<S: Store> Faulty<S> {
    /// A wrapper that passes everything through until told otherwise.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            failing: Cell::new(false),
            fail_next: Cell::new(0),
            yielding: Cell::new(false),
            commits: Cell::new(0),
            reads: Cell::new(0),
            crash: Cell::new(None),
            dead: Cell::new(false),
            recording: Cell::new(false),
            recorded: RefCell::new(Vec::new()),
            put_fails_at: Cell::new(None),
        }
    }

    /// The next bulk write of puts refuses its `k`-th put (from 0).
    pub fn fail_put_at(&self, k: usize) {
        self.put_fails_at.set(Some(k));
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The wrapped store, unwrapped.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// Make every commit fail (as a full quota) while `failing`.
    pub fn set_failing(&self, failing: bool) {
        self.failing.set(failing);
    }

    /// Make the next `n` commits fail (as a full quota), and the ones after them succeed.
    pub fn fail_next(&self, n: u64) {
        self.fail_next.set(n);
    }

    /// Yield to the executor once before every operation.
    pub fn set_yielding(&self, yielding: bool) {
        self.yielding.set(yielding);
    }

    /// Commits attempted so far (failed ones included).
    pub fn commits(&self) -> u64 {
        self.commits.get()
    }

    /// Reads made so far (`get`, `get_all`, `get_by_index`).
    pub fn reads(&self) -> u64 {
        self.reads.get()
    }

    /// Make the `k`-th commit from now (1 = the next) fail as `how`, and every later one.
    pub fn crash_at(&self, k: u64, how: Crash) {
        self.crash.set(Some((self.commits.get() + k, how)));
    }

    /// Keep a copy of every batch given to [`Store::commit`] from now on (see
    /// [`Faulty::take_batches`]).
    pub fn set_recording(&self, recording: bool) {
        self.recording.set(recording);
    }

    /// The batches recorded since the last call, oldest first.
    pub fn take_batches(&self) -> Vec<Batch> {
        std::mem::take(&mut *self.recorded.borrow_mut())
    }

    /// After a crash: pass everything through again (a new process on the same storage).
    pub fn revive(&self) {
        self.dead.set(false);
        self.crash.set(None);
        self.fail_next.set(0);
        self.failing.set(false);
    }

    /// Whether a crash point was reached.
    pub fn crashed(&self) -> bool {
        self.dead.get()
    }

    fn pause(&self) -> YieldOnce {
        YieldOnce(!self.yielding.get())
    }
}

/// Yields to the executor once (or not at all when created done).
pub struct YieldOnce(pub bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl<S: Store> Store for Faulty<S> {
    fn get<'a>(&'a self, table: Table, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        self.reads.set(self.reads.get() + 1);
        Box::pin(async move {
            self.pause().await;
            self.inner.get(table, key).await
        })
    }

    fn get_all(&self, table: Table) -> StoreFuture<'_, Vec<Value>> {
        self.reads.set(self.reads.get() + 1);
        Box::pin(async move {
            self.pause().await;
            self.inner.get_all(table).await
        })
    }

    fn get_by_index<'a>(
        &'a self,
        table: Table,
        index: &'a str,
        value: Value,
    ) -> StoreFuture<'a, Vec<Value>> {
        self.reads.set(self.reads.get() + 1);
        Box::pin(async move {
            self.pause().await;
            self.inner.get_by_index(table, index, value).await
        })
    }

    fn commit(&self, mut batch: Batch) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            self.pause().await;
            let n = self.counted(Some(&batch));
            match self.verdict(n) {
                Verdict::Pass => self.inner.commit(batch).await,
                Verdict::Refuse(error) => Err(error),
                Verdict::Crash(Crash::Abort(after)) => {
                    let last = batch.ops.len().saturating_sub(1);
                    batch.abort_after = Some(after.min(last));
                    match self.inner.commit(batch).await {
                        // An empty batch has nothing to abort.
                        Ok(()) => Err(StoreError::Aborted(format!("crash injected at commit {n}"))),
                        Err(e) => Err(e),
                    }
                }
                Verdict::Crash(_) => {
                    self.inner.commit(batch).await?;
                    Err(StoreError::Failed(format!(
                        "crash injected after commit {n}"
                    )))
                }
            }
        })
    }

    fn begin_puts(&self, table: Table) -> StoreFuture<'_, Box<dyn Puts<'_> + '_>> {
        Box::pin(async move {
            self.pause().await;
            let inner = self.inner.begin_puts(table).await?;
            Ok(Box::new(FaultyPuts {
                faulty: self,
                inner,
                table,
                recorded: self.recording.get().then(Batch::new),
                fails_at: self.put_fails_at.take(),
                added: 0,
            }) as Box<dyn Puts<'_>>)
        })
    }

    fn estimate(&self) -> StoreFuture<'_, Option<(u64, u64)>> {
        self.inner.estimate()
    }
}

/// What a commit meets ([`Faulty::verdict`]).
enum Verdict {
    /// It goes through.
    Pass,
    /// It fails before it reaches the store.
    Refuse(StoreError),
    /// The crash set for it ([`Crash::Abort`] or [`Crash::AfterCommit`]).
    Crash(Crash),
}

impl<S: Store> Faulty<S> {
    /// Count a commit (keeping a copy of its batch when recording); returns its number.
    fn counted(&self, batch: Option<&Batch>) -> u64 {
        let n = self.commits.get() + 1;
        self.commits.set(n);
        if let Some(batch) = batch.filter(|_| self.recording.get()) {
            self.recorded.borrow_mut().push(batch.clone());
        }
        n
    }

    /// What the `n`-th commit meets: the faults set, in order (a crash at it leaves the store
    /// dead).
    fn verdict(&self, n: u64) -> Verdict {
        if self.dead.get() {
            return Verdict::Refuse(StoreError::Failed(
                "the store is gone (after a crash)".into(),
            ));
        }
        if self.fail_next.get() > 0 {
            self.fail_next.set(self.fail_next.get() - 1);
            return Verdict::Refuse(StoreError::Quota("QuotaExceededError (injected)".into()));
        }
        if self.failing.get() {
            return Verdict::Refuse(StoreError::Quota("QuotaExceededError (injected)".into()));
        }
        match self.crash.get() {
            Some((at, how)) if at == n => {
                self.dead.set(true);
                match how {
                    Crash::Refuse => {
                        Verdict::Refuse(StoreError::Failed(format!("crash injected at commit {n}")))
                    }
                    how => Verdict::Crash(how),
                }
            }
            _ => Verdict::Pass,
        }
    }
}

/// [`Faulty`]'s bulk write: the wrapped store's, with the faults of a commit when it is
/// committed (counted and recorded as one), and the put [`Faulty::fail_put_at`] named
/// refused.
struct FaultyPuts<'a, S> {
    faulty: &'a Faulty<S>,
    inner: Box<dyn Puts<'a> + 'a>,
    table: Table,
    /// A copy of the puts, when recording.
    recorded: Option<Batch>,
    fails_at: Option<usize>,
    added: usize,
}

impl<'a, S: Store> Puts<'a> for FaultyPuts<'a, S> {
    fn put(&mut self, record: Record) -> Result<(), StoreError> {
        if self.fails_at == Some(self.added) {
            return Err(StoreError::Failed(
                "TransactionInactiveError (injected)".into(),
            ));
        }
        self.added += 1;
        if let Some(batch) = &mut self.recorded {
            batch.put_record(self.table, record.clone());
        }
        self.inner.put(record)
    }

    fn commit(self: Box<Self>) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let FaultyPuts {
                faulty,
                inner,
                recorded,
                ..
            } = *self;
            faulty.pause().await;
            let n = faulty.counted(recorded.as_ref());
            match faulty.verdict(n) {
                Verdict::Pass => inner.commit().await,
                // Dropped: nothing of it lands.
                Verdict::Refuse(error) => Err(error),
                Verdict::Crash(Crash::Abort(_)) => {
                    Err(StoreError::Aborted(format!("crash injected at commit {n}")))
                }
                Verdict::Crash(_) => {
                    inner.commit().await?;
                    Err(StoreError::Failed(format!(
                        "crash injected after commit {n}"
                    )))
                }
            }
        })
    }
}
