//! Research pages in legacy encodings, decoded natively by `encoding_rs` (the same cases as
//! `tests/web_decoding.rs` runs on the browser's `TextDecoder`).
#![cfg(not(target_arch = "wasm32"))]

mod decoding_cases;

use draftsmith::env::EncodingRsDecoder;

#[test]
fn pages_in_legacy_encodings_are_read() {
    decoding_cases::pages(&EncodingRsDecoder);
}

#[test]
fn labels_resolve_as_the_standard_says() {
    decoding_cases::labels(&EncodingRsDecoder);
}
