//! Text search over prose: exact and fuzzy matching, and chapter references.
//! (Interim minimal version; replaced by the full implementation.)

/// How a chapter was named.
#[derive(Debug, Clone, PartialEq)]
pub enum ChapterRef {
    /// By number (1-based).
    Number(usize),
    /// By title.
    Title(String),
}

/// Parse "3" / "Chapter 3"; anything else is a title.
pub fn parse_chapter_ref(input: &str) -> ChapterRef {
    let t = input.trim();
    let t = t
        .strip_prefix("Chapter ")
        .or_else(|| t.strip_prefix("chapter "))
        .unwrap_or(t);
    t.parse()
        .map(ChapterRef::Number)
        .unwrap_or_else(|_| ChapterRef::Title(input.trim().to_string()))
}

/// Index of the first title containing `query`, case-insensitively.
pub fn match_title(titles: &[&str], query: &str) -> Option<usize> {
    let q = query.to_lowercase();
    titles.iter().position(|t| t.to_lowercase().contains(&q))
}

/// A match, char offsets.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Match {
    /// Start.
    pub start: usize,
    /// End.
    pub end: usize,
    /// Score.
    pub score: f64,
    /// Matched text.
    pub text: String,
}

/// First exact match at or after `from`.
pub fn find_exact_from(text: &str, query: &str, from: usize) -> Option<Match> {
    if query.is_empty() {
        return None;
    }
    let from_byte = text.char_indices().nth(from).map(|(b, _)| b)?;
    let byte = text[from_byte..].find(query)? + from_byte;
    let start = text[..byte].chars().count();
    Some(Match {
        start,
        end: start + query.chars().count(),
        score: 1.0,
        text: query.to_string(),
    })
}

/// All exact matches.
pub fn find_exact(text: &str, query: &str) -> Vec<Match> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(m) = find_exact_from(text, query, from) {
        from = m.end;
        out.push(m);
    }
    out
}

/// Interim: case-insensitive exact.
pub fn find_fuzzy(text: &str, query: &str, _min: f64) -> Option<Match> {
    closest(text, query)
}

/// Interim: case-insensitive exact.
pub fn closest(text: &str, query: &str) -> Option<Match> {
    let lower = text.to_lowercase();
    if lower.chars().count() != text.chars().count() {
        return None;
    }
    let mut m = find_exact_from(&lower, &query.to_lowercase(), 0)?;
    m.text = text.chars().skip(m.start).take(m.end - m.start).collect();
    m.score = 0.9;
    Some(m)
}
