//! Navigation tools: move the editor to text, chapters, scenes and positions. They change
//! the UI state (active chapter, cursor, selection, scroll), are not reversible and are not
//! recorded in the history.
//!
//! `navigate_to_text` searches in four ways:
//! - `exact`: the query as written (case-sensitive), first occurrence;
//! - `fuzzy`: tolerant of case, whitespace, quote and dash variants and small typos; the
//!   best match wins and its score (0..1) is returned;
//! - `dialogue`: only inside spoken text (straight, curly, guillemet and em-dash dialogue);
//!   the best-matching line of dialogue wins;
//! - `character_mention`: when the query is a story-bible character's id, name or alias (in
//!   any case), whole-word mentions of any of that character's names and aliases
//!   (case-sensitive, as [`crate::bible::mentions`] detects them; where two names overlap the
//!   longer wins); otherwise (or when none of them occurs) whole-word, case-insensitive
//!   mentions of the query or, failing that, of each part of it.
//!
//! Without a `chapter`, chapters are searched starting at the active one.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use serde_json::Value;

use super::editing::preview;
use super::{ToolError, ToolRegistry, ToolSpec};
use crate::bible::{mentions, Bible, Entity, Kind};
use crate::commands::Category;
use crate::project::analysis::{self, SceneKind};
use crate::project::{search, Chapter, Project};
use crate::session::EditContext;

/// Register the navigation tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.add::<NavigateToText>();
    registry.add::<JumpToChapter>();
    registry.add::<JumpToScene>();
    registry.add::<ScrollToPosition>();
}

/// How `navigate_to_text` searches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchType {
    // The query as written.
    #[default]
    Exact,
    // Tolerant of case, whitespace, quotes, dashes and small typos.
    Fuzzy,
    // Only inside dialogue.
    Dialogue,
    // Mentions of a character's name.
    CharacterMention,
}

/// Arguments of `navigate_to_text`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NavigateArgs {
    /// What to find: a passage, a line of dialogue, or a character's name.
    pub query: String,
    /// The chapter to search (id, number or title). Defaults to every chapter, starting at
    /// the active one.
    #[serde(default)]
    pub chapter: Option<String>,
    /// exact (default), fuzzy, dialogue or character_mention.
    #[serde(default, alias = "search_type")]
    pub search_type: SearchType,
}

/// A found range.
struct Found {
    chapter: usize,
    start: usize,
    end: usize,
    score: f64,
}

/// The chapters to search, in order. Each one's text is copied into one `str` only when it is
/// searched (an exact search found in the active chapter copies no other chapter).
struct Texts<'p> {
    project: &'p Project,
    order: Vec<usize>,
}

impl Texts<'_> {
    /// Each chapter's index and text, in search order.
    fn iter(&self) -> impl Iterator<Item = (usize, String)> + '_ {
        self.order
            .iter()
            .map(|&i| (i, self.project.chapters[i].text().to_string()))
    }
}

/// Chapter indices to search: the named one, or all starting at the active chapter.
fn search_order(cx: &EditContext<'_>, chapter: Option<&str>) -> Result<Vec<usize>, ToolError> {
    let project = cx.project();
    if let Some(name) = chapter.filter(|n| !n.trim().is_empty()) {
        let id = project.find_chapter(name)?.id.clone();
        return Ok(project.chapter_index(&id).into_iter().collect());
    }
    let n = project.chapters.len();
    let first = project
        .active_chapter()
        .and_then(|c| project.chapter_index(&c.id))
        .unwrap_or(0);
    Ok((0..n).map(|i| (first + i) % n).collect())
}

/// Whole-word, case-insensitive occurrences of `word` in `text` (char offsets).
pub fn word_mentions(text: &str, word: &str) -> Vec<(usize, usize)> {
    let fold = |c: char| c.to_lowercase().next().unwrap_or(c);
    let hay: Vec<char> = text.chars().map(fold).collect();
    let needle: Vec<char> = word.trim().chars().map(fold).collect();
    let mut out = Vec::new();
    if needle.is_empty() || needle.len() > hay.len() {
        return out;
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        if hay[i] == needle[0]
            && hay[i..i + needle.len()] == needle[..]
            && (i == 0 || !is_word(hay[i - 1]))
            && hay.get(i + needle.len()).is_none_or(|c| !is_word(*c))
        {
            out.push((i, i + needle.len()));
            i += needle.len();
        } else {
            i += 1;
        }
    }
    out
}

fn found_json(project: &Project, found: &Found, search_type: &str) -> Value {
    let chapter = &project.chapters[found.chapter];
    let text = chapter.slice(found.start, found.end);
    let context = chapter.slice(found.start.saturating_sub(80), found.end + 80);
    json!({
        "chapter": chapter.id,
        "chapterNumber": found.chapter + 1,
        "chapterTitle": chapter.title,
        "start": found.start,
        "end": found.end,
        "text": preview(&text, 400),
        "context": preview(&context, 600),
        "score": (found.score * 1000.0).round() / 1000.0,
        "searchType": search_type,
    })
}

fn go_to(cx: &mut EditContext<'_>, chapter: usize, start: usize, end: usize) {
    let id = cx.project().chapters[chapter].id.clone();
    let ui = cx.ui();
    ui.active_chapter = Some(id);
    ui.selection = (start < end).then_some((start, end));
    ui.cursor = start;
    ui.reveal_at(start);
}

/// `navigate_to_text`.
pub struct NavigateToText;

impl ToolSpec for NavigateToText {
    type Args = NavigateArgs;
    const NAME: &'static str = "navigate_to_text";
    const CATEGORY: Category = Category::Navigation;
    const DESCRIPTION: &'static str = "Find text in the manuscript and move the editor there (selecting it). searchType: exact (default, as written), fuzzy (tolerates case, quotes, dashes, whitespace and small typos; returns a score), dialogue (only inside spoken lines) or character_mention (whole-word mentions of a name; for a story-bible character, named by id, name or alias, mentions of any of its names and aliases). Searches the named chapter, or all chapters starting at the active one.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let query = args.query.trim();
        if query.is_empty() {
            return Err(ToolError::invalid_args(
                "'query' must not be empty; give the text, dialogue or name to find",
            ));
        }
        let order = search_order(cx, args.chapter.as_deref())?;
        let project = cx.project();
        let texts = Texts { project, order };
        let (found, extra) = match args.search_type {
            SearchType::Exact => (find_exact(&texts, &args.query), Value::Null),
            SearchType::Fuzzy => (find_fuzzy(&texts, query), Value::Null),
            SearchType::Dialogue => (find_dialogue(&texts, query), Value::Null),
            SearchType::CharacterMention => find_bible_mention(project, cx.bible(), &texts, query)
                .unwrap_or_else(|| find_mention(project, &texts, query)),
        };
        let type_name = match args.search_type {
            SearchType::Exact => "exact",
            SearchType::Fuzzy => "fuzzy",
            SearchType::Dialogue => "dialogue",
            SearchType::CharacterMention => "character_mention",
        };
        let Some(found) = found else {
            let mut error = ToolError::not_found(format!(
                "No {} match for \"{}\"{}.",
                type_name.replace('_', " "),
                preview(query, 80),
                if texts.order.len() == 1 {
                    format!(" in chapter {}", texts.order[0] + 1)
                } else {
                    " in any chapter".into()
                }
            ));
            if args.search_type == SearchType::Exact {
                if let Some((i, close)) = texts
                    .iter()
                    .filter_map(|(i, t)| search::closest(&t, query).map(|m| (i, m)))
                    .max_by(|a, b| a.1.score.total_cmp(&b.1.score))
                {
                    error.message.push_str(&format!(
                        " The closest text is \"{}\" in chapter {} (similarity {:.2}); try searchType fuzzy.",
                        preview(&close.text, 120),
                        i + 1,
                        close.score
                    ));
                }
            }
            return Err(error);
        };
        let mut result = found_json(project, &found, type_name);
        if let Value::Object(extra) = extra {
            if let Value::Object(map) = &mut result {
                map.extend(extra);
            }
        }
        go_to(cx, found.chapter, found.start, found.end);
        Ok(result)
    }
}

fn find_exact(texts: &Texts<'_>, query: &str) -> Option<Found> {
    texts.iter().find_map(|(i, text)| {
        search::find_exact_from(&text, query, 0).map(|m| Found {
            chapter: i,
            start: m.start,
            end: m.end,
            score: 1.0,
        })
    })
}

fn find_fuzzy(texts: &Texts<'_>, query: &str) -> Option<Found> {
    let mut best: Option<Found> = None;
    for (i, text) in texts.iter() {
        if let Some(m) = search::find_fuzzy(&text, query, search::DEFAULT_MIN_SCORE) {
            if best.as_ref().is_none_or(|b| m.score > b.score) {
                best = Some(Found {
                    chapter: i,
                    start: m.start,
                    end: m.end,
                    score: m.score,
                });
            }
            if m.score >= 1.0 {
                break;
            }
        }
    }
    best
}

fn find_dialogue(texts: &Texts<'_>, query: &str) -> Option<Found> {
    let mut best: Option<Found> = None;
    for (i, text) in texts.iter() {
        let spans = analysis::dialogue_spans(&text);
        if spans.is_empty() {
            continue;
        }
        // Char offset -> byte offset for the span starts and ends.
        let bytes: Vec<usize> = text
            .char_indices()
            .map(|(b, _)| b)
            .chain(std::iter::once(text.len()))
            .collect();
        for span in spans {
            let (Some(&from), Some(&to)) = (bytes.get(span.start), bytes.get(span.end)) else {
                continue;
            };
            let line = &text[from..to];
            let score = search::find_fuzzy(line, query, search::DEFAULT_MIN_SCORE)
                .map(|m| m.score)
                .unwrap_or(0.0);
            if score > 0.0 && best.as_ref().is_none_or(|b| score > b.score) {
                best = Some(Found {
                    chapter: i,
                    start: span.start,
                    end: span.end,
                    score,
                });
            }
        }
        if best.as_ref().is_some_and(|b| b.score >= 1.0) {
            break;
        }
    }
    best
}

/// The story-bible character the query names (by id, name or alias, in any case): the first
/// by id when several match.
fn bible_character<'b>(bible: &'b Bible, query: &str) -> Option<&'b Entity> {
    let lower = query.trim().to_lowercase();
    bible.get(Kind::Character, query.trim()).or_else(|| {
        bible.list(Kind::Character).find(|e| {
            e.id.to_lowercase() == lower
                || mentions::names_of(e)
                    .iter()
                    .any(|n| n.to_lowercase() == lower)
        })
    })
}

/// Mentions of a story-bible character the query names: any of its names and aliases as
/// whole words (case-sensitive; where names overlap the longer wins). `None` when the query
/// names no character or none of its names occurs in the searched chapters.
fn find_bible_mention(
    project: &Project,
    bible: &Bible,
    texts: &Texts<'_>,
    query: &str,
) -> Option<(Option<Found>, Value)> {
    let entity = bible_character(bible, query)?;
    let names = mentions::names_of(entity);
    let mut first = None;
    let mut counts = Vec::new();
    let mut total = 0;
    let mut matched: Vec<String> = Vec::new();
    for (i, text) in texts.iter() {
        // Longest names first, so a shorter name inside a longer one is not counted twice.
        let mut hits: Vec<(usize, usize, &str)> = Vec::new();
        for name in &names {
            for (start, end) in mentions::find_word(&text, name) {
                if !hits.iter().any(|(s, e, _)| start < *e && *s < end) {
                    hits.push((start, end, name));
                }
            }
        }
        if hits.is_empty() {
            continue;
        }
        hits.sort();
        for (_, _, name) in &hits {
            if !matched.iter().any(|m| m == name) {
                matched.push(name.to_string());
            }
        }
        if first.is_none() {
            first = Some(Found {
                chapter: i,
                start: hits[0].0,
                end: hits[0].1,
                score: 1.0,
            });
        }
        total += hits.len();
        counts.push(json!({"chapter": project.chapters[i].id, "chapterNumber": i + 1, "mentions": hits.len()}));
    }
    first.as_ref()?;
    Some((
        first,
        json!({
            "character": entity.id,
            "characterNames": names,
            "matchedNames": matched,
            "totalMentions": total,
            "mentionsByChapter": counts,
        }),
    ))
}

fn find_mention(project: &Project, texts: &Texts<'_>, name: &str) -> (Option<Found>, Value) {
    let search_with = |term: &str| -> (Option<Found>, Vec<Value>, usize) {
        let mut first = None;
        let mut counts = Vec::new();
        let mut total = 0;
        for (i, text) in texts.iter() {
            let hits = word_mentions(&text, term);
            if hits.is_empty() {
                continue;
            }
            if first.is_none() {
                first = Some(Found {
                    chapter: i,
                    start: hits[0].0,
                    end: hits[0].1,
                    score: 1.0,
                });
            }
            total += hits.len();
            counts.push(json!({"chapter": project.chapters[i].id, "chapterNumber": i + 1, "mentions": hits.len()}));
        }
        (first, counts, total)
    };
    let (mut first, mut counts, mut total) = search_with(name);
    let mut matched = vec![name.to_string()];
    if first.is_none() {
        // "Mara Vey" may appear as "Mara" or "Vey": try each capitalized part.
        matched.clear();
        for part in name.split_whitespace().filter(|p| p.chars().count() >= 3) {
            let (f, c, t) = search_with(part);
            if f.is_some() {
                matched.push(part.to_string());
                if first.is_none() {
                    first = f;
                    counts = c;
                }
                total += t;
            }
        }
    }
    (
        first,
        json!({"matchedNames": matched, "totalMentions": total, "mentionsByChapter": counts}),
    )
}

/// Arguments of `jump_to_chapter`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct JumpToChapterArgs {
    /// The chapter: "3", "Chapter 3", "three", "third", a roman numeral, its title or part
    /// of its title, or its id.
    pub chapter: String,
}

/// `jump_to_chapter`.
pub struct JumpToChapter;

impl ToolSpec for JumpToChapter {
    type Args = JumpToChapterArgs;
    const NAME: &'static str = "jump_to_chapter";
    const CATEGORY: Category = Category::Navigation;
    const DESCRIPTION: &'static str = "Open a chapter in the editor, by number (\"3\", \"Chapter 3\", \"three\"), title (or part of it) or id.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let chapter = cx.project().find_chapter(&args.chapter)?;
        let id = chapter.id.clone();
        let number = cx.project().chapter_index(&id).map_or(0, |i| i + 1);
        let result = json!({
            "chapter": id, "chapterNumber": number, "chapterTitle": chapter.title,
            "length": chapter.len_chars(),
        });
        let ui = cx.ui();
        ui.active_chapter = Some(id);
        ui.cursor = 0;
        ui.selection = None;
        ui.reveal_at(0);
        Ok(result)
    }
}

/// Which way to jump.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    // The next scene after the cursor (default).
    #[default]
    Next,
    // The scene before the one with the cursor.
    Previous,
}

/// A scene type to look for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SceneFilter {
    // Any scene (default).
    #[default]
    Any,
    // Mostly dialogue.
    Dialogue,
    // Mostly action.
    Action,
    // Mostly description.
    Description,
    // A mix.
    Mixed,
}

impl SceneFilter {
    fn accepts(self, kind: SceneKind) -> bool {
        matches!(
            (self, kind),
            (SceneFilter::Any, _)
                | (SceneFilter::Dialogue, SceneKind::Dialogue)
                | (SceneFilter::Action, SceneKind::Action)
                | (SceneFilter::Description, SceneKind::Description)
                | (SceneFilter::Mixed, SceneKind::Mixed)
        )
    }
}

/// Arguments of `jump_to_scene`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JumpToSceneArgs {
    /// next (default) or previous, from the cursor.
    #[serde(default)]
    pub direction: Direction,
    /// Only scenes of this type: any (default), dialogue, action, description or mixed.
    #[serde(default, alias = "scene_type")]
    pub scene_type: SceneFilter,
}

/// `jump_to_scene`.
pub struct JumpToScene;

impl ToolSpec for JumpToScene {
    type Args = JumpToSceneArgs;
    const NAME: &'static str = "jump_to_scene";
    const CATEGORY: Category = Category::Navigation;
    const DESCRIPTION: &'static str = "Move to the next or previous scene from the cursor, optionally of one type (dialogue, action, description, mixed). Continues into following or earlier chapters.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let project = cx.project();
        let Some(active) = project.active_chapter() else {
            return Err(ToolError::not_found("the project has no chapters"));
        };
        let start_chapter = project.chapter_index(&active.id).unwrap_or(0);
        let cursor = project.ui.cursor;
        let n = project.chapters.len();
        let scenes_of = |c: &Chapter| analysis::scenes(&c.text().to_string());
        let mut found = None;
        match args.direction {
            Direction::Next => {
                for ci in start_chapter..n {
                    let scenes = scenes_of(&project.chapters[ci]);
                    if let Some(s) = scenes.into_iter().find(|s| {
                        (ci > start_chapter || s.start > cursor) && args.scene_type.accepts(s.kind)
                    }) {
                        found = Some((ci, s));
                        break;
                    }
                }
            }
            Direction::Previous => {
                for ci in (0..=start_chapter).rev() {
                    let scenes = scenes_of(&project.chapters[ci]);
                    let current_start = if ci == start_chapter {
                        scenes
                            .iter()
                            .rev()
                            .find(|s| s.start <= cursor)
                            .map_or(0, |s| s.start)
                    } else {
                        usize::MAX
                    };
                    if let Some(s) = scenes
                        .into_iter()
                        .rev()
                        .find(|s| s.start < current_start && args.scene_type.accepts(s.kind))
                    {
                        found = Some((ci, s));
                        break;
                    }
                }
            }
        }
        let Some((ci, scene)) = found else {
            return Err(ToolError::not_found(
                format!(
                    "no {} scene {} the cursor",
                    match args.scene_type {
                        SceneFilter::Any => "",
                        SceneFilter::Dialogue => "dialogue ",
                        SceneFilter::Action => "action ",
                        SceneFilter::Description => "description ",
                        SceneFilter::Mixed => "mixed ",
                    }
                    .trim_end(),
                    if args.direction == Direction::Next {
                        "after"
                    } else {
                        "before"
                    }
                )
                .replace("no  scene", "no scene"),
            ));
        };
        let chapter = &project.chapters[ci];
        let result = json!({
            "chapter": chapter.id,
            "chapterNumber": ci + 1,
            "chapterTitle": chapter.title,
            "sceneIndex": scene.index,
            "start": scene.start,
            "end": scene.end,
            "kind": scene.kind,
            "heading": scene.heading,
            "preview": preview(&chapter.slice(scene.start, scene.start + 200), 200),
        });
        go_to(cx, ci, scene.start, scene.start);
        Ok(result)
    }
}

/// Arguments of `scroll_to_position`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ScrollArgs {
    /// Position in chars from the chapter start.
    pub position: usize,
    /// The chapter (id, number or title). Defaults to the active chapter.
    #[serde(default)]
    pub chapter: Option<String>,
}

/// `scroll_to_position`.
pub struct ScrollToPosition;

impl ToolSpec for ScrollToPosition {
    type Args = ScrollArgs;
    const NAME: &'static str = "scroll_to_position";
    const CATEGORY: Category = Category::Navigation;
    const DESCRIPTION: &'static str =
        "Scroll the editor to a position (chars from the chapter start) in the active or named chapter.";
    const REVERSIBLE: bool = false;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let chapter = cx.chapter(args.chapter.as_deref())?;
        let len = chapter.len_chars();
        if args.position > len {
            return Err(ToolError::new(
                "out_of_range",
                format!(
                    "position {} is past the end of the chapter ({len} chars)",
                    args.position
                ),
            ));
        }
        let id = chapter.id.clone();
        let ui = cx.ui();
        ui.active_chapter = Some(id.clone());
        ui.reveal_at(args.position);
        Ok(json!({ "chapter": id, "position": args.position }))
    }
}
