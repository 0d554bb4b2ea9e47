//! [`IdbStore`]: the [`Store`] over IndexedDB, through [`rexie`] and, for batches, web-sys.
//!
//! Records are plain objects in IndexedDB (key paths and indexes work; no `Map`s appear).
//! They cross as JSON text, which `JSON.parse` reads on the way in ([`record_to_js`]) and
//! `JSON.stringify` writes on the way out ([`from_js`]): both measured faster than
//! `serde-wasm-bindgen`, which converts the keys of index queries. rexie opens the database
//! (its builder creates and upgrades the schema), and serves the reads; it closes its
//! connection when another connection asks for a newer version (its `versionchange` event),
//! so another tab can upgrade the database.
//!
//! A batch is one readwrite transaction over the tables it touches, written through a second
//! connection with web-sys ([`IdbStore::write`]): every request of the batch is placed at
//! once, in order, and only the reads of its [`Op::Expect`]s are listened to. Once the last
//! read has answered (or at once, without reads) the transaction is committed, or aborted
//! when an expectation did not hold; the batch has landed when the transaction completes. So
//! a keystroke's batch costs one round trip to the database, and IndexedDB starts committing
//! as soon as it can. rexie's requests could not do this: it listens to every request (two
//! closures apiece), and its `commit()` drops its handlers at the transaction's first
//! `error` event, so a write failing after an early commit would call a dropped closure. An
//! [`Op::Insert`] is an `add`, whose `ConstraintError` (the key is taken) aborts the
//! transaction and is reported as a conflict. The store of the worker that holds the
//! database's writer lock is its sole writer ([`IdbStore::set_sole_writer`]): its batches
//! skip their expectations, which guard against another writer, and are committed as soon as
//! they are placed.

use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;

use futures_util::future::{FutureExt, LocalBoxFuture, Shared};
use js_sys::{Promise, Reflect};
use rexie::{Index, KeyRange, ObjectStore, Rexie, TransactionMode};
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{IdbDatabase, IdbObjectStore, IdbRequest, IdbTransaction, IdbTransactionMode};

use crate::store::{
    migrate_recorded, record_key, schema, Batch, Op, Puts, Record, Store, StoreError, StoreFuture,
    Table, SCHEMA_VERSION,
};

/// IndexedDB storage. Dropping it closes its connections (so a later upgrade or delete of
/// the database is not blocked).
pub struct IdbStore {
    db: Option<Rexie>,
    /// The connection batches are written through, opening or open (see
    /// [`IdbStore::open_version`]).
    writer: Option<Opening>,
    /// Whether this store's writes are the only ones the database gets (see
    /// [`IdbStore::set_sole_writer`]).
    sole_writer: Cell<bool>,
}

/// The writer's connection as it opens: every batch awaits it (at once, once it is open).
type Opening = Shared<LocalBoxFuture<'static, Result<Rc<Writer>, StoreError>>>;

/// The connection batches are written through, with the handler that closes it when another
/// connection asks for a newer version (as rexie's builder does for its own).
struct Writer {
    db: IdbDatabase,
    _on_version_change: Closure<dyn FnMut()>,
}

impl Writer {
    /// Open a connection to `name` at `version`, the one rexie opened (and made the schema
    /// of): a database another tab has upgraded since refuses it (`VersionError`).
    async fn open(name: String, version: u32) -> Result<Rc<Writer>, StoreError> {
        let factory: web_sys::IdbFactory = Reflect::get(&js_sys::global(), &"indexedDB".into())
            .ok()
            .filter(|f| !f.is_undefined() && !f.is_null())
            .ok_or_else(|| StoreError::Failed("IndexedDB is not available here".into()))?
            .unchecked_into();
        let request = factory.open_with_u32(&name, version).map_err(js_error)?;
        if JsFuture::from(answered(&request)).await.is_err() {
            return Err(request_error(&request));
        }
        let db: IdbDatabase = request.result().map_err(js_error)?.unchecked_into();
        let closing = db.clone();
        let on_version_change = Closure::<dyn FnMut()>::new(move || closing.close());
        db.set_onversionchange(Some(on_version_change.as_ref().unchecked_ref()));
        Ok(Rc::new(Writer {
            db,
            _on_version_change: on_version_change,
        }))
    }
}

impl Drop for IdbStore {
    fn drop(&mut self) {
        if let Some(db) = self.db.take() {
            db.close();
        }
        self.writer = None;
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.db.set_onversionchange(None);
        self.db.close();
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
fn records_to_js<R: std::borrow::Borrow<Record>>(
    records: &[R],
) -> Result<Vec<JsValue>, StoreError> {
    let mut json = vec![b'['];
    for (i, record) in records.iter().enumerate() {
        if i > 0 {
            json.push(b',');
        }
        record.borrow().write_json(&mut json)?;
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
        Self::open_recorded(name, std::future::ready(None)).await
    }

    /// [`IdbStore::open`], for a caller that reads the schema version the data was migrated
    /// to on a connection of its own while this one opens: `recorded` resolves to it (or to
    /// `None`), and when it is the current one the start is spared its own read (see
    /// [`migrate_recorded`]).
    pub async fn open_recorded(
        name: &str,
        recorded: impl Future<Output = Option<u32>>,
    ) -> Result<IdbStore, StoreError> {
        let (store, recorded) =
            futures_util::join!(Self::open_version(name, SCHEMA_VERSION), recorded);
        let store = store?;
        migrate_recorded(&store, recorded).await?;
        Ok(store)
    }

    /// Open the database with the tables of a given schema version and no data migration
    /// (tests use this to write a version-1 database). An upgrade that fails is aborted, and
    /// the database stays as it was.
    pub async fn open_version(name: &str, version: u32) -> Result<IdbStore, StoreError> {
        let db = layout(name, version).build().await.map_err(rexie_error)?;
        // The writer's connection is asked for once rexie's has made (or upgraded) the
        // schema, and not waited for here: the first batch waits for it, while the reads of
        // the start go on. It is driven to its end whatever happens to the store (opened for
        // a store that is gone, it closes as it is dropped).
        let writer = Writer::open(name.to_string(), version)
            .boxed_local()
            .shared();
        wasm_bindgen_futures::spawn_local(writer.clone().map(drop));
        Ok(IdbStore {
            db: Some(db),
            writer: Some(writer),
            sole_writer: Cell::new(false),
        })
    }

    /// Say whether this store is the only writer of its database: the worker that holds the
    /// database's writer lock, through which every tab writes. Its batches then skip their
    /// [`Op::Expect`]s, which check that no other writer changed a record since this core
    /// last saw it: there is none, and so no read to wait for before the commit. An insert
    /// whose key is taken still fails as a conflict.
    pub fn set_sole_writer(&self, sole: bool) {
        self.sole_writer.set(sole);
    }

    /// Close the connections (dropping the store does the same).
    pub fn close(self) {
        drop(self);
    }

    fn db(&self) -> Result<&Rexie, StoreError> {
        self.db
            .as_ref()
            .ok_or_else(|| StoreError::Failed("the database connection is closed".into()))
    }

    /// The writer's connection, once open.
    async fn writer(&self) -> Result<Rc<Writer>, StoreError> {
        match &self.writer {
            Some(opening) => opening.clone().await,
            None => Err(StoreError::Failed(
                "the database connection is closed".into(),
            )),
        }
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
    /// transaction's requests in the order they were placed, and answers them in that
    /// order); a small batch's records are converted before the transaction is made, and a
    /// bigger batch's run of puts as it is placed, a few records first. Only the
    /// reads of the batch's [`Op::Expect`]s are listened to, and only the last of them: when
    /// it has answered, every read has. Its waker's task is a microtask of that `success`
    /// event, so the transaction is still active: it is aborted there if an expectation did
    /// not hold (the writes placed after the reads fail with `AbortError`, which nothing
    /// listens to), and committed otherwise, without waiting for the writes' answers. A
    /// batch without reads (and every batch of the sole writer, which skips its
    /// expectations) is committed as soon as it is placed. The batch has landed when
    /// the transaction completes; a write that fails (an insert whose key is taken, a full
    /// quota) aborts it, and the transaction's error says why.
    async fn write(&self, mut batch: Batch) -> Result<(), StoreError> {
        // Reads first (the order IndexedDB answers them in); none for the sole writer.
        if self.sole_writer.get() {
            batch.ops.retain(|op| !op.is_expectation());
        }
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
        let names = TABLE_NAMES.with(|names| names.borrow_mut().scope(&tables));
        let writer = self.writer().await?;
        // A small batch's records are converted before the transaction is made, so that its
        // requests are placed one after the other.
        let converted = converted_up_front(&ops)?;
        let tx = writer
            .db
            .transaction_with_str_sequence_and_mode(&names, IdbTransactionMode::Readwrite)
            .map_err(js_error)?;
        // Listened to before anything can end it.
        let landing = settled(&tx);
        let settled = JsFuture::from(landing.clone());
        let outcome = place(&tx, &tables, &names, ops, converted);
        let decided = match outcome {
            Err(error) => Err(error),
            Ok(Placed { reads, last }) => {
                // The request to wait for: the last read, or (cut short) the last request.
                let waited = if cut_short {
                    last
                } else {
                    reads.last().map(|r| r.request.clone())
                };
                if let Some(request) = waited {
                    // An error (the promise rejects) aborts the transaction by itself, which
                    // `settled` reports.
                    let _ = JsFuture::from(answered(&request)).await;
                }
                reads.iter().try_for_each(Read::check)
            }
        };
        let aborted = match decided {
            Ok(()) if !cut_short => {
                // Done placing: IndexedDB may commit now. It throws if the transaction has
                // ended already (a request failed), which `settled` reports, and where the
                // browser has no `commit()` (the transaction then commits by itself). web-sys
                // marks it deprecated; it is IndexedDB 3.0's, in every current engine.
                #[allow(deprecated)]
                let _ = tx.commit();
                None
            }
            Ok(()) => Some(StoreError::Aborted(format!(
                "aborted after {placed} writes (fault injection)"
            ))),
            Err(refusal) => Some(refusal),
        };
        if aborted.is_some() {
            // Throws if it has ended already.
            let _ = tx.abort();
        }
        // A request waiting for this save may send its answer when it lands: told once the
        // transaction is placed and committed, so that telling it does not delay them.
        super::ahead::landing(&landing);
        // Resolved on `complete`, rejected on `abort`.
        let completed = settled.await.is_ok();
        match (completed, tx.error(), aborted) {
            (true, _, _) => Ok(()),
            // A request failed: the first that did says why (those after it fail with
            // `AbortError`).
            (_, Some(error), _) => Err(failed(&error)),
            (_, None, Some(refusal)) => Err(refusal),
            (_, None, None) => Err(browser_aborted()),
        }
    }

    /// [`Store::begin_puts`]: the transaction is made at once, and its puts are placed as
    /// they are added ([`IdbPuts`]).
    async fn begin(&self, table: Table) -> Result<IdbPuts, StoreError> {
        let writer = self.writer().await?;
        let names = TABLE_NAMES.with(|names| names.borrow_mut().scope(&[table]));
        let tx = writer
            .db
            .transaction_with_str_sequence_and_mode(&names, IdbTransactionMode::Readwrite)
            .map_err(js_error)?;
        // Listened to before anything can end it.
        let landing = settled(&tx);
        let store = tx.object_store(table.name()).map_err(js_error)?;
        Ok(IdbPuts {
            tx,
            table,
            landing,
            placing: Chunked::new(store),
            ended: false,
        })
    }
}

/// Why a transaction failed, from its error: the first request that failed (those after it
/// fail with `AbortError`).
fn failed(error: &web_sys::DomException) -> StoreError {
    match storage_error(dom_text(error)) {
        // An insert's record was there already: another writer got there first.
        StoreError::Failed(text) if error.name() == "ConstraintError" => {
            StoreError::Conflict(format!("a record to insert exists already ({text})"))
        }
        error => error,
    }
}

/// A transaction that aborted with no error of its own.
fn browser_aborted() -> StoreError {
    StoreError::Aborted("the browser aborted the transaction".into())
}

/// A bulk write of puts ([`Store::begin_puts`]) in a transaction of its own, made when the
/// bulk write begins. Its records are placed as they are added ([`Chunked`]): IndexedDB works
/// on the first ones while the next are made. The transaction must still be active when a
/// put is placed: the caller adds them in the task that began the bulk write (a put placed
/// later fails, and the bulk write with it). Dropped before its commit, the transaction is
/// aborted.
struct IdbPuts {
    tx: IdbTransaction,
    table: Table,
    /// Resolved on `complete`, rejected on `abort`.
    landing: Promise,
    placing: Chunked,
    /// Committed (or given up, with nothing placed): nothing to abort when dropped.
    ended: bool,
}

impl<'a> Puts<'a> for IdbPuts {
    fn put(&mut self, record: Record) -> Result<(), StoreError> {
        record_key(self.table, &record)?;
        self.placing.add(record)
    }

    fn commit(mut self: Box<Self>) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            self.placing.place()?;
            self.ended = true;
            if self.placing.last.is_none() {
                // Nothing to write. Throws if it has ended already.
                let _ = self.tx.abort();
                return Ok(());
            }
            // Throws if it has ended already (a request failed), which `landing` reports
            // (see `IdbStore::write`).
            #[allow(deprecated)]
            let _ = self.tx.commit();
            super::ahead::landing(&self.landing);
            if JsFuture::from(self.landing.clone()).await.is_ok() {
                return Ok(());
            }
            Err(self.tx.error().map_or_else(browser_aborted, |e| failed(&e)))
        })
    }
}

impl Drop for IdbPuts {
    fn drop(&mut self) {
        if !self.ended {
            // Throws if it has ended already.
            let _ = self.tx.abort();
        }
    }
}

/// What placing a batch's requests left to wait for.
struct Placed {
    /// The reads of its expectations, in order.
    reads: Vec<Read>,
    /// The last request placed.
    last: Option<IdbRequest>,
}

/// The read of an [`Op::Expect`], and what it expects.
struct Read {
    request: IdbRequest,
    table: Table,
    field: String,
    equals: Value,
}

impl Read {
    /// Once answered: whether the record read holds what was expected.
    fn check(&self) -> Result<(), StoreError> {
        let found = self.request.result().map_err(js_error)?;
        // Only the field is read out of the record (a record that is not an object has none).
        let value = if found.is_object() {
            js_sys::Reflect::get(&found, &JsValue::from_str(&self.field)).map_err(js_error)?
        } else {
            JsValue::UNDEFINED
        };
        let value = if value.is_undefined() {
            None
        } else {
            Some(from_js(value)?)
        };
        if Op::field_holds(value.as_ref(), &self.equals) {
            Ok(())
        } else {
            Err(StoreError::Conflict(format!(
                "'{}' no longer has {} = {}",
                self.table.name(),
                self.field,
                self.equals
            )))
        }
    }
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// An `IDBTransaction`, for [`NamedStores::object_store`].
    #[wasm_bindgen(js_name = IDBTransaction)]
    type NamedStores;

    /// `IDBTransaction.objectStore(name)` with the name as a JS string already (web-sys's
    /// takes a `&str`, decoded at each call).
    #[wasm_bindgen(method, catch, js_name = objectStore)]
    fn object_store(this: &NamedStores, name: &JsValue) -> Result<IdbObjectStore, JsValue>;
}

thread_local! {
    static TABLE_NAMES: std::cell::RefCell<TableNames> =
        const { std::cell::RefCell::new(TableNames { scopes: Vec::new() }) };
}

/// The lists of table names that batches' transactions span, as JS strings, made once each:
/// a string that crosses is decoded from UTF-8 each time, a `JsValue` kept in wasm is not.
struct TableNames {
    /// Each scope made so far (a batch's tables, sorted): a handful.
    scopes: Vec<(Vec<Table>, js_sys::Array)>,
}

impl TableNames {
    /// The names of `tables`, in their order, as the array `IDBDatabase.transaction` takes.
    fn scope(&mut self, tables: &[Table]) -> js_sys::Array {
        if let Some((_, scope)) = self.scopes.iter().find(|(t, _)| t == tables) {
            return scope.clone();
        }
        let scope: js_sys::Array = tables.iter().map(|t| JsValue::from_str(t.name())).collect();
        self.scopes.push((tables.to_vec(), scope.clone()));
        scope
    }
}

/// How many records a batch may hold to have them all converted before its transaction is
/// made ([`converted_up_front`]): a keystroke's two, an edit's few. A bigger batch has them
/// converted as they are placed, a few first, so that IndexedDB starts on them at once.
const UP_FRONT_RECORDS: usize = 8;

/// The records of a small batch (at most [`UP_FRONT_RECORDS`]) as JS objects, in the order
/// of its puts and inserts, in one crossing; `None` for a bigger batch.
fn converted_up_front(ops: &[Op]) -> Result<Option<std::vec::IntoIter<JsValue>>, StoreError> {
    let records: Vec<&Record> = ops
        .iter()
        .filter_map(|op| match op {
            Op::Put { value, .. } | Op::Insert { value, .. } => Some(value),
            Op::Delete { .. } | Op::Expect { .. } => None,
        })
        .take(UP_FRONT_RECORDS + 1)
        .collect();
    if records.len() > UP_FRONT_RECORDS {
        return Ok(None);
    }
    Ok(Some(records_to_js(&records)?.into_iter()))
}

/// Place the requests of `ops`, in order, in `tx` (over `tables`, whose JS names are
/// `names`, in the same order), with the records `converted` up front for a small batch.
/// Otherwise each run of puts into one table has its records converted [`FIRST_RECORDS`] then
/// [`RECORDS_AT_A_TIME`] at a time, and each chunk is dropped once placed: nothing of the
/// batch is left to free after the transaction completes.
fn place(
    tx: &IdbTransaction,
    tables: &[Table],
    names: &js_sys::Array,
    ops: Vec<Op>,
    mut converted: Option<std::vec::IntoIter<JsValue>>,
) -> Result<Placed, StoreError> {
    let stores = tables
        .iter()
        .zip(names.iter())
        .map(|(&t, name)| {
            tx.unchecked_ref::<NamedStores>()
                .object_store(&name)
                .map(|store| (t, store))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(js_error)?;
    // A handful of tables: found by a scan.
    let store_of = |table: Table| -> Result<&IdbObjectStore, StoreError> {
        stores
            .iter()
            .find(|(t, _)| *t == table)
            .map(|(_, store)| store)
            .ok_or_else(|| StoreError::Failed(format!("'{}' is not in the batch", table.name())))
    };
    let mut placed = Placed {
        reads: Vec::new(),
        last: None,
    };
    let mut ops = ops.into_iter().peekable();
    while let Some(op) = ops.next() {
        let table = op.table();
        let store = store_of(table)?;
        let request = match (op, converted.as_mut()) {
            (Op::Put { .. }, Some(converted)) => store.put(&next(converted)?).map_err(js_error)?,
            (Op::Insert { .. }, Some(converted)) => {
                store.add(&next(converted)?).map_err(js_error)?
            }
            (Op::Put { value, .. }, None) => {
                let same = |next: &Op| matches!(next, Op::Put { table: t, .. } if *t == table);
                let mut run = vec![value];
                while let Some(Op::Put { value, .. }) = ops.next_if(same) {
                    run.push(value);
                }
                put_run(store, run)?
            }
            (Op::Insert { value, .. }, None) => {
                let record = record_to_js(&value)?;
                drop(value);
                store.add(&record).map_err(js_error)?
            }
            (Op::Delete { key, .. }, _) => {
                store.delete(&JsValue::from_str(&key)).map_err(js_error)?
            }
            (
                Op::Expect {
                    key, field, equals, ..
                },
                _,
            ) => {
                let request = store.get(&JsValue::from_str(&key)).map_err(js_error)?;
                placed.reads.push(Read {
                    request: request.clone(),
                    table,
                    field,
                    equals,
                });
                request
            }
        };
        placed.last = Some(request);
    }
    Ok(placed)
}

/// The next record converted up front (there is one for each put and insert).
fn next(converted: &mut std::vec::IntoIter<JsValue>) -> Result<JsValue, StoreError> {
    converted
        .next()
        .ok_or_else(|| StoreError::Failed("a record was not converted".into()))
}

/// Put a run of records into one table, in order; returns the last request.
fn put_run(store: &IdbObjectStore, records: Vec<Record>) -> Result<IdbRequest, StoreError> {
    let mut placing = Chunked::new(store.clone());
    for record in records {
        placing.add(record)?;
    }
    placing.place()?;
    placing
        .last
        .ok_or_else(|| StoreError::Failed("an empty run of puts".into()))
}

/// Puts into one object store, converted and placed [`FIRST_RECORDS`] first, then
/// [`RECORDS_AT_A_TIME`] at a time (one crossing each), as they are added; each chunk is
/// dropped once placed.
struct Chunked {
    store: IdbObjectStore,
    /// The records added and not placed yet.
    chunk: Vec<Record>,
    /// How many records are placed at a time.
    size: usize,
    /// The last put placed.
    last: Option<IdbRequest>,
}

impl Chunked {
    fn new(store: IdbObjectStore) -> Self {
        Self {
            store,
            chunk: Vec::with_capacity(FIRST_RECORDS),
            size: FIRST_RECORDS,
            last: None,
        }
    }

    /// Add a record; the chunk is placed once it is full.
    fn add(&mut self, record: Record) -> Result<(), StoreError> {
        self.chunk.push(record);
        if self.chunk.len() >= self.size {
            self.place()?;
        }
        Ok(())
    }

    /// Place the records added since the last chunk.
    fn place(&mut self) -> Result<(), StoreError> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let records = records_to_js(&self.chunk)?;
        self.chunk.clear();
        self.size = RECORDS_AT_A_TIME;
        for record in records {
            self.last = Some(self.store.put(&record).map_err(js_error)?);
        }
        Ok(())
    }
}

/// A promise that resolves with the `success` event of `request`, or rejects with its
/// `error` event.
fn answered(request: &IdbRequest) -> Promise {
    Promise::new(&mut |resolve, reject| {
        request.set_onsuccess(Some(&resolve));
        request.set_onerror(Some(&reject));
    })
}

/// A promise that resolves with the `complete` event of `tx`, or rejects with its `abort`
/// event.
fn settled(tx: &IdbTransaction) -> Promise {
    Promise::new(&mut |resolve, reject| {
        tx.set_oncomplete(Some(&resolve));
        tx.set_onabort(Some(&reject));
    })
}

/// A DOM exception as text, as the browser names it (`ConstraintError: …`).
fn dom_text(error: &web_sys::DomException) -> String {
    format!("{}: {}", error.name(), error.message())
}

/// Why a request failed, as a storage error.
fn request_error(request: &IdbRequest) -> StoreError {
    match request.error() {
        Ok(Some(error)) => storage_error(dom_text(&error)),
        _ => StoreError::Failed("the IndexedDB request failed".into()),
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

    fn begin_puts(&self, table: Table) -> StoreFuture<'_, Box<dyn Puts<'_> + '_>> {
        Box::pin(async move { Ok(Box::new(self.begin(table).await?) as Box<dyn Puts<'_>>) })
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
