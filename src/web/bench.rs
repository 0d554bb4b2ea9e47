//! Exports for the browser benchmarks (`make bench-browser`), bench-only and small:
//!
//! - [`StreamBench`]: the provider-stream decoding of a model call, for `www/bench/peers.js`
//!   (it compares it with `eventsource-parser` and a tool-call assembler in JavaScript on the
//!   same streams). It reuses the parser, decoders and assembler the worker already ships, in
//!   the same order as the model client (`src/llm/client.rs`): bytes → [`SseParser`] →
//!   [`ProviderStream`] → [`Assembler`].
//! - [`MessageBench`]: a worker message crossing between JavaScript and the core as JSON text
//!   or as a JS value, for `www/bench/messages.js` (the table in the [`crate::web`] docs).

use serde::Serialize;
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use crate::llm::sse::SseParser;
use crate::llm::{Assembler, ProviderKind, ProviderStream, SseMessage, StreamEvent};

/// One streamed answer being decoded: feed it the body's chunks, then take the answer.
#[wasm_bindgen]
pub struct StreamBench {
    parser: SseParser,
    decoder: ProviderStream,
    assembler: Assembler,
    /// The decoded events of one SSE event (reused).
    events: Vec<StreamEvent>,
}

/// One SSE event decoded and folded into the answer.
fn decode(
    decoder: &mut ProviderStream,
    assembler: &mut Assembler,
    events: &mut Vec<StreamEvent>,
    message: SseMessage<'_>,
) {
    decoder.on_event_into(message, events);
    for event in events.drain(..) {
        assembler.push(&event);
    }
}

#[wasm_bindgen]
impl StreamBench {
    /// A decoder for a stream of `provider` (`openai`, `anthropic` or `gemini`).
    #[wasm_bindgen(constructor)]
    pub fn new(provider: &str) -> Result<StreamBench, JsValue> {
        let kind: ProviderKind = provider
            .parse()
            .map_err(|e: String| JsValue::from_str(&e))?;
        Ok(StreamBench {
            parser: SseParser::new(),
            decoder: ProviderStream::new(kind),
            assembler: Assembler::new(),
            events: Vec::new(),
        })
    }

    /// Take in the next chunk of the body, as the network delivered it.
    pub fn push(&mut self, chunk: &[u8]) {
        let Self {
            parser,
            decoder,
            assembler,
            events,
        } = self;
        parser.feed(chunk, |message| decode(decoder, assembler, events, message));
    }

    /// End the stream; the answer as JSON text: `{text, toolCalls: [{id, name, arguments}],
    /// invalid, finishReason}`.
    pub fn finish(mut self) -> String {
        let Self {
            parser,
            decoder,
            assembler,
            events,
        } = &mut self;
        parser.finish_with(|message| decode(decoder, assembler, events, message));
        for event in self.decoder.finish() {
            self.assembler.push(&event);
        }
        let answer = self.assembler.finish();
        let calls: Vec<_> = answer
            .tool_calls
            .iter()
            .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
            .collect();
        json!({
            "text": answer.text,
            "toolCalls": calls,
            "invalid": answer.invalid_tool_calls.len(),
            "finishReason": answer.finish_reason.as_ref().map(|f| f.as_str()),
        })
        .to_string()
    }
}

/// One worker message, converted both ways it could cross between JavaScript and the core: as
/// JSON text (`serde_json` here, `JSON.stringify` or `JSON.parse` in the page) or as a JS
/// value (`serde_wasm_bindgen`, with the JSON-compatible serializer the IndexedDB records use).
#[wasm_bindgen]
pub struct MessageBench {
    message: Value,
}

#[wasm_bindgen]
impl MessageBench {
    /// Hold the message given as JSON text, to be encoded by [`MessageBench::encode_text`]
    /// and [`MessageBench::encode_value`].
    #[wasm_bindgen(constructor)]
    pub fn new(json: &str) -> Result<MessageBench, JsValue> {
        serde_json::from_str(json)
            .map(|message| MessageBench { message })
            .map_err(|e| JsValue::from_str(&e.to_string()))
    }

    /// A message in as text, as the worker hands requests to the core: decoded from JSON
    /// text. Returns its number of fields (so that the work is used).
    pub fn decode_text(text: &str) -> Result<usize, JsValue> {
        serde_json::from_str::<Value>(text)
            .map(|message| fields(&message))
            .map_err(|e| JsValue::from_str(&e.to_string()))
    }

    /// A message in as a JS value, decoded with `serde_wasm_bindgen`. Returns its number of
    /// fields.
    pub fn decode_value(value: JsValue) -> Result<usize, JsValue> {
        serde_wasm_bindgen::from_value::<Value>(value)
            .map(|message| fields(&message))
            .map_err(JsValue::from)
    }

    /// The message out as JSON text, as the core answers the worker.
    pub fn encode_text(&self) -> String {
        self.message.to_string()
    }

    /// The message out as a JS value, made by `serde_wasm_bindgen`.
    pub fn encode_value(&self) -> Result<JsValue, JsValue> {
        self.message
            .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
            .map_err(JsValue::from)
    }
}

/// The number of fields of a message (0 when it is no object).
fn fields(message: &Value) -> usize {
    message.as_object().map_or(0, |object| object.len())
}
