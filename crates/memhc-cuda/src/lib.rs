//! # memhc-cuda: the NVIDIA backend
//!
//! [`CudaBackend`] implements [`memhc_core::Backend`] on one NVIDIA GPU, with the CUDA driver
//! API and cuBLAS reached through [cudarc](https://docs.rs/cudarc) 0.19. The facade crate
//! `memhc` enables it with its `cuda` feature, and `memhc-synth --backend cuda` runs on it.
//!
//! ## Loaded at run time
//!
//! Both libraries are opened with `dlopen` when a backend is created (cudarc's
//! `dynamic-loading`), so this crate builds on a machine with no CUDA at all; CI compiles it
//! there. cudarc panics when a library or a symbol is missing, so [`CudaBackend::new`] first
//! checks that `libcuda` and `libcublas` load and hold every function this crate calls
//! (`probe`), and that the driver starts and has a device. When anything is missing it returns
//! [`BackendError::Unavailable`](memhc_core::BackendError::Unavailable) with a one-line reason
//! (no driver, no device, no cuBLAS, or a library older than the API in use); it never panics.
//!
//! The bindings are those of CUDA 13.0 (cudarc's `cuda-13000`): `libcublas.so.13` is searched
//! first (then the unversioned and older names cudarc knows), and a driver of the 580 series
//! or newer is needed. Put the toolkit's `lib64` directory (or the `nvidia/cublas/lib`
//! directory of a pip wheel) on `LD_LIBRARY_PATH` if cuBLAS is not found. The paths of the
//! files actually loaded are reported in [`DeviceInfo`] and in
//! [`Backend::name`](memhc_core::Backend::name).
//!
//! ## What the backend does
//!
//! * **Memory**: synchronous `cuMemAlloc`/`cuMemFree`, never the stream-ordered pool, so that
//!   what the runtime saves in allocations is what is measured. Allocations count against a
//!   budget: by default the card's free memory at creation minus a margin
//!   ([`default_budget`](memhc_core::backend::gpu::default_budget)), or any lower figure
//!   ([`CudaBackend::with_budget`]) for oversubscription experiments on a large card.
//!   [`Backend::mem_info`](memhc_core::Backend::mem_info) reports that budget.
//! * **Transfers**: host-to-device copies go through page-locked staging buffers (cached, not
//!   write-combined), recycled once an event after the copy completes, so the caller's slice is
//!   free when the call returns; device-to-host copies land in page-locked memory
//!   ([`PinnedBuffer`]) whose reads wait for the copy's event.
//! * **Streams and events**: non-blocking streams; events without timing; every dependency
//!   the runtime asks for is a `cuStreamWaitEvent`.
//! * **GEMM**: `cublasZgemmBatched` for pointer-array batches (any spin mapping): the three
//!   pointer arrays are uploaded, on the GEMM's stream, into a device table that the stream
//!   owns and reuses, which stream order makes safe; `cublasZgemmStridedBatched` for regular
//!   mappings; `cublasZgeam` per item for batched additions. One cuBLAS handle per stream,
//!   bound once. Every call is checked by memhc-core's validators before it is enqueued.
//! * **Managed memory**, for the unified-memory baseline: `cuMemAllocManaged` (counted against
//!   the same budget, so never more than the card had free), `cuMemAdvise` read-mostly,
//!   `cuMemPrefetchAsync`, and host reads and writes in place.
//!
//! ## Layers
//!
//! As in cudarc itself: cudarc's `sys` and `result` layers are the raw FFI; `driver` and
//! `blas` are the checked calls, each turning a status into a typed error, and hold nearly
//! every `unsafe` block; `context`, `memory`, `stream` and `event` are owning types whose
//! `Drop` releases what they own; [`CudaBackend`] composes them.
//!
//! ## Tests and what has run where
//!
//! `cargo test -p memhc-cuda` runs the memhc-core conformance suite and the hadron and synth
//! end-to-end tests against this backend when a GPU is present, and prints `SKIPPED` with the
//! reason for each when none is. `scripts/gpu-run.sh` builds everything here and runs it on a
//! GPU machine from the prebuilt binaries; its records are in `docs/results/`.

mod backend;
mod blas;
mod context;
mod driver;
mod event;
mod memory;
mod probe;
mod stream;

pub use backend::{CudaBackend, CudaOptions, DeviceInfo};
pub use event::CudaEvent;
pub use memory::{CudaBuffer, PinnedBuffer};
pub use stream::CudaStream;
