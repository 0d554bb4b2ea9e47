//! The agent loop: the model proposes tool calls, the tools run, the results go back to the
//! model, until it stops.
//!
//! [`run_agent`] is independent of where tools run: it takes an `execute` function (the core
//! passes one that goes through the session's edit path, so edits are undoable, saved and
//! announced). The caller opens one undo group for the turn. The loop guarantees:
//! - every tool call the model makes gets exactly one result, in order: executed, or an error
//!   result for an invalid call (arguments that are not valid JSON, or cut off), so the
//!   conversation is always valid to send back;
//! - it stops when the model answers without tool calls, after [`AgentSpec::max_steps`] model
//!   calls, when the token budget is spent, when a call fails, or when the run is aborted;
//! - an abort ([`AbortSignal`]) stops a model call at once (mid-stream: the partial answer is
//!   dropped from the transcript) and is checked before each tool call; a tool call that has
//!   started runs to its end (commands are atomic), the calls after it get an `aborted`
//!   result, so the manuscript is always exactly before or after each command;
//! - consecutive calls of asynchronous read-only tools ([`ToolDefinition::asynchronous`],
//!   such as `research_url`) in one step run concurrently; results keep the calls' order;
//! - usage is summed over the steps;
//! - the spec's `toolChoice` is sent with the first model call of a turn (the one answering
//!   the prompt or the task), the later ones leave the model free
//!   ([`AgentSpec::choice_for`]).

pub mod abort;
mod batch;
pub mod context;
pub mod output;
pub mod pipeline;
pub mod planning;
pub mod presets;
pub mod spec;

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;

use futures_util::future::{join_all, select, Either, LocalBoxFuture};
use serde::{Deserialize, Serialize};
use serde_json::json;
use serde_json::Value;
use ts_rs::TS;

pub use self::abort::AbortSignal;
pub use self::spec::{
    AgentSpec, Catalog, Delegation, ModelSettings, Preset, SubAgent, DEFAULT_MAX_STEPS,
    MAX_STEPS_LIMIT,
};

use crate::llm::client::{call_model, CallError, CallOptions, LlmTransport, Sleeper};
use crate::llm::tokens::{estimate_request, estimate_text, is_context_overflow};
use crate::llm::{
    build_request, Message, ProviderConfig, RequestOptions, StreamEvent, ToolCall, Usage,
};
use crate::tools::{ToolDefinition, ToolResult};

/// What a run reports as it goes (the `run` event's steps of the agent loop).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(rename = "AgentLoopEvent")]
pub enum RunEvent {
    /// More of the model's text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// The model began a tool call.
    ToolCallProposed {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// A tool call is about to run.
    ToolCallStarted {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Its arguments.
        #[ts(type = "Record<string, unknown>")]
        arguments: Value,
    },
    /// A tool call has its result.
    ToolCallFinished {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// How it came out.
        status: ToolCallStatus,
    },
    /// A tool call changed the manuscript (sent by the executor, the core, which knows).
    EditApplied {
        /// Call id.
        id: String,
        /// Chapter id.
        chapter: String,
        /// The chapter's version after the edit.
        version: u64,
    },
    /// A model call and its tool calls are done.
    StepFinished {
        /// Step number, from 1.
        step: usize,
    },
    /// Tokens used so far in the run.
    Usage {
        /// The sum.
        usage: Usage,
    },
    /// The conversation was brought back within the context window: old tool results
    /// shortened, older turns summarized (`removed` messages), before the next model call.
    Compacted {
        /// The request's estimated tokens before.
        before: usize,
        /// And after.
        after: usize,
        /// Messages replaced by the summary.
        removed: usize,
        /// Tool results shortened.
        shortened: usize,
    },
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RunEnd {
    /// The model answered without tool calls.
    Finished,
    /// `max_steps` model calls were made.
    MaxSteps,
    /// The token budget was spent.
    BudgetSpent,
    /// A model call failed.
    Failed {
        /// Why.
        message: String,
    },
    /// The run was aborted.
    Aborted,
    /// The run asked for a structured answer, and the model's was not valid against its
    /// schema, even when asked again.
    InvalidOutput {
        /// What was wrong.
        message: String,
    },
    /// Calls wait for the writer's approval: the run is paused (its state can be saved and
    /// continued with [`continue_agent`] once every paused call has a result).
    Paused {
        /// The waiting calls, in the model's order.
        pending: Vec<ToolCall>,
    },
}

/// A finished run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunOutcome {
    /// How it ended.
    pub end: RunEnd,
    /// The whole conversation (system prompt first), valid to continue.
    pub messages: Vec<Message>,
    /// The model's last text.
    pub text: String,
    /// Model calls made.
    pub steps: usize,
    /// Tokens used.
    pub usage: Usage,
    /// The arguments of the reply tool call that ended the run (a sub-agent's answer), if
    /// one did.
    pub reply: Option<Value>,
    /// The structured answer (when the request asked for one), valid against its schema.
    pub output: Option<Value>,
}

/// What the runs of one tree (an agent and the sub-agents it calls) share: the step and
/// token budgets, counted across the whole tree, and the call ids taken (unique per tree,
/// so each call's approval and result belong to exactly one call).
#[derive(Debug, Default)]
pub struct TreeState {
    /// Most model calls in the whole tree (unbounded when `None`).
    pub max_steps: Option<usize>,
    /// Most tokens in the whole tree.
    pub token_budget: Option<u64>,
    /// Model calls made so far in the tree.
    pub steps: Cell<usize>,
    /// Tokens used so far in the tree.
    pub usage: Cell<Usage>,
    /// Call ids taken in the tree.
    pub call_ids: RefCell<BTreeSet<String>>,
}

impl TreeState {
    /// A tree bounded by `max_steps` model calls and `token_budget` tokens, which has made
    /// `steps` calls and used `usage` so far.
    pub fn new(max_steps: usize, token_budget: Option<u64>, steps: usize, usage: Usage) -> Self {
        Self {
            max_steps: Some(max_steps),
            token_budget,
            steps: Cell::new(steps),
            usage: Cell::new(usage),
            call_ids: RefCell::new(BTreeSet::new()),
        }
    }

    fn spent(&self) -> bool {
        let usage = self.usage.get();
        self.token_budget
            .is_some_and(|budget| usage.input_tokens + usage.output_tokens >= budget)
    }
}

/// What a run needs from the outside.
pub struct RunContext<'a> {
    /// Sends requests.
    pub transport: &'a dyn LlmTransport,
    /// Waits.
    pub sleeper: &'a dyn Sleeper,
    /// The clock.
    pub now_ms: &'a dyn Fn() -> u64,
    /// Jitter in `[0, 1)`.
    pub jitter: &'a mut dyn FnMut() -> f64,
    /// Runs one tool call through the edit path. The calls of a run are executed one at a
    /// time, in order (the next starts when the previous one's future has resolved), except
    /// consecutive calls of asynchronous read-only tools in one step, whose futures are made
    /// at once and run concurrently (their results still go into the transcript in order).
    pub execute: &'a mut dyn FnMut(&ToolCall) -> LocalBoxFuture<'a, ToolResult>,
    /// Hears every event.
    pub on_event: &'a mut dyn FnMut(RunEvent),
    /// Stops the run.
    pub abort: &'a AbortSignal,
    /// The tree it belongs to (its budgets and call ids).
    pub tree: &'a TreeState,
    /// The tool that ends the run with an answer to the agent that called this one (a
    /// sub-agent's reply tool), if any: the loop handles it itself.
    pub reply_tool: Option<&'a str>,
    /// Says who may call a tool this agent may not (added to the error result).
    pub who_may_call: Option<&'a dyn Fn(&str) -> String>,
    /// The model's context window and how the conversation is kept within it (`None`: it is
    /// not watched).
    pub context: Option<context::ContextPolicy>,
}

/// The result given to calls that were not run because the run was aborted.
pub fn aborted_result() -> ToolResult {
    ToolResult::error(
        &crate::tools::ToolError::new(
            "aborted",
            "This call was not executed: the writer stopped the run.",
        ),
        Default::default(),
    )
}

/// A tool call's outcome in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// It did what it was asked.
    Success,
    /// It failed (the model reads why).
    Error,
    /// The run was aborted before or while it ran.
    Aborted,
    /// It waits for the writer's approval (code `approval_required`), or a sub-agent it
    /// runs waits for the writer (code `waiting`); the run pauses after this step.
    Pending,
    /// The writer rejected it (the model reads a result with code `denied`).
    Denied,
}

impl ToolCallStatus {
    /// The status of a call with `result`.
    pub fn of(result: &ToolResult) -> Self {
        if result.is_success() {
            return Self::Success;
        }
        match result.data.get("code").and_then(Value::as_str) {
            Some("aborted") => Self::Aborted,
            Some("denied") => Self::Denied,
            Some("approval_required") | Some("waiting") => Self::Pending,
            _ => Self::Error,
        }
    }

    /// Its name: `success`, `error`, `aborted`, `pending` or `denied`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Error => "error",
            Self::Aborted => "aborted",
            Self::Pending => "pending",
            Self::Denied => "denied",
        }
    }
}

/// `success`, `aborted`, `denied`, `pending` (code `approval_required`: the call waits for
/// the writer; or `waiting`: a sub-agent it runs waits for the writer) or `error`.
pub fn result_status(result: &ToolResult) -> &'static str {
    ToolCallStatus::of(result).as_str()
}

/// Put the results of paused calls into a paused conversation: each goes right after the
/// other results of its turn, in the order the model made the calls, so the conversation is
/// valid to send again. `results` maps call ids to result texts; a paused call missing from
/// it gets an `aborted` result.
pub fn complete_paused(
    messages: &mut Vec<Message>,
    pending: &[ToolCall],
    results: &std::collections::BTreeMap<String, String>,
) {
    let Some(turn) = messages
        .iter()
        .rposition(|m| m.role == crate::llm::Role::Assistant)
    else {
        return;
    };
    for call in pending {
        let text = results
            .get(&call.id)
            .cloned()
            .unwrap_or_else(|| aborted_result().to_text());
        messages.push(Message::tool_result(call, text));
    }
    // Order the turn's results as the calls were made.
    let order: Vec<String> = messages[turn]
        .tool_calls
        .iter()
        .map(|c| c.id.clone())
        .collect();
    let position = |m: &Message| {
        m.tool_call_id
            .as_ref()
            .and_then(|id| order.iter().position(|o| o == id))
            .unwrap_or(usize::MAX)
    };
    messages[turn + 1..].sort_by_key(position);
}

/// The result of a call that was not executed.
fn not_executed(reason: &str) -> ToolResult {
    ToolResult::error(
        &crate::tools::ToolError::invalid_args(format!(
            "This call was not executed: {reason}. Send it again with complete JSON arguments."
        )),
        Default::default(),
    )
}

/// The result of a call that was not executed and should not be sent again as it is.
fn not_executed_final(reason: &str) -> ToolResult {
    ToolResult::error(
        &crate::tools::ToolError::new(
            "not_allowed",
            format!("This call was not executed: {reason}."),
        ),
        Default::default(),
    )
}

/// Run an agent on `prompt`, after the earlier conversation `history`, with the memory block
/// for the system prompt.
#[allow(clippy::too_many_arguments)]
pub async fn run_agent(
    spec: &AgentSpec,
    tools: &[&ToolDefinition],
    provider: &ProviderConfig,
    call: CallOptions,
    request: RequestOptions,
    history: Vec<Message>,
    prompt: &str,
    memory_block: &str,
    cx: RunContext<'_>,
) -> RunOutcome {
    let toolbox: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    let messages = opening_messages(spec, &toolbox, history, prompt, &[memory_block]);
    continue_agent(
        spec,
        tools,
        provider,
        call,
        request,
        messages,
        (0, Usage::default()),
        cx,
    )
    .await
}

/// A run's first messages: the system prompt ([`system_prompt`]: the agent's instructions,
/// the guidance its tools need, then each
/// non-empty context `block` in order, such as `[EDITOR CONTEXT]` and `[AGENT MEMORY]`,
/// separated by blank lines), the earlier conversation `history` (its system messages
/// dropped) and the writer's prompt.
pub fn opening_messages(
    spec: &AgentSpec,
    toolbox: &[String],
    history: Vec<Message>,
    prompt: &str,
    blocks: &[&str],
) -> Vec<Message> {
    let mut messages = vec![Message::system(system_prompt(spec, toolbox, blocks))];
    messages.extend(
        history
            .into_iter()
            .filter(|m| m.role != crate::llm::Role::System),
    );
    messages.push(Message::user(prompt));
    messages
}

/// An agent's system prompt: its own, the guidance for the tools it has that need some
/// (planning; research, with "Always cite sources"), then `blocks` (the memory's context,
/// ...), each block after a blank line. `toolbox` is every tool it may call.
pub fn system_prompt(spec: &AgentSpec, toolbox: &[String], blocks: &[&str]) -> String {
    let mut system = spec.system_prompt.clone();
    let planning = spec.planning.then_some(planning::GUIDANCE);
    let research = toolbox
        .iter()
        .any(|t| crate::tools::research::is_research(t))
        .then_some(crate::tools::research::GUIDANCE);
    for block in planning
        .iter()
        .chain(research.iter())
        .chain(blocks.iter())
        .filter(|b| !b.trim().is_empty())
    {
        system.push_str("\n\n");
        system.push_str(block);
    }
    system
}

/// Go on with a run from a conversation whose last turn is complete (every call has its
/// result): a new run's first model call, or a paused run once the writer decided.
/// `done` is the steps and usage of the run so far.
#[allow(clippy::too_many_arguments)]
pub async fn continue_agent(
    spec: &AgentSpec,
    tools: &[&ToolDefinition],
    provider: &ProviderConfig,
    call: CallOptions,
    request: RequestOptions,
    mut messages: Vec<Message>,
    done: (usize, Usage),
    cx: RunContext<'_>,
) -> RunOutcome {
    let RunContext {
        transport,
        sleeper,
        now_ms,
        jitter,
        execute,
        on_event,
        abort,
        tree,
        reply_tool,
        who_may_call,
        context,
    } = cx;
    let (mut steps, mut usage) = done;
    let mut text = String::new();
    let mut reply: Option<Value> = None;
    // A structured answer: asked for natively, or as a call of an output tool.
    let output = request.output.clone();
    let output_def = output
        .as_ref()
        .filter(|_| crate::llm::output_by_tool(provider, !tools.is_empty()))
        .map(output::definition);
    let output_tool = output_def.as_ref().map(|d| d.name.to_string());
    let offered: Vec<&ToolDefinition> = tools.iter().copied().chain(output_def.iter()).collect();
    let mut structured: Option<Value> = None;
    let mut output_failures = 0usize;
    let mut output_error = String::new();
    // The model refused the step's request as too long once already.
    let mut overflowed = false;
    // After such a refusal: the tokens to compact down to, and the refusal.
    let mut squeeze: Option<(usize, String)> = None;
    let end = loop {
        if abort.is_aborted() {
            break RunEnd::Aborted;
        }
        if steps >= spec.max_steps.max(1)
            || tree.max_steps.is_some_and(|max| tree.steps.get() >= max)
        {
            break RunEnd::MaxSteps;
        }
        if spec
            .token_budget
            .is_some_and(|budget| usage.input_tokens + usage.output_tokens >= budget)
            || tree.spent()
        {
            break RunEnd::BudgetSpent;
        }
        if let Some(policy) = &context {
            // After an overflow error: down to its target, else within the window (if known).
            let forced = squeeze.take();
            let budget = match &forced {
                Some((target, _)) => Some(
                    policy
                        .budget(request.max_tokens)
                        .map_or(*target, |b| b.min(*target)),
                ),
                None => policy.budget(request.max_tokens),
            };
            if let Some(budget) = budget {
                let fitted = fit_context(
                    &mut messages,
                    &offered,
                    policy,
                    budget,
                    Summarizer {
                        transport,
                        sleeper,
                        provider,
                        call,
                        now_ms,
                        jitter: &mut *jitter,
                        abort,
                    },
                )
                .await;
                match (fitted, forced) {
                    (Some((compacted, spent)), _) => {
                        if let Some(u) = spent {
                            usage = usage.plus(u);
                            tree.usage.set(tree.usage.get().plus(u));
                            on_event(RunEvent::Usage { usage });
                        }
                        on_event(compacted);
                    }
                    // Nothing could be made shorter: the refusal stands.
                    (None, Some((_, message))) => break RunEnd::Failed { message },
                    (None, None) => {}
                }
                if abort.is_aborted() {
                    break RunEnd::Aborted;
                }
            }
        }
        steps += 1;
        tree.steps.set(tree.steps.get() + 1);
        // The spec's tool choice holds for the first step of a turn only; with nothing else
        // to call, an output tool must be called.
        let step = RequestOptions {
            tool_choice: match (&output_tool, spec.choice_for(&messages)) {
                (Some(name), crate::llm::ToolChoice::Auto) if tools.is_empty() => {
                    crate::llm::ToolChoice::Tool(name.clone())
                }
                (_, choice) => choice,
            },
            output: output.clone().filter(|_| output_tool.is_none()),
            ..request.clone()
        };
        let http = build_request(provider, &messages, &offered, &step);
        // Call ids are made unique (in the conversation and the tree) as the calls are
        // proposed, so every event of a call names it by one id.
        let mut taken: BTreeSet<String> = tree.call_ids.borrow().clone();
        taken.extend(
            messages
                .iter()
                .flat_map(|m| m.tool_calls.iter().map(|c| c.id.clone())),
        );
        let mut proposed: Vec<(String, String)> = Vec::new();
        // Text deltas go to the page gathered per window (see `batch`); `sink` is shared by
        // the stream and the window's timer.
        let batch = batch::TextBatch::new(call.text_batch_ms);
        let sink = std::cell::RefCell::new(&mut *on_event);
        let emit = |event: RunEvent| (sink.borrow_mut())(event);
        let flush = || {
            if let Some(text) = batch.take() {
                emit(RunEvent::TextDelta { text });
            }
        };
        let called = {
            let mut forward = |event: StreamEvent| match event {
                StreamEvent::TextDelta { text } => {
                    if let Some(text) = batch.push(text, now_ms()) {
                        emit(RunEvent::TextDelta { text });
                    }
                }
                StreamEvent::ToolCallStarted { id, name, .. } => {
                    flush();
                    let fresh = fresh_id(&id, &mut taken);
                    proposed.push((id, fresh.clone()));
                    emit(RunEvent::ToolCallProposed { id: fresh, name })
                }
                _ => {}
            };
            let mut model_call = std::pin::pin!(call_model(
                transport,
                sleeper,
                provider.kind,
                &http,
                call,
                now_ms,
                jitter,
                &mut forward,
            ));
            let called = loop {
                let due = std::pin::pin!(batch.due(sleeper, now_ms));
                let stop = select(abort.aborted(), due);
                match select(model_call.as_mut(), stop).await {
                    Either::Left((called, _)) => break Some(called),
                    // Dropping the call drops its stream, which cancels the request.
                    Either::Right((Either::Left(_), _)) => break None,
                    Either::Right((Either::Right((text, _)), _)) => {
                        emit(RunEvent::TextDelta { text })
                    }
                }
            };
            // The last text goes before anything else the run reports.
            flush();
            called
        };
        let outcome = match called {
            Some(Ok(outcome)) => outcome,
            Some(Err(CallError::Http { message, .. }))
                if !overflowed && context.is_some() && is_context_overflow(&message) =>
            {
                // The estimate let through what the model cannot take: compact harder (to
                // seven tenths of the request) and try the step once more.
                overflowed = true;
                steps -= 1;
                tree.steps.set(tree.steps.get().saturating_sub(1));
                let target = estimate_request(&messages, &offered) * 7 / 10;
                squeeze = Some((target, message));
                continue;
            }
            Some(Err(e)) => {
                break RunEnd::Failed {
                    message: e.to_string(),
                }
            }
            None => break RunEnd::Aborted,
        };
        overflowed = false;
        let answer = outcome.answer;
        if let Some(u) = answer.usage {
            usage = usage.plus(u);
            tree.usage.set(tree.usage.get().plus(u));
            on_event(RunEvent::Usage { usage });
        }
        text = answer.text.clone();
        // Every call the model made, valid or not, goes into the transcript with one result.
        let mut calls: Vec<(ToolCall, Option<String>)> = answer
            .tool_calls
            .iter()
            .cloned()
            .map(|c| (c, None))
            .collect();
        for invalid in &answer.invalid_tool_calls {
            calls.push((
                ToolCall {
                    id: invalid.id.clone(),
                    name: invalid.name.clone(),
                    arguments: json!({}),
                },
                Some(invalid.reason.clone()),
            ));
        }
        unique_call_ids(&mut calls, &mut proposed, &mut taken);
        tree.call_ids
            .borrow_mut()
            .extend(calls.iter().map(|(c, _)| c.id.clone()));
        messages.push(Message::assistant(
            answer.text.clone(),
            calls.iter().map(|(c, _)| c.clone()).collect(),
        ));
        let mut pending = Vec::new();
        // Consecutive calls of asynchronous read-only tools run at once; every result goes
        // into the transcript in the order of the calls.
        let concurrent = |i: usize| {
            let (call, invalid) = &calls[i];
            invalid.is_none()
                && reply_tool != Some(call.name.as_str())
                && tools
                    .iter()
                    .any(|t| t.name == call.name && t.asynchronous && t.read_only)
        };
        let mut i = 0;
        while i < calls.len() {
            let mut end = i + 1;
            if concurrent(i) && reply.is_none() && !abort.is_aborted() {
                while end < calls.len() && concurrent(end) {
                    end += 1;
                }
            }
            let results: Vec<ToolResult> = if end - i > 1 {
                for (call, _) in &calls[i..end] {
                    on_event(RunEvent::ToolCallStarted {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        arguments: call.arguments.clone(),
                    });
                }
                let running: Vec<_> = calls[i..end].iter().map(|(c, _)| execute(c)).collect();
                join_all(running).await
            } else {
                let (call, invalid) = &calls[i];
                vec![match invalid {
                    _ if abort.is_aborted() => aborted_result(),
                    _ if reply.is_some() => {
                        not_executed_final("you already sent your response, which ended your task")
                    }
                    Some(reason) => not_executed(reason),
                    None => {
                        on_event(RunEvent::ToolCallStarted {
                            id: call.id.clone(),
                            name: call.name.clone(),
                            arguments: call.arguments.clone(),
                        });
                        if reply_tool == Some(call.name.as_str()) {
                            reply = Some(call.arguments.clone());
                            ToolResult::success(
                                json!({"delivered": true, "message": "Your response was sent; your task is over."}),
                                Default::default(),
                            )
                        } else if output_tool.as_deref() == Some(call.name.as_str()) {
                            let checked = output
                                .as_ref()
                                .map_or(Ok(()), |o| output::check(&o.schema, &call.arguments));
                            match checked {
                                Ok(()) => {
                                    structured = Some(call.arguments.clone());
                                    ToolResult::success(
                                        json!({"delivered": true, "message": "Your answer was given; your task is over."}),
                                        Default::default(),
                                    )
                                }
                                Err(reason) => {
                                    output_failures += 1;
                                    let result = not_executed_final(&format!(
                                        "your answer does not fit its schema: {reason}; call {} again with a valid answer",
                                        call.name
                                    ));
                                    output_error = reason;
                                    result
                                }
                            }
                        } else if tools.iter().any(|t| t.name == call.name) {
                            execute(call).await
                        } else {
                            let mine: Vec<&str> = tools
                                .iter()
                                .map(|t| t.name.as_ref())
                                .chain(reply_tool)
                                .collect();
                            let mut reason = format!(
                                "'{}' is not one of your tools ({})",
                                call.name,
                                mine.join(", ")
                            );
                            if let Some(who) = who_may_call {
                                let who = who(&call.name);
                                if !who.is_empty() {
                                    reason.push_str("; ");
                                    reason.push_str(&who);
                                }
                            }
                            not_executed_final(&reason)
                        }
                    }
                }]
            };
            for ((call, _), result) in calls[i..end].iter().zip(results) {
                let status = ToolCallStatus::of(&result);
                on_event(RunEvent::ToolCallFinished {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    status,
                });
                if status == ToolCallStatus::Pending {
                    // Its result comes when the writer decides.
                    pending.push(call.clone());
                    continue;
                }
                messages.push(Message::tool_result(call, result.to_text()));
            }
            i = end;
        }
        on_event(RunEvent::StepFinished { step: steps });
        if !pending.is_empty() {
            if abort.is_aborted() {
                complete_paused(&mut messages, &pending, &Default::default());
                break RunEnd::Aborted;
            }
            break RunEnd::Paused { pending };
        }
        if abort.is_aborted() {
            break RunEnd::Aborted;
        }
        if let Some(error) = answer.error {
            break RunEnd::Failed { message: error };
        }
        if output_failures >= 2 {
            break RunEnd::InvalidOutput {
                message: output_error,
            };
        }
        if reply.is_some() || structured.is_some() {
            break RunEnd::Finished;
        }
        if calls.is_empty() {
            // A structured answer given as text: valid, or asked for once more.
            if let Some(format) = &output {
                match output::from_text(&format.schema, &answer.text) {
                    Ok(value) => structured = Some(value),
                    Err(reason) if output_failures == 0 => {
                        output_failures += 1;
                        messages.push(Message::user(output::ask_again(
                            &reason,
                            output_tool.as_deref(),
                        )));
                        continue;
                    }
                    Err(reason) => break RunEnd::InvalidOutput { message: reason },
                }
            }
            break RunEnd::Finished;
        }
    };
    RunOutcome {
        end,
        messages,
        text,
        steps,
        usage,
        reply,
        output: structured,
    }
}

/// Give every call of an answer the unique id it was proposed under (`proposed`: stream id
/// → unique id, in order), or, for a call that was not announced, a fresh unique id.
fn unique_call_ids(
    calls: &mut [(ToolCall, Option<String>)],
    proposed: &mut Vec<(String, String)>,
    taken: &mut BTreeSet<String>,
) {
    for (call, _) in calls.iter_mut() {
        if let Some(at) = proposed.iter().position(|(orig, _)| *orig == call.id) {
            call.id = proposed.remove(at).1;
        } else {
            call.id = fresh_id(&call.id, taken);
        }
    }
}

/// A call id not in `taken` (which gets it), and not empty: `id` itself when it is free,
/// else `<id>_<n>` (letters, digits, `_` and `-` only). Two calls sharing an id could
/// otherwise share one result, or one approval card could decide another call.
fn fresh_id(id: &str, taken: &mut BTreeSet<String>) -> String {
    if !id.is_empty() && taken.insert(id.to_string()) {
        return id.to_string();
    }
    let stem: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .take(64)
        .collect();
    let stem = if stem.is_empty() {
        "call".to_string()
    } else {
        stem
    };
    let fresh = (2..)
        .map(|n| format!("{stem}_{n}"))
        .find(|id| !taken.contains(id))
        .unwrap_or_else(|| stem.clone());
    taken.insert(fresh.clone());
    fresh
}

/// What a summarizing model call needs: the run's way to the model.
struct Summarizer<'a, 'b> {
    transport: &'a dyn LlmTransport,
    sleeper: &'a dyn Sleeper,
    provider: &'a ProviderConfig,
    call: CallOptions,
    now_ms: &'a dyn Fn() -> u64,
    jitter: &'b mut dyn FnMut() -> f64,
    abort: &'a AbortSignal,
}

impl Summarizer<'_, '_> {
    /// The model's summary of `text` (turns as [`context::transcript`] writes them), and the
    /// tokens it used; `None` if the call failed or was aborted.
    async fn summarize(&mut self, text: &str, max_tokens: u32) -> Option<(String, Option<Usage>)> {
        let request = build_request(
            self.provider,
            &[
                Message::system(context::SUMMARY_INSTRUCTIONS),
                Message::user(text),
            ],
            &[],
            &RequestOptions {
                stream: true,
                max_tokens: Some(max_tokens),
                ..RequestOptions::default()
            },
        );
        let mut ignore = |_: StreamEvent| {};
        let summary = std::pin::pin!(call_model(
            self.transport,
            self.sleeper,
            self.provider.kind,
            &request,
            self.call,
            self.now_ms,
            &mut *self.jitter,
            &mut ignore,
        ));
        let outcome = match select(summary, self.abort.aborted()).await {
            Either::Left((Ok(outcome), _)) => outcome,
            _ => return None,
        };
        let answer = outcome.answer;
        let usable = answer.error.is_none() && !answer.text.trim().is_empty();
        usable.then_some((answer.text, answer.usage))
    }
}

/// Bring `messages` (with `tools`) within `budget` tokens if they pass it: shorten old tool
/// results, then, if the policy allows and it is still needed, summarize older turns with the
/// model (in parts when their transcript is itself too long). Returns the event to send and
/// the summaries' usage, or `None` if nothing changed.
async fn fit_context(
    messages: &mut Vec<Message>,
    tools: &[&ToolDefinition],
    policy: &context::ContextPolicy,
    budget: usize,
    mut model: Summarizer<'_, '_>,
) -> Option<(RunEvent, Option<Usage>)> {
    let before = estimate_request(messages, tools);
    if before <= budget {
        return None;
    }
    let shortened = context::shorten_tool_results(messages, tools, budget);
    let mut removed = 0;
    let mut spent: Option<Usage> = None;
    if estimate_request(messages, tools) > budget {
        if let Some(cut) = context::compaction_cut(messages, policy.verbatim(budget)) {
            let start = usize::from(
                messages
                    .first()
                    .is_some_and(|m| m.role == crate::llm::Role::System),
            );
            let transcript = context::transcript(messages, start, cut);
            // Each part, with the summary so far, fits half the budget.
            let part = (budget / 2).max(256);
            let mut summary = String::new();
            for chunk in split_by_tokens(&transcript, part) {
                let text = if summary.is_empty() {
                    chunk.to_string()
                } else {
                    format!("Summary so far:\n{summary}\n\nWhat came next:\n{chunk}")
                };
                // A failed summary leaves the turns as they are.
                let Some((next, used)) = model.summarize(&text, policy.summary_tokens()).await
                else {
                    summary.clear();
                    break;
                };
                summary = next;
                if let Some(u) = used {
                    spent = Some(spent.unwrap_or_default().plus(u));
                }
            }
            if !summary.is_empty() {
                removed = context::with_summary(messages, cut, &summary);
            }
        }
    }
    if shortened == 0 && removed == 0 {
        return None;
    }
    Some((
        RunEvent::Compacted {
            before,
            after: estimate_request(messages, tools),
            removed,
            shortened,
        },
        spent,
    ))
}

/// `text` in consecutive parts of at most about `tokens` tokens each, cut at line ends where
/// possible.
fn split_by_tokens(text: &str, tokens: usize) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut at, mut size) = (0, 0, 0);
    for line in text.split_inclusive('\n') {
        let cost = estimate_text(line);
        if size + cost > tokens && at > start {
            parts.push(&text[start..at]);
            start = at;
            size = 0;
        }
        size += cost;
        at += line.len();
    }
    if start < text.len() {
        parts.push(&text[start..]);
    }
    parts
}
