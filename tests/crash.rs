//! The crash-consistency harness on the in-memory store, at every crash point: see
//! `tests/crash_harness/mod.rs`.
#![cfg(not(target_arch = "wasm32"))]

mod crash_harness;

use std::rc::Rc;

use crash_harness::{check, crash_run, kinds, reference, stored_state, STEPS};
use draftsmith::store::faulty::Faulty;
use draftsmith::store::{MemoryStore, Store};
use futures::executor::block_on;

#[test]
fn every_crash_point_leaves_the_state_before_or_after_its_step() {
    block_on(async {
        let (states, commits) = reference().await;
        assert_eq!(states.len(), STEPS + 1);
        let total: u64 = commits[1..].iter().sum();
        let idle = commits[1..].iter().filter(|c| **c == 0).count();
        assert!(idle <= 2, "nearly every step commits: {commits:?}");
        let mut runs = 0;
        for k in 1..=total {
            for how in kinds(k) {
                let store = Rc::new(Faulty::new(MemoryStore::new()));
                let dead: Rc<dyn Store> = store.clone();
                let (interrupted, state) = crash_run(store, k, how, |project| async move {
                    stored_state(dead, &project).await
                })
                .await;
                check(&states, k, how, interrupted, &state);
                runs += 1;
            }
        }
        println!("{runs} crash runs over {total} commits in {STEPS} steps");
    });
}
