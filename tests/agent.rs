//! The agent loop against a scripted model, with tools running through a real session.
#![cfg(not(target_arch = "wasm32"))]

use std::cell::RefCell;

use draftsmith::agent::{
    run_agent, AbortSignal, AgentSpec, RunContext, RunEnd, RunEvent, RunOutcome,
};
use draftsmith::commands::Origin;
use draftsmith::llm::client::{
    CallOptions, RecordingSleeper, Scripted, ScriptedEnd, ScriptedTransport, Sleeper,
};
use draftsmith::llm::ToolCall;
use draftsmith::llm::{ProviderConfig, ProviderKind, RequestOptions, Role};
use draftsmith::project::{Chapter, Project};
use draftsmith::session::Session;
use draftsmith::tools::ToolRegistry;
use draftsmith::tools::ToolResult;
use draftsmith::{ManualClock, SequentialIds};
use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use serde_json::{json, Value};

const TEXT: &str = "Mara climbed the stair. The lamp was dark.";

fn provider() -> ProviderConfig {
    ProviderConfig {
        kind: ProviderKind::Openai,
        base_url: "http://model.test/v1".into(),
        model: "m".into(),
        api_key: None,
        extra_headers: vec![],
        local: Default::default(),
    }
}

fn sse(chunks: &[Value]) -> String {
    let mut out: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

/// A model answer that calls one tool.
fn calls(id: &str, name: &str, args: Value, tokens: u64) -> Scripted {
    Scripted::sse(
        &sse(&[
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": args.to_string()}}]}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": tokens, "completion_tokens": 10}}),
        ]),
        40,
    )
}

/// A final text answer.
fn says(text: &str) -> Scripted {
    Scripted::sse(
        &sse(&[
            json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ]),
        40,
    )
}

/// When a test aborts its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Abort {
    Never,
    /// When the first text delta arrives (mid-stream).
    OnFirstText,
    /// While the n-th tool call (from 1) runs.
    DuringTool(usize),
}

/// A sleeper that never wakes: no timeout can fire.
struct NeverSleeper;

impl Sleeper for NeverSleeper {
    fn sleep(&self, _ms: u64) -> LocalBoxFuture<'static, ()> {
        Box::pin(futures::future::pending())
    }
}

struct Fixture {
    session: RefCell<Session>,
    registry: ToolRegistry,
    clock: ManualClock,
    ids: SequentialIds,
}

impl Fixture {
    fn new() -> Self {
        Self {
            session: RefCell::new(Session::new(Project::new(
                "p",
                "P",
                vec![Chapter::new("c1", "One", TEXT)],
            ))),
            registry: ToolRegistry::standard(),
            clock: ManualClock::new(1_000),
            ids: SequentialIds::new("id"),
        }
    }

    fn run(
        &self,
        spec: &AgentSpec,
        responses: Vec<Scripted>,
    ) -> (RunOutcome, Vec<RunEvent>, usize, ScriptedTransport) {
        self.run_with(spec, responses, &RecordingSleeper::default(), Abort::Never)
    }

    fn run_with(
        &self,
        spec: &AgentSpec,
        responses: Vec<Scripted>,
        sleeper: &dyn Sleeper,
        abort_when: Abort,
    ) -> (RunOutcome, Vec<RunEvent>, usize, ScriptedTransport) {
        let transport = ScriptedTransport::new(responses);
        let tools = self
            .registry
            .toolset(spec.toolset.as_deref().unwrap_or("all"))
            .unwrap();
        let tree = draftsmith::agent::TreeState::default();
        let mut events = Vec::new();
        let executed = std::cell::Cell::new(0);
        let origin = Origin::Agent(spec.name.clone());
        let abort = AbortSignal::new();
        self.session
            .borrow_mut()
            .history
            .begin_group(origin.clone(), &self.ids);
        let mut execute = |call: &ToolCall| -> LocalBoxFuture<'_, ToolResult> {
            executed.set(executed.get() + 1);
            if abort_when == Abort::DuringTool(executed.get()) {
                // The page aborts while this command runs: it still completes.
                abort.abort();
            }
            let call = draftsmith::session::ToolCall {
                id: Some(call.id.clone()),
                name: call.name.clone(),
                args: call.arguments.clone(),
            };
            let result = self
                .session
                .borrow_mut()
                .execute(&self.registry, call, origin.clone(), &self.clock, &self.ids)
                .result;
            Box::pin(async move { result })
        };
        let outcome = block_on(run_agent(
            spec,
            &tools,
            &provider(),
            CallOptions::default(),
            RequestOptions {
                stream: true,
                max_tokens: None,
                temperature: None,
                ..RequestOptions::default()
            },
            vec![],
            "Make the lamp lit.",
            "[AGENT MEMORY]\nBedside: keep the lamp motif.",
            RunContext {
                transport: &transport,
                sleeper,
                now_ms: &|| 1_000,
                jitter: &mut || 0.5,
                execute: &mut execute,
                on_event: &mut |e| {
                    if abort_when == Abort::OnFirstText && matches!(e, RunEvent::TextDelta { .. }) {
                        abort.abort();
                    }
                    events.push(e)
                },
                abort: &abort,
                tree: &tree,
                reply_tool: None,
                who_may_call: None,
                context: None,
            },
        ));
        self.session.borrow_mut().history.close_group();
        (outcome, events, executed.get(), transport)
    }

    fn text(&self) -> String {
        self.session
            .borrow()
            .project
            .chapter("c1")
            .unwrap()
            .text()
            .to_string()
    }
}

/// Every assistant tool call is followed by exactly one result for it, in order.
fn assert_valid_transcript(messages: &[draftsmith::llm::Message]) {
    assert_eq!(messages[0].role, Role::System);
    let mut pending: Vec<String> = Vec::new();
    for m in messages {
        match m.role {
            Role::Assistant => {
                assert!(pending.is_empty(), "results missing for {pending:?}");
                pending = m.tool_calls.iter().map(|c| c.id.clone()).collect();
            }
            Role::Tool => {
                let id = m.tool_call_id.clone().unwrap();
                assert_eq!(
                    pending.first(),
                    Some(&id),
                    "result out of order or duplicated"
                );
                pending.remove(0);
            }
            _ => assert!(pending.is_empty()),
        }
    }
    assert!(pending.is_empty(), "results missing for {pending:?}");
}

#[test]
fn a_run_navigates_then_edits_and_undo_reverts_the_turn_as_one_group() {
    let f = Fixture::new();
    let (outcome, events, executed, transport) = f.run(
        &AgentSpec::assistant(),
        vec![
            calls(
                "call_1",
                "navigate_to_text",
                json!({"query": "The lamp was dark."}),
                100,
            ),
            calls(
                "call_2",
                "update_manuscript",
                json!({"searchText": "The lamp was dark.", "replacementText": "The lamp was lit."}),
                120,
            ),
            says("Done: the lamp is lit."),
        ],
    );
    assert_eq!(outcome.end, RunEnd::Finished);
    assert_eq!((outcome.steps, executed), (3, 2));
    assert_eq!(outcome.text, "Done: the lamp is lit.");
    assert_eq!(f.text(), "Mara climbed the stair. The lamp was lit.");
    assert_eq!(outcome.usage.input_tokens, 220);
    assert_valid_transcript(&outcome.messages);
    assert!(
        outcome.messages[0].text.contains("[AGENT MEMORY]"),
        "memory in the system prompt"
    );
    // The second request carried the first call's result back to the model.
    let second: Value = serde_json::from_str(&transport.requests()[1].body).unwrap();
    let last = second["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (last["role"].clone(), last["tool_call_id"].clone()),
        (json!("tool"), json!("call_1"))
    );
    assert!(last["content"]
        .as_str()
        .unwrap()
        .contains("\"status\":\"success\""));
    // Events: proposed, started, finished for each call, one step event per model call.
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
            RunEvent::TextDelta { .. } => "text",
            RunEvent::ToolCallProposed { .. } => "proposed",
            RunEvent::ToolCallStarted { .. } => "started",
            RunEvent::ToolCallFinished { .. } => "finished",
            RunEvent::StepFinished { .. } => "step",
            RunEvent::Usage { .. } => "usage",
            _ => "other",
        })
        .filter(|k| *k != "usage")
        .collect();
    assert_eq!(
        kinds,
        [
            "proposed", "started", "finished", "step", "proposed", "started", "finished", "step",
            "text", "step"
        ]
    );
    // One undo group for the whole turn.
    let mut s = f.session.borrow_mut();
    assert_eq!(s.history.undo_groups(), 1);
    s.undo(None, Origin::User, &f.clock, &f.ids).unwrap();
    assert_eq!(s.project.chapter("c1").unwrap().text().to_string(), TEXT);
}

#[test]
fn runs_stop_at_max_steps_with_every_call_answered() {
    let f = Fixture::new();
    let spec = AgentSpec {
        max_steps: 3,
        ..AgentSpec::assistant()
    };
    let responses = (0..5)
        .map(|i| calls(&format!("c{i}"), "toggle_zen_mode", json!({}), 10))
        .collect();
    let (outcome, _, executed, transport) = f.run(&spec, responses);
    assert_eq!(outcome.end, RunEnd::MaxSteps);
    assert_eq!(
        (outcome.steps, executed, transport.requests().len()),
        (3, 3, 3)
    );
    assert_valid_transcript(&outcome.messages);
}

#[test]
fn invalid_and_unknown_calls_are_answered_but_never_executed() {
    let f = Fixture::new();
    let truncated = Scripted::sse(
        &sse(&[
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "cut", "type": "function", "function": {"name": "update_manuscript", "arguments": "{\"searchText\": \"The lamp"}}]}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}),
        ]),
        30,
    );
    let (outcome, events, executed, _) = f.run(
        &AgentSpec::assistant(),
        vec![
            truncated,
            calls("x", "launch_rockets", json!({}), 10),
            says("Sorry."),
        ],
    );
    assert_eq!(executed, 0);
    assert_eq!(f.text(), TEXT, "nothing changed");
    assert_eq!(outcome.end, RunEnd::Finished);
    assert_valid_transcript(&outcome.messages);
    let results: Vec<&str> = outcome
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.text.as_str())
        .collect();
    assert!(results[0].contains("not executed"), "{}", results[0]);
    assert!(
        results[1].contains("not one of your tools"),
        "{}",
        results[1]
    );
    assert!(
        events
            .iter()
            .filter(|e| matches!(e, RunEvent::ToolCallFinished { status, .. } if status.as_str() == "error"))
            .count()
            == 2
    );
}

#[test]
fn a_toolset_limits_what_the_agent_may_call() {
    let f = Fixture::new();
    let spec = AgentSpec {
        toolset: Some("voice_safe".into()),
        ..AgentSpec::assistant()
    };
    let (outcome, _, executed, transport) = f.run(
        &spec,
        vec![
            calls(
                "e",
                "update_manuscript",
                json!({"searchText": "dark", "replacementText": "lit"}),
                10,
            ),
            says("I may not edit."),
        ],
    );
    assert_eq!(executed, 0);
    assert_eq!(f.text(), TEXT);
    assert_eq!(outcome.end, RunEnd::Finished);
    let first: Value = serde_json::from_str(&transport.requests()[0].body).unwrap();
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(!offered.contains(&"update_manuscript") && offered.contains(&"navigate_to_text"));
}

#[test]
fn a_failed_model_call_ends_the_run_with_the_providers_message() {
    let f = Fixture::new();
    let (outcome, _, executed, _) = f.run(
        &AgentSpec::assistant(),
        vec![Scripted::json(
            401,
            r#"{"error": {"message": "Incorrect API key provided"}}"#,
        )],
    );
    assert_eq!(executed, 0);
    match outcome.end {
        RunEnd::Failed { message } => assert!(message.contains("Incorrect API key"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(outcome.messages.len(), 2, "system and user only");
}

#[test]
fn the_token_budget_stops_the_run() {
    let f = Fixture::new();
    let spec = AgentSpec {
        token_budget: Some(250),
        ..AgentSpec::assistant()
    };
    let responses = (0..5)
        .map(|i| calls(&format!("c{i}"), "toggle_zen_mode", json!({}), 100))
        .collect();
    let (outcome, _, _, _) = f.run(&spec, responses);
    assert_eq!(outcome.end, RunEnd::BudgetSpent);
    assert_eq!(outcome.steps, 3, "110 + 110 < 250, then 330 >= 250");
    assert_valid_transcript(&outcome.messages);
}

#[test]
fn an_abort_mid_stream_stops_at_once_and_changes_nothing() {
    let f = Fixture::new();
    // Text arrives, then the stream stalls forever (and no timeout can fire): only the abort
    // can end this run.
    let stalled = Scripted::sse(
        &format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": {"content": "Let me"}, "finish_reason": null}]})
        ),
        40,
    )
    .ending(ScriptedEnd::Stall);
    let (outcome, events, executed, _) = f.run_with(
        &AgentSpec::assistant(),
        vec![stalled],
        &NeverSleeper,
        Abort::OnFirstText,
    );
    assert_eq!(outcome.end, RunEnd::Aborted);
    assert_eq!(executed, 0);
    assert_eq!(f.text(), TEXT);
    assert!(matches!(events[0], RunEvent::TextDelta { .. }));
    assert_valid_transcript(&outcome.messages);
}

#[test]
fn an_abort_mid_tool_lets_the_command_finish_and_runs_nothing_after_it() {
    let f = Fixture::new();
    // One answer with two parallel calls: the abort arrives while the first one runs.
    let two = Scripted::sse(
        &sse(&[
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "id": "a", "type": "function", "function": {"name": "update_manuscript", "arguments": json!({"searchText": "dark", "replacementText": "lit"}).to_string()}},
                {"index": 1, "id": "b", "type": "function", "function": {"name": "update_manuscript", "arguments": json!({"searchText": "Mara", "replacementText": "Ines"}).to_string()}}
            ]}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]),
        64,
    );
    let (outcome, events, executed, transport) = f.run_with(
        &AgentSpec::assistant(),
        vec![two, says("never asked")],
        &RecordingSleeper::default(),
        Abort::DuringTool(1),
    );
    assert_eq!(outcome.end, RunEnd::Aborted);
    assert_eq!(executed, 1, "the second call never ran");
    assert_eq!(
        f.text(),
        "Mara climbed the stair. The lamp was lit.",
        "the first command is whole"
    );
    assert_eq!(
        transport.requests().len(),
        1,
        "no model call after the abort"
    );
    assert_valid_transcript(&outcome.messages);
    let statuses: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolCallFinished { status, .. } => Some(status.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(statuses, ["success", "aborted"]);
    // Undo still takes the aborted turn back as one group.
    let mut s = f.session.borrow_mut();
    s.undo(None, Origin::User, &f.clock, &f.ids).unwrap();
    assert_eq!(s.project.chapter("c1").unwrap().text().to_string(), TEXT);
}
