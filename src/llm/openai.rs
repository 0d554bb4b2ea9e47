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
    ended_early, error_message, malformed, quote, FinishReason, HttpRequest, Message,
    ProviderConfig, RequestOptions, Role, SseMessage, StreamEvent, ToolChoice, Usage,
};
use crate::tools::schema::{catalog, CatalogFormat};
use crate::tools::ToolDefinition;
use draftsmith_stream::lenient::{Arguments, Object};
use draftsmith_stream::openai::{self as wire, Chunk, Fragment};

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
        let response = wire::chunk(body)
            .map_err(|e| format!("the OpenAI response is not JSON ({e}): {}", quote(body)))?;
        let mut stream = OpenAiStream::new();
        let mut out = Vec::new();
        if let Some(response) = response.into_option() {
            stream.chunk(response, Part::Message, &mut out);
        }
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
    if let Some(output) = &options.output {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {"name": output.name, "schema": output.schema}}),
        );
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

/// Which part of a choice carries the content.
#[derive(Debug, Clone, Copy)]
enum Part {
    /// `delta` (a streamed chunk).
    Delta,
    /// `message` (a whole response).
    Message,
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
        let mut out = Vec::new();
        self.on_event_into(msg, &mut out);
        out
    }

    /// The events of one SSE event, appended to `out`.
    pub fn on_event_into(&mut self, msg: SseMessage<'_>, out: &mut Vec<StreamEvent>) {
        let data = msg.data.trim();
        if self.done || data.is_empty() {
            return;
        }
        if data == "[DONE]" {
            self.done = true;
            return;
        }
        let chunk = match wire::chunk(data) {
            Ok(chunk) => chunk,
            Err(e) => {
                self.failed = true;
                out.push(if msg.event == Some("error") {
                    StreamEvent::Error {
                        message: quote(data),
                    }
                } else {
                    malformed("OpenAI", &e, data)
                });
                return;
            }
        };
        if let Some(chunk) = chunk.into_option() {
            self.chunk(chunk, Part::Delta, out);
        }
        if msg.event == Some("error") && !self.failed {
            self.failed = true;
            // The whole payload is the error (rare: read it as any JSON).
            let value = serde_json::from_str(data).unwrap_or(Value::Null);
            out.push(StreamEvent::Error {
                message: error_message(&value),
            });
        }
    }

    /// The events owed at the end of the byte stream: an error if no finish reason came.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        if self.finished || self.failed {
            return Vec::new();
        }
        self.failed = true;
        vec![ended_early("OpenAI")]
    }

    /// A chunk (its choice's `delta`) or a whole response (its choice's `message`).
    fn chunk(&mut self, chunk: Chunk<'_>, part: Part, out: &mut Vec<StreamEvent>) {
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            self.failed = true;
            out.push(StreamEvent::Error {
                message: error_message(&error),
            });
            return;
        }
        if let Some(Object::Is(choice)) = chunk.choices.0 {
            let delta = match part {
                Part::Delta => choice.delta,
                Part::Message => choice.message,
            };
            if let Object::Is(delta) = delta {
                for text in [delta.content, delta.refusal] {
                    if let Some(text) = text.take_non_empty() {
                        out.push(StreamEvent::TextDelta { text });
                    }
                }
                for (position, fragment) in delta.tool_calls.items().iter().enumerate() {
                    self.fragment(position, fragment.get().unwrap_or(&Fragment::EMPTY), out);
                }
            }
            if let Some(reason) = choice.finish_reason.as_str() {
                self.finish_reason(reason, out);
            }
        }
        if let Some(usage) = chunk.usage.get() {
            out.push(StreamEvent::Usage {
                usage: Usage {
                    input_tokens: usage.prompt_tokens.or_zero(),
                    output_tokens: usage.completion_tokens.or_zero(),
                },
            });
        }
    }

    /// One `tool_calls[]` fragment.
    fn fragment(&mut self, position: usize, fragment: &Fragment<'_>, out: &mut Vec<StreamEvent>) {
        let wire = fragment.index.get().unwrap_or(position as u64);
        let id = fragment.id.non_empty();
        let function = fragment.function.get();
        let name = function.and_then(|f| f.name.non_empty());
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
        let arguments = match function.map(|f| &f.arguments) {
            Some(Arguments::Text(s)) => s.to_string(),
            // Some servers send parsed arguments.
            Some(Arguments::Object(v)) => v.to_string(),
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
