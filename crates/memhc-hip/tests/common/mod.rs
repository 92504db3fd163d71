//! What the device tests share: opening the backend, or saying plainly why they skip.

#![allow(dead_code)]

use memhc_backend::BackendError;
use memhc_hip::HipBackend;

/// The backend with `budget` bytes (`None`: its default); `Err(reason)` only when there is no
/// ROCm or no AMD GPU here. Any other failure to open a device that is there panics: that is a
/// bug.
pub fn backend_with(budget: Option<usize>) -> Result<HipBackend, String> {
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

/// The backend with its default budget; see [`backend_with`].
pub fn backend() -> Result<HipBackend, String> {
    backend_with(None)
}
