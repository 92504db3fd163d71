//! # memhc-backend
//!
//! The device abstraction: one trait that every backend (host reference, CUDA, ROCm)
//! implements, shaped after the CUDA driver API and cuBLAS so that a GPU backend is a thin
//! translation of it.
//!
//! # Execution model
//!
//! * **Memory** is allocated and freed synchronously ([`Backend::alloc`], [`Backend::free`]),
//!   as `cuMemAlloc`/`cuMemFree` do. A backend reports its capacity through
//!   [`Backend::mem_info`]; an allocation beyond it fails with
//!   [`BackendError::OutOfMemory`].
//! * **Work** (copies, GEMMs) is enqueued on a [`Backend::Stream`] and runs asynchronously, in
//!   order within one stream and concurrently across streams. A call returns once the work is
//!   enqueued (and validated: invalid arguments are reported at once, never later).
//! * **Events** order work across streams: [`Backend::record_event`] marks the work enqueued so
//!   far on a stream; [`Backend::wait_event`] makes another stream wait for it;
//!   [`Backend::event_query`] / [`Backend::event_synchronize`] let the host test or wait for
//!   completion. Waiting on an event waits for its most recent record at the time of the call
//!   (CUDA semantics); an event never recorded counts as complete.
//! * **Copies** are asynchronous and stream-ordered both ways. [`Backend::copy_h2d`] reads its
//!   host source before returning (a GPU backend stages it through pinned memory), so the
//!   caller may reuse the slice at once; the device write happens in stream order.
//!   [`Backend::copy_d2h_async`] writes into a [`HostMemory`] buffer the backend allocated
//!   (pinned, for a GPU), whose contents may be read once the copy has completed (after an
//!   event or stream synchronisation). [`Backend::copy_d2h`] is the blocking convenience built
//!   on it: it returns when the destination slice is filled.
//! * **Host objects** live in the same [`HostMemory`] buffers when the caller wants copies
//!   without staging: the host fills one in place ([`HostMemory::as_mut_bytes`]) and
//!   [`Backend::copy_h2d_async`] copies from it directly (one DMA on a GPU: no staging copy, no
//!   page fault), reading it in stream order, so the host must not change it until the copy has
//!   completed (`as_mut_bytes` waits for, or refuses, the copies still using it).
//! * **Freeing** a buffer that queued work still uses is the caller's bug: the caller must wait
//!   on the buffer's events first. The host backend detects it and returns
//!   [`BackendError::BufferInUse`].
//!
//! * **Managed (unified) memory** is optional ([`Backend::supports_managed`]): memory that
//!   both the host and the device address, migrated by the driver. It exists for the unified
//!   memory baseline; a managed allocation is a
//!   [`Backend::Buffer`] like any other, so GEMMs take it as they take device memory, and the
//!   host reads and writes it in place ([`Backend::managed_write`],
//!   [`Backend::managed_read`]) once the work using it has completed.
//!
//! * **Timing** is optional ([`Backend::set_timing`]): a backend that can records when each
//!   copy and GEMM batch started and ended on its stream ([`timeline`]), so that the overlap of
//!   copies with compute can be measured.
//!
//! The GEMM descriptions and their validation are in [`gemm`]; batches given by component
//! index, the form a hadron contraction takes, in [`components`].

#![forbid(unsafe_code)]

pub mod adaptor;
pub mod components;
mod disjoint;
pub mod error;
pub mod fault;
pub mod gemm;
pub mod instrumented;
pub mod ledger;
pub mod tiles;
pub mod timeline;
pub mod zeroed;

use num_complex::Complex64;

use components::{ComponentBatch, validate_components};
pub use error::{BackendError, BackendOp};
use gemm::{GeamShape, GemmItem, GemmShape, StridedBatch};
use tiles::Tiles;
use timeline::WorkSpan;

/// Size in bytes of one element (a complex double).
pub const ELEMENT_BYTES: usize = std::mem::size_of::<Complex64>();

/// Device memory of one allocation, owned by whoever holds it (never `Clone`).
pub trait DeviceMemory: Send + Sync + std::fmt::Debug {
    /// Size of the allocation in bytes.
    fn bytes(&self) -> usize;
    /// A value that identifies the allocation while it is live (for a GPU, its device
    /// address). Two live allocations of one backend never share a handle.
    fn handle(&self) -> u64;
}

/// Host memory a backend allocated as the destination of asynchronous device-to-host copies
/// (page-locked memory on a GPU). Owned by whoever holds it; freed on drop.
pub trait HostMemory: Send + Sync + std::fmt::Debug {
    /// Size in bytes.
    fn bytes(&self) -> usize;

    /// Copies `dst.len()` bytes starting at byte `offset` into `dst`. The copies into this
    /// buffer must have completed (the caller synchronised on them); a backend either waits
    /// for them or reports [`BackendError::BufferInUse`].
    fn read(&self, offset: usize, dst: &mut [u8]) -> Result<(), BackendError>;

    /// The buffer's bytes, for the host to fill or read in place (a node's values generated
    /// straight into page-locked memory; a result read where the device put it). The copies
    /// that use the buffer, into it or out of it, must have completed: a backend either waits
    /// for them or reports [`BackendError::BufferInUse`]. What a buffer nobody wrote holds is
    /// unspecified; the slice is aligned for complex doubles.
    fn as_mut_bytes(&mut self) -> Result<&mut [u8], BackendError>;
}

/// Device memory as the device reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MemInfo {
    /// Bytes that can still be allocated.
    pub free: usize,
    /// Bytes the device has in all.
    pub total: usize,
}

/// Where [`Backend::prefetch`] moves managed memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Location {
    /// The device's memory.
    Device,
    /// Host memory.
    Host,
}

/// A device that can hold memory, move data to and from the host and multiply complex
/// matrices in batches, asynchronously on streams.
///
/// See the [module documentation](self) for the execution model every implementation follows,
/// and the conformance suite of `memhc-testkit` for the suite every implementation must pass.
pub trait Backend {
    /// One device allocation.
    type Buffer: DeviceMemory;
    /// An in-order queue of work.
    type Stream: Send + Sync;
    /// A completion marker; clones refer to the same event.
    type Event: Clone + Send + Sync;
    /// Host memory for asynchronous device-to-host copies.
    type HostBuffer: HostMemory;

    /// A one-line description: the device, and the libraries in use.
    fn name(&self) -> String;

    /// Free and total device memory.
    fn mem_info(&self) -> Result<MemInfo, BackendError>;

    /// Allocates `bytes` (> 0) of device memory, synchronously.
    fn alloc(&self, bytes: usize) -> Result<Self::Buffer, BackendError>;

    /// Frees an allocation. The caller must have waited for all work that uses it.
    fn free(&self, buffer: Self::Buffer) -> Result<(), BackendError>;

    /// Creates a stream.
    fn create_stream(&self) -> Result<Self::Stream, BackendError>;

    /// Creates an event (not yet recorded: it counts as complete).
    fn create_event(&self) -> Result<Self::Event, BackendError>;

    /// Records `event` on `stream`: it completes when all work enqueued on the stream so far has.
    fn record_event(&self, event: &Self::Event, stream: &Self::Stream) -> Result<(), BackendError>;

    /// Makes all work enqueued on `stream` after this call wait until the most recent record
    /// of `event` has completed.
    fn wait_event(&self, stream: &Self::Stream, event: &Self::Event) -> Result<(), BackendError>;

    /// Whether the most recent record of `event` has completed.
    fn event_query(&self, event: &Self::Event) -> Result<bool, BackendError>;

    /// Blocks the host until the most recent record of `event` has completed.
    fn event_synchronize(&self, event: &Self::Event) -> Result<(), BackendError>;

    /// Blocks the host until all work enqueued on `stream` has completed.
    fn stream_synchronize(&self, stream: &Self::Stream) -> Result<(), BackendError>;

    /// Blocks the host until all work on all streams has completed.
    fn synchronize(&self) -> Result<(), BackendError>;

    /// Enqueues a copy of `src` into `dst` starting at byte `dst_offset`. `src` is read (or
    /// staged) before the call returns.
    fn copy_h2d(
        &self,
        stream: &Self::Stream,
        src: &[u8],
        dst: &Self::Buffer,
        dst_offset: usize,
    ) -> Result<(), BackendError>;

    /// Allocates `bytes` (> 0) of host memory that asynchronous copies can write into and read
    /// from (page-locked on a GPU); what it holds before anything writes it is unspecified.
    fn alloc_host(&self, bytes: usize) -> Result<Self::HostBuffer, BackendError>;

    /// Host memory of its own over `bytes` of `chunk` (host memory from
    /// [`Backend::alloc_host`]) from byte `offset`: copies to and from it, in-place access and
    /// the copies it waits for are its own, and it keeps `chunk` alive. For a caller that
    /// sub-allocates a few large page-locked allocations instead of making one per buffer
    /// (memhc-core's pinned pool). The caller keeps live pieces of one chunk disjoint, and
    /// hands a range out again only once the piece over it is dropped (dropping a piece waits
    /// for the copies that use it). A range outside `chunk` is
    /// [`BackendError::InvalidArgument`]. `Ok(None)`: this backend does not cut pieces (the
    /// provided version); the caller allocates each buffer on its own.
    fn host_piece(
        &self,
        chunk: &std::sync::Arc<Self::HostBuffer>,
        offset: usize,
        bytes: usize,
    ) -> Result<Option<Self::HostBuffer>, BackendError> {
        let _ = (chunk, offset, bytes);
        Ok(None)
    }

    /// Takes the caller's pageable `memory`, expected to be copied to the device `copies`
    /// times, as host memory of the backend if registering it in place pays (page-locking it:
    /// `cuMemHostRegister`, `hipHostRegister`; every later copy is one DMA, with no staging),
    /// and hands it back otherwise. Dropping the host memory unregisters it and frees the
    /// vector. The provided version always hands it back (a backend without staging has
    /// nothing to save).
    fn adopt_host(&self, memory: Vec<u64>, copies: usize) -> Result<Self::HostBuffer, Vec<u64>> {
        let _ = copies;
        Err(memory)
    }

    /// Whether [`Backend::adopt_host`] would register `bytes` of pageable memory expected to be
    /// copied `copies` times (by its rule: the registration itself may still fail), asked
    /// before the memory exists: a caller whose memory is made on first use makes it only for
    /// a backend that takes it. Must agree with `adopt_host`'s rule. The provided version says
    /// no, as the provided `adopt_host` hands everything back.
    fn adopts_host(&self, bytes: usize, copies: usize) -> bool {
        let _ = (bytes, copies);
        false
    }

    /// Enqueues a copy of `len` bytes of host buffer `src` (from byte `src_offset`) into `dst`
    /// (from byte `dst_offset`), after all work enqueued on `stream` so far. Unlike
    /// [`Backend::copy_h2d`] it reads `src` in stream order, not before returning: a GPU copies
    /// page-locked memory in one DMA, with no staging. The host must not change `src` until
    /// the copy has completed ([`HostMemory::as_mut_bytes`] waits for it, or refuses). The
    /// provided version reads `src` at once and calls [`Backend::copy_h2d`]; a backend that can
    /// copy from its host buffers directly overrides it.
    fn copy_h2d_async(
        &self,
        stream: &Self::Stream,
        src: &Self::HostBuffer,
        src_offset: usize,
        dst: &Self::Buffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyH2D,
            "host buffer",
            src.bytes(),
            src_offset,
            len,
        )?;
        let mut staged = Vec::new();
        staged.try_reserve_exact(len).map_err(|_| {
            BackendError::invalid(BackendOp::CopyH2D, format!("cannot stage {len} bytes"))
        })?;
        staged.resize(len, 0);
        src.read(src_offset, &mut staged)?;
        self.copy_h2d(stream, &staged, dst, dst_offset)
    }

    /// Enqueues a copy of `len` bytes from `src` (from byte `src_offset`) into `dst` (from byte
    /// `dst_offset`), after all work enqueued on `stream` so far. `dst` may be read once the
    /// copy has completed.
    fn copy_d2h_async(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &Self::HostBuffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError>;

    /// Copies `dst.len()` bytes from `src` starting at byte `src_offset` into `dst`, after all
    /// work enqueued on `stream` so far; returns when `dst` is filled. The provided version
    /// stages through [`Backend::alloc_host`], [`Backend::copy_d2h_async`] and
    /// [`Backend::stream_synchronize`]; a backend may do better.
    fn copy_d2h(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        if dst.is_empty() {
            return Ok(());
        }
        let staging = self.alloc_host(dst.len())?;
        self.copy_d2h_async(stream, src, src_offset, &staging, 0, dst.len())?;
        self.stream_synchronize(stream)?;
        staging.read(0, dst)
    }

    /// Whether the backend keeps and computes on the values it is given. A backend that only
    /// counts or models its work (the null backend, the modelled GPU) does not: a runner need
    /// not generate node values for it, which on a large sweep is most of the host's time. The
    /// provided version says it does.
    fn holds_values(&self) -> bool {
        true
    }

    /// Whether the backend implements the tiled copies ([`Backend::copy_h2d_tiled`] and the
    /// three others): the runtime tiles objects on the device only where it does. The
    /// provided version says no.
    fn supports_tiles(&self) -> bool {
        false
    }

    /// [`Backend::copy_h2d`] of a whole object in the packed order (`src`, [`Tiles::bytes`]
    /// long) into the tiled order at `dst_offset` ([`tiles`]: one 2D copy per component).
    /// Provided: [`BackendError::Unsupported`].
    fn copy_h2d_tiled(
        &self,
        stream: &Self::Stream,
        src: &[u8],
        dst: &Self::Buffer,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        let _ = (stream, src, dst, dst_offset, tiles);
        Err(no_tiles(self))
    }

    /// [`Backend::copy_h2d_async`] of a whole object, from the packed order at `src_offset`
    /// into the tiled order at `dst_offset`. Provided: [`BackendError::Unsupported`].
    fn copy_h2d_async_tiled(
        &self,
        stream: &Self::Stream,
        src: &Self::HostBuffer,
        src_offset: usize,
        dst: &Self::Buffer,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        let _ = (stream, src, src_offset, dst, dst_offset, tiles);
        Err(no_tiles(self))
    }

    /// [`Backend::copy_d2h`] of a whole object, from the tiled order at `src_offset` into the
    /// packed order (`dst`, [`Tiles::bytes`] long). Provided: [`BackendError::Unsupported`].
    fn copy_d2h_tiled(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &mut [u8],
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        let _ = (stream, src, src_offset, dst, tiles);
        Err(no_tiles(self))
    }

    /// [`Backend::copy_d2h_async`] of a whole object, from the tiled order at `src_offset`
    /// into the packed order at `dst_offset`. Provided: [`BackendError::Unsupported`].
    fn copy_d2h_async_tiled(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &Self::HostBuffer,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        let _ = (stream, src, src_offset, dst, dst_offset, tiles);
        Err(no_tiles(self))
    }

    /// Enqueues a pointer-array batch of GEMMs (any mapping of operands to items; the
    /// `cublasZgemmBatched` form).
    fn gemm_batched(
        &self,
        stream: &Self::Stream,
        shape: &GemmShape,
        items: &[GemmItem<'_, Self::Buffer>],
    ) -> Result<(), BackendError>;

    /// Enqueues a batch of matrix additions `C_i = alpha A_i + beta B_i` (the `cublasZgeam`
    /// form, one call per item on cuBLAS). Items use A, B and C as a GEMM item does; C may be
    /// A or B exactly, for an update in place.
    fn geam_batched(
        &self,
        stream: &Self::Stream,
        shape: &GeamShape,
        items: &[GemmItem<'_, Self::Buffer>],
    ) -> Result<(), BackendError>;

    /// Enqueues a strided batch of GEMMs (the `cublasZgemmStridedBatched` form).
    fn gemm_strided_batched(
        &self,
        stream: &Self::Stream,
        shape: &GemmShape,
        batch: &StridedBatch<'_, Self::Buffer>,
    ) -> Result<(), BackendError>;

    /// Enqueues a batch of GEMMs given by component index ([`components`]): one call, as
    /// [`Backend::gemm_batched`] of the batch's items would be, with the same errors. The
    /// provided method checks the batch ([`validate_components`]), expands the items into a
    /// pointer array and calls [`Backend::gemm_batched`]; a backend that can use the form
    /// directly (check it in O(1), build its pointer table without the intermediate list)
    /// overrides it.
    fn gemm_components(
        &self,
        stream: &Self::Stream,
        shape: &GemmShape,
        batch: &ComponentBatch<'_, Self::Buffer>,
    ) -> Result<(), BackendError> {
        validate_components(shape, batch)?;
        let items: Vec<GemmItem<'_, Self::Buffer>> = batch.items().collect();
        self.gemm_batched(stream, shape, &items)
    }

    /// Whether the backend has managed (unified) memory. The provided managed-memory methods
    /// say it has none and return [`BackendError::Unsupported`].
    fn supports_managed(&self) -> bool {
        false
    }

    /// Allocates `bytes` (> 0) of managed memory, synchronously: a buffer the host and the
    /// device both address. It counts against the device's memory like [`Backend::alloc`] and
    /// is freed with [`Backend::free`]. A backend refuses more managed memory than the device
    /// has free rather than oversubscribe it.
    fn alloc_managed(&self, bytes: usize) -> Result<Self::Buffer, BackendError> {
        let _ = bytes;
        Err(no_managed(self))
    }

    /// The host writes `src` into managed buffer `dst` from byte `dst_offset`, in place. Work
    /// using `dst` must have completed.
    fn managed_write(
        &self,
        dst: &Self::Buffer,
        dst_offset: usize,
        src: &[u8],
    ) -> Result<(), BackendError> {
        let _ = (dst, dst_offset, src);
        Err(no_managed(self))
    }

    /// The host reads `dst.len()` bytes of managed buffer `src` from byte `src_offset`, in
    /// place (the driver migrates or duplicates the pages it touches). Work writing `src` must
    /// have completed.
    fn managed_read(
        &self,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        let _ = (src, src_offset, dst);
        Err(no_managed(self))
    }

    /// Enqueues on `stream` a migration of managed buffer `buffer` to `to`, so that later work
    /// does not fault on it.
    fn prefetch(
        &self,
        stream: &Self::Stream,
        buffer: &Self::Buffer,
        to: Location,
    ) -> Result<(), BackendError> {
        let _ = (stream, buffer, to);
        Err(no_managed(self))
    }

    /// Starts (`on`) or stops recording when each copy and GEMM batch enqueued from now on
    /// starts and ends ([`timeline`]). Returns whether the backend can time its work; the
    /// provided version cannot.
    fn set_timing(&self, on: bool) -> bool {
        let _ = on;
        false
    }

    /// The work recorded since timing was switched on (or since the last call), in no
    /// particular order; work still in flight is not included. The provided version has none.
    fn take_timeline(&self) -> Vec<WorkSpan> {
        Vec::new()
    }

    /// The number [`Backend::take_timeline`] gives `stream` in its spans
    /// ([`WorkSpan::stream`]), if the backend times its work. The provided version has none.
    fn stream_number(&self, stream: &Self::Stream) -> Option<u64> {
        let _ = stream;
        None
    }

    /// The timing clock now: nanoseconds on the clock of [`Backend::take_timeline`]'s spans, if
    /// the backend times its work. The provided version has none.
    fn timing_clock_ns(&self) -> Option<u64> {
        None
    }

    /// Advises the driver that managed buffer `buffer` is mostly read: a processor that reads
    /// it gets its own read-only copy instead of migrating the pages away from the others.
    fn advise_read_mostly(&self, buffer: &Self::Buffer) -> Result<(), BackendError> {
        let _ = buffer;
        Err(no_managed(self))
    }
}

/// The error the provided tiled copies of [`Backend`] return.
fn no_tiles<B: Backend + ?Sized>(backend: &B) -> BackendError {
    BackendError::Unsupported(format!("{} has no tiled copies", backend.name()))
}

/// The error the provided managed-memory methods of [`Backend`] return.
fn no_managed<B: Backend + ?Sized>(backend: &B) -> BackendError {
    BackendError::Unsupported(format!(
        "{} has no managed (unified) memory",
        backend.name()
    ))
}

/// Checks that bytes `[offset, offset + len)` lie inside `what`, a buffer of `size` bytes
/// (named in the message): every backend's bounds check of a copy or an in-place access.
pub fn check_range(
    op: BackendOp,
    what: impl std::fmt::Display,
    size: usize,
    offset: usize,
    len: usize,
) -> Result<(), BackendError> {
    match offset.checked_add(len) {
        Some(end) if end <= size => Ok(()),
        _ => Err(BackendError::invalid(
            op,
            format!(
                "bytes {offset}..{} are outside the {size}-byte {what}",
                offset.saturating_add(len)
            ),
        )),
    }
}

/// The error of a managed-memory call (`op`) on buffer `handle`, which
/// [`Backend::alloc_managed`] did not allocate: [`BackendError::InvalidArgument`].
pub fn not_managed(op: BackendOp, handle: u64) -> BackendError {
    BackendError::invalid(op, format!("buffer {handle:#x} is not managed memory"))
}

/// Reinterprets complex elements as bytes, for the byte-oriented copy calls.
pub fn as_bytes(data: &[Complex64]) -> &[u8] {
    bytemuck::cast_slice(data)
}

/// Reinterprets complex elements as mutable bytes, for [`Backend::copy_d2h`].
pub fn as_bytes_mut(data: &mut [Complex64]) -> &mut [u8] {
    bytemuck::cast_slice_mut(data)
}
