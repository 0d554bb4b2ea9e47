//! The agent's memory: validation (a failed call changes nothing), scope visibility, the
//! bedside note, BM25 search ranking, the context block's budget and order, goals, watched
//! entities; the memory tools through `Session::execute`; and a property test over random
//! note operations.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::commands::Origin;
use draftsmith::memory::{
    estimate_tokens, EntityType, GoalPatch, GoalStatus, Memory, MemoryError, NewGoal, NewNote,
    NewWatch, NotePatch, NoteType, Priority, Scope, SearchQuery, BEDSIDE_DEFAULT_TEXT, BEDSIDE_TAG,
    MAX_BEDSIDE_VERSIONS, MAX_NOTE_CHARS,
};
use draftsmith::project::{Chapter, Project};
use draftsmith::session::{Session, ToolCall};
use draftsmith::tools::ToolRegistry;
use draftsmith::{ManualClock, SequentialIds};
use proptest::prelude::*;
use serde_json::{json, Value};

fn ids() -> SequentialIds {
    SequentialIds::new("m")
}

fn note(text: &str, note_type: NoteType) -> NewNote {
    NewNote::new(text, note_type)
}

fn tagged(text: &str, tags: &[&str]) -> NewNote {
    NewNote {
        tags: tags.iter().map(|t| t.to_string()).collect(),
        ..NewNote::new(text, NoteType::Fact)
    }
}

fn global(text: &str) -> NewNote {
    NewNote {
        scope: Scope::Global,
        ..NewNote::new(text, NoteType::Preference)
    }
}

fn write(m: &mut Memory, project: &str, input: NewNote, now: u64, ids: &SequentialIds) -> String {
    m.write_note(project, input, now, ids).unwrap().id.clone()
}

fn hit_ids(m: &Memory, project: &str, query: &SearchQuery) -> Vec<String> {
    m.search(project, query)
        .into_iter()
        .map(|h| h.note.id)
        .collect()
}

/// A memory with a bedside note, a note, a goal and a watched entity.
fn populated() -> (Memory, SequentialIds, String, String) {
    let ids = ids();
    let mut m = Memory::new();
    m.ensure_bedside("p", 10, &ids);
    let note = write(
        &mut m,
        "p",
        tagged("Mara fears the sea.", &["mara"]),
        20,
        &ids,
    );
    let goal = m
        .create_goal(
            "p",
            NewGoal {
                title: "Draft chapter 3".into(),
                ..NewGoal::default()
            },
            30,
            &ids,
        )
        .unwrap()
        .id
        .clone();
    m.watch_entity(
        "p",
        NewWatch {
            name: "Mara".into(),
            entity_type: EntityType::Character,
            reason: "eye colour".into(),
            priority: None,
        },
        40,
        &ids,
    )
    .unwrap();
    (m, ids, note, goal)
}

// ---------------------------------------------------------------------------------------------
// Validation: a failed call changes nothing.
// ---------------------------------------------------------------------------------------------

/// A memory call expected to fail.
type Call<'a> = Box<dyn Fn(&mut Memory) -> MemoryError + 'a>;

#[test]
fn invalid_calls_fail_with_a_clear_message_and_change_nothing() {
    let (mut m, ids, note_id, goal_id) = populated();
    let before = m.clone();
    let bedside = m.bedside("p").unwrap().id.clone();
    let long = "x".repeat(MAX_NOTE_CHARS + 1);
    let many_tags: Vec<&str> = (0..33)
        .map(|i| Box::leak(format!("t{i}").into_boxed_str()) as &str)
        .collect();
    let cases: Vec<(&str, Call, &str, &str)> = vec![
        (
            "empty text",
            Box::new(|m| {
                m.write_note("p", note("", NoteType::Fact), 1, &ids)
                    .unwrap_err()
            }),
            "invalid_args",
            "'text' is empty",
        ),
        (
            "whitespace text",
            Box::new(|m| {
                m.write_note("p", note(" \n\t ", NoteType::Fact), 1, &ids)
                    .unwrap_err()
            }),
            "invalid_args",
            "'text' is empty",
        ),
        (
            "too long",
            Box::new(|m| {
                m.write_note("p", note(&long, NoteType::Fact), 1, &ids)
                    .unwrap_err()
            }),
            "invalid_args",
            "limit of 8000",
        ),
        (
            "importance 0",
            Box::new(|m| {
                let input = NewNote {
                    importance: Some(0),
                    ..note("x", NoteType::Fact)
                };
                m.write_note("p", input, 1, &ids).unwrap_err()
            }),
            "invalid_args",
            "1 (trivia) to 5 (essential), got 0",
        ),
        (
            "importance 6",
            Box::new(|m| {
                let input = NewNote {
                    importance: Some(6),
                    ..note("x", NoteType::Fact)
                };
                m.write_note("p", input, 1, &ids).unwrap_err()
            }),
            "invalid_args",
            "got 6",
        ),
        (
            "empty tag",
            Box::new(|m| {
                m.write_note("p", tagged("x", &["ok", " "]), 1, &ids)
                    .unwrap_err()
            }),
            "invalid_args",
            "tag 2 is empty",
        ),
        (
            "long tag",
            Box::new(|m| {
                let tag = "y".repeat(65);
                m.write_note("p", tagged("x", &[tag.as_str()]), 1, &ids)
                    .unwrap_err()
            }),
            "invalid_args",
            "limit of 64",
        ),
        (
            "too many tags",
            Box::new(|m| {
                m.write_note("p", tagged("x", &many_tags), 1, &ids)
                    .unwrap_err()
            }),
            "invalid_args",
            "at most 32",
        ),
        (
            "reserved tag",
            Box::new(|m| {
                m.write_note("p", tagged("x", &[BEDSIDE_TAG]), 1, &ids)
                    .unwrap_err()
            }),
            "invalid_args",
            "reserved for the bedside note",
        ),
        (
            "update unknown id",
            Box::new(|m| {
                let patch = NotePatch {
                    text: Some("y".into()),
                    ..NotePatch::default()
                };
                m.update_note("no-such-note", patch, 1).unwrap_err()
            }),
            "not_found",
            "no note with id 'no-such-note'",
        ),
        (
            "update with empty text",
            Box::new(|m| {
                let patch = NotePatch {
                    text: Some("   ".into()),
                    importance: Some(5),
                    ..NotePatch::default()
                };
                m.update_note(&note_id, patch, 1).unwrap_err()
            }),
            "invalid_args",
            "'text' is empty",
        ),
        (
            "update with bad importance after good text",
            Box::new(|m| {
                let patch = NotePatch {
                    text: Some("Mara loves the sea.".into()),
                    importance: Some(9),
                    ..NotePatch::default()
                };
                m.update_note(&note_id, patch, 1).unwrap_err()
            }),
            "invalid_args",
            "got 9",
        ),
        (
            "update with bad tags",
            Box::new(|m| {
                let patch = NotePatch {
                    text: Some("changed".into()),
                    tags: Some(vec![String::new()]),
                    ..NotePatch::default()
                };
                m.update_note(&note_id, patch, 1).unwrap_err()
            }),
            "invalid_args",
            "tag 1 is empty",
        ),
        (
            "empty patch",
            Box::new(|m| {
                m.update_note(&note_id, NotePatch::default(), 1)
                    .unwrap_err()
            }),
            "invalid_args",
            "nothing to update",
        ),
        (
            "make the bedside note another type",
            Box::new(|m| {
                let patch = NotePatch {
                    note_type: Some(NoteType::Fact),
                    ..NotePatch::default()
                };
                m.update_note(&bedside, patch, 1).unwrap_err()
            }),
            "invalid_args",
            "its type and tags stay",
        ),
        (
            "delete unknown id",
            Box::new(|m| m.delete_note("m-999", &Origin::User, 1).unwrap_err()),
            "not_found",
            "'m-999'",
        ),
        (
            "delete the bedside note",
            Box::new(|m| m.delete_note(&bedside, &Origin::User, 1).unwrap_err()),
            "invalid_args",
            "cannot be deleted",
        ),
        (
            "goal without title",
            Box::new(|m| m.create_goal("p", NewGoal::default(), 1, &ids).unwrap_err()),
            "invalid_args",
            "'title' is empty",
        ),
        (
            "goal progress 101",
            Box::new(|m| {
                let input = NewGoal {
                    title: "t".into(),
                    progress: Some(101),
                    ..NewGoal::default()
                };
                m.create_goal("p", input, 1, &ids).unwrap_err()
            }),
            "invalid_args",
            "0 to 100, got 101",
        ),
        (
            "update unknown goal",
            Box::new(|m| {
                let patch = GoalPatch {
                    progress: Some(5),
                    ..GoalPatch::default()
                };
                m.update_goal("g-404", patch, 1).unwrap_err()
            }),
            "not_found",
            "no goal with id 'g-404'",
        ),
        (
            "update goal progress 150 with a new title",
            Box::new(|m| {
                let patch = GoalPatch {
                    title: Some("New".into()),
                    progress: Some(150),
                    ..GoalPatch::default()
                };
                m.update_goal(&goal_id, patch, 1).unwrap_err()
            }),
            "invalid_args",
            "got 150",
        ),
        (
            "goal description too long",
            Box::new(|m| {
                let patch = GoalPatch {
                    description: Some(long.clone()),
                    ..GoalPatch::default()
                };
                m.update_goal(&goal_id, patch, 1).unwrap_err()
            }),
            "invalid_args",
            "'description' is 8001 characters",
        ),
        (
            "watch without reason",
            Box::new(|m| {
                let input = NewWatch {
                    name: "Mara".into(),
                    entity_type: EntityType::Character,
                    reason: " ".into(),
                    priority: Some(Priority::High),
                };
                m.watch_entity("p", input, 1, &ids).unwrap_err()
            }),
            "invalid_args",
            "'reason' is empty",
        ),
        (
            "evolve with empty text",
            Box::new(|m| m.evolve_bedside("p", "\n", 1, &ids).unwrap_err()),
            "invalid_args",
            "'text' is empty",
        ),
        (
            "evolve with too long text",
            Box::new(|m| m.evolve_bedside("p", &long, 1, &ids).unwrap_err()),
            "invalid_args",
            "limit of 8000",
        ),
    ];
    for (what, call, code, needle) in cases {
        let err = call(&mut m);
        assert_eq!(err.code(), code, "{what}: {err}");
        let message = err.to_string();
        assert!(
            message.contains(needle),
            "{what}: {message:?} lacks {needle:?}"
        );
        assert_eq!(m, before, "{what} changed the memory");
    }
    // The limit itself is allowed.
    let exact = "z".repeat(MAX_NOTE_CHARS);
    assert!(m
        .write_note("p", note(&exact, NoteType::Fact), 1, &ids)
        .is_ok());
}

#[test]
fn an_evolve_of_a_missing_bedside_note_with_bad_text_does_not_create_it() {
    let mut m = Memory::new();
    assert!(m.evolve_bedside("p", "  ", 1, &ids()).is_err());
    assert_eq!(m, Memory::new());
}

#[test]
fn unknown_ids_get_the_closest_id_suggested() {
    let (mut m, _, note_id, _) = populated();
    let typo = format!("{note_id}9");
    let message = m
        .delete_note(&typo, &Origin::User, 1)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains(&format!("did you mean '{note_id}'")),
        "{message}"
    );
    assert!(message.contains("search_memory"), "{message}");
}

/// A bulk write takes fresh ids even from an id source that starts over (a reload), among
/// the notes held and among its own notes; it is indexed once the index catches up.
#[test]
fn bulk_writes_take_fresh_ids_and_are_indexed_on_catch_up() {
    let mut m = Memory::new();
    let first = m
        .write_notes(
            "p",
            vec![note("The lamp.", NoteType::Fact), global("Short chapters.")],
            1,
            &ids(),
        )
        .unwrap();
    let goal = NewGoal {
        title: "Finish the draft".into(),
        description: None,
        status: None,
        progress: None,
    };
    m.create_goal("p", goal, 1, &ids()).unwrap();
    // The same source again: its first ids are taken by now.
    let again = m
        .write_notes(
            "p",
            (0..5)
                .map(|i| tagged(&format!("Lighthouse note {i}"), &["Sea", "sea"]))
                .collect(),
            2,
            &ids(),
        )
        .unwrap();
    let mut all: Vec<&String> = first.iter().chain(&again).collect();
    all.extend(m.goals.iter().map(|g| &g.id));
    let count = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), count, "{all:?}");
    assert_eq!(m.notes.len(), 7);
    assert_eq!(m.notes[2].tags, vec!["sea"]);
    assert_eq!(m.notes[0].author, Origin::User);
    assert!(!m.is_indexed());
    let query = SearchQuery::text("lighthouse").with_limit(100);
    let unindexed = m.search("p", &query);
    assert_eq!(unindexed.len(), 5);
    m.catch_up_index();
    assert!(m.is_indexed());
    assert_eq!(m.search("p", &query), unindexed);
    // One invalid note: nothing is written, and the error names it.
    let (at, error) = m
        .write_notes(
            "p",
            vec![
                note("Fine.", NoteType::Fact),
                tagged("Bad tag.", &[BEDSIDE_TAG]),
            ],
            3,
            &ids(),
        )
        .unwrap_err();
    assert_eq!(at, 1);
    assert!(error.to_string().contains("reserved"), "{error}");
    assert_eq!(m.notes.len(), 7);
    // Notes set directly, as a load does: their ids are taken too.
    let mut loaded = Memory::new();
    loaded.notes = m.notes.clone();
    let written = loaded
        .write_notes(
            "p",
            vec![note("After the load.", NoteType::Fact)],
            4,
            &ids(),
        )
        .unwrap();
    assert!(
        m.notes.iter().all(|n| n.id != written[0]),
        "{written:?} was taken"
    );
    assert_eq!(loaded.notes.len(), 8);
}

#[test]
fn written_notes_are_normalized() {
    let ids = ids();
    let mut m = Memory::new();
    let n = m
        .write_note(
            "p",
            NewNote {
                text: "  Mara is left-handed.\n".into(),
                note_type: NoteType::Fact,
                scope: Scope::Project,
                tags: vec![" Mara ".into(), "MARA".into(), "Hands".into()],
                importance: None,
            },
            5,
            &ids,
        )
        .unwrap()
        .clone();
    assert_eq!(n.text, "Mara is left-handed.");
    assert_eq!(n.tags, vec!["mara", "hands"]);
    assert_eq!(
        (n.importance, n.version, n.created_ms, n.updated_ms),
        (3, 1, 5, 5)
    );
    assert_eq!(n.project.as_deref(), Some("p"));
    // Serialized field names are camelCase, enums snake_case.
    let wire = serde_json::to_value(&n).unwrap();
    assert_eq!(wire["noteType"], "fact");
    assert_eq!(wire["createdMs"], 5);
    assert_eq!(wire["scope"], "project");
    let back: draftsmith::memory::MemoryNote = serde_json::from_value(wire).unwrap();
    assert_eq!(back, n);
}

#[test]
fn updates_bump_the_version_only_when_something_changes() {
    let (mut m, _, id, _) = populated();
    let patch = NotePatch {
        text: Some("Mara fears deep water.".into()),
        note_type: Some(NoteType::Observation),
        tags: Some(vec!["Mara".into(), "sea".into()]),
        importance: Some(4),
    };
    let n = m.update_note(&id, patch.clone(), 100).unwrap().clone();
    assert_eq!(n.text, "Mara fears deep water.");
    assert_eq!(n.note_type, NoteType::Observation);
    assert_eq!(n.tags, vec!["mara", "sea"]);
    assert_eq!(
        (n.importance, n.version, n.updated_ms, n.created_ms),
        (4, 2, 100, 20)
    );
    let same = m.update_note(&id, patch, 200).unwrap().clone();
    assert_eq!((same.version, same.updated_ms), (2, 100));
    let deleted = m.delete_note(&id, &Origin::User, 300).unwrap().clone();
    assert_eq!(deleted.id, id);
    assert_eq!(deleted.deleted_ms, Some(300));
    assert!(m.visible_notes("p").all(|n| n.id != id));
    assert!(m.update_note(&id, NotePatch::default(), 400).is_err());
}

// ---------------------------------------------------------------------------------------------
// Scope visibility.
// ---------------------------------------------------------------------------------------------

#[test]
fn global_notes_are_seen_from_every_project_project_notes_only_from_theirs() {
    let ids = ids();
    let mut m = Memory::new();
    let g = write(
        &mut m,
        "alpha",
        global("The writer prefers British spelling."),
        1,
        &ids,
    );
    let a = write(
        &mut m,
        "alpha",
        note("Alpha spelling quirk: colour.", NoteType::Fact),
        2,
        &ids,
    );
    let b = write(
        &mut m,
        "beta",
        note("Beta spelling quirk: none.", NoteType::Fact),
        3,
        &ids,
    );
    assert_eq!(m.note(&g).unwrap().project, None);
    let from = |p: &str| {
        let mut found = hit_ids(&m, p, &SearchQuery::text("spelling"));
        found.sort();
        found
    };
    let mut alpha = vec![g.clone(), a.clone()];
    alpha.sort();
    let mut beta = vec![g.clone(), b.clone()];
    beta.sort();
    assert_eq!(from("alpha"), alpha);
    assert_eq!(from("beta"), beta);
    assert_eq!(from("gamma"), vec![g.clone()]);
    // Listing without text follows the same visibility.
    let listed = hit_ids(&m, "beta", &SearchQuery::default());
    assert!(listed.contains(&g) && listed.contains(&b) && !listed.contains(&a));
    // The context block too.
    let block = m.context_block("gamma", "spelling", 10_000);
    assert!(
        block.contains("British spelling") && !block.contains("quirk"),
        "{block}"
    );
}

// ---------------------------------------------------------------------------------------------
// The bedside note.
// ---------------------------------------------------------------------------------------------

#[test]
fn the_bedside_note_is_created_once_and_comes_first_in_the_context_block() {
    let ids = ids();
    let mut m = Memory::new();
    assert!(m.bedside("p").is_none());
    let id = m.ensure_bedside("p", 7, &ids);
    assert_eq!(m.ensure_bedside("p", 8, &ids), id);
    assert_eq!(m.notes.len(), 1);
    let b = m.bedside("p").unwrap();
    assert_eq!(b.id, id);
    assert_eq!(
        (b.note_type, b.scope, b.importance, b.created_ms),
        (NoteType::Plan, Scope::Project, 5, 7)
    );
    assert_eq!(b.tags, vec![BEDSIDE_TAG]);
    assert_eq!(b.text, BEDSIDE_DEFAULT_TEXT);
    // Another project gets its own.
    let other = m.ensure_bedside("q", 9, &ids);
    assert_ne!(other, id);
    assert_eq!(m.bedside("q").unwrap().id, other);

    m.evolve_bedside("p", "Plan: fix the lighthouse scene.", 10, &ids)
        .unwrap();
    write(
        &mut m,
        "p",
        tagged("The lighthouse keeper is Mara's father.", &["lighthouse"]),
        11,
        &ids,
    );
    m.create_goal(
        "p",
        NewGoal {
            title: "Finish act one".into(),
            ..NewGoal::default()
        },
        12,
        &ids,
    )
    .unwrap();
    let block = m.context_block("p", "lighthouse", 2_000);
    let plan = block.find("Plan: fix the lighthouse scene.").unwrap();
    let goal = block.find("Finish act one").unwrap();
    let fact = block.find("keeper is Mara's father").unwrap();
    assert!(block.starts_with("[AGENT MEMORY]\nBedside note"), "{block}");
    assert!(plan < goal && goal < fact, "{block}");
    // The bedside note is not repeated among the notes.
    assert_eq!(block.matches("Plan: fix the lighthouse scene.").count(), 1);
}

#[test]
fn evolving_the_bedside_note_keeps_earlier_versions_in_order() {
    let ids = ids();
    let mut m = Memory::new();
    // Evolving creates the note when it does not exist yet.
    m.evolve_bedside("p", "v2 plan", 100, &ids).unwrap();
    m.evolve_bedside("p", "v3 plan", 200, &ids).unwrap();
    let b = m.evolve_bedside("p", "v4 plan", 300, &ids).unwrap().clone();
    assert_eq!(
        (b.text.as_str(), b.version, b.updated_ms),
        ("v4 plan", 4, 300)
    );
    let earlier: Vec<(&str, u32, u64)> = b
        .previous
        .iter()
        .map(|v| (v.text.as_str(), v.version, v.updated_ms))
        .collect();
    assert_eq!(
        earlier,
        vec![
            (BEDSIDE_DEFAULT_TEXT, 1, 100),
            ("v2 plan", 2, 100),
            ("v3 plan", 3, 200)
        ]
    );
    // The same text again adds no version.
    assert_eq!(
        m.evolve_bedside("p", " v4 plan ", 400, &ids)
            .unwrap()
            .version,
        4
    );
    // At most MAX_BEDSIDE_VERSIONS earlier texts; the oldest go first.
    for i in 5..=60 {
        m.evolve_bedside("p", &format!("v{i} plan"), 1_000 + i, &ids)
            .unwrap();
    }
    let b = m.bedside("p").unwrap();
    assert_eq!(b.version, 60);
    assert_eq!(b.previous.len(), MAX_BEDSIDE_VERSIONS);
    assert_eq!(b.previous.first().unwrap().text, "v10 plan");
    assert_eq!(b.previous.last().unwrap().text, "v59 plan");
    assert!(b
        .previous
        .windows(2)
        .all(|w| w[0].version + 1 == w[1].version));
    assert_eq!(m.notes.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Search ranking.
// ---------------------------------------------------------------------------------------------

/// Notes whose expected order is unambiguous, all in project "p" (plus one global and one
/// of another project).
struct Corpus {
    m: Memory,
    three_times: String,
    once_long: String,
    tagged_high: String,
    tagged_low_new: String,
    tagged_low_old: String,
    untagged: String,
    global_lamp: String,
    other_project: String,
}

fn corpus() -> Corpus {
    let ids = ids();
    let mut m = Memory::new();
    let three_times = write(
        &mut m,
        "p",
        note(
            "The lighthouse beam; the lighthouse stair; the lighthouse door.",
            NoteType::Fact,
        ),
        1,
        &ids,
    );
    let once_long = write(
        &mut m,
        "p",
        note(
            "Mara walked along the harbour wall past nets, gulls, fishing boats and the old \
             customs house, thinking of her brother, until she saw the lighthouse far away \
             across the grey water of the bay in the evening rain.",
            NoteType::Observation,
        ),
        2,
        &ids,
    );
    let tagged_high = write(
        &mut m,
        "p",
        NewNote {
            importance: Some(5),
            ..tagged("Jonas never lies to Mara.", &["jonas", "mara"])
        },
        3,
        &ids,
    );
    let tagged_low_old = write(
        &mut m,
        "p",
        NewNote {
            importance: Some(2),
            ..tagged("Jonas drinks his coffee black.", &["jonas"])
        },
        4,
        &ids,
    );
    let tagged_low_new = write(
        &mut m,
        "p",
        NewNote {
            importance: Some(2),
            ..tagged("Jonas works at the café.", &["Jonas", "cafe"])
        },
        5,
        &ids,
    );
    let untagged = write(
        &mut m,
        "p",
        note("Jonas has a scar over his left eye.", NoteType::Fact),
        6,
        &ids,
    );
    let global_lamp = write(
        &mut m,
        "p",
        global("Always call the lighthouse lamp 'the lamp', never 'the light'."),
        7,
        &ids,
    );
    let other_project = write(
        &mut m,
        "other",
        note(
            "The lighthouse lighthouse lighthouse of another book.",
            NoteType::Fact,
        ),
        8,
        &ids,
    );
    Corpus {
        m,
        three_times,
        once_long,
        tagged_high,
        tagged_low_new,
        tagged_low_old,
        untagged,
        global_lamp,
        other_project,
    }
}

/// A search's top `k` is exactly the first `k` of a longer search (many ties on score,
/// importance and time included: the order is total).
#[test]
fn a_smaller_limit_gives_the_top_of_a_larger_one() {
    let ids = ids();
    let mut m = Memory::new();
    let words = ["lamp", "storm", "keeper", "rope", "bell"];
    for i in 0..200usize {
        let text = (0..1 + i % 4)
            .map(|k| words[(i + k) % words.len()])
            .collect::<Vec<_>>()
            .join(" ");
        let input = NewNote {
            importance: Some(1 + (i % 3) as u8),
            ..tagged(&text, &[words[i % 2]])
        };
        m.write_note("p", input, (i % 5) as u64, &ids).unwrap();
    }
    for query in [
        SearchQuery::text("lamp storm"),
        SearchQuery::text("bell"),
        SearchQuery::tags(["lamp"]),
        SearchQuery::default(),
    ] {
        let all = m.search("p", &query.clone().with_limit(100));
        assert!(all.len() > 20, "{}", all.len());
        for k in [1, 2, 7, 10, 33] {
            let top = m.search("p", &query.clone().with_limit(k));
            assert_eq!(top, all[..k].to_vec(), "{query:?} limit {k}");
        }
    }
}

#[test]
fn text_search_ranks_by_bm25() {
    let c = corpus();
    let hits = c.m.search("p", &SearchQuery::text("lighthouse"));
    let order: Vec<&str> = hits.iter().map(|h| h.note.id.as_str()).collect();
    assert_eq!(order[0], c.three_times, "{hits:#?}");
    assert!(order.contains(&c.once_long.as_str()) && order.contains(&c.global_lamp.as_str()));
    let pos = |id: &str| order.iter().position(|o| *o == id).unwrap();
    assert!(pos(&c.three_times) < pos(&c.once_long));
    assert!(
        pos(&c.global_lamp) < pos(&c.once_long),
        "a short note beats a long one"
    );
    assert!(!order.contains(&c.other_project.as_str()));
    assert!(!order.contains(&c.untagged.as_str()), "no match, no hit");
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(hits.iter().all(|h| h.score > 0.0));
    // Case, plurals and stopwords do not matter.
    assert_eq!(
        hit_ids(&c.m, "p", &SearchQuery::text("THE Lighthouses")),
        hit_ids(&c.m, "p", &SearchQuery::text("lighthouse"))
    );
    // A query of stopwords only finds nothing; a blank one lists everything.
    assert!(c.m.search("p", &SearchQuery::text("the of and")).is_empty());
    assert_eq!(c.m.search("p", &SearchQuery::text("   ")).len(), 7);
}

#[test]
fn rarer_terms_weigh_more_and_tags_count_as_terms() {
    let c = corpus();
    // "jonas" is in four notes, "scar" in one: the scar note wins for "jonas scar".
    assert_eq!(
        hit_ids(&c.m, "p", &SearchQuery::text("jonas scar"))[0],
        c.untagged
    );
    // "cafe" is only a tag of one note (its text says "café"): found through the tag.
    assert_eq!(
        hit_ids(&c.m, "p", &SearchQuery::text("cafe")),
        vec![c.tagged_low_new.clone()]
    );
}

#[test]
fn text_ties_are_broken_by_importance_then_recency() {
    let ids = ids();
    let mut m = Memory::new();
    let old_low = write(&mut m, "p", note("Storm at sea.", NoteType::Fact), 1, &ids);
    let high = write(
        &mut m,
        "p",
        NewNote {
            importance: Some(5),
            ..note("Storm at sea.", NoteType::Fact)
        },
        2,
        &ids,
    );
    let new_low = write(&mut m, "p", note("Storm at sea.", NoteType::Fact), 3, &ids);
    assert_eq!(
        hit_ids(&m, "p", &SearchQuery::text("storm")),
        vec![high, new_low, old_low]
    );
}

#[test]
fn tag_search_returns_every_tagged_note_by_importance_then_recency() {
    let c = corpus();
    let hits = c.m.search("p", &SearchQuery::tags(["Jonas "]));
    let order: Vec<String> = hits.iter().map(|h| h.note.id.clone()).collect();
    assert_eq!(
        order,
        vec![
            c.tagged_high.clone(),
            c.tagged_low_new.clone(),
            c.tagged_low_old.clone()
        ]
    );
    assert!(hits.iter().all(|h| h.score == 0.0));
    assert!(
        !order.contains(&c.untagged),
        "mentioning Jonas is not being tagged jonas"
    );
    // Every tag must be present.
    assert_eq!(
        hit_ids(&c.m, "p", &SearchQuery::tags(["jonas", "mara"])),
        vec![c.tagged_high.clone()]
    );
    assert!(hit_ids(&c.m, "p", &SearchQuery::tags(["jonas", "nobody"])).is_empty());
    // Tags match exactly, not as words.
    assert!(hit_ids(&c.m, "p", &SearchQuery::tags(["jon"])).is_empty());
}

#[test]
fn text_and_tags_filter_by_tags_then_rank_by_bm25() {
    let c = corpus();
    let q = SearchQuery::text("coffee black").with_tags(["jonas"]);
    assert_eq!(hit_ids(&c.m, "p", &q)[0], c.tagged_low_old);
    // The untagged note mentions "eye"; with the tag filter it is excluded.
    let q = SearchQuery::text("eye scar").with_tags(["jonas"]);
    assert!(hit_ids(&c.m, "p", &q).is_empty());
    let q = SearchQuery::text("eye scar");
    assert_eq!(hit_ids(&c.m, "p", &q), vec![c.untagged.clone()]);
}

#[test]
fn scope_filters_select_project_or_global_notes() {
    let c = corpus();
    let global = SearchQuery::text("lighthouse").with_scope(Scope::Global);
    assert_eq!(hit_ids(&c.m, "p", &global), vec![c.global_lamp.clone()]);
    let project = SearchQuery::text("lighthouse").with_scope(Scope::Project);
    let found = hit_ids(&c.m, "p", &project);
    assert_eq!(found, vec![c.three_times.clone(), c.once_long.clone()]);
    // From another project the global note is there, p's notes are not.
    assert_eq!(
        hit_ids(&c.m, "other", &SearchQuery::text("lighthouse")),
        vec![c.other_project.clone(), c.global_lamp.clone()]
    );
    assert_eq!(
        hit_ids(
            &c.m,
            "other",
            &SearchQuery::default().with_scope(Scope::Global)
        ),
        vec![c.global_lamp.clone()]
    );
}

#[test]
fn limits_default_to_ten_and_cap_at_a_hundred() {
    let ids = ids();
    let mut m = Memory::new();
    for i in 0..120 {
        write(
            &mut m,
            "p",
            note(&format!("Lighthouse note {i}."), NoteType::Fact),
            i,
            &ids,
        );
    }
    assert_eq!(m.search("p", &SearchQuery::text("lighthouse")).len(), 10);
    let q = |limit| SearchQuery::text("lighthouse").with_limit(limit);
    assert_eq!(m.search("p", &q(0)).len(), 10);
    assert_eq!(m.search("p", &q(3)).len(), 3);
    assert_eq!(m.search("p", &q(1_000)).len(), 100);
}

// ---------------------------------------------------------------------------------------------
// The context block.
// ---------------------------------------------------------------------------------------------

fn rich_memory() -> Memory {
    let ids = ids();
    let mut m = Memory::new();
    m.evolve_bedside(
        "p",
        "Current focus: chapter 3, the storm. Next: tighten the rescue.",
        1,
        &ids,
    )
    .unwrap();
    for (title, status) in [
        ("Finish the storm chapter", GoalStatus::Active),
        ("Rename the dog", GoalStatus::Completed),
        ("Outline act two", GoalStatus::Active),
    ] {
        m.create_goal(
            "p",
            NewGoal {
                title: title.into(),
                description: Some("Keep it under 4000 words.".into()),
                status: Some(status),
                progress: None,
            },
            2,
            &ids,
        )
        .unwrap();
    }
    for (name, priority) in [
        ("The lamp", Priority::Low),
        ("Mara", Priority::High),
        ("The storm rule", Priority::Medium),
    ] {
        m.watch_entity(
            "p",
            NewWatch {
                name: name.into(),
                entity_type: EntityType::Character,
                reason: "consistency".into(),
                priority: Some(priority),
            },
            3,
            &ids,
        )
        .unwrap();
    }
    for i in 0..30 {
        write(
            &mut m,
            "p",
            note(
                &format!("Filler note number {i} about the harbour."),
                NoteType::Fact,
            ),
            10 + i,
            &ids,
        );
    }
    write(
        &mut m,
        "p",
        NewNote {
            importance: Some(1),
            ..note("The rescue boat is called Osprey.", NoteType::Fact)
        },
        5,
        &ids,
    );
    m
}

#[test]
fn the_context_block_keeps_section_order_and_priority_order() {
    let m = rich_memory();
    let block = m.context_block("p", "write the rescue boat scene", 100_000);
    let at = |s: &str| {
        block
            .find(s)
            .unwrap_or_else(|| panic!("{s:?} missing from {block}"))
    };
    assert!(block.starts_with("[AGENT MEMORY]\n") && block.ends_with("[/AGENT MEMORY]"));
    assert!(at("Bedside note") < at("Active goals:"));
    assert!(at("Active goals:") < at("Watched entities:"));
    assert!(at("Watched entities:") < at("Notes (most relevant"));
    assert!(at("Finish the storm chapter") < at("Outline act two"));
    assert!(
        !block.contains("Rename the dog"),
        "completed goals are left out"
    );
    assert!(at("[high priority] Mara") < at("[medium priority] The storm rule"));
    assert!(at("[medium priority] The storm rule") < at("[low priority] The lamp"));
    // The most relevant note comes first among the notes, despite importance 1.
    let notes = at("Notes (most relevant");
    let osprey = at("Osprey");
    assert!(osprey > notes && osprey < at("Filler note"), "{block}");
    assert_eq!(block.matches("Filler note").count(), 19, "at most 20 notes");
}

#[test]
fn the_context_block_respects_the_budget() {
    let m = rich_memory();
    let full = m.context_block("p", "rescue boat", 100_000);
    let full_tokens = estimate_tokens(&full);
    let mut previous = String::new();
    for budget in (0..=full_tokens + 10).chain([2_000, 100_000]) {
        let block = m.context_block("p", "rescue boat", budget);
        assert!(
            estimate_tokens(&block) <= budget,
            "budget {budget}: {} tokens",
            estimate_tokens(&block)
        );
        if !block.is_empty() {
            assert!(block.starts_with("[AGENT MEMORY]\n") && block.ends_with("[/AGENT MEMORY]"));
            // A larger budget never shows less.
            assert!(block.len() >= previous.len(), "budget {budget}");
        }
        previous = block;
    }
    assert_eq!(m.context_block("p", "rescue boat", 0), "");
    // A tight budget keeps the bedside note (first) and drops the later sections.
    let tight = m.context_block("p", "rescue boat", 60);
    assert!(tight.contains("Current focus: chapter 3"), "{tight}");
    assert!(!tight.contains("Notes (most relevant"), "{tight}");
    // A middle budget has goals and the most relevant note but not all the fillers.
    let middle = m.context_block("p", "rescue boat", 250);
    assert!(middle.contains("Finish the storm chapter"), "{middle}");
    assert!(middle.contains("Osprey"), "{middle}");
    assert!(middle.matches("Filler note").count() < 19, "{middle}");
}

#[test]
fn a_long_bedside_note_is_cut_to_fit() {
    let ids = ids();
    let mut m = Memory::new();
    let plan = "step ".repeat(1_000);
    m.evolve_bedside("p", &plan, 1, &ids).unwrap();
    let block = m.context_block("p", "", 200);
    assert!(estimate_tokens(&block) <= 200);
    assert!(
        block.contains("step step") && block.contains('…'),
        "{block}"
    );
}

// ---------------------------------------------------------------------------------------------
// Goals and watched entities.
// ---------------------------------------------------------------------------------------------

#[test]
fn goals_are_created_and_updated() {
    let ids = ids();
    let mut m = Memory::new();
    let g = m
        .create_goal(
            "p",
            NewGoal {
                title: " Draft chapter 3 ".into(),
                description: None,
                status: None,
                progress: Some(10),
            },
            1,
            &ids,
        )
        .unwrap()
        .clone();
    assert_eq!(g.title, "Draft chapter 3");
    assert_eq!(
        (g.status, g.progress, g.description.as_str()),
        (GoalStatus::Active, 10, "")
    );
    let u = m
        .update_goal(
            &g.id,
            GoalPatch {
                progress: Some(60),
                description: Some("The storm".into()),
                ..GoalPatch::default()
            },
            5,
        )
        .unwrap()
        .clone();
    assert_eq!(
        (u.progress, u.description.as_str(), u.updated_ms),
        (60, "The storm", 5)
    );
    let done = m
        .update_goal(
            &g.id,
            GoalPatch {
                status: Some(GoalStatus::Completed),
                ..GoalPatch::default()
            },
            6,
        )
        .unwrap()
        .clone();
    assert_eq!((done.status, done.progress), (GoalStatus::Completed, 100));
    assert_eq!(m.goals.len(), 1);
    let wire = serde_json::to_value(&done).unwrap();
    assert_eq!(wire["status"], "completed");
    assert_eq!(wire["updatedMs"], 6);
}

#[test]
fn watching_the_same_entity_twice_updates_it() {
    let ids = ids();
    let mut m = Memory::new();
    let watch = |reason: &str, priority, entity_type| NewWatch {
        name: "Mara".into(),
        entity_type,
        reason: reason.into(),
        priority,
    };
    let first = m
        .watch_entity(
            "p",
            watch("eye colour", Some(Priority::High), EntityType::Character),
            1,
            &ids,
        )
        .unwrap()
        .clone();
    let again = m
        .watch_entity(
            "p",
            NewWatch {
                name: " mara ".into(),
                ..watch("eye colour and age", None, EntityType::Character)
            },
            2,
            &ids,
        )
        .unwrap()
        .clone();
    assert_eq!(again.id, first.id);
    assert_eq!(again.reason, "eye colour and age");
    assert_eq!(again.priority, Priority::High, "no priority given keeps it");
    assert_eq!(m.watched.len(), 1);
    m.watch_entity(
        "p",
        watch("x", Some(Priority::Low), EntityType::Character),
        3,
        &ids,
    )
    .unwrap();
    assert_eq!(m.watched[0].priority, Priority::Low);
    // Another type or another project is another entity.
    m.watch_entity("p", watch("the ship", None, EntityType::Item), 4, &ids)
        .unwrap();
    m.watch_entity(
        "q",
        watch("other book", None, EntityType::Character),
        5,
        &ids,
    )
    .unwrap();
    assert_eq!(m.watched.len(), 3);
    assert_eq!(m.watched[1].priority, Priority::Medium);
    assert_eq!(
        serde_json::to_value(EntityType::PlotThread).unwrap(),
        "plot_thread"
    );
}

// ---------------------------------------------------------------------------------------------
// The memory tools through Session::execute.
// ---------------------------------------------------------------------------------------------

struct T {
    s: Session,
    registry: ToolRegistry,
    clock: ManualClock,
    ids: SequentialIds,
}

impl T {
    fn new() -> Self {
        Self {
            s: Session::new(Project::new(
                "p",
                "Test",
                vec![Chapter::new(
                    "c1",
                    "One",
                    "Mara climbed the lighthouse stair.",
                )],
            )),
            registry: ToolRegistry::standard(),
            clock: ManualClock::new(1_000),
            ids: SequentialIds::new("id"),
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.clock.advance(10);
        let out = self.s.execute(
            &self.registry,
            ToolCall {
                id: Some("call-1".into()),
                name: tool.into(),
                args,
            },
            Origin::Agent("editor".into()),
            &self.clock,
            &self.ids,
        );
        assert!(out.edits.is_empty() && !out.ui_changed);
        serde_json::to_value(&out.result).unwrap()
    }

    fn ok(&mut self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args.clone());
        assert_eq!(r["status"], "success", "{tool} {args}: {r}");
        r["data"].clone()
    }

    /// Call, expect an error with `code` whose message contains `needle`, and no change.
    fn fails(&mut self, tool: &str, args: Value, code: &str, needle: &str) {
        let before = self.s.clone();
        let r = self.call(tool, args.clone());
        assert_eq!(r["status"], "error", "{tool} {args}: {r}");
        assert_eq!(r["data"]["code"], code, "{tool} {args}: {r}");
        let message = r["data"]["message"].as_str().unwrap();
        assert!(
            message.contains(needle),
            "{tool} {args}: {message:?} lacks {needle:?}"
        );
        assert_eq!(self.s, before, "{tool} {args} changed the session");
    }
}

#[test]
fn write_search_update_and_delete_notes_through_tools() {
    let mut t = T::new();
    let n = t.ok(
        "write_memory_note",
        json!({"text": "Mara is afraid of the lighthouse.", "type": "fact",
               "topicTags": ["Mara", "lighthouse"], "importance": 4}),
    )["note"]
        .clone();
    assert_eq!(n["noteType"], "fact");
    assert_eq!(n["tags"], json!(["mara", "lighthouse"]));
    assert_eq!(n["importance"], 4);
    assert_eq!(n["project"], "p");
    assert_eq!(n["createdMs"], 1_010);
    assert!(n.get("previous").is_none());
    let id = n["id"].as_str().unwrap().to_string();
    // snake_case spellings, defaults and global scope.
    let g = t.ok(
        "write_memory_note",
        json!({"text": "The writer hates adverbs.", "type": "preference", "scope": "global"}),
    )["note"]
        .clone();
    assert_eq!(
        (
            g["scope"].clone(),
            g["project"].clone(),
            g["importance"].clone()
        ),
        (json!("global"), Value::Null, json!(3))
    );
    t.ok(
        "write_memory_note",
        json!({"text": "Lighthouse lamp is red.", "type": "observation", "topic_tags": ["lamp"]}),
    );

    let found = t.ok("search_memory", json!({"query": "lighthouse"}));
    assert_eq!(found["count"], 2);
    assert_eq!(found["hits"][0]["id"], id.as_str());
    assert!(found["hits"][0]["score"].as_f64().unwrap() > 0.0);
    assert_eq!(
        found["hits"][0]["preview"],
        "Mara is afraid of the lighthouse."
    );
    assert_eq!(found["hits"][0]["type"], "fact");
    let tagged = t.ok("search_memory", json!({"tags": ["LAMP"]}));
    assert_eq!(tagged["count"], 1);
    let global = t.ok("search_memory", json!({"scope": "global"}));
    assert_eq!(global["hits"][0]["id"], g["id"]);
    let limited = t.ok("search_memory", json!({"limit": 1}));
    assert_eq!(limited["count"], 1);
    let none = t.ok("search_memory", json!({"query": "zeppelin"}));
    assert_eq!(none["count"], 0);
    assert!(none["hint"].as_str().unwrap().contains("no note matched"));

    let updated = t.ok(
        "update_memory_note",
        json!({"id": id, "text": "Mara is no longer afraid of the lighthouse.", "importance": 5}),
    )["note"]
        .clone();
    assert_eq!(updated["version"], 2);
    assert_eq!(updated["importance"], 5);
    assert_eq!(updated["tags"], json!(["mara", "lighthouse"]));
    let retagged = t.ok(
        "update_memory_note",
        json!({"id": id, "topic_tags": ["courage"], "type": "observation"}),
    )["note"]
        .clone();
    assert_eq!(retagged["tags"], json!(["courage"]));
    assert_eq!(retagged["noteType"], "observation");

    let deleted = t.ok("delete_memory_note", json!({"id": id}));
    assert_eq!(deleted["deleted"]["id"], id.as_str());
    assert_eq!(deleted["deleted"]["author"], "agent:editor");
    // Soft: the note is kept, deleted, and no longer found.
    assert!(t.s.memory.note(&id).is_some_and(|n| n.is_deleted()));
    assert_eq!(
        t.ok("search_memory", json!({"query": "lighthouse"}))["count"],
        1
    );
    // Memory tools make no history entries.
    assert!(!t.s.history.can_undo());
}

#[test]
fn memory_tools_reject_invalid_arguments_and_change_nothing() {
    let mut t = T::new();
    t.ok("evolve_bedside_note", json!({"text": "Plan A"}));
    let id = t.ok(
        "write_memory_note",
        json!({"text": "A note.", "type": "fact"}),
    )["note"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let goal = t.ok("create_goal", json!({"title": "Goal"}))["goal"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let bedside = t.s.memory.bedside("p").unwrap().id.clone();
    let long = "x".repeat(MAX_NOTE_CHARS + 1);
    let cases = [
        (
            "write_memory_note",
            json!({"text": "x"}),
            "invalid_args",
            "missing required argument 'type'",
        ),
        (
            "write_memory_note",
            json!({"text": "x", "type": "rumour"}),
            "invalid_args",
            "'type' must be one of: fact, observation, plan, preference, issue",
        ),
        (
            "write_memory_note",
            json!({"text": "  ", "type": "fact"}),
            "invalid_args",
            "'text' is empty",
        ),
        (
            "write_memory_note",
            json!({"text": long, "type": "fact"}),
            "invalid_args",
            "limit of 8000",
        ),
        (
            "write_memory_note",
            json!({"text": "x", "type": "fact", "importance": 7}),
            "invalid_args",
            "got 7",
        ),
        (
            "write_memory_note",
            json!({"text": "x", "type": "fact", "importance": 0}),
            "invalid_args",
            "got 0",
        ),
        (
            "write_memory_note",
            json!({"text": "x", "type": "fact", "importance": -2}),
            "invalid_args",
            "'importance'",
        ),
        (
            "write_memory_note",
            json!({"text": "x", "type": "fact", "topicTags": "mara"}),
            "invalid_args",
            "'topicTags' must be an array",
        ),
        (
            "write_memory_note",
            json!({"text": "x", "type": "fact", "topicTags": ["ok", ""]}),
            "invalid_args",
            "tag 2 is empty",
        ),
        (
            "write_memory_note",
            json!({"text": "x", "type": "fact", "scope": "universe"}),
            "invalid_args",
            "'scope' must be one of: project, global",
        ),
        (
            "search_memory",
            json!({"limit": 0}),
            "invalid_args",
            "'limit' must be 1 to 100, got 0",
        ),
        (
            "search_memory",
            json!({"limit": 101}),
            "invalid_args",
            "got 101",
        ),
        (
            "search_memory",
            json!({"scope": "both"}),
            "invalid_args",
            "'scope' must be one of",
        ),
        (
            "update_memory_note",
            json!({"id": "nope", "text": "x"}),
            "not_found",
            "no note with id 'nope'",
        ),
        (
            "update_memory_note",
            json!({"id": id}),
            "invalid_args",
            "nothing to update",
        ),
        (
            "update_memory_note",
            json!({"id": id, "text": "ok", "importance": 6}),
            "invalid_args",
            "got 6",
        ),
        (
            "update_memory_note",
            json!({"id": bedside, "tags": ["x"]}),
            "invalid_args",
            "its type and tags stay",
        ),
        (
            "delete_memory_note",
            json!({}),
            "invalid_args",
            "missing required argument 'id'",
        ),
        (
            "delete_memory_note",
            json!({"id": "nope"}),
            "not_found",
            "'nope'",
        ),
        (
            "delete_memory_note",
            json!({"id": bedside}),
            "invalid_args",
            "cannot be deleted",
        ),
        (
            "create_goal",
            json!({"title": ""}),
            "invalid_args",
            "'title' is empty",
        ),
        (
            "create_goal",
            json!({"title": "t", "progress": 101}),
            "invalid_args",
            "0 to 100, got 101",
        ),
        (
            "create_goal",
            json!({"title": "t", "status": "done"}),
            "invalid_args",
            "'status' must be one of: active, completed, paused, abandoned",
        ),
        (
            "update_goal",
            json!({"id": "nope", "progress": 1}),
            "not_found",
            "no goal with id 'nope'",
        ),
        (
            "update_goal",
            json!({"id": goal, "title": "ok", "progress": 300}),
            "invalid_args",
            "got 300",
        ),
        (
            "update_goal",
            json!({"id": goal}),
            "invalid_args",
            "nothing to update",
        ),
        (
            "watch_entity",
            json!({"name": "Mara", "type": "person", "reason": "r"}),
            "invalid_args",
            "'type' must be one of: character, item, rule, location, plot_thread",
        ),
        (
            "watch_entity",
            json!({"name": "Mara", "type": "character"}),
            "invalid_args",
            "missing required argument 'reason'",
        ),
        (
            "watch_entity",
            json!({"name": " ", "type": "character", "reason": "r"}),
            "invalid_args",
            "'name' is empty",
        ),
        (
            "watch_entity",
            json!({"name": "M", "type": "item", "reason": "r", "priority": "urgent"}),
            "invalid_args",
            "'priority' must be one of: low, medium, high",
        ),
        (
            "evolve_bedside_note",
            json!({"text": ""}),
            "invalid_args",
            "'text' is empty",
        ),
        (
            "evolve_bedside_note",
            json!({"text": long}),
            "invalid_args",
            "limit of 8000",
        ),
    ];
    for (tool, args, code, needle) in cases {
        t.fails(tool, args, code, needle);
    }
}

#[test]
fn notes_and_goals_of_other_projects_are_invisible_to_tools() {
    let mut t = T::new();
    let ids = SequentialIds::new("x");
    let foreign = write(
        &mut t.s.memory,
        "other",
        note("Secret of another book.", NoteType::Fact),
        1,
        &ids,
    );
    let foreign_goal =
        t.s.memory
            .create_goal(
                "other",
                NewGoal {
                    title: "Theirs".into(),
                    ..NewGoal::default()
                },
                1,
                &ids,
            )
            .unwrap()
            .id
            .clone();
    t.fails(
        "update_memory_note",
        json!({"id": foreign, "text": "mine"}),
        "not_found",
        "in this project's memory",
    );
    t.fails(
        "delete_memory_note",
        json!({"id": foreign}),
        "not_found",
        "in this project's memory",
    );
    t.fails(
        "update_goal",
        json!({"id": foreign_goal, "progress": 5}),
        "not_found",
        "in this project",
    );
    assert_eq!(
        t.ok("search_memory", json!({"query": "secret"}))["count"],
        0
    );
}

#[test]
fn goals_entities_and_the_bedside_note_through_tools() {
    let mut t = T::new();
    let goal = t.ok(
        "create_goal",
        json!({"title": "Finish chapter 1", "description": "The stair scene", "progress": 20}),
    )["goal"]
        .clone();
    assert_eq!(goal["status"], "active");
    assert_eq!(goal["progress"], 20);
    assert_eq!(goal["project"], "p");
    let id = goal["id"].as_str().unwrap();
    let done = t.ok("update_goal", json!({"id": id, "status": "completed"}))["goal"].clone();
    assert_eq!(
        (done["status"].clone(), done["progress"].clone()),
        (json!("completed"), json!(100))
    );
    let paused = t.ok(
        "update_goal",
        json!({"id": id, "status": "paused", "progress": 50, "title": "Chapter 1"}),
    )["goal"]
        .clone();
    assert_eq!(paused["title"], "Chapter 1");
    assert_eq!(paused["progress"], 50);

    let e = t.ok(
        "watch_entity",
        json!({"name": "Mara", "type": "character", "reason": "eye colour"}),
    )["entity"]
        .clone();
    assert_eq!(e["priority"], "medium");
    assert_eq!(e["entityType"], "character");
    let again = t.ok(
        "watch_entity",
        json!({"name": "MARA", "type": "character", "reason": "eye colour, age", "priority": "high"}),
    )["entity"]
        .clone();
    assert_eq!(again["id"], e["id"]);
    assert_eq!(again["priority"], "high");
    t.ok(
        "watch_entity",
        json!({"name": "The lost letter", "type": "plot_thread", "reason": "must be found by ch. 9"}),
    );
    assert_eq!(t.s.memory.watched.len(), 2);

    let b1 = t.ok(
        "evolve_bedside_note",
        json!({"text": "Plan: finish the stair."}),
    )["note"]
        .clone();
    assert_eq!(b1["version"], 2);
    assert_eq!(b1["previousVersions"], 1);
    assert_eq!(b1["tags"], json!([BEDSIDE_TAG]));
    let b2 = t.ok("evolve_bedside_note", json!({"text": "Plan: the storm."}))["note"].clone();
    assert_eq!(b2["id"], b1["id"]);
    assert_eq!(b2["version"], 3);
    let texts: Vec<&str> =
        t.s.memory
            .bedside("p")
            .unwrap()
            .previous
            .iter()
            .map(|v| v.text.as_str())
            .collect();
    assert_eq!(texts, vec![BEDSIDE_DEFAULT_TEXT, "Plan: finish the stair."]);
    let block = t.s.memory.context_block("p", "storm", 1_000);
    assert!(
        block.contains("Plan: the storm.") && block.contains("[high priority] Mara"),
        "{block}"
    );
    assert!(
        !block.contains("Chapter 1"),
        "paused goals are not shown: {block}"
    );
}

#[test]
fn a_session_can_start_with_a_loaded_memory() {
    let ids = ids();
    let mut memory = Memory::new();
    memory.ensure_bedside("p", 1, &ids);
    let json = serde_json::to_string(&memory).unwrap();
    let loaded: Memory = serde_json::from_str(&json).unwrap();
    let s = Session::with_memory(Project::new("p", "P", vec![]), loaded);
    assert_eq!(s.memory, memory);
    assert!(Session::new(Project::new("p", "P", vec![]))
        .memory
        .notes
        .is_empty());
}

// ---------------------------------------------------------------------------------------------
// Property test: random note operations.
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    Write {
        text: String,
        global: bool,
        tags: Vec<String>,
        importance: Option<u8>,
    },
    /// Several notes in one `write_notes` (all or none), then the index catches up.
    WriteMany {
        notes: Vec<(String, bool, Vec<String>, Option<u8>)>,
    },
    Update {
        pick: usize,
        text: Option<String>,
        tags: Option<Vec<String>>,
        importance: Option<u8>,
    },
    Delete {
        pick: usize,
    },
    Restore {
        pick: usize,
    },
    /// Time passes (days), then the expired deleted notes are purged.
    Purge {
        days: u64,
    },
    DeleteBedside,
    Evolve {
        text: String,
    },
    Search {
        text: String,
    },
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,30}",
        Just(String::new()),
        Just("   ".to_string()),
        "\\PC{0,20}",
        Just("lighthouse lamp storm".to_string()),
    ]
}

fn any_tags() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        prop_oneof![
            "[a-zA-Z ]{0,8}",
            Just(BEDSIDE_TAG.to_string()),
            Just("x".repeat(70)),
        ],
        0..5,
    )
}

fn any_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any_text(), any::<bool>(), any_tags(), prop::option::of(0u8..8))
            .prop_map(|(text, global, tags, importance)| Op::Write { text, global, tags, importance }),
        2 => prop::collection::vec((any_text(), any::<bool>(), any_tags(), prop::option::of(0u8..8)), 0..6)
            .prop_map(|notes| Op::WriteMany { notes }),
        3 => (any::<usize>(), prop::option::of(any_text()), prop::option::of(any_tags()), prop::option::of(0u8..8))
            .prop_map(|(pick, text, tags, importance)| Op::Update { pick, text, tags, importance }),
        2 => any::<usize>().prop_map(|pick| Op::Delete { pick }),
        1 => any::<usize>().prop_map(|pick| Op::Restore { pick }),
        1 => (0u64..40).prop_map(|days| Op::Purge { days }),
        1 => Just(Op::DeleteBedside),
        1 => any_text().prop_map(|text| Op::Evolve { text }),
        1 => any_text().prop_map(|text| Op::Search { text }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_note_operations_keep_the_invariants(ops in prop::collection::vec(any_op(), 0..40)) {
        let ids = SequentialIds::new("n");
        let mut m = Memory::new();
        let bedside = m.ensure_bedside("p", 0, &ids);
        let day = 86_400_000u64;
        let mut clock = 0u64;
        for op in ops {
            clock += 1;
            let now = clock;
            let before = m.clone();
            // A note id: an existing one (the bedside note included) or a missing one.
            let pick_id = |pick: usize| {
                let n = m.notes.len();
                if pick % (n + 1) == n { "missing".to_string() } else { m.notes[pick % (n + 1)].id.clone() }
            };
            let failed = match op {
                Op::Write { text, global, tags, importance } => {
                    let input = NewNote {
                        text,
                        note_type: NoteType::Fact,
                        scope: if global { Scope::Global } else { Scope::Project },
                        tags,
                        importance,
                    };
                    m.write_note("p", input, now, &ids).is_err()
                }
                Op::WriteMany { notes } => {
                    let inputs: Vec<NewNote> = notes
                        .into_iter()
                        .map(|(text, global, tags, importance)| NewNote {
                            text,
                            note_type: NoteType::Observation,
                            scope: if global { Scope::Global } else { Scope::Project },
                            tags,
                            importance,
                        })
                        .collect();
                    // What writing them one by one would do, on a copy.
                    let mut one_by_one = m.clone();
                    let singly: Result<Vec<String>, usize> = inputs
                        .iter()
                        .enumerate()
                        .map(|(i, n)| {
                            one_by_one
                                .write_note("p", n.clone(), now, &SequentialIds::new("copy"))
                                .map(|w| w.text.clone())
                                .map_err(|_| i)
                        })
                        .collect();
                    let count = inputs.len();
                    match m.write_notes("p", inputs, now, &ids) {
                        Ok(written) => {
                            prop_assert_eq!(written.len(), count);
                            let texts: Vec<String> =
                                m.notes[m.notes.len() - count..].iter().map(|n| n.text.clone()).collect();
                            prop_assert_eq!(Ok(texts), singly);
                            let fresh: Vec<&str> =
                                m.notes[m.notes.len() - count..].iter().map(|n| n.id.as_str()).collect();
                            prop_assert_eq!(fresh, written.iter().map(String::as_str).collect::<Vec<_>>());
                            // Searches before the index catches up find what they find after.
                            let query = SearchQuery::text("lighthouse lamp storm").with_limit(100);
                            let before_index = m.search("p", &query);
                            m.catch_up_index();
                            prop_assert_eq!(m.search("p", &query), before_index);
                            false
                        }
                        Err((at, _)) => {
                            // The first invalid note is named, as writing one by one finds it.
                            prop_assert_eq!(Err(at), singly.map(|_| ()));
                            true
                        }
                    }
                }
                Op::Update { pick, text, tags, importance } => {
                    let id = pick_id(pick);
                    let patch = NotePatch { text, note_type: None, tags, importance };
                    m.update_note(&id, patch, now).is_err()
                }
                Op::Delete { pick } => {
                    let id = pick_id(pick);
                    m.delete_note(&id, &Origin::User, now).is_err()
                }
                Op::Restore { pick } => {
                    let id = pick_id(pick);
                    m.restore_note(&id, now).is_err()
                }
                Op::Purge { days } => {
                    clock += days * day;
                    let purged = m.purge_expired(clock);
                    // Exactly the notes deleted 30 days ago or more went.
                    let exact = before.notes.iter().all(|n| {
                        let gone = purged.contains(&n.id);
                        gone == n.deleted_ms.is_some_and(|d| clock >= d + 30 * day)
                    });
                    prop_assert!(exact, "purged {:?}", purged);
                    false
                }
                Op::DeleteBedside => {
                    prop_assert!(m.delete_note(&bedside, &Origin::User, now).is_err());
                    true
                }
                Op::Evolve { text } => m.evolve_bedside("p", &text, now, &ids).is_err(),
                Op::Search { text } => {
                    let hits = m.search("p", &SearchQuery::text(text));
                    prop_assert!(hits.len() <= 10);
                    prop_assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
                    false
                }
            };
            if failed {
                prop_assert_eq!(&m, &before, "a failed call changed the memory");
            }
            let mut seen: Vec<&str> = m.notes.iter().map(|n| n.id.as_str()).collect();
            let count = seen.len();
            seen.sort_unstable();
            seen.dedup();
            prop_assert_eq!(seen.len(), count, "duplicate ids");
            prop_assert_eq!(m.bedside("p").map(|b| b.id.as_str()), Some(bedside.as_str()));
            prop_assert_eq!(m.notes.iter().filter(|n| n.is_bedside()).count(), 1);
            for n in &m.notes {
                prop_assert!(!n.text.trim().is_empty() && n.text.chars().count() <= MAX_NOTE_CHARS);
                prop_assert!((1..=5).contains(&n.importance));
                prop_assert!(n.tags.iter().all(|t| !t.is_empty() && t.chars().count() <= 64 && *t == t.to_lowercase()));
                prop_assert_eq!(n.project.is_none(), n.scope == Scope::Global);
            }
            let block = m.context_block("p", "lighthouse", 200);
            prop_assert!(estimate_tokens(&block) <= 200);
            // Deleted notes show nowhere: not in search, not in the context block.
            let everything = m.search("p", &SearchQuery::default().with_limit(100));
            prop_assert!(everything.iter().all(|h| !h.note.is_deleted()));
            let big = m.context_block("p", "lighthouse lamp storm", 100_000);
            for n in m.notes.iter().filter(|n| n.is_deleted()) {
                prop_assert!(!big.contains(&format!("[{}]", n.id)), "deleted note {} in {}", n.id, big);
            }
            // The index stays current, and searching with it finds what reading every note
            // (a deserialized copy has no index) finds.
            prop_assert!(m.is_indexed());
            let copy: Memory = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
            prop_assert!(copy.notes.len() < 2 || !copy.is_indexed());
            for q in ["lighthouse lamp", "storm", "a b c d e f g h i j k"] {
                let query = SearchQuery::text(q).with_limit(100);
                prop_assert_eq!(m.search("p", &query), copy.search("p", &query));
            }
        }
    }
}

#[test]
fn the_search_index_follows_direct_changes_and_reloads() {
    let c = corpus();
    let mut m = c.m.clone();
    let query = SearchQuery::text("lighthouse jonas").with_limit(100);
    let expected = m.search("p", &query);
    assert!(m.is_indexed());
    // Deserialized: no index, same results; reindexed: indexed again.
    let mut loaded: Memory = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
    assert!(!loaded.is_indexed());
    assert_eq!(loaded.search("p", &query), expected);
    loaded.reindex();
    assert!(loaded.is_indexed());
    assert_eq!(loaded.search("p", &query), expected);
    let s = Session::with_memory(Project::new("p", "P", vec![]), loaded.clone());
    assert!(s.memory.is_indexed());
    // Direct changes: the changed note is read from its text until the next write.
    m.notes.swap(0, 3);
    m.notes.remove(5);
    m.notes[1].text = "Jonas jonas JONAS.".into();
    m.notes[1].version += 1;
    assert!(!m.is_indexed());
    let direct = m.search("p", &SearchQuery::text("jonas"));
    assert_eq!(direct[0].note.id, m.notes[1].id, "{direct:#?}");
    // Writes through methods keep working on a partly stale index.
    m.write_note(
        "p",
        note("A lighthouse, late.", NoteType::Fact),
        99,
        &SequentialIds::new("late"),
    )
    .unwrap();
    let id = m.notes[2].id.clone();
    m.update_note(
        &id,
        NotePatch {
            text: Some("Jonas at the lighthouse.".into()),
            ..NotePatch::default()
        },
        100,
    )
    .unwrap();
    let mut fresh = m.clone();
    fresh.reindex();
    assert!(fresh.is_indexed());
    assert_eq!(m.search("p", &query), fresh.search("p", &query));
}

#[test]
fn update_memory_note_edits_the_bedside_note_under_the_author_rules_keeping_versions() {
    let mut t = T::new();
    t.ok("evolve_bedside_note", json!({"text": "Plan A"}));
    let bedside = t.s.memory.bedside("p").unwrap().id.clone();
    // An agent's bedside note: an agent changes it at once; the old text is a version.
    let r = t.ok(
        "update_memory_note",
        json!({"id": bedside, "text": "Plan B: the storm scene first.", "importance": 4}),
    );
    assert_eq!(r["note"]["text"], "Plan B: the storm scene first.", "{r}");
    let b = t.s.memory.bedside("p").unwrap().clone();
    assert_eq!(b.importance, 4);
    let texts: Vec<&str> = b.previous.iter().map(|v| v.text.as_str()).collect();
    assert_eq!(*texts.last().unwrap(), "Plan A");
    assert!(b.is_bedside(), "still the bedside note");
    // The writer rewrites it: it becomes the writer's, and an agent now needs approval.
    t.clock.advance(10);
    let out = t.s.execute(
        &t.registry,
        ToolCall {
            id: Some("w1".into()),
            name: "update_memory_note".into(),
            args: json!({"id": bedside, "text": "Writer's plan: finish chapter 3."}),
        },
        Origin::User,
        &t.clock,
        &t.ids,
    );
    assert!(out.result.is_success(), "{:?}", out.result);
    assert_eq!(t.s.memory.bedside("p").unwrap().author, Origin::User);
    t.fails(
        "update_memory_note",
        json!({"id": bedside, "text": "Agent's plan."}),
        "approval_required",
        "",
    );
    let b = t.s.memory.bedside("p").unwrap();
    assert_eq!(b.text, "Writer's plan: finish chapter 3.");
    let texts: Vec<&str> = b.previous.iter().map(|v| v.text.as_str()).collect();
    assert_eq!(
        texts[texts.len() - 2..],
        ["Plan A", "Plan B: the storm scene first."]
    );
}
