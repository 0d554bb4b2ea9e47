//! The manuscript: a project's ordered chapters, their rope text and versions, change sets,
//! structure analysis and text search.

pub mod analysis;
pub mod changeset;
pub mod search;
