//! [`Replica`]: a project as a Yjs document (yrs), so that several devices and co-authors
//! share it through a Yjs server.
//!
//! The replica is not a second source of truth: the session (project, history, bible,
//! files, memory) is. Each change this device makes goes through the one edit path and is
//! then mirrored into the document ([`Replica::record_local`]) in a transaction tagged with
//! its origin, giving a Yjs update to store and send. An update from another device is
//! applied to the document ([`Replica::apply_remote`]) and read back as an [`Incoming`]: chapter
//! change sets, chapter list, story-bible entities, free files and memory items, which
//! [`apply_incoming`] applies through the same edit path under the origin `remote:<client>`.
//!
//! ## The document
//! | root (`Y.Map`) | key | value |
//! |---|---|---|
//! | `meta` | `name` | the project's name |
//! | `chapters` | chapter id | `Y.Map`: `title` (string), `pos` (number: chapters sort by it, then id), `text` (`Y.Text`) |
//! | `bible` | `[kind, id, ""]` (JSON) | `true` while the entity exists |
//! | `bible` | `[kind, id, field]` (JSON) | the field as JSON text: `{value, origin, at}` |
//! | `bibleLog` | `[kind, id, field, client]` (JSON) | `Y.Array` of the field's last writes by one Yjs client, as JSON text `{value, origin, at}` |
//! | `files` | path | the free file as JSON text |
//! | `memory` | `note/<id>`, `goal/<id>`, `watched/<id>` | the memory item as JSON text |
//!
//! Bible fields are keys of their own, so two devices that write different fields of one
//! entity both keep their write; two writes of one field resolve the same way everywhere (Yjs'
//! rule for a map key), and both are in the field's log, where the one that lost stays a
//! revision the writer can restore. Each client logs under keys of its own: two clients
//! creating one nested type under one key would keep only one of them. Text offsets are UTF-8 bytes in the document and chars in
//! the core's change sets; the replica keeps a copy of each chapter's text to convert them.

pub mod wire;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use yrs::types::{Delta, Event, PathSegment};
use yrs::updates::decoder::Decode;
use yrs::{
    Any, Array, ArrayPrelim, ArrayRef, DeepObservable, Doc, GetString, Map, MapPrelim, MapRef,
    OffsetKind, Options, Out, ReadTxn, StateVector, Text as _, TextPrelim, TextRef, Transact,
    TransactionMut, Update,
};

use crate::bible::{Entity, Kind, Stamp};
use crate::commands::{Effect, Entry, Origin};
use crate::env::IdSource;
use crate::files::FreeFile;
use crate::memory::{Changed, MemoryItem};
use crate::project::changeset::{ChangeSet, Op};
use crate::project::{Chapter, Text};
use crate::session::Session;

/// How many writes of one story-bible field its log keeps.
pub const FIELD_LOG_LEN: u32 = 20;

/// The origin of the transactions that load stored updates into a document.
const LOAD: &str = "load";

/// Why an update could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplicaError {
    /// The bytes are not a Yjs update.
    #[error("not a Yjs update: {0}")]
    BadUpdate(String),
    /// The update could not be applied to the document.
    #[error("the update does not apply: {0}")]
    Apply(String),
}

/// A chapter as the document has it.
#[derive(Debug, Clone, PartialEq)]
pub struct DocChapter {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its text.
    pub text: String,
}

/// What an update from another device changed, read back from the document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Incoming {
    /// Chapter text changes, in order, each against the text the previous left.
    pub texts: Vec<(String, ChangeSet)>,
    /// The whole chapter list in order, when chapters came, went, moved or were renamed.
    pub chapters: Option<Vec<DocChapter>>,
    /// The project's new name.
    pub name: Option<String>,
    /// Story-bible entities changed (`None`: deleted).
    pub bible: Vec<(Kind, String, Option<Entity>)>,
    /// Free files changed (`None`: deleted).
    pub files: Vec<(String, Option<FreeFile>)>,
    /// Memory items changed (`None`: deleted).
    pub memory: Vec<(Changed, Option<MemoryItem>)>,
}

impl Incoming {
    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
            && self.chapters.is_none()
            && self.name.is_none()
            && self.bible.is_empty()
            && self.files.is_empty()
            && self.memory.is_empty()
    }
}

/// What this device changed, to mirror into the document.
#[derive(Debug, Default)]
pub struct Local<'a> {
    /// Chapter text changes as applied, in order.
    pub texts: Vec<(&'a str, &'a ChangeSet)>,
    /// The chapter list, a title or the project's name may have changed.
    pub project: bool,
    /// Story-bible entities changed.
    pub bible: &'a [(Kind, String)],
    /// Free files changed.
    pub files: &'a [String],
    /// Memory items changed.
    pub memory: &'a [Changed],
}

/// One write of a story-bible field, as the document holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldWrite {
    /// The value (`null`: cleared).
    pub value: Value,
    /// Who wrote it (`human`, `agent:<name>:<date>`, `import`).
    pub origin: String,
    /// When (ms).
    pub at: u64,
}

/// Notes in [`Seen`] that a remote update changed a key of a root map.
type KeySeen = fn(&mut Seen, &str);

/// What the observers saw while a remote update was applied.
#[derive(Default)]
struct Seen {
    /// Collect only while applying a remote update.
    listening: bool,
    texts: Vec<(String, Vec<Delta>)>,
    chapters: bool,
    name: bool,
    bible: BTreeSet<(Kind, String)>,
    files: BTreeSet<String>,
    memory: BTreeSet<String>,
}

/// A project's Yjs document, with a copy of each chapter's text as the document has it.
pub struct Replica {
    doc: Doc,
    meta: MapRef,
    chapters: MapRef,
    bible: MapRef,
    bible_log: MapRef,
    files: MapRef,
    memory: MapRef,
    /// Each chapter's text as the document has it (for offsets in chars).
    mirror: BTreeMap<String, Text>,
    seen: Rc<RefCell<Seen>>,
}

impl std::fmt::Debug for Replica {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replica")
            .field("client", &self.doc.client_id())
            .field("chapters", &self.mirror.len())
            .finish()
    }
}

/// A Yjs client id for a replica: a number below 2^53 (JavaScript's safe integers), taken
/// from a fresh id so that each load of a document writes under a client id of its own.
pub fn client_id(ids: &dyn IdSource) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(ids.next_id());
    (hash & ((1 << 53) - 1)).max(1)
}

impl Replica {
    /// An empty document written under `client`.
    pub fn new(client: u64) -> Self {
        let doc = Doc::with_options(Options {
            client_id: yrs::ClientID::new(client),
            offset_kind: OffsetKind::Bytes,
            ..Options::default()
        });
        let seen = Rc::new(RefCell::new(Seen::default()));
        let replica = Self {
            meta: doc.get_or_insert_map("meta"),
            chapters: doc.get_or_insert_map("chapters"),
            bible: doc.get_or_insert_map("bible"),
            bible_log: doc.get_or_insert_map("bibleLog"),
            files: doc.get_or_insert_map("files"),
            memory: doc.get_or_insert_map("memory"),
            doc,
            mirror: BTreeMap::new(),
            seen,
        };
        replica.observe();
        replica
    }

    /// A document holding a session's project as it is, written under `client` (a project's
    /// first document), with its update.
    pub fn of_session(session: &Session, project_id: &str, client: u64) -> (Self, Vec<u8>) {
        let mut replica = Self::new(client);
        let update = replica.reconcile(session, project_id);
        (replica, update.unwrap_or_default())
    }

    /// Make the document hold the session's project exactly (a document loaded from the
    /// store that lacks what was saved without it, or a project's first document): every
    /// chapter's text compared whole, the chapter list, name, story bible, free files and the
    /// project's memory. Returns the update it made, if any.
    pub fn reconcile(&mut self, session: &Session, project_id: &str) -> Option<Vec<u8>> {
        let mut txn = self.doc.transact_mut_with("import");
        for c in &session.project.chapters {
            let (Some(text), Some(copy)) = (
                text_of(&self.chapters, &txn, &c.id),
                self.mirror.get_mut(&c.id),
            ) else {
                continue;
            };
            if *copy != *c.text() {
                repair(&mut txn, &text, copy, c.text());
            }
        }
        sync_chapters(&mut txn, &self.chapters, &mut self.mirror, session);
        sync_name(&mut txn, &self.meta, session);
        // The bible: every entity of the session, and those only the document has, gone.
        let mut entities: BTreeSet<(Kind, String)> = session
            .bible
            .all()
            .map(|e| (e.kind, e.id.clone()))
            .collect();
        for key in self.bible.keys(&txn) {
            if let Some((kind, id, _)) = parse_field_key(key) {
                entities.insert((kind, id));
            }
        }
        let client = self.doc.client_id().get();
        for (kind, id) in &entities {
            let entity = session.bible.get(*kind, id);
            write_entity(
                &mut txn,
                &self.bible,
                (&self.bible_log, client),
                *kind,
                id,
                entity,
            );
        }
        let mut paths: BTreeSet<String> = session.files.all().map(|f| f.path.clone()).collect();
        paths.extend(self.files.keys(&txn).map(str::to_string));
        for path in &paths {
            put_json(&self.files, &mut txn, path, session.files.get(path));
        }
        let items = project_memory(session, project_id);
        let mine: BTreeSet<String> = items.iter().map(memory_key).collect();
        let gone: Vec<String> = self
            .memory
            .keys(&txn)
            .filter(|k| !mine.contains(*k))
            .map(str::to_string)
            .collect();
        for key in gone {
            self.memory.remove(&mut txn, &key);
        }
        for item in &items {
            put_memory(&self.memory, &mut txn, session, item);
        }
        let update = txn.encode_update_v1();
        drop(txn);
        (!is_empty_update(&update)).then_some(update)
    }

    /// A document from stored updates (in any order), written under `client`.
    pub fn load(updates: &[Vec<u8>], client: u64) -> Result<Self, ReplicaError> {
        let mut replica = Self::new(client);
        {
            let mut txn = replica.doc.transact_mut_with(LOAD);
            for bytes in updates {
                let update =
                    Update::decode_v1(bytes).map_err(|e| ReplicaError::BadUpdate(e.to_string()))?;
                txn.apply_update(update)
                    .map_err(|e| ReplicaError::Apply(e.to_string()))?;
            }
        }
        replica.copy_chapters();
        Ok(replica)
    }

    /// Take in updates stored by another writer of the project (another tab), without
    /// reading them back as changes: the caller brings the session up to date, then
    /// [`Replica::reconcile`]s. Updates that do not decode are left out.
    pub fn absorb(&mut self, updates: &[Vec<u8>]) {
        {
            let mut txn = self.doc.transact_mut_with(LOAD);
            for bytes in updates {
                if let Ok(update) = Update::decode_v1(bytes) {
                    let _ = txn.apply_update(update);
                }
            }
        }
        self.copy_chapters();
    }

    /// Take each chapter's text copy from the document again.
    fn copy_chapters(&mut self) {
        self.mirror = self
            .doc_chapters()
            .into_iter()
            .map(|c| (c.id, Text::from_str(&c.text)))
            .collect();
    }

    /// This document's Yjs client id.
    pub fn client(&self) -> u64 {
        self.doc.client_id().get()
    }

    /// Whether the document holds no chapter (a project known only by its id, before the
    /// first sync).
    pub fn is_empty(&self) -> bool {
        self.mirror.is_empty()
    }

    /// The document's state vector, encoded (sync step 1).
    pub fn state_vector(&self) -> Vec<u8> {
        use yrs::updates::encoder::Encode;
        self.doc.transact().state_vector().encode_v1()
    }

    /// What the document has that a peer with the encoded state vector `remote` lacks (sync
    /// step 2).
    pub fn diff(&self, remote: &[u8]) -> Result<Vec<u8>, ReplicaError> {
        let sv =
            StateVector::decode_v1(remote).map_err(|e| ReplicaError::BadUpdate(e.to_string()))?;
        Ok(self.doc.transact().encode_state_as_update_v1(&sv))
    }

    /// The whole document as one update (to store instead of many small ones).
    pub fn snapshot(&self) -> Vec<u8> {
        self.doc
            .transact()
            .encode_state_as_update_v1(&StateVector::default())
    }

    /// The Yjs client ids whose changes an update holds.
    pub fn authors(update: &[u8]) -> Result<Vec<u64>, ReplicaError> {
        let update =
            Update::decode_v1(update).map_err(|e| ReplicaError::BadUpdate(e.to_string()))?;
        // The lower bound: an update that continues a client's edits starts past clock 0, and
        // `state_vector` counts only clients whose blocks start at 0.
        Ok(update
            .state_vector_lower()
            .iter()
            .map(|(c, _)| c.get())
            .collect())
    }

    /// The chapters as the document has them, in order.
    pub fn doc_chapters(&self) -> Vec<DocChapter> {
        let txn = self.doc.transact();
        let mut list: Vec<(f64, DocChapter)> = self
            .chapters
            .iter(&txn)
            .filter_map(|(id, value)| {
                let Out::YMap(map) = value else {
                    return None;
                };
                let title = match map.get(&txn, "title") {
                    Some(Out::Any(Any::String(s))) => s.to_string(),
                    _ => String::new(),
                };
                let pos = match map.get(&txn, "pos") {
                    Some(Out::Any(Any::Number(n))) => n.as_f64().unwrap_or(0.0),
                    _ => 0.0,
                };
                let text = match map.get(&txn, "text") {
                    Some(Out::YText(text)) => text.get_string(&txn),
                    _ => String::new(),
                };
                Some((
                    pos,
                    DocChapter {
                        id: id.to_string(),
                        title,
                        text,
                    },
                ))
            })
            .collect();
        list.sort_by(|(a, x), (b, y)| a.total_cmp(b).then_with(|| x.id.cmp(&y.id)));
        list.into_iter().map(|(_, c)| c).collect()
    }

    /// The project's name as the document has it.
    pub fn name(&self) -> Option<String> {
        let txn = self.doc.transact();
        match self.meta.get(&txn, "name") {
            Some(Out::Any(Any::String(s))) => Some(s.to_string()),
            _ => None,
        }
    }

    /// Every write of a story-bible field the document's logs keep, by every client, oldest
    /// first.
    pub fn field_log(&self, kind: Kind, id: &str, field: &str) -> Vec<FieldWrite> {
        let txn = self.doc.transact();
        let mut writes: Vec<FieldWrite> = Vec::new();
        for (key, value) in self.bible_log.iter(&txn) {
            let Ok((k, i, f, _client)) = serde_json::from_str::<(Kind, String, String, u64)>(key)
            else {
                continue;
            };
            let Out::YArray(log) = value else {
                continue;
            };
            if k != kind || i != id || f != field {
                continue;
            }
            writes.extend(log.iter(&txn).filter_map(|v| match v {
                Out::Any(Any::String(s)) => serde_json::from_str(&s).ok(),
                _ => None,
            }));
        }
        writes.sort_by_key(|w| w.at);
        writes
    }

    /// The story-bible entity as the document has it, versioned `version`.
    pub fn entity(&self, kind: Kind, id: &str, version: u64) -> Option<Entity> {
        let txn = self.doc.transact();
        self.read_entity(&txn, kind, id, version)
    }

    fn read_entity<T: ReadTxn>(
        &self,
        txn: &T,
        kind: Kind,
        id: &str,
        version: u64,
    ) -> Option<Entity> {
        self.bible.get(txn, &field_key(kind, id, ""))?;
        let mut entity = Entity::empty(kind, id, version);
        for spec in kind.fields() {
            let Some(write) =
                read_json::<FieldWrite, _>(&self.bible, txn, &field_key(kind, id, spec.name))
            else {
                continue;
            };
            if !write.value.is_null() {
                entity.fields.insert(spec.name.to_string(), write.value);
            }
            entity
                .origins
                .insert(spec.name.to_string(), write.origin.clone());
            entity.stamps.insert(
                spec.name.to_string(),
                Stamp {
                    at: write.at,
                    origin: write.origin,
                    version,
                },
            );
        }
        Some(entity)
    }

    /// Mirror what this device changed into the document, in one transaction tagged
    /// `origin`. Returns the update it made (`None`: the document already had it all).
    pub fn record_local(
        &mut self,
        session: &Session,
        project_id: &str,
        origin: &str,
        local: &Local<'_>,
    ) -> Option<Vec<u8>> {
        let mut txn = self.doc.transact_mut_with(origin);
        for &(chapter, change) in &local.texts {
            // A chapter new to the document goes in whole with the chapter list.
            let (Some(text), Some(copy)) = (
                text_of(&self.chapters, &txn, chapter),
                self.mirror.get_mut(chapter),
            ) else {
                continue;
            };
            if change.len_before() == copy.len_chars() {
                write_change(&mut txn, &text, copy, change);
            } else if let Some(c) = session.project.chapter(chapter) {
                // A copy that differs in length from the text the change was made on (the
                // document missed a change) gets the session's text. Several changes to a
                // chapter are each written on the last, whether made by one mutation or by
                // mutations mirrored later together.
                repair(&mut txn, &text, copy, c.text());
            }
        }
        if local.project {
            sync_chapters(&mut txn, &self.chapters, &mut self.mirror, session);
            sync_name(&mut txn, &self.meta, session);
        }
        let client = self.doc.client_id().get();
        for (kind, id) in local.bible {
            write_entity(
                &mut txn,
                &self.bible,
                (&self.bible_log, client),
                *kind,
                id,
                session.bible.get(*kind, id),
            );
        }
        for path in local.files {
            let file = session.files.get(path);
            put_json(&self.files, &mut txn, path, file);
        }
        for item in local.memory {
            if !belongs(session, project_id, item) {
                continue;
            }
            put_memory(&self.memory, &mut txn, session, item);
        }
        let update = txn.encode_update_v1();
        drop(txn);
        (!is_empty_update(&update)).then_some(update)
    }

    /// Apply an update from another device (or the server). Returns what it changed in the
    /// project, for [`apply_incoming`].
    pub fn apply_remote(&mut self, update: &[u8]) -> Result<Incoming, ReplicaError> {
        let decoded =
            Update::decode_v1(update).map_err(|e| ReplicaError::BadUpdate(e.to_string()))?;
        self.seen.replace(Seen {
            listening: true,
            ..Seen::default()
        });
        let applied = {
            let mut txn = self.doc.transact_mut_with("remote");
            txn.apply_update(decoded)
        };
        let seen = self.seen.replace(Seen::default());
        applied.map_err(|e| ReplicaError::Apply(e.to_string()))?;
        Ok(self.incoming(seen))
    }

    /// Turn what the observers saw into changes to the project, updating the mirror.
    fn incoming(&mut self, seen: Seen) -> Incoming {
        let mut incoming = Incoming::default();
        for (chapter, delta) in seen.texts {
            let Some(mirror) = self.mirror.get_mut(&chapter) else {
                continue;
            };
            let change = change_of(mirror, &delta);
            if change.is_identity() || change.apply(mirror).is_err() {
                continue;
            }
            incoming.texts.push((chapter, change));
        }
        if seen.chapters {
            let chapters = self.doc_chapters();
            let ids: BTreeSet<&str> = chapters.iter().map(|c| c.id.as_str()).collect();
            self.mirror.retain(|id, _| ids.contains(id.as_str()));
            for c in &chapters {
                self.mirror
                    .entry(c.id.clone())
                    .or_insert_with(|| Text::from_str(&c.text));
            }
            incoming.chapters = Some(chapters);
        }
        if seen.name {
            incoming.name = self.name();
        }
        let txn = self.doc.transact();
        for (kind, id) in seen.bible {
            let entity = self.read_entity(&txn, kind, &id, 0);
            incoming.bible.push((kind, id, entity));
        }
        for path in seen.files {
            let file = read_json::<FreeFile, _>(&self.files, &txn, &path);
            incoming.files.push((path, file));
        }
        for key in seen.memory {
            let Some((item, value)) = read_memory(&self.memory, &txn, &key) else {
                continue;
            };
            incoming.memory.push((item, value));
        }
        incoming
    }

    /// Everything but the chapters, as changes (the story bible, free files and memory of a
    /// project fetched from a server, to fill its new session).
    pub fn everything(&self) -> Incoming {
        let txn = self.doc.transact();
        let mut incoming = Incoming::default();
        let entities: BTreeSet<(Kind, String)> = self
            .bible
            .keys(&txn)
            .filter_map(parse_field_key)
            .map(|(kind, id, _)| (kind, id))
            .collect();
        for (kind, id) in entities {
            let entity = self.read_entity(&txn, kind, &id, 0);
            incoming.bible.push((kind, id, entity));
        }
        for path in self.files.keys(&txn) {
            let file = read_json::<FreeFile, _>(&self.files, &txn, path);
            incoming.files.push((path.to_string(), file));
        }
        for key in self.memory.keys(&txn) {
            if let Some(item) = read_memory(&self.memory, &txn, key) {
                incoming.memory.push(item);
            }
        }
        incoming
    }

    /// Watch the roots so that a remote update says what it changed.
    fn observe(&self) {
        let seen = self.seen.clone();
        self.chapters.observe_deep("replica", move |txn, events| {
            let mut seen = seen.borrow_mut();
            if !seen.listening {
                return;
            }
            for event in events.iter() {
                match event {
                    Event::Text(e) => {
                        if let Some(PathSegment::Key(id)) = e.path().front() {
                            let delta = e.delta(txn).to_vec();
                            seen.texts.push((id.to_string(), delta));
                        }
                    }
                    _ => seen.chapters = true,
                }
            }
        });
        let keys: [(&MapRef, KeySeen); 4] = [
            (&self.meta, |s, _| s.name = true),
            (&self.bible, |s, key| {
                if let Some((kind, id, _)) = parse_field_key(key) {
                    s.bible.insert((kind, id));
                }
            }),
            (&self.files, |s, key| {
                s.files.insert(key.to_string());
            }),
            (&self.memory, |s, key| {
                s.memory.insert(key.to_string());
            }),
        ];
        for (map, note) in keys {
            let seen = self.seen.clone();
            map.observe_deep("replica", move |txn, events| {
                let mut seen = seen.borrow_mut();
                if !seen.listening {
                    return;
                }
                for event in events.iter() {
                    if let Event::Map(e) = event {
                        for key in e.keys(txn).keys() {
                            note(&mut seen, key);
                        }
                    }
                }
            });
        }
    }
}

/// Apply what an update from another device changed to the session, as changes of `origin`
/// (`remote:<client>`): chapter text through the edit path, recorded in the history (which
/// maps this device's undo through them and never undoes them), the chapter list, story-bible
/// entities, free files and memory items. Returns the chapter edits it applied.
pub fn apply_incoming(
    session: &mut Session,
    incoming: &Incoming,
    origin: &Origin,
    now_ms: u64,
    ids: &dyn IdSource,
) -> Vec<crate::commands::history::Applied> {
    let mut applied = Vec::new();
    for (chapter, change) in &incoming.texts {
        let Some(current) = session.project.chapter(chapter) else {
            continue;
        };
        let Ok(inverse) = change.invert(current.text()) else {
            continue;
        };
        let Ok(version) = session.project.apply_change(chapter, change) else {
            continue;
        };
        let entry = Entry::edit(
            ids.next_id(),
            origin.clone(),
            "Edit from another device",
            now_ms,
            vec![Effect {
                chapter: chapter.clone(),
                change: change.clone(),
                inverse: inverse.clone(),
            }],
        );
        session.history.record_remote(entry, ids);
        applied.push(crate::commands::history::Applied {
            chapter: chapter.clone(),
            change: change.clone(),
            inverse,
            version,
        });
    }
    if let Some(chapters) = &incoming.chapters {
        put_chapters(session, chapters);
    }
    if let Some(name) = &incoming.name {
        if !name.trim().is_empty() {
            session.project.name = name.clone();
        }
    }
    for (kind, id, entity) in &incoming.bible {
        let entity = entity.clone().map(|mut e| {
            // Versions count this device's changes: the entity is newer than any it had.
            let version = session.bible.last_version() + 1;
            e.version = version;
            for stamp in e.stamps.values_mut() {
                stamp.version = version;
            }
            e
        });
        session.bible.restore(*kind, id, entity);
    }
    for (path, file) in &incoming.files {
        session.files.restore(path, file.clone());
    }
    for (item, value) in &incoming.memory {
        session.memory.put_item(item, value.clone());
    }
    applied
}

/// Make the session's chapter list the document's: new chapters come in with their text,
/// those gone go (a project keeps at least one), titles and order follow.
fn put_chapters(session: &mut Session, chapters: &[DocChapter]) {
    if chapters.is_empty() {
        return;
    }
    let ids: BTreeSet<&str> = chapters.iter().map(|c| c.id.as_str()).collect();
    let gone: Vec<String> = session
        .project
        .chapters
        .iter()
        .filter(|c| !ids.contains(c.id.as_str()))
        .map(|c| c.id.clone())
        .collect();
    for id in gone {
        if session.project.remove_chapter(&id).is_ok() {
            session.history.forget_chapter(&id);
        }
    }
    for (index, c) in chapters.iter().enumerate() {
        match session.project.chapter_mut(&c.id) {
            Some(chapter) => {
                if chapter.title != c.title && !c.title.trim().is_empty() {
                    chapter.title = c.title.clone();
                }
            }
            None => {
                let at = index.min(session.project.chapters.len());
                let _ = session
                    .project
                    .insert_chapter(at, Chapter::new(c.id.clone(), c.title.clone(), &c.text));
            }
        }
    }
    for (index, c) in chapters.iter().enumerate() {
        if session.project.chapter_index(&c.id) != Some(index) {
            let _ = session.project.move_chapter(&c.id, index);
        }
    }
}

/// The memory items of a session that belong to the project: its notes, goals and watched
/// entities.
fn project_memory(session: &Session, project_id: &str) -> Vec<Changed> {
    let m = &session.memory;
    let notes = m
        .notes
        .iter()
        .filter(|n| n.project.as_deref() == Some(project_id))
        .map(|n| Changed::Note(n.id.clone()));
    let goals = m
        .goals
        .iter()
        .filter(|g| g.project == project_id)
        .map(|g| Changed::Goal(g.id.clone()));
    let watched = m
        .watched
        .iter()
        .filter(|w| w.project == project_id)
        .map(|w| Changed::Watched(w.id.clone()));
    notes.chain(goals).chain(watched).collect()
}

/// Whether a changed memory item is the project's (a global note stays on this device; an
/// item gone is mirrored as gone).
fn belongs(session: &Session, project_id: &str, item: &Changed) -> bool {
    let m = &session.memory;
    match item {
        Changed::Note(id) => m
            .note(id)
            .is_none_or(|n| n.project.as_deref() == Some(project_id)),
        Changed::Goal(id) => m.goal(id).is_none_or(|g| g.project == project_id),
        Changed::Watched(id) => m
            .watched
            .iter()
            .find(|w| &w.id == id)
            .is_none_or(|w| w.project == project_id),
    }
}

/// Put a memory item of the session (gone: removed) into the document.
fn put_memory(map: &MapRef, txn: &mut TransactionMut, session: &Session, item: &Changed) {
    let key = memory_key(item);
    let m = &session.memory;
    match item {
        Changed::Note(id) => put_json(map, txn, &key, m.note(id)),
        Changed::Goal(id) => put_json(map, txn, &key, m.goal(id)),
        Changed::Watched(id) => put_json(map, txn, &key, m.watched.iter().find(|w| &w.id == id)),
    }
}

fn memory_key(item: &Changed) -> String {
    match item {
        Changed::Note(id) => format!("note/{id}"),
        Changed::Goal(id) => format!("goal/{id}"),
        Changed::Watched(id) => format!("watched/{id}"),
    }
}

fn read_memory<T: ReadTxn>(
    map: &MapRef,
    txn: &T,
    key: &str,
) -> Option<(Changed, Option<MemoryItem>)> {
    let (kind, id) = key.split_once('/')?;
    Some(match kind {
        "note" => (
            Changed::Note(id.to_string()),
            read_json(map, txn, key).map(MemoryItem::Note),
        ),
        "goal" => (
            Changed::Goal(id.to_string()),
            read_json(map, txn, key).map(MemoryItem::Goal),
        ),
        "watched" => (
            Changed::Watched(id.to_string()),
            read_json(map, txn, key).map(MemoryItem::Watched),
        ),
        _ => return None,
    })
}

/// The key of a story-bible field (`""`: the entity's presence).
fn field_key(kind: Kind, id: &str, field: &str) -> String {
    serde_json::to_string(&(kind, id, field)).unwrap_or_default()
}

fn parse_field_key(key: &str) -> Option<(Kind, String, String)> {
    serde_json::from_str(key).ok()
}

fn read_str<T: ReadTxn>(map: &MapRef, txn: &T, key: &str) -> Option<String> {
    match map.get(txn, key) {
        Some(Out::Any(Any::String(s))) => Some(s.to_string()),
        _ => None,
    }
}

fn read_json<V: for<'de> Deserialize<'de>, T: ReadTxn>(
    map: &MapRef,
    txn: &T,
    key: &str,
) -> Option<V> {
    serde_json::from_str(&read_str(map, txn, key)?).ok()
}

/// Put a value as JSON text under `key` (`None`: remove the key), unless it is there already.
fn put_json<V: Serialize>(map: &MapRef, txn: &mut TransactionMut, key: &str, value: Option<&V>) {
    match value.and_then(|v| serde_json::to_string(v).ok()) {
        Some(json) => {
            if read_str(map, txn, key).as_deref() != Some(json.as_str()) {
                map.insert(txn, key, json);
            }
        }
        None => {
            if map.get(txn, key).is_some() {
                map.remove(txn, key);
            }
        }
    }
}

/// Write an entity's fields (`None`: the entity is gone) where the document differs,
/// logging each field written.
fn write_entity(
    txn: &mut TransactionMut,
    bible: &MapRef,
    (log, client): (&MapRef, u64),
    kind: Kind,
    id: &str,
    entity: Option<&Entity>,
) {
    let presence = field_key(kind, id, "");
    let Some(entity) = entity else {
        for spec in kind.fields() {
            let key = field_key(kind, id, spec.name);
            if bible.get(txn, &key).is_some() {
                bible.remove(txn, &key);
            }
        }
        if bible.get(txn, &presence).is_some() {
            bible.remove(txn, &presence);
        }
        return;
    };
    if bible.get(txn, &presence).is_none() {
        bible.insert(txn, presence, true);
    }
    for spec in kind.fields() {
        let key = field_key(kind, id, spec.name);
        let stamp = entity.stamps.get(spec.name);
        let origin = entity.origin(spec.name);
        let value = entity.fields.get(spec.name);
        if value.is_none() && origin.is_none() {
            if bible.get(txn, &key).is_some() {
                bible.remove(txn, &key);
            }
            continue;
        }
        let write = FieldWrite {
            value: value.cloned().unwrap_or(Value::Null),
            origin: origin.unwrap_or("human").to_string(),
            at: stamp.map_or(0, |s| s.at),
        };
        let current = read_json::<FieldWrite, _>(bible, txn, &key);
        if current.as_ref() == Some(&write) {
            continue;
        }
        let Ok(json) = serde_json::to_string(&write) else {
            continue;
        };
        bible.insert(txn, key, json.clone());
        let log_key = serde_json::to_string(&(kind, id, spec.name, client)).unwrap_or_default();
        let list: ArrayRef = match log.get(txn, &log_key) {
            Some(Out::YArray(list)) => list,
            _ => log.insert(txn, log_key, ArrayPrelim::default()),
        };
        list.push_back(txn, json);
        let len = list.len(txn);
        if len > FIELD_LOG_LEN {
            list.remove_range(txn, 0, len - FIELD_LOG_LEN);
        }
    }
}

/// The text of a chapter in the document.
fn text_of<T: ReadTxn>(chapters: &MapRef, txn: &T, id: &str) -> Option<TextRef> {
    match chapters.get(txn, id)? {
        Out::YMap(map) => match map.get(txn, "text")? {
            Out::YText(text) => Some(text),
            _ => None,
        },
        _ => None,
    }
}

/// Write a change set (in chars, against `mirror`) into the document's text, and apply it
/// to the mirror.
fn write_change(txn: &mut TransactionMut, text: &TextRef, mirror: &mut Text, change: &ChangeSet) {
    // `old` walks the text before the change (chars), `at` the document's text (bytes).
    let (mut old, mut at) = (0usize, 0usize);
    for op in change.ops() {
        match op {
            Op::Retain(n) => {
                at += mirror.char_to_byte(old + n) - mirror.char_to_byte(old);
                old += n;
            }
            Op::Delete(n) => {
                let bytes = mirror.char_to_byte(old + n) - mirror.char_to_byte(old);
                text.remove_range(txn, at as u32, bytes as u32);
                old += n;
            }
            Op::Insert(s) => {
                text.insert(txn, at as u32, s);
                at += s.len();
            }
        }
    }
    let _ = change.apply(mirror);
}

/// A document text delta (UTF-8 byte counts, against `mirror`) as a change set in chars.
fn change_of(mirror: &Text, delta: &[Delta]) -> ChangeSet {
    let mut change = ChangeSet::default();
    let mut byte = 0usize;
    for d in delta {
        match d {
            Delta::Retain(n, _) | Delta::Deleted(n) => {
                let end = (byte + *n as usize).min(mirror.len_bytes());
                let chars = mirror.byte_to_char(end) - mirror.byte_to_char(byte);
                if matches!(d, Delta::Deleted(_)) {
                    change.delete(chars);
                } else {
                    change.retain(chars);
                }
                byte = end;
            }
            Delta::Inserted(Out::Any(Any::String(s)), _) => change.insert(s),
            Delta::Inserted(..) => {}
        }
    }
    change.fit(mirror.len_chars()).unwrap_or_default()
}

/// Make the document's chapters the session's: new chapters go in whole, those gone go,
/// titles follow, and positions are rewritten when the order differs.
fn sync_chapters(
    txn: &mut TransactionMut,
    chapters: &MapRef,
    mirror: &mut BTreeMap<String, Text>,
    session: &Session,
) {
    let local = &session.project.chapters;
    let ids: BTreeSet<&str> = local.iter().map(|c| c.id.as_str()).collect();
    let gone: Vec<String> = chapters
        .keys(txn)
        .filter(|id| !ids.contains(id))
        .map(str::to_string)
        .collect();
    for id in gone {
        chapters.remove(txn, &id);
        mirror.remove(&id);
    }
    // The document's order is by position, then id. Positions are rewritten when a chapter
    // is new or the order is not the session's.
    let mut order: Vec<Option<f64>> = Vec::new();
    for c in local {
        match chapters.get(txn, &c.id) {
            Some(Out::YMap(map)) => {
                if read_str(&map, txn, "title").as_deref() != Some(c.title.as_str()) {
                    map.insert(txn, "title", c.title.clone());
                }
                order.push(match map.get(txn, "pos") {
                    Some(Out::Any(Any::Number(n))) => n.as_f64(),
                    _ => None,
                });
            }
            _ => {
                let text = c.text().to_string();
                let map = chapters.insert(txn, c.id.clone(), MapPrelim::default());
                map.insert(txn, "title", c.title.clone());
                map.insert(txn, "pos", order.len() as f64);
                map.insert(txn, "text", TextPrelim::new(text.as_str()));
                mirror.insert(c.id.clone(), Text::from_str(&text));
                order.push(None);
            }
        }
    }
    let in_order = order.iter().all(Option::is_some)
        && local.windows(2).zip(order.windows(2)).all(|(c, p)| {
            let (a, b) = (p[0].unwrap_or(f64::NAN), p[1].unwrap_or(f64::NAN));
            a < b || (a == b && c[0].id < c[1].id)
        });
    if !in_order {
        for (index, c) in local.iter().enumerate() {
            if let Some(Out::YMap(map)) = chapters.get(txn, &c.id) {
                if order[index] != Some(index as f64) {
                    map.insert(txn, "pos", index as f64);
                }
            }
        }
    }
}

/// Make the document's project name the session's.
fn sync_name(txn: &mut TransactionMut, meta: &MapRef, session: &Session) {
    let name = session.project.name.as_str();
    if read_str(meta, txn, "name").as_deref() != Some(name) {
        meta.insert(txn, "name", name);
    }
}

/// Make a chapter's text in the document (and its copy) `to`, changing only what differs
/// ([`crate::files::diff::diff`]).
fn repair(txn: &mut TransactionMut, text: &TextRef, copy: &mut Text, to: &Text) {
    let change = crate::files::diff::diff(&copy.to_string(), &to.to_string());
    write_change(txn, text, copy, &change);
}

/// Whether an encoded update carries nothing (no new items and no deletions).
fn is_empty_update(update: &[u8]) -> bool {
    update == [0, 0]
}
