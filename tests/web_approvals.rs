//! Human in the loop in a dedicated worker, on IndexedDB and real `fetch` to the dev
//! server's mock LLM: an agent's call that would overwrite the writer's words pauses the run;
//! the worker goes away; a new worker (a reload) approves and the call runs exactly once and
//! the run continues; a rejection reaches the model.
#![cfg(target_arch = "wasm32")]

use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::web::fetch::{FetchTransport, JsSleeper};
use draftsmith::web::idb::IdbStore;
use draftsmith::web::{JsClock, JsIds};
use draftsmith::{Core, IdSource, RecordingSink};
use serde_json::{json, Value};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

mod web_common;
use web_common::{calls, requests_made, says, script};

const NOTES: &str = "Mara fears the sea; never let her swim.";

/// One worker's core on the database `db`.
struct Worker {
    core: Core,
    events: Rc<RecordingSink>,
}

impl Worker {
    async fn open(db: &str) -> Self {
        let events = Rc::new(RecordingSink::default());
        let core = Core::new(Env {
            clock: Rc::new(JsClock),
            ids: Rc::new(JsIds),
            decoder: Rc::new(draftsmith::web::JsTextDecoder),
            events: events.clone(),
            store: Rc::new(IdbStore::open(db).await.unwrap()),
        })
        .with_llm(Rc::new(FetchTransport), Rc::new(JsSleeper));
        Self { core, events }
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
            json!({"provider": "openai", "baseUrl": base, "model": "mock", "idleTimeoutMs": 5000}),
        )
        .await;
    }

    async fn notes(&self) -> Value {
        self.ok("bible_list", json!({"kind": "character"})).await["kinds"]["character"][0]["notes"]
            .clone()
    }

    fn run_types(&self) -> Vec<String> {
        self.events
            .peek()
            .iter()
            .filter(|e| e.kind == "run")
            .map(|e| e.data["type"].as_str().unwrap_or("").to_string())
            .collect()
    }
}

/// A project with a character whose notes the writer wrote; a paused run that wants to
/// overwrite them. Returns the project id.
async fn paused_run(w: &Worker, base: &str) -> String {
    let project = w
        .ok(
            "create_project",
            json!({"name": "Lighthouse", "chapters": [{"title": "One", "text": "Mara waits."}]}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    w.configure(base).await;
    w.ok(
        "bible_save",
        json!({"kind": "character", "fields": {"name_src": "Mara", "notes": NOTES}}),
    )
    .await;
    let run = w
        .ok(
            "run",
            json!({"prompt": "Make Mara a swimmer.", "runId": "r1"}),
        )
        .await;
    assert_eq!(run["status"], "paused", "{run}");
    assert_eq!(run["pending"][0]["callId"], "call_1");
    assert_eq!(run["pending"][0]["current"]["notes"], NOTES);
    assert!(w.run_types().contains(&"approval_requested".to_string()));
    assert_eq!(w.notes().await, NOTES);
    project
}

fn overwrite() -> Value {
    calls(&[(
        "call_1",
        "character_update_notes",
        json!({"character": "mara", "notes": "Mara loves swimming."}),
    )])
}

#[wasm_bindgen_test]
async fn approved_after_a_new_worker_the_call_runs_once_and_the_run_goes_on() {
    let db = format!("draftsmith-approve-{}", JsIds.next_id());
    let base = script(json!([overwrite(), says("Mara swims now.")])).await;
    let first = Worker::open(&db).await;
    let project = paused_run(&first, &base).await;
    // The worker is terminated: everything it held in memory is gone.
    drop(first);

    let second = Worker::open(&db).await;
    second.ok("open_project", json!({"id": project})).await;
    second.configure(&base).await;
    let pending = second.ok("list_approvals", json!({})).await;
    assert_eq!(pending["approvals"][0]["callId"], "call_1", "{pending}");
    let answer = second
        .ok(
            "approve",
            json!({"callId": "call_1", "decision": "approve"}),
        )
        .await;
    assert_eq!(answer["status"], "success", "{answer}");
    assert_eq!(answer["run"]["status"], "finished", "{answer}");
    assert_eq!(answer["run"]["text"], "Mara swims now.");
    assert_eq!(second.notes().await, "Mara loves swimming.");
    let types = second.run_types();
    // The approved call's result, then the run going on.
    assert_eq!(
        types[..2],
        ["tool_call_finished", "run_resumed"],
        "{types:?}"
    );
    assert_eq!(types.last().map(String::as_str), Some("run_finished"));

    // A third worker (another tab) approving the same call is refused: it ran once.
    let third = Worker::open(&db).await;
    third.ok("open_project", json!({"id": project})).await;
    let again = third
        .send(
            "approve",
            json!({"callId": "call_1", "decision": "approve"}),
        )
        .await;
    assert_eq!(again["error"]["code"], "conflict", "{again}");
    let store = IdbStore::open(&db).await.unwrap();
    use draftsmith::store::{Store, Table};
    let runs: Vec<Value> = store
        .get_all(Table::Audit)
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r["tool"] == "character_update_notes" && r["status"] == "success")
        .collect();
    assert_eq!(runs.len(), 1, "the approved call ran exactly once");

    // The model saw the call's result in the resumed conversation.
    let requests = requests_made(&base).await;
    assert_eq!(requests.len(), 2);
    let body: Value = serde_json::from_str(requests[1]["body"].as_str().unwrap()).unwrap();
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["tool_call_id"], "call_1");
    assert!(last["content"].as_str().unwrap().contains("success"));
    drop((second, third, store));
    let _ = IdbStore::delete(&db).await;
}

#[wasm_bindgen_test]
async fn a_rejection_reaches_the_model_and_the_writers_words_stay() {
    let db = format!("draftsmith-reject-{}", JsIds.next_id());
    let base = script(json!([overwrite(), says("I left the notes as they are.")])).await;
    let w = Worker::open(&db).await;
    paused_run(&w, &base).await;
    let answer = w
        .ok(
            "approve",
            json!({"callId": "call_1", "decision": "reject", "reason": "She must fear water."}),
        )
        .await;
    assert_eq!(answer["status"], "denied");
    assert_eq!(answer["run"]["status"], "finished");
    assert_eq!(w.notes().await, NOTES);
    let requests = requests_made(&base).await;
    let body: Value = serde_json::from_str(requests[1]["body"].as_str().unwrap()).unwrap();
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["tool_call_id"], "call_1");
    let content = last["content"].as_str().unwrap();
    assert!(
        content.contains("denied") && content.contains("She must fear water."),
        "{content}"
    );
    drop(w);
    let _ = IdbStore::delete(&db).await;
}
