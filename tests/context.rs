//! Long conversations within the model's context window: a scripted server that counts each
//! request's tokens with a real tokenizer and refuses any over its limit, as a real one does.

#![cfg(not(target_arch = "wasm32"))]

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use draftsmith::llm::client::Scripted;
use draftsmith::llm::tokens::{estimate_text, is_context_overflow};
use draftsmith::store::{MemoryStore, Store, Table};
use futures::executor::block_on;
use serde_json::{json, Value};

mod common;
use common::page::{sse, Page};

/// The server's context window, in tokens.
const LIMIT: usize = 8_192;

/// Tokens of a request as the server counts them: every message's text and tool calls, and
/// the tools, with OpenAI's `o200k_base` tokenizer.
fn real_tokens(body: &Value) -> usize {
    let bpe = tiktoken_rs::o200k_base_singleton();
    let count = |text: &str| bpe.encode_ordinary(text).len();
    let messages: usize = body["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .map(|m| {
                    4 + count(m["content"].as_str().unwrap_or_default())
                        + m["tool_calls"]
                            .as_array()
                            .map(|calls| calls.iter().map(|c| count(&c.to_string())).sum())
                            .unwrap_or(0)
                })
                .sum()
        })
        .unwrap_or(0);
    let tools = body["tools"]
        .as_array()
        .map_or(0, |t| count(&Value::Array(t.clone()).to_string()));
    messages + tools
}

fn says(text: &str) -> Scripted {
    Scripted::sse(
        &sse(&[
            json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 10}}),
        ]),
        64,
    )
}

fn calls(name: &str, args: Value) -> Scripted {
    Scripted::sse(
        &sse(&[
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c", "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]),
        64,
    )
}

/// What the server saw.
#[derive(Default)]
struct Seen {
    refused: Cell<usize>,
    summaries: Cell<usize>,
    largest: Cell<usize>,
}

/// A model behind a server with a [`LIMIT`]-token window. It reads its prompt: asked to
/// condense a conversation, it lists the chapters the transcript mentions; asked about a
/// chapter, it reads it, then tells how the chapter's text it was given begins.
fn server(seen: Rc<Seen>) -> Rc<dyn Fn(&Value) -> Scripted> {
    Rc::new(move |body: &Value| {
        let tokens = real_tokens(body);
        if tokens > LIMIT {
            seen.refused.set(seen.refused.get() + 1);
            return Scripted::json(
                400,
                &json!({"error": {"message": format!("This model's maximum context length is {LIMIT} tokens. However, your messages resulted in {tokens} tokens."), "type": "invalid_request_error", "code": "context_length_exceeded"}}).to_string(),
            );
        }
        seen.largest.set(seen.largest.get().max(tokens));
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let system = messages[0]["content"].as_str().unwrap_or_default();
        if system.starts_with("You condense") {
            seen.summaries.set(seen.summaries.get() + 1);
            let transcript = messages[1]["content"].as_str().unwrap_or_default();
            let mut chapters: Vec<String> = transcript
                .split("chapter ")
                .skip(1)
                .filter_map(|rest| {
                    let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
                    (!n.is_empty()).then_some(n)
                })
                .collect();
            chapters.sort();
            chapters.dedup();
            return says(&format!(
                "The writer asked how chapters {} begin; each was read and answered.",
                chapters.join(", ")
            ));
        }
        let last = messages.last().cloned().unwrap_or_default();
        match last["role"].as_str() {
            Some("tool") => {
                let result: Value = serde_json::from_str(last["content"].as_str().unwrap_or("{}"))
                    .unwrap_or_default();
                let text = result["data"]["text"].as_str().unwrap_or_default();
                // `read_chapter` numbers its lines: "  1│ text".
                let first = text
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .split('│')
                    .next_back()
                    .unwrap_or_default()
                    .trim();
                says(&format!(
                    "It begins: {}",
                    first.chars().take(60).collect::<String>()
                ))
            }
            _ => {
                let asked = last["content"].as_str().unwrap_or_default();
                let n: String = asked
                    .split("chapter ")
                    .nth(1)
                    .unwrap_or("1")
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                calls("read_chapter", json!({"chapter": n}))
            }
        }
    })
}

/// A project of eight long chapters (about 1,300 tokens each).
fn long_project(page: &Page) {
    let chapters: Vec<Value> = (1..=8)
        .map(|n| {
            let text: String = (0..60)
                .map(|i| format!("Line {i} of chapter {n}: the keeper climbed the stair and counted the steps.\n"))
                .collect();
            json!({"title": format!("Part {n}"), "text": format!("Chapter {n} opens at dawn.\n{text}")})
        })
        .collect();
    page.ok(
        "create_project",
        json!({"name": "Long", "chapters": chapters}),
    );
}

fn configure(page: &Page, extra: Value) {
    let mut settings = json!({"provider": "openai", "baseUrl": "http://model.test/v1", "model": "small-8k",
        "contextWindow": LIMIT, "maxTokens": 512, "toolset": "quick"});
    for (k, v) in extra.as_object().unwrap() {
        settings[k] = v.clone();
    }
    page.ok("set_settings", settings);
}

/// The kept conversation of the assistant, as stored.
fn kept(store: &MemoryStore) -> Vec<Value> {
    block_on(store.get_all(Table::Meta))
        .unwrap()
        .into_iter()
        .find(|r| {
            r["id"]
                .as_str()
                .is_some_and(|id| id.starts_with("conversation:"))
        })
        .map(|r| r["messages"].as_array().cloned().unwrap_or_default())
        .unwrap_or_default()
}

/// Every call has exactly one result right after its message, and every result a call.
fn assert_valid(messages: &[Value]) {
    let mut open: Vec<String> = Vec::new();
    for m in messages {
        match m["role"].as_str().unwrap() {
            "assistant" => {
                assert!(open.is_empty(), "calls without results before {m}");
                open = m["tool_calls"]
                    .as_array()
                    .map(|c| {
                        c.iter()
                            .map(|c| c["id"].as_str().unwrap().to_string())
                            .collect()
                    })
                    .unwrap_or_default();
            }
            "tool" => {
                let id = m["tool_call_id"].as_str().unwrap();
                assert!(
                    open.contains(&id.to_string()),
                    "a result without its call: {m}"
                );
                open.retain(|o| o != id);
            }
            _ => assert!(open.is_empty(), "calls without results before {m}"),
        }
    }
    assert!(open.is_empty());
}

#[test]
fn forty_turns_with_large_tool_results_all_finish_within_the_window() {
    let seen = Rc::new(Seen::default());
    let store = Rc::new(MemoryStore::new());
    let page = Page::thinking(store.clone(), server(seen.clone()));
    long_project(&page);
    configure(&page, json!({}));
    for turn in 0..40 {
        let chapter = turn % 8 + 1;
        let run = page.ok(
            "run",
            json!({"prompt": format!("How does chapter {chapter} begin?")}),
        );
        assert_eq!(run["status"], "finished", "turn {turn}: {run}");
        assert_eq!(
            run["text"],
            format!("It begins: Chapter {chapter} opens at dawn."),
            "turn {turn}"
        );
        let conversation = kept(&store);
        assert_valid(&conversation);
    }
    // The conversation was compacted along the way, and what is kept fits the window.
    let compacted: Vec<Value> = page
        .run_events()
        .into_iter()
        .filter(|e| e["type"] == "compacted")
        .collect();
    assert!(compacted.len() >= 3, "{}", compacted.len());
    assert!(compacted
        .iter()
        .all(|c| c["after"].as_u64() < c["before"].as_u64()));
    assert!(compacted.iter().any(|c| c["removed"].as_u64() > Some(0)));
    assert!(seen.summaries.get() >= 1);
    assert_eq!(
        seen.refused.get(),
        0,
        "the estimate let an oversized request through"
    );
    assert!(seen.largest.get() <= LIMIT);
    // The summary kept what the turns were about.
    let conversation = kept(&store);
    let first = conversation[0]["text"].as_str().unwrap();
    assert!(
        first.starts_with("[EARLIER CONVERSATION, SUMMARIZED]"),
        "{first}"
    );
    assert!(first.contains("chapters"), "{first}");
}

#[test]
fn without_compaction_the_same_conversation_fails_on_the_servers_limit() {
    let seen = Rc::new(Seen::default());
    let page = Page::thinking(Rc::new(MemoryStore::new()), server(seen.clone()));
    long_project(&page);
    configure(&page, json!({"compaction": false}));
    let mut failed = None;
    for turn in 0..40 {
        let run = page.ok(
            "run",
            json!({"prompt": format!("How does chapter {} begin?", turn % 8 + 1)}),
        );
        if run["status"] != "finished" {
            failed = Some((turn, run));
            break;
        }
    }
    let (turn, run) = failed.expect("some turn fails");
    assert_eq!(run["status"], "failed");
    assert!(
        run["message"]
            .as_str()
            .unwrap()
            .contains("maximum context length"),
        "{run}"
    );
    assert!(turn < 10, "{turn}");
    assert!(seen.refused.get() >= 1);
}

#[test]
fn a_refusal_the_estimate_did_not_foresee_compacts_and_retries_once() {
    // The settings claim a far larger window than the server has: only the server's error
    // can tell, and the run compacts and goes on.
    let seen = Rc::new(Seen::default());
    let page = Page::thinking(Rc::new(MemoryStore::new()), server(seen.clone()));
    long_project(&page);
    configure(&page, json!({"contextWindow": 1_000_000}));
    for turn in 0..16 {
        let run = page.ok(
            "run",
            json!({"prompt": format!("How does chapter {} begin?", turn % 8 + 1)}),
        );
        assert_eq!(run["status"], "finished", "turn {turn}: {run}");
    }
    assert!(seen.refused.get() >= 1, "the server never refused");
    assert!(page.run_events().iter().any(|e| e["type"] == "compacted"));
}

#[test]
fn settings_of_the_context_window_are_checked() {
    let page = Page::new(Vec::new());
    for (patch, field) in [
        (json!({"contextWindow": 10}), "contextWindow"),
        (json!({"keepVerbatim": 0.95}), "keepVerbatim"),
        (json!({"keepVerbatim": 0.05}), "keepVerbatim"),
    ] {
        let (code, message) = page.err("set_settings", patch.clone());
        assert_eq!(code, "invalid_params", "{patch}");
        assert!(message.contains(field), "{patch}: {message}");
    }
    let s = page.ok(
        "set_settings",
        json!({"contextWindow": 32_000, "keepVerbatim": 0.3, "compaction": false}),
    );
    assert_eq!(s["contextWindow"], 32_000);
    assert_eq!(s["keepVerbatim"], 0.3);
    assert_eq!(s["compaction"], false);
}

#[test]
fn each_providers_overflow_error_is_recognised() {
    for message in [
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
        "prompt is too long: 210000 tokens > 200000 maximum",
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
        "Requested tokens (5003) exceed context window of 4096",
        "the request exceeds the available context size, try increasing it",
    ] {
        assert!(is_context_overflow(message), "{message}");
    }
    for message in [
        "Invalid API key",
        "rate limit exceeded",
        "The model `gpt-9` does not exist",
    ] {
        assert!(!is_context_overflow(message), "{message}");
    }
}

/// The estimate against real tokenizers, on prose, JSON tool results, tool schemas and other
/// scripts: printed (`cargo test --test context -- --nocapture`), and never far below them.
#[test]
fn the_token_estimate_against_real_tokenizers() {
    let registry = draftsmith::tools::ToolRegistry::standard();
    let schemas: String = registry
        .definitions()
        .iter()
        .map(|d| d.parameters.to_string())
        .collect();
    let novel: String = common::novel::full_text(&common::novel::novel());
    let result = json!({"status": "success", "data": {"text": novel.chars().take(6_000).collect::<String>(), "lines": 120}}).to_string();
    let samples = [
        ("English prose", novel.chars().take(20_000).collect::<String>()),
        ("a JSON tool result", result),
        ("tool schemas", schemas),
        ("French", "« Il était une fois », dit-elle, « un phare où l'on comptait les marches. » Élise répondit à peine.".repeat(40)),
        ("Japanese", "灯台守は階段を上り、段を数えた。嵐の夜、灯りは消えていた。".repeat(40)),
    ];
    let seen = RefCell::new(Vec::new());
    for (name, text) in &samples {
        let estimate = estimate_text(text) as f64;
        for (tokenizer, bpe) in [
            ("o200k_base", tiktoken_rs::o200k_base_singleton()),
            ("cl100k_base", tiktoken_rs::cl100k_base_singleton()),
        ] {
            let real = bpe.encode_ordinary(text).len() as f64;
            let error = (estimate - real) / real * 100.0;
            println!("{name:>20} {tokenizer:>12}: real {real:>6}, estimate {estimate:>6} ({error:+.0} %)");
            seen.borrow_mut().push((name, tokenizer, error));
        }
    }
    // Too low would let an oversized request through; too high only compacts early.
    for (name, tokenizer, error) in seen.borrow().iter() {
        assert!(*error > -10.0, "{name} / {tokenizer}: {error:+.0} %");
        assert!(*error < 150.0, "{name} / {tokenizer}: {error:+.0} %");
    }
}
