//! Background jobs and rentl's pipelines: single-purpose subagents run by a deterministic
//! pipeline (no model decides the order) over one shared project, several at once, as a
//! persisted job that survives a new worker and never applies a unit twice.
//!
//! The scripted model reads only its request (system prompt, tools offered, the task message
//! and the tool results of the conversation), as a real model would: see [`rentl_brain`].
#![cfg(not(target_arch = "wasm32"))]

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::llm::client::{HttpResponse, LlmTransport, Scripted, TransportError};
use draftsmith::llm::HttpRequest;
use draftsmith::store::{MemoryStore, Store, Table};
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures::executor::{block_on, LocalPool};
use futures::future::{self, LocalBoxFuture};
use futures::task::LocalSpawnExt;
use futures::FutureExt;
use serde_json::{json, Value};

mod common;
use common::page::{calls, says, tool_results, NeverSleeper, YieldNow};

// ------------------------------------------------------------------------------------
// A model playing rentl's subagents from what each request says
// ------------------------------------------------------------------------------------

fn task(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

fn line_of(text: &str, label: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or("")
        .trim()
        .to_string()
}

fn offered(body: &Value, tool: &str) -> bool {
    body["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["function"]["name"] == tool))
}

fn n_calls(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["tool_calls"].as_array().map_or(0, Vec::len))
        .sum()
}

/// The scene's lines as the overview showed them.
fn excerpt_lines(overview: &Value) -> Vec<String> {
    overview["data"]["excerpt"]
        .as_str()
        .unwrap_or("")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// Plays every rentl subagent: the agent is the one the task message names, the target is the
/// task's `Scene:`/`Route:` line; it reads first, then writes what it read, then stops.
fn rentl_brain(body: &Value) -> Scripted {
    let t = task(body);
    let agent = line_of(&t, "Task for ");
    let agent = agent.split(':').next().unwrap_or("").to_string();
    let scene = line_of(&t, "Scene: ");
    let id = format!("call_{}", n_calls(body) + 1);
    let done = tool_results(body);
    let last = done.last().map(|(_, r)| r.clone()).unwrap_or(Value::Null);
    if last["status"] == "error" {
        return says(&format!(
            "Stopped: {}",
            last["data"]["message"]
                .as_str()
                .unwrap_or("the call failed")
        ));
    }
    if !scene.is_empty() && done.is_empty() && offered(body, "scene_read_overview") {
        return calls(&id, "scene_read_overview", json!({"scene": scene}));
    }
    let overview = done
        .iter()
        .find(|(n, _)| n == "scene_read_overview")
        .map(|(_, r)| r.clone())
        .unwrap_or(Value::Null);
    let wrote = done.len() > 1;
    match agent.as_str() {
        "scene_summary_detailer" if !wrote => {
            let first = excerpt_lines(&overview)
                .first()
                .cloned()
                .unwrap_or_default();
            let summary = first
                .split_inclusive('.')
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            calls(
                &id,
                "scene_update_summary",
                json!({"scene": scene, "summary": summary}),
            )
        }
        "scene_tag_detailer" if !wrote => {
            let text = excerpt_lines(&overview).join(" ").to_lowercase();
            let mut tags: Vec<String> = Vec::new();
            for w in text.split(|c: char| !c.is_alphabetic()) {
                if w.len() > 5 && !tags.iter().any(|t| t == w) && tags.len() < 3 {
                    tags.push(w.to_string());
                }
            }
            calls(
                &id,
                "scene_update_tags",
                json!({"scene": scene, "tags": tags}),
            )
        }
        "scene_primary_character_detailer" if !wrote => calls(
            &id,
            "scene_update_primary_characters",
            json!({"scene": scene, "characters": overview["data"]["mentionedCharacters"]}),
        ),
        "scene_location_detailer" if !wrote => calls(
            &id,
            "scene_update_locations",
            json!({"scene": scene, "locations": overview["data"]["mentionedLocations"]}),
        ),
        "scene_translator" => {
            let lines = excerpt_lines(&overview);
            let made = done
                .iter()
                .filter(|(n, _)| n == "translation_create_line")
                .count();
            match lines.get(made) {
                Some(line) => calls(
                    &id,
                    "translation_create_line",
                    json!({"scene": scene, "line": made + 1, "target": format!("[fr] {line}")}),
                ),
                None => says("Every line is translated."),
            }
        }
        _ => says("Done."),
    }
}

// ------------------------------------------------------------------------------------
// A worker: a core with a background spawner, a model, and a store
// ------------------------------------------------------------------------------------

/// A model transport that yields like a network, answers with a brain, and (to simulate a
/// worker killed mid-job) can stop answering after a number of requests.
struct Net {
    brain: Rc<dyn Fn(&Value) -> Scripted>,
    /// How long (in yields) the model takes to answer a request.
    latency: Rc<dyn Fn(&Value) -> usize>,
    /// Answer at most this many requests; later ones never answer.
    budget: Cell<usize>,
    bodies: RefCell<Vec<Value>>,
    /// Requests being answered now, and the most at once.
    inflight: Cell<usize>,
    most: Cell<usize>,
}

impl LlmTransport for Net {
    fn send<'a>(
        &'a self,
        request: &'a HttpRequest,
    ) -> LocalBoxFuture<'a, Result<HttpResponse, TransportError>> {
        Box::pin(async move {
            if self.budget.get() == 0 {
                return future::pending().await;
            }
            self.budget.set(self.budget.get() - 1);
            self.inflight.set(self.inflight.get() + 1);
            self.most.set(self.most.get().max(self.inflight.get()));
            let body: Value = serde_json::from_str(&request.body).unwrap_or(Value::Null);
            for _ in 0..(self.latency)(&body) {
                YieldNow(false).await;
            }
            self.inflight.set(self.inflight.get() - 1);
            self.bodies.borrow_mut().push(body.clone());
            let answer = (self.brain)(&body);
            let once = draftsmith::llm::client::ScriptedTransport::new(vec![answer]);
            once.send(request)
                .now_or_never()
                .unwrap_or_else(|| Err(TransportError::Network("no answer".into())))
        })
    }
}

struct Worker {
    core: Core,
    pool: RefCell<LocalPool>,
    events: Rc<RecordingSink>,
    store: Rc<MemoryStore>,
    net: Rc<Net>,
}

impl Worker {
    /// A worker on `store` whose model answers `budget` requests; `ids` prefixes its ids (a
    /// new worker must not reuse an earlier one's, as real random ids never do).
    fn new(store: Rc<MemoryStore>, budget: usize) -> Self {
        Self::named(store, budget, "id")
    }

    fn named(store: Rc<MemoryStore>, budget: usize, ids: &str) -> Self {
        Self::with_brain(store, budget, ids, Rc::new(rentl_brain))
    }

    fn with_brain(
        store: Rc<MemoryStore>,
        budget: usize,
        ids: &str,
        brain: Rc<dyn Fn(&Value) -> Scripted>,
    ) -> Self {
        Self::with_model(store, budget, ids, brain, Rc::new(|_| 2))
    }

    /// A worker whose model answers with `brain`, taking `latency(body)` yields per request.
    fn with_model(
        store: Rc<MemoryStore>,
        budget: usize,
        ids: &str,
        brain: Rc<dyn Fn(&Value) -> Scripted>,
        latency: Rc<dyn Fn(&Value) -> usize>,
    ) -> Self {
        let pool = LocalPool::new();
        let spawner = pool.spawner();
        let events = Rc::new(RecordingSink::default());
        let net = Rc::new(Net {
            brain,
            latency,
            budget: Cell::new(budget),
            bodies: RefCell::default(),
            inflight: Cell::new(0),
            most: Cell::new(0),
        });
        let core = Core::new(Env {
            clock: Rc::new(ManualClock::new(1_700_000_000_000)),
            ids: Rc::new(SequentialIds::new(ids)),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: events.clone(),
            store: store.clone(),
        })
        .with_llm(net.clone(), Rc::new(NeverSleeper))
        .with_spawner(Rc::new(move |f| {
            let _ = spawner.spawn_local(f);
        }));
        Self {
            core,
            pool: RefCell::new(pool),
            events,
            store,
            net,
        }
    }

    fn send(&self, kind: &str, params: Value) -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        let answer = self
            .pool
            .borrow_mut()
            .run_until(self.core.handle_text(&text));
        serde_json::from_str(&answer).unwrap()
    }

    fn ok(&self, kind: &str, params: Value) -> Value {
        let r = self.send(kind, params.clone());
        assert_eq!(r["ok"], true, "{kind} {params} -> {r}");
        r["result"].clone()
    }

    fn err(&self, kind: &str, params: Value) -> String {
        let r = self.send(kind, params.clone());
        assert_eq!(r["ok"], false, "{kind} {params} -> {r}");
        r["error"]["message"].as_str().unwrap().to_string()
    }

    /// Let background work go on until it cannot.
    fn settle(&self) {
        self.pool.borrow_mut().run_until_stalled();
    }

    fn scene(&self, id: &str) -> Value {
        let list = self.ok("bible_list", json!({"kind": "scene"}));
        list["kinds"]["scene"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .cloned()
            .unwrap_or(Value::Null)
    }

    fn configure(&self) {
        self.ok(
            "set_settings",
            json!({"provider": "openai", "baseUrl": "http://model.test/v1", "model": "m", "apiKey": "sk-test-123456"}),
        );
    }
}

const CHARACTERS: [&str; 3] = ["Mara", "Tomas", "Ilse"];
const PLACES: [&str; 3] = ["Lighthouse", "Harbor", "Chapel"];

/// A project of 12 scenes (one paragraph of two lines each), three characters, three
/// locations and a glossary entry, written by the writer. Scene `s5`'s summary is the
/// writer's. Returns the scene ids.
fn fixture(w: &Worker) -> Vec<String> {
    let mut text = String::new();
    let mut spans = Vec::new();
    for i in 0..12 {
        let start = text.chars().count();
        let who = CHARACTERS[i % 3];
        let place = PLACES[i % 3];
        text.push_str(&format!(
            "{who} walked to the {place} at dawn number {n}. The Lantern Oath weighed on everyone.\nThe wind answered softly.\n",
            n = i + 1
        ));
        spans.push((start, text.chars().count()));
    }
    let project = w.ok(
        "create_project",
        json!({"name": "Lanterns", "chapters": [{"title": "One", "text": text}]}),
    );
    let chapter = project["chapters"][0]["id"].as_str().unwrap().to_string();
    for name in CHARACTERS {
        w.ok(
            "bible_save",
            json!({"kind": "character", "fields": {"name_src": name}}),
        );
    }
    for name in PLACES {
        w.ok(
            "bible_save",
            json!({"kind": "location", "fields": {"name_src": name}}),
        );
    }
    w.ok(
        "bible_save",
        json!({"kind": "glossary", "fields": {"term_src": "Lantern Oath", "notes": "the keepers' vow"}}),
    );
    let mut ids = Vec::new();
    for (i, (start, end)) in spans.into_iter().enumerate() {
        let id = format!("s{}", i + 1);
        let mut fields = json!({"chapter": chapter, "span": {"start": start, "end": end}});
        if id == "s5" {
            fields["summary"] = json!("The writer's own summary of scene five.");
        }
        w.ok(
            "bible_save",
            json!({"kind": "scene", "id": id, "fields": fields}),
        );
        ids.push(id);
    }
    w.ok(
        "bible_save",
        json!({"kind": "route", "id": "main", "fields": {"scene_ids": ids.clone()}}),
    );
    ids
}

fn audit(store: &MemoryStore) -> Vec<Value> {
    block_on(store.get_all(Table::Audit)).unwrap()
}

// ------------------------------------------------------------------------------------
// The acceptance test of issue 17
// ------------------------------------------------------------------------------------

#[test]
fn the_context_pipeline_fills_every_scene_with_three_subagents_at_once() {
    let w = Worker::new(Rc::new(MemoryStore::new()), usize::MAX);
    w.configure();
    let scenes = fixture(&w);
    let job = w.ok(
        "start_job",
        json!({"kind": "pipeline", "phases": ["context"], "concurrency": 3}),
    );
    let job_id = job["id"].as_str().unwrap().to_string();
    assert_eq!(job["progress"]["total"], 12 * 5 + 1 + 3);
    w.settle();

    // The writer's summary of s5 is not overwritten: its unit waits for the writer.
    let status = w.ok("job_status", json!({"job": job_id}));
    assert_eq!(status["state"], "waiting_approval", "{status}");
    let waiting: Vec<&Value> = status["units"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["state"] != "done")
        .collect();
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    assert_eq!(waiting[0]["id"], "context:scene_summary_detailer:s5");
    assert_eq!(waiting[0]["state"], "waiting_approval");
    let approvals = w.ok("list_approvals", json!({}));
    let pending = approvals["approvals"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{approvals}");
    assert_eq!(pending[0]["tool"], "scene_update_summary");
    assert_eq!(
        w.scene("s5")["summary"],
        "The writer's own summary of scene five."
    );

    // Every other scene's fields are filled, each with its subagent's origin.
    let date = "2023-11-14";
    for id in &scenes {
        let scene = w.scene(id);
        for (field, agent) in [
            ("summary", "scene_summary_detailer"),
            ("tags", "scene_tag_detailer"),
            ("primary_characters", "scene_primary_character_detailer"),
            ("locations", "scene_location_detailer"),
        ] {
            if id == "s5" && field == "summary" {
                assert_eq!(scene["summary_origin"], "human");
                continue;
            }
            assert!(
                scene[field].as_str().is_some_and(|s| !s.is_empty())
                    || scene[field].as_array().is_some_and(|a| !a.is_empty()),
                "{id}.{field} is empty: {scene}"
            );
            assert_eq!(
                scene[format!("{field}_origin")],
                format!("agent:{agent}:{date}"),
                "{id}.{field}: {scene}"
            );
        }
    }
    // Three at once, never more.
    assert_eq!(
        w.net.most.get(),
        3,
        "the model saw {} requests at once",
        w.net.most.get()
    );
    let most_current = w
        .events
        .peek()
        .iter()
        .filter(|e| e.kind == "job_progress")
        .map(|e| {
            e.data["job"]["progress"]["current"]
                .as_array()
                .map_or(0, Vec::len)
        })
        .max()
        .unwrap();
    assert_eq!(most_current, 3);

    // Each subagent called only the tools of its toolbox (from the audit log).
    let agents = w.ok("list_agents", json!({}));
    let toolbox: BTreeMap<String, BTreeSet<String>> = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap().to_string(),
                a["toolbox"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect();
    let mut by_agent: BTreeMap<String, usize> = BTreeMap::new();
    for record in audit(&w.store) {
        let origin = record["origin"].as_str().unwrap();
        let Some(agent) = origin.strip_prefix("agent:") else {
            continue;
        };
        let tool = record["tool"].as_str().unwrap();
        assert!(
            toolbox[agent].contains(tool),
            "{agent} called {tool}, outside its toolbox"
        );
        *by_agent.entry(agent.to_string()).or_default() += 1;
    }
    for agent in [
        "scene_summary_detailer",
        "scene_tag_detailer",
        "scene_primary_character_detailer",
        "scene_location_detailer",
    ] {
        assert_eq!(by_agent[agent], 24, "{agent}: a read and a write per scene");
    }

    // The writer declines: the unit ends, the job is done, the summary stays the writer's.
    let call = pending[0]["callId"].as_str().unwrap().to_string();
    w.ok("approve", json!({"callId": call, "decision": "reject"}));
    w.settle();
    let status = w.ok("job_status", json!({"job": job_id}));
    assert_eq!(status["state"], "done", "{status}");
    assert_eq!(status["progress"]["done"], 64);
    assert_eq!(
        w.scene("s5")["summary"],
        "The writer's own summary of scene five."
    );
    let finished: Vec<Value> = w
        .events
        .peek()
        .into_iter()
        .filter(|e| e.kind == "job_finished")
        .map(|e| e.data)
        .collect();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["job"]["state"], "done");
    // Only the unit that paused left a paused-run record, closed now.
    let paused: Vec<Value> = block_on(w.store.get_all(Table::Meta))
        .unwrap()
        .into_iter()
        .filter(|r| r["kind"] == "paused_run")
        .collect();
    assert_eq!(paused.len(), 1, "{paused:?}");
    assert_eq!(paused[0]["state"], "ended");
    // Opening the project again does not start the finished job anew.
    let project = w.ok("list_projects", json!({}))["current"].clone();
    w.ok("open_project", json!({"id": project}));
    w.settle();
    assert_eq!(
        w.events
            .peek()
            .iter()
            .filter(|e| e.kind == "job_finished")
            .count(),
        1
    );
    // A unit's transcript can be read back.
    let unit = w.ok(
        "job_unit",
        json!({"job": job_id, "unit": "context:scene_tag_detailer:s3"}),
    );
    let transcript = unit["transcript"].as_array().unwrap();
    assert_eq!(transcript[0]["role"], "user");
    assert!(transcript[0]["text"]
        .as_str()
        .unwrap()
        .contains("Scene: s3"));
    assert_eq!(transcript[1]["toolCalls"][0]["name"], "scene_read_overview");
}

#[test]
fn a_new_worker_resumes_the_translation_phase_and_translates_every_scene_once() {
    let store = Rc::new(MemoryStore::new());
    let project;
    let job_id;
    {
        // This worker answers 12 model requests, then its network hangs: it dies mid-phase,
        // with two units running that have each written a line.
        let w = Worker::new(store.clone(), 12);
        w.configure();
        fixture(&w);
        project = w.ok("list_projects", json!({}))["current"]
            .as_str()
            .unwrap()
            .to_string();
        let job = w.ok(
            "start_job",
            json!({"kind": "pipeline", "phases": ["translation"], "concurrency": 2}),
        );
        job_id = job["id"].as_str().unwrap().to_string();
        w.settle();
        let status = w.ok("job_status", json!({"job": job_id}));
        let done = status["progress"]["done"].as_u64().unwrap();
        assert!((1..12).contains(&done), "mid-phase: {status}");
        assert_eq!(status["progress"]["current"].as_array().unwrap().len(), 2);
        // Everything stored so far belongs to finished units only: the units that were
        // running saved none of their lines.
        let stored = block_on(store.get_all(Table::Bible)).unwrap();
        let translated: BTreeSet<String> = stored
            .iter()
            .filter(|r| r["entity"]["kind"] == "translation")
            .map(|r| {
                r["entity"]["id"]
                    .as_str()
                    .unwrap()
                    .split(':')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        let done_units: BTreeSet<String> = status["units"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| u["state"] == "done")
            .map(|u| u["target"]["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(translated, done_units);
        let in_memory = w.ok("bible_list", json!({"kind": "translation"}))["kinds"]["translation"]
            .as_array()
            .unwrap()
            .len();
        assert_eq!(
            in_memory,
            translated.len() * 2 + 2,
            "the running units wrote a line each"
        );
        // The worker is killed: its pool and its in-memory state are gone.
    }
    let w = Worker::named(store.clone(), usize::MAX, "second");
    w.configure();
    w.ok("open_project", json!({"id": project}));
    w.settle();
    let status = w.ok("job_status", json!({"job": job_id}));
    assert_eq!(status["state"], "done", "{status}");
    // Every line of every scene translated exactly once: one successful call per line, no
    // failed one (a repeated unit would find its lines there already).
    let creates: Vec<Value> = audit(&store)
        .into_iter()
        .filter(|r| r["tool"] == "translation_create_line")
        .collect();
    assert_eq!(creates.len(), 24, "12 scenes of 2 lines");
    assert!(creates.iter().all(|r| r["status"] == "success"));
    let stored = block_on(store.get_all(Table::Bible)).unwrap();
    assert_eq!(
        stored
            .iter()
            .filter(|r| r["entity"]["kind"] == "translation")
            .count(),
        24
    );
}

#[test]
fn the_writer_chats_while_a_job_runs_and_a_job_can_be_cancelled() {
    let w = Worker::new(Rc::new(MemoryStore::new()), usize::MAX);
    w.configure();
    fixture(&w);
    let job = w.ok(
        "start_job",
        json!({"kind": "pipeline", "phases": ["translation", "editing"], "concurrency": 1}),
    );
    let job_id = job["id"].as_str().unwrap().to_string();
    // A chat run while the job runs (runs no longer exclude each other in a project).
    let run = w.send("run", json!({"prompt": "Say hello."}));
    assert_eq!(run["ok"], true, "{run}");
    let status = w.ok("job_status", json!({"job": job_id}));
    assert!(
        status["progress"]["done"].as_u64().unwrap() < 48,
        "{status}"
    );
    let cancelled = w.ok("cancel_job", json!({"job": job_id}));
    assert_eq!(cancelled["id"], job_id);
    w.settle();
    let status = w.ok("job_status", json!({"job": job_id}));
    assert_eq!(status["state"], "cancelled", "{status}");
    let done = status["progress"]["done"].as_u64().unwrap();
    assert!(done < 48);
    assert!(status["units"]
        .as_array()
        .unwrap()
        .iter()
        .all(|u| u["state"] == "done" || u["state"] == "cancelled"));
    let listed = w.ok("list_jobs", json!({}));
    assert_eq!(listed["jobs"][0]["state"], "cancelled");
    // Bad input changes nothing.
    assert!(w
        .err(
            "start_job",
            json!({"kind": "pipeline", "phases": ["proofreading"]})
        )
        .contains("no phase 'proofreading'"));
    assert!(w
        .err("start_job", json!({"kind": "pipeline", "concurrency": 0}))
        .contains("concurrency"));
    assert!(w
        .err("job_status", json!({"job": "nope"}))
        .contains("no job 'nope'"));
    assert_eq!(
        w.ok("list_jobs", json!({}))["jobs"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// [`rentl_brain`], except that the summary detailer, once its summary is written, tries to
/// write it again with `overwrite: true` (as an eager model might).
fn eager_brain(body: &Value) -> Scripted {
    let t = task(body);
    let done = tool_results(body);
    let writes = done
        .iter()
        .filter(|(n, r)| n == "scene_update_summary" && r["status"] == "success")
        .count();
    let tries = done
        .iter()
        .filter(|(n, _)| n == "scene_update_summary")
        .count();
    if t.starts_with("Task for scene_summary_detailer") && writes == 1 && tries == 1 {
        let scene = line_of(&t, "Scene: ");
        return calls(
            &format!("call_{}", n_calls(body) + 1),
            "scene_update_summary",
            json!({"scene": scene, "summary": "Rewritten.", "overwrite": true}),
        );
    }
    rentl_brain(body)
}

#[test]
fn approvals_can_be_set_per_agent_and_a_job_overwrites_only_when_allowed() {
    let w = Worker::with_brain(
        Rc::new(MemoryStore::new()),
        usize::MAX,
        "id",
        Rc::new(eager_brain),
    );
    w.configure();
    fixture(&w);
    // The writer wants to see every tag the tag detailer sets, and only its.
    w.ok(
        "set_settings",
        json!({"approvalPolicies": {"scene_tag_detailer/scene_update_tags": "strict"}}),
    );
    assert!(w
        .err(
            "set_settings",
            json!({"approvalPolicies": {"scene tag/scene_update_tags": "strict"}})
        )
        .contains("agent name"));
    let job = w.ok(
        "start_job",
        json!({"kind": "pipeline", "phases": ["context"], "scope": {"scenes": ["s1", "s2"]}}),
    );
    let job_id = job["id"].as_str().unwrap().to_string();
    w.settle();
    let status = w.ok("job_status", json!({"job": job_id}));
    assert_eq!(status["state"], "waiting_approval", "{status}");
    let approvals = w.ok("list_approvals", json!({}));
    let tools: Vec<&str> = approvals["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["scene_update_tags", "scene_update_tags"]);
    assert!(w.scene("s1")["tags"].is_null());
    // Not allowed to overwrite: the second write of a summary in one run is refused.
    assert_eq!(
        w.scene("s1")["summary"],
        "Mara walked to the Lighthouse at dawn number 1."
    );
    for approval in approvals["approvals"].as_array().unwrap() {
        let decided = w.ok(
            "approve",
            json!({"callId": approval["callId"], "decision": "approve"}),
        );
        // Other fields of the scene changed meanwhile (other subagents): the approval of the
        // tags still holds.
        assert_eq!(decided["result"]["status"], "success", "{decided}");
    }
    w.settle();
    let status = w.ok("job_status", json!({"job": job_id}));
    assert_eq!(status["state"], "done", "{status}");
    assert_eq!(
        w.scene("s1")["tags_origin"],
        "agent:scene_tag_detailer:2023-11-14"
    );

    // Allowed to overwrite: the second write goes through.
    w.ok(
        "set_settings",
        json!({"approvalPolicies": {"scene_tag_detailer/scene_update_tags": null}}),
    );
    let job = w.ok(
        "start_job",
        json!({"kind": "pipeline", "phases": ["context"], "scope": {"scenes": ["s3"]}, "allowOverwrite": true}),
    );
    w.settle();
    let status = w.ok("job_status", json!({"job": job["id"]}));
    assert_eq!(status["state"], "done", "{status}");
    assert_eq!(w.scene("s3")["summary"], "Rewritten.");

    // An agent's spec can ask for approval of a tool whatever the policies (`interruptOn`).
    w.ok(
        "define_agent",
        json!({"agent": {"name": "tagger", "description": "Tags scenes.",
            "systemPrompt": "You tag the scene the task names.", "talksToWriter": true,
            "tools": ["scene_read_overview", "scene_update_tags"],
            "interruptOn": ["scene_update_tags"]}}),
    );
    let run = w.ok(
        "run",
        json!({"agent": "tagger", "prompt": "Task for scene_tag_detailer: tag it.\nScene: s4"}),
    );
    assert_eq!(run["status"], "paused", "{run}");
    assert_eq!(run["pending"][0]["tool"], "scene_update_tags");
    assert!(w.scene("s4")["tags"].is_null());
}

#[test]
fn the_translator_gets_translation_update_line_only_when_the_job_allows_overwrite() {
    let w = Worker::new(Rc::new(MemoryStore::new()), usize::MAX);
    w.configure();
    fixture(&w);
    // The tools each translator request offered, by whether its job allowed overwriting.
    let offered_by = |allow: bool| -> Vec<Vec<String>> {
        w.net.bodies.borrow_mut().clear();
        let job = w.ok(
            "start_job",
            json!({"kind": "pipeline", "phases": ["translation"], "scope": {"scenes": ["s1"]}, "allowOverwrite": allow}),
        );
        w.settle();
        let status = w.ok("job_status", json!({"job": job["id"]}));
        assert_eq!(status["state"], "done", "{status}");
        let bodies = w.net.bodies.borrow();
        let translator: Vec<&Value> = bodies
            .iter()
            .filter(|b| task(b).starts_with("Task for scene_translator"))
            .collect();
        assert!(!translator.is_empty(), "the translator ran");
        translator
            .iter()
            .map(|b| {
                b["tools"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                    .collect()
            })
            .collect()
    };
    let toolbox = draftsmith::agent::Catalog::new(Vec::new())
        .get("scene_translator")
        .unwrap()
        .tools
        .clone();
    assert!(toolbox.contains(&"translation_update_line".to_string()));
    let without: Vec<String> = toolbox
        .iter()
        .filter(|t| *t != "translation_update_line")
        .cloned()
        .collect();
    for tools in offered_by(false) {
        assert_eq!(tools, without, "overwrite off");
    }
    for tools in offered_by(true) {
        assert_eq!(tools, toolbox, "overwrite on");
    }
}

/// A model that plans when it is offered the planning tools: it writes a to-do list, tags
/// the scene its task names, reads the list back and marks every item done, then reports
/// the list as the last write_todos result shows it.
fn planning_brain(body: &Value) -> Scripted {
    let id = format!("call_{}", n_calls(body) + 1);
    // The conversation of this prompt: from its last user message on (a chat run carries
    // the turns before it).
    let messages = body["messages"].as_array().unwrap();
    let last_user = messages
        .iter()
        .rposition(|m| m["role"] == "user")
        .unwrap_or(0);
    let mut turn = body.clone();
    turn["messages"] = json!(messages[last_user..]);
    let body = &turn;
    let t = task(body);
    let scene = line_of(&t, "Scene: ");
    if !offered(body, "write_todos") || !offered(body, "read_todos") {
        return says("No planning tools.");
    }
    let done = tool_results(body);
    let names: Vec<&str> = done.iter().map(|(n, _)| n.as_str()).collect();
    match names.as_slice() {
        [] => calls(
            &id,
            "write_todos",
            json!({"todos": [
                {"content": format!("Tag scene {scene}"), "status": "in_progress"},
                {"content": "Report the tags", "status": "pending"}
            ]}),
        ),
        ["write_todos"] => calls(
            &id,
            "scene_update_tags",
            json!({"scene": scene, "tags": ["storm"]}),
        ),
        ["write_todos", "scene_update_tags"] => calls(&id, "read_todos", json!({})),
        ["write_todos", "scene_update_tags", "read_todos"] => {
            let mut todos = done[2].1["data"]["todos"].clone();
            for item in todos.as_array_mut().into_iter().flatten() {
                item["status"] = json!("completed");
            }
            calls(&id, "write_todos", json!({ "todos": todos }))
        }
        _ => {
            let last = &done[done.len() - 1].1["data"];
            says(&format!(
                "Tagged. {} of {} items completed.",
                last["completed"],
                last["todos"].as_array().map_or(0, Vec::len)
            ))
        }
    }
}

fn define_planner(w: &Worker, planning: bool, interrupt: bool) {
    let interrupt_on: Vec<&str> = if interrupt {
        vec!["scene_update_tags"]
    } else {
        Vec::new()
    };
    w.ok(
        "define_agent",
        json!({"agent": {"name": "planner", "description": "Tags scenes with a plan.",
            "systemPrompt": "You tag the scene the task names.", "talksToWriter": true,
            "tools": ["scene_read_overview", "scene_update_tags"],
            "interruptOn": interrupt_on, "planning": planning}}),
    );
}

#[test]
fn a_planning_agent_keeps_its_todos_in_its_run_and_through_a_paused_run() {
    let store = Rc::new(MemoryStore::new());
    let w = Worker::with_brain(store.clone(), usize::MAX, "id", Rc::new(planning_brain));
    w.configure();
    fixture(&w);
    // Without planning: no planning tools, no guidance.
    define_planner(&w, false, false);
    let run = w.ok(
        "run",
        json!({"agent": "planner", "prompt": "Tag it.\nScene: s1"}),
    );
    assert_eq!(run["text"], "No planning tools.");
    assert!(run.get("todos").is_none(), "{run}");
    // With planning: the tools and the guidance, and the list kept through the run.
    define_planner(&w, true, false);
    let run = w.ok(
        "run",
        json!({"agent": "planner", "prompt": "Tag it.\nScene: s2"}),
    );
    assert_eq!(run["text"], "Tagged. 2 of 2 items completed.", "{run}");
    assert_eq!(
        run["todos"],
        json!([
            {"content": "Tag scene s2", "status": "completed"},
            {"content": "Report the tags", "status": "completed"}
        ])
    );
    let first = w.net.bodies.borrow().last().cloned().unwrap();
    let system = first["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(system.contains("write_todos"), "{system}");
    // Paused for the writer's approval after writing the list: the list is saved with the
    // paused run, and a new worker's resumed run reads it back.
    define_planner(&w, true, true);
    let run = w.ok(
        "run",
        json!({"agent": "planner", "prompt": "Tag it.\nScene: s3"}),
    );
    assert_eq!(run["status"], "paused", "{run}");
    assert_eq!(run["todos"][0]["content"], "Tag scene s3", "{run}");
    let project = w.ok("list_projects", json!({}))["current"].clone();
    drop(w);
    let w = Worker::with_brain(store, usize::MAX, "second", Rc::new(planning_brain));
    w.configure();
    w.ok("open_project", json!({ "id": project }));
    let approvals = w.ok("list_approvals", json!({}));
    let call = approvals["approvals"][0]["callId"].clone();
    w.ok("approve", json!({"callId": call, "decision": "approve"}));
    w.settle();
    let bodies = w.net.bodies.borrow();
    let read = tool_results(bodies.last().unwrap())
        .into_iter()
        .rfind(|(name, _)| name == "read_todos")
        .map(|(_, r)| r)
        .expect("the resumed run read its list");
    assert_eq!(
        read["data"]["todos"][0]["content"], "Tag scene s3",
        "{read}"
    );
    assert_eq!(read["data"]["todos"][0]["status"], "in_progress");
    assert_eq!(w.scene("s3")["tags"], json!(["storm"]));
}

#[test]
fn a_planning_agents_todos_are_kept_in_its_job_units_record() {
    let store = Rc::new(MemoryStore::new());
    let w = Worker::with_brain(store.clone(), usize::MAX, "id", Rc::new(planning_brain));
    w.configure();
    fixture(&w);
    define_planner(&w, true, false);
    let job = w.ok(
        "start_job",
        json!({"kind": "run", "agent": "planner", "prompt": "Tag it.\nScene: s4"}),
    );
    w.settle();
    let status = w.ok("job_status", json!({"job": job["id"]}));
    assert_eq!(status["state"], "done", "{status}");
    let todos = json!([
        {"content": "Tag scene s4", "status": "completed"},
        {"content": "Report the tags", "status": "completed"}
    ]);
    assert_eq!(status["units"][0]["todos"], todos, "{status}");
    // In the job's saved record too: a new worker shows it.
    let project = w.ok("list_projects", json!({}))["current"].clone();
    drop(w);
    let w = Worker::named(store, usize::MAX, "second");
    w.ok("open_project", json!({ "id": project }));
    let status = w.ok("job_status", json!({"job": job["id"]}));
    assert_eq!(status["units"][0]["todos"], todos, "{status}");
}

#[test]
fn a_run_that_ends_while_saves_fail_still_finishes_and_its_conversation_is_saved_later() {
    let faulty = Rc::new(draftsmith::store::faulty::Faulty::new(MemoryStore::new()));
    let events = Rc::new(RecordingSink::default());
    let net = Rc::new(Net {
        brain: Rc::new(rentl_brain),
        latency: Rc::new(|_| 2),
        budget: Cell::new(usize::MAX),
        bodies: RefCell::default(),
        inflight: Cell::new(0),
        most: Cell::new(0),
    });
    let core = Core::new(Env {
        clock: Rc::new(ManualClock::new(1_700_000_000_000)),
        ids: Rc::new(SequentialIds::new("id")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: events.clone(),
        store: faulty.clone(),
    })
    .with_llm(net, Rc::new(NeverSleeper));
    let send = |kind: &str, params: Value| -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        serde_json::from_str(&block_on(core.handle_text(&text))).unwrap()
    };
    send("create_project", json!({"name": "P"}));
    send(
        "set_settings",
        json!({"provider": "openai", "baseUrl": "http://model.test/v1", "model": "m", "apiKey": "sk-test-123456"}),
    );
    faulty.set_failing(true);
    let run = send("run", json!({"prompt": "Say hello."}));
    assert_eq!(run["ok"], true, "{run}");
    assert_eq!(run["result"]["status"], "finished", "{run}");
    assert!(events.peek().iter().any(|e| e.kind == "storage_error"));
    let stored = |store: &dyn Store| {
        block_on(store.get_all(Table::Meta))
            .unwrap()
            .into_iter()
            .any(|r| r["kind"] == "conversation")
    };
    assert!(!stored(faulty.as_ref()));
    faulty.set_failing(false);
    // The next save (any change) writes what the failed one held.
    send("add_chapter", json!({"title": "Two"}));
    assert!(
        stored(faulty.as_ref()),
        "the conversation was kept pending and saved"
    );
}

/// Plays rentl's subagents as [`rentl_brain`] does, except that the scene location detailer
/// also fills in its location's description: it reads the location the overview lists first
/// (`location_read_entry`), and writes a description when the entry has none.
fn describing_brain(body: &Value) -> Scripted {
    let t = task(body);
    if !t.starts_with("Task for scene_location_detailer") {
        return rentl_brain(body);
    }
    let scene = line_of(&t, "Scene: ");
    let id = format!("call_{}", n_calls(body) + 1);
    let done = tool_results(body);
    let result = |name: &str| {
        done.iter()
            .find(|(n, _)| n == name)
            .map(|(_, r)| r.clone())
            .unwrap_or(Value::Null)
    };
    let overview = result("scene_read_overview");
    let place = overview["data"]["mentionedLocations"][0]
        .as_str()
        .unwrap_or("")
        .to_string();
    match done.len() {
        0 => calls(&id, "scene_read_overview", json!({"scene": scene})),
        1 => calls(&id, "location_read_entry", json!({"location": place})),
        2 if result("location_read_entry")["data"]["entry"]["description"]
            .as_str()
            .is_none_or(str::is_empty) =>
        {
            let description = format!("The {place}, as scene {scene} shows it.");
            calls(
                &id,
                "location_update_description",
                json!({"location": place, "description": description}),
            )
        }
        _ => says("Done."),
    }
}

#[test]
fn two_units_of_one_subagent_that_read_the_same_version_do_not_overwrite_each_other() {
    // The model thinks longer over scene s1's description than over the rest: scene s4's
    // location detailer reads the location before s1's has written it.
    let slow = |body: &Value| {
        let t = task(body);
        let writing = tool_results(body).len() == 2;
        match t.starts_with("Task for scene_location_detailer") && line_of(&t, "Scene: ") == "s1" {
            true if writing => 60,
            _ => 2,
        }
    };
    let w = Worker::with_model(
        Rc::new(MemoryStore::new()),
        usize::MAX,
        "id",
        Rc::new(describing_brain),
        Rc::new(slow),
    );
    w.configure();
    fixture(&w);
    // Scenes s1 and s4 both take place at the Lighthouse, whose description is empty: their
    // location detailers run at once.
    w.ok(
        "start_job",
        json!({"kind": "pipeline", "phases": ["context"], "scope": {"scenes": ["s1", "s4"]}, "concurrency": 8, "allowOverwrite": true}),
    );
    w.settle();

    // What each unit read, and what became of its write (the last request of each unit holds
    // its whole conversation).
    let mut last_of_unit: BTreeMap<String, Value> = BTreeMap::new();
    for body in w.net.bodies.borrow().iter() {
        let t = task(body);
        if t.starts_with("Task for scene_location_detailer") {
            last_of_unit.insert(line_of(&t, "Scene: "), body.clone());
        }
    }
    assert_eq!(last_of_unit.len(), 2, "{:?}", last_of_unit.keys());
    let mut read_versions = Vec::new();
    let (mut written, mut refused) = (Vec::new(), Vec::new());
    for (scene, body) in &last_of_unit {
        let done = tool_results(body);
        let read = done
            .iter()
            .find(|(n, _)| n == "location_read_entry")
            .map(|(_, r)| r.clone())
            .unwrap();
        assert!(
            read["data"]["entry"]["description"].is_null(),
            "{scene}: {read}"
        );
        read_versions.push(read["data"]["entry"]["version"].clone());
        let (_, update) = done
            .iter()
            .find(|(n, _)| n == "location_update_description")
            .unwrap();
        match update["status"].as_str() {
            Some("success") => written.push(scene.clone()),
            _ => refused.push((scene.clone(), update.clone())),
        }
    }
    // Both units read the same version with the description empty, and both wrote it: one
    // write lands, the other is refused with the current and the proposed values.
    assert_eq!(read_versions[0], read_versions[1]);
    assert_eq!(written.len(), 1, "{written:?} {refused:?}");
    assert_eq!(refused.len(), 1, "{written:?} {refused:?}");
    let (loser, error) = &refused[0];
    assert_eq!(error["data"]["code"], "concurrent_update", "{error}");
    assert!(error["data"]["message"]
        .as_str()
        .unwrap()
        .starts_with("CONCURRENT UPDATE DETECTED"));
    let kept = format!("The lighthouse, as scene {} shows it.", written[0]);
    assert_eq!(error["data"]["details"]["current"], kept.as_str());
    assert_eq!(
        error["data"]["details"]["proposed"],
        format!("The lighthouse, as scene {loser} shows it.")
    );
    let location = w.ok("bible_list", json!({"kind": "location"}));
    let lighthouse = location["kinds"]["location"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name_src"] == "Lighthouse")
        .cloned()
        .unwrap();
    assert_eq!(lighthouse["description"], kept.as_str());
}
