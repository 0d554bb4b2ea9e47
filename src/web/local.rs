//! [`JsLocalModel`]: the [`LocalRuntime`] over the worker's wllama bridge
//! (`packages/draftsmith/local-model.js`), which runs llama.cpp in WebAssembly and keeps the
//! model files in the browser's storage.
//!
//! A chat request's body goes to the bridge as it is; its answer comes back as a stream of
//! OpenAI chunks in server-sent-event framing, read like a `fetch` body. Dropping the body
//! (the run was aborted, or timed out) aborts the generation through its `AbortSignal`.

use futures_util::future::{FutureExt, LocalBoxFuture};
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AbortSignal, ReadableStream};

use super::fetch::{js_error, FetchBody};
use crate::llm::client::{HttpResponse, LlmTransport, TransportError};
use crate::llm::local::{LocalInfo, LocalRuntime, LocalSpec, Progress, StoredModel};
use crate::llm::HttpRequest;

#[wasm_bindgen]
extern "C" {
    /// The worker's bridge to wllama.
    #[derive(Clone)]
    pub type LocalModelBridge;

    #[wasm_bindgen(method, catch)]
    fn load(
        this: &LocalModelBridge,
        spec: JsValue,
        on_progress: &Function,
    ) -> Result<Promise, JsValue>;

    #[wasm_bindgen(method, catch)]
    fn chat(this: &LocalModelBridge, body: &str, signal: &AbortSignal) -> Result<Promise, JsValue>;

    #[wasm_bindgen(method, catch)]
    fn list(this: &LocalModelBridge) -> Result<Promise, JsValue>;

    #[wasm_bindgen(method, catch)]
    fn remove(this: &LocalModelBridge, url: &str) -> Result<Promise, JsValue>;
}

/// Models running in the browser, through the wllama bridge.
pub struct JsLocalModel {
    bridge: LocalModelBridge,
}

impl JsLocalModel {
    /// The runtime over `bridge` (a `LocalModel` of `local-model.js`).
    pub fn new(bridge: LocalModelBridge) -> Self {
        Self { bridge }
    }
}

/// The message of a JS error.
pub(super) fn message(value: JsValue) -> String {
    match js_error(value) {
        TransportError::Network(m) => m,
    }
}

/// Await a promise the bridge returned (or the error it threw at once).
pub(super) async fn settle(promise: Result<Promise, JsValue>) -> Result<JsValue, String> {
    JsFuture::from(promise.map_err(message)?)
        .await
        .map_err(message)
}

impl LlmTransport for JsLocalModel {
    fn send<'a>(
        &'a self,
        request: &'a HttpRequest,
    ) -> LocalBoxFuture<'a, Result<HttpResponse, TransportError>> {
        async move {
            let controller = AbortController::new().map_err(js_error)?;
            let answer = JsFuture::from(
                self.bridge
                    .chat(&request.body, &controller.signal())
                    .map_err(js_error)?,
            )
            .await
            .map_err(js_error)?;
            let status = Reflect::get(&answer, &"status".into())
                .ok()
                .and_then(|s| s.as_f64())
                .map_or(500, |s| s as u16);
            let body = Reflect::get(&answer, &"body".into())
                .ok()
                .and_then(|b| b.dyn_into::<ReadableStream>().ok());
            let content_type = if status == 200 {
                "text/event-stream"
            } else {
                "application/json"
            };
            Ok(HttpResponse {
                status,
                headers: vec![("content-type".into(), content_type.into())],
                body: Box::new(FetchBody::new(body, controller)),
            })
        }
        .boxed_local()
    }
}

impl LocalRuntime for JsLocalModel {
    fn load(
        &self,
        spec: &LocalSpec,
        progress: Progress,
    ) -> LocalBoxFuture<'static, Result<LocalInfo, String>> {
        let bridge = self.bridge.clone();
        let spec = serde_wasm_bindgen::to_value(spec).map_err(|e| e.to_string());
        async move {
            let on_progress =
                Closure::<dyn FnMut(f64, f64)>::new(move |loaded: f64, total: f64| {
                    progress(loaded.max(0.0) as u64, total.max(0.0) as u64);
                });
            let result = settle(bridge.load(spec?, on_progress.as_ref().unchecked_ref())).await;
            // The bridge calls back only while loading: the closure may go now.
            drop(on_progress);
            serde_wasm_bindgen::from_value(result?)
                .map_err(|e| format!("the model runtime described the model oddly: {e}"))
        }
        .boxed_local()
    }

    fn stored(&self) -> LocalBoxFuture<'static, Result<Vec<StoredModel>, String>> {
        let bridge = self.bridge.clone();
        async move {
            let list = settle(bridge.list()).await?;
            serde_wasm_bindgen::from_value(list)
                .map_err(|e| format!("the model runtime listed its files oddly: {e}"))
        }
        .boxed_local()
    }

    fn delete(&self, url: &str) -> LocalBoxFuture<'static, Result<bool, String>> {
        let bridge = self.bridge.clone();
        let url = url.to_string();
        async move {
            Ok(settle(bridge.remove(&url))
                .await?
                .as_bool()
                .unwrap_or(false))
        }
        .boxed_local()
    }
}
