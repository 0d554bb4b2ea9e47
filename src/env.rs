//! The core's environment: time, ids, the event sink and the text decoder, injected so that
//! the core never reads a global clock (`Instant::now()` panics on wasm32), tests are
//! deterministic, and the worker decodes with the browser's own decoder.
//!
//! Native tests use [`ManualClock`], [`SequentialIds`], [`RecordingSink`] and
//! [`EncodingRsDecoder`]; the worker uses the JS implementations in `src/web/`.

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

/// A decoder for the encodings of the WHATWG Encoding Standard, the encodings web pages are
/// written in (UTF-8, UTF-16, windows-1252, Shift_JIS, GBK, EUC-KR, ...).
///
/// Natively it is [`EncodingRsDecoder`]; in the worker it is the browser's `TextDecoder`
/// (`src/web/`), the same standard's decoder, so the wasm does not ship a second copy of
/// the legacy encodings' tables.
pub trait TextDecoding {
    /// `bytes` decoded in the encoding whose label is `label` (any of the standard's labels,
    /// such as `latin1`, `sjis` or `utf-8`, in any ASCII case and with surrounding ASCII
    /// whitespace): malformed bytes become U+FFFD, and a byte order mark is decoded as the
    /// bytes it is, neither sniffed nor removed. `None` when `label` names no encoding.
    ///
    /// The labels of the standard's `replacement` encoding (`iso-2022-kr`, `hz-gb-2312`,
    /// ...) decode any bytes to one U+FFFD and no bytes to nothing, as the standard says.
    fn decode(&self, label: &str, bytes: &[u8]) -> Option<String>;
}

/// [`TextDecoding`] by `encoding_rs`, the WHATWG encodings in Rust. For native builds (the
/// tests and the headless core); the worker uses the browser's decoder.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Default, Clone, Copy)]
pub struct EncodingRsDecoder;

#[cfg(not(target_arch = "wasm32"))]
impl TextDecoding for EncodingRsDecoder {
    fn decode(&self, label: &str, bytes: &[u8]) -> Option<String> {
        let encoding = encoding_rs::Encoding::for_label(label.as_bytes())?;
        Some(encoding.decode_without_bom_handling(bytes).0.into_owned())
    }
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
        /// The event as posted, borrowing its parts (its data is not copied).
        #[derive(serde::Serialize)]
        struct Posted<'a> {
            #[serde(skip_serializing_if = "Option::is_none")]
            client: Option<&'a str>,
            data: &'a serde_json::Value,
            kind: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            project: Option<&'a str>,
            #[serde(rename = "type")]
            kind_name: &'a str,
        }
        serde_json::to_string(&Posted {
            client: self.client.as_deref(),
            data: &self.data,
            kind: "event",
            project: self.project.as_deref(),
            kind_name: &self.kind,
        })
        // Strings and a JSON value always serialize.
        .unwrap_or_default()
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
    #[cfg(not(target_arch = "wasm32"))]
    fn encoding_rs_decodes_by_label() {
        let d = EncodingRsDecoder;
        assert_eq!(
            d.decode(" Windows-1252\n", b"caf\xe9").as_deref(),
            Some("café")
        );
        assert_eq!(
            d.decode("sjis", b"\x93\xfa\x96\x7b").as_deref(),
            Some("日本")
        );
        // A byte order mark is text like any other bytes.
        assert_eq!(
            d.decode("utf-8", b"\xef\xbb\xbfa\xff").as_deref(),
            Some("\u{feff}a\u{fffd}")
        );
        assert_eq!(d.decode("iso-2022-kr", b"abc").as_deref(), Some("\u{fffd}"));
        assert_eq!(d.decode("iso-2022-kr", b"").as_deref(), Some(""));
        assert_eq!(d.decode("klingon", b"abc"), None);
        assert_eq!(d.decode("", b"abc"), None);
    }

    #[test]
    fn sequential_ids_are_unique_and_prefixed() {
        let ids = SequentialIds::new("cmd");
        assert_eq!(ids.next_id(), "cmd-1");
        assert_eq!(ids.next_id(), "cmd-2");
    }
}
