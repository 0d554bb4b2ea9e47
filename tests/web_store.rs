//! The store conformance suite against IndexedDB, inside a dedicated worker, plus a real
//! upgrade of a database written with schema version 1.
#![cfg(target_arch = "wasm32")]

use draftsmith::store::{conformance, Batch, Store, Table, SCHEMA_RECORD, SCHEMA_VERSION};
use draftsmith::web::idb::IdbStore;
use draftsmith::web::JsIds;
use draftsmith::IdSource;
use serde_json::json;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

fn fresh_name() -> String {
    format!("draftsmith-test-{}", JsIds.next_id())
}

#[wasm_bindgen_test]
async fn idb_store_passes_the_conformance_suite() {
    let name = fresh_name();
    let store = IdbStore::open(&name).await.expect("open");
    conformance::run_all(&store).await;
    store.close();
    IdbStore::delete(&name).await.expect("delete");
}

#[wasm_bindgen_test]
async fn idb_store_runs_the_data_migration() {
    let name = fresh_name();
    let store = IdbStore::open_version(&name, SCHEMA_VERSION)
        .await
        .expect("open");
    conformance::migration_from_v1(&store).await;
    store.close();
    IdbStore::delete(&name).await.expect("delete");
}

#[wasm_bindgen_test]
async fn a_version_1_database_is_upgraded_with_its_data() {
    let name = fresh_name();
    // Write a database as version 1 knew it: no notes, goals, watched or audit tables.
    let v1 = IdbStore::open_version(&name, 1).await.expect("open v1");
    let mut batch = Batch::new();
    batch.put_value(
        Table::Projects,
        json!({"id": "p", "name": "Old", "createdMs": 7}),
    );
    batch.put_value(
        Table::Chapters,
        json!({"id": "c", "project": "p", "text": "Once upon a time."}),
    );
    v1.commit(batch).await.expect("v1 write");
    let mut to_new_table = Batch::new();
    to_new_table.put_value(Table::Notes, json!({"id": "n", "project": "p"}));
    assert!(
        v1.commit(to_new_table).await.is_err(),
        "version 1 has no notes table"
    );
    v1.close();

    let store = IdbStore::open(&name)
        .await
        .expect("upgrade to the current version");
    let project = store
        .get(Table::Projects, "p")
        .await
        .unwrap()
        .expect("project kept");
    assert_eq!(project["updatedMs"], 7, "data migration ran");
    let chapter = store
        .get(Table::Chapters, "c")
        .await
        .unwrap()
        .expect("chapter kept");
    assert_eq!(chapter["text"], "Once upon a time.");
    let schema = store
        .get(Table::Meta, SCHEMA_RECORD)
        .await
        .unwrap()
        .expect("schema record");
    assert_eq!(schema["version"], SCHEMA_VERSION);
    let mut batch = Batch::new();
    batch.put_value(
        Table::Notes,
        json!({"id": "n", "project": "p", "tags": ["plot"]}),
    );
    store.commit(batch).await.expect("the new table exists");
    let tagged = store
        .get_by_index(Table::Notes, "tags", json!("plot"))
        .await
        .unwrap();
    assert_eq!(tagged.len(), 1);
    store.close();
    IdbStore::delete(&name).await.expect("delete");
}

#[wasm_bindgen_test]
async fn storage_estimate_is_reported() {
    let name = fresh_name();
    let store = IdbStore::open(&name).await.expect("open");
    let estimate = store.estimate().await.expect("estimate");
    let (usage, quota) = estimate.expect("the browser reports an estimate");
    assert!(quota > 0 && usage <= quota, "{usage} / {quota}");
    store.close();
    IdbStore::delete(&name).await.expect("delete");
}
