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
//! ## Correlators (to come)
//!
//! When the correlator crate (`memhc-corr`) lands, its C calls go in a new submodule
//! `ffi::corr` over `api::corr`: `memhc_corr_run(rt, path, &corr)` to run a correlator file
//! on a runtime, `memhc_corr_count`, `memhc_corr_read(corr, i, buf, len)` for its values, and
//! `memhc_corr_release`, with a `MemhcCorrelator` handle in a fourth registry kind. The status
//! codes and the error conventions above already cover them.
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
    MemhcComplex, MemhcConfig, MemhcContraction, MemhcObject, MemhcPair, MemhcPlan, MemhcRuntime,
    MemhcStats, MemhcTerm,
};

/// Where the committed header lives, relative to the workspace root.
pub const HEADER_PATH: &str = "include/memhc.h";
