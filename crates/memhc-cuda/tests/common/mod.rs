//! What the device tests share: opening the backend, or saying plainly why they skip.

#![allow(dead_code, clippy::expect_used)]

use memhc_core::BackendError;
use memhc_cuda::{CudaBackend, GpuOptions};

/// The backend on device 0; `Err(reason)` only when there is no usable GPU here (no driver, no
/// device, no cuBLAS). Any other failure to open a GPU that is present panics: that is a bug.
pub fn backend() -> Result<CudaBackend, String> {
    backend_with(GpuOptions::default())
}

/// [`backend`] with `options`.
pub fn backend_with(options: GpuOptions) -> Result<CudaBackend, String> {
    match CudaBackend::with_options(options) {
        Ok(b) => Ok(b),
        Err(BackendError::Unavailable(reason)) => Err(reason),
        Err(other) => panic!("a GPU is present but the CUDA backend failed to open: {other}"),
    }
}

/// [`backend`], printing `SKIPPED <test>: <reason>` when there is no GPU.
pub fn backend_or_skip(test: &str) -> Option<CudaBackend> {
    match backend() {
        Ok(b) => Some(b),
        Err(reason) => {
            eprintln!("SKIPPED {test}: {reason}");
            None
        }
    }
}
