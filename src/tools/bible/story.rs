//! Story-bible tools for the story itself: scenes, characters, locations and routes
//! (`{data}_{crud}_{thing}`), and the knowledge tools `query_lore` and `get_character_info`.
//!
//! - Scenes: `scene_read_metadata`, `scene_read_overview`, `scene_read_redacted`,
//!   `scene_update_summary`, `scene_update_tags`, `scene_update_primary_characters`,
//!   `scene_update_locations`. Scenes are created by the writer (in the page) or by other
//!   tools; agents cannot create or delete them here.
//! - Characters: `character_read_entry`, `character_create_entry`,
//!   `character_update_name_tgt`, `character_update_pronouns`, `character_update_notes`,
//!   `character_delete_entry`.
//! - Locations: `location_read_entry`, `location_create_entry`, `location_update_name_tgt`,
//!   `location_update_description`, `location_delete_entry`.
//! - Routes: `route_read_entry`, `route_create_entry`, `route_update_synopsis`,
//!   `route_update_primary_characters`, `route_delete_entry`.
//! - Knowledge: `query_lore` (term search over characters, locations, routes and scene
//!   summaries) and `get_character_info` (an entry and its appearances in the manuscript).
//!
//! Every write goes through the edit context's bible write path, which applies the approval
//! policy (an agent's change to what the writer wrote gets `approval_required` and changes
//! nothing), conflict detection and provenance. Characters and locations can be named by
//! id, name or alias (any case); an unknown name gets `not_found` naming the closest ids.
//!
//! `scene_update_summary` writes a scene's summary once per agent run (a run's single-use
//! guard `scene_update_summary:<id>`, taken only by a write that succeeded): a second write in
//! the same run fails with `already_written` and is rolled back unless `overwrite` is true.
//! Text values are trimmed and an empty one clears the field; list values name existing
//! entities, which are resolved to ids (`scene_update_primary_characters` also reports which
//! characters the scene's text mentions).
//!
//! Read tools return `{"text": ...}` (formatted for a model, each field with its origin, as
//! `notes (human): ...`) plus structured data (`entry`: the flat view of the entity).
//!
//! # Reading order and redaction
//!
//! Scenes are in *reading order*: by chapter (in the project's order), then by the start of
//! their span (a scene without a span covers its whole chapter), then by end, then by id. A
//! scene whose chapter is not in the project comes last.
//!
//! `scene_read_redacted` shows a scene as a first-time reader knows it when they reach the end
//! of the scene, having read the manuscript from the start of the first chapter up to the end
//! of the scene's span and nothing more. The rule:
//!
//! 1. A *name* (a character's or location's `name_src`, `name_tgt` or alias) is *seen* when it
//!    occurs as a whole word (case-sensitive, as [`mentions`] detects names) in that read
//!    text. A character or location is *introduced* when at least one of its names is seen.
//! 2. In everything shown (the scene's text excerpt, its summary and tags, and the summaries
//!    and tags of the earlier scenes shown), every mention of a name that is not seen yet is
//!    replaced by `[not yet introduced]` (the text excerpt itself lies before the end of the
//!    scene, so its names are normally all seen).
//! 3. Characters and locations are shown by their seen names only (the longest one seen),
//!    never by id; one that is not introduced is shown as `[not yet introduced]` (in the
//!    scene's `primary_characters` and `locations`, too). Their pronouns are shown for
//!    introduced characters.
//! 4. Never shown: character notes, location descriptions, entity ids of characters and
//!    locations, routes (their synopses cover whole branches) and every unseen name.
//! 5. Other scenes are shown (id, chapter, summary, tags, redacted as above) only if the reader
//!    has finished them: they end at or before this scene's end in reading order. Every other
//!    scene is *later* and hidden; only their number is given.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::bible::mentions::{self, names_of};
use crate::bible::{is_empty_value, Bible, Entity, Kind};
use crate::commands::Category;
use crate::project::{Chapter, Project};
use crate::session::EditContext;
use crate::tools::editing::preview;
use crate::tools::{ToolError, ToolRegistry, ToolSpec};

/// What stands for a name a reader has not met yet in `scene_read_redacted`.
pub const NOT_YET_INTRODUCED: &str = "[not yet introduced]";

/// Default number of characters of a scene's text shown by the scene reads.
pub const DEFAULT_EXCERPT_CHARS: usize = 2_000;

/// Most characters of a scene's text a scene read shows.
pub const MAX_EXCERPT_CHARS: usize = 50_000;

/// Register these tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.add::<SceneReadMetadata>();
    registry.add::<SceneReadOverview>();
    registry.add::<SceneReadRedacted>();
    registry.add::<SceneUpdateSummary>();
    registry.add::<SceneUpdateTags>();
    registry.add::<SceneUpdatePrimaryCharacters>();
    registry.add::<SceneUpdateLocations>();
    registry.add::<CharacterReadEntry>();
    registry.add::<CharacterCreateEntry>();
    registry.add::<CharacterUpdateNameTgt>();
    registry.add::<CharacterUpdatePronouns>();
    registry.add::<CharacterUpdateNotes>();
    registry.add::<CharacterDeleteEntry>();
    registry.add::<LocationReadEntry>();
    registry.add::<LocationCreateEntry>();
    registry.add::<LocationUpdateNameTgt>();
    registry.add::<LocationUpdateDescription>();
    registry.add::<LocationDeleteEntry>();
    registry.add::<RouteReadEntry>();
    registry.add::<RouteCreateEntry>();
    registry.add::<RouteUpdateSynopsis>();
    registry.add::<RouteUpdatePrimaryCharacters>();
    registry.add::<RouteDeleteEntry>();
    registry.add::<QueryLore>();
    registry.add::<GetCharacterInfo>();
}

// ---------------------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------------------

/// A field's value as text: lists joined with commas, a span as `chars a–b`, empty values
/// as `(empty)`.
fn show_value(value: &Value) -> String {
    if is_empty_value(Some(value)) {
        return "(empty)".into();
    }
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(", "),
        Value::Object(map) if map.contains_key("start") => format!(
            "chars {}–{}",
            map.get("start").unwrap_or(&Value::Null),
            map.get("end").unwrap_or(&Value::Null)
        ),
        other => other.to_string(),
    }
}

/// `field (origin): value`, or `field: value` for a field never written.
fn field_line(entity: &Entity, field: &str) -> String {
    let value = show_value(entity.get(field));
    match entity.origin(field) {
        Some(origin) => format!("{field} ({origin}): {value}"),
        None => format!("{field}: {value}"),
    }
}

fn title_case(kind: Kind) -> String {
    let name = kind.name();
    let mut chars = name.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    })
}

/// An entity as text: a heading line and one line per field, with origins.
fn entity_text(entity: &Entity) -> String {
    let mut out = format!(
        "{} '{}' (version {})",
        title_case(entity.kind),
        entity.id,
        entity.version
    );
    for spec in entity.kind.fields() {
        out.push('\n');
        out.push_str(&field_line(entity, spec.name));
    }
    out
}

/// The name to show for an entity: its source name, or its id.
fn display_name(entity: &Entity) -> &str {
    let name = entity.text("name_src");
    if name.trim().is_empty() {
        &entity.id
    } else {
        name
    }
}

/// The first `max` chars of `text`, and whether it was cut.
fn excerpt(text: &str, max: usize) -> (String, bool) {
    let total = text.chars().count();
    if total <= max {
        (text.to_string(), false)
    } else {
        (text.chars().take(max).collect(), true)
    }
}

/// A one-line snippet of `text` around the char range `start..end`.
fn snippet(chapter: &Chapter, start: usize, end: usize, around: usize) -> String {
    let from = start.saturating_sub(around);
    let to = end + around;
    let mut s = chapter.slice(from, to).replace(['\n', '\r'], " ");
    if from > 0 {
        s.insert(0, '…');
    }
    if to < chapter.len_chars() {
        s.push('…');
    }
    s
}

fn excerpt_limit(max_chars: Option<u64>) -> Result<usize, ToolError> {
    match max_chars {
        None => Ok(DEFAULT_EXCERPT_CHARS),
        Some(n) if (1..=MAX_EXCERPT_CHARS as u64).contains(&n) => Ok(n as usize),
        Some(n) => Err(ToolError::invalid_args(format!(
            "'max_chars' must be 1 to {MAX_EXCERPT_CHARS}, got {n}"
        ))),
    }
}

// ---------------------------------------------------------------------------------------
// Resolution of ids and names
// ---------------------------------------------------------------------------------------

/// The tool that lists entities of a kind (for error messages).
fn lister(kind: Kind) -> &'static str {
    match kind {
        Kind::Scene => "scene_read_overview",
        Kind::Character => "character_read_entry",
        Kind::Location => "location_read_entry",
        Kind::Route => "route_read_entry",
        _ => "the bible tools",
    }
}

/// Whether entities of `kind` are known by names besides their id.
fn named(kind: Kind) -> bool {
    matches!(kind, Kind::Character | Kind::Location)
}

/// The entity of `kind` named by `query`: its id, or (for characters and locations) one of
/// its names or aliases, in any case. Errors name the closest ids.
fn resolve<'b>(bible: &'b Bible, kind: Kind, query: &str) -> Result<&'b Entity, ToolError> {
    let q = query.trim();
    if q.is_empty() {
        return Err(ToolError::invalid_args(format!(
            "the {kind} must not be empty; give its id{}",
            if named(kind) { ", name or alias" } else { "" }
        )));
    }
    if let Some(e) = bible.get(kind, q) {
        return Ok(e);
    }
    let lower = q.to_lowercase();
    let matches: Vec<&Entity> = bible
        .list(kind)
        .filter(|e| {
            e.id.to_lowercase() == lower
                || (named(kind) && names_of(e).iter().any(|n| n.to_lowercase() == lower))
        })
        .collect();
    match matches.len() {
        1 => return Ok(matches[0]),
        0 => {}
        _ => {
            let list: Vec<String> = matches
                .iter()
                .map(|e| format!("'{}' ({})", e.id, display_name(e)))
                .collect();
            return Err(ToolError::invalid_args(format!(
                "'{}' names several {kind}s: {}; pass the id of the one you mean",
                preview(q, 80),
                list.join(", ")
            ))
            .with_details(
                json!({ "candidates": matches.iter().map(|e| &e.id).collect::<Vec<_>>() }),
            ));
        }
    }
    Err(not_found(bible, kind, q))
}

/// `not_found` for a name of `kind`, naming the closest ids (by id, name or alias).
fn not_found(bible: &Bible, kind: Kind, query: &str) -> ToolError {
    let shown = preview(query, 80);
    if bible.list(kind).next().is_none() {
        return ToolError::not_found(format!(
            "no {kind} '{shown}': the story bible has no {kind}s yet{}",
            match kind {
                Kind::Character | Kind::Location | Kind::Route =>
                    format!("; {kind}_create_entry adds one"),
                _ => String::new(),
            }
        ));
    }
    // Candidates: ids and names, each mapped back to its id.
    let mut candidates: Vec<(String, String)> = Vec::new();
    for e in bible.list(kind) {
        candidates.push((e.id.clone(), e.id.clone()));
        if named(kind) {
            for n in names_of(e) {
                candidates.push((n, e.id.clone()));
            }
        }
    }
    let close = if query.chars().count() <= 200 {
        crate::names::closest(query, candidates.iter().map(|(n, _)| n.as_str()), 6)
    } else {
        Vec::new()
    };
    let mut ids: Vec<&str> = Vec::new();
    for name in close {
        if let Some((_, id)) = candidates.iter().find(|(n, _)| n == name) {
            if !ids.contains(&id.as_str()) {
                ids.push(id);
            }
        }
    }
    ids.truncate(3);
    let hint = if ids.is_empty() {
        String::new()
    } else {
        let shown: Vec<String> = ids
            .iter()
            .map(|id| match bible.get(kind, id) {
                Some(e) if named(kind) => format!("'{id}' ({})", display_name(e)),
                _ => format!("'{id}'"),
            })
            .collect();
        format!(" (did you mean {}?)", shown.join(" or "))
    };
    ToolError::not_found(format!(
        "no {kind} with id{} '{shown}'{hint}; {} lists them",
        if named(kind) { ", name or alias" } else { "" },
        lister(kind)
    ))
    .with_details(json!({ "closest": ids }))
}

/// Resolve a list of names to ids (in order, without duplicates). Every unknown name is
/// reported at once.
fn resolve_all(bible: &Bible, kind: Kind, names: &[String]) -> Result<Vec<String>, ToolError> {
    let mut ids: Vec<String> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    for name in names {
        if name.trim().is_empty() {
            continue;
        }
        match resolve(bible, kind, name) {
            Ok(e) => {
                if !ids.contains(&e.id) {
                    ids.push(e.id.clone());
                }
            }
            Err(error) => problems.push(error.message),
        }
    }
    if !problems.is_empty() {
        let code = if problems.iter().all(|p| p.starts_with("no ")) {
            "not_found"
        } else {
            "invalid_args"
        };
        return Err(ToolError::new(
            code,
            format!(
                "{} Nothing was changed. Use existing {kind}s (or create them first with {kind}_create_entry).",
                problems.join(" ")
            ),
        ));
    }
    Ok(ids)
}

/// A text value as given for a field: trimmed; empty clears the field (`null`).
fn text_value(s: &str) -> Value {
    let t = s.trim();
    if t.is_empty() {
        Value::Null
    } else {
        json!(t)
    }
}

/// Change one field through the bible's write path and describe the result.
fn update_one(
    cx: &mut EditContext<'_>,
    kind: Kind,
    id: &str,
    field: &str,
    value: Value,
) -> Result<Value, ToolError> {
    let previous = cx.bible().require(kind, id)?.get(field).clone();
    // Normalized first, so that an approval request shows the value that would be stored.
    let value = crate::bible::check_value(kind, field, value)?;
    let entry = cx.bible_update(kind, id, vec![(field.to_string(), value)])?;
    let entity = cx.bible().require(kind, id)?;
    let now = entity.get(field).clone();
    let changed = now != previous;
    let text = if changed {
        format!(
            "Updated {field} of {kind} '{id}'.\nBefore: {}\nNow: {}",
            show_value(&previous),
            field_line(entity, field)
        )
    } else {
        format!(
            "{field} of {kind} '{id}' already had that value; nothing changed.\n{}",
            field_line(entity, field)
        )
    };
    Ok(json!({
        "text": text,
        "id": id,
        "field": field,
        "previous": previous,
        "value": now,
        "changed": changed,
        "entry": entry,
    }))
}

/// Where entities refer to `(kind, id)`: scenes and routes that list it.
fn references(bible: &Bible, kind: Kind, id: &str) -> Vec<(Kind, String, &'static str)> {
    let mut out = Vec::new();
    let fields: &[(Kind, &'static str)] = match kind {
        Kind::Character => &[
            (Kind::Scene, "primary_characters"),
            (Kind::Route, "primary_characters"),
        ],
        Kind::Location => &[(Kind::Scene, "locations")],
        Kind::Scene => &[(Kind::Route, "scene_ids")],
        _ => &[],
    };
    for (k, field) in fields {
        for e in bible.list(*k) {
            if e.list(field).contains(&id) {
                out.push((*k, e.id.clone(), *field));
            }
        }
    }
    out
}

/// Delete an entity through the bible's write path and describe what was deleted.
fn delete_one(cx: &mut EditContext<'_>, kind: Kind, query: &str) -> Result<Value, ToolError> {
    let id = resolve(cx.bible(), kind, query)?.id.clone();
    let deleted = cx.bible_delete(kind, &id)?;
    let refs = references(cx.bible(), kind, &id);
    let mut text = format!("Deleted {kind} '{id}'. It was:\n{}", entity_text(&deleted));
    if !refs.is_empty() {
        let list: Vec<String> = refs
            .iter()
            .map(|(k, i, f)| format!("{k} '{i}' ({f})"))
            .collect();
        text.push_str(&format!(
            "\nWarning: still listed by {}; update those if it should go from them too.",
            list.join(", ")
        ));
    }
    Ok(json!({
        "text": text,
        "deleted": deleted.flat(),
        "referencedBy": refs.iter().map(|(k, i, f)| json!({"kind": k, "id": i, "field": f})).collect::<Vec<_>>(),
    }))
}

/// A one-line summary of an entity for lists.
fn brief(entity: &Entity) -> String {
    match entity.kind {
        Kind::Character => {
            let mut s = format!("{} — {}", entity.id, display_name(entity));
            let aliases = entity.list("aliases");
            if !aliases.is_empty() {
                s.push_str(&format!(" (aliases: {})", aliases.join(", ")));
            }
            if !entity.text("pronouns").is_empty() {
                s.push_str(&format!(" [{}]", entity.text("pronouns")));
            }
            s
        }
        Kind::Location => {
            let mut s = format!("{} — {}", entity.id, display_name(entity));
            if !entity.text("description").is_empty() {
                s.push_str(&format!(": {}", preview(entity.text("description"), 100)));
            }
            s
        }
        Kind::Route => format!(
            "{}: {}",
            entity.id,
            if entity.text("synopsis").is_empty() {
                "(no synopsis)".to_string()
            } else {
                preview(entity.text("synopsis"), 120)
            }
        ),
        _ => entity.id.clone(),
    }
}

/// Read one entity of `kind` by id or name, or list them all.
fn read_entry(cx: &EditContext<'_>, kind: Kind, query: Option<&str>) -> Result<Value, ToolError> {
    let bible = cx.bible();
    match query.filter(|q| !q.trim().is_empty()) {
        None => {
            let all: Vec<&Entity> = bible.list(kind).collect();
            let text = if all.is_empty() {
                format!("The story bible has no {kind}s yet; {kind}_create_entry adds one.")
            } else {
                let mut t = format!(
                    "{} {kind}{}:",
                    all.len(),
                    if all.len() == 1 { "" } else { "s" }
                );
                for e in &all {
                    t.push_str(&format!("\n- {}", brief(e)));
                }
                t.push_str(&format!(
                    "\nPass one's id to {} for the whole entry.",
                    lister(kind)
                ));
                t
            };
            Ok(json!({
                "text": text,
                "count": all.len(),
                "entries": all.iter().map(|e| e.flat()).collect::<Vec<_>>(),
            }))
        }
        Some(q) => {
            let entity = resolve(bible, kind, q)?;
            let mut text = entity_text(entity);
            let mut extra = serde_json::Map::new();
            match kind {
                Kind::Character | Kind::Location => {
                    let refs = references(bible, kind, &entity.id);
                    let scenes: Vec<&str> = refs
                        .iter()
                        .filter(|(k, _, _)| *k == Kind::Scene)
                        .map(|(_, i, _)| i.as_str())
                        .collect();
                    let routes: Vec<&str> = refs
                        .iter()
                        .filter(|(k, _, _)| *k == Kind::Route)
                        .map(|(_, i, _)| i.as_str())
                        .collect();
                    if !scenes.is_empty() {
                        text.push_str(&format!("\nListed in scenes: {}", scenes.join(", ")));
                    }
                    if !routes.is_empty() {
                        text.push_str(&format!("\nListed in routes: {}", routes.join(", ")));
                    }
                    extra.insert("scenes".into(), json!(scenes));
                    extra.insert("routes".into(), json!(routes));
                }
                Kind::Route => {
                    let names: Vec<String> = entity
                        .list("primary_characters")
                        .iter()
                        .map(|id| match bible.get(Kind::Character, id) {
                            Some(c) => format!("{id} ({})", display_name(c)),
                            None => format!("{id} (not in the bible)"),
                        })
                        .collect();
                    if !names.is_empty() {
                        text.push_str(&format!("\nCharacters: {}", names.join(", ")));
                    }
                    let missing: Vec<&str> = entity
                        .list("scene_ids")
                        .into_iter()
                        .filter(|s| bible.get(Kind::Scene, s).is_none())
                        .collect();
                    if !missing.is_empty() {
                        text.push_str(&format!(
                            "\nScenes not in the bible: {}",
                            missing.join(", ")
                        ));
                    }
                }
                _ => {}
            }
            let mut out = json!({ "text": text, "id": entity.id, "entry": entity.flat() });
            if let Value::Object(map) = &mut out {
                map.extend(extra);
            }
            Ok(out)
        }
    }
}

// ---------------------------------------------------------------------------------------
// Scenes: placement in reading order
// ---------------------------------------------------------------------------------------

/// A scene placed in the manuscript.
struct Placed<'a> {
    scene: &'a Entity,
    /// Index of its chapter, if the chapter is in the project.
    chapter: Option<usize>,
    start: usize,
    end: usize,
}

impl Placed<'_> {
    /// The scene's start in reading order.
    fn key(&self) -> (usize, usize, usize, &str) {
        (
            self.chapter.unwrap_or(usize::MAX),
            self.start,
            self.end,
            self.scene.id.as_str(),
        )
    }

    /// Where the scene ends in reading order.
    fn end_key(&self) -> (usize, usize) {
        (self.chapter.unwrap_or(usize::MAX), self.end)
    }

    fn where_text(&self, project: &Project) -> String {
        match self.chapter {
            Some(i) => {
                let c = &project.chapters[i];
                format!(
                    "chapter {} “{}” ({}), chars {}–{}",
                    i + 1,
                    c.title,
                    c.id,
                    self.start,
                    self.end
                )
            }
            None => format!(
                "chapter '{}' (not in the project)",
                preview(self.scene.text("chapter"), 60)
            ),
        }
    }

    /// The scene's text ("" when its chapter is not in the project).
    fn text(&self, project: &Project) -> String {
        self.chapter
            .map(|i| project.chapters[i].slice(self.start, self.end))
            .unwrap_or_default()
    }
}

/// The chapter a scene names (by id, else number or title) and its index.
fn scene_chapter<'p>(project: &'p Project, scene: &Entity) -> Option<(usize, &'p Chapter)> {
    let name = scene.text("chapter").trim();
    if name.is_empty() {
        return None;
    }
    let chapter = project
        .chapter(name)
        .or_else(|| project.find_chapter(name).ok())?;
    Some((project.chapter_index(&chapter.id)?, chapter))
}

fn place<'a>(project: &Project, scene: &'a Entity) -> Placed<'a> {
    let span = scene.get("span");
    let span_of = |key: &str| {
        span.get(key)
            .and_then(Value::as_u64)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
    };
    match scene_chapter(project, scene) {
        Some((index, chapter)) => {
            let len = chapter.len_chars();
            let end = span_of("end").unwrap_or(len).min(len);
            let start = span_of("start").unwrap_or(0).min(end);
            Placed {
                scene,
                chapter: Some(index),
                start,
                end,
            }
        }
        None => Placed {
            scene,
            chapter: None,
            start: span_of("start").unwrap_or(0),
            end: span_of("end").unwrap_or(0),
        },
    }
}

/// The ids of every scene in reading order (by chapter, then start).
pub fn scene_ids_in_order(bible: &Bible, project: &Project) -> Vec<String> {
    scenes_in_order(bible, project)
        .into_iter()
        .map(|p| p.scene.id.clone())
        .collect()
}

/// Every scene in reading order.
fn scenes_in_order<'a>(bible: &'a Bible, project: &Project) -> Vec<Placed<'a>> {
    let mut all: Vec<Placed<'a>> = bible.list(Kind::Scene).map(|s| place(project, s)).collect();
    all.sort_by(|a, b| a.key().cmp(&b.key()));
    all
}

/// Names of the entities of `kind` listed by a scene, as `id (Name)`.
fn listed(bible: &Bible, kind: Kind, ids: &[&str]) -> Vec<String> {
    ids.iter()
        .map(|id| match bible.get(kind, id) {
            Some(e) => format!("{id} ({})", display_name(e)),
            None => format!("{id} (not in the bible)"),
        })
        .collect()
}

/// A scene's metadata as text, with its place in the manuscript.
fn scene_text(bible: &Bible, project: &Project, placed: &Placed<'_>) -> String {
    let scene = placed.scene;
    let mut text = entity_text(scene);
    text.push_str(&format!("\nWhere: {}", placed.where_text(project)));
    let chars = listed(bible, Kind::Character, &scene.list("primary_characters"));
    if !chars.is_empty() {
        text.push_str(&format!("\nCharacters: {}", chars.join(", ")));
    }
    let locs = listed(bible, Kind::Location, &scene.list("locations"));
    if !locs.is_empty() {
        text.push_str(&format!("\nLocations: {}", locs.join(", ")));
    }
    text
}

fn find_scene<'a>(bible: &'a Bible, project: &Project, id: &str) -> Result<Placed<'a>, ToolError> {
    let scene = resolve(bible, Kind::Scene, id)?;
    Ok(place(project, scene))
}

// ---------------------------------------------------------------------------------------
// Scene tools
// ---------------------------------------------------------------------------------------

/// Arguments naming a scene.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SceneArgs {
    /// The scene's id (scene_read_overview without a scene lists them).
    #[serde(alias = "id", alias = "scene_id", alias = "sceneId")]
    pub scene: String,
}

/// `scene_read_metadata`.
pub struct SceneReadMetadata;

impl ToolSpec for SceneReadMetadata {
    type Args = SceneArgs;
    const NAME: &'static str = "scene_read_metadata";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Read a scene's story-bible entry: chapter, span (char offsets in the chapter), summary, tags, primary characters and locations, each with its origin (human, import or agent:<name>:<date>), and the entry's version. scene_read_overview adds the scene's text.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let (bible, project) = (cx.bible(), cx.project());
        let placed = find_scene(bible, project, &args.scene)?;
        Ok(json!({
            "text": scene_text(bible, project, &placed),
            "id": placed.scene.id,
            "chapterNumber": placed.chapter.map(|i| i + 1),
            "start": placed.start,
            "end": placed.end,
            "entry": placed.scene.flat(),
        }))
    }
}

/// Arguments of `scene_read_overview`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SceneOverviewArgs {
    /// The scene's id. Omit to list every scene briefly in reading order.
    #[serde(default, alias = "id", alias = "scene_id", alias = "sceneId")]
    pub scene: Option<String>,
    /// Most characters of the scene's text to show, 1 to 50000; default 2000.
    #[serde(default, alias = "maxChars")]
    #[schemars(range(min = 1, max = 50000))]
    pub max_chars: Option<u64>,
}

/// `scene_read_overview`.
pub struct SceneReadOverview;

impl ToolSpec for SceneReadOverview {
    type Args = SceneOverviewArgs;
    const NAME: &'static str = "scene_read_overview";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Without a scene: list every scene of the story bible in reading order (id, chapter, span, summary). With a scene id: its metadata (with origins), the characters and locations mentioned in its text, and the text itself (the first max_chars characters, default 2000).";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let limit = excerpt_limit(args.max_chars)?;
        let (bible, project) = (cx.bible(), cx.project());
        let Some(id) = args.scene.filter(|s| !s.trim().is_empty()) else {
            let all = scenes_in_order(bible, project);
            if all.is_empty() {
                return Ok(json!({
                    "text": "The story bible has no scenes yet. The writer creates scenes in the page (a chapter and a span of it).",
                    "count": 0,
                    "scenes": [],
                }));
            }
            let mut text = format!("{} scenes in reading order:", all.len());
            let mut list = Vec::new();
            for (n, p) in all.iter().enumerate() {
                let summary = p.scene.text("summary");
                text.push_str(&format!(
                    "\n{}. {} — {}: {}",
                    n + 1,
                    p.scene.id,
                    p.where_text(project),
                    if summary.trim().is_empty() {
                        "(no summary)".to_string()
                    } else {
                        preview(summary, 200)
                    }
                ));
                list.push(json!({
                    "id": p.scene.id,
                    "chapter": p.scene.text("chapter"),
                    "chapterNumber": p.chapter.map(|i| i + 1),
                    "start": p.start,
                    "end": p.end,
                    "summary": p.scene.get("summary"),
                }));
            }
            return Ok(json!({ "text": text, "count": list.len(), "scenes": list }));
        };
        let placed = find_scene(bible, project, &id)?;
        let body = placed.text(project);
        let mut text = scene_text(bible, project, &placed);
        let chars = mentions::mentioned_ids(bible, &body, Kind::Character);
        let locs = mentions::mentioned_ids(bible, &body, Kind::Location);
        let listed_chars = placed.scene.list("primary_characters");
        let unlisted: Vec<&String> = chars
            .iter()
            .filter(|c| !listed_chars.contains(&c.as_str()))
            .collect();
        text.push_str(&format!(
            "\nMentioned in its text: characters: {}; locations: {}",
            if chars.is_empty() {
                "none".to_string()
            } else {
                listed(
                    bible,
                    Kind::Character,
                    &chars.iter().map(String::as_str).collect::<Vec<_>>(),
                )
                .join(", ")
            },
            if locs.is_empty() {
                "none".to_string()
            } else {
                listed(
                    bible,
                    Kind::Location,
                    &locs.iter().map(String::as_str).collect::<Vec<_>>(),
                )
                .join(", ")
            }
        ));
        let (shown, cut) = excerpt(&body, limit);
        let total = body.chars().count();
        if placed.chapter.is_some() {
            text.push_str(&format!(
                "\nText ({} chars{}):\n{}{}",
                total,
                if cut {
                    format!(", first {limit} shown")
                } else {
                    String::new()
                },
                shown,
                if cut { "…" } else { "" }
            ));
        }
        Ok(json!({
            "text": text,
            "id": placed.scene.id,
            "chapterNumber": placed.chapter.map(|i| i + 1),
            "start": placed.start,
            "end": placed.end,
            "entry": placed.scene.flat(),
            "mentionedCharacters": chars,
            "mentionedLocations": locs,
            "mentionedButNotListed": unlisted,
            "excerpt": shown,
            "truncated": cut,
        }))
    }
}

/// What a first-time reader knows at the end of a scene (see the module docs).
struct Reader<'a> {
    bible: &'a Bible,
    /// (kind, id, name) of every seen name.
    seen: BTreeSet<(Kind, String, String)>,
}

impl<'a> Reader<'a> {
    /// The reader who has read `project` up to char `end` of chapter `chapter`.
    fn new(bible: &'a Bible, project: &Project, chapter: usize, end: usize) -> Self {
        let mut read: Vec<String> = project.chapters[..chapter]
            .iter()
            .map(|c| c.text().to_string())
            .collect();
        read.push(project.chapters[chapter].slice(0, end));
        let mut seen = BTreeSet::new();
        for kind in [Kind::Character, Kind::Location] {
            for e in bible.list(kind) {
                for name in names_of(e) {
                    if read.iter().any(|t| mentions::contains_word(t, &name)) {
                        seen.insert((kind, e.id.clone(), name));
                    }
                }
            }
        }
        Self { bible, seen }
    }

    /// The seen names of an entity, longest first.
    fn seen_names(&self, kind: Kind, id: &str) -> Vec<String> {
        self.bible
            .get(kind, id)
            .map(|e| {
                names_of(e)
                    .into_iter()
                    .filter(|n| self.seen.contains(&(kind, id.to_string(), n.clone())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// How the reader knows an entity: its longest seen name, or the placeholder.
    fn display(&self, kind: Kind, id: &str) -> String {
        self.seen_names(kind, id)
            .into_iter()
            .next()
            .unwrap_or_else(|| NOT_YET_INTRODUCED.to_string())
    }

    /// `text` with every mention of an unseen name replaced by the placeholder.
    fn redact(&self, text: &str) -> String {
        let found = mentions::detect(self.bible, text);
        let hidden: Vec<&mentions::Mention> = found
            .iter()
            .filter(|m| !self.seen.contains(&(m.kind, m.id.clone(), m.name.clone())))
            .collect();
        if hidden.is_empty() {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut next = hidden.into_iter().peekable();
        let mut skip_to = 0;
        for (i, c) in text.chars().enumerate() {
            if let Some(m) = next.peek() {
                if i == m.start {
                    out.push_str(NOT_YET_INTRODUCED);
                    skip_to = m.end;
                    next.next();
                }
            }
            if i >= skip_to {
                out.push(c);
            }
        }
        out
    }

    fn redact_list(&self, items: &[&str]) -> Vec<String> {
        items.iter().map(|s| self.redact(s)).collect()
    }

    /// An entity list field (ids) as the reader knows it.
    fn display_list(&self, kind: Kind, ids: &[&str]) -> Vec<String> {
        ids.iter().map(|id| self.display(kind, id)).collect()
    }
}

/// Arguments of `scene_read_redacted`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SceneRedactedArgs {
    /// The scene's id.
    #[serde(alias = "id", alias = "scene_id", alias = "sceneId")]
    pub scene: String,
    /// Most characters of the scene's text to show, 1 to 50000; default 2000.
    #[serde(default, alias = "maxChars")]
    #[schemars(range(min = 1, max = 50000))]
    pub max_chars: Option<u64>,
}

/// `scene_read_redacted`.
pub struct SceneReadRedacted;

impl ToolSpec for SceneReadRedacted {
    type Args = SceneRedactedArgs;
    const NAME: &'static str = "scene_read_redacted";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Read a scene as a first-time reader knows it at the end of the scene, having read the manuscript from the start up to the scene's end and nothing more (use it to judge a scene without spoilers). A name of a character or location is seen if it occurs (whole word, case-sensitive) in that text; every unseen name is replaced by [not yet introduced] in the scene's text, summary and tags, characters and locations are shown by seen names only (never by id; one with no seen name is [not yet introduced]). Earlier scenes (those ending at or before this scene's end) are shown with their summaries and tags, redacted the same way; later scenes are hidden (only their number is given). Character notes, location descriptions and routes are never shown.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let limit = excerpt_limit(args.max_chars)?;
        let (bible, project) = (cx.bible(), cx.project());
        let placed = find_scene(bible, project, &args.scene)?;
        let Some(chapter) = placed.chapter else {
            return Err(ToolError::not_found(format!(
                "scene '{}' is in chapter '{}', which is not in the project, so it has no place in reading order; the writer must fix its chapter",
                placed.scene.id,
                preview(placed.scene.text("chapter"), 60)
            )));
        };
        let reader = Reader::new(bible, project, chapter, placed.end);
        let scene = placed.scene;
        let summary = reader.redact(scene.text("summary"));
        let tags = reader.redact_list(&scene.list("tags"));
        let characters = reader.display_list(Kind::Character, &scene.list("primary_characters"));
        let locations = reader.display_list(Kind::Location, &scene.list("locations"));
        let body = reader.redact(&placed.text(project));
        let (shown, cut) = excerpt(&body, limit);
        let ch = &project.chapters[chapter];

        let all = scenes_in_order(bible, project);
        let mut earlier = Vec::new();
        let mut later = 0usize;
        for p in &all {
            if p.scene.id == scene.id {
                continue;
            }
            if p.chapter.is_some() && p.end_key() <= placed.end_key() {
                earlier.push(p);
            } else {
                later += 1;
            }
        }

        let or_none = |s: &str| {
            if s.trim().is_empty() {
                "(none)".to_string()
            } else {
                s.to_string()
            }
        };
        let join_or_none = |v: &[String]| {
            if v.is_empty() {
                "(none)".to_string()
            } else {
                v.join(", ")
            }
        };
        let mut text = format!(
            "Scene '{}' as a first-time reader knows it at its end (chapter {} “{}”, chars {}–{}). Names the reader has not met yet are shown as {NOT_YET_INTRODUCED}; later scenes, character notes, location descriptions and routes are hidden.\nsummary: {}\ntags: {}\nprimary_characters: {}\nlocations: {}",
            scene.id,
            chapter + 1,
            ch.title,
            placed.start,
            placed.end,
            or_none(&summary),
            join_or_none(&tags),
            join_or_none(&characters),
            join_or_none(&locations),
        );
        text.push_str(&format!(
            "\nText ({} chars{}):\n{}{}",
            body.chars().count(),
            if cut {
                format!(", first {limit} shown")
            } else {
                String::new()
            },
            shown,
            if cut { "…" } else { "" }
        ));

        let mut earlier_json = Vec::new();
        if earlier.is_empty() {
            text.push_str("\nEarlier scenes: none.");
        } else {
            text.push_str("\nEarlier scenes:");
            for p in &earlier {
                let s = reader.redact(p.scene.text("summary"));
                let t = reader.redact_list(&p.scene.list("tags"));
                text.push_str(&format!(
                    "\n- {} (chapter {}): {}{}",
                    p.scene.id,
                    p.chapter.map_or(0, |i| i + 1),
                    or_none(&s),
                    if t.is_empty() {
                        String::new()
                    } else {
                        format!(" [tags: {}]", t.join(", "))
                    }
                ));
                earlier_json.push(json!({
                    "id": p.scene.id,
                    "chapterNumber": p.chapter.map(|i| i + 1),
                    "summary": s,
                    "tags": t,
                }));
            }
        }
        text.push_str(&format!("\nLater scenes hidden: {later}."));

        let mut known_characters = Vec::new();
        for c in bible.list(Kind::Character) {
            let names = reader.seen_names(Kind::Character, &c.id);
            if names.is_empty() {
                continue;
            }
            let pronouns = c.text("pronouns").trim().to_string();
            known_characters.push(json!({
                "name": names[0],
                "names": names,
                "pronouns": if pronouns.is_empty() { Value::Null } else { json!(pronouns) },
            }));
        }
        let mut known_locations = Vec::new();
        for l in bible.list(Kind::Location) {
            let names = reader.seen_names(Kind::Location, &l.id);
            if !names.is_empty() {
                known_locations.push(json!({ "name": names[0], "names": names }));
            }
        }
        let describe = |v: &Value| {
            let names: Vec<String> = v["names"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            match v["pronouns"].as_str() {
                Some(p) => format!("{} [{p}]", names.join(" / ")),
                None => names.join(" / "),
            }
        };
        text.push_str(&format!(
            "\nCharacters the reader has met: {}",
            join_or_none(&known_characters.iter().map(describe).collect::<Vec<_>>())
        ));
        text.push_str(&format!(
            "\nLocations the reader knows: {}",
            join_or_none(&known_locations.iter().map(describe).collect::<Vec<_>>())
        ));

        Ok(json!({
            "text": text,
            "scene": {
                "id": scene.id,
                "chapterNumber": chapter + 1,
                "start": placed.start,
                "end": placed.end,
                "summary": summary,
                "tags": tags,
                "primary_characters": characters,
                "locations": locations,
            },
            "excerpt": shown,
            "truncated": cut,
            "earlierScenes": earlier_json,
            "laterScenesHidden": later,
            "characters": known_characters,
            "locations": known_locations,
        }))
    }
}

/// Arguments of `scene_update_summary`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SceneSummaryArgs {
    /// The scene's id.
    #[serde(alias = "id", alias = "scene_id", alias = "sceneId")]
    pub scene: String,
    /// The new summary (replaces the old; empty clears it).
    pub summary: String,
    /// An agent writes a scene's summary once per run; pass true to write it again in the
    /// same run. Default false.
    #[serde(default)]
    pub overwrite: bool,
}

/// `scene_update_summary`.
pub struct SceneUpdateSummary;

impl ToolSpec for SceneUpdateSummary {
    type Args = SceneSummaryArgs;
    const NAME: &'static str = "scene_update_summary";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Set a scene's summary (replacing it; empty clears it). Within one run an agent writes each scene's summary once: a second write fails with already_written unless overwrite is true. A summary the writer wrote needs the writer's approval to change (approval_required; nothing changes until approved).";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let id = resolve(cx.bible(), Kind::Scene, &args.scene)?.id.clone();
        // Write first: a write that fails (approval, conflict) does not use up the guard. If
        // the guard was already taken, the error rolls the write back.
        let result = update_one(cx, Kind::Scene, &id, "summary", text_value(&args.summary))?;
        if !cx.take_guard(&format!("scene_update_summary:{id}"))
            && !cx.may_overwrite(args.overwrite)
        {
            return Err(ToolError::new(
                "already_written",
                format!(
                    "the summary of scene '{id}' was already written in this run; nothing was changed. Pass overwrite: true to replace it again."
                ),
            )
            .with_details(json!({ "id": id, "current": result["previous"] })));
        }
        Ok(result)
    }
}

/// Arguments of `scene_update_tags`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SceneTagsArgs {
    /// The scene's id.
    #[serde(alias = "id", alias = "scene_id", alias = "sceneId")]
    pub scene: String,
    /// The scene's tags (replacing the old ones; an empty list clears them).
    pub tags: Vec<String>,
}

/// `scene_update_tags`.
pub struct SceneUpdateTags;

impl ToolSpec for SceneUpdateTags {
    type Args = SceneTagsArgs;
    const NAME: &'static str = "scene_update_tags";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Set a scene's tags (the whole list, replacing the old one; duplicates and empty tags are dropped). Tags the writer set need the writer's approval to change.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let id = resolve(cx.bible(), Kind::Scene, &args.scene)?.id.clone();
        update_one(cx, Kind::Scene, &id, "tags", json!(args.tags))
    }
}

/// Arguments of `scene_update_primary_characters`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SceneCharactersArgs {
    /// The scene's id.
    #[serde(alias = "id", alias = "scene_id", alias = "sceneId")]
    pub scene: String,
    /// The scene's primary characters: ids, names or aliases of characters in the story
    /// bible (the whole list, replacing the old one).
    #[serde(alias = "primary_characters", alias = "primaryCharacters")]
    pub characters: Vec<String>,
}

/// `scene_update_primary_characters`.
pub struct SceneUpdatePrimaryCharacters;

impl ToolSpec for SceneUpdatePrimaryCharacters {
    type Args = SceneCharactersArgs;
    const NAME: &'static str = "scene_update_primary_characters";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Set a scene's primary characters (the whole list; ids, names or aliases of characters in the story bible, stored as ids). Every character must exist. The result says which of them are mentioned in the scene's text and warns about those that are not.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let id = resolve(cx.bible(), Kind::Scene, &args.scene)?.id.clone();
        let ids = resolve_all(cx.bible(), Kind::Character, &args.characters)?;
        let mut result = update_one(cx, Kind::Scene, &id, "primary_characters", json!(ids))?;
        let (bible, project) = (cx.bible(), cx.project());
        let placed = find_scene(bible, project, &id)?;
        let body = placed.text(project);
        let present = mentions::mentioned_ids(bible, &body, Kind::Character);
        let (mentioned, missing): (Vec<&String>, Vec<&String>) =
            ids.iter().partition(|c| present.contains(c));
        if let Value::Object(map) = &mut result {
            let mut text = map["text"].as_str().unwrap_or("").to_string();
            text.push_str(&format!(
                "\nMentioned in the scene's text: {}",
                if mentioned.is_empty() {
                    "none".to_string()
                } else {
                    mentioned
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ));
            if !missing.is_empty() {
                let warning = format!(
                    "Warning: not mentioned in the scene's text (by any name or alias): {}. Check that they belong in this scene, or add the name they go by as an alias.",
                    missing.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                );
                text.push('\n');
                text.push_str(&warning);
                map.insert("warning".into(), json!(warning));
            }
            map.insert("text".into(), json!(text));
            map.insert("mentioned".into(), json!(mentioned));
            map.insert("notMentioned".into(), json!(missing));
        }
        Ok(result)
    }
}

/// Arguments of `scene_update_locations`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SceneLocationsArgs {
    /// The scene's id.
    #[serde(alias = "id", alias = "scene_id", alias = "sceneId")]
    pub scene: String,
    /// The scene's locations: ids, names or aliases of locations in the story bible (the
    /// whole list, replacing the old one).
    pub locations: Vec<String>,
}

/// `scene_update_locations`.
pub struct SceneUpdateLocations;

impl ToolSpec for SceneUpdateLocations {
    type Args = SceneLocationsArgs;
    const NAME: &'static str = "scene_update_locations";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Set a scene's locations (the whole list; ids or names of locations in the story bible, stored as ids). Every location must exist (location_create_entry adds one).";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let id = resolve(cx.bible(), Kind::Scene, &args.scene)?.id.clone();
        let ids = resolve_all(cx.bible(), Kind::Location, &args.locations)?;
        update_one(cx, Kind::Scene, &id, "locations", json!(ids))
    }
}

// ---------------------------------------------------------------------------------------
// Characters
// ---------------------------------------------------------------------------------------

/// Arguments naming a character, or none to list them.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CharacterReadArgs {
    /// The character's id, name or alias. Omit to list every character.
    #[serde(default, alias = "id", alias = "name")]
    pub character: Option<String>,
}

/// `character_read_entry`.
pub struct CharacterReadEntry;

impl ToolSpec for CharacterReadEntry {
    type Args = CharacterReadArgs;
    const NAME: &'static str = "character_read_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Read a character's story-bible entry by id, name or alias (any case): name_src, name_tgt, aliases, pronouns and notes, each with its origin, plus the scenes and routes that list the character. Without a character, list every character briefly.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        read_entry(cx, Kind::Character, args.character.as_deref())
    }
}

/// Warnings for a new character or location whose names another entity of the kind has.
fn name_clashes(bible: &Bible, kind: Kind, names: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let lower = name.to_lowercase();
        for e in bible.list(kind) {
            if names_of(e).iter().any(|n| n.to_lowercase() == lower) {
                out.push(format!(
                    "'{name}' is already a name of {kind} '{}' ({})",
                    e.id,
                    display_name(e)
                ));
            }
        }
    }
    out
}

/// The id for a new entity: the one given (trimmed) or a fresh one from `hint`.
fn new_id(bible: &Bible, kind: Kind, given: Option<&str>, hint: &str) -> String {
    match given.map(str::trim).filter(|s| !s.is_empty()) {
        Some(id) => id.to_string(),
        None => bible.fresh_id(kind, hint),
    }
}

/// Create an entity and describe it, with warnings.
fn create_one(
    cx: &mut EditContext<'_>,
    kind: Kind,
    id: &str,
    fields: Vec<(String, Value)>,
    warnings: Vec<String>,
) -> Result<Value, ToolError> {
    let fields: Vec<(String, Value)> = fields.into_iter().filter(|(_, v)| !v.is_null()).collect();
    let entry = cx.bible_create(kind, id, fields)?;
    let entity = cx.bible().require(kind, id)?;
    let mut text = format!("Created {kind} '{id}'.\n{}", entity_text(entity));
    for w in &warnings {
        text.push_str(&format!("\nWarning: {w}"));
    }
    Ok(json!({ "text": text, "id": id, "entry": entry, "warnings": warnings }))
}

/// Arguments of `character_create_entry`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CharacterCreateArgs {
    /// The character's name in the source text (as it appears in the manuscript).
    #[serde(alias = "nameSrc", alias = "name")]
    pub name_src: String,
    /// The name in the target language of a translation.
    #[serde(default, alias = "nameTgt")]
    pub name_tgt: Option<String>,
    /// Other names the character goes by in the text (nicknames, titles, first name alone).
    #[serde(default)]
    pub aliases: Option<Vec<String>>,
    /// Pronouns, such as "she/her".
    #[serde(default)]
    pub pronouns: Option<String>,
    /// Notes: role, traits, relationships, arc.
    #[serde(default)]
    pub notes: Option<String>,
    /// The id to give it; default: made from the name (such as "mara-vell").
    #[serde(default)]
    pub id: Option<String>,
}

/// `character_create_entry`.
pub struct CharacterCreateEntry;

impl ToolSpec for CharacterCreateEntry {
    type Args = CharacterCreateArgs;
    const NAME: &'static str = "character_create_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Add a character to the story bible: name_src (required), name_tgt, aliases, pronouns, notes; the id is made from the name unless given. By default an agent's new character needs the writer's approval (approval_required; the call is applied once the writer approves). Warns when another character already has one of the names.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let name = args.name_src.trim();
        if name.is_empty() {
            return Err(ToolError::invalid_args(
                "'name_src' must not be empty; give the character's name as it appears in the text",
            ));
        }
        let aliases = args.aliases.unwrap_or_default();
        let mut names: Vec<&str> = vec![name];
        names.extend(args.name_tgt.as_deref());
        names.extend(aliases.iter().map(String::as_str));
        let warnings = name_clashes(cx.bible(), Kind::Character, &names);
        let id = new_id(cx.bible(), Kind::Character, args.id.as_deref(), name);
        let fields = vec![
            ("name_src".to_string(), json!(name)),
            (
                "name_tgt".into(),
                text_value(args.name_tgt.as_deref().unwrap_or("")),
            ),
            (
                "aliases".into(),
                if aliases.is_empty() {
                    Value::Null
                } else {
                    json!(aliases)
                },
            ),
            (
                "pronouns".into(),
                text_value(args.pronouns.as_deref().unwrap_or("")),
            ),
            (
                "notes".into(),
                text_value(args.notes.as_deref().unwrap_or("")),
            ),
        ];
        create_one(cx, Kind::Character, &id, fields, warnings)
    }
}

/// Arguments of `character_update_name_tgt`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CharacterNameTgtArgs {
    /// The character's id, name or alias.
    #[serde(alias = "id")]
    pub character: String,
    /// The name in the target language (empty clears it).
    #[serde(alias = "nameTgt")]
    pub name_tgt: String,
}

/// `character_update_name_tgt`.
pub struct CharacterUpdateNameTgt;

impl ToolSpec for CharacterUpdateNameTgt {
    type Args = CharacterNameTgtArgs;
    const NAME: &'static str = "character_update_name_tgt";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Set a character's target-language name (empty clears it). The character is named by id, name or alias. Changing what the writer wrote needs the writer's approval (approval_required; nothing changes until approved).";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let id = resolve(cx.bible(), Kind::Character, &args.character)?
            .id
            .clone();
        update_one(
            cx,
            Kind::Character,
            &id,
            "name_tgt",
            text_value(&args.name_tgt),
        )
    }
}

/// Arguments of `character_update_pronouns`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CharacterPronounsArgs {
    /// The character's id, name or alias.
    #[serde(alias = "id")]
    pub character: String,
    /// The pronouns, such as "she/her" (empty clears them).
    pub pronouns: String,
}

/// `character_update_pronouns`.
pub struct CharacterUpdatePronouns;

impl ToolSpec for CharacterUpdatePronouns {
    type Args = CharacterPronounsArgs;
    const NAME: &'static str = "character_update_pronouns";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Set a character's pronouns (such as \"she/her\"; empty clears them). The character is named by id, name or alias. Changing what the writer wrote needs the writer's approval.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let id = resolve(cx.bible(), Kind::Character, &args.character)?
            .id
            .clone();
        update_one(
            cx,
            Kind::Character,
            &id,
            "pronouns",
            text_value(&args.pronouns),
        )
    }
}

/// Arguments of `character_update_notes`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CharacterNotesArgs {
    /// The character's id, name or alias.
    #[serde(alias = "id")]
    pub character: String,
    /// The whole new notes, replacing the old (to add to them, read them first and pass the
    /// full text; empty clears them).
    pub notes: String,
}

/// `character_update_notes`.
pub struct CharacterUpdateNotes;

impl ToolSpec for CharacterUpdateNotes {
    type Args = CharacterNotesArgs;
    const NAME: &'static str = "character_update_notes";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Replace a character's notes (role, traits, relationships, arc) with the text given; to add to them, read them first and pass the whole new text. The character is named by id, name or alias. Notes the writer wrote need the writer's approval to change.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let id = resolve(cx.bible(), Kind::Character, &args.character)?
            .id
            .clone();
        update_one(cx, Kind::Character, &id, "notes", text_value(&args.notes))
    }
}

/// Arguments naming one character.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CharacterArgs {
    /// The character's id, name or alias.
    #[serde(alias = "id", alias = "name")]
    pub character: String,
}

/// `character_delete_entry`.
pub struct CharacterDeleteEntry;

impl ToolSpec for CharacterDeleteEntry {
    type Args = CharacterArgs;
    const NAME: &'static str = "character_delete_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Delete a character from the story bible (by id, name or alias). By default an agent's delete always needs the writer's approval. Returns the deleted entry and the scenes and routes that still list it.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        delete_one(cx, Kind::Character, &args.character)
    }
}

// ---------------------------------------------------------------------------------------
// Locations
// ---------------------------------------------------------------------------------------

/// Arguments naming a location, or none to list them.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct LocationReadArgs {
    /// The location's id or name. Omit to list every location.
    #[serde(default, alias = "id", alias = "name")]
    pub location: Option<String>,
}

/// `location_read_entry`.
pub struct LocationReadEntry;

impl ToolSpec for LocationReadEntry {
    type Args = LocationReadArgs;
    const NAME: &'static str = "location_read_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Read a location's story-bible entry by id or name (any case): name_src, name_tgt and description, each with its origin, plus the scenes that list it. Without a location, list every location briefly.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        read_entry(cx, Kind::Location, args.location.as_deref())
    }
}

/// Arguments of `location_create_entry`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct LocationCreateArgs {
    /// The location's name in the source text.
    #[serde(alias = "nameSrc", alias = "name")]
    pub name_src: String,
    /// The name in the target language of a translation.
    #[serde(default, alias = "nameTgt")]
    pub name_tgt: Option<String>,
    /// What the place is like and what happens there.
    #[serde(default)]
    pub description: Option<String>,
    /// The id to give it; default: made from the name.
    #[serde(default)]
    pub id: Option<String>,
}

/// `location_create_entry`.
pub struct LocationCreateEntry;

impl ToolSpec for LocationCreateEntry {
    type Args = LocationCreateArgs;
    const NAME: &'static str = "location_create_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Add a location to the story bible: name_src (required), name_tgt, description; the id is made from the name unless given. Warns when another location already has the name.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let name = args.name_src.trim();
        if name.is_empty() {
            return Err(ToolError::invalid_args(
                "'name_src' must not be empty; give the location's name as it appears in the text",
            ));
        }
        let mut names: Vec<&str> = vec![name];
        names.extend(args.name_tgt.as_deref());
        let warnings = name_clashes(cx.bible(), Kind::Location, &names);
        let id = new_id(cx.bible(), Kind::Location, args.id.as_deref(), name);
        let fields = vec![
            ("name_src".to_string(), json!(name)),
            (
                "name_tgt".into(),
                text_value(args.name_tgt.as_deref().unwrap_or("")),
            ),
            (
                "description".into(),
                text_value(args.description.as_deref().unwrap_or("")),
            ),
        ];
        create_one(cx, Kind::Location, &id, fields, warnings)
    }
}

/// Arguments of `location_update_name_tgt`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct LocationNameTgtArgs {
    /// The location's id or name.
    #[serde(alias = "id")]
    pub location: String,
    /// The name in the target language (empty clears it).
    #[serde(alias = "nameTgt")]
    pub name_tgt: String,
}

/// `location_update_name_tgt`.
pub struct LocationUpdateNameTgt;

impl ToolSpec for LocationUpdateNameTgt {
    type Args = LocationNameTgtArgs;
    const NAME: &'static str = "location_update_name_tgt";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Set a location's target-language name (empty clears it). The location is named by id or name. Changing what the writer wrote needs the writer's approval.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let id = resolve(cx.bible(), Kind::Location, &args.location)?
            .id
            .clone();
        update_one(
            cx,
            Kind::Location,
            &id,
            "name_tgt",
            text_value(&args.name_tgt),
        )
    }
}

/// Arguments of `location_update_description`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct LocationDescriptionArgs {
    /// The location's id or name.
    #[serde(alias = "id")]
    pub location: String,
    /// The whole new description, replacing the old (empty clears it).
    pub description: String,
}

/// `location_update_description`.
pub struct LocationUpdateDescription;

impl ToolSpec for LocationUpdateDescription {
    type Args = LocationDescriptionArgs;
    const NAME: &'static str = "location_update_description";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Replace a location's description with the text given (to add to it, read it first and pass the whole new text; empty clears it). The location is named by id or name. A description the writer wrote needs the writer's approval to change.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let id = resolve(cx.bible(), Kind::Location, &args.location)?
            .id
            .clone();
        update_one(
            cx,
            Kind::Location,
            &id,
            "description",
            text_value(&args.description),
        )
    }
}

/// Arguments naming one location.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct LocationArgs {
    /// The location's id or name.
    #[serde(alias = "id", alias = "name")]
    pub location: String,
}

/// `location_delete_entry`.
pub struct LocationDeleteEntry;

impl ToolSpec for LocationDeleteEntry {
    type Args = LocationArgs;
    const NAME: &'static str = "location_delete_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Delete a location from the story bible (by id or name). By default an agent's delete always needs the writer's approval. Returns the deleted entry and the scenes that still list it.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        delete_one(cx, Kind::Location, &args.location)
    }
}

// ---------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------

/// Arguments naming a route, or none to list them.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RouteReadArgs {
    /// The route's id. Omit to list every route.
    #[serde(default, alias = "id")]
    pub route: Option<String>,
}

/// `route_read_entry`.
pub struct RouteReadEntry;

impl ToolSpec for RouteReadEntry {
    type Args = RouteReadArgs;
    const NAME: &'static str = "route_read_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Read a route's story-bible entry (a branch of an interactive story): synopsis, primary characters and scene ids, each with its origin. Without a route, list every route briefly.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        read_entry(cx, Kind::Route, args.route.as_deref())
    }
}

/// Check that every scene id exists; errors name the closest.
fn check_scenes(bible: &Bible, ids: &[String]) -> Result<Vec<String>, ToolError> {
    let mut out: Vec<String> = Vec::new();
    let mut problems = Vec::new();
    for id in ids.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        match bible.get(Kind::Scene, id) {
            Some(_) => {
                if !out.iter().any(|o| o == id) {
                    out.push(id.to_string());
                }
            }
            None => problems.push(not_found(bible, Kind::Scene, id).message),
        }
    }
    if !problems.is_empty() {
        return Err(ToolError::not_found(format!(
            "{} Nothing was changed.",
            problems.join(" ")
        )));
    }
    Ok(out)
}

/// Arguments of `route_create_entry`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RouteCreateArgs {
    /// The id to give it; default: made from the synopsis's first words.
    #[serde(default)]
    pub id: Option<String>,
    /// What happens on this route.
    pub synopsis: String,
    /// Its primary characters: ids, names or aliases of characters in the story bible.
    #[serde(default, alias = "primaryCharacters", alias = "characters")]
    pub primary_characters: Option<Vec<String>>,
    /// Ids of its scenes (scenes in the story bible).
    #[serde(default, alias = "sceneIds", alias = "scenes")]
    pub scene_ids: Option<Vec<String>>,
}

/// `route_create_entry`.
pub struct RouteCreateEntry;

impl ToolSpec for RouteCreateEntry {
    type Args = RouteCreateArgs;
    const NAME: &'static str = "route_create_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Add a route (a branch of an interactive story) to the story bible: synopsis (required), primary_characters (ids or names of existing characters), scene_ids (existing scenes); the id is made from the synopsis unless given. By default an agent's new route needs the writer's approval.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let synopsis = args.synopsis.trim();
        if synopsis.is_empty() {
            return Err(ToolError::invalid_args(
                "'synopsis' must not be empty; say what happens on this route",
            ));
        }
        let characters = resolve_all(
            cx.bible(),
            Kind::Character,
            &args.primary_characters.unwrap_or_default(),
        )?;
        let scenes = check_scenes(cx.bible(), &args.scene_ids.unwrap_or_default())?;
        let hint: String = synopsis
            .split_whitespace()
            .take(4)
            .collect::<Vec<_>>()
            .join(" ");
        let id = new_id(cx.bible(), Kind::Route, args.id.as_deref(), &hint);
        let list = |v: Vec<String>| {
            if v.is_empty() {
                Value::Null
            } else {
                json!(v)
            }
        };
        let fields = vec![
            ("synopsis".to_string(), json!(synopsis)),
            ("primary_characters".into(), list(characters)),
            ("scene_ids".into(), list(scenes)),
        ];
        create_one(cx, Kind::Route, &id, fields, Vec::new())
    }
}

/// Arguments of `route_update_synopsis`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RouteSynopsisArgs {
    /// The route's id.
    #[serde(alias = "id")]
    pub route: String,
    /// The whole new synopsis, replacing the old (empty clears it).
    pub synopsis: String,
}

/// `route_update_synopsis`.
pub struct RouteUpdateSynopsis;

impl ToolSpec for RouteUpdateSynopsis {
    type Args = RouteSynopsisArgs;
    const NAME: &'static str = "route_update_synopsis";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Replace a route's synopsis (empty clears it). A synopsis the writer wrote needs the writer's approval to change.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let id = resolve(cx.bible(), Kind::Route, &args.route)?.id.clone();
        update_one(cx, Kind::Route, &id, "synopsis", text_value(&args.synopsis))
    }
}

/// Arguments of `route_update_primary_characters`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RouteCharactersArgs {
    /// The route's id.
    #[serde(alias = "id")]
    pub route: String,
    /// Its primary characters: ids, names or aliases of characters in the story bible (the
    /// whole list, replacing the old one).
    #[serde(alias = "primary_characters", alias = "primaryCharacters")]
    pub characters: Vec<String>,
}

/// `route_update_primary_characters`.
pub struct RouteUpdatePrimaryCharacters;

impl ToolSpec for RouteUpdatePrimaryCharacters {
    type Args = RouteCharactersArgs;
    const NAME: &'static str = "route_update_primary_characters";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Set a route's primary characters (the whole list; ids, names or aliases of existing characters, stored as ids). A list the writer set needs the writer's approval to change.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let id = resolve(cx.bible(), Kind::Route, &args.route)?.id.clone();
        let ids = resolve_all(cx.bible(), Kind::Character, &args.characters)?;
        update_one(cx, Kind::Route, &id, "primary_characters", json!(ids))
    }
}

/// Arguments naming one route.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RouteArgs {
    /// The route's id.
    #[serde(alias = "id")]
    pub route: String,
}

/// `route_delete_entry`.
pub struct RouteDeleteEntry;

impl ToolSpec for RouteDeleteEntry {
    type Args = RouteArgs;
    const NAME: &'static str = "route_delete_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Delete a route from the story bible (its scenes stay). By default an agent's delete always needs the writer's approval. Returns the deleted entry.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        delete_one(cx, Kind::Route, &args.route)
    }
}

// ---------------------------------------------------------------------------------------
// Knowledge
// ---------------------------------------------------------------------------------------

/// Words a lore query ignores (unless it has no other).
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "has",
    "have", "how", "in", "is", "it", "its", "of", "on", "or", "the", "to", "was", "what", "when",
    "where", "which", "who", "whom", "why", "with",
];

/// The kinds `query_lore` searches, in the order ties are ranked.
const LORE_KINDS: [Kind; 4] = [Kind::Character, Kind::Location, Kind::Route, Kind::Scene];

fn lore_rank(kind: Kind) -> usize {
    LORE_KINDS
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(LORE_KINDS.len())
}

/// Lowercase words of a text.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether a query term matches a word: equal, or (for terms of 3+ chars) a prefix of it
/// ("sail" matches "sailor").
fn term_matches(term: &str, word: &str) -> bool {
    word == term || (term.chars().count() >= 3 && word.starts_with(term))
}

/// The fields `query_lore` searches, per kind, and whether each is a name.
fn lore_fields(kind: Kind) -> &'static [(&'static str, bool)] {
    match kind {
        Kind::Character => &[
            ("name_src", true),
            ("name_tgt", true),
            ("aliases", true),
            ("pronouns", false),
            ("notes", false),
        ],
        Kind::Location => &[
            ("name_src", true),
            ("name_tgt", true),
            ("description", false),
        ],
        Kind::Route => &[("synopsis", false), ("primary_characters", false)],
        Kind::Scene => &[
            ("summary", false),
            ("tags", false),
            ("primary_characters", false),
            ("locations", false),
        ],
        _ => &[],
    }
}

fn field_string(entity: &Entity, field: &str) -> String {
    match entity.get(field) {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    }
}

/// Arguments of `query_lore`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct QueryLoreArgs {
    /// Words to look for, such as a name, a place, an object or a question ("who owns the
    /// lighthouse").
    pub query: String,
    /// Most hits to return, 1 to 50; default 10.
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u64>,
}

/// `query_lore`.
pub struct QueryLore;

impl ToolSpec for QueryLore {
    type Args = QueryLoreArgs;
    const NAME: &'static str = "query_lore";
    const CATEGORY: Category = Category::Knowledge;
    const DESCRIPTION: &'static str = "Search the story bible's lore: characters (names, aliases, pronouns, notes), locations (names, descriptions), routes (synopses) and scene summaries and tags. Case-insensitive word matching (a word of 3+ letters also matches longer words it begins); hits are ranked by how many query words they match, names counting most. Returns the hits with the matching field.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let limit = match args.limit {
            None => 10,
            Some(n) if (1..=50).contains(&n) => n as usize,
            Some(n) => {
                return Err(ToolError::invalid_args(format!(
                    "'limit' must be 1 to 50, got {n}"
                )))
            }
        };
        let mut terms: Vec<String> = Vec::new();
        for w in words(&args.query) {
            if !terms.contains(&w) {
                terms.push(w);
            }
        }
        let content: Vec<String> = terms
            .iter()
            .filter(|t| !STOP_WORDS.contains(&t.as_str()))
            .cloned()
            .collect();
        if !content.is_empty() {
            terms = content;
        }
        terms.truncate(32);
        if terms.is_empty() {
            return Err(ToolError::invalid_args(
                "'query' has no words to look for; give a name, a place, an object or a few words",
            ));
        }
        let phrase = args.query.trim().to_lowercase();
        let bible = cx.bible();
        struct Hit<'a> {
            entity: &'a Entity,
            matched: Vec<String>,
            score: u64,
            field: &'static str,
        }
        let mut hits: Vec<Hit<'_>> = Vec::new();
        for kind in LORE_KINDS {
            for entity in bible.list(kind) {
                let mut matched: Vec<String> = Vec::new();
                let mut score = 0u64;
                let mut best: (u64, &'static str) = (0, "");
                let id_words = words(&entity.id);
                for term in &terms {
                    if id_words.iter().any(|w| term_matches(term, w)) && !matched.contains(term) {
                        matched.push(term.clone());
                        score += 2;
                    }
                }
                for (field, is_name) in lore_fields(kind) {
                    let text = field_string(entity, field);
                    if text.is_empty() {
                        continue;
                    }
                    let ws = words(&text);
                    let mut field_score = 0u64;
                    for term in &terms {
                        let n = ws.iter().filter(|w| term_matches(term, w)).count() as u64;
                        if n > 0 {
                            if !matched.contains(term) {
                                matched.push(term.clone());
                            }
                            field_score += if *is_name { 5 } else { 1 } + n.min(5);
                        }
                    }
                    if phrase.contains(' ') && text.to_lowercase().contains(&phrase) {
                        field_score += 5;
                    }
                    score += field_score;
                    if field_score > best.0 {
                        best = (field_score, field);
                    }
                }
                if !matched.is_empty() {
                    hits.push(Hit {
                        entity,
                        matched,
                        score,
                        field: best.1,
                    });
                }
            }
        }
        hits.sort_by(|a, b| {
            b.matched
                .len()
                .cmp(&a.matched.len())
                .then(b.score.cmp(&a.score))
                .then(lore_rank(a.entity.kind).cmp(&lore_rank(b.entity.kind)))
                .then(a.entity.id.cmp(&b.entity.id))
        });
        let total = hits.len();
        hits.truncate(limit);
        if hits.is_empty() {
            return Ok(json!({
                "text": format!("Nothing in the story bible matches \"{}\". Try other or fewer words, or a name.", preview(args.query.trim(), 80)),
                "count": 0,
                "total": 0,
                "hits": [],
                "terms": terms,
            }));
        }
        let mut text = format!(
            "{} of {} hits for \"{}\" (terms: {}):",
            hits.len(),
            total,
            preview(args.query.trim(), 80),
            terms.join(", ")
        );
        let mut list = Vec::new();
        for (n, hit) in hits.iter().enumerate() {
            let e = hit.entity;
            let label = match e.kind {
                Kind::Character | Kind::Location => {
                    format!("{} '{}' ({})", e.kind, e.id, display_name(e))
                }
                _ => format!("{} '{}'", e.kind, e.id),
            };
            let detail = if hit.field.is_empty() {
                String::new()
            } else {
                let line = field_line(e, hit.field);
                format!(" — {}", preview(&line, 300))
            };
            text.push_str(&format!(
                "\n{}. {label}: matched {}{detail}",
                n + 1,
                hit.matched.join(", ")
            ));
            list.push(json!({
                "kind": e.kind,
                "id": e.id,
                "matched": hit.matched,
                "score": hit.score,
                "field": if hit.field.is_empty() { Value::Null } else { json!(hit.field) },
                "entry": e.flat(),
            }));
        }
        Ok(json!({
            "text": text,
            "count": list.len(),
            "total": total,
            "hits": list,
            "terms": terms,
        }))
    }
}

/// Arguments of `get_character_info`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CharacterInfoArgs {
    /// The character's id, name or alias.
    #[serde(alias = "id", alias = "name")]
    pub character: String,
}

/// `get_character_info`.
pub struct GetCharacterInfo;

impl ToolSpec for GetCharacterInfo {
    type Args = CharacterInfoArgs;
    const NAME: &'static str = "get_character_info";
    const CATEGORY: Category = Category::Knowledge;
    const DESCRIPTION: &'static str = "Everything known about a character (by id, name or alias): the story-bible entry with origins, the scenes and routes that list them, and their appearances in the manuscript: for each chapter, how many times any of their names or aliases is mentioned (whole word, case-sensitive) and where the first mention is, with a snippet.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let (bible, project) = (cx.bible(), cx.project());
        let entity = resolve(bible, Kind::Character, &args.character)?;
        let id = entity.id.as_str();
        let mut text = entity_text(entity);
        let refs = references(bible, Kind::Character, id);
        let scenes: Vec<&str> = refs
            .iter()
            .filter(|(k, _, _)| *k == Kind::Scene)
            .map(|(_, i, _)| i.as_str())
            .collect();
        let routes: Vec<&str> = refs
            .iter()
            .filter(|(k, _, _)| *k == Kind::Route)
            .map(|(_, i, _)| i.as_str())
            .collect();
        if !scenes.is_empty() {
            text.push_str(&format!("\nListed in scenes: {}", scenes.join(", ")));
        }
        if !routes.is_empty() {
            text.push_str(&format!("\nListed in routes: {}", routes.join(", ")));
        }
        let mut appearances = Vec::new();
        let mut total = 0usize;
        for (i, chapter) in project.chapters.iter().enumerate() {
            let found =
                mentions::of_entity(bible, &chapter.text().to_string(), Kind::Character, id);
            let Some(first) = found.first() else {
                continue;
            };
            total += found.len();
            appearances.push(json!({
                "chapter": chapter.id,
                "chapterNumber": i + 1,
                "chapterTitle": chapter.title,
                "mentions": found.len(),
                "firstMention": {
                    "start": first.start,
                    "end": first.end,
                    "name": first.name,
                    "snippet": snippet(chapter, first.start, first.end, 60),
                },
            }));
        }
        let names = names_of(entity);
        if appearances.is_empty() {
            text.push_str(&format!(
                "\nAppearances: none; no chapter mentions {} as a whole word.",
                names
                    .iter()
                    .map(|n| format!("\"{n}\""))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ));
        } else {
            text.push_str(&format!(
                "\nAppearances ({} mentions in {} of {} chapters):",
                total,
                appearances.len(),
                project.chapters.len()
            ));
            for a in &appearances {
                text.push_str(&format!(
                    "\n- chapter {} “{}” ({}): {} mention{}; first at char {} as \"{}\": {}",
                    a["chapterNumber"],
                    a["chapterTitle"].as_str().unwrap_or(""),
                    a["chapter"].as_str().unwrap_or(""),
                    a["mentions"],
                    if a["mentions"] == 1 { "" } else { "s" },
                    a["firstMention"]["start"],
                    a["firstMention"]["name"].as_str().unwrap_or(""),
                    a["firstMention"]["snippet"].as_str().unwrap_or("")
                ));
            }
        }
        Ok(json!({
            "text": text,
            "id": id,
            "entry": entity.flat(),
            "names": names,
            "scenes": scenes,
            "routes": routes,
            "totalMentions": total,
            "appearances": appearances,
        }))
    }
}
