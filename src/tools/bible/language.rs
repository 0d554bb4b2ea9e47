//! Language: the glossary, the style guide and UI settings, translations, machine translation,
//! QA checks, context documents and `context_read_status`: the handlers of their tools.
//!
//! A scene's lines are the non-empty lines of its span of its chapter's text, trimmed and
//! numbered from 1; a translation is the entity `<scene>:<line>`. A call that fails halfway (a
//! merge, say) changes nothing. The machine-translation suggestion needs an HTTP call, which
//! the synchronous edit path cannot make: the core runs `translation_create_mtl_suggestion`
//! (and answers `translation_check_mtl_available` from its settings) in `src/core/mtl.rs`,
//! planning it with [`mtl_plan`]. Agents never change context documents: they only read them.

use std::collections::BTreeMap;

use serde_json::json;
use serde_json::Value;

use super::{join, parse, preview, show, tool, Args, Call, Cx, Out, Res};
use crate::bible::scenes::Placed;
use crate::bible::translation::{self, translation_id};
use crate::bible::{glossary, Bible, Entity, Kind, Kind::*};
use crate::policy::{self, Action, Grant};
use crate::project::Project;
use crate::session::Session;
use crate::tools::{ToolError, ToolRegistry};

/// `translation_create_mtl_suggestion`.
pub const MTL_SUGGESTION: &str = "translation_create_mtl_suggestion";

/// The tools the core runs itself (they need its settings or an HTTP call).
pub const MTL_TOOLS: [&str; 2] = ["translation_check_mtl_available", MTL_SUGGESTION];

/// Most characters of a context document one `contextdoc_read_doc` call returns.
pub const DOC_CHUNK_CHARS: usize = 20_000;

/// Most lines one `translation_read_scene` call shows.
pub const MAX_SCENE_LINES: usize = 200;

/// Whether the core runs `name` itself ([`MTL_TOOLS`]).
pub fn is_mtl(name: &str) -> bool {
    MTL_TOOLS.contains(&name)
}

/// ` [origin]`, or nothing for a field never written.
fn origin_tag(e: &Entity, field: &str) -> String {
    let origin = e.origin(field);
    origin.map(|o| format!(" [{o}]")).unwrap_or_default()
}

/// An entity as text: a header line, then each field of its kind with its origin (a
/// multi-line value indented below its name).
fn entity_block(e: &Entity) -> String {
    let mut out = format!("{} '{}' (version {})", e.kind, e.id, e.version);
    for field in e.kind.fields().iter().map(|f| f.name) {
        let (value, origin) = (show(e.get(field), '-'), origin_tag(e, field));
        if value.contains('\n') {
            let lines = join(value.lines().map(|l| format!("    {l}")), "\n");
            w!(out, "\n  {field}{origin}:\n{lines}");
        } else {
            w!(out, "\n  {field}: {value}{origin}");
        }
    }
    out
}

fn numbers(ns: &[u64]) -> String {
    join(ns.iter().map(u64::to_string), ", ")
}

// Scenes and their lines.

/// A scene's lines: the non-empty lines of its span of its chapter, trimmed, numbered from 1
/// (`lines[0]` is line 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SceneLines {
    /// Scene id.
    pub scene: String,
    /// The chapter's id.
    pub chapter_id: String,
    /// The chapter's title.
    pub chapter_title: String,
    /// The span read (chars), clamped to the chapter.
    pub span: (usize, usize),
    /// The lines.
    pub lines: Vec<String>,
}

impl SceneLines {
    /// Line `line` (from 1), or an `out_of_range` error naming the scene's range.
    pub fn line(&self, line: u64) -> Res<&str> {
        let index = usize::try_from(line).ok().and_then(|n| n.checked_sub(1));
        if let Some(line) = index.and_then(|i| self.lines.get(i)) {
            return Ok(line);
        }
        let (scene, title, n) = (&self.scene, &self.chapter_title, self.lines.len());
        let message = match n {
            0 => format!("scene '{scene}' has no lines (its span of chapter '{title}' is empty)"),
            _ => format!(
                "scene '{scene}' has lines 1 to {n}, not {line}; translation_read_scene shows them"
            ),
        };
        Err(ToolError::new("out_of_range", message))
    }
}

/// The lines of scene `scene`, [placed](Placed) in the project: `not_found` for an unknown
/// scene or a chapter no longer in the project.
pub fn scene_lines(project: &Project, bible: &Bible, scene: &str) -> Res<SceneLines> {
    let entity = bible.require(Scene, scene.trim())?;
    let placed = Placed::new(project, entity);
    let Some(chapter) = placed.chapter.map(|i| &project.chapters[i]) else {
        let (id, chapter) = (&entity.id, preview(entity.text("chapter").trim(), 80));
        let message =
            format!("scene '{id}' belongs to chapter '{chapter}', which is not in the project");
        return Err(ToolError::not_found(message));
    };
    Ok(SceneLines {
        scene: entity.id.clone(),
        chapter_id: chapter.id.clone(),
        chapter_title: chapter.title.clone(),
        span: (placed.start, placed.end),
        lines: placed.lines(project),
    })
}

// Glossary.

pub(super) fn search_term(a: &Call, cx: &mut Cx) -> Out {
    let query = a.text("query").trim().to_lowercase();
    let limit = a.num("limit").unwrap_or(50).clamp(1, 500) as usize;
    let mut found = glossary::search(cx.bible(), &query);
    let total = found.len();
    found.truncate(limit);
    let y = if total == 1 { "y" } else { "ies" };
    let q = preview(a.text("query").trim(), 80);
    let mut text = format!("{total} glossary entr{y} match '{q}'.");
    if query.is_empty() {
        text = format!("The glossary has {total} entries.");
    }
    for e in &found {
        // `- id: source → target [origins] — notes`.
        let (src, tgt) = (e.text("term_src").trim(), e.text("term_tgt").trim());
        let tgt = Some(tgt)
            .filter(|t| !t.is_empty())
            .unwrap_or("(no translation)");
        let (src_origin, tgt_origin) = (origin_tag(e, "term_src"), origin_tag(e, "term_tgt"));
        w!(text, "\n- {}: {src}{src_origin} → {tgt}{tgt_origin}", e.id);
        let notes = e.text("notes").trim();
        if !notes.is_empty() {
            let origin = origin_tag(e, "notes");
            let notes = preview(&notes.replace('\n', " "), 200);
            w!(text, " — notes{origin}: {notes}");
        }
    }
    if total > found.len() {
        let more = total - found.len();
        w!(
            text,
            "\n({more} more not shown; narrow the query or raise 'limit')"
        );
    }
    if total == 0 && !query.is_empty() {
        text.push_str(" glossary_create_entry adds one.");
    }
    let entries: Vec<Value> = found.iter().map(|e| e.flat()).collect();
    Ok(json!({"text": text, "query": a.text("query"), "count": total, "entries": entries}))
}

/// The glossary entry a call names: by its source term (the glossary's key for its users),
/// or by its id.
fn named_entry<'b>(bible: &'b Bible, a: &Call) -> Result<&'b Entity, ToolError> {
    let key = a.text("term_src").trim();
    match glossary::by_term(bible, key) {
        Some(entry) => Ok(entry),
        None => Ok(bible.require(Glossary, key)?),
    }
}

pub(super) fn read_entry(a: &Call, cx: &mut Cx) -> Out {
    let e = named_entry(cx.bible(), a)?;
    let out = json!({"text": entity_block(e), "entry": e.flat()});
    let read = e.id.clone();
    cx.saw(Glossary, &read);
    Ok(out)
}

/// The fields among `names` given as arguments, trimmed.
fn given(a: &Args, names: &[&str]) -> Vec<(String, Value)> {
    let value = |f: &&str| Some((f.to_string(), json!(a.trimmed(f)?)));
    names.iter().filter_map(value).collect()
}

pub(super) fn create_entry(a: &Call, cx: &mut Cx) -> Out {
    let term = a.non_blank("term_src")?;
    if let Some(existing) = glossary::by_term(cx.bible(), term) {
        let (shown, id) = (preview(term, 80), &existing.id);
        let message = format!("the glossary already has an entry for '{shown}': '{id}'; change it with glossary_update_entry (or merge duplicates with glossary_merge_entries)");
        let details = json!({"entry": existing.flat()});
        return Err(ToolError::new("exists", message).with_details(details));
    }
    let id = match a.trimmed("id").filter(|id| !id.is_empty()) {
        Some(id) => id.to_string(),
        None => cx.bible().fresh_id(Glossary, term),
    };
    let mut fields = vec![("term_src".to_string(), json!(term))];
    fields.extend(given(a, &["term_tgt", "notes"]));
    cx.bible_create(Glossary, &id, fields)?;
    let e = cx.bible().require(Glossary, &id)?;
    Ok(json!({"text": format!("Created {}", entity_block(e)), "entry": e.flat()}))
}

pub(super) fn update_entry(a: &Call, cx: &mut Cx) -> Out {
    let entry = named_entry(cx.bible(), a)?;
    let (id, before) = (entry.id.clone(), entry.version);
    let changes = given(a, &["term_tgt", "notes"]);
    if changes.is_empty() {
        let message = "give 'term_tgt', 'notes' or both: the fields to change";
        return Err(ToolError::invalid_args(message));
    }
    cx.bible_update(Glossary, &id, changes)?;
    let e = cx.bible().require(Glossary, &id)?;
    let changed = e.version != before;
    let done = if changed {
        "Updated"
    } else {
        "No change (same values):"
    };
    let text = format!("{done} {}", entity_block(e));
    Ok(json!({"text": text, "changed": changed, "entry": e.flat()}))
}

/// `glossary_merge_entries`: all or nothing, and one approval covers the whole merge.
pub(super) fn merge_entries(a: &Call, cx: &mut Cx) -> Out {
    let keep_id = a.text("keep").trim().to_string();
    let keep = cx.bible().require(Glossary, &keep_id)?.clone();
    let mut ids: Vec<String> = Vec::new();
    for id in a.list("merge") {
        let id = id.trim();
        if id == keep_id {
            return Err(ToolError::invalid_args(format!(
                "'merge' lists the kept entry '{keep_id}'; list only the entries to fold into it"
            )));
        }
        if !id.is_empty() && !ids.iter().any(|i| i == id) {
            ids.push(id.to_string());
        }
    }
    if ids.is_empty() {
        let message = "'merge' must list at least one entry id to fold into the kept one";
        return Err(ToolError::invalid_args(message));
    }
    let mut merged: Vec<Entity> = Vec::new();
    for id in &ids {
        merged.push(cx.bible().require(Glossary, id)?.clone());
    }

    let (term_tgt, notes) = glossary::merged(&keep, &merged);
    let mut changes = Vec::new();
    for (field, value) in [("term_tgt", &term_tgt), ("notes", &notes)] {
        if keep.text(field) != value {
            changes.push((field.to_string(), json!(value)));
        }
    }

    // What the writer must approve, should any step need approval: every entry the merge
    // touches, at its version now; and, for the writer's card, the kept entry's field changes
    // and every entry it deletes, with all their fields (whoever wrote them).
    let mut versions = serde_json::Map::new();
    let (mut asks, mut touched) = (Vec::new(), Vec::new());
    let (mode, actor) = (cx.policies().mode(a.tool.name), cx.actor());
    let names: Vec<&str> = changes.iter().map(|(f, _)| f.as_str()).collect();
    for (i, e) in std::iter::once(&keep).chain(&merged).enumerate() {
        versions.insert(Grant::key(Glossary, &e.id), json!(e.version));
        let (action, verb) = [(Action::Update, "update"), (Action::Delete, "delete")][i.min(1)];
        let fields = if i == 0 { &names[..] } else { &[] };
        let asked = policy::needs_approval(mode, action, actor, Some(e), fields);
        if let Some(reason) = asked.filter(|_| i > 0 || !changes.is_empty()) {
            asks.push(json!({"id": e.id, "action": verb, "reason": reason}));
        }
        let field = |name: &str, proposed: Value| json!({"field": name, "current": e.get(name), "current_origin": e.origin(name), "proposed": proposed});
        let fields: Vec<Value> = match i {
            0 => changes.iter().map(|(f, v)| field(f, v.clone())).collect(),
            _ => e.fields.keys().map(|f| field(f, Value::Null)).collect(),
        };
        touched.push(json!({"kind": Glossary, "id": e.id, "action": verb, "title": e.text("term_src"), "fields": fields}));
    }
    let widen = |mut error: ToolError| -> ToolError {
        if error.code != "approval_required" {
            return error;
        }
        let ask = |a: &Value| Some(format!("{} ({})", a["id"].as_str()?, a["action"].as_str()?));
        let listed = join(asks.iter().filter_map(ask), ", ");
        if !listed.is_empty() {
            w!(
                error.message,
                " The merge needs approval for: {listed}; one approval covers the whole merge."
            );
        }
        if let Some(Value::Object(details)) = &mut error.details {
            let proposed = json!({"term_tgt": term_tgt, "notes": notes});
            let merge = json!({"keep": keep.id, "merge": ids, "proposed": proposed});
            let (versions, asks, touched) =
                (Value::Object(versions.clone()), json!(asks), json!(touched));
            details.insert("versions".into(), versions);
            details.insert("entries".into(), asks);
            details.insert("changes".into(), touched);
            details.insert("merge".into(), merge);
        }
        error
    };

    if !changes.is_empty() {
        let update = cx.bible_update(Glossary, &keep.id, changes);
        update.map_err(&widen)?;
    }
    let mut removed = Vec::new();
    for e in &merged {
        removed.push(cx.bible_delete(Glossary, &e.id).map_err(&widen)?.flat());
    }
    let kept = cx.bible().require(Glossary, &keep.id)?;
    let (them, list) = (if ids.len() == 1 { "it" } else { "them" }, ids.join(", "));
    let (id, block) = (&kept.id, entity_block(kept));
    let text = format!("Merged {list} into '{id}' and removed {them}.\n{block}");
    Ok(json!({"text": text, "entry": kept.flat(), "merged": ids, "removed": removed}))
}

pub(super) fn delete_entry(a: &Call, cx: &mut Cx) -> Out {
    let id = named_entry(cx.bible(), a)?.id.clone();
    let removed = cx.bible_delete(Glossary, &id)?;
    let (src, tgt) = (removed.text("term_src"), show(removed.get("term_tgt"), '-'));
    let id = &removed.id;
    let text = format!("Removed glossary entry '{id}' ({src} → {tgt}).");
    Ok(json!({"text": text, "deleted": removed.flat()}))
}

// Style guide and UI settings.

pub(super) fn styleguide(_: &Call, cx: &mut Cx) -> Out {
    let guide = cx.bible().get(Styleguide, "styleguide");
    let markdown = guide.map_or("", |g| g.text("markdown")).trim();
    let text = match guide {
        Some(g) if !markdown.is_empty() => {
            let (version, origin) = (g.version, origin_tag(g, "markdown"));
            format!("Style guide (version {version}){origin}:\n\n{markdown}")
        }
        _ => String::from(
            "There is no style guide yet: follow the glossary and the manuscript's own conventions.",
        ),
    };
    let origin = guide.and_then(|g| g.origin("markdown"));
    let version = guide.map(|g| g.version);
    Ok(json!({
        "text": text, "exists": !markdown.is_empty(), "markdown": markdown,
        "markdown_origin": origin, "version": version,
    }))
}

pub(super) fn ui_settings(_: &Call, cx: &mut Cx) -> Out {
    let Some(ui) = cx.bible().get(UiSettings, "ui") else {
        return Ok(json!({
            "text": "No UI settings are set: there is no line-length limit to respect.",
            "exists": false, "line_length_limit": null, "lines_per_box": null, "notes": null,
        }));
    };
    let (mut out, block) = (ui.flat(), entity_block(ui));
    let fields = join(block.lines().skip(1), "\n");
    (out["text"], out["exists"]) = (json!(format!("UI settings\n{fields}")), json!(true));
    Ok(out)
}

// Machine translation.

/// An endpoint's host, for messages (never the whole URL: it may hold a key).
pub fn endpoint_host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    host.rsplit('@').next().unwrap_or(host).to_string()
}

/// Why there is no suggestion: no endpoint is set.
pub fn no_mtl_endpoint() -> ToolError {
    ToolError::new(
        "no_mtl_endpoint",
        "No machine-translation endpoint is set, so no MTL suggestion can be made. The writer can set one in the settings: 'mtlEndpoint', the URL of a LibreTranslate-compatible service (POST {q, source, target, format} answering {translatedText}), such as https://libretranslate.example/translate. Meanwhile, translate the line yourself and save it with translation_create_line.",
    )
}

pub(super) fn mtl_available(_: &Call, cx: &mut Cx) -> Out {
    let Some(host) = cx.mtl_endpoint().map(endpoint_host) else {
        return Ok(json!({
            "text": "No machine-translation endpoint is set: translation_create_mtl_suggestion will not work. The writer can set one in the settings ('mtlEndpoint', a LibreTranslate-compatible URL).",
            "available": false,
        }));
    };
    let text = format!("A machine-translation endpoint is set ({host}): translation_create_mtl_suggestion can suggest translations.");
    Ok(json!({"text": text, "available": true, "host": host}))
}

/// A machine-translation request, ready for the core to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MtlPlan {
    /// The endpoint's URL.
    pub endpoint: String,
    /// Scene id.
    pub scene: String,
    /// Line number.
    pub line: u64,
    /// The manuscript line.
    pub source: String,
    /// Source language code.
    pub source_lang: String,
    /// Target language code.
    pub target_lang: String,
}

fn lang_code(a: &Args, name: &str) -> Res<String> {
    let (value, code) = (a.text(name), a.text(name).trim());
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if !code.is_empty() && code.len() <= 16 && code.chars().all(allowed) {
        return Ok(code.to_string());
    }
    let (value, example) = (preview(value, 40), "\"en\", \"ja\" or \"zh-Hans\"");
    let message = format!("'{name}' must be a language code such as {example}, got \"{value}\"");
    Err(ToolError::invalid_args(message))
}

fn plan_from(a: &Args, project: &Project, bible: &Bible, endpoint: Option<&str>) -> Res<MtlPlan> {
    let source_lang = lang_code(a, "source_lang")?;
    let target_lang = lang_code(a, "target_lang")?;
    let endpoint = endpoint.map(str::trim).filter(|u| !u.is_empty());
    let endpoint = endpoint.ok_or_else(no_mtl_endpoint)?.to_string();
    let lines = scene_lines(project, bible, a.text("scene"))?;
    let line = a.num("line").unwrap_or(0);
    let source = lines.line(line)?.to_string();
    let scene = lines.scene;
    Ok(MtlPlan {
        endpoint,
        scene,
        line,
        source,
        source_lang,
        target_lang,
    })
}

/// Check a `translation_create_mtl_suggestion` call (against its schema, as
/// [`Session::execute`] does) and read the line to translate. Changes nothing. Errors:
/// `invalid_args`, `no_mtl_endpoint` (when `endpoint` is none or empty), `not_found`,
/// `out_of_range`.
pub fn mtl_plan(
    registry: &ToolRegistry,
    args: Value,
    session: &Session,
    endpoint: Option<&str>,
) -> Res<MtlPlan> {
    let (_, args) = registry.validate_call(MTL_SUGGESTION, args)?;
    let tool = tool(MTL_SUGGESTION).ok_or_else(|| registry.unknown_tool(MTL_SUGGESTION))?;
    let args = parse(tool.args, Value::Object(args))?;
    plan_from(&args, &session.project, &session.bible, endpoint)
}

/// The result of a suggestion: the endpoint's translation, as data for the agent.
pub fn mtl_suggestion(plan: &MtlPlan, suggestion: &str, detected: Option<Value>) -> Value {
    let (scene, line, source) = (&plan.scene, plan.line, &plan.source);
    let (from, to) = (&plan.source_lang, &plan.target_lang);
    json!({
        "text": format!(
            "Machine-translation suggestion for line {line} of scene '{scene}' ({from} → {to}):\nsource: {source}\nsuggestion: {suggestion}\nIt is only a suggestion: check it against the glossary and style guide, then save a translation with translation_create_line (or translation_update_line)."
        ),
        "scene": scene, "line": line, "source": source, "suggestion": suggestion,
        "source_lang": from, "target_lang": to, "detected_language": detected,
    })
}

/// `translation_create_mtl_suggestion` on the synchronous path: checked, but the HTTP call is
/// the core's (`src/core/mtl.rs`).
pub(super) fn mtl_suggestion_sync(a: &Call, cx: &mut Cx) -> Out {
    plan_from(a, cx.project(), cx.bible(), cx.mtl_endpoint())?;
    Err(ToolError::new(
        "needs_network",
        "translation_create_mtl_suggestion calls the translation endpoint; run it through the core (execute or run)",
    ))
}

// Translations.

pub(super) fn create_line(a: &Call, cx: &mut Cx) -> Out {
    let target = a.non_blank("target")?;
    let lines = scene_lines(cx.project(), cx.bible(), a.text("scene"))?;
    let line = a.num("line").unwrap_or(0);
    let source = lines.line(line)?.to_string();
    let (scene, total) = (&lines.scene, lines.lines.len());
    let id = translation_id(scene, line);
    if let Some(existing) = cx.bible().get(Translation, &id) {
        let shown = preview(existing.text("target"), 120);
        let origin = origin_tag(existing, "target");
        let message = format!("line {line} of scene '{scene}' already has a translation ({shown}{origin}); change it with translation_update_line");
        let details = json!({"translation": existing.flat()});
        return Err(ToolError::new("exists", message).with_details(details));
    }
    let fields = [
        ("scene", json!(scene)),
        ("line", json!(line)),
        ("source", json!(source)),
    ];
    let fields = fields.into_iter().chain([("target", json!(target))]);
    let fields = fields.map(|(f, v)| (f.to_string(), v)).collect();
    let flat = cx.bible_create(Translation, &id, fields)?;
    let done = translation::view(cx.bible(), scene, &lines.lines).translated();
    Ok(json!({
        "text": format!(
            "Saved the translation of line {line} of scene '{scene}':\nsource: {source}\ntarget: {target}\nThe scene has {done} of {total} lines translated."
        ),
        "translation": flat, "translated": done, "total": total,
    }))
}

pub(super) fn update_line(a: &Call, cx: &mut Cx) -> Out {
    let target = a.non_blank("target")?;
    let scene = cx.bible().require(Scene, a.text("scene").trim())?;
    let (scene, line) = (scene.id.clone(), a.num("line").unwrap_or(0));
    let id = translation_id(&scene, line);
    let Some(before) = cx.bible().get(Translation, &id).map(|t| t.version) else {
        return Err(ToolError::not_found(format!(
            "line {line} of scene '{scene}' has no translation yet; save one with translation_create_line"
        )));
    };
    // The manuscript line now, when the scene still has it (to say if it changed).
    let lines = scene_lines(cx.project(), cx.bible(), &scene);
    let current = |l: SceneLines| Some(l.line(line).ok()?.to_string());
    let current = lines.ok().and_then(current);
    let change = vec![("target".to_string(), json!(target))];
    cx.bible_update(Translation, &id, change)?;
    let e = cx.bible().require(Translation, &id)?;
    let (stored, changed) = (e.text("source"), e.version != before);
    let source_changed = current.as_deref().is_some_and(|c| c != stored);
    let done = if changed { "Updated" } else { "No change to" };
    let mut text = format!("{done} the translation of line {line} of scene '{scene}':\nsource: {stored}\ntarget: {target}");
    match &current {
        Some(c) if source_changed => w!(
            text,
            "\nNote: the manuscript line has changed since this translation was made; it now reads: {c}"
        ),
        None => text.push_str("\nNote: the scene no longer has this line in the manuscript."),
        _ => {}
    }
    Ok(json!({
        "text": text, "changed": changed, "source_changed": source_changed,
        "manuscript_line": current, "translation": e.flat(),
    }))
}

pub(super) fn read_scene(a: &Call, cx: &mut Cx) -> Out {
    let lines = scene_lines(cx.project(), cx.bible(), a.text("scene"))?;
    let (scene, total) = (&lines.scene, lines.lines.len());
    let from = a.num("from_line").unwrap_or(1).max(1) as usize;
    if total > 0 && from > total {
        let message =
            format!("scene '{scene}' has lines 1 to {total}; 'from_line' {from} is past the end");
        return Err(ToolError::new("out_of_range", message));
    }
    let view = translation::view(cx.bible(), scene, &lines.lines);
    let (mut shown, mut body) = (Vec::new(), String::new());
    for line in view.lines.iter().skip(from - 1).take(MAX_SCENE_LINES) {
        let (n, source, t, stale) = (line.number, line.source, line.translation, line.stale);
        w!(body, "\n{n}. {source}");
        match t {
            Some(t) => w!(
                body,
                "\n   → {}{}",
                t.text("target"),
                origin_tag(t, "target")
            ),
            None => body.push_str("\n   → (untranslated)"),
        }
        if let Some(t) = t.filter(|_| stale) {
            let was = preview(t.text("source"), 200);
            w!(
                body,
                "\n   ! the manuscript line changed since this translation (it was: {was})"
            );
        }
        let (target, origin) = (t.map(|t| t.get("target")), t.map(|t| t.origin("target")));
        shown.push(json!({
            "line": n, "source": source, "target": target, "target_origin": origin,
            "stale": stale, "translated": t.is_some(),
        }));
    }
    let (untranslated, orphans) = (&view.untranslated, &view.orphans);
    let (done, left) = (view.translated(), untranslated.len());
    let (title, (start, end)) = (&lines.chapter_title, lines.span);
    let mut text = format!(
        "Scene '{scene}' (chapter '{title}', chars {start}-{end}): {total} lines, {done} translated, {left} untranslated"
    );
    if !untranslated.is_empty() {
        w!(text, " (lines {})", numbers(untranslated));
    }
    w!(text, ".{body}");
    let next = from + shown.len();
    if next <= total {
        w!(
            text,
            "\n(lines {next} to {total} not shown; call again with from_line {next})"
        );
    }
    if !orphans.is_empty() {
        let list = numbers(orphans);
        w!(
            text,
            "\nTranslations saved for lines the scene no longer has: {list}."
        );
    }
    Ok(json!({
        "text": text, "scene": scene, "chapter": lines.chapter_id, "total": total, "translated": done,
        "untranslated": untranslated, "lines": shown, "orphans": orphans,
    }))
}

// QA checks.

/// A QA check under way: the call, the check (`style`, `consistency` or `review`), the scene
/// and the line's source (when a line is given).
struct Check<'c> {
    a: &'c Args,
    check: &'static str,
    scene: String,
    source: Option<String>,
}

impl<'c> Check<'c> {
    fn new(a: &'c Args, cx: &Cx, check: &'static str) -> Res<Self> {
        let lines = scene_lines(cx.project(), cx.bible(), a.text("scene"))?;
        let line = |n: u64| lines.line(n).map(str::to_string);
        let source = a.num("line").map(line).transpose()?;
        let scene = lines.scene;
        Ok(Self {
            a,
            check,
            scene,
            source,
        })
    }

    /// The message given (trimmed), if any.
    fn message(&self) -> Option<&str> {
        self.a.trimmed("message").filter(|m| !m.is_empty())
    }

    /// The saved translation of `line`, or a `not_found` error saying what to do with `verb`.
    fn target(&self, cx: &Cx, line: u64, verb: &str) -> Res<String> {
        let (scene, bible) = (&self.scene, cx.bible());
        let t = bible.get(Translation, &translation_id(scene, line));
        let t = t.map(|t| t.text("target"));
        let target = t.filter(|t| !t.trim().is_empty()).map(str::to_string);
        target.ok_or_else(|| {
            ToolError::not_found(format!(
                "line {line} of scene '{scene}' has no translation to {verb}; save one with translation_create_line first"
            ))
        })
    }

    /// Record the finding (the message, and what a measurement `found`, if it did) on `line`,
    /// unless there is neither; answer with the record, the `report` and the measured `facts`.
    fn finish(
        &self,
        cx: &mut Cx,
        line: Option<u64>,
        found: Option<String>,
        report: &str,
        facts: Value,
    ) -> Out {
        let finding = match (self.message(), found) {
            (Some(m), Some(found)) => Some(format!("{m}\n{found}")),
            (m, found) => found.or(m.map(str::to_string)),
        };
        let Some(message) = finding else {
            let report = format!("{report} No QA record was made.");
            return Ok(self.answer(Value::Null, report, facts));
        };
        let (check, scene) = (self.check, &self.scene);
        let severity = self.a.opt("severity").unwrap_or("warning");
        let at = line.map(|line| format!("-{line}")).unwrap_or_default();
        let place = line
            .map(|line| format!("line {line} of "))
            .unwrap_or_default();
        let hint = format!("{check}-{scene}{at}");
        let place = format!("{place}scene '{scene}'");
        let id = cx.bible().fresh_id(Qa, &hint);
        let mut fields = vec![("check", json!(check)), ("scene", json!(scene))];
        fields.extend([("severity", json!(severity)), ("message", json!(message))]);
        fields.extend(line.map(|line| ("line", json!(line))));
        let fields = fields.into_iter().map(|(f, v)| (f.to_string(), v));
        let fields = fields.collect();
        let record = cx.bible_create(Qa, &id, fields)?;
        let made = format!("Recorded {check} QA '{id}' ({severity}) on {place}: {message}");
        let text = match report {
            "" => made,
            _ => format!("{made}\n{report}"),
        };
        Ok(self.answer(record, text, facts))
    }

    fn answer(&self, record: Value, text: String, facts: Value) -> Value {
        let mut out = json!({"text": text, "record": record});
        if let (Value::Object(out), Value::Object(facts)) = (&mut out, facts) {
            out.extend(facts);
        }
        out
    }

    /// A finding without a measurement: the message is required (`missing` says so).
    fn plain(&self, cx: &mut Cx, missing: &str) -> Out {
        if self.message().is_none() {
            return Err(ToolError::invalid_args(missing));
        }
        self.finish(cx, self.a.num("line"), None, "", json!({}))
    }
}

pub(super) fn style_check(a: &Call, cx: &mut Cx) -> Out {
    let check = Check::new(a, cx, "style")?;
    if !a.flag("check_line_length") {
        let missing =
            "give a 'message' (the finding), or set check_line_length to measure the line";
        return check.plain(cx, missing);
    }
    let needs = "check_line_length needs the 'line' whose translation to measure";
    let line = a.num("line").ok_or(ToolError::invalid_args(needs))?;
    let target = check.target(cx, line, "measure")?;
    let ui = cx.bible().get(UiSettings, "ui");
    let setting = |name: &str| ui.and_then(|u| u.get(name).as_u64());
    let (limit, per_box) = (setting("line_length_limit"), setting("lines_per_box"));
    let Some(limit) = limit else {
        if check.message().is_none() {
            return Err(ToolError::not_found(
                "the UI settings have no line_length_limit, so there is nothing to measure against (ui_read_settings shows them); give a 'message' to record a finding anyway",
            ));
        }
        let report = "The line length was not checked: the UI settings have no line_length_limit.";
        let facts = json!({"line_length": {"checked": false}});
        return check.finish(cx, Some(line), None, report, facts);
    };
    let fit = translation::fit(&target, limit, per_box);
    let (longest, count, exceeded) = (fit.longest, fit.lines, !fit.problems.is_empty());
    let facts = json!({"line_length": {
        "checked": true, "limit": limit, "lines_per_box": per_box, "longest": longest,
        "display_lines": count, "exceeded": exceeded,
    }});
    let problems = fit.problems.join("; ");
    let fits = per_box.map_or("", |_| " and it fits its text box");
    let report = match exceeded {
        true => format!("The translation does not fit: {problems}."),
        false => format!(
            "The translation fits: its longest line is {longest} of {limit} characters{fits}."
        ),
    };
    let found = exceeded.then(|| format!("Line length: {problems}."));
    check.finish(cx, Some(line), found, &report, facts)
}

pub(super) fn consistency_check(a: &Call, cx: &mut Cx) -> Out {
    let check = Check::new(a, cx, "consistency")?;
    if !a.flag("check_glossary") {
        let missing = "give a 'message' (the finding), or set check_glossary to check the line against the glossary";
        return check.plain(cx, missing);
    }
    let (Some(line), Some(source)) = (a.num("line"), &check.source) else {
        let message = "check_glossary needs the 'line' whose translation to check";
        return Err(ToolError::invalid_args(message));
    };
    let target = check.target(cx, line, "check")?;
    let terms = glossary::terms_in(cx.bible(), source, &target);
    let used: Vec<&str> = terms.iter().map(|(e, _)| e.id.as_str()).collect();
    let not_followed = terms
        .iter()
        .filter(|(_, followed)| !followed)
        .map(|(e, _)| {
            let (src, tgt, id) = (e.text("term_src").trim(), e.text("term_tgt").trim(), &e.id);
            format!("'{src}' should be translated as '{tgt}' (glossary '{id}')")
        });
    let missing: Vec<String> = not_followed.collect();
    let (not_followed, terms) = (missing.join("; "), used.join(", "));
    let report = match (used.is_empty(), missing.is_empty()) {
        (true, _) => "No glossary term appears in the source line.".into(),
        (false, true) => format!(
            "The translation uses the glossary's translation of every term in the line ({terms})."
        ),
        (false, false) => format!("Glossary terms not followed: {not_followed}."),
    };
    let found = (!missing.is_empty()).then(|| format!("Glossary: {not_followed}."));
    let facts = json!({"glossary": {"terms": used, "missing": missing}});
    check.finish(cx, Some(line), found, &report, facts)
}

pub(super) fn review_check(a: &Call, cx: &mut Cx) -> Out {
    a.non_blank("message")?;
    let check = Check::new(a, cx, "review")?;
    check.finish(cx, a.num("line"), None, "", json!({}))
}

// Context documents and status.

pub(super) fn list_docs(_: &Call, cx: &mut Cx) -> Out {
    let docs: Vec<&Entity> = cx.bible().list(Contextdoc).collect();
    let mut text = format!("{} context document(s):", docs.len());
    if docs.is_empty() {
        text = "There are no context documents.".to_string();
    }
    let mut list = Vec::new();
    for d in &docs {
        let (id, body, title) = (&d.id, d.text("text"), d.text("title"));
        let chars = body.chars().count();
        let opening = preview(&join(body.split_whitespace(), " "), 160);
        let shown = format!(" — {opening}");
        let shown = if opening.is_empty() { "" } else { &shown };
        w!(text, "\n- {id}: {title} ({chars} chars){shown}");
        list.push(json!({"id": id, "title": title, "chars": chars, "opening": opening, "version": d.version}));
    }
    Ok(json!({"text": text, "docs": list}))
}

pub(super) fn read_doc(a: &Call, cx: &mut Cx) -> Out {
    let doc = cx.bible().require(Contextdoc, a.text("id").trim())?;
    let (id, body, title) = (&doc.id, doc.text("text"), doc.text("title"));
    let (total, offset) = (body.chars().count(), a.num("offset").unwrap_or(0) as usize);
    if offset > total {
        let message = format!("'offset' {offset} is past the end of '{id}' ({total} characters)");
        return Err(ToolError::new("out_of_range", message));
    }
    let part: String = body.chars().skip(offset).take(DOC_CHUNK_CHARS).collect();
    let end = offset + part.chars().count();
    let next = (end < total).then_some(end);
    let showing = format!(", showing {offset}-{end}");
    let showing = if offset > 0 || next.is_some() {
        &showing
    } else {
        ""
    };
    let origin = origin_tag(doc, "text");
    let mut text =
        format!("Context document '{id}': {title}{origin} ({total} chars{showing})\n\n{part}");
    if let Some(next) = next {
        w!(text, "\n\n(continues: read on with offset {next})");
    }
    Ok(json!({
        "text": text, "id": id, "title": title, "content": part, "offset": offset,
        "next_offset": next, "total_chars": total,
    }))
}

pub(super) fn status(_: &Call, cx: &mut Cx) -> Out {
    let bible = cx.bible();
    let all = Kind::ALL;
    let (mut counts, mut each, mut scene_count) = (serde_json::Map::new(), Vec::new(), 0);
    for k in all {
        let n = bible.list(k).count();
        counts.insert(k.name().to_string(), json!(n));
        each.push(format!("{n} {k}"));
        if k == Scene {
            scene_count = n;
        }
    }
    let mut text = format!("Story bible: {}.", each.join(", "));
    let (mut scenes, mut all_done, mut all_total) = (Vec::new(), 0usize, 0usize);
    if scene_count > 0 {
        text.push_str("\nTranslation progress:");
    }
    for id in bible.list(Scene).map(|s| &s.id) {
        match scene_lines(cx.project(), bible, id) {
            Ok(lines) => {
                let total = lines.lines.len();
                let done = translation::view(bible, id, &lines.lines).translated();
                (all_done, all_total) = (all_done + done, all_total + total);
                let pct = (done * 100).checked_div(total).unwrap_or(100);
                w!(text, "\n- {id}: {done}/{total} lines ({pct}%)");
                scenes.push(json!({"scene": id, "translated": done, "total": total}));
            }
            Err(e) => {
                w!(text, "\n- {id}: lines unknown ({})", e.message);
                scenes.push(json!({"scene": id, "error": e.message}));
            }
        }
    }
    if scene_count > 0 {
        w!(text, "\nIn all: {all_done}/{all_total} lines translated.");
    }
    let [by_severity, by_check] = translation::qa_counts(bible);
    let list = |m: &BTreeMap<&str, usize>| join(m.iter().map(|(k, n)| format!("{n} {k}")), ", ");
    // As JSON objects, by name.
    let counted = |m: &BTreeMap<&str, usize>| {
        let mut object = serde_json::Map::new();
        for (k, n) in m {
            object.insert(k.to_string(), json!(n));
        }
        Value::Object(object)
    };
    match by_severity.is_empty() {
        true => text.push_str("\nQA: no findings."),
        false => {
            let (severity, check) = (list(&by_severity), list(&by_check));
            w!(
                text,
                "\nQA findings by severity: {severity}; by check: {check}."
            );
        }
    }
    Ok(json!({
        "text": text, "counts": counts,
        "translation": {"scenes": scenes, "translated": all_done, "total": all_total},
        "qa": {"by_severity": counted(&by_severity), "by_check": counted(&by_check)},
    }))
}
