//! The writer's memory requests beyond the lists, served by the [`Core`]: `memory_trash`
//! (the deleted notes that can still be restored) and `memory_restore {id}` (bring one back).
//!
//! Deleted notes stay in the trash for 30 days ([`crate::memory::TRASH_RETENTION_MS`]). The
//! writer may restore any of them; a restore, like every note write, purges the notes whose
//! 30 days are over, and its save deletes their records.

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use ts_rs::TS;

use super::{Core, Touched};
use crate::error::Error;
use crate::memory::{MemoryError, MemoryNote};

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
