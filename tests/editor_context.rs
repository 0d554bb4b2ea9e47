//! The `[EDITOR CONTEXT]` block: what it says (chapters, cursor, selection, paragraph,
//! story bible, toolset), its token budget (the selection and paragraph trimmed first, the
//! chapter list capped), and that a run's first request carries it between the instructions
//! and `[AGENT MEMORY]`.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::bible::{Actor, Bible, Kind};
use draftsmith::commands::Origin;
use draftsmith::editor_context::{
    editor_context_block, CURSOR_MARK, EDITOR_CONTEXT_TOKENS, MAX_LISTED_CHAPTERS,
};
use draftsmith::memory::context::estimate_tokens;
use draftsmith::project::{Chapter, Project};
use proptest::prelude::*;
use serde_json::{json, Value};

mod common;
use common::page::*;

const CH1: &str = "Mara climbed the stair. The lamp was dark.\n\n“Who’s there?” she called. Nobody answered.\nThe wind rose over the sea.\n\nJonah slept.";
const CH2: &str = "Morning came grey over Greyhaven. Mara woke. Mara ate. Jonah left.";

fn bible() -> Bible {
    let mut bible = Bible::new();
    let actor = Actor::from_origin(&Origin::User, 1_000);
    let character = |bible: &mut Bible, id: &str, name: &str| {
        bible
            .create(
                Kind::Character,
                id,
                vec![("name_src".into(), json!(name))],
                &actor,
                1_000,
            )
            .unwrap();
    };
    character(&mut bible, "mara", "Mara");
    character(&mut bible, "jonah", "Jonah");
    character(&mut bible, "aunt", "Aunt Ilse");
    character(&mut bible, "zed", "Zed");
    bible
        .create(
            Kind::Location,
            "greyhaven",
            vec![("name_src".into(), json!("Greyhaven"))],
            &actor,
            1_000,
        )
        .unwrap();
    // Zed is listed in two scenes, Jonah in one: they come first, whatever the mentions.
    for (id, chars) in [("s1", json!(["zed", "jonah"])), ("s2", json!(["zed"]))] {
        bible
            .create(
                Kind::Scene,
                id,
                vec![
                    ("chapter".into(), json!("c1")),
                    ("primary_characters".into(), chars),
                ],
                &actor,
                1_000,
            )
            .unwrap();
    }
    bible
}

fn project() -> Project {
    let mut project = Project::new(
        "p",
        "Lighthouse",
        vec![
            Chapter::new("c1", "The Stair", CH1),
            Chapter::new("c2", "Morning", CH2),
        ],
    );
    let start = CH1.find("Nobody").unwrap();
    let start = CH1[..start].chars().count();
    project.ui.selection = Some((start, start + "Nobody answered.".chars().count()));
    project.ui.cursor = start + 3;
    project
}

#[test]
fn the_block_says_what_the_writer_sees_in_order() {
    let block = editor_context_block(&project(), &bible(), "quick", EDITOR_CONTEXT_TOKENS);
    assert!(block.starts_with("[EDITOR CONTEXT]\n") && block.ends_with("[/EDITOR CONTEXT]"));
    let expect = [
        "Project: \"Lighthouse\", 2 chapters, 33 words.",
        "Chapters (number, title, words):\n  1. \"The Stair\": 22 words (active)\n  2. \"Morning\": 11 words\n",
        "Active chapter (open in the editor): 1 \"The Stair\" (id c1, version 0, 22 words, 6 lines).",
        "Cursor: line 3, char 74 of 129 (chars count from 0). Selection: chars 71–87 (16 chars), lines 3–3;",
        "Selected text (between the \"\"\" lines):\n\"\"\"\nNobody answered.\n\"\"\"\n",
        "Paragraph at the cursor (lines 3–4; ‸ marks the cursor and is not in the text):\n\"\"\"\n“Who’s there?” she called. Nob‸ody answered.\nThe wind rose over the sea.\n\"\"\"\n",
        "Story bible: 2 scenes, 4 characters, 1 location.",
        // Listed in scenes first (Zed twice, Jonah once), then by mentions in the active
        // chapter (Mara once, Aunt Ilse never).
        "Main characters (name, id): Zed (zed), Jonah (jonah), Mara (mara), Aunt Ilse (aunt).",
        "Toolset: quick.",
    ];
    let mut at = 0;
    for part in expect {
        let found = block[at..]
            .find(part)
            .unwrap_or_else(|| panic!("missing or out of order: {part}\n---\n{block}"));
        at += found + part.len();
    }
    assert!(estimate_tokens(&block) <= EDITOR_CONTEXT_TOKENS);
}

#[test]
fn without_a_selection_or_bible_the_block_says_so() {
    let mut project = project();
    project.ui.selection = None;
    project.ui.cursor = CH1.chars().count(); // end of "Jonah slept."
    let block = editor_context_block(&project, &Bible::new(), "all", EDITOR_CONTEXT_TOKENS);
    assert!(block.contains("Nothing is selected."), "{block}");
    assert!(!block.contains("Selected text"));
    assert!(block.contains("Story bible: empty."));
    assert!(!block.contains("Main characters"));
    assert!(
        block.contains(&format!("\"\"\"\nJonah slept.{CURSOR_MARK}\n\"\"\"")),
        "{block}"
    );

    // On an empty line, the paragraph before it.
    let blank_line = CH1.find("\n\nJonah").unwrap() + 1;
    project.ui.cursor = CH1[..blank_line].chars().count();
    let block = editor_context_block(&project, &Bible::new(), "all", EDITOR_CONTEXT_TOKENS);
    assert!(
        block.contains("Paragraph before the cursor (lines 3–4; the cursor is on an empty line)"),
        "{block}"
    );
    // Out-of-range positions (a stale UI state) are clamped, never a panic.
    project.ui.cursor = 10_000;
    project.ui.selection = Some((9_000, 12_000));
    let block = editor_context_block(&project, &Bible::new(), "all", EDITOR_CONTEXT_TOKENS);
    assert!(block.contains("Nothing is selected."), "{block}");
}

#[test]
fn a_long_selection_and_paragraph_are_trimmed_and_a_long_chapter_list_capped() {
    let paragraph = format!(
        "START {} MIDDLE {} END",
        "word ".repeat(5_000),
        "more ".repeat(5_000)
    );
    let chapters: Vec<Chapter> = (1..=120)
        .map(|i| {
            let text = if i == 100 {
                paragraph.as_str()
            } else {
                "A short chapter."
            };
            Chapter::new(format!("c{i}"), format!("Chapter title number {i}"), text)
        })
        .collect();
    let mut project = Project::new("p", "Saga", chapters);
    project.ui.active_chapter = Some("c100".into());
    let len = paragraph.chars().count();
    project.ui.selection = Some((0, len));
    project.ui.cursor = len / 2;
    let block = editor_context_block(&project, &Bible::new(), "all", EDITOR_CONTEXT_TOKENS);
    assert!(
        estimate_tokens(&block) <= EDITOR_CONTEXT_TOKENS,
        "{}",
        estimate_tokens(&block)
    );
    // The selection keeps its beginning and end, without the middle.
    assert!(block.contains("its middle is left out here"), "{block}");
    assert!(block.contains("\"\"\"\nSTART word") && block.contains(" […] "));
    assert!(block.contains("more  END\n\"\"\""), "{block}");
    // The paragraph is cut around the cursor.
    let paragraph_shown = &block[block.find("Paragraph at the cursor").expect("paragraph")..];
    assert!(paragraph_shown.contains("\"\"\"\n…") && paragraph_shown.contains(CURSOR_MARK));
    assert!(paragraph_shown.contains("…\n\"\"\""), "{paragraph_shown}");
    // The list is capped around the active chapter and says how many are left out.
    assert!(
        block.contains("\"Chapter title number 100\": 10,003 words (active)"),
        "{block}"
    );
    let listed = block
        .lines()
        .filter(|l| l.starts_with("  ") && l.contains("\"Chapter title number"))
        .count();
    assert!(listed > 0 && listed <= MAX_LISTED_CHAPTERS, "{listed}");
    // They are the active chapter's neighbours, in order, as many before it as after (one
    // more before when the count is even).
    let numbers: Vec<usize> = block
        .lines()
        .filter(|l| l.starts_with("  ") && l.contains("\"Chapter title number"))
        .map(|l| {
            l.trim_start()[..l.trim_start().find('.').unwrap()]
                .parse()
                .unwrap()
        })
        .collect();
    assert!(numbers.windows(2).all(|w| w[1] == w[0] + 1), "{numbers:?}");
    let before = numbers.iter().filter(|&&n| n < 100).count();
    let after = numbers.iter().filter(|&&n| n > 100).count();
    assert!(
        numbers.contains(&100) && (before == after || before == after + 1),
        "{numbers:?}"
    );
    assert!(
        block.contains(&format!(
            "… {listed} of 120 chapters listed; list_chapters lists them all."
        )),
        "{block}"
    );
    // The short lines are always there.
    for line in [
        "Project: \"Saga\"",
        "Active chapter",
        "Cursor:",
        "Story bible",
        "Toolset: all.",
    ] {
        assert!(block.contains(line), "{line}");
    }

    // A larger budget lists more and shows more of the texts.
    let big = editor_context_block(&project, &Bible::new(), "all", 4_000);
    assert!(estimate_tokens(&big) <= 4_000);
    assert!(big.matches("\"Chapter title number").count() >= listed);
    assert!(big.len() > block.len());
}

#[test]
fn the_budget_is_never_exceeded_and_degrades_in_order() {
    let mut project = project();
    project.ui.selection = Some((0, CH1.chars().count()));
    let bible = bible();
    let full = editor_context_block(&project, &bible, "all", 10_000);
    let short_lines = [
        "Project:",
        "Active chapter",
        "Cursor:",
        "Toolset:",
        "Story bible:",
        "Main characters",
    ];
    let mut seen_texts = false;
    for budget in 0..=600 {
        let block = editor_context_block(&project, &bible, "all", budget);
        assert!(
            estimate_tokens(&block) <= budget,
            "budget {budget}: {block}"
        );
        if block.is_empty() {
            continue;
        }
        // The selection, the paragraph and the chapter list give way before the short lines.
        let texts = block.contains("Selected text")
            || block.contains("Paragraph at")
            || block.contains("Chapters (");
        if texts {
            seen_texts = true;
            for line in short_lines {
                assert!(
                    block.contains(line),
                    "budget {budget}: {line} missing\n{block}"
                );
            }
        }
    }
    assert!(seen_texts);
    assert!(
        full.contains("Selected text")
            && full.contains("Paragraph at")
            && full.contains("Chapters (")
    );
    assert_eq!(editor_context_block(&project, &bible, "all", 10_000), full);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn any_state_fits_the_budget(
        text in "[a-cé\n\r ]{0,300}",
        cursor in 0usize..400,
        sel in proptest::option::of((0usize..400, 0usize..400)),
        budget in 0usize..300,
    ) {
        let mut project = Project::new("p", "P", vec![Chapter::new("c", "C", &text)]);
        project.ui.cursor = cursor;
        project.ui.selection = sel;
        let block = editor_context_block(&project, &Bible::new(), "all", budget);
        prop_assert!(estimate_tokens(&block) <= budget);
    }
}

#[test]
fn a_runs_first_request_carries_the_block_between_the_instructions_and_the_memory() {
    let page = Page::new(vec![says("I see it.")]);
    let chapter = page.project();
    page.configure();
    page.ok(
        "execute",
        json!({"tool": "set_selection", "args": {"text": "The lamp was dark."}}),
    );
    let result = page.ok(
        "run",
        json!({"prompt": "What is selected?", "toolset": "quick"}),
    );
    assert_eq!(result["status"], "finished");
    let first: Value = serde_json::from_str(&page.transport.0.requests()[0].body).unwrap();
    let system = first["messages"][0]["content"].as_str().unwrap();
    let instructions = system.find("You are a writing assistant").unwrap();
    let editor = system.find("[EDITOR CONTEXT]").expect("editor context");
    let editor_end = system.find("[/EDITOR CONTEXT]").unwrap();
    let memory = system.find("[AGENT MEMORY]").expect("memory block");
    assert!(
        instructions < editor && editor < editor_end && editor_end < memory,
        "{system}"
    );
    let block = &system[editor..editor_end];
    assert!(block.contains("Project: \"Lighthouse\""), "{block}");
    assert!(
        block.contains(&format!("(id {chapter}, version 0")),
        "{block}"
    );
    assert!(
        block.contains("\"\"\"\nThe lamp was dark.\n\"\"\""),
        "{block}"
    );
    assert!(block.contains("Toolset: quick."), "{block}");
    // The writer's prompt is the last message, outside the system prompt.
    assert!(!system.contains("What is selected?"));
}
