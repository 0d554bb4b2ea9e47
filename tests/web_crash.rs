//! The crash-consistency harness (`tests/crash_harness/mod.rs`) on IndexedDB, in a dedicated
//! worker: 36 crash points spread over the session's commits, each in a fresh database, with
//! the three ways a commit can crash (refused, aborted half-way, committed but unanswered).
#![cfg(target_arch = "wasm32")]

mod crash_harness;

use std::rc::Rc;

use crash_harness::{check, crash_run, kinds, reference, stored_state};
use draftsmith::store::faulty::Faulty;
use draftsmith::store::Store;
use draftsmith::web::idb::IdbStore;
use draftsmith::web::JsIds;
use draftsmith::IdSource;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

const POINTS: u64 = 36;

#[wasm_bindgen_test]
async fn crash_points_on_indexeddb_leave_the_state_before_or_after_their_step() {
    let (states, commits) = reference().await;
    let total: u64 = commits[1..].iter().sum();
    assert!(total >= POINTS, "{total} commits");
    for j in 0..POINTS {
        let k = 1 + j * total / POINTS;
        let how = kinds(k)[(j % 3) as usize];
        let name = format!("draftsmith-crash-{}", JsIds.next_id());
        let store = Rc::new(Faulty::new(IdbStore::open(&name).await.expect("open")));
        let dead: Rc<dyn Store> = store.clone();
        let (interrupted, state) = crash_run(store.clone(), k, how, |project| async move {
            stored_state(dead, &project).await
        })
        .await;
        check(&states, k, how, interrupted, &state);
        let store = Rc::try_unwrap(store).unwrap_or_else(|_| panic!("the store is still in use"));
        store.into_inner().close();
        IdbStore::delete(&name).await.expect("delete");
    }
}
