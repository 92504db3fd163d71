//! # memhc-embed
//!
//! memhc for codes that are not written in Rust: one safe layer that the C ABI
//! (`memhc-capi`) and the Python module (`memhc-py`) both stand on, so that they differ only in
//! how values cross the boundary.
//!
//! * [`Options`]: a runtime described by names and numbers, as a C struct or Python keywords
//!   give it: the backend (`host`, `cuda`, `rocm`), the device budget (`"8G"`, `"512MiB"`:
//!   [`parse_bytes_usize`], the one grammar of byte counts, `memhc-select`'s), the eviction
//!   policy, the mode, the streams and the random policy's seed. Every name is read by
//!   `memhc-select`, as on the command lines.
//! * [`Session`]: a [`hadron::Engine`] on the backend the options name, whatever its type
//!   (the backends are different Rust types; the session hides which one it holds): register
//!   host nodes, contract with any spin mapping, run vectors, trace, read results into a
//!   caller's buffer, release, statistics and audit.
//! * [`HostBuffer`] ([`host_buffer`]): a node's values in the backend's host memory
//!   (page-locked on a GPU), from [`Session::alloc_host`] to fill in place and
//!   [`Session::register_host`] without a copy, or a result from [`Session::take_host`] where
//!   its read-back landed ([`Options::host_memory`]: [`HostMemoryKind::Pinned`]).
//! * [`CorrRun`] ([`mod@corr`]): a correlator file (`memhc-corr/1`,
//!   `docs/correlator-format.md`) loaded and planned ([`CorrOptions`]: sharing, order, vector
//!   size), its [`PlanReport`], runs on the backend an [`Options`] names (a host run without a
//!   budget gets the plan's peak, as `memhc run`), and [`CorrResults`]: the correlators by
//!   name, their `(source, sink)` time pairs and complex values, the dense reference to check
//!   them against, and files by extension (`.json`, `.csv`, `.h5` with the feature `hdf5`).
//! * [`EmbedError`] and its [`ErrorKind`]: what went wrong, sorted into the few kinds a C status
//!   code or a Python exception can carry.
//!
//! ```
//! use memhc_embed::{Options, Session};
//! use memhc_embed::hadron::{SpinMapping, TracePairs, Contraction};
//! use memhc_embed::Complex64 as C;
//! use std::sync::Arc;
//!
//! # fn main() -> Result<(), memhc_embed::EmbedError> {
//! let mut s = Session::open(&Options::host(64 << 20))?;
//! let n = 4;
//! let ones = vec![C::new(1.0, 0.0); 16 * n * n];
//! let a = s.register(16, &[n, n], ones.clone())?;
//! let b = s.register(16, &[n, n], ones)?;
//! let out = s.contract(0, &Contraction::new(a, b, Arc::new(SpinMapping::meson4x4())))?;
//! let mut values = vec![C::default(); s.elements(out)?];
//! s.read_into(out, &mut values)?;
//! assert!(values.iter().all(|&v| v == C::new(4.0 * n as f64, 0.0))); // 4 terms of n products
//! let t = s.trace(0, out, b, &TracePairs::meson4x4())?;
//! assert_eq!(t, C::new((16 * 4 * n * n * n) as f64, 0.0));
//! s.audit()?;
//! # Ok(()) }
//! ```
//!
//! A whole correlator file, checked against the independent reference:
//!
//! ```
//! use memhc_embed::{CorrOptions, CorrRun, Options};
//!
//! # fn main() -> Result<(), memhc_embed::EmbedError> {
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/pion.corr.json");
//! let run = CorrRun::open(path, &CorrOptions::default())?;     // load and plan
//! let report = run.plan_report();
//! assert!(report.contractions <= report.contractions_without_sharing);
//! let results = run.run(&Options::default())?;                // host, budget: the plan's peak
//! let i = results.find("C_pi_pi").unwrap_or(0);
//! for ((source, sink), c) in results.times(i)?.into_iter().zip(results.values(i)?) {
//!     println!("C_pi_pi({source}, {sink}) = {c}");
//! }
//! assert!(run.verify(&results)? <= 1e-12);                    // against the dense reference
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]

mod any;
pub mod corr;
pub mod error;
pub mod host_buffer;
pub mod options;
pub mod session;

pub use corr::{
    CorrOptions, CorrResults, CorrRun, Order, PlanReport, check_output_path, load_correlators,
};
pub use error::{EmbedError, ErrorKind, Result};
pub use host_buffer::HostBuffer;
pub use memhc_select::{BackendChoice, BytesError, HostMemoryKind, parse_bytes_usize};
pub use options::Options;
pub use session::Session;

/// The hadron layer (nodes, mappings, contractions, traces), re-exported for the types the
/// session's methods take.
pub use hadron;
/// The element type: a complex double (`re`, `im`), laid out as C's `double _Complex` and
/// C++'s `std::complex<double>`.
pub use memhc_core::Complex64;
pub use memhc_core::{ObjectId, Stats};
/// The correlator crate (file format, planner, values), re-exported for the types
/// [`CorrRun`] and [`CorrResults`] return.
pub use memhc_corr;
