//! OpenAI chat completions, and the servers that copy them (Ollama, llama.cpp, vLLM,
//! OpenRouter, LM Studio…).
//!
//! - Request: `POST {base_url}/chat/completions`; `Authorization: Bearer` only when a key is
//!   set (local servers need none); `stream_options.include_usage` when streaming, so the
//!   last chunk (with empty `choices`) carries the usage. Assistant tool calls go out as
//!   `tool_calls` with the arguments as a JSON *string*; results as `role: tool` messages
//!   with `tool_call_id`.
//! - Stream: unnamed events whose data is a `chat.completion.chunk`, then `data: [DONE]`.
//!   `choices[0].delta.content` is text; `delta.tool_calls[]` fragments carry an `index`
//!   (parallel calls may interleave), the `id` and `function.name` on a call's first fragment
//!   and `function.arguments` pieces after. Calls are never closed one by one: they are
//!   finished when `finish_reason` is `stop` or `tool_calls` (with `length` or
//!   `content_filter` they may be cut off, so they are left open and the assembler rejects
//!   them). An `error` object may arrive inside a 200 stream.
//! - Compatible servers differ a little: some say `stop` when they made tool calls (reported
//!   as [`FinishReason::ToolCalls`] here), some omit the fragment `index` (its position is
//!   used), some send a whole call in one fragment, or reuse index 0 with a new `id` for the
//!   next call (a new call).

use serde_json::json;
use serde_json::{Map, Value};

use super::request::{base, key, post};
use super::{
    count, ended_early, error_message, malformed, quote, FinishReason, HttpRequest, Message,
    ProviderConfig, RequestOptions, Role, SseMessage, StreamEvent, ToolChoice, Usage,
};
use crate::tools::schema::{catalog, CatalogFormat};
use crate::tools::ToolDefinition;

/// The OpenAI-compatible chat completions adapter.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenAi;

impl super::Provider for OpenAi {
    /// The request for an OpenAI-compatible chat completion.
    fn build_request(
        &self,
        config: &ProviderConfig,
        messages: &[Message],
        tools: &[&ToolDefinition],
        options: &RequestOptions,
    ) -> HttpRequest {
        let official = config.base_url.contains("api.openai.com");
        let body = chat_body(config, messages, tools, options, official);
        let headers = key(config)
            .map(|k| vec![("Authorization".to_string(), format!("Bearer {k}"))])
            .unwrap_or_default();
        post(
            config,
            format!("{}/chat/completions", base(config)),
            headers,
            &Value::Object(body),
        )
    }

    /// The events of a whole (non-streamed) chat completion. An `error` body becomes an
    /// [`StreamEvent::Error`]; `Err` means the body is not JSON.
    fn parse_response(&self, body: &str) -> Result<Vec<StreamEvent>, String> {
        let value: Value = serde_json::from_str(body)
            .map_err(|e| format!("the OpenAI response is not JSON ({e}): {}", quote(body)))?;
        let mut stream = OpenAiStream::new();
        let mut out = Vec::new();
        stream.chunk(&value, "message", &mut out);
        Ok(out)
    }
}

/// The body of a chat completion request: model, messages, tools and the tool choice, the
/// output limit and temperature, streaming. `official`: OpenAI's own API (which wants
/// `max_completion_tokens`, and takes a named choice with every tool offered).
pub(super) fn chat_body(
    config: &ProviderConfig,
    messages: &[Message],
    tools: &[&ToolDefinition],
    options: &RequestOptions,
    official: bool,
) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("model".into(), Value::from(config.model.as_str()));
    body.insert(
        "messages".into(),
        Value::Array(messages.iter().map(message).collect()),
    );
    let choice = options
        .tool_choice
        .for_tools(tools.iter().map(|t| t.name.as_ref()));
    // A named choice is the named function, as OpenAI documents it (llama-cpp-python,
    // vLLM and OpenAI constrain the call to it). A compatible server is also offered only
    // that tool, so a server that reads `tool_choice` only as a string (llama.cpp's
    // `llama-server` takes an object for "auto") still has one tool to call.
    let offered: Vec<&ToolDefinition> = match &choice {
        ToolChoice::Tool(name) if !official => {
            tools.iter().copied().filter(|t| t.name == *name).collect()
        }
        _ => tools.to_vec(),
    };
    if !offered.is_empty() {
        body.insert("tools".into(), catalog(CatalogFormat::Openai, &offered));
    }
    match choice {
        ToolChoice::Auto => {}
        ToolChoice::Tool(name) => {
            body.insert(
                "tool_choice".into(),
                json!({"type": "function", "function": {"name": name}}),
            );
        }
        ToolChoice::Required => {
            body.insert("tool_choice".into(), Value::from("required"));
        }
    }
    if let Some(max) = options.max_tokens {
        // OpenAI's own API wants the newer name (its reasoning models reject `max_tokens`);
        // compatible servers know the older one.
        let name = if official {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(name.into(), Value::from(max));
    }
    if let Some(t) = options.temperature {
        body.insert("temperature".into(), Value::from(t));
    }
    if options.stream {
        body.insert("stream".into(), Value::Bool(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    body
}

/// One message in OpenAI's format.
fn message(m: &Message) -> Value {
    match m.role {
        Role::System => json!({"role": "system", "content": m.text}),
        Role::User => json!({"role": "user", "content": m.text}),
        Role::Assistant => {
            let mut out = Map::new();
            out.insert("role".into(), Value::from("assistant"));
            let content = if m.text.is_empty() && !m.tool_calls.is_empty() {
                Value::Null
            } else {
                Value::from(m.text.as_str())
            };
            out.insert("content".into(), content);
            if !m.tool_calls.is_empty() {
                let calls = m
                    .tool_calls
                    .iter()
                    .map(|c| {
                        json!({"id": c.id, "type": "function", "function": {
                            "name": c.name, "arguments": c.arguments.to_string()}})
                    })
                    .collect();
                out.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(out)
        }
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": m.tool_call_id.as_deref().unwrap_or_default(),
            "content": m.text,
        }),
    }
}

/// A call seen on the wire.
#[derive(Debug, Clone)]
struct Slot {
    /// Its neutral index.
    index: usize,
    id: String,
    named: bool,
}

/// Decodes one streamed OpenAI-compatible answer.
#[derive(Debug, Clone, Default)]
pub struct OpenAiStream {
    /// Calls by their wire `index`.
    slots: std::collections::BTreeMap<u64, Slot>,
    /// Neutral indices of calls not yet finished.
    open: Vec<usize>,
    /// Calls seen.
    calls: usize,
    /// A finish reason arrived.
    finished: bool,
    /// `[DONE]` arrived.
    done: bool,
    /// An error arrived.
    failed: bool,
}

impl OpenAiStream {
    /// A decoder for one answer.
    pub fn new() -> Self {
        Self::default()
    }

    /// The events of one SSE event.
    pub fn on_event(&mut self, msg: SseMessage<'_>) -> Vec<StreamEvent> {
        let data = msg.data.trim();
        if self.done || data.is_empty() {
            return Vec::new();
        }
        if data == "[DONE]" {
            self.done = true;
            return Vec::new();
        }
        let value: Value = match serde_json::from_str(data) {
            Ok(value) => value,
            Err(e) => {
                self.failed = true;
                if msg.event == Some("error") {
                    return vec![StreamEvent::Error {
                        message: quote(data),
                    }];
                }
                return vec![malformed("OpenAI", &e, data)];
            }
        };
        let mut out = Vec::new();
        self.chunk(&value, "delta", &mut out);
        if msg.event == Some("error") && !self.failed {
            self.failed = true;
            out.push(StreamEvent::Error {
                message: error_message(&value),
            });
        }
        out
    }

    /// The events owed at the end of the byte stream: an error if no finish reason came.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        if self.finished || self.failed {
            return Vec::new();
        }
        self.failed = true;
        vec![ended_early("OpenAI")]
    }

    /// A chunk (`message_key` = `delta`) or a whole response (`message`).
    fn chunk(&mut self, value: &Value, message_key: &str, out: &mut Vec<StreamEvent>) {
        if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
            self.failed = true;
            out.push(StreamEvent::Error {
                message: error_message(error),
            });
            return;
        }
        let choice = value
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|choices| {
                choices
                    .iter()
                    .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
            });
        if let Some(choice) = choice {
            if let Some(delta) = choice.get(message_key) {
                for key in ["content", "refusal"] {
                    if let Some(text) = delta.get(key).and_then(Value::as_str) {
                        if !text.is_empty() {
                            out.push(StreamEvent::TextDelta {
                                text: text.to_string(),
                            });
                        }
                    }
                }
                if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                    for (position, fragment) in calls.iter().enumerate() {
                        self.fragment(position, fragment, out);
                    }
                }
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason(reason, out);
            }
        }
        if let Some(usage) = value.get("usage").filter(|u| u.is_object()) {
            out.push(StreamEvent::Usage {
                usage: Usage {
                    input_tokens: count(usage, "prompt_tokens"),
                    output_tokens: count(usage, "completion_tokens"),
                },
            });
        }
    }

    /// One `tool_calls[]` fragment.
    fn fragment(&mut self, position: usize, fragment: &Value, out: &mut Vec<StreamEvent>) {
        let wire = fragment
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(position as u64);
        let id = fragment
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let function = fragment.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let fresh = match (self.slots.get(&wire), id) {
            (None, _) => true,
            (Some(slot), Some(id)) => slot.id != id,
            (Some(_), None) => false,
        };
        if fresh {
            let index = self.calls;
            self.calls += 1;
            let id = id.map_or_else(|| format!("call_{index}"), str::to_string);
            self.slots.insert(
                wire,
                Slot {
                    index,
                    id: id.clone(),
                    named: name.is_some(),
                },
            );
            self.open.push(index);
            out.push(StreamEvent::ToolCallStarted {
                index,
                id,
                name: name.unwrap_or_default().to_string(),
            });
        }
        let Some(slot) = self.slots.get_mut(&wire) else {
            return;
        };
        if let (false, Some(name)) = (slot.named, name) {
            // The name came after the first fragment: start again with it.
            slot.named = true;
            out.push(StreamEvent::ToolCallStarted {
                index: slot.index,
                id: slot.id.clone(),
                name: name.to_string(),
            });
        }
        let arguments = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(s)) => s.clone(),
            // Some servers send parsed arguments.
            Some(v @ Value::Object(_)) => v.to_string(),
            _ => String::new(),
        };
        if !arguments.is_empty() {
            out.push(StreamEvent::ToolCallDelta {
                index: slot.index,
                arguments,
            });
        }
    }

    /// A `finish_reason`: closes the open calls when the answer ended cleanly.
    fn finish_reason(&mut self, raw: &str, out: &mut Vec<StreamEvent>) {
        let reason = match raw {
            "stop" | "tool_calls" | "function_call" if self.calls > 0 => FinishReason::ToolCalls,
            "stop" => FinishReason::Stop,
            "tool_calls" | "function_call" => FinishReason::ToolCalls,
            "length" => FinishReason::Length,
            "content_filter" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_string()),
        };
        if matches!(reason, FinishReason::Stop | FinishReason::ToolCalls) {
            out.extend(
                self.open
                    .drain(..)
                    .map(|index| StreamEvent::ToolCallFinished { index }),
            );
        }
        self.finished = true;
        out.push(StreamEvent::Finish { reason });
    }
}
