//! Which wire format a model provider speaks: [`ProviderKind`]. The model client (`llm`)
//! builds requests and decodes answers by it, and the tool catalog (`tools`) is exported in
//! the same formats, so the kind sits below both.

use serde::{Deserialize, Serialize};

/// A provider's wire format: OpenAI-compatible, Anthropic, Gemini, or a model running in this
/// browser. It decides the request and stream formats (`llm`) and the shape of the tool
/// catalog (`tools::CatalogFormat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// `[{"type": "function", "function": {name, description, parameters}}]`
    Openai,
    /// `[{name, description, input_schema}]`
    Anthropic,
    /// `{"functionDeclarations": [{name, description, parameters}]}`
    Gemini,
    /// A model running in this browser (wllama): OpenAI-shaped requests and chunks, with a
    /// grammar for tool calls where the model's chat template has none; its catalog is
    /// OpenAI's.
    Local,
}

impl std::str::FromStr for ProviderKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "openai" => Ok(Self::Openai),
            "anthropic" => Ok(Self::Anthropic),
            "gemini" => Ok(Self::Gemini),
            "local" => Ok(Self::Local),
            _ => Err(format!(
                "unknown provider format '{s}'; use openai, anthropic, gemini or local"
            )),
        }
    }
}
