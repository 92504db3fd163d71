//! # memhc-capi
//!
//! The C ABI of memhc, for C and C++ codes (Redstar-like) that embed the runtime: built as
//! `libmemhc_capi.so` and `libmemhc_capi.a`, declared by `include/memhc.h` (generated from this
//! crate by cbindgen and committed; the test `header_is_current` fails when it is stale).
//! The header's comments are the reference for C callers: ownership, lifetimes, thread safety
//! and error handling are spelled out there.
//!
//! ## Layers
//!
//! * [`ffi`]: the `extern "C"` functions, the only module with `unsafe`: it checks every raw
//!   pointer (null, alignment, size), converts it to a slice or a value, runs the call under
//!   `catch_unwind` (no panic crosses into C) and sets the status and the thread-local
//!   message ([`last_error`]).
//! * [`api`]: the calls in safe Rust on converted values: the registry of runtimes, and per
//!   runtime the registries of its objects and plans, over a [`memhc_embed::Session`].
//! * [`registry`]: generation-checked handles: a double release or a use after release is a
//!   refused handle with a message, never undefined behaviour.
//! * [`status`] and [`types`]: the status codes and the C structs.
//!
//! ## Correlators
//!
//! A correlator file (`memhc-corr/1`, `docs/correlator-format.md`) runs from C in a few calls
//! ([`ffi::corr`] over [`api::corr`], on [`memhc_embed::CorrRun`]): `memhc_corr_open(path,
//! &options, &corr)` loads and plans it, `memhc_corr_plan` gives the planner's report,
//! `memhc_corr_run(corr, &config, &results)` runs it on a fresh runtime of the configuration
//! (a host run without a budget gets the plan's peak), and the results are read by index
//! (`memhc_corr_results_count`, `_name`, `_len`, `_values` into caller-owned buffers, `_find`
//! by name) or written (`_write`, by extension). `memhc_corr_reference` and
//! `memhc_corr_verify` check a run against the independent dense reference. Files and
//! results are two more kinds of generation-checked handle ([`MemhcCorr`],
//! [`MemhcCorrResults`]), in process-wide registries (they belong to no runtime).
//!
//! ## Page-locked buffers
//!
//! A node's values can be written straight into the backend's host memory (page-locked on a
//! GPU, so the upload is one DMA) and registered without a copy, and a result handed out
//! where its read-back landed ([`ffi::host`] over [`api::host`], on
//! [`memhc_embed::HostBuffer`]): `memhc_host_alloc(rt, spins, dims, rank, &h)`,
//! `memhc_host_data(rt, h, &ptr, &len)` (the caller fills `ptr[0..len]`),
//! `memhc_host_register(rt, h, &object)` (takes the buffer: `h` and `ptr` are dead from then
//! on); `memhc_take_host(rt, result, &h)` (the result's object is released), read through
//! `memhc_host_data`, then `memhc_host_free`. Host buffers are a sixth kind of handle
//! ([`MemhcHost`]), in the registry of their runtime, freed with it.
#![deny(unsafe_code)]

pub mod api;
#[allow(unsafe_code)]
pub mod ffi;
pub mod last_error;
pub mod registry;
pub mod status;
pub mod types;

pub use status::{Failure, MemhcStatus};
pub use types::{
    MemhcComplex, MemhcConfig, MemhcContraction, MemhcCorr, MemhcCorrOptions, MemhcCorrPlanReport,
    MemhcCorrResults, MemhcCorrTime, MemhcHost, MemhcObject, MemhcPair, MemhcPlan, MemhcRuntime,
    MemhcStats, MemhcTerm,
};

/// Where the committed header lives, relative to the workspace root.
pub const HEADER_PATH: &str = "include/memhc.h";
