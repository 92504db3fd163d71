//! memhc facade (wip).
pub use memhc_core::*;
