//! [`GpuBackend`]: the [`Backend`] trait, once, over any [`DeviceApi`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use memhc_backend::components::{ComponentBatch, validate_components};
use memhc_backend::gemm::{
    GeamShape, GemmItem, GemmShape, StridedBatch, validate_batched, validate_geam, validate_strided,
};
use memhc_backend::ledger::Ledger;
use memhc_backend::tiles::Tiles;
use memhc_backend::timeline::{WorkKind, WorkSpan};
use memhc_backend::{Backend, BackendError, BackendOp, DeviceMemory};
use memhc_backend::{Location, MemInfo, not_managed};

use crate::api::{BatchedGemm, DeviceAllocation, DeviceApi, Geam, PinnedAllocation, StridedGemm};
use crate::copy_stats::{CopyCounters, CopyStats};
use crate::event::{Fence, GpuEvent};
use crate::memory::{GpuBuffer, GpuHostBuffer};
use crate::options::{ComplexGemm, GpuOptions};
use crate::pointer_table;
use crate::stream::GpuStream;
use crate::timing::{Mark, Timing};

mod direct;
mod registered;
mod staged;
mod tiled;
pub use registered::Adopted;
use staged::Source;

/// The [`Backend`] on one GPU, over the device API `D`: device memory under a byte budget,
/// copies staged per stream through page-locked memory in bounded pieces, pointer-array,
/// strided and GEAM batches through the BLAS library with one handle per stream, and managed
/// memory where `D` has it. See the [crate documentation](crate).
#[derive(Debug)]
pub struct GpuBackend<D: DeviceApi> {
    api: Arc<D>,
    ledger: Arc<Ledger>,
    options: GpuOptions,
    name: String,
    timing: Timing<D>,
    next_stream: AtomicU64,
    copies: Arc<CopyCounters>,
}

impl<D: DeviceApi> GpuBackend<D> {
    /// Opens device 0 with the default budget. Without a driver, a device or the BLAS library
    /// this returns [`BackendError::Unavailable`] with a one-line reason; it never panics.
    pub fn new() -> Result<Self, BackendError> {
        Self::with_options(GpuOptions::default())
    }

    /// Opens device 0 with a budget of `bytes` (at most the device's free memory).
    pub fn with_budget(bytes: usize) -> Result<Self, BackendError> {
        Self::with_options(GpuOptions::default().budget(bytes))
    }

    /// Opens the device `options` names ([`DeviceApi::open`]), then the backend on it
    /// ([`GpuBackend::on`]).
    pub fn with_options(options: GpuOptions) -> Result<Self, BackendError> {
        options.validate()?;
        Self::on(D::open(options.device, options.host_wait)?, options)
    }

    /// The backend on an opened device: the budget is resolved against the device's free
    /// memory ([`GpuOptions::resolve_budget`]), and one stream with its BLAS handle is created
    /// and dropped, so that a BLAS library that cannot start on this device is an error here
    /// rather than in the first GEMM.
    pub fn on(api: D, options: GpuOptions) -> Result<Self, BackendError> {
        options.validate()?;
        if options.complex_gemm == ComplexGemm::Gauss && !api.supports_gauss() {
            return Err(BackendError::Unavailable(format!(
                "{} device {}: complex GEMM `gauss` asked for (MEMHC_GPU_GEMM), but its BLAS \
                 has no product of three real products",
                D::KIND,
                options.device
            )));
        }
        let api = Arc::new(api);
        let free = api.mem_get_info()?.free;
        let budget = options.resolve_budget(D::KIND, free)?;
        drop(GpuStream::new(&api, &options.staging, 0)?);
        let name = api.describe(budget);
        Ok(GpuBackend {
            api,
            ledger: Ledger::new(budget),
            options,
            name,
            timing: Timing::default(),
            next_stream: AtomicU64::new(0),
            copies: Arc::default(),
        })
    }

    /// The device API, for what a backend reports beyond the [`Backend`] trait.
    pub fn api(&self) -> &D {
        &self.api
    }

    /// The device's name, as the driver reports it.
    pub fn device_name(&self) -> &str {
        self.api.device_name()
    }

    /// The options the backend was opened with.
    pub fn options(&self) -> &GpuOptions {
        &self.options
    }

    /// The budget in bytes.
    pub fn budget(&self) -> usize {
        self.ledger.capacity()
    }

    /// Bytes allocated now (device and managed; pointer tables and the BLAS library's
    /// workspace live in the margin and are not counted).
    pub fn used(&self) -> usize {
        self.ledger.used()
    }

    /// The bytes copied so far, staged through the host or in one DMA, and the registrations
    /// of caller memory ([`CopyStats`]).
    pub fn copy_stats(&self) -> CopyStats {
        self.copies.snapshot()
    }

    /// The device's own free and total memory (whereas [`Backend::mem_info`] reports the
    /// budget).
    pub fn device_mem_info(&self) -> Result<MemInfo, BackendError> {
        self.api.mem_get_info()
    }

    /// With timing on, records the start of a piece of work on `stream`.
    fn begin(&self, stream: &GpuStream<D>) -> Result<Option<Mark<D>>, BackendError> {
        self.timing.begin(&self.api, stream.raw())
    }

    /// With timing on, records the end of the work `mark` began, as work of `kind`, once
    /// `enqueued` succeeded.
    fn end<T>(
        &self,
        stream: &GpuStream<D>,
        kind: WorkKind,
        mark: Option<Mark<D>>,
        enqueued: Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        self.timing.end(
            &self.api,
            stream.raw(),
            stream.number(),
            kind,
            mark,
            enqueued,
        )
    }

    /// Runs `enqueue`, timed as work of `kind` on `stream` while timing is on.
    fn timed<T>(
        &self,
        stream: &GpuStream<D>,
        kind: WorkKind,
        enqueue: impl FnOnce() -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        let mark = self.begin(stream)?;
        self.end(stream, kind, mark, enqueue())
    }

    /// Records a fence on `stream`.
    fn fence(&self, stream: &GpuStream<D>) -> Result<Fence<D>, BackendError> {
        Fence::record(&self.api, stream.raw())
    }

    /// Uploads a pointer table ([`pointer_table`]) through the stream's staging into the
    /// stream's device table, in stream order before one pointer-array batched GEMM of
    /// `table.len() / 3` items.
    fn pointer_batch(
        &self,
        stream: &GpuStream<D>,
        shape: &GemmShape,
        table: &[u64],
    ) -> Result<(), BackendError> {
        let bytes: Vec<u8> = table.iter().flat_map(|p| p.to_ne_bytes()).collect();
        stream.with_gear(|gear| {
            let device_table = stream.table(gear, bytes.len())?;
            // The table's upload is ordered before the GEMM on the same stream, and the next
            // upload into it after the GEMM.
            self.upload(stream, &bytes, device_table, 0)?;
            let call = BatchedGemm::new(*shape, device_table.address(), table.len() / 3);
            self.timed(stream, WorkKind::Compute, || {
                self.api.gemm_batched(&gear.blas, &call)
            })
        })
    }

    /// The managed-memory calls' first check: the device has managed memory.
    fn managed_supported(&self) -> Result<(), BackendError> {
        self.api.managed_memory().map_err(|why| {
            BackendError::Unsupported(format!(
                "{} has no managed (unified) memory: {why}",
                self.name
            ))
        })
    }

    /// The managed-memory calls' second check: `buffer` is managed memory.
    fn managed_only(&self, buffer: &GpuBuffer<D>, op: BackendOp) -> Result<(), BackendError> {
        self.managed_supported()?;
        if buffer.is_managed() {
            Ok(())
        } else {
            Err(not_managed(op, buffer.handle()))
        }
    }
}

impl<D: DeviceApi> Backend for GpuBackend<D> {
    type Buffer = GpuBuffer<D>;
    type Stream = GpuStream<D>;
    type Event = GpuEvent<D>;
    type HostBuffer = GpuHostBuffer<D>;

    fn name(&self) -> String {
        self.name.clone()
    }

    /// The budget, as the runtime uses it: `free` is the budget less what this backend has
    /// allocated, `total` the budget. [`GpuBackend::device_mem_info`] gives the device's own.
    fn mem_info(&self) -> Result<MemInfo, BackendError> {
        Ok(self.ledger.mem_info())
    }

    fn alloc(&self, bytes: usize) -> Result<GpuBuffer<D>, BackendError> {
        GpuBuffer::alloc(&self.ledger, bytes, |n| self.api.malloc(n))
    }

    fn free(&self, buffer: GpuBuffer<D>) -> Result<(), BackendError> {
        buffer.free(&self.api)
    }

    fn create_stream(&self) -> Result<GpuStream<D>, BackendError> {
        let number = self.next_stream.fetch_add(1, Ordering::Relaxed);
        GpuStream::new(&self.api, &self.options.staging, number)
    }

    fn create_event(&self) -> Result<GpuEvent<D>, BackendError> {
        Ok(GpuEvent::new(self.api.event_create()?))
    }

    fn record_event(&self, event: &GpuEvent<D>, stream: &GpuStream<D>) -> Result<(), BackendError> {
        self.api.event_record(event.raw(), stream.raw())?;
        event.mark_recorded();
        Ok(())
    }

    fn wait_event(&self, stream: &GpuStream<D>, event: &GpuEvent<D>) -> Result<(), BackendError> {
        match event.recorded() {
            // Never recorded: complete, nothing to wait for.
            None => Ok(()),
            Some(raw) => self.api.stream_wait_event(stream.raw(), raw),
        }
    }

    fn event_query(&self, event: &GpuEvent<D>) -> Result<bool, BackendError> {
        event
            .recorded()
            .map_or(Ok(true), |raw| self.api.event_query(raw))
    }

    fn event_synchronize(&self, event: &GpuEvent<D>) -> Result<(), BackendError> {
        event
            .recorded()
            .map_or(Ok(()), |raw| self.api.event_synchronize(raw))
    }

    fn stream_synchronize(&self, stream: &GpuStream<D>) -> Result<(), BackendError> {
        stream.synchronize()
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.api.synchronize()
    }

    /// Stages `src` through the stream's page-locked buffers in chunks
    /// ([`StagingLimits::chunk`](crate::StagingLimits::chunk)) and enqueues the device copies;
    /// returns once `src` has been read.
    fn copy_h2d(
        &self,
        stream: &GpuStream<D>,
        src: &[u8],
        dst: &GpuBuffer<D>,
        dst_offset: usize,
    ) -> Result<(), BackendError> {
        dst.check_range(BackendOp::CopyH2D, dst_offset, src.len())?;
        if src.is_empty() {
            return Ok(());
        }
        self.timed(stream, WorkKind::CopyH2D, || {
            self.upload(stream, src, dst.memory(), dst_offset)
        })
    }

    fn alloc_host(&self, bytes: usize) -> Result<GpuHostBuffer<D>, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(
                BackendOp::Alloc,
                "zero-byte host allocation",
            ));
        }
        Ok(GpuHostBuffer::new(self.api.host_alloc(bytes)?))
    }

    /// A piece of page-locked `chunk` ([`DeviceApi::host_piece`]), keeping `chunk` alive; the
    /// piece's copies are fenced in the piece, so dropping it waits for them before its range
    /// can be handed out again. `Ok(None)` where the device API cuts no pieces; registered
    /// caller memory and pieces are not cut.
    fn host_piece(
        &self,
        chunk: &Arc<GpuHostBuffer<D>>,
        offset: usize,
        bytes: usize,
    ) -> Result<Option<GpuHostBuffer<D>>, BackendError> {
        if chunk.is_registered() || chunk.is_piece() {
            return Ok(None);
        }
        if bytes == 0 {
            return Err(BackendError::invalid(BackendOp::Alloc, "a zero-byte piece"));
        }
        memhc_backend::check_range(
            BackendOp::Alloc,
            "page-locked chunk",
            chunk.pinned().bytes(),
            offset,
            bytes,
        )?;
        match self.api.host_piece(chunk.pinned(), offset, bytes) {
            Ok(pinned) => Ok(Some(GpuHostBuffer::piece(pinned, chunk))),
            Err(BackendError::Unsupported(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Registers `memory` in place when [`GpuOptions::register`] says it pays for its size and
    /// `copies` ([`GpuBackend::adopt_pageable`]); hands it back otherwise, or if the driver
    /// refuses.
    fn adopt_host(&self, memory: Vec<u64>, copies: usize) -> Result<GpuHostBuffer<D>, Vec<u64>> {
        match self.adopt_pageable(memory, copies) {
            Adopted::Registered(buffer) => Ok(buffer),
            Adopted::Pageable { memory, .. } => Err(memory),
        }
    }

    /// [`GpuOptions::register`]'s rule, which [`GpuBackend::adopt_pageable`] applies.
    fn adopts_host(&self, bytes: usize, copies: usize) -> bool {
        self.options.register.registers(bytes, copies)
    }

    /// One DMA from the page-locked buffer: no staging. The buffer keeps the copy's fence, so
    /// the host cannot change or free it while the copy reads it.
    fn copy_h2d_async(
        &self,
        stream: &GpuStream<D>,
        src: &GpuHostBuffer<D>,
        src_offset: usize,
        dst: &GpuBuffer<D>,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        self.h2d_direct(stream, (src, src_offset), (dst, dst_offset), len)
    }

    /// One DMA into the page-locked buffer, fenced as [`GpuBackend::copy_h2d_async`]'s.
    fn copy_d2h_async(
        &self,
        stream: &GpuStream<D>,
        src: &GpuBuffer<D>,
        src_offset: usize,
        dst: &GpuHostBuffer<D>,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        self.d2h_direct(stream, (src, src_offset), (dst, dst_offset), len)
    }

    /// Copies through the stream's staging buffers a chunk at a time, pipelined: the copy of
    /// the next chunk is enqueued before the host reads the previous one out.
    fn copy_d2h(
        &self,
        stream: &GpuStream<D>,
        src: &GpuBuffer<D>,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        src.check_range(BackendOp::CopyD2H, src_offset, dst.len())?;
        if dst.is_empty() {
            return Ok(());
        }
        let chunk = self.options.staging.chunk;
        let pieces = dst.chunks_mut(chunk).enumerate();
        let pieces = pieces.map(|(i, piece)| (Source::Plain(src_offset + i * chunk), piece));
        self.download_pieces(stream, src.memory(), pieces)
    }

    fn holds_values(&self) -> bool {
        D::HOLDS_VALUES
    }

    fn supports_tiles(&self) -> bool {
        true
    }

    fn copy_h2d_tiled(
        &self,
        stream: &GpuStream<D>,
        src: &[u8],
        dst: &GpuBuffer<D>,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        self.h2d_tiled(stream, src, dst, dst_offset, tiles)
    }

    fn copy_h2d_async_tiled(
        &self,
        stream: &GpuStream<D>,
        src: &GpuHostBuffer<D>,
        src_offset: usize,
        dst: &GpuBuffer<D>,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        self.h2d_async_tiled(stream, (src, src_offset), (dst, dst_offset), tiles)
    }

    fn copy_d2h_tiled(
        &self,
        stream: &GpuStream<D>,
        src: &GpuBuffer<D>,
        src_offset: usize,
        dst: &mut [u8],
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        self.d2h_tiled(stream, src, src_offset, dst, tiles)
    }

    fn copy_d2h_async_tiled(
        &self,
        stream: &GpuStream<D>,
        src: &GpuBuffer<D>,
        src_offset: usize,
        dst: &GpuHostBuffer<D>,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        self.d2h_async_tiled(stream, (src, src_offset), (dst, dst_offset), tiles)
    }

    /// Checked item by item, then one pointer-array batched GEMM: the pointer table uploaded
    /// through the stream's staging, in stream order before the call.
    fn gemm_batched(
        &self,
        stream: &GpuStream<D>,
        shape: &GemmShape,
        items: &[GemmItem<'_, GpuBuffer<D>>],
    ) -> Result<(), BackendError> {
        validate_batched(shape, items)?;
        if shape.is_empty() || items.is_empty() {
            return Ok(());
        }
        self.pointer_batch(stream, shape, &pointer_table(items.iter().copied()))
    }

    /// Checked once by component ([`validate_components`]), the pointer table built straight
    /// from the strips.
    fn gemm_components(
        &self,
        stream: &GpuStream<D>,
        shape: &GemmShape,
        batch: &ComponentBatch<'_, GpuBuffer<D>>,
    ) -> Result<(), BackendError> {
        validate_components(shape, batch)?;
        if shape.is_empty() || batch.table.is_empty() {
            return Ok(());
        }
        self.pointer_batch(stream, shape, &pointer_table(batch.items()))
    }

    /// One GEAM per item, under one lock of the stream's handle.
    fn geam_batched(
        &self,
        stream: &GpuStream<D>,
        shape: &GeamShape,
        items: &[GemmItem<'_, GpuBuffer<D>>],
    ) -> Result<(), BackendError> {
        validate_geam(shape, items)?;
        if shape.m == 0 || shape.n == 0 || items.is_empty() {
            return Ok(());
        }
        let call = Geam::new(*shape, items);
        stream.with_gear(|gear| {
            self.timed(stream, WorkKind::Compute, || {
                self.api.geam(&gear.blas, &call)
            })
        })
    }

    fn gemm_strided_batched(
        &self,
        stream: &GpuStream<D>,
        shape: &GemmShape,
        batch: &StridedBatch<'_, GpuBuffer<D>>,
    ) -> Result<(), BackendError> {
        validate_strided(shape, batch)?;
        if shape.is_empty() || batch.count == 0 {
            return Ok(());
        }
        let call = StridedGemm::new(*shape, batch);
        // One product (a layered meson contraction on tiled nodes): three real products where
        // the options ask for them.
        let gauss = batch.count == 1 && self.options.complex_gemm == ComplexGemm::Gauss;
        stream.with_gear(|gear| {
            self.timed(stream, WorkKind::Compute, || match gauss {
                true => self.api.gemm_gauss(&gear.blas, &call),
                false => self.api.gemm_strided_batched(&gear.blas, &call),
            })
        })
    }

    fn supports_managed(&self) -> bool {
        self.api.managed_memory().is_ok()
    }

    /// Managed memory counts against the same budget, whose capacity is at most the free
    /// memory the device had when the backend opened: managed memory never oversubscribes the
    /// device; beyond the budget this fails with `OutOfMemory` without asking the driver.
    fn alloc_managed(&self, bytes: usize) -> Result<GpuBuffer<D>, BackendError> {
        self.managed_supported()?;
        GpuBuffer::alloc(&self.ledger, bytes, |n| self.api.malloc_managed(n))
    }

    fn managed_write(
        &self,
        dst: &GpuBuffer<D>,
        dst_offset: usize,
        src: &[u8],
    ) -> Result<(), BackendError> {
        self.managed_only(dst, BackendOp::CopyH2D)?;
        dst.check_range(BackendOp::CopyH2D, dst_offset, src.len())?;
        self.api.managed_write(dst.memory(), dst_offset, src)
    }

    fn managed_read(
        &self,
        src: &GpuBuffer<D>,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        self.managed_only(src, BackendOp::CopyD2H)?;
        src.check_range(BackendOp::CopyD2H, src_offset, dst.len())?;
        self.api.managed_read(src.memory(), src_offset, dst)
    }

    fn prefetch(
        &self,
        stream: &GpuStream<D>,
        buffer: &GpuBuffer<D>,
        to: Location,
    ) -> Result<(), BackendError> {
        self.managed_only(buffer, BackendOp::Sync)?;
        self.api.prefetch(stream.raw(), buffer.memory(), to)
    }

    fn advise_read_mostly(&self, buffer: &GpuBuffer<D>) -> Result<(), BackendError> {
        self.managed_only(buffer, BackendOp::Alloc)?;
        self.api.advise_read_mostly(buffer.memory())
    }

    /// On, the first time: a base timing event recorded on a stream of the backend's own, from
    /// which every span's times are measured. While on, each copy and GEMM or GEAM batch is
    /// bracketed by two timing events on its stream. Returns false if the device cannot make
    /// the base event (timing then stays off).
    fn set_timing(&self, on: bool) -> bool {
        self.timing.set(&self.api, on)
    }

    /// The spans whose end event has completed; the others stay for a later call.
    fn take_timeline(&self) -> Vec<WorkSpan> {
        self.timing.take(&self.api)
    }

    fn stream_number(&self, stream: &GpuStream<D>) -> Option<u64> {
        Some(stream.number())
    }

    /// A timing event recorded now and waited for, against the base; `None` before timing
    /// was first switched on.
    fn timing_clock_ns(&self) -> Option<u64> {
        self.timing.now(&self.api)
    }
}
