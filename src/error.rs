//! Errors: one `thiserror` enum per area, converted into the crate [`Error`] with `#[from]`.
//!
//! Errors are converted to JS values only in `src/web/`; in the core they stay typed. Every
//! error that reaches the page carries a stable code (`protocol::ErrorCode`, mapped by the
//! protocol, which owns the codes) and a message written for a person (or a model) to act on.
//!
//! The errors live at the bottom of the layers, so every layer can name them: the areas
//! re-export their own (`store::StoreError`, `commands::HistoryError`, `memory::MemoryError`,
//! `tools::ToolError`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    History(Box<HistoryError>),
    /// A memory call that could not be done (invalid input, unknown id).
    #[error(transparent)]
    Memory(Box<MemoryError>),
    /// A tool-level error outside a tool call (such as an unknown toolset).
    #[error(transparent)]
    Tool(Box<ToolError>),
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
    Store(Box<StoreError>),
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
    History(HistoryError),
    Memory(MemoryError),
    Tool(ToolError),
    Store(StoreError),
);

/// Why a store operation failed. The store is unchanged after a failed commit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The browser's storage quota is used up.
    #[error("storage is full (quota exceeded): {0}")]
    Quota(String),
    /// A record is not an object with a non-empty string `id`.
    #[error("invalid record for '{table}': {reason}")]
    Invalid {
        /// Table name.
        table: &'static str,
        /// What was wrong.
        reason: String,
    },
    /// The transaction was aborted (nothing of it was written).
    #[error("the write was aborted: {0}")]
    Aborted(String),
    /// An [`Op::Expect`](crate::store::Op::Expect) did not hold (nothing of the batch was
    /// written).
    #[error("the data changed meanwhile: {0}")]
    Conflict(String),
    /// Any other storage failure.
    #[error("storage failed: {0}")]
    Failed(String),
}

/// Why undo or redo could not run. The project is unchanged when this is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// A recorded change no longer fits its chapter (the history and the text disagree).
    #[error("the history does not match chapter '{chapter}': {source}")]
    Mismatch {
        /// Chapter id.
        chapter: String,
        /// Why.
        source: crate::project::changeset::ChangeError,
    },
    /// A recorded chapter is gone.
    #[error("the history refers to chapter '{0}', which no longer exists")]
    MissingChapter(String),
    /// A chapter the history would add is there already, or one it would take out still has
    /// text.
    #[error(
        "the history cannot add or take out chapter '{0}': the chapter list has changed since"
    )]
    ChapterList(String),
}

/// A memory call that could not be done; it changed nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    /// An argument is wrong; the message says which and what would work.
    #[error("{0}")]
    Invalid(String),
    /// No note, goal or entity has the id.
    #[error("no {kind} with id '{id}'{hint}")]
    NotFound {
        /// `note`, `goal` or `watched entity`.
        kind: &'static str,
        /// The id asked for (shortened if long).
        id: String,
        /// What would work: a close id, or how to find ids.
        hint: String,
    },
}

impl MemoryError {
    /// The stable code: `invalid_args` or `not_found`.
    pub fn code(&self) -> &'static str {
        match self {
            MemoryError::Invalid(_) => "invalid_args",
            MemoryError::NotFound { .. } => "not_found",
        }
    }
}

/// A tool call's error, written for the model: what was wrong and what would work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// Stable code: `unknown_tool`, `invalid_args`, `not_found`, `no_selection`,
    /// `out_of_range`, `conflict`, `failed`, `needs_model` (a generation tool run without
    /// a model call), `security` (a file path the sandbox refused), `read_only`.
    pub code: String,
    /// What went wrong and what would work.
    pub message: String,
    /// Extra data (such as suggestions or the closest match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl ToolError {
    /// An error with a code and message.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.to_string(),
            message: message.into(),
            details: None,
        }
    }

    /// `invalid_args`.
    pub fn invalid_args(message: impl Into<String>) -> Self {
        Self::new("invalid_args", message)
    }

    /// `not_found`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new("not_found", message)
    }

    /// Attach details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
}

impl From<crate::project::EditError> for ToolError {
    fn from(error: crate::project::EditError) -> Self {
        use crate::project::EditError as E;
        let code = match &error {
            E::NoSuchChapter { .. } => "not_found",
            E::BadChange { .. } | E::Invalid(_) => "invalid_args",
            E::FutureVersion { .. } | E::StaleVersion { .. } => "conflict",
        };
        ToolError::new(code, error.to_string())
    }
}

/// A value as JSON, through its `Serialize`. serde_json refuses only a map whose keys are not
/// strings and a `Serialize` impl that fails on its own; the crate's types are derived with
/// string keys and do neither. A refusal would still not panic in the worker: the value is
/// then the refusal's message, as a JSON string.
pub fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or_else(|e| serde_json::Value::String(e.to_string()))
}
