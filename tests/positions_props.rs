//! Property test: the editor's positions follow every change applied. For random sequences
//! of agent edits (random change sets and the real `update_manuscript` tool, in turns),
//! writer changes (some on stale versions, rebased), undo, redo, origin-scoped undo, failing
//! commands and new selections, a selection (and a highlight in another chapter) that no
//! change touched still covers exactly the same characters, at the place an independent
//! oracle computes; an empty selection stays empty; positions never leave the text.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::HashMap;

use draftsmith::commands::history::Applied;
use draftsmith::commands::{Origin, OriginFilter};
use draftsmith::project::changeset::{ChangeSet, Op};
use draftsmith::project::{Chapter, Project};
use draftsmith::session::{EditContext, Session, ToolCall};
use draftsmith::tools::Command;
use draftsmith::tools::{ToolError, ToolRegistry};
use draftsmith::{ManualClock, SequentialIds};
use proptest::prelude::*;
use serde_json::{json, Value};

const C1: &str = "Mara climbed the stair.\nThe lamp was dark.\n\nNobody answered her call.";
const C2: &str = "Morning came grey over Greyhaven.";

/// Where the range `s..e` (non-empty) goes through `change`, by counting what was inserted
/// and deleted before it; `None` when the change touches it (deletes any of its chars or
/// inserts strictly inside it). Text inserted exactly at its start or end is outside it.
fn untouched(change: &ChangeSet, s: usize, e: usize) -> Option<(usize, usize)> {
    let mut old = 0usize;
    let mut shift = 0isize;
    for op in change.ops() {
        match op {
            Op::Retain(n) => old += n,
            Op::Delete(n) => {
                if old < e && old + n > s {
                    return None;
                }
                if old + n <= s {
                    shift -= *n as isize;
                }
                old += n;
            }
            Op::Insert(text) => {
                if old > s && old < e {
                    return None;
                }
                if old <= s {
                    shift += text.chars().count() as isize;
                }
            }
        }
    }
    let ns = (s as isize + shift) as usize;
    Some((ns, ns + (e - s)))
}

/// Random edits as (share of the rest to keep, chars to delete, text to insert).
type Edits = Vec<(f64, usize, String)>;

/// A change set over a text of `len` chars made of `edits`, left to right.
fn change_from(len: usize, edits: &Edits) -> ChangeSet {
    let mut ops = Vec::new();
    let mut at = 0;
    for (keep, del, ins) in edits {
        let retain = ((len - at) as f64 * keep) as usize;
        ops.push(Op::Retain(retain));
        at += retain;
        let del = (*del).min(len - at);
        ops.push(Op::Delete(del));
        at += del;
        ops.push(Op::Insert(ins.clone()));
    }
    ops.push(Op::Retain(len - at));
    ChangeSet::from_ops(ops)
}

/// A tool-like command applying random change sets to chapters (several effects per call);
/// with `fail`, it fails after editing, so everything must be rolled back.
struct RandomEdit {
    edits: Vec<(&'static str, Edits)>,
    fail: bool,
}

impl Command for RandomEdit {
    fn execute(self: Box<Self>, cx: &mut EditContext<'_>) -> Result<Value, ToolError> {
        for (chapter, edits) in &self.edits {
            let len = cx.project().chapter(chapter).map_or(0, Chapter::len_chars);
            cx.edit(chapter, change_from(len, edits))?;
        }
        if self.fail {
            return Err(ToolError::new("failed", "on purpose"));
        }
        Ok(json!({}))
    }
}

#[derive(Debug, Clone)]
enum Step {
    /// An agent's command with random change sets (`c1`/`c2` per edit); maybe failing.
    Agent {
        edits: Vec<(bool, Edits)>,
        fail: bool,
    },
    /// The real `update_manuscript` tool replacing a random slice of a chapter.
    Update {
        c1: bool,
        at: f64,
        len: usize,
        with: String,
    },
    /// The writer's change, based on a version `stale` changes back.
    Type {
        c1: bool,
        edits: Edits,
        stale: u64,
    },
    Undo,
    Redo,
    UndoAgent,
    /// The writer selects another range of `c1` (possibly empty).
    Select {
        at: f64,
        len: usize,
    },
}

fn letters(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(vec!['x', 'y', ' ', '\n', 'é']), 0..max)
        .prop_map(|c| c.into_iter().collect())
}

fn edits() -> impl Strategy<Value = Edits> {
    prop::collection::vec((0.0..1.0f64, 0..6usize, letters(5)), 1..4)
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (prop::collection::vec((any::<bool>(), edits()), 1..3), prop::bool::weighted(0.15))
            .prop_map(|(edits, fail)| Step::Agent { edits, fail }),
        2 => (any::<bool>(), 0.0..1.0f64, 1..8usize, letters(6))
            .prop_map(|(c1, at, len, with)| Step::Update { c1, at, len, with }),
        4 => (any::<bool>(), edits(), 0..3u64)
            .prop_map(|(c1, edits, stale)| Step::Type { c1, edits, stale }),
        1 => Just(Step::Undo),
        1 => Just(Step::Redo),
        1 => Just(Step::UndoAgent),
        1 => (0.0..1.0f64, 0..12usize).prop_map(|(at, len)| Step::Select { at, len }),
    ]
}

/// A tracked range: where it should be and the text it should cover, or unknown after a
/// change touched it.
#[derive(Debug, Clone, PartialEq)]
enum Tracked {
    At(usize, usize, String),
    Unknown,
}

struct World {
    s: Session,
    registry: ToolRegistry,
    clock: ManualClock,
    ids: SequentialIds,
    /// Chapter lengths by version, as the page would have seen them.
    lens: HashMap<(&'static str, u64), usize>,
    selection: Tracked,
    highlight: Tracked,
    /// Steps after which a tracked range was checked unchanged (to be sure the test bites).
    checked: usize,
}

fn name(c1: bool) -> &'static str {
    if c1 {
        "c1"
    } else {
        "c2"
    }
}

impl World {
    fn new(select: (f64, usize)) -> Self {
        let mut w = Self {
            s: Session::new(Project::new(
                "p",
                "Props",
                vec![Chapter::new("c1", "One", C1), Chapter::new("c2", "Two", C2)],
            )),
            registry: ToolRegistry::standard(),
            clock: ManualClock::new(1_000_000),
            ids: SequentialIds::new("id"),
            lens: HashMap::new(),
            selection: Tracked::Unknown,
            highlight: Tracked::Unknown,
            checked: 0,
        };
        let out = w.call(
            "highlight_text",
            json!({"chapter": "c2", "text": "grey over Greyhaven"}),
            Origin::Agent("ed".into()),
        );
        assert!(out.is_empty());
        w.highlight = w.highlight_now();
        w.select(select.0, select.1);
        w.remember_lens();
        w
    }

    fn call(&mut self, tool: &str, args: Value, origin: Origin) -> Vec<Applied> {
        let out = self.s.execute(
            &self.registry,
            ToolCall {
                id: None,
                name: tool.into(),
                args,
            },
            origin,
            &self.clock,
            &self.ids,
        );
        assert!(out.result.is_success(), "{tool}: {:?}", out.result);
        out.edits
    }

    fn slice(&self, chapter: &str, s: usize, e: usize) -> String {
        self.s.project.chapter(chapter).unwrap().slice(s, e)
    }

    fn selection_now(&self) -> Tracked {
        match self.s.project.ui.selection {
            Some((s, e)) => Tracked::At(s, e, self.slice("c1", s, e)),
            None => Tracked::Unknown,
        }
    }

    fn highlight_now(&self) -> Tracked {
        match self
            .s
            .project
            .ui
            .highlights
            .iter()
            .find(|h| h.chapter == "c2")
        {
            Some(h) => Tracked::At(h.start, h.end, self.slice("c2", h.start, h.end)),
            None => Tracked::Unknown,
        }
    }

    fn select(&mut self, at: f64, len: usize) {
        let total = self.s.project.chapter("c1").unwrap().len_chars();
        let start = (total as f64 * at) as usize;
        let end = (start + len).min(total);
        // As the page does: the writer's selection, sent with set_selection.
        self.call(
            "set_selection",
            json!({"chapter": "c1", "start": start, "end": end}),
            Origin::User,
        );
        self.selection = self.selection_now();
    }

    fn remember_lens(&mut self) {
        for id in ["c1", "c2"] {
            let c = self.s.project.chapter(id).unwrap();
            self.lens.insert((id, c.version()), c.len_chars());
        }
    }

    fn run(&mut self, step: &Step) -> Vec<Applied> {
        match step {
            Step::Agent { edits, fail } => {
                let before = self.s.clone();
                let command = RandomEdit {
                    edits: edits.iter().map(|(c1, e)| (name(*c1), e.clone())).collect(),
                    fail: *fail,
                };
                let out = self.s.execute_command(
                    None,
                    "random_edit",
                    Box::new(command),
                    Origin::Agent("ed".into()),
                    &self.clock,
                    &self.ids,
                );
                if *fail {
                    assert!(!out.result.is_success());
                    assert!(self.s == before, "a failed command changed the session");
                }
                out.edits
            }
            Step::Update { c1, at, len, with } => {
                let id = name(*c1);
                let chapter = self.s.project.chapter(id).unwrap();
                let total = chapter.len_chars();
                let start = (total as f64 * at) as usize;
                let search = chapter.slice(start, (start + len).min(total));
                if search.is_empty() || &search == with {
                    return Vec::new();
                }
                self.call(
                    "update_manuscript",
                    json!({"chapter": id, "searchText": search, "replacementText": with}),
                    Origin::Agent("ed".into()),
                )
            }
            Step::Type { c1, edits, stale } => {
                let id = name(*c1);
                let version = self.s.project.chapter(id).unwrap().version();
                let mut base = version.saturating_sub(*stale);
                if !self.lens.contains_key(&(id, base)) {
                    base = version;
                }
                let change = change_from(self.lens[&(id, base)], edits);
                let applied = self
                    .s
                    .apply_user_change(id, base, change, &self.clock, &self.ids)
                    .unwrap();
                vec![applied]
            }
            Step::Undo => {
                self.s
                    .undo(None, Origin::User, &self.clock, &self.ids)
                    .unwrap()
                    .applied
            }
            Step::Redo => self.s.redo().unwrap().applied,
            Step::UndoAgent => {
                self.s
                    .undo(
                        Some(&OriginFilter::AnyAgent),
                        Origin::User,
                        &self.clock,
                        &self.ids,
                    )
                    .unwrap()
                    .applied
            }
            Step::Select { at, len } => {
                self.select(*at, *len);
                Vec::new()
            }
        }
    }

    /// Follow `tracked` (in `chapter`) through the applied changes with the oracle.
    fn follow(tracked: &Tracked, chapter: &str, applied: &[Applied]) -> Tracked {
        let mut tracked = tracked.clone();
        for a in applied.iter().filter(|a| a.chapter == chapter) {
            tracked = match tracked {
                Tracked::At(s, e, text) if s < e => match untouched(&a.change, s, e) {
                    Some((ns, ne)) => Tracked::At(ns, ne, text),
                    None => Tracked::Unknown,
                },
                Tracked::At(s, _, _) => {
                    // An empty range moves like a caret; only its emptiness is checked.
                    let at = a
                        .change
                        .map_pos(s, draftsmith::project::changeset::Assoc::Before);
                    Tracked::At(at, at, String::new())
                }
                Tracked::Unknown => Tracked::Unknown,
            };
        }
        tracked
    }

    fn check(&mut self, applied: &[Applied]) -> Result<(), TestCaseError> {
        let ui = &self.s.project.ui;
        let len1 = self.s.project.chapter("c1").unwrap().len_chars();
        prop_assert_eq!(ui.active_chapter.as_deref(), Some("c1"));
        prop_assert!(ui.cursor <= len1 && ui.scroll <= len1);

        let expected = Self::follow(&self.selection, "c1", applied);
        let now = self.selection_now();
        if let Tracked::At(s, e, _) = &now {
            prop_assert!(s <= e && *e <= len1, "selection {s}..{e} in {len1} chars");
            prop_assert_eq!(ui.cursor, *e, "the cursor stays at the selection's end");
        }
        match (&expected, &now) {
            (Tracked::At(s, e, text), _) if s < e => {
                prop_assert_eq!(&now, &expected, "an untouched selection moved or changed");
                prop_assert_eq!(&self.slice("c1", *s, *e), text);
                self.checked += 1;
            }
            (Tracked::At(_, _, _), Tracked::At(s, e, _)) => {
                prop_assert_eq!(s, e, "an empty selection stays empty")
            }
            (Tracked::At(_, _, _), Tracked::Unknown) => {
                prop_assert!(false, "the selection went away")
            }
            _ => {}
        }
        self.selection = now;

        let expected = Self::follow(&self.highlight, "c2", applied);
        let now = self.highlight_now();
        if let Tracked::At(s, e, _) = &now {
            let len2 = self.s.project.chapter("c2").unwrap().len_chars();
            prop_assert!(s < e && *e <= len2, "highlight {s}..{e} in {len2} chars");
        }
        if let Tracked::At(s, e, _) = &expected {
            if s < e {
                prop_assert_eq!(&now, &expected, "an untouched highlight moved or changed");
            }
        }
        self.highlight = now;
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn an_untouched_selection_keeps_its_characters(
        select in (0.0..1.0f64, 0..20usize),
        steps in prop::collection::vec((step(), any::<bool>()), 1..16),
    ) {
        let mut w = World::new(select);
        for (step, close) in &steps {
            let applied = w.run(step);
            w.check(&applied)?;
            w.remember_lens();
            if *close {
                w.s.history.close_group();
            }
            w.clock.advance(700);
        }
    }
}

#[test]
fn the_property_checks_something() {
    // A fixed run where nothing touches the selection: every step is checked, and the
    // selection ends where the oracle says.
    let mut w = World::new((0.3, 10));
    let Tracked::At(_, _, text) = w.selection.clone() else {
        panic!("no selection")
    };
    let steps = [
        Step::Type {
            c1: true,
            edits: vec![(0.0, 0, "Before. ".into())],
            stale: 0,
        },
        Step::Agent {
            edits: vec![
                (true, vec![(0.0, 2, "Ö".into())]),
                (false, vec![(0.5, 3, "z".into())]),
            ],
            fail: false,
        },
        Step::Undo,
        Step::Redo,
        Step::UndoAgent,
        Step::Type {
            c1: true,
            edits: vec![(0.0, 0, "x".into())],
            stale: 2,
        },
    ];
    for step in &steps {
        let applied = w.run(step);
        w.check(&applied).unwrap();
        w.remember_lens();
    }
    assert_eq!(w.checked, steps.len());
    let Tracked::At(s, e, now) = w.selection.clone() else {
        panic!("no selection")
    };
    assert_eq!(now, text);
    assert_eq!(w.slice("c1", s, e), text);
    // And the oracle disagrees with positions that did not follow.
    let change = ChangeSet::replace(10, 0, 0, "ab").unwrap();
    assert_eq!(untouched(&change, 3, 5), Some((5, 7)));
    assert_eq!(
        untouched(&change, 0, 5),
        Some((2, 7)),
        "inserted at the start: outside"
    );
    let change = ChangeSet::replace(10, 5, 5, "ab").unwrap();
    assert_eq!(
        untouched(&change, 0, 5),
        Some((0, 5)),
        "inserted at the end: outside"
    );
    assert_eq!(untouched(&change, 0, 6), None, "inserted inside");
    let change = ChangeSet::replace(10, 4, 6, "").unwrap();
    assert_eq!(untouched(&change, 5, 8), None, "a char of it deleted");
    assert_eq!(untouched(&change, 6, 8), Some((4, 6)));
}
