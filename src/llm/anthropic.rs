//! Anthropic Messages.
//!
//! - Request: `POST {base_url}/v1/messages` with `x-api-key`, `anthropic-version: 2023-06-01`
//!   and `anthropic-dangerous-direct-browser-access: true` (the call comes from a browser).
//!   System messages become the top-level `system`; `max_tokens` is required
//!   ([`DEFAULT_MAX_TOKENS`] when unset). Content is always a list of blocks: assistant
//!   `text` and `tool_use` (`input` is the arguments object), tool results as `tool_result`
//!   blocks in a user turn. Consecutive messages of one role are merged into one turn, so
//!   the results of parallel calls share one user turn, before any user text (as the API
//!   requires). Empty text blocks, which the API rejects, are left out.
//! - Stream: named events. `message_start` (input usage), `content_block_start` (a `text` or
//!   a `tool_use` block with `id` and `name`), `content_block_delta` (`text_delta`, or
//!   `input_json_delta.partial_json` for tool arguments), `content_block_stop`,
//!   `message_delta` (`stop_reason`, cumulative output usage), `message_stop`, `ping`, and
//!   `error` (for example `overloaded_error`) inside a 200 stream. Thinking blocks are
//!   ignored. Input usage counts cache reads and writes too.
//! - A `tool_use` block is closed by `content_block_stop` even when `max_tokens` cut it off,
//!   so the decoder holds the last closed block back until it is known complete: another
//!   block starts, or the stop reason is not `max_tokens`. A block cut off stays open and the
//!   assembler rejects it.

use serde_json::json;
use serde_json::{Map, Value};

use super::request::{base, key, post, DEFAULT_MAX_TOKENS};
use super::{
    count, ended_early, error_message, malformed, quote, FinishReason, HttpRequest, Message,
    ProviderConfig, RequestOptions, Role, SseMessage, StreamEvent, ToolChoice, Usage,
};
use crate::tools::schema::{catalog, CatalogFormat};
use crate::tools::ToolDefinition;
use draftsmith_stream::anthropic::{self as wire, TokenCounts};

/// The `anthropic-version` header sent.
pub const API_VERSION: &str = "2023-06-01";

/// The Anthropic Messages adapter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Anthropic;

impl super::Provider for Anthropic {
    /// The request for an Anthropic message.
    fn build_request(
        &self,
        config: &ProviderConfig,
        messages: &[Message],
        tools: &[&ToolDefinition],
        options: &RequestOptions,
    ) -> HttpRequest {
        let mut system: Vec<&str> = Vec::new();
        let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
        for m in messages {
            let (role, blocks) = match m.role {
                Role::System => {
                    if !m.text.is_empty() {
                        system.push(&m.text);
                    }
                    continue;
                }
                Role::User => ("user", text_block(&m.text).into_iter().collect()),
                Role::Assistant => {
                    let mut blocks: Vec<Value> = text_block(&m.text).into_iter().collect();
                    blocks.extend(m.tool_calls.iter().map(|c| {
                        let input = if c.arguments.is_object() {
                            c.arguments.clone()
                        } else {
                            json!({})
                        };
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input})
                    }));
                    ("assistant", blocks)
                }
                Role::Tool => {
                    let mut block = json!({
                        "type": "tool_result",
                        "tool_use_id": m.tool_call_id.as_deref().unwrap_or_default(),
                    });
                    if !m.text.is_empty() {
                        block["content"] = Value::from(m.text.as_str());
                    }
                    ("user", vec![block])
                }
            };
            if blocks.is_empty() {
                continue;
            }
            match turns.last_mut() {
                Some((last, existing)) if *last == role => {
                    // Tool results first, then text, in a merged user turn.
                    let results = blocks.iter().all(|b| b["type"] == "tool_result");
                    if results {
                        let at = existing
                            .iter()
                            .position(|b| b["type"] != "tool_result")
                            .unwrap_or(existing.len());
                        existing.splice(at..at, blocks);
                    } else {
                        existing.extend(blocks);
                    }
                }
                _ => turns.push((role, blocks)),
            }
        }
        let mut body = Map::new();
        body.insert("model".into(), Value::from(config.model.as_str()));
        body.insert(
            "max_tokens".into(),
            Value::from(options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
        );
        if !system.is_empty() {
            body.insert("system".into(), Value::from(system.join("\n\n")));
        }
        body.insert(
            "messages".into(),
            Value::Array(
                turns
                    .into_iter()
                    .map(|(role, content)| json!({"role": role, "content": content}))
                    .collect(),
            ),
        );
        if !tools.is_empty() {
            body.insert("tools".into(), catalog(CatalogFormat::Anthropic, tools));
        }
        match options
            .tool_choice
            .for_tools(tools.iter().map(|t| t.name.as_ref()))
        {
            ToolChoice::Auto => {}
            ToolChoice::Required => {
                body.insert("tool_choice".into(), json!({"type": "any"}));
            }
            ToolChoice::Tool(name) => {
                body.insert("tool_choice".into(), json!({"type": "tool", "name": name}));
            }
        }
        if let Some(t) = options.temperature {
            body.insert("temperature".into(), Value::from(t));
        }
        if options.stream {
            body.insert("stream".into(), Value::Bool(true));
        }
        let mut headers = Vec::new();
        if let Some(k) = key(config) {
            headers.push(("x-api-key".to_string(), k.to_string()));
        }
        headers.push(("anthropic-version".to_string(), API_VERSION.to_string()));
        headers.push((
            "anthropic-dangerous-direct-browser-access".to_string(),
            "true".to_string(),
        ));
        post(
            config,
            format!("{}/v1/messages", base(config)),
            headers,
            &Value::Object(body),
        )
    }

    /// The events of a whole (non-streamed) message. An error body becomes an
    /// [`StreamEvent::Error`]; `Err` means the body is not JSON.
    fn parse_response(&self, body: &str) -> Result<Vec<StreamEvent>, String> {
        let value: Value = serde_json::from_str(body)
            .map_err(|e| format!("the Anthropic response is not JSON ({e}): {}", quote(body)))?;
        if value.get("type").and_then(Value::as_str) == Some("error")
            || value.get("error").is_some()
        {
            return Ok(vec![error_event(&value)]);
        }
        let reason = value
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(stop_reason);
        let blocks = value
            .get("content")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut out = Vec::new();
        let mut calls = 0;
        for (position, block) in blocks.iter().enumerate() {
            let text = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or_default();
            match text("type") {
                "text" if !text("text").is_empty() => out.push(StreamEvent::TextDelta {
                    text: text("text").to_string(),
                }),
                "tool_use" => {
                    let index = calls;
                    calls += 1;
                    let id = Some(text("id"))
                        .filter(|id| !id.is_empty())
                        .map_or_else(|| format!("call_{index}"), str::to_string);
                    out.push(StreamEvent::ToolCallStarted {
                        index,
                        id,
                        name: text("name").to_string(),
                    });
                    if let Some(input) = block.get("input") {
                        out.push(StreamEvent::ToolCallDelta {
                            index,
                            arguments: input.to_string(),
                        });
                    }
                    // The last block of an answer cut off by `max_tokens` may be incomplete.
                    let last = position + 1 == blocks.len();
                    if !(last && reason == Some(FinishReason::Length)) {
                        out.push(StreamEvent::ToolCallFinished { index });
                    }
                }
                _ => {}
            }
        }
        if let Some(usage) = value.get("usage") {
            out.push(StreamEvent::Usage {
                usage: Usage {
                    input_tokens: input_tokens(usage),
                    output_tokens: count(usage, "output_tokens"),
                },
            });
        }
        if let Some(reason) = reason {
            out.push(StreamEvent::Finish { reason });
        }
        Ok(out)
    }
}

/// A text block, unless the text is empty.
fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

/// A `stop_reason` as a neutral finish reason.
fn stop_reason(raw: &str) -> FinishReason {
    match raw {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_string()),
    }
}

/// Input tokens, cache writes and reads included.
fn input_tokens(usage: &Value) -> u64 {
    count(usage, "input_tokens")
        + count(usage, "cache_creation_input_tokens")
        + count(usage, "cache_read_input_tokens")
}

/// The error event of an `error` payload.
fn error_event(value: &Value) -> StreamEvent {
    StreamEvent::Error {
        message: error_message(value.get("error").unwrap_or(value)),
    }
}

/// Decodes one streamed Anthropic message.
#[derive(Debug, Clone, Default)]
pub struct AnthropicStream {
    /// Neutral call index by content block index, for `tool_use` blocks.
    tools: std::collections::BTreeMap<u64, usize>,
    /// Calls seen.
    calls: usize,
    /// A closed `tool_use` block not yet known to be complete.
    held: Option<usize>,
    usage: Usage,
    /// A stop reason arrived.
    stopped: bool,
    /// An error arrived.
    failed: bool,
}

impl AnthropicStream {
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
        if data.is_empty() {
            return;
        }
        let event = match wire::event(data) {
            Ok(event) => event.into_option().unwrap_or_default(),
            Err(e) => {
                self.failed = true;
                out.push(malformed("Anthropic", &e, data));
                return;
            }
        };
        let kind = event.kind.as_str().or(msg.event).unwrap_or_default();
        match kind {
            "message_start" => {
                if let Some(usage) = event.message.get().map(|m| &m.usage) {
                    if usage.is_present() {
                        let usage = usage.get().unwrap_or(&TokenCounts::NONE);
                        self.usage = Usage {
                            input_tokens: usage.input_tokens(),
                            output_tokens: usage.output_tokens.or_zero(),
                        };
                        out.push(StreamEvent::Usage { usage: self.usage });
                    }
                }
            }
            "content_block_start" => {
                self.release(out);
                let Some(block) = event.content_block.into_option() else {
                    return;
                };
                match block.kind.as_str() {
                    Some("text") => {
                        if let Some(text) = block.text.take_non_empty() {
                            out.push(StreamEvent::TextDelta { text });
                        }
                    }
                    Some("tool_use") => {
                        let index = self.calls;
                        self.calls += 1;
                        self.tools.insert(event.index.or_zero(), index);
                        let id = block
                            .id
                            .take_non_empty()
                            .unwrap_or_else(|| format!("call_{index}"));
                        out.push(StreamEvent::ToolCallStarted {
                            index,
                            id,
                            name: block.name.as_str().unwrap_or_default().to_string(),
                        });
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let Some(delta) = event.delta.into_option() else {
                    return;
                };
                match delta.kind.as_str() {
                    Some("text_delta") => {
                        if let Some(text) = delta.text.take_non_empty() {
                            out.push(StreamEvent::TextDelta { text });
                        }
                    }
                    Some("input_json_delta") => {
                        if let (Some(&index), Some(partial)) = (
                            self.tools.get(&event.index.or_zero()),
                            delta.partial_json.take_non_empty(),
                        ) {
                            out.push(StreamEvent::ToolCallDelta {
                                index,
                                arguments: partial,
                            });
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                self.release(out);
                if let Some(&index) = self.tools.get(&event.index.or_zero()) {
                    self.held = Some(index);
                }
            }
            "message_delta" => {
                let reason = event
                    .delta
                    .get()
                    .and_then(|d| d.stop_reason.as_str())
                    .map(stop_reason);
                if event.usage.is_present() {
                    if let Some(usage) = event.usage.get() {
                        if usage.input_tokens.is_present() {
                            self.usage.input_tokens = usage.input_tokens();
                        }
                        if usage.output_tokens.is_present() {
                            self.usage.output_tokens = usage.output_tokens.or_zero();
                        }
                    }
                    out.push(StreamEvent::Usage { usage: self.usage });
                }
                if let Some(reason) = reason {
                    if reason == FinishReason::Length {
                        // The last closed tool block may have been cut off.
                        self.held = None;
                    }
                    self.release(out);
                    self.stopped = true;
                    out.push(StreamEvent::Finish { reason });
                }
            }
            "error" => {
                self.failed = true;
                // The error's shape varies: read it as any JSON (rare).
                let value = serde_json::from_str(data).unwrap_or(Value::Null);
                out.push(error_event(&value));
            }
            // "message_start", "ping" and unknown events say nothing new.
            _ => {}
        }
    }

    /// The events owed at the end of the byte stream: an error if no stop reason came.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        if self.stopped || self.failed {
            return Vec::new();
        }
        self.failed = true;
        vec![ended_early("Anthropic")]
    }

    /// Finishes the held tool call: it is known complete.
    fn release(&mut self, out: &mut Vec<StreamEvent>) {
        if let Some(index) = self.held.take() {
            out.push(StreamEvent::ToolCallFinished { index });
        }
    }
}
