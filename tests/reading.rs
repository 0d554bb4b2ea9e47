//! The reading tools: `list_chapters`, `read_chapter` (line numbers, the per-call budget,
//! continuation, errors) and `search_manuscript` (literal and regex, limits, excerpts,
//! positions), their toolsets, and that they change nothing.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::commands::{Category, Origin};
use draftsmith::project::analysis;
use draftsmith::project::Chapter;
use draftsmith::tools::reading::{LINE_MARK, READ_BUDGET_CHARS};
use draftsmith::tools::{ToolRegistry, ALL, QUICK, VOICE_SAFE};
use serde_json::{json, Value};

mod common;

const CH1: &str = "Mara climbed the stair. The lamp was dark.\n\n“Who’s there?” she called. Nobody answered.\n\nThe wind rose.";
const CH2: &str = "Morning came grey over Greyhaven.\r\nThe lamp was cold.";

type T = common::session::Harness;

impl T {
    fn with(chapters: Vec<Chapter>) -> Self {
        Self::project("Lighthouse", chapters)
    }

    fn new() -> Self {
        Self::with(vec![
            Chapter::new("c1", "The Stair", CH1),
            Chapter::new("c2", "Morning", CH2),
        ])
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        let out = self.run_call(Origin::Agent("reader".into()), "call-1", tool, args);
        if draftsmith::tools::reading::TOOLS.contains(&tool) {
            assert!(out.edits.is_empty(), "{tool} edited");
            assert!(!out.ui_changed, "{tool} changed the UI state");
        }
        serde_json::to_value(&out.result).unwrap()
    }

    fn ok(&mut self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args.clone());
        assert_eq!(r["status"], "success", "{tool} {args} -> {r}");
        r["data"].clone()
    }

    fn err(&mut self, tool: &str, args: Value) -> (String, String) {
        let r = self.call(tool, args.clone());
        assert_eq!(r["status"], "error", "{tool} {args} -> {r}");
        (
            r["data"]["code"].as_str().unwrap().to_string(),
            r["data"]["message"].as_str().unwrap().to_string(),
        )
    }
}

/// The text of `read_chapter`'s `text`, line numbers removed, checking the numbering.
fn strip_numbers(text: &str, from: usize) -> Vec<String> {
    text.split('\n')
        .enumerate()
        .map(|(i, line)| {
            let (number, rest) = line.split_once(LINE_MARK).expect("a line number mark");
            assert_eq!(number.trim().parse::<usize>().unwrap(), from + i, "{line}");
            rest.to_string()
        })
        .collect()
}

#[test]
fn the_reading_tools_are_read_only_and_in_every_reading_toolset() {
    let registry = ToolRegistry::standard();
    let names = |set: &str| -> Vec<&str> {
        registry
            .toolset(set)
            .unwrap()
            .iter()
            .map(|d| d.name.as_ref())
            .collect()
    };
    for tool in draftsmith::tools::reading::TOOLS {
        let def = registry.definition(tool).unwrap();
        assert!(def.read_only && !def.reversible, "{tool}");
        assert_eq!(def.category, Category::Knowledge, "{tool}");
        for set in [ALL, QUICK, VOICE_SAFE] {
            assert!(names(set).contains(&tool), "{tool} missing from {set}");
        }
    }
    // The description tells a model how the numbers relate to the text.
    let read = &registry.definition("read_chapter").unwrap().description;
    assert!(read.contains("NOT part of the manuscript") && read.contains("update_manuscript"));
    assert!(read.contains(LINE_MARK.trim()));
    let props = &registry.definition("read_chapter").unwrap().parameters["properties"];
    assert!(props["from_line"].is_object() && props["to_line"].is_object());
}

#[test]
fn list_chapters_numbers_measures_and_marks_the_active_chapter() {
    let mut t = T::new();
    let list = t.ok("list_chapters", json!({}));
    assert_eq!(list["project"], "Lighthouse");
    assert_eq!(list["chapterCount"], 2);
    assert_eq!(list["activeChapter"], "c1");
    let c1 = &list["chapters"][0];
    assert_eq!(c1["number"], 1);
    assert_eq!(c1["id"], "c1");
    assert_eq!(c1["title"], "The Stair");
    assert_eq!(c1["chars"], CH1.chars().count());
    assert_eq!(c1["words"], analysis::stats(CH1).words);
    assert_eq!(c1["words"], 17);
    assert_eq!(c1["lines"], 5);
    assert_eq!(c1["version"], 0);
    assert_eq!(c1["active"], true);
    assert_eq!(list["chapters"][1]["active"], false);
    assert_eq!(list["chapters"][1]["lines"], 2);

    // An edit changes the version and the counts; switching chapters moves the mark.
    t.ok(
        "update_manuscript",
        json!({"searchText": "The wind rose.", "replacementText": "The wind rose and fell."}),
    );
    t.ok("jump_to_chapter", json!({"chapter": "2"}));
    let list = t.ok("list_chapters", json!({}));
    assert_eq!(list["chapters"][0]["version"], 1);
    assert_eq!(list["chapters"][0]["words"], 19);
    assert_eq!(list["chapters"][0]["active"], false);
    assert_eq!(list["chapters"][1]["active"], true);
    assert_eq!(list["activeChapter"], "c2");
}

#[test]
fn read_chapter_shows_numbered_lines_of_the_active_or_named_chapter() {
    let mut t = T::new();
    let read = t.ok("read_chapter", json!({}));
    assert_eq!(read["chapter"], "c1");
    assert_eq!(read["chapterNumber"], 1);
    assert_eq!(read["chapterTitle"], "The Stair");
    assert_eq!(read["version"], 0);
    assert_eq!(read["fromLine"], 1);
    assert_eq!(read["toLine"], 5);
    assert_eq!(read["totalLines"], 5);
    assert_eq!(read["nextFromLine"], Value::Null);
    assert_eq!(read["note"], "lines 1–5 of 5 (the whole chapter)");
    let text = read["text"].as_str().unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        "1│ Mara climbed the stair. The lamp was dark."
    );
    assert_eq!(strip_numbers(text, 1).join("\n"), CH1);
    assert_eq!(read["start"], 0);
    assert_eq!(read["end"], CH1.chars().count());

    // By number, by title; \r\n shows as a line break (the \r is not shown).
    for name in ["2", "Morning", "c2", "chapter 2"] {
        let read = t.ok("read_chapter", json!({ "chapter": name }));
        assert_eq!(read["chapter"], "c2", "{name}");
        let lines = strip_numbers(read["text"].as_str().unwrap(), 1);
        assert_eq!(
            lines,
            ["Morning came grey over Greyhaven.", "The lamp was cold."]
        );
    }
    // A chapter number sent as a JSON number works too.
    assert_eq!(t.ok("read_chapter", json!({"chapter": 2}))["chapter"], "c2");

    // A range, with camelCase accepted as well.
    let read = t.ok("read_chapter", json!({"from_line": 3, "to_line": 3}));
    assert_eq!(
        read["text"],
        "3│ “Who’s there?” she called. Nobody answered."
    );
    assert_eq!(
        read["note"],
        "lines 3–3 of 5 (as asked; the chapter goes on: call again with from_line 4 to read on)"
    );
    let start = read["start"].as_u64().unwrap() as usize;
    let end = read["end"].as_u64().unwrap() as usize;
    let chars: Vec<char> = CH1.chars().collect();
    assert_eq!(
        chars[start..end].iter().collect::<String>(),
        "“Who’s there?” she called. Nobody answered."
    );
    let read = t.ok("read_chapter", json!({"fromLine": 4, "toLine": 99}));
    assert_eq!(read["fromLine"], 4);
    assert_eq!(read["toLine"], 5);
    assert_eq!(read["text"], "4│ \n5│ The wind rose.");
    assert_eq!(read["note"], "lines 4–5 of 5 (to the end of the chapter)");

    // An empty chapter has one empty line.
    let mut t = T::with(vec![Chapter::new("e", "Empty", "")]);
    let read = t.ok("read_chapter", json!({}));
    assert_eq!(read["totalLines"], 1);
    assert_eq!(read["text"], "1│ ");
}

#[test]
fn read_chapter_refuses_bad_ranges_and_says_what_is_valid() {
    let mut t = T::new();
    let (code, message) = t.err("read_chapter", json!({"from_line": 0}));
    assert_eq!(code, "invalid_args");
    assert!(
        message.contains("1-based") && message.contains("(1 to 5)"),
        "{message}"
    );
    let (code, message) = t.err("read_chapter", json!({"from_line": 6}));
    assert_eq!(code, "out_of_range");
    assert!(
        message.contains("from_line 6 is past the end")
            && message.contains("chapter 1 \"The Stair\" has 5 lines (1 to 5)"),
        "{message}"
    );
    let (code, message) = t.err("read_chapter", json!({"from_line": 4, "to_line": 2}));
    assert_eq!(code, "invalid_args");
    assert!(
        message.contains("to_line 2 is before from_line 4"),
        "{message}"
    );
    let (code, _) = t.err("read_chapter", json!({"to_line": 0}));
    assert_eq!(code, "invalid_args");
    let (code, message) = t.err("read_chapter", json!({"from_line": -1}));
    assert_eq!(code, "invalid_args", "{message}");
    let (code, message) = t.err("read_chapter", json!({"chapter": "Nowhere"}));
    assert_eq!(code, "not_found");
    assert!(
        message.contains("The Stair") && message.contains("Morning"),
        "{message}"
    );
}

#[test]
fn read_chapter_takes_the_start_of_an_id_only_one_chapter_has() {
    // A model copying a UUID from a tool result may stop before its last group.
    let mut t = T::with(vec![
        Chapter::new("123f2600-9a61-4ec1-9cd5-4b1e0a7c2d11", "The Stair", CH1),
        Chapter::new("123f2600-77aa-4f00-8e21-90c3d5e6f7a8", "Morning", CH2),
    ]);
    for (prefix, id) in [
        (
            "123f2600-9a61-4ec1-9cd5",
            "123f2600-9a61-4ec1-9cd5-4b1e0a7c2d11",
        ),
        ("123f2600-9", "123f2600-9a61-4ec1-9cd5-4b1e0a7c2d11"),
        (" 123f2600-77aa ", "123f2600-77aa-4f00-8e21-90c3d5e6f7a8"),
    ] {
        assert_eq!(
            t.ok("read_chapter", json!({ "chapter": prefix }))["chapter"],
            id,
            "{prefix}"
        );
    }
    // A start both ids share, one too short to stand for an id, and one no id has are
    // refused, with the chapters listed.
    for query in ["123f2600", "123f2600-", "4b1e0a7c2d11", "123f260"] {
        let (code, message) = t.err("read_chapter", json!({ "chapter": query }));
        assert_eq!(code, "not_found", "{query}");
        assert!(
            message.contains("123f2600-9a61-4ec1-9cd5-4b1e0a7c2d11 ")
                || message.contains("(123f2600-9a61-4ec1-9cd5-4b1e0a7c2d11)"),
            "{query}: {message}"
        );
    }
}

#[test]
fn read_chapter_stops_at_a_whole_line_within_the_budget_and_says_where_to_go_on() {
    // 300 lines of 61 chars: about 130 lines fit in one call.
    let lines: Vec<String> = (1..=300)
        .map(|i| format!("Line {i:03}: {}", "x".repeat(50)))
        .collect();
    let text = lines.join("\n");
    let mut t = T::with(vec![Chapter::new("long", "Long", &text)]);
    let first = t.ok("read_chapter", json!({}));
    let to = first["toLine"].as_u64().unwrap() as usize;
    let shown = strip_numbers(first["text"].as_str().unwrap(), 1);
    assert_eq!(shown.len(), to);
    let shown_chars: usize = shown.iter().map(|l| l.chars().count()).sum();
    assert!(shown_chars <= READ_BUDGET_CHARS, "{shown_chars}");
    assert!(
        shown_chars + lines[to].chars().count() > READ_BUDGET_CHARS,
        "stopped early"
    );
    assert_eq!(first["nextFromLine"], to + 1);
    assert_eq!(
        first["note"],
        format!("lines 1–{to} of 300; call again with from_line {}", to + 1)
    );
    // Following the hints reads every line exactly once.
    let mut all = shown;
    let mut next = first["nextFromLine"].clone();
    let mut calls = 1;
    while let Some(from) = next.as_u64() {
        let read = t.ok("read_chapter", json!({ "from_line": from }));
        all.extend(strip_numbers(read["text"].as_str().unwrap(), from as usize));
        next = read["nextFromLine"].clone();
        calls += 1;
    }
    assert_eq!(all.join("\n"), text);
    assert_eq!(calls, 3);

    // A range larger than the budget says to go on with the same to_line.
    let read = t.ok("read_chapter", json!({"from_line": 10, "to_line": 290}));
    let to = read["toLine"].as_u64().unwrap();
    assert_eq!(
        read["note"],
        format!(
            "lines 10–{to} of 300; call again with from_line {} and to_line 290",
            to + 1
        )
    );
}

#[test]
fn a_line_longer_than_the_budget_is_cut_and_the_result_says_so() {
    let long = "é".repeat(READ_BUDGET_CHARS * 2 + 5);
    let text = format!("Short first line.\n{long}\nLast line.");
    let mut t = T::with(vec![Chapter::new("c", "Wide", &text)]);
    let first = t.ok("read_chapter", json!({}));
    assert_eq!(
        first["toLine"], 1,
        "the long line does not follow the first"
    );
    assert_eq!(first["nextFromLine"], 2);
    let read = t.ok("read_chapter", json!({"from_line": 2}));
    assert_eq!(read["fromLine"], 2);
    assert_eq!(read["toLine"], 2);
    assert_eq!(read["nextFromLine"], 3);
    assert_eq!(read["cutLine"]["line"], 2);
    assert_eq!(read["cutLine"]["chars"], READ_BUDGET_CHARS * 2 + 5);
    assert_eq!(read["cutLine"]["shownChars"], READ_BUDGET_CHARS);
    let shown = strip_numbers(read["text"].as_str().unwrap(), 2);
    assert_eq!(shown[0].chars().count(), READ_BUDGET_CHARS);
    let note = read["note"].as_str().unwrap();
    assert!(
        note.starts_with("lines 2–2 of 3; call again with from_line 3")
            && note.contains("line 2 is 16,005 chars long and only its first 8,000 are shown"),
        "{note}"
    );
    let last = t.ok("read_chapter", json!({"from_line": 3}));
    assert_eq!(last["text"], "3│ Last line.");
}

#[test]
fn reading_changes_nothing_and_records_nothing() {
    let mut t = T::new();
    let before = t.s.clone();
    t.ok("list_chapters", json!({}));
    t.ok("read_chapter", json!({"chapter": "2"}));
    t.ok("search_manuscript", json!({"query": "lamp"}));
    t.err("read_chapter", json!({"from_line": 99}));
    assert_eq!(t.s, before);
    assert!(t.s.history.entries().is_empty());
}

#[test]
fn search_finds_every_match_with_chapter_line_excerpt_and_positions() {
    let mut t = T::new();
    let found = t.ok("search_manuscript", json!({"query": "the LAMP"}));
    assert_eq!(found["total"], 2);
    assert_eq!(found["shown"], 2);
    assert_eq!(found["more"], 0);
    assert_eq!(found["note"], "2 matches in 2 chapters, all shown.");
    let m = &found["matches"][0];
    assert_eq!(m["chapter"], "c1");
    assert_eq!(m["chapterNumber"], 1);
    assert_eq!(m["chapterTitle"], "The Stair");
    assert_eq!(m["line"], 1);
    assert_eq!(m["match"], "The lamp");
    assert_eq!(m["excerpt"], "Mara climbed the stair. The lamp was dark.");
    let m = &found["matches"][1];
    assert_eq!(
        (m["chapter"].as_str(), m["line"].as_u64()),
        (Some("c2"), Some(2))
    );
    // Positions are chars in the chapter (after a \r\n here).
    let (start, end) = (m["start"].as_u64().unwrap(), m["end"].as_u64().unwrap());
    assert_eq!(
        t.s.project
            .chapter("c2")
            .unwrap()
            .slice(start as usize, end as usize),
        "The lamp"
    );

    // Case-sensitive, one chapter, regex.
    let found = t.ok(
        "search_manuscript",
        json!({"query": "the lamp", "case_sensitive": true}),
    );
    assert_eq!(found["total"], 0);
    assert!(found["note"]
        .as_str()
        .unwrap()
        .contains("No match for the text 'the lamp' in 2 chapters (case-sensitive)"));
    let found = t.ok(
        "search_manuscript",
        json!({"query": "lamp", "chapter": "Morning"}),
    );
    assert_eq!(found["total"], 1);
    assert!(found["note"]
        .as_str()
        .unwrap()
        .contains("chapter 2 \"Morning\""));
    let found = t.ok(
        "search_manuscript",
        json!({"query": r"\b(dark|cold)\.", "regex": true}),
    );
    assert_eq!(found["regex"], true);
    let matched: Vec<&str> = found["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["match"].as_str().unwrap())
        .collect();
    assert_eq!(matched, ["dark.", "cold."]);
    // A literal query is not a pattern.
    assert_eq!(
        t.ok("search_manuscript", json!({"query": "dark."}))["total"],
        1
    );
    assert_eq!(
        t.ok("search_manuscript", json!({"query": "d.rk"}))["total"],
        0
    );
}

#[test]
fn search_caps_matches_counts_the_rest_and_excerpts_long_lines() {
    let mut chapters = Vec::new();
    for c in 1..=3 {
        let lines: Vec<String> = (1..=40)
            .map(|i| format!("Chapter {c} line {i}: the bell rang twice, bell and bell."))
            .collect();
        chapters.push(Chapter::new(
            format!("c{c}"),
            format!("Part {c}"),
            &lines.join("\n"),
        ));
    }
    let long = format!("{} the bell {}", "a".repeat(500), "b".repeat(500));
    chapters.push(Chapter::new("c4", "Long", &long));
    let mut t = T::with(chapters);
    let found = t.ok("search_manuscript", json!({"query": "bell"}));
    assert_eq!(found["total"], 3 * 40 * 3 + 1);
    assert_eq!(found["shown"], 20);
    assert_eq!(found["more"], 3 * 40 * 3 + 1 - 20);
    assert!(found["note"]
        .as_str()
        .unwrap()
        .contains("361 matches in 4 chapters; the first 20 are shown, 341 more are not"));
    // In order: chapter, line, position in the line.
    let first: Vec<(u64, u64)> = found["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["line"].as_u64().unwrap(), m["start"].as_u64().unwrap()))
        .take(4)
        .collect();
    assert_eq!(first[0].0, 1);
    assert_eq!(first[1].0, 1);
    assert!(first[1].1 > first[0].1);
    assert_eq!(first[3].0, 2);

    let found = t.ok("search_manuscript", json!({"query": "bell", "limit": 1000}));
    assert_eq!(found["shown"], 200);
    assert!(found["note"].as_str().unwrap().contains("200 were allowed"));
    let found = t.ok(
        "search_manuscript",
        json!({"query": "the bell", "chapter": "4"}),
    );
    let excerpt = found["matches"][0]["excerpt"].as_str().unwrap();
    assert!(excerpt.starts_with('…') && excerpt.ends_with('…') && excerpt.contains("the bell"));
    assert!(
        excerpt.chars().count() <= 162,
        "{}",
        excerpt.chars().count()
    );

    let (code, message) = t.err("search_manuscript", json!({"query": "bell", "limit": 0}));
    assert_eq!(code, "invalid_args");
    assert!(message.contains("at least 1"), "{message}");
}

#[test]
fn search_refuses_bad_patterns_with_the_pattern_message() {
    let mut t = T::new();
    let (code, message) = t.err(
        "search_manuscript",
        json!({"query": "a{1000}{1000}", "regex": true}),
    );
    assert_eq!(code, "invalid_args");
    assert!(
        message.contains("not an accepted regular expression"),
        "{message}"
    );
    let (code, message) = t.err("search_manuscript", json!({"query": "a*", "regex": true}));
    assert_eq!(code, "invalid_args");
    assert!(message.contains("matches empty text"), "{message}");
    let (code, _) = t.err("search_manuscript", json!({"query": ""}));
    assert_eq!(code, "invalid_args");
    let (code, _) = t.err("search_manuscript", json!({}));
    assert_eq!(code, "invalid_args");
    let (code, _) = t.err("search_manuscript", json!({"query": "x", "chapter": "99"}));
    assert_eq!(code, "not_found");
}

#[test]
fn the_fixture_novel_reads_back_exactly_through_the_continuation_hints() {
    let novel = common::novel::novel();
    let chapters: Vec<Chapter> = novel
        .iter()
        .enumerate()
        .map(|(i, (title, text))| Chapter::new(format!("n{i}"), title.clone(), text))
        .collect();
    let mut t = T::with(chapters);
    let list = t.ok("list_chapters", json!({}));
    let words: u64 = list["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["words"].as_u64().unwrap())
        .sum();
    assert!(words > 50_000, "{words}");
    for (i, (_, text)) in novel.iter().enumerate().take(3) {
        let mut lines = Vec::new();
        let mut from = 1;
        loop {
            let read = t.ok(
                "read_chapter",
                json!({"chapter": (i + 1).to_string(), "from_line": from}),
            );
            lines.extend(strip_numbers(read["text"].as_str().unwrap(), from));
            match read["nextFromLine"].as_u64() {
                Some(next) => from = next as usize,
                None => break,
            }
        }
        assert_eq!(&lines.join("\n"), text);
    }
}

/// The last tool result in an OpenAI-format request: the `data` of the `{status, data,
/// meta}` the tool returned.
fn last_tool_data(request: &Value) -> Value {
    let messages = request["messages"].as_array().expect("messages");
    let tool = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .expect("a tool result in the transcript");
    let result: Value = serde_json::from_str(tool["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["status"], "success", "{result}");
    result["data"].clone()
}

/// The writer's prompt in an OpenAI-format request.
fn user_prompt(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_string()
}

/// The “quoted” parts of a prompt, in order.
fn quoted(s: &str) -> Vec<String> {
    s.split('“')
        .skip(1)
        .map(|part| part.split('”').next().unwrap().to_string())
        .collect()
}

#[test]
fn a_model_that_knows_nothing_lists_reads_and_edits_with_text_copied_from_the_read() {
    use common::page::{calls, says, Page, Reaction};

    // The model knows only what each request carries: the writer's prompt and the tool
    // results in the transcript. It finds the chapter by title, reads it, and copies the
    // line to change out of the numbered text.
    let reactions: Vec<Reaction> = vec![
        Box::new(|_: &Value| calls("call_1", "list_chapters", json!({}))),
        Box::new(|request: &Value| {
            let title = quoted(&user_prompt(request))[0].clone();
            let list = last_tool_data(request);
            let chapter = list["chapters"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["title"] == title.as_str())
                .expect("the chapter the writer named");
            calls(
                "call_2",
                "read_chapter",
                json!({"chapter": chapter["number"].to_string()}),
            )
        }),
        Box::new(|request: &Value| {
            let asked = quoted(&user_prompt(request));
            let (from, to) = (asked[1].as_str(), asked[2].as_str());
            let read = last_tool_data(request);
            let line = read["text"]
                .as_str()
                .unwrap()
                .lines()
                .map(|l| l.split_once("│ ").unwrap().1)
                .find(|l| l.contains(from))
                .expect("a line with the word")
                .to_string();
            calls(
                "call_3",
                "update_manuscript",
                json!({
                    "chapter": read["chapter"],
                    "searchText": line,
                    "replacementText": line.replace(from, to),
                }),
            )
        }),
        Box::new(|request: &Value| {
            let done = last_tool_data(request);
            says(&format!("Changed chapter {}.", done["chapterNumber"]))
        }),
    ];
    let page = Page::reacting(reactions);
    let lamp_room = "The lamp room was round.\n  “Is it lit?” she asked, naïvely.\n\nThe lamp was dark, and the sea was darker.\nNobody came.";
    page.ok(
        "create_project",
        json!({"name": "Lighthouse", "chapters": [
            {"title": "The Stair", "text": "Mara climbed the stair. It was dark."},
            {"title": "The Lamp Room", "text": lamp_room},
            {"title": "Morning", "text": "Morning came. The dark lifted."},
        ]}),
    );
    page.configure();
    let result = page.ok(
        "run",
        json!({"prompt": "In the chapter “The Lamp Room”, change “she asked, naïvely” to “she whispered”."}),
    );
    assert_eq!(result["status"], "finished", "{result}");
    assert_eq!(result["text"], "Changed chapter 2.");
    let chapter = page.ok("get_chapter", json!({"chapter": "2"}));
    assert_eq!(
        chapter["text"],
        lamp_room.replace(
            "\n  “Is it lit?” she asked, naïvely.\n",
            "\n  “Is it lit?” she whispered.\n"
        )
    );
    // The other chapters were not touched; the edit is one undoable agent turn.
    assert_eq!(
        page.ok("get_chapter", json!({"chapter": "1"}))["text"],
        "Mara climbed the stair. It was dark."
    );
    page.ok("undo", json!({}));
    assert_eq!(
        page.ok("get_chapter", json!({"chapter": "2"}))["text"],
        lamp_room
    );
    // Four model requests, each answered from what it carried.
    assert_eq!(page.transport.requests().len(), 4);
}
