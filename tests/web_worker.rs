//! Browser tests of the adapters, run inside a dedicated worker in headless Chromium
//! (`make test`; the runner is configured in `.cargo/config.toml`).
#![cfg(target_arch = "wasm32")]

use draftsmith::core::Env;
use draftsmith::web::{JsClock, JsIds};
use draftsmith::{Clock, Core, IdSource, RecordingSink};
use rexie::{ObjectStore, Rexie, TransactionMode};
use std::rc::Rc;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

fn record(id: &str, text: &str) -> JsValue {
    let object = js_sys::Object::new();
    js_sys::Reflect::set(&object, &"id".into(), &id.into()).unwrap();
    js_sys::Reflect::set(&object, &"text".into(), &text.into()).unwrap();
    object.into()
}

#[wasm_bindgen_test]
async fn indexeddb_round_trips_a_record_in_a_worker() {
    let name = format!("draftsmith-test-{}", JsIds.next_id());
    let db = Rexie::builder(&name)
        .version(1)
        .add_object_store(ObjectStore::new("chapters").key_path("id"))
        .build()
        .await
        .expect("open IndexedDB");

    let text = "Chapter one. \u{201c}Hello,\u{201d} she said. — «Oui.» 🐉";
    let tx = db
        .transaction(&["chapters"], TransactionMode::ReadWrite)
        .unwrap();
    let store = tx.store("chapters").unwrap();
    store.put(&record("ch-1", text), None).await.unwrap();
    tx.done().await.unwrap();

    let tx = db
        .transaction(&["chapters"], TransactionMode::ReadOnly)
        .unwrap();
    let store = tx.store("chapters").unwrap();
    let back = store
        .get(JsValue::from_str("ch-1"))
        .await
        .unwrap()
        .expect("record is there");
    let got = js_sys::Reflect::get(&back, &"text".into()).unwrap();
    assert_eq!(got.as_string().as_deref(), Some(text));
    let missing = store.get(JsValue::from_str("ch-2")).await.unwrap();
    assert!(missing.is_none());
    tx.done().await.unwrap();

    db.close();
    Rexie::delete(&name).await.unwrap();
}

#[wasm_bindgen_test]
fn js_clock_reads_wall_time() {
    let now = JsClock.now_ms();
    // 2020-01-01 and 2200-01-01: the clock is real wall time in milliseconds.
    assert!(now > 1_577_836_800_000 && now < 7_258_118_400_000, "{now}");
}

#[wasm_bindgen_test]
fn js_ids_are_uuid_v4_shaped_and_unique() {
    let ids: Vec<String> = (0..1000).map(|_| JsIds.next_id()).collect();
    let unique: std::collections::HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len());
    for id in &ids {
        assert_eq!(id.len(), 36);
        for (i, c) in id.char_indices() {
            if matches!(i, 8 | 13 | 18 | 23) {
                assert_eq!(c, '-', "{id}");
            } else {
                assert!(matches!(c, '0'..='9' | 'a'..='f'), "{id}");
            }
        }
        assert_eq!(&id[14..15], "4");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
    }
}

#[wasm_bindgen_test]
async fn the_core_answers_in_the_browser() {
    let core = Core::new(Env {
        clock: Rc::new(JsClock),
        ids: Rc::new(JsIds),
        decoder: Rc::new(draftsmith::web::JsTextDecoder),
        events: Rc::new(RecordingSink::default()),
        store: Rc::new(draftsmith::store::MemoryStore::new()),
    });
    let out = core.handle_text(r#"{"id": 1, "type": "hello"}"#).await;
    assert!(out.contains(r#""ok":true"#), "{out}");
    let out = core.handle_text("{not json").await;
    assert!(out.contains(r#""code":"malformed""#), "{out}");
}

#[wasm_bindgen_test]
async fn tools_run_in_the_worker_with_the_embedded_schemas() {
    let events = Rc::new(RecordingSink::default());
    let core = Core::new(Env {
        clock: Rc::new(JsClock),
        ids: Rc::new(JsIds),
        decoder: Rc::new(draftsmith::web::JsTextDecoder),
        events: events.clone(),
        store: Rc::new(draftsmith::store::MemoryStore::new()),
    });
    let send = |text: String| {
        let core = &core;
        async move { serde_json::from_str::<serde_json::Value>(&core.handle_text(&text).await).unwrap() }
    };
    let r = send(r#"{"id":1,"type":"create_project","params":{"name":"W","chapters":[{"title":"One","text":"The lamp was dark."}]}}"#.into()).await;
    assert_eq!(r["ok"], true, "{r}");
    // Validation in wasm uses the embedded schemas.
    let r = send(r#"{"id":2,"type":"execute","params":{"tool":"update_manuscript","args":{"searchText":"dark"}}}"#.into()).await;
    assert_eq!(r["result"]["status"], "error");
    assert_eq!(
        r["result"]["data"]["message"],
        "missing required argument 'replacementText' (a string)"
    );
    let r = send(r#"{"id":3,"type":"list_tools","params":{"format":"openai"}}"#.into()).await;
    let update = r["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "update_manuscript")
        .unwrap()
        .clone();
    assert_eq!(
        update["function"]["parameters"]["required"],
        serde_json::json!(["searchText", "replacementText"])
    );
    // The edit path, undo and events.
    let r = send(r#"{"id":4,"type":"execute","params":{"tool":"update_manuscript","origin":"agent:w","args":{"searchText":"dark","replacementText":"lit"}}}"#.into()).await;
    assert_eq!(r["result"]["status"], "success", "{r}");
    assert!(events.take().iter().any(|e| e.kind == "edit"));
    let r = send(r#"{"id":5,"type":"undo","params":{"origin":"agent"}}"#.into()).await;
    assert_eq!(r["ok"], true);
    let r = send(r#"{"id":6,"type":"get_chapter"}"#.into()).await;
    assert_eq!(r["result"]["text"], "The lamp was dark.");
}

/// A text of several megabytes is split into chunks without overflow on wasm32, where
/// `usize` is 32 bits: once `len * k` overflowed from about 1.7 MB and the release build
/// kept only part of the text (a 5 MB chapter was saved as 549,118 chars).
#[wasm_bindgen_test]
async fn a_five_megabyte_chapter_is_kept_whole() {
    let line = "The keeper climbed the stair and lit the lamp — «before the storm». 🐉\n";
    let text = line.repeat(5_000_000 / line.len() + 1);
    let built = draftsmith::project::Text::from_str(&text);
    assert_eq!(built.len_bytes(), text.len());
    assert!(built.to_string() == text, "the text came back changed");

    let core = Core::new(Env {
        clock: Rc::new(JsClock),
        ids: Rc::new(JsIds),
        decoder: Rc::new(draftsmith::web::JsTextDecoder),
        events: Rc::new(RecordingSink::default()),
        store: Rc::new(draftsmith::store::MemoryStore::new()),
    });
    let request = serde_json::json!({"id": 1, "type": "create_project",
        "params": {"name": "Long", "chapters": [{"title": "One", "text": text}]}});
    let r: serde_json::Value =
        serde_json::from_str(&core.handle_text(&request.to_string()).await).unwrap();
    assert_eq!(r["ok"], true, "{}", r["error"]);
    let chapter = r["result"]["chapters"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let request =
        serde_json::json!({"id": 2, "type": "get_chapter", "params": {"chapter": chapter}});
    let got: serde_json::Value =
        serde_json::from_str(&core.handle_text(&request.to_string()).await).unwrap();
    assert!(
        got["result"]["text"].as_str() == Some(text.as_str()),
        "get_chapter gave back another text"
    );
}
