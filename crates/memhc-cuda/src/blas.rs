//! Checked calls into cuBLAS: the handle, and the three complex-double routines the backend
//! needs (`cublasZgemmBatched`, `cublasZgemmStridedBatched`, `cublasZgeam`). Every `unsafe`
//! block of the cuBLAS side of this crate is here.
//!
//! Call [`crate::probe()`] (which opens cuBLAS) before any of these: cudarc panics on a missing library.

use std::ffi::{c_int, c_longlong};
use std::sync::Arc;

use cudarc::cublas::result::{self, CublasError};
use cudarc::cublas::sys::{self, cuDoubleComplex, cublasHandle_t, cublasOperation_t};
use cudarc::driver::sys::CUstream;
use memhc_backend::gemm::Op;
use memhc_backend::{BackendError, BackendOp};
use num_complex::Complex64;

use crate::context::Context;
use crate::driver::DevicePtr;

fn fail(call: &'static str, e: CublasError) -> BackendError {
    BackendError::Driver {
        call,
        message: format!("{:?}", e.0),
    }
}

fn op(o: Op) -> cublasOperation_t {
    match o {
        Op::N => cublasOperation_t::CUBLAS_OP_N,
        Op::T => cublasOperation_t::CUBLAS_OP_T,
        Op::C => cublasOperation_t::CUBLAS_OP_C,
    }
}

fn scalar(z: Complex64) -> cuDoubleComplex {
    cuDoubleComplex { x: z.re, y: z.im }
}

/// A size as cuBLAS's 32-bit `int`, or a clear error.
pub(crate) fn int(what: &str, v: usize) -> Result<c_int, BackendError> {
    c_int::try_from(v).map_err(|_| {
        BackendError::invalid(
            BackendOp::Gemm,
            format!("{what} = {v} exceeds cuBLAS's 32-bit int"),
        )
    })
}

/// A stride as cuBLAS's `long long`, in elements.
pub(crate) fn long(what: &str, v: usize) -> Result<c_longlong, BackendError> {
    c_longlong::try_from(v).map_err(|_| {
        BackendError::invalid(
            BackendOp::Gemm,
            format!("{what} = {v} exceeds cuBLAS's 64-bit stride"),
        )
    })
}

/// A cuBLAS handle, bound to one stream for its whole life, destroyed on drop (before the
/// stream). Owned by that stream, which serialises the calls on it behind a lock.
#[derive(Debug)]
pub struct CublasHandle {
    raw: cublasHandle_t,
    ctx: Arc<Context>,
}

// SAFETY: a cuBLAS handle may be used from any thread, one at a time; its owner (one stream)
// serialises the calls on it behind a mutex. Not `Sync`.
unsafe impl Send for CublasHandle {}

impl CublasHandle {
    /// Creates a handle in `ctx` and binds it to `stream`. The pointer mode stays the default
    /// (scalars on the host).
    ///
    /// # Safety
    /// `stream` is a live stream of `ctx` that outlives the handle.
    pub(crate) unsafe fn new(ctx: &Arc<Context>, stream: CUstream) -> Result<Self, BackendError> {
        ctx.bind()?;
        let h = result::create_handle().map_err(|e| fail("cublasCreate", e))?;
        let handle = CublasHandle {
            raw: h,
            ctx: Arc::clone(ctx),
        };
        // SAFETY: `h` was just created; the caller keeps `stream` alive.
        unsafe { result::set_stream(h, stream.cast()) }.map_err(|e| fail("cublasSetStream", e))?;
        Ok(handle)
    }

    /// The library's version, as `10000 * major + 100 * minor + patch`.
    pub(crate) fn version(&self) -> Result<i32, BackendError> {
        let mut v: c_int = 0;
        // SAFETY: the handle is live; cuBLAS writes one int.
        unsafe { sys::cublasGetVersion_v2(self.raw, &mut v) }
            .result()
            .map_err(|e| fail("cublasGetVersion", e))?;
        Ok(v)
    }

    /// Enqueues `C_i = alpha op(A_i) op(B_i) + beta C_i` for the `count` items whose
    /// addresses are in the device pointer arrays `a`, `b` and `c`.
    ///
    /// # Safety
    /// The arrays hold `count` valid device addresses each, of matrices that fit the sizes;
    /// the arrays and matrices stay allocated until the work completes; the handle's context
    /// is current.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn zgemm_batched(
        &self,
        ops: (Op, Op),
        (m, n, k): (c_int, c_int, c_int),
        alpha: Complex64,
        (a, lda): (DevicePtr, c_int),
        (b, ldb): (DevicePtr, c_int),
        beta: Complex64,
        (c, ldc): (DevicePtr, c_int),
        count: c_int,
    ) -> Result<(), BackendError> {
        let (alpha, beta) = (scalar(alpha), scalar(beta));
        // SAFETY: the caller's contract; the scalars are read before the call returns.
        unsafe {
            sys::cublasZgemmBatched(
                self.raw,
                op(ops.0),
                op(ops.1),
                m,
                n,
                k,
                &alpha,
                a as usize as *const *const cuDoubleComplex,
                lda,
                b as usize as *const *const cuDoubleComplex,
                ldb,
                &beta,
                c as usize as *const *mut cuDoubleComplex,
                ldc,
                count,
            )
        }
        .result()
        .map_err(|e| fail("cublasZgemmBatched", e))
    }

    /// Enqueues the strided batch `C_i = alpha op(A_i) op(B_i) + beta C_i` with
    /// `X_i = x + i * stride_x`.
    ///
    /// # Safety
    /// Every matrix of the batch lies inside a live allocation until the work completes; the
    /// handle's context is current.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn zgemm_strided_batched(
        &self,
        ops: (Op, Op),
        (m, n, k): (c_int, c_int, c_int),
        alpha: Complex64,
        (a, lda, stride_a): (DevicePtr, c_int, c_longlong),
        (b, ldb, stride_b): (DevicePtr, c_int, c_longlong),
        beta: Complex64,
        (c, ldc, stride_c): (DevicePtr, c_int, c_longlong),
        count: c_int,
    ) -> Result<(), BackendError> {
        let (alpha, beta) = (scalar(alpha), scalar(beta));
        // SAFETY: the caller's contract; the scalars are read before the call returns.
        unsafe {
            sys::cublasZgemmStridedBatched(
                self.raw,
                op(ops.0),
                op(ops.1),
                m,
                n,
                k,
                &alpha,
                a as usize as *const cuDoubleComplex,
                lda,
                stride_a,
                b as usize as *const cuDoubleComplex,
                ldb,
                stride_b,
                &beta,
                c as usize as *mut cuDoubleComplex,
                ldc,
                stride_c,
                count,
            )
        }
        .result()
        .map_err(|e| fail("cublasZgemmStridedBatched", e))
    }

    /// Enqueues `C = alpha op(A) op(B) + beta C`, one complex product computed with three
    /// real products (`cublasZgemm3m`, Gauss's trick).
    ///
    /// # Safety
    /// The matrices lie inside live allocations until the work completes; C is disjoint from A
    /// and B; the handle's context is current; the loaded cuBLAS has `cublasZgemm3m` (checked
    /// by `probe::has_gauss`: cudarc panics on a missing symbol).
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn zgemm3m(
        &self,
        ops: (Op, Op),
        (m, n, k): (c_int, c_int, c_int),
        alpha: Complex64,
        (a, lda): (DevicePtr, c_int),
        (b, ldb): (DevicePtr, c_int),
        beta: Complex64,
        (c, ldc): (DevicePtr, c_int),
    ) -> Result<(), BackendError> {
        let (alpha, beta) = (scalar(alpha), scalar(beta));
        // SAFETY: the caller's contract; the scalars are read before the call returns.
        unsafe {
            sys::cublasZgemm3m(
                self.raw,
                op(ops.0),
                op(ops.1),
                m,
                n,
                k,
                &alpha,
                a as usize as *const cuDoubleComplex,
                lda,
                b as usize as *const cuDoubleComplex,
                ldb,
                &beta,
                c as usize as *mut cuDoubleComplex,
                ldc,
            )
        }
        .result()
        .map_err(|e| fail("cublasZgemm3m", e))
    }

    /// Enqueues `C = alpha A + beta B` (no transposition), `m x n`.
    ///
    /// # Safety
    /// The matrices lie inside live allocations until the work completes; C is disjoint from
    /// A and B or exactly one of them; the handle's context is current.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn zgeam(
        &self,
        (m, n): (c_int, c_int),
        alpha: Complex64,
        (a, lda): (DevicePtr, c_int),
        beta: Complex64,
        (b, ldb): (DevicePtr, c_int),
        (c, ldc): (DevicePtr, c_int),
    ) -> Result<(), BackendError> {
        let (alpha, beta) = (scalar(alpha), scalar(beta));
        // SAFETY: the caller's contract; the scalars are read before the call returns.
        unsafe {
            sys::cublasZgeam(
                self.raw,
                cublasOperation_t::CUBLAS_OP_N,
                cublasOperation_t::CUBLAS_OP_N,
                m,
                n,
                &alpha,
                a as usize as *const cuDoubleComplex,
                lda,
                &beta,
                b as usize as *const cuDoubleComplex,
                ldb,
                c as usize as *mut cuDoubleComplex,
                ldc,
            )
        }
        .result()
        .map_err(|e| fail("cublasZgeam", e))
    }
}

impl Drop for CublasHandle {
    fn drop(&mut self) {
        if self.ctx.bind().is_ok() {
            // SAFETY: the handle is destroyed once, in its context, before its stream.
            let _ = unsafe { result::destroy_handle(self.raw) };
        }
    }
}
