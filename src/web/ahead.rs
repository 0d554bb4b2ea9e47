//! Answers sent when their save lands, from JS.
//!
//! A keystroke's answer is known before its save is placed (the core gives it ahead:
//! [`crate::core::Core::handle_in_ahead`]), and it may go to the page once the save's
//! IndexedDB transaction has completed. Waiting for the core to hear of the completion (its
//! future woken, its bookkeeping done, its answer returned through the worker's awaits) would
//! keep the page waiting for work that changes nothing in the answer. So the request's
//! [`Serving`] keeps the answer, and the first transaction the request's own task places after
//! it ([`landing`], called by the store) is handed with it to the worker's `ahead` function,
//! which posts the answer when that transaction's promise resolves. The promise rejects when
//! the transaction aborts: the worker then posts the answer the core returns, after its
//! `storage_error` event.
//!
//! Which request a transaction belongs to is the request whose future is being polled when
//! the store places it: [`Scoped`] makes the request's [`Serving`] current for each poll.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use js_sys::{Function, Promise};
use wasm_bindgen::JsValue;

thread_local! {
    /// The request whose future is being polled.
    static CURRENT: RefCell<Option<Rc<Serving>>> = const { RefCell::new(None) };
}

/// One request's answer given ahead, and the worker's function that posts it.
pub struct Serving {
    /// `ahead(answer, landing)`: post `answer` once the promise `landing` resolves.
    post: Function,
    answer: RefCell<Option<String>>,
    /// Whether the answer went to `post` (it goes once).
    handed: Cell<bool>,
}

impl Serving {
    pub fn new(post: Function) -> Rc<Self> {
        Rc::new(Self {
            post,
            answer: RefCell::new(None),
            handed: Cell::new(false),
        })
    }

    /// The core's answer, known before its save is placed.
    pub fn answer(&self, text: &str) {
        *self.answer.borrow_mut() = Some(text.to_string());
    }

    /// A transaction placed by this request: the first after the answer carries it.
    fn placed(&self, landing: &Promise) {
        if self.handed.get() {
            return;
        }
        let Some(answer) = self.answer.borrow_mut().take() else {
            return;
        };
        self.handed.set(true);
        // A throwing function has lost the answer; the worker posts the core's instead.
        let _ = self
            .post
            .call2(&JsValue::NULL, &JsValue::from_str(&answer), landing);
    }
}

/// A transaction of the store was placed; `landing` resolves when it completes and rejects
/// when it aborts. Called by the store as it places a transaction.
pub fn landing(landing: &Promise) {
    CURRENT.with(|current| {
        if let Some(serving) = current.borrow().as_ref() {
            serving.placed(landing);
        }
    });
}

/// A request's future, with its [`Serving`] current while it is polled.
pub struct Scoped<F> {
    serving: Option<Rc<Serving>>,
    future: Pin<Box<F>>,
}

impl<F: Future> Scoped<F> {
    pub fn new(serving: Option<Rc<Serving>>, future: F) -> Self {
        Self {
            serving,
            future: Box::pin(future),
        }
    }
}

impl<F: Future> Future for Scoped<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let serving = self.serving.clone();
        let outer = CURRENT.with(|current| current.replace(serving));
        let polled = self.future.as_mut().poll(cx);
        CURRENT.with(|current| *current.borrow_mut() = outer);
        polled
    }
}
