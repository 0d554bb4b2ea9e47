//! Folding [`StreamEvent`]s into one [`Answer`].
//!
//! The [`Assembler`] is incremental and linear in the bytes received: text and argument
//! fragments are appended to one `String` each, and a call's arguments are parsed as JSON
//! once, when the call finishes ([`StreamEvent::ToolCallFinished`], or the end of the answer
//! for calls the provider never closes explicitly, like OpenAI's). Parallel calls are kept
//! apart by their index and come out in index order.
//!
//! A call is only ever executable if its arguments are known to be complete: either the
//! provider finished it explicitly, or the answer ended cleanly (finish reason `stop` or
//! `tool_calls`, no error). Otherwise (the output hit its length limit, content filtering
//! stopped it, the stream reported an error, or it simply ended: a dropped connection) the
//! call goes to [`Answer::invalid_tool_calls`] with the reason, as do calls whose arguments
//! are not JSON or not an object. Empty arguments count as `{}`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{FinishReason, InvalidToolCall, StreamEvent, ToolCall, Usage};

/// A model's whole answer.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Answer {
    /// The text, all deltas concatenated.
    pub text: String,
    /// The tool calls to execute, in index order.
    pub tool_calls: Vec<ToolCall>,
    /// Tool calls that must not be executed, with the reason.
    pub invalid_tool_calls: Vec<InvalidToolCall>,
    /// Why the model stopped (`None`: the stream ended without saying).
    pub finish_reason: Option<FinishReason>,
    /// The last usage reported.
    pub usage: Option<Usage>,
    /// The first error the stream reported.
    pub error: Option<String>,
}

/// A tool call being received.
#[derive(Debug, Clone, Default)]
struct PendingCall {
    id: String,
    name: String,
    raw: String,
    /// The parse result, once the provider finished the call.
    parsed: Option<Result<Value, String>>,
}

/// Folds [`StreamEvent`]s into an [`Answer`].
#[derive(Debug, Clone, Default)]
pub struct Assembler {
    text: String,
    calls: std::collections::BTreeMap<usize, PendingCall>,
    finish_reason: Option<FinishReason>,
    usage: Option<Usage>,
    error: Option<String>,
}

impl Assembler {
    /// An empty assembler, for one answer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes in one event.
    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::TextDelta { text } => self.text.push_str(text),
            StreamEvent::ToolCallStarted { index, id, name } => {
                let call = self.calls.entry(*index).or_default();
                // A repeated start (some servers resend the id) only fills what is missing.
                if call.id.is_empty() {
                    call.id.clone_from(id);
                }
                if call.name.is_empty() {
                    call.name.clone_from(name);
                }
            }
            StreamEvent::ToolCallDelta { index, arguments } => {
                let call = self.calls.entry(*index).or_default();
                // More arguments after the call finished: it was not finished after all.
                call.parsed = None;
                call.raw.push_str(arguments);
            }
            StreamEvent::ToolCallFinished { index } => {
                let call = self.calls.entry(*index).or_default();
                if call.parsed.is_none() {
                    call.parsed = Some(parse_arguments(&call.raw));
                }
            }
            StreamEvent::Usage { usage } => self.usage = Some(*usage),
            StreamEvent::Finish { reason } => self.finish_reason = Some(reason.clone()),
            StreamEvent::Error { message } => {
                if self.error.is_none() {
                    self.error = Some(message.clone());
                }
            }
        }
    }

    /// Takes in several events.
    pub fn extend<'a>(&mut self, events: impl IntoIterator<Item = &'a StreamEvent>) {
        for event in events {
            self.push(event);
        }
    }

    /// The text received so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The answer, once the stream is over.
    pub fn finish(self) -> Answer {
        let incomplete = self.incomplete_reason();
        let mut answer = Answer {
            text: self.text,
            finish_reason: self.finish_reason,
            usage: self.usage,
            error: self.error,
            ..Answer::default()
        };
        for (index, call) in self.calls {
            let id = if call.id.is_empty() {
                format!("call_{index}")
            } else {
                call.id
            };
            let parsed = match (call.parsed, &incomplete) {
                (Some(parsed), _) => parsed,
                (None, Some(reason)) => Err(reason.clone()),
                (None, None) => parse_arguments(&call.raw),
            };
            let parsed = if call.name.is_empty() {
                Err("the tool name never arrived".to_string())
            } else {
                parsed
            };
            match parsed {
                Ok(arguments) => answer.tool_calls.push(ToolCall {
                    id,
                    name: call.name,
                    arguments,
                }),
                Err(reason) => answer.invalid_tool_calls.push(InvalidToolCall {
                    id,
                    name: call.name,
                    raw_arguments: call.raw,
                    reason,
                }),
            }
        }
        answer
    }

    /// Why calls the provider never finished explicitly may be cut off; `None` when the answer
    /// ended cleanly.
    fn incomplete_reason(&self) -> Option<String> {
        if let Some(error) = &self.error {
            return Some(format!(
                "the stream reported an error before the arguments were complete: {error}"
            ));
        }
        match &self.finish_reason {
            Some(FinishReason::Stop | FinishReason::ToolCalls) => None,
            Some(FinishReason::Length) => Some(
                "the answer hit the output token limit before the arguments were complete"
                    .to_string(),
            ),
            Some(FinishReason::ContentFilter) => Some(
                "content filtering stopped the answer before the arguments were complete"
                    .to_string(),
            ),
            Some(FinishReason::Other(other)) => Some(format!(
                "the answer stopped ({other}) before the arguments were complete"
            )),
            None => Some(
                "the stream ended before the arguments were complete (no finish reason: \
                 connection dropped?)"
                    .to_string(),
            ),
        }
    }
}

/// A call's complete argument text as a JSON object (empty or blank means `{}`).
pub fn parse_arguments(raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    match draftsmith_stream::json(raw) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!(
            "the arguments must be a JSON object, not {}",
            kind(&other)
        )),
        Err(e) => Err(format!("the arguments are not valid JSON: {e}")),
    }
}

/// A JSON value's kind, with its article.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
