//! The manuscript requests through the worker protocol: JSON in, JSON out, events pushed.
#![cfg(not(target_arch = "wasm32"))]

use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::store::{MemoryStore, Table};
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures::executor::block_on;
use serde_json::{json, Value};

struct Page {
    core: Core,
    events: Rc<RecordingSink>,
    next: u64,
}

impl Page {
    fn new() -> Self {
        Self::on(Rc::new(MemoryStore::new()), "id")
    }

    /// A page (a worker) on a given store; `ids` keeps two workers' ids apart.
    fn on(store: Rc<MemoryStore>, ids: &str) -> Self {
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

    /// Events other than `saved` (which follows every mutation).
    fn events(&self) -> Vec<(String, Value)> {
        self.events
            .take()
            .into_iter()
            .filter(|e| e.kind != "saved")
            .map(|e| (e.kind, e.data))
            .collect()
    }
}

fn setup() -> (Page, String) {
    let mut page = Page::new();
    let project = page.ok(
        "create_project",
        json!({"name": "Lighthouse", "chapters": [
            {"title": "The Stair", "text": "Mara climbed the stair. The lamp was dark."},
            {"title": "Morning", "text": "Morning came grey."}
        ]}),
    );
    let ch1 = project["chapters"][0]["id"].as_str().unwrap().to_string();
    page.events();
    (page, ch1)
}

#[test]
fn nothing_works_before_a_project_is_open() {
    let mut page = Page::new();
    let r = page.send("execute", json!({"tool": "toggle_zen_mode"}));
    assert_eq!(r["error"]["code"], "no_project");
    let r = page.send("create_project", json!({"name": "  "}));
    assert_eq!(r["error"]["code"], "invalid_params");
    let r = page.send("create_project", json!({"chapters": []}));
    assert!(r["error"]["message"].as_str().unwrap().contains("name"));
}

#[test]
fn create_open_list_and_get_chapter() {
    let (mut page, ch1) = setup();
    let list = page.ok("list_projects", json!({}));
    assert_eq!(list["projects"].as_array().unwrap().len(), 1);
    let id = list["current"].as_str().unwrap().to_string();
    assert_eq!(
        page.ok("open_project", json!({"id": id}))["name"],
        "Lighthouse"
    );
    assert_eq!(
        page.send("open_project", json!({"id": "nope"}))["error"]["code"],
        "no_project"
    );
    let chapter = page.ok("get_chapter", json!({"chapter": "2"}));
    assert_eq!(chapter["text"], "Morning came grey.");
    assert_eq!(chapter["version"], 0);
    assert_eq!(page.ok("get_chapter", json!({}))["id"], ch1);
    assert_eq!(
        page.send("get_chapter", json!({"chapter": "7"}))["error"]["code"],
        "not_found"
    );
}

#[test]
fn execute_returns_the_tool_result_and_pushes_edit_and_history_events() {
    let (mut page, ch1) = setup();
    let result = page.ok(
        "execute",
        json!({"tool": "update_manuscript", "origin": "agent:editor", "callId": "c-1",
        "args": {"searchText": "dark", "replacementText": "lit"}}),
    );
    assert_eq!(result["status"], "success");
    assert_eq!(result["data"]["version"], 1);
    let events = page.events();
    assert_eq!(events[0].0, "edit");
    assert_eq!(events[0].1["chapter"], ch1);
    assert_eq!(events[0].1["origin"], "agent:editor");
    assert_eq!(events[0].1["version"], 1);
    assert_eq!(
        events[0].1["changeset"],
        json!([{"retain": 37}, {"insert": "lit"}, {"delete": 4}, {"retain": 1}])
    );
    assert_eq!(events[1].0, "history_changed");
    assert_eq!(events[1].1["canUndo"], true);

    // A failing tool call is still a successful request whose result says error.
    let result = page.ok(
        "execute",
        json!({"tool": "update_manuscript", "args": {"searchText": "zzz", "replacementText": "y"}}),
    );
    assert_eq!(result["status"], "error");
    assert!(page.events().is_empty());
    // UI tools push a ui event.
    page.ok(
        "execute",
        json!({"tool": "switch_panel", "args": {"panel": "history"}}),
    );
    let events = page.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].0, "ui");
    assert_eq!(events[0].1["panel"], "history");
    // Bad origins are rejected before anything runs.
    assert_eq!(
        page.send(
            "execute",
            json!({"tool": "switch_panel", "origin": "robot"})
        )["error"]["code"],
        "invalid_params"
    );
}

#[test]
fn every_run_analysis_result_is_announced_for_the_analysis_panel() {
    let (mut page, _) = setup();
    let result = page.ok(
        "execute",
        json!({"tool": "run_analysis", "origin": "agent:quill", "args": {"interpret": false}}),
    );
    assert_eq!(result["status"], "success", "{result}");
    let events = page.events();
    let analysis: Vec<&Value> = events
        .iter()
        .filter(|(kind, _)| kind == "analysis")
        .map(|(_, data)| data)
        .collect();
    assert_eq!(analysis.len(), 1, "{events:?}");
    assert_eq!(analysis[0]["origin"], "agent:quill");
    assert_eq!(analysis[0]["result"], result["data"]);
    assert_eq!(analysis[0]["result"]["section"], "full");
    // The writer's own, one section of one chapter.
    page.ok(
        "execute",
        json!({"tool": "run_analysis", "args": {"section": "pacing", "chapter": "2", "interpret": false}}),
    );
    let events = page.events();
    let (_, data) = events.iter().find(|(kind, _)| kind == "analysis").unwrap();
    assert_eq!(data["origin"], "user");
    assert_eq!(data["result"]["section"], "pacing");
    assert_eq!(data["result"]["scope"], "chapter");
    // A failed analysis announces nothing.
    let r = page.ok(
        "execute",
        json!({"tool": "run_analysis", "args": {"chapter": "9", "interpret": false}}),
    );
    assert_eq!(r["status"], "error");
    assert!(page.events().iter().all(|(kind, _)| kind != "analysis"));
}

#[test]
fn writer_changes_on_an_old_version_are_rebased_not_dropped() {
    let (mut page, ch1) = setup();
    // The agent edits (version 0 -> 1) while the writer, still on version 0, types at the end.
    page.ok(
        "execute",
        json!({"tool": "update_manuscript", "origin": "agent:editor",
        "args": {"searchText": "Mara", "replacementText": "Elin"}}),
    );
    page.events();
    let r = page.ok(
        "apply_user_change",
        json!({"chapter": ch1, "baseVersion": 0, "tag": "local-7",
        "changes": [{"retain": 42}, {"insert": " She waited."}]}),
    );
    assert_eq!(r["version"], 2);
    assert_eq!(r["rebased"], true);
    assert_eq!(r["tag"], "local-7");
    // The edit event carries the page's tag, so an editor recognises its own change.
    let edit = page
        .events()
        .into_iter()
        .find(|(k, _)| k == "edit")
        .unwrap()
        .1;
    assert_eq!(
        (edit["tag"].clone(), edit["origin"].clone()),
        (json!("local-7"), json!("user"))
    );
    let text = page.ok("get_chapter", json!({}))["text"].clone();
    assert_eq!(
        text,
        "Elin climbed the stair. The lamp was dark. She waited."
    );
    // snake_case spellings work too; a change longer than the text is refused and changes nothing.
    let r = page.send(
        "apply_user_change",
        json!({"chapter": ch1, "base_version": 2, "changeset": [{"retain": 999}]}),
    );
    assert_eq!(r["error"]["code"], "invalid_params");
    let r = page.send(
        "apply_user_change",
        json!({"chapter": ch1, "baseVersion": 9, "changes": []}),
    );
    assert_eq!(r["error"]["code"], "conflict");
    assert_eq!(page.ok("get_chapter", json!({}))["text"], text);
}

#[test]
fn undo_redo_and_undo_by_origin_over_the_protocol() {
    let (mut page, ch1) = setup();
    page.ok(
        "execute",
        json!({"tool": "update_manuscript", "origin": "agent:editor",
        "args": {"searchText": "dark", "replacementText": "lit"}}),
    );
    page.ok(
        "apply_user_change",
        json!({"chapter": ch1, "baseVersion": 1, "changes": [{"insert": "Slowly, "}]}),
    );
    page.events();
    let r = page.ok("undo", json!({"origin": "agent"}));
    assert_eq!(r["applied"].as_array().unwrap().len(), 1);
    assert_eq!(
        page.ok("get_chapter", json!({}))["text"],
        "Slowly, Mara climbed the stair. The lamp was dark."
    );
    let events = page.events();
    assert_eq!(events[0].0, "edit");
    assert_eq!(events[0].1["origin"], "user");
    let history = page.ok("history", json!({}));
    let entries = history["entries"].as_array().unwrap();
    assert_eq!(entries[0]["kind"]["type"], "revert");
    assert_eq!(
        entries
            .iter()
            .find(|e| e["origin"] == "agent:editor")
            .unwrap()["reverted"],
        true
    );
    page.ok("redo", json!({}));
    assert_eq!(
        page.ok("get_chapter", json!({}))["text"],
        "Slowly, Mara climbed the stair. The lamp was lit."
    );
    // The stack now holds: agent edit, typing, revert, restore. Four undos reach the start.
    for _ in 0..3 {
        assert_eq!(page.ok("undo", json!({}))["canUndo"], true);
    }
    assert_eq!(page.ok("undo", json!({}))["canUndo"], false);
    assert_eq!(
        page.ok("get_chapter", json!({}))["text"],
        "Mara climbed the stair. The lamp was dark."
    );
    assert_eq!(
        page.send("undo", json!({"origin": "robot"}))["error"]["code"],
        "invalid_params"
    );
}

#[test]
fn list_tools_in_each_format_and_toolset() {
    let (mut page, _) = setup();
    let neutral = page.ok("list_tools", json!({}));
    assert!(neutral["tools"].as_array().unwrap().len() >= 14);
    let openai = page.ok(
        "list_tools",
        json!({"format": "openai", "toolset": "quick"}),
    );
    assert!(openai
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["function"]["name"] == "update_manuscript"));
    let gemini = page.ok(
        "list_tools",
        json!({"format": "gemini", "toolset": "voice_safe"}),
    );
    assert!(gemini["functionDeclarations"].is_array());
    assert_eq!(
        page.send("list_tools", json!({"format": "cohere"}))["error"]["code"],
        "invalid_params"
    );
    assert_eq!(
        page.send("list_tools", json!({"toolset": "nope"}))["error"]["code"],
        "not_found"
    );
}

#[test]
fn a_new_worker_on_the_same_store_finds_everything_and_can_undo() {
    let store = Rc::new(MemoryStore::new());
    let mut first = Page::on(store.clone(), "w1");
    let project = first.ok(
        "create_project",
        json!({"name": "Kept", "chapters": [
        {"title": "One", "text": "Mara climbed the stair."}, {"title": "Two", "text": "Dawn."}]}),
    );
    let id = project["id"].as_str().unwrap().to_string();
    let ch1 = project["chapters"][0]["id"].as_str().unwrap().to_string();
    first.ok("execute", json!({"tool": "update_manuscript", "origin": "agent:ed", "args": {"searchText": "stair", "replacementText": "tower"}}));
    first.ok("apply_user_change", json!({"chapter": ch1, "baseVersion": 1, "changes": [{"retain": 23}, {"insert": " Slowly."}]}));
    first.ok(
        "execute",
        json!({"tool": "switch_panel", "args": {"panel": "memory"}}),
    );
    first.ok("undo", json!({}));
    assert!(first.events.take().iter().any(|e| e.kind == "saved"));
    let before = first.ok("history", json!({}));
    drop(first);

    let mut second = Page::on(store.clone(), "w2");
    let list = second.ok("list_projects", json!({}));
    assert_eq!(list["projects"][0]["name"], "Kept");
    let opened = second.ok("open_project", json!({"id": id}));
    assert_eq!(opened["ui"]["panel"], "memory");
    assert_eq!(
        second.ok("get_chapter", json!({"chapter": "1"}))["text"],
        "Mara climbed the tower."
    );
    assert_eq!(
        second.ok("history", json!({}))["entries"],
        before["entries"]
    );
    // Redo and undo work across the "reload".
    second.ok("redo", json!({}));
    assert_eq!(
        second.ok("get_chapter", json!({"chapter": "1"}))["text"],
        "Mara climbed the tower. Slowly."
    );
    second.ok("undo", json!({}));
    second.ok("undo", json!({}));
    assert_eq!(
        second.ok("get_chapter", json!({"chapter": "1"}))["text"],
        "Mara climbed the stair."
    );
    // Every tool call was audited, with a digest instead of its arguments.
    assert_eq!(store.len(Table::Audit), 2);
}

#[test]
fn projects_can_be_renamed_and_deleted_with_everything_in_them() {
    let store = Rc::new(MemoryStore::new());
    let mut page = Page::on(store.clone(), "w");
    let a = page.ok("create_project", json!({"name": "A"}))["id"]
        .as_str()
        .unwrap()
        .to_string();
    page.ok(
        "execute",
        json!({"tool": "append_to_manuscript", "args": {"text": "Hello."}}),
    );
    let b = page.ok("create_project", json!({"name": "B"}))["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        page.ok("rename_project", json!({"id": a, "name": "  Renamed  "}))["name"],
        "Renamed"
    );
    let names: Vec<String> = page.ok("list_projects", json!({}))["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.contains(&"Renamed".to_string()) && names.contains(&"B".to_string()));
    assert_eq!(
        page.send("rename_project", json!({"name": " "}))["error"]["code"],
        "invalid_params"
    );
    page.ok("delete_project", json!({"id": a}));
    for table in [Table::Chapters, Table::History, Table::Audit] {
        let left = futures::executor::block_on(draftsmith::store::Store::get_by_index(
            &*store,
            table,
            "project",
            json!(a),
        ))
        .unwrap();
        assert!(
            left.is_empty(),
            "{table:?} still has records of the deleted project"
        );
    }
    assert_eq!(
        page.send("open_project", json!({"id": a}))["error"]["code"],
        "no_project"
    );
    assert_eq!(
        page.send("delete_project", json!({"id": a}))["error"]["code"],
        "no_project"
    );
    assert_eq!(page.ok("open_project", json!({"id": b}))["name"], "B");
}

/// A store whose commits fail with a full quota while `full` is set.
struct FullDisk {
    inner: MemoryStore,
    full: std::cell::Cell<bool>,
}

impl draftsmith::store::Store for FullDisk {
    fn get<'a>(
        &'a self,
        t: Table,
        k: &'a str,
    ) -> draftsmith::store::StoreFuture<'a, Option<Value>> {
        self.inner.get(t, k)
    }
    fn get_all(&self, t: Table) -> draftsmith::store::StoreFuture<'_, Vec<Value>> {
        self.inner.get_all(t)
    }
    fn get_by_index<'a>(
        &'a self,
        t: Table,
        i: &'a str,
        v: Value,
    ) -> draftsmith::store::StoreFuture<'a, Vec<Value>> {
        self.inner.get_by_index(t, i, v)
    }
    fn commit(&self, batch: draftsmith::store::Batch) -> draftsmith::store::StoreFuture<'_, ()> {
        if self.full.get() {
            Box::pin(async {
                Err(draftsmith::store::StoreError::Quota(
                    "QuotaExceededError".into(),
                ))
            })
        } else {
            self.inner.commit(batch)
        }
    }
}

#[test]
fn a_full_quota_is_reported_and_nothing_in_memory_is_lost() {
    let disk = Rc::new(FullDisk {
        inner: MemoryStore::new(),
        full: std::cell::Cell::new(false),
    });
    let events = Rc::new(RecordingSink::default());
    let core = Core::new(Env {
        clock: Rc::new(ManualClock::new(1_000)),
        ids: Rc::new(SequentialIds::new("q")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: events.clone(),
        store: disk.clone(),
    });
    let send = |kind: &str, params: Value| -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        serde_json::from_str(&block_on(core.handle_text(&text))).unwrap()
    };
    let project = send(
        "create_project",
        json!({"name": "Q", "chapters": [{"text": "One."}]}),
    );
    let id = project["result"]["id"].as_str().unwrap().to_string();
    disk.full.set(true);
    let r = send(
        "execute",
        json!({"tool": "append_to_manuscript", "args": {"text": "Two."}}),
    );
    assert_eq!(r["result"]["status"], "success");
    let error = events
        .take()
        .into_iter()
        .find(|e| e.kind == "storage_error")
        .expect("error event");
    assert_eq!(error.data["code"], "quota_exceeded");
    assert!(error.data["message"]
        .as_str()
        .unwrap()
        .contains("kept in memory"));
    // The writer's words are still there, and editing goes on.
    assert_eq!(
        send("get_chapter", json!({}))["result"]["text"],
        "One.\n\nTwo."
    );
    // Creating a project that cannot be stored fails and creates nothing.
    let r = send("create_project", json!({"name": "Unsaved"}));
    assert_eq!(r["error"]["code"], "quota_exceeded");
    // Space again: the next save writes the whole project, so nothing is missing on reload.
    disk.full.set(false);
    send("open_project", json!({"id": id}));
    send(
        "execute",
        json!({"tool": "append_to_manuscript", "args": {"text": "Three."}}),
    );
    let reloaded = Core::new(Env {
        clock: Rc::new(ManualClock::new(2_000)),
        ids: Rc::new(SequentialIds::new("r")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: Rc::new(RecordingSink::default()),
        store: disk.clone(),
    });
    let text = json!({"id": 2, "type": "open_project", "params": {"id": id}}).to_string();
    block_on(reloaded.handle_text(&text));
    let text = json!({"id": 3, "type": "get_chapter"}).to_string();
    let r: Value = serde_json::from_str(&block_on(reloaded.handle_text(&text))).unwrap();
    assert_eq!(r["result"]["text"], "One.\n\nTwo.\n\nThree.");
    let text = json!({"id": 4, "type": "history"}).to_string();
    let r: Value = serde_json::from_str(&block_on(reloaded.handle_text(&text))).unwrap();
    assert_eq!(
        r["result"]["entries"].as_array().unwrap().len(),
        2,
        "both edits are in the stored history"
    );
}

#[test]
fn the_deletes_of_a_failed_save_are_written_by_the_next_save() {
    // An undo deletes its entry's history record; if that save fails, the next (full) save
    // must still delete it, or the undone entry comes back on reload.
    let disk = Rc::new(FullDisk {
        inner: MemoryStore::new(),
        full: std::cell::Cell::new(false),
    });
    let core = |ids: &str| {
        Core::new(Env {
            clock: Rc::new(ManualClock::new(1_000)),
            ids: Rc::new(SequentialIds::new(ids)),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: Rc::new(RecordingSink::default()),
            store: disk.clone(),
        })
    };
    let send = |core: &Core, kind: &str, params: Value| -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        serde_json::from_str(&block_on(core.handle_text(&text))).unwrap()
    };
    let first = core("a");
    let project = send(
        &first,
        "create_project",
        json!({"name": "Q", "chapters": [{"text": "One."}]}),
    );
    let id = project["result"]["id"].as_str().unwrap().to_string();
    send(
        &first,
        "execute",
        json!({"tool": "append_to_manuscript", "args": {"text": "Two."}}),
    );
    disk.full.set(true);
    send(&first, "undo", json!({}));
    disk.full.set(false);
    send(
        &first,
        "execute",
        json!({"tool": "switch_panel", "args": {"panel": "history"}}),
    );
    let in_memory = send(&first, "history", json!({}))["result"].clone();
    assert_eq!(in_memory["entries"], json!([]));

    let second = core("b");
    send(&second, "open_project", json!({"id": id}));
    assert_eq!(send(&second, "history", json!({}))["result"], in_memory);
    send(&second, "redo", json!({}));
    assert_eq!(
        send(&second, "get_chapter", json!({}))["result"]["text"],
        "One.\n\nTwo."
    );
}

#[test]
fn export_then_import_reproduces_the_project_exactly() {
    let mut source = Page::new();
    let project = source.ok("create_project", json!({"name": "Export Me", "chapters": [
        {"title": "One", "text": "Mara climbed the stair. “Who’s there?” 🐉"}, {"title": "Two", "text": "Dawn."}]}));
    let ch1 = project["chapters"][0]["id"].as_str().unwrap().to_string();
    source.ok("execute", json!({"tool": "update_manuscript", "origin": "agent:ed", "args": {"searchText": "stair", "replacementText": "tower"}}));
    source.ok(
        "apply_user_change",
        json!({"chapter": ch1, "baseVersion": 1, "changes": [{"insert": "So. "}]}),
    );
    source.ok("undo", json!({}));
    source.ok("execute", json!({"tool": "toggle_zen_mode", "args": {}}));
    let exported = source.ok("export_project", json!({}));
    assert_eq!(exported["format"], "draftsmith-project");

    let mut target = Page::on(Rc::new(MemoryStore::new()), "t");
    let imported = target.ok("import_project", json!({"document": exported}));
    assert_eq!(imported["name"], "Export Me");
    let again = target.ok("export_project", json!({}));
    assert_eq!(again, exported, "a re-export of the import is identical");
    // And it behaves the same: redo and undo agree.
    target.ok("redo", json!({}));
    source.ok("redo", json!({}));
    assert_eq!(
        target.ok("get_chapter", json!({}))["text"],
        source.ok("get_chapter", json!({}))["text"]
    );
    // Importing the same id twice is refused.
    let r = target.send("import_project", json!({"document": exported}));
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("already exists"));
}

#[test]
fn malformed_or_foreign_imports_are_rejected_and_change_nothing() {
    let mut source = Page::new();
    source.ok(
        "create_project",
        json!({"name": "Good", "chapters": [{"text": "abc"}]}),
    );
    source.ok(
        "execute",
        json!({"tool": "append_to_manuscript", "args": {"text": "def", "sameParagraph": true}}),
    );
    let good = source.ok("export_project", json!({}));
    let mut target = Page::on(Rc::new(MemoryStore::new()), "t");
    let mut cases: Vec<(Value, &str)> = vec![
        (json!("just text"), "not a draftsmith project export"),
        (
            json!({"format": "something-else", "version": 1}),
            "not a draftsmith project export",
        ),
        (
            json!({"name": "A Scrivener file"}),
            "not a draftsmith project export",
        ),
    ];
    let mut v = good.clone();
    v["version"] = json!(99);
    cases.push((v, "unsupported export version"));
    let mut v = good.clone();
    v["chapters"] = json!([]);
    cases.push((v, "do not match"));
    let mut v = good.clone();
    v["chapters"][0]["text"] = json!("a different length");
    cases.push((v, "history does not fit"));
    let mut v = good.clone();
    v["surprise"] = json!(true);
    cases.push((v, "malformed"));
    let mut v = good.clone();
    v["history"] = json!("not a list");
    cases.push((v, "malformed"));
    let mut v = good.clone();
    v["chapters"][0]["version"] = json!(u64::MAX);
    cases.push((v, "beyond 2^53-1"));
    let mut v = good.clone();
    v["history"][0]["seq"] = json!(1u64 << 53);
    cases.push((v, "beyond 2^53-1"));
    for (doc, needle) in cases {
        let r = target.send("import_project", json!({"document": doc}));
        assert_eq!(r["error"]["code"], "invalid_params", "{r}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{message:?} lacks {needle:?}");
        assert_eq!(target.ok("list_projects", json!({}))["projects"], json!([]));
    }
}

#[test]
fn the_manuscript_exports_as_markdown() {
    let mut page = Page::new();
    page.ok("create_project", json!({"name": "Lighthouse", "chapters": [
        {"title": "One", "text": "First.\n\nSecond paragraph.\n"}, {"title": "Two", "text": "Dawn."}]}));
    let md = page.ok("export_markdown", json!({}));
    assert_eq!(
        md["markdown"],
        "# Lighthouse\n\n## One\n\nFirst.\n\nSecond paragraph.\n\n## Two\n\nDawn.\n"
    );
}

#[test]
fn memory_is_saved_reloaded_exported_and_announced() {
    let store = Rc::new(MemoryStore::new());
    let mut first = Page::on(store.clone(), "m1");
    let a = first.ok("create_project", json!({"name": "A"}))["id"]
        .as_str()
        .unwrap()
        .to_string();
    // A new project has its bedside note from the start.
    assert!(first.ok("memory", json!({}))["bedside"]["tags"]
        .as_array()
        .unwrap()
        .contains(&json!("meta:bedside-note")));
    first.events();
    let note = first.ok("execute", json!({"tool": "write_memory_note", "args": {
        "text": "Mara is afraid of the dark since the shipwreck.", "type": "fact", "topicTags": ["Mara", "backstory"]}}));
    assert_eq!(note["status"], "success", "{note}");
    let events = first.events();
    assert!(
        events
            .iter()
            .any(|(k, d)| k == "memory_changed" && d["tool"] == "write_memory_note"),
        "{events:?}"
    );
    first.ok("execute", json!({"tool": "write_memory_note", "args": {"text": "Prefer British spelling.", "type": "preference", "scope": "global"}}));
    first.ok(
        "execute",
        json!({"tool": "create_goal", "args": {"title": "Finish act one", "progress": 40}}),
    );
    first.ok("execute", json!({"tool": "watch_entity", "args": {"name": "Mara", "type": "character", "reason": "arc"}}));
    first.ok("execute", json!({"tool": "evolve_bedside_note", "args": {"text": "Plan: the storm arrives in chapter 3."}}));
    first.ok("execute", json!({"tool": "evolve_bedside_note", "args": {"text": "Plan: the storm arrives in chapter 4."}}));
    let memory_before = first.ok("memory", json!({}));
    let b = first.ok("create_project", json!({"name": "B"}))["id"]
        .as_str()
        .unwrap()
        .to_string();
    drop(first);

    let mut second = Page::on(store.clone(), "m2");
    second.ok("open_project", json!({"id": a}));
    let memory_after = second.ok("memory", json!({}));
    assert_eq!(memory_after, memory_before);
    assert_eq!(
        memory_after["bedside"]["previous"]
            .as_array()
            .unwrap()
            .len(),
        2,
        "earlier bedside versions kept"
    );
    let hits = second.ok(
        "execute",
        json!({"tool": "search_memory", "args": {"query": "dark shipwreck"}}),
    );
    assert!(
        hits["data"].to_string().contains("afraid of the dark"),
        "{hits}"
    );
    let context = second.ok(
        "memory_context",
        json!({"request": "What is Mara afraid of?", "budget": 500}),
    );
    let block = context["block"].as_str().unwrap();
    assert!(block.starts_with("[AGENT MEMORY]"), "{block}");
    assert!(
        block.find("storm arrives in chapter 4").unwrap()
            < block.find("afraid of the dark").unwrap(),
        "bedside first"
    );
    // The global note is visible from project B too; A's own note is not.
    second.ok("open_project", json!({"id": b}));
    let memory_b = second.ok("memory", json!({}));
    let texts = memory_b["notes"].to_string();
    assert!(
        texts.contains("British spelling") && !texts.contains("shipwreck"),
        "{texts}"
    );
    // Export carries the project's memory; import brings it back.
    second.ok("open_project", json!({"id": a}));
    let doc = second.ok("export_project", json!({}));
    assert_eq!(doc["goals"][0]["title"], "Finish act one");
    let mut third = Page::on(Rc::new(MemoryStore::new()), "m3");
    third.ok("import_project", json!({"document": doc}));
    let imported = third.ok("memory", json!({}));
    assert_eq!(imported["goals"], memory_before["goals"]);
    assert_eq!(imported["watched"], memory_before["watched"]);
    assert_eq!(imported["bedside"], memory_before["bedside"]);
    // Deleting A removes its memory records but not the global note.
    second.ok("delete_project", json!({"id": a}));
    let notes_left =
        futures::executor::block_on(draftsmith::store::Store::get_all(&*store, Table::Notes))
            .unwrap();
    assert!(notes_left.iter().all(|n| n["project"] != json!(a)));
    assert!(notes_left.iter().any(|n| n["project"] == "*"));
}

#[test]
fn bulk_note_writes_are_all_or_nothing_and_saved() {
    let store = Rc::new(MemoryStore::new());
    let mut page = Page::on(store.clone(), "b");
    page.ok("create_project", json!({"name": "Bulk"}));
    let notes_before = store.len(Table::Notes);
    let r = page.send(
        "write_memory_notes",
        json!({"notes": [
        {"text": "one", "noteType": "fact"}, {"text": "   ", "noteType": "fact"}]}),
    );
    assert_eq!(r["error"]["code"], "invalid_params");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("note 1"),
        "{r}"
    );
    assert_eq!(page.ok("memory", json!({}))["notes"], json!([]));
    let written = page.ok("write_memory_notes", json!({"notes": (0..300).map(|i| json!({
        "text": format!("Note {i} about the lighthouse"), "noteType": "observation", "tags": ["bulk"]})).collect::<Vec<_>>()}));
    assert_eq!(written["written"].as_array().unwrap().len(), 300);
    assert_eq!(store.len(Table::Notes), notes_before + 300);
    let too_many = page.send(
        "write_memory_notes",
        json!({"notes": vec![json!({"text": "x", "noteType": "fact"}); 1001]}),
    );
    assert!(too_many["error"]["message"]
        .as_str()
        .unwrap()
        .contains("at most 1000"));
    // A note of the wrong shape after good ones: refused as the request's params.
    let misshapen = page.send(
        "write_memory_notes",
        json!({"notes": [{"text": "fine", "noteType": "fact"}, {"text": "fine too", "noteType": "fact"},
                         {"text": 7, "noteType": "fact"}]}),
    );
    assert_eq!(misshapen["error"]["code"], "invalid_params", "{misshapen}");
    let not_a_list = page.send("write_memory_notes", json!({"notes": {"text": "x"}}));
    assert_eq!(
        not_a_list["error"]["code"], "invalid_params",
        "{not_a_list}"
    );
    // None of the refused requests wrote anything.
    assert_eq!(store.len(Table::Notes), notes_before + 300);
    assert_eq!(
        page.ok("memory", json!({}))["notes"]
            .as_array()
            .unwrap()
            .len(),
        300
    );
}

/// The page's note fields are those `draftsmith.d.ts` names (`NewNote`, `MemoryNote`):
/// `noteType`, `scope`, `tags`, `importance` are honoured, listed and kept across a reload;
/// the agents' tool spelling `type` is refused with the field to use, and writes nothing.
#[test]
fn written_notes_keep_their_note_type_scope_tags_and_importance() {
    let store = Rc::new(MemoryStore::new());
    let mut page = Page::on(store.clone(), "n");
    let project = page.ok("create_project", json!({"name": "Notes"}))["id"].clone();
    let written = page.ok(
        "write_memory_notes",
        json!({"notes": [
            {"text": "Mara fears the dark.", "noteType": "plan", "scope": "global", "tags": ["Mara", " dark "], "importance": 5},
            {"text": "Fix the storm scene.", "noteType": "issue"},
        ]}),
    )["written"]
        .clone();
    let check = |memory: &Value| {
        let notes = memory["notes"].as_array().unwrap();
        let plan = notes.iter().find(|n| n["id"] == written[0]).unwrap();
        assert_eq!(plan["noteType"], "plan", "{plan}");
        assert_eq!(plan["scope"], "global");
        assert_eq!(plan["project"], Value::Null);
        assert_eq!(plan["tags"], json!(["mara", "dark"]));
        assert_eq!(plan["importance"], 5);
        assert_eq!(plan["author"], "user");
        let issue = notes.iter().find(|n| n["id"] == written[1]).unwrap();
        assert_eq!(issue["noteType"], "issue", "{issue}");
        assert_eq!(issue["scope"], "project");
        assert_eq!(issue["importance"], 3);
        for field in ["createdMs", "updatedMs", "version", "previous"] {
            assert!(issue.get(field).is_some(), "{field} missing: {issue}");
        }
    };
    check(&page.ok("memory", json!({})));
    let mut reloaded = Page::on(store, "m");
    reloaded.ok("open_project", json!({"id": project}));
    check(&reloaded.ok("memory", json!({})));

    let before = reloaded.ok("memory", json!({}))["notes"].clone();
    let wrong = reloaded.send(
        "write_memory_notes",
        json!({"notes": [{"text": "Spelled as the tool does.", "type": "fact"}]}),
    );
    assert_eq!(wrong["error"]["code"], "invalid_params", "{wrong}");
    let message = wrong["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("unknown field `type`") && message.contains("noteType"),
        "{message}"
    );
    assert_eq!(reloaded.ok("memory", json!({}))["notes"], before);
}

/// A store that records which tables each commit wrote.
#[derive(Default)]
struct Recording {
    inner: MemoryStore,
    commits: std::cell::RefCell<Vec<Vec<Table>>>,
}

impl draftsmith::store::Store for Recording {
    fn get<'a>(
        &'a self,
        t: Table,
        k: &'a str,
    ) -> draftsmith::store::StoreFuture<'a, Option<Value>> {
        self.inner.get(t, k)
    }
    fn get_all(&self, t: Table) -> draftsmith::store::StoreFuture<'_, Vec<Value>> {
        self.inner.get_all(t)
    }
    fn get_by_index<'a>(
        &'a self,
        t: Table,
        i: &'a str,
        v: Value,
    ) -> draftsmith::store::StoreFuture<'a, Vec<Value>> {
        self.inner.get_by_index(t, i, v)
    }
    fn commit(&self, batch: draftsmith::store::Batch) -> draftsmith::store::StoreFuture<'_, ()> {
        self.commits.borrow_mut().push(batch.tables());
        self.inner.commit(batch)
    }
}

#[test]
fn read_only_calls_write_only_their_audit_record() {
    let store = Rc::new(Recording::default());
    let events = Rc::new(RecordingSink::default());
    let core = Core::new(Env {
        clock: Rc::new(ManualClock::new(1_000)),
        ids: Rc::new(SequentialIds::new("r")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: events.clone(),
        store: store.clone(),
    });
    let send = |kind: &str, params: Value| {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        block_on(core.handle_text(&text));
    };
    send(
        "create_project",
        json!({"name": "R", "chapters": [{"text": "The lamp was dark."}]}),
    );
    let last_commit = || store.commits.borrow().last().cloned().unwrap();
    let last_saved = || {
        events
            .take()
            .into_iter()
            .rev()
            .find(|e| e.kind == "saved")
            .unwrap()
            .data
    };
    send(
        "execute",
        json!({"tool": "search_memory", "args": {"query": "lamp"}}),
    );
    assert_eq!(last_commit(), vec![Table::Audit]);
    assert_eq!(last_saved()["changed"], false);
    let before = store.commits.borrow().len();
    send(
        "execute",
        json!({"tool": "run_analysis", "args": {"section": "pacing"}}),
    );
    let commits = store.commits.borrow()[before..].to_vec();
    assert_eq!(commits[0], vec![Table::Audit]);
    // Then the bedside note takes the new figures: its note and the figures' record (the
    // note's update of the project's Yjs document waits for a checkpoint: the project is
    // not shared).
    assert_eq!(commits[1..], [vec![Table::Notes, Table::Meta]]);
    // A UI change writes the project record; an edit its change record and history (not
    // the chapter's whole text, and not the project record: positions are saved lazily).
    send(
        "execute",
        json!({"tool": "switch_panel", "args": {"panel": "memory"}}),
    );
    assert_eq!(last_commit(), vec![Table::Projects, Table::Audit]);
    assert_eq!(last_saved()["changed"], true);
    send(
        "execute",
        json!({"tool": "update_manuscript", "args": {"searchText": "dark", "replacementText": "lit"}}),
    );
    assert_eq!(
        last_commit(),
        vec![Table::History, Table::Meta, Table::Audit, Table::Changes]
    );
    // A checkpoint writes the document's updates that waited, with the lazy records.
    send("checkpoint", json!({}));
    assert!(last_commit().contains(&Table::Sync), "{:?}", last_commit());
}

#[test]
fn an_import_marks_every_story_bible_origin_import_and_resets_the_limits() {
    let mut source = Page::new();
    source.ok(
        "create_project",
        json!({"name": "Origins", "chapters": [{"text": "abc"}]}),
    );
    source.ok(
        "bible_save",
        json!({"kind": "character", "id": "mara", "fields": {"name_src": "Mara", "notes": "The writer's."}}),
    );
    let mut doc = source.ok("export_project", json!({}));
    // A forged document: the writer's notes labelled as an agent's, huge limits.
    let entity = doc["bible"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|e| e["id"] == "mara")
        .unwrap();
    entity["origins"]["notes"] = json!("agent:lore:2026-01-01");
    doc["historyState"]["limits"] = json!({"max_groups": 1u64 << 40, "max_bytes": 1u64 << 50});
    let mut target = Page::on(Rc::new(MemoryStore::new()), "t");
    target.ok("import_project", json!({"document": doc}));
    let list = target.ok("bible_list", json!({"kind": "character"}));
    assert_eq!(list["kinds"]["character"][0]["notes_origin"], "import");
    assert_eq!(list["kinds"]["character"][0]["name_src_origin"], "import");
    // So an agent's change of it asks the writer first.
    let r = target.ok(
        "execute",
        json!({"tool": "character_update_notes", "origin": "agent:lore",
               "args": {"character": "mara", "notes": "Overwritten."}}),
    );
    assert_eq!(r["data"]["code"], "approval_required", "{r}");
    let again = target.ok("export_project", json!({}));
    assert_eq!(
        again["historyState"]["limits"],
        json!({"max_groups": 1000, "max_bytes": 64 * 1024 * 1024})
    );
}

#[test]
fn editor_context_is_the_block_a_run_gets_within_its_budget() {
    let (mut page, ch1) = setup();
    page.ok(
        "execute",
        json!({"tool": "set_selection", "args": {"chapter": ch1, "start": 0, "end": 4}, "origin": "user"}),
    );
    let block = page.ok("editor_context", json!({}))["block"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        block.contains("Project: \"Lighthouse\", 2 chapters"),
        "{block}"
    );
    assert!(block.contains("\"The Stair\""), "{block}");
    assert!(block.contains("Toolset: all."), "{block}");
    assert!(block.contains("Mara"), "the selection: {block}");
    let quick = page.ok("editor_context", json!({"toolset": "quick"}))["block"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(quick.contains("Toolset: quick."), "{quick}");
    // A smaller budget gives a shorter block; one too small for its frame, none.
    let small = page.ok("editor_context", json!({"budget": 60}))["block"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(small.len() < block.len() && !small.is_empty(), "{small}");
    let none = page.ok("editor_context", json!({"budget": 1}));
    assert_eq!(none["block"], "");
    // Bad params change nothing and say why.
    let bad = page.send("editor_context", json!({"budget": "lots"}));
    assert_eq!(bad["error"]["code"], "invalid_params", "{bad}");
}
