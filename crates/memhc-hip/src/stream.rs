//! Streams: a non-blocking `hipStream_t` with its own rocBLAS handle, its pinned staging
//! buffers for host-to-device copies and its device pointer tables for batched GEMMs, both
//! recycled once the fence recorded after the work that uses them has completed.

use std::sync::{Mutex, MutexGuard};

use memhc_core::BackendError;
use memhc_core::backend::gpu::{Staging, StagingPool};

use crate::check::{self, Libs};
use crate::event::Fence;
use crate::ffi::{HipStreamT, RocblasHandle};
use crate::memory::{DeviceScratch, Pinned};

/// Largest piece a host-to-device or blocking device-to-host copy is staged in.
pub(crate) const CHUNK: usize = 32 << 20;
/// Idle staging bytes a stream keeps for reuse.
const STAGING_IDLE_CAP: usize = 64 << 20;
/// Staging bytes a stream may have in flight before a copy waits for the oldest to complete.
const STAGING_BUSY_CAP: usize = 256 << 20;
/// Idle pointer-table bytes a stream keeps.
const TABLES_IDLE_CAP: usize = 4 << 20;
/// Pointer-table bytes a stream may have in flight before a GEMM waits for the oldest.
const TABLES_BUSY_CAP: usize = 64 << 20;

/// A [`StagingPool`] with a count of the bytes it owns, so that the bytes in flight can be
/// bounded: past the cap, taking a buffer waits for the oldest fence instead of allocating.
#[derive(Debug)]
pub(crate) struct Pool<H> {
    pool: StagingPool<H, Fence>,
    /// Bytes of every buffer this pool allocated and still owns (idle, in flight or lent out).
    owned: usize,
    busy_cap: usize,
    size_for: fn(usize) -> usize,
}

impl<H: Staging> Pool<H> {
    fn new(idle_cap: usize, busy_cap: usize, size_for: fn(usize) -> usize) -> Self {
        Pool {
            pool: StagingPool::new(idle_cap),
            owned: 0,
            busy_cap,
            size_for,
        }
    }

    fn drop_excess(&mut self, excess: Vec<H>) {
        for b in excess {
            self.owned = self.owned.saturating_sub(b.capacity());
        }
    }

    /// A buffer of at least `bytes` that no queued work uses: an idle one, else a new one from
    /// `alloc` (asked for the pool's rounded size). Past the in-flight cap, waits for the
    /// oldest fence first.
    pub(crate) fn acquire(
        &mut self,
        bytes: usize,
        alloc: impl FnOnce(usize) -> Result<H, BackendError>,
    ) -> Result<H, BackendError> {
        let size = (self.size_for)(bytes);
        loop {
            let excess = self.pool.reclaim(|f| f.query())?;
            self.drop_excess(excess);
            if let Some(b) = self.pool.take(bytes) {
                return Ok(b);
            }
            let busy = self.owned.saturating_sub(self.pool.idle_bytes());
            if self.pool.busy_len() == 0 || busy + size <= self.busy_cap {
                break;
            }
            let mut oldest = true;
            let excess = self.pool.reclaim(|f| {
                if std::mem::take(&mut oldest) {
                    f.synchronize().map(|()| true)
                } else {
                    f.query()
                }
            })?;
            self.drop_excess(excess);
        }
        let b = alloc(size)?;
        self.owned += b.capacity();
        Ok(b)
    }

    /// Takes back a buffer that queued work uses until `fence` completes.
    pub(crate) fn in_flight(&mut self, b: H, fence: Fence) {
        self.pool.in_flight(b, fence);
    }

    /// Takes back a buffer no queued work uses.
    pub(crate) fn put_idle(&mut self, b: H) {
        self.pool.put_idle(b);
    }

    /// Frees a buffer instead of keeping it (its state is unknown after a failure).
    pub(crate) fn discard(&mut self, b: H) {
        self.owned = self.owned.saturating_sub(b.capacity());
        drop(b);
    }
}

/// Device pointer tables: at least 4 KiB, powers of two.
fn table_size(bytes: usize) -> usize {
    bytes.max(4 << 10).next_power_of_two()
}

/// One `hipStream_t`, destroyed on drop.
#[derive(Debug)]
struct RawStream {
    stream: HipStreamT,
    libs: Libs,
}

// SAFETY: a HIP stream handle may be used from any thread (the HIP runtime synchronises the
// queue); this wrapper only passes the handle to HIP.
unsafe impl Send for RawStream {}
// SAFETY: as above; nothing Rust-side is mutated through a shared reference.
unsafe impl Sync for RawStream {}

impl Drop for RawStream {
    fn drop(&mut self) {
        // SAFETY: the stream is owned and destroyed only here, after everything that used it
        // (the rocBLAS handle, the pools) was dropped before it.
        let _ = unsafe { check::stream_destroy(self.libs, self.stream) };
    }
}

/// One rocBLAS handle, destroyed on drop. It may move between threads but is not
/// thread-safe, so it is `Send` and not `Sync`: the stream keeps it under a mutex.
#[derive(Debug)]
pub(crate) struct BlasHandle {
    handle: RocblasHandle,
    libs: Libs,
}

// SAFETY: a rocBLAS handle is not tied to the thread that created it; using it from one thread
// at a time (the mutex in HipStream) is what rocBLAS requires.
unsafe impl Send for BlasHandle {}

impl BlasHandle {
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

/// A stream of the HIP backend: an in-order queue on the device, non-blocking with respect to
/// the null stream, with its own rocBLAS handle (bound to it once, alpha and beta in host
/// memory), staging buffers and pointer tables.
///
/// Dropping it waits for its work, then frees its buffers, its handle and the stream.
#[derive(Debug)]
pub struct HipStream {
    // Field order is drop order: the pools and the handle go before the stream they use.
    staging: Mutex<Pool<Pinned>>,
    tables: Mutex<Pool<DeviceScratch>>,
    blas: Mutex<BlasHandle>,
    raw: RawStream,
    device: i32,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl HipStream {
    /// A new stream on `device` (which the caller made current).
    pub(crate) fn new(libs: Libs, device: i32) -> Result<Self, BackendError> {
        let raw = RawStream {
            stream: check::stream_create(libs)?,
            libs,
        };
        // SAFETY: the stream is live and outlives the handle (field order in HipStream).
        let handle = unsafe { check::blas_create(libs, raw.stream)? };
        Ok(HipStream {
            staging: Mutex::new(Pool::new(
                STAGING_IDLE_CAP,
                STAGING_BUSY_CAP,
                StagingPool::<Pinned, Fence>::allocation_size,
            )),
            tables: Mutex::new(Pool::new(TABLES_IDLE_CAP, TABLES_BUSY_CAP, table_size)),
            blas: Mutex::new(BlasHandle { handle, libs }),
            raw,
            device,
        })
    }

    /// The raw stream.
    pub(crate) fn raw(&self) -> HipStreamT {
        self.raw.stream
    }

    /// The device the stream belongs to.
    pub(crate) fn device(&self) -> i32 {
        self.device
    }

    /// The staging pool (lock it before the table pool when both are needed).
    pub(crate) fn staging(&self) -> MutexGuard<'_, Pool<Pinned>> {
        lock(&self.staging)
    }

    /// The pointer-table pool.
    pub(crate) fn tables(&self) -> MutexGuard<'_, Pool<DeviceScratch>> {
        lock(&self.tables)
    }

    /// The rocBLAS handle (lock it last).
    pub(crate) fn blas(&self) -> MutexGuard<'_, BlasHandle> {
        lock(&self.blas)
    }

    /// Waits for all work on the stream.
    pub(crate) fn synchronize(&self) -> Result<(), BackendError> {
        // SAFETY: the stream is live (owned).
        unsafe { check::stream_synchronize(self.raw.libs, self.raw.stream) }
    }
}

impl Drop for HipStream {
    fn drop(&mut self) {
        let _ = check::set_device(self.raw.libs, self.device);
        // The buffers in flight may be freed only once the work using them is done. A failure
        // cannot be reported here; freeing pinned or device memory waits for the device anyway.
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
