//! Open projects: one copy of each project some client has open, with what saving it needs
//! ([`Open`]). The [`crate::store::Store`] is the source of truth; this is its cache.

use std::cell::{RefCell, RefMut};
use std::collections::BTreeMap;

use crate::core::saving::Open;
use crate::error::Error;
use crate::session::Session;

/// Owns the open projects, by project id.
#[derive(Default)]
pub(in crate::core) struct Projects {
    open: RefCell<BTreeMap<String, Open>>,
}

impl Projects {
    /// Whether project `id` is open.
    pub(in crate::core) fn is_open(&self, id: &str) -> bool {
        self.open.borrow().contains_key(id)
    }

    /// Keep `open` as open project `id` (replacing any copy).
    pub(in crate::core) fn insert(&self, id: &str, open: Open) {
        self.open.borrow_mut().insert(id.to_string(), open);
    }

    /// Keep `open` as open project `id` unless it was opened meanwhile.
    pub(in crate::core) fn insert_if_closed(&self, id: &str, open: impl FnOnce() -> Open) {
        self.open
            .borrow_mut()
            .entry(id.to_string())
            .or_insert_with(open);
    }

    /// Close project `id` (its unsaved work is dropped with it).
    pub(in crate::core) fn remove(&self, id: &str) {
        self.open.borrow_mut().remove(id);
    }

    /// Read open project `id`; `None` when it is not open.
    pub(in crate::core) fn read<T>(&self, id: &str, f: impl FnOnce(&Open) -> T) -> Option<T> {
        self.open.borrow().get(id).map(f)
    }

    /// Change open project `id`; `None` when it is not open.
    pub(in crate::core) fn update<T>(&self, id: &str, f: impl FnOnce(&mut Open) -> T) -> Option<T> {
        self.open.borrow_mut().get_mut(id).map(f)
    }

    /// [`Projects::update`] that gives up (`None`) when the projects are borrowed already
    /// (for code that runs on drop).
    pub(in crate::core) fn try_update<T>(
        &self,
        id: &str,
        f: impl FnOnce(&mut Open) -> T,
    ) -> Option<T> {
        self.open.try_borrow_mut().ok()?.get_mut(id).map(f)
    }

    /// Whether any open project passes `test` (false when the projects are borrowed).
    pub(in crate::core) fn any(&self, test: impl Fn(&Open) -> bool) -> bool {
        self.open
            .try_borrow()
            .is_ok_and(|open| open.values().any(test))
    }

    /// Change every open project; nothing when the projects are borrowed already (for work
    /// that can wait, see [`crate::core::Core::idle`]).
    pub(in crate::core) fn update_each(&self, mut f: impl FnMut(&mut Open)) {
        if let Ok(mut open) = self.open.try_borrow_mut() {
            open.values_mut().for_each(&mut f);
        }
    }

    /// Open project `id`, borrowed for one synchronous step.
    pub(in crate::core) fn open_mut(&self, id: &str) -> Result<RefMut<'_, Open>, Error> {
        RefMut::filter_map(self.open.borrow_mut(), |open| open.get_mut(id))
            .map_err(|_| not_open(id))
    }

    /// The session of open project `id`, borrowed for one synchronous step.
    pub(in crate::core) fn session_mut(&self, id: &str) -> Result<RefMut<'_, Session>, Error> {
        RefMut::filter_map(self.open.borrow_mut(), |open| {
            open.get_mut(id).map(|open| &mut open.session)
        })
        .map_err(|_| not_open(id))
    }
}

/// The error for a project that is not open.
pub(in crate::core) fn not_open(id: &str) -> Error {
    Error::NoProject(format!("project '{id}' is not open"))
}
