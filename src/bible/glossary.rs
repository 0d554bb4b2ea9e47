//! The glossary as data: finding entries by their terms, folding duplicates into one entry,
//! and which of its terms a translated line follows.
//!
//! Terms are compared trimmed and in any case.

use super::{Bible, Entity, Kind::Glossary};

/// Whether two terms are the same (trimmed, in any case).
pub fn same_term(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

/// The entries whose source term, translation or notes contain `query` (lowercase; an empty
/// one matches all), those whose term or translation is the query first, then by id.
pub fn search<'b>(bible: &'b Bible, query: &str) -> Vec<&'b Entity> {
    let has = |e: &Entity, f: &str| e.text(f).to_lowercase().contains(query);
    let found = |e: &&Entity| {
        query.is_empty() || ["term_src", "term_tgt", "notes"].iter().any(|f| has(e, f))
    };
    let mut found: Vec<&Entity> = bible.list(Glossary).filter(found).collect();
    let exact =
        |e: &Entity| same_term(e.text("term_src"), query) || same_term(e.text("term_tgt"), query);
    found.sort_by_key(|e| (!exact(e), e.id.clone()));
    found
}

/// The entry for the source term `term`, if there is one.
pub fn by_term<'b>(bible: &'b Bible, term: &str) -> Option<&'b Entity> {
    bible
        .list(Glossary)
        .find(|e| same_term(e.text("term_src"), term))
}

/// Append `part` to `notes` as its own paragraph, unless it is empty or already there.
fn add_note(notes: &mut String, part: &str) {
    let part = part.trim();
    if part.is_empty() || notes.contains(part) {
        return;
    }
    if !notes.is_empty() {
        notes.push_str("\n\n");
    }
    notes.push_str(part);
}

/// The translation and notes of `keep` once the entries `merged` are folded into it: it keeps
/// its translation (or takes the first one it lacked), and its notes gain, as paragraphs not
/// yet there, the others' other spellings (`Also written: …`), other translations (`Also
/// translated as: …`) and notes.
pub fn merged(keep: &Entity, merged: &[Entity]) -> (String, String) {
    let mut notes = keep.text("notes").trim().to_string();
    let mut term_tgt = keep.text("term_tgt").trim().to_string();
    for e in merged {
        let (src, tgt) = (e.text("term_src").trim(), e.text("term_tgt").trim());
        if !same_term(src, keep.text("term_src")) {
            add_note(&mut notes, &format!("Also written: {src}"));
        }
        if !tgt.is_empty() && term_tgt.is_empty() {
            term_tgt = tgt.to_string();
        } else if !tgt.is_empty() && !same_term(tgt, &term_tgt) {
            add_note(&mut notes, &format!("Also translated as: {tgt}"));
        }
        add_note(&mut notes, e.text("notes"));
    }
    (term_tgt, notes)
}

/// The entries with a translation whose source term occurs in the `source` line (in any
/// case), each with whether `target` holds that translation (in any case).
pub fn terms_in<'b>(bible: &'b Bible, source: &str, target: &str) -> Vec<(&'b Entity, bool)> {
    let (source, target) = (source.to_lowercase(), target.to_lowercase());
    let mut used = Vec::new();
    for e in bible.list(Glossary) {
        let (src, tgt) = (e.text("term_src").trim(), e.text("term_tgt").trim());
        if src.is_empty() || tgt.is_empty() || !source.contains(&src.to_lowercase()) {
            continue;
        }
        used.push((e, target.contains(&tgt.to_lowercase())));
    }
    used
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bible::Actor;
    use serde_json::{json, Value};

    fn glossary(entries: &[(&str, Value)]) -> Bible {
        let mut b = Bible::new();
        for (id, fields) in entries {
            let fields = fields.as_object().unwrap().clone().into_iter().collect();
            b.create(Glossary, id, fields, &Actor::Human, 0).unwrap();
        }
        b
    }

    #[test]
    fn entries_are_found_by_their_terms() {
        let b = glossary(&[
            ("wind", json!({"term_src": "Kaze", "term_tgt": "wind"})),
            (
                "a-gust",
                json!({"term_src": "Toppu", "notes": "a gust of wind"}),
            ),
        ]);
        let ids = |found: Vec<&Entity>| found.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(search(&b, "wind")), ["wind", "a-gust"]);
        assert_eq!(ids(search(&b, "")), ["a-gust", "wind"]);
        assert_eq!(by_term(&b, " kaze ").map(|e| e.id.as_str()), Some("wind"));
        let used = terms_in(&b, "Kaze blew. Toppu!", "The Wind blew.");
        assert_eq!(used.len(), 1);
        assert_eq!((used[0].0.id.as_str(), used[0].1), ("wind", true));
        assert!(!terms_in(&b, "kaze", "breeze")[0].1);
    }

    #[test]
    fn merging_keeps_a_translation_and_gathers_the_notes() {
        let b = glossary(&[
            ("keep", json!({"term_src": "Kaze", "notes": "Wind."})),
            (
                "dup",
                json!({"term_src": "kaze", "term_tgt": "wind", "notes": "Wind."}),
            ),
            (
                "alt",
                json!({"term_src": "Kaze-san", "term_tgt": "breeze", "notes": "Polite."}),
            ),
        ]);
        let others: Vec<Entity> = ["dup", "alt"]
            .map(|id| b.get(Glossary, id).unwrap().clone())
            .into();
        let (term_tgt, notes) = merged(b.get(Glossary, "keep").unwrap(), &others);
        assert_eq!(term_tgt, "wind");
        assert_eq!(
            notes,
            "Wind.\n\nAlso written: Kaze-san\n\nAlso translated as: breeze\n\nPolite."
        );
    }
}
