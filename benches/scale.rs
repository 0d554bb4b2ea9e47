//! The project at the sizes writers reach: generated prose of 10,000, 100,000 and 1,000,000
//! words (1, 10 and 100 chapters), and memories of 1,000, 10,000 and 100,000 notes, through
//! the whole core (`Core::handle_text` on the in-memory store).
//!
//! A plain `main` (no harness): it prints one line per metric and size, then the growth from
//! the smallest size to each larger one, and asserts nothing about time.
//!
//! ```sh
//! cargo bench --bench scale
//! ```
//!
//! Each operation is timed on its own with `std::time::Instant`; the median over its
//! repetitions is reported. What runs per keystroke or per tool call (a keystroke, an agent's
//! `update_manuscript`, `search_memory`, the editor-context block) should not grow with the
//! project beyond the chapter it touches; the rest (opening, searching and analysing the whole
//! manuscript, exporting it) may grow with it.

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
    use std::rc::Rc;
    use std::time::{Duration, Instant};

    use draftsmith::core::Env;
    use draftsmith::store::MemoryStore;
    use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
    use futures::executor::block_on;
    use serde_json::{json, Value};

    use super::rng::Rng;

    const WORDS: [usize; 3] = [10_000, 100_000, 1_000_000];
    const NOTES: [usize; 3] = [1_000, 10_000, 100_000];
    /// Words per chapter (so 1, 10 and 100 chapters).
    const CHAPTER_WORDS: usize = 10_000;

    const VOCABULARY: [&str; 40] = [
        "the", "keeper", "climbed", "stair", "lamp", "sea", "storm", "answered", "slow", "grey",
        "Mara", "Tobin", "harbour", "night", "rope", "salt", "window", "light", "turned", "cold",
        "boat", "rocks", "wind", "said", "quietly", "before", "after", "letter", "iron", "door",
        "gulls", "tide", "waited", "again", "under", "over", "bell", "rang", "far", "ship",
    ];

    fn core(store: Rc<MemoryStore>, name: &str) -> Core {
        Core::new(Env {
            clock: Rc::new(ManualClock::new(1_700_000_000_000)),
            ids: Rc::new(SequentialIds::new(name)),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: Rc::new(RecordingSink::default()),
            store,
        })
    }

    fn send(core: &Core, kind: &str, params: Value) -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        let response: Value = serde_json::from_str(&block_on(core.handle_text(&text)))
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(response["ok"], true, "{kind}: {response}");
        response["result"].clone()
    }

    fn tool(core: &Core, name: &str, args: Value) -> Value {
        let result = send(
            core,
            "execute",
            json!({"tool": name, "args": args, "origin": "agent:bench"}),
        );
        assert_eq!(result["status"], "success", "{name}: {result}");
        result
    }

    /// `words` words of generated prose: sentences of 6–18 words, paragraphs of 3–7.
    fn prose(rng: &mut Rng, words: usize) -> String {
        let mut text = String::with_capacity(words * 6);
        let mut written = 0;
        while written < words {
            for _ in 0..rng.range(3, 7) {
                let n = rng.range(6, 18).min(words - written).max(1);
                for i in 0..n {
                    let word = *rng.pick(&VOCABULARY);
                    if i == 0 {
                        let mut chars = word.chars();
                        if let Some(first) = chars.next() {
                            text.extend(first.to_uppercase());
                            text.push_str(chars.as_str());
                        }
                    } else {
                        text.push(' ');
                        text.push_str(word);
                    }
                }
                text.push_str(". ");
                written += n;
                if written >= words {
                    break;
                }
            }
            text.push_str("\n\n");
        }
        text
    }

    fn median(mut times: Vec<Duration>) -> Duration {
        times.sort();
        times[times.len() / 2]
    }

    fn time(reps: usize, mut f: impl FnMut(usize)) -> Duration {
        median(
            (0..reps)
                .map(|i| {
                    let started = Instant::now();
                    f(i);
                    started.elapsed()
                })
                .collect(),
        )
    }

    fn fmt(d: Duration) -> String {
        let us = d.as_secs_f64() * 1e6;
        if us < 1_000.0 {
            format!("{us:.0} µs")
        } else {
            format!("{:.2} ms", us / 1_000.0)
        }
    }

    /// The timings of one manuscript size, by metric.
    fn manuscript(words: usize) -> Vec<(&'static str, Duration)> {
        let mut rng = Rng(words as u64);
        // The first chapter opens with a mark an agent's edit replaces back and forth.
        let chapters: Vec<Value> = (0..words.div_ceil(CHAPTER_WORDS))
            .map(|i| {
                let mark = if i == 0 { "[mark-a] " } else { "" };
                let text = format!("{mark}{}", prose(&mut rng, CHAPTER_WORDS));
                json!({"title": format!("Chapter {}", i + 1), "text": text})
            })
            .collect();
        let store = Rc::new(MemoryStore::new());
        let writer = core(Rc::clone(&store), "w");
        let project = send(
            &writer,
            "create_project",
            json!({"name": "Scale", "chapters": chapters}),
        );
        let id = project["id"].as_str().unwrap_or_default().to_string();
        drop(writer);
        let mut out = Vec::new();
        // Opening it from the store in a core that has not seen it.
        let mut opened = None;
        out.push((
            "open project (cold)",
            time(3, |i| {
                let fresh = core(Rc::clone(&store), &format!("o{i}"));
                send(&fresh, "open_project", json!({"id": id}));
                opened = Some(fresh);
            }),
        ));
        let core = opened.unwrap_or_else(|| panic!("no core"));
        out.push((
            "search_manuscript, literal",
            time(5, |_| {
                tool(
                    &core,
                    "search_manuscript",
                    json!({"query": "keeper climbed"}),
                );
            }),
        ));
        out.push((
            "search_manuscript, regex",
            time(5, |_| {
                tool(
                    &core,
                    "search_manuscript",
                    json!({"query": "gulls? (rang|waited)", "regex": true}),
                );
            }),
        ));
        out.push((
            "run_analysis (full)",
            time(3, |_| {
                tool(&core, "run_analysis", json!({"interpret": false}));
            }),
        ));
        out.push((
            "export_project",
            time(3, |_| {
                send(&core, "export_project", json!({}));
            }),
        ));
        // Typing in the middle of the first chapter.
        let chapter = send(&core, "get_chapter", json!({}));
        let chapter_id = chapter["id"].as_str().unwrap_or_default().to_string();
        let mut version = chapter["version"].as_u64().unwrap_or(0);
        let middle = chapter["text"].as_str().unwrap_or_default().chars().count() / 2;
        out.push((
            "keystroke",
            time(100, |i| {
                let result = send(
                    &core,
                    "apply_user_change",
                    json!({"chapter": chapter_id, "baseVersion": version,
                        "changes": [{"retain": middle + i}, {"insert": "x"}]}),
                );
                version = result["applied"]["version"].as_u64().unwrap_or(version);
            }),
        ));
        out.push((
            "update_manuscript (agent)",
            time(20, |i| {
                tool(
                    &core,
                    "update_manuscript",
                    json!({"searchText": if i % 2 == 0 { "[mark-a]" } else { "[mark-b]" },
                        "replacementText": if i % 2 == 0 { "[mark-b]" } else { "[mark-a]" }}),
                );
            }),
        ));
        // The block a run's prompt carries, from the project as the core holds it.
        out.push((
            "editor-context block",
            time(50, |_| {
                let block = send(&core, "editor_context", json!({}));
                assert!(!block["block"].as_str().unwrap_or_default().is_empty());
            }),
        ));
        out
    }

    /// The timings of one memory size.
    fn memory(notes: usize) -> Vec<(&'static str, Duration)> {
        let mut rng = Rng(notes as u64 + 7);
        let store = Rc::new(MemoryStore::new());
        let core = core(store, "m");
        send(&core, "create_project", json!({"name": "Memory"}));
        let mut written = 0;
        while written < notes {
            let batch: Vec<Value> = (written..(written + 1_000).min(notes))
                .map(|i| json!({"text": prose(&mut rng, 40), "noteType": "fact", "tags": [format!("t{}", i % 50)]}))
                .collect();
            written += batch.len();
            send(&core, "write_memory_notes", json!({"notes": batch}));
        }
        let queries = ["keeper lamp", "storm harbour", "Mara letter", "tide bell"];
        vec![(
            "search_memory",
            time(40, |i| {
                tool(
                    &core,
                    "search_memory",
                    json!({"query": queries[i % queries.len()]}),
                );
            }),
        )]
    }

    fn report(what: &str, sizes: &[usize], unit: &str, runs: Vec<Vec<(&'static str, Duration)>>) {
        println!("{what}:");
        for (m, (metric, _)) in runs[0].iter().enumerate() {
            let cells: Vec<String> = sizes
                .iter()
                .zip(&runs)
                .map(|(size, run)| format!("{size} {unit}: {}", fmt(run[m].1)))
                .collect();
            let base = runs[0][m].1.as_secs_f64().max(1e-9);
            let growth: Vec<String> = runs[1..]
                .iter()
                .map(|run| format!("{:.2}x", run[m].1.as_secs_f64() / base))
                .collect();
            println!(
                "  {metric:<28} {}   growth from the smallest: {}",
                cells.join(", "),
                growth.join(", ")
            );
        }
    }

    pub fn run() {
        let runs: Vec<_> = WORDS.iter().map(|&w| manuscript(w)).collect();
        report("manuscript", &WORDS, "words", runs);
        let runs: Vec<_> = NOTES.iter().map(|&n| memory(n)).collect();
        report("memory", &NOTES, "notes", runs);
    }
}
