//! The hot path of draftsmith's model calls, as bytes and JSON: what a provider streams, read
//! into typed events that borrow their strings from the bytes.
//!
//! - [`sse`]: an incremental Server-Sent Events parser over the bytes the network delivers.
//! - [`lenient`]: typed fields that never fail an event over a value of another type.
//! - [`openai`], [`anthropic`], [`gemini`]: what each provider's stream events hold, and a
//!   function that reads one event's data into them.
//! - [`json`]: any JSON (a tool call's arguments) as a `serde_json::Value`.
//!
//! The decoders in `draftsmith::llm` turn these events into provider-neutral stream events.
//!
//! # Why a crate of its own
//! The release wasm is built for size (`opt-level = "z"`), which makes serde's generated
//! readers much slower. Generic code is compiled in the crate that instantiates it, so this
//! crate is where the readers of stream events are instantiated: its functions are not
//! generic, and the release profile builds it for speed (`opt-level = 3` in the workspace's
//! `Cargo.toml`). `make bench-browser` compares the whole path with eventsource-parser.

pub mod anthropic;
pub mod gemini;
pub mod lenient;
pub mod openai;
pub mod sse;

pub use sse::SseMessage;

/// Any JSON text as a [`serde_json::Value`] (a tool call's whole arguments).
pub fn json(text: &str) -> serde_json::Result<serde_json::Value> {
    serde_json::from_str(text)
}
