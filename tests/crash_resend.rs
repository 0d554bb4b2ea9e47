//! The crash-and-resend harness (`tests/common/crash.rs`) on the in-memory store, for every
//! crash point of its scripted 50-step session and three ways to crash: the commit is
//! refused, the store aborts it half-way (`Batch::abort_after`), or it commits and the process
//! dies before hearing so. Besides "the state before or after the interrupted step", it
//! checks that the page resending the interrupted step (its tag, its call id) applies it
//! exactly once. (`tests/crash.rs` is the other harness, on another session.)
#![cfg(not(target_arch = "wasm32"))]

#[path = "common/crash.rs"]
mod crash;

use std::rc::Rc;

use draftsmith::store::faulty::{Crash, Faulty};
use draftsmith::store::MemoryStore;
use futures::executor::block_on;

fn store() -> Rc<Faulty<MemoryStore>> {
    Rc::new(Faulty::new(MemoryStore::new()))
}

#[test]
fn the_script_has_50_steps_and_many_crash_points() {
    assert_eq!(crash::script().len(), 50);
    let reference = block_on(crash::reference(store()));
    assert_eq!(reference.states.len(), 51);
    assert!(reference.total() >= 50, "{} commits", reference.total());
    // Every step changed the stored state or is a checkpoint, close_group or a waiting call.
    let changed = reference.states.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(
        changed >= 35,
        "only {changed} steps changed the stored state"
    );
}

fn every_crash_point(how: impl Fn(u64) -> Crash) {
    let reference = block_on(crash::reference(store()));
    let mut failures = Vec::new();
    for k in 1..=reference.total() {
        if let Err(e) = block_on(crash::crash_at(store(), &reference, k, how(k))) {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} crash points failed; the first:\n{}",
        failures.len(),
        reference.total(),
        failures[0]
    );
}

#[test]
fn a_refused_commit_at_any_point_loses_nothing_acknowledged() {
    every_crash_point(|_| Crash::Refuse);
}

#[test]
fn a_commit_aborted_half_way_at_any_point_loses_nothing_acknowledged() {
    every_crash_point(|k| Crash::Abort(k as usize % 3));
}

#[test]
fn a_crash_after_any_commit_applies_a_resent_step_once() {
    every_crash_point(|_| Crash::AfterCommit);
}
