//! A session on its own (no core, no store) with the standard tools, a manual clock at
//! 1,000 ms and sequential ids: the harness the tool tests share. A test file names it
//! `type T = Harness;` and adds its own helpers in an `impl Harness` block.

use draftsmith::commands::Origin;
use draftsmith::project::{Chapter, Project};
use draftsmith::session::{Outcome, Session, ToolCall};
use draftsmith::tools::ToolRegistry;
use draftsmith::{ManualClock, SequentialIds};
use serde_json::Value;

pub struct Harness {
    pub s: Session,
    pub registry: ToolRegistry,
    pub clock: ManualClock,
    pub ids: SequentialIds,
}

impl Harness {
    /// A project `p` named `name` with these chapters (the first one active).
    pub fn project(name: &str, chapters: Vec<Chapter>) -> Self {
        Self {
            s: Session::new(Project::new("p", name, chapters)),
            registry: ToolRegistry::standard(),
            clock: ManualClock::new(1_000),
            ids: SequentialIds::new("id"),
        }
    }

    /// Execute one tool call through the session's edit path.
    pub fn run_call(&mut self, origin: Origin, call_id: &str, tool: &str, args: Value) -> Outcome {
        self.s.execute(
            &self.registry,
            ToolCall {
                id: Some(call_id.into()),
                name: tool.into(),
                args,
            },
            origin,
            &self.clock,
            &self.ids,
        )
    }

    /// [`Harness::run_call`]'s result as JSON.
    pub fn result_of(&mut self, origin: Origin, call_id: &str, tool: &str, args: Value) -> Value {
        serde_json::to_value(&self.run_call(origin, call_id, tool, args).result).unwrap()
    }
}
