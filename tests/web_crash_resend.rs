//! The crash-and-resend harness (`tests/common/crash.rs`) on IndexedDB, in a dedicated
//! worker: the clean run once, then a sample of crash points spread over the session, each
//! on a fresh database, the three ways to crash taking turns (the commit refused, the
//! transaction aborted half-way by `Batch::abort_after`, the commit landing before the
//! process dies, after which the interrupted step is resent). The native test
//! (`tests/crash_resend.rs`) runs every crash point; `tests/web_crash.rs` is the other
//! harness on IndexedDB.
#![cfg(target_arch = "wasm32")]

#[path = "common/crash.rs"]
mod crash;

use std::rc::Rc;

use draftsmith::store::faulty::{Crash, Faulty};
use draftsmith::web::idb::IdbStore;
use draftsmith::web::JsIds;
use draftsmith::IdSource;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

/// How many crash points the browser runs.
const SAMPLE: u64 = 15;

async fn fresh() -> (String, Rc<Faulty<IdbStore>>) {
    let name = format!("draftsmith-crash-{}", JsIds.next_id());
    let store = IdbStore::open(&name).await.expect("open");
    (name, Rc::new(Faulty::new(store)))
}

#[wasm_bindgen_test]
async fn crash_points_on_indexeddb_lose_nothing_acknowledged_and_apply_once() {
    let (name, store) = fresh().await;
    let reference = crash::reference(store.clone()).await;
    drop(store);
    IdbStore::delete(&name).await.expect("delete");

    let total = reference.total();
    assert!(total >= SAMPLE, "{total} commits");
    // Evenly spread over the session (the first and the last commit included).
    let mut points: Vec<u64> = (0..SAMPLE)
        .map(|n| 1 + n * (total - 1) / (SAMPLE - 1))
        .collect();
    points.dedup();
    let mut failures = Vec::new();
    let mut tried = 0;
    for (n, k) in points.into_iter().enumerate() {
        let how = match n % 3 {
            0 => Crash::Refuse,
            1 => Crash::Abort(n % 4),
            _ => Crash::AfterCommit,
        };
        let (name, store) = fresh().await;
        if let Err(e) = crash::crash_at(store.clone(), &reference, k, how).await {
            failures.push(e);
        }
        drop(store);
        IdbStore::delete(&name).await.expect("delete");
        tried += 1;
    }
    assert!(tried as u64 >= SAMPLE - 1, "only {tried} crash points");
    assert!(
        failures.is_empty(),
        "{} of {tried} crash points failed; the first:\n{}",
        failures.len(),
        failures[0]
    );
}
