//! Agent runs, model settings and model-backed tool calls, served by the [`Core`].
//!
//! A `run` request lives as long as its run: it resolves when the run ends, and streams
//! `run` events (`{run, type, ...}`) to the page meanwhile. The run's tool calls go through
//! the same edit path as the page's (`execute_call`: saved, audited, announced) on the
//! project the run started on, with origin `agent:<name>`, inside one undo group. Other
//! requests are served while a run goes on: the writer keeps typing, and their edits and the
//! agent's are serialized by the session (each command is synchronous and atomic).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use super::run_state::{
    JobUnitOrigin, Node, PausedRun, RunEventKind, RunFailure, RunPaused, RunProgress, RunResult,
    RunStarted, RunStatus, Start, SubAgentOrigin, Tree,
};
use super::{invalid, Core, On, Touched};
use crate::agent::{self, AbortSignal, AgentSpec, Catalog, RunEnd, RunEvent, TreeState};
use crate::commands::Origin;
use crate::editor_context::{editor_context_block, EDITOR_CONTEXT_TOKENS};
use crate::error::Error;
use crate::llm::Usage;
use crate::session;
use crate::settings::{PublicSettings, Settings, SettingsPatch, SETTINGS_KEY};
use crate::store::{Batch, Table};
use crate::tools::{ToolError, ToolResult};

/// `run` params.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "RunParams", optional_fields)]
pub(super) struct RunParams {
    prompt: String,
    /// The page's id for the run (so it can match events before the response); one is
    /// made up when absent.
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    agent: Option<AgentChoice>,
    /// A preset (`quill`, `dungeon_master`, `textcraft`): the run starts with its entry agent
    /// (`rentl` has none: its agents run in pipeline jobs).
    #[serde(default)]
    preset: Option<String>,
    #[serde(default)]
    toolset: Option<String>,
    /// `text` (the default) or `voice`: a voice run offers only the `voice_safe` tools
    /// (nothing that waits on the network or on a model). `toolset` still picks the
    /// assistant's tools.
    #[serde(default)]
    #[ts(as = "Option<RunMode>", optional)]
    mode: RunMode,
    #[serde(default)]
    max_steps: Option<usize>,
    #[serde(default)]
    token_budget: Option<u64>,
    /// Forget the earlier conversation first.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    new_conversation: bool,
    /// Whether the turn's first model call must call a tool: `auto`, `required`, or the name
    /// of a tool of the run's toolbox (default: the agent's own choice).
    #[serde(default)]
    #[ts(type = "string", optional)]
    tool_choice: Option<crate::llm::ToolChoice>,
    /// End with a structured answer: a JSON object valid against `schema`, in the result's
    /// `output`. Tools may be called before it.
    #[serde(default)]
    output: Option<OutputParams>,
}

/// `run`'s `output`: the structured answer the run must end with.
#[derive(Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub(super) struct OutputParams {
    /// A JSON Schema of `type: "object"`.
    #[ts(type = "Record<string, unknown>")]
    schema: Value,
    /// Its name (letters, digits, `_`, `-`; default `final_answer`).
    #[serde(default)]
    #[ts(optional)]
    name: Option<String>,
}

impl OutputParams {
    /// The format, or why the params do not make one.
    fn format(&self) -> Result<crate::llm::OutputFormat, String> {
        let name = self.name.clone().unwrap_or_else(|| "final_answer".into());
        if !crate::agent::output::valid_name(&name) {
            return Err("'output.name' must be 1 to 64 letters, digits, '_' or '-'".into());
        }
        if self.schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err("'output.schema' must be a JSON Schema of type \"object\"".into());
        }
        Ok(crate::llm::OutputFormat {
            name,
            schema: self.schema.clone(),
        })
    }
}

/// How the writer talks with a run: by text, or by voice (only quick, local tools).
#[derive(Deserialize, TS, Default, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(super) enum RunMode {
    /// Every tool of the agent's toolbox.
    #[default]
    Text,
    /// Only the `voice_safe` tools.
    Voice,
}

/// The agent a run starts with: a name (a preset's agent or a defined one that talks to the
/// writer), or the assistant under another name and prompt.
#[derive(Deserialize, TS)]
#[serde(untagged)]
pub(super) enum AgentChoice {
    Name(String),
    Custom(AgentParams),
}

#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "CustomAgent", optional_fields)]
pub(super) struct AgentParams {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    system_prompt: Option<String>,
}

/// `abort_run` params.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "AbortRunParams", optional_fields)]
pub(super) struct AbortParams {
    /// The run; all runs when absent.
    #[serde(default)]
    run_id: Option<String>,
}

/// `abort_run`: the runs it aborted.
#[derive(Serialize, TS)]
pub(super) struct RunsAborted {
    /// Their ids (a paused run's too).
    aborted: Vec<String>,
}

impl Core {
    /// Read the stored settings once.
    pub(super) async fn ensure_settings(&self) -> Result<(), Error> {
        if self.settings.loaded() {
            return Ok(());
        }
        let stored = self.env.store.get(Table::Meta, SETTINGS_KEY).await?;
        if self.settings.mark_loaded() {
            if let Some(record) = stored {
                self.settings.set(Settings::from_record(&record));
            }
            self.follow_mcp();
        }
        Ok(())
    }

    pub(super) async fn get_settings(&self) -> Result<PublicSettings, Error> {
        self.ensure_settings().await?;
        Ok(self.settings.read(|s| s.public()))
    }

    /// Change the settings: all of the patch or, if any field is wrong, nothing. Stored
    /// before they take effect (the key only when `rememberKey`).
    pub(super) async fn set_settings(&self, patch: SettingsPatch) -> Result<PublicSettings, Error> {
        self.ensure_settings().await?;
        let next = self
            .settings
            .read(|s| {
                s.patched(
                    patch,
                    |name| self.registry.toolset(name).is_ok(),
                    |name| self.registry.definition(name).is_some(),
                )
            })
            .map_err(|reason| invalid("set_settings", &reason))?;
        let mut batch = Batch::new();
        batch.put_value(Table::Meta, next.record());
        self.env.store.commit(batch).await?;
        let public = next.public();
        let reload =
            next.local_spec().is_some() && next.local_spec() != self.settings.get().local_spec();
        self.settings.set(next);
        self.emit(public.clone());
        if reload {
            self.preload_local(&self.settings.get());
        }
        self.follow_mcp();
        Ok(public)
    }

    pub(super) async fn abort_run(&self, p: AbortParams) -> Result<RunsAborted, Error> {
        if let Some(id) = &p.run_id {
            if !self.runs.is_running(id) && self.abort_paused(id).await? {
                return Ok(RunsAborted {
                    aborted: vec![id.clone()],
                });
            }
        }
        let aborted = self.runs.abort(p.run_id.as_deref());
        Ok(RunsAborted { aborted })
    }

    /// Abort every run going on in `project` (it is being deleted).
    pub(super) fn abort_project_runs(&self, project: &str) {
        self.runs.abort_project(project);
    }

    pub(super) fn next_jitter(&self) -> f64 {
        self.model.next_jitter(self.env.clock.now_ms())
    }

    /// Send a `run` event of run `run`, from agent `from` of its tree (the default for the
    /// run's own events).
    pub(super) fn emit_run(&self, run: &str, from: SubAgentOrigin, event: impl Into<RunEventKind>) {
        self.emit(super::run_state::RunEvent {
            event: event.into(),
            from,
            unit: JobUnitOrigin::of(run),
            run: run.to_string(),
        });
    }

    /// Serve a `run` request: the whole run, answering when it ends.
    pub(super) async fn run(&self, p: RunParams) -> Result<RunResult, Error> {
        let prompt = p.prompt.trim().to_string();
        if prompt.is_empty() {
            return Err(invalid("run", "'prompt' must not be empty"));
        }
        let output = p
            .output
            .as_ref()
            .map(OutputParams::format)
            .transpose()
            .map_err(|reason| invalid("run", &reason))?;
        self.ensure_settings().await?;
        let settings = self.settings.get();
        // Checked now, before any other work; a model in the browser is loaded below, once
        // the request is known to be good.
        settings.provider_config().map_err(Error::NoModel)?;
        if self.llm().is_none() {
            return Err(Error::NoModel(
                "this core was built without a way to call models".into(),
            ));
        }
        let project = self.current()?;
        let catalog = self.catalog(&project).await?;
        let spec = self.entry_spec(&catalog, &settings, &p)?;
        let max_steps = p.max_steps.unwrap_or(settings.max_steps);
        if !(1..=crate::settings::MAX_STEPS_LIMIT).contains(&max_steps) {
            return Err(invalid(
                "run",
                &format!(
                    "'maxSteps' must be between 1 and {}",
                    crate::settings::MAX_STEPS_LIMIT
                ),
            ));
        }
        let token_budget = p.token_budget.or(settings.token_budget);
        let run_id = match p.run_id {
            Some(id) if id.trim().is_empty() || id.len() > 200 => {
                return Err(invalid("run", "'runId' must be 1 to 200 characters"))
            }
            Some(id) if self.runs.is_running(&id) => {
                return Err(Error::Busy(format!("a run with id '{id}' is going on")))
            }
            Some(id) => id,
            None => self.env.ids.next_id(),
        };
        let provider = self.model_config(&settings).await.map_err(Error::NoModel)?;
        if p.new_conversation {
            self.forget_conversation(&project, &spec.name).await?;
        }
        let history = self.conversation(&project, &spec.name).await?;
        let toolbox = spec
            .toolset
            .clone()
            .unwrap_or_else(|| format!("{}'s toolbox", spec.name));
        let (editor_block, memory_block) = self.with_project(&project, |s| {
            Ok((
                editor_context_block(&s.project, &s.bible, &toolbox, EDITOR_CONTEXT_TOKENS),
                s.memory.context_block(&s.project.id, &prompt, 2_000),
            ))
        })?;
        self.emit_run(
            &run_id,
            SubAgentOrigin::default(),
            RunProgress::RunStarted(RunStarted {
                project: project.clone(),
                agent: spec.name.clone(),
                preset: Some(p.preset.clone()),
                toolset: Some(spec.toolset.clone()),
                background: None,
                max_steps,
                model: provider.model.clone(),
                prompt: prompt.clone(),
            }),
        );
        let toolbox = spec.toolbox(&self.registry);
        let blocks = [editor_block.as_str(), memory_block.as_str()];
        let messages = agent::opening_messages(&spec, &toolbox, history, &prompt, &blocks);
        let mut tree = Tree::new(
            project,
            run_id,
            AbortSignal::new(),
            TreeState::new(max_steps, token_budget, 0, Usage::default()),
            catalog,
            settings,
            provider,
        );
        tree.output = output;
        self.drive(
            tree,
            Start::Fresh(Node::root(spec), messages),
            Default::default(),
        )
        .await
    }

    /// The agent a run with params `params` (a `run` request's, or a job's) starts with;
    /// params that do not fit are an `invalid_params` error of `request`.
    pub(super) fn entry_spec_of(
        &self,
        catalog: &Catalog,
        settings: &Settings,
        params: &Value,
        request: &str,
    ) -> Result<AgentSpec, Error> {
        let run: RunParams =
            serde_json::from_value(params.clone()).map_err(|e| invalid(request, &e.to_string()))?;
        self.entry_spec(catalog, settings, &run)
    }

    /// The agent a `run` starts with.
    pub(super) fn entry_spec(
        &self,
        catalog: &Catalog,
        settings: &Settings,
        p: &RunParams,
    ) -> Result<AgentSpec, Error> {
        let named = match (&p.preset, &p.agent) {
            (Some(_), Some(_)) => {
                return Err(invalid("run", "give 'preset' or 'agent', not both"));
            }
            (Some(preset), None) => {
                let Some(found) = catalog.preset(preset) else {
                    let names: Vec<&str> =
                        catalog.presets().iter().map(|p| p.name.as_str()).collect();
                    return Err(invalid(
                        "run",
                        &format!(
                            "no preset '{}'; presets: {}",
                            preset.chars().take(60).collect::<String>(),
                            names.join(", ")
                        ),
                    ));
                };
                let Some(entry) = &found.entry else {
                    return Err(invalid(
                        "run",
                        &format!(
                            "preset '{}' has no agent to chat with: its agents run in pipelines ({}); start one with start_job {{kind: \"pipeline\", phases: [\"{}\"]}}",
                            found.name,
                            found.pipelines.join(", "),
                            found.pipelines.first().map_or("context", String::as_str)
                        ),
                    ));
                };
                Some(entry.clone())
            }
            (None, Some(AgentChoice::Name(name))) => Some(name.clone()),
            _ => None,
        };
        let mut spec = match named {
            Some(name) if name != "assistant" => {
                let spec = catalog.get(&name).cloned().ok_or_else(|| {
                    invalid(
                        "run",
                        &format!(
                            "no agent '{}'{}; list_agents shows the agents",
                            name.chars().take(60).collect::<String>(),
                            crate::names::did_you_mean(
                                &name,
                                catalog.agents().map(|(a, _)| a.name.as_str())
                            )
                        ),
                    )
                })?;
                if !spec.talks_to_writer {
                    return Err(invalid(
                        "run",
                        &format!(
                            "agent '{name}' does not talk to the writer; start a run with an agent that calls it"
                        ),
                    ));
                }
                if p.toolset.is_some() {
                    return Err(invalid(
                        "run",
                        "'toolset' applies to the quill assistant; other agents have their own toolbox",
                    ));
                }
                let mut spec = spec;
                if p.mode == RunMode::Voice {
                    // Its own toolbox, without what is not voice-safe (its sub-agents keep
                    // theirs).
                    let safe = self.registry.toolset(crate::tools::VOICE_SAFE)?;
                    let toolbox = spec.toolbox(&self.registry);
                    spec.tools = toolbox
                        .into_iter()
                        .filter(|t| safe.iter().any(|d| d.name == t.as_str()))
                        .collect();
                    spec.toolset = None;
                }
                spec
            }
            _ => {
                let mut spec = AgentSpec::assistant();
                if let Some(AgentChoice::Custom(custom)) = &p.agent {
                    if let Some(name) = &custom.name {
                        let origin = format!("agent:{name}")
                            .parse::<Origin>()
                            .map_err(|e| invalid("run", &format!("'agent.name': {e}")))?;
                        spec.name = match origin {
                            Origin::Agent(name) => name,
                            _ => return Err(invalid("run", "'agent.name' must name an agent")),
                        };
                    }
                    if let Some(system) = &custom.system_prompt {
                        spec.system_prompt = system.clone();
                    }
                }
                let by_mode = match p.mode {
                    RunMode::Text => settings.toolset.clone(),
                    RunMode::Voice => crate::tools::VOICE_SAFE.to_string(),
                };
                spec.toolset = Some(p.toolset.clone().unwrap_or(by_mode));
                spec.max_steps = p.max_steps.unwrap_or(settings.max_steps);
                spec.token_budget = p.token_budget.or(settings.token_budget);
                spec
            }
        };
        if let Some(set) = &spec.toolset {
            self.registry.toolset(set)?;
        }
        if let Some(steps) = p.max_steps {
            spec.max_steps = spec.max_steps.min(steps.max(1));
        }
        if let Some(choice) = &p.tool_choice {
            if let crate::llm::ToolChoice::Tool(name) = choice {
                if !spec.toolbox(&self.registry).iter().any(|t| t == name) {
                    return Err(invalid(
                        "run",
                        &format!(
                            "'toolChoice': '{}' is not in the run's toolbox",
                            name.chars().take(60).collect::<String>()
                        ),
                    ));
                }
            }
            spec.tool_choice = choice.clone();
        }
        Ok(spec)
    }

    /// Drive a tree from its root's opening or from a paused state whose waiting calls all
    /// have results, until it ends or pauses again. `guards` are the run's single-use guards.
    pub(super) async fn drive(
        &self,
        tree: Tree,
        start: Start,
        guards: std::collections::BTreeSet<String>,
    ) -> Result<RunResult, Error> {
        let (project, run_id) = (tree.project.clone(), tree.run_id.clone());
        let root_spec = match &start {
            Start::Fresh(node, _) => node.spec.clone(),
            Start::Resume(frame) => frame.spec.clone(),
        };
        self.runs.begin(&run_id, &project, &tree.abort, guards);
        // One undo group for the whole tree, kept across pauses.
        if tree.group.borrow().is_empty() {
            *tree.group.borrow_mut() = self.env.ids.next_id();
        }
        let end = match self.with_project(&project, |_| Ok(())) {
            Err(e) => Err(e),
            Ok(()) => Ok(match start {
                Start::Fresh(node, messages) => {
                    self.run_node(&tree, node, messages, (0, Usage::default()), Vec::new())
                        .await
                }
                Start::Resume(frame) => {
                    tree.take_ids(&frame);
                    self.resume_node(&tree, frame).await
                }
            }),
        };
        // The writer's next typing starts a group of its own (the project may have been
        // deleted meanwhile).
        let _ = self
            .mutate_on(On::project(&project), |s| {
                s.history.seal();
                Ok(((), Touched::default()))
            })
            .await;
        self.runs.end(&run_id);
        self.forget_research_run(&run_id);
        let end = match end {
            Ok(end) => end,
            Err(e) => {
                self.runs.take_guards(&run_id);
                self.drop_cards(&project, &run_id);
                let message = e.to_string();
                self.emit_run(
                    &run_id,
                    SubAgentOrigin::default(),
                    RunProgress::RunFailed(RunFailure::BrokenOff {
                        status: RunStatus::Failed,
                        message,
                    }),
                );
                return Err(e);
            }
        };
        let outcome = end.outcome;
        let todos = (!end.todos.is_empty()).then_some(end.todos);
        if let (RunEnd::Paused { .. }, Some(frame)) = (&outcome.end, end.frame) {
            let guards = self.runs.take_guards(&run_id);
            let paused = PausedRun {
                project: project.clone(),
                run_id: run_id.clone(),
                root: frame,
                guards,
                tree_steps: tree.state.steps.get(),
                tree_usage: tree.state.usage.get(),
                max_steps: tree.state.max_steps,
                token_budget: tree.state.token_budget,
                group: Some(tree.group.borrow().clone()),
                output: tree.output.clone(),
            };
            if tree.hold.is_some() {
                // A job's unit: its writes so far, its pause and its mark in one batch.
                self.unit_paused(&paused).await;
            } else {
                self.save_paused(&paused).await?;
            }
            let cards = self.pending_cards(&project, Some(&run_id)).await?;
            let paused = RunPaused {
                run: run_id.clone(),
                status: RunStatus::Paused,
                text: outcome.text.clone(),
                steps: tree.state.steps.get(),
                usage: tree.state.usage.get(),
                pending: cards.clone(),
            };
            let result = RunResult {
                run: run_id.clone(),
                status: RunStatus::Paused,
                agent: None,
                text: outcome.text,
                steps: paused.steps,
                usage: paused.usage,
                message: None,
                output: None,
                pending: Some(cards),
                todos,
            };
            self.emit_run(
                &run_id,
                SubAgentOrigin::default(),
                RunProgress::RunPaused(paused),
            );
            return Ok(result);
        }
        self.runs.take_guards(&run_id);
        self.drop_cards(&project, &run_id);
        if matches!(outcome.end, RunEnd::Aborted) {
            // Calls that waited for approval when the run was aborted are no longer asked.
            self.cancel_pending(&project, &run_id).await?;
        }
        if tree.hold.is_none() {
            self.forget_paused(&project, &run_id).await?;
            self.keep_conversation(&project, &root_spec.name, outcome.messages.clone())
                .await?;
        }
        // The bedside note's status after the run (a job unit's update is saved with the
        // unit; only a chat run's end may ask the model for the plan).
        self.evolve_bedside_auto(&project, tree.hold.as_deref(), tree.hold.is_none(), None)
            .await;
        // The event the run's end is announced by.
        let finished: fn(RunResult) -> RunProgress = RunProgress::RunFinished;
        let failed: fn(RunResult) -> RunProgress = |r| RunProgress::RunFailed(RunFailure::Ended(r));
        let aborted: fn(RunResult) -> RunProgress = RunProgress::RunAborted;
        let (kind, status, message) = match &outcome.end {
            RunEnd::Finished => (finished, RunStatus::Finished, None),
            RunEnd::MaxSteps => (finished, RunStatus::MaxSteps, None),
            RunEnd::BudgetSpent => (finished, RunStatus::BudgetSpent, None),
            RunEnd::Failed { message } => (
                failed,
                RunStatus::Failed,
                Some(tree.settings.redact(message)),
            ),
            RunEnd::InvalidOutput { message } => (
                failed,
                RunStatus::InvalidOutput,
                Some(tree.settings.redact(message)),
            ),
            RunEnd::Aborted | RunEnd::Paused { .. } => (aborted, RunStatus::Aborted, None),
        };
        let result = RunResult {
            run: run_id.clone(),
            status,
            agent: Some(root_spec.name.clone()),
            text: outcome.text,
            steps: tree.state.steps.get(),
            usage: tree.state.usage.get(),
            message,
            output: outcome.output.clone(),
            pending: None,
            todos,
        };
        if tree.hold.is_some() {
            // A job's unit: its writes, its transcript, its to-do list and its mark in one
            // batch.
            let ended = crate::error::to_json(&result);
            let todos = result.todos.clone().unwrap_or_default();
            self.unit_ended(&run_id, &ended, &outcome.messages, todos)
                .await;
        }
        self.emit_run(&run_id, SubAgentOrigin::default(), kind(result.clone()));
        Ok(result)
    }

    /// One tool call of a run, on the run's project.
    pub(super) async fn run_tool(
        &self,
        tree: &Tree,
        call: session::ToolCall,
        origin: Origin,
        who: &SubAgentOrigin,
        interrupt_on: &[String],
    ) -> ToolResult {
        let (project, run_id, abort) = (tree.project.as_str(), tree.run_id.as_str(), &tree.abort);
        let id = call.id.clone().unwrap_or_default();
        let ctx = super::CallCtx {
            run: Some(run_id.to_string()),
            group: Some(tree.group.borrow().clone()),
            hold: tree.hold.clone(),
            interrupt_on: interrupt_on.to_vec(),
            no_overwrite: tree.no_overwrite,
            who: Some(who.clone()),
            card_with_pause: true,
            ..Default::default()
        };
        let asked = call.clone();
        match self
            .execute_call_with(project, call, origin.clone(), Some(abort), ctx)
            .await
        {
            Ok((result, edits)) => {
                if super::run_state::is_approval_required(&result) {
                    let record =
                        self.approval_record(project, Some(run_id), &asked, &origin, &result);
                    let card = record.card();
                    self.emit_run(run_id, who.clone(), RunProgress::ApprovalRequested(card));
                }
                for edit in edits {
                    let event = RunEvent::EditApplied {
                        id: id.clone(),
                        chapter: edit.chapter,
                        version: edit.version,
                    };
                    self.emit_run(run_id, who.clone(), event);
                }
                result
            }
            Err(e) => ToolResult::error(
                &ToolError::new("failed", format!("The call could not run: {e}")),
                Default::default(),
            ),
        }
    }
}
