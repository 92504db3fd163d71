//! The backend conformance suite: what every [`Backend`] must do, checked against an
//! independent reference.
//!
//! Each check is a function taking any backend and returning a [`Failure`] that says what went
//! wrong. A backend crate runs them all by invoking [`backend_conformance_tests!`](crate::backend_conformance_tests) in a test
//! file with an expression that builds the backend:
//!
//! ```no_run
//! use memhc_host::HostBackend;
//! memhc_testkit::backend_conformance_tests!(|| {
//!     Ok::<_, std::convert::Infallible>(HostBackend::new(64 << 20))
//! });
//! ```
//!
//! The expression must be a closure returning `Result<B, E>` with `E: Display`; when it
//! returns an error (no GPU, no driver), each test prints that it was skipped and why, and
//! passes. The host backend runs the suite in this crate's `tests/host.rs`.
//!
//! The checks are grouped by subject, one file each: memory and copies, GEMM and GEAM, streams
//! and events, managed memory, tiled objects, and the reference itself; all are re-exported here.
//!
//! The GEMM reference here is a plain triple loop over the definition, on purpose: it is the
//! independent implementation results are compared against (relative Frobenius error at most
//! [`TOLERANCE`]), never a code path a backend uses.

use std::fmt;

use num_complex::Complex64;

use memhc_backend::{Backend, BackendError, DeviceMemory, ELEMENT_BYTES, as_bytes, as_bytes_mut};

/// Largest relative Frobenius error accepted between a backend's GEMM and the reference.
pub const TOLERANCE: f64 = 1e-12;

/// Why a check failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure(pub String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "backend conformance: {}", self.0)
    }
}

impl std::error::Error for Failure {}

impl From<BackendError> for Failure {
    fn from(e: BackendError) -> Self {
        Failure(format!("unexpected backend error: {e}"))
    }
}

/// Result of one check.
pub type Check = Result<(), Failure>;

fn ensure(cond: bool, msg: impl FnOnce() -> String) -> Check {
    if cond { Ok(()) } else { Err(Failure(msg())) }
}

/// Builds a backend for one test, or reports on stderr that the test is skipped and why.
pub fn obtain<B, E: fmt::Display>(test: &str, make: impl FnOnce() -> Result<B, E>) -> Option<B> {
    match make() {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("SKIPPED {test}: {e}");
            None
        }
    }
}

mod components;
mod gemm;
mod managed;
mod memory;
mod ordering;
mod reference;
mod tiles;

pub use components::*;
pub use gemm::*;
pub use managed::*;
pub use memory::*;
pub use ordering::*;
pub use reference::*;
pub use tiles::*;

fn upload<B: Backend>(b: &B, s: &B::Stream, data: &[Complex64]) -> Result<B::Buffer, Failure> {
    let buf = b.alloc(data.len() * ELEMENT_BYTES)?;
    b.copy_h2d(s, as_bytes(data), &buf, 0)?;
    Ok(buf)
}

fn download<B: Backend>(b: &B, s: &B::Stream, buf: &B::Buffer) -> Result<Vec<Complex64>, Failure> {
    let mut out = vec![Complex64::new(0.0, 0.0); buf.bytes() / ELEMENT_BYTES];
    b.copy_d2h(s, buf, 0, as_bytes_mut(&mut out))?;
    Ok(out)
}

fn free_all<B: Backend>(b: &B, buffers: impl IntoIterator<Item = B::Buffer>) -> Check {
    for buf in buffers {
        b.free(buf)?;
    }
    Ok(())
}

/// Runs every check in order, stopping at the first failure.
pub fn run_all<B: Backend>(b: &B) -> Check {
    mem_info_is_sane(b)?;
    alloc_and_free(b)?;
    copy_round_trip(b)?;
    copy_bounds_are_checked(b)?;
    copy_d2h_async_round_trip(b)?;
    copy_h2d_async_from_host_memory(b)?;
    gemm_batched_matches_reference(b)?;
    gemm_strided_matches_reference(b)?;
    gemm_beta_semantics(b)?;
    geam_matches_reference(b)?;
    gemm_rejects_invalid_arguments(b)?;
    gemm_empty_is_a_no_op(b)?;
    gemm_components_matches_reference(b)?;
    gemm_components_rejects_invalid_batches(b)?;
    stream_order_is_kept(b)?;
    events_order_streams(b)?;
    events_and_synchronisation(b)?;
    tiled_copies_follow_the_layout(b)?;
    gemm_on_tiles_matches_reference(b)?;
    managed_memory_round_trip(b)
}

/// Generates one `#[test]` per conformance check, each building its backend with `$make` (a
/// closure returning `Result<B, E: Display>`); see the [module documentation](crate::conformance).
#[macro_export]
macro_rules! backend_conformance_tests {
    ($make:expr) => {
        $crate::backend_conformance_tests!(@each $make;
            mem_info_is_sane,
            alloc_and_free,
            copy_round_trip,
            copy_bounds_are_checked,
            copy_d2h_async_round_trip,
            copy_h2d_async_from_host_memory,
            gemm_batched_matches_reference,
            gemm_strided_matches_reference,
            gemm_beta_semantics,
            geam_matches_reference,
            gemm_rejects_invalid_arguments,
            gemm_empty_is_a_no_op,
            gemm_components_matches_reference,
            gemm_components_rejects_invalid_batches,
            stream_order_is_kept,
            events_order_streams,
            events_and_synchronisation,
            tiled_copies_follow_the_layout,
            gemm_on_tiles_matches_reference,
            managed_memory_round_trip,
        );
    };
    (@each $make:expr; $($check:ident),* $(,)?) => {
        $(
            #[test]
            fn $check() {
                if let Some(backend) = $crate::conformance::obtain(stringify!($check), $make) {
                    if let Err(failure) = $crate::conformance::$check(&backend) {
                        panic!("{failure}");
                    }
                }
            }
        )*
    };
}
