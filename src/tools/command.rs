//! Commands as the tools build them: a [`Command`] is built from a tool call's JSON
//! arguments by its [`CommandFactory`] and run through the one edit path (the session's
//! `EditContext`); the [`CommandRegistry`] knows, per tool name, the command's category,
//! description, whether it is reversible, and its factory.

use std::fmt;

use serde_json::Value;

use super::ToolError;
use crate::commands::Category;
pub use crate::session::Command;

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
    commands: std::collections::BTreeMap<&'static str, CommandMeta>,
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
