//! The crash-consistency harness (issue 15), shared by the native test (`tests/crash.rs`, on
//! the in-memory store, every crash point) and the browser test (`tests/web_crash.rs`, on
//! IndexedDB, a sample of crash points).
//!
//! A scripted 50-step session goes through the core's requests: agent runs against a scripted
//! model (one appends to the manuscript; one changes the writer's story-bible notes, so the
//! run pauses for approval, and the writer's approval resumes it to its end), direct agent
//! tool calls, the writer's typing, chapter adds, renames, moves and deletes, story-bible
//! saves, memory notes, undo. The
//! reference run (no failures) records the stored state after every step, as a new core
//! loading the store sees it. A crash run makes the store die at its k-th commit (refused,
//! aborted half-way, or committed but unanswered; every later commit fails, as if the
//! process had died there), stops at the step that was interrupted, and loads the store in a
//! new core: it must see exactly the state before or after that step. Every acknowledged
//! change is then present, and each tool call is applied at most once (the states are
//! compared whole: chapters, history, memory, story bible, files).

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::llm::client::{
    HttpResponse, LlmTransport, Scripted, ScriptedTransport, Sleeper, TransportError,
};
use draftsmith::llm::HttpRequest;
use draftsmith::store::faulty::{Crash, Faulty, YieldOnce};
use draftsmith::store::{MemoryStore, Store, Table};
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures_util::future::{join_all, LocalBoxFuture};
use serde_json::{json, Value};
use std::future;

/// Steps in the session (after creating the project).
pub const STEPS: usize = 50;

const CLOCK_MS: u64 = 1_700_000_000_000;

/// What an agent run's prompt asks, word for word (the scripted model reads it from there).
const APPEND: &str = "Append this sentence to the manuscript: ";
const NOTES: &str = "Replace the notes of the character Mara with: ";

/// The scripted model: it answers each request from what the request holds, as a real
/// model would. A prompt asking to append a sentence or to replace Mara's notes gets the
/// matching tool call, with the text taken from the prompt; once a tool result is the last
/// message, it says it is done. It knows nothing in advance.
pub struct Model;

fn model_answer(body: &Value) -> Scripted {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let text = |s: &str| {
        Scripted::sse(
            &sse(&[
                json!({"choices": [{"index": 0, "delta": {"content": s}, "finish_reason": null}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            ]),
            64,
        )
    };
    let call = |name: &str, args: Value| {
        Scripted::sse(
            &sse(&[
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}, "finish_reason": null}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            ]),
            64,
        )
    };
    if last["role"] == "tool" {
        return text("Done.");
    }
    let prompt = last["content"].as_str().unwrap_or_default();
    if let Some(sentence) = prompt.split(APPEND).nth(1) {
        call("append_to_manuscript", json!({"text": sentence.trim()}))
    } else if let Some(notes) = prompt.split(NOTES).nth(1) {
        call(
            "character_update_notes",
            json!({"character": "Mara", "notes": notes.trim()}),
        )
    } else {
        text("I do not know what to do.")
    }
}

fn sse(chunks: &[Value]) -> String {
    let mut out: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

impl LlmTransport for Model {
    fn send<'a>(
        &'a self,
        request: &'a HttpRequest,
    ) -> LocalBoxFuture<'a, Result<HttpResponse, TransportError>> {
        Box::pin(async move {
            // A network answers later: other work goes on meanwhile.
            YieldOnce(false).await;
            let body: Value = serde_json::from_str(&request.body).unwrap_or(Value::Null);
            let once = ScriptedTransport::new(vec![model_answer(&body)]);
            once.send(request).await
        })
    }
}

/// No timeout or backoff ever fires.
struct Never;

impl Sleeper for Never {
    fn sleep(&self, _ms: u64) -> LocalBoxFuture<'static, ()> {
        Box::pin(future::pending())
    }
}

/// Background work a core started (its spawner's futures), run to its end by [`settle`].
pub type Background = Rc<RefCell<Vec<LocalBoxFuture<'static, ()>>>>;

/// A core on `store` with the harness's clock, ids and scripted model (the same in every run),
/// and the background work it starts.
pub fn core_on(store: Rc<dyn Store>, ids: &str) -> (Core, Background) {
    let background: Background = Rc::default();
    let spawned = background.clone();
    let core = Core::new(Env {
        clock: Rc::new(ManualClock::new(CLOCK_MS)),
        ids: Rc::new(SequentialIds::new(ids)),
        #[cfg(not(target_arch = "wasm32"))]
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        #[cfg(target_arch = "wasm32")]
        decoder: Rc::new(draftsmith::web::JsTextDecoder),
        events: Rc::new(RecordingSink::default()),
        store,
    })
    .with_llm(Rc::new(Model), Rc::new(Never))
    .with_spawner(Rc::new(move |f| spawned.borrow_mut().push(f)));
    (core, background)
}

/// Run the background work to its end (including what it starts in turn).
pub async fn settle(background: &Background) {
    loop {
        let work: Vec<_> = background.borrow_mut().drain(..).collect();
        if work.is_empty() {
            return;
        }
        join_all(work).await;
    }
}

/// Send a request; the response's `result`, or the error as `Err`.
pub async fn request(core: &Core, kind: &str, params: Value) -> Result<Value, Value> {
    let text = json!({"id": 1, "type": kind, "params": params}).to_string();
    let out: Value = serde_json::from_str(&core.handle_text(&text).await).unwrap();
    if out["ok"] == true {
        Ok(out["result"].clone())
    } else {
        Err(out["error"].clone())
    }
}

/// Create the session's project; its id.
pub async fn setup(core: &Core) -> String {
    let project = request(
        core,
        "create_project",
        json!({"name": "Crash", "chapters": [
            {"title": "One", "text": "Mara climbed the stair. The lamp was dark."},
            {"title": "Two", "text": "Morning came grey."}
        ]}),
    )
    .await
    .expect("create_project");
    request(
        core,
        "bible_save",
        json!({"kind": "character", "fields": {"name_src": "Mara", "notes": "Afraid of the sea."}}),
    )
    .await
    .expect("bible_save");
    request(
        core,
        "set_settings",
        json!({"provider": "openai", "baseUrl": "http://model.test/v1", "model": "m",
               "apiKey": "sk-crash", "rememberKey": true}),
    )
    .await
    .expect("set_settings");
    project["id"].as_str().unwrap().to_string()
}

/// Run step `i` of the session (reading what it needs first, as a page or an agent would).
/// Errors of the step's requests are returned, not raised: a crashed store makes them fail.
pub async fn step(core: &Core, i: usize) -> Result<(), Value> {
    let agent = |name: &str| format!("agent:{name}");
    match i % 10 {
        0 => {
            // An agent run: the model appends the sentence and says it is done.
            agent_run(core, i, format!("{APPEND}Step {i}."), "finished").await
        }
        1 => {
            let chapter = request(core, "get_chapter", json!({"chapter": "1"})).await?;
            request(
                core,
                "apply_user_change",
                json!({"chapter": chapter["id"], "baseVersion": chapter["version"],
                       "changes": [{"insert": format!("w{i} ")}], "tag": format!("tag-{i}")}),
            )
            .await
            .map(|_| ())
        }
        2 => {
            let result = request(
                core,
                "execute",
                json!({"tool": "update_manuscript",
                       "args": {"searchText": format!("Step {}.", i - 2), "replacementText": format!("Step {}!", i - 2)},
                       "origin": agent("editor"), "callId": format!("call-{i}")}),
            )
            .await?;
            check_tool(&result)
        }
        3 => request(
            core,
            "add_chapter",
            json!({"title": format!("Added {i}"), "text": format!("Text of {i}.")}),
        )
        .await
        .map(|_| ()),
        4 => request(
            core,
            "rename_chapter",
            json!({"chapter": format!("Added {}", i - 1), "title": format!("Renamed {i}")}),
        )
        .await
        .map(|_| ()),
        5 => {
            let result = request(
                core,
                "execute",
                json!({"tool": "write_memory_note",
                       "args": {"text": format!("Remember step {i}."), "type": "plan"},
                       "origin": agent("planner"), "callId": format!("call-{i}")}),
            )
            .await?;
            check_tool(&result)
        }
        6 if i % 20 == 6 => {
            // An agent run overwrites the writer's notes: it pauses for approval (step 7
            // approves, and the run goes on to its end).
            agent_run(
                core,
                i,
                format!("{NOTES}Loves the sea (step {i})."),
                "paused",
            )
            .await
        }
        6 => {
            // An agent's direct call overwrites the writer's notes: it waits for approval.
            request(
                core,
                "execute",
                json!({"tool": "character_update_notes",
                       "args": {"character": "mara", "notes": format!("Loves the sea (step {i}).")},
                       "origin": agent("bible"), "callId": format!("call-{i}")}),
            )
            .await
            .map(|_| ())
        }
        7 => {
            let approvals = request(core, "list_approvals", json!({})).await?;
            match approvals["approvals"].as_array().and_then(|a| a.first()) {
                Some(card) => request(
                    core,
                    "approve",
                    json!({"callId": card["callId"], "decision": "approve", "digest": card["digest"]}),
                )
                .await
                .map(|_| ()),
                None => Ok(()),
            }
        }
        8 => {
            if i % 20 == 8 {
                request(
                    core,
                    "move_chapter",
                    json!({"chapter": format!("Renamed {}", i - 4), "to": 1}),
                )
                .await
                .map(|_| ())
            } else {
                request(
                    core,
                    "delete_chapter",
                    json!({"chapter": format!("Renamed {}", i - 4)}),
                )
                .await
                .map(|_| ())
            }
        }
        _ if i % 20 == 9 => request(core, "undo", json!({})).await.map(|_| ()),
        _ => {
            // The writer rewrites the notes (theirs again: the next agent change waits).
            request(
                core,
                "bible_save",
                json!({"kind": "character", "id": "mara", "fields": {"notes": format!("Afraid of the sea again ({i}).")}}),
            )
            .await
            .map(|_| ())
        }
    }
}

/// Start agent run `run-<i>` on `prompt`; it must end with `status`.
async fn agent_run(core: &Core, i: usize, prompt: String, status: &str) -> Result<(), Value> {
    let run = request(
        core,
        "run",
        json!({"prompt": prompt, "runId": format!("run-{i}"), "newConversation": true}),
    )
    .await?;
    if run["status"] == status {
        Ok(())
    } else {
        Err(run.clone())
    }
}

fn check_tool(result: &Value) -> Result<(), Value> {
    match result["status"].as_str() {
        Some("success") | Some("pending") => Ok(()),
        _ => Err(result.clone()),
    }
}

/// The project as a new core loading `store` sees it (times and the export stamp left out).
pub async fn stored_state(store: Rc<dyn Store>, project: &str) -> Value {
    let (core, background) = core_on(store.clone(), "load");
    if let Err(e) = request(&core, "open_project", json!({"id": project})).await {
        return json!({"unreadable": e});
    }
    // What the opening started (a run resumed after its approval) ends first.
    settle(&background).await;
    let mut doc = request(&core, "export_project", json!({"id": project}))
        .await
        .unwrap_or_else(|e| json!({"export_failed": e}));
    if let Some(object) = doc.as_object_mut() {
        object.remove("exportedMs");
    }
    let approvals = request(&core, "list_approvals", json!({}))
        .await
        .map(|a| json!({"cards": a["approvals"], "pausedRuns": a["pausedRuns"]}))
        .unwrap_or(Value::Null);
    // The runs' own records (a paused run, or one a dead worker was resuming), as stored.
    let runs: Vec<Value> = store
        .get_by_index(Table::Meta, "project", json!(project))
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r["kind"] == "paused_run")
        .map(|r| json!([r["run"], r["state"]]))
        .collect();
    json!({"doc": doc, "approvals": approvals, "runs": runs})
}

/// The reference run: the stored state after setup and after each step (`STEPS + 1` states),
/// and how many commits setup and each step made.
pub async fn reference() -> (Vec<Value>, Vec<u64>) {
    let store = Rc::new(Faulty::new(MemoryStore::new()));
    let (core, _) = core_on(store.clone(), "id");
    let project = setup(&core).await;
    let snapshot = |store: &Faulty<MemoryStore>| {
        let copy = MemoryStore::from_json(store.inner().to_json()).expect("a store copy");
        stored_state(Rc::new(copy), &project)
    };
    let mut states = vec![snapshot(&store).await];
    let mut commits = vec![store.commits()];
    for i in 0..STEPS {
        let before = store.commits();
        step(&core, i)
            .await
            .unwrap_or_else(|e| panic!("reference step {i} failed: {e}"));
        commits.push(store.commits() - before);
        states.push(snapshot(&store).await);
    }
    (states, commits)
}

/// One crash run on `store` (fresh): crash at the `k`-th commit after setup, as `how`.
/// Returns the interrupted step (`None` when the session ended first) and the stored state a
/// new core then sees.
pub async fn crash_run<S, F, Fut>(
    store: Rc<Faulty<S>>,
    k: u64,
    how: Crash,
    load: F,
) -> (Option<usize>, Value)
where
    S: Store + 'static,
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Value>,
{
    let (core, _) = core_on(store.clone(), "id");
    let project = setup(&core).await;
    store.crash_at(k, how);
    let mut interrupted = None;
    for i in 0..STEPS {
        let _ = step(&core, i).await;
        if store.crashed() {
            interrupted = Some(i);
            break;
        }
    }
    drop(core);
    // A new worker on the same storage: its commits go through.
    store.revive();
    (interrupted, load(project).await)
}

/// The crash kinds tried at a crash point.
pub fn kinds(k: u64) -> Vec<Crash> {
    vec![
        Crash::Refuse,
        Crash::Abort((k % 3) as usize),
        Crash::AfterCommit,
    ]
}

/// Check one crash run against the reference: the state is the one before or after the
/// interrupted step.
pub fn check(states: &[Value], k: u64, how: Crash, interrupted: Option<usize>, state: &Value) {
    let step = interrupted.unwrap_or_else(|| panic!("crash point {k} ({how:?}) was never reached"));
    let (before, after) = (&states[step], &states[step + 1]);
    assert!(
        state == before || state == after,
        "crash at commit {k} ({how:?}) in step {step}: the stored state is neither the one before nor the one after the step\nstored: {state}\nbefore: {before}\nafter:  {after}"
    );
}
