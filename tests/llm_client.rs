//! The model client against scripted responses: streaming, retries, timeouts and faults.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::llm::client::{
    call_model, CallError, CallOptions, RecordingSleeper, Scripted, ScriptedEnd, ScriptedTransport,
};
use draftsmith::llm::{
    build_request, Message, ProviderConfig, ProviderKind, RequestOptions, StreamEvent,
};
use futures::executor::block_on;
use serde_json::json;

fn request() -> draftsmith::llm::HttpRequest {
    let config = ProviderConfig {
        kind: ProviderKind::Openai,
        base_url: "http://127.0.0.1:9/v1".into(),
        model: "m".into(),
        api_key: None,
        extra_headers: vec![],
        local: Default::default(),
    };
    build_request(
        &config,
        &[Message::user("hi")],
        &[],
        &RequestOptions {
            stream: true,
            max_tokens: None,
            temperature: None,
            ..RequestOptions::default()
        },
    )
}

fn chunk(delta: serde_json::Value, finish: Option<&str>) -> String {
    format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    )
}

/// Text, then a tool call whose arguments arrive in three pieces.
fn tool_call_stream() -> String {
    [
        chunk(json!({"role": "assistant", "content": "Let me "}), None),
        chunk(json!({"content": "fix that."}), None),
        chunk(json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "update_manuscript", "arguments": ""}}]}), None),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"searchText\": \"da"}}]}), None),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "rk\", \"replacementText\""}}]}), None),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": ": \"lit\"}"}}]}), None),
        chunk(json!({}), Some("tool_calls")),
        format!("data: {}\n\n", json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}})),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat()
}

struct Run {
    outcome: Result<draftsmith::llm::client::CallOutcome, CallError>,
    events: Vec<StreamEvent>,
    requests: usize,
    waits: Vec<u64>,
}

fn run(responses: Vec<Scripted>, options: CallOptions) -> Run {
    let transport = ScriptedTransport::new(responses);
    let sleeper = RecordingSleeper::default();
    let mut events = Vec::new();
    let outcome = block_on(call_model(
        &transport,
        &sleeper,
        ProviderKind::Openai,
        &request(),
        options,
        &|| 1_795_316_400_000,
        &mut || 0.5,
        &mut |e| events.push(e),
    ));
    Run {
        outcome,
        events,
        requests: transport.requests().len(),
        waits: sleeper.waits(),
    }
}

#[test]
fn a_streamed_answer_is_decoded_and_assembled_as_it_arrives() {
    for chunk_size in [1, 7, 64, 100_000] {
        let r = run(
            vec![Scripted::sse(&tool_call_stream(), chunk_size)],
            CallOptions::default(),
        );
        let outcome = r.outcome.expect("success");
        assert_eq!(outcome.answer.text, "Let me fix that.");
        assert_eq!(outcome.answer.tool_calls.len(), 1);
        assert_eq!(
            outcome.answer.tool_calls[0].arguments,
            json!({"searchText": "dark", "replacementText": "lit"})
        );
        assert_eq!(outcome.answer.usage.map(|u| u.output_tokens), Some(5));
        assert_eq!(outcome.attempts, 1);
        assert!(
            matches!(r.events[0], StreamEvent::TextDelta { .. }),
            "events stream as they come"
        );
    }
}

#[test]
fn a_429_with_retry_after_waits_that_long_then_succeeds() {
    let r = run(
        vec![
            Scripted::json(429, r#"{"error": {"message": "Rate limit reached"}}"#)
                .with_header("Retry-After", "3"),
            Scripted::json(503, "{}").with_header("Retry-After", "Sun, 22 Nov 2026 03:00:02 GMT"),
            Scripted::sse(&tool_call_stream(), 50),
        ],
        CallOptions::default(),
    );
    let outcome = r.outcome.expect("success after waiting");
    assert_eq!(outcome.waits_ms, vec![3_000, 2_000]);
    assert!(r.waits.contains(&3_000) && r.waits.contains(&2_000));
    assert_eq!((outcome.attempts, r.requests), (3, 3));
}

#[test]
fn a_401_makes_exactly_one_request_and_reports_the_provider_message() {
    let r = run(
        vec![Scripted::json(
            401,
            r#"{"error": {"message": "Incorrect API key provided"}}"#,
        )],
        CallOptions::default(),
    );
    assert_eq!(r.requests, 1);
    match r.outcome {
        Err(CallError::Http { status, message }) => {
            assert_eq!(status, 401);
            assert!(message.contains("Incorrect API key"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    for status in [400, 403, 404, 422] {
        let r = run(vec![Scripted::json(status, "oops")], CallOptions::default());
        assert_eq!(r.requests, 1, "{status} must not retry");
    }
}

#[test]
fn server_errors_back_off_and_give_up_after_the_bound() {
    let r = run(
        vec![
            Scripted::json(500, "{}"),
            Scripted::json(502, "{}"),
            Scripted::json(500, "{}"),
            Scripted::json(500, "boom"),
        ],
        CallOptions::default(),
    );
    assert!(matches!(
        r.outcome,
        Err(CallError::Http { status: 500, .. })
    ));
    assert_eq!(r.requests, 4);
    let backoff: Vec<u64> = r.waits.iter().copied().filter(|w| *w < 30_000).collect();
    assert_eq!(
        backoff,
        vec![375, 750, 1_500],
        "exponential, with jitter 0.5"
    );
}

#[test]
fn a_stall_hits_the_idle_timeout() {
    let options = CallOptions {
        idle_timeout_ms: 5_000,
        ..CallOptions::default()
    };
    // Before any data: retried, and once everything stalls, a timeout error.
    let stall = || Scripted::sse("", 1).ending(ScriptedEnd::Stall);
    let r = run(vec![stall(), stall(), stall(), stall()], options);
    match r.outcome {
        Err(CallError::Timeout(message)) => {
            assert!(message.contains("nothing for 5 s"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    assert!(r.waits.contains(&5_000));
    // After data began: the answer ends with an error, nothing is retried.
    let partial = Scripted::sse(&chunk(json!({"content": "Half an ans"}), None), 100)
        .ending(ScriptedEnd::Stall);
    let r = run(
        vec![partial, Scripted::sse(&tool_call_stream(), 10)],
        options,
    );
    let answer = r.outcome.expect("an answer with an error").answer;
    assert_eq!(answer.text, "Half an ans");
    assert!(answer.error.unwrap().contains("stopped sending"));
    assert_eq!(r.requests, 1);
}

#[test]
fn a_drop_mid_arguments_leaves_an_invalid_call_that_is_never_executed() {
    let stream = tool_call_stream();
    let cut = stream.find("rk").unwrap();
    let dropped = Scripted::sse(&stream[..cut], 16).ending(ScriptedEnd::Drop);
    let r = run(vec![dropped], CallOptions::default());
    let answer = r.outcome.expect("an answer with an error").answer;
    assert!(
        answer.tool_calls.is_empty(),
        "nothing to execute: {:?}",
        answer.tool_calls
    );
    assert_eq!(answer.invalid_tool_calls.len(), 1);
    assert_eq!(answer.invalid_tool_calls[0].name, "update_manuscript");
    assert!(answer.error.unwrap().contains("dropped"));
    assert_eq!(r.requests, 1);
}

#[test]
fn a_connection_that_fails_before_any_data_is_retried() {
    let r = run(
        vec![
            Scripted::sse("", 1).ending(ScriptedEnd::Drop),
            Scripted::sse(&tool_call_stream(), 32),
        ],
        CallOptions::default(),
    );
    assert_eq!(r.outcome.expect("retried").attempts, 2);
}

#[test]
fn an_error_object_inside_a_200_stream_is_an_error() {
    let stream = format!(
        "{}data: {}\n\n",
        chunk(json!({"content": "Hi"}), None),
        json!({"error": {"message": "The server had an error while processing your request."}})
    );
    let r = run(vec![Scripted::sse(&stream, 10)], CallOptions::default());
    let answer = r.outcome.expect("answer").answer;
    assert!(answer.error.unwrap().contains("server had an error"));
}

#[test]
fn a_whole_json_response_gives_the_same_answer() {
    let body = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "Let me fix that.",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "update_manuscript", "arguments": "{\"searchText\": \"dark\", \"replacementText\": \"lit\"}"}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}});
    let whole = run(
        vec![Scripted::json(200, &body.to_string())],
        CallOptions::default(),
    )
    .outcome
    .unwrap()
    .answer;
    let streamed = run(
        vec![Scripted::sse(&tool_call_stream(), 13)],
        CallOptions::default(),
    )
    .outcome
    .unwrap()
    .answer;
    assert_eq!(whole, streamed);
}
