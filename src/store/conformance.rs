//! The store conformance suite: test bodies that every [`Store`] must pass. Native tests run
//! them against [`super::MemoryStore`]; browser tests run the same bodies against `IdbStore`
//! inside a dedicated worker. Each function expects an empty store and panics (fails the
//! test) on the first broken promise.

use serde_json::json;
use serde_json::Value;

use super::{migrate, Batch, Store, StoreError, Table, SCHEMA_RECORD, SCHEMA_VERSION};

fn ids(records: &[Value]) -> Vec<&str> {
    records.iter().filter_map(|r| r["id"].as_str()).collect()
}

/// The `text` field of a stored record, if there is such a record.
async fn text_of(store: &dyn Store, table: Table, key: &str) -> Option<Value> {
    store
        .get(table, key)
        .await
        .expect("get")
        .map(|r| r["text"].clone())
}

/// Put, get, overwrite and delete, with non-ASCII text and nested values.
pub async fn put_get_overwrite_delete(store: &dyn Store) {
    let text = "“Hello,” she said. — «Oui.» 🐉 Café\u{0}end";
    let mut batch = Batch::new();
    batch.put_value(
        Table::Chapters,
        json!({"id": "c1", "project": "p1", "text": text, "nested": {"a": [1, 2.5, null, true]}}),
    );
    store.commit(batch).await.expect("commit");
    let got = store.get(Table::Chapters, "c1").await.expect("get");
    assert_eq!(got.as_ref().map(|r| r["text"].clone()), Some(json!(text)));
    assert_eq!(
        got.map(|r| r["nested"].clone()),
        Some(json!({"a": [1, 2.5, null, true]}))
    );
    assert_eq!(store.get(Table::Chapters, "nope").await.expect("get"), None);
    // The same key in another table is another record.
    assert_eq!(store.get(Table::Notes, "c1").await.expect("get"), None);

    let mut batch = Batch::new();
    batch.put_value(
        Table::Chapters,
        json!({"id": "c1", "project": "p1", "text": "v2"}),
    );
    store.commit(batch).await.expect("overwrite");
    assert_eq!(
        text_of(store, Table::Chapters, "c1").await,
        Some(json!("v2"))
    );
    let mut batch = Batch::new();
    batch.delete(Table::Chapters, "c1");
    batch.delete(Table::Chapters, "never-there");
    store.commit(batch).await.expect("delete");
    assert_eq!(store.get(Table::Chapters, "c1").await.expect("get"), None);
}

/// `get_all` returns every record in key order; `get_by_index` filters by field, with
/// multi-entry indexes matching array elements.
pub async fn get_all_and_indexes(store: &dyn Store) {
    let mut batch = Batch::new();
    for (id, project, tags) in [
        ("n3", "p1", json!(["plot", "meta:bedside-note"])),
        ("n1", "p1", json!(["character"])),
        ("n2", "p2", json!(["plot"])),
        ("n4", "p1", json!([])),
    ] {
        batch.put_value(
            Table::Notes,
            json!({"id": id, "project": project, "tags": tags, "updatedMs": 5}),
        );
    }
    store.commit(batch).await.expect("commit");
    let all = store.get_all(Table::Notes).await.expect("get_all");
    assert_eq!(ids(&all), ["n1", "n2", "n3", "n4"]);
    let p1 = store
        .get_by_index(Table::Notes, "project", json!("p1"))
        .await
        .expect("by project");
    assert_eq!(ids(&p1), ["n1", "n3", "n4"]);
    let plot = store
        .get_by_index(Table::Notes, "tags", json!("plot"))
        .await
        .expect("by tag");
    assert_eq!(ids(&plot), ["n2", "n3"]);
    let none = store
        .get_by_index(Table::Notes, "tags", json!("absent"))
        .await
        .expect("by tag");
    assert!(none.is_empty());
    assert!(store
        .get_by_index(Table::Notes, "no_such_index", json!(1))
        .await
        .is_err());
}

/// A batch with an invalid record writes nothing.
pub async fn invalid_batches_write_nothing(store: &dyn Store) {
    let mut batch = Batch::new();
    batch.put_value(Table::Projects, json!({"id": "ok", "name": "fine"}));
    batch.put_value(Table::Projects, json!({"name": "no id"}));
    let err = store.commit(batch).await.expect_err("invalid record");
    assert!(matches!(err, StoreError::Invalid { .. }), "{err:?}");
    assert_eq!(store.get(Table::Projects, "ok").await.expect("get"), None);

    let mut batch = Batch::new();
    batch.put_value(Table::Projects, json!("not an object"));
    assert!(store.commit(batch).await.is_err());
}

/// A transaction aborted between two writes (the state write and the history write) leaves
/// neither, and the previous state stays.
pub async fn aborted_batches_leave_the_previous_state(store: &dyn Store) {
    let mut before = Batch::new();
    before.put_value(
        Table::Chapters,
        json!({"id": "a1", "project": "p", "text": "old"}),
    );
    store.commit(before).await.expect("commit");

    let mut batch = Batch::new();
    batch.put_value(
        Table::Chapters,
        json!({"id": "a1", "project": "p", "text": "new"}),
    );
    batch.put_value(
        Table::History,
        json!({"id": "h1", "project": "p", "entry": {}}),
    );
    batch.put_value(Table::Audit, json!({"id": "x1", "project": "p", "time": 1}));
    batch.abort_after = Some(1);
    let err = store.commit(batch).await.expect_err("aborted");
    assert!(matches!(err, StoreError::Aborted(_)), "{err:?}");
    assert_eq!(
        text_of(store, Table::Chapters, "a1").await,
        Some(json!("old"))
    );
    assert_eq!(store.get(Table::History, "h1").await.expect("get"), None);
    assert_eq!(store.get(Table::Audit, "x1").await.expect("get"), None);
}

/// Expectations (compare-and-set) guard the whole batch: when every one holds, the batch
/// lands; when one fails, wherever it stands (first, between writes, last), the batch fails
/// with a conflict and none of its writes land, those placed before it included. An
/// expectation sees the writes placed before it in the same batch, and an absent record
/// (or field) meets `null`.
pub async fn expectations_guard_the_whole_batch(store: &dyn Store) {
    let mut setup = Batch::new();
    setup.put_value(Table::Projects, json!({"id": "e1", "name": "E", "rev": 1}));
    store.commit(setup).await.expect("setup");
    let rev = |record: Option<Value>| record.map(|r| r["rev"].clone());

    let mut holds = Batch::new();
    holds.put_value(
        Table::Chapters,
        json!({"id": "ea", "project": "e1", "text": "a"}),
    );
    holds.expect(Table::Projects, "e1", "rev", json!(1));
    holds.put_value(Table::Projects, json!({"id": "e1", "name": "E", "rev": 2}));
    holds.expect(Table::Meta, "e-absent", "rev", Value::Null);
    holds.expect(Table::Projects, "e1", "missing_field", Value::Null);
    // Sees the write placed before it in the same batch.
    holds.expect(Table::Projects, "e1", "rev", json!(2));
    holds.put_value(
        Table::History,
        json!({"id": "eh", "project": "e1", "entry": {}}),
    );
    store.commit(holds).await.expect("every expectation holds");
    assert!(store
        .get(Table::Chapters, "ea")
        .await
        .expect("get")
        .is_some());
    assert!(store
        .get(Table::History, "eh")
        .await
        .expect("get")
        .is_some());
    assert_eq!(
        rev(store.get(Table::Projects, "e1").await.expect("get")),
        Some(json!(2))
    );

    // A failing expectation first, between writes, last, and after one that holds.
    let stale: [&dyn Fn(&mut Batch); 4] = [
        &|b| b.expect(Table::Projects, "e1", "rev", json!(1)),
        &|b| b.expect(Table::Meta, "e-absent", "rev", json!(3)),
        &|b| b.expect(Table::Projects, "e1", "name", json!("F")),
        &|b| {
            b.expect(Table::Projects, "e1", "rev", json!(2));
            b.expect(Table::Projects, "e1", "rev", json!(7));
        },
    ];
    for (at, fail) in stale.iter().enumerate() {
        for place in 0..3 {
            let mut batch = Batch::new();
            if place == 0 {
                fail(&mut batch);
            }
            batch.put_value(
                Table::Chapters,
                json!({"id": format!("eb{at}{place}"), "project": "e1", "text": "b"}),
            );
            batch.put_value(Table::Projects, json!({"id": "e1", "name": "X", "rev": 9}));
            if place == 1 {
                fail(&mut batch);
            }
            batch.delete(Table::Chapters, "ea");
            batch.put_value(
                Table::Notes,
                json!({"id": format!("en{at}{place}"), "project": "e1", "tags": []}),
            );
            if place == 2 {
                fail(&mut batch);
            }
            let err = store.commit(batch).await.expect_err("stale expectation");
            assert!(
                matches!(err, StoreError::Conflict(_)),
                "case {at}/{place}: {err:?}"
            );
            let chapter = store
                .get(Table::Chapters, &format!("eb{at}{place}"))
                .await
                .expect("get");
            assert_eq!(
                chapter, None,
                "case {at}/{place}: a write before the conflict landed"
            );
            let note = store
                .get(Table::Notes, &format!("en{at}{place}"))
                .await
                .expect("get");
            assert_eq!(
                note, None,
                "case {at}/{place}: a write after the conflict landed"
            );
            assert!(
                store
                    .get(Table::Chapters, "ea")
                    .await
                    .expect("get")
                    .is_some(),
                "case {at}/{place}: a delete landed"
            );
            let project = store.get(Table::Projects, "e1").await.expect("get");
            assert_eq!(rev(project.clone()), Some(json!(2)), "case {at}/{place}");
            assert_eq!(project.map(|p| p["name"].clone()), Some(json!("E")));
        }
    }
}

/// An insert writes a record that is not there yet; when its key is taken (stored before,
/// or put earlier in the same batch), the batch fails with a conflict and none of its writes
/// land, whether or not the batch also has expectations (IndexedDB: with none, the
/// transaction is committed before the insert's answer comes).
pub async fn inserts_refuse_a_taken_key(store: &dyn Store) {
    let record = |id: &str, text: &str| json!({"id": id, "project": "i1", "text": text});
    let mut first = Batch::new();
    first.put_value(Table::History, record("ih0", "before"));
    first.insert_value(Table::Changes, record("i1/1", "one"));
    store.commit(first).await.expect("a new key is inserted");
    assert_eq!(
        text_of(store, Table::Changes, "i1/1").await,
        Some(json!("one"))
    );
    for with_expectation in [false, true] {
        let cases: [&dyn Fn(&mut Batch); 2] = [
            // Stored before.
            &|b| b.insert_value(Table::Changes, record("i1/1", "again")),
            // Put earlier in the same batch.
            &|b| {
                b.put_value(Table::Changes, record("i1/2", "put"));
                b.insert_value(Table::Changes, record("i1/2", "inserted"));
            },
        ];
        for (at, taken) in cases.iter().enumerate() {
            let mut batch = Batch::new();
            if with_expectation {
                batch.expect(Table::Meta, "i-absent", "rev", Value::Null);
            }
            batch.put_value(Table::History, record("ih1", "written before"));
            taken(&mut batch);
            batch.put_value(
                Table::Notes,
                json!({"id": "in1", "project": "i1", "tags": []}),
            );
            let err = store.commit(batch).await.expect_err("the key is taken");
            assert!(
                matches!(err, StoreError::Conflict(_)),
                "case {at} ({with_expectation}): {err:?}"
            );
            for (table, key) in [
                (Table::History, "ih1"),
                (Table::Changes, "i1/2"),
                (Table::Notes, "in1"),
            ] {
                assert_eq!(
                    store.get(table, key).await.expect("get"),
                    None,
                    "case {at} ({with_expectation}): {key} landed"
                );
            }
            assert_eq!(
                text_of(store, Table::Changes, "i1/1").await,
                Some(json!("one")),
                "case {at} ({with_expectation}): the stored record changed"
            );
        }
    }
}

/// A record of about a megabyte round-trips.
pub async fn large_records_round_trip(store: &dyn Store) {
    let text: String = "Mara climbed the stair. “Who’s there?” 🐉\n".repeat(24_000);
    let mut batch = Batch::new();
    batch.put_value(
        Table::Chapters,
        json!({"id": "big", "project": "p", "text": text}),
    );
    store.commit(batch).await.expect("commit");
    let got = store.get(Table::Chapters, "big").await.expect("get");
    assert_eq!(got.map(|r| r["text"].clone()), Some(json!(text)));
}

/// A batch of hundreds of writes (more than a store places at once) lands whole, in order
/// (a later write of a key wins, a delete after a put removes it); one aborted after most of
/// its writes, or refused by its last expectation, leaves nothing of it.
pub async fn many_writes_land_whole_or_not_at_all(store: &dyn Store) {
    let note = |i: usize, text: &str| {
        json!({"id": format!("m{i:03}"), "project": "m", "tags": ["bulk", format!("t{}", i % 7)],
               "updatedMs": i, "note": {"text": text}})
    };
    let mut batch = Batch::new();
    for i in 0..300 {
        batch.put_value(Table::Notes, note(i, "first"));
    }
    batch.put_value(Table::Notes, note(150, "second"));
    batch.delete(Table::Notes, "m007");
    batch.put_value(
        Table::Projects,
        json!({"id": "m", "name": "Many", "rev": 1}),
    );
    store.commit(batch).await.expect("commit");
    let notes = store
        .get_by_index(Table::Notes, "project", json!("m"))
        .await
        .expect("index");
    assert_eq!(notes.len(), 299);
    let text = |i: usize| {
        notes
            .iter()
            .find(|n| n["id"] == format!("m{i:03}"))
            .map(|n| n["note"]["text"].clone())
    };
    assert_eq!(text(150), Some(json!("second")));
    assert_eq!(text(7), None);
    assert_eq!(text(299), Some(json!("first")));
    let tagged = store
        .get_by_index(Table::Notes, "tags", json!("t3"))
        .await
        .expect("index");
    assert_eq!(tagged.len(), (0..300).filter(|i| i % 7 == 3).count());

    // Aborted after 250 of its 301 writes, then refused by its last expectation: nothing of
    // either lands.
    for refusal in 0..2 {
        let mut batch = Batch::new();
        for i in 0..300 {
            batch.put_value(Table::Notes, note(i, "third"));
        }
        batch.delete(Table::Notes, "m150");
        if refusal == 0 {
            batch.abort_after = Some(250);
        } else {
            batch.expect(Table::Projects, "m", "rev", json!(2));
        }
        let err = store.commit(batch).await.expect_err("aborted or refused");
        assert!(
            matches!(err, StoreError::Aborted(_) | StoreError::Conflict(_)),
            "{err:?}"
        );
        for i in [0, 63, 64, 65, 150, 249, 299] {
            let got = store
                .get(Table::Notes, &format!("m{i:03}"))
                .await
                .expect("get");
            assert_eq!(
                got.map(|n| n["note"]["text"].clone()),
                Some(json!(if i == 150 { "second" } else { "first" })),
                "case {refusal}, note {i}"
            );
        }
    }
}

/// The texts of the notes of project `b`, by id.
async fn bulk_texts(store: &dyn Store) -> Vec<String> {
    let mut notes = store
        .get_by_index(Table::Notes, "project", json!("b"))
        .await
        .expect("index");
    notes.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    notes
        .iter()
        .map(|n| n["note"]["text"].as_str().unwrap_or("").to_string())
        .collect()
}

/// A bulk write of puts ([`Store::begin_puts`]) lands whole once committed; dropped before,
/// or refused a record, it writes nothing, however many of its puts a store has placed.
pub async fn bulk_puts_land_whole_or_not_at_all(store: &dyn Store) {
    let note = |i: usize, text: &str| {
        json!({"id": format!("b{i:03}"), "project": "b", "tags": ["bulk"], "updatedMs": i,
               "note": {"text": text}})
    };
    // Nothing added: nothing written.
    let puts = store.begin_puts(Table::Notes).await.expect("begin");
    puts.commit().await.expect("an empty bulk write");
    assert!(bulk_texts(store).await.is_empty());
    // More than a few chunks' worth: all of them.
    let mut puts = store.begin_puts(Table::Notes).await.expect("begin");
    for i in 0..120 {
        puts.put(note(i, "first").into()).expect("put");
    }
    puts.commit().await.expect("commit");
    assert_eq!(bulk_texts(store).await, vec!["first"; 120]);
    // Dropped after most of its puts (overwrites, and a new record): nothing of it.
    let mut puts = store.begin_puts(Table::Notes).await.expect("begin");
    for i in 0..121 {
        puts.put(note(i, "second").into()).expect("put");
    }
    drop(puts);
    assert_eq!(bulk_texts(store).await, vec!["first"; 120]);
    // A record without an id is refused, and the bulk write is dropped: nothing of it.
    let mut puts = store.begin_puts(Table::Notes).await.expect("begin");
    for i in 0..60 {
        puts.put(note(i, "third").into()).expect("put");
    }
    let refused = puts.put(json!({"project": "b", "note": {"text": "no id"}}).into());
    assert!(
        matches!(refused, Err(StoreError::Invalid { .. })),
        "{refused:?}"
    );
    drop(puts);
    assert_eq!(bulk_texts(store).await, vec!["first"; 120]);
}

/// Every test body above, each on its own keys, in one empty store.
pub async fn run_all(store: &dyn Store) {
    put_get_overwrite_delete(store).await;
    get_all_and_indexes(store).await;
    invalid_batches_write_nothing(store).await;
    aborted_batches_leave_the_previous_state(store).await;
    expectations_guard_the_whole_batch(store).await;
    inserts_refuse_a_taken_key(store).await;
    large_records_round_trip(store).await;
    many_writes_land_whole_or_not_at_all(store).await;
    bulk_puts_land_whole_or_not_at_all(store).await;
}

/// Data written with schema version 1 (projects without `updatedMs`, no schema record) is
/// migrated; a second migration does nothing. Expects an empty store.
pub async fn migration_from_v1(store: &dyn Store) {
    let mut v1 = Batch::new();
    v1.put_value(
        Table::Projects,
        json!({"id": "old", "name": "Old", "createdMs": 42}),
    );
    v1.put_value(
        Table::Chapters,
        json!({"id": "oc", "project": "old", "text": "kept"}),
    );
    store.commit(v1).await.expect("v1 data");
    assert_eq!(migrate(store).await.expect("migrate"), 1);
    let project = store
        .get(Table::Projects, "old")
        .await
        .expect("get")
        .expect("kept");
    assert_eq!(project["updatedMs"], 42);
    assert_eq!(project["name"], "Old");
    let schema = store
        .get(Table::Meta, SCHEMA_RECORD)
        .await
        .expect("get")
        .expect("record");
    assert_eq!(schema["version"], SCHEMA_VERSION);
    assert_eq!(migrate(store).await.expect("again"), SCHEMA_VERSION);
    let chapter = store
        .get(Table::Chapters, "oc")
        .await
        .expect("get")
        .expect("kept");
    assert_eq!(chapter["text"], "kept");
    // The tables added in version 2 work.
    let mut batch = Batch::new();
    batch.put_value(
        Table::Notes,
        json!({"id": "n", "project": "old", "tags": ["x"]}),
    );
    store.commit(batch).await.expect("v2 table");
    let by_tag = store
        .get_by_index(Table::Notes, "tags", json!("x"))
        .await
        .expect("index");
    assert_eq!(by_tag.len(), 1);
}
