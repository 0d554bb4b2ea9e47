//! Structured output: `run {…, output: {schema, name?}}` ends with a JSON object valid
//! against the schema, asked for in each provider's documented way, checked, and asked for
//! once more when invalid.

#![cfg(not(target_arch = "wasm32"))]

use std::rc::Rc;

use draftsmith::llm::client::Scripted;
use draftsmith::llm::{
    build_request, Message, OutputFormat, ProviderConfig, ProviderKind, RequestOptions,
};
use draftsmith::store::MemoryStore;
use draftsmith::tools::ToolRegistry;
use serde_json::{json, Value};

mod common;
use common::page::{sse, Page};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "mood": {"type": "string", "enum": ["calm", "tense"]},
            "words": {"type": "integer", "minimum": 0}
        },
        "required": ["title", "mood", "words"]
    })
}

fn format() -> OutputFormat {
    OutputFormat {
        name: "chapter_card".into(),
        schema: schema(),
    }
}

fn config(kind: ProviderKind) -> ProviderConfig {
    ProviderConfig {
        kind,
        base_url: "https://models.example.com/v1".into(),
        model: match kind {
            ProviderKind::Local => "/models/m.gguf".into(),
            _ => "m-1".into(),
        },
        api_key: Some("sk-test".into()),
        extra_headers: Vec::new(),
        local: Default::default(),
    }
}

fn body(kind: ProviderKind, tools: &[&draftsmith::tools::ToolDefinition]) -> Value {
    let request = build_request(
        &config(kind),
        &[
            Message::system("Be brief."),
            Message::user("Describe chapter 1."),
        ],
        tools,
        &RequestOptions {
            stream: true,
            output: Some(format()),
            ..RequestOptions::default()
        },
    );
    serde_json::from_str(&request.body).unwrap()
}

#[test]
fn each_provider_asks_for_the_schema_its_own_way() {
    let registry = ToolRegistry::standard();
    let quick = registry.toolset("quick").unwrap();
    // OpenAI: `response_format` of type `json_schema`, alongside tools.
    let openai = body(ProviderKind::Openai, &quick);
    assert_eq!(openai["response_format"]["type"], "json_schema");
    assert_eq!(
        openai["response_format"]["json_schema"]["name"],
        "chapter_card"
    );
    assert_eq!(openai["response_format"]["json_schema"]["schema"], schema());
    assert!(openai["tools"].is_array());
    // Gemini without tools: `generationConfig.responseMimeType` and `responseSchema`.
    let gemini = body(ProviderKind::Gemini, &[]);
    assert_eq!(
        gemini["generationConfig"]["responseMimeType"],
        "application/json"
    );
    assert_eq!(
        gemini["generationConfig"]["responseSchema"]["required"],
        json!(["title", "mood", "words"])
    );
    // With tools it cannot: the loop offers an output tool instead (`output_by_tool`).
    assert!(draftsmith::llm::output_by_tool(
        &config(ProviderKind::Gemini),
        true
    ));
    assert!(!draftsmith::llm::output_by_tool(
        &config(ProviderKind::Gemini),
        false
    ));
    // Anthropic always takes it as a tool.
    assert!(draftsmith::llm::output_by_tool(
        &config(ProviderKind::Anthropic),
        false
    ));
    assert!(!draftsmith::llm::output_by_tool(
        &config(ProviderKind::Openai),
        true
    ));
    // A local model: this crate's grammar of the schema, not the server's response format.
    let local = body(ProviderKind::Local, &[]);
    assert!(local.get("response_format").is_none());
    let grammar = local["grammar"].as_str().unwrap();
    assert!(grammar.contains("\\\"mood\\\""), "{grammar}");
    assert!(grammar.contains("\\\"tense\\\""), "{grammar}");
    // With tools and a template without them: a call, or the answer.
    let local_tools = body(ProviderKind::Local, &quick);
    let grammar = local_tools["grammar"].as_str().unwrap();
    assert!(grammar.contains("\\\"read_chapter\\\"") && grammar.contains("\\\"mood\\\""));
    assert!(local_tools["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("give it as only a JSON object of this schema"));
}

fn says(text: &str) -> Scripted {
    Scripted::sse(
        &sse(&[
            json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ]),
        64,
    )
}

fn calls(name: &str, args: Value) -> Scripted {
    Scripted::sse(
        &sse(&[
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]),
        64,
    )
}

/// A model that reads the chapter first, then answers from what the tool gave it: the card's
/// title from the chapter's title, its words counted in the text it read.
fn card_model(invalid_first: usize) -> Rc<dyn Fn(&Value) -> Scripted> {
    let answered = std::cell::Cell::new(0usize);
    Rc::new(move |body: &Value| {
        let messages = body["messages"].as_array().unwrap();
        let last = messages.last().unwrap();
        assert!(
            body["response_format"]["json_schema"]["schema"].is_object(),
            "{body}"
        );
        if last["role"] == "user"
            && !last["content"]
                .as_str()
                .unwrap()
                .starts_with("Your answer was not valid")
        {
            return calls("read_chapter", json!({"chapter": "1"}));
        }
        let read = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "tool")
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default();
        let result: Value = serde_json::from_str(read).unwrap_or_default();
        let text = result["data"]["text"].as_str().unwrap_or_default();
        let words = text
            .lines()
            .map(|l| l.split('│').next_back().unwrap_or_default())
            .flat_map(str::split_whitespace)
            .count();
        let title = result["data"]["chapterTitle"]
            .as_str()
            .unwrap_or("untitled");
        answered.set(answered.get() + 1);
        if answered.get() <= invalid_first {
            // A small model's slip: the mood is not one of the choices.
            return says(&format!("```json\n{{\"title\": \"{title}\", \"mood\": \"gloomy\", \"words\": {words}}}\n```"));
        }
        says(&format!(
            "Here it is: {{\"title\": \"{title}\", \"mood\": \"calm\", \"words\": {words}}}"
        ))
    })
}

fn page(invalid_first: usize) -> Page {
    let page = Page::thinking(Rc::new(MemoryStore::new()), card_model(invalid_first));
    page.ok(
        "create_project",
        json!({"name": "P", "chapters": [{"title": "The Stair", "text": "Mara climbed the stair.\nThe lamp was dark."}]}),
    );
    page.configure();
    page
}

fn run_with_output(page: &Page) -> Value {
    page.ok(
        "run",
        json!({"prompt": "Make a card for chapter 1.", "toolset": "quick",
               "output": {"schema": schema(), "name": "chapter_card"}}),
    )
}

#[test]
fn a_run_reads_with_tools_then_ends_with_a_valid_structured_answer() {
    let page = page(0);
    let run = run_with_output(&page);
    assert_eq!(run["status"], "finished", "{run}");
    assert_eq!(
        run["output"],
        json!({"title": "The Stair", "mood": "calm", "words": 8})
    );
}

#[test]
fn an_invalid_answer_is_asked_for_once_more_with_the_reason() {
    let page = page(1);
    let run = run_with_output(&page);
    assert_eq!(run["status"], "finished", "{run}");
    assert_eq!(run["output"]["mood"], "calm");
    let requests = page.transport.requests();
    let asked: Value = serde_json::from_str(&requests.last().unwrap().body).unwrap();
    let again = asked["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(again.starts_with("Your answer was not valid"), "{again}");
    assert!(again.contains("mood"), "{again}");
}

#[test]
fn two_invalid_answers_end_the_run_with_invalid_output() {
    let page = page(2);
    let run = run_with_output(&page);
    assert_eq!(run["status"], "invalid_output", "{run}");
    assert!(run["message"].as_str().unwrap().contains("mood"), "{run}");
    assert!(run.get("output").is_none());
}

#[test]
fn a_bad_output_request_is_refused_before_anything_runs() {
    let page = page(0);
    for (output, field) in [
        (json!({"schema": {"type": "array"}}), "output.schema"),
        (
            json!({"schema": schema(), "name": "no spaces"}),
            "output.name",
        ),
        (json!({"schema": schema(), "extra": 1}), "extra"),
    ] {
        let (code, message) = page.err("run", json!({"prompt": "x", "output": output}));
        assert_eq!(code, "invalid_params");
        assert!(message.contains(field), "{message}");
    }
    assert!(page.transport.requests().is_empty());
}

/// An Anthropic stream of one `tool_use` block.
fn anthropic_tool_use(name: &str, input: Value) -> Scripted {
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "model": "m-1", "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    let text: String = events
        .iter()
        .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
        .collect();
    Scripted::sse(&text, 64)
}

#[test]
fn anthropic_gives_the_answer_as_a_call_of_the_output_tool() {
    // The model reads its tools: the output tool is among them, and it answers through it.
    let page = Page::thinking(
        Rc::new(MemoryStore::new()),
        Rc::new(|body: &Value| {
            let tools = body["tools"].as_array().unwrap();
            let card = tools
                .iter()
                .find(|t| t["name"] == "chapter_card")
                .expect("the output tool");
            assert_eq!(card["input_schema"], schema());
            assert!(body.get("response_format").is_none());
            anthropic_tool_use(
                "chapter_card",
                json!({"title": "The Stair", "mood": "tense", "words": 4}),
            )
        }),
    );
    page.ok(
        "create_project",
        json!({"name": "P", "chapters": [{"title": "The Stair", "text": "Mara climbed the stair."}]}),
    );
    page.ok(
        "set_settings",
        json!({"provider": "anthropic", "baseUrl": "https://api.anthropic.com", "model": "claude-sonnet-4-5", "apiKey": "sk-ant-test-123456"}),
    );
    let run = run_with_output(&page);
    assert_eq!(run["status"], "finished", "{run}");
    assert_eq!(
        run["output"],
        json!({"title": "The Stair", "mood": "tense", "words": 4})
    );
    assert_eq!(page.transport.requests().len(), 1);
}
