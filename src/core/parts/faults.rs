//! Fault injection for tests of failed saves: the switch that makes the store's next commits
//! fail (`debug_fail_saves`).

use std::cell::RefCell;
use std::rc::Rc;

/// Makes the next `n` commits of the store fail (see [`crate::Core::with_fail_switch`]).
pub type FailSwitch = Rc<dyn Fn(u64)>;

/// Owns the fail switch, when the embedder gave one (a store wrapped in
/// [`crate::store::faulty::Faulty`]).
#[derive(Default)]
pub(in crate::core) struct Faults {
    switch: RefCell<Option<FailSwitch>>,
}

impl Faults {
    /// Keep `switch` as the way to make saves fail.
    pub(in crate::core) fn set(&self, switch: FailSwitch) {
        *self.switch.borrow_mut() = Some(switch);
    }

    /// The switch, if this core has one.
    pub(in crate::core) fn switch(&self) -> Option<FailSwitch> {
        self.switch.borrow().clone()
    }
}
