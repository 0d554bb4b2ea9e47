//! Names: where the names and aliases of the bible's characters and locations appear in a
//! text, as whole words ([`detect`]); and which entities a name given by a model means
//! ([`named`]), or comes closest to ([`closest_ids`]).

use super::{Bible, Entity, Kind};

/// One mention of an entity in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// The entity's kind (character or location).
    pub kind: Kind,
    /// The entity's id.
    pub id: String,
    /// The name or alias found.
    pub name: String,
    /// Start, in chars.
    pub start: usize,
    /// End, in chars (exclusive).
    pub end: usize,
}

/// The names an entity is known by: its source name, its target name and its aliases,
/// longest first, without duplicates or empty ones.
pub fn names_of(entity: &Entity) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        let s = s.trim();
        if !s.is_empty() && !names.iter().any(|n| n == s) {
            names.push(s.to_string());
        }
    };
    push(entity.text("name_src"));
    push(entity.text("name_tgt"));
    for alias in entity.list("aliases") {
        push(alias);
    }
    names.sort_by_key(|n| std::cmp::Reverse(n.chars().count()));
    names
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whole-word occurrences of `name` in `text` (case-sensitive), as char ranges.
pub fn find_word(text: &str, name: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    if name.is_empty() {
        return out;
    }
    let name_chars = name.chars().count();
    let mut search = 0;
    // Char offsets are counted incrementally: (byte, chars before it).
    let mut counted = (0usize, 0usize);
    while let Some(found) = text[search..].find(name) {
        let start_byte = search + found;
        if bounded(text, start_byte, start_byte + name.len()) {
            let start = counted.1 + text[counted.0..start_byte].chars().count();
            counted = (start_byte, start);
            out.push((start, start + name_chars));
        }
        search = start_byte + name.chars().next().map_or(1, char::len_utf8);
    }
    out
}

/// Whether `name` occurs in `text` as a whole word (case-sensitive); stops at the first.
pub fn contains_word(text: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let mut search = 0;
    while let Some(found) = text[search..].find(name) {
        let start_byte = search + found;
        if bounded(text, start_byte, start_byte + name.len()) {
            return true;
        }
        search = start_byte + name.chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// Whether the byte range `start..end` of `text` is not inside a longer word.
fn bounded(text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    before.is_none_or(|c| !is_word(c)) && after.is_none_or(|c| !is_word(c))
}

/// Every mention of every character and location of `bible` in `text`, in text order. Where
/// names overlap ("Mara" inside "Mara Vell"), the longer one wins.
pub fn detect(bible: &Bible, text: &str) -> Vec<Mention> {
    let mut found: Vec<Mention> = Vec::new();
    for kind in [Kind::Character, Kind::Location] {
        for entity in bible.list(kind) {
            for name in names_of(entity) {
                for (start, end) in find_word(text, &name) {
                    found.push(Mention {
                        kind,
                        id: entity.id.clone(),
                        name: name.clone(),
                        start,
                        end,
                    });
                }
            }
        }
    }
    found.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut out: Vec<Mention> = Vec::new();
    for m in found {
        if out.last().is_some_and(|last| m.start < last.end) {
            continue;
        }
        out.push(m);
    }
    out
}

/// The mentions of one entity in `text`, in text order (as [`detect`] attributes them: where
/// a longer name of another entity covers a name, the mention is the other entity's).
pub fn of_entity(bible: &Bible, text: &str, kind: Kind, id: &str) -> Vec<Mention> {
    detect(bible, text)
        .into_iter()
        .filter(|m| m.kind == kind && m.id == id)
        .collect()
}

/// Ids of the entities of `kind` mentioned in `text`, in order of first mention.
pub fn mentioned_ids(bible: &Bible, text: &str, kind: Kind) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for m in detect(bible, text) {
        if m.kind == kind && !ids.contains(&m.id) {
            ids.push(m.id);
        }
    }
    ids
}

/// The entities of `kind` that `query` names: those whose id it is, or (`by_names`) one of
/// whose names or aliases it is, in any case.
pub fn named<'b>(bible: &'b Bible, kind: Kind, query: &str, by_names: bool) -> Vec<&'b Entity> {
    let lower = query.to_lowercase();
    let is = |n: &str| n.to_lowercase() == lower;
    let found = |e: &&Entity| is(&e.id) || by_names && names_of(e).iter().any(|n| is(n));
    bible.list(kind).filter(found).collect()
}

/// The ids of at most 3 entities of `kind` whose id (or, `by_names`, one of whose names or
/// aliases) is closest to `query`, closest first; none for a query over 200 chars.
pub fn closest_ids<'b>(bible: &'b Bible, kind: Kind, query: &str, by_names: bool) -> Vec<&'b str> {
    if query.chars().count() > 200 {
        return Vec::new();
    }
    // Candidates: ids and names, each mapped back to its id.
    let mut candidates: Vec<(String, &str)> = Vec::new();
    for e in bible.list(kind) {
        candidates.push((e.id.clone(), &e.id));
        if by_names {
            candidates.extend(names_of(e).into_iter().map(|n| (n, e.id.as_str())));
        }
    }
    let names = candidates.iter().map(|c| c.0.as_str());
    let mut ids: Vec<&str> = Vec::new();
    for name in crate::names::closest(query, names, 6) {
        let found = candidates.iter().find(|(n, _)| n == name);
        let id = found.map(|c| c.1).filter(|id| !ids.contains(id));
        ids.extend(id);
    }
    ids.truncate(3);
    ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bible::Actor;
    use serde_json::json;

    #[test]
    fn whole_words_longest_first() {
        let mut b = Bible::new();
        b.create(
            Kind::Character,
            "mara",
            vec![
                ("name_src".into(), json!("Mara Vell")),
                ("aliases".into(), json!(["Mara"])),
            ],
            &Actor::Human,
            0,
        )
        .unwrap();
        let text = "Mara Vell met Maran. Then Mara left — «Mara»";
        let m = detect(&b, text);
        assert_eq!(
            m.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(),
            ["Mara Vell", "Mara", "Mara"]
        );
        assert_eq!((m[0].start, m[0].end), (0, 9));
        assert_eq!(find_word("é Mara", "Mara"), vec![(2, 6)]);
        assert_eq!(
            find_word("Mara, é Mara; Maran Mara", "Mara"),
            vec![(0, 4), (8, 12), (20, 24)]
        );
        assert!(contains_word("so Mara.", "Mara") && !contains_word("Maran", "Mara"));
        assert_eq!(mentioned_ids(&b, text, Kind::Character), ["mara"]);
        assert_eq!(of_entity(&b, text, Kind::Character, "mara").len(), 3);
    }

    #[test]
    fn names_find_entities_by_id_name_or_alias() {
        let mut b = Bible::new();
        for (id, name, alias) in [("mara", "Mara Vell", "Captain"), ("tom", "Tom", "Captain")] {
            let fields = vec![
                ("name_src".into(), json!(name)),
                ("aliases".into(), json!([alias])),
            ];
            b.create(Kind::Character, id, fields, &Actor::Human, 0)
                .unwrap();
        }
        let ids = |found: Vec<&Entity>| found.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(named(&b, Kind::Character, "MARA vell", true)), ["mara"]);
        assert_eq!(ids(named(&b, Kind::Character, "captain", true)).len(), 2);
        assert!(named(&b, Kind::Character, "Mara Vell", false).is_empty());
        assert_eq!(ids(named(&b, Kind::Character, "TOM", false)), ["tom"]);
        assert_eq!(closest_ids(&b, Kind::Character, "Mara Vel", true), ["mara"]);
        assert_eq!(closest_ids(&b, Kind::Character, "mra", false), ["mara"]);
        assert!(closest_ids(&b, Kind::Character, &"m".repeat(201), true).is_empty());
    }
}
