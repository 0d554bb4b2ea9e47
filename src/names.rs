//! Closest-name suggestions, so that an error about an unknown name (a request type, a tool,
//! a chapter) can say what would work.

/// Levenshtein edit distance between two strings, over chars, compared case-insensitively.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().flat_map(char::to_lowercase).collect();
    let b: Vec<char> = b.chars().flat_map(char::to_lowercase).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Up to `max` candidates closest to `name`, best first. A candidate qualifies when its edit
/// distance is at most a third of the longer name (at least 1), or when one name contains the
/// other. Ties keep the candidates' order.
pub fn closest<'a, I>(name: &str, candidates: I, max: usize) -> Vec<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let lower = name.to_lowercase();
    let mut scored: Vec<(usize, usize, &'a str)> = candidates
        .into_iter()
        .enumerate()
        .filter_map(|(order, candidate)| {
            let distance = edit_distance(name, candidate);
            let limit = (name.chars().count().max(candidate.chars().count()) / 3).max(1);
            let cand_lower = candidate.to_lowercase();
            let contains =
                !lower.is_empty() && (cand_lower.contains(&lower) || lower.contains(&cand_lower));
            (distance <= limit || contains).then_some((distance, order, candidate))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(max).map(|(_, _, c)| c).collect()
}

/// A hint such as ` (did you mean 'hello'?)`, or an empty string when nothing is close.
pub fn did_you_mean<'a, I>(name: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    let close = closest(name, candidates, 3);
    if close.is_empty() {
        String::new()
    } else {
        let quoted: Vec<String> = close.iter().map(|c| format!("'{c}'")).collect();
        format!(" (did you mean {}?)", quoted.join(" or "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_basics() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("Hello", "hello"), 0);
        assert_eq!(edit_distance("héllo", "hello"), 1);
    }

    #[test]
    fn closest_ranks_by_distance_and_drops_far_names() {
        let names = ["hello", "help", "undo", "redo"];
        assert_eq!(closest("helo", names, 3), vec!["hello", "help"]);
        assert!(closest("zzzzzzzz", names, 3).is_empty());
        assert_eq!(did_you_mean("rdo", names), " (did you mean 'redo'?)");
        assert_eq!(closest("do", names, 3), vec!["undo", "redo"]);
        assert_eq!(did_you_mean("qqqqqqqq", names), "");
    }
}
