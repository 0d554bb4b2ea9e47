//! The decoding cases both decoders of the WHATWG encodings must pass: `encoding_rs` natively
//! (`tests/decoding.rs`) and the browser's `TextDecoder` in the worker
//! (`tests/web_decoding.rs`). Pages in legacy encodings are read as research reads them:
//! [`decode_bytes`] with the page's `Content-Type`, then [`extract`].

use draftsmith::env::TextDecoding;
use draftsmith::research::html::decode_bytes;
use draftsmith_reader::extract;

/// A Japanese page in Shift_JIS that says so in its `<meta>` only.
const SHIFT_JIS_PAGE: &[u8] = include_bytes!("../data/encodings/lighthouse-shift_jis.html");
/// An English page in windows-1252 that says so in its `Content-Type` only.
const WINDOWS_1252_PAGE: &[u8] = include_bytes!("../data/encodings/cafe-windows-1252.html");

/// The two pages decode to their text, and read as research reads them.
pub fn pages(decoder: &dyn TextDecoding) {
    let text = decode_bytes(SHIFT_JIS_PAGE, Some("text/html"), decoder);
    assert!(text.contains("<title>灯台守の日誌</title>"), "{text}");
    let read = extract(&text).unwrap();
    assert_eq!(read.title, "灯台守の日誌");
    assert_eq!(
        read.text,
        "灯台守は毎晩、日誌に書いた。灯は燃えていた、海は静かだった、と。嵐の夜も、霧の朝も、同じように書いた。\n\n\
         百年のあいだ、灯台は一度も消えなかった。船乗りたちは、その光を頼りに港へ帰った。"
    );

    let text = decode_bytes(
        WINDOWS_1252_PAGE,
        Some("text/html; charset=windows-1252"),
        decoder,
    );
    let read = extract(&text).unwrap();
    assert_eq!(read.title, "Café notes");
    assert_eq!(
        read.text,
        "The café’s naïve résumé “worked” — every night, for years, the keeper wrote it down, and the sea was calm.\n\n\
         Crème brûlée cost €5, or £4; the menu said so, in a long sentence with commas, to be read."
    );
    // Without the header, nothing names the encoding: UTF-8, with replacement characters.
    let text = decode_bytes(WINDOWS_1252_PAGE, Some("text/html"), decoder);
    assert!(text.contains("<title>Caf\u{fffd} notes</title>"), "{text}");
}

/// Labels resolve as the Encoding Standard resolves them.
pub fn labels(decoder: &dyn TextDecoding) {
    let decode = |label: &str, bytes: &[u8]| decoder.decode(label, bytes);
    // Labels are matched in any ASCII case, without surrounding whitespace; aliases name
    // their encodings (`latin1` and `ascii` are windows-1252, `sjis` Shift_JIS).
    assert_eq!(
        decode(" LATIN1\n", b"caf\xe9 \x80").as_deref(),
        Some("café €")
    );
    assert_eq!(decode("ascii", b"\x93q\x94").as_deref(), Some("“q”"));
    assert_eq!(decode("sjis", b"\x93\xfa\x96\x7b").as_deref(), Some("日本"));
    assert_eq!(decode("gbk", b"\xd6\xd0\xce\xc4").as_deref(), Some("中文"));
    assert_eq!(
        decode("euc-kr", b"\xc7\xd1\xb1\xdb").as_deref(),
        Some("한글")
    );
    assert_eq!(decode("big5", b"\xa4\xa4\xa4\xe5").as_deref(), Some("中文"));
    assert_eq!(
        decode("koi8-r", b"\xf2\xd5\xd3\xd8").as_deref(),
        Some("Русь")
    );
    assert_eq!(decode("utf-16be", b"\x00a\x00b").as_deref(), Some("ab"));
    // Malformed bytes become U+FFFD; a byte order mark is decoded, not removed.
    assert_eq!(decode("utf-8", b"a\xffb").as_deref(), Some("a\u{fffd}b"));
    assert_eq!(
        decode("utf-8", b"\xef\xbb\xbfa").as_deref(),
        Some("\u{feff}a")
    );
    assert_eq!(
        decode("utf-16le", b"\xff\xfea\x00").as_deref(),
        Some("\u{feff}a")
    );
    assert_eq!(decode("shift_jis", b"\x93").as_deref(), Some("\u{fffd}"));
    // The replacement encoding's labels: one U+FFFD for any bytes, nothing for none.
    assert_eq!(
        decode("ISO-2022-KR", b"\x1b$)C").as_deref(),
        Some("\u{fffd}")
    );
    assert_eq!(decode("hz-gb-2312", b"").as_deref(), Some(""));
    // Names of no encoding.
    assert_eq!(decode("klingon", b"abc"), None);
    assert_eq!(decode("", b"abc"), None);
    assert_eq!(decode("utf-7", b"abc"), None);
}
