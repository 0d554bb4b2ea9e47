//! Model calls, provider-neutral.
//!
//! A conversation is a list of [`Message`]s (system, user, assistant with text and tool calls,
//! tool results). A provider's streamed answer becomes a sequence of [`StreamEvent`]s: text
//! deltas, tool calls starting / growing / finishing, usage, the finish reason, or an error.
//!
//! - [`sse`]: a Server-Sent Events parser, incremental over the bytes the network delivers
//!   (the framing providers stream their answers in).
//! - [`request`]: [`ProviderConfig`], [`RequestOptions`] and the [`HttpRequest`] each adapter
//!   builds (the transport that sends it lives elsewhere).
//! - [`openai`], [`anthropic`], [`gemini`], [`local`]: per provider, a request builder, a stream decoder
//!   (already-parsed SSE events, [`SseMessage`], in; [`StreamEvent`]s out) and a parser of
//!   whole (non-streamed) responses that yields the same events. Each implements
//!   [`Provider`]; [`provider`] picks one by [`ProviderKind`].
//! - [`assemble`]: the [`Assembler`] that folds events into an
//!   [`Answer`], whatever the provider and whether or not it streamed.
//! - The `draftsmith-stream` crate: the typed, lenient events the decoders read providers'
//!   JSON into, borrowing strings from the event's data, built for speed.
//! - [`ProviderStream`] and [`parse_response`] pick the decoder by [`ProviderKind`].
//! - [`grammar`]: the grammar that constrains a local model's answer to a valid tool call.
//! - [`retry`]: when a failed call is tried again and how long to wait.
//! - [`tokens`]: a request's estimated tokens, models' context windows, overflow errors.
//! - [`client`]: [`client::call_model`] over an [`client::LlmTransport`]: send, retry, time out,
//!   decode and assemble.

pub mod anthropic;
pub mod assemble;
pub mod client;
pub mod gemini;
pub mod grammar;
pub mod local;
pub mod openai;
pub mod request;
pub mod retry;
pub mod tokens;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use self::assemble::{Answer, Assembler};
pub use self::request::{
    output_by_tool, HttpRequest, OutputFormat, ProviderConfig, ProviderKind, RequestOptions,
    ToolChoice,
};
use crate::tools::ToolDefinition;
/// The Server-Sent Events parser (from the `draftsmith-stream` crate).
pub use draftsmith_stream::sse;
pub use draftsmith_stream::SseMessage;

/// Who speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions for the model.
    System,
    /// The writer (or the page on their behalf).
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id (synthesized when the provider gives none).
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Parsed arguments (a JSON object).
    pub arguments: Value,
}

/// A tool call whose arguments could not be used: not valid JSON at the end, not an object,
/// or cut off (the stream ended or hit its length limit mid-arguments). It is never executed;
/// the model and the page are told why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvalidToolCall {
    /// The call id.
    pub id: String,
    /// Tool name (may be empty if it never arrived).
    pub name: String,
    /// The argument text as received.
    pub raw_arguments: String,
    /// Why it is invalid.
    pub reason: String,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// Text (may be empty for an assistant message with only tool calls).
    #[serde(default)]
    pub text: String,
    /// Tool calls (assistant messages).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call this result answers (tool messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The tool name (tool messages; Gemini needs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Message {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self::plain(Role::System, text)
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::plain(Role::User, text)
    }

    /// An assistant message with text and tool calls.
    pub fn assistant(text: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self {
            tool_calls,
            ..Self::plain(Role::Assistant, text)
        }
    }

    /// A tool result (its JSON text) for a call.
    pub fn tool_result(call: &ToolCall, result: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(call.id.clone()),
            name: Some(call.name.clone()),
            ..Self::plain(Role::Tool, result)
        }
    }

    fn plain(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            text: text.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }
}

/// Tokens used by a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ts_rs::TS)]
pub struct Usage {
    /// Prompt (input) tokens.
    pub input_tokens: u64,
    /// Completion (output) tokens.
    pub output_tokens: u64,
}

impl Usage {
    /// Sum of two usages.
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens + other.input_tokens,
            output_tokens: self.output_tokens + other.output_tokens,
        }
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// It finished its answer.
    Stop,
    /// It wants tool results.
    ToolCalls,
    /// It hit the output length limit.
    Length,
    /// Content filtering stopped it.
    ContentFilter,
    /// Another provider-specific reason.
    Other(String),
}

/// One event of a streamed answer, provider-neutral.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// More answer text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A tool call began.
    ToolCallStarted {
        /// Position among the answer's tool calls.
        index: usize,
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// More of a tool call's argument text.
    ToolCallDelta {
        /// Position among the answer's tool calls.
        index: usize,
        /// The argument text fragment.
        arguments: String,
    },
    /// A tool call's arguments are complete (the provider said so, or the answer ended).
    ToolCallFinished {
        /// Position among the answer's tool calls.
        index: usize,
    },
    /// Token usage so far (providers may report it more than once; the last one counts).
    Usage {
        /// The usage.
        usage: Usage,
    },
    /// Why the model stopped.
    Finish {
        /// The reason.
        reason: FinishReason,
    },
    /// The provider reported an error inside the stream.
    Error {
        /// The provider's message.
        message: String,
    },
}

impl FinishReason {
    /// The reason as one word: `stop`, `tool_calls`, `length`, `content_filter`, or the
    /// provider's own word for [`FinishReason::Other`].
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Length => "length",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Other(other) => other,
        }
    }
}

/// The stream decoder of a provider, chosen at run time.
#[derive(Debug, Clone)]
pub enum ProviderStream {
    /// OpenAI-compatible chat completions.
    Openai(openai::OpenAiStream),
    /// Anthropic Messages.
    Anthropic(anthropic::AnthropicStream),
    /// Google Gemini.
    Gemini(gemini::GeminiStream),
    /// A model running in the browser.
    Local(local::LocalStream),
}

impl ProviderStream {
    /// A fresh decoder for one streamed answer of `kind`.
    pub fn new(kind: ProviderKind) -> Self {
        match kind {
            ProviderKind::Openai => Self::Openai(openai::OpenAiStream::new()),
            ProviderKind::Anthropic => Self::Anthropic(anthropic::AnthropicStream::new()),
            ProviderKind::Gemini => Self::Gemini(gemini::GeminiStream::new()),
            ProviderKind::Local => Self::Local(local::LocalStream::new(None)),
        }
    }

    /// A fresh decoder for the streamed answer to `request` (of `kind`): a local model's
    /// answer depends on how its request asked for tool calls.
    pub fn for_request(kind: ProviderKind, request: &HttpRequest) -> Self {
        match kind {
            ProviderKind::Local => Self::Local(local::LocalStream::for_request(request)),
            other => Self::new(other),
        }
    }

    /// The neutral events of one SSE event.
    pub fn on_event(&mut self, msg: SseMessage<'_>) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        self.on_event_into(msg, &mut out);
        out
    }

    /// The neutral events of one SSE event, appended to `out` (a buffer the caller reuses).
    pub fn on_event_into(&mut self, msg: SseMessage<'_>, out: &mut Vec<StreamEvent>) {
        match self {
            Self::Openai(s) => s.on_event_into(msg, out),
            Self::Anthropic(s) => s.on_event_into(msg, out),
            Self::Gemini(s) => s.on_event_into(msg, out),
            Self::Local(s) => out.extend(s.on_event(msg)),
        }
    }

    /// The events owed when the byte stream ends (an [`StreamEvent::Error`] if the answer
    /// never finished).
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        match self {
            Self::Openai(s) => s.finish(),
            Self::Anthropic(s) => s.finish(),
            Self::Gemini(s) => s.finish(),
            Self::Local(s) => s.finish(),
        }
    }
}

/// One provider's wire format, as each adapter implements it: the request it builds and the
/// events of a whole (non-streamed) response. (Streamed answers are decoded by
/// [`ProviderStream`].)
pub trait Provider {
    /// The HTTP request for a model call.
    fn build_request(
        &self,
        config: &ProviderConfig,
        messages: &[Message],
        tools: &[&ToolDefinition],
        options: &RequestOptions,
    ) -> HttpRequest;

    /// The events of a whole response body. An error object in the body becomes an
    /// [`StreamEvent::Error`]; `Err` means the body is not JSON at all.
    fn parse_response(&self, body: &str) -> Result<Vec<StreamEvent>, String>;
}

/// The adapter for `kind`.
pub fn provider(kind: ProviderKind) -> &'static dyn Provider {
    match kind {
        ProviderKind::Openai => &openai::OpenAi,
        ProviderKind::Anthropic => &anthropic::Anthropic,
        ProviderKind::Gemini => &gemini::Gemini,
        ProviderKind::Local => &local::Local,
    }
}

/// The request for `config`'s provider.
pub fn build_request(
    config: &ProviderConfig,
    messages: &[Message],
    tools: &[&ToolDefinition],
    options: &RequestOptions,
) -> HttpRequest {
    provider(config.kind).build_request(config, messages, tools, options)
}

/// The events of a whole (non-streamed) response body of `kind`. An error object in the body
/// becomes an [`StreamEvent::Error`]; `Err` means the body is not JSON at all.
pub fn parse_response(kind: ProviderKind, body: &str) -> Result<Vec<StreamEvent>, String> {
    provider(kind).parse_response(body)
}

/// At most this many bytes of a bad payload are quoted in an error message.
const QUOTE_BYTES: usize = 200;

/// The start of `data`, cut at a char boundary, for error messages.
pub(crate) fn quote(data: &str) -> String {
    if data.len() <= QUOTE_BYTES {
        return data.to_string();
    }
    let mut end = QUOTE_BYTES;
    while !data.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &data[..end])
}

/// The error event for an SSE payload that is not valid JSON.
pub(crate) fn malformed(provider: &str, error: &serde_json::Error, data: &str) -> StreamEvent {
    StreamEvent::Error {
        message: format!(
            "malformed JSON in a stream event from {provider} ({error}): {}",
            quote(data)
        ),
    }
}

/// A non-negative integer field of a JSON object (0 when missing or not a number).
pub(crate) fn count(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// The message of a provider error object: `{"message": .., "type"/"status"/"code": ..}`, or a
/// bare string.
pub(crate) fn error_message(error: &Value) -> String {
    let message = match error {
        Value::String(s) => return s.clone(),
        Value::Object(map) => map.get("message").and_then(Value::as_str),
        _ => None,
    };
    let kind = ["type", "status", "code"]
        .iter()
        .find_map(|k| match error.get(k) {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        });
    match (kind, message) {
        (Some(kind), Some(message)) => format!("{kind}: {message}"),
        (None, Some(message)) => message.to_string(),
        (_, None) => quote(&error.to_string()),
    }
}

/// The error a decoder reports when the byte stream ended before the answer finished.
pub(crate) fn ended_early(provider: &str) -> StreamEvent {
    StreamEvent::Error {
        message: format!(
            "the {provider} stream ended before the answer finished (connection dropped?)"
        ),
    }
}
