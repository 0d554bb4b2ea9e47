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
}

/// Per-call settings.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RequestOptions {
    /// Ask for a server-sent-event stream.
    pub stream: bool,
    /// Output token limit (Anthropic requires one: [`DEFAULT_MAX_TOKENS`] when unset).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
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
