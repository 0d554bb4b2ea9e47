//! Agent runs in a dedicated worker: the real core on IndexedDB, calling the dev server's
//! mock LLM over real `fetch` and streaming (`make test` starts it on 127.0.0.1:8788).
#![cfg(target_arch = "wasm32")]

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use draftsmith::core::Env;
use draftsmith::protocol::Event;
use draftsmith::web::fetch::{FetchTransport, JsSleeper};
use draftsmith::web::idb::IdbStore;
use draftsmith::web::{JsClock, JsIds};
use draftsmith::{Core, EventSink, IdSource};
use serde_json::{json, Value};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

mod web_common;
use web_common::{calls, data, requests_made, says, script};

const TEXT: &str = "Mara climbed the stair. The lamp was dark.";

/// Records events; can send the core a request when it sees a given run event (the way a
/// page reacts to events), without waiting for it.
struct Sink {
    events: RefCell<Vec<Event>>,
    core: RefCell<Weak<Core>>,
    on_run_event: RefCell<Option<(String, Value)>>,
}

impl EventSink for Sink {
    fn emit(&self, event: Event) {
        let trigger = self.on_run_event.borrow().clone();
        if let Some((kind, request)) = trigger {
            if event.kind == "run" && event.data["type"] == kind.as_str() {
                self.on_run_event.borrow_mut().take();
                if let Some(core) = self.core.borrow().upgrade() {
                    wasm_bindgen_futures::spawn_local(async move {
                        core.handle_text(&request.to_string()).await;
                    });
                }
            }
        }
        self.events.borrow_mut().push(event);
    }
}

struct Worker {
    core: Rc<Core>,
    sink: Rc<Sink>,
    db: String,
}

impl Worker {
    async fn new() -> Self {
        let db = format!("draftsmith-run-{}", JsIds.next_id());
        let sink = Rc::new(Sink {
            events: RefCell::new(Vec::new()),
            core: RefCell::new(Weak::new()),
            on_run_event: RefCell::new(None),
        });
        let core = Rc::new(
            Core::new(Env {
                clock: Rc::new(JsClock),
                ids: Rc::new(JsIds),
                decoder: Rc::new(draftsmith::web::JsTextDecoder),
                events: sink.clone(),
                store: Rc::new(IdbStore::open(&db).await.unwrap()),
            })
            .with_llm(Rc::new(FetchTransport), Rc::new(JsSleeper)),
        );
        *sink.core.borrow_mut() = Rc::downgrade(&core);
        let w = Self { core, sink, db };
        w.ok(
            "create_project",
            json!({"name": "Lighthouse", "chapters": [{"title": "The Stair", "text": TEXT}]}),
        )
        .await;
        w
    }

    async fn send(&self, kind: &str, params: Value) -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        serde_json::from_str(&self.core.handle_text(&text).await).unwrap()
    }

    async fn ok(&self, kind: &str, params: Value) -> Value {
        let r = self.send(kind, params.clone()).await;
        assert_eq!(r["ok"], true, "{kind} {params} -> {r}");
        r["result"].clone()
    }

    async fn configure(&self, base: &str) {
        self.ok(
            "set_settings",
            json!({"provider": "openai", "baseUrl": base, "model": "mock", "apiKey": "sk-test-key-0001", "idleTimeoutMs": 5000}),
        )
        .await;
    }

    async fn text(&self) -> String {
        self.ok("get_chapter", json!({})).await["text"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn run_types(&self) -> Vec<String> {
        self.sink
            .events
            .borrow()
            .iter()
            .filter(|e| e.kind == "run")
            .map(|e| e.data["type"].as_str().unwrap_or("").to_string())
            .collect()
    }

    async fn close(self) {
        drop(self.core);
        let _ = IdbStore::delete(&self.db).await;
    }
}

#[wasm_bindgen_test]
async fn a_full_agent_run_over_fetch_edits_and_undo_reverts_the_turn() {
    let w = Worker::new().await;
    let base = script(json!([
        calls(&[(
            "call_1",
            "navigate_to_text",
            json!({"query": "The lamp was dark."})
        )]),
        calls(&[(
            "call_2",
            "update_manuscript",
            json!({"searchText": "The lamp was dark.", "replacementText": "The lamp was lit."}),
        )]),
        says("Done: the lamp is lit."),
    ]))
    .await;
    w.configure(&base).await;
    let result = w
        .ok(
            "run",
            json!({"prompt": "Make the lamp lit.", "runId": "r1"}),
        )
        .await;
    assert_eq!(result["status"], "finished", "{result}");
    assert_eq!(result["text"], "Done: the lamp is lit.");
    assert_eq!(w.text().await, "Mara climbed the stair. The lamp was lit.");
    let types = w.run_types();
    assert_eq!(types.first().map(String::as_str), Some("run_started"));
    assert_eq!(types.last().map(String::as_str), Some("run_finished"));
    assert_eq!(types.iter().filter(|t| *t == "edit_applied").count(), 1);
    assert_eq!(
        types.iter().filter(|t| *t == "tool_call_finished").count(),
        2
    );

    // The transcript the model saw is valid: the third request carries both calls, each
    // followed by its result.
    let requests = requests_made(&base).await;
    assert_eq!(requests.len(), 3);
    let body: Value = serde_json::from_str(requests[2]["body"].as_str().unwrap()).unwrap();
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "tool"]
    );
    assert_eq!(body["messages"][3]["tool_call_id"], "call_1");
    assert_eq!(body["messages"][5]["tool_call_id"], "call_2");
    // The key went to the provider, and nowhere else.
    assert_eq!(
        requests[0]["headers"]["authorization"],
        "Bearer sk-test-key-0001"
    );
    let seen: String = w.sink.events.borrow().iter().map(|e| e.to_json()).collect();
    assert!(!seen.contains("sk-test-key-0001"));

    // One undo takes the whole turn back, and it stays taken back after a reload.
    let undone = w.ok("undo", json!({})).await;
    assert_eq!(undone["canUndo"], false, "{undone}");
    assert_eq!(w.text().await, TEXT);
    let store = IdbStore::open(&w.db).await.unwrap();
    let chapters = draftsmith::store::Store::get_all(&store, draftsmith::store::Table::Chapters)
        .await
        .unwrap();
    assert_eq!(chapters[0]["text"], TEXT);
    w.close().await;
}

#[wasm_bindgen_test]
async fn an_abort_mid_stream_leaves_the_manuscript_as_it_was() {
    let w = Worker::new().await;
    // Text, then a tool call's first half, then silence (the connection stays open).
    let mut stalled = calls(&[(
        "c",
        "update_manuscript",
        json!({"searchText": "dark", "replacementText": "lit"}),
    )]);
    let mut events = vec![data(
        json!({"choices": [{"index": 0, "delta": {"content": "Let me"}, "finish_reason": null}]}),
    )];
    events.extend(
        stalled["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap().to_string()),
    );
    stalled["events"] = json!(events);
    stalled["stallAfter"] = json!(2);
    let base = script(json!([stalled])).await;
    w.configure(&base).await;
    *w.sink.on_run_event.borrow_mut() = Some((
        "text_delta".into(),
        json!({"id": 9, "type": "abort_run", "params": {}}),
    ));
    let started = js_sys::Date::now();
    let result = w.ok("run", json!({"prompt": "go"})).await;
    assert_eq!(result["status"], "aborted", "{result}");
    assert!(
        js_sys::Date::now() - started < 4_000.0,
        "ended by the abort, not a timeout"
    );
    assert_eq!(w.text().await, TEXT);
    assert!(!w.run_types().contains(&"tool_call_started".to_string()));
    assert_eq!(
        w.run_types().last().map(String::as_str),
        Some("run_aborted")
    );
    w.close().await;
}

#[wasm_bindgen_test]
async fn an_abort_mid_tool_lets_the_command_finish_and_runs_nothing_after_it() {
    let w = Worker::new().await;
    let base = script(json!([
        calls(&[
            (
                "a",
                "update_manuscript",
                json!({"searchText": "dark", "replacementText": "lit"})
            ),
            (
                "b",
                "update_manuscript",
                json!({"searchText": "Mara", "replacementText": "Ines"})
            ),
        ]),
        says("never asked"),
    ]))
    .await;
    w.configure(&base).await;
    // The page aborts as soon as it hears the first call start; the command is running (its
    // save to IndexedDB is in flight) when the abort arrives.
    *w.sink.on_run_event.borrow_mut() = Some((
        "tool_call_started".into(),
        json!({"id": 9, "type": "abort_run", "params": {}}),
    ));
    let result = w.ok("run", json!({"prompt": "go"})).await;
    assert_eq!(result["status"], "aborted", "{result}");
    assert_eq!(w.text().await, "Mara climbed the stair. The lamp was lit.");
    let finished: Vec<String> = w
        .sink
        .events
        .borrow()
        .iter()
        .filter(|e| e.kind == "run" && e.data["type"] == "tool_call_finished")
        .map(|e| e.data["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(finished, ["success", "aborted"]);
    assert_eq!(requests_made(&base).await.len(), 1);
    w.close().await;
}
