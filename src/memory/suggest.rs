//! Suggestions: what the memory proposes to the writer, who accepts each one (it becomes a
//! goal or a note, by its kind) or dismisses it.
//!
//! Two sources make them:
//! - the **monitor** ([`super::monitor`]): a watched entity mentioned, misspelt or
//!   contradicted by an edit; such a suggestion names the chapter and the line, and carries a
//!   `key` so the same finding updates its pending suggestion instead of adding another, and
//!   a dismissed one is not raised again;
//! - the **idle thinker**: one model call while the writer rests, with [`THINKER_SYSTEM`] and
//!   [`thinker_prompt`] (goals, the bedside note, recent observations), whose answer is a
//!   small JSON list ([`parse_proposals`]).
//!
//! This module holds the data and the thinker's prompt and parser; the core keeps the
//! suggestions (as `meta` records) and serves the requests.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use super::{shorten, NoteType};

/// Most proposals taken from one answer of the thinker.
pub const MAX_PROPOSALS: usize = 3;
/// The longest proposal title, in chars.
pub const MAX_TITLE_CHARS: usize = 200;
/// The longest proposal text, in chars.
pub const MAX_TEXT_CHARS: usize = 1_000;

/// Who made a suggestion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SuggestionSource {
    /// The watched-entity monitor, after an edit.
    Monitor,
    /// The idle thinker.
    Thinker,
}

/// What accepting a suggestion makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SuggestionKind {
    /// A goal (the title, with the text as its description).
    Goal,
    /// A memory note (the text, of the suggestion's note type).
    Note,
}

/// Where a suggestion stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SuggestionState {
    /// Waiting for the writer.
    Pending,
    /// Accepted: it became a goal or a note.
    Accepted,
    /// Dismissed.
    Dismissed,
}

/// The watched entity a monitor suggestion is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct EntityRef {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its type (`character`, `item`, `rule`, …).
    #[serde(rename = "type")]
    pub entity_type: String,
}

/// One suggestion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct Suggestion {
    /// Unique id.
    pub id: String,
    /// The project it belongs to.
    pub project: String,
    /// Who made it.
    pub source: SuggestionSource,
    /// What accepting it makes.
    pub kind: SuggestionKind,
    /// A short title (a goal's title).
    pub title: String,
    /// The text (a note's text, a goal's description).
    pub text: String,
    /// The note's type, for a note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note_type: Option<NoteType>,
    /// What identifies a monitor finding (the same finding updates its pending suggestion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// What the monitor found: a mention, a misspelt name, a contradicted rule, a mention an
    /// edit removed or changed (`lineText` is the line as it read before), or a watched
    /// character's or location's story-bible entry an agent changed (`word` names the fields,
    /// `lineText` their new values; no chapter or line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(type = "'mention' | 'misspelling' | 'contradiction' | 'changed' | 'entry_changed'")]
    pub finding: Option<String>,
    /// The watched entity it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity: Option<EntityRef>,
    /// The chapter (id) of the finding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chapter: Option<String>,
    /// The chapter's number (1-based), when it was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chapter_number: Option<usize>,
    /// The chapter's title, when it was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chapter_title: Option<String>,
    /// The line (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The line's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_text: Option<String>,
    /// The word found (the name as written, the misspelt word, the rule's keyword).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub word: Option<String>,
    /// The observation note the monitor wrote about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<String>,
    /// Where it stands.
    pub state: SuggestionState,
    /// When it was made.
    pub created_ms: u64,
    /// When it last changed.
    pub updated_ms: u64,
    /// When the writer decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_ms: Option<u64>,
    /// What accepting it made: `{goal: id}` or `{note: id}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(type = "{ goal?: string, note?: string }")]
    pub accepted_as: Option<Value>,
}

impl Suggestion {
    /// Whether it waits for the writer.
    pub fn is_pending(&self) -> bool {
        self.state == SuggestionState::Pending
    }
}

/// A suggestion the thinker proposed (checked, not yet kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    /// Goal or note.
    pub kind: SuggestionKind,
    /// Its title.
    pub title: String,
    /// Its text.
    pub text: String,
    /// The note's type (notes only; `plan` when the model named none or a wrong one).
    pub note_type: Option<NoteType>,
}

/// The thinker's system prompt.
pub const THINKER_SYSTEM: &str = "You are the proactive thinker of a writing assistant. While the writer rests, you look at their goals, their bedside note (the running plan), the entities they watch and recent observations, and propose at most 3 concrete, useful suggestions. Answer with a JSON array only, no prose: [{\"kind\": \"goal\" or \"note\", \"title\": \"a short title\", \"text\": \"one or two sentences\", \"noteType\": \"fact\", \"observation\", \"plan\", \"preference\" or \"issue\" (notes only)}]. Never repeat a suggestion listed as pending or dismissed. Answer [] when nothing is worth suggesting.";

/// What the thinker is shown.
#[derive(Debug, Clone, Default)]
pub struct ThinkerInput<'a> {
    /// The project's name.
    pub project_name: &'a str,
    /// The bedside note's text.
    pub bedside: &'a str,
    /// Active goals: (title, progress).
    pub goals: Vec<(&'a str, u8)>,
    /// Watched entities: (name, type, reason).
    pub watched: Vec<(&'a str, &'a str, &'a str)>,
    /// Recent observation notes, newest first.
    pub observations: Vec<&'a str>,
    /// Titles of pending suggestions.
    pub pending: Vec<&'a str>,
    /// Titles of dismissed suggestions.
    pub dismissed: Vec<&'a str>,
}

/// The thinker's prompt (with [`THINKER_SYSTEM`]): every list is bounded, so the prompt is.
pub fn thinker_prompt(input: &ThinkerInput<'_>) -> String {
    let list = |items: Vec<String>| {
        if items.is_empty() {
            "(none)".to_string()
        } else {
            items.join("\n")
        }
    };
    format!(
        "Project: {}\n\nBedside note:\n{}\n\nActive goals:\n{}\n\nWatched entities:\n{}\n\nRecent observations:\n{}\n\nPending suggestions (do not repeat):\n{}\n\nDismissed suggestions (do not repeat):\n{}\n\nPropose your suggestions as a JSON array.",
        shorten(input.project_name, 200),
        shorten(input.bedside, 2_000),
        list(input.goals.iter().take(12).map(|(t, p)| format!("- {}: {p}%", shorten(t, 160))).collect()),
        list(input.watched.iter().take(12).map(|(n, t, r)| format!("- {} ({t}): {}", shorten(n, 80), shorten(r, 160))).collect()),
        list(input.observations.iter().take(8).map(|o| format!("- {}", shorten(o, 240))).collect()),
        list(input.pending.iter().take(20).map(|t| format!("- {}", shorten(t, 160))).collect()),
        list(input.dismissed.iter().take(20).map(|t| format!("- {}", shorten(t, 160))).collect()),
    )
}

/// The proposals of the thinker's answer: the first JSON array in it (a code fence or words
/// around it are ignored), each item checked; items that are not proposals are skipped, and
/// at most [`MAX_PROPOSALS`] are kept. An answer without a JSON array is an error.
pub fn parse_proposals(answer: &str) -> Result<Vec<Proposal>, String> {
    let start = answer
        .find('[')
        .ok_or_else(|| "the answer has no JSON array".to_string())?;
    let end = answer
        .rfind(']')
        .filter(|&e| e > start)
        .ok_or_else(|| "the answer's JSON array is not closed".to_string())?;
    // Text from '[' to ']' that parses is an array.
    let parsed: Value = serde_json::from_str(&answer[start..=end])
        .map_err(|e| format!("the answer's JSON array does not parse: {e}"))?;
    let Value::Array(items) = parsed else {
        return Err("the answer's JSON array does not parse".into());
    };
    let mut out = Vec::new();
    for item in items {
        let text_of = |field: &str| {
            item.get(field)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };
        let kind = match item.get("kind").and_then(Value::as_str) {
            Some("goal") => SuggestionKind::Goal,
            Some("note") => SuggestionKind::Note,
            _ => continue,
        };
        let (title, text) = match (text_of("title"), text_of("text")) {
            (Some(title), Some(text)) => (title, text),
            (Some(one), None) | (None, Some(one)) => (one, one),
            (None, None) => continue,
        };
        let note_type = (kind == SuggestionKind::Note).then(|| {
            item.get("noteType")
                .or_else(|| item.get("note_type"))
                .cloned()
                .and_then(|v| serde_json::from_value::<NoteType>(v).ok())
                .unwrap_or(NoteType::Plan)
        });
        out.push(Proposal {
            kind,
            title: shorten(title, MAX_TITLE_CHARS),
            text: shorten(text, MAX_TEXT_CHARS),
            note_type,
        });
        if out.len() == MAX_PROPOSALS {
            break;
        }
    }
    Ok(out)
}

/// A title compared loosely: lowercase letters and digits only.
pub fn same_title(a: &str, b: &str) -> bool {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    norm(a) == norm(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proposals_are_read_from_the_first_array_and_checked() {
        let answer = "Here you go:\n```json\n[{\"kind\": \"goal\", \"title\": \"Finish act one\", \"text\": \"By Friday.\"},\n {\"kind\": \"note\", \"title\": \"Mara's fear\", \"text\": \"Keep it consistent.\", \"noteType\": \"issue\"},\n {\"kind\": \"poem\", \"title\": \"x\"}, 5,\n {\"kind\": \"note\", \"text\": \"Only text.\", \"noteType\": \"nonsense\"}]\n```";
        let proposals = parse_proposals(answer).unwrap();
        assert_eq!(proposals.len(), 3);
        assert_eq!(proposals[0].kind, SuggestionKind::Goal);
        assert_eq!(proposals[0].note_type, None);
        assert_eq!(proposals[1].note_type, Some(NoteType::Issue));
        assert_eq!(proposals[2].title, "Only text.");
        assert_eq!(proposals[2].note_type, Some(NoteType::Plan));
        assert!(parse_proposals("nothing to add").is_err());
        assert!(parse_proposals("[{bad json]").is_err());
        assert_eq!(parse_proposals("[]").unwrap(), vec![]);
        let many = format!("[{}]", ["{\"kind\":\"goal\",\"title\":\"t\"}"; 9].join(","));
        assert_eq!(parse_proposals(&many).unwrap().len(), MAX_PROPOSALS);
    }

    #[test]
    fn titles_compare_loosely() {
        assert!(same_title("Finish act one!", "finish  ACT one"));
        assert!(!same_title("Finish act one", "Finish act two"));
    }
}
