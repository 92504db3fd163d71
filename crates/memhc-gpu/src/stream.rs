//! Streams of a [`GpuBackend`](crate::GpuBackend): each with its own BLAS handle, its own
//! device pointer table and its own staging pool.

use std::sync::{Arc, Mutex, MutexGuard};

use memhc_backend::BackendError;

use crate::api::{DeviceAllocation, DeviceApi};
use crate::event::Fence;
use crate::memory::StagingBuffer;
use crate::options::StagingLimits;
use crate::staging::StagingPool;

/// What a stream's BLAS calls use, behind one lock so that the calls of several threads on one
/// stream stay whole.
#[derive(Debug)]
pub(crate) struct Gear<D: DeviceApi> {
    /// The BLAS handle, bound to this stream for its whole life.
    pub(crate) blas: D::Blas,
    /// Device memory for the pointer arrays of pointer-array batches. Reused call after call:
    /// the upload of the next table is ordered on this stream after the GEMM that read the
    /// previous one, so it can never be overwritten early.
    table: Option<D::Memory>,
}

/// The staging pool of a stream.
pub(crate) type Pool<D> = StagingPool<StagingBuffer<D>, Fence<D>>;

/// A stream of a [`GpuBackend`](crate::GpuBackend): an in-order queue on the device with its
/// own BLAS handle (so that no call ever re-binds a handle, and streams never contend for
/// one), its own pointer table, and its own page-locked staging buffers, recycled once the
/// fence after the copy that reads them has completed.
///
/// Dropping it waits for its work, then frees its buffers, its handle and the stream.
#[derive(Debug)]
pub struct GpuStream<D: DeviceApi> {
    // Field order is drop order: the pool and the gear go before the stream they use.
    staging: Mutex<Pool<D>>,
    gear: Mutex<Gear<D>>,
    raw: D::Stream,
    api: Arc<D>,
    number: u64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<D: DeviceApi> GpuStream<D> {
    /// A new stream and its BLAS handle; `number` names it in timed spans.
    pub(crate) fn new(
        api: &Arc<D>,
        limits: &StagingLimits,
        number: u64,
    ) -> Result<Self, BackendError> {
        let raw = api.stream_create()?;
        let blas = api.blas_create(&raw)?;
        Ok(GpuStream {
            staging: Mutex::new(StagingPool::new(limits.idle_cap, limits.busy_cap)),
            gear: Mutex::new(Gear { blas, table: None }),
            raw,
            api: Arc::clone(api),
            number,
        })
    }

    /// The number the backend gave the stream ([`Backend::stream_number`](memhc_backend::Backend::stream_number)).
    pub(crate) fn number(&self) -> u64 {
        self.number
    }

    /// The driver's stream.
    pub(crate) fn raw(&self) -> &D::Stream {
        &self.raw
    }

    /// The staging pool, locked (lock the gear first when both are needed).
    pub(crate) fn staging(&self) -> MutexGuard<'_, Pool<D>> {
        lock(&self.staging)
    }

    /// Runs `f` on the stream's BLAS handle and pointer table, locked.
    pub(crate) fn with_gear<T>(
        &self,
        f: impl FnOnce(&mut Gear<D>) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        f(&mut lock(&self.gear))
    }

    /// Blocks until all work on the stream has completed.
    pub(crate) fn synchronize(&self) -> Result<(), BackendError> {
        self.api.stream_synchronize(&self.raw)
    }

    /// A device table of at least `bytes` for this stream's pointer arrays: the current one,
    /// or a larger one (at least 4 KiB, a power of two) once the stream has finished with the
    /// old one. Tables are not counted against the budget: its margin covers them.
    pub(crate) fn table<'g>(
        &self,
        gear: &'g mut Gear<D>,
        bytes: usize,
    ) -> Result<&'g D::Memory, BackendError> {
        let fits = gear.table.as_ref().is_some_and(|t| t.bytes() >= bytes);
        if !fits {
            if let Some(old) = gear.table.take() {
                self.synchronize()?;
                self.api.free(old)?;
            }
            gear.table = Some(self.api.malloc(table_size(bytes))?);
        }
        gear.table
            .as_ref()
            .ok_or_else(|| BackendError::Unavailable("no pointer table".into()))
    }
}

/// The size of a pointer table for `bytes`: at least 4 KiB, a power of two.
pub(crate) fn table_size(bytes: usize) -> usize {
    bytes.max(4 << 10).next_power_of_two()
}

impl<D: DeviceApi> Drop for GpuStream<D> {
    fn drop(&mut self) {
        // The staging buffers and the table may be freed only once the work using them is
        // done. A failure cannot be reported here; freeing waits for the device anyway.
        let _ = self.synchronize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_sizes() {
        assert_eq!(table_size(24), 4096);
        assert_eq!(table_size(5000), 8192);
        assert_eq!(table_size(3 * 8 * 64), 4096);
    }
}
