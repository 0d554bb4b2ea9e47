//! A page talking to a [`Core`] over the worker protocol, with a scripted model behind a
//! transport that yields like a network: the harness of the run and approval tests.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use draftsmith::core::Env;
use draftsmith::llm::client::{
    HttpResponse, LlmTransport, Scripted, ScriptedTransport, Sleeper, TransportError,
};
use draftsmith::llm::HttpRequest;
use draftsmith::store::{MemoryStore, Store, Table};
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures::executor::block_on;
use futures::future::{self, LocalBoxFuture};
use futures::FutureExt;
use serde_json::{json, Value};

/// The chapter text of [`Page::project`].
pub const TEXT: &str = "Mara climbed the stair. The lamp was dark.";
/// The API key [`Page::configure`] sets.
pub const KEY: &str = "sk-secret-key-123456";

/// A sleeper that never wakes: no timeout or backoff can fire.
pub struct NeverSleeper;

impl Sleeper for NeverSleeper {
    fn sleep(&self, _ms: u64) -> LocalBoxFuture<'static, ()> {
        Box::pin(future::pending())
    }
}

/// Yield to the executor once (`YieldNow(false)`; `YieldNow(true)` is ready at once).
pub use draftsmith::store::faulty::YieldOnce as YieldNow;

/// A scripted model step that computes its answer from the request it gets (the request's
/// JSON body, in the provider's wire format): a scripted model that knows nothing in advance
/// and reads what it was sent, such as the previous tool result in the transcript.
pub type Reaction = Box<dyn FnOnce(&Value) -> Scripted>;

/// A transport that yields to the executor before each response (as a real network does),
/// so other requests are served mid-run. It answers with its reactions, in order, while
/// any are left, then with the scripted responses.
pub struct Yielding(
    pub ScriptedTransport,
    RefCell<VecDeque<Reaction>>,
    RefCell<Vec<HttpRequest>>,
    Option<Rc<Brain>>,
);

/// A scripted model that answers every request from what the request holds (its system
/// prompt, tools and transcript), as a real model would: it knows nothing in advance.
pub type Brain = dyn Fn(&Value) -> Scripted;

impl Yielding {
    /// Replays `responses` in order.
    pub fn new(responses: Vec<Scripted>) -> Self {
        Self(
            ScriptedTransport::new(responses),
            RefCell::default(),
            RefCell::default(),
            None,
        )
    }

    /// Answers each request with the next reaction, computed from the request.
    pub fn reacting(reactions: Vec<Reaction>) -> Self {
        Self(
            ScriptedTransport::new(Vec::new()),
            RefCell::new(reactions.into()),
            RefCell::default(),
            None,
        )
    }

    /// Answers every request with `brain`.
    pub fn thinking(brain: Rc<Brain>) -> Self {
        Self(
            ScriptedTransport::new(Vec::new()),
            RefCell::default(),
            RefCell::default(),
            Some(brain),
        )
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<HttpRequest> {
        self.2.borrow().clone()
    }
}

impl LlmTransport for Yielding {
    fn send<'a>(
        &'a self,
        request: &'a HttpRequest,
    ) -> LocalBoxFuture<'a, Result<HttpResponse, TransportError>> {
        Box::pin(async move {
            YieldNow(false).await;
            self.2.borrow_mut().push(request.clone());
            let reaction = self.1.borrow_mut().pop_front();
            let body: Value = serde_json::from_str(&request.body).unwrap_or(Value::Null);
            let answer = match (reaction, &self.3) {
                (Some(react), _) => Some(react(&body)),
                (None, Some(brain)) => Some(brain(&body)),
                (None, None) => None,
            };
            match answer {
                Some(answer) => {
                    let once = ScriptedTransport::new(vec![answer]);
                    let response = once.send(request).now_or_never();
                    response.unwrap_or_else(|| {
                        Err(TransportError::Network(
                            "the reaction did not answer".into(),
                        ))
                    })
                }
                None => self.0.send(request).await,
            }
        })
    }
}

pub struct Page {
    pub core: Core,
    pub events: Rc<RecordingSink>,
    pub store: Rc<MemoryStore>,
    pub transport: Rc<Yielding>,
    pub next: std::cell::Cell<u64>,
}

pub fn sse(chunks: &[Value]) -> String {
    let mut out: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

pub fn calls(id: &str, name: &str, args: Value) -> Scripted {
    Scripted::sse(
        &sse(&[
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 10}}),
        ]),
        50,
    )
}

pub fn says(text: &str) -> Scripted {
    Scripted::sse(
        &sse(&[
            json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ]),
        50,
    )
}

impl Page {
    pub fn new(responses: Vec<Scripted>) -> Self {
        Self::on(
            Rc::new(MemoryStore::new()),
            responses,
            Rc::new(NeverSleeper),
        )
    }

    /// A page whose model answers each request with the next reaction, computed from the
    /// request it gets.
    pub fn reacting(reactions: Vec<Reaction>) -> Self {
        Self::with_transport(
            Rc::new(MemoryStore::new()),
            Yielding::reacting(reactions),
            Rc::new(NeverSleeper),
        )
    }

    /// A page whose model is `brain` (see [`Brain`]), on `store`.
    pub fn thinking(store: Rc<MemoryStore>, brain: Rc<Brain>) -> Self {
        Self::with_transport(store, Yielding::thinking(brain), Rc::new(NeverSleeper))
    }

    pub fn on(store: Rc<MemoryStore>, responses: Vec<Scripted>, sleeper: Rc<dyn Sleeper>) -> Self {
        Self::with_transport(store, Yielding::new(responses), sleeper)
    }

    fn with_transport(
        store: Rc<MemoryStore>,
        transport: Yielding,
        sleeper: Rc<dyn Sleeper>,
    ) -> Self {
        let events = Rc::new(RecordingSink::default());
        let transport = Rc::new(transport);
        let core = Core::new(Env {
            clock: Rc::new(ManualClock::new(1_000)),
            ids: Rc::new(SequentialIds::new("id")),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: events.clone(),
            store: store.clone(),
        })
        .with_llm(transport.clone(), sleeper);
        Self {
            core,
            events,
            store,
            transport,
            next: std::cell::Cell::new(1),
        }
    }

    pub async fn send_async(&self, kind: &str, params: Value) -> Value {
        let id = self.next.get() + 1;
        self.next.set(id);
        let text = json!({"id": id, "type": kind, "params": params}).to_string();
        serde_json::from_str(&self.core.handle_text(&text).await).unwrap()
    }

    pub fn send(&self, kind: &str, params: Value) -> Value {
        block_on(self.send_async(kind, params))
    }

    pub fn ok(&self, kind: &str, params: Value) -> Value {
        let r = self.send(kind, params.clone());
        assert_eq!(r["ok"], true, "{kind} {params} -> {r}");
        r["result"].clone()
    }

    pub fn err(&self, kind: &str, params: Value) -> (String, String) {
        let r = self.send(kind, params.clone());
        assert_eq!(r["ok"], false, "{kind} {params} -> {r}");
        (
            r["error"]["code"].as_str().unwrap().to_string(),
            r["error"]["message"].as_str().unwrap().to_string(),
        )
    }

    pub fn project(&self) -> String {
        let p = self.ok(
            "create_project",
            json!({"name": "Lighthouse", "chapters": [{"title": "The Stair", "text": TEXT}]}),
        );
        p["chapters"][0]["id"].as_str().unwrap().to_string()
    }

    /// A project of three short chapters (The Stair, The Lamp, The Storm).
    #[allow(dead_code)]
    pub fn three_chapters(&self) {
        self.ok(
            "create_project",
            json!({"name": "Lighthouse", "chapters": [
                {"title": "The Stair", "text": "Mara climbed the stair."},
                {"title": "The Lamp", "text": "The lamp was dark."},
                {"title": "The Storm", "text": "The storm broke."}
            ]}),
        );
    }

    /// The names of the chapter files under `manuscripts/`, in order.
    #[allow(dead_code)]
    pub fn manuscript_files(&self) -> Vec<String> {
        self.ok(
            "execute",
            json!({"tool": "list_files", "args": {"directory": "manuscripts"}}),
        )["data"]["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect()
    }

    pub fn configure(&self) {
        self.ok(
            "set_settings",
            json!({"provider": "openai", "baseUrl": "http://model.test/v1", "model": "m", "apiKey": KEY}),
        );
    }

    pub fn text(&self) -> String {
        self.ok("get_chapter", json!({}))["text"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// The `run` events' types, in order.
    pub fn run_events(&self) -> Vec<Value> {
        self.events
            .peek()
            .into_iter()
            .filter(|e| e.kind == "run")
            .map(|e| e.data)
            .collect()
    }

    /// The payload of the first event of type `kind` the page heard.
    pub fn first_event(&self, kind: &str) -> Value {
        self.events
            .peek()
            .into_iter()
            .find(|e| e.kind == kind)
            .map(|e| e.data)
            .unwrap_or_else(|| panic!("no `{kind}` event"))
    }

    /// Everything the page and the store have seen, as text.
    pub fn everything_seen(&self) -> String {
        let mut seen: String = self
            .events
            .peek()
            .iter()
            .map(|e| e.to_json())
            .collect::<Vec<_>>()
            .join("\n");
        for table in [Table::Meta, Table::Audit, Table::History, Table::Projects] {
            for record in block_on(self.store.get_all(table)).unwrap() {
                seen.push_str(&record.to_string());
            }
        }
        seen
    }
}

/// How many successful calls of `tool` the audit log holds.
#[allow(dead_code)]
pub fn count_audit(store: &MemoryStore, tool: &str) -> usize {
    block_on(store.get_all(Table::Audit))
        .unwrap()
        .iter()
        .filter(|r| r["tool"] == tool && r["status"] == "success")
        .count()
}

/// The tool results of a model request (OpenAI wire format), in order, as (tool name,
/// result): a tool message names its call, and the call names the tool.
#[allow(dead_code)]
pub fn tool_results(body: &Value) -> Vec<(String, Value)> {
    let messages = body["messages"].as_array().unwrap();
    let name_of = |id: &Value| {
        messages
            .iter()
            .filter_map(|m| m["tool_calls"].as_array())
            .flatten()
            .find(|c| &c["id"] == id)
            .and_then(|c| c["function"]["name"].as_str())
            .unwrap_or("")
            .to_string()
    };
    messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                name_of(&m["tool_call_id"]),
                serde_json::from_str(m["content"].as_str().unwrap_or("null"))
                    .unwrap_or(Value::Null),
            )
        })
        .collect()
}
