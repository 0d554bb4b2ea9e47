//! [`StreamBench`]: the provider-stream decoding of a model call, exported for the browser
//! benchmark `www/bench/peers.js` (it compares it with `eventsource-parser` and a tool-call
//! assembler in JavaScript on the same streams). Bench-only, and small: it reuses the parser,
//! decoders and assembler the worker already ships, in the same order as the model client
//! (`src/llm/client.rs`): bytes → [`SseParser`] → [`ProviderStream`] → [`Assembler`].

use serde_json::json;
use wasm_bindgen::prelude::*;

use crate::llm::sse::SseParser;
use crate::llm::{Assembler, ProviderKind, ProviderStream, SseMessage};

/// One streamed answer being decoded: feed it the body's chunks, then take the answer.
#[wasm_bindgen]
pub struct StreamBench {
    parser: SseParser,
    decoder: ProviderStream,
    assembler: Assembler,
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
        })
    }

    /// Take in the next chunk of the body, as the network delivered it.
    pub fn push(&mut self, chunk: &[u8]) {
        for event in self.parser.push(chunk) {
            let message = SseMessage::new(event.event.as_deref(), &event.data);
            for event in self.decoder.on_event(message) {
                self.assembler.push(&event);
            }
        }
    }

    /// End the stream; the answer as JSON text: `{text, toolCalls: [{id, name, arguments}],
    /// invalid, finishReason}`.
    pub fn finish(mut self) -> String {
        for event in self.parser.finish() {
            let message = SseMessage::new(event.event.as_deref(), &event.data);
            for event in self.decoder.on_event(message) {
                self.assembler.push(&event);
            }
        }
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
