//! The `rentl` preset: its 13 single-purpose subagents, each with exactly the toolbox
//! rentl's catalog lists (the lists are written out here, independently of the preset), the
//! `interruptOn` field of agent definitions (validated against the agent's toolbox, and
//! kept through define, list, export and import), `list_agents` showing the preset with its
//! pipelines, and `run {preset: "rentl"}` refused with a pointer to `start_job`.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;

use draftsmith::agent::pipeline::unit_spec;
use draftsmith::agent::{AgentSpec, Catalog};
use draftsmith::tools::ToolRegistry;
use serde_json::{json, Value};

mod common;
use common::page::*;

/// rentl's catalog: every subagent and its toolbox, in order.
const CATALOG: [(&str, &[&str]); 13] = [
    (
        "scene_summary_detailer",
        &[
            "scene_read_overview",
            "scene_read_metadata",
            "scene_read_redacted",
            "character_read_entry",
            "location_read_entry",
            "glossary_search_term",
            "glossary_read_entry",
            "contextdoc_list_all",
            "contextdoc_read_doc",
            "scene_update_summary",
        ],
    ),
    (
        "scene_tag_detailer",
        &[
            "scene_read_overview",
            "scene_read_metadata",
            "character_read_entry",
            "location_read_entry",
            "glossary_search_term",
            "glossary_read_entry",
            "contextdoc_list_all",
            "contextdoc_read_doc",
            "scene_update_tags",
        ],
    ),
    (
        "scene_primary_character_detailer",
        &[
            "scene_read_overview",
            "scene_read_metadata",
            "character_read_entry",
            "character_create_entry",
            "glossary_search_term",
            "glossary_read_entry",
            "contextdoc_list_all",
            "contextdoc_read_doc",
            "scene_update_primary_characters",
        ],
    ),
    (
        "scene_location_detailer",
        &[
            "scene_read_overview",
            "scene_read_metadata",
            "location_read_entry",
            "location_create_entry",
            "location_update_name_tgt",
            "location_update_description",
            "glossary_search_term",
            "glossary_read_entry",
            "contextdoc_list_all",
            "contextdoc_read_doc",
            "scene_update_locations",
        ],
    ),
    (
        "scene_glossary_detailer",
        &[
            "scene_read_overview",
            "glossary_search_term",
            "glossary_read_entry",
            "glossary_create_entry",
            "glossary_update_entry",
            "contextdoc_list_all",
            "contextdoc_read_doc",
        ],
    ),
    (
        "route_outline_builder",
        &[
            "route_read_entry",
            "scene_read_overview",
            "character_read_entry",
            "contextdoc_list_all",
            "contextdoc_read_doc",
            "route_update_synopsis",
            "route_update_primary_characters",
        ],
    ),
    (
        "meta_character_curator",
        &[
            "character_read_entry",
            "character_update_name_tgt",
            "character_update_pronouns",
            "character_update_notes",
            "character_create_entry",
            "character_delete_entry",
            "glossary_search_term",
            "glossary_read_entry",
            "contextdoc_list_all",
            "contextdoc_read_doc",
        ],
    ),
    (
        "meta_location_curator",
        &[
            "location_read_entry",
            "location_update_name_tgt",
            "location_update_description",
            "location_create_entry",
            "location_delete_entry",
            "contextdoc_list_all",
            "contextdoc_read_doc",
        ],
    ),
    (
        "meta_glossary_curator",
        &[
            "glossary_search_term",
            "glossary_read_entry",
            "glossary_create_entry",
            "glossary_update_entry",
            "glossary_merge_entries",
            "glossary_delete_entry",
            "contextdoc_list_all",
            "contextdoc_read_doc",
        ],
    ),
    (
        "scene_translator",
        &[
            "scene_read_overview",
            "styleguide_read_full",
            "ui_read_settings",
            "glossary_read_entry",
            "glossary_search_term",
            "character_read_entry",
            "location_read_entry",
            "translation_create_line",
            "translation_update_line",
        ],
    ),
    (
        "scene_style_checker",
        &[
            "translation_read_scene",
            "styleguide_read_full",
            "ui_read_settings",
            "translation_create_style_check",
        ],
    ),
    (
        "scene_translation_reviewer",
        &[
            "translation_read_scene",
            "scene_read_overview",
            "styleguide_read_full",
            "translation_create_review_check",
        ],
    ),
    (
        "consistency_checker",
        &[
            "translation_read_scene",
            "translation_create_consistency_check",
        ],
    ),
];

fn listing(page: &Page) -> Value {
    page.ok("list_agents", json!({}))
}

fn listed_agent(list: &Value, name: &str) -> Value {
    list["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("list_agents has no agent '{name}'"))
        .clone()
}

#[test]
fn each_subagent_has_exactly_the_catalog_toolbox() {
    let catalog = Catalog::new(Vec::new());
    let registry = ToolRegistry::standard();
    let preset = catalog.preset("rentl").expect("the rentl preset");
    let names: Vec<&str> = CATALOG.iter().map(|(n, _)| *n).collect();
    assert_eq!(preset.agents, names);
    for (name, tools) in CATALOG {
        let spec = catalog.get(name).unwrap();
        // Exactly these tools, in this order (the translator's overwrite-only tool last).
        assert_eq!(spec.tools, tools, "{name}");
        assert_eq!(spec.toolbox(&registry), tools, "{name}");
        assert_eq!(spec.toolset, None, "{name}");
        assert!(spec.sub_agents.is_empty(), "{name}");
        assert!(!spec.talks_to_writer, "{name}");
        assert!(spec.interrupt_on.is_empty(), "{name}");
        // Every tool exists, and the spec is valid as a definition (under another name).
        let renamed = AgentSpec {
            name: format!("my_{name}").chars().take(40).collect(),
            ..spec.clone()
        };
        catalog
            .validate(&renamed, &registry)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // A single-purpose prompt: it names its target line and its definition of done,
        // and every write tool it mentions is its own.
        let prompt = &spec.system_prompt;
        assert!(prompt.contains("You are done when"), "{name}");
        assert!(prompt.contains("Overwrite allowed"), "{name}");
        for tool in registry.names() {
            let write = ["_create_", "_update_", "_delete_", "_merge_"]
                .iter()
                .any(|w| tool.contains(w));
            let mentioned = prompt.match_indices(tool).any(|(i, _)| {
                !prompt[i + tool.len()..]
                    .starts_with(|c: char| c == '_' || c.is_ascii_alphanumeric())
            });
            if write && mentioned {
                assert!(tools.contains(&tool), "{name}'s prompt mentions {tool}");
            }
        }
    }
    assert_eq!(
        preset.pipelines,
        ["context", "translation", "editing"].map(String::from)
    );
    assert_eq!(preset.entry, None);
    // The pipelines' stages name every subagent exactly once.
    let staged: Vec<&str> = draftsmith::agent::presets::PIPELINES
        .iter()
        .flat_map(|(_, stages)| stages.iter().flat_map(|s| s.iter().copied()))
        .collect();
    assert_eq!(
        staged.iter().copied().collect::<BTreeSet<_>>(),
        names.iter().copied().collect::<BTreeSet<_>>()
    );
    assert_eq!(staged.len(), names.len());
}

#[test]
fn list_agents_shows_the_rentl_preset_its_pipelines_and_each_toolbox() {
    let page = Page::new(vec![]);
    page.project();
    let list = listing(&page);
    let rentl = list["presets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "rentl")
        .expect("the rentl preset is listed")
        .clone();
    assert_eq!(
        rentl["pipelines"],
        json!(["context", "translation", "editing"])
    );
    assert!(rentl.get("entry").is_none(), "{rentl}");
    assert_eq!(
        rentl["agents"],
        json!(CATALOG.iter().map(|(n, _)| *n).collect::<Vec<_>>())
    );
    // The other presets keep their entry and list no pipelines.
    let quill = &list["presets"][0];
    assert_eq!(
        (quill["name"].clone(), quill["entry"].clone()),
        (json!("quill"), json!("assistant"))
    );
    assert!(quill.get("pipelines").is_none(), "{quill}");
    for (name, tools) in CATALOG {
        let agent = listed_agent(&list, name);
        assert_eq!(agent["toolbox"], json!(tools), "{name}");
        assert_eq!(agent["preset"], "rentl", "{name}");
        assert_eq!(agent["builtin"], true, "{name}");
        assert_eq!(agent["talksToWriter"], false, "{name}");
        assert_eq!(agent["interruptOn"], json!([]), "{name}");
        assert_eq!(agent["routingTools"], json!([]), "{name}");
    }
}

#[test]
fn run_with_the_rentl_preset_points_to_start_job() {
    let page = Page::new(vec![]);
    page.project();
    page.configure();
    let (code, message) = page.err("run", json!({"prompt": "translate it", "preset": "rentl"}));
    assert_eq!(code, "invalid_params");
    assert!(message.contains("start_job"), "{message}");
    assert!(
        message.contains("context, translation, editing"),
        "{message}"
    );
    // Nor can a run start with one of its subagents: they do not talk to the writer.
    let (_, message) = page.err(
        "run",
        json!({"prompt": "summarise", "agent": "scene_summary_detailer"}),
    );
    assert!(message.contains("does not talk to the writer"), "{message}");
    // Nothing ran: the model was never called.
    assert!(page.transport.requests().is_empty());
}

fn definition(interrupt_on: Value) -> Value {
    json!({
        "name": "careful",
        "description": "Updates character notes, asking first.",
        "systemPrompt": "You update character notes. You are done when the notes are saved.",
        "tools": ["character_read_entry", "character_update_notes"],
        "interruptOn": interrupt_on,
        "talksToWriter": true,
    })
}

#[test]
fn interrupt_on_must_name_tools_of_the_toolbox() {
    let page = Page::new(vec![]);
    page.project();
    // A tool that exists but is not the agent's: refused, naming the toolbox.
    let (code, message) = page.err(
        "define_agent",
        json!({"agent": definition(json!(["character_delete_entry"]))}),
    );
    assert_eq!(code, "invalid_params");
    assert!(message.contains("'interruptOn'"), "{message}");
    assert!(message.contains("character_delete_entry"), "{message}");
    assert!(
        message.contains("character_read_entry, character_update_notes"),
        "{message}"
    );
    // A misspelt one gets a suggestion.
    let (_, message) = page.err(
        "define_agent",
        json!({"agent": definition(json!(["character_update_note"]))}),
    );
    assert!(
        message.contains("did you mean 'character_update_notes'"),
        "{message}"
    );
    // Twice, or not a tool name at all.
    let (_, message) = page.err(
        "define_agent",
        json!({"agent": definition(json!(["character_update_notes", "character_update_notes"]))}),
    );
    assert!(message.contains("twice"), "{message}");
    let (_, message) = page.err(
        "define_agent",
        json!({"agent": definition(json!(["no spaces allowed"]))}),
    );
    assert!(message.contains("tool name"), "{message}");
    // Nothing was defined by the refused definitions.
    assert!(listing(&page)["agents"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["name"] != "careful"));
    // A toolset's tool counts as the agent's; so does a routing tool.
    let mut with_set = definition(json!(["read_chapter"]));
    with_set["toolset"] = json!("quick");
    with_set["name"] = json!("reader");
    page.ok("define_agent", json!({"agent": with_set}));
    let mut router = definition(json!(["route_to_reader_agent"]));
    router["name"] = json!("router");
    router["subAgents"] = json!([{"agent": "reader"}]);
    page.ok("define_agent", json!({"agent": router}));
    // The snake_case alias is accepted too.
    let mut snake = definition(json!(null));
    snake.as_object_mut().unwrap().remove("interruptOn");
    snake["interrupt_on"] = json!(["character_update_notes"]);
    let defined = page.ok("define_agent", json!({"agent": snake}));
    assert_eq!(
        defined["agent"]["interruptOn"],
        json!(["character_update_notes"])
    );
}

#[test]
fn interrupt_on_is_listed_exported_and_imported() {
    let page = Page::new(vec![]);
    page.project();
    page.ok(
        "define_agent",
        json!({"agent": definition(json!(["character_update_notes"]))}),
    );
    let agent = listed_agent(&listing(&page), "careful");
    assert_eq!(agent["interruptOn"], json!(["character_update_notes"]));
    let export = page.ok("export_project", json!({}));
    let exported = export["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "careful")
        .unwrap()
        .clone();
    assert_eq!(exported["interruptOn"], json!(["character_update_notes"]));
    // Into a fresh database: kept.
    let fresh = Page::new(vec![]);
    fresh.ok("import_project", json!({"document": export.clone()}));
    assert_eq!(
        listed_agent(&listing(&fresh), "careful")["interruptOn"],
        json!(["character_update_notes"])
    );
    // An import whose agent interrupts on a tool outside its toolbox is refused whole.
    let mut broken = export;
    for a in broken["agents"].as_array_mut().unwrap() {
        a["interruptOn"] = json!(["glossary_delete_entry"]);
    }
    let other = Page::new(vec![]);
    let (_, message) = other.err("import_project", json!({"document": broken}));
    assert!(message.contains("glossary_delete_entry"), "{message}");
    assert_eq!(other.ok("list_projects", json!({}))["projects"], json!([]));
    // An agent without interruptOn is exported without the field (older readers accept it).
    let plain = Page::new(vec![]);
    plain.project();
    plain.ok("define_agent", json!({"agent": definition(json!([]))}));
    let doc = plain.ok("export_project", json!({}));
    assert!(doc["agents"][0].get("interruptOn").is_none(), "{doc}");
}

/// What `www/e2e/rentl-agents.json` holds: the pipelines and each subagent's prompt and
/// toolbox, with the tools a job's unit offers it when overwriting is allowed and when not
/// (as the job engine builds them), for the demo model's tests in node (which cannot ask
/// the core).
fn agents_json() -> String {
    let catalog = Catalog::new(Vec::new());
    let preset = catalog.preset("rentl").unwrap();
    let agents: Vec<Value> = preset
        .agents
        .iter()
        .map(|name| {
            let spec = catalog.get(name).unwrap();
            json!({
                "name": spec.name,
                "description": spec.description,
                "systemPrompt": spec.system_prompt,
                "tools": spec.tools,
                "unitTools": {
                    "overwrite": unit_spec(spec, true).tools,
                    "noOverwrite": unit_spec(spec, false).tools,
                },
                "maxSteps": spec.max_steps,
            })
        })
        .collect();
    let pipelines: Vec<Value> = draftsmith::agent::presets::PIPELINES
        .iter()
        .map(|(phase, stages)| json!({"phase": phase, "stages": stages}))
        .collect();
    format!(
        "{}\n",
        serde_json::to_string_pretty(&json!({
            "generatedBy": "tests/rentl_presets.rs (UPDATE_RENTL_AGENTS=1 cargo test --test rentl_presets)",
            "pipelines": pipelines,
            "agents": agents,
        }))
        .unwrap()
    )
}

#[test]
fn the_agents_file_of_the_demo_model_tests_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/www/e2e/rentl-agents.json");
    let fresh = agents_json();
    if std::env::var_os("UPDATE_RENTL_AGENTS").is_some() {
        std::fs::write(path, &fresh).unwrap();
        return;
    }
    let stored = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        stored == fresh,
        "www/e2e/rentl-agents.json is stale: run `UPDATE_RENTL_AGENTS=1 cargo test --test rentl_presets`"
    );
}
