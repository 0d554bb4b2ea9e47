//! What watched-entity monitoring adds to a keystroke: `apply_user_change` through the whole
//! core on a 5 MB chapter, with nothing watched and with five watched entities (a character,
//! a two-word character, an item, a location, a rule), typing a sentence that names one of
//! them in the middle of the chapter; and `Monitor::scan` alone on the same text.
//!
//! A plain `main` (no harness): it prints one line per metric and asserts nothing about time.
//!
//! ```sh
//! cargo bench --bench monitor
//! ```

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    native::run();
}

/// `Instant::now()` panics on wasm32; there is nothing to measure there.
#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::rc::Rc;
    use std::time::{Duration, Instant};

    use draftsmith::core::Env;
    use draftsmith::memory::monitor::Monitor;
    use draftsmith::memory::{EntityType, Priority, WatchedEntity};
    use draftsmith::project::Text;
    use draftsmith::store::MemoryStore;
    use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
    use futures::executor::block_on;
    use serde_json::{json, Value};

    const KEYS: usize = 400;
    const TYPED: &str = "Then Marra lit the lamp without any blood at all, and Mara slept. ";
    const WATCHED: &[(&str, &str)] = &[
        ("Mara", "character"),
        ("Old Tom", "character"),
        ("silver key", "item"),
        ("Greyhaven", "location"),
        ("Magic needs blood", "rule"),
    ];

    fn fmt(d: Duration) -> String {
        let us = d.as_secs_f64() * 1e6;
        if us < 1_000.0 {
            format!("{us:.1} µs")
        } else {
            format!("{:.2} ms", us / 1_000.0)
        }
    }

    fn send(core: &Core, kind: &str, params: Value) -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        let response: Value = serde_json::from_str(&block_on(core.handle_text(&text)))
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(response["ok"], true, "{kind}: {response}");
        response["result"].clone()
    }

    fn prose(bytes: usize) -> String {
        let sentence = "The lamp turned all night and the sea answered, slow and grey. ";
        let mut text = String::with_capacity(bytes + sentence.len());
        while text.len() < bytes {
            text.push_str(sentence);
            if text.len() % 700 < sentence.len() {
                text.push('\n');
            }
        }
        text
    }

    /// Median and p90 of `KEYS` keystrokes through the core.
    fn keystrokes(text: &str, watch: bool) -> (Duration, Duration, usize) {
        let events = Rc::new(RecordingSink::default());
        let core = Core::new(Env {
            clock: Rc::new(ManualClock::new(1_700_000_000_000)),
            ids: Rc::new(SequentialIds::new("k")),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: events.clone(),
            store: Rc::new(MemoryStore::new()),
        });
        let project = send(
            &core,
            "create_project",
            json!({"name": "Bench", "chapters": [{"title": "One", "text": text}]}),
        );
        let chapter = project["chapters"][0]["id"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let mut version = project["chapters"][0]["version"].as_u64().unwrap_or(0);
        if watch {
            for (name, kind) in WATCHED {
                send(
                    &core,
                    "execute",
                    json!({"tool": "watch_entity", "origin": "agent:b",
                           "args": {"name": name, "type": kind, "reason": "bench"}}),
                );
            }
        }
        events.take();
        let start = text.chars().count() / 2;
        let typed: Vec<char> = TYPED.chars().collect();
        let mut times = Vec::with_capacity(KEYS);
        for i in 0..KEYS {
            let at = start + i;
            let params = json!({"chapter": chapter, "baseVersion": version,
                "changes": [{"retain": at}, {"insert": typed[i % typed.len()].to_string()}]});
            let began = Instant::now();
            let result = send(&core, "apply_user_change", params);
            times.push(began.elapsed());
            version = result["version"].as_u64().unwrap_or(version + 1);
        }
        let suggestions = events
            .take()
            .iter()
            .filter(|e| e.kind == "suggestion")
            .count();
        times.sort();
        (times[KEYS / 2], times[KEYS * 9 / 10], suggestions)
    }

    pub fn run() {
        let text = prose(5 * 1024 * 1024);
        let (plain, plain90, _) = keystrokes(&text, false);
        let (watched, watched90, events) = keystrokes(&text, true);
        println!(
            "apply_user_change on a 5 MB chapter, nothing watched: median {} (p90 {}) over {KEYS} keystrokes",
            fmt(plain),
            fmt(plain90)
        );
        println!(
            "apply_user_change on a 5 MB chapter, 5 watched entities: median {} (p90 {}); {events} suggestion events",
            fmt(watched),
            fmt(watched90)
        );
        // The scan alone, for one keystroke in the middle of the chapter.
        let watched: Vec<WatchedEntity> = WATCHED
            .iter()
            .enumerate()
            .map(|(i, (name, kind))| WatchedEntity {
                id: format!("w{i}"),
                project: "p".into(),
                name: name.to_string(),
                entity_type: serde_json::from_value::<EntityType>(json!(kind))
                    .unwrap_or(EntityType::Character),
                reason: "bench".into(),
                priority: Priority::Medium,
                created_ms: 0,
            })
            .collect();
        let built = Instant::now();
        let monitor = Monitor::new(&watched, &[]);
        let build = built.elapsed();
        let mut with_line = text.clone();
        let mid = with_line.len() / 2;
        let mid = (mid..with_line.len())
            .find(|i| with_line.is_char_boundary(*i))
            .unwrap_or(0);
        with_line.insert_str(mid, TYPED);
        let rope = Text::from_str(&with_line);
        let at = with_line[..mid].chars().count() + 11; // after "Then Marra "
        let runs = 2_000;
        let mut times = Vec::with_capacity(runs);
        let mut found = 0;
        for _ in 0..runs {
            let began = Instant::now();
            found = monitor.scan(&rope, &[(at - 1, at)], Some(at)).len();
            times.push(began.elapsed());
        }
        times.sort();
        println!(
            "Monitor::scan of one keystroke in a 5 MB chapter (5 watched entities, 700-char lines): median {} (p90 {}), {found} finding(s); building the monitor: {}",
            fmt(times[runs / 2]),
            fmt(times[runs * 9 / 10]),
            fmt(build)
        );
    }
}
