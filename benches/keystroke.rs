//! The writer's keystroke through the whole core: `apply_user_change` served by
//! `Core::handle_text` and saved to the in-memory store, on a 5 KB and on a 5 MB chapter.
//! This is what the page pays per keystroke apart from IndexedDB itself (the browser
//! benchmark adds that).
//!
//! A plain `main` (no harness): it prints one line per metric and asserts nothing about time.
//!
//! ```sh
//! cargo bench --bench keystroke
//! ```
//!
//! Each keystroke is timed on its own with `std::time::Instant`; the median (and the 90th
//! percentile, and the slowest: a keystroke that also writes its chapter's checkpoint) over
//! 300 keystrokes is reported, and then the bytes the store is given per keystroke (the
//! JSON size of the records put, over 20 more keystrokes, untimed). After each keystroke the
//! core does its idle work (`Core::idle`, untimed), as the worker has it do once it has
//! answered. Then 10,000 more keystrokes are typed without a pause (no checkpoint of the
//! writer's pause comes between them), and 300 more are timed: their median next to the
//! first one's shows whether a keystroke's cost grows with the typing before it.

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    native::run();
}

/// `Instant::now()` panics on wasm32; there is nothing to measure there.
#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::cell::Cell;
    use std::rc::Rc;
    use std::time::{Duration, Instant};

    use draftsmith::core::Env;
    use draftsmith::store::{Batch, MemoryStore, Op, Store, StoreFuture, Table};
    use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
    use futures::executor::block_on;
    use serde_json::{json, Value};

    const KEYS: usize = 300;
    const COUNTED: usize = 20;
    /// The keystrokes typed, untimed, between the first timed ones and the last.
    const TYPED_BETWEEN: usize = 10_000;

    /// The in-memory store, counting the bytes of what it is given to write.
    #[derive(Default)]
    struct Counting {
        inner: MemoryStore,
        counting: Cell<bool>,
        bytes: Cell<usize>,
    }

    impl Store for Counting {
        fn get<'a>(&'a self, t: Table, k: &'a str) -> StoreFuture<'a, Option<Value>> {
            self.inner.get(t, k)
        }
        fn get_all(&self, t: Table) -> StoreFuture<'_, Vec<Value>> {
            self.inner.get_all(t)
        }
        fn get_by_index<'a>(
            &'a self,
            t: Table,
            i: &'a str,
            v: Value,
        ) -> StoreFuture<'a, Vec<Value>> {
            self.inner.get_by_index(t, i, v)
        }
        fn commit(&self, batch: Batch) -> StoreFuture<'_, ()> {
            if !self.counting.get() {
                return self.inner.commit(batch);
            }
            let bytes: usize = batch
                .ops
                .iter()
                .map(|op| match op {
                    Op::Put { value, .. } => {
                        let mut json = Vec::new();
                        value.write_json(&mut json).map_or(0, |()| json.len())
                    }
                    _ => 0,
                })
                .sum();
            self.bytes.set(self.bytes.get() + bytes);
            self.inner.commit(batch)
        }
    }

    fn fmt(d: Duration) -> String {
        let us = d.as_secs_f64() * 1e6;
        if us < 1_000.0 {
            format!("{us:.0} µs")
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

    fn bench(label: &str, bytes: usize) {
        let store = Rc::new(Counting::default());
        let core = Core::new(Env {
            clock: Rc::new(ManualClock::new(1_700_000_000_000)),
            ids: Rc::new(SequentialIds::new("k")),
            decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
            events: Rc::new(RecordingSink::default()),
            store: store.clone(),
        });
        let text = prose(bytes);
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
        let len = text.chars().count();
        let mut typed = 0;
        // One keystroke in the middle of the chapter (one char further each time), then the
        // core's idle work: the time of the keystroke.
        let mut key = || {
            let params = json!({"chapter": chapter, "baseVersion": version,
                "changes": [{"retain": len / 2 + typed}, {"insert": "x"}], "tag": format!("t{typed}")});
            let started = Instant::now();
            let result = send(&core, "apply_user_change", params);
            let took = started.elapsed();
            core.idle();
            version = result["version"].as_u64().unwrap_or(version + 1);
            typed += 1;
            took
        };
        let mut times: Vec<Duration> = (0..KEYS).map(|_| key()).collect();
        // The bytes written (untimed: counting costs).
        store.counting.set(true);
        for _ in 0..COUNTED {
            key();
        }
        store.counting.set(false);
        times.sort();
        println!(
            "apply_user_change through the core ({label}): median {} over {KEYS} keystrokes (p90 {}, max {}), {} bytes written per keystroke",
            fmt(times[KEYS / 2]),
            fmt(times[KEYS * 9 / 10]),
            fmt(times[KEYS - 1]),
            store.bytes.get() / COUNTED
        );
        for _ in 0..TYPED_BETWEEN {
            key();
        }
        let mut later: Vec<Duration> = (0..KEYS).map(|_| key()).collect();
        later.sort();
        println!(
            "apply_user_change through the core ({label}), after {TYPED_BETWEEN} more keystrokes without a pause: median {} (p90 {}) = {:.2}x the first {KEYS}",
            fmt(later[KEYS / 2]),
            fmt(later[KEYS * 9 / 10]),
            later[KEYS / 2].as_secs_f64() / times[KEYS / 2].as_secs_f64()
        );
    }

    pub fn run() {
        bench("5 KB chapter", 5 * 1024);
        bench("5 MB chapter", 5 * 1024 * 1024);
    }
}
