//! The worker's message protocol.
//!
//! The page and the worker exchange JSON objects (the worker passes them to the core as JSON
//! text, so decoding is plain Rust and tested natively).
//!
//! - **Request** (page → worker): `{"id": 7, "type": "hello", "params": {...}}`. `id` is a
//!   number or a non-empty string chosen by the page; `params` is optional and, when present,
//!   an object.
//! - **Response** (worker → page), exactly one per request, echoing its `id`:
//!   `{"kind": "response", "id": 7, "ok": true, "result": ...}` or
//!   `{"kind": "response", "id": 7, "ok": false, "error": {"code": "...", "message": "..."}}`.
//!   A message so malformed that its `id` cannot be read gets a response with `"id": null`.
//! - **Event** (worker → page), pushed at any time: `{"kind": "event", "type": "...", "data": ...}`.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::{Error, ProtocolError};

/// The protocol's version, reported by `hello`. Bumped on incompatible changes.
pub const PROTOCOL_VERSION: u32 = 1;

/// The largest message the core decodes, in bytes of JSON text (64 MiB). Larger messages are
/// rejected as malformed before parsing.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// A request id chosen by the page: a number or a non-empty string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A numeric id (the JS client uses increasing integers).
    Number(serde_json::Number),
    /// A string id.
    Text(String),
}

impl RequestId {
    fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::Number(n) => Some(RequestId::Number(n.clone())),
            Value::String(s) if !s.is_empty() => Some(RequestId::Text(s.clone())),
            _ => None,
        }
    }
}

/// A decoded request.
#[derive(Debug, Clone)]
pub struct Request {
    /// The page's id, echoed in the response.
    pub id: RequestId,
    /// The request type, such as `hello`.
    pub kind: String,
    /// The request's parameters: a JSON object's text (`{}` when none were sent), decoded
    /// straight into the request's typed parameters.
    pub params: Box<RawValue>,
}

/// A message that could not be decoded into a [`Request`], with the id when it was readable,
/// so that the error response can still reach the caller's promise.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    /// The request id, when the message had a usable one.
    pub id: Option<RequestId>,
    /// What was wrong.
    pub error: ProtocolError,
}

/// The three fields of a message, each as the text it is in the message (of a repeated
/// field the last counts; other fields are skipped).
#[derive(Default)]
struct Envelope<'a> {
    id: Option<&'a RawValue>,
    kind: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
}

impl<'de> Deserialize<'de> for Envelope<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = Envelope<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object {id, type, params}")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Self::Value, M::Error> {
                let mut envelope = Envelope::default();
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match &*key {
                        "id" => envelope.id = Some(map.next_value()?),
                        "type" => envelope.kind = Some(map.next_value()?),
                        "params" => envelope.params = Some(map.next_value()?),
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(envelope)
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

/// A field's value, read for what it is (the id, the type, or a message in an error).
fn small_value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// Decode one message from its JSON text. Only its fields are read here; the parameters stay
/// text until the request's handler decodes them into its typed parameters.
pub fn decode_request(text: &str) -> Result<Request, DecodeError> {
    let fail = |id: Option<RequestId>, why: String| DecodeError {
        id,
        error: ProtocolError::Malformed(why),
    };
    if text.len() > MAX_MESSAGE_BYTES {
        return Err(fail(
            None,
            format!(
                "message is {} bytes; the limit is {MAX_MESSAGE_BYTES}",
                text.len()
            ),
        ));
    }
    // The parameters are checked as JSON here and decoded later: a lone UTF-16 surrogate
    // escape, which only decoding finds, is looked for now (a message with one is not
    // Unicode text).
    if has_surrogate_escape(text) {
        if let Err(e) = serde_json::from_str::<Value>(text) {
            return Err(fail(None, format!("not valid JSON ({e})")));
        }
    }
    let envelope: Envelope = match serde_json::from_str(text) {
        Ok(envelope) => envelope,
        // Valid JSON that is not an object, or not JSON at all.
        Err(e) => {
            return Err(match serde_json::from_str::<Value>(text) {
                Ok(value) => fail(
                    None,
                    format!(
                        "expected an object {{id, type, params}}, got {}",
                        json_kind(&value)
                    ),
                ),
                Err(_) => fail(None, format!("not valid JSON ({e})")),
            })
        }
    };
    let id = match envelope.id.map(small_value) {
        None => return Err(fail(None, "missing field 'id'".into())),
        Some(raw) => RequestId::from_value(&raw).ok_or_else(|| {
            fail(
                None,
                format!(
                    "field 'id' must be a number or a non-empty string, got {}",
                    json_kind(&raw)
                ),
            )
        })?,
    };
    let kind = match envelope.kind.map(small_value) {
        Some(Value::String(s)) if !s.is_empty() => s,
        Some(other) => {
            return Err(fail(
                Some(id),
                format!(
                    "field 'type' must be a non-empty string, got {}",
                    json_kind(&other)
                ),
            ))
        }
        None => return Err(fail(Some(id), "missing field 'type'".into())),
    };
    let params = match envelope.params {
        None => empty_params(),
        Some(raw) => match raw.get().as_bytes().first() {
            Some(b'{') => raw.to_owned(),
            Some(b'n') => empty_params(),
            _ => {
                return Err(fail(
                    Some(id),
                    format!(
                        "field 'params' must be an object, got {}",
                        json_kind(&small_value(raw))
                    ),
                ))
            }
        },
    };
    Ok(Request { id, kind, params })
}

/// Whether `text` may have a `\u` escape of a UTF-16 surrogate (`\uD800` to `\uDFFF`):
/// any `\uD` escape (the page's `JSON.stringify` escapes only lone surrogates; whatever else
/// this finds is only read twice).
fn has_surrogate_escape(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'\\', bytes).any(|at| {
        bytes.get(at + 1) == Some(&b'u') && matches!(bytes.get(at + 2), Some(b'd' | b'D'))
    })
}

/// The parameters of a request that sent none.
fn empty_params() -> Box<RawValue> {
    RawValue::from_string("{}".to_string()).unwrap_or_else(|_| unreachable!("{{}} is JSON"))
}

pub use crate::names::json_kind;

/// Stable error codes the page can branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The message could not be decoded.
    Malformed,
    /// The request type is unknown.
    UnknownRequest,
    /// The request's params were wrong.
    InvalidParams,
    /// Something named does not exist (a chapter, a toolset).
    NotFound,
    /// The request conflicts with the current state (such as a stale base version).
    Conflict,
    /// No project is open, or the named one does not exist.
    NoProject,
    /// The browser's storage quota is used up.
    QuotaExceeded,
    /// Storage failed.
    StorageFailed,
    /// No model is configured (or the settings lack what a call needs).
    NoModel,
    /// Something is already running (such as an agent run on the same project).
    Busy,
    /// The core failed unexpectedly (a panic in the worker).
    Internal,
}

/// The error half of a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// Stable code.
    pub code: ErrorCode,
    /// What went wrong and what would work, for a person to read.
    pub message: String,
}

/// A response to one request.
#[derive(Debug, Clone)]
pub struct Response {
    /// The request's id, or `None` when it could not be read.
    pub id: Option<RequestId>,
    /// The result (its JSON text, written once from the handler's typed result) or the error.
    pub outcome: Result<Box<RawValue>, ErrorBody>,
}

/// A response as it is written: the result goes in as the text it already is.
#[derive(Serialize)]
struct Wire<'a> {
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Option<RequestId>>,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ErrorBody>,
}

impl Response {
    /// Encode as the JSON text the worker posts to the page.
    pub fn to_json(&self) -> String {
        self.to_json_with_id(None)
    }

    /// [`Response::to_json`], with the id written as `id_text` (a JSON number exactly as the
    /// request wrote it; see [`id_text`]) instead of from [`Response::id`].
    pub fn to_json_with_id(&self, id_text: Option<&str>) -> String {
        let wire = Wire {
            kind: "response",
            id: id_text.is_none().then_some(&self.id),
            ok: self.outcome.is_ok(),
            result: self.outcome.as_ref().ok().map(|r| &**r),
            error: self.outcome.as_ref().err(),
        };
        let text = serde_json::to_string(&wire).unwrap_or_else(|e| {
            format!(
                r#"{{"kind":"response","ok":false,"error":{{"code":"internal","message":{}}}}}"#,
                Value::from(e.to_string())
            )
        });
        match id_text {
            // `text` is an object with at least "kind": `{"kind":…`.
            Some(id) => format!("{{\"id\":{id},{}", &text[1..]),
            None => text,
        }
    }
}

/// The text of a request's numeric `id` as the request wrote it (`2.50`, `1e2`,
/// `0.1000000000000000055511151231257827`), for echoing a non-integer id exactly: the core
/// reads JSON numbers as `f64` without the exact (and large) float parser, which may round
/// a number of more than 15 significant digits to a neighbouring `f64`. The page's
/// `JSON.parse` of the echoed text gives back exactly the number it sent. `text` is a
/// message that parsed as JSON; of a repeated `id` the last counts, as when it was decoded.
/// `None` when the message is no object or its `id` is no number.
pub fn id_text(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    let ws = |mut i: usize| {
        while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            i += 1;
        }
        i
    };
    // The end of the string starting at `i` (just past its closing quote).
    let string_end = |mut i: usize| -> Option<usize> {
        i += 1;
        loop {
            match b.get(i)? {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
    };
    // The end of the value starting at `i`.
    let value_end = |mut i: usize| -> Option<usize> {
        match b.get(i)? {
            b'"' => string_end(i),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match b.get(i)? {
                        b'"' => i = string_end(i)?,
                        b'{' | b'[' => {
                            depth += 1;
                            i += 1;
                        }
                        b'}' | b']' => {
                            depth -= 1;
                            i += 1;
                            if depth == 0 {
                                return Some(i);
                            }
                        }
                        _ => i += 1,
                    }
                }
            }
            _ => {
                while !matches!(
                    b.get(i),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    i += 1;
                }
                Some(i)
            }
        }
    };
    let mut i = ws(0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut found = None;
    loop {
        i = ws(i);
        match b.get(i)? {
            b'}' => break,
            b',' => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let key_end = string_end(i)?;
        let key = &text[i..key_end];
        let is_id = key == "\"id\""
            || (key.contains('\\') && serde_json::from_str::<serde_json::Value>(key).ok()? == "id");
        i = ws(key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let start = ws(i + 1);
        i = value_end(start)?;
        if is_id {
            found = Some(&text[start..i]);
        }
    }
    found.filter(|id| id.starts_with(|c: char| c == '-' || c.is_ascii_digit()))
}

/// An event pushed to the page (defined in [`crate::env`], where the event sink is).
pub use crate::env::Event;

/// The protocol's codes for the crate's errors.
impl Error {
    /// The stable code the page sees for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Protocol(e) => match **e {
                ProtocolError::Malformed(_) => ErrorCode::Malformed,
                ProtocolError::UnknownRequest { .. } => ErrorCode::UnknownRequest,
                ProtocolError::InvalidParams { .. } => ErrorCode::InvalidParams,
            },
            Error::Edit(e) => match **e {
                crate::project::EditError::NoSuchChapter { .. } => ErrorCode::NotFound,
                crate::project::EditError::FutureVersion { .. }
                | crate::project::EditError::StaleVersion { .. } => ErrorCode::Conflict,
                _ => ErrorCode::InvalidParams,
            },
            Error::History(_) => ErrorCode::Internal,
            Error::Memory(e) => match **e {
                crate::error::MemoryError::NotFound { .. } => ErrorCode::NotFound,
                _ => ErrorCode::InvalidParams,
            },
            Error::Tool(e) if e.code == "not_found" => ErrorCode::NotFound,
            Error::Tool(e)
                if matches!(e.code.as_str(), "conflict" | "exists" | "already_decided") =>
            {
                ErrorCode::Conflict
            }
            Error::Tool(_) => ErrorCode::InvalidParams,
            Error::NoProject(_) => ErrorCode::NoProject,
            Error::NoModel(_) => ErrorCode::NoModel,
            Error::Busy(_) => ErrorCode::Busy,
            Error::Store(e) => match **e {
                crate::error::StoreError::Quota(_) => ErrorCode::QuotaExceeded,
                crate::error::StoreError::Conflict(_) => ErrorCode::Conflict,
                _ => ErrorCode::StorageFailed,
            },
        }
    }
}
