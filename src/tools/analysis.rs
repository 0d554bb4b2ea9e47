//! Analysis tools (filled in below).
use super::ToolRegistry;
/// Register the analysis tools.
pub fn register(_registry: &mut ToolRegistry) {}
