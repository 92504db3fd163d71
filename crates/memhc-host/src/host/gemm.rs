//! The host backend's batched BLAS: GEMM through faer's `matmul`, and matrix addition (GEAM),
//! on column-major views of locked buffers.
//!
//! A queued batch locks every buffer it touches once, in handle order (so that workers of
//! different streams never deadlock): shared for buffers it only reads, exclusive for buffers
//! that hold an output. An input that lives in an exclusively locked buffer (the same buffer as
//! some output, at a disjoint range) is copied out first, so that no slice is borrowed both
//! ways.
//!
//! The items of a GEMM batch run one after another, each on all the backend's threads, or,
//! when there are enough of them or they are small ([`Batch::items_in_parallel`]), spread over
//! the threads with each product sequential inside: small products gain little from threads of
//! their own, and independent products need no synchronisation. A product that runs on all
//! the threads (such as the one GEMM of order `4N` of a meson contraction on tiled nodes) is
//! itself cut into a few panels of output rows, each a sequential faer product, spread over
//! the threads ([`panels`]), unless it is small, where faer's own parallel split is kept. A
//! batch with less work in all than a fork and join costs ([`SERIAL_BATCH`]) runs on its
//! stream's worker alone, each product sequential. The outputs of one batch are validated
//! disjoint from each other and from every input, so the order of the items cannot change a
//! result. In parallel, each item gets its output as its own `&mut` slice, carved out of the
//! locked buffer with `split_at_mut`, and each panel its own rows of that slice through faer's
//! `par_row_partition_mut`: safe Rust, no data race possible.

use std::borrow::Cow;
use std::sync::{Arc, RwLockReadGuard, RwLockWriteGuard};

use faer::linalg::matmul::matmul;
use faer::traits::Conjugate;
use faer::{Accum, MatMut, MatRef, Par};
use num_complex::Complex64;
use rayon::prelude::*;

use super::memory::{Cell, HostBuffer};
use memhc_backend::gemm::{DeviceRef, GeamShape, GemmItem, GemmShape, Op, extent};
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

/// Products of at most this many multiply-adds (`m n k`) run one per thread even when a batch
/// has fewer items than threads: below it, a product split over threads gains little.
pub(super) const SMALL_PRODUCT: usize = 128 * 128 * 128;

/// A batch of fewer multiply-adds than this in all (`items m n k`) runs on its stream's worker
/// alone, item after item, each product sequential: handing it to other threads costs more than
/// it computes (a fork and join is microseconds; a 2 x 2 product is nanoseconds).
pub(super) const SERIAL_BATCH: usize = 32 * 32 * 32;

type Reader<'a> = RwLockReadGuard<'a, Vec<Complex64>>;
type Writer<'a> = RwLockWriteGuard<'a, Vec<Complex64>>;

fn poisoned() -> BackendError {
    BackendError::Async {
        op: BackendOp::Gemm,
        message: "a buffer lock was poisoned by an earlier failure".into(),
    }
}

impl Batch {
    /// The batch of `items`: the distinct buffers, sorted by handle (the lock order), each
    /// with whether it holds an output, and each item's operands as indices into that list.
    pub(super) fn gather(kernel: Kernel, items: &[GemmItem<'_, HostBuffer>], par: Par) -> Self {
        let mut seen: Vec<(u64, &HostBuffer, bool)> = Vec::with_capacity(3 * items.len());
        for it in items {
            seen.push((it.a.buffer.handle, it.a.buffer, false));
            seen.push((it.b.buffer.handle, it.b.buffer, false));
            seen.push((it.c.buffer.handle, it.c.buffer, true));
        }
        seen.sort_by_key(|(h, _, writes)| (*h, !*writes));
        seen.dedup_by_key(|(h, _, _)| *h); // keeps the first: the writing entry if there is one
        let index = |h: u64| seen.partition_point(|(x, _, _)| *x < h);
        let operand = |r: &DeviceRef<'_, HostBuffer>| Operand {
            buffer: index(r.buffer.handle),
            offset: r.offset,
        };
        let mapped = items
            .iter()
            .map(|it| Item {
                a: operand(&it.a),
                b: operand(&it.b),
                c: operand(&it.c),
            })
            .collect();
        let buffers = seen
            .iter()
            .map(|(_, b, w)| (Arc::clone(&b.cell), *w))
            .collect();
        Batch {
            kernel,
            buffers,
            items: mapped,
            par,
        }
    }

    /// The threads to spread the items over, one item per task, each product sequential
    /// inside; `None` to run the items in turn ([`Batch::par_per_item`] says on how many
    /// threads each). GEMM only, with at least two items and two threads, and at least
    /// [`SERIAL_BATCH`] multiply-adds in all; then whenever the items are at least as many as
    /// the threads, or the products are small ([`SMALL_PRODUCT`]).
    pub(super) fn items_in_parallel(&self) -> Option<usize> {
        let (Kernel::Gemm(shape), Par::Rayon(threads)) = (&self.kernel, self.par) else {
            return None;
        };
        let (threads, items) = (threads.get(), self.items.len());
        let size = shape.m.saturating_mul(shape.n).saturating_mul(shape.k);
        let serial = size.saturating_mul(items) < SERIAL_BATCH;
        (threads > 1 && items > 1 && !serial && (items >= threads || size <= SMALL_PRODUCT))
            .then_some(threads)
    }

    /// How each item runs when the items run in turn: on all threads, unless the batch is
    /// smaller than [`SERIAL_BATCH`] multiply-adds in all (then sequentially, on the worker).
    pub(super) fn par_per_item(&self) -> Par {
        let work = match &self.kernel {
            Kernel::Gemm(s) => s.m.saturating_mul(s.n).saturating_mul(s.k),
            Kernel::Geam(s) => s.m.saturating_mul(s.n),
        };
        if work.saturating_mul(self.items.len()) < SERIAL_BATCH {
            Par::Seq
        } else {
            self.par
        }
    }

    /// Runs every item: in parallel when [`Batch::items_in_parallel`] says so, else in order.
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
        if let (Some(threads), Kernel::Gemm(shape)) = (self.items_in_parallel(), &self.kernel)
            && self.run_parallel(shape, threads, &readers, &mut writers)?
        {
            return Ok(());
        }
        let (ea, eb, ec) = self.kernel.extents();
        let par = self.par_per_item();
        for item in &self.items {
            let a = input(&readers, &writers, item.a, ea)?;
            let b = input(&readers, &writers, item.b, eb)?;
            let c = writers[item.c.buffer].as_mut().ok_or_else(|| {
                BackendError::invalid(BackendOp::Gemm, "output buffer not locked for writing")
            })?;
            let c = &mut c[item.c.offset..item.c.offset + ec];
            match &self.kernel {
                Kernel::Gemm(shape) => gemm_one(shape, &a, &b, c, par),
                Kernel::Geam(shape) => geam_one(shape, &a, &b, c),
            }
        }
        Ok(())
    }

    /// Runs the GEMM items spread over `threads` rayon tasks, each product sequential. Returns
    /// false, having computed nothing, if the outputs cannot be carved into disjoint slices
    /// (validation rules that out; the items then run in order, where any problem is reported).
    fn run_parallel(
        &self,
        shape: &GemmShape,
        threads: usize,
        readers: &[Option<Reader<'_>>],
        writers: &mut [Option<Writer<'_>>],
    ) -> Result<bool, BackendError> {
        let (ea, eb, ec) = self.kernel.extents();
        // Inputs first: those in exclusively locked buffers are copied out before the outputs
        // borrow those buffers mutably.
        let inputs = self
            .items
            .iter()
            .map(|it| {
                Ok((
                    input(readers, writers, it.a, ea)?,
                    input(readers, writers, it.b, eb)?,
                ))
            })
            .collect::<Result<Vec<_>, BackendError>>()?;
        let mut outputs: Vec<Option<&mut [Complex64]>> = Vec::new();
        outputs.resize_with(self.items.len(), || None);
        for (buffer, guard) in writers.iter_mut().enumerate() {
            let Some(guard) = guard else { continue };
            let mut mine: Vec<(usize, usize)> = (self.items.iter().enumerate())
                .filter(|(_, it)| it.c.buffer == buffer)
                .map(|(i, it)| (it.c.offset, i))
                .collect();
            mine.sort_unstable();
            // `rest` is the buffer from element `at` on.
            let (mut rest, mut at): (&mut [Complex64], usize) = (guard.as_mut_slice(), 0);
            for (offset, i) in mine {
                let Some(skip) = offset.checked_sub(at).filter(|&s| s + ec <= rest.len()) else {
                    return Ok(false);
                };
                let (_, tail) = std::mem::take(&mut rest).split_at_mut(skip);
                let (slot, tail) = tail.split_at_mut(ec);
                outputs[i] = Some(slot);
                (rest, at) = (tail, offset + ec);
            }
        }
        let work = outputs
            .into_iter()
            .zip(&inputs)
            .map(|(c, (a, b))| c.map(|c| (c, a, b)))
            .collect::<Option<Vec<_>>>();
        let Some(work) = work else {
            return Ok(false);
        };
        let per_task = work.len().div_ceil(threads);
        work.into_par_iter()
            .with_min_len(per_task)
            .for_each(|(c, a, b)| gemm_one(shape, a, b, c, Par::Seq));
        Ok(true)
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
    let panels = panels(s, par);
    // op(X) is a view: transposition and conjugation are free. The conjugated views have a
    // different element type, hence one call per combination.
    match (s.op_a, s.op_b) {
        (Op::C, Op::C) => product(dst, accum, a.adjoint(), b.adjoint(), s.alpha, par, panels),
        (Op::C, ob) => product(dst, accum, a.adjoint(), plain(b, ob), s.alpha, par, panels),
        (oa, Op::C) => product(dst, accum, plain(a, oa), b.adjoint(), s.alpha, par, panels),
        (oa, ob) => product(dst, accum, plain(a, oa), plain(b, ob), s.alpha, par, panels),
    }
}

/// A product on several threads with at least this many multiply-adds (`m n k`) is split into
/// panels of output rows ([`panels`]). Below it faer's own split is kept: at order 128 (a meson
/// contraction at N = 32) the two were equal on the measured host
/// (docs/results/2026-11-28-host-one-gemm.md).
pub(super) const PANEL_PRODUCT: usize = 256 * 256 * 256;

/// Panels per thread: more than one, so that a thread slowed by other work on the machine
/// leaves panels for the others to take (rayon steals them) instead of all threads waiting for
/// it at the end.
pub(super) const PANELS_PER_THREAD: usize = 2;

/// The fewest rows a panel gets: thinner panels read the whole right factor for too little
/// work.
pub(super) const MIN_PANEL_ROWS: usize = 32;

/// Into how many panels of output rows a product run with `par` is split, each a sequential
/// faer product, the panels spread over rayon's threads; `None` to hand faer the whole product
/// with `par` (one thread; a product below [`PANEL_PRODUCT`]; fewer than two panels of
/// [`MIN_PANEL_ROWS`] rows).
///
/// Why: faer's parallel product cuts one product into fine-grained jobs that its threads take
/// from a shared list, synchronising on spinning barriers; on the measured 2-core host, shared
/// with other work, a complex product of order 512 (a meson contraction at N = 128) ran that
/// way slower than the 64 independent sequential products of order 128, and slower than the
/// same product cut into a few independent sequential panels of rows. Panels of columns were
/// slower still: each packs the whole left factor (docs/results/2026-11-28-host-one-gemm.md).
/// The split changes no result: each output element is computed by one panel with the same
/// kernel and the same order of the sum over `k` as a product on one thread.
pub(super) fn panels(s: &GemmShape, par: Par) -> Option<usize> {
    let Par::Rayon(threads) = par else {
        return None;
    };
    let size = s.m.saturating_mul(s.n).saturating_mul(s.k);
    let count = threads
        .get()
        .saturating_mul(PANELS_PER_THREAD)
        .min(s.m / MIN_PANEL_ROWS);
    (threads.get() > 1 && size >= PANEL_PRODUCT && count >= 2).then_some(count)
}

/// `dst (+)= alpha lhs rhs`: in `panels` panels of rows of `dst` (and of `lhs`), each a
/// sequential product, spread over rayon's threads; or, without panels, one faer product on
/// `par`.
fn product<L, R>(
    dst: MatMut<'_, Complex64>,
    accum: Accum,
    lhs: MatRef<'_, L>,
    rhs: MatRef<'_, R>,
    alpha: Complex64,
    par: Par,
    panels: Option<usize>,
) where
    L: Conjugate<Canonical = Complex64> + Sync,
    R: Conjugate<Canonical = Complex64> + Sync,
{
    match panels {
        Some(count) => dst
            .par_row_partition_mut(count)
            .zip(lhs.par_row_partition(count))
            .with_max_len(1)
            .for_each(|(d, l)| matmul(d, accum, l, rhs, alpha, Par::Seq)),
        None => matmul(dst, accum, lhs, rhs, alpha, par),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic values in [-1, 1) + i [-1, 1).
    fn values(len: usize, seed: u64) -> Vec<Complex64> {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..len)
            .map(|_| Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)))
            .collect()
    }

    /// Element `(i, l)` of `op(X)`, X column-major with leading dimension `ld`.
    fn op_at(x: &[Complex64], op: Op, ld: usize, i: usize, l: usize) -> Complex64 {
        match op {
            Op::N => x[i + l * ld],
            Op::T => x[l + i * ld],
            Op::C => x[l + i * ld].conj(),
        }
    }

    /// `C = alpha op(A) op(B) + beta C` by the definition, a triple loop.
    fn reference(s: &GemmShape, a: &[Complex64], b: &[Complex64], c: &mut [Complex64]) {
        for j in 0..s.n {
            for i in 0..s.m {
                let mut sum = Complex64::new(0.0, 0.0);
                for l in 0..s.k {
                    sum += op_at(a, s.op_a, s.lda, i, l) * op_at(b, s.op_b, s.ldb, l, j);
                }
                let old = c[i + j * s.ldc];
                c[i + j * s.ldc] = s.alpha * sum + s.beta * old;
            }
        }
    }

    /// The largest difference, relative to the largest `|want|`.
    fn rel_error(got: &[Complex64], want: &[Complex64]) -> f64 {
        let scale = want.iter().map(|v| v.norm()).fold(0.0, f64::max);
        let diff = (got.iter().zip(want).map(|(g, w)| (g - w).norm())).fold(0.0, f64::max);
        diff / scale
    }

    /// A shape with every field set: strided operands (leading dimensions above the stored
    /// rows), complex `alpha` and `beta`.
    fn shape(op_a: Op, op_b: Op, m: usize, n: usize, k: usize) -> GemmShape {
        let mut s = GemmShape {
            op_a,
            op_b,
            alpha: Complex64::new(0.75, -0.5),
            beta: Complex64::new(-0.25, 1.5),
            ..GemmShape::dense(m, n, k)
        };
        s.lda = s.a_stored().0 + 3;
        s.ldb = s.b_stored().0 + 1;
        s.ldc = m + 5;
        s
    }

    /// Runs `gemm_one` on fresh operands with `par` (which may split it into panels).
    fn run(s: &GemmShape, par: Par) -> (Vec<Complex64>, Vec<Complex64>) {
        let a = values(s.a_extent(), 1);
        let b = values(s.b_extent(), 2);
        let mut c = values(s.c_extent(), 3);
        let mut want = c.clone();
        reference(s, &a, &b, &mut want);
        gemm_one(s, &a, &b, &mut c, par);
        (c, want)
    }

    #[test]
    fn panels_only_for_large_products_on_several_threads() {
        let rayon = |t| Par::rayon(t);
        let big = GemmShape::dense(512, 512, 512);
        assert_eq!(panels(&big, rayon(2)), Some(2 * PANELS_PER_THREAD));
        assert_eq!(
            panels(&big, rayon(16)),
            Some(16),
            "at most m / MIN_PANEL_ROWS panels"
        );
        assert_eq!(panels(&big, Par::Seq), None, "one thread");
        assert_eq!(panels(&big, rayon(1)), None, "one thread");
        assert_eq!(
            panels(&GemmShape::dense(128, 128, 128), rayon(2)),
            None,
            "N = 32"
        );
        assert_eq!(
            panels(&GemmShape::dense(256, 256, 256), rayon(2)),
            Some(4),
            "N = 64"
        );
        let thin = GemmShape::dense(2 * MIN_PANEL_ROWS - 1, 1 << 14, 1 << 10);
        assert_eq!(panels(&thin, rayon(4)), None, "too few rows for two panels");
    }

    /// Every combination of operations, products of panels whose rows the panel count does not
    /// divide (and of more panels than threads, and of one row per panel), against the
    /// definition.
    #[test]
    fn panels_match_the_reference() {
        let ops = [Op::N, Op::T, Op::C];
        for (m, n, k, count) in [(37, 5, 9, 4), (10, 3, 4, 10), (13, 1, 6, 3), (64, 8, 3, 6)] {
            for op_a in ops {
                for op_b in ops {
                    let s = shape(op_a, op_b, m, n, k);
                    let a = values(s.a_extent(), 1);
                    let b = values(s.b_extent(), 2);
                    let mut c = values(s.c_extent(), 3);
                    let mut want = c.clone();
                    reference(&s, &a, &b, &mut want);
                    let (sa, sb) = (s.a_stored(), s.b_stored());
                    let av = MatRef::from_column_major_slice_with_stride(&a, sa.0, sa.1, s.lda);
                    let bv = MatRef::from_column_major_slice_with_stride(&b, sb.0, sb.1, s.ldb);
                    let dst = MatMut::from_column_major_slice_with_stride_mut(&mut c, m, n, s.ldc);
                    // beta = 1 here: the panels accumulate into C.
                    let add = Accum::Add;
                    let one = Complex64::new(1.0, 0.0);
                    let alpha = s.alpha;
                    let par = Par::rayon(3);
                    let p = Some(count);
                    match (op_a, op_b) {
                        (Op::C, Op::C) => {
                            product(dst, add, av.adjoint(), bv.adjoint(), alpha, par, p)
                        }
                        (Op::C, ob) => {
                            product(dst, add, av.adjoint(), plain(bv, ob), alpha, par, p)
                        }
                        (oa, Op::C) => {
                            product(dst, add, plain(av, oa), bv.adjoint(), alpha, par, p)
                        }
                        (oa, ob) => product(dst, add, plain(av, oa), plain(bv, ob), alpha, par, p),
                    }
                    let beta_one = GemmShape { beta: one, ..s };
                    let mut want_one = values(s.c_extent(), 3);
                    reference(&beta_one, &a, &b, &mut want_one);
                    let err = rel_error(&c, &want_one);
                    assert!(
                        err < 1e-12,
                        "{m}x{n}x{k} {op_a:?}{op_b:?} in {count}: {err:e}"
                    );
                }
            }
        }
    }

    /// A product large enough to be split (rows not divisible by the panel count, strided
    /// operands, `beta` not 0 or 1), through `gemm_one` as a batch runs it: the same as on
    /// one thread and as the definition. The panels cover every row: the rows between `m` and
    /// the leading dimension are left untouched.
    #[test]
    fn a_split_product_matches_one_thread_and_the_reference() {
        let s = shape(Op::T, Op::C, 263, 256, 250);
        assert_eq!(panels(&s, Par::rayon(2)), Some(4));
        assert_eq!(panels(&s, Par::rayon(3)), Some(6));
        let (seq, want) = run(&s, Par::Seq);
        assert!(rel_error(&seq, &want) < 1e-12);
        for threads in [2, 3] {
            let (split, _) = run(&s, Par::rayon(threads));
            let err = rel_error(&split, &want);
            assert!(err < 1e-12, "{threads} threads: {err:e}");
            let err = rel_error(&split, &seq);
            assert!(err < 1e-12, "{threads} threads against one: {err:e}");
            let untouched = values(s.c_extent(), 3);
            for j in 0..s.n {
                let pad = j * s.ldc + s.m..(j * s.ldc + s.ldc).min(s.c_extent());
                assert_eq!(split[pad.clone()], untouched[pad], "column {j}");
            }
        }
    }
}
