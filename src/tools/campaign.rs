//! Campaign tools: the game state of a role-playing campaign (the Dungeon Master preset),
//! kept as a story-bible entity of kind `campaign` ([`crate::bible::campaign`]).
//!
//! The root agent manages campaigns: `campaign_create_entry`, `campaign_read_entry` and
//! `campaign_update_entry` (its name, premise and outline file as well as its state). The
//! player interface reads and changes the game state of the campaign in play:
//! `campaign_read_state` and `campaign_update_state` (location, party and hit points,
//! inventory, quest log, in-game time). Every write goes through the edit context's bible
//! write path, so it is stamped with its origin, checked for concurrent updates, rolled back
//! with the rest of a failing call, and a value the writer set asks the writer's approval
//! before an agent changes it.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use serde_json::Value;

use super::{ToolError, ToolRegistry, ToolSpec};
use crate::bible::campaign::{self, Campaign, PartyMember, Quest};
use crate::bible::{check_value, Entity, Kind};
use crate::commands::Category;
use crate::session::EditContext;

/// The fields of the game state, as the state tools show them.
const STATE_FIELDS: [&str; 5] = ["location", "party", "inventory", "quests", "time"];

/// Register the campaign tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.add::<CampaignCreateEntry>();
    registry.add::<CampaignReadEntry>();
    registry.add::<CampaignUpdateEntry>();
    registry.add::<CampaignReadState>();
    registry.add::<CampaignUpdateState>();
}

/// A party member's new hit points.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct HitPoints {
    /// The member's name, as in the party.
    pub name: String,
    /// Their current hit points now (0 to their max_hp; 0: down).
    pub hp: u32,
}

/// Changes to a campaign's game state; each field given replaces the stored one.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct StateArgs {
    /// Where the party is now.
    #[serde(default)]
    pub location: Option<String>,
    /// The whole party, replacing it: each member's name, hp, max_hp and conditions.
    #[serde(default)]
    pub party: Option<Vec<PartyMember>>,
    /// New current hit points of members already in the party, by name (the rest of the
    /// party is kept): read the campaign first, then give each member's hp after the damage
    /// or healing.
    #[serde(default, alias = "hitPoints")]
    pub hit_points: Option<Vec<HitPoints>>,
    /// The whole inventory, replacing it.
    #[serde(default)]
    pub inventory: Option<Vec<String>>,
    /// The whole quest log, replacing it.
    #[serde(default)]
    pub quests: Option<Vec<Quest>>,
    /// The in-game time now, such as "Day 3, dusk".
    #[serde(default)]
    pub time: Option<String>,
}

impl StateArgs {
    /// The field changes these arguments make to `current` (the campaign's entity, if it
    /// exists), checked: `hit_points` names members of the party.
    fn changes(self, current: Option<&Entity>) -> Result<Vec<(String, Value)>, ToolError> {
        let mut changes: Vec<(String, Value)> = Vec::new();
        let text = |s: String| Value::from(s.trim());
        if let Some(location) = self.location {
            changes.push(("location".into(), text(location)));
        }
        let mut party = self.party.clone();
        if let Some(hit_points) = self.hit_points {
            let members = party
                .get_or_insert_with(|| current.map(|e| Campaign::of(e).party).unwrap_or_default());
            for HitPoints { name, hp } in hit_points {
                let wanted = name.trim().to_lowercase();
                let Some(member) = members
                    .iter_mut()
                    .find(|m| m.name.trim().to_lowercase() == wanted)
                else {
                    let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
                    return Err(ToolError::invalid_args(format!(
                        "'{}' is not in the party ({}); add them with 'party' first",
                        name.chars().take(60).collect::<String>(),
                        if names.is_empty() {
                            "the party is empty".to_string()
                        } else {
                            names.join(", ")
                        }
                    )));
                };
                if hp > member.max_hp {
                    return Err(ToolError::invalid_args(format!(
                        "{} has at most {} hit points; give hp from 0 to {}",
                        member.name, member.max_hp, member.max_hp
                    )));
                }
                member.hp = hp;
            }
        }
        if let Some(party) = party {
            changes.push(("party".into(), crate::error::to_json(&party)));
        }
        if let Some(inventory) = self.inventory {
            changes.push(("inventory".into(), json!(inventory)));
        }
        if let Some(quests) = self.quests {
            changes.push(("quests".into(), crate::error::to_json(&quests)));
        }
        if let Some(time) = self.time {
            changes.push(("time".into(), text(time)));
        }
        // Checked before the write path weighs approvals and conflicts, so a bad value is
        // reported as what it is.
        changes
            .into_iter()
            .map(|(field, value)| Ok((field.clone(), check_value(Kind::Campaign, &field, value)?)))
            .collect()
    }
}

/// The campaign `named` (an id or a name), or the campaign in play.
fn find<'a>(cx: &'a EditContext<'_>, named: Option<&str>) -> Result<&'a Entity, ToolError> {
    let bible = cx.bible();
    let Some(named) = named.map(str::trim).filter(|n| !n.is_empty()) else {
        return campaign::current(bible).ok_or_else(|| {
            ToolError::not_found(
                "There is no campaign yet. campaign_create_entry creates one (in the Dungeon Master, the root agent or its campaign creation agent does).",
            )
        });
    };
    if let Some(entity) = bible.get(Kind::Campaign, named) {
        return Ok(entity);
    }
    let wanted = named.to_lowercase();
    bible
        .list(Kind::Campaign)
        .find(|e| e.text("name").to_lowercase() == wanted)
        .ok_or_else(|| {
            ToolError::not_found(format!(
                "no campaign '{}'{}",
                named.chars().take(60).collect::<String>(),
                crate::names::did_you_mean(
                    named,
                    bible.list(Kind::Campaign).map(|e| e.id.as_str())
                )
            ))
        })
}

/// A campaign as the read tools show it: its state, who set each field (`human`: the
/// writer; an agent's change to it asks the writer first), and the other campaigns.
fn shown(cx: &EditContext<'_>, entity: &Entity, fields: &[&str]) -> Value {
    let mut origins = serde_json::Map::new();
    for field in fields {
        if let Some(origin) = entity.origin(field) {
            origins.insert((*field).into(), json!(origin));
        }
    }
    let others: Vec<Value> = cx
        .bible()
        .list(Kind::Campaign)
        .filter(|e| e.id != entity.id)
        .map(|e| json!({"id": e.id, "name": e.text("name")}))
        .collect();
    let mut out = json!({
        "campaign": Campaign::of(entity),
        "origins": origins,
    });
    if !others.is_empty() {
        out["other_campaigns"] = json!(others);
    }
    out
}

/// Write `changes` to campaign `id` through the bible's write path; the campaign after.
fn update(
    cx: &mut EditContext<'_>,
    id: &str,
    changes: Vec<(String, Value)>,
    what: &str,
) -> Result<Value, ToolError> {
    if changes.is_empty() {
        return Err(ToolError::invalid_args(format!(
            "nothing to change: give at least one of {what}"
        )));
    }
    let changed: Vec<String> = changes.iter().map(|(f, _)| f.clone()).collect();
    cx.bible_update(Kind::Campaign, id, changes)?;
    let campaign = Campaign::of(cx.bible().require(Kind::Campaign, id)?);
    cx.describe(format!("Update campaign {}", campaign.name));
    Ok(json!({"campaign": campaign, "changed": changed}))
}

/// Arguments of `campaign_create_entry`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateArgs {
    /// The campaign's name.
    pub name: String,
    /// Its premise and outline.
    #[serde(flatten)]
    pub about: AboutArgs,
    /// The starting game state.
    #[serde(flatten)]
    pub state: StateArgs,
}

/// What a campaign is about.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct AboutArgs {
    /// The premise: setting, tone and the hook, in a few sentences.
    #[serde(default)]
    pub premise: Option<String>,
    /// The outline file written with write_file, such as plans/campaign.md.
    #[serde(default)]
    pub outline: Option<String>,
}

impl AboutArgs {
    /// The field changes of `name` (if given) and these arguments.
    fn changes(self, name: Option<String>) -> Vec<(String, Value)> {
        [
            ("name", name),
            ("premise", self.premise),
            ("outline", self.outline),
        ]
        .into_iter()
        .filter_map(|(field, value)| Some((field.to_string(), Value::from(value?.trim()))))
        .collect()
    }
}

/// `campaign_create_entry`.
pub struct CampaignCreateEntry;

impl ToolSpec for CampaignCreateEntry {
    type Args = CreateArgs;
    const NAME: &'static str = "campaign_create_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Create a role-playing campaign and make it the campaign in play: its name, premise, outline file, and the starting game state (location, party with hit points, inventory, quest log, in-game time).";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let name = args.name.trim().to_string();
        if name.is_empty() {
            return Err(ToolError::invalid_args("'name' must not be empty"));
        }
        if args.state.hit_points.is_some() {
            return Err(ToolError::invalid_args(
                "a new campaign takes its party's hit points in 'party' ({name, hp, max_hp}), not 'hit_points'",
            ));
        }
        let mut fields = args.about.changes(Some(name.clone()));
        fields.extend(args.state.changes(None)?);
        let id = cx.bible().fresh_id(Kind::Campaign, &name);
        cx.bible_create(Kind::Campaign, &id, fields)?;
        cx.describe(format!("Create campaign {name}"));
        let campaign = Campaign::of(cx.bible().require(Kind::Campaign, &id)?);
        Ok(json!({"created": id, "campaign": campaign}))
    }
}

/// Arguments of `campaign_read_entry`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadEntryArgs {
    /// The campaign's id or name; omit for the campaign in play.
    #[serde(default, alias = "campaign_id", alias = "id")]
    pub campaign: Option<String>,
}

/// `campaign_read_entry`.
pub struct CampaignReadEntry;

impl ToolSpec for CampaignReadEntry {
    type Args = ReadEntryArgs;
    const NAME: &'static str = "campaign_read_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Read a campaign (the one in play unless named): name, premise, outline file and game state (location, party with hit points, inventory, quest log, in-game time), who set each field (human: the writer; changing it asks the writer), and the other campaigns.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let id = find(cx, args.campaign.as_deref())?.id.clone();
        cx.saw(Kind::Campaign, &id);
        let entity = cx.bible().require(Kind::Campaign, &id)?;
        let fields: Vec<&str> = Kind::Campaign.fields().iter().map(|f| f.name).collect();
        Ok(shown(cx, entity, &fields))
    }
}

/// Arguments of `campaign_update_entry`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdateEntryArgs {
    /// The campaign's id or name; omit for the campaign in play.
    #[serde(default, alias = "campaign_id", alias = "id")]
    pub campaign: Option<String>,
    /// A new name.
    #[serde(default)]
    pub name: Option<String>,
    /// A new premise or outline file.
    #[serde(flatten)]
    pub about: AboutArgs,
    /// Changes to the game state.
    #[serde(flatten)]
    pub state: StateArgs,
}

/// `campaign_update_entry`.
pub struct CampaignUpdateEntry;

impl ToolSpec for CampaignUpdateEntry {
    type Args = UpdateEntryArgs;
    const NAME: &'static str = "campaign_update_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Change a campaign (the one in play unless named): its name, premise or outline file, and its game state: location, the party (or only some members' hit_points after damage or healing), inventory, quest log, in-game time. Each field given replaces the stored one; read the campaign first. A value the writer set asks the writer's approval (approval_required; nothing changes until approved).";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let entity = find(cx, args.campaign.as_deref())?;
        let id = entity.id.clone();
        let mut changes = args.about.changes(args.name);
        changes.extend(args.state.changes(Some(entity))?);
        update(
            cx,
            &id,
            changes,
            "name, premise, outline, location, party, hit_points, inventory, quests, time",
        )
    }
}

/// Arguments of `campaign_read_state`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadStateArgs {}

/// `campaign_read_state`.
pub struct CampaignReadState;

impl ToolSpec for CampaignReadState {
    type Args = ReadStateArgs;
    const NAME: &'static str = "campaign_read_state";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Read the game state of the campaign in play: location, party with hit points and conditions, inventory, quest log and in-game time, and who set each (human: the writer).";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(_: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let id = find(cx, None)?.id.clone();
        cx.saw(Kind::Campaign, &id);
        let entity = cx.bible().require(Kind::Campaign, &id)?;
        Ok(shown(cx, entity, &STATE_FIELDS))
    }
}

/// `campaign_update_state`.
pub struct CampaignUpdateState;

impl ToolSpec for CampaignUpdateState {
    type Args = StateArgs;
    const NAME: &'static str = "campaign_update_state";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Change the game state of the campaign in play: location, the party (or only some members' hit_points), inventory, quest log, in-game time. Each field given replaces the stored one; read the state first. A value the writer set asks the writer's approval (approval_required; nothing changes until approved).";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let entity = find(cx, None)?;
        let id = entity.id.clone();
        let changes = args.changes(Some(entity))?;
        update(cx, &id, changes, &STATE_FIELDS.join(", "))
    }
}
