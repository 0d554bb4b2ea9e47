//! 10,000+ random or malformed tool calls: 0 panics and 0 state changes.
//!
//! Every call generated here is invalid: an unknown tool name, arguments that are not an
//! object, a field of the wrong type, a missing required field, an enum value outside the
//! enum, a string longer than `MAX_STRING_ARG_BYTES`, a text or chapter that does not exist,
//! an out-of-range or reversed range. Each must come back as one error result with a code and
//! a message, and leave the session (project, UI state, chapter versions, history) exactly as
//! it was. The calls are derived from whatever `ToolRegistry::standard()` contains, walking
//! each tool's parameter schema, so new tools are fuzzed too.
//!
//! The protocol path gets the same treatment with `execute` requests carrying lone UTF-16
//! surrogate escapes and random byte-ish text.
//!
//! Deterministic (fixed seed). See the breakdown with:
//! `cargo test --test tool_fuzz -- --nocapture`
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use draftsmith::commands::Origin;
use draftsmith::core::Env;
use draftsmith::project::changeset::ChangeSet;
use draftsmith::project::{Chapter, Project};
use draftsmith::session::{Outcome, Session, ToolCall};
use draftsmith::tools::{Status, ToolDefinition, ToolRegistry, MAX_STRING_ARG_BYTES};
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};

use common::rng::Rng;
use futures::executor::block_on;
use serde_json::{json, Map, Value};

/// How many direct `Session::execute` calls to make (at least).
const DIRECT_CALLS: usize = 10_000;
/// How many protocol requests to send.
const PROTOCOL_CALLS: usize = 2_500;

const CHAPTERS: [(&str, &str, &str); 3] = [
    (
        "c-lamp",
        "The Lighthouse",
        "The lamp turned all night. “Who’s there?” Mara called — but the sea only answered with \
         its slow, grey breath. 🌊\n\nShe counted the steps: forty-two, then forty-three. Café au \
         lait had gone cold on the sill; the naïve gulls wheeled anyway.\n\nAt dawn, a boat. 🚣‍♀️ \
         Its sail was patched with a flag she didn’t know: 海. “Not yet,” she whispered.",
    ),
    (
        "c-cafe",
        "Café “Noir”",
        "Rain on the awning. Jonas ordered the usual — un café noir, s’il vous plaît — and \
         waited.\n\n“You’re late,” said Élodie. “Again.”\n\nHe smiled. 😅 The clock above the bar \
         read 11:59, forever.",
    ),
    (
        "c-shell",
        "Chapter Three 🐚",
        "Ω. The shell held the sound of a sea that wasn’t there.\n\n…and then nothing at all, \
         for a while. Ünder the stairs, the dog dreamed in Gothic letters: 𝔡𝔯𝔢𝔞𝔪.\n\nThe end? \
         Not quite.",
    ),
];

/// Chapter names that match no chapter: numbers out of range and letter salad far from every
/// title (so no fuzzy title match can reach them).
const MISSING_CHAPTERS: &[&str] = &[
    "0",
    "4",
    "57",
    "Chapter 0",
    "Chapter 1000",
    "ch. 9",
    "18446744073709551616",
    "c-missing-qxzj",
    "qxzjkvwqxz",
    "zzqqxxjjvv kkww",
    "ⱯⱯⱯⱯⱯⱯⱯⱯ",
    "\u{0}\u{0}\u{0}",
    "🐚🐚🐚🐚🐚🐚🐚🐚🐚",
];

/// Characters random strings are made of: ASCII, JSON-significant ones, controls, combining
/// marks, curly quotes, non-BMP emoji and letters, BOM, zero-width space, U+FFFD, U+10FFFF.
const CHARS: &[char] = &[
    'a',
    'b',
    'q',
    'x',
    'z',
    'E',
    'Z',
    '0',
    '7',
    '9',
    ' ',
    '_',
    '-',
    '.',
    ',',
    ':',
    ';',
    '?',
    '!',
    '"',
    '\\',
    '/',
    '{',
    '}',
    '[',
    ']',
    '\'',
    '\n',
    '\t',
    '\r',
    '\0',
    '\u{1}',
    '\u{7f}',
    'é',
    'ß',
    'İ',
    'Ω',
    '中',
    '海',
    '’',
    '“',
    '”',
    '—',
    '…',
    '\u{301}',
    '\u{200b}',
    '\u{feff}',
    '\u{fffd}',
    '🌊',
    '🐚',
    '😅',
    '𝔡',
    '\u{10ffff}',
];

/// Fuzz-specific draws on top of the shared PRNG.
trait Draw {
    fn pick_str<'a>(&mut self, items: &[&'a str]) -> &'a str;
    fn string(&mut self, min: usize, max: usize) -> String;
}

impl Draw for Rng {
    fn pick_str<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn string(&mut self, min: usize, max: usize) -> String {
        let len = self.range(min, max);
        (0..len).map(|_| *self.pick(CHARS)).collect()
    }
}

/// What the schema says a field accepts.
#[derive(Debug, Clone)]
struct Field {
    name: String,
    required: bool,
    /// JSON Schema types; `None` when the schema does not say (anything may be accepted).
    kinds: Option<Vec<String>>,
    enum_values: Option<Vec<Value>>,
    minimum: Option<f64>,
    maximum: Option<f64>,
}

fn kinds_of(schema: &Value) -> Option<Vec<String>> {
    match schema.get("type") {
        Some(Value::String(t)) => return Some(vec![t.clone()]),
        Some(Value::Array(ts)) => {
            return Some(
                ts.iter()
                    .filter_map(|t| t.as_str().map(str::to_string))
                    .collect(),
            )
        }
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alternatives)) = schema.get(key) {
            let mut all = Vec::new();
            for alternative in alternatives {
                all.extend(kinds_of(alternative)?);
            }
            return Some(all);
        }
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        let mut all: Vec<String> = values.iter().map(|v| kind_name(v).to_string()).collect();
        all.dedup();
        return Some(all);
    }
    None
}

fn kind_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn fields(def: &ToolDefinition) -> Vec<Field> {
    let required: Vec<&str> = def.parameters["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = def.parameters["properties"].as_object() else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, schema)| Field {
            name: name.clone(),
            required: required.contains(&name.as_str()),
            kinds: kinds_of(schema),
            enum_values: schema["enum"].as_array().cloned(),
            minimum: schema["minimum"].as_f64(),
            maximum: schema["maximum"].as_f64(),
        })
        .collect()
}

impl Field {
    /// Whether `value` might be accepted for this field (conservative: when in doubt, yes).
    fn might_accept(&self, value: &Value) -> bool {
        if value.is_null() && !self.required {
            return true; // optional fields take null as "not given"
        }
        if let Some(values) = &self.enum_values {
            if !values.contains(value) {
                return false;
            }
        }
        let Some(kinds) = &self.kinds else {
            return true;
        };
        kinds.iter().any(|kind| match kind.as_str() {
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "number" => value.is_number(),
            "integer" => {
                (value.is_i64() || value.is_u64())
                    && value.as_f64().is_some_and(|v| {
                        self.minimum.is_none_or(|m| v >= m) && self.maximum.is_none_or(|m| v <= m)
                    })
            }
            "array" => value.is_array(),
            "object" => value.is_object(),
            "null" => value.is_null(),
            _ => true,
        })
    }

    /// A value of the right type (not necessarily meaningful).
    fn sample(&self, rng: &mut Rng, texts: &[String]) -> Value {
        if let Some(values) = &self.enum_values {
            if !values.is_empty() {
                return rng.pick(values).clone();
            }
        }
        let kind = self
            .kinds
            .as_ref()
            .and_then(|k| k.iter().find(|k| *k != "null").cloned())
            .unwrap_or_default();
        match kind.as_str() {
            "string" => json!(rng.pick(texts)),
            "integer" => json!(self.minimum.map_or(0, |m| m.max(0.0) as u64) + 1),
            "number" => json!(0.5),
            "boolean" => json!(rng.chance(50)),
            "array" => json!([]),
            "object" => json!({}),
            _ => Value::Null,
        }
    }
}

/// Values of every JSON kind, including numbers no integer field takes.
fn odd_values() -> Vec<Value> {
    let huge_int: Value = serde_json::from_str("18446744073709551616").unwrap(); // u64::MAX + 1
    let huger: Value = serde_json::from_str("-340282366920938463463374607431768211457").unwrap();
    vec![
        json!(0),
        json!(42),
        json!(-1),
        json!(-7),
        json!(1.5),
        json!(2.0),
        json!(-0.0),
        json!(1e300),
        json!(-1e300),
        json!(f64::MIN_POSITIVE),
        json!(i64::MIN),
        json!(u64::MAX),
        huge_int,
        huger,
        json!(""),
        json!("text"),
        json!("42"),
        json!("-1"),
        json!("true"),
        json!("null"),
        json!("🌊"),
        json!(true),
        json!(false),
        json!([]),
        json!([1]),
        json!(["a"]),
        json!([null]),
        json!({}),
        json!({"a": 1}),
        json!({"": ""}),
        Value::Null,
    ]
}

/// The fuzzing state: session, registry, environment, statistics.
struct Fuzz {
    registry: ToolRegistry,
    session: Session,
    baseline: Session,
    clock: ManualClock,
    ids: SequentialIds,
    rng: Rng,
    tools: Vec<(ToolDefinition, Vec<Field>)>,
    /// Texts that occur in the chapters.
    present: Vec<String>,
    odd: Vec<Value>,
    huge: Value,
    huge_name: String,
    calls: usize,
    by_code: BTreeMap<String, usize>,
    by_kind: BTreeMap<&'static str, usize>,
}

fn project() -> Project {
    Project::new(
        "p-fuzz",
        "Fuzz",
        CHAPTERS
            .iter()
            .map(|(id, title, text)| Chapter::new(*id, *title, text))
            .collect(),
    )
}

impl Fuzz {
    fn new(seed: u64) -> Self {
        let registry = ToolRegistry::standard();
        let clock = ManualClock::new(1_700_000_000_000);
        let ids = SequentialIds::new("fz");
        let mut session = Session::new(project());
        // Some history and UI state first, so that "unchanged" means something: an agent
        // edit, a writer edit, a UI change, and one undone edit waiting on the redo stack.
        let warmup = [
            (
                "update_manuscript",
                json!({"searchText": "grey breath", "replacementText": "grey, salt breath"}),
            ),
            (
                "append_to_manuscript",
                json!({"text": "“Later.” 🌙", "chapter": "2"}),
            ),
            ("switch_panel", json!({"panel": "history"})),
            (
                "insert_text",
                json!({"text": " (again)", "anchorText": "forty-three"}),
            ),
        ];
        for (name, args) in warmup {
            if registry.definition(name).is_none() {
                continue;
            }
            let outcome = session.execute(
                &registry,
                call(name, args),
                Origin::Agent("warmup".into()),
                &clock,
                &ids,
            );
            assert!(outcome.result.is_success(), "warmup {name}: {outcome:?}");
            clock.advance(1_000);
        }
        let shell = session.project.chapter("c-shell").unwrap();
        let (version, len) = (shell.version(), shell.len_chars());
        let change = ChangeSet::replace(len, 0, 0, "So. ").unwrap();
        session
            .apply_user_change("c-shell", version, change, &clock, &ids)
            .expect("writer edit");
        clock.advance(1_000);
        session
            .undo(None, Origin::User, &clock, &ids)
            .expect("undo");
        assert!(session.history.can_undo() && session.history.can_redo());

        let tools: Vec<(ToolDefinition, Vec<Field>)> = registry
            .definitions()
            .iter()
            .map(|d| (d.clone(), fields(d)))
            .collect();
        let mut present = Vec::new();
        for chapter in &session.project.chapters {
            let text = chapter.text().to_string();
            let chars: Vec<char> = text.chars().collect();
            for (start, len) in [(0, 8), (4, 20), (10, 3), (chars.len() / 2, 12)] {
                let end = (start + len).min(chars.len());
                let piece: String = chars[start.min(end)..end].iter().collect();
                if !piece.trim().is_empty() {
                    present.push(piece);
                }
            }
        }
        let mut rng = Rng(seed);
        let unit = "Ω🌊é“x” ";
        let huge_text = unit.repeat(MAX_STRING_ARG_BYTES / unit.len() + 1);
        assert!(huge_text.len() > MAX_STRING_ARG_BYTES);
        let huge_name = rng.string(40, 40).repeat(1_600); // ~64k chars
        Self {
            baseline: session.clone(),
            registry,
            session,
            clock,
            ids,
            rng,
            tools,
            present,
            odd: odd_values(),
            huge: Value::String(huge_text),
            huge_name,
            calls: 0,
            by_code: BTreeMap::new(),
            by_kind: BTreeMap::new(),
        }
    }

    fn tool_exists(&self, name: &str) -> bool {
        self.registry.definition(name).is_some()
    }

    /// A text that occurs in no chapter (not even case-insensitively).
    fn missing_text(&mut self) -> String {
        let all: String = self
            .session
            .project
            .chapters
            .iter()
            .map(|c| c.text().to_string().to_lowercase())
            .collect::<Vec<_>>()
            .join("\u{0}");
        loop {
            let candidate = format!("{}qzx{}", self.rng.string(3, 20), self.rng.string(3, 20));
            if !all.contains(&candidate.to_lowercase()) {
                return candidate;
            }
        }
    }

    fn missing_chapter(&mut self) -> String {
        if self.rng.chance(70) {
            self.rng.pick(MISSING_CHAPTERS).to_string()
        } else {
            const SALAD: &[char] = &['q', 'x', 'z', 'j', 'k', 'v', 'w'];
            (0..self.rng.range(8, 16))
                .map(|_| *self.rng.pick(SALAD))
                .collect()
        }
    }

    /// Arguments with every required field (and some optional ones) of the right type.
    fn base_args(&mut self, fields: &[Field]) -> Map<String, Value> {
        let mut args = Map::new();
        for field in fields {
            if field.required || self.rng.chance(30) {
                let value = field.sample(&mut self.rng, &self.present);
                if value.is_null() && field.required {
                    continue;
                }
                args.insert(field.name.clone(), value);
            }
        }
        args
    }

    /// A name no tool has.
    fn unknown_name(&mut self) -> String {
        let names: Vec<&'static str> = self.registry.names().collect();
        loop {
            let name = match self.rng.below(9) {
                0 => self.rng.string(0, 30),
                1 => String::new(),
                // A 64k-char name: rarely, since suggesting names for it is costly.
                2 if self.rng.chance(10) => self.huge_name.clone(),
                2 => self.rng.string(100, 1_000),
                3 => self
                    .rng
                    .pick(&["  ", "\n", "\u{0}", "null", "undefined", "{}", "*"])
                    .to_string(),
                _ if names.is_empty() => self.rng.string(1, 20),
                kind => {
                    // A near miss of a real name.
                    let real: Vec<char> = self.rng.pick(&names).chars().collect();
                    let mut chars = real.clone();
                    let at = self.rng.below(chars.len() + 1);
                    match kind {
                        4 if !chars.is_empty() => {
                            chars.remove(at.min(chars.len() - 1));
                        }
                        5 => chars.insert(at, *self.rng.pick(CHARS)),
                        6 => chars = chars.iter().flat_map(|c| c.to_uppercase()).collect(),
                        7 => {
                            chars.insert(0, ' ');
                            chars.push(if self.rng.chance(50) { ' ' } else { '\n' });
                        }
                        _ => {
                            let i = at.min(chars.len().saturating_sub(1));
                            if !chars.is_empty() {
                                chars[i] = if chars[i] == '_' { '-' } else { '_' };
                            }
                        }
                    }
                    chars.into_iter().collect()
                }
            };
            if !names.contains(&name.as_str()) {
                return name;
            }
        }
    }

    /// One invalid call and what kind of invalid it is.
    fn invalid_call(&mut self) -> (&'static str, String, Value) {
        if self.tools.is_empty() || self.rng.chance(12) {
            return ("unknown tool", self.unknown_name(), self.args_for_unknown());
        }
        let (def, fields) = self.tools[self.rng.below(self.tools.len())].clone();
        let name = def.name.to_string();
        let required: Vec<&Field> = fields.iter().filter(|f| f.required).collect();
        match self.rng.below(100) {
            // Arguments that are not an object.
            0..=9 => {
                let not_object = loop {
                    let v = self.rng.pick(&self.odd).clone();
                    if !v.is_object() && !v.is_null() {
                        break v;
                    }
                };
                let args = if self.rng.chance(20) {
                    json!([self.base_args(&fields)])
                } else {
                    not_object
                };
                ("args not an object", name, args)
            }
            // null counts as {}: invalid only when something is required.
            10..=11 if !required.is_empty() => ("null args, fields required", name, Value::Null),
            // A required field missing.
            12..=24 if !required.is_empty() => {
                let mut args = self.base_args(&fields);
                let drop = self.rng.pick(&required).name.clone();
                args.remove(&drop);
                ("missing required field", name, Value::Object(args))
            }
            // One field of the wrong type (or outside its enum, or out of its range).
            25..=59 if !fields.is_empty() => {
                let field = self.rng.pick(&fields).clone();
                let wrong: Vec<Value> = self
                    .odd
                    .iter()
                    .filter(|v| !field.might_accept(v))
                    .cloned()
                    .collect();
                if wrong.is_empty() {
                    return self.invalid_call();
                }
                let mut args = self.base_args(&fields);
                let value = self.rng.pick(&wrong).clone();
                let kind = if field.enum_values.is_some() && value.is_string() {
                    "enum value outside the enum"
                } else if value.is_number()
                    && field.kinds.as_deref() == Some(&["integer".to_string()][..])
                {
                    "integer field: negative, float or huge"
                } else {
                    "field of the wrong type"
                };
                args.insert(field.name.clone(), value);
                (kind, name, Value::Object(args))
            }
            // A string longer than the limit: in a field, or anywhere in the arguments.
            60..=62 => {
                let mut args = self.base_args(&fields);
                let key = match fields.iter().find(|f| {
                    f.kinds
                        .as_deref()
                        .is_some_and(|k| k.contains(&"string".into()))
                }) {
                    Some(f) if self.rng.chance(70) => f.name.clone(),
                    _ => "zz_extra".to_string(),
                };
                let value = if self.rng.chance(80) {
                    self.huge.clone()
                } else {
                    json!({"nested": [1, self.huge.clone()]})
                };
                args.insert(key, value);
                ("huge string", name, Value::Object(args))
            }
            // A chapter that does not exist.
            63..=74 if fields.iter().any(|f| f.name == "chapter") => {
                let mut args = self.base_args(&fields);
                args.insert("chapter".into(), json!(self.missing_chapter()));
                ("chapter that does not exist", name, Value::Object(args))
            }
            // Tool-specific semantic errors, when the tool exists.
            75..=99 => match self.semantic_call() {
                Some(call) => call,
                None => self.invalid_call(),
            },
            _ => self.invalid_call(),
        }
    }

    fn args_for_unknown(&mut self) -> Value {
        match self.rng.below(4) {
            0 => Value::Null,
            1 => json!({}),
            2 => self.rng.pick(&self.odd).clone(),
            _ => json!({"searchText": self.rng.pick(&self.present), "replacementText": "x"}),
        }
    }

    /// Calls that are well-typed but ask for something impossible.
    fn semantic_call(&mut self) -> Option<(&'static str, String, Value)> {
        let present = self.rng.pick(&self.present).clone();
        let missing = self.missing_text();
        let chapter_no = self.rng.range(1, self.session.project.chapters.len());
        let chapter_len = self.session.project.chapters[chapter_no - 1].len_chars();
        let chapter_bytes = self.session.project.chapters[chapter_no - 1]
            .text()
            .len_bytes();
        let (kind, name, args) = match self.rng.below(12) {
            0 => (
                "search text not in the chapter",
                "update_manuscript",
                json!({"searchText": missing, "replacementText": present}),
            ),
            1 => (
                "replacement equals search text",
                "update_manuscript",
                json!({"searchText": present.clone(), "replacementText": present}),
            ),
            2 => (
                "empty search text",
                "update_manuscript",
                json!({"searchText": "", "replacementText": present}),
            ),
            3 => (
                "search text not in the chapter",
                "insert_text",
                json!({"text": present, "anchorText": missing,
                       "position": if self.rng.chance(50) {"before"} else {"after"}}),
            ),
            4 => (
                "empty text",
                "insert_text",
                json!({"text": "", "anchorText": present}),
            ),
            5 => (
                "search text not in the chapter",
                "delete_text",
                json!({"text": missing, "chapter": chapter_no.to_string()}),
            ),
            6 => ("empty text", "delete_text", json!({"text": ""})),
            7 => ("empty text", "append_to_manuscript", json!({"text": ""})),
            8 | 9 => {
                let tool = if self.rng.chance(50) {
                    "highlight_text"
                } else {
                    "set_selection"
                };
                let (kind, mut args) = match self.rng.below(7) {
                    0 => {
                        let start = self.rng.range(1, chapter_len);
                        let end = self.rng.below(start);
                        ("start > end", json!({"start": start, "end": end}))
                    }
                    1 => {
                        let end = self
                            .rng
                            .range(chapter_len + 1, chapter_bytes.max(chapter_len + 1));
                        (
                            "end past the chapter (bytes, not chars)",
                            json!({"start": 0, "end": end}),
                        )
                    }
                    2 => (
                        "range out of range",
                        json!({"start": chapter_len + 1, "end": usize::MAX}),
                    ),
                    3 => ("only start or end", json!({"start": 1})),
                    4 => (
                        "text and range both given",
                        json!({"text": present, "start": 0, "end": 1}),
                    ),
                    5 => ("search text not in the chapter", json!({"text": missing})),
                    _ => ("no target given", json!({"note": "nothing"})),
                };
                args["chapter"] = json!(chapter_no.to_string());
                (kind, tool, args)
            }
            _ => (
                "chapter that does not exist",
                *self.rng.pick(&[
                    "update_manuscript",
                    "delete_text",
                    "set_selection",
                    "highlight_text",
                ]),
                json!({"searchText": present.clone(), "replacementText": "new words", "text": present,
                       "start": 0, "end": 1, "chapter": self.missing_chapter()}),
            ),
        };
        // The last case gives every target field at once; each tool ignores the ones it does
        // not have, so only the chapter is wrong. Tools that are not registered are skipped.
        self.tool_exists(name)
            .then(|| (kind, name.to_string(), args))
    }

    fn run(&mut self, kind: &'static str, name: String, args: Value) {
        let shown = describe(&name, &args);
        let origin = if self.rng.chance(50) {
            Origin::Agent("fuzzer".into())
        } else {
            Origin::User
        };
        let registry = &self.registry;
        let session = &mut self.session;
        let (clock, ids) = (&self.clock, &self.ids);
        let outcome: Outcome = match catch_unwind(AssertUnwindSafe(|| {
            session.execute(registry, call(&name, args), origin, clock, ids)
        })) {
            Ok(outcome) => outcome,
            Err(_) => panic!("PANIC on {kind}: {shown}"),
        };
        assert_eq!(
            outcome.result.status,
            Status::Error,
            "{kind}: expected an error for {shown}, got {:?}",
            outcome.result
        );
        let code = outcome.result.data["code"].as_str().unwrap_or_default();
        let message = outcome.result.data["message"].as_str().unwrap_or_default();
        assert!(
            !code.is_empty() && !message.trim().is_empty(),
            "{kind}: error without code or message for {shown}: {:?}",
            outcome.result
        );
        assert!(
            outcome.edits.is_empty() && !outcome.ui_changed,
            "{kind}: {shown}"
        );
        assert_eq!(outcome.result.meta.command_id, None, "{kind}: {shown}");
        assert_eq!(outcome.result.meta.bytes_written, None, "{kind}: {shown}");
        assert!(
            self.session.project == self.baseline.project,
            "{kind}: the project changed after {shown}"
        );
        for (now, was) in self
            .session
            .project
            .chapters
            .iter()
            .zip(&self.baseline.project.chapters)
        {
            assert_eq!(
                now.version(),
                was.version(),
                "{kind}: version moved after {shown}"
            );
        }
        assert!(
            self.session.history == self.baseline.history,
            "{kind}: the history changed after {shown}"
        );
        self.calls += 1;
        *self.by_code.entry(code.to_string()).or_default() += 1;
        *self.by_kind.entry(kind).or_default() += 1;
    }
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: Some("call-fuzz".into()),
        name: name.to_string(),
        args,
    }
}

/// A call for failure messages, with long strings shortened.
fn describe(name: &str, args: &Value) -> String {
    fn short(s: &str) -> String {
        if s.len() > 120 {
            format!(
                "{:?}… ({} bytes)",
                s.chars().take(40).collect::<String>(),
                s.len()
            )
        } else {
            format!("{s:?}")
        }
    }
    fn value(v: &Value) -> String {
        match v {
            Value::String(s) => short(s),
            Value::Array(items) => format!(
                "[{}]",
                items.iter().map(value).collect::<Vec<_>>().join(", ")
            ),
            Value::Object(map) => format!(
                "{{{}}}",
                map.iter()
                    .map(|(k, v)| format!("{}: {}", short(k), value(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            other => other.to_string(),
        }
    }
    format!("{}({})", short(name), value(args))
}

fn print_breakdown(
    title: &str,
    total: usize,
    kinds: &BTreeMap<&str, usize>,
    codes: &BTreeMap<String, usize>,
) {
    println!("{title}: {total} invalid calls, 0 panics, 0 state changes");
    println!("  by kind:");
    for (kind, n) in kinds {
        println!("    {n:>6}  {kind}");
    }
    println!("  by error code:");
    for (code, n) in codes {
        println!("    {n:>6}  {code}");
    }
}

#[test]
fn ten_thousand_invalid_tool_calls_fail_cleanly_and_change_nothing() {
    let mut fuzz = Fuzz::new(0x5EED_D4AF_75A1_7401);
    // A tool name longer than any string argument may be (suggesting close names for it used
    // to cost O(name length * tool name length) per tool: seconds per megabyte).
    let huge_name = fuzz.huge.as_str().unwrap().to_string();
    fuzz.run("unknown tool", huge_name, json!({}));
    // Every tool, every field: each wrong value at least once, each required field dropped.
    for (def, fields) in fuzz.tools.clone() {
        for field in &fields {
            for value in fuzz.odd.clone() {
                if field.might_accept(&value) {
                    continue;
                }
                let mut args = fuzz.base_args(&fields);
                args.insert(field.name.clone(), value);
                fuzz.run(
                    "field of the wrong type",
                    def.name.to_string(),
                    Value::Object(args),
                );
            }
            if field.required {
                let mut args = fuzz.base_args(&fields);
                args.remove(&field.name);
                fuzz.run(
                    "missing required field",
                    def.name.to_string(),
                    Value::Object(args),
                );
            }
        }
    }
    while fuzz.calls < DIRECT_CALLS {
        let (kind, name, args) = fuzz.invalid_call();
        fuzz.run(kind, name, args);
    }
    print_breakdown("Session::execute", fuzz.calls, &fuzz.by_kind, &fuzz.by_code);
    assert!(fuzz.calls >= DIRECT_CALLS);
    assert!(fuzz.session == fuzz.baseline);
}

// ---------------------------------------------------------------------------------------------
// The protocol path: JSON text in, with lone surrogates and random bytes.
// ---------------------------------------------------------------------------------------------

fn send(core: &Core, text: &str) -> Value {
    let out = match catch_unwind(AssertUnwindSafe(|| block_on(core.handle_text(text)))) {
        Ok(out) => out,
        Err(_) => panic!(
            "PANIC on request {:?}",
            text.chars().take(300).collect::<String>()
        ),
    };
    let value: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("response is not JSON ({e}): {out} for {text:?}"));
    assert_eq!(value["kind"], "response", "not a response: {out}");
    value
}

/// JSON string contents (escaped) mixing lone surrogates, valid pairs and plain text.
fn surrogate_soup(rng: &mut Rng, names: &[&str], lone: bool) -> String {
    const LONE: &[&str] = &[
        r"\ud800",
        r"\udfff",
        r"\udbff",
        r"\udc00",
        r"\udfff\ud800",
        r"\ud800\u0041",
    ];
    const FINE: &[&str] = &[
        r"\ud83c\udf0a",
        r"\ud835\udd21",
        "é",
        "🐚",
        r"\u0000",
        r"\n",
        "abc",
        r"\\",
        r#"\""#,
    ];
    let mut out = String::new();
    let pieces = rng.range(1, 5);
    let lone_at = rng.below(pieces);
    for i in 0..pieces {
        let piece = if lone && i == lone_at {
            rng.pick_str(LONE)
        } else if rng.chance(30) && !names.is_empty() {
            rng.pick_str(names)
        } else {
            rng.pick_str(FINE)
        };
        out.push_str(piece);
    }
    out
}

#[test]
fn protocol_execute_with_lone_surrogates_and_random_bytes_fails_cleanly() {
    let clock = Rc::new(ManualClock::new(1_700_000_000_000));
    let sink = Rc::new(RecordingSink::default());
    let core = Core::new(Env {
        clock: clock.clone(),
        ids: Rc::new(SequentialIds::new("pz")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: sink.clone(),
        store: Rc::new(draftsmith::store::MemoryStore::new()),
    });
    let chapters: Vec<Value> = CHAPTERS
        .iter()
        .map(|(_, title, text)| json!({"title": title, "text": text}))
        .collect();
    let created = send(
        &core,
        &json!({"id": 1, "type": "create_project", "params": {"name": "Fuzz", "chapters": chapters}})
            .to_string(),
    );
    assert_eq!(created["ok"], true, "{created}");
    let names: Vec<&'static str> = core.registry().names().collect();
    if names.contains(&"update_manuscript") {
        let r = send(
            &core,
            &json!({"id": 2, "type": "execute", "params": {"tool": "update_manuscript",
                "args": {"searchText": "grey breath", "replacementText": "grey, salt breath"}}})
            .to_string(),
        );
        assert_eq!(r["result"]["status"], "success", "{r}");
    }
    let snapshot = |core: &Core| -> Vec<Value> {
        let mut all: Vec<Value> = (1..=CHAPTERS.len())
            .map(|n| {
                let r = send(
                    core,
                    &json!({"id": 9, "type": "get_chapter", "params": {"chapter": n.to_string()}})
                        .to_string(),
                );
                assert_eq!(r["ok"], true, "{r}");
                json!({"text": r["result"]["text"], "version": r["result"]["version"]})
            })
            .collect();
        let history = send(core, r#"{"id": 9, "type": "history"}"#);
        all.push(history["result"].clone());
        all
    };
    let before = snapshot(&core);
    sink.take();

    // Multi-megabyte names: a tool and a request type.
    let huge = "🌊x".repeat(1024 * 1024);
    for text in [
        json!({"id": 3, "type": "execute", "params": {"tool": huge, "args": {}}}).to_string(),
        json!({"id": 4, "type": huge}).to_string(),
    ] {
        let r = send(&core, &text);
        let failed = r["ok"] == false || r["result"]["status"] == "error";
        assert!(failed, "expected an error: {}", &r.to_string()[..200]);
    }
    let mut rng = Rng(0xD0D0_CAFE_0BAD_F00D);
    let mut by_code: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_kind: BTreeMap<&'static str, usize> = BTreeMap::new();
    let string_fields = [
        "searchText",
        "replacementText",
        "text",
        "anchorText",
        "chapter",
        "panel",
    ];
    for i in 0..PROTOCOL_CALLS {
        let id = i + 100;
        let (kind, text) = match rng.below(7) {
            0 => (
                "lone surrogate in tool name",
                format!(
                    r#"{{"id": {id}, "type": "execute", "params": {{"tool": "{}", "args": {{}}}}}}"#,
                    surrogate_soup(&mut rng, &names, true)
                ),
            ),
            1 => (
                "lone surrogate in an argument",
                format!(
                    r#"{{"id": {id}, "type": "execute", "params": {{"tool": "{}", "args": {{"{}": "{}", "replacementText": "x"}}}}}}"#,
                    rng.pick(&names),
                    rng.pick(&string_fields),
                    surrogate_soup(&mut rng, &names, true)
                ),
            ),
            2 => (
                "lone surrogate in a key, call id or origin",
                match rng.below(3) {
                    0 => format!(
                        r#"{{"id": {id}, "type": "execute", "params": {{"tool": "{}", "args": {{"{}": "x"}}}}}}"#,
                        rng.pick(&names),
                        surrogate_soup(&mut rng, &names, true)
                    ),
                    1 => format!(
                        r#"{{"id": {id}, "type": "execute", "params": {{"tool": "{}", "callId": "{}", "args": {{"searchText": "grey", "replacementText": "gray"}}}}}}"#,
                        rng.pick(&names),
                        surrogate_soup(&mut rng, &names, true)
                    ),
                    _ => format!(
                        r#"{{"id": {id}, "type": "execute", "params": {{"tool": "toggle_zen_mode", "origin": "agent:{}"}}}}"#,
                        surrogate_soup(&mut rng, &names, true)
                    ),
                },
            ),
            3 => (
                "valid surrogate pairs in an unknown tool name",
                format!(
                    r#"{{"id": {id}, "type": "execute", "params": {{"tool": "{}\ud83c\udf0a", "args": {{"text": "\ud83d\ude05"}}}}}}"#,
                    surrogate_soup(&mut rng, &names, false)
                ),
            ),
            4 => {
                // Valid pairs in the arguments of a real tool, but text that is not there.
                let tool = *rng.pick(&["update_manuscript", "insert_text", "delete_text"]);
                if !names.contains(&tool) {
                    continue;
                }
                (
                    "valid surrogate pairs, text not in the chapter",
                    format!(
                        r#"{{"id": {id}, "type": "execute", "params": {{"tool": "{tool}", "args": {{"searchText": "qzx\ud83c\udf0a{0}", "anchorText": "qzx\ud83c\udf0a{0}", "text": "qzx\ud83c\udf0a{0}", "replacementText": "\ud83d\ude05"}}}}}}"#,
                        surrogate_soup(&mut rng, &[], false)
                    ),
                )
            }
            5 => {
                // Random chars spliced raw into an execute request (mostly invalid JSON).
                let raw = rng.string(0, 40);
                (
                    "random chars spliced into a request",
                    format!(
                        r#"{{"id": {id}, "type": "execute", "params": {{"tool": "{raw}", "args": {{"searchText": "{}", "replacementText": "x"}}}}}}"#,
                        rng.string(0, 10)
                    ),
                )
            }
            _ => {
                // Random bytes, decoded lossily: the whole message.
                let len = rng.range(0, 200);
                let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                let mut text = String::from_utf8_lossy(&bytes).into_owned();
                if rng.chance(50) {
                    text.insert_str(0, r#"{"id": 1, "type": "execute", "params": {"tool": ""#);
                }
                ("random bytes", text)
            }
        };
        let r = send(&core, &text);
        let code = if r["ok"] == false {
            let code = r["error"]["code"].as_str().unwrap_or_default();
            assert!(
                !code.is_empty()
                    && !r["error"]["message"]
                        .as_str()
                        .unwrap_or_default()
                        .is_empty(),
                "{kind}: error response without code or message: {r} for {text:?}"
            );
            format!("response error: {code}")
        } else {
            assert_eq!(r["ok"], true, "{kind}: {r}");
            let result = &r["result"];
            assert_eq!(
                result["status"], "error",
                "{kind}: expected an error result for {text:?}, got {r}"
            );
            let code = result["data"]["code"].as_str().unwrap_or_default();
            assert!(
                !code.is_empty()
                    && !result["data"]["message"]
                        .as_str()
                        .unwrap_or_default()
                        .is_empty(),
                "{kind}: tool error without code or message: {r}"
            );
            format!("tool error: {code}")
        };
        *by_code.entry(code).or_default() += 1;
        *by_kind.entry(kind).or_default() += 1;
    }
    // Every tool call is audited (and so saved); nothing else may happen.
    let events: Vec<_> = sink
        .take()
        .into_iter()
        .filter(|e| e.kind != "saved")
        .collect();
    assert!(
        events.is_empty(),
        "events after invalid requests: {:?}",
        events.iter().take(5).collect::<Vec<_>>()
    );
    assert_eq!(snapshot(&core), before, "the project or history changed");
    let total = by_kind.values().sum();
    print_breakdown("Core::handle_text (execute)", total, &by_kind, &by_code);
}
