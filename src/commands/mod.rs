//! Commands: every mutation of a project is a command run through the one edit path (the
//! session, a floor above), recorded in the [`History`] with its [`Origin`]. This floor holds
//! what the history and the stores need of them: origins, undo scopes, tool categories and
//! the history itself; the command trait and its registry live with the tools.

pub mod history;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

pub use self::history::{
    Effect, Entry, EntryKind, FileEffect, FileSet, FileState, History, HistoryChanges,
    HistoryLimits, HistoryState, Moved,
};

/// Who made a change. Written as its text (`user`, `import`, `agent:<name>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(into = "String", try_from = "String")]
#[ts(type = "'user' | 'import' | `agent:${string}`")]
pub enum Origin {
    /// The writer, in the page.
    User,
    /// An agent, by name.
    Agent(String),
    /// An import.
    Import,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::User => f.write_str("user"),
            Origin::Agent(name) => write!(f, "agent:{name}"),
            Origin::Import => f.write_str("import"),
        }
    }
}

/// An origin string was not `user`, `import` or `agent:<name>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("origin '{0}' is not 'user', 'import' or 'agent:<name>'")]
pub struct BadOrigin(pub String);

impl FromStr for Origin {
    type Err = BadOrigin;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "user" => Ok(Origin::User),
            "import" => Ok(Origin::Import),
            _ => match s.strip_prefix("agent:") {
                Some(name) if !name.trim().is_empty() && name.len() <= 100 => {
                    Ok(Origin::Agent(name.to_string()))
                }
                _ => Err(BadOrigin(s.chars().take(100).collect())),
            },
        }
    }
}

impl From<Origin> for String {
    fn from(origin: Origin) -> String {
        origin.to_string()
    }
}

impl TryFrom<String> for Origin {
    type Error = BadOrigin;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

/// Which origins an origin-scoped undo applies to: `user`, `import`, `agent` (any agent) or
/// `agent:<name>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginFilter {
    /// Exactly this origin.
    Exact(Origin),
    /// Any agent.
    AnyAgent,
}

impl OriginFilter {
    /// Whether `origin` is in scope.
    pub fn matches(&self, origin: &Origin) -> bool {
        match self {
            OriginFilter::Exact(o) => o == origin,
            OriginFilter::AnyAgent => matches!(origin, Origin::Agent(_)),
        }
    }
}

impl FromStr for OriginFilter {
    type Err = BadOrigin;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "agent" {
            Ok(OriginFilter::AnyAgent)
        } else {
            s.parse().map(OriginFilter::Exact)
        }
    }
}

/// Tool and command categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "ToolCategory")]
pub enum Category {
    /// Moving around the manuscript.
    Navigation,
    /// Changing the manuscript's text.
    Editing,
    /// Reading figures and critiques.
    Analysis,
    /// Editor UI state.
    Ui,
    /// Looking up story knowledge.
    Knowledge,
    /// Model-generated text.
    Generation,
    /// The agent's memory.
    Memory,
    /// The story bible (scenes, characters, locations, routes, glossary, translations...).
    Bible,
}
