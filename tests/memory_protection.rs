//! Memory notes carry their author, and agents ask before they delete or rewrite what is not
//! theirs: an agent's update or delete of a note the writer wrote (or an import brought), or
//! of a global note, becomes an approval card and changes nothing until the writer approves;
//! an agent's own project notes change at once. Deletion is soft: a deleted note leaves
//! search, listings and the prompt's memory block, can be restored for 30 days (by the page,
//! or by an agent when an agent deleted it), and is purged after that. Everything persists:
//! the trash survives a reload, old stored notes without an author load as the writer's, and
//! an import marks every note's author `import`.
#![cfg(not(target_arch = "wasm32"))]

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use draftsmith::core::Env;
use draftsmith::memory::TRASH_RETENTION_MS;
use draftsmith::store::{Batch, MemoryStore, Store, Table};
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures::executor::block_on;
use serde_json::{json, Value};

mod common;
use common::page::{Page, Reaction};

const DAY: u64 = 86_400_000;
static WORKERS: AtomicU64 = AtomicU64::new(1);
const WRITERS: &str = "The writer wants Mara's fear of the sea kept secret until chapter 9.";

/// A page talking to a core whose clock the test moves.
struct Tab {
    core: Core,
    clock: Rc<ManualClock>,
    store: Rc<MemoryStore>,
    events: Rc<RecordingSink>,
    next: Cell<u64>,
}

impl Tab {
    fn new() -> Self {
        Self::on(
            Rc::new(MemoryStore::new()),
            Rc::new(ManualClock::new(1_000)),
        )
    }

    /// Another worker on the same storage and clock (a reload).
    fn reload(&self) -> Self {
        Self::on(self.store.clone(), self.clock.clone())
    }

    fn on(store: Rc<MemoryStore>, clock: Rc<ManualClock>) -> Self {
        let events = Rc::new(RecordingSink::default());
        let core = Core::new(Env {
            clock: clock.clone(),
            // Each worker its own ids, as in the browser.
            ids: Rc::new(SequentialIds::new(format!(
                "w{}",
                WORKERS.fetch_add(1, Ordering::Relaxed)
            ))),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: events.clone(),
            store: store.clone(),
        });
        Self {
            core,
            clock,
            store,
            events,
            next: Cell::new(0),
        }
    }

    fn send(&self, kind: &str, params: Value) -> Value {
        self.next.set(self.next.get() + 1);
        let text = json!({"id": self.next.get(), "type": kind, "params": params}).to_string();
        serde_json::from_str(&block_on(self.core.handle_text(&text))).unwrap()
    }

    fn ok(&self, kind: &str, params: Value) -> Value {
        let r = self.send(kind, params.clone());
        assert_eq!(r["ok"], true, "{kind} {params} -> {r}");
        r["result"].clone()
    }

    fn err(&self, kind: &str, params: Value) -> String {
        let r = self.send(kind, params.clone());
        assert_eq!(r["ok"], false, "{kind} {params} -> {r}");
        r["error"]["code"].as_str().unwrap().to_string()
    }

    fn project(&self) -> String {
        let p = self.ok(
            "create_project",
            json!({"name": "Lighthouse", "chapters": [{"title": "One", "text": "Mara climbed."}]}),
        );
        p["id"].as_str().unwrap().to_string()
    }

    /// The writer writes a note from the page.
    fn writers_note(&self, text: &str, scope: &str) -> String {
        let written = self.ok(
            "write_memory_notes",
            json!({"notes": [{"text": text, "noteType": "preference", "scope": scope}]}),
        );
        written["written"][0].as_str().unwrap().to_string()
    }

    /// A tool call as `origin` (`agent:editor`, `user`): its result.
    fn tool(&self, origin: &str, tool: &str, args: Value) -> Value {
        self.ok(
            "execute",
            json!({"tool": tool, "args": args, "origin": origin}),
        )
    }

    /// An agent writes a note; its id.
    fn agents_note(&self, text: &str, scope: &str) -> String {
        let r = self.tool(
            "agent:editor",
            "write_memory_note",
            json!({"text": text, "type": "fact", "scope": scope}),
        );
        assert_eq!(r["status"], "success", "{r}");
        r["data"]["note"]["id"].as_str().unwrap().to_string()
    }

    /// The live notes the memory panel lists (bedside note aside).
    fn listed(&self) -> Vec<Value> {
        self.ok("memory", json!({}))["notes"]
            .as_array()
            .unwrap()
            .clone()
    }

    fn listed_note(&self, id: &str) -> Option<Value> {
        self.listed().into_iter().find(|n| n["id"] == id)
    }

    fn trash(&self) -> Vec<String> {
        self.ok("memory_trash", json!({}))["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["id"].as_str().unwrap().to_string())
            .collect()
    }

    fn cards(&self) -> Vec<Value> {
        self.ok("list_approvals", json!({}))["approvals"]
            .as_array()
            .unwrap()
            .clone()
    }

    fn found(&self, query: &str) -> Vec<String> {
        let r = self.tool("agent:editor", "search_memory", json!({"query": query}));
        r["data"]["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_str().unwrap().to_string())
            .collect()
    }

    fn context(&self, request: &str) -> String {
        self.ok(
            "memory_context",
            json!({"request": request, "budget": 20_000}),
        )["block"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn stored_note(&self, id: &str) -> Option<Value> {
        block_on(self.store.get(Table::Notes, id)).unwrap()
    }
}

/// The agent's call needs approval: its result, and the one waiting card.
fn waits(tab: &Tab, result: &Value) -> Value {
    assert_eq!(result["status"], "error", "{result}");
    assert_eq!(result["data"]["code"], "approval_required", "{result}");
    let cards = tab.cards();
    assert_eq!(cards.len(), 1, "{cards:?}");
    cards[0].clone()
}

fn approve(tab: &Tab, card: &Value) -> Value {
    tab.ok(
        "approve",
        json!({"callId": card["callId"], "decision": "approve", "digest": card["digest"]}),
    )
}

#[test]
fn an_agents_delete_of_the_writers_note_waits_for_approval_then_goes_to_the_trash() {
    let tab = Tab::new();
    tab.project();
    let id = tab.writers_note(WRITERS, "project");
    assert_eq!(tab.listed_note(&id).unwrap()["author"], "user");

    let result = tab.tool("agent:editor", "delete_memory_note", json!({"id": id}));
    let card = waits(&tab, &result);
    assert!(tab.listed_note(&id).is_some(), "nothing is deleted yet");
    assert!(tab.trash().is_empty());
    // The card: the tool, the note, its current text (the writer's) and the deletion.
    assert_eq!(card["tool"], "delete_memory_note");
    assert_eq!(card["kind"], "memory_note");
    assert_eq!(card["entityId"], id.as_str());
    assert!(card["digest"].as_str().is_some_and(|d| !d.is_empty()));
    assert!(card["reason"].as_str().unwrap().contains("writer wrote"));
    assert_eq!(card["current"]["text"], WRITERS);
    assert_eq!(card["proposed"]["text"], Value::Null);
    assert_eq!(card["fields"][0]["current_origin"], "human");
    assert_eq!(card["changes"][0]["action"], "delete");
    assert_eq!(card["changes"][0]["id"], id.as_str());

    let decided = approve(&tab, &card);
    assert_eq!(decided["status"], "success", "{decided}");
    assert!(tab.listed_note(&id).is_none());
    assert_eq!(tab.trash(), vec![id.clone()], "deleted softly");
    assert!(tab.cards().is_empty());
    // It runs once: approving again is refused.
    assert_eq!(
        tab.err(
            "approve",
            json!({"callId": card["callId"], "decision": "approve"})
        ),
        "conflict"
    );
}

#[test]
fn an_agents_delete_of_a_global_note_waits_for_approval_even_when_an_agent_wrote_it() {
    let tab = Tab::new();
    tab.project();
    let id = tab.agents_note("The writer prefers British spelling.", "global");
    let result = tab.tool("agent:other", "delete_memory_note", json!({"id": id}));
    let card = waits(&tab, &result);
    assert!(card["reason"].as_str().unwrap().contains("global"));
    assert_eq!(
        card["current"]["text"],
        "The writer prefers British spelling."
    );
    assert!(tab.listed_note(&id).is_some());
    // A rejection: the model reads it, and the note stays.
    let decided = tab.ok(
        "approve",
        json!({"callId": card["callId"], "decision": "reject", "reason": "keep it"}),
    );
    assert_eq!(decided["status"], "denied");
    assert!(tab.listed_note(&id).is_some());
    // Asked again and approved, it goes to the trash.
    let result = tab.tool("agent:other", "delete_memory_note", json!({"id": id}));
    let card = waits(&tab, &result);
    assert_eq!(approve(&tab, &card)["status"], "success");
    assert!(tab.listed_note(&id).is_none());
    assert_eq!(tab.trash(), vec![id]);
}

#[test]
fn an_agents_rewrite_of_the_writers_note_waits_for_approval() {
    let tab = Tab::new();
    tab.project();
    let id = tab.writers_note(WRITERS, "project");
    let proposed = "Mara's fear of the sea can be revealed in chapter 2.";
    let result = tab.tool(
        "agent:editor",
        "update_memory_note",
        json!({"id": id, "text": proposed, "importance": 5}),
    );
    let card = waits(&tab, &result);
    assert_eq!(card["tool"], "update_memory_note");
    assert_eq!(card["current"]["text"], WRITERS);
    assert_eq!(card["proposed"]["text"], proposed);
    assert_eq!(card["proposed"]["importance"], 5);
    assert_eq!(tab.listed_note(&id).unwrap()["text"], WRITERS, "unchanged");

    assert_eq!(approve(&tab, &card)["status"], "success");
    let note = tab.listed_note(&id).unwrap();
    assert_eq!(note["text"], proposed);
    assert_eq!(note["importance"], 5);
    assert_eq!(
        note["author"], "user",
        "still the writer's: still protected"
    );
    let again = tab.tool(
        "agent:editor",
        "update_memory_note",
        json!({"id": id, "text": "Reveal it at once."}),
    );
    assert_eq!(again["data"]["code"], "approval_required");
}

#[test]
fn an_approval_of_a_note_that_changed_since_gets_a_conflict() {
    let tab = Tab::new();
    tab.project();
    let id = tab.writers_note(WRITERS, "project");
    let result = tab.tool("agent:editor", "delete_memory_note", json!({"id": id}));
    let card = waits(&tab, &result);
    // The writer changes the note meanwhile (the page's own calls need no approval).
    let edit = tab.tool(
        "user",
        "update_memory_note",
        json!({"id": id, "text": "A new secret."}),
    );
    assert_eq!(edit["status"], "success", "{edit}");
    let decided = approve(&tab, &card);
    assert_eq!(decided["status"], "error", "{decided}");
    assert_eq!(decided["result"]["data"]["code"], "conflict");
    assert_eq!(tab.listed_note(&id).unwrap()["text"], "A new secret.");
}

#[test]
fn an_agent_deletes_and_rewrites_its_own_project_notes_without_asking() {
    let tab = Tab::new();
    tab.project();
    let id = tab.agents_note("The lamp is red.", "project");
    let note = tab.listed_note(&id).unwrap();
    assert_eq!(note["author"], "agent:editor");
    // Another agent, too: notes agents wrote in the project are the agents'.
    let r = tab.tool(
        "agent:other",
        "update_memory_note",
        json!({"id": id, "text": "The lamp is green."}),
    );
    assert_eq!(r["status"], "success", "{r}");
    let r = tab.tool("agent:editor", "delete_memory_note", json!({"id": id}));
    assert_eq!(r["status"], "success", "{r}");
    assert!(r["data"]["restorableUntilMs"].as_u64().is_some());
    assert!(tab.cards().is_empty());
    assert_eq!(tab.trash(), vec![id]);
}

#[test]
fn the_writer_changes_and_deletes_any_note_directly() {
    let tab = Tab::new();
    tab.project();
    let global = tab.agents_note("Global rule.", "global");
    let own = tab.writers_note(WRITERS, "project");
    for id in [&global, &own] {
        let r = tab.tool("user", "delete_memory_note", json!({"id": id}));
        assert_eq!(r["status"], "success", "{r}");
    }
    assert!(tab.cards().is_empty());
    assert_eq!(tab.trash().len(), 2);
    // A note the writer rewrites becomes the writer's: agents then ask.
    let agents = tab.agents_note("The lamp is red.", "project");
    let r = tab.tool(
        "user",
        "update_memory_note",
        json!({"id": agents, "text": "The lamp is red, and it matters."}),
    );
    assert_eq!(r["data"]["note"]["author"], "user", "{r}");
    let r = tab.tool("agent:editor", "delete_memory_note", json!({"id": agents}));
    waits(&tab, &r);
}

#[test]
fn the_approval_policies_of_the_note_tools_can_be_set() {
    let tab = Tab::new();
    tab.project();
    let writers = tab.writers_note(WRITERS, "project");
    let agents = tab.agents_note("The lamp is red.", "project");
    // Strict: every agent change of a note asks, its own too.
    tab.ok(
        "set_settings",
        json!({"approvalPolicies": {"delete_memory_note": "strict"}}),
    );
    let r = tab.tool("agent:editor", "delete_memory_note", json!({"id": agents}));
    let card = waits(&tab, &r);
    assert!(card["reason"].as_str().unwrap().contains("strict"));
    tab.ok(
        "approve",
        json!({"callId": card["callId"], "decision": "reject"}),
    );
    // Permissive: the writer chose to let agents delete notes freely.
    tab.ok(
        "set_settings",
        json!({"approvalPolicies": {"delete_memory_note": "permissive"}}),
    );
    let r = tab.tool("agent:editor", "delete_memory_note", json!({"id": writers}));
    assert_eq!(r["status"], "success", "{r}");
    // The update tool keeps its own (standard) policy.
    let r = tab.tool(
        "agent:editor",
        "update_memory_note",
        json!({"id": agents, "text": "The lamp is blue."}),
    );
    assert_eq!(r["status"], "success", "{r}");
}

#[test]
fn deleted_notes_are_hidden_from_search_and_context_and_can_be_restored() {
    let tab = Tab::new();
    tab.project();
    let agents = tab.agents_note("The lighthouse keeper is called Jonas.", "project");
    let writers = tab.writers_note("The lighthouse must never be lit.", "project");
    assert_eq!(tab.found("lighthouse").len(), 2);
    assert!(tab.context("lighthouse").contains("Jonas"));

    let r = tab.tool("agent:editor", "delete_memory_note", json!({"id": agents}));
    assert_eq!(r["status"], "success", "{r}");
    tab.tool("user", "delete_memory_note", json!({"id": writers}));
    assert!(tab.found("lighthouse").is_empty());
    let block = tab.context("lighthouse keeper Jonas");
    assert!(
        !block.contains("Jonas") && !block.contains("never be lit"),
        "{block}"
    );
    assert!(tab.listed().is_empty());
    // An update of a deleted note says so.
    let r = tab.tool(
        "agent:editor",
        "update_memory_note",
        json!({"id": agents, "text": "x"}),
    );
    assert_eq!(r["data"]["code"], "not_found");
    assert!(
        r["data"]["message"]
            .as_str()
            .unwrap()
            .contains("restore_memory_note"),
        "{r}"
    );

    // The trash survives a reload.
    let tab = tab.reload();
    let project = tab.ok("list_projects", json!({}))["projects"][0]["id"].clone();
    tab.ok("open_project", json!({"id": project}));
    let trash = tab.trash();
    assert_eq!(trash.len(), 2);
    assert!(trash.contains(&agents) && trash.contains(&writers));

    // An agent restores what an agent deleted, not what the writer deleted.
    let r = tab.tool(
        "agent:editor",
        "restore_memory_note",
        json!({"id": writers}),
    );
    assert_eq!(r["data"]["code"], "not_allowed", "{r}");
    let r = tab.tool("agent:other", "restore_memory_note", json!({"id": agents}));
    assert_eq!(r["status"], "success", "{r}");
    // The writer restores from the page.
    let restored = tab.ok("memory_restore", json!({"id": writers}));
    assert_eq!(
        restored["note"]["text"],
        "The lighthouse must never be lit."
    );
    assert!(tab.trash().is_empty());
    assert_eq!(tab.found("lighthouse").len(), 2);
    assert!(tab.context("lighthouse keeper").contains("Jonas"));
    assert_eq!(
        tab.err("memory_restore", json!({"id": writers})),
        "invalid_params"
    );
    assert!(tab
        .events
        .peek()
        .iter()
        .any(|e| e.kind == "memory_changed" && e.data["restored"] == writers.as_str()));
    // Restored notes are saved as such.
    let stored = tab.stored_note(&writers).unwrap();
    assert!(stored["note"].get("deletedMs").is_none(), "{stored}");
}

#[test]
fn deleted_notes_are_purged_after_thirty_days() {
    let tab = Tab::new();
    tab.project();
    let old = tab.agents_note("An old guess about the ending.", "project");
    tab.tool("agent:editor", "delete_memory_note", json!({"id": old}));
    tab.clock.advance(TRASH_RETENTION_MS - 1);
    assert_eq!(tab.trash(), vec![old.clone()], "still restorable on day 29");
    tab.clock.advance(1);
    assert!(tab.trash().is_empty(), "30 days on: no longer listed");
    assert_eq!(tab.err("memory_restore", json!({"id": old})), "not_found");
    let r = tab.tool("agent:editor", "restore_memory_note", json!({"id": old}));
    assert_eq!(r["data"]["code"], "not_found", "{r}");
    assert!(
        tab.stored_note(&old).is_some(),
        "kept until the next note write"
    );
    // The next note write purges it, in memory and in the store.
    tab.writers_note("A new note.", "project");
    assert!(tab.stored_note(&old).is_none());
    // A younger deleted note stays.
    let young = tab.agents_note("A newer guess.", "project");
    tab.tool("agent:editor", "delete_memory_note", json!({"id": young}));
    tab.clock.advance(10 * DAY);
    tab.agents_note("Another note.", "project");
    assert!(tab.stored_note(&young).is_some());
    let tab = tab.reload();
    let project = tab.ok("list_projects", json!({}))["projects"][0]["id"].clone();
    tab.ok("open_project", json!({"id": project}));
    assert_eq!(tab.trash(), vec![young]);
    let exported = tab.ok("export_project", json!({}));
    let ids: Vec<&str> = exported["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    assert!(!ids.contains(&old.as_str()), "{ids:?}");
}

#[test]
fn an_old_stored_note_without_an_author_loads_as_the_writers() {
    let tab = Tab::new();
    let project = tab.project();
    // A note record as stored before notes had authors.
    let mut batch = Batch::new();
    batch.put_value(
        Table::Notes,
        json!({"id": "old-1", "project": project, "tags": [], "updatedMs": 5,
               "note": {"id": "old-1", "project": project, "text": "Never kill the dog.",
                        "noteType": "preference", "scope": "project", "tags": [],
                        "importance": 4, "createdMs": 5, "updatedMs": 5, "version": 1,
                        "previous": []}}),
    );
    block_on(tab.store.commit(batch)).unwrap();
    let tab = tab.reload();
    tab.ok("open_project", json!({"id": project}));
    assert_eq!(tab.listed_note("old-1").unwrap()["author"], "user");
    let r = tab.tool("agent:editor", "delete_memory_note", json!({"id": "old-1"}));
    waits(&tab, &r);
    assert!(tab.listed_note("old-1").is_some());
}

#[test]
fn an_import_marks_every_notes_author_import() {
    let tab = Tab::new();
    tab.project();
    let agents = tab.agents_note("An agent's fact.", "project");
    let deleted = tab.agents_note("A deleted fact.", "project");
    tab.tool("agent:editor", "delete_memory_note", json!({"id": deleted}));
    let mut doc = tab.ok("export_project", json!({}));
    assert_eq!(
        doc["notes"].as_array().unwrap().len(),
        3,
        "bedside, live, deleted"
    );
    // A forged document calls every note an agent's.
    for note in doc["notes"].as_array_mut().unwrap() {
        note["author"] = json!("agent:forger");
        if note.get("deletedBy").is_some() {
            note["deletedBy"] = json!("agent:forger");
        }
    }
    let other = Tab::new();
    other.ok("import_project", json!({"document": doc}));
    let note = other.listed_note(&agents).unwrap();
    assert_eq!(note["author"], "import");
    let r = other.tool(
        "agent:editor",
        "update_memory_note",
        json!({"id": agents, "text": "Rewritten."}),
    );
    waits(&other, &r);
    assert_eq!(
        other.listed_note(&agents).unwrap()["text"],
        "An agent's fact."
    );
    // The deleted note came along, in the trash, and only the writer can restore it.
    assert_eq!(other.trash(), vec![deleted.clone()]);
    let r = other.tool(
        "agent:editor",
        "restore_memory_note",
        json!({"id": deleted}),
    );
    assert_eq!(r["data"]["code"], "not_allowed", "{r}");
    other.ok("memory_restore", json!({"id": deleted}));
    assert!(other.listed_note(&deleted).is_some());
}

#[test]
fn the_memory_tools_say_deletions_can_be_restored_and_may_need_approval() {
    let tab = Tab::new();
    let tools = tab.ok("list_tools", json!({}))["tools"].clone();
    let description = |name: &str| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["description"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("no tool {name}"))
    };
    let delete = description("delete_memory_note");
    assert!(delete.contains("restore_memory_note") && delete.contains("30 days"));
    assert!(delete.contains("approval"));
    assert!(description("update_memory_note").contains("approval"));
    assert!(description("restore_memory_note").contains("30 days"));
}

/// The id of the first search hit in the newest tool result the model was sent.
fn first_hit(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    let result = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap();
    let result: Value = serde_json::from_str(result).unwrap();
    result["data"]["hits"][0]["id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_run_pauses_when_its_agent_would_delete_the_writers_note() {
    let reactions: Vec<Reaction> = vec![
        Box::new(|_| {
            common::page::calls("call_1", "search_memory", json!({"query": "secret sea"}))
        }),
        Box::new(|body| {
            let id = first_hit(body);
            common::page::calls("call_2", "delete_memory_note", json!({"id": id}))
        }),
        // Were the delete not held for approval, the run would go on and end here.
        Box::new(|_| common::page::says("Done.")),
    ];
    let page = Page::reacting(reactions);
    page.project();
    page.configure();
    let written = page.ok(
        "write_memory_notes",
        json!({"notes": [{"text": WRITERS, "noteType": "preference"}]}),
    );
    let id = written["written"][0].as_str().unwrap().to_string();
    let run = page.ok(
        "run",
        json!({"prompt": "Tidy up your memory.", "runId": "r1"}),
    );
    assert_eq!(run["status"], "paused", "{run}");
    let listed = page.ok("memory", json!({}));
    assert_eq!(listed["notes"][0]["id"], id.as_str(), "nothing deleted yet");
    let cards = page.ok("list_approvals", json!({}))["approvals"].clone();
    assert_eq!(cards[0]["tool"], "delete_memory_note");
    assert_eq!(cards[0]["entityId"], id.as_str());
    assert_eq!(cards[0]["current"]["text"], WRITERS);
}
