//! The browser's `TextDecoder` as the core's [`TextDecoding`]: the WHATWG Encoding Standard's
//! decoders, which the browser already has, so the wasm ships no tables of its own for the
//! legacy encodings.

use wasm_bindgen::JsValue;
use web_sys::{TextDecoder, TextDecoderOptions};

use crate::env::TextDecoding;

/// The labels of the standard's `replacement` encoding, which `TextDecoder` refuses to
/// construct (they name encodings that are unsafe to decode, such as ISO-2022-KR); the
/// standard decodes any bytes in them to one U+FFFD.
const REPLACEMENT_LABELS: &[&str] = &[
    "csiso2022kr",
    "hz-gb-2312",
    "iso-2022-cn",
    "iso-2022-cn-ext",
    "iso-2022-kr",
    "replacement",
];

/// [`TextDecoding`] by the browser's `TextDecoder`, with `fatal: false` (malformed bytes
/// become U+FFFD) and `ignoreBOM: true` (a byte order mark is decoded, not removed).
#[derive(Debug, Default, Clone, Copy)]
pub struct JsTextDecoder;

impl TextDecoding for JsTextDecoder {
    fn decode(&self, label: &str, bytes: &[u8]) -> Option<String> {
        let options = TextDecoderOptions::new();
        options.set_fatal(false);
        // web-sys's `TextDecoderOptions` has no setter for `ignoreBOM`. Setting a property
        // on a fresh plain object does not fail.
        let _ = js_sys::Reflect::set(&options, &JsValue::from_str("ignoreBOM"), &JsValue::TRUE);
        match TextDecoder::new_with_label_and_options(label, &options) {
            // Not fatal, so decoding does not fail.
            Ok(decoder) => decoder.decode_with_u8_array(bytes).ok(),
            // A RangeError: the label names no encoding, or the replacement encoding.
            Err(_) => is_replacement(label).then(|| {
                if bytes.is_empty() {
                    String::new()
                } else {
                    char::REPLACEMENT_CHARACTER.to_string()
                }
            }),
        }
    }
}

/// Whether `label`, as the standard matches labels (surrounding ASCII whitespace removed,
/// ASCII case ignored), names the replacement encoding.
fn is_replacement(label: &str) -> bool {
    let label = label.trim_matches(|c| matches!(c, '\t' | '\n' | '\x0c' | '\r' | ' '));
    REPLACEMENT_LABELS
        .iter()
        .any(|known| known.eq_ignore_ascii_case(label))
}
