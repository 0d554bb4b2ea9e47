//! Research in a dedicated worker, on IndexedDB and real `fetch`: the dev server's offline
//! demo model (its CORS copy under `/mock/demo/v1`) calls `research_url` on a page the dev
//! server serves, read through the dev server's research proxy (`/proxy?url=`, open to
//! another origin only with `--mock` and only for the server's own pages); the note
//! survives a reload (a new core on the same database); `search_research` finds it, and the
//! demo model cites it.
#![cfg(target_arch = "wasm32")]

use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::research::html::{ExtractError, Extracted, PageReader};
use draftsmith::web::fetch::{FetchTransport, JsSleeper};
use draftsmith::web::idb::IdbStore;
use draftsmith::web::{JsClock, JsIds};
use draftsmith::{Core, IdSource, RecordingSink};
use futures_util::future::LocalBoxFuture;
use serde_json::{json, Value};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

mod web_common;
use web_common::MOCK;

/// Pages read in this worker (the worker of the page loads the reader's own module, which
/// the end-to-end tests prove).
struct InProcess;

impl PageReader for InProcess {
    fn read(
        &self,
        html: String,
    ) -> LocalBoxFuture<'static, Result<Result<Extracted, ExtractError>, String>> {
        Box::pin(std::future::ready(Ok(draftsmith_reader::extract(&html))))
    }
}

struct Worker {
    core: Core,
    events: Rc<RecordingSink>,
}

impl Worker {
    async fn open(db: &str) -> Self {
        let events = Rc::new(RecordingSink::default());
        let store = Rc::new(IdbStore::open(db).await.unwrap());
        let core = Core::new(Env {
            clock: Rc::new(JsClock),
            ids: Rc::new(JsIds),
            decoder: Rc::new(draftsmith::web::JsTextDecoder),
            events: events.clone(),
            store,
        })
        .with_llm(Rc::new(FetchTransport), Rc::new(JsSleeper))
        .with_spawner(Rc::new(wasm_bindgen_futures::spawn_local))
        .with_reader(Rc::new(InProcess));
        Self { core, events }
    }

    async fn send(&self, kind: &str, params: Value) -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        serde_json::from_str(&self.core.handle_text(&text).await).unwrap()
    }

    async fn ok(&self, kind: &str, params: Value) -> Value {
        let r = self.send(kind, params.clone()).await;
        assert_eq!(r["ok"], true, "{kind} {params} -> {r}");
        r["result"].clone()
    }
}

fn page() -> String {
    format!("{MOCK}e2e/fixtures/research/lighthouse.html")
}

#[wasm_bindgen_test]
async fn research_url_reads_a_page_through_the_proxy_and_the_note_survives_a_reload() {
    let db = format!("draftsmith-research-{}", JsIds.next_id());
    let a = Worker::open(&db).await;
    a.ok(
        "set_settings",
        json!({
            "provider": "openai", "baseUrl": format!("{MOCK}mock/demo/v1"), "model": "demo",
            "researchProxy": format!("{MOCK}proxy?url={{url}}"),
            // The dev server is on loopback.
            "researchAllowPrivate": true,
        }),
    )
    .await;
    let project = a
        .ok(
            "create_project",
            json!({"name": "Research", "chapters": [{"title": "One", "text": "The lamp was dark."}]}),
        )
        .await;
    let id = project["id"].as_str().unwrap().to_string();

    // Private addresses stay refused unless allowed, before anything is fetched.
    a.ok("set_settings", json!({"researchAllowPrivate": false}))
        .await;
    let refused = a
        .ok(
            "execute",
            json!({"tool": "research_url", "args": {"url": page()}}),
        )
        .await;
    assert_eq!(refused["data"]["code"], "forbidden_address", "{refused}");
    a.ok("set_settings", json!({"researchAllowPrivate": true}))
        .await;

    // The demo agent reads the page.
    let run = a
        .ok("run", json!({"prompt": format!("research {}", page())}))
        .await;
    assert_eq!(run["status"], "finished", "{run}");
    let text = run["text"].as_str().unwrap();
    assert!(
        text.contains("\"How a lighthouse lamp works\""),
        "the agent names what it read: {text}"
    );
    let listed = a.ok("research_list", json!({})).await;
    assert_eq!(listed["count"], 1, "{listed}");
    let note = &listed["notes"][0];
    assert_eq!(note["title"], "How a lighthouse lamp works");
    assert_eq!(note["url"], page());
    assert_eq!(note["askedBy"], "agent:assistant");
    let preview = note["preview"].as_str().unwrap();
    assert!(
        preview.starts_with("A lighthouse lamp is small, but the Fresnel lens"),
        "{preview}"
    );
    assert!(
        !preview.contains("tracking code") && !preview.contains("Subscribe"),
        "{preview}"
    );
    let changed = a
        .events
        .peek()
        .into_iter()
        .filter(|e| e.kind == "research_changed")
        .count();
    assert_eq!(changed, 1);

    // A reload: a new core on the same IndexedDB.
    drop(a);
    let b = Worker::open(&db).await;
    b.ok("open_project", json!({ "id": id })).await;
    let listed = b.ok("research_list", json!({})).await;
    assert_eq!(listed["count"], 1, "the note survived the reload: {listed}");
    assert_eq!(listed["notes"][0]["title"], "How a lighthouse lamp works");

    // search_research finds it, from the page and from the demo agent, who cites it.
    let found = b
        .ok(
            "execute",
            json!({"tool": "search_research", "args": {"query": "fresnel lens beam"}}),
        )
        .await;
    assert_eq!(
        found["data"]["hits"][0]["title"], "How a lighthouse lamp works",
        "{found}"
    );
    assert_eq!(found["data"]["hits"][0]["url"], page());
    let missing = b
        .ok(
            "execute",
            json!({"tool": "search_research", "args": {"query": "volcano"}}),
        )
        .await;
    assert_eq!(missing["data"]["hits"], json!([]));
    b.ok(
        "set_settings",
        json!({"provider": "openai", "baseUrl": format!("{MOCK}mock/demo/v1"), "model": "demo"}),
    )
    .await;
    let run = b
        .ok(
            "run",
            json!({"prompt": "Search the research for Fresnel lens", "newConversation": true}),
        )
        .await;
    let text = run["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!(
            "According to \"How a lighthouse lamp works\" ({}):",
            page()
        )),
        "{text}"
    );
}
