//! The `[AGENT MEMORY]` block of a system prompt, within a token budget.
//!
//! Sections, in priority order, each written only while budget remains:
//! 1. the bedside note (its text as it is, or [`super::BEDSIDE_DEFAULT_TEXT`] before it
//!    exists; cut short with `…` if it alone would overflow the budget);
//! 2. active goals (creation order);
//! 3. watched entities (high priority first, then creation order);
//! 4. notes: the most relevant to the request (BM25, see [`super::search`]) first, then the
//!    rest by importance and recency, at most [`CONTEXT_NOTES`], each shortened to
//!    [`CONTEXT_NOTE_CHARS`] characters.
//!
//! An item that does not fit is left out and the next one is tried; a section's title is
//! written only with its first item. When not even the frame (`[AGENT MEMORY]` …
//! `[/AGENT MEMORY]`) fits, the block is empty.
//!
//! **Token estimate:** `ceil(chars / CHARS_PER_TOKEN)` with [`CHARS_PER_TOKEN`] = 4, counting
//! Unicode scalar values ([`estimate_tokens`]). The block's estimate never exceeds the budget.

use super::search::SearchQuery;
use super::{shorten, Memory, MemoryNote, BEDSIDE_DEFAULT_TEXT};

/// Characters per token in the token estimate.
pub const CHARS_PER_TOKEN: usize = 4;
/// Most notes in the block's notes section.
pub const CONTEXT_NOTES: usize = 20;
/// Longest note text shown in the block (longer ones end with `…`).
pub const CONTEXT_NOTE_CHARS: usize = 500;
/// Longest goal title, description or entity reason shown in the block.
const CONTEXT_LINE_CHARS: usize = 300;
/// Fewest characters of the bedside note worth showing when it must be cut short.
const MIN_BEDSIDE_CHARS: usize = 40;

const OPEN: &str = "[AGENT MEMORY]\n";
const CLOSE: &str = "[/AGENT MEMORY]";

/// The token estimate of `text`: `ceil(chars / 4)`.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(CHARS_PER_TOKEN)
}

/// A text growing within a character budget.
struct Block {
    out: String,
    /// Characters in `out`.
    used: usize,
    /// Characters allowed in `out` (the closing line is reserved).
    room: usize,
}

impl Block {
    fn left(&self) -> usize {
        self.room.saturating_sub(self.used)
    }

    fn push(&mut self, text: &str, chars: usize) {
        self.out.push_str(text);
        self.used += chars;
    }

    /// Write a section: its title with the first item that fits, then every other item that
    /// fits.
    fn section(&mut self, title: &str, items: impl IntoIterator<Item = String>) {
        let title = format!("\n{title}\n");
        let title_chars = title.chars().count();
        let mut titled = false;
        for item in items {
            let line = format!("{item}\n");
            let chars = line.chars().count();
            let need = chars + if titled { 0 } else { title_chars };
            if need <= self.left() {
                if !titled {
                    self.push(&title, title_chars);
                    titled = true;
                }
                self.push(&line, chars);
            }
        }
    }
}

fn one_line(text: &str, max: usize) -> String {
    shorten(&text.split_whitespace().collect::<Vec<_>>().join(" "), max)
}

fn note_line(note: &MemoryNote) -> String {
    let tags = if note.tags.is_empty() {
        String::new()
    } else {
        format!(", tags: {}", note.tags.join(", "))
    };
    format!(
        "- [{}] ({}, {}, importance {}{tags}) {}",
        note.id,
        note.note_type.as_str(),
        note.scope.as_str(),
        note.importance,
        one_line(&note.text, CONTEXT_NOTE_CHARS)
    )
}

impl Memory {
    /// The `[AGENT MEMORY]` block of a system prompt within `token_budget` tokens: bedside
    /// note first, then active goals, watched entities (high priority first), then the notes
    /// most relevant to `request` (BM25), each section only while budget remains. Token
    /// estimate: `ceil(chars / 4)` ([`estimate_tokens`]); the result's estimate is at most
    /// `token_budget`. See the [module docs](self) for the details.
    pub fn context_block(&self, project: &str, request: &str, token_budget: usize) -> String {
        let frame = OPEN.chars().count() + CLOSE.chars().count();
        let limit = token_budget.saturating_mul(CHARS_PER_TOKEN);
        if frame > limit {
            return String::new();
        }
        let mut block = Block {
            out: String::from(OPEN),
            used: OPEN.chars().count(),
            room: limit - CLOSE.chars().count(),
        };

        // 1. The bedside note, cut short rather than left out.
        let bedside = self.bedside(project);
        let (version, text) =
            bedside.map_or((1, BEDSIDE_DEFAULT_TEXT), |n| (n.version, n.text.as_str()));
        let title = format!("Bedside note (your running plan, version {version}; rewrite it with evolve_bedside_note):\n");
        let title_chars = title.chars().count();
        let text_chars = text.chars().count();
        if title_chars + text_chars < block.left() {
            block.push(&title, title_chars);
            block.push(text, text_chars);
            block.push("\n", 1);
        } else if title_chars + MIN_BEDSIDE_CHARS + 2 <= block.left() {
            // `shorten` adds one char ("…"); one more for the newline.
            let keep = block.left() - title_chars - 2;
            let cut = format!("{}\n", shorten(text, keep));
            let cut_chars = cut.chars().count();
            block.push(&title, title_chars);
            block.push(&cut, cut_chars);
        }

        // 2. Active goals.
        block.section(
            "Active goals:",
            self.project_goals(project)
                .filter(|g| g.status == super::GoalStatus::Active)
                .map(|g| {
                    let description = if g.description.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", one_line(&g.description, CONTEXT_LINE_CHARS))
                    };
                    format!(
                        "- [{}] {} ({}% done){description}",
                        g.id,
                        one_line(&g.title, CONTEXT_LINE_CHARS),
                        g.progress
                    )
                }),
        );

        // 3. Watched entities, high priority first (the sort is stable).
        let mut watched: Vec<_> = self.project_watched(project).collect();
        watched.sort_by_key(|w| std::cmp::Reverse(w.priority));
        block.section(
            "Watched entities:",
            watched.into_iter().map(|w| {
                format!(
                    "- [{} priority] {} ({}): {}",
                    w.priority.as_str(),
                    one_line(&w.name, CONTEXT_LINE_CHARS),
                    w.entity_type.as_str(),
                    one_line(&w.reason, CONTEXT_LINE_CHARS)
                )
            }),
        );

        // 4. Notes: relevant to the request first, then by importance and recency.
        let relevant = self.search(
            project,
            &SearchQuery::text(request).with_limit(CONTEXT_NOTES + 1),
        );
        let mut notes: Vec<&MemoryNote> = Vec::with_capacity(CONTEXT_NOTES);
        for hit in &relevant {
            if let Some(note) = self.note(&hit.note.id) {
                if !note.is_bedside() && notes.len() < CONTEXT_NOTES {
                    notes.push(note);
                }
            }
        }
        if notes.len() < CONTEXT_NOTES {
            let mut rest: Vec<&MemoryNote> = self
                .visible_notes(project)
                .filter(|n| !n.is_bedside() && !notes.iter().any(|m| m.id == n.id))
                .collect();
            rest.sort_by(|a, b| super::search::by_importance(a, b));
            rest.truncate(CONTEXT_NOTES - notes.len());
            notes.extend(rest);
        }
        block.section(
            "Notes (most relevant to the request first):",
            notes.into_iter().map(note_line),
        );

        block.out.push_str(CLOSE);
        block.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_is_ceil_chars_over_four() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("海海海海海"), 2);
    }

    #[test]
    fn an_empty_memory_still_shows_the_default_bedside_text() {
        let block = Memory::new().context_block("p", "anything", 1_000);
        assert!(block.starts_with(OPEN) && block.ends_with(CLOSE), "{block}");
        assert!(block.contains(BEDSIDE_DEFAULT_TEXT));
        assert_eq!(Memory::new().context_block("p", "x", 3), "");
    }
}
