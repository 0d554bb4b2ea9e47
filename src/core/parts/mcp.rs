//! MCP tool servers: the client runtime the embedder gave, and each configured server's
//! connection state and tool list.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use futures_util::future::{FutureExt, LocalBoxFuture, Shared};
use serde::Serialize;
use ts_rs::TS;

use crate::mcp::{McpRuntime, McpServer, McpTool};

/// A connection attempt several waiters may await.
pub(in crate::core) type Connecting = Shared<LocalBoxFuture<'static, Result<Vec<McpTool>, String>>>;

/// Where a server's connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "McpServerStatus")]
pub enum Status {
    /// Connecting and listing its tools.
    Connecting,
    /// Connected; its tools are listed.
    Ready,
    /// The last connection or call failed (its tools, if it listed some before, stay listed:
    /// a call then answers with the error).
    Failed,
}

/// A server's tool as the page lists it.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(rename = "McpToolView")]
pub struct ToolView {
    /// Its name in the catalog (`mcp__<server>__<tool>`).
    pub name: String,
    /// Its name on the server.
    pub tool: String,
    /// What it does.
    pub description: String,
}

/// A server as the page lists it (`mcp_servers`, the `mcp_changed` event).
#[derive(Debug, Clone, Serialize, TS)]
#[ts(rename = "McpServerView", optional_fields)]
pub struct ServerView {
    /// Its name.
    pub name: String,
    /// Its endpoint.
    pub url: String,
    /// Its connection.
    pub status: Status,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its tools.
    pub tools: Vec<ToolView>,
}

/// One configured server.
struct Server {
    config: McpServer,
    status: Status,
    error: Option<String>,
    tools: Vec<McpTool>,
    /// Which connection attempt the state is of: a late answer of an older one is dropped.
    epoch: u64,
    connecting: Option<Connecting>,
}

/// Owns the MCP client runtime and the servers' states.
#[derive(Default)]
pub(in crate::core) struct McpServers {
    runtime: RefCell<Option<Rc<dyn McpRuntime>>>,
    servers: RefCell<BTreeMap<String, Server>>,
    epochs: Cell<u64>,
}

impl McpServers {
    /// Reach MCP servers through `runtime` from now on.
    pub(in crate::core) fn set_runtime(&self, runtime: Rc<dyn McpRuntime>) {
        *self.runtime.borrow_mut() = Some(runtime);
    }

    /// The MCP client runtime, if this core has one.
    pub(in crate::core) fn runtime(&self) -> Option<Rc<dyn McpRuntime>> {
        self.runtime.borrow().clone()
    }

    /// Follow the settings' server list: forget removed servers (returned, to be closed), and
    /// return the new or changed ones (their URL or headers), now waiting for a connection.
    pub(in crate::core) fn follow(&self, configs: &[McpServer]) -> (Vec<String>, Vec<String>) {
        let mut servers = self.servers.borrow_mut();
        let removed: Vec<String> = servers
            .keys()
            .filter(|name| !configs.iter().any(|c| &c.name == *name))
            .cloned()
            .collect();
        for name in &removed {
            servers.remove(name);
        }
        let mut changed = Vec::new();
        for config in configs {
            let same = servers
                .get(&config.name)
                .is_some_and(|s| s.config.url == config.url && s.config.headers == config.headers);
            if !same {
                servers.insert(
                    config.name.clone(),
                    Server {
                        config: config.clone(),
                        status: Status::Connecting,
                        error: None,
                        tools: Vec::new(),
                        epoch: 0,
                        connecting: None,
                    },
                );
                changed.push(config.name.clone());
            }
        }
        (removed, changed)
    }

    /// The connection attempt of `name` under way, or a new one made by `connect` (for the
    /// server's config), with its epoch. `again`: a new one in any case (an attempt under way
    /// may hang). `None` for an unknown server, or a ready one when `again` is false.
    pub(in crate::core) fn attempt(
        &self,
        name: &str,
        again: bool,
        connect: impl FnOnce(&McpServer, u64) -> LocalBoxFuture<'static, Result<Vec<McpTool>, String>>,
    ) -> Option<(u64, Connecting)> {
        let (config, epoch) = {
            let mut servers = self.servers.borrow_mut();
            let server = servers.get_mut(name)?;
            if !again {
                if let Some(connecting) = &server.connecting {
                    return Some((server.epoch, connecting.clone()));
                }
                if server.status == Status::Ready {
                    return None;
                }
            }
            let epoch = self.epochs.get() + 1;
            self.epochs.set(epoch);
            server.epoch = epoch;
            server.status = Status::Connecting;
            (server.config.clone(), epoch)
        };
        // Made with no borrow held: the runtime may call back.
        let connecting = connect(&config, epoch).shared();
        if let Some(server) = self.servers.borrow_mut().get_mut(name) {
            if server.epoch == epoch {
                server.connecting = Some(connecting.clone());
            }
        }
        Some((epoch, connecting))
    }

    /// Keep the outcome of connection attempt `epoch` of `name` (unless a newer one began).
    /// Returns whether it was kept.
    pub(in crate::core) fn connected(
        &self,
        name: &str,
        epoch: u64,
        outcome: Result<Vec<McpTool>, String>,
    ) -> bool {
        let mut servers = self.servers.borrow_mut();
        let Some(server) = servers.get_mut(name).filter(|s| s.epoch == epoch) else {
            return false;
        };
        server.connecting = None;
        match outcome {
            Ok(tools) => {
                server.status = Status::Ready;
                server.error = None;
                server.tools = tools;
            }
            Err(error) => {
                server.status = Status::Failed;
                server.error = Some(error);
            }
        }
        true
    }

    /// Keep the tool list `name` announced on connection `epoch`. Returns whether it was kept.
    pub(in crate::core) fn tools_changed(
        &self,
        name: &str,
        epoch: u64,
        tools: Vec<McpTool>,
    ) -> bool {
        let mut servers = self.servers.borrow_mut();
        let Some(server) = servers.get_mut(name).filter(|s| s.epoch == epoch) else {
            return false;
        };
        server.tools = tools;
        true
    }

    /// `name` could not be reached (a call failed for want of it, or a connection attempt
    /// took too long): it is marked failed (its tools stay), and an attempt under way is
    /// given up, so the next one starts afresh.
    pub(in crate::core) fn unreachable(&self, name: &str, error: &str) {
        if let Some(server) = self.servers.borrow_mut().get_mut(name) {
            server.connecting = None;
            server.status = Status::Failed;
            server.error = Some(error.to_string());
        }
    }

    /// The status of server `name`, if it is configured.
    pub(in crate::core) fn status(&self, name: &str) -> Option<Status> {
        self.servers.borrow().get(name).map(|s| s.status)
    }

    /// Tool `tool` of server `name`: `Err` with the server's tool names when it has none of
    /// that name, `None` for an unknown server.
    pub(in crate::core) fn tool(
        &self,
        name: &str,
        tool: &str,
    ) -> Option<Result<McpTool, Vec<String>>> {
        let servers = self.servers.borrow();
        let server = servers.get(name)?;
        Some(match server.tools.iter().find(|t| t.name == tool) {
            Some(t) => Ok(t.clone()),
            None => Err(server.tools.iter().map(|t| t.name.clone()).collect()),
        })
    }

    /// Every listed tool of the servers whose names pass `wanted`, with its server's name.
    pub(in crate::core) fn tools(&self, wanted: impl Fn(&str) -> bool) -> Vec<(String, McpTool)> {
        self.servers
            .borrow()
            .iter()
            .filter(|(name, _)| wanted(name))
            .flat_map(|(name, s)| s.tools.iter().map(move |t| (name.clone(), t.clone())))
            .collect()
    }

    /// The servers as the page lists them.
    pub(in crate::core) fn views(&self) -> Vec<ServerView> {
        self.servers
            .borrow()
            .values()
            .map(|s| ServerView {
                name: s.config.name.clone(),
                url: s.config.url.clone(),
                status: s.status,
                error: s.error.clone(),
                tools: s
                    .tools
                    .iter()
                    .map(|t| ToolView {
                        name: crate::mcp::tool_name(&s.config.name, &t.name),
                        tool: t.name.clone(),
                        description: t.description.clone(),
                    })
                    .collect(),
            })
            .collect()
    }
}
