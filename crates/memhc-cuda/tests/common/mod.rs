//! What the device tests share: opening the backend, or saying plainly why they skip.

#![allow(dead_code, clippy::expect_used)]

use memhc_core::BackendError;
use memhc_cuda::{CudaBackend, GpuOptions};

/// The backend with `options`; `Err(reason)` only when there is no usable GPU here (no driver,
/// no device, no cuBLAS). Any other failure to open a GPU that is present panics: that is a
/// bug.
pub fn backend_with_options(options: GpuOptions) -> Result<CudaBackend, String> {
    match CudaBackend::with_options(options) {
        Ok(b) => Ok(b),
        Err(BackendError::Unavailable(reason)) => Err(reason),
        Err(other) => panic!("a GPU is present but the CUDA backend failed to open: {other}"),
    }
}

/// The backend on device 0 with `budget` bytes (`None`: the default budget); see
/// [`backend_with_options`].
pub fn backend_with(budget: Option<usize>) -> Result<CudaBackend, String> {
    let options = GpuOptions::default();
    backend_with_options(match budget {
        None => options,
        Some(bytes) => options.budget(bytes),
    })
}

/// The backend on device 0 with the default budget.
pub fn backend() -> Result<CudaBackend, String> {
    backend_with(None)
}
