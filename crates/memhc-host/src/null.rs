//! A backend that holds no data: it accounts device memory against a capacity and validates
//! every call exactly as a real backend does, but copies and arithmetic do nothing and all work
//! is complete as soon as it is enqueued.
//!
//! Running a queue on it answers memory questions in a fraction of the time of a real run, with
//! the runtime's own code (not a model of it): the peak device memory a queue needs when nothing
//! is evicted, how many allocations, hits, misses, evictions and write-backs a policy makes under
//! a budget, and so the Belady lower bound on misses.
//!
//! Copies to the host leave the destination as it was: they write nothing, so values read back
//! mean nothing (zeros from fresh pages, or whatever a reused vector held). The runtime reads
//! into fresh `calloc` pages or into vectors of released objects, so a dry run never touches
//! the pages of the host copies it makes: planning a queue of 4 GB of nodes costs neither the
//! time to fill 4 GB nor the memory (filling them with zeros here made `memhc-synth plan` at
//! N = 384 spend 20 of its 21 seconds in page faults).
//!
//! It has managed memory too, accounted like device memory, so that dry runs of the unified
//! memory mode work; the host's in-place reads of it write nothing either.
//!
//! It is not a device: it does not pass the numerical checks of the conformance suite.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use memhc_backend::components::{ComponentBatch, validate_components};
use memhc_backend::gemm::{
    GeamShape, GemmItem, GemmShape, StridedBatch, validate_batched, validate_geam, validate_strided,
};
use memhc_backend::ledger::{Ledger, Reservation};
use memhc_backend::tiles::Tiles;
use memhc_backend::zeroed::LazyZeroed;
use memhc_backend::{
    Backend, DeviceMemory, HostMemory, Location, MemInfo, check_range, not_managed,
};
use memhc_backend::{BackendError, BackendOp};

/// An allocation of the null backend: a size and a handle.
#[derive(Debug)]
pub struct NullBuffer {
    handle: u64,
    /// The bytes it holds of the backend's capacity, given back when it is dropped.
    reservation: Reservation,
    /// Allocated by [`Backend::alloc_managed`].
    managed: bool,
}

impl DeviceMemory for NullBuffer {
    fn bytes(&self) -> usize {
        self.reservation.bytes()
    }

    fn handle(&self) -> u64 {
        self.handle
    }
}

/// Host memory of the null backend: a size. No copy moves data into it; it reads back zeros, or
/// what the host wrote in place (its storage is made the first time the host asks for it).
#[derive(Debug)]
pub struct NullHostBuffer {
    bytes: usize,
    storage: LazyZeroed,
}

impl HostMemory for NullHostBuffer {
    fn bytes(&self) -> usize {
        self.bytes
    }

    fn as_mut_bytes(&mut self) -> Result<&mut [u8], BackendError> {
        self.storage.get_mut()
    }

    fn read(&self, offset: usize, dst: &mut [u8]) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyD2H,
            "host buffer",
            self.bytes,
            offset,
            dst.len(),
        )?;
        self.storage.read(offset, dst);
        Ok(())
    }
}

/// The data-less backend. See the [module documentation](self).
#[derive(Debug)]
pub struct NullBackend {
    ledger: Arc<Ledger>,
    next_handle: AtomicU64,
}

impl NullBackend {
    /// A null device of `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        NullBackend {
            ledger: Ledger::new(capacity),
            next_handle: AtomicU64::new(0x1_0000),
        }
    }

    fn check_range(
        op: BackendOp,
        bytes: usize,
        offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        check_range(op, "buffer", bytes, offset, len)
    }

    fn allocate(&self, bytes: usize, managed: bool) -> Result<NullBuffer, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(
                BackendOp::Alloc,
                "zero-byte allocation",
            ));
        }
        let reservation = self.ledger.take(bytes)?;
        let handle = self
            .next_handle
            .fetch_add((bytes as u64).next_multiple_of(256), Ordering::Relaxed);
        Ok(NullBuffer {
            handle,
            reservation,
            managed,
        })
    }

    /// Refuses a buffer that is not managed for managed-memory call `op`.
    fn require_managed(op: BackendOp, buffer: &NullBuffer) -> Result<(), BackendError> {
        if buffer.managed {
            Ok(())
        } else {
            Err(not_managed(op, buffer.handle))
        }
    }
}

impl Backend for NullBackend {
    type Buffer = NullBuffer;
    type Stream = ();
    type Event = ();
    type HostBuffer = NullHostBuffer;

    fn name(&self) -> String {
        format!("null backend ({} bytes, no data)", self.ledger.capacity())
    }

    fn mem_info(&self) -> Result<MemInfo, BackendError> {
        Ok(self.ledger.mem_info())
    }

    fn alloc(&self, bytes: usize) -> Result<NullBuffer, BackendError> {
        self.allocate(bytes, false)
    }

    fn free(&self, buffer: NullBuffer) -> Result<(), BackendError> {
        drop(buffer);
        Ok(())
    }

    fn create_stream(&self) -> Result<(), BackendError> {
        Ok(())
    }

    fn create_event(&self) -> Result<(), BackendError> {
        Ok(())
    }

    fn record_event(&self, _: &(), _: &()) -> Result<(), BackendError> {
        Ok(())
    }

    fn wait_event(&self, _: &(), _: &()) -> Result<(), BackendError> {
        Ok(())
    }

    fn event_query(&self, _: &()) -> Result<bool, BackendError> {
        Ok(true)
    }

    fn event_synchronize(&self, _: &()) -> Result<(), BackendError> {
        Ok(())
    }

    fn stream_synchronize(&self, _: &()) -> Result<(), BackendError> {
        Ok(())
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        Ok(())
    }

    fn copy_h2d(
        &self,
        _: &(),
        src: &[u8],
        dst: &NullBuffer,
        dst_offset: usize,
    ) -> Result<(), BackendError> {
        Self::check_range(BackendOp::CopyH2D, dst.bytes(), dst_offset, src.len())
    }

    fn alloc_host(&self, bytes: usize) -> Result<NullHostBuffer, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(
                BackendOp::Alloc,
                "zero-byte host allocation",
            ));
        }
        Ok(NullHostBuffer {
            bytes,
            storage: LazyZeroed::new(bytes),
        })
    }

    fn copy_h2d_async(
        &self,
        _: &(),
        src: &NullHostBuffer,
        src_offset: usize,
        dst: &NullBuffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        Self::check_range(BackendOp::CopyH2D, src.bytes(), src_offset, len)?;
        Self::check_range(BackendOp::CopyH2D, dst.bytes(), dst_offset, len)
    }

    fn copy_d2h_async(
        &self,
        _: &(),
        src: &NullBuffer,
        src_offset: usize,
        dst: &NullHostBuffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        Self::check_range(BackendOp::CopyD2H, src.bytes(), src_offset, len)?;
        Self::check_range(BackendOp::CopyD2H, dst.bytes(), dst_offset, len)
    }

    fn copy_d2h(
        &self,
        _: &(),
        src: &NullBuffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        Self::check_range(BackendOp::CopyD2H, src.bytes(), src_offset, dst.len())
    }

    /// No: it counts, and computes nothing.
    fn holds_values(&self) -> bool {
        false
    }

    fn supports_tiles(&self) -> bool {
        true
    }

    fn copy_h2d_tiled(
        &self,
        _: &(),
        src: &[u8],
        dst: &NullBuffer,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        tiles.check_len(BackendOp::CopyH2D, src.len())?;
        Self::check_range(BackendOp::CopyH2D, dst.bytes(), dst_offset, src.len())
    }

    fn copy_h2d_async_tiled(
        &self,
        s: &(),
        src: &NullHostBuffer,
        src_offset: usize,
        dst: &NullBuffer,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        self.copy_h2d_async(s, src, src_offset, dst, dst_offset, tiles.bytes())
    }

    fn copy_d2h_tiled(
        &self,
        _: &(),
        src: &NullBuffer,
        src_offset: usize,
        dst: &mut [u8],
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        tiles.check_len(BackendOp::CopyD2H, dst.len())?;
        Self::check_range(BackendOp::CopyD2H, src.bytes(), src_offset, dst.len())
    }

    fn copy_d2h_async_tiled(
        &self,
        s: &(),
        src: &NullBuffer,
        src_offset: usize,
        dst: &NullHostBuffer,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        self.copy_d2h_async(s, src, src_offset, dst, dst_offset, tiles.bytes())
    }

    fn gemm_batched(
        &self,
        _: &(),
        shape: &GemmShape,
        items: &[GemmItem<'_, NullBuffer>],
    ) -> Result<(), BackendError> {
        validate_batched(shape, items)
    }

    fn geam_batched(
        &self,
        _: &(),
        shape: &GeamShape,
        items: &[GemmItem<'_, NullBuffer>],
    ) -> Result<(), BackendError> {
        validate_geam(shape, items)
    }

    fn gemm_strided_batched(
        &self,
        _: &(),
        shape: &GemmShape,
        batch: &StridedBatch<'_, NullBuffer>,
    ) -> Result<(), BackendError> {
        validate_strided(shape, batch)
    }

    fn gemm_components(
        &self,
        _: &(),
        shape: &GemmShape,
        batch: &ComponentBatch<'_, NullBuffer>,
    ) -> Result<(), BackendError> {
        validate_components(shape, batch)
    }

    fn supports_managed(&self) -> bool {
        true
    }

    fn alloc_managed(&self, bytes: usize) -> Result<NullBuffer, BackendError> {
        self.allocate(bytes, true)
    }

    fn managed_write(
        &self,
        dst: &NullBuffer,
        dst_offset: usize,
        src: &[u8],
    ) -> Result<(), BackendError> {
        Self::require_managed(BackendOp::CopyH2D, dst)?;
        Self::check_range(BackendOp::CopyH2D, dst.bytes(), dst_offset, src.len())
    }

    fn managed_read(
        &self,
        src: &NullBuffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        Self::require_managed(BackendOp::CopyD2H, src)?;
        Self::check_range(BackendOp::CopyD2H, src.bytes(), src_offset, dst.len())
    }

    fn prefetch(&self, _: &(), buffer: &NullBuffer, _: Location) -> Result<(), BackendError> {
        Self::require_managed(BackendOp::Sync, buffer)
    }

    fn advise_read_mostly(&self, buffer: &NullBuffer) -> Result<(), BackendError> {
        Self::require_managed(BackendOp::Alloc, buffer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_memory_and_validates_but_moves_nothing() {
        let b = NullBackend::new(1000);
        let x = b.alloc(600).unwrap();
        assert!(matches!(
            b.alloc(500),
            Err(BackendError::OutOfMemory { free: 400, .. })
        ));
        assert!(b.copy_h2d(&(), &[1u8; 16], &x, 590).is_err());
        let mut out = [7u8; 8];
        b.copy_d2h(&(), &x, 0, &mut out).unwrap();
        assert_eq!(out, [7u8; 8], "a copy to the host writes nothing");
        assert!(
            b.copy_d2h(&(), &x, 596, &mut out).is_err(),
            "but checks its range"
        );
        b.free(x).unwrap();
        assert_eq!(b.mem_info().unwrap().free, 1000);
    }

    #[test]
    fn managed_memory_is_accounted_and_validated() {
        let b = NullBackend::new(1000);
        assert!(b.supports_managed());
        let x = b.alloc_managed(600).unwrap();
        assert!(matches!(
            b.alloc_managed(500),
            Err(BackendError::OutOfMemory { free: 400, .. })
        ));
        b.managed_write(&x, 0, &[1u8; 600]).unwrap();
        assert!(b.managed_write(&x, 590, &[1u8; 16]).is_err());
        let mut out = [7u8; 8];
        b.managed_read(&x, 592, &mut out).unwrap();
        assert_eq!(out, [7u8; 8], "an in-place read writes nothing");
        assert!(b.managed_read(&x, 596, &mut out).is_err());
        b.prefetch(&(), &x, Location::Device).unwrap();
        b.advise_read_mostly(&x).unwrap();
        let plain = b.alloc(100).unwrap();
        assert!(matches!(
            b.managed_write(&plain, 0, &[1u8; 8]),
            Err(BackendError::InvalidArgument { reason, .. }) if reason.contains("not managed")
        ));
        assert!(b.prefetch(&(), &plain, Location::Device).is_err());
        b.free(x).unwrap();
        b.free(plain).unwrap();
        assert_eq!(b.mem_info().unwrap().free, 1000);
    }
}
