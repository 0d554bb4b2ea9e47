//! Watched-entity monitoring: what an edit did to the entities the agents watch. Pure and
//! cheap: it reads only the text around what the edit changed, never the whole chapter.
//!
//! A [`Monitor`] is built from a project's watched entities (and the names the story bible
//! already knows); [`Monitor::scan`] looks at the chapter's text after an edit, at the
//! regions the edit changed ([`changed_regions`]), and reports [`Finding`]s:
//!
//! - **mention**: a watched entity's name (whole words, any case) that the edit typed or
//!   touched. Entities of `low` priority are not reported for mere mentions.
//! - **misspelling**: a capitalised word that the edit touched and that is one or two edits
//!   away from a word of a watched character's, location's or item's name (one edit for name
//!   words of up to five letters, two for longer ones), starts with the same letter, and is
//!   not itself a known name (a watched name or a story-bible name), nor the name with a
//!   plural `s` or a possessive: "Marra" for "Mara".
//! - **contradiction**: a keyword of a watched rule (the words of its name of four letters or
//!   more that are not common words, or all its words when none is) within
//!   [`CONTRADICTION_WINDOW`] words of a contradiction word ([`CONTRADICTION_WORDS`]: "never",
//!   "not", "no" (so "no longer"), "despite", "without", …) in the same sentence, where the
//!   edit touched either word.
//! - **changed** ([`Monitor::scan_removed`]): a watched name (not of `low` priority) that the
//!   text before the edit had where the edit deleted or replaced text, and that the lines
//!   around the edit now have fewer times: "Mara climbed" rewritten as "Someone climbed". The
//!   finding carries the line as it read before. While the writer's word at the caret is
//!   still the start of the name (backspacing to retype it), nothing is reported.
//! - **entry changed**: a watched character's or location's story-bible entry changed (the
//!   caller matches entries to watched names with [`Monitor::watching`]).
//!
//! **Only what the edit touched.** A word counts when it overlaps or touches a changed
//! region, so retyping elsewhere in a line does not report the line's old words again (and
//! the caller dedupes what is reported twice). For the writer's typing, the word that ends at
//! the caret is still being typed and is left out until a non-word character follows it (so
//! typing "Mar" on the way to "Mara" reports nothing, and "Mara " reports the mention).
//!
//! **Cost.** For each changed region the scan reads the region's lines, but at most
//! [`SCAN_CONTEXT_CHARS`] chars on each side of the region, and at most [`MAX_SCAN_CHARS`]
//! chars per edit in all (a huge paste is scanned in its first part only). Line numbers come
//! from the text's index, so a keystroke in a 5 MB chapter costs about as much as in a short
//! one. Names are matched with the crate's bounded [`Pattern`] matcher (compiled once per
//! monitor: the caller keeps a monitor while the watched list stays the same).

use serde::Serialize;
use std::collections::BTreeSet;

use crate::project::Text;

use super::{EntityType, Priority, WatchedEntity};
use crate::project::changeset::{ChangeSet, Op};
use crate::project::pattern::Pattern;

/// Chars read on each side of a changed region (within its line): enough for a name that
/// touches the region and for a contradiction word [`CONTRADICTION_WINDOW`] words away.
pub const SCAN_CONTEXT_CHARS: usize = 200;
/// Most chars read per edit, all regions together.
pub const MAX_SCAN_CHARS: usize = 64 * 1024;
/// Most findings reported per edit.
pub const MAX_FINDINGS: usize = 12;
/// How many words apart a rule's keyword and a contradiction word may be.
pub const CONTRADICTION_WINDOW: usize = 5;
/// The longest line text a finding carries (chars, cut around the finding).
pub const LINE_TEXT_CHARS: usize = 240;

/// Words that, near a watched rule's keyword, suggest the text goes against the rule.
/// Compared lowercase, with ’ read as '. "no longer" and "no more" are caught by "no".
pub const CONTRADICTION_WORDS: &[&str] = &[
    "aren't",
    "broke",
    "broken",
    "can't",
    "cannot",
    "couldn't",
    "defied",
    "despite",
    "didn't",
    "doesn't",
    "don't",
    "except",
    "forgot",
    "forgotten",
    "hadn't",
    "hasn't",
    "haven't",
    "ignored",
    "impossible",
    "instead",
    "isn't",
    "neither",
    "never",
    "no",
    "nor",
    "not",
    "unable",
    "unlike",
    "wasn't",
    "weren't",
    "without",
    "won't",
    "wouldn't",
];

/// Common words that are not a rule's keyword.
const COMMON_WORDS: &[&str] = &[
    "about", "after", "again", "also", "always", "been", "before", "being", "from", "have", "into",
    "just", "like", "more", "most", "must", "only", "other", "over", "rule", "rules", "some",
    "such", "than", "that", "their", "them", "then", "there", "these", "they", "this", "those",
    "under", "upon", "very", "were", "what", "when", "where", "which", "while", "will", "with",
    "would", "your",
];

/// Capitalised words that are never a misspelt name.
const NOT_NAMES: &[&str] = &[
    "And", "But", "Chapter", "Even", "Her", "His", "How", "Lady", "Lord", "Many", "Miss", "More",
    "Most", "Mrs", "Much", "Not", "Now", "Once", "One", "Only", "She", "Sir", "Some", "Still",
    "That", "The", "Then", "There", "These", "They", "This", "Those", "What", "When", "Where",
    "Who", "Why", "Yes",
];

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A watched entity was mentioned.
    Mention,
    /// A watched name seems misspelt.
    Misspelling,
    /// A watched rule's keyword next to a contradiction word.
    Contradiction,
    /// An edit removed or altered a mention of a watched entity.
    Changed,
    /// A watched entity's story-bible entry changed (by an agent or a job, not the writer).
    EntryChanged,
}

impl FindingKind {
    /// The wire name: `mention`, `misspelling`, `contradiction`, `changed` or
    /// `entry_changed`.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::Mention => "mention",
            FindingKind::Misspelling => "misspelling",
            FindingKind::Contradiction => "contradiction",
            FindingKind::Changed => "changed",
            FindingKind::EntryChanged => "entry_changed",
        }
    }
}

/// One thing an edit did to a watched entity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What was found.
    pub kind: FindingKind,
    /// The watched entity's id.
    pub entity_id: String,
    /// Its name.
    pub entity_name: String,
    /// Its type.
    pub entity_type: EntityType,
    /// What the text says: the name as written, the misspelt word, or the rule's keyword.
    pub word: String,
    /// The contradiction word (contradictions only).
    pub cue: Option<String>,
    /// The line, 1-based.
    pub line: usize,
    /// The line's text (cut to about [`LINE_TEXT_CHARS`] around the finding).
    pub line_text: String,
    /// Where the word starts in the chapter (chars).
    pub at: usize,
}

impl Finding {
    /// What identifies the finding for deduplication: a mention, a contradiction or a
    /// changed mention once per entity and chapter, a misspelling once per entity and
    /// spelling (in any chapter), a changed story-bible entry once per entity.
    pub fn key(&self, chapter: &str) -> String {
        match self.kind {
            FindingKind::Misspelling => format!(
                "misspelling|{}|{}",
                self.entity_id,
                self.word.to_lowercase()
            ),
            FindingKind::EntryChanged => format!("entry_changed|{}", self.entity_id),
            kind => format!("{}|{}|{chapter}", kind.as_str(), self.entity_id),
        }
    }

    /// A sentence saying what was found, where (`place` names the chapter, such as
    /// `chapter 2 (“The Stair”)`).
    pub fn describe(&self, place: &str) -> String {
        let what = entity_label(self.entity_type);
        match self.kind {
            FindingKind::Mention => format!(
                "The watched {what} {} is mentioned in {place}, line {}: “{}”",
                self.entity_name, self.line, self.line_text
            ),
            FindingKind::Misspelling => format!(
                "“{}” in {place}, line {} may be a misspelling of the watched {what} {}: “{}”",
                self.word, self.line, self.entity_name, self.line_text
            ),
            FindingKind::Contradiction => format!(
                "The watched rule “{}” may be contradicted in {place}, line {} (“{}” near “{}”): “{}”",
                self.entity_name,
                self.line,
                self.word,
                self.cue.as_deref().unwrap_or(""),
                self.line_text
            ),
            FindingKind::Changed => format!(
                "A mention of the watched {what} {} was removed or changed in {place}, line {}. It read: “{}”",
                self.entity_name, self.line, self.line_text
            ),
            FindingKind::EntryChanged => format!(
                "The story-bible entry of the watched {what} {} changed ({}): {}",
                self.entity_name, self.word, self.line_text
            ),
        }
    }
}

fn entity_label(kind: EntityType) -> &'static str {
    match kind {
        EntityType::Character => "character",
        EntityType::Item => "item",
        EntityType::Rule => "rule",
        EntityType::Location => "location",
        EntityType::PlotThread => "plot thread",
    }
}

/// What the monitor knows of one watched entity.
#[derive(Debug, Clone)]
struct Target {
    id: String,
    name: String,
    entity_type: EntityType,
    priority: Priority,
    /// The name, any case (the regex path of [`Pattern`]).
    pattern: Option<Pattern>,
    /// The name lowercased, matched as written against lowercased text (the fast path, used
    /// when lowercasing keeps a segment's length in chars).
    lower: Option<Pattern>,
    /// Capitalised words of the name of four letters or more (misspellings).
    name_words: Vec<String>,
    /// Lowercase keywords (rules).
    keywords: Vec<String>,
}

/// The compiled watch list of one project (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Monitor {
    targets: Vec<Target>,
    /// Lowercase words that are real names: never misspellings.
    known: BTreeSet<String>,
}

/// A word of a line: its text and its chars in the chapter.
struct Word {
    text: String,
    start: usize,
    end: usize,
}

impl Monitor {
    /// A monitor for `watched` (a project's watched entities); `known_names` are names the
    /// story bible knows (never reported as misspellings).
    pub fn new<'a>(
        watched: impl IntoIterator<Item = &'a WatchedEntity>,
        known_names: &[String],
    ) -> Self {
        // The bible's names (thousands, perhaps) at once: one sort.
        let mut known: BTreeSet<String> = (known_names.iter())
            .flat_map(|name| words_of(name))
            .map(|word| word.to_lowercase())
            .collect();
        let mut targets = Vec::new();
        for entity in watched {
            let name = entity.name.trim();
            for word in words_of(name) {
                known.insert(word.to_lowercase());
            }
            let name_words = match entity.entity_type {
                EntityType::Character | EntityType::Location | EntityType::Item => words_of(name)
                    .into_iter()
                    .filter(|w| {
                        w.chars().count() >= 4 && w.chars().next().is_some_and(char::is_uppercase)
                    })
                    .collect(),
                EntityType::Rule | EntityType::PlotThread => Vec::new(),
            };
            let keywords = if entity.entity_type == EntityType::Rule {
                let all: Vec<String> = words_of(name).iter().map(|w| w.to_lowercase()).collect();
                let strong: Vec<String> = all
                    .iter()
                    .filter(|w| {
                        w.chars().count() >= 4 && COMMON_WORDS.binary_search(&w.as_str()).is_err()
                    })
                    .filter(|w| CONTRADICTION_WORDS.binary_search(&w.as_str()).is_err())
                    .cloned()
                    .collect();
                if strong.is_empty() {
                    all.into_iter()
                        .filter(|w| CONTRADICTION_WORDS.binary_search(&w.as_str()).is_err())
                        .collect()
                } else {
                    strong
                }
            } else {
                Vec::new()
            };
            targets.push(Target {
                id: entity.id.clone(),
                name: name.to_string(),
                entity_type: entity.entity_type,
                priority: entity.priority,
                pattern: Pattern::literal(name, false).ok(),
                lower: Pattern::literal(&name.to_lowercase(), true).ok(),
                name_words,
                keywords,
            });
        }
        Self { targets, known }
    }

    /// Whether there is anything to watch.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// The findings of an edit of `text` (the chapter after the edit) that changed `regions`
    /// (char ranges of the new text, see [`changed_regions`]). `caret` is where the writer's
    /// typing ended (the word ending there is still being typed); `None` for an agent's edit.
    /// At most [`MAX_FINDINGS`], one per kind, entity and spelling, in text order.
    pub fn scan(
        &self,
        text: &Text,
        regions: &[(usize, usize)],
        caret: Option<usize>,
    ) -> Vec<Finding> {
        let mut findings: Vec<Finding> = Vec::new();
        if self.targets.is_empty() || regions.is_empty() {
            return findings;
        }
        let mut budget = MAX_SCAN_CHARS;
        let spans = spans_of(text, regions);
        for (line, from, to) in spans {
            if budget == 0 || findings.len() >= MAX_FINDINGS {
                break;
            }
            let to = to.min(from + budget);
            budget -= to - from;
            let segment: String = text.slice(from..to).to_string();
            self.scan_segment(&segment, from, line, text, regions, caret, &mut findings);
        }
        findings.truncate(MAX_FINDINGS);
        findings
    }

    /// What an edit took away from the watched entities: each watched name (not of `low`
    /// priority) that `old`, the text before the edit, had in the lines of `removed` (char
    /// ranges of `old` the edit deleted or replaced, see [`changed_regions`] of the edit's
    /// inverse) and that the new text's lines around `changed` (char ranges of `new`) have
    /// fewer times: a [`FindingKind::Changed`] finding at the new text's line, carrying the
    /// line as it read before. `caret` is where the writer's typing ended: while the word
    /// there is the start of the name (backspacing over "Mara" to retype it), nothing is
    /// reported.
    pub fn scan_removed(
        &self,
        old: &Text,
        removed: &[(usize, usize)],
        new: &Text,
        changed: &[(usize, usize)],
        caret: Option<usize>,
    ) -> Vec<Finding> {
        let removed: Vec<(usize, usize)> = removed.iter().copied().filter(|(a, b)| a < b).collect();
        if self.targets.is_empty() || removed.is_empty() {
            return Vec::new();
        }
        let typed = caret.map(|c| word_before(new, c).to_lowercase());
        let mut findings = Vec::new();
        for before in self.scan(old, &removed, None) {
            if before.kind != FindingKind::Mention {
                continue;
            }
            let Some(target) = self.targets.iter().find(|t| t.id == before.entity_id) else {
                continue;
            };
            if typed
                .as_deref()
                .is_some_and(|w| !w.is_empty() && target.name.to_lowercase().starts_with(w))
            {
                continue;
            }
            if count_mentions(target, new, changed) >= count_mentions(target, old, &removed) {
                continue;
            }
            // Where it was, in the new text: the changed region that matches the removed one.
            let end = before.at + before.word.chars().count();
            let i = removed
                .iter()
                .position(|&(a, b)| before.at <= b && end >= a)
                .unwrap_or(0);
            let at = changed
                .get(i)
                .or(changed.last())
                .map_or(0, |r| r.0)
                .min(new.len_chars());
            findings.push(Finding {
                kind: FindingKind::Changed,
                line: new.char_to_line(at) + 1,
                at,
                ..before
            });
        }
        findings
    }

    /// The watched entities (not of `low` priority) that story-bible names belong to: those
    /// of `entity_type` whose name is one of `names` or is `id`, any case.
    pub fn watching(
        &self,
        entity_type: EntityType,
        id: &str,
        names: &[String],
    ) -> Vec<(String, String)> {
        self.targets
            .iter()
            .filter(|t| t.entity_type == entity_type && t.priority != Priority::Low)
            .filter(|t| {
                let name = t.name.to_lowercase();
                name == id.to_lowercase() || names.iter().any(|n| n.to_lowercase() == name)
            })
            .map(|t| (t.id.clone(), t.name.clone()))
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn scan_segment(
        &self,
        segment: &str,
        offset: usize,
        line: usize,
        text: &Text,
        regions: &[(usize, usize)],
        caret: Option<usize>,
        findings: &mut Vec<Finding>,
    ) {
        let touched =
            |start: usize, end: usize| regions.iter().any(|&(a, b)| start <= b && end >= a);
        let typing = |end: usize| caret == Some(end);
        let chars: Vec<char> = segment.chars().collect();
        let lowered = segment.to_lowercase();
        let fold_kept = lowered.chars().count() == chars.len();
        let words: Vec<Word> = split_words(segment, offset)
            .into_iter()
            .filter(|w| !typing(w.end))
            .collect();
        let mut push = |finding: Finding| {
            let duplicate = findings.iter().any(|f| {
                f.kind == finding.kind
                    && f.entity_id == finding.entity_id
                    && f.word.to_lowercase() == finding.word.to_lowercase()
            });
            if !duplicate && findings.len() < MAX_FINDINGS {
                findings.push(finding);
            }
        };
        let line_text = |at: usize| line_excerpt(text, line, at);
        for target in &self.targets {
            // Mentions: the name, whole, touched by the edit.
            if target.priority != Priority::Low {
                for (m_start, m_end) in whole_names(target, segment, &lowered, &chars, fold_kept) {
                    let (start, end) = (offset + m_start, offset + m_end);
                    if touched(start, end) && !typing(end) {
                        let word: String = chars[m_start..m_end.min(chars.len())].iter().collect();
                        push(Finding {
                            kind: FindingKind::Mention,
                            entity_id: target.id.clone(),
                            entity_name: target.name.clone(),
                            entity_type: target.entity_type,
                            word,
                            cue: None,
                            line: line + 1,
                            line_text: line_text(start),
                            at: start,
                        });
                        break;
                    }
                }
            }
            // Misspellings: a capitalised word close to a word of the name.
            for word in &words {
                if target.name_words.is_empty() || !touched(word.start, word.end) {
                    continue;
                }
                if self.misspelt(target, &word.text) {
                    push(Finding {
                        kind: FindingKind::Misspelling,
                        entity_id: target.id.clone(),
                        entity_name: target.name.clone(),
                        entity_type: target.entity_type,
                        word: word.text.clone(),
                        cue: None,
                        line: line + 1,
                        line_text: line_text(word.start),
                        at: word.start,
                    });
                }
            }
            // Contradictions: a keyword near a contradiction word, in one sentence.
            if !target.keywords.is_empty() {
                if let Some((k, c)) =
                    contradiction(&words, &chars, offset, &target.keywords, &touched)
                {
                    push(Finding {
                        kind: FindingKind::Contradiction,
                        entity_id: target.id.clone(),
                        entity_name: target.name.clone(),
                        entity_type: target.entity_type,
                        word: words[k].text.clone(),
                        cue: Some(words[c].text.to_lowercase()),
                        line: line + 1,
                        line_text: line_text(words[k].start.min(words[c].start)),
                        at: words[k].start,
                    });
                }
            }
        }
    }

    /// Whether `word` seems a misspelling of a word of `target`'s name.
    fn misspelt(&self, target: &Target, word: &str) -> bool {
        let Some(first) = word.chars().next() else {
            return false;
        };
        if !first.is_uppercase()
            || word.chars().count() < 3
            || NOT_NAMES.binary_search(&word).is_ok()
        {
            return false;
        }
        let lower = word.to_lowercase();
        if self.known.contains(&lower) {
            return false;
        }
        let stem = lower
            .strip_suffix("'s")
            .or_else(|| lower.strip_suffix('s'))
            .unwrap_or(&lower);
        target.name_words.iter().any(|name| {
            let name_lower = name.to_lowercase();
            if stem == name_lower || !name_lower.starts_with(lower.chars().next().unwrap_or(' ')) {
                return false;
            }
            let n = name.chars().count();
            let limit = if n <= 5 { 1 } else { 2 };
            let gap = n.abs_diff(word.chars().count());
            gap <= limit && (1..=limit).contains(&crate::names::edit_distance(word, name))
        })
    }
}

/// The lines of `text` (cut to [`SCAN_CONTEXT_CHARS`] around `regions`) to read, as
/// `(line, start, end)` char ranges, merged where they meet.
fn spans_of(text: &Text, regions: &[(usize, usize)]) -> Vec<(usize, usize, usize)> {
    let len = text.len_chars();
    let mut spans: Vec<(usize, usize, usize)> = Vec::new();
    for &(start, end) in regions {
        let (start, end) = (start.min(len), end.min(len));
        let first = text.char_to_line(start);
        let last = text.char_to_line(end);
        for line in first..=last {
            let line_start = text.line_to_char(line);
            let line_end = line_end(text, line);
            let from = line_start.max(start.saturating_sub(SCAN_CONTEXT_CHARS));
            let to = line_end.min(end.saturating_add(SCAN_CONTEXT_CHARS));
            if from > to {
                continue;
            }
            match spans.last_mut() {
                Some(last) if last.0 == line && from <= last.2 => last.2 = last.2.max(to),
                _ => spans.push((line, from, to)),
            }
        }
    }
    spans
}

/// Where `target`'s name stands as whole words in `segment` (char ranges of it). `lowered`
/// is the segment lowercased, `fold_kept` whether that kept its length in chars.
fn whole_names(
    target: &Target,
    segment: &str,
    lowered: &str,
    chars: &[char],
    fold_kept: bool,
) -> Vec<(usize, usize)> {
    let matches = match (&target.lower, &target.pattern) {
        (Some(lower), _) if fold_kept => lower.find_all(lowered),
        (_, Some(pattern)) => pattern.find_all(segment),
        _ => Vec::new(),
    };
    matches
        .into_iter()
        .filter(|m| {
            let before = m.start.checked_sub(1).and_then(|i| chars.get(i));
            before.is_none_or(|c| !is_word_char(*c))
                && chars.get(m.end).is_none_or(|c| !is_word_char(*c))
        })
        .map(|m| (m.start, m.end))
        .collect()
}

/// How many times `target`'s name stands in the lines around `regions` of `text` (at most
/// [`MAX_SCAN_CHARS`] read).
fn count_mentions(target: &Target, text: &Text, regions: &[(usize, usize)]) -> usize {
    let mut budget = MAX_SCAN_CHARS;
    let mut count = 0;
    for (_, from, to) in spans_of(text, regions) {
        if budget == 0 {
            break;
        }
        let to = to.min(from + budget);
        budget -= to - from;
        let segment: String = text.slice(from..to).to_string();
        let chars: Vec<char> = segment.chars().collect();
        let lowered = segment.to_lowercase();
        let fold_kept = lowered.chars().count() == chars.len();
        count += whole_names(target, &segment, &lowered, &chars, fold_kept).len();
    }
    count
}

/// The word of `text` that ends at `at` (at most 64 chars back), "" when none does.
fn word_before(text: &Text, at: usize) -> String {
    let at = at.min(text.len_chars());
    let before: Vec<char> = text.slice(at.saturating_sub(64)..at).chars().collect();
    let word = before
        .iter()
        .rev()
        .take_while(|c| is_word_char(**c))
        .count();
    before[before.len() - word..].iter().collect()
}

/// The first (keyword, contradiction word) pair of `words` (indices) within the window, in one
/// sentence, with one of them touched by the edit.
fn contradiction(
    words: &[Word],
    chars: &[char],
    offset: usize,
    keywords: &[String],
    touched: &dyn Fn(usize, usize) -> bool,
) -> Option<(usize, usize)> {
    let lower: Vec<String> = words
        .iter()
        .map(|w| w.text.to_lowercase().replace('’', "'"))
        .collect();
    let is_keyword = |w: &str| {
        keywords.iter().any(|k| {
            w == k || (w.starts_with(k.as_str()) && w.chars().count() <= k.chars().count() + 2)
        })
    };
    let same_sentence = |a: &Word, b: &Word| {
        let (from, to) = if a.start < b.start {
            (a.end, b.start)
        } else {
            (b.end, a.start)
        };
        !chars
            .get(from.saturating_sub(offset)..to.saturating_sub(offset))
            .unwrap_or(&[])
            .iter()
            .any(|c| matches!(c, '.' | '!' | '?' | '…' | ';'))
    };
    for (k, word) in lower.iter().enumerate() {
        if !is_keyword(word) {
            continue;
        }
        let from = k.saturating_sub(CONTRADICTION_WINDOW);
        let to = (k + CONTRADICTION_WINDOW).min(lower.len().saturating_sub(1));
        for c in from..=to {
            if c == k
                || CONTRADICTION_WORDS
                    .binary_search(&lower[c].as_str())
                    .is_err()
            {
                continue;
            }
            let (a, b) = (&words[k], &words[c]);
            if same_sentence(a, b) && (touched(a.start, a.end) || touched(b.start, b.end)) {
                return Some((k, c));
            }
        }
    }
    None
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The words of a name.
fn words_of(text: &str) -> Vec<String> {
    split_words(text, 0).into_iter().map(|w| w.text).collect()
}

/// The words of `segment` (letters and digits, with inner apostrophes), positioned at
/// `offset` chars.
fn split_words(segment: &str, offset: usize) -> Vec<Word> {
    let chars: Vec<char> = segment.chars().collect();
    let mut words = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !is_word_char(chars[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len()
            && (is_word_char(chars[i])
                || (matches!(chars[i], '\'' | '’')
                    && chars.get(i + 1).is_some_and(|c| is_word_char(*c))
                    && i > start))
        {
            i += 1;
        }
        words.push(Word {
            text: chars[start..i].iter().collect(),
            start: offset + start,
            end: offset + i,
        });
    }
    words
}

/// The char just past the end of `line`'s text (before its line break).
fn line_end(text: &Text, line: usize) -> usize {
    let next = if line + 1 < text.len_lines() {
        text.line_to_char(line + 1)
    } else {
        text.len_chars()
    };
    let mut end = next;
    while end > text.line_to_char(line) && matches!(text.char(end - 1), '\n' | '\r') {
        end -= 1;
    }
    end
}

/// `line`'s text, cut to about [`LINE_TEXT_CHARS`] around `at` (with … where cut).
fn line_excerpt(text: &Text, line: usize, at: usize) -> String {
    let (start, end) = (text.line_to_char(line), line_end(text, line));
    if end - start <= LINE_TEXT_CHARS {
        return text.slice(start..end).to_string().trim().to_string();
    }
    let from = at.saturating_sub(LINE_TEXT_CHARS / 3).max(start);
    let to = (from + LINE_TEXT_CHARS).min(end);
    let mut out = String::new();
    if from > start {
        out.push('…');
    }
    out.push_str(text.slice(from..to).to_string().trim());
    if to < end {
        out.push('…');
    }
    out
}

/// The regions of the new text an edit changed: each insert's range, and each deletion's
/// point, as char ranges `(start, end)` of the text after the change.
pub fn changed_regions(change: &ChangeSet) -> Vec<(usize, usize)> {
    let mut regions: Vec<(usize, usize)> = Vec::new();
    let mut pos = 0;
    for op in change.ops() {
        match op {
            Op::Retain(n) => pos += n,
            Op::Delete(_) => push_region(&mut regions, pos, pos),
            Op::Insert(s) => {
                let n = s.chars().count();
                push_region(&mut regions, pos, pos + n);
                pos += n;
            }
        }
    }
    regions
}

fn push_region(regions: &mut Vec<(usize, usize)>, start: usize, end: usize) {
    match regions.last_mut() {
        Some(last) if start <= last.1 => last.1 = last.1.max(end),
        _ => regions.push((start, end)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lists searched by `binary_search` are sorted, without repeats.
    #[test]
    fn searched_word_lists_are_sorted() {
        for list in [CONTRADICTION_WORDS, COMMON_WORDS, NOT_NAMES] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
        }
    }

    fn watched(name: &str, entity_type: EntityType) -> WatchedEntity {
        WatchedEntity {
            id: format!("w-{name}"),
            project: "p".into(),
            name: name.into(),
            entity_type,
            reason: "r".into(),
            priority: Priority::Medium,
            created_ms: 0,
        }
    }

    /// Scan `after` as if `typed` had just been inserted at its first occurrence.
    fn scan_insert(monitor: &Monitor, after: &str, typed: &str, caret: bool) -> Vec<Finding> {
        let at = after.rfind(typed).unwrap();
        let start = after[..at].chars().count();
        let end = start + typed.chars().count();
        let rope = Text::from_str(after);
        monitor.scan(&rope, &[(start, end)], caret.then_some(end))
    }

    /// What replacing `old`'s first `gone` with `with` took away (`caret`: the writer typed it).
    fn scan_replace(
        monitor: &Monitor,
        old: &str,
        gone: &str,
        with: &str,
        caret: bool,
    ) -> Vec<Finding> {
        let at = old.find(gone).unwrap();
        let start = old[..at].chars().count();
        let new = format!("{}{with}{}", &old[..at], &old[at + gone.len()..]);
        let (before, after) = (Text::from_str(old), Text::from_str(&new));
        let end = start + with.chars().count();
        monitor.scan_removed(
            &before,
            &[(start, start + gone.chars().count())],
            &after,
            &[(start, end)],
            caret.then_some(end),
        )
    }

    #[test]
    fn a_removed_or_changed_mention_is_reported_with_the_line_as_it_read() {
        let w = [watched("Mara", EntityType::Character)];
        let m = Monitor::new(&w, &[]);
        let old = "The lamp was dark.\nMara climbed the stair.\nThe end.";
        let f = scan_replace(&m, old, "Mara climbed", "Someone climbed", false);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].kind, FindingKind::Changed);
        assert_eq!(f[0].line, 2);
        assert_eq!(f[0].line_text, "Mara climbed the stair.");
        assert!(f[0]
            .describe("chapter 1")
            .contains("removed or changed in chapter 1, line 2"));
        // A whole deleted line.
        let f = scan_replace(&m, old, "Mara climbed the stair.\n", "", false);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].line, 2);
        // Her name kept (a rewrite next to it, or the name moved within the lines): nothing.
        assert!(scan_replace(&m, old, "climbed", "ran up", false).is_empty());
        assert!(scan_replace(&m, old, "Mara climbed", "Up climbed Mara", false).is_empty());
        // Another watched name is not hers.
        assert!(scan_replace(&m, old, "lamp", "light", false).is_empty());
        // The writer backspacing over the end of the name: "Mar" is on its way back.
        assert!(scan_replace(&m, old, "Mara", "Mar", true).is_empty());
        // The writer replacing it with another word.
        assert_eq!(scan_replace(&m, old, "Mara", "She", true).len(), 1);
        // One of two mentions in the line removed: the count went down.
        let two = "Mara saw Mara's shadow.";
        assert_eq!(scan_replace(&m, two, "Mara's", "her", false).len(), 1);
    }

    #[test]
    fn words_keep_inner_apostrophes() {
        let words: Vec<String> = split_words("Mara's lamp ’tis can’t.", 0)
            .into_iter()
            .map(|w| w.text)
            .collect();
        assert_eq!(words, ["Mara's", "lamp", "tis", "can’t"]);
    }

    #[test]
    fn a_word_being_typed_is_left_out_until_it_ends() {
        let m = Monitor::new([&watched("Mara", EntityType::Character)], &[]);
        assert!(scan_insert(&m, "Then Mar", "r", true).is_empty());
        assert!(scan_insert(&m, "Then Mara", "a", true).is_empty());
        let found = scan_insert(&m, "Then Mara ", " ", true);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, FindingKind::Mention);
        assert_eq!(found[0].line, 1);
        // Typing elsewhere in the line reports nothing again.
        assert!(scan_insert(&m, "Then Mara went", "t", true).is_empty());
    }

    #[test]
    fn misspellings_need_a_close_capitalised_unknown_word() {
        let m = Monitor::new(
            [&watched("Mara", EntityType::Character)],
            &["Mark".to_string()],
        );
        let found = scan_insert(&m, "Then Marra left.", "Marra left.", false);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, FindingKind::Misspelling);
        assert_eq!(found[0].word, "Marra");
        for fine in [
            "Mark left.",
            "Maras left.",
            "Mara's lamp.",
            "marra left.",
            "Kara left.",
            "Marrow left.",
        ] {
            assert!(
                scan_insert(&m, fine, fine, false)
                    .iter()
                    .all(|f| f.kind == FindingKind::Mention),
                "{fine}"
            );
        }
        let long = Monitor::new([&watched("Bartholomew", EntityType::Character)], &[]);
        assert_eq!(
            scan_insert(&long, "Bartolomeo came.", "Bartolomeo came.", false).len(),
            1
        );
    }

    #[test]
    fn contradictions_need_a_keyword_near_a_cue_in_one_sentence() {
        let m = Monitor::new([&watched("Magic needs blood", EntityType::Rule)], &[]);
        let found = scan_insert(&m, "She cast magic without any blood.", "without", false);
        assert!(
            found.iter().any(
                |f| f.kind == FindingKind::Contradiction && f.cue.as_deref() == Some("without")
            ),
            "{found:?}"
        );
        assert!(scan_insert(
            &m,
            "Magic flows. Nobody is not here today at all.",
            "not",
            false
        )
        .iter()
        .all(|f| f.kind != FindingKind::Contradiction));
        assert!(scan_insert(&m, "The magic needed blood.", "needed", false).is_empty());
    }

    #[test]
    fn only_the_lines_of_the_edit_are_read() {
        let m = Monitor::new([&watched("Mara", EntityType::Character)], &[]);
        let text = format!(
            "{}\nMara was here.\n{}",
            "x ".repeat(10_000),
            "y ".repeat(10_000)
        );
        // An edit far from the line that names her finds nothing.
        let rope = Text::from_str(&text);
        assert!(m.scan(&rope, &[(5, 6)], None).is_empty());
        let at = text.find("Mara").unwrap();
        let found = m.scan(&rope, &[(at, at + 4)], None);
        assert_eq!(found[0].line, 2);
        assert_eq!(found[0].line_text, "Mara was here.");
    }

    #[test]
    fn regions_are_in_the_new_text() {
        let change = ChangeSet::from_ops([
            Op::Retain(3),
            Op::Insert("ab".into()),
            Op::Retain(4),
            Op::Delete(2),
            Op::Retain(1),
        ]);
        assert_eq!(changed_regions(&change), [(3, 5), (9, 9)]);
    }
}
