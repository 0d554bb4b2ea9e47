//! Merging this core's unsaved work into a newer stored copy of its project: what a save
//! does when the store refuses it because another writer got there first
//! ([`crate::store::StoreError::Conflict`]), and what a reload does with unsaved work.
//!
//! The stored copy is the base; what this core had not saved is re-applied on top of it:
//! - **chapter changes** are transformed onto the stored ones with the change sets' OT
//!   ([`crate::project::changeset::ChangeSet::transform_side`]: the stored changes first
//!   where both inserted at one place), applied in order, recorded as new history entries of
//!   their origin and written as new change records (with their tags, so a resent change is
//!   still recognized). If the stored changes since the version this core last saw are no
//!   longer all in the store (the other writer checkpointed far ahead), the chapter as this
//!   core had it is kept as a new chapter, "`<title> (unsaved copy)`", next to the stored one:
//!   nothing is lost, and the writer sees both;
//! - **chapters** this core added are inserted after the chapter they followed here; one it
//!   deleted goes unless the other writer changed it since (then it stays); one the other
//!   writer deleted stays deleted unless this core had unsaved changes to it (then it comes
//!   back with them); an unsaved rename wins;
//! - **the project record**: an unsaved name or chapter order of this core wins (the other
//!   writer's new chapters keep their places); the UI state is this core's;
//! - **whole records** (story-bible entities, free files): this core's unsaved version wins
//!   unless the stored one changed since this core last saw it *and* is newer (by the
//!   entity's latest field stamp, the file's modification time); a deletion here loses to a
//!   change there, a deletion there to a change here. What lost is listed in
//!   [`Merged::overridden`];
//! - **memory notes, goals, watched entities** (not versioned): this core's unsaved ones;
//! - **audit and approval records**: written as they are;
//! - **the history** is the stored one, plus the entries of the re-applied changes (this
//!   core's own unsaved history entries, undo groups and redo runs go: their changes are
//!   in the re-applied ones).

use super::pending::{Append, Key, Pending, Stored};
use super::{ChangeRecord, Feeds, Loaded};
use crate::bible::{entity_key, Entity};
use crate::commands::history::Grouping;
use crate::commands::{Effect, Entry, Origin};
use crate::env::IdSource;
use crate::files::file_key;
use crate::project::changeset::ChangeSet;
use crate::project::Chapter;
use crate::session::Session;
use crate::store::Table;
use std::collections::BTreeMap;

/// This core's state of a project: its session, what it still has to write, what it
/// knows the store held, and its chapters' change feeds.
pub struct Ours<'a> {
    /// The session.
    pub session: &'a Session,
    /// What it had not saved.
    pub pending: &'a Pending,
    /// What it last knew the store held.
    pub stored: &'a Stored,
    /// Its chapters' change feeds.
    pub feeds: &'a Feeds,
}

/// The merged project: the new state of the open project.
#[derive(Debug)]
pub struct Merged {
    /// The session: the stored copy with this core's unsaved work on top.
    pub session: Session,
    /// What the store holds (the stored copy's).
    pub stored: Stored,
    /// What is still to be written: this core's unsaved work, as re-applied.
    pub pending: Pending,
    /// The chapters' change feeds.
    pub feeds: Feeds,
    /// Chapters added as "(unsaved copy)" because their unsaved changes could not be
    /// transformed onto the stored ones (their ids).
    pub copies: Vec<String>,
    /// What of this core's unsaved work the stored copy won over, for people.
    pub overridden: Vec<String>,
}

/// The latest field stamp of an entity (0 when none).
fn stamped(entity: &Entity) -> u64 {
    entity.stamps.values().map(|s| s.at).max().unwrap_or(0)
}

/// Transform this core's changes (consecutive, based on the version the stored ones also
/// start from) over the stored changes since then: the changes to apply, in order, on the
/// stored text. `None` if they do not fit.
fn transformed(mine: &[&ChangeRecord], theirs: &[&ChangeRecord]) -> Option<Vec<ChangeSet>> {
    let first = mine.first()?;
    let mut stored_side = match theirs.split_first() {
        None => ChangeSet::identity(first.changeset.len_before()),
        Some((head, rest)) => {
            let mut composed = head.changeset.clone();
            for next in rest {
                composed = composed.compose(&next.changeset).ok()?;
            }
            composed
        }
    };
    let mut out = Vec::with_capacity(mine.len());
    for change in mine {
        let rebased = change.changeset.transform_side(&stored_side, false).ok()?;
        stored_side = stored_side.transform_side(&change.changeset, true).ok()?;
        out.push(rebased);
    }
    Some(out)
}

/// Merge this core's unsaved work into `theirs`, the project as the store now holds it (see
/// the module docs).
pub fn merge(ours: Ours<'_>, theirs: Loaded, ids: &dyn IdSource, now_ms: u64) -> Merged {
    let Loaded {
        mut session,
        stored,
        feeds,
        repair,
        ..
    } = theirs;
    let mut feeds = feeds;
    let mut pending = Pending::new();
    for chapter in repair {
        pending.mark(Key::Chapter(chapter));
    }
    let (mut copies, mut overridden) = (Vec::new(), Vec::new());
    let mine = ours.session;
    let project_id = mine.project.id.clone();

    // This core's unsaved chapter changes, by chapter, in order.
    let (mut unsaved_in, mut unsaved): (Vec<&str>, Vec<&ChangeRecord>) = Default::default();
    for append in ours.pending.appends() {
        match append {
            Append::Change(change) => {
                unsaved_in.push(&change.chapter);
                unsaved.push(change);
            }
            other => pending.append(other.clone()),
        }
    }
    let unsaved_in = {
        let mut by_chapter: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, chapter) in unsaved_in.iter().enumerate() {
            by_chapter.entry(*chapter).or_default().push(i);
        }
        by_chapter
    };

    // Chapters this core deleted (it knew them stored; they are gone here).
    for (id, known) in &ours.stored.chapters {
        if mine.project.chapter(id).is_some() {
            continue;
        }
        let Some(there) = session.project.chapter(id) else {
            continue;
        };
        if there.version() > known.newest() {
            overridden.push(format!(
                "chapter '{}' was changed elsewhere after it was deleted here, so it stays",
                there.title
            ));
            continue;
        }
        if session.project.remove_chapter(id).is_ok() {
            session.history.forget_chapter(id);
            feeds.remove(id);
            pending.mark(Key::Chapter(id.clone()));
            pending.mark(Key::Project);
        }
    }

    // This core's chapters, in its order.
    for (index, chapter) in mine.project.chapters.iter().enumerate() {
        let id = chapter.id.as_str();
        let known = ours.stored.chapters.get(id);
        let changes: Vec<&ChangeRecord> = (unsaved_in.get(id).into_iter().flatten())
            .map(|&i| unsaved[i])
            .collect();
        let renamed = ours.pending.has(&Key::Chapter(id.to_string()));
        let there = session
            .project
            .chapter(id)
            .map(|c| (c.title.clone(), c.version(), c.len_chars()));
        let Some((there_title, there_version, there_len)) = there else {
            // New here, or deleted elsewhere: it stays if it is new or has unsaved work.
            if known.is_some() && changes.is_empty() && !renamed {
                continue;
            }
            let at = mine.project.chapters[..index]
                .iter()
                .rev()
                .find_map(|c| session.project.chapter_index(&c.id))
                .map_or(0, |i| i + 1);
            if session.project.insert_chapter(at, chapter.clone()).is_ok() {
                let feed = ours.feeds.get(id).cloned();
                feeds.insert(id.to_string(), feed.unwrap_or_default());
                pending.mark(Key::Chapter(id.to_string()));
                pending.mark(Key::Project);
                for change in changes {
                    pending.append(Append::Change(change.clone()));
                }
            }
            continue;
        };
        if renamed && there_title != chapter.title {
            if let Some(c) = session.project.chapter_mut(id) {
                c.title = chapter.title.clone();
            }
            pending.mark(Key::Chapter(id.to_string()));
        }
        if changes.is_empty() {
            continue;
        }
        let base = known.map(|k| k.newest());
        let consecutive = base.is_some_and(|base| {
            changes
                .iter()
                .zip(base + 1..)
                .all(|(c, version)| c.version == version)
        });
        let stored_since: Vec<&ChangeRecord> = match (base, feeds.get(id)) {
            (Some(base), _) if base >= there_version => Vec::new(),
            (Some(base), Some(feed)) => feed.iter().filter(|c| c.version > base).collect(),
            _ => Vec::new(),
        };
        let complete = base.is_some_and(|base| {
            stored_since.len() as u64 == there_version.saturating_sub(base)
                && stored_since
                    .iter()
                    .zip(base + 1..)
                    .all(|(c, version)| c.version == version)
        });
        let plan = (consecutive && complete)
            .then(|| transformed(&changes, &stored_since))
            .flatten()
            .filter(|sets| {
                // They must chain from the stored text.
                let mut len = there_len;
                sets.iter().all(|set| {
                    let fits = set.len_before() == len;
                    len = set.len_after();
                    fits
                })
            });
        match plan {
            Some(sets) => {
                for (set, change) in sets.into_iter().zip(changes) {
                    let Some(current) = session.project.chapter(id) else {
                        break;
                    };
                    let Ok(inverse) = set.invert(current.text()) else {
                        break;
                    };
                    let Ok(version) = session.project.apply_change(id, &set) else {
                        break;
                    };
                    let origin: Origin = change.origin.parse().unwrap_or(Origin::User);
                    let grouping = match origin {
                        Origin::User => Grouping::Typing,
                        _ => Grouping::Command,
                    };
                    let description = match origin {
                        Origin::User => "Typing",
                        _ => "Edit (merged)",
                    };
                    let entry = Entry::edit(
                        ids.next_id(),
                        origin,
                        description,
                        now_ms,
                        vec![Effect {
                            chapter: id.to_string(),
                            change: set.clone(),
                            inverse,
                        }],
                    );
                    session.history.record(entry, grouping, ids);
                    let record = ChangeRecord {
                        chapter: id.to_string(),
                        version,
                        changeset: set,
                        origin: change.origin.clone(),
                        tag: change.tag.clone(),
                    };
                    feeds
                        .entry(id.to_string())
                        .or_default()
                        .push_back(record.clone());
                    pending.append(Append::Change(record));
                }
            }
            None => {
                // Keep this core's chapter whole, as a copy next to the stored one.
                let copy_id = ids.next_id();
                let title = format!("{} (unsaved copy)", chapter.title);
                let copy = Chapter::new(copy_id.clone(), title, &chapter.text().to_string());
                let at = session.project.chapter_index(id).map_or(0, |i| i + 1);
                if session.project.insert_chapter(at, copy).is_ok() {
                    pending.mark(Key::Chapter(copy_id.clone()));
                    pending.mark(Key::Project);
                    overridden.push(format!(
                        "chapter '{}' was changed elsewhere too; this tab's unsaved version is kept as '{} (unsaved copy)'",
                        chapter.title, chapter.title
                    ));
                    copies.push(copy_id);
                }
            }
        }
    }

    // The project record: an unsaved name or order here wins; the UI state is this core's.
    match ours.pending.lazy(&Key::Project) {
        Some(false) => {
            session.project.name = mine.project.name.clone();
            // Chapters both have take the slots they fill, in this core's order.
            let ids: Vec<&str> = mine
                .project
                .chapters
                .iter()
                .map(|c| c.id.as_str())
                .collect();
            // Each id with its last position.
            let order: BTreeMap<&str, usize> =
                (ids.iter().enumerate()).map(|(i, &id)| (id, i)).collect();
            let slots: Vec<usize> = (0..session.project.chapters.len())
                .filter(|i| order.contains_key(session.project.chapters[*i].id.as_str()))
                .collect();
            let mut ordered: Vec<Chapter> = slots
                .iter()
                .map(|i| session.project.chapters[*i].clone())
                .collect();
            ordered.sort_by_key(|c| order.get(c.id.as_str()).copied().unwrap_or(usize::MAX));
            for (slot, chapter) in slots.into_iter().zip(ordered) {
                session.project.chapters[slot] = chapter;
            }
            pending.mark(Key::Project);
        }
        Some(true) => pending.mark_lazy(Key::Project),
        None => {}
    }
    let mut ui = mine.project.ui.clone();
    if ui
        .active_chapter
        .as_deref()
        .is_some_and(|c| session.project.chapter(c).is_none())
    {
        ui.active_chapter = session.project.chapters.first().map(|c| c.id.clone());
    }
    ui.highlights
        .retain(|h| session.project.chapter(&h.chapter).is_some());
    let len = ui
        .active_chapter
        .as_deref()
        .and_then(|c| session.project.chapter(c))
        .map_or(0, Chapter::len_chars);
    ui.cursor = ui.cursor.min(len);
    ui.scroll = ui.scroll.min(len);
    ui.selection = ui.selection.map(|(a, b)| (a.min(len), b.min(len)));
    session.project.ui = ui;

    // Whole records and memory.
    let mut memory_changed = false;
    for key in ours.pending.keys() {
        match key {
            Key::Bible(kind, id) => {
                let record = entity_key(&project_id, *kind, id);
                let here = mine.bible.get(*kind, id);
                let there = session.bible.get(*kind, id);
                let unchanged_there =
                    ours.stored.rev(Table::Bible, &record) == stored.rev(Table::Bible, &record);
                let ours_wins = unchanged_there
                    || match (here, there) {
                        (None, Some(_)) => false,
                        (Some(h), Some(t)) => stamped(h) >= stamped(t),
                        _ => true,
                    };
                if ours_wins {
                    session.bible.restore(*kind, id, here.cloned());
                    pending.mark(key.clone());
                } else {
                    overridden.push(format!(
                        "the {kind} '{id}' was changed elsewhere later; that version is kept"
                    ));
                }
            }
            Key::File(path) => {
                let record = file_key(&project_id, path);
                let here = mine.files.get(path);
                let there = session.files.get(path);
                let unchanged_there =
                    ours.stored.rev(Table::Files, &record) == stored.rev(Table::Files, &record);
                let ours_wins = unchanged_there
                    || match (here, there) {
                        (None, Some(_)) => false,
                        (Some(h), Some(t)) => h.mod_time >= t.mod_time,
                        _ => true,
                    };
                if ours_wins {
                    session.files.restore(path, here.cloned());
                    pending.mark(key.clone());
                } else {
                    overridden.push(format!(
                        "the file '{path}' was changed elsewhere later; that version is kept"
                    ));
                }
            }
            Key::Note(id) => {
                let memory = &mut session.memory;
                memory.notes.retain(|n| &n.id != id);
                if let Some(note) = mine.memory.note(id) {
                    memory.notes.push(note.clone());
                }
                memory_changed = true;
                pending.mark(key.clone());
            }
            Key::Goal(id) => {
                session.memory.goals.retain(|g| &g.id != id);
                if let Some(goal) = mine.memory.goal(id) {
                    session.memory.goals.push(goal.clone());
                }
                pending.mark(key.clone());
            }
            Key::Watched(id) => {
                session.memory.watched.retain(|w| &w.id != id);
                if let Some(entity) = mine.memory.watched_entity(id) {
                    session.memory.watched.push(entity.clone());
                }
                pending.mark(key.clone());
            }
            // Handled above, or the stored history wins.
            Key::Project | Key::Chapter(_) | Key::HistoryEntry(_) | Key::HistoryState => {}
        }
    }
    if memory_changed {
        session.memory.reindex();
    }
    pending.take_history(&mut session);
    Merged {
        session,
        stored,
        pending,
        feeds,
        copies,
        overridden,
    }
}
