//! The tool-call grammar built from JSON Schemas (`llm::grammar`), checked by a GBNF
//! recognizer: for every tool of the catalog, generated valid calls are accepted (and pass
//! the tool's own argument validation), and calls that break the schema are rejected.

#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};

use draftsmith::commands::Category;
use draftsmith::llm::grammar::{tool_call_grammar, CallGrammar};
use draftsmith::tools::validate::check_args;
use draftsmith::tools::{ToolDefinition, ToolRegistry};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Value};

/// A recognizer of the GBNF the grammar builder writes: rules of one line each, literals,
/// character classes (negated, ranges, escapes), groups, alternatives and the postfix
/// operators `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}`. It accepts exactly the strings the
/// grammar derives (every alternative is tried: no ordered choice).
mod gbnf {
    use super::*;

    #[derive(Debug, Clone)]
    pub enum Node {
        Lit(Vec<char>),
        Class {
            negated: bool,
            ranges: Vec<(char, char)>,
        },
        Ref(String),
        Seq(Vec<Node>),
        Alt(Vec<Node>),
        Rep(Box<Node>, usize, Option<usize>),
    }

    pub struct Grammar {
        rules: BTreeMap<String, Node>,
    }

    struct Parser<'a> {
        chars: Vec<char>,
        at: usize,
        line: &'a str,
    }

    impl Parser<'_> {
        fn peek(&self) -> Option<char> {
            self.chars.get(self.at).copied()
        }

        fn skip_space(&mut self) {
            while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
                self.at += 1;
            }
        }

        fn fail<T>(&self, what: &str) -> Result<T, String> {
            Err(format!("{what} at {} in: {}", self.at, self.line))
        }

        fn hex(&mut self, n: usize) -> Result<char, String> {
            let digits: String = self.chars[self.at..(self.at + n).min(self.chars.len())]
                .iter()
                .collect();
            self.at += n;
            u32::from_str_radix(&digits, 16)
                .ok()
                .and_then(char::from_u32)
                .map_or_else(|| self.fail("bad hex escape"), Ok)
        }

        fn escaped(&mut self) -> Result<char, String> {
            let Some(c) = self.peek() else {
                return self.fail("escape at end");
            };
            self.at += 1;
            Ok(match c {
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                'x' => return self.hex(2),
                'u' => return self.hex(4),
                'U' => return self.hex(8),
                other => other,
            })
        }

        fn alternatives(&mut self) -> Result<Node, String> {
            let mut alts = vec![self.sequence()?];
            loop {
                self.skip_space();
                if self.peek() == Some('|') {
                    self.at += 1;
                    alts.push(self.sequence()?);
                } else {
                    break;
                }
            }
            Ok(if alts.len() == 1 {
                alts.remove(0)
            } else {
                Node::Alt(alts)
            })
        }

        fn sequence(&mut self) -> Result<Node, String> {
            let mut items = Vec::new();
            loop {
                self.skip_space();
                let item = match self.peek() {
                    None | Some('|') | Some(')') => break,
                    Some('"') => {
                        self.at += 1;
                        let mut lit = Vec::new();
                        loop {
                            match self.peek() {
                                None => return self.fail("unterminated literal"),
                                Some('"') => {
                                    self.at += 1;
                                    break;
                                }
                                Some('\\') => {
                                    self.at += 1;
                                    lit.push(self.escaped()?);
                                }
                                Some(c) => {
                                    self.at += 1;
                                    lit.push(c);
                                }
                            }
                        }
                        Node::Lit(lit)
                    }
                    Some('[') => {
                        self.at += 1;
                        let negated = self.peek() == Some('^');
                        if negated {
                            self.at += 1;
                        }
                        let mut ranges = Vec::new();
                        loop {
                            let start = match self.peek() {
                                None => return self.fail("unterminated class"),
                                Some(']') => {
                                    self.at += 1;
                                    break;
                                }
                                Some('\\') => {
                                    self.at += 1;
                                    self.escaped()?
                                }
                                Some(c) => {
                                    self.at += 1;
                                    c
                                }
                            };
                            let end = if self.peek() == Some('-')
                                && self.chars.get(self.at + 1).is_some_and(|c| *c != ']')
                            {
                                self.at += 1;
                                match self.peek() {
                                    Some('\\') => {
                                        self.at += 1;
                                        self.escaped()?
                                    }
                                    Some(c) => {
                                        self.at += 1;
                                        c
                                    }
                                    None => return self.fail("unterminated range"),
                                }
                            } else {
                                start
                            };
                            ranges.push((start, end));
                        }
                        Node::Class { negated, ranges }
                    }
                    Some('(') => {
                        self.at += 1;
                        let inner = self.alternatives()?;
                        self.skip_space();
                        if self.peek() != Some(')') {
                            return self.fail("unclosed group");
                        }
                        self.at += 1;
                        inner
                    }
                    Some('.') => {
                        self.at += 1;
                        Node::Class {
                            negated: true,
                            ranges: vec![],
                        }
                    }
                    Some(c) if c.is_ascii_alphanumeric() || c == '-' => {
                        let start = self.at;
                        while self
                            .peek()
                            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
                        {
                            self.at += 1;
                        }
                        Node::Ref(self.chars[start..self.at].iter().collect())
                    }
                    Some(_) => return self.fail("unexpected character"),
                };
                let item = match self.peek() {
                    Some('*') => {
                        self.at += 1;
                        Node::Rep(Box::new(item), 0, None)
                    }
                    Some('+') => {
                        self.at += 1;
                        Node::Rep(Box::new(item), 1, None)
                    }
                    Some('?') => {
                        self.at += 1;
                        Node::Rep(Box::new(item), 0, Some(1))
                    }
                    Some('{') => {
                        let close = self.chars[self.at..]
                            .iter()
                            .position(|c| *c == '}')
                            .map_or_else(|| self.fail("unclosed {"), Ok)?;
                        let inside: String =
                            self.chars[self.at + 1..self.at + close].iter().collect();
                        self.at += close + 1;
                        let (min, max) = match inside.split_once(',') {
                            None => {
                                let n = inside.trim().parse().map_err(|_| "bad count")?;
                                (n, Some(n))
                            }
                            Some((a, b)) => (
                                a.trim().parse().map_err(|_| "bad min")?,
                                if b.trim().is_empty() {
                                    None
                                } else {
                                    Some(b.trim().parse().map_err(|_| "bad max")?)
                                },
                            ),
                        };
                        Node::Rep(Box::new(item), min, max)
                    }
                    _ => item,
                };
                items.push(item);
            }
            Ok(if items.len() == 1 {
                items.remove(0)
            } else {
                Node::Seq(items)
            })
        }
    }

    impl Grammar {
        pub fn parse(text: &str) -> Result<Grammar, String> {
            let mut rules = BTreeMap::new();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let (name, body) = line
                    .split_once(" ::= ")
                    .ok_or_else(|| format!("not a rule: {line}"))?;
                let mut parser = Parser {
                    chars: body.chars().collect(),
                    at: 0,
                    line,
                };
                let node = parser.alternatives()?;
                if parser.at != parser.chars.len() {
                    return parser.fail("trailing input");
                }
                if rules.insert(name.trim().to_string(), node).is_some() {
                    return Err(format!("rule {name} defined twice"));
                }
            }
            let grammar = Grammar { rules };
            for node in grammar.rules.values() {
                grammar.check_refs(node)?;
            }
            if !grammar.rules.contains_key("root") {
                return Err("no root rule".into());
            }
            Ok(grammar)
        }

        fn check_refs(&self, node: &Node) -> Result<(), String> {
            match node {
                Node::Ref(name) if !self.rules.contains_key(name) => {
                    Err(format!("undefined rule {name}"))
                }
                Node::Seq(items) | Node::Alt(items) => {
                    items.iter().try_for_each(|n| self.check_refs(n))
                }
                Node::Rep(inner, _, _) => self.check_refs(inner),
                _ => Ok(()),
            }
        }

        pub fn accepts(&self, input: &str) -> bool {
            let chars: Vec<char> = input.chars().collect();
            let mut memo = BTreeMap::new();
            self.ends(&Node::Ref("root".into()), &chars, 0, &mut memo)
                .contains(&chars.len())
        }

        fn ends(
            &self,
            node: &Node,
            input: &[char],
            at: usize,
            memo: &mut BTreeMap<(String, usize), BTreeSet<usize>>,
        ) -> BTreeSet<usize> {
            match node {
                Node::Lit(lit) => {
                    if input.len() >= at + lit.len() && input[at..at + lit.len()] == lit[..] {
                        BTreeSet::from([at + lit.len()])
                    } else {
                        BTreeSet::new()
                    }
                }
                Node::Class { negated, ranges } => match input.get(at) {
                    Some(c) if ranges.iter().any(|(a, b)| a <= c && c <= b) != *negated => {
                        BTreeSet::from([at + 1])
                    }
                    _ => BTreeSet::new(),
                },
                Node::Ref(name) => {
                    let key = (name.clone(), at);
                    if let Some(done) = memo.get(&key) {
                        return done.clone();
                    }
                    // A rule met again at the same place before it is done derives nothing
                    // new there (the grammars built have no left recursion).
                    memo.insert(key.clone(), BTreeSet::new());
                    let out = self.ends(&self.rules[name], input, at, memo);
                    memo.insert(key, out.clone());
                    out
                }
                Node::Seq(items) => {
                    let mut here = BTreeSet::from([at]);
                    for item in items {
                        let mut next = BTreeSet::new();
                        for p in here {
                            next.extend(self.ends(item, input, p, memo));
                        }
                        here = next;
                        if here.is_empty() {
                            break;
                        }
                    }
                    here
                }
                Node::Alt(alts) => alts
                    .iter()
                    .flat_map(|a| self.ends(a, input, at, memo))
                    .collect(),
                Node::Rep(inner, min, max) => {
                    let mut out = BTreeSet::new();
                    let mut frontier = BTreeSet::from([at]);
                    let mut seen = BTreeSet::new();
                    let mut count = 0;
                    loop {
                        if count >= *min {
                            out.extend(frontier.iter().copied());
                        }
                        if max.is_some_and(|m| count >= m) || frontier.is_empty() {
                            break;
                        }
                        let mut next = BTreeSet::new();
                        for p in &frontier {
                            next.extend(self.ends(inner, input, *p, memo));
                        }
                        count += 1;
                        if count > *min {
                            // Past the minimum, only new positions can add anything.
                            next.retain(|p| seen.insert(*p));
                        }
                        frontier = next;
                    }
                    out
                }
            }
        }
    }
}

use gbnf::Grammar;

/// JSON text with object keys in a chosen order, written compactly or with a space after each
/// comma and colon.
#[derive(Debug, Clone)]
enum J {
    Plain(Value),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl J {
    fn value(&self) -> Value {
        match self {
            J::Plain(v) => v.clone(),
            J::Arr(items) => Value::Array(items.iter().map(J::value).collect()),
            J::Obj(pairs) => {
                Value::Object(pairs.iter().map(|(k, v)| (k.clone(), v.value())).collect())
            }
        }
    }

    fn write(&self, spaced: bool, out: &mut String) {
        let (comma, colon) = if spaced { (", ", ": ") } else { (",", ":") };
        match self {
            J::Plain(v) => out.push_str(&v.to_string()),
            J::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(comma);
                    }
                    item.write(spaced, out);
                }
                out.push(']');
            }
            J::Obj(pairs) => {
                out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(comma);
                    }
                    out.push_str(&Value::from(k.as_str()).to_string());
                    out.push_str(colon);
                    v.write(spaced, out);
                }
                out.push('}');
            }
        }
    }

    fn text(&self, spaced: bool) -> String {
        let mut out = String::new();
        self.write(spaced, &mut out);
        out
    }
}

/// Valid values of `schema`, objects with their keys in the grammar's order (the required
/// ones first, then the optional ones in `properties` order).
fn sample(schema: &Value) -> BoxedStrategy<J> {
    let Some(s) = schema.as_object() else {
        return any_json();
    };
    if let Some(c) = s.get("const") {
        return Just(J::Plain(c.clone())).boxed();
    }
    if let Some(values) = s.get("enum").and_then(Value::as_array) {
        return proptest::sample::select(values.clone())
            .prop_map(J::Plain)
            .boxed();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = s.get(key).and_then(Value::as_array) {
            let strategies: Vec<BoxedStrategy<J>> = branches.iter().map(sample).collect();
            return proptest::strategy::Union::new(strategies).boxed();
        }
    }
    match s.get("type") {
        Some(Value::Array(types)) => {
            let strategies: Vec<BoxedStrategy<J>> = types
                .iter()
                .map(|t| {
                    let mut one = s.clone();
                    one.insert("type".into(), t.clone());
                    sample(&Value::Object(one))
                })
                .collect();
            proptest::strategy::Union::new(strategies).boxed()
        }
        Some(Value::String(t)) => match t.as_str() {
            "string" => {
                let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0);
                let max = s
                    .get("maxLength")
                    .and_then(Value::as_u64)
                    .unwrap_or(min + 12);
                proptest::string::string_regex(&format!(
                    "[a-zA-Z0-9 .,'\"\\\\\n\té—]{{{min},{max}}}"
                ))
                .expect("regex")
                .prop_map(|s| J::Plain(Value::from(s)))
                .boxed()
            }
            "integer" => {
                let min = s
                    .get("minimum")
                    .and_then(Value::as_i64)
                    .unwrap_or(-1_000_000);
                let max = s
                    .get("maximum")
                    .and_then(Value::as_i64)
                    .unwrap_or(min.max(0) + 1_000_000);
                (min..=max).prop_map(|n| J::Plain(json!(n))).boxed()
            }
            "number" => {
                let min = s.get("minimum").and_then(Value::as_f64).unwrap_or(-1.0e6);
                (min..min + 2.0e6).prop_map(|n| J::Plain(json!(n))).boxed()
            }
            "boolean" => any::<bool>().prop_map(|b| J::Plain(json!(b))).boxed(),
            "null" => Just(J::Plain(Value::Null)).boxed(),
            "array" => {
                let item = s.get("items").map_or_else(any_json, sample);
                let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
                let max = s
                    .get("maxItems")
                    .and_then(Value::as_u64)
                    .map_or(min + 3, |m| m as usize);
                proptest::collection::vec(item, min..=max)
                    .prop_map(J::Arr)
                    .boxed()
            }
            "object" => object(s),
            _ => any_json(),
        },
        _ if s.contains_key("properties") => object(s),
        _ => any_json(),
    }
}

fn object(s: &serde_json::Map<String, Value>) -> BoxedStrategy<J> {
    let empty = serde_json::Map::new();
    let properties = s
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<String> = s
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut parts: Vec<BoxedStrategy<Option<(String, J)>>> = Vec::new();
    for name in &required {
        let schema = properties.get(name).cloned().unwrap_or(Value::Bool(true));
        let name = name.clone();
        parts.push(
            sample(&schema)
                .prop_map(move |v| Some((name.clone(), v)))
                .boxed(),
        );
    }
    for (name, schema) in properties {
        if required.contains(name) {
            continue;
        }
        let name = name.clone();
        parts.push(
            proptest::option::of(sample(schema))
                .prop_map(move |v| v.map(|v| (name.clone(), v)))
                .boxed(),
        );
    }
    parts
        .prop_map(|pairs| J::Obj(pairs.into_iter().flatten().collect()))
        .boxed()
}

fn any_json() -> BoxedStrategy<J> {
    prop_oneof![
        Just(J::Plain(Value::Null)),
        any::<bool>().prop_map(|b| J::Plain(json!(b))),
        (-1000i64..1000).prop_map(|n| J::Plain(json!(n))),
        "[a-z ]{0,8}".prop_map(|s| J::Plain(json!(s))),
    ]
    .boxed()
}

/// The call as a model writes it.
fn call_text(name: &str, arguments: &J, spaced: bool) -> String {
    J::Obj(vec![
        ("name".into(), J::Plain(json!(name))),
        ("arguments".into(), arguments.clone()),
    ])
    .text(spaced)
}

fn registry() -> ToolRegistry {
    ToolRegistry::standard()
}

fn grammar_of(tools: &[&ToolDefinition], mode: CallGrammar) -> Grammar {
    let text = tool_call_grammar(tools, mode);
    Grammar::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn every_catalog_tool_accepts_generated_valid_calls() {
    let registry = registry();
    assert!(registry.definitions().len() >= 80);
    for tool in registry.definitions() {
        let grammar = grammar_of(&[tool], CallGrammar::Required);
        let mut runner = TestRunner::new(Config {
            cases: 12,
            failure_persistence: None,
            ..Config::default()
        });
        runner
            .run(
                &(sample(&tool.parameters), any::<bool>()),
                |(args, spaced)| {
                    let value = args.value();
                    let object = value.as_object().expect("arguments are an object");
                    // The sample is valid by the tool's own validation…
                    prop_assert!(
                        check_args(&tool.parameters, object).is_ok(),
                        "{}: generated {value} is invalid: {:?}",
                        tool.name,
                        check_args(&tool.parameters, object)
                    );
                    // …and the grammar lets the model write it.
                    let text = call_text(&tool.name, &args, spaced);
                    prop_assert!(grammar.accepts(&text), "{} rejects {text}", tool.name);
                    Ok(())
                },
            )
            .unwrap_or_else(|e| panic!("{}: {e}", tool.name));
    }
}

#[test]
fn a_grammar_of_several_tools_accepts_a_call_of_each_and_nothing_else() {
    let registry = registry();
    let tools: Vec<&ToolDefinition> = registry.toolset("quick").expect("quick toolset");
    assert!(tools.len() > 3);
    let grammar = grammar_of(&tools, CallGrammar::Required);
    let mut runner = TestRunner::new(Config {
        cases: 6,
        failure_persistence: None,
        ..Config::default()
    });
    for tool in &tools {
        runner
            .run(&sample(&tool.parameters), |args| {
                prop_assert!(grammar.accepts(&call_text(&tool.name, &args, false)));
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{}: {e}", tool.name));
    }
    // A tool that is not offered, text, and an empty answer are not calls.
    let other = registry
        .definitions()
        .iter()
        .find(|d| !tools.iter().any(|t| t.name == d.name))
        .expect("a tool outside the quick toolset");
    assert!(!grammar.accepts(&format!(r#"{{"name":"{}","arguments":{{}}}}"#, other.name)));
    assert!(!grammar.accepts("Hello, writer."));
    assert!(!grammar.accepts(""));
}

/// A schema with every shape the catalog uses: enums, arrays of objects, nested objects,
/// optional fields, integers with bounds, booleans, and a map of free keys.
fn tool(name: &str, parameters: Value) -> ToolDefinition {
    ToolDefinition {
        name: name.to_string().into(),
        description: "A test tool.".into(),
        category: Category::Knowledge,
        reversible: false,
        read_only: true,
        asynchronous: false,
        parameters,
    }
}

fn shapes_tool() -> ToolDefinition {
    tool(
        "shape_test",
        json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "minimum": 1, "maximum": 250},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]},
                "extra": {"type": "object", "additionalProperties": {"type": "string"}},
                "flag": {"type": "boolean", "default": false},
                "mode": {"type": "string", "enum": ["fast", "slow", "say \"hi\""]},
                "offset": {"type": "integer", "minimum": -40, "maximum": 7},
                "people": {"type": "array", "minItems": 1, "items": {
                    "type": "object",
                    "properties": {
                        "hp": {"type": "integer", "minimum": 0},
                        "name": {"type": "string", "minLength": 1}
                    },
                    "required": ["name", "hp"]
                }},
                "place": {"type": "object", "properties": {
                    "city": {"type": "string"},
                    "floor": {"type": ["integer", "null"]}
                }},
                "ratio": {"type": "number", "minimum": 0},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3}
            },
            "required": ["mode", "count"]
        }),
    )
}

#[test]
fn generated_samples_of_every_shape_are_accepted() {
    let tool = shapes_tool();
    let grammar = grammar_of(&[&tool], CallGrammar::Required);
    proptest!(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() },
    |(args in sample(&tool.parameters), spaced in any::<bool>())| {
        let value = args.value();
        prop_assert!(check_args(&tool.parameters, value.as_object().unwrap()).is_ok(), "{value}");
        let text = call_text("shape_test", &args, spaced);
        prop_assert!(grammar.accepts(&text), "rejected: {text}");
    });
}

#[test]
fn calls_that_break_the_schema_are_rejected() {
    let tool = shapes_tool();
    let grammar = grammar_of(&[&tool], CallGrammar::Required);
    let call = |args: &str| format!(r#"{{"name": "shape_test", "arguments": {args}}}"#);
    // The valid baseline, then one thing wrong at a time.
    assert!(grammar.accepts(&call(r#"{"mode": "fast", "count": 3}"#)));
    assert!(grammar.accepts(&call(
        r#"{"mode": "say \"hi\"", "count": 250, "either": 5, "extra": {"k": "v"}, "offset": -40, "people": [{"name": "Ada", "hp": 0}], "place": {"floor": null}, "ratio": 0.5}"#
    )));
    for bad in [
        r#"{"mode": "medium", "count": 3}"#,            // not in the enum
        r#"{"count": 3}"#,                              // a required field missing
        r#"{"mode": "fast"}"#,                          // the other one missing
        r#"{"mode": "fast", "count": 0}"#,              // below the minimum
        r#"{"mode": "fast", "count": 251}"#,            // above the maximum
        r#"{"mode": "fast", "count": 1000}"#,           // far above it
        r#"{"mode": "fast", "count": "3"}"#,            // a string for an integer
        r#"{"mode": "fast", "count": 3.5}"#,            // a fraction for an integer
        r#"{"mode": "fast", "count": 3, "offset": 8}"#, // above a negative range's max
        r#"{"mode": "fast", "count": 3, "offset": -41}"#,
        r#"{"mode": "fast", "count": 3, "ratio": -1}"#, // a sign where the minimum is 0
        r#"{"mode": "fast", "count": 3, "flag": "yes"}"#,
        r#"{"mode": "fast", "count": 3, "tags": ["a", "b", "c", "d"]}"#, // too many items
        r#"{"mode": "fast", "count": 3, "people": []}"#,                 // too few items
        r#"{"mode": "fast", "count": 3, "people": [{"name": "Ada"}]}"#,  // nested required
        r#"{"mode": "fast", "count": 3, "people": [{"name": "", "hp": 1}]}"#, // too short
        r#"{"mode": "fast", "count": 3, "place": {"floor": "2"}}"#,
        r#"{"mode": "fast", "count": 3, "extra": {"k": 1}}"#,
        r#"{"mode": "fast", "count": 3, "either": -1}"#,
        r#"{"mode": "fast", "count": 3, "unknown": 1}"#, // a property the schema lacks
        r#"{"mode": "fast", "count": 3,}"#,              // a trailing comma
        r#"{"mode": "fast" "count": 3}"#,                // a missing comma
        r#"{"mode": "fast", "count": 3"#,                // cut off
        r#"["fast", 3]"#,                                // not an object
    ] {
        assert!(!grammar.accepts(&call(bad)), "accepted {bad}");
    }
    // The envelope: only `name` then `arguments`, only this tool's name, nothing after.
    assert!(
        !grammar.accepts(r#"{"name": "other_tool", "arguments": {"mode": "fast", "count": 3}}"#)
    );
    assert!(
        !grammar.accepts(r#"{"arguments": {"mode": "fast", "count": 3}, "name": "shape_test"}"#)
    );
    assert!(!grammar.accepts(&format!(
        "{} and more",
        call(r#"{"mode": "fast", "count": 3}"#)
    )));
    assert!(!grammar
        .accepts(r#"Sure! {"name": "shape_test", "arguments": {"mode": "fast", "count": 3}}"#));
}

#[test]
fn an_optional_call_allows_plain_text_instead() {
    let shapes = shapes_tool();
    let grammar = grammar_of(&[&shapes], CallGrammar::Optional);
    assert!(grammar.accepts("The chapter reads well."));
    assert!(grammar.accepts("Line one\nline two {with braces}"));
    assert!(grammar.accepts(r#"{"name": "shape_test", "arguments": {"mode": "slow", "count": 9}}"#));
    // Text cannot start like a call that breaks the schema.
    assert!(!grammar.accepts(r#"{"name": "shape_test", "arguments": {"mode": "slow"}}"#));
    assert!(!grammar.accepts(" leading space"));
    // A tool without arguments takes exactly `{}`.
    let bare = tool("bare", json!({"type": "object"}));
    let grammar_bare = grammar_of(&[&bare], CallGrammar::Required);
    assert!(grammar_bare.accepts(r#"{"name": "bare", "arguments": {}}"#));
    assert!(!grammar_bare.accepts(r#"{"name": "bare", "arguments": {"x": 1}}"#));
    // With no tool at all, only text fits.
    let none = grammar_of(&[], CallGrammar::Required);
    assert!(none.accepts("Just text."));
    assert!(!none.accepts("{}"));
}

#[test]
fn integer_ranges_are_exact() {
    for (min, max) in [
        (0, 0),
        (0, 9),
        (1, 250),
        (7, 7),
        (-40, 7),
        (-300, -12),
        (99, 1001),
        (0, 100_000),
        (-5, 5),
    ] {
        let tool = tool(
            "n",
            json!({"type": "object", "properties": {
                "v": {"type": "integer", "minimum": min, "maximum": max}}, "required": ["v"]}),
        );
        let grammar = grammar_of(&[&tool], CallGrammar::Required);
        let lo = (min - 30).min(-1);
        let hi = max + 30;
        let step = ((hi - lo) / 400).max(1);
        let mut v = lo;
        while v <= hi {
            let text = format!(r#"{{"name":"n","arguments":{{"v":{v}}}}}"#);
            assert_eq!(
                grammar.accepts(&text),
                (min..=max).contains(&v),
                "{v} in [{min}, {max}]"
            );
            v += step;
        }
        for v in [min, max] {
            assert!(grammar.accepts(&format!(r#"{{"name":"n","arguments":{{"v":{v}}}}}"#)));
        }
        // Leading zeros are never numbers.
        assert!(!grammar.accepts(r#"{"name":"n","arguments":{"v":07}}"#));
    }
}
