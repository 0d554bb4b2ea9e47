//! Replays a recorded provider stream through its decoder and the assembler.
//!
//! ```sh
//! cargo run --example replay -- --provider openai < examples/streams/openai_tool_call.sse
//! cargo run --example replay -- --provider anthropic < examples/streams/anthropic_tool_call.sse
//! cargo run --example replay -- --provider gemini < examples/streams/gemini_tool_call.sse
//! ```
//!
//! Prints one JSON line per neutral event, then the assembled answer:
//! `{"text", "tool_calls": [{"id", "name", "arguments"}], "invalid_tool_calls": [{"id", "name",
//! "raw_arguments", "reason"}], "finish_reason", "usage", "error": null or {"message"}}`.
//!
//! Standard input is read as bytes and fed to the crate's incremental SSE parser in 1 KB
//! chunks, as the network would deliver it.

use std::io::Read;
use std::process::ExitCode;

use draftsmith::llm::sse::SseParser;
use draftsmith::llm::{
    Assembler, FinishReason, InvalidToolCall, ProviderKind, ProviderStream, SseMessage, ToolCall,
    Usage,
};
use serde::Serialize;

/// The last line: the assembled answer.
#[derive(Serialize)]
struct Summary<'a> {
    text: &'a str,
    tool_calls: &'a [ToolCall],
    invalid_tool_calls: &'a [InvalidToolCall],
    finish_reason: Option<&'a str>,
    usage: Option<Usage>,
    error: Option<ErrorLine<'a>>,
}

/// The error of the last line.
#[derive(Serialize)]
struct ErrorLine<'a> {
    message: &'a str,
}

fn main() -> ExitCode {
    let mut kind = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--provider", Some(v)) => match v.parse::<ProviderKind>() {
                Ok(k) => kind = Some(k),
                Err(e) => return usage(&e),
            },
            (other, _) => return usage(&format!("unknown argument '{other}'")),
        }
    }
    let Some(kind) = kind else {
        return usage("--provider is required");
    };
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut input) {
        return usage(&format!("cannot read stdin: {e}"));
    }

    let mut stream = ProviderStream::new(kind);
    let mut assembler = Assembler::new();
    let mut events = Vec::new();
    let mut parser = SseParser::new();
    let mut sse = Vec::new();
    for chunk in input.chunks(1024) {
        sse.extend(parser.push(chunk));
    }
    sse.extend(parser.finish());
    for event in &sse {
        events.extend(stream.on_event(SseMessage::new(event.event.as_deref(), &event.data)));
    }
    events.extend(stream.finish());
    for event in &events {
        println!("{}", serde_json::to_string(event).unwrap_or_default());
        assembler.push(event);
    }

    let answer = assembler.finish();
    let last = Summary {
        text: &answer.text,
        tool_calls: &answer.tool_calls,
        invalid_tool_calls: &answer.invalid_tool_calls,
        finish_reason: answer.finish_reason.as_ref().map(FinishReason::as_str),
        usage: answer.usage,
        error: answer.error.as_deref().map(|message| ErrorLine { message }),
    };
    let last = serde_json::to_string(&last).unwrap_or_default();
    println!("{last}");
    ExitCode::SUCCESS
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("replay: {problem}");
    eprintln!(
        "usage: cargo run --example replay -- --provider openai|anthropic|gemini < stream.sse"
    );
    ExitCode::from(2)
}
