//! # memhc-core
//!
//! The backend-agnostic runtime of memhc: it owns device memory on behalf of a code that runs
//! long sequences of batched complex-f64 contractions, and removes the memory traffic around
//! them, first exactly as the MemHC paper (Wang et al., ACM TACO 19(2), 2022) describes, then
//! beyond it because the whole execution queue is known before it runs.
//!
//! ## The pieces
//!
//! This crate is the runtime alone. What it builds on lives in crates of their own, re-exported
//! here under the paths users know:
//!
//! * [`Backend`] ([`backend`], the crate `memhc-backend`): the device, shaped after the CUDA
//!   driver API and cuBLAS: synchronous allocation against a capacity, asynchronous copies and
//!   batched ZGEMM (pointer-array and strided) on streams, events. Implemented by the host
//!   reference backend and the null backend (`memhc-host`), and by the CUDA and ROCm crates.
//!   Two adaptors implement the trait around another backend:
//!   [`Instrumented`](backend::instrumented::Instrumented) counts traffic (statistics as a
//!   wrapper, as RMM does) and [`FaultInjector`](backend::fault::FaultInjector) fails chosen
//!   calls for tests.
//! * [`Runtime`] ([`runtime`]): objects (host-backed or GPU-only, each in one explicit
//!   [`State`]), the element cache, the free pool, the allocation path (hit, pool reuse, new
//!   allocation, drain the pool, evict), write-back on eviction, on-demand sync, packing, and
//!   launches that order work with events. [`Runtime::audit`] checks every invariant.
//! * [`policy`] (the crate `memhc-policy`): the eviction policies, one file each behind one trait: `lru` (the paper's
//!   Algorithm 1), `pp-lru` (Algorithm 2), `random`, `mru`, `car`, `clock-pro`, and `belady`,
//!   the queue-aware optimum used as the lower bound on misses.
//! * [`Config`] and [`Mode`]: one switch per optimisation (dedup, lazy release, packing,
//!   on-demand sync), so the paper's baselines are the same code with switches off, and the
//!   managed-memory switch of the unified memory baseline ([`Mode::Unified`]).
//! * [`Stats`]: the metrics under the names reports use.
//!
//! ## A launch, end to end
//!
//! ```
//! use memhc_core::backend::gemm::{GemmItem, GemmShape};
//! use memhc_host::HostBackend;
//! use memhc_core::{Access, Config, Layout, Runtime};
//! use num_complex::Complex64 as C;
//!
//! # fn main() -> Result<(), memhc_core::Error> {
//! let mut rt = Runtime::new(HostBackend::new(1 << 20), Config::default())?;
//! let layout = Layout::new(1, 4)?; // one 2x2 matrix, column-major
//! let a = rt.register(vec![C::new(1.0, 0.0), C::new(0.0, 0.0), C::new(0.0, 0.0), C::new(1.0, 0.0)], layout)?;
//! let b = rt.register(vec![C::new(1.0, 1.0), C::new(2.0, 0.0), C::new(3.0, 0.0), C::new(4.0, -1.0)], layout)?;
//! let c = rt.create(layout)?; // GPU-only: no host copy until read
//! rt.launch(0, &[Access::read(a), Access::read(b), Access::write(c)], |l| {
//!     let item = GemmItem { a: l.component(0, 0)?, b: l.component(1, 0)?, c: l.component(2, 0)? };
//!     l.gemm_batched(&GemmShape::dense(2, 2, 2), &[item])
//! })?;
//! let product = rt.read(c)?.to_vec(); // on-demand sync: the first copy back to the host
//! assert_eq!(product, rt.read(b)?); // identity * b
//! rt.audit().expect("tables consistent");
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]

pub use memhc_backend as backend;
pub use memhc_policy as policy;

mod arena;
mod block;
pub mod config;
mod device_copy;
pub mod error;
pub mod events;
mod free_pool;
mod hazards;
pub mod host_copy;
mod host_pool;
mod lease;
pub mod lifecycle;
mod lookahead;
pub mod object;
pub mod runtime;
pub mod stats;

pub use backend::{Backend, DeviceMemory, Location, MemInfo};
pub use config::{Alloc, Config, Mode, Prefetch};
pub use error::{BackendError, BackendOp, Error, Result};
pub use events::{Event, EventKind, EventLog};
pub use host_copy::HostCopy;
pub use host_pool::PinnedPoolStats;
pub use object::{Access, AccessMode, Layout, ObjectId, ObjectKind, State, Tiles};
pub use policy::{EvictionPolicy, PolicyKind};
pub use runtime::{AuditError, Components, Launch, Runtime};
pub use stats::{ArenaUsage, Stats};

/// The element type of every object: a complex double.
pub use num_complex::Complex64;
