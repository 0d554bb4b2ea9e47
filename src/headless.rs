//! The headless core (native only): the worker protocol as JSON lines on a reader and a
//! writer, for scripting and checks. `cargo run --example core` is a thin wrapper around
//! [`run_cli`].
//!
//! Each input line is one request `{id, type, params?}`, served by [`Core::handle_text`]
//! exactly as the worker serves it. For each request the output gets, one JSON object a line:
//! the events the request caused, in the order the core emitted them, then its response.
//! Requests are served one at a time, in input order; the output is flushed after each
//! response, so a script can talk to the core line by line. A blank line is ignored; a line
//! that is not a request gets the protocol's `malformed` response; the end of the input ends
//! the session.
//!
//! The store is a [`MemoryStore`]. With a store file it is loaded at the start and written
//! back after every request that changed it (to a temporary file in the same folder, then
//! renamed over the old one, so the file is always whole). A file that cannot be written is
//! reported as a `storage_error` event before the response, and tried again after the next
//! request; the data stays in memory meanwhile.
//!
//! Like the worker, a panic in the core becomes a `panic` event and an `internal` response,
//! and a fresh core is started on the same store (a `ready` event follows).
//!
//! There is no model transport: `run` answers `no_model`. Time is the system clock
//! ([`SystemClock`]); ids are [`TimeIds`], unique across runs, so projects created in
//! different runs on the same store file never collide.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::io::{self, BufRead, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::json;
use serde_json::Value;

use crate::core::{Core, Env};
use crate::env::{Clock, EventSink, IdSource};
use crate::error::ProtocolError;
use crate::protocol::{decode_request, ErrorBody, ErrorCode, Event, Response, MAX_MESSAGE_BYTES};
use crate::store::{migrate, MemoryStore, StoreError};

/// How to use `cargo run --example core`.
pub const USAGE: &str = "\
usage: cargo run --example core -- [--store FILE.json]

Reads worker-protocol requests as JSON lines on stdin, {\"id\": 1, \"type\": \"hello\"}, and
writes each request's events and then its response as JSON lines on stdout.

  --store FILE.json  keep the store in FILE.json: loaded at the start if it exists,
                     written back after every request that changed something
  -h, --help         print this help

Exit status: 0 at the end of the input, 1 if reading or writing failed,
2 for a bad argument or a store file that cannot be read.
No model transport: `run` answers no_model.";

/// Wall-clock time from [`SystemTime`] (native only; the worker uses `Date.now()`).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// Ids unique across runs: `<start time in ms, hex>-<process id, hex>-<n>`, with `n` counted
/// across every source in the process. Two runs differ in their start time or their process.
#[derive(Debug, Clone)]
pub struct TimeIds {
    prefix: String,
}

/// The counter behind every [`TimeIds`] of this process.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl TimeIds {
    /// A source whose ids start with this process's id and the time `now_ms`.
    pub fn new(now_ms: u64) -> Self {
        Self {
            prefix: format!("{now_ms:x}-{:x}", std::process::id()),
        }
    }
}

impl IdSource for TimeIds {
    fn next_id(&self) -> String {
        let n = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        format!("{}-{n}", self.prefix)
    }
}

/// An event sink that keeps the events of the request being served until they are written.
#[derive(Debug, Default)]
pub struct EventQueue {
    events: RefCell<Vec<Event>>,
}

impl EventQueue {
    /// The events emitted since the last call, in order.
    pub fn take(&self) -> Vec<Event> {
        std::mem::take(&mut self.events.borrow_mut())
    }
}

impl EventSink for EventQueue {
    fn emit(&self, event: Event) {
        self.events.borrow_mut().push(event);
    }
}

/// Drive a future to completion on this thread (the core's futures need no runtime: the
/// memory store answers at once and there is no model transport).
pub fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(value) => return value,
            Poll::Pending => std::thread::park(),
        }
    }
}

/// Why the headless core could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    /// The store file exists but could not be read.
    #[error("could not read the store file {path}: {source}")]
    ReadStore {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The store file is not a store this build can load. It is left as it is.
    #[error("the store file {path} cannot be loaded (it was left unchanged): {reason}")]
    MalformedStore {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// The store could not be prepared (schema migration).
    #[error("could not prepare the store: {0}")]
    Store(#[from] StoreError),
    /// A bad command-line argument.
    #[error("{0}")]
    Usage(String),
}

/// Load a store file: an empty store if the file does not exist or holds only whitespace.
pub fn load_store(path: &Path) -> Result<MemoryStore, HeadlessError> {
    let text = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(MemoryStore::new()),
        Err(source) => {
            return Err(HeadlessError::ReadStore {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    if text.iter().all(u8::is_ascii_whitespace) {
        return Ok(MemoryStore::new());
    }
    let malformed = |reason: String| HeadlessError::MalformedStore {
        path: path.to_path_buf(),
        reason,
    };
    let value: Value =
        serde_json::from_slice(&text).map_err(|e| malformed(format!("not valid JSON ({e})")))?;
    MemoryStore::from_json(value).map_err(|e| malformed(e.to_string()))
}

/// Write a store to `path` atomically: a temporary file in the same folder, synced, then
/// renamed over `path`. On failure `path` is as it was.
pub fn save_store(store: &MemoryStore, path: &Path) -> io::Result<()> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the store path must name a file",
        )
    })?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = path.with_file_name(temp_name);
    let written = (|| {
        let mut text = serde_json::to_vec_pretty(&store.to_json()).map_err(io::Error::other)?;
        text.push(b'\n');
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(&text)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        // Best effort: the temporary file is of no use now.
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// A core serving JSON lines, on a memory store that may be kept in a file.
pub struct Headless {
    core: RefCell<Rc<Core>>,
    events: Rc<EventQueue>,
    store: Rc<MemoryStore>,
    clock: Rc<dyn Clock>,
    ids: Rc<dyn IdSource>,
    file: Option<PathBuf>,
    /// The store's revision last written to the file.
    saved_revision: Cell<u64>,
    /// Cores started so far (1, then one more after each panic).
    instance: Cell<u64>,
    /// Input lines read so far (for messages about a line).
    line: Cell<u64>,
}

impl Headless {
    /// A headless core on `store`, writing it to `file` (if any) after every request that
    /// changes it. The store is migrated to the current schema first (that alone does not
    /// write the file).
    pub fn new(
        store: MemoryStore,
        file: Option<PathBuf>,
        clock: Rc<dyn Clock>,
        ids: Rc<dyn IdSource>,
    ) -> Result<Self, HeadlessError> {
        let store = Rc::new(store);
        block_on(migrate(store.as_ref()))?;
        let events = Rc::new(EventQueue::default());
        let core = Self::start(&store, &events, &clock, &ids);
        Ok(Self {
            core: RefCell::new(Rc::new(core)),
            saved_revision: Cell::new(store.revision()),
            events,
            store,
            clock,
            ids,
            file,
            instance: Cell::new(1),
            line: Cell::new(0),
        })
    }

    /// A headless core with the system clock and [`TimeIds`], on the store in `file` (loaded
    /// if it exists) or on an empty store that is not kept.
    pub fn open(file: Option<PathBuf>) -> Result<Self, HeadlessError> {
        let store = match &file {
            Some(path) => load_store(path)?,
            None => MemoryStore::new(),
        };
        let clock = SystemClock;
        let ids = TimeIds::new(clock.now_ms());
        Self::new(store, file, Rc::new(clock), Rc::new(ids))
    }

    fn start(
        store: &Rc<MemoryStore>,
        events: &Rc<EventQueue>,
        clock: &Rc<dyn Clock>,
        ids: &Rc<dyn IdSource>,
    ) -> Core {
        Core::new(Env {
            clock: Rc::clone(clock),
            ids: Rc::clone(ids),
            decoder: Rc::new(crate::env::EncodingRsDecoder),
            events: Rc::clone(events) as Rc<dyn EventSink>,
            store: Rc::clone(store) as Rc<dyn crate::store::Store>,
        })
    }

    /// The core serving requests now (a new one after a panic).
    pub fn core(&self) -> Rc<Core> {
        Rc::clone(&self.core.borrow())
    }

    /// The store.
    pub fn store(&self) -> &MemoryStore {
        &self.store
    }

    /// Serve one input line and give the output lines: the events it caused, in order, then
    /// its response. A blank line gives nothing.
    pub fn handle_line(&self, line: &str) -> Vec<String> {
        self.line.set(self.line.get() + 1);
        if line.trim().is_empty() {
            return Vec::new();
        }
        let core = self.core();
        let served = catch_unwind(AssertUnwindSafe(|| {
            let response = block_on(core.handle_text(line));
            // What the request left for when the core is idle, as the worker does.
            core.idle();
            response
        }));
        let mut out: Vec<String> = self.events.take().iter().map(Event::to_json).collect();
        let response = match served {
            Ok(response) => Some(response),
            Err(payload) => {
                out.extend(self.recover(line, &panic_message(payload.as_ref())));
                None
            }
        };
        if let Some(event) = self.save_if_changed() {
            out.push(event.to_json());
        }
        out.extend(response);
        out
    }

    /// After a panic: the `panic` event and the `internal` response, as the worker sends
    /// them, then a fresh core on the same store and its `ready` event.
    fn recover(&self, line: &str, message: &str) -> Vec<String> {
        let id = decode_request(line).ok().map(|r| r.id);
        let internal = Response {
            id,
            outcome: Err(ErrorBody {
                code: ErrorCode::Internal,
                message: format!("the core failed unexpectedly: {message}"),
            }),
        };
        let core = Self::start(&self.store, &self.events, &self.clock, &self.ids);
        *self.core.borrow_mut() = Rc::new(core);
        self.instance.set(self.instance.get() + 1);
        vec![
            Event::new("panic", json!({ "message": message })).to_json(),
            internal.to_json(),
            Event::new(
                "ready",
                json!({ "version": crate::VERSION, "instance": self.instance.get() }),
            )
            .to_json(),
        ]
    }

    /// Write the store file if the store changed since it was last written; a
    /// `storage_error` event if that failed.
    fn save_if_changed(&self) -> Option<Event> {
        let path = self.file.as_ref()?;
        let revision = self.store.revision();
        if revision == self.saved_revision.get() {
            return None;
        }
        match save_store(&self.store, path) {
            Ok(()) => {
                self.saved_revision.set(revision);
                None
            }
            Err(e) => Some(Event::new(
                "storage_error",
                json!({
                    "project": null,
                    "code": "storage_failed",
                    "message": format!(
                        "could not write the store file {}: {e}. The data is kept in memory; \
                         the file is written again after the next request.",
                        path.display()
                    ),
                }),
            )),
        }
    }

    /// Serve every line of `input` until its end, writing to `output` and flushing after each
    /// request. Fails only if reading or writing fails.
    pub fn serve_lines<R: BufRead, W: Write>(&self, mut input: R, mut output: W) -> io::Result<()> {
        loop {
            let lines = match read_line(&mut input)? {
                Line::End => return Ok(()),
                Line::Text(text) => self.handle_line(&text),
                Line::Bad(why) => {
                    self.line.set(self.line.get() + 1);
                    let response = Response {
                        id: None,
                        outcome: Err(ErrorBody {
                            code: ErrorCode::Malformed,
                            message: ProtocolError::Malformed(format!(
                                "line {}: {why}",
                                self.line.get()
                            ))
                            .to_string(),
                        }),
                    };
                    vec![response.to_json()]
                }
            };
            for line in &lines {
                output.write_all(line.as_bytes())?;
                output.write_all(b"\n")?;
            }
            output.flush()?;
        }
    }
}

/// One input line.
enum Line {
    End,
    Text(String),
    /// A line that cannot be a request (not UTF-8, too long); it was read to its end.
    Bad(String),
}

/// Read one line (without its `\n` or `\r\n`), at most [`MAX_MESSAGE_BYTES`] of it kept.
fn read_line<R: BufRead>(input: &mut R) -> io::Result<Line> {
    let mut bytes = Vec::new();
    let limit = MAX_MESSAGE_BYTES as u64 + 1;
    let n = input.by_ref().take(limit).read_until(b'\n', &mut bytes)?;
    if n == 0 {
        return Ok(Line::End);
    }
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
    } else if bytes.len() > MAX_MESSAGE_BYTES {
        // Skip the rest of the line without keeping it.
        let mut skipped = bytes.len();
        loop {
            let buffer = input.fill_buf()?;
            if buffer.is_empty() {
                break;
            }
            match buffer.iter().position(|b| *b == b'\n') {
                Some(at) => {
                    skipped += at;
                    input.consume(at + 1);
                    break;
                }
                None => {
                    let len = buffer.len();
                    skipped += len;
                    input.consume(len);
                }
            }
        }
        return Ok(Line::Bad(format!(
            "the message is {skipped} bytes; the limit is {MAX_MESSAGE_BYTES}"
        )));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Line::Text(text)),
        Err(e) => Ok(Line::Bad(format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))),
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// The command line of `cargo run --example core`: `args` without the program name. Serves
/// `input` to `output`; messages for a person go to `errors`. Returns the exit status: 0 at
/// the end of the input (or after `--help`), 1 if reading or writing failed, 2 for a bad
/// argument or a store file that cannot be read (which is then left unchanged).
pub fn run_cli<I, R, W, E>(args: I, input: R, mut output: W, mut errors: E) -> u8
where
    I: IntoIterator<Item = String>,
    R: BufRead,
    W: Write,
    E: Write,
{
    let file = match parse_args(args) {
        Ok(Some(file)) => file,
        Ok(None) => {
            return match writeln!(output, "{USAGE}").and_then(|()| output.flush()) {
                Ok(()) => 0,
                Err(_) => 1,
            }
        }
        Err(e) => {
            // Nowhere else to report a failing stderr.
            let _ = writeln!(errors, "core: {e}\n\n{USAGE}");
            return 2;
        }
    };
    let headless = match Headless::open(file) {
        Ok(headless) => headless,
        Err(e) => {
            let _ = writeln!(errors, "core: {e}");
            return 2;
        }
    };
    match headless.serve_lines(input, output) {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(errors, "core: {e}");
            1
        }
    }
}

/// `Ok(None)` for `--help`, else the store file, if any.
fn parse_args<I: IntoIterator<Item = String>>(
    args: I,
) -> Result<Option<Option<PathBuf>>, HeadlessError> {
    let mut file = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let value = match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--store" => args.next().ok_or_else(|| {
                HeadlessError::Usage("--store needs a file name: --store FILE.json".into())
            })?,
            other => match other.strip_prefix("--store=") {
                Some(value) => value.to_string(),
                None => return Err(HeadlessError::Usage(format!("unknown argument '{other}'"))),
            },
        };
        if value.is_empty() {
            return Err(HeadlessError::Usage(
                "--store needs a file name: --store FILE.json".into(),
            ));
        }
        if file.replace(PathBuf::from(value)).is_some() {
            return Err(HeadlessError::Usage("--store given twice".into()));
        }
    }
    Ok(Some(file))
}
