//! The editor's positions (cursor, selection, scroll, highlights) follow every change applied
//! to a chapter: tool edits, writer changes, undo, redo and scoped undo; a failing command
//! leaves them as they were. Then the selection tools act on what the writer selected even
//! after an earlier edit in the same turn, in a session and in a run.
#![cfg(not(target_arch = "wasm32"))]

use std::cell::RefCell;
use std::rc::Rc;

use draftsmith::commands::{Origin, OriginFilter};
use draftsmith::project::changeset::ChangeSet;
use draftsmith::project::{Chapter, Highlight};
use draftsmith::session::EditContext;
use draftsmith::tools::generation::{finish, plan, Finish, Finished};
use draftsmith::tools::Command;
use draftsmith::tools::ToolError;
use serde_json::{json, Value};

mod common;
use common::page::*;

const CH1: &str = "Mara climbed the stair. The lamp was dark. Nobody answered.";
const CH2: &str = "Morning came grey over Greyhaven.";

type T = common::session::Harness;

fn pos(haystack: &str, needle: &str) -> usize {
    haystack[..haystack.find(needle).unwrap()].chars().count()
}

impl T {
    fn new() -> Self {
        Self::project(
            "Test",
            vec![
                Chapter::new("c1", "The Stair", CH1),
                Chapter::new("c2", "Morning", CH2),
            ],
        )
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        let r = self.result_of(Origin::Agent("editor".into()), "call", tool, args);
        assert_eq!(r["status"], "success", "{tool}: {r}");
        r["data"].clone()
    }

    fn text(&self, id: &str) -> String {
        self.s.project.chapter(id).unwrap().text().to_string()
    }

    fn selected(&self) -> String {
        let (s, e) = self.s.project.ui.selection.unwrap();
        self.s.project.chapter("c1").unwrap().slice(s, e)
    }

    /// An agent's command inserts `text` at `at` of chapter c1.
    fn insert_at(&mut self, at: usize, text: &str) {
        let out = self.s.execute_command(
            None,
            "insert_at",
            Box::new(InsertAt(at, text.to_string())),
            Origin::Agent("editor".into()),
            &self.clock,
            &self.ids,
        );
        assert!(out.result.is_success(), "{:?}", out.result);
    }

    /// The writer replaces `start..end` of a chapter with `text`, at its current version.
    fn type_at(&mut self, chapter: &str, start: usize, end: usize, text: &str) {
        let c = self.s.project.chapter(chapter).unwrap();
        let change = ChangeSet::replace(c.len_chars(), start, end, text).unwrap();
        let version = c.version();
        self.s
            .apply_user_change(chapter, version, change, &self.clock, &self.ids)
            .unwrap();
    }
}

#[test]
fn a_selection_keeps_its_text_through_edits_around_it() {
    let mut t = T::new();
    t.call("set_selection", json!({"text": "The lamp was dark."}));
    // An agent's turn: an edit before it, one right at its start, and one right at its end.
    t.s.history
        .begin_group(Origin::Agent("editor".into()), &t.ids);
    t.call(
        "update_manuscript",
        json!({"searchText": "Mara climbed", "replacementText": "Old Mara slowly climbed"}),
    );
    assert_eq!(t.selected(), "The lamp was dark.");
    t.call(
        "insert_text",
        json!({"text": "Then: ", "anchorText": "The lamp was dark.", "position": "before"}),
    );
    assert_eq!(
        t.selected(),
        "The lamp was dark.",
        "text at its start stays out"
    );
    t.call(
        "insert_text",
        json!({"text": " Still.", "anchorText": "The lamp was dark.", "position": "after"}),
    );
    assert_eq!(
        t.selected(),
        "The lamp was dark.",
        "text at its end stays out"
    );
    assert!(t.text("c1").contains("Then: The lamp was dark. Still."));
    // The cursor (at the selection's end) followed too; the scroll position (set at the
    // selection's start) stays before text inserted at it.
    let (s, e) = t.s.project.ui.selection.unwrap();
    assert_eq!(t.s.project.ui.cursor, e);
    assert_eq!(t.s.project.ui.scroll, s - "Then: ".len());
    t.s.history.close_group();
    // The writer's typing before it.
    let after_stair = pos(&t.text("c1"), "stair.") + "stair.".len();
    t.type_at("c1", after_stair, after_stair, " Quiet.");
    assert_eq!(t.selected(), "The lamp was dark.");
    // Undo, redo and a scoped undo of the agent's turn all keep it.
    t.s.undo(None, Origin::User, &t.clock, &t.ids).unwrap();
    assert_eq!(t.selected(), "The lamp was dark.");
    t.s.redo().unwrap();
    assert_eq!(t.selected(), "The lamp was dark.");
    t.s.undo(
        Some(&"agent".parse::<OriginFilter>().unwrap()),
        Origin::User,
        &t.clock,
        &t.ids,
    )
    .unwrap();
    assert_eq!(t.text("c1"), CH1.replace("stair.", "stair. Quiet."));
    assert_eq!(t.selected(), "The lamp was dark.");
}

#[test]
fn a_deleted_selection_collapses_and_an_empty_one_stays_empty() {
    let mut t = T::new();
    t.call("set_selection", json!({"text": "The lamp was dark. "}));
    t.call(
        "delete_text",
        json!({"text": "stair. The lamp was dark. Nobody"}),
    );
    let (s, e) = t.s.project.ui.selection.unwrap();
    assert_eq!(s, e, "collapsed");
    assert_eq!(s, pos(CH1, "stair."));
    // An empty selection (a caret) stays empty, before an agent's text inserted at it...
    t.insert_at(s, "XYZ");
    assert_eq!(t.s.project.ui.selection, Some((s, s)));
    assert_eq!(t.s.project.ui.cursor, s);
    // ...and after the writer's own typing at it (they type at their caret).
    t.type_at("c1", s, s, "ab");
    assert_eq!(t.s.project.ui.selection, Some((s + 2, s + 2)));
    assert_eq!(t.s.project.ui.cursor, s + 2);
    // A selection replaced as a whole collapses too.
    t.call("set_selection", json!({"text": "Mara"}));
    t.call(
        "update_manuscript",
        json!({"searchText": "Mara", "replacementText": "Ilse"}),
    );
    let (s, e) = t.s.project.ui.selection.unwrap();
    assert_eq!(s, e);
}

#[test]
fn highlights_follow_their_chapter_and_go_with_their_text() {
    let mut t = T::new();
    t.call("highlight_text", json!({"text": "Nobody answered."}));
    t.call(
        "highlight_text",
        json!({"text": "Greyhaven", "chapter": "c2"}),
    );
    t.call("highlight_text", json!({"text": "stair"}));
    let hl = |t: &T, i: usize| -> String {
        let h: &Highlight = &t.s.project.ui.highlights[i];
        t.s.project
            .chapter(&h.chapter)
            .unwrap()
            .slice(h.start, h.end)
    };
    // An edit in the other chapter (not the active one) moves its highlight only.
    t.call(
        "update_manuscript",
        json!({"chapter": "2", "searchText": "Morning", "replacementText": "The long morning"}),
    );
    assert_eq!(hl(&t, 1), "Greyhaven");
    assert_eq!(hl(&t, 0), "Nobody answered.");
    // Deleting a highlight's text removes it; the others keep their text.
    t.call("delete_text", json!({"text": "stair"}));
    assert_eq!(t.s.project.ui.highlights.len(), 2);
    t.call(
        "update_manuscript",
        json!({"searchText": "The lamp", "replacementText": "A lamp, unlit,"}),
    );
    assert_eq!(hl(&t, 0), "Nobody answered.");
    assert_eq!(hl(&t, 1), "Greyhaven");
    // The active chapter's cursor did not move for the other chapter's edit.
    let cursor = t.s.project.ui.cursor;
    t.call(
        "append_to_manuscript",
        json!({"chapter": "2", "text": " Rain."}),
    );
    assert_eq!(t.s.project.ui.cursor, cursor);
}

/// A command that inserts text at a char position of chapter c1.
struct InsertAt(usize, String);

impl Command for InsertAt {
    fn execute(self: Box<Self>, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let len = cx.project().chapter("c1").unwrap().len_chars();
        cx.edit(
            "c1",
            ChangeSet::replace(len, self.0, self.0, &self.1).unwrap(),
        )?;
        Ok(json!({}))
    }
}

/// A command that edits, then fails.
struct EditThenFail;

impl Command for EditThenFail {
    fn execute(self: Box<Self>, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        let len = cx.project().chapter("c1").unwrap().len_chars();
        cx.edit(
            "c1",
            ChangeSet::replace(len, 0, 4, "Someone called").unwrap(),
        )?;
        Err(ToolError::new("failed", "on purpose"))
    }
}

#[test]
fn a_failing_command_leaves_the_positions_as_they_were() {
    let mut t = T::new();
    t.call("set_selection", json!({"text": "The lamp was dark."}));
    t.call("highlight_text", json!({"text": "Nobody"}));
    let before = t.s.clone();
    let out = t.s.execute_command(
        None,
        "edit_then_fail",
        Box::new(EditThenFail),
        Origin::Agent("editor".into()),
        &t.clock,
        &t.ids,
    );
    assert!(!out.result.is_success());
    assert!(t.s == before, "the text and the UI state are as they were");
}

#[test]
fn the_selection_tools_act_on_the_selection_after_an_earlier_edit_in_the_turn() {
    let mut t = T::new();
    t.call("set_selection", json!({"text": "The lamp was dark."}));
    // Earlier in the turn: an agent's edit and the writer's typing before the selection.
    t.call(
        "update_manuscript",
        json!({"searchText": "Mara climbed", "replacementText": "Mara, tired, climbed"}),
    );
    t.type_at("c1", 0, 0, "Late. ");

    let critique = t.call("get_critique_for_selection", json!({"focus": "prose"}));
    assert_eq!(critique["excerpt"], "The lamp was dark.");

    let p = plan(
        &t.registry,
        "rewrite_selection",
        json!({"instruction": "make it ominous"}),
        &t.s,
    )
    .unwrap();
    assert!(
        p.prompt.contains("<<<\nThe lamp was dark.\n>>>"),
        "{}",
        p.prompt
    );
    let Finish::Replace { original, .. } = &p.finish else {
        panic!("{:?}", p.finish)
    };
    assert_eq!(original, "The lamp was dark.");
    let Finished::Command(command) = finish(p.finish, "The lamp had gone out.").unwrap() else {
        panic!("expected an edit");
    };
    let out = t.s.execute_command(
        None,
        "rewrite_selection",
        command,
        Origin::Agent("editor".into()),
        &t.clock,
        &t.ids,
    );
    assert!(out.result.is_success(), "{:?}", out.result);
    assert_eq!(
        t.text("c1"),
        "Late. Mara, tired, climbed the stair. The lamp had gone out. Nobody answered."
    );
    assert_eq!(t.selected(), "The lamp had gone out.");

    // continue_writing goes on at the cursor, which followed the edits too.
    t.call("set_selection", json!({"text": "Nobody answered."}));
    t.call(
        "update_manuscript",
        json!({"searchText": "Late. ", "replacementText": ""}),
    );
    let p = plan(
        &t.registry,
        "continue_writing",
        json!({"length": "sentence"}),
        &t.s,
    )
    .unwrap();
    let Finished::Command(command) = finish(p.finish, "The wind answered instead.").unwrap() else {
        panic!("expected an edit");
    };
    let out = t.s.execute_command(
        None,
        "continue_writing",
        command,
        Origin::Agent("editor".into()),
        &t.clock,
        &t.ids,
    );
    assert!(out.result.is_success(), "{:?}", out.result);
    assert!(
        t.text("c1")
            .ends_with("Nobody answered. The wind answered instead."),
        "{}",
        t.text("c1")
    );
}

/// The text between the `<<<` and `>>>` lines of a generation prompt (the passage to
/// rewrite), read from the last user message of an OpenAI-format request.
fn passage_in(request: &Value) -> Option<String> {
    let messages = request["messages"].as_array()?;
    let prompt = messages.iter().rev().find(|m| m["role"] == "user")?["content"].as_str()?;
    let start = prompt.find("PASSAGE:\n<<<\n")? + "PASSAGE:\n<<<\n".len();
    let end = start + prompt[start..].find("\n>>>")?;
    Some(prompt[start..end].to_string())
}

#[test]
fn in_a_run_rewrite_selection_rewrites_what_the_writer_selected_after_an_earlier_edit() {
    let seen: Rc<RefCell<Vec<String>>> = Rc::default();
    let seen_in_step = seen.clone();
    let page = Page::reacting(vec![
        // Step 1: an edit before the selection, changing its position.
        Box::new(|_: &Value| {
            calls(
                "call_1",
                "update_manuscript",
                json!({"searchText": "Mara climbed", "replacementText": "Mara, who was tired, climbed"}),
            )
        }),
        // Step 2: rewrite the selection.
        Box::new(|_: &Value| {
            calls(
                "call_2",
                "rewrite_selection",
                json!({"instruction": "make it ominous"}),
            )
        }),
        // The nested model call: answer with the passage it was given, made ominous.
        Box::new(move |request: &Value| {
            let passage = passage_in(request).unwrap_or_default();
            seen_in_step.borrow_mut().push(passage.clone());
            says(&passage.replace("dark", "dark as a grave"))
        }),
        Box::new(|_: &Value| says("Done.")),
    ]);
    let chapter = page.project();
    page.configure();
    page.ok(
        "execute",
        json!({"tool": "set_selection", "args": {"text": "The lamp was dark."}}),
    );
    let result = page.ok("run", json!({"prompt": "Make the selection ominous."}));
    assert_eq!(result["status"], "finished", "{result}");
    assert_eq!(seen.borrow().as_slice(), ["The lamp was dark."]);
    assert_eq!(
        page.text(),
        "Mara, who was tired, climbed the stair. The lamp was dark as a grave."
    );
    // Positions moved only by the mapping are not announced as `ui` events (the page maps
    // its editor through the `edit` events itself); the rewrite's new selection is.
    let ui_events: Vec<Value> = page
        .events
        .peek()
        .into_iter()
        .filter(|e| e.kind == "ui")
        .map(|e| e.data)
        .collect();
    assert_eq!(
        ui_events.len(),
        2,
        "set_selection and the rewrite: {ui_events:?}"
    );
    // The selection, as saved with the project (positions are saved lazily: with the next
    // checkpoint, which the worker asks for when the writer is idle), covers the rewritten
    // passage.
    page.ok("checkpoint", json!({}));
    let other = Page::on(page.store.clone(), vec![], Rc::new(NeverSleeper));
    let list = other.ok("list_projects", json!({}));
    let project = other.ok("open_project", json!({"id": list["projects"][0]["id"]}));
    assert_eq!(project["ui"]["active_chapter"], chapter);
    let (s, e) = (
        project["ui"]["selection"][0].as_u64().unwrap() as usize,
        project["ui"]["selection"][1].as_u64().unwrap() as usize,
    );
    let text: Vec<char> = page.text().chars().collect();
    assert_eq!(
        text[s..e].iter().collect::<String>(),
        "The lamp was dark as a grave."
    );
}
