//! Sync between cores through a server that speaks the Hocuspocus protocol: the cores' side
//! of it natively (the browser's, against a real Hocuspocus, is in the e2e tests).
//!
//! The server here keeps a yrs document per name, takes one token, answers step 1 with its
//! own step 1 and step 2, applies updates, acknowledges each and sends each to every
//! connection (the sender's too), and passes awareness on, as Hocuspocus does.
#![cfg(not(target_arch = "wasm32"))]

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use draftsmith::core::Env;
use draftsmith::env::{ManualClock, RecordingSink, SequentialIds, SyncSocket, SyncTransport};
use draftsmith::llm::client::Sleeper;
use draftsmith::replica::wire;
use draftsmith::store::{Batch, MemoryStore, Store, Table};
use draftsmith::Core;
use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use futures_util::future::LocalBoxFuture;
use serde_json::{json, Value};
use yrs::encoding::read::{Cursor, Read};
use yrs::updates::decoder::Decode;
use yrs::updates::encoder::Encode;
use yrs::{Doc, ReadTxn, StateVector, Transact, Update};

const TOKEN: &str = "good-token";

/// One connection's inbound frames.
#[derive(Default)]
struct Conn {
    inbox: RefCell<VecDeque<Vec<u8>>>,
    closed: Cell<bool>,
    authed: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

impl Conn {
    fn push(&self, frame: Vec<u8>) {
        if self.closed.get() {
            return;
        }
        self.inbox.borrow_mut().push_back(frame);
        if let Some(w) = self.waker.borrow_mut().take() {
            w.wake();
        }
    }

    fn close(&self) {
        self.closed.set(true);
        if let Some(w) = self.waker.borrow_mut().take() {
            w.wake();
        }
    }
}

/// The server.
#[derive(Default)]
struct Server {
    doc: RefCell<Option<(String, Doc)>>,
    conns: RefCell<Vec<Rc<Conn>>>,
    /// Connections refused while set (the network is cut).
    down: Cell<bool>,
}

impl Server {
    fn handle(&self, from: &Rc<Conn>, frame: &[u8]) {
        let mut cursor = Cursor::new(frame);
        let name = cursor.read_string().unwrap().to_string();
        let kind: u32 = cursor.read_var().unwrap();
        if kind == 2 {
            let _sub: u32 = cursor.read_var().unwrap();
            let token = cursor.read_string().unwrap();
            let mut reply = Vec::new();
            use yrs::encoding::write::Write;
            reply.write_string(&name);
            reply.write_var(2u32);
            if token == TOKEN {
                from.authed.set(true);
                reply.write_var(2u32);
                reply.write_string("read-write");
            } else {
                reply.write_var(1u32);
                reply.write_string("invalid token");
            }
            from.push(reply);
            return;
        }
        if !from.authed.get() {
            return;
        }
        let mut slot = self.doc.borrow_mut();
        let (_, doc) = slot.get_or_insert_with(|| (name.clone(), Doc::new()));
        match kind {
            0 => {
                let step: u32 = cursor.read_var().unwrap();
                let bytes = cursor.read_buf().unwrap().to_vec();
                match step {
                    0 => {
                        let sv = StateVector::decode_v1(&bytes).unwrap();
                        let txn = doc.transact();
                        from.push(wire::step1(&name, &txn.state_vector().encode_v1()));
                        from.push(wire::step2(&name, &txn.encode_state_as_update_v1(&sv)));
                    }
                    _ => {
                        doc.transact_mut()
                            .apply_update(Update::decode_v1(&bytes).unwrap())
                            .unwrap();
                        let mut ack = Vec::new();
                        use yrs::encoding::write::Write;
                        ack.write_string(&name);
                        ack.write_var(8u32);
                        ack.write_var(1u32);
                        from.push(ack);
                        for conn in self.conns.borrow().iter().filter(|c| c.authed.get()) {
                            conn.push(wire::update(&name, &bytes));
                        }
                    }
                }
            }
            1 => {
                for conn in self.conns.borrow().iter().filter(|c| c.authed.get()) {
                    conn.push(frame.to_vec());
                }
            }
            _ => {}
        }
    }

    /// The server's copy of a chapter's text.
    fn text(&self, chapter: &str) -> String {
        use yrs::{GetString, Map, Out};
        let slot = self.doc.borrow();
        let (_, doc) = slot.as_ref().unwrap();
        let chapters = doc.get_or_insert_map("chapters");
        let txn = doc.transact();
        match chapters.get(&txn, chapter) {
            Some(Out::YMap(map)) => match map.get(&txn, "text") {
                Some(Out::YText(t)) => t.get_string(&txn),
                _ => String::new(),
            },
            _ => String::new(),
        }
    }
}

struct Socket {
    server: Rc<Server>,
    conn: Rc<Conn>,
}

impl SyncSocket for Socket {
    fn send(&self, frame: &[u8]) -> Result<(), String> {
        if self.conn.closed.get() {
            return Err("closed".into());
        }
        self.server.handle(&self.conn, frame);
        Ok(())
    }

    fn next(&self) -> LocalBoxFuture<'static, Option<Vec<u8>>> {
        Box::pin(Next(Rc::clone(&self.conn)))
    }

    fn close(&self) {
        self.conn.close();
    }
}

struct Next(Rc<Conn>);

impl Future for Next {
    type Output = Option<Vec<u8>>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(frame) = self.0.inbox.borrow_mut().pop_front() {
            return Poll::Ready(Some(frame));
        }
        if self.0.closed.get() {
            return Poll::Ready(None);
        }
        *self.0.waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// One device's network: it reaches the server unless cut.
struct Net {
    server: Rc<Server>,
    cut: Cell<bool>,
    conns: RefCell<Vec<Rc<Conn>>>,
}

impl SyncTransport for Net {
    fn connect(&self, _url: &str) -> LocalBoxFuture<'static, Result<Rc<dyn SyncSocket>, String>> {
        if self.cut.get() || self.server.down.get() {
            return Box::pin(async { Err("network unreachable".to_string()) });
        }
        let conn = Rc::new(Conn::default());
        self.server.conns.borrow_mut().push(Rc::clone(&conn));
        self.conns.borrow_mut().push(Rc::clone(&conn));
        let socket: Rc<dyn SyncSocket> = Rc::new(Socket {
            server: Rc::clone(&self.server),
            conn,
        });
        Box::pin(async move { Ok(socket) })
    }
}

impl Net {
    /// Cut the network: open connections drop, new ones fail.
    fn cut(&self) {
        self.cut.set(true);
        for conn in self.conns.borrow_mut().drain(..) {
            conn.close();
        }
    }
}

/// A sleep not yet over: whether it is, and what to wake when it is.
type Due = (Rc<Cell<bool>>, Option<Waker>);

/// Sleeps that end only when the test says time passed.
#[derive(Default)]
struct Timers {
    due: RefCell<Vec<Due>>,
}

impl Timers {
    fn pass(&self) {
        for (done, waker) in self.due.borrow_mut().drain(..) {
            done.set(true);
            if let Some(w) = waker {
                w.wake();
            }
        }
    }
}

struct Sleep(Rc<Cell<bool>>, Rc<Timers>);

impl Future for Sleep {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.get() {
            return Poll::Ready(());
        }
        self.1
            .due
            .borrow_mut()
            .push((Rc::clone(&self.0), Some(cx.waker().clone())));
        Poll::Pending
    }
}

struct TestSleeper(Rc<Timers>);

impl Sleeper for TestSleeper {
    fn sleep(&self, _ms: u64) -> LocalBoxFuture<'static, ()> {
        Box::pin(Sleep(Rc::new(Cell::new(false)), Rc::clone(&self.0)))
    }
}

/// A device: a core with its own store, on the shared executor.
struct Device {
    core: Core,
    net: Rc<Net>,
    events: Rc<RecordingSink>,
    store: Rc<MemoryStore>,
}

struct World {
    pool: RefCell<LocalPool>,
    server: Rc<Server>,
    timers: Rc<Timers>,
}

impl World {
    fn new() -> Self {
        World {
            pool: RefCell::new(LocalPool::new()),
            server: Rc::new(Server::default()),
            timers: Rc::new(Timers::default()),
        }
    }

    fn device(&self, name: &str) -> Device {
        self.device_on(name, Rc::new(MemoryStore::new()))
    }

    /// A device whose core keeps its projects in `store` (a reload: a new core on the same
    /// storage).
    fn device_on(&self, name: &str, store: Rc<MemoryStore>) -> Device {
        let net = Rc::new(Net {
            server: Rc::clone(&self.server),
            cut: Cell::new(false),
            conns: RefCell::new(Vec::new()),
        });
        let events = Rc::new(RecordingSink::default());
        let spawner = self.pool.borrow().spawner();
        let core = Core::new(Env {
            clock: Rc::new(ManualClock::new(1_700_000_000_000)),
            ids: Rc::new(SequentialIds::new(name)),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: events.clone(),
            store: store.clone(),
        })
        .with_spawner(Rc::new(move |f| {
            let _ = spawner.spawn_local(f);
        }))
        .with_sync(net.clone(), Rc::new(TestSleeper(Rc::clone(&self.timers))));
        Device {
            core,
            net,
            events,
            store,
        }
    }

    fn send(&self, d: &Device, kind: &str, params: Value) -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        let answer = self.pool.borrow_mut().run_until(d.core.handle_text(&text));
        serde_json::from_str(&answer).unwrap()
    }

    fn ok(&self, d: &Device, kind: &str, params: Value) -> Value {
        let r = self.send(d, kind, params.clone());
        assert_eq!(r["ok"], true, "{kind} {params} -> {r}");
        r["result"].clone()
    }

    fn settle(&self) {
        self.pool.borrow_mut().run_until_stalled();
    }

    /// Create (and open) a project named `name` of one chapter with `text`; its id.
    fn create(&self, d: &Device, name: &str, text: &str) -> String {
        let project = self.ok(
            d,
            "create_project",
            json!({"name": name, "chapters": [{"title": "One", "text": text}]}),
        );
        project["id"].as_str().unwrap().to_string()
    }

    fn text(&self, d: &Device) -> String {
        let chapter = self.ok(d, "get_chapter", json!({}));
        chapter["text"].as_str().unwrap().to_string()
    }

    fn chapter_id(&self, d: &Device) -> String {
        let chapter = self.ok(d, "get_chapter", json!({}));
        chapter["id"].as_str().unwrap().to_string()
    }

    /// The writer types `s` at the end of the chapter.
    fn type_end(&self, d: &Device, s: &str) {
        let chapter = self.ok(d, "get_chapter", json!({}));
        let len = chapter["text"].as_str().unwrap().chars().count();
        self.ok(
            d,
            "apply_user_change",
            json!({
                "chapter": chapter["id"],
                "baseVersion": chapter["version"],
                "changes": [{"retain": len}, {"insert": s}],
            }),
        );
    }

    /// An agent inserts `s` after `anchor`.
    fn agent_after(&self, d: &Device, anchor: &str, s: &str) {
        let r = self.ok(
            d,
            "execute",
            json!({
                "tool": "insert_text",
                "args": {"anchorText": anchor, "text": s},
                "origin": "agent:helper",
            }),
        );
        assert_eq!(r["status"], "success", "{r}");
    }

    fn status(&self, d: &Device) -> Value {
        self.ok(d, "sync_status", json!({}))
    }
}

/// Device A with a project shared, and device B that fetched it.
fn two_devices(world: &World) -> (Device, Device, String) {
    let a = world.device("a");
    let id = world.create(&a, "Shared", "[start]");
    let status = world.ok(
        &a,
        "sync_connect",
        json!({"url": "ws://sync.test", "token": TOKEN, "name": "Ann"}),
    );
    assert_eq!(status["project"], id.as_str());
    world.settle();
    assert_eq!(world.status(&a)["status"], "connected");
    let b = world.device("b");
    let fetched = world.ok(
        &b,
        "sync_connect",
        json!({"url": "ws://sync.test", "token": TOKEN, "project": id, "name": "Ben"}),
    );
    assert_eq!(fetched["status"], "connected", "{fetched}");
    world.settle();
    (a, b, id)
}

#[test]
fn a_device_fetches_a_shared_project_and_edits_go_both_ways() {
    let world = World::new();
    let (a, b, _) = two_devices(&world);
    assert_eq!(world.text(&b), "[start]");
    assert_eq!(world.chapter_id(&a), world.chapter_id(&b));
    world.type_end(&a, "[a1]");
    world.type_end(&b, "[b1]");
    world.settle();
    let (ta, tb) = (world.text(&a), world.text(&b));
    assert_eq!(ta, tb);
    assert!(ta.contains("[a1]") && ta.contains("[b1]"), "{ta}");
    assert_eq!(world.server.text(&world.chapter_id(&a)), ta);
    // Each sees the other by name.
    let peers = &world.status(&a)["peers"];
    assert!(
        peers.as_array().unwrap().iter().any(|p| p["name"] == "Ben"),
        "{peers}"
    );
    // B's text reached A as a change from another device.
    let edits: Vec<_> = a
        .events
        .take()
        .into_iter()
        .filter(|e| e.kind == "edit" && e.data["origin"] == "remote:Ben")
        .collect();
    assert!(!edits.is_empty());
    // Every update was acknowledged.
    assert_eq!(world.status(&a)["unsent"], 0);
}

#[test]
fn typing_and_agent_appends_on_both_devices_at_once_converge_with_every_edit_once() {
    let world = World::new();
    let (a, b, _) = two_devices(&world);
    let mut tokens = Vec::new();
    for i in 0..25 {
        // Both devices' requests are made before either's updates are delivered.
        let (ta, tb) = (format!("[a{i}]"), format!("[b{i}]"));
        world.type_end(&a, &ta);
        world.type_end(&b, &tb);
        let (ga, gb) = (format!("[a-agent{i}]"), format!("[b-agent{i}]"));
        world.agent_after(&a, "[start]", &ga);
        world.agent_after(&b, "[start]", &gb);
        tokens.extend([ta, tb, ga, gb]);
        if i % 5 == 4 {
            world.settle();
        }
    }
    world.settle();
    let (ta, tb) = (world.text(&a), world.text(&b));
    assert_eq!(ta, tb);
    for token in &tokens {
        assert_eq!(ta.matches(token.as_str()).count(), 1, "{token} in {ta}");
    }
}

#[test]
fn offline_edits_merge_on_reconnect_and_undo_stays_local() {
    let world = World::new();
    let (a, b, _) = two_devices(&world);
    a.net.cut();
    world.settle();
    assert_eq!(world.status(&a)["status"], "offline");
    world.type_end(&a, "[a-offline1]");
    world.agent_after(&a, "[start]", "[a-agent]");
    world.type_end(&b, "[b-online]");
    world.settle();
    let offline = world.status(&a);
    assert_eq!(offline["status"], "offline");
    assert!(offline["unsent"].as_u64().unwrap() >= 2, "{offline}");
    // A long while offline: every keystroke is kept (the queue folds, the count goes on).
    for _ in 0..300 {
        world.type_end(&a, "x");
    }
    let offline = world.status(&a);
    assert!(offline["unsent"].as_u64().unwrap() >= 302, "{offline}");
    assert!(!world.text(&a).contains("[b-online]"));
    // The network comes back; the link tries again when its wait ends.
    a.net.cut.set(false);
    world.timers.pass();
    world.settle();
    assert_eq!(world.status(&a)["status"], "connected");
    let (ta, tb) = (world.text(&a), world.text(&b));
    assert_eq!(ta, tb);
    for token in ["[a-offline1]", "[a-agent]", "[b-online]", "[start]"] {
        assert_eq!(ta.matches(token).count(), 1, "{token} in {ta}");
    }
    assert_eq!(ta.matches('x').count(), 300);
    // B types after A's agent edit arrived; A undoes its agent: B's text stays everywhere.
    world.type_end(&b, "[b-after]");
    world.settle();
    world.ok(&a, "undo", json!({"origin": "agent"}));
    world.settle();
    let (ta, tb) = (world.text(&a), world.text(&b));
    assert_eq!(ta, tb);
    assert!(!ta.contains("[a-agent]"), "{ta}");
    assert!(
        ta.contains("[b-after]") && ta.contains("[b-online]"),
        "{ta}"
    );
    // B's plain undo takes back only B's own typing.
    world.ok(&b, "undo", json!({}));
    world.settle();
    let tb = world.text(&b);
    assert!(!tb.contains("[b-after]"), "{tb}");
    assert!(tb.contains("[a-offline1]"), "{tb}");
    assert_eq!(world.text(&a), tb);
}

#[test]
fn a_refused_token_is_unauthorized_and_leaves_local_work_alone() {
    let world = World::new();
    let a = world.device("a");
    world.create(&a, "Mine", "[mine]");
    world.ok(
        &a,
        "sync_connect",
        json!({"url": "ws://sync.test", "token": "forged"}),
    );
    world.settle();
    let status = world.status(&a);
    assert_eq!(status["status"], "unauthorized", "{status}");
    assert_eq!(status["reason"], "invalid token");
    assert_eq!(world.text(&a), "[mine]");
    world.type_end(&a, "[more]");
    world.settle();
    assert_eq!(world.text(&a), "[mine][more]");
    // The server got nothing.
    assert!(world.server.doc.borrow().is_none());
    let events: Vec<_> = a
        .events
        .take()
        .into_iter()
        .filter(|e| e.kind == "sync_status")
        .collect();
    assert!(events.iter().any(|e| e.data["status"] == "unauthorized"));
    // Fetching a project with a bad token fails, and creates nothing.
    let b = world.device("b");
    let r = world.send(
        &b,
        "sync_connect",
        json!({"url": "ws://sync.test", "token": "forged", "project": "p-x"}),
    );
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(
        world.ok(&b, "list_projects", json!({}))["projects"],
        json!([])
    );
}

#[test]
fn bad_connect_params_are_refused() {
    let world = World::new();
    let a = world.device("a");
    world.ok(&a, "create_project", json!({"name": "Mine"}));
    for params in [
        json!({"url": "http://x", "token": TOKEN}),
        json!({"url": "ws://x", "token": " "}),
    ] {
        let r = world.send(&a, "sync_connect", params);
        assert_eq!(r["ok"], false, "{r}");
        assert_eq!(r["error"]["code"], "invalid_params", "{r}");
    }
    assert_eq!(world.status(&a)["status"], "disconnected");
}

fn notes(world: &World, d: &Device, field: &str) -> Value {
    let list = world.ok(d, "bible_list", json!({"kind": "character"}));
    list["kinds"]["character"][0][field].clone()
}

#[test]
fn a_field_written_on_both_devices_ends_alike_with_the_other_value_restorable() {
    let world = World::new();
    let (a, b, _) = two_devices(&world);
    world.ok(
        &a,
        "bible_save",
        json!({"kind": "character", "id": "mara", "fields": {"name_src": "Mara"}}),
    );
    world.settle();
    assert_eq!(notes(&world, &b, "name_src"), "Mara");
    // The writer on A and an agent on B write the pronouns while A is offline.
    a.net.cut();
    world.settle();
    world.ok(
        &a,
        "bible_save",
        json!({"kind": "character", "id": "mara", "fields": {"pronouns": "she/her"}}),
    );
    let r = world.ok(
        &b,
        "execute",
        json!({"tool": "character_update_pronouns", "origin": "agent:lore",
               "args": {"character": "mara", "pronouns": "they/them"}}),
    );
    assert_eq!(r["status"], "success", "{r}");
    a.net.cut.set(false);
    world.timers.pass();
    world.settle();
    let (on_a, on_b) = (notes(&world, &a, "pronouns"), notes(&world, &b, "pronouns"));
    assert_eq!(on_a, on_b);
    assert_eq!(
        notes(&world, &a, "pronouns_origin"),
        notes(&world, &b, "pronouns_origin")
    );
    for d in [&a, &b] {
        let revisions = world.ok(
            d,
            "bible_revisions",
            json!({"kind": "character", "id": "mara", "field": "pronouns"}),
        );
        let list = revisions["revisions"].as_array().unwrap();
        let values: Vec<&Value> = list.iter().map(|r| &r["value"]).collect();
        assert!(values.contains(&&json!("she/her")), "{revisions}");
        assert!(values.contains(&&json!("they/them")), "{revisions}");
        assert_eq!(list.iter().filter(|r| r["current"] == true).count(), 1);
        let writer = list.iter().find(|r| r["value"] == "she/her").unwrap();
        assert_eq!(writer["origin"], "human");
    }
    // The writer restores the value that lost, and both devices have it.
    let lost = if on_a == "she/her" {
        "they/them"
    } else {
        "she/her"
    };
    world.ok(
        &a,
        "bible_save",
        json!({"kind": "character", "id": "mara", "fields": {"pronouns": lost}}),
    );
    world.settle();
    assert_eq!(notes(&world, &b, "pronouns"), lost);
}

#[test]
fn a_waiting_approval_about_a_field_changed_remotely_is_refreshed() {
    let world = World::new();
    let (a, b, _) = two_devices(&world);
    world.ok(
        &a,
        "bible_save",
        json!({"kind": "character", "id": "mara", "fields": {"name_src": "Mara", "notes": "Brave."}}),
    );
    world.settle();
    // An agent on A asks to overwrite what the writer wrote: it waits for approval.
    let r = world.send(
        &a,
        "execute",
        json!({"tool": "character_update_notes", "origin": "agent:lore",
               "args": {"character": "mara", "notes": "Cowardly."}}),
    );
    let waiting = world.ok(&a, "list_approvals", json!({}));
    let card = &waiting["approvals"][0];
    assert_eq!(card["current"]["notes"], "Brave.", "{r} {waiting}");
    let digest = card["digest"].clone();
    a.events.take();
    // The co-author on B changes the notes.
    world.ok(
        &b,
        "bible_save",
        json!({"kind": "character", "id": "mara", "fields": {"notes": "Brave, and kind."}}),
    );
    world.settle();
    let waiting = world.ok(&a, "list_approvals", json!({}));
    let card = &waiting["approvals"][0];
    assert_eq!(card["current"]["notes"], "Brave, and kind.", "{waiting}");
    assert_ne!(card["digest"], digest);
    assert!(a.events.take().iter().any(|e| e.kind == "approvals_changed"
        && e.data["requested"]["current"]["notes"] == "Brave, and kind."));
}

#[test]
fn peers_see_where_each_cursor_is() {
    let world = World::new();
    let (a, b, _) = two_devices(&world);
    let chapter = world.chapter_id(&b);
    world.ok(
        &b,
        "execute",
        json!({"tool": "set_selection", "args": {"start": 3, "end": 3}}),
    );
    world.settle();
    let peers = world.status(&a)["peers"].clone();
    let ben = peers
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "Ben")
        .unwrap_or_else(|| panic!("{peers}"));
    assert_eq!(ben["cursor"], 3, "{peers}");
    assert_eq!(ben["chapter"], chapter.as_str(), "{peers}");
}

#[test]
fn a_project_stored_before_sync_gets_its_document_on_first_open_and_shares_whole() {
    let world = World::new();
    let a = world.device("a");
    let id = world.create(&a, "Old", "[old text]");
    world.ok(
        &a,
        "bible_save",
        json!({"kind": "character", "id": "mara", "fields": {"name_src": "Mara"}}),
    );
    // The store as a version without sync left it: no `sync` records.
    let store = Rc::clone(&a.store);
    let mut batch = Batch::new();
    let records = world
        .pool
        .borrow_mut()
        .run_until(store.get_by_index(Table::Sync, "project", json!(id)))
        .unwrap();
    assert!(!records.is_empty());
    for record in records {
        batch.delete(Table::Sync, record["id"].as_str().unwrap());
    }
    world
        .pool
        .borrow_mut()
        .run_until(store.commit(batch))
        .unwrap();
    // A new core on that storage opens it: its document is made and stored.
    let again = world.device_on("a2", store.clone());
    world.ok(&again, "open_project", json!({"id": id}));
    world.settle();
    world.ok(&again, "checkpoint", json!({}));
    let records = world
        .pool
        .borrow_mut()
        .run_until(store.get_by_index(Table::Sync, "project", json!(id)))
        .unwrap();
    assert_eq!(records.len(), 1, "{records:?}");
    let b = share_and_fetch(&world, &again, &id);
    assert_eq!(world.text(&b), "[old text]");
    assert_eq!(notes(&world, &b, "name_src"), "Mara");
}

#[test]
fn a_device_that_says_it_is_offline_drops_its_connection_and_reconnects_when_online() {
    let world = World::new();
    let (a, b, id) = two_devices(&world);
    // The connection stays open (as a browser may keep it): only the device's word counts.
    let states = world.ok(&a, "sync_network", json!({"online": false}));
    assert_eq!(states[0]["project"], id.as_str(), "{states}");
    world.settle();
    let offline = world.status(&a);
    assert_eq!(offline["status"], "offline", "{offline}");
    assert_eq!(offline["reason"], "this device is offline");
    world.type_end(&a, "[a-offline]");
    world.settle();
    assert!(world.status(&a)["unsent"].as_u64().unwrap() >= 1);
    assert!(!world.text(&b).contains("[a-offline]"));
    assert!(!world
        .server
        .text(&world.chapter_id(&a))
        .contains("[a-offline]"));
    // A project that exists only on the server cannot be fetched meanwhile.
    let c = world.device("c");
    world.ok(&c, "create_project", json!({"name": "Local"}));
    world.ok(&c, "sync_network", json!({"online": false}));
    let r = world.send(
        &c,
        "sync_connect",
        json!({"url": "ws://sync.test", "token": TOKEN, "project": id}),
    );
    assert_eq!(r["ok"], false, "{r}");
    // Online again: it connects at once, without waiting out a backoff.
    world.ok(&a, "sync_network", json!({"online": true}));
    world.settle();
    assert_eq!(world.status(&a)["status"], "connected");
    let (ta, tb) = (world.text(&a), world.text(&b));
    assert_eq!(ta, tb);
    assert_eq!(ta.matches("[a-offline]").count(), 1, "{ta}");
}

#[test]
fn every_edit_from_another_device_carries_its_name() {
    let world = World::new();
    let (a, b, _) = two_devices(&world);
    // A renews its awareness state, so that B, which joined after it, knows its name.
    world.timers.pass();
    world.settle();
    a.events.take();
    b.events.take();
    // A's edits continue its earlier ones (the project's creation); B's second edit its first.
    world.type_end(&a, "[a1]");
    world.settle();
    world.type_end(&b, "[b1]");
    world.settle();
    world.type_end(&b, "[b2]");
    world.settle();
    let origins = |d: &Device| -> Vec<String> {
        d.events
            .take()
            .into_iter()
            .filter(|e| {
                e.kind == "edit" && e.data["origin"].as_str().unwrap().starts_with("remote:")
            })
            .map(|e| e.data["origin"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(origins(&a), ["remote:Ben", "remote:Ben"]);
    assert_eq!(origins(&b), ["remote:Ann"]);
}

/// Device `d` shares its open project `id`, and a new device "b" fetches it.
fn share_and_fetch(world: &World, d: &Device, id: &str) -> Device {
    world.ok(
        d,
        "sync_connect",
        json!({"url": "ws://sync.test", "token": TOKEN}),
    );
    world.settle();
    let b = world.device("b");
    world.ok(
        &b,
        "sync_connect",
        json!({"url": "ws://sync.test", "token": TOKEN, "project": id}),
    );
    world.settle();
    b
}

/// The stored updates of project `id`'s document on device `d`.
fn stored_updates(world: &World, d: &Device, id: &str) -> Vec<Vec<u8>> {
    let store = Rc::clone(&d.store);
    let records = world
        .pool
        .borrow_mut()
        .run_until(store.get_by_index(Table::Sync, "project", json!(id)))
        .unwrap();
    records
        .iter()
        .map(|r| {
            let record: draftsmith::persist::SyncRecord =
                serde_json::from_value(r.clone()).unwrap();
            record.update
        })
        .collect()
}

/// The first chapter's text in the document the stored updates of project `id` make.
fn stored_text(world: &World, d: &Device, id: &str) -> String {
    let updates = stored_updates(world, d, id);
    let doc = draftsmith::replica::Replica::load(&updates, 99).unwrap();
    doc.doc_chapters()[0].text.clone()
}

#[test]
fn an_unshared_projects_updates_wait_for_a_checkpoint_and_lost_ones_are_made_again() {
    let world = World::new();
    let a = world.device("a");
    let id = world.create(&a, "Alone", "[start]");
    let before = stored_updates(&world, &a, &id).len();
    for word in [" one", " two", " three"] {
        world.type_end(&a, word);
    }
    world.settle();
    assert_eq!(
        stored_updates(&world, &a, &id).len(),
        before,
        "a keystroke in a project that is not shared writes no update of its document"
    );
    // The writer's pause: the updates that waited are written, as one record.
    world.ok(&a, "checkpoint", json!({}));
    assert_eq!(stored_updates(&world, &a, &id).len(), before + 1);
    assert_eq!(stored_text(&world, &a, &id), "[start] one two three");
    // More typing, and the tab is gone before its pause: that update is never written.
    world.type_end(&a, " four");
    world.settle();
    assert_eq!(stored_text(&world, &a, &id), "[start] one two three");
    // A new core on the same storage makes it again from the project, and shares the
    // project with every word once.
    let again = world.device_on("a2", Rc::clone(&a.store));
    world.ok(&again, "open_project", json!({"id": id}));
    assert_eq!(world.text(&again), "[start] one two three four");
    let b = share_and_fetch(&world, &again, &id);
    assert_eq!(world.text(&b), "[start] one two three four");
    world.type_end(&b, " five");
    world.settle();
    assert_eq!(world.text(&again), "[start] one two three four five");
}

#[test]
fn an_unshared_project_counts_each_edit_as_unsent() {
    // Its edits are mirrored into its document once the core is idle (never, in this
    // harness): the count includes those still to be mirrored.
    let world = World::new();
    let a = world.device("a");
    world.create(&a, "Alone", "[start]");
    assert_eq!(world.status(&a)["unsent"], 0);
    for word in [" one", " two", " three"] {
        world.type_end(&a, word);
    }
    world.settle();
    let status = world.status(&a);
    assert_eq!(status["status"], "disconnected");
    assert_eq!(status["unsent"], 3, "{status}");
}

#[test]
fn idle_mirrors_what_edits_left_and_the_document_holds_each_once() {
    let world = World::new();
    let a = world.device("a");
    let id = world.create(&a, "Alone", "[start]");
    assert!(!a.core.has_idle_work());
    world.type_end(&a, " one");
    world.type_end(&a, " two");
    assert!(a.core.has_idle_work(), "the edits wait to be mirrored");
    a.core.idle();
    assert!(!a.core.has_idle_work());
    // Mirrored, not saved: the document's updates wait for the pause.
    world.type_end(&a, " three");
    a.core.idle();
    world.settle();
    assert_eq!(world.status(&a)["unsent"], 3);
    world.ok(&a, "checkpoint", json!({}));
    assert_eq!(stored_text(&world, &a, &id), "[start] one two three");
}

#[test]
fn sharing_writes_the_updates_that_waited_and_a_shared_project_saves_each_with_its_change() {
    let world = World::new();
    let a = world.device("a");
    let id = world.create(&a, "Soon shared", "[start]");
    world.type_end(&a, " waited");
    world.settle();
    assert_eq!(stored_text(&world, &a, &id), "[start]");
    // Sharing sends the document; what it sends is stored first.
    world.ok(
        &a,
        "sync_connect",
        json!({"url": "ws://sync.test", "token": TOKEN}),
    );
    world.settle();
    assert_eq!(world.status(&a)["status"], "connected");
    assert_eq!(stored_text(&world, &a, &id), "[start] waited");
    // Shared: each change is saved with its update, before it is sent.
    world.type_end(&a, " now");
    assert_eq!(stored_text(&world, &a, &id), "[start] waited now");
    world.settle();
    assert_eq!(
        world.server.text(&world.chapter_id(&a)),
        "[start] waited now"
    );
}
