//! Agents as data: [`AgentSpec`] (who an agent is and what it may do), the links to the
//! sub-agents it may call, the routing tools generated from those links, and [`Catalog`],
//! the agents a run can reach (the presets' agents and the ones an app defines) with their
//! validation.
//!
//! Calling a sub-agent is a tool call. With [`Delegation::Route`] (the Dungeon Master seed)
//! the caller gets one routing tool per sub-agent (`route_to_<agent>_agent` unless the link
//! names it), taking the seed's action dictionary, and the sub-agent gets a reply tool
//! (`send_response_to_<caller>_agent` unless the link names it) taking the seed's response
//! dictionary. With [`Delegation::AssignTask`] (TextCraft) the caller gets one
//! `assign_task(target_agent, task_description, target_file)` tool and the sub-agent answers
//! with its final text.

use std::borrow::Cow;
use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::json;
use serde_json::Value;
use ts_rs::TS;

use crate::commands::Category;
use crate::llm::{Message, Role, ToolChoice};
use crate::tools::{ToolDefinition, ToolRegistry};

/// Default number of model calls in one run.
pub const DEFAULT_MAX_STEPS: usize = 20;

/// Most model calls an agent may be given.
pub const MAX_STEPS_LIMIT: usize = 100;

/// The action types of the seed's action dictionary (the routing tools take others too, such
/// as `combat_description`).
pub const ACTION_TYPES: [&str; 6] = [
    "dialogue",
    "combat",
    "exploration",
    "question",
    "character_creation",
    "meta",
];

/// The tool of [`Delegation::AssignTask`].
pub const ASSIGN_TASK: &str = "assign_task";

const MAX_NAME: usize = 40;
const MAX_PROMPT: usize = 20_000;
const MAX_DESCRIPTION: usize = 1_000;
const MAX_TOOLS: usize = 200;
const MAX_SUB_AGENTS: usize = 16;

/// An agent: who it is, what it may do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentSpec {
    /// Name: lowercase letters, digits and `_` (its edits have origin `agent:<name>`).
    pub name: String,
    /// What it is for (shown in pickers and in its callers' routing tools).
    #[serde(default)]
    pub description: String,
    /// System prompt: its role and its definition of done.
    #[serde(alias = "system_prompt")]
    pub system_prompt: String,
    /// A toolset whose tools it may call (see [`crate::tools::ToolRegistry::toolset`]).
    #[serde(default)]
    pub toolset: Option<String>,
    /// More tools it may call, by exact name.
    #[serde(default)]
    pub tools: Vec<String>,
    /// The sub-agents it may call.
    #[serde(default, alias = "sub_agents")]
    pub sub_agents: Vec<SubAgent>,
    /// How it calls them.
    #[serde(default)]
    pub delegation: Delegation,
    /// Model settings over the writer's settings.
    #[serde(default)]
    pub model: Option<ModelSettings>,
    /// Most model calls it makes in one task.
    #[serde(alias = "max_steps", default = "default_max_steps")]
    pub max_steps: usize,
    /// Most tokens (input + output) per run, if bounded.
    #[serde(alias = "token_budget", default)]
    pub token_budget: Option<u64>,
    /// Whether it may talk to the writer directly (be the agent a run starts with).
    #[serde(default, alias = "talks_to_writer")]
    pub talks_to_writer: bool,
    /// Tools of its toolbox that always ask the writer before they run when this agent
    /// calls them (rentl's `interrupt_on`); each must be in its toolbox.
    #[serde(default, alias = "interrupt_on", skip_serializing_if = "Vec::is_empty")]
    pub interrupt_on: Vec<String>,
    /// Whether it must call a tool on the first step of each task (`auto`, the default:
    /// it decides; `required`: some tool; or a tool's name). It applies only to the model
    /// call that answers the writer's prompt or the task it was given; the steps after tool
    /// results came back are free (an agent that routes must be able to answer once the
    /// routed answer is in, or it would route forever). See [`AgentSpec::choice_for`].
    #[serde(
        default,
        alias = "tool_choice",
        skip_serializing_if = "ToolChoice::is_auto"
    )]
    pub tool_choice: ToolChoice,
    /// Whether it keeps one long-running session (the Dungeon Master's root: its
    /// conversation, per project and campaign, persisted across turns and reloads) instead
    /// of a fresh temporary session each time an agent calls it.
    #[serde(
        default,
        alias = "long_running",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub long_running: bool,
    /// Whether it plans its task with a to-do list of its own (`write_todos`, `read_todos`;
    /// see [`crate::agent::planning`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub planning: bool,
}

fn default_max_steps() -> usize {
    DEFAULT_MAX_STEPS
}

/// A sub-agent an agent may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubAgent {
    /// The agent's name.
    pub agent: String,
    /// The routing tool's name (`route_to_<agent>_agent` when absent).
    #[serde(default)]
    pub tool: Option<String>,
    /// The tool the sub-agent answers with (`send_response_to_<caller>_agent` when absent).
    #[serde(default)]
    pub reply_tool: Option<String>,
}

impl SubAgent {
    /// A link to `agent` with the default tool names.
    pub fn to(agent: &str) -> Self {
        Self {
            agent: agent.into(),
            tool: None,
            reply_tool: None,
        }
    }
}

/// How an agent calls its sub-agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Delegation {
    /// One routing tool per sub-agent, taking the action dictionary; the sub-agent answers
    /// with its reply tool (or its final text).
    #[default]
    Route,
    /// One `assign_task` tool naming the sub-agent; the sub-agent answers with its final
    /// text, and the result lists the files it changed.
    AssignTask,
}

/// Model settings of one agent, over the writer's settings.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "AgentModel")]
pub struct ModelSettings {
    /// The wire format (`openai`, `anthropic`, `gemini`); must be the configured one, whose
    /// key and base URL are used.
    #[serde(default)]
    pub provider: Option<String>,
    /// The model name.
    #[serde(default)]
    pub model: Option<String>,
    /// Sampling temperature (0 to 2).
    #[serde(default)]
    pub temperature: Option<f64>,
    /// The model's context window in tokens, when the settings' (or the model's known one)
    /// does not fit this agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
}

impl AgentSpec {
    /// The default writing assistant (the `quill` preset).
    pub fn assistant() -> Self {
        Self {
            name: "assistant".into(),
            description: "The writing assistant: reads and edits the manuscript, the story bible, memory and files.".into(),
            system_prompt: "You are a writing assistant working inside the writer's manuscript editor. The [EDITOR CONTEXT] block, if any, says what the writer sees now. Use the tools to read and change the manuscript: find a chapter with list_chapters, read it with read_chapter (or find a passage with search_manuscript) before you change it, and copy text exactly (without read_chapter's line numbers) when a tool asks for it. Keep answers short.".into(),
            toolset: Some(crate::tools::ALL.into()),
            tools: Vec::new(),
            sub_agents: Vec::new(),
            delegation: Delegation::Route,
            model: None,
            max_steps: DEFAULT_MAX_STEPS,
            token_budget: None,
            talks_to_writer: true,
            interrupt_on: Vec::new(),
            tool_choice: ToolChoice::Auto,
            long_running: false,
            planning: false,
        }
    }

    /// The tool choice of its next model call after `messages`: its `toolChoice` when the
    /// last message is the prompt or task (the first step of a turn), else `auto`.
    pub fn choice_for(&self, messages: &[Message]) -> ToolChoice {
        match messages.last() {
            Some(m) if m.role == Role::User => self.tool_choice.clone(),
            _ => ToolChoice::Auto,
        }
    }

    /// Its toolbox in `registry`: the tools of its toolset, then its other tools, each once
    /// (without the routing tools its sub-agents add, see [`AgentSpec::routing_tools`]).
    pub fn toolbox(&self, registry: &ToolRegistry) -> Vec<String> {
        let mut toolbox: Vec<String> = Vec::new();
        if let Some(set) = &self.toolset {
            if let Ok(defs) = registry.toolset(set) {
                toolbox.extend(defs.iter().map(|d| d.name.to_string()));
            }
        }
        for t in &self.tools {
            if !toolbox.contains(t) {
                toolbox.push(t.clone());
            }
        }
        toolbox
    }

    /// The name of the tool that calls `link`'s agent.
    pub fn route_tool(&self, link: &SubAgent) -> String {
        match self.delegation {
            Delegation::AssignTask => ASSIGN_TASK.into(),
            Delegation::Route => link
                .tool
                .clone()
                .unwrap_or_else(|| format!("route_to_{}_agent", link.agent)),
        }
    }

    /// The tool `link`'s agent answers this agent with, if it answers with a tool.
    pub fn reply_tool(&self, link: &SubAgent) -> Option<String> {
        match self.delegation {
            Delegation::AssignTask => None,
            Delegation::Route => Some(
                link.reply_tool
                    .clone()
                    .unwrap_or_else(|| format!("send_response_to_{}_agent", self.name)),
            ),
        }
    }

    /// The link whose routing tool is `tool`, and for `assign_task` the sub-agent its
    /// arguments name.
    pub fn link_for(&self, tool: &str, args: &Value) -> Option<&SubAgent> {
        match self.delegation {
            Delegation::AssignTask if tool == ASSIGN_TASK => {
                let target = args.get("target_agent").and_then(Value::as_str)?;
                self.sub_agents.iter().find(|l| l.agent == target)
            }
            Delegation::AssignTask => None,
            Delegation::Route => self.sub_agents.iter().find(|l| self.route_tool(l) == tool),
        }
    }

    /// The routing tools this agent's calls to its sub-agents go through.
    pub fn routing_tools(&self, catalog: &Catalog) -> Vec<ToolDefinition> {
        let describe = |agent: &str| {
            catalog
                .get(agent)
                .map(|a| a.description.clone())
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| format!("The {agent} agent."))
        };
        match self.delegation {
            Delegation::AssignTask if self.sub_agents.is_empty() => Vec::new(),
            Delegation::AssignTask => {
                let names: Vec<&str> = self.sub_agents.iter().map(|l| l.agent.as_str()).collect();
                let who: Vec<String> = names
                    .iter()
                    .map(|n| format!("{n}: {}", describe(n)))
                    .collect();
                vec![generated(
                    ASSIGN_TASK.into(),
                    format!(
                        "Give a task to another agent and wait for it: it runs the task with its own tools in a fresh session and answers with a summary and the files it changed. Agents: {}",
                        who.join(" ")
                    ),
                    json!({
                        "type": "object",
                        "properties": {
                            "target_agent": {"type": "string", "enum": names, "description": "The agent to give the task to."},
                            "task_description": {"type": "string", "description": "The whole task: it sees nothing of this conversation but this text."},
                            "target_file": {"type": "string", "description": "The file the task is about, such as manuscripts/03-the-storm.md."}
                        },
                        "required": ["target_agent", "task_description"],
                        "additionalProperties": false
                    }),
                )]
            }
            Delegation::Route => self
                .sub_agents
                .iter()
                .map(|link| {
                    generated(
                        self.route_tool(link),
                        format!(
                            "Route an action to the {} agent, which really runs it in a fresh session and returns its response dictionary. {}",
                            link.agent,
                            describe(&link.agent)
                        ),
                        action_schema(),
                    )
                })
                .collect(),
        }
    }

    /// The definition of the reply tool `name` (see [`AgentSpec::reply_tool`]).
    pub fn reply_definition(name: &str, caller: &str) -> ToolDefinition {
        generated(
            name.into(),
            format!(
                "Send your response back to the {caller} agent. This ends your task: call it once, when your work is done, with the whole answer in response_content."
            ),
            json!({
                "type": "object",
                "properties": {
                    "agent_type": {"type": "string", "description": "Your role, such as narrative, rules_lawyer, npc or character_creation."},
                    "response_content": {"type": "string", "description": "The actual response content."},
                    "action_type": {"type": "string", "description": "The type of action this responds to."},
                    "context": {"type": "string", "description": "Additional context about the response."},
                    "campaign_id": {"type": "string", "description": "The campaign identifier."}
                },
                "required": ["response_content"],
                "additionalProperties": false
            }),
        )
    }

    /// Check the spec on its own: names, sizes and bounds.
    pub fn check(&self) -> Result<(), String> {
        check_name(&self.name, "'name'")?;
        if self.system_prompt.trim().is_empty() {
            return Err(
                "'systemPrompt' must not be empty: say the agent's role and when its work is done"
                    .into(),
            );
        }
        if self.system_prompt.len() > MAX_PROMPT {
            return Err(format!("'systemPrompt' is longer than {MAX_PROMPT} bytes"));
        }
        if self.description.len() > MAX_DESCRIPTION {
            return Err(format!(
                "'description' is longer than {MAX_DESCRIPTION} bytes"
            ));
        }
        if self.tools.len() > MAX_TOOLS {
            return Err(format!("'tools' lists more than {MAX_TOOLS} tools"));
        }
        if self.sub_agents.len() > MAX_SUB_AGENTS {
            return Err(format!(
                "'subAgents' lists more than {MAX_SUB_AGENTS} agents"
            ));
        }
        if !(1..=MAX_STEPS_LIMIT).contains(&self.max_steps) {
            return Err(format!(
                "'maxSteps' must be between 1 and {MAX_STEPS_LIMIT}"
            ));
        }
        if let Some(model) = &self.model {
            if let Some(t) = model.temperature {
                if !(0.0..=2.0).contains(&t) {
                    return Err("'model.temperature' must be between 0 and 2".into());
                }
            }
            if let Some(p) = &model.provider {
                if p.parse::<crate::llm::ProviderKind>().is_err() {
                    return Err(format!(
                        "'model.provider' must be openai, anthropic or gemini, not '{}'",
                        p.chars().take(40).collect::<String>()
                    ));
                }
            }
            if model
                .model
                .as_ref()
                .is_some_and(|m| m.trim().is_empty() || m.len() > 200)
            {
                return Err("'model.model' must be 1 to 200 characters".into());
            }
            if model.context_window.is_some_and(|w| {
                !(crate::llm::tokens::MIN_WINDOW..=crate::llm::tokens::MAX_WINDOW).contains(&w)
            }) {
                return Err(format!(
                    "'model.contextWindow' must be between {} and {} tokens",
                    crate::llm::tokens::MIN_WINDOW,
                    crate::llm::tokens::MAX_WINDOW
                ));
            }
        }
        if let ToolChoice::Tool(tool) = &self.tool_choice {
            check_tool_name(tool).map_err(|e| format!("'toolChoice': {e}"))?;
        }
        if self.interrupt_on.len() > MAX_TOOLS {
            return Err(format!("'interruptOn' lists more than {MAX_TOOLS} tools"));
        }
        let mut asked = BTreeSet::new();
        for tool in &self.interrupt_on {
            check_tool_name(tool)?;
            if !asked.insert(tool.to_string()) {
                return Err(format!("'interruptOn' lists '{tool}' twice"));
            }
        }
        let mut seen = BTreeSet::new();
        for link in &self.sub_agents {
            check_name(&link.agent, "a sub-agent's 'agent'")?;
            if !seen.insert(link.agent.to_string()) {
                return Err(format!("sub-agent '{}' is listed twice", link.agent));
            }
            for name in [&link.tool, &link.reply_tool].into_iter().flatten() {
                check_tool_name(name)?;
            }
        }
        Ok(())
    }
}

/// Check that every tool `spec.interrupt_on` names, and the tool its `toolChoice` names, is
/// in `toolbox` (the agent's tools and routing tools).
pub fn check_interrupt_on(spec: &AgentSpec, toolbox: &[String]) -> Result<(), String> {
    // `mcp__<server>__*` holds each tool of the server.
    let holds = |tool: &str| toolbox.iter().any(|t| crate::mcp::matches(t, tool));
    match &spec.tool_choice {
        ToolChoice::Tool(tool) if !holds(tool) => {
            return Err(format!(
                "'toolChoice' names '{}', which is not in the toolbox of agent '{}'{}; use \"auto\", \"required\" or one of its tools",
                tool.chars().take(60).collect::<String>(),
                spec.name,
                crate::names::did_you_mean(tool, toolbox.iter().map(String::as_str)),
            ));
        }
        ToolChoice::Required if toolbox.is_empty() => {
            return Err(format!(
                "'toolChoice' is \"required\" but agent '{}' has no tools",
                spec.name
            ));
        }
        _ => {}
    }
    for tool in &spec.interrupt_on {
        if !holds(tool) {
            let shown: Vec<&str> = toolbox.iter().take(40).map(String::as_str).collect();
            return Err(format!(
                "'interruptOn' names '{}', which is not in the toolbox of agent '{}'{}; list only tools it may call ({})",
                tool.chars().take(60).collect::<String>(),
                spec.name,
                crate::names::did_you_mean(tool, toolbox.iter().map(String::as_str)),
                if shown.is_empty() {
                    "it has none".to_string()
                } else {
                    format!("its toolbox: {}", shown.join(", "))
                }
            ));
        }
    }
    Ok(())
}

/// A generated tool (never registered: it exists only in the runs of its agent).
fn generated(name: String, description: String, parameters: Value) -> ToolDefinition {
    ToolDefinition {
        name: Cow::Owned(name),
        description: Cow::Owned(description),
        category: Category::Knowledge,
        reversible: false,
        read_only: false,
        asynchronous: false,
        parameters,
    }
}

/// The seed's action dictionary.
fn action_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "action_type": {"type": "string", "description": format!("The type of action: {}, or another such as combat_description.", ACTION_TYPES.join(", "))},
            "player_input": {"type": "string", "description": "The player's exact message."},
            "target": {"type": "string", "description": "The target of the action: an NPC, a monster, a location."},
            "context": {"type": "string", "description": "Additional context about the situation, including what other agents answered."},
            "game_state": {"type": "string", "description": "The current game state, if known."},
            "campaign_id": {"type": "string", "description": "The campaign identifier."}
        },
        "required": ["action_type", "player_input"],
        "additionalProperties": false
    })
}

fn check_name(name: &str, what: &str) -> Result<(), String> {
    let ok = (1..=MAX_NAME).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} '{}' must be 1 to {MAX_NAME} lowercase letters, digits or '_', starting with a letter",
            name.chars().take(60).collect::<String>()
        ))
    }
}

fn check_tool_name(name: &str) -> Result<(), String> {
    let ok = (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "tool name '{}' must be 1 to 64 letters, digits, '_' or '-'",
            name.chars().take(80).collect::<String>()
        ))
    }
}

/// The text a sub-agent gets as its task: the action dictionary (routing) or the task
/// (`assign_task`), with what to answer with.
pub fn task_message(
    caller: &str,
    delegation: Delegation,
    args: &Value,
    reply_tool: Option<&str>,
) -> String {
    let field = |k: &str| {
        args.get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    match delegation {
        Delegation::Route => {
            let answer = match reply_tool {
                Some(tool) => format!("When you are done, answer with {tool}."),
                None => "When you are done, answer with your response.".into(),
            };
            format!(
                "ACTION FROM {} AGENT:\nAction Type: {}\nPlayer Input: {}\nTarget: {}\nContext: {}\nCampaign ID: {}\nGame State: {}\n\nProcess this action according to your role. {answer}",
                caller.to_ascii_uppercase(),
                field("action_type"),
                field("player_input"),
                field("target"),
                field("context"),
                field("campaign_id"),
                field("game_state"),
            )
        }
        Delegation::AssignTask => {
            let mut text = format!(
                "TASK FROM THE {}:\n{}",
                caller.to_ascii_uppercase(),
                field("task_description")
            );
            let file = field("target_file");
            if !file.is_empty() {
                text.push_str(&format!("\nTarget file: {file}"));
            }
            text.push_str("\n\nDo the task with your tools. When it is done, answer with a short summary of what you did.");
            text
        }
    }
}

/// A named set of agents: a run starts with its entry agent, or (`rentl`) jobs run its
/// agents in pipelines.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Preset {
    /// Name (`quill`, `dungeon_master`, `textcraft`, `rentl`).
    pub name: String,
    /// What it is.
    pub description: String,
    /// The agent a run starts with; none for a preset whose agents only run in pipelines.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub entry: Option<String>,
    /// Its agents.
    pub agents: Vec<String>,
    /// The pipelines it exposes, started with `start_job {kind: "pipeline", phases}`
    /// (`context`, `translation`, `editing`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub pipelines: Vec<String>,
}

/// The agents a run can reach: the presets' agents and the ones the app defined. Built by
/// [`Catalog::new`].
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    builtin: std::collections::BTreeMap<String, AgentSpec>,
    defined: std::collections::BTreeMap<String, AgentSpec>,
    presets: Vec<Preset>,
}

impl Catalog {
    /// The `presets`, their agents (`builtin`) and the app's `defined` agents.
    /// [`Catalog::new`] (in `presets.rs`) passes the built-in presets.
    pub(super) fn with(
        presets: Vec<Preset>,
        agents: Vec<AgentSpec>,
        defined: Vec<AgentSpec>,
    ) -> Self {
        let by_name = |agents: Vec<AgentSpec>| {
            agents
                .into_iter()
                .map(|agent| (agent.name.clone(), agent))
                .collect()
        };
        Self {
            builtin: by_name(agents),
            defined: by_name(defined),
            presets,
        }
    }

    /// An agent by name.
    pub fn get(&self, name: &str) -> Option<&AgentSpec> {
        self.defined.get(name).or_else(|| self.builtin.get(name))
    }

    /// Whether `name` is a preset's agent.
    pub fn is_builtin(&self, name: &str) -> bool {
        self.builtin.contains_key(name)
    }

    /// The presets.
    pub fn presets(&self) -> &[Preset] {
        &self.presets
    }

    /// A preset by name.
    pub fn preset(&self, name: &str) -> Option<&Preset> {
        self.presets.iter().find(|p| p.name == name)
    }

    /// The presets' agents, then the defined ones.
    pub fn agents(&self) -> impl Iterator<Item = (&AgentSpec, bool)> {
        self.builtin
            .values()
            .map(|a| (a, true))
            .chain(self.defined.values().map(|a| (a, false)))
    }

    /// The defined agents.
    pub fn defined(&self) -> impl Iterator<Item = &AgentSpec> {
        self.defined.values()
    }

    /// Check `spec` as a definition joining this catalog (replacing a defined agent of its
    /// name): it is well formed, not a preset's agent, its tools and toolset exist in
    /// `registry`, its sub-agents exist, no cycle runs through it,
    /// and its tool names do not collide.
    pub fn validate(&self, spec: &AgentSpec, registry: &ToolRegistry) -> Result<(), String> {
        // An MCP server's tools (`mcp__<server>__<tool>` or all of them, `mcp__<server>__*`)
        // are listed by the server while it runs: a well-formed name is enough here.
        let tool_exists = |name: &str| {
            registry.definition(name).is_some() || crate::mcp::split_name(name).is_some()
        };
        spec.check()?;
        if self.is_builtin(&spec.name) {
            return Err(format!(
                "'{}' is a preset's agent and cannot be redefined; choose another name",
                spec.name
            ));
        }
        if let Some(set) = &spec.toolset {
            if let Err(e) = registry.toolset(set) {
                return Err(e.message);
            }
        }
        for tool in &spec.tools {
            if !tool_exists(tool) {
                return Err(format!(
                    "unknown tool '{}'{}",
                    tool.chars().take(60).collect::<String>(),
                    crate::names::did_you_mean(tool, registry.names())
                ));
            }
        }
        for link in &spec.sub_agents {
            if link.agent != spec.name && self.get(&link.agent).is_none() {
                let known: Vec<&str> = self.agents().map(|(a, _)| a.name.as_str()).collect();
                return Err(format!(
                    "sub-agent '{}' does not exist{}; define it first",
                    link.agent,
                    crate::names::did_you_mean(&link.agent, known.into_iter())
                ));
            }
        }
        let mut with = self.clone();
        with.defined.insert(spec.name.clone(), spec.clone());
        if let Some(cycle) = with.cycle_through(&spec.name) {
            return Err(format!("sub-agents form a cycle: {}", cycle.join(" → ")));
        }
        // Inserted one by one: `collect` sorts first, with a copy of the sort of its own.
        let mut names: BTreeSet<String> = BTreeSet::new();
        for tool in &spec.tools {
            names.insert(tool.clone());
        }
        let routing = spec.routing_tools(&with);
        for tool in &routing {
            if !names.insert(tool.name.to_string()) || tool_exists(&tool.name) {
                return Err(format!(
                    "routing tool '{}' collides with another tool of the agent; name it with 'tool'",
                    tool.name
                ));
            }
        }
        let mut toolbox = spec.toolbox(registry);
        toolbox.extend(routing.iter().map(|t| t.name.to_string()));
        check_interrupt_on(spec, &toolbox)
    }

    /// A path of sub-agent links from `start` back to itself, if any.
    pub fn cycle_through(&self, start: &str) -> Option<Vec<String>> {
        fn visit(
            catalog: &Catalog,
            at: &str,
            start: &str,
            path: &mut Vec<String>,
            seen: &mut BTreeSet<String>,
        ) -> bool {
            let Some(spec) = catalog.get(at) else {
                return false;
            };
            for link in &spec.sub_agents {
                path.push(link.agent.clone());
                if link.agent == start {
                    return true;
                }
                if seen.insert(link.agent.clone()) && visit(catalog, &link.agent, start, path, seen)
                {
                    return true;
                }
                path.pop();
            }
            false
        }
        let mut path = vec![start.to_string()];
        let mut seen = BTreeSet::new();
        visit(self, start, start, &mut path, &mut seen).then_some(path)
    }

    /// `start` and every agent it can reach through sub-agent links, in order of discovery.
    pub fn reachable(&self, start: &str) -> Vec<&AgentSpec> {
        let mut out: Vec<&AgentSpec> = Vec::new();
        let mut queue = vec![start.to_string()];
        while let Some(name) = queue.pop() {
            if out.iter().any(|a| a.name == name) {
                continue;
            }
            if let Some(spec) = self.get(&name) {
                queue.extend(spec.sub_agents.iter().rev().map(|l| l.agent.clone()));
                out.push(spec);
            }
        }
        out
    }
}
