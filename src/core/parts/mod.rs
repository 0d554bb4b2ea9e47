//! The core's parts: the state every client of one core shares, split by what it is about.
//!
//! Each part owns its data in private cells and changes it only through its own methods; the
//! request handlers in `core/*.rs` call those methods, and the dispatcher ([`super::Core`])
//! orchestrates the calls between parts. No part reaches into another's cells.

mod agents;
mod approvals;
mod faults;
mod jobs;
pub(super) mod mcp;
mod model;
mod outbox;
mod proactive;
mod projects;
mod research;
mod runs;
mod settings;
mod sync;
mod tools;

pub(super) use agents::Agents;
pub(super) use approvals::Approvals;
pub use faults::FailSwitch;
pub(super) use faults::Faults;
pub(super) use jobs::Jobs;
pub use jobs::Spawner;
pub(super) use mcp::McpServers;
pub use model::Llm;
pub(super) use model::ModelClient;
pub(super) use outbox::{Hold, Outbox};
pub(super) use proactive::ProactiveMemory;
pub(super) use projects::{not_open, Projects};
pub(super) use research::ResearchState;
pub(super) use runs::Runs;
pub(super) use settings::SettingsState;
pub(super) use sync::{Link, SyncLinks};
pub use sync::{Peer, SyncState};
pub(super) use tools::Tools;
