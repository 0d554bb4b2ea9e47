//! The fixture novel itself, and text search over it: every planted passage is found exactly,
//! and fuzzily after the query is mangled the way people and models mangle quotations.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::time::Instant;

use common::novel::{self, PLANTED, RARE_CHARACTER, RARE_CHARACTER_CHAPTER};
use draftsmith::project::search::{self, DEFAULT_MIN_SCORE};

fn occurrences(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// The char offset of the first occurrence of `needle` in `haystack`.
fn char_offset(haystack: &str, needle: &str) -> Option<usize> {
    haystack
        .find(needle)
        .map(|byte| haystack[..byte].chars().count())
}

/// Mangles a quotation as a person or a model would: lowercased, curly and straight quotes
/// swapped, guillemets and em dashes typed on a plain keyboard, the ellipsis as three dots, and
/// one letter in the middle replaced.
fn mangle(text: &str) -> String {
    let mut out = String::new();
    let mut opening = true;
    for c in text.to_lowercase().chars() {
        match c {
            '“' | '”' => out.push('"'),
            '"' => {
                out.push(if opening { '“' } else { '”' });
                opening = !opening;
            }
            '’' => out.push('\''),
            '\'' => out.push('’'),
            '—' => out.push_str("--"),
            '…' => out.push_str("..."),
            c => out.push(c),
        }
    }
    let out = out.replace("« ", "\"").replace(" »", "\"");
    let mut chars: Vec<char> = out.chars().collect();
    let middle = chars.len() / 2;
    if let Some(c) = chars
        .iter_mut()
        .skip(middle)
        .find(|c| c.is_ascii_alphabetic())
    {
        *c = if *c == 'q' { 'z' } else { 'q' };
    }
    chars.into_iter().collect()
}

#[test]
fn the_novel_is_long_enough() {
    let chapters = novel::novel();
    assert!(chapters.len() >= 18, "{} chapters", chapters.len());
    let words = novel::word_count(&chapters);
    assert!(words >= 50_000, "{words} words");
    for (title, text) in &chapters {
        assert!(title.starts_with("Chapter "), "{title}");
        assert!(text.contains("\n\n"), "{title} has paragraphs");
    }
}

#[test]
fn titles_are_distinct() {
    let chapters = novel::novel();
    let mut titles: Vec<&str> = chapters.iter().map(|(t, _)| t.as_str()).collect();
    titles.sort_unstable();
    titles.dedup();
    assert_eq!(titles.len(), chapters.len());
    assert_eq!(chapters[0].0, "Chapter 1: The Lighthouse");
}

#[test]
fn generation_is_deterministic() {
    assert_eq!(novel::novel(), novel::novel());
}

#[test]
fn planted_passages_occur_exactly_once_in_their_chapter() {
    let chapters = novel::novel();
    let full = novel::full_text(&chapters);
    assert!(PLANTED.len() >= 8);
    let kinds = ["narration", "straight", "curly", "guillemets", "emdash"];
    for kind in kinds {
        assert!(
            PLANTED.iter().filter(|p| p.kind == kind).count() >= 2,
            "{kind}"
        );
    }
    for planted in PLANTED {
        assert!(kinds.contains(&planted.kind), "{planted:?}");
        assert_eq!(occurrences(&full, planted.text), 1, "{planted:?}");
        assert_eq!(
            occurrences(&chapters[planted.chapter].1, planted.text),
            1,
            "{planted:?}"
        );
        // A whole paragraph.
        let paragraph = format!("\n\n{}\n\n", planted.text);
        assert!(
            chapters[planted.chapter].1.contains(&paragraph),
            "{planted:?}"
        );
    }
}

#[test]
fn the_rare_character_appears_in_one_chapter() {
    let chapters = novel::novel();
    let with: Vec<usize> = chapters
        .iter()
        .enumerate()
        .filter(|(_, (_, text))| text.contains(RARE_CHARACTER))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(with, vec![RARE_CHARACTER_CHAPTER]);
    let full = novel::full_text(&chapters);
    assert_eq!(occurrences(&full, "Ysolde"), 2);
}

#[test]
fn every_quoting_style_is_common() {
    let chapters = novel::novel();
    let full = novel::full_text(&chapters);
    let straight = occurrences(&full, "\"");
    let curly_open = occurrences(&full, "“");
    let curly_close = occurrences(&full, "”");
    let guillemets_open = occurrences(&full, "« ");
    let guillemets_close = occurrences(&full, " »");
    let emdash_lines = full.lines().filter(|l| l.starts_with("— ")).count();
    assert!(straight >= 200 && straight % 2 == 0, "{straight}");
    assert!(
        curly_open >= 100 && curly_open == curly_close,
        "{curly_open}"
    );
    assert!(
        guillemets_open >= 100 && guillemets_open == guillemets_close,
        "{guillemets_open}"
    );
    assert!(emdash_lines >= 100, "{emdash_lines}");
    // Apostrophes inside dialogue, typographic and typewriter.
    assert!(occurrences(&full, "don’t") >= 10);
    assert!(occurrences(&full, "don't") >= 10);
    assert!(occurrences(&full, "'") >= 100);
    for mark in ["\n\n***\n\n", "\n\n* * *\n\n", "\n\n#\n\n"] {
        assert!(occurrences(&full, mark) >= 10, "{mark:?}");
    }
    for name in ["Mara Vey", "Tobias Quill", "Elin Hart", "the captain"] {
        assert!(occurrences(&full, name) >= 50, "{name}");
    }
}

#[test]
fn find_exact_finds_each_planted_passage() {
    let chapters = novel::novel();
    let full = novel::full_text(&chapters);
    for planted in PLANTED {
        let chapter = &chapters[planted.chapter].1;
        let found = search::find_exact(chapter, planted.text);
        assert_eq!(found.len(), 1, "{planted:?}");
        let expected = char_offset(chapter, planted.text);
        assert_eq!(Some(found[0].start), expected, "{planted:?}");
        assert_eq!(found[0].end - found[0].start, planted.text.chars().count());
        let found = search::find_exact(&full, planted.text);
        assert_eq!(found.len(), 1, "{planted:?}");
        assert_eq!(Some(found[0].start), char_offset(&full, planted.text));
        assert_eq!(found[0].text, planted.text);
        let from = search::find_exact_from(&full, planted.text, found[0].start);
        assert_eq!(from.as_ref(), Some(&found[0]));
        assert_eq!(
            search::find_exact_from(&full, planted.text, found[0].start + 1),
            None
        );
    }
}

#[test]
fn find_fuzzy_finds_each_mangled_planted_passage() {
    let chapters = novel::novel();
    let full = novel::full_text(&chapters);
    for planted in PLANTED {
        let query = mangle(planted.text);
        assert_ne!(query, planted.text);
        let start = char_offset(&full, planted.text).expect("planted");
        let end = start + planted.text.chars().count();
        let found = search::find_fuzzy(&full, &query, DEFAULT_MIN_SCORE)
            .unwrap_or_else(|| panic!("not found: {query:?}"));
        assert!(found.score >= 0.75, "{query:?} → {found:?}");
        assert!(found.score < 1.0, "{query:?} → {found:?}");
        assert!(
            found.start < end && start < found.end,
            "{query:?} → {found:?}, expected {start}..{end}"
        );
        // One substitution in the middle: the whole passage is matched.
        assert_eq!(found.text, planted.text, "{query:?}");
        // Within the planted chapter too.
        let chapter = &chapters[planted.chapter].1;
        let found = search::find_fuzzy(chapter, &query, DEFAULT_MIN_SCORE).expect("in chapter");
        assert_eq!(Some(found.start), char_offset(chapter, planted.text));
    }
}

#[test]
fn find_fuzzy_rejects_text_that_is_not_in_the_novel() {
    let full = novel::full_text(&novel::novel());
    let query = "The astronaut calibrated the reactor with a quantum spanner.";
    assert_eq!(search::find_fuzzy(&full, query, DEFAULT_MIN_SCORE), None);
    let near = search::closest(&full, query).expect("closest");
    assert!(near.score < DEFAULT_MIN_SCORE, "{near:?}");
}

#[test]
fn chapter_titles_resolve() {
    let chapters = novel::novel();
    let titles: Vec<&str> = chapters.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(search::match_title(&titles, "the lighthouse"), Some(0));
    assert_eq!(search::match_title(&titles, "Captain's Silence"), Some(7));
    assert_eq!(search::match_title(&titles, "drowned bel"), Some(9));
    assert_eq!(search::match_title(&titles, "Chapel of St Aud"), Some(18));
    assert_eq!(
        search::parse_chapter_ref("Chapter twelve"),
        search::ChapterRef::Number(12)
    );
}

/// Times a 60-char fuzzy query (with typos, so the exact fast path cannot answer) on the whole
/// novel; run with `--release --nocapture` for meaningful numbers.
#[test]
fn fuzzy_search_is_fast_enough() {
    let full = novel::full_text(&novel::novel());
    // 60 chars from the middle of the novel, with two letters replaced.
    let mut query: Vec<char> = full
        .chars()
        .skip(full.chars().count() / 2)
        .take(60)
        .collect();
    for i in [10, 40] {
        query[i] = if query[i] == 'q' { 'z' } else { 'q' };
    }
    let query: String = query.into_iter().collect();
    assert_eq!(query.chars().count(), 60);
    let runs = 5;
    let started = Instant::now();
    for _ in 0..runs {
        let found = search::find_fuzzy(&full, &query, DEFAULT_MIN_SCORE);
        assert!(found.is_some_and(|m| m.score >= 0.9));
    }
    let per_query = started.elapsed() / runs;
    println!(
        "fuzzy: 60-char query over {} KB ({} chars): {per_query:?} per query",
        full.len() / 1024,
        full.chars().count()
    );
    // Multi-megabyte text: it must still finish.
    let big = full.repeat(16);
    let started = Instant::now();
    let missing = search::closest(&big, "a sentence that the generator never writes anywhere");
    assert!(missing.is_some());
    println!(
        "closest: over {} KB: {:?}",
        big.len() / 1024,
        started.elapsed()
    );
}
