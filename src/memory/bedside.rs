//! The bedside note's automatic part: a status section the core keeps up to date after each
//! run and each analysis, below the plan the agents write.
//!
//! The bedside note's text is the agents' plan (what `evolve_bedside_note` writes), then,
//! under [`STATUS_HEADING`], a deterministic summary ([`status`]): the active goals with their
//! progress, how many goals are done, paused or given up, and the latest figures of each
//! analysis section; then, only when the writer opted in and a model is configured, under
//! [`PLAN_HEADING`], a short plan the model wrote from that status ([`plan_prompt`]).
//! [`split`] takes a text apart, [`compose`] puts it back together; an update replaces the
//! automatic part and keeps the agents' plan as it is (also when an agent's rewrite copied
//! an older status into it). The same status twice gives the same text, so an update that
//! changes nothing makes no new version.
//!
//! When the idle thinker has thought, a last section, under [`IDLE_HEADING`], holds its short
//! plan (the next steps it proposed) and the reminders waiting for the writer (the pending
//! suggestions): [`idle_section`] writes it, [`split_idle`] and [`with_idle`] take it off and
//! put it back, so the other updates keep it as it is until the thinker thinks again.

use serde::{Deserialize, Serialize};

use super::{shorten, GoalStatus, Memory, MAX_NOTE_CHARS};

/// The heading of the automatic status section.
pub const STATUS_HEADING: &str = "## Status (kept up to date automatically)";
/// The heading of the model's plan, below the status.
pub const PLAN_HEADING: &str = "## Next steps (suggested by the model)";
/// The longest status section, in chars.
pub const MAX_STATUS_CHARS: usize = 2_500;
/// The longest model plan kept, in chars.
pub const MAX_PLAN_CHARS: usize = 1_500;
/// The heading of the idle thinker's section, last in the note.
pub const IDLE_HEADING: &str = "## Plan and reminders (from the idle thinker)";
/// The longest idle thinker's section, in chars.
pub const MAX_IDLE_CHARS: usize = 1_500;
/// Most lines of each list of the idle thinker's section.
const MAX_IDLE_LINES: usize = 5;
/// Most active goals listed.
const MAX_GOALS: usize = 12;

/// The system prompt of the bedside plan's model call.
pub const PLAN_SYSTEM: &str = "You keep a novelist's bedside note: the running plan of their project. From the status below (goals with their progress, the latest analysis figures) and the current plan, write the next steps for the writer's next session: at most five short lines, each starting with \"- \". Plain text, no heading, no preamble.";

/// The latest figures of one analysis section, as the status shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnalysisFigures {
    /// `pacing`, `characters`, `plot` or `setting`.
    pub section: String,
    /// `manuscript`, or `chapter N`.
    pub scope: String,
    /// One line of figures.
    pub headline: String,
    /// When the analysis ran.
    pub at_ms: u64,
}

/// The status section of `project` (with its heading), or an empty string when there is
/// nothing to say (no goals, no analysis yet).
pub fn status(memory: &Memory, project: &str, analyses: &[AnalysisFigures]) -> String {
    let goals: Vec<_> = memory.project_goals(project).collect();
    if goals.is_empty() && analyses.is_empty() {
        return String::new();
    }
    let mut out = vec![STATUS_HEADING.to_string()];
    let active: Vec<_> = goals
        .iter()
        .filter(|g| g.status == GoalStatus::Active)
        .collect();
    if active.is_empty() {
        out.push("No active goals.".into());
    } else {
        out.push(format!("Active goals ({}):", active.len()));
        for goal in active.iter().take(MAX_GOALS) {
            let mut line = format!("- {}: {}%", shorten(&goal.title, 120), goal.progress);
            if !goal.description.is_empty() {
                line.push_str(&format!(" ({})", shorten(&goal.description, 100)));
            }
            out.push(line);
        }
        if active.len() > MAX_GOALS {
            out.push(format!("- … and {} more", active.len() - MAX_GOALS));
        }
    }
    let count = |s: GoalStatus| goals.iter().filter(|g| g.status == s).count();
    let others: Vec<String> = [
        (GoalStatus::Completed, "completed"),
        (GoalStatus::Paused, "paused"),
        (GoalStatus::Abandoned, "abandoned"),
    ]
    .into_iter()
    .filter(|(s, _)| count(*s) > 0)
    .map(|(s, name)| format!("{} {name}", count(s)))
    .collect();
    if !others.is_empty() {
        out.push(format!("Other goals: {}.", others.join(", ")));
    }
    if !analyses.is_empty() {
        out.push("Latest analysis:".into());
        for a in analyses {
            out.push(format!(
                "- {} ({}): {}",
                a.section,
                a.scope,
                shorten(&a.headline, 300)
            ));
        }
    }
    shorten(&out.join("\n"), MAX_STATUS_CHARS)
}

/// A bedside text taken apart: the agents' plan, the status section (with its heading) and
/// the model's plan (without its heading), as far as the text has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts {
    /// The agents' plan (trimmed).
    pub plan: String,
    /// The status section, heading included.
    pub status: Option<String>,
    /// The model's plan, heading left out.
    pub model_plan: Option<String>,
}

/// Take a bedside text apart (see [`Parts`]).
pub fn split(text: &str) -> Parts {
    let Some(at) = find_heading(text, STATUS_HEADING) else {
        return Parts {
            plan: text.trim().to_string(),
            status: None,
            model_plan: None,
        };
    };
    let plan = text[..at].trim().to_string();
    let rest = &text[at..];
    let (status, model_plan) = match find_heading(rest, PLAN_HEADING) {
        Some(p) => (
            rest[..p].trim().to_string(),
            Some(rest[p + PLAN_HEADING.len()..].trim().to_string()).filter(|s| !s.is_empty()),
        ),
        None => (rest.trim().to_string(), None),
    };
    Parts {
        plan,
        status: Some(status),
        model_plan,
    }
}

/// Where `heading` starts a line of `text` (byte offset).
fn find_heading(text: &str, heading: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find(heading) {
        let at = from + i;
        if at == 0 || text[..at].ends_with('\n') {
            return Some(at);
        }
        from = at + heading.len();
    }
    None
}

/// The bedside text of `plan` (the agents' part), `status` (from [`status`]; empty for none)
/// and the model's plan (which follows the status: none without one), within
/// [`MAX_NOTE_CHARS`] (the agents' part is cut first).
pub fn compose(plan: &str, status: &str, model_plan: Option<&str>) -> String {
    let mut auto = String::new();
    if !status.is_empty() {
        auto.push_str(status);
    }
    if let Some(model) = model_plan
        .map(str::trim)
        .filter(|m| !m.is_empty() && !status.is_empty())
    {
        auto.push_str("\n\n");
        auto.push_str(PLAN_HEADING);
        auto.push('\n');
        auto.push_str(&shorten(model, MAX_PLAN_CHARS));
    }
    let plan = plan.trim();
    let plan = if plan.is_empty() {
        "No plan yet."
    } else {
        plan
    };
    if auto.is_empty() {
        return plan.to_string();
    }
    let room = MAX_NOTE_CHARS.saturating_sub(auto.chars().count() + 2);
    let plan = if plan.chars().count() > room {
        shorten(plan, room.saturating_sub(1))
    } else {
        plan.to_string()
    };
    format!("{plan}\n\n{auto}")
}

/// The idle thinker's section (with its heading): `next` (the steps it just proposed) as its
/// short plan, and `reminders` (what waits for the writer: the pending suggestions) below;
/// an empty string when both are empty. Each list keeps its first few lines.
pub fn idle_section(next: &[String], reminders: &[String]) -> String {
    let list = |items: &[String]| -> Vec<String> {
        items
            .iter()
            .map(|i| i.trim())
            .filter(|i| !i.is_empty())
            .take(MAX_IDLE_LINES)
            .map(|i| format!("- {}", shorten(i, 200)))
            .collect()
    };
    let (next, reminders) = (list(next), list(reminders));
    if next.is_empty() && reminders.is_empty() {
        return String::new();
    }
    let mut out = vec![IDLE_HEADING.to_string()];
    if !next.is_empty() {
        out.push("Next:".into());
        out.extend(next);
    }
    if !reminders.is_empty() {
        out.push("Reminders (suggestions waiting for you):".into());
        out.extend(reminders);
    }
    shorten(&out.join("\n"), MAX_IDLE_CHARS)
}

/// A bedside text without its idle thinker's section, and that section (heading included),
/// if it has one.
pub fn split_idle(text: &str) -> (&str, Option<&str>) {
    match find_heading(text, IDLE_HEADING) {
        Some(at) => (text[..at].trim_end(), Some(text[at..].trim())),
        None => (text, None),
    }
}

/// `text` with the idle thinker's `section` after it (none: `text` as it is), within
/// [`MAX_NOTE_CHARS`].
pub fn with_idle(text: &str, section: Option<&str>) -> String {
    match section.map(str::trim).filter(|s| !s.is_empty()) {
        None => text.to_string(),
        Some(section) => shorten(&format!("{}\n\n{section}", text.trim_end()), MAX_NOTE_CHARS),
    }
}

/// The prompt of the bedside plan's model call (with [`PLAN_SYSTEM`]).
pub fn plan_prompt(project_name: &str, plan: &str, status: &str) -> String {
    format!(
        "Project: {}\n\nThe current plan:\n{}\n\n{}\n\nWrite the next steps.",
        shorten(project_name, 200),
        shorten(plan, 3_000),
        status
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::SequentialIds;
    use crate::memory::{GoalPatch, NewGoal};

    #[test]
    fn nothing_to_say_is_no_status() {
        assert_eq!(status(&Memory::new(), "p", &[]), "");
    }

    #[test]
    fn the_status_lists_active_goals_and_counts_the_others() {
        let mut m = Memory::new();
        let ids = SequentialIds::new("g");
        for (title, progress) in [
            ("Draft chapter 3", 40),
            ("Fix the ending", 0),
            ("Outline", 100),
        ] {
            m.create_goal(
                "p",
                NewGoal {
                    title: title.into(),
                    progress: Some(progress),
                    ..NewGoal::default()
                },
                0,
                &ids,
            )
            .unwrap();
        }
        let done = m.goals[2].id.clone();
        m.update_goal(
            &done,
            GoalPatch {
                status: Some(GoalStatus::Completed),
                ..GoalPatch::default()
            },
            1,
        )
        .unwrap();
        let figures = AnalysisFigures {
            section: "pacing".into(),
            scope: "manuscript".into(),
            headline: "2 chapters".into(),
            at_ms: 5,
        };
        let s = status(&m, "p", &[figures]);
        assert_eq!(
            s,
            format!("{STATUS_HEADING}\nActive goals (2):\n- Draft chapter 3: 40%\n- Fix the ending: 0%\nOther goals: 1 completed.\nLatest analysis:\n- pacing (manuscript): 2 chapters")
        );
        assert_eq!(status(&m, "other", &[]), "");
    }

    #[test]
    fn the_idle_section_comes_off_and_goes_back_last() {
        let section = idle_section(
            &["Draft the storm scene".into()],
            &["Check Mara's eye colour".into(), " ".into()],
        );
        assert_eq!(
            section,
            format!("{IDLE_HEADING}\nNext:\n- Draft the storm scene\nReminders (suggestions waiting for you):\n- Check Mara's eye colour")
        );
        assert_eq!(idle_section(&[], &[]), "");
        let text = with_idle("Finish act one.", Some(&section));
        assert_eq!(
            split_idle(&text),
            ("Finish act one.", Some(section.as_str()))
        );
        assert_eq!(split_idle("Finish act one."), ("Finish act one.", None));
        assert_eq!(with_idle("Plan.", None), "Plan.");
    }

    #[test]
    fn split_and_compose_keep_the_agents_plan() {
        let text = compose(
            "Finish act one.",
            &format!("{STATUS_HEADING}\nNo active goals."),
            Some("- Write"),
        );
        let parts = split(&text);
        assert_eq!(parts.plan, "Finish act one.");
        assert_eq!(
            parts.status.as_deref(),
            Some(format!("{STATUS_HEADING}\nNo active goals.").as_str())
        );
        assert_eq!(parts.model_plan.as_deref(), Some("- Write"));
        assert_eq!(compose(&parts.plan, "", None), "Finish act one.");
        // A heading quoted mid-line is not the section.
        let quoted = format!("Say \"{STATUS_HEADING}\" aloud.");
        assert_eq!(split(&quoted).status, None);
        // Long plans are cut to fit.
        let long = compose(&"x".repeat(MAX_NOTE_CHARS), STATUS_HEADING, None);
        assert!(long.chars().count() <= MAX_NOTE_CHARS);
        assert!(long.ends_with(STATUS_HEADING));
    }
}
