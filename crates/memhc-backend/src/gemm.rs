//! Descriptions of batched complex-f64 GEMM calls, and their validation.
//!
//! The conventions are BLAS's, so that a CUDA or ROCm backend passes them through unchanged:
//! matrices are **column-major**, `C_i = alpha * op(A_i) * op(B_i) + beta * C_i`, `op(A_i)` is
//! `m x k`, `op(B_i)` is `k x n`, `C_i` is `m x n`, and the leading dimensions are the distances
//! (in elements) between consecutive columns as stored. When `beta` is zero, `C_i` is not read
//! (it may hold anything, NaN included).
//!
//! Offsets and strides are in elements (complex doubles), relative to the start of a device
//! buffer. Every backend calls [`GemmShape::validate`] and [`validate_batched`] /
//! [`validate_strided`] before touching memory, so that a bad request is the same clear
//! [`BackendError::InvalidArgument`] on every backend.

use crate::disjoint::{self, Mat};
use num_complex::Complex64;

use super::DeviceMemory;
use crate::ELEMENT_BYTES;
use crate::error::{BackendError, BackendOp};

/// The operation applied to an operand before the product.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// The operand as stored.
    N,
    /// Its transpose.
    T,
    /// Its conjugate transpose.
    C,
}

/// Sizes, operations, leading dimensions and scalars shared by every item of a batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GemmShape {
    /// Operation on A.
    pub op_a: Op,
    /// Operation on B.
    pub op_b: Op,
    /// Rows of `op(A)` and of C.
    pub m: usize,
    /// Columns of `op(B)` and of C.
    pub n: usize,
    /// Columns of `op(A)`, rows of `op(B)`.
    pub k: usize,
    /// Leading dimension of A as stored.
    pub lda: usize,
    /// Leading dimension of B as stored.
    pub ldb: usize,
    /// Leading dimension of C.
    pub ldc: usize,
    /// Scale of the product.
    pub alpha: Complex64,
    /// Scale of the previous C (zero: C is not read).
    pub beta: Complex64,
}

impl GemmShape {
    /// `C = A * B` for column-major, densely stored operands (`lda = m`, `ldb = k`, `ldc = m`),
    /// `alpha = 1`, `beta = 0`.
    pub fn dense(m: usize, n: usize, k: usize) -> Self {
        GemmShape {
            op_a: Op::N,
            op_b: Op::N,
            m,
            n,
            k,
            lda: m,
            ldb: k,
            ldc: m,
            alpha: Complex64::new(1.0, 0.0),
            beta: Complex64::new(0.0, 0.0),
        }
    }

    /// The same shape with another `beta`.
    pub fn with_beta(mut self, beta: Complex64) -> Self {
        self.beta = beta;
        self
    }

    /// The same shape with another `alpha`.
    pub fn with_alpha(mut self, alpha: Complex64) -> Self {
        self.alpha = alpha;
        self
    }

    /// Rows and columns of A as stored.
    pub fn a_stored(&self) -> (usize, usize) {
        match self.op_a {
            Op::N => (self.m, self.k),
            Op::T | Op::C => (self.k, self.m),
        }
    }

    /// Rows and columns of B as stored.
    pub fn b_stored(&self) -> (usize, usize) {
        match self.op_b {
            Op::N => (self.k, self.n),
            Op::T | Op::C => (self.n, self.k),
        }
    }

    /// Elements spanned by A as stored (from its first to its last element, inclusive).
    pub fn a_extent(&self) -> usize {
        let (r, c) = self.a_stored();
        extent(r, c, self.lda)
    }

    /// Elements spanned by B as stored.
    pub fn b_extent(&self) -> usize {
        let (r, c) = self.b_stored();
        extent(r, c, self.ldb)
    }

    /// Elements spanned by C.
    pub fn c_extent(&self) -> usize {
        extent(self.m, self.n, self.ldc)
    }

    /// Floating-point operations of one item: `8 m n k` (a complex multiply-add is 8 flops).
    pub fn flops(&self) -> u64 {
        8 * self.m as u64 * self.n as u64 * self.k as u64
    }

    /// Checks that the leading dimensions are at least the stored row counts (and at least 1).
    pub fn validate(&self) -> Result<(), BackendError> {
        let check = |name: &str, ld: usize, rows: usize| {
            if ld < rows.max(1) {
                Err(BackendError::invalid(
                    BackendOp::Gemm,
                    format!("{name} = {ld} is smaller than the {rows} stored rows"),
                ))
            } else {
                Ok(())
            }
        };
        check("lda", self.lda, self.a_stored().0)?;
        check("ldb", self.ldb, self.b_stored().0)?;
        check("ldc", self.ldc, self.m)
    }

    /// Whether the call does no arithmetic and only scales C by beta (`k == 0`), or touches
    /// nothing at all (`m == 0` or `n == 0`).
    pub fn is_empty(&self) -> bool {
        self.m == 0 || self.n == 0
    }
}

/// Elements spanned by a column-major `rows x cols` matrix with leading dimension `ld`.
pub fn extent(rows: usize, cols: usize, ld: usize) -> usize {
    if rows == 0 || cols == 0 {
        0
    } else {
        (cols - 1) * ld + rows
    }
}

/// A position in device memory: a buffer and an offset into it, in elements.
#[derive(Debug)]
pub struct DeviceRef<'a, M> {
    /// The buffer.
    pub buffer: &'a M,
    /// Offset from the start of the buffer, in complex-f64 elements.
    pub offset: usize,
}

impl<M> Clone for DeviceRef<'_, M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M> Copy for DeviceRef<'_, M> {}

impl<'a, M> DeviceRef<'a, M> {
    /// A reference `offset` elements into `buffer`.
    pub fn new(buffer: &'a M, offset: usize) -> Self {
        DeviceRef { buffer, offset }
    }

    /// The same buffer, `delta` elements further.
    pub fn offset_by(self, delta: usize) -> Self {
        DeviceRef {
            buffer: self.buffer,
            offset: self.offset + delta,
        }
    }
}

/// One product of a pointer-array batch.
#[derive(Debug)]
pub struct GemmItem<'a, M> {
    /// Where A starts.
    pub a: DeviceRef<'a, M>,
    /// Where B starts.
    pub b: DeviceRef<'a, M>,
    /// Where C starts.
    pub c: DeviceRef<'a, M>,
}

impl<M> Clone for GemmItem<'_, M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M> Copy for GemmItem<'_, M> {}

/// A strided batch: item `i` uses `a + i * stride_a`, `b + i * stride_b`, `c + i * stride_c`.
#[derive(Debug)]
pub struct StridedBatch<'a, M> {
    /// Where A of item 0 starts.
    pub a: DeviceRef<'a, M>,
    /// Elements between consecutive A.
    pub stride_a: usize,
    /// Where B of item 0 starts.
    pub b: DeviceRef<'a, M>,
    /// Elements between consecutive B.
    pub stride_b: usize,
    /// Where C of item 0 starts.
    pub c: DeviceRef<'a, M>,
    /// Elements between consecutive C.
    pub stride_c: usize,
    /// Number of items.
    pub count: usize,
}

impl<'a, M> StridedBatch<'a, M> {
    /// Item `i` of the batch as a pointer-array item.
    pub fn item(&self, i: usize) -> GemmItem<'a, M> {
        GemmItem {
            a: self.a.offset_by(i * self.stride_a),
            b: self.b.offset_by(i * self.stride_b),
            c: self.c.offset_by(i * self.stride_c),
        }
    }
}

fn elems_of<M: DeviceMemory>(m: &M) -> usize {
    m.bytes() / ELEMENT_BYTES
}

fn check_range<M: DeviceMemory>(
    what: &str,
    i: usize,
    r: &DeviceRef<'_, M>,
    extent: usize,
) -> Result<(), BackendError> {
    let end = r.offset.checked_add(extent);
    match end {
        Some(end) if end <= elems_of(r.buffer) => Ok(()),
        _ => Err(BackendError::invalid(
            BackendOp::Gemm,
            format!(
                "item {i}: {what} spans elements {}..{} but buffer {:#x} holds {}",
                r.offset,
                r.offset.saturating_add(extent),
                r.buffer.handle(),
                elems_of(r.buffer)
            ),
        )),
    }
}

/// A half-open element range in one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Span {
    handle: u64,
    start: usize,
    end: usize,
}

fn span<M: DeviceMemory>(r: &DeviceRef<'_, M>, extent: usize) -> Span {
    Span {
        handle: r.buffer.handle(),
        start: r.offset,
        end: r.offset + extent,
    }
}

fn overlaps(x: &Span, y: &Span) -> bool {
    x.handle == y.handle && x.start < y.end && y.start < x.end
}

/// Validates a pointer-array batch: the shape, every operand within its buffer, no two outputs
/// overlapping, and no output overlapping an input (BLAS leaves both undefined).
///
/// O(n log n) in the items, and for the usual batch (outputs listed in order, inputs in other
/// buffers than the outputs) one pass without allocating: outputs in order need only their
/// neighbours compared, and an input in a buffer no output is in overlaps none. Otherwise the
/// outputs are sorted, and each input is looked up among them by binary search.
pub fn validate_batched<M: DeviceMemory>(
    shape: &GemmShape,
    items: &[GemmItem<'_, M>],
) -> Result<(), BackendError> {
    match validate_by_range(shape, items) {
        // Ranges of strided matrices may overlap while their elements do not: ask again, exactly.
        Err(Overlap::Ranges(_))
            if shape.lda > shape.a_stored().0
                || shape.ldc > shape.m
                || shape.ldb > shape.b_stored().0 =>
        {
            let mat =
                |r: &DeviceRef<'_, M>, dims, ld| Mat::new(r.buffer.handle(), r.offset, dims, ld);
            let outputs = items
                .iter()
                .map(|it| mat(&it.c, (shape.m, shape.n), shape.ldc));
            let inputs = items.iter().filter(|_| shape.k > 0).flat_map(|it| {
                [
                    mat(&it.a, shape.a_stored(), shape.lda),
                    mat(&it.b, shape.b_stored(), shape.ldb),
                ]
            });
            disjoint::check("the batch", outputs.collect(), inputs)
        }
        Err(Overlap::Ranges(e) | Overlap::Other(e)) => Err(e),
        Ok(()) => Ok(()),
    }
}

/// Why [`validate_by_range`] refused a batch: two ranges overlap (which the exact check may
/// still accept), or anything else.
enum Overlap {
    Ranges(BackendError),
    Other(BackendError),
}

impl From<BackendError> for Overlap {
    fn from(e: BackendError) -> Self {
        Overlap::Other(e)
    }
}

/// [`validate_batched`] with every matrix taken as the range from its first to its last
/// element.
fn validate_by_range<M: DeviceMemory>(
    shape: &GemmShape,
    items: &[GemmItem<'_, M>],
) -> Result<(), Overlap> {
    shape.validate()?;
    if shape.is_empty() {
        return Ok(());
    }
    let (ea, eb, ec) = (shape.a_extent(), shape.b_extent(), shape.c_extent());
    let mut sorted = true;
    let mut previous: Option<Span> = None;
    let (mut lowest, mut highest) = (u64::MAX, 0u64);
    let fits = |r: &DeviceRef<'_, M>, extent: usize| {
        r.offset
            .checked_add(extent)
            .is_some_and(|end| end <= elems_of(r.buffer))
    };
    for (i, it) in items.iter().enumerate() {
        let inputs_fit = shape.k == 0 || (fits(&it.a, ea) && fits(&it.b, eb));
        if !inputs_fit || !fits(&it.c, ec) {
            return Err(out_of_range(shape.k > 0, i, it, (ea, eb, ec)).into());
        }
        let c = span(&it.c, ec);
        if let Some(p) = previous {
            sorted &= p <= c;
            if sorted && overlaps(&p, &c) {
                return Err(Overlap::Ranges(outputs_overlap(&p, &c)));
            }
        }
        previous = Some(c);
        lowest = lowest.min(c.handle);
        highest = highest.max(c.handle);
    }
    let mut outputs = Vec::new();
    if !sorted {
        outputs = items.iter().map(|it| span(&it.c, ec)).collect();
        outputs.sort_unstable();
        if let Some(w) = outputs.windows(2).find(|w| overlaps(&w[0], &w[1])) {
            return Err(Overlap::Ranges(outputs_overlap(&w[0], &w[1])));
        }
    }
    if shape.k == 0 {
        return Ok(());
    }
    for it in items {
        for input in [span(&it.a, ea), span(&it.b, eb)] {
            if input.handle < lowest || input.handle > highest {
                continue;
            }
            if outputs.is_empty() {
                outputs = items.iter().map(|it| span(&it.c, ec)).collect();
            }
            // The outputs are sorted and disjoint (and not empty), so their ends are in order
            // too: the only output that can overlap an input is the first of its buffer
            // ending after the input starts.
            let i = outputs.partition_point(|o| (o.handle, o.end) <= (input.handle, input.start));
            if let Some(c) = outputs.get(i).filter(|c| overlaps(c, &input)) {
                return Err(Overlap::Ranges(BackendError::invalid(
                    BackendOp::Gemm,
                    format!(
                        "an output (elements {}..{}) overlaps an input (elements {}..{}) in buffer {:#x}",
                        c.start, c.end, input.start, input.end, c.handle
                    ),
                )));
            }
        }
    }
    Ok(())
}

/// The error of item `i`, one of whose operands is out of its buffer (the inputs are checked
/// only if `inputs`).
#[cold]
fn out_of_range<M: DeviceMemory>(
    inputs: bool,
    i: usize,
    it: &GemmItem<'_, M>,
    (ea, eb, ec): (usize, usize, usize),
) -> BackendError {
    let checks = [("A", &it.a, ea), ("B", &it.b, eb)];
    checks
        .into_iter()
        .filter(|_| inputs)
        .chain([("C", &it.c, ec)])
        .find_map(|(what, r, e)| check_range(what, i, r, e).err())
        .unwrap_or_else(|| {
            BackendError::invalid(BackendOp::Gemm, format!("item {i}: out of range"))
        })
}

fn outputs_overlap(x: &Span, y: &Span) -> BackendError {
    BackendError::invalid(
        BackendOp::Gemm,
        format!(
            "outputs overlap in buffer {:#x} (elements {}..{} and {}..{})",
            x.handle, x.start, x.end, y.start, y.end
        ),
    )
}

/// Validates a strided batch: the shape, the first and last items within their buffers,
/// outputs that do not overlap each other (`stride_c` at least the extent of C), and outputs
/// that do not overlap inputs.
pub fn validate_strided<M: DeviceMemory>(
    shape: &GemmShape,
    batch: &StridedBatch<'_, M>,
) -> Result<(), BackendError> {
    shape.validate()?;
    if shape.is_empty() || batch.count == 0 {
        return Ok(());
    }
    if batch.count > 1 && batch.stride_c < shape.c_extent() {
        return Err(BackendError::invalid(
            BackendOp::Gemm,
            format!(
                "stride_c = {} is smaller than the {} elements spanned by C: outputs would overlap",
                batch.stride_c,
                shape.c_extent()
            ),
        ));
    }
    let last = batch.count - 1;
    // The span of a whole strided operand: the last item's start plus its extent.
    let whole = |stride: usize, extent: usize| {
        last.checked_mul(stride)
            .and_then(|s| s.checked_add(extent))
            .ok_or_else(|| BackendError::invalid(BackendOp::Gemm, "strided batch overflows usize"))
    };
    let (c, ec) = (batch.c, whole(batch.stride_c, shape.c_extent())?);
    check_range("C (whole batch)", last, &c, ec)?;
    if shape.k > 0 {
        let (a, ea) = (batch.a, whole(batch.stride_a, shape.a_extent())?);
        let (b, eb) = (batch.b, whole(batch.stride_b, shape.b_extent())?);
        check_range("A (whole batch)", last, &a, ea)?;
        check_range("B (whole batch)", last, &b, eb)?;
        let cs = span(&c, ec);
        for (name, s) in [("A", span(&a, ea)), ("B", span(&b, eb))] {
            if overlaps(&cs, &s) {
                return Err(BackendError::invalid(
                    BackendOp::Gemm,
                    format!("the outputs of the strided batch overlap its {name} operands"),
                ));
            }
        }
    }
    Ok(())
}

/// Sizes and scalars of a batch of matrix additions `C_i = alpha A_i + beta B_i` (the
/// `cublasZgeam` form, without transposition): all `m x n`, column-major. When `alpha` is zero
/// A is not read, and when `beta` is zero B is not read. C may be the same matrix as A or B
/// (same buffer, offset and leading dimension), for an update in place.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeamShape {
    /// Rows.
    pub m: usize,
    /// Columns.
    pub n: usize,
    /// Leading dimension of A.
    pub lda: usize,
    /// Leading dimension of B.
    pub ldb: usize,
    /// Leading dimension of C.
    pub ldc: usize,
    /// Scale of A.
    pub alpha: Complex64,
    /// Scale of B.
    pub beta: Complex64,
}

impl GeamShape {
    /// `C = A + B` for densely stored `m x n` matrices.
    pub fn dense_sum(m: usize, n: usize) -> Self {
        GeamShape {
            m,
            n,
            lda: m,
            ldb: m,
            ldc: m,
            alpha: Complex64::new(1.0, 0.0),
            beta: Complex64::new(1.0, 0.0),
        }
    }
}

/// Validates a batch of matrix additions: leading dimensions, every operand within its buffer,
/// outputs not overlapping each other, and each output either disjoint from each input or
/// exactly the same matrix (in place).
pub fn validate_geam<M: DeviceMemory>(
    shape: &GeamShape,
    items: &[GemmItem<'_, M>],
) -> Result<(), BackendError> {
    for (name, ld) in [("lda", shape.lda), ("ldb", shape.ldb), ("ldc", shape.ldc)] {
        if ld < shape.m.max(1) {
            return Err(BackendError::invalid(
                BackendOp::Gemm,
                format!("geam: {name} = {ld} is smaller than the {} rows", shape.m),
            ));
        }
    }
    if shape.m == 0 || shape.n == 0 {
        return Ok(());
    }
    let zero = Complex64::new(0.0, 0.0);
    let (ea, eb, ec) = (
        extent(shape.m, shape.n, shape.lda),
        extent(shape.m, shape.n, shape.ldb),
        extent(shape.m, shape.n, shape.ldc),
    );
    let mut outputs = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        check_range("C", i, &it.c, ec)?;
        let c = span(&it.c, ec);
        for (name, r, e, ld, used) in [
            ("A", &it.a, ea, shape.lda, shape.alpha != zero),
            ("B", &it.b, eb, shape.ldb, shape.beta != zero),
        ] {
            if !used {
                continue;
            }
            check_range(name, i, r, e)?;
            let same = r.buffer.handle() == it.c.buffer.handle()
                && r.offset == it.c.offset
                && ld == shape.ldc;
            if !same && overlaps(&span(r, e), &c) {
                return Err(BackendError::invalid(
                    BackendOp::Gemm,
                    format!(
                        "geam item {i}: C partly overlaps {name} (only C = {name} exactly is allowed)"
                    ),
                ));
            }
        }
        outputs.push(c);
    }
    outputs.sort_unstable();
    if outputs.windows(2).any(|w| overlaps(&w[0], &w[1])) {
        if shape.lda.max(shape.ldb).max(shape.ldc) > shape.m {
            let dims = (shape.m, shape.n);
            let mat = |r: &DeviceRef<'_, M>| Mat::new(r.buffer.handle(), r.offset, dims, shape.ldc);
            let outputs = items.iter().map(|it| mat(&it.c)).collect();
            return disjoint::check("geam", outputs, std::iter::empty());
        }
        return Err(BackendError::invalid(
            BackendOp::Gemm,
            "geam: two outputs of the batch overlap",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Fake(u64, usize);
    impl DeviceMemory for Fake {
        fn bytes(&self) -> usize {
            self.1 * ELEMENT_BYTES
        }
        fn handle(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn extents() {
        let s = GemmShape {
            op_a: Op::T,
            lda: 7,
            ..GemmShape::dense(3, 4, 5)
        };
        assert_eq!(s.a_stored(), (5, 3));
        assert_eq!(s.a_extent(), 2 * 7 + 5);
        assert_eq!(s.b_extent(), 3 * 5 + 5);
        assert_eq!(s.c_extent(), 3 * 3 + 3);
        assert_eq!(s.flops(), 8 * 3 * 4 * 5);
        assert_eq!(extent(0, 4, 9), 0);
    }

    #[test]
    fn leading_dimension_checked() {
        let s = GemmShape {
            lda: 2,
            ..GemmShape::dense(3, 3, 3)
        };
        assert!(s.validate().is_err());
        assert!(GemmShape::dense(3, 3, 3).validate().is_ok());
    }

    #[test]
    fn batched_bounds_and_overlaps() {
        let x = Fake(1, 100);
        let y = Fake(2, 100);
        let s = GemmShape::dense(3, 3, 3); // 9 elements each
        let ok = [GemmItem {
            a: DeviceRef::new(&x, 0),
            b: DeviceRef::new(&x, 9),
            c: DeviceRef::new(&y, 0),
        }];
        assert!(validate_batched(&s, &ok).is_ok());
        let oob = [GemmItem {
            a: DeviceRef::new(&x, 95),
            b: DeviceRef::new(&x, 0),
            c: DeviceRef::new(&y, 0),
        }];
        assert!(validate_batched(&s, &oob).is_err());
        let alias = [GemmItem {
            a: DeviceRef::new(&x, 0),
            b: DeviceRef::new(&x, 9),
            c: DeviceRef::new(&x, 12),
        }];
        assert!(validate_batched(&s, &alias).is_err());
        let two_out = [ok[0], ok[0]];
        assert!(validate_batched(&s, &two_out).is_err());
        // Same buffer, disjoint regions: fine.
        let disjoint = [GemmItem {
            a: DeviceRef::new(&x, 0),
            b: DeviceRef::new(&x, 9),
            c: DeviceRef::new(&x, 18),
        }];
        assert!(validate_batched(&s, &disjoint).is_ok());
    }

    /// Outputs in any order, inputs anywhere: every overlap is found, in batches on the stack
    /// and on the heap alike.
    #[test]
    fn batched_overlaps_match_a_pairwise_check() {
        let bufs = [Fake(1, 4096), Fake(2, 4096)];
        let s = GemmShape::dense(2, 2, 2); // 4 elements each
        let mut state = 11u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        for round in 0..400 {
            let len = if round % 10 == 0 {
                80
            } else {
                1 + next(12) as usize
            };
            let pick = |b: u64, off: u64| DeviceRef::new(&bufs[b as usize], off as usize);
            let items: Vec<GemmItem<'_, Fake>> = (0..len)
                .map(|_| GemmItem {
                    a: pick(next(2), next(len as u64 * 12)),
                    b: pick(next(2), next(len as u64 * 12)),
                    c: pick(next(2), next(len as u64 * 12)),
                })
                .collect();
            let span4 = |r: &DeviceRef<'_, Fake>| span(r, 4);
            let mut bad = false;
            for (i, x) in items.iter().enumerate() {
                for (j, y) in items.iter().enumerate() {
                    bad |= i < j && overlaps(&span4(&x.c), &span4(&y.c));
                    bad |= overlaps(&span4(&x.c), &span4(&y.a));
                    bad |= overlaps(&span4(&x.c), &span4(&y.b));
                }
            }
            assert_eq!(validate_batched(&s, &items).is_err(), bad, "round {round}");
        }
    }

    #[test]
    fn strided_bounds() {
        let x = Fake(1, 64);
        let y = Fake(2, 64);
        let s = GemmShape::dense(2, 2, 2); // 4 elements each
        let b = |count, stride_c| StridedBatch {
            a: DeviceRef::new(&x, 0),
            stride_a: 4,
            b: DeviceRef::new(&x, 32),
            stride_b: 4,
            c: DeviceRef::new(&y, 0),
            stride_c,
            count,
        };
        assert!(validate_strided(&s, &b(8, 4)).is_ok());
        assert!(validate_strided(&s, &b(9, 4)).is_err()); // the last B runs past the buffer
        assert!(validate_strided(&s, &b(8, 3)).is_err()); // outputs overlap
    }
}
