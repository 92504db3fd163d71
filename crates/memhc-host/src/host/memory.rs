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
