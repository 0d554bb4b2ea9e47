//! [`JsPageReader`]: the core's [`PageReader`] over the worker's reader bridge, which loads
//! the page reader's own wasm module (`crates/reader-web`, `pkg/draftsmith_reader.js`) the
//! first time research reads a page, and reads each page's HTML with it.
//!
//! The HTML goes to the bridge as a string; what was read comes back as the JSON text of
//! `Result<Extracted, ExtractError>`.

use futures_util::future::LocalBoxFuture;
use js_sys::Promise;
use wasm_bindgen::prelude::*;

use super::local::settle;
use crate::research::html::{ExtractError, Extracted, PageReader};

#[wasm_bindgen]
extern "C" {
    /// The worker's bridge to the page reader's module.
    #[derive(Clone)]
    pub type PageReaderBridge;

    /// Resolves to the JSON text of what the reader read from `html`.
    #[wasm_bindgen(method, catch)]
    fn read(this: &PageReaderBridge, html: &str) -> Result<Promise, JsValue>;
}

/// Reads research pages through the worker's reader bridge.
pub struct JsPageReader {
    bridge: PageReaderBridge,
}

impl JsPageReader {
    /// The reader over `bridge` (the worker's `pageReader`).
    pub fn new(bridge: PageReaderBridge) -> Self {
        Self { bridge }
    }
}

impl PageReader for JsPageReader {
    fn read(
        &self,
        html: String,
    ) -> LocalBoxFuture<'static, Result<Result<Extracted, ExtractError>, String>> {
        // The request is made now; only its answer is awaited.
        let promise = self.bridge.read(&html);
        Box::pin(async move {
            let answer = settle(promise).await?;
            let text = answer
                .as_string()
                .ok_or_else(|| "the page reader answered something other than text".to_string())?;
            serde_json::from_str(&text)
                .map_err(|e| format!("the page reader's answer could not be read: {e}"))
        })
    }
}
