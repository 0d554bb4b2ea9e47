//! Search over memory notes: a tag filter, a scope filter and BM25 ranking.
//!
//! **Terms.** [`tokenize`] lowercases, splits on every character that is not alphanumeric
//! (Unicode-aware: `Café`, `海` and `Ωmega` are words), drops a short list of English stopwords
//! and strips simple English plurals (`lighthouses` → `lighthouse`, `stories` → `story`,
//! `boxes` → `box`). A note's terms are its text's plus its tags' terms, each tag term counted
//! [`TAG_WEIGHT`] times.
//!
//! **Ranking.** BM25 with `k1` = [`BM25_K1`] (1.2) and `b` = [`BM25_B`] (0.75), and the
//! always-positive idf `ln(1 + (N - df + 0.5) / (df + 0.5))`; `N`, `df` and the average
//! length are taken over the notes that pass the filters. Only notes matching at least one
//! query term are hits. Ties (and every query without text) are ordered by importance, then
//! by the latest update, then by id.
//!
//! **Queries.** Tags only: every note carrying all the tags. Text only: BM25. Both: the tag
//! filter, then BM25. Neither: every visible note. A text with no searchable term (only
//! stopwords or punctuation) finds nothing.
//!
//! **Index.** [`Memory`] keeps a [`NoteIndex`], an inverted index (for each term, the notes
//! holding it and how often), current on every change it makes: a search reads the postings
//! of its terms and makes one pass over the notes for the filters and the average length, and
//! reads no note text. The scores are exactly those of reading every text (the same sums in
//! the same order). The index is not stored: [`Memory::reindex`] builds it when a memory is
//! opened. See `benches/memory.rs` for timings over 10,000 notes of 1 KB.

use std::cmp::Ordering;
use std::fmt;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::{Memory, MemoryNote, Scope};

/// BM25 term-frequency saturation `k1`.
pub const BM25_K1: f64 = 1.2;
/// BM25 length normalization `b`.
pub const BM25_B: f64 = 0.75;
/// How many times each term of a tag counts, relative to a term of the text.
pub const TAG_WEIGHT: u32 = 2;
/// Hits returned when a query's limit is 0.
pub const DEFAULT_LIMIT: usize = 10;
/// Most hits one search returns.
pub const MAX_LIMIT: usize = 100;
/// Most distinct terms of a query text that are searched for (the first ones).
pub const MAX_QUERY_TERMS: usize = 64;

/// A memory search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchQuery {
    /// Words to rank by (BM25); `None` or blank ranks by importance and recency.
    #[serde(default)]
    pub text: Option<String>,
    /// Tags every hit must carry (normalized like note tags; empty ones are ignored).
    #[serde(default)]
    pub tags: Vec<String>,
    /// Only notes of this scope; `None` for both.
    #[serde(default)]
    pub scope: Option<Scope>,
    /// Most hits: 0 means [`DEFAULT_LIMIT`]; at most [`MAX_LIMIT`].
    #[serde(default)]
    pub limit: usize,
}

impl Default for SearchQuery {
    fn default() -> Self {
        Self {
            text: None,
            tags: Vec::new(),
            scope: None,
            limit: DEFAULT_LIMIT,
        }
    }
}

impl SearchQuery {
    /// A text query with the default limit.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// A tags-only query with the default limit.
    pub fn tags<I, S>(tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            tags: tags.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// The same query with the tags to filter by.
    pub fn with_tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// The same query restricted to one scope.
    pub fn with_scope(mut self, scope: Scope) -> Self {
        self.scope = Some(scope);
        self
    }

    /// The same query with another limit.
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// The limit applied: 0 means [`DEFAULT_LIMIT`], and at most [`MAX_LIMIT`].
    pub fn effective_limit(&self) -> usize {
        match self.limit {
            0 => DEFAULT_LIMIT,
            n => n.min(MAX_LIMIT),
        }
    }
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The note.
    pub note: MemoryNote,
    /// Its BM25 score; 0 for a query without text.
    pub score: f64,
}

use draftsmith_terms::{each_term, Dictionary};
pub use draftsmith_terms::{tokenize, STOPWORDS};

/// Normalize query tags like note tags, ignoring empty ones (a search never fails).
fn query_tags(tags: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for tag in tags {
        let tag = tag.trim().to_lowercase();
        if !tag.is_empty() && !out.contains(&tag) {
            out.push(tag);
        }
    }
    out
}

/// Distinct query terms, first [`MAX_QUERY_TERMS`], with their dictionary ids and a lookup
/// from term to position.
struct Terms {
    terms: Vec<String>,
    /// Each term's id in the index dictionary (`None`: no indexed note has it).
    ids: Vec<Option<u32>>,
    /// Indices into `terms`, sorted by term (for binary search when there are many).
    sorted: Vec<usize>,
}

impl Terms {
    fn new(text: &str, dictionary: &Dictionary) -> Self {
        let mut terms: Vec<String> = Vec::new();
        each_term(text, &mut String::new(), &mut |t| {
            if terms.len() < MAX_QUERY_TERMS && !terms.iter().any(|have| have == t) {
                terms.push(t.to_string());
            }
        });
        let ids = terms.iter().map(|t| dictionary.get(t)).collect();
        let mut sorted: Vec<usize> = (0..terms.len()).collect();
        sorted.sort_by(|&a, &b| terms[a].cmp(&terms[b]));
        Self { terms, ids, sorted }
    }

    fn find(&self, term: &str) -> Option<usize> {
        if self.terms.len() <= 8 {
            self.terms.iter().position(|t| t == term)
        } else {
            self.sorted
                .binary_search_by(|&i| self.terms[i].as_str().cmp(term))
                .ok()
                .map(|at| self.sorted[at])
        }
    }
}

/// Importance (higher first), then the latest update, then id.
pub(crate) fn by_importance(a: &MemoryNote, b: &MemoryNote) -> Ordering {
    b.importance
        .cmp(&a.importance)
        .then(b.updated_ms.cmp(&a.updated_ms))
        .then_with(|| a.id.cmp(&b.id))
}

/// A note's index entry: its length in terms, its slot in the postings and its terms.
#[derive(Clone)]
struct IndexedNote {
    /// The note's id and stamp when indexed, to tell a current entry from a stale one.
    id: String,
    stamp: Stamp,
    /// Terms counted (tag terms [`TAG_WEIGHT`] times).
    length: u32,
    /// Where the postings name this note (stable while the note is indexed, unlike its
    /// position, which moves when an earlier note is removed).
    slot: u32,
    /// Its distinct term ids (the postings lists that name its slot).
    terms: Vec<u32>,
    /// Where the note's id and project strings were when it was indexed, and its project
    /// among [`NoteIndex`]'s projects (`None`: no project): while a note's strings are the
    /// ones indexed, a search tells it is the same note, and whose, without reading them.
    id_at: usize,
    project_at: usize,
    project: Option<u32>,
}

/// What changes when a note's text or tags change (every [`Memory`] method that changes them
/// bumps the version or, for a new note, the id).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Stamp {
    version: u32,
    updated_ms: u64,
    text_bytes: usize,
    tags: usize,
}

impl Stamp {
    fn of(note: &MemoryNote) -> Self {
        Self {
            version: note.version,
            updated_ms: note.updated_ms,
            text_bytes: note.text.len(),
            tags: note.tags.len(),
        }
    }
}

/// One note holding a term: its slot, and how often the term counts in it (tag terms
/// [`TAG_WEIGHT`] times).
#[derive(Clone, Copy)]
struct Posting {
    slot: u32,
    frequency: u32,
}

/// A slot no indexed note holds.
const FREE: u32 = u32::MAX;

/// The search index, an inverted index: a term dictionary, and for each term the notes that
/// hold it with its frequency in each (its postings). A search reads only the postings of the
/// query's terms, plus one pass over the notes for the filters and the average length.
///
/// Beside the postings, one entry per note (aligned with [`Memory::notes`]) with its length
/// and terms, to tell a current entry from a stale one and to take a note's postings out. An
/// entry is current while its note has the same id and the same [`Stamp`]; a search compares
/// the ids as strings only for a note whose id is no longer the very string indexed (moved
/// out and back, or a copy), so that its pass over the notes reads no note's strings.
/// Derived data: not serialized, and ignored when memories are compared. Kept current by
/// every [`Memory`] method that changes notes, at the cost of indexing that one note (and,
/// for a change or removal, taking its old postings out); a note changed directly (or a memory
/// just deserialized) makes searches read the note texts, correctly but slower, until
/// [`Memory::reindex`].
#[derive(Clone, Default)]
pub struct NoteIndex {
    dictionary: Dictionary,
    entries: Vec<IndexedNote>,
    /// By term id: the notes holding the term (in no particular order).
    postings: Vec<Vec<Posting>>,
    /// By slot: the position of its note in `entries`, or [`FREE`].
    positions: Vec<u32>,
    /// Slots to reuse.
    free: Vec<u32>,
    /// The projects of the notes indexed, each once.
    projects: Vec<String>,
}

impl PartialEq for NoteIndex {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for NoteIndex {}

impl fmt::Debug for NoteIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NoteIndex")
            .field("notes", &self.entries.len())
            .field("terms", &self.dictionary.len())
            .finish()
    }
}

/// A position or count as a `u32` (memories hold far fewer than 4 billion notes).
pub(crate) fn small(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl NoteIndex {
    /// A fresh index of `notes`.
    pub(crate) fn build(notes: &[MemoryNote]) -> Self {
        let mut index = Self::default();
        index.sync(notes);
        index
    }

    /// Index `note`, to stand at `position`: its terms into the dictionary, its postings
    /// under a free slot.
    fn add(&mut self, note: &MemoryNote, position: usize) -> IndexedNote {
        let mut counts: Vec<(u32, u32)> = Vec::new();
        let length = self.dictionary.counts(
            &note.text,
            &note.tags,
            TAG_WEIGHT,
            &mut String::new(),
            &mut counts,
        );
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.positions.push(FREE);
                small(self.positions.len() - 1)
            }
        };
        self.positions[slot as usize] = small(position);
        if self.postings.len() < self.dictionary.len() {
            self.postings.resize_with(self.dictionary.len(), Vec::new);
        }
        let mut terms: Vec<u32> = Vec::with_capacity(counts.len());
        for (id, frequency) in counts {
            terms.push(id);
            self.postings[id as usize].push(Posting { slot, frequency });
        }
        let mut entry = IndexedNote {
            id: note.id.clone(),
            stamp: Stamp::of(note),
            length,
            slot,
            terms,
            id_at: 0,
            project_at: 0,
            project: None,
        };
        self.locate(&mut entry, note);
        entry
    }

    /// Record where `note`'s id and project strings are now in its `entry`.
    fn locate(&mut self, entry: &mut IndexedNote, note: &MemoryNote) {
        entry.id_at = note.id.as_ptr() as usize;
        entry.project_at = note.project.as_ref().map_or(0, |p| p.as_ptr() as usize);
        entry.project = note.project.as_ref().map(|project| {
            match self.projects.iter().position(|p| p == project) {
                Some(at) => small(at),
                None => {
                    self.projects.push(project.clone());
                    small(self.projects.len() - 1)
                }
            }
        });
    }

    /// Whether `entry` is current for `note` ([`NoteIndex::matches`]), reading the id only
    /// when it is not the string indexed.
    fn still(entry: &IndexedNote, note: &MemoryNote) -> bool {
        entry.stamp == Stamp::of(note)
            && entry.id.len() == note.id.len()
            && (entry.id_at == note.id.as_ptr() as usize || entry.id == note.id)
    }

    /// Whether `note`, whose current entry is `entry`, is visible from `project` (whose
    /// index in `projects` is `project_id`): [`MemoryNote::visible_from`], reading the
    /// note's project only when it is not the string indexed.
    fn visible(
        &self,
        entry: &IndexedNote,
        note: &MemoryNote,
        project: &str,
        project_id: Option<u32>,
    ) -> bool {
        if note.is_deleted() {
            return false;
        }
        match (note.scope, &note.project) {
            (Scope::Global, _) => true,
            (Scope::Project, None) => false,
            (Scope::Project, Some(p)) => {
                let indexed = entry
                    .project
                    .and_then(|at| self.projects.get(at as usize))
                    .filter(|known| {
                        entry.project_at == p.as_ptr() as usize && known.len() == p.len()
                    });
                match indexed {
                    Some(_) => entry.project == project_id,
                    None => p == project,
                }
            }
        }
    }

    /// Take `entry`'s postings out and free its slot.
    fn drop_entry(&mut self, entry: &IndexedNote) {
        for &id in &entry.terms {
            if let Some(list) = self.postings.get_mut(id as usize) {
                if let Some(at) = list.iter().position(|p| p.slot == entry.slot) {
                    list.swap_remove(at);
                }
            }
        }
        if let Some(position) = self.positions.get_mut(entry.slot as usize) {
            *position = FREE;
            self.free.push(entry.slot);
        }
    }

    fn matches(entry: &IndexedNote, note: &MemoryNote) -> bool {
        entry.id == note.id && entry.stamp == Stamp::of(note)
    }

    /// The current entry of the note at `position`, if the index has one.
    fn current(&self, position: usize, note: &MemoryNote) -> Option<&IndexedNote> {
        self.entries
            .get(position)
            .filter(|entry| Self::matches(entry, note))
    }

    /// After a note was appended to `notes`: index it (or [`NoteIndex::sync`] if the index
    /// did not cover the notes before).
    pub(crate) fn pushed(&mut self, notes: &[MemoryNote]) {
        match notes.last() {
            Some(note) if self.entries.len() + 1 == notes.len() => {
                let entry = self.add(note, self.entries.len());
                self.entries.push(entry);
            }
            _ => self.sync(notes),
        }
    }

    /// After notes were appended to `notes`: index the new ones (or [`NoteIndex::sync`] if
    /// the entries held do not end where the notes before them did).
    pub(crate) fn appended(&mut self, notes: &[MemoryNote]) {
        let held = self.entries.len();
        let aligned = held <= notes.len()
            && match held.checked_sub(1) {
                None => true,
                Some(last) => {
                    self.entries.get(last).map(|e| &e.id) == notes.get(last).map(|n| &n.id)
                }
            };
        if !aligned {
            return self.sync(notes);
        }
        self.entries.reserve(notes.len() - held);
        for note in notes.iter().skip(held) {
            let entry = self.add(note, self.entries.len());
            self.entries.push(entry);
        }
    }

    /// After the note at `position` changed: re-index it (or sync if the index is not
    /// aligned with the notes).
    pub(crate) fn replaced(&mut self, notes: &[MemoryNote], position: usize) {
        let aligned = self.entries.len() == notes.len()
            && self.entries.get(position).map(|e| &e.id) == notes.get(position).map(|n| &n.id);
        match notes.get(position) {
            Some(note) if aligned => {
                let old = self.entries[position].clone();
                self.drop_entry(&old);
                let entry = self.add(note, position);
                self.entries[position] = entry;
            }
            _ => self.sync(notes),
        }
    }

    /// After the note `id` at `position` was removed from `notes`: drop its entry (or sync
    /// if the index was not aligned with the notes).
    pub(crate) fn removed(&mut self, notes: &[MemoryNote], position: usize, id: &str) {
        if self.entries.len() == notes.len() + 1
            && self.entries.get(position).is_some_and(|e| e.id == id)
        {
            let old = self.entries.remove(position);
            self.drop_entry(&old);
            for entry in &self.entries[position..] {
                if let Some(at) = self.positions.get_mut(entry.slot as usize) {
                    *at = at.saturating_sub(1);
                }
            }
        } else {
            self.sync(notes);
        }
    }

    /// Bring the index in line with `notes`: entries that still match their note are kept,
    /// the others are built. One pass over the notes when they are in order (after any number
    /// of insertions and removals); an id lookup table only when an entry is out of place.
    pub(crate) fn sync(&mut self, notes: &[MemoryNote]) {
        let aligned = self.entries.len() == notes.len()
            && self
                .entries
                .iter()
                .zip(notes)
                .all(|(e, n)| Self::matches(e, n));
        if aligned {
            return;
        }
        let mut old: Vec<Option<IndexedNote>> = std::mem::take(&mut self.entries)
            .into_iter()
            .map(Some)
            .collect();
        // By id (a position fits a u32).
        let mut positions: Option<FxHashMap<String, u32>> = None;
        let mut next = 0; // the first old entry not yet passed
        let mut kept: Vec<Option<IndexedNote>> = Vec::with_capacity(notes.len());
        let mut stale: Vec<IndexedNote> = Vec::new();
        for note in notes {
            let found = match old.get(next) {
                Some(Some(e)) if e.id == note.id => Some(next),
                _ => positions
                    .get_or_insert_with(|| {
                        old.iter()
                            .enumerate()
                            .filter_map(|(i, e)| e.as_ref().map(|e| (e.id.clone(), small(i))))
                            .collect()
                    })
                    .get(&note.id)
                    .map(|&at| at as usize),
            };
            let reused = found.and_then(|at| {
                next = next.max(at + 1);
                let entry = old.get_mut(at).and_then(Option::take)?;
                if Self::matches(&entry, note) {
                    Some(entry)
                } else {
                    stale.push(entry);
                    None
                }
            });
            kept.push(reused);
        }
        for entry in old.into_iter().flatten().chain(stale) {
            self.drop_entry(&entry);
        }
        let mut entries = Vec::with_capacity(notes.len());
        for (position, (note, entry)) in notes.iter().zip(kept).enumerate() {
            let entry = match entry {
                Some(mut entry) => {
                    self.positions[entry.slot as usize] = small(position);
                    self.locate(&mut entry, note);
                    entry
                }
                None => self.add(note, position),
            };
            entries.push(entry);
        }
        self.entries = entries;
    }

    /// BM25 scores from the postings: `(position, score)` of every note visible from
    /// `project` that passes the scope and tag filters and holds a query term, in no
    /// particular order; `None` if a note has no current entry (the caller then reads the
    /// texts). `N`, `df` and the average length are taken over the notes that pass the
    /// filters, exactly as [`bm25`] takes them, and each score is the same sum in the same
    /// order, so the two agree to the bit.
    fn scores(
        &self,
        notes: &[MemoryNote],
        project: &str,
        scope: Option<Scope>,
        tags: &[String],
        terms: &Terms,
    ) -> Option<Vec<(usize, f64)>> {
        if self.entries.len() != notes.len() {
            return None;
        }
        let project_id = self.projects.iter().position(|p| p == project).map(small);
        // By slot: the length of a note that passes the filters, or `FREE`.
        let mut lengths = vec![FREE; self.positions.len()];
        let (mut count, mut total) = (0u64, 0u64);
        for (entry, note) in self.entries.iter().zip(notes) {
            if !Self::still(entry, note) {
                return None;
            }
            if self.visible(entry, note, project, project_id)
                && scope.is_none_or(|s| note.scope == s)
                && tags.iter().all(|t| note.tags.contains(t))
            {
                if let Some(length) = lengths.get_mut(entry.slot as usize) {
                    *length = entry.length;
                }
                count += 1;
                total += u64::from(entry.length);
            }
        }
        let n = count as f64;
        // Integer sums below 2^53 are exact as floats, so this is the same average as a sum
        // of the lengths as floats.
        let average = (total as f64 / n.max(1.0)).max(1.0);
        let passing = |p: &Posting| lengths.get(p.slot as usize).filter(|&&l| l != FREE);
        // By slot.
        let mut score = vec![0.0f64; self.positions.len()];
        let mut hits: Vec<u32> = Vec::new();
        for id in terms.ids.iter().flatten() {
            let Some(list) = self.postings.get(*id as usize) else {
                continue;
            };
            let df = list.iter().filter(|p| passing(p).is_some()).count() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for p in list {
                let (Some(&length), Some(sum)) = (passing(p), score.get_mut(p.slot as usize))
                else {
                    continue;
                };
                let norm = BM25_K1 * (1.0 - BM25_B + BM25_B * f64::from(length) / average);
                let f = f64::from(p.frequency);
                // Every term's part is positive: a score still 0 is a note not yet hit.
                if *sum == 0.0 {
                    hits.push(p.slot);
                }
                *sum += idf * f * (BM25_K1 + 1.0) / (f + norm);
            }
        }
        Some(
            hits.into_iter()
                .filter_map(|slot| {
                    let at = *self.positions.get(slot as usize)?;
                    Some((at as usize, *score.get(slot as usize)?))
                })
                .collect(),
        )
    }
}

/// Term frequencies of one note for the query terms, counted from its text, and its length.
fn frequencies(note: &MemoryNote, terms: &Terms, row: &mut [u32], word: &mut String) -> u32 {
    let mut length = 0u32;
    each_term(&note.text, word, &mut |t| {
        length = length.saturating_add(1);
        if let Some(k) = terms.find(t) {
            row[k] = row[k].saturating_add(1);
        }
    });
    for tag in &note.tags {
        each_term(tag, word, &mut |t| {
            length = length.saturating_add(TAG_WEIGHT);
            if let Some(k) = terms.find(t) {
                row[k] = row[k].saturating_add(TAG_WEIGHT);
            }
        });
    }
    length
}

/// BM25 scores of `notes` for `terms`, read from the note texts (0 for notes matching no
/// term): the search of a memory whose index is not current.
fn bm25(notes: &[&MemoryNote], terms: &Terms) -> Vec<f64> {
    let q = terms.terms.len();
    let mut tf = vec![0u32; notes.len() * q];
    let mut lengths = vec![0u32; notes.len()];
    let mut word = String::new();
    for (d, note) in notes.iter().enumerate() {
        let row = &mut tf[d * q..(d + 1) * q];
        lengths[d] = frequencies(note, terms, row, &mut word);
    }
    let n = notes.len() as f64;
    let average = (lengths.iter().map(|&l| f64::from(l)).sum::<f64>() / n.max(1.0)).max(1.0);
    let idf: Vec<f64> = (0..q)
        .map(|k| {
            let df = (0..notes.len()).filter(|&d| tf[d * q + k] > 0).count() as f64;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    (0..notes.len())
        .map(|d| {
            let norm = BM25_K1 * (1.0 - BM25_B + BM25_B * f64::from(lengths[d]) / average);
            (0..q)
                .map(|k| {
                    let f = f64::from(tf[d * q + k]);
                    if f == 0.0 {
                        0.0
                    } else {
                        idf[k] * f * (BM25_K1 + 1.0) / (f + norm)
                    }
                })
                .sum()
        })
        .collect()
}

impl Memory {
    /// Search the notes `project` can see, never a deleted one (see the module docs for
    /// filters and ranking).
    pub fn search(&self, project: &str, query: &SearchQuery) -> Vec<SearchHit> {
        let limit = query.effective_limit();
        let tags = query_tags(&query.tags);
        let keep = |n: &MemoryNote| {
            n.visible_from(project)
                && query.scope.is_none_or(|s| n.scope == s)
                && tags.iter().all(|t| n.tags.contains(t))
        };
        let text = query.text.as_deref().filter(|t| !t.trim().is_empty());
        let mut hits: Vec<(&MemoryNote, f64)> = match text {
            None => self
                .notes
                .iter()
                .filter(|n| keep(n))
                .map(|n| (n, 0.0))
                .collect(),
            Some(text) => {
                let terms = Terms::new(text, &self.index.dictionary);
                if terms.terms.is_empty() {
                    return Vec::new();
                }
                match self
                    .index
                    .scores(&self.notes, project, query.scope, &tags, &terms)
                {
                    Some(scores) => scores
                        .into_iter()
                        .map(|(at, score)| (&self.notes[at], score))
                        .collect(),
                    None => {
                        let candidates: Vec<&MemoryNote> =
                            self.notes.iter().filter(|n| keep(n)).collect();
                        let scores = bm25(&candidates, &terms);
                        candidates
                            .into_iter()
                            .zip(scores)
                            .filter(|(_, score)| *score > 0.0)
                            .collect()
                    }
                }
            }
        };
        // The best `limit` hits, in order: selected first (linear), then only they are
        // sorted. The order is total (ids are unique), so this is exactly a full sort's top,
        // and an unstable sort orders as a stable one would.
        let order = |(a, sa): &(&MemoryNote, f64), (b, sb): &(&MemoryNote, f64)| {
            sb.total_cmp(sa).then_with(|| by_importance(a, b))
        };
        if hits.len() > limit && limit > 0 {
            hits.select_nth_unstable_by(limit - 1, order);
            hits.truncate(limit);
        }
        hits.sort_unstable_by(order);
        hits.truncate(limit);
        hits.into_iter()
            .map(|(note, score)| SearchHit {
                note: note.clone(),
                score,
            })
            .collect()
    }

    /// Rebuild the search index from scratch. Needed only after changing [`Memory::notes`]
    /// directly or deserializing a memory, and only for speed: searches are correct either
    /// way. The session calls it when it takes a memory in.
    pub fn reindex(&mut self) {
        self.index = NoteIndex::build(&self.notes);
        self.positions = super::Positions::of(&self.notes);
    }

    /// Whether every note has a current index entry (searches take the fast path).
    pub fn is_indexed(&self) -> bool {
        self.index.entries.len() == self.notes.len()
            && self
                .notes
                .iter()
                .enumerate()
                .all(|(i, n)| self.index.current(i, n).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_lowercases_splits_drops_stopwords_and_plurals() {
        assert_eq!(
            tokenize("The Lighthouses of Greyhaven—Mara's stories, boxes & glasses."),
            vec!["lighthouse", "greyhaven", "mara", "story", "box", "glass"]
        );
        assert_eq!(
            tokenize("Café au lait, 海 Ωmega"),
            vec!["café", "au", "lait", "海", "ωmega"]
        );
        assert_eq!(tokenize("bus crisis  42"), vec!["bus", "crisis", "42"]);
        assert!(tokenize("the of and ... !!").is_empty());
    }

    #[test]
    fn many_query_terms_are_found_by_binary_search() {
        let terms = Terms::new(
            "one two three four five six seven eight nine ten eleven",
            &Dictionary::default(),
        );
        assert_eq!(terms.terms.len(), 11);
        for (i, t) in terms.terms.iter().enumerate() {
            assert_eq!(terms.find(t), Some(i));
        }
        assert_eq!(terms.find("twelve"), None);
    }

    #[test]
    fn sync_keeps_matching_entries_and_rebuilds_the_rest() {
        use crate::env::SequentialIds;
        use crate::memory::{NewNote, NoteType};
        let ids = SequentialIds::new("n");
        let mut m = Memory::new();
        for i in 0..12 {
            let text = format!("note {i} about lighthouse number {i}");
            m.write_note("p", NewNote::new(text, NoteType::Fact), i, &ids)
                .unwrap();
        }
        assert!(m.is_indexed());
        // Reorder, remove several, change one, insert one: all directly.
        m.notes.swap(1, 8);
        m.notes.drain(3..6);
        m.notes[0].text = "changed storm".into();
        m.notes[0].version += 1;
        let extra = m.notes[2].clone();
        m.notes.insert(
            4,
            MemoryNote {
                id: "new".into(),
                ..extra
            },
        );
        assert!(!m.is_indexed());
        let before = m.index.dictionary.len();
        m.index.sync(&m.notes);
        assert!(m.is_indexed());
        // Only "changed" and "storm" were new terms.
        assert_eq!(m.index.dictionary.len(), before + 2);
        let mut fresh = m.clone();
        fresh.reindex();
        let query = SearchQuery::text("lighthouse storm 7").with_limit(100);
        assert_eq!(m.search("p", &query), fresh.search("p", &query));
    }

    #[test]
    fn limits_default_and_cap() {
        assert_eq!(SearchQuery::default().with_limit(0).effective_limit(), 10);
        assert_eq!(
            SearchQuery::default().with_limit(500).effective_limit(),
            100
        );
        assert_eq!(SearchQuery::default().with_limit(3).effective_limit(), 3);
    }
}
