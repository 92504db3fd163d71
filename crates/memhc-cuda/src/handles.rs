//! Owning handles: device (and managed) memory, page-locked host memory, a stream and an
//! event. Each keeps its context alive and releases what it owns on drop, in that context.

use std::sync::Arc;

use cudarc::driver::sys::{CUevent, CUstream};
use memhc_backend::{BackendError, BackendOp};
use memhc_backend::{check_range, not_managed};
use memhc_gpu::{DeviceAllocation, PinnedAllocation, Unregistered};

use crate::context::Context;
use crate::driver::{self, DevicePtr};

/// One device allocation (`cuMemAlloc`) or managed allocation (`cuMemAllocManaged`), freed on
/// drop. The backend's buffers ([`CudaBuffer`](crate::CudaBuffer)) wrap it with their share of
/// the budget.
#[derive(Debug)]
pub struct CudaMemory {
    ptr: DevicePtr,
    bytes: usize,
    managed: bool,
    ctx: Arc<Context>,
}

impl CudaMemory {
    /// Allocates `bytes` (> 0) of device or managed memory in `ctx`.
    pub(crate) fn alloc(
        ctx: &Arc<Context>,
        bytes: usize,
        managed: bool,
    ) -> Result<Self, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(BackendOp::Alloc, "zero bytes"));
        }
        ctx.bind()?;
        let ptr = if managed {
            driver::mem_alloc_managed(bytes)?
        } else {
            driver::mem_alloc(bytes)?
        };
        Ok(CudaMemory {
            ptr,
            bytes,
            managed,
            ctx: Arc::clone(ctx),
        })
    }

    /// The device address of byte `offset`, once `[offset, offset + len)` is checked to lie
    /// inside the allocation.
    pub(crate) fn range(
        &self,
        op: BackendOp,
        offset: usize,
        len: usize,
    ) -> Result<DevicePtr, BackendError> {
        check_range(
            op,
            format_args!("buffer {:#x}", self.ptr),
            self.bytes,
            offset,
            len,
        )?;
        Ok(self.ptr + offset as u64)
    }

    /// The device address, if this is managed memory (else the error of `op`).
    pub(crate) fn managed_ptr(&self, op: BackendOp) -> Result<DevicePtr, BackendError> {
        if self.managed {
            Ok(self.ptr)
        } else {
            Err(not_managed(op, self.ptr))
        }
    }

    /// The host's pointer to byte `offset` of this managed allocation, once
    /// `[offset, offset + len)` is checked (its device address is a host address too).
    fn host_ptr(&self, op: BackendOp, offset: usize, len: usize) -> Result<*mut u8, BackendError> {
        self.managed_ptr(op)?;
        let at = self.range(op, offset, len)?;
        Ok(at as usize as *mut u8)
    }

    /// The host writes `src` into this managed allocation from byte `offset`. The caller has
    /// waited for the device work that uses it.
    pub(crate) fn managed_write(&self, offset: usize, src: &[u8]) -> Result<(), BackendError> {
        let at = self.host_ptr(BackendOp::CopyH2D, offset, src.len())?;
        self.ctx.bind()?;
        // SAFETY: managed memory is addressable by the host at its device address; the range
        // is inside the allocation (checked); a host slice cannot overlap device-owned memory.
        // The backend's contract has the caller wait for device work on it first.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), at, src.len()) };
        Ok(())
    }

    /// The host reads this managed allocation from byte `offset` into `dst`. The caller has
    /// waited for the device work that writes it.
    pub(crate) fn managed_read(&self, offset: usize, dst: &mut [u8]) -> Result<(), BackendError> {
        let at = self.host_ptr(BackendOp::CopyD2H, offset, dst.len())?;
        self.ctx.bind()?;
        // SAFETY: as in `managed_write`, with the roles of the two ranges swapped.
        unsafe { std::ptr::copy_nonoverlapping(at.cast_const(), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    /// Frees the allocation now, reporting a failure.
    pub(crate) fn free(mut self) -> Result<(), BackendError> {
        self.release()
    }

    fn release(&mut self) -> Result<(), BackendError> {
        if self.ptr == 0 {
            return Ok(());
        }
        let ptr = std::mem::replace(&mut self.ptr, 0);
        self.ctx.bind()?;
        // SAFETY: `ptr` came from `cuMemAlloc`/`cuMemAllocManaged` and is freed once (it was
        // just taken out of `self`); `cuMemFree` waits for the device work that may use it.
        unsafe { driver::mem_free(ptr) }
    }
}

impl DeviceAllocation for CudaMemory {
    fn bytes(&self) -> usize {
        self.bytes
    }

    fn address(&self) -> u64 {
        self.ptr
    }

    fn is_managed(&self) -> bool {
        self.managed
    }
}

impl Drop for CudaMemory {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

/// Page-locked host memory (`cuMemHostAlloc`, cached: not write-combined), freed on drop; or
/// the caller's memory registered in place (`cuMemHostRegister`), unregistered on drop. Its
/// bytes are only touched through raw copies, never through a Rust reference, so a copy the
/// device makes into or out of it never aliases a borrow.
#[derive(Debug)]
pub struct CudaPinned {
    ptr: *mut u8,
    bytes: usize,
    ctx: Arc<Context>,
    kind: PinnedKind,
}

/// Where a [`CudaPinned`]'s memory came from, which says how it is given back.
#[derive(Debug)]
enum PinnedKind {
    /// `cuMemHostAlloc`: freed with `cuMemFreeHost`.
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

// SAFETY: the buffer is plain host memory owned by this value; the raw pointer is shared with
// nothing but the driver's copies, which the backend orders with events.
unsafe impl Send for CudaPinned {}
// SAFETY: as above; `&self` only reads through `read`, which copies out; writes need `&mut`.
unsafe impl Sync for CudaPinned {}

impl CudaPinned {
    /// Allocates `bytes` (> 0) of page-locked memory.
    pub(crate) fn alloc(ctx: &Arc<Context>, bytes: usize) -> Result<Self, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(BackendOp::Alloc, "zero bytes"));
        }
        ctx.bind()?;
        let ptr = driver::host_alloc(bytes)?;
        Ok(CudaPinned {
            ptr,
            bytes,
            ctx: Arc::clone(ctx),
            kind: PinnedKind::Allocated,
        })
    }

    /// `bytes` (> 0) of this allocation from byte `offset`, as page-locked memory that frees
    /// nothing when dropped ([`memhc_gpu::DeviceApi::host_piece`]: the caller keeps this
    /// allocation alive longer, and live pieces disjoint). Only `cuMemHostAlloc` memory is cut.
    pub(crate) fn piece(&self, offset: usize, bytes: usize) -> Result<Self, BackendError> {
        if bytes == 0 || !matches!(self.kind, PinnedKind::Allocated) {
            return Err(BackendError::invalid(
                BackendOp::Alloc,
                "a piece is a non-empty range of allocated page-locked memory",
            ));
        }
        Ok(CudaPinned {
            ptr: self.range(BackendOp::Alloc, offset, bytes)?,
            bytes,
            ctx: Arc::clone(&self.ctx),
            kind: PinnedKind::Piece,
        })
    }

    /// Page-locks the caller's `memory` in place; a failure hands it back.
    pub(crate) fn register(
        ctx: &Arc<Context>,
        mut memory: Vec<u64>,
    ) -> Result<Self, Box<Unregistered>> {
        let bytes = std::mem::size_of_val(memory.as_slice());
        let refused = |memory, error| Err(Box::new(Unregistered { memory, error }));
        if bytes == 0 {
            return refused(
                memory,
                BackendError::invalid(BackendOp::Alloc, "zero bytes"),
            );
        }
        if let Err(e) = ctx.bind() {
            return refused(memory, e);
        }
        let ptr = memory.as_mut_ptr().cast::<u8>();
        // SAFETY: `ptr` is valid for `bytes` (the vector's elements); the vector is kept in the
        // value, unread and unwritten through Rust references, and neither freed nor grown
        // until the memory is unregistered (`unregister`, `drop`).
        match unsafe { driver::host_register(ptr, bytes) } {
            Ok(()) => Ok(CudaPinned {
                ptr,
                bytes,
                ctx: Arc::clone(ctx),
                kind: PinnedKind::Registered(memory),
            }),
            Err(e) => refused(memory, e),
        }
    }

    /// Unregisters registered memory and gives the vector back. Allocated memory is refused
    /// (and freed on drop); if the driver refuses, the vector is leaked rather than freed
    /// while it may still hold the pages.
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
        if let Err(e) = self.ctx.bind() {
            self.kind = PinnedKind::Registered(memory);
            return Err(e);
        }
        // SAFETY: `ptr` was registered and is unregistered once (the kind is now `Released`);
        // the backend unregisters only once no queued copy uses the memory.
        match unsafe { driver::host_unregister(self.ptr) } {
            Ok(()) => Ok(memory),
            Err(e) => {
                std::mem::forget(memory);
                Err(e)
            }
        }
    }

    /// The host address of byte `offset`, once `[offset, offset + len)` is checked to lie
    /// inside the buffer.
    pub(crate) fn range(
        &self,
        op: BackendOp,
        offset: usize,
        len: usize,
    ) -> Result<*mut u8, BackendError> {
        check_range(op, "page-locked buffer", self.bytes, offset, len)?;
        // SAFETY: `offset + len <= bytes` (checked), so the result is inside the allocation.
        Ok(unsafe { self.ptr.add(offset) })
    }
}

impl PinnedAllocation for CudaPinned {
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

impl Drop for CudaPinned {
    fn drop(&mut self) {
        let bound = self.ctx.bind().is_ok();
        match std::mem::replace(&mut self.kind, PinnedKind::Released) {
            PinnedKind::Allocated if bound => {
                // SAFETY: `ptr` came from `cuMemHostAlloc` and is freed once; the backend drops
                // a buffer only once no copy uses it (and `cuMemFreeHost` synchronises anyway).
                let _ = unsafe { driver::host_free(self.ptr) };
            }
            PinnedKind::Registered(memory) => {
                // SAFETY: `ptr` was registered and is unregistered once; no copy uses it (as
                // above).
                let unregistered = bound && unsafe { driver::host_unregister(self.ptr) }.is_ok();
                if !unregistered {
                    // The driver may still hold the pages: leak rather than free them.
                    std::mem::forget(memory);
                }
            }
            PinnedKind::Allocated | PinnedKind::Released | PinnedKind::Piece => {}
        }
    }
}

/// A non-blocking CUDA stream, destroyed on drop (after the backend has synchronised it and
/// dropped the cuBLAS handle bound to it).
#[derive(Debug)]
pub struct CudaStreamHandle {
    raw: CUstream,
    ctx: Arc<Context>,
}

// SAFETY: a stream handle may be used from any thread; this type only passes it to the driver.
unsafe impl Send for CudaStreamHandle {}
// SAFETY: as above; nothing Rust-side is mutated through a shared reference.
unsafe impl Sync for CudaStreamHandle {}

impl CudaStreamHandle {
    /// Creates a stream in `ctx`.
    pub(crate) fn new(ctx: &Arc<Context>) -> Result<Self, BackendError> {
        ctx.bind()?;
        Ok(CudaStreamHandle {
            raw: driver::stream_create()?,
            ctx: Arc::clone(ctx),
        })
    }

    /// The raw handle, valid while `self` lives.
    pub(crate) fn raw(&self) -> CUstream {
        self.raw
    }
}

impl Drop for CudaStreamHandle {
    fn drop(&mut self) {
        if self.ctx.bind().is_ok() {
            // SAFETY: the stream is destroyed once, after everything bound to it; work still
            // queued completes before the driver releases it.
            let _ = unsafe { driver::stream_destroy(self.raw) };
        }
    }
}

/// A CUDA event (without timing, or with it for the backend's timing), destroyed on drop.
#[derive(Debug)]
pub struct CudaEventHandle {
    raw: CUevent,
    ctx: Arc<Context>,
}

// SAFETY: an event handle may be recorded, waited on, queried and destroyed from any thread.
unsafe impl Send for CudaEventHandle {}
// SAFETY: as above; the driver synchronises concurrent calls on one event.
unsafe impl Sync for CudaEventHandle {}

impl CudaEventHandle {
    /// Creates an event in `ctx`.
    pub(crate) fn new(ctx: &Arc<Context>) -> Result<Self, BackendError> {
        ctx.bind()?;
        Ok(CudaEventHandle {
            raw: driver::event_create(ctx.blocks())?,
            ctx: Arc::clone(ctx),
        })
    }

    /// Creates an event that records time in `ctx`.
    pub(crate) fn timing(ctx: &Arc<Context>) -> Result<Self, BackendError> {
        ctx.bind()?;
        Ok(CudaEventHandle {
            raw: driver::timing_event_create(ctx.blocks())?,
            ctx: Arc::clone(ctx),
        })
    }

    /// The raw handle, valid while `self` lives.
    pub(crate) fn raw(&self) -> CUevent {
        self.raw
    }
}

impl Drop for CudaEventHandle {
    fn drop(&mut self) {
        if self.ctx.bind().is_ok() {
            // SAFETY: destroyed once; an event may be destroyed before it completes.
            let _ = unsafe { driver::event_destroy(self.raw) };
        }
    }
}
