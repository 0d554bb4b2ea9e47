//! Deterministic pipelines (rentl): which single-purpose subagent runs on what, in what
//! order, with no model deciding. A pipeline is planned into *units* (one subagent on one
//! scene, one route or the whole project), grouped in *stages*: the units of a stage may run
//! at once; a stage starts when the one before it has settled.
//!
//! - `context`: per scene the summary, tag, primary-character, location and glossary
//!   detailers (stage 1); per route the outline builder (stage 2); then the character,
//!   location and glossary curators (stage 3);
//! - `translation`: per scene the translator;
//! - `editing`: per scene the style checker, the translation reviewer and the consistency
//!   checker.
//!
//! Each unit's run starts from one user message ([`task_message`]) naming its target, whether
//! overwriting is allowed, and its definition of done.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::AgentSpec;

/// A phase of the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "JobPhase")]
pub enum Phase {
    /// Scene metadata, route outlines, then the curators.
    Context,
    /// Scene translation.
    Translation,
    /// Style, review and consistency checks.
    Editing,
}

impl Phase {
    /// Every phase, in order.
    pub const ALL: [Phase; 3] = [Phase::Context, Phase::Translation, Phase::Editing];

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Context => "context",
            Phase::Translation => "translation",
            Phase::Editing => "editing",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Phase {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Phase::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                format!(
                    "no phase '{}'; phases: context, translation, editing",
                    s.chars().take(40).collect::<String>()
                )
            })
    }
}

/// The scene detailers of the context phase.
pub const SCENE_DETAILERS: [&str; 5] = [
    "scene_summary_detailer",
    "scene_tag_detailer",
    "scene_primary_character_detailer",
    "scene_location_detailer",
    "scene_glossary_detailer",
];
/// The curators that end the context phase.
pub const CURATORS: [&str; 3] = [
    "meta_character_curator",
    "meta_location_curator",
    "meta_glossary_curator",
];
/// The editing phase's checkers.
pub const CHECKERS: [&str; 3] = [
    "scene_style_checker",
    "scene_translation_reviewer",
    "consistency_checker",
];

/// What a unit works on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
#[ts(rename = "UnitTarget")]
pub enum Target {
    /// One scene (by id).
    Scene(String),
    /// One route (by id).
    Route(String),
    /// The whole project.
    Project,
}

impl Target {
    fn key(&self) -> &str {
        match self {
            Target::Scene(id) | Target::Route(id) => id,
            Target::Project => "project",
        }
    }
}

/// One planned unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitPlan {
    /// `<phase>:<agent>:<target>`.
    pub id: String,
    /// Its phase.
    pub phase: Phase,
    /// Its stage (units of one stage may run at once; stages run in order).
    pub stage: usize,
    /// The subagent.
    pub agent: String,
    /// What it works on.
    pub target: Target,
}

fn unit(phase: Phase, stage: usize, agent: &str, target: Target) -> UnitPlan {
    UnitPlan {
        id: format!("{}:{agent}:{}", phase.name(), target.key()),
        phase,
        stage,
        agent: agent.to_string(),
        target,
    }
}

/// Plan the units of `phases` (in pipeline order, whatever order they are given in) over
/// `scenes` and `routes` (in the order given).
pub fn plan(phases: &[Phase], scenes: &[String], routes: &[String]) -> Vec<UnitPlan> {
    let mut units = Vec::new();
    let mut stage = 0;
    for phase in Phase::ALL.into_iter().filter(|p| phases.contains(p)) {
        match phase {
            Phase::Context => {
                for scene in scenes {
                    for agent in SCENE_DETAILERS {
                        units.push(unit(phase, stage, agent, Target::Scene(scene.clone())));
                    }
                }
                stage += 1;
                if !routes.is_empty() {
                    for route in routes {
                        units.push(unit(
                            phase,
                            stage,
                            "route_outline_builder",
                            Target::Route(route.clone()),
                        ));
                    }
                    stage += 1;
                }
                for agent in CURATORS {
                    units.push(unit(phase, stage, agent, Target::Project));
                }
                stage += 1;
            }
            Phase::Translation => {
                for scene in scenes {
                    units.push(unit(
                        phase,
                        stage,
                        "scene_translator",
                        Target::Scene(scene.clone()),
                    ));
                }
                stage += 1;
            }
            Phase::Editing => {
                for scene in scenes {
                    for agent in CHECKERS {
                        units.push(unit(phase, stage, agent, Target::Scene(scene.clone())));
                    }
                }
                stage += 1;
            }
        }
    }
    units
}

/// What a subagent is asked to do, and when it is done.
fn task_of(agent: &str) -> (&'static str, &'static str) {
    match agent {
        "scene_summary_detailer" => (
            "write the summary of this scene",
            "you have called scene_update_summary once for this scene",
        ),
        "scene_tag_detailer" => (
            "assign this scene's tags",
            "you have called scene_update_tags once for this scene",
        ),
        "scene_primary_character_detailer" => (
            "set this scene's primary characters (creating the ones the bible lacks)",
            "you have called scene_update_primary_characters once for this scene",
        ),
        "scene_location_detailer" => (
            "set this scene's locations and enrich those locations",
            "you have called scene_update_locations once for this scene",
        ),
        "scene_glossary_detailer" => (
            "add or update the glossary terms this scene introduces",
            "every term of this scene worth a glossary entry has one",
        ),
        "route_outline_builder" => (
            "write this route's synopsis and primary characters",
            "you have called route_update_synopsis and route_update_primary_characters for this route",
        ),
        "meta_character_curator" => (
            "polish, merge and prune the characters of the whole project",
            "every character has its target-language name, pronouns and notes, with no duplicates",
        ),
        "meta_location_curator" => (
            "polish, merge and prune the locations of the whole project",
            "every location has its target-language name and a description, with no duplicates",
        ),
        "meta_glossary_curator" => (
            "deduplicate, prune and polish the glossary of the whole project",
            "the glossary has no duplicates and every entry has its translation",
        ),
        "scene_translator" => (
            "translate every line of this scene",
            "every line of the scene has a translation",
        ),
        "scene_style_checker" => (
            "check this scene's translation against the style guide and UI settings",
            "you have recorded a style check for this scene with translation_create_style_check",
        ),
        "scene_translation_reviewer" => (
            "review this scene's translation for fidelity and fluency",
            "you have recorded a review with translation_create_review_check",
        ),
        "consistency_checker" => (
            "check this scene's translation for consistency (names, terms, tone)",
            "you have recorded a consistency check with translation_create_consistency_check",
        ),
        _ => ("do your task on the target", "your task is complete"),
    }
}

/// The one user message a unit's run starts from.
pub fn task_message(agent: &str, target: &Target, allow_overwrite: bool) -> String {
    let (task, done) = task_of(agent);
    let target = match target {
        Target::Scene(id) => format!("Scene: {id}"),
        Target::Route(id) => format!("Route: {id}"),
        Target::Project => "Scope: the whole project".to_string(),
    };
    format!(
        "Task for {agent}: {task}.\n{target}\nOverwrite allowed: {}\nDone when: {done}.",
        if allow_overwrite { "yes" } else { "no" }
    )
}

/// The tools that overwrite what is there already, offered only when the job allows it.
pub const OVERWRITING_TOOLS: &[&str] = &["translation_update_line"];

/// A subagent's spec as a job runs it: without the overwriting tools unless the job allows
/// overwriting.
pub fn unit_spec(spec: &AgentSpec, allow_overwrite: bool) -> AgentSpec {
    let mut spec = spec.clone();
    if !allow_overwrite {
        spec.tools
            .retain(|t| !OVERWRITING_TOOLS.contains(&t.as_str()));
    }
    spec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_phase_runs_scenes_then_routes_then_curators() {
        let scenes = vec!["s1".to_string(), "s2".to_string()];
        let routes = vec!["r1".to_string()];
        let units = plan(&[Phase::Editing, Phase::Context], &scenes, &routes);
        let stages: Vec<(usize, &str)> = units.iter().map(|u| (u.stage, u.id.as_str())).collect();
        assert_eq!(stages.len(), 10 + 1 + 3 + 6);
        assert_eq!(stages[0], (0, "context:scene_summary_detailer:s1"));
        assert_eq!(stages[10], (1, "context:route_outline_builder:r1"));
        assert_eq!(stages[11], (2, "context:meta_character_curator:project"));
        assert_eq!(stages[14], (3, "editing:scene_style_checker:s1"));
        let ids: std::collections::BTreeSet<&str> = units.iter().map(|u| u.id.as_str()).collect();
        assert_eq!(ids.len(), units.len(), "unit ids are unique");
    }

    #[test]
    fn a_task_message_names_its_target_and_overwrite() {
        let text = task_message("scene_summary_detailer", &Target::Scene("s3".into()), false);
        assert!(text.starts_with("Task for scene_summary_detailer: write the summary"));
        assert!(text.contains("\nScene: s3\n"));
        assert!(text.contains("Overwrite allowed: no"));
    }
}
