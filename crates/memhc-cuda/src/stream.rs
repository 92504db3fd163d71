//! Streams: a CUDA stream with its own cuBLAS handle and its own device pointer table.

use std::sync::{Arc, Mutex};

use cudarc::driver::sys::CUstream;
use memhc_core::BackendError;
use memhc_core::backend::ledger::Ledger;

use crate::blas::Handle;
use crate::context::Context;
use crate::driver;
use crate::memory::CudaBuffer;

/// What a stream's GEMM calls use, behind one lock so that calls on one stream from several
/// threads stay whole.
#[derive(Debug)]
pub(crate) struct Gear {
    /// The cuBLAS handle, bound to this stream for its whole life.
    pub blas: Handle,
    /// Device memory for the pointer arrays of `cublasZgemmBatched`. Reused call after call:
    /// the upload of the next table is ordered on this stream after the GEMM that read the
    /// previous one, so it can never be overwritten early.
    pub table: Option<CudaBuffer>,
}

/// A non-blocking CUDA stream. One cuBLAS handle per stream, so that no call ever has to
/// switch a handle's stream.
#[derive(Debug)]
pub struct CudaStream {
    raw: CUstream,
    gear: Mutex<Option<Gear>>,
    /// Accounts the pointer tables apart from the budget: they live in the margin.
    tables: Arc<Ledger>,
    ctx: Arc<Context>,
}

// SAFETY: a stream handle may be used from any thread; the cuBLAS handle and the table are
// behind a mutex.
unsafe impl Send for CudaStream {}
// SAFETY: as above.
unsafe impl Sync for CudaStream {}

impl CudaStream {
    /// Creates a stream and its cuBLAS handle in `ctx`.
    pub(crate) fn new(ctx: &Arc<Context>) -> Result<Self, BackendError> {
        ctx.bind()?;
        let raw = driver::stream_create()?;
        // SAFETY: `raw` was just created and is destroyed only after the handle (in `drop`).
        let blas = match unsafe { Handle::new(raw) } {
            Ok(h) => h,
            Err(e) => {
                // SAFETY: `raw` is live and nothing else holds it.
                let _ = unsafe { driver::stream_destroy(raw) };
                return Err(e);
            }
        };
        Ok(CudaStream {
            raw,
            gear: Mutex::new(Some(Gear { blas, table: None })),
            tables: Ledger::new(usize::MAX),
            ctx: Arc::clone(ctx),
        })
    }

    /// The raw handle, valid while `self` lives.
    pub(crate) fn raw(&self) -> CUstream {
        self.raw
    }

    /// Runs `f` on the stream's cuBLAS handle and pointer table, locked.
    pub(crate) fn with_gear<T>(
        &self,
        f: impl FnOnce(&mut Gear) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        let mut guard = self.gear.lock().unwrap_or_else(|p| p.into_inner());
        let gear = guard
            .as_mut()
            .ok_or_else(|| BackendError::Unavailable("the stream is being destroyed".into()))?;
        f(gear)
    }

    /// A device table of at least `bytes` for this stream's pointer arrays: the current one,
    /// or a larger one (after the stream has finished with the old one).
    pub(crate) fn table<'g>(
        &self,
        gear: &'g mut Gear,
        bytes: usize,
    ) -> Result<&'g CudaBuffer, BackendError> {
        use memhc_core::DeviceMemory;
        let fits = gear.table.as_ref().is_some_and(|t| t.bytes() >= bytes);
        if !fits {
            if let Some(old) = gear.table.take() {
                self.synchronize()?;
                old.free()?;
            }
            let size = bytes.max(4096).next_power_of_two();
            gear.table = Some(CudaBuffer::alloc(&self.ctx, &self.tables, size, false)?);
        }
        gear.table
            .as_ref()
            .ok_or_else(|| BackendError::Unavailable("no pointer table".into()))
    }

    /// Blocks until all work on the stream has completed.
    pub(crate) fn synchronize(&self) -> Result<(), BackendError> {
        self.ctx.bind()?;
        // SAFETY: the stream lives as long as `self`.
        unsafe { driver::stream_synchronize(self.raw) }
    }
}

impl Drop for CudaStream {
    fn drop(&mut self) {
        if self.ctx.bind().is_err() {
            return;
        }
        // Let queued work finish, then destroy the handle and the table before the stream.
        let _ = self.synchronize();
        let gear = self
            .gear
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        drop(gear);
        // SAFETY: the stream is destroyed once, after everything bound to it.
        let _ = unsafe { driver::stream_destroy(self.raw) };
    }
}
