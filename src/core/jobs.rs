//! Background jobs: long work (a rentl pipeline, or any agent run the app starts in the
//! background) as a persisted list of units, run by the core while the writer goes on.
//!
//! A job is a `meta` record (`job:<project>:<id>`, kind `job`) holding its kind, parameters,
//! state (`queued`, `running`, `waiting_approval`, `paused`, `done`, `failed`, `cancelled`),
//! and its units, each with its state and result. A unit is one agent run (run id
//! `job:<job>:<unit>`) on the project's one shared session: a write by one unit is visible to
//! every other unit, the writer and the chat's runs at once, and conflicts (`CONCURRENT
//! UPDATE`, locks, approvals) are tool results.
//!
//! **Exactly once.** A unit's writes are *held* ([`crate::persist::pending::Pending::hold`]):
//! they are applied to the session at once but saved only with the unit's progress mark: its
//! `done` (or its pause for approval) goes in the same batch as everything it wrote, its
//! audit records included. A worker that dies mid-unit saved nothing of the unit, and the
//! next worker runs it again from its start; a unit marked done is never run again.
//!
//! **Scheduling** is deterministic: units run in their plan's stages
//! ([`crate::agent::pipeline`]), at most `concurrency` at once; a unit waiting for the
//! writer's approval does not hold up the others (its stage counts as settled), and resumes
//! when the writer decides (in the `approve` request, as any paused run).
//!
//! After a reload, opening the project resumes its unfinished jobs from their first unit not
//! done. Jobs need a way to run work in the background ([`Core::with_spawner`]); the worker
//! gives one.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures_util::future::select;
use futures_util::stream::{FuturesUnordered, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::json;
use serde_json::Value;
use ts_rs::TS;

use super::parts::Spawner;
use super::records::{JobRecord, MetaRecord, PausedRunRecord, PausedState, TranscriptRecord};
use super::run_state::{
    job_of_run, unit_run, Node, PausedRun, RunProgress, RunStarted, Start, SubAgentOrigin, Tree,
};
use super::saving::Notify;
use super::{invalid, Core, On, Touched};

use crate::agent::pipeline::{self, Phase, Target};
use crate::agent::planning::TodoItem;
use crate::agent::{self, AbortSignal, TreeState};
use crate::bible::Kind;
use crate::error::Error;
use crate::llm::{Message, Role, Usage};
use crate::store::Table;

/// The most units a job may run at once.
pub const MAX_CONCURRENCY: usize = 8;
/// Units a job runs at once unless told.
pub const DEFAULT_CONCURRENCY: usize = 3;
/// The longest unit result text kept in the job record (the transcript keeps it whole).
const RESULT_TEXT_CHARS: usize = 2_000;

/// A job's or a unit's state: `waiting_approval` when every unit left waits for the writer's
/// approval, `paused` (jobs only) when the writer paused it; `done`, `failed` and `cancelled`
/// are final.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "JobState")]
pub(super) enum State {
    /// Not started yet.
    Queued,
    /// Running now.
    Running,
    /// Waiting for the writer's approval.
    WaitingApproval,
    /// Paused by the writer.
    Paused,
    /// Finished.
    Done,
    /// Ended with an error.
    Failed,
    /// Cancelled by the writer.
    Cancelled,
}

impl State {
    fn settled(self) -> bool {
        matches!(self, State::Done | State::Failed | State::Cancelled)
    }
}

/// One unit of a job.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Unit {
    id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    phase: Option<Phase>,
    stage: usize,
    agent: String,
    target: Target,
    state: State,
    run: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// The page a research job's unit reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    /// The agent's to-do list as its run ended (an agent with `planning`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    todos: Vec<TodoItem>,
}

/// What a job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub(super) enum JobKind {
    /// A rentl pipeline.
    Pipeline,
    /// One agent run in the background.
    Run,
    /// Web pages read into research notes, one unit per page, as the writer.
    Research,
}

/// A job, as saved.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Job {
    id: String,
    project: String,
    kind: JobKind,
    params: Value,
    state: State,
    created_ms: u64,
    updated_ms: u64,
    concurrency: usize,
    allow_overwrite: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    units: Vec<Unit>,
}

/// A background job as the page sees it (`units` only from `job_status`).
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub(super) struct JobView {
    /// Its id.
    id: String,
    /// Its project.
    project: String,
    /// What it does.
    kind: JobKind,
    /// Its parameters as the core keeps them (every default filled in; no `kind`, which is
    /// the job's): a pipeline's, a background run's or a research job's.
    #[ts(
        type = "{ phases: Array<JobPhase>, scope: 'all' | { scenes: Array<string> } | { route: string }, allowOverwrite: boolean, concurrency: number } | { prompt: string, agent?: string | { name?: string, systemPrompt?: string }, preset?: string } | { urls: Array<string>, concurrency: number }"
    )]
    params: Value,
    /// Its state.
    state: State,
    /// When it was created (ms since the epoch).
    created_ms: u64,
    /// When it last changed (ms since the epoch).
    updated_ms: u64,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    error: Option<String>,
    /// Its progress over its units.
    progress: JobProgress,
    /// Each phase's units done out of its total, in order (one phase named `run` for a
    /// background run, `research` for a research job).
    phases: Vec<PhaseProgress>,
    /// Its units.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    units: Option<Vec<UnitView>>,
}

/// A job's progress over its units.
#[derive(Serialize, TS)]
pub(super) struct JobProgress {
    /// Units done.
    done: usize,
    /// Units failed.
    failed: usize,
    /// Units waiting for the writer's approval.
    waiting: usize,
    /// Every unit.
    total: usize,
    /// The ids of the units running now.
    current: Vec<String>,
}

/// One phase's units done out of its total.
#[derive(Serialize, TS)]
pub(super) struct PhaseProgress {
    /// The phase, or `run` (a background run) or `research` (a research job).
    #[ts(type = "JobPhase | 'run' | 'research'")]
    name: &'static str,
    /// Its units done.
    done: usize,
    /// Its units.
    total: usize,
}

impl Job {
    fn record_key(&self) -> String {
        job_key(&self.project, &self.id)
    }

    fn unit(&self, id: &str) -> Option<&Unit> {
        self.units.iter().find(|u| u.id == id)
    }

    fn unit_mut(&mut self, id: &str) -> Option<&mut Unit> {
        self.units.iter_mut().find(|u| u.id == id)
    }

    /// The job as the page sees it (with its units when `units`).
    fn view(&self, units: bool) -> JobView {
        let count = |s: State| self.units.iter().filter(|u| u.state == s).count();
        let mut phases: Vec<PhaseProgress> = Vec::new();
        for phase in Phase::ALL {
            let (mut done, mut total) = (0, 0);
            for u in &self.units {
                if u.phase == Some(phase) {
                    total += 1;
                    done += usize::from(u.state == State::Done);
                }
            }
            if total > 0 {
                phases.push(PhaseProgress {
                    name: phase.name(),
                    done,
                    total,
                });
            }
        }
        if phases.is_empty() {
            let name = if self.kind == JobKind::Research {
                "research"
            } else {
                "run"
            };
            phases.push(PhaseProgress {
                name,
                done: count(State::Done),
                total: self.units.len(),
            });
        }
        let mut current: Vec<String> = Vec::new();
        for u in &self.units {
            if u.state == State::Running {
                current.push(u.id.clone());
            }
        }
        JobView {
            id: self.id.clone(),
            project: self.project.clone(),
            kind: self.kind,
            params: self.params.clone(),
            state: self.state,
            created_ms: self.created_ms,
            updated_ms: self.updated_ms,
            error: self.error.clone(),
            progress: JobProgress {
                done: count(State::Done),
                failed: count(State::Failed),
                waiting: count(State::WaitingApproval),
                total: self.units.len(),
                current,
            },
            phases,
            units: units.then(|| self.units.iter().map(Unit::view).collect()),
        }
    }

    fn record(&self) -> MetaRecord {
        MetaRecord::Job(JobRecord {
            id: self.record_key(),
            project: self.project.clone(),
            state: crate::error::to_json(&self.state),
            rev: 0,
            job: crate::error::to_json(self),
        })
    }
}

/// One unit of a job as the page sees it: one agent run (run id `job:<job>:<unit>`).
#[derive(Serialize, TS)]
pub(super) struct UnitView {
    /// `<phase>:<agent>:<target>` (`context:scene_summary_detailer:scene_1`), or `run` for a
    /// background run's one unit.
    id: String,
    /// Its phase (`null` for a background run's or a research job's unit).
    phase: Option<Phase>,
    /// The agent it runs.
    agent: String,
    /// What it works on.
    target: Target,
    /// Its state.
    state: State,
    /// Its run id.
    run: String,
    /// How its run ended (once it did); for a research unit, the note it kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(
        optional,
        type = "{ status: string, text: string, steps: number } | { id: string, title: string, url: string, updated: boolean, text: string }"
    )]
    result: Option<Value>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    error: Option<String>,
    /// A research unit's page.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    url: Option<String>,
    /// Its agent's to-do list as its run ended (an agent with `planning` that wrote one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<TodoItem>>")]
    todos: Vec<TodoItem>,
}

impl Unit {
    fn view(&self) -> UnitView {
        UnitView {
            id: self.id.clone(),
            phase: self.phase,
            agent: self.agent.clone(),
            target: self.target.clone(),
            state: self.state,
            run: self.run.clone(),
            result: self.result.clone(),
            error: self.error.clone(),
            url: self.url.clone(),
            todos: self.todos.clone(),
        }
    }
}

fn job_key(project: &str, job: &str) -> String {
    format!("job:{project}:{job}")
}

fn transcript_key(project: &str, job: &str, unit: &str) -> String {
    format!("jobunit:{project}:{job}:{unit}")
}

/// The error for a job id this project does not have.
fn no_job(job: &str) -> Error {
    invalid(
        "job",
        &format!(
            "no job '{}' in this project; list_jobs shows them",
            job.chars().take(80).collect::<String>()
        ),
    )
}

/// A job alive in this core.
pub(super) struct JobRt {
    job: RefCell<Job>,
    /// Wakes the job's driver (a unit settled, the writer paused, resumed or cancelled).
    notify: Rc<Notify>,
    paused: Cell<bool>,
    cancelled: Cell<bool>,
    /// The abort signal of each unit running now, by unit id.
    aborts: RefCell<std::collections::BTreeMap<String, AbortSignal>>,
    /// Units that paused for approval (their paused-run record is closed when they end).
    paused_units: RefCell<std::collections::BTreeSet<String>>,
}

/// `start_job` params.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "StartJobParams", optional_fields)]
pub(super) struct StartJob {
    kind: JobKind,
    #[serde(default)]
    phases: Option<Vec<String>>,
    #[serde(default)]
    scope: Option<Value>,
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    allow_overwrite: bool,
    #[serde(default)]
    concurrency: Option<usize>,
    /// For `kind: "run"`: the run's prompt, and its agent or preset.
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    agent: Option<Value>,
    #[serde(default)]
    preset: Option<String>,
    /// For `kind: "research"`: the pages to read.
    #[serde(default)]
    urls: Option<Vec<String>>,
}

/// Params naming a job.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "JobRefParams", optional_fields)]
pub(super) struct JobRef {
    job: String,
}

/// `job_unit` params.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "JobUnitParams", optional_fields)]
pub(super) struct UnitRef {
    job: String,
    unit: String,
}

/// `list_jobs`: the open project's jobs, newest first.
#[derive(Serialize, TS)]
pub(super) struct JobList {
    /// The jobs (without their units).
    jobs: Vec<JobView>,
}

/// `job_unit`: a unit and its transcript.
#[derive(Serialize, TS)]
#[ts(rename = "JobUnitDetail")]
pub(super) struct UnitDetail {
    /// The unit.
    unit: UnitView,
    /// Its run's messages (saved when the unit ends or waits for approval; empty before).
    #[ts(as = "Vec<TranscriptMessage>")]
    transcript: Value,
}

/// One message of a unit's conversation (the system prompt left out).
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub(super) struct TranscriptMessage {
    /// Who wrote it.
    #[ts(type = "'user' | 'assistant' | 'tool'")]
    role: &'static str,
    /// Its text (absent when empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    text: Option<String>,
    /// The assistant's tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    tool_calls: Option<Vec<TranscriptToolCall>>,
    /// A tool result's call id.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    tool_call_id: Option<String>,
    /// A tool result's tool name.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    name: Option<String>,
}

/// A tool call the model made, in a transcript.
#[derive(Serialize, TS)]
pub(super) struct TranscriptToolCall {
    /// The call id.
    id: String,
    /// The tool's name.
    name: String,
    /// Its arguments (a JSON object).
    #[ts(type = "Record<string, unknown>")]
    arguments: Value,
}

impl Core {
    /// The same core, able to run jobs in the background: `spawn` must run a future to its
    /// end on this thread (the worker passes `wasm_bindgen_futures::spawn_local`).
    pub fn with_spawner(self, spawn: Spawner) -> Self {
        self.shared.jobs.set_spawner(spawn);
        self
    }

    /// A core for background work on `project` (no client: its events reach every page).
    pub(super) fn background(&self, project: &str) -> Core {
        Core {
            shared: Rc::clone(&self.shared),
            current: RefCell::new(Some(project.to_string())),
            client: None,
        }
    }

    fn job_rt(&self, job: &str) -> Result<Rc<JobRt>, Error> {
        let project = self.current()?;
        self.jobs.get_in(&project, job).ok_or_else(|| no_job(job))
    }

    /// Serve `start_job`.
    pub(super) async fn start_job(&self, p: StartJob) -> Result<JobView, Error> {
        let project = self.current()?;
        self.ensure_settings().await?;
        if !self.jobs.can_spawn() {
            return Err(invalid(
                "start_job",
                "this core cannot run background work (it was built without a spawner)",
            ));
        }
        if p.kind != JobKind::Research {
            self.settings
                .read(|s| s.provider_config())
                .map_err(Error::NoModel)?;
        }
        if self.llm().is_none() {
            return Err(Error::NoModel(
                "this core was built without a way to call models".into(),
            ));
        }
        if p.kind != JobKind::Research && p.urls.is_some() {
            return Err(invalid("start_job", "'urls' belongs to kind \"research\""));
        }
        let concurrency = p.concurrency.unwrap_or(DEFAULT_CONCURRENCY);
        if !(1..=MAX_CONCURRENCY).contains(&concurrency) {
            return Err(invalid(
                "start_job",
                &format!("'concurrency' must be between 1 and {MAX_CONCURRENCY}"),
            ));
        }
        let id = self.env.ids.next_id();
        let catalog = self.catalog(&project).await?;
        let (params, units) = match p.kind {
            JobKind::Research => {
                if p.prompt.is_some()
                    || p.agent.is_some()
                    || p.preset.is_some()
                    || p.phases.is_some()
                    || p.scope.is_some()
                {
                    return Err(invalid(
                        "start_job",
                        "kind \"research\" takes 'urls' (and 'concurrency'), nothing else",
                    ));
                }
                let urls = p.urls.clone().unwrap_or_default();
                if urls.is_empty() || urls.len() > super::research::MAX_JOB_URLS {
                    return Err(invalid(
                        "start_job",
                        &format!(
                            "'urls' must list 1 to {} pages to read",
                            super::research::MAX_JOB_URLS
                        ),
                    ));
                }
                let allow_private = self.settings.read(|s| s.research_allow_private);
                for url in &urls {
                    crate::research::url::check(url, allow_private).map_err(|e| {
                        invalid(
                            "start_job",
                            &format!("'{}': {e}", url.chars().take(200).collect::<String>()),
                        )
                    })?;
                }
                let params = json!({ "urls": urls, "concurrency": concurrency });
                let mut units = Vec::with_capacity(urls.len());
                for (i, url) in urls.iter().enumerate() {
                    let unit = format!("page{}", i + 1);
                    units.push(Unit {
                        run: unit_run(&id, &unit),
                        id: unit,
                        phase: None,
                        stage: 0,
                        agent: "writer".into(),
                        target: Target::Project,
                        state: State::Queued,
                        result: None,
                        error: None,
                        url: Some(url.trim().to_string()),
                        todos: Vec::new(),
                    });
                }
                (params, units)
            }
            JobKind::Pipeline => {
                if p.prompt.is_some() || p.agent.is_some() || p.preset.is_some() {
                    return Err(invalid(
                        "start_job",
                        "'prompt', 'agent' and 'preset' belong to kind \"run\"",
                    ));
                }
                let phases: Vec<Phase> = match &p.phases {
                    None => vec![Phase::Context],
                    Some(names) if names.is_empty() => {
                        return Err(invalid(
                            "start_job",
                            "'phases' must name at least one phase",
                        ))
                    }
                    Some(names) => names
                        .iter()
                        .map(|n| n.parse::<Phase>())
                        .collect::<Result<_, _>>()
                        .map_err(|e| invalid("start_job", &e))?,
                };
                let (scenes, routes) = self.scope(&project, p.scope.as_ref())?;
                if scenes.is_empty() {
                    return Err(invalid(
                        "start_job",
                        "the scope has no scenes; add scenes to the story bible first",
                    ));
                }
                let planned = pipeline::plan(&phases, &scenes, &routes);
                for unit in &planned {
                    if catalog.get(&unit.agent).is_none() {
                        return Err(invalid(
                            "start_job",
                            &format!(
                                "the pipeline needs agent '{}', which is missing",
                                unit.agent
                            ),
                        ));
                    }
                }
                let params = json!({
                    "phases": phases,
                    "scope": p.scope.clone().unwrap_or(json!("all")),
                    "allowOverwrite": p.allow_overwrite,
                    "concurrency": concurrency,
                });
                let mut units = Vec::with_capacity(planned.len());
                for u in planned {
                    units.push(Unit {
                        run: unit_run(&id, &u.id),
                        id: u.id,
                        phase: Some(u.phase),
                        stage: u.stage,
                        agent: u.agent,
                        target: u.target,
                        state: State::Queued,
                        result: None,
                        error: None,
                        url: None,
                        todos: Vec::new(),
                    });
                }
                (params, units)
            }
            JobKind::Run => {
                if p.phases.is_some() || p.scope.is_some() {
                    return Err(invalid(
                        "start_job",
                        "'phases' and 'scope' belong to kind \"pipeline\"",
                    ));
                }
                let mut params = json!({ "prompt": p.prompt.clone().unwrap_or_default() });
                if let Some(agent) = &p.agent {
                    params["agent"] = agent.clone();
                }
                if let Some(preset) = &p.preset {
                    params["preset"] = json!(preset);
                }
                let settings = self.settings.get();
                let spec = self.entry_spec_of(&catalog, &settings, &params, "start_job")?;
                if params["prompt"]
                    .as_str()
                    .is_none_or(|t| t.trim().is_empty())
                {
                    return Err(invalid("start_job", "'prompt' must not be empty"));
                }
                let unit = Unit {
                    id: "run".into(),
                    run: unit_run(&id, "run"),
                    phase: None,
                    stage: 0,
                    agent: spec.name,
                    target: Target::Project,
                    state: State::Queued,
                    result: None,
                    error: None,
                    url: None,
                    todos: Vec::new(),
                };
                (params, vec![unit])
            }
        };
        let now = self.env.clock.now_ms();
        let job = Job {
            id: id.clone(),
            project: project.clone(),
            kind: p.kind,
            params,
            state: State::Queued,
            created_ms: now,
            updated_ms: now,
            concurrency,
            allow_overwrite: p.allow_overwrite,
            error: None,
            units,
        };
        let view = job.view(false);
        let event = JobProgressEvent {
            project: project.clone(),
            job: job.view(false),
            unit: None,
            resumed: None,
        };
        self.save_job(&job, None, Vec::new()).await;
        self.launch(job);
        self.emit(event);
        Ok(view)
    }

    /// The scenes and routes of a pipeline's scope, in the bible's order.
    fn scope(
        &self,
        project: &str,
        scope: Option<&Value>,
    ) -> Result<(Vec<String>, Vec<String>), Error> {
        self.with_project(project, |s| {
            let all_scenes = crate::bible::scenes::scene_ids_in_order(&s.bible, &s.project);
            let mut routes: Vec<(String, Vec<String>)> = Vec::new();
            for e in s.bible.list(Kind::Route) {
                let mut ids = Vec::new();
                for id in e.list("scene_ids") {
                    ids.push(id.to_string());
                }
                routes.push((e.id.clone(), ids));
            }
            let bad = |what: &str| invalid("start_job", what);
            let route_ids = |routes: Vec<(String, Vec<String>)>, scenes: Option<&[String]>| {
                let mut ids = Vec::new();
                for (r, of) in routes {
                    if scenes.is_none_or(|scenes| of.iter().any(|i| scenes.contains(i))) {
                        ids.push(r);
                    }
                }
                ids
            };
            match scope {
                None => Ok((all_scenes, route_ids(routes, None))),
                Some(Value::String(all)) if all == "all" => {
                    Ok((all_scenes, route_ids(routes, None)))
                }
                Some(Value::Object(o)) if o.len() == 1 && o.contains_key("route") => {
                    let route = o["route"].as_str().unwrap_or_default();
                    let Some((_, ids)) = routes.iter().find(|(r, _)| r == route) else {
                        return Err(bad(&format!(
                            "no route '{}'",
                            route.chars().take(80).collect::<String>()
                        )));
                    };
                    let mut scenes = all_scenes;
                    scenes.retain(|s| ids.contains(s));
                    Ok((scenes, vec![route.to_string()]))
                }
                Some(Value::Object(o)) if o.len() == 1 && o.contains_key("scenes") => {
                    let Some(list) = o["scenes"].as_array() else {
                        return Err(bad("'scope.scenes' must be a list of scene ids"));
                    };
                    let mut scenes = Vec::new();
                    for id in list {
                        let id = id.as_str().unwrap_or_default();
                        if !all_scenes.iter().any(|s| s == id) {
                            return Err(bad(&format!(
                                "no scene '{}' in the story bible",
                                id.chars().take(80).collect::<String>()
                            )));
                        }
                        if !scenes.iter().any(|s| s == id) {
                            scenes.push(id.to_string());
                        }
                    }
                    let routes = route_ids(routes, Some(&scenes));
                    Ok((scenes, routes))
                }
                Some(_) => Err(bad(
                    "'scope' must be \"all\", {\"route\": id} or {\"scenes\": [ids]}",
                )),
            }
        })
    }

    /// Keep a job alive in this core and start its driver.
    fn launch(&self, job: Job) {
        let id = job.id.clone();
        let mut waiting = Vec::new();
        for u in &job.units {
            if u.state == State::WaitingApproval {
                waiting.push(u.id.clone());
            }
        }
        let project = job.project.clone();
        let rt = Rc::new(JobRt {
            paused: Cell::new(job.state == State::Paused),
            cancelled: Cell::new(false),
            job: RefCell::new(job),
            notify: Rc::new(Notify::default()),
            aborts: RefCell::new(std::collections::BTreeMap::new()),
            paused_units: RefCell::new(waiting.into_iter().collect()),
        });
        self.jobs.insert(&id, &project, rt);
        let spawner = self.jobs.spawner();
        if let Some(spawn) = spawner {
            let core = self.background(&project);
            spawn(Box::pin(async move { core.drive_job(&id).await }));
        }
    }

    /// Resume the unfinished jobs of `project` stored by an earlier worker (once per core).
    /// `records` are the project's `meta` records, as the opening read them.
    pub(super) fn wake_jobs(&self, project: &str, records: &[Value]) {
        if !self.jobs.can_spawn() {
            return;
        }
        for record in records.iter().filter(|r| r["kind"] == "job") {
            let Ok(mut job) = serde_json::from_value::<Job>(record["job"].clone()) else {
                continue;
            };
            if job.state.settled() || self.jobs.contains(&job.id) {
                continue;
            }
            // A unit that was running when the last worker stopped saved nothing: it starts
            // again from its beginning.
            for unit in &mut job.units {
                if unit.state == State::Running {
                    unit.state = State::Queued;
                }
            }
            self.emit(JobProgressEvent {
                project: project.to_string(),
                job: job.view(false),
                unit: None,
                resumed: Some(true),
            });
            self.launch(job);
        }
    }

    /// Save a job's record (and `extra` records) in the project's next batch, with what
    /// the unit's hold `release` kept back. A failed save is reported and stays pending.
    async fn save_job(&self, job: &Job, release: Option<String>, extra: Vec<MetaRecord>) {
        let mut puts = vec![job.record()];
        puts.extend(extra);
        let _ = self
            .mutate_on(On::project(&job.project), |_| {
                Ok((
                    (),
                    Touched {
                        meta_puts: puts,
                        release,
                        ..Touched::default()
                    },
                ))
            })
            .await;
    }

    fn emit_job(&self, rt: &JobRt, unit: Option<&str>) {
        let job = rt.job.borrow();
        self.emit(JobProgressEvent {
            project: job.project.clone(),
            job: job.view(false),
            unit: unit.and_then(|u| job.unit(u)).map(Unit::view),
            resumed: None,
        });
    }

    /// Run a job's units until it ends.
    async fn drive_job(&self, id: &str) {
        let Some(rt) = self.jobs.get(id) else {
            return;
        };
        let mut running = FuturesUnordered::new();
        loop {
            let wake = rt.notify.wait();
            // Start what may start.
            if !rt.cancelled.get() && !rt.paused.get() {
                let starting: Vec<String> = {
                    let job = rt.job.borrow();
                    let stage = job
                        .units
                        .iter()
                        .filter(|u| !u.state.settled() && u.state != State::WaitingApproval)
                        .map(|u| u.stage)
                        .min();
                    let busy = job
                        .units
                        .iter()
                        .filter(|u| u.state == State::Running)
                        .count();
                    let free = job.concurrency.saturating_sub(busy);
                    let mut starting = Vec::new();
                    for u in &job.units {
                        if starting.len() < free
                            && u.state == State::Queued
                            && Some(u.stage) == stage
                        {
                            starting.push(u.id.clone());
                        }
                    }
                    starting
                };
                for unit in starting {
                    self.set_unit(&rt, &unit, State::Running, None, None);
                    running.push(Box::pin(self.run_unit(Rc::clone(&rt), unit)));
                }
            }
            // What state the job is in now.
            let (state, finished) = {
                let job = rt.job.borrow();
                let any = |s: State| job.units.iter().any(|u| u.state == s);
                if rt.cancelled.get() {
                    (State::Cancelled, running.is_empty() && !any(State::Running))
                } else if any(State::Running) {
                    (State::Running, false)
                } else if rt.paused.get() && any(State::Queued) {
                    (State::Paused, false)
                } else if any(State::Queued) {
                    (State::Running, false)
                } else if any(State::WaitingApproval) {
                    (State::WaitingApproval, false)
                } else if any(State::Failed) {
                    (State::Failed, true)
                } else {
                    (State::Done, true)
                }
            };
            let changed = rt.job.borrow().state != state;
            if changed || finished {
                let now = self.env.clock.now_ms();
                {
                    let mut job = rt.job.borrow_mut();
                    job.state = state;
                    job.updated_ms = now;
                    if state == State::Failed {
                        let failed = job
                            .units
                            .iter()
                            .filter(|u| u.state == State::Failed)
                            .count();
                        job.error = Some(format!("{failed} of {} units failed", job.units.len()));
                    }
                }
                let job = rt.job.borrow().clone();
                self.save_job(&job, None, Vec::new()).await;
                self.emit_job(&rt, None);
            }
            if finished {
                // The job stays known to this core (settled), so that opening the project
                // again never starts it anew from a record whose last save is still pending.
                let job = rt.job.borrow();
                self.emit(JobFinishedEvent {
                    project: job.project.clone(),
                    job: job.view(false),
                });
                return;
            }
            if running.is_empty() {
                wake.await;
            } else {
                select(running.next(), std::pin::pin!(wake)).await;
            }
        }
    }

    /// Change a unit's state in memory and tell the page.
    fn set_unit(
        &self,
        rt: &JobRt,
        unit: &str,
        state: State,
        result: Option<Value>,
        error: Option<String>,
    ) {
        {
            let mut job = rt.job.borrow_mut();
            job.updated_ms = self.env.clock.now_ms();
            if let Some(u) = job.unit_mut(unit) {
                u.state = state;
                if result.is_some() {
                    u.result = result;
                }
                if error.is_some() {
                    u.error = error;
                }
            }
        }
        self.emit_job(rt, Some(unit));
    }

    /// Run one unit from its start (its run's end or pause marks it, in `drive`).
    async fn run_unit(&self, rt: Rc<JobRt>, unit_id: String) {
        let started = self.start_unit(&rt, &unit_id).await;
        if let Err(e) = started {
            let still = rt
                .job
                .borrow()
                .unit(&unit_id)
                .is_some_and(|u| u.state == State::Running);
            if still {
                let run = unit_run(&rt.job.borrow().id, &unit_id);
                self.unit_failed(&rt, &unit_id, &run, &e.to_string()).await;
            }
        }
        rt.aborts.borrow_mut().remove(&unit_id);
        rt.notify.notify_all();
    }

    async fn start_unit(&self, rt: &JobRt, unit_id: &str) -> Result<(), Error> {
        let (project, job_id, kind, params, allow_overwrite, unit) = {
            let job = rt.job.borrow();
            let unit = job
                .unit(unit_id)
                .cloned()
                .ok_or_else(|| invalid("job", "the unit is gone"))?;
            (
                job.project.clone(),
                job.id.clone(),
                job.kind,
                job.params.clone(),
                job.allow_overwrite,
                unit,
            )
        };
        if kind == JobKind::Research {
            self.run_research_unit(rt, &project, &job_id, &unit).await;
            return Ok(());
        }
        self.ensure_settings().await?;
        let settings = self.settings.get();
        let provider = self.model_config(&settings).await.map_err(Error::NoModel)?;
        let catalog = self.catalog(&project).await?;
        let (spec, prompt) = match kind {
            JobKind::Pipeline => {
                let spec = catalog
                    .get(&unit.agent)
                    .cloned()
                    .ok_or_else(|| invalid("job", &format!("agent '{}' is missing", unit.agent)))?;
                let prompt = pipeline::task_message(&unit.agent, &unit.target, allow_overwrite);
                (pipeline::unit_spec(&spec, allow_overwrite), prompt)
            }
            JobKind::Run | JobKind::Research => {
                let spec = self.entry_spec_of(&catalog, &settings, &params, "job")?;
                (
                    spec,
                    params["prompt"].as_str().unwrap_or_default().to_string(),
                )
            }
        };
        let run_id = unit_run(&job_id, unit_id);
        let abort = AbortSignal::new();
        rt.aborts
            .borrow_mut()
            .insert(unit_id.to_string(), abort.clone());
        if rt.cancelled.get() {
            abort.abort();
        }
        self.emit_run(
            &run_id,
            SubAgentOrigin::default(),
            RunProgress::RunStarted(RunStarted {
                project: project.clone(),
                agent: spec.name.clone(),
                preset: None,
                toolset: None,
                background: Some(true),
                max_steps: spec.max_steps,
                model: provider.model.clone(),
                prompt: prompt.clone(),
            }),
        );
        let toolbox = spec.toolbox(&self.registry);
        let messages = agent::opening_messages(&spec, &toolbox, Vec::new(), &prompt, &[]);
        let mut tree = Tree::new(
            project,
            run_id.clone(),
            abort,
            TreeState::new(spec.max_steps, spec.token_budget, 0, Usage::default()),
            catalog,
            settings,
            provider,
        );
        tree.hold = Some(run_id);
        tree.no_overwrite = kind == JobKind::Pipeline && !allow_overwrite;
        self.drive(
            tree,
            Start::Fresh(Node::root(spec), messages),
            Default::default(),
        )
        .await?;
        Ok(())
    }

    /// Read a research job's page (as the writer): the note is kept under the unit's hold
    /// and saved with the unit's mark, in one batch.
    async fn run_research_unit(&self, rt: &JobRt, project: &str, job_id: &str, unit: &Unit) {
        let run = unit_run(job_id, &unit.id);
        let abort = AbortSignal::new();
        rt.aborts
            .borrow_mut()
            .insert(unit.id.clone(), abort.clone());
        if rt.cancelled.get() {
            abort.abort();
        }
        let address = unit.url.clone().unwrap_or_default();
        let read = self.research_unit(project, &address, &run, &abort).await;
        let job = {
            let mut job = rt.job.borrow_mut();
            job.updated_ms = self.env.clock.now_ms();
            if let Some(u) = job.unit_mut(&unit.id) {
                match read {
                    Ok(result) => {
                        u.state = State::Done;
                        u.result = Some(result);
                    }
                    Err(_) if abort.is_aborted() => u.state = State::Cancelled,
                    Err(message) => {
                        u.state = State::Failed;
                        u.error = Some(message);
                    }
                }
            }
            job.clone()
        };
        self.save_job(&job, Some(run), Vec::new()).await;
        self.emit_job(rt, Some(&unit.id));
    }

    /// A unit's run ended (finished, failed or aborted): mark it, and save its writes, its
    /// transcript and its mark in one batch.
    pub(super) async fn unit_ended(
        &self,
        run: &str,
        result: &Value,
        messages: &[Message],
        todos: Vec<TodoItem>,
    ) {
        let Some((job_id, unit_id)) = job_of_run(run) else {
            return;
        };
        let rt = self.jobs.get(job_id);
        let state = match result["status"].as_str() {
            Some("finished") => State::Done,
            Some("aborted") => State::Cancelled,
            _ => State::Failed,
        };
        let text: String = result["text"]
            .as_str()
            .unwrap_or_default()
            .chars()
            .take(RESULT_TEXT_CHARS)
            .collect();
        let summary = json!({"status": result["status"], "text": text, "steps": result["steps"]});
        let error = result["message"].as_str().map(str::to_string).or_else(|| {
            (state == State::Failed).then(|| format!("the run ended with {}", result["status"]))
        });
        let Some(rt) = rt else {
            // The job is not alive here (cancelled meanwhile): the writes are saved anyway.
            self.release_only(run).await;
            return;
        };
        let (project, job) = {
            let mut job = rt.job.borrow_mut();
            job.updated_ms = self.env.clock.now_ms();
            if let Some(u) = job.unit_mut(unit_id) {
                u.state = state;
                u.result = Some(summary);
                u.error = error;
                u.todos = todos;
            }
            (job.project.clone(), job.clone())
        };
        let transcript = MetaRecord::JobTranscript(TranscriptRecord {
            id: transcript_key(&project, job_id, unit_id),
            project: project.clone(),
            rev: 0,
            messages: crate::error::to_json(&transcript_view(messages)),
        });
        let mut records = vec![transcript];
        if rt.paused_units.borrow_mut().remove(unit_id) {
            // Its paused state is done with, in the same batch.
            records.push(MetaRecord::PausedRun(PausedRunRecord {
                id: super::run_state::paused_key(&project, run),
                project: project.clone(),
                state: PausedState::Ended,
                rev: 0,
                run: run.to_string(),
                paused: None,
            }));
        }
        self.save_job(&job, Some(run.to_string()), records).await;
        self.emit_job(&rt, Some(unit_id));
        rt.notify.notify_all();
    }

    /// A unit's run paused for the writer's approval: save its writes so far, its paused
    /// state and its mark in one batch.
    pub(super) async fn unit_paused(&self, paused: &PausedRun) {
        let run = paused.run_id.as_str();
        let Some((job_id, unit_id)) = job_of_run(run) else {
            return;
        };
        let rt = self.jobs.get(job_id);
        let record = super::records::paused_record(paused);
        let Some(rt) = rt else {
            let _ = self
                .mutate_on(On::project(&paused.project), |_| {
                    Ok((
                        (),
                        Touched {
                            meta_puts: vec![record],
                            release: Some(run.to_string()),
                            ..Touched::default()
                        },
                    ))
                })
                .await;
            return;
        };
        rt.paused_units.borrow_mut().insert(unit_id.to_string());
        let job = {
            let mut job = rt.job.borrow_mut();
            if let Some(u) = job.unit_mut(unit_id) {
                u.state = State::WaitingApproval;
            }
            job.clone()
        };
        self.save_job(&job, Some(run.to_string()), vec![record])
            .await;
        self.emit_job(&rt, Some(unit_id));
        rt.notify.notify_all();
    }

    /// Whether a unit's run may not overwrite what it wrote (its job is a pipeline without
    /// `allowOverwrite`).
    pub(super) fn unit_no_overwrite(&self, run: &str) -> bool {
        job_of_run(run)
            .and_then(|(job, _)| self.jobs.get(job))
            .is_some_and(|rt| {
                let job = rt.job.borrow();
                job.kind == JobKind::Pipeline && !job.allow_overwrite
            })
    }

    /// A paused unit goes on (the writer decided its calls), under `abort`.
    pub(super) fn unit_resumed(&self, run: &str, abort: &AbortSignal) {
        if let Some((job_id, unit_id)) = job_of_run(run) {
            let rt = self.jobs.get(job_id);
            if let Some(rt) = rt {
                if rt.cancelled.get() {
                    abort.abort();
                }
                rt.aborts
                    .borrow_mut()
                    .insert(unit_id.to_string(), abort.clone());
                self.set_unit(&rt, unit_id, State::Running, None, None);
                rt.notify.notify_all();
            }
        }
    }

    async fn unit_failed(&self, rt: &JobRt, unit: &str, run: &str, message: &str) {
        self.set_unit(rt, unit, State::Failed, None, Some(message.to_string()));
        let job = rt.job.borrow().clone();
        self.save_job(&job, Some(run.to_string()), Vec::new()).await;
    }

    async fn release_only(&self, run: &str) {
        let Ok(project) = self.current() else { return };
        let _ = self
            .mutate_on(On::project(&project), |_| {
                Ok((
                    (),
                    Touched {
                        release: Some(run.to_string()),
                        ..Touched::default()
                    },
                ))
            })
            .await;
    }

    /// Stop the jobs of a project being deleted (their units are aborted; nothing is saved).
    pub(super) fn forget_jobs(&self, project: &str) {
        for rt in self.jobs.forget_project(project) {
            rt.cancelled.set(true);
            for abort in rt.aborts.borrow().values() {
                abort.abort();
            }
            rt.notify.notify_all();
        }
    }

    /// Serve `job_status`.
    pub(super) async fn job_status(&self, p: JobRef) -> Result<JobView, Error> {
        if let Ok(rt) = self.job_rt(&p.job) {
            let view = rt.job.borrow().view(true);
            return Ok(view);
        }
        Ok(self.stored_job(&p.job).await?.view(true))
    }

    async fn stored_job(&self, job: &str) -> Result<Job, Error> {
        let project = self.current()?;
        let record = self
            .env
            .store
            .get(Table::Meta, &job_key(&project, job))
            .await?
            .ok_or_else(|| no_job(job))?;
        serde_json::from_value(record["job"].clone())
            .map_err(|e| invalid("job", &format!("the stored job cannot be read: {e}")))
    }

    /// Serve `list_jobs`: the project's jobs, newest first.
    pub(super) async fn list_jobs(&self) -> Result<JobList, Error> {
        let project = self.current()?;
        let mut jobs: std::collections::BTreeMap<String, Job> = std::collections::BTreeMap::new();
        for record in self
            .env
            .store
            .get_by_index(Table::Meta, "project", json!(project))
            .await?
            .into_iter()
            .filter(|r| r["kind"] == "job")
        {
            if let Ok(job) = serde_json::from_value::<Job>(record["job"].clone()) {
                jobs.insert(job.id.clone(), job);
            }
        }
        for rt in self.jobs.of_project(&project) {
            let job = rt.job.borrow();
            jobs.insert(job.id.clone(), job.clone());
        }
        let mut list: Vec<Job> = Vec::with_capacity(jobs.len());
        for (_, job) in jobs {
            list.push(job);
        }
        list.sort_by(|a, b| b.created_ms.cmp(&a.created_ms).then(b.id.cmp(&a.id)));
        let mut views = Vec::with_capacity(list.len());
        for job in &list {
            views.push(job.view(false));
        }
        Ok(JobList { jobs: views })
    }

    /// Serve `pause_job`: no new unit starts; running units finish.
    pub(super) async fn pause_job(&self, p: JobRef) -> Result<JobView, Error> {
        let rt = self.job_rt(&p.job)?;
        rt.paused.set(true);
        rt.notify.notify_all();
        let view = rt.job.borrow().view(false);
        Ok(view)
    }

    /// Serve `resume_job`.
    pub(super) async fn resume_job(&self, p: JobRef) -> Result<JobView, Error> {
        let rt = self.job_rt(&p.job)?;
        rt.paused.set(false);
        rt.notify.notify_all();
        let view = rt.job.borrow().view(false);
        Ok(view)
    }

    /// Serve `cancel_job`: running units are aborted (what they wrote stays, and is saved),
    /// waiting ones are no longer asked, queued ones never start.
    pub(super) async fn cancel_job(&self, p: JobRef) -> Result<JobView, Error> {
        let rt = match self.job_rt(&p.job) {
            Ok(rt) => rt,
            Err(e) => {
                // A job this core does not run: cancel its record if it is unfinished.
                let mut job = self.stored_job(&p.job).await.map_err(|_| e)?;
                if !job.state.settled() {
                    job.state = State::Cancelled;
                    for u in job.units.iter_mut().filter(|u| !u.state.settled()) {
                        u.state = State::Cancelled;
                    }
                    self.save_job(&job, None, Vec::new()).await;
                }
                return Ok(job.view(false));
            }
        };
        rt.cancelled.set(true);
        for abort in rt.aborts.borrow().values() {
            abort.abort();
        }
        let waiting: Vec<(String, String)> = {
            let mut job = rt.job.borrow_mut();
            for u in job.units.iter_mut().filter(|u| u.state == State::Queued) {
                u.state = State::Cancelled;
            }
            let mut waiting = Vec::new();
            for u in &job.units {
                if u.state == State::WaitingApproval {
                    waiting.push((u.id.clone(), u.run.clone()));
                }
            }
            waiting
        };
        for (unit, run) in waiting {
            self.abort_paused(&run).await?;
            self.set_unit(&rt, &unit, State::Cancelled, None, None);
        }
        rt.notify.notify_all();
        let view = rt.job.borrow().view(false);
        Ok(view)
    }

    /// Serve `job_unit`: a unit and its transcript.
    pub(super) async fn job_unit(&self, p: UnitRef) -> Result<UnitDetail, Error> {
        let project = self.current()?;
        let job = match self.job_rt(&p.job) {
            Ok(rt) => rt.job.borrow().clone(),
            Err(_) => self.stored_job(&p.job).await?,
        };
        let unit = job.unit(&p.unit).cloned().ok_or_else(|| {
            invalid(
                "job_unit",
                &format!(
                    "job '{}' has no unit '{}'",
                    p.job,
                    p.unit.chars().take(120).collect::<String>()
                ),
            )
        })?;
        let store = &self.env.store;
        let transcript = match store
            .get(Table::Meta, &transcript_key(&project, &job.id, &unit.id))
            .await?
        {
            Some(record) => record["messages"].clone(),
            None => match store
                .get(
                    Table::Meta,
                    &super::run_state::paused_key(&project, &unit.run),
                )
                .await?
                .and_then(|r| serde_json::from_value::<PausedRunRecord>(r).ok()?.paused)
            {
                Some(paused) => json!(transcript_view(&paused.root.messages)),
                None => json!([]),
            },
        };
        Ok(UnitDetail {
            unit: unit.view(),
            transcript,
        })
    }
}

/// A run's messages as the page shows them (the system prompt left out).
fn transcript_view(messages: &[Message]) -> Vec<TranscriptMessage> {
    let mut views = Vec::with_capacity(messages.len());
    for m in messages {
        let role = match m.role {
            Role::System => continue,
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        };
        let mut calls = Vec::with_capacity(m.tool_calls.len());
        for c in &m.tool_calls {
            calls.push(TranscriptToolCall {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            });
        }
        views.push(TranscriptMessage {
            role,
            text: (!m.text.is_empty()).then(|| m.text.clone()),
            tool_calls: (!calls.is_empty()).then_some(calls),
            tool_call_id: m.tool_call_id.clone(),
            name: m.name.clone(),
        });
    }
    views
}

/// `job_progress`: a job's or one of its units' state changed.
#[derive(Serialize, TS)]
#[ts(optional_fields)]
pub(super) struct JobProgressEvent {
    /// The project.
    pub(super) project: String,
    /// The job (without its units).
    pub(super) job: JobView,
    /// The unit that changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) unit: Option<UnitView>,
    /// True when a new worker took up an unfinished job of the project it opened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) resumed: Option<bool>,
}

/// `job_finished`: a job ended.
#[derive(Serialize, TS)]
pub(super) struct JobFinishedEvent {
    /// The project.
    pub(super) project: String,
    /// The job (without its units).
    pub(super) job: JobView,
}
