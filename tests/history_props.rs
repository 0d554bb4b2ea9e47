//! Property tests of the shared writer/agent history: undo and redo restore texts and free
//! files exactly, writer changes on stale versions are rebased, and origin-scoped undo keeps
//! later typing and the free files the writer wrote later.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::commands::{Origin, OriginFilter};
use draftsmith::project::changeset::ChangeSet;
use draftsmith::project::{Chapter, Project};
use draftsmith::session::{Session, ToolCall};
use draftsmith::tools::ToolRegistry;
use draftsmith::{ManualClock, SequentialIds};
use proptest::prelude::*;
use serde_json::json;

const ORIGINAL: &str = "0123 4567. 89 0123\n\n4567 89.";

fn session() -> Session {
    Session::new(Project::new(
        "p",
        "Test",
        vec![
            Chapter::new("c1", "One", ORIGINAL),
            Chapter::new("c2", "Two", "05 16 27"),
        ],
    ))
}

fn text(s: &Session, ch: &str) -> String {
    s.project.chapter(ch).unwrap().text().to_string()
}

/// One step of a random session.
#[derive(Debug, Clone)]
enum Step {
    /// The writer replaces `start..start+del` (scaled to the text) with `ins`, based on a
    /// version `stale` changes back.
    Type {
        ch: bool,
        start: f64,
        del: usize,
        ins: String,
        stale: u64,
        gap_ms: u64,
    },
    /// An agent turn of edits (one group), which may also write a free file.
    Agent {
        ch: bool,
        edits: Vec<(f64, usize, String)>,
        file: Option<(bool, String)>,
    },
    /// `write_file` of a free file (`plans/a.md` or `notes/b.md`) by the writer or an agent.
    File {
        notes: bool,
        content: String,
        agent: bool,
    },
    Undo,
    Redo,
    UndoAgent,
}

fn alphabet(chars: &'static str, max: usize) -> impl Strategy<Value = String> {
    let v: Vec<char> = chars.chars().collect();
    prop::collection::vec(prop::sample::select(v), 0..max).prop_map(|c| c.into_iter().collect())
}

fn writer_step(letters: &'static str) -> impl Strategy<Value = Step> {
    (
        any::<bool>(),
        0.0..1.0f64,
        0..4usize,
        alphabet(letters, 5),
        0..3u64,
        prop_oneof![Just(10u64), Just(900u64)],
    )
        .prop_map(|(ch, start, del, ins, stale, gap_ms)| Step::Type {
            ch,
            start,
            del,
            ins,
            stale,
            gap_ms,
        })
}

fn agent_step(letters: &'static str) -> impl Strategy<Value = Step> {
    (
        any::<bool>(),
        prop::collection::vec((0.0..1.0f64, 0..5usize, alphabet(letters, 6)), 1..4),
        prop::option::of((any::<bool>(), alphabet(letters, 6))),
    )
        .prop_map(|(ch, edits, file)| Step::Agent { ch, edits, file })
}

/// An agent turn that certainly writes a free file.
fn agent_file_step(letters: &'static str) -> impl Strategy<Value = Step> {
    (agent_step(letters), any::<bool>(), alphabet(letters, 6)).prop_map(|(step, notes, text)| {
        match step {
            Step::Agent { ch, edits, .. } => Step::Agent {
                ch,
                edits,
                file: Some((notes, text)),
            },
            other => other,
        }
    })
}

fn file_step(agent: bool, letters: &'static str) -> impl Strategy<Value = Step> {
    (any::<bool>(), alphabet(letters, 6)).prop_map(move |(notes, content)| Step::File {
        notes,
        content,
        agent,
    })
}

fn file_path(notes: bool) -> &'static str {
    if notes {
        "notes/b.md"
    } else {
        "plans/a.md"
    }
}

fn any_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => writer_step("0123456789 "),
        3 => agent_step("αβγδεζ "),
        1 => file_step(false, "0123456789 "),
        1 => file_step(true, "αβγδεζ "),
        1 => Just(Step::Undo),
        1 => Just(Step::Redo),
        1 => Just(Step::UndoAgent),
    ]
}

struct World {
    s: Session,
    seen: std::collections::HashMap<(&'static str, u64), String>,
    registry: ToolRegistry,
    clock: ManualClock,
    ids: SequentialIds,
}

impl World {
    fn new() -> Self {
        let mut w = Self {
            s: session(),
            seen: Default::default(),
            registry: ToolRegistry::standard(),
            clock: ManualClock::new(1_000_000),
            ids: SequentialIds::new("id"),
        };
        w.snapshot();
        w
    }

    fn chapter(ch: bool) -> &'static str {
        if ch {
            "c1"
        } else {
            "c2"
        }
    }

    fn run(&mut self, step: &Step) {
        match step {
            Step::Type {
                ch,
                start,
                del,
                ins,
                stale,
                gap_ms,
            } => {
                self.clock.advance(*gap_ms);
                let id = Self::chapter(*ch);
                let version = self.s.project.chapter(id).unwrap().version();
                // The page may send a change made on an older version it still shows.
                let mut base = version.saturating_sub(*stale);
                if !self.seen.contains_key(&(id, base)) {
                    base = version; // an intermediate version of an agent turn
                }
                let old = self.seen[&(id, base)].clone();
                let len = old.chars().count();
                let at = ((len as f64) * start) as usize;
                let del = (*del).min(len - at);
                let change = ChangeSet::replace(len, at, at + del, ins).unwrap();
                self.s
                    .apply_user_change(id, base, change, &self.clock, &self.ids)
                    .unwrap();
            }
            Step::File {
                notes,
                content,
                agent,
            } => {
                self.clock.advance(5);
                let origin = if *agent {
                    self.s
                        .history
                        .begin_group(Origin::Agent("ed".into()), &self.ids);
                    Origin::Agent("ed".into())
                } else {
                    Origin::User
                };
                self.write_file(*notes, content, origin);
                self.s.history.close_group();
            }
            Step::Agent { ch, edits, file } => {
                self.clock.advance(5);
                let id = Self::chapter(*ch);
                self.s
                    .history
                    .begin_group(Origin::Agent("ed".into()), &self.ids);
                for (start, del, ins) in edits {
                    let chapter = self.s.project.chapter(id).unwrap();
                    let len = chapter.len_chars();
                    let at = ((len as f64) * start) as usize;
                    let del = (*del).min(len - at);
                    let search = chapter.slice(at, at + del);
                    // Anchor by text through the real tools: insert or replace.
                    let call = if search.is_empty()
                        || !text(&self.s, id).contains(&search)
                        || ins == &search
                    {
                        None
                    } else {
                        Some(ToolCall {
                            id: None,
                            name: "update_manuscript".into(),
                            args: json!({"searchText": search, "replacementText": ins, "chapter": id}),
                        })
                    };
                    match call {
                        Some(call) => {
                            let out = self.s.execute(
                                &self.registry,
                                call,
                                Origin::Agent("ed".into()),
                                &self.clock,
                                &self.ids,
                            );
                            assert!(out.result.is_success(), "{:?}", out.result);
                        }
                        None if !ins.is_empty() => {
                            let out = self.s.execute(&self.registry, ToolCall { id: None, name: "append_to_manuscript".into(),
                                args: json!({"text": ins, "chapter": id, "sameParagraph": true}) }, Origin::Agent("ed".into()), &self.clock, &self.ids);
                            assert!(out.result.is_success(), "{:?}", out.result);
                        }
                        None => {}
                    }
                }
                if let Some((notes, content)) = file {
                    self.write_file(*notes, content, Origin::Agent("ed".into()));
                }
                self.s.history.close_group();
            }
            Step::Undo => {
                self.s
                    .undo(None, Origin::User, &self.clock, &self.ids)
                    .unwrap();
            }
            Step::Redo => {
                self.s.redo().unwrap();
            }
            Step::UndoAgent => {
                self.s
                    .undo(
                        Some(&OriginFilter::AnyAgent),
                        Origin::User,
                        &self.clock,
                        &self.ids,
                    )
                    .unwrap();
            }
        }
        self.snapshot();
    }

    /// Write a free file through the real tool.
    fn write_file(&mut self, notes: bool, content: &str, origin: Origin) {
        let call = ToolCall {
            id: None,
            name: "write_file".into(),
            args: json!({"path": file_path(notes), "content": content}),
        };
        let out = self
            .s
            .execute(&self.registry, call, origin, &self.clock, &self.ids);
        assert!(out.result.is_success(), "{:?}", out.result);
    }

    /// Remember every chapter text by version, as the page would have seen it.
    fn snapshot(&mut self) {
        for id in ["c1", "c2"] {
            let c = self.s.project.chapter(id).unwrap();
            self.seen.insert((id, c.version()), c.text().to_string());
        }
    }

    /// Undo until nothing is left; returns how many undos ran.
    fn undo_all(&mut self) -> usize {
        let mut n = 0;
        while self.s.history.can_undo() {
            self.s
                .undo(None, Origin::User, &self.clock, &self.ids)
                .unwrap();
            n += 1;
            assert!(n < 10_000);
        }
        n
    }

    fn redo_n(&mut self, n: usize) {
        for _ in 0..n {
            self.s.redo().unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn undo_everything_restores_the_original_and_redo_the_final(steps in prop::collection::vec(any_step(), 0..30)) {
        let mut w = World::new();
        for step in &steps {
            w.run(step);
        }
        let final_1 = text(&w.s, "c1");
        let final_2 = text(&w.s, "c2");
        let final_files = w.s.files.clone();
        let n = w.undo_all();
        prop_assert_eq!(text(&w.s, "c1"), ORIGINAL);
        prop_assert_eq!(text(&w.s, "c2"), "05 16 27");
        prop_assert!(w.s.files.is_empty(), "files left: {:?}", w.s.files);
        w.redo_n(n);
        prop_assert_eq!(text(&w.s, "c1"), final_1);
        prop_assert_eq!(text(&w.s, "c2"), final_2);
        prop_assert_eq!(&w.s.files, &final_files);
    }

    #[test]
    fn undoing_the_agent_restores_its_files_unless_the_writer_wrote_them_later(
        before in prop::collection::vec(any_step(), 0..12),
        agent in agent_file_step("ABCDEFG "),
        after in prop::collection::vec(prop_oneof![writer_step("abcdefg "), file_step(false, "abcdefg ")], 0..6),
    ) {
        let mut w = World::new();
        for step in &before {
            w.run(step);
        }
        let files_before = w.s.files.clone();
        w.run(&agent);
        let Step::Agent { file: Some((notes, _)), .. } = &agent else {
            unreachable!("agent_file_step writes a file")
        };
        let path = file_path(*notes);
        for step in &after {
            w.run(step);
        }
        let written_later = after
            .iter()
            .any(|s| matches!(s, Step::File { notes: n, .. } if n == notes));
        let files_then = w.s.files.clone();
        let moved = w
            .s
            .undo(Some(&OriginFilter::AnyAgent), Origin::User, &w.clock, &w.ids)
            .unwrap();
        // The other file is untouched; the agent's file goes back to what it was before the
        // turn, unless the writer wrote it later: then the writer's content stays.
        let other = file_path(!*notes);
        prop_assert_eq!(w.s.files.get(other), files_then.get(other));
        if written_later {
            prop_assert_eq!(w.s.files.get(path), files_then.get(path));
            prop_assert_eq!(&moved.kept, &vec![path.to_string()]);
        } else {
            prop_assert_eq!(w.s.files.get(path), files_before.get(path));
            prop_assert_eq!(&moved.files, &vec![path.to_string()]);
        }
        let files_reverted = w.s.files.clone();
        // Plain undo brings the agent's file back exactly; redo reverts it again.
        w.s.undo(None, Origin::User, &w.clock, &w.ids).unwrap();
        prop_assert_eq!(&w.s.files, &files_then);
        w.s.redo().unwrap();
        prop_assert_eq!(&w.s.files, &files_reverted);
        // And undoing everything leaves no file.
        w.undo_all();
        prop_assert!(w.s.files.is_empty(), "files left: {:?}", w.s.files);
    }

    #[test]
    fn undoing_the_agent_keeps_what_the_writer_typed_after_it(
        before in prop::collection::vec(any_step(), 0..12),
        agent in agent_step("ABCDEFG "),
        after in prop::collection::vec(writer_step("abcdefg "), 1..10),
    ) {
        let mut w = World::new();
        for step in &before {
            w.run(step);
        }
        w.run(&agent);
        for step in &after {
            w.run(step);
        }
        let lower = |t: &str| t.chars().filter(|c| c.is_ascii_lowercase()).collect::<String>();
        let upper = |t: &str| t.chars().filter(|c| c.is_ascii_uppercase()).count();
        let (t1, t2) = (text(&w.s, "c1"), text(&w.s, "c2"));
        let had_target = w.s.history.scoped_target(&OriginFilter::AnyAgent).is_some();
        w.s.undo(Some(&OriginFilter::AnyAgent), Origin::User, &w.clock, &w.ids).unwrap();
        let (u1, u2) = (text(&w.s, "c1"), text(&w.s, "c2"));
        // The writer's later typing is untouched...
        prop_assert_eq!(lower(&u1), lower(&t1));
        prop_assert_eq!(lower(&u2), lower(&t2));
        // ...and everything the agent's turn inserted is gone.
        prop_assert_eq!(upper(&u1) + upper(&u2), 0, "agent text left: {:?} {:?}", u1, u2);
        if !had_target {
            // No agent edit anywhere: nothing was reverted, nothing recorded.
            prop_assert_eq!((u1, u2), (t1, t2));
            return Ok(());
        }
        // Plain undo brings the agent's change back exactly; redo reverts it again.
        w.s.undo(None, Origin::User, &w.clock, &w.ids).unwrap();
        prop_assert_eq!(text(&w.s, "c1"), t1);
        prop_assert_eq!(text(&w.s, "c2"), t2);
        w.s.redo().unwrap();
        prop_assert_eq!(text(&w.s, "c1"), u1);
        prop_assert_eq!(text(&w.s, "c2"), u2);
        // And undoing everything still restores the original exactly.
        w.undo_all();
        prop_assert_eq!(text(&w.s, "c1"), ORIGINAL);
        prop_assert_eq!(text(&w.s, "c2"), "05 16 27");
    }
}

#[test]
fn redo_right_after_an_agent_undo_reapplies_it() {
    let mut w = World::new();
    w.run(&Step::Agent {
        ch: true,
        edits: vec![(0.0, 4, "ABCD".into())],
        file: None,
    });
    w.run(&Step::Type {
        ch: true,
        start: 1.0,
        del: 0,
        ins: "xyz".into(),
        stale: 0,
        gap_ms: 900,
    });
    let with_agent = text(&w.s, "c1");
    w.s.undo(
        Some(&OriginFilter::AnyAgent),
        Origin::User,
        &w.clock,
        &w.ids,
    )
    .unwrap();
    assert_eq!(text(&w.s, "c1"), format!("{ORIGINAL}xyz"));
    w.s.redo().unwrap();
    assert_eq!(text(&w.s, "c1"), with_agent);
    // Nothing of that origin is left to revert twice.
    w.s.undo(
        Some(&OriginFilter::AnyAgent),
        Origin::User,
        &w.clock,
        &w.ids,
    )
    .unwrap();
    let before = text(&w.s, "c1");
    w.s.undo(
        Some(&OriginFilter::AnyAgent),
        Origin::User,
        &w.clock,
        &w.ids,
    )
    .unwrap();
    assert_eq!(text(&w.s, "c1"), before);
}

#[test]
fn the_history_is_bounded_by_groups_and_bytes_dropping_the_oldest() {
    use draftsmith::commands::HistoryLimits;
    let mut w = World::new();
    w.s.history = draftsmith::commands::History::with_limits(HistoryLimits {
        max_groups: 5,
        max_bytes: usize::MAX,
    });
    for i in 0..12 {
        w.run(&Step::Type {
            ch: true,
            start: 0.0,
            del: 0,
            ins: format!("{}", i % 10),
            stale: 0,
            gap_ms: 900,
        });
    }
    assert_eq!(w.s.history.undo_groups(), 5);
    let kept = text(&w.s, "c1");
    assert_eq!(w.undo_all(), 5);
    // Only the last five edits were undone; the older seven stay.
    assert_eq!(text(&w.s, "c1"), format!("6543210{ORIGINAL}"));
    w.redo_n(5);
    assert_eq!(text(&w.s, "c1"), kept);

    // A byte bound: a big insert pushes older groups out, but never the newest.
    let mut w = World::new();
    w.s.history = draftsmith::commands::History::with_limits(HistoryLimits {
        max_groups: 1000,
        max_bytes: 20_000,
    });
    for _ in 0..3 {
        w.run(&Step::Type {
            ch: true,
            start: 0.0,
            del: 0,
            ins: "x".into(),
            stale: 0,
            gap_ms: 900,
        });
    }
    assert_eq!(w.s.history.undo_groups(), 3);
    w.run(&Step::Type {
        ch: false,
        start: 0.0,
        del: 0,
        ins: "y".repeat(30_000),
        stale: 0,
        gap_ms: 900,
    });
    assert_eq!(
        w.s.history.undo_groups(),
        1,
        "older groups dropped, the newest kept"
    );
    assert!(w.s.history.memory_bytes() >= 30_000);
    w.undo_all();
    assert_eq!(text(&w.s, "c2"), "05 16 27");
}

#[test]
fn typing_groups_by_gap_and_adjacency() {
    let mut w = World::new();
    let typed = |w: &mut World, at: f64, ins: &str, gap: u64| {
        w.run(&Step::Type {
            ch: false,
            start: at,
            del: 0,
            ins: ins.into(),
            stale: 0,
            gap_ms: gap,
        });
    };
    // "05 16 27": type "a" at the end, then "b" right after it, 100 ms later: one group.
    typed(&mut w, 1.0, "a", 900);
    typed(&mut w, 1.0, "b", 100);
    assert_eq!(w.s.history.undo_groups(), 1);
    // Adjacent but 600 ms later: a new group.
    typed(&mut w, 1.0, "c", 600);
    assert_eq!(w.s.history.undo_groups(), 2);
    // Soon, but far away (the start of the text): a new group.
    typed(&mut w, 0.0, "d", 50);
    assert_eq!(w.s.history.undo_groups(), 3);
    // An explicit close_group ends the group even for adjacent, quick typing.
    w.s.history.close_group();
    typed(&mut w, 0.0, "e", 50);
    assert_eq!(w.s.history.undo_groups(), 4);
    assert_eq!(text(&w.s, "c2"), "ed05 16 27abc");
    w.s.undo(None, Origin::User, &w.clock, &w.ids).unwrap();
    w.s.undo(None, Origin::User, &w.clock, &w.ids).unwrap();
    w.s.undo(None, Origin::User, &w.clock, &w.ids).unwrap();
    assert_eq!(text(&w.s, "c2"), "05 16 27ab", "\"ab\" was one group");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]

    /// The history serializes (for persistence) and still undoes everything after a round trip.
    #[test]
    fn history_survives_a_serialization_round_trip(steps in prop::collection::vec(any_step(), 0..20)) {
        let mut w = World::new();
        for step in &steps {
            w.run(step);
        }
        let json = serde_json::to_string(&(&w.s.project, &w.s.history)).unwrap();
        let (project, mut history): (draftsmith::project::Project, draftsmith::commands::History) =
            serde_json::from_str(&json).unwrap();
        history.restore_derived();
        prop_assert_eq!(&history, &w.s.history);
        prop_assert_eq!(history.memory_bytes(), w.s.history.memory_bytes());
        w.s = Session {
            project,
            history,
            memory: std::mem::take(&mut w.s.memory),
            bible: std::mem::take(&mut w.s.bible),
            files: std::mem::take(&mut w.s.files),
        };
        w.undo_all();
        prop_assert_eq!(text(&w.s, "c1"), ORIGINAL);
        prop_assert_eq!(text(&w.s, "c2"), "05 16 27");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    /// Saving only what the journal says changed, after every step, rebuilds exactly the
    /// live history (the way the store keeps it: one record per undo entry plus the state).
    #[test]
    fn the_change_journal_rebuilds_the_history(steps in prop::collection::vec(any_step(), 0..30)) {
        let mut w = World::new();
        let mut stored: std::collections::BTreeMap<String, draftsmith::commands::Entry> = Default::default();
        let mut state = draftsmith::commands::HistoryState::default();
        for step in &steps {
            w.run(step);
            let changes = w.s.history.take_changes();
            for id in changes.delete {
                stored.remove(&id);
            }
            for entry in changes.put {
                stored.insert(entry.id.clone(), entry);
            }
            if let Some(changed) = changes.state {
                state = changed;
            }
            let rebuilt = draftsmith::commands::History::from_parts(stored.values().cloned().collect(), state.clone());
            prop_assert_eq!(&rebuilt, &w.s.history);
        }
        let rebuilt = draftsmith::commands::History::from_parts(stored.into_values().collect(), state);
        prop_assert_eq!(rebuilt.memory_bytes(), w.s.history.memory_bytes());
        w.s.history = rebuilt;
        w.undo_all();
        prop_assert_eq!(text(&w.s, "c1"), ORIGINAL);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Deleting a chapter makes the history forget it: afterwards no entry names it, the
    /// journal records the forgetting (saving what it says rebuilds the history), and undo
    /// and redo never fail and stay exact in the chapter that is left: undoing everything
    /// gives its original text, redoing as many gives its text at the deletion.
    #[test]
    fn forgetting_a_deleted_chapter_keeps_the_other_exact(
        steps in prop::collection::vec(any_step(), 0..30),
        delete_first in any::<bool>(),
    ) {
        let mut w = World::new();
        for step in &steps {
            w.run(step);
        }
        let (gone, kept, original) = if delete_first {
            ("c1", "c2", "05 16 27")
        } else {
            ("c2", "c1", ORIGINAL)
        };
        // What the store holds before the deletion.
        let _ = w.s.history.take_changes();
        let (entries, mut state) = w.s.history.snapshot();
        let mut stored: std::collections::BTreeMap<String, draftsmith::commands::Entry> =
            entries.into_iter().map(|e| (e.id.clone(), e)).collect();

        let at_deletion = text(&w.s, kept);
        w.s.project.remove_chapter(gone).unwrap();
        w.s.history.forget_chapter(gone);
        let history = &w.s.history;
        prop_assert!(!history
            .entries()
            .iter()
            .chain(history.redo_runs().iter().flatten())
            .flat_map(|e| e.effects.iter())
            .any(|fx| fx.chapter == gone));
        prop_assert!(history.redo_runs().iter().all(|run| !run.is_empty()));

        let changes = w.s.history.take_changes();
        for id in changes.delete {
            stored.remove(&id);
        }
        for entry in changes.put {
            stored.insert(entry.id.clone(), entry);
        }
        if let Some(changed) = changes.state {
            state = changed;
        }
        let rebuilt = draftsmith::commands::History::from_parts(stored.into_values().collect(), state);
        prop_assert_eq!(&rebuilt, &w.s.history);
        prop_assert_eq!(rebuilt.memory_bytes(), w.s.history.memory_bytes());

        let n = w.undo_all();
        prop_assert_eq!(text(&w.s, kept), original);
        w.redo_n(n);
        prop_assert_eq!(text(&w.s, kept), at_deletion);
        while w.s.history.can_redo() {
            w.s.redo().unwrap();
        }
        w.s.undo(Some(&OriginFilter::AnyAgent), Origin::User, &w.clock, &w.ids).unwrap();
        w.undo_all();
        prop_assert_eq!(text(&w.s, kept), original);
    }
}
