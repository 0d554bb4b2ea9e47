//! Chapter management requests, served by the [`Core`]: `add_chapter`, `rename_chapter`,
//! `move_chapter` and `delete_chapter`.
//!
//! Each one checks everything before it changes anything (a bad request changes nothing, in
//! memory or in storage), runs on the open project's session through [`Core::mutate`], and is
//! saved as one batch: the project record (name, chapter order, UI state) with the chapter
//! records it put or deleted and, for a deletion, the history records it rewrote. Each
//! change is announced with a `chapters_changed` event carrying the project summary.
//!
//! These requests are not part of the undo history: adding, renaming, moving or deleting a
//! chapter by request is not undone by `undo` (a chapter an agent creates with `write_file`
//! is, with its text: see [`crate::commands::history::ChapterEffect`]). Deleting a chapter makes the history forget it
//! ([`crate::commands::History::forget_chapter`]): effects on it are dropped from every undo
//! entry and redo run, and entries (and redo runs) left empty go, so undo and redo go on
//! working exactly in the other chapters and never fail on the missing one. The deleted
//! chapter's title and text come back in the result, so the page can offer to restore it with
//! `add_chapter` (as a new chapter: a new id, version 0, no history).

use serde::Deserialize;
use ts_rs::TS;

use super::results::{
    ChapterInProject, ChapterRemoved, DeletedChapter, HistoryForgot, ProjectSummary,
};
use super::{invalid, Core, Touched};
use crate::error::Error;
use crate::project::Chapter;
use crate::session::Session;

/// The longest chapter title accepted, in chars.
const MAX_TITLE_CHARS: usize = 300;

/// A chapter reference in params: an id, a number or a title as a string, or a number.
#[derive(TS)]
#[ts(type = "string | number")]
struct ChapterRef(String);

impl<'de> Deserialize<'de> for ChapterRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = ChapterRef;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a chapter: its id, number or title as a string, or its number")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<ChapterRef, E> {
                Ok(ChapterRef(s.to_string()))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<ChapterRef, E> {
                Ok(ChapterRef(s))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<ChapterRef, E> {
                Ok(ChapterRef(n.to_string()))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// `add_chapter` params.
#[derive(Deserialize, TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "AddChapterParams", optional_fields)]
pub(super) struct AddChapter {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    after: Option<ChapterRef>,
}

/// `rename_chapter` params.
#[derive(Deserialize, TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "RenameChapterParams", optional_fields)]
pub(super) struct RenameChapter {
    chapter: ChapterRef,
    title: String,
}

/// `move_chapter` params.
#[derive(Deserialize, TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "MoveChapterParams", optional_fields)]
pub(super) struct MoveChapter {
    chapter: ChapterRef,
    to: u64,
}

/// `delete_chapter` params.
#[derive(Deserialize, TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "DeleteChapterParams", optional_fields)]
pub(super) struct DeleteChapter {
    chapter: ChapterRef,
}

impl Core {
    /// `add_chapter {title?, text?, after?}`: a new chapter after the one `after` names, or
    /// at the end. A missing or blank title becomes "Chapter N" (N its number, or the next
    /// number that is not already a chapter's title).
    pub(super) async fn add_chapter(&self, p: AddChapter) -> Result<ChapterInProject, Error> {
        const REQUEST: &str = "add_chapter";
        let title = match p.title.as_deref() {
            Some(t) if !t.trim().is_empty() => Some(clean_title(REQUEST, t)?),
            _ => None,
        };
        let after = p
            .after
            .map(|r| reference(REQUEST, "after", r))
            .transpose()?;
        let text = p.text.unwrap_or_default();
        self.mutate(|s| {
            let index = match after.as_deref() {
                Some(after) => resolve(s, after)?.1 + 1,
                None => s.project.chapters.len(),
            };
            let title = title.unwrap_or_else(|| s.project.default_title(index + 1));
            let id = self.env.ids.next_id();
            s.project
                .insert_chapter(index, Chapter::new(id.clone(), title, &text))?;
            let result = self.chapters_changed(s, index);
            Ok((
                result,
                Touched {
                    project: true,
                    chapters: vec![id],
                    ..Touched::default()
                },
            ))
        })
        .await
    }

    /// `rename_chapter {chapter, title}`: the title trimmed, not empty, one line.
    pub(super) async fn rename_chapter(&self, p: RenameChapter) -> Result<ChapterInProject, Error> {
        const REQUEST: &str = "rename_chapter";
        let chapter = reference(REQUEST, "chapter", p.chapter)?;
        let title = clean_title(REQUEST, &p.title)?;
        self.mutate(|s| {
            let (id, index) = resolve(s, &chapter)?;
            let target = &mut s.project.chapters[index];
            if target.title == title {
                return Ok((ChapterInProject::of(&s.project, index), Touched::default()));
            }
            target.title = title;
            let result = self.chapters_changed(s, index);
            Ok((
                result,
                Touched {
                    project: true,
                    chapters: vec![id],
                    ..Touched::default()
                },
            ))
        })
        .await
    }

    /// `move_chapter {chapter, to}`: the chapter moves to position `to` (1-based, up to the
    /// number of chapters); the others keep their order.
    pub(super) async fn move_chapter(&self, p: MoveChapter) -> Result<ChapterInProject, Error> {
        const REQUEST: &str = "move_chapter";
        let chapter = reference(REQUEST, "chapter", p.chapter)?;
        self.mutate(|s| {
            let (id, _) = resolve(s, &chapter)?;
            let count = s.project.chapters.len();
            let to = usize::try_from(p.to)
                .ok()
                .filter(|to| (1..=count).contains(to))
                .ok_or_else(|| {
                    invalid(
                        REQUEST,
                        &format!(
                            "'to' must be a position from 1 to {count} (the number of chapters), got {}",
                            p.to
                        ),
                    )
                })?;
            if !s.project.move_chapter(&id, to - 1)? {
                return Ok((ChapterInProject::of(&s.project, to - 1), Touched::default()));
            }
            let result = self.chapters_changed(s, to - 1);
            Ok((
                result,
                Touched {
                    project: true,
                    ..Touched::default()
                },
            ))
        })
        .await
    }

    /// `delete_chapter {chapter}`: removes the chapter (never the last one), moves the editor
    /// to a neighbour if it was the active chapter, makes the history forget it, and returns
    /// its title and text.
    pub(super) async fn delete_chapter(&self, p: DeleteChapter) -> Result<DeletedChapter, Error> {
        const REQUEST: &str = "delete_chapter";
        let chapter = reference(REQUEST, "chapter", p.chapter)?;
        self.mutate(|s| {
            let (id, _) = resolve(s, &chapter)?;
            let ui_before = s.project.ui.clone();
            let (index, removed) = s.project.remove_chapter(&id)?;
            let forgotten = s.history.forget_chapter(&id);
            let project = ProjectSummary::of(&s.project);
            self.emit(ProjectSummary::of(&s.project));
            if s.project.ui != ui_before {
                self.emit(s.project.ui.clone());
            }
            if forgotten.changed() {
                self.emit_history(s);
            }
            let result = DeletedChapter {
                deleted: ChapterRemoved {
                    text: removed.text().to_string(),
                    id: removed.id,
                    title: removed.title,
                    number: index + 1,
                },
                history: HistoryForgot {
                    dropped: forgotten.dropped,
                    trimmed: forgotten.trimmed,
                    can_undo: s.history.can_undo(),
                    can_redo: s.history.can_redo(),
                },
                project,
            };
            Ok((
                result,
                Touched {
                    project: true,
                    deleted_chapters: vec![id],
                    ..Touched::default()
                },
            ))
        })
        .await
    }

    /// Announce a change of the chapter list; the result for the chapter at `index`.
    fn chapters_changed(&self, s: &Session, index: usize) -> ChapterInProject {
        let result = ChapterInProject::of(&s.project, index);
        self.emit(ProjectSummary::of(&s.project));
        result
    }
}

/// The id and index of the chapter a reference names.
fn resolve(s: &Session, reference: &str) -> Result<(String, usize), Error> {
    let chapter = s.project.find_chapter(reference)?;
    let index = s.project.chapter_index(&chapter.id).unwrap_or_default();
    Ok((chapter.id.clone(), index))
}

/// A chapter reference that is not blank.
fn reference(request: &str, field: &str, r: ChapterRef) -> Result<String, Error> {
    if r.0.trim().is_empty() {
        return Err(invalid(
            request,
            &format!("'{field}' must name a chapter (its id, number or title)"),
        ));
    }
    Ok(r.0)
}

/// A title, trimmed: not empty, one line, at most [`MAX_TITLE_CHARS`] chars.
fn clean_title(request: &str, title: &str) -> Result<String, Error> {
    let title = title.trim();
    if title.is_empty() {
        return Err(invalid(request, "'title' must not be empty"));
    }
    if title.contains(['\n', '\r']) {
        return Err(invalid(request, "'title' must be one line"));
    }
    if title.chars().count() > MAX_TITLE_CHARS {
        return Err(invalid(
            request,
            &format!("'title' is longer than {MAX_TITLE_CHARS} characters"),
        ));
    }
    Ok(title.to_string())
}
