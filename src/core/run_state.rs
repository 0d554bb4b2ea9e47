//! Run state: the data that runs, run trees, approvals and jobs share. A run tree's levels
//! ([`Frame`], [`Node`], [`Tree`]), a run paused for the writer's approval ([`PausedRun`])
//! and its record, the approval card a waiting call shows, the run ids of job units, and a
//! run's kept conversation. `run.rs`, `tree.rs`, `approvals.rs` and `jobs.rs` use these and
//! not each other; the [`Core`](super::Core) calls between them.

use std::cell::RefCell;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::agent::planning::TodoItem;
use crate::agent::{self, AbortSignal, AgentSpec, Catalog, Delegation, RunOutcome, TreeState};
use crate::llm::{Message, ProviderConfig, Role, ToolCall, Usage};
use crate::settings::Settings;
use crate::tools::ToolResult;

/// One level of a paused tree: an agent's conversation and the calls it waits for.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Frame {
    pub(super) spec: AgentSpec,
    /// Agent names from the root to this one.
    #[serde(default)]
    pub(super) path: Vec<String>,
    /// The agent session's id (empty for the root).
    #[serde(default, rename = "session")]
    pub(super) agent_session: String,
    /// The tool this agent answers its caller with, if any.
    #[serde(default)]
    pub(super) reply_tool: Option<String>,
    /// The calling agent, if any.
    #[serde(default)]
    pub(super) caller: Option<String>,
    /// How the caller delegated (the result's shape).
    #[serde(default)]
    pub(super) delegation: Delegation,
    /// The conversation so far (the paused calls without results).
    pub(super) messages: Vec<Message>,
    pub(super) steps: usize,
    pub(super) usage: Usage,
    /// The calls waiting: for the writer's approval, or for a paused sub-agent.
    pub(super) pending: Vec<ToolCall>,
    /// Results of waiting calls decided so far (call id → result text).
    #[serde(default)]
    pub(super) results: BTreeMap<String, String>,
    /// The paused sub-agents, by the routing call that runs them (saved as a JSON object).
    #[serde(default)]
    pub(super) children: BTreeMap<String, Frame>,
    /// Files this agent (and its sub-agents) changed so far.
    #[serde(default)]
    pub(super) files_changed: Vec<String>,
    /// This agent's to-do list (a planning agent's; see [`crate::agent::planning`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) todos: Vec<TodoItem>,
}

impl Frame {
    /// Record the result of waiting call `call_id` wherever it waits in the tree. False if
    /// no frame waits for it.
    pub(super) fn record(&mut self, call_id: &str, text: String) -> bool {
        if self
            .pending
            .iter()
            .any(|c| c.id == call_id && !self.children.contains_key(call_id))
        {
            self.results.insert(call_id.to_string(), text);
            return true;
        }
        let mut text = Some(text);
        for (_, child) in self.children.iter_mut() {
            if let Some(t) = text.take() {
                if child.record(call_id, t.clone()) {
                    return true;
                }
                text = Some(t);
            }
        }
        false
    }

    /// Whether waiting call `call_id` (for the writer's approval) still has no result
    /// anywhere in the tree.
    pub(super) fn waits_for(&self, call_id: &str) -> bool {
        self.pending.iter().any(|c| {
            c.id == call_id
                && !self.children.contains_key(call_id)
                && !self.results.contains_key(call_id)
        }) || self.children.values().any(|child| child.waits_for(call_id))
    }

    /// Whether every waiting call in the tree has its result (the tree can resume).
    pub(super) fn ready(&self) -> bool {
        self.pending.iter().all(|c| match self.children.get(&c.id) {
            Some(child) => child.ready(),
            None => self.results.contains_key(&c.id),
        })
    }

    /// The paused sub-agents, taken out to be removed one by one.
    pub(super) fn take_children(&mut self) -> BTreeMap<String, Frame> {
        std::mem::take(&mut self.children)
    }

    /// Every call id of the tree's conversations (so new ones stay unique).
    pub(super) fn call_ids(&self, into: &mut std::collections::BTreeSet<String>) {
        for m in &self.messages {
            into.extend(m.tool_calls.iter().map(|c| c.id.clone()));
        }
        for child in self.children.values() {
            child.call_ids(into);
        }
    }

    /// Give every waiting call without a result an `aborted` result, down the tree, and
    /// return the root's conversation completed.
    pub(super) fn complete_aborted(mut self) -> Vec<Message> {
        let mut children = self.take_children();
        for call in self.pending.clone() {
            if let Some(child) = children.remove(&call.id) {
                let _ = child.complete_aborted();
                self.results
                    .insert(call.id.clone(), agent::aborted_result().to_text());
            }
        }
        agent::complete_paused(&mut self.messages, &self.pending, &self.results);
        self.messages
    }
}

/// Who a node of the tree is.
#[derive(Clone)]
pub(super) struct Node {
    pub(super) spec: AgentSpec,
    pub(super) path: Vec<String>,
    pub(super) agent_session: String,
    pub(super) reply_tool: Option<String>,
    pub(super) caller: Option<String>,
    pub(super) delegation: Delegation,
    /// Its to-do list so far (a planning agent's).
    pub(super) todos: Vec<TodoItem>,
}

impl Node {
    /// The root of a tree.
    pub(super) fn root(spec: AgentSpec) -> Self {
        Self {
            path: vec![spec.name.clone()],
            spec,
            agent_session: String::new(),
            reply_tool: None,
            caller: None,
            delegation: Delegation::Route,
            todos: Vec::new(),
        }
    }

    pub(super) fn of(frame: &Frame) -> Self {
        Self {
            spec: frame.spec.clone(),
            path: frame.path.clone(),
            agent_session: frame.agent_session.clone(),
            reply_tool: frame.reply_tool.clone(),
            caller: frame.caller.clone(),
            delegation: frame.delegation,
            todos: frame.todos.clone(),
        }
    }

    pub(super) fn path_text(&self) -> String {
        self.path.join(" › ")
    }

    /// What every event of this node carries: its agent, path and (for a sub-agent) agent
    /// session.
    pub(super) fn tags(&self) -> SubAgentOrigin {
        SubAgentOrigin {
            agent: Some(self.spec.name.clone()),
            path: Some(self.path_text()),
            session: (!self.agent_session.is_empty()).then(|| self.agent_session.clone()),
        }
    }
}

/// What a node's run came to.
pub(super) struct NodeEnd {
    pub(super) outcome: RunOutcome,
    /// Files the node (and its sub-agents) changed.
    pub(super) files: Vec<String>,
    /// Its state, when it paused.
    pub(super) frame: Option<Frame>,
    /// Its to-do list as it ended (a planning agent's).
    pub(super) todos: Vec<TodoItem>,
}

/// A running tree.
pub(super) struct Tree {
    pub(super) project: String,
    pub(super) run_id: String,
    pub(super) abort: AbortSignal,
    pub(super) state: TreeState,
    pub(super) catalog: Catalog,
    pub(super) settings: Settings,
    pub(super) provider: ProviderConfig,
    /// Paused sub-agents of the levels now running, by routing call id.
    pub(super) paused: RefCell<BTreeMap<String, Frame>>,
    /// The tree's undo group: every edit of every agent in it joins it (kept across a pause).
    pub(super) group: RefCell<String>,
    /// When the tree is a job's unit: the unit's hold, under which its writes wait to be
    /// saved with the unit's progress mark (see `jobs.rs`).
    pub(super) hold: Option<String>,
    /// The tree may not overwrite what it wrote (a job without `allowOverwrite`).
    pub(super) no_overwrite: bool,
    /// The structured answer the root agent must end with, if the run asked for one.
    pub(super) output: Option<crate::llm::OutputFormat>,
}

impl Tree {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        project: String,
        run_id: String,
        abort: AbortSignal,
        state: TreeState,
        catalog: Catalog,
        settings: Settings,
        provider: ProviderConfig,
    ) -> Self {
        Self {
            project,
            run_id,
            abort,
            state,
            catalog,
            settings,
            provider,
            paused: RefCell::new(BTreeMap::new()),
            group: RefCell::new(String::new()),
            hold: None,
            output: None,
            no_overwrite: false,
        }
    }

    /// Note the call ids of a paused tree, so new ones stay unique.
    pub(super) fn take_ids(&self, frame: &Frame) {
        frame.call_ids(&mut self.state.call_ids.borrow_mut());
    }

    /// The agents of the tree that may call `tool`, said for the model.
    pub(super) fn who_may_call(
        &self,
        root: &str,
        tool: &str,
        registry: &crate::tools::ToolRegistry,
    ) -> String {
        let may: Vec<String> = self
            .catalog
            .reachable(root)
            .into_iter()
            .filter(|a| {
                a.tools.iter().any(|t| t == tool)
                    || a.toolset.as_ref().is_some_and(|set| {
                        registry
                            .toolset(set)
                            .is_ok_and(|defs| defs.iter().any(|d| d.name == tool))
                    })
            })
            .map(|a| a.name.clone())
            .collect();
        if may.is_empty() {
            String::new()
        } else {
            format!("only these agents may call it: {}", may.join(", "))
        }
    }
}

/// The model provider for an agent: the configured one, with the agent's model and
/// temperature.
pub(super) fn provider_for(
    spec: &AgentSpec,
    settings: &Settings,
    base: &ProviderConfig,
) -> Result<(ProviderConfig, Option<f64>), String> {
    let mut provider = base.clone();
    let mut temperature = settings.temperature;
    if let Some(model) = &spec.model {
        if let Some(kind) = &model.provider {
            let wanted: crate::llm::ProviderKind = kind.parse()?;
            if wanted != base.kind {
                return Err(format!(
                    "agent '{}' asks for the {kind} provider, but the settings configure another; change the settings or the agent's 'model.provider'",
                    spec.name
                ));
            }
        }
        if let Some(name) = &model.model {
            provider.model = name.clone();
        }
        if model.temperature.is_some() {
            temperature = model.temperature;
        }
    }
    Ok((provider, temperature))
}

/// A run paused for the writer's approval, as saved: the tree's root frame (the older,
/// single-agent records have the same fields) and what the whole tree shares.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PausedRun {
    pub(super) project: String,
    pub(super) run_id: String,
    #[serde(flatten)]
    pub(super) root: Frame,
    /// The run's single-use guards.
    #[serde(default)]
    pub(super) guards: std::collections::BTreeSet<String>,
    /// Model calls and tokens of the whole tree so far, and its bounds.
    #[serde(default)]
    pub(super) tree_steps: usize,
    #[serde(default)]
    pub(super) tree_usage: Usage,
    #[serde(default)]
    pub(super) max_steps: Option<usize>,
    #[serde(default)]
    pub(super) token_budget: Option<u64>,
    /// The tree's undo group (so a resumed run stays one group).
    #[serde(default)]
    pub(super) group: Option<String>,
    /// The structured answer the run must end with, if it asked for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) output: Option<crate::llm::OutputFormat>,
}

/// Where a tree's drive starts.
pub(super) enum Start {
    /// A new run: the root and its opening messages.
    Fresh(Node, Vec<Message>),
    /// A paused tree whose waiting calls all have results.
    Resume(Frame),
}

/// Most messages of a project's conversation kept for the next run (older turns are
/// dropped whole).
const MAX_CONVERSATION_MESSAGES: usize = 60;

/// An event of an agent's loop with secrets taken out of its text (a provider may echo the
/// key in an error).
pub(super) fn redacted(settings: &Settings, event: agent::RunEvent) -> agent::RunEvent {
    if !settings.has_secrets() {
        return event;
    }
    let text = crate::error::to_json(&event).to_string();
    let clean = settings.redact(&text);
    if clean == text {
        event
    } else {
        serde_json::from_str(&clean).unwrap_or(event)
    }
}

/// Keep at most [`MAX_CONVERSATION_MESSAGES`], cutting only before a user message so every
/// tool call keeps its result.
pub(super) fn trim_conversation(messages: &mut Vec<Message>) {
    if messages.len() <= MAX_CONVERSATION_MESSAGES {
        return;
    }
    let excess = messages.len() - MAX_CONVERSATION_MESSAGES;
    let cut = messages
        .iter()
        .enumerate()
        .skip(excess)
        .find(|(_, m)| m.role == Role::User)
        .map_or(messages.len(), |(i, _)| i);
    messages.drain(..cut);
}

/// The run id of a job's unit.
pub(super) fn unit_run(job: &str, unit: &str) -> String {
    format!("job:{job}:{unit}")
}

/// The job and unit of a unit's run id, if it is one.
pub(super) fn job_of_run(run: &str) -> Option<(&str, &str)> {
    run.strip_prefix("job:")?.split_once(':')
}

/// Whether a result says the call waits for the writer's approval.
pub(super) fn is_approval_required(result: &ToolResult) -> bool {
    !result.is_success()
        && result.data.get("code").and_then(Value::as_str) == Some("approval_required")
}

/// The key of a paused run's record.
pub(super) fn paused_key(project: &str, run: &str) -> String {
    format!("paused:{project}:{run}")
}

/// A call waiting for the writer's approval, as the page shows it. The call's arguments and
/// the entity's values are free-form JSON.
#[derive(Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub(super) struct ApprovalCard {
    /// A digest of what the card shows; `approve {digest}` decides only this card.
    pub(super) digest: String,
    /// The call's id.
    pub(super) call_id: String,
    /// The same as `callId` (snake_case spelling).
    #[serde(rename = "call_id")]
    pub(super) call_id_snake: String,
    /// The paused run it belongs to (`null` for a call made outside a run).
    pub(super) run: Option<String>,
    /// Where the decision stands.
    #[ts(type = "'pending' | 'approved' | 'rejected' | 'done' | 'cancelled'")]
    pub(super) state: String,
    /// The tool called.
    pub(super) tool: String,
    /// Its arguments.
    #[ts(type = "Record<string, unknown>")]
    pub(super) args: Value,
    /// The agent that asked, `agent:<name>` (a sub-agent's own name, deep in a run's tree too).
    #[ts(as = "crate::commands::Origin")]
    pub(super) origin: String,
    /// The kind of the entity (a story-bible kind, or `memory_note`).
    pub(super) kind: Option<String>,
    /// The entity's id.
    pub(super) entity_id: Option<String>,
    /// The entity's version the request was made on.
    pub(super) version: Option<u64>,
    /// Why the call needs approval.
    pub(super) reason: Option<String>,
    /// The fields it would change.
    #[ts(as = "Vec<crate::policy::FieldChange>")]
    pub(super) fields: Vec<Value>,
    /// For a call that changes several entries (a glossary merge): every entry it updates or
    /// deletes, with its fields.
    #[ts(
        type = "Array<{ kind: string, id: string, action: 'update' | 'delete', title: string, fields: Array<ApprovalField> }>"
    )]
    pub(super) changes: Value,
    /// Each field's value now.
    #[ts(type = "Record<string, unknown>")]
    pub(super) current: BTreeMap<String, Value>,
    /// What the call would make each field.
    #[ts(type = "Record<string, unknown>")]
    pub(super) proposed: BTreeMap<String, Value>,
    /// When the call asked (ms since the epoch).
    pub(super) created_ms: u64,
}

/// How a run ended, or that it paused.
#[derive(Clone, Copy, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "RunStatus")]
pub(super) enum RunStatus {
    /// The model answered without calling a tool.
    Finished,
    /// The run's step limit stopped it.
    MaxSteps,
    /// The run's token budget stopped it.
    BudgetSpent,
    /// A model call failed.
    Failed,
    /// The structured answer asked for (`output`) was not valid, even when asked again.
    InvalidOutput,
    /// It was aborted.
    Aborted,
    /// Calls wait for the writer's approval (see `pending`); `approve` resumes it.
    Paused,
}

/// `run`: how the run ended (or paused).
#[derive(Clone, Serialize, TS)]
#[ts(optional_fields)]
pub(super) struct RunResult {
    /// The run's id.
    pub(super) run: String,
    /// How it ended, or `paused`.
    pub(super) status: RunStatus,
    /// The agent the run started with (not when paused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) agent: Option<String>,
    /// The model's last text.
    pub(super) text: String,
    /// Model calls made.
    pub(super) steps: usize,
    /// Tokens used.
    pub(super) usage: Usage,
    /// Why it failed (`failed` and `invalid_output` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) message: Option<String>,
    /// The structured answer, valid against the run's `output` schema (a run that asked
    /// for one and finished).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(type = "Record<string, unknown>")]
    pub(super) output: Option<serde_json::Value>,
    /// The calls waiting for approval (`paused` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) pending: Option<Vec<ApprovalCard>>,
    /// The agent's to-do list as the run ended (an agent with `planning` that wrote one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) todos: Option<Vec<TodoItem>>,
}

/// The `run` event: one event of one run, with the run's id and where in the run's tree and
/// jobs it comes from. Every event of a run carries its id.
///
/// A run is a tree: a routing call (`route_to_<agent>_agent`, `assign_task`) runs a
/// sub-agent in a temporary session, announced by `session_started` (whose `callId` is the
/// routing call's id, between its `tool_call_started` and `tool_call_finished`); the events
/// of an agent's loop carry its `agent`, `path` and (for a sub-agent) `session`;
/// `session_ended` (or `session_paused`, when a call deep in the tree waits for the writer's
/// approval) closes it.
#[derive(Serialize, TS)]
pub(super) struct RunEvent {
    /// What happened.
    #[serde(flatten)]
    pub(super) event: RunEventKind,
    /// The agent whose loop it comes from.
    #[serde(flatten)]
    pub(super) from: SubAgentOrigin,
    /// The job and unit, on a job unit's run.
    #[serde(flatten)]
    pub(super) unit: JobUnitOrigin,
    /// The run's id (it wins over a `run` of the event's own fields, which is the same).
    pub(super) run: String,
}

impl RunEvent {
    /// The project the event names (`run_started`, `run_resumed`).
    pub(super) fn project(&self) -> Option<&str> {
        match &self.event {
            RunEventKind::Run(RunProgress::RunStarted(e)) => Some(&e.project),
            RunEventKind::Run(RunProgress::RunResumed { project, .. }) => Some(project),
            _ => None,
        }
    }
}

/// Where in a run's tree an event comes from: its agent, its path from the agent the run
/// started with (`'player_interface › root › rules_lawyer'`) and, for a sub-agent, its
/// temporary session's id. On the events of an agent's loop (and its calls' approvals and
/// edits); absent on the run's own events.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(optional_fields)]
pub(super) struct SubAgentOrigin {
    /// The agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) agent: Option<String>,
    /// Agent names from the root to this one, joined by ` › `.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) path: Option<String>,
    /// The sub-agent's session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) session: Option<String>,
}

/// The job and unit a run event comes from (only on a job unit's run, `job:<job>:<unit>`).
#[derive(Serialize, TS, Default)]
#[ts(optional_fields)]
pub(super) struct JobUnitOrigin {
    /// The job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) job: Option<String>,
    /// The unit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) unit: Option<String>,
}

impl JobUnitOrigin {
    /// The job and unit of run `run`, if it is a job unit's.
    pub(super) fn of(run: &str) -> Self {
        match super::run_state::job_of_run(run) {
            Some((job, unit)) => Self {
                job: Some(job.to_string()),
                unit: Some(unit.to_string()),
            },
            None => Self::default(),
        }
    }
}

/// A run's event: a step of an agent's loop, or the run's own progress.
// An event lives until it is turned into JSON; boxing the large variants would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Serialize, TS)]
#[serde(untagged)]
pub(super) enum RunEventKind {
    /// What an agent's loop reports: text, tool calls, steps, usage.
    Agent(agent::RunEvent),
    /// The run's start, end, pause and sub-agent sessions.
    Run(RunProgress),
}

impl From<agent::RunEvent> for RunEventKind {
    fn from(event: agent::RunEvent) -> Self {
        Self::Agent(event)
    }
}

impl From<RunProgress> for RunEventKind {
    fn from(event: RunProgress) -> Self {
        Self::Run(event)
    }
}

/// A run's own progress.
// An event lives until it is turned into JSON; boxing the large variants would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Serialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum RunProgress {
    /// The run began.
    RunStarted(RunStarted),
    /// It ended: the model answered, or its step limit or token budget stopped it.
    RunFinished(RunResult),
    /// It failed.
    RunFailed(RunFailure),
    /// It was aborted.
    RunAborted(RunResult),
    /// It stopped to wait for approvals (`pending`); it resumes when the last one is decided.
    RunPaused(RunPaused),
    /// A call needs the writer's approval (the card to show); nothing changed yet.
    ApprovalRequested(ApprovalCard),
    /// A paused run goes on (in the worker where its last waiting call was decided).
    #[serde(rename_all = "camelCase")]
    RunResumed {
        /// The project.
        project: String,
        /// The agent the run started with.
        agent: String,
        /// Model calls made so far.
        steps: usize,
    },
    /// A sub-agent's temporary session began.
    SessionStarted(SessionOpened),
    /// A paused sub-agent's session goes on.
    SessionResumed(SessionOpened),
    /// A sub-agent's session ended; its answer is the routing call's result.
    SessionEnded(SessionEnded),
    /// A sub-agent's session waits for the writer's approval (the whole tree pauses).
    SessionPaused(SessionPaused),
}

/// `run_paused`: the run's result while it waits (a paused [`RunResult`]).
#[derive(Serialize, TS)]
pub(super) struct RunPaused {
    /// The run's id.
    pub(super) run: String,
    /// `paused`.
    #[ts(type = "'paused'")]
    pub(super) status: RunStatus,
    /// The model's last text.
    pub(super) text: String,
    /// Model calls made.
    pub(super) steps: usize,
    /// Tokens used.
    pub(super) usage: Usage,
    /// The calls waiting for approval.
    pub(super) pending: Vec<ApprovalCard>,
}

/// `run_started`.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub(super) struct RunStarted {
    /// The project.
    pub(super) project: String,
    /// The agent it starts with.
    pub(super) agent: String,
    /// The preset the writer's `run` named (`null`: none; absent on a job's run).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable, as = "Option<String>")]
    pub(super) preset: Option<Option<String>>,
    /// The toolset of the agent the writer's `run` starts with (`null`: its own toolbox;
    /// absent on a job's run).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable, as = "Option<String>")]
    pub(super) toolset: Option<Option<String>>,
    /// True on a job's run, which runs in the background.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "true")]
    pub(super) background: Option<bool>,
    /// Most model calls.
    pub(super) max_steps: usize,
    /// The model.
    pub(super) model: String,
    /// The writer's request (or the job's prompt).
    pub(super) prompt: String,
}

/// `run_failed`: how the run ended, or why it could not go on.
#[derive(Serialize, TS)]
#[serde(untagged)]
pub(super) enum RunFailure {
    /// A model call failed: the run's result.
    Ended(RunResult),
    /// The run broke off (a store or settings error).
    BrokenOff {
        /// `failed`.
        #[ts(type = "'failed'")]
        status: RunStatus,
        /// Why.
        message: String,
    },
}

/// `session_started`, `session_resumed`: a sub-agent's session, run by the routing call
/// `callId` of `caller`.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub(super) struct SessionOpened {
    /// The sub-agent.
    pub(super) agent: String,
    /// Agent names from the root to it, joined by ` › `.
    pub(super) path: String,
    /// Its session.
    pub(super) session: String,
    /// The routing call.
    pub(super) call_id: String,
    /// The calling agent.
    pub(super) caller: Option<String>,
}

/// How a sub-agent's session ended.
#[derive(Serialize, TS, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(super) enum SessionStatus {
    /// It answered.
    Finished,
    /// It used all its steps.
    MaxSteps,
    /// The run's token budget is spent.
    BudgetSpent,
    /// Its model call failed.
    Failed,
    /// The run was aborted.
    Aborted,
}

/// `session_ended`.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub(super) struct SessionEnded {
    /// The sub-agent.
    pub(super) agent: String,
    /// Agent names from the root to it, joined by ` › `.
    pub(super) path: String,
    /// Its session.
    pub(super) session: String,
    /// The routing call.
    pub(super) call_id: String,
    /// How it ended.
    pub(super) status: SessionStatus,
    /// Model calls it made.
    pub(super) steps: usize,
}

/// `session_paused`.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub(super) struct SessionPaused {
    /// The sub-agent.
    pub(super) agent: String,
    /// Agent names from the root to it, joined by ` › `.
    pub(super) path: String,
    /// Its session.
    pub(super) session: String,
    /// The routing call.
    pub(super) call_id: String,
    /// `paused`.
    #[ts(type = "'paused'")]
    pub(super) status: RunStatus,
    /// Model calls it made.
    pub(super) steps: usize,
}
