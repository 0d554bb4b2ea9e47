//! MCP tool servers: what the core knows of a remote server speaking the Model Context
//! Protocol (Streamable HTTP), and the seam it reaches them through.
//!
//! - [`McpServer`]: a server the writer configured (`mcpServers` in the settings): a name, a URL
//!   and request headers (credentials: kept like the API key, see [`crate::settings`]).
//! - Its tools join the catalog as `mcp__<server>__<tool>` ([`tool_name`], [`split_name`]); an
//!   agent spec names them one by one or all of a server's as `mcp__<server>__*`
//!   ([`matches`]).
//! - [`McpRuntime`]: the environment's MCP client (in the browser, the official TypeScript SDK's
//!   client in the worker). It connects a server and lists its tools, tells the core when the
//!   list changes, and calls a tool. Dropping a call's future cancels the call.
//! - [`CallOutcome`]: a call's result as the protocol gives it (`content` blocks, `isError`,
//!   `structuredContent`); [`CallOutcome::text`] is what the model reads of it (the core quotes
//!   it as untrusted content).

use std::rc::Rc;

use futures_util::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The prefix of every MCP tool's name.
pub const PREFIX: &str = "mcp__";
/// Between the server's name and the tool's.
const SEPARATOR: &str = "__";
/// The longest server name.
pub const MAX_SERVER_NAME: usize = 32;
/// The most servers configured at once.
pub const MAX_SERVERS: usize = 16;
/// The longest name a tool may have in a model's catalog (the providers' limit).
pub const MAX_TOOL_NAME: usize = 64;

/// A configured MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "McpServerSettings")]
pub struct McpServer {
    /// Its name in tool names (`mcp__<name>__<tool>`).
    pub name: String,
    /// Its Streamable HTTP endpoint.
    pub url: String,
    /// The names of the headers sent with every request (their values are secrets, kept apart).
    #[serde(default)]
    pub header_names: Vec<String>,
    /// The headers' values (never serialized with the rest).
    #[serde(skip)]
    #[ts(skip)]
    pub headers: Vec<(String, String)>,
}

/// Why a server name is not one: `None` when it is.
pub fn check_server_name(name: &str) -> Option<String> {
    let fine = !name.is_empty()
        && name.len() <= MAX_SERVER_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && !name.contains(SEPARATOR)
        && !name.starts_with('_')
        && !name.ends_with('_');
    (!fine).then(|| {
        format!(
            "\"{}\" is not a server name: use 1 to {MAX_SERVER_NAME} letters, digits, - and _ (no \"__\", no _ at either end)",
            name.chars().take(40).collect::<String>()
        )
    })
}

/// The catalog name of `server`'s tool `tool`.
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("{PREFIX}{server}{SEPARATOR}{tool}")
}

/// The pattern naming every tool of `server`.
pub fn server_pattern(server: &str) -> String {
    format!("{PREFIX}{server}{SEPARATOR}*")
}

/// Whether `name` is an MCP tool's name or pattern (`mcp__…`).
pub fn is_mcp(name: &str) -> bool {
    name.starts_with(PREFIX)
}

/// The server and tool of an MCP tool name or pattern (`*` as the tool), if it is one.
pub fn split_name(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix(PREFIX)?;
    let (server, tool) = rest.split_once(SEPARATOR)?;
    (check_server_name(server).is_none() && !tool.is_empty()).then_some((server, tool))
}

/// Whether the spec's tool entry `entry` (a name or `mcp__<server>__*`) names `name`.
pub fn matches(entry: &str, name: &str) -> bool {
    match (split_name(entry), split_name(name)) {
        (Some((server, "*")), Some((other, _))) => server == other,
        _ => entry == name,
    }
}

/// The pattern of the server `name` belongs to, for a lookup that falls back from a tool to its
/// server (`mcp__<server>__*`); `None` for other tools.
pub fn pattern_of(name: &str) -> Option<String> {
    split_name(name).map(|(server, _)| server_pattern(server))
}

/// A tool a server offers, as `tools/list` gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpTool {
    /// Its name on the server.
    pub name: String,
    /// A title for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does, for the model.
    #[serde(default)]
    pub description: String,
    /// The JSON Schema of its arguments.
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
    /// Hints (`readOnlyHint`, `destructiveHint`…): the server's word, never trusted for
    /// approvals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object"})
}

/// One block of a call's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image (its bytes are not passed on).
    Image {
        /// Its media type.
        #[serde(default, rename = "mimeType")]
        mime_type: String,
    },
    /// Audio (its bytes are not passed on).
    Audio {
        /// Its media type.
        #[serde(default, rename = "mimeType")]
        mime_type: String,
    },
    /// A resource, with its text when it has some.
    Resource {
        /// The resource.
        resource: EmbeddedResource,
    },
    /// A link to a resource.
    ResourceLink {
        /// Its URI.
        uri: String,
        /// Its name.
        #[serde(default)]
        name: String,
    },
    /// A kind this crate does not know.
    #[serde(other)]
    Other,
}

/// A resource embedded in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// Its URI.
    #[serde(default)]
    pub uri: String,
    /// Its text, for a text resource.
    #[serde(default)]
    pub text: Option<String>,
}

/// A call's result (`tools/call`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallOutcome {
    /// The result's blocks.
    #[serde(default)]
    pub content: Vec<Content>,
    /// The tool reports an error (the call itself went through).
    #[serde(default)]
    pub is_error: bool,
    /// A structured result, when the tool declares an output schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
}

impl CallOutcome {
    /// The result as text: the text blocks (and embedded text resources) in order, a line for
    /// each other block, and the structured result when there is no text.
    pub fn text(&self) -> String {
        let mut parts: Vec<String> = self
            .content
            .iter()
            .map(|block| match block {
                Content::Text { text } => text.clone(),
                Content::Image { mime_type } => format!("(an image, {mime_type}, not shown)"),
                Content::Audio { mime_type } => format!("(audio, {mime_type}, not shown)"),
                Content::Resource { resource } => match &resource.text {
                    Some(text) => format!("{}:\n{text}", resource.uri),
                    None => format!("(a binary resource: {})", resource.uri),
                },
                Content::ResourceLink { uri, name } => format!("(a resource: {name} {uri})"),
                Content::Other => "(a result block of a kind not shown)".into(),
            })
            .collect();
        let has_text = self
            .content
            .iter()
            .any(|b| matches!(b, Content::Text { .. } | Content::Resource { .. }));
        if let (false, Some(structured)) = (has_text, &self.structured_content) {
            parts.push(structured.to_string());
        }
        parts.join("\n")
    }
}

/// Called with a server's whole new tool list when it announces a change.
pub type ToolsChanged = Rc<dyn Fn(Vec<McpTool>)>;

/// The environment's MCP client.
pub trait McpRuntime {
    /// Connect `server` (closing an earlier connection of its name) and list its tools. When
    /// the server says its tools changed, the runtime lists them again and calls `changed`.
    fn connect(
        &self,
        server: &McpServer,
        changed: ToolsChanged,
    ) -> LocalBoxFuture<'static, Result<Vec<McpTool>, String>>;
    /// Call `tool` of the connected `server` with `args` (an object). Dropping the future
    /// cancels the call.
    fn call(
        &self,
        server: &str,
        tool: &str,
        args: Value,
    ) -> LocalBoxFuture<'static, Result<CallOutcome, String>>;
    /// Close the connection of `server`, if there is one.
    fn close(&self, server: &str) -> LocalBoxFuture<'static, ()>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_split_and_match() {
        assert_eq!(tool_name("style", "check"), "mcp__style__check");
        assert_eq!(split_name("mcp__style__check"), Some(("style", "check")));
        assert_eq!(split_name("mcp__style__x__y"), Some(("style", "x__y")));
        assert_eq!(split_name("mcp__style"), None);
        assert_eq!(split_name("mcp____x"), None);
        assert_eq!(split_name("read_chapter"), None);
        assert!(matches("mcp__style__*", "mcp__style__check"));
        assert!(!matches("mcp__style__*", "mcp__refs__check"));
        assert!(matches("mcp__style__check", "mcp__style__check"));
        assert!(!matches("mcp__style__check", "mcp__style__other"));
        assert_eq!(
            pattern_of("mcp__style__check").as_deref(),
            Some("mcp__style__*")
        );
        assert!(check_server_name("house-style_2").is_none());
        for bad in ["", "a__b", "_a", "a_", "a b", "é", &"x".repeat(33)] {
            assert!(check_server_name(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn results_read_as_text() {
        let outcome: CallOutcome = serde_json::from_value(json!({
            "content": [
                {"type": "text", "text": "one"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "two"}},
                {"type": "something_new", "x": 1}
            ],
            "isError": true
        }))
        .unwrap();
        assert!(outcome.is_error);
        assert_eq!(
            outcome.text(),
            "one\n(an image, image/png, not shown)\nfile:///a.txt:\ntwo\n(a result block of a kind not shown)"
        );
        let structured: CallOutcome =
            serde_json::from_value(json!({"content": [], "structuredContent": {"n": 3}})).unwrap();
        assert_eq!(structured.text(), "{\"n\":3}");
    }
}
