//! Navigation tools (filled in below).
use super::ToolRegistry;
/// Register the navigation tools.
pub fn register(_registry: &mut ToolRegistry) {}
