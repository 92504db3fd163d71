//! Owning handles: device memory, page-locked host memory, a stream, an event and a rocBLAS
//! handle. Each releases what it owns on drop.

use std::ptr::NonNull;

use memhc_backend::check_range;
use memhc_backend::{BackendError, BackendOp};
use memhc_gpu::{DeviceAllocation, PinnedAllocation, Unregistered};

use crate::check::{self, Libs};
use crate::ffi::{HipEventT, HipStreamT, RocblasHandle};

/// One device allocation (`hipMalloc`), freed on drop. The backend's buffers
/// ([`HipBuffer`](crate::HipBuffer)) wrap it with their share of the budget.
#[derive(Debug)]
pub struct HipMemory {
    addr: u64,
    bytes: usize,
    device: i32,
    libs: Libs,
}

impl HipMemory {
    /// Allocates `bytes` (> 0) on `device`.
    pub(crate) fn alloc(libs: Libs, device: i32, bytes: usize) -> Result<Self, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(
                BackendOp::Alloc,
                "zero-byte allocation",
            ));
        }
        check::set_device(libs, device)?;
        Ok(HipMemory {
            addr: check::malloc(libs, bytes)?,
            bytes,
            device,
            libs,
        })
    }

    /// The device address of byte `offset`, once `[offset, offset + len)` is checked to lie
    /// inside the allocation.
    pub(crate) fn range(
        &self,
        op: BackendOp,
        offset: usize,
        len: usize,
    ) -> Result<u64, BackendError> {
        check_range(
            op,
            format_args!("device buffer {:#x}", self.addr),
            self.bytes,
            offset,
            len,
        )?;
        Ok(self.addr + offset as u64)
    }

    /// Frees the memory now, reporting a failure.
    pub(crate) fn free(mut self) -> Result<(), BackendError> {
        let addr = std::mem::take(&mut self.addr);
        let bound = check::set_device(self.libs, self.device);
        // SAFETY: `addr` came from hipMalloc and is freed only here (Drop sees 0 now); hipFree
        // waits for the device work that may use it.
        let freed = unsafe { check::free(self.libs, addr) };
        bound.and(freed)
    }
}

impl DeviceAllocation for HipMemory {
    fn bytes(&self) -> usize {
        self.bytes
    }

    fn address(&self) -> u64 {
        self.addr
    }

    fn is_managed(&self) -> bool {
        false
    }
}

impl Drop for HipMemory {
    fn drop(&mut self) {
        if self.addr != 0 {
            let _ = check::set_device(self.libs, self.device);
            // SAFETY: `addr` came from hipMalloc and was not freed (free() zeroes it). A
            // failure cannot be reported from a destructor.
            let _ = unsafe { check::free(self.libs, self.addr) };
        }
    }
}

/// Page-locked host memory (`hipHostMalloc`, default flags: cached, not write-combined),
/// freed on drop; or the caller's memory registered in place (`hipHostRegister`),
/// unregistered on drop.
///
/// Its bytes are only ever touched through raw copies ([`PinnedAllocation::write`],
/// [`PinnedAllocation::read`]), never through a Rust reference, so a copy the device makes
/// into or out of it never aliases a borrow; memhc-gpu calls them only when no queued copy
/// uses the buffer.
#[derive(Debug)]
pub struct HipPinned {
    ptr: NonNull<u8>,
    bytes: usize,
    libs: Libs,
    kind: PinnedKind,
}

/// Where a [`HipPinned`]'s memory came from, which says how it is given back.
#[derive(Debug)]
enum PinnedKind {
    /// `hipHostMalloc`: freed with `hipHostFree`.
    Allocated,
    /// The caller's vector, registered: unregistered, then dropped. Not touched through the
    /// vector while registered (moving a vector does not move its elements).
    Registered(Vec<u64>),
    /// Unregistered and handed back: nothing to release.
    Released,
    /// A range of an allocation another value owns (a piece of memhc's pinned pool, which
    /// keeps that value alive longer than the piece): nothing to release.
    Piece,
}

// SAFETY: the memory is a plain host allocation owned by this value; moving the owner to
// another thread moves nothing the HIP runtime ties to a thread.
unsafe impl Send for HipPinned {}
// SAFETY: shared access only reads through `read`, which copies out; writes need `&mut`.
unsafe impl Sync for HipPinned {}

impl HipPinned {
    /// `bytes` (> 0) of page-locked memory.
    pub(crate) fn new(libs: Libs, bytes: usize) -> Result<Self, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(
                BackendOp::Alloc,
                "zero-byte host allocation",
            ));
        }
        Ok(HipPinned {
            ptr: check::host_malloc(libs, bytes)?,
            bytes,
            libs,
            kind: PinnedKind::Allocated,
        })
    }

    /// Page-locks the caller's `memory` in place; a failure hands it back.
    pub(crate) fn register(libs: Libs, mut memory: Vec<u64>) -> Result<Self, Box<Unregistered>> {
        let bytes = std::mem::size_of_val(memory.as_slice());
        let Some(ptr) = NonNull::new(memory.as_mut_ptr().cast::<u8>()).filter(|_| bytes > 0) else {
            let error = BackendError::invalid(BackendOp::Alloc, "zero bytes");
            return Err(Box::new(Unregistered { memory, error }));
        };
        // SAFETY: `ptr` is valid for `bytes` (the vector's elements); the vector is kept in the
        // value, unread and unwritten through Rust references, and neither freed nor grown
        // until the memory is unregistered (`unregister`, `drop`).
        match unsafe { check::host_register(libs, ptr.as_ptr(), bytes) } {
            Ok(()) => Ok(HipPinned {
                ptr,
                bytes,
                libs,
                kind: PinnedKind::Registered(memory),
            }),
            Err(error) => Err(Box::new(Unregistered { memory, error })),
        }
    }

    /// Unregisters registered memory and gives the vector back. Allocated memory is refused
    /// (and freed on drop); if HIP refuses, the vector is leaked rather than freed while it
    /// may still hold the pages.
    pub(crate) fn unregister(mut self) -> Result<Vec<u64>, BackendError> {
        let memory = match std::mem::replace(&mut self.kind, PinnedKind::Released) {
            PinnedKind::Registered(memory) => memory,
            other => {
                self.kind = other;
                return Err(BackendError::invalid(
                    BackendOp::Alloc,
                    "unregistering page-locked memory that was allocated, not registered",
                ));
            }
        };
        // SAFETY: `ptr` was registered and is unregistered once (the kind is now `Released`);
        // memhc-gpu unregisters only once no queued copy uses the memory.
        match unsafe { check::host_unregister(self.libs, self.ptr.as_ptr()) } {
            Ok(()) => Ok(memory),
            Err(e) => {
                std::mem::forget(memory);
                Err(e)
            }
        }
    }

    /// The address of byte `offset`, once `[offset, offset + len)` is checked to lie inside
    /// the buffer.
    pub(crate) fn range(
        &self,
        op: BackendOp,
        offset: usize,
        len: usize,
    ) -> Result<*mut u8, BackendError> {
        check_range(op, "page-locked buffer", self.bytes, offset, len)?;
        // SAFETY: `offset + len <= bytes` (checked), so the result is inside the allocation.
        Ok(unsafe { self.ptr.as_ptr().add(offset) })
    }

    /// `bytes` (> 0) of this allocation from byte `offset`, as page-locked memory that frees
    /// nothing when dropped ([`memhc_gpu::DeviceApi::host_piece`]: the caller keeps this
    /// allocation alive longer, and live pieces disjoint). Only `hipHostMalloc` memory is cut.
    pub(crate) fn piece(&self, offset: usize, bytes: usize) -> Result<Self, BackendError> {
        if bytes == 0 || !matches!(self.kind, PinnedKind::Allocated) {
            return Err(BackendError::invalid(
                BackendOp::Alloc,
                "a piece is a non-empty range of allocated page-locked memory",
            ));
        }
        let ptr = NonNull::new(self.range(BackendOp::Alloc, offset, bytes)?)
            .ok_or_else(|| BackendError::invalid(BackendOp::Alloc, "a null piece"))?;
        Ok(HipPinned {
            ptr,
            bytes,
            libs: self.libs,
            kind: PinnedKind::Piece,
        })
    }
}

impl PinnedAllocation for HipPinned {
    fn bytes(&self) -> usize {
        self.bytes
    }

    fn as_mut_slice(&mut self) -> Result<&mut [u8], BackendError> {
        let start = self.range(BackendOp::CopyH2D, 0, self.bytes)?;
        // SAFETY: the allocation is `bytes` long from `start` and lives as long as `self`;
        // `&mut self` excludes other host access for the slice's lifetime, and no queued copy
        // uses the buffer now (the DeviceApi contract: the caller waited for them).
        Ok(unsafe { std::slice::from_raw_parts_mut(start, self.bytes) })
    }

    /// Copies on several threads when `src` is large ([`memhc_gpu::pieces`]).
    fn write(&mut self, offset: usize, src: &[u8]) -> Result<(), BackendError> {
        let at = self
            .range(BackendOp::CopyH2D, offset, src.len())?
            .expose_provenance();
        memhc_gpu::pieces::in_pieces(src.len(), |o, n| {
            let to = std::ptr::with_exposed_provenance_mut::<u8>(at);
            // SAFETY: `[offset, offset + src.len())` is inside the allocation (checked) and
            // `[o, o + n)` inside `[0, src.len())` (in_pieces' contract), so both ranges are
            // in bounds; the pieces are disjoint, so no two threads write one byte; `src` is a
            // distinct Rust slice, so they cannot overlap; `&mut self` excludes other host
            // access, and no queued copy uses the buffer (the DeviceApi contract).
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr().add(o), to.add(o), n) };
        });
        Ok(())
    }

    /// Copies on several threads when `dst` is large ([`memhc_gpu::pieces`]).
    fn read(&self, offset: usize, dst: &mut [u8]) -> Result<(), BackendError> {
        let at = self
            .range(BackendOp::CopyD2H, offset, dst.len())?
            .cast_const()
            .expose_provenance();
        let out = dst.as_mut_ptr().expose_provenance();
        memhc_gpu::pieces::in_pieces(dst.len(), |o, n| {
            let (from, to) = (
                std::ptr::with_exposed_provenance::<u8>(at),
                std::ptr::with_exposed_provenance_mut::<u8>(out),
            );
            // SAFETY: `[offset, offset + dst.len())` is inside the allocation (checked) and
            // `[o, o + n)` inside `[0, dst.len())` (in_pieces' contract); the pieces are
            // disjoint, so no two threads write one byte of `dst`, which this call borrows
            // mutably throughout; no queued copy writes the buffer now (the DeviceApi
            // contract).
            unsafe { std::ptr::copy_nonoverlapping(from.add(o), to.add(o), n) };
        });
        Ok(())
    }
}

impl Drop for HipPinned {
    fn drop(&mut self) {
        match std::mem::replace(&mut self.kind, PinnedKind::Released) {
            PinnedKind::Allocated => {
                // SAFETY: the pointer came from hipHostMalloc and is freed only here; memhc-gpu
                // drops a buffer only once no copy uses it (and hipHostFree waits for the
                // device).
                let _ = unsafe { check::host_free(self.libs, self.ptr.as_ptr()) };
            }
            PinnedKind::Registered(memory) => {
                // SAFETY: the pointer was registered and is unregistered once; no copy uses
                // it (as above).
                if unsafe { check::host_unregister(self.libs, self.ptr.as_ptr()) }.is_err() {
                    // HIP may still hold the pages: leak rather than free them.
                    std::mem::forget(memory);
                }
            }
            PinnedKind::Released | PinnedKind::Piece => {}
        }
    }
}

/// A non-blocking `hipStream_t` on one device, destroyed on drop (after memhc-gpu has
/// synchronised it and dropped the rocBLAS handle bound to it).
#[derive(Debug)]
pub struct HipStreamHandle {
    stream: HipStreamT,
    device: i32,
    libs: Libs,
}

// SAFETY: a HIP stream handle may be used from any thread (the HIP runtime synchronises the
// queue); this wrapper only passes the handle to HIP.
unsafe impl Send for HipStreamHandle {}
// SAFETY: as above; nothing Rust-side is mutated through a shared reference.
unsafe impl Sync for HipStreamHandle {}

impl HipStreamHandle {
    /// A new stream on `device`.
    pub(crate) fn new(libs: Libs, device: i32) -> Result<Self, BackendError> {
        check::set_device(libs, device)?;
        Ok(HipStreamHandle {
            stream: check::stream_create(libs)?,
            device,
            libs,
        })
    }

    /// The raw stream, valid while `self` lives.
    pub(crate) fn raw(&self) -> HipStreamT {
        self.stream
    }

    /// Makes the stream's device current on the calling thread.
    pub(crate) fn bind(&self) -> Result<(), BackendError> {
        check::set_device(self.libs, self.device)
    }
}

impl Drop for HipStreamHandle {
    fn drop(&mut self) {
        let _ = self.bind();
        // SAFETY: the stream is owned and destroyed only here, after everything that used it
        // (the rocBLAS handle, the staging buffers) was dropped.
        let _ = unsafe { check::stream_destroy(self.libs, self.stream) };
    }
}

/// One `hipEvent_t` (created without timing, or with it for the backend's timing), destroyed
/// on drop.
#[derive(Debug)]
pub struct HipEventHandle {
    event: HipEventT,
    libs: Libs,
}

// SAFETY: a HIP event handle may be used from any thread: the HIP runtime synchronises its own
// use of it, and this wrapper only passes the handle to HIP.
unsafe impl Send for HipEventHandle {}
// SAFETY: as above; no method mutates Rust-side state.
unsafe impl Sync for HipEventHandle {}

impl HipEventHandle {
    /// A new event on the current device; with `blocking`, a thread waiting for it sleeps.
    pub(crate) fn new(libs: Libs, blocking: bool) -> Result<Self, BackendError> {
        Ok(HipEventHandle {
            event: check::event_create(libs, blocking)?,
            libs,
        })
    }

    /// A new event that records time, on the current device; `blocking` as in [`Self::new`].
    pub(crate) fn timing(libs: Libs, blocking: bool) -> Result<Self, BackendError> {
        Ok(HipEventHandle {
            event: check::timing_event_create(libs, blocking)?,
            libs,
        })
    }

    /// The raw event, valid while `self` lives.
    pub(crate) fn raw(&self) -> HipEventT {
        self.event
    }
}

impl Drop for HipEventHandle {
    fn drop(&mut self) {
        // SAFETY: the event is owned and destroyed only here. A failure cannot be reported
        // from a destructor; the handle is gone either way.
        let _ = unsafe { check::event_destroy(self.libs, self.event) };
    }
}

/// One rocBLAS handle, bound to one stream, destroyed on drop. It may move between threads
/// but is not thread-safe, so it is `Send` and not `Sync`: memhc-gpu keeps it under a lock.
#[derive(Debug)]
pub struct BlasHandle {
    handle: RocblasHandle,
    libs: Libs,
}

// SAFETY: a rocBLAS handle is not tied to the thread that created it; using it from one thread
// at a time (the lock memhc-gpu keeps it under) is what rocBLAS requires.
unsafe impl Send for BlasHandle {}

impl BlasHandle {
    /// A handle bound to `stream` (alpha and beta read from host memory).
    pub(crate) fn new(libs: Libs, stream: &HipStreamHandle) -> Result<Self, BackendError> {
        stream.bind()?;
        // SAFETY: the stream is live on the current device, and memhc-gpu drops a stream's
        // handle before the stream (the DeviceApi contract).
        let handle = unsafe { check::blas_create(libs, stream.raw())? };
        Ok(BlasHandle { handle, libs })
    }

    /// The raw handle.
    pub(crate) fn raw(&self) -> RocblasHandle {
        self.handle
    }
}

impl Drop for BlasHandle {
    fn drop(&mut self) {
        // SAFETY: the handle is owned and destroyed only here.
        let _ = unsafe { check::blas_destroy(self.libs, self.handle) };
    }
}
