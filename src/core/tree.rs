//! Runs as trees: an agent's run, and the sub-agents it calls through routing tools, each in
//! a fresh agent session.
//!
//! A routing call really runs the sub-agent: a unique agent-session id (agent, project, time
//! and a counter), a conversation of its own that starts with the task the call passes
//! (nothing of the caller's conversation), its own toolbox, and its reply tool. Its answer
//! (the reply tool's arguments, or its final text) is the routing call's result, and the
//! agent session ends: [`Core::open_agent_sessions`] counts the agent sessions alive, so a
//! test can see none linger. (The protocol names them `session` in events and records.)
//!
//! A long-running agent ([`AgentSpec::long_running`], the Dungeon Master's root) is the
//! exception: its session is one conversation per project and campaign in play
//! (`<agent>@<campaign>`), kept like the conversation of the agent a run starts with (in
//! the `meta` table, so it survives a reload). Each call continues it with the new task,
//! and its end (not a pause) keeps it, under the campaign in play then.
//!
//! The whole tree shares one abort signal, one step and token budget ([`TreeState`]), the
//! call ids (unique per tree) and one undo group (each entry keeps its agent's origin). An
//! approval requested deep in the tree pauses every level above it: each level's state is
//! a [`Frame`] (conversation, waiting calls, the paused frames of its routing calls), saved
//! as one record, so the tree survives a reload and resumes once, where it paused.

use std::cell::RefCell;

use std::collections::BTreeMap;

use futures_util::future::LocalBoxFuture;
use serde_json::json;
use serde_json::Value;

use super::run_state::{
    provider_for, Frame, Node, NodeEnd, RunProgress, RunStatus, SessionEnded, SessionOpened,
    SessionPaused, SessionStatus, SubAgentOrigin, Tree,
};
use super::Core;
use crate::agent::planning;
use crate::agent::spec::task_message;
use crate::agent::{self, AgentSpec, Delegation, RunContext, RunEnd, RunEvent, RunOutcome};
use crate::commands::Origin;
use crate::llm::{Message, RequestOptions, ToolCall, Usage};
use crate::session;
use crate::tools::{ToolError, ToolResult};

impl Core {
    /// Run one node of `tree` from `messages` (its opening, or a paused conversation
    /// completed), until it ends or pauses.
    pub(super) fn run_node<'a>(
        &'a self,
        tree: &'a Tree,
        node: Node,
        messages: Vec<Message>,
        done: (usize, Usage),
        files_before: Vec<String>,
    ) -> LocalBoxFuture<'a, NodeEnd> {
        Box::pin(async move {
            let files = RefCell::new(files_before);
            let todos = RefCell::new(node.todos.clone());
            let fail = |message: String| NodeEnd {
                outcome: RunOutcome {
                    end: RunEnd::Failed { message },
                    messages: Vec::new(),
                    text: String::new(),
                    steps: done.0,
                    usage: done.1,
                    reply: None,
                    output: None,
                },
                files: Vec::new(),
                frame: None,
                todos: node.todos.clone(),
            };
            let (provider, temperature) =
                match provider_for(&node.spec, &tree.settings, &tree.provider) {
                    Ok(p) => p,
                    Err(e) => return fail(e),
                };
            let Some(llm) = self.llm() else {
                return fail("this core was built without a way to call models".into());
            };
            let Some(transport) = self.model.transport(provider.kind) else {
                return fail(
                    "this core cannot run models in the browser (the local provider needs the worker's wllama runtime)"
                        .into(),
                );
            };
            // The MCP tools it names, as their servers list them (a server still connecting
            // is waited for).
            self.reach_mcp(&node.spec.tools, Some(&tree.abort)).await;
            let mcp_tools = self.mcp_definitions(&node.spec.tools);
            let mut tools: Vec<&crate::tools::ToolDefinition> = Vec::new();
            if let Some(set) = &node.spec.toolset {
                match self.registry.toolset(set) {
                    Ok(defs) => tools.extend(defs),
                    Err(e) => return fail(e.message),
                }
            }
            for name in &node.spec.tools {
                if let Some(def) = self.registry.definition(name) {
                    if !tools.iter().any(|t| t.name == def.name) {
                        tools.push(def);
                    }
                }
            }
            tools.extend(mcp_tools.iter());
            let planning_tools = if node.spec.planning {
                planning::definitions()
            } else {
                Vec::new()
            };
            tools.extend(planning_tools.iter());
            let routing = node.spec.routing_tools(&tree.catalog);
            let reply_def = node.reply_tool.as_ref().map(|name| {
                AgentSpec::reply_definition(name, node.caller.as_deref().unwrap_or("calling"))
            });
            tools.extend(routing.iter());
            tools.extend(reply_def.iter());
            let origin = Origin::Agent(node.spec.name.clone());
            let settings = &tree.settings;
            let call = super::local::call_options(settings, provider.kind);
            let request = RequestOptions {
                stream: true,
                max_tokens: settings.max_tokens,
                temperature,
                // Only the root agent answers the run (a sub-agent answers its caller).
                output: tree.output.clone().filter(|_| node.caller.is_none()),
                ..RequestOptions::default()
            };
            let node_ref = &node;
            let files_ref = &files;
            let todos_ref = &todos;
            let mut execute = |c: &ToolCall| {
                let c = c.clone();
                let origin = origin.clone();
                let future: LocalBoxFuture<'_, ToolResult> = Box::pin(async move {
                    if node_ref.spec.planning && planning::is_planning_tool(&c.name) {
                        return planning::run(&c.name, &c.arguments, &mut todos_ref.borrow_mut());
                    }
                    if let Some(link) = node_ref.spec.link_for(&c.name, &c.arguments).cloned() {
                        let (result, changed) = self.call_sub_agent(tree, node_ref, link, &c).await;
                        files_ref.borrow_mut().extend(changed);
                        return result;
                    }
                    if node_ref.spec.delegation == Delegation::AssignTask
                        && c.name == agent::spec::ASSIGN_TASK
                    {
                        let names: Vec<&str> = node_ref
                            .spec
                            .sub_agents
                            .iter()
                            .map(|l| l.agent.as_str())
                            .collect();
                        return ToolResult::error(
                            &ToolError::invalid_args(format!(
                                "'target_agent' must be one of: {}",
                                names.join(", ")
                            )),
                            Default::default(),
                        );
                    }
                    let call = session::ToolCall {
                        id: Some(c.id.clone()),
                        name: c.name.clone(),
                        args: c.arguments.clone(),
                    };
                    let who = node_ref.tags();
                    let result = self
                        .run_tool(tree, call, origin, &who, &node_ref.spec.interrupt_on)
                        .await;
                    if result.is_success() && matches!(c.name.as_str(), "write_file" | "edit_file")
                    {
                        let path = result
                            .data
                            .get("path")
                            .or_else(|| c.arguments.get("path"))
                            .and_then(Value::as_str)
                            .map(str::to_string);
                        if let Some(path) = path {
                            let mut files = files_ref.borrow_mut();
                            if !files.contains(&path) {
                                files.push(path);
                            }
                        }
                    }
                    result
                });
                future
            };
            let now = || self.env.clock.now_ms();
            let mut jitter = || self.next_jitter();
            let mut on_event = |event: RunEvent| {
                let event = super::run_state::redacted(settings, event);
                self.emit_run(&tree.run_id, node.tags(), event);
            };
            let root_name = node.path.first().cloned().unwrap_or_default();
            let who = |tool: &str| tree.who_may_call(&root_name, tool, &self.registry);
            let outcome = agent::continue_agent(
                &node.spec,
                &tools,
                &provider,
                call,
                request,
                messages,
                done,
                RunContext {
                    transport: transport.as_ref(),
                    sleeper: llm.sleeper.as_ref(),
                    now_ms: &now,
                    jitter: &mut jitter,
                    execute: &mut execute,
                    on_event: &mut on_event,
                    abort: &tree.abort,
                    tree: &tree.state,
                    reply_tool: node.reply_tool.as_deref(),
                    who_may_call: Some(&who),
                    context: super::local::context_policy(settings, &provider, &node.spec),
                },
            )
            .await;
            let files = files.into_inner();
            let todos = todos.into_inner();
            let frame = match &outcome.end {
                RunEnd::Paused { pending } => {
                    let mut stash = tree.paused.borrow_mut();
                    let mut children = BTreeMap::new();
                    for c in pending {
                        if let Some(f) = stash.remove(&c.id) {
                            children.insert(c.id.clone(), f);
                        }
                    }
                    Some(Frame {
                        spec: node.spec.clone(),
                        path: node.path.clone(),
                        agent_session: node.agent_session.clone(),
                        reply_tool: node.reply_tool.clone(),
                        caller: node.caller.clone(),
                        delegation: node.delegation,
                        messages: outcome.messages.clone(),
                        steps: outcome.steps,
                        usage: outcome.usage,
                        pending: pending.clone(),
                        results: BTreeMap::new(),
                        children,
                        files_changed: files.clone(),
                        todos: todos.clone(),
                    })
                }
                _ => None,
            };
            NodeEnd {
                outcome,
                files,
                frame,
                todos,
            }
        })
    }

    /// Continue a paused node whose waiting calls (down the tree) all have results: its
    /// paused sub-agents first, then its own conversation.
    pub(super) fn resume_node<'a>(
        &'a self,
        tree: &'a Tree,
        mut frame: Frame,
    ) -> LocalBoxFuture<'a, NodeEnd> {
        Box::pin(async move {
            let node = Node::of(&frame);
            let mut still_paused = BTreeMap::new();
            let mut files = std::mem::take(&mut frame.files_changed);
            let mut children = frame.take_children();
            for call in frame.pending.clone() {
                let Some(child) = children.remove(&call.id) else {
                    continue;
                };
                let child_node = Node::of(&child);
                self.agent_session_opened(tree, &child_node, &call.id, true);
                let end = self.resume_node(tree, child).await;
                self.keep_long_session(tree, &child_node, &end).await;
                let (result, changed) = self.sub_agent_result(tree, &child_node, &call, end);
                files.extend(changed);
                match result {
                    SubResult::Paused(child) => {
                        still_paused.insert(call.id.clone(), *child);
                    }
                    SubResult::Done(result) => {
                        frame.results.insert(call.id.clone(), result.to_text());
                    }
                }
            }
            for (id, child) in children {
                frame.children.insert(id, child);
            }
            if !still_paused.is_empty() {
                frame.children = still_paused;
                frame.files_changed = files.clone();
                let outcome = RunOutcome {
                    end: RunEnd::Paused {
                        pending: frame.pending.clone(),
                    },
                    messages: frame.messages.clone(),
                    text: String::new(),
                    steps: frame.steps,
                    usage: frame.usage,
                    reply: None,
                    output: None,
                };
                return NodeEnd {
                    outcome,
                    files,
                    todos: frame.todos.clone(),
                    frame: Some(frame),
                };
            }
            let mut messages = frame.messages;
            agent::complete_paused(&mut messages, &frame.pending, &frame.results);
            self.run_node(tree, node, messages, (frame.steps, frame.usage), files)
                .await
        })
    }

    /// Run the sub-agent of `link` for the routing call `call` of `caller`: its answer, or
    /// a `waiting` result when it paused (its frame is kept for the caller's frame).
    async fn call_sub_agent(
        &self,
        tree: &Tree,
        caller: &Node,
        link: agent::SubAgent,
        call: &ToolCall,
    ) -> (ToolResult, Vec<String>) {
        let Some(spec) = tree.catalog.get(&link.agent).cloned() else {
            return (
                ToolResult::error(
                    &ToolError::not_found(format!("agent '{}' no longer exists", link.agent)),
                    Default::default(),
                ),
                Vec::new(),
            );
        };
        // A long-running agent's session is its conversation in the campaign in play; any
        // other agent gets a fresh temporary session.
        let agent_session = if spec.long_running {
            let conversation = self.long_session(&tree.project, &spec.name);
            format!(
                "{}_session_{}",
                conversation.replace('@', "_"),
                tree.project
            )
        } else {
            let n = self.agents.next_agent_session();
            format!(
                "sub_agent_{}_{}_{}_{n}",
                spec.name,
                tree.project,
                self.env.clock.now_ms()
            )
        };
        let reply_tool = caller.spec.reply_tool(&link);
        let mut path = caller.path.clone();
        path.push(spec.name.clone());
        let node = Node {
            spec,
            path,
            agent_session,
            reply_tool,
            caller: Some(caller.spec.name.clone()),
            delegation: caller.spec.delegation,
            todos: Vec::new(),
        };
        self.agent_session_opened(tree, &node, &call.id, false);
        let task = task_message(
            &caller.spec.name,
            caller.spec.delegation,
            &call.arguments,
            node.reply_tool.as_deref(),
        );
        let history = if node.spec.long_running {
            let conversation = self.long_session(&tree.project, &node.spec.name);
            self.conversation(&tree.project, &conversation)
                .await
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let messages = agent::opening_messages(
            &node.spec,
            &node.spec.toolbox(&self.registry),
            history,
            &task,
            &[],
        );
        let end = self
            .run_node(
                tree,
                node.clone(),
                messages,
                (0, Usage::default()),
                Vec::new(),
            )
            .await;
        self.keep_long_session(tree, &node, &end).await;
        let (result, files) = self.sub_agent_result(tree, &node, call, end);
        match result {
            SubResult::Done(result) => (result, files),
            SubResult::Paused(frame) => {
                tree.paused.borrow_mut().insert(call.id.clone(), *frame);
                (
                    ToolResult::error(
                        &ToolError::new(
                            "waiting",
                            format!(
                                "The {} agent waits for the writer's approval; its answer comes when the writer decides.",
                                node.spec.name
                            ),
                        ),
                        Default::default(),
                    ),
                    files,
                )
            }
        }
    }

    /// A sub-agent's end as its routing call's result; its agent session ends (or, paused, is
    /// put away until the writer decides).
    fn sub_agent_result(
        &self,
        tree: &Tree,
        node: &Node,
        call: &ToolCall,
        end: NodeEnd,
    ) -> (SubResult, Vec<String>) {
        let NodeEnd {
            outcome,
            files,
            frame,
            ..
        } = end;
        self.agents.agent_session_closed();
        // How the session ended; none when it paused (its state is the frame).
        let status = match &outcome.end {
            RunEnd::Paused { .. } => None,
            RunEnd::Finished => Some(SessionStatus::Finished),
            RunEnd::MaxSteps => Some(SessionStatus::MaxSteps),
            RunEnd::BudgetSpent => Some(SessionStatus::BudgetSpent),
            RunEnd::Failed { .. } | RunEnd::InvalidOutput { .. } => Some(SessionStatus::Failed),
            RunEnd::Aborted => Some(SessionStatus::Aborted),
        };
        let event = match status {
            None => RunProgress::SessionPaused(SessionPaused {
                agent: node.spec.name.clone(),
                path: node.path_text(),
                session: node.agent_session.clone(),
                call_id: call.id.clone(),
                status: RunStatus::Paused,
                steps: outcome.steps,
            }),
            Some(status) => RunProgress::SessionEnded(SessionEnded {
                agent: node.spec.name.clone(),
                path: node.path_text(),
                session: node.agent_session.clone(),
                call_id: call.id.clone(),
                status,
                steps: outcome.steps,
            }),
        };
        self.emit_run(&tree.run_id, SubAgentOrigin::default(), event);
        if let Some(frame) = frame {
            return (SubResult::Paused(Box::new(frame)), files);
        }
        let meta = Default::default();
        let result = match &outcome.end {
            RunEnd::Finished => {
                let mut data = json!({
                    "agent": node.spec.name,
                    "session": node.agent_session,
                });
                match node.delegation {
                    Delegation::AssignTask => {
                        data["summary"] = json!(outcome.text);
                        data["files_changed"] = json!(files);
                    }
                    Delegation::Route => {
                        data["response"] = outcome.reply.clone().unwrap_or_else(|| {
                            json!({"agent_type": node.spec.name, "response_content": outcome.text})
                        });
                    }
                }
                ToolResult::success(data, meta)
            }
            RunEnd::Aborted => agent::aborted_result(),
            other => {
                let why = match other {
                    RunEnd::MaxSteps => "it used all its steps before answering".to_string(),
                    RunEnd::BudgetSpent => "the run's token budget is spent".to_string(),
                    RunEnd::Failed { message } => {
                        format!("its model call failed: {}", tree.settings.redact(message))
                    }
                    _ => String::new(),
                };
                ToolResult::error(
                    &ToolError::new(
                        "failed",
                        format!(
                            "The {} agent did not finish its task: {why}. What it wrote: {}",
                            node.spec.name,
                            if outcome.text.is_empty() { "nothing" } else { &outcome.text }
                        ),
                    )
                    .with_details(json!({"agent": node.spec.name, "session": node.agent_session, "files_changed": files})),
                    meta,
                )
            }
        };
        (SubResult::Done(result), files)
    }

    /// The conversation a long-running `agent` keeps in `project`: its name in the campaign
    /// in play (`<agent>@<campaign id>`), or the agent's own name while there is no
    /// campaign.
    fn long_session(&self, project: &str, agent: &str) -> String {
        let campaign = self
            .with_project(project, |s| {
                Ok(crate::bible::campaign::current(&s.bible).map(|e| e.id.clone()))
            })
            .ok()
            .flatten();
        match campaign {
            Some(id) => format!("{agent}@{id}"),
            None => agent.to_string(),
        }
    }

    /// Keep a long-running sub-agent's conversation once its task ended (not paused: its
    /// frame holds it then), under the campaign in play at its end, so the turn that
    /// created a campaign starts that campaign's conversation. A job's unit keeps nothing
    /// (its writes are its unit's batch).
    async fn keep_long_session(&self, tree: &Tree, node: &Node, end: &NodeEnd) {
        if !node.spec.long_running
            || tree.hold.is_some()
            || matches!(end.outcome.end, RunEnd::Paused { .. })
            || end.outcome.messages.is_empty()
        {
            return;
        }
        let conversation = self.long_session(&tree.project, &node.spec.name);
        // A failed save is reported by the save path and kept pending; the turn goes on.
        let _ = self
            .keep_conversation(&tree.project, &conversation, end.outcome.messages.clone())
            .await;
    }

    /// A sub-agent's agent session is alive: counted and announced.
    fn agent_session_opened(&self, tree: &Tree, node: &Node, call_id: &str, resumed: bool) {
        self.agents.agent_session_opened();
        let session = SessionOpened {
            agent: node.spec.name.clone(),
            path: node.path_text(),
            session: node.agent_session.clone(),
            call_id: call_id.to_string(),
            caller: node.caller.clone(),
        };
        let event = if resumed {
            RunProgress::SessionResumed(session)
        } else {
            RunProgress::SessionStarted(session)
        };
        self.emit_run(&tree.run_id, SubAgentOrigin::default(), event);
    }
}

/// A sub-agent's answer, or its paused state.
enum SubResult {
    Done(ToolResult),
    Paused(Box<Frame>),
}
