//! The memory search's terms, as `www/bench/tokenize.js` mirrors them for the browser bench's
//! MiniSearch: the stopwords and every case of `www/bench/tokenize-cases.json` (Unicode
//! letters and digits, case, stopwords, plurals) agree with the core's `tokenize`. The node
//! test `www/e2e/tokenize.test.mjs` checks the JavaScript side against the same file.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::memory::search::STOPWORDS;
use draftsmith::memory::tokenize;
use serde::Deserialize;

#[derive(Deserialize)]
struct Cases {
    stopwords: Vec<String>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    text: String,
    terms: Vec<String>,
}

fn cases() -> Cases {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/www/bench/tokenize-cases.json");
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_javascript_tokenizer_cases_are_the_cores() {
    let cases = cases();
    assert_eq!(cases.stopwords, STOPWORDS);
    assert!(cases.cases.len() >= 10);
    for case in &cases.cases {
        assert_eq!(tokenize(&case.text), case.terms, "{:?}", case.text);
    }
    // Every stopword is dropped, alone and among other words.
    for word in STOPWORDS {
        assert!(tokenize(word).is_empty(), "{word}");
        assert_eq!(
            tokenize(&format!("lamp {} lamp", word.to_uppercase())),
            ["lamp", "lamp"]
        );
    }
}
