//! [`Faults`]: a store wrapper that makes chosen commits fail, for testing failure paths
//! against a real store (IndexedDB in the browser, where a full quota cannot be produced on
//! demand). Armed with [`Faults::fail_next`]; reads always pass through.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde_json::Value;

use super::{Batch, Store, StoreError, StoreFuture, Table};

/// A store whose next commits can be made to fail (nothing of a failed commit is written).
pub struct Faults {
    inner: Rc<dyn Store>,
    remaining: Cell<u32>,
    error: RefCell<Option<StoreError>>,
}

impl Faults {
    /// Wrap `inner`; nothing fails until armed.
    pub fn new(inner: Rc<dyn Store>) -> Self {
        Self {
            inner,
            remaining: Cell::new(0),
            error: RefCell::new(None),
        }
    }

    /// Make the next `count` commits fail with `error` (0 disarms).
    pub fn fail_next(&self, count: u32, error: StoreError) {
        self.remaining.set(count);
        *self.error.borrow_mut() = (count > 0).then_some(error);
    }

    /// How many armed failures are left.
    pub fn remaining(&self) -> u32 {
        self.remaining.get()
    }
}

impl Store for Faults {
    fn get<'a>(&'a self, table: Table, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        self.inner.get(table, key)
    }

    fn get_all(&self, table: Table) -> StoreFuture<'_, Vec<Value>> {
        self.inner.get_all(table)
    }

    fn get_by_index<'a>(
        &'a self,
        table: Table,
        index: &'a str,
        value: Value,
    ) -> StoreFuture<'a, Vec<Value>> {
        self.inner.get_by_index(table, index, value)
    }

    fn commit(&self, batch: Batch) -> StoreFuture<'_, ()> {
        let left = self.remaining.get();
        if left > 0 {
            self.remaining.set(left - 1);
            let error = self
                .error
                .borrow()
                .clone()
                .unwrap_or_else(|| StoreError::Failed("injected failure".into()));
            return Box::pin(async move { Err(error) });
        }
        self.inner.commit(batch)
    }

    fn estimate(&self) -> StoreFuture<'_, Option<(u64, u64)>> {
        self.inner.estimate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;
    use serde_json::json;

    #[test]
    fn armed_commits_fail_and_write_nothing_then_pass_again() {
        futures::executor::block_on(async {
            let faults = Faults::new(Rc::new(MemoryStore::new()));
            let put = |id: &str| {
                let mut batch = Batch::new();
                batch.put_value(Table::Meta, json!({"id": id}));
                batch
            };
            faults.fail_next(2, StoreError::Quota("full".into()));
            assert_eq!(
                faults.commit(put("a")).await,
                Err(StoreError::Quota("full".into()))
            );
            assert!(faults.commit(put("b")).await.is_err());
            assert_eq!(faults.remaining(), 0);
            faults.commit(put("c")).await.unwrap();
            assert!(faults.get(Table::Meta, "a").await.unwrap().is_none());
            assert!(faults.get(Table::Meta, "c").await.unwrap().is_some());
        });
    }
}
