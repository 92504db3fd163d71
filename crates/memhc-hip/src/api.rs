//! [`Hip`]: the [`DeviceApi`] of memhc-gpu on the HIP runtime and rocBLAS, and [`probe`].
//! Each method makes its device current and one checked call of [`crate::check`]; its `unsafe`
//! blocks are those calls, whose handles the owning types of [`crate::handles`] keep alive and
//! whose ranges are checked here or were validated by memhc-gpu.

use memhc_backend::MemInfo;
use memhc_backend::gemm::{GemmShape, Op};
use memhc_backend::{BackendError, BackendOp};
use memhc_gpu::{
    BatchedGemm, DeviceApi, Geam, HostWait, PitchedCopy, Probe, StridedGemm, Unregistered,
    library_path,
};
use num_complex::Complex64;

use crate::check::{self, GemmArgs, Libs};
use crate::ffi::{
    self, HIP_DEVICE_SCHEDULE_BLOCKING_SYNC, HIP_DEVICE_SCHEDULE_SPIN, HIP_DEVICE_SCHEDULE_YIELD,
    HIP_ERROR_NO_DEVICE, HIP_MEMCPY_DEVICE_TO_HOST, HIP_MEMCPY_HOST_TO_DEVICE,
    ROCBLAS_OPERATION_CONJUGATE_TRANSPOSE, ROCBLAS_OPERATION_NONE, ROCBLAS_OPERATION_TRANSPOSE,
    RocblasInt,
};
use crate::handles::{BlasHandle, HipEventHandle, HipMemory, HipPinned, HipStreamHandle};

/// Loads the HIP runtime and rocBLAS (once per process), checks that every function this
/// backend calls is there, and counts the devices. Fails with a one-line
/// [`BackendError::Unavailable`] naming what is missing: the library (and where it was looked
/// for), a function, or a device. Never panics.
pub fn probe() -> Result<Probe, BackendError> {
    let libs = ffi::libraries().map_err(BackendError::Unavailable)?;
    let runtime_library = library_path(ffi::HIP.stem, &libs.hip_opened);
    let blas_library = library_path(ffi::ROCBLAS.stem, &libs.blas_opened);
    let devices = match check::device_count(libs) {
        Ok(n) => n,
        Err((code, _)) if code == HIP_ERROR_NO_DEVICE => 0,
        Err((_, e)) => {
            return Err(BackendError::Unavailable(format!(
                "no usable AMD GPU: {e} (HIP runtime {runtime_library})"
            )));
        }
    };
    if devices == 0 {
        return Err(BackendError::Unavailable(format!(
            "no AMD GPU: the HIP runtime ({runtime_library}) sees no device"
        )));
    }
    Ok(Probe {
        runtime_library,
        blas_library,
        devices,
    })
}

/// One AMD device opened through the HIP runtime and rocBLAS: the [`DeviceApi`] that
/// [`HipBackend`](crate::HipBackend) runs on. It offers no managed memory (see the
/// [crate documentation](crate)).
#[derive(Debug)]
pub struct Hip {
    libs: Libs,
    device: i32,
    wait: HostWait,
    probe: Probe,
    name: String,
    runtime_version: String,
    blas_version: String,
}

impl Hip {
    /// The HIP device index in use.
    pub fn device(&self) -> usize {
        self.device as usize
    }

    /// What [`probe`] found when the device was opened.
    pub fn probe(&self) -> &Probe {
        &self.probe
    }

    /// Makes this device current on the calling thread.
    fn bind(&self) -> Result<(), BackendError> {
        check::set_device(self.libs, self.device)
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

impl DeviceApi for Hip {
    const KIND: &'static str = "HIP";
    type Memory = HipMemory;
    type Pinned = HipPinned;
    type Stream = HipStreamHandle;
    type Event = HipEventHandle;
    type Blas = BlasHandle;

    fn open(device: usize, wait: HostWait) -> Result<Self, BackendError> {
        let probe = probe()?;
        let libs = ffi::libraries().map_err(BackendError::Unavailable)?;
        if device >= probe.devices {
            return Err(BackendError::Unavailable(format!(
                "HIP device {device} requested, but the HIP runtime sees {} device(s)",
                probe.devices
            )));
        }
        let index = i32::try_from(device).map_err(|_| {
            BackendError::Unavailable(format!("HIP device index {device} is too large"))
        })?;
        check::set_device(libs, index)?;
        let schedule = match wait {
            HostWait::Auto => None,
            HostWait::Spin => Some(HIP_DEVICE_SCHEDULE_SPIN),
            HostWait::Yield => Some(HIP_DEVICE_SCHEDULE_YIELD),
            HostWait::Block => Some(HIP_DEVICE_SCHEDULE_BLOCKING_SYNC),
        };
        if let Some(flags) = schedule {
            check::set_device_flags(libs, flags)?;
        }
        Ok(Hip {
            libs,
            device: index,
            wait,
            name: check::device_name(libs, index)?,
            runtime_version: check::runtime_version(libs)?,
            blas_version: check::blas_version(libs)?,
            probe,
        })
    }

    fn device_name(&self) -> &str {
        &self.name
    }

    fn describe(&self, budget: usize) -> String {
        format!(
            "AMD {} (HIP device {} of {}; HIP runtime {} from {}; rocBLAS {} from {}; \
             budget {budget} bytes)",
            self.name,
            self.device,
            self.probe.devices,
            self.runtime_version,
            self.probe.runtime_library,
            self.blas_version,
            self.probe.blas_library,
        )
    }

    fn mem_get_info(&self) -> Result<MemInfo, BackendError> {
        self.bind()?;
        let (free, total) = check::mem_get_info(self.libs)?;
        Ok(MemInfo { free, total })
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.bind()?;
        check::device_synchronize(self.libs)
    }

    fn malloc(&self, bytes: usize) -> Result<HipMemory, BackendError> {
        HipMemory::alloc(self.libs, self.device, bytes)
    }

    fn free(&self, memory: HipMemory) -> Result<(), BackendError> {
        memory.free()
    }

    fn host_alloc(&self, bytes: usize) -> Result<HipPinned, BackendError> {
        self.bind()?;
        HipPinned::new(self.libs, bytes)
    }

    /// A range of a `hipHostMalloc` allocation, freeing nothing when dropped.
    fn host_piece(
        &self,
        chunk: &HipPinned,
        offset: usize,
        bytes: usize,
    ) -> Result<HipPinned, BackendError> {
        chunk.piece(offset, bytes)
    }

    /// `hipHostRegister` (default flags) on the vector's elements, in place.
    fn host_register(&self, memory: Vec<u64>) -> Result<HipPinned, Box<Unregistered>> {
        if let Err(error) = self.bind() {
            return Err(Box::new(Unregistered { memory, error }));
        }
        HipPinned::register(self.libs, memory)
    }

    /// `hipHostUnregister`; the vector back.
    fn host_unregister(&self, pinned: HipPinned) -> Result<Vec<u64>, BackendError> {
        self.bind()?;
        pinned.unregister()
    }

    fn stream_create(&self) -> Result<HipStreamHandle, BackendError> {
        HipStreamHandle::new(self.libs, self.device)
    }

    fn stream_synchronize(&self, stream: &HipStreamHandle) -> Result<(), BackendError> {
        stream.bind()?;
        // SAFETY: the stream is live (borrowed).
        unsafe { check::stream_synchronize(self.libs, stream.raw()) }
    }

    fn event_create(&self) -> Result<HipEventHandle, BackendError> {
        self.bind()?;
        HipEventHandle::new(self.libs, self.wait == HostWait::Block)
    }

    fn timing_event_create(&self) -> Result<HipEventHandle, BackendError> {
        self.bind()?;
        HipEventHandle::timing(self.libs, self.wait == HostWait::Block)
    }

    fn event_elapsed_ms(
        &self,
        start: &HipEventHandle,
        end: &HipEventHandle,
    ) -> Result<f32, BackendError> {
        // SAFETY: both events are live (borrowed).
        unsafe { check::event_elapsed_ms(self.libs, start.raw(), end.raw()) }
    }

    fn event_record(
        &self,
        event: &HipEventHandle,
        stream: &HipStreamHandle,
    ) -> Result<(), BackendError> {
        stream.bind()?;
        // SAFETY: the stream and the event are live (borrowed).
        unsafe { check::event_record(self.libs, event.raw(), stream.raw()) }
    }

    fn stream_wait_event(
        &self,
        stream: &HipStreamHandle,
        event: &HipEventHandle,
    ) -> Result<(), BackendError> {
        stream.bind()?;
        // SAFETY: the stream and the event are live (borrowed).
        unsafe { check::stream_wait_event(self.libs, stream.raw(), event.raw()) }
    }

    fn event_query(&self, event: &HipEventHandle) -> Result<bool, BackendError> {
        // SAFETY: the event is live (borrowed).
        unsafe { check::event_query(self.libs, event.raw()) }
    }

    fn event_synchronize(&self, event: &HipEventHandle) -> Result<(), BackendError> {
        // SAFETY: the event is live (borrowed).
        unsafe { check::event_synchronize(self.libs, event.raw()) }
    }

    fn copy_h2d_async(
        &self,
        stream: &HipStreamHandle,
        src: &HipPinned,
        src_offset: usize,
        dst: &HipMemory,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        let from = src.range(BackendOp::CopyH2D, src_offset, len)?;
        let to = dst.range(BackendOp::CopyH2D, dst_offset, len)?;
        stream.bind()?;
        // SAFETY: both ranges lie inside their allocations (checked just above); `src` is
        // page-locked and, by the DeviceApi contract, untouched by the host until an event
        // after this copy completes; `dst` lives as long as the reference and hipFree waits
        // for the device; the stream is live.
        unsafe {
            check::memcpy_async(
                self.libs,
                check::device_ptr(to),
                from.cast_const().cast(),
                len,
                HIP_MEMCPY_HOST_TO_DEVICE,
                stream.raw(),
            )
        }
    }

    fn copy_h2d_pitched_async(
        &self,
        stream: &HipStreamHandle,
        src: &HipPinned,
        dst: &HipMemory,
        copy: &PitchedCopy,
    ) -> Result<(), BackendError> {
        let ((so, sl), (d_o, dl)) = copy.spans(BackendOp::CopyH2D)?;
        let from = src.range(BackendOp::CopyH2D, so, sl)?;
        let to = dst.range(BackendOp::CopyH2D, d_o, dl)?;
        if copy.bytes() == 0 {
            return Ok(());
        }
        stream.bind()?;
        // SAFETY: `spans` checked the copy's shape and both spans lie inside their
        // allocations (checked just above); `src` is page-locked and, by the DeviceApi
        // contract, untouched by the host until an event after this copy completes; `dst`
        // lives as long as the reference and hipFree waits for the device; the stream is live.
        unsafe {
            pitched(
                self.libs,
                (check::device_ptr(to), copy.dst_pitch, copy.dst_height),
                (from.cast_const().cast(), copy.src_pitch, copy.src_height),
                copy,
                HIP_MEMCPY_HOST_TO_DEVICE,
                stream.raw(),
            )
        }
    }

    fn copy_d2h_pitched_async(
        &self,
        stream: &HipStreamHandle,
        src: &HipMemory,
        dst: &HipPinned,
        copy: &PitchedCopy,
    ) -> Result<(), BackendError> {
        let ((so, sl), (d_o, dl)) = copy.spans(BackendOp::CopyD2H)?;
        let from = src.range(BackendOp::CopyD2H, so, sl)?;
        let to = dst.range(BackendOp::CopyD2H, d_o, dl)?;
        if copy.bytes() == 0 {
            return Ok(());
        }
        stream.bind()?;
        // SAFETY: as for `copy_h2d_pitched_async`, the other way round: `dst` is page-locked and
        // not read by the host until an event after this copy completes.
        unsafe {
            pitched(
                self.libs,
                (to.cast(), copy.dst_pitch, copy.dst_height),
                (
                    check::device_ptr::<std::ffi::c_void>(from).cast_const(),
                    copy.src_pitch,
                    copy.src_height,
                ),
                copy,
                HIP_MEMCPY_DEVICE_TO_HOST,
                stream.raw(),
            )
        }
    }

    fn copy_d2h_async(
        &self,
        stream: &HipStreamHandle,
        src: &HipMemory,
        src_offset: usize,
        dst: &HipPinned,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        let from = src.range(BackendOp::CopyD2H, src_offset, len)?;
        let to = dst.range(BackendOp::CopyD2H, dst_offset, len)?;
        stream.bind()?;
        // SAFETY: as for `copy_h2d_async`, the other way round: `dst` is page-locked and not
        // read by the host until an event after this copy completes.
        unsafe {
            check::memcpy_async(
                self.libs,
                to.cast(),
                check::device_ptr::<std::ffi::c_void>(from).cast_const(),
                len,
                HIP_MEMCPY_DEVICE_TO_HOST,
                stream.raw(),
            )
        }
    }

    fn blas_create(&self, stream: &HipStreamHandle) -> Result<BlasHandle, BackendError> {
        BlasHandle::new(self.libs, stream)
    }

    fn gemm_batched(&self, blas: &BlasHandle, call: &BatchedGemm) -> Result<(), BackendError> {
        let args = gemm_args(call.shape())?;
        let count = int("batch count", call.count())?;
        // SAFETY: the handle is live and bound to its stream; a `BatchedGemm` is made only by
        // memhc-gpu once every item was validated in bounds of live buffers and its three
        // pointer arrays (A, then B, then C, back to back from `a_array`, the layout
        // `zgemm_batched` reads) were uploaded, on this handle's stream and before this call,
        // into a table that is reused only by later work on it.
        unsafe { check::zgemm_batched(self.libs, blas.raw(), &args, call.a_array(), count) }
    }

    fn gemm_strided_batched(
        &self,
        blas: &BlasHandle,
        call: &StridedGemm,
    ) -> Result<(), BackendError> {
        let args = gemm_args(call.shape())?;
        let count = int("batch count", call.count())?;
        let (a, b, c) = (call.a(), call.b(), call.c());
        let a = (a.address, stride("stride_a", a.stride)?);
        let b = (b.address, stride("stride_b", b.stride)?);
        let c = (c.address, stride("stride_c", c.stride)?);
        // SAFETY: the handle is live and bound to its stream; a `StridedGemm` is made only by
        // memhc-gpu once every item's operands were validated inside their live buffers.
        unsafe { check::zgemm_strided_batched(self.libs, blas.raw(), &args, a, b, c, count) }
    }

    /// One `rocblas_zgeam` per item (rocBLAS has no batched GEAM).
    fn geam(&self, blas: &BlasHandle, call: &Geam) -> Result<(), BackendError> {
        let s = call.shape();
        let zero = Complex64::new(0.0, 0.0);
        let args = GemmArgs {
            op_a: ROCBLAS_OPERATION_NONE,
            op_b: ROCBLAS_OPERATION_NONE,
            m: int("m", s.m)?,
            n: int("n", s.n)?,
            k: 0,
            lda: int("lda", s.lda)?,
            ldb: int("ldb", s.ldb)?,
            ldc: int("ldc", s.ldc)?,
            alpha: s.alpha,
            beta: s.beta,
        };
        for it in call.items() {
            let mut g = args;
            // rocBLAS takes an operand equal to C for an update in place and then wants its
            // leading dimension to be C's; an operand with a zero scale is not read, so give
            // it C's leading dimension when it happens to coincide with C.
            if s.alpha == zero && it.a == it.c {
                g.lda = g.ldc;
            }
            if s.beta == zero && it.b == it.c {
                g.ldb = g.ldc;
            }
            // SAFETY: the handle is live and bound to its stream; a `Geam` is made only by
            // memhc-gpu once every operand that is read was validated inside its live buffer
            // and each C disjoint from its A and B or equal to one with the same leading
            // dimension.
            unsafe { check::zgeam(self.libs, blas.raw(), &g, it.a, it.b, it.c)? };
        }
        Ok(())
    }

    fn managed_memory(&self) -> Result<(), String> {
        Err(
            "the HIP backend leaves it out: hipMallocManaged migrates pages only with XNACK \
             enabled, so the unified-memory baseline runs on CUDA"
                .into(),
        )
    }
}

/// Enqueues `copy` (checked by [`PitchedCopy::spans`], not empty) from `src` to `dst`, each
/// with its pitch and rows per slice: `hipMemcpy2DAsync` at depth 1 (today's tiled copies, one
/// per component), else `hipMemcpy3DAsync` (one per block column).
///
/// # Safety
/// As [`check::memcpy_3d_async`], for the spans `copy` gives each side.
unsafe fn pitched(
    libs: check::Libs,
    (dst, dpitch, dheight): (*mut std::ffi::c_void, usize, usize),
    (src, spitch, sheight): (*const std::ffi::c_void, usize, usize),
    copy: &PitchedCopy,
    kind: std::ffi::c_int,
    stream: crate::ffi::HipStreamT,
) -> Result<(), BackendError> {
    if copy.depth == 1 {
        // SAFETY: the caller's contract; at depth 1 the spans are those of a 2D copy.
        unsafe {
            check::memcpy_2d_async(
                libs,
                (dst, dpitch),
                (src, spitch),
                (copy.width, copy.height),
                kind,
                stream,
            )
        }
    } else {
        // SAFETY: the caller's contract.
        unsafe {
            check::memcpy_3d_async(
                libs,
                (dst, dpitch, dheight),
                (src, spitch, sheight),
                (copy.width, copy.height, copy.depth),
                kind,
                stream,
            )
        }
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
