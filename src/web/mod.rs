//! Browser adapters (wasm32 only): the worker entry and the JS implementations of the core's
//! environment traits. This is the only module that may name `wasm_bindgen`, `web_sys`,
//! `js_sys` and the other browser crates.
//!
//! `packages/draftsmith/src/worker.js` constructs one [`WorkerCore`] with a function that posts
//! events to the page, then hands it every message as JSON text and posts back the JSON text
//! it returns (as a string: the client parses it; the worker parses only the answers it reads).
//!
//! Messages and events cross as JSON text rather than as JS values made by
//! serde-wasm-bindgen (which the IndexedDB records' index keys use), because text is faster
//! for the messages the worker sees most. In the core a request's parameters go from their
//! text straight into its typed parameters, and a result straight into the answer's text.
//! Per message, in headless Chromium with the release profile (in: `JSON.stringify` then
//! `serde_json`, or `serde_wasm_bindgen` reading the object; out: `serde_json` then
//! `JSON.parse`, or `serde_wasm_bindgen` with its JSON-compatible serializer making the
//! object), as `make bench-browser` prints them (`www/bench/messages.js`, over
//! [`bench::MessageBench`]):
//!
//! | message | in: text / value | out: text / value |
//! |---|---|---|
//! | a `saved` event (172 B) | 2.4 / 4.1 µs | 2.5 / 4.5 µs |
//! | a keystroke's request (176 B) | 3 / 6.3 µs | 3.1 / 5.3 µs |
//! | a response of 200 history entries (52 KB) | 0.92 / 2.08 ms | 0.75 / 1.79 ms |
//! | a response with a 70 KB chapter text | 0.17 / 0.18 ms | 0.098 / 0.016 ms |
//!
//! Only a message that is mostly one long string converts faster as a value, and only on
//! its way out; every keystroke sends a request and gets a response and events, all small.
//!
//! From the worker to the page, the answer's text crosses as a string. The same bench times
//! the crossing from a worker holding the text as UTF-8 bytes (as the core's answer sits in
//! wasm memory) to the page holding the object: as a string (parsed in the page), as a
//! transferred buffer (decoded and parsed in the page) or as an object (parsed in the worker,
//! cloned). Over three runs, small messages take about the same time all three ways (110–190 µs,
//! the hop itself); 200 history entries take 0.5–0.63 / 0.6–0.67 / 1.37–1.82 ms; a 70 KB
//! chapter 0.31–0.33 / 0.24–0.26 / 0.26–0.36 ms. The buffer is behind the string for the
//! history and ahead of it for the chapter, by less than 0.1 ms either way, and the object is
//! the slowest for a large answer, so every answer keeps the one way.

pub mod ahead;
pub mod bench;
pub mod decoder;
pub mod fetch;
pub mod idb;
pub mod local;
pub mod mcp;
pub mod reader;
pub mod socket;

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;

use crate::core::{Core, Env};
use crate::env::{Clock, EventSink, IdSource};
use crate::protocol::Event;
pub use decoder::JsTextDecoder;

thread_local! {
    /// The page-bound emit function, reachable from the panic hook.
    static EMIT: RefCell<Option<Function>> = const { RefCell::new(None) };
}

/// Wall-clock time from `Date.now()`.
#[derive(Debug, Default, Clone, Copy)]
pub struct JsClock;

impl Clock for JsClock {
    fn now_ms(&self) -> u64 {
        let now = js_sys::Date::now();
        if now.is_finite() && now > 0.0 {
            now as u64
        } else {
            0
        }
    }
}

/// Random ids as UUID v4 text: 128 bits from a fastrand generator of the worker's (ids need
/// uniqueness, not secrecy), whose version and variant bits the `uuid` crate sets. A bulk note
/// write takes hundreds at once: no crossing to JS for each.
#[derive(Debug, Default, Clone, Copy)]
pub struct JsIds;

thread_local! {
    /// Seeded once from `crypto.getRandomValues` (fastrand's own seed) mixed with
    /// `Math.random()`, which every context has: two workers do not share a sequence, even
    /// where `crypto` is missing (fastrand then starts from a fixed seed).
    static ID_RNG: std::cell::RefCell<fastrand::Rng> = std::cell::RefCell::new(fastrand::Rng::with_seed(
        fastrand::u64(..) ^ (js_sys::Math::random() * 9_007_199_254_740_992.0) as u64,
    ));
}

impl IdSource for JsIds {
    fn next_id(&self) -> String {
        let bytes = ID_RNG.with(|rng| rng.borrow_mut().u128(..)).to_le_bytes();
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .hyphenated()
            .to_string()
    }
}

/// Sends events to the page through the emit function given by `worker.js`.
struct JsEventSink;

impl EventSink for JsEventSink {
    fn emit(&self, event: Event) {
        emit_json(&event);
    }
}

/// Call the worker's emit function with the event's JSON text, then what the worker reads
/// of it without parsing it: its type, the project it concerns and the client whose request
/// caused it (`undefined` when there is none).
fn emit_json(event: &Event) {
    EMIT.with(|emit| {
        if let Some(function) = emit.borrow().as_ref() {
            // Made anew if the kept ones are in use (a panic while they were being made).
            let (kind, project, client) = EVENT_STRINGS.with(|strings| {
                let mut kept = strings.try_borrow_mut().ok();
                let mut get = |text: Option<&str>| match (text, kept.as_deref_mut()) {
                    (None, _) => JsValue::UNDEFINED,
                    (Some(text), Some(kept)) => kept.get(text),
                    (Some(text), None) => JsValue::from_str(text),
                };
                (
                    get(Some(&event.kind)),
                    get(event.project.as_deref()),
                    get(event.client.as_deref()),
                )
            });
            // A failing emit has nowhere to be reported; the event is dropped.
            let _ = function.call4(
                &JsValue::NULL,
                &JsValue::from_str(&event.to_json()),
                &kind,
                &project,
                &client,
            );
        }
    });
}

thread_local! {
    static EVENT_STRINGS: RefCell<RecentStrings> = const { RefCell::new(RecentStrings::new()) };
}

/// What recurs in the events (their types, the project and client ids) as JS strings, the
/// last few made: a string that crosses is decoded from UTF-8 each time, a `JsValue` kept in
/// wasm is not.
struct RecentStrings {
    /// Oldest first.
    recent: Vec<(String, JsValue)>,
}

impl RecentStrings {
    /// How many are kept: a keystroke's events use four.
    const MOST: usize = 16;

    const fn new() -> Self {
        Self { recent: Vec::new() }
    }

    /// `text` as a JS string.
    fn get(&mut self, text: &str) -> JsValue {
        if let Some((_, value)) = self.recent.iter().find(|(kept, _)| kept == text) {
            return value.clone();
        }
        let value = JsValue::from_str(text);
        if self.recent.len() == Self::MOST {
            self.recent.remove(0);
        }
        self.recent.push((text.to_string(), value.clone()));
        value
    }
}

fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        let event = Event::new("panic", serde_json::json!({ "message": info.to_string() }));
        emit_json(&event);
    }));
}

/// The core as the worker sees it: JSON text in, JSON text out, events through `emit`.
#[wasm_bindgen]
pub struct WorkerCore {
    core: Rc<Core>,
    /// The other tabs this worker writes for, by client id (see [`WorkerCore::handle_for`]).
    clients: RefCell<std::collections::BTreeMap<String, Rc<Core>>>,
    /// The core's store (see [`WorkerCore::set_sole_writer`]).
    store: Rc<crate::store::faulty::Faulty<idb::IdbStore>>,
}

#[wasm_bindgen]
impl WorkerCore {
    /// Open the core on the IndexedDB database `database` (default `draftsmith`).
    /// `emit(json, type, project, client)` is called with each event's JSON text and, so
    /// that the worker need not parse it, its type, the project it concerns and the client
    /// whose request caused it (each `undefined` when there is none); this includes a `panic`
    /// event if the core ever panics (the instance is unusable after that; the worker
    /// replaces it).
    /// `local_model`, the worker's wllama bridge (`local-model.js`), runs the `local`
    /// provider's models; without it that provider is unavailable. `mcp`, the worker's MCP
    /// clients (`mcp-client.js`), reaches the settings' MCP servers; without it their tools
    /// are unavailable. `reader`, the worker's page reader (which loads the reader's wasm
    /// module when first used), reads research pages; without it `research_url` cannot.
    /// `schema_version`, when given, is the promise of the version the database's schema
    /// record holds (or of `null`), which the worker reads on a connection of its own while
    /// this one opens: when it is the current one, the core does not read it again (see
    /// [`crate::store::migrate_recorded`]). It must settle.
    pub async fn open(
        emit: Function,
        database: Option<String>,
        local_model: Option<local::LocalModelBridge>,
        mcp: Option<mcp::McpBridge>,
        reader: Option<reader::PageReaderBridge>,
        #[wasm_bindgen(unchecked_param_type = "Promise<number | null>")] schema_version: Option<
            Promise,
        >,
    ) -> Result<WorkerCore, JsValue> {
        EMIT.with(|slot| *slot.borrow_mut() = Some(emit));
        install_panic_hook();
        let name = database.unwrap_or_else(|| "draftsmith".into());
        let recorded = async move {
            let version = wasm_bindgen_futures::JsFuture::from(schema_version?)
                .await
                .ok()?
                .as_f64()?;
            (version.fract() == 0.0 && (1.0..=f64::from(u32::MAX)).contains(&version))
                .then_some(version as u32)
        };
        let store = idb::IdbStore::open_recorded(&name, recorded)
            .await
            .map_err(|e| JsValue::from_str(&format!("could not open IndexedDB '{name}': {e}")))?;
        // Wrapped so that tests can make saves fail (`debug_fail_saves`) on real IndexedDB.
        let faulty = Rc::new(crate::store::faulty::Faulty::new(store));
        let switch = Rc::clone(&faulty);
        let store = Rc::clone(&faulty);
        let env = Env {
            clock: Rc::new(JsClock),
            ids: Rc::new(JsIds),
            decoder: Rc::new(JsTextDecoder),
            events: Rc::new(JsEventSink),
            store: faulty,
        };
        let core = Core::new(env)
            .with_llm(Rc::new(fetch::FetchTransport), Rc::new(fetch::JsSleeper))
            .with_fail_switch(Rc::new(move |n| switch.fail_next(n)))
            .with_spawner(Rc::new(wasm_bindgen_futures::spawn_local))
            .with_sync(Rc::new(socket::WsTransport), Rc::new(fetch::JsSleeper));
        let core = match local_model {
            Some(bridge) => core.with_local_model(Rc::new(local::JsLocalModel::new(bridge))),
            None => core,
        };
        let core = match mcp {
            Some(bridge) => core.with_mcp(Rc::new(mcp::JsMcp::new(bridge))),
            None => core,
        };
        let core = match reader {
            Some(bridge) => core.with_reader(Rc::new(reader::JsPageReader::new(bridge))),
            None => core,
        };
        Ok(WorkerCore {
            core: Rc::new(core),
            clients: RefCell::new(std::collections::BTreeMap::new()),
            store,
        })
    }

    /// Say whether this worker is the only writer of its database: it holds the database's
    /// writer lock, and every other tab's worker relays its page's requests to it. Its saves
    /// then skip their checks that no other writer changed a record since (see
    /// [`idb::IdbStore::set_sole_writer`]).
    pub fn set_sole_writer(&self, sole: bool) {
        self.store.inner().set_sole_writer(sole);
    }

    /// Serve one message (JSON text) of this worker's own page; resolves to the response's
    /// JSON text.
    pub fn handle(&self, message: String) -> Promise {
        Promise::resolve(&self.handle_for(None, message, None, None))
    }

    /// Serve one message of a page: this worker's own (`client` absent) or another tab's
    /// (relayed to this worker because it writes for every tab). `project` is the project
    /// that page shows: when this core does not have it open for that page (the writing
    /// worker changed, or the core restarted), it is opened first.
    ///
    /// `ahead(answer, landing)`, if given, is called (at most once, while the core waits for
    /// IndexedDB) with the answer's JSON text when the answer is known before the save it
    /// reports has landed, and the promise of that save's transaction: the answer may be
    /// posted once `landing` resolves. The returned promise resolves to the same answer once
    /// the core is done; if `landing` rejects (the save failed), only that answer is to be
    /// posted. See [`ahead`].
    ///
    /// A request that waits for nothing (`hello`, `get_chapter`, the editor and memory context
    /// blocks: no save, no IndexedDB read, no model) is answered at once: the answer's JSON
    /// text is returned instead of a promise, which saves the promise, the task that would
    /// serve it and their turns of the microtask queue.
    #[wasm_bindgen(unchecked_return_type = "string | Promise<string>")]
    pub fn handle_for(
        &self,
        client: Option<String>,
        message: String,
        project: Option<String>,
        ahead: Option<Function>,
    ) -> JsValue {
        let core = match client {
            None => Rc::clone(&self.core),
            Some(id) => Rc::clone(
                self.clients
                    .borrow_mut()
                    .entry(id.clone())
                    .or_insert_with(|| Rc::new(self.core.client(id))),
            ),
        };
        let serving = ahead.map(ahead::Serving::new);
        let early = serving.clone();
        let give = move |answer: &str| {
            if let Some(serving) = &early {
                serving.answer(answer);
            }
        };
        let answered = async move {
            core.handle_in_ahead(&message, project.as_deref(), Some(&give))
                .await
        };
        let mut serve = ahead::Scoped::new(serving, answered);
        // Polled once here. A future that waits has then registered the no-op waker; the task
        // below polls it again, with its own waker, in the next turn of the microtask queue.
        // A poll looks at what happened since the last one and every future keeps the waker
        // of its latest poll, so no wake-up is lost.
        match Pin::new(&mut serve).poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(answer) => JsValue::from_str(&answer),
            Poll::Pending => wasm_bindgen_futures::future_to_promise(async move {
                Ok(JsValue::from_str(&serve.await))
            })
            .into(),
        }
    }

    /// Do the core's work that waits until it is idle (see [`Core::idle`]): the worker calls
    /// it once it has answered a request.
    pub fn idle(&self) {
        self.core.idle();
    }

    /// Whether [`WorkerCore::idle`] has anything to do.
    pub fn has_idle_work(&self) -> bool {
        self.core.has_idle_work()
    }

    /// Forget another tab's client (its tab closed): its facade of the core is dropped.
    /// Returns whether there was one.
    pub fn forget_client(&self, client: String) -> bool {
        self.clients.borrow_mut().remove(&client).is_some()
    }

    /// How many other tabs this worker holds a client for.
    pub fn client_count(&self) -> usize {
        self.clients.borrow().len()
    }

    /// The crate version.
    pub fn version() -> String {
        crate::VERSION.to_string()
    }
}
