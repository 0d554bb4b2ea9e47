//! Chapter management through the worker protocol: `add_chapter`, `rename_chapter`,
//! `move_chapter` and `delete_chapter`; that bad requests change nothing (in memory or in
//! storage), that everything survives a reload, the active chapter's fix-up, what undo and
//! redo do after a deletion, and random sequences against a simple model.
#![cfg(not(target_arch = "wasm32"))]

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;

use draftsmith::commands::Origin;
use draftsmith::core::Env;
use draftsmith::project::changeset::ChangeSet;
use draftsmith::project::{Chapter, Project};
use draftsmith::session::{EditContext, Session};
use draftsmith::store::{Batch, MemoryStore, Store, StoreError, StoreFuture, Table};
use draftsmith::tools::Command;
use draftsmith::tools::ToolError;
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures::executor::block_on;
use proptest::prelude::*;
use serde_json::{json, Value};

/// A store whose commits fail with a full quota while `full` is set.
#[derive(Default)]
struct Disk {
    inner: MemoryStore,
    full: Cell<bool>,
}

impl Store for Disk {
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
        if self.full.get() {
            Box::pin(async { Err(StoreError::Quota("QuotaExceededError".into())) })
        } else {
            self.inner.commit(batch)
        }
    }
}

impl Disk {
    /// Every record of every table.
    fn dump(&self) -> BTreeMap<&'static str, Vec<Value>> {
        Table::ALL
            .iter()
            .map(|t| (t.name(), block_on(self.inner.get_all(*t)).unwrap()))
            .collect()
    }

    fn record(&self, table: Table, key: &str) -> Option<Value> {
        block_on(self.inner.get(table, key)).unwrap()
    }
}

struct Page {
    core: Core,
    events: Rc<RecordingSink>,
    next: u64,
}

impl Page {
    /// A page (a worker) on a store; `ids` keeps workers' ids apart.
    fn on(store: Rc<Disk>, ids: &str) -> Self {
        let events = Rc::new(RecordingSink::default());
        let core = Core::new(Env {
            clock: Rc::new(ManualClock::new(1_000)),
            ids: Rc::new(SequentialIds::new(ids)),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: events.clone(),
            store,
        });
        Self {
            core,
            events,
            next: 1,
        }
    }

    fn send(&mut self, kind: &str, params: Value) -> Value {
        self.next += 1;
        let text = json!({"id": self.next, "type": kind, "params": params}).to_string();
        let response: Value =
            serde_json::from_str(&block_on(self.core.handle_text(&text))).unwrap();
        assert_eq!(response["id"], self.next);
        response
    }

    fn ok(&mut self, kind: &str, params: Value) -> Value {
        let r = self.send(kind, params.clone());
        assert_eq!(r["ok"], true, "{kind} {params} -> {r}");
        r["result"].clone()
    }

    /// The error code of a request that must fail.
    fn fails(&mut self, kind: &str, params: Value) -> String {
        let r = self.send(kind, params.clone());
        assert_eq!(r["ok"], false, "{kind} {params} should fail -> {r}");
        r["error"]["code"].as_str().unwrap().to_string()
    }

    /// Events other than `saved` (which follows every mutation).
    fn events(&self) -> Vec<(String, Value)> {
        self.events
            .take()
            .into_iter()
            .filter(|e| e.kind != "saved")
            .map(|e| (e.kind, e.data))
            .collect()
    }

    /// What the page can see of project `id`: its summary, every chapter's text and the
    /// history.
    fn state(&mut self, id: &str) -> Value {
        let summary = self.ok("open_project", json!({ "id": id }));
        let texts: Vec<Value> = summary["chapters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| self.ok("get_chapter", json!({"chapter": c["id"]}))["text"].clone())
            .collect();
        let history = self.ok("history", json!({}));
        json!({"project": summary, "texts": texts, "history": history})
    }

    fn text(&mut self, chapter: &str) -> String {
        self.ok("get_chapter", json!({ "chapter": chapter }))["text"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn titles(&mut self, id: &str) -> Vec<String> {
        self.ok("open_project", json!({ "id": id }))["chapters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["title"].as_str().unwrap().to_string())
            .collect()
    }

    /// The writer types `text` at the end of a chapter, as its own undo group.
    fn type_at_end(&mut self, chapter: &str, text: &str) {
        let c = self.ok("get_chapter", json!({ "chapter": chapter }));
        let len = c["text"].as_str().unwrap().chars().count();
        self.ok(
            "apply_user_change",
            json!({"chapter": c["id"], "baseVersion": c["version"],
                   "changes": [{"retain": len}, {"insert": text}]}),
        );
        self.ok("close_group", json!({}));
    }
}

/// A project "Lighthouse" with three chapters; returns the page, the store, the project id
/// and the chapter ids.
fn setup() -> (Page, Rc<Disk>, String, Vec<String>) {
    let store = Rc::new(Disk::default());
    let mut page = Page::on(store.clone(), "w");
    let project = page.ok(
        "create_project",
        json!({"name": "Lighthouse", "chapters": [
            {"title": "The Stair", "text": "Mara climbed the stair."},
            {"title": "Morning", "text": "Morning came grey."},
            {"title": "The Lamp", "text": "The lamp was dark."}
        ]}),
    );
    let id = project["id"].as_str().unwrap().to_string();
    let chapters = project["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    page.events();
    (page, store, id, chapters)
}

/// A state without the editor positions that are saved lazily (cursor, selection, scroll).
fn positionless(mut state: Value) -> Value {
    for field in ["cursor", "selection", "scroll"] {
        state["project"]["ui"][field] = Value::Null;
    }
    state
}

/// Opens project `id` in a new worker on the same store and returns what it sees.
fn reloaded(store: &Rc<Disk>, id: &str, ids: &str) -> Value {
    Page::on(store.clone(), ids).state(id)
}

#[test]
fn the_requests_are_capabilities() {
    let (mut page, ..) = setup();
    let caps = page.ok("hello", json!({}))["capabilities"].clone();
    for name in [
        "add_chapter",
        "rename_chapter",
        "move_chapter",
        "delete_chapter",
    ] {
        assert!(caps.as_array().unwrap().contains(&json!(name)), "{name}");
    }
}

#[test]
fn add_chapter_appends_or_inserts_after_a_chapter() {
    let (mut page, store, id, ch) = setup();
    let added = page.ok("add_chapter", json!({}));
    assert_eq!(added["title"], "Chapter 4");
    assert_eq!(added["number"], 4);
    assert_eq!(added["version"], 0);
    assert_eq!(added["length"], 0);
    assert_eq!(added["project"]["chapters"].as_array().unwrap().len(), 4);
    assert_eq!(added["project"]["chapters"][3]["id"], added["id"]);
    let events = page.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].0, "chapters_changed");
    assert_eq!(events[0].1, added["project"]);

    // After a chapter named by number (as a string or a number), id or title; text kept.
    let interlude = page.ok(
        "add_chapter",
        json!({"title": "  Interlude ", "text": "Rain. 🐉", "after": 1}),
    );
    assert_eq!(interlude["title"], "Interlude");
    assert_eq!(interlude["number"], 2);
    assert_eq!(interlude["length"], 7);
    let coda = page.ok("add_chapter", json!({"title": "Coda", "after": ch[2]}));
    assert_eq!(coda["number"], 5);
    let after_title = page.ok("add_chapter", json!({"title": "Dusk", "after": "Morning"}));
    assert_eq!(after_title["number"], 4);
    assert_eq!(
        page.titles(&id),
        [
            "The Stair",
            "Interlude",
            "Morning",
            "Dusk",
            "The Lamp",
            "Coda",
            "Chapter 4"
        ]
    );
    // A blank title is the default one: "Chapter N" for its number, or the next free N.
    let blank = page.ok("add_chapter", json!({"title": "  ", "after": "1"}));
    assert_eq!(blank["number"], 2);
    assert_eq!(blank["title"], "Chapter 2");
    let next = page.ok("add_chapter", json!({"after": "1"}));
    assert_eq!(next["title"], "Chapter 3");
    let again = page.ok("add_chapter", json!({"after": "1"}));
    assert_eq!(again["title"], "Chapter 5", "Chapter 2, 3 and 4 are taken");

    // Tools see the new numbering, and the text is there.
    assert_eq!(page.text("3"), "");
    assert_eq!(page.text(interlude["id"].as_str().unwrap()), "Rain. 🐉");
    let r = page.ok(
        "execute",
        json!({"tool": "jump_to_chapter", "args": {"chapter": "5"}}),
    );
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(
        page.ok("open_project", json!({"id": id}))["ui"]["active_chapter"],
        interlude["id"]
    );
    // Stored: every chapter has its record, in the project record's order.
    let record = store.record(Table::Projects, &id).unwrap();
    assert_eq!(record["chapters"].as_array().unwrap().len(), 10);
    assert_eq!(store.inner.len(Table::Chapters), 10);
    assert_eq!(
        store
            .record(Table::Chapters, interlude["id"].as_str().unwrap())
            .unwrap()["text"],
        "Rain. 🐉"
    );
    let here = page.state(&id);
    assert_eq!(reloaded(&store, &id, "r"), here);
}

#[test]
fn rename_chapter_trims_the_title() {
    let (mut page, store, id, ch) = setup();
    let renamed = page.ok(
        "rename_chapter",
        json!({"chapter": "2", "title": "  Grey Morning\t"}),
    );
    assert_eq!(renamed["id"], ch[1]);
    assert_eq!(renamed["title"], "Grey Morning");
    assert_eq!(renamed["number"], 2);
    assert_eq!(renamed["project"]["chapters"][1]["title"], "Grey Morning");
    let events = page.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].0, "chapters_changed");
    assert_eq!(
        store.record(Table::Chapters, &ch[1]).unwrap()["title"],
        "Grey Morning"
    );
    // By the new title, and by id; the same title again changes nothing and says nothing.
    page.ok(
        "rename_chapter",
        json!({"chapter": "Grey Morning", "title": "Dawn"}),
    );
    page.events();
    let same = page.ok(
        "rename_chapter",
        json!({"chapter": ch[1], "title": "Dawn "}),
    );
    assert_eq!(same["title"], "Dawn");
    assert!(page.events().is_empty());
    assert_eq!(page.text("Dawn"), "Morning came grey.");
    let here = page.state(&id);
    assert_eq!(reloaded(&store, &id, "r"), here);
}

#[test]
fn move_chapter_reorders_and_numbers_follow() {
    let (mut page, store, id, ch) = setup();
    let moved = page.ok("move_chapter", json!({"chapter": "1", "to": 3}));
    assert_eq!(moved["id"], ch[0]);
    assert_eq!(moved["number"], 3);
    assert_eq!(page.titles(&id), ["Morning", "The Lamp", "The Stair"]);
    assert_eq!(page.events()[0].0, "chapters_changed");
    // Chapter numbers used by tools and requests follow the new order.
    assert_eq!(page.text("1"), "Morning came grey.");
    let r = page.ok(
        "execute",
        json!({"tool": "jump_to_chapter", "args": {"chapter": "3"}}),
    );
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(
        page.ok("get_chapter", json!({}))["id"],
        ch[0],
        "chapter 3 is now The Stair"
    );
    let r = page.ok(
        "execute",
        json!({"tool": "update_manuscript", "args":
            {"searchText": "lamp", "replacementText": "light", "chapter": "2"}}),
    );
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(page.text(&ch[2]), "The light was dark.");
    // Back to the front; to its own place is no change (no event).
    page.ok("move_chapter", json!({"chapter": ch[0], "to": 1}));
    page.events();
    page.ok("move_chapter", json!({"chapter": ch[0], "to": 1}));
    assert!(page.events().is_empty());
    assert_eq!(page.titles(&id), ["The Stair", "Morning", "The Lamp"]);
    page.ok("move_chapter", json!({"chapter": "The Lamp", "to": 2}));
    let record = store.record(Table::Projects, &id).unwrap();
    assert_eq!(record["chapters"], json!([ch[0], ch[2], ch[1]]));
    let here = page.state(&id);
    assert_eq!(reloaded(&store, &id, "r"), here);
}

#[test]
fn delete_chapter_returns_its_text_and_keeps_the_others() {
    let (mut page, store, id, ch) = setup();
    page.type_at_end(&ch[0], " She rested.");
    page.type_at_end(&ch[2], " Then lit.");
    page.events();
    let r = page.ok("delete_chapter", json!({"chapter": "Morning"}));
    assert_eq!(
        r["deleted"],
        json!({"id": ch[1], "title": "Morning", "number": 2, "text": "Morning came grey."})
    );
    assert_eq!(r["project"]["chapters"].as_array().unwrap().len(), 2);
    assert_eq!(r["history"]["dropped"], 0);
    let events = page.events();
    let kinds: Vec<&str> = events.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        kinds,
        ["chapters_changed"],
        "not active, no history: {events:?}"
    );
    assert_eq!(events[0].1, r["project"]);
    // The other chapters are untouched, and renumbered.
    assert_eq!(page.text(&ch[0]), "Mara climbed the stair. She rested.");
    assert_eq!(page.text("2"), "The lamp was dark. Then lit.");
    assert_eq!(
        page.fails("get_chapter", json!({"chapter": ch[1]})),
        "not_found"
    );
    // Its record is gone; the project record lists the rest.
    assert!(store.record(Table::Chapters, &ch[1]).is_none());
    assert_eq!(
        store.record(Table::Projects, &id).unwrap()["chapters"],
        json!([ch[0], ch[2]])
    );
    // The page can restore it as a new chapter from what the result gave.
    let restored = page.ok(
        "add_chapter",
        json!({"title": r["deleted"]["title"], "text": r["deleted"]["text"], "after": "1"}),
    );
    assert_eq!(page.text("2"), "Morning came grey.");
    assert_ne!(restored["id"], ch[1]);
    // The last chapter cannot go.
    page.ok("delete_chapter", json!({"chapter": "1"}));
    page.ok("delete_chapter", json!({"chapter": "1"}));
    let before = page.state(&id);
    assert_eq!(
        page.fails("delete_chapter", json!({"chapter": "1"})),
        "invalid_params"
    );
    let r = page.send("delete_chapter", json!({"chapter": "1"}));
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at least one chapter"),
        "{r}"
    );
    assert_eq!(page.state(&id), before);
    assert_eq!(store.inner.len(Table::Chapters), 1);
    assert_eq!(reloaded(&store, &id, "r"), before);
}

#[test]
fn deleting_the_active_chapter_moves_the_editor_to_a_neighbour() {
    let (mut page, store, id, ch) = setup();
    // Chapter 2 active, with a selection, a highlight there and one in chapter 3.
    let r = page.ok(
        "execute",
        json!({"tool": "set_selection", "args": {"chapter": "2", "text": "came"}}),
    );
    assert_eq!(r["status"], "success", "{r}");
    for (chapter, text) in [("2", "grey"), ("3", "lamp")] {
        let r = page.ok(
            "execute",
            json!({"tool": "highlight_text", "args": {"chapter": chapter, "text": text}}),
        );
        assert_eq!(r["status"], "success", "{r}");
    }
    let ui = page.ok("open_project", json!({"id": id}))["ui"].clone();
    assert_eq!(ui["active_chapter"], ch[1]);
    assert_eq!(ui["highlights"].as_array().unwrap().len(), 2);
    page.events();

    let r = page.ok("delete_chapter", json!({"chapter": ch[1]}));
    let ui = r["project"]["ui"].clone();
    // The chapter that took its place (The Lamp) is active, at its start, nothing selected.
    assert_eq!(ui["active_chapter"], ch[2]);
    assert_eq!(ui["cursor"], 0);
    assert_eq!(ui["selection"], Value::Null);
    assert_eq!(ui["scroll"], 0);
    assert_eq!(ui["highlights"].as_array().unwrap().len(), 1);
    assert_eq!(ui["highlights"][0]["chapter"], ch[2]);
    let events = page.events();
    let kinds: Vec<&str> = events.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(kinds, ["chapters_changed", "ui"]);
    assert_eq!(events[1].1, ui);
    assert_eq!(page.ok("get_chapter", json!({}))["id"], ch[2]);

    // The last chapter active: the one before it takes over.
    page.ok(
        "execute",
        json!({"tool": "set_selection", "args": {"chapter": "2", "text": "dark"}}),
    );
    let r = page.ok("delete_chapter", json!({"chapter": "2"}));
    assert_eq!(r["project"]["ui"]["active_chapter"], ch[0]);
    assert_eq!(r["project"]["ui"]["selection"], Value::Null);
    assert_eq!(r["project"]["ui"]["highlights"], json!([]));
    let here = page.state(&id);
    assert_eq!(here["project"]["ui"]["active_chapter"], ch[0]);
    assert_eq!(reloaded(&store, &id, "r"), here);

    // Deleting a chapter that is not active leaves the cursor and selection alone.
    let (mut page, _, _, ch) = setup();
    page.ok(
        "execute",
        json!({"tool": "set_selection", "args": {"chapter": "1", "text": "climbed"}}),
    );
    let project = page_project(&mut page);
    let before = page.ok("open_project", json!({ "id": project }))["ui"].clone();
    let r = page.ok("delete_chapter", json!({"chapter": ch[2]}));
    assert_eq!(r["project"]["ui"], before);
}

fn page_project(page: &mut Page) -> String {
    page.ok("list_projects", json!({}))["current"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn bad_requests_change_nothing_in_memory_or_storage() {
    let (mut page, store, id, ch) = setup();
    page.type_at_end(&ch[1], " Still.");
    page.events();
    let memory_before = page.state(&id);
    let stored_before = store.dump();
    let long = "x".repeat(301);
    let cases: Vec<(&str, Value, &str)> = vec![
        // add_chapter
        ("add_chapter", json!({"after": "9"}), "not_found"),
        (
            "add_chapter",
            json!({"after": "No Such Title Anywhere"}),
            "not_found",
        ),
        ("add_chapter", json!({"after": ""}), "invalid_params"),
        ("add_chapter", json!({"after": -1}), "invalid_params"),
        ("add_chapter", json!({"after": true}), "invalid_params"),
        ("add_chapter", json!({"title": 7}), "invalid_params"),
        ("add_chapter", json!({"text": ["a"]}), "invalid_params"),
        (
            "add_chapter",
            json!({"title": "Two\nlines"}),
            "invalid_params",
        ),
        ("add_chapter", json!({"title": long}), "invalid_params"),
        ("add_chapter", json!({"position": 1}), "invalid_params"),
        // rename_chapter
        (
            "rename_chapter",
            json!({"chapter": "9", "title": "X"}),
            "not_found",
        ),
        (
            "rename_chapter",
            json!({"chapter": "1", "title": ""}),
            "invalid_params",
        ),
        (
            "rename_chapter",
            json!({"chapter": "1", "title": " \t "}),
            "invalid_params",
        ),
        ("rename_chapter", json!({"chapter": "1"}), "invalid_params"),
        ("rename_chapter", json!({"title": "X"}), "invalid_params"),
        (
            "rename_chapter",
            json!({"chapter": "1", "title": 5}),
            "invalid_params",
        ),
        (
            "rename_chapter",
            json!({"chapter": "1", "title": null}),
            "invalid_params",
        ),
        (
            "rename_chapter",
            json!({"chapter": {"id": "x"}, "title": "X"}),
            "invalid_params",
        ),
        (
            "rename_chapter",
            json!({"chapter": "1", "title": "X", "name": "Y"}),
            "invalid_params",
        ),
        (
            "rename_chapter",
            json!({"chapter": "1", "title": "A\r\nB"}),
            "invalid_params",
        ),
        // move_chapter
        (
            "move_chapter",
            json!({"chapter": "1", "to": 0}),
            "invalid_params",
        ),
        (
            "move_chapter",
            json!({"chapter": "1", "to": 4}),
            "invalid_params",
        ),
        (
            "move_chapter",
            json!({"chapter": "1", "to": -1}),
            "invalid_params",
        ),
        (
            "move_chapter",
            json!({"chapter": "1", "to": 1.5}),
            "invalid_params",
        ),
        (
            "move_chapter",
            json!({"chapter": "1", "to": "2"}),
            "invalid_params",
        ),
        ("move_chapter", json!({"chapter": "1"}), "invalid_params"),
        (
            "move_chapter",
            json!({"chapter": "4", "to": 1}),
            "not_found",
        ),
        (
            "move_chapter",
            json!({"chapter": "1", "to": 2, "after": "3"}),
            "invalid_params",
        ),
        // delete_chapter
        ("delete_chapter", json!({"chapter": "4"}), "not_found"),
        ("delete_chapter", json!({"chapter": "nope-id"}), "not_found"),
        ("delete_chapter", json!({}), "invalid_params"),
        ("delete_chapter", json!({"chapter": " "}), "invalid_params"),
        ("delete_chapter", json!({"chapter": 0}), "not_found"),
        (
            "delete_chapter",
            json!({"chapter": "1", "force": true}),
            "invalid_params",
        ),
    ];
    for (kind, params, code) in cases {
        assert_eq!(page.fails(kind, params.clone()), code, "{kind} {params}");
        assert!(page.events().is_empty(), "{kind} {params} emitted an event");
        assert_eq!(
            page.state(&id),
            memory_before,
            "{kind} {params} changed the state"
        );
        assert_eq!(
            store.dump(),
            stored_before,
            "{kind} {params} wrote to storage"
        );
    }
    // Params that are not an object at all.
    let r = page.send("delete_chapter", json!(["1"]));
    assert_eq!(r["ok"], false);
    assert_eq!(page.state(&id), memory_before);
    // Without an open project.
    let mut fresh = Page::on(Rc::new(Disk::default()), "f");
    assert_eq!(fresh.fails("add_chapter", json!({})), "no_project");
}

#[test]
fn undo_and_redo_after_deleting_a_chapter_stay_in_the_other_chapters() {
    let (mut page, store, id, ch) = setup();
    // Interleaved edits: writer and agent, in chapters 1 and 2.
    page.type_at_end(&ch[0], " A1.");
    page.type_at_end(&ch[1], " B1.");
    let r = page.ok(
        "execute",
        json!({"tool": "update_manuscript", "origin": "agent:ed", "args":
            {"searchText": "grey", "replacementText": "gold", "chapter": "2"}}),
    );
    assert_eq!(r["status"], "success", "{r}");
    let r = page.ok(
        "execute",
        json!({"tool": "update_manuscript", "origin": "agent:ed", "args":
            {"searchText": "stair", "replacementText": "tower", "chapter": "1"}}),
    );
    assert_eq!(r["status"], "success", "{r}");
    page.type_at_end(&ch[1], " B2.");
    page.type_at_end(&ch[0], " A2.");
    page.type_at_end(&ch[1], " B3.");
    // Undo two (B3, A2): the redo stack holds one of each chapter.
    page.ok("undo", json!({}));
    page.ok("undo", json!({}));
    assert_eq!(page.text(&ch[0]), "Mara climbed the tower. A1.");
    page.events();

    let r = page.ok("delete_chapter", json!({"chapter": ch[1]}));
    assert_eq!(
        r["history"]["dropped"], 4,
        "B1, the agent's gold, B2 and B3 (redo)"
    );
    assert_eq!(r["history"]["trimmed"], 0);
    let kinds: Vec<String> = page.events().into_iter().map(|e| e.0).collect();
    assert_eq!(kinds, ["chapters_changed", "history_changed"]);
    let history = page.ok("history", json!({}));
    assert_eq!(history["entries"].as_array().unwrap().len(), 2);
    assert_eq!(history["redo"].as_array().unwrap().len(), 1);
    let lamp = page.text(&ch[2]);

    // Redo brings A2 back, undo walks chapter 1 back to its start, redo forward again:
    // never an error, never a change outside chapter 1.
    let r = page.ok("redo", json!({}));
    assert_eq!(r["applied"][0]["chapter"], ch[0]);
    assert_eq!(page.text(&ch[0]), "Mara climbed the tower. A1. A2.");
    let mut undone = 0;
    while page.ok("history", json!({}))["canUndo"] == true {
        let r = page.ok("undo", json!({}));
        for applied in r["applied"].as_array().unwrap() {
            assert_eq!(applied["chapter"], ch[0]);
        }
        undone += 1;
        assert!(undone < 10);
    }
    assert_eq!(undone, 3);
    assert_eq!(page.text(&ch[0]), "Mara climbed the stair.");
    // Undo with nothing left is not an error.
    assert_eq!(page.ok("undo", json!({}))["applied"], json!([]));
    for _ in 0..3 {
        page.ok("redo", json!({}));
    }
    assert_eq!(page.text(&ch[0]), "Mara climbed the tower. A1. A2.");
    assert_eq!(page.ok("redo", json!({}))["applied"], json!([]));
    // Undoing the agent's change keeps the writer's typing.
    let r = page.ok("undo", json!({"origin": "agent"}));
    assert_eq!(r["applied"].as_array().unwrap().len(), 1);
    assert_eq!(page.text(&ch[0]), "Mara climbed the stair. A1. A2.");
    assert_eq!(page.text(&ch[2]), lamp);
    // And all of it survives a reload.
    let here = page.state(&id);
    assert_eq!(reloaded(&store, &id, "r"), here);
    // No history record names the deleted chapter.
    for record in store.dump()["history"]
        .iter()
        .chain(store.dump()["meta"].iter())
    {
        assert!(
            !record.to_string().contains(&format!("\"{}\"", ch[1])),
            "{record}"
        );
    }
}

/// A command that appends to two chapters at once (as a multi-chapter agent edit would).
struct AppendBoth(&'static str, &'static str);

impl Command for AppendBoth {
    fn execute(self: Box<Self>, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        for chapter in [self.0, self.1] {
            let len = cx.project().chapter(chapter).unwrap().len_chars();
            cx.edit(
                chapter,
                ChangeSet::replace(len, len, len, " +both").unwrap(),
            )?;
        }
        Ok(json!({}))
    }
}

#[test]
fn an_entry_that_edited_a_deleted_chapter_and_another_keeps_the_other_part() {
    // Build a project whose history has an entry spanning two chapters, and import it.
    let ids = SequentialIds::new("s");
    let clock = ManualClock::new(500);
    let mut session = Session::new(Project::new(
        "imported",
        "Imported",
        vec![
            Chapter::new("c1", "One", "Alpha."),
            Chapter::new("c2", "Two", "Beta."),
            Chapter::new("c3", "Three", "Gamma."),
        ],
    ));
    let agent = Origin::Agent("ed".into());
    let outcome = session.execute_command(
        None,
        "append_both",
        Box::new(AppendBoth("c1", "c2")),
        agent.clone(),
        &clock,
        &ids,
    );
    assert!(outcome.result.is_success());
    let outcome = session.execute_command(
        None,
        "append_both",
        Box::new(AppendBoth("c2", "c3")),
        agent,
        &clock,
        &ids,
    );
    assert!(outcome.result.is_success());
    let document = draftsmith::persist::export_document(&session, 500, 500);

    let store = Rc::new(Disk::default());
    let mut page = Page::on(store.clone(), "w");
    page.ok(
        "import_project",
        json!({ "document": serde_json::to_value(document).unwrap() }),
    );
    // Undo the newest (c2 + c3) first, so a redo run spans the deleted chapter too.
    page.ok("undo", json!({}));
    let r = page.ok("delete_chapter", json!({"chapter": "c2"}));
    assert_eq!(r["history"]["dropped"], 0);
    assert_eq!(r["history"]["trimmed"], 2, "one undo entry, one redo entry");
    assert_eq!(page.text("c1"), "Alpha. +both");
    assert_eq!(page.text("c3"), "Gamma.");
    page.ok("redo", json!({}));
    assert_eq!(page.text("c3"), "Gamma. +both");
    page.ok("undo", json!({}));
    page.ok("undo", json!({}));
    assert_eq!(page.text("c1"), "Alpha.");
    assert_eq!(page.text("c3"), "Gamma.");
    page.ok("redo", json!({}));
    assert_eq!(page.text("c1"), "Alpha. +both");
    assert_eq!(page.text("c3"), "Gamma.");
    let here = page.state("imported");
    assert_eq!(reloaded(&store, "imported", "r"), here);
}

#[test]
fn a_deletion_whose_save_fails_is_written_by_the_next_save() {
    let (mut page, store, id, ch) = setup();
    page.type_at_end(&ch[1], " B1.");
    page.type_at_end(&ch[0], " A1.");
    page.events.take();
    store.full.set(true);
    let r = page.ok("delete_chapter", json!({"chapter": ch[1]}));
    assert_eq!(r["deleted"]["text"], "Morning came grey. B1.");
    assert!(page
        .events
        .take()
        .iter()
        .any(|e| e.kind == "storage_error" && e.data["code"] == "quota_exceeded"));
    // Nothing was written, and the page keeps working from memory.
    assert!(store.record(Table::Chapters, &ch[1]).is_some());
    page.ok("rename_chapter", json!({"chapter": "2", "title": "Lamp"}));
    store.full.set(false);
    page.type_at_end(&ch[0], " A2.");
    // The full save deleted the chapter's record and history, and wrote the rest.
    assert!(store.record(Table::Chapters, &ch[1]).is_none());
    let here = page.state(&id);
    assert_eq!(
        here["texts"],
        json!(["Mara climbed the stair. A1. A2.", "The lamp was dark."])
    );
    assert_eq!(reloaded(&store, &id, "r"), here);
    for record in store.dump()["history"].iter() {
        assert!(!record.to_string().contains(&ch[1]), "{record}");
    }
}

#[test]
fn history_naming_a_chapter_that_is_gone_is_forgotten_on_load() {
    // Storage where the project record no longer lists a chapter its history names (as a
    // deletion written by an older version, or only partly, would leave it).
    let (mut page, store, id, ch) = setup();
    page.type_at_end(&ch[0], " A1.");
    page.type_at_end(&ch[1], " B1.");
    drop(page);
    let mut record = store.record(Table::Projects, &id).unwrap();
    record["chapters"] = json!([ch[0], ch[2]]);
    let mut batch = Batch::new();
    batch.put_value(Table::Projects, record);
    batch.delete(Table::Chapters, ch[1].clone());
    block_on(store.commit(batch)).unwrap();

    let mut page = Page::on(store.clone(), "r");
    let state = page.state(&id);
    assert_eq!(state["history"]["entries"].as_array().unwrap().len(), 1);
    let r = page.ok("undo", json!({}));
    assert_eq!(r["applied"][0]["chapter"], ch[0]);
    assert_eq!(page.text(&ch[0]), "Mara climbed the stair.");
    assert_eq!(page.ok("undo", json!({}))["applied"], json!([]));
    // The trimmed history was saved with that undo.
    let here = page.state(&id);
    assert_eq!(reloaded(&store, &id, "r2"), here);
}

// ---------------------------------------------------------------------------------------
// Random sequences against a model.

#[derive(Debug, Clone)]
enum Step {
    Add {
        after: Option<usize>,
        title: Option<String>,
        text: String,
    },
    Rename {
        at: usize,
        title: String,
    },
    /// `to` is taken modulo the count + 2, so it is sometimes out of range (0 or count + 1).
    Move {
        at: usize,
        to: usize,
    },
    Delete {
        at: usize,
    },
    Type {
        at: usize,
        text: String,
    },
    Undo,
    Redo,
    Reload,
}

fn words() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!['a', 'b', 'é', ' ', 'Z', '🐉']),
        0..6,
    )
    .prop_map(|c| c.into_iter().collect())
}

fn any_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (prop::option::of(0..8usize), prop::option::of(words()), words())
            .prop_map(|(after, title, text)| Step::Add { after, title, text }),
        2 => (0..8usize, words()).prop_map(|(at, title)| Step::Rename { at, title }),
        2 => (0..8usize, 0..10usize).prop_map(|(at, to)| Step::Move { at, to }),
        3 => (0..8usize).prop_map(|at| Step::Delete { at }),
        4 => (0..8usize, words().prop_filter("typing inserts", |t| !t.is_empty()))
            .prop_map(|(at, text)| Step::Type { at, text }),
        2 => Just(Step::Undo),
        2 => Just(Step::Redo),
        1 => Just(Step::Reload),
    ]
}

#[derive(Debug, Clone)]
struct ModelChapter {
    id: String,
    title: String,
    text: String,
}

/// What the project should be: chapters in order, and the writer's typing on the undo and
/// redo stacks (chapter id, appended text); deleting a chapter forgets its typing.
#[derive(Debug, Default)]
struct Model {
    chapters: Vec<ModelChapter>,
    undo: Vec<(String, String)>,
    redo: Vec<(String, String)>,
}

impl Model {
    fn chapter(&mut self, id: &str) -> &mut ModelChapter {
        self.chapters.iter_mut().find(|c| c.id == id).unwrap()
    }

    fn default_title(&self, number: usize) -> String {
        (number..)
            .map(|n| format!("Chapter {n}"))
            .find(|t| self.chapters.iter().all(|c| &c.title != t))
            .unwrap()
    }
}

fn check(page: &mut Page, id: &str, model: &Model) -> Value {
    let state = page.state(id);
    let chapters = state["project"]["chapters"].as_array().unwrap();
    assert_eq!(chapters.len(), model.chapters.len());
    for (i, (got, want)) in chapters.iter().zip(&model.chapters).enumerate() {
        assert_eq!(got["id"], want.id.as_str());
        assert_eq!(got["title"], want.title.as_str());
        assert_eq!(got["number"], i + 1);
        assert_eq!(state["texts"][i], want.text.as_str());
    }
    let mut texts: Vec<&str> = model.chapters.iter().map(|c| c.text.as_str()).collect();
    let mut got: Vec<&str> = state["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    texts.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, texts, "the multiset of texts");
    assert_eq!(state["history"]["canUndo"], !model.undo.is_empty());
    assert_eq!(state["history"]["canRedo"], !model.redo.is_empty());
    state
}

fn run_steps(steps: &[Step]) {
    let store = Rc::new(Disk::default());
    let mut page = Page::on(store.clone(), "w");
    let project = page.ok(
        "create_project",
        json!({"name": "P", "chapters": [{"title": "One", "text": "1."}, {"title": "Two", "text": "2."}]}),
    );
    let id = project["id"].as_str().unwrap().to_string();
    let mut model = Model::default();
    for c in project["chapters"].as_array().unwrap() {
        model.chapters.push(ModelChapter {
            id: c["id"].as_str().unwrap().to_string(),
            title: c["title"].as_str().unwrap().to_string(),
            text: page.text(c["id"].as_str().unwrap()),
        });
    }
    let mut reloads = 0;
    for step in steps {
        let count = model.chapters.len();
        match step {
            Step::Add { after, title, text } => {
                let mut params = json!({ "text": text });
                let index = match after {
                    Some(a) => {
                        params["after"] = json!(model.chapters[a % count].id);
                        a % count + 1
                    }
                    None => count,
                };
                if let Some(t) = title {
                    params["title"] = json!(t);
                }
                let title = match title.as_deref().map(str::trim) {
                    Some(t) if !t.is_empty() => t.to_string(),
                    _ => model.default_title(index + 1),
                };
                let r = page.ok("add_chapter", params);
                assert_eq!(r["number"], index + 1);
                model.chapters.insert(
                    index,
                    ModelChapter {
                        id: r["id"].as_str().unwrap().to_string(),
                        title,
                        text: text.clone(),
                    },
                );
            }
            Step::Rename { at, title } => {
                let chapter = model.chapters[at % count].id.clone();
                let params = json!({"chapter": chapter, "title": title});
                if title.trim().is_empty() {
                    assert_eq!(page.fails("rename_chapter", params), "invalid_params");
                } else {
                    page.ok("rename_chapter", params);
                    model.chapter(&chapter).title = title.trim().to_string();
                }
            }
            Step::Move { at, to } => {
                let from = at % count;
                let to = to % (count + 2);
                let params = json!({"chapter": model.chapters[from].id, "to": to});
                if (1..=count).contains(&to) {
                    page.ok("move_chapter", params);
                    let c = model.chapters.remove(from);
                    model.chapters.insert(to - 1, c);
                } else {
                    assert_eq!(page.fails("move_chapter", params), "invalid_params");
                }
            }
            Step::Delete { at } => {
                let chapter = model.chapters[at % count].clone();
                let params = json!({ "chapter": chapter.id });
                if count == 1 {
                    assert_eq!(page.fails("delete_chapter", params), "invalid_params");
                } else {
                    let r = page.ok("delete_chapter", params);
                    assert_eq!(r["deleted"]["text"], chapter.text.as_str());
                    model.chapters.retain(|c| c.id != chapter.id);
                    model.undo.retain(|(c, _)| *c != chapter.id);
                    model.redo.retain(|(c, _)| *c != chapter.id);
                }
            }
            Step::Type { at, text } => {
                let chapter = model.chapters[at % count].id.clone();
                page.type_at_end(&chapter, text);
                model.chapter(&chapter).text.push_str(text);
                model.undo.push((chapter, text.clone()));
                model.redo.clear();
            }
            Step::Undo => {
                let r = page.ok("undo", json!({}));
                if let Some((chapter, typed)) = model.undo.pop() {
                    assert_eq!(r["applied"].as_array().unwrap().len(), 1);
                    let c = model.chapter(&chapter);
                    let kept = c.text.len() - typed.len();
                    assert!(c.text.ends_with(&typed));
                    c.text.truncate(kept);
                    model.redo.push((chapter, typed));
                } else {
                    assert_eq!(r["applied"], json!([]));
                }
            }
            Step::Redo => {
                let r = page.ok("redo", json!({}));
                if let Some((chapter, typed)) = model.redo.pop() {
                    assert_eq!(r["applied"].as_array().unwrap().len(), 1);
                    model.chapter(&chapter).text.push_str(&typed);
                    model.undo.push((chapter, typed));
                } else {
                    assert_eq!(r["applied"], json!([]));
                }
            }
            Step::Reload => {
                let before = page.state(&id);
                reloads += 1;
                // Without a checkpoint, everything but the lazily saved positions is stored.
                assert_eq!(
                    positionless(reloaded(&store, &id, &format!("n{reloads}"))),
                    positionless(before.clone()),
                    "a reload equals the state before it, but for the cursor"
                );
                // With one (the worker asks for it when the writer is idle), all of it.
                page.ok("checkpoint", json!({}));
                page = Page::on(store.clone(), &format!("r{reloads}"));
                assert_eq!(
                    page.state(&id),
                    before,
                    "a reload equals the state before it"
                );
            }
        }
        check(&mut page, &id, &model);
    }
    let end = check(&mut page, &id, &model);
    page.ok("checkpoint", json!({}));
    assert_eq!(
        reloaded(&store, &id, "end"),
        end,
        "a reload equals the end state"
    );
    // Storage holds exactly the surviving chapters.
    assert_eq!(store.inner.len(Table::Chapters), model.chapters.len());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(80))]

    /// Random adds, renames, moves, deletes, typing, undo, redo and reloads: the chapters
    /// (count, order, titles, texts) are what the model predicts after every step, and a
    /// reload always equals the state in memory.
    #[test]
    fn random_chapter_sessions_match_the_model(steps in prop::collection::vec(any_step(), 0..40)) {
        run_steps(&steps);
    }
}
