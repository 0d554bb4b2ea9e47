//! Long work reports `progress` events as it goes: opening a project (one step per part of it
//! read from the store) and `run_analysis` (one step per section).
#![cfg(not(target_arch = "wasm32"))]

use std::cell::RefCell;
use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::env::Event;
use draftsmith::store::{Batch, MemoryStore, Store, StoreFuture, Table};
use draftsmith::{Core, EventSink, ManualClock, SequentialIds};
use futures::executor::block_on;
use serde_json::{json, Value};

/// One log of what happened, in order: the core's progress events and the store's reads.
type Log = Rc<RefCell<Vec<String>>>;

struct Sink {
    log: Log,
    events: RefCell<Vec<Event>>,
}

impl EventSink for Sink {
    fn emit(&self, event: Event) {
        if event.kind == "progress" {
            let d = &event.data;
            self.log.borrow_mut().push(format!(
                "progress {} {}/{} {}",
                d["task"].as_str().unwrap_or_default(),
                d["done"],
                d["total"],
                d["stage"].as_str().unwrap_or_default()
            ));
        } else if event.kind == "analysis" {
            self.log.borrow_mut().push("analysis".into());
        }
        self.events.borrow_mut().push(event);
    }
}

/// A store that logs each read by index (the project's parts) as it starts.
struct Reads {
    inner: MemoryStore,
    log: Log,
}

impl Store for Reads {
    fn get<'a>(&'a self, t: Table, k: &'a str) -> StoreFuture<'a, Option<Value>> {
        self.inner.get(t, k)
    }
    fn get_all(&self, t: Table) -> StoreFuture<'_, Vec<Value>> {
        self.inner.get_all(t)
    }
    fn get_by_index<'a>(&'a self, t: Table, i: &'a str, v: Value) -> StoreFuture<'a, Vec<Value>> {
        self.log.borrow_mut().push(format!("read {t:?}"));
        self.inner.get_by_index(t, i, v)
    }
    fn commit(&self, batch: Batch) -> StoreFuture<'_, ()> {
        self.inner.commit(batch)
    }
}

fn core(store: Rc<Reads>, log: &Log, ids: &str) -> Core {
    Core::new(Env {
        clock: Rc::new(ManualClock::new(1_000)),
        ids: Rc::new(SequentialIds::new(ids)),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: Rc::new(Sink {
            log: Rc::clone(log),
            events: RefCell::new(Vec::new()),
        }),
        store,
    })
}

fn ok(core: &Core, kind: &str, params: Value) -> Value {
    let text = json!({"id": 1, "type": kind, "params": params}).to_string();
    let response: Value = serde_json::from_str(&block_on(core.handle_text(&text))).unwrap();
    assert_eq!(response["ok"], true, "{kind}: {response}");
    response["result"].clone()
}

fn setup() -> (Rc<Reads>, Log, String) {
    let log: Log = Rc::default();
    let store = Rc::new(Reads {
        inner: MemoryStore::new(),
        log: Rc::clone(&log),
    });
    let writer = core(Rc::clone(&store), &log, "w");
    let project = ok(
        &writer,
        "create_project",
        json!({"name": "Lighthouse", "chapters": [
            {"title": "One", "text": "Mara climbed the stair. \"Tobin!\" she called in Greyhaven."},
            {"title": "Two", "text": "Morning came grey over the harbour."}
        ]}),
    );
    log.borrow_mut().clear();
    (store, log, project["id"].as_str().unwrap().to_string())
}

#[test]
fn opening_a_project_reports_each_part_before_reading_it() {
    let (store, log, id) = setup();
    let fresh = core(Rc::clone(&store), &log, "o");
    ok(&fresh, "open_project", json!({"id": id}));
    let log = log.borrow().clone();
    // The reads of the open's load, up to its end (what the open reads after it is not its
    // progress: the jobs' and suggestions' records).
    let end = log
        .iter()
        .position(|l| l == "progress open_project 7/7 done")
        .unwrap_or_else(|| panic!("no end of progress: {log:#?}"));
    assert_eq!(
        log[..=end],
        [
            "progress open_project 0/7 chapters",
            "read Chapters",
            "read Meta",
            "progress open_project 1/7 changes",
            "read Changes",
            "progress open_project 2/7 history",
            "read History",
            "progress open_project 3/7 memory",
            "read Notes",
            "read Notes",
            "read Goals",
            "read Watched",
            "progress open_project 4/7 bible",
            "read Bible",
            "progress open_project 5/7 files",
            "read Files",
            "progress open_project 6/7 sync",
            "read Sync",
            "progress open_project 7/7 done",
        ]
    );
    // Opening it again (it is open) reads nothing and reports nothing.
    let before = store.log.borrow().len();
    ok(&fresh, "open_project", json!({"id": id}));
    assert_eq!(store.log.borrow().len(), before);
}

#[test]
fn an_unknown_project_reports_no_progress() {
    let (store, log, _) = setup();
    let fresh = core(store, &log, "o");
    let text = json!({"id": 1, "type": "open_project", "params": {"id": "nope"}}).to_string();
    let response: Value = serde_json::from_str(&block_on(fresh.handle_text(&text))).unwrap();
    assert_eq!(response["ok"], false);
    assert!(!log.borrow().iter().any(|l| l.starts_with("progress")));
}

#[test]
fn the_full_analysis_reports_each_section_then_its_result() {
    let (store, log, id) = setup();
    let fresh = core(store, &log, "o");
    ok(&fresh, "open_project", json!({"id": id}));
    log.borrow_mut().clear();
    let result = ok(
        &fresh,
        "execute",
        json!({"tool": "run_analysis", "args": {"interpret": false}, "origin": "user"}),
    );
    assert_eq!(result["status"], "success", "{result}");
    for section in ["pacing", "characters", "plot", "setting"] {
        assert!(result["data"][section].is_object(), "{section}: {result}");
    }
    assert_eq!(
        *log.borrow(),
        [
            "progress run_analysis 0/4 pacing",
            "progress run_analysis 1/4 characters",
            "progress run_analysis 2/4 plot",
            "progress run_analysis 3/4 setting",
            "progress run_analysis 4/4 done",
            "analysis",
        ]
    );

    // One section is one step.
    log.borrow_mut().clear();
    let result = ok(
        &fresh,
        "execute",
        json!({"tool": "run_analysis", "args": {"section": "characters", "interpret": false}, "origin": "user"}),
    );
    assert_eq!(result["data"]["section"], "characters", "{result}");
    assert_eq!(
        *log.borrow(),
        [
            "progress run_analysis 0/1 characters",
            "progress run_analysis 1/1 done",
            "analysis",
        ]
    );
}
