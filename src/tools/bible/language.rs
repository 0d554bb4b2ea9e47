//! Story-bible tools: language. The glossary (`glossary_search_term`, `glossary_read_entry`,
//! `glossary_create_entry`, `glossary_update_entry`, `glossary_merge_entries`,
//! `glossary_delete_entry`), the style guide and UI settings (`styleguide_read_full`,
//! `ui_read_settings`), translations (`translation_read_scene`, `translation_create_line`,
//! `translation_update_line`), machine translation (`translation_check_mtl_available`,
//! `translation_create_mtl_suggestion`), QA checks (`translation_create_style_check`,
//! `translation_create_consistency_check`, `translation_create_review_check`), context
//! documents (`contextdoc_list_all`, `contextdoc_read_doc`) and `context_read_status`.
//!
//! A scene's lines are the non-empty lines of its span of its chapter's text, trimmed and
//! numbered from 1; a translation is the entity `<scene>:<line>`. Every write goes through
//! the edit context's bible write path, so the approval policy, conflict detection and
//! provenance apply, and a call that fails halfway (a merge, say) changes nothing.
//!
//! The machine-translation suggestion needs an HTTP call, which the synchronous edit path
//! cannot make: the core runs `translation_create_mtl_suggestion` (and answers
//! `translation_check_mtl_available` from its settings) in `src/core/mtl.rs`, planning it with
//! [`mtl_plan`]. Agents never change context documents: there are only tools to read them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::bible::{is_empty_value, Bible, Entity, Kind};
use crate::commands::Category;
use crate::policy::{self, Action, Grant};
use crate::project::Project;
use crate::session::{EditContext, Session};
use crate::tools::{parse_args, ToolError, ToolRegistry, ToolSpec};

/// The tools the core runs itself (they need its settings or an HTTP call).
pub const MTL_TOOLS: [&str; 2] = [
    TranslationCheckMtlAvailable::NAME,
    TranslationCreateMtlSuggestion::NAME,
];

/// Most characters of a context document one `contextdoc_read_doc` call returns.
pub const DOC_CHUNK_CHARS: usize = 20_000;

/// Most lines one `translation_read_scene` call shows.
pub const MAX_SCENE_LINES: usize = 200;

/// Register these tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.add::<GlossarySearchTerm>();
    registry.add::<GlossaryReadEntry>();
    registry.add::<GlossaryCreateEntry>();
    registry.add::<GlossaryUpdateEntry>();
    registry.add::<GlossaryMergeEntries>();
    registry.add::<GlossaryDeleteEntry>();
    registry.add::<StyleguideReadFull>();
    registry.add::<UiReadSettings>();
    registry.add::<TranslationCheckMtlAvailable>();
    registry.add::<TranslationCreateMtlSuggestion>();
    registry.add::<TranslationCreateLine>();
    registry.add::<TranslationUpdateLine>();
    registry.add::<TranslationReadScene>();
    registry.add::<TranslationCreateStyleCheck>();
    registry.add::<TranslationCreateConsistencyCheck>();
    registry.add::<TranslationCreateReviewCheck>();
    registry.add::<ContextdocListAll>();
    registry.add::<ContextdocReadDoc>();
    registry.add::<ContextReadStatus>();
}

/// Whether the core runs `name` itself ([`MTL_TOOLS`]).
pub fn is_mtl(name: &str) -> bool {
    MTL_TOOLS.contains(&name)
}

// ---------------------------------------------------------------------------------------
// Formatting.

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max).collect();
        out.push('…');
        out
    }
}

/// A value as a model reads it: texts as they are, lists joined, spans as `start-end`.
fn value_text(value: &Value) -> String {
    match value {
        Value::Null => "(empty)".into(),
        Value::String(s) if s.trim().is_empty() => "(empty)".into(),
        Value::String(s) => s.clone(),
        Value::Array(items) if items.is_empty() => "(empty)".into(),
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(", "),
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

/// `field: value [origin]`, a multi-line value indented below its name.
fn field_line(entity: &Entity, field: &str) -> String {
    let value = value_text(entity.get(field));
    let origin = origin_tag(entity, field);
    if value.contains('\n') {
        let indented: Vec<String> = value.lines().map(|l| format!("    {l}")).collect();
        format!("  {field}{origin}:\n{}", indented.join("\n"))
    } else {
        format!("  {field}: {value}{origin}")
    }
}

/// An entity as text: a header line, then each field of its kind with its origin.
fn entity_block(entity: &Entity) -> String {
    let mut out = format!(
        "{} '{}' (version {})",
        entity.kind, entity.id, entity.version
    );
    for spec in entity.kind.fields() {
        out.push('\n');
        out.push_str(&field_line(entity, spec.name));
    }
    out
}

/// One line about a glossary entry: `id: source → target [origins] — notes`.
fn glossary_line(entity: &Entity) -> String {
    let tgt = entity.text("term_tgt").trim();
    let mut line = format!(
        "- {}: {}{} → {}{}",
        entity.id,
        entity.text("term_src").trim(),
        origin_tag(entity, "term_src"),
        if tgt.is_empty() {
            "(no translation)"
        } else {
            tgt
        },
        origin_tag(entity, "term_tgt"),
    );
    let notes = entity.text("notes").trim();
    if !notes.is_empty() {
        line.push_str(&format!(
            " — notes{}: {}",
            origin_tag(entity, "notes"),
            shorten(&notes.replace('\n', " "), 200)
        ));
    }
    line
}

fn eq_ci(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

/// A required, non-blank text argument, trimmed.
fn non_blank(value: &str, name: &str) -> Result<String, ToolError> {
    let value = value.trim();
    if value.is_empty() {
        return Err(ToolError::invalid_args(format!(
            "'{name}' must not be empty"
        )));
    }
    Ok(value.to_string())
}

// ---------------------------------------------------------------------------------------
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
        usize::try_from(line)
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| self.lines.get(i))
            .map(String::as_str)
            .ok_or_else(|| {
                ToolError::new(
                    "out_of_range",
                    if self.lines.is_empty() {
                        format!(
                            "scene '{}' has no lines (its span of chapter '{}' is empty)",
                            self.scene, self.chapter_title
                        )
                    } else {
                        format!(
                            "scene '{}' has lines 1 to {}, not {line}; translation_read_scene shows them",
                            self.scene,
                            self.lines.len()
                        )
                    },
                )
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
    bible
        .list(Kind::Translation)
        .filter(|t| t.text("scene") == scene)
        .filter_map(|t| t.get("line").as_u64().map(|n| (n, t)))
        .collect()
}

// ---------------------------------------------------------------------------------------
// Glossary.

/// Arguments of `glossary_search_term`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchTermArgs {
    /// Text to look for (case-insensitive) in the source terms, their translations and the
    /// notes. An empty query lists every entry.
    pub query: String,
    /// Most entries to return (default 50).
    #[serde(default)]
    pub limit: Option<u64>,
}

/// `glossary_search_term`.
pub struct GlossarySearchTerm;

impl ToolSpec for GlossarySearchTerm {
    type Args = SearchTermArgs;
    const NAME: &'static str = "glossary_search_term";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Search the glossary: entries whose source term, translation or notes contain the query (case-insensitive); an empty query lists every entry. Shows each entry's id, source term → translation and notes, with who wrote each field. Use it before translating a name or term, and before creating an entry (to avoid duplicates).";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let query = args.query.trim().to_lowercase();
        let limit = args.limit.unwrap_or(50).clamp(1, 500) as usize;
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
        let mut text = if query.is_empty() {
            format!("The glossary has {total} entries.")
        } else {
            format!(
                "{total} glossary entr{} match '{}'.",
                if total == 1 { "y" } else { "ies" },
                shorten(args.query.trim(), 80)
            )
        };
        for e in &found {
            text.push('\n');
            text.push_str(&glossary_line(e));
        }
        if total > found.len() {
            text.push_str(&format!(
                "\n({} more not shown; narrow the query or raise 'limit')",
                total - found.len()
            ));
        }
        if total == 0 && !query.is_empty() {
            text.push_str(" glossary_create_entry adds one.");
        }
        Ok(json!({
            "text": text,
            "query": args.query,
            "count": total,
            "entries": found.iter().map(|e| e.flat()).collect::<Vec<_>>(),
        }))
    }
}

/// Arguments naming a glossary entry.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EntryIdArgs {
    /// The entry's id (glossary_search_term shows ids).
    pub id: String,
}

/// `glossary_read_entry`.
pub struct GlossaryReadEntry;

impl ToolSpec for GlossaryReadEntry {
    type Args = EntryIdArgs;
    const NAME: &'static str = "glossary_read_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Read one glossary entry by id: its source term, translation and notes, each with who wrote it (human, import or agent:<name>:<date>), and its version.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let entity = cx.bible().require(Kind::Glossary, args.id.trim())?;
        Ok(json!({"text": entity_block(entity), "entry": entity.flat()}))
    }
}

/// Arguments of `glossary_create_entry`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateEntryArgs {
    /// The term in the source language, as it appears in the manuscript.
    #[serde(alias = "termSrc")]
    pub term_src: String,
    /// Its translation in the target language.
    #[serde(default, alias = "termTgt")]
    pub term_tgt: Option<String>,
    /// Notes: meaning, usage, context, what to avoid.
    #[serde(default)]
    pub notes: Option<String>,
    /// An id for the entry (default: made from the term).
    #[serde(default)]
    pub id: Option<String>,
}

/// `glossary_create_entry`.
pub struct GlossaryCreateEntry;

impl ToolSpec for GlossaryCreateEntry {
    type Args = CreateEntryArgs;
    const NAME: &'static str = "glossary_create_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Add a glossary entry: a source term, its translation and notes. Fails if an entry for the same source term exists (update or merge that one instead). Returns the entry with its id.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let term = non_blank(&args.term_src, "term_src")?;
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
        let id = match args.id.as_deref().map(str::trim) {
            Some(id) if !id.is_empty() => id.to_string(),
            _ => cx.bible().fresh_id(Kind::Glossary, &term),
        };
        let mut fields = vec![("term_src".to_string(), json!(term))];
        if let Some(tgt) = args.term_tgt {
            fields.push(("term_tgt".into(), json!(tgt.trim())));
        }
        if let Some(notes) = args.notes {
            fields.push(("notes".into(), json!(notes.trim())));
        }
        cx.bible_create(Kind::Glossary, &id, fields)?;
        let entity = cx.bible().require(Kind::Glossary, &id)?;
        Ok(json!({
            "text": format!("Created {}", entity_block(entity)),
            "entry": entity.flat(),
        }))
    }
}

/// Arguments of `glossary_update_entry`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdateEntryArgs {
    /// The entry's id.
    pub id: String,
    /// The new translation of the term.
    #[serde(default, alias = "termTgt")]
    pub term_tgt: Option<String>,
    /// The new notes (they replace the old ones: include what should stay).
    #[serde(default)]
    pub notes: Option<String>,
}

/// `glossary_update_entry`.
pub struct GlossaryUpdateEntry;

impl ToolSpec for GlossaryUpdateEntry {
    type Args = UpdateEntryArgs;
    const NAME: &'static str = "glossary_update_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Change a glossary entry's translation and/or notes (give at least one; notes replace the old notes). Changing a field the writer wrote asks the writer's approval first (the call then fails with approval_required and changes nothing).";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let id = args.id.trim().to_string();
        let before = cx.bible().require(Kind::Glossary, &id)?.version;
        let mut changes = Vec::new();
        if let Some(tgt) = args.term_tgt {
            changes.push(("term_tgt".to_string(), json!(tgt.trim())));
        }
        if let Some(notes) = args.notes {
            changes.push(("notes".to_string(), json!(notes.trim())));
        }
        if changes.is_empty() {
            return Err(ToolError::invalid_args(
                "give 'term_tgt', 'notes' or both: the fields to change",
            ));
        }
        cx.bible_update(Kind::Glossary, &id, changes)?;
        let entity = cx.bible().require(Kind::Glossary, &id)?;
        let changed = entity.version != before;
        Ok(json!({
            "text": format!(
                "{} {}",
                if changed { "Updated" } else { "No change (same values):" },
                entity_block(entity)
            ),
            "changed": changed,
            "entry": entity.flat(),
        }))
    }
}

/// Arguments of `glossary_merge_entries`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct MergeEntriesArgs {
    /// The id of the entry to keep.
    pub keep: String,
    /// The ids of the duplicate entries to fold into it and remove.
    pub merge: Vec<String>,
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

/// `glossary_merge_entries`.
pub struct GlossaryMergeEntries;

impl ToolSpec for GlossaryMergeEntries {
    type Args = MergeEntriesArgs;
    const NAME: &'static str = "glossary_merge_entries";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Merge duplicate glossary entries into one: the kept entry gets the others' notes (and their other spellings and translations, noted), its translation if it had none, and the others are removed. All or nothing. Changing or removing what the writer wrote asks the writer's approval first (approval_required, nothing changed).";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let keep_id = args.keep.trim().to_string();
        let keep = cx.bible().require(Kind::Glossary, &keep_id)?.clone();
        let mut ids: Vec<String> = Vec::new();
        for id in &args.merge {
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
            if !tgt.is_empty() {
                if term_tgt.is_empty() {
                    term_tgt = tgt.to_string();
                } else if !eq_ci(tgt, &term_tgt) {
                    add_note(&mut notes, &format!("Also translated as: {tgt}"));
                }
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

        // What the writer must approve, should any step need approval: every entry the
        // merge touches, at its version now (one approval covers the whole merge).
        let mut versions = BTreeMap::new();
        versions.insert(Grant::key(Kind::Glossary, &keep.id), keep.version);
        for e in &merged {
            versions.insert(Grant::key(Kind::Glossary, &e.id), e.version);
        }
        let mode = cx.policies().mode(Self::NAME);
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
            if let Some(reason) =
                policy::needs_approval(mode, Action::Delete, cx.actor(), Some(e), &[])
            {
                asks.push(json!({"id": e.id, "action": "delete", "reason": reason}));
            }
        }
        // Everything the merge would do, for the writer's card: the kept entry's field changes
        // and every entry it deletes, with all their fields (whoever wrote them).
        let field = |e: &Entity, name: &str, proposed: Value| json!({"field": name, "current": e.get(name), "current_origin": e.origin(name), "proposed": proposed});
        let mut touched = vec![json!({
            "kind": Kind::Glossary,
            "id": keep.id,
            "action": "update",
            "title": keep.text("term_src"),
            "fields": changes.iter().map(|(f, v)| field(&keep, f, v.clone())).collect::<Vec<_>>(),
        })];
        for e in &merged {
            touched.push(json!({
                "kind": Kind::Glossary,
                "id": e.id,
                "action": "delete",
                "title": e.text("term_src"),
                "fields": e.fields.keys().map(|f| field(e, f, Value::Null)).collect::<Vec<_>>(),
            }));
        }
        let widen = |error: ToolError| -> ToolError {
            if error.code != "approval_required" {
                return error;
            }
            let listed: Vec<String> = asks
                .iter()
                .filter_map(|a| Some(format!("{} ({})", a["id"].as_str()?, a["action"].as_str()?)))
                .collect();
            let mut error = error;
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
                details.insert(
                    "merge".into(),
                    json!({"keep": keep.id, "merge": ids, "proposed": {"term_tgt": term_tgt, "notes": notes}}),
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
            removed.push(cx.bible_delete(Kind::Glossary, &e.id).map_err(&widen)?);
        }
        let kept = cx.bible().require(Kind::Glossary, &keep.id)?;
        Ok(json!({
            "text": format!(
                "Merged {} into '{}' and removed {}.\n{}",
                ids.join(", "),
                kept.id,
                if ids.len() == 1 { "it" } else { "them" },
                entity_block(kept)
            ),
            "entry": kept.flat(),
            "merged": ids,
            "removed": removed.iter().map(Entity::flat).collect::<Vec<_>>(),
        }))
    }
}

/// `glossary_delete_entry`.
pub struct GlossaryDeleteEntry;

impl ToolSpec for GlossaryDeleteEntry {
    type Args = EntryIdArgs;
    const NAME: &'static str = "glossary_delete_entry";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Remove a glossary entry. Removing an entry with fields the writer wrote asks the writer's approval first (approval_required, nothing changed). To fold duplicates together use glossary_merge_entries.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let removed = cx.bible_delete(Kind::Glossary, args.id.trim())?;
        Ok(json!({
            "text": format!(
                "Removed glossary entry '{}' ({} → {}).",
                removed.id,
                removed.text("term_src"),
                value_text(removed.get("term_tgt"))
            ),
            "deleted": removed.flat(),
        }))
    }
}

// ---------------------------------------------------------------------------------------
// Style guide and UI settings.

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoArgs {}

/// `styleguide_read_full`.
pub struct StyleguideReadFull;

impl ToolSpec for StyleguideReadFull {
    type Args = NoArgs;
    const NAME: &'static str = "styleguide_read_full";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Read the whole style guide (markdown): the translation and writing conventions to follow. Read it before translating or checking style.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(_: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let guide = cx.bible().get(Kind::Styleguide, "styleguide");
        let markdown = guide.map_or("", |g| g.text("markdown")).trim();
        let text = match guide {
            Some(g) if !markdown.is_empty() => format!(
                "Style guide (version {}){}:\n\n{}",
                g.version,
                origin_tag(g, "markdown"),
                markdown
            ),
            _ => "There is no style guide yet: follow the glossary and the manuscript's own conventions.".into(),
        };
        Ok(json!({
            "text": text,
            "exists": !markdown.is_empty(),
            "markdown": markdown,
            "markdown_origin": guide.and_then(|g| g.origin("markdown")),
            "version": guide.map(|g| g.version),
        }))
    }
}

/// `ui_read_settings`.
pub struct UiReadSettings;

impl ToolSpec for UiReadSettings {
    type Args = NoArgs;
    const NAME: &'static str = "ui_read_settings";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Read the UI settings translations must fit: the longest a displayed line may be (line_length_limit, in characters), how many lines fit in a text box (lines_per_box) and notes.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(_: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
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
        out["text"] = json!(format!("UI settings\n{}", {
            let block = entity_block(ui);
            block.lines().skip(1).collect::<Vec<_>>().join("\n")
        }));
        out["exists"] = json!(true);
        Ok(out)
    }
}

// ---------------------------------------------------------------------------------------
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
pub struct TranslationCheckMtlAvailable;

impl ToolSpec for TranslationCheckMtlAvailable {
    type Args = NoArgs;
    const NAME: &'static str = "translation_check_mtl_available";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Say whether a machine-translation (MTL) endpoint is configured, that is whether translation_create_mtl_suggestion can work.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(_: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
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
}

/// Arguments of `translation_create_mtl_suggestion`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct MtlSuggestionArgs {
    /// The scene's id.
    pub scene: String,
    /// The line's number in the scene (from 1, as translation_read_scene shows).
    pub line: u64,
    /// The source language code, such as "ja" (or "auto").
    #[serde(alias = "sourceLang")]
    pub source_lang: String,
    /// The target language code, such as "en".
    #[serde(alias = "targetLang")]
    pub target_lang: String,
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

fn lang_code(value: &str, name: &str) -> Result<String, ToolError> {
    let code = value.trim();
    let ok = !code.is_empty()
        && code.len() <= 16
        && code
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(code.to_string())
    } else {
        Err(ToolError::invalid_args(format!(
            "'{name}' must be a language code such as \"en\", \"ja\" or \"zh-Hans\", got \"{}\"",
            shorten(value, 40)
        )))
    }
}

fn plan_from(
    args: MtlSuggestionArgs,
    project: &Project,
    bible: &Bible,
    endpoint: Option<&str>,
) -> Result<MtlPlan, ToolError> {
    let source_lang = lang_code(&args.source_lang, "source_lang")?;
    let target_lang = lang_code(&args.target_lang, "target_lang")?;
    let endpoint = endpoint
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .ok_or_else(no_mtl_endpoint)?;
    let lines = scene_lines(project, bible, &args.scene)?;
    let source = lines.line(args.line)?.to_string();
    Ok(MtlPlan {
        endpoint: endpoint.to_string(),
        scene: lines.scene,
        line: args.line,
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
    let (_, args) = registry.validate_call(TranslationCreateMtlSuggestion::NAME, args)?;
    let args: MtlSuggestionArgs = parse_args(Value::Object(args))?;
    plan_from(args, &session.project, &session.bible, endpoint)
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

/// `translation_create_mtl_suggestion`.
pub struct TranslationCreateMtlSuggestion;

impl ToolSpec for TranslationCreateMtlSuggestion {
    type Args = MtlSuggestionArgs;
    const NAME: &'static str = "translation_create_mtl_suggestion";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Ask the machine-translation endpoint for a suggested translation of one line of a scene. Returns the suggestion only (it saves nothing): review it, then save your translation with translation_create_line. Fails with no_mtl_endpoint if none is configured (translation_check_mtl_available tells).";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        plan_from(args, cx.project(), cx.bible(), cx.mtl_endpoint())?;
        // The synchronous path cannot make the HTTP call; the core does (src/core/mtl.rs).
        Err(ToolError::new(
            "needs_network",
            "translation_create_mtl_suggestion calls the translation endpoint; run it through the core (execute or run)",
        ))
    }
}

// ---------------------------------------------------------------------------------------
// Translations.

/// Arguments of `translation_create_line` and `translation_update_line`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct LineArgs {
    /// The scene's id.
    pub scene: String,
    /// The line's number in the scene (from 1, as translation_read_scene shows).
    pub line: u64,
    /// The translation of the line.
    pub target: String,
}

/// `translation_create_line`.
pub struct TranslationCreateLine;

impl ToolSpec for TranslationCreateLine {
    type Args = LineArgs;
    const NAME: &'static str = "translation_create_line";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Save the translation of one line of a scene (lines are numbered from 1, as translation_read_scene shows); the source text is taken from the manuscript. Fails if the line already has a translation: change that with translation_update_line.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let target = non_blank(&args.target, "target")?;
        let lines = scene_lines(cx.project(), cx.bible(), &args.scene)?;
        let source = lines.line(args.line)?.to_string();
        let id = translation_id(&lines.scene, args.line);
        if let Some(existing) = cx.bible().get(Kind::Translation, &id) {
            return Err(ToolError::new(
                "exists",
                format!(
                    "line {} of scene '{}' already has a translation ({}{}); change it with translation_update_line",
                    args.line,
                    lines.scene,
                    shorten(existing.text("target"), 120),
                    origin_tag(existing, "target")
                ),
            )
            .with_details(json!({"translation": existing.flat()})));
        }
        let fields = vec![
            ("scene".to_string(), json!(lines.scene)),
            ("line".to_string(), json!(args.line)),
            ("source".to_string(), json!(source)),
            ("target".to_string(), json!(target)),
        ];
        let flat = cx.bible_create(Kind::Translation, &id, fields)?;
        let translated = translations_of(cx.bible(), &lines.scene)
            .iter()
            .filter(|(n, t)| {
                **n as usize <= lines.lines.len() && !is_empty_value(Some(t.get("target")))
            })
            .count();
        Ok(json!({
            "text": format!(
                "Saved the translation of line {} of scene '{}':\nsource: {}\ntarget: {}\nThe scene has {translated} of {} lines translated.",
                args.line, lines.scene, source, target, lines.lines.len()
            ),
            "translation": flat,
            "translated": translated,
            "total": lines.lines.len(),
        }))
    }
}

/// `translation_update_line`.
pub struct TranslationUpdateLine;

impl ToolSpec for TranslationUpdateLine {
    type Args = LineArgs;
    const NAME: &'static str = "translation_update_line";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Change the saved translation of one line of a scene. Changing a translation the writer wrote asks the writer's approval first (approval_required, nothing changed).";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let target = non_blank(&args.target, "target")?;
        let scene = cx
            .bible()
            .require(Kind::Scene, args.scene.trim())?
            .id
            .clone();
        let id = translation_id(&scene, args.line);
        let Some(before) = cx.bible().get(Kind::Translation, &id).map(|t| t.version) else {
            return Err(ToolError::not_found(format!(
                "line {} of scene '{scene}' has no translation yet; save one with translation_create_line",
                args.line
            )));
        };
        // The manuscript line now, when the scene still has it (to say if it changed).
        let current = scene_lines(cx.project(), cx.bible(), &scene)
            .ok()
            .and_then(|l| l.line(args.line).ok().map(str::to_string));
        cx.bible_update(
            Kind::Translation,
            &id,
            vec![("target".to_string(), json!(target))],
        )?;
        let entity = cx.bible().require(Kind::Translation, &id)?;
        let stored = entity.text("source");
        let source_changed = current.as_deref().is_some_and(|c| c != stored);
        let mut text = format!(
            "{} the translation of line {} of scene '{scene}':\nsource: {stored}\ntarget: {target}",
            if entity.version != before {
                "Updated"
            } else {
                "No change to"
            },
            args.line
        );
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
}

/// Arguments of `translation_read_scene`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadSceneArgs {
    /// The scene's id.
    pub scene: String,
    /// The first line to show (default 1).
    #[serde(default, alias = "fromLine")]
    pub from_line: Option<u64>,
}

/// `translation_read_scene`.
pub struct TranslationReadScene;

impl ToolSpec for TranslationReadScene {
    type Args = ReadSceneArgs;
    const NAME: &'static str = "translation_read_scene";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Read a scene line by line for translation: each line's number, its source text and its translation (with who wrote it), and which lines are untranslated. Shows up to 200 lines from 'from_line'.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let lines = scene_lines(cx.project(), cx.bible(), &args.scene)?;
        let translations = translations_of(cx.bible(), &lines.scene);
        let total = lines.lines.len();
        let from = args.from_line.unwrap_or(1).max(1) as usize;
        if total > 0 && from > total {
            return Err(ToolError::new(
                "out_of_range",
                format!(
                    "scene '{}' has lines 1 to {total}; 'from_line' {from} is past the end",
                    lines.scene
                ),
            ));
        }
        let mut shown = Vec::new();
        let mut untranslated = Vec::new();
        let mut body = String::new();
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
                        body.push_str(&format!(
                            "\n   ! the manuscript line changed since this translation (it was: {})",
                            shorten(t.text("source"), 200)
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
        let translated = total - untranslated.len();
        let mut text = format!(
            "Scene '{}' (chapter '{}', chars {}-{}): {total} lines, {translated} translated, {} untranslated",
            lines.scene,
            lines.chapter_title,
            lines.span.0,
            lines.span.1,
            untranslated.len()
        );
        if !untranslated.is_empty() {
            text.push_str(&format!(
                " (lines {})",
                untranslated
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        text.push('.');
        text.push_str(&body);
        let last_shown = from - 1 + shown.len();
        if last_shown < total {
            text.push_str(&format!(
                "\n(lines {} to {total} not shown; call again with from_line {})",
                last_shown + 1,
                last_shown + 1
            ));
        }
        if !orphans.is_empty() {
            text.push_str(&format!(
                "\nTranslations saved for lines the scene no longer has: {}.",
                orphans
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(json!({
            "text": text,
            "scene": lines.scene,
            "chapter": lines.chapter_id,
            "total": total,
            "translated": translated,
            "untranslated": untranslated,
            "lines": shown,
            "orphans": orphans,
        }))
    }
}

// ---------------------------------------------------------------------------------------
// QA checks.

/// How serious a QA finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// For information.
    Info,
    /// Should be fixed.
    Warning,
    /// Must be fixed.
    Error,
}

impl Severity {
    fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A QA record to create.
struct Finding<'m> {
    check: &'static str,
    scene: &'m str,
    line: Option<u64>,
    severity: Severity,
    message: String,
}

/// Create the QA record of a finding; returns its flat view and a line about it.
fn record(cx: &mut EditContext<'_>, finding: Finding<'_>) -> Result<(Value, String), ToolError> {
    let hint = match finding.line {
        Some(line) => format!("{}-{}-{line}", finding.check, finding.scene),
        None => format!("{}-{}", finding.check, finding.scene),
    };
    let id = cx.bible().fresh_id(Kind::Qa, &hint);
    let mut fields = vec![
        ("check".to_string(), json!(finding.check)),
        ("scene".to_string(), json!(finding.scene)),
        ("severity".to_string(), json!(finding.severity.name())),
        ("message".to_string(), json!(finding.message)),
    ];
    if let Some(line) = finding.line {
        fields.push(("line".to_string(), json!(line)));
    }
    let flat = cx.bible_create(Kind::Qa, &id, fields)?;
    let place = match finding.line {
        Some(line) => format!("line {line} of scene '{}'", finding.scene),
        None => format!("scene '{}'", finding.scene),
    };
    let line = format!(
        "Recorded {} QA '{id}' ({}) on {place}: {}",
        finding.check,
        finding.severity.name(),
        finding.message
    );
    Ok((flat, line))
}

/// Check the scene and line of a QA call: the scene's lines and the line's source.
fn check_place(
    cx: &EditContext<'_>,
    scene: &str,
    line: Option<u64>,
) -> Result<(SceneLines, Option<String>), ToolError> {
    let lines = scene_lines(cx.project(), cx.bible(), scene)?;
    let source = match line {
        Some(n) => Some(lines.line(n)?.to_string()),
        None => None,
    };
    Ok((lines, source))
}

/// The saved translation of a line, or a `not_found` error saying what to do.
fn target_of(
    cx: &EditContext<'_>,
    scene: &str,
    line: u64,
    check: &str,
) -> Result<String, ToolError> {
    cx.bible()
        .get(Kind::Translation, &translation_id(scene, line))
        .map(|t| t.text("target").to_string())
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| {
            ToolError::not_found(format!(
                "line {line} of scene '{scene}' has no translation to {check}; save one with translation_create_line first"
            ))
        })
}

fn given_message(message: Option<String>) -> Option<String> {
    message
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty())
}

/// The result of a check call: the record made (if any), with text.
fn check_result(made: Option<(Value, String)>, report: String, extra: Value) -> Value {
    let (record, line) = match made {
        Some((record, line)) => (record, line),
        None => (Value::Null, String::new()),
    };
    let text = [line, report]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = json!({"text": text, "record": record});
    if let (Value::Object(out), Value::Object(extra)) = (&mut out, extra) {
        out.extend(extra);
    }
    out
}

/// Arguments of `translation_create_style_check`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct StyleCheckArgs {
    /// The scene's id.
    pub scene: String,
    /// The line's number in the scene (omit for a finding about the whole scene).
    #[serde(default)]
    pub line: Option<u64>,
    /// How serious: info, warning (default) or error.
    #[serde(default)]
    pub severity: Option<Severity>,
    /// The finding: what breaks the style guide and how to fix it.
    #[serde(default)]
    pub message: Option<String>,
    /// Also measure the line's translation against the UI settings' line_length_limit (and
    /// lines_per_box) and report if it does not fit.
    #[serde(default, alias = "checkLineLength")]
    pub check_line_length: Option<bool>,
}

/// `translation_create_style_check`.
pub struct TranslationCreateStyleCheck;

impl ToolSpec for TranslationCreateStyleCheck {
    type Args = StyleCheckArgs;
    const NAME: &'static str = "translation_create_style_check";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Record a style QA finding on a scene or one of its lines (severity info, warning or error, and a message). With check_line_length, also measures the line's translation against the UI settings' line_length_limit and lines_per_box and records it if it does not fit (no record when it fits and no message is given).";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let (lines, _) = check_place(cx, &args.scene, args.line)?;
        let message = given_message(args.message);
        let severity = args.severity.unwrap_or(Severity::Warning);
        if !args.check_line_length.unwrap_or(false) {
            let message = message.ok_or_else(|| {
                ToolError::invalid_args(
                    "give a 'message' (the finding), or set check_line_length to measure the line",
                )
            })?;
            let made = record(
                cx,
                Finding {
                    check: "style",
                    scene: &lines.scene,
                    line: args.line,
                    severity,
                    message,
                },
            )?;
            return Ok(check_result(Some(made), String::new(), json!({})));
        }
        let line = args.line.ok_or_else(|| {
            ToolError::invalid_args(
                "check_line_length needs the 'line' whose translation to measure",
            )
        })?;
        let target = target_of(cx, &lines.scene, line, "measure")?;
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
            let made = record(
                cx,
                Finding {
                    check: "style",
                    scene: &lines.scene,
                    line: Some(line),
                    severity,
                    message,
                },
            )?;
            return Ok(check_result(
                Some(made),
                "The line length was not checked: the UI settings have no line_length_limit."
                    .into(),
                json!({"line_length": {"checked": false}}),
            ));
        };
        let mut problems = Vec::new();
        for (i, n) in display.iter().enumerate() {
            if *n as u64 > limit {
                problems.push(if display.len() == 1 {
                    format!("the translation is {n} characters long, over the UI limit of {limit}")
                } else {
                    format!(
                        "display line {} of the translation is {n} characters long, over the UI limit of {limit}",
                        i + 1
                    )
                });
            }
        }
        if let Some(per_box) = per_box {
            if display.len() as u64 > per_box {
                problems.push(format!(
                    "the translation has {} display lines, more than the {per_box} a text box holds",
                    display.len()
                ));
            }
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
        let combined = match (message, exceeded) {
            (Some(m), true) => Some(format!("{m}\nLine length: {}.", problems.join("; "))),
            (None, true) => Some(format!("Line length: {}.", problems.join("; "))),
            (Some(m), false) => Some(m),
            (None, false) => None,
        };
        let report = if exceeded {
            format!("The translation does not fit: {}.", problems.join("; "))
        } else {
            format!(
                "The translation fits: its longest line is {longest} of {limit} characters{}.",
                if per_box.is_some() {
                    " and it fits its text box"
                } else {
                    ""
                }
            )
        };
        let made = match combined {
            Some(message) => Some(record(
                cx,
                Finding {
                    check: "style",
                    scene: &lines.scene,
                    line: Some(line),
                    severity,
                    message,
                },
            )?),
            None => None,
        };
        let report = if made.is_none() {
            format!("{report} No QA record was made.")
        } else {
            report
        };
        Ok(check_result(made, report, facts))
    }
}

/// Arguments of `translation_create_consistency_check`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ConsistencyCheckArgs {
    /// The scene's id.
    pub scene: String,
    /// The line's number in the scene (omit for a finding about the whole scene).
    #[serde(default)]
    pub line: Option<u64>,
    /// How serious: info, warning (default) or error.
    #[serde(default)]
    pub severity: Option<Severity>,
    /// The finding: what is inconsistent (with the glossary, the bible or other lines).
    #[serde(default)]
    pub message: Option<String>,
    /// Also check the line's translation against the glossary: every glossary term in the
    /// source line should appear translated as the glossary says. Records what is missing
    /// (no record when nothing is and no message is given).
    #[serde(default, alias = "checkGlossary")]
    pub check_glossary: Option<bool>,
}

/// `translation_create_consistency_check`.
pub struct TranslationCreateConsistencyCheck;

impl ToolSpec for TranslationCreateConsistencyCheck {
    type Args = ConsistencyCheckArgs;
    const NAME: &'static str = "translation_create_consistency_check";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Record a consistency QA finding on a scene or one of its lines (terms, names or facts translated inconsistently; severity info, warning or error, and a message). With check_glossary, also checks the line's translation uses the glossary's translation of every glossary term in its source, and records what is missing.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let (lines, source) = check_place(cx, &args.scene, args.line)?;
        let message = given_message(args.message);
        let severity = args.severity.unwrap_or(Severity::Warning);
        let mut report = String::new();
        let mut facts = json!({});
        let message = if args.check_glossary.unwrap_or(false) {
            let (Some(line), Some(source)) = (args.line, source) else {
                return Err(ToolError::invalid_args(
                    "check_glossary needs the 'line' whose translation to check",
                ));
            };
            let target = target_of(cx, &lines.scene, line, "check")?.to_lowercase();
            let source = source.to_lowercase();
            let mut used = Vec::new();
            let mut missing = Vec::new();
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
            report = if used.is_empty() {
                "No glossary term appears in the source line.".into()
            } else if missing.is_empty() {
                format!(
                    "The translation uses the glossary's translation of every term in the line ({}).",
                    used.join(", ")
                )
            } else {
                format!("Glossary terms not followed: {}.", missing.join("; "))
            };
            facts = json!({"glossary": {"terms": used, "missing": missing}});
            match (message, missing.is_empty()) {
                (Some(m), false) => Some(format!("{m}\nGlossary: {}.", missing.join("; "))),
                (None, false) => Some(format!("Glossary: {}.", missing.join("; "))),
                (m, true) => m,
            }
        } else {
            Some(message.ok_or_else(|| {
                ToolError::invalid_args(
                    "give a 'message' (the finding), or set check_glossary to check the line against the glossary",
                )
            })?)
        };
        let made = match message {
            Some(message) => Some(record(
                cx,
                Finding {
                    check: "consistency",
                    scene: &lines.scene,
                    line: args.line,
                    severity,
                    message,
                },
            )?),
            None => {
                report.push_str(" No QA record was made.");
                None
            }
        };
        Ok(check_result(made, report, facts))
    }
}

/// Arguments of `translation_create_review_check`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewCheckArgs {
    /// The scene's id.
    pub scene: String,
    /// The line's number in the scene (omit for a finding about the whole scene).
    #[serde(default)]
    pub line: Option<u64>,
    /// How serious: info, warning (default) or error.
    #[serde(default)]
    pub severity: Option<Severity>,
    /// The review comment: what is wrong (meaning, tone, naturalness) and a better version.
    pub message: String,
}

/// `translation_create_review_check`.
pub struct TranslationCreateReviewCheck;

impl ToolSpec for TranslationCreateReviewCheck {
    type Args = ReviewCheckArgs;
    const NAME: &'static str = "translation_create_review_check";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Record a review QA finding on a scene or one of its lines: a reviewer's comment on meaning, tone or naturalness (severity info, warning or error, and a message).";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let message = non_blank(&args.message, "message")?;
        let (lines, _) = check_place(cx, &args.scene, args.line)?;
        let made = record(
            cx,
            Finding {
                check: "review",
                scene: &lines.scene,
                line: args.line,
                severity: args.severity.unwrap_or(Severity::Warning),
                message,
            },
        )?;
        Ok(check_result(Some(made), String::new(), json!({})))
    }
}

// ---------------------------------------------------------------------------------------
// Context documents.

/// `contextdoc_list_all`.
pub struct ContextdocListAll;

impl ToolSpec for ContextdocListAll {
    type Args = NoArgs;
    const NAME: &'static str = "contextdoc_list_all";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "List the context documents (reference texts the writer provided: background, previous volumes, notes): id, title, length and opening. Read one with contextdoc_read_doc. Agents read them but never change them.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(_: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let docs: Vec<&Entity> = cx.bible().list(Kind::Contextdoc).collect();
        let mut text = if docs.is_empty() {
            "There are no context documents.".to_string()
        } else {
            format!("{} context document(s):", docs.len())
        };
        let mut list = Vec::new();
        for d in &docs {
            let body = d.text("text");
            let chars = body.chars().count();
            let opening = shorten(&body.split_whitespace().collect::<Vec<_>>().join(" "), 160);
            text.push_str(&format!(
                "\n- {}: {} ({chars} chars){}",
                d.id,
                d.text("title"),
                if opening.is_empty() {
                    String::new()
                } else {
                    format!(" — {opening}")
                }
            ));
            list.push(json!({
                "id": d.id,
                "title": d.text("title"),
                "chars": chars,
                "opening": opening,
                "version": d.version,
            }));
        }
        Ok(json!({"text": text, "docs": list}))
    }
}

/// Arguments of `contextdoc_read_doc`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadDocArgs {
    /// The document's id (contextdoc_list_all shows ids).
    pub id: String,
    /// Where to start reading, in characters (default 0; long documents come in parts of
    /// 20000 characters).
    #[serde(default)]
    pub offset: Option<u64>,
}

/// `contextdoc_read_doc`.
pub struct ContextdocReadDoc;

impl ToolSpec for ContextdocReadDoc {
    type Args = ReadDocArgs;
    const NAME: &'static str = "contextdoc_read_doc";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "Read a context document by id: its title and text (in parts of 20000 characters: 'offset' reads on).";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let doc = cx.bible().require(Kind::Contextdoc, args.id.trim())?;
        let body = doc.text("text");
        let total = body.chars().count();
        let offset = args.offset.unwrap_or(0) as usize;
        if offset > total {
            return Err(ToolError::new(
                "out_of_range",
                format!(
                    "'offset' {offset} is past the end of '{}' ({total} characters)",
                    doc.id
                ),
            ));
        }
        let part: String = body.chars().skip(offset).take(DOC_CHUNK_CHARS).collect();
        let end = offset + part.chars().count();
        let next = (end < total).then_some(end);
        let mut text = format!(
            "Context document '{}': {}{} ({total} chars{})\n\n{part}",
            doc.id,
            doc.text("title"),
            origin_tag(doc, "text"),
            if offset > 0 || next.is_some() {
                format!(", showing {offset}-{end}")
            } else {
                String::new()
            }
        );
        if let Some(next) = next {
            text.push_str(&format!("\n\n(continues: read on with offset {next})"));
        }
        Ok(json!({
            "text": text,
            "id": doc.id,
            "title": doc.text("title"),
            "content": part,
            "offset": offset,
            "next_offset": next,
            "total_chars": total,
        }))
    }
}

// ---------------------------------------------------------------------------------------
// Status.

/// `context_read_status`.
pub struct ContextReadStatus;

impl ToolSpec for ContextReadStatus {
    type Args = NoArgs;
    const NAME: &'static str = "context_read_status";
    const CATEGORY: Category = Category::Bible;
    const DESCRIPTION: &'static str = "A status summary of the story bible: how many entities of each kind, translation progress per scene (translated of total lines) and QA findings by severity and check. A good first call.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(_: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let bible = cx.bible();
        let counts: BTreeMap<&str, usize> = Kind::ALL
            .iter()
            .map(|k| (k.name(), bible.list(*k).count()))
            .collect();
        let mut text = format!(
            "Story bible: {}.",
            Kind::ALL
                .iter()
                .map(|k| format!("{} {}", counts[k.name()], k.name()))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let mut scenes = Vec::new();
        let (mut all_done, mut all_total) = (0usize, 0usize);
        if counts["scene"] > 0 {
            text.push_str("\nTranslation progress:");
        }
        for scene in bible.list(Kind::Scene) {
            match scene_lines(cx.project(), bible, &scene.id) {
                Ok(lines) => {
                    let total = lines.lines.len();
                    let done = translations_of(bible, &scene.id)
                        .iter()
                        .filter(|(n, t)| {
                            **n >= 1
                                && **n as usize <= total
                                && !is_empty_value(Some(t.get("target")))
                        })
                        .count();
                    all_done += done;
                    all_total += total;
                    let pct = (done * 100).checked_div(total).unwrap_or(100);
                    text.push_str(&format!("\n- {}: {done}/{total} lines ({pct}%)", scene.id));
                    scenes.push(json!({"scene": scene.id, "translated": done, "total": total}));
                }
                Err(e) => {
                    text.push_str(&format!("\n- {}: lines unknown ({})", scene.id, e.message));
                    scenes.push(json!({"scene": scene.id, "error": e.message}));
                }
            }
        }
        if counts["scene"] > 0 {
            text.push_str(&format!(
                "\nIn all: {all_done}/{all_total} lines translated."
            ));
        }
        let mut by_severity: BTreeMap<String, usize> = BTreeMap::new();
        let mut by_check: BTreeMap<String, usize> = BTreeMap::new();
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
        if by_severity.is_empty() {
            text.push_str("\nQA: no findings.");
        } else {
            text.push_str(&format!(
                "\nQA findings by severity: {}; by check: {}.",
                join(&by_severity),
                join(&by_check)
            ));
        }
        Ok(json!({
            "text": text,
            "counts": counts,
            "translation": {"scenes": scenes, "translated": all_done, "total": all_total},
            "qa": {"by_severity": by_severity, "by_check": by_check},
        }))
    }
}
