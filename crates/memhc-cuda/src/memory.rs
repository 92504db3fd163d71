//! Owning types for memory: device (and managed) allocations counted against the budget, and
//! page-locked host buffers.

use std::sync::{Arc, Mutex};

use memhc_core::backend::gpu::Staging;
use memhc_core::backend::ledger::Ledger;
use memhc_core::backend::{check_range, not_managed};
use memhc_core::{BackendError, BackendOp, DeviceMemory};

use crate::context::Context;
use crate::driver::{self, DevicePtr};
use crate::event::CudaEvent;

/// One device allocation (`cuMemAlloc`), or one managed allocation (`cuMemAllocManaged`).
/// Freed by [`Backend::free`](memhc_core::Backend::free), or on drop.
#[derive(Debug)]
pub struct CudaBuffer {
    ptr: DevicePtr,
    bytes: usize,
    managed: bool,
    ctx: Arc<Context>,
    ledger: Arc<Ledger>,
}

impl CudaBuffer {
    /// Reserves `bytes` of the budget, then allocates them.
    pub(crate) fn alloc(
        ctx: &Arc<Context>,
        ledger: &Arc<Ledger>,
        bytes: usize,
        managed: bool,
    ) -> Result<Self, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(BackendOp::Alloc, "zero bytes"));
        }
        ledger.reserve(bytes)?;
        let ptr = ctx.bind().and_then(|()| {
            if managed {
                driver::mem_alloc_managed(bytes)
            } else {
                driver::mem_alloc(bytes)
            }
        });
        match ptr {
            Ok(ptr) => Ok(CudaBuffer {
                ptr,
                bytes,
                managed,
                ctx: Arc::clone(ctx),
                ledger: Arc::clone(ledger),
            }),
            Err(e) => {
                ledger.release(bytes);
                Err(e)
            }
        }
    }

    /// The device address.
    pub(crate) fn ptr(&self) -> DevicePtr {
        self.ptr
    }

    /// Whether this is managed memory.
    pub(crate) fn is_managed(&self) -> bool {
        self.managed
    }

    /// Checks that `[offset, offset + len)` lies inside the allocation.
    pub(crate) fn check_range(
        &self,
        op: BackendOp,
        offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        check_range(
            op,
            format_args!("buffer {:#x}", self.ptr),
            self.bytes,
            offset,
            len,
        )
    }

    /// The host's view of a managed allocation (its device address is a host address too).
    fn managed_ptr(&self, op: BackendOp) -> Result<*mut u8, BackendError> {
        if self.managed {
            Ok(self.ptr as usize as *mut u8)
        } else {
            Err(not_managed(op, self.ptr))
        }
    }

    /// The host writes `src` into this managed allocation from byte `offset`. The caller has
    /// waited for the device work that uses it.
    pub(crate) fn managed_write(&self, offset: usize, src: &[u8]) -> Result<(), BackendError> {
        let base = self.managed_ptr(BackendOp::CopyH2D)?;
        self.check_range(BackendOp::CopyH2D, offset, src.len())?;
        self.ctx.bind()?;
        // SAFETY: managed memory is addressable by the host at its device address; the range is
        // inside the allocation (checked); the caller waited for device work on it, and a
        // host slice cannot overlap device-owned memory.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), base.add(offset), src.len()) };
        Ok(())
    }

    /// The host reads this managed allocation from byte `offset` into `dst`. The caller has
    /// waited for the device work that writes it.
    pub(crate) fn managed_read(&self, offset: usize, dst: &mut [u8]) -> Result<(), BackendError> {
        let base = self.managed_ptr(BackendOp::CopyD2H)?;
        self.check_range(BackendOp::CopyD2H, offset, dst.len())?;
        self.ctx.bind()?;
        // SAFETY: as in `managed_write`, with the roles of the two ranges swapped.
        unsafe { std::ptr::copy_nonoverlapping(base.add(offset), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    /// Frees the allocation now, reporting a failure (the caller waited for its work).
    pub(crate) fn free(mut self) -> Result<(), BackendError> {
        self.release()
    }

    fn release(&mut self) -> Result<(), BackendError> {
        if self.ptr == 0 {
            return Ok(());
        }
        let ptr = std::mem::replace(&mut self.ptr, 0);
        self.ledger.release(self.bytes);
        self.ctx.bind()?;
        // SAFETY: `ptr` came from `cuMemAlloc`/`cuMemAllocManaged` and is freed once (it was
        // just taken out of `self`); the backend contract makes callers wait for its work.
        unsafe { driver::mem_free(ptr) }
    }
}

impl DeviceMemory for CudaBuffer {
    fn bytes(&self) -> usize {
        self.bytes
    }

    fn handle(&self) -> u64 {
        self.ptr
    }
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

/// Page-locked host memory (`cuMemHostAlloc`, cached: not write-combined): the staging area of
/// host-to-device copies and the destination of asynchronous device-to-host copies.
#[derive(Debug)]
pub struct PinnedBuffer {
    ptr: *mut u8,
    bytes: usize,
    /// The event after the last copy enqueued into this buffer: reads wait for it.
    last_copy: Mutex<Option<CudaEvent>>,
    ctx: Arc<Context>,
}

// SAFETY: the buffer is plain host memory owned by this value; the raw pointer is not shared
// with anything but the driver's copies, which the methods order with events.
unsafe impl Send for PinnedBuffer {}
// SAFETY: as above; `&self` methods only read the memory after the copies into it completed,
// and `write` is reached only through `&mut`-like exclusive use by the staging pool.
unsafe impl Sync for PinnedBuffer {}

impl PinnedBuffer {
    /// Allocates `bytes` (> 0) of page-locked memory.
    pub(crate) fn alloc(ctx: &Arc<Context>, bytes: usize) -> Result<Self, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(BackendOp::Alloc, "zero bytes"));
        }
        ctx.bind()?;
        let ptr = driver::host_alloc(bytes)?;
        Ok(PinnedBuffer {
            ptr,
            bytes,
            last_copy: Mutex::new(None),
            ctx: Arc::clone(ctx),
        })
    }

    /// The host address, for the driver's copies.
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Fills the start of the buffer with `src`. The caller owns the buffer exclusively (no
    /// copy is reading it), as the staging pool guarantees.
    pub(crate) fn fill(&mut self, src: &[u8]) -> Result<(), BackendError> {
        if src.len() > self.bytes {
            return Err(BackendError::invalid(
                BackendOp::CopyH2D,
                format!(
                    "{} bytes into a staging buffer of {}",
                    src.len(),
                    self.bytes
                ),
            ));
        }
        // SAFETY: `ptr` is valid for `bytes` >= `src.len()`, the regions cannot overlap (one
        // is ours alone), and `&mut self` excludes every other access.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr, src.len()) };
        Ok(())
    }

    /// Remembers the event after a copy into this buffer.
    pub(crate) fn set_last_copy(&self, event: CudaEvent) {
        *self.last_copy.lock().unwrap_or_else(|p| p.into_inner()) = Some(event);
    }
}

impl memhc_core::backend::HostMemory for PinnedBuffer {
    fn bytes(&self) -> usize {
        self.bytes
    }

    fn read(&self, offset: usize, dst: &mut [u8]) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyD2H,
            "host buffer",
            self.bytes,
            offset,
            dst.len(),
        )?;
        let pending = self
            .last_copy
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(event) = pending {
            event.synchronize()?;
        }
        // SAFETY: the range is inside the allocation (checked above) and the copies into it
        // have completed (waited for above), so nothing writes it while it is read.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(offset), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }
}

impl Staging for PinnedBuffer {
    fn capacity(&self) -> usize {
        self.bytes
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        if self.ctx.bind().is_ok() {
            // SAFETY: `ptr` came from `cuMemHostAlloc` and is freed once; the staging pool and
            // the backend contract ensure no copy still uses it.
            let _ = unsafe { driver::host_free(self.ptr) };
        }
    }
}
