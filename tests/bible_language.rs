//! The language tools of the story bible: glossary, style guide, UI settings, translations,
//! QA checks, context documents, status and machine translation. The key property: every
//! update and delete tool asks the writer before an agent changes what the writer wrote
//! (changing nothing), and applies changes to agent-written or empty fields with the agent's
//! provenance.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;
use std::rc::Rc;

use draftsmith::agent::AbortSignal;
use draftsmith::bible::{Actor, Kind};
use draftsmith::commands::{Category, Origin};
use draftsmith::core::mtl::{suggest, MtlError};
use draftsmith::core::Env;
use draftsmith::llm::client::{RecordingSleeper, Scripted, ScriptedEnd, ScriptedTransport};
use draftsmith::policy::{Grant, Mode, Policies};
use draftsmith::project::changeset::ChangeSet;
use draftsmith::project::{Chapter, Project};
use draftsmith::session::{CallExtras, Outcome, Session, ToolCall};
use draftsmith::store::MemoryStore;
use draftsmith::tools::bible::language::{self, mtl_plan, MtlPlan};
use draftsmith::tools::ToolRegistry;
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures::executor::block_on;
use serde_json::{json, Value};

/// 2026-11-22T00:00:00Z.
const T0: u64 = 1_795_305_600_000;
const LORE: &str = "agent:lore:2026-11-22";

const SCENE1: &str = "The harbor was quiet.\nKaze blew from the sea.\n\n  Mara waited by the Lighthouse.  \nShe counted the boats.\n";
const REST: &str = "The bell rang.\n";

const TOOLS: [&str; 19] = [
    "glossary_search_term",
    "glossary_read_entry",
    "glossary_create_entry",
    "glossary_update_entry",
    "glossary_merge_entries",
    "glossary_delete_entry",
    "styleguide_read_full",
    "ui_read_settings",
    "translation_check_mtl_available",
    "translation_create_mtl_suggestion",
    "translation_create_line",
    "translation_update_line",
    "translation_read_scene",
    "translation_create_style_check",
    "translation_create_consistency_check",
    "translation_create_review_check",
    "contextdoc_list_all",
    "contextdoc_read_doc",
    "context_read_status",
];

struct T {
    s: Session,
    registry: ToolRegistry,
    clock: ManualClock,
    ids: SequentialIds,
}

fn lore() -> Origin {
    Origin::Agent("lore".into())
}

fn other() -> Origin {
    Origin::Agent("other".into())
}

fn fields(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

impl T {
    /// A project with chapter c1 and scenes s1 (its first four lines) and s2 (the whole
    /// chapter, five lines).
    fn new() -> Self {
        let text = format!("{SCENE1}{REST}");
        let mut s = Session::new(Project::new(
            "p",
            "Harbor",
            vec![Chapter::new("c1", "The Harbor", &text)],
        ));
        let end = SCENE1.chars().count();
        s.bible
            .create(
                Kind::Scene,
                "s1",
                fields(&[
                    ("chapter", json!("c1")),
                    ("span", json!({"start": 0, "end": end})),
                ]),
                &Actor::Human,
                0,
            )
            .unwrap();
        s.bible
            .create(
                Kind::Scene,
                "s2",
                fields(&[("chapter", json!("c1"))]),
                &Actor::Human,
                0,
            )
            .unwrap();
        Self {
            s,
            registry: ToolRegistry::standard(),
            clock: ManualClock::new(T0),
            ids: SequentialIds::new("id"),
        }
    }

    fn call_with(
        &mut self,
        tool: &str,
        args: Value,
        origin: Origin,
        extras: CallExtras<'_>,
    ) -> Outcome {
        self.s.execute_with(
            &self.registry,
            ToolCall {
                id: Some("call-1".into()),
                name: tool.into(),
                args,
            },
            origin,
            &self.clock,
            &self.ids,
            extras,
        )
    }

    fn call(&mut self, tool: &str, args: Value, origin: Origin) -> Outcome {
        self.call_with(tool, args, origin, CallExtras::default())
    }

    fn ok(&mut self, tool: &str, args: Value, origin: Origin) -> Value {
        let out = self.call(tool, args.clone(), origin);
        assert!(out.result.is_success(), "{tool} {args}: {:?}", out.result);
        out.result.data
    }

    /// Calls `tool` expecting an error with `code`; checks the bible did not change.
    fn err(&mut self, tool: &str, args: Value, origin: Origin, code: &str) -> Value {
        self.err_with(tool, args, origin, code, CallExtras::default())
    }

    fn err_with(
        &mut self,
        tool: &str,
        args: Value,
        origin: Origin,
        code: &str,
        extras: CallExtras<'_>,
    ) -> Value {
        let before = self.entities();
        let out = self.call_with(tool, args.clone(), origin, extras);
        assert!(
            !out.result.is_success(),
            "{tool} {args} succeeded: {:?}",
            out.result
        );
        assert_eq!(
            out.result.data["code"], code,
            "{tool} {args}: {:?}",
            out.result
        );
        // (The version counter may move on: a rolled-back change used a version number.)
        assert_eq!(self.entities(), before, "{tool} {args} changed the bible");
        assert!(out.bible.is_empty());
        out.result.data
    }

    /// Every bible entity, as it is.
    fn entities(&self) -> Vec<draftsmith::bible::Entity> {
        self.s.bible.all().cloned().collect()
    }

    fn human(&mut self, kind: Kind, id: &str, pairs: &[(&str, Value)]) {
        self.s
            .bible
            .create(kind, id, fields(pairs), &Actor::Human, self.clock_now())
            .unwrap();
    }

    fn agent(&mut self, name: &str, kind: Kind, id: &str, pairs: &[(&str, Value)]) {
        let actor = Actor::from_origin(&Origin::Agent(name.into()), self.clock_now());
        self.s
            .bible
            .create(kind, id, fields(pairs), &actor, self.clock_now())
            .unwrap();
    }

    fn clock_now(&self) -> u64 {
        use draftsmith::Clock;
        self.clock.now_ms()
    }

    fn field(&self, kind: Kind, id: &str, field: &str) -> (Value, Option<String>) {
        let e = self.s.bible.get(kind, id).unwrap();
        (e.get(field).clone(), e.origin(field).map(str::to_string))
    }
}

/// The approval details name the field with its current value, who wrote it, and the
/// proposed value.
fn assert_asks(data: &Value, id: &str, field: &str, current: Value, proposed: Value) {
    let details = &data["details"];
    assert_eq!(details["id"], id, "{data}");
    let change = details["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["field"] == field)
        .unwrap_or_else(|| panic!("no field {field} in {data}"));
    assert_eq!(change["current"], current, "{data}");
    assert_eq!(change["proposed"], proposed, "{data}");
    assert_eq!(change["current_origin"], "human", "{data}");
    assert!(data["message"].as_str().unwrap().contains("approval"));
}

#[test]
fn the_language_tools_are_registered_as_bible_tools() {
    let registry = ToolRegistry::standard();
    for tool in TOOLS {
        let def = registry
            .definition(tool)
            .unwrap_or_else(|| panic!("{tool} is not registered"));
        assert_eq!(def.category, Category::Bible, "{tool}");
        assert!(!def.reversible, "{tool}");
        let reads = tool.contains("_read_")
            || tool.contains("_search_")
            || tool.contains("_list_")
            || tool.contains("_check_mtl")
            || tool.contains("mtl_suggestion");
        assert_eq!(def.read_only, reads, "{tool}");
        assert!(def.description.len() > 40, "{tool}");
        assert!(registry
            .toolset("all")
            .unwrap()
            .iter()
            .any(|d| d.name == tool));
    }
    assert!(language::is_mtl("translation_create_mtl_suggestion"));
    assert!(language::is_mtl("translation_check_mtl_available"));
    assert!(!language::is_mtl("translation_create_line"));
}

// ---------------------------------------------------------------------------------------
// The key acceptance test: approvals and provenance of every update and delete tool.

#[test]
fn glossary_update_asks_before_changing_human_fields_and_applies_to_agent_or_empty_ones() {
    let mut t = T::new();
    t.human(
        Kind::Glossary,
        "kaze",
        &[("term_src", json!("Kaze")), ("term_tgt", json!("Wind"))],
    );
    // (a) human-written term_tgt: approval, nothing changed.
    let data = t.err(
        "glossary_update_entry",
        json!({"id": "kaze", "term_tgt": "Breeze"}),
        lore(),
        "approval_required",
    );
    assert_asks(&data, "kaze", "term_tgt", json!("Wind"), json!("Breeze"));
    // Also when an empty field comes along with it.
    t.err(
        "glossary_update_entry",
        json!({"id": "kaze", "term_tgt": "Breeze", "notes": "a gust"}),
        lore(),
        "approval_required",
    );
    // (b) the empty notes are the agent's to fill.
    let data = t.ok(
        "glossary_update_entry",
        json!({"id": "kaze", "notes": "The sea wind of the harbor."}),
        lore(),
    );
    assert_eq!(data["changed"], true);
    assert_eq!(data["entry"]["notes_origin"], LORE);
    assert!(data["text"].as_str().unwrap().contains(LORE));
    assert_eq!(
        t.field(Kind::Glossary, "kaze", "notes"),
        (json!("The sea wind of the harbor."), Some(LORE.into()))
    );
    assert_eq!(t.field(Kind::Glossary, "kaze", "term_tgt").0, "Wind");
    // Agent-written (by another agent, long ago): applied, now lore's.
    t.agent(
        "other",
        Kind::Glossary,
        "umi",
        &[("term_src", json!("Umi")), ("term_tgt", json!("Ocean"))],
    );
    t.clock.advance(60_000);
    t.ok(
        "glossary_update_entry",
        json!({"id": "umi", "term_tgt": "Sea"}),
        lore(),
    );
    assert_eq!(
        t.field(Kind::Glossary, "umi", "term_tgt"),
        (json!("Sea"), Some(LORE.into()))
    );
    // The writer is never asked about their own changes.
    t.ok(
        "glossary_update_entry",
        json!({"id": "kaze", "term_tgt": "Gale"}),
        Origin::User,
    );
    assert_eq!(
        t.field(Kind::Glossary, "kaze", "term_tgt"),
        (json!("Gale"), Some("human".into()))
    );
}

#[test]
fn glossary_delete_asks_before_removing_human_entries() {
    let mut t = T::new();
    t.ok(
        "glossary_create_entry",
        json!({"term_src": "Kaze", "term_tgt": "Wind"}),
        Origin::User,
    );
    let data = t.err(
        "glossary_delete_entry",
        json!({"id": "kaze"}),
        lore(),
        "approval_required",
    );
    assert_asks(&data, "kaze", "term_tgt", json!("Wind"), Value::Null);
    // An agent's entry (and one with only agent and empty fields) goes.
    t.ok("glossary_create_entry", json!({"term_src": "Umi"}), other());
    let data = t.ok("glossary_delete_entry", json!({"id": "umi"}), lore());
    assert_eq!(data["deleted"]["term_src"], "Umi");
    assert!(t.s.bible.get(Kind::Glossary, "umi").is_none());
    t.err(
        "glossary_delete_entry",
        json!({"id": "umi"}),
        lore(),
        "not_found",
    );
}

#[test]
fn glossary_merge_asks_for_every_protected_entry_and_a_failure_halfway_changes_nothing() {
    let mut t = T::new();
    t.human(
        Kind::Glossary,
        "kaze",
        &[("term_src", json!("Kaze")), ("notes", json!("Sea wind."))],
    );
    t.agent(
        "lore",
        Kind::Glossary,
        "kaze-2",
        &[
            ("term_src", json!("kaze")),
            ("notes", json!("Also a name.")),
        ],
    );
    // (a) the kept entry's notes are the writer's: approval, nothing changed.
    let data = t.err(
        "glossary_merge_entries",
        json!({"keep": "kaze", "merge": ["kaze-2"]}),
        lore(),
        "approval_required",
    );
    assert_asks(
        &data,
        "kaze",
        "notes",
        json!("Sea wind."),
        json!("Sea wind.\n\nAlso a name."),
    );
    let versions = &data["details"]["versions"];
    assert_eq!(
        versions["glossary/kaze"],
        t.s.bible.get(Kind::Glossary, "kaze").unwrap().version
    );
    assert_eq!(
        versions["glossary/kaze-2"],
        t.s.bible.get(Kind::Glossary, "kaze-2").unwrap().version
    );

    // The kept entry is the agent's, but a merged one is the writer's: the update of the
    // kept entry runs first, then the delete needs approval, and everything is rolled back.
    let mut t = T::new();
    t.agent(
        "lore",
        Kind::Glossary,
        "umi",
        &[("term_src", json!("Umi")), ("notes", json!("The sea."))],
    );
    t.human(
        Kind::Glossary,
        "umi-2",
        &[("term_src", json!("UMI")), ("term_tgt", json!("Ocean"))],
    );
    let data = t.err(
        "glossary_merge_entries",
        json!({"keep": "umi", "merge": ["umi-2"]}),
        lore(),
        "approval_required",
    );
    assert_asks(&data, "umi-2", "term_tgt", json!("Ocean"), Value::Null);
    assert_eq!(data["details"]["entries"][0]["id"], "umi-2");
    assert!(data["message"].as_str().unwrap().contains("umi-2 (delete)"));

    // (b) agent-written and empty fields: merged, the notes combined with lore's origin.
    let mut t = T::new();
    t.agent(
        "other",
        Kind::Glossary,
        "tou",
        &[("term_src", json!("Tou")), ("notes", json!("Lighthouse."))],
    );
    t.agent(
        "other",
        Kind::Glossary,
        "toudai",
        &[
            ("term_src", json!("Toudai")),
            ("term_tgt", json!("Lighthouse")),
            ("notes", json!("The tower on the cape.")),
        ],
    );
    t.agent(
        "other",
        Kind::Glossary,
        "tou-2",
        &[("term_src", json!("tou")), ("term_tgt", json!("Beacon"))],
    );
    t.clock.advance(60_000);
    let data = t.ok(
        "glossary_merge_entries",
        json!({"keep": "tou", "merge": ["toudai", "tou-2", "toudai"]}),
        lore(),
    );
    assert_eq!(data["merged"], json!(["toudai", "tou-2"]));
    assert!(t.s.bible.get(Kind::Glossary, "toudai").is_none());
    assert!(t.s.bible.get(Kind::Glossary, "tou-2").is_none());
    assert_eq!(
        t.field(Kind::Glossary, "tou", "term_tgt"),
        (json!("Lighthouse"), Some(LORE.into()))
    );
    assert_eq!(
        t.field(Kind::Glossary, "tou", "notes"),
        (
            json!("Lighthouse.\n\nAlso written: Toudai\n\nThe tower on the cape.\n\nAlso translated as: Beacon"),
            Some(LORE.into())
        )
    );
    assert_eq!(
        t.field(Kind::Glossary, "tou", "term_src"),
        (json!("Tou"), Some("agent:other:2026-11-22".into()))
    );

    // Bad input changes nothing.
    let mut t = T::new();
    t.agent("lore", Kind::Glossary, "a", &[("term_src", json!("A"))]);
    t.agent("lore", Kind::Glossary, "b", &[("term_src", json!("B"))]);
    t.err(
        "glossary_merge_entries",
        json!({"keep": "a", "merge": []}),
        lore(),
        "invalid_args",
    );
    t.err(
        "glossary_merge_entries",
        json!({"keep": "a", "merge": ["a"]}),
        lore(),
        "invalid_args",
    );
    t.err(
        "glossary_merge_entries",
        json!({"keep": "a", "merge": ["b", "nope"]}),
        lore(),
        "not_found",
    );
    t.err(
        "glossary_merge_entries",
        json!({"keep": "zz", "merge": ["b"]}),
        lore(),
        "not_found",
    );
}

#[test]
fn translation_update_asks_before_changing_the_writers_translation() {
    let mut t = T::new();
    t.ok(
        "translation_create_line",
        json!({"scene": "s1", "line": 1, "target": "港は静かだった。"}),
        Origin::User,
    );
    let data = t.err(
        "translation_update_line",
        json!({"scene": "s1", "line": 1, "target": "港は静まり返っていた。"}),
        lore(),
        "approval_required",
    );
    assert_asks(
        &data,
        "s1:1",
        "target",
        json!("港は静かだった。"),
        json!("港は静まり返っていた。"),
    );
    // An agent's translation: applied, with lore's provenance.
    t.ok(
        "translation_create_line",
        json!({"scene": "s1", "line": 2, "target": "風が海から吹いた。"}),
        other(),
    );
    t.clock.advance(60_000);
    let data = t.ok(
        "translation_update_line",
        json!({"scene": "s1", "line": 2, "target": "海から風が吹いた。"}),
        lore(),
    );
    assert_eq!(data["changed"], true);
    assert_eq!(data["source_changed"], false);
    assert_eq!(
        t.field(Kind::Translation, "s1:2", "target"),
        (json!("海から風が吹いた。"), Some(LORE.into()))
    );
    assert_eq!(
        t.field(Kind::Translation, "s1:2", "source"),
        (
            json!("Kaze blew from the sea."),
            Some("agent:other:2026-11-22".into())
        )
    );
    // Nothing to update, or bad input: an error, nothing changed.
    t.err(
        "translation_update_line",
        json!({"scene": "s1", "line": 3, "target": "x"}),
        lore(),
        "not_found",
    );
    t.err(
        "translation_update_line",
        json!({"scene": "nope", "line": 1, "target": "x"}),
        lore(),
        "not_found",
    );
    t.err(
        "translation_update_line",
        json!({"scene": "s1", "line": 2, "target": "  "}),
        lore(),
        "invalid_args",
    );
}

#[test]
fn a_grant_lets_the_approved_call_through_and_a_stale_one_is_a_conflict() {
    let mut t = T::new();
    t.human(
        Kind::Glossary,
        "kaze",
        &[("term_src", json!("Kaze")), ("term_tgt", json!("Wind"))],
    );
    let args = json!({"id": "kaze", "term_tgt": "Breeze"});
    let data = t.err(
        "glossary_update_entry",
        args.clone(),
        lore(),
        "approval_required",
    );
    let version = data["details"]["version"].as_u64().unwrap();
    let grant = Grant {
        versions: BTreeMap::from([("glossary/kaze".to_string(), version)]),
    };
    // The writer changed another field after being asked: the approval of term_tgt holds
    // (checked on a copy, so the test goes on from the same state).
    let mut other = t.s.clone();
    other
        .bible
        .update(
            Kind::Glossary,
            "kaze",
            fields(&[("notes", json!("Mind the tone."))]),
            &Actor::Human,
            T0 - 100_000,
        )
        .unwrap();
    let out = other.execute_with(
        &t.registry,
        draftsmith::session::ToolCall {
            id: Some("c-other".into()),
            name: "glossary_update_entry".into(),
            args: args.clone(),
        },
        lore(),
        &t.clock,
        &t.ids,
        CallExtras {
            grant: Some(&grant),
            ..CallExtras::default()
        },
    );
    assert!(out.result.is_success(), "{:?}", out.result);
    // The writer changed the very field after being asked: the grant is stale.
    t.s.bible
        .update(
            Kind::Glossary,
            "kaze",
            fields(&[
                ("notes", json!("Mind the tone.")),
                ("term_tgt", json!("Gale")),
            ]),
            &Actor::Human,
            T0 - 100_000,
        )
        .unwrap();
    let conflict = t.err_with(
        "glossary_update_entry",
        args.clone(),
        lore(),
        "conflict",
        CallExtras {
            grant: Some(&grant),
            ..CallExtras::default()
        },
    );
    assert!(conflict["message"]
        .as_str()
        .unwrap()
        .contains("changed since"));
    // A grant for the current version lets it through, with the agent's provenance.
    let version = t.s.bible.get(Kind::Glossary, "kaze").unwrap().version;
    let grant = Grant {
        versions: BTreeMap::from([("glossary/kaze".to_string(), version)]),
    };
    let out = t.call_with(
        "glossary_update_entry",
        args,
        lore(),
        CallExtras {
            grant: Some(&grant),
            ..CallExtras::default()
        },
    );
    assert!(out.result.is_success(), "{:?}", out.result);
    assert_eq!(out.bible, vec![(Kind::Glossary, "kaze".to_string())]);
    assert_eq!(
        t.field(Kind::Glossary, "kaze", "term_tgt"),
        (json!("Breeze"), Some(LORE.into()))
    );

    // A merge's approval names every entry it touches: one grant covers the whole merge.
    t.human(
        Kind::Glossary,
        "kaze-2",
        &[("term_src", json!("KAZE")), ("notes", json!("x"))],
    );
    let data = t.err(
        "glossary_merge_entries",
        json!({"keep": "kaze", "merge": ["kaze-2"]}),
        lore(),
        "approval_required",
    );
    let grant: Grant =
        serde_json::from_value(json!({"versions": data["details"]["versions"]})).unwrap();
    assert_eq!(grant.versions.len(), 2);
    let out = t.call_with(
        "glossary_merge_entries",
        json!({"keep": "kaze", "merge": ["kaze-2"]}),
        lore(),
        CallExtras {
            grant: Some(&grant),
            ..CallExtras::default()
        },
    );
    assert!(out.result.is_success(), "{:?}", out.result);
    assert!(t.s.bible.get(Kind::Glossary, "kaze-2").is_none());
    assert_eq!(
        t.field(Kind::Glossary, "kaze", "notes"),
        (json!("Mind the tone.\n\nx"), Some(LORE.into()))
    );
}

#[test]
fn concurrent_updates_within_the_window_are_refused() {
    let mut t = T::new();
    t.ok(
        "glossary_create_entry",
        json!({"term_src": "Kaze", "notes": "Wind."}),
        other(),
    );
    t.clock.advance(5_000);
    let data = t.err(
        "glossary_update_entry",
        json!({"id": "kaze", "notes": "A sea wind."}),
        lore(),
        "concurrent_update",
    );
    assert!(data["message"]
        .as_str()
        .unwrap()
        .contains("CONCURRENT UPDATE DETECTED"));
    assert_eq!(data["details"]["current"], "Wind.");
    assert_eq!(data["details"]["proposed"], "A sea wind.");
    // The same on translations.
    t.ok(
        "translation_create_line",
        json!({"scene": "s1", "line": 1, "target": "A"}),
        other(),
    );
    t.err(
        "translation_update_line",
        json!({"scene": "s1", "line": 1, "target": "B"}),
        lore(),
        "concurrent_update",
    );
    // After the window, or by the same agent, it applies.
    t.ok(
        "translation_update_line",
        json!({"scene": "s1", "line": 1, "target": "B"}),
        other(),
    );
    t.clock.advance(31_000);
    t.ok(
        "glossary_update_entry",
        json!({"id": "kaze", "notes": "A sea wind."}),
        lore(),
    );
    // A shorter window from the policies.
    t.clock.advance(31_000);
    t.ok(
        "glossary_update_entry",
        json!({"id": "kaze", "notes": "Wind off the sea."}),
        other(),
    );
    t.clock.advance(2_000);
    let policies = Policies {
        window_ms: 1_000,
        ..Policies::default()
    };
    let out = t.call_with(
        "glossary_update_entry",
        json!({"id": "kaze", "notes": "A sea breeze."}),
        lore(),
        CallExtras {
            policies: Some(&policies),
            ..CallExtras::default()
        },
    );
    assert!(out.result.is_success(), "{:?}", out.result);
}

#[test]
fn policies_can_make_a_tool_strict_or_permissive() {
    let mut t = T::new();
    t.agent("lore", Kind::Glossary, "a", &[("term_src", json!("A"))]);
    t.human(Kind::Glossary, "b", &[("term_src", json!("B"))]);
    let mut policies = Policies::default();
    policies
        .modes
        .insert("glossary_delete_entry".into(), Mode::Strict);
    policies
        .modes
        .insert("glossary_update_entry".into(), Mode::Permissive);
    t.err_with(
        "glossary_delete_entry",
        json!({"id": "a"}),
        lore(),
        "approval_required",
        CallExtras {
            policies: Some(&policies),
            ..CallExtras::default()
        },
    );
    let out = t.call_with(
        "glossary_update_entry",
        json!({"id": "b", "notes": "ok"}),
        lore(),
        CallExtras {
            policies: Some(&policies),
            ..CallExtras::default()
        },
    );
    assert!(out.result.is_success());
}

// ---------------------------------------------------------------------------------------
// Glossary reads and creates.

#[test]
fn glossary_search_read_and_create() {
    let mut t = T::new();
    let data = t.ok(
        "glossary_create_entry",
        json!({"term_src": " Kaze ", "term_tgt": "Wind", "notes": "The sea wind."}),
        lore(),
    );
    assert_eq!(data["entry"]["id"], "kaze");
    assert_eq!(data["entry"]["term_src"], "Kaze");
    assert_eq!(data["entry"]["term_src_origin"], LORE);
    t.ok(
        "glossary_create_entry",
        json!({"term_src": "Umi", "term_tgt": "Sea", "id": "sea-word"}),
        Origin::User,
    );
    // Duplicates of a source term are refused, naming the entry.
    let data = t.err(
        "glossary_create_entry",
        json!({"term_src": "KAZE"}),
        lore(),
        "exists",
    );
    assert!(data["message"].as_str().unwrap().contains("'kaze'"));
    t.err(
        "glossary_create_entry",
        json!({"term_src": "  "}),
        lore(),
        "invalid_args",
    );
    t.err(
        "glossary_create_entry",
        json!({"term_tgt": "x"}),
        lore(),
        "invalid_args",
    );
    // Search: case-insensitive substrings of any field.
    for (query, ids) in [
        ("wind", vec!["kaze"]),
        ("SEA", vec!["sea-word", "kaze"]),
        ("umi", vec!["sea-word"]),
        ("", vec!["kaze", "sea-word"]),
        ("nothing", vec![]),
    ] {
        let data = t.ok("glossary_search_term", json!({ "query": query }), lore());
        let found: Vec<&str> = data["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap())
            .collect();
        assert_eq!(found, ids, "{query}");
        assert_eq!(data["count"], ids.len());
    }
    let data = t.ok("glossary_search_term", json!({"query": "sea"}), lore());
    let text = data["text"].as_str().unwrap();
    assert!(
        text.starts_with("2 glossary entries match 'sea'."),
        "{text}"
    );
    assert!(
        text.contains("- sea-word: Umi [human] → Sea [human]"),
        "{text}"
    );
    let data = t.ok("glossary_read_entry", json!({"id": "kaze"}), lore());
    let text = data["text"].as_str().unwrap();
    assert!(
        text.contains("term_tgt: Wind [agent:lore:2026-11-22]"),
        "{text}"
    );
    assert_eq!(data["entry"]["notes"], "The sea wind.");
    let data = t.err(
        "glossary_read_entry",
        json!({"id": "kaz"}),
        lore(),
        "not_found",
    );
    assert!(data["message"].as_str().unwrap().contains("kaze"));
}

// ---------------------------------------------------------------------------------------
// Translations.

#[test]
fn glossary_entries_are_keyed_by_their_source_term() {
    let mut t = T::new();
    t.ok(
        "glossary_create_entry",
        json!({"term_src": "Kaze no Tou", "id": "tower", "term_tgt": "Wind Tower"}),
        other(),
    );
    // Read, update and delete take the term as the seed's signatures do (in any case, with
    // spaces around it); the id still works.
    let data = t.ok(
        "glossary_read_entry",
        json!({"term_src": "  kaze no tou "}),
        lore(),
    );
    assert_eq!(data["entry"]["id"], "tower");
    let data = t.ok("glossary_read_entry", json!({"id": "tower"}), lore());
    assert_eq!(data["entry"]["term_src"], "Kaze no Tou");
    let data = t.ok(
        "glossary_update_entry",
        json!({"term_src": "Kaze no Tou", "notes": "The lighthouse, as the islanders say it."}),
        lore(),
    );
    assert_eq!(data["changed"], true);
    assert_eq!(
        t.s.bible
            .get(Kind::Glossary, "tower")
            .unwrap()
            .text("notes"),
        "The lighthouse, as the islanders say it."
    );
    // An unknown term changes nothing and says so.
    let data = t.err(
        "glossary_update_entry",
        json!({"term_src": "Kaze no Mori", "notes": "x"}),
        lore(),
        "not_found",
    );
    assert!(data["message"].as_str().unwrap().contains("Kaze no Mori"));
    let data = t.ok(
        "glossary_delete_entry",
        json!({"term_src": "KAZE NO TOU"}),
        lore(),
    );
    assert_eq!(data["deleted"]["id"], "tower");
    assert!(t.s.bible.get(Kind::Glossary, "tower").is_none());
}

#[test]
fn scene_lines_are_the_non_empty_lines_of_the_span() {
    let t = T::new();
    let lines = language::scene_lines(&t.s.project, &t.s.bible, "s1").unwrap();
    assert_eq!(
        lines.lines,
        vec![
            "The harbor was quiet.",
            "Kaze blew from the sea.",
            "Mara waited by the Lighthouse.",
            "She counted the boats."
        ]
    );
    assert_eq!(lines.chapter_id, "c1");
    let all = language::scene_lines(&t.s.project, &t.s.bible, "s2").unwrap();
    assert_eq!(all.lines.len(), 5);
    assert_eq!(all.lines[4], "The bell rang.");
    assert_eq!(all.line(5).unwrap(), "The bell rang.");
    assert_eq!(all.line(0).unwrap_err().code, "out_of_range");
    assert_eq!(all.line(6).unwrap_err().code, "out_of_range");
    assert_eq!(
        language::scene_lines(&t.s.project, &t.s.bible, "s9")
            .unwrap_err()
            .code,
        "not_found"
    );
}

#[test]
fn translation_lines_are_created_read_and_flagged_when_the_manuscript_changes() {
    let mut t = T::new();
    let data = t.ok("translation_read_scene", json!({"scene": "s1"}), lore());
    assert_eq!(data["total"], 4);
    assert_eq!(data["translated"], 0);
    assert_eq!(data["untranslated"], json!([1, 2, 3, 4]));
    let data = t.ok(
        "translation_create_line",
        json!({"scene": "s1", "line": 3, "target": "マラは灯台のそばで待った。"}),
        lore(),
    );
    assert_eq!(data["translation"]["id"], "s1:3");
    assert_eq!(
        data["translation"]["source"],
        "Mara waited by the Lighthouse."
    );
    assert_eq!(data["translation"]["line"], 3);
    assert_eq!(data["translation"]["target_origin"], LORE);
    assert_eq!(data["translated"], 1);
    // Once only; lines that do not exist; empty targets; unknown scenes.
    t.err(
        "translation_create_line",
        json!({"scene": "s1", "line": 3, "target": "again"}),
        lore(),
        "exists",
    );
    let data = t.err(
        "translation_create_line",
        json!({"scene": "s1", "line": 5, "target": "x"}),
        lore(),
        "out_of_range",
    );
    assert!(data["message"].as_str().unwrap().contains("lines 1 to 4"));
    t.err(
        "translation_create_line",
        json!({"scene": "s1", "line": 0, "target": "x"}),
        lore(),
        "out_of_range",
    );
    t.err(
        "translation_create_line",
        json!({"scene": "s1", "line": 1, "target": ""}),
        lore(),
        "invalid_args",
    );
    t.err(
        "translation_create_line",
        json!({"scene": "s1", "line": "one", "target": "x"}),
        lore(),
        "invalid_args",
    );
    t.err(
        "translation_create_line",
        json!({"scene": "harbour", "line": 1, "target": "x"}),
        lore(),
        "not_found",
    );

    let data = t.ok("translation_read_scene", json!({"scene": "s1"}), lore());
    assert_eq!(data["untranslated"], json!([1, 2, 4]));
    let text = data["text"].as_str().unwrap();
    assert!(
        text.starts_with("Scene 's1' (chapter 'The Harbor', chars 0-"),
        "{text}"
    );
    assert!(text.contains("4 lines, 1 translated, 3 untranslated (lines 1, 2, 4)."));
    assert!(text.contains(
        "3. Mara waited by the Lighthouse.\n   → マラは灯台のそばで待った。 [agent:lore:2026-11-22]"
    ));
    assert!(text.contains("1. The harbor was quiet.\n   → (untranslated)"));
    assert_eq!(data["lines"][2]["target_origin"], LORE);

    // The writer edits line 3 in the manuscript: the translation is flagged as stale.
    let ch = t.s.project.chapter("c1").unwrap();
    let text = ch.text().to_string();
    let at = text[..text.find("Lighthouse").unwrap()].chars().count();
    let change =
        ChangeSet::replace(ch.len_chars(), at, at + "Lighthouse".len(), "old tower").unwrap();
    let version = ch.version();
    t.s.apply_user_change("c1", version, change, &t.clock, &t.ids)
        .unwrap();
    // (s1's span is the writer's to fix; the edit kept the length within it.)
    let data = t.ok("translation_read_scene", json!({"scene": "s1"}), lore());
    assert_eq!(data["lines"][2]["stale"], true);
    assert!(data["text"]
        .as_str()
        .unwrap()
        .contains("the manuscript line changed since this translation"));
    t.clock.advance(60_000);
    let data = t.ok(
        "translation_update_line",
        json!({"scene": "s1", "line": 3, "target": "マラは古い塔のそばで待った。"}),
        lore(),
    );
    assert_eq!(data["source_changed"], true);
    assert!(data["manuscript_line"]
        .as_str()
        .unwrap()
        .contains("old tower"));
    assert!(data["text"].as_str().unwrap().contains("has changed"));
}

// ---------------------------------------------------------------------------------------
// QA checks.

fn qa(t: &T) -> Vec<Value> {
    t.s.bible.list(Kind::Qa).map(|e| e.flat()).collect()
}

#[test]
fn the_check_tools_record_qa_findings() {
    let mut t = T::new();
    let data = t.ok(
        "translation_create_review_check",
        json!({"scene": "s1", "line": 2, "severity": "error", "message": "The wind is a name here."}),
        lore(),
    );
    let record = &data["record"];
    assert_eq!(record["check"], "review");
    assert_eq!(record["scene"], "s1");
    assert_eq!(record["line"], 2);
    assert_eq!(record["severity"], "error");
    assert_eq!(record["message"], "The wind is a name here.");
    assert_eq!(record["message_origin"], LORE);
    assert!(data["text"]
        .as_str()
        .unwrap()
        .contains("Recorded review QA"));
    // Whole-scene findings; the default severity is warning.
    let data = t.ok(
        "translation_create_style_check",
        json!({"scene": "s2", "message": "Mixed honorifics."}),
        lore(),
    );
    assert_eq!(data["record"]["severity"], "warning");
    assert_eq!(data["record"]["line"], Value::Null);
    let data = t.ok(
        "translation_create_consistency_check",
        json!({"scene": "s1", "line": 1, "severity": "info", "message": "Harbor vs port."}),
        lore(),
    );
    assert_eq!(data["record"]["check"], "consistency");
    assert_eq!(qa(&t).len(), 3);
    // Bad input: nothing recorded.
    t.err(
        "translation_create_review_check",
        json!({"scene": "s1", "line": 9, "message": "x"}),
        lore(),
        "out_of_range",
    );
    t.err(
        "translation_create_review_check",
        json!({"scene": "s7", "message": "x"}),
        lore(),
        "not_found",
    );
    t.err(
        "translation_create_review_check",
        json!({"scene": "s1", "message": " "}),
        lore(),
        "invalid_args",
    );
    t.err(
        "translation_create_review_check",
        json!({"scene": "s1", "severity": "fatal", "message": "x"}),
        lore(),
        "invalid_args",
    );
    t.err(
        "translation_create_style_check",
        json!({"scene": "s1", "line": 1}),
        lore(),
        "invalid_args",
    );
    t.err(
        "translation_create_consistency_check",
        json!({"scene": "s1"}),
        lore(),
        "invalid_args",
    );
    assert_eq!(qa(&t).len(), 3);
}

#[test]
fn the_style_check_measures_lines_against_the_ui_limit() {
    let mut t = T::new();
    t.ok(
        "translation_create_line",
        json!({"scene": "s1", "line": 1, "target": "The harbour lay utterly silent that night."}),
        lore(),
    );
    t.ok(
        "translation_create_line",
        json!({"scene": "s1", "line": 2, "target": "Wind."}),
        lore(),
    );
    // No limit set: nothing to measure against.
    let data = t.err(
        "translation_create_style_check",
        json!({"scene": "s1", "line": 1, "check_line_length": true}),
        lore(),
        "not_found",
    );
    assert!(data["message"]
        .as_str()
        .unwrap()
        .contains("line_length_limit"));
    t.human(
        Kind::UiSettings,
        "ui",
        &[
            ("line_length_limit", json!(30)),
            ("lines_per_box", json!(2)),
        ],
    );
    // Over the limit: a warning naming the length and the limit.
    let data = t.ok(
        "translation_create_style_check",
        json!({"scene": "s1", "line": 1, "check_line_length": true}),
        lore(),
    );
    assert_eq!(data["line_length"]["exceeded"], true);
    assert_eq!(data["line_length"]["longest"], 42);
    assert_eq!(data["record"]["severity"], "warning");
    assert_eq!(
        data["record"]["message"],
        "Line length: the translation is 42 characters long, over the UI limit of 30."
    );
    assert_eq!(data["record"]["line"], 1);
    // Within the limit and no message: no record.
    let data = t.ok(
        "translation_create_style_check",
        json!({"scene": "s1", "line": 2, "check_line_length": true}),
        lore(),
    );
    assert_eq!(data["line_length"]["exceeded"], false);
    assert_eq!(data["record"], Value::Null);
    assert!(data["text"]
        .as_str()
        .unwrap()
        .contains("No QA record was made"));
    assert_eq!(qa(&t).len(), 1);
    // Too many display lines for the box, with the agent's own message.
    t.clock.advance(60_000);
    t.ok(
        "translation_update_line",
        json!({"scene": "s1", "line": 2, "target": "Wind\nfrom\nthe sea."}),
        lore(),
    );
    let data = t.ok(
        "translation_create_style_check",
        json!({"scene": "s1", "line": 2, "check_line_length": true, "severity": "error", "message": "Split oddly."}),
        lore(),
    );
    assert_eq!(
        data["record"]["message"],
        "Split oddly.\nLine length: the translation has 3 display lines, more than the 2 a text box holds."
    );
    assert_eq!(data["record"]["severity"], "error");
    // Measuring needs a line with a translation.
    t.err(
        "translation_create_style_check",
        json!({"scene": "s1", "check_line_length": true}),
        lore(),
        "invalid_args",
    );
    t.err(
        "translation_create_style_check",
        json!({"scene": "s1", "line": 4, "check_line_length": true}),
        lore(),
        "not_found",
    );
    let data = t.ok("ui_read_settings", json!({}), lore());
    assert_eq!(data["line_length_limit"], 30);
    assert!(data["text"]
        .as_str()
        .unwrap()
        .contains("line_length_limit: 30 [human]"));
}

#[test]
fn the_consistency_check_can_check_the_glossary() {
    let mut t = T::new();
    t.human(
        Kind::Glossary,
        "kaze",
        &[
            ("term_src", json!("Kaze")),
            ("term_tgt", json!("Wind-Spirit")),
        ],
    );
    t.human(
        Kind::Glossary,
        "toudai",
        &[
            ("term_src", json!("Lighthouse")),
            ("term_tgt", json!("灯台")),
        ],
    );
    t.ok(
        "translation_create_line",
        json!({"scene": "s1", "line": 2, "target": "The wind blew from the sea."}),
        lore(),
    );
    t.ok(
        "translation_create_line",
        json!({"scene": "s1", "line": 3, "target": "マラは灯台のそばで待った。"}),
        lore(),
    );
    let data = t.ok(
        "translation_create_consistency_check",
        json!({"scene": "s1", "line": 2, "check_glossary": true}),
        lore(),
    );
    assert_eq!(
        data["record"]["message"],
        "Glossary: 'Kaze' should be translated as 'Wind-Spirit' (glossary 'kaze')."
    );
    let data = t.ok(
        "translation_create_consistency_check",
        json!({"scene": "s1", "line": 3, "check_glossary": true}),
        lore(),
    );
    assert_eq!(data["record"], Value::Null);
    assert_eq!(data["glossary"]["terms"], json!(["toudai"]));
    assert_eq!(qa(&t).len(), 1);
}

// ---------------------------------------------------------------------------------------
// Style guide, context documents, status.

#[test]
fn style_guide_context_documents_and_status() {
    let mut t = T::new();
    let data = t.ok("styleguide_read_full", json!({}), lore());
    assert_eq!(data["exists"], false);
    assert!(data["text"].as_str().unwrap().contains("no style guide"));
    let data = t.ok("contextdoc_list_all", json!({}), lore());
    assert_eq!(data["docs"], json!([]));
    t.human(
        Kind::Styleguide,
        "styleguide",
        &[("markdown", json!("# Style\n\nUse British spelling."))],
    );
    let data = t.ok("styleguide_read_full", json!({}), lore());
    assert_eq!(data["markdown_origin"], "human");
    assert!(data["text"]
        .as_str()
        .unwrap()
        .ends_with("[human]:\n\n# Style\n\nUse British spelling."));

    let long: String = "abcdefghij".repeat(2_500);
    t.human(
        Kind::Contextdoc,
        "vol1",
        &[("title", json!("Volume One")), ("text", json!(long))],
    );
    t.human(
        Kind::Contextdoc,
        "names",
        &[
            ("title", json!("Names")),
            ("text", json!("Mara is the keeper.")),
        ],
    );
    let data = t.ok("contextdoc_list_all", json!({}), lore());
    assert_eq!(data["docs"][0]["id"], "names");
    assert_eq!(data["docs"][1]["chars"], 25_000);
    assert!(data["text"]
        .as_str()
        .unwrap()
        .contains("- names: Names (19 chars) — Mara is the keeper."));
    let data = t.ok("contextdoc_read_doc", json!({"id": "vol1"}), lore());
    assert_eq!(data["content"].as_str().unwrap().len(), 20_000);
    assert_eq!(data["next_offset"], 20_000);
    let data = t.ok(
        "contextdoc_read_doc",
        json!({"id": "vol1", "offset": 20_000}),
        lore(),
    );
    assert_eq!(data["content"].as_str().unwrap().len(), 5_000);
    assert_eq!(data["next_offset"], Value::Null);
    t.err(
        "contextdoc_read_doc",
        json!({"id": "vol1", "offset": 30_000}),
        lore(),
        "out_of_range",
    );
    t.err(
        "contextdoc_read_doc",
        json!({"id": "vol2"}),
        lore(),
        "not_found",
    );
    // No tool changes context documents.
    let registry = ToolRegistry::standard();
    assert!(registry
        .names()
        .filter(|n| n.starts_with("contextdoc_"))
        .all(|n| registry.definition(n).unwrap().read_only));

    // Status.
    t.ok(
        "translation_create_line",
        json!({"scene": "s1", "line": 1, "target": "A"}),
        lore(),
    );
    t.ok(
        "translation_create_line",
        json!({"scene": "s2", "line": 5, "target": "B"}),
        lore(),
    );
    t.ok(
        "translation_create_line",
        json!({"scene": "s2", "line": 4, "target": "C"}),
        lore(),
    );
    t.ok(
        "translation_create_review_check",
        json!({"scene": "s1", "severity": "error", "message": "x"}),
        lore(),
    );
    t.ok(
        "translation_create_style_check",
        json!({"scene": "s1", "message": "y"}),
        lore(),
    );
    t.ok(
        "translation_create_style_check",
        json!({"scene": "s2", "message": "z"}),
        lore(),
    );
    t.human(Kind::Scene, "lost", &[("chapter", json!("c9"))]);
    let data = t.ok("context_read_status", json!({}), lore());
    assert_eq!(data["counts"]["scene"], 3);
    assert_eq!(data["counts"]["contextdoc"], 2);
    assert_eq!(data["counts"]["translation"], 3);
    assert_eq!(data["counts"]["qa"], 3);
    assert_eq!(
        data["translation"]["scenes"],
        json!([
            {"scene": "lost", "error": "scene 'lost' belongs to chapter 'c9', which is not in the project"},
            {"scene": "s1", "translated": 1, "total": 4},
            {"scene": "s2", "translated": 2, "total": 5},
        ])
    );
    assert_eq!(data["qa"]["by_severity"], json!({"error": 1, "warning": 2}));
    assert_eq!(data["qa"]["by_check"], json!({"review": 1, "style": 2}));
    let text = data["text"].as_str().unwrap();
    assert!(text.contains("- s1: 1/4 lines (25%)"), "{text}");
    assert!(text.contains("In all: 3/9 lines translated."), "{text}");
    assert!(
        text.contains("QA findings by severity: 1 error, 2 warning"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------------------
// Machine translation.

const ENDPOINT: &str = "https://mtl.test/translate";

#[test]
fn mtl_availability_and_the_no_endpoint_error_on_the_edit_path() {
    let mut t = T::new();
    let data = t.ok("translation_check_mtl_available", json!({}), lore());
    assert_eq!(data["available"], false);
    assert!(data["text"].as_str().unwrap().contains("mtlEndpoint"));
    let out = t.call_with(
        "translation_check_mtl_available",
        json!({}),
        lore(),
        CallExtras {
            mtl_endpoint: Some("https://user:key@mtl.test/translate?api_key=s3cret"),
            ..CallExtras::default()
        },
    );
    assert_eq!(out.result.data["available"], true);
    assert_eq!(out.result.data["host"], "mtl.test");
    assert!(!out.result.data.to_string().contains("s3cret"));

    let args = json!({"scene": "s1", "line": 1, "source_lang": "en", "target_lang": "ja"});
    let data = t.err(
        "translation_create_mtl_suggestion",
        args.clone(),
        lore(),
        "no_mtl_endpoint",
    );
    let message = data["message"].as_str().unwrap();
    assert!(
        message.contains("No machine-translation endpoint is set"),
        "{message}"
    );
    assert!(message.contains("'mtlEndpoint'"), "{message}");
    // With an endpoint, the edit path cannot make the call: the core does.
    t.err_with(
        "translation_create_mtl_suggestion",
        args,
        lore(),
        "needs_network",
        CallExtras {
            mtl_endpoint: Some(ENDPOINT),
            ..CallExtras::default()
        },
    );
}

fn plan(t: &T, args: Value) -> MtlPlan {
    mtl_plan(&t.registry, args, &t.s, Some(ENDPOINT)).unwrap()
}

#[test]
fn mtl_plans_check_their_arguments() {
    let t = T::new();
    let p = plan(
        &t,
        json!({"scene": "s1", "line": 2, "source_lang": "en", "target_lang": "ja"}),
    );
    assert_eq!(p.source, "Kaze blew from the sea.");
    assert_eq!(
        (p.source_lang.as_str(), p.target_lang.as_str()),
        ("en", "ja")
    );
    let code = |args: Value, endpoint: Option<&str>| {
        mtl_plan(&t.registry, args, &t.s, endpoint)
            .unwrap_err()
            .code
    };
    let good = json!({"scene": "s1", "line": 2, "source_lang": "en", "target_lang": "ja"});
    assert_eq!(code(good.clone(), None), "no_mtl_endpoint");
    assert_eq!(code(good, Some(" ")), "no_mtl_endpoint");
    assert_eq!(
        code(
            json!({"scene": "s1", "line": 2, "source_lang": "en"}),
            Some(ENDPOINT)
        ),
        "invalid_args"
    );
    assert_eq!(
        code(
            json!({"scene": "s1", "line": 2, "source_lang": "en", "target_lang": "ja; drop"}),
            Some(ENDPOINT)
        ),
        "invalid_args"
    );
    assert_eq!(
        code(
            json!({"scene": "s1", "line": 9, "source_lang": "en", "target_lang": "ja"}),
            Some(ENDPOINT)
        ),
        "out_of_range"
    );
    assert_eq!(
        code(
            json!({"scene": "s8", "line": 1, "source_lang": "en", "target_lang": "ja"}),
            Some(ENDPOINT)
        ),
        "not_found"
    );
}

#[test]
fn mtl_suggestions_post_the_line_and_read_the_answer() {
    let t = T::new();
    let p = plan(
        &t,
        json!({"scene": "s1", "line": 2, "source_lang": "en", "target_lang": "ja"}),
    );
    let sleeper = RecordingSleeper::default();
    let transport = ScriptedTransport::new(vec![Scripted::json(
        200,
        r#"{"translatedText": "風が海から吹いた。"}"#,
    )]);
    let (text, detected) =
        block_on(suggest(&transport, &sleeper, &p, (30_000, 60_000), None)).unwrap();
    assert_eq!(text, "風が海から吹いた。");
    assert_eq!(detected, None);
    let sent = transport.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].method, "POST");
    assert_eq!(sent[0].url, ENDPOINT);
    assert_eq!(sent[0].header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_str(&sent[0].body).unwrap();
    assert_eq!(
        body,
        json!({"q": "Kaze blew from the sea.", "source": "en", "target": "ja", "format": "text"})
    );
    let data = language::mtl_suggestion(&p, &text, detected);
    assert_eq!(data["suggestion"], "風が海から吹いた。");
    assert!(data["text"]
        .as_str()
        .unwrap()
        .contains("translation_create_line"));

    let failure = |scripted: Vec<Scripted>| -> String {
        let transport = ScriptedTransport::new(scripted);
        match block_on(suggest(&transport, &sleeper, &p, (30_000, 60_000), None)) {
            Err(MtlError::Failed(e)) => {
                assert_eq!(e.code, "failed");
                e.message
            }
            other => panic!("expected a failure, got {other:?}"),
        }
    };
    let m = failure(vec![Scripted::json(403, r#"{"error": "Invalid API key"}"#)]);
    assert_eq!(
        m,
        "The translation endpoint (mtl.test) answered HTTP 403: Invalid API key"
    );
    let m = failure(vec![Scripted::json(502, "<html>Bad gateway</html>")]);
    assert!(m.contains("HTTP 502: <html>Bad gateway</html>"), "{m}");
    let m = failure(vec![Scripted::json(200, "<html>hello</html>")]);
    assert!(m.contains("did not answer with JSON"), "{m}");
    let m = failure(vec![Scripted::json(200, r#"{"text": "x"}"#)]);
    assert!(m.contains("no 'translatedText'"), "{m}");
    let m = failure(vec![]);
    assert!(
        m.contains("Could not reach the translation endpoint (mtl.test)"),
        "{m}"
    );
    let m = failure(vec![Scripted::json(200, "").ending(ScriptedEnd::Stall)]);
    assert!(m.contains("stopped sending for 60 s"), "{m}");

    // Aborted: no suggestion.
    let abort = AbortSignal::new();
    abort.abort();
    let transport = ScriptedTransport::new(vec![Scripted::json(200, r#"{"translatedText": "x"}"#)]);
    assert!(matches!(
        block_on(suggest(
            &transport,
            &sleeper,
            &p,
            (30_000, 60_000),
            Some(&abort)
        )),
        Err(MtlError::Aborted)
    ));
    assert!(transport.requests().is_empty());
}

struct Page {
    core: Core,
    transport: Rc<ScriptedTransport>,
    next: std::cell::Cell<u64>,
}

impl Page {
    fn new(responses: Vec<Scripted>) -> Self {
        let transport = Rc::new(ScriptedTransport::new(responses));
        let core = Core::new(Env {
            clock: Rc::new(ManualClock::new(T0)),
            ids: Rc::new(SequentialIds::new("id")),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: Rc::new(RecordingSink::default()),
            store: Rc::new(MemoryStore::new()),
        })
        .with_llm(transport.clone(), Rc::new(RecordingSleeper::default()));
        Self {
            core,
            transport,
            next: std::cell::Cell::new(1),
        }
    }

    fn send(&self, kind: &str, params: Value) -> Value {
        let id = self.next.get() + 1;
        self.next.set(id);
        let text = json!({"id": id, "type": kind, "params": params}).to_string();
        serde_json::from_str(&block_on(self.core.handle_text(&text))).unwrap()
    }

    fn ok(&self, kind: &str, params: Value) -> Value {
        let r = self.send(kind, params.clone());
        assert_eq!(r["ok"], true, "{kind} {params} -> {r}");
        r["result"].clone()
    }

    fn execute(&self, tool: &str, args: Value) -> Value {
        self.ok(
            "execute",
            json!({"tool": tool, "args": args, "origin": "agent:lore", "callId": "c-1"}),
        )
    }
}

#[test]
fn the_core_runs_the_mtl_tools_with_its_settings() {
    let page = Page::new(vec![]);
    page.ok(
        "create_project",
        json!({"name": "Harbor", "chapters": [{"title": "The Harbor", "text": SCENE1}]}),
    );
    let r = page.execute("translation_check_mtl_available", json!({}));
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["data"]["available"], false);
    let args = json!({"scene": "s1", "line": 1, "source_lang": "en", "target_lang": "ja"});
    let r = page.execute("translation_create_mtl_suggestion", args.clone());
    assert_eq!(r["status"], "error");
    assert_eq!(r["data"]["code"], "no_mtl_endpoint");
    assert!(r["data"]["message"]
        .as_str()
        .unwrap()
        .contains("mtlEndpoint"));

    page.ok("set_settings", json!({"mtlEndpoint": ENDPOINT}));
    let r = page.execute("translation_check_mtl_available", json!({}));
    assert_eq!(r["data"]["available"], true, "{r}");
    // The plan runs before any request: a scene the bible does not have is not_found, and
    // nothing was sent.
    let r = page.execute("translation_create_mtl_suggestion", args);
    assert_eq!(r["data"]["code"], "not_found", "{r}");
    let r = page.execute(
        "translation_create_mtl_suggestion",
        json!({"scene": "s1", "line": 1, "source_lang": "", "target_lang": "ja"}),
    );
    assert_eq!(r["data"]["code"], "invalid_args", "{r}");
    assert!(page.transport.requests().is_empty());
}

/// The whole path through the core: the writer's scene (saved with the core's `bible_save`
/// request), the settings' endpoint, the scripted transport, the result and the audit. Runs
/// only where the core serves `bible_save` (this branch's base does not: it has no request
/// to create a scene through the core).
#[test]
fn the_core_posts_the_line_to_the_endpoint_and_returns_the_suggestion() {
    let page = Page::new(vec![
        Scripted::json(200, r#"{"translatedText": "[ja] Kaze blew from the sea."}"#),
        Scripted::json(500, r#"{"error": "Translation engine crashed"}"#),
    ]);
    let hello = page.ok("hello", json!({}));
    if !hello["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c == "bible_save")
    {
        eprintln!("skipped: this core has no bible_save request to create a scene");
        return;
    }
    let project = page.ok(
        "create_project",
        json!({"name": "Harbor", "chapters": [{"title": "The Harbor", "text": SCENE1}]}),
    );
    let chapter = project["chapters"][0]["id"].as_str().unwrap().to_string();
    page.ok(
        "bible_save",
        json!({"kind": "scene", "id": "s1", "fields": {"chapter": chapter}}),
    );
    page.ok("set_settings", json!({"mtlEndpoint": ENDPOINT}));
    let args = json!({"scene": "s1", "line": 2, "source_lang": "en", "target_lang": "ja"});
    let r = page.execute("translation_create_mtl_suggestion", args.clone());
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["data"]["suggestion"], "[ja] Kaze blew from the sea.");
    assert_eq!(r["data"]["source"], "Kaze blew from the sea.");
    let sent = page.transport.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].url, ENDPOINT);
    assert_eq!(
        serde_json::from_str::<Value>(&sent[0].body).unwrap(),
        json!({"q": "Kaze blew from the sea.", "source": "en", "target": "ja", "format": "text"})
    );
    // Nothing was saved: the agent saves a translation itself.
    let r = page.execute("translation_read_scene", json!({"scene": "s1"}));
    assert_eq!(r["data"]["translated"], 0, "{r}");
    // The endpoint's error is the call's error.
    let r = page.execute("translation_create_mtl_suggestion", args);
    assert_eq!(r["status"], "error");
    assert_eq!(r["data"]["code"], "failed");
    assert_eq!(
        r["data"]["message"],
        "The translation endpoint (mtl.test) answered HTTP 500: Translation engine crashed"
    );
}
