//! Language: the glossary, the style guide and UI settings, translations, machine translation,
//! QA checks, context documents and `context_read_status` (see [`super::TOOLS`] for the
//! tools). Here are their handlers.
//!
//! A scene's lines are the non-empty lines of its span of its chapter's text, trimmed and
//! numbered from 1; a translation is the entity `<scene>:<line>`. A call that fails halfway (a
//! merge, say) changes nothing.
//!
//! The machine-translation suggestion needs an HTTP call, which the synchronous edit path
//! cannot make: the core runs `translation_create_mtl_suggestion` (and answers
//! `translation_check_mtl_available` from its settings) in `src/core/mtl.rs`, planning it with
//! [`mtl_plan`]. Agents never change context documents: there are only tools to read them.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{parse, tool, Args};
use crate::bible::{is_empty_value, Bible, Entity, Kind};
use crate::policy::{self, Action, Grant};
use crate::project::Project;
use crate::session::{EditContext, Session};
use crate::tools::{ToolError, ToolRegistry};

/// `translation_create_mtl_suggestion`.
pub const MTL_SUGGESTION: &str = "translation_create_mtl_suggestion";

/// The tools the core runs itself (they need its settings or an HTTP call).
pub const MTL_TOOLS: [&str; 2] = ["translation_check_mtl_available", MTL_SUGGESTION];

/// Most characters of a context document one `contextdoc_read_doc` call returns.
pub const DOC_CHUNK_CHARS: usize = 20_000;

/// Most lines one `translation_read_scene` call shows.
pub const MAX_SCENE_LINES: usize = 200;

type Out = Result<Value, ToolError>;

/// Whether the core runs `name` itself ([`MTL_TOOLS`]).
pub fn is_mtl(name: &str) -> bool {
    MTL_TOOLS.contains(&name)
}

// Formatting.

fn shorten(s: &str, max: usize) -> String {
    match s.chars().count() <= max {
        true => s.to_string(),
        false => s.chars().take(max).collect::<String>() + "…",
    }
}

/// A value as a model reads it: texts as they are, lists joined, spans as `start-end`.
fn value_text(value: &Value) -> String {
    match value {
        Value::Null => "(empty)".into(),
        Value::String(s) if s.trim().is_empty() => "(empty)".into(),
        Value::String(s) => s.clone(),
        Value::Array(items) if items.is_empty() => "(empty)".into(),
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string));
            items.collect::<Vec<_>>().join(", ")
        }
        Value::Object(o) if o.contains_key("start") && o.contains_key("end") => {
            format!("chars {}-{}", o["start"], o["end"])
        }
        other => other.to_string(),
    }
}

/// ` [origin]`, or nothing for a field never written.
fn origin_tag(entity: &Entity, field: &str) -> String {
    entity
        .origin(field)
        .map(|o| format!(" [{o}]"))
        .unwrap_or_default()
}

/// An entity as text: a header line, then each field of its kind with its origin (a
/// multi-line value indented below its name).
fn entity_block(entity: &Entity) -> String {
    let mut out = format!(
        "{} '{}' (version {})",
        entity.kind, entity.id, entity.version
    );
    for spec in entity.kind.fields() {
        let (field, value) = (spec.name, value_text(entity.get(spec.name)));
        let origin = origin_tag(entity, field);
        out.push_str(&match value.contains('\n') {
            true => {
                let indented: Vec<String> = value.lines().map(|l| format!("    {l}")).collect();
                format!("\n  {field}{origin}:\n{}", indented.join("\n"))
            }
            false => format!("\n  {field}: {value}{origin}"),
        });
    }
    out
}

fn eq_ci(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

/// A required, non-blank text argument, trimmed.
fn non_blank(a: &Args, name: &str) -> Result<String, ToolError> {
    match a.text(name).trim() {
        "" => Err(ToolError::invalid_args(format!(
            "'{name}' must not be empty"
        ))),
        value => Ok(value.to_string()),
    }
}

/// A text argument, trimmed, if given.
fn trimmed<'a>(a: &'a Args, name: &str) -> Option<&'a str> {
    a.opt(name).map(str::trim)
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
    pub fn line(&self, line: u64) -> Result<&str, ToolError> {
        let index = usize::try_from(line).ok().and_then(|n| n.checked_sub(1));
        let found = index.and_then(|i| self.lines.get(i)).map(String::as_str);
        found.ok_or_else(|| {
            let scene = &self.scene;
            ToolError::new("out_of_range", match self.lines.len() {
                0 => format!("scene '{scene}' has no lines (its span of chapter '{}' is empty)", self.chapter_title),
                n => format!("scene '{scene}' has lines 1 to {n}, not {line}; translation_read_scene shows them"),
            })
        })
    }
}

/// The lines of scene `scene`: `not_found` for an unknown scene or a chapter no longer in the
/// project.
pub fn scene_lines(project: &Project, bible: &Bible, scene: &str) -> Result<SceneLines, ToolError> {
    let entity = bible.require(Kind::Scene, scene.trim())?;
    let chapter_ref = entity.text("chapter").trim();
    let chapter = project.find_chapter(chapter_ref).map_err(|_| {
        ToolError::not_found(format!(
            "scene '{}' belongs to chapter '{}', which is not in the project",
            entity.id,
            shorten(chapter_ref, 80)
        ))
    })?;
    let len = chapter.len_chars();
    let span = entity.get("span");
    let start = span.get("start").and_then(Value::as_u64).unwrap_or(0);
    let end = span
        .get("end")
        .and_then(Value::as_u64)
        .unwrap_or(len as u64);
    let end = usize::try_from(end).unwrap_or(len).min(len);
    let start = usize::try_from(start).unwrap_or(len).min(end);
    let text = chapter.text().slice(start..end).to_string();
    let lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    Ok(SceneLines {
        scene: entity.id.clone(),
        chapter_id: chapter.id.clone(),
        chapter_title: chapter.title.clone(),
        span: (start, end),
        lines,
    })
}

/// The id of a scene's translated line.
pub fn translation_id(scene: &str, line: u64) -> String {
    format!("{scene}:{line}")
}

/// The translations of a scene, by line.
fn translations_of<'b>(bible: &'b Bible, scene: &str) -> BTreeMap<u64, &'b Entity> {
    let of_scene = bible
        .list(Kind::Translation)
        .filter(|t| t.text("scene") == scene);
    of_scene
        .filter_map(|t| t.get("line").as_u64().map(|n| (n, t)))
        .collect()
}

/// How many translations of a scene's lines from `first` to `last` have a target.
fn translated(bible: &Bible, scene: &str, first: u64, last: usize) -> usize {
    let translations = translations_of(bible, scene);
    let done = |(n, t): &(&u64, &&Entity)| {
        **n >= first && **n as usize <= last && !is_empty_value(Some(t.get("target")))
    };
    translations.iter().filter(done).count()
}

// Glossary.

/// `glossary_search_term`.
pub fn search_term(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let query = a.text("query").trim().to_lowercase();
    let limit = a.num("limit").unwrap_or(50).clamp(1, 500) as usize;
    let matches = |e: &&Entity| {
        query.is_empty()
            || ["term_src", "term_tgt", "notes"]
                .iter()
                .any(|f| e.text(f).to_lowercase().contains(&query))
    };
    let mut found: Vec<&Entity> = cx.bible().list(Kind::Glossary).filter(matches).collect();
    // Exact term matches first, then by id.
    found.sort_by_key(|e| {
        (
            !(eq_ci(e.text("term_src"), &query) || eq_ci(e.text("term_tgt"), &query)),
            e.id.clone(),
        )
    });
    let total = found.len();
    found.truncate(limit);
    let mut text = match query.is_empty() {
        true => format!("The glossary has {total} entries."),
        false => {
            let y = if total == 1 { "y" } else { "ies" };
            format!(
                "{total} glossary entr{y} match '{}'.",
                shorten(a.text("query").trim(), 80)
            )
        }
    };
    for e in &found {
        // `- id: source → target [origins] — notes`.
        let tgt = e.text("term_tgt").trim();
        let tgt = if tgt.is_empty() {
            "(no translation)"
        } else {
            tgt
        };
        let (src, src_origin, tgt_origin) = (
            e.text("term_src").trim(),
            origin_tag(e, "term_src"),
            origin_tag(e, "term_tgt"),
        );
        text.push_str(&format!(
            "\n- {}: {src}{src_origin} → {tgt}{tgt_origin}",
            e.id
        ));
        let notes = e.text("notes").trim();
        if !notes.is_empty() {
            let (origin, notes) = (
                origin_tag(e, "notes"),
                shorten(&notes.replace('\n', " "), 200),
            );
            text.push_str(&format!(" — notes{origin}: {notes}"));
        }
    }
    if total > found.len() {
        let more = total - found.len();
        text.push_str(&format!(
            "\n({more} more not shown; narrow the query or raise 'limit')"
        ));
    }
    if total == 0 && !query.is_empty() {
        text.push_str(" glossary_create_entry adds one.");
    }
    let entries: Vec<Value> = found.iter().map(|e| e.flat()).collect();
    Ok(json!({"text": text, "query": a.text("query"), "count": total, "entries": entries}))
}

/// `glossary_read_entry`.
pub fn read_entry(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let entity = cx.bible().require(Kind::Glossary, a.text("id").trim())?;
    Ok(json!({"text": entity_block(entity), "entry": entity.flat()}))
}

/// `glossary_create_entry`.
pub fn create_entry(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let term = non_blank(a, "term_src")?;
    if let Some(existing) = cx
        .bible()
        .list(Kind::Glossary)
        .find(|e| eq_ci(e.text("term_src"), &term))
    {
        return Err(ToolError::new(
            "exists",
            format!(
                "the glossary already has an entry for '{}': '{}'; change it with glossary_update_entry (or merge duplicates with glossary_merge_entries)",
                shorten(&term, 80),
                existing.id
            ),
        )
        .with_details(json!({"entry": existing.flat()})));
    }
    let id = match trimmed(a, "id") {
        Some(id) if !id.is_empty() => id.to_string(),
        _ => cx.bible().fresh_id(Kind::Glossary, &term),
    };
    let mut fields = vec![("term_src".to_string(), json!(term))];
    for field in ["term_tgt", "notes"] {
        fields.extend(trimmed(a, field).map(|v| (field.to_string(), json!(v))));
    }
    cx.bible_create(Kind::Glossary, &id, fields)?;
    let entity = cx.bible().require(Kind::Glossary, &id)?;
    Ok(json!({"text": format!("Created {}", entity_block(entity)), "entry": entity.flat()}))
}

/// `glossary_update_entry`.
pub fn update_entry(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let id = a.text("id").trim().to_string();
    let before = cx.bible().require(Kind::Glossary, &id)?.version;
    let fields = ["term_tgt", "notes"].into_iter();
    let changes: Vec<(String, Value)> = fields
        .filter_map(|f| trimmed(a, f).map(|v| (f.to_string(), json!(v))))
        .collect();
    if changes.is_empty() {
        return Err(ToolError::invalid_args(
            "give 'term_tgt', 'notes' or both: the fields to change",
        ));
    }
    cx.bible_update(Kind::Glossary, &id, changes)?;
    let entity = cx.bible().require(Kind::Glossary, &id)?;
    let changed = entity.version != before;
    let done = if changed {
        "Updated"
    } else {
        "No change (same values):"
    };
    Ok(
        json!({"text": format!("{done} {}", entity_block(entity)), "changed": changed, "entry": entity.flat()}),
    )
}

/// Append `part` to `notes` as its own paragraph, unless it is empty or already there.
fn add_note(notes: &mut String, part: &str) {
    let part = part.trim();
    if part.is_empty() || notes.contains(part) {
        return;
    }
    if !notes.is_empty() {
        notes.push_str("\n\n");
    }
    notes.push_str(part);
}

/// `glossary_merge_entries`: all or nothing, and one approval covers the whole merge.
pub fn merge_entries(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let keep_id = a.text("keep").trim().to_string();
    let keep = cx.bible().require(Kind::Glossary, &keep_id)?.clone();
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
        return Err(ToolError::invalid_args(
            "'merge' must list at least one entry id to fold into the kept one",
        ));
    }
    let merged: Vec<Entity> = ids
        .iter()
        .map(|id| cx.bible().require(Kind::Glossary, id).cloned())
        .collect::<Result<_, _>>()?;

    // The combined entry.
    let mut notes = keep.text("notes").trim().to_string();
    let mut term_tgt = keep.text("term_tgt").trim().to_string();
    for e in &merged {
        let src = e.text("term_src").trim();
        if !eq_ci(src, keep.text("term_src")) {
            add_note(&mut notes, &format!("Also written: {src}"));
        }
        let tgt = e.text("term_tgt").trim();
        if !tgt.is_empty() && term_tgt.is_empty() {
            term_tgt = tgt.to_string();
        } else if !tgt.is_empty() && !eq_ci(tgt, &term_tgt) {
            add_note(&mut notes, &format!("Also translated as: {tgt}"));
        }
        add_note(&mut notes, e.text("notes"));
    }
    let mut changes = Vec::new();
    if term_tgt != keep.text("term_tgt") {
        changes.push(("term_tgt".to_string(), json!(term_tgt)));
    }
    if notes != keep.text("notes") {
        changes.push(("notes".to_string(), json!(notes)));
    }

    // What the writer must approve, should any step need approval: every entry the merge
    // touches, at its version now.
    let mut versions = BTreeMap::new();
    for e in std::iter::once(&keep).chain(&merged) {
        versions.insert(Grant::key(Kind::Glossary, &e.id), e.version);
    }
    let mode = cx.policies().mode(a.tool.name);
    let names: Vec<&str> = changes.iter().map(|(f, _)| f.as_str()).collect();
    let mut asks = Vec::new();
    if !changes.is_empty() {
        if let Some(reason) =
            policy::needs_approval(mode, Action::Update, cx.actor(), Some(&keep), &names)
        {
            asks.push(json!({"id": keep.id, "action": "update", "reason": reason}));
        }
    }
    for e in &merged {
        if let Some(reason) = policy::needs_approval(mode, Action::Delete, cx.actor(), Some(e), &[])
        {
            asks.push(json!({"id": e.id, "action": "delete", "reason": reason}));
        }
    }
    // Everything the merge would do, for the writer's card: the kept entry's field changes and
    // every entry it deletes, with all their fields (whoever wrote them).
    let field = |e: &Entity, name: &str, proposed: Value| json!({"field": name, "current": e.get(name), "current_origin": e.origin(name), "proposed": proposed});
    let card = |e: &Entity, action: &str, fields: Vec<Value>| json!({"kind": Kind::Glossary, "id": e.id, "action": action, "title": e.text("term_src"), "fields": fields});
    let mut touched = vec![card(
        &keep,
        "update",
        changes
            .iter()
            .map(|(f, v)| field(&keep, f, v.clone()))
            .collect(),
    )];
    for e in &merged {
        touched.push(card(
            e,
            "delete",
            e.fields.keys().map(|f| field(e, f, Value::Null)).collect(),
        ));
    }
    let widen = |mut error: ToolError| -> ToolError {
        if error.code != "approval_required" {
            return error;
        }
        let listed: Vec<String> = asks
            .iter()
            .filter_map(|a| Some(format!("{} ({})", a["id"].as_str()?, a["action"].as_str()?)))
            .collect();
        if !listed.is_empty() {
            error.message.push_str(&format!(
                " The merge needs approval for: {}; one approval covers the whole merge.",
                listed.join(", ")
            ));
        }
        if let Some(Value::Object(details)) = &mut error.details {
            details.insert("versions".into(), json!(versions));
            details.insert("entries".into(), json!(asks));
            details.insert("changes".into(), json!(touched));
            let proposed = json!({"term_tgt": term_tgt, "notes": notes});
            details.insert(
                "merge".into(),
                json!({"keep": keep.id, "merge": ids, "proposed": proposed}),
            );
        }
        error
    };

    if !changes.is_empty() {
        cx.bible_update(Kind::Glossary, &keep.id, changes)
            .map_err(&widen)?;
    }
    let mut removed = Vec::new();
    for e in &merged {
        removed.push(
            cx.bible_delete(Kind::Glossary, &e.id)
                .map_err(&widen)?
                .flat(),
        );
    }
    let kept = cx.bible().require(Kind::Glossary, &keep.id)?;
    let them = if ids.len() == 1 { "it" } else { "them" };
    Ok(json!({
        "text": format!("Merged {} into '{}' and removed {them}.\n{}", ids.join(", "), kept.id, entity_block(kept)),
        "entry": kept.flat(),
        "merged": ids,
        "removed": removed,
    }))
}

/// `glossary_delete_entry`.
pub fn delete_entry(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let removed = cx.bible_delete(Kind::Glossary, a.text("id").trim())?;
    let (src, tgt) = (
        removed.text("term_src"),
        value_text(removed.get("term_tgt")),
    );
    Ok(json!({
        "text": format!("Removed glossary entry '{}' ({src} → {tgt}).", removed.id),
        "deleted": removed.flat(),
    }))
}

// Style guide and UI settings.

/// `styleguide_read_full`.
pub fn styleguide(_: &Args, cx: &mut EditContext<'_>) -> Out {
    let guide = cx.bible().get(Kind::Styleguide, "styleguide");
    let markdown = guide.map_or("", |g| g.text("markdown")).trim();
    let text = match guide {
        Some(g) if !markdown.is_empty() => {
            format!(
                "Style guide (version {}){}:\n\n{markdown}",
                g.version,
                origin_tag(g, "markdown")
            )
        }
        _ => {
            "There is no style guide yet: follow the glossary and the manuscript's own conventions."
                .into()
        }
    };
    Ok(json!({
        "text": text,
        "exists": !markdown.is_empty(),
        "markdown": markdown,
        "markdown_origin": guide.and_then(|g| g.origin("markdown")),
        "version": guide.map(|g| g.version),
    }))
}

/// `ui_read_settings`.
pub fn ui_settings(_: &Args, cx: &mut EditContext<'_>) -> Out {
    let Some(ui) = cx.bible().get(Kind::UiSettings, "ui") else {
        return Ok(json!({
            "text": "No UI settings are set: there is no line-length limit to respect.",
            "exists": false,
            "line_length_limit": null,
            "lines_per_box": null,
            "notes": null,
        }));
    };
    let mut out = ui.flat();
    let block = entity_block(ui);
    out["text"] = json!(format!(
        "UI settings\n{}",
        block.lines().skip(1).collect::<Vec<_>>().join("\n")
    ));
    out["exists"] = json!(true);
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

/// `translation_check_mtl_available`.
pub fn mtl_available(_: &Args, cx: &mut EditContext<'_>) -> Out {
    Ok(match cx.mtl_endpoint() {
        Some(url) => json!({
            "text": format!("A machine-translation endpoint is set ({}): translation_create_mtl_suggestion can suggest translations.", endpoint_host(url)),
            "available": true,
            "host": endpoint_host(url),
        }),
        None => json!({
            "text": "No machine-translation endpoint is set: translation_create_mtl_suggestion will not work. The writer can set one in the settings ('mtlEndpoint', a LibreTranslate-compatible URL).",
            "available": false,
        }),
    })
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

fn lang_code(a: &Args, name: &str) -> Result<String, ToolError> {
    let (value, code) = (a.text(name), a.text(name).trim());
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if !code.is_empty() && code.len() <= 16 && code.chars().all(allowed) {
        return Ok(code.to_string());
    }
    Err(ToolError::invalid_args(format!(
        "'{name}' must be a language code such as \"en\", \"ja\" or \"zh-Hans\", got \"{}\"",
        shorten(value, 40)
    )))
}

fn plan_from(
    a: &Args,
    project: &Project,
    bible: &Bible,
    endpoint: Option<&str>,
) -> Result<MtlPlan, ToolError> {
    let source_lang = lang_code(a, "source_lang")?;
    let target_lang = lang_code(a, "target_lang")?;
    let endpoint = endpoint
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .ok_or_else(no_mtl_endpoint)?;
    let lines = scene_lines(project, bible, a.text("scene"))?;
    let line = a.num("line").unwrap_or(0);
    let source = lines.line(line)?.to_string();
    let (endpoint, scene) = (endpoint.to_string(), lines.scene);
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
) -> Result<MtlPlan, ToolError> {
    let (_, args) = registry.validate_call(MTL_SUGGESTION, args)?;
    let tool = tool(MTL_SUGGESTION).ok_or_else(|| registry.unknown_tool(MTL_SUGGESTION))?;
    plan_from(
        &parse(tool, Value::Object(args))?,
        &session.project,
        &session.bible,
        endpoint,
    )
}

/// The result of a suggestion: the endpoint's translation, as data for the agent.
pub fn mtl_suggestion(plan: &MtlPlan, suggestion: &str, detected: Option<Value>) -> Value {
    json!({
        "text": format!(
            "Machine-translation suggestion for line {} of scene '{}' ({} → {}):\nsource: {}\nsuggestion: {}\nIt is only a suggestion: check it against the glossary and style guide, then save a translation with translation_create_line (or translation_update_line).",
            plan.line, plan.scene, plan.source_lang, plan.target_lang, plan.source, suggestion
        ),
        "scene": plan.scene,
        "line": plan.line,
        "source": plan.source,
        "suggestion": suggestion,
        "source_lang": plan.source_lang,
        "target_lang": plan.target_lang,
        "detected_language": detected,
    })
}

/// `translation_create_mtl_suggestion` on the synchronous path: checked, but the HTTP call is
/// the core's (`src/core/mtl.rs`).
pub fn mtl_suggestion_sync(a: &Args, cx: &mut EditContext<'_>) -> Out {
    plan_from(a, cx.project(), cx.bible(), cx.mtl_endpoint())?;
    Err(ToolError::new(
        "needs_network",
        "translation_create_mtl_suggestion calls the translation endpoint; run it through the core (execute or run)",
    ))
}

// Translations.

/// `translation_create_line`.
pub fn create_line(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let target = non_blank(a, "target")?;
    let lines = scene_lines(cx.project(), cx.bible(), a.text("scene"))?;
    let line = a.num("line").unwrap_or(0);
    let source = lines.line(line)?.to_string();
    let (scene, id) = (&lines.scene, translation_id(&lines.scene, line));
    if let Some(existing) = cx.bible().get(Kind::Translation, &id) {
        let (shown, origin) = (
            shorten(existing.text("target"), 120),
            origin_tag(existing, "target"),
        );
        return Err(ToolError::new(
            "exists",
            format!("line {line} of scene '{scene}' already has a translation ({shown}{origin}); change it with translation_update_line"),
        )
        .with_details(json!({"translation": existing.flat()})));
    }
    let fields = [
        ("scene", json!(scene)),
        ("line", json!(line)),
        ("source", json!(source)),
        ("target", json!(target)),
    ];
    let flat = cx.bible_create(
        Kind::Translation,
        &id,
        fields.map(|(f, v)| (f.to_string(), v)).to_vec(),
    )?;
    let total = lines.lines.len();
    let done = translated(cx.bible(), scene, 0, total);
    Ok(json!({
        "text": format!(
            "Saved the translation of line {line} of scene '{scene}':\nsource: {source}\ntarget: {target}\nThe scene has {done} of {total} lines translated."
        ),
        "translation": flat,
        "translated": done,
        "total": total,
    }))
}

/// `translation_update_line`.
pub fn update_line(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let target = non_blank(a, "target")?;
    let scene = cx
        .bible()
        .require(Kind::Scene, a.text("scene").trim())?
        .id
        .clone();
    let line = a.num("line").unwrap_or(0);
    let id = translation_id(&scene, line);
    let Some(before) = cx.bible().get(Kind::Translation, &id).map(|t| t.version) else {
        return Err(ToolError::not_found(format!(
            "line {line} of scene '{scene}' has no translation yet; save one with translation_create_line"
        )));
    };
    // The manuscript line now, when the scene still has it (to say if it changed).
    let lines = scene_lines(cx.project(), cx.bible(), &scene);
    let current = lines
        .ok()
        .and_then(|l| l.line(line).ok().map(str::to_string));
    cx.bible_update(
        Kind::Translation,
        &id,
        vec![("target".to_string(), json!(target))],
    )?;
    let entity = cx.bible().require(Kind::Translation, &id)?;
    let stored = entity.text("source");
    let source_changed = current.as_deref().is_some_and(|c| c != stored);
    let done = if entity.version != before {
        "Updated"
    } else {
        "No change to"
    };
    let mut text = format!("{done} the translation of line {line} of scene '{scene}':\nsource: {stored}\ntarget: {target}");
    match &current {
        Some(c) if source_changed => text.push_str(&format!(
            "\nNote: the manuscript line has changed since this translation was made; it now reads: {c}"
        )),
        None => text.push_str("\nNote: the scene no longer has this line in the manuscript."),
        _ => {}
    }
    Ok(json!({
        "text": text,
        "changed": entity.version != before,
        "source_changed": source_changed,
        "manuscript_line": current,
        "translation": entity.flat(),
    }))
}

fn numbers(ns: &[u64]) -> String {
    ns.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

/// `translation_read_scene`.
pub fn read_scene(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let lines = scene_lines(cx.project(), cx.bible(), a.text("scene"))?;
    let translations = translations_of(cx.bible(), &lines.scene);
    let (scene, total) = (&lines.scene, lines.lines.len());
    let from = a.num("from_line").unwrap_or(1).max(1) as usize;
    if total > 0 && from > total {
        return Err(ToolError::new(
            "out_of_range",
            format!("scene '{scene}' has lines 1 to {total}; 'from_line' {from} is past the end"),
        ));
    }
    let (mut shown, mut untranslated, mut body) = (Vec::new(), Vec::new(), String::new());
    for (i, source) in lines.lines.iter().enumerate() {
        let n = i as u64 + 1;
        let t = translations
            .get(&n)
            .filter(|t| !is_empty_value(Some(t.get("target"))));
        if t.is_none() {
            untranslated.push(n);
        }
        if (i + 1) < from || shown.len() >= MAX_SCENE_LINES {
            continue;
        }
        body.push_str(&format!("\n{n}. {source}"));
        match t {
            Some(t) => {
                body.push_str(&format!(
                    "\n   → {}{}",
                    t.text("target"),
                    origin_tag(t, "target")
                ));
                if t.text("source") != source {
                    let was = shorten(t.text("source"), 200);
                    body.push_str(&format!(
                        "\n   ! the manuscript line changed since this translation (it was: {was})"
                    ));
                }
            }
            None => body.push_str("\n   → (untranslated)"),
        }
        shown.push(json!({
            "line": n,
            "source": source,
            "target": t.map(|t| t.get("target").clone()),
            "target_origin": t.and_then(|t| t.origin("target")),
            "stale": t.is_some_and(|t| t.text("source") != source),
            "translated": t.is_some(),
        }));
    }
    let orphans: Vec<u64> = translations
        .keys()
        .copied()
        .filter(|n| *n == 0 || *n as usize > total)
        .collect();
    let done = total - untranslated.len();
    let (title, (start, end), left) = (&lines.chapter_title, lines.span, untranslated.len());
    let mut text = format!(
        "Scene '{scene}' (chapter '{title}', chars {start}-{end}): {total} lines, {done} translated, {left} untranslated"
    );
    if !untranslated.is_empty() {
        text.push_str(&format!(" (lines {})", numbers(&untranslated)));
    }
    text.push('.');
    text.push_str(&body);
    let next = from + shown.len();
    if next <= total {
        text.push_str(&format!(
            "\n(lines {next} to {total} not shown; call again with from_line {next})"
        ));
    }
    if !orphans.is_empty() {
        text.push_str(&format!(
            "\nTranslations saved for lines the scene no longer has: {}.",
            numbers(&orphans)
        ));
    }
    Ok(json!({
        "text": text,
        "scene": scene,
        "chapter": lines.chapter_id,
        "total": total,
        "translated": done,
        "untranslated": untranslated,
        "lines": shown,
        "orphans": orphans,
    }))
}

// QA checks.

/// Record a QA finding of `check` on the call's scene and `line`; returns the record's flat
/// view and a line about it.
fn record(
    cx: &mut EditContext<'_>,
    a: &Args,
    check: &str,
    scene: &str,
    line: Option<u64>,
    message: String,
) -> Result<(Value, String), ToolError> {
    let severity = a.opt("severity").unwrap_or("warning");
    let hint = match line {
        Some(line) => format!("{check}-{scene}-{line}"),
        None => format!("{check}-{scene}"),
    };
    let id = cx.bible().fresh_id(Kind::Qa, &hint);
    let mut fields = vec![
        ("check".to_string(), json!(check)),
        ("scene".to_string(), json!(scene)),
        ("severity".to_string(), json!(severity)),
        ("message".to_string(), json!(message)),
    ];
    fields.extend(line.map(|line| ("line".to_string(), json!(line))));
    let flat = cx.bible_create(Kind::Qa, &id, fields)?;
    let place = match line {
        Some(line) => format!("line {line} of scene '{scene}'"),
        None => format!("scene '{scene}'"),
    };
    Ok((
        flat,
        format!("Recorded {check} QA '{id}' ({severity}) on {place}: {message}"),
    ))
}

/// Check the scene and line of a QA call: the scene's lines and the line's source.
fn check_place(a: &Args, cx: &EditContext<'_>) -> Result<(SceneLines, Option<String>), ToolError> {
    let lines = scene_lines(cx.project(), cx.bible(), a.text("scene"))?;
    let source = a
        .num("line")
        .map(|n| lines.line(n).map(str::to_string))
        .transpose()?;
    Ok((lines, source))
}

/// The saved translation of a line, or a `not_found` error saying what to do.
fn target_of(
    cx: &EditContext<'_>,
    scene: &str,
    line: u64,
    check: &str,
) -> Result<String, ToolError> {
    let t = cx
        .bible()
        .get(Kind::Translation, &translation_id(scene, line));
    let target = t
        .map(|t| t.text("target").to_string())
        .filter(|t| !t.trim().is_empty());
    target.ok_or_else(|| {
        ToolError::not_found(format!(
            "line {line} of scene '{scene}' has no translation to {check}; save one with translation_create_line first"
        ))
    })
}

/// The result of a check call: the record made (if any), with text.
fn check_result(made: Option<(Value, String)>, report: String, extra: Value) -> Value {
    let (record, line) = made.unwrap_or((Value::Null, String::new()));
    let parts = [line, report].into_iter().filter(|s| !s.is_empty());
    let mut out = json!({"text": parts.collect::<Vec<_>>().join("\n"), "record": record});
    if let (Value::Object(out), Value::Object(extra)) = (&mut out, extra) {
        out.extend(extra);
    }
    out
}

/// `translation_create_style_check`.
pub fn style_check(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let (lines, _) = check_place(a, cx)?;
    let scene = &lines.scene;
    let message = trimmed(a, "message")
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    if !a.flag("check_line_length") {
        let message = message.ok_or_else(|| {
            ToolError::invalid_args(
                "give a 'message' (the finding), or set check_line_length to measure the line",
            )
        })?;
        let made = record(cx, a, "style", scene, a.num("line"), message)?;
        return Ok(check_result(Some(made), String::new(), json!({})));
    }
    let line = a.num("line").ok_or_else(|| {
        ToolError::invalid_args("check_line_length needs the 'line' whose translation to measure")
    })?;
    let target = target_of(cx, scene, line, "measure")?;
    let ui = cx.bible().get(Kind::UiSettings, "ui");
    let limit = ui.and_then(|u| u.get("line_length_limit").as_u64());
    let per_box = ui.and_then(|u| u.get("lines_per_box").as_u64());
    let display: Vec<usize> = target.lines().map(|l| l.chars().count()).collect();
    let longest = display.iter().copied().max().unwrap_or(0);
    let Some(limit) = limit else {
        let Some(message) = message else {
            return Err(ToolError::not_found(
                "the UI settings have no line_length_limit, so there is nothing to measure against (ui_read_settings shows them); give a 'message' to record a finding anyway",
            ));
        };
        let made = record(cx, a, "style", scene, Some(line), message)?;
        let report = "The line length was not checked: the UI settings have no line_length_limit.";
        return Ok(check_result(
            Some(made),
            report.into(),
            json!({"line_length": {"checked": false}}),
        ));
    };
    let mut problems = Vec::new();
    for (i, n) in display
        .iter()
        .enumerate()
        .filter(|(_, n)| **n as u64 > limit)
    {
        problems.push(match display.len() {
            1 => format!("the translation is {n} characters long, over the UI limit of {limit}"),
            _ => format!("display line {} of the translation is {n} characters long, over the UI limit of {limit}", i + 1),
        });
    }
    if let Some(per_box) = per_box.filter(|p| display.len() as u64 > *p) {
        let n = display.len();
        problems.push(format!(
            "the translation has {n} display lines, more than the {per_box} a text box holds"
        ));
    }
    let exceeded = !problems.is_empty();
    let facts = json!({"line_length": {
        "checked": true,
        "limit": limit,
        "lines_per_box": per_box,
        "longest": longest,
        "display_lines": display.len(),
        "exceeded": exceeded,
    }});
    let problems = problems.join("; ");
    let combined = match (message, exceeded) {
        (Some(m), true) => Some(format!("{m}\nLine length: {problems}.")),
        (None, true) => Some(format!("Line length: {problems}.")),
        (m, false) => m,
    };
    let report = match exceeded {
        true => format!("The translation does not fit: {problems}."),
        false => {
            let fits = if per_box.is_some() {
                " and it fits its text box"
            } else {
                ""
            };
            format!(
                "The translation fits: its longest line is {longest} of {limit} characters{fits}."
            )
        }
    };
    let made = combined
        .map(|m| record(cx, a, "style", scene, Some(line), m))
        .transpose()?;
    let report = if made.is_none() {
        format!("{report} No QA record was made.")
    } else {
        report
    };
    Ok(check_result(made, report, facts))
}

/// `translation_create_consistency_check`.
pub fn consistency_check(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let (lines, source) = check_place(a, cx)?;
    let scene = &lines.scene;
    let message = trimmed(a, "message")
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    let (mut report, mut facts) = (String::new(), json!({}));
    let message = if a.flag("check_glossary") {
        let (Some(line), Some(source)) = (a.num("line"), source) else {
            return Err(ToolError::invalid_args(
                "check_glossary needs the 'line' whose translation to check",
            ));
        };
        let target = target_of(cx, scene, line, "check")?.to_lowercase();
        let source = source.to_lowercase();
        let (mut used, mut missing) = (Vec::new(), Vec::new());
        for e in cx.bible().list(Kind::Glossary) {
            let (src, tgt) = (e.text("term_src").trim(), e.text("term_tgt").trim());
            if src.is_empty() || tgt.is_empty() || !source.contains(&src.to_lowercase()) {
                continue;
            }
            used.push(e.id.clone());
            if !target.contains(&tgt.to_lowercase()) {
                missing.push(format!(
                    "'{src}' should be translated as '{tgt}' (glossary '{}')",
                    e.id
                ));
            }
        }
        let not_followed = missing.join("; ");
        report = match (used.is_empty(), missing.is_empty()) {
            (true, _) => "No glossary term appears in the source line.".into(),
            (false, true) => format!(
                "The translation uses the glossary's translation of every term in the line ({}).",
                used.join(", ")
            ),
            (false, false) => format!("Glossary terms not followed: {not_followed}."),
        };
        facts = json!({"glossary": {"terms": used, "missing": missing}});
        match (message, missing.is_empty()) {
            (Some(m), false) => Some(format!("{m}\nGlossary: {not_followed}.")),
            (None, false) => Some(format!("Glossary: {not_followed}.")),
            (m, true) => m,
        }
    } else {
        Some(message.ok_or_else(|| {
            ToolError::invalid_args(
                "give a 'message' (the finding), or set check_glossary to check the line against the glossary",
            )
        })?)
    };
    let made = message
        .map(|m| record(cx, a, "consistency", scene, a.num("line"), m))
        .transpose()?;
    if made.is_none() {
        report.push_str(" No QA record was made.");
    }
    Ok(check_result(made, report, facts))
}

/// `translation_create_review_check`.
pub fn review_check(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let message = non_blank(a, "message")?;
    let (lines, _) = check_place(a, cx)?;
    let made = record(cx, a, "review", &lines.scene, a.num("line"), message)?;
    Ok(check_result(Some(made), String::new(), json!({})))
}

// Context documents.

/// `contextdoc_list_all`.
pub fn list_docs(_: &Args, cx: &mut EditContext<'_>) -> Out {
    let docs: Vec<&Entity> = cx.bible().list(Kind::Contextdoc).collect();
    let mut text = match docs.len() {
        0 => "There are no context documents.".to_string(),
        n => format!("{n} context document(s):"),
    };
    let mut list = Vec::new();
    for d in &docs {
        let (body, title) = (d.text("text"), d.text("title"));
        let chars = body.chars().count();
        let opening = shorten(&body.split_whitespace().collect::<Vec<_>>().join(" "), 160);
        let shown = if opening.is_empty() {
            String::new()
        } else {
            format!(" — {opening}")
        };
        text.push_str(&format!("\n- {}: {title} ({chars} chars){shown}", d.id));
        list.push(json!({"id": d.id, "title": title, "chars": chars, "opening": opening, "version": d.version}));
    }
    Ok(json!({"text": text, "docs": list}))
}

/// `contextdoc_read_doc`.
pub fn read_doc(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let doc = cx.bible().require(Kind::Contextdoc, a.text("id").trim())?;
    let (id, body, title) = (&doc.id, doc.text("text"), doc.text("title"));
    let total = body.chars().count();
    let offset = a.num("offset").unwrap_or(0) as usize;
    if offset > total {
        return Err(ToolError::new(
            "out_of_range",
            format!("'offset' {offset} is past the end of '{id}' ({total} characters)"),
        ));
    }
    let part: String = body.chars().skip(offset).take(DOC_CHUNK_CHARS).collect();
    let end = offset + part.chars().count();
    let next = (end < total).then_some(end);
    let showing = if offset > 0 || next.is_some() {
        format!(", showing {offset}-{end}")
    } else {
        String::new()
    };
    let origin = origin_tag(doc, "text");
    let mut text =
        format!("Context document '{id}': {title}{origin} ({total} chars{showing})\n\n{part}");
    if let Some(next) = next {
        text.push_str(&format!("\n\n(continues: read on with offset {next})"));
    }
    Ok(json!({
        "text": text,
        "id": id,
        "title": title,
        "content": part,
        "offset": offset,
        "next_offset": next,
        "total_chars": total,
    }))
}

// Status.

/// `context_read_status`.
pub fn status(_: &Args, cx: &mut EditContext<'_>) -> Out {
    let bible = cx.bible();
    let counts: BTreeMap<&str, usize> = Kind::ALL
        .iter()
        .map(|k| (k.name(), bible.list(*k).count()))
        .collect();
    let each: Vec<String> = Kind::ALL
        .iter()
        .map(|k| format!("{} {}", counts[k.name()], k.name()))
        .collect();
    let mut text = format!("Story bible: {}.", each.join(", "));
    let mut scenes = Vec::new();
    let (mut all_done, mut all_total) = (0usize, 0usize);
    if counts["scene"] > 0 {
        text.push_str("\nTranslation progress:");
    }
    for scene in bible.list(Kind::Scene) {
        let id = &scene.id;
        match scene_lines(cx.project(), bible, id) {
            Ok(lines) => {
                let total = lines.lines.len();
                let done = translated(bible, id, 1, total);
                (all_done, all_total) = (all_done + done, all_total + total);
                let pct = (done * 100).checked_div(total).unwrap_or(100);
                text.push_str(&format!("\n- {id}: {done}/{total} lines ({pct}%)"));
                scenes.push(json!({"scene": id, "translated": done, "total": total}));
            }
            Err(e) => {
                text.push_str(&format!("\n- {id}: lines unknown ({})", e.message));
                scenes.push(json!({"scene": id, "error": e.message}));
            }
        }
    }
    if counts["scene"] > 0 {
        text.push_str(&format!(
            "\nIn all: {all_done}/{all_total} lines translated."
        ));
    }
    let (mut by_severity, mut by_check) = (
        BTreeMap::<String, usize>::new(),
        BTreeMap::<String, usize>::new(),
    );
    for qa in bible.list(Kind::Qa) {
        let severity = match qa.text("severity") {
            "" => "unspecified",
            s => s,
        };
        *by_severity.entry(severity.to_string()).or_default() += 1;
        *by_check.entry(qa.text("check").to_string()).or_default() += 1;
    }
    let join = |m: &BTreeMap<String, usize>| {
        m.iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    text.push_str(&match by_severity.is_empty() {
        true => "\nQA: no findings.".to_string(),
        false => format!(
            "\nQA findings by severity: {}; by check: {}.",
            join(&by_severity),
            join(&by_check)
        ),
    });
    Ok(json!({
        "text": text,
        "counts": counts,
        "translation": {"scenes": scenes, "translated": all_done, "total": all_total},
        "qa": {"by_severity": by_severity, "by_check": by_check},
    }))
}
