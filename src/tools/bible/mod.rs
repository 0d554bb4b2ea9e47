//! Story-bible tools, named `{data}_{crud}_{thing}` (approval wiring keys off the names):
//! [`story`] (scenes, characters, locations, routes, and the knowledge tools `query_lore`
//! and `get_character_info`) and [`language`] (glossary, style guide, UI settings,
//! translations, QA checks, context documents, status).
//!
//! Every write goes through the edit context's bible write path
//! ([`EditContext::bible_create`](crate::session::EditContext::bible_create),
//! [`bible_update`](crate::session::EditContext::bible_update),
//! [`bible_delete`](crate::session::EditContext::bible_delete)), which applies the approval
//! policy and conflict detection and records provenance. Read tools return formatted text a
//! model reads easily.

pub mod language;
pub mod story;

use super::ToolRegistry;

/// Register the story-bible tools.
pub fn register(registry: &mut ToolRegistry) {
    story::register(registry);
    language::register(registry);
}
