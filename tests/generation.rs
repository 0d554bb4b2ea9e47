//! The generation tools' two phases (plan, then finish and apply through
//! `Session::execute_command`): prompts, rebasing over the writer's typing, answer cleaning,
//! errors that change nothing, undo, and the synchronous path's `needs_model`.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::commands::{Category, Origin, OriginFilter};
use draftsmith::project::changeset::ChangeSet;
use draftsmith::project::{Chapter, Project};
use draftsmith::session::{Outcome, Session, ToolCall};
use draftsmith::tools::generation::{
    self, finish, interpretation_plan, interpretation_requested, is_generation, plan, Finish,
    Finished, GenerationPlan,
};
use draftsmith::tools::{ToolRegistry, ALL, QUICK, VOICE_SAFE};
use draftsmith::{ManualClock, SequentialIds};
use serde_json::{json, Value};

const CH1: &str = "Mara climbed the stair. The lamp was dark.\n\n“Who’s there?” she called. Nobody answered.\n\nThe wind rose.";
const CH2: &str = "Morning came grey over Greyhaven.";

struct T {
    s: Session,
    registry: ToolRegistry,
    clock: ManualClock,
    ids: SequentialIds,
}

impl T {
    fn new() -> Self {
        Self {
            s: Session::new(Project::new(
                "p",
                "Test",
                vec![
                    Chapter::new("c1", "The Stair", CH1),
                    Chapter::new("c2", "Morning", CH2),
                ],
            )),
            registry: ToolRegistry::standard(),
            clock: ManualClock::new(1_000),
            ids: SequentialIds::new("id"),
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> Outcome {
        self.s.execute(
            &self.registry,
            ToolCall {
                id: Some("call-sync".into()),
                name: tool.into(),
                args,
            },
            Origin::Agent("editor".into()),
            &self.clock,
            &self.ids,
        )
    }

    fn select(&mut self, text: &str) {
        let out = self.call("set_selection", json!({ "text": text }));
        assert!(out.result.is_success(), "{:?}", out.result);
    }

    fn plan(&self, tool: &str, args: Value) -> GenerationPlan {
        plan(&self.registry, tool, args, &self.s).unwrap_or_else(|e| panic!("{tool}: {e:?}"))
    }

    /// Finish a plan with `answer` and apply the edit as the tool call `call-gen`.
    fn apply(&mut self, tool: &str, plan: GenerationPlan, answer: &str) -> Outcome {
        let Finished::Command(command) = finish(plan.finish, answer).unwrap() else {
            panic!("{tool}: expected an edit");
        };
        self.s.execute_command(
            Some("call-gen".into()),
            tool,
            command,
            Origin::Agent("writer-bot".into()),
            &self.clock,
            &self.ids,
        )
    }

    /// The writer types `text` at `at` of chapter c1, based on `base` (an older version).
    fn type_at(&mut self, base: u64, at: usize, text: &str) {
        let len_at_base = CH1.chars().count(); // only used while c1 is unedited by the agent
        let change = ChangeSet::replace(len_at_base, at, at, text).unwrap();
        self.s
            .apply_user_change("c1", base, change, &self.clock, &self.ids)
            .unwrap();
    }

    fn text(&self, id: &str) -> String {
        self.s.project.chapter(id).unwrap().text().to_string()
    }

    fn version(&self, id: &str) -> u64 {
        self.s.project.chapter(id).unwrap().version()
    }
}

fn char_pos(haystack: &str, needle: &str) -> usize {
    haystack[..haystack.find(needle).unwrap()].chars().count()
}

#[test]
fn the_generation_tools_are_registered_in_all_only() {
    let registry = ToolRegistry::standard();
    let names = |set: &str| -> Vec<&str> {
        registry
            .toolset(set)
            .unwrap()
            .iter()
            .map(|d| d.name.as_ref())
            .collect()
    };
    for tool in ["rewrite_selection", "continue_writing", "suggest_dialogue"] {
        assert!(is_generation(tool));
        let def = registry.definition(tool).unwrap();
        assert_eq!(def.category, Category::Generation, "{tool}");
        assert!(def.reversible && !def.read_only, "{tool}");
        assert!(registry.commands().get(tool).unwrap().reversible);
        assert!(names(ALL).contains(&tool));
        assert!(!names(VOICE_SAFE).contains(&tool) && !names(QUICK).contains(&tool));
    }
    assert_eq!(generation::TOOLS.len(), 3);
    assert!(!is_generation("run_analysis") && !is_generation("update_manuscript"));
    let analysis = registry.definition("run_analysis").unwrap();
    assert_eq!(
        analysis.parameters["properties"]["interpret"]["description"],
        "Also ask the model for a short reading of these figures (default: true when a model is configured)."
    );
    assert_eq!(
        registry.definition("continue_writing").unwrap().parameters["properties"]["length"]["enum"],
        json!(["sentence", "paragraph", "page"])
    );
}

#[test]
fn rewrite_plan_reads_the_selection_and_its_context_and_changes_nothing() {
    let mut t = T::new();
    t.select("The lamp was dark.");
    let before = t.s.clone();
    let p = t.plan(
        "rewrite_selection",
        json!({"instruction": "make it ominous", "tone": "gothic"}),
    );
    assert!(t.s == before, "planning changed the session");
    let start = char_pos(CH1, "The lamp");
    assert_eq!(
        p.finish,
        Finish::Replace {
            project: "p".into(),
            chapter: "c1".into(),
            start,
            end: start + "The lamp was dark.".len(),
            version: 0,
            original: "The lamp was dark.".into(),
            description: "Rewrote the selection (\"make it ominous\", gothic)".into(),
        }
    );
    assert!(p.system.contains("fiction-writing assistant") && p.system.contains("only the text"));
    for part in [
        "make it ominous",
        "Tone: gothic",
        "<<<\nThe lamp was dark.\n>>>",
        "Mara climbed the stair.",
        "Nobody answered.",
        "The Stair",
    ] {
        assert!(
            p.prompt.contains(part),
            "prompt lacks {part:?}:\n{}",
            p.prompt
        );
    }
    assert!((128..=4096).contains(&p.max_tokens));
}

#[test]
fn prompts_are_bounded_on_a_long_chapter() {
    let long = "Word after word, the sentence went on. ".repeat(5_000); // ~195k chars
    let mut t = T::new();
    t.s.project.chapters[0] = Chapter::new("c1", "Long", &long);
    t.call("set_selection", json!({"start": 100_000, "end": 100_200}));
    let p = t.plan("rewrite_selection", json!({"instruction": "tighten"}));
    let n = p.prompt.chars().count();
    assert!(n < 200 + 2 * 2_000 + 1_000, "rewrite prompt is {n} chars");
    assert!(p.prompt.contains("…"));
    t.s.project.ui.cursor = 100_000;
    let p = t.plan("continue_writing", json!({"length": "page"}));
    let n = p.prompt.chars().count();
    assert!(n < 4_000 + 1_000 + 1_000, "continue prompt is {n} chars");
    let p = t.plan(
        "suggest_dialogue",
        json!({"character": "Mara", "context": "x".repeat(50_000), "count": 3}),
    );
    let n = p.prompt.chars().count();
    assert!(n < 2_000 + 2_000 + 1_000, "dialogue prompt is {n} chars");
    // A selection past the limit is refused.
    t.call("set_selection", json!({"start": 0, "end": 50_000}));
    let err = plan(
        &t.registry,
        "rewrite_selection",
        json!({"instruction": "tighten"}),
        &t.s,
    )
    .unwrap_err();
    assert_eq!(err.code, "out_of_range", "{err:?}");
}

#[test]
fn a_rewrite_replaces_the_selection_and_is_recorded_like_any_tool_edit() {
    let mut t = T::new();
    t.select("The lamp was dark.");
    let p = t.plan(
        "rewrite_selection",
        json!({"instruction": "make it ominous"}),
    );
    let out = t.apply("rewrite_selection", p, "The lamp had gone out.");
    assert!(out.result.is_success(), "{:?}", out.result);
    let text = t.text("c1");
    assert_eq!(
        text,
        CH1.replace("The lamp was dark.", "The lamp had gone out.")
    );
    let start = char_pos(CH1, "The lamp");
    let data = &out.result.data;
    assert_eq!(data["chapter"], "c1");
    assert_eq!(data["start"], start);
    assert_eq!(data["end"], start + "The lamp had gone out.".len());
    assert_eq!(data["version"], 1);
    assert_eq!(data["rebased"], false);
    assert_eq!(data["original"], "The lamp was dark.");
    assert_eq!(
        out.result.meta.bytes_written,
        Some("The lamp had gone out.".len())
    );
    // One history entry with the origin, call id, command name and description.
    assert_eq!(out.edits.len(), 1);
    assert_eq!(out.edits[0].version, 1);
    assert_eq!(out.edits[0].chapter, "c1");
    let entry = t.s.history.entries().last().unwrap();
    assert_eq!(t.s.history.entries().len(), 1);
    assert_eq!(entry.origin, Origin::Agent("writer-bot".into()));
    assert_eq!(entry.tool_call_id.as_deref(), Some("call-gen"));
    assert_eq!(entry.command.as_deref(), Some("rewrite_selection"));
    assert_eq!(
        entry.description,
        "Rewrote the selection (\"make it ominous\")"
    );
    assert_eq!(
        out.result.meta.command_id.as_deref(),
        Some(entry.id.as_str())
    );
    // The selection now covers the new text.
    assert!(out.ui_changed);
    assert_eq!(
        t.s.project.ui.selection,
        Some((start, start + "The lamp had gone out.".len()))
    );
}

#[test]
fn the_writers_typing_between_plan_and_apply_survives_a_rewrite() {
    let mut t = T::new();
    t.select("The lamp was dark.");
    let p = t.plan(
        "rewrite_selection",
        json!({"instruction": "make it ominous"}),
    );
    // The writer types at the start, inside the selection, and after it, each on version 0.
    t.type_at(0, 0, "Night. ");
    t.type_at(0, char_pos(CH1, "was dark"), "still ");
    t.type_at(0, char_pos(CH1, "\n\n“Who"), " Cold.");
    let typed = t.text("c1");
    assert!(typed.starts_with("Night. Mara") && typed.contains("The lamp still was dark. Cold."));
    let out = t.apply("rewrite_selection", p, "The lamp had died.");
    assert!(out.result.is_success(), "{:?}", out.result);
    let text = t.text("c1");
    assert!(
        text.starts_with("Night. Mara climbed the stair. "),
        "{text}"
    );
    assert!(text.contains("The lamp had died."), "{text}");
    assert!(
        text.contains("still "),
        "the writer's text inside the selection was lost: {text}"
    );
    assert!(text.contains(" Cold.\n\n“Who"), "{text}");
    assert!(!text.contains("was dark"), "{text}");
    assert_eq!(out.result.data["rebased"], true);
    assert_eq!(out.edits[0].version, 4);
    // The selection covers the rewrite where it landed.
    let start = char_pos(&text, "The lamp had died.");
    assert_eq!(out.result.data["start"], start);
    assert_eq!(
        t.s.project.ui.selection,
        Some((start, start + "The lamp had died.".len()))
    );
}

#[test]
fn a_rewrite_whose_passage_was_deleted_or_whose_base_is_gone_conflicts_and_changes_nothing() {
    // The writer deleted the whole selection meanwhile.
    let mut t = T::new();
    t.select("The lamp was dark.");
    let p = t.plan("rewrite_selection", json!({"instruction": "x"}));
    let start = char_pos(CH1, "The lamp");
    let change = ChangeSet::replace(
        CH1.chars().count(),
        start,
        start + "The lamp was dark.".len(),
        "",
    )
    .unwrap();
    t.s.apply_user_change("c1", 0, change, &t.clock, &t.ids)
        .unwrap();
    let (before, history) = (t.s.project.clone(), t.s.history.clone());
    let out = t.apply("rewrite_selection", p, "The lamp had died.");
    assert_eq!(out.result.data["code"], "conflict", "{:?}", out.result);
    assert!(out.edits.is_empty() && !out.ui_changed);
    assert!(t.s.project == before && t.s.history == history);

    // The chapter was reloaded at a later version: the planned version cannot be rebased.
    let mut t = T::new();
    t.select("The lamp was dark.");
    let p = t.plan("rewrite_selection", json!({"instruction": "x"}));
    t.s.project.chapters[0] = Chapter::restore("c1", "The Stair", CH1, 5);
    let before = t.s.project.clone();
    let out = t.apply("rewrite_selection", p, "The lamp had died.");
    assert_eq!(out.result.data["code"], "conflict", "{:?}", out.result);
    assert!(t.s.project == before && t.s.history.entries().is_empty());

    // The chapter was deleted.
    let mut t = T::new();
    t.call(
        "set_selection",
        json!({"text": "Greyhaven", "chapter": "2"}),
    );
    let p = t.plan("continue_writing", json!({"length": "sentence"}));
    t.s.project.chapters.remove(1);
    let out = t.apply("continue_writing", p, "The gulls cried.");
    assert_eq!(out.result.data["code"], "not_found", "{:?}", out.result);
    assert!(t.s.history.entries().is_empty());
}

#[test]
fn no_selection_is_an_error() {
    let t = T::new();
    let err = plan(
        &t.registry,
        "rewrite_selection",
        json!({"instruction": "tighten"}),
        &t.s,
    )
    .unwrap_err();
    assert_eq!(err.code, "no_selection");
    assert!(err.message.contains("set_selection"), "{}", err.message);
    // An empty selection, and one in another chapter than the one named.
    let mut t = T::new();
    t.call("set_selection", json!({"start": 5, "end": 5}));
    let err = plan(
        &t.registry,
        "rewrite_selection",
        json!({"instruction": "tighten"}),
        &t.s,
    )
    .unwrap_err();
    assert_eq!(err.code, "no_selection");
    t.select("The lamp was dark.");
    let err = plan(
        &t.registry,
        "rewrite_selection",
        json!({"instruction": "tighten", "chapter": "2"}),
        &t.s,
    )
    .unwrap_err();
    assert_eq!(err.code, "no_selection");
    assert!(err.message.contains("Morning"), "{}", err.message);
    // Naming the active chapter is fine.
    t.plan(
        "rewrite_selection",
        json!({"instruction": "tighten", "chapter": "The Stair"}),
    );
}

#[test]
fn plan_checks_arguments_with_the_same_messages_as_execute() {
    let mut t = T::new();
    t.select("The lamp was dark.");
    for (tool, args) in [
        ("rewrite_selection", json!({})),
        ("rewrite_selection", json!({"instruction": 3})),
        ("continue_writing", json!({"length": "novel"})),
        ("suggest_dialogue", json!({"character": "Mara", "count": 2})),
        (
            "suggest_dialogue",
            json!({"character": "Mara", "context": "x", "count": -1}),
        ),
        ("rewrite_selection", json!("tighten")),
    ] {
        let err = plan(&t.registry, tool, args.clone(), &t.s).unwrap_err();
        let out = t.call(tool, args.clone());
        assert_eq!(err.code, "invalid_args", "{tool} {args}");
        assert_eq!(
            out.result.data["message"], err.message,
            "{tool} {args}: execute and plan disagree"
        );
    }
    let err = plan(&t.registry, "rewrite_selektion", json!({}), &t.s).unwrap_err();
    assert_eq!(err.code, "unknown_tool");
    assert!(err.message.contains("rewrite_selection"));
    let err = plan(
        &t.registry,
        "update_manuscript",
        json!({"searchText": "a", "replacementText": "b"}),
        &t.s,
    )
    .unwrap_err();
    assert_eq!(err.code, "invalid_args");
    assert!(err.message.contains("not a generation tool"));
    for count in [0, 11] {
        let err = plan(
            &t.registry,
            "suggest_dialogue",
            json!({"character": "Mara", "context": "x", "count": count}),
            &t.s,
        )
        .unwrap_err();
        assert_eq!(err.code, "invalid_args");
        assert!(
            err.message.contains("'count' must be 1 to 10"),
            "{}",
            err.message
        );
    }
    let err = plan(
        &t.registry,
        "rewrite_selection",
        json!({"instruction": "  "}),
        &t.s,
    )
    .unwrap_err();
    assert_eq!(err.code, "invalid_args");
    let err = plan(
        &t.registry,
        "continue_writing",
        json!({"length": "page", "chapter": "nine"}),
        &t.s,
    )
    .unwrap_err();
    assert_eq!(err.code, "not_found");
}

#[test]
fn the_sync_path_says_a_model_is_needed_and_changes_nothing() {
    let mut t = T::new();
    t.select("The lamp was dark.");
    let before = t.s.clone();
    for (tool, args) in [
        ("rewrite_selection", json!({"instruction": "tighten"})),
        ("continue_writing", json!({"length": "paragraph"})),
        (
            "suggest_dialogue",
            json!({"character": "Mara", "context": "alone", "count": 3}),
        ),
    ] {
        let out = t.call(tool, args);
        assert!(!out.result.is_success());
        assert_eq!(out.result.data["code"], "needs_model", "{tool}");
        let message = out.result.data["message"].as_str().unwrap();
        assert!(
            message.contains(tool)
                && message.contains("needs a model call; run it through the core (execute or run) with a model configured"),
            "{message}"
        );
        assert!(out.edits.is_empty() && !out.ui_changed);
        assert_eq!(out.result.meta.command_id, None);
    }
    assert!(t.s == before, "the sync path changed the session");
}

#[test]
fn continue_writing_inserts_at_the_cursor_and_keeps_the_writers_typing() {
    let mut t = T::new();
    let cursor = char_pos(CH1, "\n\n“Who");
    t.s.project.ui.cursor = cursor; // after "The lamp was dark."
    let p = t.plan(
        "continue_writing",
        json!({"length": "sentence", "direction": "she hears a step"}),
    );
    assert_eq!(
        p.finish,
        Finish::Insert {
            project: "p".into(),
            chapter: "c1".into(),
            at: cursor,
            version: 0,
            description: "Continued the text (one sentence: \"she hears a step\")".into(),
        }
    );
    assert!(p.prompt.contains("she hears a step") && p.prompt.contains("[CONTINUE HERE]"));
    assert!(
        p.prompt
            .contains("The lamp was dark.\n>>>\n[CONTINUE HERE]"),
        "{}",
        p.prompt
    );
    assert!(p.prompt.contains("Who’s there?"));
    assert_eq!(p.max_tokens, 120);
    // The writer types at the start meanwhile.
    t.type_at(0, 0, "Night. ");
    let out = t.apply("continue_writing", p, "  A step creaked below.\n");
    assert!(out.result.is_success(), "{:?}", out.result);
    let text = t.text("c1");
    assert!(text.starts_with("Night. Mara"), "{text}");
    assert!(
        text.contains("The lamp was dark. A step creaked below.\n\n“Who"),
        "{text}"
    );
    let start = char_pos(&text, "A step");
    assert_eq!(out.result.data["start"], start);
    assert_eq!(
        out.result.data["end"],
        start + "A step creaked below.".len()
    );
    assert_eq!(out.result.data["rebased"], true);
    let entry = t.s.history.entries().last().unwrap();
    assert_eq!(entry.command.as_deref(), Some("continue_writing"));
    assert_eq!(
        entry.description,
        "Continued the text (one sentence: \"she hears a step\")"
    );
}

#[test]
fn continue_writing_at_the_end_and_as_a_new_paragraph() {
    let mut t = T::new();
    t.s.project.ui.cursor = 3;
    // position end, in the active chapter.
    let p = t.plan(
        "continue_writing",
        json!({"length": "paragraph", "position": "end"}),
    );
    let out = t.apply("continue_writing", p, "\n\nThe door swung open.");
    assert!(out.result.is_success(), "{:?}", out.result);
    assert_eq!(t.text("c1"), format!("{CH1}\n\nThe door swung open."));
    // A chapter other than the active one: at its end, joined with a space.
    let p = t.plan(
        "continue_writing",
        json!({"length": "page", "chapter": "2"}),
    );
    assert!(
        matches!(p.finish, Finish::Insert { ref chapter, at, .. } if chapter == "c2" && at == CH2.chars().count())
    );
    assert_eq!(p.max_tokens, 1_000);
    let out = t.apply("continue_writing", p, "```\nThe gulls cried.\n```");
    assert!(out.result.is_success(), "{:?}", out.result);
    assert_eq!(t.text("c2"), format!("{CH2} The gulls cried."));
    // At the cursor mid-text, a following word gets a space; a quoted line of dialogue keeps
    // its quotation marks.
    let mut t = T::new();
    t.s.project.ui.cursor = char_pos(CH1, "The wind");
    let p = t.plan("continue_writing", json!({"length": "sentence"}));
    let out = t.apply("continue_writing", p, "\"Hello?\"");
    assert!(out.result.is_success(), "{:?}", out.result);
    assert!(
        t.text("c1").contains("\n\n\"Hello?\" The wind rose."),
        "{}",
        t.text("c1")
    );
}

#[test]
fn answers_are_cleaned_and_an_empty_one_changes_nothing() {
    let finish_text = |original: &str, answer: &str| -> Result<String, String> {
        let mut t = T::new();
        let chapter = format!("Before. {original} After.");
        t.s.project.chapters[0] = Chapter::new("c1", "One", &chapter);
        t.select(original);
        let p = t.plan("rewrite_selection", json!({"instruction": "x"}));
        match finish(p.finish, answer) {
            Err(e) => {
                assert_eq!(e.code, "failed");
                assert_eq!(e.message, "the model returned no text");
                Err(e.code)
            }
            Ok(Finished::Command(command)) => {
                let out = t.s.execute_command(
                    None,
                    "rewrite_selection",
                    command,
                    Origin::Agent("a".into()),
                    &t.clock,
                    &t.ids,
                );
                assert!(out.result.is_success(), "{:?}", out.result);
                Ok(out.result.data["text"].as_str().unwrap().to_string())
            }
            Ok(other) => panic!("{other:?}"),
        }
    };
    let plain = "The lamp was dark.";
    assert_eq!(
        finish_text(plain, "  It was dark.\n"),
        Ok("It was dark.".into())
    );
    assert_eq!(
        finish_text(plain, "```\nIt was dark.\n```"),
        Ok("It was dark.".into())
    );
    assert_eq!(
        finish_text(plain, "```text\nIt was dark.\n```"),
        Ok("It was dark.".into())
    );
    assert_eq!(
        finish_text(plain, "```It was dark.```"),
        Ok("It was dark.".into())
    );
    assert_eq!(
        finish_text(plain, "\"It was dark.\""),
        Ok("It was dark.".into())
    );
    assert_eq!(
        finish_text(plain, "“It was dark.”"),
        Ok("It was dark.".into())
    );
    assert_eq!(
        finish_text(plain, "```\n“It was dark.”\n```"),
        Ok("It was dark.".into())
    );
    // Quotes that are not around the whole answer stay; so do quotes when the selection was
    // itself quoted.
    assert_eq!(
        finish_text(plain, "\"Go,\" she said. \"Now.\""),
        Ok("\"Go,\" she said. \"Now.\"".into())
    );
    assert_eq!(
        finish_text("“Who’s there?”", "“Who is it?”"),
        Ok("“Who is it?”".into())
    );
    for empty in ["", "   \n", "``````", "```\n\n```", "\"\"", "“ ”"] {
        assert_eq!(finish_text(plain, empty), Err("failed".into()), "{empty:?}");
    }
    // An empty continuation and an empty interpretation are errors too.
    let t = T::new();
    let p = t.plan("continue_writing", json!({"length": "sentence"}));
    assert_eq!(finish(p.finish, " \n ").unwrap_err().code, "failed");
    assert_eq!(
        finish(Finish::Interpretation, "```\n```").unwrap_err().code,
        "failed"
    );
}

#[test]
fn suggest_dialogue_plans_and_parses_one_line_each() {
    let mut t = T::new();
    t.s.project.ui.cursor = char_pos(CH1, "The wind");
    let before = t.s.clone();
    let p = t.plan(
        "suggest_dialogue",
        json!({"character": "Mara", "context": "She is alone on the stair.", "count": 3}),
    );
    assert!(t.s == before);
    assert_eq!(
        p.finish,
        Finish::Suggestions {
            character: "Mara".into(),
            count: 3
        }
    );
    assert!(p.prompt.contains("3 different lines of dialogue for Mara"));
    assert!(p.prompt.contains("She is alone on the stair."));
    assert!(p.prompt.contains("Nobody answered."), "{}", p.prompt);
    assert!(
        !p.prompt.contains("The wind rose."),
        "text after the cursor is not shown"
    );
    let answer = "Here:\n1. Who's there?\n\n2) \"Show yourself.\"\n- MARA: I know you're there.\n(4) Fine. Stay hidden.";
    let Finished::Data(data) = finish(p.finish.clone(), answer).unwrap() else {
        panic!("expected data");
    };
    assert_eq!(
        data,
        json!({"character": "Mara", "suggestions": ["Who's there?", "Show yourself.", "I know you're there."]})
    );
    let answer = "1. Who's there?\n2. “Show yourself.”\n• Mara: I know you're there.\n* Fine.";
    let Finished::Data(data) = finish(
        Finish::Suggestions {
            character: "Mara".into(),
            count: 10,
        },
        answer,
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(
        data["suggestions"],
        json!([
            "Who's there?",
            "Show yourself.",
            "I know you're there.",
            "Fine."
        ])
    );
    assert_eq!(
        finish(p.finish, "\n \n1.\n- \n").unwrap_err().code,
        "failed"
    );
    assert!(t.s == before, "suggestions changed the session");
}

#[test]
fn a_rewrite_identical_to_the_passage_changes_nothing() {
    let mut t = T::new();
    t.select("The lamp was dark.");
    let p = t.plan("rewrite_selection", json!({"instruction": "x"}));
    let before = t.s.clone();
    let out = t.apply("rewrite_selection", p, "\"The lamp was dark.\"");
    assert!(out.result.is_success(), "{:?}", out.result);
    assert_eq!(out.result.data["changed"], false);
    assert!(out.edits.is_empty() && out.result.meta.command_id.is_none());
    assert!(t.s == before);
}

#[test]
fn undo_reverts_a_generated_edit() {
    let mut t = T::new();
    t.select("The lamp was dark.");
    let p = t.plan("rewrite_selection", json!({"instruction": "x"}));
    let out = t.apply("rewrite_selection", p, "The lamp had died.");
    assert!(out.result.is_success());
    t.s.undo(None, Origin::User, &t.clock, &t.ids).unwrap();
    assert_eq!(t.text("c1"), CH1);
    t.s.redo().unwrap();
    assert!(t.text("c1").contains("The lamp had died."));
    // An agent-scoped undo keeps the writer's later typing.
    let v = t.version("c1");
    let len = t.text("c1").chars().count();
    let change = ChangeSet::replace(len, len, len, " Then silence.").unwrap();
    t.s.apply_user_change("c1", v, change, &t.clock, &t.ids)
        .unwrap();
    t.s.undo(
        Some(&OriginFilter::AnyAgent),
        Origin::User,
        &t.clock,
        &t.ids,
    )
    .unwrap();
    assert_eq!(t.text("c1"), format!("{CH1} Then silence."));
}

#[test]
fn run_analysis_takes_interpret_and_its_local_result_is_unchanged() {
    let mut t = T::new();
    let plain = t.call("run_analysis", json!({"section": "pacing"}));
    for interpret in [true, false] {
        let with = t.call(
            "run_analysis",
            json!({"section": "pacing", "interpret": interpret}),
        );
        assert_eq!(with.result.data, plain.result.data);
    }
    let bad = t.call(
        "run_analysis",
        json!({"section": "pacing", "interpret": "yes"}),
    );
    assert_eq!(bad.result.data["code"], "invalid_args");
    assert!(interpretation_requested(&json!({"section": "plot"}), true));
    assert!(!interpretation_requested(
        &json!({"section": "plot"}),
        false
    ));
    assert!(!interpretation_requested(
        &json!({"interpret": false}),
        true
    ));
    assert!(interpretation_requested(&json!({"interpret": true}), false));

    let p = interpretation_plan(&plain.result.data);
    assert_eq!(p.finish, Finish::Interpretation);
    assert!(
        p.prompt.contains("pacing analysis of the manuscript"),
        "{}",
        p.prompt
    );
    assert!(p.prompt.contains("\"scenes\""));
    assert!(p.system.contains("only the text"));
    let huge = json!({"section": "plot", "scope": "manuscript", "blob": "x".repeat(100_000)});
    let p = interpretation_plan(&huge);
    assert!(p.prompt.chars().count() < 13_000 && p.prompt.contains("cut short"));
    let Finished::Data(data) = finish(Finish::Interpretation, "\"Pacing is even.\"").unwrap()
    else {
        panic!()
    };
    assert_eq!(data, json!({"interpretation": "Pacing is even."}));
}
