//! The `data/` file tools in a dedicated worker, on IndexedDB: a free file written to
//! `plans/` is read back by a new core on the same database (a reload), and a chapter file
//! write is undone by plain undo, also after the reload.
#![cfg(target_arch = "wasm32")]

use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::store::{Store, Table};
use draftsmith::web::idb::IdbStore;
use draftsmith::web::{JsClock, JsIds};
use draftsmith::{Core, IdSource, RecordingSink};
use serde_json::{json, Value};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

const TEXT: &str = "Mara climbed the stair.\nThe lamp was dark.\n";

/// A worker's core on the database `db`.
async fn worker(db: &str) -> Core {
    Core::new(Env {
        clock: Rc::new(JsClock),
        ids: Rc::new(JsIds),
        decoder: Rc::new(draftsmith::web::JsTextDecoder),
        events: Rc::new(RecordingSink::default()),
        store: Rc::new(IdbStore::open(db).await.expect("open the database")),
    })
}

async fn ok(core: &Core, kind: &str, params: Value) -> Value {
    let text = json!({"id": 1, "type": kind, "params": params}).to_string();
    let r: Value = serde_json::from_str(&core.handle_text(&text).await).unwrap();
    assert_eq!(r["ok"], true, "{kind} {params} -> {r}");
    r["result"].clone()
}

async fn tool(core: &Core, name: &str, args: Value) -> Value {
    let r = ok(
        core,
        "execute",
        json!({"tool": name, "args": args, "origin": "agent:architect"}),
    )
    .await;
    assert_eq!(r["status"], "success", "{name} -> {r}");
    r
}

#[wasm_bindgen_test]
async fn a_plan_survives_a_reload_and_a_chapter_write_is_undone() {
    let db = format!("draftsmith-files-{}", JsIds.next_id());
    let first = worker(&db).await;
    let project = ok(
        &first,
        "create_project",
        json!({"name": "Lighthouse", "chapters": [{"title": "The Stair", "text": TEXT}]}),
    )
    .await;
    let id = project["id"].as_str().unwrap().to_string();
    let plan = "# Outline\n1. Mara climbs.\n2. The lamp.\n";
    tool(
        &first,
        "write_file",
        json!({"path": "plans/outline.md", "content": plan}),
    )
    .await;
    let listing = tool(&first, "list_files", json!({"directory": "manuscripts"})).await;
    let chapter_file = listing["data"]["entries"][0]["path"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(chapter_file, "manuscripts/01-the-stair.md");
    let written = TEXT.replace("dark", "lit");
    tool(
        &first,
        "write_file",
        json!({"path": chapter_file, "content": written}),
    )
    .await;
    drop(first);

    // A reload: a new worker on the same database.
    let second = worker(&db).await;
    ok(&second, "open_project", json!({ "id": id })).await;
    let read = tool(&second, "read_file", json!({"path": "plans/outline.md"})).await;
    assert_eq!(read["data"]["content"], plan);
    assert_eq!(read["data"]["origin"], "agent:architect");
    let chapter = ok(&second, "get_chapter", json!({})).await;
    assert_eq!(chapter["text"], written);
    // The chapter write is one undo entry: plain undo takes it back, and that is saved.
    ok(&second, "undo", json!({})).await;
    assert_eq!(ok(&second, "get_chapter", json!({})).await["text"], TEXT);
    drop(second);

    // IndexedDB holds the plan and the undone chapter.
    let store = IdbStore::open(&db).await.unwrap();
    let record = store
        .get(Table::Files, &format!("{id}/plans/outline.md"))
        .await
        .unwrap()
        .expect("the plan's record");
    assert_eq!(record["file"]["content"], plan);
    let chapters = store
        .get_by_index(Table::Chapters, "project", json!(id))
        .await
        .unwrap();
    assert_eq!(chapters[0]["text"], TEXT);
    store.close();
    let third = worker(&db).await;
    ok(&third, "open_project", json!({ "id": id })).await;
    assert_eq!(ok(&third, "get_chapter", json!({})).await["text"], TEXT);
    drop(third);
    let _ = IdbStore::delete(&db).await;
}
