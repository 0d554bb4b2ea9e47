//! Analysis tools: local figures about the manuscript, computed in the worker with no model
//! call. They read and never edit.
//!
//! - `get_critique_for_selection` critiques the selected passage with a focus (prose,
//!   pacing, dialogue, clarity): statistics, repeated words, adverbs, passive-voice hints,
//!   pacing figures, and suggestions derived from them by documented thresholds.
//! - `run_analysis` reports a section (pacing, characters, plot, setting) over one chapter or
//!   the whole manuscript. Its optional LLM pass (`interpret`) is run by the core after the
//!   local result, with [`super::generation::interpretation_plan`]; the local figures do not
//!   depend on it.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use serde_json::Value;

use super::editing::preview;
use super::{ToolError, ToolRegistry, ToolSpec};
use crate::commands::Category;
use crate::project::analysis::{self, Hint};
use crate::project::Project;
use crate::session::EditContext;

/// Register the analysis tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.add::<CritiqueSelection>();
    registry.add::<RunAnalysis>();
}

/// Sentences longer than this many words are flagged for clarity.
pub const LONG_SENTENCE_WORDS: f64 = 30.0;
/// Average sentence length above which pacing suggests variety.
pub const SLOW_AVG_SENTENCE_WORDS: f64 = 25.0;
/// Share of short sentences above which pacing calls the passage choppy.
pub const CHOPPY_SHORT_RATIO: f64 = 0.6;
/// Adverbs per 100 words above which prose suggests stronger verbs.
pub const ADVERBS_PER_100_WORDS: f64 = 3.0;
/// Most items listed per kind.
const LIST_MAX: usize = 15;

/// What a critique concentrates on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Focus {
    // Word choice: repetition, adverbs, passive voice (default).
    #[default]
    Prose,
    // Sentence rhythm and scene pacing.
    Pacing,
    // Spoken lines and their balance with narration.
    Dialogue,
    // Long sentences, passive voice, word length.
    Clarity,
}

/// Arguments of `get_critique_for_selection`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CritiqueArgs {
    /// prose (default), pacing, dialogue or clarity.
    #[serde(default)]
    pub focus: Focus,
}

fn shift(hints: Vec<Hint>, by: usize) -> Vec<Value> {
    hints
        .into_iter()
        .take(LIST_MAX)
        .map(|h| json!({"start": h.start + by, "end": h.end + by, "text": h.text, "kind": h.kind}))
        .collect()
}

/// `get_critique_for_selection`.
pub struct CritiqueSelection;

impl ToolSpec for CritiqueSelection {
    type Args = CritiqueArgs;
    const NAME: &'static str = "get_critique_for_selection";
    const CATEGORY: Category = Category::Analysis;
    const DESCRIPTION: &'static str = "Critique the passage the writer selected, with a focus: prose (repetition, adverbs, passive voice), pacing (sentence rhythm), dialogue, or clarity. Returns figures and suggestions; fails when nothing is selected.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let project = cx.project();
        let selection = project.ui.selection.filter(|(s, e)| s < e);
        let (Some(chapter), Some((start, end))) = (project.active_chapter(), selection) else {
            return Err(ToolError::new(
                "no_selection",
                "Nothing is selected. Ask the writer to select a passage, or select one with set_selection or navigate_to_text first.",
            ));
        };
        let text = chapter.slice(start, end);
        let stats = analysis::stats(&text);
        let pacing = analysis::pacing(&text);
        let words = stats.words.max(1) as f64;
        let mut result = json!({
            "chapter": chapter.id,
            "start": start,
            "end": end,
            "focus": match args.focus {
                Focus::Prose => "prose", Focus::Pacing => "pacing",
                Focus::Dialogue => "dialogue", Focus::Clarity => "clarity",
            },
            "excerpt": preview(&text, 300),
            "stats": stats,
            "kind": analysis::classify_pacing(&pacing),
        });
        let mut suggestions: Vec<String> = Vec::new();
        match args.focus {
            Focus::Prose => {
                let repeated = analysis::repeated_words(&text, 3);
                let adverbs = analysis::adverbs(&text);
                let passive = analysis::passive_hints(&text);
                for w in repeated.iter().take(5) {
                    suggestions.push(format!(
                        "\"{}\" appears {} times; consider varying it.",
                        w.word, w.count
                    ));
                }
                let per_100 = adverbs.len() as f64 * 100.0 / words;
                if per_100 > ADVERBS_PER_100_WORDS {
                    suggestions.push(format!(
                        "{} -ly adverbs ({:.1} per 100 words); a stronger verb often says it better.",
                        adverbs.len(),
                        per_100
                    ));
                }
                if !passive.is_empty() {
                    suggestions.push(format!(
                        "{} passive constructions; active voice is usually livelier.",
                        passive.len()
                    ));
                }
                result["repeatedWords"] =
                    json!(repeated.into_iter().take(LIST_MAX).collect::<Vec<_>>());
                result["adverbs"] = json!(shift(adverbs, start));
                result["passive"] = json!(shift(passive, start));
            }
            Focus::Pacing => {
                if pacing.avg_sentence_words > SLOW_AVG_SENTENCE_WORDS {
                    suggestions.push(format!(
                        "Sentences average {:.0} words; shorter ones would quicken the pace.",
                        pacing.avg_sentence_words
                    ));
                }
                if pacing.short_sentence_ratio > CHOPPY_SHORT_RATIO {
                    suggestions.push(format!(
                        "{:.0}% of sentences are very short; vary the rhythm unless the choppiness is deliberate.",
                        pacing.short_sentence_ratio * 100.0
                    ));
                }
                if pacing.sentence_words_stddev < 3.0 && stats.sentences >= 4 {
                    suggestions.push(
                        "Sentence lengths are very even; mixing long and short ones adds rhythm."
                            .into(),
                    );
                }
                result["pacing"] = json!(pacing);
            }
            Focus::Dialogue => {
                let spans = analysis::dialogue_spans(&text);
                if spans.is_empty() {
                    suggestions.push("The selection has no dialogue.".into());
                } else if pacing.dialogue_ratio > 0.85 {
                    suggestions.push("Almost all dialogue: a beat of action or setting between lines can ground the speakers.".into());
                }
                let tag_adverbs: Vec<Hint> = analysis::adverbs(&text)
                    .into_iter()
                    .filter(|h| !spans.iter().any(|s| s.start <= h.start && h.end <= s.end))
                    .collect();
                if !tag_adverbs.is_empty() {
                    suggestions.push(format!(
                        "{} adverbs outside the spoken lines (such as \"said softly\"); let the dialogue carry the tone.",
                        tag_adverbs.len()
                    ));
                }
                result["dialogueRatio"] = json!(pacing.dialogue_ratio);
                result["lines"] = json!(spans
                    .iter()
                    .take(LIST_MAX)
                    .map(|s| json!({"start": s.start + start, "end": s.end + start, "style": s.style}))
                    .collect::<Vec<_>>());
            }
            Focus::Clarity => {
                let passive = analysis::passive_hints(&text);
                if pacing.avg_sentence_words > LONG_SENTENCE_WORDS {
                    suggestions.push(format!(
                        "Sentences average {:.0} words; split the longest ones.",
                        pacing.avg_sentence_words
                    ));
                }
                if stats.avg_word_chars > 6.0 {
                    suggestions.push("Long words on average; plainer words read faster.".into());
                }
                if !passive.is_empty() {
                    suggestions.push(format!(
                        "{} passive constructions hide who acts.",
                        passive.len()
                    ));
                }
                result["pacing"] = json!(pacing);
                result["passive"] = json!(shift(passive, start));
            }
        }
        if suggestions.is_empty() {
            suggestions.push("Nothing stands out by these measures.".into());
        }
        result["suggestions"] = json!(suggestions);
        Ok(result)
    }
}

/// A section of `run_analysis`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    // Scene-by-scene pacing figures.
    Pacing,
    // Who appears where (capitalized names, by chapter).
    Characters,
    // An outline: scenes with their kind and opening line.
    Plot,
    // Places named after prepositions (in, at, to, from ...).
    Setting,
}

impl Section {
    /// Every section, in the order of the full analysis.
    const ALL: [Section; 4] = [
        Section::Pacing,
        Section::Characters,
        Section::Plot,
        Section::Setting,
    ];

    /// Its name in arguments and results.
    fn name(self) -> &'static str {
        match self {
            Section::Pacing => "pacing",
            Section::Characters => "characters",
            Section::Plot => "plot",
            Section::Setting => "setting",
        }
    }
}

/// Arguments of `run_analysis`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunAnalysisArgs {
    /// pacing, characters, plot or setting; default: the full analysis (every section).
    #[serde(default)]
    pub section: Option<Section>,
    /// A chapter (id, number or title); defaults to the whole manuscript.
    #[serde(default)]
    pub chapter: Option<String>,
    /// Also ask the model for a short reading of these figures (default: true when a model is
    /// configured).
    #[serde(default)]
    pub interpret: Option<bool>,
}

/// Words that start with a capital letter but are not names.
const NOT_NAMES: &[&str] = &[
    "A", "All", "An", "And", "As", "At", "But", "By", "Chapter", "Dr", "Even", "For", "From", "He",
    "Her", "His", "How", "I", "If", "In", "It", "Its", "Lady", "Lord", "Mr", "Mrs", "Ms", "My",
    "No", "Not", "Now", "Of", "Oh", "On", "One", "Only", "Or", "Our", "She", "Sir", "So", "Still",
    "That", "The", "Their", "Then", "There", "These", "They", "This", "Those", "To", "Two", "We",
    "What", "When", "Where", "Who", "Why", "With", "Yes", "You", "Your",
];

/// Capitalized words not at the start of a sentence: candidate names, with counts.
fn name_candidates(text: &str) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    let mut sentence_start = true;
    for raw in text.split_whitespace() {
        let word: String = raw.trim_matches(|c: char| !c.is_alphanumeric()).to_string();
        let opens_quote = raw.starts_with(['"', '“', '«', '—', '‘']);
        if !word.is_empty()
            && !sentence_start
            && !opens_quote
            && word.chars().next().is_some_and(char::is_uppercase)
            && word.chars().count() > 1
            && NOT_NAMES.binary_search(&word.as_str()).is_err()
        {
            *counts.entry(word).or_default() += 1;
        }
        sentence_start = raw.ends_with(['.', '!', '?', '…', '"', '”', '»', ':']);
    }
    counts
}

/// Place prepositions, before a capitalized phrase that may be a place.
const PREPOSITIONS: &[&str] = &[
    "across", "along", "around", "at", "behind", "beneath", "beyond", "from", "in", "inside",
    "into", "near", "off", "onto", "outside", "over", "past", "through", "to", "toward", "towards",
    "under", "within",
];

/// Capitalized phrases right after a place preposition.
fn place_candidates(text: &str) -> BTreeMap<String, usize> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut counts = BTreeMap::new();
    for i in 0..words.len() {
        if PREPOSITIONS
            .binary_search(&words[i].to_lowercase().as_str())
            .is_err()
        {
            continue;
        }
        let mut j = i + 1;
        if words.get(j).is_some_and(|w| w.eq_ignore_ascii_case("the")) {
            j += 1;
        }
        let mut phrase = Vec::new();
        while let Some(w) = words.get(j) {
            let clean = w.trim_matches(|c: char| !c.is_alphanumeric());
            if clean.chars().next().is_some_and(char::is_uppercase)
                && NOT_NAMES.binary_search(&clean).is_err()
            {
                phrase.push(clean.to_string());
                if clean.len() != w.len() {
                    break; // punctuation ends the phrase
                }
                j += 1;
            } else {
                break;
            }
        }
        if !phrase.is_empty() {
            *counts.entry(phrase.join(" ")).or_default() += 1;
        }
    }
    counts
}

fn top(counts: BTreeMap<String, usize>, min: usize) -> Vec<(String, usize)> {
    let mut list: Vec<(String, usize)> = counts.into_iter().filter(|(_, n)| *n >= min).collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    list.truncate(30);
    list
}

/// `run_analysis`.
pub struct RunAnalysis;

impl ToolSpec for RunAnalysis {
    type Args = RunAnalysisArgs;
    const NAME: &'static str = "run_analysis";
    const CATEGORY: Category = Category::Analysis;
    const DESCRIPTION: &'static str = "Analyze the manuscript (or one chapter) locally: pacing (scene-by-scene figures), characters (who is named where), plot (an outline of scenes) or setting (places named). Without a section, the full analysis: every section.";
    const REVERSIBLE: bool = false;
    const READ_ONLY: bool = true;

    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let project = cx.project();
        let indices: Vec<usize> = match args.chapter.as_deref().filter(|c| !c.trim().is_empty()) {
            Some(name) => {
                let id = project.find_chapter(name)?.id.clone();
                project.chapter_index(&id).into_iter().collect()
            }
            None => (0..project.chapters.len()).collect(),
        };
        let chapters: Vec<(usize, String)> = indices
            .iter()
            .map(|&i| (i, project.chapters[i].text().to_string()))
            .collect();
        let sections = match args.section {
            Some(section) => vec![section],
            None => Section::ALL.to_vec(),
        };
        // Each section is a step of the call's progress (the full analysis of a long
        // manuscript takes a while).
        let mut reports = Vec::with_capacity(sections.len());
        for (done, &section) in sections.iter().enumerate() {
            cx.progress(done, sections.len(), section.name());
            reports.push(section_report(section, project, &chapters));
        }
        cx.progress(sections.len(), sections.len(), "done");
        let mut result = match args.section {
            Some(section) => {
                let mut report = reports.pop().unwrap_or_default();
                report["section"] = json!(section.name());
                report
            }
            None => {
                let mut full = json!({"section": "full"});
                for (section, report) in sections.iter().zip(reports) {
                    full[section.name()] = report;
                }
                full
            }
        };
        result["scope"] = json!(if indices.len() == 1 {
            "chapter"
        } else {
            "manuscript"
        });
        Ok(result)
    }
}

/// One section of `run_analysis` over `chapters` (their indices and texts).
fn section_report(section: Section, project: &Project, chapters: &[(usize, String)]) -> Value {
    let head = |i: usize| json!({"chapter": project.chapters[i].id, "chapterNumber": i + 1, "chapterTitle": project.chapters[i].title});
    match section {
        Section::Pacing | Section::Plot => {
            let per_chapter: Vec<Value> = chapters
                .iter()
                .map(|(i, text)| {
                    let scenes: Vec<Value> = analysis::scenes(text)
                        .into_iter()
                        .map(|s| {
                            let body: String =
                                text.chars().skip(s.start).take(s.end - s.start).collect();
                            let mut v = json!({
                                "index": s.index, "start": s.start, "end": s.end,
                                "kind": s.kind, "heading": s.heading, "words": s.stats.words,
                            });
                            if section == Section::Pacing {
                                v["pacing"] = json!(s.pacing);
                            } else {
                                let opening =
                                    body.split_inclusive(['.', '!', '?']).next().unwrap_or("");
                                v["opening"] = json!(preview(opening.trim(), 160));
                            }
                            v
                        })
                        .collect();
                    let mut v = head(*i);
                    v["words"] = json!(analysis::stats(text).words);
                    v["scenes"] = json!(scenes);
                    v
                })
                .collect();
            json!({ "chapters": per_chapter })
        }
        Section::Characters => {
            let mut total: BTreeMap<String, usize> = BTreeMap::new();
            // Each name's JSON array (a map of `Value`s: a type the crate has anyway).
            let mut by_chapter: BTreeMap<String, Value> = BTreeMap::new();
            for (i, text) in chapters {
                for (name, n) in name_candidates(text) {
                    *total.entry(name.clone()).or_default() += n;
                    let list = by_chapter.entry(name).or_insert_with(|| json!([]));
                    if let Value::Array(list) = list {
                        list.push(json!({"chapterNumber": i + 1, "mentions": n}));
                    }
                }
            }
            let names: Vec<Value> = top(total, 2)
                .into_iter()
                .map(|(name, n)| {
                    let chapters = by_chapter.remove(&name).unwrap_or_else(|| json!([]));
                    json!({"name": name, "mentions": n, "chapters": chapters})
                })
                .collect();
            json!({ "characters": names, "note": "Capitalized words not at a sentence start; story-bible characters refine this once they exist." })
        }
        Section::Setting => {
            let mut total: BTreeMap<String, usize> = BTreeMap::new();
            for (_, text) in chapters {
                for (place, n) in place_candidates(text) {
                    *total.entry(place).or_default() += n;
                }
            }
            let places: Vec<Value> = top(total, 1)
                .into_iter()
                .map(|(place, n)| json!({"place": place, "mentions": n}))
                .collect();
            json!({ "places": places })
        }
    }
}

/// The headline figures of a `run_analysis` result, for the bedside note's status:
/// `(section, scope, one line)`, such as `("pacing", "manuscript", "2 chapters, 7 scenes,
/// 1,234 words; 14.2 words per sentence; dialogue 22%")`. `None` for what is not one.
pub fn headline(data: &Value) -> Option<(String, String, String)> {
    let section = data["section"].as_str()?.to_string();
    if section == "full" {
        // The full analysis: the pacing, characters and setting lines, over the same scope.
        let mut scope = String::new();
        let mut lines = Vec::new();
        for part in ["pacing", "characters", "setting"] {
            let mut report = data[part].clone();
            report["section"] = json!(part);
            report["scope"] = data["scope"].clone();
            if let Some((_, part_scope, line)) = headline(&report) {
                scope = part_scope;
                lines.push(line);
            }
        }
        return (!lines.is_empty()).then(|| (section, scope, lines.join("; ")));
    }
    let chapters = data["chapters"].as_array();
    let scope = match (data["scope"].as_str(), chapters.and_then(|c| c.first())) {
        (Some("chapter"), Some(first)) => match first["chapterNumber"].as_u64() {
            Some(n) => format!("chapter {n}"),
            None => "chapter".into(),
        },
        (Some(scope), _) => scope.to_string(),
        (None, _) => "manuscript".into(),
    };
    let top = |list: &Value, name: &str| -> String {
        let items: Vec<String> = list
            .as_array()
            .map(|l| {
                l.iter()
                    .take(5)
                    .filter_map(|i| Some(format!("{} ({})", i[name].as_str()?, i["mentions"])))
                    .collect()
            })
            .unwrap_or_default();
        if items.is_empty() {
            "none found".into()
        } else {
            items.join(", ")
        }
    };
    let line = match section.as_str() {
        "pacing" | "plot" => {
            let chapters = chapters?;
            let scenes: Vec<&Value> = chapters
                .iter()
                .filter_map(|c| c["scenes"].as_array())
                .flatten()
                .collect();
            let words: u64 = chapters.iter().filter_map(|c| c["words"].as_u64()).sum();
            let mut line = format!(
                "{} chapter{}, {} scene{}, {} words",
                chapters.len(),
                if chapters.len() == 1 { "" } else { "s" },
                scenes.len(),
                if scenes.len() == 1 { "" } else { "s" },
                crate::names::thousands(words as usize)
            );
            if section == "pacing" {
                let weight: f64 = scenes.iter().filter_map(|s| s["words"].as_f64()).sum();
                let mean = |field: &str| {
                    scenes
                        .iter()
                        .map(|s| {
                            s["words"].as_f64().unwrap_or(0.0)
                                * s["pacing"][field].as_f64().unwrap_or(0.0)
                        })
                        .sum::<f64>()
                        / weight.max(1.0)
                };
                line.push_str(&format!(
                    "; {:.1} words per sentence; dialogue {:.0}%",
                    mean("avg_sentence_words"),
                    mean("dialogue_ratio") * 100.0
                ));
            } else {
                let kinds: Vec<&str> = scenes
                    .iter()
                    .map(|s| s["kind"].as_str().unwrap_or("mixed"))
                    .collect();
                let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
                for kind in kinds {
                    *counts.entry(kind).or_default() += 1;
                }
                let kinds: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
                if !kinds.is_empty() {
                    line.push_str(&format!("; scenes: {}", kinds.join(", ")));
                }
            }
            line
        }
        "characters" => format!("most named: {}", top(&data["characters"], "name")),
        "setting" => format!("places: {}", top(&data["places"], "place")),
        _ => return None,
    };
    Some((section, scope, line))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lists searched by `binary_search` are sorted, without repeats.
    #[test]
    fn searched_word_lists_are_sorted() {
        for list in [NOT_NAMES, PREPOSITIONS] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
        }
    }
}
