//! [`IdbStore`]: the [`Store`] over IndexedDB, through [`rexie`].
//!
//! Records are plain objects in IndexedDB (key paths and indexes work; no `Map`s appear).
//! They cross as JSON text, which `JSON.parse` reads on the way in ([`record_to_js`]) and
//! `JSON.stringify` writes on the way out ([`from_js`]): both measured faster than
//! `serde-wasm-bindgen`, which converts the keys of index queries. One connection serves
//! reads and writes; rexie's builder closes it when another connection asks for a newer
//! version (its `versionchange` event), so another tab can upgrade the database. A batch is
//! one readwrite transaction over the tables it touches: every request of the batch is
//! placed at once, in order (a run of puts into one table as one `put_all`, converted as it
//! is placed), and the batch has landed when the transaction completes. So a keystroke's
//! batch costs one round trip to the database, not one per record. An [`Op::Insert`] is an
//! `add`, whose `ConstraintError` (the key is taken) aborts the transaction and is reported
//! as a conflict.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use futures_util::future::{join_all, maybe_done, poll_fn, FutureExt, LocalBoxFuture};
use js_sys::{Promise, Reflect};
use rexie::{Index, KeyRange, ObjectStore, Rexie, TransactionMode};
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::store::{
    migrate, schema, Batch, Op, Record, Store, StoreError, StoreFuture, Table, SCHEMA_VERSION,
};

/// IndexedDB storage. Dropping it closes its connection (so a later upgrade or delete of the
/// database is not blocked).
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

/// A rexie error as text: the IndexedDB failure under it (such as `ConstraintError: …`), as
/// rexie's own message says only "idb error".
fn rexie_text(error: &rexie::Error) -> String {
    match std::error::Error::source(error) {
        Some(inner) => inner.to_string(),
        None => error.to_string(),
    }
}

/// A rexie error as a storage error.
fn rexie_error(error: rexie::Error) -> StoreError {
    storage_error(rexie_text(&error))
}

/// A JS exception as a storage error.
fn js_error(value: JsValue) -> StoreError {
    let text = match value.dyn_ref::<js_sys::Error>() {
        Some(error) => String::from(error.to_string()),
        None => format!("{value:?}"),
    };
    storage_error(text)
}

/// A storage error from its text, recognizing a full quota.
fn storage_error(text: String) -> StoreError {
    if text.contains("QuotaExceeded") {
        StoreError::Quota(text)
    } else {
        StoreError::Failed(text)
    }
}

/// A value as a plain JS value (a key of an index query).
fn to_js(value: &Value) -> Result<JsValue, StoreError> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| StoreError::Failed(e.to_string()))
}

/// A record as a plain JS object, through the JSON text `JSON.parse` reads. Measured against
/// [`to_js`], whose strings and fields cross one at a time, in CPU profiles of the worker in
/// `make bench-browser`: for a batch of 500 notes of 1 KB, about 4 ms against 7 ms; over the
/// keystroke benchmark's single records, 108 ms against 169 ms. A typed record
/// ([`Record::Typed`]) is written as JSON text straight from its fields.
fn record_to_js(record: &Record) -> Result<JsValue, StoreError> {
    let mut json = Vec::new();
    record.write_json(&mut json)?;
    parse_json(json)
}

/// Records as plain JS objects, in one crossing (one `JSON.parse` of their list).
fn records_to_js(records: &[Record]) -> Result<Vec<JsValue>, StoreError> {
    let mut json = vec![b'['];
    for (i, record) in records.iter().enumerate() {
        if i > 0 {
            json.push(b',');
        }
        record.write_json(&mut json)?;
    }
    json.push(b']');
    let parsed: js_sys::Array = parse_json(json)?.unchecked_into();
    Ok(parsed.iter().collect())
}

/// `JSON.parse` of the JSON text serde_json wrote.
fn parse_json(json: Vec<u8>) -> Result<JsValue, StoreError> {
    let text = String::from_utf8(json).map_err(|e| StoreError::Failed(e.to_string()))?;
    js_sys::JSON::parse(&text).map_err(js_error)
}

/// How many records of a run of puts are converted at a time: IndexedDB starts on the
/// first ones while the next are converted.
const RECORDS_AT_A_TIME: usize = 50;

/// How many records of a run of puts are converted first: a few, so that IndexedDB starts
/// as soon as it can.
const FIRST_RECORDS: usize = 5;

/// A stored record as JSON, read from the JSON text `JSON.stringify` makes of it: over the
/// keystrokes of the keystroke benchmark of `make bench-browser`, 45 ms of the worker against
/// 75 ms for `serde_wasm_bindgen::from_value` (a CPU profile of the worker).
fn from_js(value: JsValue) -> Result<Value, StoreError> {
    let text: String = js_sys::JSON::stringify(&value).map_err(js_error)?.into();
    serde_json::from_str(&text).map_err(|e| StoreError::Failed(e.to_string()))
}

/// The database builder for schema `version`: every table is keyed by `id`, with its indexes
/// (never unique). Opening a database of an older version through it creates the missing
/// tables and indexes, makes anew an index declared differently, and deletes the tables and
/// indexes the schema does not name (rexie's builder does this in `upgradeneeded`).
fn layout(name: &str, version: u32) -> rexie::RexieBuilder {
    schema(version).into_iter().fold(
        Rexie::builder(name).version(version),
        |db, (table, indexes)| {
            let store = indexes.iter().fold(
                ObjectStore::new(table.name()).key_path("id"),
                |store, ix| {
                    store.add_index(
                        Index::new(ix.name, ix.key_path)
                            .unique(false)
                            .multi_entry(ix.multi_entry),
                    )
                },
            );
            db.add_object_store(store)
        },
    )
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
    /// (tests use this to write a version-1 database). An upgrade that fails is aborted, and
    /// the database stays as it was.
    pub async fn open_version(name: &str, version: u32) -> Result<IdbStore, StoreError> {
        let db = layout(name, version).build().await.map_err(rexie_error)?;
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

    /// A table of a new read-only transaction.
    fn reading(&self, table: Table) -> Result<rexie::Store, StoreError> {
        self.db()?
            .transaction(&[table.name()], TransactionMode::ReadOnly)
            .and_then(|tx| tx.store(table.name()))
            .map_err(rexie_error)
    }

    /// Delete a database.
    pub async fn delete(name: &str) -> Result<(), StoreError> {
        Rexie::delete(name).await.map_err(rexie_error)
    }

    async fn read_all(
        &self,
        table: Table,
        index: Option<(&str, Value)>,
    ) -> Result<Vec<Value>, StoreError> {
        let store = self.reading(table)?;
        let raw = match index {
            None => store.get_all(None, None).await,
            Some((name, value)) => {
                if !table.indexes().iter().any(|i| i.name == name) {
                    return Err(StoreError::Failed(format!(
                        "table '{}' has no index '{name}'",
                        table.name()
                    )));
                }
                let key = KeyRange::only(&to_js(&value)?).map_err(rexie::Error::from);
                match (store.index(name), key) {
                    (Ok(index), Ok(key)) => index.get_all(Some(key), None).await,
                    (Err(e), _) | (_, Err(e)) => Err(e),
                }
            }
        }
        .map_err(rexie_error)?;
        let mut records = raw
            .into_iter()
            .map(from_js)
            .collect::<Result<Vec<_>, _>>()?;
        // Index results come in index-key order; the contract is key order.
        records.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
        Ok(records)
    }

    /// Commit a batch as one readwrite transaction (see [`Store::commit`]).
    ///
    /// Every request is placed at once, in the batch's order (IndexedDB runs a
    /// transaction's requests in the order they were placed), and the batch waits for all of
    /// their answers. An [`Op::Expect`] is a read placed where it stands; when one did not
    /// hold, the transaction is aborted once every request has answered: in the success
    /// event of the last answer (its waker's task is a microtask of that event), while the
    /// transaction is still active, so the abort lands before it could commit and undoes
    /// every write of the batch. Waiting for every answer first means that no request is
    /// pending when the transaction is aborted (rexie would hand a pending request's
    /// `AbortError` to a handler it has dropped). Otherwise the transaction commits by
    /// itself once its requests are done; the batch has landed when it completes, and not at
    /// all when it aborts.
    async fn write(&self, batch: Batch) -> Result<(), StoreError> {
        // Reads first (the order IndexedDB answers them in).
        let batch = batch.expectations_first();
        batch.validate()?;
        if batch.is_empty() {
            return Ok(());
        }
        // Fault injection: place only the first `abort_after` requests, and abort once they
        // have answered.
        let placed = batch
            .abort_after
            .map_or(batch.ops.len(), |n| n.min(batch.ops.len()));
        let cut_short = placed < batch.ops.len();
        let tables = batch.tables();
        let mut ops = batch.ops;
        ops.truncate(placed);
        let names: Vec<&str> = tables.iter().map(|t| t.name()).collect();
        let tx = self
            .db()?
            .transaction(&names, TransactionMode::ReadWrite)
            .map_err(rexie_error)?;
        // A handful of tables: found by a scan.
        let stores = tables
            .iter()
            .map(|&t| tx.store(t.name()).map(|store| (t, store)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(rexie_error)?;
        let store_of = |table: Table| {
            stores
                .iter()
                .find(|(t, _)| *t == table)
                .map(|(_, store)| store)
        };
        // Each run of puts into one table is placed as one request future (`put_run`), the
        // other ops one each. The requests own their records, and drop each once it is
        // placed: nothing of the batch is left to free after the transaction completes.
        let mut requests: Vec<LocalBoxFuture<'_, Result<(), Refused>>> = Vec::new();
        let mut ops = ops.into_iter().peekable();
        while let Some(op) = ops.next() {
            let table = op.table();
            let same = |next: &Op| matches!(next, Op::Put { table: t, .. } if *t == table);
            match op {
                Op::Put { value, .. } if ops.peek().is_some_and(same) => {
                    let mut run = vec![value];
                    while let Some(Op::Put { value, .. }) = ops.next_if(same) {
                        run.push(value);
                    }
                    requests.push(put_run(run, store_of(table), table.name()).boxed_local());
                }
                op => requests.push(request(op, store_of(table)).boxed_local()),
            }
        }
        let refused = all_at_once(requests)
            .await
            .into_iter()
            .find_map(Result::err);
        match refused {
            Some(Refused::Abort(refusal)) => {
                let _ = tx.abort().await;
                Err(refusal)
            }
            // The transaction aborts itself; the first request that failed says why (those
            // after it fail with `AbortError`). It is not waited for: this runs between the
            // listeners of the last request's `error` event, which goes on to the
            // transaction, where it would settle rexie's `done()` and drop its handlers
            // before the `abort` event comes (whose handler would then throw "closure
            // invoked recursively or after being dropped"). Nothing can read the batch's
            // writes meanwhile: a later transaction over its tables starts once it has ended.
            Some(Refused::Failed(error)) => {
                drop(tx);
                Err(match error {
                    // An insert's record was there already: another writer got there first.
                    StoreError::Failed(text) if text.contains("ConstraintError") => {
                        StoreError::Conflict(format!("a record to insert exists already ({text})"))
                    }
                    error => error,
                })
            }
            None if cut_short => {
                let _ = tx.abort().await;
                Err(StoreError::Aborted(format!(
                    "aborted after {placed} writes (fault injection)"
                )))
            }
            None => match tx.done().await {
                Ok(result) if result.is_committed() => Ok(()),
                Ok(_) => Err(StoreError::Aborted(
                    "the browser aborted the transaction".into(),
                )),
                Err(e) => Err(rexie_error(e)),
            },
        }
    }
}

/// Why a request of a batch did not go through.
enum Refused {
    /// An expectation did not hold (or the request could not be made): the batch is
    /// refused, and the transaction must be aborted.
    Abort(StoreError),
    /// The request failed: the transaction aborts itself.
    Failed(StoreError),
}

/// Place every request now, in order (a first poll each: rexie's request futures place their
/// request when first polled), then wait for all of their answers.
async fn all_at_once<F: Future + Unpin>(requests: Vec<F>) -> Vec<F::Output> {
    let mut requests: Vec<_> = requests.into_iter().map(maybe_done).collect();
    poll_fn(|cx| {
        for request in requests.iter_mut() {
            let _ = Pin::new(request).poll(cx);
        }
        Poll::Ready(())
    })
    .await;
    join_all(requests.iter_mut()).await;
    requests
        .iter_mut()
        .filter_map(|request| Pin::new(request).take_output())
        .collect()
}

/// Place a run of puts into one table, in order; resolves when the last has answered.
/// Only the last request is listened to (rexie's `put_all`), which spares the worker an event
/// per record: IndexedDB answers a transaction's requests in order, and a put that fails
/// aborts the transaction, so the last then fails too (with `AbortError`). The records are
/// converted as they are placed, [`FIRST_RECORDS`] then [`RECORDS_AT_A_TIME`] at a time, all
/// in the first poll (the transaction commits by itself at the first pause between its
/// requests).
async fn put_run(
    records: Vec<Record>,
    store: Option<&rexie::Store>,
    table: &str,
) -> Result<(), Refused> {
    let store = store.ok_or_else(|| {
        Refused::Abort(StoreError::Failed(format!("'{table}' is not in the batch")))
    })?;
    let mut unconverted = None;
    let mut records = records.into_iter();
    let mut size = FIRST_RECORDS;
    // Each chunk is dropped once converted.
    let chunks = std::iter::from_fn(|| {
        let chunk: Vec<Record> = records.by_ref().take(size).collect();
        size = RECORDS_AT_A_TIME;
        (!chunk.is_empty()).then(|| {
            records_to_js(&chunk).unwrap_or_else(|e| {
                unconverted.get_or_insert(e);
                Vec::new()
            })
        })
    });
    let placed = store
        .put_all(chunks.flatten().map(|record| (record, None)))
        .await;
    if let Some(error) = unconverted {
        return Err(Refused::Abort(error));
    }
    placed.map_err(|e| Refused::Failed(rexie_error(e)))
}

/// Place one request of a batch; resolves when it has answered (and, for an
/// [`Op::Expect`], been checked).
async fn request(op: Op, store: Option<&rexie::Store>) -> Result<(), Refused> {
    let failed = |e: rexie::Error| Refused::Failed(rexie_error(e));
    let table = op.table().name();
    let store = store.ok_or_else(|| {
        Refused::Abort(StoreError::Failed(format!("'{table}' is not in the batch")))
    })?;
    match op {
        Op::Put { value, .. } => {
            let record = record_to_js(&value).map_err(Refused::Abort)?;
            drop(value);
            store.put(&record, None).await.map(drop).map_err(failed)
        }
        // A record with its key aborts the transaction (a `ConstraintError`).
        Op::Insert { value, .. } => {
            let record = record_to_js(&value).map_err(Refused::Abort)?;
            drop(value);
            store.add(&record, None).await.map(drop).map_err(failed)
        }
        Op::Delete { key, .. } => store.delete(JsValue::from_str(&key)).await.map_err(failed),
        Op::Expect {
            key, field, equals, ..
        } => {
            let found = store.get(JsValue::from_str(&key)).await.map_err(failed)?;
            let record = found.map(from_js).transpose().map_err(Refused::Abort)?;
            if Op::expectation_holds(record.as_ref(), &field, &equals) {
                Ok(())
            } else {
                Err(Refused::Abort(StoreError::Conflict(format!(
                    "'{table}' no longer has {field} = {equals}"
                ))))
            }
        }
    }
}

impl Store for IdbStore {
    fn get<'a>(&'a self, table: Table, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        Box::pin(async move {
            let found = self
                .reading(table)?
                .get(JsValue::from_str(key))
                .await
                .map_err(rexie_error)?;
            found.map(from_js).transpose()
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
            let result = JsFuture::from(promise).await.map_err(js_error)?;
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
