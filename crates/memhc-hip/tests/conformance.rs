//! The conformance suite (memhc-testkit) on the HIP backend. Without ROCm or an AMD GPU every
//! test prints `SKIPPED <test>: <why>` and passes; any other failure to open a device that is
//! there fails the test.

use memhc_core::BackendError;
use memhc_hip::HipBackend;

/// The backend, or why there is none (only "unavailable" skips: anything else is a bug).
fn make(budget: Option<usize>) -> Result<HipBackend, String> {
    let opened = match budget {
        None => HipBackend::new(),
        Some(b) => HipBackend::with_budget(b),
    };
    match opened {
        Ok(b) => Ok(b),
        Err(BackendError::Unavailable(why)) => Err(why),
        Err(other) => panic!("an AMD GPU is present but the HIP backend failed to open: {other}"),
    }
}

memhc_testkit::backend_conformance_tests!(|| make(None));

/// The whole suite on a backend with a small budget (256 MiB), run in one go.
#[test]
fn whole_suite_under_a_small_budget() {
    let b = memhc_testkit::conformance::obtain("whole_suite_under_a_small_budget", || {
        make(Some(256 << 20))
    });
    if let Some(b) = b
        && let Err(failure) = memhc_testkit::conformance::run_all(&b)
    {
        panic!("{failure}");
    }
}
