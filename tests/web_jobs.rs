//! Background jobs in a dedicated worker, on IndexedDB and real `fetch` to the dev server's
//! offline demo model (which plays rentl's subagents): the translation phase runs as a job;
//! the worker dies in the middle of it (its network hangs and its database connection takes
//! no more writes, as when the page closes the worker); a new worker opening the project
//! resumes the job from its first unit not done, and the audit log shows every scene's lines
//! translated exactly once.
#![cfg(target_arch = "wasm32")]

use std::cell::Cell;
use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::llm::client::{HttpResponse, LlmTransport, Sleeper, TransportError};
use draftsmith::llm::HttpRequest;
use draftsmith::store::faulty::Faulty;
use draftsmith::store::{Store, Table};
use draftsmith::web::fetch::{FetchTransport, JsSleeper};
use draftsmith::web::idb::IdbStore;
use draftsmith::web::{JsClock, JsIds};
use draftsmith::{Core, IdSource, RecordingSink};
use futures_util::future::LocalBoxFuture;
use serde_json::{json, Value};
use std::future;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

mod web_common;
use web_common::MOCK;

/// `fetch`, until the worker dies: then no request is ever answered.
struct Killable {
    dead: Rc<Cell<bool>>,
}

impl LlmTransport for Killable {
    fn send<'a>(
        &'a self,
        request: &'a HttpRequest,
    ) -> LocalBoxFuture<'a, Result<HttpResponse, TransportError>> {
        Box::pin(async move {
            if self.dead.get() {
                return future::pending().await;
            }
            let answer = FetchTransport.send(request).await;
            if self.dead.get() {
                return future::pending().await;
            }
            answer
        })
    }
}

/// One worker's core on the database `db`, running jobs with `spawn_local`.
struct Worker {
    core: Core,
    dead: Rc<Cell<bool>>,
    store: Rc<Faulty<IdbStore>>,
    _events: Rc<RecordingSink>,
}

impl Worker {
    async fn open(db: &str) -> Self {
        let events = Rc::new(RecordingSink::default());
        let store = Rc::new(Faulty::new(IdbStore::open(db).await.unwrap()));
        let dead = Rc::new(Cell::new(false));
        let core = Core::new(Env {
            clock: Rc::new(JsClock),
            ids: Rc::new(JsIds),
            decoder: Rc::new(draftsmith::web::JsTextDecoder),
            events: events.clone(),
            store: store.clone(),
        })
        .with_llm(Rc::new(Killable { dead: dead.clone() }), Rc::new(JsSleeper))
        .with_spawner(Rc::new(wasm_bindgen_futures::spawn_local));
        Self {
            core,
            dead,
            store,
            _events: events,
        }
    }

    /// The worker dies: its model calls never answer and its store takes no more writes.
    fn kill(&self) {
        self.dead.set(true);
        self.store.fail_next(u64::MAX);
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

    async fn configure(&self) {
        self.ok(
            "set_settings",
            json!({"provider": "openai", "baseUrl": format!("{MOCK}mock/demo/v1"), "model": "demo", "idleTimeoutMs": 5000}),
        )
        .await;
    }

    /// Wait (up to about 60 s) until the job's status satisfies `done`.
    async fn wait_job(&self, job: &str, done: impl Fn(&Value) -> bool) -> Value {
        for _ in 0..600 {
            let status = self.ok("job_status", json!({"job": job})).await;
            if done(&status) {
                return status;
            }
            JsSleeper.sleep(100).await;
        }
        panic!("the job did not get there in time");
    }
}

const SCENES: usize = 8;

#[wasm_bindgen_test]
async fn a_new_worker_resumes_a_job_and_every_scene_is_translated_exactly_once() {
    let db = format!("draftsmith-jobs-{}", JsIds.next_id());
    let a = Worker::open(&db).await;
    a.configure().await;
    let mut text = String::new();
    let mut spans = Vec::new();
    for i in 0..SCENES {
        let start = text.chars().count();
        text.push_str(&format!(
            "Mara climbed the lighthouse stair for the {n}th night.\nThe keeper's lamp answered her.\n",
            n = i + 4
        ));
        spans.push((start, text.chars().count()));
    }
    let project = a
        .ok(
            "create_project",
            json!({"name": "Jobs", "chapters": [{"title": "One", "text": text}]}),
        )
        .await;
    let project_id = project["id"].as_str().unwrap().to_string();
    let chapter = project["chapters"][0]["id"].as_str().unwrap().to_string();
    a.ok(
        "bible_save",
        json!({"kind": "character", "fields": {"name_src": "Mara"}}),
    )
    .await;
    for (i, (start, end)) in spans.iter().enumerate() {
        a.ok(
            "bible_save",
            json!({"kind": "scene", "id": format!("s{}", i + 1),
                   "fields": {"chapter": chapter, "span": {"start": start, "end": end}}}),
        )
        .await;
    }
    let job = a
        .ok(
            "start_job",
            json!({"kind": "pipeline", "phases": ["translation"], "concurrency": 2}),
        )
        .await;
    let job_id = job["id"].as_str().unwrap().to_string();
    // Mid-phase: some scenes done, and a unit running that has written a line already.
    let translated_now = || async {
        a.ok("bible_list", json!({"kind": "translation"})).await["kinds"]["translation"]
            .as_array()
            .map_or(0, Vec::len)
    };
    let mut status = Value::Null;
    for _ in 0..600 {
        status = a.ok("job_status", json!({"job": job_id})).await;
        let done = status["progress"]["done"].as_u64().unwrap_or(0) as usize;
        if done >= 2 && translated_now().await > done * 2 {
            break;
        }
        JsSleeper.sleep(20).await;
    }
    let done_before = status["progress"]["done"].as_u64().unwrap() as usize;
    assert!((2..SCENES).contains(&done_before), "mid-phase: {status}");
    a.kill();

    // The store holds the finished units' lines only.
    let reader = IdbStore::open(&db).await.unwrap();
    let stored = reader.get_all(Table::Bible).await.unwrap();
    let stored_lines = stored
        .iter()
        .filter(|r| r["entity"]["kind"] == "translation")
        .count();
    let job_record = reader
        .get(Table::Meta, &format!("job:{project_id}:{job_id}"))
        .await
        .unwrap()
        .unwrap();
    let stored_done = job_record["job"]["units"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["state"] == "done")
        .count();
    assert_eq!(stored_lines, stored_done * 2, "{job_record}");
    assert!(stored_done < SCENES);

    // A new worker (the page reloaded) opens the project: the job goes on to its end.
    let b = Worker::open(&db).await;
    b.configure().await;
    b.ok("open_project", json!({"id": project_id})).await;
    let status = b
        .wait_job(&job_id, |s| {
            s["state"] == "done" || s["state"] == "failed" || s["state"] == "cancelled"
        })
        .await;
    assert_eq!(status["state"], "done", "{status}");
    assert_eq!(status["progress"]["done"], SCENES);
    let audit = reader.get_all(Table::Audit).await.unwrap();
    let creates: Vec<&Value> = audit
        .iter()
        .filter(|r| r["tool"] == "translation_create_line")
        .collect();
    assert_eq!(creates.len(), SCENES * 2, "every line once");
    assert!(creates.iter().all(|r| r["status"] == "success"));
    let stored = reader.get_all(Table::Bible).await.unwrap();
    for i in 1..=SCENES {
        let lines = stored
            .iter()
            .filter(|r| {
                r["entity"]["kind"] == "translation"
                    && r["entity"]["fields"]["scene"] == format!("s{i}")
            })
            .count();
        assert_eq!(lines, 2, "scene s{i}");
    }
}
