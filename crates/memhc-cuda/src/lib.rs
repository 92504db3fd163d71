//! # memhc-cuda: the NVIDIA backend
//!
//! [`CudaBackend`] implements [`memhc_backend::Backend`] on one NVIDIA GPU, with the CUDA driver
//! API and cuBLAS reached through [cudarc](https://docs.rs/cudarc) 0.19. It is
//! [`GpuBackend<Cuda>`](memhc_gpu::GpuBackend): memhc-gpu implements the backend once, in safe
//! code, over the [`DeviceApi`](memhc_gpu::DeviceApi) trait, and this crate supplies [`Cuda`],
//! that trait on CUDA. The facade crate `memhc` enables it with its `cuda` feature, and
//! `memhc-synth --backend cuda` runs on it.
//!
//! ## Loaded at run time
//!
//! Both libraries are opened with `dlopen` when a backend is created (cudarc's
//! `dynamic-loading`), so this crate builds on a machine with no CUDA at all; CI compiles it
//! there. cudarc panics when a library or a symbol is missing, so [`probe()`] first checks that
//! `libcuda` and `libcublas` load and hold every function this crate calls, and that the
//! driver starts and has a device; [`CudaBackend::new`] calls it first. When anything is
//! missing it returns [`BackendError::Unavailable`](memhc_backend::BackendError::Unavailable)
//! with a one-line reason (no driver, no device, no cuBLAS, or a library older than the API in
//! use); it never panics.
//!
//! The bindings are those of CUDA 13.0 (cudarc's `cuda-13000`): `libcublas.so.13` is searched
//! first (then the unversioned and older names cudarc knows), and a driver of the 580 series
//! or newer is needed. Put the toolkit's `lib64` directory (or the `nvidia/cublas/lib`
//! directory of a pip wheel) on `LD_LIBRARY_PATH` if cuBLAS is not found. The paths of the
//! files actually loaded are reported in [`DeviceInfo`] (`backend.api().info()`) and in
//! [`Backend::name`](memhc_backend::Backend::name).
//!
//! ## What the backend does
//!
//! memhc-gpu's documentation describes the behaviour both GPU backends share: the budget, the
//! staging of copies per stream in chunks, pointer tables, fences, one BLAS handle per stream.
//! On CUDA that is:
//!
//! * **Memory**: synchronous `cuMemAlloc`/`cuMemFree`, never the stream-ordered pool, so that
//!   what the runtime saves in allocations is what is measured. Allocations count against a
//!   budget: by default the card's free memory at creation minus a margin
//!   ([`default_budget`](memhc_gpu::default_budget)), or any lower figure
//!   ([`CudaBackend::with_budget`], [`GpuOptions`]) for oversubscription experiments on a large
//!   card. [`Backend::mem_info`](memhc_backend::Backend::mem_info) reports that budget.
//! * **Transfers**: `cuMemHostAlloc` page-locked memory (cached, not write-combined) for
//!   staging and for the destination of asynchronous copies back; `cuMemHostRegister` for a
//!   caller's pageable buffer registered in place (`GpuBackend::adopt_pageable`; not yet run on
//!   a GPU); `cuMemcpyHtoDAsync` and `cuMemcpyDtoHAsync`.
//! * **Streams and events**: non-blocking streams; events without timing; every dependency
//!   the runtime asks for is a `cuStreamWaitEvent`.
//! * **GEMM**: `cublasZgemmBatched` for pointer-array batches (any spin mapping),
//!   `cublasZgemmStridedBatched` for regular mappings, `cublasZgeam` per item for batched
//!   additions; sizes beyond cuBLAS's 32-bit `int` are invalid arguments.
//! * **Managed memory**, for the unified-memory baseline: `cuMemAllocManaged` (counted against
//!   the same budget, so never more than the card had free), `cuMemAdvise` read-mostly,
//!   `cuMemPrefetchAsync`, and host reads and writes in place.
//!
//! ## Layers
//!
//! As in cudarc itself: cudarc's `sys` and `result` layers are the raw FFI; `probe` checks the
//! libraries before anything calls them; `driver` and `blas` are the checked calls, each
//! turning a status into a typed error; `context` and `handles` are owning types whose `Drop`
//! releases what they own; `api` is [`Cuda`], the [`DeviceApi`](memhc_gpu::DeviceApi). Every
//! `unsafe` block is in these modules, each with the reason it is sound.
//!
//! ## Tests and what has run where
//!
//! `cargo test -p memhc-cuda` runs the memhc-testkit conformance suite (`tests/conformance.rs`)
//! and the hadron and synth end-to-end tests (`tests/end_to_end.rs`) against this backend when
//! a GPU is present, and prints `SKIPPED` with the reason for each when none is;
//! `tests/availability.rs` checks the one-line error without a GPU. The code shared with the
//! AMD backend is tested without a GPU in memhc-gpu, on a fake device. `scripts/gpu-run.sh`
//! runs the binaries `scripts/gpu-build.sh` builds here on a GPU machine; its records are in
//! `docs/results/`. On an H100 (2026-11-26, `docs/results/2026-11-26-h100.md`) every test of
//! this crate passed, as did compute-sanitizer's memcheck, racecheck and synccheck.

mod api;
mod blas;
mod context;
mod driver;
mod handles;
mod probe;

pub use api::{Cuda, DeviceInfo};
pub use blas::CublasHandle;
pub use handles::{CudaEventHandle, CudaMemory, CudaPinned, CudaStreamHandle};
pub use memhc_gpu::{
    ComplexGemm, GpuOptions, HostWait, Probe, RegisterRule, StagingLimits, TiledCopies,
};
pub use probe::probe;

/// The NVIDIA backend: [`GpuBackend`](memhc_gpu::GpuBackend) on [`Cuda`]. Open it with
/// `CudaBackend::new()`, `CudaBackend::with_budget(bytes)` or
/// `CudaBackend::with_options(GpuOptions::default().device(1))`.
pub type CudaBackend = memhc_gpu::GpuBackend<Cuda>;
/// A device allocation of [`CudaBackend`], counted against its budget.
pub type CudaBuffer = memhc_gpu::GpuBuffer<Cuda>;
/// Page-locked host memory of [`CudaBackend`], for asynchronous copies back.
pub type PinnedBuffer = memhc_gpu::GpuHostBuffer<Cuda>;
/// A stream of [`CudaBackend`].
pub type CudaStream = memhc_gpu::GpuStream<Cuda>;
/// An event of [`CudaBackend`].
pub type CudaEvent = memhc_gpu::GpuEvent<Cuda>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_types_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<CudaBackend>();
        shared::<CudaStream>();
        shared::<CudaEvent>();
        shared::<CudaBuffer>();
        shared::<PinnedBuffer>();
    }
}
