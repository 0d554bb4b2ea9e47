//! The crash-consistency harness (issue 15), shared by the native test (`tests/crash.rs`, on
//! the in-memory store, every crash point) and the browser test (`tests/web_crash.rs`, on
//! IndexedDB, a sample of crash points).
//!
//! A scripted 50-step session goes through the core's requests: agent tool calls, the
//! writer's typing, chapter adds, renames, moves and deletes, story-bible saves, an agent's
//! change that waits for approval and the writer's approval, memory notes, undo. The
//! reference run (no failures) records the stored state after every step, as a new core
//! loading the store sees it. A crash run makes the store die at its k-th commit (refused,
//! aborted half-way, or committed but unanswered; every later commit fails, as if the
//! process had died there), stops at the step that was interrupted, and loads the store in a
//! new core: it must see exactly the state before or after that step. Every acknowledged
//! change is then present, and each tool call is applied at most once (the states are
//! compared whole: chapters, history, memory, story bible, files).

use std::future::Future;
use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::store::faulty::{Crash, Faulty};
use draftsmith::store::{MemoryStore, Store};
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use serde_json::{json, Value};

/// Steps in the session (after creating the project).
pub const STEPS: usize = 50;

const CLOCK_MS: u64 = 1_700_000_000_000;

/// A core on `store` with the harness's clock and ids (the same in every run).
pub fn core_on(store: Rc<dyn Store>, ids: &str) -> Core {
    Core::new(Env {
        clock: Rc::new(ManualClock::new(CLOCK_MS)),
        ids: Rc::new(SequentialIds::new(ids)),
        events: Rc::new(RecordingSink::default()),
        store,
    })
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
    project["id"].as_str().unwrap().to_string()
}

/// Run step `i` of the session (reading what it needs first, as a page or an agent would).
/// Errors of the step's requests are returned, not raised: a crashed store makes them fail.
pub async fn step(core: &Core, i: usize) -> Result<(), Value> {
    let agent = |name: &str| format!("agent:{name}");
    match i % 10 {
        0 => {
            let result = request(
                core,
                "execute",
                json!({"tool": "append_to_manuscript", "args": {"text": format!("Step {i}.")},
                       "origin": agent("drafter"), "callId": format!("call-{i}")}),
            )
            .await?;
            check_tool(&result)
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
        6 => {
            // An agent overwrites the writer's notes: it waits for approval.
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

fn check_tool(result: &Value) -> Result<(), Value> {
    match result["status"].as_str() {
        Some("success") | Some("pending") => Ok(()),
        _ => Err(result.clone()),
    }
}

/// The project as a new core loading `store` sees it (times and the export stamp left out).
pub async fn stored_state(store: Rc<dyn Store>, project: &str) -> Value {
    let core = core_on(store, "load");
    if let Err(e) = request(&core, "open_project", json!({"id": project})).await {
        return json!({"unreadable": e});
    }
    let mut doc = request(&core, "export_project", json!({"id": project}))
        .await
        .unwrap_or_else(|e| json!({"export_failed": e}));
    if let Some(object) = doc.as_object_mut() {
        object.remove("exportedMs");
    }
    let approvals = request(&core, "list_approvals", json!({}))
        .await
        .map(|a| a["approvals"].clone())
        .unwrap_or(Value::Null);
    json!({"doc": doc, "approvals": approvals})
}

/// The reference run: the stored state after setup and after each step (`STEPS + 1` states),
/// and how many commits setup and each step made.
pub async fn reference() -> (Vec<Value>, Vec<u64>) {
    let store = Rc::new(Faulty::new(MemoryStore::new()));
    let core = core_on(store.clone(), "id");
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
    let core = core_on(store.clone(), "id");
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
