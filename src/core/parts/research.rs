//! Research: each project's research notes (loaded once from the store), how many pages
//! each run going on has read, and the reader of pages.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::research::html::PageReader;
use crate::research::{Research, ResearchNote};

/// Owns the research notes of the projects read so far, the per-run page counts and the
/// page reader.
pub(in crate::core) struct ResearchState {
    /// Each project's research notes.
    notes: RefCell<BTreeMap<String, Research>>,
    /// `research_url` calls made so far by each run going on.
    runs: RefCell<BTreeMap<String, usize>>,
    /// Reads a fetched page (`None`: this core reads no pages).
    reader: RefCell<Option<Rc<dyn PageReader>>>,
}

impl Default for ResearchState {
    /// No notes; natively, pages read in this process (the worker gives its own reader).
    fn default() -> Self {
        #[cfg(not(target_arch = "wasm32"))]
        let reader: Option<Rc<dyn PageReader>> =
            Some(Rc::new(crate::research::html::InProcessReader));
        #[cfg(target_arch = "wasm32")]
        let reader = None;
        Self {
            notes: RefCell::default(),
            runs: RefCell::default(),
            reader: RefCell::new(reader),
        }
    }
}

impl ResearchState {
    /// Read pages with `reader`.
    pub(in crate::core) fn set_reader(&self, reader: Rc<dyn PageReader>) {
        *self.reader.borrow_mut() = Some(reader);
    }

    /// The page reader, if this core has one.
    pub(in crate::core) fn reader(&self) -> Option<Rc<dyn PageReader>> {
        self.reader.borrow().clone()
    }

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
