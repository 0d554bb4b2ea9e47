//! Errors: one `thiserror` enum per area, converted into the crate [`Error`] with `#[from]`.
//!
//! Errors are converted to JS values only in `src/web/`; in the core they stay typed. Every
//! error that reaches the page carries a stable [`ErrorCode`] and a message
//! written for a person (or a model) to act on.

use crate::protocol::ErrorCode;

/// Errors of the worker's message protocol: a message that cannot be understood, or a request
/// the core does not serve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// The message is not JSON, not an object, or lacks a usable `id` or `type`.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// The request type is not one the core serves.
    #[error("unknown request type '{name}'{hint}")]
    UnknownRequest {
        /// The type that was asked for.
        name: String,
        /// A ready-made hint naming the closest known types (may be empty).
        hint: String,
    },
    /// The request's `params` do not fit the request type.
    #[error("invalid params for '{request}': {reason}")]
    InvalidParams {
        /// The request type.
        request: String,
        /// What was wrong, naming the field.
        reason: String,
    },
}

/// The crate-wide error. The errors of the parts are boxed, so an `Error` is 16 bytes in the
/// wasm instead of 56: results are moved around a lot, and each move is inline code.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A protocol error.
    #[error(transparent)]
    Protocol(Box<ProtocolError>),
    /// A manuscript error (unknown chapter, a change that does not fit, a stale version).
    #[error(transparent)]
    Edit(Box<crate::project::EditError>),
    /// Undo or redo could not run.
    #[error(transparent)]
    History(Box<crate::commands::history::HistoryError>),
    /// A memory call that could not be done (invalid input, unknown id).
    #[error(transparent)]
    Memory(Box<crate::memory::MemoryError>),
    /// A tool-level error outside a tool call (such as an unknown toolset).
    #[error(transparent)]
    Tool(Box<crate::tools::ToolError>),
    /// No project is open, or the named one does not exist.
    #[error("{0}")]
    NoProject(String),
    /// No model is configured.
    #[error("{0}")]
    NoModel(String),
    /// Something is already running.
    #[error("{0}")]
    Busy(String),
    /// Storage failed (nothing of the failed write was kept).
    #[error(transparent)]
    Store(Box<crate::store::StoreError>),
}

/// `From` each part's error (boxed), as `#[from]` would give it unboxed.
macro_rules! from_boxed {
    ($($variant:ident($ty:ty)),* $(,)?) => {$(
        impl From<$ty> for Error {
            fn from(error: $ty) -> Self {
                Error::$variant(Box::new(error))
            }
        }
    )*};
}

from_boxed!(
    Protocol(ProtocolError),
    Edit(crate::project::EditError),
    History(crate::commands::history::HistoryError),
    Memory(crate::memory::MemoryError),
    Tool(crate::tools::ToolError),
    Store(crate::store::StoreError),
);

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
                crate::memory::MemoryError::NotFound { .. } => ErrorCode::NotFound,
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
                crate::store::StoreError::Quota(_) => ErrorCode::QuotaExceeded,
                crate::store::StoreError::Conflict(_) => ErrorCode::Conflict,
                _ => ErrorCode::StorageFailed,
            },
        }
    }
}

/// A value as JSON, through its `Serialize`. serde_json refuses only a map whose keys are not
/// strings and a `Serialize` impl that fails on its own; the crate's types are derived with
/// string keys and do neither. A refusal would still not panic in the worker: the value is
/// then the refusal's message, as a JSON string.
pub fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or_else(|e| serde_json::Value::String(e.to_string()))
}
