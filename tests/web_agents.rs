//! A run as a tree in a dedicated worker, on IndexedDB and real `fetch` to the dev server's
//! mock LLM: agents defined with `define_agent` (a `keeper` that talks to the writer and
//! routes story-bible work to an `archivist` sub-agent); the archivist's call that would
//! overwrite the writer's notes pauses the whole tree; the worker goes away; a new worker (a
//! new core over the same database) approves, the call runs exactly once, the archivist's
//! session resumes and answers, and the keeper finishes.
//!
//! The model decides from each request alone (the tools offered, the task and the results in
//! the transcript): [`Model`] reads the request, queues its answer on the mock server and
//! sends the request there, so the answer still streams over `fetch`.
#![cfg(target_arch = "wasm32")]

use std::cell::Cell;
use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::llm::client::{HttpResponse, LlmTransport, TransportError};
use draftsmith::llm::HttpRequest;
use draftsmith::web::fetch::{FetchTransport, JsSleeper};
use draftsmith::web::idb::IdbStore;
use draftsmith::web::{JsClock, JsIds};
use draftsmith::{Core, IdSource, RecordingSink};
use futures_util::future::LocalBoxFuture;
use serde_json::{json, Value};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

mod web_common;
use web_common::{calls, requests_made, says, script};

const NOTES: &str = "Mara fears the sea; never let her swim.";
const WANTED: &str = "Mara loves swimming.";

/// A model that answers from the request: the keeper (offered `route_to_archivist_agent`)
/// routes the writer's words to the archivist and then says what came back; the archivist
/// (offered `send_response_to_keeper_agent`) runs `set notes of X to "Y"` from the player
/// input with `character_update_notes`, then answers with the call's status. Call ids come
/// from a counter that starts again in each worker (the core keeps them unique in the tree).
struct Model {
    /// Where answers are queued (the mock script's `responses`).
    queue: String,
    ids: Cell<u32>,
}

impl Model {
    fn new(base: &str) -> Self {
        Self {
            queue: format!("{}/responses", base.trim_end_matches("/v1")),
            ids: Cell::new(0),
        }
    }

    fn id(&self) -> String {
        self.ids.set(self.ids.get() + 1);
        format!("call_{}", self.ids.get())
    }

    fn decide(&self, body: &Value) -> Value {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let tools: Vec<&str> = body["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .filter_map(|t| t["function"]["name"].as_str())
                    .collect()
            })
            .unwrap_or_default();
        let last = messages.last().cloned().unwrap_or_default();
        let result: Value = if last["role"] == "tool" {
            serde_json::from_str(last["content"].as_str().unwrap_or("null")).unwrap_or_default()
        } else {
            Value::Null
        };
        let user = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
            .to_string();
        if tools.contains(&"route_to_archivist_agent") {
            if !result.is_null() {
                let said = result["data"]["response"]["response_content"]
                    .as_str()
                    .unwrap_or("nothing");
                return says(&format!("The archivist says: {said}"));
            }
            return calls(&[(
                &self.id(),
                "route_to_archivist_agent",
                json!({"action_type": "meta", "player_input": user, "target": "story bible"}),
            )]);
        }
        if tools.contains(&"send_response_to_keeper_agent") {
            let input = user
                .lines()
                .find_map(|l| l.strip_prefix("Player Input: "))
                .unwrap_or("");
            let Some((who, notes)) = input
                .strip_prefix("set notes of ")
                .and_then(|rest| rest.split_once(" to \""))
            else {
                return says("The task asks for nothing I can do.");
            };
            if !result.is_null() {
                let status = result["status"].as_str().unwrap_or("unknown");
                return calls(&[(
                    &self.id(),
                    "send_response_to_keeper_agent",
                    json!({"agent_type": "archivist", "response_content": format!("{who}'s notes: {status}")}),
                )]);
            }
            return calls(&[(
                &self.id(),
                "character_update_notes",
                json!({"character": who, "notes": notes.trim_end_matches('"')}),
            )]);
        }
        says("I have no tool for that.")
    }
}

impl LlmTransport for Model {
    fn send<'a>(
        &'a self,
        request: &'a HttpRequest,
    ) -> LocalBoxFuture<'a, Result<HttpResponse, TransportError>> {
        Box::pin(async move {
            let body: Value = serde_json::from_str(&request.body).unwrap_or_default();
            let answer = self.decide(&body);
            let queued = FetchTransport
                .send(&HttpRequest {
                    method: "POST".into(),
                    url: self.queue.clone(),
                    headers: vec![],
                    body: json!([answer]).to_string(),
                })
                .await?;
            assert_eq!(queued.status, 204, "the mock server took the answer");
            FetchTransport.send(request).await
        })
    }
}

/// One worker's core on the database `db`, its model on the mock script `base`.
struct Worker {
    core: Core,
    events: Rc<RecordingSink>,
}

impl Worker {
    async fn open(db: &str, base: &str) -> Self {
        let events = Rc::new(RecordingSink::default());
        let core = Core::new(Env {
            clock: Rc::new(JsClock),
            ids: Rc::new(JsIds),
            decoder: Rc::new(draftsmith::web::JsTextDecoder),
            events: events.clone(),
            store: Rc::new(IdbStore::open(db).await.unwrap()),
        })
        .with_llm(Rc::new(Model::new(base)), Rc::new(JsSleeper));
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

    async fn mara(&self) -> Value {
        self.ok("bible_list", json!({"kind": "character"})).await["kinds"]["character"][0].clone()
    }

    /// The run events so far.
    fn run_events(&self) -> Vec<Value> {
        self.events
            .peek()
            .iter()
            .filter(|e| e.kind == "run")
            .map(|e| e.data.clone())
            .collect()
    }
}

/// The events of `kind`.
fn of(events: &[Value], kind: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == kind)
        .cloned()
        .collect()
}

/// The body of the `n`th model request.
fn request_body(requests: &[Value], n: usize) -> Value {
    serde_json::from_str(requests[n]["body"].as_str().unwrap()).unwrap()
}

#[wasm_bindgen_test]
async fn an_approval_inside_a_sub_agent_pauses_the_tree_and_a_new_worker_finishes_it_once() {
    let db = format!("draftsmith-tree-{}", JsIds.next_id());
    let base = script(json!([])).await;

    // The first worker: a project, the writer's notes, two agents, and a run that pauses.
    let first = Worker::open(&db, &base).await;
    let project = first
        .ok(
            "create_project",
            json!({"name": "Lighthouse", "chapters": [{"title": "One", "text": "Mara waits."}]}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    first.configure(&base).await;
    first
        .ok(
            "bible_save",
            json!({"kind": "character", "fields": {"name_src": "Mara", "notes": NOTES}}),
        )
        .await;
    first
        .ok(
            "define_agent",
            json!({"agent": {"name": "archivist", "description": "Keeps the story bible.", "systemPrompt": "You keep the story bible. You are done when the change is made and you have answered.", "tools": ["character_update_notes"]}}),
        )
        .await;
    first
        .ok(
            "define_agent",
            json!({"agent": {"name": "keeper", "systemPrompt": "Hand every story-bible change to the archivist. You are done when you have told the writer.", "subAgents": [{"agent": "archivist"}], "talksToWriter": true}}),
        )
        .await;
    let run = first
        .ok(
            "run",
            json!({"prompt": format!("set notes of Mara to \"{WANTED}\""), "agent": "keeper", "runId": "tree-1"}),
        )
        .await;
    assert_eq!(run["status"], "paused", "{run}");
    let card = run["pending"][0].clone();
    assert_eq!(card["origin"], "agent:archivist", "{card}");
    assert_eq!(card["tool"], "character_update_notes");
    assert_eq!(card["current"]["notes"], NOTES);
    assert_eq!(card["proposed"]["notes"], WANTED);
    assert_eq!(first.mara().await["notes"], NOTES, "nothing changed yet");

    // The tree paused at every level: the archivist's session, then the keeper's routing call.
    let events = first.run_events();
    let started = of(&events, "session_started");
    assert_eq!(started.len(), 1, "{started:?}");
    assert_eq!(started[0]["agent"], "archivist");
    assert_eq!(started[0]["path"], "keeper › archivist");
    assert_eq!(started[0]["caller"], "keeper");
    let session = started[0]["session"].as_str().unwrap().to_string();
    let routing = started[0]["callId"].as_str().unwrap().to_string();
    assert!(session.starts_with("sub_agent_archivist_"), "{session}");
    let asked = of(&events, "approval_requested");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["origin"], "agent:archivist");
    let finished = of(&events, "tool_call_finished");
    let waiting: Vec<(String, String, String)> = finished
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap_or("").to_string(),
                e["status"].as_str().unwrap_or("").to_string(),
                e["session"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        waiting,
        [
            (
                "character_update_notes".into(),
                "pending".into(),
                session.clone()
            ),
            (
                "route_to_archivist_agent".into(),
                "pending".into(),
                String::new()
            ),
        ],
        "the archivist's call waits, and so does the keeper's routing call"
    );
    let paused = of(&events, "session_paused");
    assert_eq!(paused.len(), 1);
    assert_eq!(
        (paused[0]["session"].as_str(), paused[0]["callId"].as_str()),
        (Some(session.as_str()), Some(routing.as_str()))
    );
    assert!(of(&events, "session_ended").is_empty());
    assert_eq!(events.last().unwrap()["type"], "run_paused");
    // The worker is terminated: everything it held in memory is gone.
    drop(first);

    // A new worker (a reload) sees the card and approves it.
    let second = Worker::open(&db, &base).await;
    second.ok("open_project", json!({"id": project})).await;
    second.configure(&base).await;
    let pending = second.ok("list_approvals", json!({})).await;
    assert_eq!(
        pending["approvals"].as_array().unwrap().len(),
        1,
        "{pending}"
    );
    let card = pending["approvals"][0].clone();
    assert_eq!(card["origin"], "agent:archivist");
    assert_eq!(card["run"], "tree-1");
    assert_eq!(pending["pausedRuns"][0]["run"], "tree-1", "{pending}");
    let answer = second
        .ok(
            "approve",
            json!({"callId": card["callId"], "decision": "approve", "digest": card["digest"]}),
        )
        .await;
    assert_eq!(answer["status"], "success", "{answer}");
    assert_eq!(answer["run"]["status"], "finished", "{answer}");
    assert_eq!(
        answer["run"]["text"], "The archivist says: Mara's notes: success",
        "{answer}"
    );
    let mara = second.mara().await;
    assert_eq!(mara["notes"], WANTED);
    assert!(
        mara["notes_origin"]
            .as_str()
            .unwrap()
            .starts_with("agent:archivist:"),
        "{mara}"
    );

    // The archivist's session resumed where it paused and ended; then the keeper finished.
    let events = second.run_events();
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    let at = |kind: &str| types.iter().position(|t| *t == kind).unwrap_or(usize::MAX);
    assert!(at("run_resumed") < at("session_resumed"), "{types:?}");
    assert!(at("session_resumed") < at("session_ended"), "{types:?}");
    assert!(at("session_ended") < at("run_finished"), "{types:?}");
    assert_eq!(types.last(), Some(&"run_finished"), "{types:?}");
    let resumed = of(&events, "session_resumed");
    assert_eq!(resumed.len(), 1);
    assert_eq!(resumed[0]["session"], session.as_str());
    let ended = of(&events, "session_ended");
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0]["session"], session.as_str());
    assert_eq!(ended[0]["callId"], routing.as_str());
    assert_eq!(ended[0]["status"], "finished");
    assert!(
        of(&events, "session_started").is_empty(),
        "no new session: the paused one resumed"
    );
    let replied: Vec<&Value> = events
        .iter()
        .filter(|e| {
            e["type"] == "tool_call_started" && e["name"] == "send_response_to_keeper_agent"
        })
        .collect();
    assert_eq!(replied.len(), 1);
    assert_eq!(replied[0]["path"], "keeper › archivist");
    let after = second.ok("list_approvals", json!({})).await;
    assert_eq!(after["approvals"].as_array().unwrap().len(), 0, "{after}");
    assert_eq!(after["pausedRuns"].as_array().unwrap().len(), 0, "{after}");

    // A third worker (another tab) approving the same call is refused: it ran once.
    let third = Worker::open(&db, &base).await;
    third.ok("open_project", json!({"id": project})).await;
    let again = third
        .send(
            "approve",
            json!({"callId": card["callId"], "decision": "approve"}),
        )
        .await;
    assert_eq!(again["error"]["code"], "conflict", "{again}");
    let store = IdbStore::open(&db).await.unwrap();
    use draftsmith::store::{Store, Table};
    let audit = store.get_all(Table::Audit).await.unwrap();
    let ran: Vec<&Value> = audit
        .iter()
        .filter(|r| r["tool"] == "character_update_notes" && r["status"] == "success")
        .collect();
    assert_eq!(
        ran.len(),
        1,
        "the approved call ran exactly once: {audit:?}"
    );
    assert_eq!(ran[0]["origin"], "agent:archivist");

    // Four model calls: keeper, archivist (paused) | archivist, keeper. The archivist's
    // resumed call has its own conversation (its task, not the keeper's) and the approved
    // call's result; the keeper's last call has the archivist's answer as the routing result.
    let requests = requests_made(&base).await;
    assert_eq!(requests.len(), 4, "{requests:?}");
    let resumed = request_body(&requests, 2);
    let messages = resumed["messages"].as_array().unwrap();
    assert!(
        messages[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("ACTION FROM KEEPER AGENT:"),
        "{resumed}"
    );
    assert!(
        !messages.iter().any(|m| m["content"]
            .as_str()
            .is_some_and(|c| c.starts_with("set notes of"))),
        "nothing of the keeper's conversation: {resumed}"
    );
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["tool_call_id"], card["callId"]);
    assert!(last["content"].as_str().unwrap().contains("success"));
    let keeper = request_body(&requests, 3);
    let last = keeper["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["tool_call_id"], routing.as_str());
    let routed: Value = serde_json::from_str(last["content"].as_str().unwrap()).unwrap();
    assert_eq!(routed["status"], "success", "{routed}");
    assert_eq!(routed["data"]["agent"], "archivist");
    assert_eq!(routed["data"]["session"], session.as_str());
    assert_eq!(
        routed["data"]["response"]["response_content"],
        "Mara's notes: success"
    );
    drop((second, third, store));
    let _ = IdbStore::delete(&db).await;
}
