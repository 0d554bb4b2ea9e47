//! Memory-scale timings: BM25 search and the context block over 10,000 notes of about 1 KB
//! (10 MB of note text), with the index `Memory` keeps current (a search reads no note text).
//!
//! A plain `main` (no harness): it prints one line per metric and asserts nothing about time.
//!
//! ```sh
//! cargo bench --bench memory
//! ```
//!
//! Each operation is timed on its own with `std::time::Instant`; the median (and the 90th
//! percentile) over 100 operations is reported.

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

    use draftsmith::memory::{Memory, NewNote, NoteType, Scope, SearchQuery};
    use draftsmith::SequentialIds;

    use super::rng::Rng;

    const NOTES: usize = 10_000;
    const NOTE_BYTES: usize = 1_000;
    const RUNS: usize = 100;

    const WORDS: &[&str] = &[
        "the",
        "lamp",
        "turned",
        "all",
        "night",
        "sea",
        "answered",
        "slow",
        "grey",
        "breath",
        "stairs",
        "counted",
        "forty",
        "boat",
        "sail",
        "patched",
        "flag",
        "whispered",
        "harbour",
        "rain",
        "awning",
        "ordered",
        "usual",
        "waited",
        "late",
        "again",
        "smiled",
        "clock",
        "forever",
        "shell",
        "sound",
        "nothing",
        "while",
        "dog",
        "dreamed",
        "letters",
        "storm",
        "rescue",
        "keeper",
        "father",
        "brother",
        "letter",
        "secret",
        "promise",
        "winter",
        "bridge",
        "river",
        "market",
        "café",
        "Greyhaven",
        "海",
        "naïve",
        "Ωmega",
        "lighthouses",
        "stories",
        "of",
        "and",
        "to",
        "in",
        "was",
        "her",
        "his",
        "with",
        "a",
    ];
    const NAMES: &[&str] = &["Mara", "Jonas", "Élodie", "Søren", "Ines", "Tomás", "Yuki"];
    const TAGS: &[&str] = &[
        "mara",
        "jonas",
        "lighthouse",
        "harbour",
        "storm",
        "plot",
        "style",
        "ending",
        "chapter-3",
    ];

    fn note_text(rng: &mut Rng) -> String {
        let mut text = String::with_capacity(NOTE_BYTES + 64);
        while text.len() < NOTE_BYTES {
            text.push_str(rng.pick::<&str>(NAMES));
            for _ in 0..6 + rng.below(14) {
                text.push(' ');
                text.push_str(rng.pick::<&str>(WORDS));
            }
            text.push_str(". ");
        }
        text
    }

    fn fixture() -> Memory {
        let mut rng = Rng(0x4D45_4D4F_5259);
        let ids = SequentialIds::new("n");
        let mut memory = Memory::new();
        memory.ensure_bedside("p", 0, &ids);
        for i in 0..NOTES {
            let tags = (0..rng.below(4))
                .map(|_| rng.pick::<&str>(TAGS).to_string())
                .collect();
            let input = NewNote {
                text: note_text(&mut rng),
                note_type: NoteType::Fact,
                scope: if rng.chance(10) {
                    Scope::Global
                } else {
                    Scope::Project
                },
                tags,
                importance: Some(1 + rng.below(5) as u8),
            };
            if memory.write_note("p", input, i as u64, &ids).is_err() {
                unreachable!("fixture notes are valid");
            }
        }
        memory
    }

    fn fmt(d: Duration) -> String {
        format!("{:.2} ms", d.as_secs_f64() * 1_000.0)
    }

    fn report(metric: &str, mut times: Vec<Duration>) {
        times.sort();
        let median = times[times.len() / 2];
        let p90 = times[times.len() * 9 / 10];
        println!(
            "{metric} ({NOTES} notes of ~{NOTE_BYTES} B): median {} over {} ops (p90 {})",
            fmt(median),
            times.len(),
            fmt(p90)
        );
    }

    fn time(mut f: impl FnMut(usize)) -> Vec<Duration> {
        (0..RUNS)
            .map(|i| {
                let start = Instant::now();
                f(i);
                start.elapsed()
            })
            .collect()
    }

    /// Memory tools called through the core (`execute`, saved to the in-memory store) with
    /// the fixture's notes in memory: what an agent's `write_memory_note` costs beside the
    /// note itself, and its `search_memory` beside the search (the tool call, its audit
    /// record and save, the hits as JSON).
    fn core_tool_calls(memory: &Memory) {
        use draftsmith::core::Env;
        use draftsmith::store::MemoryStore;
        use draftsmith::{Core, ManualClock, RecordingSink};
        use futures::executor::block_on;
        use serde_json::{json, Value};
        use std::rc::Rc;

        let core = Core::new(Env {
            clock: Rc::new(ManualClock::new(1_700_000_000_000)),
            ids: Rc::new(SequentialIds::new("c")),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: Rc::new(RecordingSink::default()),
            store: Rc::new(MemoryStore::default()),
        });
        let send = |kind: &str, params: Value| -> Value {
            let text = json!({"id": 1, "type": kind, "params": params}).to_string();
            let response: Value = serde_json::from_str(&block_on(core.handle_text(&text)))
                .unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert_eq!(response["ok"], true, "{kind}: {response}");
            response["result"].clone()
        };
        send("create_project", json!({"name": "Bench"}));
        let notes: Vec<Value> = memory
            .notes
            .iter()
            .filter(|n| !n.is_bedside())
            .map(|n| json!({"text": n.text, "noteType": "fact", "tags": n.tags}))
            .collect();
        for batch in notes.chunks(500) {
            send("write_memory_notes", json!({ "notes": batch }));
        }
        report(
            "write_memory_note through the core",
            time(|i| {
                let args = json!({"text": format!("Mara keeps the key {i}."), "type": "fact"});
                let result = send(
                    "execute",
                    json!({"tool": "write_memory_note", "args": args, "origin": "agent:bench"}),
                );
                assert_eq!(result["status"], "success", "{result}");
            }),
        );
        // The browser bench's search (`www/bench/memory.js`): two words, the top 10.
        let words = [
            "lamp", "harbour", "rain", "stairs", "boat", "flag", "sea", "night",
        ];
        report(
            "search_memory through the core, 2 words, top 10",
            time(|i| {
                let n = words.len();
                let query = format!("{} {}", words[i % n], words[(i / n + 3) % n]);
                let args = json!({"query": query, "limit": 10});
                let result = send(
                    "execute",
                    json!({"tool": "search_memory", "args": args, "origin": "agent:bench"}),
                );
                assert_eq!(result["status"], "success", "{result}");
            }),
        );
    }

    /// Notes like the browser bench's (`www/bench/memory.js`): words drawn from a Zipf-like
    /// distribution over 40 story words and 768 made-up ones (word k with weight 1 / (k + 1)),
    /// so that a query word is frequent in some notes and rare or absent in most.
    fn zipf_fixture() -> (Memory, Vec<String>) {
        let head = "lighthouse harbour storm lantern keeper gull ledger captain tide rope stair map \
                    fog bell shipwreck letter mara tobias elin greyhaven saltmarsh north night dawn \
                    salt brass chart room secret promise betrayal wreck signal beacon island cliff \
                    boat oar sail compass debt ghost memory";
        let syllables = "ka lo mi ren sa tu vel dor an esh il mor qua bri fen gal";
        let mut words: Vec<String> = head.split_whitespace().map(String::from).collect();
        for a in syllables.split(' ') {
            for b in syllables.split(' ') {
                for c in ["", "th", "n"] {
                    words.push(format!("{a}{b}{c}"));
                }
            }
        }
        let mut cumulative = Vec::with_capacity(words.len());
        let mut total = 0.0;
        for k in 0..words.len() {
            total += 1.0 / (k as f64 + 1.0);
            cumulative.push(total);
        }
        let mut rng = Rng(42);
        let draw = |rng: &mut Rng| {
            let x = (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * total;
            &words[cumulative.partition_point(|&c| c < x).min(words.len() - 1)]
        };
        let inputs: Vec<NewNote> = (0..NOTES)
            .map(|i| {
                let mut text = format!("Note {i}:");
                while text.len() < NOTE_BYTES {
                    text.push(' ');
                    text.push_str(draw(&mut rng));
                }
                NewNote {
                    tags: vec![words[i % 40].clone(), format!("batch-{}", i / 500)],
                    ..NewNote::new(text, NoteType::Observation)
                }
            })
            .collect();
        let mut memory = Memory::new();
        let ids = SequentialIds::new("z");
        memory.ensure_bedside("p", 0, &ids);
        for batch in inputs.chunks(500) {
            if memory.write_notes("p", batch.to_vec(), 1, &ids).is_err() {
                unreachable!("fixture notes are valid");
            }
        }
        memory.catch_up_index();
        let queries = (0..RUNS)
            .map(|_| {
                let a = &words[20 + rng.below(400)];
                let b = &words[20 + rng.below(400)];
                format!("{a} {b}")
            })
            .collect();
        (memory, queries)
    }

    pub fn run() {
        let start = Instant::now();
        let mut memory = fixture();
        let built = start.elapsed();
        let bytes: usize = memory.notes.iter().map(|n| n.text.len()).sum();
        println!(
            "fixture: {} notes, {:.1} MB of text, written one by one in {} ({} per write)",
            memory.notes.len(),
            bytes as f64 / 1e6,
            fmt(built),
            fmt(built / NOTES as u32)
        );
        let start = Instant::now();
        memory.reindex();
        println!(
            "reindex ({NOTES} notes of ~{NOTE_BYTES} B): {}",
            fmt(start.elapsed())
        );
        // The same notes written again in batches of 500 (as `write_memory_notes` does),
        // split into the write and the index catching up.
        let inputs: Vec<NewNote> = memory
            .notes
            .iter()
            .filter(|n| !n.is_bedside())
            .map(|n| NewNote {
                text: n.text.clone(),
                note_type: n.note_type,
                scope: n.scope,
                tags: n.tags.clone(),
                importance: Some(n.importance),
            })
            .collect();
        let mut bulk = Memory::new();
        let ids = SequentialIds::new("b");
        let (mut writing, mut indexing) = (Duration::ZERO, Duration::ZERO);
        for batch in inputs.chunks(500) {
            let start = Instant::now();
            if bulk.write_notes("p", batch.to_vec(), 1, &ids).is_err() {
                unreachable!("fixture notes are valid");
            }
            writing += start.elapsed();
            let start = Instant::now();
            bulk.catch_up_index();
            indexing += start.elapsed();
        }
        println!(
            "bulk write ({NOTES} notes of ~{NOTE_BYTES} B, batches of 500): write_notes {}, catch_up_index {} ({} per note)",
            fmt(writing),
            fmt(indexing),
            fmt(indexing / NOTES as u32)
        );
        let queries = [
            "lighthouse keeper",
            "storm rescue boat",
            "Mara secret promise",
            "café Greyhaven",
        ];
        report(
            "search, 1-3 words",
            time(|i| {
                black_box(memory.search("p", &SearchQuery::text(queries[i % queries.len()])));
            }),
        );
        report(
            "search, tags only",
            time(|_| {
                black_box(memory.search("p", &SearchQuery::tags(["mara", "storm"])));
            }),
        );
        report(
            "search, text and tag",
            time(|i| {
                let q = SearchQuery::text(queries[i % queries.len()]).with_tags(["harbour"]);
                black_box(memory.search("p", &q));
            }),
        );
        let (zipf, zipf_queries) = zipf_fixture();
        report(
            "search, 2 words, notes drawn from 808 words (the browser bench's)",
            time(|i| {
                black_box(zipf.search("p", &SearchQuery::text(&zipf_queries[i])));
            }),
        );
        core_tool_calls(&memory);
        let request = "Rewrite the scene where Mara climbs the lighthouse stairs in the storm \
                       and finds her brother's letter; keep the harbour at night, the lamp and \
                       the promise she made to Jonas in chapter three.";
        report(
            "context block, 30-word request, 2000 tokens",
            time(|_| {
                black_box(memory.context_block("p", request, 2_000));
            }),
        );
    }
}
