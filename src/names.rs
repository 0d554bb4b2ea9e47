//! Closest-name suggestions, so that an error about an unknown name (a request type, a tool,
//! a chapter) can say what would work; [`json_kind`], for errors about a JSON value of the
//! wrong kind; and [`thousands`], for counts in messages. It names no other module, so every
//! floor may use it.

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
    closest_in(name, candidates.into_iter().collect(), max)
}

/// [`closest`] over a list (one copy of the code for every caller's iterator).
fn closest_in<'a>(name: &str, candidates: Vec<&'a str>, max: usize) -> Vec<&'a str> {
    // Lowercased char by char, as `edit_distance` compares.
    let lowercase = |s: &str| s.chars().flat_map(char::to_lowercase).collect::<String>();
    let lower = lowercase(name);
    let name_len = name.chars().count();
    let lower_len = lower.chars().count();
    let mut scored: Vec<(usize, usize, &'a str)> = candidates
        .into_iter()
        .enumerate()
        .filter_map(|(order, candidate)| {
            let limit = (name_len.max(candidate.chars().count()) / 3).max(1);
            let cand_lower = lowercase(candidate);
            let contains =
                !lower.is_empty() && (cand_lower.contains(&lower) || lower.contains(&cand_lower));
            // The distance is at least the difference in (lowercased) lengths, and exactly
            // that when one contains the other; so a name much longer than every candidate (a
            // multi-megabyte one from a malformed call) costs O(n), not O(n * m) per candidate.
            let gap = lower_len.abs_diff(cand_lower.chars().count());
            let distance = if contains {
                gap
            } else if gap > limit {
                return None;
            } else {
                edit_distance(name, candidate)
            };
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
    hint(name, candidates.into_iter().collect())
}

/// [`did_you_mean`] over a list.
fn hint(name: &str, candidates: Vec<&str>) -> String {
    let close = closest_in(name, candidates, 3);
    if close.is_empty() {
        String::new()
    } else {
        let quoted: Vec<String> = close.iter().map(|c| format!("'{c}'")).collect();
        format!(" (did you mean {}?)", quoted.join(" or "))
    }
}

/// A count with thousands separators, for messages: "1,234".
pub fn thousands(n: usize) -> String {
    let mut out = String::new();
    push_thousands(&mut out, n);
    out
}

/// [`thousands`], pushed onto `out` without a string of its own.
pub fn push_thousands(out: &mut String, n: usize) {
    let mut buffer = itoa::Buffer::new();
    let digits = buffer.format(n).as_bytes();
    for (i, &digit) in digits.iter().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(char::from(digit));
    }
}

/// A short name of a JSON value's kind, for error messages.
pub fn json_kind(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits_in_threes() {
        let cases = [
            (0, "0"),
            (7, "7"),
            (999, "999"),
            (1_000, "1,000"),
            (12_345, "12,345"),
            (100_000, "100,000"),
            (1_234_567, "1,234,567"),
        ];
        for (n, text) in cases {
            assert_eq!(thousands(n), text);
        }
        assert_eq!(thousands(usize::MAX), {
            let digits = usize::MAX.to_string();
            let mut out = String::new();
            for (i, c) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i) % 3 == 0 {
                    out.push(',');
                }
                out.push(c);
            }
            out
        });
        let mut out = String::from("x ");
        push_thousands(&mut out, 4_096);
        assert_eq!(out, "x 4,096");
    }

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

    /// `closest` as first written: the edit distance to every candidate.
    fn closest_naive<'a>(name: &str, candidates: &[&'a str], max: usize) -> Vec<&'a str> {
        let lower: String = name.chars().flat_map(char::to_lowercase).collect();
        let mut scored: Vec<(usize, usize, &'a str)> = candidates
            .iter()
            .enumerate()
            .filter_map(|(order, &candidate)| {
                let distance = edit_distance(name, candidate);
                let limit = (name.chars().count().max(candidate.chars().count()) / 3).max(1);
                let cand: String = candidate.chars().flat_map(char::to_lowercase).collect();
                let contains =
                    !lower.is_empty() && (cand.contains(&lower) || lower.contains(&cand));
                (distance <= limit || contains).then_some((distance, order, candidate))
            })
            .collect();
        scored.sort();
        scored.into_iter().take(max).map(|(_, _, c)| c).collect()
    }

    #[test]
    fn skipping_far_candidates_changes_no_answer() {
        let candidates = [
            "undo",
            "redo",
            "update_manuscript",
            "insert_text",
            "Íle",
            "x",
            "set_selection",
        ];
        let parts = [
            "",
            "u",
            "ndo",
            "re",
            "DO",
            "update",
            "_manuscript",
            "insert",
            "_text",
            "í",
            "İ",
            "xx",
            "q",
        ];
        for a in parts {
            for b in parts {
                for c in parts {
                    let name = format!("{a}{b}{c}");
                    assert_eq!(
                        closest(&name, candidates, 3),
                        closest_naive(&name, &candidates, 3),
                        "{name:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_huge_name_costs_linear_time() {
        // Quadratic before: about 3 s per megabyte and candidate in a debug build.
        let names = ["update_manuscript", "undo", "redo"];
        let huge = "q".repeat(4 * 1024 * 1024 + 1);
        assert!(closest(&huge, names, 3).is_empty());
        let containing = format!("{huge}undo");
        assert_eq!(closest(&containing, names, 3), vec!["undo"]);
    }
}
