//! Research pages in legacy encodings, decoded in a dedicated worker by the browser's
//! `TextDecoder` (the worker's decoder), with the same cases and results as `encoding_rs`
//! gives natively (`tests/decoding.rs`).
#![cfg(target_arch = "wasm32")]

mod decoding_cases;

use draftsmith::web::JsTextDecoder;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

#[wasm_bindgen_test]
fn pages_in_legacy_encodings_are_read() {
    decoding_cases::pages(&JsTextDecoder);
}

#[wasm_bindgen_test]
fn labels_resolve_as_the_standard_says() {
    decoding_cases::labels(&JsTextDecoder);
}
