//! navigate_to_text, jump_to_chapter and jump_to_scene on a fixture novel of more than 50,000
//! words with dialogue in three quoting styles (plus em-dash dialogue).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::novel::{self, PLANTED, RARE_CHARACTER, RARE_CHARACTER_CHAPTER};
use draftsmith::commands::Origin;
use draftsmith::project::{Chapter, Project};
use draftsmith::session::{Session, ToolCall};
use draftsmith::tools::ToolRegistry;
use draftsmith::{ManualClock, SequentialIds};
use serde_json::{json, Value};

struct Fixture {
    s: Session,
    registry: ToolRegistry,
    clock: ManualClock,
    ids: SequentialIds,
}

impl Fixture {
    fn new() -> Self {
        let chapters = novel::novel()
            .into_iter()
            .enumerate()
            .map(|(i, (title, text))| Chapter::new(format!("ch-{}", i + 1), title, &text))
            .collect();
        Self {
            s: Session::new(Project::new("p", "The Lighthouse", chapters)),
            registry: ToolRegistry::standard(),
            clock: ManualClock::new(0),
            ids: SequentialIds::new("id"),
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        let out = self.s.execute(
            &self.registry,
            ToolCall {
                id: None,
                name: tool.into(),
                args,
            },
            Origin::Agent("nav".into()),
            &self.clock,
            &self.ids,
        );
        serde_json::to_value(&out.result).unwrap()
    }

    fn ok(&mut self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args.clone());
        assert_eq!(r["status"], "success", "{tool} {args} -> {r}");
        r["data"].clone()
    }

    /// The chapter index and char range of a planted passage.
    fn planted_span(&self, i: usize) -> (usize, usize, usize) {
        let p = &PLANTED[i];
        let text = self.s.project.chapters[p.chapter].text().to_string();
        let byte = text.find(p.text).expect("planted text present");
        let start = text[..byte].chars().count();
        (p.chapter, start, start + p.text.chars().count())
    }

    fn selected(&self) -> (String, (usize, usize)) {
        let ui = &self.s.project.ui;
        (ui.active_chapter.clone().unwrap(), ui.selection.unwrap())
    }
}

/// Lowercase, swap curly and straight double quotes, and change one letter.
fn mangle(text: &str) -> String {
    let mut out: Vec<char> = text
        .to_lowercase()
        .chars()
        .map(|c| match c {
            '“' | '”' => '"',
            '"' => '“',
            '’' => '\'',
            '«' => '"',
            '»' => '"',
            '—' => '-',
            c => c,
        })
        .collect();
    let middle = out.len() / 2;
    let at = (middle..out.len())
        .find(|&i| out[i].is_ascii_lowercase())
        .unwrap();
    out[at] = if out[at] == 'x' { 'y' } else { 'x' };
    out.into_iter().collect()
}

#[test]
fn the_fixture_is_a_novel_of_more_than_50k_words() {
    assert!(novel::word_count(&novel::novel()) >= 50_000);
}

#[test]
fn exact_finds_every_planted_passage_and_selects_it() {
    let mut f = Fixture::new();
    for (i, p) in PLANTED.iter().enumerate() {
        let data = f.ok(
            "navigate_to_text",
            json!({"query": p.text, "searchType": "exact"}),
        );
        let (chapter, start, end) = f.planted_span(i);
        assert_eq!(data["chapterNumber"], chapter + 1, "{}", p.text);
        assert_eq!(
            (
                data["start"].as_u64().unwrap() as usize,
                data["end"].as_u64().unwrap() as usize
            ),
            (start, end)
        );
        assert_eq!(data["score"], 1.0);
        assert_eq!(f.selected(), (format!("ch-{}", chapter + 1), (start, end)));
    }
}

#[test]
fn exact_misses_a_mangled_query_and_points_to_fuzzy() {
    let mut f = Fixture::new();
    let r = f.call(
        "navigate_to_text",
        json!({"query": mangle(PLANTED[1].text)}),
    );
    assert_eq!(r["status"], "error");
    assert_eq!(r["data"]["code"], "not_found");
    let message = r["data"]["message"].as_str().unwrap();
    assert!(message.contains("closest text"), "{message}");
    assert!(message.contains("fuzzy"), "{message}");
}

#[test]
fn fuzzy_finds_typoed_and_requoted_passages() {
    let mut f = Fixture::new();
    for (i, p) in PLANTED.iter().enumerate() {
        let query = mangle(p.text);
        let data = f.ok(
            "navigate_to_text",
            json!({"query": query, "searchType": "fuzzy"}),
        );
        let (chapter, start, end) = f.planted_span(i);
        assert_eq!(
            data["chapterNumber"],
            chapter + 1,
            "query {query:?} -> {data}"
        );
        let (s, e) = (
            data["start"].as_u64().unwrap() as usize,
            data["end"].as_u64().unwrap() as usize,
        );
        assert!(
            s < end && start < e,
            "{query:?}: {s}..{e} does not overlap {start}..{end}"
        );
        // It finds (almost) the whole passage, not a fragment.
        assert!(
            e - s + 3 >= end - start,
            "{query:?}: {s}..{e} vs {start}..{end}"
        );
        let score = data["score"].as_f64().unwrap();
        assert!((0.75..=1.0).contains(&score), "{score}");
    }
}

#[test]
fn fuzzy_from_a_later_active_chapter_still_finds_an_early_passage() {
    let mut f = Fixture::new();
    f.ok("jump_to_chapter", json!({"chapter": "twenty"}));
    let data = f.ok("navigate_to_text", json!({"query": "the lighthouse keeper countd the gulls twice before dawn", "searchType": "fuzzy"}));
    assert_eq!(data["chapterNumber"], 1);
}

#[test]
fn dialogue_finds_spoken_lines_in_every_quoting_style() {
    let mut f = Fixture::new();
    for (i, p) in PLANTED
        .iter()
        .enumerate()
        .filter(|(_, p)| p.kind != "narration")
    {
        // The spoken words only, with no quote marks and a typo.
        let words: String = p
            .text
            .chars()
            .filter(|c| c.is_alphanumeric() || c.is_whitespace() || *c == '\'' || *c == '’')
            .collect();
        let words = words
            .split_whitespace()
            .take(7)
            .collect::<Vec<_>>()
            .join(" ");
        let query = mangle(&words);
        let data = f.ok(
            "navigate_to_text",
            json!({"query": query, "searchType": "dialogue"}),
        );
        let (chapter, start, end) = f.planted_span(i);
        assert_eq!(
            data["chapterNumber"],
            chapter + 1,
            "{} ({}) -> {data}",
            p.text,
            p.kind
        );
        let (s, e) = (
            data["start"].as_u64().unwrap() as usize,
            data["end"].as_u64().unwrap() as usize,
        );
        assert!(
            start <= s && e <= end,
            "{}: span {s}..{e} outside {start}..{end}",
            p.kind
        );
        let spoken = data["text"].as_str().unwrap();
        let opener = spoken.chars().next().unwrap();
        let expected = match p.kind {
            "curly" => '“',
            "straight" => '"',
            "guillemets" => '«',
            _ => '—',
        };
        assert_eq!(opener, expected, "{spoken:?}");
    }
}

#[test]
fn dialogue_search_does_not_land_in_narration() {
    let mut f = Fixture::new();
    let (chapter, start, end) = f.planted_span(0);
    let r = f.call(
        "navigate_to_text",
        json!({"query": PLANTED[0].text, "searchType": "dialogue"}),
    );
    if r["status"] == "success" {
        let d = &r["data"];
        let s = d["start"].as_u64().unwrap() as usize;
        assert!(
            d["chapterNumber"] != chapter + 1
                || s >= end
                || (d["end"].as_u64().unwrap() as usize) <= start,
            "landed in narration: {d}"
        );
    }
}

#[test]
fn character_mention_finds_names_and_their_parts() {
    let mut f = Fixture::new();
    let data = f.ok(
        "navigate_to_text",
        json!({"query": RARE_CHARACTER, "searchType": "character_mention"}),
    );
    assert_eq!(data["chapterNumber"], RARE_CHARACTER_CHAPTER + 1);
    assert_eq!(data["text"], RARE_CHARACTER);
    let total = data["totalMentions"].as_u64().unwrap();
    let full = novel::full_text(&novel::novel());
    assert_eq!(total as usize, full.matches(RARE_CHARACTER).count());
    assert_eq!(data["mentionsByChapter"].as_array().unwrap().len(), 1);

    // A first name alone, lowercase: whole-word and case-insensitive.
    let data = f.ok(
        "navigate_to_text",
        json!({"query": "ysolde", "searchType": "character_mention"}),
    );
    assert_eq!(data["chapterNumber"], RARE_CHARACTER_CHAPTER + 1);
    assert_eq!(data["text"], "Ysolde");

    // A name that is not whole in the text falls back to its parts.
    let data = f.ok(
        "navigate_to_text",
        json!({"query": "Mara Quillfeather", "searchType": "character_mention"}),
    );
    assert_eq!(data["matchedNames"], json!(["Mara"]));
    assert_eq!(data["text"], "Mara");

    // Nobody by that name.
    let r = f.call(
        "navigate_to_text",
        json!({"query": "Zebulon", "searchType": "character_mention"}),
    );
    assert_eq!(r["data"]["code"], "not_found");
}

#[test]
fn jump_to_chapter_accepts_numbers_words_and_titles() {
    let mut f = Fixture::new();
    for (query, number) in [
        ("3", 3),
        ("Chapter 3", 3),
        ("three", 3),
        ("third", 3),
        ("Chapter XII", 12),
        ("twenty", 20),
        ("The Last Lamp", 20),
        ("last lamp", 20),
        ("lighthouse", 1),
    ] {
        let data = f.ok("jump_to_chapter", json!({"chapter": query}));
        assert_eq!(data["chapterNumber"], number, "{query}");
        assert_eq!(
            f.s.project.ui.active_chapter.as_deref(),
            Some(format!("ch-{number}").as_str())
        );
    }
    let r = f.call("jump_to_chapter", json!({"chapter": "Chapter 99"}));
    assert_eq!(r["data"]["code"], "not_found");
    assert!(r["data"]["message"]
        .as_str()
        .unwrap()
        .contains("chapters are: 1 \"Chapter 1: The Lighthouse\""));
}

#[test]
fn jump_to_scene_walks_scenes_forward_and_back_across_chapters() {
    let mut f = Fixture::new();
    f.ok("jump_to_chapter", json!({"chapter": "1"}));
    let mut starts = Vec::new();
    for _ in 0..6 {
        let d = f.ok("jump_to_scene", json!({"direction": "next"}));
        starts.push((
            d["chapterNumber"].as_u64().unwrap(),
            d["start"].as_u64().unwrap(),
        ));
        assert_eq!(f.s.project.ui.cursor as u64, d["start"].as_u64().unwrap());
    }
    let mut sorted = starts.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, starts, "scenes move strictly forward: {starts:?}");
    let back = f.ok("jump_to_scene", json!({"direction": "previous"}));
    assert_eq!(
        (
            back["chapterNumber"].as_u64().unwrap(),
            back["start"].as_u64().unwrap()
        ),
        starts[4]
    );
    // A typed jump lands on a scene of that type.
    f.ok("jump_to_chapter", json!({"chapter": "1"}));
    let d = f.ok("jump_to_scene", json!({"sceneType": "dialogue"}));
    assert_eq!(d["kind"], "dialogue");
}
