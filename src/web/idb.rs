//! [`IdbStore`]: the [`Store`] over IndexedDB, on [`web_sys`] directly.
//!
//! Records cross as JSON (`JSON.parse` / `JSON.stringify`), so they are plain objects in
//! IndexedDB (key paths and indexes work) and no `Map`s appear. One connection serves reads
//! and writes; it closes itself when another connection asks for a newer version (its
//! `versionchange` event), so another tab can upgrade the database. A batch is one readwrite
//! transaction over the tables it touches: every request of the batch is placed at once, in
//! order, with no callback but for the [`Op::Expect`] reads, and the transaction is committed
//! as soon as those have been checked. So a keystroke's batch costs one round trip to the
//! database, not one per record. An [`Op::Insert`] is an `add`, whose `ConstraintError` (the
//! key is taken) aborts the transaction and is reported as a conflict.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Promise, Reflect, JSON};
use serde_json::Value;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    IdbDatabase, IdbFactory, IdbIndexParameters, IdbObjectStore, IdbObjectStoreParameters,
    IdbOpenDbRequest, IdbRequest, IdbTransaction, IdbTransactionMode,
};

use crate::store::{
    migrate, schema, Batch, Op, Store, StoreError, StoreFuture, Table, SCHEMA_VERSION,
};

/// IndexedDB storage. Dropping it closes its connection (so a later upgrade or delete of the
/// database is not blocked).
pub struct IdbStore {
    connection: Option<Connection>,
}

/// The open database and its `versionchange` handler, which closes it.
struct Connection {
    db: IdbDatabase,
    _on_version_change: Closure<dyn FnMut()>,
}

impl Drop for IdbStore {
    fn drop(&mut self) {
        if let Some(connection) = self.connection.take() {
            connection.db.set_onversionchange(None);
            connection.db.close();
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

/// A JS exception as a storage error.
fn js_error(value: JsValue) -> StoreError {
    storage_error(js_text(&value))
}

/// The worker's (or window's) `indexedDB`.
fn factory() -> Result<IdbFactory, StoreError> {
    Reflect::get(&js_sys::global(), &"indexedDB".into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| StoreError::Failed("IndexedDB is not available here".into()))
}

/// The result of a request once it has succeeded, or the error it failed with.
async fn settled(request: &IdbRequest) -> Result<JsValue, StoreError> {
    let answered = Promise::new(&mut |resolve, reject| {
        request.set_onsuccess(Some(&resolve));
        request.set_onerror(Some(&reject));
    });
    let outcome = JsFuture::from(answered).await;
    request.set_onsuccess(None);
    request.set_onerror(None);
    match outcome {
        Ok(_) => request.result().map_err(js_error),
        Err(_) => {
            Err(storage_error(request.error().ok().flatten().map_or_else(
                || "unknown error".to_string(),
                |e| js_text(&e),
            )))
        }
    }
}

/// Bring the database being opened to the tables and indexes of schema `version` (its
/// `upgradeneeded` event): missing tables and indexes are created, an index declared
/// differently is made anew, and tables and indexes the schema does not name are deleted.
fn upgrade(request: &IdbOpenDbRequest, version: u32) -> Result<(), JsValue> {
    let db: IdbDatabase = request.result()?.unchecked_into();
    let tx = request
        .transaction()
        .ok_or_else(|| JsValue::from_str("no upgrade transaction"))?;
    let tables = schema(version);
    let existing = db.object_store_names();
    let existing: Vec<String> = (0..existing.length())
        .filter_map(|i| existing.get(i))
        .collect();
    for name in &existing {
        if !tables.iter().any(|(t, _)| t.name() == name) {
            db.delete_object_store(name)?;
        }
    }
    for (table, indexes) in tables {
        let store = if existing.iter().any(|n| n == table.name()) {
            tx.object_store(table.name())?
        } else {
            let params = IdbObjectStoreParameters::new();
            params.set_key_path(&JsValue::from_str("id"));
            db.create_object_store_with_optional_parameters(table.name(), &params)?
        };
        let present = store.index_names();
        for name in (0..present.length()).filter_map(|i| present.get(i)) {
            let index = store.index(&name)?;
            let same = indexes.iter().any(|ix| {
                ix.name == name
                    && index.key_path().ok().and_then(|k| k.as_string()).as_deref()
                        == Some(ix.key_path)
                    && index.multi_entry() == ix.multi_entry
                    && !index.unique()
            });
            if !same {
                store.delete_index(&name)?;
            }
        }
        for ix in &indexes {
            if !store.index_names().contains(ix.name) {
                let params = IdbIndexParameters::new();
                params.set_multi_entry(ix.multi_entry);
                store.create_index_with_str_and_optional_parameters(
                    ix.name,
                    ix.key_path,
                    &params,
                )?;
            }
        }
    }
    Ok(())
}

fn to_js(value: &Value) -> Result<JsValue, StoreError> {
    JSON::parse(&value.to_string()).map_err(|e| StoreError::Failed(format!("{e:?}")))
}

fn from_js(value: &JsValue) -> Result<Value, StoreError> {
    let text: String = JSON::stringify(value)
        .map_err(|e| StoreError::Failed(format!("{e:?}")))?
        .into();
    crate::json::parse(&text).map_err(|e| StoreError::Failed(e.to_string()))
}

/// A storage error from its text, recognizing a full quota.
fn storage_error(text: String) -> StoreError {
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
    /// (tests use this to write a version-1 database). An upgrade that fails is aborted, and
    /// the database stays as it was.
    pub async fn open_version(name: &str, version: u32) -> Result<IdbStore, StoreError> {
        let request = factory()?.open_with_u32(name, version).map_err(js_error)?;
        let on_upgrade = Closure::<dyn FnMut()>::new({
            let request = request.clone();
            move || {
                if let Err(e) = upgrade(&request, version) {
                    web_sys::console::error_2(
                        &"draftsmith: the database upgrade failed".into(),
                        &e,
                    );
                    if let Some(tx) = request.transaction() {
                        let _ = tx.abort();
                    }
                }
            }
        });
        request.set_onupgradeneeded(Some(on_upgrade.as_ref().unchecked_ref()));
        let opened = settled(&request).await;
        request.set_onupgradeneeded(None);
        let db: IdbDatabase = opened?.unchecked_into();
        let to_close = db.clone();
        let on_version_change = Closure::<dyn FnMut()>::new(move || to_close.close());
        db.set_onversionchange(Some(on_version_change.as_ref().unchecked_ref()));
        Ok(IdbStore {
            connection: Some(Connection {
                db,
                _on_version_change: on_version_change,
            }),
        })
    }

    /// Close the connection (dropping the store does the same).
    pub fn close(self) {
        drop(self);
    }

    fn db(&self) -> Result<&IdbDatabase, StoreError> {
        self.connection
            .as_ref()
            .map(|c| &c.db)
            .ok_or_else(|| StoreError::Failed("the database connection is closed".into()))
    }

    /// A table of a new read-only transaction.
    fn reading(&self, table: Table) -> Result<IdbObjectStore, StoreError> {
        self.db()?
            .transaction_with_str(table.name())
            .and_then(|tx| tx.object_store(table.name()))
            .map_err(js_error)
    }

    /// Delete a database.
    pub async fn delete(name: &str) -> Result<(), StoreError> {
        let request = factory()?.delete_database(name).map_err(js_error)?;
        settled(&request).await.map(|_| ())
    }

    async fn read_all(
        &self,
        table: Table,
        index: Option<(&str, Value)>,
    ) -> Result<Vec<Value>, StoreError> {
        let store = self.reading(table)?;
        let request = match index {
            None => store.get_all(),
            Some((name, value)) => {
                if !table.indexes().iter().any(|i| i.name == name) {
                    return Err(StoreError::Failed(format!(
                        "table '{}' has no index '{name}'",
                        table.name()
                    )));
                }
                let key = to_js(&value)?;
                store
                    .index(name)
                    .and_then(|index| index.get_all_with_key(&key))
            }
        }
        .map_err(js_error)?;
        let raw: js_sys::Array = settled(&request).await?.unchecked_into();
        let mut records = raw
            .iter()
            .map(|v| from_js(&v))
            .collect::<Result<Vec<_>, _>>()?;
        // Index results come in index-key order; the contract is key order.
        records.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
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
        let db = self.db()?;
        let names: js_sys::Array = batch
            .tables()
            .iter()
            .map(|t| JsValue::from_str(t.name()))
            .collect();
        let tx = db
            .transaction_with_str_sequence_and_mode(&names, IdbTransactionMode::Readwrite)
            .map_err(js_error)?;
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
        let mut stores: Vec<(Table, IdbObjectStore)> = Vec::new();
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
                Some(error) => js_error(error.into()),
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
    reads: Vec<(IdbRequest, Closure<dyn FnMut()>)>,
    tx: IdbTransaction,
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
fn commit_now(tx: &IdbTransaction) {
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
    request: &IdbRequest,
    tx: &IdbTransaction,
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
            let request = self
                .reading(table)?
                .get(&JsValue::from_str(key))
                .map_err(js_error)?;
            let value = settled(&request).await?;
            if value.is_undefined() {
                Ok(None)
            } else {
                from_js(&value).map(Some)
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
