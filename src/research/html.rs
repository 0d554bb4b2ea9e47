//! Reading a web page: its title, its readable main text and its own description.
//!
//! The page is read by [`dom_smoothie`], a Rust port of Mozilla's Readability (the reader view
//! of Firefox) on html5ever: html5ever parses the HTML as a browser does, and Readability
//! takes the title from the page's metadata (JSON-LD, `og:title`, ...) or its `<title>` cleaned
//! of a site name, and the main text from the block that scores best by its paragraphs, commas
//! and link density, without navigation, headers, footers, forms and boilerplate. The text is
//! Readability's formatted text, one paragraph per block, normalised here to paragraphs
//! separated by blank lines and cut at [`MAX_TEXT_CHARS`].
//!
//! The bytes of a page are decoded by [`encoding_rs`] (the WHATWG encodings, as browsers
//! decode pages) in the encoding named by a byte order mark, the `Content-Type` or a
//! `<meta charset>` ([`decode_bytes`]).
//!
//! The work grows with the square of the page's nesting depth (html5ever's tree building and
//! Readability's scoring walk the open elements and the ancestors): ordinary pages nest a few
//! dozen elements deep and read in milliseconds; a page nesting 2,000 elements takes seconds,
//! one nesting 10,000 minutes.

use dom_smoothie::{Config, Readability, TextMode};
use encoding_rs::Encoding;

/// Most characters of main text kept (a longer text is cut at a paragraph).
pub const MAX_TEXT_CHARS: usize = 200_000;

/// What [`extract`] read from a page.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Extracted {
    /// The page's title (empty if it has none).
    pub title: String,
    /// The readable main text: paragraphs separated by blank lines.
    pub text: String,
    /// The page's own short description (`og:description`, `description`), if any.
    pub description: Option<String>,
}

/// Read the title, main text and description of an HTML page.
pub fn extract(html: &str) -> Extracted {
    let config = Config {
        text_mode: TextMode::Formatted,
        ..Config::default()
    };
    // Only a relative document URL is refused, and none is given.
    let Ok(mut reader) = Readability::new(html, None, Some(config)) else {
        return Extracted::default();
    };
    // The page's metadata as Readability reads it, before `parse` falls back to the first
    // paragraph for a page without a description of its own.
    let metadata = reader.get_article_metadata(reader.parse_json_ld());
    let description =
        Some(normalize_space(&metadata.excerpt.unwrap_or_default())).filter(|d| !d.is_empty());
    let (title, text) = match reader.parse() {
        Ok(article) => (article.title, article.text_content.to_string()),
        // No block to read (an empty page): whatever text its body has.
        Err(_) => (
            metadata.title,
            reader.doc.select("body").formatted_text().to_string(),
        ),
    };
    Extracted {
        title: normalize_space(&title),
        text: paragraphs(&text),
        description,
    }
}

/// Collapse runs of whitespace to one space and trim.
fn normalize_space(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text as paragraphs separated by one blank line (lines trimmed, runs of blank lines
/// collapsed, non-breaking spaces as spaces), cut at the last paragraph that ends within
/// [`MAX_TEXT_CHARS`] characters (a first paragraph longer than that is cut inside).
fn paragraphs(text: &str) -> String {
    let text = text.replace('\u{a0}', " ");
    let mut out = String::new();
    let mut chars = 0;
    let mut blank = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        let sep = match (out.is_empty(), blank) {
            (true, _) => "",
            (false, true) => "\n\n",
            (false, false) => "\n",
        };
        let len = sep.len() + line.chars().count();
        if chars + len > MAX_TEXT_CHARS {
            if out.is_empty() {
                out.extend(line.chars().take(MAX_TEXT_CHARS));
            } else if !blank {
                // The line is inside a paragraph: that paragraph goes, unless it is the first.
                if let Some(at) = out.rfind("\n\n") {
                    out.truncate(at);
                }
            }
            break;
        }
        out.push_str(sep);
        out.push_str(line);
        chars += len;
        blank = false;
    }
    out
}

/// The text of a page's bytes: in the encoding named by a byte order mark, else UTF-8 if the
/// bytes are UTF-8, else in the encoding the `Content-Type` or a `<meta charset>` in the first
/// 2,048 bytes names (any WHATWG label), else UTF-8 with replacement characters.
pub fn decode_bytes(bytes: &[u8], content_type: Option<&str>) -> String {
    if let Some((encoding, bom)) = Encoding::for_bom(bytes) {
        let tail = bytes.get(bom..).unwrap_or_default();
        return encoding.decode_without_bom_handling(tail).0.into_owned();
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return text.to_string();
    }
    let head = bytes.get(..2_048).unwrap_or(bytes);
    content_type
        .and_then(|t| declared_encoding(t.as_bytes()))
        .or_else(|| declared_encoding(head))
        .unwrap_or(encoding_rs::UTF_8)
        .decode_without_bom_handling(bytes)
        .0
        .into_owned()
}

/// The encoding named by the first `charset=` in `text` (quoted or not), if it is a WHATWG label.
fn declared_encoding(text: &[u8]) -> Option<&'static Encoding> {
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
    Encoding::for_label(rest.get(..end)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_text_and_description() {
        let html = "<html><head><title>A longer page about green tea | Tea Site</title><script>if (a<b) { document.write('</div>') }</script></head><body><div><p>First paragraph about green tea &amp; water&#8217;s heat, with commas, and more words.</p><p>Second paragraph about black tea, also long enough to count.</p></div><nav><p>Home, About, Contact, and a link list that is long.</p></nav></body></html>";
        let e = extract(html);
        assert_eq!(e.title, "A longer page about green tea");
        assert!(
            e.text
                .starts_with("First paragraph about green tea & water’s heat, with commas"),
            "{}",
            e.text
        );
        assert!(
            e.text
                .contains("more words.\n\nSecond paragraph about black tea"),
            "{}",
            e.text
        );
        assert!(!e.text.contains("Home, About"), "{}", e.text);
        assert!(!e.text.contains("document.write"), "{}", e.text);
        // Without a description of its own, a page has none (not its first paragraph).
        assert_eq!(e.description, None);
        let described = html.replace(
            "<title>",
            "<meta name=\"description\" content=\" Tea,  brewed. \"><title>",
        );
        assert_eq!(
            extract(&described).description.as_deref(),
            Some("Tea, brewed.")
        );
        assert_eq!(extract(""), Extracted::default());
    }

    #[test]
    fn text_is_cut_at_a_paragraph() {
        let para = "word ".repeat(30_000);
        let html = format!(
            "<title>Long</title><article><p>{para}</p><p>{para}</p><p>{para}</p></article>"
        );
        let text = extract(&html).text;
        assert_eq!(text.split("\n\n").count(), 1, "{}", text.len());
        assert_eq!(text.chars().count(), para.trim().chars().count());
        let one = "x".repeat(MAX_TEXT_CHARS + 10);
        assert_eq!(paragraphs(&one).chars().count(), MAX_TEXT_CHARS);
        assert_eq!(paragraphs(" a \n\n\n b\u{a0}c\n d "), "a\n\nb c\nd");
    }

    #[test]
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
}
