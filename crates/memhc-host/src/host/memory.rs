//! The memory of the host backend: a "device" allocation ([`HostBuffer`]) and host memory
//! for asynchronous copies back ([`HostPinned`]), both over a [`Cell`] that queued jobs share.

use std::sync::Arc;
use std::sync::RwLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use num_complex::Complex64;

use memhc_backend::ledger::Reservation;
use memhc_backend::{BackendError, BackendOp, DeviceMemory, HostMemory, check_range};

/// The storage of one host "device" allocation, shared with the jobs that use it.
#[derive(Debug)]
pub(crate) struct Cell {
    pub(super) data: RwLock<Vec<Complex64>>,
    /// Queued jobs that reference this buffer and have not finished.
    pub(super) pending: AtomicUsize,
}

/// One allocation of the host backend.
#[derive(Debug)]
pub struct HostBuffer {
    pub(super) handle: u64,
    /// The bytes it holds of the backend's capacity, given back when it is dropped.
    pub(super) reservation: Reservation,
    pub(super) cell: Arc<Cell>,
    /// Allocated by [`Backend::alloc_managed`](memhc_backend::Backend::alloc_managed): the host may read and write it in place.
    pub(super) managed: bool,
}

impl DeviceMemory for HostBuffer {
    fn bytes(&self) -> usize {
        self.reservation.bytes()
    }

    fn handle(&self) -> u64 {
        self.handle
    }
}

/// Host memory for asynchronous device-to-host copies (plain memory here; pinned on a GPU).
#[derive(Debug)]
pub struct HostPinned {
    pub(super) handle: u64,
    pub(super) bytes: usize,
    pub(super) cell: Arc<Cell>,
}

impl HostMemory for HostPinned {
    fn bytes(&self) -> usize {
        self.bytes
    }

    /// The bytes in place, once the copies into or out of the buffer have run: the host waits
    /// for them (a queued job always ends, run or dropped unrun with its stream; after a minute
    /// it reports [`BackendError::BufferInUse`]).
    fn as_mut_bytes(&mut self) -> Result<&mut [u8], BackendError> {
        let bytes = self.bytes;
        let start = std::time::Instant::now();
        // A job that has run may still hold its reference for a moment after its count drops.
        while self.cell.pending.load(Ordering::Acquire) > 0
            || Arc::get_mut(&mut self.cell).is_none()
        {
            if start.elapsed() > std::time::Duration::from_secs(60) {
                break;
            }
            std::thread::yield_now();
        }
        let (handle, pending) = (
            self.handle,
            self.cell.pending.load(Ordering::Acquire).max(1),
        );
        let cell =
            Arc::get_mut(&mut self.cell).ok_or(BackendError::BufferInUse { handle, pending })?;
        let data = cell.data.get_mut().map_err(|_| BackendError::Async {
            op: BackendOp::CopyD2H,
            message: "host buffer lock poisoned".into(),
        })?;
        let all: &mut [u8] = bytemuck::cast_slice_mut(data.as_mut_slice());
        Ok(&mut all[..bytes])
    }

    /// Reads the buffer; a copy into it that has not completed yet is reported as
    /// [`BackendError::BufferInUse`] (the caller forgot to synchronise).
    fn read(&self, offset: usize, dst: &mut [u8]) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyD2H,
            "host buffer",
            self.bytes,
            offset,
            dst.len(),
        )?;
        let pending = self.cell.pending.load(Ordering::Acquire);
        if pending > 0 {
            return Err(BackendError::BufferInUse {
                handle: self.handle,
                pending,
            });
        }
        let data = self.cell.data.read().map_err(|_| BackendError::Async {
            op: BackendOp::CopyD2H,
            message: "host buffer lock poisoned".into(),
        })?;
        let bytes: &[u8] = bytemuck::cast_slice(data.as_slice());
        dst.copy_from_slice(&bytes[offset..offset + dst.len()]);
        Ok(())
    }
}
