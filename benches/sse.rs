//! Server-Sent Events parsing cost: is it linear in the events?
//!
//! Two OpenAI-style streams carry the same tool-call arguments: one in N argument deltas, one
//! in 16×N deltas (pieces a sixteenth the size, so 16× more events). Each is fed to
//! `SseParser` in realistic 1–4 KB chunks; the median of several runs is reported, with the
//! cost ratio of the second stream to the first. Linear parsing keeps it at about 16× or
//! below (the per-event envelope dominates; the argument text is the same).
//!
//! Then the whole decoding of one agent turn, as the model client runs it (bytes →
//! `SseParser` → `ProviderStream` → `Assembler`), on the OpenAI and Anthropic streams the
//! browser benchmark (`www/bench/peers.js`) compares with eventsource-parser: 600 characters
//! of text and three tool calls, streamed in pieces of 3 to 8 characters.
//!
//! A plain `main` (no harness): it prints the numbers and asserts nothing about time.
//!
//! ```sh
//! cargo bench --bench sse
//! ```

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    native::run();
}

/// `Instant::now()` panics on wasm32; there is nothing to measure there.
#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
#[path = "../tests/common/rng.rs"]
mod rng;

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::hint::black_box;
    use std::time::{Duration, Instant};

    use draftsmith::llm::sse::SseParser;
    use draftsmith::llm::{Assembler, ProviderKind, ProviderStream, SseMessage};
    use serde_json::json;

    use super::rng::Rng;

    /// Deltas in the coarse stream.
    const DELTAS: usize = 4_000;
    /// Characters of argument text per coarse delta (the fine stream's are 16× smaller).
    const PIECE_CHARS: usize = 64;
    const RUNS: usize = 15;

    const WORDS: &[&str] = &[
        "Café",
        "—",
        "«",
        "Oui",
        "»",
        "🐉",
        "日本語",
        "the",
        "lamp",
        "turned",
        "all",
        "night",
        "harbour",
        "\"quoted\"",
        "rain",
        "stairs",
    ];

    /// The arguments of one long `insert_text` call, as characters.
    fn arguments(chars: usize) -> Vec<char> {
        let mut rng = Rng(0x5353_4531);
        let mut text = String::from("{\"chapter\": 3, \"text\": \"");
        while text.chars().count() < chars - 2 {
            text.push_str(rng.pick::<&str>(WORDS));
            text.push(' ');
        }
        let mut all: Vec<char> = text.chars().take(chars - 2).collect();
        all.extend(['"', '}']);
        all
    }

    /// An OpenAI chat-completions stream sending `args` in pieces of `piece` characters.
    fn stream(args: &[char], piece: usize) -> (Vec<u8>, usize) {
        let mut out = String::new();
        let mut events = 0;
        out.push_str(concat!(
            "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,",
            "\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",",
            "\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":",
            "{\"name\":\"insert_text\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n"
        ));
        for chunk in args.chunks(piece) {
            let fragment: String = chunk.iter().collect();
            let escaped = serde_json::to_string(&fragment).unwrap_or_default();
            out.push_str(concat!(
                "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,",
                "\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,",
                "\"function\":{\"arguments\":"
            ));
            out.push_str(&escaped);
            out.push_str("}}]},\"finish_reason\":null}]}\n\n");
            events += 1;
        }
        out.push_str("data: [DONE]\n\n");
        (out.into_bytes(), events + 2)
    }

    /// Chunk boundaries of 1–4 KB, as a network would deliver them.
    fn chunk_ends(len: usize, rng: &mut Rng) -> Vec<usize> {
        let mut ends = Vec::new();
        let mut at = 0;
        while at < len {
            at = (at + rng.range(1024, 4096)).min(len);
            ends.push(at);
        }
        ends
    }

    /// Parses the stream in the given chunks; returns the events seen.
    fn parse(bytes: &[u8], ends: &[usize]) -> usize {
        let mut parser = SseParser::new();
        let mut events = 0;
        let mut start = 0;
        for &end in ends {
            events += black_box(parser.push(black_box(&bytes[start..end]))).len();
            start = end;
        }
        events + parser.finish().len()
    }

    /// The median time of `runs` runs of `work`, after one warm-up run; says so when `work`
    /// does not give `want`.
    fn median<T: PartialEq + std::fmt::Debug>(
        runs: usize,
        want: T,
        mut work: impl FnMut() -> T,
    ) -> Duration {
        let mut times = Vec::with_capacity(runs);
        for run in 0..=runs {
            let start = Instant::now();
            let got = work();
            let elapsed = start.elapsed();
            if got != want {
                println!("unexpected: {got:?}, wanted {want:?}");
            }
            if run > 0 {
                times.push(elapsed);
            }
        }
        times.sort();
        times[times.len() / 2]
    }

    fn report(label: &str, bytes: &[u8], events: usize, chunks: usize, time: Duration) {
        let secs = time.as_secs_f64();
        println!(
            "{label}: {events} events, {:.2} MB in {chunks} chunks: median {:.2} ms ({:.0} MB/s, {:.0} ns/event)",
            bytes.len() as f64 / 1e6,
            secs * 1e3,
            bytes.len() as f64 / 1e6 / secs,
            secs * 1e9 / events as f64,
        );
    }

    /// Prose of about `chars` characters.
    fn prose(rng: &mut Rng, chars: usize) -> String {
        let mut text = String::new();
        let mut count = 0;
        while count < chars {
            if !text.is_empty() {
                text.push(' ');
            }
            let word = rng.pick::<&str>(WORDS);
            text.push_str(word);
            count += word.chars().count() + 1;
        }
        text
    }

    /// `text` cut into pieces of 3 to 8 characters.
    fn pieces(rng: &mut Rng, text: &str) -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        let mut out = Vec::new();
        let mut at = 0;
        while at < chars.len() {
            let end = (at + rng.range(3, 8)).min(chars.len());
            out.push(chars[at..end].iter().collect());
            at = end;
        }
        out
    }

    /// One agent turn: text, then a small edit, a long insertion and a navigation.
    fn turn(rng: &mut Rng) -> (String, Vec<(&'static str, String)>) {
        let text = prose(rng, 600);
        let calls = vec![
            (
                "update_manuscript",
                json!({"searchText": prose(rng, 80), "replacementText": prose(rng, 120),
                       "description": "heavier rain"})
                .to_string(),
            ),
            (
                "insert_text",
                json!({"chapter": 3, "position": "end", "text": prose(rng, 6000)}).to_string(),
            ),
            (
                "navigate_to_text",
                json!({"text": prose(rng, 40)}).to_string(),
            ),
        ];
        (text, calls)
    }

    /// The turn as an OpenAI chat-completions stream.
    fn openai_turn(rng: &mut Rng, text: &str, calls: &[(&str, String)]) -> String {
        let head = concat!(
            "{\"id\":\"chatcmpl-AqX1\",\"object\":\"chat.completion.chunk\",\"created\":1736940000,",
            "\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_f2cd28694a\",",
            "\"choices\":[{\"index\":0,\"delta\":"
        );
        let line = |delta: &str, finish: &str| {
            format!("data: {head}{delta},\"logprobs\":null,\"finish_reason\":{finish}}}],\"usage\":null}}\n\n")
        };
        let mut out = line("{\"role\":\"assistant\",\"content\":\"\"}", "null");
        for piece in pieces(rng, text) {
            out.push_str(&line(&json!({"content": piece}).to_string(), "null"));
        }
        for (index, (name, arguments)) in calls.iter().enumerate() {
            let start = json!({"tool_calls": [{"index": index, "id": format!("call_{}", index + 1),
                "type": "function", "function": {"name": name, "arguments": ""}}]});
            out.push_str(&line(&start.to_string(), "null"));
            for piece in pieces(rng, arguments) {
                let delta =
                    json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]});
                out.push_str(&line(&delta.to_string(), "null"));
            }
        }
        out.push_str(&line("{}", "\"tool_calls\""));
        out.push_str("data: [DONE]\n\n");
        out
    }

    /// The turn as an Anthropic Messages stream.
    fn anthropic_turn(rng: &mut Rng, text: &str, calls: &[(&str, String)]) -> String {
        let event = |kind: &str, data: serde_json::Value| {
            let mut data = data;
            data["type"] = json!(kind);
            format!("event: {kind}\ndata: {data}\n\n")
        };
        let mut out = event(
            "message_start",
            json!({"message": {"id": "msg_01", "type": "message", "role": "assistant",
                "content": [], "model": "claude-sonnet-4-5", "stop_reason": null,
                "stop_sequence": null, "usage": {"input_tokens": 1024, "output_tokens": 2}}}),
        );
        out += &event(
            "content_block_start",
            json!({"index": 0, "content_block": {"type": "text", "text": ""}}),
        );
        for piece in pieces(rng, text) {
            out += &event(
                "content_block_delta",
                json!({"index": 0, "delta": {"type": "text_delta", "text": piece}}),
            );
        }
        out += &event("content_block_stop", json!({"index": 0}));
        for (i, (name, arguments)) in calls.iter().enumerate() {
            let index = i + 1;
            out += &event(
                "content_block_start",
                json!({"index": index, "content_block": {"type": "tool_use",
                    "id": format!("call_{index}"), "name": name, "input": {}}}),
            );
            for piece in pieces(rng, arguments) {
                out += &event(
                    "content_block_delta",
                    json!({"index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}),
                );
            }
            out += &event("content_block_stop", json!({"index": index}));
        }
        out += &event(
            "message_delta",
            json!({"delta": {"stop_reason": "tool_use", "stop_sequence": null},
                "usage": {"output_tokens": 2000}}),
        );
        out += &event("message_stop", json!({}));
        out
    }

    /// Decodes a whole stream as the model client does; returns the text length and calls.
    fn decode(kind: ProviderKind, bytes: &[u8], ends: &[usize]) -> (usize, usize) {
        let mut parser = SseParser::new();
        let mut decoder = ProviderStream::new(kind);
        let mut assembler = Assembler::new();
        let mut events = Vec::new();
        let mut fold = |message: SseMessage<'_>| {
            decoder.on_event_into(message, &mut events);
            for event in events.drain(..) {
                assembler.push(&event);
            }
        };
        let mut start = 0;
        for &end in ends {
            parser.feed(black_box(&bytes[start..end]), &mut fold);
            start = end;
        }
        parser.finish_with(&mut fold);
        for event in decoder.finish() {
            assembler.push(&event);
        }
        let answer = black_box(assembler.finish());
        (answer.text.len(), answer.tool_calls.len())
    }

    fn turns() {
        let mut rng = Rng(0x5455_524E);
        for (kind, label) in [
            (ProviderKind::Openai, "OpenAI"),
            (ProviderKind::Anthropic, "Anthropic"),
        ] {
            let (text, calls) = turn(&mut rng);
            let body = match kind {
                ProviderKind::Anthropic => anthropic_turn(&mut rng, &text, &calls),
                _ => openai_turn(&mut rng, &text, &calls),
            };
            let ends = chunk_ends(body.len(), &mut rng);
            let events = body.matches("\n\n").count();
            let time = median(RUNS * 4, (text.len(), calls.len()), || {
                decode(kind, body.as_bytes(), &ends)
            });
            println!(
                "{label} turn (decoded and assembled): {events} events, {:.0} KB: median {:.1} µs ({:.0} ns/event)",
                body.len() as f64 / 1e3,
                time.as_secs_f64() * 1e6,
                time.as_secs_f64() * 1e9 / events as f64,
            );
        }
    }

    pub fn run() {
        turns();
        let args = arguments(DELTAS * PIECE_CHARS);
        let mut rng = Rng(0x4348_554E_4B53);
        let (coarse, coarse_events) = stream(&args, PIECE_CHARS);
        let (fine, fine_events) = stream(&args, PIECE_CHARS / 16);
        let coarse_ends = chunk_ends(coarse.len(), &mut rng);
        let fine_ends = chunk_ends(fine.len(), &mut rng);

        let coarse_time = median(RUNS, coarse_events, || parse(&coarse, &coarse_ends));
        let fine_time = median(RUNS, fine_events, || parse(&fine, &fine_ends));
        report(
            &format!("{DELTAS} deltas of {PIECE_CHARS} chars"),
            &coarse,
            coarse_events,
            coarse_ends.len(),
            coarse_time,
        );
        report(
            &format!("{} deltas of {} chars", DELTAS * 16, PIECE_CHARS / 16),
            &fine,
            fine_events,
            fine_ends.len(),
            fine_time,
        );
        println!(
            "16x more deltas cost {:.1}x ({:.1}x the bytes; linear is at most 16x)",
            fine_time.as_secs_f64() / coarse_time.as_secs_f64(),
            fine.len() as f64 / coarse.len() as f64,
        );
    }
}
