//! [`Cuda`]: the [`DeviceApi`] of memhc-gpu on the CUDA driver API and cuBLAS. Each method
//! binds the device's primary context and makes one checked call of [`crate::driver`] or
//! [`crate::blas`]; its `unsafe` blocks are those calls, whose handles the owning types of
//! [`crate::handles`] keep alive and whose ranges are checked here or were validated by
//! memhc-gpu.

use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute;
use memhc_backend::{BackendError, BackendOp};
use memhc_backend::{Location, MemInfo};
use memhc_gpu::{
    BatchedGemm, DeviceAllocation, DeviceApi, Geam, HostWait, PitchedCopy, StridedGemm,
    Unregistered, library_path,
};

use crate::blas::{CublasHandle, int, long};
use crate::context::Context;
use crate::driver;
use crate::handles::{CudaEventHandle, CudaMemory, CudaPinned, CudaStreamHandle};

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

/// One NVIDIA device opened through the CUDA driver API and cuBLAS: the [`DeviceApi`] that
/// [`CudaBackend`](crate::CudaBackend) runs on.
#[derive(Debug)]
pub struct Cuda {
    ctx: Arc<Context>,
    info: DeviceInfo,
}

impl Cuda {
    /// What was found when the device was opened.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }
}

impl DeviceApi for Cuda {
    const KIND: &'static str = "CUDA";
    type Memory = CudaMemory;
    type Pinned = CudaPinned;
    type Stream = CudaStreamHandle;
    type Event = CudaEventHandle;
    type Blas = CublasHandle;

    fn open(device: usize, wait: HostWait) -> Result<Self, BackendError> {
        let probe = crate::probe()?;
        let ordinal = i32::try_from(device)
            .ok()
            .filter(|_| device < probe.devices)
            .ok_or_else(|| {
                BackendError::Unavailable(format!(
                    "no CUDA device {device}: there are {}",
                    probe.devices
                ))
            })?;
        let ctx = Arc::new(Context::retain(ordinal, wait)?);
        let dev = ctx.device();
        let (free_bytes, total_bytes) = driver::mem_get_info()?;
        let attr = |a| driver::device_attribute(dev, a).map(|v| v != 0);
        // A throwaway stream and handle give the cuBLAS version (and map the library, so that
        // its path can be read back). The handle goes before the stream.
        let stream = CudaStreamHandle::new(&ctx)?;
        // SAFETY: the stream is live in `ctx` and outlives the handle, dropped first.
        let cublas_version = unsafe { CublasHandle::new(&ctx, stream.raw()) }?.version()?;
        drop(stream);
        let info = DeviceInfo {
            ordinal: device,
            name: driver::device_name(dev)?,
            total_bytes,
            free_bytes,
            driver_version: driver::driver_version()?,
            cublas_version,
            libcuda: library_path("libcuda.so", "libcuda"),
            libcublas: library_path("libcublas.so", "libcublas"),
            managed_memory: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)?,
            concurrent_managed_access: attr(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
            )?,
        };
        Ok(Cuda { ctx, info })
    }

    fn device_name(&self) -> &str {
        &self.info.name
    }

    fn describe(&self, budget: usize) -> String {
        let i = &self.info;
        format!(
            "cuda: {} (device {}, {:.1} GiB, budget {:.1} GiB, driver CUDA {}.{}, cuBLAS {}.{}.{}; {}, {})",
            i.name,
            i.ordinal,
            i.total_bytes as f64 / (1u64 << 30) as f64,
            budget as f64 / (1u64 << 30) as f64,
            i.driver_version / 1000,
            i.driver_version % 1000 / 10,
            i.cublas_version / 10000,
            i.cublas_version % 10000 / 100,
            i.cublas_version % 100,
            i.libcuda,
            i.libcublas
        )
    }

    fn mem_get_info(&self) -> Result<MemInfo, BackendError> {
        self.ctx.bind()?;
        let (free, total) = driver::mem_get_info()?;
        Ok(MemInfo { free, total })
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.ctx.bind()?;
        driver::ctx_synchronize()
    }

    fn malloc(&self, bytes: usize) -> Result<CudaMemory, BackendError> {
        CudaMemory::alloc(&self.ctx, bytes, false)
    }

    fn free(&self, memory: CudaMemory) -> Result<(), BackendError> {
        memory.free()
    }

    fn host_alloc(&self, bytes: usize) -> Result<CudaPinned, BackendError> {
        CudaPinned::alloc(&self.ctx, bytes)
    }

    /// A range of a `cuMemHostAlloc` allocation, freeing nothing when dropped.
    fn host_piece(
        &self,
        chunk: &CudaPinned,
        offset: usize,
        bytes: usize,
    ) -> Result<CudaPinned, BackendError> {
        chunk.piece(offset, bytes)
    }

    /// `cuMemHostRegister` (no flags) on the vector's elements, in place.
    fn host_register(&self, memory: Vec<u64>) -> Result<CudaPinned, Box<Unregistered>> {
        CudaPinned::register(&self.ctx, memory)
    }

    /// `cuMemHostUnregister`; the vector back.
    fn host_unregister(&self, pinned: CudaPinned) -> Result<Vec<u64>, BackendError> {
        pinned.unregister()
    }

    fn stream_create(&self) -> Result<CudaStreamHandle, BackendError> {
        CudaStreamHandle::new(&self.ctx)
    }

    fn stream_synchronize(&self, stream: &CudaStreamHandle) -> Result<(), BackendError> {
        self.ctx.bind()?;
        // SAFETY: the stream lives as long as the reference.
        unsafe { driver::stream_synchronize(stream.raw()) }
    }

    fn event_create(&self) -> Result<CudaEventHandle, BackendError> {
        CudaEventHandle::new(&self.ctx)
    }

    fn timing_event_create(&self) -> Result<CudaEventHandle, BackendError> {
        CudaEventHandle::timing(&self.ctx)
    }

    fn event_elapsed_ms(
        &self,
        start: &CudaEventHandle,
        end: &CudaEventHandle,
    ) -> Result<f32, BackendError> {
        self.ctx.bind()?;
        // SAFETY: both events live as long as the references.
        unsafe { driver::event_elapsed_ms(start.raw(), end.raw()) }
    }

    fn event_record(
        &self,
        event: &CudaEventHandle,
        stream: &CudaStreamHandle,
    ) -> Result<(), BackendError> {
        self.ctx.bind()?;
        // SAFETY: both handles live as long as the references.
        unsafe { driver::event_record(event.raw(), stream.raw()) }
    }

    fn stream_wait_event(
        &self,
        stream: &CudaStreamHandle,
        event: &CudaEventHandle,
    ) -> Result<(), BackendError> {
        self.ctx.bind()?;
        // SAFETY: both handles live as long as the references.
        unsafe { driver::stream_wait_event(stream.raw(), event.raw()) }
    }

    fn event_query(&self, event: &CudaEventHandle) -> Result<bool, BackendError> {
        self.ctx.bind()?;
        // SAFETY: the event lives as long as the reference.
        unsafe { driver::event_query(event.raw()) }
    }

    fn event_synchronize(&self, event: &CudaEventHandle) -> Result<(), BackendError> {
        self.ctx.bind()?;
        // SAFETY: the event lives as long as the reference.
        unsafe { driver::event_synchronize(event.raw()) }
    }

    fn copy_h2d_async(
        &self,
        stream: &CudaStreamHandle,
        src: &CudaPinned,
        src_offset: usize,
        dst: &CudaMemory,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        let from = src.range(BackendOp::CopyH2D, src_offset, len)?;
        let to = dst.range(BackendOp::CopyH2D, dst_offset, len)?;
        self.ctx.bind()?;
        // SAFETY: both ranges lie inside their allocations (checked just above); `src` is
        // page-locked and, by the DeviceApi contract, untouched by the host until an event
        // after this copy completes; `dst` lives as long as the reference and freeing it waits
        // for the device; the stream is live.
        unsafe { driver::memcpy_htod_async(to, from, len, stream.raw()) }
    }

    fn copy_d2h_async(
        &self,
        stream: &CudaStreamHandle,
        src: &CudaMemory,
        src_offset: usize,
        dst: &CudaPinned,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        let from = src.range(BackendOp::CopyD2H, src_offset, len)?;
        let to = dst.range(BackendOp::CopyD2H, dst_offset, len)?;
        self.ctx.bind()?;
        // SAFETY: as for `copy_h2d_async`, the other way round: `dst` is page-locked and not
        // read by the host until an event after this copy completes.
        unsafe { driver::memcpy_dtoh_async(to, from, len, stream.raw()) }
    }

    fn copy_h2d_pitched_async(
        &self,
        stream: &CudaStreamHandle,
        src: &CudaPinned,
        dst: &CudaMemory,
        copy: &PitchedCopy,
    ) -> Result<(), BackendError> {
        let ((so, sl), (d_o, dl)) = copy.spans(BackendOp::CopyH2D)?;
        let from = src.range(BackendOp::CopyH2D, so, sl)?;
        let to = dst.range(BackendOp::CopyH2D, d_o, dl)?;
        if copy.bytes() == 0 {
            return Ok(());
        }
        self.ctx.bind()?;
        // SAFETY: `spans` checked the copy's shape and both spans lie inside their allocations
        // (checked just above); `src` is page-locked and, by the DeviceApi contract, untouched
        // by the host until an event after this copy completes; `dst` lives as long as the
        // reference and freeing it waits for the device; the stream is live.
        unsafe {
            pitched(
                driver::Direction::HostToDevice,
                (from, copy.src_pitch, copy.src_height),
                (to, copy.dst_pitch, copy.dst_height),
                copy,
                stream.raw(),
            )
        }
    }

    fn copy_d2h_pitched_async(
        &self,
        stream: &CudaStreamHandle,
        src: &CudaMemory,
        dst: &CudaPinned,
        copy: &PitchedCopy,
    ) -> Result<(), BackendError> {
        let ((so, sl), (d_o, dl)) = copy.spans(BackendOp::CopyD2H)?;
        let from = src.range(BackendOp::CopyD2H, so, sl)?;
        let to = dst.range(BackendOp::CopyD2H, d_o, dl)?;
        if copy.bytes() == 0 {
            return Ok(());
        }
        self.ctx.bind()?;
        // SAFETY: as for `copy_h2d_pitched_async`, the other way round: `dst` is page-locked
        // and not read by the host until an event after this copy completes.
        unsafe {
            pitched(
                driver::Direction::DeviceToHost,
                (to, copy.dst_pitch, copy.dst_height),
                (from, copy.src_pitch, copy.src_height),
                copy,
                stream.raw(),
            )
        }
    }

    fn blas_create(&self, stream: &CudaStreamHandle) -> Result<CublasHandle, BackendError> {
        // SAFETY: the stream is live in this context, and memhc-gpu drops a stream's handle
        // before the stream (the DeviceApi contract).
        unsafe { CublasHandle::new(&self.ctx, stream.raw()) }
    }

    fn gemm_batched(&self, blas: &CublasHandle, call: &BatchedGemm) -> Result<(), BackendError> {
        let s = call.shape();
        let dims = (int("m", s.m)?, int("n", s.n)?, int("k", s.k)?);
        let lds = (int("lda", s.lda)?, int("ldb", s.ldb)?, int("ldc", s.ldc)?);
        let count = int("batch count", call.count())?;
        self.ctx.bind()?;
        // SAFETY: a `BatchedGemm` is made only by memhc-gpu once every item was validated in
        // bounds of live buffers and its three pointer arrays were uploaded, on this handle's
        // stream and before this call, into a table that is reused only by later work on it.
        unsafe {
            blas.zgemm_batched(
                (s.op_a, s.op_b),
                dims,
                s.alpha,
                (call.a_array(), lds.0),
                (call.b_array(), lds.1),
                s.beta,
                (call.c_array(), lds.2),
                count,
            )
        }
    }

    fn gemm_strided_batched(
        &self,
        blas: &CublasHandle,
        call: &StridedGemm,
    ) -> Result<(), BackendError> {
        let s = call.shape();
        let dims = (int("m", s.m)?, int("n", s.n)?, int("k", s.k)?);
        let (a, b, c) = (call.a(), call.b(), call.c());
        let a = (a.address, int("lda", s.lda)?, long("stride_a", a.stride)?);
        let b = (b.address, int("ldb", s.ldb)?, long("stride_b", b.stride)?);
        let c = (c.address, int("ldc", s.ldc)?, long("stride_c", c.stride)?);
        let count = int("batch count", call.count())?;
        self.ctx.bind()?;
        // SAFETY: a `StridedGemm` is made only by memhc-gpu once every matrix of the batch was
        // validated inside its live buffer, with outputs disjoint.
        unsafe {
            blas.zgemm_strided_batched((s.op_a, s.op_b), dims, s.alpha, a, b, s.beta, c, count)
        }
    }

    fn supports_gauss(&self) -> bool {
        crate::probe::has_gauss()
    }

    fn gemm_gauss(&self, blas: &CublasHandle, call: &StridedGemm) -> Result<(), BackendError> {
        if call.count() != 1 {
            return Err(BackendError::invalid(
                BackendOp::Gemm,
                format!("a three-product GEMM of {} items (one only)", call.count()),
            ));
        }
        if !crate::probe::has_gauss() {
            return Err(BackendError::Unsupported(
                "this cuBLAS has no cublasZgemm3m".into(),
            ));
        }
        let s = call.shape();
        let dims = (int("m", s.m)?, int("n", s.n)?, int("k", s.k)?);
        let (a, b, c) = (call.a(), call.b(), call.c());
        let a = (a.address, int("lda", s.lda)?);
        let b = (b.address, int("ldb", s.ldb)?);
        let c = (c.address, int("ldc", s.ldc)?);
        self.ctx.bind()?;
        // SAFETY: a `StridedGemm` is made only by memhc-gpu once its one item was validated
        // inside its live buffers, the output disjoint from the inputs; the symbol was found
        // just above.
        unsafe { blas.zgemm3m((s.op_a, s.op_b), dims, s.alpha, a, b, s.beta, c) }
    }

    fn geam(&self, blas: &CublasHandle, call: &Geam) -> Result<(), BackendError> {
        let s = call.shape();
        let dims = (int("m", s.m)?, int("n", s.n)?);
        let lds = (int("lda", s.lda)?, int("ldb", s.ldb)?, int("ldc", s.ldc)?);
        self.ctx.bind()?;
        for it in call.items() {
            // SAFETY: a `Geam` is made only by memhc-gpu once each matrix was validated inside
            // its live buffer and each C disjoint from its A and B or exactly one of them.
            unsafe {
                blas.zgeam(
                    dims,
                    s.alpha,
                    (it.a, lds.0),
                    s.beta,
                    (it.b, lds.1),
                    (it.c, lds.2),
                )?;
            }
        }
        Ok(())
    }

    fn managed_memory(&self) -> Result<(), String> {
        if self.info.managed_memory {
            Ok(())
        } else {
            Err(format!("{} does not support it", self.info.name))
        }
    }

    fn malloc_managed(&self, bytes: usize) -> Result<CudaMemory, BackendError> {
        CudaMemory::alloc(&self.ctx, bytes, true)
    }

    fn managed_write(
        &self,
        dst: &CudaMemory,
        offset: usize,
        src: &[u8],
    ) -> Result<(), BackendError> {
        dst.managed_write(offset, src)
    }

    fn managed_read(
        &self,
        src: &CudaMemory,
        offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        src.managed_read(offset, dst)
    }

    fn advise_read_mostly(&self, memory: &CudaMemory) -> Result<(), BackendError> {
        let ptr = memory.managed_ptr(BackendOp::Alloc)?;
        self.ctx.bind()?;
        // SAFETY: the range is the whole of a live managed allocation.
        unsafe { driver::advise_read_mostly(ptr, memory.bytes(), self.ctx.ordinal()) }
    }

    fn prefetch(
        &self,
        stream: &CudaStreamHandle,
        memory: &CudaMemory,
        to: Location,
    ) -> Result<(), BackendError> {
        let ptr = memory.managed_ptr(BackendOp::Sync)?;
        self.ctx.bind()?;
        let target = match to {
            Location::Device => Some(self.ctx.ordinal()),
            Location::Host => None,
        };
        let bytes = memory.bytes();
        // SAFETY: the range is the whole of a live managed allocation; the stream is live.
        unsafe { driver::prefetch_async(ptr, bytes, target, stream.raw()) }
    }
}

/// Enqueues `copy` (checked by [`PitchedCopy::spans`], not empty) between `host` and `device`,
/// each with its pitch and rows per slice, as `direction` says: `cuMemcpy2DAsync` at depth 1
/// (today's tiled copies, one per component), else `cuMemcpy3DAsync` (one per block column).
///
/// # Safety
/// As [`driver::memcpy_3d_async`], for the spans `copy` gives each side.
unsafe fn pitched(
    direction: driver::Direction,
    (host, host_pitch, host_height): (*mut u8, usize, usize),
    (device, device_pitch, device_height): (driver::DevicePtr, usize, usize),
    copy: &PitchedCopy,
    stream: cudarc::driver::sys::CUstream,
) -> Result<(), BackendError> {
    if copy.depth == 1 {
        // SAFETY: the caller's contract; at depth 1 the spans are those of a 2D copy.
        unsafe {
            driver::memcpy_2d_async(
                direction,
                (host, host_pitch),
                (device, device_pitch),
                (copy.width, copy.height),
                stream,
            )
        }
    } else {
        // SAFETY: the caller's contract.
        unsafe {
            driver::memcpy_3d_async(
                direction,
                (host, host_pitch, host_height),
                (device, device_pitch, device_height),
                (copy.width, copy.height, copy.depth),
                stream,
            )
        }
    }
}
