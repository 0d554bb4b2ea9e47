//! [`Text`]: a chapter's text, in chunks of at most 1 KB that know their counts, with a
//! Fenwick tree of those counts, so that finding a position costs O(log n) plus a scan of one
//! chunk, and an edit O(log n) plus the chunk's size (a chunk that grows past 1 KB is split,
//! one that shrinks below 256 bytes is merged with the next, and the tree is rebuilt: once per
//! few hundred chars typed or deleted). A clone shares the chunks until one is edited.
//!
//! It replaced `ropey::Rope` and keeps the names and the meaning of the part of its API the
//! crate used, with ropey's line breaks as this crate built it (without its `cr_lines` and
//! `unicode_lines` features): only `\n` ends a line, and the line break belongs to the line
//! it ends, so a text has one line more than it has `\n`s (a text that ends with `\n` ends
//! with an empty line; an empty text has one empty line). Positions are chars (Unicode
//! scalar values) unless a name says bytes or lines.
//!
//! Where ropey panics on a position past the end, [`Text`] clamps it to the end (and
//! [`Text::char`] gives `'\0'`): a panic in the worker is a bug, a clamped read is visible.
//! `tests/text_props.rs` checks it against ropey.
//!
//! Measured on the release wasm (2026-11-24): 1,692,385 B, 687,943 B gzip -9 with ropey
//! (40 KB of its code and str_indices' before wasm-opt), 1,652,019 B, 669,133 B gzip -9 with
//! this module (6 KB of code): −40,366 B raw, −18,810 B gzip -9.

use std::fmt;
use std::ops::{Add, Bound, RangeBounds, Sub};
use std::sync::Arc;

/// A chunk longer than this many bytes is split.
const MAX_BYTES: usize = 1024;
/// A chunk shorter than this is merged with the next one (when there is one).
const MIN_BYTES: usize = 256;
/// The size of the chunks a split makes: at least `2 * MIN_BYTES` (so that each piece of a
/// split is at least `MIN_BYTES`), at most `MAX_BYTES`.
const SPLIT_BYTES: usize = 640;

/// Counts of bytes, chars and line breaks: of a chunk, or of the text before a position.
/// The arithmetic wraps, so that the tree can add a chunk's shrinking as a "negative" delta.
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
            line: newlines(s.as_bytes()),
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
            byte: self.byte.wrapping_add(o.byte),
            char: self.char.wrapping_add(o.char),
            line: self.line.wrapping_add(o.line),
        }
    }
}

impl Sub for Pos {
    type Output = Pos;
    fn sub(self, o: Pos) -> Pos {
        Pos {
            byte: self.byte.wrapping_sub(o.byte),
            char: self.char.wrapping_sub(o.char),
            line: self.line.wrapping_sub(o.line),
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

/// Where a position is: its chunk, its byte in the chunk, and the counts before it.
type Found = (usize, usize, Pos);

/// One chunk: never empty.
#[derive(Clone)]
struct Chunk {
    /// One allocation (a chunk is read far more than edited; an edit makes a new one).
    text: Arc<str>,
    len: Pos,
}

/// A chapter's text (see the module docs): ropey's `Rope` API, for what the crate uses.
#[derive(Clone, Default)]
pub struct Text {
    chunks: Vec<Chunk>,
    /// A Fenwick tree of the chunks' counts: `tree[i]` (from 1) sums the counts of the
    /// `i & -i` chunks that end with chunk `i - 1`.
    tree: Vec<Pos>,
    /// The counts of the whole text.
    len: Pos,
}

impl Text {
    /// The text of `s`.
    #[allow(clippy::should_implement_trait)] // ropey's name; it cannot fail
    pub fn from_str(s: &str) -> Text {
        let mut text = Text {
            chunks: split(s),
            ..Text::default()
        };
        text.build();
        text
    }

    /// Length in bytes (UTF-8).
    pub fn len_bytes(&self) -> usize {
        self.len.byte
    }

    /// Length in chars.
    pub fn len_chars(&self) -> usize {
        self.len.char
    }

    /// Lines: one more than the `\n`s.
    pub fn len_lines(&self) -> usize {
        self.len.line + 1
    }

    /// The chars, in order.
    pub fn chars(&self) -> impl Iterator<Item = char> + '_ {
        self.chunks().flat_map(str::chars)
    }

    /// The text as consecutive string slices (none empty).
    pub fn chunks(&self) -> impl Iterator<Item = &str> + '_ {
        self.chunks.iter().map(|c| &*c.text)
    }

    /// The char at `char_idx` (`'\0'` past the end).
    pub fn char(&self, char_idx: usize) -> char {
        let (i, off, _) = self.seek(Key::Char, char_idx, 1);
        self.chunks
            .get(i)
            .and_then(|c| c.text[off..].chars().next())
            .unwrap_or('\0')
    }

    /// The char at byte `byte_idx` (the char a byte inside a char belongs to).
    pub fn byte_to_char(&self, byte_idx: usize) -> usize {
        self.seek(Key::Byte, byte_idx, 0).2.char
    }

    /// The byte where char `char_idx` starts.
    pub fn char_to_byte(&self, char_idx: usize) -> usize {
        self.seek(Key::Char, char_idx, 0).2.byte
    }

    /// The line (from 0) of char `char_idx`: how many `\n`s come before it.
    pub fn char_to_line(&self, char_idx: usize) -> usize {
        self.seek(Key::Char, char_idx, 0).2.line
    }

    /// The char where line `line_idx` starts (`len_chars()` for `len_lines()`).
    pub fn line_to_char(&self, line_idx: usize) -> usize {
        self.seek(Key::Line, line_idx, 0).2.char
    }

    /// Line `line_idx`, with its `\n` if it has one.
    pub fn line(&self, line_idx: usize) -> TextSlice<'_> {
        // Two seeks rather than a scan for the line's end: a line may be a whole chapter.
        let (i, off, from) = self.seek(Key::Line, line_idx, 0);
        let to = self.seek(Key::Line, line_idx.saturating_add(1), 0).2;
        self.view(i, off, from, to)
    }

    /// The line that starts at `from`, byte `off` of chunk `i`, and where the next one starts
    /// (`None` after the last): one scan, for [`Lines`].
    fn line_at(&self, (i, off, from): Found) -> (TextSlice<'_>, Option<Found>) {
        let mut to = from;
        let (mut k, mut start) = (i, from.byte - off);
        while let Some(chunk) = self.chunks.get(k) {
            let s = &chunk.text[to.byte - start..];
            if let Some(b) = s.find('\n') {
                to.byte += b + 1;
                to.char += s[..=b].chars().count();
                to.line += 1;
                return (self.view(i, off, from, to), Some((k, to.byte - start, to)));
            }
            to.byte += s.len();
            to.char += s.chars().count();
            start += chunk.text.len();
            k += 1;
        }
        (self.view(i, off, from, to), None)
    }

    /// The lines, each with its `\n` if it has one: [`Text::len_lines`] of them.
    pub fn lines(&self) -> Lines<'_> {
        Lines {
            text: self,
            at: Some((0, 0, Pos::default())),
        }
    }

    /// The chars of `char_range`.
    pub fn slice(&self, char_range: impl RangeBounds<usize>) -> TextSlice<'_> {
        let (from, to) = self.range(char_range);
        let (i, off, at) = self.seek(Key::Char, from, 0);
        self.view(i, off, at, self.seek(Key::Char, to, 0).2)
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
        let (i, off, _) = self.seek(Key::Char, char_idx, 0);
        self.edit(i, off, off, s);
        self.grew(i, Pos::of(s));
    }

    /// Remove the chars of `char_range`.
    pub fn remove(&mut self, char_range: impl RangeBounds<usize>) {
        let (from, to) = self.range(char_range);
        if from == to {
            return;
        }
        // `from` at the start of a chunk is taken there, so that a short range between two
        // chunk boundaries is inside one chunk.
        let (i, a, _) = self.seek(Key::Char, from, 1);
        let (j, b, _) = self.seek(Key::Char, to, 0);
        if i == j {
            let gone = self.edit(i, a, b, "");
            self.grew(i, Pos::default() - gone);
            return;
        }
        let end = self.chunks[i].len.byte;
        for (k, a, b) in [(i, a, end), (j, 0, b)] {
            let gone = self.edit(k, a, b, "");
            self.chunks[k].len = self.chunks[k].len - gone;
        }
        self.chunks.drain(i + 1..j);
        self.fix(i);
        self.build();
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

    /// The last chunk that starts before position `n` (counted in `key`; the first chunk
    /// for 0, the last past the end), and the counts before it: a descent of the tree.
    fn find(&self, key: Key, n: usize) -> (usize, Pos) {
        let m = self.chunks.len();
        let (mut i, mut at) = (0, Pos::default());
        let mut step = (m + 1).next_power_of_two() / 2;
        while step > 0 {
            if let Some(node) = self.tree.get(i + step) {
                let next = at + *node;
                if next.get(key) < n {
                    i += step;
                    at = next;
                }
            }
            step /= 2;
        }
        if i == m && m > 0 {
            i -= 1;
            at = at - self.chunks[i].len;
        }
        (i, at)
    }

    /// Where position `n` (counted in `key`, clamped to the end) is: its chunk, its byte in
    /// the chunk and the counts before it. A position between two chunks is the end of the
    /// first, or with `bias` 1 (for chars) the start of the second.
    fn seek(&self, key: Key, n: usize, bias: usize) -> Found {
        let (i, start) = self.find(key, n.saturating_add(bias));
        let Some(chunk) = self.chunks.get(i) else {
            return (0, 0, Pos::default());
        };
        let s = &*chunk.text;
        let want = n.saturating_sub(start.get(key));
        // The counts of the chunk before the position: what the key counted is known.
        let part = match key {
            Key::Byte => {
                let mut off = want.min(s.len());
                while !s.is_char_boundary(off) {
                    off -= 1;
                }
                Pos::of(&s[..off])
            }
            Key::Char => {
                let bytes = s.as_bytes();
                let mut part = Pos::default();
                // Eight bytes at a time while the char is not among them.
                while let Some(Ok(word)) =
                    bytes.get(part.byte..part.byte + 8).map(<[u8; 8]>::try_from)
                {
                    let w = u64::from_le_bytes(word);
                    // Continuation bytes (10xxxxxx) do not start a char.
                    let starts = 8 - (w & !(w << 1) & HIGH).count_ones() as usize;
                    if part.char + starts > want {
                        break;
                    }
                    part.char += starts;
                    part.line += zero_bytes(w ^ NEWLINES);
                    part.byte += 8;
                }
                // Index loops: at opt-level "z" iterator adapters are calls per byte.
                while part.byte < bytes.len() {
                    let c = bytes[part.byte];
                    // Not a UTF-8 continuation byte: a char starts here.
                    if (c as i8) >= -0x40 {
                        if part.char == want {
                            break;
                        }
                        part.char += 1;
                    }
                    part.line += usize::from(c == b'\n');
                    part.byte += 1;
                }
                part
            }
            Key::Line => {
                let mut part = Pos::default();
                while part.line < want {
                    match s[part.byte..].find('\n') {
                        Some(b) => part.byte += b + 1,
                        None => {
                            part.byte = s.len();
                            break;
                        }
                    }
                    part.line += 1;
                }
                part.char = s[..part.byte].chars().count();
                part
            }
        };
        (i, part.byte, start + part)
    }

    /// The text from `from` (byte `off` of chunk `i`) to `to`.
    fn view(&self, i: usize, off: usize, from: Pos, to: Pos) -> TextSlice<'_> {
        TextSlice {
            text: self,
            chunk: i,
            chunk_start: from.byte - off,
            from: from.byte,
            to: to.byte.max(from.byte),
            chars: to.char.saturating_sub(from.char),
        }
    }

    /// Replace bytes `a..b` of chunk `i` by `with` (its counts are left to the caller), and
    /// return the counts of what went.
    fn edit(&mut self, i: usize, a: usize, b: usize, with: &str) -> Pos {
        let chunk = &mut self.chunks[i];
        let gone = Pos::of(&chunk.text[a..b]);
        chunk.text = Arc::from([&chunk.text[..a], with, &chunk.text[b..]].concat());
        gone
    }

    /// Chunk `i` changed by `delta`: count it, and split it or merge it when it needs to.
    fn grew(&mut self, i: usize, delta: Pos) {
        self.chunks[i].len = self.chunks[i].len + delta;
        self.len = self.len + delta;
        if self.fix(i) {
            self.build();
        } else {
            let mut k = i + 1;
            while let Some(node) = self.tree.get_mut(k) {
                *node = *node + delta;
                k += k & k.wrapping_neg();
            }
        }
    }

    /// Split chunk `i` if too long, merge it with the next one if too short, drop it if
    /// empty (also the next one, which an edit across chunks may have shortened). Says
    /// whether the chunks changed (then the tree needs [`Text::build`]).
    fn fix(&mut self, i: usize) -> bool {
        let end = (i + 2).min(self.chunks.len());
        let window = &self.chunks[i..end];
        let pair = window.len() == 2;
        let bad = |c: &Chunk| {
            c.len.byte > MAX_BYTES || c.len.byte == 0 || (pair && c.len.byte < MIN_BYTES)
        };
        if !window.iter().any(bad) {
            return false;
        }
        let mut s = String::new();
        for c in window {
            s.push_str(&c.text);
        }
        self.chunks.splice(i..end, split(&s));
        true
    }

    /// Build the tree and the whole text's counts from the chunks' counts.
    fn build(&mut self) {
        let m = self.chunks.len();
        self.tree.clear();
        self.tree.resize(m + 1, Pos::default());
        self.len = Pos::default();
        for i in 1..=m {
            let len = self.chunks[i - 1].len;
            self.len = self.len + len;
            let node = self.tree[i] + len;
            self.tree[i] = node;
            let parent = i + (i & i.wrapping_neg());
            if let Some(p) = self.tree.get_mut(parent) {
                *p = *p + node;
            }
        }
    }
}

/// The high bit of each byte of a word.
const HIGH: u64 = 0x8080_8080_8080_8080;
/// `\n` in each byte of a word.
const NEWLINES: u64 = 0x0a0a_0a0a_0a0a_0a0a;

/// How many bytes of `w` are zero.
fn zero_bytes(w: u64) -> usize {
    let low = !HIGH;
    // The high bit of each byte that has any bit set (without carries between bytes).
    let set = ((w & low) + low) | w;
    (!set & HIGH).count_ones() as usize
}

/// How many `\n`s `s` has.
fn newlines(s: &[u8]) -> usize {
    let mut words = s.chunks_exact(8);
    let mut n = 0;
    for word in &mut words {
        if let Ok(word) = <[u8; 8]>::try_from(word) {
            n += zero_bytes(u64::from_le_bytes(word) ^ NEWLINES);
        }
    }
    for &b in words.remainder() {
        n += usize::from(b == b'\n');
    }
    n
}

/// `s` in chunks of about [`SPLIT_BYTES`] (one chunk when it fits in [`MAX_BYTES`]; none
/// when empty), cut at char boundaries.
fn split(s: &str) -> Vec<Chunk> {
    let pieces = if s.len() <= MAX_BYTES {
        1
    } else {
        s.len().div_ceil(SPLIT_BYTES)
    };
    let mut chunks = Vec::with_capacity(pieces);
    let mut from = 0;
    for k in 1..=pieces {
        // In u64: on wasm32 `len * k` overflows from about 1.7 MB of text (and wrapped
        // silently in the release build, cutting the text short).
        let mut to = (s.len() as u64 * k as u64 / pieces as u64) as usize;
        while !s.is_char_boundary(to) {
            to += 1;
        }
        if to > from {
            let text = &s[from..to];
            chunks.push(Chunk {
                text: Arc::from(text),
                len: Pos::of(text),
            });
            from = to;
        }
    }
    chunks
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        if self.len != other.len {
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
    /// The chunk where it starts, and the byte where that chunk starts.
    chunk: usize,
    chunk_start: usize,
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
        let (from, to, mut at) = (self.from, self.to, self.chunk_start);
        let chunks = self.text.chunks.get(self.chunk..).unwrap_or_default();
        chunks.iter().map_while(move |c| {
            if at >= to {
                return None;
            }
            let s = &*c.text;
            let end = (to - at).min(s.len());
            let piece = &s[from.saturating_sub(at).min(end)..end];
            at += s.len();
            Some(piece)
        })
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
    at: Option<Found>,
}

impl<'a> Iterator for Lines<'a> {
    type Item = TextSlice<'a>;

    fn next(&mut self) -> Option<TextSlice<'a>> {
        let (line, next) = self.text.line_at(self.at?);
        self.at = next;
        Some(line)
    }
}
