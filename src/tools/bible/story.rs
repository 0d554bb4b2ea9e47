//! The story itself: scenes, characters, locations and routes, and the knowledge tools
//! `query_lore` and `get_character_info` (see [`super::TOOLS`] for the tools). Here are the
//! generic CRUD tools of those kinds and the handlers of the others.
//!
//! Characters and locations are named by id, name or alias (any case); an unknown name gets
//! `not_found` naming the closest ids. Text values are trimmed and an empty one clears the
//! field; reference lists name existing entities and are stored as ids. `scene_update_summary`
//! writes a scene's summary once per agent run (the run's single-use guard
//! `scene_update_summary:<id>`, taken only by a write that succeeded): a second write in the
//! same run fails with `already_written` and is rolled back unless `overwrite` is true. Read
//! tools return `{"text": ...}` (each field with its origin, as `notes (human): ...`) plus
//! structured data (`entry`: the flat view of the entity).
//!
//! # Reading order and redaction
//!
//! Scenes are in *reading order*: by chapter (in the project's order), then by the start of
//! their span (a scene without a span covers its whole chapter), then by end, then by id. A
//! scene whose chapter is not in the project comes last.
//!
//! `scene_read_redacted` shows a scene as a first-time reader knows it at its end, having read
//! the manuscript from the start of the first chapter up to the end of the scene's span:
//!
//! 1. A *name* (a character's or location's `name_src`, `name_tgt` or alias) is *seen* when it
//!    occurs as a whole word (case-sensitive, as [`mentions`] detects names) in that read
//!    text. A character or location is *introduced* when at least one of its names is seen.
//! 2. In everything shown (the scene's text excerpt, its summary and tags, and the summaries
//!    and tags of the earlier scenes shown), every mention of an unseen name is replaced by
//!    `[not yet introduced]`.
//! 3. Characters and locations are shown by their longest seen name, never by id; one not
//!    introduced is shown as `[not yet introduced]`. Introduced characters show pronouns.
//! 4. Never shown: character notes, location descriptions, entity ids of characters and
//!    locations, routes (their synopses cover whole branches) and every unseen name.
//! 5. Other scenes are shown (id, chapter, summary, tags, redacted) only if they end at or
//!    before this scene's end in reading order; the later ones are only counted.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::{decl, Args, Val};
use crate::bible::mentions::{self, names_of};
use crate::bible::{is_empty_value, Bible, Entity, Kind};
use crate::project::{Chapter, Project};
use crate::session::EditContext;
use crate::tools::editing::preview;
use crate::tools::ToolError;

/// What stands for a name a reader has not met yet in `scene_read_redacted`.
pub const NOT_YET_INTRODUCED: &str = "[not yet introduced]";

/// Default number of characters of a scene's text shown by the scene reads.
pub const DEFAULT_EXCERPT_CHARS: usize = 2_000;

/// Most characters of a scene's text a scene read shows.
pub const MAX_EXCERPT_CHARS: usize = 50_000;

type Out = Result<Value, ToolError>;

// Formatting.

/// A field's value as text: lists joined with commas, a span as `chars a–b`, empty values
/// as `(empty)`.
fn show_value(value: &Value) -> String {
    match value {
        _ if is_empty_value(Some(value)) => "(empty)".into(),
        Value::String(s) => s.clone(),
        Value::Array(items) => join(
            items
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string)),
        ),
        Value::Object(map) if map.contains_key("start") => {
            let at = |k: &str| map.get(k).unwrap_or(&Value::Null).to_string();
            format!("chars {}–{}", at("start"), at("end"))
        }
        other => other.to_string(),
    }
}

fn join(items: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    let items: Vec<_> = items.into_iter().collect();
    items
        .iter()
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `field (origin): value`, or `field: value` for a field never written.
fn field_line(entity: &Entity, field: &str) -> String {
    let value = show_value(entity.get(field));
    match entity.origin(field) {
        Some(origin) => format!("{field} ({origin}): {value}"),
        None => format!("{field}: {value}"),
    }
}

/// An entity as text: a heading line and one line per field, with origins.
fn entity_text(entity: &Entity) -> String {
    let name = entity.kind.name();
    let title = name[..1].to_uppercase() + &name[1..];
    let mut out = format!("{title} '{}' (version {})", entity.id, entity.version);
    for spec in entity.kind.fields() {
        out.push('\n');
        out.push_str(&field_line(entity, spec.name));
    }
    out
}

/// The name to show for an entity: its source name, or its id.
fn display_name(entity: &Entity) -> &str {
    match entity.text("name_src") {
        name if name.trim().is_empty() => &entity.id,
        name => name,
    }
}

/// The first `max` chars of `text`, and whether it was cut.
fn excerpt(text: &str, max: usize) -> (String, bool) {
    (text.chars().take(max).collect(), text.chars().count() > max)
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

/// `\nText (N chars[, first L shown]):\n<excerpt>[…]`.
fn text_block(total: usize, shown: &str, cut: bool, limit: usize) -> String {
    let first = if cut {
        format!(", first {limit} shown")
    } else {
        String::new()
    };
    format!(
        "\nText ({total} chars{first}):\n{shown}{}",
        if cut { "…" } else { "" }
    )
}

// Resolution of ids and names.

/// The entity of `kind` named by `query`: its id, or (for named kinds) one of its names or
/// aliases, in any case. Errors name the closest ids.
fn resolve<'b>(bible: &'b Bible, kind: Kind, query: &str) -> Result<&'b Entity, ToolError> {
    let (q, named) = (query.trim(), decl(kind).named);
    if q.is_empty() {
        let names = if named { ", name or alias" } else { "" };
        return Err(ToolError::invalid_args(format!(
            "the {kind} must not be empty; give its id{names}"
        )));
    }
    if let Some(e) = bible.get(kind, q) {
        return Ok(e);
    }
    let lower = q.to_lowercase();
    let is = |n: &str| n.to_lowercase() == lower;
    let matches: Vec<&Entity> = bible
        .list(kind)
        .filter(|e| is(&e.id) || (named && names_of(e).iter().any(|n| is(n))))
        .collect();
    match matches[..] {
        [one] => Ok(one),
        [] => Err(not_found(bible, kind, q)),
        _ => {
            let list = join(
                matches
                    .iter()
                    .map(|e| format!("'{}' ({})", e.id, display_name(e))),
            );
            let ids: Vec<&String> = matches.iter().map(|e| &e.id).collect();
            Err(ToolError::invalid_args(format!(
                "'{}' names several {kind}s: {list}; pass the id of the one you mean",
                preview(q, 80)
            ))
            .with_details(json!({ "candidates": ids })))
        }
    }
}

/// `not_found` for a name of `kind`, naming the closest ids (by id, name or alias).
fn not_found(bible: &Bible, kind: Kind, query: &str) -> ToolError {
    let (shown, named) = (preview(query, 80), decl(kind).named);
    if bible.list(kind).next().is_none() {
        let adds = match kind {
            Kind::Character | Kind::Location | Kind::Route => {
                format!("; {kind}_create_entry adds one")
            }
            _ => String::new(),
        };
        return ToolError::not_found(format!(
            "no {kind} '{shown}': the story bible has no {kind}s yet{adds}"
        ));
    }
    // Candidates: ids and names, each mapped back to its id.
    let mut candidates: Vec<(String, String)> = Vec::new();
    for e in bible.list(kind) {
        candidates.push((e.id.clone(), e.id.clone()));
        if named {
            candidates.extend(names_of(e).into_iter().map(|n| (n, e.id.clone())));
        }
    }
    let close = match query.chars().count() <= 200 {
        true => crate::names::closest(query, candidates.iter().map(|(n, _)| n.as_str()), 6),
        false => Vec::new(),
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
    let hint = match ids.is_empty() {
        true => String::new(),
        false => {
            let shown = ids.iter().map(|id| match bible.get(kind, id) {
                Some(e) if named => format!("'{id}' ({})", display_name(e)),
                _ => format!("'{id}'"),
            });
            format!(
                " (did you mean {}?)",
                shown.collect::<Vec<_>>().join(" or ")
            )
        }
    };
    let names = if named { ", name or alias" } else { "" };
    let lister = decl(kind).lister;
    ToolError::not_found(format!(
        "no {kind} with id{names} '{shown}'{hint}; {lister} lists them"
    ))
    .with_details(json!({ "closest": ids }))
}

/// Resolve a list of names to ids (in order, without duplicates). Every unknown name is
/// reported at once.
fn resolve_all(bible: &Bible, kind: Kind, names: &[String]) -> Result<Vec<String>, ToolError> {
    let (mut ids, mut problems): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for name in names.iter().filter(|n| !n.trim().is_empty()) {
        match resolve(bible, kind, name) {
            Ok(e) if !ids.contains(&e.id) => ids.push(e.id.clone()),
            Ok(_) => {}
            Err(error) => problems.push(error.message),
        }
    }
    if problems.is_empty() {
        return Ok(ids);
    }
    let code = match problems.iter().all(|p| p.starts_with("no ")) {
        true => "not_found",
        false => "invalid_args",
    };
    Err(ToolError::new(code, format!(
        "{} Nothing was changed. Use existing {kind}s (or create them first with {kind}_create_entry).",
        problems.join(" ")
    )))
}

/// Check that every id names an entry of `kind` (exactly); errors name the closest.
fn check_ids(bible: &Bible, kind: Kind, ids: &[String]) -> Result<Vec<String>, ToolError> {
    let (mut out, mut problems): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for id in ids.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        match bible.get(kind, id) {
            Some(_) if !out.iter().any(|o| o == id) => out.push(id.to_string()),
            Some(_) => {}
            None => problems.push(not_found(bible, kind, id).message),
        }
    }
    match problems.is_empty() {
        true => Ok(out),
        false => Err(ToolError::not_found(format!(
            "{} Nothing was changed.",
            problems.join(" ")
        ))),
    }
}

/// A text value as given for a field: trimmed; empty clears the field (`null`).
fn text_value(s: &str) -> Value {
    match s.trim() {
        "" => Value::Null,
        t => json!(t),
    }
}

/// The value of `field` of `kind` from the argument `arg`, as the kind's declaration says the
/// field holds it.
fn value_of(bible: &Bible, kind: Kind, field: &str, a: &Args, arg: &str) -> Out {
    let mut fields = decl(kind).fields.iter();
    Ok(
        match fields
            .find(|(f, _)| *f == field)
            .map_or(Val::Text, |(_, v)| *v)
        {
            Val::Text => text_value(a.text(arg)),
            Val::List => json!(a.list(arg)),
            Val::Ref(k) => json!(resolve_all(bible, k, &a.list(arg))?),
            Val::Ids(k) => json!(check_ids(bible, k, &a.list(arg))?),
        },
    )
}

// The generic tools.

/// `{kind}_update_{field}`: set `field` of the entry the first argument names from the second.
pub fn update_field(a: &Args, cx: &mut EditContext<'_>, field: &str) -> Out {
    let kind = a.tool.kind;
    let arg = |i: usize| a.tool.args.get(i).map_or("", |arg| arg.name);
    let id = resolve(cx.bible(), kind, a.text(arg(0)))?.id.clone();
    let value = value_of(cx.bible(), kind, field, a, arg(1))?;
    let previous = cx.bible().require(kind, &id)?.get(field).clone();
    // Normalized first, so that an approval request shows the value that would be stored.
    let value = crate::bible::check_value(kind, field, value)?;
    let entry = cx.bible_update(kind, &id, vec![(field.to_string(), value)])?;
    let entity = cx.bible().require(kind, &id)?;
    let now = entity.get(field).clone();
    let changed = now != previous;
    let text = match changed {
        true => format!(
            "Updated {field} of {kind} '{id}'.\nBefore: {}\nNow: {}",
            show_value(&previous),
            field_line(entity, field)
        ),
        false => format!(
            "{field} of {kind} '{id}' already had that value; nothing changed.\n{}",
            field_line(entity, field)
        ),
    };
    Ok(json!({
        "text": text, "id": id, "field": field, "previous": previous, "value": now,
        "changed": changed, "entry": entry,
    }))
}

/// Where entities refer to `(kind, id)`: scenes and routes that list it.
fn references(bible: &Bible, kind: Kind, id: &str) -> Vec<(Kind, String, &'static str)> {
    let fields: &[(Kind, &'static str)] = match kind {
        Kind::Character => &[
            (Kind::Scene, "primary_characters"),
            (Kind::Route, "primary_characters"),
        ],
        Kind::Location => &[(Kind::Scene, "locations")],
        Kind::Scene => &[(Kind::Route, "scene_ids")],
        _ => &[],
    };
    let mut out = Vec::new();
    for (k, field) in fields {
        let listing = bible.list(*k).filter(|e| e.list(field).contains(&id));
        out.extend(listing.map(|e| (*k, e.id.clone(), *field)));
    }
    out
}

/// The ids of the scenes and of the routes that list `(kind, id)`.
fn listed_in(bible: &Bible, kind: Kind, id: &str) -> (Vec<String>, Vec<String>) {
    let refs = references(bible, kind, id);
    let of = |k: Kind| {
        refs.iter()
            .filter(|r| r.0 == k)
            .map(|r| r.1.clone())
            .collect()
    };
    (of(Kind::Scene), of(Kind::Route))
}

/// `\nListed in scenes: ...` and `\nListed in routes: ...`, for the lists that are not empty.
fn listed_text(text: &mut String, scenes: &[String], routes: &[String]) {
    for (what, list) in [("scenes", scenes), ("routes", routes)] {
        if !list.is_empty() {
            text.push_str(&format!("\nListed in {what}: {}", list.join(", ")));
        }
    }
}

/// `{kind}_delete_entry`: delete an entity and describe what was deleted.
pub fn delete_one(cx: &mut EditContext<'_>, kind: Kind, query: &str) -> Out {
    let id = resolve(cx.bible(), kind, query)?.id.clone();
    let deleted = cx.bible_delete(kind, &id)?;
    let refs = references(cx.bible(), kind, &id);
    let mut text = format!("Deleted {kind} '{id}'. It was:\n{}", entity_text(&deleted));
    if !refs.is_empty() {
        let list = join(refs.iter().map(|(k, i, f)| format!("{k} '{i}' ({f})")));
        text.push_str(&format!(
            "\nWarning: still listed by {list}; update those if it should go from them too."
        ));
    }
    let refs: Vec<Value> = refs
        .iter()
        .map(|(k, i, f)| json!({"kind": k, "id": i, "field": f}))
        .collect();
    Ok(json!({ "text": text, "deleted": deleted.flat(), "referencedBy": refs }))
}

/// A one-line summary of an entity for lists.
fn brief(entity: &Entity) -> String {
    let (id, mut s) = (
        &entity.id,
        format!("{} — {}", entity.id, display_name(entity)),
    );
    let (aliases, pronouns, description) = (
        entity.list("aliases"),
        entity.text("pronouns"),
        entity.text("description"),
    );
    match entity.kind {
        Kind::Character => {
            if !aliases.is_empty() {
                s.push_str(&format!(" (aliases: {})", aliases.join(", ")));
            }
            if !pronouns.is_empty() {
                s.push_str(&format!(" [{pronouns}]"));
            }
            s
        }
        Kind::Location if !description.is_empty() => {
            s + &format!(": {}", preview(description, 100))
        }
        Kind::Location => s,
        Kind::Route => match entity.text("synopsis") {
            "" => format!("{id}: (no synopsis)"),
            synopsis => format!("{id}: {}", preview(synopsis, 120)),
        },
        _ => id.clone(),
    }
}

/// `{kind}_read_entry`: one entity of `kind` by id or name, or a list of them all.
pub fn read_entry(cx: &EditContext<'_>, kind: Kind, query: Option<&str>) -> Out {
    let bible = cx.bible();
    let Some(q) = query.filter(|q| !q.trim().is_empty()) else {
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
            t + &format!(
                "\nPass one's id to {} for the whole entry.",
                decl(kind).lister
            )
        };
        let entries: Vec<Value> = all.iter().map(|e| e.flat()).collect();
        return Ok(json!({ "text": text, "count": all.len(), "entries": entries }));
    };
    let entity = resolve(bible, kind, q)?;
    let mut text = entity_text(entity);
    let mut out = json!({ "id": entity.id, "entry": entity.flat() });
    if matches!(kind, Kind::Character | Kind::Location) {
        let (scenes, routes) = listed_in(bible, kind, &entity.id);
        listed_text(&mut text, &scenes, &routes);
        (out["scenes"], out["routes"]) = (json!(scenes), json!(routes));
    } else if kind == Kind::Route {
        let names = listed(bible, Kind::Character, &entity.list("primary_characters"));
        if !names.is_empty() {
            text.push_str(&format!("\nCharacters: {}", names.join(", ")));
        }
        let scenes = entity.list("scene_ids");
        let missing: Vec<&str> = scenes
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
    out["text"] = json!(text);
    Ok(out)
}

/// Warnings for a new character or location whose names another entity of the kind has.
fn name_clashes(bible: &Bible, kind: Kind, names: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let lower = name.to_lowercase();
        for e in bible
            .list(kind)
            .filter(|e| names_of(e).iter().any(|n| n.to_lowercase() == lower))
        {
            out.push(format!(
                "'{name}' is already a name of {kind} '{}' ({})",
                e.id,
                display_name(e)
            ));
        }
    }
    out
}

/// `{kind}_create_entry`: the first required argument is the entry's title (a name, or a
/// route's synopsis, which must not be empty); the others but `id` are fields, taken as the
/// kind's declaration says. The id is the one given, or made from the title (a route's from
/// its first four words). Named kinds warn about names another entry has.
pub fn create_entry(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let (kind, d) = (a.tool.kind, decl(a.tool.kind));
    let title_arg = a
        .tool
        .args
        .iter()
        .find(|arg| arg.required)
        .map_or("", |arg| arg.name);
    let title = a.text(title_arg).trim();
    if title.is_empty() {
        let hint = d.title_hint;
        return Err(ToolError::invalid_args(format!(
            "'{title_arg}' must not be empty; {hint}"
        )));
    }
    let mut fields = vec![(title_arg.to_string(), json!(title))];
    for arg in a
        .tool
        .args
        .iter()
        .filter(|arg| arg.name != "id" && arg.name != title_arg)
    {
        let value = value_of(cx.bible(), kind, arg.name, a, arg.name)?;
        let value = if value == json!([]) {
            Value::Null
        } else {
            value
        };
        fields.push((arg.name.to_string(), value));
    }
    let (mut names, aliases) = (vec![title], a.list("aliases"));
    names.extend(
        a.opt("name_tgt")
            .into_iter()
            .chain(aliases.iter().map(String::as_str)),
    );
    let (warnings, hint) = match d.named {
        true => (name_clashes(cx.bible(), kind, &names), title.to_string()),
        false => (
            Vec::new(),
            title
                .split_whitespace()
                .take(4)
                .collect::<Vec<_>>()
                .join(" "),
        ),
    };
    let id = match a.opt("id").map(str::trim).filter(|s| !s.is_empty()) {
        Some(id) => id.to_string(),
        None => cx.bible().fresh_id(kind, &hint),
    };
    let fields = fields.into_iter().filter(|(_, v)| !v.is_null()).collect();
    let entry = cx.bible_create(kind, &id, fields)?;
    let mut text = format!(
        "Created {kind} '{id}'.\n{}",
        entity_text(cx.bible().require(kind, &id)?)
    );
    for w in &warnings {
        text.push_str(&format!("\nWarning: {w}"));
    }
    Ok(json!({ "text": text, "id": id, "entry": entry, "warnings": warnings }))
}

// Scenes: placement in reading order.

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
        let Some(i) = self.chapter else {
            let chapter = preview(self.scene.text("chapter"), 60);
            return format!("chapter '{chapter}' (not in the project)");
        };
        let c = &project.chapters[i];
        let (n, start, end) = (i + 1, self.start, self.end);
        format!("chapter {n} “{}” ({}), chars {start}–{end}", c.title, c.id)
    }

    /// The scene's text ("" when its chapter is not in the project).
    fn text(&self, project: &Project) -> String {
        let chapter = self.chapter.map(|i| &project.chapters[i]);
        chapter
            .map(|c| c.slice(self.start, self.end))
            .unwrap_or_default()
    }

    fn number(&self) -> Option<usize> {
        self.chapter.map(|i| i + 1)
    }
}

fn place<'a>(project: &Project, scene: &'a Entity) -> Placed<'a> {
    let span = scene.get("span");
    let span_of = |key: &str| {
        span.get(key)
            .and_then(Value::as_u64)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
    };
    // The chapter a scene names (by id, else number or title).
    let name = scene.text("chapter").trim();
    let chapter = (!name.is_empty()).then(|| {
        project
            .chapter(name)
            .or_else(|| project.find_chapter(name).ok())
    });
    match chapter
        .flatten()
        .and_then(|c| Some((project.chapter_index(&c.id)?, c)))
    {
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

/// Entities of `kind` by id, as `id (Name)`.
fn listed<S: AsRef<str>>(bible: &Bible, kind: Kind, ids: &[S]) -> Vec<String> {
    let show = |id: &str| match bible.get(kind, id) {
        Some(e) => format!("{id} ({})", display_name(e)),
        None => format!("{id} (not in the bible)"),
    };
    ids.iter().map(|id| show(id.as_ref())).collect()
}

/// A scene's metadata as text, with its place in the manuscript.
fn scene_text(bible: &Bible, project: &Project, placed: &Placed<'_>) -> String {
    let scene = placed.scene;
    let mut text = entity_text(scene) + &format!("\nWhere: {}", placed.where_text(project));
    for (label, kind, field) in [
        ("Characters", Kind::Character, "primary_characters"),
        ("Locations", Kind::Location, "locations"),
    ] {
        let names = listed(bible, kind, &scene.list(field));
        if !names.is_empty() {
            text.push_str(&format!("\n{label}: {}", names.join(", ")));
        }
    }
    text
}

fn find_scene<'a>(bible: &'a Bible, project: &Project, id: &str) -> Result<Placed<'a>, ToolError> {
    Ok(place(project, resolve(bible, Kind::Scene, id)?))
}

/// A placed scene's facts: id, chapter number, span and entry.
fn placed_json(p: &Placed<'_>) -> Value {
    json!({"id": p.scene.id, "chapterNumber": p.number(), "start": p.start, "end": p.end, "entry": p.scene.flat()})
}

// Scene tools.

/// `scene_read_metadata`.
pub fn scene_metadata(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let (bible, project) = (cx.bible(), cx.project());
    let placed = find_scene(bible, project, a.text("scene"))?;
    let mut out = placed_json(&placed);
    out["text"] = json!(scene_text(bible, project, &placed));
    Ok(out)
}

/// `scene_read_overview`.
pub fn scene_overview(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let limit = excerpt_limit(a.num("max_chars"))?;
    let (bible, project) = (cx.bible(), cx.project());
    let Some(id) = a.opt("scene").filter(|s| !s.trim().is_empty()) else {
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
            let summary = match p.scene.text("summary") {
                s if s.trim().is_empty() => "(no summary)".to_string(),
                s => preview(s, 200),
            };
            text.push_str(&format!(
                "\n{}. {} — {}: {summary}",
                n + 1,
                p.scene.id,
                p.where_text(project)
            ));
            list.push(json!({
                "id": p.scene.id, "chapter": p.scene.text("chapter"), "chapterNumber": p.number(),
                "start": p.start, "end": p.end, "summary": p.scene.get("summary"),
            }));
        }
        return Ok(json!({ "text": text, "count": list.len(), "scenes": list }));
    };
    let placed = find_scene(bible, project, id)?;
    let body = placed.text(project);
    let mut text = scene_text(bible, project, &placed);
    let chars = mentions::mentioned_ids(bible, &body, Kind::Character);
    let locs = mentions::mentioned_ids(bible, &body, Kind::Location);
    let listed_chars = placed.scene.list("primary_characters");
    let unlisted: Vec<&String> = chars
        .iter()
        .filter(|c| !listed_chars.contains(&c.as_str()))
        .collect();
    let names = |kind: Kind, ids: &[String]| match ids.is_empty() {
        true => "none".to_string(),
        false => listed(bible, kind, ids).join(", "),
    };
    let (c, l) = (names(Kind::Character, &chars), names(Kind::Location, &locs));
    text.push_str(&format!(
        "\nMentioned in its text: characters: {c}; locations: {l}"
    ));
    let (shown, cut) = excerpt(&body, limit);
    if placed.chapter.is_some() {
        text.push_str(&text_block(body.chars().count(), &shown, cut, limit));
    }
    let mut out = placed_json(&placed);
    for (key, value) in [
        ("text", json!(text)),
        ("mentionedCharacters", json!(chars)),
        ("mentionedLocations", json!(locs)),
        ("mentionedButNotListed", json!(unlisted)),
        ("excerpt", json!(shown)),
        ("truncated", json!(cut)),
    ] {
        out[key] = value;
    }
    Ok(out)
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
        let names = self.bible.get(kind, id).map(names_of).unwrap_or_default();
        names
            .into_iter()
            .filter(|n| self.seen.contains(&(kind, id.to_string(), n.clone())))
            .collect()
    }

    /// How the reader knows an entity: its longest seen name, or the placeholder.
    fn display(&self, kind: Kind, id: &str) -> String {
        let first = self.seen_names(kind, id).into_iter().next();
        first.unwrap_or_else(|| NOT_YET_INTRODUCED.to_string())
    }

    /// `text` with every mention of an unseen name replaced by the placeholder.
    fn redact(&self, text: &str) -> String {
        let found = mentions::detect(self.bible, text);
        let unseen =
            |m: &&mentions::Mention| !self.seen.contains(&(m.kind, m.id.clone(), m.name.clone()));
        let mut next = found.iter().filter(unseen).peekable();
        if next.peek().is_none() {
            return text.to_string();
        }
        let (mut out, mut skip_to) = (String::with_capacity(text.len()), 0);
        for (i, c) in text.chars().enumerate() {
            if let Some(m) = next.next_if(|m| m.start == i) {
                out.push_str(NOT_YET_INTRODUCED);
                skip_to = m.end;
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

    /// The names the reader knows of every entity of `kind` they have met.
    fn known(&self, kind: Kind) -> Vec<(&'a Entity, Vec<String>)> {
        let known = self
            .bible
            .list(kind)
            .map(|e| (e, self.seen_names(kind, &e.id)));
        known.filter(|(_, names)| !names.is_empty()).collect()
    }
}

/// `scene_read_redacted`.
pub fn scene_redacted(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let limit = excerpt_limit(a.num("max_chars"))?;
    let (bible, project) = (cx.bible(), cx.project());
    let placed = find_scene(bible, project, a.text("scene"))?;
    let scene = placed.scene;
    let Some(chapter) = placed.chapter else {
        return Err(ToolError::not_found(format!(
            "scene '{}' is in chapter '{}', which is not in the project, so it has no place in reading order; the writer must fix its chapter",
            scene.id,
            preview(scene.text("chapter"), 60)
        )));
    };
    let reader = Reader::new(bible, project, chapter, placed.end);
    let summary = reader.redact(scene.text("summary"));
    let tags = reader.redact_list(&scene.list("tags"));
    let show = |kind: Kind, field: &str| -> Vec<String> {
        scene
            .list(field)
            .iter()
            .map(|id| reader.display(kind, id))
            .collect()
    };
    let (characters, locations) = (
        show(Kind::Character, "primary_characters"),
        show(Kind::Location, "locations"),
    );
    let body = reader.redact(&placed.text(project));
    let (shown, cut) = excerpt(&body, limit);

    let all = scenes_in_order(bible, project);
    let others = all.iter().filter(|p| p.scene.id != scene.id);
    let (earlier, later): (Vec<&Placed>, Vec<&Placed>) =
        others.partition(|p| p.chapter.is_some() && p.end_key() <= placed.end_key());
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
        project.chapters[chapter].title,
        placed.start,
        placed.end,
        or_none(&summary),
        join_or_none(&tags),
        join_or_none(&characters),
        join_or_none(&locations),
    );
    text.push_str(&text_block(body.chars().count(), &shown, cut, limit));
    text.push_str(if earlier.is_empty() {
        "\nEarlier scenes: none."
    } else {
        "\nEarlier scenes:"
    });
    let mut earlier_json = Vec::new();
    for p in &earlier {
        let s = reader.redact(p.scene.text("summary"));
        let t = reader.redact_list(&p.scene.list("tags"));
        let tags = if t.is_empty() {
            String::new()
        } else {
            format!(" [tags: {}]", t.join(", "))
        };
        let (id, n) = (&p.scene.id, p.number().unwrap_or(0));
        text.push_str(&format!("\n- {id} (chapter {n}): {}{tags}", or_none(&s)));
        earlier_json.push(json!({"id": id, "chapterNumber": p.number(), "summary": s, "tags": t}));
    }
    text.push_str(&format!("\nLater scenes hidden: {}.", later.len()));

    let mut known_characters = Vec::new();
    let mut met = Vec::new();
    for (c, names) in reader.known(Kind::Character) {
        let pronouns = c.text("pronouns").trim();
        met.push(match pronouns {
            "" => names.join(" / "),
            p => format!("{} [{p}]", names.join(" / ")),
        });
        let pronouns = if pronouns.is_empty() {
            Value::Null
        } else {
            json!(pronouns)
        };
        known_characters.push(json!({"name": names[0], "names": names, "pronouns": pronouns}));
    }
    let known_locations = reader.known(Kind::Location);
    let places: Vec<String> = known_locations
        .iter()
        .map(|(_, names)| names.join(" / "))
        .collect();
    text.push_str(&format!(
        "\nCharacters the reader has met: {}",
        join_or_none(&met)
    ));
    text.push_str(&format!(
        "\nLocations the reader knows: {}",
        join_or_none(&places)
    ));
    let known_locations: Vec<Value> = known_locations
        .iter()
        .map(|(_, names)| json!({"name": names[0], "names": names}))
        .collect();
    Ok(json!({
        "text": text,
        "scene": {
            "id": scene.id, "chapterNumber": chapter + 1, "start": placed.start, "end": placed.end,
            "summary": summary, "tags": tags, "primary_characters": characters, "locations": locations,
        },
        "excerpt": shown,
        "truncated": cut,
        "earlierScenes": earlier_json,
        "laterScenesHidden": later.len(),
        "characters": known_characters,
        "locations": known_locations,
    }))
}

/// `scene_update_summary`: written first (a write that fails, for approval or a conflict, does
/// not use up the guard); if the guard was already taken, the error rolls the write back.
pub fn update_summary(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let result = update_field(a, cx, "summary")?;
    let id = result["id"].as_str().unwrap_or("");
    if !cx.take_guard(&format!("scene_update_summary:{id}"))
        && !cx.may_overwrite(a.flag("overwrite"))
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

/// `scene_update_primary_characters`: also says which of them the scene's text mentions.
pub fn update_scene_characters(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let mut result = update_field(a, cx, "primary_characters")?;
    let ids = resolve_all(cx.bible(), Kind::Character, &a.list("characters"))?;
    let (bible, project) = (cx.bible(), cx.project());
    let placed = find_scene(bible, project, result["id"].as_str().unwrap_or(""))?;
    let present = mentions::mentioned_ids(bible, &placed.text(project), Kind::Character);
    let (mentioned, missing): (Vec<&String>, Vec<&String>) =
        ids.iter().partition(|c| present.contains(c));
    let mut text = result["text"].as_str().unwrap_or("").to_string();
    let shown = if mentioned.is_empty() {
        "none".to_string()
    } else {
        join(&mentioned)
    };
    text.push_str(&format!("\nMentioned in the scene's text: {shown}"));
    if !missing.is_empty() {
        let warning = format!(
            "Warning: not mentioned in the scene's text (by any name or alias): {}. Check that they belong in this scene, or add the name they go by as an alias.",
            join(&missing)
        );
        text.push('\n');
        text.push_str(&warning);
        result["warning"] = json!(warning);
    }
    (result["text"], result["mentioned"], result["notMentioned"]) =
        (json!(text), json!(mentioned), json!(missing));
    Ok(result)
}

// Knowledge.

/// Words a lore query ignores (unless it has no other).
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "has",
    "have", "how", "in", "is", "it", "its", "of", "on", "or", "the", "to", "was", "what", "when",
    "where", "which", "who", "whom", "why", "with",
];

/// The kinds `query_lore` searches, in the order ties are ranked, with the fields it searches
/// in each (and whether each is a name).
const LORE: [(Kind, &[(&str, bool)]); 4] = [
    (
        Kind::Character,
        &[
            ("name_src", true),
            ("name_tgt", true),
            ("aliases", true),
            ("pronouns", false),
            ("notes", false),
        ],
    ),
    (
        Kind::Location,
        &[
            ("name_src", true),
            ("name_tgt", true),
            ("description", false),
        ],
    ),
    (
        Kind::Route,
        &[("synopsis", false), ("primary_characters", false)],
    ),
    (
        Kind::Scene,
        &[
            ("summary", false),
            ("tags", false),
            ("primary_characters", false),
            ("locations", false),
        ],
    ),
];

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

/// `query_lore`.
pub fn query_lore(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let limit = match a.num("limit") {
        None => 10,
        Some(n) if (1..=50).contains(&n) => n as usize,
        Some(n) => {
            return Err(ToolError::invalid_args(format!(
                "'limit' must be 1 to 50, got {n}"
            )))
        }
    };
    let query = a.text("query");
    let mut terms: Vec<String> = Vec::new();
    for w in words(query) {
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
    let phrase = query.trim().to_lowercase();
    // (rank, entity, matched terms, score, best field)
    let mut hits: Vec<(usize, &Entity, Vec<String>, u64, &str)> = Vec::new();
    for (rank, (kind, fields)) in LORE.iter().enumerate() {
        for entity in cx.bible().list(*kind) {
            let (mut matched, mut score, mut best) = (Vec::<String>::new(), 0u64, (0u64, ""));
            let id_words = words(&entity.id);
            for term in &terms {
                if id_words.iter().any(|w| term_matches(term, w)) && !matched.contains(term) {
                    matched.push(term.clone());
                    score += 2;
                }
            }
            for (field, is_name) in fields.iter() {
                let text = match entity.get(field) {
                    Value::String(s) => s.clone(),
                    Value::Array(items) => join(items.iter().filter_map(Value::as_str)),
                    _ => String::new(),
                };
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
                hits.push((rank, entity, matched, score, best.1));
            }
        }
    }
    hits.sort_by(|a, b| {
        let key = |h: &(usize, &Entity, Vec<String>, u64, &str)| (h.2.len(), h.3);
        key(b)
            .cmp(&key(a))
            .then(a.0.cmp(&b.0))
            .then(a.1.id.cmp(&b.1.id))
    });
    let total = hits.len();
    hits.truncate(limit);
    let shown = preview(query.trim(), 80);
    if hits.is_empty() {
        return Ok(json!({
            "text": format!("Nothing in the story bible matches \"{shown}\". Try other or fewer words, or a name."),
            "count": 0, "total": 0, "hits": [], "terms": terms,
        }));
    }
    let mut text = format!(
        "{} of {total} hits for \"{shown}\" (terms: {}):",
        hits.len(),
        terms.join(", ")
    );
    let mut list = Vec::new();
    for (n, (_, e, matched, score, field)) in hits.iter().enumerate() {
        let label = match e.kind {
            Kind::Character | Kind::Location => {
                format!("{} '{}' ({})", e.kind, e.id, display_name(e))
            }
            _ => format!("{} '{}'", e.kind, e.id),
        };
        let detail = match field.is_empty() {
            true => String::new(),
            false => format!(" — {}", preview(&field_line(e, field), 300)),
        };
        text.push_str(&format!(
            "\n{}. {label}: matched {}{detail}",
            n + 1,
            matched.join(", ")
        ));
        let field = if field.is_empty() {
            Value::Null
        } else {
            json!(field)
        };
        list.push(json!({
            "kind": e.kind, "id": e.id, "matched": matched, "score": score, "field": field, "entry": e.flat(),
        }));
    }
    Ok(json!({ "text": text, "count": list.len(), "total": total, "hits": list, "terms": terms }))
}

/// `get_character_info`.
pub fn character_info(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let (bible, project) = (cx.bible(), cx.project());
    let entity = resolve(bible, Kind::Character, a.text("character"))?;
    let id = entity.id.as_str();
    let mut text = entity_text(entity);
    let (scenes, routes) = listed_in(bible, Kind::Character, id);
    listed_text(&mut text, &scenes, &routes);
    let mut appearances = Vec::new();
    let mut total = 0usize;
    for (i, chapter) in project.chapters.iter().enumerate() {
        let found = mentions::of_entity(bible, &chapter.text().to_string(), Kind::Character, id);
        let Some(first) = found.first() else {
            continue;
        };
        total += found.len();
        appearances.push((i + 1, chapter, found.len(), first.clone()));
    }
    let names = names_of(entity);
    if appearances.is_empty() {
        let names: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
        text.push_str(&format!(
            "\nAppearances: none; no chapter mentions {} as a whole word.",
            names.join(" or ")
        ));
    } else {
        let (n, of) = (appearances.len(), project.chapters.len());
        text.push_str(&format!(
            "\nAppearances ({total} mentions in {n} of {of} chapters):"
        ));
    }
    let mut list = Vec::new();
    for (number, chapter, count, first) in appearances {
        let snippet = snippet(chapter, first.start, first.end, 60);
        let s = if count == 1 { "" } else { "s" };
        text.push_str(&format!(
            "\n- chapter {number} “{}” ({}): {count} mention{s}; first at char {} as \"{}\": {snippet}",
            chapter.title, chapter.id, first.start, first.name
        ));
        list.push(json!({
            "chapter": chapter.id, "chapterNumber": number, "chapterTitle": chapter.title, "mentions": count,
            "firstMention": {"start": first.start, "end": first.end, "name": first.name, "snippet": snippet},
        }));
    }
    Ok(json!({
        "text": text, "id": id, "entry": entity.flat(), "names": names, "scenes": scenes,
        "routes": routes, "totalMentions": total, "appearances": list,
    }))
}

/// A one-line snippet of `text` around the char range `start..end`.
fn snippet(chapter: &Chapter, start: usize, end: usize, around: usize) -> String {
    let (from, to) = (start.saturating_sub(around), end + around);
    let s = chapter.slice(from, to).replace(['\n', '\r'], " ");
    let before = if from > 0 { "…" } else { "" };
    let after = if to < chapter.len_chars() { "…" } else { "" };
    format!("{before}{s}{after}")
}
