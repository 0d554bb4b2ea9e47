//! Human in the loop, served by the [`Core`]: pending approvals, the writer's decisions, and
//! paused runs.
//!
//! When an agent's call needs the writer's approval ([`crate::policy`]), nothing changes; the
//! call is saved as a pending approval (`meta/approval:<project>:<run>:<call>`) in the same
//! batch as its audit record, and the page hears `approvals_changed`. In a run, the call's
//! turn finishes (the other calls run), then the run pauses: its conversation, steps, usage,
//! single-use guards and waiting calls are saved (`meta/paused:<project>:<run>`), a
//! `run_paused` event is sent and the `run` request answers with status `paused`.
//!
//! `approve {callId, decision: approve|reject, args?, reason?}` decides one call:
//! - the decision is taken exactly once, even from two tabs (two workers): the approval
//!   record goes from `pending` to `approved`/`rejected` in a batch that first checks it is
//!   still `pending` ([`crate::store::Op::Expect`]); the loser gets `already_decided`;
//! - an approved call runs again with a [`Grant`] of the entity versions the writer saw (with
//!   the writer's edited arguments, if any): if the entity changed since, the call gets a
//!   `conflict` result instead of overwriting; its result is saved with the call's changes;
//! - a rejected call gets a `denied` result, which the model reads;
//! - when the last waiting call of a paused run is decided, the run resumes in this worker
//!   (events under the same run id, starting with `run_resumed`), and `approve` answers when
//!   the run ends or pauses again. A paused run survives a reload: a new worker resumes it.
//!
//! `list_approvals` gives the waiting calls of the open project (the page shows them as
//! cards after a reload). `abort_run` on a paused run cancels its waiting calls (they get
//! `aborted` results) and ends it.

use serde::{Deserialize, Serialize};
use serde_json::json;
use serde_json::Value;
use ts_rs::TS;

use super::records::{
    approval_rows, paused_record, paused_run_rows, ApprovalRecord, ApprovalState, MetaRecord,
    PausedRunRecord, PausedState,
};
use super::run_state::{
    paused_key, ApprovalCard, PausedRun, RunProgress, RunResult, RunStatus, SubAgentOrigin,
};
use super::{CallCtx, Core};
use crate::agent;
use crate::commands::Origin;
use crate::error::Error;
use crate::policy::Grant;
use crate::session::ToolCall;
use crate::store::{Batch, StoreError, Table};
use crate::tools::{ToolError, ToolResult};

/// How many times a paused run's record update is retried when another tab wrote it first.
const RUN_RECORD_RETRIES: usize = 8;

fn approval_key(project: &str, run: Option<&str>, call_id: &str) -> String {
    format!("approval:{project}:{}:{call_id}", run.unwrap_or("-"))
}

/// Lock what a waiting call is about: the fields its request names of its entity (an
/// update), or the whole of each entity it names otherwise (a create, a delete, a merge's
/// entries in `versions`).
pub(super) fn lock(session: &mut crate::session::Session, record: &ApprovalRecord) {
    let call = record.call_id.as_str();
    let request = &record.request;
    let mut keys: Vec<(String, Vec<String>)> = request["versions"]
        .as_object()
        .map(|v| v.keys().map(|k| (k.clone(), Vec::new())).collect())
        .unwrap_or_default();
    if let (Some(kind), Some(id)) = (
        request["kind"]
            .as_str()
            .filter(|k| *k != crate::policy::MCP_KIND),
        request["id"].as_str(),
    ) {
        let update = crate::policy::action_of(&record.tool) == crate::policy::Action::Update;
        let fields: Vec<String> = if update {
            request["fields"]
                .as_array()
                .map(|f| {
                    f.iter()
                        .filter_map(|f| f["field"].as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        keys.push((format!("{kind}/{id}"), fields));
    }
    for (key, fields) in keys {
        if let Some((kind, id)) = key.split_once('/') {
            if let Ok(kind) = kind.parse::<crate::bible::Kind>() {
                session.bible.lock(kind, id, call, fields);
            }
        }
    }
}

/// `approve` params.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "ApproveParams", optional_fields)]
pub(super) struct ApproveParams {
    call_id: String,
    decision: Decision,
    /// The writer's edit of the call's arguments (approve only).
    #[serde(default)]
    args: Option<Value>,
    /// Why (told to the model with a rejection).
    #[serde(default)]
    reason: Option<String>,
    /// The run, when the same call id waits in more than one.
    #[serde(default)]
    run_id: Option<String>,
    /// The digest of the card the writer saw (`digest` of the card); when given, a call
    /// waiting under this id that is not that card is refused with `conflict`.
    #[serde(default)]
    digest: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq, TS)]
#[serde(rename_all = "snake_case")]
pub(super) enum Decision {
    Approve,
    Reject,
}

/// `list_approvals` params.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "ListApprovalsParams", optional_fields)]
pub(super) struct ListApprovals {
    /// Only this run's.
    #[serde(default)]
    run_id: Option<String>,
}

/// `list_approvals`: the waiting calls of the open project and its paused runs.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub(super) struct ApprovalList {
    /// The project.
    project: String,
    /// The waiting calls, oldest first.
    approvals: Vec<ApprovalCard>,
    /// The paused runs.
    paused_runs: Vec<PausedRunInfo>,
}

/// A paused run and how many of its calls wait.
#[derive(Serialize, TS)]
pub(super) struct PausedRunInfo {
    /// The run's id.
    run: String,
    /// How many calls wait for the writer.
    pending: usize,
}

impl Core {
    /// The pending-approval record of a call that needs approval.
    pub(super) fn approval_record(
        &self,
        project: &str,
        run: Option<&str>,
        call: &ToolCall,
        origin: &Origin,
        result: &ToolResult,
    ) -> ApprovalRecord {
        let call_id = call.id.clone().unwrap_or_default();
        ApprovalRecord {
            id: approval_key(project, run, &call_id),
            project: project.to_string(),
            state: ApprovalState::Pending,
            run: run.map(str::to_string),
            call_id,
            tool: call.name.clone(),
            args: call.args.clone(),
            origin: origin.to_string(),
            request: result.data.get("details").cloned().unwrap_or(Value::Null),
            created_ms: self.env.clock.now_ms(),
            group: None,
            who: None,
            decided_ms: None,
            reason: None,
            edited_args: None,
            result: None,
        }
    }

    pub(super) fn emit_approvals_changed(&self, project: &str, requested: Option<&ApprovalRecord>) {
        self.emit(ApprovalsChangedEvent {
            project: project.to_string(),
            requested: requested.map(ApprovalRecord::card),
        });
    }

    /// Lock what the waiting calls of a loaded project are about.
    pub(super) async fn relock(&self, session: &mut crate::session::Session) -> Result<(), Error> {
        for row in self.approval_records(&session.project.id).await? {
            if row.record.state == ApprovalState::Pending {
                lock(session, &row.record);
            }
        }
        Ok(())
    }

    /// Release a decided call's locks.
    fn unlock(&self, project: &str, call: &str) {
        let _ = self.with_project(project, |s| {
            s.bible.unlock(call);
            Ok(())
        });
    }

    /// The approval records of a project. A decision that was taken (`approved` or
    /// `rejected`) but whose call never finished (the worker died between the two commits:
    /// the call's own batch marks it `done`), and that no request of this core is carrying
    /// out, waits again: it reads as `pending`, as it was before the decision, with the stored
    /// state kept in `stored_state` for the compare-and-set of the next decision.
    async fn approval_records(&self, project: &str) -> Result<Vec<ApprovalRow>, Error> {
        let deciding = self.approvals.deciding();
        let rows = self
            .env
            .store
            .get_by_index(Table::Meta, "project", json!(project))
            .await?;
        Ok(approval_rows(&rows)
            .into_iter()
            .map(|mut record| {
                let stored_state = record.state;
                let interrupted = matches!(
                    stored_state,
                    ApprovalState::Approved | ApprovalState::Rejected
                ) && !deciding.contains(&record.id);
                if interrupted {
                    record.state = ApprovalState::Pending;
                    record.decided_ms = None;
                    record.reason = None;
                    record.edited_args = None;
                }
                ApprovalRow {
                    record,
                    stored_state,
                }
            })
            .collect())
    }

    /// Bring the waiting calls about story-bible entities that changed under them (an update
    /// from another device) up to date: each field's current value and the entity's version,
    /// saved, and the refreshed card announced. The card's digest changes with it, so an
    /// approval given on the card as it was is refused, and the writer decides on what is
    /// there now.
    pub(super) async fn refresh_approvals(
        &self,
        project: &str,
        changed: &[(crate::bible::Kind, String)],
    ) -> Result<(), Error> {
        if changed.is_empty() {
            return Ok(());
        }
        let waiting: Vec<ApprovalRecord> = self
            .approval_records(project)
            .await?
            .into_iter()
            .filter(|row| {
                row.record.state == ApprovalState::Pending
                    && row.stored_state == ApprovalState::Pending
            })
            .map(|row| row.record)
            .collect();
        let mut batch = Batch::new();
        let mut cards = Vec::new();
        for mut record in waiting {
            let about = changed.iter().find(|(kind, id)| {
                record.request["kind"].as_str() == Some(kind.name())
                    && record.request["id"].as_str() == Some(id.as_str())
            });
            let Some((kind, id)) = about else {
                continue;
            };
            let Some(entity) = self
                .projects
                .read(project, |o| o.session.bible.get(*kind, id).cloned())
                .flatten()
            else {
                continue;
            };
            if let Some(fields) = record.request["fields"].as_array_mut() {
                for field in fields {
                    if let Some(name) = field["field"].as_str().map(str::to_string) {
                        field["current"] = entity.get(&name).clone();
                    }
                }
            }
            record.request["version"] = json!(entity.version);
            cards.push(record.card());
            batch.put_value(Table::Meta, MetaRecord::Approval(record).to_value());
        }
        if batch.is_empty() {
            return Ok(());
        }
        self.env.store.commit(batch).await?;
        for card in cards {
            self.emit(ApprovalsChangedEvent {
                project: project.to_string(),
                requested: Some(card),
            });
        }
        Ok(())
    }

    /// Cards of the waiting calls of a project (of one run, if given), oldest first.
    pub(super) async fn pending_cards(
        &self,
        project: &str,
        run: Option<&str>,
    ) -> Result<Vec<ApprovalCard>, Error> {
        let mut records: Vec<ApprovalRecord> = self
            .approval_records(project)
            .await?
            .into_iter()
            .map(|row| row.record)
            .filter(|r| r.state == ApprovalState::Pending)
            .filter(|r| run.is_none_or(|run| r.run.as_deref() == Some(run)))
            .collect();
        records.sort_by_key(|r| r.created_ms);
        Ok(records.iter().map(ApprovalRecord::card).collect())
    }

    pub(super) async fn list_approvals(&self, p: ListApprovals) -> Result<ApprovalList, Error> {
        let project = self.current()?;
        let approvals = self.pending_cards(&project, p.run_id.as_deref()).await?;
        let paused_runs = self
            .paused_runs(&project)
            .await?
            .into_iter()
            .map(|r| PausedRunInfo {
                pending: r.paused.map_or(0, |p| p.root.pending.len()),
                run: r.run,
            })
            .collect();
        Ok(ApprovalList {
            project,
            approvals,
            paused_runs,
        })
    }

    /// Serve `approve`: decide one waiting call, run it if approved, and resume its run when
    /// it was the run's last waiting call.
    pub(super) async fn approve(&self, p: ApproveParams) -> Result<ApprovalResult, Error> {
        let project = self.current()?;
        let records = self.approval_records(&project).await?;
        let matching: Vec<&ApprovalRow> = records
            .iter()
            .filter(|r| r.record.call_id == p.call_id)
            .filter(|r| {
                p.run_id
                    .as_deref()
                    .is_none_or(|run| r.record.run.as_deref() == Some(run))
            })
            .collect();
        let Some(row) = matching
            .iter()
            .find(|r| r.record.state == ApprovalState::Pending)
            .copied()
        else {
            return Err(match matching.first() {
                Some(r) => already_decided(&p.call_id, r.record.state.as_str()),
                None => Error::from(ToolError::not_found(format!(
                    "no call '{}' waits for approval in this project",
                    p.call_id.chars().take(100).collect::<String>()
                ))),
            });
        };
        if let Some(seen) = &p.digest {
            if *seen != row.record.digest() {
                return Err(Error::from(ToolError::new(
                    "conflict",
                    format!(
                        "the call waiting as '{}' is not the card that was shown (its digest differs); nothing was decided; list the approvals again",
                        p.call_id.chars().take(100).collect::<String>()
                    ),
                )));
            }
        }
        if p.decision == Decision::Reject && p.args.is_some() {
            return Err(super::invalid(
                "approve",
                "'args' go with an approval, not a rejection",
            ));
        }
        if p.args.as_ref().is_some_and(|a| !a.is_object()) {
            return Err(super::invalid("approve", "'args' must be an object"));
        }
        if let Some(args) = &p.args {
            // The writer's edit must fit the tool before the decision is taken.
            let checked = if crate::mcp::is_mcp(&row.record.tool) {
                self.check_mcp_args(&row.record.tool, args)
            } else {
                self.registry
                    .validate_call(&row.record.tool, args.clone())
                    .map(|_| ())
            };
            checked.map_err(|e| super::invalid("approve", &format!("'args': {}", e.message)))?;
        }
        let mut claimed = row.record.clone();
        let key = claimed.id.clone();
        let run = claimed.run.clone();
        let origin: Origin = claimed
            .origin
            .parse()
            .map_err(|e: crate::commands::BadOrigin| super::invalid("approve", &e.to_string()))?;
        // Take the decision: exactly once, whichever tab asks first.
        let stored_state = crate::error::to_json(&row.stored_state);
        claimed.state = match p.decision {
            Decision::Approve => ApprovalState::Approved,
            Decision::Reject => ApprovalState::Rejected,
        };
        claimed.decided_ms = Some(self.env.clock.now_ms());
        if let Some(reason) = &p.reason {
            claimed.reason = Some(reason.clone());
        }
        if let Some(args) = &p.args {
            claimed.edited_args = Some(args.clone());
        }
        let mut batch = Batch::new();
        batch.expect(Table::Meta, key.clone(), "state", stored_state);
        batch.put_value(
            Table::Meta,
            MetaRecord::Approval(claimed.clone()).to_value(),
        );
        let Some(_deciding) = self.approvals.begin_deciding(key.clone()) else {
            return Err(already_decided(&p.call_id, "being decided"));
        };
        match self.env.store.commit(batch).await {
            Ok(()) => {}
            Err(StoreError::Conflict(_)) => return Err(already_decided(&p.call_id, "decided")),
            Err(e) => return Err(e.into()),
        }
        self.unlock(&project, &p.call_id);
        let call = ToolCall {
            id: Some(p.call_id.clone()),
            name: claimed.tool.clone(),
            args: p.args.clone().unwrap_or_else(|| claimed.args.clone()),
        };
        let result = match p.decision {
            Decision::Reject => {
                let result = denied(&call.name, p.reason.as_deref());
                claimed.state = ApprovalState::Done;
                claimed.result = Some(result.clone());
                let mut batch = Batch::new();
                batch.put_value(Table::Meta, MetaRecord::Approval(claimed).to_value());
                self.env.store.commit(batch).await?;
                result
            }
            Decision::Approve => {
                let request = &claimed.request;
                let mut grant = Grant::default();
                if let (Some(kind), Some(id)) = (request["kind"].as_str(), request["id"].as_str()) {
                    // A memory note is no bible kind (its key comes in `versions`), nor is an
                    // MCP server.
                    if kind != crate::policy::NOTE_KIND && kind != crate::policy::MCP_KIND {
                        let kind: crate::bible::Kind =
                            kind.parse().map_err(|e: crate::bible::BibleError| {
                                super::invalid("approve", &e.to_string())
                            })?;
                        grant.versions.insert(
                            Grant::key(kind, id),
                            request["version"].as_u64().unwrap_or(0),
                        );
                    }
                }
                // A call that touches several protected entries (a merge), or a memory note,
                // names them in `versions`.
                if let Some(versions) = request["versions"].as_object() {
                    for (key, version) in versions {
                        if let Some(v) = version.as_u64() {
                            grant.versions.insert(key.clone(), v);
                        }
                    }
                }
                let group = claimed.group.clone();
                let ctx = CallCtx {
                    run: run.clone(),
                    grant: Some(grant),
                    approval: Some(claimed),
                    group,
                    hold: None,
                    interrupt_on: Vec::new(),
                    no_overwrite: false,
                    who: None,
                    card_with_pause: false,
                };
                let (result, edits) = self
                    .execute_call_with(&project, call, origin, None, ctx)
                    .await?;
                if let Some(run) = &run {
                    for edit in edits {
                        self.emit_run(
                            run,
                            SubAgentOrigin::default(),
                            agent::RunEvent::EditApplied {
                                id: p.call_id.clone(),
                                chapter: edit.chapter,
                                version: edit.version,
                            },
                        );
                    }
                }
                result
            }
        };
        let call_status = agent::ToolCallStatus::of(&result);
        let status = call_status.as_str();
        self.emit_approvals_changed(&project, None);
        self.emit(ApprovalDecidedEvent {
            project: project.clone(),
            call_id: p.call_id.clone(),
            run: run.clone(),
            decision: p.decision,
            status: call_status,
        });
        if let Some(run) = &run {
            // The agent's place in its tree (path, session), as its other events say.
            let mut from: SubAgentOrigin = row.record.who.clone().unwrap_or_default();
            if from.agent.is_none() {
                from.agent = row.record.origin.strip_prefix("agent:").map(str::to_string);
            }
            let event = agent::RunEvent::ToolCallFinished {
                id: p.call_id.clone(),
                name: row.record.tool.clone(),
                status: call_status,
            };
            self.emit_run(run, from, event);
        }
        let text = result.to_text();
        let mut answer = ApprovalResult {
            call_id: p.call_id.clone(),
            decision: p.decision,
            status,
            result,
            run: None,
        };
        if status == "pending" {
            // The edited call needs another approval: the run stays paused.
            return Ok(answer);
        }
        if let Some(run) = run {
            answer.run = Some(
                match self
                    .record_run_result(&project, &run, &p.call_id, text)
                    .await?
                {
                    Some(paused) => ResumedRun::Ended(self.resume(paused).await?),
                    None => ResumedRun::StillPaused {
                        run,
                        status: RunStatus::Paused,
                    },
                },
            );
        }
        Ok(answer)
    }

    /// Save a decided call's result in its paused run. Returns the run when that was its
    /// last waiting call (this worker then resumes it); retried when another tab wrote the
    /// record first.
    async fn record_run_result(
        &self,
        project: &str,
        run: &str,
        call_id: &str,
        text: String,
    ) -> Result<Option<PausedRun>, Error> {
        let key = paused_key(project, run);
        for _ in 0..RUN_RECORD_RETRIES {
            let Some(row) = self.env.store.get(Table::Meta, &key).await? else {
                return Ok(None);
            };
            let invalid = |reason: String| {
                Error::from(StoreError::Invalid {
                    table: "meta",
                    reason,
                })
            };
            let mut record: PausedRunRecord =
                serde_json::from_value(row).map_err(|e| invalid(e.to_string()))?;
            if record.state != PausedState::Paused {
                return Ok(None);
            }
            let Some(paused) = record.paused.as_mut() else {
                return Err(invalid(
                    "a paused run's record has no `paused` state".into(),
                ));
            };
            paused.root.record(call_id, text.clone());
            let complete = paused.root.ready();
            let resumed = complete.then(|| (**paused).clone());
            let rev = record.rev;
            record.rev = rev + 1;
            if complete {
                record.state = PausedState::Resuming;
            }
            let mut batch = Batch::new();
            batch.expect(Table::Meta, key.clone(), "rev", json!(rev));
            batch.put_value(Table::Meta, MetaRecord::PausedRun(record).to_value());
            match self.env.store.commit(batch).await {
                Ok(()) => return Ok(resumed),
                Err(StoreError::Conflict(_)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(Error::Busy(
            "another tab keeps changing this run; try again".into(),
        ))
    }

    /// Resume a paused run whose waiting calls all have results (down its whole tree).
    async fn resume(&self, paused: PausedRun) -> Result<RunResult, Error> {
        let PausedRun {
            project,
            run_id,
            root,
            guards,
            tree_steps,
            tree_usage,
            max_steps,
            token_budget,
            group,
            output,
        } = paused;
        self.ensure_settings().await?;
        let settings = self.settings.get();
        let provider = self.model_config(&settings).await.map_err(Error::NoModel)?;
        let catalog = self.catalog(&project).await?;
        self.emit_run(
            &run_id,
            SubAgentOrigin::default(),
            RunProgress::RunResumed {
                project: project.clone(),
                agent: root.spec.name.clone(),
                steps: tree_steps,
            },
        );
        let mut state = crate::agent::TreeState::new(
            max_steps.unwrap_or(settings.max_steps),
            token_budget,
            tree_steps.max(root.steps),
            tree_usage,
        );
        if max_steps.is_none() {
            // An older record: its single agent's own bound applies.
            state.max_steps = None;
        }
        let mut tree = super::run_state::Tree::new(
            project,
            run_id,
            crate::agent::AbortSignal::new(),
            state,
            catalog,
            settings,
            provider,
        );
        *tree.group.borrow_mut() = group.unwrap_or_default();
        tree.output = output;
        if super::run_state::job_of_run(&tree.run_id).is_some() {
            tree.hold = Some(tree.run_id.clone());
            tree.no_overwrite = self.unit_no_overwrite(&tree.run_id);
            self.unit_resumed(&tree.run_id, &tree.abort);
        }
        self.drive(tree, super::run_state::Start::Resume(root), guards)
            .await
    }

    /// Carry on the chat runs an earlier worker left between a decision and the run's end
    /// (when this core loads the project; `records` are its `meta` records). A decided call
    /// whose result its paused run never recorded gets it now, and a run whose waiting calls
    /// all have results (recorded now, or `resuming` when that worker stopped) resumes in the
    /// background. One writer per project makes the earlier worker a dead one. A job's units
    /// are its job's (see `wake_jobs`).
    pub(super) fn wake_runs(&self, project: &str, records: &[Value]) {
        let Some(spawn) = self.jobs.spawner() else {
            return;
        };
        let approvals = approval_rows(records);
        for record in paused_run_rows(records) {
            let resuming = record.state == PausedState::Resuming;
            if !resuming && record.state != PausedState::Paused {
                continue;
            }
            let Some(paused) = record.paused else {
                continue;
            };
            if super::run_state::job_of_run(&paused.run_id).is_some() {
                continue;
            }
            let results: Vec<(String, String)> = approvals
                .iter()
                .filter(|r| r.state == ApprovalState::Done)
                .filter(|r| r.run.as_deref() == Some(paused.run_id.as_str()))
                .filter(|r| paused.root.waits_for(&r.call_id))
                .filter_map(|r| {
                    // The text the deciding worker would have recorded.
                    let result = r.result.as_ref()?;
                    Some((r.call_id.clone(), result.to_text()))
                })
                .collect();
            if !resuming && results.is_empty() {
                continue;
            }
            let core = self.background(project);
            let (paused, rev) = (*paused, record.rev);
            spawn(Box::pin(async move {
                let _ = core.wake_run(paused, rev, resuming, results).await;
            }));
        }
    }

    /// Record `results` in a paused run an earlier worker left, and resume it when it is
    /// ready (a `resuming` one is claimed first, so that it resumes once).
    async fn wake_run(
        &self,
        paused: PausedRun,
        rev: u64,
        resuming: bool,
        results: Vec<(String, String)>,
    ) -> Result<(), Error> {
        let (project, run) = (paused.project.clone(), paused.run_id.clone());
        let mut ready = None;
        if resuming {
            let key = paused_key(&project, &run);
            let mut claimed = PausedRunRecord::paused(&paused);
            claimed.state = PausedState::Resuming;
            claimed.rev = rev + 1;
            let mut batch = Batch::new();
            batch.expect(Table::Meta, key, "rev", json!(rev));
            batch.put_value(Table::Meta, MetaRecord::PausedRun(claimed).to_value());
            self.env.store.commit(batch).await?;
            ready = Some(paused);
        }
        for (call, text) in results {
            if let Some(complete) = self.record_run_result(&project, &run, &call, text).await? {
                ready = Some(complete);
            }
        }
        if let Some(paused) = ready {
            self.resume(paused).await?;
        }
        Ok(())
    }

    /// Save a paused run, with the approval cards its calls asked for in the same batch.
    pub(super) async fn save_paused(&self, paused: &PausedRun) -> Result<(), Error> {
        let cards = self.take_cards(&paused.run_id);
        let mut batch = Batch::new();
        for card in &cards {
            batch.put_value(Table::Meta, MetaRecord::Approval(card.clone()).to_value());
        }
        batch.put_value(Table::Meta, paused_record(paused).to_value());
        if let Err(e) = self.env.store.commit(batch).await {
            for card in &cards {
                self.unlock(&paused.project, &card.call_id);
            }
            return Err(e.into());
        }
        for card in &cards {
            self.emit_approvals_changed(&paused.project, Some(card));
        }
        Ok(())
    }

    /// The approval cards a run's calls asked for since its last pause (see
    /// `CallCtx::card_with_pause`), taken.
    fn take_cards(&self, run: &str) -> Vec<ApprovalRecord> {
        self.runs.take_cards(run)
    }

    /// Drop the cards a run asked for and never saved (it ended without pausing): what they
    /// locked is free again.
    pub(super) fn drop_cards(&self, project: &str, run: &str) {
        for card in self.take_cards(run) {
            self.unlock(project, &card.call_id);
        }
    }

    /// The paused runs of a project.
    pub(super) async fn paused_runs(&self, project: &str) -> Result<Vec<PausedRunRecord>, Error> {
        let rows = self
            .env
            .store
            .get_by_index(Table::Meta, "project", json!(project))
            .await?;
        Ok(paused_run_rows(&rows)
            .into_iter()
            .filter(|r| r.state == PausedState::Paused)
            .collect())
    }

    /// Forget a run's saved pause (it ended).
    pub(super) async fn forget_paused(&self, project: &str, run: &str) -> Result<(), Error> {
        let key = paused_key(project, run);
        if self.env.store.get(Table::Meta, &key).await?.is_some() {
            let mut batch = Batch::new();
            batch.delete(Table::Meta, key);
            self.env.store.commit(batch).await?;
        }
        Ok(())
    }

    /// Cancel the waiting calls of a run (it was aborted): each is taken from `pending` to
    /// `cancelled`, unless a tab decided it first.
    pub(super) async fn cancel_pending(&self, project: &str, run: &str) -> Result<(), Error> {
        let mut any = false;
        for ApprovalRow { record, .. } in self.approval_records(project).await? {
            if record.state != ApprovalState::Pending || record.run.as_deref() != Some(run) {
                continue;
            }
            let (key, call_id) = (record.id.clone(), record.call_id.clone());
            let mut cancelled = record;
            cancelled.state = ApprovalState::Cancelled;
            let mut batch = Batch::new();
            batch.expect(
                Table::Meta,
                key,
                "state",
                crate::error::to_json(&ApprovalState::Pending),
            );
            batch.put_value(Table::Meta, MetaRecord::Approval(cancelled).to_value());
            match self.env.store.commit(batch).await {
                Ok(()) => {
                    any = true;
                    self.unlock(project, &call_id);
                }
                Err(StoreError::Conflict(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        if any {
            self.emit_approvals_changed(project, None);
        }
        Ok(())
    }

    /// Abort a paused run of the open project: its waiting calls get `aborted` results, the
    /// conversation is kept, and the run ends. False if there is no such paused run.
    pub(super) async fn abort_paused(&self, run: &str) -> Result<bool, Error> {
        let Ok(project) = self.current() else {
            return Ok(false);
        };
        let key = paused_key(&project, run);
        let Some(row) = self.env.store.get(Table::Meta, &key).await? else {
            return Ok(false);
        };
        let Ok(record) = serde_json::from_value::<PausedRunRecord>(row) else {
            return Ok(false);
        };
        if record.state != PausedState::Paused {
            return Ok(false);
        }
        let mut batch = Batch::new();
        batch.expect(Table::Meta, key.clone(), "rev", json!(record.rev));
        batch.delete(Table::Meta, key);
        match self.env.store.commit(batch).await {
            Ok(()) => {}
            Err(StoreError::Conflict(_)) => return Ok(false),
            Err(e) => return Err(e.into()),
        }
        self.cancel_pending(&project, run).await?;
        if let Some(paused) = record.paused {
            let agent = paused.root.spec.name.clone();
            let todos = paused.root.todos.clone();
            let (steps, usage) = (paused.tree_steps.max(paused.root.steps), paused.tree_usage);
            let messages = paused.root.complete_aborted();
            if super::run_state::job_of_run(run).is_none() {
                self.keep_conversation(&project, &agent, messages).await?;
            }
            let result = RunResult {
                run: run.to_string(),
                status: RunStatus::Aborted,
                agent: None,
                text: String::new(),
                steps,
                usage,
                message: None,
                output: None,
                pending: None,
                todos: (!todos.is_empty()).then_some(todos),
            };
            self.emit_run(
                run,
                SubAgentOrigin::default(),
                RunProgress::RunAborted(result),
            );
        }
        Ok(true)
    }
}

/// An approval record as read: a decision that was interrupted reads as `pending` (see
/// `Core::approval_records`), with the state the store holds.
struct ApprovalRow {
    /// The record, as it reads.
    record: ApprovalRecord,
    /// Its state in the store (what the next decision's compare-and-set expects).
    stored_state: ApprovalState,
}

fn already_decided(call_id: &str, state: &str) -> Error {
    Error::from(ToolError::new(
        "already_decided",
        format!(
            "the call '{}' was already {state}; it runs at most once",
            call_id.chars().take(100).collect::<String>()
        ),
    ))
}

/// The result a rejected call gets: the model reads it.
fn denied(tool: &str, reason: Option<&str>) -> ToolResult {
    let why = reason
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map_or(String::new(), |r| format!(" The writer said: {r}"));
    ToolResult::error(
        &ToolError::new(
            "denied",
            format!(
                "The writer rejected this {tool} call; nothing was changed.{why} Do not make the same change again unless the writer asks for it."
            ),
        ),
        Default::default(),
    )
}

/// `approve`: what the decided call did, and the run it resumed.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub(super) struct ApprovalResult {
    /// The decided call.
    call_id: String,
    /// The writer's decision.
    decision: Decision,
    /// The call's result status: `denied` after a rejection, `pending` if an edited call
    /// needs another approval.
    #[ts(type = "'success' | 'error' | 'aborted' | 'denied' | 'pending'")]
    status: &'static str,
    /// The call's tool result.
    result: ToolResult,
    /// The resumed run's result, once it ended or paused again; `null` when no run resumed.
    run: Option<ResumedRun>,
}

/// The run a decision resumed.
#[derive(Serialize, TS)]
#[serde(untagged)]
pub(super) enum ResumedRun {
    /// It ran until it ended or paused again.
    Ended(RunResult),
    /// Other calls of it still wait: it stays paused.
    StillPaused {
        /// The run's id.
        run: String,
        /// `paused`.
        status: RunStatus,
    },
}

/// `approvals_changed`: calls waiting for approval were added or decided.
#[derive(Serialize, TS)]
pub(super) struct ApprovalsChangedEvent {
    /// The project.
    pub(super) project: String,
    /// The new card, or `null` when a call was decided (or cancelled).
    pub(super) requested: Option<ApprovalCard>,
}

/// `approval_decided`: a waiting call was decided.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub(super) struct ApprovalDecidedEvent {
    /// The project.
    pub(super) project: String,
    /// The decided call.
    pub(super) call_id: String,
    /// Its run (`null` for a call made outside a run).
    pub(super) run: Option<String>,
    /// The writer's decision.
    pub(super) decision: Decision,
    /// The call's result status.
    pub(super) status: agent::ToolCallStatus,
}
