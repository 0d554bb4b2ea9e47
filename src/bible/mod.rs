//! The story bible: scenes, characters, locations, routes, glossary entries, the style guide,
//! UI settings, context documents, translations, QA records and role-playing campaigns, each
//! an [`Entity`] with per-field provenance and a version.
//!
//! Every field an entity has carries its origin (shown as `<field>_origin`): `human` (the
//! writer, in the page), `agent:<name>:<YYYY-MM-DD>` or `import`. Every change bumps the
//! entity's version (versions come from one counter per bible, so they strictly increase,
//! even across a delete and a re-create). Each field also remembers when and by whom it was
//! last written, which conflict detection reads ([`Bible::concurrent`]).
//!
//! This module holds the data and its plain operations. Who may change what, and when a
//! change needs the writer's approval, is decided a floor above (the policy module); the
//! tools that read and change the bible sit above that (the tools' `bible` module). What the
//! bible knows beyond single entities is in its submodules: names and where they are mentioned
//! ([`mentions`]), scenes in reading order and what a reader knows ([`scenes`]), lore search
//! ([`lore`]), the glossary's terms and merges ([`glossary`]), and translations and their QA
//! ([`translation`]). [`flat`] is an entity as the page reads it.

pub mod campaign;
pub mod flat;
pub mod glossary;
pub mod lore;
pub mod mentions;
pub mod scenes;
pub mod translation;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde_json::json;
use serde_json::{Map, Value};

use crate::commands::Origin;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The kinds of story-bible entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "BibleKind")]
pub enum Kind {
    /// A scene: a span of a chapter with a summary, tags, characters and locations.
    Scene,
    /// A character.
    Character,
    /// A location.
    Location,
    /// A route (a branch of an interactive story): synopsis, characters, scenes.
    Route,
    /// A glossary entry (a term and its translation).
    Glossary,
    /// The style guide (one entity, id `styleguide`, a markdown text).
    Styleguide,
    /// UI settings such as line-length limits (one entity, id `ui`).
    UiSettings,
    /// A context document: a reference text agents read but never change.
    Contextdoc,
    /// A translated line of a scene (id `<scene>:<line>`).
    Translation,
    /// A QA record: a style, consistency or review check.
    Qa,
    /// A role-playing campaign and its game state (see [`campaign`]).
    Campaign,
}

/// The type of a field's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// A string.
    Text,
    /// A list of strings.
    TextList,
    /// A non-negative integer.
    Int,
    /// `{start, end}`: a character range.
    Span,
    /// A campaign's party: `[{name, hp, max_hp, conditions?}]` ([`campaign::PartyMember`]).
    Party,
    /// A campaign's quest log: `[{title, status?, notes?}]` ([`campaign::Quest`]).
    Quests,
}

/// A field of a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSpec {
    /// Field name.
    pub name: &'static str,
    /// Its type.
    pub ty: FieldType,
    /// A new entity must give it (non-empty).
    pub required: bool,
}

const fn f(name: &'static str, ty: FieldType, required: bool) -> FieldSpec {
    FieldSpec { name, ty, required }
}

use FieldType::{Int, Party, Quests, Span, Text, TextList};

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 11] = [
        Kind::Scene,
        Kind::Character,
        Kind::Location,
        Kind::Route,
        Kind::Glossary,
        Kind::Styleguide,
        Kind::UiSettings,
        Kind::Contextdoc,
        Kind::Translation,
        Kind::Qa,
        Kind::Campaign,
    ];

    /// Its name, as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Scene => "scene",
            Kind::Character => "character",
            Kind::Location => "location",
            Kind::Route => "route",
            Kind::Glossary => "glossary",
            Kind::Styleguide => "styleguide",
            Kind::UiSettings => "ui_settings",
            Kind::Contextdoc => "contextdoc",
            Kind::Translation => "translation",
            Kind::Qa => "qa",
            Kind::Campaign => "campaign",
        }
    }

    /// Its fields.
    pub fn fields(self) -> &'static [FieldSpec] {
        match self {
            Kind::Scene => {
                const F: &[FieldSpec] = &[
                    f("chapter", Text, true),
                    f("span", Span, false),
                    f("summary", Text, false),
                    f("tags", TextList, false),
                    f("primary_characters", TextList, false),
                    f("locations", TextList, false),
                ];
                F
            }
            Kind::Character => {
                const F: &[FieldSpec] = &[
                    f("name_src", Text, true),
                    f("name_tgt", Text, false),
                    f("aliases", TextList, false),
                    f("pronouns", Text, false),
                    f("notes", Text, false),
                ];
                F
            }
            Kind::Location => {
                const F: &[FieldSpec] = &[
                    f("name_src", Text, true),
                    f("name_tgt", Text, false),
                    f("description", Text, false),
                ];
                F
            }
            Kind::Route => {
                const F: &[FieldSpec] = &[
                    f("synopsis", Text, false),
                    f("primary_characters", TextList, false),
                    f("scene_ids", TextList, false),
                ];
                F
            }
            Kind::Glossary => {
                const F: &[FieldSpec] = &[
                    f("term_src", Text, true),
                    f("term_tgt", Text, false),
                    f("notes", Text, false),
                ];
                F
            }
            Kind::Styleguide => {
                const F: &[FieldSpec] = &[f("markdown", Text, false)];
                F
            }
            Kind::UiSettings => {
                const F: &[FieldSpec] = &[
                    f("line_length_limit", Int, false),
                    f("lines_per_box", Int, false),
                    f("notes", Text, false),
                ];
                F
            }
            Kind::Contextdoc => {
                const F: &[FieldSpec] = &[f("title", Text, true), f("text", Text, false)];
                F
            }
            Kind::Translation => {
                const F: &[FieldSpec] = &[
                    f("scene", Text, true),
                    f("line", Int, false),
                    f("source", Text, false),
                    f("target", Text, false),
                ];
                F
            }
            Kind::Qa => {
                const F: &[FieldSpec] = &[
                    f("check", Text, true),
                    f("scene", Text, false),
                    f("line", Int, false),
                    f("severity", Text, false),
                    f("message", Text, true),
                ];
                F
            }
            Kind::Campaign => {
                const F: &[FieldSpec] = &[
                    f("name", Text, true),
                    f("premise", Text, false),
                    f("outline", Text, false),
                    f("location", Text, false),
                    f("party", Party, false),
                    f("inventory", TextList, false),
                    f("quests", Quests, false),
                    f("time", Text, false),
                ];
                F
            }
        }
    }

    /// The field named `name`.
    pub fn field(self, name: &str) -> Option<&'static FieldSpec> {
        self.fields().iter().find(|f| f.name == name)
    }

    /// The id of the one entity of a singleton kind (the style guide, UI settings).
    pub fn singleton_id(self) -> Option<&'static str> {
        match self {
            Kind::Styleguide => Some("styleguide"),
            Kind::UiSettings => Some("ui"),
            _ => None,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Kind {
    type Err = BibleError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| BibleError::Invalid {
                message: format!(
                    "unknown kind '{}'; kinds are {}",
                    s.chars().take(60).collect::<String>(),
                    Kind::ALL.map(Kind::name).join(", ")
                ),
            })
    }
}

/// Why a bible operation failed. Nothing changed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BibleError {
    /// No such entity.
    #[error("no {kind} with id '{id}'{hint}")]
    NotFound {
        /// Kind.
        kind: Kind,
        /// Id asked for.
        id: String,
        /// Closest ids, as a sentence.
        hint: String,
    },
    /// An entity with that id exists.
    #[error("a {kind} with id '{id}' already exists")]
    Exists {
        /// Kind.
        kind: Kind,
        /// Id.
        id: String,
    },
    /// A field or value is wrong.
    #[error("{message}")]
    Invalid {
        /// What was wrong and what would work.
        message: String,
    },
    /// The entity changed since the version the change was based on.
    #[error("the {kind} '{id}' is at version {current}, not {expected}: it changed since you read it; read it again")]
    Stale {
        /// Kind.
        kind: Kind,
        /// Id.
        id: String,
        /// The version the change was based on.
        expected: u64,
        /// The current version.
        current: u64,
    },
}

impl BibleError {
    /// A stable code: `not_found`, `exists`, `invalid_args` or `conflict`.
    pub fn code(&self) -> &'static str {
        match self {
            BibleError::NotFound { .. } => "not_found",
            BibleError::Exists { .. } => "exists",
            BibleError::Invalid { .. } => "invalid_args",
            BibleError::Stale { .. } => "conflict",
        }
    }
}

/// Who writes a field: the provenance recorded in `<field>_origin`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// The writer, in the page.
    Human,
    /// An agent, on a day (`YYYY-MM-DD`).
    Agent {
        /// Agent name.
        name: String,
        /// The day of the write.
        date: String,
    },
    /// An import.
    Import,
}

impl Actor {
    /// The actor for a history origin at `now_ms`.
    pub fn from_origin(origin: &Origin, now_ms: u64) -> Self {
        match origin {
            Origin::User => Actor::Human,
            // Values that arrive from another device keep the origin they were written with;
            // a write under a remote origin is treated as imported.
            Origin::Import | Origin::Remote(_) => Actor::Import,
            Origin::Agent(name) => Actor::Agent {
                name: name.clone(),
                date: date_of(now_ms),
            },
        }
    }

    /// The origin string: `human`, `agent:<name>:<date>` or `import`.
    pub fn origin(&self) -> String {
        match self {
            Actor::Human => "human".into(),
            Actor::Agent { name, date } => format!("agent:{name}:{date}"),
            Actor::Import => "import".into(),
        }
    }

    /// True for an agent.
    pub fn is_agent(&self) -> bool {
        matches!(self, Actor::Agent { .. })
    }

    /// Whether an origin string names the same writer (an agent by its name, whatever the
    /// day).
    pub fn wrote(&self, origin: &str) -> bool {
        match self {
            Actor::Agent { name, .. } => origin_agent(origin) == Some(name.as_str()),
            other => other.origin() == origin,
        }
    }
}

/// The agent name of an `agent:<name>:<date>` origin.
pub fn origin_agent(origin: &str) -> Option<&str> {
    let rest = origin.strip_prefix("agent:")?;
    Some(match rest.rsplit_once(':') {
        Some((name, date)) if date.len() == 10 => name,
        _ => rest,
    })
}

/// Whether an origin is the writer's or an import's (data an agent must not overwrite
/// without approval).
pub fn is_protected_origin(origin: &str) -> bool {
    origin == "human" || origin == "import"
}

/// `YYYY-MM-DD` (UTC) of a time in ms since the epoch.
pub fn date_of(ms: u64) -> String {
    // Howard Hinnant's civil_from_days.
    let days = (ms / 86_400_000) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// How [`Bible::concurrent`] tells that an update would overwrite a write its writer did not
/// see.
#[derive(Debug, Clone, Copy)]
pub enum Judge<'a> {
    /// A run's call, by the entity's version the run last read or wrote: a filled field
    /// written after that version is a concurrent update, whoever wrote it (another unit of
    /// the same agent too). A run that never read the entity is judged by the recent-update
    /// window: a filled field written within it is a concurrent update.
    Seen(Option<u64>),
    /// A call outside a run, by origin: a field another origin wrote within the
    /// recent-update window.
    Origin(&'a Actor),
}

/// When and by whom a field was last written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(rename = "FieldStamp", optional_fields)]
pub struct Stamp {
    /// Time (ms).
    pub at: u64,
    /// Origin string.
    pub origin: String,
    /// The entity's version that write made (0: a record from before field versions), so
    /// an approval can tell whether the fields it is about changed since.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[ts(as = "Option<u64>")]
    pub version: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One story-bible entity, as it is stored and exported (the page reads it flat:
/// [`Entity::flat`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(rename = "BibleRecord")]
pub struct Entity {
    /// Kind.
    pub kind: Kind,
    /// Id (unique within its kind).
    pub id: String,
    /// Bumped by every change.
    pub version: u64,
    /// Field values.
    #[serde(default)]
    pub fields: BTreeMap<String, Value>,
    /// Field origins (a few per entity, saved as a JSON object).
    #[serde(default)]
    pub origins: BTreeMap<String, String>,
    /// The last write of each field.
    #[serde(default)]
    pub stamps: BTreeMap<String, Stamp>,
}

/// Whether a value counts as empty (absent, null, "", []).
pub fn is_empty_value(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.trim().is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    }
}

impl Entity {
    /// An entity with no fields yet, at `version`.
    pub fn empty(kind: Kind, id: &str, version: u64) -> Self {
        Entity {
            kind,
            id: id.to_string(),
            version,
            fields: BTreeMap::new(),
            origins: BTreeMap::new(),
            stamps: BTreeMap::new(),
        }
    }

    /// A field's value (`null` when unset).
    pub fn get(&self, field: &str) -> &Value {
        self.fields.get(field).unwrap_or(&Value::Null)
    }

    /// A text field ("" when unset).
    pub fn text(&self, field: &str) -> &str {
        self.get(field).as_str().unwrap_or("")
    }

    /// A list field.
    pub fn list(&self, field: &str) -> Vec<&str> {
        self.get(field)
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// A field's origin, if it was ever written.
    pub fn origin(&self, field: &str) -> Option<&str> {
        self.origins.get(field).map(String::as_str)
    }

    /// The flat JSON view: `{kind, id, version, <field>, <field>_origin, ...}`, every field of
    /// the kind present (`null` when unset).
    pub fn flat(&self) -> Value {
        let mut map = Map::new();
        map.insert("kind".into(), json!(self.kind));
        map.insert("id".into(), json!(self.id));
        map.insert("version".into(), json!(self.version));
        for spec in self.kind.fields() {
            map.insert(spec.name.into(), self.get(spec.name).clone());
            map.insert(
                format!("{}_origin", spec.name),
                self.origin(spec.name).map_or(Value::Null, |o| json!(o)),
            );
        }
        Value::Object(map)
    }

    /// The store key of an entity of `project`.
    pub fn key(&self, project: &str) -> String {
        entity_key(project, self.kind, &self.id)
    }
}

/// The store key of an entity: `<project>/<kind>/<id>`.
pub fn entity_key(project: &str, kind: Kind, id: &str) -> String {
    format!("{project}/{kind}/{id}")
}

/// Check and normalize a field value for its type. Texts are kept as given; lists are
/// de-duplicated keeping the first of each; `span` is `{start, end}` with `start <= end`.
pub fn check_value(kind: Kind, field: &str, value: Value) -> Result<Value, BibleError> {
    let spec = kind.field(field).ok_or_else(|| BibleError::Invalid {
        message: format!(
            "a {kind} has no field '{}'; its fields are {}",
            field.chars().take(60).collect::<String>(),
            kind.fields()
                .iter()
                .map(|f| f.name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })?;
    let bad = |wanted: &str| BibleError::Invalid {
        message: format!("'{field}' of a {kind} must be {wanted}"),
    };
    if value.is_null() {
        return Ok(Value::Null);
    }
    match spec.ty {
        Text => match value {
            Value::String(_) => Ok(value),
            _ => Err(bad("a string")),
        },
        TextList => match value {
            Value::Array(items) => {
                let mut out: Vec<String> = Vec::new();
                for item in items {
                    let s = item.as_str().ok_or_else(|| bad("a list of strings"))?;
                    let s = s.trim();
                    if !s.is_empty() && !out.iter().any(|o| o == s) {
                        out.push(s.to_string());
                    }
                }
                Ok(json!(out))
            }
            _ => Err(bad("a list of strings")),
        },
        Int => value
            .as_u64()
            .map(|n| json!(n))
            .ok_or_else(|| bad("a non-negative integer")),
        Span => {
            let start = value.get("start").and_then(Value::as_u64);
            let end = value.get("end").and_then(Value::as_u64);
            match (start, end) {
                (Some(s), Some(e)) if s <= e => Ok(json!({"start": s, "end": e})),
                _ => Err(bad("{start, end} with start <= end")),
            }
        }
        Party => campaign::check_party(value),
        Quests => campaign::check_quests(value),
    }
}

/// A write that another origin made to a field a moment before.
#[derive(Debug, Clone, PartialEq)]
pub struct Concurrent {
    /// The field.
    pub field: String,
    /// How long ago the other write was (ms).
    pub ago_ms: u64,
    /// Who made it.
    pub by: String,
    /// The field's current value.
    pub current: Value,
}

/// How an entity sorts against the key `kind`, `id` (as the tuple `(kind, id)`).
fn key_cmp(e: &Entity, kind: Kind, id: &str) -> std::cmp::Ordering {
    e.kind.cmp(&kind).then_with(|| e.id.as_str().cmp(id))
}

/// A lock a waiting call holds on an entity: the call id and the fields it would change
/// (none: the whole entity).
type Lock = (String, Vec<String>);

/// A project's story bible.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Bible {
    /// Sorted by kind and id, each once (its own `kind` and `id` are its key): a sorted
    /// vector, not a `BTreeMap<(Kind, String), Entity>`, a B-tree type of its own (about
    /// 19 KB of wasm). Lookups are binary searches; a create or delete moves the entities
    /// after it (a bible of 5,000 entities moves at most about 300 KB, tens of
    /// microseconds, once per change the writer or an agent makes); loading sorts once.
    entities: Vec<Entity>,
    /// The newest version handed out.
    last_version: u64,
    /// Locks held by calls waiting for the writer's approval: by entity, each call with the
    /// fields it would change (none listed: the whole entity, as for a delete or a merge).
    locks: std::collections::BTreeMap<(Kind, String), Vec<Lock>>,
}

impl Bible {
    /// An empty bible.
    pub fn new() -> Self {
        Self::default()
    }

    /// A bible of loaded entities (of two with the same kind and id, the last one).
    pub fn from_entities(entities: impl IntoIterator<Item = Entity>) -> Self {
        let mut bible = Self::new();
        bible.entities = entities.into_iter().collect();
        bible.last_version = bible.entities.iter().map(|e| e.version).max().unwrap_or(0);
        bible.entities.sort_by(|a, b| key_cmp(a, b.kind, &b.id));
        // Of equal keys (adjacent, in load order) keep the last, as inserting each would.
        bible.entities.dedup_by(|later, earlier| {
            let same = later.kind == earlier.kind && later.id == earlier.id;
            if same {
                std::mem::swap(later, earlier);
            }
            same
        });
        bible
    }

    /// Where the entity of `kind` with `id` is (`Err`: where it would go).
    fn find(&self, kind: Kind, id: &str) -> Result<usize, usize> {
        self.entities.binary_search_by(|e| key_cmp(e, kind, id))
    }

    /// The entity of `kind` with `id`.
    pub fn get(&self, kind: Kind, id: &str) -> Option<&Entity> {
        self.find(kind, id).ok().map(|i| &self.entities[i])
    }

    /// The entity, or a `not_found` error naming the closest ids.
    pub fn require(&self, kind: Kind, id: &str) -> Result<&Entity, BibleError> {
        self.get(kind, id).ok_or_else(|| BibleError::NotFound {
            kind,
            id: id.chars().take(100).collect(),
            hint: crate::names::did_you_mean(id, self.list(kind).map(|e| e.id.as_str())),
        })
    }

    /// Every entity of a kind, by id.
    pub fn list(&self, kind: Kind) -> impl Iterator<Item = &Entity> {
        let start = self.entities.partition_point(|e| e.kind < kind);
        self.entities[start..]
            .iter()
            .take_while(move |e| e.kind == kind)
    }

    /// Every entity.
    pub fn all(&self) -> impl Iterator<Item = &Entity> {
        self.entities.iter()
    }

    /// How many entities there are.
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// Lock `fields` of an entity (none: the whole entity) for a call that waits for the
    /// writer's approval of a change to them: other agents' changes to those fields are
    /// refused until the writer decides; its other fields stay open to them.
    pub fn lock(&mut self, kind: Kind, id: &str, call: &str, fields: Vec<String>) {
        let held = self.locks.entry((kind, id.to_string())).or_default();
        held.retain(|(c, _)| c != call);
        held.push((call.to_string(), fields));
    }

    /// Release the locks a call holds.
    pub fn unlock(&mut self, call: &str) {
        for (_, held) in self.locks.iter_mut() {
            held.retain(|(c, _)| c != call);
        }
        self.locks.retain(|_, held| !held.is_empty());
    }

    /// The call that holds a lock on any of `fields` of an entity (none: on any part of
    /// it), if one does.
    pub fn locked_by(&self, kind: Kind, id: &str, fields: &[&str]) -> Option<&str> {
        self.locks
            .get(&(kind, id.to_string()))?
            .iter()
            .find(|(_, locked)| {
                locked.is_empty()
                    || fields.is_empty()
                    || locked.iter().any(|f| fields.contains(&f.as_str()))
            })
            .map(|(call, _)| call.as_str())
    }

    /// The newest version handed out.
    pub fn last_version(&self) -> u64 {
        self.last_version
    }

    fn next_version(&mut self) -> u64 {
        self.last_version += 1;
        self.last_version
    }

    /// A fresh id for a new entity of `kind`, from `hint` (a name), unique in the kind.
    pub fn fresh_id(&self, kind: Kind, hint: &str) -> String {
        let mut base: String = hint
            .to_lowercase()
            .chars()
            .map(|c| if c.is_alphanumeric() { c } else { '-' })
            .collect();
        base = base
            .split('-')
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("-");
        base = base.chars().take(40).collect();
        if base.is_empty() {
            base = kind.name().to_string();
        }
        if self.get(kind, &base).is_none() {
            return base;
        }
        (2..)
            .map(|n| format!("{base}-{n}"))
            .find(|id| self.get(kind, id).is_none())
            .unwrap_or(base)
    }

    /// Create an entity with `fields` (checked; the required ones must be non-empty),
    /// written by `actor` at `now`.
    pub fn create(
        &mut self,
        kind: Kind,
        id: &str,
        fields: Vec<(String, Value)>,
        actor: &Actor,
        now: u64,
    ) -> Result<&Entity, BibleError> {
        let id = id.trim();
        if id.is_empty() || id.len() > 200 || id.contains('/') {
            return Err(BibleError::Invalid {
                message: "an id must be 1 to 200 characters, without '/'".into(),
            });
        }
        if let Some(only) = kind.singleton_id() {
            if id != only {
                return Err(BibleError::Invalid {
                    message: format!("the {kind} has the one id '{only}'"),
                });
            }
        }
        if self.get(kind, id).is_some() {
            return Err(BibleError::Exists {
                kind,
                id: id.to_string(),
            });
        }
        let mut checked = BTreeMap::new();
        for (field, value) in fields {
            let value = check_value(kind, &field, value)?;
            if !value.is_null() {
                checked.insert(field, value);
            }
        }
        if let Some(missing) = kind
            .fields()
            .iter()
            .find(|f| f.required && is_empty_value(checked.get(f.name)))
        {
            return Err(BibleError::Invalid {
                message: format!("a new {kind} needs '{}'", missing.name),
            });
        }
        let origin = actor.origin();
        let version = self.next_version();
        let mut entity = Entity::empty(kind, id, version);
        for k in checked.keys() {
            entity.origins.insert(k.clone(), origin.clone());
            let stamp = Stamp {
                at: now,
                origin: origin.clone(),
                version,
            };
            entity.stamps.insert(k.clone(), stamp);
        }
        entity.fields = checked;
        let at = match self.find(kind, id) {
            Ok(at) => {
                self.entities[at] = entity;
                at
            }
            Err(at) => {
                self.entities.insert(at, entity);
                at
            }
        };
        Ok(&self.entities[at])
    }

    /// Set fields of an entity (checked first: all or nothing), written by `actor` at `now`.
    /// A required field cannot be emptied. Fields given their current value keep their
    /// origin; if nothing changes the version stays.
    pub fn update(
        &mut self,
        kind: Kind,
        id: &str,
        changes: Vec<(String, Value)>,
        actor: &Actor,
        now: u64,
    ) -> Result<&Entity, BibleError> {
        self.require(kind, id)?;
        let mut checked = Vec::with_capacity(changes.len());
        for (field, value) in changes {
            let value = check_value(kind, &field, value)?;
            if kind.field(&field).is_some_and(|f| f.required) && is_empty_value(Some(&value)) {
                return Err(BibleError::Invalid {
                    message: format!("'{field}' of a {kind} cannot be empty"),
                });
            }
            checked.push((field, value));
        }
        let version = self.last_version + 1;
        let at = self.find(kind, id).map_err(|_| BibleError::Invalid {
            message: "the entity vanished".into(),
        })?;
        let entity = &mut self.entities[at];
        let origin = actor.origin();
        let mut changed = false;
        for (field, value) in checked {
            if entity.get(&field) == &value {
                continue;
            }
            changed = true;
            if value.is_null() {
                entity.fields.remove(&field);
            } else {
                entity.fields.insert(field.clone(), value);
            }
            entity.origins.insert(field.clone(), origin.clone());
            entity.stamps.insert(
                field,
                Stamp {
                    at: now,
                    origin: origin.clone(),
                    version,
                },
            );
        }
        if changed {
            entity.version = version;
            self.last_version = version;
        }
        Ok(&self.entities[at])
    }

    /// Remove an entity, returning it.
    pub fn remove(&mut self, kind: Kind, id: &str) -> Result<Entity, BibleError> {
        self.require(kind, id)?;
        self.last_version += 1;
        match self.find(kind, id) {
            Ok(at) => Ok(self.entities.remove(at)),
            Err(_) => Err(BibleError::Invalid {
                message: "the entity vanished".into(),
            }),
        }
    }

    /// Put an entity back as it was (rollback of a failed command), or as another copy of
    /// the project has it (a merge). The version counter does not go back, and moves up to
    /// the entity's version.
    pub fn restore(&mut self, kind: Kind, id: &str, entity: Option<Entity>) {
        match (entity, self.find(kind, id)) {
            (Some(mut e), at) => {
                self.last_version = self.last_version.max(e.version);
                // It is the entity of `kind` and `id` (its own are its key in the vector).
                e.kind = kind;
                if e.id != id {
                    e.id = id.to_string();
                }
                match at {
                    Ok(at) => self.entities[at] = e,
                    Err(at) => self.entities.insert(at, e),
                }
            }
            (None, Ok(at)) => {
                self.entities.remove(at);
            }
            (None, Err(_)) => {}
        }
    }

    /// The first field of `fields` whose update would overwrite a write its writer did not
    /// see, judged as [`Judge`] says.
    pub fn concurrent(
        &self,
        entity: &Entity,
        fields: &[&str],
        judge: Judge<'_>,
        now: u64,
        window_ms: u64,
    ) -> Option<Concurrent> {
        fields.iter().find_map(|field| {
            let stamp = entity.stamps.get(*field)?;
            let ago = now.saturating_sub(stamp.at);
            let filled = !is_empty_value(Some(entity.get(field)));
            let unseen = match judge {
                // Written after the version the run saw (a stamp of version 0 is older than
                // field versions: it was there before).
                Judge::Seen(Some(seen)) => filled && stamp.version > seen,
                Judge::Seen(None) => filled && ago < window_ms,
                Judge::Origin(actor) => ago < window_ms && !actor.wrote(&stamp.origin),
            };
            unseen.then(|| Concurrent {
                field: field.to_string(),
                ago_ms: ago,
                by: stamp.origin.clone(),
                current: entity.get(field).clone(),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(date_of(0), "1970-01-01");
        assert_eq!(date_of(951_782_400_000), "2000-02-29");
        assert_eq!(date_of(1_795_305_600_000), "2026-11-22");
    }

    #[test]
    fn origins_name_their_agent() {
        assert_eq!(origin_agent("agent:lore:2026-11-22"), Some("lore"));
        assert_eq!(origin_agent("agent:a:b:2026-11-22"), Some("a:b"));
        assert_eq!(origin_agent("human"), None);
        let a = Actor::Agent {
            name: "lore".into(),
            date: "2026-11-23".into(),
        };
        assert!(a.wrote("agent:lore:2026-11-22"));
        assert!(!a.wrote("agent:other:2026-11-22"));
    }

    #[test]
    fn create_update_remove_bump_versions() {
        let mut b = Bible::new();
        let human = Actor::Human;
        let e = b
            .create(
                Kind::Character,
                "mara",
                vec![("name_src".into(), json!("Mara"))],
                &human,
                1,
            )
            .unwrap();
        assert_eq!(e.version, 1);
        assert_eq!(e.origin("name_src"), Some("human"));
        let agent = Actor::from_origin(&Origin::Agent("x".into()), 0);
        let e = b
            .update(
                Kind::Character,
                "mara",
                vec![("notes".into(), json!("brave"))],
                &agent,
                2,
            )
            .unwrap();
        assert_eq!(e.version, 2);
        assert_eq!(e.origin("notes"), Some("agent:x:1970-01-01"));
        assert_eq!(e.flat()["notes_origin"], "agent:x:1970-01-01");
        // No change, no new version.
        let e = b
            .update(
                Kind::Character,
                "mara",
                vec![("notes".into(), json!("brave"))],
                &human,
                3,
            )
            .unwrap();
        assert_eq!(e.version, 2);
        assert!(b
            .update(
                Kind::Character,
                "mara",
                vec![("name_src".into(), json!(""))],
                &human,
                3
            )
            .is_err());
        b.remove(Kind::Character, "mara").unwrap();
        let e = b
            .create(
                Kind::Character,
                "mara",
                vec![("name_src".into(), json!("Mara"))],
                &human,
                4,
            )
            .unwrap();
        assert!(e.version > 2);
    }

    #[test]
    fn values_are_checked() {
        assert!(check_value(Kind::Scene, "span", json!({"start": 3, "end": 1})).is_err());
        assert_eq!(
            check_value(Kind::Scene, "tags", json!(["a", " a ", "b", ""])).unwrap(),
            json!(["a", "b"])
        );
        assert!(check_value(Kind::Scene, "nope", json!(1)).is_err());
        assert!(check_value(Kind::Character, "notes", json!(3)).is_err());
    }

    #[cfg(not(target_arch = "wasm32"))]
    mod sorted_entities {
        use super::*;
        use proptest::prelude::*;

        #[derive(Debug, Clone)]
        enum Op {
            Create(Kind, String),
            Update(Kind, String, String),
            Remove(Kind, String),
            Restore(Kind, String, bool),
            Reload,
        }

        fn key() -> impl Strategy<Value = (Kind, String)> {
            (
                prop_oneof![
                    Just(Kind::Character),
                    Just(Kind::Location),
                    Just(Kind::Route)
                ],
                "[a-d]{1,2}",
            )
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                key().prop_map(|(k, id)| Op::Create(k, id)),
                (key(), "[xy]").prop_map(|((k, id), v)| Op::Update(k, id, v)),
                key().prop_map(|(k, id)| Op::Remove(k, id)),
                (key(), any::<bool>()).prop_map(|((k, id), some)| Op::Restore(k, id, some)),
                Just(Op::Reload),
            ]
        }

        fn entity(kind: Kind, id: &str, version: u64) -> Entity {
            Entity::empty(kind, id, version)
        }

        proptest! {
            /// The entities (a sorted vector) are what a `BTreeMap` keyed by kind and id
            /// holds after the same creates, updates, removes, restores and reloads.
            #[test]
            fn entities_are_what_a_btreemap_would_hold(ops in proptest::collection::vec(op(), 0..60)) {
                let mut bible = Bible::new();
                let mut model: BTreeMap<(Kind, String), Entity> = BTreeMap::new();
                let fields = |kind: Kind| match kind {
                    Kind::Route => vec![],
                    _ => vec![("name_src".to_string(), json!("N"))],
                };
                for (n, op) in ops.into_iter().enumerate() {
                    match op {
                        Op::Create(kind, id) => {
                            let made = bible.create(kind, &id, fields(kind), &Actor::Human, 1).cloned();
                            prop_assert_eq!(made.is_ok(), !model.contains_key(&(kind, id.clone())));
                            if let Ok(e) = made {
                                model.insert((kind, id), e);
                            }
                        }
                        Op::Update(kind, id, v) => {
                            let changes = vec![("name_tgt".to_string(), json!(v))];
                            let changes = if kind == Kind::Route {
                                vec![("synopsis".to_string(), json!(v))]
                            } else {
                                changes
                            };
                            let done = bible.update(kind, &id, changes, &Actor::Human, 2).cloned();
                            prop_assert_eq!(done.is_ok(), model.contains_key(&(kind, id.clone())));
                            if let Ok(e) = done {
                                model.insert((kind, id), e);
                            }
                        }
                        Op::Remove(kind, id) => {
                            let gone = bible.remove(kind, &id).ok();
                            prop_assert_eq!(gone, model.remove(&(kind, id)));
                        }
                        Op::Restore(kind, id, some) => {
                            let e = some.then(|| entity(kind, &id, 100 + n as u64));
                            bible.restore(kind, &id, e.clone());
                            match e {
                                Some(e) => model.insert((kind, id), e),
                                None => model.remove(&(kind, id)),
                            };
                        }
                        Op::Reload => {
                            // Loaded out of order, each twice: the last copy wins.
                            let mut all: Vec<Entity> =
                                bible.all().map(|e| entity(e.kind, &e.id, 0)).collect();
                            all.reverse();
                            let mut real: Vec<Entity> = bible.all().cloned().collect();
                            real.reverse();
                            all.extend(real);
                            bible = Bible::from_entities(all);
                            let newest = model.values().map(|e| e.version).max().unwrap_or(0);
                            prop_assert_eq!(bible.last_version(), newest);
                        }
                    }
                    let ours: Vec<&Entity> = bible.all().collect();
                    let theirs: Vec<&Entity> = model.values().collect();
                    prop_assert_eq!(ours, theirs);
                    prop_assert_eq!(bible.len(), model.len());
                    for kind in [Kind::Character, Kind::Location, Kind::Route, Kind::Scene] {
                        let ours: Vec<&Entity> = bible.list(kind).collect();
                        let theirs: Vec<&Entity> =
                            model.values().filter(|e| e.kind == kind).collect();
                        prop_assert_eq!(ours, theirs);
                    }
                    for ((kind, id), e) in &model {
                        prop_assert_eq!(bible.get(*kind, id), Some(e));
                    }
                }
            }
        }
    }
}
