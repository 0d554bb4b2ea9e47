//! The tool registry, built the first time something uses it: the core is ready without
//! reading every tool's schema, which a writer who only types never needs.

use std::cell::OnceCell;
use std::ops::Deref;

use crate::tools::ToolRegistry;

/// The standard tools ([`ToolRegistry::standard`]), built on first use.
#[derive(Default)]
pub(in crate::core) struct Tools(OnceCell<ToolRegistry>);

impl Deref for Tools {
    type Target = ToolRegistry;

    fn deref(&self) -> &ToolRegistry {
        self.0.get_or_init(ToolRegistry::standard)
    }
}

impl Tools {
    /// Whether the registry was built.
    #[cfg(all(test, not(target_arch = "wasm32")))]
    fn built(&self) -> bool {
        self.0.get().is_some()
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn the_registry_is_built_on_first_use_only() {
        let tools = Tools::default();
        assert!(!tools.built());
        let first: *const ToolRegistry = &*tools;
        assert!(tools.built());
        assert!(tools.definition("search_memory").is_some());
        assert!(std::ptr::eq(first, &*tools), "built once");
    }
}
