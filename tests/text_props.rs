//! Property tests of `project::Text` (a `ropey::Rope` that clamps positions) against a plain
//! `String`, on random texts of multi-byte chars and every kind of line break, before and after
//! random inserts and removes: only `\n` ends a line, and positions past the end are clamped.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::project::Text;
use proptest::prelude::*;
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

/// Char positions worth checking: every one of a short text and a few past its end; else
/// the ends, a stride through it, and past the end.
fn positions(len: usize) -> Vec<usize> {
    if len <= 300 {
        return (0..=len + 2).collect();
    }
    let mut at: Vec<usize> = (0..=len).step_by(len / 97 + 1).collect();
    at.extend([0, 1, len - 1, len, len + 1, usize::MAX]);
    at
}

/// The lines of `s` as ropey counts them: each with its `\n`, and one more after the last
/// `\n` (empty when `s` ends with one).
fn model_lines(s: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = s.split_inclusive('\n').collect();
    if s.is_empty() || s.ends_with('\n') {
        lines.push("");
    }
    lines
}

/// Byte of char `c` of `s`, clamped to the end.
fn byte_of(s: &str, c: usize) -> usize {
    s.char_indices().nth(c).map_or(s.len(), |(b, _)| b)
}

/// Everything the crate calls agrees with the string, positions past the end clamped.
fn check(text: &Text, whole: &str) -> Result<(), TestCaseError> {
    let len = whole.chars().count();
    let lines = model_lines(whole);
    prop_assert_eq!(text.to_string(), whole);
    prop_assert_eq!(text.len_bytes(), whole.len());
    prop_assert_eq!(text.len_chars(), len);
    prop_assert_eq!(text.len_lines(), lines.len());
    prop_assert_eq!(text.len_lines(), whole.matches('\n').count() + 1);
    prop_assert!(text.chars().eq(whole.chars()));
    prop_assert_eq!(text.chunks().collect::<String>(), whole);
    for c in positions(len) {
        let b = byte_of(whole, c);
        prop_assert_eq!(text.char_to_byte(c), b, "char_to_byte({})", c);
        prop_assert_eq!(
            text.char_to_line(c),
            whole[..b].matches('\n').count(),
            "char_to_line({})",
            c
        );
        prop_assert_eq!(
            text.char(c),
            whole.chars().nth(c).unwrap_or('\0'),
            "char({})",
            c
        );
        for end in [
            c,
            c.saturating_add(1),
            c.saturating_add(7),
            c.saturating_add(3000),
        ] {
            let ours = text.slice(c..end);
            let theirs = &whole[b..byte_of(whole, end)];
            prop_assert_eq!(ours.to_string(), theirs, "slice({}..{})", c, end);
            prop_assert_eq!(ours.len_chars(), theirs.chars().count());
            prop_assert_eq!(ours.len_bytes(), theirs.len());
        }
    }
    prop_assert_eq!(text.slice(..).to_string(), whole);
    for b in (0..=whole.len() + 2).step_by(whole.len() / 311 + 1) {
        for b in [b, b.saturating_sub(1), b + 1] {
            let inside = (0..=b.min(whole.len()))
                .rev()
                .find(|&i| whole.is_char_boundary(i))
                .unwrap_or(0);
            prop_assert_eq!(
                text.byte_to_char(b),
                whole[..inside].chars().count(),
                "byte_to_char({})",
                b
            );
        }
    }
    let mut start = 0;
    for (l, line) in lines.iter().enumerate() {
        prop_assert_eq!(text.line_to_char(l), start, "line_to_char({})", l);
        prop_assert_eq!(text.line(l).to_string(), *line, "line({})", l);
        start += line.chars().count();
    }
    for l in [lines.len(), lines.len() + 1, usize::MAX] {
        prop_assert_eq!(text.line_to_char(l), len);
        prop_assert_eq!(text.line(l).to_string(), "");
    }
    let ours: Vec<String> = text.lines().map(|l| l.to_string()).collect();
    prop_assert_eq!(ours, lines);
    prop_assert!(*text == Text::from_str(whole));
    prop_assert!(*text == text.clone());
    Ok(())
}

fn at(per_mille: usize, len: usize) -> usize {
    len * per_mille / 1000
}

/// `s` with the chars `a..b` replaced by `with`.
fn splice(s: &str, a: usize, b: usize, with: &str) -> String {
    format!("{}{with}{}", &s[..byte_of(s, a)], &s[byte_of(s, b)..])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// From a string, then after each of a run of inserts and removes (some past the end),
    /// the text agrees with the string on everything the crate calls.
    #[test]
    fn text_agrees_with_a_string_under_edits(
        start in arb_text(40, 700),
        edits in prop::collection::vec(arb_edit(), 0..10),
    ) {
        let mut text = Text::from_str(&start);
        let mut model = start;
        check(&text, &model)?;
        for edit in edits {
            let before = text.clone();
            let len = model.chars().count();
            // Per mille up to 1100: a tenth of the positions are past the end.
            match edit {
                Edit::Insert(p, s) => {
                    let p = at(p * 11 / 10, len);
                    text.insert(p, &s);
                    model = splice(&model, p.min(len), p.min(len), &s);
                }
                Edit::Remove(a, b) => {
                    let (a, b) = (at(a.min(b), len), at(a.max(b) * 11 / 10, len));
                    text.remove(a..b);
                    model = splice(&model, a.min(len), b.min(len), "");
                }
            }
            check(&text, &model)?;
            // A clone does not see the edit.
            prop_assert_eq!(before.len_chars(), len);
        }
    }

    /// Short texts: every position, every line, every range end.
    #[test]
    fn short_texts_agree_with_a_string_everywhere(
        start in arb_text(30, 3),
        edits in prop::collection::vec(arb_edit(), 0..6),
    ) {
        let mut text = Text::from_str(&start);
        let mut model = start;
        for edit in edits {
            check(&text, &model)?;
            let len = model.chars().count();
            for a in 0..=len + 1 {
                for b in a..=len + 1 {
                    prop_assert_eq!(
                        text.slice(a..b).to_string(),
                        &model[byte_of(&model, a)..byte_of(&model, b)]
                    );
                }
            }
            match edit {
                Edit::Insert(p, s) => {
                    let s: String = s.chars().take(5).collect();
                    text.insert(at(p, len), &s);
                    model = splice(&model, at(p, len), at(p, len), &s);
                }
                Edit::Remove(a, b) => {
                    let (a, b) = (at(a.min(b), len), at(a.max(b), len));
                    text.remove(a..b);
                    model = splice(&model, a, b, "");
                }
            }
        }
        check(&text, &model)?;
    }

    /// Equality is by content, whatever the chunks: texts built differently compare equal
    /// exactly when their strings do.
    #[test]
    fn equality_is_by_content(a in arb_text(20, 900), b in arb_text(20, 900), cut in 0..=1000usize) {
        let whole = Text::from_str(&a);
        // The same string, built from two pieces (other chunk boundaries).
        let split = byte_of(&a, at(cut, a.chars().count()));
        let mut built = Text::from_str(&a[split..]);
        built.insert(0, &a[..split]);
        prop_assert!(whole == built);
        prop_assert_eq!(whole == Text::from_str(&b), a == b);
    }
}

/// Past the end, `Text` clamps (and `char` gives `'\0'`) where ropey panics.
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
