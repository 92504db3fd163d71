//! Owning memory types: device allocations ([`HipBuffer`], counted against the backend's
//! budget), page-locked host memory ([`HipHostBuffer`] for asynchronous copies back, and the
//! staging buffers behind `copy_h2d`), and the small device buffers that hold pointer tables.
//! Each frees its memory on drop.

use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard};

use memhc_core::backend::gpu::Staging;
use memhc_core::backend::ledger::Ledger;
use memhc_core::backend::{DeviceMemory, HostMemory, check_range};
use memhc_core::{BackendError, BackendOp};

use crate::check::{self, Libs};
use crate::event::Fence;

/// One device allocation of the HIP backend (`hipMalloc`), counted against its budget; freed
/// on drop if [`Backend::free`](memhc_core::Backend::free) was not called.
#[derive(Debug)]
pub struct HipBuffer {
    addr: u64,
    bytes: usize,
    device: i32,
    ledger: Arc<Ledger>,
    libs: Libs,
}

impl HipBuffer {
    /// Allocates `bytes` on `device` (the caller reserved them in `ledger`; they are given
    /// back when the buffer goes).
    pub(crate) fn alloc(
        libs: Libs,
        device: i32,
        bytes: usize,
        ledger: &Arc<Ledger>,
    ) -> Result<Self, BackendError> {
        check::set_device(libs, device)?;
        let addr = check::malloc(libs, bytes)?;
        Ok(HipBuffer {
            addr,
            bytes,
            device,
            ledger: Arc::clone(ledger),
            libs,
        })
    }

    /// The device address of byte `offset`.
    pub(crate) fn addr(&self, offset: usize) -> u64 {
        self.addr + offset as u64
    }

    /// Frees the memory now, reporting a failure (the budget is given back either way).
    pub(crate) fn free(mut self) -> Result<(), BackendError> {
        let addr = std::mem::take(&mut self.addr);
        let bound = check::set_device(self.libs, self.device);
        // SAFETY: `addr` came from hipMalloc and is freed only here (Drop sees 0 now).
        let freed = unsafe { check::free(self.libs, addr) };
        bound.and(freed)
    }
}

impl DeviceMemory for HipBuffer {
    fn bytes(&self) -> usize {
        self.bytes
    }

    fn handle(&self) -> u64 {
        self.addr
    }
}

impl Drop for HipBuffer {
    fn drop(&mut self) {
        if self.addr != 0 {
            let _ = check::set_device(self.libs, self.device);
            // SAFETY: `addr` came from hipMalloc and was not freed (free() zeroes it). A
            // failure cannot be reported from a destructor.
            let _ = unsafe { check::free(self.libs, self.addr) };
        }
        self.ledger.release(self.bytes);
    }
}

/// Page-locked host memory (`hipHostMalloc`, default flags), freed on drop.
///
/// Its bytes are only ever touched through raw copies ([`Pinned::write`], [`Pinned::read`]),
/// never through a Rust reference, so a copy the device makes into or out of it never aliases
/// a borrow. The owners keep the rule that the host touches it only when no queued copy does:
/// a staging buffer is written only when it is out of its pool's in-flight queue, and a
/// [`HipHostBuffer`] is read only after its pending copies have completed.
#[derive(Debug)]
pub(crate) struct Pinned {
    ptr: NonNull<u8>,
    bytes: usize,
    libs: Libs,
}

// SAFETY: the memory is a plain host allocation owned by this value; moving the owner to
// another thread moves nothing the HIP runtime ties to a thread.
unsafe impl Send for Pinned {}
// SAFETY: shared access only reads through `read`, which copies out; writes need `&mut`.
unsafe impl Sync for Pinned {}

impl Pinned {
    /// `bytes` (> 0) of page-locked memory.
    pub(crate) fn new(libs: Libs, bytes: usize) -> Result<Self, BackendError> {
        Ok(Pinned {
            ptr: check::host_malloc(libs, bytes)?,
            bytes,
            libs,
        })
    }

    /// The start of the memory, for a copy the device makes.
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Copies `src` in at byte `offset`.
    pub(crate) fn write(&mut self, offset: usize, src: &[u8]) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyH2D,
            "staging buffer",
            self.bytes,
            offset,
            src.len(),
        )?;
        // SAFETY: the range is inside the allocation (checked); `src` is a distinct Rust
        // slice, so they cannot overlap; no copy uses this buffer (the owner's rule above).
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.as_ptr().add(offset), src.len());
        }
        Ok(())
    }

    /// Copies `dst.len()` bytes out from byte `offset`.
    pub(crate) fn read(&self, offset: usize, dst: &mut [u8]) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyD2H,
            "host buffer",
            self.bytes,
            offset,
            dst.len(),
        )?;
        // SAFETY: the range is inside the allocation (checked); `dst` is a distinct Rust
        // slice; no copy writes this buffer now (the owner's rule above).
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.ptr.as_ptr().add(offset),
                dst.as_mut_ptr(),
                dst.len(),
            );
        }
        Ok(())
    }
}

impl Staging for Pinned {
    fn capacity(&self) -> usize {
        self.bytes
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: the pointer came from hipHostMalloc and is freed only here; the owners
        // drop a buffer only once no copy uses it (and hipHostFree waits for the device).
        let _ = unsafe { check::host_free(self.libs, self.ptr.as_ptr()) };
    }
}

/// Page-locked host memory that asynchronous device-to-host copies write into (from
/// [`Backend::alloc_host`](memhc_core::Backend::alloc_host)).
///
/// The backend remembers a fence for every copy into it, so [`HostMemory::read`] first waits
/// for the copies still pending: reading never races a copy, even if the caller did not
/// synchronise. Dropping it waits for them too.
#[derive(Debug)]
pub struct HipHostBuffer {
    pinned: Pinned,
    pending: Mutex<Vec<Fence>>,
}

impl HipHostBuffer {
    pub(crate) fn new(libs: Libs, bytes: usize) -> Result<Self, BackendError> {
        Ok(HipHostBuffer {
            pinned: Pinned::new(libs, bytes)?,
            pending: Mutex::new(Vec::new()),
        })
    }

    /// The start of the memory.
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.pinned.ptr()
    }

    /// The fences of the copies into this buffer, locked: a copy is enqueued and its fence
    /// pushed under this lock, and a read waits for them under it.
    pub(crate) fn pending(&self) -> MutexGuard<'_, Vec<Fence>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Waits for every fence, oldest first, dropping each once complete.
fn wait_all(pending: &mut Vec<Fence>) -> Result<(), BackendError> {
    while let Some(f) = pending.first() {
        f.synchronize()?;
        pending.remove(0);
    }
    Ok(())
}

impl HostMemory for HipHostBuffer {
    fn bytes(&self) -> usize {
        self.pinned.bytes
    }

    /// Waits for the copies into this buffer that are still pending, then copies out.
    fn read(&self, offset: usize, dst: &mut [u8]) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyD2H,
            "host buffer",
            self.pinned.bytes,
            offset,
            dst.len(),
        )?;
        let mut pending = self.pending();
        wait_all(&mut pending)?;
        self.pinned.read(offset, dst)
    }
}

impl Drop for HipHostBuffer {
    fn drop(&mut self) {
        let pending = self.pending.get_mut().unwrap_or_else(|p| p.into_inner());
        // If a wait fails, hipHostFree (in Pinned's drop) still waits for the device.
        let _ = wait_all(pending);
    }
}

/// A small device buffer that holds the pointer tables of batched GEMMs; not counted against
/// the budget (the budget's margin covers it). Freed on drop.
#[derive(Debug)]
pub(crate) struct DeviceScratch {
    addr: u64,
    bytes: usize,
    libs: Libs,
}

impl DeviceScratch {
    /// `bytes` of device memory on the current device.
    pub(crate) fn new(libs: Libs, bytes: usize) -> Result<Self, BackendError> {
        Ok(DeviceScratch {
            addr: check::malloc(libs, bytes)?,
            bytes,
            libs,
        })
    }

    /// Its device address.
    pub(crate) fn addr(&self) -> u64 {
        self.addr
    }
}

impl Staging for DeviceScratch {
    fn capacity(&self) -> usize {
        self.bytes
    }
}

impl Drop for DeviceScratch {
    fn drop(&mut self) {
        // SAFETY: the address came from hipMalloc and is freed only here; the pool drops a
        // table only once the GEMM that reads it has completed (and hipFree waits for the
        // device).
        let _ = unsafe { check::free(self.libs, self.addr) };
    }
}
