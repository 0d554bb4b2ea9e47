//! Proactive memory, served by the [`Core`]: the bedside note kept up to date, watched
//! entities monitored after every edit, the idle thinker, and the suggestions the writer
//! accepts or dismisses.
//!
//! - **The bedside note evolves** after each run (chat runs and job units, at the end of
//!   `drive`) and after each `run_analysis`: its status section ([`bedside::status`]: active
//!   goals, their progress, the latest figures of each analysis section) is rewritten below
//!   the agents' plan, and the earlier text is kept as a version. Nothing changes (no new
//!   version) when the status is the same. With `bedsidePlan: true` and a model configured,
//!   a short plan written by the model is added: one nested call with
//!   [`bedside::PLAN_SYSTEM`], made at the end of a chat run or after a `run_analysis` the
//!   page asked for (never in job units, and never when the status did not change); if it
//!   fails, the status alone is written.
//! - **Watched entities are monitored** after every edit: the writer's typing
//!   (`apply_user_change`) and every tool call that edits (agents, jobs, the page's
//!   `execute`), and undo and redo. [`Monitor::scan`] reads only the changed regions' lines,
//!   and where an edit took text away [`Monitor::scan_removed`] compares the lines before and
//!   after it (a watched name removed or changed). A tool call that changes a watched
//!   character's or location's story-bible entry (an agent's, not the writer's) is an
//!   `entry_changed` finding naming the fields. Each finding writes
//!   (or updates) one observation note (author `agent:monitor`, tagged `monitor`, its kind and
//!   a key tag, so the same finding never makes a second note) and one pending suggestion
//!   (updated in place while pending; not raised again once dismissed), announced with a
//!   `suggestion` event that names the chapter and the line.
//! - **The idle thinker** runs on `writer_idle` (the page sends it when the writer stopped
//!   typing): only when `idleThinking.enabled`, a model is configured, the core saw no typing
//!   in the project for `idleThinking.afterMs` (by its own clock), the day's budget
//!   (`maxCallsPerDay`, across projects, counted by the clock's UTC day and stored) is not
//!   spent, and something changed since its last thought. It makes one model call
//!   ([`THINKER_SYSTEM`]) and keeps up to three proposals as pending suggestions.
//! - **Suggestions** are `meta` records (`suggestion:<project>:<id>`, kind `suggestion`),
//!   loaded when the project opens. `suggestions {all?}` lists them (pending only unless
//!   `all`), `accept_suggestion {id}` makes a pending one a goal or a note (the writer's), and
//!   `dismiss_suggestion {id}` sets it aside. At most [`MAX_PENDING`] wait at once (the
//!   monitor then still writes its notes), and only the newest [`MAX_SETTLED`] decided ones
//!   are kept.

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::json;
use serde_json::Value;
use ts_rs::TS;

use super::generate::NestedError;
use super::memory::MemoryChangedEvent;
use super::records::{AnalysisRecord, MetaRecord, SuggestionRecord};
use super::{Core, On, Touched};
use crate::commands::history::Applied;
use crate::commands::Origin;
use crate::error::Error;
use crate::memory::bedside::{self, AnalysisFigures};
use crate::memory::monitor::{changed_regions, Finding, FindingKind, Monitor, LINE_TEXT_CHARS};
use crate::memory::suggest::{
    parse_proposals, same_title, thinker_prompt, EntityRef, Suggestion, SuggestionKind,
    SuggestionSource, SuggestionState, ThinkerInput, THINKER_SYSTEM,
};
use crate::memory::{
    Changed, Goal, GoalStatus, MemoryError, MemoryNote, NewGoal, NewNote, NotePatch, NoteType,
    Priority,
};
use crate::persist::GLOBAL_PROJECT;
use crate::project::changeset::{ChangeSet, Op};
use crate::session::Session;
use crate::store::{Batch, Table};
use crate::tools::ToolError;

/// Most suggestions pending at once per project.
pub const MAX_PENDING: usize = 50;
/// Most decided suggestions kept per project (the oldest go first).
pub const MAX_SETTLED: usize = 100;
/// The agent name of the monitor's notes (`agent:monitor`).
pub const MONITOR_AGENT: &str = "monitor";
/// The most tokens of the thinker's answer.
const THINKER_MAX_TOKENS: u32 = 600;
/// The most tokens of the bedside plan.
const PLAN_MAX_TOKENS: u32 = 300;
/// A day, in ms (the thinker's budget is per UTC day of the clock).
const DAY_MS: u64 = 86_400_000;
/// The key of the thinker's budget record.
const BUDGET_KEY: &str = "thinker";

/// What the core keeps of proactive memory, for every open project.
#[derive(Default)]
pub(super) struct Proactive {
    projects: std::collections::BTreeMap<String, ProjectState>,
    /// The thinker's calls today (loaded once).
    budget: Option<Budget>,
    /// The monitor of the last project edited, with the fingerprint of what it was built from.
    monitor: Option<(String, u64, Rc<Monitor>)>,
}

#[derive(Default)]
struct ProjectState {
    loaded: bool,
    suggestions: Vec<Suggestion>,
    /// By section (four at most).
    analyses: std::collections::BTreeMap<String, AnalysisFigures>,
    /// When the writer last typed in the project (by the core's clock).
    last_edit_ms: u64,
    /// The fingerprint of the thinker's last prompt.
    last_thought: Option<u64>,
    thinking: bool,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct Budget {
    day: u64,
    calls: u32,
}

/// `accept_suggestion` and `dismiss_suggestion` params.
#[derive(Deserialize, TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "SuggestionRefParams", optional_fields)]
pub(super) struct SuggestionRef {
    id: String,
}

/// `suggestions` params.
#[derive(Deserialize, Default, TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "SuggestionsParams", optional_fields)]
pub(super) struct ListSuggestions {
    /// Also the accepted and dismissed ones.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    all: bool,
}

/// `suggestions`: the open project's suggestions, newest first.
#[derive(Serialize, TS)]
#[ts(rename = "SuggestionList")]
pub(super) struct SuggestionList {
    /// The project.
    project: String,
    /// Its suggestions.
    suggestions: Vec<Suggestion>,
}

/// `accept_suggestion`: the suggestion as it is now and what accepting it made.
#[derive(Serialize, TS)]
#[ts(rename = "SuggestionAccepted", optional_fields)]
pub(super) struct Accepted {
    /// The suggestion, accepted.
    suggestion: Suggestion,
    /// The goal it became.
    #[serde(skip_serializing_if = "Option::is_none")]
    goal: Option<Goal>,
    /// The note it became.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<MemoryNote>,
}

/// `dismiss_suggestion`: the suggestion as it is now.
#[derive(Serialize, TS)]
#[ts(rename = "SuggestionDismissed")]
pub(super) struct Dismissed {
    /// The suggestion, dismissed.
    suggestion: Suggestion,
}

/// `writer_idle`: what the idle thinker did.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "IdleResult", optional_fields)]
pub(super) struct IdleResult {
    /// Whether it thought (called the model).
    thought: bool,
    /// Why it did not think.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<IdleReason>,
    /// With `not_idle`: how much longer the core waits for quiet, in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    wait_ms: Option<u64>,
    /// With `failed`: what went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    /// The suggestions it added.
    suggestions: Vec<Suggestion>,
    /// The thinker's model calls today, across projects.
    calls_today: u32,
    /// The most it may make a day.
    max_calls_per_day: u32,
}

/// Why the idle thinker did not think.
#[derive(Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub(super) enum IdleReason {
    /// It is turned off.
    Disabled,
    /// No model is configured.
    NoModel,
    /// The writer typed too recently.
    NotIdle,
    /// Today's calls are spent.
    BudgetSpent,
    /// Nothing changed since it last thought.
    NothingNew,
    /// It is thinking already.
    Busy,
    /// The call or its answer failed.
    Failed,
}

/// `writer_idle` params.
#[derive(Deserialize, Default, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "WriterIdleParams", optional_fields)]
pub(super) struct WriterIdle {
    /// How long the page saw no typing (informative: the core checks with its own clock).
    #[serde(default)]
    #[allow(dead_code)]
    idle_ms: Option<u64>,
}

/// FNV-1a: a stable hash for keys and fingerprints (stored in tags, so it must not change).
fn fnv(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

fn suggestion_key(project: &str, id: &str) -> String {
    format!("suggestion:{project}:{id}")
}

fn suggestion_record(s: &Suggestion) -> MetaRecord {
    MetaRecord::Suggestion(SuggestionRecord {
        id: suggestion_key(&s.project, &s.id),
        project: s.project.clone(),
        state: s.state,
        suggestion: s.clone(),
    })
}

fn analysis_record(
    project: &str,
    analyses: &std::collections::BTreeMap<String, AnalysisFigures>,
) -> MetaRecord {
    MetaRecord::Analysis(AnalysisRecord {
        id: format!("analysis:{project}"),
        project: project.to_string(),
        analyses: analyses.values().cloned().collect(),
    })
}

fn budget_record(budget: Budget) -> Value {
    json!({
        "id": BUDGET_KEY,
        "project": GLOBAL_PROJECT,
        "kind": "thinker",
        "day": budget.day,
        "calls": budget.calls,
    })
}

impl Core {
    /// Read a project's suggestions and analysis figures from the store, once.
    pub(super) async fn ensure_proactive(&self, project: &str) -> Result<(), Error> {
        if self
            .proactive
            .state()
            .projects
            .get(project)
            .is_some_and(|p| p.loaded)
        {
            return Ok(());
        }
        let records = self
            .env
            .store
            .get_by_index(Table::Meta, "project", json!(project))
            .await?;
        self.load_proactive(project, &records);
        Ok(())
    }

    /// Load a project's suggestions and analysis figures from its `meta` records (once: what
    /// this core made before the load wins).
    pub(super) fn load_proactive(&self, project: &str, records: &[Value]) {
        let mut proactive = self.proactive.state_mut();
        let state = proactive.projects.entry(project.to_string()).or_default();
        if state.loaded {
            return;
        }
        for record in records {
            match record["kind"].as_str() {
                Some("suggestion") => {
                    if let Ok(s) =
                        serde_json::from_value::<Suggestion>(record["suggestion"].clone())
                    {
                        // What this core made before the load wins.
                        if !state.suggestions.iter().any(|k| k.id == s.id) {
                            state.suggestions.push(s);
                        }
                    }
                }
                Some("analysis") => {
                    let list: Vec<AnalysisFigures> =
                        serde_json::from_value(record["analyses"].clone()).unwrap_or_default();
                    for figures in list {
                        state
                            .analyses
                            .entry(figures.section.clone())
                            .or_insert(figures);
                    }
                }
                _ => {}
            }
        }
        state.suggestions.sort_by_key(|s| s.created_ms);
        state.loaded = true;
    }

    /// Forget a deleted project's proactive state (its records go with the project).
    pub(super) fn forget_proactive(&self, project: &str) {
        let mut proactive = self.proactive.state_mut();
        proactive.projects.remove(project);
        if proactive
            .monitor
            .as_ref()
            .is_some_and(|(p, _, _)| p == project)
        {
            proactive.monitor = None;
        }
    }

    /// A project just created or imported has nothing stored yet.
    pub(super) fn fresh_proactive(&self, project: &str) {
        self.proactive
            .state_mut()
            .projects
            .entry(project.to_string())
            .or_default()
            .loaded = true;
    }

    /// The writer typed in `project` now (the idle thinker waits for quiet).
    pub(super) fn writer_typed(&self, project: &str) {
        let now = self.env.clock.now_ms();
        self.proactive
            .state_mut()
            .projects
            .entry(project.to_string())
            .or_default()
            .last_edit_ms = now;
    }

    // ---------------------------------------------------------------- the monitor

    /// The monitor of `s`'s project (rebuilt when its watch list or the bible's names
    /// changed), or `None` when nothing is watched.
    fn monitor_for(&self, s: &Session) -> Option<Rc<Monitor>> {
        let project = s.project.id.as_str();
        let watched: Vec<_> = s.memory.project_watched(project).collect();
        if watched.is_empty() {
            return None;
        }
        // Keyed by the watch list and the bible's version counter (every change of the bible
        // moves it), so a keystroke does not walk every name of the bible.
        let bible_version = s.bible.last_version().to_string();
        let mut parts: Vec<&str> = vec![project, &bible_version];
        for w in &watched {
            parts.extend([
                w.id.as_str(),
                w.name.as_str(),
                w.entity_type.as_str(),
                w.priority.as_str(),
            ]);
        }
        let fingerprint = fnv(&parts);
        let mut proactive = self.proactive.state_mut();
        if let Some((p, f, monitor)) = &proactive.monitor {
            if p == project && *f == fingerprint {
                return Some(Rc::clone(monitor));
            }
        }
        let mut known: Vec<String> = Vec::new();
        for kind in [crate::bible::Kind::Character, crate::bible::Kind::Location] {
            for entity in s.bible.list(kind) {
                known.extend(crate::bible::mentions::names_of(entity));
            }
        }
        let monitor = Rc::new(Monitor::new(watched, &known));
        proactive.monitor = Some((project.to_string(), fingerprint, Rc::clone(&monitor)));
        Some(monitor)
    }

    /// Look at what `edits` did to the watched entities of `s`'s project (inside the edit's
    /// mutation): notes and suggestion records go into `touched`, `suggestion` events out.
    /// `caret` is where the writer's typing ended (`None` for a tool's edits).
    pub(super) fn monitor_edits(
        &self,
        s: &mut Session,
        edits: &[Applied],
        caret: Option<usize>,
        touched: &mut Touched,
    ) {
        if edits.is_empty() {
            return;
        }
        let Some(monitor) = self.monitor_for(s) else {
            return;
        };
        // One net change per chapter, in the chapter's current text, and its inverse (what the
        // edits took away, in the text before them).
        let mut by_chapter: Vec<(String, ChangeSet, Option<ChangeSet>)> = Vec::new();
        for edit in edits {
            match by_chapter.iter_mut().find(|(c, _, _)| *c == edit.chapter) {
                Some((_, change, inverse)) => {
                    *change = change
                        .compose(&edit.change)
                        .unwrap_or_else(|_| edit.change.clone());
                    *inverse = inverse
                        .as_ref()
                        .and_then(|inverse| edit.inverse.compose(inverse).ok());
                }
                None => by_chapter.push((
                    edit.chapter.clone(),
                    edit.change.clone(),
                    Some(edit.inverse.clone()),
                )),
            }
        }
        for (chapter, change, inverse) in by_chapter {
            let Some(text) = s.project.chapter(&chapter).map(|c| c.text()) else {
                continue;
            };
            let regions = changed_regions(&change);
            let mut findings = monitor.scan(text, &regions, caret);
            // Mentions the edits removed or altered: only when they took text away.
            let took = |c: &ChangeSet| c.ops().iter().any(|op| matches!(op, Op::Insert(_)));
            if let Some(inverse) = inverse.filter(|inverse| took(inverse)) {
                // The clone shares the text's chunks but those the inverse touches.
                let mut old = text.clone();
                if inverse.apply(&mut old).is_ok() {
                    let removed = changed_regions(&inverse);
                    findings.extend(monitor.scan_removed(&old, &removed, text, &regions, caret));
                }
            }
            for finding in findings {
                self.keep_finding(s, Some(&chapter), &finding, touched);
            }
        }
    }

    /// Look at what a tool call did to the story-bible entries of watched characters and
    /// locations (`changed`: the entities it created, updated or deleted): each one an
    /// agent or a job changed gets an [`FindingKind::EntryChanged`] finding naming the
    /// fields it changed and their new values. The writer's own changes are not reported.
    pub(super) fn monitor_bible(
        &self,
        s: &mut Session,
        changed: &[(crate::bible::Kind, String)],
        origin: &Origin,
        touched: &mut Touched,
    ) {
        use crate::bible::Kind;
        use crate::memory::EntityType;
        if changed.is_empty() || *origin == Origin::User {
            return;
        }
        let Some(monitor) = self.monitor_for(s) else {
            return;
        };
        let mut findings = Vec::new();
        for (kind, id) in changed {
            let entity_type = match kind {
                Kind::Character => EntityType::Character,
                Kind::Location => EntityType::Location,
                _ => continue,
            };
            let (names, word, summary) = match s.bible.get(*kind, id) {
                Some(entity) => {
                    let fields: Vec<&String> = entity
                        .stamps
                        .iter()
                        .filter(|(_, stamp)| stamp.version == entity.version)
                        .map(|(field, _)| field)
                        .collect();
                    let summary: Vec<String> = fields
                        .iter()
                        .map(|f| {
                            let value = match entity.get(f) {
                                serde_json::Value::String(t) => t.clone(),
                                serde_json::Value::Null => "(empty)".to_string(),
                                v => v.to_string(),
                            };
                            format!("{f}: {value}")
                        })
                        .collect();
                    let word = if fields.is_empty() {
                        "its entry".to_string()
                    } else {
                        fields
                            .iter()
                            .map(|f| f.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    (
                        crate::bible::mentions::names_of(entity),
                        word,
                        summary.join("; "),
                    )
                }
                None => (
                    Vec::new(),
                    "deleted".to_string(),
                    format!("the entry {id} was deleted"),
                ),
            };
            let summary: String = if summary.chars().count() > LINE_TEXT_CHARS {
                let cut: String = summary.chars().take(LINE_TEXT_CHARS).collect();
                format!("{cut}…")
            } else {
                summary
            };
            for (entity_id, entity_name) in monitor.watching(entity_type, id, &names) {
                findings.push(Finding {
                    kind: FindingKind::EntryChanged,
                    entity_id,
                    entity_name,
                    entity_type,
                    word: word.clone(),
                    cue: None,
                    line: 0,
                    line_text: summary.clone(),
                    at: 0,
                });
            }
        }
        for finding in findings {
            self.keep_finding(s, None, &finding, touched);
        }
    }

    /// One finding: its observation note and its suggestion.
    fn keep_finding(
        &self,
        s: &mut Session,
        chapter: Option<&str>,
        finding: &Finding,
        touched: &mut Touched,
    ) {
        let project = s.project.id.clone();
        let key = finding.key(chapter.unwrap_or(""));
        let dismissed = self
            .proactive
            .state()
            .projects
            .get(&project)
            .is_some_and(|p| {
                p.suggestions.iter().any(|x| {
                    x.key.as_deref() == Some(key.as_str()) && x.state == SuggestionState::Dismissed
                })
            });
        if dismissed {
            return;
        }
        let now = self.env.clock.now_ms();
        let (number, chapter_title) = match chapter.and_then(|c| s.project.chapter_index(c)) {
            Some(i) => (i + 1, s.project.chapters[i].title.clone()),
            None => (0, String::new()),
        };
        let place = match chapter {
            Some(_) => format!("chapter {number} (“{chapter_title}”)"),
            None => "the story bible".to_string(),
        };
        let description = finding.describe(&place);
        let reason = s
            .memory
            .watched_entity(&finding.entity_id)
            .map(|w| w.reason.clone())
            .unwrap_or_default();
        let priority = s
            .memory
            .watched_entity(&finding.entity_id)
            .map_or(Priority::Medium, |w| w.priority);
        // The observation note: one per finding key.
        let tag = format!("monitor-{:016x}", fnv(&[&project, &key]));
        let existing = s
            .memory
            .notes
            .iter()
            .find(|n| n.project.as_deref() == Some(project.as_str()) && n.tags.contains(&tag))
            .map(|n| {
                let ours = n.author == Origin::Agent(MONITOR_AGENT.into());
                (n.id.clone(), n.is_deleted(), n.text == description || !ours)
            });
        let observation = match existing {
            // The writer deleted it: they do not want it back.
            Some((_, true, _)) => None,
            // The same text, or a note the writer has made theirs (left as they wrote it).
            Some((id, false, keep)) => {
                if !keep {
                    let patch = NotePatch {
                        text: Some(description.clone()),
                        ..NotePatch::default()
                    };
                    if s.memory.update_note(&id, patch, now).is_ok() {
                        touched.notes_written.push(id.clone());
                    }
                }
                Some(id)
            }
            None => {
                let note = NewNote {
                    text: description.clone(),
                    note_type: NoteType::Observation,
                    scope: crate::memory::Scope::Project,
                    tags: vec!["monitor".into(), finding.kind.as_str().into(), tag.clone()],
                    importance: Some(match (finding.kind, priority) {
                        (FindingKind::Mention, Priority::High) => 3,
                        (FindingKind::Mention, _) => 2,
                        _ => 4,
                    }),
                };
                match s.memory.write_note_as(
                    &project,
                    note,
                    Origin::Agent(MONITOR_AGENT.into()),
                    now,
                    self.env.ids.as_ref(),
                ) {
                    Ok(n) => {
                        let id = n.id.clone();
                        touched.notes_written.push(id.clone());
                        Some(id)
                    }
                    Err(_) => None,
                }
            }
        };
        if observation.is_some() {
            self.emit(MemoryChangedEvent {
                project: project.to_string(),
                monitor: Some(finding.kind.as_str().to_string()),
                ..MemoryChangedEvent::default()
            });
        }
        // The suggestion: one pending per key.
        let watched_because = if reason.is_empty() {
            description.clone()
        } else {
            format!("{description} Watched because: {reason}")
        };
        let (title, text, note_type) = match finding.kind {
            FindingKind::Mention => (
                format!(
                    "Check {} in chapter {number}, line {}",
                    finding.entity_name, finding.line
                ),
                watched_because.clone(),
                NoteType::Plan,
            ),
            FindingKind::Misspelling => (
                format!(
                    "“{}” may be a misspelling of {}",
                    finding.word, finding.entity_name
                ),
                description.clone(),
                NoteType::Issue,
            ),
            FindingKind::Contradiction => (
                format!(
                    "The rule “{}” may be contradicted in chapter {number}",
                    finding.entity_name
                ),
                if reason.is_empty() {
                    description.clone()
                } else {
                    format!("{description} The rule: {reason}")
                },
                NoteType::Issue,
            ),
            FindingKind::Changed => (
                format!(
                    "Check the change to {} in chapter {number}, line {}",
                    finding.entity_name, finding.line
                ),
                watched_because.clone(),
                NoteType::Plan,
            ),
            FindingKind::EntryChanged => (
                format!("Check the new story-bible entry of {}", finding.entity_name),
                watched_because.clone(),
                NoteType::Plan,
            ),
        };
        let in_chapter = chapter.is_some();
        let mut proactive = self.proactive.state_mut();
        let state = proactive.projects.entry(project.clone()).or_default();
        let pending = state.suggestions.iter().filter(|x| x.is_pending()).count();
        let at = state
            .suggestions
            .iter()
            .position(|x| x.is_pending() && x.key.as_deref() == Some(key.as_str()));
        let (action, suggestion) = match at {
            Some(i) => {
                let x = &mut state.suggestions[i];
                x.title = title;
                x.text = text;
                x.chapter = chapter.map(str::to_string);
                x.chapter_number = in_chapter.then_some(number);
                x.chapter_title = in_chapter.then_some(chapter_title);
                x.line = in_chapter.then_some(finding.line);
                x.line_text = Some(finding.line_text.clone());
                x.word = Some(finding.word.clone());
                x.observation = observation;
                x.updated_ms = now;
                (SuggestionAction::Updated, x.clone())
            }
            None if pending >= MAX_PENDING => return,
            None => {
                let x = Suggestion {
                    id: self.env.ids.next_id(),
                    project: project.clone(),
                    source: SuggestionSource::Monitor,
                    kind: SuggestionKind::Note,
                    title,
                    text,
                    note_type: Some(note_type),
                    key: Some(key),
                    finding: Some(finding.kind.as_str().into()),
                    entity: Some(EntityRef {
                        id: finding.entity_id.clone(),
                        name: finding.entity_name.clone(),
                        entity_type: finding.entity_type.as_str().into(),
                    }),
                    chapter: chapter.map(str::to_string),
                    chapter_number: in_chapter.then_some(number),
                    chapter_title: in_chapter.then_some(chapter_title),
                    line: in_chapter.then_some(finding.line),
                    line_text: Some(finding.line_text.clone()),
                    word: Some(finding.word.clone()),
                    observation,
                    state: SuggestionState::Pending,
                    created_ms: now,
                    updated_ms: now,
                    decided_ms: None,
                    accepted_as: None,
                };
                state.suggestions.push(x.clone());
                (SuggestionAction::Added, x)
            }
        };
        drop(proactive);
        touched.meta_puts.push(suggestion_record(&suggestion));
        self.emit(SuggestionEvent {
            project: project.to_string(),
            action,
            suggestion,
        });
    }

    // ---------------------------------------------------------------- the bedside note

    /// Bring the bedside note's status up to date in `project` (after a run, or after an
    /// analysis with its `figures`), under a job unit's `hold` if any. `plan_allowed`: the
    /// model may be asked for the plan (the end of a chat run, a page's analysis). Failures
    /// are quiet: the bedside note is a convenience, never a reason for a run to fail.
    pub(super) async fn evolve_bedside_auto(
        &self,
        project: &str,
        hold: Option<&str>,
        plan_allowed: bool,
        figures: Option<AnalysisFigures>,
    ) {
        self.evolve_bedside_with(project, hold, plan_allowed, figures, None)
            .await;
    }

    /// [`Core::evolve_bedside_auto`], and with `idle` the idle thinker's new section of
    /// the note ([`bedside::idle_section`]; `None` keeps the one it has).
    async fn evolve_bedside_with(
        &self,
        project: &str,
        hold: Option<&str>,
        plan_allowed: bool,
        figures: Option<AnalysisFigures>,
        idle: Option<String>,
    ) {
        if self.ensure_proactive(project).await.is_err() {
            return;
        }
        let mut meta_puts = Vec::new();
        if let Some(figures) = figures {
            let mut proactive = self.proactive.state_mut();
            let state = proactive.projects.entry(project.to_string()).or_default();
            let changed = state
                .analyses
                .get(&figures.section)
                .is_none_or(|old| old.headline != figures.headline || old.scope != figures.scope);
            state.analyses.insert(figures.section.clone(), figures);
            if changed {
                meta_puts.push(analysis_record(project, &state.analyses));
            }
        }
        let analyses: Vec<AnalysisFigures> = self
            .proactive
            .state()
            .projects
            .get(project)
            .map(|p| p.analyses.values().cloned().collect())
            .unwrap_or_default();
        let Ok((name, parts, status, idle_now)) = self.with_project(project, |s| {
            let text = s
                .memory
                .bedside(project)
                .map(|n| n.text.clone())
                .unwrap_or_default();
            let (text, idle_now) = bedside::split_idle(&text);
            Ok((
                s.project.name.clone(),
                bedside::split(text),
                bedside::status(&s.memory, project, &analyses),
                idle_now.map(str::to_string),
            ))
        }) else {
            return;
        };
        let wants_plan = self.settings.read(|s| s.bedside_plan);
        let unchanged = parts.status.as_deref().unwrap_or("") == status
            && (wants_plan || parts.model_plan.is_none())
            && idle
                .as_ref()
                .is_none_or(|new| Some(new) == idle_now.as_ref());
        if unchanged && meta_puts.is_empty() {
            return;
        }
        let model_plan = if !wants_plan || status.is_empty() {
            None
        } else if unchanged || !plan_allowed || !self.model_configured() {
            parts.model_plan.clone()
        } else {
            let prompt = bedside::plan_prompt(&name, &parts.plan, &status);
            match self
                .nested_text(bedside::PLAN_SYSTEM, &prompt, PLAN_MAX_TOKENS, None)
                .await
            {
                Ok(text) if !text.trim().is_empty() => Some(text.trim().to_string()),
                _ => None,
            }
        };
        let now = self.env.clock.now_ms();
        let _ = self
            .mutate_on(On::project(project).held(hold), |s| {
                // The agents' plan as it is now (a run may have rewritten it meanwhile).
                let current = s
                    .memory
                    .bedside(project)
                    .map(|n| n.text.clone())
                    .unwrap_or_default();
                let (rest, idle_now) = bedside::split_idle(&current);
                let plan = bedside::split(rest).plan;
                let text = bedside::with_idle(
                    &bedside::compose(&plan, &status, model_plan.as_deref()),
                    idle.as_deref().or(idle_now),
                );
                let mut notes_written = Vec::new();
                if text != current {
                    let note =
                        s.memory
                            .evolve_bedside(project, &text, now, self.env.ids.as_ref())?;
                    notes_written.push(note.id.clone());
                    self.emit(MemoryChangedEvent {
                        project: project.to_string(),
                        bedside: Some(true),
                        ..MemoryChangedEvent::default()
                    });
                }
                Ok((
                    (),
                    Touched {
                        notes_written,
                        meta_puts,
                        ..Touched::default()
                    },
                ))
            })
            .await;
    }

    // ---------------------------------------------------------------- requests

    /// Serve `suggestions {all?}`: the open project's pending suggestions, newest first (with
    /// `all`, the decided ones too).
    pub(super) async fn list_suggestions(
        &self,
        p: ListSuggestions,
    ) -> Result<SuggestionList, Error> {
        let project = self.current()?;
        self.ensure_proactive(&project).await?;
        let proactive = self.proactive.state();
        let suggestions: Vec<Suggestion> = proactive
            .projects
            .get(&project)
            .map(|state| {
                state
                    .suggestions
                    .iter()
                    .rev()
                    .filter(|s| p.all || s.is_pending())
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        Ok(SuggestionList {
            project,
            suggestions,
        })
    }

    /// The open project's suggestion `id` (pending), or an error saying what would work.
    fn pending_suggestion(&self, project: &str, id: &str) -> Result<Suggestion, Error> {
        let proactive = self.proactive.state();
        let found = proactive
            .projects
            .get(project)
            .and_then(|state| state.suggestions.iter().find(|s| s.id == id));
        match found {
            None => Err(MemoryError::NotFound {
                kind: "suggestion",
                id: id.chars().take(80).collect(),
                hint: " in this project; `suggestions` lists the pending ones".into(),
            }
            .into()),
            Some(s) if !s.is_pending() => Err(ToolError::new(
                "already_decided",
                format!(
                    "suggestion '{}' was already {}; nothing was changed",
                    s.id,
                    match s.state {
                        SuggestionState::Accepted => "accepted",
                        _ => "dismissed",
                    }
                ),
            )
            .into()),
            Some(s) => Ok(s.clone()),
        }
    }

    /// Serve `accept_suggestion {id}`: a pending suggestion becomes a goal (its title, with
    /// the text as description) or a note (its text and note type; the writer's), in one
    /// save with the suggestion's new state.
    pub(super) async fn accept_suggestion(&self, p: SuggestionRef) -> Result<Accepted, Error> {
        let project = self.current()?;
        self.ensure_proactive(&project).await?;
        let suggestion = self.pending_suggestion(&project, &p.id)?;
        let now = self.env.clock.now_ms();
        let result = self
            .mutate(|s| {
                let ids = self.env.ids.as_ref();
                let (changed, made, goal, note) = match suggestion.kind {
                    SuggestionKind::Goal => {
                        let goal = s.memory.create_goal(
                            &project,
                            NewGoal {
                                title: suggestion.title.clone(),
                                description: (suggestion.text != suggestion.title)
                                    .then(|| suggestion.text.clone()),
                                status: Some(GoalStatus::Active),
                                progress: None,
                            },
                            now,
                            ids,
                        )?;
                        (
                            Changed::Goal(goal.id.clone()),
                            json!({ "goal": goal.id }),
                            Some(goal.clone()),
                            None,
                        )
                    }
                    SuggestionKind::Note => {
                        let mut tags = vec!["suggestion".to_string()];
                        if let Some(entity) = &suggestion.entity {
                            if entity.name.chars().count() <= 64 {
                                tags.push(entity.name.clone());
                            }
                        }
                        let note = s.memory.write_note_as(
                            &project,
                            NewNote {
                                text: suggestion.text.clone(),
                                note_type: suggestion.note_type.unwrap_or(NoteType::Plan),
                                scope: crate::memory::Scope::Project,
                                tags,
                                importance: None,
                            },
                            Origin::User,
                            now,
                            ids,
                        )?;
                        (
                            Changed::Note(note.id.clone()),
                            json!({ "note": note.id }),
                            None,
                            Some(note.clone()),
                        )
                    }
                };
                let decided = self.decide(
                    &project,
                    &suggestion.id,
                    SuggestionState::Accepted,
                    Some(made),
                    now,
                )?;
                self.emit(SuggestionEvent {
                    project: project.to_string(),
                    action: SuggestionAction::Accepted,
                    suggestion: decided.clone(),
                });
                self.emit(MemoryChangedEvent {
                    project: project.to_string(),
                    suggestion: Some(decided.id.clone()),
                    ..MemoryChangedEvent::default()
                });
                Ok((
                    Accepted {
                        suggestion: decided.clone(),
                        goal,
                        note,
                    },
                    Touched {
                        memory: vec![changed],
                        meta_puts: vec![suggestion_record(&decided)],
                        ..Touched::default()
                    },
                ))
            })
            .await?;
        self.prune_settled(&project).await;
        Ok(result)
    }

    /// Mark suggestion `id` of `project` decided (`state`, with what accepting it made);
    /// the suggestion as it is now.
    fn decide(
        &self,
        project: &str,
        id: &str,
        state: SuggestionState,
        made: Option<Value>,
        now: u64,
    ) -> Result<Suggestion, Error> {
        let mut proactive = self.proactive.state_mut();
        let list = &mut proactive
            .projects
            .entry(project.to_string())
            .or_default()
            .suggestions;
        let Some(x) = list.iter_mut().find(|x| x.id == id) else {
            return Err(MemoryError::Invalid("the suggestion is gone".into()).into());
        };
        x.state = state;
        x.decided_ms = Some(now);
        x.updated_ms = now;
        if made.is_some() {
            x.accepted_as = made;
        }
        Ok(x.clone())
    }

    /// Serve `dismiss_suggestion {id}`: a pending suggestion is set aside (a monitor finding
    /// with the same key is not raised again).
    pub(super) async fn dismiss_suggestion(&self, p: SuggestionRef) -> Result<Dismissed, Error> {
        let project = self.current()?;
        self.ensure_proactive(&project).await?;
        let suggestion = self.pending_suggestion(&project, &p.id)?;
        let now = self.env.clock.now_ms();
        let result = self
            .mutate(|_| {
                let decided = self.decide(
                    &project,
                    &suggestion.id,
                    SuggestionState::Dismissed,
                    None,
                    now,
                )?;
                self.emit(SuggestionEvent {
                    project: project.to_string(),
                    action: SuggestionAction::Dismissed,
                    suggestion: decided.clone(),
                });
                Ok((
                    Dismissed {
                        suggestion: decided.clone(),
                    },
                    Touched {
                        meta_puts: vec![suggestion_record(&decided)],
                        ..Touched::default()
                    },
                ))
            })
            .await?;
        self.prune_settled(&project).await;
        Ok(result)
    }

    /// Keep only the newest [`MAX_SETTLED`] decided suggestions (best effort: a failed delete
    /// is tried again after the next decision).
    async fn prune_settled(&self, project: &str) {
        let gone: Vec<String> = {
            let mut proactive = self.proactive.state_mut();
            let Some(state) = proactive.projects.get_mut(project) else {
                return;
            };
            let mut settled: Vec<(u64, String)> = state
                .suggestions
                .iter()
                .filter(|s| !s.is_pending())
                .map(|s| (s.decided_ms.unwrap_or(s.updated_ms), s.id.clone()))
                .collect();
            if settled.len() <= MAX_SETTLED {
                return;
            }
            settled.sort();
            let gone: Vec<String> = settled
                .into_iter()
                .take(state.suggestions.iter().filter(|s| !s.is_pending()).count() - MAX_SETTLED)
                .map(|(_, id)| id)
                .collect();
            state.suggestions.retain(|s| !gone.contains(&s.id));
            gone
        };
        let mut batch = Batch::new();
        for id in &gone {
            batch.delete(Table::Meta, suggestion_key(project, id));
        }
        let _ = self.env.store.commit(batch).await;
    }

    // ---------------------------------------------------------------- the idle thinker

    /// The thinker's budget, read once from the store.
    async fn budget(&self) -> Budget {
        if let Some(b) = self.proactive.state().budget {
            return b;
        }
        let stored = self
            .env
            .store
            .get(Table::Meta, BUDGET_KEY)
            .await
            .ok()
            .flatten()
            .map(|r| Budget {
                day: r["day"].as_u64().unwrap_or(0),
                calls: r["calls"].as_u64().unwrap_or(0).min(u64::from(u32::MAX)) as u32,
            })
            .unwrap_or_default();
        let mut proactive = self.proactive.state_mut();
        *proactive.budget.get_or_insert(stored)
    }

    /// Serve `writer_idle {idleMs?}`: let the idle thinker think, if it may (see the module
    /// docs). Answers `{thought, reason?, suggestions, callsToday, maxCallsPerDay}`; `reason`
    /// says why it did not think: `disabled`, `no_model`, `not_idle` (with `waitMs`),
    /// `budget_spent`, `nothing_new`, `busy` or `failed` (with `message`).
    pub(super) async fn writer_idle(&self, _p: WriterIdle) -> Result<IdleResult, Error> {
        let project = self.current()?;
        self.ensure_settings().await?;
        self.ensure_proactive(&project).await?;
        let config = self.settings.read(|s| s.idle_thinking.clone());
        let now = self.env.clock.now_ms();
        let mut budget = self.budget().await;
        if budget.day != now / DAY_MS {
            budget = Budget {
                day: now / DAY_MS,
                calls: 0,
            };
        }
        let answer = |reason: IdleReason, budget: Budget| IdleResult {
            thought: false,
            reason: Some(reason),
            wait_ms: None,
            message: None,
            suggestions: Vec::new(),
            calls_today: budget.calls,
            max_calls_per_day: config.max_calls_per_day,
        };
        if !config.enabled {
            return Ok(answer(IdleReason::Disabled, budget));
        }
        if !self.model_configured() {
            return Ok(answer(IdleReason::NoModel, budget));
        }
        let (last_edit, thinking, last_thought) = {
            let proactive = self.proactive.state();
            let state = proactive.projects.get(&project);
            (
                state.map_or(0, |s| s.last_edit_ms),
                state.is_some_and(|s| s.thinking),
                state.and_then(|s| s.last_thought),
            )
        };
        let quiet = now.saturating_sub(last_edit);
        if last_edit > 0 && quiet < config.after_ms {
            let mut a = answer(IdleReason::NotIdle, budget);
            a.wait_ms = Some(config.after_ms - quiet);
            return Ok(a);
        }
        if thinking {
            return Ok(answer(IdleReason::Busy, budget));
        }
        if budget.calls >= config.max_calls_per_day {
            return Ok(answer(IdleReason::BudgetSpent, budget));
        }
        let (prompt, basis, titles) = self.with_session(|s| Ok(self.thinker_input(s)))?;
        // What the writer's project holds (its own suggestions left out): new when it changed.
        let fingerprint = fnv(&[&basis]);
        if last_thought == Some(fingerprint) {
            return Ok(answer(IdleReason::NothingNew, budget));
        }
        // Count the call before making it (a crash mid-call does not give it back).
        budget.calls += 1;
        {
            let mut proactive = self.proactive.state_mut();
            proactive.budget = Some(budget);
            let state = proactive.projects.entry(project.clone()).or_default();
            state.thinking = true;
            state.last_thought = Some(fingerprint);
        }
        let mut batch = Batch::new();
        batch.put_value(Table::Meta, budget_record(budget));
        let _ = self.env.store.commit(batch).await;
        let called = self
            .nested_text(THINKER_SYSTEM, &prompt, THINKER_MAX_TOKENS, None)
            .await;
        if let Some(state) = self.proactive.state_mut().projects.get_mut(&project) {
            state.thinking = false;
        }
        let text = match called {
            Ok(text) => text,
            Err(e) => {
                let mut a = answer(IdleReason::Failed, budget);
                a.message = Some(match e {
                    NestedError::Aborted => "aborted".to_string(),
                    NestedError::Failed(m) => m,
                });
                return Ok(a);
            }
        };
        let proposals = match parse_proposals(&text) {
            Ok(p) => p,
            Err(message) => {
                let mut a = answer(IdleReason::Failed, budget);
                a.message = Some(format!("the thinker's answer was not usable: {message}"));
                return Ok(a);
            }
        };
        let added = self
            .mutate_on(On::project(&project), |_| {
                let mut proactive = self.proactive.state_mut();
                let state = proactive.projects.entry(project.clone()).or_default();
                let mut added = Vec::new();
                for proposal in proposals {
                    let pending = state.suggestions.iter().filter(|x| x.is_pending()).count();
                    let repeated = titles.iter().any(|t| same_title(t, &proposal.title))
                        || state
                            .suggestions
                            .iter()
                            .any(|x| same_title(&x.title, &proposal.title));
                    if repeated || pending >= MAX_PENDING {
                        continue;
                    }
                    let x = Suggestion {
                        id: self.env.ids.next_id(),
                        project: project.clone(),
                        source: SuggestionSource::Thinker,
                        kind: proposal.kind,
                        title: proposal.title,
                        text: proposal.text,
                        note_type: proposal.note_type,
                        key: None,
                        finding: None,
                        entity: None,
                        chapter: None,
                        chapter_number: None,
                        chapter_title: None,
                        line: None,
                        line_text: None,
                        word: None,
                        observation: None,
                        state: SuggestionState::Pending,
                        created_ms: now,
                        updated_ms: now,
                        decided_ms: None,
                        accepted_as: None,
                    };
                    state.suggestions.push(x.clone());
                    added.push(x);
                }
                drop(proactive);
                for x in &added {
                    self.emit(SuggestionEvent {
                        project: project.to_string(),
                        action: SuggestionAction::Added,
                        suggestion: x.clone(),
                    });
                }
                let meta_puts = added.iter().map(suggestion_record).collect();
                Ok((
                    added,
                    Touched {
                        meta_puts,
                        ..Touched::default()
                    },
                ))
            })
            .await?;
        // The bedside note gets the thinker's short plan (what it proposed now) and the
        // reminders waiting for the writer (the pending suggestions).
        let next: Vec<String> = added.iter().map(|x| x.title.clone()).collect();
        let reminders: Vec<String> = {
            let proactive = self.proactive.state();
            let all = proactive.projects.get(&project).map(|p| &p.suggestions);
            (all.into_iter().flatten().rev())
                .filter(|x| x.is_pending() && !added.iter().any(|a| a.id == x.id))
                .map(|x| x.title.clone())
                .collect()
        };
        let section = bedside::idle_section(&next, &reminders);
        if !section.is_empty() {
            self.evolve_bedside_with(&project, None, false, None, Some(section))
                .await;
            // The thinker's own update of the note is no news for its next thought.
            let (_, basis, _) = self.with_project(&project, |s| Ok(self.thinker_input(s)))?;
            if let Some(state) = self.proactive.state_mut().projects.get_mut(&project) {
                state.last_thought = Some(fnv(&[&basis]));
            }
        }
        Ok(IdleResult {
            thought: true,
            reason: None,
            wait_ms: None,
            message: None,
            suggestions: added,
            calls_today: budget.calls,
            max_calls_per_day: config.max_calls_per_day,
        })
    }

    /// The thinker's prompt for `s`'s project, the same without the suggestions (what its
    /// fingerprint is taken of), and the titles it must not repeat.
    fn thinker_input(&self, s: &Session) -> (String, String, Vec<String>) {
        let project = s.project.id.as_str();
        let proactive = self.proactive.state();
        let suggestions: &[Suggestion] = proactive
            .projects
            .get(project)
            .map_or(&[], |p| p.suggestions.as_slice());
        let mut observations: Vec<&crate::memory::MemoryNote> = s
            .memory
            .visible_notes(project)
            .filter(|n| n.note_type == NoteType::Observation)
            .collect();
        observations.sort_by_key(|n| std::cmp::Reverse(n.updated_ms));
        let input = ThinkerInput {
            project_name: &s.project.name,
            // The note without the thinker's own section (its last thought is no news).
            bedside: s
                .memory
                .bedside(project)
                .map_or("", |n| bedside::split_idle(&n.text).0),
            goals: s
                .memory
                .project_goals(project)
                .filter(|g| g.status == GoalStatus::Active)
                .map(|g| (g.title.as_str(), g.progress))
                .collect(),
            watched: s
                .memory
                .project_watched(project)
                .map(|w| (w.name.as_str(), w.entity_type.as_str(), w.reason.as_str()))
                .collect(),
            observations: observations.iter().map(|n| n.text.as_str()).collect(),
            pending: suggestions
                .iter()
                .rev()
                .filter(|x| x.is_pending())
                .map(|x| x.title.as_str())
                .collect(),
            dismissed: suggestions
                .iter()
                .rev()
                .filter(|x| x.state == SuggestionState::Dismissed)
                .map(|x| x.title.as_str())
                .collect(),
        };
        let titles = suggestions.iter().map(|x| x.title.clone()).collect();
        let basis = thinker_prompt(&ThinkerInput {
            pending: Vec::new(),
            dismissed: Vec::new(),
            ..input.clone()
        });
        (thinker_prompt(&input), basis, titles)
    }
}

/// What happened to a suggestion.
#[derive(Serialize, TS, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(super) enum SuggestionAction {
    /// A new pending suggestion.
    Added,
    /// A pending suggestion got a new finding.
    Updated,
    /// It became a goal or a note.
    Accepted,
    /// It was set aside.
    Dismissed,
}

/// `suggestion`: a suggestion of the proactive memory changed.
#[derive(Serialize, TS)]
pub(super) struct SuggestionEvent {
    /// The project.
    pub(super) project: String,
    /// What happened.
    pub(super) action: SuggestionAction,
    /// The suggestion as it is now.
    pub(super) suggestion: Suggestion,
}
