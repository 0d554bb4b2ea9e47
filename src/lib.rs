//! # draftsmith
//!
//! The agent core of an in-browser writing editor. The crate compiles natively (where every
//! test of the core runs) and to `wasm32-unknown-unknown`, where `web` adapts it to a
//! dedicated Web Worker.
//!
//! ## The seam
//! Everything outside `web` is plain Rust with no browser types. The core reaches the
//! outside world through small traits: `Store` (persistence), `LlmTransport` (model and page
//! fetches), [`Clock`] (time) and [`IdSource`] (ids). Native tests use the in-memory and
//! scripted implementations; the worker uses the ones in `web` (rexie, gloo-net, JS time).
//!
//! ## Modules, from the bottom layer up
//! A module names only modules of its own layer or the layers below; `tests/layers.rs` holds
//! the order and checks it (and that no files form an import cycle).
//!
//! 1. Foundations:
//!    - [`project`]: the manuscript: chapters, their text (ropey), change sets, analysis, search.
//!    - [`store`]: the `Store` trait, the record schema and its versions, `MemoryStore`.
//!    - [`env`](mod@crate::env): injected time ([`Clock`]), ids ([`IdSource`]), the event sink ([`EventSink`]).
//!    - [`error`]: the crate [`Error`] and the per-area error enums.
//!    - [`names`]: closest-name suggestions for unknown names in errors.
//!    - [`provider`]: which wire format a model provider speaks.
//!    - [`mcp`]: MCP tool servers: their names, tools and call results, and the seam to the
//!      environment's MCP client.
//! 2. What a project holds:
//!    - [`commands`]: the undo history shared by the writer and the agents.
//!    - [`bible`]: the story bible's entities, with per-field provenance and versions.
//!    - [`memory`]: notes, goals, watched entities, the bedside note and their search.
//!    - [`files`]: the `data/` file view: free files and the path sandbox.
//!    - [`research`]: web pages read for a project: URL checks, extraction, research notes.
//!    - [`editor_context`]: the `[EDITOR CONTEXT]` block of a run's system prompt.
//! 3. [`policy`]: when an agent's change needs the writer's approval.
//! 4. The edit path:
//!    - [`session`]: one open project, its one exclusive edit path and the tool result shape.
//!    - [`persist`]: sessions to and from store records.
//! 5. [`tools`]: the typed tools agents call, their schemas and the registry.
//! 6. [`llm`]: provider-neutral model calls, the provider adapters, SSE and tool-call assembly.
//! 7. Agents:
//!    - [`agent`]: agent specs and presets, the agent loop, pipelines.
//!    - [`settings`]: which model the agents call, and how.
//! 8. The core:
//!    - [`protocol`]: the worker's message protocol: request decoding, responses, events, and
//!      the stable error codes.
//!    - [`core`]: [`Core`], which serves decoded requests.
//! 9. Entry points:
//!    - `headless` (native only): the worker protocol as JSON lines on stdin and stdout
//!      (`cargo run --example core`).
//!    - `web` (wasm32 only): the worker entry, IndexedDB (rexie), fetch (gloo-net), JS time and ids.

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
pub mod mcp;
pub mod memory;
pub mod names;
pub mod persist;
pub mod policy;
pub mod project;
pub mod protocol;
pub mod provider;
pub mod replica;
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
