//! The approvals this core is deciding now: a decision claims its record in the store, and
//! until its call is carried out no other read may take it for an unfinished one.

use std::cell::RefCell;
use std::collections::BTreeSet;

/// Owns the keys of the approval records being decided by this core.
#[derive(Default)]
pub(in crate::core) struct Approvals {
    deciding: RefCell<BTreeSet<String>>,
}

impl Approvals {
    /// The keys of the approval records being decided now.
    pub(in crate::core) fn deciding(&self) -> BTreeSet<String> {
        self.deciding.borrow().clone()
    }

    /// Mark approval record `key` as being decided, until the returned guard is dropped;
    /// `None` when it is being decided already.
    pub(in crate::core) fn begin_deciding(&self, key: String) -> Option<Deciding<'_>> {
        if !self.deciding.borrow_mut().insert(key.clone()) {
            return None;
        }
        Some(Deciding {
            approvals: self,
            key,
        })
    }
}

/// Marks an approval as being decided by this core until dropped.
pub(in crate::core) struct Deciding<'a> {
    approvals: &'a Approvals,
    key: String,
}

impl Drop for Deciding<'_> {
    fn drop(&mut self) {
        self.approvals.deciding.borrow_mut().remove(&self.key);
    }
}
