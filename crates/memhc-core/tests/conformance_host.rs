//! The backend conformance suite on the host reference backend.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

use memhc_core::backend::host::HostBackend;

memhc_core::backend_conformance_tests!(|| Ok::<_, std::convert::Infallible>(HostBackend::new(
    64 << 20
)));

/// The same suite with GEMM on one thread per stream, so that in-stream and cross-stream
/// ordering is exercised with a different interleaving.
#[test]
fn whole_suite_with_sequential_gemm() {
    let backend = HostBackend::new(64 << 20).with_gemm_threads(1);
    memhc_core::conformance::run_all(&backend).unwrap();
}
