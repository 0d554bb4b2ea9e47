//! A keystroke's answer, and a bulk write of notes', is given ahead of its save
//! (`Core::handle_in_ahead`): known before the save is placed, and the same answer the core
//! returns once the save has ended, whether it landed or failed. Requests that save nothing,
//! or whose answer waits on more than a save, give nothing ahead.
#![cfg(not(target_arch = "wasm32"))]

use std::cell::RefCell;
use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::store::faulty::Faulty;
use draftsmith::store::{MemoryStore, Store, Table};
use draftsmith::{Core, Event, EventSink, ManualClock, SequentialIds};
use futures::executor::block_on;
use serde_json::{json, Value};

/// The events' types, as they are heard.
#[derive(Default)]
struct Heard(RefCell<Vec<String>>);

impl EventSink for Heard {
    fn emit(&self, event: Event) {
        self.0.borrow_mut().push(event.kind);
    }
}

struct World {
    core: Core,
    store: Rc<Faulty<MemoryStore>>,
    heard: Rc<Heard>,
    chapter: Value,
}

impl World {
    fn new() -> Self {
        let store = Rc::new(Faulty::new(MemoryStore::default()));
        let heard = Rc::new(Heard::default());
        let core = Core::new(Env {
            clock: Rc::new(ManualClock::new(1_000)),
            ids: Rc::new(SequentialIds::new("e")),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: heard.clone(),
            store: store.clone(),
        });
        let mut world = World {
            core,
            store,
            heard,
            chapter: Value::Null,
        };
        let (project, _) = world.send(
            1,
            "create_project",
            json!({"name": "P", "chapters": [{"title": "One", "text": "Hello."}]}),
        );
        world.chapter = project["result"]["chapters"][0]["id"].clone();
        world
    }

    /// Whether the page has heard a `storage_error`.
    fn heard_storage_error(&self) -> bool {
        self.heard.0.borrow().iter().any(|k| k == "storage_error")
    }

    /// Send a request; its response, and what was given ahead with the store's commits and
    /// the events heard at that moment.
    fn send(&self, id: u64, kind: &str, params: Value) -> (Value, Option<Ahead>) {
        let text = json!({"id": id, "type": kind, "params": params}).to_string();
        let given: RefCell<Option<Ahead>> = RefCell::new(None);
        let ahead = |answer: &str| {
            let mut given = given.borrow_mut();
            assert!(given.is_none(), "given ahead once");
            *given = Some(Ahead {
                answer: answer.to_string(),
                commits: self.store.commits(),
                heard: self.heard.0.borrow().clone(),
            });
        };
        let answer = block_on(self.core.handle_in_ahead(&text, None, Some(&ahead)));
        let given = given.into_inner();
        if let Some(given) = &given {
            assert_eq!(given.answer, answer, "the answer given ahead is the answer");
        }
        (serde_json::from_str(&answer).unwrap(), given)
    }

    fn keystroke(&self, id: u64, tag: &str) -> (Value, Option<Ahead>) {
        let (chapter, _) = self.send(id, "get_chapter", json!({ "chapter": self.chapter }));
        let version = chapter["result"]["version"].clone();
        self.heard.0.borrow_mut().clear();
        self.send(
            id + 1,
            "apply_user_change",
            json!({"chapter": self.chapter, "baseVersion": version, "changes": [{"retain": 5}, {"insert": "!"}], "tag": tag}),
        )
    }
}

impl World {
    /// How many notes `search_memory` finds for `query`.
    fn found(&self, id: u64, query: &str) -> usize {
        let (found, _) = self.send(
            id,
            "execute",
            json!({"tool": "search_memory", "args": {"query": query}}),
        );
        found["result"]["data"]["hits"]
            .as_array()
            .unwrap_or_else(|| panic!("hits: {found}"))
            .len()
    }
}

struct Ahead {
    answer: String,
    commits: u64,
    heard: Vec<String>,
}

#[test]
fn a_keystroke_is_answered_ahead_of_its_save() {
    let world = World::new();
    let before = world.store.commits();
    let (response, ahead) = world.keystroke(10, "k1");
    assert_eq!(response["ok"], true, "{response}");
    let ahead = ahead.expect("the keystroke's answer is given ahead");
    assert_eq!(ahead.commits, before, "given before its save is placed");
    assert!(
        ahead.heard.is_empty(),
        "given before its events go: {:?}",
        ahead.heard
    );
    assert_eq!(world.store.commits(), before + 1, "then saved");
    assert_eq!(
        *world.heard.0.borrow(),
        ["edit", "history_changed", "saved"]
    );
}

#[test]
fn a_keystroke_whose_save_fails_is_answered_the_same_after_the_failure() {
    let world = World::new();
    world.store.fail_next(1);
    let (response, ahead) = world.keystroke(10, "k1");
    assert_eq!(response["ok"], true, "the change is applied: {response}");
    assert!(ahead.is_some(), "given ahead before the save was tried");
    let heard = world.heard.0.borrow().clone();
    assert_eq!(heard, ["edit", "history_changed", "storage_error"]);
    // The change is kept, and saved with the next one.
    let (_, ahead) = world.keystroke(20, "k2");
    assert!(ahead.is_some());
    let (chapter, _) = world.send(30, "get_chapter", json!({ "chapter": world.chapter }));
    assert_eq!(chapter["result"]["text"], "Hello!!.");
}

#[test]
fn what_saves_nothing_or_waits_on_more_is_not_given_ahead() {
    let world = World::new();
    let (_, ahead) = world.keystroke(10, "k1");
    assert!(ahead.is_some());
    // The same keystroke again (a resend): answered from what was applied, nothing to save.
    let (response, _) = world.send(12, "get_chapter", json!({ "chapter": world.chapter }));
    let version = response["result"]["version"].as_u64().unwrap();
    let (again, ahead) = world.send(
        13,
        "apply_user_change",
        json!({"chapter": world.chapter, "baseVersion": version - 1, "changes": [{"retain": 5}, {"insert": "!"}], "tag": "k1"}),
    );
    assert_eq!(again["result"]["duplicate"], true, "{again}");
    assert!(ahead.is_none(), "nothing to save: answered at once");
    // A read, and a mutation answered only once saved.
    let (_, ahead) = world.send(14, "get_chapter", json!({ "chapter": world.chapter }));
    assert!(ahead.is_none());
    let (renamed, ahead) = world.send(15, "rename_project", json!({ "name": "Q" }));
    assert_eq!(renamed["ok"], true, "{renamed}");
    assert!(ahead.is_none());
    // A keystroke that fails is answered with its error, never ahead.
    let (failed, ahead) = world.send(
        16,
        "apply_user_change",
        json!({"chapter": "nope", "baseVersion": 0, "changes": [{"insert": "!"}]}),
    );
    assert_eq!(failed["ok"], false, "{failed}");
    assert!(ahead.is_none());
}

/// Whether the store holds a note whose text is `text`.
fn saved(world: &World, text: &str) -> bool {
    let records = block_on(world.store.get_all(Table::Notes)).unwrap();
    records.iter().any(|r| r["note"]["text"] == text)
}

/// The params of a `write_memory_notes` of one observation per text.
fn notes(texts: &[&str]) -> Value {
    let notes: Vec<Value> = texts
        .iter()
        .map(|text| json!({ "text": text, "noteType": "observation" }))
        .collect();
    json!({ "notes": notes })
}

#[test]
fn a_bulk_write_of_notes_is_answered_ahead_of_its_save_and_indexed_by_its_end() {
    let world = World::new();
    let before = world.store.commits();
    world.heard.0.borrow_mut().clear();
    let (response, ahead) = world.send(
        10,
        "write_memory_notes",
        notes(&["The lighthouse keeper", "A gull over the harbour"]),
    );
    assert_eq!(response["ok"], true, "{response}");
    assert_eq!(response["result"]["written"].as_array().unwrap().len(), 2);
    let ahead = ahead.expect("the write's answer is given ahead");
    assert_eq!(ahead.commits, before, "given before its save is placed");
    assert!(ahead.heard.is_empty(), "{:?}", ahead.heard);
    assert_eq!(world.store.commits(), before + 1, "then saved");
    // Indexed while it was saved: found by the next request.
    assert_eq!(world.found(11, "gull"), 1);
}

#[test]
fn a_bulk_write_whose_save_fails_is_answered_the_same_after_the_failure() {
    let world = World::new();
    world.heard.0.borrow_mut().clear();
    world.store.fail_next(1);
    let (response, ahead) = world.send(10, "write_memory_notes", notes(&["Storm at dawn"]));
    assert_eq!(response["ok"], true, "the notes are kept: {response}");
    assert!(ahead.is_some(), "given ahead before the save was tried");
    assert!(world.heard_storage_error(), "{:?}", world.heard.0.borrow());
    assert!(!saved(&world, "Storm at dawn"), "nothing landed");
    // Kept in memory and saved with the next change: the new note's bulk write, then the
    // save of what is pending.
    let before = world.store.commits();
    let (_, ahead) = world.send(11, "write_memory_notes", notes(&["Fog by noon"]));
    assert!(ahead.is_some());
    assert_eq!(world.store.commits(), before + 2);
    assert!(saved(&world, "Storm at dawn") && saved(&world, "Fog by noon"));
    assert_eq!(world.found(12, "storm"), 1);
}

#[test]
fn a_bulk_write_the_store_cannot_go_on_with_saves_its_notes_as_any_change() {
    let world = World::new();
    world.heard.0.borrow_mut().clear();
    // The store refuses the second note's put (its bulk write has ended).
    world.store.fail_put_at(1);
    let before = world.store.commits();
    let (response, ahead) = world.send(
        10,
        "write_memory_notes",
        notes(&["Rain at dusk", "Wind at night", "Snow by morning"]),
    );
    assert_eq!(response["result"]["written"].as_array().unwrap().len(), 3);
    assert!(ahead.is_some());
    assert!(!world.heard_storage_error(), "{:?}", world.heard.0.borrow());
    assert_eq!(
        world.store.commits(),
        before + 1,
        "saved once, as any change"
    );
    for text in ["Rain at dusk", "Wind at night", "Snow by morning"] {
        assert!(saved(&world, text), "{text}");
    }
}

#[test]
fn a_bulk_write_with_an_invalid_note_is_refused_and_not_given_ahead() {
    let world = World::new();
    let before = world.store.commits();
    let (refused, ahead) = world.send(10, "write_memory_notes", notes(&["Fine", "  "]));
    assert_eq!(refused["ok"], false, "{refused}");
    assert!(ahead.is_none());
    assert_eq!(world.store.commits(), before, "nothing saved");
}
