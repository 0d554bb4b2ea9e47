//! What an Anthropic Messages stream event holds, as the decoder reads it.

use serde::Deserialize;

use crate::lenient::{Count, Object, Text};

/// One event's data read; `Err` when it is not JSON.
pub fn event(data: &str) -> serde_json::Result<Object<Event<'_>>> {
    serde_json::from_str(data)
}

/// One streamed event (what the decoder reads of it).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Event<'a> {
    /// The event's kind (the SSE event name when absent).
    #[serde(rename = "type", borrow)]
    pub kind: Text<'a>,
    /// `message_start`'s message.
    pub message: Object<MessageStart>,
    /// The content block an event is about.
    pub index: Count,
    #[serde(borrow)]
    pub content_block: Object<Block<'a>>,
    #[serde(borrow)]
    pub delta: Object<Delta<'a>>,
    /// `message_delta`'s usage.
    pub usage: Object<TokenCounts>,
}

/// `message_start`'s message.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct MessageStart {
    pub usage: Object<TokenCounts>,
}

/// A content block as it starts.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Block<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Text<'a>,
    #[serde(borrow)]
    pub text: Text<'a>,
    #[serde(borrow)]
    pub id: Text<'a>,
    #[serde(borrow)]
    pub name: Text<'a>,
}

/// A `content_block_delta`'s or `message_delta`'s delta.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Delta<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Text<'a>,
    #[serde(borrow)]
    pub text: Text<'a>,
    #[serde(borrow)]
    pub partial_json: Text<'a>,
    #[serde(borrow)]
    pub stop_reason: Text<'a>,
}

/// A streamed `usage`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct TokenCounts {
    pub input_tokens: Count,
    pub output_tokens: Count,
    pub cache_creation_input_tokens: Count,
    pub cache_read_input_tokens: Count,
}

impl TokenCounts {
    /// What a `usage` that is no object says: nothing.
    pub const NONE: TokenCounts = TokenCounts {
        input_tokens: Count::Missing,
        output_tokens: Count::Missing,
        cache_creation_input_tokens: Count::Missing,
        cache_read_input_tokens: Count::Missing,
    };

    /// Input tokens, cache writes and reads included.
    pub fn input_tokens(&self) -> u64 {
        self.input_tokens.or_zero()
            + self.cache_creation_input_tokens.or_zero()
            + self.cache_read_input_tokens.or_zero()
    }
}
