//! Text search over prose: exact and fuzzy matching, and chapter references.
