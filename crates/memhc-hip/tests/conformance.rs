//! The conformance suite (memhc-testkit) on the HIP backend. Without ROCm or an AMD GPU every
//! test prints `SKIPPED <test>: <why>` and passes; any other failure to open a device that is
//! there fails the test.

mod common;

memhc_testkit::backend_conformance_tests!(common::backend);

/// The whole suite on a backend with a small budget (256 MiB), run in one go.
#[test]
fn whole_suite_under_a_small_budget() {
    let b = memhc_testkit::conformance::obtain("whole_suite_under_a_small_budget", || {
        common::backend_with(Some(256 << 20))
    });
    if let Some(b) = b
        && let Err(failure) = memhc_testkit::conformance::run_all(&b)
    {
        panic!("{failure}");
    }
}
