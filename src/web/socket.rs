//! [`WsTransport`]: the core's sync connections as browser WebSockets (binary frames).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use futures_util::future::LocalBoxFuture;
use wasm_bindgen::prelude::*;
use web_sys::{BinaryType, CloseEvent, Event, MessageEvent, WebSocket};

use crate::env::{SyncSocket, SyncTransport};

/// Opens WebSockets.
#[derive(Debug, Default, Clone, Copy)]
pub struct WsTransport;

/// What a socket's handlers share with its futures.
#[derive(Default)]
struct State {
    /// `Some` once the socket opened (`Ok`) or failed to (`Err`).
    opened: RefCell<Option<Result<(), String>>>,
    inbox: RefCell<VecDeque<Vec<u8>>>,
    closed: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

impl State {
    fn wake(&self) {
        if let Some(waker) = self.waker.borrow_mut().take() {
            waker.wake();
        }
    }
}

/// An open WebSocket, with the handlers that feed its state.
struct WsSocket {
    ws: WebSocket,
    state: Rc<State>,
    _handlers: Handlers,
}

/// The socket's event handlers, kept alive as long as it is.
struct Handlers {
    _open: Closure<dyn FnMut(Event)>,
    _message: Closure<dyn FnMut(MessageEvent)>,
    _error: Closure<dyn FnMut(Event)>,
    _close: Closure<dyn FnMut(CloseEvent)>,
}

impl SyncTransport for WsTransport {
    fn connect(&self, url: &str) -> LocalBoxFuture<'static, Result<Rc<dyn SyncSocket>, String>> {
        let ws = match WebSocket::new(url) {
            Ok(ws) => ws,
            Err(e) => {
                let why = e.as_string().unwrap_or_else(|| format!("{e:?}"));
                return Box::pin(async move { Err(format!("cannot open a WebSocket: {why}")) });
            }
        };
        ws.set_binary_type(BinaryType::Arraybuffer);
        let state = Rc::new(State::default());
        let s = Rc::clone(&state);
        let open = Closure::<dyn FnMut(Event)>::new(move |_| {
            *s.opened.borrow_mut() = Some(Ok(()));
            s.wake();
        });
        let s = Rc::clone(&state);
        let message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            if let Ok(buffer) = e.data().dyn_into::<js_sys::ArrayBuffer>() {
                s.inbox
                    .borrow_mut()
                    .push_back(js_sys::Uint8Array::new(&buffer).to_vec());
                s.wake();
            }
        });
        let s = Rc::clone(&state);
        let error = Closure::<dyn FnMut(Event)>::new(move |_| {
            if s.opened.borrow().is_none() {
                *s.opened.borrow_mut() = Some(Err("the server cannot be reached".into()));
            }
            s.wake();
        });
        let s = Rc::clone(&state);
        let close = Closure::<dyn FnMut(CloseEvent)>::new(move |e: CloseEvent| {
            if s.opened.borrow().is_none() {
                *s.opened.borrow_mut() = Some(Err(format!(
                    "the server closed the connection (code {})",
                    e.code()
                )));
            }
            s.closed.set(true);
            s.wake();
        });
        ws.set_onopen(Some(open.as_ref().unchecked_ref()));
        ws.set_onmessage(Some(message.as_ref().unchecked_ref()));
        ws.set_onerror(Some(error.as_ref().unchecked_ref()));
        ws.set_onclose(Some(close.as_ref().unchecked_ref()));
        let socket = WsSocket {
            ws,
            state: Rc::clone(&state),
            _handlers: Handlers {
                _open: open,
                _message: message,
                _error: error,
                _close: close,
            },
        };
        Box::pin(async move {
            Opened(Rc::clone(&state)).await?;
            Ok(Rc::new(socket) as Rc<dyn SyncSocket>)
        })
    }
}

/// Resolves once the socket opened or failed to.
struct Opened(Rc<State>);

impl Future for Opened {
    type Output = Result<(), String>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(result) = self.0.opened.borrow().clone() {
            return Poll::Ready(result);
        }
        *self.0.waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Resolves with the next frame, or `None` once the socket closed.
struct Next(Rc<State>);

impl Future for Next {
    type Output = Option<Vec<u8>>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(frame) = self.0.inbox.borrow_mut().pop_front() {
            return Poll::Ready(Some(frame));
        }
        if self.0.closed.get() {
            return Poll::Ready(None);
        }
        *self.0.waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl SyncSocket for WsSocket {
    fn send(&self, frame: &[u8]) -> Result<(), String> {
        if self.state.closed.get() || self.ws.ready_state() != WebSocket::OPEN {
            return Err("the connection is closed".into());
        }
        self.ws
            .send_with_u8_array(frame)
            .map_err(|e| e.as_string().unwrap_or_else(|| "the send failed".into()))
    }

    fn next(&self) -> LocalBoxFuture<'static, Option<Vec<u8>>> {
        Box::pin(Next(Rc::clone(&self.state)))
    }

    fn close(&self) {
        let _ = self.ws.close();
        self.state.closed.set(true);
        self.state.wake();
    }
}

impl Drop for WsSocket {
    fn drop(&mut self) {
        self.ws.set_onopen(None);
        self.ws.set_onmessage(None);
        self.ws.set_onerror(None);
        self.ws.set_onclose(None);
        let _ = self.ws.close();
    }
}
