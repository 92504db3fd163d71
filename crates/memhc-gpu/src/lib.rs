//! # memhc-gpu: one GPU backend, two drivers
//!
//! memhc runs its contractions on a device through the [`Backend`](memhc_backend::Backend) trait
//! of memhc-backend. An NVIDIA GPU (crate `memhc-cuda`, CUDA driver API and cuBLAS) and an AMD GPU
//! (crate `memhc-hip`, HIP runtime and rocBLAS) ask the same things of their drivers: memory
//! under a budget, page-locked staging for copies, streams and events, a BLAS handle per
//! stream, a table of device pointers for every pointer-array batch, managed memory for the
//! unified-memory baseline. This crate does all of that once, in safe code
//! (`#![forbid(unsafe_code)]`), as [`GpuBackend<D>`](GpuBackend), generic over a small trait,
//! [`DeviceApi`], that each driver crate implements. What a driver crate keeps is what only it
//! can do: find its libraries, call them, and own their handles.
//!
//! ## The layers
//!
//! From the bottom up, in each driver crate and then here:
//!
//! 1. **Loader and probe** (driver crate). The libraries are opened at run time, so every
//!    crate builds on a machine with no GPU software at all. Each crate's `probe()` loads the
//!    driver and the BLAS library, checks that every function it calls is there, counts the
//!    devices, and returns a [`Probe`], or
//!    [`BackendError::Unavailable`](memhc_backend::BackendError::Unavailable) with a one-line
//!    reason. Nothing panics when something is missing.
//! 2. **Checked calls** (driver crate): one function per driver or BLAS call, turning its
//!    status into a [`BackendError`](memhc_backend::BackendError). These and the next layer hold
//!    every `unsafe` block of the GPU backends, each with the reason it is sound.
//! 3. **Owning handles** (driver crate): device memory, page-locked memory, a stream, an
//!    event, a BLAS handle, each released when dropped.
//! 4. **The device API** (driver crate implements, this crate defines): [`DeviceApi`] names
//!    the owning handles as associated types and the calls as safe methods.
//! 5. **The backend** (this crate): [`GpuBackend<D>`](GpuBackend) implements
//!    [`Backend`](memhc_backend::Backend) on any `D: DeviceApi`. It keeps the budget in a
//!    [`Ledger`](memhc_backend::ledger::Ledger) (a [`GpuBuffer`] gives its bytes back
//!    when it goes), validates every request with memhc-backend's validators before the driver
//!    sees it, stages copies, builds and uploads pointer tables, fences staging buffers with
//!    events, and keeps one BLAS handle per stream.
//!
//! A driver crate is then little more than
//!
//! ```text
//! pub struct Cuda { /* the device's context, what was found when it opened */ }
//! impl memhc_gpu::DeviceApi for Cuda { /* one checked call per method */ }
//! pub type CudaBackend = memhc_gpu::GpuBackend<Cuda>;
//! ```
//!
//! so `CudaBackend` is `GpuBackend<Cuda>` and `HipBackend` is `GpuBackend<Hip>`: one set of
//! constructors ([`GpuBackend::new`], [`GpuBackend::with_budget`],
//! [`GpuBackend::with_options`] with a [`GpuOptions`]), one behaviour, one set of tests.
//!
//! ## The trait
//!
//! [`DeviceApi`] is shaped after the CUDA driver API, which HIP mirrors: `open` (probe, then
//! open one device), `device_name`, `describe` (the line `name()` reports) and
//! `mem_get_info`, `malloc` and `free`, `host_alloc` for page-locked memory, `copy_h2d_async` and `copy_d2h_async` between the two
//! on a stream, streams and events (record, wait, query, synchronise; timing events and the
//! milliseconds between two, for [`Backend::set_timing`](memhc_backend::Backend::set_timing)),
//! a BLAS handle bound to a
//! stream, pointer-array and strided batched ZGEMM, ZGEAM, and optional managed memory
//! (allocate, advise read-mostly, prefetch, host access in place), whose provided methods say
//! it is unsupported. Its methods are safe: an implementation checks the ranges of copies
//! against both allocations itself, and for the rest relies on a contract this crate keeps
//! (written on the trait): a page-locked buffer is not touched by the host while a copy uses
//! it, and the BLAS calls take descriptions ([`BatchedGemm`], [`StridedGemm`], [`Geam`]) that
//! only this crate can make, after validation.
//!
//! Because the trait is small, a test can implement it in host memory: this crate's tests run
//! memhc-testkit's whole conformance suite, and hadron contractions end to end, on
//! `GpuBackend<Fake>`, whose fake device runs queued work only when something waits for it and
//! reports any page-locked buffer the host touches while a copy still uses it. That is how the
//! code shared by both GPU backends is tested on a machine without a GPU.
//!
//! ## Staging: per stream, in chunks
//!
//! Before this crate, the two backends staged host-to-device copies in two ways. The CUDA
//! backend had one pool of page-locked buffers for the whole backend, behind one lock, and
//! staged each copy whole, in a buffer rounded up to a power of two, keeping up to 1 GiB idle.
//! The HIP backend gave each stream its own pool and staged in pieces of at most 32 MiB, with
//! at most 256 MiB in flight and 64 MiB idle per stream. This crate takes the second, for
//! these reasons:
//!
//! * **Page-locked memory is expensive to get.** Pinning costs time in proportion to the size
//!   (the driver locks and maps every page), so a pool should allocate few, moderate buffers
//!   and reuse them. Whole-copy staging allocates a buffer as large as the largest object: a
//!   600 MB baryon node needs a 1 GiB buffer, pinned the first time it is copied, and a
//!   second one when two such copies overlap. In pieces of [`StagingLimits::chunk`] (8 MiB)
//!   the same node reuses the same few buffers.
//! * **The footprint is bounded.** Whole-copy staging pins as much as is in flight, without
//!   limit: four streams each uploading a baryon node pin 4 GiB of host memory. Per stream,
//!   at most [`StagingLimits::busy_cap`] (256 MiB) is in flight, past which a copy waits for
//!   its oldest piece to reach the device, and [`StagingLimits::idle_cap`] (64 MiB) is kept
//!   idle.
//! * **Copies overlap.** With whole-copy staging the host copies the entire object into
//!   page-locked memory before the device copy starts. In pieces, the device copies piece
//!   *i* while the host fills piece *i + 1*, so the two overlap; a 37.7 MB meson node at
//!   N = 384 (16 spin components of 384 x 384 complex doubles) is five pieces, a 600 MB
//!   baryon node seventy-two. Device-to-host copies into the caller's slice are pipelined
//!   the same way. The first GPU runs (H100, 2026-11-26) staged in 32 MiB pieces: the meson
//!   node was one large piece and a small one, so nearly nothing overlapped.
//! * **The host side keeps up.** Filling a piece is a `memcpy`, about 9 GB/s on one core
//!   against 55 GB/s over the bus on that H100: a 36 MiB upload took 4.1 ms where the DMA
//!   needs 0.7 ms. A large piece is filled (and emptied) on several threads
//!   ([`pieces`]).
//! * **Streams do not contend.** One shared pool is one lock, held while a copy fills its
//!   buffer: a thread uploading 600 MB on one stream would stall every other stream's upload.
//!   Each stream's pool is locked only by that stream's calls.
//!
//! What it costs: one event per piece (eighteen for a baryon node, against one), and idle
//! memory per stream rather than per backend (64 MiB times the streams, four in the paper's
//! runs). The limits are [`GpuOptions::staging`] options.
//!
//! The pointer tables of pointer-array batches follow the CUDA backend: one device table per
//! stream, grown when a batch needs more, reused call after call, which stream order makes
//! safe (the next upload into it is queued after the GEMM that read it). The upload goes
//! through the same staging pool.
//!
//! ## Budget and errors
//!
//! By default a backend takes the device's free memory at creation minus a margin of the
//! larger of 512 MiB and 1/32 ([`default_budget`]), for the BLAS library's workspace, the
//! pointer tables and the driver. [`Backend::mem_info`](memhc_backend::Backend::mem_info)
//! reports the budget, not the card; [`GpuBackend::device_mem_info`] reports the card.
//! Device and managed memory count against the same budget, so managed memory never
//! oversubscribes the card.

#![forbid(unsafe_code)]

mod api;
mod backend;
mod copy_stats;
mod event;
mod memory;
pub mod model;
mod options;
pub mod pieces;
mod probe;
mod staging;
mod stream;
mod timing;

use memhc_backend::DeviceMemory;
use memhc_backend::ELEMENT_BYTES;
use memhc_backend::gemm::{DeviceRef, GemmItem};

pub use api::{
    BatchedGemm, DeviceAllocation, DeviceApi, Geam, Operands, PinnedAllocation, PitchedCopy, Span,
    Strided, StridedGemm, Unregistered,
};
pub use backend::{Adopted, GpuBackend};
pub use copy_stats::CopyStats;
pub use event::GpuEvent;
pub use memory::{GpuBuffer, GpuHostBuffer};
pub use options::{
    ComplexGemm, GpuOptions, HostWait, RegisterRule, StagingLimits, TiledCopies, default_budget,
    default_margin,
};
pub use probe::{Probe, library_path, loaded_library};
pub use staging::{Completion, Staging, StagingPool};
pub use stream::GpuStream;

/// The device address of a [`DeviceRef`]: its buffer's address plus its offset in bytes (a GPU
/// backend's [`DeviceMemory::handle`] is the allocation's device address).
pub fn address<M: DeviceMemory>(r: &DeviceRef<'_, M>) -> u64 {
    r.buffer.handle() + (r.offset * ELEMENT_BYTES) as u64
}

/// The three pointer arrays of a pointer-array batched GEMM, back to back in one table: the
/// addresses of every item's A, then of every B, then of every C (`3 * items.len()` entries),
/// so that one host-to-device copy uploads all three.
pub fn pointer_table<'a, M: DeviceMemory + 'a>(
    items: impl ExactSizeIterator<Item = GemmItem<'a, M>> + Clone,
) -> Vec<u64> {
    let mut table = Vec::with_capacity(3 * items.len());
    table.extend(items.clone().map(|i| address(&i.a)));
    table.extend(items.clone().map(|i| address(&i.b)));
    table.extend(items.map(|i| address(&i.c)));
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Mem(u64);
    impl DeviceMemory for Mem {
        fn bytes(&self) -> usize {
            1 << 20
        }
        fn handle(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn pointer_table_is_a_then_b_then_c_in_bytes() {
        let (x, y) = (Mem(0x1000), Mem(0x9000));
        let item = |a, b, c| GemmItem {
            a: DeviceRef::new(&x, a),
            b: DeviceRef::new(&y, b),
            c: DeviceRef::new(&x, c),
        };
        let table = pointer_table([item(0, 1, 2), item(3, 4, 5)].into_iter());
        assert_eq!(
            table,
            vec![
                0x1000,
                0x1000 + 48,
                0x9000 + 16,
                0x9000 + 64,
                0x1000 + 32,
                0x1000 + 80
            ]
        );
    }

    #[test]
    fn public_types_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<GpuOptions>();
        shared::<Probe>();
        shared::<BatchedGemm>();
    }
}
