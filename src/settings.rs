//! [`Settings`]: which model the agents call, and how.
//!
//! The API key (and the extra headers, which may carry credentials) live in the worker's
//! memory. They are written to storage only when the writer opts in (`rememberKey`), never
//! appear in [`Settings::public`] (what the page, events and exports see: `hasKey` instead),
//! and [`Settings::redact`] takes them out of any message before it leaves the core.
//! Everything else (provider, base URL, model, run options) is stored in the database's
//! `meta` table under the global project, so it survives a reload.

use serde::{Deserialize, Serialize};
use serde_json::json;
use serde_json::{Map, Value};
use ts_rs::TS;

use crate::llm::local::LocalSpec;
use crate::llm::request::LocalOptions;
use crate::llm::{ProviderConfig, ProviderKind};
use crate::persist::GLOBAL_PROJECT;

/// The key of the settings record in the `meta` table.
pub const SETTINGS_KEY: &str = "settings";

/// Most model calls a run may be allowed.
pub const MAX_STEPS_LIMIT: usize = 100;

/// How long an asynchronous tool's call may take unless `toolTimeoutsMs` says (ms).
pub const DEFAULT_TOOL_TIMEOUT_MS: u64 = 30_000;
/// `research_url` calls a run may make unless `researchPerRun` says.
pub const DEFAULT_RESEARCH_PER_RUN: usize = 10;

/// The model settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
#[ts(rename = "SettingsFields")]
pub struct Settings {
    /// The wire format; `None` until a model is configured.
    pub provider: Option<ProviderKind>,
    /// The API root (see [`ProviderConfig::base_url`]).
    pub base_url: String,
    /// The model name (for `local`: the URL of its `.gguf` file).
    pub model: String,
    /// `local`: the context window in tokens (the runtime's default when unset).
    pub context_size: Option<u32>,
    /// `local`: CPU threads (the runtime's default when unset).
    pub threads: Option<u32>,
    /// The model's context window in tokens (unset: the model's known one, or for `local`
    /// its `contextSize`).
    pub context_window: Option<u32>,
    /// Keep runs within the context window: shorten old tool results and summarize older
    /// turns when a request would not fit (off: a request that does not fit fails).
    pub compaction: bool,
    /// The share of the window the newest turns keep verbatim when older ones are
    /// summarized (0.1 to 0.9).
    pub keep_verbatim: f64,
    /// The API key (never serialized with the rest).
    #[serde(skip)]
    pub api_key: Option<String>,
    /// More request headers (never serialized with the rest: they may carry credentials).
    #[serde(skip)]
    pub extra_headers: Vec<(String, String)>,
    /// Store the key and headers on this device.
    pub remember_key: bool,
    /// The default toolset of runs.
    pub toolset: String,
    /// The default most model calls per run.
    pub max_steps: usize,
    /// The default token budget per run.
    pub token_budget: Option<u64>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Output token limit per model call.
    pub max_tokens: Option<u32>,
    /// How long to wait for response headers (ms).
    pub connect_timeout_ms: u64,
    /// How long a stream may go without a byte (ms).
    pub idle_timeout_ms: u64,
    /// The window in which a run sends at most one `text_delta` event, gathering the pieces
    /// the model streams meanwhile (ms, 0 to [`MAX_STREAM_BATCH_MS`]; 0: one event per
    /// piece). About one animation frame by default: the page redraws no more often.
    pub stream_batch_ms: u64,
    /// Approval policies by tool name (over the defaults of [`crate::policy`]; a sorted
    /// vector, saved as a JSON object).
    pub approval_policies: std::collections::BTreeMap<String, crate::policy::Mode>,
    /// The recent-update window of conflict detection (ms).
    pub recent_update_window_ms: u64,
    /// A machine-translation endpoint (LibreTranslate-compatible `POST <url>` taking
    /// `{q, source, target, format}` and answering `{translatedText}`), if any.
    pub mtl_endpoint: String,
    // -- Asynchronous tools and research. --
    /// Timeouts of asynchronous tools by tool name (ms); others get
    /// [`DEFAULT_TOOL_TIMEOUT_MS`]. (Saved as a JSON object.)
    pub tool_timeouts_ms: std::collections::BTreeMap<String, u64>,
    /// The fetch proxy of `research_url`: a URL template whose `{url}` is replaced by the
    /// page's address, percent-encoded (`http://127.0.0.1:8080/proxy?url={url}`); empty:
    /// pages are fetched directly (most sites then fail for want of CORS headers).
    pub research_proxy: String,
    /// Let research reach loopback and private addresses.
    pub research_allow_private: bool,
    /// Most `research_url` calls per run.
    pub research_per_run: usize,
    // --- Proactive memory: the idle thinker and the bedside plan. ---
    /// The idle thinker: when it may think, and how many model calls a day it may make.
    pub idle_thinking: IdleThinking,
    /// Add a short model-written plan to the bedside note's automatic update (opt-in).
    pub bedside_plan: bool,
    // --- MCP tool servers. ---
    /// The MCP servers whose tools agents may call (their header values never serialized with
    /// the rest, like the key).
    pub mcp_servers: Vec<crate::mcp::McpServer>,
}

/// The model settings as the page sees them: never the key or the header values.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Settings")]
pub struct PublicSettings {
    /// The settings (the key and header values are never serialized).
    #[serde(flatten)]
    pub settings: Settings,
    /// Whether an API key is set (in the worker's memory).
    pub has_key: bool,
    /// The names of the extra request headers.
    pub extra_header_names: Vec<String>,
    /// Whether provider, base URL and model are all set.
    pub configured: bool,
}

// --- Proactive memory ---

/// The idle thinker's settings (`idleThinking`). It thinks only with a model configured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct IdleThinking {
    /// Whether it may think at all (it also needs a model).
    pub enabled: bool,
    /// How long the writer must have been idle (no typing), in ms.
    pub after_ms: u64,
    /// Most model calls a day (across projects); 0 stops it.
    pub max_calls_per_day: u32,
}

impl Default for IdleThinking {
    fn default() -> Self {
        Self {
            enabled: true,
            after_ms: 60_000,
            max_calls_per_day: 20,
        }
    }
}

/// A change to [`IdleThinking`]: fields left out keep their value.
#[derive(Debug, Default, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(optional_fields)]
pub struct IdleThinkingPatch {
    #[serde(default)]
    enabled: Option<bool>,
    #[serde(default)]
    after_ms: Option<u64>,
    #[serde(default)]
    max_calls_per_day: Option<u32>,
}

/// The smallest context window of a local model (tokens).
pub const MIN_CONTEXT: u32 = 256;
/// The largest context window of a local model (tokens).
pub const MAX_CONTEXT: u32 = 131_072;
pub use crate::llm::tokens::{MAX_WINDOW, MIN_WINDOW};
/// The most CPU threads of a local model.
pub const MAX_THREADS: u32 = 64;

/// Whether `url` names a `.gguf` file (its path ends so; a query or fragment may follow):
/// what the local provider loads. Relative URLs (`/models/x.gguf`) count, resolved against
/// the page's origin by the runtime.
pub fn is_gguf_url(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    let name = path.rsplit('/').next().unwrap_or_default();
    name.len() > ".gguf".len()
        && name.to_ascii_lowercase().ends_with(".gguf")
        && !url.contains(char::is_whitespace)
}

/// The default of [`Settings::stream_batch_ms`]: about one animation frame at 60 Hz.
pub const DEFAULT_STREAM_BATCH_MS: u64 = 16;

/// The most [`Settings::stream_batch_ms`] may be.
pub const MAX_STREAM_BATCH_MS: u64 = 1_000;

/// The shortest idle time the thinker may wait for (ms).
pub const MIN_IDLE_MS: u64 = 1_000;
/// The longest idle time the thinker may wait for (ms): a day.
pub const MAX_IDLE_MS: u64 = 86_400_000;
/// The largest daily call budget of the thinker.
pub const MAX_THINKER_CALLS_PER_DAY: u32 = 1_000;

impl Settings {
    /// Apply the proactive-memory fields of a patch to `self` (checked; an error names the
    /// field).
    fn patch_proactive(
        &mut self,
        idle: Option<IdleThinkingPatch>,
        bedside_plan: Option<bool>,
    ) -> Result<(), String> {
        if let Some(idle) = idle {
            if let Some(enabled) = idle.enabled {
                self.idle_thinking.enabled = enabled;
            }
            if let Some(ms) = idle.after_ms {
                if !(MIN_IDLE_MS..=MAX_IDLE_MS).contains(&ms) {
                    return Err(format!(
                        "'idleThinking.afterMs' must be between {MIN_IDLE_MS} and {MAX_IDLE_MS} ms, got {ms}"
                    ));
                }
                self.idle_thinking.after_ms = ms;
            }
            if let Some(calls) = idle.max_calls_per_day {
                if calls > MAX_THINKER_CALLS_PER_DAY {
                    return Err(format!(
                        "'idleThinking.maxCallsPerDay' must be at most {MAX_THINKER_CALLS_PER_DAY}, got {calls}"
                    ));
                }
                self.idle_thinking.max_calls_per_day = calls;
            }
        }
        if let Some(plan) = bedside_plan {
            self.bedside_plan = plan;
        }
        Ok(())
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            provider: None,
            base_url: String::new(),
            model: String::new(),
            context_size: None,
            threads: None,
            context_window: None,
            compaction: true,
            keep_verbatim: crate::agent::context::DEFAULT_KEEP_VERBATIM,
            api_key: None,
            extra_headers: Vec::new(),
            remember_key: false,
            toolset: crate::tools::ALL.into(),
            max_steps: crate::agent::DEFAULT_MAX_STEPS,
            token_budget: None,
            temperature: None,
            max_tokens: None,
            connect_timeout_ms: 30_000,
            idle_timeout_ms: 60_000,
            stream_batch_ms: DEFAULT_STREAM_BATCH_MS,
            approval_policies: Default::default(),
            recent_update_window_ms: crate::policy::DEFAULT_WINDOW_MS,
            mtl_endpoint: String::new(),
            // Proactive memory.
            idle_thinking: IdleThinking::default(),
            bedside_plan: false,
            mcp_servers: Vec::new(),
            tool_timeouts_ms: Default::default(),
            research_proxy: String::new(),
            research_allow_private: false,
            research_per_run: DEFAULT_RESEARCH_PER_RUN,
        }
    }
}

/// A change to the settings: fields left out keep their value.
#[derive(Debug, Default, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(optional_fields)]
pub struct SettingsPatch {
    /// `openai`, `anthropic`, `gemini` or `local`; '' forgets it.
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    base_url: Option<String>,
    /// The model name; for `local`, the URL of a `.gguf` file.
    #[serde(default)]
    model: Option<String>,
    /// `local`: 256 to 131 072 tokens; `null` goes back to the default.
    #[serde(default, deserialize_with = "present")]
    #[ts(type = "number | null", optional)]
    context_size: Option<Value>,
    /// `local`: 1 to 64; `null` goes back to the default.
    #[serde(default, deserialize_with = "present")]
    #[ts(type = "number | null", optional)]
    threads: Option<Value>,
    /// 256 to 10 000 000 tokens; `null` goes back to the model's known window.
    #[serde(default, deserialize_with = "present")]
    #[ts(type = "number | null", optional)]
    context_window: Option<Value>,
    #[serde(default)]
    compaction: Option<bool>,
    /// 0.1 to 0.9.
    #[serde(default)]
    keep_verbatim: Option<f64>,
    /// The API key; `null` or '' forgets it.
    #[serde(default, deserialize_with = "present")]
    #[ts(type = "string | null", optional)]
    api_key: Option<Value>,
    /// Extra request headers (replace the whole set).
    #[serde(default)]
    #[ts(type = "Record<string, string>", optional)]
    extra_headers: Option<Map<String, Value>>,
    /// Store the key (and headers) on this device.
    #[serde(default)]
    remember_key: Option<bool>,
    #[serde(default)]
    toolset: Option<String>,
    /// 1 to 100.
    #[serde(default)]
    max_steps: Option<usize>,
    #[serde(default, deserialize_with = "present")]
    #[ts(type = "number | null", optional)]
    token_budget: Option<Value>,
    /// 0 to 2.
    #[serde(default, deserialize_with = "present")]
    #[ts(type = "number | null", optional)]
    temperature: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[ts(type = "number | null", optional)]
    max_tokens: Option<Value>,
    /// 1 000 to 600 000.
    #[serde(default)]
    connect_timeout_ms: Option<u64>,
    /// 1 000 to 600 000.
    #[serde(default)]
    idle_timeout_ms: Option<u64>,
    /// 0 to 1 000.
    #[serde(default)]
    stream_batch_ms: Option<u64>,
    /// Modes by tool name; a `null` mode goes back to the default.
    #[serde(default)]
    #[ts(
        type = "Record<string, 'permissive' | 'standard' | 'strict' | null>",
        optional
    )]
    approval_policies: Option<Map<String, Value>>,
    /// At most 86 400 000 (a day).
    #[serde(default)]
    recent_update_window_ms: Option<u64>,
    /// http:// or https://; '' forgets it.
    #[serde(default)]
    mtl_endpoint: Option<String>,
    // Proactive memory.
    /// The idle thinker (fields left out keep their value).
    #[serde(default)]
    idle_thinking: Option<IdleThinkingPatch>,
    /// Add a short model-written plan to the bedside note's automatic update.
    #[serde(default)]
    bedside_plan: Option<bool>,
    /// Timeouts by tool name (ms); a `null` goes back to the default.
    #[serde(default)]
    #[ts(type = "Record<string, number | null>", optional)]
    tool_timeouts_ms: Option<Map<String, Value>>,
    /// An http(s) URL template with `{url}`; '' fetches pages directly.
    #[serde(default)]
    research_proxy: Option<String>,
    #[serde(default)]
    research_allow_private: Option<bool>,
    /// 1 to 100.
    #[serde(default)]
    research_per_run: Option<usize>,
    /// MCP tool servers (replace the whole list).
    #[serde(default)]
    mcp_servers: Option<Vec<McpServerPatch>>,
}

/// One MCP server in a settings patch.
#[derive(Debug, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(optional_fields)]
pub struct McpServerPatch {
    /// Its name in tool names (`mcp__<name>__<tool>`): letters, digits, - and _.
    name: String,
    /// Its Streamable HTTP endpoint (http:// or https://).
    url: String,
    /// Request headers (such as `Authorization`); left out, a server of the same name and
    /// URL origin keeps the ones it has.
    #[serde(default)]
    #[ts(type = "Record<string, string>", optional)]
    headers: Option<Map<String, Value>>,
}

/// The origin of a URL (`scheme://host[:port]`, lowercase, default ports left out, user info
/// dropped), or `None` for what is not an http(s) URL.
pub fn url_origin(url: &str) -> Option<String> {
    let url = url.trim();
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority
        .rsplit('@')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let default = if scheme == "http" { ":80" } else { ":443" };
    let host_port = host_port.strip_suffix(default).unwrap_or(&host_port);
    if host_port.is_empty() {
        return None;
    }
    Some(format!("{scheme}://{host_port}"))
}

/// Request headers from a patch: names of letters, digits, - and _, one-line string values.
fn header_list(field: &str, headers: Map<String, Value>) -> Result<Vec<(String, String)>, String> {
    let mut list = Vec::new();
    for (name, value) in headers {
        let valid_name = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
        if !valid_name {
            return Err(format!("'{field}': \"{name}\" is not a header name"));
        }
        match value {
            Value::String(v) if !v.contains(['\r', '\n']) => list.push((name, v)),
            _ => {
                return Err(format!(
                    "'{field}': the value of \"{name}\" must be a one-line string"
                ))
            }
        }
    }
    Ok(list)
}

/// The MCP servers a patch lists, checked: unique well-formed names, http(s) URLs, headers.
/// A server given without headers keeps those of the server of its name in `before` when its
/// URL's origin is the same (the page re-sends the list without the secrets it never saw).
fn mcp_servers(
    patch: Vec<McpServerPatch>,
    before: &[crate::mcp::McpServer],
) -> Result<Vec<crate::mcp::McpServer>, String> {
    if patch.len() > crate::mcp::MAX_SERVERS {
        return Err(format!(
            "'mcpServers': at most {} servers",
            crate::mcp::MAX_SERVERS
        ));
    }
    let mut servers: Vec<crate::mcp::McpServer> = Vec::new();
    for server in patch {
        let name = server.name.trim().to_string();
        if let Some(reason) = crate::mcp::check_server_name(&name) {
            return Err(format!("'mcpServers': {reason}"));
        }
        if servers.iter().any(|s| s.name == name) {
            return Err(format!("'mcpServers': two servers are named \"{name}\""));
        }
        let url = server.url.trim().to_string();
        let Some(origin) = url_origin(&url) else {
            return Err(format!(
                "'mcpServers': the URL of \"{name}\" must start with http:// or https://, got \"{}\"",
                crate::tools::editing::preview(&url, 80)
            ));
        };
        let headers = match server.headers {
            Some(map) => header_list(&format!("mcpServers.{name}.headers"), map)?,
            None => before
                .iter()
                .find(|s| s.name == name && url_origin(&s.url).as_deref() == Some(origin.as_str()))
                .map(|s| s.headers.clone())
                .unwrap_or_default(),
        };
        servers.push(crate::mcp::McpServer {
            name,
            url,
            header_names: headers.iter().map(|(n, _)| n.clone()).collect(),
            headers,
        });
    }
    Ok(servers)
}

/// A field that is present, `null` included.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// `null` as `None`, else a value of `T`.
fn nullable<T: serde::de::DeserializeOwned>(
    field: &str,
    value: Value,
) -> Result<Option<T>, String> {
    if value.is_null() {
        return Ok(None);
    }
    serde_json::from_value(value)
        .map(Some)
        .map_err(|e| format!("'{field}': {e}"))
}

impl Settings {
    /// The settings with `patch` applied, or why the patch does not fit (then nothing
    /// changes). `toolset_exists` checks toolset names.
    pub fn patched(
        &self,
        patch: SettingsPatch,
        toolset_exists: impl Fn(&str) -> bool,
        tool_exists: impl Fn(&str) -> bool,
    ) -> Result<Settings, String> {
        let mut next = self.clone();
        if let Some(provider) = patch.provider {
            next.provider = if provider.trim().is_empty() {
                None
            } else {
                Some(
                    provider
                        .parse()
                        .map_err(|e: String| format!("'provider': {e}"))?,
                )
            };
        }
        if let Some(url) = patch.base_url {
            let url = url.trim().to_string();
            let web = url.starts_with("http://") || url.starts_with("https://");
            if !url.is_empty() && !web {
                return Err(format!(
                    "'baseUrl' must start with http:// or https://, got \"{}\"",
                    crate::tools::editing::preview(&url, 80)
                ));
            }
            next.base_url = url;
        }
        if let Some(model) = patch.model {
            next.model = model.trim().to_string();
        }
        if let Some(v) = patch.context_size {
            let n: Option<u32> = nullable("contextSize", v)?;
            if n.is_some_and(|n| !(MIN_CONTEXT..=MAX_CONTEXT).contains(&n)) {
                return Err(format!(
                    "'contextSize' must be between {MIN_CONTEXT} and {MAX_CONTEXT} tokens"
                ));
            }
            next.context_size = n;
        }
        if let Some(v) = patch.context_window {
            let n: Option<u32> = nullable("contextWindow", v)?;
            if n.is_some_and(|n| !(MIN_WINDOW..=MAX_WINDOW).contains(&n)) {
                return Err(format!(
                    "'contextWindow' must be between {MIN_WINDOW} and {MAX_WINDOW} tokens"
                ));
            }
            next.context_window = n;
        }
        if let Some(on) = patch.compaction {
            next.compaction = on;
        }
        if let Some(share) = patch.keep_verbatim {
            if !(0.1..=0.9).contains(&share) {
                return Err("'keepVerbatim' must be between 0.1 and 0.9".into());
            }
            next.keep_verbatim = share;
        }
        if let Some(v) = patch.threads {
            let n: Option<u32> = nullable("threads", v)?;
            if n.is_some_and(|n| !(1..=MAX_THREADS).contains(&n)) {
                return Err(format!("'threads' must be between 1 and {MAX_THREADS}"));
            }
            next.threads = n;
        }
        if next.provider == Some(ProviderKind::Local)
            && !next.model.is_empty()
            && !is_gguf_url(&next.model)
        {
            return Err(format!(
                "'model' must be the URL of a .gguf file for the local provider, got \"{}\"",
                crate::tools::editing::preview(&next.model, 80)
            ));
        }
        let key_given = patch.api_key.is_some();
        let headers_given = patch.extra_headers.is_some();
        if let Some(key) = patch.api_key {
            next.api_key = match key {
                Value::Null => None,
                Value::String(s) if s.trim().is_empty() => None,
                Value::String(s) => Some(s.trim().to_string()),
                _ => return Err("'apiKey' must be a string or null".into()),
            };
        }
        if let Some(headers) = patch.extra_headers {
            next.extra_headers = header_list("extraHeaders", headers)?;
        }
        // The key and extra headers belong to the endpoint they were given for: a change of
        // the provider or of the base URL's origin drops them, unless the same change
        // supplies them (so a changed URL never receives the old endpoint's key).
        let moved = next.provider != self.provider
            || (!self.base_url.is_empty()
                && url_origin(&next.base_url) != url_origin(&self.base_url));
        if moved {
            if !key_given {
                next.api_key = None;
            }
            if !headers_given {
                next.extra_headers.clear();
            }
        }
        if let Some(remember) = patch.remember_key {
            next.remember_key = remember;
        }
        if let Some(toolset) = patch.toolset {
            if !toolset_exists(&toolset) {
                return Err(format!("'toolset': there is no toolset \"{toolset}\""));
            }
            next.toolset = toolset;
        }
        if let Some(steps) = patch.max_steps {
            if !(1..=MAX_STEPS_LIMIT).contains(&steps) {
                return Err(format!(
                    "'maxSteps' must be between 1 and {MAX_STEPS_LIMIT}, got {steps}"
                ));
            }
            next.max_steps = steps;
        }
        if let Some(v) = patch.token_budget {
            next.token_budget = nullable("tokenBudget", v)?;
        }
        if let Some(v) = patch.temperature {
            let t: Option<f64> = nullable("temperature", v)?;
            if t.is_some_and(|t| !(0.0..=2.0).contains(&t)) {
                return Err("'temperature' must be between 0 and 2".into());
            }
            next.temperature = t;
        }
        if let Some(v) = patch.max_tokens {
            next.max_tokens = nullable("maxTokens", v)?;
        }
        if let Some(ms) = patch.stream_batch_ms {
            if ms > MAX_STREAM_BATCH_MS {
                return Err(format!(
                    "'streamBatchMs' must be between 0 and {MAX_STREAM_BATCH_MS} ms, got {ms}"
                ));
            }
            next.stream_batch_ms = ms;
        }
        for (field, value, slot) in [
            (
                "connectTimeoutMs",
                patch.connect_timeout_ms,
                &mut next.connect_timeout_ms,
            ),
            (
                "idleTimeoutMs",
                patch.idle_timeout_ms,
                &mut next.idle_timeout_ms,
            ),
        ] {
            if let Some(ms) = value {
                if !(1_000..=600_000).contains(&ms) {
                    return Err(format!(
                        "'{field}' must be between 1000 and 600000 ms, got {ms}"
                    ));
                }
                *slot = ms;
            }
        }
        if let Some(servers) = patch.mcp_servers {
            next.mcp_servers = mcp_servers(servers, &self.mcp_servers)?;
        }
        // An MCP tool (or all of a server's, `mcp__<server>__*`) is named by its server, which
        // must be configured; its tools may change while it runs.
        let servers = next.mcp_servers.clone();
        let tool_exists = |name: &str| match crate::mcp::split_name(name) {
            Some((server, _)) => servers.iter().any(|s| s.name == server),
            None => tool_exists(name),
        };
        if let Some(modes) = patch.approval_policies {
            for (tool, mode) in modes {
                // `<agent>/<tool>`: the mode of a tool when that agent calls it.
                let (agent, name) = match tool.split_once('/') {
                    Some((agent, name)) => (Some(agent), name),
                    None => (None, tool.as_str()),
                };
                if agent.is_some_and(|a| {
                    a.is_empty()
                        || a.len() > 64
                        || !a
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                }) {
                    return Err(format!(
                        "'approvalPolicies': \"{}\" must be a tool name or <agent>/<tool> with an agent name of letters, digits, _ and -",
                        tool.chars().take(80).collect::<String>()
                    ));
                }
                if !tool_exists(name) {
                    return Err(format!(
                        "'approvalPolicies': there is no tool \"{}\"",
                        name.chars().take(80).collect::<String>()
                    ));
                }
                match mode {
                    Value::Null => {
                        next.approval_policies.remove(&tool);
                    }
                    Value::String(m) => {
                        let mode = m
                            .parse()
                            .map_err(|e: String| format!("'approvalPolicies.{tool}': {e}"))?;
                        next.approval_policies.insert(tool, mode);
                    }
                    _ => {
                        return Err(format!(
                            "'approvalPolicies.{tool}' must be permissive, standard, strict or null"
                        ))
                    }
                }
            }
        }
        if let Some(ms) = patch.recent_update_window_ms {
            if ms > 86_400_000 {
                return Err(format!(
                    "'recentUpdateWindowMs' must be at most 86400000 (a day), got {ms}"
                ));
            }
            next.recent_update_window_ms = ms;
        }
        if let Some(url) = patch.mtl_endpoint {
            let url = url.trim().to_string();
            if !(url.is_empty() || url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "'mtlEndpoint' must start with http:// or https://, got \"{}\"",
                    crate::tools::editing::preview(&url, 80)
                ));
            }
            next.mtl_endpoint = url;
        }
        // Proactive memory.
        next.patch_proactive(patch.idle_thinking, patch.bedside_plan)?;
        // -- Asynchronous tools and research. --
        if let Some(timeouts) = patch.tool_timeouts_ms {
            for (tool, ms) in timeouts {
                if !tool_exists(&tool) {
                    return Err(format!(
                        "'toolTimeoutsMs': there is no tool \"{}\"",
                        tool.chars().take(80).collect::<String>()
                    ));
                }
                match ms {
                    Value::Null => {
                        next.tool_timeouts_ms.remove(&tool);
                    }
                    v => match v.as_u64().filter(|ms| (1_000..=600_000).contains(ms)) {
                        Some(ms) => {
                            next.tool_timeouts_ms.insert(tool, ms);
                        }
                        None => {
                            return Err(format!(
                            "'toolTimeoutsMs.{tool}' must be between 1000 and 600000 ms, or null"
                        ))
                        }
                    },
                }
            }
        }
        if let Some(proxy) = patch.research_proxy {
            let proxy = proxy.trim().to_string();
            let web = proxy.starts_with("http://") || proxy.starts_with("https://");
            let template = web && proxy.contains("{url}");
            if !(proxy.is_empty() || template) {
                return Err(format!(
                    "'researchProxy' must be an http(s) URL with {{url}} where the page's address goes (such as http://127.0.0.1:8080/proxy?url={{url}}), got \"{}\"",
                    crate::tools::editing::preview(&proxy, 80)
                ));
            }
            next.research_proxy = proxy;
        }
        if let Some(allow) = patch.research_allow_private {
            next.research_allow_private = allow;
        }
        if let Some(n) = patch.research_per_run {
            if !(1..=100).contains(&n) {
                return Err(format!(
                    "'researchPerRun' must be between 1 and 100, got {n}"
                ));
            }
            next.research_per_run = n;
        }
        Ok(next)
    }

    /// How long a call of the asynchronous tool `tool` may take (ms).
    pub fn tool_timeout_ms(&self, tool: &str) -> u64 {
        self.tool_timeouts_ms
            .get(tool)
            .or_else(|| crate::mcp::pattern_of(tool).and_then(|p| self.tool_timeouts_ms.get(&p)))
            .copied()
            .unwrap_or(DEFAULT_TOOL_TIMEOUT_MS)
    }

    /// The approval policies in force (per tool; per-agent entries left out).
    pub fn policies(&self) -> crate::policy::Policies {
        self.policies_for(None, &[])
    }

    /// The approval policies in force when `agent` calls a tool: the per-tool modes, over
    /// them the agent's own (`<agent>/<tool>` entries), and over those the tools the agent's
    /// spec always asks about (`interrupt_on`: strict).
    pub fn policies_for(
        &self,
        agent: Option<&str>,
        interrupt_on: &[String],
    ) -> crate::policy::Policies {
        let mut modes: std::collections::BTreeMap<String, _> = (self.approval_policies.iter())
            .filter(|(k, _)| !k.contains('/'))
            .map(|(k, m)| (k.clone(), *m))
            .collect();
        if let Some(agent) = agent {
            for (key, mode) in &self.approval_policies {
                if let Some(tool) = key
                    .strip_prefix(agent)
                    .and_then(|rest| rest.strip_prefix('/'))
                {
                    modes.insert(tool.to_string(), *mode);
                }
            }
        }
        for tool in interrupt_on {
            modes.insert(tool.clone(), crate::policy::Mode::Strict);
        }
        crate::policy::Policies {
            modes,
            window_ms: self.recent_update_window_ms,
        }
    }

    /// Where to reach the model, or why no model is configured.
    pub fn provider_config(&self) -> Result<ProviderConfig, String> {
        let kind = self.provider.ok_or(
            "no model is configured: choose a provider, base URL and model in the settings",
        )?;
        if kind == ProviderKind::Local {
            if !is_gguf_url(&self.model) {
                return Err(
                    "no model is configured: the local provider needs the URL of a .gguf file as its model"
                        .into(),
                );
            }
            return Ok(ProviderConfig {
                kind,
                base_url: String::new(),
                model: self.model.clone(),
                api_key: None,
                extra_headers: Vec::new(),
                local: LocalOptions {
                    context_size: self.context_size,
                    threads: self.threads,
                    template_tools: false,
                },
            });
        }
        if self.base_url.is_empty() {
            return Err("no model is configured: the settings have no base URL".into());
        }
        if self.model.is_empty() {
            return Err("no model is configured: the settings have no model name".into());
        }
        Ok(ProviderConfig {
            kind,
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            api_key: self.api_key.clone(),
            extra_headers: self.extra_headers.clone(),
            local: LocalOptions::default(),
        })
    }

    /// The model to load in the browser, when the provider is `local`.
    pub fn local_spec(&self) -> Option<LocalSpec> {
        (self.provider == Some(ProviderKind::Local) && is_gguf_url(&self.model)).then(|| {
            LocalSpec {
                url: self.model.clone(),
                context_size: self.context_size,
                threads: self.threads,
            }
        })
    }

    /// What the page may see: everything but the key and header values.
    pub fn public(&self) -> PublicSettings {
        PublicSettings {
            settings: self.clone(),
            has_key: self.api_key.is_some(),
            extra_header_names: self.extra_headers.iter().map(|(n, _)| n.clone()).collect(),
            configured: self.provider_config().is_ok(),
        }
    }

    /// The record stored in the `meta` table: the key and headers only when remembered.
    pub fn record(&self) -> Value {
        let mut record = json!({
            "id": SETTINGS_KEY,
            "project": GLOBAL_PROJECT,
            "settings": crate::error::to_json(self),
        });
        if self.remember_key {
            record["apiKey"] = json!(self.api_key);
            record["extraHeaders"] = json!(self.extra_headers);
            let mcp: Map<String, Value> = self
                .mcp_servers
                .iter()
                .filter(|s| !s.headers.is_empty())
                .map(|s| (s.name.clone(), json!(s.headers)))
                .collect();
            record["mcpHeaders"] = Value::Object(mcp);
        }
        record
    }

    /// Settings from a stored record (unknown or broken fields fall back to defaults).
    pub fn from_record(record: &Value) -> Settings {
        let mut settings: Settings =
            serde_json::from_value(record["settings"].clone()).unwrap_or_default();
        if settings.remember_key {
            settings.api_key = record["apiKey"].as_str().map(str::to_string);
            settings.extra_headers =
                serde_json::from_value(record["extraHeaders"].clone()).unwrap_or_default();
            for server in &mut settings.mcp_servers {
                server.headers = serde_json::from_value(record["mcpHeaders"][&server.name].clone())
                    .unwrap_or_default();
            }
        }
        // Header values not remembered are gone: so are their names.
        for server in &mut settings.mcp_servers {
            server.header_names = server.headers.iter().map(|(n, _)| n.clone()).collect();
        }
        settings
    }

    /// Whether there is anything [`Settings::redact`] would take out.
    pub fn has_secrets(&self) -> bool {
        self.api_key.is_some()
            || !self.extra_headers.is_empty()
            || self.mcp_servers.iter().any(|s| !s.headers.is_empty())
    }

    /// `text` with the key and header values replaced by `[redacted]`.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        let secrets = self
            .api_key
            .iter()
            .chain(self.extra_headers.iter().map(|(_, v)| v))
            .chain(
                self.mcp_servers
                    .iter()
                    .flat_map(|s| s.headers.iter().map(|(_, v)| v)),
            );
        for secret in secrets {
            // Short values (such as "1") would redact ordinary words.
            if secret.chars().count() >= 8 {
                out = out.replace(secret.as_str(), "[redacted]");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch(v: Value) -> SettingsPatch {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_key_does_not_follow_a_new_origin_or_provider() {
        let s = Settings::default()
            .patched(
                patch(json!({"provider": "openai", "baseUrl": "https://api.example.com/v1", "model": "m",
                             "apiKey": "sk-secret-123", "extraHeaders": {"X-Org": "o1"}})),
                |_| true,
                |_| true,
            )
            .unwrap();
        // The same origin (another path, the default port written out): kept.
        let same = s
            .patched(
                patch(json!({"baseUrl": "https://API.example.com:443/v2"})),
                |_| true,
                |_| true,
            )
            .unwrap();
        assert_eq!(same.api_key.as_deref(), Some("sk-secret-123"));
        assert_eq!(same.extra_headers.len(), 1);
        // Another origin: dropped, headers too.
        for other in [
            "https://evil.example/v1",
            "http://api.example.com/v1",
            "https://api.example.com:8443/v1",
            "https://api.example.com@evil.example/v1",
        ] {
            let moved = s
                .patched(patch(json!({"baseUrl": other})), |_| true, |_| true)
                .unwrap();
            assert_eq!(moved.api_key, None, "{other}");
            assert!(moved.extra_headers.is_empty(), "{other}");
            assert!(moved.provider_config().unwrap().api_key.is_none());
        }
        // Another provider: dropped.
        let provider = s
            .patched(patch(json!({"provider": "anthropic"})), |_| true, |_| true)
            .unwrap();
        assert_eq!(provider.api_key, None);
        // Unless the same change supplies them.
        let supplied = s
            .patched(
                patch(json!({"baseUrl": "https://other.example/v1", "apiKey": "sk-new-456"})),
                |_| true,
                |_| true,
            )
            .unwrap();
        assert_eq!(supplied.api_key.as_deref(), Some("sk-new-456"));
        assert!(supplied.extra_headers.is_empty());
        assert_eq!(url_origin("HTTP://Host:80/x?y"), Some("http://host".into()));
        assert_eq!(url_origin("ftp://host"), None);
    }

    #[test]
    fn a_patch_changes_only_what_it_names_and_bad_input_changes_nothing() {
        let s = Settings::default()
            .patched(
                patch(json!({"provider": "openai", "baseUrl": "http://x/v1", "model": "m", "apiKey": "sk-secret-123"})),
                |_| true,
                |_| true,
            )
            .unwrap();
        assert_eq!(
            s.provider_config().unwrap().api_key.as_deref(),
            Some("sk-secret-123")
        );
        let kept = s
            .patched(patch(json!({"model": "n"})), |_| true, |_| true)
            .unwrap();
        assert_eq!(kept.api_key.as_deref(), Some("sk-secret-123"));
        let cleared = s
            .patched(patch(json!({"apiKey": null})), |_| true, |_| true)
            .unwrap();
        assert_eq!(cleared.api_key, None);
        for bad in [
            json!({"provider": "cohere"}),
            json!({"baseUrl": "ftp://x"}),
            json!({"maxSteps": 0}),
            json!({"temperature": 9}),
            json!({"apiKey": 5}),
            json!({"extraHeaders": {"X-A": "a\nb"}}),
            json!({"approvalPolicies": {"scene_update_summary": "lax"}}),
            json!({"recentUpdateWindowMs": 100_000_000u64}),
            json!({"mtlEndpoint": "libre"}),
            json!({"idleThinking": {"afterMs": 10}}),
            json!({"idleThinking": {"maxCallsPerDay": 5000}}),
            json!({"toolTimeoutsMs": {"research_url": 10}}),
            json!({"researchProxy": "http://proxy.test/"}),
            json!({"researchProxy": "file:///{url}"}),
            json!({"researchPerRun": 0}),
        ] {
            assert!(
                s.patched(patch(bad.clone()), |_| true, |_| true).is_err(),
                "{bad}"
            );
        }
        assert!(serde_json::from_value::<SettingsPatch>(json!({"baseURL": "x"})).is_err());
        for bad in [
            json!({"idleThinking": {"often": true}}),
            json!({"bedsidePlan": "yes"}),
        ] {
            assert!(serde_json::from_value::<SettingsPatch>(bad).is_err());
        }
        let idle = s
            .patched(
                patch(json!({"idleThinking": {"afterMs": 5000}, "bedsidePlan": true})),
                |_| true,
                |_| true,
            )
            .unwrap();
        assert_eq!(idle.idle_thinking.after_ms, 5000);
        assert!(idle.idle_thinking.enabled && idle.bedside_plan);
        assert_eq!(idle.idle_thinking.max_calls_per_day, 20);
        assert!(s
            .patched(patch(json!({"toolset": "nope"})), |_| false, |_| true)
            .is_err());
        assert!(s
            .patched(
                patch(json!({"approvalPolicies": {"nope": "strict"}})),
                |_| true,
                |_| false
            )
            .is_err());
        let strict = s
            .patched(
                patch(json!({"approvalPolicies": {"scene_update_summary": "strict"}, "recentUpdateWindowMs": 5000})),
                |_| true,
                |_| true,
            )
            .unwrap();
        let policies = strict.policies();
        assert_eq!(
            policies.mode("scene_update_summary"),
            crate::policy::Mode::Strict
        );
        assert_eq!(policies.window_ms, 5000);
        let back = strict
            .patched(
                patch(json!({"approvalPolicies": {"scene_update_summary": null}})),
                |_| true,
                |_| true,
            )
            .unwrap();
        assert_eq!(
            back.policies().mode("scene_update_summary"),
            crate::policy::Mode::Standard
        );
    }

    #[test]
    fn mcp_header_values_are_kept_like_the_key() {
        let s = Settings::default()
            .patched(
                patch(
                    json!({"mcpServers": [{"name": "style", "url": "https://tools.example/mcp",
                             "headers": {"Authorization": "Bearer mcp-secret-77"}}]}),
                ),
                |_| true,
                |_| true,
            )
            .unwrap();
        let public = crate::error::to_json(&s.public()).to_string();
        assert!(!public.contains("mcp-secret"), "{public}");
        assert!(
            public.contains("\"headerNames\":[\"Authorization\"]"),
            "{public}"
        );
        // Not remembered: gone after a reload, names too.
        let reloaded = Settings::from_record(&s.record());
        assert!(!s.record().to_string().contains("mcp-secret"));
        assert!(reloaded.mcp_servers[0].headers.is_empty());
        assert!(reloaded.mcp_servers[0].header_names.is_empty());
        // Remembered: back as they were.
        let remembered = s
            .patched(patch(json!({"rememberKey": true})), |_| true, |_| true)
            .unwrap();
        assert_eq!(Settings::from_record(&remembered.record()), remembered);
        assert!(s.has_secrets());
        assert_eq!(
            s.redact("401 for Bearer mcp-secret-77"),
            "401 for [redacted]"
        );
    }

    #[test]
    fn the_key_is_never_public_and_stored_only_on_opt_in() {
        let s = Settings::default()
            .patched(
                patch(json!({"provider": "anthropic", "baseUrl": "https://a", "model": "c",
                             "apiKey": "sk-secret-123", "extraHeaders": {"X-Token": "tok-secret-9"}})),
                |_| true,
                |_| true,
            )
            .unwrap();
        let public = crate::error::to_json(&s.public()).to_string();
        assert!(
            !public.contains("sk-secret") && !public.contains("tok-secret"),
            "{public}"
        );
        assert!(public.contains("\"hasKey\":true"));
        let record = s.record().to_string();
        assert!(
            !record.contains("sk-secret") && !record.contains("tok-secret"),
            "{record}"
        );
        assert_eq!(Settings::from_record(&s.record()).api_key, None);
        let remembered = s
            .patched(patch(json!({"rememberKey": true})), |_| true, |_| true)
            .unwrap();
        let back = Settings::from_record(&remembered.record());
        assert_eq!(back, remembered);
        assert_eq!(
            s.redact("bad key sk-secret-123 (tok-secret-9)"),
            "bad key [redacted] ([redacted])"
        );
    }
}
