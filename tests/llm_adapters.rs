//! Provider adapters: request builders, stream decoders and whole-response parsers for
//! OpenAI-compatible servers, Anthropic and Gemini, checked on hand-written transcripts in each
//! provider's wire format and folded by the assembler into an answer.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::llm::assemble::parse_arguments;
use draftsmith::llm::gemini::GeminiStream;
use draftsmith::llm::{
    anthropic, build_request, gemini, openai, parse_response, Answer, Assembler, FinishReason,
    Message, Provider, ProviderConfig, ProviderKind, ProviderStream, RequestOptions, SseMessage,
    StreamEvent, ToolCall, ToolChoice, Usage,
};
use draftsmith::tools::{ToolDefinition, ToolRegistry};
use proptest::prelude::*;
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Splits an SSE transcript on blank lines into (event, data) pairs (data lines joined with
/// `\n`). Test-only: the real parser is incremental.
fn sse(transcript: &str) -> Vec<(Option<String>, String)> {
    transcript
        .split("\n\n")
        .filter_map(|block| {
            let mut event = None;
            let mut data: Vec<&str> = Vec::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    event = Some(v.trim_start().to_string());
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push(v.strip_prefix(' ').unwrap_or(v));
                }
            }
            (event.is_some() || !data.is_empty()).then(|| (event, data.join("\n")))
        })
        .collect()
}

/// Decodes a transcript (then ends the stream) and assembles the answer.
fn replay(kind: ProviderKind, transcript: &str) -> (Vec<StreamEvent>, Answer) {
    let mut stream = ProviderStream::new(kind);
    let mut events = Vec::new();
    for (event, data) in sse(transcript) {
        events.extend(stream.on_event(SseMessage::new(event.as_deref(), &data)));
    }
    events.extend(stream.finish());
    (events.clone(), assemble(&events))
}

fn assemble(events: &[StreamEvent]) -> Answer {
    let mut assembler = Assembler::new();
    assembler.extend(events);
    assembler.finish()
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
    }
}

fn usage(input_tokens: u64, output_tokens: u64) -> Option<Usage> {
    Some(Usage {
        input_tokens,
        output_tokens,
    })
}

/// One OpenAI chunk with `delta` and `finish_reason` (null unless given).
fn chunk(delta: Value, finish: Option<&str>) -> String {
    format!(
        "data: {}\n\n",
        json!({"id": "chatcmpl-9x", "object": "chat.completion.chunk", "created": 1736940000,
               "model": "gpt-4o-mini", "system_fingerprint": "fp_44709d6fcb",
               "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
               "usage": null})
    )
}

/// An OpenAI tool-call fragment chunk.
fn fragment(index: usize, arguments: &str) -> String {
    chunk(
        json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}),
        None,
    )
}

/// An OpenAI tool-call start chunk.
fn start(index: usize, id: &str, name: &str) -> String {
    chunk(
        json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                "function": {"name": name, "arguments": ""}}]}),
        None,
    )
}

const OPENAI_USAGE: &str = r#"data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1736940000,"model":"gpt-4o-mini","system_fingerprint":"fp_44709d6fcb","choices":[],"usage":{"prompt_tokens":420,"completion_tokens":37,"total_tokens":457,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}

data: [DONE]

"#;

// ---------------------------------------------------------------------------------------------
// OpenAI-compatible streams
// ---------------------------------------------------------------------------------------------

#[test]
fn openai_text_only() {
    let transcript = [
        chunk(
            json!({"role": "assistant", "content": "", "refusal": null}),
            None,
        ),
        chunk(json!({"content": "The rain"}), None),
        chunk(json!({"content": " kept falling, “soft” as ash."}), None),
        chunk(json!({}), Some("stop")),
        OPENAI_USAGE.to_string(),
    ]
    .concat();
    let (events, answer) = replay(ProviderKind::Openai, &transcript);
    assert_eq!(answer.text, "The rain kept falling, “soft” as ash.");
    assert!(answer.tool_calls.is_empty() && answer.invalid_tool_calls.is_empty());
    assert_eq!(answer.finish_reason, Some(FinishReason::Stop));
    assert_eq!(answer.usage, usage(420, 37));
    assert_eq!(answer.error, None);
    assert_eq!(
        events.first(),
        Some(&StreamEvent::TextDelta {
            text: "The rain".into()
        })
    );
}

#[test]
fn openai_one_tool_call() {
    let transcript = include_str!("../examples/streams/openai_tool_call.sse");
    let (events, answer) = replay(ProviderKind::Openai, transcript);
    assert_eq!(answer.text, "Let me find that scene.");
    assert_eq!(
        answer.tool_calls,
        vec![call(
            "call_Vq3nE8xK2mT1",
            "navigate_to_text",
            json!({"query": "the lighthouse keeper", "chapter": 3})
        )]
    );
    assert!(answer.invalid_tool_calls.is_empty());
    assert_eq!(answer.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(answer.usage, usage(812, 31));
    assert_eq!(answer.error, None);
    // Started, seven fragments, finished before the finish reason.
    let finished = events
        .iter()
        .position(|e| *e == StreamEvent::ToolCallFinished { index: 0 });
    let finish = events
        .iter()
        .position(|e| matches!(e, StreamEvent::Finish { .. }));
    assert!(finished.is_some() && finished < finish);
    let deltas = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCallDelta { .. }))
        .count();
    assert_eq!(deltas, 7);
}

#[test]
fn openai_parallel_tool_calls_interleaved() {
    let transcript = [
        chunk(json!({"role": "assistant", "content": null}), None),
        start(0, "call_A1", "navigate_to_text"),
        start(1, "call_B2", "update_manuscript"),
        fragment(1, "{\"searchText\":\"grey"),
        fragment(0, "{\"query\":"),
        fragment(1, " sky\",\"replacementText\":\"leaden sky\""),
        fragment(0, "\"harbour\"}"),
        fragment(1, ",\"description\":\"darker\"}"),
        chunk(json!({}), Some("tool_calls")),
        OPENAI_USAGE.to_string(),
    ]
    .concat();
    let (_, answer) = replay(ProviderKind::Openai, &transcript);
    assert_eq!(
        answer.tool_calls,
        vec![
            call("call_A1", "navigate_to_text", json!({"query": "harbour"})),
            call(
                "call_B2",
                "update_manuscript",
                json!({"searchText": "grey sky", "replacementText": "leaden sky",
                       "description": "darker"})
            ),
        ]
    );
    assert_eq!(answer.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(answer.text, "");
}

#[test]
fn openai_length_mid_arguments_is_invalid() {
    let transcript = [
        start(0, "call_A1", "update_manuscript"),
        fragment(0, "{\"searchText\":\"The rain"),
        fragment(0, " fell\",\"replacementText\":\"The ra"),
        chunk(json!({}), Some("length")),
        OPENAI_USAGE.to_string(),
    ]
    .concat();
    let (events, answer) = replay(ProviderKind::Openai, &transcript);
    assert!(answer.tool_calls.is_empty(), "never executed");
    assert_eq!(answer.invalid_tool_calls.len(), 1);
    let invalid = &answer.invalid_tool_calls[0];
    assert_eq!(invalid.id, "call_A1");
    assert_eq!(invalid.name, "update_manuscript");
    assert_eq!(
        invalid.raw_arguments,
        "{\"searchText\":\"The rain fell\",\"replacementText\":\"The ra"
    );
    assert!(
        invalid.reason.contains("output token limit"),
        "{}",
        invalid.reason
    );
    assert_eq!(answer.finish_reason, Some(FinishReason::Length));
    assert_eq!(answer.error, None);
    assert!(!events
        .iter()
        .any(|e| matches!(e, StreamEvent::ToolCallFinished { .. })));
}

#[test]
fn openai_stream_ending_mid_arguments_is_invalid() {
    // The connection drops: no finish reason, no [DONE].
    let transcript = [
        chunk(json!({"content": "Changing it now."}), None),
        start(0, "call_A1", "update_manuscript"),
        fragment(0, "{\"searchText\":\"The rain"),
    ]
    .concat();
    let (_, answer) = replay(ProviderKind::Openai, &transcript);
    assert_eq!(answer.text, "Changing it now.");
    assert!(answer.tool_calls.is_empty());
    assert_eq!(answer.invalid_tool_calls.len(), 1);
    assert!(
        answer.invalid_tool_calls[0]
            .reason
            .contains("before the arguments were complete"),
        "{}",
        answer.invalid_tool_calls[0].reason
    );
    assert_eq!(answer.finish_reason, None);
    assert!(answer
        .error
        .as_deref()
        .unwrap_or("")
        .contains("ended before"));
}

#[test]
fn openai_error_object_mid_stream() {
    let transcript = [
        chunk(json!({"content": "Here is"}), None),
        start(0, "call_A1", "navigate_to_text"),
        fragment(0, "{\"query\":\"har"),
        "data: {\"error\":{\"message\":\"The server had an error while processing your request. Sorry about that!\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n".to_string(),
    ]
    .concat();
    let (events, answer) = replay(ProviderKind::Openai, &transcript);
    assert_eq!(answer.text, "Here is");
    assert_eq!(
        answer.error.as_deref(),
        Some("server_error: The server had an error while processing your request. Sorry about that!")
    );
    assert!(answer.tool_calls.is_empty());
    assert!(answer.invalid_tool_calls[0]
        .reason
        .contains("reported an error"));
    // One error only: finish() does not add "ended early" after a reported error.
    let errors = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Error { .. }))
        .count();
    assert_eq!(errors, 1);
}

#[test]
fn openai_malformed_json_is_an_error_event() {
    let mut stream = openai::OpenAiStream::new();
    let events = stream.on_event(SseMessage::data("{\"choices\": [{\"delta\": "));
    match events.as_slice() {
        [StreamEvent::Error { message }] => {
            assert!(message.contains("malformed JSON"), "{message}");
            assert!(message.contains("OpenAI"), "{message}");
        }
        other => panic!("expected one error, got {other:?}"),
    }
}

#[test]
fn openai_compatible_server_quirks() {
    // Ollama-style: the whole call in one fragment without `index`, and `stop` as the reason.
    let transcript = [
        chunk(
            json!({"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_k2", "type": "function",
                 "function": {"name": "jump_to_chapter", "arguments": "{\"chapter\":2}"}}]}),
            None,
        ),
        chunk(json!({"content": ""}), Some("stop")),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    let (_, answer) = replay(ProviderKind::Openai, &transcript);
    assert_eq!(
        answer.tool_calls,
        vec![call("call_k2", "jump_to_chapter", json!({"chapter": 2}))]
    );
    assert_eq!(answer.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(answer.usage, None);

    // Two calls both at index 0, told apart by their ids; no ids at all are synthesized.
    let transcript = [
        start(0, "call_1", "jump_to_chapter"),
        fragment(0, "{\"chapter\":1}"),
        start(0, "call_2", "jump_to_chapter"),
        fragment(0, "{\"chapter\":4}"),
        chunk(json!({}), Some("tool_calls")),
    ]
    .concat();
    let (_, answer) = replay(ProviderKind::Openai, &transcript);
    assert_eq!(
        answer.tool_calls,
        vec![
            call("call_1", "jump_to_chapter", json!({"chapter": 1})),
            call("call_2", "jump_to_chapter", json!({"chapter": 4})),
        ]
    );
    let transcript = [
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"name": "jump_to_chapter", "arguments": ""}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ]
    .concat();
    let (_, answer) = replay(ProviderKind::Openai, &transcript);
    assert_eq!(
        answer.tool_calls,
        vec![call("call_0", "jump_to_chapter", json!({}))],
        "empty arguments count as {{}}"
    );
}

#[test]
fn openai_bad_arguments_are_invalid() {
    let transcript = [
        start(0, "call_1", "jump_to_chapter"),
        fragment(0, "{\"chapter\": 2,}"),
        start(1, "call_2", "jump_to_chapter"),
        fragment(1, "[2]"),
        start(2, "call_3", "jump_to_chapter"),
        fragment(2, "{\"chapter\": 5}"),
        chunk(json!({}), Some("tool_calls")),
    ]
    .concat();
    let (_, answer) = replay(ProviderKind::Openai, &transcript);
    assert_eq!(
        answer.tool_calls,
        vec![call("call_3", "jump_to_chapter", json!({"chapter": 5}))]
    );
    let reasons: Vec<&str> = answer
        .invalid_tool_calls
        .iter()
        .map(|c| c.reason.as_str())
        .collect();
    assert!(reasons[0].contains("not valid JSON"), "{}", reasons[0]);
    assert!(
        reasons[1].contains("JSON object, not an array"),
        "{}",
        reasons[1]
    );
}

#[test]
fn openai_non_streamed_response_matches_the_stream() {
    let body = r#"{
      "id": "chatcmpl-AqX1", "object": "chat.completion", "created": 1736940000,
      "model": "gpt-4o-mini-2024-07-18",
      "choices": [{
        "index": 0,
        "message": {
          "role": "assistant", "content": "Let me find that scene.", "refusal": null,
          "tool_calls": [{"id": "call_Vq3nE8xK2mT1", "type": "function",
            "function": {"name": "navigate_to_text",
                         "arguments": "{\"query\":\"the lighthouse keeper\",\"chapter\":3}"}}]
        },
        "logprobs": null, "finish_reason": "tool_calls"
      }],
      "usage": {"prompt_tokens": 812, "completion_tokens": 31, "total_tokens": 843},
      "system_fingerprint": "fp_f2cd28694a"
    }"#;
    let whole = assemble(&openai::OpenAi.parse_response(body).unwrap());
    let (_, streamed) = replay(
        ProviderKind::Openai,
        include_str!("../examples/streams/openai_tool_call.sse"),
    );
    assert_eq!(whole, streamed);

    let error = r#"{"error": {"message": "Incorrect API key provided: sk-abc.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}"#;
    let answer = assemble(&parse_response(ProviderKind::Openai, error).unwrap());
    assert_eq!(
        answer.error.as_deref(),
        Some("invalid_request_error: Incorrect API key provided: sk-abc.")
    );
    assert!(openai::OpenAi
        .parse_response("<html>502 Bad Gateway</html>")
        .unwrap_err()
        .contains("not JSON"));
}

// ---------------------------------------------------------------------------------------------
// Anthropic streams
// ---------------------------------------------------------------------------------------------

/// An Anthropic SSE event.
fn ev(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn message_start() -> String {
    ev(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_014p7gG3wDgGV9EUtLvnow3U",
            "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 472, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 2048, "output_tokens": 2}}}),
    )
}

fn block_start(index: usize, block: Value) -> String {
    ev(
        "content_block_start",
        json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}

fn text_delta(index: usize, text: &str) -> String {
    ev(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index,
               "delta": {"type": "text_delta", "text": text}}),
    )
}

fn json_delta(index: usize, partial: &str) -> String {
    ev(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index,
               "delta": {"type": "input_json_delta", "partial_json": partial}}),
    )
}

fn block_stop(index: usize) -> String {
    ev(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": index}),
    )
}

fn message_delta(stop_reason: &str, output_tokens: u64) -> String {
    ev(
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": output_tokens}}),
    )
}

fn message_stop() -> String {
    ev("message_stop", json!({"type": "message_stop"}))
}

fn tool_use(id: &str, name: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": {}})
}

#[test]
fn anthropic_text_only() {
    let transcript = [
        message_start(),
        block_start(0, json!({"type": "text", "text": ""})),
        ev("ping", json!({"type": "ping"})),
        text_delta(0, "The chapter"),
        text_delta(0, " opens in fog."),
        block_stop(0),
        message_delta("end_turn", 15),
        message_stop(),
    ]
    .concat();
    let (events, answer) = replay(ProviderKind::Anthropic, &transcript);
    assert_eq!(answer.text, "The chapter opens in fog.");
    assert_eq!(answer.finish_reason, Some(FinishReason::Stop));
    // Cache reads count as input.
    assert_eq!(answer.usage, usage(2520, 15));
    assert_eq!(answer.error, None);
    assert_eq!(
        events.first(),
        Some(&StreamEvent::Usage {
            usage: Usage {
                input_tokens: 2520,
                output_tokens: 2
            }
        })
    );
}

#[test]
fn anthropic_one_tool_call() {
    let (_, answer) = replay(
        ProviderKind::Anthropic,
        include_str!("../examples/streams/anthropic_tool_call.sse"),
    );
    assert_eq!(answer.text, "I'll make the rain heavier in that paragraph.");
    assert_eq!(
        answer.tool_calls,
        vec![call(
            "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            "update_manuscript",
            json!({"searchText": "The rain fell softly.",
                   "replacementText": "The rain came down in sheets.",
                   "description": "heavier rain"})
        )]
    );
    assert_eq!(answer.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(answer.usage, usage(1024, 89));
}

#[test]
fn anthropic_parallel_tool_use_blocks() {
    let transcript = [
        message_start(),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, "Two things."),
        block_stop(0),
        block_start(1, tool_use("toolu_01A", "jump_to_chapter")),
        json_delta(1, ""),
        json_delta(1, "{\"chapter\": "),
        json_delta(1, "7}"),
        block_stop(1),
        block_start(2, tool_use("toolu_01B", "navigate_to_text")),
        json_delta(2, "{\"query\": \"the locked dra"),
        json_delta(2, "wer\"}"),
        block_stop(2),
        block_start(3, tool_use("toolu_01C", "jump_to_scene")),
        // No input deltas at all: empty arguments.
        block_stop(3),
        message_delta("tool_use", 120),
        message_stop(),
    ]
    .concat();
    let (events, answer) = replay(ProviderKind::Anthropic, &transcript);
    assert_eq!(answer.text, "Two things.");
    assert_eq!(
        answer.tool_calls,
        vec![
            call("toolu_01A", "jump_to_chapter", json!({"chapter": 7})),
            call(
                "toolu_01B",
                "navigate_to_text",
                json!({"query": "the locked drawer"})
            ),
            call("toolu_01C", "jump_to_scene", json!({})),
        ]
    );
    assert_eq!(answer.finish_reason, Some(FinishReason::ToolCalls));
    let finished: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallFinished { index } => Some(*index),
            _ => None,
        })
        .collect();
    assert_eq!(finished, vec![0, 1, 2]);
}

#[test]
fn anthropic_max_tokens_mid_arguments_is_invalid() {
    // The API closes the cut-off block with content_block_stop before saying max_tokens.
    let transcript = [
        message_start(),
        block_start(0, tool_use("toolu_01A", "jump_to_chapter")),
        json_delta(0, "{\"chapter\": 7}"),
        block_stop(0),
        block_start(1, tool_use("toolu_01B", "update_manuscript")),
        json_delta(1, "{\"searchText\": \"It was a dark and st"),
        block_stop(1),
        message_delta("max_tokens", 4096),
        message_stop(),
    ]
    .concat();
    let (_, answer) = replay(ProviderKind::Anthropic, &transcript);
    assert_eq!(
        answer.tool_calls,
        vec![call("toolu_01A", "jump_to_chapter", json!({"chapter": 7}))],
        "the complete earlier call stays valid"
    );
    assert_eq!(answer.invalid_tool_calls.len(), 1);
    let invalid = &answer.invalid_tool_calls[0];
    assert_eq!(invalid.id, "toolu_01B");
    assert_eq!(
        invalid.raw_arguments,
        "{\"searchText\": \"It was a dark and st"
    );
    assert!(
        invalid.reason.contains("output token limit"),
        "{}",
        invalid.reason
    );
    assert_eq!(answer.finish_reason, Some(FinishReason::Length));

    // Even empty arguments cut off by max_tokens are not taken as {}.
    let transcript = [
        message_start(),
        block_start(0, tool_use("toolu_01A", "jump_to_scene")),
        block_stop(0),
        message_delta("max_tokens", 4096),
    ]
    .concat();
    let (_, answer) = replay(ProviderKind::Anthropic, &transcript);
    assert!(answer.tool_calls.is_empty());
    assert_eq!(answer.invalid_tool_calls.len(), 1);
}

#[test]
fn anthropic_stream_ending_mid_arguments_is_invalid() {
    let transcript = [
        message_start(),
        block_start(0, tool_use("toolu_01A", "navigate_to_text")),
        json_delta(0, "{\"query\": \"the lock"),
    ]
    .concat();
    let (_, answer) = replay(ProviderKind::Anthropic, &transcript);
    assert!(answer.tool_calls.is_empty());
    assert_eq!(
        answer.invalid_tool_calls[0].raw_arguments,
        "{\"query\": \"the lock"
    );
    assert_eq!(answer.finish_reason, None);
    assert!(answer.error.is_some());
}

#[test]
fn anthropic_error_event_mid_stream() {
    let transcript = [
        message_start(),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, "Let me"),
        ev(
            "error",
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ]
    .concat();
    let (events, answer) = replay(ProviderKind::Anthropic, &transcript);
    assert_eq!(answer.text, "Let me");
    assert_eq!(
        answer.error.as_deref(),
        Some("overloaded_error: Overloaded")
    );
    assert_eq!(answer.finish_reason, None);
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::Error { .. }))
            .count(),
        1
    );

    let mut stream = anthropic::AnthropicStream::new();
    let events = stream.on_event(SseMessage::new(Some("content_block_delta"), "{\"type\":"));
    assert!(
        matches!(&events[..], [StreamEvent::Error { message }] if message.contains("malformed JSON"))
    );
}

#[test]
fn anthropic_thinking_blocks_are_skipped() {
    let transcript = [
        message_start(),
        block_start(0, json!({"type": "thinking", "thinking": ""})),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "thinking_delta", "thinking": "The user wants..."}}),
        ),
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}}),
        ),
        block_stop(0),
        block_start(1, json!({"type": "text", "text": ""})),
        text_delta(1, "Done."),
        block_stop(1),
        message_delta("end_turn", 30),
        message_stop(),
    ]
    .concat();
    let (_, answer) = replay(ProviderKind::Anthropic, &transcript);
    assert_eq!(answer.text, "Done.");
    assert_eq!(answer.finish_reason, Some(FinishReason::Stop));
}

#[test]
fn anthropic_non_streamed_response() {
    let body = r#"{
      "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
      "model": "claude-sonnet-4-5-20250929",
      "content": [
        {"type": "text", "text": "I'll make the rain heavier in that paragraph."},
        {"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "update_manuscript",
         "input": {"searchText": "The rain fell softly.",
                   "replacementText": "The rain came down in sheets.",
                   "description": "heavier rain"}}
      ],
      "stop_reason": "tool_use", "stop_sequence": null,
      "usage": {"input_tokens": 1024, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0, "output_tokens": 89}
    }"#;
    let whole = assemble(&anthropic::Anthropic.parse_response(body).unwrap());
    let (_, streamed) = replay(
        ProviderKind::Anthropic,
        include_str!("../examples/streams/anthropic_tool_call.sse"),
    );
    assert_eq!(whole, streamed);

    // Cut off by max_tokens: the last tool_use block may be incomplete.
    let body = r#"{"id": "msg_02", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
      "content": [{"type": "tool_use", "id": "toolu_9", "name": "update_manuscript",
                   "input": {"searchText": "It was"}}],
      "stop_reason": "max_tokens", "stop_sequence": null,
      "usage": {"input_tokens": 10, "output_tokens": 4096}}"#;
    let answer = assemble(&anthropic::Anthropic.parse_response(body).unwrap());
    assert!(answer.tool_calls.is_empty());
    assert_eq!(answer.invalid_tool_calls[0].id, "toolu_9");

    let error = r#"{"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"}, "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}"#;
    let answer = assemble(&parse_response(ProviderKind::Anthropic, error).unwrap());
    assert_eq!(
        answer.error.as_deref(),
        Some("invalid_request_error: max_tokens: Field required")
    );
}

// ---------------------------------------------------------------------------------------------
// Gemini streams
// ---------------------------------------------------------------------------------------------

/// A Gemini SSE event: a `GenerateContentResponse` with `parts`, an optional finish reason
/// and usage.
fn gemini_event(parts: Value, finish: Option<&str>, prompt: u64, candidates: u64) -> String {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if let Some(finish) = finish {
        candidate["finishReason"] = json!(finish);
    }
    format!(
        "data: {}\n\n",
        json!({"candidates": [candidate],
               "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": candidates,
                                 "totalTokenCount": prompt + candidates},
               "modelVersion": "gemini-2.5-flash", "responseId": "mH1sZ5uUKsDv1PIPp8SI8Ak"})
    )
}

#[test]
fn gemini_text_only() {
    let transcript = [
        gemini_event(json!([{"text": "Fog rolls"}]), None, 310, 3),
        gemini_event(json!([{"text": " in from the sea."}]), None, 310, 9),
        gemini_event(json!([{"text": ""}]), Some("STOP"), 310, 9),
    ]
    .concat();
    let (_, answer) = replay(ProviderKind::Gemini, &transcript);
    assert_eq!(answer.text, "Fog rolls in from the sea.");
    assert_eq!(answer.finish_reason, Some(FinishReason::Stop));
    assert_eq!(answer.usage, usage(310, 9));
    assert_eq!(answer.error, None);
}

#[test]
fn gemini_one_function_call() {
    let (events, answer) = replay(
        ProviderKind::Gemini,
        include_str!("../examples/streams/gemini_tool_call.sse"),
    );
    assert_eq!(answer.text, "Jumping to the storm scene.");
    assert_eq!(
        answer.tool_calls,
        vec![call(
            "call_0",
            "jump_to_scene",
            json!({"direction": "next", "sceneType": "action"})
        )]
    );
    assert_eq!(answer.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(answer.usage, usage(640, 27));
    // Started, one delta with the whole arguments, finished.
    let call_events: Vec<&StreamEvent> = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                StreamEvent::ToolCallStarted { .. }
                    | StreamEvent::ToolCallDelta { .. }
                    | StreamEvent::ToolCallFinished { .. }
            )
        })
        .collect();
    assert_eq!(call_events.len(), 3);
}

#[test]
fn gemini_parallel_function_calls() {
    let transcript = gemini_event(
        json!([
            {"functionCall": {"name": "jump_to_chapter", "args": {"chapter": 12}},
             "thoughtSignature": "CiQB0e2Kb3dRh+BYdbZvmulSN2Pwwc75DmLQ9WS2Iw=="},
            {"functionCall": {"name": "navigate_to_text", "args": {"query": "the ferryman"}}}
        ]),
        Some("STOP"),
        900,
        41,
    );
    let mut stream = GeminiStream::with_id_prefix("t3_call_");
    let mut events = Vec::new();
    for (event, data) in sse(&transcript) {
        events.extend(stream.on_event(SseMessage::new(event.as_deref(), &data)));
    }
    events.extend(stream.finish());
    let answer = assemble(&events);
    assert_eq!(
        answer.tool_calls,
        vec![
            call("t3_call_0", "jump_to_chapter", json!({"chapter": 12})),
            call(
                "t3_call_1",
                "navigate_to_text",
                json!({"query": "the ferryman"})
            ),
        ]
    );
    assert_eq!(answer.finish_reason, Some(FinishReason::ToolCalls));
}

#[test]
fn gemini_max_tokens_and_dropped_streams() {
    // MAX_TOKENS: function calls arrive whole, so none is ever half-received; the text is
    // simply cut off.
    let transcript = [
        gemini_event(json!([{"text": "She opened the"}]), None, 50, 4),
        gemini_event(json!([{"text": " door and"}]), Some("MAX_TOKENS"), 50, 8),
    ]
    .concat();
    let (_, answer) = replay(ProviderKind::Gemini, &transcript);
    assert_eq!(answer.text, "She opened the door and");
    assert_eq!(answer.finish_reason, Some(FinishReason::Length));

    // A call the model could not finish comes as MALFORMED_FUNCTION_CALL, without the call.
    let transcript = gemini_event(json!([]), Some("MALFORMED_FUNCTION_CALL"), 50, 0);
    let (_, answer) = replay(ProviderKind::Gemini, &transcript);
    assert!(answer.tool_calls.is_empty());
    assert_eq!(
        answer.finish_reason,
        Some(FinishReason::Other("malformed_function_call".into()))
    );

    // The connection drops after a complete call: the call is whole, the answer is not.
    let transcript = gemini_event(
        json!([{"functionCall": {"name": "jump_to_chapter", "args": {"chapter": 2}}}]),
        None,
        50,
        6,
    );
    let (_, answer) = replay(ProviderKind::Gemini, &transcript);
    assert_eq!(answer.tool_calls.len(), 1);
    assert_eq!(answer.finish_reason, None);
    assert!(answer
        .error
        .as_deref()
        .unwrap_or("")
        .contains("ended before"));

    // The connection drops mid-event: the (complete-event) parser never delivers it, and a
    // truncated payload that does arrive is malformed, not a call.
    let mut stream = GeminiStream::new();
    let events = stream.on_event(SseMessage::data(
        r#"{"candidates": [{"content": {"parts": [{"functionCall": {"name": "jump_to_chapter", "args": {"chap"#,
    ));
    let answer = assemble(&events);
    assert!(answer.tool_calls.is_empty() && answer.invalid_tool_calls.is_empty());
    assert!(answer
        .error
        .as_deref()
        .unwrap_or("")
        .contains("malformed JSON"));
}

#[test]
fn gemini_safety_is_content_filter() {
    let transcript = gemini_event(json!([{"text": "I"}]), Some("SAFETY"), 20, 1);
    let (_, answer) = replay(ProviderKind::Gemini, &transcript);
    assert_eq!(answer.finish_reason, Some(FinishReason::ContentFilter));

    let blocked = r#"data: {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 20, "totalTokenCount": 20}}"#;
    let (_, answer) = replay(ProviderKind::Gemini, blocked);
    assert_eq!(answer.finish_reason, Some(FinishReason::ContentFilter));
    assert_eq!(answer.usage, usage(20, 0));
}

#[test]
fn gemini_error_object_mid_stream() {
    let transcript = [
        gemini_event(json!([{"text": "The harbour"}]), None, 70, 2),
        "data: {\"error\": {\"code\": 503, \"message\": \"The model is overloaded. Please try again later.\", \"status\": \"UNAVAILABLE\"}}\n\n".to_string(),
    ]
    .concat();
    let (events, answer) = replay(ProviderKind::Gemini, &transcript);
    assert_eq!(answer.text, "The harbour");
    assert_eq!(
        answer.error.as_deref(),
        Some("UNAVAILABLE: The model is overloaded. Please try again later.")
    );
    assert_eq!(answer.finish_reason, None);
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::Error { .. }))
            .count(),
        1
    );
}

#[test]
fn gemini_thoughts_are_skipped_and_thinking_tokens_count_as_output() {
    let transcript = format!(
        "data: {}\n\n",
        json!({"candidates": [{"content": {"parts": [
                {"text": "Considering the scene order...", "thought": true},
                {"text": "Chapter 3 comes first."}], "role": "model"},
               "finishReason": "STOP", "index": 0}],
               "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 6,
                                 "thoughtsTokenCount": 250, "totalTokenCount": 356}})
    );
    let (_, answer) = replay(ProviderKind::Gemini, &transcript);
    assert_eq!(answer.text, "Chapter 3 comes first.");
    assert_eq!(answer.usage, usage(100, 256));
}

#[test]
fn gemini_non_streamed_response() {
    let body = r#"{
      "candidates": [{
        "content": {"parts": [
          {"text": "Jumping to the storm scene."},
          {"functionCall": {"name": "jump_to_scene", "args": {"direction": "next", "sceneType": "action"}}}
        ], "role": "model"},
        "finishReason": "STOP", "index": 0
      }],
      "usageMetadata": {"promptTokenCount": 640, "candidatesTokenCount": 27, "totalTokenCount": 667},
      "modelVersion": "gemini-2.5-flash"
    }"#;
    let whole = assemble(&gemini::Gemini.parse_response(body).unwrap());
    let (_, streamed) = replay(
        ProviderKind::Gemini,
        include_str!("../examples/streams/gemini_tool_call.sse"),
    );
    assert_eq!(whole, streamed);

    let error = r#"{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT"}}"#;
    let answer = assemble(&parse_response(ProviderKind::Gemini, error).unwrap());
    assert_eq!(
        answer.error.as_deref(),
        Some("INVALID_ARGUMENT: API key not valid. Please pass a valid API key.")
    );
}

// ---------------------------------------------------------------------------------------------
// Request builders
// ---------------------------------------------------------------------------------------------

fn config(kind: ProviderKind, base_url: &str, model: &str, key: Option<&str>) -> ProviderConfig {
    ProviderConfig {
        kind,
        base_url: base_url.into(),
        model: model.into(),
        api_key: key.map(str::to_string),
        extra_headers: Vec::new(),
        local: Default::default(),
    }
}

/// A conversation with two parallel tool calls and their results.
fn conversation() -> Vec<Message> {
    let find = call(
        "call_1",
        "navigate_to_text",
        json!({"query": "the lighthouse"}),
    );
    let edit = call(
        "call_2",
        "update_manuscript",
        json!({"searchText": "rain", "replacementText": "downpour", "description": "heavier"}),
    );
    let mut result_without_name =
        Message::tool_result(&edit, r#"{"status":"success","data":{"replaced":1}}"#);
    result_without_name.name = None;
    vec![
        Message::system("You are a careful editor."),
        Message::user("Find the lighthouse scene and make the rain heavier."),
        Message::assistant("On it.", vec![find.clone(), edit.clone()]),
        Message::tool_result(&find, r#"{"status":"success","data":{"chapter":3}}"#),
        result_without_name,
        Message::user("Thanks!"),
    ]
}

fn quick_tools(registry: &ToolRegistry) -> Vec<&ToolDefinition> {
    registry.toolset("quick").unwrap()
}

fn json_body(request: &draftsmith::llm::HttpRequest) -> Value {
    serde_json::from_str(&request.body).unwrap()
}

#[test]
fn openai_request() {
    let registry = ToolRegistry::standard();
    let tools = quick_tools(&registry);
    let options = RequestOptions {
        stream: true,
        max_tokens: Some(1000),
        temperature: Some(0.7),
        ..RequestOptions::default()
    };
    let request = openai::OpenAi.build_request(
        &config(
            ProviderKind::Openai,
            "https://api.openai.com/v1/",
            "gpt-4o-mini",
            Some("sk-test"),
        ),
        &conversation(),
        &tools,
        &options,
    );
    assert_eq!(request.method, "POST");
    assert_eq!(request.url, "https://api.openai.com/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    let body = json_body(&request);
    assert_eq!(body["model"], "gpt-4o-mini");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_completion_tokens"], 1000);
    assert_eq!(body["temperature"], 0.7);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are a careful editor."},
            {"role": "user", "content": "Find the lighthouse scene and make the rain heavier."},
            {"role": "assistant", "content": "On it.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "navigate_to_text",
                    "arguments": "{\"query\":\"the lighthouse\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "update_manuscript",
                    "arguments": "{\"description\":\"heavier\",\"replacementText\":\"downpour\",\"searchText\":\"rain\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "{\"status\":\"success\",\"data\":{\"chapter\":3}}"},
            {"role": "tool", "tool_call_id": "call_2", "content": "{\"status\":\"success\",\"data\":{\"replaced\":1}}"},
            {"role": "user", "content": "Thanks!"}
        ])
    );
    let tools_json = body["tools"].as_array().unwrap();
    assert_eq!(tools_json.len(), tools.len());
    assert_eq!(tools_json[0]["type"], "function");
    assert_eq!(tools_json[0]["function"]["name"], tools[0].name.as_ref());
    assert_eq!(tools_json[0]["function"]["parameters"]["type"], "object");

    // A local server: no key, no Authorization header; `max_tokens`; no stream options.
    let local = config(
        ProviderKind::Openai,
        "http://localhost:11434/v1",
        "llama3.1",
        None,
    );
    let request = build_request(
        &local,
        &[Message::user("Hi")],
        &[],
        &RequestOptions {
            max_tokens: Some(64),
            ..RequestOptions::default()
        },
    );
    assert_eq!(request.url, "http://localhost:11434/v1/chat/completions");
    assert_eq!(request.header("authorization"), None);
    assert!(request
        .headers
        .iter()
        .all(|(n, _)| !n.eq_ignore_ascii_case("authorization")));
    let body = json_body(&request);
    assert_eq!(body["max_tokens"], 64);
    assert!(body.get("stream").is_none() && body.get("stream_options").is_none());
    assert!(body.get("tools").is_none(), "no empty tools list");

    // An assistant message with only tool calls has null content.
    let only_calls = Message::assistant(
        "",
        vec![call("c", "jump_to_chapter", json!({"chapter": 1}))],
    );
    let request =
        openai::OpenAi.build_request(&local, &[only_calls], &[], &RequestOptions::default());
    assert_eq!(json_body(&request)["messages"][0]["content"], Value::Null);
}

#[test]
fn extra_headers_add_and_replace() {
    let mut cfg = config(
        ProviderKind::Anthropic,
        "https://api.anthropic.com",
        "claude-haiku-4-5",
        Some("k"),
    );
    cfg.extra_headers = vec![
        ("Anthropic-Version".into(), "2024-01-01".into()),
        ("anthropic-beta".into(), "prompt-caching-2024-07-31".into()),
    ];
    let request = build_request(
        &cfg,
        &[Message::user("Hi")],
        &[],
        &RequestOptions::default(),
    );
    assert_eq!(request.header("anthropic-version"), Some("2024-01-01"));
    assert_eq!(
        request
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("anthropic-version"))
            .count(),
        1
    );
    assert_eq!(
        request.header("anthropic-beta"),
        Some("prompt-caching-2024-07-31")
    );
}

#[test]
fn anthropic_request() {
    let registry = ToolRegistry::standard();
    let tools = quick_tools(&registry);
    let request = anthropic::Anthropic.build_request(
        &config(
            ProviderKind::Anthropic,
            "https://api.anthropic.com",
            "claude-sonnet-4-5",
            Some("sk-ant-test"),
        ),
        &conversation(),
        &tools,
        &RequestOptions {
            stream: true,
            ..RequestOptions::default()
        },
    );
    assert_eq!(request.url, "https://api.anthropic.com/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        request.header("anthropic-dangerous-direct-browser-access"),
        Some("true")
    );
    assert_eq!(request.header("authorization"), None);
    let body = json_body(&request);
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["stream"], true);
    assert_eq!(body["system"], "You are a careful editor.");
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [
                {"type": "text", "text": "Find the lighthouse scene and make the rain heavier."}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "On it."},
                {"type": "tool_use", "id": "call_1", "name": "navigate_to_text",
                 "input": {"query": "the lighthouse"}},
                {"type": "tool_use", "id": "call_2", "name": "update_manuscript",
                 "input": {"searchText": "rain", "replacementText": "downpour", "description": "heavier"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1",
                 "content": "{\"status\":\"success\",\"data\":{\"chapter\":3}}"},
                {"type": "tool_result", "tool_use_id": "call_2",
                 "content": "{\"status\":\"success\",\"data\":{\"replaced\":1}}"},
                {"type": "text", "text": "Thanks!"}
            ]}
        ])
    );
    let tools_json = body["tools"].as_array().unwrap();
    assert_eq!(tools_json.len(), tools.len());
    assert_eq!(tools_json[0]["name"], tools[0].name.as_ref());
    assert_eq!(tools_json[0]["input_schema"]["type"], "object");
    assert!(tools_json[0].get("type").is_none());

    // No key: no x-api-key (a proxy may add it); the version header stays.
    let request = anthropic::Anthropic.build_request(
        &config(
            ProviderKind::Anthropic,
            "http://localhost:8080/",
            "claude",
            None,
        ),
        &[Message::user("Hi")],
        &[],
        &RequestOptions {
            max_tokens: Some(200),
            ..RequestOptions::default()
        },
    );
    assert_eq!(request.url, "http://localhost:8080/v1/messages");
    assert_eq!(request.header("x-api-key"), None);
    let body = json_body(&request);
    assert_eq!(body["max_tokens"], 200);
    assert!(body.get("system").is_none() && body.get("stream").is_none());
}

#[test]
fn gemini_request() {
    let registry = ToolRegistry::standard();
    let tools = quick_tools(&registry);
    let cfg = config(
        ProviderKind::Gemini,
        "https://generativelanguage.googleapis.com",
        "gemini-2.5-flash",
        Some("AIza-test"),
    );
    let options = RequestOptions {
        stream: true,
        max_tokens: Some(2048),
        temperature: Some(0.2),
        ..RequestOptions::default()
    };
    let request = gemini::Gemini.build_request(&cfg, &conversation(), &tools, &options);
    assert_eq!(
        request.url,
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(request.header("x-goog-api-key"), Some("AIza-test"));
    assert!(!request.url.contains("key="), "the key is never in the URL");
    let body = json_body(&request);
    assert_eq!(
        body["systemInstruction"],
        json!({"parts": [{"text": "You are a careful editor."}]})
    );
    assert_eq!(
        body["contents"],
        json!([
            {"role": "user", "parts": [{"text": "Find the lighthouse scene and make the rain heavier."}]},
            {"role": "model", "parts": [
                {"text": "On it."},
                {"functionCall": {"name": "navigate_to_text", "args": {"query": "the lighthouse"}},
                 "thoughtSignature": gemini::SKIP_SIGNATURE},
                {"functionCall": {"name": "update_manuscript",
                    "args": {"searchText": "rain", "replacementText": "downpour", "description": "heavier"}}}
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "navigate_to_text",
                    "response": {"status": "success", "data": {"chapter": 3}}}},
                // The name is found from the call id when the message has none.
                {"functionResponse": {"name": "update_manuscript",
                    "response": {"status": "success", "data": {"replaced": 1}}}},
                {"text": "Thanks!"}
            ]}
        ])
    );
    assert_eq!(
        body["generationConfig"],
        json!({"maxOutputTokens": 2048, "temperature": 0.2})
    );
    let declarations = body["tools"][0]["functionDeclarations"].as_array().unwrap();
    assert_eq!(body["tools"].as_array().unwrap().len(), 1);
    assert_eq!(declarations.len(), tools.len());
    assert_eq!(declarations[0]["name"], tools[0].name.as_ref());
    assert!(!body["tools"].to_string().contains("additionalProperties"));

    // Not streamed, no key, `models/` prefix, non-object result wrapped.
    let mut plain = cfg.clone();
    plain.api_key = None;
    plain.model = "models/gemini-2.0-flash".into();
    let jump = call("c1", "jump_to_chapter", json!({"chapter": 1}));
    let request = gemini::Gemini.build_request(
        &plain,
        &[
            Message::assistant("", vec![jump.clone()]),
            Message::tool_result(&jump, "plain text"),
        ],
        &[],
        &RequestOptions::default(),
    );
    assert_eq!(
        request.url,
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent"
    );
    assert_eq!(request.header("x-goog-api-key"), None);
    let body = json_body(&request);
    assert_eq!(
        body["contents"][1]["parts"][0]["functionResponse"]["response"],
        json!({"result": "plain text"})
    );
    assert!(body.get("generationConfig").is_none() && body.get("tools").is_none());
}

// ---------------------------------------------------------------------------------------------
// The assembler
// ---------------------------------------------------------------------------------------------

#[test]
fn assembler_basics() {
    assert_eq!(parse_arguments("  "), Ok(json!({})));
    assert!(parse_arguments("null").unwrap_err().contains("not null"));
    assert!(parse_arguments("\"x\"")
        .unwrap_err()
        .contains("not a string"));

    let mut assembler = Assembler::new();
    assembler.extend(&[
        StreamEvent::TextDelta { text: "a".into() },
        StreamEvent::Usage {
            usage: Usage {
                input_tokens: 1,
                output_tokens: 1,
            },
        },
        StreamEvent::TextDelta { text: "b".into() },
        StreamEvent::Usage {
            usage: Usage {
                input_tokens: 5,
                output_tokens: 9,
            },
        },
        // A delta for a call that never started: no name, so never executed.
        StreamEvent::ToolCallDelta {
            index: 4,
            arguments: "{}".into(),
        },
        StreamEvent::Finish {
            reason: FinishReason::Stop,
        },
    ]);
    assert_eq!(assembler.text(), "ab");
    let answer = assembler.finish();
    assert_eq!(answer.usage, usage(5, 9), "the last usage wins");
    assert_eq!(answer.invalid_tool_calls[0].id, "call_4");
    assert!(answer.invalid_tool_calls[0].reason.contains("name"));
    let json = serde_json::to_value(&answer).unwrap();
    assert_eq!(json["finish_reason"], "stop");
    assert_eq!(json["text"], "ab");
}

/// Argument text: usually an object's JSON (with escapes and non-ASCII), sometimes anything.
fn arb_arguments() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        "[a-zé🐉\"\\\\ \n{}:,]{0,12}".prop_map(Value::from),
    ];
    let value = leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    prop_oneof![
        4 => prop::collection::btree_map("[a-zA-Z]{1,8}", value, 0..5)
            .prop_map(|m| Value::Object(m.into_iter().collect()).to_string()),
        1 => "[{}\":, a-zé]{0,20}",
    ]
}

/// `text` cut at the char positions picked by `cuts`.
fn split(text: &str, cuts: &[prop::sample::Index]) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut points: Vec<usize> = cuts.iter().map(|c| c.index(chars.len() + 1)).collect();
    points.push(0);
    points.push(chars.len());
    points.sort_unstable();
    points.dedup();
    points
        .windows(2)
        .map(|w| chars[w[0]..w[1]].iter().collect())
        .collect()
}

fn finish_events(reason: &FinishReason) -> Vec<StreamEvent> {
    vec![StreamEvent::Finish {
        reason: reason.clone(),
    }]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The same tool-call deltas (and text), split at any points and interleaved between
    /// parallel calls in any order, assemble to the same answer.
    #[test]
    fn assembler_ignores_how_deltas_are_split(
        args in prop::collection::vec(arb_arguments(), 1..4),
        text in "[a-z é🐉]{0,20}",
        cuts in prop::collection::vec(prop::collection::vec(any::<prop::sample::Index>(), 0..10), 4),
        order in prop::collection::vec(any::<prop::sample::Index>(), 0..60),
        finish_each in any::<bool>(),
        reason in prop_oneof![Just(FinishReason::ToolCalls), Just(FinishReason::Stop),
                              Just(FinishReason::Length)],
    ) {
        let starts = |events: &mut Vec<StreamEvent>| {
            for i in 0..args.len() {
                events.push(StreamEvent::ToolCallStarted {
                    index: i, id: format!("id{i}"), name: format!("tool{i}") });
            }
        };
        let ends = |events: &mut Vec<StreamEvent>| {
            if finish_each {
                events.extend((0..args.len()).map(|index| StreamEvent::ToolCallFinished { index }));
            }
            events.extend(finish_events(&reason));
        };

        let mut whole = Vec::new();
        starts(&mut whole);
        whole.push(StreamEvent::TextDelta { text: text.clone() });
        for (index, a) in args.iter().enumerate() {
            whole.push(StreamEvent::ToolCallDelta { index, arguments: a.clone() });
        }
        ends(&mut whole);

        // Pieces per stream (text is stream `args.len()`), taken in a random order.
        let mut pieces: Vec<std::collections::VecDeque<String>> = args
            .iter()
            .chain(std::iter::once(&text))
            .enumerate()
            .map(|(i, s)| split(s, &cuts[i % cuts.len()]).into())
            .collect();
        let mut split_events = Vec::new();
        starts(&mut split_events);
        let mut picks = order.iter();
        while pieces.iter().any(|p| !p.is_empty()) {
            let open: Vec<usize> = (0..pieces.len()).filter(|&i| !pieces[i].is_empty()).collect();
            let which = picks.next().map_or(open[0], |p| open[p.index(open.len())]);
            let Some(piece) = pieces[which].pop_front() else { continue };
            split_events.push(if which == args.len() {
                StreamEvent::TextDelta { text: piece }
            } else {
                StreamEvent::ToolCallDelta { index: which, arguments: piece }
            });
        }
        ends(&mut split_events);

        prop_assert_eq!(assemble(&split_events), assemble(&whole));
    }

    /// Through the OpenAI decoder: a call's argument text cut into any fragments gives the
    /// same answer as the whole text in one fragment.
    #[test]
    fn openai_fragments_split_anywhere(
        a in arb_arguments(),
        b in arb_arguments(),
        cuts_a in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
        cuts_b in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
        reason in prop_oneof![Just("tool_calls"), Just("length")],
    ) {
        let transcript = |a_parts: Vec<String>, b_parts: Vec<String>| {
            let mut t = start(0, "call_a", "tool_a") + &start(1, "call_b", "tool_b");
            let longest = a_parts.len().max(b_parts.len());
            for i in 0..longest {
                if let Some(p) = a_parts.get(i) { t += &fragment(0, p); }
                if let Some(p) = b_parts.get(i) { t += &fragment(1, p); }
            }
            t + &chunk(json!({}), Some(reason))
        };
        let whole = replay(ProviderKind::Openai, &transcript(vec![a.clone()], vec![b.clone()])).1;
        let split = replay(ProviderKind::Openai, &transcript(split(&a, &cuts_a), split(&b, &cuts_b))).1;
        prop_assert_eq!(&split, &whole);
        prop_assert_eq!(whole.tool_calls.len() + whole.invalid_tool_calls.len(), 2);
        if reason == "length" {
            prop_assert!(whole.tool_calls.is_empty());
        }
    }
}

#[test]
fn tool_choice_is_written_as_each_provider_documents_it() {
    let registry = ToolRegistry::standard();
    let tools = quick_tools(&registry);
    let named = tools[1].name.to_string();
    let at = |base: &str, kind: ProviderKind, choice: ToolChoice, tools: &[&ToolDefinition]| {
        let options = RequestOptions {
            tool_choice: choice,
            ..RequestOptions::default()
        };
        json_body(&build_request(
            &config(kind, base, "m", None),
            &conversation(),
            tools,
            &options,
        ))
    };
    let body = |kind: ProviderKind, choice: ToolChoice, tools: &[&ToolDefinition]| {
        let base = match kind {
            ProviderKind::Openai => "https://api.openai.com/v1",
            _ => "http://localhost:8080",
        };
        at(base, kind, choice, tools)
    };
    use ProviderKind::{Anthropic, Gemini, Openai};
    let required = ToolChoice::Required;
    let tool = ToolChoice::Tool(named.clone());
    // OpenAI: "required", or a named function.
    assert_eq!(
        body(Openai, required.clone(), &tools)["tool_choice"],
        "required"
    );
    let openai = body(Openai, tool.clone(), &tools);
    assert_eq!(
        openai["tool_choice"],
        json!({"type": "function", "function": {"name": named}})
    );
    assert_eq!(openai["tools"].as_array().unwrap().len(), tools.len());
    // A compatible server: the named function too, with only that tool offered.
    let local = at("http://localhost:8080/v1", Openai, tool.clone(), &tools);
    assert_eq!(
        local["tool_choice"],
        json!({"type": "function", "function": {"name": named}})
    );
    let offered: Vec<&str> = local["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(offered, [named.as_str()]);
    // Anthropic: {"type": "any"}, or {"type": "tool", "name"}.
    assert_eq!(
        body(Anthropic, required.clone(), &tools)["tool_choice"],
        json!({"type": "any"})
    );
    assert_eq!(
        body(Anthropic, tool.clone(), &tools)["tool_choice"],
        json!({"type": "tool", "name": named})
    );
    // Gemini: toolConfig.functionCallingConfig, mode ANY, with the allowed function names.
    assert_eq!(
        body(Gemini, required.clone(), &tools)["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY"}})
    );
    assert_eq!(
        body(Gemini, tool.clone(), &tools)["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [named]}})
    );
    for kind in [Openai, Anthropic, Gemini] {
        // Auto is the providers' default: nothing is sent.
        let auto = body(kind, ToolChoice::Auto, &tools);
        assert!(auto.get("tool_choice").is_none() && auto.get("toolConfig").is_none());
        // Without tools nothing is required; a tool not offered becomes "any tool".
        let none = body(kind, required.clone(), &[]);
        assert!(none.get("tool_choice").is_none() && none.get("toolConfig").is_none());
        let absent = body(kind, ToolChoice::Tool("no_such_tool".into()), &tools);
        let expected = body(kind, required.clone(), &tools);
        assert_eq!(absent, expected, "{kind:?}");
    }
    // In JSON a choice is a string: "auto", "required" or a tool's name.
    let parsed: Vec<ToolChoice> =
        serde_json::from_value(json!(["auto", "required", "route_action_to_root_agent"])).unwrap();
    assert_eq!(
        parsed,
        [
            ToolChoice::Auto,
            ToolChoice::Required,
            ToolChoice::Tool("route_action_to_root_agent".into())
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Odd payloads
// ---------------------------------------------------------------------------------------------

#[test]
fn fields_of_another_type_count_as_absent_and_unknown_ones_are_skipped() {
    // OpenAI: a number for text, a string for a fragment, escapes in the text, fields and
    // choices nobody knows.
    let transcript = [
        "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"other choice\"}},{\"delta\":{\"content\":\"Caf\\u00e9 \\\"ok\\\"\",\"reasoning\":{\"x\":[1,2]},\"extra\":null}}],\"usage\":null}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":5,\"refusal\":null}}],\"service_tier\":\"default\"}\n\n",
        "data: {\"choices\":\"none\",\"usage\":7}\n\n",
        "data: [1, 2]\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"function\":{\"name\":\"jump_to_chapter\",\"arguments\":{\"chapter\":2}}}]},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":\"9\",\"completion_tokens\":3}}\n\n",
    ]
    .concat();
    let (events, answer) = replay(ProviderKind::Openai, &transcript);
    assert_eq!(answer.text, "Café \"ok\"");
    assert_eq!(
        answer.tool_calls,
        vec![call("call_1", "jump_to_chapter", json!({"chapter": 2}))]
    );
    assert_eq!(answer.usage, usage(0, 3));
    assert_eq!(answer.error, None, "{events:?}");

    // Anthropic: unknown events, a usage that is no object, a block of an unknown type.
    let transcript = [
        ev("message_start", json!({"message": {"usage": "lots"}})),
        ev("ping", json!({})),
        ev(
            "brand_new_event",
            json!({"index": 0, "delta": {"type": "text_delta", "text": "no"}}),
        ),
        block_start(
            0,
            json!({"type": "server_tool_use", "id": "x", "name": "web"}),
        ),
        block_stop(0),
        block_start(1, json!({"type": "text", "text": 4})),
        text_delta(1, "Yes"),
        ev(
            "content_block_delta",
            json!({"index": 1, "delta": {"type": "text_delta", "text": ["a"]}}),
        ),
        block_stop(1),
        message_delta("end_turn", 5),
        message_stop(),
    ]
    .concat();
    let (_, answer) = replay(ProviderKind::Anthropic, &transcript);
    assert_eq!(answer.text, "Yes");
    assert_eq!(answer.usage, usage(0, 5));
    assert_eq!(answer.finish_reason, Some(FinishReason::Stop));
    assert_eq!(answer.error, None);

    // Gemini: a part that is no object, a functionCall of another type, thought: "yes".
    let transcript = concat!(
        "data: {\"candidates\":[{\"content\":{\"parts\":[3,{\"text\":\"Hi\",\"thought\":\"yes\"},",
        "{\"functionCall\":\"odd\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":null}\n\n"
    );
    let (_, answer) = replay(ProviderKind::Gemini, transcript);
    assert_eq!(answer.text, "Hi");
    assert!(answer.tool_calls.is_empty());
    assert_eq!(answer.invalid_tool_calls.len(), 1, "a call without a name");
    assert_eq!(answer.usage, usage(0, 0));
}
