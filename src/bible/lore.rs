//! Lore search: which characters, locations, routes and scenes a few words are about.
//!
//! A query's *terms* are its lowercase words, without duplicates, without stop words (unless
//! it has no other) and at most 32. A term matches a word of a field when it equals it or, for
//! a term of 3+ letters, begins it ("sail" matches "sailor"). An entity's score adds, for each
//! term, 2 when it matches a word of the id, and for each field it searches the field's weight
//! (5 for a name, 1 otherwise) plus the number of matching words (at most 5), and 5 for a
//! field holding the whole query when it has several words. Hits are ranked by how many terms
//! they match, then by score, then by kind (characters, locations, routes, scenes), then id.

use std::cmp::Reverse;

use serde_json::Value;

use super::{Bible, Entity, Kind, Kind::*};

/// Words a lore query ignores (unless it has no other).
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "has",
    "have", "how", "in", "is", "it", "its", "of", "on", "or", "the", "to", "was", "what", "when",
    "where", "which", "who", "whom", "why", "with",
];

/// The kinds a search covers, in the order ties are ranked, with the fields it searches in
/// each (the names first: they count most).
#[rustfmt::skip]
const LORE: [(Kind, &[&str], &[&str]); 4] = [
    (Character, &["name_src", "name_tgt", "aliases"], &["pronouns", "notes"]),
    (Location, &["name_src", "name_tgt"], &["description"]),
    (Route, &[], &["synopsis", "primary_characters"]),
    (Scene, &[], &["summary", "tags", "primary_characters", "locations"]),
];

/// An entity a search found.
#[derive(Debug)]
pub struct Hit<'a> {
    /// The entity.
    pub entity: &'a Entity,
    /// The terms it matched, in the order they were found.
    pub matched: Vec<String>,
    /// Its score.
    pub score: u64,
    /// The field that scored most, if any did (it may have matched by id only).
    pub field: Option<&'static str>,
    /// Its kind's place in the ranking of ties.
    rank: usize,
}

/// Lowercase words of a text.
fn words(text: &str) -> Vec<String> {
    let split = |c: char| !c.is_alphanumeric();
    let words = text.split(split).filter(|w| !w.is_empty());
    words.map(str::to_lowercase).collect()
}

/// Whether a query term matches a word: equal, or (for terms of 3+ chars) a prefix of it
/// ("sail" matches "sailor").
fn term_matches(term: &str, word: &str) -> bool {
    word == term || (term.chars().count() >= 3 && word.starts_with(term))
}

/// The terms of a query (none when it has no words).
pub fn terms(query: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for w in words(query) {
        if !terms.contains(&w) {
            terms.push(w);
        }
    }
    if terms
        .iter()
        .any(|t| STOP_WORDS.binary_search(&t.as_str()).is_err())
    {
        terms.retain(|t| STOP_WORDS.binary_search(&t.as_str()).is_err());
    }
    terms.truncate(32);
    terms
}

/// How an entity matches `terms` (and the whole `phrase`), if it does.
fn hit<'a>(rank: usize, e: &'a Entity, terms: &[String], phrase: &str) -> Option<Hit<'a>> {
    let (mut matched, mut score, mut best) = (Vec::<String>::new(), 0u64, (0u64, None));
    let id_words = words(&e.id);
    for term in terms {
        if id_words.iter().any(|w| term_matches(term, w)) && !matched.contains(term) {
            matched.push(term.clone());
            score += 2;
        }
    }
    let (_, names, others) = LORE[rank];
    let names = names.iter().map(|f| (*f, 5));
    let fields = names.chain(others.iter().map(|f| (*f, 1)));
    for (field, weight) in fields {
        let text = match e.get(field) {
            Value::String(s) => s.clone(),
            Value::Array(items) => {
                let items: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
                items.join(", ")
            }
            _ => continue,
        };
        let (ws, mut field_score) = (words(&text), 0u64);
        for term in terms {
            let n = ws.iter().filter(|w| term_matches(term, w)).count() as u64;
            if n > 0 && !matched.contains(term) {
                matched.push(term.clone());
            }
            field_score += if n > 0 { weight + n.min(5) } else { 0 };
        }
        let phrase_found = phrase.contains(' ') && text.to_lowercase().contains(phrase);
        if !text.is_empty() && phrase_found {
            field_score += 5;
        }
        score += field_score;
        if field_score > best.0 {
            best = (field_score, Some(field));
        }
    }
    let (entity, field) = (e, best.1);
    let found = Hit {
        entity,
        matched,
        score,
        field,
        rank,
    };
    (!found.matched.is_empty()).then_some(found)
}

/// Every entity matching the terms of `query` ([`terms`]), best first.
pub fn search<'a>(bible: &'a Bible, query: &str) -> Vec<Hit<'a>> {
    let (terms, phrase) = (terms(query), query.trim().to_lowercase());
    let mut hits: Vec<Hit> = Vec::new();
    for (rank, (kind, ..)) in LORE.iter().enumerate() {
        let found = |e| hit(rank, e, &terms, &phrase);
        hits.extend(bible.list(*kind).filter_map(found));
    }
    // Most terms matched first, then the best score, the kind's rank and the id.
    hits.sort_by_key(|h| {
        (
            Reverse((h.matched.len(), h.score)),
            h.rank,
            h.entity.id.clone(),
        )
    });
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bible::Actor;
    use serde_json::json;

    /// The list searched by `binary_search` is sorted, without repeats.
    #[test]
    fn searched_word_list_is_sorted() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]), "{STOP_WORDS:?}");
    }

    #[test]
    fn hits_are_ranked_by_terms_then_score_then_kind() {
        let mut b = Bible::new();
        let mut add = |kind, id: &str, fields: Value| {
            let fields = fields.as_object().unwrap().clone().into_iter().collect();
            b.create(kind, id, fields, &Actor::Human, 0).unwrap();
        };
        add(Character, "mara", json!({"name_src": "Mara Vell"}));
        let description = "Mara's lighthouse";
        add(
            Location,
            "lh",
            json!({"name_src": "Lamp", "description": description}),
        );
        add(Route, "r1", json!({"synopsis": "The sailors leave"}));
        assert_eq!(
            terms("Who owns the the lighthouse?"),
            ["owns", "lighthouse"]
        );
        assert_eq!(terms("who is it"), ["who", "is", "it"]);
        assert!(terms(" ?! ").is_empty());

        let hits = search(&b, "mara lighthouse");
        let ids: Vec<&str> = hits.iter().map(|h| h.entity.id.as_str()).collect();
        assert_eq!(ids, ["lh", "mara"]);
        assert_eq!(hits[0].matched, ["mara", "lighthouse"]);
        // "mara" matches the id (2) and the name (5 + 1 word).
        assert_eq!((hits[1].field, hits[1].score), (Some("name_src"), 8));
        // A prefix of 3+ letters matches; a shorter one does not.
        assert_eq!(search(&b, "sail")[0].entity.id, "r1");
        assert!(search(&b, "sa").is_empty());
    }
}
