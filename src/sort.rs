//! Collections keyed by strings: [`Groups`] (positions grouped by string), [`StrSet`] (a
//! sorted vector of strings), [`Counts`] (counts of strings), and [`lite_update`] (bulk
//! updates of a `VecMap`).

use std::collections::BTreeMap;

/// Apply `updates` to `map`: each a value to set, or `None` to remove the key; of equal keys
/// the last wins. A few updates are inserted one by one; more are sorted once and merged
/// with the map in one pass, O(n + k log k), where inserting each would move the map's tail
/// once per update (O(n·k): seconds for the thousands of records of a large project saved
/// or loaded whole, with keys that are random ids).
pub fn lite_update<K: Ord, V>(
    map: &mut crate::map::VecMap<K, V>,
    mut updates: Vec<(K, Option<V>)>,
) {
    if updates.len() <= 16 {
        for (key, value) in updates {
            match value {
                Some(value) => {
                    map.insert(key, value);
                }
                None => {
                    map.remove(&key);
                }
            }
        }
        return;
    }
    updates.sort_by(|a, b| a.0.cmp(&b.0));
    let mut merged = crate::map::VecMap::with_capacity(map.len() + updates.len());
    // The keys come in increasing order, so each is appended (an insert only if not).
    let mut push = |k: K, v: V| {
        if let Some((k, v)) = merged.try_append(k, v) {
            merged.insert(k, v);
        }
    };
    let mut old = std::mem::take(map).into_iter().peekable();
    let mut new = updates.into_iter().peekable();
    while let Some((key, value)) = new.next() {
        // Of equal keys in the (stably sorted) updates, only the last counts.
        if new.peek().is_some_and(|(next, _)| *next == key) {
            continue;
        }
        while let Some((k, v)) = old.next_if(|(k, _)| *k < key) {
            push(k, v);
        }
        old.next_if(|(k, _)| *k == key);
        if let Some(value) = value {
            push(key, value);
        }
    }
    for (k, v) in old {
        push(k, v);
    }
    *map = merged;
}

/// Strings grouped: each distinct string once, in sorted order, with the positions (in the
/// list it was built from) where it occurs, in order. What a `BTreeMap<&str, Vec<usize>>`
/// filled by pushing each position under its string holds; counts, the last position of
/// each string and groups of records by key all read it.
#[derive(Debug, Clone, Default)]
pub struct Groups<'a> {
    /// The positions, sorted by their string (stably: equal strings in position order).
    order: Vec<usize>,
    /// Each distinct string, sorted, with where its positions start in `order`.
    starts: Vec<(&'a str, usize)>,
}

impl<'a> Groups<'a> {
    /// Group the positions of `keys` by string.
    pub fn new(keys: &[&'a str]) -> Self {
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by(|&a, &b| keys[a].cmp(keys[b]));
        let mut starts: Vec<(&'a str, usize)> = Vec::new();
        for (at, &i) in order.iter().enumerate() {
            if starts.last().is_none_or(|(k, _)| *k != keys[i]) {
                starts.push((keys[i], at));
            }
        }
        Groups { order, starts }
    }

    /// How many distinct strings there are.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The number of `key`'s group (its rank among the distinct strings), if it occurs.
    pub fn find(&self, key: &str) -> Option<usize> {
        self.starts.binary_search_by(|(k, _)| (*k).cmp(key)).ok()
    }

    /// The positions where `key` occurs, in order (none when it does not).
    pub fn get(&self, key: &str) -> &[usize] {
        self.find(key).map_or(&[], |g| self.group(g).1)
    }

    /// Group number `g` (below [`Groups::len`]): its string and positions.
    pub fn group(&self, g: usize) -> (&'a str, &[usize]) {
        let end = self.starts.get(g + 1).map_or(self.order.len(), |s| s.1);
        let (key, start) = self.starts[g];
        (key, &self.order[start..end])
    }

    /// Every group, sorted by string.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, &[usize])> + '_ {
        (0..self.starts.len()).map(|g| self.group(g))
    }
}

/// A set of strings: each once, in sorted order. What a `BTreeSet<String>` holds, as one
/// sorted vector (one type for every set of strings, and no B-tree type of its own in the
/// wasm, about 11 KB). Lookups are binary searches; an insert or remove moves the strings
/// after it (12 bytes each on wasm32: a set of 10,000 moves at most 120 KB), and
/// [`Extend`] and [`FromIterator`] add many at once with one sort. Serialized as the
/// sorted array a `BTreeSet<String>` is; its `Debug` is a set's.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct StrSet(Vec<String>);

impl StrSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Where `s` is (`Err`: where it would go).
    fn find(&self, s: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|x| x.as_str().cmp(s))
    }

    /// Add `s`: false if it was there already (the set is unchanged).
    pub fn insert(&mut self, s: String) -> bool {
        match self.find(&s) {
            Ok(_) => false,
            Err(at) => {
                self.0.insert(at, s);
                true
            }
        }
    }

    /// Remove `s`: whether it was there.
    pub fn remove(&mut self, s: &str) -> bool {
        match self.find(s) {
            Ok(at) => {
                self.0.remove(at);
                true
            }
            Err(_) => false,
        }
    }

    /// Whether `s` is in the set.
    pub fn contains(&self, s: &str) -> bool {
        self.find(s).is_ok()
    }

    /// The strings, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, String> {
        self.0.iter()
    }

    /// How many strings there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Take out the first string.
    pub fn pop_first(&mut self) -> Option<String> {
        (!self.0.is_empty()).then(|| self.0.remove(0))
    }
}

impl Extend<String> for StrSet {
    /// Add many: appended, then sorted once and deduplicated.
    fn extend<I: IntoIterator<Item = String>>(&mut self, iter: I) {
        let len = self.0.len();
        self.0.extend(iter);
        if self.0.len() > len {
            self.0.sort();
            self.0.dedup();
        }
    }
}

impl From<Vec<String>> for StrSet {
    /// The set of `strings` (sorted once and deduplicated).
    fn from(mut strings: Vec<String>) -> Self {
        strings.sort();
        strings.dedup();
        Self(strings)
    }
}

impl FromIterator<String> for StrSet {
    fn from_iter<I: IntoIterator<Item = String>>(iter: I) -> Self {
        Self::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl IntoIterator for StrSet {
    type Item = String;
    type IntoIter = std::vec::IntoIter<String>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a StrSet {
    type Item = &'a String;
    type IntoIter = std::slice::Iter<'a, String>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl std::fmt::Debug for StrSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(&self.0).finish()
    }
}

impl serde::Serialize for StrSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for StrSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<String>::deserialize(d).map(|items| items.into_iter().collect())
    }
}

/// Counts of strings, sorted by string: what a `BTreeMap<String, usize>` of counts holds.
/// The counts are kept as JSON numbers in a `BTreeMap<String, Value>`, the map type of
/// serde_json's objects that the wasm has anyway, so counting adds no B-tree type of its
/// own (about 7 KB); lookups and inserts stay O(log n) for the tens of thousands of distinct
/// words of a manuscript.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts(BTreeMap<String, serde_json::Value>);

impl Counts {
    /// No counts.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add `n` to the count of `key` (copied only when it is new).
    pub fn add(&mut self, key: &str, n: usize) {
        match self.0.get_mut(key) {
            Some(count) => *count = (count_of(count) + n).into(),
            None => {
                self.0.insert(key.to_string(), n.into());
            }
        }
    }

    /// The count of `key` (0 when it has none).
    pub fn get(&self, key: &str) -> usize {
        self.0.get(key).map_or(0, count_of)
    }

    /// How many distinct strings there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A count kept by [`Counts`].
fn count_of(v: &serde_json::Value) -> usize {
    v.as_u64().unwrap_or(0) as usize
}

impl IntoIterator for Counts {
    type Item = (String, usize);
    type IntoIter = std::iter::Map<
        std::collections::btree_map::IntoIter<String, serde_json::Value>,
        fn((String, serde_json::Value)) -> (String, usize),
    >;
    /// The strings with their counts, sorted by string.
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter().map(|(k, v)| (k, count_of(&v)))
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn groups_hold_what_a_map_of_positions_holds(v in proptest::collection::vec("[a-d]{0,2}", 0..60)) {
            let keys: Vec<&str> = v.iter().map(String::as_str).collect();
            let mut std: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
            for (i, k) in keys.iter().enumerate() {
                std.entry(k).or_default().push(i);
            }
            let groups = Groups::new(&keys);
            let ours: Vec<(&str, Vec<usize>)> = groups.iter().map(|(k, at)| (k, at.to_vec())).collect();
            let std_pairs: Vec<(&str, Vec<usize>)> = std.clone().into_iter().collect();
            prop_assert_eq!(ours, std_pairs);
            prop_assert_eq!(groups.len(), std.len());
            for k in ["", "a", "ab", "dd", "e"] {
                prop_assert_eq!(groups.get(k), std.get(k).map_or(&[][..], |v| &v[..]));
            }
        }
    }

    #[derive(Debug, Clone)]
    enum SetOp {
        Insert(String),
        Remove(String),
        Extend(Vec<String>),
        PopFirst,
    }

    fn set_op() -> impl Strategy<Value = SetOp> {
        prop_oneof![
            "[a-d]{0,2}".prop_map(SetOp::Insert),
            "[a-d]{0,2}".prop_map(SetOp::Remove),
            proptest::collection::vec("[a-d]{0,2}", 0..6).prop_map(SetOp::Extend),
            Just(SetOp::PopFirst),
        ]
    }

    proptest! {
        /// A `StrSet` holds what a `BTreeSet<String>` holds after the same inserts,
        /// removes, extends and pops, answers the same, and serializes and prints the same.
        #[test]
        fn str_set_holds_what_a_btreeset_holds(ops in proptest::collection::vec(set_op(), 0..40)) {
            let mut ours = StrSet::new();
            let mut std: std::collections::BTreeSet<String> = Default::default();
            for op in ops {
                match op {
                    SetOp::Insert(s) => prop_assert_eq!(ours.insert(s.clone()), std.insert(s)),
                    SetOp::Remove(s) => prop_assert_eq!(ours.remove(&s), std.remove(&s)),
                    SetOp::Extend(v) => {
                        ours.extend(v.clone());
                        std.extend(v);
                    }
                    SetOp::PopFirst => prop_assert_eq!(ours.pop_first(), std.pop_first()),
                }
                prop_assert_eq!(ours.iter().collect::<Vec<_>>(), std.iter().collect::<Vec<_>>());
                prop_assert_eq!(ours.len(), std.len());
                prop_assert_eq!(ours.is_empty(), std.is_empty());
                for s in ["", "a", "ab", "dd", "e"] {
                    prop_assert_eq!(ours.contains(s), std.contains(s));
                }
            }
            prop_assert_eq!(format!("{ours:?}"), format!("{std:?}"));
            prop_assert_eq!(serde_json::to_value(&ours).unwrap(), serde_json::to_value(&std).unwrap());
            let back: StrSet = std.iter().rev().cloned().collect();
            prop_assert_eq!(back, ours);
        }
    }

    proptest! {
        /// `lite_update` leaves what a `BTreeMap` holds after the same inserts and removes,
        /// one by one, for few updates and for many (the merge), with repeated keys.
        #[test]
        fn lite_update_holds_what_a_btreemap_holds(
            start in proptest::collection::vec(("[a-f]{1,2}", 0u32..100), 0..40),
            updates in proptest::collection::vec(("[a-f]{1,2}", proptest::option::of(0u32..100)), 0..60),
        ) {
            let mut expected: BTreeMap<String, u32> = start.iter().cloned().collect();
            let mut map: crate::map::VecMap<String, u32> = start.into_iter().collect();
            for (k, v) in &updates {
                match v {
                    Some(v) => expected.insert(k.clone(), *v),
                    None => expected.remove(k),
                };
            }
            lite_update(&mut map, updates);
            let got: Vec<(String, u32)> = map.into_iter().collect();
            let want: Vec<(String, u32)> = expected.into_iter().collect();
            prop_assert_eq!(got, want);
        }

        /// `Counts` holds what a `BTreeMap<String, usize>` of counts holds after the same
        /// additions.
        #[test]
        fn counts_hold_what_a_map_of_counts_holds(adds in proptest::collection::vec(("[a-d]{0,2}", 0usize..1000), 0..60)) {
            let mut ours = Counts::new();
            let mut std: BTreeMap<String, usize> = BTreeMap::new();
            for (k, n) in adds {
                ours.add(&k, n);
                *std.entry(k).or_default() += n;
                prop_assert_eq!(ours.len(), std.len());
            }
            for k in ["", "a", "ab", "dd", "e"] {
                prop_assert_eq!(ours.get(k), std.get(k).copied().unwrap_or(0));
            }
            prop_assert_eq!(ours.is_empty(), std.is_empty());
            prop_assert_eq!(ours.into_iter().collect::<Vec<_>>(), std.into_iter().collect::<Vec<_>>());
        }
    }
}
