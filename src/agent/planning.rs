//! Self-planning: an agent whose spec sets `planning: true` gets two more tools,
//! `write_todos` (replace its to-do list) and `read_todos` (read it), and a line of its system
//! prompt saying how to use them (as rentl's TodoList middleware does).
//!
//! The list is the agent's own for one task: the core keeps it with the agent's node of the
//! run tree, saves it with a paused run (so it survives a reload), and at the end of a job's
//! unit in the unit's record; a chat run reports its root agent's list in its result. The
//! tools never touch the project.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use ts_rs::TS;

use crate::error::ToolError;
use crate::tools::{ToolDefinition, ToolResult};

/// The tool that replaces the list.
pub const WRITE_TODOS: &str = "write_todos";
/// The tool that reads the list.
pub const READ_TODOS: &str = "read_todos";

/// Most items on a list.
pub const MAX_TODOS: usize = 50;
/// The longest item, in chars.
pub const MAX_TODO_CHARS: usize = 500;

/// Where an item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One item of an agent's to-do list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct TodoItem {
    /// What to do.
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
}

/// The arguments of `write_todos`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteTodos {
    todos: Vec<TodoItem>,
}

/// What the system prompt of a planning agent adds.
pub const GUIDANCE: &str = "Planning: for a task of several steps, first write your plan with write_todos (each item's content and status: pending, in_progress or completed), keep exactly one item in_progress while you work on it, and write the whole list again as items are done (write_todos replaces the list). read_todos shows the list. Skip the list for a task of one or two steps.";

/// The two planning tools' definitions.
pub fn definitions() -> Vec<ToolDefinition> {
    let item = json!({
        "type": "object",
        "properties": {
            "content": {"type": "string", "description": "What to do, in one line."},
            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"], "description": "Where it stands."}
        },
        "required": ["content", "status"],
        "additionalProperties": false
    });
    vec![
        definition(
            WRITE_TODOS,
            "Replace your to-do list for this task with these items, in order (the whole list each time: items left out are dropped). Returns the list.",
            json!({
                "type": "object",
                "properties": {
                    "todos": {"type": "array", "items": item, "maxItems": MAX_TODOS, "description": "The whole list."}
                },
                "required": ["todos"],
                "additionalProperties": false
            }),
            false,
        ),
        definition(
            READ_TODOS,
            "Read your to-do list for this task.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            true,
        ),
    ]
}

fn definition(name: &str, description: &str, parameters: Value, read_only: bool) -> ToolDefinition {
    ToolDefinition {
        name: name.to_string().into(),
        description: description.to_string().into(),
        category: crate::commands::Category::Knowledge,
        reversible: false,
        read_only,
        asynchronous: false,
        parameters,
    }
}

/// Whether `tool` is a planning tool.
pub fn is_planning_tool(tool: &str) -> bool {
    tool == WRITE_TODOS || tool == READ_TODOS
}

/// Run planning tool `tool` with `args` on the agent's list `todos`. A call that is not valid
/// gets an error saying what would be, and leaves the list as it was.
pub fn run(tool: &str, args: &Value, todos: &mut Vec<TodoItem>) -> ToolResult {
    match apply(tool, args, todos) {
        Ok(data) => ToolResult::success(data, Default::default()),
        Err(error) => ToolResult::error(&error, Default::default()),
    }
}

fn apply(tool: &str, args: &Value, todos: &mut Vec<TodoItem>) -> Result<Value, ToolError> {
    if tool == READ_TODOS {
        return Ok(view(todos));
    }
    let WriteTodos { todos: items } = serde_json::from_value(args.clone()).map_err(|e| {
        ToolError::invalid_args(format!(
            "write_todos takes {{todos: [{{content, status}}]}} with status pending, in_progress or completed: {e}"
        ))
    })?;
    if items.len() > MAX_TODOS {
        return Err(ToolError::invalid_args(format!(
            "a to-do list holds at most {MAX_TODOS} items; merge some"
        )));
    }
    for (i, item) in items.iter().enumerate() {
        if item.content.trim().is_empty() {
            return Err(ToolError::invalid_args(format!(
                "item {} has no content; say what to do",
                i + 1
            )));
        }
        if item.content.chars().count() > MAX_TODO_CHARS {
            return Err(ToolError::invalid_args(format!(
                "item {} is longer than {MAX_TODO_CHARS} characters; shorten it",
                i + 1
            )));
        }
    }
    *todos = items;
    Ok(view(todos))
}

/// The list as a result shows it, with a count per status.
fn view(todos: &[TodoItem]) -> Value {
    let count = |s: TodoStatus| todos.iter().filter(|t| t.status == s).count();
    json!({
        "todos": todos,
        "pending": count(TodoStatus::Pending),
        "in_progress": count(TodoStatus::InProgress),
        "completed": count(TodoStatus::Completed),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_replaces_the_list_and_a_bad_call_leaves_it() {
        let mut todos = Vec::new();
        let r = run(
            WRITE_TODOS,
            &json!({"todos": [{"content": "Read the scene", "status": "in_progress"}, {"content": "Summarize", "status": "pending"}]}),
            &mut todos,
        );
        assert!(r.is_success());
        assert_eq!(r.data["pending"], 1);
        assert_eq!(todos.len(), 2);
        for bad in [
            json!({"todos": [{"content": "x", "status": "doing"}]}),
            json!({"todos": [{"content": " ", "status": "pending"}]}),
            json!({"items": []}),
        ] {
            let r = run(WRITE_TODOS, &bad, &mut todos);
            assert!(!r.is_success(), "{bad}");
            assert_eq!(r.data["code"], "invalid_args");
            assert_eq!(todos.len(), 2, "{bad}");
        }
        let r = run(READ_TODOS, &json!({}), &mut todos);
        assert_eq!(r.data["todos"][0]["status"], "in_progress");
    }
}
