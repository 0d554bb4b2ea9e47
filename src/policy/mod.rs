//! Approval policies: when an agent's change to the story bible needs the writer's approval.
//!
//! Each tool has a [`Mode`] (configurable per tool name, see [`Policies`]):
//! - [`Mode::Permissive`]: never asks;
//! - [`Mode::Standard`]: asks when the change would overwrite or remove data the writer
//!   (origin `human`) or an import wrote; empty and agent-written fields are the agents' to
//!   fill and refine;
//! - [`Mode::Strict`]: always asks.
//!
//! The defaults follow the tool's action ([`action_of`]): reads are permissive; creates are
//! permissive (glossary entries, translations, QA records, locations) or strict (characters,
//! routes); updates are standard; deletes are standard (glossary entries, translation lines)
//! or strict (characters, locations, routes). Only agents are ever asked: the writer's own
//! changes, from the page, and imports never are.
//!
//! A call that needs approval fails with `approval_required` and changes nothing; the core
//! records it as a pending approval. When the writer approves, the call runs again with a
//! [`Grant`] naming the entity versions the writer saw: if the entity changed since, the call
//! gets a conflict instead of overwriting.
//!
//! **Memory notes** follow the same rules ([`note_needs_approval`]): `update_memory_note` and
//! `delete_memory_note` are standard by default, where a note is protected when the writer or
//! an import wrote it ([`crate::memory::MemoryNote::author`]) or when it is global (seen in
//! every project). An agent may change and delete the notes agents wrote in its project. An
//! approval names the note as `memory_note/<id>` ([`Grant::note_key`]) with its version.
//!
//! Conflict detection ([`crate::bible::Judge`]): an agent run's update of a filled field
//! written after the entity's version the run last read or wrote gets
//! `CONCURRENT UPDATE DETECTED` and changes nothing, whoever wrote it (another unit of the
//! same subagent too). [`Policies::window_ms`] is the recent-update window that judges a run
//! that never read the entity, and calls outside a run (by origin).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::json;
use serde_json::Value;

use crate::bible::{is_empty_value, is_protected_origin, Actor, Entity, Kind};
use crate::commands::Origin;
use crate::error::ToolError;
use crate::memory::{MemoryNote, NotePatch, Scope};

/// Default recent-update window (ms).
pub const DEFAULT_WINDOW_MS: u64 = 30_000;

/// How careful a tool is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "ApprovalPolicy")]
pub enum Mode {
    /// Never asks.
    Permissive,
    /// Asks before overwriting or removing what the writer (or an import) wrote.
    Standard,
    /// Always asks an agent.
    Strict,
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "permissive" => Ok(Mode::Permissive),
            "standard" => Ok(Mode::Standard),
            "strict" => Ok(Mode::Strict),
            _ => Err(format!(
                "'{}' is not a policy; use permissive, standard or strict",
                s.chars().take(40).collect::<String>()
            )),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Permissive => "permissive",
            Mode::Standard => "standard",
            Mode::Strict => "strict",
        })
    }
}

/// What a tool does to the bible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Reads.
    Read,
    /// Creates entities.
    Create,
    /// Changes fields.
    Update,
    /// Removes entities.
    Delete,
}

/// The action of a tool, from its `{data}_{crud}_{thing}` name. Merges count as deletes
/// (they remove entries).
pub fn action_of(tool: &str) -> Action {
    if tool.contains("_delete_") || tool.contains("_merge_") {
        Action::Delete
    } else if tool.contains("_update_") {
        Action::Update
    } else if tool.contains("_create_") {
        Action::Create
    } else {
        Action::Read
    }
}

/// The kind a memory note has on an approval card and in a grant key.
pub const NOTE_KIND: &str = "memory_note";

/// The kind of an MCP tool's call on an approval card (its id: the server's name). It names
/// nothing of the project: nothing is locked or versioned for it.
pub const MCP_KIND: &str = "mcp_server";

/// The default mode of a tool.
pub fn default_mode(tool: &str) -> Mode {
    // A tool of an MCP server may do anything: the writer approves each call unless they
    // relax it.
    if crate::mcp::is_mcp(tool) {
        return Mode::Strict;
    }
    if matches!(tool, "update_memory_note" | "delete_memory_note") {
        return Mode::Standard;
    }
    match action_of(tool) {
        Action::Read => Mode::Permissive,
        Action::Create => match tool {
            "character_create_entry" | "route_create_entry" => Mode::Strict,
            _ => Mode::Permissive,
        },
        Action::Update => Mode::Standard,
        Action::Delete => match tool {
            "character_delete_entry" | "location_delete_entry" | "route_delete_entry" => {
                Mode::Strict
            }
            _ => Mode::Standard,
        },
    }
}

/// The configured policies: per-tool modes over the defaults, and the recent-update window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Policies {
    /// Modes by tool name, over [`default_mode`] (saved as a JSON object).
    #[serde(default)]
    pub modes: std::collections::BTreeMap<String, Mode>,
    /// The recent-update window of conflict detection (ms).
    #[serde(default = "default_window")]
    pub window_ms: u64,
}

fn default_window() -> u64 {
    DEFAULT_WINDOW_MS
}

impl Default for Policies {
    fn default() -> Self {
        Self {
            modes: std::collections::BTreeMap::new(),
            window_ms: DEFAULT_WINDOW_MS,
        }
    }
}

impl Policies {
    /// The mode of a tool: its own, else (an MCP tool) its server's (`mcp__<server>__*`),
    /// else the default.
    pub fn mode(&self, tool: &str) -> Mode {
        self.modes
            .get(tool)
            .or_else(|| crate::mcp::pattern_of(tool).and_then(|p| self.modes.get(&p)))
            .copied()
            .unwrap_or_else(|| default_mode(tool))
    }
}

/// The writer's approval of one call: the versions of the entities the writer saw when
/// deciding (by [`Entity::key`]-style `kind/id`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Grant {
    /// `kind/id` → version at the time of the request (0: the entity did not exist).
    pub versions: BTreeMap<String, u64>,
}

impl Grant {
    /// The key of an entity in a grant.
    pub fn key(kind: Kind, id: &str) -> String {
        format!("{kind}/{id}")
    }

    /// The key of a memory note in a grant: `memory_note/<id>`.
    pub fn note_key(id: &str) -> String {
        format!("{NOTE_KIND}/{id}")
    }
}

/// One field an approval is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(rename = "ApprovalField")]
pub struct FieldChange {
    /// Field name.
    pub field: String,
    /// Its value now.
    #[ts(type = "unknown")]
    pub current: Value,
    /// Who wrote it.
    pub current_origin: Option<String>,
    /// What the call would make it (`null` for a delete).
    #[ts(type = "unknown")]
    pub proposed: Value,
}

/// Whether `actor` needs approval to apply `action` under `mode` to `entity` (absent for a
/// create), changing `fields`. Returns why, if so.
pub fn needs_approval(
    mode: Mode,
    action: Action,
    actor: &Actor,
    entity: Option<&Entity>,
    fields: &[&str],
) -> Option<String> {
    if !actor.is_agent() || action == Action::Read {
        return None;
    }
    match mode {
        Mode::Permissive => None,
        Mode::Strict => Some(format!(
            "this tool's policy is strict: every {} by an agent needs the writer's approval",
            match action {
                Action::Create => "create",
                Action::Update => "update",
                Action::Delete => "delete",
                Action::Read => "read",
            }
        )),
        Mode::Standard => {
            let entity = entity?;
            let protected = |field: &&str| {
                !is_empty_value(entity.fields.get(*field))
                    && entity.origin(field).is_some_and(is_protected_origin)
            };
            let names: Vec<&str> = match action {
                Action::Delete => entity
                    .fields
                    .keys()
                    .map(String::as_str)
                    .filter(protected)
                    .collect(),
                _ => fields.iter().copied().filter(protected).collect(),
            };
            (!names.is_empty()).then(|| {
                format!(
                    "{} written by the writer ({}); changing it needs the writer's approval",
                    if names.len() == 1 {
                        "the field was"
                    } else {
                        "these fields were"
                    },
                    names.join(", ")
                )
            })
        }
    }
}

/// Whether `actor` needs approval to apply `action` (an update or a delete) under `mode` to
/// `note`. Returns why, if so. Under [`Mode::Standard`], the notes the writer or an import
/// wrote and the global notes are protected.
pub fn note_needs_approval(
    mode: Mode,
    action: Action,
    actor: &Actor,
    note: &MemoryNote,
) -> Option<String> {
    if !actor.is_agent() || action == Action::Read {
        return None;
    }
    let verb = if action == Action::Delete {
        "deleting"
    } else {
        "changing"
    };
    match mode {
        Mode::Permissive => None,
        Mode::Strict => Some(format!(
            "this tool's policy is strict: {verb} any memory note needs the writer's approval"
        )),
        Mode::Standard => match (&note.author, note.scope) {
            (_, Scope::Global) => Some(format!(
                "the note is global (seen in every project); {verb} it needs the writer's approval"
            )),
            (Origin::Agent(_), _) => None,
            (Origin::User, _) => Some(format!(
                "the writer wrote this note; {verb} it needs the writer's approval"
            )),
            (Origin::Import, _) => Some(format!(
                "this note was imported; {verb} it needs the writer's approval"
            )),
            (Origin::Remote(_), _) => Some(format!(
                "this note came from another device; {verb} it needs the writer's approval"
            )),
        },
    }
}

/// The origin a note's author shows with on a card, in the story bible's terms (`human` for
/// the writer).
pub fn note_origin(note: &MemoryNote) -> String {
    match &note.author {
        Origin::User => "human".to_string(),
        other => other.to_string(),
    }
}

/// The `approval_required` error of an agent's update (`patch`, checked) or delete (`None`)
/// of a memory note: nothing changed; the details hold the note's current values and the
/// proposed ones (the text always; `null` everywhere for a delete), the card's `changes`
/// name a deletion, and `versions` names the note for the grant.
pub fn note_approval_required(
    tool: &str,
    note: &MemoryNote,
    patch: Option<&NotePatch>,
    reason: &str,
) -> ToolError {
    let origin = note_origin(note);
    let field = |name: &str, current: Value, proposed: Value| FieldChange {
        field: name.to_string(),
        current,
        current_origin: Some(origin.clone()),
        proposed,
    };
    let mut fields = Vec::new();
    match patch {
        Some(p) => {
            let text = p.text.clone().unwrap_or_else(|| note.text.clone());
            fields.push(field("text", json!(note.text), json!(text)));
            if let Some(t) = p.note_type {
                fields.push(field("type", json!(note.note_type), json!(t)));
            }
            if let Some(tags) = &p.tags {
                fields.push(field("tags", json!(note.tags), json!(tags)));
            }
            if let Some(i) = p.importance {
                fields.push(field("importance", json!(note.importance), json!(i)));
            }
        }
        None => {
            fields.push(field("text", json!(note.text), Value::Null));
            fields.push(field("type", json!(note.note_type), Value::Null));
            fields.push(field("tags", json!(note.tags), Value::Null));
            fields.push(field("importance", json!(note.importance), Value::Null));
        }
    }
    let action = if patch.is_some() { "update" } else { "delete" };
    let title: String = note.text.chars().take(60).collect();
    let changes = if patch.is_some() {
        json!([])
    } else {
        json!([{"kind": NOTE_KIND, "id": note.id, "title": title, "action": "delete", "fields": fields}])
    };
    let id = &note.id;
    ToolError::new(
        "approval_required",
        format!("{tool} on memory note '{id}' needs the writer's approval: {reason}. Nothing was changed yet."),
    )
    .with_details(json!({
        "kind": NOTE_KIND,
        "id": id,
        "version": note.version,
        "versions": { Grant::note_key(id): note.version },
        "action": action,
        "scope": note.scope,
        "author": note.author,
        "fields": fields,
        "changes": changes,
        "reason": reason,
    }))
}

/// The `approval_required` error of a call: nothing changed; the details say what the
/// writer is asked to approve.
pub fn approval_required(
    tool: &str,
    kind: Kind,
    id: &str,
    version: u64,
    fields: Vec<FieldChange>,
    reason: &str,
) -> ToolError {
    ToolError::new(
        "approval_required",
        format!("{tool} on {kind} '{id}' needs the writer's approval: {reason}. Nothing was changed yet."),
    )
    .with_details(json!({
        "kind": kind,
        "id": id,
        "version": version,
        "fields": fields,
        "reason": reason,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_action() {
        assert_eq!(default_mode("character_read_entry"), Mode::Permissive);
        assert_eq!(default_mode("glossary_create_entry"), Mode::Permissive);
        assert_eq!(default_mode("character_create_entry"), Mode::Strict);
        assert_eq!(default_mode("route_create_entry"), Mode::Strict);
        assert_eq!(default_mode("scene_update_summary"), Mode::Standard);
        assert_eq!(default_mode("glossary_delete_entry"), Mode::Standard);
        assert_eq!(default_mode("character_delete_entry"), Mode::Strict);
        assert_eq!(action_of("glossary_merge_entries"), Action::Delete);
        assert_eq!(default_mode("update_memory_note"), Mode::Standard);
        assert_eq!(default_mode("delete_memory_note"), Mode::Standard);
        assert_eq!(default_mode("write_memory_note"), Mode::Permissive);
        let mut p = Policies::default();
        p.modes.insert("scene_update_summary".into(), Mode::Strict);
        assert_eq!(p.mode("scene_update_summary"), Mode::Strict);
        assert_eq!(default_mode("mcp__style__check"), Mode::Strict);
        p.modes.insert("mcp__style__*".into(), Mode::Permissive);
        assert_eq!(p.mode("mcp__style__check"), Mode::Permissive);
        p.modes.insert("mcp__style__check".into(), Mode::Strict);
        assert_eq!(p.mode("mcp__style__check"), Mode::Strict);
        assert_eq!(p.mode("mcp__other__check"), Mode::Strict);
    }
}
