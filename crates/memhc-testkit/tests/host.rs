//! The conformance suite and the end-to-end fixtures on the host reference backend.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

use std::convert::Infallible;

use memhc_host::HostBackend;

/// The host backend with `budget` bytes (64 MiB by default).
fn host(budget: Option<usize>) -> Result<HostBackend, Infallible> {
    Ok(HostBackend::new(budget.unwrap_or(64 << 20)))
}

memhc_testkit::backend_conformance_tests!(|| host(None));

memhc_testkit::backend_end_to_end_tests!(host);

/// The same suite with GEMM on one thread per stream, so that in-stream and cross-stream
/// ordering is exercised with a different interleaving.
#[test]
fn whole_suite_with_sequential_gemm() {
    let backend = HostBackend::new(64 << 20).with_gemm_threads(1);
    memhc_testkit::conformance::run_all(&backend).unwrap();
}
