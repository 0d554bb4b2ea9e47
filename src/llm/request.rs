//! What a model call needs, and the HTTP request each adapter builds from it.
//!
//! The adapters only describe the request ([`HttpRequest`]: method, URL, headers, JSON body);
//! sending it is the transport's business (`fetch` in the worker, anything natively).

use serde::{Deserialize, Serialize};

pub use crate::provider::ProviderKind;

/// Where and how to reach a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderConfig {
    /// The wire format.
    pub kind: ProviderKind,
    /// The API root, without the endpoint path: `https://api.openai.com/v1`,
    /// `http://localhost:11434/v1`, `https://api.anthropic.com`,
    /// `https://generativelanguage.googleapis.com`. A trailing `/` is ignored.
    pub base_url: String,
    /// The model name.
    pub model: String,
    /// The API key; local servers need none.
    #[serde(default)]
    pub api_key: Option<String>,
    /// More headers; one named like a default header (case-insensitively) replaces it.
    #[serde(default)]
    pub extra_headers: Vec<(String, String)>,
    /// For a model running in the browser: how to load it, and what it can do.
    #[serde(default)]
    pub local: LocalOptions,
}

/// How a model running in the browser is loaded ([`ProviderKind::Local`]; its URL is
/// [`ProviderConfig::model`]), and what its chat template can do.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalOptions {
    /// The context window in tokens (the runtime's default when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_size: Option<u32>,
    /// CPU threads (the runtime's default when unset: several where the page is
    /// cross-origin isolated, else one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// The model's chat template takes tools: offered tools go to it as they are, and a
    /// grammar is used only when a call is required.
    #[serde(skip)]
    pub template_tools: bool,
}

/// Per-call settings.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RequestOptions {
    /// Ask for a server-sent-event stream.
    pub stream: bool,
    /// Output token limit (Anthropic requires one: [`DEFAULT_MAX_TOKENS`] when unset).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Whether the model must call a tool (sent only when tools are offered).
    #[serde(default)]
    pub tool_choice: ToolChoice,
}

/// Whether the model may answer in text or must call a tool: each adapter writes it as its
/// provider documents it (OpenAI `tool_choice`, Anthropic `tool_choice`, Gemini
/// `toolConfig.functionCallingConfig`). In JSON: `"auto"`, `"required"` or a tool's name.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum ToolChoice {
    /// The model decides (the providers' default): nothing is sent.
    #[default]
    Auto,
    /// The model must call one of the offered tools.
    Required,
    /// The model must call this tool.
    Tool(String),
}

impl ToolChoice {
    /// The choice to send with `tools` offered: none without tools (providers refuse a
    /// required call of nothing), and a required call of any tool when the named tool is
    /// not among them.
    pub fn for_tools<'a>(&self, tools: impl IntoIterator<Item = &'a str>) -> ToolChoice {
        let names: Vec<&str> = tools.into_iter().collect();
        match self {
            _ if names.is_empty() => ToolChoice::Auto,
            ToolChoice::Tool(name) if !names.contains(&name.as_str()) => ToolChoice::Required,
            other => other.clone(),
        }
    }

    /// True for [`ToolChoice::Auto`].
    pub fn is_auto(&self) -> bool {
        *self == ToolChoice::Auto
    }
}

impl From<String> for ToolChoice {
    fn from(s: String) -> Self {
        match s.as_str() {
            "auto" | "" => ToolChoice::Auto,
            "required" => ToolChoice::Required,
            _ => ToolChoice::Tool(s),
        }
    }
}

impl From<ToolChoice> for String {
    fn from(choice: ToolChoice) -> Self {
        match choice {
            ToolChoice::Auto => "auto".into(),
            ToolChoice::Required => "required".into(),
            ToolChoice::Tool(name) => name,
        }
    }
}

/// The output token limit sent to Anthropic when [`RequestOptions::max_tokens`] is unset.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// An HTTP request to send.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpRequest {
    /// Always `POST`.
    pub method: String,
    /// The full URL.
    pub url: String,
    /// Header names and values, in order.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: String,
}

impl HttpRequest {
    /// The value of a header (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A POST of `body` to `url` with JSON content type, the `defaults` headers, then the
/// config's extra headers (replacing defaults of the same name).
pub(crate) fn post(
    config: &ProviderConfig,
    url: String,
    defaults: Vec<(String, String)>,
    body: &serde_json::Value,
) -> HttpRequest {
    let mut headers = vec![("Content-Type".to_string(), "application/json".to_string())];
    headers.extend(defaults);
    for (name, value) in &config.extra_headers {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        headers.push((name.clone(), value.clone()));
    }
    HttpRequest {
        method: "POST".to_string(),
        url,
        headers,
        body: body.to_string(),
    }
}

/// The base URL without a trailing `/`.
pub(crate) fn base(config: &ProviderConfig) -> &str {
    config.base_url.trim_end_matches('/')
}

/// The API key, if one is set and not blank.
pub(crate) fn key(config: &ProviderConfig) -> Option<&str> {
    config
        .api_key
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())
}
