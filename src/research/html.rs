//! Reading a web page: its title and its readable text, from the HTML.
//!
//! The HTML is parsed by [`Dom::parse`], a forgiving tag-soup parser of its own (as `tl` parses,
//! which it replaced: -10 KB of gzipped wasm with its hash maps; `scraper`/html5ever and
//! `lol_html` cost about 480 KB of wasm and `html5gum` 230 KB). It does not treat `<script>`
//! and `<style>` as raw text, nor close elements implicitly, so before parsing, comments and
//! the raw-text and non-content elements (`script`, `style`, `noscript`, `template`, `svg`,
//! `math`, `iframe`, `object`, `textarea`) are cut out exactly as the HTML tokenizer would end
//! them (at the first `</name`), and the text is then read as a flat sequence of blocks,
//! which needs no implicit closing.
//!
//! **Title**: the page's declared title (`og:title`, `dc:title`, `twitter:title` metadata,
//! or JSON-LD `headline`), else the `<title>` cleaned of a site name the way Mozilla's
//! Readability does (`Article | Site` → `Article`, unless that leaves too few words), else
//! the first `<h1>`.
//!
//! **Main text** (a small Readability): navigation, headers, footers, asides, forms, menus
//! and anything hidden or named like boilerplate (`nav`, `menu`, `sidebar`, `comment`,
//! `share`, `footer`, `cookie`, `related`, `promo`, ...) is skipped. Each paragraph-like
//! block of 25 characters or more scores `1 + commas + min(length / 100, 3)` for its
//! container (`div`, `article`, `section`, `main`, `td`, ...), half that for the container's
//! container and a third for the next; a container's score is scaled down by its link
//! density. The best container's blocks, in order, are the main text (blocks that are mostly
//! links and short are left out), one block per paragraph, separated by blank lines.
//! A page without such blocks gives all its remaining text.

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

/// Read the title and main text of an HTML page.
pub fn extract(html: &str) -> Extracted {
    let stripped = strip_raw_elements(html);
    let meta = Meta::of(html, &stripped.cut);
    let mut blocks = Blocks::default();
    {
        let dom = Dom::parse(&stripped.html);
        let mut walk = Walk {
            dom: &dom,
            blocks: &mut blocks,
            containers: Vec::new(),
            next_container: 0,
            link_depth: 0,
            pre_depth: 0,
            h1: None,
            title_tag: None,
        };
        for &node in &dom.top {
            walk.node(node, 0);
        }
        walk.flush();
        let h1 = walk.h1.take();
        let title_tag = walk.title_tag.take();
        let title = meta
            .declared_title
            .clone()
            .or_else(|| title_tag.map(|t| clean_title(&t, h1.as_deref())))
            .or(h1)
            .unwrap_or_default();
        let mut text = blocks.main_text();
        // A heading that repeats the title is not text of its own.
        if let Some((first, rest)) = text.split_once("\n\n") {
            if !title.is_empty() && normalize_space(first) == title {
                text = rest.to_string();
            }
        }
        Extracted {
            title,
            text,
            description: meta.description,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Before parsing: the elements whose content is not markup.

/// Elements whose whole content is cut before parsing.
const CUT: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "textarea",
    "select",
];

struct Stripped {
    html: String,
    /// What was cut from `<script type="application/ld+json">` elements (for the title).
    cut: Vec<String>,
}

fn starts_with_ci(haystack: &[u8], at: usize, needle: &str) -> bool {
    haystack
        .get(at..at + needle.len())
        .is_some_and(|s| s.eq_ignore_ascii_case(needle.as_bytes()))
}

fn find_ci(haystack: &[u8], from: usize, needle: &str) -> Option<usize> {
    let n = needle.len();
    if n == 0 || haystack.len() < n {
        return None;
    }
    (from..=haystack.len() - n).find(|&i| starts_with_ci(haystack, i, needle))
}

/// Cut comments and [`CUT`] elements (from `<name` to the end of the first `</name…>`),
/// as the HTML tokenizer ends their raw text.
fn strip_raw_elements(html: &str) -> Stripped {
    let bytes = html.as_bytes();
    let mut out = String::with_capacity(html.len());
    let mut cut = Vec::new();
    let mut copied = 0;
    let mut i = 0;
    while let Some(rel) = bytes[i..].iter().position(|b| *b == b'<') {
        let at = i + rel;
        if starts_with_ci(bytes, at, "<!--") {
            let end = find_ci(bytes, at + 4, "-->").map_or(bytes.len(), |e| e + 3);
            out.push_str(&html[copied..at]);
            copied = end;
            i = end;
            continue;
        }
        let name = CUT.iter().copied().find(|name| {
            starts_with_ci(bytes, at + 1, name)
                && bytes
                    .get(at + 1 + name.len())
                    .is_none_or(|b| b.is_ascii_whitespace() || *b == b'>' || *b == b'/')
        });
        let Some(name) = name else {
            i = at + 1;
            continue;
        };
        let open_end = bytes[at..]
            .iter()
            .position(|b| *b == b'>')
            .map_or(bytes.len(), |p| at + p + 1);
        let self_closed = open_end >= 2 && bytes[open_end - 2] == b'/' && name == "svg";
        let close = if self_closed {
            None
        } else {
            find_ci(bytes, open_end, &format!("</{name}"))
        };
        let (content_end, end) = match close {
            Some(c) => (
                c,
                bytes[c..]
                    .iter()
                    .position(|b| *b == b'>')
                    .map_or(bytes.len(), |p| c + p + 1),
            ),
            None if self_closed => (open_end, open_end),
            None => (bytes.len(), bytes.len()),
        };
        if name == "script" {
            let open = &html[at..open_end.min(html.len())];
            if open.to_ascii_lowercase().contains("ld+json") {
                cut.push(html[open_end.min(content_end)..content_end].to_string());
            }
        }
        out.push_str(&html[copied..at]);
        // A space keeps words on either side apart.
        out.push(' ');
        copied = end;
        i = end;
    }
    out.push_str(&html[copied.min(html.len())..]);
    Stripped { html: out, cut }
}

// ---------------------------------------------------------------------------------------
// Metadata.

#[derive(Default)]
struct Meta {
    declared_title: Option<String>,
    description: Option<String>,
}

impl Meta {
    /// Read `<meta>` tags (from the raw HTML's head) and JSON-LD.
    fn of(html: &str, ld_json: &[String]) -> Meta {
        // Few entries: pairs in a `Vec`, the first of a key kept (no hash map type for them).
        let mut values: Vec<(String, String)> = Vec::new();
        let bytes = html.as_bytes();
        let mut i = 0;
        while let Some(at) = find_ci(bytes, i, "<meta") {
            let end = bytes[at..]
                .iter()
                .position(|b| *b == b'>')
                .map_or(bytes.len(), |p| at + p + 1);
            let tag = &html[at..end];
            let attrs = attributes(tag);
            let key = get(&attrs, "property")
                .or_else(|| get(&attrs, "name"))
                .map(|k| k.to_ascii_lowercase());
            if let (Some(key), Some(content)) = (key, get(&attrs, "content")) {
                let content = normalize_space(&decode_entities(content));
                if !content.is_empty() {
                    for k in key.split_whitespace() {
                        if get(&values, k).is_none() {
                            values.push((k.to_string(), content.clone()));
                        }
                    }
                }
            }
            i = end;
        }
        let from_ld = ld_json.iter().find_map(|text| {
            let value: serde_json::Value = crate::json::parse(text.trim()).ok()?;
            let find = |v: &serde_json::Value| {
                v.get("headline")
                    .or_else(|| {
                        v.get("name")
                            .filter(|_| v.get("@type").is_some_and(is_article))
                    })
                    .and_then(serde_json::Value::as_str)
                    .map(|s| normalize_space(&decode_entities(s)))
            };
            match &value {
                serde_json::Value::Array(items) => items.iter().find_map(find),
                other => find(other).or_else(|| {
                    other
                        .get("@graph")
                        .and_then(serde_json::Value::as_array)
                        .and_then(|g| g.iter().find_map(find))
                }),
            }
        });
        let declared_title = from_ld
            .or_else(|| {
                [
                    "dc:title",
                    "dcterm:title",
                    "og:title",
                    "title",
                    "twitter:title",
                ]
                .iter()
                .find_map(|k| get(&values, k).cloned())
            })
            .filter(|t| !t.is_empty());
        let description = ["og:description", "description", "twitter:description"]
            .iter()
            .find_map(|k| get(&values, k).cloned());
        Meta {
            declared_title,
            description,
        }
    }
}

fn is_article(t: &serde_json::Value) -> bool {
    let is = |s: &str| s.contains("Article") || s.contains("Posting") || s == "Report";
    match t {
        serde_json::Value::String(s) => is(s),
        serde_json::Value::Array(items) => items.iter().filter_map(|v| v.as_str()).any(is),
        _ => false,
    }
}

/// The value of `key` among `pairs`.
fn get<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a String> {
    pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// The attributes of one tag's text (`<meta a="b" c='d' e=f>`), names lower-cased; the first
/// of a repeated name is kept.
fn attributes(tag: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let body = tag
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim_end_matches('/');
    let mut rest = body
        .split_once(|c: char| c.is_whitespace())
        .map_or("", |(_, r)| r);
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        let name_end = rest
            .find(|c: char| c == '=' || c.is_whitespace())
            .unwrap_or(rest.len());
        let name = rest[..name_end].to_ascii_lowercase();
        rest = rest[name_end..].trim_start();
        let value = if let Some(after) = rest.strip_prefix('=') {
            let after = after.trim_start();
            let (value, next) = match after.chars().next() {
                Some(q @ ('"' | '\'')) => {
                    let inner = &after[1..];
                    match inner.find(q) {
                        Some(e) => (&inner[..e], &inner[e + 1..]),
                        None => (inner, ""),
                    }
                }
                _ => {
                    let e = after.find(char::is_whitespace).unwrap_or(after.len());
                    (&after[..e], &after[e..])
                }
            };
            rest = next;
            value.to_string()
        } else {
            String::new()
        };
        if !name.is_empty() && get(&out, &name).is_none() {
            out.push((name, value));
        }
    }
    out
}

/// Readability's title cleaning: drop a site name after a separator, unless too little is
/// left.
fn clean_title(raw: &str, h1: Option<&str>) -> String {
    let original = normalize_space(raw);
    let words = |s: &str| s.split_whitespace().count();
    let separators = [" | ", " - ", " – ", " — ", " \\ ", " / ", " > ", " » "];
    let hierarchical = [" \\ ", " / ", " > ", " » "];
    let mut title = original.clone();
    let mut had_hierarchical = false;
    let last_sep = separators
        .iter()
        .filter_map(|s| original.rfind(s).map(|i| (i, *s)))
        .max_by_key(|(i, _)| *i);
    if let Some((at, sep)) = last_sep {
        had_hierarchical = hierarchical.iter().any(|h| original.contains(h));
        title = original[..at].to_string();
        if words(&title) < 3 {
            let first = separators
                .iter()
                .filter_map(|s| original.find(s).map(|i| (i, s.len())))
                .min_by_key(|(i, _)| *i)
                .unwrap_or((at, sep.len()));
            title = original[first.0 + first.1..].to_string();
        }
    } else if original.contains(": ") {
        let matches_heading = h1.is_some_and(|h| normalize_space(h) == original);
        if !matches_heading {
            let after_last = original
                .rfind(':')
                .map_or(original.as_str(), |i| &original[i + 1..]);
            title = after_last.trim().to_string();
            if words(&title) < 3 {
                title = original
                    .find(':')
                    .map_or(original.as_str(), |i| &original[i + 1..])
                    .trim()
                    .to_string();
            } else if original
                .find(':')
                .is_some_and(|i| words(&original[..i]) > 5)
            {
                title = original.clone();
            }
        }
    } else if original.chars().count() > 150 || original.chars().count() < 15 {
        if let Some(h1) = h1 {
            title = normalize_space(h1);
        }
    }
    let title = normalize_space(&title);
    let n = words(&title);
    if n <= 4 && (!had_hierarchical || n + 1 != words(&original)) {
        return original;
    }
    title
}

// ---------------------------------------------------------------------------------------
// The walk: a flat sequence of text blocks, each with its containers.

/// Elements (and their content) that are never main text.
const SKIP: &[&str] = &[
    "aside", "button", "canvas", "dialog", "footer", "form", "head", "header", "input", "label",
    "map", "menu", "nav", "video",
];

/// Elements that start and end a block of text.
const BLOCK: &[&str] = &[
    "address",
    "article",
    "blockquote",
    "body",
    "caption",
    "center",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "figcaption",
    "figure",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "html",
    "li",
    "main",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "th",
    "tr",
    "ul",
];

/// Elements that hold blocks and collect their scores.
const CONTAINER: &[&str] = &[
    "article",
    "blockquote",
    "body",
    "center",
    "div",
    "font",
    "main",
    "section",
    "span",
    "td",
];

/// Class or id words that mark boilerplate.
const JUNK: &[&str] = &[
    "advert",
    "author-bio",
    "banner",
    "breadcrumb",
    "byline",
    "comment",
    "cookie",
    "disqus",
    "footer",
    "footnote",
    "hidden",
    "jump",
    "login",
    "masthead",
    "menu",
    "modal",
    "mw-jump",
    "nav",
    "newsletter",
    "outbrain",
    "pagination",
    "popup",
    "print",
    "promo",
    "rail",
    "related",
    "share",
    "sharing",
    "sidebar",
    "signup",
    "skip",
    "social",
    "sponsor",
    "subscribe",
    "taboola",
    "tags",
    "toolbar",
    "widget",
];

/// Class or id words that mark content (they outweigh a junk word).
const CONTENT: &[&str] = &[
    "article", "content", "main", "post", "entry", "body", "story", "text", "blog",
];

/// ARIA roles of boilerplate.
const JUNK_ROLES: &[&str] = &[
    "alert",
    "banner",
    "complementary",
    "contentinfo",
    "dialog",
    "menu",
    "menubar",
    "navigation",
    "search",
];

/// One block of text, as read.
#[derive(Debug, Clone)]
struct Block {
    text: String,
    /// Characters of it inside links.
    link_chars: usize,
    /// The element that holds it (`p`, `li`, `h2`, `div`, ...).
    kind: String,
    /// Its containers, innermost last (ids).
    containers: Vec<usize>,
}

#[derive(Default)]
struct Blocks {
    list: Vec<Block>,
    /// The text being read (not yet a block) and its link characters.
    pending: String,
    pending_links: usize,
}

// ---------------------------------------------------------------------------------------
// Parsing.

/// Elements that never have content (so a start tag is not left open).
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param",
    "source", "track", "wbr",
];

/// A node of a parsed page.
enum Node<'a> {
    /// Text between tags, entities not yet decoded.
    Text(&'a str),
    Element {
        /// Its name, lower-cased.
        name: String,
        /// Its start tag's text (`<div class="x">`), for its attributes.
        tag: &'a str,
        /// Its children, by index in [`Dom::nodes`].
        children: Vec<usize>,
    },
}

/// A page parsed as tag soup, the way `tl` parsed it: an end tag closes the innermost open
/// element only when it names that element (any other end tag is ignored), a void element or
/// a start tag ending in `/>` has no content, elements left open end with the page, and
/// nothing is closed implicitly. Markup declarations (`<!doctype>`, `<!-- -->`, `<?…>`) are
/// skipped, and a `<` that does not start a tag is text.
struct Dom<'a> {
    nodes: Vec<Node<'a>>,
    /// The top-level nodes, in order.
    top: Vec<usize>,
}

impl<'a> Dom<'a> {
    fn parse(html: &'a str) -> Dom<'a> {
        let bytes = html.as_bytes();
        let mut dom = Dom {
            nodes: Vec::new(),
            top: Vec::new(),
        };
        // The open elements, innermost last.
        let mut open: Vec<usize> = Vec::new();
        let mut text_from = 0;
        let mut i = 0;
        while let Some(rel) = bytes[i..].iter().position(|b| *b == b'<') {
            let at = i + rel;
            let next = bytes.get(at + 1).copied().unwrap_or(b' ');
            if !(next.is_ascii_alphabetic() || matches!(next, b'/' | b'!' | b'?')) {
                // Not a tag: the `<` is text.
                i = at + 1;
                continue;
            }
            if text_from < at {
                dom.add(&open, Node::Text(&html[text_from..at]));
            }
            let end = if starts_with_ci(bytes, at, "<!--") {
                find_ci(bytes, at + 4, "-->").map_or(bytes.len(), |e| e + 3)
            } else {
                tag_end(bytes, at)
            };
            let tag = &html[at..end];
            if next == b'/' {
                let name = tag[2..]
                    .trim_end_matches('>')
                    .split(|c: char| c.is_ascii_whitespace())
                    .next()
                    .unwrap_or_default();
                let innermost = open.last().map(|&e| &dom.nodes[e]);
                if matches!(innermost, Some(Node::Element { name: n, .. }) if n.eq_ignore_ascii_case(name))
                {
                    open.pop();
                }
            } else if next.is_ascii_alphabetic() {
                let name = tag[1..]
                    .split(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>')
                    .next()
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                let has_content = !tag.trim_end_matches('>').ends_with('/')
                    && VOID.binary_search(&name.as_str()).is_err();
                let element = dom.add(
                    &open,
                    Node::Element {
                        name,
                        tag,
                        children: Vec::new(),
                    },
                );
                if has_content {
                    open.push(element);
                }
            }
            i = end;
            text_from = end;
        }
        if text_from < bytes.len() {
            dom.add(&open, Node::Text(&html[text_from..]));
        }
        dom
    }

    /// Add a node to the innermost open element (or the top level); its index.
    fn add(&mut self, open: &[usize], node: Node<'a>) -> usize {
        let index = self.nodes.len();
        self.nodes.push(node);
        match open.last().map(|&e| &mut self.nodes[e]) {
            Some(Node::Element { children, .. }) => children.push(index),
            _ => self.top.push(index),
        }
        index
    }

    /// The text of a node and everything inside it, entities decoded.
    fn inner_text(&self, node: usize) -> String {
        let mut text = String::new();
        // Depth first, in order, without recursion (a page may nest deeply).
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            match &self.nodes[n] {
                Node::Text(t) => text.push_str(t),
                Node::Element { children, .. } => stack.extend(children.iter().rev()),
            }
        }
        decode_entities(&text)
    }
}

/// Where the tag starting at `at` ends: after its `>` (one inside a quoted attribute value
/// does not count), or at the end of the page.
fn tag_end(bytes: &[u8], at: usize) -> usize {
    let mut quote = None;
    let mut after_equals = false;
    for (i, &b) in bytes.iter().enumerate().skip(at + 1) {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'>' => return i + 1,
            None if after_equals && (b == b'"' || b == b'\'') => quote = Some(b),
            None => {}
        }
        if !b.is_ascii_whitespace() {
            after_equals = b == b'=';
        }
    }
    bytes.len()
}

struct Walk<'p, 'a> {
    dom: &'p Dom<'a>,
    blocks: &'p mut Blocks,
    /// Open containers: (id, tag).
    containers: Vec<usize>,
    next_container: usize,
    link_depth: usize,
    pre_depth: usize,
    h1: Option<String>,
    title_tag: Option<String>,
}

fn is_junk(tag: &str) -> bool {
    let attrs = attributes(tag);
    let get = |name: &str| get(&attrs, name).map(|v| v.to_ascii_lowercase());
    if get("hidden").is_some() || get("aria-hidden").as_deref() == Some("true") {
        return true;
    }
    if let Some(style) = get("style") {
        let style: String = style.chars().filter(|c| !c.is_whitespace()).collect();
        if style.contains("display:none") || style.contains("visibility:hidden") {
            return true;
        }
    }
    if get("role").is_some_and(|r| JUNK_ROLES.binary_search(&r.as_str()).is_ok()) {
        return true;
    }
    let names = format!(
        "{} {}",
        get("class").unwrap_or_default(),
        get("id").unwrap_or_default()
    );
    let words: Vec<&str> = names
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let whole = names.as_str();
    let junk = JUNK
        .iter()
        .any(|j| words.contains(j) || (j.contains('-') && whole.contains(j)));
    junk && !CONTENT.iter().any(|c| words.contains(c))
}

impl Walk<'_, '_> {
    fn node(&mut self, node: usize, depth: usize) {
        if depth > 400 {
            return;
        }
        match &self.dom.nodes[node] {
            Node::Text(text) => {
                let text = decode_entities(text);
                self.text(&text);
            }
            Node::Element {
                name,
                tag,
                children,
            } => {
                let name = name.as_str();
                if name == "title" {
                    if self.title_tag.is_none() {
                        self.title_tag = Some(self.dom.inner_text(node));
                    }
                    return;
                }
                if name == "head" {
                    // Only its title is read.
                    for &child in children {
                        let is_title = matches!(&self.dom.nodes[child], Node::Element { name, .. } if name == "title");
                        if is_title && self.title_tag.is_none() {
                            self.title_tag = Some(self.dom.inner_text(child));
                        }
                    }
                    return;
                }
                let structural = matches!(name, "html" | "body" | "main" | "article");
                if SKIP.binary_search(&name).is_ok() || (!structural && is_junk(tag)) {
                    // Its words stay apart from the text around it.
                    self.space();
                    return;
                }
                if name == "h1" && self.h1.is_none() {
                    let text = normalize_space(&self.dom.inner_text(node));
                    if !text.is_empty() {
                        self.h1 = Some(text);
                    }
                }
                if name == "br" {
                    self.blocks.pending.push('\n');
                    return;
                }
                let block = BLOCK.binary_search(&name).is_ok();
                if block {
                    self.flush();
                }
                let container = CONTAINER.binary_search(&name).is_ok();
                if container {
                    self.containers.push(self.next_container);
                    self.next_container += 1;
                }
                let link = name == "a";
                if link {
                    self.link_depth += 1;
                }
                if name == "pre" {
                    self.pre_depth += 1;
                }
                if matches!(name, "td" | "th" | "img") {
                    self.space();
                }
                for &child in children {
                    self.node(child, depth + 1);
                }
                if name == "pre" {
                    self.pre_depth -= 1;
                }
                if link {
                    self.link_depth -= 1;
                }
                if block {
                    self.flush_as(name);
                }
                if container {
                    self.containers.pop();
                }
            }
        }
    }

    fn space(&mut self) {
        if !self.blocks.pending.ends_with(char::is_whitespace) {
            self.blocks.pending.push(' ');
        }
    }

    fn text(&mut self, text: &str) {
        if self.pre_depth == 0 {
            let mut last_space = self.blocks.pending.ends_with(char::is_whitespace);
            for c in text.chars() {
                if c.is_whitespace() {
                    if !last_space {
                        self.blocks.pending.push(' ');
                    }
                    last_space = true;
                } else {
                    self.blocks.pending.push(c);
                    last_space = false;
                    if self.link_depth > 0 {
                        self.blocks.pending_links += 1;
                    }
                }
            }
        } else {
            self.blocks.pending.push_str(text);
        }
    }

    fn flush(&mut self) {
        self.flush_as("div");
    }

    fn flush_as(&mut self, kind: &str) {
        let pending = std::mem::take(&mut self.blocks.pending);
        let links = std::mem::take(&mut self.blocks.pending_links);
        let text: String = if self.pre_depth > 0 || kind == "pre" {
            pending.trim_matches('\n').to_string()
        } else {
            pending
                .split('\n')
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("\n")
        };
        if text.trim().is_empty() {
            return;
        }
        self.blocks.list.push(Block {
            text,
            link_chars: links,
            kind: kind.to_string(),
            containers: self.containers.clone(),
        });
    }
}

impl Blocks {
    fn main_text(&self) -> String {
        let paragraph = |b: &Block| {
            matches!(
                b.kind.as_str(),
                "p" | "pre" | "blockquote" | "td" | "li" | "div" | "dd" | "article" | "section"
            )
        };
        // Per container (ids are dense, in the order the walk opened them).
        #[derive(Clone, Copy, Default)]
        struct Stat {
            /// The paragraph score, if any paragraph scored for it.
            score: Option<f64>,
            /// Chars of text, and of link text, inside.
            chars: usize,
            links: usize,
            /// Chars of good paragraph text inside.
            good: usize,
        }
        let count = self
            .list
            .iter()
            .flat_map(|b| b.containers.iter())
            .max()
            .map_or(0, |last| last + 1);
        let mut stats = vec![Stat::default(); count];
        for b in &self.list {
            let len = b.text.chars().count();
            for c in &b.containers {
                stats[*c].chars += len;
                stats[*c].links += b.link_chars;
            }
            if !paragraph(b) || len < 25 || b.link_chars * 2 > len {
                continue;
            }
            for c in &b.containers {
                stats[*c].good += len;
            }
            let commas = b.text.matches([',', '，', '、']).count() as f64;
            let score = 1.0 + commas + (len as f64 / 100.0).min(3.0);
            for (level, c) in b.containers.iter().rev().take(3).enumerate() {
                let divider = match level {
                    0 => 1.0,
                    1 => 2.0,
                    _ => 3.0 * level as f64,
                };
                *stats[*c].score.get_or_insert(0.0) += score / divider;
            }
        }
        // The container with the best paragraph score; then the innermost container that
        // holds most (3/4) of the good paragraph text of the best one's outermost container,
        // so an article split into several inner containers is kept whole.
        let best = stats
            .iter()
            .enumerate()
            .filter_map(|(c, stat)| {
                let density = stat.links as f64 / stat.chars.max(1) as f64;
                Some((c, stat.score? * (1.0 - density)))
            })
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            .map(|(top, _)| {
                let chain: Vec<usize> = self
                    .list
                    .iter()
                    .find(|b| b.containers.contains(&top))
                    .map(|b| {
                        let at = b.containers.iter().position(|c| *c == top).unwrap_or(0);
                        b.containers[..=at].to_vec()
                    })
                    .unwrap_or_default();
                let good = |c: usize| stats[c].good;
                let outer = chain.iter().map(|c| good(*c)).max().unwrap_or(0);
                chain
                    .iter()
                    .rev()
                    .find(|c| good(**c) * 4 >= outer * 3)
                    .copied()
                    .unwrap_or(top)
            });
        let chosen: Vec<&Block> = match best {
            Some(top) => self
                .list
                .iter()
                .filter(|b| b.containers.contains(&top))
                .filter(|b| {
                    let len = b.text.chars().count();
                    !(b.link_chars * 2 > len && len < 200)
                })
                .collect(),
            None => self.list.iter().collect(),
        };
        let mut out = String::new();
        for b in chosen {
            if out.chars().count() + b.text.chars().count() > MAX_TEXT_CHARS {
                break;
            }
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(&b.text);
        }
        out
    }
}

// ---------------------------------------------------------------------------------------
// Text helpers.

/// Collapse runs of whitespace to one space and trim.
pub fn normalize_space(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Named character references decoded (the common ones; numeric ones all).
const ENTITIES: [(&str, char); 40] = [
    ("amp", '&'),
    ("lt", '<'),
    ("gt", '>'),
    ("quot", '"'),
    ("apos", '\''),
    ("nbsp", '\u{a0}'),
    ("mdash", '—'),
    ("ndash", '–'),
    ("hellip", '…'),
    ("lsquo", '‘'),
    ("rsquo", '’'),
    ("ldquo", '“'),
    ("rdquo", '”'),
    ("laquo", '«'),
    ("raquo", '»'),
    ("bull", '•'),
    ("middot", '·'),
    ("copy", '©'),
    ("reg", '®'),
    ("trade", '™'),
    ("deg", '°'),
    ("eacute", 'é'),
    ("egrave", 'è'),
    ("ecirc", 'ê'),
    ("aacute", 'á'),
    ("agrave", 'à'),
    ("acirc", 'â'),
    ("ccedil", 'ç'),
    ("iacute", 'í'),
    ("oacute", 'ó'),
    ("ocirc", 'ô'),
    ("uacute", 'ú'),
    ("uuml", 'ü'),
    ("ouml", 'ö'),
    ("auml", 'ä'),
    ("szlig", 'ß'),
    ("ntilde", 'ñ'),
    ("euro", '€'),
    ("pound", '£'),
    ("times", '×'),
];

/// Decode character references (`&amp;`, `&#8217;`, `&#x2019;`, common named ones).
pub fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest[1..]
            .char_indices()
            .take(12)
            .find(|(_, c)| !c.is_ascii_alphanumeric() && *c != '#')
            .map(|(i, _)| i + 1);
        let (name, consumed) = match end {
            Some(e) if rest[e..].starts_with(';') => (&rest[1..e], e + 1),
            Some(e) => (&rest[1..e], e),
            None if rest.len() <= 13 => (&rest[1..], rest.len()),
            None => ("", 1),
        };
        let decoded = if let Some(num) = name.strip_prefix('#') {
            let code = match num.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => num.parse::<u32>().ok(),
            };
            code.map(|c| char::from_u32(c).unwrap_or('\u{fffd}'))
        } else {
            ENTITIES.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
        };
        match decoded {
            Some(c) => {
                out.push(if c == '\u{a0}' { ' ' } else { c });
                rest = &rest[consumed..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The text of a page's bytes: UTF-8, or Latin-1/Windows-1252 when the `Content-Type` (or a
/// `<meta charset>`) says so and the bytes are not UTF-8.
pub fn decode_bytes(bytes: &[u8], content_type: Option<&str>) -> String {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return text.to_string();
    }
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(2_048)]).to_ascii_lowercase();
    let declared = content_type
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let latin = [
        "iso-8859-1",
        "windows-1252",
        "latin1",
        "latin-1",
        "us-ascii",
    ]
    .iter()
    .any(|c| {
        declared.contains(c)
            || head.contains(&format!("charset={c}"))
            || head.contains(&format!("charset=\"{c}"))
    });
    if !latin {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    // Windows-1252's C1 range; the rest is Latin-1.
    const C1: [char; 32] = [
        '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8d}', 'Ž',
        '\u{8f}', '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9d}',
        'ž', 'Ÿ',
    ];
    bytes
        .iter()
        .map(|b| match b {
            0x80..=0x9f => C1[(b - 0x80) as usize],
            _ => *b as char,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lists searched by `binary_search` are sorted, without repeats.
    #[test]
    fn searched_word_lists_are_sorted() {
        for list in [JUNK, BLOCK, SKIP, CONTAINER, JUNK_ROLES, VOID] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
        }
    }

    #[test]
    fn entities_and_raw_text() {
        assert_eq!(
            decode_entities("a &amp; b &#8217; &#x2019; &rsquo; &nope; &"),
            "a & b ’ ’ ’ &nope; &"
        );
        let html = "<html><head><title>A longer page about green tea | Tea Site</title><script>if (a<b) { document.write('</div>') }</script></head><body><div><p>First paragraph about green tea, with commas, and more words.</p><p>Second paragraph about black tea, also long enough to count.</p></div><nav><p>Home, About, Contact, and a link list that is long.</p></nav></body></html>";
        let e = extract(html);
        assert_eq!(e.title, "A longer page about green tea");
        assert!(
            e.text.contains("First paragraph about green tea"),
            "{}",
            e.text
        );
        assert!(e.text.contains("Second paragraph"), "{}", e.text);
        assert!(!e.text.contains("Home, About"), "{}", e.text);
        assert!(!e.text.contains("document.write"), "{}", e.text);
    }

    /// The tag soup is parsed as `tl` parsed it (the six saved pages of `tests/research_html.rs`
    /// read exactly as they did with it), except that a `<` that starts no tag is text.
    #[test]
    fn tag_soup() {
        let text = |html: &str| extract(html).text;
        // A stray `<` is text; a `>` inside a quoted value does not end the tag.
        assert_eq!(text("<p>a < b and c > d</p>"), "a < b and c > d");
        assert_eq!(text("<a title=\"x > y\" href=#>link</a> tail"), "link tail");
        // An end tag that does not name the innermost open element is ignored, in any case.
        let dom = Dom::parse("<DIV><P>one</span>two</p>three</div>four");
        let Node::Element { name, children, .. } = &dom.nodes[dom.top[0]] else {
            panic!("an element first");
        };
        assert_eq!(
            (name.as_str(), children.len(), dom.top.len()),
            ("div", 2, 2)
        );
        assert_eq!(dom.inner_text(dom.top[0]), "onetwothree");
        // Void and self-closed elements hold nothing; comments and declarations are skipped.
        let dom = Dom::parse("<!doctype html><br><img src=a><x/><!-- <p> -->text");
        assert_eq!(dom.top.len(), 4);
        assert_eq!(dom.inner_text(dom.top[3]), "text");
        // A tag left unterminated ends the page.
        assert_eq!(text("<p>kept <b class=\"x"), "kept");
        // Deep nesting neither overflows the stack nor loses what is inside the limit.
        let deep = format!("{}deep text{}", "<div>".repeat(100_000), "</div>".repeat(3));
        assert_eq!(Dom::parse(&deep).inner_text(0), "deep text");
    }

    #[test]
    fn latin1() {
        assert_eq!(
            decode_bytes(
                b"caf\xe9 \x93q\x94",
                Some("text/html; charset=windows-1252")
            ),
            "café “q”"
        );
    }
}
