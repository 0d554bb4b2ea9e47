//! [`ChangeSet`]: a change to one chapter's text as a sequence of retain / delete / insert
//! operations over chars (Unicode scalar values), covering the whole document.
//!
//! A change set knows the length it applies to ([`ChangeSet::len_before`]) and produces
//! ([`ChangeSet::len_after`]). It can be applied to a [`Text`], inverted against the text it was
//! applied to, composed with a following change, transformed over a concurrent change (to
//! rebase a writer's edit made on an older version), and used to map positions.
//!
//! On the wire a change set is a JSON array of operations: `{"retain": n}`, `{"delete": n}`,
//! `{"insert": "text"}`. Operations may stop short of the end of the document; the rest is
//! retained.

use super::Text;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One operation of a change set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "ChangeOp")]
pub enum Op {
    /// Keep the next `n` chars.
    Retain(usize),
    /// Remove the next `n` chars.
    Delete(usize),
    /// Insert text at the current position.
    Insert(String),
}

/// Which side a position sticks to when text is inserted exactly at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assoc {
    /// Stay before text inserted at the position.
    Before,
    /// Move after text inserted at the position.
    After,
}

/// Why a change set cannot be built or applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChangeError {
    /// The operations cover more chars than the document has.
    #[error("the change covers {covered} chars but the text has {len}")]
    TooLong {
        /// Chars retained plus deleted.
        covered: usize,
        /// The document's length.
        len: usize,
    },
    /// A range runs past the end of the document or ends before it starts.
    #[error("range {start}..{end} is outside the text (length {len})")]
    BadRange {
        /// Range start.
        start: usize,
        /// Range end.
        end: usize,
        /// The document's length.
        len: usize,
    },
    /// The change was built for a document of another length.
    #[error("the change is for a text of {expected} chars, but the text has {actual}")]
    LengthMismatch {
        /// What the change expects.
        expected: usize,
        /// What the document has.
        actual: usize,
    },
}

/// A change to a whole document. Normalized: no empty operations, adjacent operations of
/// the same kind merged, and an insert always before an adjacent delete.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(into = "Vec<Op>", from = "Vec<Op>")]
pub struct ChangeSet {
    ops: Vec<Op>,
    len_before: usize,
    len_after: usize,
}

impl From<ChangeSet> for Vec<Op> {
    fn from(change: ChangeSet) -> Self {
        change.ops
    }
}

impl From<Vec<Op>> for ChangeSet {
    fn from(ops: Vec<Op>) -> Self {
        ChangeSet::from_ops(ops)
    }
}

fn char_len(s: &str) -> usize {
    s.chars().count()
}

/// Split `s` after `n` chars.
fn split_chars(s: &str, n: usize) -> (&str, &str) {
    match s.char_indices().nth(n) {
        Some((byte, _)) => s.split_at(byte),
        None => (s, ""),
    }
}

impl ChangeSet {
    /// The identity change for a document of `len` chars.
    pub fn identity(len: usize) -> Self {
        let mut change = ChangeSet::default();
        change.retain(len);
        change
    }

    /// Build from operations, normalizing them. The change's `len_before` is what the
    /// operations cover; use [`ChangeSet::fit`] to extend it to a document.
    pub fn from_ops(ops: impl IntoIterator<Item = Op>) -> Self {
        let mut change = ChangeSet::default();
        for op in ops {
            match op {
                Op::Retain(n) => change.retain(n),
                Op::Delete(n) => change.delete(n),
                Op::Insert(s) => change.insert(&s),
            }
        }
        change
    }

    /// Replace `start..end` (chars) of a document of `len` chars with `text`.
    pub fn replace(len: usize, start: usize, end: usize, text: &str) -> Result<Self, ChangeError> {
        if start > end || end > len {
            return Err(ChangeError::BadRange { start, end, len });
        }
        let mut change = ChangeSet::default();
        change.retain(start);
        change.insert(text);
        change.delete(end - start);
        change.retain(len - end);
        Ok(change)
    }

    /// Extend this change with a trailing retain so it covers a document of `len` chars.
    /// Fails when the operations already cover more than `len`.
    pub fn fit(mut self, len: usize) -> Result<Self, ChangeError> {
        if self.len_before > len {
            return Err(ChangeError::TooLong {
                covered: self.len_before,
                len,
            });
        }
        self.retain(len - self.len_before);
        Ok(self)
    }

    /// Append a retain of `n` chars.
    pub fn retain(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        self.len_before = self.len_before.saturating_add(n);
        self.len_after = self.len_after.saturating_add(n);
        if let Some(Op::Retain(last)) = self.ops.last_mut() {
            *last = last.saturating_add(n);
        } else {
            self.ops.push(Op::Retain(n));
        }
    }

    /// Append a delete of `n` chars.
    pub fn delete(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        self.len_before = self.len_before.saturating_add(n);
        if let Some(Op::Delete(last)) = self.ops.last_mut() {
            *last = last.saturating_add(n);
        } else {
            self.ops.push(Op::Delete(n));
        }
    }

    /// Append an insert of `text`.
    pub fn insert(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.len_after = self.len_after.saturating_add(char_len(text));
        match self.ops.as_mut_slice() {
            [.., Op::Insert(last)] => last.push_str(text),
            // Keep inserts before deletes so equal changes have one form.
            [.., Op::Insert(prev), Op::Delete(_)] => prev.push_str(text),
            [.., Op::Delete(n)] => {
                let n = *n;
                if let Some(slot) = self.ops.last_mut() {
                    *slot = Op::Insert(text.to_string());
                }
                self.ops.push(Op::Delete(n));
            }
            _ => self.ops.push(Op::Insert(text.to_string())),
        }
    }

    /// The operations.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// Length of the document this change applies to.
    pub fn len_before(&self) -> usize {
        self.len_before
    }

    /// Length of the document after the change.
    pub fn len_after(&self) -> usize {
        self.len_after
    }

    /// True when the change leaves the text as it is.
    pub fn is_identity(&self) -> bool {
        self.ops.iter().all(|op| matches!(op, Op::Retain(_)))
    }

    /// Bytes this change holds in memory (its operations and inserted text), for the
    /// history's memory bound.
    pub fn weight(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.ops.len() * std::mem::size_of::<Op>()
            + self
                .ops
                .iter()
                .map(|op| match op {
                    Op::Insert(s) => s.len(),
                    _ => 0,
                })
                .sum::<usize>()
    }

    /// The range touched by the change in the new document: from the first changed char to
    /// the end of the last insert or deletion point. `None` for an identity change.
    pub fn touched_range(&self) -> Option<(usize, usize)> {
        let mut pos = 0;
        let mut first = None;
        let mut last = 0;
        for op in &self.ops {
            match op {
                Op::Retain(n) => pos += n,
                Op::Delete(_) => {
                    first.get_or_insert(pos);
                    last = pos;
                }
                Op::Insert(s) => {
                    first.get_or_insert(pos);
                    pos += char_len(s);
                    last = pos;
                }
            }
        }
        first.map(|f| (f, last))
    }

    /// The range touched by the change in the old document: from the first changed char to
    /// the end of the last deletion (or the last insert point). `None` for an identity change.
    pub fn touched_range_before(&self) -> Option<(usize, usize)> {
        let mut pos = 0;
        let mut first = None;
        let mut last = 0;
        for op in &self.ops {
            match op {
                Op::Retain(n) => pos += n,
                Op::Delete(n) => {
                    first.get_or_insert(pos);
                    pos += n;
                    last = pos;
                }
                Op::Insert(_) => {
                    first.get_or_insert(pos);
                    last = pos;
                }
            }
        }
        first.map(|f| (f, last))
    }

    /// Apply to `rope`. Checks the length first, so a failed apply changes nothing.
    pub fn apply(&self, rope: &mut Text) -> Result<(), ChangeError> {
        if rope.len_chars() != self.len_before {
            return Err(ChangeError::LengthMismatch {
                expected: self.len_before,
                actual: rope.len_chars(),
            });
        }
        let mut pos = 0;
        for op in &self.ops {
            match op {
                Op::Retain(n) => pos += n,
                Op::Delete(n) => rope.remove(pos..pos + n),
                Op::Insert(s) => {
                    rope.insert(pos, s);
                    pos += char_len(s);
                }
            }
        }
        Ok(())
    }

    /// Apply to a string (convenience for tests and small texts).
    pub fn apply_str(&self, text: &str) -> Result<String, ChangeError> {
        let mut rope = Text::from_str(text);
        self.apply(&mut rope)?;
        Ok(rope.to_string())
    }

    /// The change that undoes this one, given the document it applies to.
    pub fn invert(&self, original: &Text) -> Result<ChangeSet, ChangeError> {
        if original.len_chars() != self.len_before {
            return Err(ChangeError::LengthMismatch {
                expected: self.len_before,
                actual: original.len_chars(),
            });
        }
        let mut inverse = ChangeSet::default();
        let mut pos = 0;
        for op in &self.ops {
            match op {
                Op::Retain(n) => {
                    inverse.retain(*n);
                    pos += n;
                }
                Op::Delete(n) => {
                    let removed = original.slice(pos..pos + n).to_string();
                    inverse.insert(&removed);
                    pos += n;
                }
                Op::Insert(s) => inverse.delete(char_len(s)),
            }
        }
        Ok(inverse)
    }

    /// `self` then `next`, as one change. `next` must apply to the result of `self`.
    pub fn compose(&self, next: &ChangeSet) -> Result<ChangeSet, ChangeError> {
        if self.len_after != next.len_before {
            return Err(ChangeError::LengthMismatch {
                expected: next.len_before,
                actual: self.len_after,
            });
        }
        let mut out = ChangeSet::default();
        let mut a = Cursor::new(&self.ops);
        let mut b = Cursor::new(&next.ops);
        loop {
            match (a.peek(), b.peek()) {
                (None, None) => break,
                (Some(Op::Delete(n)), _) => {
                    out.delete(*n);
                    a.advance_whole();
                }
                (_, Some(Op::Insert(s))) => {
                    out.insert(s);
                    b.advance_whole();
                }
                (Some(op_a), Some(op_b)) => {
                    let n = a.remaining_len(op_a).min(b.remaining_len(op_b));
                    match (op_a, op_b) {
                        (Op::Retain(_), Op::Retain(_)) => out.retain(n),
                        (Op::Retain(_), Op::Delete(_)) => out.delete(n),
                        (Op::Insert(_), Op::Retain(_)) => out.insert(a.insert_prefix(n)),
                        (Op::Insert(_), Op::Delete(_)) => {}
                        // Deletes of `a` and inserts of `b` are handled above.
                        _ => {}
                    }
                    a.advance(n);
                    b.advance(n);
                }
                // Lengths match, so both sides run out together.
                _ => break,
            }
        }
        Ok(out)
    }

    /// Rebase `self` over `other`, a change made concurrently to the same document: the
    /// result applies after `other` and keeps `self`'s inserts and deletes (text both delete
    /// is deleted once). At one position, `other`'s insert comes first.
    pub fn transform(&self, other: &ChangeSet) -> Result<ChangeSet, ChangeError> {
        self.transform_side(other, false)
    }

    /// [`ChangeSet::transform`] with the tie-break chosen: when both insert at one position,
    /// `self`'s insert comes first if `mine_first`. Transforming `a` over `b` with `true` and
    /// `b` over `a` with `false` converges: `b` then `a'` equals `a` then `b'`.
    pub fn transform_side(
        &self,
        other: &ChangeSet,
        mine_first: bool,
    ) -> Result<ChangeSet, ChangeError> {
        if self.len_before != other.len_before {
            return Err(ChangeError::LengthMismatch {
                expected: self.len_before,
                actual: other.len_before,
            });
        }
        let mut out = ChangeSet::default();
        let mut a = Cursor::new(&self.ops);
        let mut b = Cursor::new(&other.ops);
        loop {
            match (a.peek(), b.peek()) {
                (None, None) => break,
                (Some(Op::Insert(s)), _) if mine_first => {
                    out.insert(s);
                    a.advance_whole();
                }
                (_, Some(Op::Insert(s))) => {
                    out.retain(char_len(s));
                    b.advance_whole();
                }
                (Some(Op::Insert(s)), _) => {
                    out.insert(s);
                    a.advance_whole();
                }
                (Some(op_a), Some(op_b)) => {
                    let n = a.remaining_len(op_a).min(b.remaining_len(op_b));
                    match (op_a, op_b) {
                        (Op::Retain(_), Op::Retain(_)) => out.retain(n),
                        (Op::Delete(_), Op::Retain(_)) => out.delete(n),
                        // Already deleted by `other`.
                        (Op::Retain(_), Op::Delete(_)) | (Op::Delete(_), Op::Delete(_)) => {}
                        _ => {}
                    }
                    a.advance(n);
                    b.advance(n);
                }
                _ => break,
            }
        }
        Ok(out)
    }

    /// Where char position `pos` of the old document is in the new one. Positions inside a
    /// deleted range map to where the range was. Positions past the end clamp to the end.
    pub fn map_pos(&self, pos: usize, assoc: Assoc) -> usize {
        let mut old = 0;
        let mut new = 0;
        for op in &self.ops {
            match op {
                Op::Retain(n) => {
                    if pos < old + n {
                        return new + (pos - old);
                    }
                    old += n;
                    new += n;
                }
                Op::Delete(n) => {
                    if pos < old + n {
                        return new;
                    }
                    old += n;
                }
                Op::Insert(s) => {
                    if pos == old && assoc == Assoc::Before {
                        return new;
                    }
                    new += char_len(s);
                }
            }
        }
        new
    }
}

/// Walks a list of operations, allowing partial consumption of the current one.
struct Cursor<'a> {
    ops: &'a [Op],
    index: usize,
    /// Chars of the current operation already consumed.
    offset: usize,
}

impl<'a> Cursor<'a> {
    fn new(ops: &'a [Op]) -> Self {
        Self {
            ops,
            index: 0,
            offset: 0,
        }
    }

    fn peek(&self) -> Option<&'a Op> {
        self.ops.get(self.index)
    }

    fn remaining_len(&self, op: &Op) -> usize {
        let total = match op {
            Op::Retain(n) | Op::Delete(n) => *n,
            Op::Insert(s) => char_len(s),
        };
        total - self.offset
    }

    /// The next `n` chars of the current insert, from the current offset.
    fn insert_prefix(&self, n: usize) -> &'a str {
        match self.peek() {
            Some(Op::Insert(s)) => {
                let (_, rest) = split_chars(s, self.offset);
                split_chars(rest, n).0
            }
            _ => "",
        }
    }

    fn advance(&mut self, n: usize) {
        if let Some(op) = self.peek() {
            if n >= self.remaining_len(op) {
                self.index += 1;
                self.offset = 0;
            } else {
                self.offset += n;
            }
        }
    }

    fn advance_whole(&mut self) {
        self.index += 1;
        self.offset = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_apply_invert() {
        let text = "Café au lait 🐉 done";
        let len = text.chars().count();
        let change = ChangeSet::replace(len, 5, 7, "with").unwrap();
        assert_eq!(change.apply_str(text).unwrap(), "Café with lait 🐉 done");
        let rope = Text::from_str(text);
        let inverse = change.invert(&rope).unwrap();
        let after = change.apply_str(text).unwrap();
        assert_eq!(inverse.apply_str(&after).unwrap(), text);
    }

    #[test]
    fn normalized_form_puts_inserts_before_deletes() {
        let a = ChangeSet::from_ops([Op::Retain(2), Op::Delete(3), Op::Insert("x".into())]);
        let b = ChangeSet::from_ops([Op::Retain(2), Op::Insert("x".into()), Op::Delete(3)]);
        assert_eq!(a, b);
        assert_eq!(
            a.ops(),
            &[Op::Retain(2), Op::Insert("x".into()), Op::Delete(3)]
        );
    }

    #[test]
    fn wire_format() {
        let change = ChangeSet::replace(10, 2, 4, "ab").unwrap();
        let json = serde_json::to_string(&change).unwrap();
        assert_eq!(
            json,
            r#"[{"retain":2},{"insert":"ab"},{"delete":2},{"retain":6}]"#
        );
        let back: ChangeSet = serde_json::from_str(&json).unwrap();
        assert_eq!(back, change);
        let short: ChangeSet = serde_json::from_str(r#"[{"retain":1},{"insert":"z"}]"#).unwrap();
        assert_eq!(short.clone().fit(5).unwrap().len_before(), 5);
        assert!(matches!(
            short.fit(0),
            Err(ChangeError::TooLong { covered: 1, len: 0 })
        ));
    }

    #[test]
    fn apply_rejects_wrong_length_and_changes_nothing() {
        let change = ChangeSet::replace(3, 0, 1, "x").unwrap();
        let mut rope = Text::from_str("abcd");
        assert!(change.apply(&mut rope).is_err());
        assert_eq!(rope.to_string(), "abcd");
    }

    #[test]
    fn map_pos_with_assoc() {
        let change = ChangeSet::replace(10, 4, 4, "xyz").unwrap();
        assert_eq!(change.map_pos(3, Assoc::Before), 3);
        assert_eq!(change.map_pos(4, Assoc::Before), 4);
        assert_eq!(change.map_pos(4, Assoc::After), 7);
        assert_eq!(change.map_pos(5, Assoc::Before), 8);
        let delete = ChangeSet::replace(10, 2, 6, "").unwrap();
        assert_eq!(delete.map_pos(4, Assoc::After), 2);
        assert_eq!(delete.map_pos(6, Assoc::After), 2);
        assert_eq!(delete.map_pos(7, Assoc::After), 3);
        assert_eq!(delete.map_pos(10, Assoc::After), 6);
    }

    #[test]
    fn transform_keeps_both_edits() {
        let base = "The cat sat.";
        let len = base.chars().count();
        let agent = ChangeSet::replace(len, 4, 7, "dog").unwrap();
        let user = ChangeSet::replace(len, 12, 12, " It purred.").unwrap();
        let rebased = user.transform(&agent).unwrap();
        let after_agent = agent.apply_str(base).unwrap();
        assert_eq!(
            rebased.apply_str(&after_agent).unwrap(),
            "The dog sat. It purred."
        );
    }

    #[test]
    fn transform_of_overlapping_deletes_deletes_once() {
        let len = 10;
        let a = ChangeSet::replace(len, 2, 6, "").unwrap();
        let b = ChangeSet::replace(len, 4, 8, "").unwrap();
        let text = "0123456789";
        let a_then = b.transform(&a).unwrap();
        let result = a_then.apply_str(&a.apply_str(text).unwrap()).unwrap();
        assert_eq!(result, "0189");
    }
}
