//! The memhc-core conformance suite on the CUDA backend. Each test prints `SKIPPED` and the
//! reason when this machine has no usable NVIDIA GPU; any other failure to open a device that
//! is there fails the test.

#![allow(clippy::expect_used)]

mod common;

memhc_core::backend_conformance_tests!(common::backend);

/// The whole suite on a backend with a small budget (256 MiB), run in one go.
#[test]
fn whole_suite_under_a_small_budget() {
    let b = memhc_core::conformance::obtain("whole_suite_under_a_small_budget", || {
        common::backend_with(memhc_cuda::GpuOptions::default().budget(256 << 20))
    });
    if let Some(b) = b
        && let Err(failure) = memhc_core::conformance::run_all(&b)
    {
        panic!("{failure}");
    }
}
