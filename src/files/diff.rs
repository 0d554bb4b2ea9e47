//! A small change set between two texts: what writing a whole chapter file changes.
//!
//! The common prefix and suffix are kept (retained); the middle is compared line by line
//! (a longest common subsequence of lines, when the middle is small enough: at most
//! [`MAX_CELLS`] line pairs), and each changed run of lines is trimmed again to the chars
//! that differ. So an agent that rewrites one sentence of a chapter file changes that
//! sentence only, and the writer's later typing elsewhere, undo and origin-scoped undo all
//! work as for any other edit. A middle too large to compare becomes one replacement.

use crate::project::changeset::ChangeSet;

/// The largest line comparison made (lines of the old middle × lines of the new one).
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
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 || n.saturating_mul(m) > MAX_CELLS {
        replace(change, old, new);
        return;
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let width = m + 1;
    let mut lcs = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * width + j] = if a[i] == b[j] {
                lcs[(i + 1) * width + j + 1] + 1
            } else {
                lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    // The changed run collected so far: old and new chars.
    let mut run_old: Vec<char> = Vec::new();
    let mut run_new: Vec<char> = Vec::new();
    let flush = |change: &mut ChangeSet, run_old: &mut Vec<char>, run_new: &mut Vec<char>| {
        if !run_old.is_empty() || !run_new.is_empty() {
            replace(change, run_old, run_new);
            run_old.clear();
            run_new.clear();
        }
    };
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            flush(change, &mut run_old, &mut run_new);
            change.retain(a[i].len());
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i * width + j + 1] >= lcs[(i + 1) * width + j]) {
            run_new.extend_from_slice(b[j]);
            j += 1;
        } else {
            run_old.extend_from_slice(a[i]);
            i += 1;
        }
    }
    flush(change, &mut run_old, &mut run_new);
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
}
