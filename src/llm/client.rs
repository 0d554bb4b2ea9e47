//! Calling a model: send the request through an [`LlmTransport`], retry by the
//! [`RetryPolicy`], decode the streamed answer incrementally, and assemble it.
//!
//! - The transport is a trait (request in; status, headers and a byte stream out): `fetch` in
//!   the browser (`src/web/`), [`ScriptedTransport`] in native tests.
//! - Waiting (backoff, timeouts) goes through a [`Sleeper`], so tests need no real time.
//! - **Timeouts**: connect (no response headers in time) and idle (no byte for
//!   `idle_timeout_ms` while streaming).
//! - **Retries** happen only before any event reached the caller: once text or a tool call
//!   has been streamed, a failure ends the answer instead (its unfinished tool calls become
//!   invalid and are never executed), so nothing is shown or done twice.
//! - A provider's error body (non-2xx) becomes a [`CallError::Http`] whose message is the
//!   provider's own words.

use std::cell::RefCell;
use std::collections::VecDeque;

use futures_util::future::{select, Either, FutureExt, LocalBoxFuture};
use std::future;

use super::retry::{Decision, Failure, RetryPolicy};
use super::sse::SseParser;
use super::{
    parse_response, Answer, Assembler, HttpRequest, ProviderKind, ProviderStream, StreamEvent,
};

/// Why the transport could not deliver.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// The connection failed or dropped.
    #[error("network error: {0}")]
    Network(String),
}

/// The bytes of a response body, chunk by chunk.
pub trait ByteStream {
    /// The next chunk, `None` at the end.
    fn next_chunk(&mut self) -> LocalBoxFuture<'_, Option<Result<Vec<u8>, TransportError>>>;
}

/// A response: status, headers and the body as a byte stream.
pub struct HttpResponse {
    /// HTTP status.
    pub status: u16,
    /// Headers (names as sent).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Box<dyn ByteStream>,
}

/// Sends requests.
pub trait LlmTransport {
    /// Send one request; resolves when the response headers arrive.
    fn send<'a>(
        &'a self,
        request: &'a HttpRequest,
    ) -> LocalBoxFuture<'a, Result<HttpResponse, TransportError>>;
}

/// Waits.
pub trait Sleeper {
    /// A future that resolves after `ms` milliseconds.
    fn sleep(&self, ms: u64) -> LocalBoxFuture<'static, ()>;
}

/// Timeouts and retries of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallOptions {
    /// Retry bounds.
    pub retry: RetryPolicy,
    /// How long to wait for response headers (ms).
    pub connect_timeout_ms: u64,
    /// How long a stream may go without a byte (ms).
    pub idle_timeout_ms: u64,
    /// How long a run gathers the model's text deltas into one event to the page (ms; 0:
    /// one event per delta). See `agent::batch`.
    pub text_batch_ms: u64,
}

impl Default for CallOptions {
    fn default() -> Self {
        Self {
            retry: RetryPolicy::default(),
            connect_timeout_ms: 30_000,
            idle_timeout_ms: 60_000,
            text_batch_ms: 0,
        }
    }
}

/// Why a call failed. Nothing of a failed call was streamed to the caller.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The provider answered with an error status.
    #[error("the model provider answered {status}: {message}")]
    Http {
        /// Status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The network failed (after retries).
    #[error("{0}")]
    Network(String),
    /// No response, or no data, in time (after retries).
    #[error("{0}")]
    Timeout(String),
}

/// A finished call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// The assembled answer (with `error` set if the stream failed after it began).
    pub answer: Answer,
    /// Attempts made.
    pub attempts: u32,
    /// The waits between attempts (ms).
    pub waits_ms: Vec<u64>,
}

enum Attempt {
    Done(Answer),
    Failed {
        failure: Failure,
        headers: Vec<(String, String)>,
        error: CallError,
    },
}

/// Call the model once (with retries), streaming each event to `on_event` as it arrives (the
/// event is handed over: its text is not copied again on the way to the page).
/// `now_ms` reads the clock (for HTTP-date `Retry-After`), `jitter` draws from `[0, 1)`.
#[allow(clippy::too_many_arguments)]
pub async fn call_model(
    transport: &dyn LlmTransport,
    sleeper: &dyn Sleeper,
    kind: ProviderKind,
    request: &HttpRequest,
    options: CallOptions,
    now_ms: &dyn Fn() -> u64,
    jitter: &mut dyn FnMut() -> f64,
    on_event: &mut dyn FnMut(StreamEvent),
) -> Result<CallOutcome, CallError> {
    let mut waits_ms = Vec::new();
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut emitted = false;
        let result = attempt_once(transport, sleeper, kind, request, options, &mut |e| {
            emitted = true;
            on_event(e);
        })
        .await;
        match result {
            Attempt::Done(answer) => {
                return Ok(CallOutcome {
                    answer,
                    attempts: attempt,
                    waits_ms,
                })
            }
            Attempt::Failed {
                failure,
                headers,
                error,
            } => {
                if emitted {
                    // Unreachable in practice: failures after the first event end the answer.
                    return Err(error);
                }
                match options
                    .retry
                    .decide(attempt, failure, &headers, now_ms(), jitter())
                {
                    Decision::GiveUp => return Err(error),
                    Decision::RetryAfter(ms) => {
                        waits_ms.push(ms);
                        sleeper.sleep(ms).await;
                    }
                }
            }
        }
    }
}

async fn with_timeout<T>(sleeper: &dyn Sleeper, ms: u64, work: LocalBoxFuture<'_, T>) -> Option<T> {
    match select(work, sleeper.sleep(ms)).await {
        Either::Left((value, _)) => Some(value),
        Either::Right(_) => None,
    }
}

async fn attempt_once(
    transport: &dyn LlmTransport,
    sleeper: &dyn Sleeper,
    kind: ProviderKind,
    request: &HttpRequest,
    options: CallOptions,
    on_event: &mut dyn FnMut(StreamEvent),
) -> Attempt {
    let sent = with_timeout(sleeper, options.connect_timeout_ms, transport.send(request)).await;
    let mut response = match sent {
        None => {
            return Attempt::Failed {
                failure: Failure::Network,
                headers: Vec::new(),
                error: CallError::Timeout(format!(
                    "the model provider did not answer within {} s",
                    options.connect_timeout_ms / 1000
                )),
            }
        }
        Some(Err(TransportError::Network(e))) => {
            return Attempt::Failed {
                failure: Failure::Network,
                headers: Vec::new(),
                error: CallError::Network(format!("could not reach the model provider: {e}")),
            }
        }
        Some(Ok(response)) => response,
    };
    if !(200..300).contains(&response.status) {
        let body = read_all(&mut *response.body, sleeper, options.idle_timeout_ms).await;
        return Attempt::Failed {
            failure: Failure::Status(response.status),
            headers: response.headers,
            error: CallError::Http {
                status: response.status,
                message: provider_message(kind, &body),
            },
        };
    }
    let streaming = response.headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("content-type") && v.to_ascii_lowercase().contains("event-stream")
    });
    let mut assembler = Assembler::new();
    let mut emit = |events: &mut Vec<StreamEvent>, assembler: &mut Assembler| {
        for event in events.drain(..) {
            assembler.push(&event);
            on_event(event);
        }
    };
    if !streaming {
        let body = read_all(&mut *response.body, sleeper, options.idle_timeout_ms).await;
        match parse_response(kind, &body) {
            Ok(mut events) => emit(&mut events, &mut assembler),
            Err(e) => emit(&mut vec![StreamEvent::Error { message: e }], &mut assembler),
        }
        return Attempt::Done(assembler.finish());
    }
    let mut parser = SseParser::new();
    let mut decoder = ProviderStream::for_request(kind, request);
    let mut got_any = false;
    // The events of one SSE event (the buffer is reused).
    let mut events = Vec::new();
    loop {
        let next = with_timeout(sleeper, options.idle_timeout_ms, response.body.next_chunk()).await;
        let chunk = match next {
            Some(Some(Ok(chunk))) => chunk,
            Some(None) => break,
            Some(Some(Err(TransportError::Network(e)))) if !got_any => {
                return Attempt::Failed {
                    failure: Failure::Network,
                    headers: Vec::new(),
                    error: CallError::Network(format!("the connection dropped: {e}")),
                };
            }
            None if !got_any => {
                return Attempt::Failed {
                    failure: Failure::Network,
                    headers: Vec::new(),
                    error: CallError::Timeout(format!(
                        "the model sent nothing for {} s",
                        options.idle_timeout_ms / 1000
                    )),
                };
            }
            Some(Some(Err(TransportError::Network(e)))) => {
                emit(
                    &mut vec![StreamEvent::Error {
                        message: format!("the connection dropped mid-answer: {e}"),
                    }],
                    &mut assembler,
                );
                break;
            }
            None => {
                emit(
                    &mut vec![StreamEvent::Error {
                        message: format!(
                            "the model stopped sending for {} s mid-answer",
                            options.idle_timeout_ms / 1000
                        ),
                    }],
                    &mut assembler,
                );
                break;
            }
        };
        parser.feed(&chunk, |message| {
            decoder.on_event_into(message, &mut events);
            got_any |= !events.is_empty();
            emit(&mut events, &mut assembler);
        });
    }
    parser.finish_with(|message| {
        decoder.on_event_into(message, &mut events);
        emit(&mut events, &mut assembler);
    });
    emit(&mut decoder.finish(), &mut assembler);
    Attempt::Done(assembler.finish())
}

async fn read_all(body: &mut dyn ByteStream, sleeper: &dyn Sleeper, idle_ms: u64) -> String {
    let mut bytes = Vec::new();
    while let Some(Some(Ok(chunk))) = with_timeout(sleeper, idle_ms, body.next_chunk()).await {
        bytes.extend_from_slice(&chunk);
        if bytes.len() > 1 << 20 {
            break;
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The provider's error message from an error body, or the body itself (shortened).
fn provider_message(kind: ProviderKind, body: &str) -> String {
    if let Ok(events) = parse_response(kind, body) {
        if let Some(message) = events.iter().find_map(|e| match e {
            StreamEvent::Error { message } => Some(message.clone()),
            _ => None,
        }) {
            return message;
        }
    }
    let text: String = body.trim().chars().take(500).collect();
    if text.is_empty() {
        "no details given".into()
    } else {
        text
    }
}

/// One scripted response of a [`ScriptedTransport`].
#[derive(Debug, Clone, PartialEq)]
pub struct Scripted {
    /// Status.
    pub status: u16,
    /// Headers.
    pub headers: Vec<(String, String)>,
    /// Body chunks, in order.
    pub chunks: Vec<Vec<u8>>,
    /// What happens after the chunks.
    pub end: ScriptedEnd,
}

/// How a scripted body ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptedEnd {
    /// Cleanly.
    Done,
    /// The connection drops.
    Drop,
    /// Nothing more ever arrives.
    Stall,
}

impl Scripted {
    /// A streamed (SSE) 200 response from a transcript, in chunks of `chunk` bytes.
    pub fn sse(transcript: &str, chunk: usize) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks: transcript
                .as_bytes()
                .chunks(chunk.max(1))
                .map(<[u8]>::to_vec)
                .collect(),
            end: ScriptedEnd::Done,
        }
    }

    /// A JSON response with a status.
    pub fn json(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![body.as_bytes().to_vec()],
            end: ScriptedEnd::Done,
        }
    }

    /// Add a header.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// End this way instead of cleanly.
    pub fn ending(mut self, end: ScriptedEnd) -> Self {
        self.end = end;
        self
    }
}

/// A transport that replays scripted responses and records the requests (native tests).
#[derive(Debug, Default)]
pub struct ScriptedTransport {
    responses: RefCell<VecDeque<Scripted>>,
    requests: RefCell<Vec<HttpRequest>>,
}

impl ScriptedTransport {
    /// Replays `responses` in order; a request with none left is a network error.
    pub fn new(responses: Vec<Scripted>) -> Self {
        Self {
            responses: RefCell::new(responses.into()),
            requests: RefCell::new(Vec::new()),
        }
    }

    /// The requests received.
    pub fn requests(&self) -> Vec<HttpRequest> {
        self.requests.borrow().clone()
    }
}

struct ScriptedBody {
    chunks: VecDeque<Vec<u8>>,
    end: ScriptedEnd,
}

impl ByteStream for ScriptedBody {
    fn next_chunk(&mut self) -> LocalBoxFuture<'_, Option<Result<Vec<u8>, TransportError>>> {
        match self.chunks.pop_front() {
            Some(chunk) => future::ready(Some(Ok(chunk))).boxed_local(),
            None => match self.end {
                ScriptedEnd::Done => future::ready(None).boxed_local(),
                ScriptedEnd::Drop => future::ready(Some(Err(TransportError::Network(
                    "connection reset".into(),
                ))))
                .boxed_local(),
                ScriptedEnd::Stall => future::pending().boxed_local(),
            },
        }
    }
}

impl LlmTransport for ScriptedTransport {
    fn send<'a>(
        &'a self,
        request: &'a HttpRequest,
    ) -> LocalBoxFuture<'a, Result<HttpResponse, TransportError>> {
        self.requests.borrow_mut().push(request.clone());
        let next = self.responses.borrow_mut().pop_front();
        future::ready(match next {
            None => Err(TransportError::Network("no scripted response left".into())),
            Some(s) => Ok(HttpResponse {
                status: s.status,
                headers: s.headers,
                body: Box::new(ScriptedBody {
                    chunks: s.chunks.into(),
                    end: s.end,
                }),
            }),
        })
        .boxed_local()
    }
}

/// A sleeper that returns at once and records what it was asked to wait (native tests).
#[derive(Debug, Default)]
pub struct RecordingSleeper {
    waits: RefCell<Vec<u64>>,
}

impl RecordingSleeper {
    /// The waits asked for, in order.
    pub fn waits(&self) -> Vec<u64> {
        self.waits.borrow().clone()
    }
}

impl Sleeper for RecordingSleeper {
    fn sleep(&self, ms: u64) -> LocalBoxFuture<'static, ()> {
        self.waits.borrow_mut().push(ms);
        future::ready(()).boxed_local()
    }
}

/// A sleeper whose time moves only when told ([`ManualSleeper::advance`]), for tests of
/// timeouts: a `sleep(ms)` resolves once the time has been advanced by `ms` since it began.
#[derive(Debug, Default)]
pub struct ManualSleeper {
    now: std::cell::Cell<u64>,
    timers: RefCell<Vec<ManualTimer>>,
}

#[derive(Debug)]
struct ManualTimer {
    due: u64,
    asked: u64,
    state: std::rc::Rc<RefCell<(bool, Option<std::task::Waker>)>>,
}

impl ManualSleeper {
    /// A sleeper at time 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Move time forward by `ms`, waking every sleep that is due.
    pub fn advance(&self, ms: u64) {
        let now = self.now.get() + ms;
        self.now.set(now);
        let mut timers = self.timers.borrow_mut();
        timers.retain(|t| {
            if t.due > now {
                return true;
            }
            let mut state = t.state.borrow_mut();
            state.0 = true;
            if let Some(waker) = state.1.take() {
                waker.wake();
            }
            false
        });
    }

    /// The waits (ms asked for) still pending whose future is alive, in the order asked.
    pub fn pending(&self) -> Vec<u64> {
        self.timers
            .borrow()
            .iter()
            .filter(|t| std::rc::Rc::strong_count(&t.state) > 1)
            .map(|t| t.asked)
            .collect()
    }
}

impl Sleeper for ManualSleeper {
    fn sleep(&self, ms: u64) -> LocalBoxFuture<'static, ()> {
        let state = std::rc::Rc::new(RefCell::new((false, None)));
        self.timers.borrow_mut().push(ManualTimer {
            due: self.now.get() + ms,
            asked: ms,
            state: std::rc::Rc::clone(&state),
        });
        future::poll_fn(move |cx| {
            let mut s = state.borrow_mut();
            if s.0 {
                std::task::Poll::Ready(())
            } else {
                s.1 = Some(cx.waker().clone());
                std::task::Poll::Pending
            }
        })
        .boxed_local()
    }
}
