//! Text search over prose: exact and fuzzy matching, and chapter references.
//!
//! Everything here is a pure function over `&str`: no I/O, no allocation beyond the working
//! buffers, and no panics on any input.
//!
//! ## Positions
//! **All positions are char offsets** (Unicode scalar values, as [`str::chars`] counts them) and
//! ranges are half-open: a [`Match`] with `start: 2, end: 5` covers the chars at offsets 2, 3
//! and 4 of the searched text.
//!
//! ## Exact search
//! [`find_exact`] and [`find_exact_from`] are case-sensitive, byte-for-byte searches that report
//! char offsets.
//!
//! ## Fuzzy search
//! [`find_fuzzy`] and [`closest`] compare a *normalized* query against a *normalized* text (see
//! [`find_fuzzy`] for the exact folding rules) and then allow a few edits (typos): the score is
//! `1 - distance / normalized query length`, so a match that differs only by normalization
//! scores `1.0`. Offsets and the matched text are mapped back to the original text.
//!
//! The algorithm is Myers' bit-parallel approximate string matching (1999) in Hyyrö's blocked
//! form, so queries of any length are supported: the cost is `O(n · ⌈m / 64⌉)` word operations
//! for a text of `n` chars and a query of `m` chars. An exact search on the normalized text runs
//! first (a normalization-only match needs no dynamic programming). The start of an
//! approximate match is recovered by running the same algorithm backwards, anchored at the
//! match's end, over a window of `m + distance` chars.
//!
//! ## Chapter references
//! [`parse_chapter_ref`] understands the ways people and models name a chapter ("3",
//! "Chapter 3", "ch. 3", "chapter three", "the third chapter", "Chapter XII"); anything else is
//! a title, which [`match_title`] resolves against the chapter titles.

use serde::Serialize;

/// The default `min_score` for [`find_fuzzy`]: up to one edit per four chars of the normalized
/// query.
pub const DEFAULT_MIN_SCORE: f64 = 0.75;

/// The longest normalized query the approximate (typo-tolerant) step accepts. Its cost grows
/// with text length × query length, so a longer query only gets the normalization-only match;
/// without one, [`closest`] and [`find_fuzzy`] return `None` rather than stall the worker.
pub const MAX_FUZZY_QUERY_CHARS: usize = 2_000;

/// The minimum fuzzy score (`1 - distance / query length`) for [`match_title`]'s last,
/// fuzzy step.
pub const TITLE_MIN_SCORE: f64 = 0.75;

/// A span of the searched text that matches a query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Match {
    /// First char of the match (char offset into the searched text).
    pub start: usize,
    /// One past the last char of the match (char offset, exclusive).
    pub end: usize,
    /// How well the span matches: `1.0` is exact (after normalization, for fuzzy search),
    /// lower is worse, never below `0.0`.
    pub score: f64,
    /// The matched text exactly as it appears in the searched text (`start..end`).
    pub text: String,
}

/// All exact, case-sensitive occurrences of `query` in `text`, non-overlapping, left to right,
/// with char offsets. An empty query matches nothing.
pub fn find_exact(text: &str, query: &str) -> Vec<Match> {
    if query.is_empty() {
        return Vec::new();
    }
    let query_chars = query.chars().count();
    let mut out = Vec::new();
    let mut chars_before = 0;
    let mut last_byte = 0;
    for (byte, found) in text.match_indices(query) {
        chars_before += text.get(last_byte..byte).map_or(0, |s| s.chars().count());
        out.push(Match {
            start: chars_before,
            end: chars_before + query_chars,
            score: 1.0,
            text: found.to_string(),
        });
        chars_before += query_chars;
        last_byte = byte + found.len();
    }
    out
}

/// The first exact, case-sensitive occurrence of `query` that starts at or after char offset
/// `from`, or `None` (also for an empty query or a `from` past the end of `text`).
pub fn find_exact_from(text: &str, query: &str, from: usize) -> Option<Match> {
    if query.is_empty() {
        return None;
    }
    let from_byte = byte_offset(text, from)?;
    let rest = text.get(from_byte..)?;
    let found = rest.find(query)?;
    let start = from + rest.get(..found)?.chars().count();
    Some(Match {
        start,
        end: start + query.chars().count(),
        score: 1.0,
        text: query.to_string(),
    })
}

/// The best fuzzy match of `query` in `text`, or `None` when the query is empty after
/// normalization or nothing scores at least `min_score` (use [`DEFAULT_MIN_SCORE`] unless you
/// have a reason not to).
///
/// Text and query are both normalized before comparison:
/// - case is ignored (each char is lowercased on its own);
/// - every run of whitespace (spaces, tabs, newlines, no-break spaces) is one space, and the
///   query's leading and trailing whitespace is ignored;
/// - double-ish quotes `" “ ” „ ‟ « »` are all equivalent, and single-ish quotes and
///   apostrophes `' ‘ ’ ‚ ‛ ‹ ›` and the backtick are all equivalent (the two classes stay
///   distinct);
/// - whitespace just inside guillemets is ignored, so `« Oui »` matches `"Oui"`;
/// - dashes `- ‐ ‑ ‒ – — ―` and the minus sign are equivalent, a run of them (such as `--`)
///   counts as one, and whitespace around a dash is ignored, so `word — word`, `word--word`
///   and `word - word` all match;
/// - the ellipsis `…` equals `...`;
/// - soft hyphens and zero-width spaces and joiners are ignored.
///
/// Beyond that, typos cost one edit each (insertion, deletion or substitution of a char of the
/// normalized text). The score is `1 - distance / m`, with `m` the normalized query length, so
/// `1.0` means the span differs from the query only by normalization. The returned `start`,
/// `end` and `text` refer to the original text. Among equally good matches the earliest wins;
/// where a few overlapping spans are equally good (one typo at the query's end can be read
/// as a substitution or as a deletion), the one that starts and ends on word boundaries like
/// the query does is preferred ("harbor" finds "harbour", not "harbo").
pub fn find_fuzzy(text: &str, query: &str, min_score: f64) -> Option<Match> {
    closest(text, query).filter(|found| found.score >= min_score)
}

/// The best fuzzy candidate for `query` in `text` whatever its score (for "text not found;
/// closest is …" messages), or `None` when the text or the normalized query is empty, or the
/// query is longer than [`MAX_FUZZY_QUERY_CHARS`] and has no normalization-only match. The
/// normalization and scoring are those of [`find_fuzzy`].
pub fn closest(text: &str, query: &str) -> Option<Match> {
    let query = normalize_query(query);
    if query.is_empty() {
        return None;
    }
    let norm = normalize(text);
    if norm.is_empty() {
        return None;
    }
    let (start, end, distance) = best_span(&norm, &query)?;
    let (orig_start, orig_end) = original_span(text, start, end);
    let score = (1.0 - distance as f64 / query.len() as f64).clamp(0.0, 1.0);
    Some(Match {
        start: orig_start,
        end: orig_end,
        score,
        text: char_slice(text, orig_start, orig_end),
    })
}

/// How a chapter was named: by number or by (part of) its title.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChapterRef {
    /// A chapter number as written (chapters are numbered from 1 by convention; `0` is passed
    /// through for the caller to reject).
    Number(usize),
    /// Anything that is not a number form: the trimmed input, for [`match_title`].
    Title(String),
}

/// Parses how a person or a model names a chapter.
///
/// Number forms, all case-insensitive, with an optional leading "the":
/// - digits: `3`, `Chapter 3`, `chapter 3`, `ch. 3`, `Ch 12`, `chap. 4`, `Chapter #5`,
///   `chapter no. 6`, and ordinals `3rd`, `21st`;
/// - number words up to 999: `three`, `twenty-one`, `twenty one`, `one hundred and five`;
/// - ordinal words: `first` … `nineteenth`, `twentieth`, `twenty-first`, `ninetieth`,
///   `hundredth`, also as `the third chapter` or `chapter the third`;
/// - roman numerals in canonical form: `Chapter XII`, `xii`, `iv` (bare numerals up to 100,
///   after "chapter" up to 3999, so that words such as "mix" stay titles);
/// - a number followed by a title, such as `Chapter 3: The Lighthouse` or `4 - Fog`.
///
/// Anything else is [`ChapterRef::Title`] with the trimmed input.
pub fn parse_chapter_ref(input: &str) -> ChapterRef {
    let trimmed = input.trim();
    match parse_chapter_number(trimmed) {
        Some(n) => ChapterRef::Number(n),
        None => ChapterRef::Title(trimmed.to_string()),
    }
}

/// Picks the 0-based index of the title in `titles` that best matches `query`, or `None` if
/// nothing is reasonable. Comparison uses [`find_fuzzy`]'s normalization (case, whitespace,
/// quotes and dashes). In order of preference:
/// 1. a title equal to the query;
/// 2. a title containing the query as whole words (`lighthouse` in "Chapter 1: The
///    Lighthouse"), then a title containing it anywhere;
/// 3. the title with the best fuzzy match of the query (see [`find_fuzzy`]) scoring at least
///    [`TITLE_MIN_SCORE`].
///
/// Ties go to the earliest title.
pub fn match_title(titles: &[&str], query: &str) -> Option<usize> {
    let query: Vec<char> = normalize_query(query);
    if query.is_empty() {
        return None;
    }
    let query_str: String = query.iter().collect();
    let normalized: Vec<String> = titles
        .iter()
        .map(|title| normalize_query(title).into_iter().collect())
        .collect();
    if let Some(index) = normalized.iter().position(|title| *title == query_str) {
        return Some(index);
    }
    if let Some(index) = normalized
        .iter()
        .position(|title| contains_whole_words(title, &query_str))
    {
        return Some(index);
    }
    if let Some(index) = normalized
        .iter()
        .position(|title| title.contains(&query_str))
    {
        return Some(index);
    }
    let mut best: Option<(usize, usize)> = None;
    for (index, title) in normalized.iter().enumerate() {
        if title.is_empty() {
            continue;
        }
        let mut distance = query.len();
        myers_scan(&query, title.chars(), true, |_, score| {
            distance = distance.min(score);
        });
        if best.is_none_or(|(best_distance, _)| distance < best_distance) {
            best = Some((distance, index));
        }
    }
    let (distance, index) = best?;
    let score = 1.0 - distance as f64 / query.len() as f64;
    (score >= TITLE_MIN_SCORE).then_some(index)
}

// ---------------------------------------------------------------------------------------------
// Helpers: offsets
// ---------------------------------------------------------------------------------------------

/// The byte offset of char offset `chars` (the text's length for the end), or `None` past it.
fn byte_offset(text: &str, chars: usize) -> Option<usize> {
    text.char_indices()
        .map(|(byte, _)| byte)
        .chain(std::iter::once(text.len()))
        .nth(chars)
}

/// The chars `start..end` of `text` (clamped to the text).
fn char_slice(text: &str, start: usize, end: usize) -> String {
    text.chars()
        .skip(start)
        .take(end.saturating_sub(start))
        .collect()
}

/// Whether `needle` occurs in `haystack` with no alphanumeric char right before or after it.
fn contains_whole_words(haystack: &str, needle: &str) -> bool {
    haystack.match_indices(needle).any(|(byte, found)| {
        let before = haystack.get(..byte).and_then(|s| s.chars().next_back());
        let after = haystack
            .get(byte + found.len()..)
            .and_then(|s| s.chars().next());
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

// ---------------------------------------------------------------------------------------------
// Normalization
// ---------------------------------------------------------------------------------------------

/// What a char of the original text becomes in the normalized stream.
enum Class {
    /// Dropped (soft hyphen, zero-width characters).
    Ignore,
    /// Whitespace: runs become one space.
    Space,
    /// A dash: runs become one `-`, surrounding whitespace is dropped.
    Dash,
    /// An opening guillemet: the quote, and following whitespace is dropped.
    OpenQuote(char),
    /// A closing guillemet: preceding whitespace is dropped, then the quote.
    CloseQuote(char),
    /// The ellipsis: three dots.
    Ellipsis,
    /// Anything else: the folded char, lowercased.
    Other(char),
}

fn classify(c: char) -> Class {
    match c {
        '\u{00AD}' | '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' => {
            Class::Ignore
        }
        c if c.is_whitespace() => Class::Space,
        '-' | '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => {
            Class::Dash
        }
        '\u{00AB}' => Class::OpenQuote('"'),
        '\u{00BB}' => Class::CloseQuote('"'),
        '\u{2039}' => Class::OpenQuote('\''),
        '\u{203A}' => Class::CloseQuote('\''),
        '"' | '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{FF02}' => {
            Class::Other('"')
        }
        '\'' | '`' | '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}'
        | '\u{FF07}' => Class::Other('\''),
        '\u{2026}' => Class::Ellipsis,
        c => Class::Other(c),
    }
}

/// Receives the normalized stream of a text.
trait Sink {
    /// One normalized char, standing for the original chars `start..end` (char offsets).
    fn emit(&mut self, c: char, start: usize, end: usize);
    /// Whether the sink needs no more chars (checked before each original char).
    fn done(&self) -> bool {
        false
    }
}

impl Sink for String {
    #[inline]
    fn emit(&mut self, c: char, _: usize, _: usize) {
        self.push(c);
    }
}

impl Sink for Vec<char> {
    #[inline]
    fn emit(&mut self, c: char, _: usize, _: usize) {
        self.push(c);
    }
}

/// Streams the normalized form of `text` into `sink` (see [`find_fuzzy`] for the rules).
fn normalize_into(text: &str, sink: &mut impl Sink) {
    let mut space: Option<(usize, usize)> = None;
    let mut dash: Option<(usize, usize)> = None;
    // Whitespace is dropped after a dash or an opening guillemet.
    let mut drop_space = false;
    for (i, c) in text.chars().enumerate() {
        if sink.done() {
            return;
        }
        // The common case first: an ASCII letter or digit.
        if c.is_ascii_alphanumeric() {
            flush_pending(&mut space, &mut dash, sink);
            sink.emit(c.to_ascii_lowercase(), i, i + 1);
            drop_space = false;
            continue;
        }
        match classify(c) {
            Class::Ignore => {}
            Class::Space => {
                if !drop_space {
                    space = Some(space.map_or((i, i + 1), |(s, _)| (s, i + 1)));
                }
            }
            Class::Dash => {
                space = None;
                dash = Some(dash.map_or((i, i + 1), |(s, _)| (s, i + 1)));
                drop_space = true;
            }
            Class::OpenQuote(q) => {
                flush_pending(&mut space, &mut dash, sink);
                sink.emit(q, i, i + 1);
                drop_space = true;
            }
            Class::CloseQuote(q) => {
                space = None;
                flush_pending(&mut space, &mut dash, sink);
                sink.emit(q, i, i + 1);
                drop_space = false;
            }
            Class::Ellipsis => {
                flush_pending(&mut space, &mut dash, sink);
                for _ in 0..3 {
                    sink.emit('.', i, i + 1);
                }
                drop_space = false;
            }
            Class::Other(c) => {
                flush_pending(&mut space, &mut dash, sink);
                for lower in c.to_lowercase() {
                    sink.emit(lower, i, i + 1);
                }
                drop_space = false;
            }
        }
    }
    flush_pending(&mut space, &mut dash, sink);
}

/// Emits the pending dash run, then the pending whitespace run, if any.
#[inline]
fn flush_pending(
    space: &mut Option<(usize, usize)>,
    dash: &mut Option<(usize, usize)>,
    sink: &mut impl Sink,
) {
    if let Some((s, e)) = dash.take() {
        sink.emit('-', s, e);
    }
    if let Some((s, e)) = space.take() {
        sink.emit(' ', s, e);
    }
}

/// The normalized text.
fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    normalize_into(text, &mut out);
    out
}

/// The normalized query, without a leading or trailing space.
fn normalize_query(query: &str) -> Vec<char> {
    let mut out = Vec::with_capacity(query.len());
    normalize_into(query, &mut out);
    while out.last() == Some(&' ') {
        out.pop();
    }
    if out.first() == Some(&' ') {
        out.remove(0);
    }
    out
}

/// Finds the original span of a normalized char range, stopping once it has it.
struct SpanFinder {
    /// The normalized range `start..end` (`end > start`).
    start: usize,
    end: usize,
    /// Normalized chars seen so far.
    index: usize,
    orig_start: Option<usize>,
    orig_end: Option<usize>,
}

impl Sink for SpanFinder {
    fn emit(&mut self, _: char, start: usize, end: usize) {
        if self.index == self.start {
            self.orig_start = Some(start);
        }
        if self.index + 1 == self.end {
            self.orig_end = Some(end);
        }
        self.index += 1;
    }

    fn done(&self) -> bool {
        self.index >= self.end
    }
}

/// Maps the normalized char range `start..end` of `text` back to original char offsets.
fn original_span(text: &str, start: usize, end: usize) -> (usize, usize) {
    let mut finder = SpanFinder {
        start,
        end: end.max(start + 1),
        index: 0,
        orig_start: None,
        orig_end: None,
    };
    normalize_into(text, &mut finder);
    let orig_start = finder.orig_start.unwrap_or_else(|| text.chars().count());
    let orig_end = if end > start {
        finder.orig_end.unwrap_or(orig_start).max(orig_start)
    } else {
        orig_start
    };
    (orig_start, orig_end)
}

// ---------------------------------------------------------------------------------------------
// Approximate matching: Myers' bit-parallel algorithm, blocked (Hyyrö)
// ---------------------------------------------------------------------------------------------

const HIGH_BIT: u64 = 1 << 63;

/// The pattern's match masks: for each char, one bit per pattern position, in 64-bit blocks.
struct Peq {
    blocks: usize,
    /// `128 * blocks` masks for ASCII chars.
    ascii: Vec<u64>,
    /// The pattern's non-ASCII chars, sorted, and their masks (`keys.len() * blocks`).
    keys: Vec<char>,
    other: Vec<u64>,
    /// The masks of a char absent from the pattern.
    zeros: Vec<u64>,
}

impl Peq {
    fn new(pattern: &[char]) -> Self {
        let blocks = pattern.len().div_ceil(64).max(1);
        let mut ascii = vec![0u64; 128 * blocks];
        let mut keys: Vec<char> = pattern.iter().copied().filter(|c| !c.is_ascii()).collect();
        keys.sort();
        keys.dedup();
        let mut other = vec![0u64; keys.len() * blocks];
        for (i, &c) in pattern.iter().enumerate() {
            let (block, bit) = (i / 64, 1u64 << (i % 64));
            let slot = if c.is_ascii() {
                ascii.get_mut(c as usize * blocks + block)
            } else {
                keys.binary_search(&c)
                    .ok()
                    .and_then(|k| other.get_mut(k * blocks + block))
            };
            if let Some(slot) = slot {
                *slot |= bit;
            }
        }
        Peq {
            blocks,
            ascii,
            keys,
            other,
            zeros: vec![0; blocks],
        }
    }

    /// The first block's mask of `c` (all of it for patterns of up to 64 chars).
    #[inline]
    fn get_first(&self, c: char) -> u64 {
        let index = if c.is_ascii() {
            c as usize * self.blocks
        } else {
            match self.keys.binary_search(&c) {
                Ok(k) => return self.other.get(k * self.blocks).copied().unwrap_or(0),
                Err(_) => return 0,
            }
        };
        self.ascii.get(index).copied().unwrap_or(0)
    }

    fn get(&self, c: char) -> &[u64] {
        let (table, index) = if c.is_ascii() {
            (&self.ascii, c as usize)
        } else {
            match self.keys.binary_search(&c) {
                Ok(k) => (&self.other, k),
                Err(_) => return &self.zeros,
            }
        };
        table
            .get(index * self.blocks..(index + 1) * self.blocks)
            .unwrap_or(&self.zeros)
    }
}

/// Advances one 64-row block of the edit-distance matrix by one text char. `hin` is the
/// horizontal delta entering the block's top row (-1, 0 or 1); returns the horizontal delta at
/// the row selected by `out_mask`.
#[inline(always)]
fn advance_block(pv: &mut u64, mv: &mut u64, eq: u64, hin: i32, out_mask: u64) -> i32 {
    let (p, m) = (*pv, *mv);
    let xv = eq | m;
    let eq = if hin < 0 { eq | 1 } else { eq };
    let xh = ((eq & p).wrapping_add(p) ^ p) | eq;
    let mut ph = m | !(xh | p);
    let mut mh = p & xh;
    let hout = if ph & out_mask != 0 {
        1
    } else if mh & out_mask != 0 {
        -1
    } else {
        0
    };
    ph <<= 1;
    mh <<= 1;
    if hin < 0 {
        mh |= 1;
    } else if hin > 0 {
        ph |= 1;
    }
    *pv = mh | !(xv | ph);
    *mv = ph & xv;
    hout
}

/// Runs the edit-distance recurrence of `pattern` (non-empty) against `text`, calling
/// `visit(j, d)` after each text char with `j` the chars consumed so far and `d` the distance
/// between the whole pattern and the best text span ending there. With `free_start` the span
/// may start anywhere (approximate substring search); without, it starts at the text's start.
fn myers_scan(
    pattern: &[char],
    text: impl Iterator<Item = char>,
    free_start: bool,
    mut visit: impl FnMut(usize, usize),
) {
    let m = pattern.len();
    if m == 0 {
        return;
    }
    let peq = Peq::new(pattern);
    let last = peq.blocks - 1;
    let last_mask = 1u64 << ((m - 1) % 64);
    let first_hin = if free_start { 0 } else { 1 };
    let mut score = m;
    if peq.blocks == 1 {
        // Queries of up to 64 chars: one word, kept in registers.
        let (mut pv, mut mv) = (!0u64, 0u64);
        for (j, c) in text.enumerate() {
            let eq = peq.get_first(c);
            score = match advance_block(&mut pv, &mut mv, eq, first_hin, last_mask) {
                1 => score + 1,
                -1 => score.saturating_sub(1),
                _ => score,
            };
            visit(j + 1, score);
        }
        return;
    }
    let mut pv = vec![!0u64; peq.blocks];
    let mut mv = vec![0u64; peq.blocks];
    for (j, c) in text.enumerate() {
        let eq = peq.get(c);
        let mut hin = first_hin;
        for (b, ((p, v), &e)) in pv.iter_mut().zip(mv.iter_mut()).zip(eq).enumerate() {
            let mask = if b == last { last_mask } else { HIGH_BIT };
            hin = advance_block(p, v, e, hin, mask);
        }
        score = match hin {
            1 => score + 1,
            -1 => score.saturating_sub(1),
            _ => score,
        };
        visit(j + 1, score);
    }
}

/// Most end (or start) positions with the best distance considered for word-boundary
/// alignment, beyond the query's length.
const BOUNDARY_SLACK: usize = 8;

fn is_word(c: char) -> bool {
    c.is_alphanumeric()
}

/// Whether a span whose edge char is `edge`, with `outside` just beyond it, ends (or starts)
/// the way the query's edge char `query_edge` does: on a word boundary for a word char, on the
/// same char otherwise.
fn edge_fits(edge: char, outside: Option<char>, query_edge: char) -> bool {
    if is_word(query_edge) {
        is_word(edge) && !outside.is_some_and(is_word)
    } else {
        edge == query_edge
    }
}

/// The best approximate occurrence of `query` (normalized, non-empty) in `norm` (normalized):
/// `(start, end, distance)` in normalized char offsets.
///
/// The end is the earliest one with the smallest distance, or, when the next few ends have
/// the same distance ("harbor" against "harbour" costs one edit at "harbo", "harbou" and
/// "harbour"), the first of them that ends like the query (see [`edge_fits`]). The start is
/// then the earliest with that distance, or the latest one that starts like the query.
fn best_span(norm: &str, query: &[char]) -> Option<(usize, usize, usize)> {
    let m = query.len();
    let (&query_first, &query_last) = (query.first()?, query.last()?);
    let query_str: String = query.iter().collect();
    if let Some(byte) = norm.find(&query_str) {
        let start = norm.get(..byte)?.chars().count();
        return Some((start, start + m, 0));
    }
    if m > MAX_FUZZY_QUERY_CHARS {
        return None;
    }
    // Forward pass: the first run of consecutive ends with the smallest distance.
    let mut distance = m + 1;
    let mut ends: Vec<usize> = Vec::new();
    let mut in_run = false;
    myers_scan(query, norm.chars(), true, |j, d| {
        if d < distance {
            distance = d;
            ends.clear();
            ends.push(j);
            in_run = true;
        } else if in_run && d == distance && ends.len() <= m + BOUNDARY_SLACK {
            ends.push(j);
        } else {
            in_run = false;
        }
    });
    let first_end = *ends.first()?;
    // Chars from the one before the first candidate end: char k of `around` is norm char
    // `first_end - 1 + k`.
    let around: Vec<char> = norm
        .get(byte_offset(norm, first_end.saturating_sub(1))?..)?
        .chars()
        .take(ends.len() + 1)
        .collect();
    let end = ends
        .iter()
        .copied()
        .find(|&j| {
            let k = j - first_end;
            around
                .get(k)
                .is_some_and(|&edge| edge_fits(edge, around.get(k + 1).copied(), query_last))
        })
        .unwrap_or(first_end);
    // Backward pass, anchored at `end`: spans with that distance, by length.
    let end_byte = byte_offset(norm, end)?;
    let reversed: Vec<char> = query.iter().rev().copied().collect();
    let window: Vec<char> = norm
        .get(..end_byte)?
        .chars()
        .rev()
        .take(m + distance + 1)
        .collect();
    let mut lengths: Vec<usize> = Vec::new();
    myers_scan(
        &reversed,
        window.iter().copied().take(m + distance),
        false,
        |t, d| {
            if d == distance {
                lengths.push(t);
            }
        },
    );
    let longest = lengths.last().copied().unwrap_or(0);
    let length = lengths
        .iter()
        .rev()
        .take(m + BOUNDARY_SLACK)
        .copied()
        .find(|&t| {
            t > 0
                && window
                    .get(t - 1)
                    .is_some_and(|&edge| edge_fits(edge, window.get(t).copied(), query_first))
        })
        .unwrap_or(longest);
    Some((end - length, end, distance))
}

// ---------------------------------------------------------------------------------------------
// Chapter references
// ---------------------------------------------------------------------------------------------

const SMALL: &[&str] = &[
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];

const SMALL_ORDINAL: &[&str] = &[
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
];

const TENS: &[&str] = &[
    "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];

const TENS_ORDINAL: &[&str] = &[
    "twentieth",
    "thirtieth",
    "fortieth",
    "fiftieth",
    "sixtieth",
    "seventieth",
    "eightieth",
    "ninetieth",
];

/// Largest roman numeral accepted without a "chapter" prefix.
const BARE_ROMAN_MAX: usize = 100;

fn parse_chapter_number(input: &str) -> Option<usize> {
    let lower = input.to_lowercase();
    let mut s = lower.trim();
    s = strip_word(s, "the");
    let mut prefixed = false;
    for prefix in ["chapter", "chap.", "chap", "ch.", "ch"] {
        if let Some(rest) = s.strip_prefix(prefix) {
            let boundary = prefix.ends_with('.') || !rest.starts_with(char::is_alphabetic);
            if boundary {
                s = rest.trim_start_matches(|c: char| c.is_whitespace() || ".#:".contains(c));
                prefixed = true;
                break;
            }
        }
    }
    if prefixed {
        s = s.strip_prefix("no.").unwrap_or(s).trim_start();
        s = strip_word(s, "no");
        s = strip_word(s, "number");
        s = strip_word(s, "the");
    } else if let Some(rest) = s.strip_suffix("chapter") {
        if rest.ends_with(char::is_whitespace) {
            s = rest.trim_end();
        }
    }
    if s.is_empty() {
        return None;
    }
    let roman_max = if prefixed { 3999 } else { BARE_ROMAN_MAX };
    if let Some(n) = parse_number(s, roman_max) {
        return Some(n);
    }
    // A number followed by a title: "3: The Lighthouse", "4 - Fog", "5. Ash".
    let head_end = [":", " - ", " – ", " — ", "–", "—", ". ", ","]
        .iter()
        .filter_map(|sep| s.find(sep))
        .min()?;
    parse_number(s.get(..head_end)?.trim(), roman_max)
}

/// `s` without a leading `word` followed by whitespace (or `s` itself).
fn strip_word<'a>(s: &'a str, word: &str) -> &'a str {
    match s.strip_prefix(word) {
        Some(rest) if rest.starts_with(char::is_whitespace) => rest.trim_start(),
        _ => s,
    }
}

fn parse_number(s: &str, roman_max: usize) -> Option<usize> {
    let s = s.trim().trim_end_matches('.');
    if s.is_empty() {
        return None;
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().ok();
    }
    for suffix in ["st", "nd", "rd", "th"] {
        if let Some(digits) = s.strip_suffix(suffix) {
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                return digits.parse().ok();
            }
        }
    }
    parse_number_words(s).or_else(|| parse_roman(s).filter(|&n| n <= roman_max))
}

/// A unit or teen word (`one` … `nineteen`, `first` … `nineteenth`): (value, is ordinal).
fn small_word(token: &str) -> Option<(usize, bool)> {
    if let Some(i) = SMALL.iter().position(|w| *w == token) {
        return Some((i + 1, false));
    }
    SMALL_ORDINAL
        .iter()
        .position(|w| *w == token)
        .map(|i| (i + 1, true))
}

/// A tens word (`twenty` … `ninety`, `twentieth` … `ninetieth`): (value, is ordinal).
fn tens_word(token: &str) -> Option<(usize, bool)> {
    if let Some(i) = TENS.iter().position(|w| *w == token) {
        return Some((20 + 10 * i, false));
    }
    TENS_ORDINAL
        .iter()
        .position(|w| *w == token)
        .map(|i| (20 + 10 * i, true))
}

/// Number words below 1000: `[unit|a] hundred[th] [and] [tens[-unit] | unit | teen]`; an
/// ordinal word may only come last.
fn parse_number_words(s: &str) -> Option<usize> {
    let tokens: Vec<&str> = s
        .split(|c: char| c.is_whitespace() || c == '-')
        .filter(|t| !t.is_empty() && *t != "and")
        .collect();
    let mut i = 0;
    let mut total = 0;
    let mut closed = false; // an ordinal word was read: nothing may follow
    let is_hundred = |t: Option<&&str>| matches!(t, Some(&"hundred") | Some(&"hundredth"));
    if is_hundred(tokens.first()) {
        total = 100;
        closed = tokens.first() == Some(&"hundredth");
        i = 1;
    } else if is_hundred(tokens.get(1)) {
        let first = tokens.first()?;
        let units = if *first == "a" {
            1
        } else {
            match small_word(first)? {
                (n, false) if n < 10 => n,
                _ => return None,
            }
        };
        total = units * 100;
        closed = tokens.get(1) == Some(&"hundredth");
        i = 2;
    }
    if !closed {
        if let Some(token) = tokens.get(i) {
            if let Some((tens, ordinal)) = tens_word(token) {
                total += tens;
                i += 1;
                if !ordinal {
                    if let Some((units, _)) = tokens
                        .get(i)
                        .and_then(|t| small_word(t))
                        .filter(|(n, _)| *n < 10)
                    {
                        total += units;
                        i += 1;
                    }
                }
            } else if let Some((n, _)) = small_word(token) {
                total += n;
                i += 1;
            }
        }
    }
    (i > 0 && i == tokens.len()).then_some(total)
}

/// A canonical roman numeral (`i` … `mmmcmxcix`, lowercase), or `None`.
fn parse_roman(s: &str) -> Option<usize> {
    let value = |c: char| match c {
        'i' => Some(1),
        'v' => Some(5),
        'x' => Some(10),
        'l' => Some(50),
        'c' => Some(100),
        'd' => Some(500),
        'm' => Some(1000),
        _ => None,
    };
    if s.len() > 15 {
        return None; // longer than any canonical numeral below 4000 ("mmmdccclxxxviii")
    }
    let digits: Vec<i64> = s.chars().map(value).collect::<Option<_>>()?;
    let mut total: i64 = 0;
    for (i, &d) in digits.iter().enumerate() {
        // Subtractive pairs ("iv"); malformed ones are rejected by the canonical check below.
        if digits.get(i + 1).is_some_and(|&next| next > d) {
            total -= d;
        } else {
            total += d;
        }
    }
    let total = usize::try_from(total).ok()?;
    (total > 0 && total < 4000 && to_roman(total) == s).then_some(total)
}

fn to_roman(mut n: usize) -> String {
    const TABLE: [(usize, &str); 13] = [
        (1000, "m"),
        (900, "cm"),
        (500, "d"),
        (400, "cd"),
        (100, "c"),
        (90, "xc"),
        (50, "l"),
        (40, "xl"),
        (10, "x"),
        (9, "ix"),
        (5, "v"),
        (4, "iv"),
        (1, "i"),
    ];
    let mut out = String::new();
    for (value, numeral) in TABLE {
        while n >= value {
            out.push_str(numeral);
            n -= value;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sellers' O(n·m) dynamic programme: the smallest edit distance between `pattern` and any
    /// substring of `text`.
    pub(super) fn naive_best(pattern: &[char], text: &[char]) -> usize {
        let mut column: Vec<usize> = (0..=pattern.len()).collect();
        let mut best = pattern.len();
        for &c in text {
            let mut diagonal = column[0];
            column[0] = 0;
            for (i, &p) in pattern.iter().enumerate() {
                let next = (diagonal + usize::from(p != c))
                    .min(column[i] + 1)
                    .min(column[i + 1] + 1);
                diagonal = column[i + 1];
                column[i + 1] = next;
            }
            best = best.min(column[pattern.len()]);
        }
        best
    }

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    fn fuzzy(text: &str, query: &str) -> Option<Match> {
        find_fuzzy(text, query, DEFAULT_MIN_SCORE)
    }

    /// The match's text must be the original chars `start..end`.
    fn assert_consistent(text: &str, found: &Match) {
        let expected: String = text
            .chars()
            .skip(found.start)
            .take(found.end - found.start)
            .collect();
        assert_eq!(found.text, expected);
    }

    #[test]
    fn exact_reports_char_offsets_after_non_ascii_text() {
        let text = "Ça déjà vu — «Zoë» said: Zoë, Zoë!";
        let found = find_exact(text, "Zoë");
        let starts: Vec<usize> = found.iter().map(|m| m.start).collect();
        assert_eq!(starts, vec![14, 25, 30]);
        for m in &found {
            assert_eq!(m.end, m.start + 3);
            assert_eq!(m.text, "Zoë");
            assert_eq!(m.score, 1.0);
            assert_consistent(text, m);
        }
        assert!(find_exact(text, "zoë").is_empty(), "case-sensitive");
        assert!(find_exact(text, "").is_empty());
        assert_eq!(find_exact("aaaa", "aa").len(), 2, "non-overlapping");
    }

    #[test]
    fn exact_from_starts_at_a_char_offset() {
        let text = "ééé abc ééé abc";
        assert_eq!(find_exact_from(text, "abc", 0).map(|m| m.start), Some(4));
        assert_eq!(find_exact_from(text, "abc", 4).map(|m| m.start), Some(4));
        assert_eq!(find_exact_from(text, "abc", 5).map(|m| m.start), Some(12));
        assert_eq!(find_exact_from(text, "abc", 13), None);
        assert_eq!(find_exact_from(text, "abc", 15), None);
        assert_eq!(find_exact_from(text, "abc", 1000), None);
        assert_eq!(find_exact_from(text, "", 0), None);
        let m = find_exact_from(text, "ééé", 1);
        assert_eq!(m.as_ref().map(|m| (m.start, m.end)), Some((8, 11)));
    }

    #[test]
    fn fuzzy_ignores_case_and_maps_back_to_the_original() {
        let text = "It was late. THE LIGHTHOUSE Keeper slept.";
        let found = fuzzy(text, "the lighthouse keeper").expect("match");
        assert_eq!(found.score, 1.0);
        assert_eq!(found.text, "THE LIGHTHOUSE Keeper");
        assert_eq!((found.start, found.end), (13, 34));
    }

    #[test]
    fn fuzzy_folds_quotes() {
        let text = "She turned. “Hello,” she said, and he’d gone.";
        let found = fuzzy(text, "\"hello,\" she said").expect("match");
        assert_eq!(found.score, 1.0);
        assert_eq!(found.text, "“Hello,” she said");
        let found = fuzzy(text, "and he'd gone").expect("apostrophe");
        assert_eq!(found.text, "and he’d gone");
        assert_eq!(found.score, 1.0);
        let text = "Il dit : « Bonjour, Mara » et partit.";
        let found = fuzzy(text, "\"Bonjour, Mara\"").expect("guillemets");
        assert_eq!(found.text, "« Bonjour, Mara »");
        assert_eq!(found.score, 1.0);
    }

    #[test]
    fn fuzzy_folds_dashes_and_ellipses() {
        let text = "He waited—no, he ran — towards the sea… and stopped.";
        let found = fuzzy(text, "waited--no, he ran--towards").expect("dashes");
        assert_eq!(found.score, 1.0);
        assert_eq!(found.text, "waited—no, he ran — towards");
        let found = fuzzy(text, "the sea... and").expect("ellipsis");
        assert_eq!(found.text, "the sea… and");
        assert_eq!(found.score, 1.0);
        let found = fuzzy("a – b", "a - b").expect("en dash");
        assert_eq!(found.text, "a – b");
    }

    #[test]
    fn fuzzy_collapses_whitespace_and_newlines() {
        let text = "The tide\n\n   came in  slowly,\tthen all at once.";
        let found = fuzzy(text, "  tide came in slowly, then all ").expect("whitespace");
        assert_eq!(found.score, 1.0);
        assert_eq!(found.text, "tide\n\n   came in  slowly,\tthen all");
        assert_consistent(text, &found);
    }

    #[test]
    fn fuzzy_tolerates_typos() {
        let text = "Mara Vey walked down to the harbour where the boats were tied.";
        let one = fuzzy(text, "walked down to the harbor").expect("one typo");
        assert_eq!(one.text, "walked down to the harbour");
        assert!((one.score - (1.0 - 1.0 / 25.0)).abs() < 1e-9, "{one:?}");
        let two = fuzzy(text, "wlaked down to the harbour").expect("two typos");
        assert_eq!(two.text, "walked down to the harbour");
        assert!((two.score - (1.0 - 2.0 / 26.0)).abs() < 1e-9, "{two:?}");
        let substituted = fuzzy(text, "where the boats wern tied").expect("substitution");
        assert_eq!(substituted.text, "where the boats were tied");
        assert_consistent(text, &substituted);
    }

    #[test]
    fn fuzzy_prefers_the_earliest_of_equal_matches() {
        let text = "the cat sat. the cat sat.";
        let found = fuzzy(text, "the cat sat").expect("match");
        assert_eq!(found.start, 0);
        let found = fuzzy(text, "the bat sat").expect("match");
        assert_eq!((found.start, found.end), (0, 11));
    }

    #[test]
    fn fuzzy_rejects_unrelated_queries() {
        let text = "Mara Vey walked down to the harbour where the boats were tied.";
        assert_eq!(fuzzy(text, "quantum chromodynamics lecture notes"), None);
        assert_eq!(fuzzy(text, "zzz"), None);
        assert_eq!(fuzzy(text, ""), None);
        assert_eq!(fuzzy(text, " \n\t "), None);
        assert_eq!(fuzzy("", "harbour"), None);
        // The closest candidate is still reported, with a low score.
        let near = closest(text, "the harbour wall").expect("closest");
        assert!(near.score < 1.0 && near.score > 0.5, "{near:?}");
        assert!(near.text.contains("harbour"), "{near:?}");
        assert_eq!(closest("", "x"), None);
        assert_eq!(closest("abc", ""), None);
    }

    #[test]
    fn fuzzy_handles_long_queries() {
        let sentence = "The lighthouse keeper counted the gulls twice before dawn, \
                        then wrote the number in the ledger beside the storm glass.";
        let text = format!(
            "{}{sentence}{}",
            "Filler words. ".repeat(40),
            " More.".repeat(40)
        );
        let query = sentence.replace("gulls", "gull").replace("ledger", "LEDGR");
        assert!(query.chars().count() > 64);
        let found = fuzzy(&text, &query).expect("long query");
        assert_eq!(found.text, sentence);
        let query = format!("{sentence} {sentence}");
        let text = format!("xx {query} yy");
        let found = fuzzy(&text, &query.replace('w', "v")).expect("very long query");
        assert_eq!(found.text, query);
    }

    #[test]
    fn myers_agrees_with_the_naive_programme() {
        let cases = [
            ("abc", "xxabcxx"),
            ("abc", "xxabxcxx"),
            ("kitten", "sitting on the mat"),
            ("", "abc"),
            ("aaaa", "aa"),
            ("hello world", "hxllo wrld hello"),
        ];
        for (pattern, text) in cases {
            let (p, t) = (chars(pattern), chars(text));
            if p.is_empty() {
                continue;
            }
            let mut best = p.len();
            myers_scan(&p, t.iter().copied(), true, |_, d| best = best.min(d));
            assert_eq!(best, naive_best(&p, &t), "{pattern:?} in {text:?}");
        }
    }

    struct Items(Vec<(char, usize, usize)>);

    impl Sink for Items {
        fn emit(&mut self, c: char, start: usize, end: usize) {
            self.0.push((c, start, end));
        }
    }

    #[test]
    fn normalization_maps_each_char_to_its_origin() {
        let text = "A  “b” — c… «  d »";
        let mut items = Items(Vec::new());
        normalize_into(text, &mut items);
        let items = items.0;
        let normalized: String = items.iter().map(|i| i.0).collect();
        assert_eq!(normalized, "a \"b\"-c... \"d\"");
        assert_eq!(items[1], (' ', 1, 3));
        assert_eq!(items[5], ('-', 7, 8));
        assert_eq!(normalize_query("  Hello\n"), chars("hello"));
    }

    #[test]
    fn chapter_refs_by_number() {
        use ChapterRef::Number;
        let cases: &[(&str, usize)] = &[
            ("3", 3),
            (" 3 ", 3),
            ("Chapter 3", 3),
            ("chapter 3", 3),
            ("CHAPTER 3", 3),
            ("chapter three", 3),
            ("Chapter Three", 3),
            ("ch. 3", 3),
            ("Ch 12", 12),
            ("ch12", 12),
            ("Chap. 4", 4),
            ("Chapter #5", 5),
            ("chapter no. 6", 6),
            ("three", 3),
            ("third", 3),
            ("the third", 3),
            ("the third chapter", 3),
            ("third chapter", 3),
            ("chapter the third", 3),
            ("3rd", 3),
            ("21st", 21),
            ("first", 1),
            ("tenth", 10),
            ("twelfth", 12),
            ("nineteen", 19),
            ("twentieth", 20),
            ("twenty-one", 21),
            ("twenty one", 21),
            ("Twenty-First", 21),
            ("forty-two", 42),
            ("ninety-nine", 99),
            ("ninetieth", 90),
            ("one hundred", 100),
            ("a hundred and five", 105),
            ("hundredth", 100),
            ("Chapter XII", 12),
            ("chapter xii", 12),
            ("xii", 12),
            ("XIV", 14),
            ("iv", 4),
            ("I", 1),
            ("Chapter MCMXCIX", 1999),
            ("Chapter 3: The Lighthouse", 3),
            ("chapter three: the lighthouse", 3),
            ("4 - Fog", 4),
            ("Chapter XII. The Bell", 12),
            ("0", 0),
        ];
        for &(input, n) in cases {
            assert_eq!(parse_chapter_ref(input), Number(n), "{input:?}");
        }
    }

    #[test]
    fn chapter_refs_by_title() {
        let cases = [
            "The Lighthouse",
            "  The Lighthouse ",
            "chapter",
            "Cherries",
            "mix",
            "MCM",
            "iiii",
            "last",
            "the last chapter",
            "one two",
            "twenty-twenty",
            "third first",
            "fiftieth-one",
            "",
            "99999999999999999999999999",
            "Chapter of Accidents",
        ];
        for input in cases {
            assert_eq!(
                parse_chapter_ref(input),
                ChapterRef::Title(input.trim().to_string()),
                "{input:?}"
            );
        }
        assert_eq!(
            serde_json::to_value(parse_chapter_ref("ch 2")).ok(),
            Some(serde_json::json!({"number": 2}))
        );
    }

    #[test]
    fn titles_match_exactly_then_by_containment_then_fuzzily() {
        let titles = [
            "Chapter 1: The Lighthouse",
            "Chapter 2: Salt and Ash",
            "Chapter 3: The Lighthouse Keeper’s Daughter",
            "Chapter 4: Fog",
            "Chapter 5: Foghorn",
            "Chapter 6: Café Noir",
        ];
        assert_eq!(match_title(&titles, "chapter 2: salt AND ash"), Some(1));
        assert_eq!(match_title(&titles, "The Lighthouse"), Some(0));
        assert_eq!(
            match_title(&titles, "lighthouse keeper's daughter"),
            Some(2)
        );
        assert_eq!(match_title(&titles, "fog"), Some(3), "whole word first");
        assert_eq!(match_title(&titles, "horn"), Some(4), "then anywhere");
        assert_eq!(match_title(&titles, "Salt an Ash"), Some(1));
        assert_eq!(match_title(&titles, "lighthose keepers daughter"), Some(2));
        assert_eq!(match_title(&titles, "cafe noir"), Some(5));
        assert_eq!(match_title(&titles, "Quantum Physics"), None);
        assert_eq!(match_title(&titles, ""), None);
        assert_eq!(match_title(&[], "fog"), None);
        assert_eq!(match_title(&["", "Fog"], "fog"), Some(1));
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    /// Text drawn from prose-like pieces, so that quotes, dashes, whitespace and multi-byte
    /// chars are common.
    fn prose() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("a".to_string()),
            Just("b".to_string()),
            Just("The ".to_string()),
            Just(" ".to_string()),
            Just("\n\n".to_string()),
            Just("\t".to_string()),
            Just("“".to_string()),
            Just("”".to_string()),
            Just("\"".to_string()),
            Just("'".to_string()),
            Just("’".to_string()),
            Just("«".to_string()),
            Just("»".to_string()),
            Just("—".to_string()),
            Just("-".to_string()),
            Just("…".to_string()),
            Just(".".to_string()),
            Just("é".to_string()),
            Just("İ".to_string()),
            Just("ß".to_string()),
            Just("\u{00AD}".to_string()),
            Just("🦀".to_string()),
            "[a-zA-Z ]{1,6}",
            any::<char>().prop_map(String::from),
        ];
        prop::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
    }

    fn char_count(s: &str) -> usize {
        s.chars().count()
    }

    fn check(text: &str, found: &Match) {
        assert!(found.start <= found.end, "{found:?}");
        assert!(found.end <= char_count(text), "{found:?}");
        assert_eq!(found.text, char_slice(text, found.start, found.end));
        assert!((0.0..=1.0).contains(&found.score), "{found:?}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn nothing_panics_and_matches_are_consistent(text in prose(), query in prose(), from in 0usize..80) {
            for found in find_exact(&text, &query) {
                check(&text, &found);
            }
            if let Some(found) = find_exact_from(&text, &query, from) {
                check(&text, &found);
                prop_assert!(found.start >= from);
            }
            if let Some(found) = closest(&text, &query) {
                check(&text, &found);
            }
            if let Some(found) = find_fuzzy(&text, &query, 0.0) {
                check(&text, &found);
            }
            let _ = parse_chapter_ref(&query);
            let _ = match_title(&[text.as_str(), "Chapter 1"], &query);
        }

        #[test]
        fn over_long_queries_only_match_by_normalization(extra in 0usize..3) {
            let text = "a".repeat(MAX_FUZZY_QUERY_CHARS + 10);
            let typo = format!("{}b", "a".repeat(MAX_FUZZY_QUERY_CHARS + extra));
            prop_assert_eq!(closest(&text, &typo), None);
            let verbatim = "A".repeat(MAX_FUZZY_QUERY_CHARS + extra);
            prop_assert_eq!(closest(&text, &verbatim).map(|m| m.score), Some(1.0));
        }

        #[test]
        fn arbitrary_strings_never_panic(text in any::<String>(), query in any::<String>()) {
            if let Some(found) = closest(&text, &query) {
                check(&text, &found);
            }
            let _ = find_exact(&text, &query);
            let _ = parse_chapter_ref(&text);
        }

        #[test]
        fn a_verbatim_substring_scores_one(text in prose(), a in 0usize..200, len in 1usize..80) {
            let n = char_count(&text);
            let start = a.min(n);
            let query = char_slice(&text, start, start + len);
            let found = find_fuzzy(&text, &query, DEFAULT_MIN_SCORE);
            if normalize_query(&query).is_empty() {
                prop_assert_eq!(found, None);
            } else {
                let found = found.expect("a verbatim substring is found");
                check(&text, &found);
                prop_assert_eq!(found.score, 1.0);
                // A match inside a folded char ("." inside "…" = "...") maps back to the
                // whole char, so the found text covers the query.
                let found_norm: String = normalize_query(&found.text).into_iter().collect();
                let query_norm: String = normalize_query(&query).into_iter().collect();
                prop_assert!(found_norm.contains(&query_norm), "{:?} vs {:?}", found.text, query);
            }
        }

        #[test]
        fn myers_matches_sellers(pattern in "[abc]{1,150}", text in "[abc ]{0,300}") {
            let p: Vec<char> = pattern.chars().collect();
            let t: Vec<char> = text.chars().collect();
            let mut best = p.len();
            myers_scan(&p, t.iter().copied(), true, |_, d| best = best.min(d));
            prop_assert_eq!(best, super::tests::naive_best(&p, &t));
        }

        #[test]
        fn fuzzy_spans_have_the_reported_distance(pattern in "[ab]{1,90}", text in "[ab]{1,200}") {
            // The returned span, compared as a whole, is exactly as far from the query as the
            // score says.
            if let Some(found) = closest(&text, &pattern) {
                let m = pattern.chars().count() as f64;
                let distance = crate::names::edit_distance(&pattern, &found.text) as f64;
                prop_assert!((found.score - (1.0 - distance / m)).abs() < 1e-9, "{found:?}");
            }
        }
    }
}
