//! Proactive memory: each open project's suggestions and analysis figures, the idle
//! thinker's daily budget and the monitor of the last project edited.

use std::cell::{Ref, RefCell, RefMut};

use crate::core::proactive::Proactive;

/// Owns the proactive state. Its fields are [`Proactive`]'s own, private to
/// `core/proactive.rs`: only the proactive requests read or change them.
#[derive(Default)]
pub(in crate::core) struct ProactiveMemory {
    state: RefCell<Proactive>,
}

impl ProactiveMemory {
    /// The proactive state, for reading (not across an await).
    pub(in crate::core) fn state(&self) -> Ref<'_, Proactive> {
        self.state.borrow()
    }

    /// The proactive state, for one synchronous change (not across an await).
    pub(in crate::core) fn state_mut(&self) -> RefMut<'_, Proactive> {
        self.state.borrow_mut()
    }
}
