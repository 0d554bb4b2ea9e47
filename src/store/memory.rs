//! [`MemoryStore`]: the in-memory twin of the IndexedDB store, for native tests and for
//! running without persistence. Same semantics: atomic batches, index queries, key order.

use std::cell::RefCell;
use std::collections::BTreeMap;

use serde_json::Value;

use super::{record_key, Batch, Op, Store, StoreError, StoreFuture, Table};

/// Records in memory, by table and key.
#[derive(Debug, Default)]
pub struct MemoryStore {
    tables: RefCell<BTreeMap<Table, BTreeMap<String, Value>>>,
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
            // Apply to copies of the touched tables; swap them in only when all succeeded.
            let mut tables = self.tables.borrow_mut();
            let mut scratch: BTreeMap<Table, BTreeMap<String, Value>> = batch
                .tables()
                .into_iter()
                .map(|t| (t, tables.get(&t).cloned().unwrap_or_default()))
                .collect();
            for (written, op) in batch.ops.iter().enumerate() {
                if batch.abort_after == Some(written) {
                    return Err(StoreError::Aborted(format!(
                        "aborted after {written} writes (fault injection)"
                    )));
                }
                match op {
                    Op::Put { table, value } => {
                        let key = record_key(*table, value)?.to_string();
                        scratch
                            .entry(*table)
                            .or_default()
                            .insert(key, value.clone());
                    }
                    Op::Delete { table, key } => {
                        scratch.entry(*table).or_default().remove(key);
                    }
                    Op::Expect {
                        table,
                        key,
                        field,
                        equals,
                    } => {
                        let record = scratch.get(table).and_then(|t| t.get(key));
                        if !Op::expectation_holds(record, field, equals) {
                            return Err(StoreError::Conflict(format!(
                                "'{key}' in '{}' no longer has {field} = {equals}",
                                table.name()
                            )));
                        }
                    }
                }
            }
            tables.extend(scratch);
            Ok(())
        })();
        Box::pin(async move { result })
    }
}
