//! An incremental Server-Sent Events parser over bytes.
//!
//! [`SseParser`] follows the WHATWG HTML "event stream interpretation" rules. Feed it the
//! response body in whatever chunks the network delivers ([`SseParser::push`]); it returns the
//! [`SseEvent`]s those bytes complete. When the body ends, [`SseParser::finish`] returns what
//! the end completes.
//!
//! # Rules
//! - Lines end with LF, CR or CRLF. A CR at the end of one chunk and an LF at the start of the
//!   next are one line ending.
//! - One leading UTF-8 byte order mark (`EF BB BF`) is skipped, even when split across chunks.
//! - Bytes are buffered and decoded as UTF-8 only at line boundaries, so a character split
//!   across chunks is never corrupted. Invalid UTF-8 becomes U+FFFD (lossy decoding, per line).
//! - A line starting with `:` is a comment and is ignored.
//! - `name: value` sets a field; one space after the colon is removed (`data:x`, `data: x`
//!   give `x`; `data:  x` gives ` x`). A line without a colon is a field with an empty value.
//! - `data` appends its value to the event's data (lines joined with `\n`); `event` sets the
//!   event name; `id` sets the event id (ignored if the value contains NUL); `retry` sets the
//!   reconnection time (ignored unless it is only ASCII digits). Other fields are ignored.
//! - A blank line dispatches the event if it had at least one `data` line (even an empty one:
//!   `data:` alone dispatches an event with empty data). An event without any `data` line is
//!   not dispatched. Either way the event name, id and retry of the event are reset.
//!
//! # The end of the stream
//! The spec discards an event whose blank line never came. Providers (and cut connections)
//! sometimes end without it, so [`SseParser::finish`] is more forgiving. Its rule:
//! 1. if the stream ended mid-line (bytes after the last line ending), that partial line is
//!    processed as a complete line;
//! 2. then the end acts as a blank line: the pending event is dispatched if it had at least one
//!    `data` line, exactly as a blank line would dispatch it.
//!
//! A partial last line may be cut off (for instance half a JSON object): the caller's decoder
//! must cope, as it must with any provider output.
//!
//! # Memory
//! At most [`MAX_LINE_BYTES`] bytes of one line are kept; the rest of that line is dropped
//! (which may cut a character, decoded as U+FFFD). An event's data is likewise capped at
//! [`MAX_LINE_BYTES`] bytes (cut at a character boundary). Nothing panics and nothing grows
//! without bound. [`SseParser::with_limit`] sets a smaller limit.
//!
//! # Cost
//! Linear in the bytes fed: each byte is scanned once and copied at most once (into the line
//! buffer, when a line spans chunks); earlier input is never re-scanned. [`SseParser::feed`]
//! hands events over borrowed: an event whose one data line lies within the bytes fed is a
//! slice of them, not a copy.

use serde::Serialize;

/// One already-parsed server-sent event, as the stream decoders consume it: the `event:` name
/// (if any) and the `data:` lines joined with `\n`. It borrows from the SSE parser's event, so
/// handing one over costs nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseMessage<'a> {
    /// The `event:` field, if the event had one.
    pub event: Option<&'a str>,
    /// The data (several `data:` lines joined with `\n`).
    pub data: &'a str,
}

impl<'a> SseMessage<'a> {
    /// An event with a name.
    pub fn new(event: Option<&'a str>, data: &'a str) -> Self {
        Self { event, data }
    }

    /// An unnamed event (`data:` lines only).
    pub fn data(data: &'a str) -> Self {
        Self { event: None, data }
    }
}

/// The most bytes kept of one line, and of one event's data: 16 MiB.
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// The UTF-8 byte order mark.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct SseEvent {
    /// The `event:` name; `None` when absent or empty (the spec's default type, `message`).
    pub event: Option<String>,
    /// The data lines, joined with `\n`.
    pub data: String,
    /// The value of this event's `id:` field, if it had one (the stream's last event id, which
    /// persists across events, is [`SseParser::last_event_id`]).
    pub id: Option<String>,
    /// The value of this event's valid `retry:` field, in milliseconds, if it had one.
    pub retry_ms: Option<u64>,
}

/// Whether the leading byte order mark is still being looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BomCheck {
    /// At the start of the stream, this many bytes of the mark matched so far (0..3).
    Matching(usize),
    /// Past the start of the stream.
    Done,
}

/// An incremental Server-Sent Events parser; see the [module documentation](self).
#[derive(Debug, Clone)]
pub struct SseParser {
    /// The most bytes kept of one line and of one event's data.
    limit: usize,
    /// The leading byte order mark check.
    bom: BomCheck,
    /// The current line's bytes so far, when it spans chunks (at most `limit`).
    line: Vec<u8>,
    /// Bytes of the current line were dropped because it exceeded `limit`.
    line_cut: bool,
    /// The last line ended with CR: an LF next is part of that line ending.
    after_cr: bool,
    /// The pending event's data (when not `slice`).
    data: String,
    /// The pending event's one data line, as a range of the text of the bytes being fed.
    slice: Option<(usize, usize)>,
    /// The pending event had at least one `data` line.
    has_data: bool,
    /// The pending event's name (empty: none).
    event: String,
    /// The pending event's `id`.
    id: Option<String>,
    /// The pending event's `retry`.
    retry_ms: Option<u64>,
    /// The stream's last event id (persists across events).
    last_event_id: String,
    /// The stream's reconnection time (persists across events).
    reconnection_ms: Option<u64>,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl SseParser {
    /// A parser at the start of a stream, keeping at most [`MAX_LINE_BYTES`] of a line.
    pub fn new() -> Self {
        Self::with_limit(MAX_LINE_BYTES)
    }

    /// A parser keeping at most `limit` bytes (at least 1) of one line and of one event's data.
    pub fn with_limit(limit: usize) -> Self {
        Self {
            // At least 1, so that a cut line never becomes a blank line.
            limit: limit.max(1),
            bom: BomCheck::Matching(0),
            line: Vec::new(),
            line_cut: false,
            after_cr: false,
            data: String::new(),
            slice: None,
            has_data: false,
            event: String::new(),
            id: None,
            retry_ms: None,
            last_event_id: String::new(),
            reconnection_ms: None,
        }
    }

    /// The stream's last event id: the value of the latest valid `id:` field, dispatched or
    /// not (empty when none, or after `id:` with an empty value). Kept across
    /// [`finish`](Self::finish), for a reconnection's `Last-Event-ID`.
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// The stream's reconnection time: the latest valid `retry:` field, dispatched or not.
    /// Kept across [`finish`](Self::finish).
    pub fn reconnection_ms(&self) -> Option<u64> {
        self.reconnection_ms
    }

    /// Feed bytes; returns the events completed by them. Linear in the bytes fed: never
    /// re-scans earlier input.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        self.run(bytes, &mut |event| out.push(event.to_owned()));
        out
    }

    /// Feed bytes; hands each event they complete to `on_event`, borrowed: an event's data
    /// is a slice of `bytes` when it is one `data` line within them (the usual case), else
    /// the parser's own buffer, which is reused. Linear in the bytes fed.
    pub fn feed(&mut self, bytes: &[u8], mut on_event: impl FnMut(SseMessage<'_>)) {
        self.run(bytes, &mut |event| on_event(event.message()));
    }

    /// The stream ended: returns what the end completes. A partial last line (bytes after the
    /// last line ending) is processed as a line; then the end acts as a blank line, dispatching
    /// the pending event if it had at least one `data` line.
    ///
    /// Afterwards the parser is ready for a new stream (a reconnection): line, event and byte
    /// order mark state are reset; [`last_event_id`](Self::last_event_id) and
    /// [`reconnection_ms`](Self::reconnection_ms) are kept.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        self.end(&mut |event| out.push(event.to_owned()));
        out
    }

    /// [`finish`](Self::finish), handing the events to `on_event` as [`feed`](Self::feed)
    /// does.
    pub fn finish_with(&mut self, mut on_event: impl FnMut(SseMessage<'_>)) {
        self.end(&mut |event| on_event(event.message()));
    }

    /// Parses `bytes`, dispatching the events they complete to `sink`.
    fn run(&mut self, bytes: &[u8], sink: &mut dyn FnMut(Dispatched<'_>)) {
        let mut at = bytes.len() - self.skip_bom(bytes).len();
        // Lines that begin in these bytes begin at `base` or later: the bytes from there as
        // text, up to the first that is not UTF-8 (usually a character cut at the end), so
        // that the lines within are read without checking them again.
        let base = if self.line.is_empty() && !self.line_cut {
            at
        } else {
            memchr::memchr2(b'\n', b'\r', &bytes[at..]).map_or(bytes.len(), |end| at + end + 1)
        };
        let text = std::str::from_utf8(&bytes[base..]).unwrap_or_else(|e| {
            std::str::from_utf8(&bytes[base..base + e.valid_up_to()]).unwrap_or_default()
        });
        while at < bytes.len() {
            if self.after_cr {
                self.after_cr = false;
                if bytes[at] == b'\n' {
                    at += 1;
                    continue;
                }
            }
            match memchr::memchr2(b'\n', b'\r', &bytes[at..]) {
                None => {
                    self.buffer(&bytes[at..]);
                    break;
                }
                Some(len) => {
                    let end = at + len;
                    if self.line.is_empty() && !self.line_cut {
                        let kept = at..at + len.min(self.limit);
                        let start = kept.start.checked_sub(base);
                        self.process_line(&bytes[kept], start, text, sink);
                    } else {
                        self.buffer(&bytes[at..end]);
                        self.process_buffered_line(text, sink);
                    }
                    self.after_cr = bytes[end] == b'\r';
                    at = end + 1;
                }
            }
        }
        // A data line still pending refers to `bytes`, which the caller takes back.
        self.own_data(text);
    }

    /// The end of the stream (see [`finish`](Self::finish)).
    fn end(&mut self, sink: &mut dyn FnMut(Dispatched<'_>)) {
        if let BomCheck::Matching(matched) = self.bom {
            // The stream ended inside what looked like a byte order mark: those bytes are text.
            self.buffer(&BOM[..matched]);
        }
        if !self.line.is_empty() || self.line_cut {
            self.process_buffered_line("", sink);
        }
        self.dispatch("", sink);
        self.bom = BomCheck::Matching(0);
        self.after_cr = false;
    }

    /// Consumes a leading byte order mark (possibly split across chunks) and returns the rest.
    fn skip_bom<'a>(&mut self, bytes: &'a [u8]) -> &'a [u8] {
        let BomCheck::Matching(mut matched) = self.bom else {
            return bytes;
        };
        let mut taken = 0;
        while matched < BOM.len() && taken < bytes.len() && bytes[taken] == BOM[matched] {
            matched += 1;
            taken += 1;
        }
        if matched == BOM.len() {
            self.bom = BomCheck::Done;
        } else if taken == bytes.len() {
            // Still a possible mark: wait for more bytes.
            self.bom = BomCheck::Matching(matched);
        } else {
            // Not a mark after all: the bytes matched so far start the first line.
            self.bom = BomCheck::Done;
            self.buffer(&BOM[..matched]);
        }
        &bytes[taken..]
    }

    /// Appends bytes of the current (unfinished) line, dropping what exceeds the limit.
    fn buffer(&mut self, bytes: &[u8]) {
        let room = self.limit.saturating_sub(self.line.len());
        if bytes.len() > room {
            self.line_cut = true;
        }
        self.line.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// Processes the buffered line and empties the buffer (keeping its capacity). `chunk`
    /// is the text of the bytes being fed.
    fn process_buffered_line(&mut self, chunk: &str, sink: &mut dyn FnMut(Dispatched<'_>)) {
        let line = std::mem::take(&mut self.line);
        self.process_line(&line, None, chunk, sink);
        self.line = line;
        self.line.clear();
        self.line_cut = false;
    }

    /// Interprets one complete line (without its line ending). `chunk` is the text of the
    /// bytes being fed (see [`run`](Self::run)); `start` is where the line begins in it, when
    /// it lies there (it is not buffered).
    fn process_line(
        &mut self,
        line: &[u8],
        start: Option<usize>,
        chunk: &str,
        sink: &mut dyn FnMut(Dispatched<'_>),
    ) {
        if line.is_empty() {
            self.dispatch(chunk, sink);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (name, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match name {
            b"data" => {
                // Where the value ends in the chunk's text, if it lies there.
                let end = start
                    .map(|start| start + line.len())
                    .filter(|&end| end <= chunk.len());
                match end {
                    // The event's first data line: kept as a slice of the chunk. (The line,
                    // hence the value, is within the limit.)
                    Some(end) if !self.has_data => {
                        self.slice = Some((end - value.len(), end));
                        self.has_data = true;
                    }
                    Some(end) => {
                        self.own_data(chunk);
                        self.append_data(chunk.get(end - value.len()..end).unwrap_or_default());
                    }
                    None => {
                        self.own_data(chunk);
                        self.append_data(&String::from_utf8_lossy(value));
                    }
                }
            }
            b"event" => {
                self.event.clear();
                self.event.push_str(&String::from_utf8_lossy(value));
            }
            b"id" if !value.contains(&0) => {
                let id = String::from_utf8_lossy(value).into_owned();
                self.last_event_id.clone_from(&id);
                self.id = Some(id);
            }
            b"retry" => {
                if let Some(ms) = parse_retry(value) {
                    self.retry_ms = Some(ms);
                    self.reconnection_ms = Some(ms);
                }
            }
            _ => {}
        }
    }

    /// Copies a data line kept as a slice of `chunk` into the data buffer.
    fn own_data(&mut self, chunk: &str) {
        if let Some((start, end)) = self.slice.take() {
            self.data.clear();
            self.data
                .push_str(chunk.get(start..end).unwrap_or_default());
        }
    }

    /// Appends one data line, within the limit (cut at a character boundary).
    fn append_data(&mut self, value: &str) {
        if self.has_data && self.data.len() < self.limit {
            self.data.push('\n');
        }
        self.has_data = true;
        let mut end = value.len().min(self.limit.saturating_sub(self.data.len()));
        while !value.is_char_boundary(end) {
            end -= 1;
        }
        self.data.push_str(&value[..end]);
    }

    /// The blank-line rule: dispatch the pending event if it had data, then reset it.
    /// `chunk` is the text of the bytes being fed (where a data line kept as a slice lies).
    fn dispatch(&mut self, chunk: &str, sink: &mut dyn FnMut(Dispatched<'_>)) {
        let id = self.id.take();
        let retry_ms = self.retry_ms.take();
        if self.has_data {
            self.has_data = false;
            let data = match self.slice.take() {
                Some((start, end)) => chunk.get(start..end).unwrap_or_default(),
                None => &self.data,
            };
            sink(Dispatched {
                event: (!self.event.is_empty()).then_some(self.event.as_str()),
                data,
                id,
                retry_ms,
            });
            self.data.clear();
        }
        self.event.clear();
    }
}

/// An event being dispatched, borrowed from the parser and the bytes being fed.
struct Dispatched<'a> {
    event: Option<&'a str>,
    data: &'a str,
    id: Option<String>,
    retry_ms: Option<u64>,
}

impl Dispatched<'_> {
    /// The event, owned.
    fn to_owned(&self) -> SseEvent {
        SseEvent {
            event: self.event.map(str::to_string),
            data: self.data.to_string(),
            id: self.id.clone(),
            retry_ms: self.retry_ms,
        }
    }

    /// The event as the stream decoders take it.
    fn message(&self) -> SseMessage<'_> {
        SseMessage::new(self.event, self.data)
    }
}

/// A `retry` value: only ASCII digits (at least one); a number beyond `u64` is ignored.
fn parse_retry(value: &[u8]) -> Option<u64> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    value.iter().try_fold(0u64, |ms, &digit| {
        ms.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events from the whole input, fed at once, then finished.
    fn parse(input: &str) -> Vec<SseEvent> {
        parse_bytes(input.as_bytes())
    }

    fn parse_bytes(input: &[u8]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events = parser.push(input);
        events.extend(parser.finish());
        events
    }

    /// Events from `push` alone (no `finish`).
    fn pushed(input: &str) -> Vec<SseEvent> {
        SseParser::new().push(input.as_bytes())
    }

    fn data(text: &str) -> SseEvent {
        SseEvent {
            data: text.to_string(),
            ..SseEvent::default()
        }
    }

    fn named(name: &str, text: &str) -> SseEvent {
        SseEvent {
            event: Some(name.to_string()),
            ..data(text)
        }
    }

    #[test]
    fn each_line_ending_style() {
        let want = vec![data("a"), data("b")];
        assert_eq!(pushed("data: a\n\ndata: b\n\n"), want);
        assert_eq!(pushed("data: a\r\rdata: b\r\r"), want);
        assert_eq!(pushed("data: a\r\n\r\ndata: b\r\n\r\n"), want);
        assert_eq!(pushed("data: a\r\n\rdata: b\n\r\n"), want);
    }

    #[test]
    fn cr_then_lf_across_pushes_is_one_line_ending() {
        let mut parser = SseParser::new();
        assert_eq!(parser.push(b"data: a\r"), vec![]);
        // Had the LF been a second line ending, it would be a blank line and dispatch.
        assert_eq!(parser.push(b"\n"), vec![]);
        assert_eq!(parser.push(b"data: b\r"), vec![]);
        assert_eq!(parser.push(b""), vec![]);
        assert_eq!(parser.push(b"\n\r\n"), vec![data("a\nb")]);
    }

    #[test]
    fn lf_after_cr_lf_is_a_blank_line() {
        assert_eq!(pushed("data: a\r\n\n"), vec![data("a")]);
        assert_eq!(pushed("data: a\n\r"), vec![data("a")]);
    }

    #[test]
    fn comments_are_ignored() {
        assert_eq!(
            pushed(": keep-alive\n:\ndata: a\n: inside\ndata: b\n\n: trailing\n\n"),
            vec![data("a\nb")]
        );
    }

    #[test]
    fn multi_line_data_is_joined_with_newlines() {
        assert_eq!(
            pushed("data: one\ndata: two\ndata: three\n\n"),
            vec![data("one\ntwo\nthree")]
        );
    }

    #[test]
    fn event_names_apply_to_one_event() {
        assert_eq!(
            pushed("event: ping\ndata: 1\n\ndata: 2\n\nevent:\ndata: 3\n\n"),
            vec![named("ping", "1"), data("2"), data("3")]
        );
        assert_eq!(
            pushed("event: a\nevent: b\ndata: x\n\n"),
            vec![named("b", "x")]
        );
    }

    #[test]
    fn ids_are_per_event_and_the_last_persists() {
        let mut parser = SseParser::new();
        let events = parser.push(b"id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n");
        assert_eq!(
            events,
            vec![
                SseEvent {
                    id: Some("7".into()),
                    ..data("a")
                },
                data("b"),
                SseEvent {
                    id: Some(String::new()),
                    ..data("c")
                },
            ]
        );
        assert_eq!(parser.last_event_id(), "");
        parser.push(b"id: 9\n\n");
        assert_eq!(parser.last_event_id(), "9");
    }

    #[test]
    fn an_id_with_nul_is_ignored() {
        let mut parser = SseParser::new();
        let events = parser.push(b"id: 1\n\nid: a\0b\ndata: x\n\n");
        assert_eq!(events, vec![data("x")]);
        assert_eq!(parser.last_event_id(), "1");
    }

    #[test]
    fn retry_takes_only_digits() {
        let mut parser = SseParser::new();
        let events = parser.push(b"retry: 3000\ndata: a\n\nretry: 12x\ndata: b\n\n");
        assert_eq!(
            events,
            vec![
                SseEvent {
                    retry_ms: Some(3000),
                    ..data("a")
                },
                data("b"),
            ]
        );
        assert_eq!(parser.reconnection_ms(), Some(3000));
        for bad in [
            "retry:\n\n",
            "retry: -1\n\n",
            "retry:  5\n\n",
            "retry: 1.5\n\n",
        ] {
            let mut parser = SseParser::new();
            parser.push(bad.as_bytes());
            assert_eq!(parser.reconnection_ms(), None, "{bad:?}");
        }
        let mut parser = SseParser::new();
        parser.push(b"retry: 99999999999999999999999\n\n");
        assert_eq!(parser.reconnection_ms(), None, "beyond u64 is ignored");
        parser.push(b"retry:0\n\n");
        assert_eq!(parser.reconnection_ms(), Some(0));
    }

    #[test]
    fn a_field_without_colon_has_an_empty_value() {
        assert_eq!(pushed("data\ndata\n\n"), vec![data("\n")]);
        assert_eq!(pushed("data\n\n"), vec![data("")]);
        assert_eq!(pushed("event\ndata: x\n\n"), vec![data("x")]);
    }

    #[test]
    fn one_leading_space_is_removed() {
        assert_eq!(pushed("data:x\n\n"), vec![data("x")]);
        assert_eq!(pushed("data: x\n\n"), vec![data("x")]);
        assert_eq!(pushed("data:  x\n\n"), vec![data(" x")]);
        assert_eq!(pushed("data:\tx\n\n"), vec![data("\tx")]);
        assert_eq!(pushed("data: a: b \n\n"), vec![data("a: b ")]);
        assert_eq!(pushed("event: x \ndata\n\n"), vec![named("x ", "")]);
    }

    #[test]
    fn field_names_are_exact() {
        assert_eq!(pushed("Data: x\ndata : y\n data: z\n\n"), vec![]);
        assert_eq!(pushed("foo: bar\ndata: x\n\n"), vec![data("x")]);
    }

    #[test]
    fn a_leading_bom_is_skipped_once() {
        assert_eq!(parse_bytes(b"\xEF\xBB\xBFdata: a\n\n"), vec![data("a")]);
        // A second BOM is part of the first line: the field name is then not `data`.
        assert_eq!(parse_bytes(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n"), vec![]);
        // A BOM later in the stream is text.
        assert_eq!(
            parse_bytes(b"data: a\n\xEF\xBB\xBFdata: b\n\ndata: \xEF\xBB\xBF\n\n"),
            vec![data("a"), data("\u{FEFF}")]
        );
    }

    #[test]
    fn a_bom_split_across_pushes_is_skipped() {
        let mut parser = SseParser::new();
        assert_eq!(parser.push(b"\xEF"), vec![]);
        assert_eq!(parser.push(b""), vec![]);
        assert_eq!(parser.push(b"\xBB"), vec![]);
        assert_eq!(parser.push(b"\xBFdata: a\n\n"), vec![data("a")]);
    }

    #[test]
    fn a_broken_bom_is_text() {
        // EF BB then 'd': the two bytes start the first line (an invalid field name).
        assert_eq!(
            parse_bytes(b"\xEF\xBBdata: a\n\ndata: b\n\n"),
            vec![data("b")]
        );
        let mut parser = SseParser::new();
        parser.push(b"\xEF");
        let mut events = parser.push(b"\n");
        events.extend(parser.finish());
        assert_eq!(events, vec![]);
        // Ending inside a possible BOM: those bytes are a (partial) line.
        let mut parser = SseParser::new();
        parser.push(b"\xEF\xBB");
        assert_eq!(parser.finish(), vec![]);
    }

    #[test]
    fn an_empty_data_line_dispatches_empty_data() {
        assert_eq!(pushed("data:\n\n"), vec![data("")]);
        assert_eq!(pushed("data:\ndata:\n\n"), vec![data("\n")]);
        assert_eq!(pushed("data: a\ndata:\n\n"), vec![data("a\n")]);
        assert_eq!(pushed("data:\ndata: a\n\n"), vec![data("\na")]);
    }

    #[test]
    fn events_without_data_are_not_dispatched() {
        assert_eq!(pushed("event: ping\n\n\n\nid: 3\n\nretry: 10\n\n"), vec![]);
        // The name does not leak into the next event.
        assert_eq!(pushed("event: ping\n\ndata: x\n\n"), vec![data("x")]);
        let mut parser = SseParser::new();
        parser.push(b"event: ping\n");
        assert_eq!(parser.finish(), vec![]);
    }

    #[test]
    fn final_event_with_its_blank_line() {
        let mut parser = SseParser::new();
        assert_eq!(parser.push(b"data: a\n\n"), vec![data("a")]);
        assert_eq!(parser.finish(), vec![]);
    }

    #[test]
    fn final_event_without_its_blank_line() {
        for ending in ["\n", "\r", "\r\n"] {
            let mut parser = SseParser::new();
            let input = format!("data: a\n\nevent: end\ndata: b{ending}");
            assert_eq!(parser.push(input.as_bytes()), vec![data("a")]);
            assert_eq!(parser.finish(), vec![named("end", "b")], "{ending:?}");
        }
    }

    #[test]
    fn final_partial_line_is_processed_as_a_line() {
        let mut parser = SseParser::new();
        assert_eq!(parser.push(b"data: a\ndata: {\"par"), vec![]);
        assert_eq!(parser.finish(), vec![data("a\n{\"par")]);
        // A partial `event:` line still names the pending event.
        let mut parser = SseParser::new();
        parser.push(b"data: a\nevent: do");
        assert_eq!(parser.finish(), vec![named("do", "a")]);
        // A partial comment or a partial line without data dispatches nothing.
        assert_eq!(parse(": keep"), vec![]);
        assert_eq!(parse("id: 4"), vec![]);
        assert_eq!(parse("dat"), vec![]);
        assert_eq!(parse("data"), vec![data("")]);
    }

    #[test]
    fn finish_readies_the_parser_for_a_new_stream() {
        let mut parser = SseParser::new();
        parser.push(b"id: 5\nretry: 100\nevent: x\ndata: a\ndata: b\r");
        assert_eq!(
            parser.finish(),
            vec![SseEvent {
                event: Some("x".into()),
                data: "a\nb".into(),
                id: Some("5".into()),
                retry_ms: Some(100),
            }]
        );
        assert_eq!(parser.finish(), vec![]);
        // A new stream: its leading BOM is skipped.
        assert_eq!(parser.push(b"\xEF\xBB\xBFdata: c\n\n"), vec![data("c")]);
        assert_eq!(parser.last_event_id(), "5");
        assert_eq!(parser.reconnection_ms(), Some(100));
    }

    #[test]
    fn multi_byte_text_split_across_pushes_is_intact() {
        let text = "Café — « Oui » 🐉 日本語";
        let input = format!("data: {text}\n\n");
        for at in 0..=input.len() {
            let mut parser = SseParser::new();
            let mut events = parser.push(&input.as_bytes()[..at]);
            events.extend(parser.push(&input.as_bytes()[at..]));
            events.extend(parser.finish());
            assert_eq!(events, vec![data(text)], "split at {at}");
        }
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters_per_line() {
        assert_eq!(
            parse_bytes(b"data: a\xFFb\ndata: \xF0\x9F\n\n"),
            vec![data("a\u{FFFD}b\n\u{FFFD}")]
        );
        // An invalid byte in the field name: not a known field.
        assert_eq!(parse_bytes(b"dat\xE1: x\n\n"), vec![]);
    }

    #[test]
    fn a_long_line_keeps_its_first_bytes() {
        let mut parser = SseParser::with_limit(12);
        // "data: " + 6 kept bytes; the rest of the line is dropped, across pushes too.
        let mut events = parser.push(b"data: 0123456789");
        events.extend(parser.push(b"abcdef\ndata: ok\n\n"));
        assert_eq!(events, vec![data("012345\nok")]);
        // The same when the long line arrives in one piece.
        let mut parser = SseParser::with_limit(12);
        assert_eq!(
            parser.push(b"data: 0123456789abcdef\r\n\r\n"),
            vec![data("012345")]
        );
        // A cut partial line at the end.
        let mut parser = SseParser::with_limit(8);
        parser.push(b"data: 0123");
        parser.push(b"456");
        assert_eq!(parser.finish(), vec![data("01")]);
    }

    #[test]
    fn long_data_is_capped_at_a_character_boundary() {
        let mut parser = SseParser::with_limit(10);
        let events = parser.push("data: abc\ndata: déf\ndata: ghi\ndata: jkl\n\n".as_bytes());
        // "abc\ndéf\n" is 9 bytes: one byte of "ghi" fits, nothing of "jkl" (not even "\n").
        assert_eq!(events, vec![data("abc\ndéf\ng")]);
        // "é\né\n" is 6 bytes: the third "é" (2 bytes) would cut the character, so it is dropped.
        let mut parser = SseParser::with_limit(7);
        assert_eq!(
            parser.push("data:é\ndata:é\ndata:é\n\n".as_bytes()),
            vec![data("é\né\n")]
        );
        // A limit of 0 acts as 1: a cut line keeps its first byte and is never blank.
        let mut parser = SseParser::with_limit(0);
        assert_eq!(parser.push(b"data: x\n\n"), vec![]);
        assert_eq!(parser.finish(), vec![]);
    }

    #[test]
    fn events_serialize_as_json() {
        let json = serde_json::to_value(named("ping", "x")).ok();
        assert_eq!(
            json,
            Some(serde_json::json!({"event": "ping", "data": "x", "id": null, "retry_ms": null}))
        );
    }
}
