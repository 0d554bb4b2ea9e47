//! What a Gemini `GenerateContentResponse` holds, as the decoder reads it.

use serde::Deserialize;
use serde_json::Value;

use crate::lenient::{Count, Flag, List, Object, Seen, Text};

/// One event's data (or a whole response body) read; `Err` when it is not JSON.
pub fn response(data: &str) -> serde_json::Result<Object<Response<'_>>> {
    serde_json::from_str(data)
}

/// A whole response body that is an array of responses (as `streamGenerateContent` without
/// SSE answers); `Err` when it is not JSON.
pub fn responses(body: &str) -> serde_json::Result<List<Object<Response<'_>>>> {
    serde_json::from_str(body)
}

/// One `GenerateContentResponse` (what the decoder reads of it).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Response<'a> {
    /// An error reported instead of the answer.
    pub error: Option<Value>,
    #[serde(borrow)]
    pub candidates: List<Object<Candidate<'a>>>,
    pub prompt_feedback: Object<PromptFeedback>,
    pub usage_metadata: Object<UsageMetadata>,
}

/// A response's candidate.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Candidate<'a> {
    #[serde(borrow)]
    pub content: Object<Content<'a>>,
    #[serde(borrow)]
    pub finish_reason: Text<'a>,
}

/// A candidate's content.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Content<'a> {
    #[serde(borrow)]
    pub parts: List<Object<ContentPart<'a>>>,
}

/// One part of a candidate's content.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ContentPart<'a> {
    /// A thought summary, not the answer.
    pub thought: Flag,
    #[serde(borrow)]
    pub text: Text<'a>,
    #[serde(borrow)]
    pub function_call: Object<FunctionCall<'a>>,
}

/// A `functionCall` part.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct FunctionCall<'a> {
    #[serde(borrow)]
    pub id: Text<'a>,
    #[serde(borrow)]
    pub name: Text<'a>,
    /// The arguments, any JSON (an object, when the model behaves).
    pub args: Option<Value>,
}

/// A response's `promptFeedback`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PromptFeedback {
    pub block_reason: Seen,
}

/// A response's `usageMetadata`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct UsageMetadata {
    pub prompt_token_count: Count,
    pub candidates_token_count: Count,
    pub thoughts_token_count: Count,
}
