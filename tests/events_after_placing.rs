//! A mutation's events leave the core once its save is placed: the store has the batch in
//! hand before the page hears of the change, and the page then hears everything in order.
#![cfg(not(target_arch = "wasm32"))]

use std::cell::RefCell;
use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::store::faulty::Faulty;
use draftsmith::store::MemoryStore;
use draftsmith::{Core, Event, EventSink, ManualClock, SequentialIds};
use futures::executor::block_on;
use serde_json::{json, Value};

/// Each event's type, with how many batches had reached the store when it was sent.
struct Heard {
    store: Rc<Faulty<MemoryStore>>,
    events: RefCell<Vec<(String, u64)>>,
}

impl EventSink for Heard {
    fn emit(&self, event: Event) {
        let commits = self.store.commits();
        self.events.borrow_mut().push((event.kind, commits));
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
    let store = Rc::new(Faulty::new(MemoryStore::default()));
    let heard = Rc::new(Heard {
        store: store.clone(),
        events: RefCell::new(Vec::new()),
    });
    let core = Core::new(Env {
        clock: Rc::new(ManualClock::new(1_000)),
        ids: Rc::new(SequentialIds::new("e")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: heard.clone(),
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
    heard.events.borrow_mut().clear();
    let before = store.commits();
    send(
        &core,
        3,
        "apply_user_change",
        json!({"chapter": chapter, "baseVersion": version, "changes": [{"retain": 5}, {"insert": "!"}], "tag": "k1"}),
    );
    assert_eq!(store.commits(), before + 1, "one save");
    let after_placing = |kind: &str| (kind.to_string(), before + 1);
    assert_eq!(
        *heard.events.borrow(),
        [
            after_placing("edit"),
            after_placing("history_changed"),
            after_placing("saved")
        ]
    );
}
