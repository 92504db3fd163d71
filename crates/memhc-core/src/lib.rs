//! memhc-core (work in progress).
#![forbid(unsafe_code)]

pub mod backend;
pub mod error;
pub mod object;
pub mod policy;

pub use backend::{Backend, DeviceMemory, MemInfo};
pub use error::{BackendError, BackendOp, Error, Result};
pub use object::{Access, AccessMode, Layout, ObjectId, ObjectKind, State};
