//! Statistics as a wrapper around a backend (in the manner of RMM's statistics adaptor):
//! allocations, frees, bytes moved each way, live and peak device bytes, GEMM calls and flops
//! are counted here, at the one place every call passes through, instead of at each call site.
//!
//! Managed memory counts as device memory (an allocation, live and peak bytes), and the host's
//! in-place writes and reads of it count as host-to-device and device-to-host bytes: they are
//! the traffic the driver migrates on the program's behalf.

use std::sync::atomic::{AtomicU64, Ordering};

use super::gemm::{GeamShape, GemmItem, GemmShape, StridedBatch};
use super::{Backend, DeviceMemory, Location, MemInfo};
use crate::error::BackendError;

/// Counts of what went through an [`Instrumented`] backend.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DeviceCounters {
    /// Successful device allocations.
    pub allocations: u64,
    /// Successful frees.
    pub frees: u64,
    /// Bytes currently allocated through the wrapper.
    pub live_bytes: u64,
    /// The most bytes allocated at once.
    pub peak_device_bytes: u64,
    /// Host-to-device copies enqueued.
    pub h2d_copies: u64,
    /// Bytes copied host to device.
    pub h2d_bytes: u64,
    /// Device-to-host copies made (blocking or enqueued).
    pub d2h_copies: u64,
    /// Bytes copied device to host.
    pub d2h_bytes: u64,
    /// Batched GEMM calls (pointer-array or strided).
    pub gemm_calls: u64,
    /// GEMM items (single products) across all calls.
    pub gemm_items: u64,
    /// Floating-point operations of all items: `8 m n k` each.
    pub flops: u64,
    /// Batched matrix-addition calls.
    pub geam_calls: u64,
}

#[derive(Debug, Default)]
struct Atomics {
    allocations: AtomicU64,
    frees: AtomicU64,
    live_bytes: AtomicU64,
    peak_device_bytes: AtomicU64,
    h2d_copies: AtomicU64,
    h2d_bytes: AtomicU64,
    d2h_copies: AtomicU64,
    d2h_bytes: AtomicU64,
    gemm_calls: AtomicU64,
    gemm_items: AtomicU64,
    flops: AtomicU64,
    geam_calls: AtomicU64,
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

/// A backend that counts what passes through it. It implements [`Backend`] itself, with the
/// inner backend's types, and forwards every call.
#[derive(Debug)]
pub struct Instrumented<B> {
    inner: B,
    counts: Atomics,
}

impl<B: Backend> Instrumented<B> {
    /// Wraps `inner` with all counters at zero.
    pub fn new(inner: B) -> Self {
        Instrumented {
            inner,
            counts: Atomics::default(),
        }
    }

    /// The wrapped backend.
    pub fn inner(&self) -> &B {
        &self.inner
    }

    /// Unwraps the backend.
    pub fn into_inner(self) -> B {
        self.inner
    }

    /// A snapshot of the counters.
    pub fn counters(&self) -> DeviceCounters {
        let c = &self.counts;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        DeviceCounters {
            allocations: get(&c.allocations),
            frees: get(&c.frees),
            live_bytes: get(&c.live_bytes),
            peak_device_bytes: get(&c.peak_device_bytes),
            h2d_copies: get(&c.h2d_copies),
            h2d_bytes: get(&c.h2d_bytes),
            d2h_copies: get(&c.d2h_copies),
            d2h_bytes: get(&c.d2h_bytes),
            gemm_calls: get(&c.gemm_calls),
            gemm_items: get(&c.gemm_items),
            flops: get(&c.flops),
            geam_calls: get(&c.geam_calls),
        }
    }

    fn count_alloc(&self, bytes: usize) {
        bump(&self.counts.allocations, 1);
        let live = self
            .counts
            .live_bytes
            .fetch_add(bytes as u64, Ordering::Relaxed)
            + bytes as u64;
        self.counts
            .peak_device_bytes
            .fetch_max(live, Ordering::Relaxed);
    }

    fn count_gemm(&self, shape: &GemmShape, items: usize) {
        bump(&self.counts.gemm_calls, 1);
        bump(&self.counts.gemm_items, items as u64);
        bump(&self.counts.flops, shape.flops() * items as u64);
    }
}

impl<B: Backend> Backend for Instrumented<B> {
    type Buffer = B::Buffer;
    type Stream = B::Stream;
    type Event = B::Event;
    type HostBuffer = B::HostBuffer;

    fn name(&self) -> String {
        self.inner.name()
    }

    fn mem_info(&self) -> Result<MemInfo, BackendError> {
        self.inner.mem_info()
    }

    fn alloc(&self, bytes: usize) -> Result<Self::Buffer, BackendError> {
        let buffer = self.inner.alloc(bytes)?;
        self.count_alloc(bytes);
        Ok(buffer)
    }

    fn free(&self, buffer: Self::Buffer) -> Result<(), BackendError> {
        let bytes = buffer.bytes() as u64;
        let result = self.inner.free(buffer);
        // The buffer is gone either way (the call consumed it), so its bytes are no longer live.
        self.counts.live_bytes.fetch_sub(bytes, Ordering::Relaxed);
        if result.is_ok() {
            bump(&self.counts.frees, 1);
        }
        result
    }

    fn create_stream(&self) -> Result<Self::Stream, BackendError> {
        self.inner.create_stream()
    }

    fn create_event(&self) -> Result<Self::Event, BackendError> {
        self.inner.create_event()
    }

    fn record_event(&self, event: &Self::Event, stream: &Self::Stream) -> Result<(), BackendError> {
        self.inner.record_event(event, stream)
    }

    fn wait_event(&self, stream: &Self::Stream, event: &Self::Event) -> Result<(), BackendError> {
        self.inner.wait_event(stream, event)
    }

    fn event_query(&self, event: &Self::Event) -> Result<bool, BackendError> {
        self.inner.event_query(event)
    }

    fn event_synchronize(&self, event: &Self::Event) -> Result<(), BackendError> {
        self.inner.event_synchronize(event)
    }

    fn stream_synchronize(&self, stream: &Self::Stream) -> Result<(), BackendError> {
        self.inner.stream_synchronize(stream)
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.inner.synchronize()
    }

    fn copy_h2d(
        &self,
        stream: &Self::Stream,
        src: &[u8],
        dst: &Self::Buffer,
        dst_offset: usize,
    ) -> Result<(), BackendError> {
        self.inner.copy_h2d(stream, src, dst, dst_offset)?;
        bump(&self.counts.h2d_copies, 1);
        bump(&self.counts.h2d_bytes, src.len() as u64);
        Ok(())
    }

    fn alloc_host(&self, bytes: usize) -> Result<Self::HostBuffer, BackendError> {
        self.inner.alloc_host(bytes)
    }

    fn copy_d2h_async(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &Self::HostBuffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        self.inner
            .copy_d2h_async(stream, src, src_offset, dst, dst_offset, len)?;
        bump(&self.counts.d2h_copies, 1);
        bump(&self.counts.d2h_bytes, len as u64);
        Ok(())
    }

    fn copy_d2h(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        self.inner.copy_d2h(stream, src, src_offset, dst)?;
        bump(&self.counts.d2h_copies, 1);
        bump(&self.counts.d2h_bytes, dst.len() as u64);
        Ok(())
    }

    fn gemm_batched(
        &self,
        stream: &Self::Stream,
        shape: &GemmShape,
        items: &[GemmItem<'_, Self::Buffer>],
    ) -> Result<(), BackendError> {
        self.inner.gemm_batched(stream, shape, items)?;
        self.count_gemm(shape, items.len());
        Ok(())
    }

    fn geam_batched(
        &self,
        stream: &Self::Stream,
        shape: &GeamShape,
        items: &[GemmItem<'_, Self::Buffer>],
    ) -> Result<(), BackendError> {
        self.inner.geam_batched(stream, shape, items)?;
        bump(&self.counts.geam_calls, 1);
        Ok(())
    }

    fn gemm_strided_batched(
        &self,
        stream: &Self::Stream,
        shape: &GemmShape,
        batch: &StridedBatch<'_, Self::Buffer>,
    ) -> Result<(), BackendError> {
        self.inner.gemm_strided_batched(stream, shape, batch)?;
        self.count_gemm(shape, batch.count);
        Ok(())
    }

    fn supports_managed(&self) -> bool {
        self.inner.supports_managed()
    }

    fn alloc_managed(&self, bytes: usize) -> Result<Self::Buffer, BackendError> {
        let buffer = self.inner.alloc_managed(bytes)?;
        self.count_alloc(bytes);
        Ok(buffer)
    }

    fn managed_write(
        &self,
        dst: &Self::Buffer,
        dst_offset: usize,
        src: &[u8],
    ) -> Result<(), BackendError> {
        self.inner.managed_write(dst, dst_offset, src)?;
        bump(&self.counts.h2d_copies, 1);
        bump(&self.counts.h2d_bytes, src.len() as u64);
        Ok(())
    }

    fn managed_read(
        &self,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        self.inner.managed_read(src, src_offset, dst)?;
        bump(&self.counts.d2h_copies, 1);
        bump(&self.counts.d2h_bytes, dst.len() as u64);
        Ok(())
    }

    fn prefetch(
        &self,
        stream: &Self::Stream,
        buffer: &Self::Buffer,
        to: Location,
    ) -> Result<(), BackendError> {
        self.inner.prefetch(stream, buffer, to)
    }

    fn advise_read_mostly(&self, buffer: &Self::Buffer) -> Result<(), BackendError> {
        self.inner.advise_read_mostly(buffer)
    }
}
