//! The reading itself: Readability on html5ever, after a measure of the page's nesting.

use std::cell::{Cell, RefCell};

use dom_smoothie::{Config, Readability, TextMode};
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer,
};
use html5ever::{local_name, LocalName};

use crate::{ExtractError, Extracted, MAX_DEPTH, MAX_TEXT_CHARS};

/// Read the title, main text and description of an HTML page, unless it nests deeper than
/// [`MAX_DEPTH`].
pub fn extract(html: &str) -> Result<Extracted, ExtractError> {
    let deepest = depth(html);
    if deepest > MAX_DEPTH {
        return Err(ExtractError::TooDeep(deepest));
    }
    Ok(read(html))
}

/// Read a page with Readability.
fn read(html: &str) -> Extracted {
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

/// How deep the elements of a page nest, measured from html5ever's tokens in one pass.
///
/// The open elements are kept as a stack, as html5ever's tree builder keeps them, with the
/// rules that matter for depth: void elements, and self-closing tags inside `<svg>` or
/// `<math>`, open nothing; an end tag closes the innermost open element of its name and those
/// inside it (an end tag matching none is ignored); a start tag first closes the open elements
/// whose end tag it implies (`<li>` a `<li>`, `<td>` a `<td>`, `<div>` a `<p>`, ...); and the
/// text of `<script>`, `<style>`, `<title>`, `<textarea>` and the like holds no tags. The
/// tree builder's rarer corrections (moved formatting elements, tables' foster parents) are
/// not followed: the result estimates the tree's depth.
pub fn depth(html: &str) -> usize {
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    let tokenizer = Tokenizer::new(DepthSink::default(), Default::default());
    // The sink never asks to stop for a script, so one feed reads the whole input.
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    tokenizer.sink.deepest.get()
}

/// The state of [`depth`]'s measure: the open elements and the deepest nesting seen.
#[derive(Default)]
struct DepthSink {
    open: RefCell<Vec<LocalName>>,
    /// How many of the open elements are `<svg>` or `<math>` (where `<x/>` closes itself).
    foreign: Cell<usize>,
    deepest: Cell<usize>,
}

impl TokenSink for DepthSink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        match token {
            Token::TagToken(tag) => self.tag(tag),
            _ => TokenSinkResult::Continue,
        }
    }
}

impl DepthSink {
    fn tag(&self, tag: Tag) -> TokenSinkResult<()> {
        let mut open = self.open.borrow_mut();
        match tag.kind {
            TagKind::EndTag => {
                // Searching only the innermost `MAX_DEPTH` elements keeps a page of stray end
                // tags linear; a page is refused deeper than that anyway.
                let within = open
                    .iter()
                    .rev()
                    .take(MAX_DEPTH)
                    .position(|name| *name == tag.name);
                if let Some(from_top) = within {
                    let at = open.len() - 1 - from_top;
                    let foreign = open.drain(at..).filter(is_foreign_root).count();
                    self.foreign.set(self.foreign.get().saturating_sub(foreign));
                }
                TokenSinkResult::Continue
            }
            TagKind::StartTag => {
                let name = tag.name;
                if let Some(state) = raw_text(&name) {
                    return state;
                }
                if is_void(&name) || (tag.self_closing && self.foreign.get() > 0) {
                    return TokenSinkResult::Continue;
                }
                while open.last().is_some_and(|top| implies_end(&name, top)) {
                    open.pop();
                }
                if is_foreign_root(&name) {
                    if tag.self_closing {
                        return TokenSinkResult::Continue;
                    }
                    self.foreign.set(self.foreign.get() + 1);
                }
                open.push(name);
                self.deepest.set(self.deepest.get().max(open.len()));
                TokenSinkResult::Continue
            }
        }
    }
}

/// Whether the element starts foreign content, where a self-closing tag opens nothing.
fn is_foreign_root(name: &LocalName) -> bool {
    matches!(*name, local_name!("svg") | local_name!("math"))
}

/// The tokenizer state for the text of an element that holds text only (as html5ever's tree
/// builder sets it), which opens no element that could nest.
fn raw_text(name: &LocalName) -> Option<TokenSinkResult<()>> {
    let kind = match *name {
        local_name!("title") | local_name!("textarea") => RawKind::Rcdata,
        local_name!("style")
        | local_name!("xmp")
        | local_name!("iframe")
        | local_name!("noembed")
        | local_name!("noframes")
        | local_name!("noscript") => RawKind::Rawtext,
        local_name!("script") => RawKind::ScriptData,
        local_name!("plaintext") => return Some(TokenSinkResult::Plaintext),
        _ => return None,
    };
    Some(TokenSinkResult::RawData(kind))
}

/// Whether an element has no content and no end tag.
fn is_void(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("area")
            | local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("br")
            | local_name!("col")
            | local_name!("embed")
            | local_name!("frame")
            | local_name!("hr")
            | local_name!("img")
            | local_name!("input")
            | local_name!("keygen")
            | local_name!("link")
            | local_name!("meta")
            | local_name!("param")
            | local_name!("source")
            | local_name!("track")
            | local_name!("wbr")
    )
}

/// Whether a start tag `name` ends the open element `open` (whose end tag may be left out).
fn implies_end(name: &LocalName, open: &LocalName) -> bool {
    match *open {
        local_name!("p") => closes_p(name),
        local_name!("li") => *name == local_name!("li"),
        local_name!("dt") | local_name!("dd") => {
            matches!(*name, local_name!("dt") | local_name!("dd"))
        }
        local_name!("option") => matches!(*name, local_name!("option") | local_name!("optgroup")),
        local_name!("optgroup") => *name == local_name!("optgroup"),
        local_name!("td") | local_name!("th") => matches!(
            *name,
            local_name!("td")
                | local_name!("th")
                | local_name!("tr")
                | local_name!("tbody")
                | local_name!("thead")
                | local_name!("tfoot")
        ),
        local_name!("tr") => matches!(
            *name,
            local_name!("tr") | local_name!("tbody") | local_name!("thead") | local_name!("tfoot")
        ),
        local_name!("tbody") | local_name!("thead") | local_name!("tfoot") => matches!(
            *name,
            local_name!("tbody") | local_name!("thead") | local_name!("tfoot")
        ),
        local_name!("rb") | local_name!("rt") | local_name!("rtc") | local_name!("rp") => matches!(
            *name,
            local_name!("rb") | local_name!("rt") | local_name!("rtc") | local_name!("rp")
        ),
        _ => false,
    }
}

/// Whether a start tag closes an open `<p>` (the block elements).
fn closes_p(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("address")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("blockquote")
            | local_name!("center")
            | local_name!("details")
            | local_name!("dialog")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("dd")
            | local_name!("dt")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("form")
            | local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("li")
            | local_name!("listing")
            | local_name!("main")
            | local_name!("menu")
            | local_name!("nav")
            | local_name!("ol")
            | local_name!("p")
            | local_name!("pre")
            | local_name!("section")
            | local_name!("summary")
            | local_name!("table")
            | local_name!("ul")
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_text_and_description() {
        let html = "<html><head><title>A longer page about green tea | Tea Site</title><script>if (a<b) { document.write('</div>') }</script></head><body><div><p>First paragraph about green tea &amp; water&#8217;s heat, with commas, and more words.</p><p>Second paragraph about black tea, also long enough to count.</p></div><nav><p>Home, About, Contact, and a link list that is long.</p></nav></body></html>";
        let e = extract(html).unwrap();
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
            extract(&described).unwrap().description.as_deref(),
            Some("Tea, brewed.")
        );
        assert_eq!(extract(""), Ok(Extracted::default()));
    }

    #[test]
    fn text_is_cut_at_a_paragraph() {
        let para = "word ".repeat(30_000);
        let html = format!(
            "<title>Long</title><article><p>{para}</p><p>{para}</p><p>{para}</p></article>"
        );
        let text = extract(&html).unwrap().text;
        assert_eq!(text.split("\n\n").count(), 1, "{}", text.len());
        assert_eq!(text.chars().count(), para.trim().chars().count());
        let one = "x".repeat(MAX_TEXT_CHARS + 10);
        assert_eq!(paragraphs(&one).chars().count(), MAX_TEXT_CHARS);
        assert_eq!(paragraphs(" a \n\n\n b\u{a0}c\n d "), "a\n\nb c\nd");
    }

    /// A page whose main text sits in a `<p>` inside `divs` nested `<div>`s, in `<html>` and
    /// `<body>`: `divs + 3` elements deep.
    fn nested(divs: usize) -> String {
        format!(
            "<html><head><title>Deep</title></head><body>{}<p>The keeper wrote in the log, as every night, that the light burned, and the sea was calm.</p>{}</body></html>",
            "<div>".repeat(divs),
            "</div>".repeat(divs)
        )
    }

    #[test]
    fn a_page_nested_too_deep_is_not_read() {
        // Read by Readability, a page nesting 20,000 elements would take minutes.
        assert_eq!(extract(&nested(20_000)), Err(ExtractError::TooDeep(20_003)));
        assert_eq!(
            ExtractError::TooDeep(20_003).to_string(),
            "the page nests 20003 elements deep, more than 256; it was not read"
        );
        assert_eq!(ExtractError::TooDeep(300).code(), "too_deep");
        assert_eq!(
            extract(&nested(MAX_DEPTH - 2)),
            Err(ExtractError::TooDeep(MAX_DEPTH + 1))
        );
        // At the limit, the page is read as any other.
        let read = extract(&nested(MAX_DEPTH - 3)).unwrap();
        assert_eq!(read.title, "Deep");
        assert!(
            read.text.starts_with("The keeper wrote in the log"),
            "{}",
            read.text
        );
        // Unclosed elements count as open, to the end of the page.
        assert_eq!(depth(&"<div><span>".repeat(10_000)), 20_000);
    }

    #[test]
    fn depth_follows_the_open_elements() {
        assert_eq!(depth(""), 0);
        assert_eq!(depth("<p>a</p><p>b</p>"), 1);
        assert_eq!(depth("<div><p><b>a</b></p></div>"), 3);
        // Void elements and self-closing tags in SVG open nothing; `<div/>` opens a div.
        assert_eq!(depth("<p><img src=a><br><input></p>"), 1);
        assert_eq!(depth("<svg><g><path/><path/></g></svg>"), 2);
        assert_eq!(depth("<svg/><div/><div/>"), 2);
        // An end tag closes the elements left open inside; a stray one is ignored.
        assert_eq!(depth("<div><span><i></div><div><span></div></i></b>"), 3);
        // Elements whose end tag is left out close as html5ever closes them.
        assert_eq!(depth(&"<p>para".repeat(1_000)), 1);
        assert_eq!(depth(&format!("<ul>{}</ul>", "<li>item".repeat(1_000))), 2);
        assert_eq!(
            depth(&format!("<select>{}</select>", "<option>a".repeat(1_000))),
            2
        );
        assert_eq!(
            depth(&format!(
                "<table>{}</table>",
                "<tr><td>a<td>b".repeat(1_000)
            )),
            3
        );
        assert_eq!(depth(&"<dl><dt>a<dd>b</dl>".repeat(1_000)), 2);
        assert_eq!(depth(&"<p>a<div>b</div>".repeat(1_000)), 1);
        // Lists nest through their items.
        assert_eq!(depth(&"<ul><li>".repeat(100)), 200);
        // Text-only elements hold no tags.
        assert_eq!(
            depth("<script>document.write('<div><div><div>')</script><style>a<b{}</style><title><div></title><textarea><div></textarea>"),
            0
        );
        assert_eq!(depth("<plaintext><div><div>"), 0);
    }
}
