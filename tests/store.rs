//! The store conformance suite against the in-memory store (the browser runs the same
//! bodies against IndexedDB in `tests/web_store.rs`).
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::store::{conformance, MemoryStore};
use futures::executor::block_on;

#[test]
fn memory_store_passes_the_conformance_suite() {
    block_on(conformance::run_all(&MemoryStore::new()));
}

#[test]
fn memory_store_migrates_version_1_data() {
    block_on(conformance::migration_from_v1(&MemoryStore::new()));
}
