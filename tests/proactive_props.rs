//! Invariants of proactive memory's pure parts: the monitor on any text and any edit (never
//! panics, stays within its bounds, reports only words the edit touched, at the line it names),
//! and the bedside note's automatic part (taking a text apart and putting it back keeps the
//! agents' plan).
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::memory::bedside::{compose, split, STATUS_HEADING};
use draftsmith::memory::monitor::{changed_regions, FindingKind, Monitor, MAX_FINDINGS};
use draftsmith::memory::{EntityType, Priority, WatchedEntity, MAX_NOTE_CHARS};
use draftsmith::project::changeset::ChangeSet;
use draftsmith::project::Text;
use proptest::prelude::*;

fn watched() -> Vec<WatchedEntity> {
    [
        ("Mara", EntityType::Character),
        ("Old Tom", EntityType::Character),
        ("silver key", EntityType::Item),
        ("Magic needs blood", EntityType::Rule),
        ("Ünïcödé", EntityType::Location),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (name, entity_type))| WatchedEntity {
        id: format!("w{i}"),
        project: "p".into(),
        name: name.into(),
        entity_type,
        reason: "r".into(),
        priority: Priority::Medium,
        created_ms: 0,
    })
    .collect()
}

/// Text made of words that matter to the monitor, other words, punctuation and line breaks.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("Mara".to_string()),
        Just("Marra".to_string()),
        Just("Old Tom".to_string()),
        Just("magic".to_string()),
        Just("never".to_string()),
        Just("blood".to_string()),
        Just("Ünïcödé".to_string()),
        Just("İstanbul".to_string()),
        Just(". ".to_string()),
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just("’".to_string()),
        "[a-zA-Z]{1,8}",
        "\\PC{0,3}",
        Just(" ".to_string()),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|parts| parts.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_monitor_reports_only_touched_words_at_the_lines_it_names(
        before in text(),
        inserted in text(),
        at in 0usize..10_000,
        deleted in 0usize..20,
        typing in any::<bool>(),
    ) {
        let len = before.chars().count();
        let at = at.min(len);
        let end = (at + deleted).min(len);
        let change = ChangeSet::replace(len, at, end, &inserted).unwrap();
        let after = change.apply_str(&before).unwrap();
        let rope = Text::from_str(&after);
        let regions = changed_regions(&change);
        let caret = typing.then(|| change.touched_range().map(|(_, e)| e)).flatten();
        let monitor = Monitor::new(&watched(), &[]);
        let findings = monitor.scan(&rope, &regions, caret);
        prop_assert!(findings.len() <= MAX_FINDINGS);
        let chars: Vec<char> = after.chars().collect();
        for f in &findings {
            prop_assert!(f.at < chars.len().max(1));
            prop_assert_eq!(f.line, rope.char_to_line(f.at) + 1);
            let word_len = f.word.chars().count();
            let found: String = chars[f.at..(f.at + word_len).min(chars.len())].iter().collect();
            if f.kind != FindingKind::Contradiction {
                // The word is where the finding says, and the edit touched it.
                prop_assert_eq!(found.to_lowercase(), f.word.to_lowercase());
                prop_assert!(regions.iter().any(|&(a, b)| f.at <= b && f.at + word_len >= a), "{:?} {:?}", f, regions);
                // A word still being typed is not reported.
                prop_assert!(caret != Some(f.at + word_len), "{:?}", f);
            }
        }
        // Nothing watched: nothing found.
        prop_assert!(Monitor::new(&[], &[]).scan(&rope, &regions, caret).is_empty());
    }

    #[test]
    fn taking_the_bedside_text_apart_and_back_keeps_the_agents_plan(
        plan in "[^#]{1,300}",
        goals in prop::collection::vec("[a-z ]{1,20}", 0..4),
        model in proptest::option::of("[a-z\\- ]{1,40}"),
    ) {
        let status = if goals.is_empty() {
            String::new()
        } else {
            format!("{STATUS_HEADING}\nActive goals ({}):\n{}", goals.len(), goals.iter().map(|g| format!("- {g}: 0%")).collect::<Vec<_>>().join("\n"))
        };
        let text = compose(&plan, &status, model.as_deref());
        prop_assert!(text.chars().count() <= MAX_NOTE_CHARS);
        let parts = split(&text);
        let expected_plan = if plan.trim().is_empty() { "No plan yet." } else { plan.trim() };
        prop_assert_eq!(&parts.plan, expected_plan);
        if !status.is_empty() {
            prop_assert_eq!(parts.status.as_deref(), Some(status.trim()));
        }
        // Composing again from the parts gives the same text (an update that changes nothing
        // makes no new version).
        let again = compose(&parts.plan, parts.status.as_deref().unwrap_or(""), parts.model_plan.as_deref());
        prop_assert_eq!(again, text);
        if status.is_empty() {
            prop_assert_eq!(parts.model_plan, None, "no plan without a status");
        }
    }
}
