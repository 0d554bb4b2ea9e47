//! [`lite_update`]: bulk updates of a `VecMap`.

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

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

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

    }
}
