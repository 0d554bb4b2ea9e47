//! Translations and their QA as data: a scene's translations by line, how many of its lines
//! are translated, how a translation fits the UI's text boxes, and the QA findings counted.
//!
//! A translation is the entity `<scene>:<line>` (lines numbered from 1), with the line's
//! `source` when it was made and its `target`.

use std::collections::BTreeMap;

use super::{is_empty_value, Bible, Entity, Kind};

/// The id of a scene's translated line.
pub fn translation_id(scene: &str, line: u64) -> String {
    format!("{scene}:{line}")
}

/// The translations of a scene, by line.
pub fn by_line<'b>(bible: &'b Bible, scene: &str) -> BTreeMap<u64, &'b Entity> {
    let of_scene = bible
        .list(Kind::Translation)
        .filter(|t| t.text("scene") == scene);
    let by_line = |t: &'b Entity| Some((t.get("line").as_u64()?, t));
    of_scene.filter_map(by_line).collect()
}

/// Whether a translation has a target.
pub fn is_done(t: &Entity) -> bool {
    !is_empty_value(Some(t.get("target")))
}

/// How many of a scene's lines `first` to `last` have a translation with a target.
pub fn translated(bible: &Bible, scene: &str, first: u64, last: usize) -> usize {
    let translations = by_line(bible, scene);
    let lines = translations.range(first..);
    lines
        .filter(|(n, t)| **n as usize <= last && is_done(t))
        .count()
}

/// How a translation fits the UI: its display lines (its lines as written) against the longest
/// a line may be and how many lines a text box holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fit {
    /// Its longest display line, in chars.
    pub longest: usize,
    /// How many display lines it has.
    pub lines: usize,
    /// What does not fit, as clauses for a QA finding (none when it fits).
    pub problems: Vec<String>,
}

/// How `target` fits lines of at most `limit` chars, and `per_box` lines a box if given.
pub fn fit(target: &str, limit: u64, per_box: Option<u64>) -> Fit {
    let display: Vec<usize> = target.lines().map(|l| l.chars().count()).collect();
    let (longest, count) = (display.iter().copied().max().unwrap_or(0), display.len());
    let mut problems = Vec::new();
    for (i, n) in (1..).zip(&display).filter(|(_, n)| **n as u64 > limit) {
        let over = format!("{n} characters long, over the UI limit of {limit}");
        problems.push(match count {
            1 => format!("the translation is {over}"),
            _ => format!("display line {i} of the translation is {over}"),
        });
    }
    if let Some(per_box) = per_box.filter(|p| count as u64 > *p) {
        let lines = format!("{count} display lines, more than the {per_box} a text box holds");
        problems.push(format!("the translation has {lines}"));
    }
    Fit {
        longest,
        lines: count,
        problems,
    }
}

/// The QA findings counted by severity (`unspecified` when none is set) and by check.
pub fn qa_counts(bible: &Bible) -> [BTreeMap<&str, usize>; 2] {
    let (mut by_severity, mut by_check) = (BTreeMap::new(), BTreeMap::new());
    for qa in bible.list(Kind::Qa) {
        let severity = Some(qa.text("severity")).filter(|s| !s.is_empty());
        let severity = severity.unwrap_or("unspecified");
        *by_severity.entry(severity).or_insert(0) += 1;
        *by_check.entry(qa.text("check")).or_insert(0) += 1;
    }
    [by_severity, by_check]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bible::Actor;
    use serde_json::json;

    #[test]
    fn translations_are_counted_by_line() {
        let mut b = Bible::new();
        for (line, target) in [(1, "One."), (2, ""), (3, "Three."), (9, "Gone.")] {
            let fields = vec![
                ("scene".into(), json!("s1")),
                ("line".into(), json!(line)),
                ("target".into(), json!(target)),
            ];
            b.create(
                Kind::Translation,
                &translation_id("s1", line),
                fields,
                &Actor::Human,
                0,
            )
            .unwrap();
        }
        assert_eq!(
            by_line(&b, "s1").keys().copied().collect::<Vec<_>>(),
            [1, 2, 3, 9]
        );
        assert!(by_line(&b, "s2").is_empty());
        assert_eq!(translated(&b, "s1", 1, 3), 2);
        assert_eq!(translated(&b, "s1", 2, 9), 2);
        assert_eq!(b.get(Kind::Translation, "s1:3").map(is_done), Some(true));
    }

    #[test]
    fn a_translation_fits_or_says_what_does_not() {
        let fits = fit("Short.\nLines.", 10, Some(2));
        assert_eq!((fits.longest, fits.lines, fits.problems.len()), (6, 2, 0));
        let one = fit("Far too long a line.", 10, None);
        assert_eq!(
            one.problems,
            ["the translation is 20 characters long, over the UI limit of 10"]
        );
        let three = fit("a\nbbbbbbbbbbbb\nc", 10, Some(2));
        assert_eq!(
            three.problems,
            [
                "display line 2 of the translation is 12 characters long, over the UI limit of 10",
                "the translation has 3 display lines, more than the 2 a text box holds",
            ]
        );
    }

    #[test]
    fn qa_findings_are_counted() {
        let mut b = Bible::new();
        for (id, check, severity) in [
            ("a", "style", "error"),
            ("b", "style", ""),
            ("c", "review", "error"),
        ] {
            let fields = vec![
                ("check".into(), json!(check)),
                ("severity".into(), json!(severity)),
                ("message".into(), json!("m")),
            ];
            b.create(Kind::Qa, id, fields, &Actor::Human, 0).unwrap();
        }
        let [by_severity, by_check] = qa_counts(&b);
        assert_eq!(
            by_severity,
            BTreeMap::from([("error", 2), ("unspecified", 1)])
        );
        assert_eq!(by_check, BTreeMap::from([("review", 1), ("style", 2)]));
    }
}
