//! [`IdbStore`]: the [`Store`] over IndexedDB, through rexie.
//!
//! Records cross as JSON (`JSON.parse` / `JSON.stringify`), so they are plain objects in
//! IndexedDB (key paths and indexes work) and no `Map`s appear. A batch is one readwrite
//! transaction over the tables it touches; nothing but IndexedDB requests is awaited while it
//! is open, so it cannot commit early.

use js_sys::{Promise, Reflect, JSON};
use rexie::{Index as IdbIndex, KeyRange, ObjectStore, Rexie, TransactionMode, TransactionResult};
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::store::{
    migrate, schema, Batch, Op, Store, StoreError, StoreFuture, Table, SCHEMA_VERSION,
};

/// IndexedDB storage. Dropping it closes the connection (so a later upgrade or delete of
/// the database is not blocked).
pub struct IdbStore {
    db: Option<Rexie>,
}

impl Drop for IdbStore {
    fn drop(&mut self) {
        if let Some(db) = self.db.take() {
            db.close();
        }
    }
}

fn to_js(value: &Value) -> Result<JsValue, StoreError> {
    JSON::parse(&value.to_string()).map_err(|e| StoreError::Failed(format!("{e:?}")))
}

fn from_js(value: &JsValue) -> Result<Value, StoreError> {
    let text: String = JSON::stringify(value)
        .map_err(|e| StoreError::Failed(format!("{e:?}")))?
        .into();
    serde_json::from_str(&text).map_err(|e| StoreError::Failed(e.to_string()))
}

/// Map a rexie error, recognizing a full quota.
fn storage_error(error: impl std::fmt::Debug) -> StoreError {
    let text = format!("{error:?}");
    if text.contains("QuotaExceeded") {
        StoreError::Quota(text)
    } else {
        StoreError::Failed(text)
    }
}

impl IdbStore {
    /// Open (creating or upgrading) the database `name` at the current schema version, then
    /// run the data migrations.
    pub async fn open(name: &str) -> Result<IdbStore, StoreError> {
        let store = Self::open_version(name, SCHEMA_VERSION).await?;
        migrate(&store).await?;
        Ok(store)
    }

    /// Open the database with the tables of a given schema version and no data migration
    /// (tests use this to write a version-1 database).
    pub async fn open_version(name: &str, version: u32) -> Result<IdbStore, StoreError> {
        let mut builder = Rexie::builder(name).version(version);
        for (table, indexes) in schema(version) {
            let mut store = ObjectStore::new(table.name()).key_path("id");
            for index in indexes {
                store = store.add_index(
                    IdbIndex::new(index.name, index.key_path).multi_entry(index.multi_entry),
                );
            }
            builder = builder.add_object_store(store);
        }
        let db = builder.build().await.map_err(storage_error)?;
        Ok(IdbStore { db: Some(db) })
    }

    /// Close the connection (dropping the store does the same).
    pub fn close(self) {
        drop(self);
    }

    fn db(&self) -> Result<&Rexie, StoreError> {
        self.db
            .as_ref()
            .ok_or_else(|| StoreError::Failed("the database connection is closed".into()))
    }

    /// Delete a database.
    pub async fn delete(name: &str) -> Result<(), StoreError> {
        Rexie::delete(name).await.map_err(storage_error)
    }

    async fn read_all(
        &self,
        table: Table,
        index: Option<(&str, Value)>,
    ) -> Result<Vec<Value>, StoreError> {
        let tx = self
            .db()?
            .transaction(&[table.name()], TransactionMode::ReadOnly)
            .map_err(storage_error)?;
        let store = tx.store(table.name()).map_err(storage_error)?;
        let raw = match index {
            None => store.get_all(None, None).await.map_err(storage_error)?,
            Some((name, value)) => {
                if !table.indexes().iter().any(|i| i.name == name) {
                    return Err(StoreError::Failed(format!(
                        "table '{}' has no index '{name}'",
                        table.name()
                    )));
                }
                let range = KeyRange::only(&to_js(&value)?).map_err(storage_error)?;
                let index = store.index(name).map_err(storage_error)?;
                index
                    .get_all(Some(range), None)
                    .await
                    .map_err(storage_error)?
            }
        };
        let mut records = raw.iter().map(from_js).collect::<Result<Vec<_>, _>>()?;
        // Index results come in index-key order; the contract is key order.
        records.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
        Ok(records)
    }

    async fn write(&self, batch: Batch) -> Result<(), StoreError> {
        batch.validate()?;
        if batch.is_empty() {
            return Ok(());
        }
        // Convert everything before the transaction opens.
        enum Write<'b> {
            Put(JsValue),
            Delete(JsValue),
            Expect(JsValue, &'b str, &'b Value),
        }
        let mut writes = Vec::with_capacity(batch.ops.len());
        for op in &batch.ops {
            writes.push(match op {
                Op::Put { table, value } => (*table, Write::Put(to_js(value)?)),
                Op::Delete { table, key } => (*table, Write::Delete(JsValue::from_str(key))),
                Op::Expect {
                    table,
                    key,
                    field,
                    equals,
                } => (
                    *table,
                    Write::Expect(JsValue::from_str(key), field.as_str(), equals),
                ),
            });
        }
        let names: Vec<&str> = batch.tables().iter().map(|t| t.name()).collect();
        let tx = self
            .db()?
            .transaction(&names, TransactionMode::ReadWrite)
            .map_err(storage_error)?;
        for (written, (table, write)) in writes.into_iter().enumerate() {
            if batch.abort_after == Some(written) {
                tx.abort().await.map_err(storage_error)?;
                return Err(StoreError::Aborted(format!(
                    "aborted after {written} writes (fault injection)"
                )));
            }
            let store = tx.store(table.name()).map_err(storage_error)?;
            match write {
                Write::Put(value) => {
                    store.put(&value, None).await.map_err(storage_error)?;
                }
                Write::Delete(key) => {
                    store.delete(key).await.map_err(storage_error)?;
                }
                Write::Expect(key, field, equals) => {
                    // Read inside the same readwrite transaction: no other transaction on
                    // this table can run between the check and the writes after it.
                    let record = match store.get(key).await.map_err(storage_error)? {
                        Some(v) if !v.is_undefined() => Some(from_js(&v)?),
                        _ => None,
                    };
                    if !Op::expectation_holds(record.as_ref(), field, equals) {
                        tx.abort().await.map_err(storage_error)?;
                        return Err(StoreError::Conflict(format!(
                            "'{}' no longer has {field} = {equals}",
                            table.name()
                        )));
                    }
                }
            }
        }
        match tx.done().await.map_err(storage_error)? {
            TransactionResult::Committed => Ok(()),
            TransactionResult::Aborted => Err(StoreError::Aborted(
                "the browser aborted the transaction".into(),
            )),
        }
    }
}

impl Store for IdbStore {
    fn get<'a>(&'a self, table: Table, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        Box::pin(async move {
            let tx = self
                .db()?
                .transaction(&[table.name()], TransactionMode::ReadOnly)
                .map_err(storage_error)?;
            let store = tx.store(table.name()).map_err(storage_error)?;
            match store
                .get(JsValue::from_str(key))
                .await
                .map_err(storage_error)?
            {
                Some(value) if !value.is_undefined() => Ok(Some(from_js(&value)?)),
                _ => Ok(None),
            }
        })
    }

    fn get_all(&self, table: Table) -> StoreFuture<'_, Vec<Value>> {
        Box::pin(self.read_all(table, None))
    }

    fn get_by_index<'a>(
        &'a self,
        table: Table,
        index: &'a str,
        value: Value,
    ) -> StoreFuture<'a, Vec<Value>> {
        Box::pin(self.read_all(table, Some((index, value))))
    }

    fn commit(&self, batch: Batch) -> StoreFuture<'_, ()> {
        Box::pin(self.write(batch))
    }

    fn estimate(&self) -> StoreFuture<'_, Option<(u64, u64)>> {
        Box::pin(async {
            let storage = Reflect::get(&js_sys::global(), &"navigator".into())
                .and_then(|nav| Reflect::get(&nav, &"storage".into()))
                .ok()
                .filter(|s| !s.is_undefined());
            let Some(storage) = storage else {
                return Ok(None);
            };
            let estimate = Reflect::get(&storage, &"estimate".into())
                .ok()
                .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
                .and_then(|f| f.call0(&storage).ok())
                .and_then(|p| p.dyn_into::<Promise>().ok());
            let Some(promise) = estimate else {
                return Ok(None);
            };
            let result = JsFuture::from(promise).await.map_err(storage_error)?;
            let number = |k: &str| {
                Reflect::get(&result, &k.into())
                    .ok()
                    .and_then(|v| v.as_f64())
                    .map(|v| v as u64)
            };
            Ok(number("usage").zip(number("quota")))
        })
    }
}
