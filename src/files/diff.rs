//! A small change set between two texts: what writing a whole chapter file changes.
//!
//! The common prefix and suffix are kept (retained); the middle is compared line by line
//! (equal ends, then lines that occur once on each side as anchors, as in patience diff,
//! then a longest common subsequence of what is left between anchors when that part is
//! small enough: at most [`MAX_CELLS`] line pairs), and each changed run of lines is
//! trimmed again to the chars that differ. So an agent that rewrites one sentence of a chapter file changes that
//! sentence only, and the writer's later typing elsewhere, undo and origin-scoped undo all
//! work as for any other edit. A middle too large to compare becomes one replacement.

use crate::project::changeset::ChangeSet;

/// The largest longest-common-subsequence table made (old lines × new lines of a part with
/// no unique line left).
pub const MAX_CELLS: usize = 1_000_000;

/// A change set that turns `old` into `new` (positions in chars).
pub fn diff(old: &str, new: &str) -> ChangeSet {
    let mut change = ChangeSet::default();
    let old_chars: Vec<char> = old.chars().collect();
    let new_chars: Vec<char> = new.chars().collect();
    let prefix = common_prefix(&old_chars, &new_chars);
    let suffix = common_suffix(&old_chars[prefix..], &new_chars[prefix..]);
    change.retain(prefix);
    let old_mid = &old_chars[prefix..old_chars.len() - suffix];
    let new_mid = &new_chars[prefix..new_chars.len() - suffix];
    lines_diff(&mut change, old_mid, new_mid);
    change.retain(suffix);
    change
}

fn common_prefix(a: &[char], b: &[char]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

fn common_suffix(a: &[char], b: &[char]) -> usize {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// Split chars into lines, each keeping its newline.
fn lines(chars: &[char]) -> Vec<&[char]> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in chars.iter().enumerate() {
        if *c == '\n' {
            out.push(&chars[start..=i]);
            start = i + 1;
        }
    }
    if start < chars.len() {
        out.push(&chars[start..]);
    }
    out
}

/// Replace `old` with `new` as one trimmed replacement.
fn replace(change: &mut ChangeSet, old: &[char], new: &[char]) {
    let prefix = common_prefix(old, new);
    let suffix = common_suffix(&old[prefix..], &new[prefix..]);
    change.retain(prefix);
    let inserted: String = new[prefix..new.len() - suffix].iter().collect();
    change.insert(&inserted);
    change.delete(old.len() - prefix - suffix);
    change.retain(suffix);
}

fn lines_diff(change: &mut ChangeSet, old: &[char], new: &[char]) {
    let a = lines(old);
    let b = lines(new);
    // Lines as small ids (equal lines, equal ids), so each comparison is one integer
    // comparison, however long the lines: the lines of both sides sorted by content, each
    // run of equal lines one id.
    let all: Vec<&[char]> = a.iter().chain(&b).copied().collect();
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by(|&x, &y| all[x].cmp(all[y]));
    let mut ids = vec![0u32; all.len()];
    let mut distinct = 0;
    for (k, &at) in order.iter().enumerate() {
        if k > 0 && all[order[k - 1]] != all[at] {
            distinct += 1;
        }
        ids[at] = distinct;
    }
    let (ia, ib) = ids.split_at(a.len());
    let pairs = align(ia, ib, distinct as usize + 1);
    let (mut i, mut j) = (0, 0);
    let run = |from: &[&[char]]| -> Vec<char> { from.concat() };
    for (pi, pj) in pairs.into_iter().chain(std::iter::once((a.len(), b.len()))) {
        if pi > i || pj > j {
            replace(change, &run(&a[i..pi]), &run(&b[j..pj]));
        }
        if pi < a.len() {
            change.retain(a[pi].len());
        }
        (i, j) = (pi + 1, pj + 1);
    }
}

/// The lines kept between two texts (as line ids), as `(old index, new index)` pairs in
/// order: equal ends, then lines that occur once on each side in the same order (patience
/// anchors), recursively between them; where no anchor is left, a longest common
/// subsequence when the part is small enough (at most [`MAX_CELLS`] line pairs), else
/// nothing (the part is replaced whole).
fn align(ia: &[u32], ib: &[u32], ids: usize) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    // Per line id, in the part at hand: (count in old, count in new, position in old,
    // position in new); reset after each part.
    let mut seen = vec![(0u32, 0u32, 0usize, 0usize); ids];
    let mut todo = vec![(0, ia.len(), 0, ib.len())];
    while let Some((mut a0, mut a1, mut b0, mut b1)) = todo.pop() {
        while a0 < a1 && b0 < b1 && ia[a0] == ib[b0] {
            pairs.push((a0, b0));
            a0 += 1;
            b0 += 1;
        }
        while a0 < a1 && b0 < b1 && ia[a1 - 1] == ib[b1 - 1] {
            a1 -= 1;
            b1 -= 1;
            pairs.push((a1, b1));
        }
        if a0 == a1 || b0 == b1 {
            continue;
        }
        for (i, &id) in ia.iter().enumerate().take(a1).skip(a0) {
            let e = &mut seen[id as usize];
            e.0 += 1;
            e.2 = i;
        }
        for (j, &id) in ib.iter().enumerate().take(b1).skip(b0) {
            let e = &mut seen[id as usize];
            e.1 += 1;
            e.3 = j;
        }
        // Each id once: the unique ones are those of the old side seen once on each side.
        let mut unique: Vec<(usize, usize)> = ia[a0..a1]
            .iter()
            .map(|&id| seen[id as usize])
            .filter(|c| c.0 == 1 && c.1 == 1)
            .map(|c| (c.2, c.3))
            .collect();
        for &id in ia[a0..a1].iter().chain(&ib[b0..b1]) {
            seen[id as usize] = (0, 0, 0, 0);
        }
        if !unique.is_empty() {
            unique.sort();
            let (mut pa, mut pb) = (a0, b0);
            for (i, j) in increasing(&unique) {
                todo.push((pa, i, pb, j));
                pairs.push((i, j));
                (pa, pb) = (i + 1, j + 1);
            }
            todo.push((pa, a1, pb, b1));
        } else if (a1 - a0).saturating_mul(b1 - b0) <= MAX_CELLS {
            lcs(&ia[a0..a1], &ib[b0..b1], a0, b0, &mut pairs);
        }
    }
    pairs.sort();
    pairs
}

/// The longest run of `pairs` (sorted by their first) whose seconds increase too.
fn increasing(pairs: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // tails[k]: index in `pairs` of the smallest last second of an increasing run of k + 1.
    let mut tails: Vec<usize> = Vec::new();
    let mut before: Vec<Option<usize>> = vec![None; pairs.len()];
    for (k, (_, second)) in pairs.iter().enumerate() {
        let at = tails.partition_point(|&t| pairs[t].1 < *second);
        before[k] = at.checked_sub(1).map(|p| tails[p]);
        if at == tails.len() {
            tails.push(k);
        } else {
            tails[at] = k;
        }
    }
    let mut out = Vec::with_capacity(tails.len());
    let mut next = tails.last().copied();
    while let Some(k) = next {
        out.push(pairs[k]);
        next = before[k];
    }
    out.reverse();
    out
}

/// A longest common subsequence of two small runs of line ids, as pairs offset by
/// `(a0, b0)`.
fn lcs(a: &[u32], b: &[u32], a0: usize, b0: usize, pairs: &mut Vec<(usize, usize)>) {
    let (n, m) = (a.len(), b.len());
    let width = m + 1;
    // table[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut table = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[i * width + j] = if a[i] == b[j] {
                table[(i + 1) * width + j + 1] + 1
            } else {
                table[(i + 1) * width + j].max(table[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if a[i] == b[j] {
            pairs.push((a0 + i, b0 + j));
            i += 1;
            j += 1;
        } else if table[i * width + j + 1] >= table[(i + 1) * width + j] {
            j += 1;
        } else {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::changeset::Op;

    fn check(old: &str, new: &str) -> ChangeSet {
        let change = diff(old, new);
        assert_eq!(change.apply_str(old).unwrap(), new, "{old:?} -> {new:?}");
        assert_eq!(change.len_before(), old.chars().count());
        change
    }

    #[test]
    fn changes_only_what_differs() {
        let old = "One.\nTwo.\nThree.\nFour.\nFive.\n";
        let new = "One.\nTwo!\nThree.\nFour.\nFive, six.\n";
        let change = check(old, new);
        let inserts: Vec<&Op> = change
            .ops()
            .iter()
            .filter(|op| matches!(op, Op::Insert(_)))
            .collect();
        assert_eq!(inserts.len(), 2, "{change:?}");
        assert_eq!(change.ops()[0], Op::Retain(8));
    }

    #[test]
    fn any_pair_round_trips() {
        for (old, new) in [
            ("", ""),
            ("", "abc"),
            ("abc", ""),
            ("a\nb\nc", "c\nb\na"),
            ("é\nü\n", "é\nx\nü"),
            ("same", "same"),
            ("a\n\n\nb", "a\nb\n\n"),
        ] {
            check(old, new);
        }
        assert!(diff("same", "same").is_identity());
    }

    #[test]
    fn scattered_changes_in_a_long_text_stay_small() {
        let old: String = (0..3_000)
            .map(|i| format!("Paragraph {i} of the tale.\n"))
            .collect();
        let new = old
            .replace("Paragraph 10 of", "Paragraph ten of")
            .replace("Paragraph 2900 of", "Paragraph 2,900 of");
        let change = check(&old, &new);
        let inserted: usize = change
            .ops()
            .iter()
            .map(|op| match op {
                Op::Insert(s) => s.chars().count(),
                _ => 0,
            })
            .sum();
        assert!(inserted <= 8, "{inserted} chars inserted");
    }
}
