//! The memory a [`GpuBackend`](crate::GpuBackend) hands out: device buffers counted against
//! its budget ([`GpuBuffer`], the one "allocation plus budget, both given back on drop" type of
//! every GPU backend) and page-locked host buffers for asynchronous copies back
//! ([`GpuHostBuffer`]).

use std::sync::{Arc, Mutex, MutexGuard};

use memhc_backend::ledger::{Ledger, Reservation};
use memhc_backend::{BackendError, BackendOp, DeviceMemory};
use memhc_backend::{HostMemory, check_range};

use crate::api::{DeviceAllocation, DeviceApi, PinnedAllocation};
use crate::copy_stats::CopyCounters;
use crate::event::Fence;
use crate::staging::{Completion, Staging};

/// One device (or managed) allocation of a [`GpuBackend`](crate::GpuBackend), counted against
/// its budget. [`Backend::free`](memhc_backend::Backend::free) frees it and reports a failure;
/// dropping it frees it too. The budget is given back either way, after the memory.
#[derive(Debug)]
pub struct GpuBuffer<D: DeviceApi> {
    // Field order is drop order: the memory goes before its reservation.
    memory: D::Memory,
    reservation: Reservation,
}

impl<D: DeviceApi> GpuBuffer<D> {
    /// Reserves `bytes` of `ledger`, then allocates them with `alloc`.
    pub(crate) fn alloc(
        ledger: &Arc<Ledger>,
        bytes: usize,
        alloc: impl FnOnce(usize) -> Result<D::Memory, BackendError>,
    ) -> Result<Self, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(BackendOp::Alloc, "zero bytes"));
        }
        let reservation = ledger.take(bytes)?;
        Ok(GpuBuffer {
            memory: alloc(bytes)?,
            reservation,
        })
    }

    /// The allocation.
    pub(crate) fn memory(&self) -> &D::Memory {
        &self.memory
    }

    /// Frees the memory now, reporting a failure; the budget is given back either way.
    pub(crate) fn free(self, api: &D) -> Result<(), BackendError> {
        let GpuBuffer {
            memory,
            reservation,
        } = self;
        let freed = api.free(memory);
        drop(reservation);
        freed
    }

    /// Whether this is managed memory.
    pub fn is_managed(&self) -> bool {
        self.memory.is_managed()
    }

    /// Checks that bytes `[offset, offset + len)` lie inside the allocation, for `op`.
    pub(crate) fn check_range(
        &self,
        op: BackendOp,
        offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        check_range(
            op,
            format_args!("buffer {:#x}", self.memory.address()),
            self.memory.bytes(),
            offset,
            len,
        )
    }
}

impl<D: DeviceApi> DeviceMemory for GpuBuffer<D> {
    fn bytes(&self) -> usize {
        self.memory.bytes()
    }

    fn handle(&self) -> u64 {
        self.memory.address()
    }
}

/// Page-locked host memory that asynchronous copies write into and read from (from
/// [`Backend::alloc_host`](memhc_backend::Backend::alloc_host)): the destination of a read-back,
/// or a host object the caller filled in place.
///
/// The backend keeps a fence for every copy into it or out of it still pending, so
/// [`HostMemory::read`] and [`HostMemory::as_mut_bytes`] first wait for them: the host never
/// races a copy, even if the caller did not synchronise. Dropping it waits for them too.
#[derive(Debug)]
pub struct GpuHostBuffer<D: DeviceApi> {
    // Field order is drop order: the pending copies are waited for before the memory goes,
    // and a registration is counted as ended once the memory is unregistered.
    pending: Pending<D>,
    pinned: D::Pinned,
    registration: Option<Registration>,
    /// For a piece of a larger page-locked allocation ([`DeviceApi::host_piece`]): that
    /// allocation, kept alive until the piece is gone.
    parent: Option<Arc<GpuHostBuffer<D>>>,
}

/// A [`GpuHostBuffer`] taken apart: the memory, its registration, the allocation it is a piece
/// of (dropped in that order).
pub(crate) type Unpinned<D> = (
    <D as DeviceApi>::Pinned,
    Option<Registration>,
    Option<Arc<GpuHostBuffer<D>>>,
);

/// The fences of the copies that use a host buffer; dropping it waits for them.
#[derive(Debug)]
struct Pending<D: DeviceApi>(Mutex<Vec<Fence<D>>>);

impl<D: DeviceApi> Drop for Pending<D> {
    fn drop(&mut self) {
        let pending = self.0.get_mut().unwrap_or_else(|p| p.into_inner());
        // If a wait fails, freeing page-locked memory still waits for the device (CUDA and
        // HIP both synchronise in their host free).
        let _ = wait_all(pending);
    }
}

/// Marks a host buffer that is the caller's pageable memory, registered in place: counted as
/// unregistered when it goes.
#[derive(Debug)]
pub(crate) struct Registration(Arc<CopyCounters>);

impl Drop for Registration {
    fn drop(&mut self) {
        self.0.unregistered();
    }
}

impl<D: DeviceApi> GpuHostBuffer<D> {
    pub(crate) fn new(pinned: D::Pinned) -> Self {
        GpuHostBuffer {
            pending: Pending(Mutex::new(Vec::new())),
            pinned,
            registration: None,
            parent: None,
        }
    }

    /// A piece of `parent` ([`DeviceApi::host_piece`]), which it keeps alive.
    pub(crate) fn piece(pinned: D::Pinned, parent: &Arc<GpuHostBuffer<D>>) -> Self {
        GpuHostBuffer {
            parent: Some(Arc::clone(parent)),
            ..GpuHostBuffer::new(pinned)
        }
    }

    /// Whether this is a piece of a larger page-locked allocation.
    pub fn is_piece(&self) -> bool {
        self.parent.is_some()
    }

    /// The caller's memory, registered in place ([`DeviceApi::host_register`]): `counters`
    /// count its unregistration.
    pub(crate) fn registered(pinned: D::Pinned, counters: &Arc<CopyCounters>) -> Self {
        GpuHostBuffer {
            registration: Some(Registration(Arc::clone(counters))),
            ..GpuHostBuffer::new(pinned)
        }
    }

    /// Whether this is the caller's pageable memory registered in place (rather than
    /// page-locked memory the backend allocated).
    pub fn is_registered(&self) -> bool {
        self.registration.is_some()
    }

    /// Waits for the copies that use it, then takes it apart: the memory, its registration if
    /// it is registered caller memory (to drop once it is unregistered), and the allocation it
    /// is a piece of (to drop after the memory).
    pub(crate) fn into_pinned(self) -> Result<Unpinned<D>, BackendError> {
        let GpuHostBuffer {
            mut pending,
            pinned,
            registration,
            parent,
        } = self;
        let fences = pending.0.get_mut().unwrap_or_else(|p| p.into_inner());
        wait_all(fences)?;
        Ok((pinned, registration, parent))
    }

    /// The memory, for a copy the device makes into it.
    pub(crate) fn pinned(&self) -> &D::Pinned {
        &self.pinned
    }

    /// The fences of the copies into this buffer, locked: a copy is enqueued and its fence
    /// pushed under this lock, and a read waits for them under it.
    pub(crate) fn pending(&self) -> MutexGuard<'_, Vec<Fence<D>>> {
        self.pending.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Forgets the fences that have completed.
pub(crate) fn forget_completed<D: DeviceApi>(
    pending: &mut Vec<Fence<D>>,
) -> Result<(), BackendError> {
    let mut kept = Vec::with_capacity(pending.len());
    for f in pending.drain(..) {
        if !f.query()? {
            kept.push(f);
        }
    }
    *pending = kept;
    Ok(())
}

/// Waits for every fence, oldest first, dropping each once complete.
fn wait_all<D: DeviceApi>(pending: &mut Vec<Fence<D>>) -> Result<(), BackendError> {
    while let Some(f) = pending.first() {
        f.wait()?;
        pending.remove(0);
    }
    Ok(())
}

impl<D: DeviceApi> HostMemory for GpuHostBuffer<D> {
    fn bytes(&self) -> usize {
        self.pinned.bytes()
    }

    /// Waits for the copies that use this buffer, then hands out its bytes.
    fn as_mut_bytes(&mut self) -> Result<&mut [u8], BackendError> {
        let pending = self.pending.0.get_mut().unwrap_or_else(|p| p.into_inner());
        wait_all(pending)?;
        self.pinned.as_mut_slice()
    }

    /// Waits for the copies that use this buffer that are still pending, then copies out.
    fn read(&self, offset: usize, dst: &mut [u8]) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyD2H,
            "host buffer",
            self.pinned.bytes(),
            offset,
            dst.len(),
        )?;
        let mut pending = self.pending();
        wait_all(&mut pending)?;
        self.pinned.read(offset, dst)
    }
}

/// A staging buffer: page-locked memory the pool hands out.
#[derive(Debug)]
pub(crate) struct StagingBuffer<D: DeviceApi>(pub(crate) D::Pinned);

impl<D: DeviceApi> Staging for StagingBuffer<D> {
    fn capacity(&self) -> usize {
        self.0.bytes()
    }
}
