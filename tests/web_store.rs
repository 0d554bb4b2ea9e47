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

/// Version 7 dropped the `chapter` index of the change records (nothing read it, and every
/// keystroke had IndexedDB keep it): a version-6 database loses it and keeps its records.
#[wasm_bindgen_test]
async fn a_version_6_database_loses_the_chapter_index_of_its_changes() {
    let name = fresh_name();
    let v6 = IdbStore::open_version(&name, 6).await.expect("open v6");
    let mut batch = Batch::new();
    batch.put_value(
        Table::Changes,
        json!({"id": "c/00000000000000000001", "project": "p", "chapter": "c", "version": 1}),
    );
    v6.commit(batch).await.expect("v6 write");
    v6.close();
    assert_eq!(change_indexes(&name).await, ["chapter", "project"]);

    let store = IdbStore::open(&name).await.expect("upgraded");
    let by_project = store
        .get_by_index(Table::Changes, "project", json!("p"))
        .await
        .expect("the project index stays");
    assert_eq!(by_project.len(), 1);
    assert_eq!(by_project[0]["version"], 1);
    store.close();
    assert_eq!(change_indexes(&name).await, ["project"]);
    IdbStore::delete(&name).await.expect("delete");
}

/// The indexes the `changes` object store of database `name` has, as IndexedDB lists them.
async fn change_indexes(name: &str) -> Vec<String> {
    let db = rexie::Rexie::builder(name)
        .build()
        .await
        .expect("open as it is");
    let tx = db
        .transaction(&["changes"], rexie::TransactionMode::ReadOnly)
        .expect("a transaction");
    let mut names = tx
        .store("changes")
        .expect("the changes store")
        .index_names();
    names.sort();
    drop(tx);
    db.close();
    names
}

/// A database laid out otherwise than the schema (by another library, so not by the store's own
/// upgrade code): a table the schema does not name, an index it does not name, an index
/// under a schema name but over another field, and a table missing. Opening it brings it to
/// the schema, keeping the records of the tables that stay.
#[wasm_bindgen_test]
async fn an_upgrade_brings_any_layout_to_the_schema() {
    use rexie::{Index, ObjectStore, Rexie, TransactionMode};
    let name = fresh_name();
    let old = Rexie::builder(&name)
        .version(4)
        .add_object_store(ObjectStore::new("stale").key_path("id"))
        .add_object_store(
            ObjectStore::new("chapters")
                .key_path("id")
                .add_index(Index::new("project", "title"))
                .add_index(Index::new("old", "text")),
        )
        .build()
        .await
        .expect("the old layout");
    let tx = old
        .transaction(&["chapters"], TransactionMode::ReadWrite)
        .unwrap();
    let record = js_record(r#"{"id": "c", "project": "p", "title": "One"}"#);
    tx.store("chapters")
        .unwrap()
        .put(&record, None)
        .await
        .unwrap();
    tx.done().await.unwrap();
    old.close();

    let store = IdbStore::open(&name).await.expect("upgraded");
    let by_project = store
        .get_by_index(Table::Chapters, "project", json!("p"))
        .await
        .expect("the project index reads the project field");
    assert_eq!(by_project.len(), 1, "{by_project:?}");
    assert_eq!(by_project[0]["title"], "One");
    // Every table of the schema is there: a write to each lands.
    let mut batch = Batch::new();
    for table in Table::ALL {
        batch.put_value(table, json!({"id": "x", "project": "p"}));
    }
    store.commit(batch).await.expect("every table exists");
    store.close();

    let check = Rexie::builder(&name).build().await.expect("reopen");
    let mut names = check.store_names();
    names.sort();
    let mut expected: Vec<String> = Table::ALL.iter().map(|t| t.name().to_string()).collect();
    expected.sort();
    assert_eq!(names, expected, "the stale table is gone");
    let tx = check
        .transaction(&names, TransactionMode::ReadOnly)
        .unwrap();
    for table in Table::ALL {
        let mut indexes = tx.store(table.name()).unwrap().index_names();
        indexes.sort();
        let mut declared: Vec<String> =
            table.indexes().iter().map(|i| i.name.to_string()).collect();
        declared.sort();
        assert_eq!(indexes, declared, "{}", table.name());
    }
    drop(tx);
    check.close();
    IdbStore::delete(&name).await.expect("delete");
}

fn js_record(text: &str) -> wasm_bindgen::JsValue {
    js_sys::JSON::parse(text).unwrap()
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

async fn send(core: &draftsmith::Core, kind: &str, params: serde_json::Value) -> serde_json::Value {
    let text = json!({"id": 1, "type": kind, "params": params}).to_string();
    let response: serde_json::Value = serde_json::from_str(&core.handle_text(&text).await).unwrap();
    assert_eq!(response["ok"], true, "{kind}: {response}");
    response["result"].clone()
}

fn core_on(store: IdbStore) -> draftsmith::Core {
    use draftsmith::core::Env;
    use draftsmith::web::JsClock;
    use std::rc::Rc;
    draftsmith::Core::new(Env {
        clock: Rc::new(JsClock),
        ids: Rc::new(JsIds),
        decoder: Rc::new(draftsmith::web::JsTextDecoder),
        events: Rc::new(draftsmith::RecordingSink::default()),
        store: Rc::new(store),
    })
}

#[wasm_bindgen_test]
async fn a_new_worker_reads_everything_back_and_undo_still_works() {
    let name = fresh_name();
    let first = core_on(IdbStore::open(&name).await.expect("open"));
    let project = send(
        &first,
        "create_project",
        json!({"name": "Lighthouse", "chapters": [
        {"title": "One", "text": "Mara climbed the stair. “Who’s there?” 🐉"},
        {"title": "Two", "text": "Dawn came grey."}]}),
    )
    .await;
    let id = project["id"].as_str().unwrap().to_string();
    let ch1 = project["chapters"][0]["id"].as_str().unwrap().to_string();
    send(
        &first,
        "execute",
        json!({"tool": "update_manuscript", "origin": "agent:ed",
        "args": {"searchText": "stair", "replacementText": "tower"}}),
    )
    .await;
    send(
        &first,
        "apply_user_change",
        json!({"chapter": ch1, "baseVersion": 1,
        "changes": [{"retain": 40}, {"insert": " Silence."}]}),
    )
    .await;
    send(
        &first,
        "execute",
        json!({"tool": "append_to_manuscript", "args": {"text": "Noon.", "chapter": "2"}}),
    )
    .await;
    send(
        &first,
        "execute",
        json!({"tool": "set_selection", "args": {"start": 0, "end": 4}}),
    )
    .await;
    for args in [
        json!({"tool": "write_memory_note", "args": {"text": "Mara fears the dark.", "type": "fact", "topicTags": ["mara"]}}),
        json!({"tool": "create_goal", "args": {"title": "Finish act one", "progress": 10}}),
        json!({"tool": "watch_entity", "args": {"name": "Mara", "type": "character", "reason": "arc"}}),
        json!({"tool": "evolve_bedside_note", "args": {"text": "Storm in chapter 3."}}),
    ] {
        let result = send(&first, "execute", args).await;
        assert_eq!(result["status"], "success", "{result}");
    }
    let memory_before = send(&first, "memory", json!({})).await;
    let chapters_before = (
        send(&first, "get_chapter", json!({"chapter": "1"})).await,
        send(&first, "get_chapter", json!({"chapter": "2"})).await,
    );
    let history_before = send(&first, "history", json!({})).await;
    // The writer went idle: the worker checkpoints (cursor and selection moves are saved
    // then, not per move).
    send(&first, "checkpoint", json!({})).await;
    // "Terminate" the worker: the core and its connection go away.
    drop(first);

    let second = core_on(IdbStore::open(&name).await.expect("reopen"));
    let listed = send(&second, "list_projects", json!({})).await;
    assert_eq!(listed["projects"][0]["id"], id);
    let opened = send(&second, "open_project", json!({"id": id})).await;
    assert_eq!(opened["ui"]["selection"], json!([0, 4]));
    let chapters_after = (
        send(&second, "get_chapter", json!({"chapter": "1"})).await,
        send(&second, "get_chapter", json!({"chapter": "2"})).await,
    );
    assert_eq!(chapters_after, chapters_before);
    assert_eq!(send(&second, "history", json!({})).await, history_before);
    assert_eq!(send(&second, "memory", json!({})).await, memory_before);
    assert_eq!(memory_before["goals"][0]["title"], "Finish act one");
    // Undo works after the reload: agent-only, then everything.
    send(&second, "undo", json!({"origin": "agent"})).await;
    assert_eq!(
        send(&second, "get_chapter", json!({"chapter": "1"})).await["text"],
        "Mara climbed the stair. “Who’s there?” 🐉 Silence."
    );
    for _ in 0..4 {
        send(&second, "undo", json!({})).await;
    }
    assert_eq!(
        send(&second, "get_chapter", json!({"chapter": "1"})).await["text"],
        "Mara climbed the stair. “Who’s there?” 🐉"
    );
    assert_eq!(
        send(&second, "get_chapter", json!({"chapter": "2"})).await["text"],
        "Dawn came grey."
    );
    drop(second);
    IdbStore::delete(&name).await.expect("delete");
}

#[wasm_bindgen_test]
async fn an_abort_between_the_state_write_and_the_history_write_leaves_neither() {
    let name = fresh_name();
    let store = IdbStore::open(&name).await.expect("open");
    conformance::aborted_batches_leave_the_previous_state(&store).await;
    store.close();
    IdbStore::delete(&name).await.expect("delete");
}

/// A database as the store wrote it at schema version 5 (`tests/data/idb_v5.json`: every
/// table's layout and records, dumped from a database that a core on `IdbStore` wrote: a
/// project with edits, user changes, memory, a bible entry, a file and an audit trail), laid
/// out again through rexie with the same objects in the same tables. The store opens it at the
/// current version (the schema record says so, and the `sync` table is there), reads every
/// record back unchanged, and a core serves the project from it, giving it its Yjs document on
/// first open.
#[wasm_bindgen_test]
async fn a_database_written_by_the_store_at_version_5_is_read_back_whole() {
    use rexie::{Index, ObjectStore, Rexie, TransactionMode};
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("data/idb_v5.json")).expect("the fixture");
    let tables = fixture["tables"].as_object().expect("tables");
    let name = fresh_name();
    let version = fixture["version"].as_u64().expect("version") as u32;
    let mut builder = Rexie::builder(&name).version(version);
    for (table, layout) in tables {
        let mut store = ObjectStore::new(table).key_path(layout["keyPath"].as_str().unwrap());
        for index in layout["indexes"].as_array().unwrap() {
            store = store.add_index(
                Index::new(
                    index["name"].as_str().unwrap(),
                    index["keyPath"].as_str().unwrap(),
                )
                .multi_entry(index["multiEntry"].as_bool().unwrap()),
            );
        }
        builder = builder.add_object_store(store);
    }
    let old = builder.build().await.expect("the old database");
    let names: Vec<&String> = tables.keys().collect();
    let tx = old.transaction(&names, TransactionMode::ReadWrite).unwrap();
    let mut count = 0;
    for (table, layout) in tables {
        let store = tx.store(table).unwrap();
        for record in layout["records"].as_array().unwrap() {
            // The objects as the store made them: `JSON.parse` of the record's JSON text.
            store
                .add(&js_record(&record.to_string()), None)
                .await
                .unwrap();
            count += 1;
        }
    }
    tx.done().await.unwrap();
    old.close();
    assert!(count >= Table::ALL.len(), "{count} records");

    let store = IdbStore::open(&name).await.expect("open the old database");
    let schema = store.get(Table::Meta, SCHEMA_RECORD).await.expect("get");
    assert_eq!(
        schema,
        Some(json!({"id": SCHEMA_RECORD, "version": SCHEMA_VERSION}))
    );
    assert_eq!(
        store.get_all(Table::Sync).await.expect("sync"),
        Vec::<serde_json::Value>::new()
    );
    for table in Table::ALL.into_iter().filter(|t| *t != Table::Sync) {
        let mut expected = tables[table.name()]["records"].as_array().unwrap().clone();
        if table == Table::Meta {
            // The schema record is the new version's (checked above).
            expected.retain(|r| r["id"] != SCHEMA_RECORD);
            expected.push(json!({"id": SCHEMA_RECORD, "version": SCHEMA_VERSION}));
        }
        assert!(
            !expected.is_empty(),
            "the fixture has records of {}",
            table.name()
        );
        for record in &expected {
            let key = record["id"].as_str().unwrap();
            let read = store.get(table, key).await.expect("get");
            assert_eq!(read.as_ref(), Some(record), "{} {key}", table.name());
        }
        expected.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
        assert_eq!(
            store.get_all(table).await.expect("get_all"),
            expected,
            "{}",
            table.name()
        );
        for index in table.indexes() {
            for record in &expected {
                let keys = match &record[index.key_path] {
                    serde_json::Value::Array(keys) if index.multi_entry => keys.clone(),
                    serde_json::Value::Null => continue,
                    key => vec![key.clone()],
                };
                for key in keys {
                    let found = store
                        .get_by_index(table, index.name, key.clone())
                        .await
                        .expect("get_by_index");
                    assert!(
                        found.contains(record),
                        "{}.{} = {key} finds {}",
                        table.name(),
                        index.name,
                        record["id"]
                    );
                }
            }
        }
    }

    let core = core_on(store);
    let listed = send(&core, "list_projects", json!({})).await;
    assert_eq!(listed["projects"][0]["name"], "Lighthouse");
    let id = listed["projects"][0]["id"].clone();
    let opened = send(&core, "open_project", json!({"id": id})).await;
    assert_eq!(opened["ui"]["selection"], json!([0, 4]));
    assert_eq!(
        send(&core, "get_chapter", json!({"chapter": "1"})).await["text"],
        "Mara climbed the tower. “Who’s there?” 🐉 Silence."
    );
    assert_eq!(
        send(&core, "get_chapter", json!({"chapter": "2"})).await["text"],
        "Dawn came grey.\n\nNoon."
    );
    let memory = send(&core, "memory", json!({})).await;
    assert_eq!(memory["goals"][0]["title"], "Finish act one");
    // Its first open gave the project its Yjs document, stored.
    send(&core, "checkpoint", json!({})).await;
    let reader = IdbStore::open(&name).await.expect("a second connection");
    let sync = reader.get_all(Table::Sync).await.expect("sync");
    reader.close();
    assert_eq!(sync.len(), 1, "{sync:?}");
    assert_eq!(sync[0]["project"], id);
    // Undo reaches back through the stored history.
    send(&core, "undo", json!({"origin": "agent"})).await;
    assert_eq!(
        send(&core, "get_chapter", json!({"chapter": "1"})).await["text"],
        "Mara climbed the stair. “Who’s there?” 🐉 Silence."
    );
    drop(core);
    IdbStore::delete(&name).await.expect("delete");
}

/// Counts the exceptions reported to this worker's global `error` event (where an exception
/// thrown by an IndexedDB event handler goes) while it is held.
struct Uncaught {
    seen: std::rc::Rc<std::cell::RefCell<Vec<String>>>,
    listener: wasm_bindgen::closure::Closure<dyn FnMut(wasm_bindgen::JsValue)>,
}

impl Uncaught {
    fn listen() -> Uncaught {
        use wasm_bindgen::JsCast;
        let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let log = std::rc::Rc::clone(&seen);
        let listener = wasm_bindgen::closure::Closure::<dyn FnMut(wasm_bindgen::JsValue)>::new(
            move |event: wasm_bindgen::JsValue| {
                let message = js_sys::Reflect::get(&event, &"message".into())
                    .ok()
                    .and_then(|m| m.as_string())
                    .unwrap_or_default();
                log.borrow_mut().push(message);
            },
        );
        let global = js_sys::global();
        let add: js_sys::Function = js_sys::Reflect::get(&global, &"addEventListener".into())
            .unwrap()
            .dyn_into()
            .unwrap();
        add.call2(&global, &"error".into(), listener.as_ref())
            .unwrap();
        Uncaught { seen, listener }
    }

    fn stop(self) -> Vec<String> {
        use wasm_bindgen::JsCast;
        let global = js_sys::global();
        let remove: js_sys::Function = js_sys::Reflect::get(&global, &"removeEventListener".into())
            .unwrap()
            .dyn_into()
            .unwrap();
        remove
            .call2(&global, &"error".into(), self.listener.as_ref())
            .unwrap();
        self.seen.take()
    }
}

/// Resolves after `ms` milliseconds (a few tasks of the event loop).
async fn pause(ms: i32) {
    use wasm_bindgen::JsCast;
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let global = js_sys::global();
        let set: js_sys::Function = js_sys::Reflect::get(&global, &"setTimeout".into())
            .unwrap()
            .dyn_into()
            .unwrap();
        set.call2(&global, &resolve, &ms.into()).unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}

#[wasm_bindgen_test]
async fn an_insert_conflict_throws_nothing_in_the_worker() {
    let name = fresh_name();
    let store = IdbStore::open(&name).await.expect("open");
    let record = |text: &str| json!({"id": "c1/00000000000000000001", "project": "p", "chapter": "c1", "text": text});
    let mut first = Batch::new();
    first.insert_value(Table::Changes, record("one"));
    store.commit(first).await.expect("first insert");
    let uncaught = Uncaught::listen();
    // The taken key alone, and between two other writes (those after it fail with
    // `AbortError`).
    for around in [false, true] {
        let mut again = Batch::new();
        if around {
            again.put_value(Table::Meta, json!({"id": "m1", "value": 1}));
        }
        again.insert_value(Table::Changes, record("two"));
        if around {
            again.put_value(Table::Meta, json!({"id": "m2", "value": 2}));
        }
        let refused = store.commit(again).await;
        assert!(
            matches!(refused, Err(draftsmith::store::StoreError::Conflict(_))),
            "{refused:?}"
        );
    }
    // The transaction's `abort` events come after the conflicts were reported.
    pause(50).await;
    let thrown = uncaught.stop();
    assert!(thrown.is_empty(), "thrown in the worker: {thrown:?}");
    assert_eq!(
        store
            .get(Table::Changes, "c1/00000000000000000001")
            .await
            .unwrap()
            .map(|r| r["text"].clone()),
        Some(json!("one"))
    );
    assert_eq!(store.get(Table::Meta, "m1").await.unwrap(), None);
    store.close();
    IdbStore::delete(&name).await.expect("delete");
}

/// The sole writer (the worker that holds the writer lock) skips a batch's expectations: it
/// reads nothing, so a batch whose expectation does not hold commits, where any other store
/// refuses it. An insert whose key is taken is still a conflict.
#[wasm_bindgen_test]
async fn the_sole_writer_skips_the_checks_for_another_writer() {
    let name = fresh_name();
    let store = IdbStore::open(&name).await.expect("open");
    let checked = |value: i64| {
        let mut batch = Batch::new();
        batch.expect(Table::Meta, "head:c1", "version", json!(7));
        batch.put_value(Table::Meta, json!({"id": "m1", "value": value}));
        batch
    };
    let refused = store.commit(checked(1)).await;
    assert!(
        matches!(refused, Err(draftsmith::store::StoreError::Conflict(_))),
        "{refused:?}"
    );
    assert_eq!(store.get(Table::Meta, "m1").await.unwrap(), None);
    store.set_sole_writer(true);
    store
        .commit(checked(2))
        .await
        .expect("the sole writer's batch");
    assert_eq!(
        store
            .get(Table::Meta, "m1")
            .await
            .unwrap()
            .map(|r| r["value"].clone()),
        Some(json!(2))
    );
    let insert = || {
        let mut batch = Batch::new();
        batch.insert_value(
            Table::Changes,
            json!({"id": "c1/00000000000000000001", "project": "p", "chapter": "c1"}),
        );
        batch
    };
    store.commit(insert()).await.expect("first insert");
    let again = store.commit(insert()).await;
    assert!(
        matches!(again, Err(draftsmith::store::StoreError::Conflict(_))),
        "{again:?}"
    );
    store.close();
    IdbStore::delete(&name).await.expect("delete");
}

/// Open `name` at `version` with a connection of the test's own; resolves to the first of its
/// events that settles it: `success`, `blocked` (a connection left open held it back) or
/// `error`, and the connection when it opened.
async fn open_raw(name: &str, version: u32) -> (String, Option<web_sys::IdbDatabase>) {
    use wasm_bindgen::JsCast;
    let factory: web_sys::IdbFactory = js_sys::Reflect::get(&js_sys::global(), &"indexedDB".into())
        .unwrap()
        .unchecked_into();
    let request = factory.open_with_u32(name, version).unwrap();
    let settled = js_sys::Promise::new(&mut |resolve, _| {
        request.set_onsuccess(Some(&resolve));
        request.set_onerror(Some(&resolve));
        request.set_onblocked(Some(&resolve));
    });
    let event: web_sys::Event = wasm_bindgen_futures::JsFuture::from(settled)
        .await
        .unwrap()
        .unchecked_into();
    let db = (event.type_() == "success").then(|| request.result().unwrap().unchecked_into());
    (event.type_(), db)
}

#[wasm_bindgen_test]
async fn another_connection_asking_for_a_newer_version_is_not_held_back() {
    let name = fresh_name();
    let store = IdbStore::open(&name).await.expect("open");
    // Written and read: both of the store's connections are open.
    let mut batch = Batch::new();
    batch.put_value(Table::Meta, json!({"id": "m1", "value": 1}));
    store.commit(batch).await.expect("write");
    assert!(store.get(Table::Meta, "m1").await.unwrap().is_some());
    // Another tab's newer schema: the store's connections give way at once.
    let (event, db) = open_raw(&name, SCHEMA_VERSION + 1).await;
    assert_eq!(event, "success", "the upgrade was held back");
    // The store can write no more, and says so.
    let mut batch = Batch::new();
    batch.put_value(Table::Meta, json!({"id": "m2", "value": 2}));
    assert!(store.commit(batch).await.is_err());
    drop(store);
    db.unwrap().close();
    IdbStore::delete(&name).await.expect("delete");
}
