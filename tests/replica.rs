//! The change-set ↔ Yjs mapping: two devices, each a session with its replica, exchanging
//! updates in random orders.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::bible::{Actor, Kind};
use draftsmith::commands::history::Grouping;
use draftsmith::commands::{Effect, Entry, Origin, OriginFilter};
use draftsmith::env::{IdSource, ManualClock, SequentialIds};
use draftsmith::project::changeset::ChangeSet;
use draftsmith::project::{Chapter, Project};
use draftsmith::replica::{apply_incoming, Local, Replica};
use draftsmith::session::Session;
use proptest::prelude::*;
use serde_json::json;

const PROJECT: &str = "p1";

/// One device: a session, its replica, and the updates it made that the other has not had.
struct Device {
    name: &'static str,
    session: Session,
    replica: Replica,
    ids: SequentialIds,
    clock: ManualClock,
    outbox: Vec<Vec<u8>>,
}

impl Device {
    /// The first device: a project of one chapter, shared as it is.
    fn first(text: &str) -> Self {
        let ids = SequentialIds::new("a");
        let project = Project::new(PROJECT, "Novel", vec![Chapter::new("c1", "One", text)]);
        let session = Session::new(project);
        let (replica, update) =
            Replica::of_session(&session, PROJECT, draftsmith::replica::client_id(&ids));
        Device {
            name: "a",
            session,
            replica,
            ids,
            clock: ManualClock::default(),
            outbox: vec![update],
        }
    }

    /// A device that joins: it has nothing but the other's updates.
    fn join(name: &'static str, from: &Device) -> Self {
        let ids = SequentialIds::new(name);
        let mut replica = Replica::new(draftsmith::replica::client_id(&ids));
        for update in &from.outbox {
            replica.apply_remote(update).unwrap();
        }
        let chapters = replica
            .doc_chapters()
            .into_iter()
            .map(|c| Chapter::new(c.id, c.title, &c.text))
            .collect();
        let name_of = replica.name().unwrap();
        let session = Session::new(Project::new(PROJECT, name_of, chapters));
        Device {
            name,
            session,
            replica,
            ids,
            clock: ManualClock::default(),
            outbox: Vec::new(),
        }
    }

    fn text(&self) -> String {
        self.session.project.chapters[0].text().to_string()
    }

    /// The writer types `s` at char `at`, on the version they last saw.
    fn type_at(&mut self, at: usize, s: &str) {
        let c = &self.session.project.chapters[0];
        let change = ChangeSet::replace(c.len_chars(), at, at, s).unwrap();
        let version = c.version();
        let applied = self
            .session
            .apply_user_change("c1", version, change, &self.clock, &self.ids)
            .unwrap();
        self.mirror("user", vec![("c1".into(), applied.change)]);
    }

    /// An agent appends `s` at char `at`, one history group of its own.
    fn agent_at(&mut self, at: usize, s: &str) {
        let c = &self.session.project.chapters[0];
        let change = ChangeSet::replace(c.len_chars(), at, at, s).unwrap();
        let inverse = change.invert(c.text()).unwrap();
        self.session.project.apply_change("c1", &change).unwrap();
        let entry = Entry::edit(
            self.ids.next_id(),
            Origin::Agent("helper".into()),
            "append",
            0,
            vec![Effect {
                chapter: "c1".into(),
                change: change.clone(),
                inverse,
            }],
        );
        self.session
            .history
            .record(entry, Grouping::Command, &self.ids);
        self.session.history.close_group();
        self.mirror("agent:helper", vec![("c1".into(), change)]);
    }

    fn mirror(&mut self, origin: &str, texts: Vec<(String, ChangeSet)>) {
        if let Some(update) = self.replica.record_local(
            &self.session,
            PROJECT,
            origin,
            &Local {
                texts: texts.iter().map(|(c, x)| (c.as_str(), x)).collect(),
                ..Local::default()
            },
        ) {
            self.outbox.push(update);
        }
    }

    /// Receive one update from `from`'s outbox (the oldest it has not delivered).
    fn receive(&mut self, update: &[u8], from: &str) {
        let incoming = self.replica.apply_remote(update).unwrap();
        apply_incoming(
            &mut self.session,
            &incoming,
            &Origin::Remote(from.into()),
            0,
            &self.ids,
        );
        self.check();
    }

    /// The session's text is the document's.
    fn check(&self) {
        let doc = self.replica.doc_chapters();
        assert_eq!(doc.len(), self.session.project.chapters.len());
        for (d, c) in doc.iter().zip(&self.session.project.chapters) {
            assert_eq!(d.id, c.id);
            assert_eq!(d.text, c.text().to_string(), "{}", self.name);
        }
    }
}

/// Deliver every update each device has not yet delivered to the other.
fn exchange(a: &mut Device, b: &mut Device) {
    let (from_a, from_b) = (std::mem::take(&mut a.outbox), std::mem::take(&mut b.outbox));
    for u in &from_a {
        b.receive(u, "a");
    }
    for u in &from_b {
        a.receive(u, "b");
    }
}

/// Chars where a token may go: the start, and after each token's `]`.
fn boundaries(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(
            text.chars()
                .enumerate()
                .filter(|(_, c)| *c == ']')
                .map(|(i, _)| i + 1),
        )
        .collect()
}

#[test]
fn a_joining_device_gets_the_project_and_both_converge() {
    let mut a = Device::first("[start]");
    let mut b = Device::join("b", &a);
    a.outbox.clear();
    assert_eq!(b.text(), "[start]");
    assert_eq!(b.session.project.name, "Novel");
    a.type_at(7, "[a1]");
    b.type_at(0, "[b1]");
    exchange(&mut a, &mut b);
    assert_eq!(a.text(), b.text());
    assert!(a.text().contains("[a1]") && a.text().contains("[b1]"));
}

#[test]
fn non_ascii_text_maps_between_chars_and_bytes() {
    let mut a = Device::first("[é—😀]");
    let mut b = Device::join("b", &a);
    a.outbox.clear();
    a.type_at(5, "[日本]");
    b.type_at(0, "[ß]");
    exchange(&mut a, &mut b);
    assert_eq!(a.text(), "[ß][é—😀][日本]");
    assert_eq!(b.text(), a.text());
    // A deletion across multi-byte chars.
    let c = &a.session.project.chapters[0];
    let change = ChangeSet::replace(c.len_chars(), 4, 6, "").unwrap();
    let v = c.version();
    let applied = a
        .session
        .apply_user_change("c1", v, change, &a.clock, &a.ids)
        .unwrap();
    a.mirror("user", vec![("c1".into(), applied.change)]);
    exchange(&mut a, &mut b);
    assert_eq!(b.text(), "[ß][😀][日本]");
}

#[test]
fn undoing_an_agent_keeps_what_a_co_author_typed_after_it() {
    let mut a = Device::first("[start]");
    let mut b = Device::join("b", &a);
    a.outbox.clear();
    a.agent_at(7, "[agent]");
    exchange(&mut a, &mut b);
    b.type_at(14, "[b-after]");
    b.type_at(0, "[b-front]");
    exchange(&mut a, &mut b);
    assert_eq!(a.text(), "[b-front][start][agent][b-after]");
    // The co-author's changes are remote here: never undone, even by name.
    assert!("remote:b".parse::<OriginFilter>().is_err());
    a.session
        .undo(
            Some(&OriginFilter::AnyAgent),
            Origin::User,
            &a.clock,
            &a.ids,
        )
        .unwrap();
    let applied: Vec<_> = a.session.history.entries().to_vec();
    assert!(applied
        .iter()
        .any(|e| e.origin == Origin::Remote("b".into())));
    assert_eq!(a.text(), "[b-front][start][b-after]");
}

#[test]
fn plain_undo_reverts_this_device_only() {
    let mut a = Device::first("[start]");
    let mut b = Device::join("b", &a);
    a.outbox.clear();
    a.type_at(7, "[a1]");
    a.session.history.seal();
    a.type_at(11, "[a2]");
    exchange(&mut a, &mut b);
    b.type_at(0, "[b1]");
    exchange(&mut a, &mut b);
    assert_eq!(a.text(), "[b1][start][a1][a2]");
    a.session
        .undo(None, Origin::User, &a.clock, &a.ids)
        .unwrap();
    assert_eq!(a.text(), "[b1][start][a1]");
    a.session
        .undo(None, Origin::User, &a.clock, &a.ids)
        .unwrap();
    assert_eq!(a.text(), "[b1][start]");
    // Nothing of this device is left to undo: B's text stays.
    a.session
        .undo(None, Origin::User, &a.clock, &a.ids)
        .unwrap();
    assert_eq!(a.text(), "[b1][start]");
}

#[test]
fn a_field_written_on_both_devices_resolves_alike_and_keeps_the_other_as_a_revision() {
    let mut a = Device::first("[start]");
    let mut b = Device::join("b", &a);
    a.outbox.clear();
    let human = Actor::Human;
    a.session
        .bible
        .create(
            Kind::Character,
            "mara",
            vec![("name_src".into(), json!("Mara"))],
            &human,
            1,
        )
        .unwrap();
    let bible = [(Kind::Character, "mara".to_string())];
    let update = a
        .replica
        .record_local(
            &a.session,
            PROJECT,
            "user",
            &Local {
                bible: &bible,
                ..Local::default()
            },
        )
        .unwrap();
    a.outbox.push(update);
    exchange(&mut a, &mut b);
    assert_eq!(
        b.session
            .bible
            .get(Kind::Character, "mara")
            .unwrap()
            .text("name_src"),
        "Mara"
    );
    // Both write the notes field at once: the writer on A, an agent on B.
    let agent = Actor::from_origin(&Origin::Agent("lore".into()), 0);
    for (device, actor, value) in [(&mut a, &human, "brave"), (&mut b, &agent, "reckless")] {
        device
            .session
            .bible
            .update(
                Kind::Character,
                "mara",
                vec![("notes".into(), json!(value))],
                actor,
                2,
            )
            .unwrap();
        let update = device
            .replica
            .record_local(
                &device.session,
                PROJECT,
                "x",
                &Local {
                    bible: &bible,
                    ..Local::default()
                },
            )
            .unwrap();
        device.outbox.push(update);
    }
    exchange(&mut a, &mut b);
    let on_a = a
        .session
        .bible
        .get(Kind::Character, "mara")
        .unwrap()
        .clone();
    let on_b = b
        .session
        .bible
        .get(Kind::Character, "mara")
        .unwrap()
        .clone();
    assert_eq!(on_a.get("notes"), on_b.get("notes"));
    assert_eq!(on_a.origin("notes"), on_b.origin("notes"));
    for device in [&a, &b] {
        let log = device.replica.field_log(Kind::Character, "mara", "notes");
        let values: Vec<_> = log.iter().map(|w| w.value.clone()).collect();
        assert!(values.contains(&json!("brave")), "{values:?}");
        assert!(values.contains(&json!("reckless")), "{values:?}");
        let human_write = log.iter().find(|w| w.value == json!("brave")).unwrap();
        assert_eq!(human_write.origin, "human");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random interleavings of typing and agent appends on two devices, with updates
    /// delivered in random batches: both converge, and every token is there exactly once.
    #[test]
    fn random_interleavings_converge_and_keep_every_edit_once(
        steps in prop::collection::vec((0u8..5, 0usize..1000), 1..40)
    ) {
        let mut a = Device::first("[s]");
        let mut b = Device::join("b", &a);
        a.outbox.clear();
        let mut tokens = vec!["[s]".to_string()];
        for (n, (kind, pick)) in steps.into_iter().enumerate() {
            match kind {
                0 | 1 => {
                    let device = if kind == 0 { &mut a } else { &mut b };
                    let spots = boundaries(&device.text());
                    let token = format!("[{}{n}]", device.name);
                    device.type_at(spots[pick % spots.len()], &token);
                    tokens.push(token);
                }
                2 | 3 => {
                    let device = if kind == 2 { &mut a } else { &mut b };
                    let spots = boundaries(&device.text());
                    let token = format!("[{}-agent{n}]", device.name);
                    device.agent_at(spots[pick % spots.len()], &token);
                    tokens.push(token);
                }
                _ => {
                    // Deliver part of one side's outbox.
                    let (from, to) = if pick % 2 == 0 { (&mut a, &mut b) } else { (&mut b, &mut a) };
                    let k = pick % (from.outbox.len() + 1);
                    let batch: Vec<Vec<u8>> = from.outbox.drain(..k).collect();
                    let name = from.name;
                    for u in &batch {
                        to.receive(u, name);
                    }
                }
            }
        }
        exchange(&mut a, &mut b);
        prop_assert_eq!(a.text(), b.text());
        let text = a.text();
        for token in &tokens {
            prop_assert_eq!(text.matches(token.as_str()).count(), 1, "{} in {}", token, text);
        }
        let total: usize = tokens.iter().map(|t| t.chars().count()).sum();
        prop_assert_eq!(text.chars().count(), total);
    }
}
