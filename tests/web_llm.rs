//! Model calls over real `fetch` and streaming, inside a dedicated worker, against the dev
//! server's scriptable mock LLM (`make test` starts it on 127.0.0.1:8788 for this layer).
#![cfg(target_arch = "wasm32")]

use draftsmith::llm::client::{call_model, CallError, CallOptions};
use draftsmith::llm::retry::RetryPolicy;
use draftsmith::llm::{build_request, Message, ProviderConfig, ProviderKind, RequestOptions};
use draftsmith::web::fetch::{FetchTransport, JsSleeper};
use serde_json::json;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

mod web_common;
use web_common::{data, script};

async fn requests_made(base: &str) -> usize {
    web_common::requests_made(base).await.len()
}

fn tool_call_events() -> Vec<String> {
    vec![
        data(
            json!({"choices": [{"index": 0, "delta": {"content": "On it. "}, "finish_reason": null}]}),
        ),
        data(
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "update_manuscript", "arguments": "{\"searchText\": \"da"}}]}, "finish_reason": null}]}),
        ),
        data(
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "rk\", \"replacementText\": \"lit\"}"}}]}, "finish_reason": null}]}),
        ),
        data(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})),
        "data: [DONE]".into(),
    ]
}

async fn call(
    base: String,
    options: CallOptions,
) -> (
    Result<draftsmith::llm::client::CallOutcome, CallError>,
    usize,
) {
    let config = ProviderConfig {
        kind: ProviderKind::Openai,
        base_url: base,
        model: "m".into(),
        api_key: Some("sk-test".into()),
        extra_headers: vec![],
        local: Default::default(),
    };
    let request = build_request(
        &config,
        &[Message::user("hi")],
        &[],
        &RequestOptions {
            stream: true,
            max_tokens: None,
            temperature: None,
            ..RequestOptions::default()
        },
    );
    let mut events = 0;
    let outcome = call_model(
        &FetchTransport,
        &JsSleeper,
        ProviderKind::Openai,
        &request,
        options,
        &|| js_sys::Date::now() as u64,
        &mut || 0.5,
        &mut |_| events += 1,
    )
    .await;
    (outcome, events)
}

#[wasm_bindgen_test]
async fn a_streamed_tool_call_arrives_over_fetch() {
    let base = script(json!([{"events": tool_call_events(), "splitBytes": 7, "gapMs": 5}])).await;
    let (outcome, events) = call(base, CallOptions::default()).await;
    let answer = outcome.expect("success").answer;
    assert_eq!(answer.text, "On it. ");
    assert_eq!(
        answer.tool_calls[0].arguments,
        json!({"searchText": "dark", "replacementText": "lit"})
    );
    assert!(events >= 4, "events streamed: {events}");
}

#[wasm_bindgen_test]
async fn a_429_with_retry_after_waits_then_succeeds() {
    let base = script(json!([
        {"status": 429, "headers": {"Retry-After": "1"}, "body": "{\"error\": {\"message\": \"slow down\"}}"},
        {"events": tool_call_events()}
    ])).await;
    let (outcome, _) = call(base.clone(), CallOptions::default()).await;
    let outcome = outcome.expect("success after the wait");
    assert_eq!(outcome.waits_ms, vec![1_000]);
    assert_eq!(outcome.attempts, 2);
    assert_eq!(requests_made(&base).await, 2);
}

#[wasm_bindgen_test]
async fn a_401_makes_exactly_one_request() {
    let base = script(json!([{"status": 401, "body": "{\"error\": {\"message\": \"Incorrect API key provided\"}}"}, {"events": tool_call_events()}])).await;
    let (outcome, _) = call(base.clone(), CallOptions::default()).await;
    match outcome {
        Err(CallError::Http {
            status: 401,
            message,
        }) => assert!(message.contains("Incorrect API key"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(requests_made(&base).await, 1);
}

#[wasm_bindgen_test]
async fn a_stall_hits_the_idle_timeout() {
    let events = tool_call_events();
    let base = script(json!([{"events": events, "stallAfter": 1}])).await;
    let options = CallOptions {
        idle_timeout_ms: 400,
        retry: RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        },
        ..CallOptions::default()
    };
    let (outcome, _) = call(base, options).await;
    let answer = outcome.expect("an answer cut short").answer;
    assert!(answer.error.expect("an error").contains("stopped sending"));
    assert!(answer.tool_calls.is_empty());
}

#[wasm_bindgen_test]
async fn a_drop_mid_arguments_executes_nothing() {
    let base = script(json!([{"events": tool_call_events(), "dropAfter": 2}])).await;
    let (outcome, _) = call(base, CallOptions::default()).await;
    let answer = outcome.expect("an answer with an error").answer;
    assert!(answer.tool_calls.is_empty(), "{:?}", answer.tool_calls);
    assert_eq!(answer.invalid_tool_calls.len(), 1);
    assert!(answer.error.is_some());
}

#[wasm_bindgen_test]
async fn a_redirect_to_another_origin_is_refused_and_the_key_never_reaches_it() {
    let base = script(json!([web_common::says("hi")])).await;
    // The mock answers 307 to the same script on the other loopback name (another origin).
    let redirecting = base.trim_end_matches("/v1").to_string() + "/redirect/v1";
    let (outcome, _) = call(
        redirecting,
        CallOptions {
            retry: RetryPolicy {
                max_attempts: 1,
                ..RetryPolicy::default()
            },
            ..CallOptions::default()
        },
    )
    .await;
    let Err(error) = outcome else {
        panic!("the redirect is refused")
    };
    assert!(error.to_string().contains("redirect"), "{error}");
    assert_eq!(
        requests_made(&base).await,
        0,
        "nothing reached the redirect's target"
    );
}
