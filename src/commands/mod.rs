//! Commands: every mutation of a project is a [`Command`] run through the one edit path
//! ([`crate::session::Session`]), recorded in the [`History`] with its [`Origin`].
//!
//! The [`CommandRegistry`] knows, per tool name, the command's category, description,
//! whether it is reversible, and a factory that builds the command from JSON arguments.

pub mod history;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use self::history::{
    Effect, Entry, EntryKind, FileEffect, FileSet, FileState, History, HistoryChanges,
    HistoryLimits, HistoryState, Moved,
};
use crate::session::EditContext;
use crate::tools::ToolError;

/// Who made a change.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

impl Serialize for Origin {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Origin {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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

/// A command built from a tool call's arguments, ready to run through the edit path.
pub trait Command {
    /// Run it. Edits go through `cx`; if this returns an error, every edit it made is
    /// rolled back by the caller.
    fn execute(self: Box<Self>, cx: &mut EditContext<'_>) -> Result<Value, ToolError>;
}

/// Builds a command from the tool's name and JSON arguments, or says which argument is wrong.
pub type CommandFactory = fn(&str, Value) -> Result<Box<dyn Command>, ToolError>;

/// What the registry knows about one command.
#[derive(Clone)]
pub struct CommandMeta {
    /// The tool name, such as `update_manuscript`.
    pub name: &'static str,
    /// Category.
    pub category: Category,
    /// What it does, for the model.
    pub description: &'static str,
    /// Whether its edits can be undone (ui commands and reads are not).
    pub reversible: bool,
    /// Builds the command from arguments.
    pub factory: CommandFactory,
}

impl fmt::Debug for CommandMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandMeta")
            .field("name", &self.name)
            .field("category", &self.category)
            .field("reversible", &self.reversible)
            .finish()
    }
}

/// Command metadata by tool name.
#[derive(Debug, Clone, Default)]
pub struct CommandRegistry {
    commands: BTreeMap<&'static str, CommandMeta>,
}

impl CommandRegistry {
    /// Add (or replace) a command.
    pub fn register(&mut self, meta: CommandMeta) {
        self.commands.insert(meta.name, meta);
    }

    /// The command named `name`.
    pub fn get(&self, name: &str) -> Option<&CommandMeta> {
        self.commands.get(name)
    }

    /// All commands, by name.
    pub fn iter(&self) -> impl Iterator<Item = &CommandMeta> {
        self.commands.values()
    }

    /// How many commands there are.
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }
}
