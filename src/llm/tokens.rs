//! How many tokens a request takes, and how many a model can take.
//!
//! - [`estimate_text`] counts without a tokenizer: the wasm carries no vocabulary (OpenAI's
//!   alone is megabytes, and every provider has its own). It is calibrated against OpenAI's
//!   `o200k_base` and `cl100k_base` on prose, JSON tool results and tool schemas in several
//!   scripts (`tests/tokens.rs` prints its error), and errs on the high side: a request it
//!   passes fits; one it refuses is compacted a little early.
//! - [`default_window`]: the context window of the providers' common models, by name.
//! - [`is_context_overflow`]: whether a provider's error says the request was too long.

use super::{Message, ProviderConfig, ProviderKind};
use crate::tools::ToolDefinition;

/// Tokens every message costs beyond its text (its role and framing).
pub const MESSAGE_OVERHEAD: usize = 4;

/// Estimated tokens of `text`: about four letters, digits or spaces of ASCII per token, a
/// punctuation mark about half a token (JSON and code split there), one token per other
/// character of the Basic Multilingual Plane (accented letters), and more for the
/// ideographs and kana (a quarter more) and for characters beyond it (emoji: two).
pub fn estimate_text(text: &str) -> usize {
    let mut plain = 0usize;
    let mut punct = 0usize;
    let mut other = 0usize;
    let mut ideographs = 0usize;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == ' ' {
            plain += 1;
        } else if c.is_ascii() {
            punct += 1;
        } else if ('\u{3000}'..='\u{9fff}').contains(&c) || ('\u{ac00}'..='\u{d7af}').contains(&c) {
            ideographs += 1;
        } else if (c as u32) > 0xffff {
            other += 2;
        } else {
            other += 1;
        }
    }
    plain.div_ceil(4) + punct.div_ceil(2) + other + (ideographs * 5).div_ceil(4)
}

/// Estimated tokens of a message: its text, its tool calls (name and arguments) and framing.
pub fn estimate_message(message: &Message) -> usize {
    let calls: usize = message
        .tool_calls
        .iter()
        .map(|c| {
            estimate_text(&c.name) + estimate_text(&c.arguments.to_string()) + MESSAGE_OVERHEAD
        })
        .sum();
    estimate_text(&message.text) + calls + MESSAGE_OVERHEAD
}

/// Estimated tokens of the tools' definitions as a request carries them.
pub fn estimate_tools(tools: &[&ToolDefinition]) -> usize {
    tools
        .iter()
        .map(|t| {
            estimate_text(&t.name)
                + estimate_text(&t.description)
                + estimate_text(&t.parameters.to_string())
                + MESSAGE_OVERHEAD
        })
        .sum()
}

/// Estimated tokens of a request: its messages and its tools.
pub fn estimate_request(messages: &[Message], tools: &[&ToolDefinition]) -> usize {
    messages.iter().map(estimate_message).sum::<usize>() + estimate_tools(tools)
}

/// The smallest context window a setting may give (tokens).
pub const MIN_WINDOW: u32 = 256;
/// The largest context window a setting may give (tokens).
pub const MAX_WINDOW: u32 = 10_000_000;

/// The context window of a model in the browser when its load options do not say.
pub const LOCAL_DEFAULT_WINDOW: u32 = 2_048;

/// The context window of the configured model, by its name (the families the providers
/// document); for a model in the browser, the size it is loaded with. `None` for a model
/// of an OpenAI-compatible server it does not know (Ollama, llama.cpp, vLLM…): their
/// windows are what they were started with.
pub fn default_window(config: &ProviderConfig) -> Option<u32> {
    let m = config.model.to_ascii_lowercase();
    let m = m.rsplit('/').next().unwrap_or(&m);
    let starts = |prefixes: &[&str]| prefixes.iter().any(|p| m.starts_with(p));
    match config.kind {
        ProviderKind::Local => Some(config.local.context_size.unwrap_or(LOCAL_DEFAULT_WINDOW)),
        ProviderKind::Anthropic => Some(200_000),
        ProviderKind::Gemini if starts(&["gemini-1.0", "gemini-pro"]) => Some(32_768),
        ProviderKind::Gemini => Some(1_048_576),
        ProviderKind::Openai => Some({
            if starts(&["gpt-4.1"]) {
                1_047_576
            } else if starts(&["gpt-5"]) {
                400_000
            } else if starts(&["o1-mini", "o1-preview"]) {
                128_000
            } else if starts(&["o1", "o3", "o4"]) {
                200_000
            } else if starts(&["gpt-4o", "chatgpt-4o", "gpt-4-turbo", "gpt-4.5", "gpt-oss"]) {
                128_000
            } else if starts(&["gpt-4-32k"]) {
                32_768
            } else if starts(&["gpt-4"]) {
                8_192
            } else if starts(&["gpt-3.5"]) {
                16_385
            } else if starts(&["claude"]) {
                200_000
            } else if starts(&["gemini"]) {
                1_048_576
            } else {
                return None;
            }
        }),
    }
}

/// Whether a provider's error message says the request does not fit the model's context
/// window: OpenAI's `context_length_exceeded` ("maximum context length"), Anthropic's
/// "prompt is too long", Gemini's "input token count … exceeds the maximum", llama.cpp's
/// "exceed context window" / "exceeds the available context size", and the in-browser
/// runtime's `context_length_exceeded`.
pub fn is_context_overflow(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "context_length_exceeded",
        "maximum context length",
        "context length exceeded",
        "prompt is too long",
        "exceed context window",
        "exceeds the context window",
        "exceeds the available context size",
        "exceed_context_size",
        "context window of",
        "too many tokens",
        "kv_cache_full",
        "kv cache is full",
    ]
    .iter()
    .any(|needle| m.contains(needle))
        || (m.contains("input token count") && m.contains("exceeds"))
        || (m.contains("tokens") && m.contains("exceed") && m.contains("context"))
}

#[cfg(test)]
mod tests {
    use super::is_context_overflow;

    /// The in-browser runtime (llama.cpp in wllama) refuses a prompt longer than the context
    /// it was loaded with; the bridge passes its words on, which the core must read as an
    /// overflow to compact and retry.
    #[test]
    fn the_in_browser_runtimes_refusal_is_an_overflow() {
        assert!(is_context_overflow(
            "request (2311 tokens) exceeds the available context size (2048 tokens), try increasing it"
        ));
    }
}
