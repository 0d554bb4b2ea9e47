//! A keystroke's answer goes ahead of the core (`src/web/ahead.rs`), on real IndexedDB in a
//! dedicated worker: the worker's `ahead` function gets the answer with the promise of the
//! save's transaction, which resolves before the core's own answer does; when the transaction
//! aborts, the promise rejects and the core's answer follows its `storage_error`. A request
//! that waits for nothing is answered in the call (`WorkerCore::handle_for` returns its text).
#![cfg(target_arch = "wasm32")]

use std::cell::RefCell;
use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::store::faulty::{Crash, Faulty};
use draftsmith::web::ahead::{Scoped, Serving};
use draftsmith::web::idb::IdbStore;
use draftsmith::web::{JsClock, JsIds, JsTextDecoder, WorkerCore};
use draftsmith::{Core, IdSource, RecordingSink};
use js_sys::{Function, Promise};
use serde_json::{json, Value};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

/// What happened, in order: `landed`, `aborted` (the save's promise), `answered` (the core's).
type Log = Rc<RefCell<Vec<&'static str>>>;

/// The worker's `ahead(answer, landing)`: keeps the answer, and logs how `landing` settles.
fn ahead_function(
    log: &Log,
    given: &Rc<RefCell<Option<String>>>,
) -> Closure<dyn FnMut(String, Promise)> {
    let (log, given) = (log.clone(), given.clone());
    Closure::new(move |answer: String, landing: Promise| {
        *given.borrow_mut() = Some(answer);
        let (landed, aborted) = (log.clone(), log.clone());
        let on_land =
            Closure::<dyn FnMut(JsValue)>::new(move |_| landed.borrow_mut().push("landed"));
        let on_abort =
            Closure::<dyn FnMut(JsValue)>::new(move |_| aborted.borrow_mut().push("aborted"));
        let _ = landing.then2(&on_land, &on_abort);
        // Called at most once each, after this returns.
        on_land.forget();
        on_abort.forget();
    })
}

/// Await `handled` (the core's answer, or its promise), logging `answered` when it resolves.
async fn answered(log: &Log, handled: JsValue) -> String {
    let text = JsFuture::from(Promise::resolve(&handled))
        .await
        .expect("answered");
    log.borrow_mut().push("answered");
    text.as_string().expect("text")
}

/// A worker's core on a fresh database (its name starts with `prefix`), the database's name,
/// and the `emit` function the core calls, kept alive as long as the core.
async fn open_worker(prefix: &str) -> (WorkerCore, String, Closure<dyn FnMut()>) {
    let name = format!("{prefix}{}", JsIds.next_id());
    let (worker, emit) = worker_core(&name, None).await;
    (worker, name, emit)
}

/// A worker's core on the database `name`, told the schema version `schema` resolves to (as
/// worker.js reads it), and the `emit` function it calls.
async fn worker_core(name: &str, schema: Option<Promise>) -> (WorkerCore, Closure<dyn FnMut()>) {
    let emit = Closure::<dyn FnMut()>::new(|| {});
    let worker = WorkerCore::open(
        emit.as_ref().unchecked_ref::<Function>().clone(),
        Some(name.to_string()),
        None,
        None,
        None,
        schema,
    )
    .await
    .expect("open");
    (worker, emit)
}

/// `create_project` of a project of one chapter, "Hey.".
fn create_project(id: u64) -> String {
    request(
        id,
        "create_project",
        json!({"name": "P", "chapters": [{"title": "One", "text": "Hey."}]}),
    )
}

fn request(id: u64, kind: &str, params: Value) -> String {
    json!({"id": id, "type": kind, "params": params}).to_string()
}

fn keystroke(id: u64, chapter: &Value, version: &Value) -> String {
    request(
        id,
        "apply_user_change",
        json!({"chapter": chapter, "baseVersion": version, "changes": [{"retain": 3}, {"insert": "!"}], "tag": format!("k{id}")}),
    )
}

#[wasm_bindgen_test]
async fn a_keystroke_is_answered_when_its_transaction_lands_before_the_core_answers() {
    let (worker, name, _emit) = open_worker("draftsmith-ahead-").await;
    let log: Log = Rc::default();
    let text = answered(&log, worker.handle_for(None, create_project(1), None, None)).await;
    let project: Value = serde_json::from_str(&text).unwrap();
    let chapter = project["result"]["chapters"][0]["id"].clone();
    for (id, version) in [(2, 0), (3, 1)] {
        log.borrow_mut().clear();
        let given = Rc::new(RefCell::new(None));
        let ahead = ahead_function(&log, &given);
        let handled = worker.handle_for(
            None,
            keystroke(id, &chapter, &json!(version)),
            None,
            Some(ahead.as_ref().unchecked_ref::<Function>().clone()),
        );
        let answer = answered(&log, handled).await;
        assert_eq!(*log.borrow(), ["landed", "answered"], "keystroke {id}");
        assert_eq!(
            given.borrow().as_deref(),
            Some(answer.as_str()),
            "the same answer"
        );
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["result"]["version"], version + 1, "{answer}");
    }
    // A read gives nothing ahead.
    log.borrow_mut().clear();
    let given = Rc::new(RefCell::new(None));
    let ahead = ahead_function(&log, &given);
    answered(
        &log,
        worker.handle_for(
            None,
            request(4, "get_chapter", json!({ "chapter": chapter })),
            None,
            Some(ahead.as_ref().unchecked_ref::<Function>().clone()),
        ),
    )
    .await;
    assert_eq!(*log.borrow(), ["answered"]);
    assert!(given.borrow().is_none());
    drop(worker);
    IdbStore::delete(&name).await.expect("delete");
}

#[wasm_bindgen_test]
async fn a_keystroke_whose_transaction_aborts_is_answered_by_the_core_after_the_failure() {
    let name = format!("draftsmith-ahead-{}", JsIds.next_id());
    let store = Rc::new(Faulty::new(IdbStore::open(&name).await.expect("open")));
    let events = Rc::new(RecordingSink::default());
    let core = Core::new(Env {
        clock: Rc::new(JsClock),
        ids: Rc::new(JsIds),
        decoder: Rc::new(JsTextDecoder),
        events: events.clone(),
        store: store.clone(),
    });
    let created: Value = serde_json::from_str(
        &core
            .handle_text(&request(
                1,
                "create_project",
                json!({"name": "P", "chapters": [{"title": "One", "text": "Hey."}]}),
            ))
            .await,
    )
    .unwrap();
    let chapter = created["result"]["chapters"][0]["id"].clone();
    // A first keystroke, saved (the project's suggestions are loaded with it).
    let first: Value =
        serde_json::from_str(&core.handle_text(&keystroke(2, &chapter, &json!(0))).await).unwrap();
    assert_eq!(first["ok"], true, "{first}");
    events.take();
    // The next keystroke's transaction is placed, then aborted by IndexedDB half-way.
    store.crash_at(1, Crash::Abort(1));
    let log: Log = Rc::default();
    let given = Rc::new(RefCell::new(None));
    let ahead = ahead_function(&log, &given);
    // As `WorkerCore::handle_for` serves a request with an `ahead` function.
    let serving = Serving::new(ahead.as_ref().unchecked_ref::<Function>().clone());
    let keeper = serving.clone();
    let give = move |answer: &str| keeper.answer(answer);
    let text = keystroke(3, &chapter, &json!(1));
    let answer = Scoped::new(
        Some(serving),
        core.handle_in_ahead(&text, None, Some(&give)),
    )
    .await;
    log.borrow_mut().push("answered");
    // The rejection's callback runs before the core's future resumes.
    assert_eq!(*log.borrow(), ["aborted", "answered"]);
    assert_eq!(given.borrow().as_deref(), Some(answer.as_str()));
    let kinds: Vec<String> = events.take().into_iter().map(|e| e.kind).collect();
    assert!(kinds.iter().any(|k| k == "storage_error"), "{kinds:?}");
    assert!(!kinds.iter().any(|k| k == "saved"), "{kinds:?}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["ok"], true, "the change is applied: {answer}");
    drop(core);
    let store = Rc::try_unwrap(store).unwrap_or_else(|_| panic!("the store is still in use"));
    store.into_inner().close();
    IdbStore::delete(&name).await.expect("delete");
}

#[wasm_bindgen_test]
async fn a_request_that_waits_for_nothing_is_answered_in_the_call_and_a_save_by_a_promise() {
    let (worker, name, _emit) = open_worker("draftsmith-at-once-").await;
    let ok = |text: &str, id: u64| -> Value {
        let response: Value = serde_json::from_str(text).unwrap();
        assert_eq!(response["id"], id, "{text}");
        assert_eq!(response["ok"], true, "{text}");
        response["result"].clone()
    };

    // `hello` waits for nothing: its text comes back from the call, each time for its own id.
    for id in [1, 2] {
        let hello = worker.handle_for(None, request(id, "hello", json!({})), None, None);
        let text = hello.as_string().expect("hello answered in the call");
        assert_eq!(ok(&text, id)["name"], "draftsmith");
    }

    // Creating a project saves it: a promise, resolving to the answer.
    let created = worker.handle_for(None, create_project(3), None, None);
    assert!(created.is_instance_of::<Promise>(), "{created:?}");
    let text = JsFuture::from(created.unchecked_into::<Promise>())
        .await
        .expect("created")
        .as_string()
        .expect("text");
    ok(&text, 3);

    // Reading the chapter just saved waits for nothing again.
    let chapter = worker.handle_for(None, request(4, "get_chapter", json!({})), None, None);
    let text = chapter
        .as_string()
        .expect("get_chapter answered in the call");
    assert_eq!(ok(&text, 4)["text"], "Hey.");

    // A request the core refuses is answered in the call too, as an error.
    let refused = worker.handle_for(None, request(5, "no_such_request", json!({})), None, None);
    let response: Value = serde_json::from_str(&refused.as_string().expect("text")).unwrap();
    assert_eq!(response["ok"], false);
    drop(worker);
    IdbStore::delete(&name).await.expect("delete");
}

/// A database at the current tables whose data has no schema record, as version 1 wrote it: a
/// project without `updatedMs`.
async fn unmigrated_database() -> String {
    use draftsmith::store::{Batch, Store, Table, SCHEMA_VERSION};
    let name = format!("draftsmith-schema-{}", JsIds.next_id());
    let store = IdbStore::open_version(&name, SCHEMA_VERSION)
        .await
        .expect("open");
    let mut batch = Batch::new();
    batch.put_value(Table::Projects, json!({"id": "p", "createdMs": 7}));
    store.commit(batch).await.expect("write");
    store.close();
    name
}

/// The project's `updatedMs` after a worker's core opened `name` with the schema version
/// `told` (the promise worker.js hands it), or none.
async fn opened_told(name: &str, told: Option<JsValue>) -> Value {
    use draftsmith::store::{Store, Table, SCHEMA_VERSION};
    let (worker, _emit) = worker_core(name, told.map(|value| Promise::resolve(&value))).await;
    drop(worker);
    let store = IdbStore::open_version(name, SCHEMA_VERSION)
        .await
        .expect("reopen");
    let project = store.get(Table::Projects, "p").await.expect("read");
    store.close();
    project.expect("the project")["updatedMs"].clone()
}

/// The schema version worker.js read on its early connection spares the core its own read
/// only when it is the current one: told so, the core takes the data as migrated (here it is
/// not, which shows the read was skipped); told nothing, an older version or something that
/// is not a version, it reads the record and migrates.
#[wasm_bindgen_test]
async fn a_core_told_the_current_schema_version_does_not_read_it_and_any_other_does() {
    use draftsmith::store::SCHEMA_VERSION;
    let name = unmigrated_database().await;
    assert_eq!(
        opened_told(&name, Some(JsValue::from(SCHEMA_VERSION))).await,
        Value::Null
    );
    IdbStore::delete(&name).await.expect("delete");

    for told in [
        None,
        Some(JsValue::NULL),
        Some(JsValue::from(SCHEMA_VERSION - 1)),
        Some(JsValue::from(f64::from(SCHEMA_VERSION) + 0.5)),
        Some(JsValue::from_str(&SCHEMA_VERSION.to_string())),
    ] {
        let name = unmigrated_database().await;
        assert_eq!(
            opened_told(&name, told.clone()).await,
            json!(7),
            "told {told:?}"
        );
        IdbStore::delete(&name).await.expect("delete");
    }
}
