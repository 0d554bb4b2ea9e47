//! Versioned record writes, the second line of defence against two writers of one
//! project: every write of a chapter (its head and checkpoint), the project record, the
//! history state, a story-bible entity or a free file checks the revision it was based on;
//! a stale write is refused by the store (nothing of it is written) and the core merges what
//! it had not saved into what the other wrote (`persist::merge`) and saves again. Two cores
//! on one store, really interleaved (a store that yields before every operation, and
//! `futures::join`), lose no change of either.
#![cfg(not(target_arch = "wasm32"))]

use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::store::faulty::Faulty;
use draftsmith::store::{Batch, MemoryStore, Store, StoreError, Table};
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures::executor::block_on;
use futures::future::{join, LocalBoxFuture};
use serde_json::{json, Value};

type Disk = Rc<Faulty<MemoryStore>>;

struct Page {
    core: Core,
    events: Rc<RecordingSink>,
}

impl Page {
    fn on(store: &Disk, ids: &str, now: u64) -> Self {
        let events = Rc::new(RecordingSink::default());
        let core = Core::new(Env {
            clock: Rc::new(ManualClock::new(now)),
            ids: Rc::new(SequentialIds::new(ids)),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: events.clone(),
            store: store.clone(),
        });
        Self { core, events }
    }

    fn ok(&self, kind: &str, params: Value) -> Value {
        let r = block_on(call(&self.core, kind, params.clone()));
        assert_eq!(r["ok"], true, "{kind} {params} -> {r}");
        r["result"].clone()
    }

    fn text(&self, chapter: &str) -> String {
        self.ok("get_chapter", json!({ "chapter": chapter }))["text"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn kinds(&self) -> Vec<String> {
        self.events.take().into_iter().map(|e| e.kind).collect()
    }
}

async fn call(core: &Core, kind: &str, params: Value) -> Value {
    let text = json!({"id": 1, "type": kind, "params": params}).to_string();
    serde_json::from_str(&core.handle_text(&text).await).unwrap()
}

fn disk() -> Disk {
    Rc::new(Faulty::new(MemoryStore::new()))
}

/// A project with two chapters, opened by two workers; its id and chapter ids.
fn two_workers(store: &Disk) -> (Page, Page, String, Vec<String>) {
    let a = Page::on(store, "a", 1_000);
    let p = a.ok(
        "create_project",
        json!({"name": "Shared", "chapters": [
            {"title": "One", "text": "The lamp was dark."},
            {"title": "Two", "text": "Morning came."}
        ]}),
    );
    let id = p["id"].as_str().unwrap().to_string();
    let chapters = p["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    let b = Page::on(store, "b", 2_000);
    b.ok("open_project", json!({ "id": id }));
    (a, b, id, chapters)
}

fn typing(chapter: &str, base: u64, at: usize, text: &str) -> Value {
    json!({"chapter": chapter, "baseVersion": base,
           "changes": [{"retain": at}, {"insert": text}], "tag": text})
}

/// The chapters' texts in the project's Yjs document as stored (its updates loaded as they
/// are, with nothing made again from the project), by chapter id.
fn stored_document(store: &Disk, id: &str) -> std::collections::BTreeMap<String, String> {
    let records = block_on(store.get_by_index(Table::Sync, "project", json!(id))).unwrap();
    let updates: Vec<Vec<u8>> = records
        .into_iter()
        .map(|r| {
            serde_json::from_value::<draftsmith::persist::SyncRecord>(r)
                .unwrap()
                .update
        })
        .collect();
    draftsmith::replica::Replica::load(&updates, 99)
        .unwrap()
        .doc_chapters()
        .into_iter()
        .map(|c| (c.id, c.text))
        .collect()
}

/// What a fresh worker loads.
fn fresh(store: &Disk, id: &str) -> Page {
    let page = Page::on(store, "fresh", 9_000);
    page.ok("open_project", json!({ "id": id }));
    page
}

#[test]
fn a_stale_write_is_refused_by_the_store_and_nothing_of_it_is_written() {
    let store = disk();
    let (a, b, id, ch) = two_workers(&store);
    a.ok("apply_user_change", typing(&ch[0], 0, 0, "A: "));
    // What B would write, based on what B read: the store refuses it whole. The head is
    // where B saw it (appending a change does not move it), but version 1's change record
    // is A's, and B's is an insert.
    let head = block_on(store.inner().get(Table::Meta, &format!("head:{}", ch[0])))
        .unwrap()
        .unwrap();
    assert_eq!(head["version"], 0);
    let change = format!("{}/{:020}", ch[0], 1);
    let a_change = block_on(store.inner().get(Table::Changes, &change))
        .unwrap()
        .unwrap();
    assert_eq!(a_change["tag"], "A: ");
    let mut stale = Batch::new();
    stale.expect(Table::Meta, format!("head:{}", ch[0]), "version", json!(0));
    stale.insert_value(
        Table::Changes,
        json!({"id": change, "project": id, "tag": " B."}),
    );
    stale.put_value(
        Table::History,
        json!({"id": "b-entry", "project": id, "entry": {}}),
    );
    let before = store.inner().to_json();
    assert!(matches!(
        block_on(store.commit(stale)),
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(store.inner().to_json(), before);

    // B's own stale save: refused, merged, saved. Nothing of A's is lost, nor of B's.
    b.kinds();
    let r = b.ok("apply_user_change", typing(&ch[0], 0, 18, " B."));
    assert_eq!(r["version"], 1, "B answered before it knew of A's change");
    let events = b.kinds();
    assert!(
        events.contains(&"project_reloaded".to_string()),
        "{events:?}"
    );
    assert!(!events.contains(&"storage_error".to_string()), "{events:?}");
    assert_eq!(b.text(&ch[0]), "A: The lamp was dark. B.");
    assert_eq!(fresh(&store, &id).text(&ch[0]), "A: The lamp was dark. B.");
    // The merged change keeps its tag: resent, it is recognized.
    let again = b.ok("apply_user_change", typing(&ch[0], 0, 18, " B."));
    assert_eq!(again["duplicate"], true);
    // A, stale now, writes again: merged the same way.
    a.ok("apply_user_change", typing(&ch[0], 1, 3, "yes, "));
    let there = fresh(&store, &id);
    assert_eq!(there.text(&ch[0]), "A: yes, The lamp was dark. B.");
    assert_eq!(a.text(&ch[0]), there.text(&ch[0]));
    // Both histories hold every change, and undo works on the merged text.
    let history = there.ok("history", json!({}));
    assert_eq!(history["entries"].as_array().unwrap().len(), 3);
    there.ok("undo", json!({}));
    assert_eq!(there.text(&ch[0]), "A: The lamp was dark. B.");
}

/// One worker's part: an agent appends to chapter one and the writer types at the start of
/// `typed_in`, `N` times each, as fast as the core answers.
fn script<'p>(
    page: &'p Page,
    who: &'static str,
    typed_in: String,
) -> LocalBoxFuture<'p, Vec<Value>> {
    Box::pin(async move {
        let mut responses = Vec::new();
        for i in 0..N {
            let r = call(
                &page.core,
                "execute",
                json!({"tool": "append_to_manuscript", "origin": format!("agent:{who}"),
                       "args": {"text": format!("[{who}{i}]"), "chapter": "1"}}),
            )
            .await;
            responses.push(r);
            // The writer types at the start of a chapter, based on what it last saw.
            let seen = call(&page.core, "get_chapter", json!({"chapter": typed_in})).await;
            let version = seen["result"]["version"].clone();
            let r = call(
                &page.core,
                "apply_user_change",
                json!({"chapter": typed_in, "baseVersion": version,
                       "changes": [{"insert": format!("<{who}{i}>")}], "tag": format!("{who}{i}")}),
            )
            .await;
            responses.push(r);
        }
        responses
    })
}

const N: usize = 20;

#[test]
fn a_change_merged_with_anothers_is_in_the_stored_document_once() {
    // A worker mirrors its changes into the project's document once it is idle, and a save
    // that collides merges before. Here the other writer's change takes back the length A's
    // adds (B deletes a char, A inserts one), so the merged document has the length A's
    // change was made on: mirrored after the merge, A's change would be written twice.
    let store = disk();
    let (a, b, id, ch) = two_workers(&store);
    let delete = json!({"chapter": ch[0], "baseVersion": 0,
                        "changes": [{"retain": 17}, {"delete": 1}], "tag": "b"});
    b.ok("apply_user_change", delete);
    a.ok("apply_user_change", typing(&ch[0], 0, 0, "x"));
    let merged = "xThe lamp was dark";
    assert_eq!(a.text(&ch[0]), merged);
    a.ok("checkpoint", json!({}));
    assert_eq!(fresh(&store, &id).text(&ch[0]), merged);
    let document = stored_document(&store, &id);
    assert_eq!(document.get(&ch[0]).map(String::as_str), Some(merged));
}

#[test]
fn two_workers_appending_and_typing_at_once_lose_nothing() {
    let store = disk();
    let (a, b, id, ch) = two_workers(&store);
    store.set_yielding(true);
    let (ra, rb) = block_on(join(
        script(&a, "a", ch[0].clone()),
        script(&b, "b", ch[1].clone()),
    ));
    for r in ra.iter().chain(rb.iter()) {
        assert_eq!(r["ok"], true, "{r}");
    }
    let conflicts = |page: &Page| {
        page.events
            .take()
            .iter()
            .filter(|e| e.kind == "project_reloaded" && e.data["rebased"] == true)
            .count()
    };
    let (merges_a, merges_b) = (conflicts(&a), conflicts(&b));
    assert!(merges_a + merges_b > 0, "the two workers never collided");
    // Whatever is still pending goes now (each worker's last save may have collided).
    store.set_yielding(false);
    a.ok("checkpoint", json!({}));
    b.ok("checkpoint", json!({}));
    a.ok("checkpoint", json!({}));

    let there = fresh(&store, &id);
    let one = there.text(&ch[0]);
    let two = there.text(&ch[1]);
    for who in ["a", "b"] {
        for i in 0..N {
            let appended = format!("[{who}{i}]");
            assert_eq!(one.matches(&appended).count(), 1, "{appended} in {one}");
        }
    }
    for i in 0..N {
        assert_eq!(
            one.matches(&format!("<a{i}>")).count(),
            1,
            "<a{i}> in {one}"
        );
        assert_eq!(
            two.matches(&format!("<b{i}>")).count(),
            1,
            "<b{i}> in {two}"
        );
    }
    // Each worker's own appends are in its order.
    for who in ["a", "b"] {
        let at: Vec<usize> = (0..N)
            .map(|i| one.find(&format!("[{who}{i}]")).unwrap())
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{who}: {one}");
    }
    // Every change is in the stored history, once.
    let history = there.ok("history", json!({}));
    assert_eq!(
        history["entries"].as_array().unwrap().len(),
        4 * N,
        "{history}"
    );
    // And in the project's document as stored, once: each worker mirrored what it had not
    // yet mirrored of its own changes before merging the other's.
    let document = stored_document(&store, &id);
    assert_eq!(document.get(&ch[0]), Some(&one));
    assert_eq!(document.get(&ch[1]), Some(&two));
}

#[test]
fn a_whole_record_written_by_both_keeps_the_newer_and_says_what_lost() {
    let store = disk();
    let (a, b, id, _) = two_workers(&store);
    // A writes (at 1,000 ms) a story-bible entry and a file; B (at 2,000 ms, newer) writes
    // the same entry and file without having seen A's.
    a.ok(
        "bible_save",
        json!({"kind": "character", "id": "mara", "fields": {"name_src": "Mara", "notes": "From A."}}),
    );
    a.ok(
        "execute",
        json!({"tool": "write_file", "args": {"path": "plans/plan.md", "content": "A's plan"}}),
    );
    b.kinds();
    b.ok(
        "bible_save",
        json!({"kind": "character", "id": "mara", "fields": {"name_src": "Mara", "notes": "From B."}}),
    );
    b.ok(
        "execute",
        json!({"tool": "write_file", "args": {"path": "plans/plan.md", "content": "B's plan"}}),
    );
    let there = fresh(&store, &id);
    let entry = &there.ok("bible_list", json!({"kind": "character"}))["kinds"]["character"][0];
    assert_eq!(entry["notes"], "From B.", "B's is newer");
    let file = there.ok(
        "execute",
        json!({"tool": "read_file", "args": {"path": "plans/plan.md"}}),
    );
    assert!(file.to_string().contains("B's plan"), "{file}");

    // Now A (older clock) writes over B's without having seen it: B's newer entry stays,
    // and A's page hears what lost.
    a.events.take();
    a.ok(
        "bible_save",
        json!({"kind": "character", "id": "mara", "fields": {"notes": "From A again."}}),
    );
    let reloaded: Vec<Value> = a
        .events
        .take()
        .into_iter()
        .filter(|e| e.kind == "project_reloaded")
        .map(|e| e.data)
        .collect();
    assert_eq!(reloaded.len(), 1);
    assert!(reloaded[0]["overridden"][0]
        .as_str()
        .unwrap()
        .contains("mara"));
    let there = fresh(&store, &id);
    let entry = &there.ok("bible_list", json!({"kind": "character"}))["kinds"]["character"][0];
    assert_eq!(entry["notes"], "From B.");
}

#[test]
fn chapters_added_renamed_and_deleted_by_both_merge() {
    let store = disk();
    let (a, b, id, ch) = two_workers(&store);
    a.ok(
        "add_chapter",
        json!({"title": "From A", "text": "A's chapter."}),
    );
    a.ok(
        "rename_chapter",
        json!({"chapter": ch[1], "title": "Second"}),
    );
    b.ok(
        "add_chapter",
        json!({"title": "From B", "text": "B's chapter.", "after": ch[0]}),
    );
    b.ok("delete_chapter", json!({"chapter": ch[1]}));
    let there = fresh(&store, &id);
    let titles: Vec<String> = there.ok("open_project", json!({ "id": id }))["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["title"].as_str().unwrap().to_string())
        .collect();
    // B deleted chapter two after A renamed it (A's rename changed no text: the deletion
    // stands); both new chapters are there, B's where B put it.
    assert_eq!(titles, vec!["One", "From B", "From A"]);
}

#[test]
fn unsaved_changes_the_stored_ones_outran_are_kept_as_a_copy() {
    let store = disk();
    let (a, b, id, ch) = two_workers(&store);
    // A makes more changes than the store keeps behind a checkpoint, so the changes since
    // the version B saw are gone from the store: B's change cannot be transformed.
    let mut version = 0;
    for i in 0..320 {
        let mut change = typing(&ch[0], version, 0, &format!("{}", i % 10));
        change["tag"] = json!(format!("k{i}"));
        let r = a.ok("apply_user_change", change);
        version = r["version"].as_u64().unwrap();
    }
    b.events.take();
    b.ok("apply_user_change", typing(&ch[0], 0, 18, " B's words."));
    let reloaded: Vec<Value> = b
        .events
        .take()
        .into_iter()
        .filter(|e| e.kind == "project_reloaded")
        .map(|e| e.data)
        .collect();
    assert_eq!(
        reloaded[0]["copies"].as_array().map(Vec::len),
        Some(1),
        "{reloaded:?}"
    );
    let there = fresh(&store, &id);
    let chapters = there.ok("open_project", json!({ "id": id }))["chapters"].clone();
    assert_eq!(chapters[1]["title"], "One (unsaved copy)");
    assert_eq!(
        there.text(chapters[1]["id"].as_str().unwrap()),
        "The lamp was dark. B's words."
    );
    assert_eq!(
        there.text(&ch[0]).chars().count(),
        18 + 320,
        "A's text as A wrote it"
    );
}

#[test]
fn unsaved_work_in_a_project_deleted_elsewhere_is_written_again() {
    let store = disk();
    let (a, b, id, ch) = two_workers(&store);
    a.ok("delete_project", json!({ "id": id }));
    b.ok("apply_user_change", typing(&ch[1], 0, 0, "Still here. "));
    let there = fresh(&store, &id);
    assert_eq!(there.text(&ch[1]), "Still here. Morning came.");
    assert_eq!(there.text(&ch[0]), "The lamp was dark.");
}

#[test]
fn a_chapter_deleted_by_a_writer_that_missed_the_others_last_change_keeps_that_change() {
    let store = disk();
    let (a, _, id, ch) = two_workers(&store);
    // A's first keystroke in chapter two also writes the history's state; C loads after it.
    a.ok("apply_user_change", typing(&ch[1], 0, 0, "So"));
    let c = Page::on(&store, "c", 3_000);
    c.ok("open_project", json!({ "id": id }));
    // A's next keystroke, in the same typing group, writes only its change (version 2,
    // the head does not move) and its history entry.
    a.ok("apply_user_change", typing(&ch[1], 1, 2, ". "));
    // C, which has not seen it, deletes chapter two: that write reads the change after the
    // newest one it knows, finds A's, and is refused; C merges, and a chapter the other
    // writer changed meanwhile is kept (typing is never lost to a deletion that did not see
    // it).
    c.kinds();
    c.ok("delete_chapter", json!({"chapter": ch[1]}));
    let events = c.kinds();
    assert!(
        events.contains(&"project_reloaded".to_string()),
        "{events:?}"
    );
    assert_eq!(c.text(&ch[1]), "So. Morning came.");
    let there = fresh(&store, &id);
    assert_eq!(there.text(&ch[1]), "So. Morning came.");
}
