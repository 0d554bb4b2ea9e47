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

use serde_json::{json, Value};

use super::{parse, preview, show, tool, Args, Out};
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

/// Append to a `String` with `format!` arguments.
macro_rules! w {
    ($s:expr, $($t:tt)*) => {
        $s.push_str(&format!($($t)*))
    };
}

/// Whether the core runs `name` itself ([`MTL_TOOLS`]).
pub fn is_mtl(name: &str) -> bool {
    MTL_TOOLS.contains(&name)
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
    for field in entity.kind.fields().iter().map(|f| f.name) {
        let (value, origin) = (show(entity.get(field), '-'), origin_tag(entity, field));
        if value.contains('\n') {
            let indented: Vec<String> = value.lines().map(|l| format!("    {l}")).collect();
            w!(out, "\n  {field}{origin}:\n{}", indented.join("\n"));
        } else {
            w!(out, "\n  {field}: {value}{origin}");
        }
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

fn numbers(ns: &[u64]) -> String {
    ns.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
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
        let (scene, title) = (&self.scene, &self.chapter_title);
        found.ok_or_else(|| match self.lines.len() {
            0 => format!("scene '{scene}' has no lines (its span of chapter '{title}' is empty)"),
            n => format!("scene '{scene}' has lines 1 to {n}, not {line}; translation_read_scene shows them"),
        })
        .map_err(|message| ToolError::new("out_of_range", message))
    }
}

/// The lines of scene `scene`: `not_found` for an unknown scene or a chapter no longer in the
/// project.
pub fn scene_lines(project: &Project, bible: &Bible, scene: &str) -> Result<SceneLines, ToolError> {
    let entity = bible.require(Kind::Scene, scene.trim())?;
    let chapter_ref = entity.text("chapter").trim();
    let chapter = project.find_chapter(chapter_ref).map_err(|_| {
        let (id, chapter) = (&entity.id, preview(chapter_ref, 80));
        ToolError::not_found(format!(
            "scene '{id}' belongs to chapter '{chapter}', which is not in the project"
        ))
    })?;
    let (len, span) = (chapter.len_chars(), entity.get("span"));
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
    let (scene, chapter_id, chapter_title) =
        (entity.id.clone(), chapter.id.clone(), chapter.title.clone());
    Ok(SceneLines {
        scene,
        chapter_id,
        chapter_title,
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

/// How many translations of a scene's lines `first` to `last` have a target.
fn translated(bible: &Bible, scene: &str, first: u64, last: usize) -> usize {
    let done = |(n, t): &(&u64, &&Entity)| {
        **n >= first && **n as usize <= last && !is_empty_value(Some(t.get("target")))
    };
    translations_of(bible, scene).iter().filter(done).count()
}

// Glossary.

/// `glossary_search_term`.
pub(super) fn search_term(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let query = a.text("query").trim().to_lowercase();
    let limit = a.num("limit").unwrap_or(50).clamp(1, 500) as usize;
    let has = |e: &Entity| {
        ["term_src", "term_tgt", "notes"]
            .iter()
            .any(|f| e.text(f).to_lowercase().contains(&query))
    };
    let mut found: Vec<&Entity> = cx
        .bible()
        .list(Kind::Glossary)
        .filter(|e| query.is_empty() || has(e))
        .collect();
    // Exact term matches first, then by id.
    let exact = |e: &Entity| eq_ci(e.text("term_src"), &query) || eq_ci(e.text("term_tgt"), &query);
    found.sort_by_key(|e| (!exact(e), e.id.clone()));
    let total = found.len();
    found.truncate(limit);
    let mut text = match query.is_empty() {
        true => format!("The glossary has {total} entries."),
        false => {
            let (y, q) = (
                if total == 1 { "y" } else { "ies" },
                preview(a.text("query").trim(), 80),
            );
            format!("{total} glossary entr{y} match '{q}'.")
        }
    };
    for e in &found {
        // `- id: source → target [origins] — notes`.
        let (src, tgt) = (e.text("term_src").trim(), e.text("term_tgt").trim());
        let tgt = if tgt.is_empty() {
            "(no translation)"
        } else {
            tgt
        };
        let (src_origin, tgt_origin) = (origin_tag(e, "term_src"), origin_tag(e, "term_tgt"));
        w!(text, "\n- {}: {src}{src_origin} → {tgt}{tgt_origin}", e.id);
        let notes = e.text("notes").trim();
        if !notes.is_empty() {
            let (origin, notes) = (
                origin_tag(e, "notes"),
                preview(&notes.replace('\n', " "), 200),
            );
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

/// `glossary_read_entry`.
pub(super) fn read_entry(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let entity = cx.bible().require(Kind::Glossary, a.text("id").trim())?;
    Ok(json!({"text": entity_block(entity), "entry": entity.flat()}))
}

/// `glossary_create_entry`.
pub(super) fn create_entry(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let term = non_blank(a, "term_src")?;
    let same = |e: &&Entity| eq_ci(e.text("term_src"), &term);
    if let Some(existing) = cx.bible().list(Kind::Glossary).find(same) {
        let (shown, id) = (preview(&term, 80), &existing.id);
        return Err(ToolError::new(
            "exists",
            format!("the glossary already has an entry for '{shown}': '{id}'; change it with glossary_update_entry (or merge duplicates with glossary_merge_entries)"),
        )
        .with_details(json!({"entry": existing.flat()})));
    }
    let id = match trimmed(a, "id").filter(|id| !id.is_empty()) {
        Some(id) => id.to_string(),
        None => cx.bible().fresh_id(Kind::Glossary, &term),
    };
    let given = ["term_tgt", "notes"]
        .into_iter()
        .filter_map(|f| Some((f.to_string(), json!(trimmed(a, f)?))));
    let fields = [("term_src".to_string(), json!(term))]
        .into_iter()
        .chain(given)
        .collect();
    cx.bible_create(Kind::Glossary, &id, fields)?;
    let entity = cx.bible().require(Kind::Glossary, &id)?;
    Ok(json!({"text": format!("Created {}", entity_block(entity)), "entry": entity.flat()}))
}

/// `glossary_update_entry`.
pub(super) fn update_entry(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let id = a.text("id").trim().to_string();
    let before = cx.bible().require(Kind::Glossary, &id)?.version;
    let given = ["term_tgt", "notes"]
        .into_iter()
        .filter_map(|f| Some((f.to_string(), json!(trimmed(a, f)?))));
    let changes: Vec<(String, Value)> = given.collect();
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
    let text = format!("{done} {}", entity_block(entity));
    Ok(json!({"text": text, "changed": changed, "entry": entity.flat()}))
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
pub(super) fn merge_entries(a: &Args, cx: &mut EditContext<'_>) -> Out {
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
    let merged = ids
        .iter()
        .map(|id| cx.bible().require(Kind::Glossary, id).cloned());
    let merged: Vec<Entity> = merged.collect::<Result<_, _>>()?;

    // The combined entry.
    let mut notes = keep.text("notes").trim().to_string();
    let mut term_tgt = keep.text("term_tgt").trim().to_string();
    for e in &merged {
        let (src, tgt) = (e.text("term_src").trim(), e.text("term_tgt").trim());
        if !eq_ci(src, keep.text("term_src")) {
            add_note(&mut notes, &format!("Also written: {src}"));
        }
        if !tgt.is_empty() && term_tgt.is_empty() {
            term_tgt = tgt.to_string();
        } else if !tgt.is_empty() && !eq_ci(tgt, &term_tgt) {
            add_note(&mut notes, &format!("Also translated as: {tgt}"));
        }
        add_note(&mut notes, e.text("notes"));
    }
    let proposed = [("term_tgt", &term_tgt), ("notes", &notes)];
    let changed = proposed
        .into_iter()
        .filter(|(f, v)| keep.text(f) != v.as_str());
    let changes: Vec<(String, Value)> = changed.map(|(f, v)| (f.to_string(), json!(v))).collect();

    // What the writer must approve, should any step need approval: every entry the merge
    // touches, at its version now.
    let all = std::iter::once(&keep).chain(&merged);
    let versions: BTreeMap<String, u64> = all
        .map(|e| (Grant::key(Kind::Glossary, &e.id), e.version))
        .collect();
    let (mode, actor) = (cx.policies().mode(a.tool.name), cx.actor());
    let names: Vec<&str> = changes.iter().map(|(f, _)| f.as_str()).collect();
    let update = Some(&keep)
        .filter(|_| !changes.is_empty())
        .map(|e| (e, Action::Update, &names[..]));
    let deletes = merged.iter().map(|e| (e, Action::Delete, &[][..]));
    let mut asks = Vec::new();
    for (e, action, fields) in update.into_iter().chain(deletes) {
        let verb = if action == Action::Update {
            "update"
        } else {
            "delete"
        };
        if let Some(reason) = policy::needs_approval(mode, action, actor, Some(e), fields) {
            asks.push(json!({"id": e.id, "action": verb, "reason": reason}));
        }
    }
    // Everything the merge would do, for the writer's card: the kept entry's field changes and
    // every entry it deletes, with all their fields (whoever wrote them).
    let field = |e: &Entity, name: &str, proposed: Value| json!({"field": name, "current": e.get(name), "current_origin": e.origin(name), "proposed": proposed});
    let card = |e: &Entity, action: &str, fields: Vec<Value>| json!({"kind": Kind::Glossary, "id": e.id, "action": action, "title": e.text("term_src"), "fields": fields});
    let kept_fields = changes
        .iter()
        .map(|(f, v)| field(&keep, f, v.clone()))
        .collect();
    let mut touched = vec![card(&keep, "update", kept_fields)];
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
        let listed = asks
            .iter()
            .filter_map(|a| Some(format!("{} ({})", a["id"].as_str()?, a["action"].as_str()?)));
        let listed: Vec<String> = listed.collect();
        if !listed.is_empty() {
            let listed = listed.join(", ");
            w!(
                error.message,
                " The merge needs approval for: {listed}; one approval covers the whole merge."
            );
        }
        if let Some(Value::Object(details)) = &mut error.details {
            let proposed = json!({"term_tgt": term_tgt, "notes": notes});
            let merge = json!({"keep": keep.id, "merge": ids, "proposed": proposed});
            details.extend(
                [("versions", json!(versions)), ("entries", json!(asks))]
                    .map(|(k, v)| (k.into(), v)),
            );
            details.extend(
                [("changes", json!(touched)), ("merge", merge)].map(|(k, v)| (k.into(), v)),
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
    let (them, list) = (if ids.len() == 1 { "it" } else { "them" }, ids.join(", "));
    let text = format!(
        "Merged {list} into '{}' and removed {them}.\n{}",
        kept.id,
        entity_block(kept)
    );
    Ok(json!({"text": text, "entry": kept.flat(), "merged": ids, "removed": removed}))
}

/// `glossary_delete_entry`.
pub(super) fn delete_entry(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let removed = cx.bible_delete(Kind::Glossary, a.text("id").trim())?;
    let (id, src, tgt) = (
        &removed.id,
        removed.text("term_src"),
        show(removed.get("term_tgt"), '-'),
    );
    let text = format!("Removed glossary entry '{id}' ({src} → {tgt}).");
    Ok(json!({"text": text, "deleted": removed.flat()}))
}

// Style guide and UI settings.

/// `styleguide_read_full`.
pub(super) fn styleguide(_: &Args, cx: &mut EditContext<'_>) -> Out {
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
pub(super) fn ui_settings(_: &Args, cx: &mut EditContext<'_>) -> Out {
    let Some(ui) = cx.bible().get(Kind::UiSettings, "ui") else {
        return Ok(json!({
            "text": "No UI settings are set: there is no line-length limit to respect.",
            "exists": false,
            "line_length_limit": null,
            "lines_per_box": null,
            "notes": null,
        }));
    };
    let (mut out, block) = (ui.flat(), entity_block(ui));
    let fields: Vec<&str> = block.lines().skip(1).collect();
    (out["text"], out["exists"]) = (
        json!(format!("UI settings\n{}", fields.join("\n"))),
        json!(true),
    );
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
pub(super) fn mtl_available(_: &Args, cx: &mut EditContext<'_>) -> Out {
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
    let value = preview(value, 40);
    let example = "a language code such as \"en\", \"ja\" or \"zh-Hans\"";
    Err(ToolError::invalid_args(format!(
        "'{name}' must be {example}, got \"{value}\""
    )))
}

fn plan_from(
    a: &Args,
    project: &Project,
    bible: &Bible,
    endpoint: Option<&str>,
) -> Result<MtlPlan, ToolError> {
    let (source_lang, target_lang) = (lang_code(a, "source_lang")?, lang_code(a, "target_lang")?);
    let endpoint = endpoint
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .ok_or_else(no_mtl_endpoint)?;
    let (lines, line) = (
        scene_lines(project, bible, a.text("scene"))?,
        a.num("line").unwrap_or(0),
    );
    let (source, endpoint) = (lines.line(line)?.to_string(), endpoint.to_string());
    Ok(MtlPlan {
        endpoint,
        scene: lines.scene,
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
    let MtlPlan {
        scene,
        line,
        source,
        source_lang,
        target_lang,
        ..
    } = plan;
    json!({
        "text": format!(
            "Machine-translation suggestion for line {line} of scene '{scene}' ({source_lang} → {target_lang}):\nsource: {source}\nsuggestion: {suggestion}\nIt is only a suggestion: check it against the glossary and style guide, then save a translation with translation_create_line (or translation_update_line)."
        ),
        "scene": scene,
        "line": line,
        "source": source,
        "suggestion": suggestion,
        "source_lang": source_lang,
        "target_lang": target_lang,
        "detected_language": detected,
    })
}

/// `translation_create_mtl_suggestion` on the synchronous path: checked, but the HTTP call is
/// the core's (`src/core/mtl.rs`).
pub(super) fn mtl_suggestion_sync(a: &Args, cx: &mut EditContext<'_>) -> Out {
    plan_from(a, cx.project(), cx.bible(), cx.mtl_endpoint())?;
    Err(ToolError::new(
        "needs_network",
        "translation_create_mtl_suggestion calls the translation endpoint; run it through the core (execute or run)",
    ))
}

// Translations.

/// `translation_create_line`.
pub(super) fn create_line(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let target = non_blank(a, "target")?;
    let lines = scene_lines(cx.project(), cx.bible(), a.text("scene"))?;
    let line = a.num("line").unwrap_or(0);
    let source = lines.line(line)?.to_string();
    let (scene, id, total) = (
        &lines.scene,
        translation_id(&lines.scene, line),
        lines.lines.len(),
    );
    if let Some(existing) = cx.bible().get(Kind::Translation, &id) {
        let (shown, origin) = (
            preview(existing.text("target"), 120),
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
pub(super) fn update_line(a: &Args, cx: &mut EditContext<'_>) -> Out {
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
        Some(c) if source_changed => w!(
            text,
            "\nNote: the manuscript line has changed since this translation was made; it now reads: {c}"
        ),
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

/// `translation_read_scene`.
pub(super) fn read_scene(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let lines = scene_lines(cx.project(), cx.bible(), a.text("scene"))?;
    let translations = translations_of(cx.bible(), &lines.scene);
    let (scene, total) = (&lines.scene, lines.lines.len());
    let from = a.num("from_line").unwrap_or(1).max(1) as usize;
    if total > 0 && from > total {
        let message =
            format!("scene '{scene}' has lines 1 to {total}; 'from_line' {from} is past the end");
        return Err(ToolError::new("out_of_range", message));
    }
    let (mut shown, mut untranslated, mut body) = (Vec::new(), Vec::new(), String::new());
    for (n, source) in (1u64..).zip(&lines.lines) {
        let t = translations
            .get(&n)
            .filter(|t| !is_empty_value(Some(t.get("target"))));
        if t.is_none() {
            untranslated.push(n);
        }
        if (n as usize) < from || shown.len() >= MAX_SCENE_LINES {
            continue;
        }
        w!(body, "\n{n}. {source}");
        let stale = t.is_some_and(|t| t.text("source") != source);
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
        let (target, origin) = (
            t.map(|t| t.get("target").clone()),
            t.and_then(|t| t.origin("target")),
        );
        shown.push(json!({
            "line": n, "source": source, "target": target, "target_origin": origin,
            "stale": stale, "translated": t.is_some(),
        }));
    }
    let orphans: Vec<u64> = translations
        .keys()
        .copied()
        .filter(|n| *n == 0 || *n as usize > total)
        .collect();
    let (done, left) = (total - untranslated.len(), untranslated.len());
    let (title, (start, end)) = (&lines.chapter_title, lines.span);
    let mut text = format!(
        "Scene '{scene}' (chapter '{title}', chars {start}-{end}): {total} lines, {done} translated, {left} untranslated"
    );
    if !untranslated.is_empty() {
        w!(text, " (lines {})", numbers(&untranslated));
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
        w!(
            text,
            "\nTranslations saved for lines the scene no longer has: {}.",
            numbers(&orphans)
        );
    }
    Ok(json!({
        "text": text, "scene": scene, "chapter": lines.chapter_id, "total": total, "translated": done,
        "untranslated": untranslated, "lines": shown, "orphans": orphans,
    }))
}

// QA checks.

/// Record a QA finding of `check` on `scene` (and `line`); returns the record's flat view and
/// a line about it.
fn record(
    cx: &mut EditContext<'_>,
    a: &Args,
    check: &str,
    scene: &str,
    line: Option<u64>,
    message: String,
) -> Result<(Value, String), ToolError> {
    let severity = a.opt("severity").unwrap_or("warning");
    let (hint, place) = match line {
        Some(line) => (
            format!("{check}-{scene}-{line}"),
            format!("line {line} of scene '{scene}'"),
        ),
        None => (format!("{check}-{scene}"), format!("scene '{scene}'")),
    };
    let id = cx.bible().fresh_id(Kind::Qa, &hint);
    let fields = [
        ("check", json!(check)),
        ("scene", json!(scene)),
        ("severity", json!(severity)),
    ];
    let line_field = line.map(|line| ("line", json!(line)));
    let fields = fields
        .into_iter()
        .chain([("message", json!(message))])
        .chain(line_field);
    let flat = cx.bible_create(
        Kind::Qa,
        &id,
        fields.map(|(f, v)| (f.to_string(), v)).collect(),
    )?;
    Ok((
        flat,
        format!("Recorded {check} QA '{id}' ({severity}) on {place}: {message}"),
    ))
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

/// A QA check: the call's scene (and line), and its message, trimmed, if one was given. The
/// line's source comes with the scene's lines.
fn qa_start(
    a: &Args,
    cx: &EditContext<'_>,
) -> Result<(String, Option<String>, Option<String>), ToolError> {
    let lines = scene_lines(cx.project(), cx.bible(), a.text("scene"))?;
    let source = a
        .num("line")
        .map(|n| lines.line(n).map(str::to_string))
        .transpose()?;
    let message = trimmed(a, "message")
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    Ok((lines.scene, source, message))
}

/// The result of a check: the record made (if any) with text, the report and extra facts.
fn check_result(made: Option<(Value, String)>, report: String, extra: Value) -> Out {
    let (record, line) = made.unwrap_or((Value::Null, String::new()));
    let parts = [line, report].into_iter().filter(|s| !s.is_empty());
    let mut out = json!({"text": parts.collect::<Vec<_>>().join("\n"), "record": record});
    if let (Value::Object(out), Value::Object(extra)) = (&mut out, extra) {
        out.extend(extra);
    }
    Ok(out)
}

/// `translation_create_style_check`.
pub(super) fn style_check(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let (scene, _, message) = qa_start(a, cx)?;
    if !a.flag("check_line_length") {
        let message = message.ok_or_else(|| {
            ToolError::invalid_args(
                "give a 'message' (the finding), or set check_line_length to measure the line",
            )
        })?;
        let made = record(cx, a, "style", &scene, a.num("line"), message)?;
        return check_result(Some(made), String::new(), json!({}));
    }
    let needs_line = "check_line_length needs the 'line' whose translation to measure";
    let line = a
        .num("line")
        .ok_or_else(|| ToolError::invalid_args(needs_line))?;
    let target = target_of(cx, &scene, line, "measure")?;
    let ui = cx.bible().get(Kind::UiSettings, "ui");
    let setting = |name: &str| ui.and_then(|u| u.get(name).as_u64());
    let (limit, per_box) = (setting("line_length_limit"), setting("lines_per_box"));
    let display: Vec<usize> = target.lines().map(|l| l.chars().count()).collect();
    let (longest, count) = (display.iter().copied().max().unwrap_or(0), display.len());
    let Some(limit) = limit else {
        let Some(message) = message else {
            return Err(ToolError::not_found(
                "the UI settings have no line_length_limit, so there is nothing to measure against (ui_read_settings shows them); give a 'message' to record a finding anyway",
            ));
        };
        let made = record(cx, a, "style", &scene, Some(line), message)?;
        let report = "The line length was not checked: the UI settings have no line_length_limit.";
        return check_result(
            Some(made),
            report.into(),
            json!({"line_length": {"checked": false}}),
        );
    };
    let over = |(i, n): (usize, &usize)| {
        let over = format!("{n} characters long, over the UI limit of {limit}");
        match count {
            1 => format!("the translation is {over}"),
            _ => format!("display line {} of the translation is {over}", i + 1),
        }
    };
    let mut problems: Vec<String> = display
        .iter()
        .enumerate()
        .filter(|(_, n)| **n as u64 > limit)
        .map(over)
        .collect();
    if let Some(per_box) = per_box.filter(|p| count as u64 > *p) {
        problems.push(format!(
            "the translation has {count} display lines, more than the {per_box} a text box holds"
        ));
    }
    let exceeded = !problems.is_empty();
    let facts = json!({"line_length": {
        "checked": true, "limit": limit, "lines_per_box": per_box, "longest": longest,
        "display_lines": count, "exceeded": exceeded,
    }});
    let problems = problems.join("; ");
    let message = match (message, exceeded) {
        (Some(m), true) => Some(format!("{m}\nLine length: {problems}.")),
        (None, true) => Some(format!("Line length: {problems}.")),
        (m, false) => m,
    };
    let fits = if per_box.is_some() {
        " and it fits its text box"
    } else {
        ""
    };
    let report = match exceeded {
        true => format!("The translation does not fit: {problems}."),
        false => format!(
            "The translation fits: its longest line is {longest} of {limit} characters{fits}."
        ),
    };
    let made = message
        .map(|m| record(cx, a, "style", &scene, Some(line), m))
        .transpose()?;
    let report = if made.is_none() {
        format!("{report} No QA record was made.")
    } else {
        report
    };
    check_result(made, report, facts)
}

/// `translation_create_consistency_check`.
pub(super) fn consistency_check(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let (scene, source, message) = qa_start(a, cx)?;
    if !a.flag("check_glossary") {
        let message = message.ok_or_else(|| {
            ToolError::invalid_args(
                "give a 'message' (the finding), or set check_glossary to check the line against the glossary",
            )
        })?;
        let made = record(cx, a, "consistency", &scene, a.num("line"), message)?;
        return check_result(Some(made), String::new(), json!({}));
    }
    let (Some(line), Some(source)) = (a.num("line"), source) else {
        return Err(ToolError::invalid_args(
            "check_glossary needs the 'line' whose translation to check",
        ));
    };
    let target = target_of(cx, &scene, line, "check")?.to_lowercase();
    let (source, mut used, mut missing) = (source.to_lowercase(), Vec::new(), Vec::new());
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
    let (not_followed, terms) = (missing.join("; "), used.join(", "));
    let mut report = match (used.is_empty(), missing.is_empty()) {
        (true, _) => "No glossary term appears in the source line.".into(),
        (false, true) => format!(
            "The translation uses the glossary's translation of every term in the line ({terms})."
        ),
        (false, false) => format!("Glossary terms not followed: {not_followed}."),
    };
    let message = match (message, missing.is_empty()) {
        (Some(m), false) => Some(format!("{m}\nGlossary: {not_followed}.")),
        (None, false) => Some(format!("Glossary: {not_followed}.")),
        (m, true) => m,
    };
    let facts = json!({"glossary": {"terms": used, "missing": missing}});
    let made = message
        .map(|m| record(cx, a, "consistency", &scene, Some(line), m))
        .transpose()?;
    if made.is_none() {
        report.push_str(" No QA record was made.");
    }
    check_result(made, report, facts)
}

/// `translation_create_review_check`.
pub(super) fn review_check(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let message = non_blank(a, "message")?;
    let (scene, ..) = qa_start(a, cx)?;
    let made = record(cx, a, "review", &scene, a.num("line"), message)?;
    check_result(Some(made), String::new(), json!({}))
}

// Context documents and status.

/// `contextdoc_list_all`.
pub(super) fn list_docs(_: &Args, cx: &mut EditContext<'_>) -> Out {
    let docs: Vec<&Entity> = cx.bible().list(Kind::Contextdoc).collect();
    let mut text = match docs.len() {
        0 => "There are no context documents.".to_string(),
        n => format!("{n} context document(s):"),
    };
    let mut list = Vec::new();
    for d in &docs {
        let (id, body, title) = (&d.id, d.text("text"), d.text("title"));
        let chars = body.chars().count();
        let opening = preview(&body.split_whitespace().collect::<Vec<_>>().join(" "), 160);
        let shown = if opening.is_empty() {
            String::new()
        } else {
            format!(" — {opening}")
        };
        w!(text, "\n- {id}: {title} ({chars} chars){shown}");
        list.push(json!({"id": id, "title": title, "chars": chars, "opening": opening, "version": d.version}));
    }
    Ok(json!({"text": text, "docs": list}))
}

/// `contextdoc_read_doc`.
pub(super) fn read_doc(a: &Args, cx: &mut EditContext<'_>) -> Out {
    let doc = cx.bible().require(Kind::Contextdoc, a.text("id").trim())?;
    let (id, body, title) = (&doc.id, doc.text("text"), doc.text("title"));
    let (total, offset) = (body.chars().count(), a.num("offset").unwrap_or(0) as usize);
    if offset > total {
        let message = format!("'offset' {offset} is past the end of '{id}' ({total} characters)");
        return Err(ToolError::new("out_of_range", message));
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
        w!(text, "\n\n(continues: read on with offset {next})");
    }
    Ok(json!({
        "text": text, "id": id, "title": title, "content": part, "offset": offset,
        "next_offset": next, "total_chars": total,
    }))
}

/// `context_read_status`.
pub(super) fn status(_: &Args, cx: &mut EditContext<'_>) -> Out {
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
    let (mut scenes, mut all_done, mut all_total) = (Vec::new(), 0usize, 0usize);
    if counts["scene"] > 0 {
        text.push_str("\nTranslation progress:");
    }
    for id in bible.list(Kind::Scene).map(|s| &s.id) {
        match scene_lines(cx.project(), bible, id) {
            Ok(lines) => {
                let total = lines.lines.len();
                let done = translated(bible, id, 1, total);
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
    if counts["scene"] > 0 {
        w!(text, "\nIn all: {all_done}/{all_total} lines translated.");
    }
    let (mut by_severity, mut by_check) = (
        BTreeMap::<String, usize>::new(),
        BTreeMap::<String, usize>::new(),
    );
    for qa in bible.list(Kind::Qa) {
        let severity = Some(qa.text("severity"))
            .filter(|s| !s.is_empty())
            .unwrap_or("unspecified");
        *by_severity.entry(severity.to_string()).or_default() += 1;
        *by_check.entry(qa.text("check").to_string()).or_default() += 1;
    }
    let join = |m: &BTreeMap<String, usize>| {
        m.iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match by_severity.is_empty() {
        true => text.push_str("\nQA: no findings."),
        false => w!(
            text,
            "\nQA findings by severity: {}; by check: {}.",
            join(&by_severity),
            join(&by_check)
        ),
    }
    Ok(json!({
        "text": text,
        "counts": counts,
        "translation": {"scenes": scenes, "translated": all_done, "total": all_total},
        "qa": {"by_severity": by_severity, "by_check": by_check},
    }))
}
