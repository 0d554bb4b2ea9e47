//! The terms of draftsmith's memory search: what [`tokenize`] makes of a text, and the
//! [`Dictionary`] that gives each term an id and counts the terms of a note's text and tags
//! (what `draftsmith::memory::search` builds its postings from).
//!
//! **Terms.** Lowercased, split on every character that is not alphanumeric (Unicode-aware:
//! `Café`, `海` and `Ωmega` are words), without a short list of English [`STOPWORDS`], and with
//! simple English plurals stripped (`lighthouses` → `lighthouse`, `stories` → `story`,
//! `boxes` → `box`).
//!
//! # Why a crate of its own
//! The release wasm is built for size (`opt-level = "z"`), which makes this loop about half as
//! fast as at full speed, and every note written is tokenized here while IndexedDB saves it.
//! Generic code is compiled in the crate that instantiates it, so this crate's functions are
//! not generic (a caller's own work on each term goes through a `&mut dyn FnMut`), and the
//! release profile builds it for speed (`opt-level = 3` in the workspace's `Cargo.toml`).
//! `cargo bench --bench memory` and `make bench-browser` time what it does.

use rustc_hash::FxHashMap;

/// The stopwords [`tokenize`] drops, sorted (for binary search); none is longer than five
/// bytes.
pub const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "d", "do", "for", "from", "had", "has",
    "have", "he", "her", "his", "i", "if", "in", "into", "is", "it", "its", "ll", "m", "of", "on",
    "or", "re", "s", "she", "so", "t", "that", "the", "their", "them", "then", "there", "they",
    "this", "to", "ve", "was", "we", "were", "what", "when", "which", "who", "will", "with", "you",
];

/// A word of at most seven bytes as one number: its bytes, the first highest, zeros after its
/// end, and its length in the lowest byte. So packed words order as the words do, are equal
/// only when the words are, and compare in one instruction.
const fn pack(word: &[u8]) -> u64 {
    let mut key = 0u64;
    let mut i = 0;
    while i < 7 {
        key <<= 8;
        if i < word.len() {
            key |= word[i] as u64;
        }
        i += 1;
    }
    (key << 8) | (word.len() as u64 & 0xff)
}

/// [`STOPWORDS`] packed (see [`pack`]), in the same (sorted) order.
const STOPWORD_KEYS: [u64; STOPWORDS.len()] = {
    let mut keys = [0u64; STOPWORDS.len()];
    let mut i = 0;
    while i < keys.len() {
        keys[i] = pack(STOPWORDS[i].as_bytes());
        i += 1;
    }
    keys
};

/// [`pack`] of a word of at most seven bytes, in one load: the bytes first, zeros after them,
/// the length last.
fn packed(word: &[u8]) -> u64 {
    let mut key = [0u8; 8];
    key[..word.len()].copy_from_slice(word);
    key[7] = word.len() as u8;
    u64::from_be_bytes(key)
}

/// Whether `term` is one of the [`STOPWORDS`].
pub fn is_stopword(term: &str) -> bool {
    term.len() <= 5
        && STOPWORD_KEYS
            .binary_search(&packed(term.as_bytes()))
            .is_ok()
}

/// Strip a simple English plural in place (ASCII words of four letters or more).
fn strip_plural(term: &mut String) {
    let len = term.len();
    if len < 4 || !term.bytes().all(|b| b.is_ascii_lowercase()) || !term.ends_with('s') {
        return;
    }
    if term.ends_with("ies") && len > 4 {
        term.truncate(len - 3);
        term.push('y');
    } else if ["sses", "xes", "ches", "shes"]
        .iter()
        .any(|end| term.ends_with(end))
    {
        term.truncate(len - 2);
    } else if !(term.ends_with("ss") || term.ends_with("us") || term.ends_with("is")) {
        term.truncate(len - 1);
    }
}

/// Call `f` with each term of `text`, in order, with repeats. `word` is scratch space.
/// Generic, so that the loops of this crate have `f` inlined; [`each_term`] is its entry for
/// other crates.
fn terms_of(text: &str, word: &mut String, mut f: impl FnMut(&str)) {
    let mut emit = |word: &mut String| {
        if !word.is_empty() {
            if !is_stopword(word) {
                strip_plural(word);
                f(word);
            }
            word.clear();
        }
    };
    word.clear();
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b.is_ascii_alphanumeric() {
            // A run of ASCII letters and digits at once.
            let end = bytes[i..]
                .iter()
                .position(|b| !b.is_ascii_alphanumeric())
                .map_or(bytes.len(), |n| i + n);
            let from = word.len();
            word.push_str(text.get(i..end).unwrap_or_default());
            if let Some(added) = word.get_mut(from..) {
                added.make_ascii_lowercase();
            }
            i = end;
        } else if b.is_ascii() {
            emit(word);
            i += 1;
        } else {
            let Some(c) = text.get(i..).and_then(|rest| rest.chars().next()) else {
                break;
            };
            if c.is_alphanumeric() {
                word.extend(c.to_lowercase());
            } else {
                emit(word);
            }
            i += c.len_utf8();
        }
    }
    emit(word);
}

/// Call `f` with each term of `text`, in order, with repeats. `word` is scratch space.
pub fn each_term(text: &str, word: &mut String, f: &mut dyn FnMut(&str)) {
    terms_of(text, word, f);
}

/// The terms of `text`, in order, with repeats.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    terms_of(text, &mut String::new(), |t| out.push(t.to_string()));
    out
}

/// Term → term id (ids count up from 0 in the order terms were first added), hashed with
/// rustc's FxHash (`rustc-hash`), fast for short keys that are not chosen by an adversary
/// (the terms come from the writer's own notes).
#[derive(Clone, Debug, Default)]
pub struct Dictionary {
    ids: FxHashMap<String, u32>,
}

impl Dictionary {
    /// How many terms it holds.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether it holds no term.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The id of `term`, if it holds it.
    pub fn get(&self, term: &str) -> Option<u32> {
        self.ids.get(term).copied()
    }

    /// How often each term of `text` and of `tags` occurs (a tag's terms counting
    /// `tag_weight` times each), appended to `out` as `(term id, weight)`, one pair per term,
    /// in term id order. A term not held yet is added: ids count up in the order terms are
    /// first seen. Returns the sum of the weights (the note's length, saturating). `word` is
    /// scratch space.
    ///
    /// Never inlined: inlined into a caller built for size, its loops would be optimized as
    /// that caller's.
    #[inline(never)]
    pub fn counts(
        &mut self,
        text: &str,
        tags: &[String],
        tag_weight: u32,
        word: &mut String,
        out: &mut Vec<(u32, u32)>,
    ) -> u32 {
        // Each occurrence as one number, its term id high and its weight low, so that sorting
        // plain integers groups a term's occurrences.
        let mut occurrences: Vec<u64> = Vec::with_capacity(text.len() / 5 + 8);
        let ids = &mut self.ids;
        let mut add = |term: &str, weight: u32| {
            let id = match ids.get(term) {
                Some(&id) => id,
                None => {
                    let next = u32::try_from(ids.len()).unwrap_or(u32::MAX);
                    ids.insert(term.to_string(), next);
                    next
                }
            };
            occurrences.push(u64::from(id) << 32 | u64::from(weight));
        };
        terms_of(text, word, |t| add(t, 1));
        for tag in tags {
            terms_of(tag, word, |t| add(t, tag_weight));
        }
        occurrences.sort_unstable();
        let mut length = 0u32;
        let from = out.len();
        for packed in occurrences {
            let (id, weight) = ((packed >> 32) as u32, packed as u32);
            length = length.saturating_add(weight);
            match out.get_mut(from..).and_then(|counted| counted.last_mut()) {
                Some((last, count)) if *last == id => *count = count.saturating_add(weight),
                _ => out.push((id, weight)),
            }
        }
        length
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_are_sorted_and_short() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOPWORD_KEYS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOPWORDS.iter().all(|w| w.len() <= 5));
        assert!(STOPWORDS.iter().all(|w| is_stopword(w)));
        for word in ["lamp", "theirs", "", "th", "thes", "hers", "a\0", "ä"] {
            assert!(!is_stopword(word), "{word:?}");
        }
        // The packing in one load is `pack`'s.
        for word in STOPWORDS.iter().chain(&["", "lamp", "a\0", "ä", "yours"]) {
            assert_eq!(packed(word.as_bytes()), pack(word.as_bytes()), "{word:?}");
        }
    }

    #[test]
    fn counts_number_terms_in_first_seen_order_and_weigh_tags() {
        let mut dictionary = Dictionary::default();
        let mut out = Vec::new();
        let mut word = String::new();
        let length = dictionary.counts(
            "The lamps, the lamp and the storm",
            &["Storm".to_string()],
            2,
            &mut word,
            &mut out,
        );
        assert_eq!(length, 3 + 2);
        assert_eq!(dictionary.len(), 2);
        assert_eq!(dictionary.get("lamp"), Some(0));
        assert_eq!(dictionary.get("storm"), Some(1));
        assert_eq!(dictionary.get("the"), None);
        assert_eq!(out, vec![(0, 2), (1, 3)]);
        // A second text keeps the ids and adds its new terms after them; its counts are
        // appended, never merged into what `out` held.
        assert_eq!(
            dictionary.counts("gull, storm, Gulls", &[], 2, &mut word, &mut out),
            3
        );
        assert_eq!(out, vec![(0, 2), (1, 3), (1, 1), (2, 2)]);
    }

    #[test]
    fn each_term_gives_what_tokenize_gives() {
        let text = "Café au lait, 海 Ωmega; the Lighthouses' stories";
        let mut seen = Vec::new();
        each_term(text, &mut String::new(), &mut |t| seen.push(t.to_string()));
        assert_eq!(seen, tokenize(text));
    }
}
