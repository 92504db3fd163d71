//! What the device tests share: opening the backend, or saying plainly why they skip.

#![allow(dead_code, clippy::expect_used)]

use memhc_core::BackendError;
use memhc_cuda::CudaBackend;

/// The backend on device 0 with `budget` bytes (`None`: the default budget); `Err(reason)`
/// only when there is no usable GPU here (no driver, no device, no cuBLAS). Any other failure
/// to open a GPU that is present panics: that is a bug.
pub fn backend_with(budget: Option<usize>) -> Result<CudaBackend, String> {
    let opened = match budget {
        None => CudaBackend::new(),
        Some(bytes) => CudaBackend::with_budget(bytes),
    };
    match opened {
        Ok(b) => Ok(b),
        Err(BackendError::Unavailable(reason)) => Err(reason),
        Err(other) => panic!("a GPU is present but the CUDA backend failed to open: {other}"),
    }
}

/// The backend on device 0 with the default budget; see [`backend_with`].
pub fn backend() -> Result<CudaBackend, String> {
    backend_with(None)
}
