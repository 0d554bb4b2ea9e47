//! The wasm build embeds the tools' parameters schemas from `src/tools/schemas.json`; this
//! test keeps that file equal to what the argument types generate.
//!
//! After changing a tool's arguments: `UPDATE_SCHEMAS=1 cargo test --test schemas`.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::tools::schema::{embedded_parameters, EMBEDDED_SCHEMAS};
use draftsmith::tools::ToolRegistry;
use serde_json::{Map, Value};

fn generated() -> String {
    let registry = ToolRegistry::standard();
    let mut all: Vec<(&str, &Value)> = registry
        .definitions()
        .iter()
        .map(|d| (d.name.as_ref(), &d.parameters))
        .collect();
    all.sort_by_key(|(name, _)| *name);
    let map: Map<String, Value> = all
        .into_iter()
        .map(|(n, p)| (n.to_string(), p.clone()))
        .collect();
    format!(
        "{}\n",
        serde_json::to_string_pretty(&Value::Object(map)).unwrap()
    )
}

#[test]
fn embedded_schemas_match_the_argument_types() {
    let fresh = generated();
    if std::env::var_os("UPDATE_SCHEMAS").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/tools/schemas.json");
        std::fs::write(path, &fresh).unwrap();
        return;
    }
    assert!(
        EMBEDDED_SCHEMAS == fresh,
        "src/tools/schemas.json is stale: run `UPDATE_SCHEMAS=1 cargo test --test schemas`"
    );
    let registry = ToolRegistry::standard();
    for def in registry.definitions() {
        assert_eq!(
            embedded_parameters(&def.name),
            def.parameters,
            "{}",
            def.name
        );
    }
    assert_eq!(
        embedded_parameters("no_such_tool")["properties"],
        serde_json::json!({})
    );
}
