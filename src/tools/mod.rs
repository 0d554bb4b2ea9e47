//! Tools: what an agent (or the page) can call. Each tool is a typed argument struct (its
//! JSON Schema is generated with schemars), a description, a category and a [`Command`]
//! that runs through the one edit path. Reads are tools too; they make no edits.
//!
//! - [`ToolSpec`] declares a tool; [`ToolRegistry::add`] registers it as a
//!   [`ToolDefinition`] (for the model) and a [`CommandMeta`] (for the executor).
//! - Toolsets ([`ALL`], [`VOICE_SAFE`], [`QUICK`], [`FILES`], or custom ones) select what an
//!   agent sees.
//! - [`ToolRegistry::catalog`] exports definitions in the OpenAI, Anthropic and Gemini
//!   formats ([`schema`]).
//! - Every call returns one [`ToolResult`]: `{status, data, meta}`.
//!
//! Tool families live one per file: [`reading`], [`navigation`], [`editing`], [`analysis`],
//! [`ui`], [`memory`], [`generation`] (the model-backed tools, run in two phases by the
//! core), [`bible`], [`campaign`] (a role-playing campaign's game state, kept in the bible),
//! [`files`] (the `data/` file view: `read_file`, `write_file`,
//! `edit_file`, `list_files`, `search_code`, every path through the sandbox of
//! [`crate::files::path`]), [`research`] (`research_url`, `search_research`: web pages read
//! for the project, run by the core).

pub mod analysis;
pub mod args;
pub mod bible;
pub mod campaign;
pub mod command;
pub mod editing;
pub mod files;
pub mod generation;
pub mod memory;
pub mod navigation;
pub mod reading;
pub mod research;
pub mod schema;
pub mod ui;
pub mod validate;

use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use serde_json::Value;
use ts_rs::TS;

pub use self::command::{Command, CommandFactory, CommandMeta, CommandRegistry};
use crate::commands::Category;
pub use crate::error::ToolError;
pub use crate::session::result::{ResultMeta, Status, ToolResult};
use crate::session::{CommandSource, EditContext};

pub use self::schema::CatalogFormat;

/// The toolset with every tool.
pub const ALL: &str = "all";
/// Tools safe for a voice assistant: reading, navigation, knowledge, analysis and ui, but
/// nothing that edits the manuscript and no highlights.
pub const VOICE_SAFE: &str = "voice_safe";
/// A small, fast toolset: reading, navigation, one core edit (`update_manuscript`) and basic
/// lookups.
pub const QUICK: &str = "quick";
/// The `data/` file tools alone (`read_file`, `write_file`, `edit_file`, `list_files`,
/// `search_code`): for an agent that works through files, such as an Architect that keeps
/// outlines and plans under `plans/`.
pub const FILES: &str = "files";

/// The longest string argument accepted, in bytes (4 MiB). Longer ones are rejected.
pub const MAX_STRING_ARG_BYTES: usize = 4 * 1024 * 1024;

/// Declares a tool: its name, category, description, arguments and behaviour.
pub trait ToolSpec: 'static {
    /// Typed arguments; their JSON Schema is what the model sees.
    type Args: ToolArgs + JsonSchema + 'static;
    /// Stable name (approval wiring keys off it).
    const NAME: &'static str;
    /// Category.
    const CATEGORY: Category;
    /// What the tool does and when to use it, for the model.
    const DESCRIPTION: &'static str;
    /// Whether its edits are undoable (false for reads and ui state).
    const REVERSIBLE: bool;
    /// True for tools that change nothing of the project's session (manuscript, story
    /// bible, memory, files, editor state); the core then skips preparing a save of what
    /// they might change. (`research_url` is one: it only keeps a research note, which the
    /// core stores apart, one per address.)
    const READ_ONLY: bool = false;
    /// True for tools the core runs itself with an asynchronous step (a network call) under
    /// a timeout (`toolTimeoutsMs`, default [`crate::settings::DEFAULT_TOOL_TIMEOUT_MS`]):
    /// on timeout the step is dropped (cancelled) and the call's result is a `timeout`
    /// error. Calls of tools that are both asynchronous and read-only, made in one model
    /// step, run concurrently.
    const ASYNC: bool = false;
    /// Run with parsed arguments through the edit context.
    fn run(args: Self::Args, cx: &mut EditContext<'_>) -> Result<Value, ToolError>;
}

struct TypedCommand<T: ToolSpec> {
    args: T::Args,
    tool: PhantomData<T>,
}

impl<T: ToolSpec> Command for TypedCommand<T> {
    fn execute(self: Box<Self>, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        T::run(self.args, cx)
    }
}

fn build_command<T: ToolSpec>(_: &str, args: Value) -> Result<Box<dyn Command>, ToolError> {
    let args = parse_args::<T::Args>(args)?;
    Ok(Box::new(TypedCommand::<T> {
        args,
        tool: PhantomData,
    }))
}

/// A tool's argument type, read from the call's arguments object through serde's
/// `Deserialize`.
pub trait ToolArgs: Sized {
    /// Read the arguments, with serde's messages.
    fn from_args(args: Value) -> Result<Self, serde_json::Error>;
}

impl<T: serde::de::DeserializeOwned> ToolArgs for T {
    fn from_args(args: Value) -> Result<Self, serde_json::Error> {
        serde_json::from_value(args)
    }
}

/// Parse tool arguments into their typed struct. `null` counts as `{}`; anything but an
/// object is rejected. The executor has already checked them against the tool's schema
/// ([`validate`]), so a failure here is rare; its message still names what was wrong.
pub fn parse_args<T: ToolArgs>(args: Value) -> Result<T, ToolError> {
    let args = object_args(args)?;
    T::from_args(Value::Object(args)).map_err(args_error)
}

/// [`parse_args`]'s error (one copy for every argument type).
#[inline(never)]
fn args_error(err: serde_json::Error) -> ToolError {
    ToolError::invalid_args(format!(
        "invalid arguments: {}",
        plain_types(&err.to_string())
    ))
}

/// The arguments as an object: `null` is `{}`, other non-objects and oversized strings are
/// rejected.
pub fn object_args(args: Value) -> Result<serde_json::Map<String, Value>, ToolError> {
    let mut map = match args {
        Value::Null => serde_json::Map::new(),
        Value::Object(map) => map,
        other => {
            return Err(ToolError::invalid_args(format!(
                "arguments must be a JSON object, got {}",
                crate::names::json_kind(&other)
            )))
        }
    };
    // Models often send a chapter number as a number; chapter references are strings.
    if let Some(chapter) = map.get_mut("chapter") {
        if let Some(n) = chapter.as_u64() {
            *chapter = Value::String(n.to_string());
        }
    }
    if let Some(path) = map.iter().find_map(|(k, v)| oversized_string(v, k)) {
        return Err(ToolError::invalid_args(format!(
            "argument '{path}' is longer than {MAX_STRING_ARG_BYTES} bytes"
        )));
    }
    Ok(map)
}

/// Say "a non-negative integer" rather than Rust's "usize" in messages a model reads.
pub(crate) fn plain_types(message: &str) -> String {
    let mut out = message.to_string();
    for (rust, plain) in [
        ("expected usize", "expected a non-negative integer"),
        ("expected u64", "expected a non-negative integer"),
        ("expected u32", "expected a non-negative integer"),
        ("expected i64", "expected an integer"),
        ("expected i32", "expected an integer"),
        ("expected f64", "expected a number"),
    ] {
        out = out.replace(rust, plain);
    }
    out
}

fn oversized_string(value: &Value, path: &str) -> Option<String> {
    match value {
        Value::String(s) if s.len() > MAX_STRING_ARG_BYTES => Some(path.to_string()),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            let p = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            oversized_string(v, &p)
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| oversized_string(v, &format!("{path}[{i}]"))),
        _ => None,
    }
}

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(optional_fields)]
pub struct ToolDefinition {
    /// Name (generated tools, such as an agent's routing tools, own theirs).
    pub name: std::borrow::Cow<'static, str>,
    /// Description.
    pub description: std::borrow::Cow<'static, str>,
    /// Category.
    pub category: Category,
    /// Whether its edits are undoable.
    pub reversible: bool,
    /// Whether it changes nothing of the project's session (see [`ToolSpec::READ_ONLY`]).
    pub read_only: bool,
    /// Whether the core runs it asynchronously, under a timeout (see [`ToolSpec::ASYNC`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>")]
    pub asynchronous: bool,
    /// JSON Schema of the arguments (an object schema, provider-neutral).
    pub parameters: Value,
}

/// The name of a registered tool (registered tools are built in: their names are static;
/// generated tools, such as an agent's routing tools, are never registered).
fn builtin_name(d: &ToolDefinition) -> &'static str {
    match d.name {
        std::borrow::Cow::Borrowed(name) => name,
        std::borrow::Cow::Owned(_) => "",
    }
}

/// Tool definitions, their commands, and named toolsets.
#[derive(Debug, Clone, Default)]
pub struct ToolRegistry {
    commands: CommandRegistry,
    definitions: Vec<ToolDefinition>,
    /// By name: a few (the built-in ones and the writer's).
    toolsets: std::collections::BTreeMap<String, Vec<&'static str>>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every built-in tool, with the `all`, `voice_safe`, `quick` and `files` toolsets (the
    /// file tools' reads are knowledge tools, so `voice_safe` has them; `quick` does not).
    /// `voice_safe` holds no tool that waits on the network (research) or on a model
    /// (generation, `run_analysis`' reading).
    pub fn standard() -> Self {
        let mut registry = Self::new();
        navigation::register(&mut registry);
        reading::register(&mut registry);
        editing::register(&mut registry);
        analysis::register(&mut registry);
        ui::register(&mut registry);
        memory::register(&mut registry);
        generation::register(&mut registry);
        bible::register(&mut registry);
        campaign::register(&mut registry);
        files::register(&mut registry);
        research::register(&mut registry);
        registry.define_builtin_toolsets();
        registry
    }

    fn define_builtin_toolsets(&mut self) {
        let all: Vec<&'static str> = self.definitions.iter().map(builtin_name).collect();
        let voice_safe: Vec<&'static str> = self
            .definitions
            .iter()
            .filter(|d| {
                matches!(
                    d.category,
                    Category::Navigation | Category::Knowledge | Category::Analysis | Category::Ui
                ) && d.name != "highlight_text"
                    && !d.asynchronous
                    && d.name != "run_analysis"
            })
            .map(builtin_name)
            .collect();
        let quick: Vec<&'static str> = self
            .definitions
            .iter()
            .filter(|d| {
                d.category == Category::Navigation
                    || reading::TOOLS.contains(&builtin_name(d))
                    || d.name == "update_manuscript"
                    || matches!(builtin_name(d), "query_lore" | "get_character_info")
            })
            .map(builtin_name)
            .collect();
        self.toolsets.insert(ALL.into(), all);
        self.toolsets.insert(VOICE_SAFE.into(), voice_safe);
        self.toolsets.insert(QUICK.into(), quick);
        self.toolsets
            .insert(FILES.into(), files::FILE_TOOLS.to_vec());
    }

    /// Register a tool. Natively its parameters schema is generated from `T::Args`; in the
    /// wasm build it is read from the embedded `src/tools/schemas.json` (generated natively,
    /// kept current by the `schemas` test), which keeps the schema generator out of the wasm.
    pub fn add<T: ToolSpec>(&mut self) {
        self.add_with_factory::<T>(build_command::<T>);
    }

    /// Register a tool whose command is built by `factory` instead of from `T::run` (the
    /// generation tools use this: their synchronous command only says it needs a model).
    pub fn add_with_factory<T: ToolSpec>(&mut self, factory: CommandFactory) {
        #[cfg(not(target_arch = "wasm32"))]
        let parameters = schema::parameters_schema::<T::Args>();
        #[cfg(target_arch = "wasm32")]
        let parameters = schema::embedded_parameters(T::NAME);
        let definition = ToolDefinition {
            name: T::NAME.into(),
            description: T::DESCRIPTION.into(),
            category: T::CATEGORY,
            reversible: T::REVERSIBLE,
            read_only: T::READ_ONLY,
            asynchronous: T::ASYNC,
            parameters,
        };
        self.add_definition(definition, factory);
    }

    /// Register a built-in tool (static name and description) from its definition and the
    /// factory of its commands. The story-bible tools, declared as data ([`bible::TOOLS`]),
    /// are registered this way.
    pub fn add_definition(&mut self, definition: ToolDefinition, factory: CommandFactory) {
        let name = builtin_name(&definition);
        let description = match definition.description {
            std::borrow::Cow::Borrowed(d) => d,
            std::borrow::Cow::Owned(_) => "",
        };
        self.definitions.retain(|d| d.name != name);
        self.commands.register(CommandMeta {
            name,
            category: definition.category,
            description,
            reversible: definition.reversible,
            factory,
        });
        self.definitions.push(definition);
        if let Some(all) = self.toolsets.get_mut(ALL) {
            if !all.contains(&name) {
                all.push(name);
            }
        }
    }

    /// Check a call before anything runs: the tool exists (or the error names the closest
    /// ones), the arguments are an object without oversized strings, and they fit the schema
    /// the model saw. Returns the command's metadata and the arguments.
    pub fn validate_call(
        &self,
        name: &str,
        args: Value,
    ) -> Result<(&CommandMeta, serde_json::Map<String, Value>), ToolError> {
        let (Some(meta), Some(definition)) = (self.commands.get(name), self.definition(name))
        else {
            return Err(self.unknown_tool(name));
        };
        let mut args = object_args(args)?;
        if let Some(declared) = bible::declared_args(name) {
            args::declared_names(declared, &mut args);
        }
        validate::check_args(&definition.parameters, &args)?;
        Ok((meta, args))
    }

    /// The command registry.
    pub fn commands(&self) -> &CommandRegistry {
        &self.commands
    }

    /// Every definition, in registration order.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.definitions
    }

    /// The definition named `name`.
    pub fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.definitions.iter().find(|d| d.name == name)
    }

    /// Names of every tool.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.definitions.iter().map(builtin_name)
    }

    /// Error for an unknown tool, naming the closest tool names.
    pub fn unknown_tool(&self, name: &str) -> ToolError {
        let close = crate::names::closest(name, self.names(), 3);
        let shown: String = name.chars().take(80).collect();
        let message = if close.is_empty() {
            format!(
                "unknown tool '{shown}'; available tools: {}",
                self.names().collect::<Vec<_>>().join(", ")
            )
        } else {
            format!(
                "unknown tool '{shown}'; did you mean {}?",
                close
                    .iter()
                    .map(|c| format!("'{c}'"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            )
        };
        ToolError::new("unknown_tool", message).with_details(json!({ "suggestions": close }))
    }

    /// Define (or replace) a custom toolset. Every name must be a registered tool.
    pub fn define_toolset(&mut self, name: &str, tools: &[&str]) -> Result<(), ToolError> {
        if name.trim().is_empty() {
            return Err(ToolError::invalid_args("a toolset needs a name"));
        }
        let mut names = Vec::with_capacity(tools.len());
        for tool in tools {
            match self.definition(tool) {
                Some(def) => names.push(builtin_name(def)),
                None => return Err(self.unknown_tool(tool)),
            }
        }
        self.toolsets.insert(name.to_string(), names);
        Ok(())
    }

    /// Names of the toolsets.
    pub fn toolset_names(&self) -> impl Iterator<Item = &str> {
        self.toolsets.keys().map(String::as_str)
    }

    /// The definitions in a toolset, in registration order.
    pub fn toolset(&self, name: &str) -> Result<Vec<&ToolDefinition>, ToolError> {
        let names = self.toolsets.get(name).ok_or_else(|| {
            ToolError::not_found(format!(
                "no toolset '{name}'{}",
                crate::names::did_you_mean(name, self.toolset_names())
            ))
        })?;
        Ok(self
            .definitions
            .iter()
            .filter(|d| names.contains(&builtin_name(d)))
            .collect())
    }

    /// The catalog of a toolset in a provider's format.
    pub fn catalog(&self, format: CatalogFormat, toolset: &str) -> Result<Value, ToolError> {
        Ok(schema::catalog(format, &self.toolset(toolset)?))
    }
}

/// The session builds a tool call's command through the registry: the call is validated
/// ([`ToolRegistry::validate_call`]), then the tool's factory builds the typed command.
impl CommandSource for ToolRegistry {
    fn command(&self, name: &str, args: Value) -> Result<Box<dyn Command>, ToolError> {
        let (meta, args) = self.validate_call(name, args)?;
        (meta.factory)(meta.name, Value::Object(args))
    }
}

impl From<crate::files::path::SecurityError> for ToolError {
    fn from(error: crate::files::path::SecurityError) -> Self {
        ToolError::new("security", error.to_string())
            .with_details(json!({"error": "SecurityError", "rule": error.rule.name()}))
    }
}

impl From<crate::bible::BibleError> for ToolError {
    fn from(error: crate::bible::BibleError) -> Self {
        ToolError::new(error.code(), error.to_string())
    }
}
