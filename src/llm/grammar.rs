//! Grammars that make a small local model write a valid tool call.
//!
//! llama.cpp (and wllama, which runs it in the browser) can constrain sampling with a grammar
//! in its GBNF format: at each step only tokens that keep the output inside the grammar may be
//! drawn. [`tool_call_grammar`] builds one from the offered tools' JSON Schemas, so a model of
//! a hundred million parameters still writes
//! `{"name": "<one of the tools>", "arguments": {<valid arguments of that tool>}}`.
//!
//! What a schema becomes:
//! - `object`: its properties, the required ones first (in `required` order), then each
//!   optional one in `properties` order, present or not; no others. An object with no
//!   `properties` is `{}`, unless `additionalProperties` is a schema (a map of string keys to
//!   it) or `true` (any keys and values).
//! - `string`, with `minLength` / `maxLength`; `integer`, with `minimum` / `maximum` (and
//!   their exclusive forms) as exact digit ranges; `number` (a `minimum` of 0 or more rules out
//!   the sign); `boolean`; `null`.
//! - `array` of `items`, with `minItems` / `maxItems`.
//! - `enum` and `const` (their JSON encodings), `anyOf` / `oneOf` (either branch), `allOf`
//!   (the branches' properties together), a list of types (any of them), `$ref` to
//!   `#/definitions/…` or `#/$defs/…` of the same schema.
//! - Anything else (an empty schema, `true`) is any JSON value.
//!
//! Between tokens the model may write one space: `{"name": "x", "arguments": {}}`. Less
//! freedom means fewer tokens to sample, each of which costs a pass over the vocabulary.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::tools::ToolDefinition;

/// Whether the model must call a tool, or may answer in text instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallGrammar {
    /// Exactly one tool call.
    Required,
    /// One tool call, or text that does not start with `{`.
    Optional,
}

/// The GBNF grammar of one call of one of `tools`: `{"name": …, "arguments": …}`, or (with
/// [`CallGrammar::Optional`]) plain text instead.
pub fn tool_call_grammar(tools: &[&ToolDefinition], mode: CallGrammar) -> String {
    answer_grammar(tools, mode, None)
}

/// The GBNF grammar of an answer: as [`tool_call_grammar`], except that where text may be
/// written (no tools, or [`CallGrammar::Optional`]), with an `output` schema a JSON value
/// valid against it must be written instead (a structured final answer).
pub fn answer_grammar(
    tools: &[&ToolDefinition],
    mode: CallGrammar,
    output: Option<&Value>,
) -> String {
    let mut g = Builder::default();
    let calls: Vec<String> = tools
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            g.root = Some(tool.parameters.clone());
            g.refs.clear();
            let arguments = g.value(&tool.parameters, &format!("args{i}"), 0);
            let body = format!(
                "{} ws \",\" ws {} ws \":\" ws {arguments}",
                literal(&json_text(&Value::from(tool.name.as_ref()))),
                literal("\"arguments\"")
            );
            g.rule(&format!("call{i}"), &body)
        })
        .collect();
    let call_body = if calls.is_empty() {
        // No tool to call: nothing but text fits.
        String::new()
    } else {
        format!(
            "\"{{\" ws {} ws \":\" ws ({}) ws \"}}\"",
            literal("\"name\""),
            calls.join(" | ")
        )
    };
    let answer = |g: &mut Builder| match output {
        Some(schema) => {
            g.root = Some(schema.clone());
            g.refs.clear();
            g.value(schema, "output", 0)
        }
        None => g.text(),
    };
    let root = match (mode, call_body.is_empty()) {
        (CallGrammar::Required, false) => g.rule("call", &call_body),
        (CallGrammar::Optional, false) => {
            let call = g.rule("call", &call_body);
            format!("{call} | {}", answer(&mut g))
        }
        (_, true) => answer(&mut g),
    };
    let mut out = format!("root ::= {root}\n");
    for (name, body) in &g.rules {
        out.push_str(&format!("{name} ::= {body}\n"));
    }
    out
}

/// Rules made so far, by name (reused when the same body comes again).
#[derive(Default)]
struct Builder {
    rules: Vec<(String, String)>,
    by_body: BTreeMap<String, String>,
    /// The schema `$ref`s resolve against.
    root: Option<Value>,
    /// `$ref`s being built (a recursive one refers to its own rule).
    refs: BTreeMap<String, String>,
    /// The rule of any JSON value, once made.
    any: Option<String>,
}

/// How deep schemas may nest before the rest is any JSON value (recursive schemas end).
const MAX_DEPTH: usize = 24;

/// The most digits of a number without an upper bound.
const MAX_DIGITS: usize = 16;

impl Builder {
    /// A rule with this body (an existing one if the body was seen), named after `hint`.
    fn rule(&mut self, hint: &str, body: &str) -> String {
        if let Some(name) = self.by_body.get(body) {
            return name.clone();
        }
        let name = self.fresh(hint);
        self.rules.push((name.clone(), body.to_string()));
        self.by_body.insert(body.to_string(), name.clone());
        name
    }

    /// An unused rule name made of `hint`'s letters and digits.
    fn fresh(&self, hint: &str) -> String {
        let mut base: String = hint
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        base = base.trim_matches('-').to_ascii_lowercase();
        if base.is_empty() || base == "root" {
            base = "r".into();
        }
        let taken =
            |n: &str| self.rules.iter().any(|(r, _)| r == n) || self.refs.values().any(|r| r == n);
        if !taken(&base) {
            return base;
        }
        (2..)
            .map(|i| format!("{base}-{i}"))
            .find(|n| !taken(n))
            .unwrap_or(base)
    }

    /// The whitespace rule.
    fn ws(&mut self) {
        if !self.rules.iter().any(|(n, _)| n == "ws") {
            self.rules.push(("ws".into(), "\" \"?".into()));
        }
    }

    /// Text that is not a call: anything not starting with `{` or whitespace.
    fn text(&mut self) -> String {
        self.rule("text", "[^{ \\t\\r\\n] [^\\x00]*")
    }

    /// A JSON string's characters.
    fn char_rule(&mut self) -> String {
        self.rule(
            "char",
            "[^\"\\\\\\x00-\\x1f] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4})",
        )
    }

    /// Any JSON string.
    fn string(&mut self) -> String {
        let c = self.char_rule();
        self.rule("string", &format!("\"\\\"\" {c}* \"\\\"\""))
    }

    /// Any integer (of at most [`MAX_DIGITS`] digits).
    fn integer(&mut self) -> String {
        self.rule(
            "integer",
            &format!("\"-\"? (\"0\" | [1-9] [0-9]{{0,{}}})", MAX_DIGITS - 1),
        )
    }

    /// Any JSON number.
    fn number(&mut self, signed: bool) -> String {
        let sign = if signed { "\"-\"? " } else { "" };
        let body = format!(
            "{sign}(\"0\" | [1-9] [0-9]{{0,{}}}) (\".\" [0-9]{{1,{MAX_DIGITS}}})? ([eE] [-+]? [0-9]{{1,3}})?",
            MAX_DIGITS - 1
        );
        self.rule(if signed { "number" } else { "unsigned" }, &body)
    }

    /// Any JSON value.
    fn any(&mut self) -> String {
        self.ws();
        if let Some(name) = &self.any {
            return name.clone();
        }
        // Named before its body exists: the body refers to it.
        let name = self.fresh("value");
        self.any = Some(name.clone());
        self.rules.push((name.clone(), String::new()));
        let string = self.string();
        let number = self.number(true);
        let object = format!(
            "\"{{\" ws ({string} ws \":\" ws {name} (ws \",\" ws {string} ws \":\" ws {name})*)? ws \"}}\""
        );
        let array = format!("\"[\" ws ({name} (ws \",\" ws {name})*)? ws \"]\"");
        let body =
            format!("{object} | {array} | {string} | {number} | \"true\" | \"false\" | \"null\"");
        if let Some(rule) = self.rules.iter_mut().find(|(n, _)| *n == name) {
            rule.1 = body;
        }
        name
    }

    /// The expression of a value matching `schema`.
    fn value(&mut self, schema: &Value, hint: &str, depth: usize) -> String {
        self.ws();
        let Some(s) = schema.as_object() else {
            // `true` or anything that is no schema object: any value.
            return self.any();
        };
        if depth > MAX_DEPTH {
            return self.any();
        }
        if let Some(target) = s.get("$ref").and_then(Value::as_str) {
            return self.reference(target, depth);
        }
        if let Some(value) = s.get("const") {
            return literal(&json_text(value));
        }
        if let Some(values) = s.get("enum").and_then(Value::as_array) {
            if values.is_empty() {
                return self.any();
            }
            let alternatives: Vec<String> = values.iter().map(|v| literal(&json_text(v))).collect();
            return self.rule(&format!("{hint}-enum"), &alternatives.join(" | "));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = s.get(key).and_then(Value::as_array) {
                if !branches.is_empty() {
                    let alternatives: Vec<String> = branches
                        .iter()
                        .enumerate()
                        .map(|(i, b)| self.value(b, &format!("{hint}-{i}"), depth + 1))
                        .collect();
                    return self.rule(hint, &alternatives.join(" | "));
                }
            }
        }
        if let Some(parts) = s.get("allOf").and_then(Value::as_array) {
            let merged = merge_all_of(s, parts);
            return self.object(&merged, hint, depth);
        }
        match s.get("type") {
            Some(Value::Array(types)) => {
                let alternatives: Vec<String> = types
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|t| self.typed(t, s, &format!("{hint}-{t}"), depth))
                    .collect();
                if alternatives.is_empty() {
                    return self.any();
                }
                self.rule(hint, &alternatives.join(" | "))
            }
            Some(Value::String(t)) => self.typed(t, s, hint, depth),
            _ if s.contains_key("properties") => self.object(s, hint, depth),
            _ if s.contains_key("items") => self.typed("array", s, hint, depth),
            _ => self.any(),
        }
    }

    /// The expression of a value of type `t` under the keywords of `s`.
    fn typed(&mut self, t: &str, s: &Map<String, Value>, hint: &str, depth: usize) -> String {
        match t {
            "string" => {
                let min = s.get("minLength").and_then(Value::as_u64);
                let max = s.get("maxLength").and_then(Value::as_u64);
                if min.is_none() && max.is_none() {
                    return self.string();
                }
                let c = self.char_rule();
                let body = format!(
                    "\"\\\"\" {c}{{{},{}}} \"\\\"\"",
                    min.unwrap_or(0),
                    max.map(|m| m.to_string()).unwrap_or_default()
                );
                self.rule(hint, &body)
            }
            "integer" => match int_bounds(s) {
                (None, None) => self.integer(),
                // No integer fits empty bounds: any integer is written, and the tool's own
                // validation says what is wrong with it.
                (min, max) => match int_range(min, max) {
                    Some(body) => self.rule(hint, &body),
                    None => self.integer(),
                },
            },
            "number" => {
                let unsigned = ["minimum", "exclusiveMinimum"]
                    .iter()
                    .any(|k| s.get(*k).and_then(Value::as_f64).is_some_and(|m| m >= 0.0));
                self.number(!unsigned)
            }
            "boolean" => self.rule("boolean", "\"true\" | \"false\""),
            "null" => "\"null\"".into(),
            "array" => {
                let item = match s.get("items") {
                    Some(items) => self.value(items, &format!("{hint}-item"), depth + 1),
                    None => self.any(),
                };
                let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0);
                let max = s.get("maxItems").and_then(Value::as_u64);
                let body = match (min, max) {
                    (_, Some(0)) => "\"[\" ws \"]\"".to_string(),
                    (0, None) => format!("\"[\" ws ({item} (ws \",\" ws {item})*)? ws \"]\""),
                    (0, Some(max)) => format!(
                        "\"[\" ws ({item} (ws \",\" ws {item}){{0,{}}})? ws \"]\"",
                        max - 1
                    ),
                    (min, max) => format!(
                        "\"[\" ws {item} (ws \",\" ws {item}){{{},{}}} ws \"]\"",
                        min - 1,
                        max.map(|m| (m.max(min) - 1).to_string())
                            .unwrap_or_default()
                    ),
                };
                self.rule(hint, &body)
            }
            "object" => self.object(s, hint, depth),
            _ => self.any(),
        }
    }

    /// An object of `s`'s properties.
    fn object(&mut self, s: &Map<String, Value>, hint: &str, depth: usize) -> String {
        let properties = s.get("properties").and_then(Value::as_object);
        let Some(properties) = properties.filter(|p| !p.is_empty()) else {
            // No properties: a map of what `additionalProperties` allows when it says (a
            // schema, or `true`: anything), else nothing: a tool without arguments takes
            // `{}`, and a small model is not left to invent keys.
            let body = match s.get("additionalProperties") {
                None | Some(Value::Bool(false)) => "\"{\" ws \"}\"".to_string(),
                extra => {
                    let value = match extra {
                        Some(schema @ Value::Object(_)) => {
                            self.value(schema, &format!("{hint}-value"), depth + 1)
                        }
                        _ => self.any(),
                    };
                    let key = self.string();
                    format!(
                        "\"{{\" ws ({key} ws \":\" ws {value} (ws \",\" ws {key} ws \":\" ws {value})*)? ws \"}}\""
                    )
                }
            };
            return self.rule(hint, &body);
        };
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let pair = |g: &mut Self, name: &str, schema: &Value| {
            let value = g.value(schema, &format!("{hint}-{name}"), depth + 1);
            g.rule(
                &format!("{hint}-{name}-kv"),
                &format!(
                    "{} ws \":\" ws {value}",
                    literal(&json_text(&Value::from(name)))
                ),
            )
        };
        let mut fixed = Vec::new();
        for name in &required {
            // A required property the schema does not describe may hold anything.
            let schema = properties.get(*name).unwrap_or(&Value::Bool(true));
            fixed.push(pair(self, name, schema));
        }
        let optional: Vec<String> = properties
            .iter()
            .filter(|(name, _)| !required.contains(&name.as_str()))
            .map(|(name, schema)| pair(self, name, schema))
            .collect();
        // The optional pairs, each present or not, in order: `rest(i)` follows a written pair
        // (each present one after a comma); `first(i)` starts the object.
        // The optional pairs, each present or not, in order. `rests[i]`: those from `i` on,
        // after a written pair (each one present after a comma); `first`: those from `i` on
        // when none is written yet (so the first present one has no comma).
        let n = optional.len();
        let mut rests: Vec<Option<String>> = vec![None; n + 1];
        for i in (0..n).rev() {
            let tail = rests[i + 1]
                .as_ref()
                .map(|r| format!(" {r}"))
                .unwrap_or_default();
            let body = format!("(ws \",\" ws {})?{tail}", optional[i]);
            rests[i] = Some(self.rule(&format!("{hint}-rest{i}"), &body));
        }
        let body = if fixed.is_empty() {
            let mut first: Option<String> = None;
            for i in (0..n).rev() {
                let start = match &rests[i + 1] {
                    Some(r) => format!("{} {r}", optional[i]),
                    None => optional[i].clone(),
                };
                let body = match &first {
                    Some(f) => format!("{start} | {f}"),
                    None => start,
                };
                first = Some(self.rule(&format!("{hint}-first{i}"), &body));
            }
            match first {
                Some(first) => format!("\"{{\" ws ({first})? ws \"}}\""),
                None => "\"{\" ws \"}\"".to_string(),
            }
        } else {
            let tail = rests[0]
                .as_ref()
                .map(|r| format!(" {r}"))
                .unwrap_or_default();
            format!("\"{{\" ws {}{tail} ws \"}}\"", fixed.join(" ws \",\" ws "))
        };
        self.rule(hint, &body)
    }

    /// A `$ref` to a definition of the root schema.
    fn reference(&mut self, target: &str, depth: usize) -> String {
        if let Some(name) = self.refs.get(target) {
            return name.clone();
        }
        let path = target
            .strip_prefix("#/definitions/")
            .map(|n| ("definitions", n))
            .or_else(|| target.strip_prefix("#/$defs/").map(|n| ("$defs", n)));
        let schema = path.and_then(|(section, name)| {
            self.root
                .as_ref()
                .and_then(|root| root.get(section))
                .and_then(|defs| defs.get(name))
                .cloned()
        });
        let Some(schema) = schema else {
            return self.any();
        };
        let name = self.fresh(&format!("ref-{}", path.map(|p| p.1).unwrap_or("x")));
        self.refs.insert(target.to_string(), name.clone());
        let body = self.value(&schema, &format!("{name}-def"), depth + 1);
        self.rules.push((name.clone(), body));
        name
    }
}

/// `allOf`'s branches as one object schema: their properties and required names together.
fn merge_all_of(s: &Map<String, Value>, parts: &[Value]) -> Map<String, Value> {
    let mut properties = Map::new();
    let mut required: Vec<Value> = Vec::new();
    for part in std::iter::once(s).chain(parts.iter().filter_map(Value::as_object)) {
        if let Some(p) = part.get("properties").and_then(Value::as_object) {
            for (k, v) in p {
                properties.insert(k.clone(), v.clone());
            }
        }
        if let Some(r) = part.get("required").and_then(Value::as_array) {
            for name in r {
                if !required.contains(name) {
                    required.push(name.clone());
                }
            }
        }
    }
    let mut merged = Map::new();
    merged.insert("type".into(), Value::from("object"));
    merged.insert("properties".into(), Value::Object(properties));
    merged.insert("required".into(), Value::Array(required));
    merged
}

/// JSON text of a value, compact.
fn json_text(value: &Value) -> String {
    value.to_string()
}

/// A GBNF string literal of `text`.
pub(crate) fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The integer bounds of a schema (exclusive bounds moved in by one; fractional bounds
/// rounded inwards).
fn int_bounds(s: &Map<String, Value>) -> (Option<i64>, Option<i64>) {
    let get = |k: &str| s.get(k).and_then(Value::as_f64).filter(|v| v.is_finite());
    let clamp = |v: f64| v.clamp(-9e15, 9e15);
    let min = match (get("minimum"), get("exclusiveMinimum")) {
        (Some(a), Some(b)) => Some(clamp(a).ceil().max(clamp(b).floor() + 1.0)),
        (Some(a), None) => Some(clamp(a).ceil()),
        (None, Some(b)) => Some(clamp(b).floor() + 1.0),
        (None, None) => None,
    };
    let max = match (get("maximum"), get("exclusiveMaximum")) {
        (Some(a), Some(b)) => Some(clamp(a).floor().min(clamp(b).ceil() - 1.0)),
        (Some(a), None) => Some(clamp(a).floor()),
        (None, Some(b)) => Some(clamp(b).ceil() - 1.0),
        (None, None) => None,
    };
    (min.map(|v| v as i64), max.map(|v| v as i64))
}

/// A GBNF expression of the integers in `[min, max]` (either end may be open), written without
/// leading zeros; `None` when the range is empty.
pub(crate) fn int_range(min: Option<i64>, max: Option<i64>) -> Option<String> {
    if let (Some(lo), Some(hi)) = (min, max) {
        if lo > hi {
            return None;
        }
    }
    let mut alternatives = Vec::new();
    // Negative values: a minus sign and the magnitudes in range.
    if min.is_none_or(|m| m < 0) {
        let lo = max.map_or(1, |m| if m < 0 { m.unsigned_abs() } else { 1 });
        let hi = min.map(i64::unsigned_abs);
        if let Some(body) = natural_range(lo, hi) {
            alternatives.push(format!("\"-\" ({body})"));
        }
    }
    // Zero and positive values.
    if max.is_none_or(|m| m >= 0) {
        let lo = min.map_or(0, |m| m.max(0).unsigned_abs());
        let hi = max.map(i64::unsigned_abs);
        if let Some(body) = natural_range(lo, hi) {
            alternatives.push(body);
        }
    }
    if alternatives.is_empty() {
        None
    } else {
        Some(alternatives.join(" | "))
    }
}

/// The numbers in `[lo, hi]` (`hi` open: up to [`MAX_DIGITS`] digits), without leading zeros.
fn natural_range(lo: u64, hi: Option<u64>) -> Option<String> {
    let cap = 10u64.pow(MAX_DIGITS as u32) - 1;
    let hi_value = hi.unwrap_or(cap).min(cap);
    if lo > hi_value {
        return None;
    }
    let mut alternatives = Vec::new();
    let digits = |n: u64| n.to_string().len();
    for d in digits(lo)..=digits(hi_value) {
        let start = if d == digits(lo) {
            lo
        } else {
            10u64.pow(d as u32 - 1)
        };
        let end = if d == digits(hi_value) {
            hi_value
        } else {
            10u64.pow(d as u32) - 1
        };
        same_length(
            start.to_string().as_bytes(),
            end.to_string().as_bytes(),
            "",
            &mut alternatives,
        );
    }
    Some(alternatives.join(" | "))
}

/// The numbers between two digit strings of one length, as sequences of digit classes,
/// each prefixed with `prefix`.
fn same_length(lo: &[u8], hi: &[u8], prefix: &str, out: &mut Vec<String>) {
    let join = |a: &str, b: &str| match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a} {b}"),
    };
    let Some((&l, lo_rest)) = lo.split_first() else {
        out.push(prefix.to_string());
        return;
    };
    let (&h, hi_rest) = hi.split_first().unwrap_or((&l, &[]));
    let n = lo_rest.len();
    let any = |n: usize| match n {
        0 => String::new(),
        1 => "[0-9]".to_string(),
        n => format!("[0-9]{{{n}}}"),
    };
    let class = |a: u8, b: u8| {
        if a == b {
            format!("\"{}\"", a as char)
        } else {
            format!("[{}-{}]", a as char, b as char)
        }
    };
    if l == h {
        same_length(lo_rest, hi_rest, &join(prefix, &class(l, l)), out);
        return;
    }
    let lo_all_zero = lo_rest.iter().all(|&c| c == b'0');
    let hi_all_nine = hi_rest.iter().all(|&c| c == b'9');
    // The low digit's own numbers, unless they are all of them (then the middle has them).
    let first = if lo_all_zero { l } else { l + 1 };
    if !lo_all_zero {
        let nines = vec![b'9'; n];
        same_length(lo_rest, &nines, &join(prefix, &class(l, l)), out);
    }
    let last = if hi_all_nine { h } else { h - 1 };
    if first <= last {
        out.push(join(&join(prefix, &class(first, last)), &any(n)));
    }
    if !hi_all_nine {
        let zeros = vec![b'0'; n];
        same_length(&zeros, hi_rest, &join(prefix, &class(h, h)), out);
    }
}
