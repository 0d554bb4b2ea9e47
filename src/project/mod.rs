//! The manuscript: a project's ordered chapters, their text and versions, change sets,
//! structure analysis and text search.
//!
//! Text lives in a [`Text`] (chunks of a few KB), so edits cost a chunk and a pass over the
//! chunk list, not the whole text, on multi-megabyte chapters. Every
//! change to a chapter goes through [`Chapter::apply`], which bumps the chapter's version and
//! keeps a bounded log of recent changes so that a writer's change based on an older version
//! can be rebased ([`Chapter::rebase`]) instead of dropped.

pub mod analysis;
pub mod changeset;
pub mod pattern;
pub mod search;
pub mod text;

use std::cell::Cell;
use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use self::changeset::{Assoc, ChangeError, ChangeSet};
pub use self::text::Text;

/// [`Chapter::find`] searches the text in windows of at least this many bytes.
const FIND_WINDOW_BYTES: usize = 4096;

/// [`Project::find_chapter`] takes the start of an id of at least this many characters (the
/// first group of a UUID) for the id.
pub const MIN_ID_PREFIX: usize = 8;

/// How many recent changes each chapter keeps for rebasing writer edits.
pub const REBASE_LOG_LEN: usize = 4096;

/// Errors about the manuscript.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// No chapter matches.
    #[error("no chapter '{query}'{hint}")]
    NoSuchChapter {
        /// What was asked for.
        query: String,
        /// Names the chapters that exist or the closest ones.
        hint: String,
    },
    /// The change does not fit the chapter.
    #[error("the change does not fit chapter '{chapter}': {source}")]
    BadChange {
        /// The chapter id.
        chapter: String,
        /// Why.
        source: ChangeError,
    },
    /// The base version is newer than the chapter's version.
    #[error("chapter '{chapter}' is at version {current}; version {base} does not exist yet")]
    FutureVersion {
        /// The chapter id.
        chapter: String,
        /// The version the change was based on.
        base: u64,
        /// The chapter's version.
        current: u64,
    },
    /// The base version is older than the rebase log reaches.
    #[error("chapter '{chapter}' is at version {current}; version {base} is too old to rebase onto (oldest is {oldest}); reload the chapter")]
    StaleVersion {
        /// The chapter id.
        chapter: String,
        /// The version the change was based on.
        base: u64,
        /// The chapter's version.
        current: u64,
        /// The oldest version still rebasable.
        oldest: u64,
    },
    /// A project must keep at least one chapter, titles must not be empty, and so on.
    #[error("{0}")]
    Invalid(String),
}

/// One chapter: an id, a title and text, with a version bumped by every change.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Chapter {
    /// Stable id.
    pub id: String,
    /// Title, such as "The Lighthouse".
    pub title: String,
    #[serde(with = "text_json")]
    text: Text,
    version: u64,
    /// Recent changes: `log[i]` took the chapter from version `version - log.len() + i`.
    #[serde(skip)]
    log: VecDeque<ChangeSet>,
    /// The word count, cached until the text changes (counting is linear in the text).
    #[serde(skip)]
    words: Cell<Option<(u64, usize)>>,
}

mod text_json {
    use super::Text;
    use serde::{Deserialize, Deserializer, Serializer};

    /// The text as one JSON string.
    pub fn serialize<S: Serializer>(text: &Text, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(text)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        let text = String::deserialize(d)?;
        Ok(Text::from_str(&text))
    }
}

impl PartialEq for Chapter {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.title == other.title
            && self.version == other.version
            && self.text == other.text
    }
}

impl Chapter {
    /// A chapter at version 0.
    pub fn new(id: impl Into<String>, title: impl Into<String>, text: &str) -> Self {
        Self {
            id: id.into(),
            title: title.into(),
            text: Text::from_str(text),
            version: 0,
            log: VecDeque::new(),
            words: Cell::new(None),
        }
    }

    /// A chapter as it was stored: its text at `version`, with an empty rebase log (changes
    /// based on older versions than the stored one can no longer be rebased).
    pub fn restore(
        id: impl Into<String>,
        title: impl Into<String>,
        text: &str,
        version: u64,
    ) -> Self {
        Self {
            version,
            ..Self::new(id, title, text)
        }
    }

    /// A chapter as it was stored, with the changes that led to `version` (oldest first; the
    /// last took it to `version`), so that a writer's change based on one of those versions
    /// can still be rebased. At most [`REBASE_LOG_LEN`] are kept.
    pub fn restore_with_log(
        id: impl Into<String>,
        title: impl Into<String>,
        text: &str,
        version: u64,
        log: impl IntoIterator<Item = ChangeSet>,
    ) -> Self {
        let mut log: VecDeque<ChangeSet> = log.into_iter().collect();
        while log.len() > REBASE_LOG_LEN || log.len() as u64 > version {
            log.pop_front();
        }
        Self {
            log,
            ..Self::restore(id, title, text, version)
        }
    }

    /// The text.
    pub fn text(&self) -> &Text {
        &self.text
    }

    /// Length in chars.
    pub fn len_chars(&self) -> usize {
        self.text.len_chars()
    }

    /// Lines: what lies between newlines (`\n`), so one more than the newlines (an empty
    /// chapter has one empty line).
    pub fn len_lines(&self) -> usize {
        self.text.len_lines()
    }

    /// Words, as [`analysis::stats`] counts them (and `run_analysis` reports). Counted once
    /// per version.
    pub fn word_count(&self) -> usize {
        if let Some((version, words)) = self.words.get() {
            if version == self.version {
                return words;
            }
        }
        let words = analysis::stats(&self.text.to_string()).words;
        self.words.set(Some((self.version, words)));
        words
    }

    /// The version: how many changes were applied since the chapter was created.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Apply a change (which must cover the whole text) and return the new version. A change
    /// that does not fit leaves the chapter as it was.
    pub fn apply(&mut self, change: &ChangeSet) -> Result<u64, EditError> {
        change
            .apply(&mut self.text)
            .map_err(|source| EditError::BadChange {
                chapter: self.id.clone(),
                source,
            })?;
        self.version += 1;
        self.words.set(None);
        self.log.push_back(change.clone());
        if self.log.len() > REBASE_LOG_LEN {
            self.log.pop_front();
        }
        Ok(self.version)
    }

    /// Take back the last applied change, given its inverse: text, version and rebase log
    /// return to what they were before it. Used to roll back a failed command.
    pub fn rollback(&mut self, inverse: &ChangeSet) -> Result<(), EditError> {
        inverse
            .apply(&mut self.text)
            .map_err(|source| EditError::BadChange {
                chapter: self.id.clone(),
                source,
            })?;
        self.version = self.version.saturating_sub(1);
        self.words.set(None);
        self.log.pop_back();
        Ok(())
    }

    /// Rebase a change made on `base` over every change applied since, so that it applies to
    /// the current text. Inserts of the rebased change keep their text; deletes skip what is
    /// already gone. A change may stop short of the end of the text (the rest is retained).
    pub fn rebase(&self, base: u64, change: ChangeSet) -> Result<ChangeSet, EditError> {
        if base > self.version {
            return Err(EditError::FutureVersion {
                chapter: self.id.clone(),
                base,
                current: self.version,
            });
        }
        let oldest = self.version - self.log.len() as u64;
        if base < oldest {
            return Err(EditError::StaleVersion {
                chapter: self.id.clone(),
                base,
                current: self.version,
                oldest,
            });
        }
        let skip = (base - oldest) as usize;
        let base_len = match self.log.get(skip) {
            Some(first) => first.len_before(),
            None => self.len_chars(),
        };
        let bad = |source| EditError::BadChange {
            chapter: self.id.clone(),
            source,
        };
        let mut change = change.fit(base_len).map_err(bad)?;
        for later in self.log.iter().skip(skip) {
            change = change.transform(later).map_err(bad)?;
        }
        Ok(change)
    }

    /// The first exact occurrence of `query`, as a char range, searched in windows of a few KB
    /// of the text (each starting with the end of the one before, for a match across them)
    /// rather than in one copy of the chapter, or chunk by chunk (a search per chunk costs
    /// more than copying the chunk). `None` for an empty query.
    pub fn find(&self, query: &str) -> Option<(usize, usize)> {
        if query.is_empty() {
            return None;
        }
        let found_at = |byte: usize| {
            let start = self.text.byte_to_char(byte);
            (start, start + query.chars().count())
        };
        // Long queries: one contiguous copy is simpler and no slower.
        if query.len() > 4096 {
            let text = self.text.to_string();
            return text.find(query).map(found_at);
        }
        let keep = query.len() - 1;
        let mut window = String::new();
        // Where the window starts in the text, in bytes.
        let mut window_start = 0;
        let mut chunks = self.text.chunks().peekable();
        while let Some(chunk) = chunks.next() {
            window.push_str(chunk);
            if window.len() < FIND_WINDOW_BYTES && chunks.peek().is_some() {
                continue;
            }
            if let Some(b) = window.find(query) {
                return Some(found_at(window_start + b));
            }
            // Only the window's last `keep` bytes can start a match that ends further on.
            let cut = ceil_boundary(&window, window.len() - keep.min(window.len()));
            window_start += cut;
            window.drain(..cut);
        }
        None
    }

    /// The text of a char range, clamped to the text.
    pub fn slice(&self, start: usize, end: usize) -> String {
        let len = self.len_chars();
        let end = end.min(len);
        let start = start.min(end);
        self.text.slice(start..end).to_string()
    }
}

/// The smallest char boundary of `s` at or after byte `i` (`s.len()` at most).
fn ceil_boundary(s: &str, i: usize) -> usize {
    (i..=s.len())
        .find(|&b| s.is_char_boundary(b))
        .unwrap_or(s.len())
}

/// A highlight shown in the editor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(optional_fields)]
pub struct Highlight {
    /// Chapter id.
    pub chapter: String,
    /// Char range start.
    pub start: usize,
    /// Char range end.
    pub end: usize,
    /// `warning`, `suggestion` or `info`.
    pub style: String,
    /// Optional note shown with the highlight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Editor UI state held in the core, changed by the ui tools and reported as `ui` events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct UiState {
    /// The chapter shown in the editor.
    pub active_chapter: Option<String>,
    /// Cursor position (chars) in the active chapter.
    pub cursor: usize,
    /// Selected char range in the active chapter.
    pub selection: Option<(usize, usize)>,
    /// The side panel shown.
    pub panel: String,
    /// Distraction-free mode.
    pub zen_mode: bool,
    /// Highlights shown in the editor.
    pub highlights: Vec<Highlight>,
    /// Position (chars) scrolled into view.
    pub scroll: usize,
    /// How many times a tool asked the editor to bring `scroll` (and the selection) into
    /// view: scrolling, navigating to text or a scene, opening a chapter. The editor scrolls
    /// whenever it changes, so asking twice for the same place scrolls twice.
    #[serde(default)]
    pub reveal: u64,
}

impl UiState {
    /// Scroll the editor to `scroll` (chars in the active chapter), asking it to show that
    /// place even when the position is the one it had (see [`UiState::reveal`]).
    pub fn reveal_at(&mut self, scroll: usize) {
        self.scroll = scroll;
        self.reveal = self.reveal.wrapping_add(1);
    }

    /// Map the positions in chapter `chapter` through `change`, a change just applied to it.
    /// The cursor, selection and scroll position follow only when `active` (they belong to
    /// the active chapter); highlights follow when they are in `chapter`.
    ///
    /// The associations are those the editor page (CodeMirror) uses when it maps its own
    /// state through the same change, so the core and the page agree:
    /// - a selection or highlight keeps covering the same characters: its start stays after
    ///   text inserted exactly at it and its end before text inserted exactly at it, so text
    ///   inserted at its edges stays outside. If all of its text is deleted, a selection
    ///   collapses to where it was and a highlight goes;
    /// - an empty selection stays empty and moves like the cursor; a cursor at an end of a
    ///   non-empty selection (its head) stays at that end;
    /// - the cursor (and scroll position) stays before text inserted exactly at it when
    ///   `caret` is [`Assoc::Before`] (an agent's edit, undo, redo), or moves after it with
    ///   [`Assoc::After`] (the writer typing at their cursor).
    ///
    /// Positions moved only by this mapping are saved with the project but not announced
    /// as a `ui` event: the page maps its own editor state (CodeMirror's selection and
    /// highlight decorations) through the same `edit` events with the same associations,
    /// whereas the core's positions do not include typing the page has not yet sent, so a
    /// `ui` event could move the writer's cursor while they type.
    pub fn map_through(&mut self, chapter: &str, active: bool, change: &ChangeSet, caret: Assoc) {
        if active {
            let old = self.selection;
            self.selection = old.map(|(start, end)| map_range(change, start, end, caret));
            // The cursor is the selection's head when it is at one of its ends: it stays there.
            self.cursor = match (old, self.selection) {
                (Some((start, end)), Some((new_start, new_end))) if start != end => {
                    if self.cursor == end {
                        new_end
                    } else if self.cursor == start {
                        new_start
                    } else {
                        change.map_pos(self.cursor, caret)
                    }
                }
                _ => change.map_pos(self.cursor, caret),
            };
            self.scroll = change.map_pos(self.scroll, caret);
        }
        self.highlights.retain_mut(|h| {
            if h.chapter != chapter {
                return true;
            }
            let was_empty = h.start >= h.end;
            let (start, end) = map_range(change, h.start, h.end, caret);
            h.start = start;
            h.end = end;
            was_empty || start < end
        });
    }
}

/// Map a char range through a change: a non-empty range keeps covering the same characters
/// (text inserted at its edges stays outside) and collapses where its text was deleted; an
/// empty one (or a reversed one, taken as its sorted bounds) stays empty and maps with
/// `caret`.
fn map_range(change: &ChangeSet, start: usize, end: usize, caret: Assoc) -> (usize, usize) {
    let (start, end) = (start.min(end), start.max(end));
    if start == end {
        let at = change.map_pos(start, caret);
        return (at, at);
    }
    let new_start = change.map_pos(start, Assoc::After);
    let new_end = change.map_pos(end, Assoc::Before);
    if new_start >= new_end {
        let at = new_start.min(new_end);
        (at, at)
    } else {
        (new_start, new_end)
    }
}

impl Default for UiState {
    fn default() -> Self {
        Self {
            active_chapter: None,
            cursor: 0,
            selection: None,
            panel: "chat".into(),
            zen_mode: false,
            highlights: Vec::new(),
            scroll: 0,
            reveal: 0,
        }
    }
}

/// A writing project: ordered chapters and the editor's UI state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Project {
    /// Stable id.
    pub id: String,
    /// The project's name.
    pub name: String,
    /// Chapters in reading order; a chapter's number is its index + 1.
    pub chapters: Vec<Chapter>,
    /// Editor UI state.
    pub ui: UiState,
}

impl Project {
    /// A project with the given chapters; the first becomes the active one.
    pub fn new(id: impl Into<String>, name: impl Into<String>, chapters: Vec<Chapter>) -> Self {
        let ui = UiState {
            active_chapter: chapters.first().map(|c| c.id.clone()),
            ..UiState::default()
        };
        Self {
            id: id.into(),
            name: name.into(),
            chapters,
            ui,
        }
    }

    /// The chapter with this id.
    pub fn chapter(&self, id: &str) -> Option<&Chapter> {
        self.chapters.iter().find(|c| c.id == id)
    }

    /// The chapter with this id, mutable.
    pub fn chapter_mut(&mut self, id: &str) -> Option<&mut Chapter> {
        self.chapters.iter_mut().find(|c| c.id == id)
    }

    /// The index of the chapter with this id.
    pub fn chapter_index(&self, id: &str) -> Option<usize> {
        self.chapters.iter().position(|c| c.id == id)
    }

    /// The active chapter, or the first one.
    pub fn active_chapter(&self) -> Option<&Chapter> {
        self.ui
            .active_chapter
            .as_deref()
            .and_then(|id| self.chapter(id))
            .or_else(|| self.chapters.first())
    }

    /// Apply a change to the chapter with id `chapter_id` (see [`Chapter::apply`]) and map the
    /// editor's positions in that chapter through it ([`UiState::map_through`]: the cursor,
    /// selection and scroll position when it is the active chapter, its highlights always),
    /// carets staying before text inserted at them. Every change to a chapter's text goes
    /// through here or [`Project::apply_change_with`], so positions always name the text
    /// they named. A change that does not fit changes nothing. Returns the new version.
    pub fn apply_change(&mut self, chapter_id: &str, change: &ChangeSet) -> Result<u64, EditError> {
        self.apply_change_with(chapter_id, change, Assoc::Before)
    }

    /// [`Project::apply_change`] with the association of carets (the cursor, an empty
    /// selection, the scroll position): [`Assoc::After`] for the writer's own typing, which
    /// happens at their cursor.
    pub fn apply_change_with(
        &mut self,
        chapter_id: &str,
        change: &ChangeSet,
        caret: Assoc,
    ) -> Result<u64, EditError> {
        let active = self.active_chapter().is_some_and(|c| c.id == chapter_id);
        let Some(chapter) = self.chapters.iter_mut().find(|c| c.id == chapter_id) else {
            return Err(EditError::NoSuchChapter {
                query: chapter_id.to_string(),
                hint: self.chapter_list_hint(),
            });
        };
        let version = chapter.apply(change)?;
        self.ui.map_through(chapter_id, active, change, caret);
        Ok(version)
    }

    /// Find a chapter by id, number ("3", "Chapter 3", "three"), title (or part of one), or
    /// the start of an id that no other chapter's id shares (a model copying a long id may
    /// stop early; [`MIN_ID_PREFIX`] characters or more).
    pub fn find_chapter(&self, query: &str) -> Result<&Chapter, EditError> {
        let query = query.trim();
        if let Some(chapter) = self.chapter(query) {
            return Ok(chapter);
        }
        if query.chars().count() >= MIN_ID_PREFIX {
            let mut starting = self.chapters.iter().filter(|c| c.id.starts_with(query));
            if let (Some(chapter), None) = (starting.next(), starting.next()) {
                return Ok(chapter);
            }
        }
        let found = match search::parse_chapter_ref(query) {
            search::ChapterRef::Number(n) => n.checked_sub(1).and_then(|i| self.chapters.get(i)),
            search::ChapterRef::Title(title) => {
                let titles: Vec<&str> = self.chapters.iter().map(|c| c.title.as_str()).collect();
                search::match_title(&titles, &title).and_then(|i| self.chapters.get(i))
            }
        };
        found.ok_or_else(|| EditError::NoSuchChapter {
            query: query.to_string(),
            hint: self.chapter_list_hint(),
        })
    }

    /// Insert `chapter` at `index` (clamped to the end). Its id must be new.
    pub fn insert_chapter(&mut self, index: usize, chapter: Chapter) -> Result<(), EditError> {
        if self.chapter(&chapter.id).is_some() {
            return Err(EditError::Invalid(format!(
                "a chapter with id '{}' already exists",
                chapter.id
            )));
        }
        let index = index.min(self.chapters.len());
        self.chapters.insert(index, chapter);
        Ok(())
    }

    /// Move the chapter with id `id` to index `to` (0-based, `0..len`). Returns whether the
    /// order changed. The UI state is unaffected (it names chapters by id).
    pub fn move_chapter(&mut self, id: &str, to: usize) -> Result<bool, EditError> {
        let from = self
            .chapter_index(id)
            .ok_or_else(|| EditError::NoSuchChapter {
                query: id.to_string(),
                hint: self.chapter_list_hint(),
            })?;
        if to >= self.chapters.len() {
            return Err(EditError::Invalid(format!(
                "position {} is out of range; the project has {} chapter{} (positions 1 to {})",
                to + 1,
                self.chapters.len(),
                if self.chapters.len() == 1 { "" } else { "s" },
                self.chapters.len()
            )));
        }
        if from == to {
            return Ok(false);
        }
        let chapter = self.chapters.remove(from);
        self.chapters.insert(to, chapter);
        Ok(true)
    }

    /// Remove the chapter with id `id` and return it with its former index. A project keeps
    /// at least one chapter. The UI state follows: highlights in the removed chapter go; if it
    /// was the active chapter (explicitly, or as the first one when none is set), the chapter
    /// that takes its place (or, if it was the last, the one before it) becomes active, with
    /// the cursor and scroll at its start and no selection.
    pub fn remove_chapter(&mut self, id: &str) -> Result<(usize, Chapter), EditError> {
        let index = self
            .chapter_index(id)
            .ok_or_else(|| EditError::NoSuchChapter {
                query: id.to_string(),
                hint: self.chapter_list_hint(),
            })?;
        if self.chapters.len() == 1 {
            return Err(EditError::Invalid(
                "a project keeps at least one chapter; add another chapter before deleting this one".into(),
            ));
        }
        let chapter = self
            .detach_chapter(index)
            .ok_or_else(|| EditError::NoSuchChapter {
                query: id.to_string(),
                hint: String::new(),
            })?;
        Ok((index, chapter))
    }

    /// Take out the chapter at `index` (`None` when there is none), even the last one (undo
    /// takes back a chapter that was added): its highlights go, and the editor moves to a
    /// neighbour if it was the active chapter.
    pub fn detach_chapter(&mut self, index: usize) -> Option<Chapter> {
        let id = self.chapters.get(index)?.id.clone();
        let was_active = self.active_chapter().is_some_and(|c| c.id == id);
        let chapter = self.chapters.remove(index);
        self.ui.highlights.retain(|h| h.chapter != id);
        if was_active {
            self.ui.active_chapter = self
                .chapters
                .get(index.min(self.chapters.len().saturating_sub(1)))
                .map(|c| c.id.clone());
            self.ui.cursor = 0;
            self.ui.selection = None;
            self.ui.scroll = 0;
        }
        Some(chapter)
    }

    /// "Chapter N" for a chapter at number `number`, or the next N that no chapter has as its
    /// title.
    pub fn default_title(&self, number: usize) -> String {
        (number..)
            .map(|n| format!("Chapter {n}"))
            .find(|t| self.chapters.iter().all(|c| c.title != *t))
            .unwrap_or_default()
    }

    /// "; chapters are: 1 "Title" (id), ..." for error messages.
    pub fn chapter_list_hint(&self) -> String {
        if self.chapters.is_empty() {
            return "; the project has no chapters".into();
        }
        let list: Vec<String> = self
            .chapters
            .iter()
            .take(30)
            .enumerate()
            .map(|(i, c)| format!("{} \"{}\" ({})", i + 1, c.title, c.id))
            .collect();
        let more = if self.chapters.len() > 30 {
            ", ..."
        } else {
            ""
        };
        format!("; chapters are: {}{more}", list.join(", "))
    }
}
