//! Proactive memory through the worker protocol: watched entities monitored after every
//! edit (observation notes and `suggestion` events naming the chapter and the line), the
//! bedside note kept up to date after runs and analyses (versions kept, the model's plan on
//! opt-in), the idle thinker (off without a model, bounded by its daily budget), and
//! suggestions accepted (a goal or a note) or dismissed.
#![cfg(not(target_arch = "wasm32"))]

use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::llm::client::Scripted;
use draftsmith::memory::bedside::{IDLE_HEADING, PLAN_HEADING, STATUS_HEADING};
use draftsmith::store::{MemoryStore, Store, Table};
use draftsmith::{Core, Event, ManualClock, RecordingSink, SequentialIds};
use futures::executor::block_on;
use serde_json::{json, Value};

mod common;
use common::page::{says, NeverSleeper, Reaction, Yielding};

const ONE: &str = "Mara climbed the stair.\nThe lamp was dark.";
const TWO: &str = "Morning came grey.\n\nThe wind rose over the harbour.\n";

/// A page on a core with a manual clock and a scripted model.
struct P {
    core: Core,
    events: Rc<RecordingSink>,
    store: Rc<MemoryStore>,
    clock: Rc<ManualClock>,
    transport: Rc<Yielding>,
}

impl P {
    fn new(transport: Yielding) -> Self {
        Self::on(Rc::new(MemoryStore::new()), transport)
    }

    fn on(store: Rc<MemoryStore>, transport: Yielding) -> Self {
        let events = Rc::new(RecordingSink::default());
        let clock = Rc::new(ManualClock::new(1_000));
        let transport = Rc::new(transport);
        let core = Core::new(Env {
            clock: clock.clone(),
            ids: Rc::new(SequentialIds::new("id")),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: events.clone(),
            store: store.clone(),
        })
        .with_llm(transport.clone(), Rc::new(NeverSleeper));
        Self {
            core,
            events,
            store,
            clock,
            transport,
        }
    }

    fn send(&self, kind: &str, params: Value) -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
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

    /// A project with two chapters; their ids.
    fn project(&self) -> (String, String) {
        let p = self.ok(
            "create_project",
            json!({"name": "Lighthouse", "chapters": [{"title": "The Stair", "text": ONE}, {"title": "Morning", "text": TWO}]}),
        );
        let id = |i: usize| p["chapters"][i]["id"].as_str().unwrap().to_string();
        (id(0), id(1))
    }

    fn configure(&self, extra: Value) {
        let mut settings =
            json!({"provider": "openai", "baseUrl": "http://model.test/v1", "model": "m"});
        for (k, v) in extra.as_object().unwrap() {
            settings[k] = v.clone();
        }
        self.ok("set_settings", settings);
    }

    fn tool(&self, tool: &str, args: Value, origin: &str) -> Value {
        let r = self.ok(
            "execute",
            json!({"tool": tool, "args": args, "origin": origin}),
        );
        assert_eq!(r["status"], "success", "{tool}: {r}");
        r
    }

    fn watch(&self, name: &str, kind: &str, priority: &str) {
        self.tool(
            "watch_entity",
            json!({"name": name, "type": kind, "reason": format!("{name} must stay consistent"), "priority": priority}),
            "agent:keeper",
        );
    }

    fn chapter(&self, id: &str) -> (String, u64) {
        let c = self.ok("get_chapter", json!({ "chapter": id }));
        (
            c["text"].as_str().unwrap().to_string(),
            c["version"].as_u64().unwrap(),
        )
    }

    /// The writer types `text` at the end of chapter `id`, one keystroke (one change) a char.
    fn type_at_end(&self, id: &str, text: &str) {
        for ch in text.chars() {
            let (current, version) = self.chapter(id);
            let len = current.chars().count();
            self.ok(
                "apply_user_change",
                json!({"chapter": id, "baseVersion": version,
                       "changes": [{"retain": len}, {"insert": ch.to_string()}]}),
            );
            self.clock.advance(150);
        }
    }

    /// The `suggestion` events since the last call.
    fn suggestion_events(&self) -> Vec<Value> {
        self.events
            .take()
            .into_iter()
            .filter(|e: &Event| e.kind == "suggestion")
            .map(|e| e.data)
            .collect()
    }

    fn memory(&self) -> Value {
        self.ok("memory", json!({}))
    }

    fn monitor_notes(&self) -> Vec<Value> {
        self.memory()["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["author"] == "agent:monitor")
            .cloned()
            .collect()
    }

    fn pending(&self) -> Vec<Value> {
        self.ok("suggestions", json!({}))["suggestions"]
            .as_array()
            .unwrap()
            .clone()
    }
}

fn bedside(p: &P) -> Value {
    p.memory()["bedside"].clone()
}

#[test]
fn a_new_edit_mentions_a_watched_character_and_a_suggestion_event_arrives_with_the_chapter_and_the_line(
) {
    let p = P::new(Yielding::new(vec![]));
    let (one, two) = p.project();
    p.watch("Mara", "character", "medium");
    p.events.take();

    // The writer types a line naming her at the end of chapter 2 (line 4), key by key.
    p.type_at_end(&two, "Mara lit the lamp.");
    let events = p.suggestion_events();
    assert_eq!(
        events.len(),
        1,
        "one event for the one mention: {events:#?}"
    );
    let s = &events[0]["suggestion"];
    assert_eq!(events[0]["action"], "added");
    assert_eq!(
        events[0]["project"],
        p.ok("list_projects", json!({}))["current"]
    );
    assert_eq!(s["finding"], "mention");
    assert_eq!(s["source"], "monitor");
    assert_eq!(s["chapter"], two);
    assert_eq!(s["chapterNumber"], 2);
    assert_eq!(s["chapterTitle"], "Morning");
    assert_eq!(s["line"], 4);
    // The line as it was when her name was finished (a space after it).
    assert_eq!(s["lineText"], "Mara");
    assert_eq!(s["entity"]["name"], "Mara");
    assert_eq!(s["state"], "pending");
    // The observation note, the monitor's.
    let notes = p.monitor_notes();
    assert_eq!(notes.len(), 1, "{notes:#?}");
    assert_eq!(notes[0]["noteType"], "observation");
    assert_eq!(notes[0]["id"], s["observation"]);
    let text = notes[0]["text"].as_str().unwrap();
    assert!(text.contains("chapter 2 (“Morning”), line 4"), "{text}");

    // An agent's edit naming her in chapter 1 is another finding (another chapter).
    p.tool(
        "update_manuscript",
        json!({"searchText": "The lamp was dark.", "replacementText": "The lamp was dark. Mara waited."}),
        "agent:writer",
    );
    let events = p.suggestion_events();
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["suggestion"]["chapter"], one);
    assert_eq!(events[0]["suggestion"]["line"], 2);
    assert_eq!(p.pending().len(), 2);
    // Saved: a new core on the same store lists the same suggestions.
    let q = P::on(p.store.clone(), Yielding::new(vec![]));
    let id = q.ok("list_projects", json!({}))["projects"][0]["id"].clone();
    q.ok("open_project", json!({ "id": id }));
    assert_eq!(q.pending(), p.pending());
}

#[test]
fn unrelated_edits_and_words_still_being_typed_raise_nothing() {
    let p = P::new(Yielding::new(vec![]));
    let (one, two) = p.project();
    // Nothing watched: no event.
    p.type_at_end(&two, "Mara came. ");
    assert!(p.suggestion_events().is_empty());
    p.watch("Mara", "character", "medium");
    p.watch("Old Tom", "character", "low");
    p.events.take();
    // Unrelated typing, a word on its way to the name, and a low-priority mention.
    p.type_at_end(&two, "The wind rose. Old Tom nodded. Mar");
    assert!(p.suggestion_events().is_empty());
    assert!(p.monitor_notes().is_empty());
    // Editing next to (not on) an earlier mention reports nothing again.
    p.type_at_end(&one, " Then the door.");
    assert!(
        p.suggestion_events().is_empty(),
        "chapter 1 already named Mara, untouched"
    );
    // Finishing the word is a mention.
    p.type_at_end(&two, "a!");
    assert_eq!(p.suggestion_events().len(), 1);
}

#[test]
fn removing_or_changing_a_watched_mention_and_undo_are_observed() {
    let p = P::new(Yielding::new(vec![]));
    let (one, _) = p.project();
    p.watch("Mara", "character", "medium");
    p.events.take();

    // An agent rewrites the line that named her: the mention is gone.
    p.tool(
        "update_manuscript",
        json!({"searchText": "Mara climbed", "replacementText": "Someone climbed"}),
        "agent:writer",
    );
    let events = p.suggestion_events();
    assert_eq!(events.len(), 1, "{events:#?}");
    let s = &events[0]["suggestion"];
    assert_eq!(s["finding"], "changed");
    assert_eq!(s["chapter"], one);
    assert_eq!(s["line"], 1);
    // The line as it read before the edit.
    assert_eq!(s["lineText"], "Mara climbed the stair.");
    let notes = p.monitor_notes();
    assert_eq!(notes.len(), 1, "{notes:#?}");
    let text = notes[0]["text"].as_str().unwrap();
    assert!(
        text.contains("removed or changed in chapter 1 (“The Stair”), line 1"),
        "{text}"
    );

    // Undo puts her back: the monitor sees undo's edit too (a mention).
    p.ok("undo", json!({}));
    let events = p.suggestion_events();
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["suggestion"]["finding"], "mention");
    assert_eq!(p.chapter(&one).0, ONE);

    // Rewriting next to her name keeps it: nothing.
    p.tool(
        "update_manuscript",
        json!({"searchText": "climbed", "replacementText": "ran up"}),
        "agent:writer",
    );
    assert!(p.suggestion_events().is_empty());

    // The writer backspaces over the end of her name and retypes it: nothing, while the word
    // at the caret is still the start of the name.
    // The writer's change at the start of chapter 1: `ops(len)`, `len` its length in chars.
    let writer_change = |ops: &dyn Fn(usize) -> Value| {
        let (text, version) = p.chapter(&one);
        let changes = ops(text.chars().count());
        p.ok(
            "apply_user_change",
            json!({"chapter": one, "baseVersion": version, "changes": changes}),
        );
    };
    writer_change(&|len| json!([{"retain": 3}, {"delete": 1}, {"retain": len - 4}]));
    assert!(p.suggestion_events().is_empty());
    writer_change(&|len| json!([{"retain": 3}, {"insert": "a"}, {"retain": len - 3}]));
    assert!(p.suggestion_events().is_empty());
    // The writer replaces her name with "She": the changed mention is reported (the pending
    // suggestion for this chapter is updated).
    writer_change(&|len| json!([{"delete": 4}, {"insert": "She"}, {"retain": len - 4}]));
    let events = p.suggestion_events();
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["suggestion"]["finding"], "changed");
    assert_eq!(events[0]["action"], "updated");
    assert_eq!(
        events[0]["suggestion"]["lineText"],
        "Mara ran up the stair."
    );
}

#[test]
fn an_agents_change_to_a_watched_characters_bible_entry_is_observed_and_the_writers_is_not() {
    let p = P::new(Yielding::new(vec![]));
    p.project();
    p.watch("Mara", "character", "medium");
    // The writer's own entry: not reported.
    p.tool(
        "character_create_entry",
        json!({"name_src": "Mara", "aliases": ["the keeper's girl"], "pronouns": "she/her"}),
        "user",
    );
    p.tool("character_create_entry", json!({"name_src": "Tom"}), "user");
    p.events.take();
    // An agent changes her notes: an observation and a suggestion naming the field.
    p.tool(
        "character_update_notes",
        json!({"character": "mara", "notes": "Afraid of heights."}),
        "agent:lore",
    );
    let events = p.suggestion_events();
    assert_eq!(events.len(), 1, "{events:#?}");
    let s = &events[0]["suggestion"];
    assert_eq!(s["finding"], "entry_changed");
    assert_eq!(s["entity"]["name"], "Mara");
    assert_eq!(s["word"], "notes");
    assert!(s["chapter"].is_null() && s["line"].is_null(), "{s}");
    let text = p.monitor_notes()[0]["text"].as_str().unwrap().to_string();
    assert!(
        text.contains("story-bible entry of the watched character Mara changed (notes): notes: Afraid of heights."),
        "{text}"
    );
    // Another character's entry is not watched: nothing.
    p.tool(
        "character_update_notes",
        json!({"character": "tom", "notes": "A fisherman."}),
        "agent:lore",
    );
    assert!(p.suggestion_events().is_empty());
}

#[test]
fn a_misspelt_name_is_an_issue_that_the_writer_accepts_as_a_note() {
    let p = P::new(Yielding::new(vec![]));
    let (_, two) = p.project();
    p.watch("Mara", "character", "high");
    p.events.take();
    p.type_at_end(&two, "Marra went home.");
    let events = p.suggestion_events();
    assert_eq!(events.len(), 1, "{events:#?}");
    let s = &events[0]["suggestion"];
    assert_eq!(s["finding"], "misspelling");
    assert_eq!(s["word"], "Marra");
    assert_eq!(
        (s["line"].as_u64(), s["lineText"].as_str()),
        (Some(4), Some("Marra"))
    );
    assert_eq!(s["noteType"], "issue");
    assert!(
        s["title"].as_str().unwrap().contains("misspelling of Mara"),
        "{s}"
    );
    let id = s["id"].as_str().unwrap().to_string();

    // Accepted: a note of the writer's, the suggestion no longer pending.
    let accepted = p.ok("accept_suggestion", json!({ "id": id }));
    assert_eq!(accepted["note"]["author"], "user");
    assert_eq!(accepted["note"]["noteType"], "issue");
    assert!(accepted["note"]["text"]
        .as_str()
        .unwrap()
        .contains("“Marra” in chapter 2 (“Morning”), line 4"));
    assert_eq!(accepted["suggestion"]["state"], "accepted");
    assert_eq!(
        accepted["suggestion"]["acceptedAs"]["note"],
        accepted["note"]["id"]
    );
    let note_id = accepted["note"]["id"].clone();
    assert!(p.memory()["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["id"] == note_id));
    assert!(p.pending().is_empty());
    let events = p.suggestion_events();
    assert_eq!(events.last().unwrap()["action"], "accepted");
    // Deciding twice is a conflict; an unknown id is not found; nothing changes.
    let notes = p.memory()["notes"].as_array().unwrap().len();
    assert_eq!(p.err("accept_suggestion", json!({ "id": id })), "conflict");
    assert_eq!(p.err("dismiss_suggestion", json!({ "id": id })), "conflict");
    assert_eq!(
        p.err("accept_suggestion", json!({"id": "nope"})),
        "not_found"
    );
    assert_eq!(p.memory()["notes"].as_array().unwrap().len(), notes);
    // Saved with its state.
    let all = p.ok("suggestions", json!({"all": true}))["suggestions"].clone();
    assert_eq!(all[0]["state"], "accepted");
}

#[test]
fn a_watched_rules_keyword_near_a_contradiction_word_is_flagged() {
    let p = P::new(Yielding::new(vec![]));
    let (one, _) = p.project();
    p.watch("Magic needs blood", "rule", "medium");
    p.events.take();
    // Near, in one sentence: flagged.
    p.tool(
        "append_to_manuscript",
        json!({"chapter": one, "text": "She worked the magic without a drop of blood."}),
        "agent:writer",
    );
    let events = p.suggestion_events();
    assert_eq!(events.len(), 1, "{events:#?}");
    let s = &events[0]["suggestion"];
    assert_eq!(s["finding"], "contradiction");
    assert_eq!(s["entity"]["type"], "rule");
    assert_eq!(s["chapter"], one);
    assert!(s["lineText"]
        .as_str()
        .unwrap()
        .contains("without a drop of blood"));
    assert!(s["text"].as_str().unwrap().contains("“without”"), "{s}");
    // The keyword far from any such word, or the word in another sentence: nothing.
    p.tool(
        "append_to_manuscript",
        json!({"chapter": one, "text": "Her magic answered. Nobody said no to breakfast."}),
        "agent:writer",
    );
    assert!(p.suggestion_events().is_empty());
}

#[test]
fn findings_are_deduplicated_and_a_dismissed_one_is_not_raised_again() {
    let p = P::new(Yielding::new(vec![]));
    let (_, two) = p.project();
    p.watch("Mara", "character", "medium");
    p.events.take();
    p.type_at_end(&two, "Mara ran. ");
    p.type_at_end(&two, "Then Mara slept.");
    // Two mentions in one chapter: one pending suggestion, updated; one note, updated.
    let events = p.suggestion_events();
    let actions: Vec<&str> = events
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["added", "updated"]);
    assert_eq!(p.pending().len(), 1);
    assert_eq!(p.pending()[0]["lineText"], "Mara ran. Then Mara");
    assert_eq!(p.monitor_notes().len(), 1);

    // A misspelling, dismissed: the same spelling later raises nothing, and writes no note.
    p.type_at_end(&two, " Marra woke.");
    let s = p.suggestion_events().pop().unwrap()["suggestion"].clone();
    assert_eq!(s["finding"], "misspelling");
    let dismissed = p.ok("dismiss_suggestion", json!({ "id": s["id"] }));
    assert_eq!(dismissed["suggestion"]["state"], "dismissed");
    assert_eq!(p.suggestion_events()[0]["action"], "dismissed");
    assert!(
        p.pending().iter().all(|x| x["id"] != s["id"]),
        "dismissed leaves the list"
    );
    let notes = p.monitor_notes().len();
    p.type_at_end(&two, "\nMarra again.");
    assert!(p.suggestion_events().is_empty());
    assert_eq!(p.monitor_notes().len(), notes);
}

fn goals(p: &P, list: &[(&str, u64)]) {
    for (title, progress) in list {
        p.tool(
            "create_goal",
            json!({"title": title, "progress": progress}),
            "agent:planner",
        );
    }
}

#[test]
fn the_bedside_note_evolves_after_runs_and_analyses_and_keeps_its_versions() {
    let p = P::new(Yielding::new(vec![
        says("Fine."),
        says("Again."),
        says("Third."),
    ]));
    p.project();
    p.configure(json!({}));
    // No goals, no analysis: a run leaves the bedside note as it is.
    p.ok("run", json!({"prompt": "hello"}));
    let first = bedside(&p);
    assert!(!first["text"].as_str().unwrap().contains(STATUS_HEADING));
    assert_eq!(first["previous"].as_array().unwrap().len(), 0);
    assert_eq!(first["version"], 1);

    goals(&p, &[("Draft chapter 3", 40), ("Fix the ending", 0)]);
    p.ok("run", json!({"prompt": "hello again"}));
    let second = bedside(&p);
    let text = second["text"].as_str().unwrap();
    assert_eq!(
        text,
        format!("{}\n\n{STATUS_HEADING}\nActive goals (2):\n- Draft chapter 3: 40%\n- Fix the ending: 0%", first["text"].as_str().unwrap())
    );
    assert_eq!(second["version"], 2);
    assert_eq!(second["previous"][0]["text"], first["text"]);

    // The same status again: no new version.
    p.ok("run", json!({"prompt": "third"}));
    assert_eq!(bedside(&p)["version"], 2);

    // An analysis (from the page, no model call: interpret false) adds its figures.
    p.tool(
        "run_analysis",
        json!({"section": "pacing", "interpret": false}),
        "user",
    );
    let third = bedside(&p);
    let text = third["text"].as_str().unwrap();
    assert_eq!(third["version"], 3);
    assert!(
        text.contains("Latest analysis:\n- pacing (manuscript): 2 chapters, "),
        "{text}"
    );
    assert!(text.contains("words per sentence"), "{text}");
    // The agents' plan stays above the status when they rewrite it.
    p.tool(
        "evolve_bedside_note",
        json!({"text": "Finish act one first."}),
        "agent:planner",
    );
    p.tool(
        "update_goal",
        json!({"id": p.memory()["goals"][0]["id"], "progress": 60}),
        "agent:planner",
    );
    p.tool(
        "run_analysis",
        json!({"section": "characters", "interpret": false}),
        "user",
    );
    let text = bedside(&p)["text"].as_str().unwrap().to_string();
    assert!(
        text.starts_with("Finish act one first.\n\n## Status"),
        "{text}"
    );
    assert!(
        text.contains("- Draft chapter 3: 60%")
            && text.contains("- characters (manuscript): most named: "),
        "{text}"
    );
    assert_eq!(bedside(&p)["previous"].as_array().unwrap().len(), 4);
    // Three model calls in all: the runs; the bedside status needs none.
    assert_eq!(p.transport.requests().len(), 3);
    // Saved: the figures and the note load back in a new core.
    let q = P::on(p.store.clone(), Yielding::new(vec![]));
    let id = q.ok("list_projects", json!({}))["projects"][0]["id"].clone();
    q.ok("open_project", json!({ "id": id }));
    assert_eq!(bedside(&q)["text"], text.as_str());
}

/// A model for the bedside plan that reads the goals from the status it is shown.
fn planner() -> Reaction {
    Box::new(|body: &Value| {
        let prompt = body["messages"][1]["content"].as_str().unwrap_or_default();
        let goal = prompt
            .lines()
            .find_map(|l| l.strip_prefix("- ").and_then(|g| g.split(':').next()))
            .unwrap_or("nothing");
        says(&format!("- Work on {goal}."))
    })
}

#[test]
fn with_the_writers_opt_in_the_model_adds_a_short_plan_and_a_failure_leaves_the_status() {
    let run_answer: Reaction = Box::new(|_| says("Done."));
    let p = P::new(Yielding::reacting(vec![run_answer, planner()]));
    p.project();
    p.configure(json!({"bedsidePlan": true}));
    goals(&p, &[("Draft chapter 3", 40)]);
    p.ok("run", json!({"prompt": "go"}));
    let requests = p.transport.requests();
    assert_eq!(requests.len(), 2);
    let plan_call: Value = serde_json::from_str(&requests[1].body).unwrap();
    assert!(plan_call.get("tools").is_none());
    assert!(plan_call["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("bedside note"));
    let text = bedside(&p)["text"].as_str().unwrap().to_string();
    assert!(
        text.ends_with(&format!("{PLAN_HEADING}\n- Work on Draft chapter 3.")),
        "{text}"
    );
    assert!(text.contains("- Draft chapter 3: 40%"));

    // The plan's call fails: the status alone is written.
    let failing: Reaction =
        Box::new(|_| Scripted::json(400, "{\"error\": {\"message\": \"bad request\"}}"));
    let run_answer: Reaction = Box::new(|_| says("Done."));
    let q = P::new(Yielding::reacting(vec![run_answer, failing]));
    q.project();
    q.configure(json!({"bedsidePlan": true}));
    goals(&q, &[("Draft chapter 3", 40)]);
    let r = q.ok("run", json!({"prompt": "go"}));
    assert_eq!(r["status"], "finished");
    let text = bedside(&q)["text"].as_str().unwrap().to_string();
    assert!(
        text.contains(STATUS_HEADING) && !text.contains(PLAN_HEADING),
        "{text}"
    );

    // Without the opt-in no model call is made for it.
    let r = P::new(Yielding::new(vec![says("Done.")]));
    r.project();
    r.configure(json!({}));
    goals(&r, &[("Draft chapter 3", 40)]);
    r.ok("run", json!({"prompt": "go"}));
    assert_eq!(r.transport.requests().len(), 1);
    assert!(!bedside(&r)["text"].as_str().unwrap().contains(PLAN_HEADING));
}

/// A thinker model that proposes one goal from the first goal (or watched entity) in the
/// prompt it is shown, and says how many it has seen.
fn thinker() -> Rc<common::page::Brain> {
    Rc::new(|body: &Value| {
        let prompt = body["messages"][1]["content"].as_str().unwrap_or_default();
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        assert!(system.contains("proactive thinker"), "{system}");
        let section = |name: &str| -> Vec<String> {
            prompt
                .split(&format!("{name}:\n"))
                .nth(1)
                .unwrap_or("")
                .lines()
                .take_while(|l| l.starts_with("- "))
                .map(|l| l[2..].to_string())
                .collect()
        };
        let goals = section("Active goals");
        let first = goals
            .first()
            .and_then(|g| g.split(':').next())
            .unwrap_or("the book");
        says(&format!(
            "[{{\"kind\": \"goal\", \"title\": \"Next step for {first} ({} goals)\", \"text\": \"Pick up {first} where you left it.\"}}]",
            goals.len()
        ))
    })
}

#[test]
fn the_idle_thinker_is_off_without_a_model_waits_for_quiet_and_keeps_to_its_budget() {
    let store = Rc::new(MemoryStore::new());
    let p = P::on(store.clone(), Yielding::thinking(thinker()));
    let (one, _) = p.project();
    // No model: it never thinks.
    let idle = p.ok("writer_idle", json!({}));
    assert_eq!(
        (idle["thought"].as_bool(), idle["reason"].as_str()),
        (Some(false), Some("no_model"))
    );
    assert!(p.transport.requests().is_empty());

    p.configure(json!({"idleThinking": {"afterMs": 5000, "maxCallsPerDay": 2}}));
    goals(&p, &[("Draft chapter 3", 40)]);
    p.type_at_end(&one, " Then.");
    // Typing just now: not idle yet.
    let idle = p.ok("writer_idle", json!({"idleMs": 9000}));
    assert_eq!(idle["reason"], "not_idle");
    assert!(idle["waitMs"].as_u64().unwrap() > 0);
    p.clock.advance(5_000);
    p.events.take();
    let idle = p.ok("writer_idle", json!({}));
    assert_eq!(idle["thought"], true, "{idle}");
    assert_eq!(idle["callsToday"], 1);
    let s = &idle["suggestions"][0];
    assert_eq!(s["title"], "Next step for Draft chapter 3 (1 goals)");
    assert_eq!(
        (s["source"].as_str(), s["kind"].as_str()),
        (Some("thinker"), Some("goal"))
    );
    let events = p.suggestion_events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["suggestion"]["id"], s["id"]);
    // One call with the fixed prompt: no tools; goals, bedside note and observations shown.
    let request: Value = serde_json::from_str(&p.transport.requests()[0].body).unwrap();
    assert!(request.get("tools").is_none());
    let prompt = request["messages"][1]["content"].as_str().unwrap();
    for part in [
        "Bedside note:",
        "Active goals:\n- Draft chapter 3: 40%",
        "Recent observations:",
        "Pending suggestions",
    ] {
        assert!(prompt.contains(part), "{part}: {prompt}");
    }

    // Nothing new since: no call.
    assert_eq!(p.ok("writer_idle", json!({}))["reason"], "nothing_new");
    assert_eq!(p.transport.requests().len(), 1);
    // Something new: a second call (its prompt lists the pending suggestion).
    goals(&p, &[("Fix the ending", 0)]);
    let idle = p.ok("writer_idle", json!({}));
    assert_eq!(idle["callsToday"], 2);
    let request: Value = serde_json::from_str(&p.transport.requests()[1].body).unwrap();
    assert!(request["messages"][1]["content"]
        .as_str()
        .unwrap()
        .contains("- Next step for Draft chapter 3 (1 goals)"));
    // The budget (2 a day) is spent.
    goals(&p, &[("Third goal", 0)]);
    assert_eq!(p.ok("writer_idle", json!({}))["reason"], "budget_spent");
    assert_eq!(p.transport.requests().len(), 2);
    // ... also for a new core on the same store (the count is stored) ...
    let q = P::on(store.clone(), Yielding::thinking(thinker()));
    let id = q.ok("list_projects", json!({}))["projects"][0]["id"].clone();
    q.ok("open_project", json!({ "id": id }));
    assert_eq!(q.ok("writer_idle", json!({}))["reason"], "budget_spent");
    assert!(q.transport.requests().is_empty());
    // ... until the next day.
    q.clock.advance(86_400_000);
    let idle = q.ok("writer_idle", json!({}));
    assert_eq!(
        (idle["thought"].as_bool(), idle["callsToday"].as_u64()),
        (Some(true), Some(1))
    );
    // Switched off: no call.
    q.ok("set_settings", json!({"idleThinking": {"enabled": false}}));
    goals(&q, &[("Fourth goal", 0)]);
    assert_eq!(q.ok("writer_idle", json!({}))["reason"], "disabled");
    assert_eq!(q.transport.requests().len(), 1);
}

#[test]
fn accepting_a_thinker_suggestion_makes_a_goal_and_dismissing_removes_it() {
    let p = P::new(Yielding::thinking(thinker()));
    p.project();
    p.configure(json!({}));
    goals(&p, &[("Draft chapter 3", 40)]);
    let first = p.ok("writer_idle", json!({}))["suggestions"][0].clone();
    p.clock.advance(1_000);
    goals(&p, &[("Fix the ending", 0)]);
    let second = p.ok("writer_idle", json!({}))["suggestions"][0].clone();
    assert_eq!(p.pending().len(), 2);

    let accepted = p.ok("accept_suggestion", json!({ "id": first["id"] }));
    assert_eq!(accepted["goal"]["title"], first["title"]);
    assert_eq!(
        accepted["goal"]["description"],
        "Pick up Draft chapter 3 where you left it."
    );
    assert_eq!(accepted["goal"]["status"], "active");
    let memory = p.memory();
    assert!(memory["goals"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["title"] == first["title"]));

    p.ok("dismiss_suggestion", json!({ "id": second["id"] }));
    assert!(p.pending().is_empty());
    let goals_now = p.memory()["goals"].as_array().unwrap().len();
    assert_eq!(goals_now, 3, "dismissing makes nothing");
    // The goal is saved: a new core sees it, and the decided suggestions.
    let q = P::on(p.store.clone(), Yielding::new(vec![]));
    let id = q.ok("list_projects", json!({}))["projects"][0]["id"].clone();
    q.ok("open_project", json!({ "id": id }));
    assert_eq!(q.memory()["goals"].as_array().unwrap().len(), 3);
    let all = q.ok("suggestions", json!({"all": true}))["suggestions"].clone();
    let states: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["dismissed", "accepted"]);
    let records = block_on(q.store.get_all(Table::Meta)).unwrap();
    assert_eq!(
        records.iter().filter(|r| r["kind"] == "suggestion").count(),
        2
    );
    // A thinker answer that is not a JSON list suggests nothing and says so.
    let r = P::new(Yielding::new(vec![says("I would rather not.")]));
    r.project();
    r.configure(json!({}));
    let idle = r.ok("writer_idle", json!({}));
    assert_eq!(idle["reason"], "failed");
    assert!(
        idle["message"].as_str().unwrap().contains("no JSON array"),
        "{idle}"
    );
    assert!(r.pending().is_empty());
}

#[test]
fn a_job_units_run_evolves_the_bedside_note_with_the_unit_and_asks_the_model_nothing_more() {
    use futures::executor::LocalPool;
    use futures::task::LocalSpawnExt;
    let pool = std::cell::RefCell::new(LocalPool::new());
    let spawner = pool.borrow().spawner();
    let transport = Rc::new(Yielding::thinking(Rc::new(|_: &Value| says("Unit done."))));
    let store = Rc::new(MemoryStore::new());
    let core = Core::new(Env {
        clock: Rc::new(ManualClock::new(1_000)),
        ids: Rc::new(SequentialIds::new("id")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: Rc::new(RecordingSink::default()),
        store: store.clone(),
    })
    .with_llm(transport.clone(), Rc::new(NeverSleeper))
    .with_spawner(Rc::new(move |f| {
        let _ = spawner.spawn_local(f);
    }));
    let ok = |kind: &str, params: Value| -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        let r: Value =
            serde_json::from_str(&pool.borrow_mut().run_until(core.handle_text(&text))).unwrap();
        assert_eq!(r["ok"], true, "{kind} -> {r}");
        r["result"].clone()
    };
    ok(
        "create_project",
        json!({"name": "J", "chapters": [{"text": ONE}]}),
    );
    ok(
        "set_settings",
        json!({"provider": "openai", "baseUrl": "http://model.test/v1", "model": "m", "bedsidePlan": true}),
    );
    let goal = ok(
        "execute",
        json!({"tool": "create_goal", "args": {"title": "Draft chapter 3", "progress": 10}, "origin": "agent:planner"}),
    );
    assert_eq!(goal["status"], "success");
    let job = ok(
        "start_job",
        json!({"kind": "run", "prompt": "Look around."}),
    );
    pool.borrow_mut().run_until_stalled();
    let status = ok("job_status", json!({"job": job["id"]}));
    assert_eq!(status["state"], "done", "{status}");
    let text = ok("memory", json!({}))["bedside"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.contains(&format!(
            "{STATUS_HEADING}\nActive goals (1):\n- Draft chapter 3: 10%"
        )),
        "{text}"
    );
    // The unit's one model call; a job unit never asks for the plan.
    assert_eq!(transport.requests().len(), 1);
    assert!(!text.contains(PLAN_HEADING));
    // Saved with the unit: the stored bedside note has the status.
    let notes = block_on(store.get_all(Table::Notes)).unwrap();
    assert!(notes.iter().any(|n| n["note"]["text"]
        .as_str()
        .is_some_and(|t| t.contains(STATUS_HEADING))));
}

#[test]
fn the_idle_thinker_evolves_the_bedside_note_with_a_short_plan_and_reminders() {
    let p = P::on(Rc::new(MemoryStore::new()), Yielding::thinking(thinker()));
    p.project();
    p.configure(json!({"idleThinking": {"afterMs": 1000, "maxCallsPerDay": 5}}));
    goals(&p, &[("Draft chapter 3", 40)]);
    let before = bedside(&p);
    let first = p.ok("writer_idle", json!({}));
    assert_eq!(first["thought"], true, "{first}");
    let note = bedside(&p);
    let text = note["text"].as_str().unwrap();
    assert!(
        text.ends_with(&format!(
            "{IDLE_HEADING}\nNext:\n- Next step for Draft chapter 3 (1 goals)"
        )),
        "{text}"
    );
    assert!(text.contains(STATUS_HEADING), "{text}");
    // Something new: the next thought's plan, and the first (still pending) as a reminder.
    goals(&p, &[("Fix the ending", 0)]);
    let second = p.ok("writer_idle", json!({}));
    assert_eq!(second["thought"], true, "{second}");
    let note = bedside(&p);
    let text = note["text"].as_str().unwrap();
    assert!(
        text.ends_with(&format!(
            "{IDLE_HEADING}\nNext:\n- Next step for Draft chapter 3 (2 goals)\nReminders (suggestions waiting for you):\n- Next step for Draft chapter 3 (1 goals)"
        )),
        "{text}"
    );
    // Versions are kept: the note before each thought is an earlier version.
    let previous: Vec<&str> = note["previous"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["text"].as_str().unwrap())
        .collect();
    assert!(previous.len() >= 2, "{note}");
    assert!(
        previous.iter().any(|t| t.ends_with("(1 goals)")),
        "{previous:?}"
    );
    assert!(before["version"].as_u64() < note["version"].as_u64());
}
