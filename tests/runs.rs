//! Agent runs through the worker protocol: settings, `run`, `abort_run`, events, undo, and
//! the API key kept out of everything the page or the store sees.
#![cfg(not(target_arch = "wasm32"))]

use std::rc::Rc;

use draftsmith::llm::client::{Scripted, ScriptedEnd};
use draftsmith::store::{MemoryStore, Store, Table};
use futures::executor::block_on;
use futures::future;
use serde_json::{json, Value};

mod common;
use common::page::*;

#[test]
fn a_run_without_a_model_says_so_and_changes_nothing() {
    let page = Page::new(vec![]);
    page.project();
    let (code, message) = page.err("run", json!({"prompt": "Make the lamp lit."}));
    assert_eq!(code, "no_model");
    assert!(message.contains("settings"), "{message}");
    assert_eq!(page.text(), TEXT);
    assert!(page.transport.0.requests().is_empty());
}

#[test]
fn a_run_navigates_edits_streams_events_and_undo_reverts_the_turn() {
    let page = Page::new(vec![
        calls(
            "call_1",
            "navigate_to_text",
            json!({"query": "The lamp was dark."}),
        ),
        calls(
            "call_2",
            "update_manuscript",
            json!({"searchText": "The lamp was dark.", "replacementText": "The lamp was lit."}),
        ),
        says("Done: the lamp is lit."),
    ]);
    page.project();
    page.configure();
    let result = page.ok(
        "run",
        json!({"prompt": "Make the lamp lit.", "runId": "r1"}),
    );
    assert_eq!(result["status"], "finished");
    assert_eq!(result["steps"], 3);
    assert_eq!(result["text"], "Done: the lamp is lit.");
    assert_eq!(result["usage"]["input_tokens"], 200);
    assert_eq!(page.text(), "Mara climbed the stair. The lamp was lit.");

    let types: Vec<String> = page
        .run_events()
        .iter()
        .inspect(|e| assert_eq!(e["run"], "r1"))
        .map(|e| e["type"].as_str().unwrap().to_string())
        .filter(|t| t != "usage")
        .collect();
    assert_eq!(
        types,
        [
            "run_started",
            "tool_call_proposed",
            "tool_call_started",
            "tool_call_finished",
            "step_finished",
            "tool_call_proposed",
            "tool_call_started",
            "edit_applied",
            "tool_call_finished",
            "step_finished",
            "text_delta",
            "step_finished",
            "run_finished"
        ]
    );
    // The edit reached the page as an `edit` event with the agent's origin.
    let edit = page.first_event("edit");
    assert_eq!(edit["origin"], "agent:assistant");
    // The system prompt carried the memory block; the tools were offered.
    let first: Value = serde_json::from_str(&page.transport.0.requests()[0].body).unwrap();
    assert!(first["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("AGENT MEMORY"));
    assert!(first["tools"].as_array().unwrap().len() > 10);

    // One undo reverts the whole turn.
    let undone = page.ok("undo", json!({}));
    assert_eq!(undone["canUndo"], false, "{undone}");
    assert_eq!(page.text(), TEXT);
    page.ok("redo", json!({}));
    assert_eq!(page.text(), "Mara climbed the stair. The lamp was lit.");

    // Audited as the agent's calls, and saved: a new worker on the same store sees the edit.
    let audit = block_on(page.store.get_all(Table::Audit)).unwrap();
    assert!(
        audit
            .iter()
            .any(|a| a["origin"] == "agent:assistant" && a["callId"] == "call_2"),
        "{audit:?}"
    );
    let other = Page::on(page.store.clone(), vec![], Rc::new(NeverSleeper));
    let list = other.ok("list_projects", json!({}));
    other.ok("open_project", json!({"id": list["projects"][0]["id"]}));
    assert_eq!(other.text(), "Mara climbed the stair. The lamp was lit.");
}

#[test]
fn the_conversation_carries_over_to_the_next_run_unless_asked_not_to() {
    let page = Page::new(vec![says("Hello."), says("Again."), says("Fresh.")]);
    page.project();
    page.configure();
    page.ok("run", json!({"prompt": "first"}));
    page.ok("run", json!({"prompt": "second"}));
    page.ok("run", json!({"prompt": "third", "newConversation": true}));
    let bodies: Vec<Value> = page
        .transport
        .0
        .requests()
        .iter()
        .map(|r| serde_json::from_str(&r.body).unwrap())
        .collect();
    let count = |b: &Value| b["messages"].as_array().unwrap().len();
    assert_eq!(count(&bodies[0]), 2, "system, user");
    assert_eq!(count(&bodies[1]), 4, "system, user, assistant, user");
    assert_eq!(bodies[1]["messages"][2]["content"], "Hello.");
    assert_eq!(count(&bodies[2]), 2);
}

#[test]
fn settings_are_validated_stored_without_the_key_and_with_it_only_on_opt_in() {
    let page = Page::new(vec![]);
    page.configure();
    let shown = page.ok("get_settings", json!({}));
    assert_eq!(shown["hasKey"], true);
    assert_eq!(shown["configured"], true);
    // Bad input is refused and changes nothing.
    for bad in [
        json!({"provider": "cohere"}),
        json!({"baseUrl": "file:///etc"}),
        json!({"maxSteps": 1000}),
        json!({"toolset": "no_such_toolset"}),
        json!({"baseURL": "http://typo"}),
    ] {
        let (code, _) = page.err("set_settings", bad);
        assert_eq!(code, "invalid_params");
    }
    assert_eq!(page.ok("get_settings", json!({})), shown);
    assert!(!page.everything_seen().contains(KEY));

    // A reload keeps the model but not the key...
    let reloaded = Page::on(page.store.clone(), vec![], Rc::new(NeverSleeper));
    let s = reloaded.ok("get_settings", json!({}));
    assert_eq!(
        (s["model"].clone(), s["hasKey"].clone()),
        (json!("m"), json!(false))
    );
    // ...unless the writer opted in.
    page.ok("set_settings", json!({"rememberKey": true}));
    assert!(page.everything_seen().contains(KEY));
    let reloaded = Page::on(page.store.clone(), vec![], Rc::new(NeverSleeper));
    assert_eq!(reloaded.ok("get_settings", json!({}))["hasKey"], true);
    // Opting out removes it from storage again.
    page.ok("set_settings", json!({"rememberKey": false}));
    assert!(!page.everything_seen().contains(KEY));
}

#[test]
fn the_key_never_reaches_events_errors_audit_or_exports() {
    // The provider echoes the key in its error, as some do.
    let page = Page::new(vec![Scripted::json(
        401,
        &json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}}).to_string(),
    )]);
    page.project();
    page.configure();
    let result = page.ok("run", json!({"prompt": "hello"}));
    assert_eq!(result["status"], "failed");
    let message = result["message"].as_str().unwrap();
    assert!(
        message.contains("Incorrect API key") && message.contains("[redacted]"),
        "{message}"
    );
    assert_eq!(page.transport.0.requests().len(), 1, "401 is not retried");
    let export = page.ok("export_project", json!({}));
    assert!(!export.to_string().contains(KEY));
    assert!(!page.everything_seen().contains(KEY));
    assert!(!message.contains(KEY));
}

#[test]
fn an_abort_mid_stream_ends_the_run_at_once_and_a_second_run_with_its_id_is_refused_meanwhile() {
    let stalled = Scripted::sse(
        &format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": {"content": "Let me"}, "finish_reason": null}]})
        ),
        64,
    )
    .ending(ScriptedEnd::Stall);
    let page = Page::on(
        Rc::new(MemoryStore::new()),
        vec![stalled],
        Rc::new(NeverSleeper),
    );
    page.project();
    page.configure();
    let (run, (busy, aborted)) = block_on(future::join(
        page.send_async("run", json!({"prompt": "go", "runId": "r1"})),
        async {
            while !page.run_events().iter().any(|e| e["type"] == "text_delta") {
                YieldNow(false).await;
            }
            let busy = page
                .send_async("run", json!({"prompt": "again", "runId": "r1"}))
                .await;
            let aborted = page.send_async("abort_run", json!({"runId": "r1"})).await;
            (busy, aborted)
        },
    ));
    assert_eq!(busy["error"]["code"], "busy", "{busy}");
    assert_eq!(aborted["result"]["aborted"], json!(["r1"]));
    assert_eq!(run["result"]["status"], "aborted", "{run}");
    assert_eq!(page.text(), TEXT);
    let last = page.run_events().last().unwrap().clone();
    assert_eq!(last["type"], "run_aborted");
    // The project is free again.
    assert_eq!(page.ok("abort_run", json!({}))["aborted"], json!([]));
}

#[test]
fn a_run_edits_its_own_project_even_when_the_page_opens_another() {
    let page = Page::new(vec![
        calls(
            "c",
            "update_manuscript",
            json!({"searchText": "dark", "replacementText": "lit"}),
        ),
        says("ok"),
    ]);
    page.project();
    let first = page.ok("list_projects", json!({}))["current"].clone();
    page.configure();
    let ((), run) = block_on(future::join(
        async {
            // Switch projects while the run is going.
            YieldNow(false).await;
            page.send_async("create_project", json!({"name": "Other"}))
                .await;
        },
        page.send_async("run", json!({"prompt": "go"})),
    ));
    assert_eq!(run["result"]["status"], "finished", "{run}");
    let kinds: Vec<String> = page.events.peek().into_iter().map(|e| e.kind).collect();
    let switched = kinds.iter().rposition(|k| k == "projects_changed").unwrap();
    let edited = kinds.iter().position(|k| k == "edit").unwrap();
    assert!(switched < edited, "the switch happened mid-run: {kinds:?}");
    page.ok("open_project", json!({"id": first}));
    assert_eq!(page.text(), "Mara climbed the stair. The lamp was lit.");
}

#[test]
fn the_writer_typing_during_a_run_loses_nothing_and_undo_agent_keeps_it() {
    let page = Page::new(vec![
        calls("n", "navigate_to_text", json!({"query": "lamp"})),
        calls(
            "e",
            "update_manuscript",
            json!({"searchText": "dark", "replacementText": "lit"}),
        ),
        says("ok"),
    ]);
    let chapter = page.project();
    page.configure();
    let version = page.ok("get_chapter", json!({}))["version"]
        .as_u64()
        .unwrap();
    let (run, typed) = block_on(future::join(
        page.send_async("run", json!({"prompt": "go"})),
        async {
            // The writer types at the start, on the version they saw, while the run goes on.
            YieldNow(false).await;
            page.send_async(
                "apply_user_change",
                json!({"chapter": chapter, "baseVersion": version,
                       "changes": [{"insert": "Night. "}, {"retain": TEXT.chars().count()}]}),
            )
            .await
        },
    ));
    assert_eq!(run["result"]["status"], "finished", "{run}");
    assert_eq!(typed["ok"], true, "{typed}");
    assert_eq!(
        page.text(),
        "Night. Mara climbed the stair. The lamp was lit."
    );
    page.ok("undo", json!({"origin": "agent"}));
    assert_eq!(
        page.text(),
        "Night. Mara climbed the stair. The lamp was dark."
    );
}

#[test]
fn an_abort_that_overtakes_its_run_still_stops_it() {
    let page = Page::new(vec![calls(
        "c",
        "update_manuscript",
        json!({"searchText": "dark", "replacementText": "lit"}),
    )]);
    page.project();
    page.configure();
    assert_eq!(
        page.ok("abort_run", json!({"runId": "early"}))["aborted"],
        json!([])
    );
    let result = page.ok("run", json!({"prompt": "go", "runId": "early"}));
    assert_eq!(result["status"], "aborted");
    assert_eq!(page.text(), TEXT);
    assert!(page.transport.0.requests().is_empty(), "no model call");
}

/// A plain streamed text answer, as a nested generation call gets.
fn text_answer(text: &str) -> Scripted {
    says(text)
}

#[test]
fn rewrite_selection_from_the_page_makes_a_nested_model_call_and_an_undoable_edit() {
    let page = Page::new(vec![text_answer("```\nThe lamp burned bright.\n```")]);
    page.project();
    // Without a model: a clear error result, nothing changes.
    page.ok(
        "execute",
        json!({"tool": "set_selection", "args": {"text": "The lamp was dark."}}),
    );
    let r = page.ok(
        "execute",
        json!({"tool": "rewrite_selection", "args": {"instruction": "make it brighter"}}),
    );
    assert_eq!(r["status"], "error", "{r}");
    assert_eq!(page.text(), TEXT);
    page.configure();
    let r = page.ok(
        "execute",
        json!({"tool": "rewrite_selection", "origin": "agent:editor", "callId": "g1",
               "args": {"instruction": "make it brighter", "tone": "warm"}}),
    );
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(
        page.text(),
        "Mara climbed the stair. The lamp burned bright."
    );
    // The nested request: the selection and the instruction, no tools.
    let request: Value = serde_json::from_str(&page.transport.0.requests()[0].body).unwrap();
    let prompt = request["messages"][1]["content"].as_str().unwrap();
    assert!(prompt.contains("The lamp was dark.") && prompt.contains("make it brighter"));
    assert!(request.get("tools").is_none());
    let history = page.ok("history", json!({}));
    assert_eq!(history["entries"][0]["toolCallId"], "g1");
    assert_eq!(history["entries"][0]["origin"], "agent:editor");
    page.ok("undo", json!({"origin": "agent"}));
    assert_eq!(page.text(), TEXT);
}

#[test]
fn an_agent_run_can_continue_writing_and_suggest_dialogue() {
    let page = Page::new(vec![
        calls(
            "c1",
            "continue_writing",
            json!({"length": "sentence", "position": "end"}),
        ),
        text_answer("The wind answered."),
        calls(
            "c2",
            "suggest_dialogue",
            json!({"character": "Mara", "context": "at the lamp", "count": 2}),
        ),
        text_answer("1. Who lit it?\n2. \"It was dark a moment ago.\""),
        says("Done."),
    ]);
    page.project();
    page.configure();
    let result = page.ok("run", json!({"prompt": "continue"}));
    assert_eq!(result["status"], "finished", "{result}");
    assert_eq!(
        page.text(),
        "Mara climbed the stair. The lamp was dark. The wind answered."
    );
    // The suggestions went back to the model as the call's result.
    let last: Value = serde_json::from_str(&page.transport.0.requests()[4].body).unwrap();
    let tool_result = last["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        tool_result.contains("Who lit it?") && tool_result.contains("It was dark a moment ago."),
        "{tool_result}"
    );
    // One undo takes back the turn.
    page.ok("undo", json!({}));
    assert_eq!(page.text(), TEXT);
}

#[test]
fn run_analysis_adds_the_models_reading_when_a_model_is_configured() {
    let page = Page::new(vec![text_answer("The pacing is even.")]);
    page.project();
    let local = page.ok(
        "execute",
        json!({"tool": "run_analysis", "args": {"section": "pacing"}}),
    );
    assert_eq!(local["status"], "success", "{local}");
    assert!(
        local["data"].get("interpretation").is_none(),
        "no model: local only"
    );
    page.configure();
    let read = page.ok(
        "execute",
        json!({"tool": "run_analysis", "args": {"section": "pacing"}}),
    );
    assert_eq!(read["data"]["interpretation"], "The pacing is even.");
    let mut without = read["data"].clone();
    without.as_object_mut().unwrap().remove("interpretation");
    assert_eq!(without, local["data"], "the local figures are unchanged");
    let skipped = page.ok(
        "execute",
        json!({"tool": "run_analysis", "args": {"section": "pacing", "interpret": false}}),
    );
    assert!(skipped["data"].get("interpretation").is_none());
    assert_eq!(page.transport.0.requests().len(), 1);
}

#[test]
fn the_writer_typing_during_a_generation_loses_nothing() {
    let page = Page::new(vec![text_answer("The lamp burned.")]);
    let chapter = page.project();
    page.configure();
    page.ok(
        "execute",
        json!({"tool": "set_selection", "args": {"text": "The lamp was dark."}}),
    );
    let version = page.ok("get_chapter", json!({}))["version"]
        .as_u64()
        .unwrap();
    let (generated, typed) = block_on(future::join(
        page.send_async(
            "execute",
            json!({"tool": "rewrite_selection", "args": {"instruction": "x"}}),
        ),
        async {
            YieldNow(false).await;
            page.send_async(
                "apply_user_change",
                json!({"chapter": chapter, "baseVersion": version,
                       "changes": [{"insert": "Night. "}, {"retain": TEXT.chars().count()}]}),
            )
            .await
        },
    ));
    assert_eq!(typed["ok"], true, "{typed}");
    assert_eq!(generated["result"]["status"], "success", "{generated}");
    assert_eq!(
        page.text(),
        "Night. Mara climbed the stair. The lamp burned."
    );
}

#[test]
fn a_failed_or_aborted_generation_changes_nothing() {
    // A 400 (never retried) for the page's call; then a run whose nested call stalls.
    let page = Page::new(vec![
        Scripted::json(400, r#"{"error": {"message": "bad model name"}}"#),
        calls("g", "continue_writing", json!({"length": "sentence"})),
        Scripted::sse(
            &format!(
                "data: {}\n\n",
                json!({"choices": [{"index": 0, "delta": {"content": "The lamp"}, "finish_reason": null}]})
            ),
            64,
        )
        .ending(ScriptedEnd::Stall),
    ]);
    page.project();
    page.configure();
    let r = page.ok(
        "execute",
        json!({"tool": "continue_writing", "args": {"length": "sentence"}}),
    );
    assert_eq!(r["status"], "error");
    assert!(
        r["data"]["message"]
            .as_str()
            .unwrap()
            .contains("bad model name"),
        "{r}"
    );
    assert_eq!(page.text(), TEXT);
    // Mid-run, the page aborts while the nested call streams.
    let (run, aborted) = block_on(future::join(
        page.send_async("run", json!({"prompt": "go", "runId": "r"})),
        async {
            while !page
                .run_events()
                .iter()
                .any(|e| e["type"] == "tool_call_started")
            {
                YieldNow(false).await;
            }
            YieldNow(false).await;
            page.send_async("abort_run", json!({"runId": "r"})).await
        },
    ));
    assert_eq!(aborted["result"]["aborted"], json!(["r"]), "{aborted}");
    assert_eq!(run["result"]["status"], "aborted", "{run}");
    let finished = page
        .run_events()
        .into_iter()
        .find(|e| e["type"] == "tool_call_finished")
        .unwrap();
    assert_eq!(finished["status"], "aborted");
    assert_eq!(page.text(), TEXT);
}

/// The tool names a model request offered.
fn offered_tools(request: &draftsmith::llm::HttpRequest) -> Vec<String> {
    let body: Value = serde_json::from_str(&request.body).unwrap();
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_voice_run_offers_only_voice_safe_tools_and_a_toolset_still_overrides() {
    let page = Page::new(vec![says("Yes."), says("Yes."), says("Yes."), says("Yes.")]);
    page.project();
    page.configure();
    page.ok("run", json!({"prompt": "Where am I?", "mode": "voice"}));
    page.ok("run", json!({"prompt": "Where am I?", "mode": "text"}));
    page.ok(
        "run",
        json!({"prompt": "Where am I?", "mode": "voice", "toolset": "quick"}),
    );
    let requests = page.transport.0.requests();
    let (voice, text, quick) = (
        offered_tools(&requests[0]),
        offered_tools(&requests[1]),
        offered_tools(&requests[2]),
    );
    let registry = draftsmith::tools::ToolRegistry::standard();
    let names = |set: &str| -> Vec<String> {
        registry
            .toolset(set)
            .unwrap()
            .iter()
            .map(|d| d.name.to_string())
            .collect()
    };
    assert_eq!(voice, names("voice_safe"));
    assert!(!voice.contains(&"research_url".to_string()));
    assert!(!voice.contains(&"run_analysis".to_string()));
    assert_eq!(text, names("all"));
    assert_eq!(quick, names("quick"));
    // A named agent's own toolbox is cut to the voice-safe tools.
    page.ok(
        "define_agent",
        json!({"agent": {
            "name": "guide", "description": "The guide.",
            "systemPrompt": "You are the guide. You are done when you answered.",
            "tools": ["navigate_to_text", "research_url", "run_analysis", "update_manuscript"],
            "talksToWriter": true,
        }}),
    );
    page.ok(
        "run",
        json!({"prompt": "Where am I?", "agent": "guide", "mode": "voice"}),
    );
    let guide = offered_tools(&page.transport.0.requests()[3]);
    assert_eq!(guide, ["navigate_to_text"]);
    let (code, message) = page.err("run", json!({"prompt": "x", "mode": "telepathy"}));
    assert_eq!(code, "invalid_params");
    assert!(message.contains("voice"), "{message}");
}

/// The keys of every event of a run, as the page reads them (sorted; `type` included).
fn keys(event: &Value) -> Vec<String> {
    event.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn a_runs_events_have_their_wire_shape() {
    let page = Page::new(vec![
        calls(
            "call_1",
            "update_manuscript",
            json!({"searchText": "The lamp was dark.", "replacementText": "The lamp was lit."}),
        ),
        says("Done."),
    ]);
    page.project();
    page.configure();
    page.ok(
        "run",
        json!({"prompt": "Make the lamp lit.", "runId": "r1"}),
    );
    let shapes: Vec<(String, Vec<String>)> = page
        .run_events()
        .iter()
        .map(|e| (e["type"].as_str().unwrap().to_string(), keys(e)))
        .collect();
    let shape = |kind: &str| {
        shapes
            .iter()
            .find(|(k, _)| k == kind)
            .map(|(_, keys)| keys.join(" "))
            .unwrap_or_else(|| panic!("no {kind} event: {shapes:?}"))
    };
    // The run's own events carry no agent origin; preset and toolset are there, null or not.
    assert_eq!(
        shape("run_started"),
        "agent maxSteps model preset project prompt run toolset type"
    );
    let started = &page.run_events()[0];
    assert_eq!(started["preset"], Value::Null);
    // The agent loop's events carry the agent and its path (no session: the root agent).
    assert_eq!(
        shape("tool_call_started"),
        "agent arguments id name path run type"
    );
    assert_eq!(
        shape("tool_call_finished"),
        "agent id name path run status type"
    );
    assert_eq!(
        shape("edit_applied"),
        "agent chapter id path run type version"
    );
    assert_eq!(shape("step_finished"), "agent path run step type");
    assert_eq!(shape("usage"), "agent path run type usage");
    // The end: the run's result, without the absent `message` and `pending`.
    assert_eq!(
        shape("run_finished"),
        "agent run status steps text type usage"
    );
    // The page's `edit` event: no `tag` for an agent's edit.
    assert_eq!(
        keys(&page.first_event("edit")),
        ["changeset", "chapter", "origin", "version"]
    );
    assert_eq!(
        keys(&page.first_event("history_changed")),
        ["canRedo", "canUndo", "groups"]
    );
}

/// An answer streaming `pieces` of text, then (if any) a call of `navigate_to_text`.
fn pieces_then(pieces: &[&str], call: Option<Value>) -> Scripted {
    let mut chunks: Vec<Value> = pieces
        .iter()
        .map(|p| json!({"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": null}]}))
        .collect();
    let finish = match call {
        Some(args) => {
            chunks.push(
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                "id": "call_1", "type": "function", "function": {"name": "navigate_to_text",
                "arguments": args.to_string()}}]}, "finish_reason": null}]}),
            );
            "tool_calls"
        }
        None => "stop",
    };
    chunks.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}));
    // Chunks of 40 bytes: the deltas arrive over many reads.
    Scripted::sse(&sse(&chunks), 40)
}

/// The `run` events' types, with the text of each `text_delta`.
fn types_and_texts(page: &Page) -> Vec<(String, Option<String>)> {
    page.run_events()
        .iter()
        .map(|e| {
            let text = e["text"].as_str().filter(|_| e["type"] == "text_delta");
            (
                e["type"].as_str().unwrap().to_string(),
                text.map(str::to_string),
            )
        })
        .collect()
}

#[test]
fn text_deltas_within_a_window_reach_the_page_as_one_event_and_never_after_the_next() {
    let script = || {
        vec![
            pieces_then(
                &["Let me ", "find ", "the ", "lamp."],
                Some(json!({"query": "The lamp was dark."})),
            ),
            pieces_then(&["It ", "is ", "in ", "the ", "tower."], None),
        ]
    };
    // The default window (16 ms); the page's clock stands still, so every piece of one model
    // call arrives within the window of its first (which goes at once). The held text goes
    // as one event, before the tool call, and the last text before the step's end.
    let page = Page::new(script());
    page.project();
    page.configure();
    assert_eq!(page.ok("get_settings", json!({}))["streamBatchMs"], 16);
    let result = page.ok(
        "run",
        json!({"prompt": "Where is the lamp?", "runId": "r1"}),
    );
    assert_eq!(result["status"], "finished", "{result}");
    assert_eq!(result["text"], "It is in the tower.");
    let delta = |text: &str| ("text_delta".to_string(), Some(text.to_string()));
    let other = |kind: &str| (kind.to_string(), None);
    assert_eq!(
        types_and_texts(&page),
        [
            other("run_started"),
            delta("Let me "),
            delta("find the lamp."),
            other("tool_call_proposed"),
            other("tool_call_started"),
            other("tool_call_finished"),
            other("step_finished"),
            delta("It "),
            delta("is in the tower."),
            other("step_finished"),
            other("run_finished"),
        ]
    );

    // A window of 0: one event per piece.
    let page = Page::new(script());
    page.project();
    page.configure();
    page.ok("set_settings", json!({"streamBatchMs": 0}));
    page.ok(
        "run",
        json!({"prompt": "Where is the lamp?", "runId": "r2"}),
    );
    let texts: Vec<String> = types_and_texts(&page)
        .into_iter()
        .filter_map(|(_, text)| text)
        .collect();
    assert_eq!(
        texts,
        ["Let me ", "find ", "the ", "lamp.", "It ", "is ", "in ", "the ", "tower."]
    );

    // A window beyond a second is refused, and nothing changes.
    let (code, message) = page.err(
        "set_settings",
        json!({"streamBatchMs": 1001, "maxSteps": 3}),
    );
    assert_eq!(code, "invalid_params", "{message}");
    assert!(message.contains("streamBatchMs"), "{message}");
    let settings = page.ok("get_settings", json!({}));
    assert_eq!(settings["streamBatchMs"], 0);
    assert_ne!(settings["maxSteps"], 3);
}
