//! JSON Schema for tool arguments, and the tool catalog in each provider's format.
//!
//! Schemas are generated with schemars (draft-07 settings, subschemas inlined) and then
//! reduced (optional fields are simply not required, never `null`) to what every provider accepts: no `$schema`,
//! `title`, `definitions` or non-standard `format`s; enums as plain `enum` lists. Gemini's
//! function declarations take an OpenAPI subset, so its copy also drops
//! `additionalProperties` and `default`.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::json;
use serde_json::{Map, Value};

use super::ToolDefinition;

/// The tool catalog's formats are the providers' wire formats.
pub use crate::provider::ProviderKind as CatalogFormat;

/// The built-in tools' parameters schemas by tool name, as generated natively. The wasm build
/// embeds them instead of generating them at start-up (smaller and faster); the `schemas`
/// test fails when this file no longer matches the argument types, and
/// `UPDATE_SCHEMAS=1 cargo test --test schemas` rewrites it.
pub const EMBEDDED_SCHEMAS: &str = include_str!("schemas.json");

/// [`EMBEDDED_SCHEMAS`] without the whitespace between its tokens, made at compile time: the
/// file stays indented for review, and the wasm holds 29 KB instead of 41 KB (−0.16 KB gzip).
static MINIFIED_SCHEMAS: [u8; minified_len(EMBEDDED_SCHEMAS.as_bytes())] =
    minified(EMBEDDED_SCHEMAS.as_bytes());

/// One byte of a walk over JSON text: whether it is kept (whitespace between tokens is not),
/// and whether the walk is then in a string, and just after a backslash in it.
const fn json_step(b: u8, in_string: bool, escaped: bool) -> (bool, bool, bool) {
    if in_string {
        match (escaped, b) {
            (true, _) => (true, true, false),
            (false, b'\\') => (true, true, true),
            (false, b'"') => (true, false, false),
            _ => (true, true, false),
        }
    } else {
        match b {
            b' ' | b'\n' | b'\r' | b'\t' => (false, false, false),
            b'"' => (true, true, false),
            _ => (true, false, false),
        }
    }
}

/// JSON text without the whitespace between its tokens, written into `out` as far as it
/// holds; returns the whole length (so an empty `out` only counts).
const fn minify_into(text: &[u8], out: &mut [u8]) -> usize {
    let (mut i, mut n, mut in_string, mut escaped) = (0, 0, false, false);
    while i < text.len() {
        let (keep, s, e) = json_step(text[i], in_string, escaped);
        (in_string, escaped) = (s, e);
        if keep {
            if n < out.len() {
                out[n] = text[i];
            }
            n += 1;
        }
        i += 1;
    }
    n
}

/// The length of JSON text without the whitespace between its tokens.
const fn minified_len(text: &[u8]) -> usize {
    minify_into(text, &mut [])
}

/// JSON text without the whitespace between its tokens (`N` from [`minified_len`]).
const fn minified<const N: usize>(text: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    minify_into(text, &mut out);
    out
}

/// The embedded parameters schema of a built-in tool; an empty object schema for a name the
/// file does not know (the `schemas` test keeps that from happening to built-in tools).
pub fn embedded_parameters(name: &str) -> Value {
    thread_local! {
        static SCHEMAS: Map<String, Value> =
            serde_json::from_slice(&MINIFIED_SCHEMAS).unwrap_or_default();
    }
    SCHEMAS
        .with(|all| all.get(name).cloned())
        .unwrap_or_else(|| json!({"type": "object", "properties": {}}))
}

/// The provider-neutral parameters schema of an argument type.
pub fn parameters_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut value = serde_json::to_value(&schema).unwrap_or_else(|_| json!({}));
    clean(&mut value, false);
    if let Value::Object(map) = &mut value {
        // The type's own doc ("Arguments of ...") says nothing to the model.
        map.remove("description");
        map.insert("type".into(), Value::from("object"));
        map.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
    }
    value
}

/// Reduce a schema to the keywords providers accept (recursively).
fn clean(value: &mut Value, gemini: bool) {
    let Value::Object(map) = value else {
        return;
    };
    for key in ["$schema", "title", "definitions", "$defs", "examples"] {
        map.remove(key);
    }
    if gemini {
        map.remove("additionalProperties");
        map.remove("default");
    }
    // Doc comments wrap lines; a description is one paragraph.
    if let Some(Value::String(d)) = map.get_mut("description") {
        *d = d
            .split("\n\n")
            .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join("\n\n");
    }
    if map.get("default") == Some(&Value::Null) {
        map.remove("default");
    }
    // Optional fields are simply not required: drop `null` from types and unions.
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let single = types.remove(0);
            map.insert("type".into(), single);
        }
    }
    // An optional enum lists `null` among its values (schemars writes `Option<Enum>` so).
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(items)) = map.get_mut(key) {
            items.retain(|item| item.get("type") != Some(&Value::from("null")));
            if items.len() == 1 {
                if let Some(Value::Object(only)) = items.pop() {
                    map.remove(key);
                    for (k, v) in only {
                        map.entry(k).or_insert(v);
                    }
                }
            }
        }
    }
    if let Some(Value::String(format)) = map.get("format") {
        if !matches!(format.as_str(), "date-time" | "date" | "email" | "uri") {
            map.remove("format");
        }
    }
    // {"oneOf": [{"const": "a", "description": ..}, ..]} -> {"type": "string", "enum": [..]}
    for key in ["oneOf", "anyOf"] {
        let consts: Option<Vec<Value>> = match map.get(key) {
            Some(Value::Array(items)) if !items.is_empty() => items
                .iter()
                .map(|item| {
                    item.get("const")
                        .cloned()
                        .or_else(|| match item.get("enum") {
                            Some(Value::Array(e)) if e.len() == 1 => e.first().cloned(),
                            _ => None,
                        })
                })
                .collect(),
            _ => None,
        };
        if let Some(consts) = consts {
            map.remove(key);
            if consts.iter().all(Value::is_string) {
                map.insert("type".into(), Value::from("string"));
            }
            map.insert("enum".into(), Value::Array(consts));
        }
    }
    if let Some(Value::String(c)) = map.remove("const") {
        map.insert("type".into(), Value::from("string"));
        map.insert("enum".into(), json!([c]));
    }
    for (key, child) in map.iter_mut() {
        match child {
            // Property names are not keywords: a property called `title`, `type` or
            // `default` stays; only each property's schema is cleaned.
            Value::Object(properties) if key == "properties" => properties
                .values_mut()
                .for_each(|schema| clean(schema, gemini)),
            Value::Object(_) => clean(child, gemini),
            Value::Array(items) => items.iter_mut().for_each(|i| clean(i, gemini)),
            _ => {}
        }
    }
}

/// The catalog of `tools` in `format`.
pub fn catalog(format: CatalogFormat, tools: &[&ToolDefinition]) -> Value {
    match format {
        CatalogFormat::Openai | CatalogFormat::Local => Value::Array(
            tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.parameters}})
                })
                .collect(),
        ),
        CatalogFormat::Anthropic => Value::Array(
            tools
                .iter()
                .map(|t| {
                    json!({"name": t.name, "description": t.description, "input_schema": t.parameters})
                })
                .collect(),
        ),
        CatalogFormat::Gemini => {
            let declarations: Vec<Value> = tools
                .iter()
                .map(|t| {
                    let mut parameters = t.parameters.clone();
                    clean(&mut parameters, true);
                    json!({"name": t.name, "description": t.description, "parameters": parameters})
                })
                .collect();
            json!({ "functionDeclarations": declarations })
        }
    }
}

#[cfg(test)]
mod minify_tests {
    use super::*;

    fn minify(text: &str) -> String {
        const MAX: usize = 64;
        let n = minified_len(text.as_bytes());
        let full: [u8; MAX] = minified(text.as_bytes());
        String::from_utf8(full[..n].to_vec()).unwrap()
    }

    #[test]
    fn whitespace_between_tokens_goes_and_strings_keep_theirs() {
        let text =
            "{\n  \"a b\": [ 1,\t2 ],\r\n  \"q\\\" \\\\\": \" x \\\" y \\\\\" , \"é \": null }\n";
        assert_eq!(
            minify(text),
            r#"{"a b":[1,2],"q\" \\":" x \" y \\","é ":null}"#
        );
        let parsed: Value = serde_json::from_str(text).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&minify(text)).unwrap(),
            parsed
        );
    }

    #[test]
    fn the_embedded_file_minified_is_its_compact_form() {
        let parsed: Value = serde_json::from_str(EMBEDDED_SCHEMAS).unwrap();
        assert_eq!(
            std::str::from_utf8(&MINIFIED_SCHEMAS).unwrap(),
            serde_json::to_string(&parsed).unwrap()
        );
    }
}
