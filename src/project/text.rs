//! [`Text`]: a chapter's text, in chunks of a few KB that know their counts, so that an edit
//! costs the size of one chunk plus one pass over the chunk list (not the whole text), and a
//! clone shares the chunks until one is edited.
//!
//! It replaced `ropey::Rope` and keeps the names and the meaning of the part of its API the
//! crate used, with ropey's default line breaks as this crate built it (without its
//! `cr_lines` and `unicode_lines` features): only `\n` ends a line, and the line break
//! belongs to the line it ends, so a text has one line more than it has `\n`s (a text that
//! ends with `\n` ends with an empty line; an empty text has one empty line). Positions are
//! chars (Unicode scalar values) unless a name says bytes or lines.
//!
//! Where ropey panics on a position past the end, [`Text`] clamps it to the end (and
//! [`Text::char`] gives `'\0'`): a panic in the worker is a bug, a clamped read is visible.
//! `tests/text_props.rs` checks it against ropey.

use std::fmt;
use std::ops::{Add, Bound, RangeBounds, Sub};
use std::sync::Arc;

/// A chunk longer than this many bytes is split.
const MAX_BYTES: usize = 4096;
/// A chunk shorter than this is merged with the next one (when there is one).
const MIN_BYTES: usize = 1024;
/// The size of the chunks a split makes (at least `2 * MIN_BYTES`, so that each piece of a
/// split is at least `MIN_BYTES`, and at most `MAX_BYTES`).
const SPLIT_BYTES: usize = 2560;

/// Counts of bytes, chars and line breaks: of a chunk, or of the text before a position.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Pos {
    byte: usize,
    char: usize,
    line: usize,
}

impl Pos {
    fn of(s: &str) -> Pos {
        Pos {
            byte: s.len(),
            char: s.chars().count(),
            line: s.bytes().filter(|&b| b == b'\n').count(),
        }
    }

    fn get(self, key: Key) -> usize {
        match key {
            Key::Byte => self.byte,
            Key::Char => self.char,
            Key::Line => self.line,
        }
    }
}

impl Add for Pos {
    type Output = Pos;
    fn add(self, o: Pos) -> Pos {
        Pos {
            byte: self.byte + o.byte,
            char: self.char + o.char,
            line: self.line + o.line,
        }
    }
}

impl Sub for Pos {
    type Output = Pos;
    fn sub(self, o: Pos) -> Pos {
        Pos {
            byte: self.byte - o.byte,
            char: self.char - o.char,
            line: self.line - o.line,
        }
    }
}

/// What a position is counted in.
#[derive(Clone, Copy)]
enum Key {
    Byte,
    Char,
    /// The position just after the n-th line break (0: the start).
    Line,
}

/// One chunk: never empty.
#[derive(Clone)]
struct Chunk {
    text: Arc<String>,
    /// Counts of the text before it.
    start: Pos,
    /// Its own counts.
    len: Pos,
}

/// A chapter's text (see the module docs): ropey's `Rope` API, for what the crate uses.
#[derive(Clone, Default)]
pub struct Text {
    chunks: Vec<Chunk>,
}

impl Text {
    /// The text of `s`.
    #[allow(clippy::should_implement_trait)] // ropey's name; it cannot fail
    pub fn from_str(s: &str) -> Text {
        let mut text = Text { chunks: split(s) };
        text.restart(0);
        text
    }

    fn len(&self) -> Pos {
        self.chunks
            .last()
            .map_or(Pos::default(), |c| c.start + c.len)
    }

    /// Length in bytes (UTF-8).
    pub fn len_bytes(&self) -> usize {
        self.len().byte
    }

    /// Length in chars.
    pub fn len_chars(&self) -> usize {
        self.len().char
    }

    /// Lines: one more than the `\n`s.
    pub fn len_lines(&self) -> usize {
        self.len().line + 1
    }

    /// The chars, in order.
    pub fn chars(&self) -> impl Iterator<Item = char> + '_ {
        self.chunks().flat_map(str::chars)
    }

    /// The text as consecutive string slices (none empty).
    pub fn chunks(&self) -> impl Iterator<Item = &str> + '_ {
        self.chunks.iter().map(|c| c.text.as_str())
    }

    /// The char at `char_idx` (`'\0'` past the end).
    pub fn char(&self, char_idx: usize) -> char {
        // The chunk that holds it: the last one that starts at or before it.
        let i = self
            .chunks
            .partition_point(|c| c.start.char <= char_idx)
            .saturating_sub(1);
        self.chunks
            .get(i)
            .and_then(|c| c.text.chars().nth(char_idx - c.start.char))
            .unwrap_or('\0')
    }

    /// The char at byte `byte_idx` (the char a byte inside a char belongs to).
    pub fn byte_to_char(&self, byte_idx: usize) -> usize {
        self.seek(Key::Byte, byte_idx).2.char
    }

    /// The byte where char `char_idx` starts.
    pub fn char_to_byte(&self, char_idx: usize) -> usize {
        self.seek(Key::Char, char_idx).2.byte
    }

    /// The line (from 0) of char `char_idx`: how many `\n`s come before it.
    pub fn char_to_line(&self, char_idx: usize) -> usize {
        self.seek(Key::Char, char_idx).2.line
    }

    /// The char where line `line_idx` starts (`len_chars()` for `len_lines()`).
    pub fn line_to_char(&self, line_idx: usize) -> usize {
        self.seek(Key::Line, line_idx).2.char
    }

    /// Line `line_idx`, with its `\n` if it has one.
    pub fn line(&self, line_idx: usize) -> TextSlice<'_> {
        let from = self.seek(Key::Line, line_idx).2;
        let to = self.seek(Key::Line, line_idx.saturating_add(1)).2;
        self.view(from, to)
    }

    /// The lines, each with its `\n` if it has one: [`Text::len_lines`] of them.
    pub fn lines(&self) -> Lines<'_> {
        Lines {
            text: self,
            at: Some(Pos::default()),
        }
    }

    /// The chars of `char_range`.
    pub fn slice(&self, char_range: impl RangeBounds<usize>) -> TextSlice<'_> {
        let (from, to) = self.range(char_range);
        self.view(self.seek(Key::Char, from).2, self.seek(Key::Char, to).2)
    }

    /// Insert `s` before char `char_idx`.
    pub fn insert(&mut self, char_idx: usize, s: &str) {
        if s.is_empty() {
            return;
        }
        if self.chunks.is_empty() {
            *self = Text::from_str(s);
            return;
        }
        let (i, off, _) = self.seek(Key::Char, char_idx);
        let chunk = &mut self.chunks[i];
        Arc::make_mut(&mut chunk.text).insert_str(off, s);
        chunk.len = chunk.len + Pos::of(s);
        self.fix(i);
    }

    /// Remove the chars of `char_range`.
    pub fn remove(&mut self, char_range: impl RangeBounds<usize>) {
        let (from, to) = self.range(char_range);
        if from == to {
            return;
        }
        let (i, a, _) = self.seek(Key::Char, from);
        let (j, b, _) = self.seek(Key::Char, to);
        if i == j {
            let chunk = &mut self.chunks[i];
            let text = Arc::make_mut(&mut chunk.text);
            chunk.len = chunk.len - Pos::of(&text[a..b]);
            text.replace_range(a..b, "");
        } else {
            let first = &mut self.chunks[i];
            let text = Arc::make_mut(&mut first.text);
            first.len = first.len - Pos::of(&text[a..]);
            text.truncate(a);
            let last = &mut self.chunks[j];
            let text = Arc::make_mut(&mut last.text);
            last.len = last.len - Pos::of(&text[..b]);
            text.replace_range(..b, "");
            self.chunks.drain(i + 1..j);
        }
        self.fix(i);
    }

    /// `(from, to)` of a char range, clamped to the text.
    fn range(&self, range: impl RangeBounds<usize>) -> (usize, usize) {
        let len = self.len_chars();
        let to = match range.end_bound() {
            Bound::Included(&e) => e.saturating_add(1),
            Bound::Excluded(&e) => e,
            Bound::Unbounded => len,
        }
        .min(len);
        let from = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.saturating_add(1),
            Bound::Unbounded => 0,
        }
        .min(to);
        (from, to)
    }

    /// Where position `n` (counted in `key`, clamped to the end) is: its chunk, its byte in
    /// the chunk and its counts. A position between two chunks is the end of the first.
    fn seek(&self, key: Key, n: usize) -> (usize, usize, Pos) {
        let i = self
            .chunks
            .partition_point(|c| c.start.get(key) < n)
            .saturating_sub(1);
        let Some(chunk) = self.chunks.get(i) else {
            return (0, 0, Pos::default());
        };
        let s = chunk.text.as_str();
        let want = n - chunk.start.get(key);
        let off = match key {
            Key::Byte => {
                let mut b = want.min(s.len());
                while !s.is_char_boundary(b) {
                    b -= 1;
                }
                b
            }
            Key::Char => s.char_indices().nth(want).map_or(s.len(), |(b, _)| b),
            Key::Line => match want.checked_sub(1) {
                None => 0,
                Some(k) => s
                    .bytes()
                    .enumerate()
                    .filter(|&(_, c)| c == b'\n')
                    .nth(k)
                    .map_or(s.len(), |(b, _)| b + 1),
            },
        };
        (i, off, chunk.start + Pos::of(&s[..off]))
    }

    fn view(&self, from: Pos, to: Pos) -> TextSlice<'_> {
        TextSlice {
            text: self,
            from: from.byte,
            to: to.byte.max(from.byte),
            chars: to.char.saturating_sub(from.char),
        }
    }

    /// The parts of the chunks between bytes `from` and `to`.
    fn pieces(&self, from: usize, to: usize) -> impl Iterator<Item = &str> + '_ {
        let first = self
            .chunks
            .partition_point(|c| c.start.byte + c.len.byte <= from);
        self.chunks[first..]
            .iter()
            .take_while(move |c| c.start.byte < to)
            .map(move |c| {
                let s = c.text.as_str();
                let end = (to - c.start.byte).min(s.len());
                &s[from.saturating_sub(c.start.byte).min(end)..end]
            })
    }

    /// After an edit of chunk `i`: split it if too long, merge it with the next one if too
    /// short, drop it if empty, and count the starts again from it.
    fn fix(&mut self, i: usize) {
        let end = (i + 2).min(self.chunks.len());
        let window = &self.chunks[i..end];
        if window
            .iter()
            .any(|c| c.len.byte > MAX_BYTES || c.len.byte < MIN_BYTES)
        {
            let mut s = String::new();
            for c in window {
                s.push_str(&c.text);
            }
            self.chunks.splice(i..end, split(&s));
        }
        self.restart(i);
    }

    /// Count the starts of the chunks from `i` on.
    fn restart(&mut self, i: usize) {
        let mut at = match i.checked_sub(1).and_then(|p| self.chunks.get(p)) {
            Some(c) => c.start + c.len,
            None => Pos::default(),
        };
        for c in self.chunks.iter_mut().skip(i) {
            c.start = at;
            at = at + c.len;
        }
    }
}

/// `s` in chunks of about [`SPLIT_BYTES`] (one chunk when it fits in [`MAX_BYTES`]; none
/// when empty), cut at char boundaries; their starts are left to [`Text::restart`].
fn split(s: &str) -> Vec<Chunk> {
    let pieces = s.len().div_ceil(SPLIT_BYTES).max(1);
    let pieces = if s.len() <= MAX_BYTES { 1 } else { pieces };
    let mut chunks = Vec::with_capacity(pieces);
    let mut from = 0;
    for k in 1..=pieces {
        let mut to = s.len() * k / pieces;
        while !s.is_char_boundary(to) {
            to += 1;
        }
        if to > from {
            let text = &s[from..to];
            chunks.push(Chunk {
                text: Arc::new(text.to_string()),
                start: Pos::default(),
                len: Pos::of(text),
            });
            from = to;
        }
    }
    chunks
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        if self.len() != other.len() {
            return false;
        }
        let (mut a, mut b) = (self.chunks(), other.chunks());
        let (mut x, mut y) = ("", "");
        loop {
            if x.is_empty() {
                x = a.next().unwrap_or("");
            }
            if y.is_empty() {
                y = b.next().unwrap_or("");
            }
            let n = x.len().min(y.len());
            if n == 0 {
                // Equal lengths: both ended.
                return true;
            }
            if x.as_bytes()[..n] != y.as_bytes()[..n] {
                return false;
            }
            (x, y) = (&x[n..], &y[n..]);
        }
    }
}

impl Eq for Text {}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.chunks().try_for_each(|c| f.write_str(c))
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.chunks()).finish()
    }
}

/// A borrowed range of a [`Text`] (ropey's `RopeSlice`, for what the crate uses).
#[derive(Clone, Copy)]
pub struct TextSlice<'a> {
    text: &'a Text,
    /// Bytes of the text.
    from: usize,
    to: usize,
    chars: usize,
}

impl<'a> TextSlice<'a> {
    /// Length in chars.
    pub fn len_chars(&self) -> usize {
        self.chars
    }

    /// Length in bytes.
    pub fn len_bytes(&self) -> usize {
        self.to - self.from
    }

    /// The chars, in order.
    pub fn chars(&self) -> impl Iterator<Item = char> + 'a {
        self.chunks().flat_map(str::chars)
    }

    /// The slice as consecutive string slices.
    pub fn chunks(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.text.pieces(self.from, self.to)
    }
}

impl fmt::Display for TextSlice<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.chunks().try_for_each(|c| f.write_str(c))
    }
}

impl fmt::Debug for TextSlice<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.chunks()).finish()
    }
}

/// The lines of a [`Text`], from [`Text::lines`].
pub struct Lines<'a> {
    text: &'a Text,
    /// Where the next line starts; `None` after the last.
    at: Option<Pos>,
}

impl<'a> Iterator for Lines<'a> {
    type Item = TextSlice<'a>;

    fn next(&mut self) -> Option<TextSlice<'a>> {
        let from = self.at?;
        let mut to = from;
        self.at = None;
        for piece in self.text.pieces(from.byte, usize::MAX) {
            match piece.find('\n') {
                Some(b) => {
                    to = to + Pos::of(&piece[..=b]);
                    self.at = Some(to);
                    break;
                }
                None => to = to + Pos::of(piece),
            }
        }
        Some(self.text.view(from, to))
    }
}
