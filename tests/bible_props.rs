//! Property: two agents and the writer updating the same story-bible entities in random
//! interleavings never lose an update silently. An agent's update that would overwrite
//! another origin's write from within the recent-update window gets `CONCURRENT UPDATE
//! DETECTED` and changes nothing; the writer's update is based on the version they saw and
//! gets a conflict if it changed; a human-written field is never overwritten by an agent
//! without approval; versions strictly increase.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use draftsmith::bible::{Actor, Kind};
use draftsmith::commands::{Category, Origin};
use draftsmith::policy::{Mode, Policies};
use draftsmith::project::{Chapter, Project};
use draftsmith::session::{CallExtras, EditContext, Session, ToolCall};
use draftsmith::tools::{ToolError, ToolRegistry, ToolSpec};
use draftsmith::{Clock, ManualClock, SequentialIds};
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

const WINDOW: u64 = 30_000;
const ENTITIES: [&str; 2] = ["mara", "tomas"];
const FIELDS: [&str; 2] = ["notes", "pronouns"];

#[derive(Deserialize, JsonSchema)]
struct UpdateArgs {
    id: String,
    field: String,
    value: String,
    /// The version the writer's form showed (the writer's updates only).
    #[serde(default)]
    base_version: Option<u64>,
}

/// One field update through the bible's write path, as the bible tools and the writer's
/// form do.
struct TestUpdateField;

impl ToolSpec for TestUpdateField {
    type Args = UpdateArgs;
    const NAME: &'static str = "test_update_field";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Update one field of a character (test tool).";
    const REVERSIBLE: bool = false;
    fn run(args: UpdateArgs, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        if let Some(base) = args.base_version {
            let current = cx.bible().require(Kind::Character, &args.id)?.version;
            if current != base {
                return Err(ToolError::new("conflict", "changed since read"));
            }
        }
        cx.bible_update(
            Kind::Character,
            &args.id,
            vec![(args.field, json!(args.value))],
        )
    }
}

#[derive(Debug, Clone)]
struct Op {
    /// 0 = the writer, 1 and 2 = agents.
    who: usize,
    entity: usize,
    field: usize,
    /// Time before this op (ms).
    wait: u64,
    /// For the writer: read the entity this many ops before writing (0 = just now).
    stale: bool,
}

fn op() -> impl Strategy<Value = Op> {
    (0..3usize, 0..2usize, 0..2usize, 0..45_000u64, any::<bool>()).prop_map(
        |(who, entity, field, wait, stale)| Op {
            who,
            entity,
            field,
            wait: if wait > 40_000 { 0 } else { wait },
            stale,
        },
    )
}

fn origin(who: usize) -> Origin {
    match who {
        0 => Origin::User,
        1 => Origin::Agent("alpha".into()),
        _ => Origin::Agent("beta".into()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn no_update_is_lost_without_a_concurrent_update_result(
        ops in prop::collection::vec(op(), 1..30),
        standard in any::<bool>(),
    ) {
        let mut registry = ToolRegistry::new();
        registry.add::<TestUpdateField>();
        let clock = ManualClock::new(1_795_305_600_000);
        let ids = SequentialIds::new("id");
        let mut session = Session::new(Project::new("p", "P", vec![Chapter::new("c1", "One", "")]));
        for (i, id) in ENTITIES.iter().enumerate() {
            session
                .bible
                .create(Kind::Character, id, vec![("name_src".into(), json!(format!("N{i}")))], &Actor::Human, 0)
                .unwrap();
        }
        let mut policies = Policies { window_ms: WINDOW, ..Policies::default() };
        if !standard {
            policies.modes.insert("test_update_field".into(), Mode::Permissive);
        }
        // What the writer last read of each entity (its version).
        let mut writer_read: BTreeMap<usize, u64> = BTreeMap::new();
        let mut last_version = session.bible.last_version();
        for (n, op) in ops.iter().enumerate() {
            clock.advance(op.wait);
            let (id, field) = (ENTITIES[op.entity], FIELDS[op.field]);
            let before = session.bible.get(Kind::Character, id).unwrap().clone();
            let value = format!("v{n}");
            let mut args = json!({"id": id, "field": field, "value": value});
            if op.who == 0 {
                let read = if op.stale {
                    *writer_read.entry(op.entity).or_insert(before.version)
                } else {
                    before.version
                };
                writer_read.insert(op.entity, before.version);
                args["base_version"] = json!(read);
            }
            let outcome = session.execute_with(
                &registry,
                ToolCall { id: Some(format!("call{n}")), name: "test_update_field".into(), args },
                origin(op.who),
                &clock,
                &ids,
                CallExtras { policies: Some(&policies), ..CallExtras::default() },
            );
            let after = session.bible.get(Kind::Character, id).unwrap().clone();
            let now = clock.now_ms();
            let stamp = before.stamps.get(field).cloned();
            let prior_other = stamp.as_ref().filter(|s| {
                !Actor::from_origin(&origin(op.who), now).wrote(&s.origin)
            });
            if outcome.result.is_success() {
                // Applied: a new version, the value and the origin are there.
                prop_assert!(after.version > before.version);
                prop_assert!(after.version > last_version);
                last_version = after.version;
                prop_assert_eq!(after.get(field), &json!(value));
                if op.who == 0 {
                    prop_assert_eq!(after.origin(field), Some("human"));
                } else {
                    prop_assert!(after.origin(field).unwrap().starts_with("agent:"));
                    // An agent never silently overwrote another origin's recent write...
                    if let Some(s) = prior_other {
                        prop_assert!(now - s.at >= WINDOW, "overwrote {:?} {} ms later", s, now - s.at);
                    }
                    // ...nor, under the standard policy, the writer's words.
                    if standard {
                        prop_assert!(before.origin(field) != Some("human") || before.get(field).as_str().unwrap_or("").is_empty());
                    }
                }
            } else {
                // Refused: nothing changed, and the model is told why.
                prop_assert_eq!(&after, &before);
                let code = outcome.result.data["code"].as_str().unwrap().to_string();
                match code.as_str() {
                    "concurrent_update" => {
                        let s = prior_other.expect("a concurrent update names another origin's write");
                        prop_assert!(now - s.at < WINDOW);
                        let message = outcome.result.data["message"].as_str().unwrap();
                        prop_assert!(message.contains("CONCURRENT UPDATE DETECTED"));
                        prop_assert_eq!(&outcome.result.data["details"]["current"], before.get(field));
                        prop_assert_eq!(&outcome.result.data["details"]["proposed"], &json!(value));
                    }
                    "approval_required" => {
                        prop_assert!(standard && op.who != 0);
                        prop_assert_eq!(before.origin(field), Some("human"));
                    }
                    "conflict" => prop_assert!(op.who == 0 && op.stale),
                    other => prop_assert!(false, "unexpected {}", other),
                }
            }
        }
    }
}
