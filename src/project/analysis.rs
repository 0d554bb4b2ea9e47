//! Structure analysis of prose: scenes, dialogue spans, statistics, pacing and critique hints.
