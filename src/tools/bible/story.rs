//! The story: scenes, characters, locations and routes, and the knowledge tools `query_lore`
//! and `get_character_info`: the generic CRUD tools, and the handlers of the others.
//!
//! Characters and locations are named by id, name or alias (any case); an unknown name gets
//! `not_found` naming the closest ids. Text values are trimmed and an empty one clears the
//! field; reference lists name existing entries and are stored as ids. `scene_update_summary`
//! writes a scene's summary once per agent run (the run's single-use guard
//! `scene_update_summary:<id>`, taken only by a write that succeeded): a second write in the
//! same run fails with `already_written` unless `overwrite` is true. Reads return `text` (each
//! field with its origin, as `notes (human): ...`) and data (`entry`: the entity's flat view).
//!
//! Scenes are listed in reading order ([`scenes`]). `scene_read_redacted` shows a scene as a
//! first-time reader knows it at its end, having read the manuscript up to there (a
//! [`Reader`]): every mention of an unseen name in what is shown (the scene's text, summary
//! and tags, and those of the earlier scenes) reads [`NOT_YET_INTRODUCED`]; characters and
//! locations show as their longest seen name (never by id), with pronouns for characters.
//! Character notes, location descriptions, routes and ids are never shown; scenes that end
//! later are only counted. `query_lore` shows what [`lore::search`] finds, best first.

use serde_json::json;
use serde_json::Value;

use super::{decl, join, list_or, preview, show, strings, Call, Cx, Out, Res, Val, KINDS};
use crate::bible::mentions::{self, names_of};
use crate::bible::scenes::{in_reading_order, Placed, Reader, NOT_YET_INTRODUCED};
use crate::bible::{lore, Bible, Entity, Kind, Kind::*};
use crate::project::{Chapter, Project};
use crate::tools::ToolError;

/// Default number of characters of a scene's text shown by the scene reads.
pub const DEFAULT_EXCERPT_CHARS: usize = 2_000;

/// Most characters of a scene's text a scene read shows.
pub const MAX_EXCERPT_CHARS: usize = 50_000;

const NAMES: &str = ", name or alias";

/// `field (origin): value`, or `field: value` for a field never written.
fn field_line(e: &Entity, field: &str) -> String {
    let value = show(e.get(field), '–');
    match e.origin(field) {
        Some(origin) => format!("{field} ({origin}): {value}"),
        None => format!("{field}: {value}"),
    }
}

/// An entity as text: a heading line and one line per field, with origins.
fn entity_text(e: &Entity) -> String {
    let (kind, id, version) = (e.kind.name(), &e.id, e.version);
    let title = kind[..1].to_ascii_uppercase() + &kind[1..];
    let mut out = format!("{title} '{id}' (version {version})");
    for spec in e.kind.fields() {
        w!(out, "\n{}", field_line(e, spec.name));
    }
    out
}

/// The name to show for an entity: its source name, or its id.
fn display_name(e: &Entity) -> &str {
    match e.text("name_src") {
        name if name.trim().is_empty() => &e.id,
        name => name,
    }
}

/// `'id' (Name)`.
fn labeled(e: &Entity) -> String {
    format!("'{}' ({})", e.id, display_name(e))
}

/// The scene reads' `max_chars` (its declaration bounds it by [`MAX_EXCERPT_CHARS`]).
fn excerpt_limit(a: &Call) -> usize {
    a.num("max_chars")
        .map_or(DEFAULT_EXCERPT_CHARS, |n| n as usize)
}

/// The first `limit` chars of a scene's text, whether it was cut, and both as
/// `\nText (N chars[, first L shown]):\n<excerpt>[…]`.
fn text_block(body: &str, limit: usize) -> (String, String, bool) {
    let shown: String = body.chars().take(limit).collect();
    let total = body.chars().count();
    let cut = total > limit;
    let first = cut.then(|| format!(", first {limit} shown"));
    let (first, more) = (first.unwrap_or_default(), if cut { "…" } else { "" });
    let block = format!("\nText ({total} chars{first}):\n{shown}{more}");
    (block, shown, cut)
}

// Resolution of ids and names.

fn or_names(kind: Kind) -> &'static str {
    if decl(kind).named {
        NAMES
    } else {
        ""
    }
}

/// The entity of `kind` named by `query`: its id, or (for named kinds) one of its names or
/// aliases, in any case. Errors name the closest ids.
fn resolve<'b>(bible: &'b Bible, kind: Kind, query: &str) -> Res<&'b Entity> {
    let q = query.trim();
    if q.is_empty() {
        let message = format!(
            "the {kind} must not be empty; give its id{}",
            or_names(kind)
        );
        return Err(ToolError::invalid_args(message));
    }
    if let Some(e) = bible.get(kind, q) {
        return Ok(e);
    }
    let matches = mentions::named(bible, kind, q, decl(kind).named);
    match matches[..] {
        [one] => Ok(one),
        [] => Err(not_found(bible, kind, q)),
        _ => {
            let q = preview(q, 80);
            let list = join(matches.iter().map(|e| labeled(e)), ", ");
            let message =
                format!("'{q}' names several {kind}s: {list}; pass the id of the one you mean");
            let ids: Vec<&String> = matches.iter().map(|e| &e.id).collect();
            Err(ToolError::invalid_args(message).with_details(json!({ "candidates": ids })))
        }
    }
}

/// `not_found` for a name of `kind`, naming the closest ids (by id, name or alias).
fn not_found(bible: &Bible, kind: Kind, query: &str) -> ToolError {
    let (shown, named) = (preview(query, 80), decl(kind).named);
    if bible.list(kind).next().is_none() {
        let adds = matches!(kind, Character | Location | Route);
        let adds = adds.then(|| format!("; {kind}_create_entry adds one"));
        let adds = adds.unwrap_or_default();
        let message = format!("no {kind} '{shown}': the story bible has no {kind}s yet{adds}");
        return ToolError::not_found(message);
    }
    let ids = mentions::closest_ids(bible, kind, query, named);
    let mut hints = Vec::new();
    for id in &ids {
        hints.push(match bible.get(kind, id) {
            Some(e) if named => labeled(e),
            _ => format!("'{id}'"),
        });
    }
    let hint = format!(" (did you mean {}?)", hints.join(" or "));
    let hint = if ids.is_empty() { "" } else { &hint };
    let (names, lister) = (or_names(kind), decl(kind).lister);
    let message = format!("no {kind} with id{names} '{shown}'{hint}; {lister} lists them");
    ToolError::not_found(message).with_details(json!({ "closest": ids }))
}

/// Resolve names to ids (in order, without duplicates), every unknown one reported at once;
/// with `exact`, only exact ids count.
fn resolve_all(bible: &Bible, kind: Kind, names: &[String], exact: bool) -> Out {
    let (mut ids, mut problems): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for name in names.iter().map(|n| if exact { n.trim() } else { n }) {
        let found = match bible.get(kind, name) {
            _ if name.trim().is_empty() => continue,
            Some(e) if exact => Ok(e),
            None if exact => Err(not_found(bible, kind, name)),
            _ => resolve(bible, kind, name),
        };
        match found {
            Ok(e) if !ids.contains(&e.id) => ids.push(e.id.clone()),
            Ok(_) => {}
            Err(error) => problems.push(error.message),
        }
    }
    let missing = problems.iter().all(|p| p.starts_with("no "));
    let problems = problems.join(" ");
    if problems.is_empty() {
        return Ok(json!(ids));
    } else if exact {
        return Err(ToolError::not_found(format!(
            "{problems} Nothing was changed."
        )));
    }
    Err(ToolError::new(if missing { "not_found" } else { "invalid_args" }, format!(
        "{problems} Nothing was changed. Use existing {kind}s (or create them first with {kind}_create_entry)."
    )))
}

/// The value of `field` of `kind` from the argument `arg`, as the kind's declaration says the
/// field holds it (text: trimmed, and `null` when empty).
fn value_of(bible: &Bible, kind: Kind, field: &str, a: &Call, arg: &str) -> Out {
    let val = decl(kind).fields.iter().find(|(f, _)| *f == field);
    match val.map_or(Val::Text, |(_, v)| *v) {
        Val::Text if a.text(arg).trim().is_empty() => Ok(Value::Null),
        Val::Text => Ok(json!(a.text(arg).trim())),
        Val::List => Ok(json!(a.list(arg))),
        Val::Ref(k) => resolve_all(bible, k, &a.list(arg), false),
        Val::Ids(k) => resolve_all(bible, k, &a.list(arg), true),
    }
}

// The generic tools.

/// `{kind}_update_{field}`: set `field` of the entry the first argument names from the second.
pub(super) fn update_field(a: &Call, cx: &mut Cx, field: &str) -> Out {
    let kind = a.tool.kind;
    let id = resolve(cx.bible(), kind, a.text(a.tool.arg(0)))?.id.clone();
    let value = value_of(cx.bible(), kind, field, a, a.tool.arg(1))?;
    let previous = cx.bible().require(kind, &id)?.get(field).clone();
    // Normalized first, so that an approval request shows the value that would be stored.
    let value = crate::bible::check_value(kind, field, value)?;
    let entry = cx.bible_update(kind, &id, vec![(field.to_string(), value)])?;
    let entity = cx.bible().require(kind, &id)?;
    let (now, line) = (entity.get(field).clone(), field_line(entity, field));
    let (changed, before) = (now != previous, show(&previous, '–'));
    let text = match changed {
        true => format!("Updated {field} of {kind} '{id}'.\nBefore: {before}\nNow: {line}"),
        false => {
            format!("{field} of {kind} '{id}' already had that value; nothing changed.\n{line}")
        }
    };
    Ok(json!({
        "text": text, "id": id, "field": field, "previous": previous, "value": now,
        "changed": changed, "entry": entry,
    }))
}

/// Where entities refer to `(kind, id)`: the entries whose declared references to `kind`
/// ([`Val::Ref`], [`Val::Ids`]) list it, with the field.
fn references(bible: &Bible, kind: Kind, id: &str) -> Vec<(Kind, String, &'static str)> {
    let mut out = Vec::new();
    for (d, (field, val)) in KINDS
        .iter()
        .flat_map(|d| d.fields.iter().map(move |f| (d, f)))
    {
        if matches!(val, Val::Ref(k) | Val::Ids(k) if *k == kind) {
            let listing = bible.list(d.kind).filter(|e| e.list(field).contains(&id));
            out.extend(listing.map(|e| (d.kind, e.id.clone(), *field)));
        }
    }
    out
}

/// The scenes and the routes that list `(kind, id)`; `\nListed in scenes: ...` and
/// `\nListed in routes: ...` are added to `text` for those there are.
fn listed_in(bible: &Bible, kind: Kind, id: &str, text: &mut String) -> [Vec<String>; 2] {
    let refs = references(bible, kind, id);
    [(Scene, "scenes"), (Route, "routes")].map(|(k, what)| {
        let of_kind = refs.iter().filter(|r| r.0 == k);
        let ids: Vec<String> = of_kind.map(|r| r.1.clone()).collect();
        if !ids.is_empty() {
            w!(text, "\nListed in {what}: {}", ids.join(", "));
        }
        ids
    })
}

/// `{kind}_delete_entry`: delete an entity and describe what was deleted.
pub(super) fn delete_one(cx: &mut Cx, kind: Kind, query: &str) -> Out {
    let id = resolve(cx.bible(), kind, query)?.id.clone();
    let deleted = cx.bible_delete(kind, &id)?;
    let refs = references(cx.bible(), kind, &id);
    let mut text = format!("Deleted {kind} '{id}'. It was:\n{}", entity_text(&deleted));
    let list = refs.iter().map(|(k, i, f)| format!("{k} '{i}' ({f})"));
    let list = join(list, ", ");
    if !refs.is_empty() {
        let update = "update those if it should go from them too";
        w!(text, "\nWarning: still listed by {list}; {update}.");
    }
    let entry = |(k, i, f): &(Kind, String, &str)| json!({"kind": k, "id": i, "field": f});
    let refs: Vec<Value> = refs.iter().map(entry).collect();
    Ok(json!({ "text": text, "deleted": deleted.flat(), "referencedBy": refs }))
}

/// A one-line summary of an entity for lists.
fn brief(e: &Entity) -> String {
    let (id, mut s) = (&e.id, format!("{} — {}", e.id, display_name(e)));
    let (aliases, pronouns) = (e.list("aliases"), e.text("pronouns"));
    let (description, synopsis) = (e.text("description"), e.text("synopsis"));
    match e.kind {
        Character if !aliases.is_empty() => w!(s, " (aliases: {})", aliases.join(", ")),
        Location if !description.is_empty() => w!(s, ": {}", preview(description, 100)),
        Route if synopsis.is_empty() => return format!("{id}: (no synopsis)"),
        Route => return format!("{id}: {}", preview(synopsis, 120)),
        Character | Location => {}
        _ => return id.clone(),
    }
    if e.kind == Character && !pronouns.is_empty() {
        w!(s, " [{pronouns}]");
    }
    s
}

/// `{kind}_read_entry`: one entity of `kind` by id or name, or a list of them all.
pub(super) fn read_entry(cx: &mut Cx, kind: Kind, query: Option<&str>) -> Out {
    let bible = cx.bible();
    let Some(q) = query.filter(|q| !q.trim().is_empty()) else {
        let all: Vec<&Entity> = bible.list(kind).collect();
        let (n, lister) = (all.len(), decl(kind).lister);
        let mut text = format!("{n} {kind}{}:", if n == 1 { "" } else { "s" });
        for e in &all {
            w!(text, "\n- {}", brief(e));
        }
        w!(text, "\nPass one's id to {lister} for the whole entry.");
        if all.is_empty() {
            text = format!("The story bible has no {kind}s yet; {kind}_create_entry adds one.");
        }
        let entries: Vec<Value> = all.iter().map(|e| e.flat()).collect();
        return Ok(json!({ "text": text, "count": all.len(), "entries": entries }));
    };
    let e = resolve(bible, kind, q)?;
    let mut text = entity_text(e);
    let mut out = json!({ "id": e.id, "entry": e.flat() });
    let read = e.id.clone();
    if matches!(kind, Character | Location) {
        let [scenes, routes] = listed_in(bible, kind, &e.id, &mut text);
        (out["scenes"], out["routes"]) = (json!(scenes), json!(routes));
    } else if kind == Route {
        let names = listed(bible, Character, &e.list("primary_characters"));
        if !names.is_empty() {
            w!(text, "\nCharacters: {}", names.join(", "));
        }
        let scenes = e.list("scene_ids").into_iter();
        let missing: Vec<&str> = scenes.filter(|s| bible.get(Scene, s).is_none()).collect();
        if !missing.is_empty() {
            w!(text, "\nScenes not in the bible: {}", missing.join(", "));
        }
    }
    out["text"] = json!(text);
    cx.saw(kind, &read);
    Ok(out)
}

/// `{kind}_create_entry`: the first required argument is the entry's title (a name, or a
/// route's synopsis), which must not be empty; the others but `id` are fields, taken as the
/// kind's declaration says. The id is the one given, or made from the title (a route's from
/// its first four words). Named kinds warn about names another entry of the kind has.
pub(super) fn create_entry(a: &Call, cx: &mut Cx) -> Out {
    let (kind, d, args) = (a.tool.kind, decl(a.tool.kind), a.tool.args);
    let title_arg = args.iter().find(|a| a.required).map_or("", |a| a.name);
    let title = a.text(title_arg).trim();
    if title.is_empty() {
        let hint = format!("'{title_arg}' must not be empty; {}", d.title_hint);
        return Err(ToolError::invalid_args(hint));
    }
    let mut fields = vec![(title_arg.to_string(), json!(title))];
    let fields_args = args.iter().map(|a| a.name).filter(|n| *n != "id");
    for arg in fields_args.filter(|n| *n != title_arg) {
        let value = value_of(cx.bible(), kind, arg, a, arg)?;
        if !value.is_null() && value != json!([]) {
            fields.push((arg.to_string(), value));
        }
    }
    let (mut names, aliases) = (vec![title], a.list("aliases"));
    names.extend(a.opt("name_tgt"));
    names.extend(aliases.iter().map(|s| s.as_str()));
    let mut warnings = Vec::new();
    let names = names.iter().map(|n| n.trim()).filter(|n| !n.is_empty());
    for name in names.filter(|_| d.named) {
        let lower = name.to_lowercase();
        for e in cx.bible().list(kind) {
            if names_of(e).iter().any(|n| n.to_lowercase() == lower) {
                let e = labeled(e);
                warnings.push(format!("'{name}' is already a name of {kind} {e}"));
            }
        }
    }
    let hint = match d.named {
        true => title.to_string(),
        false => join(title.split_whitespace().take(4), " "),
    };
    let id = match a.trimmed("id").filter(|s| !s.is_empty()) {
        Some(id) => id.to_string(),
        None => cx.bible().fresh_id(kind, &hint),
    };
    let entry = cx.bible_create(kind, &id, fields)?;
    let created = entity_text(cx.bible().require(kind, &id)?);
    let mut text = format!("Created {kind} '{id}'.\n{created}");
    for w in &warnings {
        w!(text, "\nWarning: {w}");
    }
    Ok(json!({ "text": text, "id": id, "entry": entry, "warnings": warnings }))
}

// Scenes, placed in the manuscript and in reading order ([`scenes`]).

/// Where a scene is, as text.
fn where_text(p: &Placed, project: &Project) -> String {
    let Some(i) = p.chapter else {
        let chapter = preview(p.scene.text("chapter"), 60);
        return format!("chapter '{chapter}' (not in the project)");
    };
    let (c, n, start, end) = (&project.chapters[i], i + 1, p.start, p.end);
    format!("chapter {n} “{}” ({}), chars {start}–{end}", c.title, c.id)
}

/// A scene's facts: id, chapter number, span and entry.
fn placed_json(p: &Placed) -> Value {
    let (id, n, start, end) = (&p.scene.id, p.number(), p.start, p.end);
    json!({"id": id, "chapterNumber": n, "start": start, "end": end, "entry": p.scene.flat()})
}

/// Entities of `kind` by id, as `id (Name)`.
fn listed<T: AsRef<str>>(bible: &Bible, kind: Kind, ids: &[T]) -> Vec<String> {
    let show = |id: &str| match bible.get(kind, id) {
        Some(e) => format!("{id} ({})", display_name(e)),
        None => format!("{id} (not in the bible)"),
    };
    ids.iter().map(|id| show(id.as_ref())).collect()
}

/// A scene's metadata as text, with its place in the manuscript.
fn scene_text(bible: &Bible, project: &Project, placed: &Placed<'_>) -> String {
    let scene = placed.scene;
    let mut text = entity_text(scene) + &format!("\nWhere: {}", where_text(placed, project));
    let lists = [("Characters", Character), ("Locations", Location)];
    for ((label, kind), field) in lists.into_iter().zip(["primary_characters", "locations"]) {
        let names = listed(bible, kind, &scene.list(field));
        if !names.is_empty() {
            w!(text, "\n{label}: {}", names.join(", "));
        }
    }
    text
}

fn find_scene<'a>(bible: &'a Bible, project: &Project, id: &str) -> Res<Placed<'a>> {
    Ok(Placed::new(project, resolve(bible, Scene, id)?))
}

// Scene tools.

pub(super) fn scene_metadata(a: &Call, cx: &mut Cx) -> Out {
    let (bible, project) = (cx.bible(), cx.project());
    let placed = find_scene(bible, project, a.text("scene"))?;
    let mut out = placed_json(&placed);
    out["text"] = json!(scene_text(bible, project, &placed));
    Ok(out)
}

pub(super) fn scene_overview(a: &Call, cx: &mut Cx) -> Out {
    let limit = excerpt_limit(a);
    let (bible, project) = (cx.bible(), cx.project());
    let Some(id) = a.opt("scene").filter(|s| !s.trim().is_empty()) else {
        let all = in_reading_order(bible, project);
        if all.is_empty() {
            return Ok(json!({
                "text": "The story bible has no scenes yet. The writer creates scenes in the page (a chapter and a span of it).",
                "count": 0,
                "scenes": [],
            }));
        }
        let mut text = format!("{} scenes in reading order:", all.len());
        let mut list = Vec::new();
        for (n, p) in (1..).zip(&all) {
            let (id, place, summary) =
                (&p.scene.id, where_text(p, project), p.scene.text("summary"));
            let summary = match summary.trim() {
                "" => "(no summary)".to_string(),
                _ => preview(summary, 200),
            };
            w!(text, "\n{n}. {id} — {place}: {summary}");
            list.push(json!({
                "id": id, "chapter": p.scene.text("chapter"), "chapterNumber": p.number(),
                "start": p.start, "end": p.end, "summary": p.scene.get("summary"),
            }));
        }
        return Ok(json!({ "text": text, "count": list.len(), "scenes": list }));
    };
    let placed = find_scene(bible, project, id)?;
    let body = placed.text(project);
    let mut text = scene_text(bible, project, &placed);
    let chars = mentions::mentioned_ids(bible, &body, Character);
    let locs = mentions::mentioned_ids(bible, &body, Location);
    let listed_chars = placed.scene.list("primary_characters");
    let unlisted = |c: &&String| !listed_chars.contains(&c.as_str());
    let unlisted: Vec<&String> = chars.iter().filter(unlisted).collect();
    let names = |kind: Kind, ids: &[String]| list_or(&listed(bible, kind, ids), "none");
    let (c, l) = (names(Character, &chars), names(Location, &locs));
    w!(
        text,
        "\nMentioned in its text: characters: {c}; locations: {l}"
    );
    let (block, shown, cut) = text_block(&body, limit);
    if placed.chapter.is_some() {
        text.push_str(&block);
    }
    let mut out = placed_json(&placed);
    (out["text"], out["excerpt"], out["truncated"]) = (json!(text), json!(shown), json!(cut));
    (out["mentionedCharacters"], out["mentionedLocations"]) = (json!(chars), json!(locs));
    out["mentionedButNotListed"] = json!(unlisted);
    Ok(out)
}

/// `(none)` for a blank text.
fn or_none(s: &str) -> String {
    let none = s.trim().is_empty();
    if none { "(none)" } else { s }.to_string()
}

pub(super) fn scene_redacted(a: &Call, cx: &mut Cx) -> Out {
    let limit = excerpt_limit(a);
    let (bible, project) = (cx.bible(), cx.project());
    let placed = find_scene(bible, project, a.text("scene"))?;
    let (scene, id, start, end) = (placed.scene, &placed.scene.id, placed.start, placed.end);
    let Some(chapter) = placed.chapter else {
        let chapter = preview(scene.text("chapter"), 60);
        return Err(ToolError::not_found(format!(
            "scene '{id}' is in chapter '{chapter}', which is not in the project, so it has no place in reading order; the writer must fix its chapter"
        )));
    };
    let reader = Reader::new(bible, project, chapter, end);
    let summary = reader.redact(scene.text("summary"));
    let tags = reader.redact_list(&scene.list("tags"));
    let characters = reader.display(Character, &scene.list("primary_characters"));
    let locations = reader.display(Location, &scene.list("locations"));
    let (block, shown, cut) = text_block(&reader.redact(&placed.text(project)), limit);
    let all = in_reading_order(bible, project);
    let others = all.iter().filter(|p| p.scene.id != *id);
    let (earlier, later): (Vec<&Placed>, Vec<&Placed>) =
        others.partition(|p| p.chapter.is_some() && p.end_key() <= placed.end_key());
    let (title, n) = (&project.chapters[chapter].title, chapter + 1);
    let (s, t) = (or_none(&summary), list_or(&tags, "(none)"));
    let (c, l) = (
        list_or(&characters, "(none)"),
        list_or(&locations, "(none)"),
    );
    let mut text = format!(
        "Scene '{id}' as a first-time reader knows it at its end (chapter {n} “{title}”, chars {start}–{end}). Names the reader has not met yet are shown as {NOT_YET_INTRODUCED}; later scenes, character notes, location descriptions and routes are hidden.\nsummary: {s}\ntags: {t}\nprimary_characters: {c}\nlocations: {l}{block}"
    );
    let none = if earlier.is_empty() { " none." } else { "" };
    w!(text, "\nEarlier scenes:{none}");
    let mut earlier_json = Vec::new();
    for p in &earlier {
        let s = reader.redact(p.scene.text("summary"));
        let t = reader.redact_list(&p.scene.list("tags"));
        let tags = format!(" [tags: {}]", t.join(", "));
        let tags = if t.is_empty() { "" } else { &tags };
        let (id, n, summary) = (&p.scene.id, p.number().unwrap_or(0), or_none(&s));
        w!(text, "\n- {id} (chapter {n}): {summary}{tags}");
        earlier_json.push(json!({"id": id, "chapterNumber": p.number(), "summary": s, "tags": t}));
    }
    w!(text, "\nLater scenes hidden: {}.", later.len());
    let (mut met, mut known_characters) = (Vec::new(), Vec::new());
    for (c, names) in reader.known(Character) {
        let (name, pronouns) = (names.join(" / "), c.text("pronouns").trim());
        met.push(if pronouns.is_empty() {
            name
        } else {
            format!("{name} [{pronouns}]")
        });
        let pronouns = Some(pronouns).filter(|p| !p.is_empty());
        known_characters.push(json!({"name": names[0], "names": names, "pronouns": pronouns}));
    }
    let known_locations = reader.known(Location);
    let places = known_locations.iter().map(|(_, names)| names.join(" / "));
    let places: Vec<String> = places.collect();
    w!(
        text,
        "\nCharacters the reader has met: {}",
        list_or(&met, "(none)")
    );
    w!(
        text,
        "\nLocations the reader knows: {}",
        list_or(&places, "(none)")
    );
    let place = |(_, names): &(_, Vec<String>)| json!({"name": names[0], "names": names});
    let known_locations: Vec<Value> = known_locations.iter().map(place).collect();
    Ok(json!({
        "text": text,
        "scene": {
            "id": id, "chapterNumber": n, "start": start, "end": end, "summary": summary,
            "tags": tags, "primary_characters": characters, "locations": locations,
        },
        "excerpt": shown, "truncated": cut, "earlierScenes": earlier_json,
        "laterScenesHidden": later.len(), "characters": known_characters, "locations": known_locations,
    }))
}

/// `scene_update_summary`: written first (a write that fails, for approval or a conflict, does
/// not use up the guard); if the guard was already taken, the error rolls the write back.
pub(super) fn update_summary(a: &Call, cx: &mut Cx) -> Out {
    let result = update_field(a, cx, "summary")?;
    let id = result["id"].as_str().unwrap_or("");
    let first = cx.take_guard(&format!("scene_update_summary:{id}"));
    if first || cx.may_overwrite(a.flag("overwrite")) {
        return Ok(result);
    }
    let details = json!({ "id": id, "current": result["previous"] });
    let message = format!("the summary of scene '{id}' was already written in this run; nothing was changed. Pass overwrite: true to replace it again.");
    Err(ToolError::new("already_written", message).with_details(details))
}

/// `scene_update_primary_characters`: also says which of them the scene's text mentions.
pub(super) fn update_scene_characters(a: &Call, cx: &mut Cx) -> Out {
    let mut result = update_field(a, cx, "primary_characters")?;
    let (bible, project) = (cx.bible(), cx.project());
    let placed = find_scene(bible, project, result["id"].as_str().unwrap_or(""))?;
    let present = mentions::mentioned_ids(bible, &placed.text(project), Character);
    let ids = strings(&result["value"]).into_iter();
    let (mentioned, missing): (Vec<String>, Vec<String>) = ids.partition(|c| present.contains(c));
    let shown = list_or(&mentioned, "none");
    let before = result["text"].as_str().unwrap_or("");
    let mut text = format!("{before}\nMentioned in the scene's text: {shown}");
    if !missing.is_empty() {
        let warning = format!(
            "Warning: not mentioned in the scene's text (by any name or alias): {}. Check that they belong in this scene, or add the name they go by as an alias.",
            missing.join(", ")
        );
        w!(text, "\n{warning}");
        result["warning"] = json!(warning);
    }
    (result["mentioned"], result["notMentioned"]) = (json!(mentioned), json!(missing));
    result["text"] = json!(text);
    Ok(result)
}

// Knowledge.

pub(super) fn query_lore(a: &Call, cx: &mut Cx) -> Out {
    let limit = a.num("limit").unwrap_or(10) as usize;
    let (query, terms) = (a.text("query"), lore::terms(a.text("query")));
    if terms.is_empty() {
        return Err(ToolError::invalid_args(
            "'query' has no words to look for; give a name, a place, an object or a few words",
        ));
    }
    let mut hits = lore::search(cx.bible(), query);
    let total = hits.len();
    hits.truncate(limit);
    let (shown, list) = (preview(query.trim(), 80), terms.join(", "));
    if hits.is_empty() {
        let text = format!(
            "Nothing in the story bible matches \"{shown}\". Try other or fewer words, or a name."
        );
        return Ok(json!({"text": text, "count": 0, "total": 0, "hits": [], "terms": terms}));
    }
    let mut text = format!(
        "{} of {total} hits for \"{shown}\" (terms: {list}):",
        hits.len()
    );
    let mut list = Vec::new();
    for (n, hit) in (1..).zip(&hits) {
        let (e, matched, field) = (hit.entity, &hit.matched, hit.field);
        let (kind, id, terms) = (e.kind, &e.id, matched.join(", "));
        let label = match kind {
            Character | Location => format!("{kind} '{id}' ({})", display_name(e)),
            _ => format!("{kind} '{id}'"),
        };
        let detail = field.map(|f| format!(" — {}", preview(&field_line(e, f), 300)));
        let detail = detail.unwrap_or_default();
        w!(text, "\n{n}. {label}: matched {terms}{detail}");
        let (score, entry) = (hit.score, e.flat());
        list.push(json!({"kind": kind, "id": id, "matched": matched, "score": score, "field": field, "entry": entry}));
    }
    Ok(json!({ "text": text, "count": list.len(), "total": total, "hits": list, "terms": terms }))
}

pub(super) fn character_info(a: &Call, cx: &mut Cx) -> Out {
    let (bible, project) = (cx.bible(), cx.project());
    let e = resolve(bible, Character, a.text("character"))?;
    let (id, names, mut text) = (e.id.as_str(), names_of(e), entity_text(e));
    let [scenes, routes] = listed_in(bible, Character, id, &mut text);
    let (mut lines, mut appearances, mut total) = (String::new(), Vec::new(), 0usize);
    for (number, chapter) in (1usize..).zip(&project.chapters) {
        let found = mentions::of_entity(bible, &chapter.text().to_string(), Character, id);
        let Some(first) = found.first() else {
            continue;
        };
        let (count, s) = (found.len(), if found.len() == 1 { "" } else { "s" });
        let (start, end, name) = (first.start, first.end, &first.name);
        let (title, chapter_id, snippet) =
            (&chapter.title, &chapter.id, snippet(chapter, start, end));
        w!(lines, "\n- chapter {number} “{title}” ({chapter_id}): {count} mention{s}; first at char {start} as \"{name}\": {snippet}");
        total += count;
        appearances.push(json!({
            "chapter": chapter_id, "chapterNumber": number, "chapterTitle": title, "mentions": count,
            "firstMention": {"start": start, "end": end, "name": name, "snippet": snippet},
        }));
    }
    let (n, of) = (appearances.len(), project.chapters.len());
    if n == 0 {
        let quoted = join(names.iter().map(|n| format!("\"{n}\"")), " or ");
        w!(
            text,
            "\nAppearances: none; no chapter mentions {quoted} as a whole word."
        );
    } else {
        w!(
            text,
            "\nAppearances ({total} mentions in {n} of {of} chapters):{lines}"
        );
    }
    let notes = notes_about(cx, id, &names);
    if !notes.is_empty() {
        w!(
            text,
            "\nIn memory ({} note{}):",
            notes.len(),
            if notes.len() == 1 { "" } else { "s" }
        );
        for note in &notes {
            w!(
                text,
                "\n- [{}] {} ({})",
                note.note_type.as_str(),
                preview(&note.text, 300),
                note.id
            );
        }
    }
    let notes: Vec<Value> = notes
        .iter()
        .map(|n| json!({"id": n.id, "type": n.note_type, "text": n.text, "tags": n.tags}))
        .collect();
    Ok(json!({
        "text": text, "id": id, "entry": e.flat(), "names": names, "scenes": scenes,
        "routes": routes, "totalMentions": total, "appearances": appearances, "notes": notes,
    }))
}

/// Most memory notes [`character_info`] shows.
const MAX_CHARACTER_NOTES: usize = 20;

/// The memory's notes about a character, seen from the project: those that name it (any of
/// its names, as a whole word, in any case) or carry its id or a name as a tag.
/// Observations first, then by importance, newest first; the bedside note is not one.
fn notes_about<'m>(cx: &'m Cx, id: &str, names: &[String]) -> Vec<&'m crate::memory::MemoryNote> {
    let project = cx.project().id.as_str();
    let lower: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
    let about = |note: &crate::memory::MemoryNote| {
        let text = note.text.to_lowercase();
        lower
            .iter()
            .any(|name| mentions::contains_word(&text, name))
            || note
                .tags
                .iter()
                .any(|t| t.eq_ignore_ascii_case(id) || lower.contains(&t.to_lowercase()))
    };
    let mut notes: Vec<&crate::memory::MemoryNote> = cx
        .memory_ref()
        .visible_notes(project)
        .filter(|n| !n.is_bedside() && about(n))
        .collect();
    notes.sort_by_key(|n| {
        (
            n.note_type != crate::memory::NoteType::Observation,
            std::cmp::Reverse(n.importance),
            std::cmp::Reverse(n.updated_ms),
        )
    });
    notes.truncate(MAX_CHARACTER_NOTES);
    notes
}

/// A one-line snippet of a chapter's text around the char range `start..end`.
fn snippet(chapter: &Chapter, start: usize, end: usize) -> String {
    let (from, to) = (start.saturating_sub(60), end + 60);
    let s = chapter.slice(from, to).replace(['\n', '\r'], " ");
    let before = if from > 0 { "…" } else { "" };
    let after = if to < chapter.len_chars() { "…" } else { "" };
    format!("{before}{s}{after}")
}
