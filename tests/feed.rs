//! Each chapter's change feed: `get_chapter {since}` lists the changes after a version
//! (`{version, changeset, origin, tag?}`) or says it cannot (`changes: null`); a writer's
//! change resent with a tag already applied is not applied again (`duplicate: true`, the
//! first result, no `edit` event). The feed is rebuilt from the stored change records when a
//! project is loaded.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::rc::Rc;

use common::worker::Page;
use draftsmith::store::MemoryStore;
use serde_json::{json, Value};

impl Page {
    fn edits(&self) -> Vec<Value> {
        self.take_events("edit")
    }
}

fn typed(chapter: &str, base: u64, at: usize, text: &str, tag: &str) -> Value {
    json!({"chapter": chapter, "baseVersion": base,
           "changes": [{"retain": at}, {"insert": text}], "tag": tag})
}

fn setup() -> (Page, Rc<MemoryStore>, String, String) {
    let store = Rc::new(MemoryStore::new());
    let page = Page::on(&store, "w");
    let p = page.ok(
        "create_project",
        json!({"name": "Feed", "chapters": [{"title": "One", "text": "It was dark."}]}),
    );
    let id = p["id"].as_str().unwrap().to_string();
    let ch = p["chapters"][0]["id"].as_str().unwrap().to_string();
    (page, store, id, ch)
}

#[test]
fn get_chapter_since_lists_every_later_change_with_its_origin_and_tag() {
    let (page, _, _, ch) = setup();
    page.ok("apply_user_change", typed(&ch, 0, 12, " Cold.", "t1"));
    page.ok(
        "execute",
        json!({"tool": "append_to_manuscript", "args": {"text": "Then the lamp."}, "origin": "agent:scribe"}),
    );
    page.ok("undo", json!({"origin": "agent"}));

    let r = page.ok("get_chapter", json!({"chapter": ch, "since": 0}));
    assert_eq!(r["version"], 3);
    let changes = r["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 3);
    assert_eq!(
        changes[0],
        json!({"version": 1, "changeset": [{"retain": 12}, {"insert": " Cold."}],
               "origin": "user", "tag": "t1"})
    );
    assert_eq!(changes[1]["version"], 2);
    assert_eq!(changes[1]["origin"], "agent:scribe");
    assert!(changes[1].get("tag").is_none());
    assert_eq!(changes[2]["version"], 3);
    assert_eq!(
        changes[2]["origin"], "user",
        "the writer asked for the undo"
    );

    // Replaying the changes over the text at `since` gives the text now.
    let mut text = "It was dark.".to_string();
    for change in changes {
        let set: draftsmith::project::changeset::ChangeSet =
            serde_json::from_value(change["changeset"].clone()).unwrap();
        text = set.apply_str(&text).unwrap();
    }
    assert_eq!(r["text"], text);

    let r = page.ok("get_chapter", json!({"chapter": ch, "since": 2}));
    assert_eq!(r["changes"].as_array().unwrap().len(), 1);
    let r = page.ok("get_chapter", json!({"chapter": ch, "since": 3}));
    assert_eq!(r["changes"], json!([]));
    // A version the chapter never had.
    let r = page.ok("get_chapter", json!({"chapter": ch, "since": 9}));
    assert_eq!(r["changes"], Value::Null);
    // Without `since`, no list.
    assert!(page
        .ok("get_chapter", json!({"chapter": ch}))
        .get("changes")
        .is_none());
}

#[test]
fn changes_the_feed_no_longer_holds_give_null() {
    let (page, _, _, ch) = setup();
    let mut version = 0;
    for i in 0..draftsmith::core::FEED_LEN + 5 {
        let r = page.ok(
            "apply_user_change",
            typed(&ch, version, 0, "x", &format!("k{i}")),
        );
        version = r["version"].as_u64().unwrap();
    }
    let r = page.ok("get_chapter", json!({"chapter": ch, "since": 0}));
    assert_eq!(r["changes"], Value::Null);
    let r = page.ok("get_chapter", json!({"chapter": ch, "since": version - 10}));
    assert_eq!(r["changes"].as_array().unwrap().len(), 10);
}

#[test]
fn a_resent_tagged_change_is_applied_once() {
    let (page, _, id, ch) = setup();
    let first = page.ok("apply_user_change", typed(&ch, 0, 0, "Yes. ", "tag-1"));
    assert_eq!(page.edits().len(), 1);
    assert!(first.get("duplicate").is_none());

    let again = page.ok("apply_user_change", typed(&ch, 0, 0, "Yes. ", "tag-1"));
    let mut expected = first.clone();
    expected["duplicate"] = json!(true);
    assert_eq!(again, expected);
    assert!(page.edits().is_empty(), "a duplicate is not announced");
    let r = page.ok("get_chapter", json!({"chapter": ch}));
    assert_eq!(r["text"], "Yes. It was dark.");
    assert_eq!(r["version"], 1);
    assert_eq!(
        page.ok("history", json!({}))["entries"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // A change that was rebased the first time says so again.
    page.ok(
        "execute",
        json!({"tool": "append_to_manuscript", "args": {"text": "End."}, "origin": "agent:a"}),
    );
    let rebased = page.ok("apply_user_change", typed(&ch, 1, 0, "Oh. ", "tag-2"));
    assert_eq!(rebased["rebased"], true);
    let again = page.ok("apply_user_change", typed(&ch, 1, 0, "Oh. ", "tag-2"));
    assert_eq!(again["duplicate"], true);
    assert_eq!(again["rebased"], true);
    assert_eq!(again["version"], rebased["version"]);
    assert_eq!(
        page.ok("get_chapter", json!({"chapter": ch}))["text"],
        "Oh. Yes. It was dark.\n\nEnd."
    );
    // A new tag is a new change.
    let other = page.ok("apply_user_change", typed(&ch, 3, 0, "Oh. ", "tag-3"));
    assert!(other.get("duplicate").is_none());
    let _ = id;
}

#[test]
fn a_resent_tool_call_with_its_id_is_applied_once() {
    let (page, store, id, ch) = setup();
    let call = json!({"tool": "append_to_manuscript", "args": {"text": "Then the lamp."},
                      "origin": "agent:scribe", "callId": "call-7"});
    let first = page.ok("execute", call.clone());
    assert_eq!(first["status"], "success");
    page.edits();
    // Resent (its response was lost), here or by a new worker after a restart.
    let again = page.ok("execute", call.clone());
    assert_eq!(again["status"], "success");
    assert_eq!(again["data"]["duplicate"], true);
    assert_eq!(again["meta"]["command_id"], first["meta"]["command_id"]);
    assert!(page.edits().is_empty());
    let restarted = Page::on(&store, "r");
    restarted.ok("open_project", json!({ "id": id }));
    assert_eq!(restarted.ok("execute", call)["data"]["duplicate"], true);
    assert_eq!(
        restarted.ok("get_chapter", json!({"chapter": ch}))["text"],
        "It was dark.\n\nThen the lamp."
    );
    // The same id for another tool is another call.
    let other = page.ok(
        "execute",
        json!({"tool": "insert_text", "args": {"text": " Slowly.", "anchorText": "dark."},
               "origin": "agent:scribe", "callId": "call-7"}),
    );
    assert_eq!(other["status"], "success", "{other}");
    assert!(other["data"].get("duplicate").is_none(), "{other}");
}
