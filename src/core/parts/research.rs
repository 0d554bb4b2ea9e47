//! Research: each project's research notes (loaded once from the store), and how many pages
//! each run going on has read.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::research::{Research, ResearchNote};

/// Owns the research notes of the projects read so far and the per-run page counts.
#[derive(Default)]
pub(in crate::core) struct ResearchState {
    /// Each project's research notes.
    notes: RefCell<BTreeMap<String, Research>>,
    /// `research_url` calls made so far by each run going on.
    runs: RefCell<BTreeMap<String, usize>>,
}

impl ResearchState {
    /// Whether the notes of `project` were loaded.
    pub(in crate::core) fn loaded(&self, project: &str) -> bool {
        self.notes.borrow().contains_key(project)
    }

    /// Keep `notes` as the notes of `project` unless they were loaded meanwhile.
    pub(in crate::core) fn load(&self, project: &str, notes: Research) {
        self.notes
            .borrow_mut()
            .entry(project.to_string())
            .or_insert(notes);
    }

    /// Keep `notes` as the notes of `project`.
    pub(in crate::core) fn set(&self, project: &str, notes: Research) {
        self.notes.borrow_mut().insert(project.to_string(), notes);
    }

    /// Read the notes of `project` (`None` when it has none loaded).
    pub(in crate::core) fn read<T>(
        &self,
        project: &str,
        f: impl FnOnce(Option<&Research>) -> T,
    ) -> T {
        f(self.notes.borrow().get(project))
    }

    /// Change the notes of `project` (made empty when it had none).
    pub(in crate::core) fn update<T>(
        &self,
        project: &str,
        f: impl FnOnce(&mut Research) -> T,
    ) -> T {
        f(self
            .notes
            .borrow_mut()
            .entry(project.to_string())
            .or_default())
    }

    /// Delete note `id` of `project`, and return it.
    pub(in crate::core) fn delete(&self, project: &str, id: &str) -> Option<ResearchNote> {
        self.notes
            .borrow_mut()
            .get_mut(project)
            .and_then(|n| n.delete(id))
    }

    /// Forget the notes of `project` (it was deleted).
    pub(in crate::core) fn forget_project(&self, project: &str) {
        self.notes.borrow_mut().remove(project);
    }

    /// Count one page read by `run`, if it has read fewer than `limit`; `false` when it
    /// has read `limit` already.
    pub(in crate::core) fn count_page(&self, run: &str, limit: usize) -> bool {
        let mut counts = self.runs.borrow_mut();
        let count = counts.entry(run.to_string()).or_default();
        if *count >= limit {
            return false;
        }
        *count += 1;
        true
    }

    /// Forget a run's page count (the run ended).
    pub(in crate::core) fn forget_run(&self, run: &str) {
        self.runs.borrow_mut().remove(run);
    }
}
