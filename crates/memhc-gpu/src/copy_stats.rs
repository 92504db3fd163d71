//! What a [`GpuBackend`](crate::GpuBackend) copied, in bytes, counted as it enqueues the copies:
//! how many bytes the host copied through page-locked staging buffers, and how many the device
//! moved in one DMA from or into page-locked (or registered) host memory. The CPU-bytes-per-
//! device-byte figure of the `host_cost` bench and of the target (0 with page-locked host
//! objects) is [`CopyStats::host_per_device_byte`].

use std::sync::atomic::{AtomicU64, Ordering};

/// The byte counts of a backend's copies since it opened ([`GpuBackend::copy_stats`]).
///
/// Every byte that crosses the bus is counted once, as staged or direct: a staged byte was
/// also copied by the host (into a staging buffer on the way in, out of one on the way back),
/// a direct byte was not. The pointer tables of pointer-array batches are staged uploads.
///
/// [`GpuBackend::copy_stats`]: crate::GpuBackend::copy_stats
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopyStats {
    /// Bytes the host copied into staging buffers, each then copied to the device.
    pub staged_h2d_bytes: u64,
    /// Bytes copied from the device into staging buffers, each then copied out by the host.
    pub staged_d2h_bytes: u64,
    /// Bytes copied to the device in one DMA from page-locked or registered host memory.
    pub direct_h2d_bytes: u64,
    /// Bytes copied from the device in one DMA into page-locked or registered host memory.
    pub direct_d2h_bytes: u64,
    /// Pageable buffers registered (page-locked in place: `cuMemHostRegister`).
    pub registrations: u64,
    /// Bytes of those buffers.
    pub registered_bytes: u64,
    /// Registered buffers unregistered since (given back or dropped).
    pub unregistrations: u64,
}

impl CopyStats {
    /// Bytes the host copied: staging, both ways.
    pub fn host_bytes(&self) -> u64 {
        self.staged_h2d_bytes + self.staged_d2h_bytes
    }

    /// Bytes the device copied over the bus, both ways.
    pub fn device_bytes(&self) -> u64 {
        self.staged_h2d_bytes
            + self.staged_d2h_bytes
            + self.direct_h2d_bytes
            + self.direct_d2h_bytes
    }

    /// Bytes the host copied per byte the device copied (0 when nothing was copied).
    pub fn host_per_device_byte(&self) -> f64 {
        match self.device_bytes() {
            0 => 0.0,
            d => self.host_bytes() as f64 / d as f64,
        }
    }

    /// The counts from `earlier` to `self` (each field's difference).
    pub fn since(&self, earlier: &CopyStats) -> CopyStats {
        CopyStats {
            staged_h2d_bytes: self.staged_h2d_bytes - earlier.staged_h2d_bytes,
            staged_d2h_bytes: self.staged_d2h_bytes - earlier.staged_d2h_bytes,
            direct_h2d_bytes: self.direct_h2d_bytes - earlier.direct_h2d_bytes,
            direct_d2h_bytes: self.direct_d2h_bytes - earlier.direct_d2h_bytes,
            registrations: self.registrations - earlier.registrations,
            registered_bytes: self.registered_bytes - earlier.registered_bytes,
            unregistrations: self.unregistrations - earlier.unregistrations,
        }
    }
}

/// The counters behind [`CopyStats`], shared by the backend and its registered buffers.
#[derive(Debug, Default)]
pub(crate) struct CopyCounters {
    staged_h2d: AtomicU64,
    staged_d2h: AtomicU64,
    direct_h2d: AtomicU64,
    direct_d2h: AtomicU64,
    registrations: AtomicU64,
    registered_bytes: AtomicU64,
    unregistrations: AtomicU64,
}

/// Which counter a copy adds to.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Copied {
    StagedH2d,
    StagedD2h,
    DirectH2d,
    DirectD2h,
}

impl CopyCounters {
    /// Adds `bytes` to the counter of `what`.
    pub(crate) fn add(&self, what: Copied, bytes: usize) {
        let counter = match what {
            Copied::StagedH2d => &self.staged_h2d,
            Copied::StagedD2h => &self.staged_d2h,
            Copied::DirectH2d => &self.direct_h2d,
            Copied::DirectD2h => &self.direct_d2h,
        };
        counter.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Counts a registration of `bytes`.
    pub(crate) fn registered(&self, bytes: usize) {
        self.registrations.fetch_add(1, Ordering::Relaxed);
        self.registered_bytes
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Counts an unregistration.
    pub(crate) fn unregistered(&self) {
        self.unregistrations.fetch_add(1, Ordering::Relaxed);
    }

    /// The counts now.
    pub(crate) fn snapshot(&self) -> CopyStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        CopyStats {
            staged_h2d_bytes: get(&self.staged_h2d),
            staged_d2h_bytes: get(&self.staged_d2h),
            direct_h2d_bytes: get(&self.direct_h2d),
            direct_d2h_bytes: get(&self.direct_d2h),
            registrations: get(&self.registrations),
            registered_bytes: get(&self.registered_bytes),
            unregistrations: get(&self.unregistrations),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_bytes_per_device_byte_counts_staging_only() {
        let c = CopyCounters::default();
        assert_eq!(c.snapshot().host_per_device_byte(), 0.0);
        c.add(Copied::DirectH2d, 300);
        c.add(Copied::DirectD2h, 100);
        assert_eq!(c.snapshot().host_per_device_byte(), 0.0);
        let before = c.snapshot();
        c.add(Copied::StagedH2d, 250);
        c.add(Copied::StagedD2h, 150);
        let s = c.snapshot();
        assert_eq!((s.host_bytes(), s.device_bytes()), (400, 800));
        assert_eq!(s.host_per_device_byte(), 0.5);
        assert_eq!(s.since(&before).host_per_device_byte(), 1.0);
    }
}
