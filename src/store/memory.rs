//! [`MemoryStore`]: the in-memory twin of the IndexedDB store, for native tests and for
//! running without persistence. Same semantics: atomic batches, index queries, key order.
//!
//! A store can be saved as one JSON document ([`MemoryStore::to_json`]) and loaded back
//! ([`MemoryStore::from_json`]); the headless core uses that to keep its store in a file:
//!
//! ```json
//! {"format": "draftsmith-memory-store", "version": 1,
//!  "tables": {"projects": [{"id": "p1", ...}], "chapters": [...], ...}}
//! ```
//!
//! Each table is a list of its records in key order; empty tables are left out.
//! [`MemoryStore::revision`] counts the commits that wrote something, so a caller can tell
//! whether a request changed the store.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use serde_json::json;
use serde_json::{Map, Value};

use super::{record_key, value_key, Batch, Op, Store, StoreError, StoreFuture, Table};

/// The `format` field of a saved store.
pub const SNAPSHOT_FORMAT: &str = "draftsmith-memory-store";

/// The `version` of the saved-store layout this build writes and reads.
pub const SNAPSHOT_VERSION: u64 = 1;

/// Records in memory, by table and key.
#[derive(Debug, Default)]
pub struct MemoryStore {
    tables: RefCell<BTreeMap<Table, BTreeMap<String, Value>>>,
    /// Commits that wrote at least one record or delete.
    revision: Cell<u64>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many records a table holds.
    pub fn len(&self, table: Table) -> usize {
        self.tables.borrow().get(&table).map_or(0, BTreeMap::len)
    }

    /// True when no table holds a record.
    pub fn is_empty(&self) -> bool {
        self.tables.borrow().values().all(BTreeMap::is_empty)
    }

    /// How many commits have written something (a put or a delete) since this store was
    /// made or loaded. Unchanged by reads, empty batches and failed commits.
    pub fn revision(&self) -> u64 {
        self.revision.get()
    }

    /// The whole store as one JSON document (see the module docs), tables in schema order
    /// and records in key order, so equal stores give equal documents.
    pub fn to_json(&self) -> Value {
        let tables = self.tables.borrow();
        let mut out = Map::new();
        for table in Table::ALL {
            if let Some(records) = tables.get(&table).filter(|t| !t.is_empty()) {
                out.insert(
                    table.name().to_string(),
                    Value::Array(records.values().cloned().collect()),
                );
            }
        }
        json!({
            "format": SNAPSHOT_FORMAT,
            "version": SNAPSHOT_VERSION,
            "tables": out,
        })
    }

    /// A store holding what [`MemoryStore::to_json`] wrote. Everything is checked before
    /// anything is kept: the format and version, that each table is known and a list, that
    /// each record is an object with a non-empty string `id`, and that no id repeats in a
    /// table. The error says what was wrong and where.
    pub fn from_json(value: Value) -> Result<Self, StoreError> {
        let bad = |why: String| StoreError::Failed(format!("not a draftsmith store file: {why}"));
        let Value::Object(mut document) = value else {
            return Err(bad(format!(
                "expected an object {{\"format\": \"{SNAPSHOT_FORMAT}\", \"version\": {SNAPSHOT_VERSION}, \"tables\": {{...}}}}, got {}",
                crate::names::json_kind(&value)
            )));
        };
        match document.get("format") {
            Some(Value::String(f)) if f == SNAPSHOT_FORMAT => {}
            other => {
                return Err(bad(format!(
                    "'format' must be \"{SNAPSHOT_FORMAT}\", got {}",
                    other.map_or_else(|| "nothing".to_string(), Value::to_string)
                )))
            }
        }
        match document.get("version").and_then(Value::as_u64) {
            Some(SNAPSHOT_VERSION) => {}
            Some(v) => {
                return Err(bad(format!(
                    "version {v} is not supported; this build reads version {SNAPSHOT_VERSION}"
                )))
            }
            None => return Err(bad("'version' must be a whole number".into())),
        }
        let tables = match document.remove("tables") {
            Some(Value::Object(tables)) => tables,
            Some(other) => {
                return Err(bad(format!(
                    "'tables' must be an object of table name to records, got {}",
                    crate::names::json_kind(&other)
                )))
            }
            None => return Err(bad("'tables' is missing".into())),
        };
        let mut loaded: BTreeMap<Table, BTreeMap<String, Value>> = BTreeMap::new();
        for (name, records) in tables {
            let Some(table) = Table::ALL.into_iter().find(|t| t.name() == name) else {
                let known: Vec<&str> = Table::ALL.iter().map(|t| t.name()).collect();
                return Err(bad(format!(
                    "unknown table '{name}'; the tables are {}",
                    known.join(", ")
                )));
            };
            let Value::Array(records) = records else {
                return Err(bad(format!(
                    "table '{name}' must be a list of records, got {}",
                    crate::names::json_kind(&records)
                )));
            };
            let rows = loaded.entry(table).or_default();
            for (n, record) in records.into_iter().enumerate() {
                let key = value_key(table, &record)
                    .map_err(|e| StoreError::Invalid {
                        table: table.name(),
                        reason: format!("record {} of the store file: {e}", n + 1),
                    })?
                    .to_string();
                if rows.contains_key(&key) {
                    return Err(StoreError::Invalid {
                        table: table.name(),
                        reason: format!(
                            "record {} of the store file repeats the id '{key}'",
                            n + 1
                        ),
                    });
                }
                rows.insert(key, record);
            }
        }
        Ok(Self {
            tables: RefCell::new(loaded),
            revision: Cell::new(0),
        })
    }

    fn matches(record: &Value, field: &str, value: &Value) -> bool {
        match record.get(field) {
            Some(Value::Array(items)) => items.contains(value),
            Some(v) => v == value,
            None => false,
        }
    }
}

impl Store for MemoryStore {
    fn get<'a>(&'a self, table: Table, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        let found = self
            .tables
            .borrow()
            .get(&table)
            .and_then(|t| t.get(key).cloned());
        Box::pin(async move { Ok(found) })
    }

    fn get_all(&self, table: Table) -> StoreFuture<'_, Vec<Value>> {
        let all = self
            .tables
            .borrow()
            .get(&table)
            .map(|t| t.values().cloned().collect())
            .unwrap_or_default();
        Box::pin(async move { Ok(all) })
    }

    fn get_by_index<'a>(
        &'a self,
        table: Table,
        index: &'a str,
        value: Value,
    ) -> StoreFuture<'a, Vec<Value>> {
        let result = match table.indexes().iter().find(|i| i.name == index) {
            None => Err(StoreError::Failed(format!(
                "table '{}' has no index '{index}'",
                table.name()
            ))),
            Some(ix) => Ok(self
                .tables
                .borrow()
                .get(&table)
                .map(|t| {
                    t.values()
                        .filter(|r| {
                            if ix.multi_entry {
                                Self::matches(r, ix.key_path, &value)
                            } else {
                                r.get(ix.key_path) == Some(&value)
                            }
                        })
                        .cloned()
                        .collect()
                })
                .unwrap_or_default()),
        };
        Box::pin(async move { result })
    }

    fn commit(&self, batch: Batch) -> StoreFuture<'_, ()> {
        let result = (|| {
            batch.validate()?;
            // Apply in place, remembering what each write replaced; on any failure put it
            // all back, so a failed commit leaves nothing (and costs what the batch costs,
            // not what the tables hold).
            let mut tables = self.tables.borrow_mut();
            let mut undo: Vec<(Table, String, Option<Value>)> = Vec::new();
            let mut failure = None;
            for (written, op) in batch.ops.iter().enumerate() {
                if batch.abort_after == Some(written) {
                    failure = Some(StoreError::Aborted(format!(
                        "aborted after {written} writes (fault injection)"
                    )));
                    break;
                }
                match op {
                    Op::Put { table, value } | Op::Insert { table, value } => {
                        let key = match record_key(*table, value) {
                            Ok(key) => key.to_string(),
                            Err(e) => {
                                failure = Some(e);
                                break;
                            }
                        };
                        let rows = tables.entry(*table).or_default();
                        if matches!(op, Op::Insert { .. }) && rows.contains_key(&key) {
                            failure = Some(StoreError::Conflict(format!(
                                "'{key}' in '{}' exists already",
                                table.name()
                            )));
                            break;
                        }
                        let value = match value.to_value() {
                            Ok(value) => value,
                            Err(e) => {
                                failure = Some(e);
                                break;
                            }
                        };
                        let old = rows.insert(key.clone(), value);
                        undo.push((*table, key, old));
                    }
                    Op::Delete { table, key } => {
                        let old = tables.entry(*table).or_default().remove(key);
                        undo.push((*table, key.clone(), old));
                    }
                    Op::Expect {
                        table,
                        key,
                        field,
                        equals,
                    } => {
                        let record = tables.get(table).and_then(|t| t.get(key));
                        if !Op::expectation_holds(record, field, equals) {
                            failure = Some(StoreError::Conflict(format!(
                                "'{key}' in '{}' no longer has {field} = {equals}",
                                table.name()
                            )));
                            break;
                        }
                    }
                }
            }
            if let Some(error) = failure {
                for (table, key, old) in undo.into_iter().rev() {
                    let rows = tables.entry(table).or_default();
                    match old {
                        Some(value) => rows.insert(key, value),
                        None => rows.remove(&key),
                    };
                }
                return Err(error);
            }
            if !batch.ops.iter().all(Op::is_expectation) {
                self.revision.set(self.revision.get() + 1);
            }
            Ok(())
        })();
        Box::pin(async move { result })
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use proptest::prelude::*;

    fn put(store: &MemoryStore, table: Table, value: Value) {
        let mut batch = Batch::new();
        batch.put_value(table, value);
        block_on(store.commit(batch)).expect("commit");
    }

    fn filled() -> MemoryStore {
        let store = MemoryStore::new();
        put(
            &store,
            Table::Projects,
            json!({"id": "p1", "name": "Lighthouse", "updatedMs": 5}),
        );
        put(
            &store,
            Table::Chapters,
            json!({"id": "c2", "project": "p1", "text": "Morning came grey."}),
        );
        put(
            &store,
            Table::Chapters,
            json!({"id": "c1", "project": "p1", "text": "Mara climbed — «the stair»."}),
        );
        put(
            &store,
            Table::Notes,
            json!({"id": "n1", "project": "p1", "tags": ["lamp", "sea"], "updatedMs": 3}),
        );
        store
    }

    #[test]
    fn a_saved_store_loads_back_with_the_same_records_and_indexes() {
        let store = filled();
        let saved = store.to_json();
        assert_eq!(saved["format"], SNAPSHOT_FORMAT);
        assert_eq!(saved["version"], SNAPSHOT_VERSION);
        // Records in key order; empty tables left out.
        assert_eq!(saved["tables"]["chapters"][0]["id"], "c1");
        assert_eq!(saved["tables"]["chapters"][1]["id"], "c2");
        assert!(saved["tables"].get("history").is_none());

        // Through text, as the headless core keeps it in a file.
        let text = serde_json::to_string_pretty(&saved).expect("text");
        let loaded =
            MemoryStore::from_json(serde_json::from_str(&text).expect("json")).expect("load");
        assert_eq!(loaded.to_json(), saved);
        assert_eq!(loaded.len(Table::Chapters), 2);
        assert_eq!(loaded.revision(), 0);
        let c1 = block_on(loaded.get(Table::Chapters, "c1")).expect("get");
        assert_eq!(c1.expect("c1")["text"], "Mara climbed — «the stair».");
        let tagged =
            block_on(loaded.get_by_index(Table::Notes, "tags", json!("sea"))).expect("index");
        assert_eq!(tagged.len(), 1);
        let of_project =
            block_on(loaded.get_by_index(Table::Chapters, "project", json!("p1"))).expect("ix");
        assert_eq!(of_project.len(), 2);
    }

    #[test]
    fn a_loaded_store_passes_the_conformance_suite() {
        let loaded = MemoryStore::from_json(MemoryStore::new().to_json()).expect("load");
        assert!(loaded.is_empty());
        block_on(crate::store::conformance::run_all(&loaded));
    }

    #[test]
    fn revision_counts_only_commits_that_write() {
        let store = MemoryStore::new();
        assert_eq!(store.revision(), 0);
        put(&store, Table::Projects, json!({"id": "p1"}));
        assert_eq!(store.revision(), 1);

        // Reads, empty batches and expect-only batches write nothing.
        block_on(store.get_all(Table::Projects)).expect("read");
        block_on(store.commit(Batch::new())).expect("empty");
        let mut expect = Batch::new();
        expect.expect(Table::Projects, "p1", "name", Value::Null);
        block_on(store.commit(expect)).expect("expect holds");
        assert_eq!(store.revision(), 1);

        // Failed commits write nothing either.
        let mut aborted = Batch::new();
        aborted.put_value(Table::Projects, json!({"id": "p2"}));
        aborted.put_value(Table::Projects, json!({"id": "p3"}));
        aborted.abort_after = Some(1);
        assert!(block_on(store.commit(aborted)).is_err());
        let mut invalid = Batch::new();
        invalid.put_value(Table::Projects, json!({"name": "no id"}));
        assert!(block_on(store.commit(invalid)).is_err());
        let mut conflict = Batch::new();
        conflict.expect(Table::Projects, "p1", "name", json!("other"));
        conflict.put_value(Table::Projects, json!({"id": "p4"}));
        assert!(block_on(store.commit(conflict)).is_err());
        assert_eq!(store.revision(), 1);
        assert_eq!(store.len(Table::Projects), 1);

        let mut delete = Batch::new();
        delete.delete(Table::Projects, "p1");
        block_on(store.commit(delete)).expect("delete");
        assert_eq!(store.revision(), 2);
    }

    fn load_error(value: Value) -> String {
        match MemoryStore::from_json(value) {
            Ok(_) => panic!("loaded a malformed store file"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn malformed_store_files_are_refused_with_what_was_wrong() {
        let doc =
            |tables: Value| json!({"format": SNAPSHOT_FORMAT, "version": 1, "tables": tables});
        let cases = [
            (json!([1, 2]), "expected an object"),
            (json!({"tables": {}}), "'format' must be"),
            (
                json!({"format": "something-else", "version": 1, "tables": {}}),
                "got \"something-else\"",
            ),
            (
                json!({"format": SNAPSHOT_FORMAT, "version": 99, "tables": {}}),
                "version 99 is not supported",
            ),
            (
                json!({"format": SNAPSHOT_FORMAT, "version": "1", "tables": {}}),
                "'version' must be a whole number",
            ),
            (
                json!({"format": SNAPSHOT_FORMAT, "version": 1}),
                "'tables' is missing",
            ),
            (
                json!({"format": SNAPSHOT_FORMAT, "version": 1, "tables": []}),
                "'tables' must be an object",
            ),
            (doc(json!({"chapterz": []})), "unknown table 'chapterz'"),
            (
                doc(json!({"chapters": {"c1": {}}})),
                "table 'chapters' must be a list",
            ),
            (
                doc(json!({"chapters": [{"id": "c1"}, {"text": "no id"}]})),
                "record 2 of the store file",
            ),
            (doc(json!({"notes": ["text"]})), "JSON object"),
            (doc(json!({"notes": [{"id": ""}]})), "non-empty string 'id'"),
            (
                doc(json!({"projects": [{"id": "p"}, {"id": "p"}]})),
                "repeats the id 'p'",
            ),
        ];
        for (value, expected) in cases {
            let message = load_error(value.clone());
            assert!(
                message.contains(expected),
                "{value} gave '{message}', expected it to mention '{expected}'"
            );
        }
        // The unknown-table error lists the real ones.
        assert!(load_error(doc(json!({"x": []}))).contains("projects, chapters, history"));
    }

    fn table() -> impl Strategy<Value = Table> {
        prop::sample::select(Table::ALL.to_vec())
    }

    proptest! {
        /// Whatever was written, saving and loading gives the same records back, and
        /// saving again gives the same document.
        #[test]
        fn save_and_load_round_trip(
            ops in prop::collection::vec(
                (table(), 0u8..6, prop::option::of(".{0,12}")),
                0..40,
            )
        ) {
            let store = MemoryStore::new();
            for (table, key, text) in ops {
                let mut batch = Batch::new();
                match text {
                    Some(text) => batch.put_value(
                        table,
                        json!({"id": format!("k{key}"), "project": "p", "text": text}),
                    ),
                    None => batch.delete(table, format!("k{key}")),
                }
                block_on(store.commit(batch)).expect("commit");
            }
            let saved = store.to_json();
            let text = serde_json::to_string(&saved).expect("text");
            let loaded = MemoryStore::from_json(serde_json::from_str(&text).expect("json"))
                .expect("load");
            prop_assert_eq!(loaded.to_json(), saved);
            for table in Table::ALL {
                prop_assert_eq!(
                    block_on(loaded.get_all(table)).expect("all"),
                    block_on(store.get_all(table)).expect("all")
                );
            }
        }
    }
}
