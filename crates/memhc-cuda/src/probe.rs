//! Finding the CUDA libraries before anything calls into them.
//!
//! cudarc loads `libcuda` and `libcublas` lazily, on the first call of each function, and
//! panics when a library or a symbol is missing. This module checks, once, that both
//! libraries load and that every symbol this crate calls is in them, so that a machine without
//! a driver, without cuBLAS or with one too old gets a [`BackendError::Unavailable`] with a
//! one-line reason instead of a panic in the middle of a run.

use cudarc::{cublas, driver};
use libloading::Library;
use memhc_backend::BackendError;
use memhc_gpu::{Probe, library_path};

/// Loads the CUDA driver and cuBLAS (once per process), checks that every function this
/// backend calls is there, starts the driver and counts the devices. Fails with a one-line
/// [`BackendError::Unavailable`] naming what is missing: the driver, a device, cuBLAS, or a
/// function (a library older than the CUDA 13 API in use). Never panics.
pub fn probe() -> Result<Probe, BackendError> {
    self::driver()?;
    crate::driver::init()
        .map_err(|e| BackendError::Unavailable(format!("the CUDA driver did not start: {e}")))?;
    let devices = usize::try_from(crate::driver::device_count()?).unwrap_or(0);
    if devices == 0 {
        return Err(BackendError::Unavailable(
            "the CUDA driver reports no device".into(),
        ));
    }
    cublas()?;
    Ok(Probe {
        runtime_library: library_path("libcuda.so", "libcuda"),
        blas_library: library_path("libcublas.so", "libcublas"),
        devices,
    })
}

/// Every driver function this crate calls, directly or through `cudarc::driver::result`.
const DRIVER_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxSetFlags_v2",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuGetErrorString",
    "cuGetErrorName",
    "cuMemGetInfo_v2",
    "cuMemAlloc_v2",
    "cuMemAllocManaged",
    "cuMemFree_v2",
    "cuMemHostAlloc",
    "cuMemFreeHost",
    "cuMemHostRegister_v2",
    "cuMemHostUnregister",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpy2DAsync_v2",
    "cuMemcpy3DAsync_v2",
    "cuMemAdvise_v2",
    "cuMemPrefetchAsync_v2",
    "cuStreamCreate",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuStreamWaitEvent",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventQuery",
    "cuEventSynchronize",
    // cudarc's `cuda-13000` feature calls the `_v2` form.
    "cuEventElapsedTime_v2",
    "cuEventDestroy_v2",
];

/// Every cuBLAS function this crate calls.
const CUBLAS_SYMBOLS: &[&str] = &[
    "cublasCreate_v2",
    "cublasDestroy_v2",
    "cublasSetStream_v2",
    "cublasGetVersion_v2",
    "cublasZgemmBatched",
    "cublasZgemmStridedBatched",
    "cublasZgeam",
];

/// The library file names cudarc tries, in its order, for a library called `name`.
fn candidates(name: &str) -> Vec<String> {
    cudarc::get_lib_name_candidates(name)
}

/// Checks that the driver library loads and has every symbol this crate calls.
fn driver() -> Result<(), BackendError> {
    // SAFETY: loading the driver library runs its initialisers, which is what any CUDA
    // program does first; nothing of ours is touched.
    if !unsafe { driver::sys::is_culib_present() } {
        return Err(BackendError::Unavailable(format!(
            "no NVIDIA driver: could not load libcuda (tried {}); is the driver installed?",
            shortlist("cuda", &candidates("cuda"))
        )));
    }
    // SAFETY: `is_culib_present` just loaded the library, so `culib` finds it and does not
    // panic.
    let lib = unsafe { driver::sys::culib() };
    refuse_missing("the NVIDIA driver (libcuda)", &missing(lib, DRIVER_SYMBOLS))
}

/// Checks that cuBLAS loads and has every symbol this crate calls.
fn cublas() -> Result<(), BackendError> {
    // SAFETY: as for the driver: loading cuBLAS runs only its own initialisers.
    if !unsafe { cublas::sys::is_culib_present() } {
        return Err(BackendError::Unavailable(format!(
            "no cuBLAS: could not load libcublas (tried {}); add the CUDA toolkit's lib64 \
             directory to LD_LIBRARY_PATH",
            shortlist("cublas", &candidates("cublas"))
        )));
    }
    // SAFETY: the library was just found, so `culib` does not panic.
    let lib = unsafe { cublas::sys::culib() };
    refuse_missing("cuBLAS (libcublas)", &missing(lib, CUBLAS_SYMBOLS))
}

/// Whether the cuBLAS loaded has `cublasZgemm3m` (the complex product of three real
/// products, `ComplexGemm::Gauss`): optional, so it is not among the symbols every run needs.
/// False where cuBLAS does not load. Looked up once per process (every such GEMM asks).
pub(crate) fn has_gauss() -> bool {
    static FOUND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        // SAFETY: as in `cublas`: loading cuBLAS runs only its own initialisers.
        if !unsafe { cublas::sys::is_culib_present() } {
            return false;
        }
        // SAFETY: the library was just found, so `culib` does not panic.
        let lib = unsafe { cublas::sys::culib() };
        missing(lib, &["cublasZgemm3m"]).is_empty()
    })
}

/// The symbols of `symbols` that `lib` lacks.
fn missing<'s>(lib: &Library, symbols: &[&'s str]) -> Vec<&'s str> {
    symbols
        .iter()
        // SAFETY: looking a symbol up reads the library's tables and calls nothing.
        .filter(|s| unsafe { lib.get::<*const ()>(s.as_bytes()) }.is_err())
        .copied()
        .collect()
}

fn refuse_missing(library: &str, missing: &[&str]) -> Result<(), BackendError> {
    if missing.is_empty() {
        Ok(())
    } else {
        Err(BackendError::Unavailable(format!(
            "{library} lacks {}: it is older than the CUDA 13 API this build uses",
            missing.join(", ")
        )))
    }
}

/// The first few of the file names searched for library `name`, for a one-line message: the
/// Linux sonames (`libcuda.so...`) first, as the ones a reader will recognise.
fn shortlist(name: &str, names: &[String]) -> String {
    const SHOWN: usize = 4;
    let prefix = format!("lib{name}.so");
    let soname = |n: &&String| n.starts_with(&prefix);
    let mut s = names
        .iter()
        .filter(soname)
        .chain(names.iter().filter(|n| !soname(n)))
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_name_the_cuda_13_sonames() {
        let cublas = candidates("cublas");
        assert!(cublas.iter().any(|c| c == "libcublas.so.13"), "{cublas:?}");
        assert!(candidates("cuda").iter().any(|c| c == "libcuda.so.1"));
    }

    #[test]
    fn messages_are_one_line() {
        let e = refuse_missing("cuBLAS", &["cublasZgeam", "cublasZgemmBatched"]).unwrap_err();
        let text = e.to_string();
        assert!(!text.contains('\n') && text.contains("cublasZgeam, cublasZgemmBatched"));
        assert_eq!(
            shortlist("z", &["a", "b", "c", "d", "e", "f"].map(String::from)),
            "a, b, c, d and 2 more"
        );
        assert_eq!(
            shortlist(
                "x",
                &["x.dll", "libx64.so", "libx.so", "libx.so.13"].map(String::from)
            ),
            "libx.so, libx.so.13, x.dll, libx64.so"
        );
        assert!(refuse_missing("x", &[]).is_ok());
    }
}
