//! No lost updates: random, really overlapping interleavings of three agents (`agent:a`,
//! `agent:b`, `agent:c`, through `execute`) and the writer (the page's `bible_save`, and its
//! decisions on pending approvals) over the same few story-bible fields, on one [`Core`]
//! whose store yields to the executor on every operation (as IndexedDB does), so requests
//! started together interleave at every save.
//!
//! # The invariant
//!
//! Every write carries a value no other write carries. A *successful write* is an agent's
//! `execute` with a `success` result, the writer's `bible_save` that answered `ok`, or an
//! agent call the writer approved whose re-run succeeded (`approve` → `result.status:
//! success`). Each changes its entity, so it bumps the bible's version counter (one counter
//! for all entities): its version orders it among all successful writes. Its *time* is the
//! clock when it was applied (read by the event sink when its `bible_changed` is emitted:
//! the clock moves only between operations, never inside one).
//!
//! 1. **Nothing else changed anything.** The `bible_changed` events are exactly one per
//!    successful write (same version, same origin, the written values), so a failed or
//!    refused call changed nothing.
//! 2. **Refusals are the expected ones.** An agent's write that failed got
//!    `concurrent_update` (CONCURRENT UPDATE DETECTED, naming a write less than the window
//!    ago), `conflict`, `locked` or `approval_required`; the writer's save failed only with
//!    `conflict` (its form was based on an older version); a decision failed only because
//!    another decision had taken it ("already decided"), and an approved call's re-run only
//!    with `conflict`.
//! 3. **No agent silently overwrote another origin's recent write, nor the writer's.**
//!    Replaying the successful writes in version order: whenever a write replaces a value
//!    that *another* origin wrote, either the new write is the writer's (the writer always
//!    wins, and it is recorded: origin `human`), or it is an agent call the writer approved,
//!    or the replaced value was an agent's, written at least the recent-update window
//!    ([`draftsmith::policy::DEFAULT_WINDOW_MS`], 30 s) before. (An agent may always replace
//!    its own values.)
//! 4. **The final state is the last successful write.** Every field's value equals the value
//!    of the last successful write of it (empty if none), with that writer's origin
//!    (`human`, or `agent:<name>:<date>`); the same after a reload of the project from the
//!    store (a new core).
#![cfg(not(target_arch = "wasm32"))]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use draftsmith::core::Env;
use draftsmith::env::{Clock, Event, EventSink};
use draftsmith::policy::DEFAULT_WINDOW_MS;
use draftsmith::store::faulty::Faulty;
use draftsmith::store::MemoryStore;
use draftsmith::{Core, ManualClock, SequentialIds};
use futures::executor::block_on;
use futures::future::{join_all, LocalBoxFuture};
use proptest::prelude::*;
use serde_json::{json, Value};

/// The fields everyone writes: (kind, id, field).
const FIELDS: [(&str, &str, &str); 6] = [
    ("scene", "s1", "summary"),
    ("scene", "s1", "tags"),
    ("scene", "s2", "summary"),
    ("character", "mara", "notes"),
    ("glossary", "lamp", "notes"),
    ("glossary", "lamp", "term_tgt"),
];

/// What one write sets: indexes into [`FIELDS`], all of one entity. Agents use the first
/// seven (one tool call each); the writer's form may also save a scene's summary and tags.
const SETS: [&[usize]; 8] = [&[0], &[1], &[2], &[3], &[4], &[5], &[4, 5], &[0, 1]];
const AGENT_SETS: usize = 7;

const AGENTS: [&str; 3] = ["a", "b", "c"];

/// One operation of the plan.
#[derive(Debug, Clone)]
enum Act {
    /// Agent `agent` writes the fields of `SETS[set]` through its tool.
    Agent { agent: usize, set: usize },
    /// The writer saves the fields of `SETS[set]`; with `stale`, the form names the version
    /// it read before yielding that many times (another write may come in between).
    Writer { set: usize, stale: Option<u8> },
    /// The writer decides the `pick`-th pending approval (if any).
    Decide { approve: bool, pick: u8 },
}

#[derive(Debug, Clone)]
struct Op {
    act: Act,
    /// Yields before it starts (so requests started together overlap differently).
    delay: u8,
    /// How far the clock moves when it starts (ms).
    step: u64,
}

fn op() -> impl Strategy<Value = Op> {
    let act = prop_oneof![
        6 => (0..3usize, 0..AGENT_SETS).prop_map(|(agent, set)| Act::Agent { agent, set }),
        2 => (0..SETS.len(), prop::option::of(0..3u8)).prop_map(|(set, stale)| Act::Writer { set, stale }),
        1 => (any::<bool>(), any::<u8>()).prop_map(|(approve, pick)| Act::Decide { approve, pick }),
    ];
    (
        act,
        0..4u8,
        prop_oneof![3 => 0..4_000u64, 2 => 4_000..16_000u64, 1 => 16_000..40_000u64],
    )
        .prop_map(|(act, delay, step)| Op { act, delay, step })
}

/// Events with the clock's time when each was emitted.
struct TimedSink {
    clock: Rc<ManualClock>,
    events: RefCell<Vec<(u64, Event)>>,
}

impl EventSink for TimedSink {
    fn emit(&self, event: Event) {
        self.events.borrow_mut().push((self.clock.now_ms(), event));
    }
}

/// Yield to the executor once.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

async fn yields(n: u8) {
    for _ in 0..n {
        YieldOnce(false).await;
    }
}

async fn send(core: &Core, kind: &str, params: Value) -> Value {
    let text = json!({"id": 1, "type": kind, "params": params}).to_string();
    serde_json::from_str(&core.handle_text(&text).await).unwrap()
}

fn ok(response: &Value) -> &Value {
    assert_eq!(response["ok"], true, "{response}");
    &response["result"]
}

/// The value a write of `v` stores in field `FIELDS[i]`.
fn stored(i: usize, v: &str) -> Value {
    if FIELDS[i].2 == "tags" {
        json!([v])
    } else {
        json!(v)
    }
}

/// The agent tool call that writes `v` into the fields of `SETS[set]`.
fn tool_call(set: usize, v: &str) -> (&'static str, Value) {
    match SETS[set] {
        [0] => ("scene_update_summary", json!({"scene": "s1", "summary": v})),
        [1] => ("scene_update_tags", json!({"scene": "s1", "tags": [v]})),
        [2] => ("scene_update_summary", json!({"scene": "s2", "summary": v})),
        [3] => (
            "character_update_notes",
            json!({"character": "mara", "notes": v}),
        ),
        [4] => ("glossary_update_entry", json!({"id": "lamp", "notes": v})),
        [5] => (
            "glossary_update_entry",
            json!({"id": "lamp", "term_tgt": v}),
        ),
        [4, 5] => (
            "glossary_update_entry",
            json!({"id": "lamp", "notes": v, "term_tgt": v}),
        ),
        other => unreachable!("no agent tool writes {other:?}"),
    }
}

/// What one operation answered.
#[derive(Debug, Clone)]
struct Answer {
    op: usize,
    /// Its response (`None`: a decision with nothing pending).
    response: Option<Value>,
    /// For a decision, the call it decided.
    decided: Option<String>,
}

struct World {
    core: Core,
    clock: Rc<ManualClock>,
    sink: Rc<TimedSink>,
    store: Rc<Faulty<MemoryStore>>,
    project: String,
}

fn world() -> World {
    let clock = Rc::new(ManualClock::new(1_000_000));
    let sink = Rc::new(TimedSink {
        clock: clock.clone(),
        events: RefCell::default(),
    });
    let store = Rc::new(Faulty::new(MemoryStore::new()));
    store.set_yielding(true);
    let core = Core::new(Env {
        clock: clock.clone(),
        ids: Rc::new(SequentialIds::new("id")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: sink.clone(),
        store: store.clone(),
    });
    let project = block_on(async {
        let p = send(
            &core,
            "create_project",
            json!({"name": "Lighthouse", "chapters": [{"title": "One", "text": "Mara climbed."}]}),
        )
        .await;
        let chapter = ok(&p)["chapters"][0]["id"].clone();
        for (kind, id, fields) in [
            ("scene", "s1", json!({"chapter": chapter})),
            ("scene", "s2", json!({"chapter": chapter})),
            ("character", "mara", json!({"name_src": "Mara"})),
            ("glossary", "lamp", json!({"term_src": "lamp"})),
        ] {
            let r = send(
                &core,
                "bible_save",
                json!({"kind": kind, "id": id, "fields": fields}),
            )
            .await;
            ok(&r);
        }
        ok(&p)["id"].as_str().unwrap().to_string()
    });
    sink.events.borrow_mut().clear();
    World {
        core,
        clock,
        sink,
        store,
        project,
    }
}

/// The value of op `i` (unique across the plan).
fn value_of(ops: &[Op], i: usize) -> String {
    match &ops[i].act {
        Act::Agent { agent, .. } => format!("{}{i}", AGENTS[*agent]),
        _ => format!("w{i}"),
    }
}

/// Run one operation: wait its turn, move the clock, send its request(s).
async fn run_op(w: &World, ops: &[Op], i: usize) -> Answer {
    let op = &ops[i];
    yields(op.delay).await;
    w.clock.advance(op.step);
    let v = value_of(ops, i);
    let core = &w.core;
    match &op.act {
        Act::Agent { agent, set } => {
            let (tool, args) = tool_call(*set, &v);
            let origin = format!("agent:{}", AGENTS[*agent]);
            let r = send(
                core,
                "execute",
                json!({"tool": tool, "args": args, "origin": origin}),
            )
            .await;
            Answer {
                op: i,
                response: Some(r),
                decided: None,
            }
        }
        Act::Writer { set, stale } => {
            let (kind, id, _) = FIELDS[SETS[*set][0]];
            let fields: serde_json::Map<String, Value> = SETS[*set]
                .iter()
                .map(|&f| (FIELDS[f].2.to_string(), stored(f, &v)))
                .collect();
            let mut params = json!({"kind": kind, "id": id, "fields": fields});
            if let Some(n) = stale {
                // The form shows the entity as it is now; the writer saves a moment later.
                let list = send(core, "bible_list", json!({"kind": kind})).await;
                let version = ok(&list)["kinds"][kind]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|e| e["id"] == id)
                    .unwrap()["version"]
                    .clone();
                params["baseVersion"] = version;
                yields(*n).await;
            }
            let r = send(core, "bible_save", params).await;
            Answer {
                op: i,
                response: Some(r),
                decided: None,
            }
        }
        Act::Decide { approve, pick } => {
            let list = send(core, "list_approvals", json!({})).await;
            let pending = ok(&list)["approvals"].as_array().unwrap().clone();
            if pending.is_empty() {
                return Answer {
                    op: i,
                    response: None,
                    decided: None,
                };
            }
            let call = pending[*pick as usize % pending.len()]["callId"]
                .as_str()
                .unwrap()
                .to_string();
            let decision = if *approve { "approve" } else { "reject" };
            let r = send(
                core,
                "approve",
                json!({"callId": call, "decision": decision}),
            )
            .await;
            Answer {
                op: i,
                response: Some(r),
                decided: Some(call),
            }
        }
    }
}

/// A successful write, as the invariant sees it.
#[derive(Debug, Clone)]
struct Write {
    /// The operation whose values it wrote (for an approved call, the agent's).
    op: usize,
    /// `human` or `agent:<name>`.
    origin: String,
    approved: bool,
    version: u64,
    /// The fields (indexes into [`FIELDS`]) and values written.
    values: Vec<(usize, Value)>,
}

/// The fields of every entity, by (kind, id).
fn bible_state(core: &Core) -> BTreeMap<(String, String), Value> {
    let list = block_on(send(core, "bible_list", json!({})));
    let mut out = BTreeMap::new();
    for (kind, entities) in ok(&list)["kinds"].as_object().unwrap() {
        for e in entities.as_array().unwrap() {
            out.insert(
                (kind.clone(), e["id"].as_str().unwrap().to_string()),
                e.clone(),
            );
        }
    }
    out
}

/// Run the plan (each batch started together, the batches one after another), check the
/// invariant, and return what each operation answered.
fn check(batches: &[Vec<usize>], ops: &[Op]) -> Result<Vec<Answer>, TestCaseError> {
    let w = world();
    let mut answers: Vec<Answer> = Vec::new();
    block_on(async {
        for batch in batches {
            let running: Vec<LocalBoxFuture<'_, Answer>> = batch
                .iter()
                .map(|&i| Box::pin(run_op(&w, ops, i)) as LocalBoxFuture<'_, Answer>)
                .collect();
            answers.extend(join_all(running).await);
        }
    });
    let transcript = || {
        answers
            .iter()
            .map(|a| {
                format!(
                    "#{} {:?} -> {}",
                    a.op,
                    ops[a.op],
                    a.response
                        .as_ref()
                        .map_or("nothing pending".into(), |r| r.to_string())
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };

    // Which agent op asked for which approval.
    let mut asked: BTreeMap<String, usize> = BTreeMap::new();
    for a in &answers {
        if let (Act::Agent { .. }, Some(r)) = (&ops[a.op].act, &a.response) {
            let result = ok(r);
            if result["data"]["code"] == "approval_required" {
                let call = result["data"]["details"]["callId"].as_str().unwrap();
                asked.insert(call.to_string(), a.op);
            }
        }
    }

    // The successful writes, and the refusals (invariant 2).
    let mut writes: Vec<Write> = Vec::new();
    for a in &answers {
        let Some(r) = &a.response else { continue };
        let v = value_of(ops, a.op);
        match &ops[a.op].act {
            Act::Agent { agent, set } => {
                let result = ok(r);
                if result["status"] == "success" {
                    prop_assert_eq!(&result["data"]["changed"], &json!(true), "{}", result);
                    writes.push(Write {
                        op: a.op,
                        origin: format!("agent:{}", AGENTS[*agent]),
                        approved: false,
                        version: result["data"]["entry"]["version"].as_u64().unwrap(),
                        values: SETS[*set].iter().map(|&f| (f, stored(f, &v))).collect(),
                    });
                } else {
                    let code = result["data"]["code"].as_str().unwrap_or("");
                    prop_assert!(
                        [
                            "concurrent_update",
                            "conflict",
                            "locked",
                            "approval_required"
                        ]
                        .contains(&code),
                        "agent op #{} refused with {}: {}\n{}",
                        a.op,
                        code,
                        result,
                        transcript()
                    );
                    if code == "concurrent_update" {
                        let message = result["data"]["message"].as_str().unwrap();
                        prop_assert!(message.starts_with("CONCURRENT UPDATE DETECTED"));
                        let ago = result["data"]["details"]["agoMs"].as_u64().unwrap();
                        prop_assert!(ago < DEFAULT_WINDOW_MS, "{}", result);
                        let by = result["data"]["details"]["updatedBy"].as_str().unwrap();
                        let own = format!("agent:{}:", AGENTS[*agent]);
                        prop_assert!(!by.starts_with(&own), "{}", result);
                    }
                }
            }
            Act::Writer { set, .. } => {
                if r["ok"] == true {
                    writes.push(Write {
                        op: a.op,
                        origin: "human".into(),
                        approved: false,
                        version: r["result"]["version"].as_u64().unwrap(),
                        values: SETS[*set].iter().map(|&f| (f, stored(f, &v))).collect(),
                    });
                } else {
                    prop_assert_eq!(&r["error"]["code"], "conflict", "{}", r);
                }
            }
            Act::Decide { approve, .. } => {
                if r["ok"] != true {
                    // Another decision took it first (the protocol's code is `conflict`).
                    let message = r["error"]["message"].as_str().unwrap_or("");
                    prop_assert!(
                        r["error"]["code"] == "conflict" && message.contains("already"),
                        "{}",
                        r
                    );
                    continue;
                }
                let result = &r["result"]["result"];
                let call = a.decided.as_deref().unwrap();
                let Some(&asker) = asked.get(call) else {
                    return Err(TestCaseError::fail(format!(
                        "decided call {call} that no agent op asked for\n{}",
                        transcript()
                    )));
                };
                if !approve {
                    prop_assert_eq!(&result["data"]["code"], "denied", "{}", r);
                } else if result["status"] == "success" {
                    let Act::Agent { agent, set } = &ops[asker].act else {
                        unreachable!()
                    };
                    let v = value_of(ops, asker);
                    writes.push(Write {
                        op: asker,
                        origin: format!("agent:{}", AGENTS[*agent]),
                        approved: true,
                        version: result["data"]["entry"]["version"].as_u64().unwrap(),
                        values: SETS[*set].iter().map(|&f| (f, stored(f, &v))).collect(),
                    });
                } else {
                    prop_assert_eq!(&result["data"]["code"], "conflict", "{}", r);
                }
            }
        }
    }
    writes.sort_by_key(|w| w.version);

    // Invariant 1: one bible_changed per successful write, with its values; nothing else.
    let changed: Vec<(u64, Event)> = w
        .sink
        .events
        .borrow()
        .iter()
        .filter(|(_, e)| e.kind == "bible_changed")
        .cloned()
        .collect();
    prop_assert_eq!(
        changed.len(),
        writes.len(),
        "changes without a successful write (or the reverse)\n{}",
        transcript()
    );
    let mut times: BTreeMap<u64, u64> = BTreeMap::new();
    for (write, (time, event)) in writes.iter().zip(&changed) {
        let entity = &event.data["entity"];
        prop_assert_eq!(entity["version"].as_u64(), Some(write.version));
        let origin = event.data["origin"].as_str().unwrap();
        let expected = if write.origin == "human" {
            "user"
        } else {
            write.origin.as_str()
        };
        prop_assert_eq!(origin, expected);
        for (f, value) in &write.values {
            prop_assert_eq!(&entity[FIELDS[*f].2], value);
        }
        times.insert(write.version, *time);
    }

    // Invariant 3: replay in version order; no silent overwrite of another origin's write.
    // Per field: (value, origin, time, op).
    let mut model: BTreeMap<usize, (Value, String, u64, usize)> = BTreeMap::new();
    for write in &writes {
        let t = times[&write.version];
        for (f, value) in &write.values {
            if let Some((_, by, at, op)) = model.get(f) {
                let other = by != &write.origin;
                let allowed = write.origin == "human"
                    || write.approved
                    || (by != "human" && t.saturating_sub(*at) >= DEFAULT_WINDOW_MS);
                prop_assert!(
                    !other || allowed,
                    "LOST UPDATE: op #{} ({}) replaced {:?} of op #{} ({}, {} ms before) without a refusal\n{}",
                    write.op,
                    write.origin,
                    FIELDS[*f],
                    op,
                    by,
                    t.saturating_sub(*at),
                    transcript()
                );
            }
            model.insert(*f, (value.clone(), write.origin.clone(), t, write.op));
        }
    }

    // Invariant 4: the final state is the last successful write, with its origin; the same
    // after a reload.
    let state = bible_state(&w.core);
    for (f, (kind, id, field)) in FIELDS.iter().enumerate() {
        let entity = &state[&(kind.to_string(), id.to_string())];
        match model.get(&f) {
            None => prop_assert!(
                entity[*field].is_null() || entity[*field] == json!([]),
                "{} of {} written by nobody: {}",
                field,
                id,
                entity
            ),
            Some((value, by, _, op)) => {
                prop_assert_eq!(
                    &entity[*field],
                    value,
                    "{} of {}: last written by op #{}\n{}",
                    field,
                    id,
                    op,
                    transcript()
                );
                let origin = entity[format!("{field}_origin")].as_str().unwrap();
                if by == "human" {
                    prop_assert_eq!(origin, "human");
                } else {
                    prop_assert!(
                        origin.starts_with(&format!("{by}:")),
                        "{} vs {}",
                        origin,
                        by
                    );
                }
            }
        }
    }
    let reloaded = Core::new(Env {
        clock: w.clock.clone(),
        ids: Rc::new(SequentialIds::new("reload")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: Rc::new(draftsmith::RecordingSink::default()),
        store: w.store.clone(),
    });
    ok(&block_on(send(
        &reloaded,
        "open_project",
        json!({"id": w.project}),
    )));
    prop_assert_eq!(bible_state(&reloaded), state, "the reload differs");
    Ok(answers)
}

/// Cut the plan into batches of operations started together.
fn plan() -> impl Strategy<Value = (Vec<Op>, Vec<usize>)> {
    (
        prop::collection::vec(op(), 4..28),
        prop::collection::vec(1..6usize, 1..12),
    )
}

fn batches(n: usize, sizes: &[usize]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut next = 0;
    for size in sizes.iter().cycle() {
        if next >= n {
            break;
        }
        let end = (next + size).min(n);
        out.push((next..end).collect());
        next = end;
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_update_is_lost_without_a_refusal((ops, sizes) in plan()) {
        let batches = batches(ops.len(), &sizes);
        check(&batches, &ops)?;
    }
}

/// The outcome code of an answer: `success`, an error code, or `-` for nothing pending.
fn outcome(a: &Answer) -> String {
    let Some(r) = &a.response else {
        return "-".into();
    };
    if r["ok"] != true {
        return r["error"]["code"].as_str().unwrap().into();
    }
    let result = if r["result"]["result"].is_object() {
        &r["result"]["result"]
    } else {
        &r["result"]
    };
    match result["status"].as_str() {
        Some("error") => result["data"]["code"].as_str().unwrap().into(),
        _ => "success".into(),
    }
}

/// The interleavings really collide and reach every outcome (a fixed plan, so this cannot
/// pass by luck): a concurrent update between agents, the writer winning over an agent, an
/// approval asked for the writer's value, a lock while it waits, an agent overwriting
/// another's value once the window has passed, and an approved call applied.
#[test]
fn agents_and_the_writer_really_collide() {
    let agent = |agent, set, step| Op {
        act: Act::Agent { agent, set },
        delay: 0,
        step,
    };
    let ops = vec![
        // Started together: a and b on s1's summary 1 s apart, c on Mara's notes, and the
        // writer saving Mara's notes right after (it yields first).
        agent(0, 0, 0),
        agent(1, 0, 1_000),
        agent(2, 3, 0),
        Op {
            act: Act::Writer {
                set: 3,
                stale: None,
            },
            delay: 1,
            step: 500,
        },
        // 35 s later: a asks to change the writer's notes; b is locked out meanwhile.
        agent(0, 3, 35_000),
        agent(1, 3, 0),
        // b on s1's summary, now more than 30 s after a's write.
        agent(1, 0, 0),
        Op {
            act: Act::Decide {
                approve: true,
                pick: 0,
            },
            delay: 0,
            step: 0,
        },
    ];
    let batches = vec![vec![0, 1, 2, 3], vec![4, 5], vec![6], vec![7]];
    let answers = check(&batches, &ops).unwrap();
    let outcomes: Vec<String> = answers.iter().map(outcome).collect();
    assert_eq!(
        outcomes,
        [
            "success",
            "concurrent_update",
            "success",
            "success",
            "approval_required",
            "locked",
            "success",
            "success"
        ],
        "{answers:#?}"
    );
}
