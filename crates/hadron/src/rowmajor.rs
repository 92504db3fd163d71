//! Row-major data on column-major BLAS: the one place where the operand swap happens.
//!
//! Nodes are stored row-major (C order), and the backends speak BLAS, which is column-major. A
//! row-major `r x c` matrix `X` occupies memory exactly as the column-major `c x r` matrix
//! `Xᵀ` with leading dimension `c`. Hence, for row-major `A (m x k)`, `B (k x n)`, `C (m x n)`:
//!
//! ```text
//!     C = A B   <=>   Cᵀ = Bᵀ Aᵀ
//! ```
//!
//! and `Cᵀ = Bᵀ Aᵀ` is a plain column-major GEMM on the same buffers, with the operands swapped:
//! BLAS's "A" is our B (`n x k`, ld `n`), BLAS's "B" is our A (`k x m`, ld `k`), and BLAS's "C"
//! is our C (`n x m`, ld `n`). Nothing is transposed or copied.
//!
//! A trace `Tr(A B) = Σ_i Σ_j A[i,j] B[j,i]` uses the same reading: for each row `i`, the dot
//! product of row `i` of A (contiguous, `k` elements) with column `i` of B (`k` elements `m`
//! apart) is a `1 x 1 x k` GEMM: BLAS's "A" is row `i` of A read as a `1 x k` matrix with
//! `lda = 1`, BLAS's "B" is column `i` of B read through `op = T` from a `1 x k` matrix with
//! `ldb = m`.

use memhc_core::backend::gemm::{DeviceRef, GemmItem, GemmShape, Op};

/// A batch of row-major products `C = A B` with `A: m x k`, `B: k x n`, `C: m x n`, expressed
/// for a column-major backend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowMajorProduct {
    /// The column-major GEMM computing `Cᵀ = Bᵀ Aᵀ`.
    pub shape: GemmShape,
}

impl RowMajorProduct {
    /// Products of `m x k` by `k x n`, densely stored, `C = A B` (beta 0).
    pub fn new(m: usize, n: usize, k: usize) -> Self {
        RowMajorProduct {
            shape: GemmShape::dense(n, m, k),
        }
    }

    /// The same products accumulated into C (`C += A B`) when `accumulate` is set.
    pub fn accumulating(mut self, accumulate: bool) -> Self {
        self.shape.beta = num_complex::Complex64::new(if accumulate { 1.0 } else { 0.0 }, 0.0);
        self
    }

    /// The same products on operands whose rows are `a`, `b` and `c` elements apart instead of
    /// dense (a tiled node's components: rows of the whole matrix, [`memhc_core::Tiles`]):
    /// BLAS's leading dimensions, in its operand order.
    pub fn with_row_strides(mut self, a: usize, b: usize, c: usize) -> Self {
        (self.shape.lda, self.shape.ldb, self.shape.ldc) = blas_order(a, b, c);
        self
    }

    /// The backend item for `c = a · b` (row-major operands, given where they start).
    pub fn item<'x, M>(
        &self,
        a: DeviceRef<'x, M>,
        b: DeviceRef<'x, M>,
        c: DeviceRef<'x, M>,
    ) -> GemmItem<'x, M> {
        let (a, b, c) = self.operands(a, b, c);
        GemmItem { a, b, c }
    }

    /// Anything said of the row-major `a`, `b` and `c` of `c = a · b` (where they are, which
    /// object or component holds them), in the backend's operand order: `(b, a, c)`.
    pub fn operands<T>(&self, a: T, b: T, c: T) -> (T, T, T) {
        blas_order(a, b, c)
    }
}

/// Anything said of the row-major `a`, `b` and `c` of `c = a · b`, in the backend's operand
/// order: `(b, a, c)` (see the [module documentation](self)).
pub fn blas_order<T>(a: T, b: T, c: T) -> (T, T, T) {
    (b, a, c)
}

/// The GEMM for one row of a trace: `Σ_j A[i,j] B[j,i]` for row-major `A: m x k` and
/// `B: k x m` whose rows are `b_row` elements apart (`m` when dense), as a `1 x 1 x k` product.
pub fn trace_row_shape(b_row: usize, k: usize) -> GemmShape {
    GemmShape {
        op_a: Op::N,
        op_b: Op::T,
        m: 1,
        n: 1,
        k,
        lda: 1,
        ldb: b_row,
        ldc: 1,
        ..GemmShape::dense(1, 1, k)
    }
}

/// The item for row `i` of a trace: A's row `i` starts at `a + i a_row` (`a_row`: the
/// elements between A's rows, `k` when dense), B's column `i` at `b + i`.
pub fn trace_row_item<'x, M>(
    a_row: usize,
    i: usize,
    a: DeviceRef<'x, M>,
    b: DeviceRef<'x, M>,
    out: DeviceRef<'x, M>,
) -> GemmItem<'x, M> {
    GemmItem {
        a: a.offset_by(i * a_row),
        b: b.offset_by(i),
        c: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memhc_testkit::conformance::reference_gemm;
    use num_complex::Complex64 as C;

    fn r(x: f64) -> C {
        C::new(x, 0.0)
    }

    /// The identity, checked with the column-major reference GEMM on row-major data.
    #[test]
    fn swapped_operands_give_the_row_major_product() {
        // A = [1 2 3; 4 5 6] (2x3), B = [1 0; 0 1; 1 1] (3x2), A B = [4 5; 10 11].
        let a: Vec<C> = [1., 2., 3., 4., 5., 6.].map(r).to_vec();
        let b: Vec<C> = [1., 0., 0., 1., 1., 1.].map(r).to_vec();
        let p = RowMajorProduct::new(2, 2, 3);
        let mut c = vec![r(f64::NAN); 4];
        reference_gemm(&p.shape, &b, &a, &mut c); // BLAS A = our B, BLAS B = our A
        assert_eq!(c, [4., 5., 10., 11.].map(r).to_vec());
    }

    #[test]
    fn trace_rows_sum_to_the_trace() {
        // A (2x3) as above, B (3x2) as above: Tr(A B) = 4 + 11 = 15.
        let a: Vec<C> = [1., 2., 3., 4., 5., 6.].map(r).to_vec();
        let b: Vec<C> = [1., 0., 0., 1., 1., 1.].map(r).to_vec();
        let s = trace_row_shape(2, 3);
        let mut total = r(0.0);
        for i in 0..2 {
            let mut out = [r(f64::NAN)];
            reference_gemm(&s, &a[i * 3..], &b[i..], &mut out);
            total += out[0];
        }
        assert_eq!(total, r(15.0));
    }
}
