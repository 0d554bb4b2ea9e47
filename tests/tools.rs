//! The executor and the tool families: result shape, errors that help the model, rollback,
//! history recording, toolsets and the catalog in three formats.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::commands::{Category, Origin, OriginFilter};
use draftsmith::project::Chapter;
use draftsmith::tools::{CatalogFormat, ToolRegistry, ALL, QUICK, VOICE_SAFE};
use serde_json::{json, Value};

mod common;

const CH1: &str = "Mara climbed the stair. The lamp was dark.\n\n“Who’s there?” she called. Nobody answered.\n\nThe wind was slowly rising and the door was opened by the storm.";
const CH2: &str = "Morning came grey over Greyhaven.";

type T = common::session::Harness;

impl T {
    fn new() -> Self {
        Self::project(
            "Test",
            vec![
                Chapter::new("c1", "The Stair", CH1),
                Chapter::new("c2", "Morning", CH2),
            ],
        )
    }

    fn call_as(&mut self, origin: Origin, tool: &str, args: Value) -> Value {
        self.result_of(origin, "call-1", tool, args)
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.call_as(Origin::Agent("editor".into()), tool, args)
    }

    fn text(&self, id: &str) -> String {
        self.s.project.chapter(id).unwrap().text().to_string()
    }
}

const EVERY_TOOL: &[&str] = &[
    "navigate_to_text",
    "jump_to_chapter",
    "jump_to_scene",
    "scroll_to_position",
    "update_manuscript",
    "append_to_manuscript",
    "insert_text",
    "delete_text",
    "get_critique_for_selection",
    "run_analysis",
    "switch_panel",
    "toggle_zen_mode",
    "highlight_text",
    "clear_highlights",
    "set_selection",
    "write_memory_note",
    "search_memory",
    "update_memory_note",
    "delete_memory_note",
    "restore_memory_note",
    "create_goal",
    "update_goal",
    "watch_entity",
    "evolve_bedside_note",
    "rewrite_selection",
    "continue_writing",
    "suggest_dialogue",
    "write_file",
    "edit_file",
];

#[test]
fn update_manuscript_replaces_the_first_occurrence_and_records_history() {
    let mut t = T::new();
    let r = t.call("update_manuscript", json!({"searchText": "The lamp was dark.", "replacementText": "The lamp flickered.", "description": "Brighten"}));
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["data"]["chapter"], "c1");
    assert_eq!(r["data"]["version"], 1);
    assert!(r["meta"]["command_id"].is_string());
    assert_eq!(r["meta"]["bytes_written"], "The lamp flickered.".len());
    assert!(r["meta"]["execution_time_ms"].is_u64());
    assert!(t.text("c1").contains("The lamp flickered."));
    let entry = t.s.history.entries().last().unwrap();
    assert_eq!(entry.description, "Brighten");
    assert_eq!(entry.origin, Origin::Agent("editor".into()));
    assert_eq!(entry.tool_call_id.as_deref(), Some("call-1"));
    assert_eq!(entry.command.as_deref(), Some("update_manuscript"));
    assert_eq!(
        Some(&entry.id),
        r["meta"]["command_id"].as_str().map(String::from).as_ref()
    );
}

#[test]
fn a_chapter_number_sent_as_a_number_is_accepted() {
    let mut t = T::new();
    let r = t.call("jump_to_chapter", json!({"chapter": 2}));
    assert_eq!(r["status"], "success", "{r}");
    let r = t.call(
        "update_manuscript",
        json!({"searchText": "Morning", "replacementText": "Evening", "chapter": 2}),
    );
    assert_eq!(r["status"], "success", "{r}");
    assert!(t.text("c2").starts_with("Evening"));
    // Other numbers where a string belongs are still refused.
    let r = t.call("jump_to_chapter", json!({"chapter": -1}));
    assert_eq!(r["status"], "error", "{r}");
}

#[test]
fn snake_case_argument_spellings_are_accepted() {
    let mut t = T::new();
    let r = t.call(
        "update_manuscript",
        json!({"search_text": "Morning", "replacement_text": "Evening", "chapter": "2"}),
    );
    assert_eq!(r["status"], "success", "{r}");
    assert!(t.text("c2").starts_with("Evening"));
}

#[test]
fn text_not_found_names_the_closest_candidate_and_changes_nothing() {
    let mut t = T::new();
    let before = t.s.clone();
    let r = t.call(
        "update_manuscript",
        json!({"searchText": "The lamp was dim.", "replacementText": "x"}),
    );
    assert_eq!(r["status"], "error");
    assert_eq!(r["data"]["code"], "not_found");
    let message = r["data"]["message"].as_str().unwrap();
    assert!(message.starts_with("Text not found"), "{message}");
    assert!(message.contains("The lamp was dark"), "{message}");
    assert_eq!(
        r["data"]["details"]["closest"]["text"]
            .as_str()
            .unwrap()
            .trim_end_matches('.'),
        "The lamp was dark"
    );
    assert_eq!(t.s, before);
}

#[test]
fn append_insert_and_delete_anchor_by_text() {
    let mut t = T::new();
    assert_eq!(
        t.call(
            "append_to_manuscript",
            json!({"text": "Night fell.", "chapter": "Morning"})
        )["status"],
        "success"
    );
    assert_eq!(t.text("c2"), format!("{CH2}\n\nNight fell."));
    assert_eq!(
        t.call(
            "insert_text",
            json!({"text": " slowly", "anchorText": "Mara climbed", "position": "after"})
        )["status"],
        "success"
    );
    assert!(t.text("c1").starts_with("Mara climbed slowly the stair."));
    assert_eq!(
        t.call(
            "insert_text",
            json!({"text": "Tired, ", "anchorText": "Mara", "position": "before"})
        )["status"],
        "success"
    );
    assert!(t.text("c1").starts_with("Tired, Mara"));
    assert_eq!(
        t.call("delete_text", json!({"text": " Nobody answered."}))["status"],
        "success"
    );
    assert!(!t.text("c1").contains("Nobody"));
    // Each edit is undoable; one plain undo per call (no group open).
    for _ in 0..4 {
        t.s.undo(None, Origin::User, &t.clock, &t.ids).unwrap();
    }
    assert_eq!(t.text("c1"), CH1);
    assert_eq!(t.text("c2"), CH2);
}

#[test]
fn an_agent_turn_is_one_undo_group() {
    let mut t = T::new();
    t.s.history
        .begin_group(Origin::Agent("editor".into()), &t.ids);
    t.call(
        "update_manuscript",
        json!({"searchText": "Mara", "replacementText": "Elin"}),
    );
    t.call(
        "update_manuscript",
        json!({"searchText": "Morning", "replacementText": "Dusk", "chapter": "c2"}),
    );
    t.call("append_to_manuscript", json!({"text": "The end."}));
    t.s.history.close_group();
    assert_eq!(t.s.history.undo_groups(), 1);
    t.s.undo(None, Origin::User, &t.clock, &t.ids).unwrap();
    assert_eq!(
        (t.text("c1"), t.text("c2")),
        (CH1.to_string(), CH2.to_string())
    );
    t.s.redo().unwrap();
    assert!(t.text("c1").starts_with("Elin") && t.text("c2").starts_with("Dusk"));
}

#[test]
fn undo_agent_keeps_the_writers_later_typing() {
    let mut t = T::new();
    t.call(
        "update_manuscript",
        json!({"searchText": "The lamp was dark.", "replacementText": "The lamp was lit."}),
    );
    // The writer types at the start afterwards.
    let change = draftsmith::project::changeset::ChangeSet::replace(
        t.text("c1").chars().count(),
        0,
        0,
        "Slowly, ",
    )
    .unwrap();
    let version = t.s.project.chapter("c1").unwrap().version();
    t.s.apply_user_change("c1", version, change, &t.clock, &t.ids)
        .unwrap();
    t.s.undo(
        Some(&OriginFilter::AnyAgent),
        Origin::User,
        &t.clock,
        &t.ids,
    )
    .unwrap();
    assert_eq!(t.text("c1"), format!("Slowly, {CH1}"));
}

#[test]
fn unknown_tools_get_the_closest_names() {
    let mut t = T::new();
    let r = t.call("update_manuscrpt", json!({}));
    assert_eq!(r["data"]["code"], "unknown_tool");
    assert!(r["data"]["message"]
        .as_str()
        .unwrap()
        .contains("did you mean 'update_manuscript'"));
    assert_eq!(r["data"]["details"]["suggestions"][0], "update_manuscript");
    let r = t.call("qqqqqqqqqqqqqqqq", json!({}));
    assert!(r["data"]["message"]
        .as_str()
        .unwrap()
        .contains("available tools: navigate_to_text"));
}

#[test]
fn invalid_arguments_name_the_field_and_the_expected_type() {
    let mut t = T::new();
    for (tool, args, needles) in [
        (
            "update_manuscript",
            json!({"searchText": 5, "replacementText": "x"}),
            vec!["'searchText' must be a string, got the number 5"],
        ),
        (
            "update_manuscript",
            json!({"searchText": "x"}),
            vec!["missing required argument 'replacementText' (a string)"],
        ),
        (
            "scroll_to_position",
            json!({"position": -3}),
            vec!["'position' must be a non-negative integer, got the number -3"],
        ),
        (
            "scroll_to_position",
            json!({"position": "ten"}),
            vec!["'position' must be a non-negative integer, got the string \"ten\""],
        ),
        (
            "switch_panel",
            json!({"panel": "kitchen"}),
            vec!["'panel' must be one of: chat, history, memory"],
        ),
        (
            "toggle_zen_mode",
            json!({"enabled": "yes"}),
            vec!["'enabled' must be a boolean (true or false), got the string \"yes\""],
        ),
        (
            "update_manuscript",
            json!([1, 2]),
            vec!["must be a JSON object"],
        ),
    ] {
        let before = t.s.clone();
        let r = t.call(tool, args.clone());
        assert_eq!(r["status"], "error", "{tool} {args}");
        assert_eq!(r["data"]["code"], "invalid_args", "{tool} {args} -> {r}");
        let message = r["data"]["message"].as_str().unwrap();
        for needle in needles {
            assert!(
                message.contains(needle),
                "{tool} {args}: {message:?} lacks {needle:?}"
            );
        }
        assert_eq!(t.s, before);
    }
}

#[test]
fn ui_tools_change_ui_state_but_not_history() {
    let mut t = T::new();
    assert_eq!(
        t.call("switch_panel", json!({"panel": "memory"}))["data"]["panel"],
        "memory"
    );
    assert_eq!(t.s.project.ui.panel, "memory");
    assert_eq!(
        t.call("toggle_zen_mode", json!({}))["data"]["zenMode"],
        true
    );
    assert_eq!(
        t.call("toggle_zen_mode", json!({"enabled": true}))["data"]["zenMode"],
        true
    );
    let r = t.call(
        "highlight_text",
        json!({"text": "Nobody answered.", "style": "warning", "note": "abrupt"}),
    );
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(t.s.project.ui.highlights[0].style, "warning");
    let r = t.call(
        "set_selection",
        json!({"start": 0, "end": 4, "chapter": "c2"}),
    );
    assert_eq!(r["data"]["text"], "Morn");
    assert_eq!(t.s.project.ui.active_chapter.as_deref(), Some("c2"));
    assert_eq!(t.s.project.ui.selection, Some((0, 4)));
    let r = t.call("set_selection", json!({"start": 5, "end": 4000}));
    assert_eq!(r["data"]["code"], "out_of_range");
    let r = t.call("highlight_text", json!({"start": 1}));
    assert_eq!(r["data"]["code"], "invalid_args");
    assert!(!t.s.history.can_undo());
}

#[test]
fn switch_panel_takes_exactly_the_pages_panels() {
    let mut t = T::new();
    for panel in [
        "chat", "history", "memory", "files", "jobs", "research", "analysis", "bible", "settings",
    ] {
        let r = t.call("switch_panel", json!({ "panel": panel }));
        assert_eq!(r["status"], "success", "{panel}: {r}");
        assert_eq!(t.s.project.ui.panel, panel);
    }
    // A panel the page does not have is refused, and the panel stays.
    let r = t.call("switch_panel", json!({"panel": "outline"}));
    assert_eq!(r["data"]["code"], "invalid_args", "{r}");
    assert_eq!(t.s.project.ui.panel, "settings");
}

#[test]
fn clear_highlights_removes_all_or_a_chapters_or_a_styles() {
    let mut t = T::new();
    let mark = |t: &mut T, text: &str, chapter: &str, style: &str| {
        let r = t.call(
            "highlight_text",
            json!({"text": text, "chapter": chapter, "style": style}),
        );
        assert_eq!(r["status"], "success", "{r}");
    };
    mark(&mut t, "Nobody answered.", "1", "warning");
    mark(&mut t, "The lamp was dark.", "1", "info");
    mark(&mut t, "Morning came grey", "2", "warning");
    let r = t.call(
        "clear_highlights",
        json!({"style": "warning", "chapter": "1"}),
    );
    assert_eq!(
        (r["data"]["removed"].as_u64(), r["data"]["left"].as_u64()),
        (Some(1), Some(2))
    );
    let styles: Vec<(&str, &str)> =
        t.s.project
            .ui
            .highlights
            .iter()
            .map(|h| (h.chapter.as_str(), h.style.as_str()))
            .collect();
    assert_eq!(styles, [("c1", "info"), ("c2", "warning")]);
    let r = t.call("clear_highlights", json!({"chapter": "Morning"}));
    assert_eq!(r["data"]["removed"], 1);
    // A chapter that does not exist is an error, and nothing goes.
    let r = t.call("clear_highlights", json!({"chapter": "9"}));
    assert_eq!(r["status"], "error", "{r}");
    assert_eq!(t.s.project.ui.highlights.len(), 1);
    let r = t.call("clear_highlights", json!({}));
    assert_eq!(
        (r["data"]["removed"].as_u64(), r["data"]["left"].as_u64()),
        (Some(1), Some(0))
    );
    assert!(t.s.project.ui.highlights.is_empty());
    assert!(!t.s.history.can_undo());
}

#[test]
fn scrolling_and_navigating_ask_the_editor_to_show_the_place_every_time() {
    let mut t = T::new();
    let at = t.s.project.ui.reveal;
    let r = t.call("scroll_to_position", json!({"position": 40}));
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!((t.s.project.ui.scroll, t.s.project.ui.reveal), (40, at + 1));
    // The same place again (the writer scrolled away meanwhile): asked again.
    t.call("scroll_to_position", json!({"position": 40}));
    assert_eq!((t.s.project.ui.scroll, t.s.project.ui.reveal), (40, at + 2));
    let r = t.call("navigate_to_text", json!({"query": "Nobody answered."}));
    let start = r["data"]["start"].as_u64().unwrap() as usize;
    assert_eq!(
        (t.s.project.ui.scroll, t.s.project.ui.reveal),
        (start, at + 3)
    );
    t.call("navigate_to_text", json!({"query": "Nobody answered."}));
    assert_eq!(t.s.project.ui.reveal, at + 4);
    t.call("jump_to_chapter", json!({"chapter": "2"}));
    assert_eq!((t.s.project.ui.scroll, t.s.project.ui.reveal), (0, at + 5));
    // A failed scroll asks for nothing.
    let r = t.call("scroll_to_position", json!({"position": 4000}));
    assert_eq!(r["data"]["code"], "out_of_range");
    assert_eq!(t.s.project.ui.reveal, at + 5);
    // Selecting (as the page does for the writer) does not scroll.
    t.call("set_selection", json!({"start": 0, "end": 4}));
    assert_eq!(t.s.project.ui.reveal, at + 5);
}

#[test]
fn critique_needs_a_selection_and_then_reports_by_focus() {
    let mut t = T::new();
    let r = t.call("get_critique_for_selection", json!({}));
    assert_eq!(r["data"]["code"], "no_selection");
    t.call(
        "set_selection",
        json!({"text": "The wind was slowly rising and the door was opened by the storm."}),
    );
    let prose = t.call("get_critique_for_selection", json!({"focus": "prose"}));
    assert_eq!(prose["status"], "success", "{prose}");
    assert_eq!(prose["data"]["adverbs"][0]["text"], "slowly");
    assert!(prose["data"]["passive"]
        .as_array()
        .unwrap()
        .iter()
        .any(|h| h["text"].as_str().unwrap().contains("was opened")));
    let start = prose["data"]["start"].as_u64().unwrap();
    assert!(
        prose["data"]["adverbs"][0]["start"].as_u64().unwrap() > start,
        "offsets are chapter positions"
    );
    for focus in ["pacing", "dialogue", "clarity"] {
        let r = t.call("get_critique_for_selection", json!({"focus": focus}));
        assert_eq!(r["status"], "success");
        assert!(!r["data"]["suggestions"].as_array().unwrap().is_empty());
    }
}

#[test]
fn run_analysis_reports_each_section() {
    let mut t = T::new();
    let pacing = t.call("run_analysis", json!({"section": "pacing"}));
    assert_eq!(pacing["data"]["chapters"].as_array().unwrap().len(), 2);
    let plot = t.call("run_analysis", json!({"section": "plot", "chapter": "1"}));
    assert_eq!(plot["data"]["scope"], "chapter");
    assert_eq!(
        plot["data"]["chapters"][0]["scenes"][0]["opening"],
        "Mara climbed the stair."
    );
    let setting = t.call("run_analysis", json!({"section": "setting"}));
    assert_eq!(setting["data"]["places"][0]["place"], "Greyhaven");
    let characters = t.call("run_analysis", json!({"section": "characters"}));
    assert_eq!(characters["status"], "success");
    let bad = t.call("run_analysis", json!({"section": "weather"}));
    assert_eq!(bad["data"]["code"], "invalid_args");
}

#[test]
fn run_analysis_without_a_section_runs_every_section() {
    let mut t = T::new();
    let full = t.call("run_analysis", json!({}));
    assert_eq!(full["status"], "success", "{full}");
    let data = &full["data"];
    assert_eq!(data["section"], "full");
    assert_eq!(data["scope"], "manuscript");
    // Each section is the one a call for it alone gives.
    for section in ["pacing", "characters", "plot", "setting"] {
        let alone = t.call("run_analysis", json!({ "section": section }));
        let mut alone = alone["data"].clone();
        let object = alone.as_object_mut().unwrap();
        object.remove("section");
        object.remove("scope");
        assert_eq!(data[section], alone, "{section}");
    }
    assert_eq!(data["setting"]["places"][0]["place"], "Greyhaven");
    // Its headline (the bedside note's status line) sums it up.
    let (section, scope, line) = draftsmith::tools::analysis::headline(data).unwrap();
    assert_eq!((section.as_str(), scope.as_str()), ("full", "manuscript"));
    assert!(line.starts_with("2 chapters, "), "{line}");
    assert!(
        line.contains("words per sentence") && line.contains("places: Greyhaven"),
        "{line}"
    );
}

#[test]
fn toolsets_select_the_right_tools() {
    let registry = ToolRegistry::standard();
    let names = |set: &str| {
        registry
            .toolset(set)
            .unwrap()
            .iter()
            .map(|d| d.name.as_ref())
            .collect::<Vec<_>>()
    };
    let all = names(ALL);
    for tool in EVERY_TOOL {
        assert!(all.contains(tool), "{tool} missing from all");
    }
    let voice = names(VOICE_SAFE);
    assert!(voice.contains(&"navigate_to_text") && voice.contains(&"switch_panel"));
    assert!(!voice.contains(&"highlight_text"));
    // Nothing that waits on the network or on a model.
    assert!(!voice.contains(&"research_url") && !voice.contains(&"run_analysis"));
    for name in &voice {
        let definition = registry.definition(name).unwrap();
        assert!(!definition.asynchronous, "{name}");
    }
    assert!(!voice.iter().any(|n| [
        "update_manuscript",
        "append_to_manuscript",
        "insert_text",
        "delete_text",
        "rewrite_selection",
        "continue_writing",
        "suggest_dialogue",
    ]
    .contains(n)));
    let quick = names(QUICK);
    assert!(quick.contains(&"update_manuscript") && quick.contains(&"jump_to_chapter"));
    assert!(!quick.contains(&"delete_text") && !quick.contains(&"highlight_text"));
    assert!(!quick
        .iter()
        .any(|n| ["rewrite_selection", "continue_writing", "suggest_dialogue"].contains(n)));
    let mut registry = registry;
    registry
        .define_toolset("proofread", &["navigate_to_text", "update_manuscript"])
        .unwrap();
    assert_eq!(registry.toolset("proofread").unwrap().len(), 2);
    assert_eq!(
        registry.define_toolset("bad", &["nope"]).unwrap_err().code,
        "unknown_tool"
    );
    assert_eq!(registry.toolset("missing").unwrap_err().code, "not_found");
}

#[test]
fn catalogs_list_every_tool_with_a_json_schema_in_each_format() {
    let registry = ToolRegistry::standard();
    let openai = registry.catalog(CatalogFormat::Openai, ALL).unwrap();
    let anthropic = registry.catalog(CatalogFormat::Anthropic, ALL).unwrap();
    let gemini = registry.catalog(CatalogFormat::Gemini, ALL).unwrap();
    for tool in EVERY_TOOL {
        let o = openai
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == *tool)
            .unwrap();
        assert_eq!(o["type"], "function");
        assert_eq!(o["function"]["parameters"]["type"], "object");
        assert!(!o["function"]["description"].as_str().unwrap().is_empty());
        let a = anthropic
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == *tool)
            .unwrap();
        assert_eq!(a["input_schema"]["type"], "object");
        let g = gemini["functionDeclarations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == *tool)
            .unwrap();
        assert_eq!(g["parameters"]["type"], "object");
    }
    // No keyword a provider rejects, anywhere.
    fn walk(v: &Value, gemini: bool) {
        if let Value::Object(map) = v {
            for bad in ["$schema", "$ref", "definitions", "$defs", "title"] {
                assert!(!map.contains_key(bad), "{bad} in {v}");
            }
            if let Some(t) = map.get("type") {
                assert!(t.is_string(), "type must be a single string: {v}");
            }
            // An enum of strings lists strings only (an optional one is simply not required).
            if let Some(Value::Array(values)) = map.get("enum") {
                assert!(values.iter().all(Value::is_string), "enum values: {v}");
            }
            if gemini {
                assert!(
                    !map.contains_key("additionalProperties") && !map.contains_key("default"),
                    "{v}"
                );
            }
            for (key, child) in map {
                match child {
                    // Property names (`title`, `type`) are not keywords; their schemas are.
                    Value::Object(properties) if key == "properties" => {
                        properties.values().for_each(|p| walk(p, gemini))
                    }
                    _ => walk(child, gemini),
                }
            }
        } else if let Value::Array(items) = v {
            items.iter().for_each(|c| walk(c, gemini));
        }
    }
    walk(&openai, false);
    walk(&anthropic, false);
    walk(&gemini, true);
    let update = openai
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "update_manuscript")
        .unwrap();
    let required = &update["function"]["parameters"]["required"];
    assert_eq!(required, &json!(["searchText", "replacementText"]));
}

#[test]
fn every_tool_knows_its_category_and_reversibility() {
    let registry = ToolRegistry::standard();
    for (tool, read_only) in [
        ("search_memory", true),
        ("run_analysis", true),
        ("get_critique_for_selection", true),
        ("write_memory_note", false),
        ("update_manuscript", false),
        ("navigate_to_text", false),
        ("rewrite_selection", false),
        ("continue_writing", false),
        ("suggest_dialogue", false),
    ] {
        assert_eq!(
            registry.definition(tool).unwrap().read_only,
            read_only,
            "{tool}"
        );
    }
    let registry = ToolRegistry::standard();
    for meta in registry.commands().iter() {
        let reversible = [
            "update_manuscript",
            "append_to_manuscript",
            "insert_text",
            "delete_text",
            "rewrite_selection",
            "continue_writing",
            "suggest_dialogue",
            "write_file",
            "edit_file",
        ]
        .contains(&meta.name);
        assert_eq!(meta.reversible, reversible, "{}", meta.name);
        let memory = [
            "write_memory_note",
            "search_memory",
            "update_memory_note",
            "delete_memory_note",
            "restore_memory_note",
            "create_goal",
            "update_goal",
            "watch_entity",
            "evolve_bedside_note",
        ]
        .contains(&meta.name);
        assert_eq!(
            meta.category == Category::Memory,
            memory,
            "{} is in {:?}",
            meta.name,
            meta.category
        );
    }
    // The story-bible tools (and its knowledge tools) are checked in tests/bible_story.rs, tests/bible_language.rs and tests/catalog.rs.
    let manuscript_tools = registry
        .commands()
        .iter()
        .filter(|m| !matches!(m.category, Category::Bible | Category::Knowledge))
        .count();
    assert_eq!(manuscript_tools, EVERY_TOOL.len());
}
