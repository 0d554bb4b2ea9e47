//! Runs going on: each run's project and abort signal, its single-use guards, the approval
//! cards its calls asked for since its last pause, and the aborts that came before their run.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use crate::agent::AbortSignal;
use crate::core::records::ApprovalRecord;

/// The most aborts of runs not begun yet that are remembered.
const MAX_EARLY_ABORTS: usize = 64;

/// A run in progress.
struct RunHandle {
    project: String,
    abort: AbortSignal,
}

/// Owns the runs going on and what each holds while it runs.
#[derive(Default)]
pub(in crate::core) struct Runs {
    runs: RefCell<BTreeMap<String, RunHandle>>,
    /// Run ids aborted before their run began.
    early_aborts: RefCell<BTreeSet<String>>,
    /// Each run's single-use guards (see [`crate::session::EditContext::take_guard`]).
    guards: RefCell<BTreeMap<String, BTreeSet<String>>>,
    /// Approval cards of running chat runs, by run, saved with the run's pause.
    cards: RefCell<Vec<(String, ApprovalRecord)>>,
}

impl Runs {
    /// Whether run `id` is going on.
    pub(in crate::core) fn is_running(&self, id: &str) -> bool {
        self.runs.borrow().contains_key(id)
    }

    /// Run `id` begins on `project` with its single-use `guards`. An abort that came before
    /// it (see [`Runs::abort`]) aborts it now.
    pub(in crate::core) fn begin(
        &self,
        id: &str,
        project: &str,
        abort: &AbortSignal,
        guards: BTreeSet<String>,
    ) {
        if self.early_aborts.borrow_mut().remove(id) {
            abort.abort();
        }
        self.guards.borrow_mut().insert(id.to_string(), guards);
        self.runs.borrow_mut().insert(
            id.to_string(),
            RunHandle {
                project: project.to_string(),
                abort: abort.clone(),
            },
        );
    }

    /// Run `id` stopped running (ended or paused).
    pub(in crate::core) fn end(&self, id: &str) {
        self.runs.borrow_mut().remove(id);
    }

    /// Abort run `id` (every run when `None`) and return the ids aborted. A run `id` not
    /// going on is remembered, so that it ends as soon as it begins: the abort may overtake
    /// its run's start (the run awaits storage before it begins).
    pub(in crate::core) fn abort(&self, id: Option<&str>) -> Vec<String> {
        let runs = self.runs.borrow();
        let mut aborted = Vec::new();
        for (run, handle) in runs.iter() {
            if id.is_none_or(|wanted| wanted == run) {
                handle.abort.abort();
                aborted.push(run.clone());
            }
        }
        if let Some(id) = id.filter(|id| !runs.contains_key(*id)) {
            let mut early = self.early_aborts.borrow_mut();
            if early.len() >= MAX_EARLY_ABORTS {
                early.pop_first();
            }
            early.insert(id.to_string());
        }
        aborted
    }

    /// Abort every run going on in `project`.
    pub(in crate::core) fn abort_project(&self, project: &str) {
        for handle in self.runs.borrow().values().filter(|h| h.project == project) {
            handle.abort.abort();
        }
    }

    /// Take run `id`'s single-use guards (none when it holds none).
    pub(in crate::core) fn take_guards(&self, id: &str) -> BTreeSet<String> {
        self.guards.borrow_mut().remove(id).unwrap_or_default()
    }

    /// Give run `id` its single-use guards back.
    pub(in crate::core) fn put_guards(&self, id: &str, guards: BTreeSet<String>) {
        self.guards.borrow_mut().insert(id.to_string(), guards);
    }

    /// Keep an approval card run `id` asked for, until its pause saves it.
    pub(in crate::core) fn add_card(&self, id: &str, card: ApprovalRecord) {
        self.cards.borrow_mut().push((id.to_string(), card));
    }

    /// Take the approval cards run `id` asked for since its last pause.
    pub(in crate::core) fn take_cards(&self, id: &str) -> Vec<ApprovalRecord> {
        let mut cards = self.cards.borrow_mut();
        let (mine, others): (Vec<_>, Vec<_>) = std::mem::take(&mut *cards)
            .into_iter()
            .partition(|(r, _)| r == id);
        *cards = others;
        mine.into_iter().map(|(_, card)| card).collect()
    }
}
