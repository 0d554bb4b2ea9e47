//! Persistence: the [`Store`] trait, the schema, and [`MemoryStore`].
//!
//! A store holds JSON records in tables ([`Table`]); every record is an object with a string
//! `id` (its key). Tables have indexes ([`Table::indexes`]): `project` on everything that
//! belongs to a project, `tags` (multi-entry) on notes, `updated` / `time` for recency.
//! Writes go in a [`Batch`], committed atomically: all of it or none of it. That is how a
//! command's state change, its history entry and its audit entry land together.
//!
//! The trait is async with no `Send` bound (IndexedDB futures are not `Send`) and
//! object-safe, so the core holds an `Rc<dyn Store>`. [`MemoryStore`] serves native tests;
//! `IdbStore` in `src/web/` serves the browser. [`conformance`] holds test bodies that both
//! must pass.
//!
//! ## Schema versions
//! [`SCHEMA_VERSION`] is the current version; [`schema`] gives the tables and indexes of any
//! version. Opening a database of an older version creates the missing tables and indexes
//! (IndexedDB's upgrade) and then runs the data migrations ([`migrate`]) in one batch.

pub mod conformance;
pub mod faulty;
mod memory;

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use serde::Serialize;
use serde_json::json;
use serde_json::Value;

pub use self::memory::MemoryStore;
pub use crate::error::StoreError;

/// The current schema version.
pub const SCHEMA_VERSION: u32 = 7;

/// The `meta` record that holds the schema version the data was migrated to.
pub const SCHEMA_RECORD: &str = "db:schema";

/// A table (an IndexedDB object store).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Table {
    /// Projects: name, UI state, chapter order, times.
    Projects,
    /// Chapters: text and version.
    Chapters,
    /// History entries and each project's history state.
    History,
    /// Memory notes.
    Notes,
    /// Goals.
    Goals,
    /// Watched entities.
    Watched,
    /// Per-project (and database) key/value metadata.
    Meta,
    /// The audit log of tool calls.
    Audit,
    /// Story-bible entities (key `<project>/<kind>/<id>`).
    Bible,
    /// Free files of the `data/` view (key `<project>/<path>`, such as `p1/plans/outline.md`).
    Files,
    /// Chapter changes, one record per applied change (key `<chapter>/<version, 20 digits>`).
    Changes,
    /// The project's Yjs document as updates, one record per update (key
    /// `<project>/<id>`), applied in any order.
    Sync,
}

/// An index of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Index {
    /// Index name.
    pub name: &'static str,
    /// The record field it indexes.
    pub key_path: &'static str,
    /// For array fields: one index entry per element.
    pub multi_entry: bool,
}

const fn ix(name: &'static str, key_path: &'static str) -> Index {
    Index {
        name,
        key_path,
        multi_entry: false,
    }
}

impl Table {
    /// Every table of the current schema.
    pub const ALL: [Table; 12] = [
        Table::Projects,
        Table::Chapters,
        Table::History,
        Table::Notes,
        Table::Goals,
        Table::Watched,
        Table::Meta,
        Table::Audit,
        Table::Bible,
        Table::Files,
        Table::Changes,
        Table::Sync,
    ];

    /// The object store's name.
    pub fn name(self) -> &'static str {
        match self {
            Table::Projects => "projects",
            Table::Chapters => "chapters",
            Table::History => "history",
            Table::Notes => "notes",
            Table::Goals => "goals",
            Table::Watched => "watched",
            Table::Meta => "meta",
            Table::Audit => "audit",
            Table::Bible => "bible",
            Table::Files => "files",
            Table::Changes => "changes",
            Table::Sync => "sync",
        }
    }

    /// The table's indexes in the current schema.
    pub fn indexes(self) -> &'static [Index] {
        const PROJECT: Index = ix("project", "project");
        const UPDATED: Index = ix("updated", "updatedMs");
        const TAGS: Index = Index {
            name: "tags",
            key_path: "tags",
            multi_entry: true,
        };
        const TIME: Index = ix("time", "time");
        const BY_PROJECT: &[Index] = &[PROJECT];
        match self {
            Table::Projects => &[UPDATED],
            Table::Chapters
            | Table::History
            | Table::Goals
            | Table::Watched
            | Table::Meta
            | Table::Bible
            | Table::Files
            | Table::Changes
            | Table::Sync => BY_PROJECT,
            Table::Notes => &[PROJECT, TAGS, UPDATED],
            Table::Audit => &[PROJECT, TIME],
        }
    }
}

/// The tables (with their indexes) of a schema version. Version 1 had projects, chapters,
/// history and meta; version 2 added memory (notes, goals, watched entities), the audit log
/// and the `updated` index on projects; version 3 added the story bible; version 4 the free
/// files of the `data/` view (`files`); version 5 the chapter changes (`changes`, indexed by
/// project and chapter), which made chapter records checkpoints; version 6 each project's
/// Yjs document as updates (`sync`); version 7 dropped the `chapter` index of `changes`,
/// which nothing read (a chapter's changes are a range of keys), and which each keystroke
/// had IndexedDB keep.
pub fn schema(version: u32) -> Vec<(Table, Vec<Index>)> {
    if version <= 1 {
        return vec![
            (Table::Projects, vec![]),
            (Table::Chapters, vec![ix("project", "project")]),
            (Table::History, vec![ix("project", "project")]),
            (Table::Meta, vec![ix("project", "project")]),
        ];
    }
    Table::ALL
        .iter()
        .filter(|t| match t {
            Table::Bible => version >= 3,
            Table::Files => version >= 4,
            Table::Changes => version >= 5,
            Table::Sync => version >= 6,
            _ => true,
        })
        .map(|t| match t {
            Table::Changes if version <= 6 => {
                (*t, vec![ix("project", "project"), ix("chapter", "chapter")])
            }
            _ => (*t, t.indexes().to_vec()),
        })
        .collect()
}

/// A record to write: JSON built by the caller, or a typed record that the store serializes
/// only when it writes it. A typed record is never built as a [`Value`]: IndexedDB takes it
/// as JSON text, straight from its fields, and a batch of many records is placed as soon as
/// its first ones are converted.
#[derive(Clone)]
pub enum Record {
    /// A JSON object (its key is its string `id`).
    Json(Value),
    /// A typed record and its key.
    Typed(Rc<dyn TypedRecord>),
}

/// A record the store serializes itself (see [`Record::Typed`]).
pub trait TypedRecord {
    /// Its key: the `id` it serializes.
    fn key(&self) -> &str;
    /// Append its JSON to `out`.
    fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()>;
    /// Its JSON as a value.
    fn to_value(&self) -> serde_json::Result<Value>;
}

/// A serializable record with its key, as a [`TypedRecord`].
struct Keyed<T> {
    key: String,
    record: T,
}

impl<T: Serialize> TypedRecord for Keyed<T> {
    fn key(&self) -> &str {
        &self.key
    }

    fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        serde_json::to_writer(out, &self.record)
    }

    fn to_value(&self) -> serde_json::Result<Value> {
        serde_json::to_value(&self.record)
    }
}

impl Record {
    /// A typed record whose `id` is `key`.
    pub fn typed(key: impl Into<String>, record: impl Serialize + 'static) -> Self {
        Record::Typed(Rc::new(Keyed {
            key: key.into(),
            record,
        }))
    }

    /// The record as a JSON value.
    pub fn to_value(&self) -> Result<Value, StoreError> {
        match self {
            Record::Json(value) => Ok(value.clone()),
            Record::Typed(record) => record
                .to_value()
                .map_err(|e| StoreError::Failed(format!("a record could not be written: {e}"))),
        }
    }

    /// Append the record's JSON text to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) -> Result<(), StoreError> {
        match self {
            Record::Json(value) => serde_json::to_writer(out, value),
            Record::Typed(record) => record.write_json(out),
        }
        .map_err(|e| StoreError::Failed(format!("a record could not be written: {e}")))
    }
}

impl From<Value> for Record {
    fn from(value: Value) -> Self {
        Record::Json(value)
    }
}

impl std::fmt::Debug for Record {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Record::Json(value) => value.fmt(f),
            Record::Typed(record) => match record.to_value() {
                Ok(value) => value.fmt(f),
                Err(e) => write!(f, "<record {}: {e}>", record.key()),
            },
        }
    }
}

/// Records are equal when their JSON is.
impl PartialEq for Record {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Record::Json(a), Record::Json(b)) => a == b,
            _ => self.to_value().ok() == other.to_value().ok(),
        }
    }
}

/// One write of a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Insert or replace a record (keyed by its `id`).
    Put {
        /// Table.
        table: Table,
        /// The record.
        value: Record,
    },
    /// Add a record that must not exist yet (keyed by its `id`): if the table holds a record
    /// with its key when the insert is reached, the batch fails with
    /// [`StoreError::Conflict`] and nothing of it is written. A compare-and-set that needs
    /// no read (IndexedDB's `add`): a chapter's change record of a version is inserted, so
    /// two writers can never both write the change that follows the same version.
    Insert {
        /// Table.
        table: Table,
        /// The record.
        value: Record,
    },
    /// Delete a record by key (no error if absent).
    Delete {
        /// Table.
        table: Table,
        /// Key.
        key: String,
    },
    /// A precondition, checked inside the transaction when it is reached: the record's
    /// `field` equals `equals` (`null` when the record or field is absent). If not, the
    /// batch fails with [`StoreError::Conflict`] and nothing of it is written. This is how a
    /// decision is taken exactly once across tabs (compare-and-set).
    Expect {
        /// Table.
        table: Table,
        /// Key.
        key: String,
        /// The field checked.
        field: String,
        /// Its expected value.
        equals: Value,
    },
}

impl Op {
    /// The table the operation reads or writes.
    pub fn table(&self) -> Table {
        match self {
            Op::Put { table, .. }
            | Op::Insert { table, .. }
            | Op::Delete { table, .. }
            | Op::Expect { table, .. } => *table,
        }
    }

    /// Whether it is an [`Op::Expect`]: a read, which writes nothing.
    pub fn is_expectation(&self) -> bool {
        matches!(self, Op::Expect { .. })
    }

    /// Whether a record (or its absence) meets an [`Op::Expect`].
    pub fn expectation_holds(record: Option<&Value>, field: &str, equals: &Value) -> bool {
        Op::field_holds(record.and_then(|r| r.get(field)), equals)
    }

    /// Whether the expected field's value (`None`: no such field, or no record) meets an
    /// [`Op::Expect`] for `equals`: a missing field counts as `null`.
    pub fn field_holds(value: Option<&Value>, equals: &Value) -> bool {
        value.unwrap_or(&Value::Null) == equals
    }
}

/// Writes committed together: all or nothing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Batch {
    /// The writes, in order.
    pub ops: Vec<Op>,
    /// Fault injection for tests: abort the transaction after this many writes (the store
    /// must then keep none of them).
    pub abort_after: Option<usize>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a put of a record, written as JSON.
    pub fn put(&mut self, table: Table, record: &impl Serialize) {
        self.put_value(table, crate::error::to_json(record));
    }

    /// Add a put of a JSON record.
    pub fn put_value(&mut self, table: Table, value: Value) {
        self.put_record(table, Record::Json(value));
    }

    /// Add a put of a record.
    pub fn put_record(&mut self, table: Table, value: Record) {
        self.ops.push(Op::Put { table, value });
    }

    /// Add an insert of a JSON record that must not exist yet (see [`Op::Insert`]).
    pub fn insert_value(&mut self, table: Table, value: Value) {
        self.insert_record(table, Record::Json(value));
    }

    /// Add an insert of a record that must not exist yet (see [`Op::Insert`]).
    pub fn insert_record(&mut self, table: Table, value: Record) {
        self.ops.push(Op::Insert { table, value });
    }

    /// Add a precondition (see [`Op::Expect`]).
    pub fn expect(&mut self, table: Table, key: impl Into<String>, field: &str, equals: Value) {
        self.ops.push(Op::Expect {
            table,
            key: key.into(),
            field: field.to_string(),
            equals,
        });
    }

    /// Add a delete.
    pub fn delete(&mut self, table: Table, key: impl Into<String>) {
        self.ops.push(Op::Delete {
            table,
            key: key.into(),
        });
    }

    /// True when there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Append another batch's writes.
    pub fn extend(&mut self, other: Batch) {
        self.ops.extend(other.ops);
    }

    /// The same batch with each [`Op::Expect`] that no earlier write of the batch touches
    /// (its record is neither put nor deleted before it) moved to the front, in their order,
    /// and the rest in order. Such an expectation reads the record as it was before the
    /// batch wherever it stands, so this batch means exactly the same; a store that has to
    /// wait for its reads' answers (IndexedDB) gets them all first. Fault injection
    /// (`abort_after`) counts the writes of the original order, so it is kept as it is, and
    /// so is a batch without expectations.
    pub fn expectations_first(self) -> Batch {
        if self.abort_after.is_some() || !self.ops.iter().any(Op::is_expectation) {
            return self;
        }
        // Every write: its position and table, and its key (grouped by key).
        let (mut writes, mut keys): (Vec<(usize, Table)>, Vec<&str>) = Default::default();
        for (at, op) in self.ops.iter().enumerate() {
            let key = match op {
                Op::Put { table, value } | Op::Insert { table, value } => {
                    record_key(*table, value).ok().map(|key| (*table, key))
                }
                Op::Delete { table, key } => Some((*table, key.as_str())),
                Op::Expect { .. } => None,
            };
            if let Some((table, key)) = key {
                writes.push((at, table));
                keys.push(key);
            }
        }
        let mut written: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
        for (i, key) in keys.iter().enumerate() {
            written.entry(*key).or_default().push(i);
        }
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for (at, op) in self.ops.iter().enumerate() {
            let before = |table: Table, key: &str| {
                (written.get(key).into_iter().flatten())
                    .take_while(|&&w| writes[w].0 < at)
                    .any(|&w| writes[w].1 == table)
            };
            match op {
                Op::Expect { table, key, .. } if !before(*table, key) => first.push(at),
                _ => rest.push(at),
            }
        }
        if first.iter().enumerate().all(|(i, at)| i == *at) {
            return self;
        }
        let mut ops: Vec<Option<Op>> = self.ops.into_iter().map(Some).collect();
        Batch {
            ops: first
                .into_iter()
                .chain(rest)
                .filter_map(|at| ops.get_mut(at).and_then(Option::take))
                .collect(),
            abort_after: None,
        }
    }

    /// The tables this batch writes.
    pub fn tables(&self) -> Vec<Table> {
        let mut tables: Vec<Table> = self.ops.iter().map(Op::table).collect();
        tables.sort();
        tables.dedup();
        tables
    }

    /// Check every record before anything is written.
    pub fn validate(&self) -> Result<(), StoreError> {
        for op in &self.ops {
            if let Op::Put { table, value } | Op::Insert { table, value } = op {
                record_key(*table, value)?;
            }
        }
        Ok(())
    }
}

/// A record's key: its non-empty string `id`.
pub fn record_key(table: Table, record: &Record) -> Result<&str, StoreError> {
    match record {
        Record::Json(value) => value_key(table, value),
        Record::Typed(record) if !record.key().is_empty() => Ok(record.key()),
        Record::Typed(_) => Err(StoreError::Invalid {
            table: table.name(),
            reason: "a record needs a non-empty string 'id'".into(),
        }),
    }
}

/// A JSON record's key: its non-empty string `id`.
pub fn value_key(table: Table, value: &Value) -> Result<&str, StoreError> {
    match value.get("id") {
        Some(Value::String(id)) if !id.is_empty() => Ok(id),
        _ if !value.is_object() => Err(StoreError::Invalid {
            table: table.name(),
            reason: "a record must be a JSON object".into(),
        }),
        _ => Err(StoreError::Invalid {
            table: table.name(),
            reason: "a record needs a non-empty string 'id'".into(),
        }),
    }
}

/// A boxed, non-`Send` future of a store operation.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + 'a>>;

/// A bulk write under way ([`Store::begin_puts`]): puts into one table, committed together or
/// not at all. Dropped before [`Puts::commit`], it writes nothing.
pub trait Puts<'a> {
    /// Add a put of `record` (its key is its `id`). An error means the bulk write cannot go
    /// on: drop it.
    fn put(&mut self, record: Record) -> Result<(), StoreError>;

    /// Commit the puts added: resolves once they have landed, or with why none did.
    fn commit(self: Box<Self>) -> StoreFuture<'a, ()>;
}

/// [`Store::begin_puts`] of a store that places nothing before the commit: one batch.
struct Buffered<'a, S: ?Sized> {
    store: &'a S,
    table: Table,
    batch: Batch,
}

impl<'a, S: Store + ?Sized> Puts<'a> for Buffered<'a, S> {
    fn put(&mut self, record: Record) -> Result<(), StoreError> {
        record_key(self.table, &record)?;
        self.batch.put_record(self.table, record);
        Ok(())
    }

    fn commit(self: Box<Self>) -> StoreFuture<'a, ()> {
        let Buffered { store, batch, .. } = *self;
        store.commit(batch)
    }
}

/// Persistent storage of JSON records in tables.
pub trait Store {
    /// The record with this key, if any.
    fn get<'a>(&'a self, table: Table, key: &'a str) -> StoreFuture<'a, Option<Value>>;

    /// Every record of a table, in key order.
    fn get_all(&self, table: Table) -> StoreFuture<'_, Vec<Value>>;

    /// The records whose `index` field equals `value` (for a multi-entry index: contains
    /// it), in key order.
    fn get_by_index<'a>(
        &'a self,
        table: Table,
        index: &'a str,
        value: Value,
    ) -> StoreFuture<'a, Vec<Value>>;

    /// Write a batch atomically: on error nothing of it is written.
    fn commit(&self, batch: Batch) -> StoreFuture<'_, ()>;

    /// Start a bulk write of puts into `table` whose records are made one by one (see
    /// [`Puts`]). A store that can place a write before it knows the next one (IndexedDB)
    /// does, so that it works on the first records while the rest are made; the default
    /// keeps them and commits them as one batch.
    fn begin_puts(&self, table: Table) -> StoreFuture<'_, Box<dyn Puts<'_> + '_>> {
        Box::pin(async move {
            Ok(Box::new(Buffered {
                store: self,
                table,
                batch: Batch::new(),
            }) as Box<dyn Puts<'_>>)
        })
    }

    /// Storage use and quota in bytes, when the platform reports them.
    fn estimate(&self) -> StoreFuture<'_, Option<(u64, u64)>> {
        Box::pin(async { Ok(None) })
    }
}

/// [`migrate`], for a caller that has read the schema record already: `recorded` is the
/// version it holds (a worker reads it on the connection it opens while the core loads).
/// Data already at [`SCHEMA_VERSION`] needs neither a read nor a write, since the record only
/// ever goes up, and once it says the current version the data is migrated. Anything else
/// (no record, an older version, nothing read) runs [`migrate`], which reads it again.
pub async fn migrate_recorded(store: &dyn Store, recorded: Option<u32>) -> Result<u32, StoreError> {
    if recorded == Some(SCHEMA_VERSION) {
        return Ok(SCHEMA_VERSION);
    }
    migrate(store).await
}

/// Bring data written with an older schema up to [`SCHEMA_VERSION`], in one batch. The store
/// must already have the current tables (IndexedDB creates them while upgrading).
///
/// Version 1 → 2: project records gain `updatedMs` (from `createdMs`, else 0), which the new
/// `updated` index sorts by. Versions 3, 4, 5 and 6 only added tables (a version-4 chapter
/// record is a version-5 checkpoint with no changes after it; a project with no `sync`
/// records gets its Yjs document when it is next opened), and version 7 only dropped an
/// index.
pub async fn migrate(store: &dyn Store) -> Result<u32, StoreError> {
    let from = match store.get(Table::Meta, SCHEMA_RECORD).await? {
        // Up to date: nothing to write (a worker's start reads one record).
        Some(record) if record["version"].as_u64() == Some(u64::from(SCHEMA_VERSION)) => {
            return Ok(SCHEMA_VERSION)
        }
        Some(record) => record["version"].as_u64().unwrap_or(1) as u32,
        None => {
            // A database with no schema record is new (empty) or from version 1.
            if store.get_all(Table::Projects).await?.is_empty() {
                SCHEMA_VERSION
            } else {
                1
            }
        }
    };
    let mut batch = Batch::new();
    if from < 2 {
        for mut project in store.get_all(Table::Projects).await? {
            if project.get("updatedMs").is_none() {
                let created = project.get("createdMs").cloned().unwrap_or(json!(0));
                project["updatedMs"] = created;
                batch.put_value(Table::Projects, project);
            }
        }
    }
    batch.put_value(
        Table::Meta,
        json!({"id": SCHEMA_RECORD, "version": SCHEMA_VERSION}),
    );
    store.commit(batch).await?;
    Ok(from)
}
