//! Property tests of change sets: apply/invert, compose, map_pos, transform.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::project::changeset::{Assoc, ChangeSet, Op};
use draftsmith::project::Text;
use proptest::prelude::*;

fn arb_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just('a'),
            Just('b'),
            Just(' '),
            Just('é'),
            Just('🐉'),
            Just('\n'),
            Just('“')
        ],
        0..40,
    )
    .prop_map(|v| v.into_iter().collect())
}

/// A random change set for a document of `len` chars.
fn arb_change(len: usize) -> impl Strategy<Value = ChangeSet> {
    prop::collection::vec((0..3u8, 0..6usize, arb_text()), 0..8).prop_map(move |steps| {
        let mut change = ChangeSet::default();
        let mut left = len;
        for (kind, n, text) in steps {
            let n = n.min(left);
            match kind {
                0 => change.retain(n),
                1 => change.delete(n),
                _ => change
                    .insert(&text[..text.char_indices().nth(4).map_or(text.len(), |(i, _)| i)]),
            }
            if kind < 2 {
                left -= n;
            }
        }
        change.fit(len).expect("never too long")
    })
}

fn doc_and_change() -> impl Strategy<Value = (String, ChangeSet)> {
    arb_text().prop_flat_map(|text| {
        let len = text.chars().count();
        (Just(text), arb_change(len))
    })
}

fn doc_and_two_sequential() -> impl Strategy<Value = (String, ChangeSet, ChangeSet)> {
    doc_and_change().prop_flat_map(|(text, a)| {
        let after = a.len_after();
        (Just(text), Just(a), arb_change(after))
    })
}

fn doc_and_two_concurrent() -> impl Strategy<Value = (String, ChangeSet, ChangeSet)> {
    arb_text().prop_flat_map(|text| {
        let len = text.chars().count();
        (Just(text), arb_change(len), arb_change(len))
    })
}

proptest! {
    #[test]
    fn apply_then_invert_is_identity((text, change) in doc_and_change()) {
        let rope = Text::from_str(&text);
        let after = change.apply_str(&text).unwrap();
        prop_assert_eq!(after.chars().count(), change.len_after());
        let inverse = change.invert(&rope).unwrap();
        prop_assert_eq!(inverse.apply_str(&after).unwrap(), text);
    }

    #[test]
    fn compose_agrees_with_sequential_apply((text, a, b) in doc_and_two_sequential()) {
        let sequential = b.apply_str(&a.apply_str(&text).unwrap()).unwrap();
        let composed = a.compose(&b).unwrap();
        prop_assert_eq!(composed.apply_str(&text).unwrap(), sequential);
        prop_assert_eq!(composed.len_before(), a.len_before());
        prop_assert_eq!(composed.len_after(), b.len_after());
    }

    #[test]
    fn map_pos_is_monotone_and_in_bounds((text, change) in doc_and_change()) {
        let len = text.chars().count();
        for assoc in [Assoc::Before, Assoc::After] {
            let mut last = 0;
            for pos in 0..=len {
                let mapped = change.map_pos(pos, assoc);
                prop_assert!(mapped >= last, "map_pos not monotone at {pos}");
                prop_assert!(mapped <= change.len_after());
                last = mapped;
            }
        }
        // Assoc::Before never maps past Assoc::After.
        for pos in 0..=len {
            prop_assert!(change.map_pos(pos, Assoc::Before) <= change.map_pos(pos, Assoc::After));
        }
    }

    #[test]
    fn transform_keeps_every_insert_and_applies((text, mine, theirs) in doc_and_two_concurrent()) {
        let rebased = mine.transform(&theirs).unwrap();
        let after_theirs = theirs.apply_str(&text).unwrap();
        let result = rebased.apply_str(&after_theirs).unwrap();
        let mut inserted_len = 0;
        for op in mine.ops() {
            if let Op::Insert(s) = op {
                prop_assert!(result.contains(s.as_str()), "lost insert {s:?} in {result:?}");
                inserted_len += s.chars().count();
            }
        }
        // Nothing but my inserts is added on top of their result.
        prop_assert!(result.chars().count() <= after_theirs.chars().count() + inserted_len);
        // Transform over the identity changes nothing.
        prop_assert_eq!(mine.transform(&ChangeSet::identity(text.chars().count())).unwrap(), mine.clone());
    }

    #[test]
    fn transform_sides_converge((text, a, b) in doc_and_two_concurrent()) {
        let a_after_b = a.transform_side(&b, true).unwrap();
        let b_after_a = b.transform_side(&a, false).unwrap();
        let one = a_after_b.apply_str(&b.apply_str(&text).unwrap()).unwrap();
        let two = b_after_a.apply_str(&a.apply_str(&text).unwrap()).unwrap();
        prop_assert_eq!(one, two);
    }

    #[test]
    fn wire_round_trip((_text, change) in doc_and_change()) {
        let json = serde_json::to_string(&change).unwrap();
        let back: ChangeSet = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(back, change);
    }
}

#[test]
fn huge_lengths_from_the_wire_do_not_overflow() {
    let change: ChangeSet = serde_json::from_str(&format!(
        r#"[{{"retain":{}}},{{"delete":{}}}]"#,
        usize::MAX,
        usize::MAX
    ))
    .unwrap();
    assert!(change.fit(10).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Chapter::find (chunk by chunk in the rope) agrees with str::find on the whole text,
    /// including matches that straddle rope chunks.
    #[test]
    fn chapter_find_agrees_with_str_find(
        words in prop::collection::vec(prop_oneof![Just("lamp"), Just("é🐉"), Just(" "), Just("the "), Just("\n"), Just("stair")], 0..3000),
        qa in 0usize..3000,
        ql in 1usize..40,
    ) {
        let text: String = words.concat();
        let chapter = draftsmith::project::Chapter::new("c", "C", &text);
        let chars: Vec<char> = text.chars().collect();
        let qa = qa.min(chars.len());
        let query: String = chars[qa..(qa + ql).min(chars.len())].iter().collect();
        let expected = text.find(&query).filter(|_| !query.is_empty()).map(|b| {
            let s = text[..b].chars().count();
            (s, s + query.chars().count())
        });
        prop_assert_eq!(chapter.find(&query), expected);
        prop_assert_eq!(chapter.find("not-in-there-xyz"), None);
    }
}
