//! Google Gemini (`generateContent`).
//!
//! - Request: `POST {base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse` (or
//!   `:generateContent` when not streaming), the key in `x-goog-api-key`. `contents` with
//!   roles `user` and `model`; assistant tool calls as `functionCall {name, args}` parts,
//!   results as `functionResponse {name, response}` parts of a user turn (the response
//!   must be an object: other JSON is wrapped as `{"result": ..}`); system messages as
//!   `systemInstruction`; tools as `[{functionDeclarations: [...]}]`; limits in
//!   `generationConfig`. Consecutive messages of one role share one content, so the results
//!   of parallel calls answer them together.
//! - Thought signatures: Gemini 3 models reject a history whose `functionCall` parts lack the
//!   `thoughtSignature` they came with, and [`ToolCall`](super::ToolCall) has nowhere to keep
//!   it; the first `functionCall` part of each model turn therefore carries
//!   [`SKIP_SIGNATURE`], the value Google documents for calls whose signature is unknown.
//! - Stream: unnamed events, each a whole `GenerateContentResponse`:
//!   `candidates[0].content.parts[]` with `text` or a complete `functionCall` (no id: ids are
//!   synthesized, `call_<n>` by default), `finishReason` (`STOP` is reported as
//!   [`FinishReason::ToolCalls`] when the answer called tools), `usageMetadata` (cumulative;
//!   thinking tokens count as output), or an `error` object. Thought parts are skipped.

use serde_json::json;
use serde_json::{Map, Value};

use super::request::{base, key, post};
use super::{
    ended_early, error_message, malformed, quote, FinishReason, HttpRequest, Message,
    ProviderConfig, RequestOptions, Role, SseMessage, StreamEvent, ToolChoice, Usage,
};
use crate::tools::schema::{catalog, CatalogFormat};
use crate::tools::ToolDefinition;
use draftsmith_stream::gemini::{self as wire, FunctionCall, Response};

/// The `thoughtSignature` sent on replayed function calls, which Google documents for calls
/// whose real signature is not at hand.
pub const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

/// The Google Gemini adapter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gemini;

impl super::Provider for Gemini {
    /// The request for a Gemini answer.
    fn build_request(
        &self,
        config: &ProviderConfig,
        messages: &[Message],
        tools: &[&ToolDefinition],
        options: &RequestOptions,
    ) -> HttpRequest {
        let mut system: Vec<&str> = Vec::new();
        let mut contents: Vec<(&'static str, Vec<Value>)> = Vec::new();
        for (position, m) in messages.iter().enumerate() {
            let (role, parts) = match m.role {
                Role::System => {
                    if !m.text.is_empty() {
                        system.push(&m.text);
                    }
                    continue;
                }
                Role::User => ("user", text_part(&m.text).into_iter().collect()),
                Role::Assistant => {
                    let mut parts: Vec<Value> = text_part(&m.text).into_iter().collect();
                    parts.extend(m.tool_calls.iter().map(|c| {
                        let args = if c.arguments.is_object() {
                            c.arguments.clone()
                        } else {
                            json!({})
                        };
                        json!({"functionCall": {"name": c.name, "args": args}})
                    }));
                    ("model", parts)
                }
                Role::Tool => {
                    let name = m
                        .name
                        .clone()
                        .or_else(|| call_name(&messages[..position], m.tool_call_id.as_deref()))
                        .unwrap_or_default();
                    let part =
                        json!({"functionResponse": {"name": name, "response": response(&m.text)}});
                    ("user", vec![part])
                }
            };
            if parts.is_empty() {
                continue;
            }
            match contents.last_mut() {
                Some((last, existing)) if *last == role => existing.extend(parts),
                _ => contents.push((role, parts)),
            }
        }
        for (role, parts) in &mut contents {
            if *role == "model" {
                if let Some(Value::Object(part)) =
                    parts.iter_mut().find(|p| p.get("functionCall").is_some())
                {
                    part.insert("thoughtSignature".into(), Value::from(SKIP_SIGNATURE));
                }
            }
        }
        let mut body = Map::new();
        body.insert(
            "contents".into(),
            Value::Array(
                contents
                    .into_iter()
                    .map(|(role, parts)| json!({"role": role, "parts": parts}))
                    .collect(),
            ),
        );
        if !system.is_empty() {
            body.insert(
                "systemInstruction".into(),
                json!({"parts": [{"text": system.join("\n\n")}]}),
            );
        }
        if !tools.is_empty() {
            body.insert(
                "tools".into(),
                Value::Array(vec![catalog(CatalogFormat::Gemini, tools)]),
            );
        }
        let mode = match options
            .tool_choice
            .for_tools(tools.iter().map(|t| t.name.as_ref()))
        {
            ToolChoice::Auto => None,
            ToolChoice::Required => Some(json!({"mode": "ANY"})),
            ToolChoice::Tool(name) => Some(json!({"mode": "ANY", "allowedFunctionNames": [name]})),
        };
        if let Some(config) = mode {
            body.insert(
                "toolConfig".into(),
                json!({ "functionCallingConfig": config }),
            );
        }
        let mut generation = Map::new();
        if let Some(max) = options.max_tokens {
            generation.insert("maxOutputTokens".into(), Value::from(max));
        }
        if let Some(t) = options.temperature {
            generation.insert("temperature".into(), Value::from(t));
        }
        if let Some(output) = options.output.as_ref().filter(|_| tools.is_empty()) {
            generation.insert("responseMimeType".into(), Value::from("application/json"));
            generation.insert(
                "responseSchema".into(),
                crate::tools::schema::gemini_schema(&output.schema),
            );
        }
        if !generation.is_empty() {
            body.insert("generationConfig".into(), Value::Object(generation));
        }
        let model = config
            .model
            .strip_prefix("models/")
            .unwrap_or(&config.model);
        let method = if options.stream {
            "streamGenerateContent?alt=sse"
        } else {
            "generateContent"
        };
        let headers = key(config)
            .map(|k| vec![("x-goog-api-key".to_string(), k.to_string())])
            .unwrap_or_default();
        post(
            config,
            format!("{}/v1beta/models/{model}:{method}", base(config)),
            headers,
            &Value::Object(body),
        )
    }

    /// The events of a whole (non-streamed) `generateContent` response (or of the JSON array
    /// `streamGenerateContent` returns without `alt=sse`). An error body becomes an
    /// [`StreamEvent::Error`]; `Err` means the body is not JSON.
    fn parse_response(&self, body: &str) -> Result<Vec<StreamEvent>, String> {
        let not_json = |e: serde_json::Error| {
            format!("the Gemini response is not JSON ({e}): {}", quote(body))
        };
        // An array (what `streamGenerateContent` returns) is many responses.
        let responses = if body.trim_start().starts_with('[') {
            wire::responses(body)
                .map_err(not_json)?
                .0
                .unwrap_or_default()
        } else {
            vec![wire::response(body).map_err(not_json)?]
        };
        let mut stream = GeminiStream::new();
        let mut out = Vec::new();
        for response in responses {
            stream.response(response.into_option().unwrap_or_default(), &mut out);
        }
        Ok(out)
    }
}

/// A text part, unless the text is empty.
fn text_part(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"text": text}))
}

/// The name of the call `id` among earlier assistant messages.
fn call_name(earlier: &[Message], id: Option<&str>) -> Option<String> {
    let id = id?;
    earlier
        .iter()
        .rev()
        .flat_map(|m| &m.tool_calls)
        .find(|c| c.id == id)
        .map(|c| c.name.clone())
}

/// A tool result as a `functionResponse.response` object.
fn response(text: &str) -> Value {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(object @ Value::Object(_)) => object,
        Ok(other) => json!({ "result": other }),
        Err(_) => json!({ "result": text }),
    }
}

/// A `finishReason` as a neutral finish reason.
fn finish_reason(raw: &str, called_tools: bool) -> Option<FinishReason> {
    Some(match raw {
        "" | "FINISH_REASON_UNSPECIFIED" => return None,
        "STOP" if called_tools => FinishReason::ToolCalls,
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
            FinishReason::ContentFilter
        }
        other => FinishReason::Other(other.to_ascii_lowercase()),
    })
}

/// Decodes one streamed Gemini answer.
#[derive(Debug, Clone)]
pub struct GeminiStream {
    /// Synthesized call ids are this prefix and the call's index.
    id_prefix: String,
    /// Calls seen.
    calls: usize,
    /// A finish reason arrived.
    finished: bool,
    /// An error arrived.
    failed: bool,
}

impl Default for GeminiStream {
    fn default() -> Self {
        Self::new()
    }
}

impl GeminiStream {
    /// A decoder for one answer; call ids are `call_0`, `call_1`…
    pub fn new() -> Self {
        Self::with_id_prefix("call_")
    }

    /// A decoder whose call ids are `prefix` and the call's index (to keep ids unique across
    /// the answers of a conversation, say `t3_call_`).
    pub fn with_id_prefix(prefix: impl Into<String>) -> Self {
        Self {
            id_prefix: prefix.into(),
            calls: 0,
            finished: false,
            failed: false,
        }
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
        match wire::response(data) {
            Ok(response) => self.response(response.into_option().unwrap_or_default(), out),
            Err(e) => {
                self.failed = true;
                out.push(malformed("Gemini", &e, data));
            }
        }
    }

    /// The events owed at the end of the byte stream: an error if no finish reason came.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        if self.finished || self.failed {
            return Vec::new();
        }
        self.failed = true;
        vec![ended_early("Gemini")]
    }

    /// One `GenerateContentResponse` (or error).
    fn response(&mut self, response: Response<'_>, out: &mut Vec<StreamEvent>) {
        if let Some(error) = response.error.filter(|e| !e.is_null()) {
            self.failed = true;
            out.push(StreamEvent::Error {
                message: error_message(&error),
            });
            return;
        }
        let candidate = response
            .candidates
            .0
            .and_then(|candidates| candidates.into_iter().next());
        if let Some(candidate) = candidate {
            let candidate = candidate.into_option().unwrap_or_default();
            let parts = candidate
                .content
                .into_option()
                .and_then(|content| content.parts.0)
                .unwrap_or_default();
            for part in parts {
                let part = part.into_option().unwrap_or_default();
                if part.thought.0 {
                    continue;
                }
                if let Some(text) = part.text.take_non_empty() {
                    out.push(StreamEvent::TextDelta { text });
                }
                if part.function_call.is_present() {
                    self.call(part.function_call.into_option().unwrap_or_default(), out);
                }
            }
            if let Some(reason) = candidate
                .finish_reason
                .as_str()
                .and_then(|r| finish_reason(r, self.calls > 0))
            {
                self.finished = true;
                out.push(StreamEvent::Finish { reason });
            }
        } else if response
            .prompt_feedback
            .get()
            .is_some_and(|feedback| feedback.block_reason.0)
        {
            // The prompt itself was blocked: no candidates at all.
            self.finished = true;
            out.push(StreamEvent::Finish {
                reason: FinishReason::ContentFilter,
            });
        }
        if response.usage_metadata.is_present() {
            let usage = response.usage_metadata.into_option().unwrap_or_default();
            out.push(StreamEvent::Usage {
                usage: Usage {
                    input_tokens: usage.prompt_token_count.or_zero(),
                    output_tokens: usage.candidates_token_count.or_zero()
                        + usage.thoughts_token_count.or_zero(),
                },
            });
        }
    }

    /// A complete `functionCall`: started, its arguments in one piece, finished.
    fn call(&mut self, call: FunctionCall<'_>, out: &mut Vec<StreamEvent>) {
        let index = self.calls;
        self.calls += 1;
        let id = call
            .id
            .take_non_empty()
            .unwrap_or_else(|| format!("{}{index}", self.id_prefix));
        let name = call.name.as_str().unwrap_or_default().to_string();
        out.push(StreamEvent::ToolCallStarted { index, id, name });
        let arguments = match call.args {
            None | Some(Value::Null) => "{}".to_string(),
            Some(args) => args.to_string(),
        };
        out.push(StreamEvent::ToolCallDelta { index, arguments });
        out.push(StreamEvent::ToolCallFinished { index });
    }
}
