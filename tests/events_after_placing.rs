//! A mutation's events leave the core once its save is placed: the store has the batch in
//! hand before the page hears of the change, and the page then hears everything in order.
#![cfg(not(target_arch = "wasm32"))]

use std::cell::RefCell;
use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::store::{Batch, MemoryStore, Store, StoreFuture, Table};
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures::executor::block_on;
use serde_json::{json, Value};

/// A store that notes, as each batch reaches it, the events the page has heard so far.
struct Watching {
    inner: MemoryStore,
    events: Rc<RecordingSink>,
    heard_at_commit: RefCell<Vec<Vec<String>>>,
}

impl Store for Watching {
    fn get<'a>(&'a self, t: Table, k: &'a str) -> StoreFuture<'a, Option<Value>> {
        self.inner.get(t, k)
    }
    fn get_all(&self, t: Table) -> StoreFuture<'_, Vec<Value>> {
        self.inner.get_all(t)
    }
    fn get_by_index<'a>(&'a self, t: Table, i: &'a str, v: Value) -> StoreFuture<'a, Vec<Value>> {
        self.inner.get_by_index(t, i, v)
    }
    fn commit(&self, batch: Batch) -> StoreFuture<'_, ()> {
        let heard = self.events.peek().into_iter().map(|e| e.kind).collect();
        self.heard_at_commit.borrow_mut().push(heard);
        self.inner.commit(batch)
    }
}

fn send(core: &Core, id: u64, kind: &str, params: Value) -> Value {
    let text = json!({"id": id, "type": kind, "params": params}).to_string();
    let response: Value = serde_json::from_str(&block_on(core.handle_text(&text))).unwrap();
    assert_eq!(response["ok"], true, "{kind} -> {response}");
    response["result"].clone()
}

#[test]
fn a_keystroke_is_heard_of_after_its_save_is_placed_and_in_order() {
    let events = Rc::new(RecordingSink::default());
    let store = Rc::new(Watching {
        inner: MemoryStore::default(),
        events: events.clone(),
        heard_at_commit: RefCell::new(Vec::new()),
    });
    let core = Core::new(Env {
        clock: Rc::new(ManualClock::new(1_000)),
        ids: Rc::new(SequentialIds::new("e")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: events.clone(),
        store: store.clone(),
    });
    let project = send(
        &core,
        1,
        "create_project",
        json!({"name": "P", "chapters": [{"title": "One", "text": "Hello."}]}),
    );
    let chapter = project["chapters"][0]["id"].clone();
    let version = send(&core, 2, "get_chapter", json!({ "chapter": chapter }))["version"].clone();
    events.take();
    store.heard_at_commit.borrow_mut().clear();
    send(
        &core,
        3,
        "apply_user_change",
        json!({"chapter": chapter, "baseVersion": version, "changes": [{"retain": 5}, {"insert": "!"}], "tag": "k1"}),
    );
    let heard = store.heard_at_commit.borrow().clone();
    assert_eq!(heard.len(), 1, "one save: {heard:?}");
    assert!(
        heard[0].is_empty(),
        "heard before the save was placed: {:?}",
        heard[0]
    );
    let kinds: Vec<String> = events.take().into_iter().map(|e| e.kind).collect();
    assert_eq!(kinds, ["edit", "history_changed", "saved"]);
}
