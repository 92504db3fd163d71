//! The host reference backend: "device" memory is host memory counted against a hard byte
//! budget, and work runs asynchronously on one worker thread per stream.
//!
//! It exists so that everything above the [`Backend`] trait runs and is tested on a machine
//! with no GPU, and it is deliberately strict, so that a mistake in the runtime shows up here
//! rather than only on a GPU:
//!
//! * an allocation beyond the budget fails with [`BackendError::OutOfMemory`], as on a GPU;
//! * work is queued and executed later by the stream's worker, so a missing event dependency
//!   gives a wrong result (or a [`BackendError::BufferInUse`] on free) instead of passing by
//!   luck;
//! * new allocations are filled with NaN (unless [`HostBackend::with_poison`] turns it off), so
//!   reading memory that was never written poisons the result instead of reading zeros;
//! * bounds, leading dimensions and output aliasing are checked on every call;
//! * managed memory ([`Backend::alloc_managed`]) is an allocation like any other, which the
//!   host reads and writes in place only once no queued work uses it (see [`managed`]).
//!
//! GEMM runs through faer (`faer::linalg::matmul::matmul`), in parallel on rayon's pool by
//! default ([`HostBackend::with_gemm_threads`]): a batch of at least as many items as threads,
//! or of small products, spreads its items over the threads (each product sequential);
//! otherwise the items run in turn, each product on all the threads.
//!
//! Data races are impossible by construction: every buffer sits behind a lock that a job takes
//! while it runs, so a missing dependency shows up as a wrong order of execution, never as
//! undefined behaviour.

mod copies;
mod event;
mod gemm;
pub mod managed;
mod memory;
mod stream;
mod timing;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

use faer::Par;
use num_complex::Complex64;

use memhc_backend::components::{ComponentBatch, validate_components};
use memhc_backend::gemm::{
    GeamShape, GemmItem, GemmShape, StridedBatch, validate_batched, validate_geam, validate_strided,
};
use memhc_backend::tiles::Tiles;
use memhc_backend::timeline::{WorkKind, WorkSpan};
use memhc_backend::{Backend, BackendError, BackendOp, ELEMENT_BYTES, Location, MemInfo};
use memhc_backend::{check_range, ledger::Ledger};

pub use event::HostEvent;
pub use memory::{HostBuffer, HostPinned};
pub use stream::HostStream;

use memory::Cell;

/// The CPU reference backend. See the [module documentation](self).
#[derive(Debug)]
pub struct HostBackend {
    ledger: Arc<Ledger>,
    next_handle: AtomicU64,
    streams: Mutex<Vec<Weak<stream::StreamState>>>,
    par: Par,
    poison: bool,
    gate: Arc<stream::Gate>,
    /// The number the next stream gets (in timelines).
    next_stream: AtomicU64,
    timing: Arc<timing::Timing>,
}

/// While this guard lives, no stream of the backend starts another job (see
/// [`HostBackend::pause`]). Dropping it, from any thread, lets them go on.
#[derive(Debug)]
#[must_use = "the device resumes as soon as the guard is dropped"]
pub struct Pause(Arc<stream::Gate>);

impl Drop for Pause {
    fn drop(&mut self) {
        self.0.open();
    }
}

impl HostBackend {
    /// A backend whose device holds `capacity` bytes, GEMM on all of rayon's threads, new
    /// allocations filled with NaN.
    pub fn new(capacity: usize) -> Self {
        HostBackend {
            ledger: Ledger::new(capacity),
            // Handles look like aligned device addresses; 0 is never one.
            next_handle: AtomicU64::new(0x1_0000),
            streams: Mutex::new(Vec::new()),
            par: Par::rayon(0),
            poison: true,
            gate: Arc::default(),
            next_stream: AtomicU64::new(0),
            timing: Arc::default(),
        }
    }

    /// Threads per batched GEMM: 1 runs every product sequentially on its stream's worker, 0
    /// uses all of rayon's threads (spread over the items of the batch, or inside each product:
    /// see the [module documentation](self)).
    pub fn with_gemm_threads(mut self, threads: usize) -> Self {
        self.par = if threads == 1 {
            Par::Seq
        } else {
            Par::rayon(threads)
        };
        self
    }

    /// Whether new allocations are filled with NaN (the default) or zeros.
    pub fn with_poison(mut self, poison: bool) -> Self {
        self.poison = poison;
        self
    }

    /// Freezes the device: no stream starts another job until the returned guard is dropped.
    /// Calls keep enqueueing, so everything queued meanwhile is certainly in flight. Tests use
    /// it to check that memory in use by queued work is never freed, reused or evicted early;
    /// a host call that must wait for the device blocks until the guard is dropped (by another
    /// thread).
    pub fn pause(&self) -> Pause {
        self.gate.close();
        Pause(Arc::clone(&self.gate))
    }

    /// The device capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.ledger.capacity()
    }

    /// Bytes currently allocated.
    pub fn used(&self) -> usize {
        self.ledger.used()
    }

    /// A new allocation of `bytes` against the capacity, filled with NaN (or zeros).
    fn allocate(&self, bytes: usize, managed: bool) -> Result<HostBuffer, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(
                BackendOp::Alloc,
                "zero-byte allocation",
            ));
        }
        let reservation = self.ledger.take(bytes)?;
        let fill = if self.poison {
            Complex64::new(f64::NAN, f64::NAN)
        } else {
            Complex64::new(0.0, 0.0)
        };
        let data = vec![fill; bytes.div_ceil(ELEMENT_BYTES)];
        let handle = self.next_handle.fetch_add(
            (bytes as u64).next_multiple_of(256).max(256),
            Ordering::Relaxed,
        );
        Ok(HostBuffer {
            handle,
            reservation,
            cell: Arc::new(Cell {
                data: RwLock::new(data),
                pending: AtomicUsize::new(0),
            }),
            managed,
        })
    }

    /// Queues `job`, work of `kind`, on `stream`, counting it as pending on `cells` until it
    /// finishes; with timing on, the worker records when it starts and ends.
    fn submit(
        &self,
        stream: &HostStream,
        kind: WorkKind,
        cells: Vec<Arc<Cell>>,
        job: impl FnOnce(PendingGuard) -> Result<(), BackendError> + Send + 'static,
    ) -> Result<(), BackendError> {
        for c in &cells {
            c.pending.fetch_add(1, Ordering::AcqRel);
        }
        // The guard travels with the job: it releases the counts when the job has run, or
        // when the job is dropped unrun because the stream has stopped.
        // The job may drop it earlier, before it signals completion to a waiting caller.
        let guard = PendingGuard(cells);
        let job = Box::new(move || job(guard));
        match self.timing.is_on() {
            true => stream.submit(timing::Timing::timed(&self.timing, stream.id, kind, job)),
            false => stream.submit(job),
        }
    }
}

impl HostBackend {
    /// Queues a validated batch of GEMM or GEAM items.
    fn submit_batch(
        &self,
        stream: &HostStream,
        kernel: gemm::Kernel,
        items: &[GemmItem<'_, HostBuffer>],
    ) -> Result<(), BackendError> {
        let batch = gemm::Batch::gather(kernel, items, self.par);
        let cells = batch.buffers.iter().map(|(c, _)| Arc::clone(c)).collect();
        self.submit(stream, WorkKind::Compute, cells, move |_done| batch.run())
    }
}

/// Decrements the pending counts of a job's buffers when the job finishes (or is dropped).
struct PendingGuard(Vec<Arc<Cell>>);

impl Drop for PendingGuard {
    fn drop(&mut self) {
        for c in &self.0 {
            c.pending.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

fn check_copy_range(
    op: BackendOp,
    buffer: &HostBuffer,
    offset: usize,
    len: usize,
) -> Result<(), BackendError> {
    check_range(
        op,
        format_args!("buffer {:#x}", buffer.handle),
        buffer.reservation.bytes(),
        offset,
        len,
    )
}

impl Backend for HostBackend {
    type Buffer = HostBuffer;
    type Stream = HostStream;
    type Event = HostEvent;
    type HostBuffer = HostPinned;

    fn name(&self) -> String {
        format!(
            "host reference backend ({} bytes, faer {})",
            self.ledger.capacity(),
            match self.par {
                Par::Seq => "sequential".to_owned(),
                Par::Rayon(n) => format!("on {n} threads"),
            }
        )
    }

    fn mem_info(&self) -> Result<MemInfo, BackendError> {
        Ok(self.ledger.mem_info())
    }

    fn alloc(&self, bytes: usize) -> Result<HostBuffer, BackendError> {
        self.allocate(bytes, false)
    }

    fn free(&self, buffer: HostBuffer) -> Result<(), BackendError> {
        let pending = buffer.cell.pending.load(Ordering::Acquire);
        if pending > 0 {
            // Dropping the handle still returns its bytes; the jobs keep the storage alive.
            return Err(BackendError::BufferInUse {
                handle: buffer.handle,
                pending,
            });
        }
        drop(buffer);
        Ok(())
    }

    fn create_stream(&self) -> Result<HostStream, BackendError> {
        let mut streams = self.streams.lock().unwrap_or_else(|p| p.into_inner());
        streams.retain(|w| w.strong_count() > 0);
        let id = self.next_stream.fetch_add(1, Ordering::Relaxed);
        let s = HostStream::spawn(id, Arc::clone(&self.gate))?;
        streams.push(Arc::downgrade(&s.state));
        Ok(s)
    }

    fn create_event(&self) -> Result<HostEvent, BackendError> {
        Ok(HostEvent::default())
    }

    fn record_event(&self, event: &HostEvent, stream: &HostStream) -> Result<(), BackendError> {
        let generation = event.begin_record();
        let ev = event.clone();
        let result = stream.submit(Box::new(move || {
            ev.complete(generation);
            Ok(())
        }));
        if result.is_err() {
            // Nothing will complete this record: complete it now so that no waiter hangs.
            event.complete(generation);
        }
        result
    }

    fn wait_event(&self, stream: &HostStream, event: &HostEvent) -> Result<(), BackendError> {
        let target = event.target();
        let ev = event.clone();
        stream.submit(Box::new(move || {
            ev.wait_for(target);
            Ok(())
        }))
    }

    fn event_query(&self, event: &HostEvent) -> Result<bool, BackendError> {
        Ok(event.reached(event.target()))
    }

    fn event_synchronize(&self, event: &HostEvent) -> Result<(), BackendError> {
        event.wait_for(event.target());
        Ok(())
    }

    fn stream_synchronize(&self, stream: &HostStream) -> Result<(), BackendError> {
        stream.state.wait_idle()
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        let streams: Vec<_> = self
            .streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        streams.iter().try_for_each(|s| s.wait_idle())
    }

    fn copy_h2d(
        &self,
        stream: &HostStream,
        src: &[u8],
        dst: &HostBuffer,
        dst_offset: usize,
    ) -> Result<(), BackendError> {
        self.write_in(stream, src, dst, dst_offset, None)
    }

    fn alloc_host(&self, bytes: usize) -> Result<HostPinned, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(
                BackendOp::Alloc,
                "zero-byte host allocation",
            ));
        }
        Ok(HostPinned {
            handle: self.next_handle.fetch_add(
                (bytes as u64).next_multiple_of(256).max(256),
                Ordering::Relaxed,
            ),
            bytes,
            cell: Arc::new(Cell {
                data: RwLock::new(vec![
                    Complex64::new(0.0, 0.0);
                    bytes.div_ceil(ELEMENT_BYTES)
                ]),
                pending: AtomicUsize::new(0),
            }),
        })
    }

    fn copy_h2d_async(
        &self,
        stream: &HostStream,
        src: &HostPinned,
        src_offset: usize,
        dst: &HostBuffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        self.upload(stream, src, src_offset, dst, dst_offset, len, None)
    }

    fn copy_d2h_async(
        &self,
        stream: &HostStream,
        src: &HostBuffer,
        src_offset: usize,
        dst: &HostPinned,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        self.download(stream, src, src_offset, dst, dst_offset, len, None)
    }

    fn copy_d2h(
        &self,
        stream: &HostStream,
        src: &HostBuffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        self.read_out(stream, src, src_offset, dst, None)
    }

    fn supports_tiles(&self) -> bool {
        true
    }

    fn copy_h2d_tiled(
        &self,
        stream: &HostStream,
        src: &[u8],
        dst: &HostBuffer,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        self.write_in(stream, src, dst, dst_offset, Some(*tiles))
    }

    fn copy_h2d_async_tiled(
        &self,
        stream: &HostStream,
        src: &HostPinned,
        src_offset: usize,
        dst: &HostBuffer,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        let len = tiles.bytes();
        self.upload(stream, src, src_offset, dst, dst_offset, len, Some(*tiles))
    }

    fn copy_d2h_tiled(
        &self,
        stream: &HostStream,
        src: &HostBuffer,
        src_offset: usize,
        dst: &mut [u8],
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        self.read_out(stream, src, src_offset, dst, Some(*tiles))
    }

    fn copy_d2h_async_tiled(
        &self,
        stream: &HostStream,
        src: &HostBuffer,
        src_offset: usize,
        dst: &HostPinned,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        let len = tiles.bytes();
        self.download(stream, src, src_offset, dst, dst_offset, len, Some(*tiles))
    }

    fn gemm_batched(
        &self,
        stream: &HostStream,
        shape: &GemmShape,
        items: &[GemmItem<'_, HostBuffer>],
    ) -> Result<(), BackendError> {
        validate_batched(shape, items)?;
        if shape.is_empty() || items.is_empty() {
            return Ok(());
        }
        self.submit_batch(stream, gemm::Kernel::Gemm(*shape), items)
    }

    fn geam_batched(
        &self,
        stream: &HostStream,
        shape: &GeamShape,
        items: &[GemmItem<'_, HostBuffer>],
    ) -> Result<(), BackendError> {
        validate_geam(shape, items)?;
        if shape.m == 0 || shape.n == 0 || items.is_empty() {
            return Ok(());
        }
        self.submit_batch(stream, gemm::Kernel::Geam(*shape), items)
    }

    fn gemm_strided_batched(
        &self,
        stream: &HostStream,
        shape: &GemmShape,
        batch: &StridedBatch<'_, HostBuffer>,
    ) -> Result<(), BackendError> {
        validate_strided(shape, batch)?;
        let items: Vec<_> = (0..batch.count).map(|i| batch.item(i)).collect();
        self.gemm_batched(stream, shape, &items)
    }

    /// Checked once by component ([`validate_components`]), then queued as the batch's items.
    fn gemm_components(
        &self,
        stream: &HostStream,
        shape: &GemmShape,
        batch: &ComponentBatch<'_, HostBuffer>,
    ) -> Result<(), BackendError> {
        validate_components(shape, batch)?;
        if shape.is_empty() || batch.table.is_empty() {
            return Ok(());
        }
        let items: Vec<_> = batch.items().collect();
        self.submit_batch(stream, gemm::Kernel::Gemm(*shape), &items)
    }

    /// Host memory is managed memory already: true.
    fn supports_managed(&self) -> bool {
        true
    }

    /// An allocation like [`Backend::alloc`] (same ledger, same poison), marked managed.
    fn alloc_managed(&self, bytes: usize) -> Result<HostBuffer, BackendError> {
        self.allocate(bytes, true)
    }

    /// Writes in place; refuses a buffer that is not managed, or that queued work still uses.
    fn managed_write(
        &self,
        dst: &HostBuffer,
        dst_offset: usize,
        src: &[u8],
    ) -> Result<(), BackendError> {
        managed::write(dst, dst_offset, src)
    }

    /// Reads in place; refuses a buffer that is not managed, or that queued work still uses.
    fn managed_read(
        &self,
        src: &HostBuffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        managed::read(src, src_offset, dst)
    }

    /// Checks that the buffer is managed; there is nowhere to migrate it to.
    fn prefetch(
        &self,
        _stream: &HostStream,
        buffer: &HostBuffer,
        _to: Location,
    ) -> Result<(), BackendError> {
        managed::require(BackendOp::Sync, buffer)
    }

    fn set_timing(&self, on: bool) -> bool {
        self.timing.set(on);
        true
    }

    fn take_timeline(&self) -> Vec<WorkSpan> {
        self.timing.take()
    }

    fn stream_number(&self, stream: &HostStream) -> Option<u64> {
        Some(stream.id)
    }

    fn timing_clock_ns(&self) -> Option<u64> {
        Some(self.timing.now())
    }

    /// Checks that the buffer is managed; host memory has one copy, read by everyone.
    fn advise_read_mostly(&self, buffer: &HostBuffer) -> Result<(), BackendError> {
        managed::require(BackendOp::Alloc, buffer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memhc_backend::HostMemory;

    #[test]
    fn budget_is_enforced_and_returned() {
        let b = HostBackend::new(1000);
        let x = b.alloc(600).unwrap();
        assert_eq!(b.used(), 600);
        assert!(matches!(
            b.alloc(500),
            Err(BackendError::OutOfMemory {
                requested: 500,
                free: 400
            })
        ));
        b.free(x).unwrap();
        assert_eq!(b.used(), 0);
        let y = b.alloc(1000).unwrap();
        drop(y); // dropping without free still returns the bytes
        assert_eq!(b.mem_info().unwrap().free, 1000);
    }

    #[test]
    fn new_memory_is_poisoned() {
        let b = HostBackend::new(1 << 10);
        let s = b.create_stream().unwrap();
        let x = b.alloc(32).unwrap();
        let mut out = [Complex64::new(0.0, 0.0); 2];
        b.copy_d2h(&s, &x, 0, memhc_backend::as_bytes_mut(&mut out))
            .unwrap();
        assert!(out.iter().all(|z| z.re.is_nan() && z.im.is_nan()));
    }

    #[test]
    fn reading_host_memory_before_the_copy_completes_is_detected() {
        let b = HostBackend::new(1 << 20);
        let s = b.create_stream().unwrap();
        let x = b.alloc(64).unwrap();
        let host = b.alloc_host(64).unwrap();
        let pause = b.pause();
        b.copy_d2h_async(&s, &x, 0, &host, 0, 64).unwrap();
        assert!(matches!(
            host.read(0, &mut [0u8; 64]),
            Err(BackendError::BufferInUse { pending: 1, .. })
        ));
        drop(pause);
        b.stream_synchronize(&s).unwrap();
        host.read(0, &mut [0u8; 64]).unwrap();
    }

    /// A batch of small products spread over threads gives exactly what one thread gives,
    /// with outputs interleaved with inputs in one buffer (copied out first) and in another,
    /// in any item order, and with `beta` accumulation.
    #[test]
    fn items_in_parallel_match_items_in_turn_exactly() {
        use memhc_backend::gemm::DeviceRef;
        let (m, n, k) = (5, 3, 4);
        let block = 32; // elements per slot: room for A (m k), B (k n) or C (m n)
        let slots = 24;
        let init: Vec<Complex64> = (0..block * slots)
            .map(|i| Complex64::new((i % 7) as f64 - 3.0, (i % 5) as f64 * 0.5))
            .collect();
        let run = |threads: usize| {
            let b = HostBackend::new(1 << 20).with_gemm_threads(threads);
            let s = b.create_stream().unwrap();
            let (x, y) = (
                b.alloc(block * slots * 16).unwrap(),
                b.alloc(block * slots * 16).unwrap(),
            );
            b.copy_h2d(&s, memhc_backend::as_bytes(&init), &x, 0)
                .unwrap();
            b.copy_h2d(&s, memhc_backend::as_bytes(&init), &y, 0)
                .unwrap();
            // Item i reads slots 3i and 3i + 1 of x; writes slot 3i + 2 of x (even i) or of y.
            let items: Vec<_> = (0..8)
                .rev()
                .map(|i| GemmItem {
                    a: DeviceRef::new(&x, 3 * i * block),
                    b: DeviceRef::new(&x, (3 * i + 1) * block),
                    c: DeviceRef::new(if i % 2 == 0 { &x } else { &y }, (3 * i + 2) * block),
                })
                .collect();
            let shape = GemmShape {
                beta: Complex64::new(0.5, -1.0),
                ..GemmShape::dense(m, n, k)
            };
            b.gemm_batched(&s, &shape, &items).unwrap();
            let mut out = vec![Complex64::new(0.0, 0.0); 2 * block * slots];
            let (first, second) = out.split_at_mut(block * slots);
            b.copy_d2h(&s, &x, 0, memhc_backend::as_bytes_mut(first))
                .unwrap();
            b.copy_d2h(&s, &y, 0, memhc_backend::as_bytes_mut(second))
                .unwrap();
            out
        };
        let one = run(1);
        assert_ne!(one[..block * slots], init[..], "the batch wrote something");
        for threads in [2, 3, 8] {
            assert_eq!(run(threads), one, "{threads} threads");
        }
    }

    #[test]
    fn items_run_in_parallel_when_many_or_small() {
        let batch = |m: usize, items: usize, threads: usize| gemm::Batch {
            kernel: gemm::Kernel::Gemm(GemmShape::dense(m, m, m)),
            buffers: Vec::new(),
            items: vec![
                gemm::Item {
                    a: gemm::Operand {
                        buffer: 0,
                        offset: 0
                    },
                    b: gemm::Operand {
                        buffer: 0,
                        offset: 0
                    },
                    c: gemm::Operand {
                        buffer: 0,
                        offset: 0
                    },
                };
                items
            ],
            par: if threads == 1 {
                Par::Seq
            } else {
                Par::rayon(threads)
            },
        };
        assert_eq!(batch(32, 64, 2).items_in_parallel(), Some(2));
        assert_eq!(
            batch(512, 64, 2).items_in_parallel(),
            Some(2),
            "as many items as threads"
        );
        assert_eq!(
            batch(64, 4, 16).items_in_parallel(),
            Some(16),
            "small products"
        );
        assert_eq!(
            batch(512, 4, 16).items_in_parallel(),
            None,
            "few large products"
        );
        assert_eq!(batch(32, 64, 1).items_in_parallel(), None, "one thread");
        assert_eq!(batch(32, 1, 4).items_in_parallel(), None, "one item");
        // A meson contraction's layer at N = 2 or 8 (16 products): less work in all than a
        // fork and join costs, so it runs on the worker, each product sequential.
        for n in [2, 8] {
            let tiny = batch(n, 16, 2);
            assert_eq!(tiny.items_in_parallel(), None, "N = {n}");
            assert!(matches!(tiny.par_per_item(), Par::Seq), "N = {n}");
        }
        assert_eq!(batch(16, 16, 2).items_in_parallel(), Some(2), "N = 16");
        assert!(matches!(batch(512, 4, 16).par_per_item(), Par::Rayon(_)));
    }

    #[test]
    fn freeing_a_buffer_in_use_is_detected() {
        let b = HostBackend::new(1 << 20);
        let s = b.create_stream().unwrap();
        let x = b.alloc(64).unwrap();
        let pause = b.pause();
        b.copy_h2d(&s, &[0u8; 64], &x, 0).unwrap();
        let err = b.free(x).unwrap_err();
        assert!(matches!(err, BackendError::BufferInUse { pending: 1, .. }));
        drop(pause);
        b.synchronize().unwrap();
        assert_eq!(b.used(), 0, "the refused free still returned the bytes");
    }
}
