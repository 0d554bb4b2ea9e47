//! Incremental persistence: a keystroke writes its change record and history, not the
//! chapter; a chapter's record is a checkpoint, rewritten every `CHECKPOINT_EVERY` changes
//! or on a `checkpoint` request; a load rebuilds each chapter from its checkpoint and the
//! change records after it (and its change feed from all of them), and survives a damaged
//! change record; cursor moves are neither audited nor saved on their own.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::rc::Rc;

use common::worker::Page;
use draftsmith::persist::pending::{change_key, CHECKPOINT_EVERY, KEEP_BEHIND};
use draftsmith::store::faulty::Faulty;
use draftsmith::store::{Batch, MemoryStore, Op, Store, Table};
use futures::executor::block_on;
use serde_json::{json, Value};

type Disk = Rc<Faulty<MemoryStore>>;

impl Page {
    /// Type `text` at char `at` of a chapter, based on its current version.
    fn type_at(&self, chapter: &str, at: usize, text: &str) -> Value {
        let version = self.ok("get_chapter", json!({"chapter": chapter}))["version"].clone();
        self.ok(
            "apply_user_change",
            json!({"chapter": chapter, "baseVersion": version,
                   "changes": [{"retain": at}, {"insert": text}], "tag": format!("{text}@{at}")}),
        )
    }

    fn chapter(&self, chapter: &str) -> Value {
        self.ok("get_chapter", json!({"chapter": chapter}))
    }

    /// Chapter texts, versions, the history and the UI state: what a reload must give back.
    fn state(&self, id: &str) -> Value {
        let summary = self.ok("open_project", json!({ "id": id }));
        let chapters: Vec<Value> = summary["chapters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let got = self.chapter(c["id"].as_str().unwrap());
                json!({"text": got["text"], "version": got["version"]})
            })
            .collect();
        json!({"project": summary, "chapters": chapters, "history": self.ok("history", json!({}))})
    }
}

fn disk() -> Disk {
    Rc::new(Faulty::new(MemoryStore::new()))
}

fn setup(text: &str) -> (Page, Disk, String, String) {
    let store = disk();
    let page = Page::on(&store, "w");
    let p = page.ok(
        "create_project",
        json!({"name": "Inc", "chapters": [{"title": "One", "text": text}, {"title": "Two", "text": "Second."}]}),
    );
    let id = p["id"].as_str().unwrap().to_string();
    let ch = p["chapters"][0]["id"].as_str().unwrap().to_string();
    (page, store, id, ch)
}

fn record(store: &Disk, table: Table, key: &str) -> Option<Value> {
    block_on(store.inner().get(table, key)).unwrap()
}

/// The records a batch writes to a table (puts and inserts).
fn puts(batch: &Batch, table: Table) -> Vec<Value> {
    batch
        .ops
        .iter()
        .filter_map(|op| match op {
            Op::Put { table: t, value } | Op::Insert { table: t, value } if *t == table => {
                Some(value.to_value().expect("a record converts to JSON"))
            }
            _ => None,
        })
        .collect()
}

/// What a batch does, one word per operation: `put history`, `insert changes`, ...
fn shape(batch: &Batch) -> Vec<String> {
    batch
        .ops
        .iter()
        .map(|op| {
            let verb = match op {
                Op::Put { .. } => "put",
                Op::Insert { .. } => "insert",
                Op::Delete { .. } => "delete",
                Op::Expect { .. } => "expect",
            };
            format!("{verb} {}", op.table().name())
        })
        .collect()
}

/// Which batches (1-based) wrote a chapter record: a checkpoint.
fn checkpoint_batches(batches: &[Batch]) -> Vec<usize> {
    batches
        .iter()
        .enumerate()
        .filter(|(_, b)| !puts(b, Table::Chapters).is_empty())
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn a_keystroke_writes_its_change_and_history_not_the_chapter_or_the_project() {
    // A chapter of about a megabyte: the keystroke's batch stays small.
    let text = "The lamp turned all night. ".repeat(40_000);
    let (page, store, _, ch) = setup(&text);
    store.set_recording(true);
    page.type_at(&ch, 10, "x");
    let batches = store.take_batches();
    assert_eq!(batches.len(), 1);
    let batch = &batches[0];
    // The change is inserted (it fails if another writer wrote that version), the
    // chapter's head is only read (another writer's checkpoint or deletion moved it); as
    // the first keystroke of a typing group, it also writes the history's state. The
    // keystroke's update of the project's Yjs document waits for the writer's pause (the
    // project is not shared).
    assert_eq!(
        shape(batch),
        [
            "expect meta",
            "insert changes",
            "put history",
            "expect meta",
            "put meta"
        ],
        "{batch:?}"
    );
    assert!(puts(batch, Table::Meta)[0]["id"]
        .as_str()
        .unwrap()
        .starts_with("history:"));
    let change = puts(batch, Table::Changes).remove(0);
    assert_eq!(change["id"], change_key(&ch, 1));
    assert_eq!(change["version"], 1);
    assert_eq!(change["origin"], "user");
    assert_eq!(change["tag"], "x@10");
    assert_eq!(
        change["changeset"],
        json!([{"retain": 10}, {"insert": "x"}, {"retain": text.chars().count() - 10}])
    );
    let bytes: usize = puts(batch, Table::Changes)
        .iter()
        .chain(puts(batch, Table::History).iter())
        .chain(puts(batch, Table::Meta).iter())
        .map(|v| v.to_string().len())
        .sum();
    assert!(bytes < 2_000, "a keystroke wrote {bytes} bytes");
    // The checkpoint is still the text at version 0.
    let checkpoint = record(&store, Table::Chapters, &ch).unwrap();
    assert_eq!(checkpoint["version"], 0);
    assert_eq!(checkpoint["text"].as_str().unwrap().len(), text.len());
}

#[test]
fn typing_on_in_one_group_writes_no_history_state_and_a_reload_numbers_entries_on() {
    let (page, store, id, ch) = setup("Start.");
    // The group's first keystroke writes the history's state (its group changed).
    page.type_at(&ch, 6, "a");
    store.set_recording(true);
    for i in 0..5 {
        page.type_at(&ch, 7 + i, "b");
    }
    let batches = store.take_batches();
    assert_eq!(batches.len(), 5);
    for batch in &batches {
        // Nothing in `meta`: the history state changed only in its next entry number, which
        // a load takes from the newest entry, and appending changes does not move the head.
        assert_eq!(
            shape(batch),
            ["expect meta", "insert changes", "put history"],
            "{batch:?}"
        );
    }
    // A fresh worker has the same history and numbers its entries on from the newest one.
    let here = page.state(&id);
    let other = Page::on(&store, "r");
    assert_eq!(other.state(&id)["history"], here["history"]);
    other.type_at(&ch, 12, "c");
    other.ok("checkpoint", json!({}));
    let mut seqs: Vec<u64> = block_on(store.inner().get_all(Table::History))
        .unwrap()
        .iter()
        .map(|r| r["entry"]["seq"].as_u64().unwrap())
        .collect();
    seqs.sort();
    assert_eq!(
        seqs,
        (0..7).collect::<Vec<u64>>(),
        "one entry each, numbered on"
    );
    // Undo takes the whole typing group back, in the other worker too.
    other.ok("undo", json!({}));
    assert_eq!(other.chapter(&ch)["text"], "Start.");
}

#[test]
fn a_chapter_is_checkpointed_every_n_changes_and_loads_from_checkpoint_plus_changes() {
    let (page, store, id, ch) = setup("Start.");
    store.set_recording(true);
    let n = CHECKPOINT_EVERY as usize;
    for i in 0..n + 7 {
        page.type_at(&ch, 6 + i, "a");
    }
    let batches = store.take_batches();
    let checkpoints = checkpoint_batches(&batches);
    assert_eq!(
        checkpoints,
        vec![n],
        "only the n-th change rewrote the chapter"
    );
    let checkpoint = record(&store, Table::Chapters, &ch).unwrap();
    assert_eq!(checkpoint["version"], CHECKPOINT_EVERY);
    assert_eq!(checkpoint["text"].as_str().unwrap().len(), 6 + n);

    // A fresh worker rebuilds the chapter: checkpoint plus the 7 changes after it, with the
    // same history.
    let here = page.state(&id);
    let other = Page::on(&store, "r");
    let there = other.state(&id);
    assert_eq!(there["chapters"], here["chapters"]);
    assert_eq!(there["history"], here["history"]);
    assert_eq!(there["chapters"][0]["version"], n as u64 + 7);
    // Its change feed reaches back behind the checkpoint, so a resent change is still
    // recognized by its tag and other tabs can catch up.
    let caught_up = other.ok("get_chapter", json!({"chapter": ch, "since": 50}));
    assert_eq!(caught_up["changes"].as_array().unwrap().len(), n + 7 - 50);
    let resent = other.ok(
        "apply_user_change",
        json!({"chapter": ch, "baseVersion": 2, "changes": [{"retain": 8}, {"insert": "a"}], "tag": "a@8"}),
    );
    assert_eq!(resent["duplicate"], true);
    assert_eq!(resent["version"], 3);
    // Writer changes based on a version behind the checkpoint are still rebased.
    let late = other.ok(
        "apply_user_change",
        json!({"chapter": ch, "baseVersion": 90, "changes": [{"insert": ">"}]}),
    );
    assert_eq!(late["rebased"], true);
    assert!(other.chapter(&ch)["text"]
        .as_str()
        .unwrap()
        .starts_with(">Start."));
}

#[test]
fn a_long_chapter_is_checkpointed_after_proportionally_more_changes() {
    use draftsmith::persist::pending::{checkpoint_every, CHECKPOINT_MOST};
    assert_eq!(checkpoint_every(10), CHECKPOINT_EVERY);
    assert_eq!(checkpoint_every(64 * 1024), CHECKPOINT_EVERY);
    assert_eq!(checkpoint_every(64 * 1024 + 1), 2 * CHECKPOINT_EVERY);
    assert_eq!(checkpoint_every(5_000_000), CHECKPOINT_MOST);
    // A chapter of about 200 K chars: every 400 changes, not every 100.
    let text = "The lamp turned all night. ".repeat(7_500);
    let every = checkpoint_every(text.chars().count()) as usize;
    assert_eq!(every, 4 * CHECKPOINT_EVERY as usize);
    let (page, store, _, ch) = setup(&text);
    store.set_recording(true);
    for i in 0..every + 3 {
        page.type_at(&ch, i, "a");
    }
    let batches = store.take_batches();
    let checkpoints = checkpoint_batches(&batches);
    assert_eq!(checkpoints, vec![every]);
}

#[test]
fn old_change_records_go_when_a_checkpoint_is_written_but_the_last_ones_stay() {
    let (page, store, id, ch) = setup("");
    let total = 3 * CHECKPOINT_EVERY as usize + 20;
    for i in 0..total {
        page.type_at(&ch, i, "b");
    }
    let records = block_on(
        store
            .inner()
            .get_by_index(Table::Changes, "project", json!(id)),
    )
    .unwrap();
    // In key order: the chapter's, by version.
    let versions: Vec<u64> = records
        .iter()
        .filter(|r| r["chapter"] == json!(ch))
        .map(|r| r["version"].as_u64().unwrap())
        .collect();
    let last_checkpoint = 3 * CHECKPOINT_EVERY;
    assert_eq!(
        versions.first().copied(),
        Some(last_checkpoint - KEEP_BEHIND + 1)
    );
    assert_eq!(versions.last().copied(), Some(total as u64));
    assert_eq!(versions.len() as u64, KEEP_BEHIND + 20);
    // Deleting the chapter deletes its checkpoint and every change record.
    page.ok("delete_chapter", json!({"chapter": ch}));
    assert!(record(&store, Table::Chapters, &ch).is_none());
    let left = block_on(
        store
            .inner()
            .get_by_index(Table::Changes, "project", json!(id)),
    )
    .unwrap();
    let left = left.iter().filter(|r| r["chapter"] == json!(ch)).count();
    assert_eq!(left, 0, "{left} change records left");
}

#[test]
fn a_damaged_change_record_is_reported_and_the_chapter_loads_up_to_it() {
    let (page, store, id, ch) = setup("Base.");
    for i in 0..5 {
        page.type_at(&ch, 5 + i, &i.to_string());
    }
    assert_eq!(page.chapter(&ch)["text"], "Base.01234");
    drop(page);
    // Version 4's change no longer fits the text (it retains past its end).
    let mut bad = record(&store, Table::Changes, &change_key(&ch, 4)).unwrap();
    bad["changeset"] = json!([{"retain": 500}, {"insert": "?"}]);
    let mut batch = Batch::new();
    batch.put_value(Table::Changes, bad);
    block_on(store.inner().commit(batch)).unwrap();

    let page = Page::on(&store, "r");
    let opened = page.ok("open_project", json!({ "id": id }));
    let problems = opened["problems"].as_array().expect("problems reported");
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0].as_str().unwrap().contains("version 4"),
        "{problems:?}"
    );
    let chapter = page.chapter(&ch);
    assert_eq!(
        chapter["text"], "Base.012",
        "the checkpoint and the changes before it"
    );
    assert_eq!(chapter["version"], 3);

    // Writing goes on, and the next save repairs the chapter: a checkpoint at the loaded
    // version, the damaged and later records gone. A fresh load has no problem.
    page.type_at(&ch, 8, "!");
    assert!(record(&store, Table::Changes, &change_key(&ch, 5)).is_none());
    assert_eq!(
        record(&store, Table::Chapters, &ch).unwrap()["version"],
        4,
        "checkpointed"
    );
    let again = Page::on(&store, "s");
    let opened = again.ok("open_project", json!({ "id": id }));
    assert!(opened.get("problems").is_none(), "{opened}");
    assert_eq!(again.chapter(&ch)["text"], "Base.012!");
}

#[test]
fn a_missing_change_record_is_reported_not_skipped() {
    let (page, store, id, ch) = setup("Base.");
    for i in 0..4 {
        page.type_at(&ch, 5 + i, &i.to_string());
    }
    drop(page);
    let mut batch = Batch::new();
    batch.delete(Table::Changes, change_key(&ch, 2));
    block_on(store.inner().commit(batch)).unwrap();
    let page = Page::on(&store, "r");
    let opened = page.ok("open_project", json!({ "id": id }));
    assert!(opened["problems"][0]
        .as_str()
        .unwrap()
        .contains("does not follow version 1"));
    assert_eq!(page.chapter(&ch)["text"], "Base.0");
}

#[test]
fn cursor_moves_are_not_audited_nor_saved_until_a_checkpoint() {
    let (page, store, id, ch) = setup("Mara climbed the stair.");
    store.set_recording(true);
    for (start, end) in [(0, 4), (5, 12), (13, 13)] {
        let r = page.ok(
            "execute",
            json!({"tool": "set_selection", "args": {"chapter": ch, "start": start, "end": end}}),
        );
        assert_eq!(r["status"], "success");
    }
    assert!(store.take_batches().is_empty(), "no save for a cursor move");
    // Typing does not save the project record either (its cursor moved with the text).
    page.type_at(&ch, 13, "up ");
    let batch = &store.take_batches()[0];
    assert!(puts(batch, Table::Projects).is_empty());
    assert!(puts(batch, Table::Audit).is_empty());
    // A checkpoint writes the chapter and the UI state; no audit record of the moves.
    let r = page.ok("checkpoint", json!({}));
    assert_eq!(r, json!({"checkpointed": [ch], "saved": true}));
    let batch = &store.take_batches()[0];
    assert_eq!(puts(batch, Table::Chapters).len(), 1);
    assert_eq!(puts(batch, Table::Projects).len(), 1);
    let audit = block_on(store.inner().get_all(Table::Audit)).unwrap();
    assert!(
        audit.iter().all(|a| a["tool"] != "set_selection"),
        "{audit:?}"
    );
    let here = page.state(&id);
    assert_eq!(here["project"]["ui"]["cursor"], 16);
    assert_eq!(Page::on(&store, "r").state(&id), here);
    // Nothing changed since: a second checkpoint writes nothing.
    let r = page.ok("checkpoint", json!({}));
    assert_eq!(r, json!({"checkpointed": [], "saved": true}));
    assert!(store.take_batches().is_empty());
    // Switching the active chapter matters: it is saved at once.
    let other = page.ok("open_project", json!({ "id": id }))["chapters"][1]["id"].clone();
    page.ok(
        "execute",
        json!({"tool": "jump_to_chapter", "args": {"chapter": other}}),
    );
    assert_eq!(puts(&store.take_batches()[0], Table::Projects).len(), 1);
    let _ = page.events.take();
}

#[test]
fn a_project_from_before_change_records_loads_and_goes_on() {
    // Schema 4 had whole chapter records and no change records: they load as checkpoints.
    let store = disk();
    let mut batch = Batch::new();
    batch.put_value(
        Table::Projects,
        json!({"id": "p", "name": "Old", "createdMs": 1, "updatedMs": 1, "chapters": ["c"],
               "ui": {"active_chapter": "c", "cursor": 0, "selection": null, "panel": "chat",
                      "zen_mode": false, "highlights": [], "scroll": 0}}),
    );
    batch.put_value(
        Table::Chapters,
        json!({"id": "c", "project": "p", "title": "One", "text": "Old text.", "version": 41}),
    );
    block_on(store.inner().commit(batch)).unwrap();
    let page = Page::on(&store, "w");
    page.ok("open_project", json!({"id": "p"}));
    let r = page.type_at("c", 9, " New.");
    assert_eq!(r["version"], 42);
    let change = record(&store, Table::Changes, &change_key("c", 42)).unwrap();
    assert_eq!(change["project"], "p");
    let again = Page::on(&store, "r");
    again.ok("open_project", json!({"id": "p"}));
    assert_eq!(again.chapter("c")["text"], "Old text. New.");
}
