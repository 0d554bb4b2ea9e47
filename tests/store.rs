//! The store conformance suite against the in-memory store (the browser runs the same
//! bodies against IndexedDB in `tests/web_store.rs`).
#![cfg(not(target_arch = "wasm32"))]

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use draftsmith::store::{
    conformance, Batch, MemoryStore, Puts, Record, Store, StoreError, StoreFuture, Table,
};
use draftsmith::{IdSource, SequentialIds};
use futures::executor::block_on;
use serde_json::{json, Value};

#[test]
fn memory_store_passes_the_conformance_suite() {
    block_on(conformance::run_all(&MemoryStore::new()));
}

#[test]
fn memory_store_migrates_version_1_data() {
    block_on(conformance::migration_from_v1(&MemoryStore::new()));
}

#[test]
fn a_store_already_up_to_date_is_migrated_without_a_write() {
    use draftsmith::store::faulty::Faulty;
    use draftsmith::store::{migrate, Store, Table, SCHEMA_RECORD, SCHEMA_VERSION};
    let store = Faulty::new(MemoryStore::new());
    // A new store gets its schema record: one write.
    assert_eq!(block_on(migrate(&store)).expect("new"), SCHEMA_VERSION);
    assert_eq!(store.commits(), 1);
    let record = block_on(store.get(Table::Meta, SCHEMA_RECORD)).expect("get");
    assert_eq!(
        record.expect("the schema record")["version"],
        SCHEMA_VERSION
    );
    // Every later start reads it and writes nothing.
    for _ in 0..3 {
        assert_eq!(block_on(migrate(&store)).expect("again"), SCHEMA_VERSION);
    }
    assert_eq!(store.commits(), 1);
}

#[test]
fn a_start_told_the_current_schema_version_reads_and_writes_nothing_and_any_other_migrates() {
    use draftsmith::store::faulty::Faulty;
    use draftsmith::store::{migrate_recorded, Batch, Store, Table, SCHEMA_VERSION};
    use serde_json::json;
    let store = Faulty::new(MemoryStore::new());
    // Version-1 data: a project without `updatedMs`, and no schema record.
    let mut v1 = Batch::new();
    v1.put_value(Table::Projects, json!({"id": "old", "createdMs": 42}));
    block_on(store.commit(v1)).expect("v1 data");
    let updated = || {
        block_on(store.get(Table::Projects, "old"))
            .expect("get")
            .expect("project")["updatedMs"]
            .clone()
    };

    // Told the current version (as a worker that read the record is): no read, no write.
    assert_eq!(
        block_on(migrate_recorded(&store, Some(SCHEMA_VERSION))).expect("told current"),
        SCHEMA_VERSION
    );
    assert_eq!(store.reads(), 0);
    assert_eq!(updated(), serde_json::Value::Null, "nothing migrated");

    // Told an older version: the data is read and migrated.
    let before = store.reads();
    assert_eq!(
        block_on(migrate_recorded(&store, Some(SCHEMA_VERSION - 1))).expect("told older"),
        1
    );
    assert!(store.reads() > before + 1);
    assert_eq!(updated(), 42);

    // Told nothing: the record is read, and now says the current version.
    let before = store.reads();
    assert_eq!(
        block_on(migrate_recorded(&store, None)).expect("told nothing"),
        SCHEMA_VERSION
    );
    assert_eq!(store.reads(), before + 1);
}

/// The worker (`packages/draftsmith/src/worker.js`) reads the schema record on its early
/// connection before the core is loaded, so it names the table, the key and the field itself:
/// they must be the store's.
#[test]
fn the_worker_reads_the_schema_record_where_the_store_writes_it() {
    use draftsmith::store::{migrate, Store, Table, SCHEMA_RECORD, SCHEMA_VERSION};
    let worker = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/packages/draftsmith/src/worker.js"
    ))
    .expect("worker.js");
    let meta = Table::Meta.name();
    for read in [
        format!("db.objectStoreNames.contains('{meta}')"),
        format!("db.transaction('{meta}', 'readonly')"),
        format!("tx.objectStore('{meta}').get('{SCHEMA_RECORD}')"),
        "read.result?.version".to_string(),
    ] {
        assert!(worker.contains(&read), "worker.js does not read `{read}`");
    }
    // The field the worker reads is where the migration writes the version.
    let store = MemoryStore::new();
    block_on(migrate(&store)).expect("migrate");
    let record = block_on(store.get(Table::Meta, SCHEMA_RECORD))
        .expect("get")
        .expect("the schema record");
    assert_eq!(record["version"], SCHEMA_VERSION);
}

mod expectations_first {
    use draftsmith::store::{Batch, MemoryStore, Op, Store, StoreError, Table};
    use futures::executor::block_on;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    const TABLES: [Table; 2] = [Table::Meta, Table::Projects];

    fn op() -> impl Strategy<Value = Op> {
        let table = prop::sample::select(TABLES.to_vec());
        let key = prop::sample::select(vec!["a", "b", "c"]);
        let rev = prop::option::of(0u64..3);
        prop_oneof![
            (table.clone(), key.clone(), 0u64..3).prop_map(|(table, key, rev)| Op::Put {
                table,
                value: json!({"id": key, "rev": rev}).into(),
            }),
            (table.clone(), key.clone(), 0u64..3).prop_map(|(table, key, rev)| Op::Insert {
                table,
                value: json!({"id": key, "rev": rev}).into(),
            }),
            (table.clone(), key.clone()).prop_map(|(table, key)| Op::Delete {
                table,
                key: key.into(),
            }),
            (table, key, rev).prop_map(|(table, key, rev)| Op::Expect {
                table,
                key: key.into(),
                field: "rev".into(),
                equals: rev.map_or(Value::Null, |r| json!(r)),
            }),
        ]
    }

    fn state(store: &MemoryStore) -> Vec<Vec<Value>> {
        TABLES
            .iter()
            .map(|t| block_on(store.get_all(*t)).expect("get_all"))
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Moving the expectations that no earlier write touches to the front changes
        /// nothing: the same outcome (written, or refused as a conflict) and the same state.
        #[test]
        fn moving_untouched_expectations_first_means_the_same(
            setup in prop::collection::vec(op(), 0..6),
            ops in prop::collection::vec(op(), 0..10),
        ) {
            let setup: Vec<Op> = setup.into_iter().filter(|o| matches!(o, Op::Put { .. } | Op::Delete { .. })).collect();
            let (a, b) = (MemoryStore::new(), MemoryStore::new());
            for store in [&a, &b] {
                block_on(store.commit(Batch { ops: setup.clone(), abort_after: None })).expect("setup");
            }
            let batch = Batch { ops, abort_after: None };
            let moved = batch.clone().expectations_first();
            prop_assert_eq!(moved.ops.len(), batch.ops.len());
            let first = block_on(a.commit(batch));
            let second = block_on(b.commit(moved));
            prop_assert_eq!(first.is_ok(), second.is_ok());
            if let Err(e) = &first {
                prop_assert!(matches!(e, StoreError::Conflict(_)), "{:?}", e);
            }
            prop_assert_eq!(state(&a), state(&b));
        }
    }

    #[test]
    fn expectations_of_untouched_records_move_first_and_the_others_stay() {
        let mut batch = Batch::new();
        batch.put_value(Table::Meta, json!({"id": "x", "rev": 1}));
        batch.expect(Table::Meta, "h", "rev", json!(1));
        batch.expect(Table::Meta, "x", "rev", json!(1));
        batch.put_value(Table::Meta, json!({"id": "h", "rev": 2}));
        batch.expect(Table::Projects, "p", "rev", Value::Null);
        batch.insert_value(Table::Changes, json!({"id": "c"}));
        batch.expect(Table::Changes, "c", "rev", Value::Null);
        let kinds: Vec<String> = batch
            .expectations_first()
            .ops
            .iter()
            .map(|op| match op {
                Op::Put { value, .. } => format!(
                    "put {}",
                    value.to_value().unwrap()["id"].as_str().unwrap_or("")
                ),
                Op::Insert { value, .. } => format!(
                    "insert {}",
                    value.to_value().unwrap()["id"].as_str().unwrap_or("")
                ),
                Op::Delete { key, .. } => format!("delete {key}"),
                Op::Expect { key, .. } => format!("expect {key}"),
            })
            .collect();
        assert_eq!(
            kinds,
            ["expect h", "expect p", "put x", "expect x", "put h", "insert c", "expect c"]
        );
    }
}

/// A store that counts the bulk writes begun on it, and notes `probe()` at each of their puts.
struct Watching {
    inner: MemoryStore,
    begun: Cell<usize>,
    probe: Box<dyn Fn() -> usize>,
    probed: RefCell<Vec<usize>>,
}

impl Watching {
    fn new(probe: impl Fn() -> usize + 'static) -> Self {
        Self {
            inner: MemoryStore::new(),
            begun: Cell::new(0),
            probe: Box::new(probe),
            probed: RefCell::new(Vec::new()),
        }
    }
}

impl Store for Watching {
    fn get<'a>(&'a self, table: Table, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        self.inner.get(table, key)
    }

    fn get_all(&self, table: Table) -> StoreFuture<'_, Vec<Value>> {
        self.inner.get_all(table)
    }

    fn get_by_index<'a>(
        &'a self,
        table: Table,
        index: &'a str,
        value: Value,
    ) -> StoreFuture<'a, Vec<Value>> {
        self.inner.get_by_index(table, index, value)
    }

    fn commit(&self, batch: Batch) -> StoreFuture<'_, ()> {
        self.inner.commit(batch)
    }

    fn begin_puts(&self, table: Table) -> StoreFuture<'_, Box<dyn Puts<'_> + '_>> {
        self.begun.set(self.begun.get() + 1);
        Box::pin(async move {
            let inner = self.inner.begin_puts(table).await?;
            Ok(Box::new(WatchedPuts { store: self, inner }) as Box<dyn Puts<'_>>)
        })
    }
}

/// [`Watching`]'s bulk write.
struct WatchedPuts<'a> {
    store: &'a Watching,
    inner: Box<dyn Puts<'a> + 'a>,
}

impl<'a> Puts<'a> for WatchedPuts<'a> {
    fn put(&mut self, record: Record) -> Result<(), StoreError> {
        self.store.probed.borrow_mut().push((self.store.probe)());
        self.inner.put(record)
    }

    fn commit(self: Box<Self>) -> StoreFuture<'a, ()> {
        self.inner.commit()
    }
}

/// Ids that count how many were given.
struct CountedIds {
    inner: SequentialIds,
    given: Cell<usize>,
}

impl IdSource for CountedIds {
    fn next_id(&self) -> String {
        self.given.set(self.given.get() + 1);
        self.inner.next_id()
    }
}

/// A bulk write of notes puts each note's record before it reads the next: when the k-th
/// record is put, the k-th note has its id and the next has none yet (each new note takes one
/// id). All of them are saved, in one bulk write.
#[test]
fn a_bulk_write_of_notes_puts_each_note_before_it_reads_the_next() {
    use draftsmith::core::Env;
    use draftsmith::{Core, ManualClock, RecordingSink};
    let ids = Rc::new(CountedIds {
        inner: SequentialIds::new("n"),
        given: Cell::new(0),
    });
    let counted = Rc::clone(&ids);
    let store = Rc::new(Watching::new(move || counted.given.get()));
    let core = Core::new(Env {
        clock: Rc::new(ManualClock::new(1_000)),
        ids: ids.clone(),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: Rc::new(RecordingSink::default()),
        store: store.clone(),
    });
    let send = |kind: &str, params: Value| -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        serde_json::from_str(&block_on(core.handle_text(&text))).expect("a response")
    };
    assert_eq!(send("create_project", json!({"name": "P"}))["ok"], true);
    let texts = [
        "Rain at dusk",
        "Wind at night",
        "Snow by morning",
        "Fog at noon",
    ];
    let notes: Vec<Value> = texts
        .iter()
        .map(|text| json!({"text": text, "noteType": "observation"}))
        .collect();
    let written = send("write_memory_notes", json!({ "notes": notes }));
    assert_eq!(
        written["result"]["written"].as_array().map(Vec::len),
        Some(4),
        "{written}"
    );
    assert_eq!(store.begun.get(), 1);
    let probed = store.probed.borrow();
    let first = probed[0];
    let ids_at_each_put: Vec<usize> = probed.iter().map(|given| given - first).collect();
    assert_eq!(ids_at_each_put, [0, 1, 2, 3], "one note read per put");
    let saved = block_on(store.get_all(Table::Notes)).expect("read");
    for text in texts {
        assert!(saved.iter().any(|n| n["note"]["text"] == text), "{text}");
    }
}

/// `Faulty` (the worker's store wraps IndexedDB in it) begins the bulk write of the store it
/// wraps, so that IndexedDB places its puts as they come, and applies its faults when the bulk
/// write is committed: counted as a commit, refused whole when a commit fails.
#[test]
fn faulty_passes_bulk_writes_to_the_store_it_wraps_with_its_faults() {
    use draftsmith::store::faulty::Faulty;
    let store = Faulty::new(Watching::new(|| 0));
    let write = |ids: &[&str]| {
        block_on(async {
            let mut puts = store.begin_puts(Table::Notes).await?;
            for id in ids {
                puts.put(json!({"id": id, "project": "p"}).into())?;
            }
            puts.commit().await
        })
    };
    write(&["a", "b"]).expect("a bulk write");
    assert_eq!(store.inner().begun.get(), 1, "begun on the wrapped store");
    assert_eq!(store.commits(), 1);
    store.fail_next(1);
    assert!(write(&["c"]).is_err(), "a failing commit fails it");
    assert_eq!(store.commits(), 2);
    let kept = block_on(store.get_all(Table::Notes)).expect("read");
    let ids: Vec<_> = kept.iter().map(|n| n["id"].clone()).collect();
    assert_eq!(ids, [json!("a"), json!("b")], "nothing of the failed one");
}
