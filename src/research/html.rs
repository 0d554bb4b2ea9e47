//! A research page's text: its bytes decoded, and what a [`PageReader`] read from it.
//!
//! The bytes of a page are decoded in the encoding named by a byte order mark, the
//! `Content-Type` or a `<meta charset>` ([`decode_bytes`]), by the environment's
//! [`TextDecoding`] (the WHATWG encodings, as browsers decode pages: `encoding_rs` natively,
//! the browser's `TextDecoder` in the worker).
//!
//! The page is then read ([`draftsmith_reader`]: Mozilla's Readability on html5ever) by the
//! core's [`PageReader`]: in process natively, and in the worker by the reader's own wasm
//! module, which the worker loads the first time research reads a page (`src/web/reader.rs`).

use futures_util::future::LocalBoxFuture;

pub use draftsmith_reader::{ExtractError, Extracted, MAX_DEPTH, MAX_TEXT_CHARS};

use crate::env::TextDecoding;

/// Reads a page's HTML: its title, readable main text and description, or why it was not
/// read ([`draftsmith_reader::extract`]).
pub trait PageReader {
    /// Read `html`. `Err(message)` when the reader itself could not run (its module did not
    /// load); the page's own refusal is the inner [`ExtractError`].
    fn read(
        &self,
        html: String,
    ) -> LocalBoxFuture<'static, Result<Result<Extracted, ExtractError>, String>>;
}

/// [`PageReader`] in this process: the native core's (tests, the headless core).
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Default, Clone, Copy)]
pub struct InProcessReader;

#[cfg(not(target_arch = "wasm32"))]
impl PageReader for InProcessReader {
    fn read(
        &self,
        html: String,
    ) -> LocalBoxFuture<'static, Result<Result<Extracted, ExtractError>, String>> {
        Box::pin(std::future::ready(Ok(draftsmith_reader::extract(&html))))
    }
}

/// The text of a page's bytes: in the encoding named by a byte order mark, else UTF-8 if the
/// bytes are UTF-8, else in the encoding the `Content-Type` or a `<meta charset>` in the first
/// 2,048 bytes names (any WHATWG label), else UTF-8 with replacement characters. `decoder`
/// decodes the encodings other than UTF-8 (see [`TextDecoding`]).
pub fn decode_bytes(
    bytes: &[u8],
    content_type: Option<&str>,
    decoder: &dyn TextDecoding,
) -> String {
    if let Some((label, len)) = bom(bytes) {
        let tail = bytes.get(len..).unwrap_or_default();
        return decoder
            .decode(label, tail)
            .unwrap_or_else(|| String::from_utf8_lossy(tail).into_owned());
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return text.to_string();
    }
    let head = bytes.get(..2_048).unwrap_or(bytes);
    content_type
        .and_then(|t| declared_label(t.as_bytes()))
        .and_then(|label| decoder.decode(label, bytes))
        .or_else(|| declared_label(head).and_then(|label| decoder.decode(label, bytes)))
        .unwrap_or_else(|| String::from_utf8_lossy(bytes).into_owned())
}

/// The encoding a byte order mark at the start of `bytes` names, and the mark's length (the
/// Encoding Standard's BOM sniff).
fn bom(bytes: &[u8]) -> Option<(&'static str, usize)> {
    [
        (&b"\xef\xbb\xbf"[..], "utf-8"),
        (&b"\xff\xfe"[..], "utf-16le"),
        (&b"\xfe\xff"[..], "utf-16be"),
    ]
    .into_iter()
    .find(|(mark, _)| bytes.starts_with(mark))
    .map(|(mark, label)| (label, mark.len()))
}

/// The label after the first `charset=` in `text` (quoted or not), if there is one.
fn declared_label(text: &[u8]) -> Option<&str> {
    const KEY: &[u8] = b"charset=";
    let at = text
        .windows(KEY.len())
        .position(|w| w.eq_ignore_ascii_case(KEY))?;
    let rest = text.get(at + KEY.len()..)?;
    let rest = rest
        .strip_prefix(b"\"")
        .or_else(|| rest.strip_prefix(b"'"))
        .unwrap_or(rest);
    let end = rest
        .iter()
        .position(|b| matches!(b, b'"' | b'\'' | b';' | b'>' | b'/') || b.is_ascii_whitespace())
        .unwrap_or(rest.len());
    std::str::from_utf8(rest.get(..end)?).ok()
}

#[cfg(test)]
mod tests {
    /// [`super::decode_bytes`] with the native decoder.
    #[cfg(not(target_arch = "wasm32"))]
    fn decode_bytes(bytes: &[u8], content_type: Option<&str>) -> String {
        super::decode_bytes(bytes, content_type, &crate::env::EncodingRsDecoder)
    }

    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn decoding() {
        assert_eq!(
            decode_bytes(
                b"caf\xe9 \x93q\x94",
                Some("text/html; charset=windows-1252")
            ),
            "café “q”"
        );
        // A `<meta charset>` names the encoding when the header does not.
        assert_eq!(
            decode_bytes(
                b"<meta charset=\"Shift_JIS\"><p>\x93\xfa\x96\x7b</p>",
                Some("text/html")
            ),
            "<meta charset=\"Shift_JIS\"><p>日本</p>"
        );
        // UTF-8 bytes stay UTF-8 whatever the label says; a byte order mark wins.
        assert_eq!(
            decode_bytes("café".as_bytes(), Some("text/html; charset=latin1")),
            "café"
        );
        assert_eq!(decode_bytes(b"\xff\xfea\x00", None), "a");
        assert_eq!(decode_bytes(b"a\xff", None), "a\u{fffd}");
    }

    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn decoding_falls_back_label_by_label() {
        // An unknown label in the header leaves the `<meta charset>` to name the encoding.
        assert_eq!(
            decode_bytes(
                b"<meta charset='windows-1252'>caf\xe9",
                Some("text/html; charset=x-unknown")
            ),
            "<meta charset='windows-1252'>café"
        );
        // No known label: UTF-8 with replacement characters.
        assert_eq!(
            decode_bytes(b"<meta charset=klingon>caf\xe9", Some("text/html")),
            "<meta charset=klingon>caf\u{fffd}"
        );
        // Byte order marks of UTF-8 and UTF-16BE, removed.
        assert_eq!(
            decode_bytes(b"\xef\xbb\xbfcaf\xc3\xa9\xff", None),
            "café\u{fffd}"
        );
        assert_eq!(
            decode_bytes(b"\xfe\xff\x00a\x00b", Some("text/html; charset=utf-8")),
            "ab"
        );
        // The replacement encoding's labels decode to one replacement character.
        assert_eq!(
            decode_bytes(b"\x1b$)C\x0e\xff", Some("text/html; charset=iso-2022-kr")),
            "\u{fffd}"
        );
    }
}
