//! Helpers shared by the browser test crates that talk to the dev server's mock LLM
//! (`make test` starts it on 127.0.0.1:8788).
#![allow(dead_code)]

use draftsmith::llm::client::LlmTransport;
use draftsmith::llm::HttpRequest;
use draftsmith::web::fetch::FetchTransport;
use draftsmith::web::JsIds;
use draftsmith::IdSource;
use serde_json::{json, Value};

pub const MOCK: &str = match option_env!("DRAFTSMITH_MOCK_URL") {
    Some(url) => url,
    None => "http://127.0.0.1:8788/",
};

/// A fresh mock script with these responses queued; returns its base URL.
pub async fn script(responses: Value) -> String {
    let name = format!("r{}", &JsIds.next_id()[..8]);
    let response = FetchTransport
        .send(&HttpRequest {
            method: "POST".into(),
            url: format!("{MOCK}mock/{name}/responses"),
            headers: vec![],
            body: responses.to_string(),
        })
        .await
        .expect("the mock server is running");
    assert_eq!(response.status, 204);
    format!("{MOCK}mock/{name}/v1")
}

pub fn data(v: Value) -> String {
    format!("data: {v}")
}

/// An OpenAI-style streamed answer calling tools `(id, name, args)`, arguments split in two.
pub fn calls(list: &[(&str, &str, Value)]) -> Value {
    let mut events = Vec::new();
    for (i, (id, name, args)) in list.iter().enumerate() {
        let args = args.to_string();
        let (a, b) = args.split_at(args.len() / 2);
        events.push(data(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": a}}]}, "finish_reason": null}]})));
        events.push(data(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "function": {"arguments": b}}]}, "finish_reason": null}]})));
    }
    events.push(data(
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ));
    events.push("data: [DONE]".into());
    json!({"events": events, "splitBytes": 11, "gapMs": 2})
}

pub fn says(text: &str) -> Value {
    json!({"events": [
        data(json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})),
        data(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})),
        "data: [DONE]"
    ]})
}

/// The requests the mock received for a script (`{path, method, headers, body, at}`).
pub async fn requests_made(base: &str) -> Vec<Value> {
    let url = base.trim_end_matches("/v1").to_string() + "/requests";
    let mut response = FetchTransport
        .send(&HttpRequest {
            method: "GET".into(),
            url,
            headers: vec![],
            body: String::new(),
        })
        .await
        .unwrap();
    let mut body = Vec::new();
    while let Some(Ok(chunk)) = response.body.next_chunk().await {
        body.extend(chunk);
    }
    serde_json::from_slice::<Value>(&body)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}
