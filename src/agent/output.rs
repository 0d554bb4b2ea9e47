//! Structured output: a run that must end with a JSON object valid against a schema.
//!
//! The answer is asked for in the provider's own way where it has one (OpenAI's
//! `response_format`, Gemini's `responseSchema` when no tools are offered, a local model's
//! grammar), else as a call of an output tool named after the format ([`definition`]). Either
//! way it is checked against the schema; an invalid answer is sent back with what was wrong
//! once, and a second invalid one ends the run (`invalid_output`).

use serde_json::Value;

use crate::commands::Category;
use crate::llm::OutputFormat;
use crate::tools::validate::check_args;
use crate::tools::ToolDefinition;

/// The output tool of a format: the model calls it with its answer as the arguments.
pub fn definition(format: &OutputFormat) -> ToolDefinition {
    ToolDefinition {
        name: format.name.clone().into(),
        description: "Give your final answer: call this once you have it, with the answer as its arguments. It ends your task.".into(),
        category: Category::Knowledge,
        reversible: false,
        read_only: true,
        asynchronous: false,
        parameters: format.schema.clone(),
    }
}

/// Whether `value` is a JSON object valid against `schema`, or what is wrong with it.
pub fn check(schema: &Value, value: &Value) -> Result<(), String> {
    let object = value
        .as_object()
        .ok_or_else(|| format!("the answer must be a JSON object, got {value}"))?;
    check_args(schema, object).map_err(|e| e.message)
}

/// The structured answer a model wrote as text (its JSON object, fences and words around it
/// left out), checked against `schema`.
pub fn from_text(schema: &Value, text: &str) -> Result<Value, String> {
    let start = text.find('{');
    let end = text.rfind('}');
    let json = match (start, end) {
        (Some(start), Some(end)) if start < end => &text[start..=end],
        _ => return Err("the answer holds no JSON object".into()),
    };
    let value: Value =
        serde_json::from_str(json).map_err(|e| format!("the answer is not valid JSON ({e})"))?;
    check(schema, &value)?;
    Ok(value)
}

/// What the model is told when its structured answer was not valid.
pub fn ask_again(reason: &str, tool: Option<&str>) -> String {
    match tool {
        Some(tool) => format!(
            "Your answer was not valid: {reason}. Give it again by calling {tool} with a valid answer."
        ),
        None => format!(
            "Your answer was not valid: {reason}. Answer again with only the JSON object, valid against the schema."
        ),
    }
}

/// Whether `name` may name an output format: 1 to 64 letters, digits, `_` or `-`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
