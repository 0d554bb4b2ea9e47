//! Agent definitions and conversations, served by the [`Core`].
//!
//! `define_agent`, `list_agents` and `delete_agent` manage the agents an app defines for a
//! project: validated against the presets' agents and the other definitions (unknown tools,
//! missing sub-agents and cycles are refused with a clear error), stored in the `meta`
//! table (`agent:<project>:<name>`, so they go with the project's export and deletion) and
//! announced with `agents_changed`.
//!
//! The conversation of the agent a run starts with (the root's session, the only long-lived
//! one) is kept per project and agent, in memory and in the `meta` table
//! (`conversation:<project>:<agent>`), so it survives a reload.

use serde::Deserialize;
use serde_json::json;
use serde_json::Value;
use ts_rs::TS;

use super::{invalid, Core, On};
use crate::agent::{AgentSpec, Catalog};
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

    pub(super) async fn define_agent(&self, p: DefineAgent) -> Result<Value, Error> {
        let project = self.current()?;
        let spec = parse_agent(p.agent).map_err(|e| invalid("define_agent", &e))?;
        let catalog = self.catalog(&project).await?;
        catalog
            .validate(&spec, &self.registry)
            .map_err(|e| invalid("define_agent", &e))?;
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
        let summary = self.agent_json(&self.catalog(&project).await?, &spec, false);
        self.emit(
            "agents_changed",
            json!({"project": project, "name": spec.name, "defined": true}),
        );
        Ok(json!({ "agent": summary, "replaced": replaced }))
    }

    pub(super) async fn delete_agent(&self, p: DeleteAgent) -> Result<Value, Error> {
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
        self.emit(
            "agents_changed",
            json!({"project": project, "name": p.name, "defined": false}),
        );
        Ok(json!({ "deleted": p.name }))
    }

    pub(super) async fn list_agents(&self) -> Result<Value, Error> {
        let project = self.current()?;
        let catalog = self.catalog(&project).await?;
        let agents: Vec<Value> = catalog
            .agents()
            .map(|(spec, builtin)| self.agent_json(&catalog, spec, builtin))
            .collect();
        Ok(json!({ "presets": catalog.presets(), "agents": agents }))
    }

    /// An agent as `list_agents` shows it: its definition, its whole toolbox (tools,
    /// routing tools), the tools that always ask the writer (`interruptOn`, also when
    /// empty) and the preset it belongs to.
    fn agent_json(&self, catalog: &Catalog, spec: &AgentSpec, builtin: bool) -> Value {
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
        let mut value = crate::error::to_json(spec);
        value["builtin"] = json!(builtin);
        value["preset"] = json!(preset);
        value["toolbox"] = json!(toolbox);
        value["routingTools"] = json!(routing);
        value["interruptOn"] = json!(spec.interrupt_on);
        value
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
            .load_conversation(project, agent, messages.clone());
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
        let record = json!({
            "id": conversation_key(project, agent),
            "project": project,
            "kind": "conversation",
            "agent": agent,
            "messages": conversation,
        });
        self.agents.set_conversation(project, agent, conversation);
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
        self.agents.set_conversation(project, agent, Vec::new());
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
