//! [`draftsmith_reader`] as a WebAssembly module of its own, built by `scripts/build-wasm.sh`
//! into `pkg/draftsmith_reader.js` and `pkg/draftsmith_reader_bg.wasm`.
//!
//! The worker (`packages/draftsmith/src/worker.js`) imports it the first time research reads a
//! page, and hands each page's HTML to [`read_page`]. Keeping Readability and html5ever out
//! of the core's wasm keeps them out of every start of the worker.

use wasm_bindgen::prelude::wasm_bindgen;

/// Read a page's HTML: the JSON text of `{"Ok": {title, text, description}}` or
/// `{"Err": {"TooDeep": depth}}` (serde's form of `Result<Extracted, ExtractError>`).
#[wasm_bindgen(js_name = readPage)]
pub fn read_page(html: &str) -> String {
    let read = draftsmith_reader::extract(html);
    // A struct of strings and an enum of a number: serializing cannot fail.
    serde_json::to_string(&read).unwrap_or_default()
}
