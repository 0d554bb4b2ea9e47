//! Jobs alive in this core, by project, and the way to run them in the background.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use futures_util::future::LocalBoxFuture;

use crate::core::jobs::JobRt;

/// Runs a future in the background (the worker's `spawn_local`).
pub type Spawner = Rc<dyn Fn(LocalBoxFuture<'static, ()>)>;

/// A job alive in this core, with the project it works on.
struct Live {
    project: String,
    rt: Rc<JobRt>,
}

/// Owns the spawner, when the embedder gave one, and the jobs alive in this core.
#[derive(Default)]
pub(in crate::core) struct Jobs {
    spawner: RefCell<Option<Spawner>>,
    /// By job id.
    live: RefCell<BTreeMap<String, Live>>,
}

impl Jobs {
    /// Run background work with `spawn` from now on.
    pub(in crate::core) fn set_spawner(&self, spawn: Spawner) {
        *self.spawner.borrow_mut() = Some(spawn);
    }

    /// The way to run background work, if this core has one.
    pub(in crate::core) fn spawner(&self) -> Option<Spawner> {
        self.spawner.borrow().clone()
    }

    /// Whether this core can run background work.
    pub(in crate::core) fn can_spawn(&self) -> bool {
        self.spawner.borrow().is_some()
    }

    /// Job `id`, if it is alive here.
    pub(in crate::core) fn get(&self, id: &str) -> Option<Rc<JobRt>> {
        self.live.borrow().get(id).map(|live| Rc::clone(&live.rt))
    }

    /// Job `id` of `project`, if it is alive here.
    pub(in crate::core) fn get_in(&self, project: &str, id: &str) -> Option<Rc<JobRt>> {
        self.live
            .borrow()
            .get(id)
            .filter(|live| live.project == project)
            .map(|live| Rc::clone(&live.rt))
    }

    /// Whether job `id` is alive here.
    pub(in crate::core) fn contains(&self, id: &str) -> bool {
        self.live.borrow().contains_key(id)
    }

    /// Keep job `id` of `project` alive.
    pub(in crate::core) fn insert(&self, id: &str, project: &str, rt: Rc<JobRt>) {
        let live = Live {
            project: project.to_string(),
            rt,
        };
        self.live.borrow_mut().insert(id.to_string(), live);
    }

    /// The jobs of `project` alive here.
    pub(in crate::core) fn of_project(&self, project: &str) -> Vec<Rc<JobRt>> {
        self.live
            .borrow()
            .values()
            .filter(|live| live.project == project)
            .map(|live| Rc::clone(&live.rt))
            .collect()
    }

    /// Stop keeping the jobs of `project` (it was deleted), and return them.
    pub(in crate::core) fn forget_project(&self, project: &str) -> Vec<Rc<JobRt>> {
        let gone = self.of_project(project);
        self.live
            .borrow_mut()
            .retain(|_, live| live.project != project);
        gone
    }
}
