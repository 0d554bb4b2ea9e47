//! [`IdbStore`]: the [`Store`] over IndexedDB, through rexie.
//!
//! Records cross as JSON (`JSON.parse` / `JSON.stringify`), so they are plain objects in
//! IndexedDB (key paths and indexes work) and no `Map`s appear. A batch is one readwrite
//! transaction over the tables it touches, written through a second, plain connection
//! ([`web_sys`] rather than rexie, which hides its database): every request of the batch is
//! placed at once, in order, with no callback but for the [`Op::Expect`] reads, and the
//! transaction is committed as soon as those have been checked. So a keystroke's batch
//! costs one round trip to the database, not one per record. An [`Op::Insert`] is an `add`,
//! whose `ConstraintError` (the key is taken) aborts the transaction and is reported as a
//! conflict.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Promise, Reflect, JSON};
use rexie::{Index as IdbIndex, KeyRange, ObjectStore, Rexie, TransactionMode};
use serde_json::Value;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::store::{
    migrate, schema, Batch, Op, Store, StoreError, StoreFuture, Table, SCHEMA_VERSION,
};

/// IndexedDB storage. Dropping it closes its connections (so a later upgrade or delete of
/// the database is not blocked).
pub struct IdbStore {
    /// Opens and upgrades the database; reads.
    db: Option<Rexie>,
    /// Writes (see the module docs).
    writer: Option<Writer>,
}

/// The plain connection batches are written through, and its `versionchange` handler
/// (which closes it, as rexie does for its own, so another tab can upgrade the database).
struct Writer {
    db: web_sys::IdbDatabase,
    _on_version_change: Closure<dyn FnMut()>,
}

impl Drop for IdbStore {
    fn drop(&mut self) {
        if let Some(db) = self.db.take() {
            db.close();
        }
        if let Some(writer) = self.writer.take() {
            writer.db.set_onversionchange(None);
            writer.db.close();
        }
    }
}

/// A JS exception or event as text.
fn js_text(value: &JsValue) -> String {
    if let Some(exception) = value.dyn_ref::<web_sys::DomException>() {
        return format!("{}: {}", exception.name(), exception.message());
    }
    if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        return String::from(error.to_string());
    }
    format!("{value:?}")
}

/// Open a plain connection to an existing database at its current version.
async fn open_writer(name: &str) -> Result<Writer, StoreError> {
    let factory: web_sys::IdbFactory = Reflect::get(&js_sys::global(), &"indexedDB".into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| StoreError::Failed("IndexedDB is not available here".into()))?;
    let request = factory
        .open(name)
        .map_err(|e| StoreError::Failed(js_text(&e)))?;
    let opened = Promise::new(&mut |resolve, reject| {
        request.set_onsuccess(Some(&resolve));
        request.set_onerror(Some(&reject));
    });
    let result = JsFuture::from(opened).await;
    request.set_onsuccess(None);
    request.set_onerror(None);
    if result.is_err() {
        let reason = request
            .error()
            .ok()
            .flatten()
            .map_or_else(|| "unknown error".to_string(), |e| js_text(&e));
        return Err(storage_error(reason));
    }
    let db: web_sys::IdbDatabase = request
        .result()
        .ok()
        .and_then(|db| db.dyn_into().ok())
        .ok_or_else(|| StoreError::Failed("opening IndexedDB gave no database".into()))?;
    let to_close = db.clone();
    let on_version_change = Closure::<dyn FnMut()>::new(move || to_close.close());
    db.set_onversionchange(Some(on_version_change.as_ref().unchecked_ref()));
    Ok(Writer {
        db,
        _on_version_change: on_version_change,
    })
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
        let writer = open_writer(name).await?;
        Ok(IdbStore {
            db: Some(db),
            writer: Some(writer),
        })
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
        crate::sort::by(&mut records, |a, b| a["id"].as_str().cmp(&b["id"].as_str()));
        Ok(records)
    }

    /// Commit a batch as one readwrite transaction (see [`Store::commit`]).
    ///
    /// Every request is placed at once (a slice at a time, with no wait in between), in the
    /// batch's order (IndexedDB runs a transaction's requests in the order they were
    /// placed). An [`Op::Expect`] is a read placed where it stands; when it answers, a failed expectation aborts the transaction, which undoes
    /// every write placed with it. Once every expectation has held (at once when there is
    /// none) the transaction is committed without waiting for the writes' answers: nothing
    /// else is placed in it, and a write that fails aborts it all the same. The batch has
    /// landed when the transaction completes, and not at all when it aborts.
    async fn write(&self, batch: Batch) -> Result<(), StoreError> {
        // Reads first: the transaction commits once they have answered.
        let batch = batch.expectations_first();
        batch.validate()?;
        if batch.is_empty() {
            return Ok(());
        }
        // Fault injection: place only the first `abort_after` requests, then abort.
        let placed = batch
            .abort_after
            .map_or(batch.ops.len(), |n| n.min(batch.ops.len()));
        let ops = &batch.ops[..placed];
        let expectations = ops
            .iter()
            .filter(|op| matches!(op, Op::Expect { .. }))
            .count();
        let db = &self
            .writer
            .as_ref()
            .ok_or_else(|| StoreError::Failed("the database connection is closed".into()))?
            .db;
        let names: js_sys::Array = batch
            .tables()
            .iter()
            .map(|t| JsValue::from_str(t.name()))
            .collect();
        let tx = db
            .transaction_with_str_sequence_and_mode(&names, web_sys::IdbTransactionMode::Readwrite)
            .map_err(|e| storage_error(js_text(&e)))?;
        let finished = Promise::new(&mut |resolve, reject| {
            tx.set_oncomplete(Some(&resolve));
            tx.set_onabort(Some(&reject));
        });
        let checks = Rc::new(RefCell::new(Checks {
            waiting: expectations,
            refusal: None,
        }));
        let mut pending = Pending {
            reads: Vec::new(),
            tx: tx.clone(),
        };
        // A handful of tables: found by a scan (no map type of its own in the wasm).
        let mut stores: Vec<(Table, web_sys::IdbObjectStore)> = Vec::new();
        let mut refused = None;
        // The requests are placed a slice at a time, each slice's records converted just
        // before (as one JSON array, parsed by one `JSON.parse`: not a call, and a string, per
        // record), so that IndexedDB stores the first records while the next are converted.
        'placing: for slice in ops.chunks(PLACE_AT_ONCE) {
            let records = match records_of(slice) {
                Ok(records) => records,
                Err(e) => {
                    refused = Some(e.to_string());
                    break;
                }
            };
            let mut puts = 0;
            for op in slice {
                let table = op.table();
                let store = match stores.iter().find(|(t, _)| *t == table) {
                    Some((_, store)) => store.clone(),
                    None => match tx.object_store(table.name()) {
                        Ok(store) => {
                            stores.push((table, store.clone()));
                            store
                        }
                        Err(e) => {
                            refused = Some(js_text(&e));
                            break 'placing;
                        }
                    },
                };
                let request = match op {
                    Op::Put { .. } => {
                        puts += 1;
                        store.put(&records.get(puts - 1)).map(|_| ())
                    }
                    // A record with its key aborts the transaction (a `ConstraintError`).
                    Op::Insert { .. } => {
                        puts += 1;
                        store.add(&records.get(puts - 1)).map(|_| ())
                    }
                    Op::Delete { key, .. } => store.delete(&JsValue::from_str(key)).map(|_| ()),
                    Op::Expect {
                        key, field, equals, ..
                    } => store.get(&JsValue::from_str(key)).map(|request| {
                        let on_success = expectation(
                            &request,
                            &tx,
                            &checks,
                            table,
                            field.clone(),
                            equals.clone(),
                        );
                        request.set_onsuccess(Some(on_success.as_ref().unchecked_ref()));
                        pending.reads.push((request, on_success));
                    }),
                };
                if let Err(e) = request {
                    refused = Some(js_text(&e));
                    break 'placing;
                }
            }
        }
        let cut_short = placed < batch.ops.len();
        if refused.is_some() || cut_short {
            let _ = tx.abort();
        } else if expectations == 0 {
            commit_now(&tx);
        }
        // Everything is placed: the records are freed while IndexedDB writes them.
        drop(stores);
        drop(batch);
        let outcome = JsFuture::from(finished).await;
        drop(pending);
        if let Some(reason) = refused {
            return Err(storage_error(reason));
        }
        if let Some(refusal) = checks.borrow_mut().refusal.take() {
            return Err(refusal);
        }
        if cut_short {
            return Err(StoreError::Aborted(format!(
                "aborted after {placed} writes (fault injection)"
            )));
        }
        match outcome {
            Ok(_) => Ok(()),
            Err(_) => Err(match tx.error() {
                // An insert's record was there already: another writer got there first.
                Some(error) if error.name() == "ConstraintError" => StoreError::Conflict(format!(
                    "a record to insert exists already ({})",
                    error.message()
                )),
                Some(error) => storage_error(js_text(&error)),
                None => StoreError::Aborted("the browser aborted the transaction".into()),
            }),
        }
    }
}

/// How many requests of a batch are placed at once (see [`IdbStore::write`]).
const PLACE_AT_ONCE: usize = 64;

/// The records that `ops` put, as JS objects, in order: written as one JSON array and
/// parsed by one `JSON.parse`.
fn records_of(ops: &[Op]) -> Result<js_sys::Array, StoreError> {
    let mut text: Vec<u8> = Vec::with_capacity(2 + ops.len() * 1_500);
    text.push(b'[');
    for op in ops {
        if let Op::Put { value, .. } | Op::Insert { value, .. } = op {
            if text.len() > 1 {
                text.push(b',');
            }
            serde_json::to_writer(&mut text, value)
                .map_err(|e| StoreError::Failed(e.to_string()))?;
        }
    }
    text.push(b']');
    let text = String::from_utf8(text).map_err(|e| StoreError::Failed(e.to_string()))?;
    let parsed = JSON::parse(&text).map_err(|e| StoreError::Failed(format!("{e:?}")))?;
    Ok(js_sys::Array::from(&parsed))
}

/// What a batch's expectations found so far.
struct Checks {
    /// Expectations not yet checked.
    waiting: usize,
    /// Why the batch was refused: the first expectation that did not hold (a conflict), or
    /// a record that could not be read.
    refusal: Option<StoreError>,
}

/// The reads of a batch in flight, with their handlers; dropping it detaches the handlers
/// (so a write whose future is dropped early never calls a freed closure).
struct Pending {
    reads: Vec<(web_sys::IdbRequest, Closure<dyn FnMut()>)>,
    tx: web_sys::IdbTransaction,
}

impl Drop for Pending {
    fn drop(&mut self) {
        for (request, _) in &self.reads {
            request.set_onsuccess(None);
        }
        self.tx.set_oncomplete(None);
        self.tx.set_onabort(None);
    }
}

/// Commit a transaction now, where the browser can (`IDBTransaction.commit`); elsewhere it
/// commits by itself once its requests are done.
fn commit_now(tx: &web_sys::IdbTransaction) {
    // web-sys marks `commit` deprecated only because it is missing from older browsers; a
    // browser without it throws, which is caught here, and the transaction commits by itself.
    #[allow(deprecated)]
    let _ = tx.commit();
}

/// The success handler of an expectation's read: it aborts the transaction if the record
/// (or its absence) does not meet the expectation, and commits it once every expectation of
/// the batch has held. It runs while the transaction is active (a request's success event),
/// so the abort always lands before the transaction could commit.
fn expectation(
    request: &web_sys::IdbRequest,
    tx: &web_sys::IdbTransaction,
    checks: &Rc<RefCell<Checks>>,
    table: Table,
    field: String,
    equals: Value,
) -> Closure<dyn FnMut()> {
    let (request, tx, checks) = (request.clone(), tx.clone(), Rc::clone(checks));
    Closure::<dyn FnMut()>::new(move || {
        let found = request
            .result()
            .ok()
            .filter(|v| !v.is_undefined() && !v.is_null())
            .map(|record| from_js(&record));
        let verdict = match found {
            None => Ok(Op::expectation_holds(None, &field, &equals)),
            Some(Ok(record)) => Ok(Op::expectation_holds(Some(&record), &field, &equals)),
            Some(Err(e)) => Err(e),
        };
        let mut state = checks.borrow_mut();
        match verdict {
            Ok(true) => {
                state.waiting = state.waiting.saturating_sub(1);
                if state.waiting == 0 && state.refusal.is_none() {
                    commit_now(&tx);
                }
            }
            Ok(false) => {
                state.refusal.get_or_insert_with(|| {
                    StoreError::Conflict(format!(
                        "'{}' no longer has {field} = {equals}",
                        table.name()
                    ))
                });
                let _ = tx.abort();
            }
            Err(error) => {
                state.refusal.get_or_insert(error);
                let _ = tx.abort();
            }
        }
    })
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
