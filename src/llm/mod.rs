//! Model calls, provider-neutral.
//!
//! A conversation is a list of [`Message`]s (system, user, assistant with text and tool calls,
//! tool results). A provider's streamed answer becomes a sequence of [`StreamEvent`]s: text
//! deltas, tool calls starting / growing / finishing, usage, the finish reason, or an error.
//!
//! [`sse`] parses a Server-Sent Events body incrementally from the bytes the network delivers,
//! the framing providers stream their answers in. [`retry`] decides when a failed call is tried
//! again and how long to wait.

pub mod retry;
pub mod sse;

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
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
