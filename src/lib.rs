//! # memhc
//!
//! A runtime that runs long sequences of batched complex-f64 tensor contractions on GPUs and
//! owns GPU memory on behalf of the code that calls it, built for lattice-QCD correlation
//! functions (Redstar-like codes) whose data does not fit on one GPU. It implements the MemHC
//! paper (Wang et al., ACM TACO 19(2), 2022) faithfully: duplication-aware caching, lazy
//! release into a free pool, packed spin components, GPU-only intermediates with on-demand
//! synchronisation, and LRU / pre-protected LRU eviction; and goes beyond it with a
//! queue-aware (Belady) policy that also gives the lower bound on misses.
//!
//! This is the facade crate. It re-exports the workspace's crates under one name, so that a
//! user needs only `memhc`:
//!
//! * [`memhc_core`], the backend-agnostic runtime, at the top level ([`Runtime`], [`Config`],
//!   [`Mode`], [`Stats`], ...);
//! * [`backend`]: the [`Backend`] trait and its adaptors (`memhc-backend`), with the CPU
//!   backends of `memhc-host` as [`backend::host`] and [`backend::null`], so that everything
//!   runs and is tested on a machine with no GPU;
//! * [`policy`]: the eviction policies (`memhc-policy`);
//! * [`conformance`]: the suite every backend must pass (`memhc-testkit`);
//! * [`hadron`]: hadron nodes, spin mappings, contractions and traces.
//! * [`trace`]: the event log's timeline (Chrome trace / Perfetto), inefficiency report and
//!   memory plots.
//!
//! The GPU backends arrive as features:
//!
//! * `cuda`: the NVIDIA backend, `memhc_cuda` re-exported as `memhc::cuda` (driver API and
//!   cuBLAS through cudarc, loaded at run time, so it builds without CUDA);
//! * `rocm`: the AMD backend (HIP and rocBLAS, loaded at run time), re-exported as `hip`
//!   (the `memhc-hip` crate). It builds without ROCm.
//!
//! The CUDA backend is verified on an NVIDIA H100 (every test, every mode verified against the
//! reference, compute-sanitizer clean: `docs/results/2026-11-26-h100-2.md`); the ROCm backend
//! has not run on a GPU yet.
//!
//! Start with [`Runtime`], [`Config`] and the [`backend::host::HostBackend`]; the example in
//! [`memhc_core`]'s documentation runs one contraction end to end.
#![forbid(unsafe_code)]

pub use memhc_core::*;

/// The device abstraction (the `memhc-backend` crate), with the CPU backends of `memhc-host`:
/// the host reference backend as [`backend::host`] and the data-less one as [`backend::null`].
pub mod backend {
    pub use memhc_backend::*;
    pub use memhc_host::{host, null};
}

pub use memhc_testkit::backend_conformance_tests;
/// The backend conformance suite (the `memhc-testkit` crate).
pub use memhc_testkit::conformance;

/// Hadron nodes, spin mappings, contractions and traces on the runtime (the `hadron` crate).
pub use hadron;

/// What the runtime's event log shows (the `memhc-trace` crate): a Chrome-trace / Perfetto
/// timeline, a DRGPUM-style memory-inefficiency report with the top memory peaks, and SVG plots
/// of device memory over time.
pub use memhc_trace as trace;

/// The NVIDIA backend (the `memhc-cuda` crate), with feature `cuda`.
#[cfg(feature = "cuda")]
pub use memhc_cuda as cuda;

/// The AMD backend: HIP runtime and rocBLAS, loaded at run time (the `memhc-hip` crate).
#[cfg(feature = "rocm")]
pub use memhc_hip as hip;
