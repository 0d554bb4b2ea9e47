//! Server-Sent Events parsing cost: is it linear in the events?
//!
//! Two OpenAI-style streams carry the same tool-call arguments: one in N argument deltas, one
//! in 16×N deltas (pieces a sixteenth the size, so 16× more events). Each is fed to
//! `SseParser` in realistic 1–4 KB chunks; the median of several runs is reported, with the
//! cost ratio of the second stream to the first. Linear parsing keeps it at about 16× or
//! below (the per-event envelope dominates; the argument text is the same).
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

    /// The median time of parsing the stream, after one warm-up run.
    fn median(bytes: &[u8], ends: &[usize], want_events: usize) -> Duration {
        let mut times = Vec::with_capacity(RUNS);
        for run in 0..=RUNS {
            let start = Instant::now();
            let events = parse(bytes, ends);
            let elapsed = start.elapsed();
            if events != want_events {
                println!("unexpected: {events} events, wanted {want_events}");
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

    pub fn run() {
        let args = arguments(DELTAS * PIECE_CHARS);
        let mut rng = Rng(0x4348_554E_4B53);
        let (coarse, coarse_events) = stream(&args, PIECE_CHARS);
        let (fine, fine_events) = stream(&args, PIECE_CHARS / 16);
        let coarse_ends = chunk_ends(coarse.len(), &mut rng);
        let fine_ends = chunk_ends(fine.len(), &mut rng);

        let coarse_time = median(&coarse, &coarse_ends, coarse_events);
        let fine_time = median(&fine, &fine_ends, fine_events);
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
