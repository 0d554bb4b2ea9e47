//! A campaign of a role-playing game (the Dungeon Master preset), as the story bible keeps
//! it: an entity of kind `campaign` whose fields are the game's state (where the party is,
//! who is in it with their hit points, what it carries, the quest log and the in-game
//! time), each field with its provenance like every bible field, so a value the writer set
//! asks the writer before an agent changes it.
//!
//! [`Campaign`] is the typed view of such an entity; [`PartyMember`] and [`Quest`] are the
//! shapes of the structured fields, which [`super::check_value`] checks through them. The
//! campaign in play is the one changed last ([`current`]): the one just created, or the one
//! the game last touched.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use super::{Bible, BibleError, Entity, Kind};

/// Most members of a party.
pub const MAX_PARTY: usize = 20;
/// Most quests in a quest log.
pub const MAX_QUESTS: usize = 100;

/// One member of the party.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct PartyMember {
    /// The character's name (as in the story bible's characters, if recorded there).
    pub name: String,
    /// Current hit points (0: down).
    pub hp: u32,
    /// Maximum hit points.
    pub max_hp: u32,
    /// Conditions such as poisoned or prone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub conditions: Vec<String>,
}

/// Where a quest stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum QuestStatus {
    /// Under way.
    #[default]
    Active,
    /// Completed.
    Done,
    /// Failed or abandoned.
    Failed,
}

/// One quest of the quest log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct Quest {
    /// The quest's title.
    pub title: String,
    /// Where it stands (default active).
    #[serde(default)]
    pub status: QuestStatus,
    /// What is known about it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(default)]
    #[ts(as = "Option<String>", optional)]
    pub notes: String,
}

/// A campaign's state, read from its entity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Campaign {
    /// The entity's id.
    pub id: String,
    /// Its version (bumped by every change).
    pub version: u64,
    /// The campaign's name.
    pub name: String,
    /// The premise: setting, tone, the hook.
    pub premise: String,
    /// The outline file (under `data/plans/`), if one was written.
    pub outline: String,
    /// Where the party is.
    pub location: String,
    /// The party.
    pub party: Vec<PartyMember>,
    /// What the party carries.
    pub inventory: Vec<String>,
    /// The quest log.
    pub quests: Vec<Quest>,
    /// The in-game time, such as "Day 3, dusk".
    pub time: String,
}

impl Campaign {
    /// The campaign of `entity` (a `campaign` entity; a damaged field reads as empty).
    pub fn of(entity: &Entity) -> Self {
        Self {
            id: entity.id.clone(),
            version: entity.version,
            name: entity.text("name").to_string(),
            premise: entity.text("premise").to_string(),
            outline: entity.text("outline").to_string(),
            location: entity.text("location").to_string(),
            party: parsed(entity, "party"),
            inventory: entity
                .list("inventory")
                .iter()
                .map(|s| s.to_string())
                .collect(),
            quests: parsed(entity, "quests"),
            time: entity.text("time").to_string(),
        }
    }
}

/// A structured field of `entity` (empty when unset or damaged).
fn parsed<T: serde::de::DeserializeOwned>(entity: &Entity, field: &str) -> Vec<T> {
    serde_json::from_value(entity.get(field).clone()).unwrap_or_default()
}

/// The campaign in play: the one changed last, if there is any.
pub fn current(bible: &Bible) -> Option<&Entity> {
    bible.list(Kind::Campaign).max_by_key(|e| e.version)
}

/// Check a party: each member named once, hit points within their maximum.
pub(super) fn check_party(value: Value) -> Result<Value, BibleError> {
    let bad = |message: String| BibleError::Invalid { message };
    let party: Vec<PartyMember> = serde_json::from_value(value).map_err(|e| {
        bad(format!(
            "'party' must be a list of {{name, hp, max_hp, conditions?}}: {e}"
        ))
    })?;
    if party.len() > MAX_PARTY {
        return Err(bad(format!("a party has at most {MAX_PARTY} members")));
    }
    let mut names: Vec<String> = Vec::new();
    for member in &party {
        let name = member.name.trim().to_lowercase();
        if name.is_empty() {
            return Err(bad("every party member needs a name".into()));
        }
        if names.contains(&name) {
            return Err(bad(format!(
                "'{}' is in the party twice",
                member.name.trim()
            )));
        }
        names.push(name);
        if member.hp > member.max_hp {
            return Err(bad(format!(
                "{} has {} hit points, more than their maximum {}; raise max_hp or lower hp",
                member.name.trim(),
                member.hp,
                member.max_hp
            )));
        }
    }
    Ok(crate::error::to_json(&party))
}

/// Check a quest log: each quest with a title.
pub(super) fn check_quests(value: Value) -> Result<Value, BibleError> {
    let bad = |message: String| BibleError::Invalid { message };
    let quests: Vec<Quest> = serde_json::from_value(value).map_err(|e| {
        bad(format!(
            "'quests' must be a list of {{title, status?: active | done | failed, notes?}}: {e}"
        ))
    })?;
    if quests.len() > MAX_QUESTS {
        return Err(bad(format!(
            "a quest log holds at most {MAX_QUESTS} quests"
        )));
    }
    if quests.iter().any(|q| q.title.trim().is_empty()) {
        return Err(bad("every quest needs a title".into()));
    }
    Ok(crate::error::to_json(&quests))
}
