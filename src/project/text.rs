//! [`Text`]: a chapter's text, a [`ropey::Rope`] that clamps positions.
//!
//! ropey panics on a position past the end; [`Text`] clamps it to the end (and [`Text::char`]
//! gives `'\0'`): a panic in the worker is a bug, a clamped read is visible. That is its only
//! job; everything else is ropey's.
//!
//! ropey is built without its `cr_lines` and `unicode_lines` features: only `\n` ends a line,
//! and the line break belongs to the line it ends, so a text has one line more than it has
//! `\n`s (a text that ends with `\n` ends with an empty line; an empty text has one empty
//! line). Positions are chars (Unicode scalar values) unless a name says bytes or lines.

use std::fmt;
use std::ops::{Bound, RangeBounds};

use ropey::Rope;

/// A borrowed range of a [`Text`].
pub type TextSlice<'a> = ropey::RopeSlice<'a>;

/// The lines of a [`Text`], from [`Text::lines`].
pub type Lines<'a> = ropey::iter::Lines<'a>;

/// A chapter's text (see the module docs). Clones share the rope's nodes until one is edited.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Text(Rope);

impl Text {
    /// The text of `s`.
    #[allow(clippy::should_implement_trait)] // ropey's name; it cannot fail
    pub fn from_str(s: &str) -> Text {
        Text(Rope::from_str(s))
    }

    /// Length in bytes (UTF-8).
    pub fn len_bytes(&self) -> usize {
        self.0.len_bytes()
    }

    /// Length in chars.
    pub fn len_chars(&self) -> usize {
        self.0.len_chars()
    }

    /// Lines: one more than the `\n`s.
    pub fn len_lines(&self) -> usize {
        self.0.len_lines()
    }

    /// The chars, in order.
    pub fn chars(&self) -> ropey::iter::Chars<'_> {
        self.0.chars()
    }

    /// The text as consecutive string slices.
    pub fn chunks(&self) -> ropey::iter::Chunks<'_> {
        self.0.chunks()
    }

    /// The char at `char_idx` (`'\0'` past the end).
    pub fn char(&self, char_idx: usize) -> char {
        self.0.get_char(char_idx).unwrap_or('\0')
    }

    /// The char at byte `byte_idx` (the char a byte inside a char belongs to).
    pub fn byte_to_char(&self, byte_idx: usize) -> usize {
        self.0.byte_to_char(byte_idx.min(self.len_bytes()))
    }

    /// The byte where char `char_idx` starts.
    pub fn char_to_byte(&self, char_idx: usize) -> usize {
        self.0.char_to_byte(char_idx.min(self.len_chars()))
    }

    /// The line (from 0) of char `char_idx`: how many `\n`s come before it.
    pub fn char_to_line(&self, char_idx: usize) -> usize {
        self.0.char_to_line(char_idx.min(self.len_chars()))
    }

    /// The char where line `line_idx` starts (`len_chars()` for `len_lines()` and past it).
    pub fn line_to_char(&self, line_idx: usize) -> usize {
        self.0.line_to_char(line_idx.min(self.len_lines()))
    }

    /// Line `line_idx`, with its `\n` if it has one (empty past the last line).
    pub fn line(&self, line_idx: usize) -> TextSlice<'_> {
        let end = self.len_chars();
        self.0
            .get_line(line_idx)
            .unwrap_or_else(|| self.0.slice(end..end))
    }

    /// The lines, each with its `\n` if it has one: [`Text::len_lines`] of them.
    pub fn lines(&self) -> Lines<'_> {
        self.0.lines()
    }

    /// The chars of `char_range` (clamped to the text).
    pub fn slice(&self, char_range: impl RangeBounds<usize>) -> TextSlice<'_> {
        let (from, to) = self.range(char_range);
        self.0.slice(from..to)
    }

    /// Insert `s` before char `char_idx` (at the end when past it).
    pub fn insert(&mut self, char_idx: usize, s: &str) {
        let at = char_idx.min(self.len_chars());
        self.0.insert(at, s);
    }

    /// Remove the chars of `char_range` (clamped to the text).
    pub fn remove(&mut self, char_range: impl RangeBounds<usize>) {
        let (from, to) = self.range(char_range);
        self.0.remove(from..to);
    }

    /// `(from, to)` of a char range, clamped to the text (`from <= to`).
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
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}
