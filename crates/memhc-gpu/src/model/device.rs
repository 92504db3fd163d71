//! [`ModelDevice`]: the [`DeviceApi`] of a device that holds no data and takes modelled time.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use memhc_backend::{BackendError, BackendOp, MemInfo, check_range};

use super::clock::{Clocks, Engine, ModelReport};
use super::params::ModelParams;
use memhc_backend::zeroed::LazyZeroed;

use crate::api::{
    BatchedGemm, DeviceAllocation, DeviceApi, Geam, PinnedAllocation, PitchedCopy, StridedGemm,
    Unregistered,
};

/// The bytes of a slice of words, in place.
fn bytes_of_mut(words: &mut [u64]) -> &mut [u8] {
    bytemuck::cast_slice_mut(words)
}

/// The clocks of a [`ModelDevice`], shared: kept by whoever wants the model's report after the
/// backend that owns the device is gone.
#[derive(Clone, Debug)]
pub struct ModelClock(Arc<Mutex<Clocks>>);

impl ModelClock {
    fn lock(&self) -> MutexGuard<'_, Clocks> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The modelled makespan and floor so far ([`Clocks::report`]).
    pub fn report(&self) -> ModelReport {
        self.lock().report()
    }

    /// The host's clock now, seconds.
    pub fn host_s(&self) -> f64 {
        self.lock().host()
    }

    /// The host does `seconds` of work of its own (nothing the device sees), e.g. freeing the
    /// host copy of a node.
    pub fn host_work(&self, seconds: f64) {
        self.lock().host_work(seconds);
    }
}

/// A device that holds no data: memory is an address range, copies and GEMMs validate their
/// arguments and take the time [`ModelParams`] gives them on virtual clocks
/// ([`Clocks`]). Under [`GpuBackend`](crate::GpuBackend) it runs the
/// GPU backend's own code (staging in pieces, fences, pointer tables, timing), so the model
/// sees exactly the calls a GPU would.
#[derive(Debug)]
pub struct ModelDevice {
    clock: ModelClock,
    name: String,
    next_address: AtomicU64,
    allocated: Arc<AtomicUsize>,
}

impl ModelDevice {
    /// A modelled device under `params` (checked: [`ModelParams::validate`]).
    pub fn new(params: ModelParams) -> Result<Self, BackendError> {
        params.validate()?;
        Ok(ModelDevice {
            clock: ModelClock(Arc::new(Mutex::new(Clocks::new(params)))),
            name: "NVIDIA H100 80GB HBM3 (modelled)".into(),
            next_address: AtomicU64::new(0x7f00_0000_0000),
            allocated: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// The device's clocks, to read the report from after the run.
    pub fn clock(&self) -> ModelClock {
        self.clock.clone()
    }

    fn clocks(&self) -> MutexGuard<'_, Clocks> {
        self.clock.lock()
    }

    fn address(&self, bytes: usize) -> u64 {
        self.next_address
            .fetch_add((bytes as u64).next_multiple_of(512), Ordering::Relaxed)
    }
}

/// Device memory of the model: an address and a size.
#[derive(Debug)]
pub struct ModelMemory {
    bytes: usize,
    address: u64,
    allocated: Arc<AtomicUsize>,
}

impl DeviceAllocation for ModelMemory {
    fn bytes(&self) -> usize {
        self.bytes
    }

    fn address(&self) -> u64 {
        self.address
    }

    fn is_managed(&self) -> bool {
        false
    }
}

impl Drop for ModelMemory {
    fn drop(&mut self) {
        self.allocated.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// Page-locked memory of the model: a size. Filling it or emptying it through the backend's
/// staging costs the host the staging rates of [`ModelParams`]; no copy moves a byte. The host
/// may fill it in place (a node's values generated into it: host memory, made on first use,
/// that costs no modelled time, as generating the values costs none). Registered caller
/// memory ([`DeviceApi::host_register`]) keeps the caller's vector.
#[derive(Debug)]
pub struct ModelPinned {
    bytes: usize,
    clock: ModelClock,
    storage: Storage,
}

/// Where a [`ModelPinned`]'s bytes are, when the host asks for them.
#[derive(Debug)]
enum Storage {
    /// Allocated by the model: zeros, made on first use.
    Lazy(LazyZeroed),
    /// The caller's memory, registered.
    Registered(Vec<u64>),
}

impl PinnedAllocation for ModelPinned {
    fn bytes(&self) -> usize {
        self.bytes
    }

    fn as_mut_slice(&mut self) -> Result<&mut [u8], BackendError> {
        match &mut self.storage {
            Storage::Lazy(l) => l.get_mut(),
            Storage::Registered(v) => Ok(bytes_of_mut(v)),
        }
    }

    fn write(&mut self, offset: usize, src: &[u8]) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyH2D,
            "page-locked buffer",
            self.bytes,
            offset,
            src.len(),
        )?;
        let mut c = self.clock.lock();
        let seconds = c.params().staging_s(src.len(), true);
        c.host_staging(src.len(), seconds);
        Ok(())
    }

    fn read(&self, offset: usize, dst: &mut [u8]) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyD2H,
            "page-locked buffer",
            self.bytes,
            offset,
            dst.len(),
        )?;
        let mut c = self.clock.lock();
        let seconds = c.params().staging_s(dst.len(), false);
        c.host_staging(dst.len(), seconds);
        Ok(())
    }
}

/// A stream of the model: its number on the clocks.
#[derive(Debug)]
pub struct ModelStream(usize);

/// An event of the model: the time its most recent record completes (`None`: never recorded).
#[derive(Debug, Default)]
pub struct ModelEvent(Mutex<Option<f64>>);

impl ModelEvent {
    fn time(&self) -> Option<f64> {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set(&self, time: f64) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(time);
    }
}

/// A BLAS handle of the model: the stream it is bound to.
#[derive(Debug)]
pub struct ModelBlas(usize);

impl DeviceApi for ModelDevice {
    const KIND: &'static str = "model";
    /// No: the modelled device holds no data, only clocks.
    const HOLDS_VALUES: bool = false;

    type Memory = ModelMemory;
    type Pinned = ModelPinned;
    type Stream = ModelStream;
    type Event = ModelEvent;
    type Blas = ModelBlas;

    /// Device 0 is the H100 of [`ModelParams::h100`]; there is no other.
    fn open(device: usize, _wait: crate::HostWait) -> Result<Self, BackendError> {
        if device != 0 {
            return Err(BackendError::Unavailable(format!(
                "the modelled device has one GPU (device 0), not device {device}"
            )));
        }
        ModelDevice::new(ModelParams::h100())
    }

    fn device_name(&self) -> &str {
        &self.name
    }

    fn describe(&self, budget: usize) -> String {
        format!(
            "model: {} (budget {:.1} GiB; no data: copies and GEMMs take modelled time)",
            self.name,
            budget as f64 / f64::from(1u32 << 30)
        )
    }

    fn mem_get_info(&self) -> Result<MemInfo, BackendError> {
        let total = self.clocks().params().device_memory;
        let used = self.allocated.load(Ordering::Relaxed);
        Ok(MemInfo {
            free: total.saturating_sub(used),
            total,
        })
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.clocks().synchronize();
        Ok(())
    }

    fn malloc(&self, bytes: usize) -> Result<ModelMemory, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(BackendOp::Alloc, "zero bytes"));
        }
        let mut c = self.clocks();
        let total = c.params().device_memory;
        let used = self.allocated.load(Ordering::Relaxed);
        if bytes > total.saturating_sub(used) {
            return Err(BackendError::OutOfMemory {
                requested: bytes,
                free: total.saturating_sub(used),
            });
        }
        let cost = c.params().malloc_s;
        c.host_work(cost);
        self.allocated.fetch_add(bytes, Ordering::Relaxed);
        Ok(ModelMemory {
            bytes,
            address: self.address(bytes),
            allocated: Arc::clone(&self.allocated),
        })
    }

    fn free(&self, memory: ModelMemory) -> Result<(), BackendError> {
        let mut c = self.clocks();
        if c.params().free_synchronizes {
            let end = c.device_end();
            c.wait_until(end);
        }
        let cost = c.params().free_s;
        c.host_work(cost);
        drop(memory);
        Ok(())
    }

    fn host_alloc(&self, bytes: usize) -> Result<ModelPinned, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(BackendOp::Alloc, "zero bytes"));
        }
        let mut c = self.clocks();
        c.call();
        let seconds = bytes as f64 / c.params().pin_rate;
        c.host_pin(seconds);
        Ok(ModelPinned {
            bytes,
            clock: self.clock.clone(),
            storage: Storage::Lazy(LazyZeroed::new(bytes)),
        })
    }

    /// A piece of a page-locked chunk: a size, costing no modelled time (pinning was paid for
    /// the chunk; cutting it is the runtime's bookkeeping).
    fn host_piece(
        &self,
        chunk: &ModelPinned,
        offset: usize,
        bytes: usize,
    ) -> Result<ModelPinned, BackendError> {
        check_range(
            BackendOp::Alloc,
            "page-locked chunk",
            chunk.bytes,
            offset,
            bytes,
        )?;
        Ok(ModelPinned {
            bytes,
            clock: self.clock.clone(),
            storage: Storage::Lazy(LazyZeroed::new(bytes)),
        })
    }

    /// Costs the host [`ModelParams::register_s`] (counted as pinning in the report) and
    /// keeps the caller's vector; copies from it are then DMAs like any page-locked memory's.
    fn host_register(&self, memory: Vec<u64>) -> Result<ModelPinned, Box<Unregistered>> {
        let bytes = memory.len() * std::mem::size_of::<u64>();
        if bytes == 0 {
            return Err(Box::new(Unregistered {
                memory,
                error: BackendError::invalid(BackendOp::Alloc, "registering zero bytes"),
            }));
        }
        let mut c = self.clocks();
        let seconds = c.params().register_s(bytes);
        c.host_pin(seconds);
        Ok(ModelPinned {
            bytes,
            clock: self.clock.clone(),
            storage: Storage::Registered(memory),
        })
    }

    /// One driver call; the vector back.
    fn host_unregister(&self, pinned: ModelPinned) -> Result<Vec<u64>, BackendError> {
        self.clocks().call();
        match pinned.storage {
            Storage::Registered(v) => Ok(v),
            Storage::Lazy(_) => Err(BackendError::invalid(
                BackendOp::Alloc,
                "unregistering page-locked memory that was allocated, not registered",
            )),
        }
    }

    fn stream_create(&self) -> Result<ModelStream, BackendError> {
        Ok(ModelStream(self.clocks().new_stream()))
    }

    fn stream_synchronize(&self, stream: &ModelStream) -> Result<(), BackendError> {
        self.clocks().synchronize_stream(stream.0);
        Ok(())
    }

    fn event_create(&self) -> Result<ModelEvent, BackendError> {
        Ok(ModelEvent::default())
    }

    fn timing_event_create(&self) -> Result<ModelEvent, BackendError> {
        Ok(ModelEvent::default())
    }

    fn event_elapsed_ms(&self, start: &ModelEvent, end: &ModelEvent) -> Result<f32, BackendError> {
        match (start.time(), end.time()) {
            (Some(s), Some(e)) => Ok(((e - s) * 1e3) as f32),
            _ => Err(BackendError::invalid(
                BackendOp::Sync,
                "elapsed time between events not both recorded",
            )),
        }
    }

    fn event_record(&self, event: &ModelEvent, stream: &ModelStream) -> Result<(), BackendError> {
        event.set(self.clocks().record(stream.0));
        Ok(())
    }

    fn stream_wait_event(
        &self,
        stream: &ModelStream,
        event: &ModelEvent,
    ) -> Result<(), BackendError> {
        let mut c = self.clocks();
        match event.time() {
            Some(t) => c.wait(stream.0, t),
            None => c.call(),
        }
        Ok(())
    }

    fn event_query(&self, event: &ModelEvent) -> Result<bool, BackendError> {
        let mut c = self.clocks();
        Ok(match event.time() {
            Some(t) => c.query(t),
            None => {
                c.call();
                true
            }
        })
    }

    fn event_synchronize(&self, event: &ModelEvent) -> Result<(), BackendError> {
        let mut c = self.clocks();
        match event.time() {
            Some(t) => c.wait_until(t),
            None => c.call(),
        }
        Ok(())
    }

    fn copy_h2d_async(
        &self,
        stream: &ModelStream,
        src: &ModelPinned,
        src_offset: usize,
        dst: &ModelMemory,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyH2D,
            "page-locked buffer",
            src.bytes,
            src_offset,
            len,
        )?;
        check_range(
            BackendOp::CopyH2D,
            "device buffer",
            dst.bytes,
            dst_offset,
            len,
        )?;
        self.clocks().copy(stream.0, Engine::H2D, len);
        Ok(())
    }

    fn copy_d2h_async(
        &self,
        stream: &ModelStream,
        src: &ModelMemory,
        src_offset: usize,
        dst: &ModelPinned,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyD2H,
            "device buffer",
            src.bytes,
            src_offset,
            len,
        )?;
        check_range(
            BackendOp::CopyD2H,
            "page-locked buffer",
            dst.bytes,
            dst_offset,
            len,
        )?;
        self.clocks().copy(stream.0, Engine::D2H, len);
        Ok(())
    }

    /// One copy on the H2D engine, one driver call for the host, 2D or 3D alike: latency plus
    /// the bytes at the engine's bandwidth. A pitched copy of rows of at least a few hundred
    /// bytes is assumed to move at the bandwidth of a plain one (not measured here: a tiled
    /// meson node's rows are `16 N` bytes, 2 KiB at N = 128).
    fn copy_h2d_pitched_async(
        &self,
        stream: &ModelStream,
        src: &ModelPinned,
        dst: &ModelMemory,
        copy: &PitchedCopy,
    ) -> Result<(), BackendError> {
        let ((so, sl), (d_o, dl)) = copy.spans(BackendOp::CopyH2D)?;
        check_range(BackendOp::CopyH2D, "page-locked buffer", src.bytes, so, sl)?;
        check_range(BackendOp::CopyH2D, "device buffer", dst.bytes, d_o, dl)?;
        self.clocks().copy(stream.0, Engine::H2D, copy.bytes());
        Ok(())
    }

    /// As [`ModelDevice::copy_h2d_pitched_async`], on the D2H engine.
    fn copy_d2h_pitched_async(
        &self,
        stream: &ModelStream,
        src: &ModelMemory,
        dst: &ModelPinned,
        copy: &PitchedCopy,
    ) -> Result<(), BackendError> {
        let ((so, sl), (d_o, dl)) = copy.spans(BackendOp::CopyD2H)?;
        check_range(BackendOp::CopyD2H, "device buffer", src.bytes, so, sl)?;
        check_range(BackendOp::CopyD2H, "page-locked buffer", dst.bytes, d_o, dl)?;
        self.clocks().copy(stream.0, Engine::D2H, copy.bytes());
        Ok(())
    }

    fn blas_create(&self, stream: &ModelStream) -> Result<ModelBlas, BackendError> {
        Ok(ModelBlas(stream.0))
    }

    fn gemm_batched(&self, blas: &ModelBlas, call: &BatchedGemm) -> Result<(), BackendError> {
        let s = call.shape();
        self.clocks().gemm(blas.0, s.m, s.n, s.k, call.count());
        Ok(())
    }

    fn gemm_strided_batched(
        &self,
        blas: &ModelBlas,
        call: &StridedGemm,
    ) -> Result<(), BackendError> {
        let s = call.shape();
        self.clocks().gemm(blas.0, s.m, s.n, s.k, call.count());
        Ok(())
    }

    fn geam(&self, blas: &ModelBlas, call: &Geam) -> Result<(), BackendError> {
        let s = call.shape();
        self.clocks().geam(blas.0, s.m, s.n, call.items().len());
        Ok(())
    }

    fn supports_gauss(&self) -> bool {
        true
    }

    /// Timed as the standard product of the same shape: the three-product GEMM's rate has not
    /// been measured on a GPU, so the model assumes no gain.
    fn gemm_gauss(&self, blas: &ModelBlas, call: &StridedGemm) -> Result<(), BackendError> {
        self.gemm_strided_batched(blas, call)
    }
}
