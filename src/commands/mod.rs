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

/// Who made a change. Written as its text (`user`, `import`, `agent:<name>`,
/// `remote:<client>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(into = "String", try_from = "String")]
#[ts(type = "'user' | 'import' | `agent:${string}` | `remote:${string}`")]
pub enum Origin {
    /// The writer, in the page.
    User,
    /// An agent, by name.
    Agent(String),
    /// An import.
    Import,
    /// Another device or co-author, by the name its client goes by: a change that arrived
    /// through sync. The history maps positions through it but never undoes it.
    Remote(String),
}

impl Origin {
    /// Whether the change was made here (by the writer, an agent or an import), not
    /// received from another device.
    pub fn is_local(&self) -> bool {
        !matches!(self, Origin::Remote(_))
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::User => f.write_str("user"),
            Origin::Agent(name) => write!(f, "agent:{name}"),
            Origin::Import => f.write_str("import"),
            Origin::Remote(name) => write!(f, "remote:{name}"),
        }
    }
}

/// An origin string was not `user`, `import`, `agent:<name>` or `remote:<client>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("origin '{0}' is not 'user', 'import', 'agent:<name>' or 'remote:<client>'")]
pub struct BadOrigin(pub String);

impl FromStr for Origin {
    type Err = BadOrigin;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "user" => Ok(Origin::User),
            "import" => Ok(Origin::Import),
            _ => {
                let named = |prefix: &str| {
                    s.strip_prefix(prefix)
                        .filter(|name| !name.trim().is_empty() && name.len() <= 100)
                        .map(str::to_string)
                };
                match (named("agent:"), named("remote:")) {
                    (Some(name), _) => Ok(Origin::Agent(name)),
                    (_, Some(name)) => Ok(Origin::Remote(name)),
                    _ => Err(BadOrigin(s.chars().take(100).collect())),
                }
            }
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
/// `agent:<name>`; plain undo past a change from another device uses [`OriginFilter::Local`].
/// A remote origin is never in scope: each device undoes only its own changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginFilter {
    /// Exactly this origin.
    Exact(Origin),
    /// Any agent.
    AnyAgent,
    /// Any origin of this device (the writer, agents, imports).
    Local,
}

impl OriginFilter {
    /// Whether `origin` is in scope.
    pub fn matches(&self, origin: &Origin) -> bool {
        match self {
            OriginFilter::Exact(o) => o == origin && origin.is_local(),
            OriginFilter::AnyAgent => matches!(origin, Origin::Agent(_)),
            OriginFilter::Local => origin.is_local(),
        }
    }
}

impl FromStr for OriginFilter {
    type Err = BadOrigin;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "agent" => Ok(OriginFilter::AnyAgent),
            _ => match s.parse()? {
                // Changes from other devices are theirs to undo.
                Origin::Remote(_) => Err(BadOrigin(s.chars().take(100).collect())),
                origin => Ok(OriginFilter::Exact(origin)),
            },
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
