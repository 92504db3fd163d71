//! The device-API trait: what a GPU driver and its BLAS library must offer for
//! [`GpuBackend`](crate::GpuBackend) to run on them, and the validated GEMM descriptions the
//! backend hands them.

use std::fmt;

use memhc_backend::gemm::{GeamShape, GemmItem, GemmShape, StridedBatch};
use memhc_backend::{BackendError, BackendOp, DeviceMemory};
use memhc_backend::{Location, MemInfo};

use crate::address;
use crate::options::HostWait;

mod pitched;

pub use pitched::{PitchedCopy, Span};

/// One allocation of device (or managed) memory, owned: dropping it frees it.
pub trait DeviceAllocation: Send + Sync + fmt::Debug {
    /// Size in bytes.
    fn bytes(&self) -> usize;

    /// The device address of its first byte. Two live allocations never share one.
    fn address(&self) -> u64;

    /// Whether it is managed memory (from [`DeviceApi::malloc_managed`]), which the host may
    /// read and write in place.
    fn is_managed(&self) -> bool;
}

/// Page-locked host memory, owned: dropping it frees it.
///
/// The host touches it only through [`PinnedAllocation::write`] and
/// [`PinnedAllocation::read`], which copy through raw pointers, never through a Rust reference
/// to the bytes; [`GpuBackend`](crate::GpuBackend) calls them only when no queued copy uses the
/// buffer (its fences have completed).
pub trait PinnedAllocation: Send + Sync + fmt::Debug {
    /// Size in bytes.
    fn bytes(&self) -> usize;

    /// Copies `src` in from byte `offset`; a range outside the buffer is
    /// [`BackendError::InvalidArgument`].
    fn write(&mut self, offset: usize, src: &[u8]) -> Result<(), BackendError>;

    /// Copies `dst.len()` bytes out from byte `offset`; a range outside the buffer is
    /// [`BackendError::InvalidArgument`].
    fn read(&self, offset: usize, dst: &mut [u8]) -> Result<(), BackendError>;

    /// The whole buffer in place, for the host to fill or read (no queued copy uses it: the
    /// contract below). Aligned for complex doubles (page-locked memory is page-aligned).
    fn as_mut_slice(&mut self) -> Result<&mut [u8], BackendError>;
}

/// A GPU driver and its BLAS library, seen through the few calls memhc needs: memory, pinned
/// host memory, asynchronous copies, streams, events, three batched complex-double BLAS
/// routines, and optionally managed memory. A value of it is one opened device.
///
/// Every method is safe to call: an implementation checks what it can check locally (ranges
/// of copies against the two allocations, sizes against its integer types) and relies for the
/// rest on the contract below, which [`GpuBackend`](crate::GpuBackend) keeps:
///
/// * a pinned buffer given to an asynchronous copy is neither written, read, nor dropped by the
///   host until an event recorded after the copy has completed;
/// * work enqueued on a stream uses only allocations that live until it completes (the
///   [`Backend`](memhc_backend::Backend) contract passes this on to the backend's caller;
///   freeing device memory waits for the device in both CUDA and HIP, so a caller who breaks
///   it gets wrong results, not freed memory written);
/// * the BLAS calls take [`BatchedGemm`], [`StridedGemm`] and [`Geam`] descriptions, which only
///   this crate can make, and only after memhc-backend's validators accepted every operand.
///
/// The owning types ([`DeviceApi::Memory`], [`DeviceApi::Pinned`], [`DeviceApi::Stream`],
/// [`DeviceApi::Event`], [`DeviceApi::Blas`]) release what they hold when dropped, and keep
/// whatever they need for that (a context, a library table). A stream is dropped only after
/// everything bound to it (its BLAS handle) and after it was synchronised.
pub trait DeviceApi: Send + Sync + fmt::Debug + Sized + 'static {
    /// The driver's name in messages: `"CUDA"`, `"HIP"`.
    const KIND: &'static str;

    /// Whether the device keeps the bytes it is given and computes on them
    /// ([`Backend::holds_values`](memhc_backend::Backend::holds_values)); a device that only
    /// models its work (`ModelDevice`) does not. Provided: yes.
    const HOLDS_VALUES: bool = true;

    /// One allocation of device or managed memory.
    type Memory: DeviceAllocation;
    /// One allocation of page-locked host memory.
    type Pinned: PinnedAllocation;
    /// An in-order queue of work on the device, destroyed on drop.
    type Stream: Send + Sync + fmt::Debug;
    /// A completion marker, destroyed on drop.
    type Event: Send + Sync + fmt::Debug;
    /// A BLAS handle bound to one stream for its whole life. Used by one thread at a time.
    type Blas: Send + fmt::Debug;

    /// Loads the libraries, checks that they hold every function used, and opens device
    /// `device`, whose host threads then wait for it as `wait` says (a device without such a
    /// choice ignores it). Anything missing (a driver, a library, a function, a device) is
    /// [`BackendError::Unavailable`] with a one-line reason; never a panic.
    fn open(device: usize, wait: HostWait) -> Result<Self, BackendError>;

    /// The device's name (`"NVIDIA H100 80GB HBM3"`, say).
    fn device_name(&self) -> &str;

    /// The one-line description [`Backend::name`](memhc_backend::Backend::name) reports: the
    /// device, the libraries, and the backend's `budget` in bytes.
    fn describe(&self, budget: usize) -> String;

    /// The device's own free and total memory.
    fn mem_get_info(&self) -> Result<MemInfo, BackendError>;

    /// Blocks until all work on the device has completed.
    fn synchronize(&self) -> Result<(), BackendError>;

    /// Allocates `bytes` (> 0) of device memory, synchronously (never a stream-ordered pool).
    /// The driver's out-of-memory is [`BackendError::OutOfMemory`].
    fn malloc(&self, bytes: usize) -> Result<Self::Memory, BackendError>;

    /// Frees `memory` now, reporting a failure (dropping it frees it too, silently).
    fn free(&self, memory: Self::Memory) -> Result<(), BackendError>;

    /// Allocates `bytes` (> 0) of page-locked host memory, cached (not write-combined).
    fn host_alloc(&self, bytes: usize) -> Result<Self::Pinned, BackendError>;

    /// Page-locks the caller's pageable `memory` in place (CUDA `cuMemHostRegister`, HIP
    /// `hipHostRegister`) and owns it as page-locked memory: a copy from or into it is one DMA,
    /// with no staging. Dropping the result unregisters the memory, then frees it;
    /// [`DeviceApi::host_unregister`] unregisters it and gives it back. Registration costs the
    /// host time in proportion to the size (the driver locks and maps every page), so it pays
    /// only for memory copied several times ([`GpuBackend::adopt_pageable`]). A refusal (the
    /// driver's, or a device API without registration: the provided version) hands `memory`
    /// back with the reason.
    ///
    /// [`GpuBackend::adopt_pageable`]: crate::GpuBackend::adopt_pageable
    fn host_register(&self, memory: Vec<u64>) -> Result<Self::Pinned, Box<Unregistered>> {
        Err(Box::new(Unregistered {
            memory,
            error: BackendError::Unsupported(format!(
                "the {} backend cannot page-lock caller memory",
                Self::KIND
            )),
        }))
    }

    /// Unregisters memory [`DeviceApi::host_register`] page-locked and gives it back, reporting
    /// a failure of the driver's unregistration (the memory is then leaked, not freed: the
    /// driver may still hold its pages). Page-locked memory from [`DeviceApi::host_alloc`] is
    /// [`BackendError::InvalidArgument`] (and freed). The provided version refuses.
    fn host_unregister(&self, pinned: Self::Pinned) -> Result<Vec<u64>, BackendError> {
        drop(pinned);
        Err(BackendError::Unsupported(format!(
            "the {} backend cannot page-lock caller memory",
            Self::KIND
        )))
    }

    /// Page-locked memory over `bytes` of `chunk` (from [`DeviceApi::host_alloc`]) from byte
    /// `offset`, as an allocation of its own that does not free anything when dropped: a piece
    /// of a pinned pool ([`Backend::host_piece`](memhc_backend::Backend::host_piece)). The
    /// contract adds: `chunk` outlives the piece, and live pieces of one chunk never overlap
    /// (so the host may hold one piece's bytes while a copy uses another's). A range outside
    /// `chunk` is [`BackendError::InvalidArgument`]. The provided version refuses
    /// ([`BackendError::Unsupported`]): [`GpuBackend`](crate::GpuBackend) then allocates each
    /// buffer on its own.
    fn host_piece(
        &self,
        chunk: &Self::Pinned,
        offset: usize,
        bytes: usize,
    ) -> Result<Self::Pinned, BackendError> {
        let _ = (chunk, offset, bytes);
        Err(BackendError::Unsupported(format!(
            "the {} backend cannot cut page-locked memory into pieces",
            Self::KIND
        )))
    }

    /// Creates a stream that does not synchronise with the legacy default stream.
    fn stream_create(&self) -> Result<Self::Stream, BackendError>;

    /// Blocks until all work on `stream` has completed.
    fn stream_synchronize(&self, stream: &Self::Stream) -> Result<(), BackendError>;

    /// Creates an event without timing.
    fn event_create(&self) -> Result<Self::Event, BackendError>;

    /// Creates an event that records time, for [`DeviceApi::event_elapsed_ms`] (CUDA
    /// `cuEventCreate` with `CU_EVENT_DEFAULT`, HIP `hipEventDefault`). Used only while the
    /// backend times its work.
    fn timing_event_create(&self) -> Result<Self::Event, BackendError>;

    /// Milliseconds from the most recent record of `start` to that of `end`, both timing events
    /// ([`DeviceApi::timing_event_create`]) whose records have completed.
    fn event_elapsed_ms(&self, start: &Self::Event, end: &Self::Event)
    -> Result<f32, BackendError>;

    /// Records `event` on `stream`.
    fn event_record(&self, event: &Self::Event, stream: &Self::Stream) -> Result<(), BackendError>;

    /// Makes later work on `stream` wait for the most recent record of `event`.
    fn stream_wait_event(
        &self,
        stream: &Self::Stream,
        event: &Self::Event,
    ) -> Result<(), BackendError>;

    /// Whether the most recent record of `event` has completed.
    fn event_query(&self, event: &Self::Event) -> Result<bool, BackendError>;

    /// Blocks until the most recent record of `event` has completed.
    fn event_synchronize(&self, event: &Self::Event) -> Result<(), BackendError>;

    /// Enqueues on `stream` a copy of `len` bytes from `src` (from byte `src_offset`) to `dst`
    /// (from byte `dst_offset`).
    fn copy_h2d_async(
        &self,
        stream: &Self::Stream,
        src: &Self::Pinned,
        src_offset: usize,
        dst: &Self::Memory,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError>;

    /// Enqueues on `stream` a copy of `len` bytes from `src` (from byte `src_offset`) to `dst`
    /// (from byte `dst_offset`).
    fn copy_d2h_async(
        &self,
        stream: &Self::Stream,
        src: &Self::Memory,
        src_offset: usize,
        dst: &Self::Pinned,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError>;

    /// Creates a BLAS handle bound to `stream` (scalars read from host memory).
    fn blas_create(&self, stream: &Self::Stream) -> Result<Self::Blas, BackendError>;

    /// Enqueues a pointer-array batched ZGEMM on the handle's stream.
    fn gemm_batched(&self, blas: &Self::Blas, call: &BatchedGemm) -> Result<(), BackendError>;

    /// Enqueues a strided batched ZGEMM on the handle's stream.
    fn gemm_strided_batched(
        &self,
        blas: &Self::Blas,
        call: &StridedGemm,
    ) -> Result<(), BackendError>;

    /// Enqueues one ZGEAM per item on the handle's stream.
    fn geam(&self, blas: &Self::Blas, call: &Geam) -> Result<(), BackendError>;

    /// Whether [`DeviceApi::gemm_gauss`] is there ([`ComplexGemm::Gauss`](crate::ComplexGemm)):
    /// checked when a backend that asks for it opens. Provided: no.
    fn supports_gauss(&self) -> bool {
        false
    }

    /// Enqueues `call`, a strided batch of one item, as one complex product computed with
    /// three real products (`cublasZgemm3m`; see [`ComplexGemm`](crate::ComplexGemm)) on the
    /// handle's stream. Provided: [`BackendError::Unsupported`].
    fn gemm_gauss(&self, blas: &Self::Blas, call: &StridedGemm) -> Result<(), BackendError> {
        let _ = (blas, call);
        Err(BackendError::Unsupported(format!(
            "the {} backend has no complex GEMM of three real products",
            Self::KIND
        )))
    }

    /// Enqueues on `stream` a pitched copy from page-locked `src` to `dst` ([`PitchedCopy`]: a
    /// 2D copy, `cuMemcpy2DAsync` / `hipMemcpy2DAsync`, at depth 1, else a 3D one,
    /// `cuMemcpy3DAsync` / `hipMemcpy3DAsync`), both spans inside their allocations (checked by
    /// the caller). An implementation checks the copy with [`PitchedCopy::spans`]. The provided
    /// version enqueues one [`DeviceApi::copy_h2d_async`] per row.
    fn copy_h2d_pitched_async(
        &self,
        stream: &Self::Stream,
        src: &Self::Pinned,
        dst: &Self::Memory,
        copy: &PitchedCopy,
    ) -> Result<(), BackendError> {
        copy.spans(BackendOp::CopyH2D)?;
        copy.rows()
            .try_for_each(|(s, d)| self.copy_h2d_async(stream, src, s, dst, d, copy.width))
    }

    /// Enqueues on `stream` a pitched copy from `src` to page-locked `dst` ([`PitchedCopy`]),
    /// both spans inside their allocations (checked by the caller). The provided version
    /// enqueues one [`DeviceApi::copy_d2h_async`] per row.
    fn copy_d2h_pitched_async(
        &self,
        stream: &Self::Stream,
        src: &Self::Memory,
        dst: &Self::Pinned,
        copy: &PitchedCopy,
    ) -> Result<(), BackendError> {
        copy.spans(BackendOp::CopyD2H)?;
        copy.rows()
            .try_for_each(|(s, d)| self.copy_d2h_async(stream, src, s, dst, d, copy.width))
    }

    /// `Ok` if the device has managed memory, else why not (one line). The provided version
    /// says the device API offers none; the other managed-memory methods are only called when
    /// this is `Ok`.
    fn managed_memory(&self) -> Result<(), String> {
        Err(format!("the {} backend does not offer it", Self::KIND))
    }

    /// Allocates `bytes` (> 0) of managed memory, attached globally.
    fn malloc_managed(&self, bytes: usize) -> Result<Self::Memory, BackendError> {
        let _ = bytes;
        Err(unsupported::<Self>())
    }

    /// The host writes `src` into managed `dst` from byte `offset`, in place.
    fn managed_write(
        &self,
        dst: &Self::Memory,
        offset: usize,
        src: &[u8],
    ) -> Result<(), BackendError> {
        let _ = (dst, offset, src);
        Err(unsupported::<Self>())
    }

    /// The host reads managed `src` from byte `offset` into `dst`, in place.
    fn managed_read(
        &self,
        src: &Self::Memory,
        offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        let _ = (src, offset, dst);
        Err(unsupported::<Self>())
    }

    /// Advises that managed `memory` is mostly read.
    fn advise_read_mostly(&self, memory: &Self::Memory) -> Result<(), BackendError> {
        let _ = memory;
        Err(unsupported::<Self>())
    }

    /// Enqueues on `stream` a migration of managed `memory` to `to`.
    fn prefetch(
        &self,
        stream: &Self::Stream,
        memory: &Self::Memory,
        to: Location,
    ) -> Result<(), BackendError> {
        let _ = (stream, memory, to);
        Err(unsupported::<Self>())
    }
}

/// Pageable memory that [`DeviceApi::host_register`] did not page-lock, handed back to the
/// caller with the reason.
#[derive(Debug)]
pub struct Unregistered {
    /// The memory, unchanged.
    pub memory: Vec<u64>,
    /// Why it was not registered.
    pub error: BackendError,
}

fn unsupported<D: DeviceApi>() -> BackendError {
    BackendError::Unsupported(format!("the {} backend has no managed memory", D::KIND))
}

/// A pointer-array batched ZGEMM (`cublasZgemmBatched`, `rocblas_zgemm_batched`), ready for the
/// device: `C_i = alpha op(A_i) op(B_i) + beta C_i` for `count` items whose operand addresses
/// are in three device arrays.
///
/// Only this crate makes one, and only when memhc-backend's validator accepted every item (each
/// operand inside its live buffer, outputs disjoint from each other and from the inputs), the
/// three arrays were uploaded into a device table on the GEMM's stream before it, and that
/// table is overwritten or freed only after the GEMM in stream order.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchedGemm {
    shape: GemmShape,
    arrays: u64,
    count: usize,
}

impl BatchedGemm {
    pub(crate) fn new(shape: GemmShape, arrays: u64, count: usize) -> Self {
        BatchedGemm {
            shape,
            arrays,
            count,
        }
    }

    /// Sizes, operations, leading dimensions and scalars.
    pub fn shape(&self) -> &GemmShape {
        &self.shape
    }

    /// The number of items (> 0).
    pub fn count(&self) -> usize {
        self.count
    }

    /// The device address of the array of `count` A pointers.
    pub fn a_array(&self) -> u64 {
        self.arrays
    }

    /// The device address of the array of `count` B pointers.
    pub fn b_array(&self) -> u64 {
        self.arrays + 8 * self.count as u64
    }

    /// The device address of the array of `count` C pointers.
    pub fn c_array(&self) -> u64 {
        self.arrays + 16 * self.count as u64
    }
}

/// One operand of a strided batch: the device address of item 0 and the step between items,
/// in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strided {
    /// Device address of item 0's matrix.
    pub address: u64,
    /// Elements from one item's matrix to the next.
    pub stride: usize,
}

/// A strided batched ZGEMM (`cublasZgemmStridedBatched`, `rocblas_zgemm_strided_batched`),
/// ready for the device. Only this crate makes one, once memhc-backend's validator accepted it:
/// every item's operands inside their live buffers, outputs disjoint.
#[derive(Clone, Debug, PartialEq)]
pub struct StridedGemm {
    shape: GemmShape,
    a: Strided,
    b: Strided,
    c: Strided,
    count: usize,
}

impl StridedGemm {
    pub(crate) fn new<M: DeviceMemory>(shape: GemmShape, batch: &StridedBatch<'_, M>) -> Self {
        let op = |r, stride| Strided {
            address: address(r),
            stride,
        };
        StridedGemm {
            shape,
            a: op(&batch.a, batch.stride_a),
            b: op(&batch.b, batch.stride_b),
            c: op(&batch.c, batch.stride_c),
            count: batch.count,
        }
    }

    /// Sizes, operations, leading dimensions and scalars.
    pub fn shape(&self) -> &GemmShape {
        &self.shape
    }

    /// Operand A.
    pub fn a(&self) -> Strided {
        self.a
    }

    /// Operand B.
    pub fn b(&self) -> Strided {
        self.b
    }

    /// Operand C.
    pub fn c(&self) -> Strided {
        self.c
    }

    /// The number of items (> 0).
    pub fn count(&self) -> usize {
        self.count
    }
}

/// The device addresses of one item's A, B and C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operands {
    /// Address of A.
    pub a: u64,
    /// Address of B.
    pub b: u64,
    /// Address of C.
    pub c: u64,
}

/// A batch of matrix additions `C_i = alpha A_i + beta B_i` (one `cublasZgeam` or
/// `rocblas_zgeam` per item), ready for the device. Only this crate makes one, once
/// memhc-backend's validator accepted it: every operand inside its live buffer, outputs disjoint
/// from each other, each C disjoint from its A and B or exactly one of them (same address and
/// leading dimension). An operand whose scale is zero is not read.
#[derive(Clone, Debug, PartialEq)]
pub struct Geam {
    shape: GeamShape,
    items: Vec<Operands>,
}

impl Geam {
    pub(crate) fn new<M: DeviceMemory>(shape: GeamShape, items: &[GemmItem<'_, M>]) -> Self {
        Geam {
            shape,
            items: items
                .iter()
                .map(|i| Operands {
                    a: address(&i.a),
                    b: address(&i.b),
                    c: address(&i.c),
                })
                .collect(),
        }
    }

    /// Sizes, leading dimensions and scalars.
    pub fn shape(&self) -> &GeamShape {
        &self.shape
    }

    /// The items (at least one).
    pub fn items(&self) -> &[Operands] {
        &self.items
    }
}
