//! The events on their way out of the core: sent at once, or held while a mutation's save is
//! being placed, and sent in order right after it (see [`Outbox::hold`]).

use std::cell::{Cell, RefCell};

use crate::env::{Event, EventSink};

/// Owns the events held back, in the order they were sent, and how many holds are on.
#[derive(Default)]
pub(in crate::core) struct Outbox {
    held: RefCell<Vec<Event>>,
    holds: Cell<u32>,
}

impl Outbox {
    /// Send `event` through `sink`, or keep it, after those kept already, while a hold is on.
    pub(in crate::core) fn send(&self, sink: &dyn EventSink, event: Event) {
        if self.holds.get() > 0 {
            self.held.borrow_mut().push(event);
        } else {
            sink.emit(event);
        }
    }

    /// Hold every event (of every client: they stay in order) until the returned hold is
    /// released or dropped, so that what a mutation tells the pages is encoded and sent
    /// while IndexedDB writes its save, not before the save is placed. Holds nest: the
    /// events go once the last one ends.
    pub(in crate::core) fn hold<'a>(&'a self, sink: &'a dyn EventSink) -> Hold<'a> {
        self.holds.set(self.holds.get() + 1);
        Hold { outbox: self, sink }
    }

    fn release(&self, sink: &dyn EventSink) {
        let holds = self.holds.get().saturating_sub(1);
        self.holds.set(holds);
        if holds == 0 {
            let held = std::mem::take(&mut *self.held.borrow_mut());
            for event in held {
                sink.emit(event);
            }
        }
    }
}

/// A hold on the events (see [`Outbox::hold`]); it ends when dropped.
pub(in crate::core) struct Hold<'a> {
    outbox: &'a Outbox,
    sink: &'a dyn EventSink,
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        self.outbox.release(self.sink);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::RecordingSink;

    fn kinds(sink: &RecordingSink) -> Vec<String> {
        sink.take().into_iter().map(|e| e.kind).collect()
    }

    #[test]
    fn held_events_go_in_order_once_the_last_hold_ends() {
        let sink = RecordingSink::default();
        let outbox = Outbox::default();
        outbox.send(&sink, Event::new("a", serde_json::Value::Null));
        assert_eq!(kinds(&sink), ["a"]);
        let outer = outbox.hold(&sink);
        outbox.send(&sink, Event::new("b", serde_json::Value::Null));
        let inner = outbox.hold(&sink);
        outbox.send(&sink, Event::new("c", serde_json::Value::Null));
        drop(inner);
        assert!(kinds(&sink).is_empty(), "held while a hold is on");
        outbox.send(&sink, Event::new("d", serde_json::Value::Null));
        drop(outer);
        assert_eq!(kinds(&sink), ["b", "c", "d"]);
        outbox.send(&sink, Event::new("e", serde_json::Value::Null));
        assert_eq!(kinds(&sink), ["e"]);
    }
}
