//! Line patterns for searches that a model or a writer types: a literal string or a bounded
//! regular expression, matched one line at a time.
//!
//! Every search tool (`search_manuscript`, `search_code`) compiles its query here and nowhere
//! else, so one set of limits keeps any pattern from stalling the worker:
//! - the engine is `regex-lite`, whose searches take `O(m · n)` time at worst (no
//!   backtracking), for a compiled program of size `m` and a haystack of `n` bytes;
//! - `m` is bounded: a pattern is at most [`MAX_PATTERN_CHARS`] chars, nests groups at most
//!   [`MAX_NESTING`] deep and compiles to at most [`MAX_PROGRAM_BYTES`] bytes (`a{1000}{1000}`
//!   is refused, not built);
//! - `n` is bounded: lines are searched one at a time, and only the first [`MAX_LINE_BYTES`]
//!   bytes of a longer line are searched, so iterating a line's matches (quadratic at worst in
//!   `regex-lite`) stays small.
//!
//! Positions in a [`LineMatch`] are **chars** within the line (as everywhere in the crate).

use regex_lite::{Regex, RegexBuilder};

/// The longest pattern accepted, in chars.
pub const MAX_PATTERN_CHARS: usize = 1_000;
/// The deepest group nesting accepted in a regular expression.
pub const MAX_NESTING: u32 = 16;
/// The largest compiled program accepted, in bytes (`regex-lite`'s size limit).
pub const MAX_PROGRAM_BYTES: usize = 64 * 1024;
/// Only this many bytes of a line are searched (a longer line's tail is not).
pub const MAX_LINE_BYTES: usize = 16 * 1024;

/// Why a query could not become a pattern. The message is written for a model to act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PatternError(pub String);

/// A compiled query: matched against one line at a time.
#[derive(Debug, Clone)]
pub struct Pattern {
    regex: Regex,
    is_regex: bool,
    /// A literal query searched without the regex engine: the query as written
    /// (case-sensitive), or ASCII-lowercased (case-insensitive, ASCII queries only).
    fast: Option<Fast>,
}

#[derive(Debug, Clone)]
struct Fast {
    needle: String,
    fold: bool,
}

impl Fast {
    /// Byte ranges of the non-overlapping matches in `hay`, left to right (all, or the first).
    fn find(&self, hay: &str, all: bool) -> Vec<(usize, usize)> {
        let folded;
        let hay = if self.fold {
            // ASCII lowercasing keeps every byte offset, so positions carry over.
            folded = hay.to_ascii_lowercase();
            folded.as_str()
        } else {
            hay
        };
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(at) = hay[from..].find(&self.needle) {
            let start = from + at;
            let end = start + self.needle.len();
            out.push((start, end));
            if !all {
                break;
            }
            from = end;
        }
        out
    }
}

/// One match within a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineMatch {
    /// First char of the match within the line.
    pub start: usize,
    /// One past the last char (exclusive).
    pub end: usize,
}

impl Pattern {
    /// A literal query (matched as written), case-insensitive unless `case_sensitive`.
    pub fn literal(query: &str, case_sensitive: bool) -> Result<Self, PatternError> {
        check_query(query)?;
        let regex = build(&regex_lite::escape(query), case_sensitive)?;
        let fast = if case_sensitive {
            Some(Fast {
                needle: query.to_string(),
                fold: false,
            })
        } else if query.is_ascii() && !query.contains(['k', 'K', 's', 'S']) {
            // ASCII queries fold by ASCII rules, except k and s, which also match the Kelvin
            // sign and the long s under Unicode case folding (the regex path keeps that).
            Some(Fast {
                needle: query.to_ascii_lowercase(),
                fold: true,
            })
        } else {
            None
        };
        Ok(Self {
            regex,
            is_regex: false,
            fast,
        })
    }

    /// A regular expression (`regex-lite` syntax: Perl-like, no look-around or
    /// backreferences), case-insensitive unless `case_sensitive`. A pattern that is too long,
    /// too deeply nested, too large once compiled, or not valid gets an error saying which.
    pub fn regex(pattern: &str, case_sensitive: bool) -> Result<Self, PatternError> {
        check_query(pattern)?;
        let regex = build(pattern, case_sensitive)?;
        if regex.is_match("") {
            return Err(PatternError(format!(
                "the regular expression '{pattern}' matches empty text, so it would match every line; make it require at least one character"
            )));
        }
        Ok(Self {
            regex,
            is_regex: true,
            fast: None,
        })
    }

    /// A regular expression when `regex` is true, else a literal.
    pub fn new(query: &str, regex: bool, case_sensitive: bool) -> Result<Self, PatternError> {
        if regex {
            Self::regex(query, case_sensitive)
        } else {
            Self::literal(query, case_sensitive)
        }
    }

    /// Whether the query is a regular expression (not a literal).
    pub fn is_regex(&self) -> bool {
        self.is_regex
    }

    /// The first match in `line` (searched up to [`MAX_LINE_BYTES`]).
    pub fn find(&self, line: &str) -> Option<LineMatch> {
        let hay = searched(line);
        self.regex
            .find(hay)
            .map(|m| to_chars(hay, m.start(), m.end()))
    }

    /// Every non-overlapping, non-empty match in `line` (searched up to [`MAX_LINE_BYTES`]),
    /// left to right.
    pub fn find_all(&self, line: &str) -> Vec<LineMatch> {
        let hay = searched(line);
        let ranges: Vec<(usize, usize)> = match &self.fast {
            Some(fast) => fast.find(hay, true),
            None => self
                .regex
                .find_iter(hay)
                .filter(|m| !m.is_empty())
                .map(|m| (m.start(), m.end()))
                .collect(),
        };
        let mut out = Vec::with_capacity(ranges.len());
        let mut chars = 0;
        let mut last = 0;
        for (start, end) in ranges {
            chars += hay[last..start].chars().count();
            let len = hay[start..end].chars().count();
            out.push(LineMatch {
                start: chars,
                end: chars + len,
            });
            chars += len;
            last = end;
        }
        out
    }

    /// Whether `line` has a match.
    pub fn is_match(&self, line: &str) -> bool {
        match &self.fast {
            Some(fast) => !fast.find(searched(line), false).is_empty(),
            None => self.regex.is_match(searched(line)),
        }
    }
}

fn check_query(query: &str) -> Result<(), PatternError> {
    if query.is_empty() {
        return Err(PatternError(
            "the query is empty; give the text (or pattern) to search for".into(),
        ));
    }
    let chars = query.chars().count();
    if chars > MAX_PATTERN_CHARS {
        return Err(PatternError(format!(
            "the query is {chars} chars long; at most {MAX_PATTERN_CHARS} are accepted; search for a shorter, distinctive part"
        )));
    }
    Ok(())
}

fn build(pattern: &str, case_sensitive: bool) -> Result<Regex, PatternError> {
    RegexBuilder::new(pattern)
        .case_insensitive(!case_sensitive)
        .nest_limit(MAX_NESTING)
        .size_limit(MAX_PROGRAM_BYTES)
        .build()
        .map_err(|e| {
            PatternError(format!(
                "'{pattern}' is not an accepted regular expression: {e}. Patterns may nest groups {MAX_NESTING} deep and must stay small once compiled (large counted repetitions such as a{{1000}} are refused); search for a literal with regex: false if you meant the text as written"
            ))
        })
}

/// The part of a line that is searched.
fn searched(line: &str) -> &str {
    if line.len() <= MAX_LINE_BYTES {
        return line;
    }
    let mut end = MAX_LINE_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

fn to_chars(hay: &str, start: usize, end: usize) -> LineMatch {
    let start_chars = hay[..start].chars().count();
    LineMatch {
        start: start_chars,
        end: start_chars + hay[start..end].chars().count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_is_escaped_and_case_insensitive_by_default() {
        let p = Pattern::literal("a.b", false).unwrap();
        assert!(p.is_match("xA.By"));
        assert!(!p.is_match("axb"));
        let p = Pattern::literal("Mara", true).unwrap();
        assert!(!p.is_match("mara"));
    }

    #[test]
    fn positions_are_chars() {
        let p = Pattern::literal("fin", false).unwrap();
        assert_eq!(p.find("é fin"), Some(LineMatch { start: 2, end: 5 }));
        let all = Pattern::regex("[éa]", true).unwrap().find_all("éaé");
        assert_eq!(all.len(), 3);
        assert_eq!(all[2], LineMatch { start: 2, end: 3 });
    }

    #[test]
    fn refuses_what_could_stall() {
        assert!(Pattern::regex("a{1000}{1000}", false).is_err());
        assert!(Pattern::regex(&"(".repeat(40), false).is_err());
        assert!(Pattern::regex(&format!("{}a{}", "(".repeat(20), ")".repeat(20)), false).is_err());
        assert!(Pattern::regex(&"a".repeat(MAX_PATTERN_CHARS + 1), false).is_err());
        assert!(Pattern::regex("a*", false).is_err(), "matches empty text");
        assert!(Pattern::literal("", false).is_err());
        assert!(Pattern::regex("[", false).is_err());
    }

    #[test]
    fn the_literal_fast_path_agrees_with_the_regex_engine() {
        let lines = [
            "The LAMP was dark; the lamp, the Lamp.",
            "é lamp ÉLAMP lampe",
            "no match here",
            "Straße ſ K k",
            "aaaa",
        ];
        for query in ["lamp", "LAMP", "é", "aa", "Straße", "k", "s", "the l"] {
            for case_sensitive in [true, false] {
                let fast = Pattern::literal(query, case_sensitive).unwrap();
                let slow = Pattern {
                    fast: None,
                    ..fast.clone()
                };
                for line in lines {
                    assert_eq!(
                        fast.find_all(line),
                        slow.find_all(line),
                        "{query} in {line}"
                    );
                    assert_eq!(fast.find(line), slow.find(line), "{query} in {line}");
                    assert_eq!(
                        fast.is_match(line),
                        slow.is_match(line),
                        "{query} in {line}"
                    );
                }
            }
        }
    }

    #[test]
    fn long_lines_are_searched_up_to_the_cap() {
        let mut line = "x".repeat(MAX_LINE_BYTES - 1);
        line.push('é');
        line.push_str("needle");
        let p = Pattern::literal("needle", true).unwrap();
        assert!(!p.is_match(&line));
        assert!(p.is_match(&format!("needle{line}")));
    }
}
