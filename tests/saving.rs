//! Saves that cannot lose data: a failed save keeps what it held pending until a save that
//! includes it commits, whatever later saves do; a reload never discards unsaved work.
//! Requests run through `Core::handle_text` on a store that fails on demand
//! (`draftsmith::store::faulty::Faulty`), and really interleave where it matters
//! (`futures::join` over a store that yields before every operation).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::rc::Rc;

use common::worker::{call, Page};
use draftsmith::store::faulty::Faulty;
use draftsmith::store::MemoryStore;
use futures::executor::block_on;
use serde_json::{json, Value};

type Disk = Rc<Faulty<MemoryStore>>;

fn disk() -> Disk {
    Rc::new(Faulty::new(MemoryStore::new()))
}

impl Page {
    /// How many `storage_error` events came since the last call.
    fn storage_errors(&self) -> usize {
        self.events
            .take()
            .iter()
            .filter(|e| e.kind == "storage_error")
            .count()
    }

    fn text(&self, chapter: &str) -> String {
        self.ok("get_chapter", json!({ "chapter": chapter }))["text"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// The project as an export, without the export time and the editor positions that are
    /// saved lazily (cursor, selection, scroll: with the next checkpoint).
    fn export(&self, id: &str) -> Value {
        let mut doc = self.ok("export_project", json!({ "id": id }));
        doc["exportedMs"] = json!(0);
        for field in ["cursor", "selection", "scroll"] {
            doc["project"]["ui"][field] = Value::Null;
        }
        doc
    }
}

fn typing(chapter: &str, version: u64, at: usize, text: &str) -> Value {
    json!({"chapter": chapter, "baseVersion": version,
           "changes": [{"retain": at}, {"insert": text}]})
}

/// A project with three chapters; its id and chapter ids.
fn project(page: &Page) -> (String, Vec<String>) {
    let p = page.ok(
        "create_project",
        json!({"name": "Lighthouse", "chapters": [
            {"title": "One", "text": "Mara climbed the stair."},
            {"title": "Two", "text": "Morning came grey."},
            {"title": "Three", "text": "The lamp was dark."}
        ]}),
    );
    let chapters = p["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    (p["id"].as_str().unwrap().to_string(), chapters)
}

/// What a fresh worker loads from the store.
fn stored(store: &Disk, id: &str) -> Value {
    let page = Page::on(store, "fresh");
    page.ok("open_project", json!({ "id": id }));
    page.export(id)
}

#[test]
fn a_failed_big_save_is_written_by_a_later_small_one_even_when_saves_overlap() {
    let store = disk();
    let page = Page::on(&store, "w");
    let (id, ch) = project(&page);
    page.events.take();

    // Four requests at once (each save yields before it commits, so all four change the
    // project before any save ends): three whose saves fail (typing in two chapters, a
    // story-bible entry) and a small one whose save succeeds.
    store.set_yielding(true);
    store.fail_next(3);
    let core = &page.core;
    let (a, b, c, d) = block_on(futures::future::join4(
        call(
            core,
            "apply_user_change",
            typing(&ch[0], 0, 23, " She stopped."),
        ),
        call(
            core,
            "bible_save",
            json!({"kind": "character", "fields": {"name_src": "Mara", "notes": "Fears the sea."}}),
        ),
        call(
            core,
            "apply_user_change",
            typing(&ch[2], 0, 18, " Then lit."),
        ),
        call(core, "close_group", json!({})),
    ));
    for r in [&a, &b, &c, &d] {
        assert_eq!(r["ok"], true, "{r}");
    }
    assert!(page.storage_errors() >= 1);
    store.fail_next(0);

    // Later small saves that succeed: typing, a file, a new chapter, a rename.
    page.ok("apply_user_change", typing(&ch[1], 0, 18, " Rain."));
    page.ok(
        "execute",
        json!({"tool": "write_file", "args": {"path": "plans/outline.md", "content": "1. The stair"}}),
    );
    page.ok("add_chapter", json!({"title": "Four", "text": "The boat."}));
    page.ok("rename_project", json!({"name": "The Lighthouse"}));
    assert_eq!(page.storage_errors(), 0);
    let here = page.export(&id);
    assert_eq!(here["project"]["name"], "The Lighthouse");
    assert_eq!(here["chapters"].as_array().unwrap().len(), 4);
    assert_eq!(
        here["chapters"][0]["text"],
        "Mara climbed the stair. She stopped."
    );
    assert_eq!(here["bible"].as_array().unwrap().len(), 1);
    assert_eq!(here["files"].as_array().unwrap().len(), 1);
    assert_eq!(stored(&store, &id), here);
}

#[test]
fn a_small_save_that_succeeds_while_a_big_one_fails_drops_nothing() {
    // The old bug: save 1 fails while save 2 (small, built before the failure was known)
    // succeeds and clears the "save everything next time" flag: save 1's changes were lost.
    let store = disk();
    let page = Page::on(&store, "w");
    let (id, ch) = project(&page);
    page.ok("close_group", json!({}));
    store.set_yielding(true);
    store.fail_next(1);
    let core = &page.core;
    let (big, small) = block_on(futures::future::join(
        call(
            core,
            "bible_save",
            json!({"kind": "location", "fields": {"name_src": "The lighthouse"}}),
        ),
        call(core, "apply_user_change", typing(&ch[0], 0, 0, "At dusk, ")),
    ));
    assert_eq!(big["ok"], true);
    assert_eq!(small["ok"], true);
    assert_eq!(page.storage_errors(), 1);
    store.fail_next(0);
    page.ok("close_group", json!({}));
    let here = page.export(&id);
    assert_eq!(here["bible"].as_array().unwrap().len(), 1);
    assert_eq!(stored(&store, &id), here);
    assert_eq!(page.text(&ch[0]), "At dusk, Mara climbed the stair.");
}

#[test]
fn a_failed_save_stays_pending_through_any_number_of_failures() {
    let store = disk();
    let page = Page::on(&store, "w");
    let (id, ch) = project(&page);
    store.set_failing(true);
    let mut version = 0;
    let mut len = 23;
    for word in [" One.", " Two.", " Three."] {
        let r = page.ok("apply_user_change", typing(&ch[0], version, len, word));
        version = r["version"].as_u64().unwrap();
        len += word.len();
    }
    page.ok("undo", json!({}));
    assert_eq!(page.storage_errors(), 4);
    store.set_failing(false);
    page.ok("close_group", json!({}));
    assert_eq!(stored(&store, &id), page.export(&id));
}

#[test]
fn a_reload_saves_unsaved_work_first_and_keeps_it_while_saving_fails() {
    let store = disk();
    let page = Page::on(&store, "w");
    let (id, ch) = project(&page);
    // Another tab (worker) on the same database.
    let other = Page::on(&store, "o");
    other.ok("open_project", json!({ "id": id }));

    // This tab types while storage fails.
    store.set_failing(true);
    page.ok("apply_user_change", typing(&ch[0], 0, 23, " She stopped."));
    assert_eq!(page.storage_errors(), 1);
    // The other tab cannot save either; a reload it hears of must not drop this tab's words.
    let r = page.ok("reload_project", json!({ "id": id }));
    assert_eq!(r, json!({"reloaded": false, "unsaved": true}));
    assert_eq!(page.text(&ch[0]), "Mara climbed the stair. She stopped.");

    // Storage works again; the other tab saves a story-bible entry and this tab reloads:
    // its typing is saved first, and it then sees the other tab's entry.
    store.set_failing(false);
    other.ok(
        "bible_save",
        json!({"kind": "character", "fields": {"name_src": "Mara"}}),
    );
    let r = page.ok("reload_project", json!({ "id": id }));
    assert_eq!(r["reloaded"], true);
    assert_eq!(page.text(&ch[0]), "Mara climbed the stair. She stopped.");
    let here = page.export(&id);
    assert_eq!(here["bible"][0]["id"], "mara");
    assert_eq!(here["history"].as_array().unwrap().len(), 1);
    assert_eq!(stored(&store, &id), here);
}

#[test]
fn opening_an_open_project_with_unsaved_work_saves_it_and_never_replaces_it() {
    let store = disk();
    let page = Page::on(&store, "w");
    let (id, ch) = project(&page);
    store.set_failing(true);
    page.ok("apply_user_change", typing(&ch[1], 0, 0, "Slowly. "));
    page.ok("open_project", json!({ "id": id }));
    assert_eq!(page.text(&ch[1]), "Slowly. Morning came grey.");
    assert_eq!(
        page.storage_errors(),
        2,
        "the save is tried again, and fails"
    );
    store.set_failing(false);
    page.ok("open_project", json!({ "id": id }));
    assert_eq!(page.storage_errors(), 0);
    assert_eq!(stored(&store, &id), page.export(&id));
}
