//! Scenes in the manuscript: where each one sits, the order a reader meets them in, and what
//! a first-time reader knows at the end of one.
//!
//! A scene is *placed* in the chapter its entry names (by id, else by number or title) over its
//! span (char offsets, clamped to the chapter; a scene without a span covers its whole
//! chapter). Scenes are in *reading order*: by chapter (in the project's order), then by the
//! start of their span, then by end, then by id; a scene whose chapter is not in the project
//! comes last.
//!
//! A [`Reader`] has read the manuscript from the start up to a point and nothing more: a
//! *name* (a character's or location's `name_src`, `name_tgt` or alias) is *seen* when it
//! occurs in that text as a whole word (case-sensitive, as [`mentions`] finds names), and the
//! reader knows an entity by its seen names only.

use serde_json::Value;

use super::mentions::{self, names_of};
use super::{Bible, Entity, Kind};
use crate::project::{Chapter, Project};

/// What stands for a name a reader has not met yet.
pub const NOT_YET_INTRODUCED: &str = "[not yet introduced]";

/// A scene placed in the manuscript: its chapter's index (if the chapter is in the project),
/// and its span, in chars of that chapter.
#[derive(Debug)]
pub struct Placed<'a> {
    /// The scene's entry.
    pub scene: &'a Entity,
    /// The index of its chapter in the project, if the chapter is there.
    pub chapter: Option<usize>,
    /// Where it starts.
    pub start: usize,
    /// Where it ends (exclusive).
    pub end: usize,
}

impl Placed<'_> {
    /// Place `scene` in `project`.
    pub fn new<'a>(project: &Project, scene: &'a Entity) -> Placed<'a> {
        let span = scene.get("span");
        let at = |key: &str| span.get(key).and_then(Value::as_u64);
        let at = |key: &str| at(key).map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        // The chapter a scene names (by id, else number or title).
        let name = scene.text("chapter").trim();
        let by_number = || project.find_chapter(name).ok();
        let found = project.chapter(name).or_else(by_number);
        let chapter = found.filter(|_| !name.is_empty());
        let index = chapter.and_then(|c| Some((project.chapter_index(&c.id)?, c.len_chars())));
        let (start, end) = (at("start").unwrap_or(0), at("end"));
        let (chapter, end) = match index {
            Some((i, len)) => (Some(i), end.unwrap_or(len).min(len)),
            None => (None, end.unwrap_or(0)),
        };
        let start = start.min(if chapter.is_some() { end } else { start });
        Placed {
            scene,
            chapter,
            start,
            end,
        }
    }

    /// Where the scene ends in reading order.
    pub fn end_key(&self) -> (usize, usize) {
        (self.chapter.unwrap_or(usize::MAX), self.end)
    }

    /// The scene's text ("" when its chapter is not in the project).
    pub fn text(&self, project: &Project) -> String {
        let chapter = self.chapter.map(|i| &project.chapters[i]);
        let text = |c: &Chapter| c.slice(self.start, self.end);
        chapter.map(text).unwrap_or_default()
    }

    /// The scene's lines: the non-empty lines of its text, trimmed.
    pub fn lines(&self, project: &Project) -> Vec<String> {
        let text = self.text(project);
        let lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        lines.map(str::to_string).collect()
    }

    /// Its chapter's number (from 1), if the chapter is in the project.
    pub fn number(&self) -> Option<usize> {
        self.chapter.map(|i| i + 1)
    }
}

/// Every scene in reading order.
pub fn in_reading_order<'a>(bible: &'a Bible, project: &Project) -> Vec<Placed<'a>> {
    let place = |s| Placed::new(project, s);
    let mut all: Vec<Placed<'a>> = bible.list(Kind::Scene).map(place).collect();
    all.sort_by_key(|p| (p.end_key().0, p.start, p.end, p.scene.id.clone()));
    all
}

/// The ids of every scene in reading order.
pub fn scene_ids_in_order(bible: &Bible, project: &Project) -> Vec<String> {
    let scenes = in_reading_order(bible, project).into_iter();
    scenes.map(|p| p.scene.id.clone()).collect()
}

/// What a first-time reader knows at a point of the manuscript: (kind, id, name) of every
/// seen name of a character or location.
#[derive(Debug)]
pub struct Reader<'a> {
    bible: &'a Bible,
    /// The names seen so far.
    seen: std::collections::BTreeMap<(Kind, String, String), ()>,
}

impl<'a> Reader<'a> {
    /// The reader who has read `project` up to char `end` of chapter `chapter` (an index).
    pub fn new(bible: &'a Bible, project: &Project, chapter: usize, end: usize) -> Self {
        let before = &project.chapters[..chapter];
        let mut read: Vec<String> = before.iter().map(|c| c.text().to_string()).collect();
        read.push(project.chapters[chapter].slice(0, end));
        let mut seen = std::collections::BTreeMap::new();
        for e in bible
            .list(Kind::Character)
            .chain(bible.list(Kind::Location))
        {
            for name in names_of(e) {
                if read.iter().any(|t| mentions::contains_word(t, &name)) {
                    seen.insert((e.kind, e.id.clone(), name), ());
                }
            }
        }
        Self { bible, seen }
    }

    /// The seen names of an entity, longest first.
    pub fn seen_names(&self, kind: Kind, id: &str) -> Vec<String> {
        let mut names = self.bible.get(kind, id).map(names_of).unwrap_or_default();
        names.retain(|n| self.seen.contains_key(&(kind, id.to_string(), n.clone())));
        names
    }

    /// How the reader knows each of the entities `ids`: its longest seen name, or
    /// [`NOT_YET_INTRODUCED`].
    pub fn display(&self, kind: Kind, ids: &[&str]) -> Vec<String> {
        let name = |id: &&str| self.seen_names(kind, id).into_iter().next();
        let placeholder = || NOT_YET_INTRODUCED.to_string();
        let known = |id: &&str| name(id).unwrap_or_else(placeholder);
        ids.iter().map(known).collect()
    }

    /// `text` with every mention of an unseen name replaced by [`NOT_YET_INTRODUCED`].
    pub fn redact(&self, text: &str) -> String {
        let found = mentions::detect(self.bible, text);
        let unseen = |m: &&mentions::Mention| {
            !self
                .seen
                .contains_key(&(m.kind, m.id.clone(), m.name.clone()))
        };
        let mut next = found.iter().filter(unseen).peekable();
        let (mut out, mut skip_to) = (String::with_capacity(text.len()), 0);
        for (i, c) in text.chars().enumerate() {
            if let Some(m) = next.next_if(|m| m.start == i) {
                out.push_str(NOT_YET_INTRODUCED);
                skip_to = m.end;
            }
            if i >= skip_to {
                out.push(c);
            }
        }
        out
    }

    /// Each item [redacted](Self::redact).
    pub fn redact_list(&self, items: &[&str]) -> Vec<String> {
        items.iter().map(|s| self.redact(s)).collect()
    }

    /// Every entity of `kind` the reader has met, with the names they know (longest first).
    pub fn known(&self, kind: Kind) -> Vec<(&'a Entity, Vec<String>)> {
        let known = |e: &'a Entity| (e, self.seen_names(kind, &e.id));
        let known = self.bible.list(kind).map(known);
        known.filter(|(_, names)| !names.is_empty()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bible::Actor;
    use crate::project::Chapter;
    use serde_json::json;

    fn add(b: &mut Bible, kind: Kind, id: &str, fields: Value) {
        let fields = fields.as_object().unwrap().clone().into_iter().collect();
        b.create(kind, id, fields, &Actor::Human, 0).unwrap();
    }

    fn story() -> (Bible, Project) {
        let one = Chapter::new("c1", "One", "Mara rode north. Tom waited.");
        let two = Chapter::new("c2", "Two", "At Greyhaven, Mara met Ilse.");
        let project = Project::new("p", "P", vec![one, two]);
        let mut b = Bible::new();
        add(&mut b, Kind::Character, "mara", json!({"name_src": "Mara"}));
        add(&mut b, Kind::Character, "ilse", json!({"name_src": "Ilse"}));
        add(
            &mut b,
            Kind::Location,
            "gh",
            json!({"name_src": "Greyhaven"}),
        );
        let span = |start: u64, end: u64| json!({"start": start, "end": end});
        add(
            &mut b,
            Kind::Scene,
            "late",
            json!({"chapter": "c2", "span": span(0, 12)}),
        );
        add(
            &mut b,
            Kind::Scene,
            "b",
            json!({"chapter": "c1", "span": span(17, 99)}),
        );
        add(
            &mut b,
            Kind::Scene,
            "a",
            json!({"chapter": "1", "span": span(0, 16)}),
        );
        add(&mut b, Kind::Scene, "lost", json!({"chapter": "c9"}));
        (b, project)
    }

    #[test]
    fn scenes_are_placed_and_ordered_as_a_reader_meets_them() {
        let (b, project) = story();
        let order = scene_ids_in_order(&b, &project);
        assert_eq!(order, ["a", "b", "late", "lost"]);
        let all = in_reading_order(&b, &project);
        // A chapter named by number; an end past the chapter is clamped to it.
        assert_eq!((all[0].chapter, all[0].number()), (Some(0), Some(1)));
        assert_eq!((all[1].start, all[1].end), (17, 28));
        assert_eq!(all[1].text(&project), "Tom waited.");
        assert_eq!(all[0].lines(&project), ["Mara rode north."]);
        assert_eq!((all[3].chapter, all[3].text(&project).as_str()), (None, ""));
        assert!(all[2].end_key() < all[3].end_key());
    }

    #[test]
    fn a_reader_knows_only_the_names_read_so_far() {
        let (b, project) = story();
        let reader = Reader::new(&b, &project, 1, 12);
        assert_eq!(
            reader.redact("Ilse and Mara at Greyhaven"),
            "[not yet introduced] and Mara at Greyhaven"
        );
        let shown = reader.display(Kind::Character, &["ilse", "mara"]);
        assert_eq!(shown, [NOT_YET_INTRODUCED, "Mara"]);
        let met: Vec<&str> = reader
            .known(Kind::Character)
            .iter()
            .map(|k| k.0.id.as_str())
            .collect();
        assert_eq!(met, ["mara"]);
        assert_eq!(
            Reader::new(&b, &project, 1, 28)
                .known(Kind::Character)
                .len(),
            2
        );
    }
}
