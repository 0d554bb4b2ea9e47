//! Tool arguments declared as data: each argument's name, type, whether it must be given, the
//! other names it is accepted by, and what the model reads about it. From a declaration come
//! the JSON Schema the model sees ([`schema`], natively) and the parsing of a call's arguments
//! straight from `serde_json::Value` ([`parse`]) with the messages serde gives for a typed
//! argument struct, so a family of tools needs no serde type per tool: one generic path instead
//! of one deserializer each, which keeps the wasm small. The story-bible tools use it.

use serde_json::Value;

use super::{object_args, plain_types, ToolError};

type S = &'static str;

/// The type of an argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ty {
    /// A string.
    Str,
    /// A boolean.
    Bool,
    /// A boolean that is false unless given (never `null`; its schema says so).
    Flag,
    /// A list of strings.
    Strs,
    /// A non-negative integer from a minimum to a maximum (0: no maximum); [`parse`] checks
    /// the range.
    Num(u64, u64),
    /// One of these strings.
    OneOf(&'static [S]),
}

/// A declared argument.
#[derive(Debug)]
pub struct Arg {
    /// Its name.
    pub name: S,
    /// Its type.
    pub ty: Ty,
    /// Whether it must be given (an optional one may be absent or `null`).
    pub required: bool,
    /// Other names it is accepted by.
    pub aliases: &'static [S],
    /// What the model reads about it (natively only: the wasm build embeds the schemas).
    pub doc: S,
}

/// A required argument.
pub const fn req(name: S, ty: Ty, doc: S) -> Arg {
    let doc = if cfg!(target_arch = "wasm32") {
        ""
    } else {
        doc
    };
    Arg {
        name,
        ty,
        required: true,
        aliases: &[],
        doc,
    }
}

/// An optional argument.
pub const fn opt(name: S, ty: Ty, doc: S) -> Arg {
    Arg {
        required: false,
        ..req(name, ty, doc)
    }
}

impl Arg {
    /// The same argument, also accepted by these names.
    pub const fn or(self, aliases: &'static [S]) -> Arg {
        Arg { aliases, ..self }
    }
}

/// Arguments parsed through their declaration: the values given (not `null`), by name.
#[derive(Debug, Default)]
pub struct Args {
    given: Vec<(S, Value)>,
}

impl Args {
    /// An argument's value, if given.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.given.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// A string argument, if given.
    pub fn opt(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// A string argument ("" when not given).
    pub fn text(&self, name: &str) -> &str {
        self.opt(name).unwrap_or("")
    }

    /// A string argument, trimmed, if given.
    pub fn trimmed(&self, name: &str) -> Option<&str> {
        self.opt(name).map(str::trim)
    }

    /// A string argument that must not be blank, trimmed.
    pub fn non_blank(&self, name: &str) -> Result<&str, ToolError> {
        match self.text(name).trim() {
            "" => Err(ToolError::invalid_args(format!(
                "'{name}' must not be empty"
            ))),
            value => Ok(value),
        }
    }

    /// A number argument, if given.
    pub fn num(&self, name: &str) -> Option<u64> {
        self.get(name).and_then(Value::as_u64)
    }

    /// A boolean argument (false when not given).
    pub fn flag(&self, name: &str) -> bool {
        self.get(name).and_then(Value::as_bool).unwrap_or(false)
    }

    /// A list argument's strings (none when not given).
    pub fn list(&self, name: &str) -> Vec<String> {
        self.get(name).map(strings).unwrap_or_default()
    }
}

/// The strings of a JSON array.
pub fn strings(value: &Value) -> Vec<String> {
    let items = value.as_array().into_iter().flatten();
    items
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// Parse a call's arguments through their declaration, as serde parses a typed argument
/// struct: `null` is `{}`, aliases count, unknown names are ignored, a name given twice, a
/// missing required argument, a wrong type and `null` for a required argument or a flag are
/// errors, with serde's messages; then a number out of its declared range is an error saying
/// the range. The executor has already checked the arguments against the schema, so a failure
/// here is rare.
pub fn parse(args: &'static [Arg], value: Value) -> Result<Args, ToolError> {
    let bad =
        |m: String| ToolError::invalid_args(format!("invalid arguments: {}", plain_types(&m)));
    let (mut seen, mut given) = (vec![false; args.len()], Vec::new());
    for (key, value) in object_args(value)? {
        let is = |a: &Arg| a.name == key || a.aliases.contains(&key.as_str());
        let Some(i) = args.iter().position(is) else {
            continue;
        };
        if std::mem::replace(&mut seen[i], true) {
            return Err(bad(format!("duplicate field `{}`", args[i].name)));
        }
        let arg = &args[i];
        if !value.is_null() || arg.required || arg.ty == Ty::Flag {
            check(arg.ty, &value).map_err(bad)?;
            given.push((arg.name, value));
        }
    }
    if let Some((arg, _)) = args.iter().zip(seen).find(|(a, seen)| a.required && !seen) {
        return Err(bad(format!("missing field `{}`", arg.name)));
    }
    let given = Args { given };
    for arg in args {
        let Ty::Num(min, max) = arg.ty else { continue };
        let outside = |n: &u64| *n < min || (max > 0 && *n > max);
        if let Some(n) = given.num(arg.name).filter(outside) {
            let range = match max {
                0 => format!("at least {min}"),
                _ => format!("{min} to {max}"),
            };
            let message = format!("'{}' must be {range}, got {n}", arg.name);
            return Err(ToolError::invalid_args(message));
        }
    }
    Ok(given)
}

/// Give the arguments passed under an alias their declared name, which is the one the schema
/// names (and requires), unless that name is given too.
pub fn declared_names(args: &[Arg], given: &mut serde_json::Map<String, Value>) {
    for arg in args {
        for alias in arg.aliases {
            if given.contains_key(arg.name) {
                break;
            }
            if let Some(value) = given.remove(*alias) {
                given.insert(arg.name.to_string(), value);
            }
        }
    }
}

/// Whether `value` has type `ty`, or serde's message.
fn check(ty: Ty, value: &Value) -> Result<(), String> {
    let (ok, expected) = match (ty, value) {
        (Ty::Str, _) => (value.is_string(), "a string"),
        (Ty::Bool | Ty::Flag, _) => (value.is_boolean(), "a boolean"),
        (Ty::Strs, Value::Array(items)) => return items.iter().try_for_each(|i| check(Ty::Str, i)),
        (Ty::Strs, _) => (false, "a sequence"),
        (Ty::Num(..), Value::Number(n)) if n.as_i64().is_some_and(|n| n < 0) => {
            return Err(format!("invalid value: integer `{n}`, expected u64"));
        }
        (Ty::Num(..), _) => (value.is_u64(), "u64"),
        (Ty::OneOf(names), Value::String(s)) if !names.contains(&s.as_str()) => {
            let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            let expected = match names.len() {
                1 | 2 => names.join(" or "),
                _ => format!("one of {}", names.join(", ")),
            };
            return Err(format!("unknown variant `{s}`, expected {expected}"));
        }
        (Ty::OneOf(_), _) => (value.is_string(), "string or map"),
    };
    match ok {
        true => Ok(()),
        false => Err(invalid_type(value, expected)),
    }
}

/// serde_json's "invalid type: …, expected …" for `value`, made by serde_json itself: a
/// visitor that accepts nothing, asked for a string.
fn invalid_type(value: &Value, expected: &str) -> String {
    struct Expected<'a>(&'a str);
    impl serde::de::Visitor<'_> for Expected<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    serde::Deserializer::deserialize_str(value, Expected(expected))
        .err()
        .map_or_else(String::new, |e| e.to_string())
}

/// The parameters schema of declared arguments, as the model sees it.
#[cfg(not(target_arch = "wasm32"))]
pub fn schema(args: &[Arg]) -> Value {
    use serde_json::json;
    let mut properties = serde_json::Map::new();
    for arg in args {
        let mut p = json!({"description": arg.doc, "type": "string"});
        match arg.ty {
            Ty::Str => {}
            Ty::Bool => p["type"] = json!("boolean"),
            Ty::Flag => (p["type"], p["default"]) = (json!("boolean"), json!(false)),
            Ty::Strs => (p["type"], p["items"]) = (json!("array"), json!({"type": "string"})),
            Ty::Num(min, _) => (p["type"], p["minimum"]) = (json!("integer"), json!(min)),
            Ty::OneOf(names) => p["enum"] = json!(names),
        }
        if let Ty::Num(_, max @ 1..) = arg.ty {
            p["maximum"] = json!(max);
        }
        properties.insert(arg.name.into(), p);
    }
    let mut schema = json!({"type": "object", "properties": properties});
    let required: Vec<&str> = args.iter().filter(|a| a.required).map(|a| a.name).collect();
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use serde_json::json;

    static ARGS: [Arg; 4] = [
        req("scene", Ty::Str, "").or(&["id", "sceneId"]),
        opt("limit", Ty::Num(1, 5), ""),
        opt("overwrite", Ty::Flag, ""),
        opt("severity", Ty::OneOf(&["info", "warning", "error"]), ""),
    ];

    #[test]
    fn arguments_are_parsed_as_serde_would_parse_them() {
        let ok = parse(&ARGS, json!({"sceneId": "s", "limit": null, "x": 1})).unwrap();
        assert_eq!(
            (ok.text("scene"), ok.num("limit"), ok.flag("overwrite")),
            ("s", None, false)
        );
        for (args, error) in [
            (json!({"id": "a", "scene": "b"}), "duplicate field `scene`"),
            (
                json!({"id": 1.0}),
                "invalid type: floating point `1.0`, expected a string",
            ),
            (
                json!({"scene": "s", "overwrite": null}),
                "invalid type: null, expected a boolean",
            ),
            (json!({"limit": 2}), "missing field `scene`"),
            (
                json!({"scene": "s", "limit": -2}),
                "invalid value: integer `-2`, expected a non-negative integer",
            ),
            (
                json!({"scene": "s", "severity": "x"}),
                "unknown variant `x`, expected one of `info`, `warning`, `error`",
            ),
        ] {
            let message = parse(&ARGS, args).unwrap_err().message;
            assert_eq!(message, format!("invalid arguments: {error}"));
        }
        let schema = schema(&ARGS);
        assert_eq!(schema["required"], json!(["scene"]));
        assert_eq!(schema["properties"]["limit"]["maximum"], 5);
        assert_eq!(schema["properties"]["overwrite"]["default"], false);
    }

    #[test]
    fn numbers_are_checked_against_their_declared_range() {
        for limit in [0, 6] {
            let error = parse(&ARGS, json!({"scene": "s", "limit": limit})).unwrap_err();
            assert_eq!(error.code, "invalid_args");
            assert_eq!(
                error.message,
                format!("'limit' must be 1 to 5, got {limit}")
            );
        }
        let ok = parse(&ARGS, json!({"scene": "s", "limit": 5})).unwrap();
        assert_eq!(ok.num("limit"), Some(5));
        // The range is checked after the rest, as a tool's own check was.
        let missing = parse(&ARGS, json!({"limit": 9})).unwrap_err().message;
        assert_eq!(missing, "invalid arguments: missing field `scene`");
    }

    #[test]
    fn text_arguments_are_trimmed_and_may_be_required_not_blank() {
        let args = parse(&ARGS, json!({"scene": "  s1 "})).unwrap();
        assert_eq!(
            (args.trimmed("scene"), args.trimmed("severity")),
            (Some("s1"), None)
        );
        assert_eq!(args.non_blank("scene").unwrap(), "s1");
        let blank = parse(&ARGS, json!({"scene": " "})).unwrap();
        assert_eq!(
            blank.non_blank("scene").unwrap_err().message,
            "'scene' must not be empty"
        );
    }
}
