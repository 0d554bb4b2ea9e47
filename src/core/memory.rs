//! The writer's memory requests beyond the lists, served by the [`Core`]: `memory_trash`
//! (the deleted notes that can still be restored) and `memory_restore {id}` (bring one back).
//!
//! Deleted notes stay in the trash for 30 days ([`crate::memory::TRASH_RETENTION_MS`]). The
//! writer may restore any of them; a restore, like every note write, purges the notes whose
//! 30 days are over, and its save deletes their records.

use serde::{Deserialize, Serialize};
use serde_json::json;
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

/// A deleted note as the page lists it: the note, with when it was deleted, by whom, and
/// until when it can be restored.
fn trash_json(note: &MemoryNote) -> Value {
    let mut value = crate::error::to_json(note);
    if let Value::Object(map) = &mut value {
        map.remove("previous");
        map.insert("restorableUntilMs".into(), json!(note.purge_ms()));
    }
    value
}

impl Core {
    /// Serve `memory_trash`: the open project's deleted notes (its own and global ones) that
    /// can still be restored, most recently deleted first.
    pub(super) fn memory_trash(&self) -> Result<Value, Error> {
        let now = self.env.clock.now_ms();
        self.with_session(|s| {
            let notes: Vec<Value> = s
                .memory
                .trash(&s.project.id, now)
                .into_iter()
                .map(trash_json)
                .collect();
            Ok(json!({ "project": s.project.id, "notes": notes }))
        })
    }

    /// Serve `memory_restore {id}`: the writer takes a deleted note of the open project (or a
    /// global one) out of the trash.
    pub(super) async fn memory_restore(&self, p: MemoryRestore) -> Result<Value, Error> {
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
            let note = trash_json(s.memory.restore_note(&p.id, now)?);
            let mut notes_written = vec![p.id.clone()];
            notes_written.extend(s.memory.purge_expired(now));
            self.emit(MemoryChangedEvent {
                project: project.clone(),
                restored: Some(p.id.clone()),
                ..MemoryChangedEvent::default()
            });
            Ok((
                json!({ "note": note }),
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
