//! # memhc-hip
//!
//! The AMD backend of memhc: [`HipBackend`] implements [`memhc_backend::Backend`] on the HIP
//! runtime (`libamdhip64`) and rocBLAS (`librocblas`), both opened at run time. Nothing of
//! ROCm is needed to build this crate, and on a machine without ROCm or without an AMD GPU,
//! [`HipBackend::new`] (and [`probe`]) returns a one-line [`BackendError::Unavailable`](memhc_backend::BackendError::Unavailable)
//! naming what is missing; it never panics.
//!
//! ## What it does
//!
//! [`HipBackend`] is [`GpuBackend<Hip>`](memhc_gpu::GpuBackend): memhc-gpu implements the
//! backend once, in safe code, over the [`DeviceApi`](memhc_gpu::DeviceApi) trait, for this
//! crate and the NVIDIA one alike, and this crate supplies [`Hip`], that trait on HIP and
//! rocBLAS. memhc-gpu's documentation describes what both share: the budget, copies staged per
//! stream through page-locked memory in pieces of at most 32 MiB, pointer tables, fences, one
//! BLAS handle per stream. On HIP that is:
//!
//! * **Memory**: synchronous `hipMalloc` / `hipFree` (not the stream-ordered allocator), under
//!   a byte budget: by default the device's free memory less
//!   [`default_margin`](memhc_gpu::default_margin) (512 MiB or 1/32, for rocBLAS's workspace,
//!   pointer tables and the runtime's own use); set it lower with [`HipBackend::with_budget`]
//!   or [`GpuOptions::budget`]. An allocation beyond the budget, and a real
//!   `hipErrorOutOfMemory`, are [`OutOfMemory`](memhc_backend::BackendError::OutOfMemory).
//!   `mem_info` reports the budget (`free` = budget − allocated), which is what `Runtime::new`
//!   takes as its default budget; `HipBackend::device_mem_info` reports the card's own numbers.
//! * **Copies**: `hipHostMalloc` page-locked memory (default flags: cached, not
//!   write-combined) for staging and for `alloc_host`, `hipHostRegister` for a caller's
//!   pageable buffer registered in place (`GpuBackend::adopt_pageable`; not yet run on a GPU),
//!   and `hipMemcpyAsync`.
//! * **Streams and events**: `hipStreamCreateWithFlags(hipStreamNonBlocking)`,
//!   `hipEventCreateWithFlags(hipEventDisableTiming)`; `hipErrorNotReady` from
//!   `hipEventQuery` is "not complete"; an event never recorded counts as complete (tracked by
//!   memhc-gpu, not left to HIP). While the backend times its work
//!   ([`Backend::set_timing`](memhc_backend::Backend::set_timing)), timing events
//!   (`hipEventDefault`) bracket each copy and batch, read with `hipEventElapsedTime`.
//! * **GEMM**: one rocBLAS handle per stream, bound to it once with `rocblas_set_stream` and
//!   pointer mode host (alpha and beta are read from host memory at the call), used under a
//!   lock because a handle is not thread-safe. Pointer-array batches are
//!   `rocblas_zgemm_batched`, strided batches one `rocblas_zgemm_strided_batched`,
//!   `geam_batched` one `rocblas_zgeam` per item. Sizes beyond rocBLAS's 32-bit `rocblas_int`
//!   are invalid arguments.
//! * **Managed memory** is not offered (every managed call returns `Unsupported`, saying why):
//!   the unified-memory baseline of the design runs on CUDA, and on AMD GPUs
//!   `hipMallocManaged` migrates pages only with XNACK enabled (otherwise it is host memory
//!   read over the bus), so a baseline on it would measure something else, and none of it can
//!   be tried here.
//!
//! ## Why `libloading` and not `rocmrc`
//!
//! `rocmrc` 0.5.1 (cudarc-like bindings, features `dynamic-loading`, `rocblas`, `rocm-06043`)
//! compiles here without ROCm and its generated `sys` modules expose every function this
//! crate needs. It was not used because its loader **panics**: the first call of any
//! function opens the library inside a `OnceLock` and calls `panic!` when the library or the
//! symbol is missing (`panic_no_lib_found`, `Missing symbol ...`), so "no ROCm" could only be
//! caught with `catch_unwind` (and not at all under `panic = "abort"`; a second call panics
//! again). It also ties the bindings to one ROCm version chosen at build time by a feature,
//! looks for sonames numbered after the ROCm version (`librocblas.so`, `.so.6`, `.so.0`,
//! `.so.1`, `.so.6.4` for 6.4, so without the unversioned development symlink it misses ROCm
//! 6's `librocblas.so.4`), brings about 30 000 lines of generated bindings for the 32 functions
//! used here, and its safe layer has no complex GEMM and `assert!`s on misuse. Declaring the 32 functions over `libloading`, all looked up at once
//! before anything runs, gives a clear error for a missing library or symbol and keeps every
//! `unsafe` block in this crate.
//!
//! ## Libraries it looks for
//!
//! The HIP runtime first: `libamdhip64.so`, then `.so.7`, `.so.6`, `.so.5` (ROCm 7, 6, 5), in
//! `$ROCM_PATH/lib` when `ROCM_PATH` is set, then through the dynamic loader
//! (`LD_LIBRARY_PATH`, the `ldconfig` cache, the system directories), then in `/opt/rocm/lib`.
//! Then rocBLAS: `librocblas.so`, `.so.5`, `.so.4`, `.so.3`, `.so.0`, first in the directory
//! the HIP runtime was loaded from (so both come from one installation), then in the same
//! places. `ROCM_PATH` is the only environment variable read; point it at a ROCm
//! installation (`/opt/rocm-6.4.3`, say) to choose one. [`Backend::name`](memhc_backend::Backend::name)
//! reports the device and the library files actually mapped. Linux only.
//!
//! ## Running on an AMD GPU
//!
//! Install ROCm 5, 6 or 7 with rocBLAS, make sure `rocminfo` lists the GPU, then
//!
//! ```sh
//! cargo test -p memhc-hip                       # conformance suite, end-to-end tests
//! cargo bench -p memhc-hip                      # contraction against bare strided ZGEMM
//! cargo run --release -p memhc-synth --features rocm -- --backend rocm --tensor-size 64
//! ```
//!
//! `HIP_VISIBLE_DEVICES` selects devices as usual; [`GpuOptions::device`] picks one of those
//! visible (`HipBackend::with_options(GpuOptions::default().device(1))`).
//!
//! ## What has been verified
//!
//! **Nothing in this crate has run on AMD hardware or against a real ROCm installation**: none
//! is reachable from where it was written. What is checked (in CI, on machines without ROCm):
//! it compiles; construction without ROCm returns the one-line `Unavailable` error naming
//! `libamdhip64` (`tests/availability.rs`); the loader refuses a library that lacks the symbols
//! (tested against the C library) and a file that is not a library, without panicking; the
//! conformance suite and end-to-end tests compile and report that they are skipped. What it
//! shares with the CUDA backend (staging, pointer tables, fences, the budget, events) is
//! tested without a GPU in memhc-gpu, on a fake device; only this crate's own layers (the
//! loader, the checked calls, the handles and the `DeviceApi` impl) have never run. The
//! prototypes and constants were written from the ROCm 6.4 headers (and checked against the
//! generated bindings of `rocmrc`). Once, by hand, against Debian's HIP runtime 5.2.3
//! (`libamdhip64.so.5` and its dependencies unpacked from the packages, not installed; Debian
//! has no rocBLAS, so a stub library exporting the nine rocBLAS names stood in for it): the
//! loader found the runtime through `ROCM_PATH`, resolved all 23 HIP functions, found the
//! stand-in rocBLAS in the runtime's directory, and `hipGetDeviceCount` answered
//! `hipErrorNoDevice`, which became the one-line "no AMD GPU" error; without the stand-in, the
//! error named `librocblas` and the places searched. The error codes used here
//! (`hipErrorOutOfMemory` = 2, `hipErrorNoDevice` = 100, `hipErrorNotReady` = 600) and the
//! version encoding were confirmed on that library. No device call, copy or GEMM has ever
//! run. Known risks on real hardware: a GPU whose
//! architecture the installed rocBLAS was not built for can make rocBLAS print an error and
//! abort the process at the first GEMM, which no Rust code can catch.
//!
//! ## Layout
//!
//! `ffi` (raw types, the function tables, the library search), `check` (one checked call per
//! function, `Result<_, BackendError>`), `handles` (owning types that release on drop), `api`
//! ([`Hip`], the `DeviceApi`, and [`probe`]). `unsafe` appears only in these, each block with
//! the reason it is sound.

mod api;
mod check;
mod ffi;
mod handles;

pub use api::{Hip, probe};
pub use handles::{BlasHandle, HipEventHandle, HipMemory, HipPinned, HipStreamHandle};
pub use memhc_gpu::{
    ComplexGemm, GpuOptions, HostWait, Probe, RegisterRule, StagingLimits, TiledCopies,
};

/// The AMD backend: [`GpuBackend`](memhc_gpu::GpuBackend) on [`Hip`]. Open it with
/// `HipBackend::new()`, `HipBackend::with_budget(bytes)` or
/// `HipBackend::with_options(GpuOptions::default().device(1).budget(bytes))`.
pub type HipBackend = memhc_gpu::GpuBackend<Hip>;
/// A device allocation of [`HipBackend`], counted against its budget.
pub type HipBuffer = memhc_gpu::GpuBuffer<Hip>;
/// Page-locked host memory of [`HipBackend`], for asynchronous copies back.
pub type HipHostBuffer = memhc_gpu::GpuHostBuffer<Hip>;
/// A stream of [`HipBackend`].
pub type HipStream = memhc_gpu::GpuStream<Hip>;
/// An event of [`HipBackend`].
pub type HipEvent = memhc_gpu::GpuEvent<Hip>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_types_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<HipBackend>();
        shared::<HipStream>();
        shared::<HipEvent>();
        shared::<HipBuffer>();
        shared::<HipHostBuffer>();
    }
}
