//! Structure analysis of prose: scenes, dialogue spans, statistics, pacing and critique hints.
//!
//! Everything here is a pure function over `&str`: no I/O, no panics on any input, and linear
//! time (each function collects the text's chars once and scans them a constant number of
//! times).
//!
//! ## Conventions
//! - **Positions are char offsets** (Unicode scalar values, as [`str::chars`] counts them),
//!   never byte offsets. Ranges are half-open: `start..end`.
//! - **Lines** end at `\n`, `\r\n`, `\r`, U+000B, U+000C, U+0085, U+2028 or U+2029.
//! - **Paragraphs** are maximal runs of non-blank lines; one or more blank (whitespace-only)
//!   lines separate them, and so does U+2029 (PARAGRAPH SEPARATOR). A paragraph's range starts
//!   at its first line (indentation included) and ends after its last non-whitespace char.
//! - **Words** are maximal runs of alphanumeric chars (combining marks included), where an
//!   apostrophe (`'`, `’`) or hyphen (`-`, `‐`, `‑`) between two alphanumerics joins the runs:
//!   `don’t`, `well-known` and `naïve` are one word each; `James’` is the word `James`.
//! - **Sentences** end at a run of `.`, `!`, `?`, `…`, `‽`, `。`, `！`, `？` (plus any closing
//!   quotes or brackets) that is followed by whitespace or the paragraph's end, unless the next
//!   word starts with a lowercase letter (`“Go!” she said.` is one sentence) or the full stop
//!   follows a common abbreviation (`Mr.`, `Dr.`, …) or a single capital initial (`J. R. R.`).
//!   Every paragraph end also ends a sentence. Only sentences containing a word count.
//! - **Averages of empty input are `0.0`**, never NaN.

use serde::Serialize;
use std::collections::BTreeMap;

// ---------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------

/// Counts and averages over a text.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TextStats {
    /// Number of chars (Unicode scalar values), whitespace included.
    pub chars: usize,
    /// Number of words (see the module docs for what a word is).
    pub words: usize,
    /// Number of sentences that contain at least one word.
    pub sentences: usize,
    /// Number of paragraphs (blank-line separated, not blank themselves).
    pub paragraphs: usize,
    /// `words / sentences`, or `0.0` without sentences.
    pub avg_sentence_words: f64,
    /// Mean length of a word in chars, or `0.0` without words.
    pub avg_word_chars: f64,
}

/// How a stretch of dialogue is marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QuoteStyle {
    /// Straight double quotes: `"…"`.
    Straight,
    /// Curly quotes: `“…”`, single `‘…’`, or low-high `„…“` / `„…”`.
    Curly,
    /// French guillemets: `«…»`.
    Guillemets,
    /// A line opened by an em dash (or `– `), as in French, Russian or Spanish typesetting.
    EmDash,
}

/// A span of spoken text, quote marks (or the opening dash) included.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DialogueSpan {
    /// Char offset of the opening mark.
    pub start: usize,
    /// Char offset just past the closing mark (or the last char of the speech when unclosed).
    pub end: usize,
    /// How the speech is marked.
    pub style: QuoteStyle,
}

/// The dominant mode of a passage; see [`classify`] for the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SceneKind {
    /// Mostly speech.
    Dialogue,
    /// Dense in physical action, in short sentences.
    Action,
    /// Few action cues, long sentences, little speech.
    Description,
    /// None of the above dominates.
    Mixed,
}

/// Rhythm measures of a passage.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Pacing {
    /// Mean words per sentence (`0.0` without sentences).
    pub avg_sentence_words: f64,
    /// Population standard deviation of words per sentence.
    pub sentence_words_stddev: f64,
    /// Share of sentences with at most [`SHORT_SENTENCE_MAX_WORDS`] words, `0..=1`.
    pub short_sentence_ratio: f64,
    /// Non-whitespace chars inside [`dialogue_spans`] over all non-whitespace chars, `0..=1`.
    pub dialogue_ratio: f64,
    /// Paragraphs per 1000 words (`0.0` without words).
    pub paragraphs_per_1000_words: f64,
    /// Action verbs (ran, grabbed, lunges, …) per word outside dialogue, `0..=1`.
    pub action_density: f64,
}

/// A scene of a chapter, as split by [`scenes`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scene {
    /// Position among the returned scenes, from 0.
    pub index: usize,
    /// Char offset of the body's first non-blank line.
    pub start: usize,
    /// Char offset just past the body's last non-whitespace char. The body never includes a
    /// break line.
    pub end: usize,
    /// The title of the Markdown heading that opened the scene, if any.
    pub heading: Option<String>,
    /// The body's classification ([`classify`]).
    pub kind: SceneKind,
    /// The body's statistics ([`stats`]).
    pub stats: TextStats,
    /// The body's pacing ([`pacing`]).
    pub pacing: Pacing,
}

/// A word and how often it occurs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WordCount {
    /// The word, lowercased (typographic apostrophes folded to `'`).
    pub word: String,
    /// Number of occurrences.
    pub count: usize,
}

/// A critique hint anchored to a range of the text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hint {
    /// Char offset of the first char of the flagged text.
    pub start: usize,
    /// Char offset just past the flagged text.
    pub end: usize,
    /// The flagged text, as written.
    pub text: String,
    /// What is flagged: `"adverb"` or `"passive"`.
    pub kind: String,
}

// ---------------------------------------------------------------------------------------------
// Thresholds
// ---------------------------------------------------------------------------------------------

/// A sentence with at most this many words is short ([`Pacing::short_sentence_ratio`]).
pub const SHORT_SENTENCE_MAX_WORDS: usize = 8;
/// [`classify`]: at least this [`Pacing::dialogue_ratio`] makes a passage dialogue.
pub const DIALOGUE_MIN_RATIO: f64 = 0.5;
/// [`classify`]: at least this [`Pacing::action_density`] makes a passage action outright.
pub const ACTION_STRONG_DENSITY: f64 = 0.08;
/// [`classify`]: at least this action density makes a passage action when its sentences are
/// short (see [`ACTION_MAX_AVG_SENTENCE_WORDS`] and [`ACTION_MIN_SHORT_RATIO`]).
pub const ACTION_MIN_DENSITY: f64 = 0.04;
/// [`classify`]: sentences averaging at most this many words (and see
/// [`ACTION_MIN_SHORT_RATIO`]) count as short for action.
pub const ACTION_MAX_AVG_SENTENCE_WORDS: f64 = 14.0;
/// [`classify`]: at least this share of short sentences (and see
/// [`ACTION_MAX_AVG_SENTENCE_WORDS`]) counts as short for action.
pub const ACTION_MIN_SHORT_RATIO: f64 = 0.4;
/// [`classify`]: description has at most this action density …
pub const DESCRIPTION_MAX_ACTION_DENSITY: f64 = 0.02;
/// [`classify`]: … sentences averaging at least this many words …
pub const DESCRIPTION_MIN_AVG_SENTENCE_WORDS: f64 = 12.0;
/// [`classify`]: … and at most this dialogue ratio.
pub const DESCRIPTION_MAX_DIALOGUE_RATIO: f64 = 0.15;

// ---------------------------------------------------------------------------------------------
// Public functions
// ---------------------------------------------------------------------------------------------

/// Counts chars, words, sentences and paragraphs, and averages sentence and word lengths.
/// Empty (or whitespace-only) text gives all zeros.
pub fn stats(text: &str) -> TextStats {
    let c: Vec<char> = text.chars().collect();
    Profile::new(&c, false).stats()
}

/// Spans of spoken text, including their quote marks, sorted and non-overlapping.
///
/// Each paragraph is scanned on its own, and a quote never crosses a paragraph break:
/// - **Straight** `"…"`: a `"` opens (unless it follows a digit: `5'10"` is an inch mark) and
///   the next `"` closes.
/// - **Curly** `“…”`, `„…“`/`„…”`, and single `‘…’`. A `‘` opens only when it does not follow
///   a letter or digit, is followed by neither whitespace nor a digit, and does not start a
///   common elision (`‘em`, `‘til`, `‘tis`, `‘twas`, `‘cause`, `‘bout`, `‘n’`). A `’` closes a
///   single quote only when no letter or digit follows it, so `don’t` does not; `James’ car`
///   inside single quotes is read as the close (a known limit). `’` never opens anything, and
///   straight single quotes `'…'` are not dialogue (they are indistinguishable from
///   apostrophes).
/// - **Guillemets** `«…»`. (German `»…«` is not supported; a stray `»` is ignored.)
/// - Inside a quote only its own closer matters: nested quotes of another kind, and
///   apostrophes, are part of the outer span.
/// - **Unclosed quotes** end at the end of their paragraph (its last non-whitespace char),
///   which also covers multi-paragraph speech whose paragraphs reopen without closing. An
///   unclosed single `‘` is the exception unless it opens its line: it is taken for an
///   apostrophe and the rest of the paragraph is rescanned without single quotes.
/// - **Em-dash dialogue**: a line (outside any open quote) whose first non-whitespace char is
///   `—` or `―`, or `–` followed by whitespace, is speech from that dash. The speech ends at
///   the line's end, or before an attribution break: a later dash preceded by whitespace or a
///   comma (`— Yes — he said`, `— Да, — сказал он`, `—No sé —dijo`). After a break, a dash
///   with whitespace on both sides resumes the speech (`— Да, — сказал он, — я приду.`).
///   Trailing whitespace is trimmed from each span, and a span without any letter or digit is
///   dropped (so `— — —` is not speech).
pub fn dialogue_spans(text: &str) -> Vec<DialogueSpan> {
    let c: Vec<char> = text.chars().collect();
    let paras = paragraphs(&c);
    dialogue(&c, &paras)
}

/// Splits a chapter into scenes.
///
/// A **break** is a line that, ignoring whitespace, is made of a single repeated mark: any
/// number of `#` or `⁂`, or three or more of `*`, `-`, `_`, `~`, `•` or `·` (`***`, `* * *`,
/// `---`, `* * * *`); or a Markdown heading line (`#` to `######`, then whitespace, then the
/// title; a closing `#` run is dropped), whose title becomes the next scene's
/// [`Scene::heading`]. A break line is never part of a scene.
///
/// A scene's body runs from the line after one break to the line before the next (the first
/// scene from the start of the text, the last to its end), trimmed of blank lines at the start
/// and whitespace at the end. Text without breaks is one scene. Scenes whose body is blank
/// (two breaks in a row) are skipped; a skipped scene's heading carries over to the next
/// scene unless that one has its own heading (`# Chapter` then `* * *` keeps `Chapter`).
/// Empty or blank text has no scenes.
pub fn scenes(text: &str) -> Vec<Scene> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut body_start = 0;
    let mut heading: Option<String> = None;
    for line in Lines::new(&c) {
        if let Some(next_heading) = scene_break(&c[line.start..line.end]) {
            let unused = emit_scene(&c, body_start, line.start, heading.take(), &mut out);
            heading = next_heading.or(unused);
            body_start = line.next;
        }
    }
    emit_scene(&c, body_start, c.len(), heading, &mut out);
    out
}

/// Classifies a passage by its [`pacing`]; the rule, first match wins:
///
/// 1. [`Pacing::dialogue_ratio`] ≥ [`DIALOGUE_MIN_RATIO`] (0.5) → [`SceneKind::Dialogue`].
/// 2. [`Pacing::action_density`] ≥ [`ACTION_STRONG_DENSITY`] (0.08), or action density ≥
///    [`ACTION_MIN_DENSITY`] (0.04) with short sentences: an average of at most
///    [`ACTION_MAX_AVG_SENTENCE_WORDS`] (14) words *and* a short-sentence ratio of at least
///    [`ACTION_MIN_SHORT_RATIO`] (0.4) → [`SceneKind::Action`].
/// 3. Action density ≤ [`DESCRIPTION_MAX_ACTION_DENSITY`] (0.02), average sentence ≥
///    [`DESCRIPTION_MIN_AVG_SENTENCE_WORDS`] (12) words and dialogue ratio ≤
///    [`DESCRIPTION_MAX_DIALOGUE_RATIO`] (0.15) → [`SceneKind::Description`].
/// 4. Otherwise (empty text included) → [`SceneKind::Mixed`].
///
/// Action density counts words outside dialogue that are forms of a fixed list of physical
/// action verbs (`grab`, `lunge`, `ran`, `struck`, `kicking`, …) per word outside dialogue.
pub fn classify(text: &str) -> SceneKind {
    classify_pacing(&pacing(text))
}

/// Applies the [`classify`] rule to already computed [`Pacing`].
pub fn classify_pacing(p: &Pacing) -> SceneKind {
    let short = p.avg_sentence_words <= ACTION_MAX_AVG_SENTENCE_WORDS
        && p.short_sentence_ratio >= ACTION_MIN_SHORT_RATIO;
    if p.dialogue_ratio >= DIALOGUE_MIN_RATIO {
        SceneKind::Dialogue
    } else if p.action_density >= ACTION_STRONG_DENSITY
        || (p.action_density >= ACTION_MIN_DENSITY && short)
    {
        SceneKind::Action
    } else if p.action_density <= DESCRIPTION_MAX_ACTION_DENSITY
        && p.avg_sentence_words >= DESCRIPTION_MIN_AVG_SENTENCE_WORDS
        && p.dialogue_ratio <= DESCRIPTION_MAX_DIALOGUE_RATIO
    {
        SceneKind::Description
    } else {
        SceneKind::Mixed
    }
}

/// Measures a passage's rhythm: sentence lengths and their spread, the share of short
/// sentences, how much of it is dialogue, paragraph density and action density.
/// Empty text gives all zeros.
pub fn pacing(text: &str) -> Pacing {
    let c: Vec<char> = text.chars().collect();
    Profile::new(&c, true).pacing()
}

/// Words used at least `min_count` times, lowercased, sorted by count (descending) then word.
/// Words shorter than 4 chars, words without a letter, and a small list of English function
/// words (`about`, `because`, `there`, `would`, `didn't`, …) are left out.
pub fn repeated_words(text: &str, min_count: usize) -> Vec<WordCount> {
    let c: Vec<char> = text.chars().collect();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut buf = String::new();
    for (s, e) in words(&c) {
        let w = &c[s..e];
        if w.len() < 4 || !w.iter().any(|ch| ch.is_alphabetic()) {
            continue;
        }
        lower_into(&mut buf, w);
        if STOPWORDS.binary_search(&buf.as_str()).is_ok() {
            continue;
        }
        // The key is copied only when the word is new.
        match counts.get_mut(buf.as_str()) {
            Some(n) => *n += 1,
            None => {
                counts.insert(buf.clone(), 1);
            }
        }
    }
    let mut out: Vec<WordCount> = counts
        .into_iter()
        .filter(|&(_, count)| count >= min_count)
        .map(|(word, count)| WordCount { word, count })
        .collect();
    // The map is sorted by word already, and the sort is stable.
    out.sort_by_key(|w| std::cmp::Reverse(w.count));
    out
}

/// `-ly` adverbs: words of at least 4 letters ending in `ly`, except a list of common `-ly`
/// nouns, verbs, adjectives and names (`family`, `only`, `early`, `reply`, `holy`, `ugly`,
/// `lonely`, `friendly`, `daily`, `supply`, `July`, …). Hints have kind `"adverb"`.
pub fn adverbs(text: &str) -> Vec<Hint> {
    let c: Vec<char> = text.chars().collect();
    let mut buf = String::new();
    let mut out = Vec::new();
    for (s, e) in words(&c) {
        lower_into(&mut buf, &c[s..e]);
        if is_ly_adverb(&buf) {
            out.push(hint(&c, s, e, "adverb"));
        }
    }
    out
}

/// Possible passive voice: a form of "to be" (`am`, `is`, `are`, `was`, `were`, `be`, `been`,
/// `being`, and `isn't`, `aren't`, `wasn't`, `weren't`), optionally one adverb (an `-ly`
/// adverb as in [`adverbs`], or `not`, `never`, `just`, `already`, `only`, …), optionally
/// `being`, then a past participle: a word ending in `-ed` (at least 4 chars, minus a few
/// adjectives such as `red`, `naked`, `wicked`, `hundred`, and `-eed` words other than
/// `freed`, `agreed`, …) or one of about 150 irregular participles (`taken`, `seen`, `built`,
/// …). The words must be separated by whitespace only (no punctuation). Hints have kind
/// `"passive"`, cover the whole phrase and do not overlap.
pub fn passive_hints(text: &str) -> Vec<Hint> {
    let c: Vec<char> = text.chars().collect();
    let ws = words(&c);
    let mut buf = String::new();
    let mut out = Vec::new();
    let mut k = 0;
    while k < ws.len() {
        let (s, _) = ws[k];
        if let Some(end) = passive_at(&c, &ws, k, &mut buf) {
            let (_, e) = ws[end];
            out.push(hint(&c, s, e, "passive"));
            k = end + 1;
        } else {
            k += 1;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Lines, paragraphs, words, sentences
// ---------------------------------------------------------------------------------------------

type Range = (usize, usize);

fn is_line_break(ch: char) -> bool {
    matches!(
        ch,
        '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// Whitespace that does not end a line.
fn is_inline_ws(ch: char) -> bool {
    ch.is_whitespace() && !is_line_break(ch)
}

/// A line: `start..end` is its content, `next` where the following line starts.
#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    end: usize,
    next: usize,
    /// Ended by U+2029 PARAGRAPH SEPARATOR.
    para_sep: bool,
}

struct Lines<'a> {
    c: &'a [char],
    pos: usize,
}

impl<'a> Lines<'a> {
    fn new(c: &'a [char]) -> Self {
        Lines { c, pos: 0 }
    }
}

impl Iterator for Lines<'_> {
    type Item = Line;

    fn next(&mut self) -> Option<Line> {
        let c = self.c;
        let n = c.len();
        if self.pos >= n {
            return None;
        }
        let start = self.pos;
        let mut i = start;
        while i < n && !is_line_break(c[i]) {
            i += 1;
        }
        let mut next = i;
        let mut para_sep = false;
        if i < n {
            para_sep = c[i] == '\u{2029}';
            next = if c[i] == '\r' && c.get(i + 1) == Some(&'\n') {
                i + 2
            } else {
                i + 1
            };
        }
        self.pos = next;
        Some(Line {
            start,
            end: i,
            next,
            para_sep,
        })
    }
}

/// The offset just past the last non-whitespace char of `c[s..e]`, or `s`.
fn trim_end(c: &[char], s: usize, e: usize) -> usize {
    let mut e = e.min(c.len());
    while e > s && c[e - 1].is_whitespace() {
        e -= 1;
    }
    e.max(s)
}

fn is_blank(c: &[char]) -> bool {
    c.iter().all(|ch| ch.is_whitespace())
}

/// Paragraph ranges (see the module docs), in order.
fn paragraphs(c: &[char]) -> Vec<Range> {
    let mut out = Vec::new();
    let mut cur: Option<Range> = None;
    for line in Lines::new(c) {
        if is_blank(&c[line.start..line.end]) {
            out.extend(cur.take());
        } else {
            let e = trim_end(c, line.start, line.end);
            match &mut cur {
                Some(p) => p.1 = e,
                None => cur = Some((line.start, e)),
            }
        }
        if line.para_sep {
            out.extend(cur.take());
        }
    }
    out.extend(cur);
    out
}

fn is_combining(ch: char) -> bool {
    matches!(
        ch,
        '\u{0300}'..='\u{036F}'
            | '\u{1AB0}'..='\u{1AFF}'
            | '\u{1DC0}'..='\u{1DFF}'
            | '\u{20D0}'..='\u{20FF}'
            | '\u{FE20}'..='\u{FE2F}'
    )
}

fn is_word_char(ch: char) -> bool {
    ch.is_alphanumeric() || is_combining(ch)
}

fn is_word_joiner(ch: char) -> bool {
    matches!(ch, '\'' | '’' | '-' | '‐' | '‑')
}

/// Word ranges (see the module docs), in order.
fn words(c: &[char]) -> Vec<Range> {
    let n = c.len();
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        if !c[i].is_alphanumeric() {
            i += 1;
            continue;
        }
        let s = i;
        loop {
            while i < n && is_word_char(c[i]) {
                i += 1;
            }
            if i + 1 < n && is_word_joiner(c[i]) && c[i + 1].is_alphanumeric() {
                i += 2;
            } else {
                break;
            }
        }
        out.push((s, i));
    }
    out
}

fn is_terminator(ch: char) -> bool {
    matches!(ch, '.' | '!' | '?' | '…' | '‽' | '。' | '！' | '？')
}

/// Chars that may follow a sentence's terminator and still belong to it.
fn is_sentence_closer(ch: char) -> bool {
    matches!(
        ch,
        '"' | '\'' | '”' | '’' | '»' | '›' | ')' | ']' | '}' | '」' | '』' | '*' | '_'
    )
}

const ABBREVIATIONS: &[&str] = &[
    "dr", "jr", "mr", "mrs", "ms", "mt", "prof", "sr", "st", "vs",
];

/// Whether the full stop at `t` follows an abbreviation or a capital initial.
fn is_abbreviation(c: &[char], ps: usize, t: usize) -> bool {
    let mut s = t;
    while s > ps && t - s < 5 && c[s - 1].is_alphabetic() {
        s -= 1;
    }
    if s == t || (s > ps && c[s - 1].is_alphanumeric()) {
        return false;
    }
    let w = &c[s..t];
    if w.len() == 1 && w[0].is_uppercase() {
        return true;
    }
    let lower: String = w.iter().map(|ch| ch.to_ascii_lowercase()).collect();
    ABBREVIATIONS.binary_search(&lower.as_str()).is_ok()
}

/// Offsets where sentences end (sorted): after each sentence's terminator and closers, and at
/// each paragraph's end.
fn sentence_bounds(c: &[char], paras: &[Range]) -> Vec<usize> {
    let mut out = Vec::new();
    for &(ps, pe) in paras {
        let mut i = ps;
        while i < pe {
            if !is_terminator(c[i]) {
                i += 1;
                continue;
            }
            let t = i;
            let mut k = i;
            while k < pe && is_terminator(c[k]) {
                k += 1;
            }
            let single_dot = k == t + 1 && c[t] == '.';
            while k < pe && is_sentence_closer(c[k]) {
                k += 1;
            }
            if k == pe || c[k].is_whitespace() {
                let mut m = k;
                while m < pe && c[m].is_whitespace() {
                    m += 1;
                }
                let continues = m < pe && c[m].is_lowercase();
                let abbreviation = single_dot && is_abbreviation(c, ps, t);
                if !continues && !abbreviation {
                    out.push(k);
                }
            }
            i = k;
        }
        out.push(pe);
    }
    out
}

/// Words per sentence, for sentences with at least one word.
fn sentence_word_counts(words: &[Range], bounds: &[usize]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut b = 0;
    let mut cur = 0;
    for &(ws, _) in words {
        while b < bounds.len() && bounds[b] <= ws {
            if cur > 0 {
                out.push(cur);
                cur = 0;
            }
            b += 1;
        }
        cur += 1;
    }
    if cur > 0 {
        out.push(cur);
    }
    out
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Everything [`stats`], [`pacing`] and [`classify`] need, from one pass over a text.
struct Profile {
    chars: usize,
    words: usize,
    word_chars: usize,
    sentence_words: Vec<usize>,
    paragraphs: usize,
    non_ws: usize,
    dialogue_non_ws: usize,
    narrative_words: usize,
    action_cues: usize,
}

impl Profile {
    fn new(c: &[char], with_dialogue: bool) -> Self {
        let paras = paragraphs(c);
        let ws = words(c);
        let bounds = sentence_bounds(c, &paras);
        let sentence_words = sentence_word_counts(&ws, &bounds);
        let mut p = Profile {
            chars: c.len(),
            words: ws.len(),
            word_chars: ws.iter().map(|&(s, e)| e - s).sum(),
            sentence_words,
            paragraphs: paras.len(),
            non_ws: 0,
            dialogue_non_ws: 0,
            narrative_words: 0,
            action_cues: 0,
        };
        if !with_dialogue {
            return p;
        }
        let spans = dialogue(c, &paras);
        p.non_ws = c.iter().filter(|ch| !ch.is_whitespace()).count();
        p.dialogue_non_ws = spans
            .iter()
            .map(|d| {
                c[d.start..d.end]
                    .iter()
                    .filter(|ch| !ch.is_whitespace())
                    .count()
            })
            .sum();
        let mut buf = String::new();
        let mut d = 0;
        for &(s, e) in &ws {
            while d < spans.len() && spans[d].end <= s {
                d += 1;
            }
            if d < spans.len() && spans[d].start <= s {
                continue;
            }
            p.narrative_words += 1;
            lower_into(&mut buf, &c[s..e]);
            if is_action_word(&buf) {
                p.action_cues += 1;
            }
        }
        p
    }

    fn stats(&self) -> TextStats {
        TextStats {
            chars: self.chars,
            words: self.words,
            sentences: self.sentence_words.len(),
            paragraphs: self.paragraphs,
            avg_sentence_words: ratio(self.words, self.sentence_words.len()),
            avg_word_chars: ratio(self.word_chars, self.words),
        }
    }

    fn pacing(&self) -> Pacing {
        let n = self.sentence_words.len();
        let mean = ratio(self.words, n);
        let variance = if n == 0 {
            0.0
        } else {
            self.sentence_words
                .iter()
                .map(|&w| (w as f64 - mean).powi(2))
                .sum::<f64>()
                / n as f64
        };
        let short = self
            .sentence_words
            .iter()
            .filter(|&&w| w <= SHORT_SENTENCE_MAX_WORDS)
            .count();
        Pacing {
            avg_sentence_words: mean,
            sentence_words_stddev: variance.sqrt(),
            short_sentence_ratio: ratio(short, n),
            dialogue_ratio: ratio(self.dialogue_non_ws, self.non_ws).min(1.0),
            paragraphs_per_1000_words: ratio(self.paragraphs, self.words) * 1000.0,
            action_density: ratio(self.action_cues, self.narrative_words),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Dialogue
// ---------------------------------------------------------------------------------------------

/// What closes an open quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closer {
    Straight,
    CurlyDouble,
    LowDouble,
    Single,
    Guillemet,
}

#[derive(Debug, Clone, Copy)]
struct OpenQuote {
    start: usize,
    style: QuoteStyle,
    closer: Closer,
    /// The opening mark is the first non-whitespace char of its line.
    opens_line: bool,
}

fn is_dash(ch: char) -> bool {
    matches!(ch, '—' | '–' | '―')
}

const ELISIONS: &[&str] = &["bout", "cause", "em", "n", "til", "tis", "twas"];

/// Whether the `‘` at `i` (inside the paragraph ending at `pe`) opens a single quote.
fn single_opens(c: &[char], i: usize, pe: usize) -> bool {
    if i > 0 && c[i - 1].is_alphanumeric() {
        return false;
    }
    match c.get(i + 1) {
        Some(&next) if i + 1 < pe && !next.is_whitespace() && !next.is_numeric() => {}
        _ => return false,
    }
    let mut j = i + 1;
    while j < pe && j - i <= 6 && c[j].is_alphabetic() {
        j += 1;
    }
    if j - i > 6 {
        return true;
    }
    let w: String = c[i + 1..j]
        .iter()
        .flat_map(|ch| ch.to_lowercase())
        .collect();
    ELISIONS.binary_search(&w.as_str()).is_err()
}

fn opener(c: &[char], i: usize, pe: usize, singles: bool) -> Option<(QuoteStyle, Closer)> {
    match c[i] {
        '"' if !(i > 0 && c[i - 1].is_ascii_digit()) => {
            Some((QuoteStyle::Straight, Closer::Straight))
        }
        '“' => Some((QuoteStyle::Curly, Closer::CurlyDouble)),
        '„' => Some((QuoteStyle::Curly, Closer::LowDouble)),
        '«' => Some((QuoteStyle::Guillemets, Closer::Guillemet)),
        '‘' if singles && single_opens(c, i, pe) => Some((QuoteStyle::Curly, Closer::Single)),
        _ => None,
    }
}

fn closes(closer: Closer, c: &[char], i: usize, pe: usize) -> bool {
    match closer {
        Closer::Straight => c[i] == '"',
        Closer::CurlyDouble => c[i] == '”',
        Closer::LowDouble => c[i] == '“' || c[i] == '”',
        Closer::Guillemet => c[i] == '»',
        Closer::Single => c[i] == '’' && !(i + 1 < pe && c[i + 1].is_alphanumeric()),
    }
}

/// Dialogue spans of all paragraphs, in order.
fn dialogue(c: &[char], paras: &[Range]) -> Vec<DialogueSpan> {
    let mut out = Vec::new();
    for &(ps, pe) in paras {
        dialogue_in_paragraph(c, ps, pe, &mut out);
    }
    out
}

fn dialogue_in_paragraph(c: &[char], ps: usize, pe: usize, out: &mut Vec<DialogueSpan>) {
    let mut singles = true;
    let mut open: Option<OpenQuote> = None;
    let mut i = ps;
    loop {
        while i < pe {
            let line_start = i == ps || is_line_break(c[i - 1]);
            if line_start && open.is_none() {
                let mut j = i;
                while j < pe && is_inline_ws(c[j]) {
                    j += 1;
                }
                if j < pe && starts_dash_speech(c, j, pe) {
                    let mut le = j;
                    while le < pe && !is_line_break(c[le]) {
                        le += 1;
                    }
                    dash_line(c, j, le, out);
                    i = le;
                    continue;
                }
            }
            match open {
                None => {
                    if let Some((style, closer)) = opener(c, i, pe, singles) {
                        let mut k = i;
                        while k > ps && is_inline_ws(c[k - 1]) {
                            k -= 1;
                        }
                        open = Some(OpenQuote {
                            start: i,
                            style,
                            closer,
                            opens_line: k == ps || is_line_break(c[k - 1]),
                        });
                    }
                }
                Some(o) => {
                    if closes(o.closer, c, i, pe) {
                        out.push(DialogueSpan {
                            start: o.start,
                            end: i + 1,
                            style: o.style,
                        });
                        open = None;
                    }
                }
            }
            i += 1;
        }
        match open.take() {
            Some(o) if o.closer == Closer::Single && !o.opens_line => {
                // An apostrophe after all: rescan what followed it without single quotes.
                singles = false;
                i = o.start + 1;
            }
            Some(o) => {
                out.push(DialogueSpan {
                    start: o.start,
                    end: trim_end(c, o.start + 1, pe),
                    style: o.style,
                });
                return;
            }
            None => return,
        }
    }
}

/// Whether the line whose first non-whitespace char is at `j` is em-dash speech.
fn starts_dash_speech(c: &[char], j: usize, pe: usize) -> bool {
    match c[j] {
        '—' | '―' => true,
        '–' => j + 1 < pe && c[j + 1].is_whitespace(),
        _ => false,
    }
}

/// Em-dash speech of the line `j..le`, whose first char (at `j`) is the opening dash.
fn dash_line(c: &[char], j: usize, le: usize, out: &mut Vec<DialogueSpan>) {
    let mut speech = Some(j);
    for k in j + 1..le {
        if !is_dash(c[k]) {
            continue;
        }
        let before = c[k - 1];
        match speech {
            Some(s) if before.is_whitespace() || before == ',' => {
                push_dash_speech(c, s, k, out);
                speech = None;
            }
            None if before.is_whitespace() && (k + 1 == le || c[k + 1].is_whitespace()) => {
                speech = Some(k);
            }
            _ => {}
        }
    }
    if let Some(s) = speech {
        push_dash_speech(c, s, le, out);
    }
}

fn push_dash_speech(c: &[char], s: usize, e: usize, out: &mut Vec<DialogueSpan>) {
    let e = trim_end(c, s, e);
    if c[s..e].iter().any(|ch| ch.is_alphanumeric()) {
        out.push(DialogueSpan {
            start: s,
            end: e,
            style: QuoteStyle::EmDash,
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Scenes
// ---------------------------------------------------------------------------------------------

/// `None` if `line` is not a scene break; `Some(heading)` if it is.
fn scene_break(line: &[char]) -> Option<Option<String>> {
    let mut marks = line.iter().copied().filter(|ch| !ch.is_whitespace());
    let first = marks.next()?;
    let mut count = 1;
    let mut uniform = true;
    for ch in marks {
        if ch != first {
            uniform = false;
            break;
        }
        count += 1;
    }
    if uniform {
        match first {
            '#' | '⁂' => return Some(None),
            '*' | '-' | '_' | '~' | '•' | '·' if count >= 3 => return Some(None),
            _ => {}
        }
    }
    // A Markdown ATX heading: 1 to 6 `#`, whitespace, the title, an optional closing run.
    let s = line.iter().position(|ch| !ch.is_whitespace())?;
    let hashes = line[s..].iter().take_while(|&&ch| ch == '#').count();
    if hashes == 0 || hashes > 6 || !line.get(s + hashes)?.is_whitespace() {
        return None;
    }
    let body = &line[s + hashes..];
    let mut e = trim_end(body, 0, body.len());
    let mut k = e;
    while k > 0 && body[k - 1] == '#' {
        k -= 1;
    }
    if k < e && (k == 0 || body[k - 1].is_whitespace()) {
        e = k;
    }
    let title: String = body[..e].iter().collect::<String>().trim().to_string();
    Some((!title.is_empty()).then_some(title))
}

/// Pushes the scene whose body lies in `s..e`, trimmed. Returns `heading` back if the body is
/// blank and no scene was pushed.
fn emit_scene(
    c: &[char],
    s: usize,
    e: usize,
    heading: Option<String>,
    out: &mut Vec<Scene>,
) -> Option<String> {
    let e = e.min(c.len());
    let mut start = s;
    let mut i = s;
    while i < e && c[i].is_whitespace() {
        if is_line_break(c[i]) {
            start = i + 1;
        }
        i += 1;
    }
    if i >= e {
        return heading;
    }
    let end = trim_end(c, start, e);
    let profile = Profile::new(&c[start..end], true);
    let pacing = profile.pacing();
    out.push(Scene {
        index: out.len(),
        start,
        end,
        heading,
        kind: classify_pacing(&pacing),
        stats: profile.stats(),
        pacing,
    });
    None
}

// ---------------------------------------------------------------------------------------------
// Word lists and hints
// ---------------------------------------------------------------------------------------------

/// Lowercases `w` into `buf`, folding typographic apostrophes to `'`.
fn lower_into(buf: &mut String, w: &[char]) {
    buf.clear();
    for &ch in w {
        if ch == '’' || ch == '‘' {
            buf.push('\'');
        } else {
            buf.extend(ch.to_lowercase());
        }
    }
}

fn hint(c: &[char], s: usize, e: usize, kind: &str) -> Hint {
    Hint {
        start: s,
        end: e,
        text: c[s..e].iter().collect(),
        kind: kind.to_string(),
    }
}

fn is_ly_adverb(w: &str) -> bool {
    w.ends_with("ly")
        && w.chars().count() >= 4
        && w.chars().all(|ch| ch.is_alphabetic() || ch == '-')
        && ADVERB_EXCEPTIONS.binary_search(&w).is_err()
}

fn is_participle(w: &str) -> bool {
    if IRREGULAR_PARTICIPLES.binary_search(&w).is_ok() {
        return true;
    }
    if !w.ends_with("ed") || w.chars().count() < 4 || ED_EXCEPTIONS.binary_search(&w).is_ok() {
        return false;
    }
    !w.ends_with("eed") || EED_PARTICIPLES.binary_search(&w).is_ok()
}

/// Whether only whitespace separates two words.
fn adjacent(c: &[char], a: Range, b: Range) -> bool {
    c[a.1..b.0].iter().all(|ch| ch.is_whitespace())
}

/// If a passive phrase starts at word `k`, the index of its last word.
fn passive_at(c: &[char], ws: &[Range], k: usize, buf: &mut String) -> Option<usize> {
    lower_into(buf, &c[ws[k].0..ws[k].1]);
    if BE_FORMS.binary_search(&buf.as_str()).is_err() {
        return None;
    }
    let mut m = k + 1;
    let next = |m: usize, buf: &mut String| -> bool {
        if m < ws.len() && adjacent(c, ws[m - 1], ws[m]) {
            lower_into(buf, &c[ws[m].0..ws[m].1]);
            true
        } else {
            false
        }
    };
    if !next(m, buf) {
        return None;
    }
    if PASSIVE_GAP_WORDS.binary_search(&buf.as_str()).is_ok() || is_ly_adverb(buf) {
        m += 1;
        if !next(m, buf) {
            return None;
        }
    }
    if buf == "being" {
        m += 1;
        if !next(m, buf) {
            return None;
        }
    }
    is_participle(buf).then_some(m)
}

/// Whether a lowercased word is a form of a physical action verb.
fn is_action_word(w: &str) -> bool {
    if ACTION_FORMS.binary_search(&w).is_ok() || ACTION_BASES.binary_search(&w).is_ok() {
        return true;
    }
    let base = |s: &str| ACTION_BASES.binary_search(&s).is_ok();
    let base_or_undoubled = |s: &str| {
        if base(s) {
            return true;
        }
        // grabbed → grabb → grab, running → runn → run
        let b = s.as_bytes();
        let n = b.len();
        n >= 2
            && b[n - 1] == b[n - 2]
            && b[n - 1].is_ascii_alphabetic()
            && s.get(..n - 1).is_some_and(base)
    };
    if let Some(stem) = w.strip_suffix("ies").or_else(|| w.strip_suffix("ied")) {
        let mut with_y = String::with_capacity(stem.len() + 1);
        with_y.push_str(stem);
        with_y.push('y');
        return base(&with_y);
    }
    if let Some(stem) = w.strip_suffix("ing") {
        let mut with_e = String::with_capacity(stem.len() + 1);
        with_e.push_str(stem);
        with_e.push('e');
        return base_or_undoubled(stem) || base(&with_e);
    }
    if let Some(stem) = w.strip_suffix("ed") {
        // lunged → lunge, dashed → dash
        return base_or_undoubled(stem) || w.strip_suffix('d').is_some_and(base);
    }
    if let Some(stem) = w.strip_suffix('s') {
        return base(stem) || w.strip_suffix("es").is_some_and(base);
    }
    false
}

const STOPWORDS: &[&str] = &[
    "about",
    "above",
    "across",
    "after",
    "again",
    "against",
    "almost",
    "along",
    "already",
    "also",
    "although",
    "always",
    "among",
    "amongst",
    "another",
    "anyone",
    "anything",
    "anyway",
    "aren't",
    "around",
    "away",
    "back",
    "because",
    "been",
    "before",
    "behind",
    "being",
    "below",
    "beneath",
    "beside",
    "besides",
    "between",
    "beyond",
    "both",
    "came",
    "can't",
    "cannot",
    "come",
    "could",
    "couldn't",
    "didn",
    "didn't",
    "does",
    "doesn't",
    "doing",
    "don't",
    "done",
    "down",
    "during",
    "each",
    "either",
    "else",
    "enough",
    "even",
    "ever",
    "every",
    "everyone",
    "everything",
    "from",
    "further",
    "going",
    "hadn't",
    "hasn't",
    "have",
    "haven't",
    "having",
    "he'd",
    "he'll",
    "he's",
    "hence",
    "here",
    "hers",
    "herself",
    "himself",
    "however",
    "i'd",
    "i'll",
    "i'm",
    "i've",
    "into",
    "isn't",
    "it'd",
    "it'll",
    "it's",
    "itself",
    "just",
    "least",
    "less",
    "let's",
    "like",
    "many",
    "maybe",
    "might",
    "mine",
    "more",
    "most",
    "much",
    "must",
    "mustn't",
    "myself",
    "neither",
    "never",
    "next",
    "none",
    "nothing",
    "once",
    "only",
    "onto",
    "other",
    "others",
    "ours",
    "ourselves",
    "over",
    "perhaps",
    "quite",
    "rather",
    "same",
    "shall",
    "she'd",
    "she'll",
    "she's",
    "should",
    "shouldn't",
    "since",
    "some",
    "someone",
    "something",
    "somewhat",
    "still",
    "such",
    "than",
    "that",
    "that's",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "there's",
    "these",
    "they",
    "they'd",
    "they'll",
    "they're",
    "they've",
    "thing",
    "things",
    "this",
    "those",
    "though",
    "through",
    "throughout",
    "thus",
    "till",
    "together",
    "toward",
    "towards",
    "under",
    "unless",
    "until",
    "upon",
    "very",
    "want",
    "wants",
    "wasn't",
    "we'd",
    "we'll",
    "we're",
    "we've",
    "well",
    "went",
    "were",
    "weren't",
    "what",
    "what's",
    "whatever",
    "when",
    "whenever",
    "where",
    "whether",
    "which",
    "while",
    "whom",
    "whose",
    "will",
    "with",
    "within",
    "without",
    "won't",
    "would",
    "wouldn't",
    "you'd",
    "you'll",
    "you're",
    "you've",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

const ADVERB_EXCEPTIONS: &[&str] = &[
    "ally",
    "anomaly",
    "apply",
    "assembly",
    "beastly",
    "belly",
    "billy",
    "bodily",
    "brotherly",
    "bubbly",
    "bully",
    "burly",
    "butterfly",
    "chilly",
    "comely",
    "comply",
    "costly",
    "courtly",
    "cowardly",
    "crinkly",
    "cuddly",
    "curly",
    "daily",
    "deadly",
    "doily",
    "dolly",
    "dragonfly",
    "early",
    "earthly",
    "elderly",
    "emily",
    "family",
    "fatherly",
    "firefly",
    "fly",
    "folly",
    "friendly",
    "frilly",
    "gadfly",
    "ghastly",
    "ghostly",
    "giggly",
    "gnarly",
    "godly",
    "grisly",
    "gristly",
    "gully",
    "heavenly",
    "hilly",
    "holly",
    "holy",
    "homely",
    "homily",
    "hourly",
    "imply",
    "italy",
    "jelly",
    "jiggly",
    "jolly",
    "july",
    "kelly",
    "likely",
    "lily",
    "lively",
    "lonely",
    "lovely",
    "lowly",
    "manly",
    "mealy",
    "measly",
    "melancholy",
    "miserly",
    "molly",
    "monopoly",
    "monthly",
    "motherly",
    "multiply",
    "neighborly",
    "neighbourly",
    "nightly",
    "oily",
    "only",
    "orderly",
    "pearly",
    "polly",
    "prickly",
    "princely",
    "queenly",
    "rally",
    "rely",
    "reply",
    "saintly",
    "sally",
    "scholarly",
    "shapely",
    "sickly",
    "silly",
    "sly",
    "smelly",
    "sparkly",
    "sprightly",
    "stately",
    "supply",
    "surly",
    "tally",
    "timely",
    "ugly",
    "ungodly",
    "unlikely",
    "unruly",
    "unseemly",
    "unsightly",
    "weekly",
    "wily",
    "wobbly",
    "woolly",
    "worldly",
    "wriggly",
    "wrinkly",
    "yearly",
];

const PASSIVE_GAP_WORDS: &[&str] = &[
    "almost", "already", "also", "always", "even", "ever", "indeed", "just", "later", "never",
    "not", "now", "often", "once", "only", "quite", "soon", "still", "then", "too",
];

const BE_FORMS: &[&str] = &[
    "am", "are", "aren't", "be", "been", "being", "is", "isn't", "was", "wasn't", "were", "weren't",
];

const IRREGULAR_PARTICIPLES: &[&str] = &[
    "arisen",
    "awoken",
    "beaten",
    "begun",
    "bent",
    "bitten",
    "bled",
    "blown",
    "born",
    "borne",
    "bought",
    "bound",
    "bred",
    "broken",
    "brought",
    "built",
    "burnt",
    "cast",
    "caught",
    "chosen",
    "clung",
    "crept",
    "cut",
    "dealt",
    "done",
    "drawn",
    "dreamt",
    "driven",
    "drunk",
    "dug",
    "eaten",
    "fallen",
    "fed",
    "felt",
    "fled",
    "flung",
    "forbidden",
    "forgiven",
    "forgotten",
    "forsaken",
    "fought",
    "found",
    "frozen",
    "given",
    "ground",
    "grown",
    "held",
    "hidden",
    "hit",
    "hung",
    "hurt",
    "kept",
    "knelt",
    "known",
    "laid",
    "leapt",
    "led",
    "left",
    "lent",
    "lit",
    "lost",
    "made",
    "meant",
    "met",
    "mistaken",
    "misunderstood",
    "overcome",
    "overheard",
    "overlooked",
    "overtaken",
    "overthrown",
    "paid",
    "put",
    "read",
    "rebuilt",
    "rewritten",
    "ridden",
    "risen",
    "rung",
    "said",
    "seen",
    "sent",
    "set",
    "sewn",
    "shaken",
    "shed",
    "shorn",
    "shot",
    "shown",
    "shrunk",
    "shut",
    "slain",
    "slit",
    "slung",
    "sold",
    "sought",
    "spent",
    "split",
    "spoken",
    "spread",
    "sprung",
    "spun",
    "stolen",
    "stricken",
    "struck",
    "strung",
    "stuck",
    "stung",
    "sung",
    "sunk",
    "swept",
    "swollen",
    "sworn",
    "swung",
    "taken",
    "taught",
    "thought",
    "thrown",
    "thrust",
    "told",
    "torn",
    "understood",
    "undone",
    "unseen",
    "withdrawn",
    "woken",
    "won",
    "worn",
    "wound",
    "woven",
    "written",
];

const ED_EXCEPTIONS: &[&str] = &[
    "bed", "bred", "crooked", "hundred", "jagged", "kindred", "naked", "ragged", "red", "rugged",
    "sacred", "shed", "sled", "wicked", "wretched",
];

const EED_PARTICIPLES: &[&str] = &["agreed", "decreed", "disagreed", "freed", "guaranteed"];

const ACTION_BASES: &[&str] = &[
    "attack", "bang", "bash", "batter", "bite", "blast", "bleed", "bolt", "break", "burst",
    "catch", "charge", "chase", "claw", "clench", "climb", "clutch", "collide", "crash", "crawl",
    "crush", "dart", "dash", "dive", "dodge", "drag", "duck", "erupt", "escape", "explode",
    "fight", "flee", "flinch", "fling", "fly", "grab", "grapple", "grip", "hack", "haul", "heave",
    "hit", "hurl", "hurtle", "jab", "jerk", "jump", "kick", "kill", "knock", "lash", "launch",
    "leap", "lunge", "plunge", "pounce", "pull", "punch", "push", "race", "ram", "rip", "roll",
    "run", "rush", "scramble", "scream", "scurry", "seize", "shake", "shatter", "shoot", "shove",
    "shriek", "shudder", "skid", "slam", "slap", "slash", "slice", "slide", "smack", "smash",
    "snap", "snatch", "spin", "sprawl", "spring", "sprint", "squeeze", "stab", "stagger", "stomp",
    "strike", "struggle", "stumble", "surge", "swat", "swerve", "swing", "swipe", "tackle",
    "throw", "thrust", "topple", "tumble", "twist", "vault", "whip", "whirl", "wrench", "wrestle",
    "yank", "yell",
];

const ACTION_FORMS: &[&str] = &[
    "bit", "bitten", "bled", "broke", "broken", "caught", "dove", "fired", "fled", "flew", "flung",
    "fought", "leapt", "ran", "shook", "shot", "slid", "sprang", "sprung", "spun", "struck",
    "swung", "threw", "thrown", "tore", "torn",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of `s..e` (char offsets).
    fn sub(text: &str, s: usize, e: usize) -> String {
        text.chars().skip(s).take(e.saturating_sub(s)).collect()
    }

    fn spans(text: &str) -> Vec<(String, QuoteStyle)> {
        dialogue_spans(text)
            .into_iter()
            .map(|d| (sub(text, d.start, d.end), d.style))
            .collect()
    }

    fn texts(text: &str, hints: &[Hint]) -> Vec<String> {
        hints
            .iter()
            .map(|h| {
                assert_eq!(sub(text, h.start, h.end), h.text);
                h.text.clone()
            })
            .collect()
    }

    #[test]
    fn word_lists_are_sorted_and_lowercase() {
        for list in [
            STOPWORDS,
            ADVERB_EXCEPTIONS,
            PASSIVE_GAP_WORDS,
            BE_FORMS,
            IRREGULAR_PARTICIPLES,
            ED_EXCEPTIONS,
            EED_PARTICIPLES,
            ACTION_BASES,
            ACTION_FORMS,
            ABBREVIATIONS,
            ELISIONS,
        ] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
            assert!(list.iter().all(|w| w.to_lowercase() == *w));
        }
    }

    #[test]
    fn stats_of_empty_and_blank_text_are_zero() {
        assert_eq!(stats(""), TextStats::default());
        let blank = stats("  \n\n\t ");
        assert_eq!(blank.chars, 6);
        assert_eq!((blank.words, blank.sentences, blank.paragraphs), (0, 0, 0));
        assert_eq!(blank.avg_sentence_words, 0.0);
        assert_eq!(blank.avg_word_chars, 0.0);
        assert_eq!(pacing(""), Pacing::default());
        assert_eq!(classify(""), SceneKind::Mixed);
        let json = serde_json::to_string(&stats("")).unwrap();
        assert!(!json.contains("NaN") && !json.contains("null"), "{json}");
    }

    #[test]
    fn stats_count_words_sentences_paragraphs() {
        let s = stats("Hello world. This is a test.\n\nSecond paragraph here!");
        assert_eq!(s.words, 9);
        assert_eq!(s.sentences, 3);
        assert_eq!(s.paragraphs, 2);
        assert_eq!(s.chars, 52);
        assert_eq!(s.avg_sentence_words, 3.0);
        let letters = "Helloworld".len() + "Thisisatest".len() + "Secondparagraphhere".len();
        assert!((s.avg_word_chars - letters as f64 / 9.0).abs() < 1e-9);
    }

    #[test]
    fn sentences_survive_abbreviations_and_speech_tags() {
        let s = stats("“Go!” she said. Mr. Smith met J. R. Tolkien. “Why?” He left…");
        assert_eq!(s.sentences, 4);
        // Hyphens and apostrophes join; a heading without a full stop is its own sentence.
        let s = stats("Title\n\nA well-known man didn’t stop");
        assert_eq!((s.words, s.sentences, s.paragraphs), (6, 2, 2));
        // Combining marks stay inside a word.
        assert_eq!(stats("nai\u{0308}ve cafe\u{0301}").words, 2);
    }

    #[test]
    fn straight_quotes() {
        assert_eq!(
            spans("He said \"hello there\" and left."),
            vec![("\"hello there\"".to_string(), QuoteStyle::Straight)]
        );
        // An inch mark does not open a quote; apostrophes never do.
        assert!(spans("He was 5'10\" tall. Don't do it, James' friend said.").is_empty());
    }

    #[test]
    fn curly_quotes_with_apostrophes_inside() {
        assert_eq!(
            spans("“I don’t know,” she said. “James’ car?”"),
            vec![
                ("“I don’t know,”".to_string(), QuoteStyle::Curly),
                ("“James’ car?”".to_string(), QuoteStyle::Curly),
            ]
        );
        assert_eq!(
            spans("„Guten Tag“, sagte er."),
            vec![("„Guten Tag“".to_string(), QuoteStyle::Curly)]
        );
    }

    #[test]
    fn single_curly_quotes_and_apostrophes() {
        assert_eq!(
            spans("‘I don’t know,’ she said, ‘it’s the boys’ job.’"),
            vec![
                ("‘I don’t know,’".to_string(), QuoteStyle::Curly),
                ("‘it’s the boys’".to_string(), QuoteStyle::Curly),
            ]
        );
        assert_eq!(
            spans("He said ‘He told me “no” twice.’ Then left."),
            vec![("‘He told me “no” twice.’".to_string(), QuoteStyle::Curly)]
        );
        assert!(
            spans("Don’t go. The boys’ toys. Rock ‘n’ roll in the ‘90s, ‘til dawn.").is_empty()
        );
        // An unclosed mid-line ‘ is an apostrophe; what follows is still scanned.
        assert_eq!(
            spans("Give ‘em hell, “now” he said."),
            vec![("“now”".to_string(), QuoteStyle::Curly)]
        );
        assert_eq!(
            spans("So ‘twas. He said ‘wait and “go” then."),
            vec![("“go”".to_string(), QuoteStyle::Curly)]
        );
    }

    #[test]
    fn guillemets() {
        assert_eq!(
            spans("« Bonjour », dit-il. Puis : «Au revoir»."),
            vec![
                ("« Bonjour »".to_string(), QuoteStyle::Guillemets),
                ("«Au revoir»".to_string(), QuoteStyle::Guillemets),
            ]
        );
    }

    #[test]
    fn unclosed_quotes_end_with_their_paragraph() {
        let text = "“Wait, she said.  \n\nNext paragraph.";
        assert_eq!(
            spans(text),
            vec![("“Wait, she said.".to_string(), QuoteStyle::Curly)]
        );
        // Multi-paragraph speech: each paragraph reopens.
        let text = "“First part,\nwrapped line.\n\n“Second part,” he said. \"Straight";
        assert_eq!(
            spans(text),
            vec![
                ("“First part,\nwrapped line.".to_string(), QuoteStyle::Curly),
                ("“Second part,”".to_string(), QuoteStyle::Curly),
                ("\"Straight".to_string(), QuoteStyle::Straight),
            ]
        );
        // A single quote opening its line may run on, too.
        assert_eq!(
            spans("‘I went on and on.\n\n‘And then,’ she said."),
            vec![
                ("‘I went on and on.".to_string(), QuoteStyle::Curly),
                ("‘And then,’".to_string(), QuoteStyle::Curly),
            ]
        );
    }

    #[test]
    fn em_dash_dialogue() {
        let text = "— Je ne sais pas, — dit-il, — peut-être demain.\nIl partit.";
        assert_eq!(
            spans(text),
            vec![
                ("— Je ne sais pas,".to_string(), QuoteStyle::EmDash),
                ("— peut-être demain.".to_string(), QuoteStyle::EmDash),
            ]
        );
        assert_eq!(
            spans("—No sé —dijo él—. Quizá mañana.\n  — Yes — he said.\n– Ok then.  "),
            vec![
                ("—No sé".to_string(), QuoteStyle::EmDash),
                ("— Yes".to_string(), QuoteStyle::EmDash),
                ("– Ok then.".to_string(), QuoteStyle::EmDash),
            ]
        );
        // Not speech: a dash inside a line, an en dash number, a line of dashes.
        assert!(spans("He paused — then left.\n–5 degrees.\n— — —").is_empty());
        // A dash line inside an open quote is part of the quote.
        assert_eq!(
            spans("“Wait\n— still talking.”"),
            vec![("“Wait\n— still talking.”".to_string(), QuoteStyle::Curly)]
        );
    }

    #[test]
    fn dialogue_offsets_are_char_offsets() {
        let text = "Café — naïve 🐉 “Hi,” he said.";
        let d = dialogue_spans(text);
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].start, d[0].end), (15, 20));
        assert_eq!(sub(text, d[0].start, d[0].end), "“Hi,”");
    }

    #[test]
    fn scenes_split_at_every_break_style() {
        let text =
            "Café — naïve 🐉\nFirst scene.\n\n* * *\n\nSecond scene.\n***\nThird.\n  ---  \n#\n\n\
                    ## The End ##\n\nFourth scene here.\n⁂\nFifth.\n___\nSixth.\n* * * *\nSeventh.";
        let sc = scenes(text);
        let bodies: Vec<String> = sc.iter().map(|s| sub(text, s.start, s.end)).collect();
        assert_eq!(
            bodies,
            [
                "Café — naïve 🐉\nFirst scene.",
                "Second scene.",
                "Third.",
                "Fourth scene here.",
                "Fifth.",
                "Sixth.",
                "Seventh."
            ]
        );
        let headings: Vec<Option<&str>> = sc.iter().map(|s| s.heading.as_deref()).collect();
        assert_eq!(
            headings,
            [None, None, None, Some("The End"), None, None, None]
        );
        assert!(sc.iter().enumerate().all(|(i, s)| s.index == i));
        // Char offsets: "Second scene." starts after 14 + 1 + 12 + 2 + 5 + 2 chars.
        assert_eq!(sc[1].start, 36);
        assert_eq!(sc[1].end, 49);
        assert_eq!(sc[0].stats.words, 4);
        assert_eq!(sc[3].stats.words, 3);
    }

    #[test]
    fn scenes_headings_and_edge_cases() {
        assert!(scenes("").is_empty());
        assert!(scenes(" \n\n***\n\n").is_empty());
        let one = scenes("Just text.\n#hashtag and -- dashes\n**bold**");
        assert_eq!(one.len(), 1);
        assert_eq!((one[0].start, one[0].end), (0, 42));
        assert_eq!(one[0].heading, None);

        let text = "# Chapter One\n\n* * *\n\n    Indented text.\n\n# Two #\n\r\nMore.\r\n";
        let sc = scenes(text);
        assert_eq!(sc.len(), 2);
        assert_eq!(sc[0].heading.as_deref(), Some("Chapter One"));
        assert_eq!(sub(text, sc[0].start, sc[0].end), "    Indented text.");
        assert_eq!(sc[1].heading.as_deref(), Some("Two"));
        assert_eq!(sub(text, sc[1].start, sc[1].end), "More.");

        // A heading replaces a carried one; seven hashes are not a heading.
        let sc = scenes("## A\n## B\nText\n####### C\n");
        assert_eq!(sc.len(), 1);
        assert_eq!(sc[0].heading.as_deref(), Some("B"));
        assert_eq!(sc[0].stats.words, 2);
    }

    const DIALOGUE: &str = "“Where were you last night?” Anna asked.\n\n\
        “Out,” he said. “Walking. Thinking about what you told me.”\n\n\
        “And what did you decide?”\n\n\
        “That you were right. I should have listened to you from the start.”";

    const ACTION: &str = "He ducked. The blade whistled past his ear and slammed into the wall. \
        He rolled, grabbed the knife and threw it. The man staggered back. \
        Marco lunged, kicked the door open and sprinted down the stairs. \
        Glass shattered behind him. He jumped.";

    const DESCRIPTION: &str = "The valley lay quiet beneath a pale winter sky, its meadows \
        silvered with frost and its hedgerows heavy with the last red berries of the year. \
        Far below, the river wound between the old stone houses of the village, dark and slow \
        and patient as it had been for a thousand years, carrying the reflections of the \
        chimneys and the bare elms toward the distant sea.";

    #[test]
    fn classification_of_clear_passages() {
        assert_eq!(classify(DIALOGUE), SceneKind::Dialogue);
        assert_eq!(classify(ACTION), SceneKind::Action);
        assert_eq!(classify(DESCRIPTION), SceneKind::Description);
        let p = pacing(DIALOGUE);
        assert!(p.dialogue_ratio > 0.8 && p.dialogue_ratio <= 1.0, "{p:?}");
        let p = pacing(ACTION);
        assert!(p.action_density >= ACTION_STRONG_DENSITY, "{p:?}");
        assert!(p.short_sentence_ratio > 0.0 && p.sentence_words_stddev > 0.0);
        let p = pacing(DESCRIPTION);
        assert_eq!(p.action_density, 0.0);
        let words = stats(DESCRIPTION).words as f64;
        assert!((p.paragraphs_per_1000_words - 1000.0 / words).abs() < 1e-9);
        let mixed = format!("{ACTION}\n\n{DESCRIPTION}\n\n{DESCRIPTION}");
        assert_eq!(classify(&mixed), SceneKind::Mixed);
        let sc = scenes(&format!(
            "{DIALOGUE}\n\n* * *\n\n{ACTION}\n\n# Valley\n\n{DESCRIPTION}"
        ));
        let kinds: Vec<SceneKind> = sc.iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            [
                SceneKind::Dialogue,
                SceneKind::Action,
                SceneKind::Description
            ]
        );
    }

    #[test]
    fn action_verb_forms() {
        for w in [
            "grab", "grabbed", "grabbing", "grabs", "lunged", "lunging", "ran", "running", "dives",
            "diving", "scurried", "struck", "hitting",
        ] {
            assert!(is_action_word(w), "{w}");
        }
        for w in ["walked", "the", "fire", "tears", "", "s", "ing", "ed"] {
            assert!(!is_action_word(w), "{w}");
        }
    }

    #[test]
    fn repeated_words_counts_and_orders() {
        let text = "The dragon saw the dragon. Dragons! The DRAGON slept near the castle; \
                    castle walls. That that that would would. Zeal zeal, able able.";
        let r = repeated_words(text, 2);
        let got: Vec<(&str, usize)> = r.iter().map(|w| (w.word.as_str(), w.count)).collect();
        assert_eq!(
            got,
            [("dragon", 3), ("able", 2), ("castle", 2), ("zeal", 2)]
        );
        assert_eq!(repeated_words(text, 1).len(), 8);
        assert!(repeated_words("", 1).is_empty());
        let r = repeated_words("Don’t don't DON'T", 1);
        assert!(r.is_empty(), "{r:?}");
    }

    #[test]
    fn adverb_hints() {
        let text = "Café: she quickly ran. The family was only early. He smiled happily and \
                    walked slowly to the lonely, holy hill. Ugly reply, Sally.";
        let h = adverbs(text);
        assert_eq!(texts(text, &h), ["quickly", "happily", "slowly"]);
        assert!(h.iter().all(|h| h.kind == "adverb"));
        assert_eq!((h[0].start, h[0].end), (10, 17));
    }

    #[test]
    fn passive_hints_find_be_plus_participle() {
        let text = "The cake was eaten by the dog. The letters were quickly written. He is happy. \
                    She was red. It was not seen. The door had been opened. He was being followed. \
                    It was. Taken. They are agreed but it was indeed good. Naïve, she wasn’t told.";
        let h = passive_hints(text);
        assert_eq!(
            texts(text, &h),
            [
                "was eaten",
                "were quickly written",
                "was not seen",
                "been opened",
                "was being followed",
                "are agreed",
                "wasn’t told"
            ]
        );
        assert!(h.iter().all(|h| h.kind == "passive"));
        assert!(passive_hints("").is_empty());
        assert!(passive_hints("was").is_empty());
        assert!(passive_hints("was quickly").is_empty());
    }

    #[test]
    fn serde_names_are_snake_case() {
        assert_eq!(
            serde_json::to_string(&QuoteStyle::EmDash).unwrap(),
            "\"em_dash\""
        );
        assert_eq!(
            serde_json::to_string(&SceneKind::Description).unwrap(),
            "\"description\""
        );
        let v = serde_json::to_value(&scenes("Text.")[0]).unwrap();
        assert_eq!(v["stats"]["avg_sentence_words"], 1.0);
        assert_eq!(v["pacing"]["paragraphs_per_1000_words"], 1000.0);
        assert_eq!(v["heading"], serde_json::Value::Null);
    }

    /// `cargo test --release --lib project::analysis -- --ignored` prints the timing.
    #[test]
    #[ignore]
    fn scenes_are_fast_on_five_megabytes() {
        let chunk =
            format!("{DIALOGUE}\n\n{ACTION}\n\n— Oui, — dit-il.\n\n{DESCRIPTION}\n\n* * *\n\n");
        let text = chunk.repeat(5_000_000 / chunk.len() + 1);
        let t = std::time::Instant::now();
        let sc = scenes(&text);
        let elapsed = t.elapsed();
        eprintln!("{} bytes, {} scenes in {elapsed:?}", text.len(), sc.len());
        let t = std::time::Instant::now();
        let _ = (
            stats(&text),
            dialogue_spans(&text).len(),
            repeated_words(&text, 2).len(),
        );
        let _ = (
            adverbs(&text).len(),
            passive_hints(&text).len(),
            pacing(&text),
        );
        eprintln!("other functions together: {:?}", t.elapsed());
        assert!(elapsed.as_secs_f64() < 1.0);
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    fn check_range(start: usize, end: usize, n: usize) {
        assert!(start <= end && end <= n, "{start}..{end} of {n}");
    }

    fn check_pacing(p: &Pacing) {
        for v in [
            p.avg_sentence_words,
            p.sentence_words_stddev,
            p.paragraphs_per_1000_words,
        ] {
            assert!(v.is_finite() && v >= 0.0, "{p:?}");
        }
        for v in [p.short_sentence_ratio, p.dialogue_ratio, p.action_density] {
            assert!((0.0..=1.0).contains(&v), "{p:?}");
        }
    }

    fn check_all(text: &str) {
        let n = text.chars().count();
        let st = stats(text);
        assert_eq!(st.chars, n);
        assert!(st.avg_sentence_words.is_finite() && st.avg_word_chars.is_finite());
        assert!(st.sentences <= st.words && st.paragraphs <= n);

        let spans = dialogue_spans(text);
        for d in &spans {
            check_range(d.start, d.end, n);
            assert!(d.start < d.end);
        }
        assert!(
            spans.windows(2).all(|w| w[0].end <= w[1].start),
            "{spans:?}"
        );

        let sc = scenes(text);
        for (i, s) in sc.iter().enumerate() {
            assert_eq!(s.index, i);
            check_range(s.start, s.end, n);
            assert!(s.start < s.end);
            check_pacing(&s.pacing);
        }
        assert!(sc.windows(2).all(|w| w[0].end <= w[1].start), "{sc:?}");

        check_pacing(&pacing(text));
        let _ = classify(text);
        let rw = repeated_words(text, 1);
        assert!(rw.windows(2).all(
            |w| w[0].count > w[1].count || (w[0].count == w[1].count && w[0].word < w[1].word)
        ));
        for hints in [adverbs(text), passive_hints(text)] {
            for h in &hints {
                check_range(h.start, h.end, n);
            }
            assert!(hints.windows(2).all(|w| w[0].end <= w[1].start));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn any_string_is_safe(text in any::<String>()) {
            check_all(&text);
        }

        #[test]
        fn prose_like_string_is_safe(
            text in r#"([ "“”‘’'«»—–―„*#_⁂.,!?…\n\r\t\u{2029}\u{0301}a-zA-Z0-9éï🐉-]|was |quickly |eaten | — |\n\* \* \*\n|\n## Title\n|\n\n){0,150}"#
        ) {
            check_all(&text);
        }
    }
}
