//! `#[derive(ToValue)]` builds the `Value` serde's derived `Serialize` built.
//!
//! The same type definitions (every serde attribute the crate's types use) are expanded twice
//! by `shapes!`: once deriving serde's `Serialize` (written with `serde_json::to_value`), once
//! deriving `ToValue`; a proptest builds the same values in both and compares what they write.
//! A table test then checks real records of the crate against the JSON serde wrote for them
//! before the derive, and the text of a tool result against serde's text.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::{FromValue, ToValue};

/// What the shapes are built from (the same in both expansions).
#[derive(Debug, Clone)]
struct Input {
    words: Vec<String>,
    numbers: Vec<u64>,
    signed: i64,
    float: f64,
    small: f32,
    flags: [bool; 4],
    pick: u8,
}

/// The shapes, deriving `$derive`; `value` writes each with `$write`.
macro_rules! shapes {
    ($derive:path, $write:path) => {
        use super::*;

        // `cache` and `hidden` are never written (nor read).
        #[allow(dead_code)]
        #[derive($derive)]
        #[serde(rename_all = "camelCase")]
        pub struct Record {
            pub scene_id: String,
            #[serde(rename = "type")]
            pub kind: Kind,
            #[serde(skip)]
            pub cache: u32,
            #[serde(skip_serializing)]
            pub hidden: u32,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub note: Option<String>,
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub tags: Vec<String>,
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            pub flag: bool,
            #[serde(default, alias = "n", skip_serializing_if = "is_zero")]
            pub count: u64,
            pub maybe: Option<i64>,
            pub grid: Vec<Vec<u32>>,
            pub ratio: f64,
            pub small: f32,
            // What the crate's lite maps had (`crate::value::object`): serde's copy below.
            #[serde(serialize_with = "object")]
            pub lite: crate::map::VecMap<String, u64>,
            pub set: crate::sort::StrSet,
            pub tree: BTreeMap<String, Value>,
            pub sorted: BTreeSet<String>,
            pub pairs: Vec<(String, u8)>,
            pub boxed: Box<Inner>,
            pub any: Value,
            #[serde(serialize_with = "shout")]
            pub loud: String,
            #[serde(with = "codec")]
            pub coded: u32,
            pub fixed: &'static str,
            pub newtype: Wrapper,
            pub unit: Unit,
            pub external: Vec<External>,
            pub internal: Vec<Internal>,
            pub adjacent: Vec<Adjacent>,
            pub untagged: Vec<Untagged>,
            pub wired: Wired,
            #[serde(flatten)]
            pub extra: Map<String, Value>,
        }

        #[derive($derive)]
        pub struct Flat {
            pub id: u8,
            #[serde(flatten)]
            pub inner: Inner,
            #[serde(flatten)]
            pub more: Option<Inner2>,
        }

        #[derive($derive)]
        #[serde(rename_all = "snake_case")]
        pub struct Inner {
            pub a_b: u8,
            #[serde(rename = "z")]
            pub c: Option<String>,
        }

        #[derive($derive)]
        pub struct Inner2 {
            pub deep: Vec<Option<bool>>,
        }

        #[derive($derive)]
        pub struct Wrapper(pub Vec<u8>);

        #[derive($derive)]
        pub struct Unit;

        #[derive(Clone, Copy, $derive)]
        #[serde(rename_all = "snake_case")]
        pub enum Kind {
            SceneBreak,
            Dialogue,
            #[serde(rename = "other-kind")]
            Other,
        }

        #[derive($derive)]
        #[serde(rename_all = "kebab-case")]
        pub enum External {
            Stop,
            MoveTo(u32),
            #[serde(rename_all = "camelCase")]
            JumpOver {
                far_away: bool,
                #[serde(skip_serializing_if = "Option::is_none")]
                why_not: Option<String>,
            },
        }

        #[derive($derive)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        pub enum Internal {
            Quiet,
            Spoken { line_text: String, by: Vec<String> },
            Wrapped(Inner),
        }

        #[derive($derive)]
        #[serde(tag = "t", content = "c", rename_all = "SCREAMING_SNAKE_CASE")]
        pub enum Adjacent {
            Nothing,
            OneNumber(u8),
            Named { first_name: String },
        }

        #[derive($derive)]
        #[serde(untagged)]
        pub enum Untagged {
            Nothing,
            Text(String),
            Pair { left: u8, right: Option<u8> },
        }

        #[derive(Clone, $derive)]
        #[serde(into = "Vec<u64>")]
        pub struct Wired {
            pub first: u64,
            pub second: u64,
        }

        impl From<Wired> for Vec<u64> {
            fn from(w: Wired) -> Self {
                vec![w.first, w.second]
            }
        }

        fn is_zero(n: &u64) -> bool {
            *n == 0
        }

        fn word(input: &Input, i: usize) -> String {
            input.words.get(i).cloned().unwrap_or_default()
        }

        fn number(input: &Input, i: usize) -> u64 {
            input.numbers.get(i).copied().unwrap_or_default()
        }

        fn record(input: &Input) -> Record {
            let p = usize::from(input.pick);
            let mut lite = crate::map::VecMap::new();
            let mut tree = BTreeMap::new();
            let mut extra = Map::new();
            for (i, w) in input.words.iter().enumerate() {
                lite.insert(w.clone(), number(input, i));
                tree.insert(w.clone(), json!([i, w]));
                extra.insert(format!("x{w}"), json!(number(input, i)));
            }
            Record {
                scene_id: word(input, 0),
                kind: [Kind::SceneBreak, Kind::Dialogue, Kind::Other][p % 3],
                cache: 7,
                hidden: 8,
                note: input.flags[0].then(|| word(input, 1)),
                tags: input.words.iter().skip(p % 3).cloned().collect(),
                flag: input.flags[1],
                count: number(input, 0) % 3,
                maybe: input.flags[2].then_some(input.signed),
                grid: vec![vec![], vec![input.pick.into(), 2]],
                ratio: input.float,
                small: input.small,
                lite,
                set: input.words.iter().cloned().collect(),
                tree,
                sorted: input.words.iter().cloned().collect(),
                pairs: vec![(word(input, 2), input.pick)],
                boxed: Box::new(Inner {
                    a_b: input.pick,
                    c: input.flags[3].then(|| word(input, 0)),
                }),
                any: json!({"n": input.signed, "list": input.words}),
                loud: word(input, 1),
                coded: input.pick.into(),
                fixed: "fixed",
                newtype: Wrapper(vec![input.pick, 0]),
                unit: Unit,
                external: vec![
                    External::Stop,
                    External::MoveTo(p as u32),
                    External::JumpOver {
                        far_away: input.flags[0],
                        why_not: input.flags[1].then(|| word(input, 0)),
                    },
                ],
                internal: vec![
                    Internal::Quiet,
                    Internal::Spoken {
                        line_text: word(input, 0),
                        by: input.words.clone(),
                    },
                    Internal::Wrapped(Inner {
                        a_b: 1,
                        c: input.flags[2].then(|| word(input, 1)),
                    }),
                ],
                adjacent: vec![
                    Adjacent::Nothing,
                    Adjacent::OneNumber(input.pick),
                    Adjacent::Named {
                        first_name: word(input, 1),
                    },
                ],
                untagged: vec![
                    Untagged::Nothing,
                    Untagged::Text(word(input, 2)),
                    Untagged::Pair {
                        left: input.pick,
                        right: input.flags[3].then_some(2),
                    },
                ],
                wired: Wired {
                    first: number(input, 1),
                    second: number(input, 2),
                },
                extra,
            }
        }

        fn flat(input: &Input) -> Flat {
            Flat {
                id: input.pick,
                inner: Inner {
                    a_b: 2,
                    c: input.flags[0].then(|| word(input, 0)),
                },
                more: input.flags[1].then(|| Inner2 {
                    deep: vec![None, Some(input.flags[2])],
                }),
            }
        }

        /// Every shape built from `input`, written.
        pub fn values(input: &Input) -> Vec<Value> {
            vec![$write(&record(input)), $write(&flat(input))]
        }
    };
}

/// The shapes with serde's `Serialize`: what the crate's types wrote before `ToValue`.
mod with_serde {
    shapes!(serde::Serialize, to_value_by_serde);

    fn to_value_by_serde<T: serde::Serialize>(value: &T) -> Value {
        serde_json::to_value(value).unwrap()
    }

    /// `crate::value::object` as it was before `ToValue`.
    fn object<S: serde::Serializer, V: serde::Serialize>(
        map: &crate::map::VecMap<String, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_map(map.iter())
    }

    fn shout<S: serde::Serializer>(text: &str, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&text.to_uppercase())
    }

    mod codec {
        pub fn serialize<S: serde::Serializer>(n: &u32, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(&format!("#{n}"))
        }
    }
}

/// The same shapes with `#[derive(ToValue)]`.
mod with_to_value {
    shapes!(crate::value::ToValue, crate::value::to_value);

    fn object(map: &crate::map::VecMap<String, u64>) -> Value {
        map.to_value()
    }

    fn shout(text: &str) -> Value {
        Value::String(text.to_uppercase())
    }

    mod codec {
        pub fn to_value(n: &u32) -> serde_json::Value {
            serde_json::Value::String(format!("#{n}"))
        }
    }
}

fn input() -> impl Strategy<Value = Input> {
    let float = prop_oneof![
        any::<f64>(),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(-0.0),
        Just(0.1)
    ];
    let small = prop_oneof![
        any::<f32>(),
        Just(f32::NAN),
        Just(f32::NEG_INFINITY),
        Just(0.1)
    ];
    (
        prop::collection::vec("[a-zA-Zé\"\\\\ ]{0,6}", 0..5),
        prop::collection::vec(any::<u64>(), 0..4),
        any::<i64>(),
        float,
        small,
        any::<[bool; 4]>(),
        any::<u8>(),
    )
        .prop_map(
            |(words, numbers, signed, float, small, flags, pick)| Input {
                words,
                numbers,
                signed,
                float,
                small,
                flags,
                pick,
            },
        )
}

proptest! {
    /// Every attribute and field type the crate's types use, written both ways.
    #[test]
    fn to_value_writes_what_serde_wrote(input in input()) {
        prop_assert_eq!(with_to_value::values(&input), with_serde::values(&input));
    }
}

/// The fixed cases the proptest may not draw: every `skip_serializing_if` both ways, each
/// float that is not finite, and no words.
#[test]
fn to_value_writes_what_serde_wrote_at_the_edges() {
    for flags in [[false; 4], [true; 4]] {
        for (float, small) in [(f64::NAN, f32::INFINITY), (1.5, 2.5), (-0.0, -0.0)] {
            for words in [vec![], vec!["a".to_string(), "B c".to_string()]] {
                let input = Input {
                    words,
                    numbers: vec![0, 1, u64::MAX],
                    signed: i64::MIN,
                    float,
                    small,
                    flags,
                    pick: 4,
                };
                assert_eq!(with_to_value::values(&input), with_serde::values(&input));
            }
        }
    }
}

/// A record of the crate, read from `input`, writes `expected`: the JSON serde's derived
/// `Serialize` wrote for it before `ToValue`.
fn writes<T: FromValue + ToValue + serde::Serialize>(input: Value, expected: Value) {
    let value: T = super::from_value(input).unwrap();
    assert_eq!(value.to_value(), expected);
    // serde's `Serialize` goes through `ToValue` and gives the same.
    assert_eq!(serde_json::to_value(&value).unwrap(), expected);
}

#[test]
fn records_of_the_crate_write_what_serde_wrote() {
    use crate::bible::Entity;
    use crate::commands::history::Entry;
    use crate::project::changeset::ChangeSet;
    use crate::project::Chapter;
    use crate::protocol::RequestId;
    use crate::tools::{ToolError, ToolResult};

    // `into` (the meta as `MetaWire`), `skip_serializing_if` on `Option`s.
    writes::<ToolResult>(
        json!({"status": "success", "data": {"b": 1, "a": [true]},
               "meta": {"execution_time_ms": 5, "command_id": "c1"}}),
        json!({"status": "success", "data": {"a": [true], "b": 1},
               "meta": {"execution_time_ms": 5, "execution_time": 5, "command_id": "c1"}}),
    );
    writes::<ToolError>(
        json!({"code": "not_found", "message": "m"}),
        json!({"code": "not_found", "message": "m"}),
    );
    // `with` (the rope as one string), `skip`.
    writes::<Chapter>(
        json!({"id": "c1", "title": "T", "text": "Once.\nTwice.", "version": 3}),
        json!({"id": "c1", "title": "T", "text": "Once.\nTwice.", "version": 3}),
    );
    // `into` (a `Vec<Op>`), externally tagged newtype variants.
    writes::<ChangeSet>(
        json!([{"retain": 2}, {"insert": "ab"}, {"delete": 1}]),
        json!([{"retain": 2}, {"insert": "ab"}, {"delete": 1}]),
    );
    // Lite maps as objects, `skip_serializing_if = "is_zero"` both ways.
    writes::<Entity>(
        json!({"kind": "character", "id": "ada", "version": 2,
               "fields": {"name": "Ada", "age": 31},
               "origins": {"name": "user", "age": "agent:x"},
               "stamps": {"name": {"at": 10, "origin": "user", "version": 1},
                          "age": {"at": 12, "origin": "agent:x"}}}),
        json!({"kind": "character", "id": "ada", "version": 2,
               "fields": {"age": 31, "name": "Ada"},
               "origins": {"age": "agent:x", "name": "user"},
               "stamps": {"age": {"at": 12, "origin": "agent:x"},
                          "name": {"at": 10, "origin": "user", "version": 1}}}),
    );
    // An internally tagged kind, `Origin` as its string, `Option`s as `null`.
    let entry = json!({"id": "e1", "group": "g1", "origin": "agent:Editor",
        "description": "d", "timestamp_ms": 9, "tool_call_id": null, "command": "edit",
        "kind": {"type": "revert", "targets": ["e0"]},
        "effects": [{"chapter": "c1", "change": [{"insert": "x"}], "inverse": [{"delete": 1}]}],
        "reverted_by": null, "seq": 4});
    writes::<Entry>(entry.clone(), entry);
    // Untagged.
    writes::<RequestId>(json!(7), json!(7));
    writes::<RequestId>(json!("r7"), json!("r7"));
    // Adjacently tagged.
    use crate::agent::pipeline::Target;
    writes::<Target>(
        json!({"kind": "scene", "id": "s1"}),
        json!({"kind": "scene", "id": "s1"}),
    );
    writes::<Target>(json!({"kind": "project"}), json!({"kind": "project"}));
}

/// The text a conversation keeps of a tool result is serde's text of the derived
/// `Serialize` (fields in declaration order), byte for byte.
#[test]
fn a_tool_results_text_is_what_serde_wrote() {
    use crate::tools::{ResultMeta, Status, ToolError, ToolResult};

    /// serde's derive of `ToolResult` as it was (the meta through `MetaWire`).
    #[derive(serde::Serialize)]
    struct SerdeResult<'a> {
        status: Status,
        data: &'a Value,
        meta: SerdeMeta<'a>,
    }
    #[derive(serde::Serialize)]
    struct SerdeMeta<'a> {
        execution_time_ms: u64,
        execution_time: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        command_id: Option<&'a String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        bytes_written: Option<usize>,
    }
    let metas = [
        ResultMeta::default(),
        ResultMeta {
            execution_time_ms: 12,
            command_id: Some("cmd \"1\"\n".into()),
            bytes_written: Some(40),
        },
        ResultMeta {
            execution_time_ms: u64::MAX,
            command_id: None,
            bytes_written: Some(0),
        },
    ];
    for meta in metas {
        for result in [
            ToolResult::success(json!({"z": [1, {"y": "ü\u{1}"}], "a": null}), meta.clone()),
            ToolResult::success(json!("plain"), meta.clone()),
            ToolResult::error(&ToolError::not_found("no \"such\" scene"), meta.clone()),
        ] {
            let serde = SerdeResult {
                status: result.status,
                data: &result.data,
                meta: SerdeMeta {
                    execution_time_ms: result.meta.execution_time_ms,
                    execution_time: Some(result.meta.execution_time_ms),
                    command_id: result.meta.command_id.as_ref(),
                    bytes_written: result.meta.bytes_written,
                },
            };
            assert_eq!(result.to_text(), serde_json::to_string(&serde).unwrap());
        }
    }
}
