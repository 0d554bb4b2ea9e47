//! Text deltas gathered into one event per window.
//!
//! A model streams its text in pieces of a few characters; the page redraws at most once per
//! animation frame, so sending it one message per piece costs a crossing each for nothing. A
//! [`TextBatch`] sends at most one delta per window (the `streamBatchMs` setting, about one
//! frame):
//! - a piece that comes when the last text went out a window ago or more (the first piece of
//!   a model call, say) goes at once, so the first words show without delay;
//! - pieces that come sooner are held and go as one when the window ends: when the next
//!   piece comes after that, or when the window's timer fires ([`TextBatch::due`], on the
//!   run's [`Sleeper`], so native tests drive it);
//! - held text goes before anything else the run reports (a tool call, the end of the model
//!   call), so it is never held back behind a later event, and never lost.
//!
//! A window of 0 sends every piece as it comes. Time is read from the run's clock.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::llm::client::Sleeper;

/// The text of one model call on its way to the page.
#[derive(Debug)]
pub(crate) struct TextBatch {
    window_ms: u64,
    state: RefCell<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The text held (empty when none).
    held: String,
    /// Whether text is held.
    holding: bool,
    /// When text last went out.
    sent_ms: Option<u64>,
    /// The [`TextBatch::due`] waiting for text to be held.
    waker: Option<Waker>,
}

impl TextBatch {
    /// A batch for windows of `window_ms` (0: none).
    pub(crate) fn new(window_ms: u64) -> Self {
        Self {
            window_ms,
            state: RefCell::new(State::default()),
        }
    }

    /// Takes a piece that came at `now_ms`; returns the text to send now, if the window
    /// since text last went out has passed (the held text and this piece), or at once with a
    /// window of 0. A piece sent or held alone is moved, not copied.
    pub(crate) fn push(&self, text: String, now_ms: u64) -> Option<String> {
        if self.window_ms == 0 {
            return Some(text);
        }
        let mut state = self.state.borrow_mut();
        let open = state
            .sent_ms
            .is_none_or(|sent| now_ms.saturating_sub(sent) >= self.window_ms);
        if open {
            state.sent_ms = Some(now_ms);
            state.holding = false;
            if state.held.is_empty() {
                return Some(text);
            }
            let mut out = std::mem::take(&mut state.held);
            out.push_str(&text);
            return Some(out);
        }
        if state.holding {
            state.held.push_str(&text);
        } else {
            state.held = text;
            state.holding = true;
            if let Some(waker) = state.waker.take() {
                waker.wake();
            }
        }
        None
    }

    /// The held text, to send now (before another event, or at the end of the stream).
    pub(crate) fn take(&self) -> Option<String> {
        let mut state = self.state.borrow_mut();
        if !std::mem::take(&mut state.holding) {
            return None;
        }
        Some(std::mem::take(&mut state.held))
    }

    /// Resolves with the held text when its window ends (waiting on `sleeper`, the time read
    /// with `now_ms`); waits for text to be held first.
    pub(crate) async fn due(&self, sleeper: &dyn Sleeper, now_ms: &dyn Fn() -> u64) -> String {
        loop {
            let due_ms = Held(self).await;
            sleeper.sleep(due_ms.saturating_sub(now_ms())).await;
            // Text that went out meanwhile started a new window: wait again.
            let sent = self.state.borrow().sent_ms;
            if sent.map_or(0, |sent| sent + self.window_ms) == due_ms {
                if let Some(text) = self.take() {
                    self.state.borrow_mut().sent_ms = Some(now_ms());
                    return text;
                }
            }
        }
    }
}

/// Resolves, once text is held, with the time its window ends.
struct Held<'a>(&'a TextBatch);

impl Future for Held<'_> {
    type Output = u64;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        let mut state = self.0.state.borrow_mut();
        if state.holding {
            Poll::Ready(state.sent_ms.map_or(0, |sent| sent + self.0.window_ms))
        } else {
            state.waker = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_within_a_window_go_as_one() {
        let batch = TextBatch::new(16);
        // The first piece goes at once; the next ones within its window are held.
        assert_eq!(batch.push("Once ".into(), 100).as_deref(), Some("Once "));
        assert_eq!(batch.push("upon ".into(), 105), None);
        assert_eq!(batch.push("a ".into(), 115), None);
        // The window has passed: all that was held goes, with this piece.
        assert_eq!(
            batch.push("time".into(), 116).as_deref(),
            Some("upon a time")
        );
        assert_eq!(batch.take(), None);
        assert_eq!(batch.push(",".into(), 120), None);
        assert_eq!(batch.take().as_deref(), Some(","));
        assert_eq!(batch.take(), None);
        assert_eq!(batch.push(" the".into(), 200).as_deref(), Some(" the"));
    }

    #[test]
    fn a_window_of_zero_sends_each_delta() {
        let batch = TextBatch::new(0);
        assert_eq!(batch.push("a".into(), 1).as_deref(), Some("a"));
        assert_eq!(batch.push("b".into(), 1).as_deref(), Some("b"));
        assert_eq!(batch.take(), None);
    }

    /// (`futures`' executor is a native dev-dependency.)
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn the_window_ending_sends_the_held_text() {
        use futures::executor::block_on;
        use futures_util::future::{select, Either};
        struct Now;
        impl Sleeper for Now {
            fn sleep(&self, _: u64) -> futures_util::future::LocalBoxFuture<'static, ()> {
                Box::pin(async {})
            }
        }
        let batch = TextBatch::new(16);
        assert_eq!(batch.push("sent".into(), 0).as_deref(), Some("sent"));
        // Nothing held: it waits.
        let waiting = block_on(async {
            let due = std::pin::pin!(batch.due(&Now, &|| 0));
            matches!(select(due, std::future::ready(())).await, Either::Right(_))
        });
        assert!(waiting);
        assert_eq!(batch.push("held".into(), 5), None);
        assert_eq!(block_on(batch.due(&Now, &|| 16)), "held");
        assert_eq!(batch.take(), None);
    }
}
