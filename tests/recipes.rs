//! The recipes of `docs/extending.md`, followed. Each test takes one recipe step by step: for a
//! small new example where the public API lets an embedder do the step from outside the
//! crate, and otherwise by checking that the step has been done for every piece of its kind
//! the crate has (every request, every preset, every provider).
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;
use std::rc::Rc;

use draftsmith::agent::presets;
use draftsmith::agent::spec::{check_interrupt_on, AgentSpec, Catalog, Delegation, SubAgent};
use draftsmith::commands::{Category, Origin};
use draftsmith::core::{Env, EVENTS, REQUESTS};
use draftsmith::llm::sse::SseParser;
use draftsmith::llm::{
    FinishReason, HttpRequest, Message, Provider, ProviderConfig, ProviderKind, ProviderStream,
    RequestOptions, SseMessage, StreamEvent,
};
use draftsmith::policy::{default_mode, Mode};
use draftsmith::project::changeset::ChangeSet;
use draftsmith::project::{Chapter, Project};
use draftsmith::session::{EditContext, Session, ToolCall};
use draftsmith::store::MemoryStore;
use draftsmith::tools::{CatalogFormat, ToolDefinition, ToolError, ToolRegistry, ToolSpec, ALL};
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures::executor::block_on;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn core() -> Core {
    Core::new(Env {
        clock: Rc::new(ManualClock::new(1_000)),
        ids: Rc::new(SequentialIds::new("id")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: Rc::new(RecordingSink::default()),
        store: Rc::new(MemoryStore::new()),
    })
}

fn send(core: &Core, kind: &str, params: Value) -> Value {
    let text = json!({"id": 1, "type": kind, "params": params}).to_string();
    serde_json::from_str(&block_on(core.handle_text(&text))).unwrap()
}

fn ok(core: &Core, kind: &str, params: Value) -> Value {
    let r = send(core, kind, params.clone());
    assert_eq!(r["ok"], true, "{kind} {params} -> {r}");
    r["result"].clone()
}

// ---- Adding a tool ----

/// Arguments of `append_line`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppendLineArgs {
    /// The chapter: its id, number or title; the active chapter when absent.
    #[serde(default)]
    pub chapter: Option<String>,
    /// The line to add at the end of the chapter (one line: no line breaks).
    pub line_text: String,
}

/// `append_line`.
pub struct AppendLine;

impl ToolSpec for AppendLine {
    type Args = AppendLineArgs;
    const NAME: &'static str = "append_line";
    const CATEGORY: Category = Category::Editing;
    const DESCRIPTION: &'static str = "Add one line at the end of a chapter.";
    const REVERSIBLE: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        if args.line_text.contains('\n') {
            return Err(ToolError::invalid_args(
                "'lineText' must be one line; call append_line once per line",
            ));
        }
        let chapter = cx.chapter(args.chapter.as_deref())?;
        let (id, len) = (chapter.id.clone(), chapter.len_chars());
        let change = ChangeSet::replace(len, len, len, &format!("\n{}", args.line_text))
            .map_err(|e| ToolError::new("out_of_range", e.to_string()))?;
        let version = cx.edit(&id, change)?;
        Ok(json!({ "chapter": id, "version": version }))
    }
}

/// "Adding a tool": an argument struct, a `ToolSpec`, `registry.add`; then it is in the
/// catalog with the schema its `///` docs describe, in the `all` toolset and the executor,
/// its edits are one undoable history entry naming the call, a failure changes nothing, and
/// its approval policy follows its name.
#[test]
fn recipe_a_tool() {
    let mut registry = ToolRegistry::standard();
    registry.add::<AppendLine>();

    // The catalog: the schema the model reads, with the field docs as descriptions.
    let definition = registry.definition("append_line").expect("registered");
    assert_eq!(definition.category, Category::Editing);
    assert!(definition.reversible && !definition.read_only);
    let schema = &definition.parameters;
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["lineText"]), "{schema}");
    assert_eq!(
        schema["properties"]["lineText"]["description"],
        "The line to add at the end of the chapter (one line: no line breaks)."
    );
    let catalog = registry.catalog(CatalogFormat::Openai, ALL).unwrap();
    let entry = catalog
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "append_line")
        .expect("in the openai catalog of `all`");
    assert_eq!(
        entry["function"]["description"],
        "Add one line at the end of a chapter."
    );
    assert_eq!(&entry["function"]["parameters"], schema);
    assert!(registry
        .toolset(ALL)
        .unwrap()
        .iter()
        .any(|d| d.name == "append_line"));

    // The executor: the one edit path, recorded and undoable.
    let mut s = Session::new(Project::new(
        "p",
        "Lighthouse",
        vec![Chapter::new("c1", "One", "The lamp went out.")],
    ));
    let (clock, ids) = (ManualClock::new(1_000), SequentialIds::new("id"));
    let call = |name: &str, args: Value| ToolCall {
        id: Some("call_1".into()),
        name: name.into(),
        args,
    };
    let agent = Origin::Agent("assistant".into());
    let out = s.execute(
        &registry,
        call("append_line", json!({"lineText": "Nobody answered."})),
        agent.clone(),
        &clock,
        &ids,
    );
    let result = serde_json::to_value(&out.result).unwrap();
    assert_eq!(result["status"], "success", "{result}");
    assert_eq!(result["data"]["chapter"], "c1");
    assert_eq!(
        s.project.chapter("c1").unwrap().text().to_string(),
        "The lamp went out.\nNobody answered."
    );
    let entry = s.history.entries().last().expect("a history entry");
    assert_eq!(entry.command.as_deref(), Some("append_line"));
    assert_eq!(entry.tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(entry.origin, agent);
    s.undo(None, Origin::User, &clock, &ids).unwrap();
    assert_eq!(
        s.project.chapter("c1").unwrap().text().to_string(),
        "The lamp went out."
    );

    // Arguments are checked against the schema; a `ToolError` tells the model what works.
    for (args, code) in [
        (json!({}), "invalid_args"),
        (json!({"lineText": "a\nb"}), "invalid_args"),
        (json!({"lineText": "x", "chapter": "9"}), "not_found"),
    ] {
        let out = s.execute(
            &registry,
            call("append_line", args),
            agent.clone(),
            &clock,
            &ids,
        );
        let result = serde_json::to_value(&out.result).unwrap();
        assert_eq!(result["data"]["code"], code, "{result}");
    }
    assert_eq!(
        s.project.chapter("c1").unwrap().text().to_string(),
        "The lamp went out."
    );
    assert!(!s.history.can_undo());

    // The approval policy by the action its name implies: `append_line` reads as a read.
    assert_eq!(default_mode("append_line"), Mode::Permissive);
    assert_eq!(default_mode("note_update_entry"), Mode::Standard);

    // A tool registered in its family's `register` is served by the core: the recipe's own
    // example, `switch_panel`, through the `execute` request.
    let core = core();
    ok(
        &core,
        "create_project",
        json!({"name": "L", "chapters": [{"title": "One", "text": "The lamp."}]}),
    );
    assert!(core.registry().definition("switch_panel").is_some());
    let result = ok(
        &core,
        "execute",
        json!({"tool": "switch_panel", "args": {"panel": "memory"}}),
    );
    assert_eq!(result["data"]["panel"], "memory", "{result}");
}

// ---- Adding a request type ----

/// Requests the client package does not send through a method of its own, and why.
const NOT_CLIENT_METHODS: &[(&str, &str)] = &[
    // The worker sends it itself when another tab's worker changed the open project.
    ("reload_project", "packages/draftsmith/src/worker.js"),
    // The client sends it itself on the page's `offline` and `online` events.
    ("sync_network", "packages/draftsmith/draftsmith.js"),
    // Test hooks: the browser tests send them through `client.request`.
    ("debug_panic", ""),
    ("debug_fail_saves", ""),
];

/// The client method of `draftsmith.js` whose body holds line `at`: `method`, or
/// `getter.property` (`chapters.add`) for a property of an object a getter returns.
fn method_at(lines: &[&str], at: usize) -> Option<String> {
    let ident = |text: &str| -> String {
        text.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let method_of = |line: &str| -> Option<String> {
        let rest = line.strip_prefix("  ")?;
        let rest = rest.strip_prefix("get ").unwrap_or(rest);
        let rest = rest.strip_prefix("async ").unwrap_or(rest);
        let name = ident(rest);
        (!name.is_empty() && rest[name.len()..].starts_with('(')).then_some(name)
    };
    // The nearest line above that opens a method, or a property of the object a getter
    // returns (at six spaces: `      add: (...) =>`).
    let mut property = None;
    for line in lines[..=at].iter().rev() {
        if let Some(method) = method_of(line) {
            return Some(match property {
                Some(property) => format!("{method}.{property}"),
                None => method,
            });
        }
        if property.is_none() {
            if let Some(rest) = line.strip_prefix("      ") {
                let name = ident(rest);
                let after = &rest[name.len()..];
                if !name.is_empty() && (after.starts_with(": (") || after.starts_with(": async")) {
                    property = Some(name);
                }
            }
        }
    }
    None
}

/// The client methods of `draftsmith.js` that send request `name`: the one that calls
/// `request('name'`, and the grouped properties that call that one (`projects.create` for
/// `createProject`).
fn client_methods(js: &str, name: &str) -> Vec<String> {
    let lines: Vec<&str> = js.lines().collect();
    let Some(method) = lines
        .iter()
        .position(|l| l.contains(&format!("request('{name}'")))
        .and_then(|at| method_at(&lines, at))
    else {
        return Vec::new();
    };
    let mut methods = vec![method.clone()];
    for (at, line) in lines.iter().enumerate() {
        if line.contains(&format!("this.{method}(")) {
            methods.extend(method_at(&lines, at));
        }
    }
    methods
}

/// Whether a TypeScript declaration declares method `name` (given with its indentation).
fn declares(ts: &str, name: &str) -> bool {
    ts.contains(&format!("{name}(")) || ts.contains(&format!("{name}<"))
}

/// "Adding a request type", every step, for every declared request: served by the core
/// (step 1), in `protocol.d.ts` (step 2: `tests/protocol_types.rs` checks the union and the
/// params and results maps), sent by a typed method of `draftsmith.js`, declared in
/// `draftsmith.d.ts` and called in `www/types-check/usage.ts` (step 5), and documented in
/// `docs/protocol.md` (step 6: also `tests/protocol_types.rs`).
#[test]
fn recipe_a_request() {
    let core = core();
    let js = read("packages/draftsmith/draftsmith.js");
    let dts = read("packages/draftsmith/draftsmith.d.ts");
    let usage = read("www/types-check/usage.ts");
    let doc = read("docs/protocol.md");
    let protocol = read("packages/draftsmith/protocol.d.ts");
    for name in REQUESTS {
        // Parameters no request takes: decoded by name, refused before any work.
        let r = send(&core, name, json!({"message": 1}));
        assert_ne!(
            r["error"]["code"], "unknown_request",
            "`{name}` is not served"
        );
        assert!(
            protocol.contains(&format!("| '{name}'")),
            "protocol.d.ts lacks `{name}`"
        );
        assert!(
            doc.contains(&format!("`{name}`")),
            "docs/protocol.md does not describe `{name}`"
        );
        if let Some((_, sender)) = NOT_CLIENT_METHODS.iter().find(|(n, _)| n == name) {
            if !sender.is_empty() {
                assert!(
                    read(sender).contains(&format!("'{name}'")),
                    "{sender} sends {name}"
                );
            }
            continue;
        }
        let methods = client_methods(&js, name);
        let method = methods.first().unwrap_or_else(|| {
            panic!("packages/draftsmith/draftsmith.js has no method that sends '{name}'")
        });
        let (outer, inner) = method.split_once('.').unwrap_or((method, ""));
        if inner.is_empty() {
            assert!(
                declares(&dts, &format!("  {outer}")),
                "draftsmith.d.ts does not declare `{outer}` (sends `{name}`)"
            );
        } else {
            let block = dts
                .split(&format!("readonly {outer}: {{"))
                .nth(1)
                .and_then(|rest| rest.split("\n  };").next())
                .unwrap_or_else(|| panic!("draftsmith.d.ts does not declare `{outer}`"));
            assert!(
                declares(block, &format!("    {inner}")),
                "draftsmith.d.ts does not declare `{method}` (sends `{name}`)"
            );
        }
        assert!(
            methods.iter().any(|m| usage.contains(&format!(".{m}("))),
            "www/types-check/usage.ts calls none of {methods:?} (they send `{name}`)"
        );
    }
}

// ---- Adding an event ----

/// "Adding an event", every step: each event the core sends is declared (step 1: `EVENTS`)
/// and leaves through `Core::emit` under its declared name (step 2: every event of a small
/// session is in `EVENTS`); the generated `CoreEventMap` of `protocol.d.ts` has it, and the
/// client's `EventMap` extends that map (step 3); `docs/protocol.md` documents it (step 4).
#[test]
fn recipe_an_event() {
    let protocol = read("packages/draftsmith/protocol.d.ts");
    let dts = read("packages/draftsmith/draftsmith.d.ts");
    let doc = read("docs/protocol.md");
    let map = protocol
        .split("export interface CoreEventMap {")
        .nth(1)
        .and_then(|rest| rest.split("\n}\n").next())
        .expect("protocol.d.ts declares CoreEventMap");
    assert!(dts.contains("export interface EventMap extends CoreEventMap {"));
    for name in EVENTS {
        assert!(
            map.lines()
                .any(|l| l.trim_start().starts_with(&format!("{name}:"))),
            "CoreEventMap lacks `{name}`"
        );
        assert!(
            doc.contains(&format!("| `{name}` |")),
            "docs/protocol.md does not describe the event `{name}`"
        );
    }
    // A small session: a project made, a keystroke, a chapter added.
    let events = Rc::new(RecordingSink::default());
    let core = Core::new(Env {
        clock: Rc::new(ManualClock::new(1_000)),
        ids: Rc::new(SequentialIds::new("id")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: events.clone(),
        store: Rc::new(MemoryStore::new()),
    });
    let project = ok(
        &core,
        "create_project",
        json!({"name": "Recipes", "chapters": [{"title": "One", "text": "The lamp."}]}),
    );
    let chapter = project["chapters"][0]["id"].clone();
    ok(
        &core,
        "apply_user_change",
        json!({"chapter": chapter, "baseVersion": 0, "changes": [{"retain": 9}, {"insert": " Lit."}]}),
    );
    ok(&core, "add_chapter", json!({"title": "Two"}));
    let kinds: BTreeSet<String> = events.peek().into_iter().map(|e| e.kind).collect();
    for kind in &kinds {
        assert!(EVENTS.contains(&kind.as_str()), "`{kind}` is not declared");
    }
    for sent in [
        "projects_changed",
        "edit",
        "history_changed",
        "saved",
        "chapters_changed",
    ] {
        assert!(kinds.contains(sent), "`{sent}` was not sent: {kinds:?}");
    }
}

// ---- Adding an agent preset ----

/// Every check the recipe promises of a preset's agent: a valid spec whose toolbox names only
/// registered tools (and toolsets), whose sub-agents resolve without a cycle, and whose
/// `interrupt_on` tools are in its toolbox.
fn check_agent(catalog: &Catalog, registry: &ToolRegistry, spec: &AgentSpec) {
    let name = &spec.name;
    spec.check().unwrap_or_else(|e| panic!("{name}: {e}"));
    if let Some(set) = &spec.toolset {
        assert!(registry.toolset(set).is_ok(), "{name}: no toolset {set}");
    }
    for tool in &spec.tools {
        assert!(
            registry.definition(tool).is_some(),
            "{name}: unknown tool {tool}"
        );
    }
    for link in &spec.sub_agents {
        assert!(
            catalog.get(&link.agent).is_some(),
            "{name}: sub-agent {} does not resolve",
            link.agent
        );
    }
    assert_eq!(catalog.cycle_through(name), None, "{name}: a cycle");
    let mut toolbox = spec.toolbox(registry);
    let routing: Vec<ToolDefinition> = spec.routing_tools(catalog);
    toolbox.extend(routing.iter().map(|t| t.name.to_string()));
    check_interrupt_on(spec, &toolbox).unwrap_or_else(|e| panic!("{name}: {e}"));
}

/// "Adding an agent preset": a small example preset (an entry agent that assigns tasks to a
/// sub-agent) built with the same helpers passes the same validation as an app's agents;
/// and every real preset passes the checks the recipe promises: valid specs, tools that
/// exist, sub-agents that resolve, an entry agent that talks to the writer, listed by
/// `list_agents`, and named in `RunOptions.preset` of `draftsmith.d.ts`.
#[test]
fn recipe_an_agent_preset() {
    let registry = ToolRegistry::standard();

    // The example, built as presets are: an entry agent that assigns tasks to a checker.
    let checker = presets::agent(
        "continuity_checker",
        "Checks a chapter against the story bible.",
        "You check one chapter against the story bible (query_lore, get_character_info) and list each contradiction with the passage. You are done when you have answered with the list, or with 'none'.",
        &["read_chapter", "query_lore", "get_character_info"],
    );
    let mut lead = presets::agent(
        "continuity_lead",
        "Plans a continuity pass and assigns each chapter to the checker.",
        "You plan a continuity pass over the manuscript: list the chapters, assign each to continuity_checker with assign_task, and collect what it finds. You are done when you have told the writer every contradiction found, by chapter.",
        &["list_chapters"],
    );
    lead.sub_agents = vec![SubAgent::to("continuity_checker")];
    lead.delegation = Delegation::AssignTask;
    lead.talks_to_writer = true;
    lead.interrupt_on = vec!["assign_task".into()];
    let catalog = Catalog::new([]);
    catalog.validate(&checker, &registry).unwrap();
    let catalog = Catalog::new([checker.clone()]);
    catalog.validate(&lead, &registry).unwrap();
    let catalog = Catalog::new([checker, lead.clone()]);
    check_agent(&catalog, &registry, &lead);
    // The same validation refuses what the recipe rules out.
    let mut wrong = lead.clone();
    wrong.tools.push("append_line".into());
    assert!(catalog
        .validate(&wrong, &registry)
        .unwrap_err()
        .contains("unknown tool 'append_line'"));
    let mut wrong = lead.clone();
    wrong.sub_agents.push(SubAgent::to("copy_editor"));
    assert!(catalog
        .validate(&wrong, &registry)
        .unwrap_err()
        .contains("sub-agent 'copy_editor' does not exist"));

    // Every real preset.
    let (all, agents) = presets::all();
    let catalog = Catalog::new([]);
    let core = core();
    ok(&core, "create_project", json!({"name": "Agents"}));
    let listed = ok(&core, "list_agents", json!({}));
    let dts = read("packages/draftsmith/draftsmith.d.ts");
    let run_preset_doc = dts
        .lines()
        .skip_while(|l| !l.contains("export interface RunOptions"))
        .take_while(|l| !l.trim_start().starts_with("preset?:"))
        .last()
        .unwrap_or_default()
        .to_string();
    for preset in &all {
        assert!(
            listed["presets"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == preset.name.as_str()),
            "list_agents does not list preset {}",
            preset.name
        );
        for name in &preset.agents {
            let spec = catalog.get(name).unwrap_or_else(|| panic!("{name}"));
            check_agent(&catalog, &registry, spec);
            assert!(
                listed["agents"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|a| a["name"] == name.as_str() && a["preset"] == preset.name.as_str()),
                "list_agents does not list agent {name} of {}",
                preset.name
            );
        }
        match &preset.entry {
            Some(entry) => {
                assert!(preset.agents.contains(entry), "{}: entry", preset.name);
                assert!(catalog.get(entry).unwrap().talks_to_writer);
                assert!(
                    run_preset_doc.contains(&format!("`{}`", preset.name)),
                    "RunOptions.preset in draftsmith.d.ts does not name `{}`",
                    preset.name
                );
            }
            None => assert!(
                !preset.pipelines.is_empty(),
                "{}: no way to run",
                preset.name
            ),
        }
    }
    assert!(agents.iter().all(|a| catalog.is_builtin(&a.name)));
}

// ---- Adding a provider ----

/// An example provider: a toy wire format with a JSON body `{model, prompt, tools}` and a
/// whole-response body `{text}` or `{error}`.
struct Toy;

impl Provider for Toy {
    fn build_request(
        &self,
        config: &ProviderConfig,
        messages: &[Message],
        tools: &[&ToolDefinition],
        _options: &RequestOptions,
    ) -> HttpRequest {
        let prompt: Vec<Value> = messages
            .iter()
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
            .collect();
        let tools: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        HttpRequest {
            method: "POST".into(),
            url: format!("{}/complete", config.base_url.trim_end_matches('/')),
            headers: vec![("content-type".into(), "application/json".into())],
            body: json!({"model": config.model, "prompt": prompt, "tools": tools}).to_string(),
        }
    }

    fn parse_response(&self, body: &str) -> Result<Vec<StreamEvent>, String> {
        let value: Value = serde_json::from_str(body).map_err(|e| e.to_string())?;
        if let Some(message) = value["error"].as_str() {
            return Ok(vec![StreamEvent::Error {
                message: message.into(),
            }]);
        }
        Ok(vec![
            StreamEvent::TextDelta {
                text: value["text"].as_str().unwrap_or_default().into(),
            },
            StreamEvent::Finish {
                reason: FinishReason::Stop,
            },
        ])
    }
}

/// The provider kinds; the match fails to compile when one is added, until it is listed.
const KINDS: [(ProviderKind, &str); 4] = [
    (ProviderKind::Openai, "openai"),
    (ProviderKind::Anthropic, "anthropic"),
    (ProviderKind::Gemini, "gemini"),
    (ProviderKind::Local, "local"),
];

fn listed(kind: ProviderKind) {
    match kind {
        ProviderKind::Openai
        | ProviderKind::Anthropic
        | ProviderKind::Gemini
        | ProviderKind::Local => {}
    }
}

/// "Adding a provider": an example `llm::Provider` builds a request and parses a scripted
/// response; and for every `ProviderKind` (a variant cannot be added from outside the crate)
/// each step's effect: it parses by name, has a catalog format, an adapter that builds a
/// request to its base URL, a stream decoder that decodes its recorded stream in
/// `examples/streams/` into a tool call, a parser of whole responses, is accepted by the
/// settings (configured, with what a call needs), in `ProviderKind` of `draftsmith.d.ts` and
/// in the settings form of `www/index.html`.
#[test]
fn recipe_a_provider() {
    let registry = ToolRegistry::standard();
    let tools = registry.toolset("quick").unwrap();
    let messages = [Message::system("Be brief."), Message::user("Hello")];
    let options = RequestOptions {
        stream: true,
        ..RequestOptions::default()
    };

    // The example provider.
    let config = ProviderConfig {
        kind: ProviderKind::Openai,
        base_url: "http://localhost:9000/".into(),
        model: "toy-1".into(),
        api_key: None,
        extra_headers: Vec::new(),
        local: Default::default(),
    };
    let toy: &dyn Provider = &Toy;
    let request = toy.build_request(&config, &messages, &tools, &options);
    assert_eq!(request.url, "http://localhost:9000/complete");
    let body: Value = serde_json::from_str(&request.body).unwrap();
    assert_eq!(body["model"], "toy-1");
    assert_eq!(body["tools"].as_array().unwrap().len(), tools.len());
    assert_eq!(
        toy.parse_response(r#"{"text": "Hi."}"#).unwrap(),
        vec![
            StreamEvent::TextDelta { text: "Hi.".into() },
            StreamEvent::Finish {
                reason: FinishReason::Stop
            }
        ]
    );
    assert!(matches!(
        toy.parse_response(r#"{"error": "overloaded"}"#).unwrap()[..],
        [StreamEvent::Error { .. }]
    ));
    assert!(toy.parse_response("<html>").is_err());

    // Every real provider.
    let dts = read("packages/draftsmith/draftsmith.d.ts");
    let form = read("www/index.html");
    let core = core();
    for (kind, name) in KINDS {
        listed(kind);
        assert_eq!(name.parse::<ProviderKind>(), Ok(kind));
        assert!(
            registry.catalog(kind, ALL).is_ok(),
            "{name}: catalog format"
        );
        // A model in the browser is named by its file's URL and needs no base URL or key.
        let local = kind == ProviderKind::Local;
        let model = if local {
            "https://models.example.com/v1/m-1.gguf"
        } else {
            "m-1"
        };
        let config = ProviderConfig {
            kind,
            base_url: "https://models.example.com/v1".into(),
            model: model.into(),
            api_key: Some("sk-test".into()),
            extra_headers: Vec::new(),
            local: Default::default(),
        };
        let request =
            draftsmith::llm::provider(kind).build_request(&config, &messages, &tools, &options);
        assert_eq!(request.method, "POST", "{name}");
        assert!(
            request.url.starts_with("https://models.example.com/v1"),
            "{name}: {}",
            request.url
        );
        assert!(
            serde_json::from_str::<Value>(&request.body).is_ok(),
            "{name}"
        );

        let sse = read(&format!("examples/streams/{name}_tool_call.sse"));
        let mut parser = SseParser::new();
        let mut stream = ProviderStream::for_request(kind, &request);
        let mut events = Vec::new();
        for event in parser.push(sse.as_bytes()) {
            events.extend(stream.on_event(SseMessage::new(event.event.as_deref(), &event.data)));
        }
        events.extend(stream.finish());
        assert!(
            events
                .iter()
                .any(|e| matches!(e, StreamEvent::ToolCallStarted { .. })),
            "{name}: the recorded stream decodes to a tool call: {events:?}"
        );
        assert!(
            draftsmith::llm::parse_response(kind, "{}").is_ok(),
            "{name}: whole responses"
        );

        let settings = ok(
            &core,
            "set_settings",
            json!({"provider": name, "baseUrl": "https://models.example.com/v1", "model": model, "apiKey": "sk-test"}),
        );
        assert_eq!(settings["provider"], name, "{settings}");
        assert_eq!(settings["configured"], true, "{name}: {settings}");
        assert!(
            dts.contains(&format!("'{name}'")),
            "draftsmith.d.ts: ProviderKind lacks '{name}'"
        );
        assert!(
            form.contains(&format!("<option value=\"{name}\"")),
            "www/index.html: the settings form lacks {name}"
        );
    }
}
