//! [`HipBackend`]: the [`Backend`] trait on the HIP runtime and rocBLAS.

use std::sync::Arc;

use memhc_core::backend::gemm::{
    GeamShape, GemmItem, GemmShape, Op, StridedBatch, validate_batched, validate_geam,
    validate_strided,
};
use memhc_core::backend::gpu::{address, default_budget, loaded_library, pointer_table};
use memhc_core::backend::ledger::Ledger;
use memhc_core::backend::{Backend, DeviceMemory, MemInfo};
use memhc_core::{BackendError, BackendOp, Complex64};

use crate::check::{self, GemmArgs, Libs};
use crate::event::{HipEvent, fence};
use crate::ffi::{
    self, HIP_ERROR_NO_DEVICE, HIP_MEMCPY_DEVICE_TO_HOST, HIP_MEMCPY_HOST_TO_DEVICE,
    ROCBLAS_OPERATION_CONJUGATE_TRANSPOSE, ROCBLAS_OPERATION_NONE, ROCBLAS_OPERATION_TRANSPOSE,
    RocblasInt,
};
use crate::memory::{DeviceScratch, HipBuffer, HipHostBuffer, Pinned};
use crate::stream::{CHUNK, HipStream};
use memhc_core::backend::check_range;

/// What this machine offers the backend: where the libraries were loaded from, and how many
/// devices the HIP runtime sees. See [`probe`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The HIP runtime library file this process mapped (or the name it was opened by).
    pub hip_library: String,
    /// The rocBLAS library file this process mapped (or the name it was opened by).
    pub rocblas_library: String,
    /// Devices the HIP runtime sees (at least one).
    pub devices: usize,
}

/// Loads the HIP runtime and rocBLAS (once per process), checks that every function this
/// backend calls is there, and counts the devices. Fails with a one-line
/// [`BackendError::Unavailable`] naming what is missing: the library (and where it was looked
/// for), a function, or a device. Never panics.
pub fn probe() -> Result<Probe, BackendError> {
    let libs = ffi::libraries().map_err(BackendError::Unavailable)?;
    let (hip_library, rocblas_library) = library_paths(libs);
    let devices = match check::device_count(libs) {
        Ok(n) => n,
        Err((code, _)) if code == HIP_ERROR_NO_DEVICE => 0,
        Err((_, e)) => {
            return Err(BackendError::Unavailable(format!(
                "no usable AMD GPU: {e} (HIP runtime {hip_library})"
            )));
        }
    };
    if devices == 0 {
        return Err(BackendError::Unavailable(format!(
            "no AMD GPU: the HIP runtime ({hip_library}) sees no device"
        )));
    }
    Ok(Probe {
        hip_library,
        rocblas_library,
        devices,
    })
}

/// The library files actually mapped (resolving symlinks and sonames), else the names opened.
fn library_paths(libs: Libs) -> (String, String) {
    let mapped = |stem: &str, opened: &str| {
        loaded_library(stem).map_or_else(|| opened.to_owned(), |p| p.display().to_string())
    };
    (
        mapped(ffi::HIP.stem, &libs.hip_opened),
        mapped(ffi::ROCBLAS.stem, &libs.blas_opened),
    )
}

/// Options of a [`HipBackend`]: which device, and how much of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HipBackendBuilder {
    device: usize,
    budget: Option<usize>,
}

impl HipBackendBuilder {
    /// The HIP device index (default 0), as `hipSetDevice` numbers them (after
    /// `HIP_VISIBLE_DEVICES` / `ROCR_VISIBLE_DEVICES` filtering).
    pub fn device(mut self, index: usize) -> Self {
        self.device = index;
        self
    }

    /// The byte budget: the most device memory the backend allocates (default: the device's
    /// free memory less [`default_margin`](memhc_core::backend::gpu::default_margin)). It may
    /// not exceed the device's free memory.
    pub fn budget(mut self, bytes: usize) -> Self {
        self.budget = Some(bytes);
        self
    }

    /// Opens the device. Fails with [`BackendError::Unavailable`] when ROCm or the device is
    /// missing, with [`BackendError::OutOfMemory`] when the budget exceeds the device's free
    /// memory, with [`BackendError::InvalidArgument`] for a zero budget.
    pub fn build(self) -> Result<HipBackend, BackendError> {
        let p = probe()?;
        let libs = ffi::libraries().map_err(BackendError::Unavailable)?;
        if self.device >= p.devices {
            return Err(BackendError::Unavailable(format!(
                "HIP device {} requested, but the HIP runtime sees {} device(s)",
                self.device, p.devices
            )));
        }
        let device = i32::try_from(self.device).map_err(|_| {
            BackendError::Unavailable(format!("HIP device index {} is too large", self.device))
        })?;
        check::set_device(libs, device)?;
        let (free, _total) = check::mem_get_info(libs)?;
        let budget = match self.budget {
            Some(0) => {
                return Err(BackendError::invalid(
                    BackendOp::Alloc,
                    "the device budget must be positive",
                ));
            }
            Some(b) if b > free => {
                return Err(BackendError::OutOfMemory { requested: b, free });
            }
            Some(b) => b,
            None => match default_budget(free) {
                0 => {
                    return Err(BackendError::Unavailable(format!(
                        "HIP device {device} has only {free} bytes free, less than the margin \
                         the backend leaves; give a budget explicitly"
                    )));
                }
                b => b,
            },
        };
        // One rocBLAS handle now, so that a rocBLAS that cannot start on this device is a
        // construction error rather than a failure in the first GEMM.
        drop(HipStream::new(libs, device)?);
        let name = format!(
            "AMD {} (HIP device {device} of {}; HIP runtime {} from {}; rocBLAS {} from {}; \
             budget {budget} bytes)",
            check::device_name(libs, device)?,
            p.devices,
            check::runtime_version(libs)?,
            p.hip_library,
            check::blas_version(libs)?,
            p.rocblas_library,
        );
        Ok(HipBackend {
            libs,
            device,
            ledger: Ledger::new(budget),
            name,
        })
    }
}

/// The AMD backend: device memory through `hipMalloc` under a byte budget, copies through
/// pinned staging buffers on non-blocking streams, batched ZGEMM and ZGEAM through rocBLAS.
/// See the [crate documentation](crate) for the design and for what has been verified.
#[derive(Debug)]
pub struct HipBackend {
    libs: Libs,
    device: i32,
    ledger: Arc<Ledger>,
    name: String,
}

impl HipBackend {
    /// Device 0 with the default budget.
    pub fn new() -> Result<Self, BackendError> {
        Self::builder().build()
    }

    /// Device 0 with a budget of `bytes` (at most the device's free memory).
    pub fn with_budget(bytes: usize) -> Result<Self, BackendError> {
        Self::builder().budget(bytes).build()
    }

    /// Options: device index and budget.
    pub fn builder() -> HipBackendBuilder {
        HipBackendBuilder::default()
    }

    /// The HIP device index in use.
    pub fn device(&self) -> usize {
        self.device as usize
    }

    /// The byte budget.
    pub fn budget(&self) -> usize {
        self.ledger.capacity()
    }

    /// Bytes allocated through this backend (device buffers, not counting pointer tables or
    /// rocBLAS's workspace).
    pub fn used(&self) -> usize {
        self.ledger.used()
    }

    /// The device's own free and total memory, as `hipMemGetInfo` reports it (whereas
    /// [`Backend::mem_info`] reports the budget).
    pub fn device_mem_info(&self) -> Result<MemInfo, BackendError> {
        self.bind()?;
        let (free, total) = check::mem_get_info(self.libs)?;
        Ok(MemInfo { free, total })
    }

    /// Makes this backend's device current on the calling thread.
    fn bind(&self) -> Result<(), BackendError> {
        check::set_device(self.libs, self.device)
    }

    /// Makes `stream`'s device current (a stream of another backend may be on another device).
    fn bind_stream(&self, stream: &HipStream) -> Result<(), BackendError> {
        check::set_device(self.libs, stream.device())
    }
}

fn operation(op: Op) -> i32 {
    match op {
        Op::N => ROCBLAS_OPERATION_NONE,
        Op::T => ROCBLAS_OPERATION_TRANSPOSE,
        Op::C => ROCBLAS_OPERATION_CONJUGATE_TRANSPOSE,
    }
}

/// `v` as a rocBLAS 32-bit integer, or an invalid argument naming it.
fn int(name: &str, v: usize) -> Result<RocblasInt, BackendError> {
    RocblasInt::try_from(v).map_err(|_| {
        BackendError::invalid(
            BackendOp::Gemm,
            format!("{name} = {v} exceeds rocBLAS's 32-bit rocblas_int"),
        )
    })
}

/// A stride in elements as rocBLAS's 64-bit stride.
fn stride(name: &str, v: usize) -> Result<i64, BackendError> {
    i64::try_from(v).map_err(|_| {
        BackendError::invalid(BackendOp::Gemm, format!("{name} = {v} exceeds 64 bits"))
    })
}

fn gemm_args(s: &GemmShape) -> Result<GemmArgs, BackendError> {
    Ok(GemmArgs {
        op_a: operation(s.op_a),
        op_b: operation(s.op_b),
        m: int("m", s.m)?,
        n: int("n", s.n)?,
        k: int("k", s.k)?,
        lda: int("lda", s.lda)?,
        ldb: int("ldb", s.ldb)?,
        ldc: int("ldc", s.ldc)?,
        alpha: s.alpha,
        beta: s.beta,
    })
}

impl Backend for HipBackend {
    type Buffer = HipBuffer;
    type Stream = HipStream;
    type Event = HipEvent;
    type HostBuffer = HipHostBuffer;

    fn name(&self) -> String {
        self.name.clone()
    }

    /// The budget, as the runtime uses it: `free` is the budget less what this backend has
    /// allocated, `total` the budget. [`HipBackend::device_mem_info`] gives the device's own.
    fn mem_info(&self) -> Result<MemInfo, BackendError> {
        Ok(self.ledger.mem_info())
    }

    fn alloc(&self, bytes: usize) -> Result<HipBuffer, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(
                BackendOp::Alloc,
                "zero-byte allocation",
            ));
        }
        self.ledger.reserve(bytes)?;
        HipBuffer::alloc(self.libs, self.device, bytes, &self.ledger).inspect_err(|_| {
            self.ledger.release(bytes);
        })
    }

    fn free(&self, buffer: HipBuffer) -> Result<(), BackendError> {
        buffer.free()
    }

    fn create_stream(&self) -> Result<HipStream, BackendError> {
        self.bind()?;
        HipStream::new(self.libs, self.device)
    }

    fn create_event(&self) -> Result<HipEvent, BackendError> {
        self.bind()?;
        HipEvent::new(self.libs)
    }

    fn record_event(&self, event: &HipEvent, stream: &HipStream) -> Result<(), BackendError> {
        self.bind_stream(stream)?;
        // SAFETY: the stream is live (borrowed).
        unsafe { event.record(stream.raw()) }
    }

    fn wait_event(&self, stream: &HipStream, event: &HipEvent) -> Result<(), BackendError> {
        let Some(raw) = event.recorded() else {
            return Ok(()); // never recorded: complete, nothing to wait for
        };
        self.bind_stream(stream)?;
        // SAFETY: the stream and the event are live (borrowed).
        unsafe { check::stream_wait_event(self.libs, stream.raw(), raw.handle()) }
    }

    fn event_query(&self, event: &HipEvent) -> Result<bool, BackendError> {
        event.query()
    }

    fn event_synchronize(&self, event: &HipEvent) -> Result<(), BackendError> {
        event.synchronize()
    }

    fn stream_synchronize(&self, stream: &HipStream) -> Result<(), BackendError> {
        stream.synchronize()
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.bind()?;
        check::device_synchronize(self.libs)
    }

    /// Stages `src` through the stream's pinned buffers (in pieces of at most 32 MiB) and
    /// enqueues the device copies; returns once `src` has been read.
    fn copy_h2d(
        &self,
        stream: &HipStream,
        src: &[u8],
        dst: &HipBuffer,
        dst_offset: usize,
    ) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyH2D,
            "device buffer",
            dst.bytes(),
            dst_offset,
            src.len(),
        )?;
        if src.is_empty() {
            return Ok(());
        }
        self.bind_stream(stream)?;
        let mut staging = stream.staging();
        for (i, piece) in src.chunks(CHUNK).enumerate() {
            let mut buf = staging.acquire(piece.len(), |n| Pinned::new(self.libs, n))?;
            if let Err(e) = buf.write(0, piece) {
                staging.put_idle(buf);
                return Err(e);
            }
            let to = dst.addr(dst_offset + i * CHUNK);
            // SAFETY: the destination range lies inside `dst` (checked above); the staging
            // buffer holds `piece.len()` bytes and stays out of reuse until the fence
            // recorded after the copy completes; the stream is live.
            let copied = unsafe {
                check::memcpy_async(
                    self.libs,
                    check::device_ptr(to),
                    buf.ptr().cast_const().cast(),
                    piece.len(),
                    HIP_MEMCPY_HOST_TO_DEVICE,
                    stream.raw(),
                )
            };
            if let Err(e) = copied {
                staging.put_idle(buf);
                return Err(e);
            }
            // SAFETY: the stream is live.
            match unsafe { fence(self.libs, stream.raw()) } {
                Ok(f) => staging.in_flight(buf, f),
                Err(e) => {
                    // Without a fence, the only way to know the copy is done is to wait.
                    if stream.synchronize().is_ok() {
                        staging.put_idle(buf);
                    } else {
                        staging.discard(buf);
                    }
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    fn alloc_host(&self, bytes: usize) -> Result<HipHostBuffer, BackendError> {
        if bytes == 0 {
            return Err(BackendError::invalid(
                BackendOp::Alloc,
                "zero-byte host allocation",
            ));
        }
        self.bind()?;
        HipHostBuffer::new(self.libs, bytes)
    }

    fn copy_d2h_async(
        &self,
        stream: &HipStream,
        src: &HipBuffer,
        src_offset: usize,
        dst: &HipHostBuffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyD2H,
            "device buffer",
            src.bytes(),
            src_offset,
            len,
        )?;
        check_range(
            BackendOp::CopyD2H,
            "host buffer",
            memhc_core::backend::HostMemory::bytes(dst),
            dst_offset,
            len,
        )?;
        if len == 0 {
            return Ok(());
        }
        self.bind_stream(stream)?;
        let mut pending = dst.pending();
        // Forget the fences of copies already done.
        let mut done = Vec::new();
        for (i, f) in pending.iter().enumerate() {
            if f.query()? {
                done.push(i);
            }
        }
        for i in done.into_iter().rev() {
            pending.remove(i);
        }
        // SAFETY: both ranges were checked; the host buffer is not read or freed before the
        // fence pushed below completes (its read and drop wait for its fences, under the lock
        // held here); the device buffer must outlive the copy (the trait's contract, and
        // hipFree waits for the device); the stream is live.
        unsafe {
            check::memcpy_async(
                self.libs,
                dst.ptr().add(dst_offset).cast(),
                check::device_ptr::<std::ffi::c_void>(src.addr(src_offset)).cast_const(),
                len,
                HIP_MEMCPY_DEVICE_TO_HOST,
                stream.raw(),
            )?;
        }
        // SAFETY: the stream is live.
        match unsafe { fence(self.libs, stream.raw()) } {
            Ok(f) => {
                pending.push(f);
                Ok(())
            }
            Err(e) => {
                // No fence: make sure the copy is over before anyone may read.
                stream.synchronize()?;
                Err(e)
            }
        }
    }

    /// Copies through the stream's pinned staging buffer, a piece of at most 32 MiB at a time,
    /// waiting for the stream after each.
    fn copy_d2h(
        &self,
        stream: &HipStream,
        src: &HipBuffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyD2H,
            "device buffer",
            src.bytes(),
            src_offset,
            dst.len(),
        )?;
        if dst.is_empty() {
            return Ok(());
        }
        self.bind_stream(stream)?;
        let mut staging = stream.staging();
        let buf = staging.acquire(dst.len().min(CHUNK), |n| Pinned::new(self.libs, n))?;
        for (i, piece) in dst.chunks_mut(CHUNK).enumerate() {
            // SAFETY: the source range lies inside `src` (checked); the staging buffer holds
            // at least `piece.len()` bytes and no other copy uses it (it is out of the pool);
            // the stream is live.
            let copied = unsafe {
                check::memcpy_async(
                    self.libs,
                    buf.ptr().cast(),
                    check::device_ptr::<std::ffi::c_void>(src.addr(src_offset + i * CHUNK))
                        .cast_const(),
                    piece.len(),
                    HIP_MEMCPY_DEVICE_TO_HOST,
                    stream.raw(),
                )
            }
            .and_then(|()| stream.synchronize());
            if let Err(e) = copied {
                // The copy may still be running: do not reuse the buffer.
                staging.discard(buf);
                return Err(e);
            }
            if let Err(e) = buf.read(0, piece) {
                staging.put_idle(buf);
                return Err(e);
            }
        }
        staging.put_idle(buf);
        Ok(())
    }

    /// Uploads the pointer table ([`pointer_table`]) through the stream's staging buffers
    /// into a device table of the stream, then enqueues one `rocblas_zgemm_batched`. The
    /// staging buffer and the table are reused once the fence recorded after the GEMM has
    /// completed.
    fn gemm_batched(
        &self,
        stream: &HipStream,
        shape: &GemmShape,
        items: &[GemmItem<'_, HipBuffer>],
    ) -> Result<(), BackendError> {
        validate_batched(shape, items)?;
        if shape.is_empty() || items.is_empty() {
            return Ok(());
        }
        let args = gemm_args(shape)?;
        let count = int("batch count", items.len())?;
        let table = pointer_table(items);
        let bytes: &[u8] = bytemuck::cast_slice(&table);
        self.bind_stream(stream)?;
        let mut staging = stream.staging();
        let mut tables = stream.tables();
        let mut host = staging.acquire(bytes.len(), |n| Pinned::new(self.libs, n))?;
        if let Err(e) = host.write(0, bytes) {
            staging.put_idle(host);
            return Err(e);
        }
        let device = match tables.acquire(bytes.len(), |n| DeviceScratch::new(self.libs, n)) {
            Ok(d) => d,
            Err(e) => {
                staging.put_idle(host);
                return Err(e);
            }
        };
        // SAFETY: the table holds `bytes.len()` bytes on both sides; both buffers stay out of
        // reuse until the fence recorded after the GEMM completes; the stream is live.
        let uploaded = unsafe {
            check::memcpy_async(
                self.libs,
                check::device_ptr(device.addr()),
                host.ptr().cast_const().cast(),
                bytes.len(),
                HIP_MEMCPY_HOST_TO_DEVICE,
                stream.raw(),
            )
        };
        if let Err(e) = uploaded {
            staging.put_idle(host);
            tables.put_idle(device);
            return Err(e);
        }
        let blas = stream.blas();
        // SAFETY: the handle is live and bound to this stream; the table was uploaded before
        // in stream order and holds `count` A, B and C addresses, each inside its buffer
        // (validate_batched); the table stays allocated until the fence below completes, and
        // the operands' buffers must outlive the GEMM (the trait's contract).
        let gemm =
            unsafe { check::zgemm_batched(self.libs, blas.raw(), &args, device.addr(), count) };
        drop(blas);
        // The upload was enqueued whatever the GEMM did: fence it before reusing anything.
        // SAFETY: the stream is live.
        match unsafe { fence(self.libs, stream.raw()) } {
            Ok(f) => {
                staging.in_flight(host, Arc::clone(&f));
                tables.in_flight(device, f);
            }
            Err(e) => {
                if stream.synchronize().is_ok() {
                    staging.put_idle(host);
                    tables.put_idle(device);
                } else {
                    staging.discard(host);
                    tables.discard(device);
                }
                gemm?;
                return Err(e);
            }
        }
        gemm
    }

    /// One `rocblas_zgeam` per item (rocBLAS has no batched GEAM), under one lock of the
    /// stream's handle.
    fn geam_batched(
        &self,
        stream: &HipStream,
        shape: &GeamShape,
        items: &[GemmItem<'_, HipBuffer>],
    ) -> Result<(), BackendError> {
        validate_geam(shape, items)?;
        if shape.m == 0 || shape.n == 0 || items.is_empty() {
            return Ok(());
        }
        let zero = Complex64::new(0.0, 0.0);
        let args = GemmArgs {
            op_a: ROCBLAS_OPERATION_NONE,
            op_b: ROCBLAS_OPERATION_NONE,
            m: int("m", shape.m)?,
            n: int("n", shape.n)?,
            k: 0,
            lda: int("lda", shape.lda)?,
            ldb: int("ldb", shape.ldb)?,
            ldc: int("ldc", shape.ldc)?,
            alpha: shape.alpha,
            beta: shape.beta,
        };
        self.bind_stream(stream)?;
        let blas = stream.blas();
        for it in items {
            let (a, b, c) = (address(&it.a), address(&it.b), address(&it.c));
            let mut g = args;
            // rocBLAS takes an operand equal to C for an update in place and then wants its
            // leading dimension to be C's; an operand with a zero scale is not read, so give
            // it C's leading dimension when it happens to coincide with C.
            if shape.alpha == zero && a == c {
                g.lda = g.ldc;
            }
            if shape.beta == zero && b == c {
                g.ldb = g.ldc;
            }
            // SAFETY: the handle is live and bound to this stream; every operand that is read
            // lies inside its buffer and C is either disjoint from them or equal to one with
            // the same leading dimension (validate_geam); the buffers must outlive the call
            // (the trait's contract).
            unsafe { check::zgeam(self.libs, blas.raw(), &g, a, b, c)? };
        }
        Ok(())
    }

    /// One `rocblas_zgemm_strided_batched`.
    fn gemm_strided_batched(
        &self,
        stream: &HipStream,
        shape: &GemmShape,
        batch: &StridedBatch<'_, HipBuffer>,
    ) -> Result<(), BackendError> {
        validate_strided(shape, batch)?;
        if shape.is_empty() || batch.count == 0 {
            return Ok(());
        }
        let args = gemm_args(shape)?;
        let count = int("batch count", batch.count)?;
        let a = (address(&batch.a), stride("stride_a", batch.stride_a)?);
        let b = (address(&batch.b), stride("stride_b", batch.stride_b)?);
        let c = (address(&batch.c), stride("stride_c", batch.stride_c)?);
        self.bind_stream(stream)?;
        let blas = stream.blas();
        // SAFETY: the handle is live and bound to this stream; every item's operands lie
        // inside their buffers (validate_strided); the buffers must outlive the GEMM (the
        // trait's contract).
        unsafe { check::zgemm_strided_batched(self.libs, blas.raw(), &args, a, b, c, count) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_beyond_rocblas_int_are_invalid_arguments() {
        let big = GemmShape::dense(1 << 31, 1, 1);
        assert!(matches!(
            gemm_args(&big),
            Err(BackendError::InvalidArgument {
                op: BackendOp::Gemm,
                ..
            })
        ));
        let ok = gemm_args(&GemmShape::dense(3, 4, 5)).ok();
        assert_eq!(
            ok.map(|g| (g.m, g.n, g.k, g.lda, g.ldb, g.ldc)),
            Some((3, 4, 5, 3, 5, 3))
        );
        assert_eq!(operation(Op::C), ROCBLAS_OPERATION_CONJUGATE_TRANSPOSE);
    }
}
