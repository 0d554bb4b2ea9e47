//! The Server-Sent Events parser's acceptance criterion: however a stream is cut into chunks
//! (at every byte position, byte by byte, random chunkings), the events are exactly those of
//! the whole stream. Transcripts are modelled on OpenAI, Anthropic and Gemini streams and on a
//! proxy using CR line endings, comments, ids, `retry` and a byte order mark; a property test
//! also round-trips randomly generated events through randomly formatted streams.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::llm::sse::{SseEvent, SseParser};
use draftsmith::llm::SseMessage;
use proptest::prelude::*;

const OPENAI: &str = concat!(
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Café — « Oui » 🐉 日本語\"},\"finish_reason\":null}]}\n\n",
    ": keep-alive\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"insert_text\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"text\\\": \\\"« Oui » 🐉\"}}]},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\" 日本語\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":31,\"completion_tokens\":12,\"total_tokens\":43}}\n\n",
    "data: [DONE]\n\n",
);

const ANTHROPIC: &str = concat!(
    "event: message_start\n",
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude\",\"stop_reason\":null,\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    "event: ping\n",
    "data: {\"type\": \"ping\"}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Café — « Oui »\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" 🐉 日本語\"}}\n\n",
    "event: content_block_stop\n",
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"insert_text\",\"input\":{}}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"text\\\": \\\"Caf\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"é\\\"}\"}}\n\n",
    "event: content_block_stop\n",
    "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
    "event: message_delta\n",
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}\n\n",
    "event: message_stop\n",
    "data: {\"type\":\"message_stop\"}\n\n",
);

/// Gemini's `alt=sse` stream (CRLF line endings).
const GEMINI: &str = concat!(
    "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Café — « Oui »\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 8,\"totalTokenCount\": 8},\"modelVersion\": \"gemini\"}\r\n\r\n",
    "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \" 🐉 日本語\"}],\"role\": \"model\"},\"index\": 0}],\"modelVersion\": \"gemini\"}\r\n\r\n",
    "data: {\"candidates\": [{\"content\": {\"parts\": [{\"functionCall\": {\"name\": \"insert_text\",\"args\": {\"text\": \"日本語\"}}}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 8,\"candidatesTokenCount\": 9,\"totalTokenCount\": 17}}\r\n\r\n",
);

/// A proxy: byte order mark, CR-only line endings, comments, ids, `retry`, a multi-line event.
const PROXY_CR: &str = concat!(
    "\u{FEFF}id: 1\rretry: 2500\r: OPENROUTER PROCESSING\rdata: {\"choices\":[{\"delta\":{\"content\":\"Café\"}}]}\r\r",
    ": OPENROUTER PROCESSING\r\r",
    "id: 2\revent: delta\rdata: {\"choices\":\r",
    "data: [{\"delta\":{\"content\":\" — « Oui » 🐉 日本語\"}}]}\r\r",
    "event: done\rdata: [DONE]\r\r",
);

/// Every line-ending style in one stream, comments between fields, and a final event whose
/// blank line never comes (the stream ends mid-line).
const MIXED_UNFINISHED: &str = concat!(
    "data: {\"text\": \"Café\"}\r\n\r\n",
    "event: note\r: between fields\ndata:  « Oui »\rdata:🐉\n\n",
    "data: 日本語\r\r\n",
    "id: 3\r\ndata: {\"text\": \"— end",
);

fn transcripts() -> Vec<(&'static str, &'static str)> {
    vec![
        ("openai", OPENAI),
        ("anthropic", ANTHROPIC),
        ("gemini", GEMINI),
        ("proxy_cr", PROXY_CR),
        ("mixed_unfinished", MIXED_UNFINISHED),
    ]
}

/// Pushes the chunks in order, then finishes; all events, concatenated.
fn parse_chunks<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(parser.push(chunk));
    }
    events.extend(parser.finish());
    events
}

/// Feeds the chunks in order (events handed over borrowed), then finishes; each event's name
/// and data.
fn feed_chunks<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<(Option<String>, String)> {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    let mut keep =
        |m: SseMessage<'_>| events.push((m.event.map(str::to_string), m.data.to_string()));
    for chunk in chunks {
        parser.feed(chunk, &mut keep);
    }
    parser.finish_with(&mut keep);
    events
}

/// Each event's name and data.
fn names_and_data(events: Vec<SseEvent>) -> Vec<(Option<String>, String)> {
    events.into_iter().map(|e| (e.event, e.data)).collect()
}

fn parse_whole(input: &[u8]) -> Vec<SseEvent> {
    parse_chunks([input])
}

/// The stream cut into pieces whose sizes cycle through `sizes` (a size of 0 is an empty push).
fn chunked<'a>(input: &'a [u8], sizes: &[usize]) -> Vec<&'a [u8]> {
    let mut chunks = Vec::new();
    let mut at = 0;
    let mut sizes = sizes.iter().cycle();
    while at < input.len() {
        let size = sizes.next().copied().unwrap_or(1);
        let end = (at + size).min(input.len());
        chunks.push(&input[at..end]);
        if size == 0 {
            // Keep moving even if every size is 0.
            chunks.push(&input[at..at + 1]);
            at += 1;
        } else {
            at = end;
        }
    }
    chunks
}

fn data_event(event: Option<&str>, data: &str) -> SseEvent {
    SseEvent {
        event: event.map(str::to_string),
        data: data.to_string(),
        ..SseEvent::default()
    }
}

#[test]
fn whole_transcripts_give_the_expected_events() {
    let openai = parse_whole(OPENAI.as_bytes());
    assert_eq!(openai.len(), 8);
    assert!(openai.iter().all(|e| e.event.is_none() && e.id.is_none()));
    assert!(openai[1].data.contains("Café — « Oui » 🐉 日本語"));
    assert_eq!(openai[7], data_event(None, "[DONE]"));
    for event in &openai[..7] {
        assert!(serde_json::from_str::<serde_json::Value>(&event.data).is_ok());
    }

    let anthropic = parse_whole(ANTHROPIC.as_bytes());
    let names: Vec<_> = anthropic
        .iter()
        .filter_map(|e| e.event.as_deref())
        .collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "ping",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
    );
    assert!(anthropic[4].data.contains(" 🐉 日本語"));

    let gemini = parse_whole(GEMINI.as_bytes());
    assert_eq!(gemini.len(), 3);
    assert!(gemini[1].data.contains(" 🐉 日本語") && !gemini[1].data.contains('\r'));

    assert_eq!(
        parse_whole(PROXY_CR.as_bytes()),
        vec![
            SseEvent {
                id: Some("1".into()),
                retry_ms: Some(2500),
                ..data_event(None, r#"{"choices":[{"delta":{"content":"Café"}}]}"#)
            },
            SseEvent {
                id: Some("2".into()),
                ..data_event(
                    Some("delta"),
                    "{\"choices\":\n[{\"delta\":{\"content\":\" — « Oui » 🐉 日本語\"}}]}"
                )
            },
            data_event(Some("done"), "[DONE]"),
        ]
    );

    assert_eq!(
        parse_whole(MIXED_UNFINISHED.as_bytes()),
        vec![
            data_event(None, r#"{"text": "Café"}"#),
            data_event(Some("note"), " « Oui »\n🐉"),
            data_event(None, "日本語"),
            SseEvent {
                id: Some("3".into()),
                ..data_event(None, r#"{"text": "— end"#)
            },
        ]
    );
}

#[test]
fn transcripts_cover_the_hard_split_points() {
    let all: String = transcripts().iter().map(|(_, t)| *t).collect();
    assert!(all.contains("\r\n"), "a split between CR and LF");
    assert!(all.contains("\r\r"), "CR-only blank lines");
    assert!(all.contains('\u{FEFF}'), "a byte order mark to split");
    for text in ["é", "—", "«", "🐉", "日本語"] {
        assert!(all.contains(text), "a split inside {text:?}");
    }
}

#[test]
fn every_two_chunk_split_gives_the_whole_stream_events() {
    for (name, transcript) in transcripts() {
        let bytes = transcript.as_bytes();
        let whole = parse_whole(bytes);
        for at in 0..=bytes.len() {
            let (head, tail) = bytes.split_at(at);
            assert_eq!(parse_chunks([head, tail]), whole, "{name} split at {at}");
        }
    }
}

#[test]
fn byte_by_byte_gives_the_whole_stream_events() {
    for (name, transcript) in transcripts() {
        let bytes = transcript.as_bytes();
        assert_eq!(
            parse_chunks(bytes.chunks(1)),
            parse_whole(bytes),
            "{name} byte by byte"
        );
    }
}

#[test]
fn a_split_inside_a_character_or_between_cr_and_lf_is_harmless() {
    let stream = "data: 🐉\r\ndata: é\r\n\r\n";
    let bytes = stream.as_bytes();
    let want = vec![data_event(None, "🐉\né")];
    // Inside the dragon (bytes 6..10), inside "é" (18..20), between each CR and LF. Taking the
    // first LF for a blank line would split the event in two.
    let cuts = [7, 8, 9, 11, 19, 21, 23];
    for cut in cuts {
        assert!(
            !stream.is_char_boundary(cut) || bytes[cut - 1] == b'\r',
            "{cut}"
        );
        assert_eq!(
            parse_chunks([&bytes[..cut], &bytes[cut..]]),
            want,
            "cut {cut}"
        );
    }
    assert_eq!(parse_chunks(bytes.chunks(1)), want);
}

#[test]
fn a_bom_split_across_chunks_is_skipped() {
    let bytes = "\u{FEFF}data: a\n\n".as_bytes();
    for cut in 0..=4 {
        assert_eq!(
            parse_chunks([&bytes[..cut], &bytes[cut..]]),
            vec![data_event(None, "a")],
            "cut {cut}"
        );
    }
}

#[test]
fn a_stream_ending_with_a_cr_then_finished_dispatches_once() {
    let bytes = b"data: a\r";
    assert_eq!(parse_whole(bytes), vec![data_event(None, "a")]);
    assert_eq!(
        parse_chunks([&bytes[..], b"", b""]),
        vec![data_event(None, "a")]
    );
}

/// One generated event: name, data lines, id, retry.
#[derive(Debug, Clone)]
struct GenEvent {
    name: Option<String>,
    lines: Vec<String>,
    id: Option<String>,
    retry: Option<u64>,
}

/// How one generated stream is written.
#[derive(Debug, Clone)]
struct Style {
    /// Line endings to cycle through: 0 = LF, 1 = CR, 2 = CRLF.
    endings: Vec<u8>,
    /// Whether to write the space after a colon, cycled.
    spaces: Vec<bool>,
    /// Whether to write a comment before a field, cycled.
    comments: Vec<bool>,
    /// Start with a byte order mark.
    bom: bool,
    /// End the last event with its blank line.
    final_blank: bool,
}

fn text() -> impl Strategy<Value = String> {
    // Multi-byte characters, colons and spaces; no line ending characters.
    "[a-z :{}\"é—«»🐉日本語\u{FFFD}]{0,12}"
}

fn gen_event() -> impl Strategy<Value = GenEvent> {
    (
        proptest::option::of("[a-z_]{1,12}"),
        prop::collection::vec(text(), 1..4),
        proptest::option::of("[a-z0-9 ]{0,6}"),
        proptest::option::of(0u64..100_000),
    )
        .prop_map(|(name, lines, id, retry)| GenEvent {
            name,
            lines,
            id,
            retry,
        })
}

fn style() -> impl Strategy<Value = Style> {
    (
        prop::collection::vec(0u8..3, 1..6),
        prop::collection::vec(any::<bool>(), 1..6),
        prop::collection::vec(prop::bool::weighted(0.2), 1..6),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(endings, spaces, comments, bom, final_blank)| Style {
            endings,
            spaces,
            comments,
            bom,
            final_blank,
        })
}

/// Writes the events as a stream in the given style.
fn write_stream(events: &[GenEvent], style: &Style) -> String {
    struct Writer<'a> {
        out: String,
        style: &'a Style,
        line: usize,
        last_cr: bool,
    }
    impl Writer<'_> {
        fn line(&mut self, content: &str) {
            let style = self.style;
            let mut ending = style.endings[self.line % style.endings.len()];
            if content.is_empty() && self.last_cr && ending == 0 {
                // A lone LF right after a CR would join it as one CRLF line ending.
                ending = 2;
            }
            self.out.push_str(content);
            self.out.push_str(["\n", "\r", "\r\n"][usize::from(ending)]);
            self.last_cr = ending == 1;
            self.line += 1;
        }
        fn field(&mut self, name: &str, value: &str) {
            let style = self.style;
            if style.comments[self.line % style.comments.len()] {
                self.line(": a comment: « ignored »");
            }
            let space = value.starts_with(' ') || style.spaces[self.line % style.spaces.len()];
            let separator = if space { ": " } else { ":" };
            self.line(&format!("{name}{separator}{value}"));
        }
    }
    let mut writer = Writer {
        out: String::new(),
        style,
        line: 0,
        last_cr: false,
    };
    if style.bom {
        writer.out.push('\u{FEFF}');
    }
    for (i, event) in events.iter().enumerate() {
        if let Some(id) = &event.id {
            writer.field("id", id);
        }
        if let Some(name) = &event.name {
            writer.field("event", name);
        }
        for line in &event.lines {
            writer.field("data", line);
        }
        if let Some(retry) = event.retry {
            writer.field("retry", &retry.to_string());
        }
        if i + 1 < events.len() || style.final_blank {
            writer.line("");
        }
    }
    writer.out
}

fn expected(events: &[GenEvent]) -> Vec<SseEvent> {
    events
        .iter()
        .map(|event| SseEvent {
            event: event.name.clone(),
            data: event.lines.join("\n"),
            id: event.id.clone(),
            retry_ms: event.retry,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_chunkings_of_transcripts_give_the_whole_stream_events(
        which in 0usize..5,
        sizes in prop::collection::vec(0usize..48, 1..40),
    ) {
        let (name, transcript) = transcripts()[which];
        let bytes = transcript.as_bytes();
        prop_assert_eq!(parse_chunks(chunked(bytes, &sizes)), parse_whole(bytes), "{}", name);
    }

    #[test]
    fn generated_events_round_trip_through_any_chunking(
        events in prop::collection::vec(gen_event(), 0..8),
        style in style(),
        sizes in prop::collection::vec(0usize..24, 1..20),
    ) {
        let stream = write_stream(&events, &style);
        let bytes = stream.as_bytes();
        let whole = parse_whole(bytes);
        prop_assert_eq!(&whole, &expected(&events), "stream {:?}", stream);
        prop_assert_eq!(parse_chunks(chunked(bytes, &sizes)), whole, "stream {:?}", stream);
    }

    #[test]
    fn events_fed_borrowed_are_the_events_pushed(
        events in prop::collection::vec(gen_event(), 0..8),
        style in style(),
        sizes in prop::collection::vec(0usize..24, 1..20),
        which in 0usize..5,
    ) {
        let stream = write_stream(&events, &style);
        let bytes = stream.as_bytes();
        let whole = names_and_data(parse_whole(bytes));
        prop_assert_eq!(feed_chunks([bytes]), whole.clone(), "stream {:?}", stream);
        prop_assert_eq!(feed_chunks(chunked(bytes, &sizes)), whole, "stream {:?}", stream);
        let transcript = transcripts()[which].1.as_bytes();
        prop_assert_eq!(
            feed_chunks(chunked(transcript, &sizes)),
            names_and_data(parse_whole(transcript))
        );
    }
}
