//! The `[EDITOR CONTEXT]` block of a run's system prompt: what the writer sees, so an agent
//! knows where it is before it calls a tool. Built by one pure function,
//! [`editor_context_block`], from the project (chapters, the editor's UI state) and the story
//! bible; the core puts it after the agent's instructions and before `[AGENT MEMORY]`.
//!
//! Contents, in this order:
//! 1. the project's name, chapter count and words;
//! 2. the chapter list (number, title, words; the active one marked), at most
//!    [`MAX_LISTED_CHAPTERS`] entries around the active chapter, then a count of the rest;
//! 3. the active chapter (number, title, id, version, words, lines);
//! 4. the cursor (line and char) and the selection (lines, chars, length);
//! 5. the selected text (its middle left out when it is long);
//! 6. the paragraph around the cursor (or, on an empty line, the one before it), with `‸`
//!    where the cursor is;
//! 7. the story bible's counts per kind and its main characters: the characters most often
//!    listed as a scene's or route's `primary_characters`, then the most mentioned in the
//!    active chapter (whole-word, as [`crate::bible::mentions`] finds them), then by id; at
//!    most [`MAX_MAIN_CHARACTERS`];
//! 8. the toolset's name.
//!
//! **Budget.** Tokens are estimated as in the memory block ([`estimate_tokens`]: chars / 4).
//! The short lines (project, active chapter, cursor, bible, toolset) come first, each only if
//! it fits; the chapter list takes at most half of what is left; the selection and the
//! paragraph share the rest and are trimmed to it (parts shorter than [`MIN_TEXT_CHARS`] are
//! left out). The block's estimate never exceeds the budget; when not even the frame fits,
//! the block is empty. Only the text shown is copied out of the chapter, so the cost does not
//! grow with a long selection or paragraph.

use crate::project::Text;

use crate::bible::{mentions, Bible, Kind};
use crate::memory::context::{estimate_tokens, CHARS_PER_TOKEN};
use crate::names::{push_thousands, thousands};
use crate::project::{Chapter, Project};
use std::collections::BTreeMap;

/// The block's token budget in a run's system prompt.
pub const EDITOR_CONTEXT_TOKENS: usize = 1_000;
/// Most chapters listed (around the active one).
pub const MAX_LISTED_CHAPTERS: usize = 40;
/// Most main characters named.
pub const MAX_MAIN_CHARACTERS: usize = 8;
/// The selected text or the paragraph is left out rather than shown shorter than this.
pub const MIN_TEXT_CHARS: usize = 40;
/// Marks the cursor in the paragraph shown.
pub const CURSOR_MARK: char = '‸';
/// Longest title or name shown.
const NAME_CHARS: usize = 80;
/// How far (in lines) a paragraph is looked for or followed from the cursor's line.
const PARAGRAPH_LINES: usize = 200;

const OPEN: &str = "[EDITOR CONTEXT]\n";
const CLOSE: &str = "[/EDITOR CONTEXT]";

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn shorten(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    // Most names are one line of single spaces already, and short: taken as they are. One
    // pass tells (the list shortens a title per chapter listed).
    let mut count = 0;
    let mut after_space = true;
    let mut one_line_already = true;
    for c in text.chars() {
        count += 1;
        if c == ' ' {
            if after_space {
                one_line_already = false;
                break;
            }
            after_space = true;
        } else if c.is_whitespace() {
            one_line_already = false;
            break;
        } else {
            after_space = false;
        }
    }
    // A leading space was caught as a space after the start; a trailing one is caught here.
    one_line_already &= !text.ends_with(' ');
    if one_line_already && count <= max {
        return std::borrow::Cow::Borrowed(text);
    }
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if chars(&one_line) <= max {
        one_line.into()
    } else {
        let cut: String = one_line.chars().take(max).collect();
        format!("{cut}…").into()
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    let mut out = String::new();
    push_plural(&mut out, n, one, many);
    out
}

/// `n` with its thousands grouped, then `one` or `many`, pushed onto `out`.
fn push_plural(out: &mut String, n: usize, one: &str, many: &str) {
    push_thousands(out, n);
    out.push(' ');
    out.push_str(if n == 1 { one } else { many });
}

/// The `[EDITOR CONTEXT]` block for `project` and `bible` under `toolset`, within
/// `token_budget` tokens (see the [module docs](self)).
pub fn editor_context_block(
    project: &Project,
    bible: &Bible,
    toolset: &str,
    token_budget: usize,
) -> String {
    let limit = token_budget.saturating_mul(CHARS_PER_TOKEN);
    let frame = chars(OPEN) + chars(CLOSE);
    if frame > limit {
        return String::new();
    }
    let mut room = limit - frame;
    let active = project.active_chapter();

    // The short lines, in priority order; each only if it fits.
    let words: usize = project.chapters.iter().map(Chapter::word_count).sum();
    let project_line = format!(
        "Project: \"{}\", {}, {}.\n",
        shorten(&project.name, NAME_CHARS),
        plural(project.chapters.len(), "chapter", "chapters"),
        plural(words, "word", "words")
    );
    let active_line = active.map(|c| {
        format!(
            "Active chapter (open in the editor): {} \"{}\" (id {}, version {}, {}, {}).\n",
            number(project, c),
            shorten(&c.title, NAME_CHARS),
            c.id,
            c.version(),
            plural(c.word_count(), "word", "words"),
            plural(c.len_lines(), "line", "lines")
        )
    });
    let cursor_line = active.map(|c| cursor_line(project, c));
    let (bible_line, characters_line) = bible_lines(bible, active);
    let toolset_line = format!("Toolset: {}.\n", shorten(toolset, NAME_CHARS));

    let mut take = |line: Option<String>| -> Option<String> {
        let line = line?;
        let n = chars(&line);
        (n <= room).then(|| {
            room -= n;
            line
        })
    };
    let project_line = take(Some(project_line));
    let active_line = take(active_line);
    let cursor_line = take(cursor_line);
    let toolset_line = take(Some(toolset_line));
    let bible_line = take(Some(bible_line));
    let characters_line = take(characters_line);

    // The chapter list: at most half of what is left.
    let list = chapter_list(project, room / 2);
    room -= chars(&list);

    // The selection and the paragraph share the rest.
    let (selection, paragraph) = match active {
        Some(chapter) => texts(project, chapter, room),
        None => (String::new(), String::new()),
    };

    let mut out = String::from(OPEN);
    for part in [
        project_line.as_deref().unwrap_or(""),
        &list,
        active_line.as_deref().unwrap_or(""),
        cursor_line.as_deref().unwrap_or(""),
        &selection,
        &paragraph,
        bible_line.as_deref().unwrap_or(""),
        characters_line.as_deref().unwrap_or(""),
        toolset_line.as_deref().unwrap_or(""),
    ] {
        out.push_str(part);
    }
    out.push_str(CLOSE);
    debug_assert!(estimate_tokens(&out) <= token_budget);
    out
}

fn number(project: &Project, chapter: &Chapter) -> usize {
    project.chapter_index(&chapter.id).map_or(0, |i| i + 1)
}

/// The cursor and the selection, in lines and chars of the active chapter.
fn cursor_line(project: &Project, chapter: &Chapter) -> String {
    let rope = chapter.text();
    let len = chapter.len_chars();
    let cursor = project.ui.cursor.min(len);
    let mut line = format!(
        "Cursor: line {}, char {} of {} (chars count from 0).",
        rope.char_to_line(cursor) + 1,
        thousands(cursor),
        thousands(len)
    );
    match selection(project, chapter) {
        Some((start, end)) => line.push_str(&format!(
            " Selection: chars {}–{} ({}), lines {}–{}; rewrite_selection and get_critique_for_selection act on it.\n",
            thousands(start),
            thousands(end),
            plural(end - start, "char", "chars"),
            rope.char_to_line(start) + 1,
            rope.char_to_line(end.saturating_sub(1).max(start)) + 1
        )),
        None => line.push_str(" Nothing is selected.\n"),
    }
    line
}

/// The writer's non-empty selection in the active chapter, clamped to its text.
fn selection(project: &Project, chapter: &Chapter) -> Option<(usize, usize)> {
    let len = chapter.len_chars();
    project
        .ui
        .selection
        .map(|(s, e)| (s.min(e).min(len), s.max(e).min(len)))
        .filter(|(s, e)| s < e)
}

/// The chapter list within `room` chars: the active chapter and its neighbours, at most
/// [`MAX_LISTED_CHAPTERS`], in order; then how many are not listed.
///
/// Runs for every editor-context block, so its cost is kept to the lines listed: each line is
/// written once into one buffer, and the picked lines are copied out in chapter order.
fn chapter_list(project: &Project, room: usize) -> String {
    use std::fmt::Write as _;
    let n = project.chapters.len();
    if n == 0 {
        return String::new();
    }
    let active = project
        .active_chapter()
        .and_then(|c| project.chapter_index(&c.id))
        .unwrap_or(0);
    let title = "Chapters (number, title, words):\n";
    // The most a "… more" line takes.
    let more_reserve = 80;
    let Some(mut budget) = room.checked_sub(chars(title) + more_reserve) else {
        return String::new();
    };
    // Pick chapters outwards from the active one (the one before first) while they fit.
    let outwards = std::iter::once(active).chain((1..n).flat_map(|d| {
        let before = active.checked_sub(d);
        let after = Some(active + d).filter(|&i| i < n);
        before.into_iter().chain(after)
    }));
    // Each picked line's chapter and its bytes in `lines`.
    let mut lines = String::with_capacity(MAX_LISTED_CHAPTERS.min(n) * 40);
    let mut picked: Vec<(usize, std::ops::Range<usize>)> =
        Vec::with_capacity(MAX_LISTED_CHAPTERS.min(n));
    for i in outwards.take(MAX_LISTED_CHAPTERS) {
        let c = &project.chapters[i];
        let start = lines.len();
        lines.push_str("  ");
        lines.push_str(itoa::Buffer::new().format(i + 1));
        lines.push_str(". \"");
        lines.push_str(&shorten(&c.title, NAME_CHARS));
        lines.push_str("\": ");
        push_plural(&mut lines, c.word_count(), "word", "words");
        if i == active {
            lines.push_str(" (active)");
        }
        lines.push('\n');
        let width = chars(&lines[start..]);
        if width > budget {
            lines.truncate(start);
            break;
        }
        budget -= width;
        picked.push((i, start..lines.len()));
    }
    if picked.is_empty() {
        return String::new();
    }
    picked.sort_unstable_by_key(|(i, _)| *i);
    let mut out = String::with_capacity(title.len() + lines.len() + more_reserve);
    out.push_str(title);
    for (_, bytes) in &picked {
        out.push_str(&lines[bytes.clone()]);
    }
    if picked.len() < n {
        let _ = writeln!(
            out,
            "  … {} of {} chapters listed; list_chapters lists them all.",
            picked.len(),
            n
        );
    }
    out
}

/// The selected text and the paragraph at the cursor, sharing `room` chars (the selection up
/// to three fifths of it when there is a paragraph too).
fn texts(project: &Project, chapter: &Chapter, room: usize) -> (String, String) {
    let rope = chapter.text();
    let len = chapter.len_chars();
    let cursor = project.ui.cursor.min(len);
    let paragraph = paragraph_range(rope, cursor);
    let selection_part = match selection(project, chapter) {
        Some((start, end)) => {
            let share = if paragraph.is_some() {
                room * 3 / 5
            } else {
                room
            };
            let title = "Selected text (between the \"\"\" lines):\n\"\"\"\n";
            let tail = "\n\"\"\"\n";
            let overhead = chars(title) + chars(tail) + 40;
            let keep = share.saturating_sub(overhead);
            if keep < MIN_TEXT_CHARS {
                String::new()
            } else {
                let (text, cut) = trim_middle(rope, start, end, keep);
                let title = if cut {
                    format!(
                        "Selected text ({} chars; its middle is left out here):\n\"\"\"\n",
                        thousands(end - start)
                    )
                } else {
                    title.to_string()
                };
                format!("{title}{text}{tail}")
            }
        }
        None => String::new(),
    };
    let room = room.saturating_sub(chars(&selection_part));
    let paragraph_part = match paragraph {
        Some((first, last, start, end)) => {
            let at_cursor = (start..=end).contains(&cursor);
            let lines = if first == last {
                format!("line {}", first + 1)
            } else {
                format!("lines {}–{}", first + 1, last + 1)
            };
            let title = if at_cursor {
                format!("Paragraph at the cursor ({lines}; {CURSOR_MARK} marks the cursor and is not in the text):\n\"\"\"\n")
            } else if end < cursor {
                format!("Paragraph before the cursor ({lines}; the cursor is on an empty line):\n\"\"\"\n")
            } else {
                format!("Paragraph after the cursor ({lines}; the cursor is on an empty line):\n\"\"\"\n")
            };
            let tail = "\n\"\"\"\n";
            let keep = room.saturating_sub(chars(&title) + chars(tail) + 2);
            if keep < MIN_TEXT_CHARS {
                String::new()
            } else {
                let mark = at_cursor.then_some(cursor);
                format!("{title}{}{tail}", window(rope, start, end, mark, keep))
            }
        }
        None => String::new(),
    };
    (selection_part, paragraph_part)
}

/// `start..end` of the text if it has at most `keep` chars; else its first and last parts
/// with ` […] ` between them (at most `keep` chars in all). The flag says whether it was cut.
fn trim_middle(rope: &Text, start: usize, end: usize, keep: usize) -> (String, bool) {
    if end - start <= keep {
        return (rope.slice(start..end).to_string(), false);
    }
    let gap = " […] ";
    let half = keep.saturating_sub(chars(gap)) / 2;
    let head = rope.slice(start..start + half).to_string();
    let tail = rope.slice(end - half..end).to_string();
    (format!("{head}{gap}{tail}"), true)
}

/// The lines and chars of the paragraph at `cursor`: the run of non-blank lines around the
/// cursor's line, or on a blank line the paragraph before it (else after it). At most
/// [`PARAGRAPH_LINES`] lines are looked at each way. Returns `(first line, last line, start
/// char, end char)`, the end before the last line's newline.
fn paragraph_range(rope: &Text, cursor: usize) -> Option<(usize, usize, usize, usize)> {
    let lines = rope.len_lines();
    let blank = |i: usize| rope.line(i).chars().all(char::is_whitespace);
    let at = rope.char_to_line(cursor);
    let seed = if !blank(at) {
        at
    } else {
        let before = (at.saturating_sub(PARAGRAPH_LINES)..at)
            .rev()
            .find(|&i| !blank(i));
        let after = || (at + 1..lines.min(at + 1 + PARAGRAPH_LINES)).find(|&i| !blank(i));
        before.or_else(after)?
    };
    let mut first = seed;
    while first > 0 && seed - first < PARAGRAPH_LINES && !blank(first - 1) {
        first -= 1;
    }
    let mut last = seed;
    while last + 1 < lines && last - seed < PARAGRAPH_LINES && !blank(last + 1) {
        last += 1;
    }
    let start = rope.line_to_char(first);
    let mut end = if last + 1 < lines {
        rope.line_to_char(last + 1) - 1
    } else {
        rope.len_chars()
    };
    if end > start && rope.char(end - 1) == '\r' {
        end -= 1;
    }
    Some((first, last, start, end))
}

/// At most `keep` chars of `start..end` around `mark` (or from the start), with `…` where it
/// was cut and [`CURSOR_MARK`] at `mark`.
fn window(rope: &Text, start: usize, end: usize, mark: Option<usize>, keep: usize) -> String {
    let center = mark.unwrap_or(start);
    let (mut from, mut to) = (start, end);
    if end - start > keep {
        let budget = keep.saturating_sub(2);
        from = center.saturating_sub(budget / 2).max(start);
        to = (from + budget).min(end);
        from = to.saturating_sub(budget).max(start);
    }
    let mut out = String::new();
    if from > start {
        out.push('…');
    }
    match mark.filter(|m| (from..=to).contains(m)) {
        Some(m) => {
            out.push_str(&rope.slice(from..m).to_string());
            out.push(CURSOR_MARK);
            out.push_str(&rope.slice(m..to).to_string());
        }
        None => out.push_str(&rope.slice(from..to).to_string()),
    }
    if to < end {
        out.push('…');
    }
    out
}

/// "Story bible: 3 characters, 2 locations." and the main characters' line (if any).
fn bible_lines(bible: &Bible, active: Option<&Chapter>) -> (String, Option<String>) {
    let counts: Vec<String> = Kind::ALL
        .iter()
        .filter_map(|&kind| {
            let n = bible.list(kind).count();
            (n > 0).then(|| kind_count(kind, n))
        })
        .collect();
    let line = if counts.is_empty() {
        "Story bible: empty.\n".to_string()
    } else {
        format!("Story bible: {}.\n", counts.join(", "))
    };
    let main = main_characters(bible, active);
    let characters = (!main.is_empty()).then(|| {
        format!(
            "Main characters (name, id): {}.\n",
            main.iter()
                .map(|(name, id)| format!("{} ({id})", shorten(name, NAME_CHARS)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    });
    (line, characters)
}

fn kind_count(kind: Kind, n: usize) -> String {
    match kind {
        Kind::Scene => plural(n, "scene", "scenes"),
        Kind::Character => plural(n, "character", "characters"),
        Kind::Location => plural(n, "location", "locations"),
        Kind::Route => plural(n, "route", "routes"),
        Kind::Glossary => plural(n, "glossary entry", "glossary entries"),
        Kind::Styleguide => "a style guide".into(),
        Kind::UiSettings => "UI settings".into(),
        Kind::Contextdoc => plural(n, "context document", "context documents"),
        Kind::Translation => plural(n, "translated line", "translated lines"),
        Kind::Qa => plural(n, "QA record", "QA records"),
        Kind::Campaign => plural(n, "campaign", "campaigns"),
    }
}

/// The main characters' names and ids (see the [module docs](self)).
fn main_characters(bible: &Bible, active: Option<&Chapter>) -> Vec<(String, String)> {
    let characters: Vec<_> = bible.list(Kind::Character).collect();
    if characters.is_empty() {
        return Vec::new();
    }
    let mut listed: Vec<&str> = Vec::new();
    for kind in [Kind::Scene, Kind::Route] {
        for entity in bible.list(kind) {
            listed.extend(entity.list("primary_characters"));
        }
    }
    let mut listed_count: BTreeMap<&str, usize> = BTreeMap::new();
    for id in listed {
        *listed_count.entry(id).or_default() += 1;
    }
    let mut mentioned: BTreeMap<String, usize> = BTreeMap::new();
    if let Some(chapter) = active {
        let text = chapter.text().to_string();
        for m in mentions::detect(bible, &text) {
            if m.kind == Kind::Character {
                *mentioned.entry(m.id).or_default() += 1;
            }
        }
    }
    let mut ranked: Vec<(usize, usize, &str, String)> = characters
        .iter()
        .map(|c| {
            (
                listed_count.get(c.id.as_str()).copied().unwrap_or(0),
                mentioned.get(c.id.as_str()).copied().unwrap_or(0),
                c.id.as_str(),
                c.text("name_src").to_string(),
            )
        })
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(b.2)));
    ranked
        .into_iter()
        .take(MAX_MAIN_CHARACTERS)
        .map(|(_, _, id, name)| {
            let name = if name.trim().is_empty() {
                id.to_string()
            } else {
                name
            };
            (name, id.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_and_plurals() {
        assert_eq!(thousands(12_345), "12,345");
        assert_eq!(plural(1, "word", "words"), "1 word");
        assert_eq!(plural(1_000, "word", "words"), "1,000 words");
    }

    #[test]
    fn a_budget_below_the_frame_gives_nothing() {
        let project = Project::new("p", "P", vec![Chapter::new("c", "C", "Text.")]);
        assert_eq!(editor_context_block(&project, &Bible::new(), "all", 5), "");
        let block = editor_context_block(&project, &Bible::new(), "all", 9);
        assert!(block.starts_with(OPEN) && block.ends_with(CLOSE), "{block}");
    }

    /// The chapter list written plainly: each line a string of its own, the chapters ordered by
    /// their distance from the active one, then sorted back.
    fn chapter_list_naive(project: &Project, room: usize) -> String {
        let n = project.chapters.len();
        let Some(active) = project
            .ui
            .active_chapter
            .as_ref()
            .and_then(|id| project.chapters.iter().position(|c| &c.id == id))
            .or((n > 0).then_some(0))
        else {
            return String::new();
        };
        let entry = |i: usize| {
            let c = &project.chapters[i];
            format!(
                "  {}. \"{}\": {}{}\n",
                i + 1,
                shorten(&c.title, NAME_CHARS),
                plural(c.word_count(), "word", "words"),
                if i == active { " (active)" } else { "" }
            )
        };
        let title = "Chapters (number, title, words):\n";
        let Some(mut budget) = room.checked_sub(chars(title) + 80) else {
            return String::new();
        };
        // Nearest first; of two as near, the one before.
        let mut outwards: Vec<usize> = (0..n).collect();
        outwards.sort_by_key(|&i| (i.abs_diff(active), i > active));
        let mut picked: Vec<(usize, String)> = Vec::new();
        for i in outwards.into_iter().take(MAX_LISTED_CHAPTERS) {
            let line = entry(i);
            let c = chars(&line);
            if c > budget {
                break;
            }
            budget -= c;
            picked.push((i, line));
        }
        if picked.is_empty() {
            return String::new();
        }
        picked.sort_by_key(|(i, _)| *i);
        let mut out = String::from(title);
        for (_, line) in &picked {
            out.push_str(line);
        }
        if picked.len() < n {
            out.push_str(&format!(
                "  … {} of {} chapters listed; list_chapters lists them all.\n",
                picked.len(),
                n
            ));
        }
        out
    }

    #[test]
    fn the_chapter_list_is_the_naive_one() {
        let titles = [
            "One",
            "  A  long\ttitle ",
            "Ünïcode — “quoted”",
            &"x".repeat(120),
        ];
        for count in [0, 1, 2, 7, 39, 40, 41, 100] {
            let chapters: Vec<Chapter> = (0..count)
                .map(|i| {
                    let text = "word ".repeat(i * 37 % 1_500);
                    Chapter::new(format!("c{i}"), titles[i % titles.len()], &text)
                })
                .collect();
            let mut project = Project::new("p", "P", chapters);
            for active in [
                None,
                Some(0),
                Some(count / 2),
                Some(count.saturating_sub(1)),
            ] {
                project.ui.active_chapter = active.map(|i| format!("c{i}"));
                for room in [0, 100, 113, 114, 150, 400, 1_000, 1_777, 4_000, 100_000] {
                    assert_eq!(
                        chapter_list(&project, room),
                        chapter_list_naive(&project, room),
                        "{count} chapters, active {active:?}, room {room}"
                    );
                }
            }
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    mod shorten_property {
        use super::*;

        /// `shorten` as first written: four scans for the common case.
        fn shorten_naive(text: &str, max: usize) -> String {
            let one_line_already = !text.starts_with(' ')
                && !text.ends_with(' ')
                && !text.contains("  ")
                && !text.contains(|c: char| c.is_whitespace() && c != ' ');
            if one_line_already && chars(text) <= max {
                return text.to_string();
            }
            let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
            if chars(&one_line) <= max {
                one_line
            } else {
                let cut: String = one_line.chars().take(max).collect();
                format!("{cut}…")
            }
        }

        proptest::proptest! {
            #[test]
            fn shorten_is_the_naive_one(text in "[ a\t\né—]{0,12}", max in 0usize..14) {
                proptest::prop_assert_eq!(shorten(&text, max).into_owned(), shorten_naive(&text, max));
            }
        }
    }
}
