//! [`FetchTransport`]: the [`LlmTransport`] over the worker's `fetch` (through gloo-net),
//! reading the response body as it arrives through its `ReadableStream`; and [`JsSleeper`]
//! (`setTimeout`).
//!
//! Dropping a response body (a timeout, or the run being cancelled) aborts the request
//! through its `AbortController`, so no connection outlives its reader.
//!
//! Redirects are never followed (`redirect: "manual"`): a followed redirect would re-send the
//! API key and extra headers to wherever it points, and `fetch` cannot show where a redirect
//! goes without following it, so every redirect is refused with an error that asks for the
//! final address as the base URL.

use futures_util::future::{FutureExt, LocalBoxFuture};
use gloo_net::http::{Method, RequestBuilder};
use js_sys::{Promise, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, ReadableStreamDefaultReader, RequestRedirect, ResponseType, WorkerGlobalScope,
};

use crate::llm::client::{ByteStream, HttpResponse, LlmTransport, Sleeper, TransportError};
use crate::llm::HttpRequest;

pub(crate) fn js_error(value: JsValue) -> TransportError {
    let message = Reflect::get(&value, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| value.as_string())
        .unwrap_or_else(|| format!("{value:?}"));
    TransportError::Network(message)
}

/// A gloo-net error as a transport error: a JS error's message, as `fetch` gave it.
fn fetch_error(error: gloo_net::Error) -> TransportError {
    TransportError::Network(match error {
        gloo_net::Error::JsError(e) => e.message,
        other => other.to_string(),
    })
}

fn scope() -> Result<WorkerGlobalScope, TransportError> {
    js_sys::global()
        .dyn_into::<WorkerGlobalScope>()
        .map_err(|_| TransportError::Network("fetch is only available in a worker".into()))
}

/// Model calls over `fetch` (through gloo-net).
#[derive(Debug, Default, Clone, Copy)]
pub struct FetchTransport;

/// A response body read through its stream's reader; dropping it aborts what produces it.
pub(crate) struct FetchBody {
    reader: Option<ReadableStreamDefaultReader>,
    controller: AbortController,
}

impl FetchBody {
    /// The body read from `stream`, aborting `controller` when dropped.
    pub(crate) fn new(
        stream: Option<web_sys::ReadableStream>,
        controller: AbortController,
    ) -> Self {
        let reader = stream.map(|body| {
            body.get_reader()
                .unchecked_into::<ReadableStreamDefaultReader>()
        });
        Self { reader, controller }
    }
}

impl Drop for FetchBody {
    fn drop(&mut self) {
        self.controller.abort();
    }
}

impl ByteStream for FetchBody {
    fn next_chunk(&mut self) -> LocalBoxFuture<'_, Option<Result<Vec<u8>, TransportError>>> {
        async move {
            let reader = self.reader.as_ref()?;
            let result = match JsFuture::from(reader.read()).await {
                Ok(result) => result,
                Err(e) => return Some(Err(js_error(e))),
            };
            let done = Reflect::get(&result, &"done".into())
                .ok()
                .and_then(|d| d.as_bool())
                .unwrap_or(true);
            if done {
                self.reader = None;
                return None;
            }
            let value = Reflect::get(&result, &"value".into()).ok()?;
            Some(Ok(Uint8Array::new(&value).to_vec()))
        }
        .boxed_local()
    }
}

impl LlmTransport for FetchTransport {
    fn send<'a>(
        &'a self,
        request: &'a HttpRequest,
    ) -> LocalBoxFuture<'a, Result<HttpResponse, TransportError>> {
        async move {
            let method = Method::from_bytes(request.method.as_bytes()).map_err(|_| {
                TransportError::Network(format!("'{}' is no HTTP method", request.method))
            })?;
            let controller = AbortController::new().map_err(js_error)?;
            let mut builder = RequestBuilder::new(&request.url)
                .method(method.clone())
                .abort_signal(Some(&controller.signal()))
                .redirect(RequestRedirect::Manual);
            for (name, value) in &request.headers {
                builder = builder.header(name, value);
            }
            let built = if method == Method::GET || method == Method::HEAD {
                builder.build()
            } else {
                builder.body(JsValue::from_str(&request.body))
            };
            let response = built.map_err(fetch_error)?.send().await.map_err(fetch_error)?;
            if response.type_() == ResponseType::Opaqueredirect
                || (300..400).contains(&response.status())
            {
                controller.abort();
                return Err(TransportError::Network(format!(
                    "{} answered with a redirect, which is refused (a followed redirect could send the API key elsewhere); use the final address (for a model, set it as the base URL)",
                    request.url.split('?').next().unwrap_or_default()
                )));
            }
            let mut response_headers = Vec::new();
            let headers = response.headers();
            // `x-proxy-content-type`: the page's own type, when a research fetch proxy serves
            // it under a harmless one.
            for name in [
                "content-type",
                "retry-after",
                "retry-after-ms",
                "x-proxy-content-type",
            ] {
                if let Some(value) = headers.get(name) {
                    response_headers.push((name.to_string(), value));
                }
            }
            Ok(HttpResponse {
                status: response.status(),
                headers: response_headers,
                body: Box::new(FetchBody::new(response.body(), controller)),
            })
        }
        .boxed_local()
    }
}

/// Waits with `setTimeout`.
#[derive(Debug, Default, Clone, Copy)]
pub struct JsSleeper;

impl Sleeper for JsSleeper {
    fn sleep(&self, ms: u64) -> LocalBoxFuture<'static, ()> {
        let promise = Promise::new(&mut |resolve, _| {
            if let Ok(scope) = scope() {
                let ms = i32::try_from(ms).unwrap_or(i32::MAX);
                let _ = scope.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
            }
        });
        async move {
            let _ = JsFuture::from(promise).await;
        }
        .boxed_local()
    }
}
