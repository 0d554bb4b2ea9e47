//! The crash-and-resend harness: a scripted 50-step session through the core's requests
//! (agent tool calls with `execute`, the writer typing with `apply_user_change`, an approval,
//! chapters added, renamed and deleted, story-bible saves, undo, checkpoints), run on a store
//! that crashes at its k-th commit (`draftsmith::store::faulty`).
//!
//! After each crash a new core loads the store and must see exactly the state before or
//! after the interrupted step (so every acknowledged step is there), with each tool call
//! applied at most once; and when the page resends the interrupted step (a tagged change, a
//! call with its id), the state is exactly the state after it: applied once.
//!
//! The bodies are async and generic over the store, so the native test
//! (`tests/crash_resend.rs`, on `MemoryStore`, every crash point) and the browser test
//! (`tests/web_crash_resend.rs`, on IndexedDB, a sample) share them.

use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::store::faulty::{Crash, Faulty};
use draftsmith::store::Store;
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use serde_json::{json, Value};

/// One step of the session.
#[derive(Debug, Clone)]
pub enum Step {
    /// `create_project` with two chapters.
    Create,
    /// The writer types at the end of a chapter (by number), with a tag.
    Type { chapter: &'static str, text: String },
    /// An agent's tool call, with its call id.
    Agent {
        call: String,
        tool: &'static str,
        args: Value,
    },
    /// The writer saves a story-bible entry.
    BibleSave(Value),
    /// The writer approves a waiting call.
    Approve(String),
    /// Chapter requests.
    AddChapter(&'static str),
    /// Rename the chapter titled `from`.
    RenameChapter {
        from: &'static str,
        to: &'static str,
    },
    /// Delete the chapter titled so.
    DeleteChapter(&'static str),
    /// `undo`.
    Undo,
    /// `close_group`.
    CloseGroup,
    /// `checkpoint`.
    Checkpoint,
}

/// The 50 steps.
pub fn script() -> Vec<Step> {
    let mut steps = vec![Step::Create];
    for r in 0..7 {
        steps.push(Step::Type {
            chapter: "1",
            text: format!(" w{r}"),
        });
        steps.push(Step::Agent {
            call: format!("call-{r}-append"),
            tool: "append_to_manuscript",
            args: json!({"text": format!("[a{r}]"), "chapter": "2"}),
        });
        steps.push(match r {
            0 => Step::BibleSave(
                json!({"kind": "character", "id": "mara", "fields": {"name_src": "Mara", "notes": "Fears the sea."}}),
            ),
            1 => Step::Agent {
                call: "call-notes".into(),
                tool: "character_update_notes",
                args: json!({"character": "mara", "notes": "Loves the sea."}),
            },
            2 => Step::Approve("call-notes".into()),
            3 => Step::AddChapter("Three"),
            4 => Step::RenameChapter {
                from: "Three",
                to: "Third",
            },
            5 => Step::DeleteChapter("Third"),
            _ => Step::Agent {
                call: format!("call-{r}-file"),
                tool: "write_file",
                args: json!({"path": "plans/plan.md", "content": "1. The stair\n2. The lamp"}),
            },
        });
        steps.push(Step::Type {
            chapter: "2",
            text: format!(" v{r}"),
        });
        steps.push(if r % 2 == 0 {
            Step::Undo
        } else {
            Step::CloseGroup
        });
        steps.push(Step::Checkpoint);
        steps.push(Step::Agent {
            call: format!("call-{r}-update"),
            tool: "update_manuscript",
            args: json!({"searchText": format!(" w{r}"), "replacementText": format!(" W{r}"), "chapter": "1"}),
        });
    }
    steps
}

/// A page on a core: requests in, responses out.
pub struct Page {
    pub core: Core,
    pub events: Rc<RecordingSink>,
}

impl Page {
    pub fn on(store: Rc<dyn Store>, ids: &str) -> Self {
        let events = Rc::new(RecordingSink::default());
        let core = Core::new(Env {
            clock: Rc::new(ManualClock::new(1_000)),
            ids: Rc::new(SequentialIds::new(ids)),
            #[cfg(not(target_arch = "wasm32"))]
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            #[cfg(target_arch = "wasm32")]
            decoder: Rc::new(draftsmith::web::JsTextDecoder),
            events: events.clone(),
            store,
        });
        Self { core, events }
    }

    pub async fn send(&self, kind: &str, params: Value) -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        serde_json::from_str(&self.core.handle_text(&text).await).unwrap_or(Value::Null)
    }

    /// The stored state of project `id` as this (fresh) core loads it, comparable across
    /// runs: its export without the export time, the lazily saved UI state and the project
    /// record's update time. `null` when there is no such project.
    pub async fn stored(&self, id: &str) -> Value {
        let opened = self.send("open_project", json!({ "id": id })).await;
        if opened["ok"] != true {
            return Value::Null;
        }
        let mut doc = self.send("export_project", json!({ "id": id })).await["result"].clone();
        doc["exportedMs"] = Value::Null;
        doc["project"]["ui"] = Value::Null;
        doc["project"]["updatedMs"] = Value::Null;
        doc
    }
}

/// The request a step sends, given the page's state now. Steps that carry a tag or a call
/// id (typing, agent calls) can be resent.
pub async fn request(page: &Page, step: &Step) -> (String, Value) {
    match step {
        Step::Create => (
            "create_project".into(),
            json!({"name": "Crash", "chapters": [
                {"title": "One", "text": "It was dark."},
                {"title": "Two", "text": "Morning came."}
            ]}),
        ),
        Step::Type { chapter, text } => {
            let c = page
                .send("get_chapter", json!({ "chapter": chapter }))
                .await;
            let len = c["result"]["text"].as_str().unwrap_or("").chars().count();
            (
                "apply_user_change".into(),
                json!({"chapter": c["result"]["id"], "baseVersion": c["result"]["version"],
                       "changes": [{"retain": len}, {"insert": text}], "tag": format!("tag{text}")}),
            )
        }
        Step::Agent { call, tool, args } => (
            "execute".into(),
            json!({"tool": tool, "args": args, "origin": "agent:scribe", "callId": call}),
        ),
        Step::BibleSave(params) => ("bible_save".into(), params.clone()),
        Step::Approve(call) => (
            "approve".into(),
            json!({"callId": call, "decision": "approve"}),
        ),
        Step::AddChapter(title) => (
            "add_chapter".into(),
            json!({"title": title, "text": "A new chapter."}),
        ),
        Step::RenameChapter { from, to } => (
            "rename_chapter".into(),
            json!({"chapter": from, "title": to}),
        ),
        Step::DeleteChapter(title) => ("delete_chapter".into(), json!({ "chapter": title })),
        Step::Undo => ("undo".into(), json!({})),
        Step::CloseGroup => ("close_group".into(), json!({})),
        Step::Checkpoint => ("checkpoint".into(), json!({})),
    }
}

/// Whether the page may resend a step whose response it lost.
fn resendable(step: &Step) -> bool {
    matches!(step, Step::Type { .. } | Step::Agent { .. })
}

/// The clean run: the stored state before the first step and after each, and the commits
/// made by the end of each step.
pub struct Reference {
    /// The project's id.
    pub project: String,
    /// `states[0]`: before the first step (`null`); `states[i + 1]`: after step `i`.
    pub states: Vec<Value>,
    /// `commits[i]`: commits made by the end of step `i`.
    pub commits: Vec<u64>,
}

impl Reference {
    /// The step during which commit `k` (counted from 1) happens.
    pub fn step_of(&self, k: u64) -> usize {
        self.commits
            .iter()
            .position(|c| *c >= k)
            .unwrap_or(self.commits.len())
    }

    /// How many commits the session makes.
    pub fn total(&self) -> u64 {
        self.commits.last().copied().unwrap_or(0)
    }
}

/// Run the script on an empty store, reading the stored state after every step with a
/// fresh core.
pub async fn reference<S: Store + 'static>(store: Rc<Faulty<S>>) -> Reference {
    let page = Page::on(store.clone(), "c");
    let mut states = vec![Value::Null];
    let mut commits = Vec::new();
    let mut project = String::new();
    for (i, step) in script().iter().enumerate() {
        let (kind, params) = request(&page, step).await;
        let r = page.send(&kind, params.clone()).await;
        assert_eq!(r["ok"], true, "step {i} {kind} {params}: {r}");
        if let Step::Create = step {
            project = r["result"]["id"].as_str().unwrap_or("").to_string();
        }
        if let Step::Agent { .. } = step {
            let waits = r["result"]["data"]["code"] == "approval_required";
            assert!(
                r["result"]["status"] == "success" || waits,
                "step {i} {params}: {r}"
            );
        }
        assert!(
            page.events.take().iter().all(|e| e.kind != "storage_error"),
            "step {i}"
        );
        commits.push(store.commits());
        let state = Page::on(store.clone(), &format!("ref{i}"))
            .stored(&project)
            .await;
        states.push(state);
    }
    Reference {
        project,
        states,
        commits,
    }
}

/// The state without what the core generates anew when a step is run again (history entry
/// and group ids), for comparing a resent step with the clean run.
fn normalized(mut state: Value) -> Value {
    fn entry(e: &mut Value) {
        if let Some(map) = e.as_object_mut() {
            map.remove("id");
            map.remove("group");
            map.remove("seq");
            let reverted = map.get("reverted_by").is_some_and(|v| !v.is_null());
            map.insert("reverted_by".into(), json!(reverted));
        }
    }
    if let Some(entries) = state["history"].as_array_mut() {
        entries.iter_mut().for_each(entry);
    }
    if let Some(runs) = state["historyState"]["redo"].as_array_mut() {
        runs.iter_mut()
            .filter_map(Value::as_array_mut)
            .flatten()
            .for_each(entry);
    }
    let open = !state["historyState"]["open"].is_null();
    state["historyState"]["open"] = json!(open);
    state
}

/// What went wrong at one crash point.
pub type Failure = String;

/// Crash the session at commit `k` (counted from 1) as `how`, and check what a new core
/// loads (see the module docs). `store` must be empty.
pub async fn crash_at<S: Store + 'static>(
    store: Rc<Faulty<S>>,
    reference: &Reference,
    k: u64,
    how: Crash,
) -> Result<(), Failure> {
    let steps = script();
    let page = Page::on(store.clone(), "c");
    store.crash_at(k, how);
    let mut crashed = None;
    for (i, step) in steps.iter().enumerate() {
        let (kind, params) = request(&page, step).await;
        let r = page.send(&kind, params.clone()).await;
        if store.crashed() {
            crashed = Some((i, kind, params));
            break;
        }
        // Every step before the crash is acknowledged: its response and no storage error.
        if r["ok"] != true || page.events.take().iter().any(|e| e.kind == "storage_error") {
            return Err(format!(
                "k={k} {how:?}: step {i} ({kind}) failed before the crash: {r}"
            ));
        }
    }
    let Some((i, kind, params)) = crashed else {
        return Err(format!("k={k} {how:?}: no crash happened"));
    };
    if i != reference.step_of(k) {
        return Err(format!(
            "k={k} {how:?}: crashed in step {i}, the clean run made commit {k} in step {}",
            reference.step_of(k)
        ));
    }
    drop(page);

    // A new process on the same storage.
    store.revive();
    let page = Page::on(store.clone(), "after");
    let loaded = page.stored(&reference.project).await;
    let (before, after) = (&reference.states[i], &reference.states[i + 1]);
    if loaded != *before && loaded != *after {
        return Err(format!(
            "k={k} {how:?}: after a crash in step {i} ({kind} {params}) the store holds neither the state before nor after it:\n{loaded:#}\nbefore:\n{before:#}\nafter:\n{after:#}"
        ));
    }
    at_most_once(&loaded).map_err(|e| format!("k={k} {how:?}: step {i}: {e}"))?;

    // The page resends the interrupted step (same tag, same call id): applied once.
    let step = &steps[i];
    if resendable(step) {
        let r = page.send(&kind, params.clone()).await;
        if r["ok"] != true {
            return Err(format!("k={k} {how:?}: the resent step {i} failed: {r}"));
        }
        let fresh = Page::on(store.clone(), "check");
        let now = fresh.stored(&reference.project).await;
        if normalized(now.clone()) != normalized(after.clone()) {
            return Err(format!(
                "k={k} {how:?}: after resending step {i} ({kind} {params}) the state is not the state after it:\n{now:#}\nexpected:\n{after:#}"
            ));
        }
        at_most_once(&now).map_err(|e| format!("k={k} {how:?}: resent step {i}: {e}"))?;
    }
    Ok(())
}

/// Each tool call in the history at most once, each agent's appended marker at most once.
fn at_most_once(state: &Value) -> Result<(), String> {
    let mut calls = std::collections::BTreeSet::new();
    let entries = state["history"].as_array().cloned().unwrap_or_default();
    let redo: Vec<Value> = state["historyState"]["redo"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_array)
        .flatten()
        .cloned()
        .collect();
    for entry in entries.iter().chain(redo.iter()) {
        if let Some(call) = entry["tool_call_id"].as_str() {
            if !calls.insert(call.to_string()) {
                return Err(format!("tool call {call} applied twice"));
            }
        }
    }
    let texts: String = state["chapters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect();
    for r in 0..7 {
        let marker = format!("[a{r}]");
        if texts.matches(&marker).count() > 1 {
            return Err(format!("{marker} appended twice: {texts}"));
        }
    }
    Ok(())
}
