//! Memory search over the inverted index against a brute-force scorer: after random sequences
//! of writes (one by one and in bulk), updates, deletions, restorations, removals, purges,
//! notes arriving from another copy and direct changes followed by a reindex, every random
//! query (words, tags, scope, limit, from either of two projects) finds exactly the hits the
//! brute-force scorer finds, in the same order, with the same scores to the bit.
#![cfg(not(target_arch = "wasm32"))]

use std::cmp::Ordering;

use draftsmith::commands::Origin;
use draftsmith::memory::search::{BM25_B, BM25_K1, TAG_WEIGHT};
use draftsmith::memory::{
    tokenize, Changed, Memory, MemoryItem, MemoryNote, NewNote, NotePatch, NoteType, Scope,
    SearchQuery,
};
use draftsmith::SequentialIds;
use proptest::prelude::*;

/// BM25 read from the note texts, written from the module docs of `memory::search` alone:
/// the notes `project` sees that pass the scope and tag filters; `N`, `df` and the average
/// length over those; the best `limit` by score, then importance, then the latest update,
/// then id.
fn brute_force(notes: &[MemoryNote], project: &str, query: &SearchQuery) -> Vec<(String, f64)> {
    let mut tags: Vec<String> = Vec::new();
    for tag in &query.tags {
        let tag = tag.trim().to_lowercase();
        if !tag.is_empty() && !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    let candidates: Vec<&MemoryNote> = notes
        .iter()
        .filter(|n| {
            n.deleted_ms.is_none()
                && (n.scope == Scope::Global || n.project.as_deref() == Some(project))
                && query.scope.is_none_or(|s| n.scope == s)
                && tags.iter().all(|t| n.tags.contains(t))
        })
        .collect();
    let mut hits: Vec<(&MemoryNote, f64)> = match query.text.as_deref() {
        Some(text) if !text.trim().is_empty() => {
            let mut terms: Vec<String> = Vec::new();
            for term in tokenize(text) {
                if terms.len() < 64 && !terms.contains(&term) {
                    terms.push(term);
                }
            }
            if terms.is_empty() {
                return Vec::new();
            }
            // Per note: its length and each query term's frequency.
            let counted: Vec<(f64, Vec<f64>)> = candidates
                .iter()
                .map(|n| {
                    let mut weighted: Vec<(String, u32)> =
                        tokenize(&n.text).into_iter().map(|t| (t, 1)).collect();
                    for tag in &n.tags {
                        weighted.extend(tokenize(tag).into_iter().map(|t| (t, TAG_WEIGHT)));
                    }
                    let length: u32 = weighted.iter().map(|(_, w)| w).sum();
                    let tf = terms
                        .iter()
                        .map(|q| {
                            let f: u32 = weighted
                                .iter()
                                .filter(|(t, _)| t == q)
                                .map(|(_, w)| w)
                                .sum();
                            f64::from(f)
                        })
                        .collect();
                    (f64::from(length), tf)
                })
                .collect();
            let n = candidates.len() as f64;
            let average = (counted.iter().map(|(l, _)| l).sum::<f64>() / n.max(1.0)).max(1.0);
            let idf: Vec<f64> = (0..terms.len())
                .map(|k| {
                    let df = counted.iter().filter(|(_, tf)| tf[k] > 0.0).count() as f64;
                    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
                })
                .collect();
            candidates
                .iter()
                .zip(&counted)
                .map(|(note, (length, tf))| {
                    let norm = BM25_K1 * (1.0 - BM25_B + BM25_B * length / average);
                    let score: f64 = tf
                        .iter()
                        .zip(&idf)
                        .map(|(&f, idf)| {
                            if f == 0.0 {
                                0.0
                            } else {
                                idf * f * (BM25_K1 + 1.0) / (f + norm)
                            }
                        })
                        .sum();
                    (*note, score)
                })
                .filter(|(_, score)| *score > 0.0)
                .collect()
        }
        _ => candidates.into_iter().map(|n| (n, 0.0)).collect(),
    };
    hits.sort_by(|(a, sa), (b, sb)| {
        sb.partial_cmp(sa)
            .unwrap_or(Ordering::Equal)
            .then(b.importance.cmp(&a.importance))
            .then(b.updated_ms.cmp(&a.updated_ms))
            .then_with(|| a.id.cmp(&b.id))
    });
    hits.truncate(query.effective_limit());
    hits.into_iter().map(|(n, s)| (n.id.clone(), s)).collect()
}

/// A few words, so that notes share terms (with plurals, stopwords, case and a non-ASCII one).
const WORDS: &[&str] = &[
    "lamp", "lamps", "Storm", "storms", "harbour", "the", "of", "keeper", "stories", "story",
    "Mara", "café", "boxes", "box", "rain", "bell",
];
const TAGS: &[&str] = &["mara", "storm", "Plot", "harbour keeper", " bell "];

fn any_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (
            prop::sample::select(WORDS),
            prop::sample::select(&[" ", ", ", ". ", "-"][..]),
        ),
        1..14,
    )
    .prop_map(|words| words.into_iter().map(|(w, s)| format!("{w}{s}")).collect())
}

fn any_tags() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(prop::sample::select(TAGS).prop_map(String::from), 0..3)
}

fn any_project() -> impl Strategy<Value = &'static str> {
    prop::sample::select(&["p", "q"][..])
}

fn any_input() -> impl Strategy<Value = NewNote> {
    (any_text(), any::<bool>(), any_tags(), 1u8..6).prop_map(|(text, global, tags, importance)| {
        NewNote {
            text,
            note_type: NoteType::Fact,
            scope: if global {
                Scope::Global
            } else {
                Scope::Project
            },
            tags,
            importance: Some(importance),
        }
    })
}

#[derive(Debug, Clone)]
enum Op {
    Write(&'static str, NewNote),
    WriteMany(&'static str, Vec<NewNote>),
    Update(usize, Option<String>, Option<Vec<String>>, Option<u8>),
    Delete(usize),
    Restore(usize),
    Remove(usize),
    Purge,
    /// Another copy's version of a note (a new text), or a note new to this copy.
    Arrive(usize, String),
    /// Notes changed directly (two swapped, one's text, one moved to the other project, one
    /// removed), then the memory reindexed or not (searches are right either way).
    Direct(usize, String, bool),
    /// Serialized and read back, then reindexed (a project opened again).
    Reload,
}

fn any_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (any_project(), any_input()).prop_map(|(p, n)| Op::Write(p, n)),
        2 => (any_project(), prop::collection::vec(any_input(), 1..5))
            .prop_map(|(p, n)| Op::WriteMany(p, n)),
        3 => (any::<usize>(), prop::option::of(any_text()), prop::option::of(any_tags()), prop::option::of(1u8..6))
            .prop_map(|(i, text, tags, importance)| Op::Update(i, text, tags, importance)),
        2 => any::<usize>().prop_map(Op::Delete),
        1 => any::<usize>().prop_map(Op::Restore),
        2 => any::<usize>().prop_map(Op::Remove),
        1 => Just(Op::Purge),
        1 => (any::<usize>(), any_text()).prop_map(|(i, t)| Op::Arrive(i, t)),
        2 => (any::<usize>(), any_text(), any::<bool>()).prop_map(|(i, t, r)| Op::Direct(i, t, r)),
        1 => Just(Op::Reload),
    ]
}

fn any_query() -> impl Strategy<Value = (&'static str, SearchQuery)> {
    (
        any_project(),
        prop::option::of(any_text()),
        any_tags(),
        prop::option::of(prop::sample::select(&[Scope::Project, Scope::Global][..])),
        prop::sample::select(&[0usize, 1, 3, 10, 100][..]),
    )
        .prop_map(|(project, text, tags, scope, limit)| {
            (
                project,
                SearchQuery {
                    text,
                    tags,
                    scope,
                    limit,
                },
            )
        })
}

const DAY: u64 = 86_400_000;

fn apply(m: &mut Memory, op: Op, now: u64, ids: &SequentialIds) {
    let pick = |m: &Memory, i: usize| m.notes.get(i % m.notes.len().max(1)).map(|n| n.id.clone());
    match op {
        Op::Write(project, input) => {
            m.write_note(project, input, now, ids).unwrap();
        }
        Op::WriteMany(project, inputs) => {
            m.write_notes(project, inputs, now, ids).unwrap();
            m.catch_up_index();
        }
        Op::Update(i, text, tags, importance) => {
            if let Some(id) = pick(m, i) {
                let patch = NotePatch {
                    text,
                    note_type: None,
                    tags,
                    importance,
                };
                // A deleted note or an empty patch is refused; that changes nothing.
                let _ = m.update_note(&id, patch, now);
            }
        }
        Op::Delete(i) => {
            if let Some(id) = pick(m, i) {
                let _ = m.delete_note(&id, &Origin::User, now);
            }
        }
        Op::Restore(i) => {
            if let Some(id) = pick(m, i) {
                let _ = m.restore_note(&id, now);
            }
        }
        Op::Remove(i) => {
            if let Some(id) = pick(m, i) {
                // A deleted note is refused (it leaves by the purge).
                let _ = m.remove_note(&id);
            }
        }
        Op::Purge => {
            m.purge_expired(now + 31 * DAY);
        }
        Op::Arrive(i, text) => match pick(m, i).filter(|_| i % 3 != 0) {
            Some(id) => {
                let mut note = m.notes.iter().find(|n| n.id == id).unwrap().clone();
                note.text = text;
                note.version += 1;
                note.updated_ms = now;
                m.put_item(&Changed::Note(id), Some(MemoryItem::Note(note)));
            }
            None => {
                let mut other = Memory::new();
                let input = NewNote::new(text, NoteType::Observation);
                let note = other
                    .write_note("p", input, now, &SequentialIds::new(format!("other{now}-")))
                    .unwrap()
                    .clone();
                m.put_item(
                    &Changed::Note(note.id.clone()),
                    Some(MemoryItem::Note(note)),
                );
            }
        },
        Op::Direct(i, text, reindex) => {
            if !m.notes.is_empty() {
                let n = m.notes.len();
                m.notes.swap(i % n, (i / 7) % n);
                let note = &mut m.notes[i % n];
                note.text = text;
                note.version += 1;
                let other = &mut m.notes[(i / 3) % n];
                if other.project.is_some() {
                    let moved = if other.project.as_deref() == Some("p") {
                        "q"
                    } else {
                        "p"
                    };
                    other.project = Some(moved.to_string());
                }
                if i % 5 == 0 {
                    m.notes.remove((i / 11) % n);
                }
            }
            if reindex {
                m.reindex();
            }
        }
        Op::Reload => {
            *m = serde_json::from_str(&serde_json::to_string(&*m).unwrap()).unwrap();
            m.reindex();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn postings_search_finds_what_a_brute_force_scorer_finds(
        ops in prop::collection::vec(any_op(), 1..40),
        queries in prop::collection::vec(any_query(), 1..8),
    ) {
        let ids = SequentialIds::new("n");
        let mut m = Memory::new();
        // Whether notes were changed directly since the last reindex.
        let mut direct = false;
        for (step, op) in ops.into_iter().enumerate() {
            let now = (step as u64 + 1) * DAY;
            match op {
                Op::Direct(_, _, reindex) => direct = !reindex,
                Op::Reload => direct = false,
                _ => {}
            }
            apply(&mut m, op, now, &ids);
            prop_assert!(direct || m.is_indexed());
            for (project, query) in &queries {
                let got: Vec<(String, f64)> = m
                    .search(project, query)
                    .into_iter()
                    .map(|h| (h.note.id, h.score))
                    .collect();
                prop_assert_eq!(got, brute_force(&m.notes, project, query), "{:?} from {}", query, project);
            }
        }
    }
}
