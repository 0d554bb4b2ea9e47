//! What an OpenAI-compatible stream event (a `chat.completion.chunk`) or whole response (a
//! `chat.completion`) holds, as the decoder reads it.

use serde::Deserialize;
use serde_json::Value;

use crate::lenient::{Arguments, Count, First, List, Object, Text, Wanted};

/// One event's data (or a whole response body) read; `Err` when it is not JSON.
pub fn chunk(data: &str) -> serde_json::Result<Object<Chunk<'_>>> {
    serde_json::from_str(data)
}

/// A `chat.completion.chunk`, or a whole `chat.completion` (what the decoder reads of it).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Chunk<'a> {
    /// An error reported instead of (or inside) the answer.
    pub error: Option<Value>,
    /// The choice of index 0 (a choice that is no object counts as one, empty).
    #[serde(borrow)]
    pub choices: First<Object<Choice<'a>>>,
    pub usage: Object<TokenCounts>,
}

impl Wanted for Object<Choice<'_>> {
    fn wanted(&self) -> bool {
        self.get().map_or(0, |c| c.index.or_zero()) == 0
    }
}

/// One of a chunk's `choices`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Choice<'a> {
    pub index: Count,
    /// What a chunk adds.
    #[serde(borrow)]
    pub delta: Object<Delta<'a>>,
    /// A whole response's message.
    #[serde(borrow)]
    pub message: Object<Delta<'a>>,
    #[serde(borrow)]
    pub finish_reason: Text<'a>,
}

/// A choice's `delta` (or `message`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Delta<'a> {
    #[serde(borrow)]
    pub content: Text<'a>,
    #[serde(borrow)]
    pub refusal: Text<'a>,
    #[serde(borrow)]
    pub tool_calls: List<Object<Fragment<'a>>>,
}

/// One `tool_calls[]` fragment.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Fragment<'a> {
    pub index: Count,
    #[serde(borrow)]
    pub id: Text<'a>,
    #[serde(borrow)]
    pub function: Object<Function<'a>>,
}

impl Fragment<'_> {
    /// What a fragment that is no object says: nothing.
    pub const EMPTY: Fragment<'static> = Fragment {
        index: Count::Missing,
        id: Text::Missing,
        function: Object::Missing,
    };
}

/// A fragment's `function`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Function<'a> {
    #[serde(borrow)]
    pub name: Text<'a>,
    #[serde(borrow)]
    pub arguments: Arguments<'a>,
}

/// A chunk's `usage`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct TokenCounts {
    pub prompt_tokens: Count,
    pub completion_tokens: Count,
}
