//! Story-bible tools, named `{data}_{crud}_{thing}` (approval wiring keys off the names), as
//! declarations. [`KINDS`] declares each entity kind once: the fields its generic tools write
//! and what each holds (text, a list, or references to other entries), and the approval policy
//! of an agent's create and delete. [`TOOLS`] declares each tool once: its kind, what it does,
//! its arguments and its description. [`register`] makes tools of them: their JSON Schemas come
//! from the declared arguments (natively; the wasm build embeds them, as for every tool), one
//! command parses the arguments through the declaration (with the messages a typed argument
//! struct would give), and the CRUD tools (`{kind}_read_entry`, `{kind}_create_entry`,
//! `{kind}_update_{field}`, `{kind}_delete_entry`) run generic code in [`story`]; the other
//! tools name their handler in [`story`] or [`language`].
//!
//! Every write goes through the edit context's bible write path
//! ([`EditContext::bible_create`], [`bible_update`](EditContext::bible_update),
//! [`bible_delete`](EditContext::bible_delete)): it applies the approval policy and conflict
//! detection, and stamps each field it writes with its origin (`human`, `import` or
//! `agent:<name>:<date>`). Read tools return formatted text a model reads easily.

/// Append `format!` arguments to a `String`.
macro_rules! w {
    ($s:expr, $($t:tt)*) => {
        $s.push_str(&format!($($t)*))
    };
}

pub mod language;
pub mod story;

use serde_json::Value;

use super::args::{opt, parse, req, strings, Arg, Args, Ty::*};
use super::{ToolDefinition, ToolError, ToolRegistry};
use crate::bible::{is_empty_value, Kind, Kind::*};
use crate::commands::Category;
use crate::policy::{action_of, Action, Mode, Mode::*};
use crate::session::EditContext;
use crate::tools::editing::preview;
use crate::tools::Command;
use args::*;
use Does::*;
use Val::{Ids, Ref, Text};

type S = &'static str;
type Out = Result<Value, ToolError>;
type Res<T> = Result<T, ToolError>;
type Cx<'a> = EditContext<'a>;

/// What a field holds, as the generic tools take it.
#[derive(Debug, Clone, Copy)]
pub enum Val {
    /// Text, trimmed; an empty text clears the field.
    Text,
    /// A list of strings (stored without duplicates or empty items).
    List,
    /// Entries of a kind, named by id, name or alias and stored as ids; each must exist.
    Ref(Kind),
    /// Entries of a kind, named by their exact ids; each must exist.
    Ids(Kind),
}

/// An entity kind as its tools see it: whether it is known by names and aliases too (not only
/// by id), the tool that lists it, the approval policy of an agent's create and delete (an
/// update is always standard: it asks before changing what the writer or an import wrote; a
/// read never asks), what to give for a new entry's empty title, and the fields the generic
/// tools write, with what each holds. Its other fields come from the writer (in the page),
/// imports or the kind's own tools.
#[derive(Debug)]
pub struct KindDecl {
    kind: Kind,
    named: bool,
    lister: S,
    create: Mode,
    delete: Mode,
    title_hint: S,
    fields: &'static [(S, Val)],
}

/// Every kind, in [`Kind::ALL`] order.
#[rustfmt::skip]
pub static KINDS: [KindDecl; 11] = [
    KindDecl { kind: Scene, named: false, lister: "scene_read_overview", create: Permissive, delete: Permissive, title_hint: "",
        fields: &[("summary", Text), ("tags", Val::List), ("primary_characters", Ref(Character)), ("locations", Ref(Location))] },
    KindDecl { kind: Character, named: true, lister: "character_read_entry", create: Strict, delete: Strict,
        title_hint: "give the character's name as it appears in the text",
        fields: &[("name_src", Text), ("name_tgt", Text), ("aliases", Val::List), ("pronouns", Text), ("notes", Text)] },
    KindDecl { kind: Location, named: true, lister: "location_read_entry", create: Permissive, delete: Strict,
        title_hint: "give the location's name as it appears in the text", fields: &[("name_src", Text), ("name_tgt", Text), ("description", Text)] },
    KindDecl { kind: Route, named: false, lister: "route_read_entry", create: Strict, delete: Strict, title_hint: "say what happens on this route",
        fields: &[("synopsis", Text), ("primary_characters", Ref(Character)), ("scene_ids", Ids(Scene))] },
    KindDecl { kind: Glossary, named: false, lister: "glossary_search_term", create: Permissive, delete: Standard, title_hint: "", fields: &[] },
    KindDecl { kind: Styleguide, named: false, lister: "styleguide_read_full", create: Permissive, delete: Permissive, title_hint: "", fields: &[] },
    KindDecl { kind: UiSettings, named: false, lister: "ui_read_settings", create: Permissive, delete: Permissive, title_hint: "", fields: &[] },
    KindDecl { kind: Contextdoc, named: false, lister: "contextdoc_list_all", create: Permissive, delete: Permissive, title_hint: "", fields: &[] },
    KindDecl { kind: Translation, named: false, lister: "translation_read_scene", create: Permissive, delete: Standard, title_hint: "", fields: &[] },
    KindDecl { kind: Qa, named: false, lister: "context_read_status", create: Permissive, delete: Standard, title_hint: "", fields: &[] },
    KindDecl { kind: Campaign, named: false, lister: "campaign_read_entry", create: Permissive, delete: Standard, title_hint: "", fields: &[] },
];

fn decl(kind: Kind) -> &'static KindDecl {
    KINDS.iter().find(|d| d.kind == kind).unwrap_or(&KINDS[0])
}

/// The severities of a QA finding.
pub const SEVERITIES: [&str; 3] = ["info", "warning", "error"];

/// A tool's own code: its call, through the edit context.
pub type Handler = fn(&Call, &mut EditContext<'_>) -> Out;

/// What a tool does: the generic `{kind}_read_entry` (the entry the first argument names, or
/// a list of all), `{kind}_create_entry` (from the arguments named as the kind's fields),
/// `{kind}_update_{field}` (this field, from the second argument, of the entry the first
/// names) or `{kind}_delete_entry`; or its own read, knowledge lookup or write.
#[derive(Debug, Clone, Copy)]
#[allow(missing_docs)]
pub enum Does {
    ReadEntry,
    CreateEntry,
    Update(S),
    DeleteEntry,
    Read(Handler),
    Lookup(Handler),
    Write(Handler),
}

/// A story-bible tool: its name, kind, what it does, its arguments (in schema order) and its
/// description.
#[derive(Debug)]
pub struct Tool {
    name: S,
    kind: Kind,
    does: Does,
    args: &'static [Arg],
    description: S,
}

const fn t(name: S, kind: Kind, does: Does, args: &'static [Arg], description: S) -> Tool {
    Tool {
        name,
        kind,
        does,
        args,
        description,
    }
}

impl Tool {
    /// Its default approval policy, from its kind's declaration and its `{crud}`.
    pub fn mode(&self) -> Mode {
        match action_of(self.name) {
            Action::Create => decl(self.kind).create,
            Action::Delete => decl(self.kind).delete,
            Action::Update => Standard,
            Action::Read => Permissive,
        }
    }

    fn arg(&self, i: usize) -> &'static str {
        self.args.get(i).map_or("", |a| a.name)
    }
}

#[rustfmt::skip]
mod args {
    use super::super::args::{opt, req, Arg, Ty, Ty::*};
    const SEV: Ty = OneOf(&super::SEVERITIES);
    pub const SCENE: Arg = req("scene", Str, "The scene's id.").or(&["id", "scene_id", "sceneId"]);
    pub const MAX_CHARS: Arg = opt("max_chars", Num(1, super::story::MAX_EXCERPT_CHARS as u64), "Most characters of the scene's text to show, 1 to 50000; default 2000.").or(&["maxChars"]);
    pub const CHARACTER: Arg = req("character", Str, "The character's id, name or alias.").or(&["id"]);
    pub const LOCATION: Arg = req("location", Str, "The location's id or name.").or(&["id"]);
    pub const ROUTE: Arg = req("route", Str, "The route's id.").or(&["id"]);
    pub const NAME_TGT: Arg = req("name_tgt", Str, "The name in the target language (empty clears it).").or(&["nameTgt"]);
    pub const NEW_NAME_TGT: Arg = opt("name_tgt", Str, "The name in the target language of a translation.").or(&["nameTgt"]);
    pub const ENTRY: Arg = req("term_src", Str, "The entry's source term, as glossary_search_term shows it (its id is accepted too).").or(&["id", "termSrc"]);
    pub const IN_SCENE: Arg = req("scene", Str, "The scene's id.");
    pub const LINE: Arg = req("line", Num(0, 0), "The line's number in the scene (from 1, as translation_read_scene shows).");
    pub const TARGET: Arg = req("target", Str, "The translation of the line.");
    pub const QA_LINE: Arg = opt("line", Num(0, 0), "The line's number in the scene (omit for a finding about the whole scene).");
    pub const SEVERITY: Arg = opt("severity", SEV, "How serious: info, warning (default) or error.");
}

use language as l;
use story as s;

/// Every story-bible tool, in registration order.
#[rustfmt::skip]
pub static TOOLS: &[Tool] = &[
    // Scenes: the writer makes them (a chapter and a span of it); agents fill in the rest.
    t("scene_read_metadata", Scene, Read(s::scene_metadata), &[req("scene", Str, "The scene's id (scene_read_overview without a scene lists them).").or(&["id", "scene_id", "sceneId"])],
        "Read a scene's story-bible entry: chapter, span (char offsets in the chapter), summary, tags, primary characters and locations, each with its origin (human, import or agent:<name>:<date>), and the entry's version. scene_read_overview adds the scene's text."),
    t("scene_read_overview", Scene, Read(s::scene_overview), &[opt("scene", Str, "The scene's id. Omit to list every scene briefly in reading order.").or(&["id", "scene_id", "sceneId"]), MAX_CHARS],
        "Without a scene: list every scene of the story bible in reading order (id, chapter, span, summary). With a scene id: its metadata (with origins), the characters and locations mentioned in its text, and the text itself (the first max_chars characters, default 2000)."),
    t("scene_read_redacted", Scene, Read(s::scene_redacted), &[SCENE, MAX_CHARS],
        "Read a scene as a first-time reader knows it at the end of the scene, having read the manuscript from the start up to the scene's end and nothing more (use it to judge a scene without spoilers). A name of a character or location is seen if it occurs (whole word, case-sensitive) in that text; every unseen name is replaced by [not yet introduced] in the scene's text, summary and tags, characters and locations are shown by seen names only (never by id; one with no seen name is [not yet introduced]). Earlier scenes (those ending at or before this scene's end) are shown with their summaries and tags, redacted the same way; later scenes are hidden (only their number is given). Character notes, location descriptions and routes are never shown."),
    t("scene_update_summary", Scene, Write(s::update_summary), &[SCENE, req("summary", Str, "The new summary (replaces the old; empty clears it)."), opt("overwrite", Flag, "An agent writes a scene's summary once per run; pass true to write it again in the same run. Default false.")],
        "Set a scene's summary (replacing it; empty clears it). Within one run an agent writes each scene's summary once: a second write fails with already_written unless overwrite is true. A summary the writer wrote needs the writer's approval to change (approval_required; nothing changes until approved)."),
    t("scene_update_tags", Scene, Update("tags"), &[SCENE, req("tags", Strs, "The scene's tags (replacing the old ones; an empty list clears them).")],
        "Set a scene's tags (the whole list, replacing the old one; duplicates and empty tags are dropped). Tags the writer set need the writer's approval to change."),
    t("scene_update_primary_characters", Scene, Write(s::update_scene_characters), &[SCENE, req("characters", Strs, "The scene's primary characters: ids, names or aliases of characters in the story bible (the whole list, replacing the old one).").or(&["primary_characters", "primaryCharacters"])],
        "Set a scene's primary characters (the whole list; ids, names or aliases of characters in the story bible, stored as ids). Every character must exist. The result says which of them are mentioned in the scene's text and warns about those that are not."),
    t("scene_update_locations", Scene, Update("locations"), &[SCENE, req("locations", Strs, "The scene's locations: ids, names or aliases of locations in the story bible (the whole list, replacing the old one).")],
        "Set a scene's locations (the whole list; ids or names of locations in the story bible, stored as ids). Every location must exist (location_create_entry adds one)."),
    // Characters.
    t("character_read_entry", Character, ReadEntry, &[opt("character", Str, "The character's id, name or alias. Omit to list every character.").or(&["id", "name"])],
        "Read a character's story-bible entry by id, name or alias (any case): name_src, name_tgt, aliases, pronouns and notes, each with its origin, plus the scenes and routes that list the character. Without a character, list every character briefly."),
    t("character_create_entry", Character, CreateEntry, &[
        req("name_src", Str, "The character's name in the source text (as it appears in the manuscript).").or(&["nameSrc", "name"]), NEW_NAME_TGT,
        opt("aliases", Strs, "Other names the character goes by in the text (nicknames, titles, first name alone)."),
        opt("pronouns", Str, "Pronouns, such as \"she/her\"."), opt("notes", Str, "Notes: role, traits, relationships, arc."),
        opt("id", Str, "The id to give it; default: made from the name (such as \"mara-vell\").")],
        "Add a character to the story bible: name_src (required), name_tgt, aliases, pronouns, notes; the id is made from the name unless given. By default an agent's new character needs the writer's approval (approval_required; the call is applied once the writer approves). Warns when another character already has one of the names."),
    t("character_update_name_tgt", Character, Update("name_tgt"), &[CHARACTER, NAME_TGT],
        "Set a character's target-language name (empty clears it). The character is named by id, name or alias. Changing what the writer wrote needs the writer's approval (approval_required; nothing changes until approved)."),
    t("character_update_pronouns", Character, Update("pronouns"), &[CHARACTER, req("pronouns", Str, "The pronouns, such as \"she/her\" (empty clears them).")],
        "Set a character's pronouns (such as \"she/her\"; empty clears them). The character is named by id, name or alias. Changing what the writer wrote needs the writer's approval."),
    t("character_update_notes", Character, Update("notes"), &[CHARACTER, req("notes", Str, "The whole new notes, replacing the old (to add to them, read them first and pass the full text; empty clears them).")],
        "Replace a character's notes (role, traits, relationships, arc) with the text given; to add to them, read them first and pass the whole new text. The character is named by id, name or alias. Notes the writer wrote need the writer's approval to change."),
    t("character_delete_entry", Character, DeleteEntry, &[CHARACTER.or(&["id", "name"])],
        "Delete a character from the story bible (by id, name or alias). By default an agent's delete always needs the writer's approval. Returns the deleted entry and the scenes and routes that still list it."),
    // Locations.
    t("location_read_entry", Location, ReadEntry, &[opt("location", Str, "The location's id or name. Omit to list every location.").or(&["id", "name"])],
        "Read a location's story-bible entry by id or name (any case): name_src, name_tgt and description, each with its origin, plus the scenes that list it. Without a location, list every location briefly."),
    t("location_create_entry", Location, CreateEntry, &[
        req("name_src", Str, "The location's name in the source text.").or(&["nameSrc", "name"]), NEW_NAME_TGT,
        opt("description", Str, "What the place is like and what happens there."), opt("id", Str, "The id to give it; default: made from the name.")],
        "Add a location to the story bible: name_src (required), name_tgt, description; the id is made from the name unless given. Warns when another location already has the name."),
    t("location_update_name_tgt", Location, Update("name_tgt"), &[LOCATION, NAME_TGT],
        "Set a location's target-language name (empty clears it). The location is named by id or name. Changing what the writer wrote needs the writer's approval."),
    t("location_update_description", Location, Update("description"), &[LOCATION, req("description", Str, "The whole new description, replacing the old (empty clears it).")],
        "Replace a location's description with the text given (to add to it, read it first and pass the whole new text; empty clears it). The location is named by id or name. A description the writer wrote needs the writer's approval to change."),
    t("location_delete_entry", Location, DeleteEntry, &[LOCATION.or(&["id", "name"])],
        "Delete a location from the story bible (by id or name). By default an agent's delete always needs the writer's approval. Returns the deleted entry and the scenes that still list it."),
    // Routes.
    t("route_read_entry", Route, ReadEntry, &[opt("route", Str, "The route's id. Omit to list every route.").or(&["id"])],
        "Read a route's story-bible entry (a branch of an interactive story): synopsis, primary characters and scene ids, each with its origin. Without a route, list every route briefly."),
    t("route_create_entry", Route, CreateEntry, &[
        opt("id", Str, "The id to give it; default: made from the synopsis's first words."), req("synopsis", Str, "What happens on this route."),
        opt("primary_characters", Strs, "Its primary characters: ids, names or aliases of characters in the story bible.").or(&["primaryCharacters", "characters"]),
        opt("scene_ids", Strs, "Ids of its scenes (scenes in the story bible).").or(&["sceneIds", "scenes"])],
        "Add a route (a branch of an interactive story) to the story bible: synopsis (required), primary_characters (ids or names of existing characters), scene_ids (existing scenes); the id is made from the synopsis unless given. By default an agent's new route needs the writer's approval."),
    t("route_update_synopsis", Route, Update("synopsis"), &[ROUTE, req("synopsis", Str, "The whole new synopsis, replacing the old (empty clears it).")],
        "Replace a route's synopsis (empty clears it). A synopsis the writer wrote needs the writer's approval to change."),
    t("route_update_primary_characters", Route, Update("primary_characters"), &[ROUTE, req("characters", Strs, "Its primary characters: ids, names or aliases of characters in the story bible (the whole list, replacing the old one).").or(&["primary_characters", "primaryCharacters"])],
        "Set a route's primary characters (the whole list; ids, names or aliases of existing characters, stored as ids). A list the writer set needs the writer's approval to change."),
    t("route_delete_entry", Route, DeleteEntry, &[ROUTE],
        "Delete a route from the story bible (its scenes stay). By default an agent's delete always needs the writer's approval. Returns the deleted entry."),
    // Knowledge.
    t("query_lore", Character, Lookup(s::query_lore), &[req("query", Str, "Words to look for, such as a name, a place, an object or a question (\"who owns the lighthouse\")."), opt("limit", Num(1, 50), "Most hits to return, 1 to 50; default 10.")],
        "Search the story bible's lore: characters (names, aliases, pronouns, notes), locations (names, descriptions), routes (synopses) and scene summaries and tags. Case-insensitive word matching (a word of 3+ letters also matches longer words it begins); hits are ranked by how many query words they match, names counting most. Returns the hits with the matching field."),
    t("get_character_info", Character, Lookup(s::character_info), &[CHARACTER.or(&["id", "name"])],
        "Everything known about a character (by id, name or alias): the story-bible entry with origins, the scenes and routes that list them, their appearances in the manuscript (for each chapter, how many times any of their names or aliases is mentioned, whole word, case-sensitive, and where the first mention is, with a snippet), and the memory's observations and notes about them."),
    // Glossary.
    t("glossary_search_term", Glossary, Read(l::search_term), &[req("query", Str, "Text to look for (case-insensitive) in the source terms, their translations and the notes. An empty query lists every entry."), opt("limit", Num(0, 0), "Most entries to return (default 50).")],
        "Search the glossary: entries whose source term, translation or notes contain the query (case-insensitive); an empty query lists every entry. Shows each entry's id, source term → translation and notes, with who wrote each field. Use it before translating a name or term, and before creating an entry (to avoid duplicates)."),
    t("glossary_read_entry", Glossary, Read(l::read_entry), &[ENTRY],
        "Read one glossary entry by its source term (or id): its source term, translation and notes, each with who wrote it (human, import or agent:<name>:<date>), and its version."),
    t("glossary_create_entry", Glossary, Write(l::create_entry), &[
        req("term_src", Str, "The term in the source language, as it appears in the manuscript.").or(&["termSrc"]), opt("term_tgt", Str, "Its translation in the target language.").or(&["termTgt"]),
        opt("notes", Str, "Notes: meaning, usage, context, what to avoid."), opt("id", Str, "An id for the entry (default: made from the term).")],
        "Add a glossary entry: a source term, its translation and notes. Fails if an entry for the same source term exists (update or merge that one instead). Returns the entry with its id."),
    t("glossary_update_entry", Glossary, Write(l::update_entry), &[
        ENTRY, opt("term_tgt", Str, "The new translation of the term.").or(&["termTgt"]),
        opt("notes", Str, "The new notes (they replace the old ones: include what should stay).")],
        "Change a glossary entry's translation and/or notes, the entry named by its source term (or id) (give at least one; notes replace the old notes). Changing a field the writer wrote asks the writer's approval first (the call then fails with approval_required and changes nothing)."),
    t("glossary_merge_entries", Glossary, Write(l::merge_entries), &[req("keep", Str, "The id of the entry to keep."), req("merge", Strs, "The ids of the duplicate entries to fold into it and remove.")],
        "Merge duplicate glossary entries into one: the kept entry gets the others' notes (and their other spellings and translations, noted), its translation if it had none, and the others are removed. All or nothing. Changing or removing what the writer wrote asks the writer's approval first (approval_required, nothing changed)."),
    t("glossary_delete_entry", Glossary, Write(l::delete_entry), &[ENTRY],
        "Remove a glossary entry, named by its source term (or id). Removing an entry with fields the writer wrote asks the writer's approval first (approval_required, nothing changed). To fold duplicates together use glossary_merge_entries."),
    // Style guide and UI settings.
    t("styleguide_read_full", Styleguide, Read(l::styleguide), &[],
        "Read the whole style guide (markdown): the translation and writing conventions to follow. Read it before translating or checking style."),
    t("ui_read_settings", UiSettings, Read(l::ui_settings), &[],
        "Read the UI settings translations must fit: the longest a displayed line may be (line_length_limit, in characters), how many lines fit in a text box (lines_per_box) and notes."),
    // Translations.
    t("translation_check_mtl_available", Translation, Read(l::mtl_available), &[],
        "Say whether a machine-translation (MTL) endpoint is configured, that is whether translation_create_mtl_suggestion can work."),
    t(l::MTL_SUGGESTION, Translation, Read(l::mtl_suggestion_sync), &[
        IN_SCENE, LINE, req("source_lang", Str, "The source language code, such as \"ja\" (or \"auto\").").or(&["sourceLang"]),
        req("target_lang", Str, "The target language code, such as \"en\".").or(&["targetLang"])],
        "Ask the machine-translation endpoint for a suggested translation of one line of a scene. Returns the suggestion only (it saves nothing): review it, then save your translation with translation_create_line. Fails with no_mtl_endpoint if none is configured (translation_check_mtl_available tells)."),
    t("translation_create_line", Translation, Write(l::create_line), &[IN_SCENE, LINE, TARGET],
        "Save the translation of one line of a scene (lines are numbered from 1, as translation_read_scene shows); the source text is taken from the manuscript. Fails if the line already has a translation: change that with translation_update_line."),
    t("translation_update_line", Translation, Write(l::update_line), &[IN_SCENE, LINE, TARGET],
        "Change the saved translation of one line of a scene. Changing a translation the writer wrote asks the writer's approval first (approval_required, nothing changed)."),
    t("translation_read_scene", Translation, Read(l::read_scene), &[IN_SCENE, opt("from_line", Num(0, 0), "The first line to show (default 1).").or(&["fromLine"])],
        "Read a scene line by line for translation: each line's number, its source text and its translation (with who wrote it), and which lines are untranslated. Shows up to 200 lines from 'from_line'."),
    // QA checks.
    t("translation_create_style_check", Qa, Write(l::style_check), &[
        IN_SCENE, QA_LINE, SEVERITY, opt("message", Str, "The finding: what breaks the style guide and how to fix it."),
        opt("check_line_length", Bool, "Also measure the line's translation against the UI settings' line_length_limit (and lines_per_box) and report if it does not fit.").or(&["checkLineLength"])],
        "Record a style QA finding on a scene or one of its lines (severity info, warning or error, and a message). With check_line_length, also measures the line's translation against the UI settings' line_length_limit and lines_per_box and records it if it does not fit (no record when it fits and no message is given)."),
    t("translation_create_consistency_check", Qa, Write(l::consistency_check), &[
        IN_SCENE, QA_LINE, SEVERITY, opt("message", Str, "The finding: what is inconsistent (with the glossary, the bible or other lines)."),
        opt("check_glossary", Bool, "Also check the line's translation against the glossary: every glossary term in the source line should appear translated as the glossary says. Records what is missing (no record when nothing is and no message is given).").or(&["checkGlossary"])],
        "Record a consistency QA finding on a scene or one of its lines (terms, names or facts translated inconsistently; severity info, warning or error, and a message). With check_glossary, also checks the line's translation uses the glossary's translation of every glossary term in its source, and records what is missing."),
    t("translation_create_review_check", Qa, Write(l::review_check), &[IN_SCENE, QA_LINE, SEVERITY, req("message", Str, "The review comment: what is wrong (meaning, tone, naturalness) and a better version.")],
        "Record a review QA finding on a scene or one of its lines: a reviewer's comment on meaning, tone or naturalness (severity info, warning or error, and a message)."),
    // Context documents and status.
    t("contextdoc_list_all", Contextdoc, Read(l::list_docs), &[],
        "List the context documents (reference texts the writer provided: background, previous volumes, notes): id, title, length and opening. Read one with contextdoc_read_doc. Agents read them but never change them."),
    t("contextdoc_read_doc", Contextdoc, Read(l::read_doc), &[req("id", Str, "The document's id (contextdoc_list_all shows ids)."), opt("offset", Num(0, 0), "Where to start reading, in characters (default 0; long documents come in parts of 20000 characters).")],
        "Read a context document by id: its title and text (in parts of 20000 characters: 'offset' reads on)."),
    t("context_read_status", Qa, Read(l::status), &[],
        "A status summary of the story bible: how many entities of each kind, translation progress per scene (translated of total lines) and QA findings by severity and check. A good first call."),
];

/// Register the story-bible tools.
pub fn register(registry: &mut ToolRegistry) {
    for tool in TOOLS {
        #[cfg(not(target_arch = "wasm32"))]
        let parameters = super::args::schema(tool.args);
        #[cfg(target_arch = "wasm32")]
        let parameters = super::schema::embedded_parameters(tool.name);
        let category = match tool.does {
            Lookup(_) => Category::Knowledge,
            _ => Category::Bible,
        };
        let definition = ToolDefinition {
            name: tool.name.into(),
            description: tool.description.into(),
            category,
            reversible: false,
            read_only: matches!(tool.does, ReadEntry | Read(_) | Lookup(_)),
            asynchronous: false,
            parameters,
        };
        registry.add_definition(definition, command);
    }
}

/// The declared arguments of the story-bible tool named `name`.
pub fn declared_args(name: &str) -> Option<&'static [Arg]> {
    tool(name).map(|t| t.args)
}

/// The declared tool named `name`.
pub fn tool(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// A call of a declared tool: the tool and its arguments, parsed (it reads as its arguments).
#[derive(Debug)]
pub struct Call {
    tool: &'static Tool,
    args: Args,
}

impl std::ops::Deref for Call {
    type Target = Args;
    fn deref(&self) -> &Args {
        &self.args
    }
}

impl Command for Call {
    fn execute(self: Box<Self>, cx: &mut EditContext<'_>) -> Out {
        let (a, kind) = (&*self, self.tool.kind);
        match a.tool.does {
            ReadEntry => story::read_entry(cx, kind, a.opt(a.tool.arg(0))),
            CreateEntry => story::create_entry(a, cx),
            Update(field) => story::update_field(a, cx, field),
            DeleteEntry => story::delete_one(cx, kind, a.text(a.tool.arg(0))),
            Read(run) | Lookup(run) | Write(run) => run(a, cx),
        }
    }
}

/// The command factory of every declared tool.
fn command(name: &str, args: Value) -> Result<Box<dyn Command>, ToolError> {
    let tool = tool(name).ok_or_else(|| ToolError::new("unknown_tool", name))?;
    Ok(Box::new(Call {
        tool,
        args: parse(tool.args, args)?,
    }))
}

/// A field's value as text: `(empty)` for an empty one, lists joined with commas, a span as
/// `chars a–b` (with `dash`).
fn show(value: &Value, dash: char) -> String {
    match value {
        _ if is_empty_value(Some(value)) => "(empty)".into(),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
            items.iter().map(text).collect::<Vec<_>>().join(", ")
        }
        // A story span shows a missing end as `null`; a language one only shows whole spans.
        Value::Object(o) if o.contains_key("start") && (dash == '–' || o.contains_key("end")) => {
            let at = |k: &str| o.get(k).unwrap_or(&Value::Null).to_string();
            format!("chars {}{dash}{}", at("start"), at("end"))
        }
        other => other.to_string(),
    }
}

fn join<T: AsRef<str>>(items: impl IntoIterator<Item = T>, by: &str) -> String {
    let items: Vec<T> = items.into_iter().collect();
    items.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(by)
}

/// The items joined with commas, or `none` when there are none.
fn list_or<T: AsRef<str>>(items: &[T], none: &str) -> String {
    match items {
        [] => none.to_string(),
        _ => join(items, ", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_policies_are_the_policy_defaults() {
        for tool in TOOLS {
            let default = crate::policy::default_mode(tool.name);
            assert_eq!(tool.mode(), default, "{}", tool.name);
        }
        assert!(Kind::ALL.iter().all(|k| decl(*k).kind == *k));
    }
}
