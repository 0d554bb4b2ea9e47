//! Research: web pages read for a project, by its agents (`research_url`) or by the writer
//! (the Research panel's background jobs), kept as research notes and searched with BM25
//! (`search_research`). Pure data and rules, no I/O: the core fetches pages and stores notes.
//!
//! - [`url`] checks and normalises the address of a page (what may be fetched at all);
//! - [`html`] reads a page's title and main text;
//! - [`quote`] puts page text in the quoted, neutralised block the model gets;
//! - [`Research`] holds one project's notes: one note per normalised URL and per reader (an
//!   agent, or the writer: [`ResearchNote::asked_by`]; the same reader researching a page
//!   again updates its note, keeping its id and creation time), within [`MAX_NOTES`] notes
//!   and [`MAX_BYTES`] bytes of text (the notes fetched longest ago go first), searched with
//!   BM25 over title and text ([`Research::search`], the memory's tokenizer and parameters;
//!   title terms count twice), over the notes a search may see: an agent's own and the
//!   writer's, or every note.
//!
//! **Storage.** Each note is a `meta` record `research:<project>:<id>` (kind `research`,
//! indexed by project like every meta record): the least invasive place that survives a
//! reload (no schema change) and is exported with the project (`research` in the export
//! document).

pub mod html;
pub mod quote;
pub mod url;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::memory::search::{tokenize, BM25_B, BM25_K1};

/// Most research notes kept per project (the oldest fetched go first).
pub const MAX_NOTES: usize = 200;
/// Most bytes of note text kept per project (the oldest fetched go first).
pub const MAX_BYTES: usize = 8 * 1024 * 1024;
/// Characters of a note's text shown as its preview.
pub const PREVIEW_CHARS: usize = 500;
/// How many times a title term counts, relative to a text term.
pub const TITLE_WEIGHT: u32 = 2;

/// A page read for the project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "ResearchRecord", optional_fields)]
pub struct ResearchNote {
    /// Its id.
    pub id: String,
    /// The project.
    pub project: String,
    /// The address as it was asked for.
    pub url: String,
    /// The normalised address (one note per normalised address).
    pub normalized: String,
    /// The page's title.
    pub title: String,
    /// Its readable main text.
    pub text: String,
    /// The page's own description, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// When it was (last) fetched, ms.
    pub fetched_ms: u64,
    /// When the note was first made, ms.
    pub created_ms: u64,
    /// Who asked: `agent:<name>` or `human` (the writer).
    pub asked_by: String,
    /// How many times it was fetched.
    #[serde(default = "one")]
    pub fetches: u32,
}

/// A research note as listed (its whole text stays in the core; `search_research` searches
/// it).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "ResearchNote")]
pub struct NoteSummary {
    /// Its id.
    pub id: String,
    /// The address as asked for.
    pub url: String,
    /// The normalised address: one note per normalised address.
    pub normalized: String,
    /// The page's title.
    pub title: String,
    /// The first 500 characters of its text.
    pub preview: String,
    /// How many characters its text has.
    pub chars: usize,
    /// The page's own description, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    /// When it was (last) fetched (ms since the epoch).
    pub fetched_ms: u64,
    /// When the note was first made (ms since the epoch).
    pub created_ms: u64,
    /// `agent:<name>` or `human` (the writer).
    pub asked_by: String,
    /// Who asked, as the page marks it.
    #[ts(type = "'agent' | 'human'")]
    pub source: &'static str,
    /// How many times the page was read.
    pub fetches: u32,
}

fn one() -> u32 {
    1
}

/// A note's key in the `meta` table.
pub fn record_key(project: &str, id: &str) -> String {
    format!("research:{project}:{id}")
}

impl ResearchNote {
    /// The first [`PREVIEW_CHARS`] characters of its text (with `…` if cut).
    pub fn preview(&self) -> String {
        let mut out: String = self.text.chars().take(PREVIEW_CHARS).collect();
        if self.text.chars().count() > PREVIEW_CHARS {
            out.push('…');
        }
        out
    }

    /// `agent` or `human`: who asked, as the page marks it.
    pub fn source(&self) -> &'static str {
        if self.asked_by.starts_with("agent:") {
            "agent"
        } else {
            "human"
        }
    }

    /// The note as the page lists it: everything but the whole text (a preview instead).
    pub fn summary(&self) -> NoteSummary {
        NoteSummary {
            id: self.id.clone(),
            url: self.url.clone(),
            normalized: self.normalized.clone(),
            title: self.title.clone(),
            preview: self.preview(),
            chars: self.text.chars().count(),
            description: self.description.clone(),
            fetched_ms: self.fetched_ms,
            created_ms: self.created_ms,
            asked_by: self.asked_by.clone(),
            source: self.source(),
            fetches: self.fetches,
        }
    }

    /// A note from its `meta` record, if it is one.
    pub fn from_record(record: &Value) -> Option<ResearchNote> {
        if record.get("kind").and_then(Value::as_str) != Some("research") {
            return None;
        }
        serde_json::from_value(record.get("note")?.clone()).ok()
    }

    fn bytes(&self) -> usize {
        self.text.len() + self.title.len()
    }
}

/// A page just read, to keep as a note.
#[derive(Debug, Clone, PartialEq)]
pub struct Fetched {
    /// The address as asked for.
    pub url: String,
    /// Its normalised form.
    pub normalized: String,
    /// The title.
    pub title: String,
    /// The main text.
    pub text: String,
    /// The page's description.
    pub description: Option<String>,
}

/// What [`Research::upsert`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Upserted {
    /// The note as kept.
    pub note: ResearchNote,
    /// True when it replaced an earlier note of the same address.
    pub updated: bool,
    /// Notes dropped to stay within the caps (ids).
    pub evicted: Vec<String>,
}

/// A note's terms: their counts and the note's length in terms.
type Terms = (FxHashMap<String, u32>, u32);

/// One project's research notes, with their search index.
#[derive(Debug, Clone, Default)]
pub struct Research {
    notes: Vec<ResearchNote>,
    /// Per note (same order): term counts and length in terms.
    index: Vec<(FxHashMap<String, u32>, u32)>,
}

fn terms_of(note: &ResearchNote) -> (FxHashMap<String, u32>, u32) {
    let mut counts: FxHashMap<String, u32> = FxHashMap::default();
    let mut len = 0;
    for t in tokenize(&note.title) {
        *counts.entry(t).or_default() += TITLE_WEIGHT;
        len += TITLE_WEIGHT;
    }
    for t in tokenize(&note.text) {
        *counts.entry(t).or_default() += 1;
        len += 1;
    }
    (counts, len)
}

/// A search hit, as the model gets it: the page's text only inside a quoted block of
/// untrusted page content ([`quote`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// The note's id.
    pub id: String,
    /// Its title (one line, its injection markers neutralised).
    pub title: String,
    /// Its address.
    pub url: String,
    /// Who read it: `agent:<name>` or `human` (the writer).
    pub by: String,
    /// Its title and preview, quoted.
    pub content: String,
    /// The BM25 score.
    pub score: f64,
}

impl ResearchNote {
    /// Its title and preview (or whole text) as one quoted block of untrusted page content,
    /// and how many injection markers it held.
    pub fn quoted(&self, whole: bool) -> (String, quote::Neutralised) {
        let text = if whole {
            self.text.clone()
        } else {
            self.preview()
        };
        quote::quote(&self.url, &format!("Title: {}\n\n{text}", self.title))
    }
}

impl Research {
    /// The notes of `records` (other records are ignored), indexed.
    pub fn from_notes(notes: impl IntoIterator<Item = ResearchNote>) -> Self {
        let mut r = Research::default();
        for note in notes {
            r.index.push(terms_of(&note));
            r.notes.push(note);
        }
        r
    }

    /// Every note, newest fetched first.
    pub fn list(&self) -> Vec<&ResearchNote> {
        let mut all: Vec<&ResearchNote> = self.notes.iter().collect();
        all.sort_by(|a, b| b.fetched_ms.cmp(&a.fetched_ms).then(b.id.cmp(&a.id)));
        all
    }

    /// The note with id `id`.
    pub fn get(&self, id: &str) -> Option<&ResearchNote> {
        self.notes.iter().find(|n| n.id == id)
    }

    /// The note of a normalised address.
    pub fn by_url(&self, normalized: &str) -> Option<&ResearchNote> {
        self.notes.iter().find(|n| n.normalized == normalized)
    }

    /// How many notes there are.
    pub fn len(&self) -> usize {
        self.notes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.notes.is_empty()
    }

    /// Bytes of text kept.
    pub fn bytes(&self) -> usize {
        self.notes.iter().map(ResearchNote::bytes).sum()
    }

    /// Keep a page as a note of `project`: a new note, or the update of the note of the same
    /// normalised address (same id and creation time). Then drop the notes fetched longest
    /// ago while over [`MAX_NOTES`] or [`MAX_BYTES`] (never the one just kept).
    pub fn upsert(
        &mut self,
        project: &str,
        page: Fetched,
        asked_by: &str,
        now_ms: u64,
        new_id: impl FnOnce() -> String,
    ) -> Upserted {
        let at = self
            .notes
            .iter()
            .position(|n| n.normalized == page.normalized && n.asked_by == asked_by);
        // Researched again by the same reader: the same note (id, creation), one more fetch.
        let (id, created_ms, fetches, updated) = match at {
            Some(i) => {
                let old = self.notes.remove(i);
                self.index.remove(i);
                (old.id, old.created_ms, old.fetches.saturating_add(1), true)
            }
            None => (new_id(), now_ms, 1, false),
        };
        let note = ResearchNote {
            id,
            created_ms,
            fetches,
            project: project.to_string(),
            url: page.url,
            normalized: page.normalized,
            title: page.title,
            text: page.text,
            description: page.description,
            fetched_ms: now_ms,
            asked_by: asked_by.to_string(),
        };
        self.index.push(terms_of(&note));
        self.notes.push(note.clone());
        let mut evicted = Vec::new();
        while self.notes.len() > 1 && (self.notes.len() > MAX_NOTES || self.bytes() > MAX_BYTES) {
            let oldest = self
                .notes
                .iter()
                .enumerate()
                .filter(|(_, n)| n.id != note.id)
                .min_by(|(_, a), (_, b)| a.fetched_ms.cmp(&b.fetched_ms).then(a.id.cmp(&b.id)))
                .map(|(i, _)| i);
            let Some(i) = oldest else { break };
            evicted.push(self.notes.remove(i).id);
            self.index.remove(i);
        }
        Upserted {
            note,
            updated,
            evicted,
        }
    }

    /// Delete a note; the note, if there was one.
    pub fn delete(&mut self, id: &str) -> Option<ResearchNote> {
        let i = self.notes.iter().position(|n| n.id == id)?;
        self.index.remove(i);
        Some(self.notes.remove(i))
    }

    /// The notes matching `query` among those `visible` keeps, best first (BM25 over title
    /// and text; ties by the latest fetch), at most `limit`. A query with no searchable word
    /// finds nothing.
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        visible: impl Fn(&ResearchNote) -> bool,
    ) -> Vec<Hit> {
        let mut terms = tokenize(query);
        terms.sort();
        terms.dedup();
        let seen: Vec<(&ResearchNote, &Terms)> = self
            .notes
            .iter()
            .zip(&self.index)
            .filter(|(note, _)| visible(note))
            .collect();
        if terms.is_empty() || seen.is_empty() {
            return Vec::new();
        }
        let n = seen.len() as f64;
        let avg = seen.iter().map(|(_, (_, l))| *l as f64).sum::<f64>() / n;
        let mut scored: Vec<(f64, &ResearchNote)> = Vec::new();
        for (note, (counts, len)) in &seen {
            let mut score = 0.0;
            for t in &terms {
                let Some(tf) = counts.get(t) else { continue };
                let df = seen.iter().filter(|(_, (c, _))| c.contains_key(t)).count() as f64;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                let tf = *tf as f64;
                let norm = 1.0 - BM25_B + BM25_B * (*len as f64) / avg.max(1.0);
                score += idf * tf * (BM25_K1 + 1.0) / (tf + BM25_K1 * norm);
            }
            if score > 0.0 {
                scored.push((score, *note));
            }
        }
        scored.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(b.1.fetched_ms.cmp(&a.1.fetched_ms))
                .then(a.1.id.cmp(&b.1.id))
        });
        scored
            .into_iter()
            .take(limit)
            .map(|(score, n)| Hit {
                id: n.id.clone(),
                title: quote::neutralise(&n.title).0,
                url: n.url.clone(),
                by: n.asked_by.clone(),
                content: n.quoted(false).0,
                score: (score * 1000.0).round() / 1000.0,
            })
            .collect()
    }
}

/// Who asked for a fetch, from a call's origin: `agent:<name>`, or `human` for the writer
/// (and an import).
pub fn asked_by(origin: &crate::commands::Origin) -> String {
    match origin {
        crate::commands::Origin::Agent(name) => format!("agent:{name}"),
        _ => "human".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(n: usize, text: String) -> Fetched {
        Fetched {
            url: format!("https://example.org/{n}"),
            normalized: format!("https://example.org/{n}"),
            title: format!("Page {n}"),
            text,
            description: None,
        }
    }

    #[test]
    fn the_caps_drop_the_notes_fetched_longest_ago() {
        let mut r = Research::default();
        let mut next = 0;
        for n in 0..MAX_NOTES {
            let up = r.upsert("p", page(n, format!("text {n}")), "human", n as u64, || {
                next += 1;
                format!("n{next}")
            });
            assert!(up.evicted.is_empty());
        }
        // Page 0 is read again: it is now the newest, so page 1 goes first.
        r.upsert(
            "p",
            page(0, "again".into()),
            "human",
            1_000,
            || unreachable!(),
        );
        let up = r.upsert("p", page(9_999, "new".into()), "human", 1_001, || {
            "last".into()
        });
        assert_eq!(up.evicted, vec!["n2".to_string()]);
        assert_eq!(r.len(), MAX_NOTES);
        assert!(r.by_url("https://example.org/0").is_some());
        // Bytes: three notes of 3 MB cannot all stay; the newest always does.
        let mut r = Research::default();
        for n in 0..3 {
            let up = r.upsert("p", page(n, "x".repeat(3 << 20)), "human", n as u64, || {
                format!("b{n}")
            });
            assert_eq!(
                up.evicted,
                if n == 2 {
                    vec!["b0".to_string()]
                } else {
                    vec![]
                }
            );
        }
        assert!(r.bytes() <= MAX_BYTES);
        let huge = r.upsert("p", page(7, "y".repeat(MAX_BYTES + 1)), "human", 9, || {
            "huge".into()
        });
        assert_eq!(r.len(), 1, "everything else went: {:?}", huge.evicted);
        assert!(r.get("huge").is_some());
    }

    #[test]
    fn search_ranks_by_bm25_with_title_terms_counting_more() {
        let mut r = Research::default();
        r.upsert(
            "p",
            page(1, "a note that mentions lamps once".into()),
            "human",
            1,
            || "a".into(),
        );
        let mut p2 = page(2, "nothing about it here".into());
        p2.title = "Lamps".into();
        r.upsert("p", p2, "agent:quill", 2, || "b".into());
        let hits = r.search("lamp", 5, |_| true);
        assert_eq!(
            hits.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
            ["b", "a"]
        );
        assert_eq!(hits[0].by, "agent:quill");
        assert!(
            hits[0].content.contains("> Title: Lamps"),
            "{}",
            hits[0].content
        );
        assert!(
            r.search("the", 5, |_| true).is_empty(),
            "stopwords find nothing"
        );
        assert_eq!(r.search("lamps", 1, |_| true).len(), 1);
        // Only the notes a search may see.
        let writers = r.search("lamp", 5, |n| n.asked_by == "human");
        assert_eq!(writers.len(), 1);
        assert_eq!(writers[0].id, "a");
    }

    #[test]
    fn each_reader_keeps_a_note_of_its_own_per_page() {
        let mut r = Research::default();
        r.upsert("p", page(1, "one".into()), "agent:a", 1, || "a1".into());
        let up = r.upsert("p", page(1, "two".into()), "agent:b", 2, || "b1".into());
        assert!(!up.updated);
        assert_eq!(r.len(), 2);
        let up = r.upsert(
            "p",
            page(1, "three".into()),
            "agent:a",
            3,
            || unreachable!(),
        );
        assert!(up.updated);
        assert_eq!(up.note.id, "a1");
        assert_eq!(r.len(), 2);
    }
}
