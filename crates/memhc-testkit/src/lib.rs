//! # memhc-testkit
//!
//! What every backend's tests share, so that "this backend works" means the same thing for the
//! host reference backend, CUDA and ROCm:
//!
//! * [`conformance`]: the backend conformance suite, each check a function over any
//!   [`Backend`](memhc_backend::Backend) compared with an independent reference, and
//!   [`backend_conformance_tests!`], which makes one `#[test]` of each;
//! * [`end_to_end`] (feature `end-to-end`, on by default): the runtime, hadron contractions and
//!   synthetic runs on a backend, checked against the `hadron` reference, and
//!   [`backend_end_to_end_tests!`]. Without the feature this crate depends on `memhc-backend`
//!   alone, which is how the runtime's own tests use the reference without a cycle;
//! * [`fuzz`]: what the seeded fuzz drivers of every crate share (issue 31): the splitmix64
//!   generator, the mutation of JSON text, and the case budget (`MEMHC_FUZZ_CASES`,
//!   `MEMHC_FUZZ_SECONDS`). It needs `std` alone, so it is there without features.
//!
//! A backend whose constructor reports that it cannot run here (no GPU, no driver) skips each
//! test with a `SKIPPED <test>: <reason>` line on stderr and passes; any other failure fails.
//! This crate's own tests run everything on the host backend, so the suite itself is exercised
//! on every CI run.

#![forbid(unsafe_code)]

pub mod conformance;
#[cfg(feature = "end-to-end")]
pub mod end_to_end;
pub mod fuzz;
