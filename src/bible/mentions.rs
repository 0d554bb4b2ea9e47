//! Mention detection: where the names and aliases of the bible's characters and locations
//! appear in a text, as whole words.

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
    while let Some(found) = text[search..].find(name) {
        let start_byte = search + found;
        let end_byte = start_byte + name.len();
        let before = text[..start_byte].chars().next_back();
        let after = text[end_byte..].chars().next();
        let bounded = before.is_none_or(|c| !is_word(c)) && after.is_none_or(|c| !is_word(c));
        if bounded {
            let start = text[..start_byte].chars().count();
            out.push((start, start + name_chars));
        }
        search = start_byte + name.chars().next().map_or(1, char::len_utf8);
    }
    out
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
    }
}
