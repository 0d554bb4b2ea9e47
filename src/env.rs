//! The core's environment: time, ids and the event sink, injected so that the core never
//! reads a global clock (`Instant::now()` panics on wasm32) and tests are deterministic.
//!
//! Native tests use [`ManualClock`], [`SequentialIds`] and [`RecordingSink`]; the worker uses
//! the JS implementations in `src/web/`.

use std::cell::{Cell, RefCell};

/// A source of wall-clock time in milliseconds since the Unix epoch.
pub trait Clock {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    fn now_ms(&self) -> u64;
}

/// A source of unique ids (for commands, notes, tool calls, runs).
pub trait IdSource {
    /// A new id, never returned before by this source.
    fn next_id(&self) -> String;
}

/// Where the core pushes events for the page (edits, UI changes, run progress).
pub trait EventSink {
    /// Deliver one event. Must not fail: a sink that cannot deliver drops the event.
    fn emit(&self, event: Event);
}

/// A connection to a sync server (a WebSocket in the worker): binary frames both ways.
pub trait SyncSocket {
    /// Send one frame. An error means the connection is gone.
    fn send(&self, frame: &[u8]) -> Result<(), String>;
    /// The next frame from the server; `None` once the connection closed.
    fn next(&self) -> futures_util::future::LocalBoxFuture<'static, Option<Vec<u8>>>;
    /// Close the connection (a `next` waiting then gets `None`).
    fn close(&self);
}

/// Opens connections to sync servers.
pub trait SyncTransport {
    /// Connect to `url` (`ws://` or `wss://`); resolves once the connection is open, or with
    /// why it could not open.
    fn connect(
        &self,
        url: &str,
    ) -> futures_util::future::LocalBoxFuture<'static, Result<std::rc::Rc<dyn SyncSocket>, String>>;
}

/// A clock that moves only when told to. For tests.
#[derive(Debug, Default)]
pub struct ManualClock {
    now: Cell<u64>,
}

impl ManualClock {
    /// A clock showing `start_ms`.
    pub fn new(start_ms: u64) -> Self {
        Self {
            now: Cell::new(start_ms),
        }
    }

    /// Move the clock forward by `ms`.
    pub fn advance(&self, ms: u64) {
        self.now.set(self.now.get().saturating_add(ms));
    }

    /// Set the clock to `ms`.
    pub fn set(&self, ms: u64) {
        self.now.set(ms);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now.get()
    }
}

/// Ids `prefix-1`, `prefix-2`, ... For tests and reproducible runs.
#[derive(Debug)]
pub struct SequentialIds {
    prefix: String,
    next: Cell<u64>,
}

impl SequentialIds {
    /// A source whose ids start with `prefix`.
    pub fn new(prefix: impl Into<String>) -> Self {
        Self {
            prefix: prefix.into(),
            next: Cell::new(1),
        }
    }
}

impl IdSource for SequentialIds {
    fn next_id(&self) -> String {
        let n = self.next.get();
        self.next.set(n + 1);
        format!("{}-{n}", self.prefix)
    }
}

/// An event sink that keeps every event. For tests.
#[derive(Debug, Default)]
pub struct RecordingSink {
    events: RefCell<Vec<Event>>,
}

impl RecordingSink {
    /// Take the events recorded so far.
    pub fn take(&self) -> Vec<Event> {
        std::mem::take(&mut self.events.borrow_mut())
    }

    /// The events recorded so far, kept.
    pub fn peek(&self) -> Vec<Event> {
        self.events.borrow().clone()
    }
}

impl EventSink for RecordingSink {
    fn emit(&self, event: Event) {
        self.events.borrow_mut().push(event);
    }
}

/// An event pushed to the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The event type, such as `edit` or `ui`.
    pub kind: String,
    /// The event's payload.
    pub data: serde_json::Value,
    /// The project it concerns, when it concerns one: the worker that writes for every tab
    /// passes an event to the pages that show that project (and those without a project to
    /// every page).
    pub project: Option<String>,
    /// The client (another tab's page) whose request caused it, when it was not this
    /// worker's own page.
    pub client: Option<String>,
}

impl Event {
    /// An event of type `kind` with `data`, concerning no project in particular.
    pub fn new(kind: impl Into<String>, data: serde_json::Value) -> Self {
        Self {
            kind: kind.into(),
            data,
            project: None,
            client: None,
        }
    }

    /// The same event, caused by a request of `client` (see [`Event::client`]).
    pub fn by_client(mut self, client: Option<String>) -> Self {
        self.client = client;
        self
    }

    /// The same event, concerning `project`.
    pub fn in_project(mut self, project: Option<String>) -> Self {
        self.project = project;
        self
    }

    /// Encode as the JSON text the worker posts to the page.
    pub fn to_json(&self) -> String {
        let mut event = serde_json::json!({"kind": "event", "type": self.kind, "data": self.data});
        if let Some(project) = &self.project {
            event["project"] = serde_json::Value::String(project.clone());
        }
        if let Some(client) = &self.client {
            event["client"] = serde_json::Value::String(client.clone());
        }
        event.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let clock = ManualClock::new(1_000);
        assert_eq!(clock.now_ms(), 1_000);
        clock.advance(250);
        assert_eq!(clock.now_ms(), 1_250);
        clock.set(7);
        assert_eq!(clock.now_ms(), 7);
    }

    #[test]
    fn sequential_ids_are_unique_and_prefixed() {
        let ids = SequentialIds::new("cmd");
        assert_eq!(ids.next_id(), "cmd-1");
        assert_eq!(ids.next_id(), "cmd-2");
    }
}
