//! Keeping a conversation within the model's context window.
//!
//! Before each model call the loop estimates the request ([`crate::llm::tokens`]). When it
//! would pass the window minus the answer's reserve:
//! 1. old tool results are shortened, oldest first, each to its start and a pointer to the
//!    call that gives it again ([`shorten_tool_results`]);
//! 2. if that is not enough, the older turns are summarized by the model into one note at
//!    the start of the first turn kept verbatim ([`compaction_cut`], [`transcript`],
//!    [`with_summary`]).
//!
//! Turns are cut only before a writer's message, so every tool call keeps its result and the
//! conversation stays valid for every provider. A provider's context-overflow error makes
//! the loop compact once more, harder, and try the call again.

use serde::{Deserialize, Serialize};

use crate::llm::tokens::{estimate_message, estimate_request};
use crate::llm::{Message, Role, ToolCall};
use crate::tools::ToolDefinition;

/// The context window, and how much of a conversation is kept verbatim when it is compacted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextPolicy {
    /// The model's context window, in tokens; `None` when it is not known (then only the
    /// provider's overflow error makes the conversation shorter).
    pub window: Option<u32>,
    /// The share of the window the newest turns keep verbatim when older ones are
    /// summarized (0.1 to 0.9).
    pub keep_verbatim: f64,
}

/// The share of the window kept verbatim unless the settings say.
pub const DEFAULT_KEEP_VERBATIM: f64 = 0.5;

impl ContextPolicy {
    /// The tokens a request may take: the window less the answer's reserve (`max_tokens`, or
    /// a quarter of the window), less a tenth for the estimate's error; `None` when the
    /// window is not known.
    pub fn budget(&self, max_tokens: Option<u32>) -> Option<usize> {
        let window = self.window? as usize;
        let reserve = max_tokens
            .map_or(window / 4, |m| m as usize)
            .min(window / 2);
        Some((window - reserve) * 9 / 10)
    }

    /// The tokens the newest turns keep verbatim when older ones are summarized.
    pub fn verbatim(&self, budget: usize) -> usize {
        (budget as f64 * self.keep_verbatim.clamp(0.1, 0.9)) as usize
    }

    /// The most tokens a summary may take.
    pub fn summary_tokens(&self) -> u32 {
        self.window.map_or(1_024, |w| (w / 8).clamp(64, 1_024))
    }
}

/// The characters an old tool result keeps of its text when shortened.
const SHORT_RESULT_CHARS: usize = 300;

/// What marks a shortened result (it is never shortened twice).
const SHORTENED: &str = "[shortened to save context:";

/// Shorten old tool results, oldest first, until the request (`messages` and `tools`) fits
/// `budget` or no old result is left: each keeps its first characters and a pointer to the
/// call that gives it again. The results answering the newest assistant message are kept
/// whole. Returns how many were shortened.
pub fn shorten_tool_results(
    messages: &mut [Message],
    tools: &[&ToolDefinition],
    budget: usize,
) -> usize {
    let newest = messages
        .iter()
        .rposition(|m| m.role == Role::Assistant)
        .unwrap_or(0);
    let mut total = estimate_request(messages, tools);
    let mut shortened = 0;
    for i in 0..newest {
        if total <= budget {
            break;
        }
        let m = &messages[i];
        if m.role != Role::Tool || m.text.contains(SHORTENED) {
            continue;
        }
        let Some(short) = shorten(&m.text, call_of(messages, i)) else {
            continue;
        };
        let before = estimate_message(&messages[i]);
        messages[i].text = short;
        total = total + estimate_message(&messages[i]) - before;
        shortened += 1;
    }
    shortened
}

/// The call a tool message answers.
fn call_of(messages: &[Message], result: usize) -> Option<&ToolCall> {
    let id = messages[result].tool_call_id.as_deref()?;
    messages[..result]
        .iter()
        .rev()
        .find_map(|m| m.tool_calls.iter().find(|c| c.id == id))
}

/// A result's text shortened, or `None` when it is short already.
fn shorten(text: &str, call: Option<&ToolCall>) -> Option<String> {
    let length = text.chars().count();
    if length <= SHORT_RESULT_CHARS * 2 {
        return None;
    }
    let head: String = text.chars().take(SHORT_RESULT_CHARS).collect();
    let pointer = match call {
        Some(c) => format!(
            "call {} again with {} to see all of it",
            c.name, c.arguments
        ),
        None => "call the tool again to see all of it".to_string(),
    };
    Some(format!(
        "{head}… {SHORTENED} {} more characters; {pointer}]",
        length - SHORT_RESULT_CHARS
    ))
}

/// Where the turns kept verbatim start when older ones are summarized: the earliest writer's
/// message (after the first one) from which the rest takes at most `keep` tokens, or the
/// last writer's message if the rest never does. `None` when there is nothing before it to
/// summarize.
pub fn compaction_cut(messages: &[Message], keep: usize) -> Option<usize> {
    let start = first_turn(messages);
    let users: Vec<usize> = (start + 1..messages.len())
        .filter(|&i| messages[i].role == Role::User)
        .collect();
    let last = *users.last()?;
    let mut tail = 0usize;
    let mut cut = last;
    for i in (start..messages.len()).rev() {
        tail += estimate_message(&messages[i]);
        if tail > keep {
            break;
        }
        if users.contains(&i) {
            cut = i;
        }
    }
    Some(cut)
}

/// The index of the conversation's first message after the system prompt.
fn first_turn(messages: &[Message]) -> usize {
    usize::from(messages.first().is_some_and(|m| m.role == Role::System))
}

/// The instructions of the model call that summarizes older turns.
pub const SUMMARY_INSTRUCTIONS: &str = "You condense the earlier part of a conversation between a writer and their writing assistant, so the assistant can go on without it. Write compact notes, no preamble. Keep every decision taken, every open task and request, the names of characters, places and chapters, facts established about the story, and what was changed in the manuscript. Drop greetings, repetitions and the full text of tool results.";

/// The turns `messages[from..to]` as text for the summarizing call, tool results cut to
/// their start.
pub fn transcript(messages: &[Message], from: usize, to: usize) -> String {
    let mut out = String::new();
    for m in &messages[from..to] {
        let text = match m.role {
            Role::System => continue,
            Role::User => format!("Writer: {}", m.text),
            Role::Assistant => {
                let mut text = format!("Assistant: {}", m.text);
                for call in &m.tool_calls {
                    text.push_str(&format!(" [called {} with {}]", call.name, call.arguments));
                }
                text
            }
            Role::Tool => {
                let name = m.name.as_deref().unwrap_or("a tool");
                let head: String = m.text.chars().take(SHORT_RESULT_CHARS).collect();
                let more = if m.text.chars().count() > SHORT_RESULT_CHARS {
                    "…"
                } else {
                    ""
                };
                format!("Result of {name}: {head}{more}")
            }
        };
        out.push_str(&text);
        out.push('\n');
    }
    out
}

/// Replace `messages[first turn..cut]` by `summary`, written at the start of the writer's
/// message at `cut`. Returns how many messages were removed.
pub fn with_summary(messages: &mut Vec<Message>, cut: usize, summary: &str) -> usize {
    let start = first_turn(messages);
    if cut <= start || cut >= messages.len() {
        return 0;
    }
    let removed = cut - start;
    messages.drain(start..cut);
    let kept = &mut messages[start];
    kept.text = format!(
        "[EARLIER CONVERSATION, SUMMARIZED]\n{}\n[/EARLIER CONVERSATION]\n\n{}",
        summary.trim(),
        kept.text
    );
    removed
}
