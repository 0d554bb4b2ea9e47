//! The `data/` sandbox: a corpus of hostile paths (public path-traversal payload lists plus
//! our own, `tests/data/traversal.txt`, plus control characters added here) is refused with
//! `security` by every file tool, and nothing of the project changes.
#![cfg(not(target_arch = "wasm32"))]

use std::rc::Rc;

use draftsmith::commands::Origin;
use draftsmith::core::Env;
use draftsmith::project::{Chapter, Project};
use draftsmith::session::{Session, ToolCall};
use draftsmith::store::{MemoryStore, Store, Table};
use draftsmith::tools::ToolRegistry;
use draftsmith::{Core, ManualClock, RecordingSink, SequentialIds};
use futures::executor::block_on;
use serde_json::{json, Value};

const CORPUS: &str = include_str!("data/traversal.txt");

/// Hostile paths with characters the data file cannot hold.
const CONTROL: &[&str] = &[
    "\0",
    "plans/x\0.md",
    "plans/x.md\0.txt",
    "../\0/etc/passwd",
    "plans/\n/x",
    "plans/x\r.md",
    "plans/\tx.md",
    "plans/x\u{7f}.md",
    "plans/\u{1b}[31mx.md",
    "plans/x\u{85}.md",
    "notes/\u{8}\u{8}\u{8}x",
    "manuscripts/01.md\0",
];

/// Every payload of the corpus, as written.
fn corpus() -> Vec<String> {
    let mut paths: Vec<String> = CORPUS
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(str::to_string)
        .collect();
    paths.extend(CONTROL.iter().map(|s| s.to_string()));
    paths
}

/// Whether a payload holds something hostile besides where it points (so that putting
/// `plans/` before it must not make it acceptable). Test-owned, independent of the
/// sandbox's own rules.
fn hostile_beyond_folder(payload: &str) -> bool {
    let body = payload.trim_start_matches('/');
    [
        "..", "%", "\\", ":", "//", "/.", "~", "$", "`", "|", ";", "&", "<", ">", "*", "?", "\"",
        "'",
    ]
    .iter()
    .any(|m| body.contains(m))
        || body.starts_with('.')
        || body.chars().any(|c| !c.is_ascii() || c.is_control())
        || body.ends_with(' ')
        || body.len() > 240
}

/// The corpus with its `plans/`-prefixed variants.
fn all_hostile() -> Vec<String> {
    let mut all = corpus();
    let prefixed: Vec<String> = all
        .iter()
        .filter(|p| hostile_beyond_folder(p))
        .map(|p| format!("plans/{}", p.trim_start_matches('/')))
        .collect();
    all.extend(prefixed);
    all.sort();
    all.dedup();
    all
}

/// The five calls that each take the path.
fn calls_with(path: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("read_file", json!({"path": path})),
        ("write_file", json!({"path": path, "content": "pwned"})),
        (
            "edit_file",
            json!({"path": path, "search_text": "dark", "replace_text": "pwned"}),
        ),
        ("list_files", json!({"directory": path})),
        ("search_code", json!({"query": "dark", "directory": path})),
    ]
}

fn session() -> Session {
    let mut s = Session::new(Project::new(
        "p",
        "Lighthouse",
        vec![
            Chapter::new(
                "c1",
                "The Stair",
                "Mara climbed the stair. The lamp was dark.",
            ),
            Chapter::new("c2", "Morning", "Morning came grey."),
        ],
    ));
    let registry = ToolRegistry::standard();
    let clock = ManualClock::new(1_000);
    let ids = SequentialIds::new("setup");
    for (tool, args, origin) in [
        (
            "write_file",
            json!({"path": "plans/outline.md", "content": "Act one: the lamp is dark."}),
            Origin::Agent("architect".into()),
        ),
        (
            "write_file",
            json!({"path": "notes/ideas/sea.md", "content": "The sea is dark."}),
            Origin::User,
        ),
        (
            "write_file",
            json!({"path": "bible/character/mara.json", "content": "{\"name_src\": \"Mara\", \"notes\": \"Fears the dark.\"}"}),
            Origin::User,
        ),
        (
            "update_manuscript",
            json!({"searchText": "grey", "replacementText": "gray", "chapter": "2"}),
            Origin::Agent("editor".into()),
        ),
    ] {
        let out = s.execute(
            &registry,
            ToolCall {
                id: None,
                name: tool.into(),
                args,
            },
            origin,
            &clock,
            &ids,
        );
        assert!(out.result.is_success(), "{tool}: {:?}", out.result);
    }
    s
}

#[test]
fn the_corpus_is_large_and_public() {
    let corpus = corpus();
    assert!(corpus.len() >= 150, "{} payloads", corpus.len());
    assert!(CORPUS.contains("PayloadsAllTheThings"));
    assert!(CORPUS.contains("SecLists"));
    // The public lists' classics are there.
    for classic in [
        "../../../etc/passwd",
        "%2e%2e%2f%2e%2e%2f%65%74%63%2f%70%61%73%73%77%64",
        "..%c0%af../..%c0%af../..%c0%af../..%c0%af../..%c0%af../..%c0%af../boot.ini",
        "C:\\boot.ini",
        "/%25c0%25ae%25c0%25ae/%25c0%25ae%25c0%25ae/etc/passwd",
    ] {
        assert!(corpus.iter().any(|p| p == classic), "{classic}");
    }
}

#[test]
fn every_tool_refuses_every_hostile_path_and_nothing_changes() {
    let mut s = session();
    let before = s.clone();
    let registry = ToolRegistry::standard();
    let clock = ManualClock::new(50_000);
    let ids = SequentialIds::new("attack");
    let hostile = all_hostile();
    assert!(hostile.len() > corpus().len(), "prefixed variants added");
    let mut refused = 0;
    let mut rules = std::collections::BTreeSet::new();
    for path in &hostile {
        for (tool, args) in calls_with(path) {
            let out = s.execute(
                &registry,
                ToolCall {
                    id: Some("x".into()),
                    name: tool.into(),
                    args,
                },
                Origin::Agent("intruder".into()),
                &clock,
                &ids,
            );
            let r = serde_json::to_value(&out.result).unwrap();
            assert_eq!(r["status"], "error", "{tool} {path:?} -> {r}");
            assert_eq!(r["data"]["code"], "security", "{tool} {path:?} -> {r}");
            let rule = r["data"]["details"]["rule"].as_str().unwrap().to_string();
            let message = r["data"]["message"].as_str().unwrap();
            assert!(message.starts_with("SecurityError"), "{message}");
            assert!(
                message.contains(&rule),
                "the message names the rule: {message}"
            );
            assert!(out.edits.is_empty() && out.files.is_empty() && out.bible.is_empty());
            rules.insert(rule);
            refused += 1;
        }
    }
    assert_eq!(refused, hostile.len() * 5);
    // Chapters, history, bible, free files, memory and UI state are exactly as before.
    assert_eq!(s, before);
    // Many rules did the refusing, not one catch-all.
    for rule in [
        "dot_segment",
        "percent_encoding",
        "backslash",
        "absolute_path",
        "drive_letter",
        "lookalike_character",
        "forbidden_character",
        "control_character",
        "outside_data",
        "hidden_name",
        "empty_segment",
        "too_long",
        "name_edge",
    ] {
        assert!(rules.contains(rule), "{rule} never fired: {rules:?}");
    }
}

#[test]
fn the_same_paths_are_refused_by_the_core_and_nothing_is_stored_but_the_audit() {
    let store = Rc::new(MemoryStore::new());
    let core = Core::new(Env {
        clock: Rc::new(ManualClock::new(1_000)),
        ids: Rc::new(SequentialIds::new("id")),
        decoder: Rc::new(draftsmith::env::EncodingRsDecoder),
        events: Rc::new(RecordingSink::default()),
        store: store.clone(),
    });
    let send = |kind: &str, params: Value| -> Value {
        let text = json!({"id": 1, "type": kind, "params": params}).to_string();
        serde_json::from_str(&block_on(core.handle_text(&text))).unwrap()
    };
    let r = send(
        "create_project",
        json!({"name": "L", "chapters": [{"title": "One", "text": "It was dark."}]}),
    );
    assert_eq!(r["ok"], true);
    let r = send(
        "execute",
        json!({"tool": "write_file", "args": {"path": "plans/a.md", "content": "x"}, "origin": "agent:a"}),
    );
    assert_eq!(r["result"]["status"], "success", "{r}");
    let dump = |store: &MemoryStore| -> Vec<(Table, Vec<Value>)> {
        Table::ALL
            .iter()
            .filter(|t| **t != Table::Audit)
            .map(|t| (*t, block_on(store.get_all(*t)).unwrap()))
            .collect()
    };
    let before = dump(&store);
    let audits = store.len(Table::Audit);
    let hostile: Vec<String> = all_hostile().into_iter().step_by(7).collect();
    for path in &hostile {
        for (tool, args) in calls_with(path) {
            let r = send(
                "execute",
                json!({"tool": tool, "args": args, "origin": "agent:intruder"}),
            );
            assert_eq!(
                r["result"]["data"]["code"], "security",
                "{tool} {path:?} {r}"
            );
        }
    }
    assert_eq!(dump(&store), before);
    assert_eq!(store.len(Table::Audit), audits + hostile.len() * 5);
}

#[test]
fn plain_paths_inside_are_accepted() {
    // The sandbox is strict, not closed: what a writer would name plainly works.
    let mut s = session();
    let registry = ToolRegistry::standard();
    let clock = ManualClock::new(60_000);
    let ids = SequentialIds::new("ok");
    for path in [
        "plans/outline.md",
        "data/plans/outline.md",
        "notes/ideas/sea.md",
        "plans/Book One/act 1.md",
        "notes/café-noël.md",
        "notes/Мара.md",
        "plans/v1.2_final-draft.txt",
    ] {
        let out = s.execute(
            &registry,
            ToolCall {
                id: None,
                name: "write_file".into(),
                args: json!({"path": path, "content": "fine"}),
            },
            Origin::Agent("architect".into()),
            &clock,
            &ids,
        );
        assert!(out.result.is_success(), "{path}: {:?}", out.result);
    }
}

mod props {
    use draftsmith::files::diff::diff;
    use draftsmith::files::path::{resolve, DataPath, DirPath, Want};
    use proptest::prelude::*;

    /// Path-ish strings: separators, dots, encodings, look-alikes, folders and letters.
    fn pathish() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "/",
            "/",
            ".",
            "..",
            "%2e",
            "%2f",
            "%25",
            "\\",
            ":",
            "C:",
            "~",
            " ",
            "\0",
            "\n",
            "\u{FF0E}",
            "\u{FF0F}",
            "\u{2215}",
            "\u{2024}",
            "\u{200B}",
            "data/",
            "plans",
            "notes",
            "manuscripts",
            "bible",
            "character",
            "01",
            "-x",
            ".md",
            ".json",
            "a",
            "é",
            "Мара",
        ]);
        prop::collection::vec(pieces, 0..12).prop_map(|v| v.concat())
    }

    /// The path a resolution stands for, as segments under data/.
    fn segments(at: &DataPath) -> Vec<String> {
        match at {
            DataPath::Dir(DirPath::Root) => vec![],
            DataPath::Dir(DirPath::Manuscripts) | DataPath::Manuscript { .. } => {
                vec!["manuscripts".into()]
            }
            DataPath::Dir(DirPath::Bible) => vec!["bible".into()],
            DataPath::Dir(DirPath::BibleKind(kind)) => vec!["bible".into(), kind.to_string()],
            DataPath::Bible { kind, id } => vec!["bible".into(), kind.to_string(), id.clone()],
            DataPath::Dir(DirPath::Free(path)) | DataPath::Free { path } => {
                path.split('/').map(str::to_string).collect()
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Whatever is accepted stays plainly inside data/: no dot segments, no empty
        /// segments, no separators or encodings left in a name, and under one of the four
        /// folders.
        #[test]
        fn accepted_paths_stay_inside(raw in pathish(), want in prop::sample::select(vec![Want::File, Want::Dir, Want::Any])) {
            if let Ok(at) = resolve(&raw, want) {
                let segs = segments(&at);
                if let Some(first) = segs.first() {
                    prop_assert!(["manuscripts", "bible", "plans", "notes"].contains(&first.as_str()), "{raw:?} -> {at:?}");
                }
                for seg in &segs {
                    prop_assert!(!seg.is_empty() && !seg.chars().all(|c| c == '.'), "{raw:?} -> {at:?}");
                    prop_assert!(!seg.starts_with('.'), "{raw:?}");
                    prop_assert!(!seg.contains(['%', '\\', ':', '~', '\0', '\n', '/']), "{raw:?} -> {at:?}");
                    prop_assert!(!seg.contains(['\u{FF0E}', '\u{FF0F}', '\u{2215}', '\u{2024}', '\u{200B}']), "{raw:?}");
                }
                prop_assert!(!raw.contains(['%', '\\', '\0', '\n', '~']), "{raw:?} accepted");
                prop_assert!(!raw.starts_with('/'), "{raw:?} accepted");
            }
        }

        /// Writing a whole text lands as a change that gives exactly that text, and is no
        /// larger than the one replacement that made it.
        #[test]
        fn a_whole_text_write_changes_no_more_than_was_changed(
            old in "[ab\n é]{0,60}",
            cut in (0usize..60, 0usize..60),
            insert in "[abc\n ü]{0,20}",
        ) {
            let chars: Vec<char> = old.chars().collect();
            let (a, b) = (cut.0.min(chars.len()), cut.1.min(chars.len()));
            let (a, b) = (a.min(b), a.max(b));
            let new: String = chars[..a].iter().chain(insert.chars().collect::<Vec<_>>().iter()).chain(chars[b..].iter()).collect();
            let change = diff(&old, &new);
            prop_assert_eq!(change.apply_str(&old).unwrap(), new.clone());
            let (mut inserted, mut deleted) = (0, 0);
            for op in change.ops() {
                match op {
                    draftsmith::project::changeset::Op::Insert(s) => inserted += s.chars().count(),
                    draftsmith::project::changeset::Op::Delete(n) => deleted += n,
                    draftsmith::project::changeset::Op::Retain(_) => {}
                }
            }
            prop_assert!(deleted <= b - a, "{old:?} -> {new:?}: {change:?}");
            prop_assert!(inserted <= insert.chars().count(), "{old:?} -> {new:?}: {change:?}");
        }
    }
}
