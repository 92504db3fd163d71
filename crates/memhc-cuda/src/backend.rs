//! [`CudaBackend`]: the [`Backend`] trait on one NVIDIA GPU. It composes the owning types of
//! [`crate::memory`], [`crate::stream`] and [`crate::event`] with the checked calls of
//! [`crate::driver`] and [`crate::blas`]; its few `unsafe` blocks are those calls, whose
//! handles the owning types keep alive and whose ranges the validators checked.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::sys::CUdevice_attribute;
use memhc_core::backend::gemm::{
    GeamShape, GemmItem, GemmShape, StridedBatch, validate_batched, validate_geam, validate_strided,
};
use memhc_core::backend::gpu::{
    StagingPool, address, default_budget, loaded_library, pointer_table,
};
use memhc_core::backend::ledger::Ledger;
use memhc_core::backend::{HostMemory, Location, check_range, not_managed};
use memhc_core::{Backend, BackendError, BackendOp, DeviceMemory, MemInfo};

use crate::blas::{Handle, int, long};
use crate::context::Context;
use crate::event::CudaEvent;
use crate::memory::{CudaBuffer, PinnedBuffer};
use crate::stream::CudaStream;
use crate::{driver, probe};

/// Idle page-locked staging memory kept for reuse (more is freed as copies complete).
const STAGING_IDLE_CAP: usize = 1 << 30;

/// How to open the device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CudaOptions {
    /// The device ordinal (0 unless told).
    pub device: usize,
    /// The bytes of device memory the backend may allocate (device and managed together).
    /// `None`: the card's free memory when the backend is created, minus
    /// [`default_margin`](memhc_core::backend::gpu::default_margin). A budget above the free
    /// memory is refused.
    pub budget: Option<usize>,
}

/// What the backend found when it opened the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device ordinal.
    pub ordinal: usize,
    /// The device's name (`"NVIDIA H100 80GB HBM3"`, say).
    pub name: String,
    /// Device memory in all, bytes.
    pub total_bytes: usize,
    /// Free device memory when the backend was created, bytes.
    pub free_bytes: usize,
    /// The driver's CUDA version, `1000 * major + 10 * minor`.
    pub driver_version: i32,
    /// The cuBLAS version, `10000 * major + 100 * minor + patch`.
    pub cublas_version: i32,
    /// The driver library file actually loaded (Linux), else the name cudarc searched.
    pub libcuda: String,
    /// The cuBLAS library file actually loaded (Linux), else the name cudarc searched.
    pub libcublas: String,
    /// Whether the device supports managed memory.
    pub managed_memory: bool,
    /// Whether the host and the device may access managed memory concurrently.
    pub concurrent_managed_access: bool,
}

/// The [`Backend`] on one NVIDIA GPU: CUDA driver API and cuBLAS through cudarc, both loaded
/// at run time. See the [crate documentation](crate).
#[derive(Debug)]
pub struct CudaBackend {
    info: DeviceInfo,
    budget: usize,
    ledger: Arc<Ledger>,
    staging: Mutex<StagingPool<PinnedBuffer, CudaEvent>>,
    ctx: Arc<Context>,
}

fn path_or(found: Option<PathBuf>, searched: &str) -> String {
    found.map_or_else(|| searched.to_owned(), |p| p.display().to_string())
}

fn unavailable(what: &str, e: BackendError) -> BackendError {
    BackendError::Unavailable(format!("{what}: {e}"))
}

impl CudaBackend {
    /// Opens device 0 with the default budget.
    pub fn new() -> Result<Self, BackendError> {
        Self::with_options(CudaOptions::default())
    }

    /// Opens device 0 with a budget of `bytes` (for oversubscription experiments on a card
    /// larger than the data).
    pub fn with_budget(bytes: usize) -> Result<Self, BackendError> {
        Self::with_options(CudaOptions {
            budget: Some(bytes),
            ..CudaOptions::default()
        })
    }

    /// Opens a device. Without a driver, without a device or without cuBLAS this returns
    /// [`BackendError::Unavailable`] with a one-line reason; it never panics.
    pub fn with_options(options: CudaOptions) -> Result<Self, BackendError> {
        probe::driver()?;
        driver::init().map_err(|e| unavailable("the CUDA driver did not start", e))?;
        let count = driver::device_count()?;
        if count <= 0 {
            return Err(BackendError::Unavailable(
                "the CUDA driver reports no device".into(),
            ));
        }
        let ordinal = i32::try_from(options.device)
            .ok()
            .filter(|&d| d < count)
            .ok_or_else(|| {
                BackendError::Unavailable(format!(
                    "no CUDA device {}: there are {count}",
                    options.device
                ))
            })?;
        probe::cublas()?;
        let ctx = Arc::new(Context::retain(ordinal)?);
        let dev = ctx.device();
        let (free_bytes, total_bytes) = driver::mem_get_info()?;
        let budget = match options.budget {
            None => default_budget(free_bytes),
            Some(0) => {
                return Err(BackendError::invalid(
                    BackendOp::Alloc,
                    "a budget of zero bytes",
                ));
            }
            Some(b) if b > free_bytes => {
                return Err(BackendError::invalid(
                    BackendOp::Alloc,
                    format!("a budget of {b} bytes, but the device has {free_bytes} bytes free"),
                ));
            }
            Some(b) => b,
        };
        let attr = |a| driver::device_attribute(dev, a).map(|v| v != 0);
        // A throwaway stream gives the cuBLAS version (and maps the library, so that its path
        // can be read back).
        let cublas_version = CudaStream::new(&ctx)?.with_blas(Handle::version)?;
        let info = DeviceInfo {
            ordinal: options.device,
            name: driver::device_name(dev)?,
            total_bytes,
            free_bytes,
            driver_version: driver::driver_version()?,
            cublas_version,
            libcuda: path_or(loaded_library("libcuda.so"), "libcuda"),
            libcublas: path_or(loaded_library("libcublas.so"), "libcublas"),
            managed_memory: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)?,
            concurrent_managed_access: attr(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
            )?,
        };
        Ok(CudaBackend {
            info,
            budget,
            ledger: Ledger::new(budget),
            staging: Mutex::new(StagingPool::new(STAGING_IDLE_CAP)),
            ctx,
        })
    }

    /// What the backend found when it opened the device.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The budget in bytes.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Bytes allocated now (device and managed).
    pub fn used(&self) -> usize {
        self.ledger.used()
    }

    fn staging(&self) -> MutexGuard<'_, StagingPool<PinnedBuffer, CudaEvent>> {
        self.staging.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `reused`, or a new page-locked staging buffer for `bytes`.
    fn staging_buffer(
        &self,
        reused: Option<PinnedBuffer>,
        bytes: usize,
    ) -> Result<PinnedBuffer, BackendError> {
        match reused {
            Some(b) => Ok(b),
            None => PinnedBuffer::alloc(
                &self.ctx,
                StagingPool::<PinnedBuffer, CudaEvent>::allocation_size(bytes),
            ),
        }
    }

    /// Copies `src` into page-locked staging memory and enqueues its copy to device address
    /// `dst` on `stream`; the staging buffer is recycled once an event after the copy has
    /// completed. `src` is consumed when this returns.
    fn upload(
        &self,
        stream: &CudaStream,
        src: &[u8],
        dst: driver::DevicePtr,
    ) -> Result<(), BackendError> {
        let mut pool = self.staging();
        // Completed copies give their buffers back; idle memory beyond the cap is freed here.
        drop(pool.reclaim(CudaEvent::query)?);
        let mut buffer = self.staging_buffer(pool.take(src.len()), src.len())?;
        buffer.fill(src)?;
        // The buffer goes into the pool's in-flight list below, untouched until the event
        // recorded after the copy completes. The destination range was checked by the caller.
        let enqueued = self
            .ctx
            .bind()
            .and_then(|()| copy_htod(dst, &buffer, src.len(), stream));
        let event = enqueued.and_then(|()| {
            let ev = CudaEvent::new(&self.ctx)?;
            self.record_event(&ev, stream)?;
            Ok(ev)
        });
        match event {
            Ok(ev) => {
                pool.in_flight(buffer, ev);
                Ok(())
            }
            Err(e) => {
                // The copy may be queued: the buffer must outlive it.
                stream.synchronize()?;
                pool.put_idle(buffer);
                Err(e)
            }
        }
    }
}

/// The one host-to-device copy from staging memory.
fn copy_htod(
    dst: driver::DevicePtr,
    src: &PinnedBuffer,
    bytes: usize,
    stream: &CudaStream,
) -> Result<(), BackendError> {
    // SAFETY: `src` is page-locked and holds at least `bytes` (filled by the caller), and the
    // caller keeps it untouched until an event recorded after this copy completes; `dst` is a
    // checked range of a live allocation; `stream` lives as long as the reference.
    unsafe { driver::memcpy_htod_async(dst, src.ptr(), bytes, stream.raw()) }
}

impl CudaStream {
    /// Runs `f` on the stream's cuBLAS handle.
    pub(crate) fn with_blas<T>(
        &self,
        f: impl FnOnce(&Handle) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        self.with_gear(|gear| f(&gear.blas))
    }
}

impl Backend for CudaBackend {
    type Buffer = CudaBuffer;
    type Stream = CudaStream;
    type Event = CudaEvent;
    type HostBuffer = PinnedBuffer;

    fn name(&self) -> String {
        let i = &self.info;
        format!(
            "cuda: {} (device {}, {:.1} GiB, budget {:.1} GiB, driver CUDA {}.{}, cuBLAS {}.{}.{}; {}, {})",
            i.name,
            i.ordinal,
            i.total_bytes as f64 / (1u64 << 30) as f64,
            self.budget as f64 / (1u64 << 30) as f64,
            i.driver_version / 1000,
            i.driver_version % 1000 / 10,
            i.cublas_version / 10000,
            i.cublas_version % 10000 / 100,
            i.cublas_version % 100,
            i.libcuda,
            i.libcublas
        )
    }

    fn mem_info(&self) -> Result<MemInfo, BackendError> {
        Ok(self.ledger.mem_info())
    }

    fn alloc(&self, bytes: usize) -> Result<CudaBuffer, BackendError> {
        CudaBuffer::alloc(&self.ctx, &self.ledger, bytes, false)
    }

    fn free(&self, buffer: CudaBuffer) -> Result<(), BackendError> {
        buffer.free()
    }

    fn create_stream(&self) -> Result<CudaStream, BackendError> {
        CudaStream::new(&self.ctx)
    }

    fn create_event(&self) -> Result<CudaEvent, BackendError> {
        CudaEvent::new(&self.ctx)
    }

    fn record_event(&self, event: &CudaEvent, stream: &CudaStream) -> Result<(), BackendError> {
        self.ctx.bind()?;
        // SAFETY: both handles live as long as the references.
        unsafe { driver::event_record(event.raw(), stream.raw()) }
    }

    fn wait_event(&self, stream: &CudaStream, event: &CudaEvent) -> Result<(), BackendError> {
        self.ctx.bind()?;
        // SAFETY: both handles live as long as the references.
        unsafe { driver::stream_wait_event(stream.raw(), event.raw()) }
    }

    fn event_query(&self, event: &CudaEvent) -> Result<bool, BackendError> {
        event.query()
    }

    fn event_synchronize(&self, event: &CudaEvent) -> Result<(), BackendError> {
        event.synchronize()
    }

    fn stream_synchronize(&self, stream: &CudaStream) -> Result<(), BackendError> {
        stream.synchronize()
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.ctx.bind()?;
        driver::ctx_synchronize()
    }

    fn copy_h2d(
        &self,
        stream: &CudaStream,
        src: &[u8],
        dst: &CudaBuffer,
        dst_offset: usize,
    ) -> Result<(), BackendError> {
        dst.check_range(BackendOp::CopyH2D, dst_offset, src.len())?;
        if src.is_empty() {
            return Ok(());
        }
        self.upload(stream, src, dst.ptr() + dst_offset as u64)
    }

    fn alloc_host(&self, bytes: usize) -> Result<PinnedBuffer, BackendError> {
        PinnedBuffer::alloc(&self.ctx, bytes)
    }

    fn copy_d2h_async(
        &self,
        stream: &CudaStream,
        src: &CudaBuffer,
        src_offset: usize,
        dst: &PinnedBuffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        src.check_range(BackendOp::CopyD2H, src_offset, len)?;
        check_range(
            BackendOp::CopyD2H,
            "host buffer",
            dst.bytes(),
            dst_offset,
            len,
        )?;
        if len == 0 {
            return Ok(());
        }
        self.ctx.bind()?;
        copy_dtoh(dst, dst_offset, src.ptr() + src_offset as u64, len, stream)?;
        let event = CudaEvent::new(&self.ctx)?;
        self.record_event(&event, stream)?;
        dst.set_last_copy(event);
        Ok(())
    }

    fn copy_d2h(
        &self,
        stream: &CudaStream,
        src: &CudaBuffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        src.check_range(BackendOp::CopyD2H, src_offset, dst.len())?;
        if dst.is_empty() {
            return Ok(());
        }
        // Through a recycled staging buffer rather than a fresh page-locked allocation.
        let staged = self.staging().take(dst.len());
        let buffer = self.staging_buffer(staged, dst.len())?;
        let copied = self
            .copy_d2h_async(stream, src, src_offset, &buffer, 0, dst.len())
            .and_then(|()| buffer.read(0, dst));
        if copied.is_err() {
            // Whatever was queued must finish before the buffer is reused.
            stream.synchronize()?;
        }
        self.staging().put_idle(buffer);
        copied
    }

    fn gemm_batched(
        &self,
        stream: &CudaStream,
        shape: &GemmShape,
        items: &[GemmItem<'_, CudaBuffer>],
    ) -> Result<(), BackendError> {
        validate_batched(shape, items)?;
        if items.is_empty() {
            return Ok(());
        }
        let dims = (int("m", shape.m)?, int("n", shape.n)?, int("k", shape.k)?);
        let lds = (
            int("lda", shape.lda)?,
            int("ldb", shape.ldb)?,
            int("ldc", shape.ldc)?,
        );
        let count = int("batch count", items.len())?;
        let table = pointer_table(items);
        let bytes: Vec<u8> = table.iter().flat_map(|p| p.to_ne_bytes()).collect();
        stream.with_gear(|gear| {
            let base = stream.table(gear, bytes.len())?.ptr();
            // The table's upload is ordered before the GEMM on the same stream.
            self.upload(stream, &bytes, base)?;
            let step = 8 * items.len() as u64;
            self.ctx.bind()?;
            // SAFETY: the three arrays at `base` hold the addresses of every item's A, B and
            // C, validated in bounds of live buffers that the caller keeps until the work
            // completes; the table is reused only by later work on this stream.
            unsafe {
                gear.blas.zgemm_batched(
                    (shape.op_a, shape.op_b),
                    dims,
                    shape.alpha,
                    (base, lds.0),
                    (base + step, lds.1),
                    shape.beta,
                    (base + 2 * step, lds.2),
                    count,
                )
            }
        })
    }

    fn geam_batched(
        &self,
        stream: &CudaStream,
        shape: &GeamShape,
        items: &[GemmItem<'_, CudaBuffer>],
    ) -> Result<(), BackendError> {
        validate_geam(shape, items)?;
        if items.is_empty() {
            return Ok(());
        }
        let dims = (int("m", shape.m)?, int("n", shape.n)?);
        let lds = (
            int("lda", shape.lda)?,
            int("ldb", shape.ldb)?,
            int("ldc", shape.ldc)?,
        );
        self.ctx.bind()?;
        stream.with_gear(|gear| {
            for item in items {
                // SAFETY: validated: each matrix is inside its live buffer, C is disjoint
                // from A and B or exactly one of them; the caller keeps the buffers until
                // completion.
                unsafe {
                    gear.blas.zgeam(
                        dims,
                        shape.alpha,
                        (address(&item.a), lds.0),
                        shape.beta,
                        (address(&item.b), lds.1),
                        (address(&item.c), lds.2),
                    )?;
                }
            }
            Ok(())
        })
    }

    fn gemm_strided_batched(
        &self,
        stream: &CudaStream,
        shape: &GemmShape,
        batch: &StridedBatch<'_, CudaBuffer>,
    ) -> Result<(), BackendError> {
        validate_strided(shape, batch)?;
        if batch.count == 0 {
            return Ok(());
        }
        let dims = (int("m", shape.m)?, int("n", shape.n)?, int("k", shape.k)?);
        let a = (
            address(&batch.a),
            int("lda", shape.lda)?,
            long("stride_a", batch.stride_a)?,
        );
        let b = (
            address(&batch.b),
            int("ldb", shape.ldb)?,
            long("stride_b", batch.stride_b)?,
        );
        let c = (
            address(&batch.c),
            int("ldc", shape.ldc)?,
            long("stride_c", batch.stride_c)?,
        );
        let count = int("batch count", batch.count)?;
        self.ctx.bind()?;
        // SAFETY: validated: every matrix of the batch is inside its live buffer, and the
        // outputs do not overlap; the caller keeps the buffers until completion.
        stream.with_gear(|gear| unsafe {
            gear.blas.zgemm_strided_batched(
                (shape.op_a, shape.op_b),
                dims,
                shape.alpha,
                a,
                b,
                shape.beta,
                c,
                count,
            )
        })
    }

    fn supports_managed(&self) -> bool {
        self.info.managed_memory
    }

    fn alloc_managed(&self, bytes: usize) -> Result<CudaBuffer, BackendError> {
        if !self.info.managed_memory {
            return Err(BackendError::Unsupported(format!(
                "{} has no managed memory",
                self.info.name
            )));
        }
        // The ledger's capacity is at most the free memory the card had when the backend
        // opened, so managed memory never oversubscribes the card: beyond it this fails with
        // `OutOfMemory` instead of asking the driver.
        CudaBuffer::alloc(&self.ctx, &self.ledger, bytes, true)
    }

    fn managed_write(
        &self,
        dst: &CudaBuffer,
        dst_offset: usize,
        src: &[u8],
    ) -> Result<(), BackendError> {
        dst.managed_write(dst_offset, src)
    }

    fn managed_read(
        &self,
        src: &CudaBuffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        src.managed_read(src_offset, dst)
    }

    fn prefetch(
        &self,
        stream: &CudaStream,
        buffer: &CudaBuffer,
        to: Location,
    ) -> Result<(), BackendError> {
        managed_only(buffer, BackendOp::Sync)?;
        self.ctx.bind()?;
        let target = match to {
            Location::Device => Some(self.ctx.ordinal()),
            Location::Host => None,
        };
        // SAFETY: the range is the whole of a live managed allocation; the stream is live.
        unsafe { driver::prefetch_async(buffer.ptr(), buffer.bytes(), target, stream.raw()) }
    }

    fn advise_read_mostly(&self, buffer: &CudaBuffer) -> Result<(), BackendError> {
        managed_only(buffer, BackendOp::Alloc)?;
        self.ctx.bind()?;
        // SAFETY: the range is the whole of a live managed allocation.
        unsafe { driver::advise_read_mostly(buffer.ptr(), buffer.bytes(), self.ctx.ordinal()) }
    }
}

fn managed_only(buffer: &CudaBuffer, op: BackendOp) -> Result<(), BackendError> {
    if buffer.is_managed() {
        Ok(())
    } else {
        Err(not_managed(op, buffer.ptr()))
    }
}

/// The one device-to-host copy into page-locked memory.
fn copy_dtoh(
    dst: &PinnedBuffer,
    dst_offset: usize,
    src: driver::DevicePtr,
    bytes: usize,
    stream: &CudaStream,
) -> Result<(), BackendError> {
    // SAFETY: `dst` is page-locked and `[dst_offset, dst_offset + bytes)` is inside it
    // (checked by the caller); its reads wait for the event recorded after this copy; `src`
    // is a checked range of a live allocation.
    unsafe { driver::memcpy_dtoh_async(dst.ptr().add(dst_offset), src, bytes, stream.raw()) }
}

impl Drop for CudaBackend {
    fn drop(&mut self) {
        // Staging buffers may still be read by queued copies: wait, then free them.
        let _ = self.synchronize();
        drop(self.staging().drain());
    }
}
