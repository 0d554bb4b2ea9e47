//! The one shape of every tool call's result: [`ToolResult`], `{status, data, meta}`. The
//! session returns one for every call it runs, including the calls that fail.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::error::ToolError;

/// Success or error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "ToolResultStatus")]
pub enum Status {
    /// The call did what it was asked.
    Success,
    /// The call failed and changed nothing.
    Error,
}

/// Facts about a call's execution. In JSON the time appears twice: as `execution_time_ms`,
/// and as `execution_time` in seconds (the TextCraft seed's name and unit, such as `0.05`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(into = "MetaWire", from = "MetaWire")]
#[ts(as = "MetaWire")]
pub struct ResultMeta {
    /// Wall time the call took (from the injected clock), in ms.
    pub execution_time_ms: u64,
    /// The history entry the call created, if it edited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_id: Option<String>,
    /// Bytes of text the call inserted, if it edited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_written: Option<usize>,
}

/// [`ResultMeta`] as it is written in JSON.
#[derive(Serialize, Deserialize, TS)]
#[ts(rename = "ToolResultMeta", optional_fields)]
struct MetaWire {
    #[serde(default)]
    execution_time_ms: u64,
    /// Seconds.
    #[serde(default)]
    execution_time: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    command_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bytes_written: Option<usize>,
}

impl From<ResultMeta> for MetaWire {
    fn from(meta: ResultMeta) -> Self {
        Self {
            execution_time_ms: meta.execution_time_ms,
            execution_time: Some(meta.execution_time_ms as f64 / 1000.0),
            command_id: meta.command_id,
            bytes_written: meta.bytes_written,
        }
    }
}

impl From<MetaWire> for ResultMeta {
    fn from(wire: MetaWire) -> Self {
        Self {
            execution_time_ms: match wire.execution_time {
                Some(seconds) if wire.execution_time_ms == 0 && seconds > 0.0 => {
                    (seconds * 1000.0).round() as u64
                }
                _ => wire.execution_time_ms,
            },
            command_id: wire.command_id,
            bytes_written: wire.bytes_written,
        }
    }
}

/// The one shape of every tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(rename = "ToolCallResult")]
pub struct ToolResult {
    /// Success or error.
    pub status: Status,
    /// The result, or `{code, message, details?}` for an error.
    pub data: Value,
    /// Execution facts.
    pub meta: ResultMeta,
}

impl ToolResult {
    /// A success.
    pub fn success(data: Value, meta: ResultMeta) -> Self {
        Self {
            status: Status::Success,
            data,
            meta,
        }
    }

    /// An error.
    pub fn error(error: &ToolError, meta: ResultMeta) -> Self {
        Self {
            status: Status::Error,
            data: crate::error::to_json(error),
            meta,
        }
    }

    /// True for a success.
    pub fn is_success(&self) -> bool {
        self.status == Status::Success
    }

    /// The result as the JSON text a conversation keeps (sent to the model, saved with the
    /// run): the fields in declaration order (`status`, `data`, `meta`, and the meta's as
    /// `MetaWire` declares them); the objects inside `data` are a `Value`'s, keys sorted.
    pub fn to_text(&self) -> String {
        // Nothing in a result can fail to serialize: the fields are derived, `data` a `Value`.
        serde_json::to_string(self).unwrap_or_default()
    }
}
