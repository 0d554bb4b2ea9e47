//! MCP tool servers served by the core: connecting the servers the settings list, their tools
//! in agents' catalogs, and calls to them.
//!
//! **Connections.** The core reaches servers through the embedder's [`McpRuntime`] (in the
//! worker: the official TypeScript SDK's client). When the settings are read or change, each
//! new or changed server is connected in the background (with a spawner; else at the first
//! run that names it) and its tools listed; a removed server is closed. A server that
//! announces `notifications/tools/list_changed` has its list replaced. Every change of a
//! server's state or tools is announced with `mcp_changed`; `mcp_servers` lists them and
//! `mcp_connect` connects one again.
//!
//! **Catalog.** A server's tools are `mcp__<server>__<tool>`, with the server's JSON Schemas.
//! An agent spec names them one by one or all of a server's (`mcp__<server>__*`); a run
//! waits (up to the tool timeout) for a server still connecting, and tries once more to
//! reach a server that failed, before its agent's first model call.
//!
//! **Calls.** A call is checked against the tool's schema, then, from an agent, needs the
//! writer's approval unless the writer made the tool (or its server) permissive in
//! `approvalPolicies`: the default for MCP tools is strict ([`crate::policy::default_mode`]).
//! An approved call runs once; a rejected one never reaches the server. The call runs under
//! the tool's timeout (`toolTimeoutsMs`, per tool or `mcp__<server>__*`), abortable; a server
//! that is down or slow gives the call a clear error, and the run goes on. What the server
//! answers is untrusted: the model gets it quoted like a research page
//! ([`crate::research::quote`]).

use std::rc::{Rc, Weak};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use ts_rs::TS;

use super::parts::mcp::{ServerView, Status};
use super::research::StepError;
use super::{CallCtx, Core, Shared};
use crate::agent::AbortSignal;
use crate::commands::history::Applied;
use crate::commands::{Category, Origin};
use crate::error::Error;
use crate::mcp::{self, McpRuntime, McpTool};
use crate::persist;
use crate::session::ToolCall;
use crate::tools::{ResultMeta, ToolDefinition, ToolError, ToolResult};

/// `mcp_servers`, and the `mcp_changed` event: the configured servers.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(rename = "McpServers")]
pub(super) struct McpServers {
    /// The servers, by name.
    servers: Vec<ServerView>,
    /// Whether this core can reach MCP servers at all (the worker's client).
    available: bool,
}

/// `mcp_connect` params.
#[derive(Debug, Deserialize, TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "McpConnectParams")]
pub(super) struct McpConnect {
    /// The server's name.
    name: String,
}

/// A tool's catalog definition from what its server lists.
fn definition(server: &str, tool: &McpTool) -> ToolDefinition {
    let mut parameters = tool.input_schema.clone();
    if !parameters.is_object() {
        parameters = json!({"type": "object"});
    }
    let description = if tool.description.trim().is_empty() {
        format!("A tool of the MCP server '{server}'.")
    } else {
        format!("{} (MCP server '{server}')", tool.description.trim())
    };
    ToolDefinition {
        name: mcp::tool_name(server, &tool.name).into(),
        description: description.into(),
        category: Category::Knowledge,
        reversible: false,
        read_only: true,
        asynchronous: true,
        parameters,
    }
}

/// Whether a catalog name for a provider: letters, digits, `_` and `-`, at most 64.
fn fits_catalog(name: &str) -> bool {
    name.len() <= mcp::MAX_TOOL_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl Core {
    /// The same core, able to reach MCP servers through `runtime` (the worker passes the
    /// SDK's client).
    pub fn with_mcp(self, runtime: Rc<dyn McpRuntime>) -> Self {
        self.mcp.set_runtime(runtime);
        self
    }

    /// Follow the settings' server list: close removed servers, connect new and changed ones
    /// in the background. Announces the list when it changed.
    pub(super) fn follow_mcp(&self) {
        let configs = self.settings.read(|s| s.mcp_servers.clone());
        let (removed, changed) = self.mcp.follow(&configs);
        if removed.is_empty() && changed.is_empty() {
            return;
        }
        if let Some(runtime) = self.mcp.runtime() {
            for name in &removed {
                let closing = runtime.close(name);
                if let Some(spawn) = self.jobs.spawner() {
                    spawn(closing);
                }
            }
            if let Some(spawn) = self.jobs.spawner() {
                for name in changed {
                    let core = self.for_every_page();
                    spawn(Box::pin(async move {
                        core.connect_mcp(&name, false).await;
                    }));
                }
            }
        }
        self.emit_mcp();
    }

    /// Announce the servers' states.
    fn emit_mcp(&self) {
        self.emit(self.mcp_listing());
    }

    fn mcp_listing(&self) -> McpServers {
        McpServers {
            servers: self.mcp.views(),
            available: self.mcp.runtime().is_some(),
        }
    }

    /// Connect server `name` (joining an attempt under way; `again`: even when it is ready),
    /// keep the outcome and announce it. Returns its status after.
    async fn connect_mcp(&self, name: &str, again: bool) -> Option<Status> {
        let runtime = self.mcp.runtime()?;
        let weak = Rc::downgrade(&self.shared);
        let server = name.to_string();
        let attempt = self.mcp.attempt(name, again, |config, epoch| {
            let changed: mcp::ToolsChanged = Rc::new(move |tools| {
                tools_changed(&weak, &server, epoch, tools);
            });
            runtime.connect(config, changed)
        });
        if let Some((epoch, connecting)) = attempt {
            let outcome = connecting.await;
            let outcome = outcome.map_err(|e| self.settings.read(|s| s.redact(&e)));
            if self.mcp.connected(name, epoch, outcome) {
                self.emit_mcp();
            }
        }
        self.mcp.status(name)
    }

    /// Make sure the servers an agent names are connected before its model call: wait for
    /// one connecting, try once more to reach one that failed (each up to its tool timeout).
    pub(super) async fn reach_mcp(&self, tools: &[String], abort: Option<&AbortSignal>) {
        let mut servers: Vec<&str> = tools
            .iter()
            .filter_map(|t| mcp::split_name(t).map(|(server, _)| server))
            .collect();
        servers.dedup();
        for server in servers {
            if matches!(self.mcp.status(server), None | Some(Status::Ready)) {
                continue;
            }
            let pattern = mcp::server_pattern(server);
            let reached = self
                .with_tool_timeout(&pattern, abort, async {
                    Ok(self.connect_mcp(server, false).await)
                })
                .await;
            if let Err(StepError::Timeout(ms)) = reached {
                self.mcp
                    .unreachable(server, &format!("no answer within {} s", ms / 1000));
                self.emit_mcp();
            }
        }
    }

    /// The definitions of the MCP tools an agent's `tools` name (one by one, or a server's
    /// all as `mcp__<server>__*`), as their servers list them now.
    pub(super) fn mcp_definitions(&self, tools: &[String]) -> Vec<ToolDefinition> {
        let entries: Vec<&String> = tools.iter().filter(|t| mcp::is_mcp(t)).collect();
        if entries.is_empty() {
            return Vec::new();
        }
        self.mcp
            .tools(|server| {
                entries
                    .iter()
                    .any(|e| mcp::split_name(e).is_some_and(|(s, _)| s == server))
            })
            .into_iter()
            .filter(|(server, tool)| {
                let name = mcp::tool_name(server, &tool.name);
                fits_catalog(&name) && entries.iter().any(|e| mcp::matches(e, &name))
            })
            .map(|(server, tool)| definition(&server, &tool))
            .collect()
    }

    /// Serve `mcp_servers`.
    pub(super) async fn mcp_servers(&self) -> Result<McpServers, Error> {
        self.ensure_settings().await?;
        Ok(self.mcp_listing())
    }

    /// Serve `mcp_connect`: connect a configured server again (and list its tools anew).
    pub(super) async fn mcp_connect(&self, p: McpConnect) -> Result<McpServers, Error> {
        self.ensure_settings().await?;
        if self.mcp.status(&p.name).is_none() {
            let names: Vec<String> = self.mcp.views().into_iter().map(|s| s.name).collect();
            return Err(super::invalid(
                "mcp_connect",
                &format!(
                    "no MCP server is named \"{}\"{}",
                    p.name.chars().take(40).collect::<String>(),
                    crate::names::did_you_mean(&p.name, names.iter().map(String::as_str))
                ),
            ));
        }
        if self.mcp.runtime().is_none() {
            return Err(Error::from(ToolError::new(
                "unavailable",
                "this core cannot reach MCP servers (the worker's MCP client is missing)",
            )));
        }
        self.connect_mcp(&p.name, true).await;
        Ok(self.mcp_listing())
    }

    /// Check a writer's edited arguments for an MCP tool's waiting call.
    pub(super) fn check_mcp_args(&self, name: &str, args: &Value) -> Result<(), ToolError> {
        let (server, tool) = self.mcp_tool(name)?;
        let args = crate::tools::object_args(args.clone())?;
        crate::tools::validate::check_args(&tool.input_schema, &args).map_err(|e| {
            ToolError::invalid_args(format!("{} (tool {server}/{})", e.message, tool.name))
        })
    }

    /// The server and tool an MCP name stands for, or the error a call of it gets.
    fn mcp_tool(&self, name: &str) -> Result<(String, McpTool), ToolError> {
        let Some((server, tool)) = mcp::split_name(name) else {
            return Err(ToolError::new(
                "unknown_tool",
                format!(
                    "'{}' is not an MCP tool name (mcp__<server>__<tool>)",
                    name.chars().take(80).collect::<String>()
                ),
            ));
        };
        match self.mcp.tool(server, tool) {
            None => Err(ToolError::new(
                "unknown_tool",
                format!("there is no MCP server named '{server}' in the settings"),
            )),
            Some(Err(tools)) => {
                let close = crate::names::closest(tool, tools.iter().map(String::as_str), 3);
                let hint = if close.is_empty() {
                    if tools.is_empty() {
                        " (it lists no tools now)".to_string()
                    } else {
                        format!("; its tools are {}", tools.join(", "))
                    }
                } else {
                    format!(
                        "; did you mean {}?",
                        close
                            .iter()
                            .map(|c| format!("'{}'", mcp::tool_name(server, c)))
                            .collect::<Vec<_>>()
                            .join(" or ")
                    )
                };
                Err(ToolError::new(
                    "unknown_tool",
                    format!("the MCP server '{server}' has no tool '{tool}'{hint}"),
                ))
            }
            Some(Ok(found)) => Ok((server.to_string(), found)),
        }
    }

    /// Run an MCP tool call on `project`: checked, approved (an agent's, unless permissive),
    /// sent under the tool's timeout, its answer quoted.
    pub(super) async fn execute_mcp(
        &self,
        project: &str,
        call: ToolCall,
        origin: Origin,
        abort: Option<&AbortSignal>,
        ctx: CallCtx,
    ) -> Result<(ToolResult, Vec<Applied>), Error> {
        self.ensure_settings().await?;
        let started = self.env.clock.now_ms();
        let digest = persist::digest(&call.args.to_string());
        let meta = || ResultMeta {
            execution_time_ms: self.env.clock.now_ms().saturating_sub(started),
            ..ResultMeta::default()
        };
        let checked = self.mcp_tool(&call.name).and_then(|(server, tool)| {
            let args = crate::tools::object_args(call.args.clone())?;
            crate::tools::validate::check_args(&tool.input_schema, &args)?;
            Ok((server, tool, args))
        });
        let (server, tool, args) = match checked {
            Ok(found) => found,
            Err(error) => {
                let result = ToolResult::error(&error, meta());
                return self
                    .mcp_done(project, &call, digest, origin, result, &ctx)
                    .await;
            }
        };
        if let (Origin::Agent(agent), None) = (&origin, &ctx.grant) {
            let mode = self
                .settings
                .read(|s| s.policies_for(Some(agent), &ctx.interrupt_on))
                .mode(&call.name);
            if mode != crate::policy::Mode::Permissive {
                return self
                    .mcp_approval(project, &call, digest, &origin, &ctx, &server, &tool)
                    .await;
            }
        }
        let Some(runtime) = self.mcp.runtime() else {
            let error = ToolError::new(
                "unavailable",
                "this core cannot reach MCP servers (the worker's MCP client is missing)",
            );
            let result = ToolResult::error(&error, meta());
            return self
                .mcp_done(project, &call, digest, origin, result, &ctx)
                .await;
        };
        let sent = runtime.call(&server, &tool.name, serde_json::Value::Object(args));
        let answer = self
            .with_tool_timeout(&call.name, abort, async {
                sent.await.map_err(|e| ToolError::new("unavailable", e))
            })
            .await;
        let result = match answer {
            Ok(outcome) => {
                let source = format!("the MCP tool {} (server '{server}')", call.name);
                let (text, marks) = crate::research::quote::quote(&source, &outcome.text());
                if outcome.is_error {
                    ToolResult::error(
                        &ToolError::new(
                            "tool_error",
                            format!("The MCP tool {} reported an error:\n{text}", call.name),
                        )
                        .with_details(json!({"server": server, "injection_markers": marks.markers})),
                        meta(),
                    )
                } else {
                    ToolResult::success(
                        json!({
                            "server": server,
                            "tool": tool.name,
                            "text": text,
                            "injection_markers": marks.markers,
                        }),
                        meta(),
                    )
                }
            }
            Err(StepError::Aborted) => crate::agent::aborted_result(),
            Err(StepError::Timeout(ms)) => ToolResult::error(
                &ToolError::new(
                    "timeout",
                    format!(
                        "The MCP server '{server}' did not answer {} within {} s, so the call was cancelled. It may be down or busy: go on without it, or try again later.",
                        call.name,
                        ms / 1000
                    ),
                ),
                meta(),
            ),
            Err(StepError::Failed(error)) => {
                let reason = self.settings.read(|s| s.redact(&error.message));
                if error.code == "unavailable" {
                    self.mcp.unreachable(&server, &reason);
                    self.emit_mcp();
                }
                ToolResult::error(
                    &ToolError::new(
                        &error.code,
                        format!(
                            "The MCP server '{server}' could not run {}: {reason}. Nothing was done; go on without it, or try again later.",
                            call.name
                        ),
                    ),
                    meta(),
                )
            }
        };
        self.mcp_done(project, &call, digest, origin, result, &ctx)
            .await
    }

    /// An agent's call that waits for the writer: its `approval_required` result, and its
    /// card (kept for the run's pause, or saved now).
    #[allow(clippy::too_many_arguments)]
    async fn mcp_approval(
        &self,
        project: &str,
        call: &ToolCall,
        digest: String,
        origin: &Origin,
        ctx: &CallCtx,
        server: &str,
        tool: &McpTool,
    ) -> Result<(ToolResult, Vec<Applied>), Error> {
        let reason = "tools of MCP servers run only with the writer's approval";
        let mut details = json!({
            "kind": crate::policy::MCP_KIND,
            "id": server,
            "server": server,
            "tool": tool.name,
            "reason": reason,
            "callId": call.id,
            "pending": true,
        });
        if let Some(hints) = &tool.annotations {
            details["annotations"] = hints.clone();
        }
        let error = ToolError::new(
            "approval_required",
            format!(
                "{} (MCP server '{server}') needs the writer's approval: {reason}. Nothing was sent yet.",
                call.name
            ),
        )
        .with_details(details);
        let result = ToolResult::error(&error, ResultMeta::default());
        let mut record = self.approval_record(project, ctx.run.as_deref(), call, origin, &result);
        record.group = ctx.group.clone();
        record.who = ctx.who.clone();
        let mut puts = Vec::new();
        let mut requested = None;
        match &ctx.run {
            Some(run) if ctx.card_with_pause && ctx.hold.is_none() => {
                self.runs.add_card(run, record);
            }
            _ => {
                requested = Some(record.clone());
                puts.push(super::records::MetaRecord::Approval(record));
            }
        }
        let call = (call.name.as_str(), call.id.clone(), digest);
        let done = self
            .audit_with(
                project,
                call,
                origin.clone(),
                result,
                ctx.hold.as_deref(),
                puts,
            )
            .await;
        if let Some(record) = requested {
            self.emit_approvals_changed(project, Some(&record));
        }
        done
    }

    /// Keep a finished call's audit record (and, for an approved call, its approval as done
    /// with the result) in one batch.
    async fn mcp_done(
        &self,
        project: &str,
        call: &ToolCall,
        digest: String,
        origin: Origin,
        result: ToolResult,
        ctx: &CallCtx,
    ) -> Result<(ToolResult, Vec<Applied>), Error> {
        let mut puts = Vec::new();
        if let Some(mut record) = ctx.approval.clone() {
            record.state = super::records::ApprovalState::Done;
            record.result = Some(result.clone());
            puts.push(super::records::MetaRecord::Approval(record));
        }
        let call = (call.name.as_str(), call.id.clone(), digest);
        self.audit_with(project, call, origin, result, ctx.hold.as_deref(), puts)
            .await
    }
}

/// A server's new tool list, announced on connection `epoch` (dropped when the core is gone
/// or a newer connection began).
fn tools_changed(shared: &Weak<Shared>, server: &str, epoch: u64, tools: Vec<McpTool>) {
    let Some(shared) = shared.upgrade() else {
        return;
    };
    let core = Core::every_page_of(shared);
    if core.mcp.tools_changed(server, epoch, tools) {
        core.emit_mcp();
    }
}
