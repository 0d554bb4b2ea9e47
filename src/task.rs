//! The few ways of waiting on several futures the crate needs: the first of two ([`race`]),
//! both of two ([`join`]), all of a list in order ([`join_all`]) and whichever of a changing
//! set ends next ([`Unordered`]).
//!
//! They are written on `std::future::poll_fn` instead of taken from futures-util, whose
//! combinators (and their instantiations) were about 3 KB of the gzipped wasm for what these
//! do in a few lines. Every future of a combinator is polled when any of them wakes the task,
//! which the `Future` contract allows; the sets are small (a run's concurrent tool calls, a
//! job's running units), so polling each of them again costs nothing that matters.

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::task::Poll;

/// A boxed future that need not be `Send` (the worker has one thread). The same type as
/// futures-util's `LocalBoxFuture`, so implementations written against either fit.
pub type LocalBoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// `future.boxed_local()`, as futures-util's `FutureExt` has it.
pub trait BoxedLocal: Future + Sized {
    fn boxed_local<'a>(self) -> LocalBoxFuture<'a, Self::Output>
    where
        Self: 'a,
    {
        Box::pin(self)
    }
}

impl<F: Future> BoxedLocal for F {}

/// Which of two futures ended first, and with what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Either<A, B> {
    Left(A),
    Right(B),
}

/// The output of whichever of `a` and `b` ends first; `a` wins a tie. The other is dropped.
pub async fn race<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let mut a = pin!(a);
    let mut b = pin!(b);
    poll_fn(|cx| {
        if let Poll::Ready(x) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(x));
        }
        if let Poll::Ready(y) = b.as_mut().poll(cx) {
            return Poll::Ready(Either::Right(y));
        }
        Poll::Pending
    })
    .await
}

/// Waits for `future`, or forever when there is none (a race's side that may not exist).
pub async fn or_pending<F: Future>(future: Option<F>) -> F::Output {
    match future {
        Some(f) => f.await,
        None => std::future::pending().await,
    }
}

/// Both outputs, once both futures have ended; they run at once.
pub async fn join<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let mut a = pin!(a);
    let mut b = pin!(b);
    let mut x = None;
    let mut y = None;
    poll_fn(|cx| {
        if x.is_none() {
            if let Poll::Ready(v) = a.as_mut().poll(cx) {
                x = Some(v);
            }
        }
        if y.is_none() {
            if let Poll::Ready(v) = b.as_mut().poll(cx) {
                y = Some(v);
            }
        }
        match (x.take(), y.take()) {
            (Some(v), Some(w)) => Poll::Ready((v, w)),
            (v, w) => {
                x = v;
                y = w;
                Poll::Pending
            }
        }
    })
    .await
}

/// Every future's output, in the order of the futures, once all have ended; they run at once.
pub async fn join_all<T>(mut futures: Vec<LocalBoxFuture<'_, T>>) -> Vec<T> {
    let mut outputs: Vec<Option<T>> = futures.iter().map(|_| None).collect();
    poll_fn(|cx| {
        let mut all = true;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    Poll::Ready(v) => *output = Some(v),
                    Poll::Pending => all = false,
                }
            }
        }
        if all {
            Poll::Ready(outputs.drain(..).flatten().collect())
        } else {
            Poll::Pending
        }
    })
    .await
}

/// A set of running futures, taken out as each ends (futures-util's `FuturesUnordered`, for
/// futures without an output).
#[derive(Default)]
pub struct Unordered<'a> {
    running: Vec<LocalBoxFuture<'a, ()>>,
}

impl<'a> Unordered<'a> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, future: LocalBoxFuture<'a, ()>) {
        self.running.push(future);
    }

    pub fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    pub fn len(&self) -> usize {
        self.running.len()
    }

    /// Ends when at least one of the futures has ended (each that has is dropped), or at once
    /// when there are none.
    pub async fn next(&mut self) {
        poll_fn(|cx| {
            let before = self.running.len();
            self.running
                .retain_mut(|future| future.as_mut().poll(cx).is_pending());
            if self.running.len() < before || before == 0 {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await
    }
}

/// The future's output if it is ready at its first poll (futures-util's `now_or_never`).
pub fn now_or_never<F: Future>(future: F) -> Option<F::Output> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match pin!(future).poll(&mut cx) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    /// Pending for `n` polls (waking itself each time), then ready with `value`.
    fn after<T: Clone>(n: usize, value: T, polls: Rc<Cell<usize>>) -> impl Future<Output = T> {
        let mut left = n;
        poll_fn(move |cx| {
            polls.set(polls.get() + 1);
            if left == 0 {
                Poll::Ready(value.clone())
            } else {
                left -= 1;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        })
    }

    fn block_on<F: Future>(future: F) -> F::Output {
        let mut future = pin!(future);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        for _ in 0..1000 {
            if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
                return v;
            }
        }
        panic!("the future did not end in 1000 polls");
    }

    #[test]
    fn race_gives_the_first_to_end_and_the_left_wins_a_tie() {
        let p = Rc::new(Cell::new(0));
        assert_eq!(
            block_on(race(after(3, 'a', p.clone()), after(1, 'b', p.clone()))),
            Either::Right('b')
        );
        assert_eq!(
            block_on(race(after(1, 'a', p.clone()), after(1, 'b', p.clone()))),
            Either::Left('a')
        );
        assert_eq!(
            block_on(race(or_pending(None::<std::future::Ready<()>>), async {
                7
            })),
            Either::Right(7)
        );
        assert_eq!(
            now_or_never(or_pending(Some(std::future::ready(5)))),
            Some(5)
        );
        assert_eq!(now_or_never(std::future::pending::<()>()), None);
    }

    #[test]
    fn join_and_join_all_wait_for_every_future_and_keep_the_order() {
        let p = Rc::new(Cell::new(0));
        assert_eq!(
            block_on(join(after(4, 1, p.clone()), after(0, 2, p.clone()))),
            (1, 2)
        );
        // The second ended at its first poll and was not polled again.
        assert_eq!(p.get(), 5 + 1);
        let futures: Vec<LocalBoxFuture<'_, usize>> = [5, 0, 2, 9]
            .into_iter()
            .map(|n| Box::pin(after(n, n, Rc::new(Cell::new(0)))) as LocalBoxFuture<'_, usize>)
            .collect();
        assert_eq!(block_on(join_all(futures)), vec![5, 0, 2, 9]);
        assert!(block_on(join_all(Vec::<LocalBoxFuture<'_, u8>>::new())).is_empty());
    }

    #[test]
    fn unordered_takes_out_what_ended_and_drops_it() {
        let ended = Rc::new(Cell::new(0));
        let mut set = Unordered::new();
        for n in [3, 1, 6] {
            let ended = Rc::clone(&ended);
            set.push(Box::pin(async move {
                after(n, (), Rc::new(Cell::new(0))).await;
                ended.set(ended.get() + 1);
            }));
        }
        assert_eq!(set.len(), 3);
        block_on(set.next());
        assert_eq!((ended.get(), set.len()), (1, 2));
        block_on(set.next());
        assert_eq!((ended.get(), set.len()), (2, 1));
        block_on(set.next());
        assert!(set.is_empty());
        // An empty set does not wait.
        assert_eq!(now_or_never(set.next()), Some(()));
    }
}
