//! The records a change puts in the store's `meta` table, as types ([`MetaRecord`]): a call
//! waiting for approval, a paused run, a job and its units' transcripts, a suggestion, the
//! analysis figures, a research note and an agent's conversation.
//!
//! Each is serialized where the change's batch is built. The field names and omissions are
//! those the store has always held (a database written before reads back as the same record),
//! so `kind` tags the variant and every optional field is left out while it is unset.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use std::collections::BTreeMap;

use super::run_state::{paused_key, ApprovalCard, PausedRun, SubAgentOrigin};
use crate::llm::Message;
use crate::memory::bedside::AnalysisFigures;
use crate::memory::suggest::{Suggestion, SuggestionState};
use crate::research::ResearchNote;
use crate::tools::ToolResult;

/// A record of the `meta` table that a change puts, by its `kind`.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(super) enum MetaRecord {
    /// A call waiting for the writer's approval, or decided.
    Approval(ApprovalRecord),
    /// A run paused for approvals (`paused`), resuming, or ended.
    PausedRun(PausedRunRecord),
    /// A background job.
    Job(JobRecord),
    /// A job unit's transcript.
    JobTranscript(TranscriptRecord),
    /// A suggestion of the proactive memory.
    Suggestion(SuggestionRecord),
    /// A project's analysis figures (what the idle thinker compares).
    Analysis(AnalysisRecord),
    /// A research note.
    Research(ResearchRecord),
    /// The kept conversation of a project with an agent.
    Conversation(ConversationRecord),
}

impl MetaRecord {
    /// The record as the store keeps it.
    pub(super) fn to_value(&self) -> Value {
        crate::error::to_json(self)
    }
}

/// The record of a run paused for approvals.
pub(super) fn paused_record(paused: &PausedRun) -> MetaRecord {
    MetaRecord::PausedRun(PausedRunRecord::paused(paused))
}

/// The records of kind `kind` among a project's `meta` rows, read as `T`. A row of that kind
/// that does not read as `T` (a damaged one) is skipped.
fn rows_of<T: DeserializeOwned>(rows: &[Value], kind: &str) -> Vec<T> {
    rows.iter()
        .filter(|r| r.get("kind").and_then(Value::as_str) == Some(kind))
        .filter_map(|r| T::deserialize(r).ok())
        .collect()
}

/// The approval records among a project's `meta` rows.
pub(super) fn approval_rows(rows: &[Value]) -> Vec<ApprovalRecord> {
    rows_of(rows, "approval")
}

/// The paused-run records among a project's `meta` rows.
pub(super) fn paused_run_rows(rows: &[Value]) -> Vec<PausedRunRecord> {
    rows_of(rows, "paused_run")
}

/// Where an approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum ApprovalState {
    /// Waiting for the writer.
    Pending,
    /// Approved; the call runs.
    Approved,
    /// Rejected; the model is told.
    Rejected,
    /// Decided and carried out (`result` holds the call's result).
    Done,
    /// Its run was cancelled before the writer decided.
    Cancelled,
}

impl ApprovalState {
    /// The state as the store spells it.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::Done => "done",
            Self::Cancelled => "cancelled",
        }
    }
}

/// A tool call that needs (or needed) the writer's approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ApprovalRecord {
    /// `approval:<project>:<run>:<call>` (see `approval_key`).
    pub(super) id: String,
    /// The project.
    pub(super) project: String,
    /// Where it stands.
    pub(super) state: ApprovalState,
    /// The run the call belongs to (`null` for a call of `execute`).
    pub(super) run: Option<String>,
    /// The call's id.
    pub(super) call_id: String,
    /// The tool.
    pub(super) tool: String,
    /// The call's arguments.
    pub(super) args: Value,
    /// Who called (`agent:<name>`).
    pub(super) origin: String,
    /// What the policy asked about (the `approval_required` error's details).
    pub(super) request: Value,
    /// When it was asked (ms).
    pub(super) created_ms: u64,
    /// The undo group the call's edits join (its run's tree group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) group: Option<String>,
    /// The agent, path and session of the call in its run's tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) who: Option<SubAgentOrigin>,
    /// When the writer decided (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) decided_ms: Option<u64>,
    /// Why (a rejection's reason is told to the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) reason: Option<String>,
    /// The writer's edit of the arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) edited_args: Option<Value>,
    /// The result of the call once carried out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) result: Option<ToolResult>,
}

/// Where a paused run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum PausedState {
    /// Waiting for the writer's decisions.
    Paused,
    /// Its waiting calls all have results; one worker claimed it and resumes it.
    Resuming,
    /// A job unit's run that ended (its paused state is dropped).
    Ended,
}

impl ApprovalRecord {
    /// What the page shows for this waiting call: the call, the entity, and each field's
    /// current and proposed value; for a call that changes several entries (a merge),
    /// `changes` lists every entry it updates or deletes, each with its fields.
    pub(super) fn card(&self) -> ApprovalCard {
        let request = &self.request;
        let fields = request["fields"].as_array().cloned().unwrap_or_default();
        let mut current = BTreeMap::new();
        let mut proposed = BTreeMap::new();
        for f in &fields {
            if let Some(name) = f["field"].as_str() {
                current.insert(name.to_string(), f["current"].clone());
                proposed.insert(name.to_string(), f["proposed"].clone());
            }
        }
        let text = |v: &Value| v.as_str().map(str::to_string);
        ApprovalCard {
            digest: self.digest(),
            call_id_snake: self.call_id.clone(),
            call_id: self.call_id.clone(),
            run: self.run.clone(),
            state: self.state.as_str().to_string(),
            tool: self.tool.clone(),
            args: self.args.clone(),
            origin: self.origin.clone(),
            kind: text(&request["kind"]),
            entity_id: text(&request["id"]),
            version: request["version"].as_u64(),
            reason: text(&request["reason"]),
            fields,
            changes: request.get("changes").cloned().unwrap_or_else(|| json!([])),
            current,
            proposed,
            created_ms: self.created_ms,
        }
    }

    /// A digest of what the writer is shown for this waiting call (the call, its arguments,
    /// its run and what it would change): `approve {digest}` must name the card the writer
    /// saw.
    pub(super) fn digest(&self) -> String {
        let shown = json!({
            "callId": self.call_id,
            "run": self.run,
            "tool": self.tool,
            "args": self.args,
            "origin": self.origin,
            "request": self.request,
        });
        crate::persist::digest(&shown.to_string())
    }
}

/// A paused run's record: `paused` while it waits, then `resuming` or `ended` (without the
/// run's state).
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct PausedRunRecord {
    /// `paused:<project>:<run>`.
    pub(super) id: String,
    /// The project.
    pub(super) project: String,
    /// Where it stands.
    pub(super) state: PausedState,
    /// Bumped by each claim (a resume is claimed once).
    pub(super) rev: u64,
    /// The run.
    pub(super) run: String,
    /// The run's state while it is paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) paused: Option<Box<PausedRun>>,
}

impl PausedRunRecord {
    /// The record of a run that pauses now.
    pub(super) fn paused(paused: &PausedRun) -> Self {
        Self {
            id: paused_key(&paused.project, &paused.run_id),
            project: paused.project.clone(),
            state: PausedState::Paused,
            rev: 0,
            run: paused.run_id.clone(),
            paused: Some(Box::new(paused.clone())),
        }
    }
}

/// A job's record.
#[derive(Serialize)]
pub(super) struct JobRecord {
    /// `job:<project>:<job>`.
    pub(super) id: String,
    /// The project.
    pub(super) project: String,
    /// The job's state (also inside `job`, for the store's readers).
    pub(super) state: Value,
    /// Always 0 (records are replaced whole).
    pub(super) rev: u64,
    /// The job, as `jobs.rs` writes it (its types live there, above this file).
    pub(super) job: Value,
}

/// A job unit's transcript.
#[derive(Serialize)]
pub(super) struct TranscriptRecord {
    /// `transcript:<project>:<job>:<unit>`.
    pub(super) id: String,
    /// The project.
    pub(super) project: String,
    /// Always 0.
    pub(super) rev: u64,
    /// The unit's messages as the page shows them (written by `jobs.rs`).
    pub(super) messages: Value,
}

/// A suggestion's record.
#[derive(Serialize)]
pub(super) struct SuggestionRecord {
    /// `suggestion:<project>:<id>`.
    pub(super) id: String,
    /// The project.
    pub(super) project: String,
    /// The suggestion's state (also inside `suggestion`, for the store's readers).
    pub(super) state: SuggestionState,
    /// The suggestion.
    pub(super) suggestion: Suggestion,
}

/// A project's analysis figures.
#[derive(Serialize)]
pub(super) struct AnalysisRecord {
    /// `analysis:<project>`.
    pub(super) id: String,
    /// The project.
    pub(super) project: String,
    /// The figures of each analysed chapter.
    pub(super) analyses: Vec<AnalysisFigures>,
}

/// A research note's record.
#[derive(Serialize)]
pub(super) struct ResearchRecord {
    /// `research:<project>:<id>`.
    pub(super) id: String,
    /// The project.
    pub(super) project: String,
    /// Always 0.
    pub(super) rev: u64,
    /// The note.
    pub(super) note: ResearchNote,
}

/// The kept conversation of a project with an agent.
#[derive(Serialize)]
pub(super) struct ConversationRecord {
    /// `conversation:<project>:<agent>`.
    pub(super) id: String,
    /// The project.
    pub(super) project: String,
    /// The agent.
    pub(super) agent: String,
    /// The conversation, without its system prompt.
    pub(super) messages: Vec<Message>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Approval records as the store holds them: a waiting call of a run (with its tree
    /// group and place), and a decided one of `execute` (no run) with its result.
    fn stored() -> Vec<Value> {
        vec![
            json!({
                "id": "approval:p1:r1:c1",
                "project": "p1",
                "kind": "approval",
                "state": "pending",
                "run": "r1",
                "callId": "c1",
                "tool": "character_update_entry",
                "args": {"id": "mara", "notes": "Loves storms."},
                "origin": "agent:keeper",
                "request": {"kind": "character", "id": "mara", "version": 3, "fields": [
                    {"field": "notes", "current": "Fears the dark.", "proposed": "Loves storms."}
                ]},
                "createdMs": 1_700_000_000_000_u64,
                "group": "g7",
                "who": {"agent": "keeper", "path": "root › keeper", "session": "s2"},
            }),
            json!({
                "id": "approval:p1::c2",
                "project": "p1",
                "kind": "approval",
                "state": "done",
                "run": null,
                "callId": "c2",
                "tool": "write_memory_note",
                "args": {"text": "x"},
                "origin": "agent:quill",
                "request": null,
                "createdMs": 5,
                "decidedMs": 9,
                "reason": "fine",
                "editedArgs": {"text": "y"},
                "result": {
                    "status": "success",
                    "data": {"id": "n1"},
                    "meta": {"execution_time_ms": 2, "execution_time": 0.002, "command_id": "e1"}
                },
            }),
        ]
    }

    #[test]
    fn stored_approval_records_read_back_and_write_the_same_json() {
        for record in stored() {
            let typed: ApprovalRecord = serde_json::from_value(record.clone()).unwrap();
            assert_eq!(MetaRecord::Approval(typed).to_value(), record);
        }
        // A result whose `execution_time` holds ms keeps its time from `execution_time_ms`.
        let mut older = stored().remove(1);
        older["result"]["meta"]["execution_time"] = json!(2);
        let typed: ApprovalRecord = serde_json::from_value(older).unwrap();
        let again = MetaRecord::Approval(typed).to_value();
        assert_eq!(again["result"]["meta"]["execution_time_ms"], 2);
    }

    #[test]
    fn an_approval_record_read_back_keeps_its_state_and_result() {
        let done: ApprovalRecord = serde_json::from_value(stored()[1].clone()).unwrap();
        assert_eq!(done.state, ApprovalState::Done);
        assert_eq!(done.run, None);
        assert!(done.result.is_some_and(|r| r.is_success()));
        let waiting: ApprovalRecord = serde_json::from_value(stored()[0].clone()).unwrap();
        assert_eq!(waiting.state, ApprovalState::Pending);
        assert_eq!(waiting.group.as_deref(), Some("g7"));
    }

    /// Paused-run records as the store holds them: a run waiting for one call (one result of
    /// its turn recorded already), and a job unit's run that ended.
    fn stored_paused_runs() -> Vec<Value> {
        vec![
            json!({
                "id": "paused:p1:r1",
                "project": "p1",
                "kind": "paused_run",
                "state": "paused",
                "rev": 2,
                "run": "r1",
                "paused": {
                    "project": "p1",
                    "runId": "r1",
                    "spec": {
                        "name": "keeper",
                        "description": "",
                        "systemPrompt": "Keep the bible.",
                        "toolset": null,
                        "tools": ["character_update_entry", "write_memory_note"],
                        "subAgents": [],
                        "delegation": "route",
                        "model": null,
                        "maxSteps": 8,
                        "tokenBudget": null,
                        "talksToWriter": false,
                    },
                    "path": ["keeper"],
                    "session": "",
                    "replyTool": null,
                    "caller": null,
                    "delegation": "route",
                    "messages": [
                        {"role": "user", "text": "Mara loves storms now."},
                        {"role": "assistant", "text": "", "tool_calls": [
                            {"id": "c1", "name": "character_update_entry",
                             "arguments": {"id": "mara", "notes": "Loves storms."}},
                            {"id": "c2", "name": "write_memory_note", "arguments": {"text": "x"}},
                        ]},
                    ],
                    "steps": 1,
                    "usage": {"input_tokens": 10, "output_tokens": 4},
                    "pending": [
                        {"id": "c1", "name": "character_update_entry",
                         "arguments": {"id": "mara", "notes": "Loves storms."}},
                        {"id": "c2", "name": "write_memory_note", "arguments": {"text": "x"}},
                    ],
                    "results": {"c2": "Saved note n1."},
                    "children": {},
                    "filesChanged": [],
                    "guards": ["g1"],
                    "treeSteps": 1,
                    "treeUsage": {"input_tokens": 10, "output_tokens": 4},
                    "maxSteps": 8,
                    "tokenBudget": null,
                    "group": "g7",
                },
            }),
            json!({
                "id": "paused:p1:job:j1:u1",
                "project": "p1",
                "kind": "paused_run",
                "state": "ended",
                "rev": 0,
                "run": "job:j1:u1",
            }),
        ]
    }

    #[test]
    fn stored_paused_run_records_read_back_and_write_the_same_json() {
        for record in stored_paused_runs() {
            let typed: PausedRunRecord = serde_json::from_value(record.clone()).unwrap();
            assert_eq!(MetaRecord::PausedRun(typed).to_value(), record);
        }
    }

    #[test]
    fn a_paused_run_record_read_back_keeps_its_state_rev_and_waiting_calls() {
        let paused: PausedRunRecord =
            serde_json::from_value(stored_paused_runs()[0].clone()).unwrap();
        assert_eq!(paused.state, PausedState::Paused);
        assert_eq!(paused.rev, 2);
        let run = paused.paused.unwrap();
        assert_eq!(run.root.pending.len(), 2);
        assert!(run.root.waits_for("c1"));
        assert_eq!(run.group.as_deref(), Some("g7"));
        let ended: PausedRunRecord =
            serde_json::from_value(stored_paused_runs()[1].clone()).unwrap();
        assert_eq!(ended.state, PausedState::Ended);
        assert!(ended.paused.is_none());
    }

    #[test]
    fn rows_read_as_their_kind_and_damaged_rows_are_skipped() {
        let mut rows = stored();
        rows.extend(stored_paused_runs());
        rows.push(json!({"id": "job:p1:j1", "project": "p1", "kind": "job", "state": "done"}));
        // A waiting call without its call id, and a paused run without its rev.
        rows.push(
            json!({"id": "approval:p1:r1:c9", "project": "p1", "kind": "approval",
            "state": "pending", "run": "r1", "tool": "x", "args": {}, "origin": "agent:a",
            "request": null, "createdMs": 1}),
        );
        rows.push(
            json!({"id": "paused:p1:r9", "project": "p1", "kind": "paused_run",
            "state": "paused", "run": "r9"}),
        );
        let approvals = approval_rows(&rows);
        let ids: Vec<&str> = approvals.iter().map(|r| r.call_id.as_str()).collect();
        assert_eq!(ids, ["c1", "c2"]);
        let paused = paused_run_rows(&rows);
        let runs: Vec<&str> = paused.iter().map(|r| r.run.as_str()).collect();
        assert_eq!(runs, ["r1", "job:j1:u1"]);
    }
}
