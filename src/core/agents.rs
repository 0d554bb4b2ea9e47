//! Agent definitions and conversations, served by the [`Core`].
//!
//! `define_agent`, `list_agents` and `delete_agent` manage the agents an app defines for a
//! project: validated against the presets' agents and the other definitions (unknown tools,
//! missing sub-agents and cycles are refused with a clear error), stored in the `meta`
//! table (`agent:<project>:<name>`, so they go with the project's export and deletion) and
//! announced with `agents_changed`.
//!
//! The conversation of the agent a run starts with, and of each long-running sub-agent (the
//! Dungeon Master's root, per campaign: `<agent>@<campaign>`), is kept per project and
//! agent, in memory and in the `meta` table (`conversation:<project>:<agent>`), so it
//! survives a reload.

use serde::{Deserialize, Serialize};
use serde_json::json;
use serde_json::Value;
use ts_rs::TS;

use super::records::{ConversationRecord, MetaRecord};
use super::{invalid, Core, On};
use crate::agent::{AgentSpec, Catalog, Delegation, ModelSettings, Preset, SubAgent};
use crate::error::Error;
use crate::llm::{Message, Role};
use crate::store::{Batch, Table};

/// `define_agent` params.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "DefineAgentParams", optional_fields)]
pub(super) struct DefineAgent {
    agent: Value,
}

/// `delete_agent` params.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "DeleteAgentParams", optional_fields)]
pub(super) struct DeleteAgent {
    name: String,
}

/// An agent as `list_agents` shows it: its definition, its whole toolbox (tools, routing
/// tools), the tools that always ask the writer (also when none) and the preset it belongs to.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub(super) struct AgentInfo {
    /// Its name (its edits have origin `agent:<name>`).
    name: String,
    /// What it is for.
    description: String,
    /// Its role and its definition of done.
    system_prompt: String,
    /// The toolset whose tools it may call.
    toolset: Option<String>,
    /// More tools it may call, by exact name.
    tools: Vec<String>,
    /// The sub-agents it may call.
    sub_agents: Vec<SubAgent>,
    /// How it calls them.
    delegation: Delegation,
    /// Its model settings over the writer's settings.
    model: Option<ModelSettings>,
    /// Most model calls per task.
    max_steps: usize,
    /// Most tokens (input + output) per run, if bounded.
    token_budget: Option<u64>,
    /// Whether a run may start with it (it talks to the writer).
    talks_to_writer: bool,
    /// Tools that always ask the writer when this agent calls them (empty: none).
    interrupt_on: Vec<String>,
    /// Whether it must call a tool on the first step of each task: `auto`, `required` or a
    /// tool's name.
    #[ts(type = "string")]
    tool_choice: crate::llm::ToolChoice,
    /// Whether it keeps one long-running session (conversation per project and campaign)
    /// instead of a fresh temporary session per call.
    long_running: bool,
    /// Whether it plans with a to-do list (`write_todos`, `read_todos`).
    planning: bool,
    /// A preset's agent (cannot be redefined or deleted).
    builtin: bool,
    /// The preset it belongs to, if any.
    preset: Option<String>,
    /// Every tool it may call (its toolset's and its own).
    toolbox: Vec<String>,
    /// The tools its calls to its sub-agents go through.
    routing_tools: Vec<String>,
}

/// `list_agents`: the presets and every agent a run can reach.
#[derive(Serialize, TS)]
#[ts(rename = "AgentListing")]
pub(super) struct AgentList {
    /// The presets.
    presets: Vec<Preset>,
    /// The presets' agents and the project's.
    agents: Vec<AgentInfo>,
}

/// `define_agent`: the agent as `list_agents` shows it.
#[derive(Serialize, TS)]
pub(super) struct AgentDefined {
    /// The agent.
    agent: AgentInfo,
    /// Whether it replaced a definition of the same name.
    replaced: bool,
}

/// `delete_agent`: the deleted agent.
#[derive(Serialize, TS)]
pub(super) struct AgentDeleted {
    /// Its name.
    deleted: String,
}

fn agent_key(project: &str, name: &str) -> String {
    format!("agent:{project}:{name}")
}

fn conversation_key(project: &str, agent: &str) -> String {
    format!("conversation:{project}:{agent}")
}

/// Read an agent definition, with a clear error.
pub(super) fn parse_agent(value: Value) -> Result<AgentSpec, String> {
    serde_json::from_value(value).map_err(|e| format!("not an agent definition: {e}"))
}

impl Core {
    /// The agents a run in `project` can reach: the presets' and the project's.
    pub(super) async fn catalog(&self, project: &str) -> Result<Catalog, Error> {
        if let Some(defined) = self.agents.defined(project) {
            return Ok(Catalog::new(defined));
        }
        let mut defined = Vec::new();
        for record in self
            .env
            .store
            .get_by_index(Table::Meta, "project", json!(project))
            .await?
        {
            if record["kind"] == "agent" {
                if let Ok(spec) = parse_agent(record["agent"].clone()) {
                    defined.push(spec);
                }
            }
        }
        self.agents.set_defined(project, defined.clone());
        Ok(Catalog::new(defined))
    }

    pub(super) async fn define_agent(&self, p: DefineAgent) -> Result<AgentDefined, Error> {
        let project = self.current()?;
        let spec = parse_agent(p.agent).map_err(|e| invalid("define_agent", &e))?;
        let catalog = self.catalog(&project).await?;
        catalog
            .validate(&spec, &self.registry)
            .map_err(|e| invalid("define_agent", &e))?;
        self.ensure_settings().await?;
        let servers = self.settings.read(|s| s.mcp_servers.clone());
        for tool in &spec.tools {
            if let Some((server, _)) = crate::mcp::split_name(tool) {
                if !servers.iter().any(|s| s.name == server) {
                    return Err(invalid(
                        "define_agent",
                        &format!(
                            "'tools': \"{tool}\" names the MCP server '{server}', which the settings do not list (add it to mcpServers first){}",
                            crate::names::did_you_mean(server, servers.iter().map(|s| s.name.as_str()))
                        ),
                    ));
                }
            }
        }
        let replaced = catalog.defined().any(|a| a.name == spec.name);
        let mut batch = Batch::new();
        batch.put_value(
            Table::Meta,
            json!({
                "id": agent_key(&project, &spec.name),
                "project": project,
                "kind": "agent",
                "agent": spec,
            }),
        );
        self.env.store.commit(batch).await?;
        self.agents.define(&project, spec.clone());
        let summary = self.agent_info(&self.catalog(&project).await?, &spec, false);
        self.emit(AgentsChangedEvent {
            project: project.clone(),
            name: spec.name.clone(),
            defined: true,
        });
        Ok(AgentDefined {
            agent: summary,
            replaced,
        })
    }

    pub(super) async fn delete_agent(&self, p: DeleteAgent) -> Result<AgentDeleted, Error> {
        let project = self.current()?;
        let catalog = self.catalog(&project).await?;
        if catalog.is_builtin(&p.name) {
            return Err(invalid(
                "delete_agent",
                &format!("'{}' is a preset's agent and cannot be deleted", p.name),
            ));
        }
        if !catalog.defined().any(|a| a.name == p.name) {
            return Err(invalid(
                "delete_agent",
                &format!(
                    "no defined agent '{}'",
                    p.name.chars().take(60).collect::<String>()
                ),
            ));
        }
        let callers: Vec<&str> = catalog
            .defined()
            .filter(|a| a.sub_agents.iter().any(|l| l.agent == p.name))
            .map(|a| a.name.as_str())
            .collect();
        if !callers.is_empty() {
            return Err(invalid(
                "delete_agent",
                &format!(
                    "'{}' is a sub-agent of {}; change or delete those first",
                    p.name,
                    callers.join(", ")
                ),
            ));
        }
        let mut batch = Batch::new();
        batch.delete(Table::Meta, agent_key(&project, &p.name));
        self.env.store.commit(batch).await?;
        self.agents.undefine(&project, &p.name);
        self.emit(AgentsChangedEvent {
            project: project.clone(),
            name: p.name.clone(),
            defined: false,
        });
        Ok(AgentDeleted { deleted: p.name })
    }

    pub(super) async fn list_agents(&self) -> Result<AgentList, Error> {
        let project = self.current()?;
        let catalog = self.catalog(&project).await?;
        let agents: Vec<AgentInfo> = catalog
            .agents()
            .map(|(spec, builtin)| self.agent_info(&catalog, spec, builtin))
            .collect();
        Ok(AgentList {
            presets: catalog.presets().to_vec(),
            agents,
        })
    }

    /// An agent as `list_agents` shows it: its definition, its whole toolbox (tools,
    /// routing tools), the tools that always ask the writer (`interruptOn`, also when
    /// empty) and the preset it belongs to.
    fn agent_info(&self, catalog: &Catalog, spec: &AgentSpec, builtin: bool) -> AgentInfo {
        let toolbox = spec.toolbox(&self.registry);
        let routing: Vec<String> = spec
            .routing_tools(catalog)
            .into_iter()
            .map(|d| d.name.into_owned())
            .collect();
        let preset = catalog
            .presets()
            .iter()
            .find(|p| p.agents.contains(&spec.name))
            .map(|p| p.name.clone());
        // Every field of the definition (a new one does not compile until it is shown).
        let AgentSpec {
            name,
            description,
            system_prompt,
            toolset,
            tools,
            sub_agents,
            delegation,
            model,
            max_steps,
            token_budget,
            talks_to_writer,
            interrupt_on,
            tool_choice,
            long_running,
            planning,
        } = spec.clone();
        AgentInfo {
            name,
            description,
            system_prompt,
            toolset,
            tools,
            sub_agents,
            delegation,
            model,
            max_steps,
            token_budget,
            talks_to_writer,
            interrupt_on,
            tool_choice,
            long_running,
            planning,
            builtin,
            preset,
            toolbox,
            routing_tools: routing,
        }
    }

    /// The conversation of `agent` in `project` (loaded once from the store).
    pub(super) async fn conversation(
        &self,
        project: &str,
        agent: &str,
    ) -> Result<Vec<Message>, Error> {
        if let Some(messages) = self.agents.conversation(project, agent) {
            return Ok(messages);
        }
        let stored = self
            .env
            .store
            .get(Table::Meta, &conversation_key(project, agent))
            .await?;
        let messages: Vec<Message> = stored
            .and_then(|r| serde_json::from_value(r["messages"].clone()).ok())
            .unwrap_or_default();
        self.agents
            .keep_conversation(project, agent, messages.clone(), false);
        Ok(messages)
    }

    /// Keep a finished run's conversation (without its system prompt, trimmed) for the
    /// agent's next run, in memory and in the store.
    pub(super) async fn keep_conversation(
        &self,
        project: &str,
        agent: &str,
        messages: Vec<Message>,
    ) -> Result<(), Error> {
        let mut conversation: Vec<Message> = messages
            .into_iter()
            .filter(|m| m.role != Role::System)
            .collect();
        super::run_state::trim_conversation(&mut conversation);
        let record = MetaRecord::Conversation(ConversationRecord {
            id: conversation_key(project, agent),
            project: project.to_string(),
            agent: agent.to_string(),
            messages: conversation.clone(),
        });
        self.agents
            .keep_conversation(project, agent, conversation, true);
        // Saved with the project's next batch: a failed save reports `storage_error` and keeps
        // it pending (the run that produced it has ended well all the same); a project deleted
        // meanwhile keeps nothing.
        let _ = self
            .mutate_on(On::project(project), |_| {
                Ok((
                    (),
                    super::Touched {
                        meta_puts: vec![record],
                        ..super::Touched::default()
                    },
                ))
            })
            .await;
        Ok(())
    }

    /// Forget an agent's conversation in a project.
    pub(super) async fn forget_conversation(
        &self,
        project: &str,
        agent: &str,
    ) -> Result<(), Error> {
        self.agents
            .keep_conversation(project, agent, Vec::new(), true);
        let mut batch = Batch::new();
        batch.delete(Table::Meta, conversation_key(project, agent));
        self.env.store.commit(batch).await?;
        Ok(())
    }

    /// The project's defined agents, for its export.
    pub(super) async fn agents_for_export(&self, project: &str) -> Result<Vec<Value>, Error> {
        let catalog = self.catalog(project).await?;
        Ok(catalog.defined().map(crate::error::to_json).collect())
    }

    /// Check the agents of an imported document before anything is stored: each must be a
    /// valid definition among the presets' agents and the others imported with it.
    pub(super) fn check_imported_agents(&self, agents: &[Value]) -> Result<Vec<AgentSpec>, Error> {
        let mut specs = Vec::new();
        for value in agents {
            specs.push(parse_agent(value.clone()).map_err(|e| invalid("import_project", &e))?);
        }
        for spec in &specs {
            let others = Catalog::new(specs.iter().filter(|s| s.name != spec.name).cloned());
            others
                .validate(spec, &self.registry)
                .map_err(|e| invalid("import_project", &format!("agent '{}': {e}", spec.name)))?;
        }
        Ok(specs)
    }

    /// Store imported agents for `project`.
    pub(super) async fn store_imported_agents(
        &self,
        project: &str,
        specs: Vec<AgentSpec>,
    ) -> Result<(), Error> {
        if specs.is_empty() {
            return Ok(());
        }
        let mut batch = Batch::new();
        for spec in &specs {
            batch.put_value(
                Table::Meta,
                json!({
                    "id": agent_key(project, &spec.name),
                    "project": project,
                    "kind": "agent",
                    "agent": spec,
                }),
            );
        }
        self.env.store.commit(batch).await?;
        self.agents.set_defined(project, specs);
        Ok(())
    }
}

/// `agents_changed`: an agent of the project was defined or deleted.
#[derive(Serialize, TS)]
pub(super) struct AgentsChangedEvent {
    /// The project.
    pub(super) project: String,
    /// The agent.
    pub(super) name: String,
    /// True when defined (or replaced), false when deleted.
    pub(super) defined: bool,
}
