//! One writer for every tab: the writing worker's core serves each other tab's page as a
//! client ([`Core::client`]) over one copy of each project. Two clients typing into one
//! chapter at once (really interleaved: store operations yield to the executor) keep every change, each
//! client has its own open project, and events name the project (and client) they concern.
#![cfg(not(target_arch = "wasm32"))]

use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::store::faulty::Faulty;
use draftsmith::store::MemoryStore;
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures::executor::block_on;
use futures::future::join_all;
use serde_json::{json, Value};

struct Tabs {
    writer: Core,
    events: Rc<RecordingSink>,
    store: Rc<Faulty<MemoryStore>>,
}

fn tabs() -> Tabs {
    let events = Rc::new(RecordingSink::default());
    // Every store operation yields to the executor first, as IndexedDB's do.
    let store = Rc::new(Faulty::new(MemoryStore::new()));
    store.set_yielding(true);
    let writer = Core::new(Env {
        clock: Rc::new(ManualClock::new(1_000)),
        ids: Rc::new(SequentialIds::new("id")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: events.clone(),
        store: store.clone(),
    });
    Tabs {
        writer,
        events,
        store,
    }
}

async fn request(core: &Core, project: Option<&str>, kind: &str, params: Value) -> Value {
    let text = json!({"id": 1, "type": kind, "params": params}).to_string();
    let out: Value = serde_json::from_str(&core.handle_in(&text, project).await).unwrap();
    assert_eq!(out["ok"], true, "{kind} failed: {out}");
    out["result"].clone()
}

#[test]
fn two_clients_typing_at_once_into_one_chapter_keep_every_keystroke() {
    let t = tabs();
    let other = t.writer.client("tab-b");
    block_on(async {
        let project = request(
            &t.writer,
            None,
            "create_project",
            json!({"name": "Shared", "chapters": [{"title": "One", "text": "ab"}]}),
        )
        .await;
        let id = project["id"].as_str().unwrap().to_string();
        let chapter = project["chapters"][0]["id"].as_str().unwrap().to_string();
        // Each tab types 20 characters, each keystroke based on the version it last saw
        // (version 0, the one both saw), all sent before any is answered.
        let mut typing = Vec::new();
        for i in 0..20u64 {
            for (core, ch, at) in [(&t.writer, 'x', 0), (&other, 'y', 1)] {
                let params = json!({
                    "chapter": chapter,
                    "baseVersion": 0,
                    "changes": if at == 0 { json!([{"insert": ch.to_string()}, {"retain": 2}]) }
                               else { json!([{"retain": 2}, {"insert": ch.to_string()}]) },
                    "tag": format!("{ch}{i}"),
                });
                let id = id.clone();
                typing.push(
                    async move { request(core, Some(&id), "apply_user_change", params).await },
                );
            }
        }
        let results = join_all(typing).await;
        assert_eq!(results.len(), 40);
        let text = request(&other, Some(&id), "get_chapter", json!({})).await["text"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(text.matches('x').count(), 20, "{text}");
        assert_eq!(text.matches('y').count(), 20, "{text}");
        assert!(text.contains("ab"), "{text}");
        // A new core on the same store (every tab closed, one reopened) has all of it.
        let reopened = Core::new(Env {
            clock: Rc::new(ManualClock::new(2_000)),
            ids: Rc::new(SequentialIds::new("re")),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: Rc::new(RecordingSink::default()),
            store: t.store.clone(),
        });
        let again = request(&reopened, Some(&id), "get_chapter", json!({})).await;
        assert_eq!(again["text"], json!(text));
    });
}

#[test]
fn each_client_has_its_own_project_and_events_name_project_and_client() {
    let t = tabs();
    let other = t.writer.client("tab-b");
    block_on(async {
        let first = request(
            &t.writer,
            None,
            "create_project",
            json!({"name": "First", "chapters": [{"title": "One", "text": "A."}]}),
        )
        .await;
        let second = request(
            &other,
            None,
            "create_project",
            json!({"name": "Second", "chapters": [{"title": "One", "text": "B."}]}),
        )
        .await;
        let (p1, p2) = (
            first["id"].as_str().unwrap(),
            second["id"].as_str().unwrap(),
        );
        assert_eq!(t.writer.current_project().as_deref(), Some(p1));
        assert_eq!(other.current_project().as_deref(), Some(p2));
        t.events.take();
        request(
            &other,
            None,
            "execute",
            json!({"tool": "append_to_manuscript", "args": {"text": "More."}}),
        )
        .await;
        assert_eq!(
            request(&t.writer, None, "get_chapter", json!({})).await["text"],
            "A."
        );
        assert_eq!(
            request(&other, None, "get_chapter", json!({})).await["text"],
            "B.\n\nMore."
        );
        let events = t.events.take();
        let edit = events.iter().find(|e| e.kind == "edit").expect("an edit");
        assert_eq!(edit.project.as_deref(), Some(p2));
        assert_eq!(edit.client.as_deref(), Some("tab-b"));
        let json: Value = serde_json::from_str(&edit.to_json()).unwrap();
        assert_eq!(json["project"], json!(p2));
        assert_eq!(json["client"], "tab-b");
        // A client that shows a project it has not opened here (a new writer took over)
        // gets it opened by its first request.
        let late = t.writer.client("tab-c");
        let text = request(&late, Some(p1), "get_chapter", json!({})).await["text"].clone();
        assert_eq!(text, "A.");
        // The project list concerns every tab.
        request(&late, None, "rename_project", json!({"name": "Renamed"})).await;
        let renamed = t.events.take();
        let listed = renamed
            .iter()
            .find(|e| e.kind == "projects_changed")
            .expect("projects_changed");
        assert_eq!(listed.project, None);
    });
}
