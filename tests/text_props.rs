//! Property tests of `project::Text` against `ropey::Rope` (with the features the crate built
//! it with before: only `\n` ends a line), on random texts of multi-byte chars and every kind
//! of line break, before and after random inserts and removes: every method the crate uses.
//! Texts run to tens of KB, so that they span many chunks, and edits split and merge them.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::project::Text;
use proptest::prelude::*;
use ropey::Rope;

const ATOMS: &[&str] = &[
    "a", "b", " ", "é", "🐉", "“", "\n", "\r\n", "\r", "\n\n", "\u{0B}", "\u{0C}", "\u{85}",
    "\u{2028}", "\u{2029}",
];

fn atom() -> impl Strategy<Value = &'static str> {
    prop::sample::select(ATOMS)
}

/// Up to `runs` runs of one atom repeated up to `repeat` times.
fn arb_text(runs: usize, repeat: usize) -> impl Strategy<Value = String> {
    prop::collection::vec((atom(), 1..=repeat), 0..runs).prop_map(|runs| {
        runs.into_iter()
            .map(|(a, n)| a.repeat(n))
            .collect::<String>()
    })
}

#[derive(Debug, Clone)]
enum Edit {
    /// At this fraction (per mille) of the text.
    Insert(usize, String),
    /// From and to, per mille of the text (in either order).
    Remove(usize, usize),
}

fn arb_edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (0..=1000usize, arb_text(4, 3)).prop_map(|(at, s)| Edit::Insert(at, s)),
        (0..=1000usize, arb_text(8, 900)).prop_map(|(at, s)| Edit::Insert(at, s)),
        (0..=1000usize, 0..=1000usize).prop_map(|(a, b)| Edit::Remove(a, b)),
        (0..=1000usize, 0..=20usize).prop_map(|(a, n)| Edit::Remove(a, a + n)),
    ]
}

/// Char positions worth checking: every one of a short text; else the ends, a stride
/// through it, and around each chunk boundary.
fn positions(text: &Text, len: usize) -> Vec<usize> {
    if len <= 300 {
        return (0..=len).collect();
    }
    let mut at: Vec<usize> = (0..=len).step_by(len / 97 + 1).collect();
    at.extend([0, 1, len - 1, len]);
    let mut start = 0;
    for chunk in text.chunks() {
        start += chunk.chars().count();
        for p in [
            start.saturating_sub(2),
            start.saturating_sub(1),
            start,
            start + 1,
        ] {
            at.push(p.min(len));
        }
    }
    at
}

/// The same positions for lines (up to and with `len_lines`).
fn line_positions(rope: &Rope) -> Vec<usize> {
    let lines = rope.len_lines();
    if lines <= 300 {
        return (0..=lines).collect();
    }
    let mut at: Vec<usize> = (0..=lines).step_by(lines / 97 + 1).collect();
    at.extend([0, 1, lines - 1, lines]);
    at
}

/// Everything the crate calls agrees.
fn check(text: &Text, rope: &Rope) -> Result<(), TestCaseError> {
    let whole = rope.to_string();
    prop_assert_eq!(text.to_string(), whole.clone());
    prop_assert_eq!(text.len_bytes(), rope.len_bytes());
    prop_assert_eq!(text.len_chars(), rope.len_chars());
    prop_assert_eq!(text.len_lines(), rope.len_lines());
    prop_assert_eq!(text.chars().collect::<String>(), whole.clone());
    prop_assert_eq!(text.chunks().collect::<String>(), whole.clone());
    prop_assert!(text.chunks().all(|c| !c.is_empty()));

    let len = rope.len_chars();
    for c in positions(text, len) {
        prop_assert_eq!(
            text.char_to_byte(c),
            rope.char_to_byte(c),
            "char_to_byte({})",
            c
        );
        prop_assert_eq!(
            text.char_to_line(c),
            rope.char_to_line(c),
            "char_to_line({})",
            c
        );
        if c < len {
            prop_assert_eq!(text.char(c), rope.char(c), "char({})", c);
        }
        for end in [c, (c + 1).min(len), (c + 7).min(len), (c + 3000).min(len)] {
            let (ours, theirs) = (text.slice(c..end), rope.slice(c..end));
            prop_assert_eq!(
                ours.to_string(),
                theirs.to_string(),
                "slice({}..{})",
                c,
                end
            );
            prop_assert_eq!(ours.len_chars(), theirs.len_chars());
            prop_assert_eq!(ours.len_bytes(), theirs.len_bytes());
            prop_assert!(ours.chars().eq(theirs.chars()));
        }
    }
    prop_assert_eq!(text.slice(..).to_string(), whole.clone());
    for b in (0..=rope.len_bytes()).step_by(rope.len_bytes() / 311 + 1) {
        for b in [b, b.saturating_sub(1), (b + 1).min(rope.len_bytes())] {
            prop_assert_eq!(
                text.byte_to_char(b),
                rope.byte_to_char(b),
                "byte_to_char({})",
                b
            );
        }
    }
    let lines = rope.len_lines();
    for l in line_positions(rope) {
        prop_assert_eq!(
            text.line_to_char(l),
            rope.line_to_char(l),
            "line_to_char({})",
            l
        );
        if l < lines {
            let (ours, theirs) = (text.line(l), rope.line(l));
            prop_assert_eq!(ours.to_string(), theirs.to_string(), "line({})", l);
            prop_assert_eq!(ours.len_chars(), theirs.len_chars());
            prop_assert!(ours.chars().eq(theirs.chars()));
        }
    }
    let ours: Vec<(String, usize)> = text
        .lines()
        .map(|l| (l.to_string(), l.len_chars()))
        .collect();
    let theirs: Vec<(String, usize)> = rope
        .lines()
        .map(|l| (l.to_string(), l.len_chars()))
        .collect();
    prop_assert_eq!(ours, theirs);

    prop_assert!(*text == Text::from_str(&whole));
    prop_assert!(*text == text.clone());
    Ok(())
}

fn at(per_mille: usize, len: usize) -> usize {
    len * per_mille / 1000
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// From a string, then after each of a run of inserts and removes, the text agrees with
    /// ropey on everything the crate calls.
    #[test]
    fn text_agrees_with_ropey_under_edits(
        start in arb_text(40, 700),
        edits in prop::collection::vec(arb_edit(), 0..10),
    ) {
        let mut text = Text::from_str(&start);
        let mut rope = Rope::from_str(&start);
        check(&text, &rope)?;
        for edit in edits {
            let before = text.clone();
            let len = rope.len_chars();
            match edit {
                Edit::Insert(p, s) => {
                    let p = at(p, len);
                    text.insert(p, &s);
                    rope.insert(p, &s);
                }
                Edit::Remove(a, b) => {
                    let (a, b) = (at(a.min(b), len), at(a.max(b), len).min(len));
                    text.remove(a..b);
                    rope.remove(a..b);
                }
            }
            check(&text, &rope)?;
            // A clone shares chunks until edited: the edit did not reach it.
            prop_assert_eq!(before.len_chars(), len);
            prop_assert_eq!(before.to_string().chars().count(), len);
        }
    }

    /// Short texts: every position, every line, every range end.
    #[test]
    fn short_texts_agree_with_ropey_everywhere(
        start in arb_text(30, 3),
        edits in prop::collection::vec(arb_edit(), 0..6),
    ) {
        let mut text = Text::from_str(&start);
        let mut rope = Rope::from_str(&start);
        for edit in edits {
            check(&text, &rope)?;
            let len = rope.len_chars();
            for a in 0..=len {
                for b in a..=len {
                    prop_assert_eq!(text.slice(a..b).to_string(), rope.slice(a..b).to_string());
                }
            }
            match edit {
                Edit::Insert(p, s) => {
                    let s: String = s.chars().take(5).collect();
                    text.insert(at(p, len), &s);
                    rope.insert(at(p, len), &s);
                }
                Edit::Remove(a, b) => {
                    let (a, b) = (at(a.min(b), len), at(a.max(b), len).min(len));
                    text.remove(a..b);
                    rope.remove(a..b);
                }
            }
        }
        check(&text, &rope)?;
    }

    /// Equality is by content, whatever the chunks: texts built differently compare equal
    /// exactly when their strings do.
    #[test]
    fn equality_is_by_content(a in arb_text(20, 900), b in arb_text(20, 900), cut in 0..=1000usize) {
        let whole = Text::from_str(&a);
        // The same string, built from two pieces (other chunk boundaries).
        let split = a.char_indices().nth(at(cut, a.chars().count())).map_or(a.len(), |(i, _)| i);
        let mut built = Text::from_str(&a[split..]);
        built.insert(0, &a[..split]);
        prop_assert!(whole == built);
        prop_assert_eq!(whole == Text::from_str(&b), a == b);
        prop_assert_eq!(Rope::from_str(&a) == Rope::from_str(&b), a == b);
    }
}

/// Past the end, ropey panics; `Text` clamps (and `char` gives `'\0'`).
#[test]
fn positions_past_the_end_are_clamped() {
    let mut text = Text::from_str("ab\ncd");
    assert_eq!(text.char_to_byte(99), 5);
    assert_eq!(text.char_to_line(99), 1);
    assert_eq!(text.line_to_char(99), 5);
    assert_eq!(text.byte_to_char(99), 5);
    assert_eq!(text.char(99), '\0');
    assert_eq!(text.slice(3..99).to_string(), "cd");
    assert_eq!(text.line(7).to_string(), "");
    text.insert(99, "!");
    text.remove(4..99);
    assert_eq!(text.to_string(), "ab\nc");
}

/// `Chapter::find` searches the text piece by piece: a match across any two chunks (where
/// its windows end) is found, at the right place.
#[test]
fn chapter_find_finds_matches_across_chunks() {
    use draftsmith::project::Chapter;
    let filler = "x".repeat(30_000);
    let query = "abba cab ab";
    let mut ends = Vec::new();
    let mut end = 0;
    for chunk in Text::from_str(&filler).chunks() {
        end += chunk.len();
        ends.push(end);
    }
    assert!(ends.len() > 20, "{} chunks", ends.len());
    for &e in &ends[..ends.len() - 1] {
        for o in 1..query.len() {
            let at = e - o;
            // The same length, so the same chunks (the text is ASCII).
            let text = format!("{}{query}{}", &filler[..at], &filler[at + query.len()..]);
            let chapter = Chapter::new("c", "C", &text);
            assert_eq!(
                chapter.find(query),
                Some((at, at + query.len())),
                "across byte {e}"
            );
        }
    }
}
