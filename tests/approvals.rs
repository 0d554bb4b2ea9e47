//! Human in the loop: an agent's call that would overwrite what the writer wrote pauses the
//! run; the writer approves (the call runs exactly once, the run goes on), edits, or rejects
//! (the model reads the rejection); a decision survives a new worker; a stale approval gets
//! a conflict instead of overwriting.
#![cfg(not(target_arch = "wasm32"))]

use std::rc::Rc;

use draftsmith::llm::client::Scripted;
use draftsmith::store::{MemoryStore, Store, Table};
use futures::executor::block_on;
use futures::future;
use serde_json::{json, Value};

mod common;
use common::page::*;

const NOTES: &str = "Mara fears the sea; never let her swim.";

impl Page {
    /// A human-written character with notes.
    fn character(&self) {
        self.ok(
            "bible_save",
            json!({"kind": "character", "fields": {"name_src": "Mara", "notes": NOTES}}),
        );
    }

    fn notes(&self) -> Value {
        let list = self.ok("bible_list", json!({"kind": "character"}));
        list["kinds"]["character"][0]["notes"].clone()
    }

    fn bodies(&self) -> Vec<String> {
        self.transport
            .0
            .requests()
            .iter()
            .map(|r| r.body.clone())
            .collect()
    }

    fn open(&self, id: &str) {
        self.ok("open_project", json!({"id": id}));
    }
}

fn overwrite_notes(call: &str, notes: &str) -> Scripted {
    calls(
        call,
        "character_update_notes",
        json!({"character": "mara", "notes": notes}),
    )
}

#[test]
fn a_run_pauses_for_approval_and_a_new_worker_approves_it_exactly_once() {
    let store = Rc::new(MemoryStore::new());
    let tab = Page::on(
        store.clone(),
        vec![
            overwrite_notes("call_1", "Mara loves swimming."),
            says("Nothing else to do."),
        ],
        Rc::new(NeverSleeper),
    );
    tab.project();
    tab.configure();
    tab.character();
    let project = tab.ok("list_projects", json!({}))["projects"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let run = tab.ok(
        "run",
        json!({"prompt": "Make Mara a swimmer.", "runId": "r1"}),
    );
    assert_eq!(run["status"], "paused", "{run}");
    assert_eq!(run["pending"][0]["callId"], "call_1");
    assert_eq!(
        tab.notes(),
        NOTES,
        "nothing changes before the writer decides"
    );
    let requested: Vec<Value> = tab
        .run_events()
        .into_iter()
        .filter(|e| e["type"] == "approval_requested")
        .collect();
    assert_eq!(requested.len(), 1);
    assert_eq!(requested[0]["call_id"], "call_1");
    assert_eq!(requested[0]["tool"], "character_update_notes");
    assert_eq!(requested[0]["current"]["notes"], NOTES);
    assert_eq!(requested[0]["proposed"]["notes"], "Mara loves swimming.");
    // A paused run does not hold up the next one (runs do not exclude each other).
    let other_run = tab.ok("run", json!({"prompt": "Something else."}));
    assert_eq!(other_run["status"], "finished", "{other_run}");
    assert_eq!(tab.notes(), NOTES);

    // The page reloads: a new worker on the same storage.
    drop(tab);
    let tab = Page::on(
        store.clone(),
        vec![says("Mara swims now.")],
        Rc::new(NeverSleeper),
    );
    tab.open(&project);
    tab.configure();
    let pending = tab.ok("list_approvals", json!({}));
    assert_eq!(
        pending["approvals"].as_array().unwrap().len(),
        1,
        "{pending}"
    );
    // A second tab (another worker) on the same storage, deciding at the same moment.
    let other = Page::on(store.clone(), vec![says("never")], Rc::new(NeverSleeper));
    other.open(&project);
    other.configure();
    let (a, b) = block_on(future::join(
        tab.send_async(
            "approve",
            json!({"callId": "call_1", "decision": "approve"}),
        ),
        other.send_async(
            "approve",
            json!({"callId": "call_1", "decision": "approve"}),
        ),
    ));
    let (won, lost) = if a["ok"] == true { (a, b) } else { (b, a) };
    assert_eq!(won["ok"], true, "{won}");
    assert_eq!(lost["ok"], false, "{lost}");
    assert_eq!(lost["error"]["code"], "conflict", "{lost}");
    assert_eq!(won["result"]["status"], "success");
    assert_eq!(won["result"]["run"]["status"], "finished", "{won}");
    assert_eq!(won["result"]["run"]["text"], "Mara swims now.");
    let audit: Vec<Value> = block_on(store.get_all(Table::Audit))
        .unwrap()
        .into_iter()
        .filter(|r| r["tool"] == "character_update_notes" && r["status"] == "success")
        .collect();
    assert_eq!(audit.len(), 1, "the approved call ran exactly once");
    assert_eq!(tab.notes(), "Mara loves swimming.");
    let list = tab.ok("bible_list", json!({"kind": "character"}));
    assert!(list["kinds"]["character"][0]["notes_origin"]
        .as_str()
        .unwrap()
        .starts_with("agent:assistant:"));
    // The model got the call's result in the resumed conversation (from whichever worker won).
    let bodies: Vec<String> = tab.bodies().into_iter().chain(other.bodies()).collect();
    assert_eq!(bodies.len(), 1);
    assert!(
        bodies[0].contains("call_1") && bodies[0].contains("success"),
        "{}",
        bodies[0]
    );
    // Deciding again is refused; nothing waits any more.
    let (code, message) = tab.err("approve", json!({"callId": "call_1", "decision": "reject"}));
    assert_eq!(code, "conflict");
    assert!(message.contains("already"), "{message}");
    assert_eq!(tab.ok("list_approvals", json!({}))["approvals"], json!([]));
}

#[test]
fn a_rejection_reaches_the_model_and_keeps_the_writers_text() {
    let tab = Page::new(vec![
        overwrite_notes("call_1", "Mara loves swimming."),
        says("Understood, I left the notes alone."),
    ]);
    tab.project();
    tab.configure();
    tab.character();
    let run = tab.ok(
        "run",
        json!({"prompt": "Make Mara a swimmer.", "runId": "r1"}),
    );
    assert_eq!(run["status"], "paused");
    let answer = tab.ok(
        "approve",
        json!({"callId": "call_1", "decision": "reject", "reason": "She must fear water."}),
    );
    assert_eq!(answer["status"], "denied");
    assert_eq!(answer["run"]["status"], "finished");
    assert_eq!(tab.notes(), NOTES);
    let bodies = tab.bodies();
    let last = bodies.last().unwrap();
    assert!(
        last.contains("rejected") && last.contains("She must fear water."),
        "{last}"
    );
    let events = tab.run_events();
    assert!(events.iter().any(|e| e["type"] == "run_resumed"));
    assert!(events
        .iter()
        .any(|e| e["type"] == "tool_call_finished" && e["status"] == "denied"));
}

#[test]
fn an_approval_of_a_field_that_changed_since_gets_a_conflict() {
    let tab = Page::new(vec![
        overwrite_notes("call_1", "Mara loves swimming."),
        says("The notes changed; I stopped."),
    ]);
    tab.project();
    tab.configure();
    tab.character();
    tab.ok(
        "run",
        json!({"prompt": "Make Mara a swimmer.", "runId": "r1"}),
    );
    // The writer edits the notes while the card is shown.
    tab.ok(
        "bible_save",
        json!({"kind": "character", "id": "mara", "fields": {"notes": "Mara learns to swim in book two."}}),
    );
    let answer = tab.ok(
        "approve",
        json!({"callId": "call_1", "decision": "approve"}),
    );
    assert_eq!(answer["status"], "error");
    assert_eq!(answer["result"]["data"]["code"], "conflict", "{answer}");
    assert_eq!(tab.notes(), "Mara learns to swim in book two.");
    assert_eq!(answer["run"]["status"], "finished");
}

#[test]
fn the_writer_can_approve_with_edited_arguments() {
    let tab = Page::new(vec![
        overwrite_notes("call_1", "Mara loves swimming."),
        says("Done."),
    ]);
    tab.project();
    tab.configure();
    tab.character();
    tab.ok(
        "run",
        json!({"prompt": "Make Mara a swimmer.", "runId": "r1"}),
    );
    // Arguments that do not fit the tool are refused before anything is decided.
    let (code, message) = tab.err(
        "approve",
        json!({"callId": "call_1", "decision": "approve", "args": {"character": "mara", "notes": 7}}),
    );
    assert_eq!(code, "invalid_params");
    assert!(message.contains("notes"), "{message}");
    assert_eq!(
        tab.ok("list_approvals", json!({}))["approvals"][0]["callId"],
        "call_1"
    );
    let answer = tab.ok(
        "approve",
        json!({"callId": "call_1", "decision": "approve",
               "args": {"character": "mara", "notes": "Mara fears the sea but swims to save her brother."}}),
    );
    assert_eq!(answer["status"], "success", "{answer}");
    assert_eq!(
        tab.notes(),
        "Mara fears the sea but swims to save her brother."
    );
}

#[test]
fn aborting_a_paused_run_cancels_its_approvals() {
    let tab = Page::new(vec![
        overwrite_notes("call_1", "Mara loves swimming."),
        says("Fresh start."),
    ]);
    tab.project();
    tab.configure();
    tab.character();
    tab.ok(
        "run",
        json!({"prompt": "Make Mara a swimmer.", "runId": "r1"}),
    );
    assert_eq!(
        tab.ok("abort_run", json!({"runId": "r1"}))["aborted"],
        json!(["r1"])
    );
    assert_eq!(tab.ok("list_approvals", json!({}))["approvals"], json!([]));
    let (code, _) = tab.err(
        "approve",
        json!({"callId": "call_1", "decision": "approve"}),
    );
    assert_eq!(code, "conflict");
    assert_eq!(tab.notes(), NOTES);
    // The project is free again, and the conversation stays valid (the call has a result).
    let run = tab.ok("run", json!({"prompt": "Start over."}));
    assert_eq!(run["status"], "finished");
    let body = tab.bodies().last().unwrap().clone();
    assert!(
        body.contains("call_1") && body.contains("aborted"),
        "{body}"
    );
}

#[test]
fn a_direct_agent_call_waits_for_approval_too() {
    let tab = Page::new(vec![]);
    tab.project();
    tab.character();
    let result = tab.ok(
        "execute",
        json!({"tool": "character_update_notes", "origin": "agent:lore",
               "args": {"character": "mara", "notes": "Brave."}}),
    );
    assert_eq!(result["data"]["code"], "approval_required", "{result}");
    let call = result["data"]["details"]["callId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(tab.notes(), NOTES);
    let answer = tab.ok("approve", json!({"callId": call, "decision": "approve"}));
    assert_eq!(answer["status"], "success");
    assert_eq!(answer["run"], Value::Null);
    assert_eq!(tab.notes(), "Brave.");
}

#[test]
fn a_waiting_call_locks_its_fields_against_other_agents_even_after_a_reload() {
    let store = Rc::new(MemoryStore::new());
    let tab = Page::on(
        store.clone(),
        vec![overwrite_notes("call_1", "Mara loves swimming.")],
        Rc::new(NeverSleeper),
    );
    tab.project();
    tab.configure();
    tab.ok(
        "bible_save",
        json!({"kind": "character", "fields": {"name_src": "Mara", "notes": NOTES, "pronouns": ""}}),
    );
    let project = tab.ok("list_projects", json!({}))["projects"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    tab.ok(
        "run",
        json!({"prompt": "Make Mara a swimmer.", "runId": "r1"}),
    );
    let other_agent = |page: &Page| {
        page.ok(
            "execute",
            json!({"tool": "character_update_notes", "origin": "agent:other",
                   "args": {"character": "mara", "notes": "Mara is a sailor."}}),
        )
    };
    let result = other_agent(&tab);
    assert_eq!(result["data"]["code"], "locked", "{result}");
    assert!(result["data"]["message"]
        .as_str()
        .unwrap()
        .contains("call_1"));
    // The lock covers the fields the waiting call would change, not the whole entry: another
    // agent may fill another field meanwhile (as concurrent subagents do).
    let pronouns = tab.ok(
        "execute",
        json!({"tool": "character_update_pronouns", "origin": "agent:other",
               "args": {"character": "mara", "pronouns": "she/her"}}),
    );
    assert_eq!(pronouns["status"], "success", "{pronouns}");
    // A new worker rebuilds the lock from the waiting approval.
    drop(tab);
    let tab = Page::on(store, vec![says("Done.")], Rc::new(NeverSleeper));
    tab.open(&project);
    tab.configure();
    assert_eq!(other_agent(&tab)["data"]["code"], "locked");
    // The writer is never locked out.
    tab.ok(
        "bible_save",
        json!({"kind": "character", "id": "mara", "fields": {"notes": "Mara fears the deep sea."}}),
    );
    tab.ok("approve", json!({"callId": "call_1", "decision": "reject"}));
    // Decided: the lock is gone (the notes are the writer's, so the agent is asked).
    assert_eq!(other_agent(&tab)["data"]["code"], "approval_required");
}

/// Two calls of one answer that share an id, both waiting for the writer.
fn two_calls_one_id(id: &str) -> Scripted {
    let mara = json!({"character": "mara", "notes": "Mara loves swimming."}).to_string();
    let tom = json!({"character": "tom", "notes": "Tom hates Mara."}).to_string();
    Scripted::sse(
        &sse(&[
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "id": id, "type": "function", "function": {"name": "character_update_notes", "arguments": mara}},
                {"index": 1, "id": id, "type": "function", "function": {"name": "character_update_notes", "arguments": tom}}
            ]}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]),
        50,
    )
}

#[test]
fn a_duplicated_call_id_cannot_borrow_another_cards_approval() {
    let tab = Page::new(vec![two_calls_one_id("call_1"), says("Both asked.")]);
    tab.project();
    tab.configure();
    tab.character();
    tab.ok(
        "bible_save",
        json!({"kind": "character", "fields": {"name_src": "Tom", "notes": "Tom is kind."}}),
    );
    let run = tab.ok("run", json!({"prompt": "Change both.", "runId": "r1"}));
    assert_eq!(run["status"], "paused", "{run}");
    let cards = tab.ok("list_approvals", json!({}))["approvals"].clone();
    let cards = cards.as_array().unwrap();
    assert_eq!(cards.len(), 2, "one card per call: {cards:?}");
    let ids: Vec<&str> = cards
        .iter()
        .map(|c| c["callId"].as_str().unwrap())
        .collect();
    assert_ne!(ids[0], ids[1], "the calls got distinct ids");
    // The writer approves the card about Mara, by its id and digest: only Mara's call runs.
    let mara_card = cards
        .iter()
        .find(|c| c.to_string().contains("Mara loves swimming."))
        .unwrap();
    let tom_card = cards.iter().find(|c| c != &mara_card).unwrap();
    // Tom's card's digest does not decide the call waiting under Mara's id.
    let (code, message) = tab.err(
        "approve",
        json!({"callId": mara_card["callId"], "decision": "approve", "digest": tom_card["digest"]}),
    );
    assert_eq!(code, "conflict", "{message}");
    assert_eq!(
        tab.ok("list_approvals", json!({}))["approvals"]
            .as_array()
            .unwrap()
            .len(),
        2,
        "nothing was decided"
    );
    tab.ok(
        "approve",
        json!({"callId": mara_card["callId"], "decision": "approve", "digest": mara_card["digest"]}),
    );
    let list = tab.ok("bible_list", json!({"kind": "character"}));
    let notes: Vec<&str> = list["kinds"]["character"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["notes"].as_str().unwrap())
        .collect();
    assert!(notes.contains(&"Mara loves swimming."), "{notes:?}");
    assert!(
        notes.contains(&"Tom is kind."),
        "Tom's call still waits: {notes:?}"
    );
    let left = tab.ok("list_approvals", json!({}))["approvals"].clone();
    assert_eq!(left.as_array().unwrap().len(), 1, "{left}");
    assert!(left.to_string().contains("Tom hates Mara."));
}

#[test]
fn the_merge_card_names_every_entry_it_deletes() {
    let tab = Page::new(vec![]);
    tab.project();
    // The kept entry is the writer's (its update asks first); the merged one is the writer's
    // too, and the card must say that it goes.
    tab.ok(
        "bible_save",
        json!({"kind": "glossary", "id": "kaze", "fields": {"term_src": "Kaze", "notes": "Sea wind."}}),
    );
    tab.ok(
        "bible_save",
        json!({"kind": "glossary", "id": "kaze-2", "fields": {"term_src": "KAZE", "term_tgt": "Breeze", "notes": "My spelling."}}),
    );
    let result = tab.ok(
        "execute",
        json!({"tool": "glossary_merge_entries", "origin": "agent:lore",
               "args": {"keep": "kaze", "merge": ["kaze-2"]}}),
    );
    assert_eq!(result["data"]["code"], "approval_required", "{result}");
    let cards = tab.ok("list_approvals", json!({}))["approvals"].clone();
    let card = &cards[0];
    let changes = card["changes"]
        .as_array()
        .expect("the card lists its changes");
    let deleted: Vec<&Value> = changes.iter().filter(|c| c["action"] == "delete").collect();
    assert_eq!(deleted.len(), 1, "{card}");
    assert_eq!(deleted[0]["id"], "kaze-2");
    assert_eq!(deleted[0]["title"], "KAZE");
    let gone: Vec<&str> = deleted[0]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["proposed"].is_null() && f["current_origin"] == "human")
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    assert!(
        gone.contains(&"notes") && gone.contains(&"term_tgt"),
        "{gone:?}"
    );
    let updated = changes.iter().find(|c| c["action"] == "update").unwrap();
    assert_eq!(updated["id"], "kaze");
}
