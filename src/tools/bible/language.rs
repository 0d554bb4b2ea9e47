//! Story-bible tools: language (see the parent module).

use crate::tools::ToolRegistry;

/// Register these tools.
pub fn register(_registry: &mut ToolRegistry) {}
