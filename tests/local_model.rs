//! The `local` provider (a model running in the browser) through the worker protocol, with a
//! scripted runtime: settings, loading with `model_progress` events, runs with and without
//! a grammar for tool calls, the kept model files, and aborting.

#![cfg(not(target_arch = "wasm32"))]

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::llm::client::{HttpResponse, LlmTransport, Scripted, ScriptedEnd, TransportError};
use draftsmith::llm::local::{
    LocalInfo, LocalRuntime, LocalSpec, LocalStream, Progress, StoredModel, GRAMMAR_HEADER,
};
use draftsmith::llm::{
    build_request, Message, ProviderConfig, ProviderKind, RequestOptions, SseMessage, StreamEvent,
    ToolCall, ToolChoice,
};
use draftsmith::store::MemoryStore;
use draftsmith::tools::validate::check_args;
use draftsmith::tools::ToolRegistry;
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures::executor::{block_on, LocalPool};
use futures::future::{self, LocalBoxFuture};
use futures::task::LocalSpawnExt;
use futures::FutureExt;
use serde_json::{json, Value};

mod common;
use common::page::{sse, NeverSleeper, YieldNow, Yielding};

const MODEL: &str = "/models/tiny.gguf";
const ABSOLUTE: &str = "http://127.0.0.1:8080/models/tiny.gguf";
const SIZE: u64 = 98_362_432;

/// What the scripted runtime keeps and has been asked.
#[derive(Default)]
struct RuntimeState {
    stored: RefCell<Vec<StoredModel>>,
    loads: RefCell<Vec<LocalSpec>>,
    fail: RefCell<Option<String>>,
    template_tools: Cell<bool>,
    /// Bodies whose answer stream was dropped before it ended.
    dropped: Cell<usize>,
}

/// A runtime like the wllama bridge: downloads in steps (reporting progress) unless the
/// file is kept, then answers chats through a scripted model.
struct Runtime {
    state: Rc<RuntimeState>,
    model: Yielding,
}

struct Watched {
    inner: Box<dyn draftsmith::llm::client::ByteStream>,
    state: Rc<RuntimeState>,
    ended: bool,
}

impl draftsmith::llm::client::ByteStream for Watched {
    fn next_chunk(&mut self) -> LocalBoxFuture<'_, Option<Result<Vec<u8>, TransportError>>> {
        Box::pin(async move {
            let next = self.inner.next_chunk().await;
            self.ended = next.is_none();
            next
        })
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if !self.ended {
            self.state.dropped.set(self.state.dropped.get() + 1);
        }
    }
}

impl LlmTransport for Runtime {
    fn send<'a>(
        &'a self,
        request: &'a draftsmith::llm::HttpRequest,
    ) -> LocalBoxFuture<'a, Result<HttpResponse, TransportError>> {
        Box::pin(async move {
            let mut response = self.model.send(request).await?;
            response.body = Box::new(Watched {
                inner: response.body,
                state: Rc::clone(&self.state),
                ended: false,
            });
            Ok(response)
        })
    }
}

impl LocalRuntime for Runtime {
    fn load(
        &self,
        spec: &LocalSpec,
        progress: Progress,
    ) -> LocalBoxFuture<'static, Result<LocalInfo, String>> {
        let state = Rc::clone(&self.state);
        let spec = spec.clone();
        Box::pin(async move {
            YieldNow(false).await;
            state.loads.borrow_mut().push(spec.clone());
            if let Some(reason) = state.fail.borrow().clone() {
                return Err(reason);
            }
            let url = spec.url.replace(MODEL, ABSOLUTE);
            let kept = state.stored.borrow().iter().any(|m| m.url == url);
            if !kept {
                for part in 0..=4u64 {
                    progress(SIZE * part / 4, SIZE);
                    YieldNow(false).await;
                }
                state.stored.borrow_mut().push(StoredModel {
                    url: url.clone(),
                    size: SIZE,
                });
            } else {
                progress(SIZE, SIZE);
            }
            Ok(LocalInfo {
                url,
                size: SIZE,
                context_size: spec.context_size.unwrap_or(2048),
                threads: spec.threads.unwrap_or(1),
                multi_thread: false,
                tool_template: state.template_tools.get(),
            })
        })
    }

    fn stored(&self) -> LocalBoxFuture<'static, Result<Vec<StoredModel>, String>> {
        let stored = self.state.stored.borrow().clone();
        Box::pin(async move { Ok(stored) })
    }

    fn delete(&self, url: &str) -> LocalBoxFuture<'static, Result<bool, String>> {
        let state = Rc::clone(&self.state);
        let url = url.to_string();
        Box::pin(async move {
            let mut stored = state.stored.borrow_mut();
            let before = stored.len();
            stored.retain(|m| m.url != url);
            Ok(stored.len() < before)
        })
    }
}

/// The model's answer as text chunks (as llama.cpp streams tokens), then `stop`.
fn streams(text: &str) -> Scripted {
    let mut chunks: Vec<Value> = text
        .as_bytes()
        .chunks(7)
        .map(|c| {
            json!({"choices": [{"index": 0, "delta": {"content": String::from_utf8_lossy(c)}, "finish_reason": null}]})
        })
        .collect();
    chunks.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
    Scripted::sse(&sse(&chunks), 40)
}

/// A small model that reads its prompt: when told to call a tool, it calls the listed tool
/// that needs no arguments and whose name shares the most words with the writer's request,
/// in the JSON form the prompt shows; otherwise it answers in a sentence that names the
/// last tool whose result it was given, if any.
fn small_model(body: &Value) -> Scripted {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let system = messages
        .iter()
        .find(|m| m["role"] == "system")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    let told_to_call = system.contains("Call one of these tools now");
    if told_to_call {
        let asked = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_lowercase();
        let mut best: Option<(usize, String)> = None;
        let mut lines = system
            .lines()
            .skip_while(|l| *l != "Tools:")
            .skip(1)
            .peekable();
        while let Some(line) = lines.next() {
            let Some(name) = line.strip_prefix("- ").and_then(|l| l.split(':').next()) else {
                continue;
            };
            let arguments = lines
                .peek()
                .and_then(|l| l.strip_prefix("  Arguments: "))
                .unwrap_or_default();
            let needs_none = arguments
                .split("; ")
                .filter(|a| !a.is_empty())
                .all(|a| a.contains(", optional)"));
            let shared = name.split('_').filter(|w| asked.contains(w)).count();
            if needs_none && best.as_ref().is_none_or(|(n, _)| shared > *n) {
                best = Some((shared, name.to_string()));
            }
        }
        let name = best.map(|(_, n)| n).unwrap_or_default();
        return streams(&format!("{{\"name\": \"{name}\", \"arguments\": {{}}}}"));
    }
    let last = messages
        .last()
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    if let Some(result) = last.strip_prefix("Result of ") {
        let tool = result.split(':').next().unwrap_or_default();
        return streams(&format!("I read what {tool} said."));
    }
    streams("Hello from the browser.")
}

struct Worker {
    core: Core,
    pool: RefCell<LocalPool>,
    events: Rc<RecordingSink>,
    runtime: Rc<Runtime>,
}

impl Worker {
    fn new(model: Yielding) -> Self {
        let pool = LocalPool::new();
        let spawner = pool.spawner();
        let events = Rc::new(RecordingSink::default());
        let runtime = Rc::new(Runtime {
            state: Rc::new(RuntimeState::default()),
            model,
        });
        let core = Core::new(Env {
            clock: Rc::new(ManualClock::new(1_700_000_000_000)),
            ids: Rc::new(SequentialIds::new("id")),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: events.clone(),
            store: Rc::new(MemoryStore::new()),
        })
        .with_llm(Rc::new(Yielding::new(Vec::new())), Rc::new(NeverSleeper))
        .with_spawner(Rc::new(move |f| {
            let _ = spawner.spawn_local(f);
        }))
        .with_local_model(runtime.clone());
        Self {
            core,
            pool: RefCell::new(pool),
            events,
            runtime,
        }
    }

    fn thinking() -> Self {
        Self::new(Yielding::thinking(Rc::new(small_model)))
    }

    fn send(&self, kind: &str, params: Value) -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        let answer = self
            .pool
            .borrow_mut()
            .run_until(self.core.handle_text(&text));
        serde_json::from_str(&answer).unwrap()
    }

    fn ok(&self, kind: &str, params: Value) -> Value {
        let r = self.send(kind, params.clone());
        assert_eq!(r["ok"], true, "{kind} {params} -> {r}");
        r["result"].clone()
    }

    fn err(&self, kind: &str, params: Value) -> (String, String) {
        let r = self.send(kind, params.clone());
        assert_eq!(r["ok"], false, "{kind} {params} -> {r}");
        (
            r["error"]["code"].as_str().unwrap().to_string(),
            r["error"]["message"].as_str().unwrap().to_string(),
        )
    }

    fn settle(&self) {
        self.pool.borrow_mut().run_until_stalled();
    }

    fn progress(&self) -> Vec<Value> {
        self.events
            .peek()
            .into_iter()
            .filter(|e| e.kind == "model_progress")
            .map(|e| e.data)
            .collect()
    }

    fn requests(&self) -> Vec<draftsmith::llm::HttpRequest> {
        self.runtime.model.requests()
    }

    fn project(&self) {
        self.ok(
            "create_project",
            json!({"name": "Lighthouse", "chapters": [{"title": "The Stair", "text": "Mara climbed the stair."}]}),
        );
    }

    fn local(&self) {
        self.ok(
            "set_settings",
            json!({"provider": "local", "model": MODEL, "contextSize": 4096}),
        );
    }
}

#[test]
fn the_local_provider_needs_a_gguf_url_and_sane_load_options() {
    let w = Worker::thinking();
    // No base URL or key needed: a .gguf URL is a configured model.
    let s = w.ok(
        "set_settings",
        json!({"provider": "local", "model": MODEL, "contextSize": 4096, "threads": 2}),
    );
    assert_eq!(s["configured"], true, "{s}");
    assert_eq!(s["contextSize"], 4096);
    assert_eq!(s["threads"], 2);
    for (patch, field) in [
        (json!({"model": "gpt-4o"}), "model"),
        (json!({"model": "/models/notes.txt"}), "model"),
        (json!({"contextSize": 100}), "contextSize"),
        (json!({"contextSize": 1_000_000}), "contextSize"),
        (json!({"threads": 0}), "threads"),
        (json!({"threads": "two"}), "threads"),
    ] {
        let (code, message) = w.err("set_settings", patch.clone());
        assert_eq!(code, "invalid_params", "{patch}");
        assert!(message.contains(field), "{patch}: {message}");
    }
    // Nothing of a refused patch was taken.
    let s = w.ok("get_settings", json!({}));
    assert_eq!(s["model"], MODEL);
    assert_eq!(s["contextSize"], 4096);
    assert_eq!(s["threads"], 2);
    // `null` goes back to the runtime's default; a split model's first part is a .gguf URL.
    let s = w.ok(
        "set_settings",
        json!({"threads": null, "model": "https://example.org/m-00001-of-00003.gguf"}),
    );
    assert_eq!(s["threads"], Value::Null);
    assert_eq!(s["configured"], true);
}

#[test]
fn choosing_a_local_model_downloads_it_with_progress_events_and_keeps_it() {
    let w = Worker::thinking();
    w.local();
    w.settle();
    let progress = w.progress();
    let phases: Vec<&str> = progress
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases.first(), Some(&"downloading"), "{progress:?}");
    assert!(phases.contains(&"loading"), "{phases:?}");
    assert_eq!(phases.last(), Some(&"ready"), "{phases:?}");
    let loaded: Vec<u64> = progress
        .iter()
        .map(|p| p["loaded"].as_u64().unwrap())
        .collect();
    assert!(loaded.windows(2).all(|w| w[0] <= w[1]), "{loaded:?}");
    assert!(progress
        .iter()
        .all(|p| p["url"] == MODEL || p["url"] == ABSOLUTE));
    assert_eq!(progress.last().unwrap()["total"], SIZE);
    // The load options went to the runtime.
    assert_eq!(w.runtime.state.loads.borrow()[0].context_size, Some(4096));
    // Listed, counted, and loaded.
    let list = w.ok("local_models", json!({}));
    assert_eq!(list["available"], true);
    assert_eq!(
        list["models"],
        json!([{"url": ABSOLUTE, "size": SIZE, "loaded": true}])
    );
    assert_eq!(list["total"], SIZE);
    assert_eq!(w.ok("storage_estimate", json!({}))["models"], SIZE);
    // Loading it again downloads nothing.
    let before = w.progress().len();
    let loaded = w.ok("load_local_model", json!({}));
    assert_eq!(loaded["url"], ABSOLUTE);
    assert_eq!(loaded["contextSize"], 4096);
    assert!(w.progress()[before..]
        .iter()
        .all(|p| p["phase"] != "downloading"));
    // Deleted: gone from the list, and no longer loaded.
    assert_eq!(
        w.ok("delete_local_model", json!({"url": ABSOLUTE}))["deleted"],
        true
    );
    assert_eq!(
        w.ok("delete_local_model", json!({"url": ABSOLUTE}))["deleted"],
        false
    );
    assert_eq!(w.ok("local_models", json!({}))["models"], json!([]));
    assert_eq!(w.ok("storage_estimate", json!({}))["models"], 0);
    let (code, _) = w.err("delete_local_model", json!({"url": " "}));
    assert_eq!(code, "invalid_params");
}

#[test]
fn a_model_that_cannot_load_fails_the_run_with_the_reason_and_an_event() {
    let w = Worker::thinking();
    w.project();
    *w.runtime.state.fail.borrow_mut() = Some("the download answered 404".into());
    w.local();
    w.settle();
    let failed = w.progress().last().cloned().unwrap();
    assert_eq!(failed["phase"], "failed");
    assert!(
        failed["error"].as_str().unwrap().contains("404"),
        "{failed}"
    );
    let (code, message) = w.err("run", json!({"prompt": "hello"}));
    assert_eq!(code, "no_model");
    assert!(message.contains("404"), "{message}");
    assert!(w.requests().is_empty());
}

#[test]
fn a_chat_run_streams_text_from_the_model_in_the_browser() {
    let w = Worker::thinking();
    w.project();
    w.local();
    let run = w.ok("run", json!({"prompt": "Say hello.", "toolset": "quick"}));
    assert_eq!(run["status"], "finished", "{run}");
    assert_eq!(run["text"], "Hello from the browser.");
    let deltas: Vec<String> = w
        .events
        .peek()
        .into_iter()
        .filter(|e| e.kind == "run" && e.data["type"] == "text_delta")
        .map(|e| e.data["text"].as_str().unwrap().to_string())
        .collect();
    assert!(deltas.len() > 1, "{deltas:?}");
    assert_eq!(deltas.concat(), "Hello from the browser.");
    // The request went to the model's URL with its load options, and (the template has no
    // tools, the model may choose) an optional-call grammar instead of `tools`.
    let request = &w.requests()[0];
    assert_eq!(request.url, MODEL);
    assert_eq!(request.header(GRAMMAR_HEADER), Some("optional"));
    let body: Value = serde_json::from_str(&request.body).unwrap();
    assert_eq!(body["load"], json!({"contextSize": 4096}));
    assert!(body.get("tools").is_none());
    assert!(body["grammar"].as_str().unwrap().contains("root ::= "));
}

#[test]
fn a_required_call_is_written_under_a_grammar_and_the_tool_runs() {
    let w = Worker::thinking();
    w.project();
    w.local();
    let run = w.ok(
        "run",
        json!({"prompt": "List the chapters, please.", "toolset": "quick", "toolChoice": "required"}),
    );
    assert_eq!(run["status"], "finished", "{run}");
    let requests = w.requests();
    assert_eq!(requests.len(), 2);
    let first: Value = serde_json::from_str(&requests[0].body).unwrap();
    assert_eq!(requests[0].header(GRAMMAR_HEADER), Some("required"));
    let grammar = first["grammar"].as_str().unwrap();
    // Every tool of the quick toolset is in the grammar and described in the prompt.
    let registry = ToolRegistry::standard();
    let quick = registry.toolset("quick").unwrap();
    let system = first["messages"][0]["content"].as_str().unwrap();
    for tool in &quick {
        assert!(
            grammar.contains(&format!("\\\"{}\\\"", tool.name)),
            "{}",
            tool.name
        );
        assert!(
            system.contains(&format!("- {}: ", tool.name)),
            "{}",
            tool.name
        );
    }
    // The call the model wrote ran as a tool call.
    let proposed: Vec<Value> = w
        .events
        .peek()
        .into_iter()
        .filter(|e| e.kind == "run" && e.data["type"] == "tool_call_finished")
        .map(|e| e.data)
        .collect();
    assert_eq!(proposed.len(), 1, "{proposed:?}");
    assert_eq!(proposed[0]["status"], "success", "{proposed:?}");
    let tool = proposed[0]["name"].as_str().unwrap().to_string();
    assert_eq!(tool, "list_chapters");
    let started = w
        .events
        .peek()
        .into_iter()
        .find(|e| e.kind == "run" && e.data["type"] == "tool_call_started")
        .map(|e| e.data)
        .unwrap();
    let schema = &registry.definition(&tool).unwrap().parameters;
    assert!(check_args(schema, started["arguments"].as_object().unwrap()).is_ok());
    // The next request holds the call as the assistant wrote it and its result as text the
    // template can show; the model may now answer in text (an optional call).
    assert_eq!(requests[1].header(GRAMMAR_HEADER), Some("optional"));
    let second: Value = serde_json::from_str(&requests[1].body).unwrap();
    let messages = second["messages"].as_array().unwrap();
    assert!(messages
        .iter()
        .all(|m| m["role"] != "tool" && m.get("tool_calls").is_none()));
    let call = messages
        .iter()
        .find(|m| m["role"] == "assistant")
        .and_then(|m| m["content"].as_str())
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(call).unwrap(),
        json!({"name": tool, "arguments": {}})
    );
    let result = messages.last().unwrap();
    assert_eq!(result["role"], "user");
    assert!(result["content"]
        .as_str()
        .unwrap()
        .starts_with(&format!("Result of {tool}: ")));
    assert_eq!(run["text"], format!("I read what {tool} said."));
}

#[test]
fn a_template_with_tools_gets_them_as_tools_unless_a_call_is_required() {
    let w = Worker::thinking();
    w.runtime.state.template_tools.set(true);
    w.project();
    w.local();
    w.ok("run", json!({"prompt": "Say hello.", "toolset": "quick"}));
    let request = &w.requests()[0];
    assert_eq!(request.header(GRAMMAR_HEADER), None);
    let body: Value = serde_json::from_str(&request.body).unwrap();
    assert!(body["tools"].as_array().is_some_and(|t| !t.is_empty()));
    assert!(body.get("grammar").is_none());
}

#[test]
fn aborting_a_local_run_stops_its_generation() {
    let stalled = Scripted::sse(
        &format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": {"content": "Once upon"}, "finish_reason": null}]})
        ),
        64,
    )
    .ending(ScriptedEnd::Stall);
    let w = Worker::new(Yielding::new(vec![stalled]));
    w.project();
    w.local();
    w.settle();
    let run_events = |w: &Worker| {
        w.events
            .peek()
            .into_iter()
            .filter(|e| e.kind == "run")
            .map(|e| e.data)
            .collect::<Vec<_>>()
    };
    let pool = &w.pool;
    let (run, aborted) = pool.borrow_mut().run_until(future::join(
        w.core.handle_text(
            &json!({"id": 1, "type": "run", "params": {"prompt": "A story.", "runId": "r"}})
                .to_string(),
        ),
        async {
            while !run_events(&w).iter().any(|e| e["type"] == "text_delta") {
                YieldNow(false).await;
            }
            w.core
                .handle_text(
                    &json!({"id": 2, "type": "abort_run", "params": {"runId": "r"}}).to_string(),
                )
                .await
        },
    ));
    let run: Value = serde_json::from_str(&run).unwrap();
    let aborted: Value = serde_json::from_str(&aborted).unwrap();
    assert_eq!(aborted["result"]["aborted"], json!(["r"]));
    assert_eq!(run["result"]["status"], "aborted", "{run}");
    // The answer's stream was dropped unfinished: the runtime stops generating.
    assert_eq!(w.runtime.state.dropped.get(), 1);
}

#[test]
fn without_a_runtime_the_local_provider_says_so() {
    let core = Core::new(Env {
        clock: Rc::new(ManualClock::new(1)),
        ids: Rc::new(SequentialIds::new("id")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: Rc::new(RecordingSink::default()),
        store: Rc::new(MemoryStore::new()),
    })
    .with_llm(Rc::new(Yielding::new(Vec::new())), Rc::new(NeverSleeper));
    let send = |kind: &str, params: Value| -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        serde_json::from_str(&block_on(core.handle_text(&text))).unwrap()
    };
    send(
        "create_project",
        json!({"name": "P", "chapters": [{"title": "One", "text": "x"}]}),
    );
    send("set_settings", json!({"provider": "local", "model": MODEL}));
    let run = send("run", json!({"prompt": "hi"}));
    assert_eq!(run["error"]["code"], "no_model", "{run}");
    assert!(run["error"]["message"]
        .as_str()
        .unwrap()
        .contains("in the browser"));
    let list = send("local_models", json!({}));
    assert_eq!(
        list["result"],
        json!({"available": false, "models": [], "total": 0})
    );
    assert_eq!(
        send("storage_estimate", json!({}))["result"]["models"],
        Value::Null
    );
}

// --- The adapter itself: requests and stream decoding. ---

fn local_config(template_tools: bool) -> ProviderConfig {
    let mut config = ProviderConfig {
        kind: ProviderKind::Local,
        base_url: String::new(),
        model: MODEL.into(),
        api_key: None,
        extra_headers: Vec::new(),
        local: Default::default(),
    };
    config.local.template_tools = template_tools;
    config.local.threads = Some(2);
    config
}

/// A streamed request of "go" with the quick toolset, to a model whose template has no tools.
fn quick_request(tool_choice: ToolChoice) -> draftsmith::llm::HttpRequest {
    build_request(
        &local_config(false),
        &[Message::user("go")],
        &ToolRegistry::standard().toolset("quick").unwrap(),
        &RequestOptions {
            stream: true,
            tool_choice,
            ..RequestOptions::default()
        },
    )
}

fn decode(request: &draftsmith::llm::HttpRequest, chunks: &[Value]) -> Vec<StreamEvent> {
    let mut stream = LocalStream::for_request(request);
    let mut out = Vec::new();
    for chunk in chunks {
        out.extend(stream.on_event(SseMessage::data(&chunk.to_string())));
    }
    out.extend(stream.on_event(SseMessage::data("[DONE]")));
    out.extend(stream.finish());
    out
}

fn text_chunk(text: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
}

fn finish_chunk(reason: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

fn assemble(events: &[StreamEvent]) -> draftsmith::llm::Answer {
    let mut assembler = draftsmith::llm::Assembler::new();
    assembler.extend(events);
    assembler.finish()
}

#[test]
fn a_named_tool_choice_constrains_the_answer_to_that_tool() {
    let registry = ToolRegistry::standard();
    let tools = registry.toolset("quick").unwrap();
    let request = build_request(
        &local_config(true),
        &[
            Message::system("You help a writer."),
            Message::user("Outline?"),
        ],
        &tools,
        &RequestOptions {
            stream: true,
            tool_choice: ToolChoice::Tool("list_chapters".into()),
            ..RequestOptions::default()
        },
    );
    assert_eq!(request.header(GRAMMAR_HEADER), Some("required"));
    let body: Value = serde_json::from_str(&request.body).unwrap();
    let grammar = body["grammar"].as_str().unwrap();
    assert!(grammar.contains("\\\"list_chapters\\\""));
    assert!(!grammar.contains("\\\"read_chapter\\\""));
    assert_eq!(body["load"], json!({"threads": 2}));
    assert!(body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .starts_with("You help a writer.\n\n"));
    assert!(body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("Call this tool now."));
}

#[test]
fn grammar_text_becomes_a_tool_call_and_a_cut_off_one_is_never_run() {
    let request = quick_request(ToolChoice::Required);
    let events = decode(
        &request,
        &[
            text_chunk("{\"name\": \"get_ch"),
            text_chunk("apter\", \"arguments\": {\"chapter\": \"1\"}}"),
            finish_chunk("stop"),
        ],
    );
    // No text reaches the writer: it was the call.
    assert!(!events
        .iter()
        .any(|e| matches!(e, StreamEvent::TextDelta { .. })));
    let answer = assemble(&events);
    assert_eq!(
        answer.tool_calls,
        vec![ToolCall {
            id: "call_0".into(),
            name: "get_chapter".into(),
            arguments: json!({"chapter": "1"}),
        }]
    );
    assert!(answer.invalid_tool_calls.is_empty());
    // Cut off by the output limit: an invalid call, never executed.
    let cut = assemble(&decode(
        &request,
        &[
            text_chunk("{\"name\": \"get_chapter\", \"argu"),
            finish_chunk("length"),
        ],
    ));
    assert!(cut.tool_calls.is_empty());
    assert_eq!(cut.invalid_tool_calls.len(), 1);
}

#[test]
fn an_optional_call_passes_text_through_as_it_streams() {
    let request = quick_request(ToolChoice::Auto);
    assert_eq!(request.header(GRAMMAR_HEADER), Some("optional"));
    let mut stream = LocalStream::for_request(&request);
    let first = stream.on_event(SseMessage::data(&text_chunk("The ").to_string()));
    assert_eq!(
        first,
        vec![StreamEvent::TextDelta {
            text: "The ".into()
        }]
    );
    let answer = assemble(&decode(
        &request,
        &[
            text_chunk("  "),
            text_chunk("{\"name\": \"list_chapters\", \"arguments\": {}}"),
            finish_chunk("stop"),
        ],
    ));
    assert_eq!(answer.tool_calls.len(), 1);
    assert_eq!(answer.tool_calls[0].name, "list_chapters");
    assert_eq!(answer.text, "");
}

#[test]
fn a_request_with_the_runtime_gone_fails_cleanly() {
    // A transport error from the runtime (the bridge threw) fails the call like a network
    // error, with its message.
    struct Broken;
    impl LlmTransport for Broken {
        fn send<'a>(
            &'a self,
            _request: &'a draftsmith::llm::HttpRequest,
        ) -> LocalBoxFuture<'a, Result<HttpResponse, TransportError>> {
            async { Err(TransportError::Network("wllama failed to start".into())) }.boxed_local()
        }
    }
    let request = build_request(
        &local_config(false),
        &[Message::user("go")],
        &[],
        &RequestOptions::default(),
    );
    let result = block_on(draftsmith::llm::client::call_model(
        &Broken,
        &NeverSleeper,
        ProviderKind::Local,
        &request,
        draftsmith::llm::client::CallOptions {
            retry: draftsmith::llm::retry::RetryPolicy {
                max_attempts: 1,
                ..Default::default()
            },
            ..Default::default()
        },
        &|| 0,
        &mut || 0.5,
        &mut |_| {},
    ));
    assert!(result
        .unwrap_err()
        .to_string()
        .contains("wllama failed to start"));
}
