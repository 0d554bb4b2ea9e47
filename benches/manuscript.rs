//! Manuscript-scale timings: edits, undo and redo on a 5 MB chapter (and on 20 chapters of
//! 250 KB), and the memory of a 10,000-entry history.
//!
//! A plain `main` (no harness): it prints one line per metric and asserts nothing about time.
//!
//! ```sh
//! cargo bench --bench manuscript
//! ```
//!
//! Each operation is timed on its own with `std::time::Instant`; the median (and the 90th
//! percentile) over at least 200 operations is reported.

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
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use draftsmith::commands::history::{History, HistoryLimits};
    use draftsmith::commands::Origin;
    use draftsmith::project::changeset::ChangeSet;
    use draftsmith::project::{Chapter, Project};
    use draftsmith::session::{Session, ToolCall};
    use draftsmith::tools::ToolRegistry;
    use draftsmith::{ManualClock, SequentialIds};
    use serde_json::{json, Value};

    /// Counts live heap bytes, to check `History::memory_bytes` (an estimate) against what a
    /// copy of the history really allocates.
    struct Counting;

    static LIVE: AtomicUsize = AtomicUsize::new(0);

    // SAFETY: forwards to the system allocator; only counts.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
            // SAFETY: same contract as the caller's.
            unsafe { System.alloc(layout) }
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
            // SAFETY: same contract as the caller's.
            unsafe { System.alloc_zeroed(layout) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            // SAFETY: same contract as the caller's.
            unsafe { System.dealloc(ptr, layout) }
        }

        // Forwarded (not the default alloc-copy-free), so that growing big buffers costs
        // what it costs without the counter.
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            // SAFETY: same contract as the caller's.
            let new = unsafe { System.realloc(ptr, layout, new_size) };
            if !new.is_null() {
                LIVE.fetch_add(new_size, Ordering::Relaxed);
                LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            }
            new
        }
    }

    #[global_allocator]
    static ALLOCATOR: Counting = Counting;

    /// Operations timed per metric.
    const OPS: usize = 300;
    /// Entries recorded for the history memory metric.
    const HISTORY_ENTRIES: usize = 10_000;
    const MB: usize = 1024 * 1024;

    use crate::rng::Rng;

    const WORDS: &[&str] = &[
        "the",
        "the",
        "the",
        "a",
        "and",
        "and",
        "of",
        "to",
        "in",
        "she",
        "he",
        "it",
        "was",
        "lamp",
        "sea",
        "harbour",
        "light",
        "keeper",
        "boat",
        "rope",
        "salt",
        "gull",
        "wind",
        "stair",
        "window",
        "morning",
        "night",
        "letter",
        "voice",
        "grey",
        "cold",
        "slow",
        "bright",
        "quiet",
        "turned",
        "counted",
        "waited",
        "whispered",
        "remembered",
        "carried",
        "café",
        "naïve",
        "déjà",
        "façade",
        "Ærø",
        "fjord",
        "Straße",
        "über",
        "海",
        "灯台",
        "—",
        "’tis",
        "o’clock",
        "“again”",
        "“no”",
        "…",
        "🌊",
        "🐚",
        "🚣‍♀️",
    ];
    const NAMES: &[&str] = &["Mara", "Jonas", "Élodie", "Søren", "Ines", "Tomás", "Yuki"];
    const ENDS: &[&str] = &[".", ".", ".", "?", "!", "…", ".”", "?”"];

    fn sentence(rng: &mut Rng, out: &mut String) {
        out.push_str(rng.pick::<&str>(NAMES));
        for _ in 0..6 + rng.below(14) {
            out.push(' ');
            out.push_str(rng.pick::<&str>(WORDS));
            if rng.below(12) == 0 {
                out.push(',');
            }
        }
        out.push_str(rng.pick::<&str>(ENDS));
    }

    /// The unique anchor sentence `i` (no generated prose contains "Anchor").
    fn anchor(i: usize) -> String {
        format!("Anchor {i:05} holds the lamp steady.")
    }

    /// `bytes` of prose in paragraphs, with anchors `first..` sprinkled in evenly: one
    /// every `every` bytes. Returns the text and the next anchor number.
    fn prose(rng: &mut Rng, bytes: usize, first: usize, every: usize) -> (String, usize) {
        let mut text = String::with_capacity(bytes + 1024);
        let mut next = first;
        let mut next_at = every / 2;
        while text.len() < bytes {
            for s in 0..3 + rng.below(5) {
                if s > 0 {
                    text.push(' ');
                }
                if text.len() >= next_at {
                    text.push_str(&anchor(next));
                    text.push(' ');
                    next += 1;
                    next_at += every;
                }
                sentence(rng, &mut text);
            }
            text.push_str("\n\n");
        }
        (text, next)
    }

    struct Fixture {
        label: String,
        session: Session,
        /// Chapter id of each anchor.
        anchors: Vec<String>,
        multi: bool,
    }

    fn one_chapter(rng: &mut Rng) -> Fixture {
        let (text, count) = prose(rng, 5 * MB, 0, 5 * MB / 1_000);
        let chapter = Chapter::new("ch-1", "The Long Chapter", &text);
        Fixture {
            label: format!("{} MB, 1 chapter", size_mb(text.len())),
            session: Session::new(Project::new("p1", "Manuscript", vec![chapter])),
            anchors: vec!["ch-1".to_string(); count],
            multi: false,
        }
    }

    fn twenty_chapters(rng: &mut Rng) -> Fixture {
        let mut chapters = Vec::new();
        let mut anchors = Vec::new();
        let mut next = 0;
        let mut total = 0;
        for c in 0..20 {
            let (text, after) = prose(rng, 250 * 1024, next, 250 * 1024 / 50);
            let id = format!("ch-{}", c + 1);
            anchors.extend((next..after).map(|_| id.clone()));
            next = after;
            total += text.len();
            chapters.push(Chapter::new(id, format!("Part {}", c + 1), &text));
        }
        // Anchor i lives in chapter anchors[i]; take them round-robin so that consecutive
        // edits hit different chapters.
        Fixture {
            label: format!("{} MB, 20 chapters × 250 KB", size_mb(total)),
            session: Session::new(Project::new("p20", "Manuscript", chapters)),
            anchors,
            multi: true,
        }
    }

    fn size_mb(bytes: usize) -> String {
        format!("{:.1}", bytes as f64 / MB as f64)
    }

    fn fmt(d: Duration) -> String {
        let us = d.as_secs_f64() * 1e6;
        if us < 1_000.0 {
            format!("{us:.0} µs")
        } else {
            format!("{:.2} ms", us / 1_000.0)
        }
    }

    fn report(metric: &str, label: &str, mut times: Vec<Duration>) {
        times.sort();
        let median = times[times.len() / 2];
        let p90 = times[times.len() * 9 / 10];
        println!(
            "{metric} ({label}): median {} over {} ops (p90 {})",
            fmt(median),
            times.len(),
            fmt(p90)
        );
    }

    /// The anchors to edit: spread over the whole manuscript, in an order that visits every
    /// chapter.
    fn picks(fixture: &Fixture) -> Vec<usize> {
        let n = fixture.anchors.len();
        assert!(n >= OPS, "only {n} anchors");
        if !fixture.multi {
            return (0..OPS).map(|k| k * n / OPS).collect();
        }
        let per_chapter = n / 20;
        (0..OPS)
            .map(|k| (k % 20) * per_chapter + (k / 20) % per_chapter)
            .collect()
    }

    fn bench_edits(mut fixture: Fixture, registry: &ToolRegistry) {
        let clock = ManualClock::new(1_700_000_000_000);
        let ids = SequentialIds::new("b");
        let label = fixture.label.clone();
        let original: Vec<Chapter> = fixture.session.project.chapters.clone();
        let picks = picks(&fixture);
        let session = &mut fixture.session;

        let mut times = Vec::with_capacity(OPS);
        for (k, i) in picks.into_iter().enumerate() {
            let mut args = json!({
                "searchText": anchor(i),
                "replacementText": format!("Revised anchor {i:05} keeps the lamp “steady” — {k}."),
            });
            if fixture.multi {
                args["chapter"] = json!(fixture.anchors[i]);
            }
            let call = ToolCall {
                id: Some(format!("call-{k}")),
                name: "update_manuscript".into(),
                args,
            };
            clock.advance(1_000);
            let start = Instant::now();
            let outcome =
                session.execute(registry, call, Origin::Agent("bench".into()), &clock, &ids);
            times.push(start.elapsed());
            assert!(outcome.result.is_success(), "{:?}", outcome.result);
        }
        report("update_manuscript", &label, times);

        // The failing case models hit often: a search text that is not there (the error
        // names the closest text, so the whole chapter is searched).
        let mut times = Vec::with_capacity(OPS);
        for k in 0..OPS {
            let mut args = json!({
                "searchText": format!("Anchor {k:05} holds the lantern steadily."),
                "replacementText": "unused",
            });
            if fixture.multi {
                args["chapter"] = json!(fixture.anchors[k]);
            }
            let call = ToolCall {
                id: None,
                name: "update_manuscript".into(),
                args,
            };
            let start = Instant::now();
            let outcome =
                session.execute(registry, call, Origin::Agent("bench".into()), &clock, &ids);
            times.push(start.elapsed());
            assert!(!outcome.result.is_success());
        }
        report("update_manuscript, text not found", &label, times);

        let mut times = Vec::with_capacity(OPS);
        for _ in 0..OPS {
            let start = Instant::now();
            let applied = session.undo(None, Origin::User, &clock, &ids);
            times.push(start.elapsed());
            assert_eq!(applied.map(|a| a.applied.len()), Ok(1));
        }
        report("undo", &label, times);
        let restored = session
            .project
            .chapters
            .iter()
            .zip(&original)
            .all(|(now, was)| now.text() == was.text());
        assert!(restored, "undo did not restore the text");

        let mut times = Vec::with_capacity(OPS);
        for _ in 0..OPS {
            let start = Instant::now();
            let applied = session.redo();
            times.push(start.elapsed());
            assert_eq!(applied.map(|a| a.applied.len()), Ok(1));
        }
        report("redo", &label, times);

        let mut rng = Rng(0xA11CE);
        let mut times = Vec::with_capacity(OPS);
        for _ in 0..OPS {
            let chapter = &session.project.chapters[rng.below(session.project.chapters.len())];
            let (id, version, len) = (chapter.id.clone(), chapter.version(), chapter.len_chars());
            let at = rng.below(len + 1);
            let change = ChangeSet::replace(len, at, at, "x").expect("in range");
            clock.advance(1_000);
            let start = Instant::now();
            let applied = session.apply_user_change(&id, version, change, &clock, &ids);
            times.push(start.elapsed());
            assert!(applied.is_ok(), "{applied:?}");
        }
        report("apply_user_change (1-char insert)", &label, times);

        // The reading tools: a page of a chapter, and searches over the whole manuscript.
        let reads: [(&str, Value); 6] = [
            ("read_chapter (8,000 chars)", json!({"from_line": 100})),
            (
                "search_manuscript, literal",
                json!({"query": "the lantern"}),
            ),
            (
                "search_manuscript, literal, case-sensitive",
                json!({"query": "Anchor 00042", "case_sensitive": true}),
            ),
            (
                "search_manuscript, regex",
                json!({"query": "lan(tern|ding)s?", "regex": true}),
            ),
            // Found in the first chapter, which it makes the active one.
            (
                "navigate_to_text, exact",
                json!({"query": "Anchor 00031 holds the lamp"}),
            ),
            (
                "navigate_to_text, fuzzy",
                json!({"query": "anchor 00031 holds the lamp", "searchType": "fuzzy"}),
            ),
        ];
        for (metric, args) in reads {
            let mut times = Vec::with_capacity(30);
            for _ in 0..30 {
                let name = metric.split([' ', ',']).next().unwrap_or_default();
                let call = ToolCall {
                    id: None,
                    name: name.into(),
                    args: args.clone(),
                };
                let start = Instant::now();
                let outcome =
                    session.execute(registry, call, Origin::Agent("bench".into()), &clock, &ids);
                times.push(start.elapsed());
                assert!(outcome.result.is_success(), "{:?}", outcome.result);
            }
            report(metric, &label, times);
        }
    }

    fn bench_history_memory(rng: &mut Rng) {
        let (text, _) = prose(rng, 5 * MB, 0, MB);
        let label = format!("{} MB chapter", size_mb(text.len()));
        let mut session = Session::new(Project::new(
            "ph",
            "History",
            vec![Chapter::new("ch-1", "One", &text)],
        ));
        drop(text);
        session.history = History::with_limits(HistoryLimits {
            max_groups: 20_000,
            max_bytes: usize::MAX,
        });
        let clock = ManualClock::new(1_700_000_000_000);
        let ids = SequentialIds::new("h");
        let started = Instant::now();
        for k in 0..HISTORY_ENTRIES {
            let chapter = &session.project.chapters[0];
            let (version, len) = (chapter.version(), chapter.len_chars());
            let at = rng.below(len + 1);
            // Mostly one-char typing, sometimes a word, sometimes a small deletion.
            let change = match k % 10 {
                0 => ChangeSet::replace(len, at, (at + 5).min(len), ""),
                1 => ChangeSet::replace(len, at, at, " lantern"),
                _ => ChangeSet::replace(len, at, at, "e"),
            }
            .expect("in range");
            clock.advance(600); // more than the 500 ms typing gap: one group per edit
            session
                .apply_user_change("ch-1", version, change, &clock, &ids)
                .expect("applies");
        }
        let elapsed = started.elapsed();
        let history = &session.history;
        let entries = history.entries().len();
        assert_eq!(entries, HISTORY_ENTRIES);
        assert_eq!(history.undo_groups(), HISTORY_ENTRIES);
        let memory = history.memory_bytes();
        let json = serde_json::to_vec(history).expect("serializes").len();
        let before = LIVE.load(Ordering::Relaxed);
        let copy = history.clone();
        let heap = LIVE.load(Ordering::Relaxed) - before + std::mem::size_of::<History>();
        drop(copy);
        println!(
            "history record ({label}): {entries} entries in {} ({} per entry)",
            fmt(elapsed),
            fmt(elapsed / entries as u32)
        );
        println!(
            "history memory_bytes ({entries} entries, {} groups): {memory} bytes ({:.1} KB), {:.0} bytes per entry",
            history.undo_groups(),
            memory as f64 / 1024.0,
            memory as f64 / entries as f64
        );
        println!(
            "history heap, measured ({entries} entries, a fresh clone): {heap} bytes ({:.1} KB), {:.0} bytes per entry",
            heap as f64 / 1024.0,
            heap as f64 / entries as f64
        );
        println!(
            "history serialized JSON ({entries} entries): {json} bytes ({:.1} KB), {:.0} bytes per entry",
            json as f64 / 1024.0,
            json as f64 / entries as f64
        );
    }

    pub fn run() {
        let registry = ToolRegistry::standard();
        let mut rng = Rng(0x5EED_2024);
        let started = Instant::now();
        let fixture = one_chapter(&mut rng);
        let built = started.elapsed();
        println!(
            "built {} ({} anchors) in {}",
            fixture.label,
            fixture.anchors.len(),
            fmt(built)
        );
        bench_edits(fixture, &registry);
        let fixture = twenty_chapters(&mut rng);
        println!(
            "built {} ({} anchors)",
            fixture.label,
            fixture.anchors.len()
        );
        bench_edits(fixture, &registry);
        bench_history_memory(&mut rng);
        println!("total {}", fmt(started.elapsed()));
    }
}
