//! # draftsmith
//!
//! The agent core of an in-browser writing editor. The crate compiles natively (where every
//! test of the core runs) and to `wasm32-unknown-unknown`, where `web` adapts it to a
//! dedicated Web Worker.
//!
//! ## The seam
//! Everything outside `web` is plain Rust with no browser types. The core reaches the
//! outside world through small traits: [`Clock`] and [`IdSource`] today, later `Store`
//! (persistence) and `LlmTransport` (model calls). Native tests use the manual and
//! sequential implementations from [`env`](mod@crate::env); the worker uses the JS ones in `web`.
//!
//! ## Modules
//! - [`error`]: the crate [`Error`] and per-area error enums.
//! - [`env`](mod@crate::env): injected time ([`Clock`]), ids ([`IdSource`]) and the event sink ([`EventSink`]).
//! - [`protocol`]: the worker's message protocol: request decoding, responses, events.
//! - [`core`]: [`Core`], which serves decoded requests.
//! - [`editor_context`]: the `[EDITOR CONTEXT]` block of a run's system prompt (what the
//!   writer sees: chapters, cursor, selection, paragraph, story bible, toolset).
//! - [`memory`]: the agent's memory: notes, goals, watched entities, the bedside note, BM25
//!   search and the `[AGENT MEMORY]` context block.
//! - [`research`]: web pages read for a project: URL checks, HTML extraction, research
//!   notes and their BM25 search.
//! - [`files`]: the `data/` file view: free files (`plans/`, `notes/`) and the path sandbox.
//! - [`names`]: closest-name suggestions for unknown names in errors.
//! - `headless` (native only): the worker protocol as JSON lines on stdin and stdout, for
//!   scripting and checks (`cargo run --example core`).
//! - `web` (wasm32 only): the worker entry, JS clock and ids.

#![forbid(unsafe_code)]

pub mod agent;
pub mod bible;
pub mod commands;
pub mod core;
pub mod editor_context;
pub mod env;
pub mod error;
pub mod files;
#[cfg(not(target_arch = "wasm32"))]
pub mod headless;
pub mod llm;
pub mod memory;
pub mod names;
pub mod persist;
pub mod policy;
pub mod project;
pub mod protocol;
pub mod research;
pub mod session;
pub mod settings;
pub mod store;
pub mod tools;

#[cfg(target_arch = "wasm32")]
pub mod web;

pub use crate::core::Core;
pub use crate::env::{Clock, EventSink, IdSource, ManualClock, RecordingSink, SequentialIds};
pub use crate::error::{Error, ProtocolError};
pub use crate::protocol::{ErrorCode, Event, Request, RequestId, Response};

/// The crate version, as reported by the `hello` request.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
