//! The backend conformance suite on the HIP backend. Without ROCm or an AMD GPU every test
//! prints `SKIPPED <test>: backend unavailable: <why>` and passes.

use memhc_core::BackendError;
use memhc_hip::HipBackend;

/// The backend, or why there is none (without repeating "backend unavailable", which the
/// suite prints itself).
fn make(budget: Option<usize>) -> Result<HipBackend, String> {
    match budget {
        None => HipBackend::new(),
        Some(b) => HipBackend::with_budget(b),
    }
    .map_err(|e| match e {
        BackendError::Unavailable(why) => why,
        other => other.to_string(),
    })
}

memhc_core::backend_conformance_tests!(|| make(None));

/// The whole suite on a backend with a small budget (256 MiB), run in one go.
#[test]
fn whole_suite_under_a_small_budget() {
    if let Some(b) = memhc_core::conformance::obtain("whole_suite_under_a_small_budget", || {
        make(Some(256 << 20))
    }) {
        if let Err(failure) = memhc_core::conformance::run_all(&b) {
            panic!("{failure}");
        }
    }
}
