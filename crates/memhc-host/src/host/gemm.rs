//! The host backend's batched BLAS: GEMM through faer's `matmul`, and matrix addition (GEAM),
//! on column-major views of locked buffers.
//!
//! A queued batch locks every buffer it touches once, in handle order (so that workers of
//! different streams never deadlock): shared for buffers it only reads, exclusive for buffers
//! that hold an output. An input that lives in an exclusively locked buffer (the same buffer as
//! some output, at a disjoint range) is copied out first, so that no slice is borrowed both
//! ways.

use std::borrow::Cow;
use std::sync::{Arc, RwLockReadGuard, RwLockWriteGuard};

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use num_complex::Complex64;

use super::Cell;
use memhc_backend::gemm::{GeamShape, GemmShape, Op, extent};
use memhc_backend::{BackendError, BackendOp};

/// An operand of one item: which of the job's buffers, and the element offset in it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Operand {
    pub buffer: usize,
    pub offset: usize,
}

/// One item of a queued batch.
#[derive(Clone, Copy, Debug)]
pub(super) struct Item {
    pub a: Operand,
    pub b: Operand,
    pub c: Operand,
}

/// What each item of a batch computes.
#[derive(Clone, Copy, Debug)]
pub(super) enum Kernel {
    /// `C = alpha op(A) op(B) + beta C`.
    Gemm(GemmShape),
    /// `C = alpha A + beta B`.
    Geam(GeamShape),
}

impl Kernel {
    /// Elements of A, B and C each item touches (zero for an operand that is not read).
    fn extents(&self) -> (usize, usize, usize) {
        let zero = Complex64::new(0.0, 0.0);
        match self {
            Kernel::Gemm(s) if s.m == 0 || s.n == 0 => (0, 0, 0),
            Kernel::Gemm(s) if s.k == 0 => (0, 0, s.c_extent()),
            Kernel::Gemm(s) => (s.a_extent(), s.b_extent(), s.c_extent()),
            Kernel::Geam(s) => (
                if s.alpha == zero {
                    0
                } else {
                    extent(s.m, s.n, s.lda)
                },
                if s.beta == zero {
                    0
                } else {
                    extent(s.m, s.n, s.ldb)
                },
                extent(s.m, s.n, s.ldc),
            ),
        }
    }
}

/// Everything a worker needs to run a batch.
pub(super) struct Batch {
    pub kernel: Kernel,
    /// The distinct buffers, sorted by handle, each with whether it holds an output.
    pub buffers: Vec<(Arc<Cell>, bool)>,
    pub items: Vec<Item>,
    pub par: Par,
}

type Reader<'a> = RwLockReadGuard<'a, Vec<Complex64>>;
type Writer<'a> = RwLockWriteGuard<'a, Vec<Complex64>>;

fn poisoned() -> BackendError {
    BackendError::Async {
        op: BackendOp::Gemm,
        message: "a buffer lock was poisoned by an earlier failure".into(),
    }
}

impl Batch {
    /// Runs every item in order.
    pub(super) fn run(self) -> Result<(), BackendError> {
        // Index i of `readers` or of `writers` (never both) holds the lock of buffer i. Keeping
        // them apart lets an item borrow inputs from `readers` while it mutates `writers`.
        let mut readers: Vec<Option<Reader<'_>>> = Vec::with_capacity(self.buffers.len());
        let mut writers: Vec<Option<Writer<'_>>> = Vec::with_capacity(self.buffers.len());
        for (cell, writes) in &self.buffers {
            if *writes {
                readers.push(None);
                writers.push(Some(cell.data.write().map_err(|_| poisoned())?));
            } else {
                readers.push(Some(cell.data.read().map_err(|_| poisoned())?));
                writers.push(None);
            }
        }
        let (ea, eb, ec) = self.kernel.extents();
        for item in &self.items {
            let a = input(&readers, &writers, item.a, ea)?;
            let b = input(&readers, &writers, item.b, eb)?;
            let c = writers[item.c.buffer].as_mut().ok_or_else(|| {
                BackendError::invalid(BackendOp::Gemm, "output buffer not locked for writing")
            })?;
            let c = &mut c[item.c.offset..item.c.offset + ec];
            match &self.kernel {
                Kernel::Gemm(shape) => gemm_one(shape, &a, &b, c, self.par),
                Kernel::Geam(shape) => geam_one(shape, &a, &b, c),
            }
        }
        Ok(())
    }
}

/// An input operand: borrowed from a shared lock, or copied out of an exclusive one. An operand
/// that is not read (extent 0) is empty, whatever its offset.
fn input<'r>(
    readers: &'r [Option<Reader<'_>>],
    writers: &[Option<Writer<'_>>],
    op: Operand,
    extent: usize,
) -> Result<Cow<'r, [Complex64]>, BackendError> {
    if extent == 0 {
        return Ok(Cow::Borrowed(&[]));
    }
    let range = op.offset..op.offset + extent;
    match (&readers[op.buffer], &writers[op.buffer]) {
        (Some(g), _) => Ok(Cow::Borrowed(&g[range])),
        (None, Some(g)) => Ok(Cow::Owned(g[range].to_vec())),
        (None, None) => Err(BackendError::invalid(
            BackendOp::Gemm,
            "input buffer not locked",
        )),
    }
}

/// One `C = alpha op(A) op(B) + beta C` with faer. Arguments were validated when the batch was
/// queued.
pub(super) fn gemm_one(
    s: &GemmShape,
    a: &[Complex64],
    b: &[Complex64],
    c: &mut [Complex64],
    par: Par,
) {
    let mut dst = MatMut::from_column_major_slice_with_stride_mut(c, s.m, s.n, s.ldc);
    let zero = Complex64::new(0.0, 0.0);
    let one = Complex64::new(1.0, 0.0);
    let accum = if s.beta == zero {
        Accum::Replace
    } else {
        if s.beta != one {
            for j in 0..s.n {
                for x in dst.as_mut().col_mut(j).iter_mut() {
                    *x *= s.beta;
                }
            }
        }
        Accum::Add
    };
    let (ar, ac) = s.a_stored();
    let (br, bc) = s.b_stored();
    let a = MatRef::from_column_major_slice_with_stride(a, ar, ac, s.lda);
    let b = MatRef::from_column_major_slice_with_stride(b, br, bc, s.ldb);
    // op(X) is a view: transposition and conjugation are free. The conjugated views have a
    // different element type, hence one call per combination.
    match (s.op_a, s.op_b) {
        (Op::C, Op::C) => matmul(dst, accum, a.adjoint(), b.adjoint(), s.alpha, par),
        (Op::C, ob) => matmul(dst, accum, a.adjoint(), plain(b, ob), s.alpha, par),
        (oa, Op::C) => matmul(dst, accum, plain(a, oa), b.adjoint(), s.alpha, par),
        (oa, ob) => matmul(dst, accum, plain(a, oa), plain(b, ob), s.alpha, par),
    }
}

/// One `C = alpha A + beta B`, element by element (an operand with a zero scale is not read).
pub(super) fn geam_one(s: &GeamShape, a: &[Complex64], b: &[Complex64], c: &mut [Complex64]) {
    let zero = Complex64::new(0.0, 0.0);
    for j in 0..s.n {
        for i in 0..s.m {
            let mut v = zero;
            if s.alpha != zero {
                v += s.alpha * a[i + j * s.lda];
            }
            if s.beta != zero {
                v += s.beta * b[i + j * s.ldb];
            }
            c[i + j * s.ldc] = v;
        }
    }
}

fn plain(m: MatRef<'_, Complex64>, op: Op) -> MatRef<'_, Complex64> {
    match op {
        Op::T => m.transpose(),
        Op::N | Op::C => m,
    }
}
