//! Word lists as one string each.
//!
//! A `&[&str]` list costs the wasm a pointer and a length (8 bytes, which gzip shrinks little)
//! for each word, besides the word. A [`Words`] list is the words in one string, each followed
//! by a space, written with [`words!`]: the same source, no table. A sorted list is searched by
//! bisecting the string.

use std::cmp::Ordering;

/// A list of words (none with a space in it), as one string with a space after each word.
/// [`Words::contains`] needs the list sorted (by bytes, as `str` sorts); the tests check each
/// list that is searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Words(pub &'static str);

/// A [`Words`] list from string literals: `words!["a", "b"]` is `Words("a b ")`.
macro_rules! words {
    ($($word:literal),* $(,)?) => {
        $crate::words::Words(concat!($($word, " "),*))
    };
}
pub(crate) use words;

impl Words {
    /// The words, in order.
    pub fn iter(self) -> impl Iterator<Item = &'static str> {
        self.0.split_terminator(' ')
    }

    /// Where `word` is in the list (by a walk, for lists in an order of their own).
    pub fn position(self, word: &str) -> Option<usize> {
        self.iter().position(|w| w == word)
    }

    /// Whether the sorted list has `word`: a binary search over the string (each probe moves
    /// to the start of the word it falls in).
    pub fn contains(self, word: &str) -> bool {
        let s = self.0.as_bytes();
        // `lo` and `hi` are word starts (or the end); the word is in `lo..hi` if anywhere.
        let (mut lo, mut hi) = (0, s.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let start = s[lo..mid]
                .iter()
                .rposition(|&b| b == b' ')
                .map_or(lo, |at| lo + at + 1);
            let end = s[start..]
                .iter()
                .position(|&b| b == b' ')
                .map_or(s.len(), |at| start + at);
            match s[start..end].cmp(word.as_bytes()) {
                Ordering::Equal => return true,
                Ordering::Less => lo = end + 1,
                Ordering::Greater => hi = start,
            }
        }
        false
    }

    /// Whether the words are sorted, without repeats (what [`Words::contains`] needs; each
    /// module's tests check its searched lists).
    #[cfg(test)]
    pub fn is_sorted(self) -> bool {
        let words: Vec<&str> = self.iter().collect();
        words.windows(2).all(|w| w[0] < w[1])
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn words_are_listed_in_order() {
        let list = words!["a", "bc", "d"];
        assert_eq!(list, Words("a bc d "));
        assert_eq!(list.iter().collect::<Vec<_>>(), ["a", "bc", "d"]);
        assert_eq!(
            (list.iter().count(), list.position("d"), list.position("x")),
            (3, Some(2), None)
        );
        assert!(list.is_sorted() && !words!["b", "a"].is_sorted() && !words!["a", "a"].is_sorted());
        let empty = words![];
        assert!(empty == Words("") && empty.iter().count() == 0);
        assert!(!empty.contains("") && !empty.contains("a"));
    }

    proptest! {
        /// The bisection finds exactly the words a sorted `&[&str]` has.
        #[test]
        fn contains_is_a_binary_search(
            mut list in proptest::collection::vec("[a-cé]{1,4}", 0..40),
            probes in proptest::collection::vec("[a-cé]{0,5}", 0..40),
        ) {
            list.sort();
            list.dedup();
            let joined: String = list.iter().map(|w| format!("{w} ")).collect();
            let words = Words(Box::leak(joined.into_boxed_str()));
            prop_assert!(words.is_sorted());
            for w in list.iter().chain(&probes) {
                prop_assert_eq!(words.contains(w), list.binary_search(w).is_ok(), "{}", w);
            }
        }
    }
}
