//! The end-to-end fixtures (memhc-testkit) on the HIP backend: hadron contractions through the
//! runtime and synthetic queues in every mode, fitting and under memory pressure, every result
//! verified against the reference. Each test prints `SKIPPED <test>: <why>` and passes when the
//! backend cannot be constructed (no ROCm, no AMD GPU).

use memhc_core::BackendError;
use memhc_hip::HipBackend;

/// The backend with `budget` bytes (`None`: its default), or why there is none.
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

memhc_testkit::backend_end_to_end_tests!(make);
