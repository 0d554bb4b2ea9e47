//! Argument validation against a tool's JSON Schema, before the arguments are deserialized.
//!
//! One small walker serves every tool (no per-type code), and its messages name the field,
//! what was expected and what arrived, so the model can fix the call: `'position' must be a
//! non-negative integer, got a string`, `missing required argument 'searchText' (a string)`,
//! `'panel' must be one of: chat, history, ...`. Unknown fields are ignored.

use serde_json::{Map, Value};

use super::ToolError;
use crate::names::json_kind;

/// Check `args` (an object) against an object schema.
pub fn check_args(schema: &Value, args: &Map<String, Value>) -> Result<(), ToolError> {
    check_object(schema, args, "")
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `searchText` -> `search_text`.
fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `search_text` -> `searchText`.
fn camel_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn check_object(schema: &Value, args: &Map<String, Value>, path: &str) -> Result<(), ToolError> {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            let given = args
                .get(name)
                .or_else(|| args.get(&snake_case(name)))
                .filter(|v| !v.is_null());
            if given.is_none() {
                let expected = properties
                    .and_then(|p| p.get(name))
                    .map(describe)
                    .unwrap_or_else(|| "a value".into());
                return Err(ToolError::invalid_args(format!(
                    "missing required argument '{}' ({expected})",
                    join(path, name)
                )));
            }
        }
    }
    let Some(properties) = properties else {
        return Ok(());
    };
    for (name, value) in args {
        if value.is_null() {
            continue; // null means "not given" for optional fields
        }
        let field = properties
            .get(name)
            .or_else(|| properties.get(&camel_case(name)));
        if let Some(field) = field {
            check_value(field, value, &join(path, name))?;
        }
    }
    Ok(())
}

/// "a string", "a non-negative integer", "one of: a, b".
fn describe(schema: &Value) -> String {
    if let Some(Value::Array(options)) = schema.get("enum") {
        let names: Vec<String> = options
            .iter()
            .map(|o| o.as_str().map_or_else(|| o.to_string(), str::to_string))
            .collect();
        return format!("one of: {}", names.join(", "));
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => "a string".into(),
        Some("integer") if schema.get("minimum").and_then(Value::as_f64) == Some(0.0) => {
            "a non-negative integer".into()
        }
        Some("integer") => "an integer".into(),
        Some("number") => "a number".into(),
        Some("boolean") => "a boolean (true or false)".into(),
        Some("array") => "an array".into(),
        Some("object") => "an object".into(),
        _ => "a value".into(),
    }
}

fn check_value(schema: &Value, value: &Value, path: &str) -> Result<(), ToolError> {
    let wrong = || {
        ToolError::invalid_args(format!(
            "'{path}' must be {}, got {}",
            describe(schema),
            got(value)
        ))
    };
    if let Some(Value::Array(options)) = schema.get("enum") {
        return if options.contains(value) {
            Ok(())
        } else {
            Err(wrong())
        };
    }
    let ok = match schema.get("type").and_then(Value::as_str) {
        Some("string") => value.is_string(),
        Some("boolean") => value.is_boolean(),
        Some("number") => value.is_number(),
        Some("integer") => {
            let minimum = schema.get("minimum").and_then(Value::as_f64);
            match value {
                Value::Number(n) if n.is_u64() => {
                    // Positions and counts must fit the platform's usize (32 bits on wasm).
                    minimum != Some(0.0) || n.as_u64().is_some_and(|v| usize::try_from(v).is_ok())
                }
                Value::Number(n) if n.is_i64() => minimum.is_none_or(|m| n.as_f64() >= Some(m)),
                _ => false,
            }
        }
        Some("array") => match value {
            Value::Array(items) => {
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        check_value(item_schema, item, &format!("{path}[{i}]"))?;
                    }
                }
                true
            }
            _ => false,
        },
        Some("object") => match value {
            Value::Object(map) => {
                check_object(schema, map, path)?;
                true
            }
            _ => false,
        },
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(wrong())
    }
}

fn got(value: &Value) -> String {
    match value {
        Value::String(s) => {
            let shown: String = s.chars().take(40).collect();
            if shown.len() < s.len() {
                format!("the string \"{shown}…\"")
            } else {
                format!("the string \"{shown}\"")
            }
        }
        Value::Number(n) => format!("the number {n}"),
        Value::Bool(b) => format!("{b}"),
        other => json_kind(other).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "required": ["text", "mode"], "properties": {
            "text": {"type": "string"},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "position": {"type": "integer", "minimum": 0},
            "flag": {"type": "boolean"},
            "nested": {"type": "object", "required": ["x"], "properties": {"x": {"type": "number"}}},
        }})
    }

    fn check(args: Value) -> Result<(), String> {
        check_args(&schema(), args.as_object().unwrap()).map_err(|e| e.message)
    }

    #[test]
    fn messages_name_field_expectation_and_value() {
        assert_eq!(check(json!({"text": "t", "mode": "a"})), Ok(()));
        assert_eq!(
            check(json!({"mode": "a"})).unwrap_err(),
            "missing required argument 'text' (a string)"
        );
        assert_eq!(
            check(json!({"text": 5, "mode": "a"})).unwrap_err(),
            "'text' must be a string, got the number 5"
        );
        assert_eq!(
            check(json!({"text": "t", "mode": "c"})).unwrap_err(),
            "'mode' must be one of: a, b, got the string \"c\""
        );
        assert_eq!(
            check(json!({"text": "t", "mode": "a", "position": -1})).unwrap_err(),
            "'position' must be a non-negative integer, got the number -1"
        );
        assert_eq!(
            check(json!({"text": "t", "mode": "a", "position": 1.5})).unwrap_err(),
            "'position' must be a non-negative integer, got the number 1.5"
        );
        assert_eq!(
            check(json!({"text": "t", "mode": "a", "flag": "yes"})).unwrap_err(),
            "'flag' must be a boolean (true or false), got the string \"yes\""
        );
        assert_eq!(
            check(json!({"text": "t", "mode": "a", "nested": {}})).unwrap_err(),
            "missing required argument 'nested.x' (a number)"
        );
        // snake_case spellings count as their camelCase fields.
        let camel = json!({"type": "object", "required": ["searchText"], "properties": {"searchText": {"type": "string"}}});
        assert!(check_args(&camel, json!({"search_text": "x"}).as_object().unwrap()).is_ok());
        let bad = check_args(&camel, json!({"search_text": 1}).as_object().unwrap());
        assert_eq!(
            bad.unwrap_err().message,
            "'search_text' must be a string, got the number 1"
        );
        // Unknown fields and nulls for optional fields pass.
        assert_eq!(
            check(json!({"text": "t", "mode": "a", "other": 1, "position": null})),
            Ok(())
        );
    }
}
