//! The writer's memory requests beyond the lists, served by the [`Core`]: `write_memory_notes`
//! (many notes at once, saved as they are read: [`Core::write_memory_notes`]), `memory_trash`
//! (the deleted notes that can still be restored) and `memory_restore {id}` (bring one back).
//!
//! Deleted notes stay in the trash for 30 days ([`crate::memory::TRASH_RETENTION_MS`]). The
//! writer may restore any of them; a restore, like every note write, purges the notes whose
//! 30 days are over, and its save deletes their records.

use std::fmt;

use serde::de::{Deserializer as _, Error as _, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;
use ts_rs::TS;

use super::results::Written;
use super::saving::Open;
use super::{invalid, Core, On, Touched, Unsaved};
use crate::error::{Error, ProtocolError};
use crate::memory::{MemoryError, MemoryNote, NewNote};
use crate::persist::{self, pending::Key};
use crate::store::Table;

/// `write_memory_notes` params: the notes' JSON text, decoded a note at a time as they are
/// written ([`Core::write_memory_notes`]).
#[derive(Deserialize, TS)]
#[ts(rename = "WriteMemoryNotesParams", optional_fields)]
pub(super) struct WriteNotes {
    #[ts(as = "Vec<NewNote>")]
    notes: Box<RawValue>,
}

/// The most notes one `write_memory_notes` may write.
const MOST_NOTES: usize = 1_000;

impl Core {
    /// `write_memory_notes`: write many notes at once (an import, or a benchmark): all of them
    /// or, if one is invalid, none, with an error naming which one. At most [`MOST_NOTES`] per
    /// request. `reply` writes the answer.
    ///
    /// For hundreds of notes the time goes to IndexedDB, so it starts as early as it can: each
    /// note's record is put in the store's bulk write ([`crate::store::Store::begin_puts`]) as
    /// soon as the note is read and checked, before the next is read. The bulk write is
    /// committed once every note is in, and dropped (writing nothing) if one is refused. The
    /// notes join the memory only then. The answer is given ahead and goes when the bulk write
    /// lands (see [`Core::answer_then_save`]); meanwhile the notes are mirrored into the
    /// project's document and indexed for search, and anything else pending is saved. If the
    /// bulk write fails, the page hears `storage_error`, and the notes, kept in memory, are
    /// pending: the next save writes them. A store that cannot begin a bulk write, or go on
    /// with it, has the notes marked pending and saved as any change.
    pub(super) async fn write_memory_notes(
        &self,
        p: WriteNotes,
        reply: impl FnOnce(Written) -> Result<Box<RawValue>, Error>,
        ahead: &dyn Fn(&RawValue),
    ) -> Result<Box<RawValue>, Error> {
        // A store that cannot start a bulk write now has the notes saved as any change is.
        let mut puts = self.env.store.begin_puts(Table::Notes).await.ok();
        let unsaved = self.mutate_unsaved(On::page(), |s| {
            let project = s.project.id.clone();
            let now = self.env.clock.now_ms();
            let mut bulk = s.memory.bulk(&project, now, self.env.ids.as_ref());
            each_note(&p.notes, |i, input| {
                if i == MOST_NOTES {
                    return Err(invalid(
                        "write_memory_notes",
                        "at most 1000 notes per request; send them in batches",
                    ));
                }
                let note = bulk.add(input).map_err(|e| {
                    invalid(
                        "write_memory_notes",
                        &format!("note {i}: {e}; no note was written"),
                    )
                })?;
                if let Some(writing) = puts.as_mut() {
                    if writing.put(persist::note_record(note)).is_err() {
                        // The bulk write cannot go on: dropped, it writes nothing.
                        puts = None;
                    }
                }
                Ok(())
            })?;
            let written = bulk.finish();
            if !written.is_empty() {
                self.emit(MemoryChangedEvent {
                    project: project.clone(),
                    written: Some(written.len()),
                    ..MemoryChangedEvent::default()
                });
            }
            // Expired deleted notes go with this write (their records are deleted).
            let purged = s.memory.purge_expired(now);
            let result = Written {
                written: written.clone(),
            };
            let touched = match puts {
                Some(_) => Touched {
                    notes_written: purged,
                    notes_streamed: written,
                    ..Touched::default()
                },
                None => Touched {
                    notes_written: written.into_iter().chain(purged).collect(),
                    ..Touched::default()
                },
            };
            Ok((result, touched))
        });
        let Unsaved { value, save } = unsaved?;
        let streamed = match puts {
            Some(_) => value.written.clone(),
            None => Vec::new(),
        };
        let answer = reply(value)?;
        let Some((project, hold)) = save else {
            return Ok(answer);
        };
        ahead(&answer);
        // Committed first, so that the answer goes when the notes land.
        let landing = async {
            match puts {
                Some(puts) if !streamed.is_empty() => Some(puts.commit().await),
                _ => None,
            }
        };
        let saving = self.settle_while(&project, hold, self.index_while_saving());
        let (landed, ()) = futures_util::future::join(landing, saving).await;
        match landed {
            Some(Ok(())) => self.saved(&project, true),
            Some(Err(e)) => {
                self.projects.update(&project, |open| {
                    for id in streamed {
                        open.pending.mark(Key::Note(id));
                    }
                });
                self.save_failed(&project, &e);
            }
            None => {}
        }
        Ok(answer)
    }

    /// The work on an open project that a bulk write of notes leaves, done once its puts are
    /// placed, while IndexedDB completes it: the new notes are mirrored into the project's
    /// document and indexed for search.
    fn index_while_saving(&self) -> impl FnOnce(&mut Open) + '_ {
        let ids = self.env.ids.as_ref();
        move |open: &mut Open| {
            open.mirror_deferred(ids);
            open.session.memory.catch_up_index();
        }
    }
}

/// Decode `notes`, a JSON list of notes, a note at a time: each goes to `f` with its position
/// before the next is read. The first error `f` returns ends it; a list of the wrong shape
/// is `invalid_params`.
fn each_note(
    notes: &RawValue,
    mut f: impl FnMut(usize, NewNote) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut refused = None;
    let mut decoder = serde_json::Deserializer::from_str(notes.get());
    let decoded = (&mut decoder)
        .deserialize_seq(EachNote {
            f: &mut f,
            refused: &mut refused,
        })
        .and_then(|()| decoder.end());
    match (refused, decoded) {
        (Some(refusal), _) => Err(refusal),
        (None, Err(e)) => Err(ProtocolError::InvalidParams {
            request: "write_memory_notes".to_string(),
            reason: e.to_string(),
        }
        .into()),
        (None, Ok(())) => Ok(()),
    }
}

/// The visitor of [`each_note`]: what `f` refused is kept in `refused`.
struct EachNote<'a, F> {
    f: &'a mut F,
    refused: &'a mut Option<Error>,
}

impl<'de, F: FnMut(usize, NewNote) -> Result<(), Error>> Visitor<'de> for EachNote<'_, F> {
    type Value = ();

    fn expecting(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        out.write_str("a list of notes")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while let Some(note) = seq.next_element::<NewNote>()? {
            if let Err(refusal) = (self.f)(i, note) {
                *self.refused = Some(refusal);
                return Err(A::Error::custom("refused"));
            }
            i += 1;
        }
        Ok(())
    }
}

/// `memory_restore` params.
#[derive(Deserialize, TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "MemoryRestoreParams", optional_fields)]
pub(super) struct MemoryRestore {
    /// The deleted note.
    id: String,
}

/// A deleted note as the page lists it: the note without its earlier texts, with until when
/// it can be restored (`null` once restored).
#[derive(Serialize, TS)]
#[ts(
    type = "Omit<MemoryNote, 'previous' | 'deletedMs' | 'deletedBy'> & { deletedMs: number, deletedBy: Origin, restorableUntilMs: number }"
)]
pub(super) struct DeletedNote {
    #[serde(flatten, serialize_with = "without_previous")]
    note: MemoryNote,
    #[serde(rename = "restorableUntilMs")]
    restorable_until_ms: Option<u64>,
}

impl DeletedNote {
    fn of(note: &MemoryNote) -> Self {
        Self {
            note: note.clone(),
            restorable_until_ms: note.purge_ms(),
        }
    }
}

/// A note's fields but `previous` (the bedside note's earlier texts stay out of the trash).
fn without_previous<S: Serializer>(note: &MemoryNote, serializer: S) -> Result<S::Ok, S::Error> {
    let mut value = crate::error::to_json(note);
    if let Value::Object(map) = &mut value {
        map.remove("previous");
    }
    value.serialize(serializer)
}

/// `memory_trash`: the open project's deleted notes that can still be restored.
#[derive(Serialize, TS)]
#[ts(rename = "MemoryTrash")]
pub(super) struct Trash {
    /// The open project.
    project: String,
    /// Its deleted notes and the global ones, most recently deleted first.
    notes: Vec<DeletedNote>,
}

/// `memory_restore`: the note taken out of the trash.
#[derive(Serialize, TS)]
#[ts(rename = "NoteRestored")]
pub(super) struct Restored {
    /// The note as it is now (live again: no `deletedMs`, `restorableUntilMs` null).
    #[ts(type = "Omit<MemoryNote, 'previous'> & { restorableUntilMs: null }")]
    note: DeletedNote,
}

impl Core {
    /// Serve `memory_trash`: the open project's deleted notes (its own and global ones) that
    /// can still be restored, most recently deleted first.
    pub(super) fn memory_trash(&self) -> Result<Trash, Error> {
        let now = self.env.clock.now_ms();
        self.with_session(|s| {
            Ok(Trash {
                project: s.project.id.clone(),
                notes: s
                    .memory
                    .trash(&s.project.id, now)
                    .into_iter()
                    .map(DeletedNote::of)
                    .collect(),
            })
        })
    }

    /// Serve `memory_restore {id}`: the writer takes a deleted note of the open project (or a
    /// global one) out of the trash.
    pub(super) async fn memory_restore(&self, p: MemoryRestore) -> Result<Restored, Error> {
        let now = self.env.clock.now_ms();
        self.mutate(|s| {
            let project = s.project.id.clone();
            if !s.memory.note(&p.id).is_some_and(|n| n.belongs_to(&project)) {
                return Err(MemoryError::NotFound {
                    kind: "deleted note",
                    id: p.id.chars().take(80).collect(),
                    hint: " in this project; memory_trash lists the notes that can be restored"
                        .into(),
                }
                .into());
            }
            let note = DeletedNote::of(s.memory.restore_note(&p.id, now)?);
            let mut notes_written = vec![p.id.clone()];
            notes_written.extend(s.memory.purge_expired(now));
            self.emit(MemoryChangedEvent {
                project: project.clone(),
                restored: Some(p.id.clone()),
                ..MemoryChangedEvent::default()
            });
            Ok((
                Restored { note },
                Touched {
                    notes_written,
                    ..Touched::default()
                },
            ))
        })
        .await
    }
}

/// `memory_changed`: the agent's memory changed, and what changed it (one of the optional
/// fields).
#[derive(Serialize, TS, Default)]
#[ts(optional_fields)]
pub(super) struct MemoryChangedEvent {
    /// The project.
    pub(super) project: String,
    /// The tool whose call changed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) tool: Option<String>,
    /// How many notes the writer wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) written: Option<usize>,
    /// The deleted note that was restored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) restored: Option<String>,
    /// The bedside note was updated by itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) bedside: Option<bool>,
    /// The kind of finding the monitor wrote an observation note about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) monitor: Option<String>,
    /// The suggestion whose acceptance wrote a goal or a note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) suggestion: Option<String>,
}
