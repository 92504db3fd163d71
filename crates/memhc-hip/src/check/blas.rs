//! The checked rocBLAS calls: handles (create, bind to a stream, destroy) and the three GEMM
//! forms memhc uses (pointer-array batched, strided batched, GEAM), each returning
//! `Result<_, BackendError>` through [`blas()`](super::blas()) (the status check).

use memhc_backend::BackendError;
use num_complex::Complex64;

use super::{Libs, blas, device_ptr};
use crate::ffi::{
    HipStreamT, ROCBLAS_OPERATION_NONE, ROCBLAS_POINTER_MODE_HOST, RocblasHandle, RocblasInt,
    RocblasOperation, RocblasStride,
};

/// Creates a rocBLAS handle on the current device, bound to `stream`, with alpha and beta read
/// from host memory.
///
/// # Safety
/// `stream` is a live stream of the current device that outlives the handle.
pub(crate) unsafe fn blas_create(
    libs: Libs,
    stream: HipStreamT,
) -> Result<RocblasHandle, BackendError> {
    let mut h: RocblasHandle = std::ptr::null_mut();
    // SAFETY: writes one handle through a valid pointer.
    blas(libs, "rocblas_create_handle", unsafe {
        (libs.blas.rocblas_create_handle)(&mut h)
    })?;
    // SAFETY: `h` is the live handle just created; the caller guarantees the stream.
    let configured = blas(libs, "rocblas_set_stream", unsafe {
        (libs.blas.rocblas_set_stream)(h, stream)
    })
    .and_then(|()| {
        // SAFETY: `h` is live; the mode is one of rocBLAS's two.
        blas(libs, "rocblas_set_pointer_mode", unsafe {
            (libs.blas.rocblas_set_pointer_mode)(h, ROCBLAS_POINTER_MODE_HOST)
        })
    });
    if let Err(e) = configured {
        // SAFETY: `h` is live and destroyed here only.
        let _ = unsafe { blas_destroy(libs, h) };
        return Err(e);
    }
    Ok(h)
}

/// Destroys a rocBLAS handle.
///
/// # Safety
/// `handle` came from [`blas_create`] and is destroyed once.
pub(crate) unsafe fn blas_destroy(libs: Libs, handle: RocblasHandle) -> Result<(), BackendError> {
    // SAFETY: the caller guarantees the handle is live and destroyed once.
    blas(libs, "rocblas_destroy_handle", unsafe {
        (libs.blas.rocblas_destroy_handle)(handle)
    })
}

/// The scalars, sizes and operations of one rocBLAS GEMM call, already converted to rocBLAS's
/// 32-bit integers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GemmArgs {
    /// Operation on A.
    pub(crate) op_a: RocblasOperation,
    /// Operation on B.
    pub(crate) op_b: RocblasOperation,
    /// Rows of C.
    pub(crate) m: RocblasInt,
    /// Columns of C.
    pub(crate) n: RocblasInt,
    /// Inner dimension.
    pub(crate) k: RocblasInt,
    /// Leading dimension of A.
    pub(crate) lda: RocblasInt,
    /// Leading dimension of B.
    pub(crate) ldb: RocblasInt,
    /// Leading dimension of C.
    pub(crate) ldc: RocblasInt,
    /// Scale of the product.
    pub(crate) alpha: Complex64,
    /// Scale of the previous C.
    pub(crate) beta: Complex64,
}

/// Enqueues `rocblas_zgemm_batched` on the handle's stream; `tables` is the device address of
/// the A pointers, then the B pointers, then the C pointers (`count` each).
///
/// # Safety
/// `handle` is live; `tables` holds `3 * count` device pointers that are valid operands for
/// `g` (inside their allocations), uploaded before this call in the handle's stream order, and
/// the table and the operands stay allocated until the GEMM completes.
pub(crate) unsafe fn zgemm_batched(
    libs: Libs,
    handle: RocblasHandle,
    g: &GemmArgs,
    tables: u64,
    count: RocblasInt,
) -> Result<(), BackendError> {
    let step = 8 * count as u64;
    // SAFETY: the caller guarantees the handle, the tables and the operands; alpha and beta
    // are host values read during the call (pointer mode host).
    blas(libs, "rocblas_zgemm_batched", unsafe {
        (libs.blas.rocblas_zgemm_batched)(
            handle,
            g.op_a,
            g.op_b,
            g.m,
            g.n,
            g.k,
            &g.alpha,
            device_ptr(tables),
            g.lda,
            device_ptr(tables + step),
            g.ldb,
            &g.beta,
            device_ptr(tables + 2 * step),
            g.ldc,
            count,
        )
    })
}

/// Enqueues `rocblas_zgemm_strided_batched` on the handle's stream. Addresses are device
/// addresses; strides are in elements.
///
/// # Safety
/// `handle` is live; every item's operands lie inside live allocations that stay allocated
/// until the GEMM completes.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn zgemm_strided_batched(
    libs: Libs,
    handle: RocblasHandle,
    g: &GemmArgs,
    (a, stride_a): (u64, RocblasStride),
    (b, stride_b): (u64, RocblasStride),
    (c, stride_c): (u64, RocblasStride),
    count: RocblasInt,
) -> Result<(), BackendError> {
    // SAFETY: the caller guarantees the handle and the operands; alpha and beta are host
    // values read during the call.
    blas(libs, "rocblas_zgemm_strided_batched", unsafe {
        (libs.blas.rocblas_zgemm_strided_batched)(
            handle,
            g.op_a,
            g.op_b,
            g.m,
            g.n,
            g.k,
            &g.alpha,
            device_ptr(a),
            g.lda,
            stride_a,
            device_ptr(b),
            g.ldb,
            stride_b,
            &g.beta,
            device_ptr(c),
            g.ldc,
            stride_c,
            count,
        )
    })
}

/// Enqueues `rocblas_zgeam` (no transposition) on the handle's stream:
/// `C = alpha A + beta B`, all `g.m x g.n` (`g.k`, `g.op_a` and `g.op_b` are not used).
///
/// # Safety
/// `handle` is live; the operands that are read (A unless alpha is zero, B unless beta is
/// zero) and C lie inside live allocations that stay allocated until the call completes.
pub(crate) unsafe fn zgeam(
    libs: Libs,
    handle: RocblasHandle,
    g: &GemmArgs,
    a: u64,
    b: u64,
    c: u64,
) -> Result<(), BackendError> {
    // SAFETY: the caller guarantees the handle and the operands; alpha and beta are host
    // values read during the call.
    blas(libs, "rocblas_zgeam", unsafe {
        (libs.blas.rocblas_zgeam)(
            handle,
            ROCBLAS_OPERATION_NONE,
            ROCBLAS_OPERATION_NONE,
            g.m,
            g.n,
            &g.alpha,
            device_ptr(a),
            g.lda,
            &g.beta,
            device_ptr(b),
            g.ldb,
            device_ptr(c),
            g.ldc,
        )
    })
}
