//! Story-bible story tools (scenes, characters, locations, routes, query_lore,
//! get_character_info) through `Session::execute`: approval by provenance for every update
//! and delete tool, strict creates and deletes, grants, conflict detection, the summary
//! guard, read formatting, redaction, lore search, appearances, and `navigate_to_text`'s
//! bible-aware character mentions.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};

use draftsmith::bible::{Actor, Kind};
use draftsmith::commands::Origin;
use draftsmith::policy::{Grant, Mode, Policies};
use draftsmith::project::{Chapter, Project};
use draftsmith::session::{CallExtras, Session, ToolCall};
use draftsmith::tools::ToolRegistry;
use draftsmith::{ManualClock, SequentialIds};
use serde_json::{json, Value};

/// 2026-11-22, 01:00 UTC.
const NOW: u64 = 1_795_305_600_000 + 3_600_000;
const DAY: &str = "2026-11-22";

const CH1_P1: &str = "Mara Vell came to Greyhaven at dusk. The Stranger watched her from the quay.";
const CH1_P2: &str = "\n\nMara climbed to the lighthouse. The lamp was dark.";
const CH2: &str = "Tom Harrow told Mara his name at last. Lena laughed at them both. Tom grinned.\n\nLena left Greyhaven for the Saltmarsh.";

fn lore() -> Origin {
    Origin::Agent("lore".into())
}

struct T {
    s: Session,
    registry: ToolRegistry,
    clock: ManualClock,
    ids: SequentialIds,
}

impl T {
    /// Chapters, and characters, locations, a scene and a route with only their required
    /// fields (written by the writer).
    fn bare() -> Self {
        let ch1 = format!("{CH1_P1}{CH1_P2}");
        let mut t = Self {
            s: Session::new(Project::new(
                "p",
                "Greyhaven",
                vec![
                    Chapter::new("c1", "Arrival", &ch1),
                    Chapter::new("c2", "Names", CH2),
                ],
            )),
            registry: ToolRegistry::standard(),
            clock: ManualClock::new(NOW),
            ids: SequentialIds::new("id"),
        };
        let h = Actor::Human;
        let b = &mut t.s.bible;
        b.create(
            Kind::Character,
            "mara",
            vec![
                ("name_src".into(), json!("Mara Vell")),
                ("aliases".into(), json!(["Mara"])),
            ],
            &h,
            0,
        )
        .unwrap();
        b.create(
            Kind::Character,
            "tom",
            vec![
                ("name_src".into(), json!("Tom Harrow")),
                ("aliases".into(), json!(["Tom", "Stranger"])),
            ],
            &h,
            0,
        )
        .unwrap();
        b.create(
            Kind::Character,
            "lena",
            vec![("name_src".into(), json!("Lena"))],
            &h,
            0,
        )
        .unwrap();
        for (id, name) in [("greyhaven", "Greyhaven"), ("saltmarsh", "Saltmarsh")] {
            b.create(
                Kind::Location,
                id,
                vec![("name_src".into(), json!(name))],
                &h,
                0,
            )
            .unwrap();
        }
        let p1 = CH1_P1.chars().count() as u64;
        let p2 = p1 + CH1_P2.chars().count() as u64;
        for (id, chapter, span) in [
            ("s1", "c1", json!({"start": 0, "end": p1})),
            ("s2", "c1", json!({"start": p1 + 2, "end": p2})),
            ("s3", "c2", Value::Null),
        ] {
            b.create(
                Kind::Scene,
                id,
                vec![("chapter".into(), json!(chapter)), ("span".into(), span)],
                &h,
                0,
            )
            .unwrap();
        }
        b.create(Kind::Route, "r1", vec![], &h, 0).unwrap();
        t
    }

    /// `bare` plus writer-written content: summaries, tags, characters, notes.
    fn story() -> Self {
        let mut t = Self::bare();
        let h = Actor::Human;
        let b = &mut t.s.bible;
        let set = |b: &mut draftsmith::bible::Bible, kind, id: &str, fields: Vec<(&str, Value)>| {
            b.update(
                kind,
                id,
                fields
                    .into_iter()
                    .map(|(f, v)| (f.to_string(), v))
                    .collect(),
                &h,
                0,
            )
            .unwrap();
        };
        set(
            b,
            Kind::Character,
            "mara",
            vec![
                ("pronouns", json!("she/her")),
                (
                    "notes",
                    json!("Keeper of the lighthouse. Dies in chapter 9."),
                ),
            ],
        );
        set(
            b,
            Kind::Character,
            "tom",
            vec![("notes", json!("Secretly her brother."))],
        );
        set(
            b,
            Kind::Location,
            "saltmarsh",
            vec![("description", json!("Where the smugglers hide."))],
        );
        set(
            b,
            Kind::Scene,
            "s1",
            vec![
                (
                    "summary",
                    json!("Mara arrives; Tom Harrow watches her as the Stranger."),
                ),
                ("tags", json!(["arrival", "Tom"])),
                ("primary_characters", json!(["mara", "tom", "lena"])),
                ("locations", json!(["greyhaven", "saltmarsh"])),
            ],
        );
        set(
            b,
            Kind::Scene,
            "s2",
            vec![("summary", json!("Mara finds the lighthouse lamp dark."))],
        );
        set(
            b,
            Kind::Scene,
            "s3",
            vec![("summary", json!("Tom reveals himself; Lena mocks them."))],
        );
        set(
            b,
            Kind::Route,
            "r1",
            vec![("synopsis", json!("Mara trusts Tom and sails away."))],
        );
        t
    }

    fn call_with(
        &mut self,
        origin: Origin,
        tool: &str,
        args: Value,
        extras: CallExtras<'_>,
    ) -> Value {
        let out = self.s.execute_with(
            &self.registry,
            ToolCall {
                id: Some("call".into()),
                name: tool.into(),
                args,
            },
            origin,
            &self.clock,
            &self.ids,
            extras,
        );
        serde_json::to_value(&out.result).unwrap()
    }

    fn call(&mut self, origin: Origin, tool: &str, args: Value) -> Value {
        self.call_with(origin, tool, args, CallExtras::default())
    }

    fn ok(&mut self, origin: Origin, tool: &str, args: Value) -> Value {
        let r = self.call(origin, tool, args.clone());
        assert_eq!(r["status"], "success", "{tool} {args} -> {r:#}");
        r["data"].clone()
    }

    fn err(&mut self, origin: Origin, tool: &str, args: Value, code: &str) -> Value {
        let r = self.call(origin, tool, args.clone());
        assert_eq!(r["status"], "error", "{tool} {args} -> {r:#}");
        assert_eq!(r["data"]["code"], code, "{tool} {args} -> {r:#}");
        r["data"].clone()
    }

    fn field(&self, kind: Kind, id: &str, field: &str) -> Value {
        self.s.bible.get(kind, id).unwrap().get(field).clone()
    }

    fn origin(&self, kind: Kind, id: &str, field: &str) -> Option<String> {
        self.s
            .bible
            .get(kind, id)
            .unwrap()
            .origin(field)
            .map(str::to_string)
    }
}

/// One update tool: its arguments with the writer's value and with the agent's, and the
/// values they store.
struct Case {
    tool: &'static str,
    kind: Kind,
    id: &'static str,
    field: &'static str,
    human: Value,
    human_stored: Value,
    agent: Value,
    agent_stored: Value,
}

fn cases() -> Vec<Case> {
    let c = |tool,
             kind,
             id,
             field,
             human: Value,
             human_stored: Value,
             agent: Value,
             agent_stored: Value| Case {
        tool,
        kind,
        id,
        field,
        human,
        human_stored,
        agent,
        agent_stored,
    };
    vec![
        c(
            "scene_update_summary",
            Kind::Scene,
            "s1",
            "summary",
            json!({"scene": "s1", "summary": "The writer's summary."}),
            json!("The writer's summary."),
            json!({"scene": "s1", "summary": "  An agent's summary. "}),
            json!("An agent's summary."),
        ),
        c(
            "scene_update_tags",
            Kind::Scene,
            "s1",
            "tags",
            json!({"scene": "s1", "tags": ["dusk"]}),
            json!(["dusk"]),
            json!({"scene": "s1", "tags": ["arrival", "arrival", "quay"]}),
            json!(["arrival", "quay"]),
        ),
        c(
            "scene_update_primary_characters",
            Kind::Scene,
            "s1",
            "primary_characters",
            json!({"scene": "s1", "characters": ["mara"]}),
            json!(["mara"]),
            json!({"scene": "s1", "characters": ["Mara", "Stranger", "tom"]}),
            json!(["mara", "tom"]),
        ),
        c(
            "scene_update_locations",
            Kind::Scene,
            "s1",
            "locations",
            json!({"scene": "s1", "locations": ["greyhaven"]}),
            json!(["greyhaven"]),
            json!({"scene": "s1", "locations": ["Greyhaven", "saltmarsh"]}),
            json!(["greyhaven", "saltmarsh"]),
        ),
        c(
            "character_update_name_tgt",
            Kind::Character,
            "mara",
            "name_tgt",
            json!({"character": "mara", "name_tgt": "Mara W."}),
            json!("Mara W."),
            json!({"character": "Mara Vell", "name_tgt": "Mára Vell"}),
            json!("Mára Vell"),
        ),
        c(
            "character_update_pronouns",
            Kind::Character,
            "tom",
            "pronouns",
            json!({"character": "tom", "pronouns": "he/him"}),
            json!("he/him"),
            json!({"character": "Stranger", "pronouns": "they/them"}),
            json!("they/them"),
        ),
        c(
            "character_update_notes",
            Kind::Character,
            "lena",
            "notes",
            json!({"character": "lena", "notes": "The writer's notes."}),
            json!("The writer's notes."),
            json!({"character": "LENA", "notes": "An agent's notes."}),
            json!("An agent's notes."),
        ),
        c(
            "location_update_name_tgt",
            Kind::Location,
            "greyhaven",
            "name_tgt",
            json!({"location": "greyhaven", "name_tgt": "Grauhafen"}),
            json!("Grauhafen"),
            json!({"location": "Greyhaven", "name_tgt": "Havre-Gris"}),
            json!("Havre-Gris"),
        ),
        c(
            "location_update_description",
            Kind::Location,
            "saltmarsh",
            "description",
            json!({"location": "saltmarsh", "description": "Reeds."}),
            json!("Reeds."),
            json!({"location": "saltmarsh", "description": "Reeds and smugglers."}),
            json!("Reeds and smugglers."),
        ),
        c(
            "route_update_synopsis",
            Kind::Route,
            "r1",
            "synopsis",
            json!({"route": "r1", "synopsis": "Mara stays."}),
            json!("Mara stays."),
            json!({"route": "r1", "synopsis": "Mara leaves."}),
            json!("Mara leaves."),
        ),
        c(
            "route_update_primary_characters",
            Kind::Route,
            "r1",
            "primary_characters",
            json!({"route": "r1", "characters": ["mara"]}),
            json!(["mara"]),
            json!({"route": "r1", "characters": ["Lena", "Tom Harrow"]}),
            json!(["lena", "tom"]),
        ),
    ]
}

fn agent_args(case: &Case) -> (Value, Value) {
    (case.agent.clone(), case.agent_stored.clone())
}

/// `{"<kind>": name}`: the arguments of a delete tool.
fn named(kind: Kind, name: &str) -> Value {
    let mut map = serde_json::Map::new();
    map.insert(kind.name().into(), json!(name));
    Value::Object(map)
}

fn assert_approval_required(t: &mut T, case: &Case, current: &Value, how: &str) {
    let before = t.s.bible.clone();
    let (args, proposed) = agent_args(case);
    let e = t.err(lore(), case.tool, args, "approval_required");
    assert!(
        e["message"].as_str().unwrap().contains("approval"),
        "{how} {}: {e}",
        case.tool
    );
    let fields = e["details"]["fields"].as_array().unwrap();
    let f = fields
        .iter()
        .find(|f| f["field"] == case.field)
        .unwrap_or_else(|| panic!("{how} {}: {e}", case.tool));
    assert_eq!(&f["current"], current, "{how} {}", case.tool);
    assert_eq!(f["current_origin"], "human", "{how} {}", case.tool);
    assert_eq!(f["proposed"], proposed, "{how} {}", case.tool);
    assert_eq!(e["details"]["id"], case.id);
    assert_eq!(t.s.bible, before, "{how} {}: the bible changed", case.tool);
}

#[test]
fn every_update_tool_asks_before_changing_what_the_writer_wrote() {
    for case in cases() {
        // Written by the writer through the tool.
        let mut t = T::bare();
        let d = t.ok(Origin::User, case.tool, case.human.clone());
        assert_eq!(d["changed"], true, "{}", case.tool);
        assert_eq!(t.field(case.kind, case.id, case.field), case.human_stored);
        assert_eq!(
            t.origin(case.kind, case.id, case.field).as_deref(),
            Some("human"),
            "{}",
            case.tool
        );
        assert_approval_required(&mut t, &case, &case.human_stored, "tool");

        // Written by the writer directly in the bible.
        let mut t = T::bare();
        t.s.bible
            .update(
                case.kind,
                case.id,
                vec![(case.field.into(), case.human_stored.clone())],
                &Actor::Human,
                NOW - 1_000,
            )
            .unwrap();
        assert_approval_required(&mut t, &case, &case.human_stored, "direct");
    }
}

#[test]
fn every_update_tool_applies_to_empty_and_agent_written_fields() {
    for case in cases() {
        let (args, stored) = agent_args(&case);
        // Empty.
        let mut t = T::bare();
        assert!(t.field(case.kind, case.id, case.field).is_null());
        let d = t.ok(lore(), case.tool, args.clone());
        assert_eq!(d["changed"], true, "{}", case.tool);
        assert_eq!(
            t.field(case.kind, case.id, case.field),
            stored,
            "{}",
            case.tool
        );
        assert_eq!(
            t.origin(case.kind, case.id, case.field),
            Some(format!("agent:lore:{DAY}")),
            "{}",
            case.tool
        );
        assert!(d["text"]
            .as_str()
            .unwrap()
            .contains(&format!("{} (agent:lore:{DAY})", case.field)));

        // Written by another agent (long enough ago).
        let mut t = T::bare();
        t.s.bible
            .update(
                case.kind,
                case.id,
                vec![(case.field.into(), case.human_stored.clone())],
                &Actor::Agent {
                    name: "other".into(),
                    date: "2026-11-01".into(),
                },
                NOW - 3_600_000,
            )
            .unwrap();
        t.ok(lore(), case.tool, args);
        assert_eq!(
            t.field(case.kind, case.id, case.field),
            stored,
            "{}",
            case.tool
        );
        assert_eq!(
            t.origin(case.kind, case.id, case.field),
            Some(format!("agent:lore:{DAY}")),
            "{}",
            case.tool
        );
    }
}

const DELETES: [(&str, Kind, &str, &str); 3] = [
    ("character_delete_entry", Kind::Character, "tom", "Stranger"),
    (
        "location_delete_entry",
        Kind::Location,
        "saltmarsh",
        "saltmarsh",
    ),
    ("route_delete_entry", Kind::Route, "r1", "r1"),
];

#[test]
fn strict_deletes_always_ask_an_agent() {
    for (tool, kind, id, name) in DELETES {
        // Even an entity an agent wrote.
        let mut t = T::bare();
        t.s.bible
            .update(
                kind,
                id,
                vec![(
                    if kind == Kind::Route {
                        "synopsis"
                    } else {
                        "name_tgt"
                    }
                    .into(),
                    json!("x"),
                )],
                &Actor::Agent {
                    name: "lore".into(),
                    date: DAY.into(),
                },
                0,
            )
            .unwrap();
        let before = t.s.bible.clone();
        let e = t.err(lore(), tool, named(kind, name), "approval_required");
        assert!(e["details"]["reason"].as_str().unwrap().contains("strict"));
        assert!(!e["details"]["fields"].as_array().unwrap().is_empty());
        assert!(e["details"]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["proposed"].is_null()));
        assert_eq!(t.s.bible, before, "{tool}");

        // The writer deletes without being asked.
        let d = t.ok(Origin::User, tool, named(kind, name));
        assert_eq!(d["deleted"]["id"], id);
        assert!(t.s.bible.get(kind, id).is_none());
    }
}

#[test]
fn deletes_go_through_under_a_permissive_policy_or_a_grant() {
    for (tool, kind, id, name) in DELETES {
        // Permissive policy.
        let mut t = T::story();
        let mut policies = Policies::default();
        policies.modes.insert(tool.into(), Mode::Permissive);
        let r = t.call_with(
            lore(),
            tool,
            named(kind, name),
            CallExtras {
                policies: Some(&policies),
                ..Default::default()
            },
        );
        assert_eq!(r["status"], "success", "{tool}: {r}");
        assert_eq!(r["data"]["deleted"]["id"], id);
        assert!(r["data"]["text"].as_str().unwrap().contains("Deleted"));
        assert!(t.s.bible.get(kind, id).is_none());

        // A grant at the current version lets the approved call through.
        let mut t = T::story();
        let version = t.s.bible.get(kind, id).unwrap().version;
        let grant = Grant {
            versions: BTreeMap::from([(format!("{}/{id}", kind.name()), version)]),
        };
        let r = t.call_with(
            lore(),
            tool,
            named(kind, name),
            CallExtras {
                grant: Some(&grant),
                ..Default::default()
            },
        );
        assert_eq!(r["status"], "success", "{tool}: {r}");
        assert!(t.s.bible.get(kind, id).is_none());

        // A grant for an older version is a conflict: the entity changed since.
        let mut t = T::story();
        let old = t.s.bible.get(kind, id).unwrap().version;
        t.s.bible
            .update(
                kind,
                id,
                vec![(
                    if kind == Kind::Route {
                        "synopsis"
                    } else {
                        "name_tgt"
                    }
                    .into(),
                    json!("changed"),
                )],
                &Actor::Human,
                NOW,
            )
            .unwrap();
        let before = t.s.bible.clone();
        let grant = Grant {
            versions: BTreeMap::from([(format!("{}/{id}", kind.name()), old)]),
        };
        let r = t.call_with(
            lore(),
            tool,
            named(kind, name),
            CallExtras {
                grant: Some(&grant),
                ..Default::default()
            },
        );
        assert_eq!(r["data"]["code"], "conflict", "{tool}: {r}");
        assert_eq!(t.s.bible, before);
    }
}

#[test]
fn a_standard_delete_asks_only_for_what_the_writer_wrote() {
    let mut policies = Policies::default();
    policies
        .modes
        .insert("character_delete_entry".into(), Mode::Standard);
    let extras = |p| CallExtras {
        policies: Some(p),
        ..Default::default()
    };
    // Created by an agent: its own to delete.
    let mut t = T::bare();
    t.s.bible
        .create(
            Kind::Character,
            "ghost",
            vec![("name_src".into(), json!("Ghost"))],
            &Actor::Agent {
                name: "lore".into(),
                date: DAY.into(),
            },
            0,
        )
        .unwrap();
    let r = t.call_with(
        lore(),
        "character_delete_entry",
        json!({"character": "Ghost"}),
        extras(&policies),
    );
    assert_eq!(r["status"], "success", "{r}");
    // Written by the writer: asks.
    let before = t.s.bible.clone();
    let r = t.call_with(
        lore(),
        "character_delete_entry",
        json!({"character": "mara"}),
        extras(&policies),
    );
    assert_eq!(r["data"]["code"], "approval_required");
    assert_eq!(t.s.bible, before);
}

#[test]
fn deleting_reports_what_still_refers_to_it() {
    let mut t = T::story();
    let d = t.ok(
        Origin::User,
        "character_delete_entry",
        json!({"character": "Tom"}),
    );
    let text = d["text"].as_str().unwrap();
    assert!(text.contains("Deleted character 'tom'"), "{text}");
    assert!(
        text.contains("notes (human): Secretly her brother."),
        "{text}"
    );
    assert!(text.contains("scene 's1'"), "{text}");
    assert_eq!(d["referencedBy"][0]["id"], "s1");
    assert_eq!(d["deleted"]["notes"], "Secretly her brother.");
}

#[test]
fn creates_follow_their_policies() {
    let mut t = T::bare();
    // A character: strict for an agent.
    let before = t.s.bible.clone();
    let args = json!({"name_src": "Old Bram", "aliases": ["Bram"], "pronouns": "he/him"});
    let e = t.err(
        lore(),
        "character_create_entry",
        args.clone(),
        "approval_required",
    );
    assert_eq!(e["details"]["id"], "old-bram");
    assert_eq!(e["details"]["version"], 0);
    assert!(e["details"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["field"] == "name_src" && f["proposed"] == "Old Bram"));
    assert_eq!(t.s.bible, before);

    // Approved: a grant for the absent entity (version 0) lets it through, as the agent.
    let grant = Grant {
        versions: BTreeMap::from([("character/old-bram".to_string(), 0)]),
    };
    let r = t.call_with(
        lore(),
        "character_create_entry",
        args,
        CallExtras {
            grant: Some(&grant),
            ..Default::default()
        },
    );
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(
        t.origin(Kind::Character, "old-bram", "aliases"),
        Some(format!("agent:lore:{DAY}"))
    );

    // The writer creates freely; a clash of names is a warning.
    let d = t.ok(
        Origin::User,
        "character_create_entry",
        json!({"name_src": "Mara", "notes": "Another Mara.", "id": "mara-2"}),
    );
    assert_eq!(d["id"], "mara-2");
    assert!(d["warnings"][0].as_str().unwrap().contains("'mara'"));
    assert_eq!(
        t.origin(Kind::Character, "mara-2", "notes").as_deref(),
        Some("human")
    );
    assert!(d["text"]
        .as_str()
        .unwrap()
        .contains("notes (human): Another Mara."));
    // An existing id.
    t.err(
        Origin::User,
        "character_create_entry",
        json!({"name_src": "X", "id": "mara"}),
        "exists",
    );
    t.err(
        Origin::User,
        "character_create_entry",
        json!({"name_src": "  "}),
        "invalid_args",
    );

    // A location: permissive.
    let d = t.ok(
        lore(),
        "location_create_entry",
        json!({"name_src": "The Quay", "description": "Wet stones."}),
    );
    assert_eq!(d["id"], "the-quay");
    assert_eq!(
        t.origin(Kind::Location, "the-quay", "description"),
        Some(format!("agent:lore:{DAY}"))
    );

    // A route: strict for an agent; references are checked and resolved.
    let before = t.s.bible.clone();
    t.err(
        lore(),
        "route_create_entry",
        json!({"synopsis": "Lena's escape", "primary_characters": ["Lena"]}),
        "approval_required",
    );
    assert_eq!(t.s.bible, before);
    let e = t.err(
        Origin::User,
        "route_create_entry",
        json!({"synopsis": "Lena's escape", "primary_characters": ["Lenna"]}),
        "not_found",
    );
    assert!(e["message"].as_str().unwrap().contains("'lena'"), "{e}");
    let e = t.err(
        Origin::User,
        "route_create_entry",
        json!({"synopsis": "Lena's escape", "scene_ids": ["s9"]}),
        "not_found",
    );
    assert!(e["message"].as_str().unwrap().contains("s9"), "{e}");
    assert_eq!(t.s.bible, before);
    let d = t.ok(
        Origin::User,
        "route_create_entry",
        json!({"synopsis": "Lena's escape by sea", "primary_characters": ["Lena", "Tom Harrow"], "scene_ids": ["s3", "s1"]}),
    );
    let id = d["id"].as_str().unwrap().to_string();
    assert_eq!(id, "lena-s-escape-by-sea");
    assert_eq!(
        t.field(Kind::Route, &id, "primary_characters"),
        json!(["lena", "tom"])
    );
    assert_eq!(t.field(Kind::Route, &id, "scene_ids"), json!(["s3", "s1"]));
    t.err(
        Origin::User,
        "route_create_entry",
        json!({"synopsis": ""}),
        "invalid_args",
    );
}

#[test]
fn a_concurrent_update_by_another_agent_is_refused_within_the_window() {
    let mut t = T::story();
    t.ok(
        lore(),
        "character_update_notes",
        json!({"character": "lena", "notes": "Lore's notes."}),
    );
    t.clock.advance(10_000);
    let before = t.s.bible.clone();
    let critic = Origin::Agent("critic".into());
    let e = t.err(
        critic.clone(),
        "character_update_notes",
        json!({"character": "lena", "notes": "Critic's notes."}),
        "concurrent_update",
    );
    assert!(e["message"]
        .as_str()
        .unwrap()
        .contains("CONCURRENT UPDATE DETECTED"));
    assert_eq!(e["details"]["current"], "Lore's notes.");
    assert_eq!(e["details"]["proposed"], "Critic's notes.");
    assert_eq!(t.s.bible, before);
    // The same agent may refine its own write at once.
    t.ok(
        lore(),
        "character_update_notes",
        json!({"character": "lena", "notes": "Lore's notes, refined."}),
    );
    // After the window, the other agent's update applies.
    t.clock.advance(30_000);
    t.ok(
        critic,
        "character_update_notes",
        json!({"character": "lena", "notes": "Critic's notes."}),
    );
    assert_eq!(t.field(Kind::Character, "lena", "notes"), "Critic's notes.");
    assert_eq!(
        t.origin(Kind::Character, "lena", "notes"),
        Some(format!("agent:critic:{DAY}"))
    );
}

#[test]
fn an_agent_writes_a_scene_summary_once_per_run() {
    let mut t = T::bare();
    let mut guards = BTreeSet::new();
    fn summary(
        t: &mut T,
        guards: &mut BTreeSet<String>,
        scene: &str,
        text: &str,
        overwrite: bool,
    ) -> Value {
        t.call_with(
            lore(),
            "scene_update_summary",
            json!({"scene": scene, "summary": text, "overwrite": overwrite}),
            CallExtras {
                guards: Some(guards),
                ..Default::default()
            },
        )
    }
    let r = summary(&mut t, &mut guards, "s1", "First.", false);
    assert_eq!(r["status"], "success", "{r}");
    // The second write is rolled back: every entity is as it was (only the bible's version
    // counter, which never goes back, moved on).
    let entities = |t: &T| t.s.bible.all().cloned().collect::<Vec<_>>();
    let before = entities(&t);
    let r = summary(&mut t, &mut guards, "s1", "Second.", false);
    assert_eq!(r["data"]["code"], "already_written", "{r}");
    assert!(r["data"]["message"]
        .as_str()
        .unwrap()
        .contains("overwrite: true"));
    assert_eq!(entities(&t), before);
    assert_eq!(t.field(Kind::Scene, "s1", "summary"), "First.");
    let r = summary(&mut t, &mut guards, "s1", "Second.", true);
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(t.field(Kind::Scene, "s1", "summary"), "Second.");
    // Another scene has its own guard.
    let r = summary(&mut t, &mut guards, "s2", "Other.", false);
    assert_eq!(r["status"], "success", "{r}");
    // A write that fails does not use up the guard.
    t.s.bible
        .update(
            Kind::Scene,
            "s3",
            vec![("summary".into(), json!("The writer's."))],
            &Actor::Human,
            0,
        )
        .unwrap();
    let r = summary(&mut t, &mut guards, "s3", "Mine.", false);
    assert_eq!(r["data"]["code"], "approval_required");
    assert!(!guards.contains("scene_update_summary:s3"));
    // Outside a run there is no guard.
    t.ok(
        lore(),
        "scene_update_summary",
        json!({"scene": "s1", "summary": "Third."}),
    );
    t.ok(
        lore(),
        "scene_update_summary",
        json!({"scene": "s1", "summary": "Fourth."}),
    );
}

#[test]
fn primary_characters_must_exist_and_are_checked_against_the_text() {
    let mut t = T::story();
    let before = t.s.bible.clone();
    let e = t.err(
        Origin::User,
        "scene_update_primary_characters",
        json!({"scene": "s2", "characters": ["Mara", "Tomm", "Nobody"]}),
        "not_found",
    );
    let m = e["message"].as_str().unwrap();
    assert!(
        m.contains("'Tomm'") && m.contains("'tom'") && m.contains("'Nobody'"),
        "{m}"
    );
    assert_eq!(t.s.bible, before);
    // Scene 2 mentions Mara only.
    let d = t.ok(
        lore(),
        "scene_update_primary_characters",
        json!({"scene": "s2", "characters": ["Mara", "Tom"]}),
    );
    assert_eq!(d["mentioned"], json!(["mara"]));
    assert_eq!(d["notMentioned"], json!(["tom"]));
    assert!(d["warning"].as_str().unwrap().contains("tom"));
    // Locations must exist too.
    t.err(
        lore(),
        "scene_update_locations",
        json!({"scene": "s2", "locations": ["Atlantis"]}),
        "not_found",
    );
    // An unknown scene names the closest.
    let e = t.err(
        lore(),
        "scene_update_tags",
        json!({"scene": "s-1", "tags": []}),
        "not_found",
    );
    assert!(
        e["message"].as_str().unwrap().contains("did you mean"),
        "{e}"
    );
    // An ambiguous alias.
    t.s.bible
        .update(
            Kind::Character,
            "lena",
            vec![("aliases".into(), json!(["Tom"]))],
            &Actor::Human,
            0,
        )
        .unwrap();
    let e = t.err(
        lore(),
        "character_update_pronouns",
        json!({"character": "Tom", "pronouns": "he/him"}),
        "invalid_args",
    );
    assert!(e["message"].as_str().unwrap().contains("several"), "{e}");
    // ...but an exact id wins.
    assert_eq!(
        t.call(lore(), "character_read_entry", json!({"character": "tom"}))["status"],
        "success"
    );
}

#[test]
fn reads_show_each_field_with_its_origin() {
    let mut t = T::story();
    t.ok(
        lore(),
        "character_update_name_tgt",
        json!({"character": "Mara", "name_tgt": "Mára"}),
    );
    let d = t.ok(
        lore(),
        "character_read_entry",
        json!({"character": "mara vell"}),
    );
    let text = d["text"].as_str().unwrap();
    assert!(text.starts_with("Character 'mara' (version"), "{text}");
    assert!(text.contains("name_src (human): Mara Vell"), "{text}");
    assert!(
        text.contains(&format!("name_tgt (agent:lore:{DAY}): Mára")),
        "{text}"
    );
    assert!(text.contains("aliases (human): Mara"), "{text}");
    assert!(
        text.contains("notes (human): Keeper of the lighthouse."),
        "{text}"
    );
    assert!(text.contains("Listed in scenes: s1"), "{text}");
    assert_eq!(d["entry"]["notes_origin"], "human");

    let d = t.ok(lore(), "character_read_entry", json!({}));
    assert_eq!(d["count"], 3);
    assert!(d["text"]
        .as_str()
        .unwrap()
        .contains("tom — Tom Harrow (aliases: Tom, Stranger)"));

    let e = t.err(
        lore(),
        "character_read_entry",
        json!({"character": "Marra"}),
        "not_found",
    );
    assert!(e["message"].as_str().unwrap().contains("'mara'"), "{e}");

    let d = t.ok(
        lore(),
        "location_read_entry",
        json!({"location": "Saltmarsh"}),
    );
    let text = d["text"].as_str().unwrap();
    assert!(
        text.contains("description (human): Where the smugglers hide."),
        "{text}"
    );
    assert!(text.contains("name_tgt: (empty)"), "{text}");

    let d = t.ok(lore(), "route_read_entry", json!({"route": "r1"}));
    assert!(d["text"]
        .as_str()
        .unwrap()
        .contains("synopsis (human): Mara trusts Tom and sails away."));

    let d = t.ok(lore(), "scene_read_metadata", json!({"scene": "s1"}));
    let text = d["text"].as_str().unwrap();
    assert!(text.contains("summary (human): Mara arrives"), "{text}");
    assert!(text.contains("span (human): chars 0–"), "{text}");
    assert!(text.contains("Where: chapter 1 “Arrival” (c1)"), "{text}");
    assert!(
        text.contains("Characters: mara (Mara Vell), tom (Tom Harrow), lena (Lena)"),
        "{text}"
    );
}

#[test]
fn the_scene_overview_lists_scenes_in_reading_order_and_shows_one() {
    let mut t = T::story();
    let d = t.ok(lore(), "scene_read_overview", json!({}));
    assert_eq!(d["count"], 3);
    let ids: Vec<&str> = d["scenes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["s1", "s2", "s3"]);
    let text = d["text"].as_str().unwrap();
    assert!(text.contains("1. s1 — chapter 1"), "{text}");
    assert!(
        text.contains("Mara finds the lighthouse lamp dark."),
        "{text}"
    );

    let d = t.ok(lore(), "scene_read_overview", json!({"scene": "s1"}));
    let text = d["text"].as_str().unwrap();
    assert!(text.contains(CH1_P1), "{text}");
    assert!(!text.contains("The lamp was dark"), "{text}");
    assert_eq!(d["mentionedCharacters"], json!(["mara", "tom"]));
    assert_eq!(d["mentionedLocations"], json!(["greyhaven"]));
    let d = t.ok(
        lore(),
        "scene_read_overview",
        json!({"scene": "s3", "max_chars": 10}),
    );
    assert_eq!(d["excerpt"], "Tom Harrow");
    assert_eq!(d["truncated"], true);
    t.err(
        lore(),
        "scene_read_overview",
        json!({"scene": "s1", "max_chars": 0}),
        "invalid_args",
    );

    // No scenes at all.
    let mut empty = T::bare();
    for id in ["s1", "s2", "s3"] {
        empty.s.bible.remove(Kind::Scene, id).unwrap();
    }
    let d = empty.ok(lore(), "scene_read_overview", json!({}));
    assert_eq!(d["count"], 0);
    assert!(d["text"].as_str().unwrap().contains("no scenes"));
}

#[test]
fn the_redacted_scene_hides_what_a_reader_has_not_met_yet() {
    let mut t = T::story();
    let d = t.ok(lore(), "scene_read_redacted", json!({"scene": "s1"}));
    let text = d["text"].as_str().unwrap();
    // Tom is known only as "Stranger" so far; Lena and the Saltmarsh not at all.
    assert_eq!(
        d["scene"]["summary"],
        "Mara arrives; [not yet introduced] watches her as the Stranger."
    );
    assert_eq!(
        d["scene"]["tags"],
        json!(["arrival", "[not yet introduced]"])
    );
    assert_eq!(
        d["scene"]["primary_characters"],
        json!(["Mara Vell", "Stranger", "[not yet introduced]"])
    );
    assert_eq!(
        d["scene"]["locations"],
        json!(["Greyhaven", "[not yet introduced]"])
    );
    assert_eq!(d["excerpt"], CH1_P1);
    assert_eq!(d["laterScenesHidden"], 2);
    assert_eq!(d["earlierScenes"], json!([]));
    for hidden in [
        "Harrow",
        "Lena",
        "Saltmarsh",
        "Dies in chapter 9",
        "brother",
        "smugglers",
        "lighthouse lamp",
        "reveals",
        "sails away",
        "'tom'",
    ] {
        assert!(!text.contains(hidden), "'{hidden}' shown in:\n{text}");
        assert!(
            !d.to_string().contains(hidden),
            "'{hidden}' in the data: {d}"
        );
    }
    assert!(
        text.contains("Characters the reader has met: Mara Vell / Mara [she/her], Stranger"),
        "{text}"
    );
    assert!(text.contains("Later scenes hidden: 2."), "{text}");

    // At the end of scene 2: scene 1 is finished and shown, redacted the same way.
    let d = t.ok(lore(), "scene_read_redacted", json!({"scene": "s2"}));
    assert_eq!(d["earlierScenes"][0]["id"], "s1");
    assert_eq!(
        d["earlierScenes"][0]["summary"],
        "Mara arrives; [not yet introduced] watches her as the Stranger."
    );
    assert_eq!(d["laterScenesHidden"], 1);

    // At the end of chapter 2 everyone has been met; notes are still hidden.
    let d = t.ok(lore(), "scene_read_redacted", json!({"scene": "s3"}));
    let text = d["text"].as_str().unwrap();
    assert_eq!(
        d["earlierScenes"][0]["summary"],
        "Mara arrives; Tom Harrow watches her as the Stranger."
    );
    assert_eq!(d["laterScenesHidden"], 0);
    assert!(
        text.contains("Lena") && text.contains("Saltmarsh"),
        "{text}"
    );
    assert!(
        !text.contains("Dies in chapter 9") && !text.contains("smugglers"),
        "{text}"
    );
    assert!(!text.contains("sails away"), "{text}");

    t.err(
        lore(),
        "scene_read_redacted",
        json!({"scene": "nope"}),
        "not_found",
    );
}

#[test]
fn query_lore_ranks_by_matched_terms() {
    let mut t = T::story();
    let d = t.ok(
        lore(),
        "query_lore",
        json!({"query": "Who keeps the lighthouse?"}),
    );
    let hits = d["hits"].as_array().unwrap();
    assert_eq!(d["terms"], json!(["keeps", "lighthouse"]));
    // Mara's notes and scene 2's summary both match "lighthouse" ("keeps" does not match
    // "Keeper"); on a tie characters rank first.
    assert_eq!(hits[0]["kind"], "character");
    assert_eq!(hits[0]["id"], "mara");
    assert!(hits.iter().any(|h| h["id"] == "s2"));
    let text = d["text"].as_str().unwrap();
    assert!(
        text.contains("character 'mara' (Mara Vell): matched lighthouse"),
        "{text}"
    );
    assert!(
        text.contains("notes (human): Keeper of the lighthouse."),
        "{text}"
    );

    let d = t.ok(
        lore(),
        "query_lore",
        json!({"query": "keep lighthouse", "limit": 1}),
    );
    assert_eq!(d["count"], 1);
    assert_eq!(d["hits"][0]["id"], "mara");
    assert_eq!(d["hits"][0]["matched"], json!(["keep", "lighthouse"]));

    // Names count most: "Tom" finds the character first.
    let d = t.ok(lore(), "query_lore", json!({"query": "tom"}));
    assert_eq!(d["hits"][0]["id"], "tom");

    let d = t.ok(lore(), "query_lore", json!({"query": "zeppelin"}));
    assert_eq!(d["count"], 0);
    assert!(d["text"].as_str().unwrap().contains("Nothing"));
    t.err(lore(), "query_lore", json!({"query": "?!"}), "invalid_args");
    t.err(
        lore(),
        "query_lore",
        json!({"query": "tom", "limit": 0}),
        "invalid_args",
    );
}

#[test]
fn character_info_lists_appearances_per_chapter() {
    let mut t = T::story();
    let d = t.ok(
        lore(),
        "get_character_info",
        json!({"character": "stranger"}),
    );
    assert_eq!(d["id"], "tom");
    assert_eq!(d["totalMentions"], 3);
    let apps = d["appearances"].as_array().unwrap();
    assert_eq!(apps.len(), 2);
    assert_eq!(apps[0]["chapter"], "c1");
    assert_eq!(apps[0]["mentions"], 1);
    assert_eq!(apps[0]["firstMention"]["name"], "Stranger");
    assert_eq!(
        apps[0]["firstMention"]["start"],
        CH1_P1.find("Stranger").unwrap()
    );
    assert!(apps[0]["firstMention"]["snippet"]
        .as_str()
        .unwrap()
        .contains("The Stranger watched"));
    assert_eq!(apps[1]["chapter"], "c2");
    assert_eq!(apps[1]["mentions"], 2);
    assert_eq!(apps[1]["firstMention"]["name"], "Tom Harrow");
    assert_eq!(apps[1]["firstMention"]["start"], 0);
    let text = d["text"].as_str().unwrap();
    assert!(
        text.contains("notes (human): Secretly her brother."),
        "{text}"
    );
    assert!(
        text.contains("Appearances (3 mentions in 2 of 2 chapters)"),
        "{text}"
    );
    assert!(text.contains("Listed in scenes: s1"), "{text}");

    // Lena appears in chapter 2 only.
    let d = t.ok(lore(), "get_character_info", json!({"character": "lena"}));
    assert_eq!(d["appearances"].as_array().unwrap().len(), 1);
    assert_eq!(d["appearances"][0]["mentions"], 2);
    assert_eq!(d["notes"], json!([]));

    // The memory's observations and notes about her come with it: those that name her (in
    // any case) or are tagged with her; observations first. Notes about others do not.
    for (text, note_type, tags) in [
        (
            "The writer wants LENA to stay unsure of Tom until act two.",
            "preference",
            json!([]),
        ),
        (
            "Her dialogue turns clipped whenever the brother comes up.",
            "observation",
            json!(["lena"]),
        ),
        (
            "Tom Harrow's scar is on his left hand.",
            "fact",
            json!(["tom"]),
        ),
        ("Lenathal is an unrelated word.", "fact", json!([])),
    ] {
        t.ok(
            lore(),
            "write_memory_note",
            json!({"text": text, "type": note_type, "topic_tags": tags}),
        );
    }
    let d = t.ok(lore(), "get_character_info", json!({"character": "lena"}));
    let notes: Vec<&str> = d["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        notes,
        [
            "Her dialogue turns clipped whenever the brother comes up.",
            "The writer wants LENA to stay unsure of Tom until act two."
        ]
    );
    assert_eq!(d["notes"][0]["type"], "observation");
    let text = d["text"].as_str().unwrap();
    assert!(
        text.contains("In memory (2 notes):\n- [observation] Her dialogue turns clipped"),
        "{text}"
    );

    // A character never mentioned.
    t.s.bible
        .create(
            Kind::Character,
            "ghost",
            vec![("name_src".into(), json!("Ghost"))],
            &Actor::Human,
            0,
        )
        .unwrap();
    let d = t.ok(lore(), "get_character_info", json!({"character": "ghost"}));
    assert_eq!(d["totalMentions"], 0);
    assert!(d["text"].as_str().unwrap().contains("Appearances: none"));
    let e = t.err(
        lore(),
        "get_character_info",
        json!({"character": "Lenna"}),
        "not_found",
    );
    assert!(e["message"].as_str().unwrap().contains("'lena'"));
    // Not a name, but close to one.
    let e = t.err(
        lore(),
        "get_character_info",
        json!({"character": "the stranger"}),
        "not_found",
    );
    assert!(e["message"].as_str().unwrap().contains("'tom'"), "{e}");
}

#[test]
fn navigate_to_a_character_mention_uses_the_bible() {
    let mut t = T::story();
    // "tom" is an alias of Tom Harrow, who is first mentioned as "the Stranger".
    let d = t.ok(
        lore(),
        "navigate_to_text",
        json!({"query": "tom", "searchType": "character_mention"}),
    );
    assert_eq!(d["character"], "tom");
    assert_eq!(d["chapter"], "c1");
    assert_eq!(d["text"], "Stranger");
    assert_eq!(d["totalMentions"], 3);
    assert_eq!(d["matchedNames"], json!(["Stranger", "Tom Harrow", "Tom"]));
    assert_eq!(t.s.project.ui.active_chapter.as_deref(), Some("c1"));
    let start = d["start"].as_u64().unwrap() as usize;
    assert_eq!(t.s.project.ui.selection, Some((start, start + 8)));

    // In one chapter only.
    let d = t.ok(
        lore(),
        "navigate_to_text",
        json!({"query": "Stranger", "chapter": "2", "searchType": "character_mention"}),
    );
    assert_eq!(d["text"], "Tom Harrow");
    assert_eq!(d["totalMentions"], 2);

    // Not a bible character: the plain whole-word search as before.
    let d = t.ok(
        lore(),
        "navigate_to_text",
        json!({"query": "lamp", "searchType": "character_mention"}),
    );
    assert_eq!(d["text"], "lamp");
    assert!(d.get("character").is_none());
    let e = t.err(
        lore(),
        "navigate_to_text",
        json!({"query": "Zebulon", "searchType": "character_mention"}),
        "not_found",
    );
    assert!(e["message"].as_str().unwrap().contains("Zebulon"));
}

const TOOLS: [&str; 25] = [
    "scene_read_metadata",
    "scene_read_overview",
    "scene_read_redacted",
    "scene_update_summary",
    "scene_update_tags",
    "scene_update_primary_characters",
    "scene_update_locations",
    "character_read_entry",
    "character_create_entry",
    "character_update_name_tgt",
    "character_update_pronouns",
    "character_update_notes",
    "character_delete_entry",
    "location_read_entry",
    "location_create_entry",
    "location_update_name_tgt",
    "location_update_description",
    "location_delete_entry",
    "route_read_entry",
    "route_create_entry",
    "route_update_synopsis",
    "route_update_primary_characters",
    "route_delete_entry",
    "query_lore",
    "get_character_info",
];

#[test]
fn the_tools_are_registered_with_their_category_and_flags() {
    use draftsmith::commands::Category;
    use draftsmith::tools::{QUICK, VOICE_SAFE};
    let registry = ToolRegistry::standard();
    for tool in TOOLS {
        let def = registry
            .definition(tool)
            .unwrap_or_else(|| panic!("{tool} is not registered"));
        let knowledge = matches!(tool, "query_lore" | "get_character_info");
        let read = knowledge || tool.contains("_read_");
        assert_eq!(
            def.category,
            if knowledge {
                Category::Knowledge
            } else {
                Category::Bible
            },
            "{tool}"
        );
        assert!(!def.reversible, "{tool}");
        assert_eq!(def.read_only, read, "{tool}");
        assert!(!def.description.is_empty());
    }
    let quick: Vec<&str> = registry
        .toolset(QUICK)
        .unwrap()
        .iter()
        .map(|d| d.name.as_ref())
        .collect();
    assert!(quick.contains(&"query_lore") && quick.contains(&"get_character_info"));
    let voice: Vec<&str> = registry
        .toolset(VOICE_SAFE)
        .unwrap()
        .iter()
        .map(|d| d.name.as_ref())
        .collect();
    assert!(voice.contains(&"query_lore") && !voice.contains(&"character_update_notes"));
}

#[test]
fn bad_input_gets_a_clear_error_and_changes_nothing() {
    let mut t = T::story();
    let before = t.s.bible.clone();
    for (tool, args, code) in [
        (
            "character_update_notes",
            json!({"character": "", "notes": "x"}),
            "invalid_args",
        ),
        (
            "character_update_notes",
            json!({"notes": "x"}),
            "invalid_args",
        ),
        (
            "character_update_notes",
            json!({"character": "mara", "notes": 3}),
            "invalid_args",
        ),
        (
            "scene_update_summary",
            json!({"scene": "s9", "summary": "x"}),
            "not_found",
        ),
        (
            "route_update_synopsis",
            json!({"route": "r9", "synopsis": "x"}),
            "not_found",
        ),
        (
            "location_delete_entry",
            json!({"location": "Atlantis"}),
            "not_found",
        ),
        (
            "route_update_primary_characters",
            json!({"route": "r1", "characters": ["Zed"]}),
            "not_found",
        ),
        (
            "character_create_entry",
            json!({"name_src": "Bram", "id": "a/b"}),
            "invalid_args",
        ),
    ] {
        let r = t.call(Origin::User, tool, args.clone());
        assert_eq!(r["status"], "error", "{tool} {args}: {r}");
        assert_eq!(r["data"]["code"], code, "{tool} {args}: {r}");
        assert!(!r["data"]["message"].as_str().unwrap().is_empty());
        assert_eq!(t.s.bible, before, "{tool} {args}");
    }
    // Clearing a field with an empty value is a change like any other.
    let d = t.ok(
        Origin::User,
        "character_update_pronouns",
        json!({"character": "mara", "pronouns": " "}),
    );
    assert_eq!(d["value"], Value::Null);
    assert!(t.field(Kind::Character, "mara", "pronouns").is_null());
}
