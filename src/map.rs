//! [`VecMap`]: a map kept as one vector of pairs sorted by key, for the crate's many small maps.
//!
//! It replaced `litemap` (whose `LiteMap` is the same idea), the largest crate left in the
//! wasm: its methods are generic over a storage trait, and each of the crate's 30 or so map
//! types got its own copy of each. Here the one thing that depends on the key type, the
//! bisection, has one copy per key type (it reads the keys through a `&dyn Fn`), and what
//! stays generic is a `Vec`'s insert or remove.

use std::borrow::Borrow;
use std::fmt;

/// A map in a vector of `(key, value)` pairs sorted by key, without duplicate keys.
#[derive(Clone, PartialEq, Eq)]
pub struct VecMap<K, V> {
    pairs: Vec<(K, V)>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        Self { pairs: Vec::new() }
    }
}

/// Written as the JSON object a `BTreeMap` with the same entries is.
impl<K: serde::Serialize, V: serde::Serialize> serde::Serialize for VecMap<K, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

/// Read as a `BTreeMap` is (a repeated key keeps its last value).
impl<'de, K: serde::Deserialize<'de> + Ord, V: serde::Deserialize<'de>> serde::Deserialize<'de>
    for VecMap<K, V>
{
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        std::collections::BTreeMap::<K, V>::deserialize(d).map(|map| map.into_iter().collect())
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for VecMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.pairs.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

/// Where `key` is among the `n` sorted keys that `at` gives (`Ok`), or where it would go
/// (`Err`). One copy per key type, whatever the values.
fn bisect<'a, Q: Ord + ?Sized>(
    n: usize,
    at: &dyn Fn(usize) -> &'a Q,
    key: &Q,
) -> Result<usize, usize> {
    let (mut low, mut high) = (0, n);
    while low < high {
        let mid = low + (high - low) / 2;
        match at(mid).cmp(key) {
            std::cmp::Ordering::Less => low = mid + 1,
            std::cmp::Ordering::Greater => high = mid,
            std::cmp::Ordering::Equal => return Ok(mid),
        }
    }
    Err(low)
}

impl<K, V> VecMap<K, V> {
    pub const fn new() -> Self {
        Self { pairs: Vec::new() }
    }

    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            pairs: Vec::with_capacity(capacity),
        }
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The pairs in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + ExactSizeIterator {
        self.pairs.iter().map(|(k, v)| (k, v))
    }

    pub fn iter_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = (&K, &mut V)> + ExactSizeIterator {
        self.pairs.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator {
        self.pairs.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator {
        self.pairs.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.pairs.iter_mut().map(|(_, v)| v)
    }

    /// Keep the pairs for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.pairs.retain_mut(|(k, v)| keep(k, v));
    }

    /// Where `key` is (`Ok`), or would go (`Err`), as an index in key order.
    pub fn find_index<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        bisect(self.pairs.len(), &|i| self.pairs[i].0.borrow(), key)
    }

    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        let i = self.find_index(key).ok()?;
        Some(&self.pairs[i].1)
    }

    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        let i = self.find_index(key).ok()?;
        Some(&mut self.pairs[i].1)
    }

    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find_index(key).is_ok()
    }

    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        let i = self.find_index(key).ok()?;
        Some(self.pairs.remove(i).1)
    }
}

impl<K: Ord, V> VecMap<K, V> {
    /// Put `value` under `key`; the value it replaces, if any.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find_index(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.pairs[i].1, value)),
            Err(i) => {
                self.pairs.insert(i, (key, value));
                None
            }
        }
    }

    /// Add a pair whose key comes after every key held, as a sorted source gives them; a
    /// key out of order is given back (nothing is added).
    pub fn try_append(&mut self, key: K, value: V) -> Option<(K, V)> {
        if self.pairs.last().is_some_and(|(last, _)| *last >= key) {
            return Some((key, value));
        }
        self.pairs.push((key, value));
        None
    }

    /// The value under `key`, put there by `make` first when there is none.
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find_index(&key) {
            Ok(i) => i,
            Err(i) => {
                self.pairs.insert(i, (key, make()));
                i
            }
        };
        &mut self.pairs[i].1
    }

    pub fn entry(&mut self, key: K) -> Entry<'_, K, V> {
        Entry { map: self, key }
    }
}

/// A place in a [`VecMap`], held or not (`map.entry(key).or_default()`).
pub struct Entry<'a, K, V> {
    map: &'a mut VecMap<K, V>,
    key: K,
}

impl<'a, K: Ord, V> Entry<'a, K, V> {
    pub fn or_insert_with(self, make: impl FnOnce() -> V) -> &'a mut V {
        self.map.get_or_insert_with(self.key, make)
    }

    pub fn or_insert(self, value: V) -> &'a mut V {
        self.map.get_or_insert_with(self.key, || value)
    }

    pub fn or_default(self) -> &'a mut V
    where
        V: Default,
    {
        self.map.get_or_insert_with(self.key, V::default)
    }
}

/// Each pair inserted in turn: of equal keys, the last value wins.
impl<K: Ord, V> FromIterator<(K, V)> for VecMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(pairs: I) -> Self {
        let mut map = Self::new();
        map.extend(pairs);
        map
    }
}

impl<K: Ord, V> Extend<(K, V)> for VecMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, pairs: I) {
        for (k, v) in pairs {
            self.insert(k, v);
        }
    }
}

impl<'a, K, V> IntoIterator for &'a VecMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.pairs.iter().map(|(k, v)| (k, v))
    }
}

impl<K, V> IntoIterator for VecMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.pairs.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn holds_what_a_btreemap_holds() {
        // A fixed pseudo-random walk of inserts, removes and lookups over a few keys.
        let mut ours = VecMap::new();
        let mut tree = BTreeMap::new();
        let mut x: u64 = 7;
        for step in 0..5_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = format!("k{}", (x >> 33) % 40);
            match (x >> 20) % 5 {
                0 | 1 => assert_eq!(ours.insert(key.clone(), step), tree.insert(key, step)),
                2 => assert_eq!(ours.remove(key.as_str()), tree.remove(key.as_str())),
                3 => {
                    *ours.entry(key.clone()).or_default() += 1;
                    *tree.entry(key).or_default() += 1;
                }
                _ => assert_eq!(ours.get(key.as_str()), tree.get(key.as_str())),
            }
            assert_eq!(ours.len(), tree.len());
        }
        assert!(ours.iter().eq(tree.iter()));
        assert!(ours.clone().into_iter().eq(tree.clone()));
        ours.retain(|_, v| *v % 2 == 0);
        tree.retain(|_, v| *v % 2 == 0);
        assert!(ours.iter().eq(tree.iter()));
        assert_eq!(ours.iter().next(), tree.first_key_value());
        assert_eq!(ours.iter().next_back(), tree.last_key_value());
    }

    #[test]
    fn appends_only_in_order() {
        let mut map = VecMap::new();
        assert_eq!(map.try_append(1, 'a'), None);
        assert_eq!(map.try_append(3, 'c'), None);
        assert_eq!(map.try_append(2, 'b'), Some((2, 'b')));
        assert_eq!(map.try_append(3, 'x'), Some((3, 'x')));
        assert!(map.keys().copied().eq([1, 3]));
        let collected: VecMap<u8, char> = [(3, 'c'), (1, 'a'), (3, 'z'), (2, 'b')]
            .into_iter()
            .collect();
        assert!(collected.iter().eq([(&1, &'a'), (&2, &'b'), (&3, &'z')]));
        assert!(!collected.contains_key(&4));
        assert_eq!(format!("{collected:?}"), "{1: 'a', 2: 'b', 3: 'z'}");
    }
}
