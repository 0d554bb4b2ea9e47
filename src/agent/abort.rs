//! [`AbortSignal`]: how the page stops a run.
//!
//! A cheap shared flag with wakers, for the single-threaded worker (and native tests). The
//! loop races its model calls against [`AbortSignal::aborted`], so an abort stops a stream at
//! once (dropping the stream aborts the `fetch`), and checks [`AbortSignal::is_aborted`]
//! before each tool call. Commands themselves are synchronous and never interrupted: an abort
//! lands before a command or after it, never inside.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

#[derive(Default)]
struct Inner {
    aborted: Cell<bool>,
    wakers: RefCell<Vec<Waker>>,
}

/// A shared abort flag. Clones share it.
#[derive(Clone, Default)]
pub struct AbortSignal(Rc<Inner>);

impl std::fmt::Debug for AbortSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("AbortSignal")
            .field(&self.is_aborted())
            .finish()
    }
}

impl AbortSignal {
    /// A signal not yet aborted.
    pub fn new() -> Self {
        Self::default()
    }

    /// Abort: wakes everything waiting on [`AbortSignal::aborted`]. Idempotent.
    pub fn abort(&self) {
        self.0.aborted.set(true);
        for waker in self.0.wakers.borrow_mut().drain(..) {
            waker.wake();
        }
    }

    /// Whether [`AbortSignal::abort`] was called.
    pub fn is_aborted(&self) -> bool {
        self.0.aborted.get()
    }

    /// A future that resolves once the signal is aborted.
    pub fn aborted(&self) -> Aborted {
        Aborted(self.clone())
    }
}

/// Resolves when its signal is aborted.
pub struct Aborted(AbortSignal);

impl Future for Aborted {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.is_aborted() {
            return Poll::Ready(());
        }
        let mut wakers = self.0 .0.wakers.borrow_mut();
        if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::future::{select, Either, FutureExt};

    #[test]
    fn aborting_wakes_a_waiting_future() {
        let signal = AbortSignal::new();
        let mut waiting = signal.aborted();
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(Pin::new(&mut waiting).poll(&mut cx).is_pending());
        signal.clone().abort();
        assert!(Pin::new(&mut waiting).poll(&mut cx).is_ready());
        assert!(signal.is_aborted());
        // A race against a pending future is won by the abort.
        let won = select(std::future::pending::<()>(), signal.aborted()).now_or_never();
        assert!(matches!(won, Some(Either::Right(((), _)))));
    }
}
