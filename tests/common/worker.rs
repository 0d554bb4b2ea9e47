//! A worker's core on a given store, driven as a page drives it: requests in as JSON, results
//! out, events kept. The tests of saving, incremental persistence, the change feed and tabs
//! build on it (adding their own helpers in their own `impl Page` blocks).

use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::store::Store;
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures::executor::block_on;
use serde_json::{json, Value};

/// One worker (its core and the events it sent).
pub struct Page {
    /// The core.
    pub core: Core,
    /// Every event the core emitted.
    pub events: Rc<RecordingSink>,
}

impl Page {
    /// A worker on `store`, at a fixed time; `ids` keeps workers' ids apart.
    pub fn on<S: Store + 'static>(store: &Rc<S>, ids: &str) -> Self {
        let events = Rc::new(RecordingSink::default());
        let core = Core::new(Env {
            clock: Rc::new(ManualClock::new(1_000)),
            ids: Rc::new(SequentialIds::new(ids)),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: events.clone(),
            store: store.clone(),
        });
        Self { core, events }
    }

    /// One request; the whole response.
    pub fn send(&self, kind: &str, params: Value) -> Value {
        block_on(call(&self.core, kind, params))
    }

    /// One request that must succeed; its result.
    pub fn ok(&self, kind: &str, params: Value) -> Value {
        let r = self.send(kind, params.clone());
        assert_eq!(r["ok"], true, "{kind} {params} -> {r}");
        r["result"].clone()
    }

    /// The data of the events of type `kind` since the last take (all others are dropped).
    pub fn take_events(&self, kind: &str) -> Vec<Value> {
        self.events
            .take()
            .into_iter()
            .filter(|e| e.kind == kind)
            .map(|e| e.data)
            .collect()
    }
}

/// One request to `core`, as a future (to run several at once); the whole response.
pub async fn call(core: &Core, kind: &str, params: Value) -> Value {
    let text = json!({"id": 1, "type": kind, "params": params}).to_string();
    serde_json::from_str(&core.handle_text(&text).await).unwrap()
}
