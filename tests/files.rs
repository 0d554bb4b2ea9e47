//! The `data/` file tools: `read_file`, `write_file`, `edit_file`, `list_files`,
//! `search_code`, and how their writes land (chapters as one undoable edit, the story bible
//! through its approval rules, free files atomically, saved and exported with the project).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use draftsmith::commands::{Origin, OriginFilter};
use draftsmith::core::Env;
use draftsmith::project::changeset::ChangeSet;
use draftsmith::project::{Chapter, Project};
use draftsmith::session::{EditContext, Session, ToolCall};
use draftsmith::store::{Batch, MemoryStore, Store, StoreFuture, Table};
use draftsmith::tools::Command;
use draftsmith::tools::{ToolError, ToolRegistry, FILES, VOICE_SAFE};
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures::executor::block_on;
use serde_json::{json, Value};

const CH1: &str = "Mara climbed the stair.\nThe lamp was dark.\nThe wind rose.\n";
const CH2: &str = "Morning came grey over Greyhaven.";

type T = common::session::Harness;

impl T {
    fn new() -> Self {
        Self::project(
            "Lighthouse",
            vec![
                Chapter::new("c1", "The Stair", CH1),
                Chapter::new("c2", "Morning, Grey!", CH2),
            ],
        )
    }

    fn call_as(&mut self, origin: Origin, tool: &str, args: Value) -> Value {
        self.result_of(origin, "call", tool, args)
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.call_as(Origin::Agent("architect".into()), tool, args)
    }

    fn ok(&mut self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args.clone());
        assert_eq!(r["status"], "success", "{tool} {args} -> {r}");
        r
    }

    fn err(&mut self, tool: &str, args: Value) -> (String, String) {
        let r = self.call(tool, args.clone());
        assert_eq!(r["status"], "error", "{tool} {args} -> {r}");
        (
            r["data"]["code"].as_str().unwrap().to_string(),
            r["data"]["message"].as_str().unwrap().to_string(),
        )
    }

    fn text(&self, id: &str) -> String {
        self.s.project.chapter(id).unwrap().text().to_string()
    }

    /// Undo as the writer: plain, or of the origins `scope` names.
    fn undo(&mut self, scope: Option<&str>) -> draftsmith::commands::Moved {
        let filter = scope.map(|s| s.parse::<OriginFilter>().unwrap());
        self.s
            .undo(filter.as_ref(), Origin::User, &self.clock, &self.ids)
            .unwrap()
    }

    fn user_types(&mut self, id: &str, at: usize, text: &str) {
        let chapter = self.s.project.chapter(id).unwrap();
        let (len, version) = (chapter.len_chars(), chapter.version());
        let change = ChangeSet::replace(len, at, at, text).unwrap();
        self.s
            .apply_user_change(id, version, change, &self.clock, &self.ids)
            .unwrap();
    }
}

fn names(listing: &Value) -> Vec<String> {
    listing["data"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect()
}

// ---------------------------------------------------------------------------------------
// The tree and reading
// ---------------------------------------------------------------------------------------

#[test]
fn the_root_lists_the_four_folders() {
    let mut t = T::new();
    for root in ["", ".", "data", "data/"] {
        let r = t.ok("list_files", json!({ "directory": root }));
        assert_eq!(
            names(&r),
            ["manuscripts", "bible", "plans", "notes"],
            "{root:?}"
        );
        for entry in r["data"]["entries"].as_array().unwrap() {
            assert_eq!(entry["type"], "directory");
            assert!(entry["size"].is_u64() && entry["mod_time"].is_u64());
        }
    }
    // The directory argument may be left out: the root.
    let r = t.ok("list_files", json!({}));
    assert_eq!(r["data"]["count"], 4);
    let manuscripts = &r["data"]["entries"][0];
    assert_eq!(manuscripts["size"], CH1.len() + CH2.len());
    assert_eq!(manuscripts["entries"], 2);
}

#[test]
fn chapters_are_numbered_files_resolved_by_number() {
    let mut t = T::new();
    let r = t.ok("list_files", json!({"directory": "manuscripts"}));
    assert_eq!(names(&r), ["01-the-stair.md", "02-morning-grey.md"]);
    let first = &r["data"]["entries"][0];
    assert_eq!(first["path"], "manuscripts/01-the-stair.md");
    assert_eq!(first["type"], "file");
    assert_eq!(first["size"], CH1.len());
    // The slug may be stale or left out; the number decides.
    for path in [
        "manuscripts/02-morning-grey.md",
        "manuscripts/02.md",
        "manuscripts/2-old-title.md",
        "data/manuscripts/02-x.md",
    ] {
        let r = t.ok("read_file", json!({ "path": path }));
        assert_eq!(r["data"]["content"], CH2, "{path}");
        assert_eq!(r["data"]["path"], "manuscripts/02-morning-grey.md");
        assert_eq!(r["data"]["size"], CH2.len());
        assert_eq!(r["data"]["chapter"]["id"], "c2");
    }
    let (code, message) = t.err("read_file", json!({"path": "manuscripts/07-new.md"}));
    assert_eq!(code, "not_found");
    assert!(message.contains("01-the-stair.md"), "{message}");
    let (code, message) = t.err("read_file", json!({"path": "manuscripts/stair.md"}));
    assert_eq!(code, "invalid_args");
    assert!(message.contains("NN-title.md"), "{message}");
}

#[test]
fn a_chapter_file_shows_when_it_last_changed() {
    let mut t = T::new();
    let r = t.ok("read_file", json!({"path": "manuscripts/01.md"}));
    assert_eq!(r["data"]["mod_time"], 0, "never edited");
    t.clock.set(7_000);
    t.ok(
        "edit_file",
        json!({"path": "manuscripts/01.md", "search_text": "dark", "replace_text": "lit"}),
    );
    let r = t.ok("list_files", json!({"directory": "manuscripts"}));
    assert_eq!(r["data"]["entries"][0]["mod_time"], 7_000);
    assert_eq!(r["data"]["entries"][1]["mod_time"], 0);
}

#[test]
fn more_than_99_chapters_get_three_digits() {
    let chapters = (1..=120)
        .map(|i| Chapter::new(format!("c{i}"), format!("Part {i}"), "x"))
        .collect();
    let mut t = T::new();
    t.s = Session::new(Project::new("p", "Long", chapters));
    let r = t.ok("list_files", json!({"directory": "manuscripts"}));
    let names = names(&r);
    assert_eq!(names[0], "001-part-1.md");
    assert_eq!(names[119], "120-part-120.md");
    let r = t.ok("read_file", json!({"path": "manuscripts/7.md"}));
    assert_eq!(r["data"]["path"], "manuscripts/007-part-7.md");
}

#[test]
fn bible_entries_are_json_files_with_their_origins() {
    let mut t = T::new();
    t.call_as(
        Origin::User,
        "write_file",
        json!({"path": "bible/character/mara.json", "content": r#"{"name_src": "Mara", "notes": "Fears the dark."}"#}),
    );
    let r = t.ok("list_files", json!({"directory": "bible"}));
    assert!(names(&r).contains(&"character".to_string()));
    let character = r["data"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "character")
        .unwrap()
        .clone();
    assert_eq!(character["entries"], 1);
    let r = t.ok("list_files", json!({"directory": "bible/character"}));
    assert_eq!(names(&r), ["mara.json"]);
    let r = t.ok("read_file", json!({"path": "bible/character/mara.json"}));
    let entry: Value = serde_json::from_str(r["data"]["content"].as_str().unwrap()).unwrap();
    assert_eq!(entry["name_src"], "Mara");
    assert_eq!(entry["notes_origin"], "human");
    assert_eq!(entry["kind"], "character");
    assert!(
        r["data"]["content"].as_str().unwrap().contains("\n  \""),
        "pretty"
    );
    let (code, _) = t.err("read_file", json!({"path": "bible/character/nobody.json"}));
    assert_eq!(code, "not_found");
    let (code, message) = t.err("read_file", json!({"path": "bible/wizard/x.json"}));
    assert_eq!(code, "invalid_args");
    assert!(message.contains("character"), "{message}");
}

// ---------------------------------------------------------------------------------------
// Free files
// ---------------------------------------------------------------------------------------

#[test]
fn write_file_creates_folders_and_overwrites_completely() {
    let mut t = T::new();
    t.clock.set(5_000);
    let r = t.ok(
        "write_file",
        json!({"path": "plans/book one/act1/outline.md", "content": "1. Mara climbs.\n2. The lamp."}),
    );
    assert_eq!(r["data"]["created"], true);
    assert_eq!(r["data"]["origin"], "agent:architect");
    assert_eq!(
        r["meta"]["bytes_written"],
        "1. Mara climbs.\n2. The lamp.".len()
    );
    assert_eq!(
        r["meta"]["execution_time"].as_f64().unwrap() * 1000.0,
        r["meta"]["execution_time_ms"].as_f64().unwrap()
    );
    let r = t.ok("list_files", json!({"directory": "plans"}));
    assert_eq!(names(&r), ["book one"]);
    assert_eq!(r["data"]["entries"][0]["type"], "directory");
    assert_eq!(r["data"]["entries"][0]["mod_time"], 5_000);
    let r = t.ok("list_files", json!({"directory": "plans/book one/act1/"}));
    assert_eq!(names(&r), ["outline.md"]);
    assert_eq!(r["data"]["entries"][0]["size"], 28);
    // Overwrite completely, as the writer.
    t.clock.set(6_000);
    let r = t.call_as(
        Origin::User,
        "write_file",
        json!({"path": "plans/book one/act1/outline.md", "content": "short"}),
    );
    assert_eq!(r["data"]["created"], false);
    let r = t.ok(
        "read_file",
        json!({"path": "plans/book one/act1/outline.md"}),
    );
    assert_eq!(r["data"]["content"], "short");
    assert_eq!(r["data"]["size"], 5);
    assert_eq!(r["data"]["mod_time"], 6_000);
    assert_eq!(r["data"]["origin"], "human");
    // Free files are in the undo history: undo puts the agent's version back (its time and
    // origin too), redo the writer's.
    let path = json!({"path": "plans/book one/act1/outline.md"});
    let moved = t.s.undo(None, Origin::User, &t.clock, &t.ids).unwrap();
    assert_eq!(moved.files, ["plans/book one/act1/outline.md"]);
    let r = t.ok("read_file", path.clone());
    assert_eq!(r["data"]["content"], "1. Mara climbs.\n2. The lamp.");
    assert_eq!(r["data"]["mod_time"], 5_000);
    assert_eq!(r["data"]["origin"], "agent:architect");
    t.s.redo().unwrap();
    let r = t.ok("read_file", path);
    assert_eq!(r["data"]["content"], "short");
    assert_eq!(r["data"]["origin"], "human");
    // A folder is not a file, and a file is not a folder.
    let (code, _) = t.err(
        "write_file",
        json!({"path": "plans/book one", "content": "x"}),
    );
    assert_eq!(code, "invalid_args");
    let (code, _) = t.err(
        "write_file",
        json!({"path": "plans/book one/act1/outline.md/x.md", "content": "x"}),
    );
    assert_eq!(code, "invalid_args");
    let (code, _) = t.err("read_file", json!({"path": "plans/book one"}));
    assert_eq!(code, "not_found");
    let (code, _) = t.err("read_file", json!({"path": "notes/none.md"}));
    assert_eq!(code, "not_found");
    let (code, _) = t.err("list_files", json!({"directory": "notes/none"}));
    assert_eq!(code, "not_found");
    let r = t.ok("list_files", json!({"directory": "notes"}));
    assert_eq!(r["data"]["count"], 0);
}

#[test]
fn edit_file_replaces_the_first_occurrence_only() {
    let mut t = T::new();
    t.ok(
        "write_file",
        json!({"path": "notes/todo.md", "content": "- fix\n- fix\n- ship"}),
    );
    let r = t.ok(
        "edit_file",
        json!({"path": "notes/todo.md", "search_text": "fix", "replace_text": "done"}),
    );
    assert_eq!(r["meta"]["bytes_written"], 4);
    let r = t.ok("read_file", json!({"path": "notes/todo.md"}));
    assert_eq!(r["data"]["content"], "- done\n- fix\n- ship");
    let (code, message) = t.err(
        "edit_file",
        json!({"path": "notes/todo.md", "search_text": "- shop", "replace_text": "x"}),
    );
    assert_eq!(code, "not_found");
    assert!(message.starts_with("Text not found"), "{message}");
    assert!(
        message.contains("- ship"),
        "names the closest text: {message}"
    );
    let (code, _) = t.err(
        "edit_file",
        json!({"path": "notes/todo.md", "search_text": "", "replace_text": "x"}),
    );
    assert_eq!(code, "invalid_args");
    // Chapters too: first occurrence only.
    t.ok(
        "edit_file",
        json!({"path": "manuscripts/01.md", "search_text": "The", "replace_text": "A"}),
    );
    assert_eq!(t.text("c1"), CH1.replacen("The", "A", 1));
    let (code, message) = t.err(
        "edit_file",
        json!({"path": "manuscripts/01.md", "search_text": "The lamp was bright.", "replace_text": "x"}),
    );
    assert_eq!(code, "not_found");
    assert!(message.starts_with("Text not found"), "{message}");
    assert!(message.contains("lamp was dark."), "{message}");
}

/// A command that writes a free file, then fails.
struct WriteThenFail;

impl Command for WriteThenFail {
    fn execute(self: Box<Self>, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        cx.write_file("plans/outline.md", "clobbered".into())?;
        cx.write_file("plans/new.md", "new".into())?;
        Err(ToolError::new("failed", "on purpose"))
    }
}

#[test]
fn a_failed_call_rolls_its_file_writes_back() {
    let mut t = T::new();
    t.ok(
        "write_file",
        json!({"path": "plans/outline.md", "content": "original"}),
    );
    let before = t.s.clone();
    let out = t.s.execute_command(
        None,
        "write_then_fail",
        Box::new(WriteThenFail),
        Origin::Agent("a".into()),
        &t.clock,
        &t.ids,
    );
    assert!(!out.result.is_success());
    assert!(out.files.is_empty());
    assert_eq!(t.s, before);
    // Too large a file changes nothing either.
    let big = "x".repeat(draftsmith::files::MAX_FILE_BYTES + 1);
    let (code, message) = t.err(
        "write_file",
        json!({"path": "plans/outline.md", "content": big}),
    );
    assert_eq!(code, "invalid_args");
    assert!(message.contains("at most"), "{message}");
    assert_eq!(t.s, before);
}

// ---------------------------------------------------------------------------------------
// Chapter writes
// ---------------------------------------------------------------------------------------

#[test]
fn a_chapter_write_is_one_undoable_agent_entry_of_what_changed() {
    let mut t = T::new();
    let new = CH1.replace("The lamp was dark.", "The lamp flickered.");
    let r = t.ok(
        "write_file",
        json!({"path": "manuscripts/01-the-stair.md", "content": new}),
    );
    assert_eq!(r["data"]["chapter"]["version"], 1);
    assert_eq!(r["meta"]["bytes_written"], new.len());
    assert!(r["meta"]["command_id"].is_string());
    assert_eq!(t.text("c1"), new);
    let entries = t.s.history.entries();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].origin, Origin::Agent("architect".into()));
    assert_eq!(entries[0].command.as_deref(), Some("write_file"));
    assert!(entries[0]
        .description
        .contains("manuscripts/01-the-stair.md"));
    // Only the changed words were replaced, not the whole chapter.
    use draftsmith::project::changeset::Op;
    assert_eq!(
        entries[0].effects[0].change.ops(),
        [
            Op::Retain(33),
            Op::Insert("flickered".into()),
            Op::Delete(8),
            Op::Retain(17)
        ]
    );
    // Writing the same text again changes nothing and records nothing.
    let r = t.ok(
        "write_file",
        json!({"path": "manuscripts/01.md", "content": new}),
    );
    assert_eq!(r["data"]["unchanged"], true);
    assert_eq!(t.s.history.entries().len(), 1);
    // Plain undo takes it back.
    t.s.undo(None, Origin::User, &t.clock, &t.ids).unwrap();
    assert_eq!(t.text("c1"), CH1);
}

#[test]
fn writing_the_next_chapter_file_creates_the_chapter_in_one_undoable_entry() {
    for (path, content, title) in [
        (
            "manuscripts/ch03.md",
            "# The Storm\n\nRain hit the glass.\n",
            "The Storm",
        ),
        (
            "manuscripts/03-the-long-night.md",
            "Rain hit the glass.",
            "The long night",
        ),
        (
            "manuscripts/chapter-3.md",
            "Rain hit the glass.",
            "Chapter 3",
        ),
    ] {
        let mut t = T::new();
        let r = t.ok("write_file", json!({ "path": path, "content": content }));
        assert_eq!(r["data"]["created"], true, "{path}");
        assert_eq!(r["data"]["chapter"]["number"], 3, "{path}");
        assert_eq!(r["data"]["chapter"]["title"], title, "{path}");
        let chapters = &t.s.project.chapters;
        assert_eq!(chapters.len(), 3);
        assert_eq!(chapters[2].title, title);
        assert_eq!(chapters[2].text().to_string(), content);
        let r = t.ok("read_file", json!({"path": "manuscripts/03.md"}));
        assert_eq!(r["data"]["content"], content);
        // One entry, with the agent's origin, holding the chapter and its text.
        let entries = t.s.history.entries();
        assert_eq!(entries.len(), 1, "{path}");
        assert_eq!(entries[0].origin, Origin::Agent("architect".into()));
        assert_eq!(entries[0].chapters.len(), 1);
        assert!(entries[0].description.contains("manuscripts/03-"), "{path}");
        // Plain undo takes the chapter away; redo brings it back, text and title.
        let moved = t.undo(None);
        assert_eq!(moved.removed.len(), 1);
        assert_eq!(t.s.project.chapters.len(), 2, "{path}");
        assert_eq!(t.text("c1"), CH1);
        let moved = t.s.redo().unwrap();
        assert_eq!(moved.added.len(), 1);
        let chapters = &t.s.project.chapters;
        assert_eq!(chapters.len(), 3);
        assert_eq!(chapters[2].title, title);
        assert_eq!(chapters[2].text().to_string(), content);
        // Undo by origin takes it away too.
        let moved = t.undo(Some("agent"));
        assert_eq!(moved.removed.len(), 1);
        assert_eq!(t.s.project.chapters.len(), 2, "{path}");
        // And plain undo of that revert brings it back.
        t.undo(None);
        assert_eq!(t.s.project.chapters.len(), 3, "{path}");
        assert_eq!(t.s.project.chapters[2].text().to_string(), content);
    }
}

#[test]
fn a_chapter_number_past_the_next_is_refused_and_an_existing_one_is_overwritten() {
    let mut t = T::new();
    let before = t.s.clone();
    let (code, message) = t.err(
        "write_file",
        json!({"path": "manuscripts/ch05.md", "content": "# Five\nText."}),
    );
    assert_eq!(code, "not_found");
    assert!(message.contains("has 2 chapters"), "{message}");
    assert!(message.contains("creates the next chapter"), "{message}");
    assert_eq!(t.s, before);
    // edit_file never creates a chapter.
    let (code, _) = t.err(
        "edit_file",
        json!({"path": "manuscripts/03.md", "search_text": "a", "replace_text": "b"}),
    );
    assert_eq!(code, "not_found");
    assert_eq!(t.s, before);
    // An existing number is that chapter: overwritten, no chapter added.
    let r = t.ok(
        "write_file",
        json!({"path": "manuscripts/02-new-title.md", "content": "# New\nMorning."}),
    );
    assert!(r["data"].get("created").is_none(), "{r}");
    assert_eq!(t.s.project.chapters.len(), 2);
    assert_eq!(t.s.project.chapters[1].title, "Morning, Grey!");
    assert_eq!(t.text("c2"), "# New\nMorning.");
}

#[test]
fn the_writers_typing_in_a_new_chapter_keeps_it_through_an_agent_undo() {
    let mut t = T::new();
    t.ok(
        "write_file",
        json!({"path": "manuscripts/03.md", "content": "# Three\nAgent text."}),
    );
    let id = t.s.project.chapters[2].id.clone();
    t.clock.set(10_000);
    t.user_types(&id, 0, "Mine. ");
    t.undo(Some("agent"));
    assert_eq!(t.s.project.chapters.len(), 3);
    assert_eq!(t.text(&id), "Mine. ");
}

#[test]
fn the_writers_later_typing_survives_undo_of_the_agent_write() {
    let mut t = T::new();
    let new = CH1.replace("The wind rose.", "The wind howled.");
    t.ok(
        "write_file",
        json!({"path": "manuscripts/01.md", "content": new}),
    );
    t.s.history.close_group();
    // The writer types at the start, after the agent's write.
    t.clock.set(60_000);
    t.user_types("c1", 0, "Night. ");
    assert_eq!(t.text("c1"), format!("Night. {new}"));
    t.s.undo(
        Some(&OriginFilter::AnyAgent),
        Origin::User,
        &t.clock,
        &t.ids,
    )
    .unwrap();
    assert_eq!(t.text("c1"), format!("Night. {CH1}"));
}

#[test]
fn a_chapter_file_past_the_next_number_is_not_created() {
    let mut t = T::new();
    let before = t.s.clone();
    let (code, message) = t.err(
        "write_file",
        json!({"path": "manuscripts/04-new.md", "content": "A new chapter."}),
    );
    assert_eq!(code, "not_found");
    assert!(message.contains("manuscripts/03-"), "{message}");
    assert_eq!(t.s, before);
    let (code, _) = t.err(
        "write_file",
        json!({"path": "manuscripts/sub/01.md", "content": "x"}),
    );
    assert_eq!(code, "invalid_args");
}

// ---------------------------------------------------------------------------------------
// Bible writes
// ---------------------------------------------------------------------------------------

fn with_mara(t: &mut T) {
    let r = t.call_as(
        Origin::User,
        "write_file",
        json!({"path": "bible/character/mara.json", "content": r#"{"name_src": "Mara", "notes": "Fears the sea."}"#}),
    );
    assert_eq!(r["status"], "success", "{r}");
}

#[test]
fn a_bible_write_to_a_human_field_asks_the_writer() {
    let mut t = T::new();
    with_mara(&mut t);
    let before = t.s.clone();
    let r = t.ok("read_file", json!({"path": "bible/character/mara.json"}));
    let content = r["data"]["content"].as_str().unwrap().to_string();
    // edit_file on the JSON: the notes are the writer's.
    let r = t.call(
        "edit_file",
        json!({"path": "bible/character/mara.json", "search_text": "Fears the sea.", "replace_text": "Loves the sea."}),
    );
    assert_eq!(r["data"]["code"], "approval_required", "{r}");
    assert_eq!(r["data"]["details"]["fields"][0]["field"], "notes");
    assert_eq!(r["data"]["details"]["fields"][0]["current_origin"], "human");
    assert_eq!(t.s, before);
    // An empty field is the agent's to fill; unchanged fields (the writer's) are not asked.
    let filled = content.replace("\"pronouns\": null", "\"pronouns\": \"she/her\"");
    assert_ne!(filled, content);
    let r = t.ok(
        "write_file",
        json!({"path": "bible/character/mara.json", "content": filled}),
    );
    assert_eq!(r["data"]["changed"], json!(["pronouns"]));
    let mara =
        t.s.bible
            .get(draftsmith::bible::Kind::Character, "mara")
            .unwrap();
    assert_eq!(mara.origin("pronouns"), Some("agent:architect:1970-01-01"));
    assert_eq!(mara.origin("notes"), Some("human"));
    // The content read before is stale now: its version no longer matches.
    let (code, message) = t.err(
        "write_file",
        json!({"path": "bible/character/mara.json", "content": content.replace("null", "\"x\"")}),
    );
    assert_eq!(code, "conflict", "{message}");
}

#[test]
fn a_concurrent_bible_update_is_reported() {
    let mut t = T::new();
    with_mara(&mut t);
    t.clock.set(100_000);
    t.call_as(
        Origin::Agent("lore".into()),
        "write_file",
        json!({"path": "bible/character/mara.json", "content": r#"{"pronouns": "she/her"}"#}),
    );
    t.clock.set(105_000);
    let (code, message) = t.err(
        "write_file",
        json!({"path": "bible/character/mara.json", "content": r#"{"pronouns": "they/them"}"#}),
    );
    assert_eq!(code, "concurrent_update");
    assert!(
        message.starts_with("CONCURRENT UPDATE DETECTED"),
        "{message}"
    );
}

#[test]
fn bible_files_follow_the_kinds_policies_and_fields() {
    let mut t = T::new();
    // Creating a character is strict: the writer is asked.
    let before = t.s.clone();
    let (code, _) = t.err(
        "write_file",
        json!({"path": "bible/character/tom.json", "content": r#"{"name_src": "Tom"}"#}),
    );
    assert_eq!(code, "approval_required");
    assert_eq!(t.s, before);
    // Creating a location is permissive.
    let r = t.ok(
        "write_file",
        json!({"path": "bible/location/harbour.json", "content": r#"{"name_src": "The Harbour", "description": "Grey stone."}"#}),
    );
    assert_eq!(r["data"]["created"], true);
    // Unknown fields, a wrong kind or id, and bad JSON are refused.
    for (content, needle) in [
        (r#"{"colour": "red"}"#, "name_src"),
        (r#"{"kind": "character"}"#, "kind"),
        (r#"{"id": "elsewhere"}"#, "id"),
        ("not json", "JSON"),
        ("[1, 2]", "object"),
        (r#"{"description": 3}"#, "string"),
    ] {
        let (code, message) = t.err(
            "write_file",
            json!({"path": "bible/location/harbour.json", "content": content}),
        );
        assert_eq!(code, "invalid_args", "{content}");
        assert!(message.contains(needle), "{content}: {message}");
    }
    // null clears an (agent-written) field; a field left out stays.
    t.ok(
        "write_file",
        json!({"path": "bible/location/harbour.json", "content": r#"{"description": null}"#}),
    );
    let harbour =
        t.s.bible
            .get(draftsmith::bible::Kind::Location, "harbour")
            .unwrap();
    assert!(harbour.get("description").is_null());
    assert_eq!(harbour.get("name_src"), "The Harbour");
    // Context documents are the writer's.
    t.call_as(
        Origin::User,
        "write_file",
        json!({"path": "bible/contextdoc/world.json", "content": r#"{"title": "World", "text": "Islands."}"#}),
    );
    let (code, _) = t.err(
        "edit_file",
        json!({"path": "bible/contextdoc/world.json", "search_text": "Islands.", "replace_text": "Deserts."}),
    );
    assert_eq!(code, "read_only");
}

#[test]
fn a_configured_policy_for_the_file_tool_wins() {
    let mut t = T::new();
    let mut policies = draftsmith::policy::Policies::default();
    policies
        .modes
        .insert("write_file".into(), draftsmith::policy::Mode::Permissive);
    let out = t.s.execute_with(
        &t.registry,
        ToolCall {
            id: None,
            name: "write_file".into(),
            args: json!({"path": "bible/character/tom.json", "content": r#"{"name_src": "Tom"}"#}),
        },
        Origin::Agent("a".into()),
        &t.clock,
        &t.ids,
        draftsmith::session::CallExtras {
            policies: Some(&policies),
            ..Default::default()
        },
    );
    assert!(out.result.is_success(), "{:?}", out.result);
    assert_eq!(out.bible.len(), 1);
}

// ---------------------------------------------------------------------------------------
// search_code
// ---------------------------------------------------------------------------------------

#[test]
fn search_code_finds_lines_with_paths_and_numbers() {
    let mut t = T::new();
    t.ok(
        "write_file",
        json!({"path": "plans/outline.md", "content": "Act one.\nThe lamp goes dark."}),
    );
    // Default: the manuscripts, literal and case-insensitive.
    let r = t.ok("search_code", json!({"query": "the LAMP"}));
    assert_eq!(r["data"]["total"], 1);
    let hit = &r["data"]["results"][0];
    assert_eq!(hit["path"], "manuscripts/01-the-stair.md");
    assert_eq!(hit["line"], 2);
    assert_eq!(hit["column"], 1);
    assert_eq!(hit["text"], "The lamp was dark.");
    // Everywhere.
    let r = t.ok("search_code", json!({"query": "dark", "directory": ""}));
    let paths: Vec<&str> = r["data"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["manuscripts/01-the-stair.md", "plans/outline.md"]);
    assert_eq!(r["data"]["results"][1]["line"], 2);
    // One file, and a regex.
    let r = t.ok(
        "search_code",
        json!({"query": "^(Morning|Mara) \\w+", "regex": true, "directory": "manuscripts"}),
    );
    assert_eq!(r["data"]["total"], 2);
    assert_eq!(r["data"]["regex"], true);
    let r = t.ok(
        "search_code",
        json!({"query": "grey", "directory": "manuscripts/02.md", "case_sensitive": true}),
    );
    assert_eq!(r["data"]["total"], 1);
    // A regex is matched literally unless asked.
    let r = t.ok("search_code", json!({"query": "^Mara"}));
    assert_eq!(r["data"]["total"], 0);
    // Capped, with the count of the rest.
    let many: String = (0..80).map(|i| format!("dark {i}\n")).collect();
    t.ok(
        "write_file",
        json!({"path": "notes/many.md", "content": many}),
    );
    let r = t.ok(
        "search_code",
        json!({"query": "dark", "directory": "notes"}),
    );
    assert_eq!(r["data"]["results"].as_array().unwrap().len(), 50);
    assert_eq!(r["data"]["total"], 80);
    assert_eq!(r["data"]["more"], 30);
    let r = t.ok(
        "search_code",
        json!({"query": "dark", "directory": "notes/many.md", "limit": 5}),
    );
    assert_eq!(r["data"]["results"].as_array().unwrap().len(), 5);
    // Errors name what would work.
    let (code, message) = t.err(
        "search_code",
        json!({"query": "a{1000}{1000}", "regex": true}),
    );
    assert_eq!(code, "invalid_args");
    assert!(message.contains("regular expression"), "{message}");
    let (code, _) = t.err("search_code", json!({"query": "x", "limit": 0}));
    assert_eq!(code, "invalid_args");
    let (code, _) = t.err(
        "search_code",
        json!({"query": "x", "directory": "plans/none"}),
    );
    assert_eq!(code, "not_found");
}

// ---------------------------------------------------------------------------------------
// The registry
// ---------------------------------------------------------------------------------------

#[test]
fn the_file_tools_are_registered_with_the_seeds_names() {
    let registry = ToolRegistry::standard();
    let files: Vec<&str> = registry
        .toolset(FILES)
        .unwrap()
        .iter()
        .map(|d| d.name.as_ref())
        .collect();
    assert_eq!(
        files,
        [
            "read_file",
            "write_file",
            "edit_file",
            "list_files",
            "search_code"
        ]
    );
    let all: Vec<&str> = registry.names().collect();
    for tool in &files {
        assert!(all.contains(tool));
    }
    let params = |name: &str| registry.definition(name).unwrap().parameters.clone();
    assert_eq!(params("read_file")["required"], json!(["path"]));
    assert_eq!(params("write_file")["required"], json!(["path", "content"]));
    assert_eq!(
        params("edit_file")["required"],
        json!(["path", "search_text", "replace_text"])
    );
    assert_eq!(params("search_code")["required"], json!(["query"]));
    assert_eq!(
        params("search_code")["properties"]["directory"]["default"],
        "manuscripts"
    );
    // Reads are voice-safe; writes are not.
    let voice: Vec<&str> = registry
        .toolset(VOICE_SAFE)
        .unwrap()
        .iter()
        .map(|d| d.name.as_ref())
        .collect();
    assert!(voice.contains(&"read_file") && voice.contains(&"search_code"));
    assert!(!voice.contains(&"write_file") && !voice.contains(&"edit_file"));
    for (tool, read_only) in [
        ("read_file", true),
        ("list_files", true),
        ("search_code", true),
        ("write_file", false),
        ("edit_file", false),
    ] {
        assert_eq!(registry.definition(tool).unwrap().read_only, read_only);
    }
}

#[test]
fn every_result_carries_its_execution_time_in_seconds_and_in_ms() {
    let mut t = T::new();
    for (tool, args) in [
        ("read_file", json!({"path": "manuscripts/01.md"})),
        ("navigate_to_text", json!({"query": "lamp"})),
        ("no_such_tool", json!({})),
        ("read_file", json!({"path": "../x"})),
    ] {
        let r = t.call(tool, args);
        assert!(r["meta"]["execution_time"].is_f64(), "{tool}: {r}");
        assert!(r["meta"]["execution_time_ms"].is_u64(), "{tool}: {r}");
    }
    // The seed's `execution_time` is in seconds: 50 ms is 0.05.
    let meta = draftsmith::tools::ResultMeta {
        execution_time_ms: 50,
        ..Default::default()
    };
    let wire = serde_json::to_value(&meta).unwrap();
    assert_eq!(wire["execution_time"], 0.05);
    assert_eq!(wire["execution_time_ms"], 50);
    // Results read back keep the time, from either name.
    let meta: draftsmith::tools::ResultMeta =
        serde_json::from_value(json!({"execution_time": 0.012})).unwrap();
    assert_eq!(meta.execution_time_ms, 12);
    let meta: draftsmith::tools::ResultMeta = serde_json::from_value(wire).unwrap();
    assert_eq!(meta.execution_time_ms, 50);
}

// ---------------------------------------------------------------------------------------
// Through the core: saved with the call, announced, reloaded, exported
// ---------------------------------------------------------------------------------------

/// A store that keeps each committed batch's tables.
#[derive(Default)]
struct Recording {
    inner: MemoryStore,
    batches: RefCell<Vec<Vec<Table>>>,
}

impl Store for Recording {
    fn get<'a>(&'a self, t: Table, k: &'a str) -> StoreFuture<'a, Option<Value>> {
        self.inner.get(t, k)
    }
    fn get_all(&self, t: Table) -> StoreFuture<'_, Vec<Value>> {
        self.inner.get_all(t)
    }
    fn get_by_index<'a>(&'a self, t: Table, i: &'a str, v: Value) -> StoreFuture<'a, Vec<Value>> {
        self.inner.get_by_index(t, i, v)
    }
    fn commit(&self, batch: Batch) -> StoreFuture<'_, ()> {
        self.batches.borrow_mut().push(batch.tables());
        self.inner.commit(batch)
    }
}

struct Page {
    core: Core,
    events: Rc<RecordingSink>,
}

impl Page {
    fn on(store: Rc<dyn Store>) -> Self {
        let events = Rc::new(RecordingSink::default());
        let core = Core::new(Env {
            clock: Rc::new(ManualClock::new(9_000)),
            ids: Rc::new(SequentialIds::new("w")),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: events.clone(),
            store,
        });
        Self { core, events }
    }

    fn send(&self, kind: &str, params: Value) -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        let r: Value = serde_json::from_str(&block_on(self.core.handle_text(&text))).unwrap();
        assert_eq!(r["ok"], true, "{kind} {params} -> {r}");
        r["result"].clone()
    }

    fn tool(&self, tool: &str, args: Value) -> Value {
        self.send(
            "execute",
            json!({"tool": tool, "args": args, "origin": "agent:architect"}),
        )
    }
}

#[test]
fn a_free_file_is_saved_with_its_audit_record_and_announced() {
    let store = Rc::new(Recording::default());
    let page = Page::on(store.clone());
    let project = page.send(
        "create_project",
        json!({"name": "L", "chapters": [{"title": "One", "text": "It was dark."}]}),
    );
    store.batches.borrow_mut().clear();
    let r = page.tool(
        "write_file",
        json!({"path": "plans/outline.md", "content": "Act one."}),
    );
    assert_eq!(r["status"], "success", "{r}");
    let batches = store.batches.borrow().clone();
    assert_eq!(batches.len(), 1, "one batch: {batches:?}");
    assert!(batches[0].contains(&Table::Files) && batches[0].contains(&Table::Audit));
    let key = format!("{}/plans/outline.md", project["id"].as_str().unwrap());
    let record = block_on(store.inner.get(Table::Files, &key))
        .unwrap()
        .unwrap();
    assert_eq!(record["file"]["content"], "Act one.");
    assert_eq!(record["file"]["origin"], "agent:architect");
    let event = page
        .events
        .peek()
        .into_iter()
        .find(|e| e.kind == "files_changed")
        .expect("files_changed");
    assert_eq!(event.data["path"], "plans/outline.md");
    assert_eq!(event.data["origin"], "agent:architect");
    assert_eq!(event.data["project"], project["id"]);
    // A read writes only its audit record.
    store.batches.borrow_mut().clear();
    page.tool("read_file", json!({"path": "plans/outline.md"}));
    assert_eq!(store.batches.borrow().clone(), vec![vec![Table::Audit]]);
}

#[test]
fn free_files_survive_a_reload_an_export_and_an_import() {
    let store: Rc<MemoryStore> = Rc::new(MemoryStore::new());
    let page = Page::on(store.clone());
    let project = page.send(
        "create_project",
        json!({"name": "L", "chapters": [{"title": "One", "text": "It was dark."}]}),
    );
    let id = project["id"].as_str().unwrap().to_string();
    page.tool(
        "write_file",
        json!({"path": "plans/outline.md", "content": "Act one."}),
    );
    page.tool(
        "write_file",
        json!({"path": "notes/a/b.md", "content": "deep"}),
    );
    // A new worker on the same store.
    let reloaded = Page::on(store.clone());
    reloaded.send("open_project", json!({ "id": id }));
    let r = reloaded.tool("read_file", json!({"path": "plans/outline.md"}));
    assert_eq!(r["data"]["content"], "Act one.");
    assert_eq!(r["data"]["origin"], "agent:architect");
    // Export, delete (the files go with the project), import.
    let doc = reloaded.send("export_project", json!({}));
    assert_eq!(doc["files"].as_array().unwrap().len(), 2);
    reloaded.send("delete_project", json!({ "id": id }));
    assert_eq!(store.len(Table::Files), 0, "deleted with the project");
    reloaded.send("import_project", json!({ "document": doc.clone() }));
    assert_eq!(store.len(Table::Files), 2);
    let r = reloaded.tool("read_file", json!({"path": "notes/a/b.md"}));
    assert_eq!(r["data"]["content"], "deep");
    // An export from before free files existed still imports.
    let mut old = doc.clone();
    old.as_object_mut().unwrap().remove("files");
    let fresh = Page::on(Rc::new(MemoryStore::new()));
    fresh.send("import_project", json!({ "document": old }));
    let r = fresh.tool("list_files", json!({"directory": "plans"}));
    assert_eq!(r["data"]["count"], 0);
    // A hostile or repeated path in an export is refused, and nothing is imported.
    for bad in [
        json!([{"path": "../x.md", "content": "", "modTime": 0, "origin": "human"}]),
        json!([{"path": "manuscripts/01.md", "content": "", "modTime": 0, "origin": "human"}]),
        json!([{"path": "plans/a.md", "content": "", "modTime": 0, "origin": "human"},
               {"path": "plans/a.md", "content": "", "modTime": 0, "origin": "human"}]),
        json!([{"path": "plans/a", "content": "", "modTime": 0, "origin": "human"},
               {"path": "plans/a/b.md", "content": "", "modTime": 0, "origin": "human"}]),
    ] {
        let mut doc = doc.clone();
        doc["files"] = bad.clone();
        doc["project"]["id"] = json!("other");
        for chapter in doc["chapters"].as_array_mut().unwrap() {
            chapter["project"] = json!("other");
        }
        let store = Rc::new(MemoryStore::new());
        let page = Page::on(store.clone());
        let text =
            json!({"id": 1, "type": "import_project", "params": {"document": doc}}).to_string();
        let r: Value = serde_json::from_str(&block_on(page.core.handle_text(&text))).unwrap();
        assert_eq!(r["ok"], false, "{bad}");
        assert!(store.is_empty());
    }
}

#[test]
fn a_chapter_write_through_the_core_is_undone_by_plain_undo() {
    let store = Rc::new(MemoryStore::new());
    let page = Page::on(store.clone());
    page.send(
        "create_project",
        json!({"name": "L", "chapters": [{"title": "One", "text": "It was dark."}]}),
    );
    let r = page.tool(
        "write_file",
        json!({"path": "manuscripts/01-one.md", "content": "It was light."}),
    );
    assert_eq!(r["status"], "success", "{r}");
    let edit = page
        .events
        .peek()
        .into_iter()
        .find(|e| e.kind == "edit")
        .expect("an edit event");
    assert_eq!(edit.data["origin"], "agent:architect");
    let reloaded = Page::on(store.clone());
    let id = page.send("list_projects", json!({}))["current"].clone();
    reloaded.send("open_project", json!({ "id": id }));
    assert_eq!(
        reloaded.send("get_chapter", json!({}))["text"],
        "It was light."
    );
    reloaded.send("undo", json!({}));
    assert_eq!(
        reloaded.send("get_chapter", json!({}))["text"],
        "It was dark."
    );
}

#[test]
fn a_chapter_created_through_the_core_persists_and_plain_undo_removes_it() {
    let store = Rc::new(MemoryStore::new());
    let page = Page::on(store.clone());
    page.send(
        "create_project",
        json!({"name": "L", "chapters": [{"title": "One"}]}),
    );
    let r = page.tool(
        "write_file",
        json!({"path": "manuscripts/02-dawn.md", "content": "# Dawn\nLight came."}),
    );
    assert_eq!(r["status"], "success", "{r}");
    let titles = |page: &Page| {
        let listing = page.tool("list_files", json!({"directory": "manuscripts"}));
        names(&listing)
    };
    let reopen = |id: &Value| {
        let page = Page::on(store.clone());
        page.send("open_project", json!({ "id": id }));
        page
    };
    assert_eq!(titles(&page), ["01-one.md", "02-dawn.md"]);
    let id = page.send("list_projects", json!({}))["current"].clone();
    // A new worker on the same store sees it, and undoes it.
    let reloaded = reopen(&id);
    assert_eq!(titles(&reloaded), ["01-one.md", "02-dawn.md"]);
    assert_eq!(
        reloaded.send("get_chapter", json!({"chapter": "2"}))["text"],
        "# Dawn\nLight came."
    );
    reloaded.send("undo", json!({}));
    assert_eq!(titles(&reloaded), ["01-one.md"]);
    // The removal is saved too; redo brings the chapter back, saved again.
    let third = reopen(&id);
    assert_eq!(titles(&third), ["01-one.md"]);
    let r = third.send("redo", json!({}));
    assert_eq!(r["applied"].as_array().map(Vec::len), Some(1), "{r}");
    let fourth = reopen(&id);
    assert_eq!(titles(&fourth), ["01-one.md", "02-dawn.md"]);
    assert_eq!(
        fourth.send("get_chapter", json!({"chapter": "2"}))["text"],
        "# Dawn\nLight came."
    );
}

#[test]
fn an_approved_bible_file_write_lands_once_the_writer_approves() {
    let page = Page::on(Rc::new(MemoryStore::new()));
    page.send(
        "create_project",
        json!({"name": "L", "chapters": [{"title": "One", "text": "It was dark."}]}),
    );
    page.send(
        "bible_save",
        json!({"kind": "character", "fields": {"name_src": "Mara", "notes": "Fears the sea."}}),
    );
    let notes = |page: &Page| {
        page.tool("read_file", json!({"path": "bible/character/mara.json"}))["data"]["content"]
            .as_str()
            .map(|c| serde_json::from_str::<Value>(c).unwrap()["notes"].clone())
            .unwrap()
    };
    let r = page.tool(
        "edit_file",
        json!({"path": "bible/character/mara.json", "search_text": "Fears the sea.", "replace_text": "Loves the sea."}),
    );
    assert_eq!(r["data"]["code"], "approval_required", "{r}");
    assert_eq!(r["data"]["details"]["pending"], true);
    assert_eq!(notes(&page), "Fears the sea.");
    let cards = page.send("list_approvals", json!({}));
    assert_eq!(cards["approvals"][0]["tool"], "edit_file");
    let call = r["data"]["details"]["callId"].as_str().unwrap().to_string();
    let answer = page.send("approve", json!({"callId": call, "decision": "approve"}));
    assert_eq!(answer["status"], "success", "{answer}");
    assert_eq!(notes(&page), "Loves the sea.");
}
