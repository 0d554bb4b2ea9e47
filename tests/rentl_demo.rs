//! The offline demo model (`www/llm-fixtures.mjs`, run in node) plays every rentl subagent
//! over the page's demo project (`www/src/demo-story.json`): the context, translation and
//! editing pipelines, unit by unit in the jobs protocol's task format, finish with every
//! scene described, every route outlined, every line translated once and every scene
//! checked, each subagent's first call a read and every call in its toolbox, all derived
//! from the tool results the real core returned.
//!
//! The units run here as runs of copies of the preset's subagents (`demo_<agent>`, the same
//! prompt and toolbox, allowed to talk to the writer), one after another, as a job with
//! concurrency 1 would run them. The demo model also drafts a new TextCraft chapter through
//! the core, and plans with an agent's to-do list. Needs `node` on the PATH (as the e2e layer does).
#![cfg(not(target_arch = "wasm32"))]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::rc::Rc;

use draftsmith::agent::presets::PIPELINES;
use draftsmith::agent::Catalog;
use draftsmith::llm::client::Scripted;
use draftsmith::store::MemoryStore;
use serde_json::{json, Value};

mod common;
use common::page::*;

const STORY: &str = include_str!("../www/src/demo-story.json");

/// The demo model in a node process: one request body a line in, one answer a line out.
struct DemoModel {
    child: Child,
    io: RefCell<(ChildStdin, BufReader<ChildStdout>)>,
    calls: RefCell<u64>,
    /// Every answer, with the task's first line: (task, tool name or None, arguments).
    log: RefCell<Vec<(String, Option<String>, Value)>>,
}

const SERVE: &str = r#"
import readline from 'node:readline';
const { decide } = await import(process.argv[1]);
const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) process.stdout.write(JSON.stringify(decide(JSON.parse(line)) ?? {}) + '\n');
"#;

impl DemoModel {
    fn start() -> Rc<Self> {
        let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/www/llm-fixtures.mjs");
        let mut child = Command::new("node")
            .args([
                "--input-type=module",
                "-e",
                SERVE,
                &format!("file://{fixtures}"),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect(
                "this test runs the demo model in node: install node (the e2e layer needs it too)",
            );
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Rc::new(Self {
            child,
            io: RefCell::new((stdin, stdout)),
            calls: RefCell::new(0),
            log: RefCell::default(),
        })
    }

    fn answer(&self, body: &Value) -> Scripted {
        let mut io = self.io.borrow_mut();
        writeln!(io.0, "{body}").unwrap();
        io.0.flush().unwrap();
        let mut line = String::new();
        io.1.read_line(&mut line).unwrap();
        let answer: Value = serde_json::from_str(&line).expect("the demo model answers JSON");
        let task = task_of(body).lines().next().unwrap_or("").to_string();
        match answer.get("call") {
            Some(call) => {
                let n = {
                    let mut n = self.calls.borrow_mut();
                    *n += 1;
                    *n
                };
                let name = call["name"].as_str().unwrap().to_string();
                self.log
                    .borrow_mut()
                    .push((task, Some(name.clone()), call["arguments"].clone()));
                calls(&format!("demo{n}"), &name, call["arguments"].clone())
            }
            None => {
                let text = answer["text"].as_str().unwrap_or("").to_string();
                self.log.borrow_mut().push((task, None, json!(text)));
                says(&text)
            }
        }
    }
}

impl Drop for DemoModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn task_of(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

/// The tool results of a request's current turn.
fn results_of(body: &Value) -> Vec<Value> {
    let messages = body["messages"].as_array().unwrap();
    let start = messages
        .iter()
        .rposition(|m| m["role"] == "user")
        .unwrap_or(0);
    messages[start..]
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap_or("null")).unwrap())
        .collect()
}

/// The demo project: its chapters, then its story bible as the writer's page saves it.
fn demo_project(page: &Page) -> Vec<(String, Vec<String>)> {
    let story: Value = serde_json::from_str(STORY).unwrap();
    let chapters: Vec<Value> = story["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let text = c["scenes"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|s| s["lines"].as_array().unwrap().iter())
                .map(|l| l.as_str().unwrap())
                .collect::<Vec<_>>()
                .join("\n\n");
            json!({"title": c["title"], "text": text})
        })
        .collect();
    let project = page.ok(
        "create_project",
        json!({"name": story["title"], "chapters": chapters}),
    );
    let mut scenes = Vec::new();
    for (c, chapter) in story["chapters"].as_array().unwrap().iter().enumerate() {
        let id = project["chapters"][c]["id"].as_str().unwrap();
        let mut at = 0;
        for scene in chapter["scenes"].as_array().unwrap() {
            let lines: Vec<String> = scene["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap().to_string())
                .collect();
            let len = lines.join("\n\n").chars().count();
            page.ok(
                "bible_save",
                json!({"kind": "scene", "id": scene["id"], "fields": {"chapter": id, "span": {"start": at, "end": at + len}}}),
            );
            at += len + 2;
            scenes.push((scene["id"].as_str().unwrap().to_string(), lines));
        }
    }
    for entry in story["bible"].as_array().unwrap() {
        page.ok(
            "bible_save",
            json!({"kind": entry["kind"], "id": entry["id"], "fields": entry["fields"]}),
        );
    }
    scenes
}

fn bible(page: &Page, kind: &str) -> Vec<Value> {
    page.ok("bible_list", json!({"kind": kind}))["kinds"][kind]
        .as_array()
        .unwrap()
        .clone()
}

fn is_write(tool: &str) -> bool {
    ["_create_", "_update_", "_delete_", "_merge_"]
        .iter()
        .any(|w| tool.contains(w))
}

#[test]
fn the_demo_model_runs_every_rentl_pipeline_over_the_demo_project() {
    let model = DemoModel::start();
    let brain_model = model.clone();
    let page = Page::thinking(
        Rc::new(MemoryStore::new()),
        Rc::new(move |body: &Value| brain_model.answer(body)),
    );
    let scenes = demo_project(&page);
    page.configure();
    // The preset's subagents, as agents a run may start with.
    let catalog = Catalog::new(Vec::new());
    let preset = catalog.preset("rentl").unwrap().clone();
    let mut toolboxes = BTreeMap::new();
    for name in &preset.agents {
        // Each agent as a job without overwrite runs it.
        let unit = draftsmith::agent::pipeline::unit_spec(catalog.get(name).unwrap(), false);
        let mut spec = serde_json::to_value(unit).unwrap();
        spec["name"] = json!(format!("demo_{name}"));
        spec["talksToWriter"] = json!(true);
        toolboxes.insert(name.clone(), spec["tools"].clone());
        page.ok("define_agent", json!({"agent": spec}));
    }
    let routes: Vec<String> = bible(&page, "route")
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(routes.len(), 2);

    // Every unit of every phase, in order: (agent, target line).
    let mut units: Vec<(String, String)> = Vec::new();
    for (phase, stages) in PIPELINES {
        for (s, stage) in stages.iter().enumerate() {
            let targets: Vec<String> = match (phase, s) {
                ("context", 1) => routes.iter().map(|r| format!("Route: {r}")).collect(),
                ("context", 2) => vec!["Scope: the whole project".into()],
                _ => scenes
                    .iter()
                    .map(|(id, _)| format!("Scene: {id}"))
                    .collect(),
            };
            for target in &targets {
                for agent in stage.iter() {
                    units.push((agent.to_string(), target.clone()));
                }
            }
        }
    }
    assert_eq!(units.len(), 6 * 5 + 2 + 3 + 6 + 6 * 3);
    for (agent, target) in &units {
        let task = format!(
            "Task for {agent}: do your job on this target.\n{target}\nOverwrite allowed: no\nDone when: your prompt's definition of done is met."
        );
        let before = page.transport.requests().len();
        let run = page.ok(
            "run",
            json!({"prompt": task, "agent": format!("demo_{agent}"), "newConversation": true, "maxSteps": 100}),
        );
        assert_eq!(run["status"], "finished", "{agent} {target}: {run}");
        // Every tool result of the unit was a success (nothing refused, nothing failed).
        let requests = page.transport.requests();
        let last: Value = serde_json::from_str(&requests.last().unwrap().body).unwrap();
        for result in results_of(&last) {
            assert_eq!(result["status"], "success", "{agent} {target}: {result}");
        }
        assert!(requests.len() > before);
    }

    // Each unit (the answers from its task to its closing text, in order): its first answer
    // is a call of a read tool, every call is in its toolbox, and it ends with text.
    let log = model.log.borrow().clone();
    let mut opening = true;
    let mut seen: Vec<(String, String)> = Vec::new();
    for (task, tool, _) in &log {
        let agent = task
            .strip_prefix("Task for ")
            .and_then(|t| t.split(':').next())
            .unwrap_or_else(|| panic!("an answer outside a unit: {task}"))
            .to_string();
        match tool {
            Some(name) => {
                assert!(
                    toolboxes[&agent]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|t| t == name.as_str()),
                    "{agent} called {name}, not in its toolbox"
                );
                if opening {
                    assert!(!is_write(name), "{agent} began with {name}");
                    seen.push((agent, name.clone()));
                }
                opening = false;
            }
            None => {
                assert!(!opening, "{agent} answered without reading anything");
                opening = true;
            }
        }
    }
    assert!(opening, "the last unit ended with text");
    assert_eq!(seen.len(), units.len(), "one opening read per unit");
    assert_eq!(
        seen.iter()
            .map(|(a, _)| a.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        13
    );

    // The context phase filled every scene, each field with its subagent's origin.
    for scene in bible(&page, "scene") {
        let id = scene["id"].as_str().unwrap();
        for (field, agent) in [
            ("summary", "scene_summary_detailer"),
            ("tags", "scene_tag_detailer"),
            ("primary_characters", "scene_primary_character_detailer"),
            ("locations", "scene_location_detailer"),
        ] {
            let value = &scene[field];
            assert!(
                !value.is_null() && value != &json!("") && value != &json!([]),
                "{id}: {field} is empty: {scene}"
            );
            let origin = scene[format!("{field}_origin")].as_str().unwrap();
            assert!(
                origin.starts_with(&format!("agent:demo_{agent}:")),
                "{id}: {field} origin {origin}"
            );
        }
        // Derived from the scene's own text: its summary opens with its first sentence.
        let (_, lines) = scenes.iter().find(|(s, _)| s == id).unwrap();
        let opening = lines[0].split(". ").next().unwrap();
        assert!(
            scene["summary"].as_str().unwrap().starts_with(opening),
            "{id}: {}",
            scene["summary"]
        );
    }
    let dusk = bible(&page, "scene")
        .into_iter()
        .find(|s| s["id"] == "ch1-dusk")
        .unwrap();
    assert_eq!(
        dusk["primary_characters"],
        json!(["ines-calder", "bram-calder"])
    );
    assert_eq!(dusk["locations"], json!(["gull-rock-light"]));
    // The glossary got the scenes' terms; the writer's entry is untouched.
    let glossary = bible(&page, "glossary");
    let terms: Vec<&str> = glossary
        .iter()
        .map(|g| g["term_src"].as_str().unwrap())
        .collect();
    for term in ["Lantern Guild", "Tide Bell", "Morrow"] {
        assert!(terms.contains(&term), "{terms:?}");
    }
    let guild = glossary
        .iter()
        .find(|g| g["id"] == "lantern-guild")
        .unwrap();
    assert_eq!(guild["term_tgt_origin"], "human");
    assert_eq!(glossary.len(), 3, "{terms:?}");
    // Routes outlined from their scenes' summaries, with the characters central to them.
    for route in bible(&page, "route") {
        let synopsis = route["synopsis"].as_str().unwrap_or("");
        assert!(synopsis.starts_with("At dusk Ines Calder"), "{route}");
        assert!(route["synopsis_origin"]
            .as_str()
            .unwrap()
            .starts_with("agent:demo_route_outline_builder:"));
        let characters = route["primary_characters"].as_array().unwrap();
        assert!(characters.contains(&json!("ines-calder")), "{route}");
    }
    // The curators gave every character and location a target-language name.
    for kind in ["character", "location"] {
        for entry in bible(&page, kind) {
            assert_eq!(entry["name_tgt"], entry["name_src"], "{entry}");
        }
    }

    // The translation phase translated every line of every scene exactly once.
    let total: usize = scenes.iter().map(|(_, l)| l.len()).sum();
    assert_eq!(count_audit(&page.store, "translation_create_line"), total);
    let translations = bible(&page, "translation");
    assert_eq!(translations.len(), total);
    for t in &translations {
        let target = t["target"].as_str().unwrap();
        assert!(target.starts_with("[fr] "), "{t}");
        if t["source"].as_str().unwrap().contains("Lantern Guild") {
            assert!(target.contains("Guilde des Lanternes"), "{t}");
        }
    }

    // The editing phase: every scene has a style, a review and a consistency finding.
    let qa = bible(&page, "qa");
    for (scene, _) in &scenes {
        for check in ["style", "review", "consistency"] {
            assert!(
                qa.iter()
                    .any(|r| r["scene"] == scene.as_str() && r["check"] == check),
                "{scene} has no {check} finding"
            );
        }
    }
    // Concrete issues: the lines over the UI's 110 characters (measured by the tool).
    let mut too_long: Vec<(String, u64)> = qa
        .iter()
        .filter(|r| {
            r["check"] == "style" && r["message"].as_str().unwrap().contains("over the UI limit")
        })
        .map(|r| {
            (
                r["scene"].as_str().unwrap().to_string(),
                r["line"].as_u64().unwrap(),
            )
        })
        .collect();
    too_long.sort();
    let mut expected: Vec<(String, u64)> = Vec::new();
    for (id, lines) in &scenes {
        for (i, line) in lines.iter().enumerate() {
            let target = format!(
                "[fr] {}",
                line.replace("Lantern Guild", "Guilde des Lanternes")
            );
            if target.chars().count() > 110 {
                expected.push((id.clone(), i as u64 + 1));
            }
        }
    }
    expected.sort();
    assert!(!expected.is_empty());
    assert_eq!(too_long, expected);
    // The glossary check found every term translated as the glossary says.
    assert!(qa
        .iter()
        .filter(|r| r["check"] == "consistency")
        .all(|r| r["severity"] == "info"));
    // Nothing waits for the writer.
    assert_eq!(page.ok("list_approvals", json!({}))["approvals"], json!([]));
}

/// A page on a new store whose model is the demo model.
fn demo_page(model: &Rc<DemoModel>) -> Page {
    let model = model.clone();
    Page::thinking(
        Rc::new(MemoryStore::new()),
        Rc::new(move |body: &Value| model.answer(body)),
    )
}

/// The demo model plays TextCraft through the core too: asked for the next chapter, the
/// architect plans it and the narrator creates it; one plain undo takes it all back.
#[test]
fn the_demo_model_drafts_a_new_textcraft_chapter_that_plain_undo_removes() {
    let model = DemoModel::start();
    let page = demo_page(&model);
    page.three_chapters();
    page.configure();
    let run = page.ok(
        "run",
        json!({"prompt": "Narrator, draft chapter 4: The Lamp Room", "preset": "textcraft"}),
    );
    assert_eq!(run["status"], "finished", "{run}");
    assert!(
        run["text"]
            .as_str()
            .unwrap()
            .contains("Chapter 4, \"The Lamp Room\", is new."),
        "{run}"
    );
    assert_eq!(
        page.manuscript_files().last().unwrap(),
        "04-the-lamp-room.md"
    );
    let chapter = page.ok("get_chapter", json!({"chapter": "4"}));
    assert_eq!(chapter["title"], "The Lamp Room");
    assert!(chapter["text"]
        .as_str()
        .unwrap()
        .starts_with("# The Lamp Room\n\n"));
    page.ok("undo", json!({}));
    assert_eq!(page.manuscript_files().len(), 3);
}

/// The demo model plans when its agent has `planning`: the list, the work, the list done.
#[test]
fn the_demo_model_plans_with_an_agents_todo_list() {
    let model = DemoModel::start();
    let page = demo_page(&model);
    page.ok(
        "create_project",
        json!({"name": "Lighthouse", "chapters": [{"title": "One", "text": "Mara climbed."}]}),
    );
    page.configure();
    page.ok(
        "define_agent",
        json!({"agent": {"name": "planner", "description": "Keeps notes with a plan.",
            "systemPrompt": "You keep the writer's notes.", "talksToWriter": true,
            "tools": ["write_memory_note"], "planning": true}}),
    );
    let run = page.ok(
        "run",
        json!({"agent": "planner", "prompt": "note: Mara hates boats"}),
    );
    assert_eq!(run["text"], "Done. Plan: 2 of 2 items done.", "{run}");
    assert_eq!(run["todos"][0]["status"], "completed", "{run}");
    let called: Vec<String> = model
        .log
        .borrow()
        .iter()
        .filter_map(|(_, name, _)| name.clone())
        .collect();
    assert_eq!(called, ["write_todos", "write_memory_note", "write_todos"]);
}
