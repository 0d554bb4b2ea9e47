//! Reading a web page: its title, its readable main text and its own description.
//!
//! The page is read by [`dom_smoothie`], a Rust port of Mozilla's Readability (the reader view
//! of Firefox) on html5ever: html5ever parses the HTML as a browser does, and Readability
//! takes the title from the page's metadata (JSON-LD, `og:title`, ...) or its `<title>` cleaned
//! of a site name, and the main text from the block that scores best by its paragraphs, commas
//! and link density, without navigation, headers, footers, forms and boilerplate. The text is
//! Readability's formatted text, one paragraph per block, normalised here to paragraphs
//! separated by blank lines and cut at [`MAX_TEXT_CHARS`].
//!
//! The core reads pages through this crate natively. Its wasm does not link it: the worker
//! loads it as a module of its own (`crates/reader-web`) when research first reads a page,
//! so without the `readability` feature the crate holds only the types of what was read.
//!
//! The work grows with the square of the page's nesting depth (html5ever's tree building and
//! Readability's scoring walk the open elements and the ancestors): ordinary pages nest a few
//! dozen elements deep and read in milliseconds; a page nesting 2,000 elements takes seconds,
//! one nesting 10,000 minutes. So a page is first measured by html5ever's tokenizer alone, in
//! time linear in its length ([`depth`]), and one nesting deeper than [`MAX_DEPTH`] is not
//! read: a page that deep is generated or hostile, its text without Readability would be
//! boilerplate, and the agent can say so and try another page.

use serde::{Deserialize, Serialize};

/// Most characters of main text kept (a longer text is cut at a paragraph).
pub const MAX_TEXT_CHARS: usize = 200_000;

/// What [`extract`] read from a page.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Extracted {
    /// The page's title (empty if it has none).
    pub title: String,
    /// The readable main text: paragraphs separated by blank lines.
    pub text: String,
    /// The page's own short description (`og:description`, `description`), if any.
    pub description: Option<String>,
}

/// Deepest nesting of elements, as [`depth`] measures it, of a page that is read.
///
/// Ordinary pages nest a few dozen elements deep; Readability reads a page at this depth in
/// a fraction of a second.
pub const MAX_DEPTH: usize = 256;

/// Why a page was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum ExtractError {
    /// The page nests elements deeper than [`MAX_DEPTH`].
    #[error("the page nests {0} elements deep, more than {MAX_DEPTH}; it was not read")]
    TooDeep(usize),
}

impl ExtractError {
    /// The error's stable code for a tool result.
    pub fn code(&self) -> &'static str {
        match self {
            ExtractError::TooDeep(_) => "too_deep",
        }
    }
}

#[cfg(feature = "readability")]
mod read;
#[cfg(feature = "readability")]
pub use read::{depth, extract};
