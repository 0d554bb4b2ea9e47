//! [`Core`]: serves decoded requests from the page.
//!
//! The core is the only place that knows which request types exist; the worker entry in
//! `src/web/` only moves JSON text in and out. Each request type is one entry of
//! [`REQUEST_TYPES`], which is also what `hello` reports as the capability list.

use std::rc::Rc;

use serde_json::{json, Value};

use crate::env::{Clock, EventSink, IdSource};
use crate::error::{Error, ProtocolError};
use crate::protocol::{decode_request, ErrorBody, Request, Response, PROTOCOL_VERSION};

/// The request types the core serves, in the order `hello` lists them.
pub const REQUEST_TYPES: &[&str] = &["hello", "debug_panic"];

/// What the core needs from the outside world.
pub struct Env {
    /// Wall-clock time.
    pub clock: Rc<dyn Clock>,
    /// Unique ids.
    pub ids: Rc<dyn IdSource>,
    /// Where events go.
    pub events: Rc<dyn EventSink>,
}

/// The agent core behind the worker.
pub struct Core {
    env: Env,
}

impl Core {
    /// A core in the given environment.
    pub fn new(env: Env) -> Self {
        Self { env }
    }

    /// The environment (clock, ids, event sink).
    pub fn env(&self) -> &Env {
        &self.env
    }

    /// Serve one message given as JSON text and return the response as JSON text. Never
    /// panics on any input: malformed messages get a `malformed` error response.
    pub async fn handle_text(&self, text: &str) -> String {
        let response = match decode_request(text) {
            Ok(request) => self.handle(request).await,
            Err(decode) => Response {
                id: decode.id,
                outcome: Err(error_body(&Error::from(decode.error))),
            },
        };
        response.to_json()
    }

    /// Serve one decoded request.
    pub async fn handle(&self, request: Request) -> Response {
        let outcome = self.dispatch(&request).await.map_err(|e| error_body(&e));
        Response {
            id: Some(request.id),
            outcome,
        }
    }

    async fn dispatch(&self, request: &Request) -> Result<Value, Error> {
        match request.kind.as_str() {
            "hello" => Ok(self.hello()),
            "debug_panic" => debug_panic(request),
            other => Err(ProtocolError::UnknownRequest {
                name: other.to_string(),
                hint: crate::names::did_you_mean(other, REQUEST_TYPES.iter().copied()),
            }
            .into()),
        }
    }

    /// The `hello` result: who we are and what we serve.
    pub fn hello(&self) -> Value {
        json!({
            "name": "draftsmith",
            "version": crate::VERSION,
            "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
            "protocol": PROTOCOL_VERSION,
            "capabilities": REQUEST_TYPES,
        })
    }
}

/// `debug_panic {message?}`: panics on purpose, so that tests and embedders can check that a
/// panic in the worker reaches the page as an error event and the worker recovers.
fn debug_panic(request: &Request) -> Result<Value, Error> {
    let message = match request.params.get("message") {
        None => "debug_panic requested",
        Some(Value::String(s)) => s.as_str(),
        Some(other) => {
            return Err(ProtocolError::InvalidParams {
                request: request.kind.clone(),
                reason: format!(
                    "'message' must be a string, got {}",
                    crate::protocol::json_kind(other)
                ),
            }
            .into())
        }
    };
    panic!("{message}");
}

fn error_body(error: &Error) -> ErrorBody {
    ErrorBody {
        code: error.code(),
        message: error.to_string(),
    }
}
