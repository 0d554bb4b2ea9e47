//! A model running in this browser ([`ProviderKind::Local`](super::ProviderKind::Local)):
//! llama.cpp compiled to WebAssembly (wllama), reached through a [`LocalRuntime`] instead
//! of the network.
//!
//! - **Requests** are OpenAI chat completions ([`super::openai::chat_body`]) with the model's
//!   URL as `model` and its load options (`load: {contextSize, threads}`).
//! - **Tools.** When the model's chat template takes tools and the model may choose
//!   ([`ToolChoice::Auto`]), they go to the template as they are. Otherwise (a call is
//!   required or named, or the template has no tools) the tools are described in the system
//!   prompt and a grammar built from their schemas ([`super::grammar`]) constrains the
//!   answer to one `{"name": …, "arguments": …}` object (or, when the model may choose, to
//!   that or plain text). Earlier calls and results are then written as text the template
//!   can hold: the call's JSON in the assistant's turn, the result in the user's.
//! - **Answers** stream as OpenAI chunks. [`LocalStream`] decodes them, and in grammar mode
//!   turns the JSON the model wrote into a tool call, so a run sees the same events as with
//!   any provider.

use std::rc::Rc;

use futures_util::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::client::LlmTransport;
use super::grammar::{tool_call_grammar, CallGrammar};
use super::openai::{chat_body, OpenAiStream};
use super::request::post;
use super::{
    FinishReason, HttpRequest, Message, ProviderConfig, RequestOptions, Role, SseMessage,
    StreamEvent, ToolChoice,
};
use crate::tools::ToolDefinition;

/// The request header that tells [`LocalStream`] how tool calls come back: absent when they
/// come as tool calls, `required` or `optional` when they come as grammar-constrained text.
pub const GRAMMAR_HEADER: &str = "x-draftsmith-tool-grammar";

/// Which model to load, and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalSpec {
    /// The URL of the `.gguf` file (the first part of a split model).
    pub url: String,
    /// The context window in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_size: Option<u32>,
    /// CPU threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
}

/// A loaded model, as the runtime describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalInfo {
    /// Its URL, absolute.
    pub url: String,
    /// Its size in bytes.
    pub size: u64,
    /// The context window it was loaded with.
    pub context_size: u32,
    /// The CPU threads it runs on.
    pub threads: u32,
    /// Whether it runs on several threads (the page is cross-origin isolated).
    pub multi_thread: bool,
    /// Whether its chat template takes tools.
    pub tool_template: bool,
}

/// A model file kept in the browser.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredModel {
    /// The URL it was downloaded from.
    pub url: String,
    /// Its size in bytes (all its parts).
    pub size: u64,
}

/// Download progress: bytes so far, and in all.
pub type Progress = Rc<dyn Fn(u64, u64)>;

/// Runs models in the browser: it answers a [`HttpRequest`] built for
/// [`ProviderKind::Local`](super::ProviderKind::Local) as a server would (a stream of
/// OpenAI chunks), and keeps the model files.
pub trait LocalRuntime: LlmTransport {
    /// Make `spec`'s model ready: download it (reporting progress) unless it is stored, and
    /// load it (unloading another one first). Resolves at once when it is loaded already.
    fn load(
        &self,
        spec: &LocalSpec,
        progress: Progress,
    ) -> LocalBoxFuture<'static, Result<LocalInfo, String>>;
    /// The model files kept in the browser.
    fn stored(&self) -> LocalBoxFuture<'static, Result<Vec<StoredModel>, String>>;
    /// Delete a kept model file (unloading it if it is loaded); `false` if there was none.
    fn delete(&self, url: &str) -> LocalBoxFuture<'static, Result<bool, String>>;
}

/// The adapter of models running in the browser.
#[derive(Debug, Clone, Copy, Default)]
pub struct Local;

/// How tool calls are asked for in one request.
fn grammar_mode(
    config: &ProviderConfig,
    tools: &[&ToolDefinition],
    choice: &ToolChoice,
) -> Option<CallGrammar> {
    if tools.is_empty() {
        return None;
    }
    match choice {
        ToolChoice::Auto if config.local.template_tools => None,
        ToolChoice::Auto => Some(CallGrammar::Optional),
        ToolChoice::Required | ToolChoice::Tool(_) => Some(CallGrammar::Required),
    }
}

impl super::Provider for Local {
    fn build_request(
        &self,
        config: &ProviderConfig,
        messages: &[Message],
        tools: &[&ToolDefinition],
        options: &RequestOptions,
    ) -> HttpRequest {
        let choice = options
            .tool_choice
            .for_tools(tools.iter().map(|t| t.name.as_ref()));
        let mode = grammar_mode(config, tools, &choice);
        let mut headers = Vec::new();
        let mut body = match mode {
            None => chat_body(config, messages, tools, options, false),
            Some(mode) => {
                let offered: Vec<&ToolDefinition> = match &choice {
                    ToolChoice::Tool(name) => {
                        tools.iter().copied().filter(|t| t.name == *name).collect()
                    }
                    _ => tools.to_vec(),
                };
                let named = match &choice {
                    ToolChoice::Tool(name) => Some(name.as_str()),
                    _ => None,
                };
                let rendered = grammar_messages(messages, &offered, mode, named);
                let plain = RequestOptions {
                    tool_choice: ToolChoice::Auto,
                    ..options.clone()
                };
                let mut body = chat_body(config, &rendered, &[], &plain, false);
                body.insert(
                    "grammar".into(),
                    Value::from(tool_call_grammar(&offered, mode)),
                );
                let word = match mode {
                    CallGrammar::Required => "required",
                    CallGrammar::Optional => "optional",
                };
                headers.push((GRAMMAR_HEADER.to_string(), word.to_string()));
                body
            }
        };
        let mut load = Map::new();
        if let Some(n) = config.local.context_size {
            load.insert("contextSize".into(), Value::from(n));
        }
        if let Some(n) = config.local.threads {
            load.insert("threads".into(), Value::from(n));
        }
        body.insert("load".into(), Value::Object(load));
        post(config, config.model.clone(), headers, &Value::Object(body))
    }

    fn parse_response(&self, body: &str) -> Result<Vec<StreamEvent>, String> {
        super::openai::OpenAi.parse_response(body)
    }
}

/// The conversation for a grammar-constrained request: the tools described in the system
/// prompt, calls and results written as text, and turns of one speaker joined (some chat
/// templates want user and assistant to alternate).
fn grammar_messages(
    messages: &[Message],
    tools: &[&ToolDefinition],
    mode: CallGrammar,
    named: Option<&str>,
) -> Vec<Message> {
    let guide = tool_guide(tools, mode, named);
    let mut out: Vec<Message> = Vec::new();
    let mut push = |role: Role, text: String| match out.last_mut() {
        Some(last) if last.role == role && role != Role::System => {
            last.text.push_str("\n\n");
            last.text.push_str(&text);
        }
        _ => out.push(match role {
            Role::System => Message::system(text),
            Role::Assistant => Message::assistant(text, Vec::new()),
            _ => Message::user(text),
        }),
    };
    let mut guided = false;
    for m in messages {
        match m.role {
            Role::System if !guided => {
                guided = true;
                push(Role::System, format!("{}\n\n{guide}", m.text));
            }
            Role::System => push(Role::System, m.text.clone()),
            Role::User => push(Role::User, m.text.clone()),
            Role::Assistant => {
                let mut text = m.text.clone();
                for call in &m.tool_calls {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(
                        &serde_json::json!({"name": call.name, "arguments": call.arguments})
                            .to_string(),
                    );
                }
                push(Role::Assistant, text);
            }
            Role::Tool => {
                let name = m.name.as_deref().unwrap_or("the tool");
                push(Role::User, format!("Result of {name}: {}", m.text));
            }
        }
    }
    if !guided {
        out.insert(0, Message::system(guide));
    }
    out
}

/// The tools and how to call them, for the system prompt.
fn tool_guide(tools: &[&ToolDefinition], mode: CallGrammar, named: Option<&str>) -> String {
    let mut text = String::from(
        "To call a tool, answer with only a JSON object, nothing before or after it:\n\
         {\"name\": \"<tool name>\", \"arguments\": {<its arguments>}}\n",
    );
    text.push_str(match (mode, named) {
        (CallGrammar::Required, Some(_)) => "Call this tool now.\n",
        (CallGrammar::Required, None) => "Call one of these tools now.\n",
        (CallGrammar::Optional, _) => "Or answer the writer in plain text.\n",
    });
    text.push_str("\nTools:");
    for tool in tools {
        text.push_str(&format!(
            "\n- {}: {}",
            tool.name,
            first_sentence(&tool.description)
        ));
        let arguments = describe_arguments(&tool.parameters);
        if !arguments.is_empty() {
            text.push_str(&format!("\n  Arguments: {arguments}"));
        }
    }
    text
}

/// One line per tool: each argument's name, type, whether it is optional, its choices and
/// the first sentence of its description.
fn describe_arguments(schema: &Value) -> String {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return String::new();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    properties
        .iter()
        .map(|(name, p)| {
            let mut kind = match (p.get("type"), p.get("items").and_then(|i| i.get("type"))) {
                (Some(Value::String(t)), Some(Value::String(item))) if t == "array" => {
                    format!("array of {item}")
                }
                (Some(Value::String(t)), _) => t.clone(),
                _ => "any".into(),
            };
            if let Some(values) = p.get("enum").and_then(Value::as_array) {
                let values: Vec<String> = values.iter().map(Value::to_string).collect();
                kind = format!("one of {}", values.join(", "));
            }
            if !required.contains(&name.as_str()) {
                kind.push_str(", optional");
            }
            match p.get("description").and_then(Value::as_str) {
                Some(d) => format!("{name} ({kind}): {}", first_sentence(d)),
                None => format!("{name} ({kind})"),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Text up to its first full stop followed by a space (all of it if there is none).
fn first_sentence(text: &str) -> &str {
    match text.find(". ") {
        Some(end) => &text[..=end],
        None => text.trim_end(),
    }
}

/// Where a grammar-constrained answer stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Only whitespace so far (text or a call may follow).
    Undecided,
    /// Plain text, streamed as it comes.
    Text,
    /// A call's JSON, kept until the answer ends.
    Call,
}

/// Decodes one streamed answer of a model running in the browser.
#[derive(Debug, Clone)]
pub struct LocalStream {
    inner: OpenAiStream,
    /// How tool calls come back (`None`: as tool calls).
    mode: Option<CallGrammar>,
    shape: Shape,
    /// Text not yet passed on: leading whitespace, or the call's JSON.
    held: String,
}

impl LocalStream {
    /// A decoder for the answer to `request`.
    pub fn for_request(request: &HttpRequest) -> Self {
        Self::new(match request.header(GRAMMAR_HEADER) {
            Some("required") => Some(CallGrammar::Required),
            Some("optional") => Some(CallGrammar::Optional),
            _ => None,
        })
    }

    /// A decoder for an answer whose tool calls come as grammar-constrained text (`mode`), or
    /// as tool calls (`None`).
    pub fn new(mode: Option<CallGrammar>) -> Self {
        Self {
            inner: OpenAiStream::new(),
            mode,
            shape: match mode {
                None => Shape::Text,
                Some(CallGrammar::Required) => Shape::Call,
                Some(CallGrammar::Optional) => Shape::Undecided,
            },
            held: String::new(),
        }
    }

    /// The neutral events of one SSE event.
    pub fn on_event(&mut self, msg: SseMessage<'_>) -> Vec<StreamEvent> {
        let events = self.inner.on_event(msg);
        self.translate(events)
    }

    /// The events owed when the byte stream ends.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        let events = self.inner.finish();
        self.translate(events)
    }

    fn translate(&mut self, events: Vec<StreamEvent>) -> Vec<StreamEvent> {
        if self.mode.is_none() {
            return events;
        }
        let mut out = Vec::new();
        for event in events {
            match event {
                StreamEvent::TextDelta { text } => match self.shape {
                    Shape::Text => out.push(StreamEvent::TextDelta { text }),
                    Shape::Call => self.held.push_str(&text),
                    Shape::Undecided => {
                        self.held.push_str(&text);
                        let start = self.held.trim_start();
                        if start.starts_with('{') {
                            self.shape = Shape::Call;
                        } else if !start.is_empty() {
                            self.shape = Shape::Text;
                            out.push(StreamEvent::TextDelta {
                                text: std::mem::take(&mut self.held),
                            });
                        }
                    }
                },
                StreamEvent::Finish { reason } => out.extend(self.end(reason)),
                other => out.push(other),
            }
        }
        out
    }

    /// The events that end the answer: the call the model wrote, if it wrote one.
    fn end(&mut self, reason: FinishReason) -> Vec<StreamEvent> {
        let held = std::mem::take(&mut self.held);
        match self.shape {
            Shape::Call => {}
            Shape::Undecided if !held.is_empty() => {
                return vec![
                    StreamEvent::TextDelta { text: held },
                    StreamEvent::Finish { reason },
                ]
            }
            _ => return vec![StreamEvent::Finish { reason }],
        }
        let call: Option<(String, Value)> =
            serde_json::from_str::<Value>(&held)
                .ok()
                .and_then(|v| match v {
                    Value::Object(mut o) => {
                        let name = o.get("name").and_then(Value::as_str)?.to_string();
                        Some((name, o.remove("arguments").unwrap_or(Value::Null)))
                    }
                    _ => None,
                });
        let clean = matches!(reason, FinishReason::Stop | FinishReason::ToolCalls);
        match call {
            Some((name, arguments)) if clean => vec![
                StreamEvent::ToolCallStarted {
                    index: 0,
                    id: "call_0".into(),
                    name,
                },
                StreamEvent::ToolCallDelta {
                    index: 0,
                    arguments: arguments.to_string(),
                },
                StreamEvent::ToolCallFinished { index: 0 },
                StreamEvent::Finish {
                    reason: FinishReason::ToolCalls,
                },
            ],
            // Cut off or malformed: a call that is never run; the model and the page are
            // told why (the assembler rejects its arguments).
            _ => {
                let name = call.map(|(n, _)| n).unwrap_or_default();
                let mut events = vec![
                    StreamEvent::ToolCallStarted {
                        index: 0,
                        id: "call_0".into(),
                        name,
                    },
                    StreamEvent::ToolCallDelta {
                        index: 0,
                        arguments: held,
                    },
                ];
                if clean {
                    events.push(StreamEvent::ToolCallFinished { index: 0 });
                }
                events.push(StreamEvent::Finish { reason });
                events
            }
        }
    }
}
