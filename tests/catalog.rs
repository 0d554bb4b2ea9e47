//! The tool catalog names every story-bible tool of the issue, exactly (`cargo run --example
//! catalog -- --names` prints the same list), and each has a schema in every format.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::tools::{CatalogFormat, ToolRegistry, ALL};

const BIBLE_TOOLS: &[&str] = &[
    "scene_read_metadata",
    "scene_read_overview",
    "scene_read_redacted",
    "scene_update_summary",
    "scene_update_tags",
    "scene_update_primary_characters",
    "scene_update_locations",
    "character_read_entry",
    "character_create_entry",
    "character_update_name_tgt",
    "character_update_pronouns",
    "character_update_notes",
    "character_delete_entry",
    "location_read_entry",
    "location_create_entry",
    "location_update_name_tgt",
    "location_update_description",
    "location_delete_entry",
    "route_read_entry",
    "route_create_entry",
    "route_update_synopsis",
    "route_update_primary_characters",
    "route_delete_entry",
    "glossary_search_term",
    "glossary_read_entry",
    "glossary_create_entry",
    "glossary_update_entry",
    "glossary_merge_entries",
    "glossary_delete_entry",
    "styleguide_read_full",
    "ui_read_settings",
    "translation_check_mtl_available",
    "translation_create_mtl_suggestion",
    "translation_create_line",
    "translation_update_line",
    "translation_read_scene",
    "translation_create_style_check",
    "translation_create_consistency_check",
    "translation_create_review_check",
    "contextdoc_list_all",
    "contextdoc_read_doc",
    "context_read_status",
    "query_lore",
    "get_character_info",
];

#[test]
fn every_story_bible_tool_is_in_the_catalog() {
    let registry = ToolRegistry::standard();
    let names: Vec<&str> = registry.names().collect();
    let missing: Vec<&&str> = BIBLE_TOOLS.iter().filter(|t| !names.contains(t)).collect();
    assert!(missing.is_empty(), "missing tools: {missing:?}");
    for format in [
        CatalogFormat::Openai,
        CatalogFormat::Anthropic,
        CatalogFormat::Gemini,
    ] {
        let catalog = registry.catalog(format, ALL).unwrap().to_string();
        for tool in BIBLE_TOOLS {
            assert!(
                catalog.contains(&format!("\"{tool}\"")),
                "{tool} in {format:?}"
            );
        }
    }
}
