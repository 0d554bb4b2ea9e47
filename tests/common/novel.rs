//! A deterministic fixture novel for search, analysis and editing tests.
//!
//! [`novel`] generates twenty chapters (over 50,000 words) of seaside prose from templates and
//! a small seeded PRNG (SplitMix64), so every call returns the same text. It has paragraphs
//! separated by blank lines, scene breaks (`***`, `* * *`, `#`), dialogue in three quoting
//! styles (straight `"…"`, curly `“…”`, guillemets `« … »`) plus em-dash dialogue lines
//! (`— …`), apostrophes inside dialogue, recurring characters (Mara Vey, Tobias Quill, Elin
//! Hart, the captain, …) and places (Greyhaven, the lighthouse, Saltmarsh Road, …).
//!
//! It also contains the [`PLANTED`] passages, each exactly once, in its chapter, and a
//! character, [`RARE_CHARACTER`], who appears in one chapter only
//! ([`RARE_CHARACTER_CHAPTER`]).

use super::rng::Rng;

/// A passage placed verbatim in the novel, exactly once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Planted {
    /// The chapter it is in, 0-based.
    pub chapter: usize,
    /// The passage, verbatim; it is a whole paragraph of its chapter.
    pub text: &'static str,
    /// "narration", "straight", "curly", "guillemets" or "emdash".
    pub kind: &'static str,
}

/// The planted passages, in chapter order.
pub const PLANTED: &[Planted] = &[
    Planted {
        chapter: 0,
        text: "The lighthouse keeper counted the gulls twice before dawn.",
        kind: "narration",
    },
    Planted {
        chapter: 1,
        text: "“Bring the lantern to the north stair,” Mara said.",
        kind: "curly",
    },
    Planted {
        chapter: 3,
        text: "\"I don't know where the captain buried the ledger,\" Tobias admitted.",
        kind: "straight",
    },
    Planted {
        chapter: 5,
        text: "« Nobody rows out past the breakwater after the bells, » said Elin Hart.",
        kind: "guillemets",
    },
    Planted {
        chapter: 7,
        text: "— Keep your voice down, the walls of Greyhaven listen at night.",
        kind: "emdash",
    },
    Planted {
        chapter: 9,
        text: "Salt had crusted the brass hinges of the chart room until they shrieked like gulls.",
        kind: "narration",
    },
    Planted {
        chapter: 10,
        text: "Only Ysolde Brannoch had ever climbed the lighthouse stair without a lantern.",
        kind: "narration",
    },
    Planted {
        chapter: 12,
        text: "“You’ve read the letter wrong, Tobias — it says the ninth tide, not the nineteenth.”",
        kind: "curly",
    },
    Planted {
        chapter: 14,
        text: "\"Mara, the map is upside down,\" the captain said, and laughed for the first time in weeks.",
        kind: "straight",
    },
    Planted {
        chapter: 16,
        text: "« We’ll need three ropes and a better excuse, » Elin whispered.",
        kind: "guillemets",
    },
    Planted {
        chapter: 18,
        text: "By midnight the fog had swallowed the pier, the bell, and half of Saltmarsh Road…",
        kind: "narration",
    },
    Planted {
        chapter: 19,
        text: "— If the lamp goes dark again, wake me, the captain said.",
        kind: "emdash",
    },
];

/// A character mentioned in one chapter only.
pub const RARE_CHARACTER: &str = "Ysolde Brannoch";

/// The chapter (0-based) that mentions [`RARE_CHARACTER`].
pub const RARE_CHARACTER_CHAPTER: usize = 10;

/// The chapter titles' subjects; titles read "Chapter N: <subject>".
const SUBJECTS: [&str; 20] = [
    "The Lighthouse",
    "Salt and Ash",
    "The North Stair",
    "A Ledger of Tides",
    "Fog over Greyhaven",
    "The Breakwater",
    "Letters from Wrenfield",
    "The Captain’s Silence",
    "Lantern Hours",
    "The Drowned Bell",
    "The Ferry Ledger",
    "Brass and Rust",
    "Ninth Tide",
    "The Chart Room",
    "Upside Down",
    "Small Mercies",
    "Three Ropes",
    "Saltmarsh Road",
    "The Chapel of St. Aud",
    "The Last Lamp",
];

/// (full name, short name) of the recurring characters.
const PEOPLE: [(&str, &str); 7] = [
    ("Mara Vey", "Mara"),
    ("Tobias Quill", "Tobias"),
    ("Elin Hart", "Elin"),
    ("the captain", "the captain"),
    ("Bram Solley", "Bram"),
    ("Petra Lind", "Petra"),
    ("Jonah Fell", "Jonah"),
];

const PLACES: [&str; 12] = [
    "the lighthouse",
    "the harbour",
    "the breakwater",
    "Saltmarsh Road",
    "the chapel of St. Aud",
    "the Wrenfield docks",
    "the chart room",
    "the fish market",
    "the old customs house",
    "the cliff path",
    "the lamp room",
    "the slipway",
];

const OBJECTS: [&str; 10] = [
    "the brass telescope",
    "a bundle of letters",
    "the tide tables",
    "a cracked lantern",
    "the captain’s logbook",
    "a tin of matches",
    "the salt-stained map",
    "a coil of tarred rope",
    "a loaf of black bread",
    "the key to the lamp room",
];

const WEATHER: [&str; 8] = [
    "the wind came hard off the water",
    "a thin rain drifted over the roofs of Greyhaven",
    "the fog rolled in from the east",
    "the sky went the colour of pewter",
    "the gulls wheeled low over the slipway",
    "the sea lay flat and grey as slate",
    "a cold light broke through the clouds",
    "the tide turned with a long sigh against the stones",
];

const TIMES: [&str; 9] = [
    "In the grey hour before the fishing boats went out",
    "Later that morning",
    "By the time the bells rang noon",
    "Towards evening",
    "Long after the lamps were lit",
    "On the third day",
    "That night",
    "At first light",
    "When the rain finally stopped",
];

/// Narration sentences. Slots: {A} a person (subject), {B} another person, {L} and {M}
/// places, {O} an object, {W} weather, {T} a time phrase.
const NARRATION: [&str; 26] = [
    "{T}, {A} walked the length of {L} while {W}.",
    "{A} found {O} near {L} and carried it back to {M} without a word.",
    "{W}, and {A} pulled the collar of an old coat higher.",
    "For a long while {A} stood at the window of {L}, watching the boats come in one by one.",
    "{A} had promised {B} an answer by morning, but the answer would not come.",
    "The smell of tar and wet rope hung over {L}.",
    "{A} counted the coins on the table and put them back in the drawer.",
    "It was {B} who first noticed that {O} had gone missing from {L}.",
    "Somewhere below {L}, a door banged open and shut in the wind.",
    "{A} thought about the ledger, about the debts written in faded ink, and about what {B} had not said.",
    "The lamp in {L} burned low, and {A} trimmed the wick with careful fingers.",
    "There were footprints along {L}, small and quick, leading towards {M}.",
    "{A} listened to the tide dragging at the shingle and tried not to think of the drowned bell.",
    "{T}, the whole of Greyhaven seemed to hold its breath.",
    "{A} and {B} argued about the route until neither of them could remember who had started it.",
    "A letter from Wrenfield lay unopened on the table in {L}.",
    "{A} wrapped {O} in oilcloth and hid it beneath a loose board in {L}.",
    "The stairs of the lighthouse creaked under every step, all one hundred and twelve of them.",
    "{W}; still, {A} went down to {L} to wait for {B}.",
    "{A} remembered the summer the old pier had burned, and how long the smell of the ash had lingered.",
    "By the harbour wall an old man mended nets and sang under his breath.",
    "{A} did not trust the calm, and neither did {B}.",
    "Each evening the keeper climbed to the lamp room, and each evening {A} watched from {L}.",
    "{B} left {O} on the step of {L} as if it were an apology.",
    "Nothing in {L} had changed since the winter of the great storm, except the people.",
    "{A} said nothing for a while, and the silence grew heavy between them.",
];

/// Spoken lines, with straight apostrophes (converted per quoting style) and no final
/// punctuation; a trailing `?` marks a question.
const LINES: [&str; 22] = [
    "I don't know what the tide will bring tonight",
    "We can't stay here much longer",
    "It's only the wind in the shutters",
    "You'll want a warmer coat than that",
    "She's late again, and the boats won't wait",
    "Tell me what you saw on the breakwater",
    "There's no shame in turning back",
    "I've read every page of that ledger and it makes no sense",
    "The captain won't speak of it, so don't ask",
    "Give me an hour and I'll have the lamp burning",
    "We'll go at first light",
    "Nobody's kept that door locked in years",
    "If the fog lifts we'll see the boats",
    "That's not the key to the lamp room",
    "I'd rather drown than beg from Wrenfield",
    "Leave the map where it is",
    "Did you hear the bell last night?",
    "Who told you about the chart room?",
    "Why would anyone row out in this weather?",
    "Where did you find that lantern?",
    "Don't be a fool, it's only a story",
    "Greyhaven has kept worse secrets than this",
];

const VERBS: [&str; 7] = [
    "said",
    "replied",
    "whispered",
    "muttered",
    "answered",
    "called",
    "admitted",
];

const SCENE_BREAKS: [&str; 3] = ["***", "* * *", "#"];

/// Words in each chapter before the generator stops adding paragraphs (plus up to 400).
const CHAPTER_WORDS: usize = 2600;

/// Upper-cases the first char (for a sentence that starts with "the captain").
fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A person's name: the full name now and then, the short one otherwise.
fn person(rng: &mut Rng, index: usize) -> &'static str {
    let (full, short) = PEOPLE[index];
    if rng.below(4) == 0 {
        full
    } else {
        short
    }
}

/// Two different people.
fn two_people(rng: &mut Rng) -> (&'static str, &'static str) {
    let a = rng.below(PEOPLE.len());
    let b = (a + 1 + rng.below(PEOPLE.len() - 1)) % PEOPLE.len();
    (person(rng, a), person(rng, b))
}

fn narration_sentence(rng: &mut Rng) -> String {
    let template = *rng.pick(&NARRATION);
    let (a, b) = two_people(rng);
    let l = rng.below(PLACES.len());
    let m = (l + 1 + rng.below(PLACES.len() - 1)) % PLACES.len();
    let filled = template
        .replace("{A}", a)
        .replace("{B}", b)
        .replace("{L}", PLACES[l])
        .replace("{M}", PLACES[m])
        .replace("{O}", rng.pick::<&str>(&OBJECTS))
        .replace("{W}", rng.pick::<&str>(&WEATHER))
        .replace("{T}", rng.pick::<&str>(&TIMES));
    capitalize(&filled)
}

fn narration_paragraph(rng: &mut Rng) -> String {
    let sentences = 3 + rng.below(4);
    (0..sentences)
        .map(|_| narration_sentence(rng))
        .collect::<Vec<_>>()
        .join(" ")
}

#[derive(Clone, Copy)]
enum Style {
    Straight,
    Curly,
    Guillemets,
    EmDash,
}

/// A spoken line in `style`: apostrophes converted, `end` appended unless it is a question.
fn spoken(style: Style, line: &str, end: &str) -> String {
    let line = match style {
        Style::Straight => line.to_string(),
        _ => line.replace('\'', "’"),
    };
    if line.ends_with('?') {
        line
    } else {
        format!("{line}{end}")
    }
}

fn quoted(style: Style, line: &str, end: &str) -> String {
    let body = spoken(style, line, end);
    match style {
        Style::Straight => format!("\"{body}\""),
        Style::Curly => format!("“{body}”"),
        Style::Guillemets => format!("« {body} »"),
        Style::EmDash => format!("— {body}"),
    }
}

fn dialogue_paragraph(rng: &mut Rng) -> String {
    let style = match rng.below(4) {
        0 => Style::Straight,
        1 => Style::Curly,
        2 => Style::Guillemets,
        _ => Style::EmDash,
    };
    let (a, b) = two_people(rng);
    let verb = *rng.pick(&VERBS);
    let line = *rng.pick(&LINES);
    let reply = *rng.pick(&LINES);
    if let Style::EmDash = style {
        // An exchange, one speaker per line.
        let first = format!("{}, {a} {verb}.", spoken(style, line, ""));
        let first = first.replace("?,", "?");
        let second = quoted(style, reply, ".");
        return format!("— {first}\n{second}");
    }
    match rng.below(4) {
        0 => format!("{} {a} {verb}.", quoted(style, line, ",")),
        1 => format!("{} {verb} {a}.", quoted(style, line, ",")),
        2 => format!(
            "{} looked at {b}. {}",
            capitalize(a),
            quoted(style, line, ".")
        ),
        _ => format!(
            "{} {a} {verb}. {}",
            quoted(style, line, ","),
            quoted(style, reply, ".")
        ),
    }
}

fn word_count_of(text: &str) -> usize {
    text.split_whitespace()
        .filter(|word| word.chars().any(char::is_alphanumeric))
        .count()
}

/// The chapter's extra paragraphs: its planted passages and, in one chapter, the mentions of
/// the rare character.
fn extras(chapter: usize) -> Vec<String> {
    let mut out: Vec<String> = PLANTED
        .iter()
        .filter(|p| p.chapter == chapter)
        .map(|p| p.text.to_string())
        .collect();
    if chapter == RARE_CHARACTER_CHAPTER {
        out.push(format!(
            "Nobody in Greyhaven spoke of {RARE_CHARACTER}, who had kept the ferry ledger before \
             the war and left no portrait, only a list of debts."
        ));
    }
    out
}

fn chapter(index: usize) -> (String, String) {
    let mut rng = Rng(0x5EED_0000_D1AF_7000 ^ (index as u64).wrapping_mul(0x1000_0001));
    let title = format!(
        "Chapter {}: {}",
        index + 1,
        SUBJECTS[index % SUBJECTS.len()]
    );
    let target = CHAPTER_WORDS + rng.below(400);
    let mut extras = extras(index).into_iter();
    let mut paragraphs: Vec<String> = Vec::new();
    let mut words = 0;
    let mut next_break = 9 + rng.below(6);
    let mut breaks = index;
    while words < target || extras.len() > 0 {
        let paragraph = if paragraphs.len() % 7 == 4 {
            extras
                .next()
                .unwrap_or_else(|| narration_paragraph(&mut rng))
        } else if rng.below(5) < 2 {
            dialogue_paragraph(&mut rng)
        } else {
            narration_paragraph(&mut rng)
        };
        words += word_count_of(&paragraph);
        paragraphs.push(paragraph);
        next_break -= 1;
        if next_break == 0 {
            paragraphs.push(SCENE_BREAKS[breaks % SCENE_BREAKS.len()].to_string());
            breaks += 1;
            next_break = 9 + rng.below(6);
        }
    }
    (title, paragraphs.join("\n\n"))
}

/// The novel: twenty (title, text) chapters, identical on every call.
pub fn novel() -> Vec<(String, String)> {
    (0..SUBJECTS.len()).map(chapter).collect()
}

/// Words in the chapters' texts (whitespace-separated tokens with a letter or digit; titles
/// and scene-break marks do not count).
pub fn word_count(chapters: &[(String, String)]) -> usize {
    chapters.iter().map(|(_, text)| word_count_of(text)).sum()
}

/// The whole novel as one text: each chapter's title, a blank line and its text, chapters
/// separated by blank lines.
pub fn full_text(chapters: &[(String, String)]) -> String {
    chapters
        .iter()
        .map(|(title, text)| format!("{title}\n\n{text}"))
        .collect::<Vec<_>>()
        .join("\n\n")
}
