//! Translations and their QA as data: a scene's translations by line, its lines as a
//! translator sees them, how a translation fits the UI's text boxes, and the QA findings
//! counted.
//!
//! A translation is the entity `<scene>:<line>` (lines numbered from 1, as
//! [`Placed::lines`](super::scenes::Placed::lines) gives them), with the line's `source` when
//! it was made and its `target`. A line is translated when its translation has a target.

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
    let mut by_line = BTreeMap::new();
    for t in of_scene {
        if let Some(line) = t.get("line").as_u64() {
            by_line.insert(line, t);
        }
    }
    by_line
}

/// Whether a translation has a target.
pub fn is_done(t: &Entity) -> bool {
    !is_empty_value(Some(t.get("target")))
}

/// A line of a scene as a translator sees it.
#[derive(Debug)]
pub struct Line<'b, 's> {
    /// Its number, from 1.
    pub number: u64,
    /// Its text in the manuscript now.
    pub source: &'s str,
    /// Its translation, if it has one with a target.
    pub translation: Option<&'b Entity>,
    /// Whether the translation was made from another text of the line.
    pub stale: bool,
}

/// A scene's lines with their translations.
#[derive(Debug)]
pub struct View<'b, 's> {
    /// Every line, in order.
    pub lines: Vec<Line<'b, 's>>,
    /// The numbers of the lines without a translation.
    pub untranslated: Vec<u64>,
    /// The line numbers with a saved translation that the scene does not have.
    pub orphans: Vec<u64>,
}

impl View<'_, '_> {
    /// How many lines are translated.
    pub fn translated(&self) -> usize {
        self.lines.len() - self.untranslated.len()
    }
}

/// The lines of scene `scene` (`lines[0]` is line 1) with its translations.
pub fn view<'b, 's>(bible: &'b Bible, scene: &str, lines: &'s [String]) -> View<'b, 's> {
    let translations = by_line(bible, scene);
    let line = |(number, source): (u64, &'s String)| {
        let translation = translations.get(&number).copied().filter(|t| is_done(t));
        let stale = translation.is_some_and(|t| t.text("source") != source);
        let source = source.as_str();
        Line {
            number,
            source,
            translation,
            stale,
        }
    };
    let lines: Vec<Line> = (1u64..).zip(lines).map(line).collect();
    let untranslated = lines.iter().filter(|l| l.translation.is_none());
    let untranslated = untranslated.map(|l| l.number).collect();
    let orphan = |n: &u64| *n == 0 || *n as usize > lines.len();
    let orphans = translations.keys().copied().filter(orphan).collect();
    View {
        lines,
        untranslated,
        orphans,
    }
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
    let (mut severities, mut checks) = (BTreeMap::new(), BTreeMap::new());
    for qa in bible.list(Kind::Qa) {
        let severity = Some(qa.text("severity")).filter(|s| !s.is_empty());
        *severities
            .entry(severity.unwrap_or("unspecified"))
            .or_default() += 1;
        *checks.entry(qa.text("check")).or_default() += 1;
    }
    [severities, checks]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bible::Actor;
    use serde_json::json;

    #[test]
    fn a_scene_is_viewed_line_by_line_with_its_translations() {
        let mut b = Bible::new();
        for (line, source, target) in [
            (1, "Uno.", "One."),
            (2, "Dos.", ""),
            (3, "Tres", "Three."),
            (9, "", "Gone."),
        ] {
            let fields = vec![
                ("scene".into(), json!("s1")),
                ("line".into(), json!(line)),
                ("source".into(), json!(source)),
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
        let lines = ["Uno.", "Dos.", "Tres.", "Cuatro."].map(String::from);
        let v = view(&b, "s1", &lines);
        let done = v.lines.iter().map(|l| l.translation.map(|t| t.id.as_str()));
        assert_eq!(
            done.collect::<Vec<_>>(),
            [Some("s1:1"), None, Some("s1:3"), None]
        );
        let stale = v.lines.iter().map(|l| l.stale);
        assert_eq!(stale.collect::<Vec<_>>(), [false, false, true, false]);
        assert_eq!((v.untranslated, v.orphans), (vec![2, 4], vec![9]));
        assert_eq!(view(&b, "s1", &lines).translated(), 2);
        assert_eq!(view(&b, "s2", &lines).untranslated, [1, 2, 3, 4]);
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
        let counts = |g: &BTreeMap<&str, usize>| -> Vec<(String, usize)> {
            g.iter().map(|(k, n)| (k.to_string(), *n)).collect()
        };
        let pairs = |v: &[(&str, usize)]| -> Vec<(String, usize)> {
            v.iter().map(|(k, n)| (k.to_string(), *n)).collect()
        };
        assert_eq!(
            counts(&by_severity),
            pairs(&[("error", 2), ("unspecified", 1)])
        );
        assert_eq!(counts(&by_check), pairs(&[("review", 1), ("style", 2)]));
    }
}
