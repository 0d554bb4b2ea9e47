//! The worker protocol as the page sees it: JSON text in, one JSON response out, for every
//! input, malformed ones included.
#![cfg(not(target_arch = "wasm32"))]

use std::rc::Rc;

use draftsmith::core::{Env, REQUESTS};
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures::executor::block_on;
use proptest::prelude::*;
use serde_json::{json, Value};

fn core() -> Core {
    Core::new(Env {
        clock: Rc::new(ManualClock::new(0)),
        ids: Rc::new(SequentialIds::new("id")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: Rc::new(RecordingSink::default()),
        store: Rc::new(draftsmith::store::MemoryStore::new()),
    })
}

fn send(core: &Core, text: &str) -> Value {
    let out = block_on(core.handle_text(text));
    let value: Value = serde_json::from_str(&out).expect("response is JSON");
    assert_eq!(value["kind"], "response", "not a response: {out}");
    value
}

fn error_code(response: &Value) -> &str {
    assert_eq!(response["ok"], false, "expected an error: {response}");
    response["error"]["code"].as_str().expect("error code")
}

#[test]
fn hello_reports_version_profile_and_capabilities() {
    let r = send(&core(), r#"{"id": 1, "type": "hello"}"#);
    assert_eq!(r["id"], 1);
    assert_eq!(r["ok"], true);
    let result = &r["result"];
    assert_eq!(result["name"], "draftsmith");
    assert_eq!(result["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(result["profile"], "debug");
    assert_eq!(result["protocol"], 1);
    let caps: Vec<&str> = result["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(caps, REQUESTS);
    assert!(caps.contains(&"hello"));
}

#[test]
fn string_ids_and_null_params_are_accepted() {
    let r = send(&core(), r#"{"id": "abc", "type": "hello", "params": null}"#);
    assert_eq!(r["id"], "abc");
    assert_eq!(r["ok"], true);
    let r = send(
        &core(),
        r#"{"id": 2.5, "type": "hello", "params": {"x": 1}}"#,
    );
    assert_eq!(r["id"], 2.5);
    assert_eq!(r["ok"], true);
}

#[test]
fn float_ids_are_echoed_as_written() {
    // The core reads numbers without the exact float parser; the page must still get back
    // the very number it sent, so a non-integer id is echoed as its text. The texts here are
    // not the shortest form of their number, so re-writing a parsed f64 would change them.
    for id in [
        "2.50",
        "-1E2",
        "1e-7",
        "0.1000000000000000055511151231257827",
        "9007199254740993.5",
    ] {
        for text in [
            format!(r#"{{"id": {id}, "type": "hello"}}"#),
            format!(r#"{{"params": {{"id": 1.5, "s": "}}\"{{"}}, "type": "hello", "id":{id} }}"#),
            format!(r#"{{"id": 3.25, "type": "no_such_request", "\u0069d": {id}}}"#),
            format!(r#"{{"id": {id}, "type": 5}}"#),
        ] {
            let out = block_on(core().handle_text(&text));
            assert!(
                out.starts_with(&format!(r#"{{"id":{id},"#)),
                "{text} gave {out}"
            );
            let value: Value = serde_json::from_str(&out).expect("response is JSON");
            assert_eq!(value["kind"], "response", "{out}");
        }
    }
    // Integer and string ids are written as before.
    let out = block_on(core().handle_text(r#"{"id": 7, "type": "hello"}"#));
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["id"], 7);
    assert_eq!(
        draftsmith::protocol::id_text(r#"{"id": "a", "x": 1.5}"#),
        None
    );
    assert_eq!(draftsmith::protocol::id_text(r#"[1.5]"#), None);
}

#[test]
fn unreadable_messages_get_malformed_with_null_id() {
    let c = core();
    for text in [
        "",
        "not json",
        "{",
        "[1,2]",
        "42",
        "\"hello\"",
        "null",
        r#"{"type": "hello"}"#,
        r#"{"id": null, "type": "hello"}"#,
        r#"{"id": "", "type": "hello"}"#,
        r#"{"id": true, "type": "hello"}"#,
        r#"{"id": {"a": 1}, "type": "hello"}"#,
        r#"{"id": [1], "type": "hello"}"#,
        // A lone UTF-16 surrogate escape is not valid Unicode text.
        r#"{"id": 1, "type": "hello", "params": {"t": "\ud800"}}"#,
    ] {
        let r = send(&c, text);
        assert_eq!(error_code(&r), "malformed", "input {text:?} gave {r}");
        assert!(r["id"].is_null(), "input {text:?} gave {r}");
        assert!(!r["error"]["message"].as_str().unwrap().is_empty());
    }
}

#[test]
fn only_a_lone_surrogate_escape_makes_a_message_malformed() {
    let c = core();
    // Lone surrogates, high and low, in either case, after other escapes.
    for text in [
        r#"{"id": 1, "type": "hello", "params": {"t": "a\\b \uDC00"}}"#,
        r#"{"id": 1, "type": "hello", "params": {"t": "\u00e9\udfff"}}"#,
        r#"{"id": 1, "type": "hello", "params": {"t": "\uD83D x"}}"#,
    ] {
        let r = send(&c, text);
        assert_eq!(error_code(&r), "malformed", "input {text:?} gave {r}");
    }
    // A pair, an escaped backslash before "ud800" (text, not an escape), other escapes.
    for text in [
        r#"{"id": 1, "type": "hello", "params": {"t": "\ud83d\ude00"}}"#,
        r#"{"id": 1, "type": "hello", "params": {"t": "\\ud800"}}"#,
        r#"{"id": 1, "type": "hello", "params": {"t": "\u0041\n\\"}}"#,
    ] {
        let r = send(&c, text);
        assert_eq!(r["ok"], true, "input {text:?} gave {r}");
    }
}

#[test]
fn bad_type_or_params_get_malformed_with_the_id() {
    let c = core();
    for (text, needle) in [
        (r#"{"id": 3}"#, "missing field 'type'"),
        (
            r#"{"id": 3, "type": 7}"#,
            "'type' must be a non-empty string",
        ),
        (
            r#"{"id": 3, "type": ""}"#,
            "'type' must be a non-empty string",
        ),
        (
            r#"{"id": 3, "type": "hello", "params": [1]}"#,
            "'params' must be an object, got an array",
        ),
        (
            r#"{"id": 3, "type": "hello", "params": "x"}"#,
            "'params' must be an object, got a string",
        ),
    ] {
        let r = send(&c, text);
        assert_eq!(error_code(&r), "malformed", "{text}");
        assert_eq!(r["id"], 3, "{text}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{message:?} lacks {needle:?}");
    }
}

#[test]
fn unknown_request_names_the_closest_type() {
    let r = send(&core(), r#"{"id": 9, "type": "helo"}"#);
    assert_eq!(error_code(&r), "unknown_request");
    assert_eq!(r["id"], 9);
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.contains("'helo'"), "{message}");
    assert!(message.contains("did you mean 'hello'"), "{message}");
}

#[test]
fn debug_panic_checks_its_params_before_panicking() {
    let r = send(
        &core(),
        r#"{"id": 1, "type": "debug_panic", "params": {"message": 5}}"#,
    );
    assert_eq!(error_code(&r), "invalid_params");
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("'message' must be a string"));
}

#[test]
fn debug_panic_panics() {
    let c = core();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        block_on(
            c.handle_text(r#"{"id": 1, "type": "debug_panic", "params": {"message": "boom"}}"#),
        )
    }));
    assert!(result.is_err());
}

#[test]
fn oversized_messages_are_rejected_before_parsing() {
    let big = format!(
        r#"{{"id": 1, "type": "hello", "params": {{"t": "{}"}}}}"#,
        "a".repeat(draftsmith::protocol::MAX_MESSAGE_BYTES)
    );
    let r = send(&core(), &big);
    assert_eq!(error_code(&r), "malformed");
    assert!(r["error"]["message"].as_str().unwrap().contains("limit"));
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
        prop_oneof![
            Just("hello"),
            Just("debug_panic_x"),
            Just("id"),
            Just("type")
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(
                prop_oneof![
                    Just("id".to_string()),
                    Just("type".to_string()),
                    Just("params".to_string()),
                    "[a-z]{1,6}"
                ],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_text_gets_exactly_one_response(text in any::<String>()) {
        let r = send(&core(), &text);
        prop_assert!(r["ok"].is_boolean());
    }

    #[test]
    fn any_json_gets_one_response_echoing_a_valid_id(value in arb_json()) {
        let r = send(&core(), &value.to_string());
        let id_ok = matches!(&value["id"], Value::Number(_))
            || matches!(&value["id"], Value::String(s) if !s.is_empty());
        if value.is_object() && id_ok {
            prop_assert_eq!(&r["id"], &value["id"]);
        } else {
            prop_assert!(r["id"].is_null());
        }
        if r["ok"] == json!(true) {
            prop_assert_eq!(&value["type"], &json!("hello"));
        }
    }
}
