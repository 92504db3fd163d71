//! The independent reference implementation: obviously correct, slow, and sharing nothing with
//! the runtime path (no runtime, no backend, no batching, no layers, no operand swap).
//! Products are ndarray matrix products of row-major views (ndarray multiplies through
//! `matrixmultiply`, not faer); traces are plain loops. Tests and the `--verify` option of the
//! tools compare against it.

use ndarray::{Array3, Axis};
use num_complex::Complex64;

use crate::contraction::ContractionSizes;
use crate::error::Result;
use crate::mapping::SpinMapping;
use crate::node::HadronNode;
use crate::trace::TracePairs;
use crate::view::MatrixView;

/// `out[t.out] += A[t.a] · B[t.b]` for every term, term by term, from a zero output.
pub fn contract(
    a: &HadronNode,
    b: &HadronNode,
    a_view: MatrixView,
    b_view: MatrixView,
    mapping: &SpinMapping,
) -> Result<HadronNode> {
    let plan = ContractionSizes::new(&a.shape(), &b.shape(), a_view, b_view, mapping)?;
    let mut out = Array3::<Complex64>::zeros((mapping.out_spins(), plan.m, plan.n));
    for t in mapping.terms() {
        let product = a.matrix(t.a, a_view)?.dot(&b.matrix(t.b, b_view)?);
        let mut target = out.index_axis_mut(Axis(0), t.out);
        target += &product;
    }
    HadronNode::from_array3(out)
}

/// `Σ_(a, b) in pairs Σ_i Σ_j A[a][i, j] B[b][j, i]`, by plain loops (default views).
pub fn trace(a: &HadronNode, b: &HadronNode, pairs: &TracePairs) -> Result<Complex64> {
    let v = MatrixView::default();
    trace_with_views(a, v, b, v, pairs)
}

/// [`trace`] with A's and B's components seen through `a_view` and `b_view`.
pub fn trace_with_views(
    a: &HadronNode,
    a_view: MatrixView,
    b: &HadronNode,
    b_view: MatrixView,
    pairs: &TracePairs,
) -> Result<Complex64> {
    pairs.check(a.spins(), b.spins())?;
    let mut total = Complex64::new(0.0, 0.0);
    for &(sa, sb) in pairs.pairs() {
        let x = a.matrix(sa, a_view)?;
        let y = b.matrix(sb, b_view)?;
        let (m, k) = x.dim();
        if y.dim() != (k, m) {
            return Err(crate::HadronError::ShapeMismatch(format!(
                "a trace needs A m x k and B k x m; A is {m} x {k} and B is {:?}",
                y.dim()
            )));
        }
        for i in 0..m {
            for j in 0..k {
                total += x[[i, j]] * y[[j, i]];
            }
        }
    }
    Ok(total)
}

/// `‖x − y‖_F / ‖y‖_F` over all elements of two nodes (`‖x‖_F` when `y` is zero).
pub fn relative_error(x: &HadronNode, y: &HadronNode) -> f64 {
    let (x, y) = (x.as_slice(), y.as_slice());
    let diff: f64 = x.iter().zip(y).map(|(p, q)| (p - q).norm_sqr()).sum();
    let norm: f64 = y.iter().map(|q| q.norm_sqr()).sum();
    if norm == 0.0 {
        diff.sqrt()
    } else {
        (diff / norm).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::Term;
    use crate::node::NodeShape;

    #[test]
    fn a_hand_computed_contraction() {
        // A[0] = [1 2; 3 4]; B[0] = B[1] = [0 1; 1 0], so A[0] B[0] = [2 1; 4 3].
        // out[0] = A[0] B[0]; out[1] = A[0] B[0] + A[0] B[1] = 2 A[0] B[0].
        let r = |x: f64| Complex64::new(x, 0.0);
        let shape = NodeShape::new(2, &[2, 2]).unwrap();
        let a =
            HadronNode::from_vec(&shape, [1., 2., 3., 4., 0., 0., 0., 0.].map(r).to_vec()).unwrap();
        let b =
            HadronNode::from_vec(&shape, [0., 1., 1., 0., 0., 1., 1., 0.].map(r).to_vec()).unwrap();
        let m = SpinMapping::new(
            2,
            vec![Term::new(0, 0, 0), Term::new(1, 0, 0), Term::new(1, 0, 1)],
        )
        .unwrap();
        let out = contract(&a, &b, MatrixView::default(), MatrixView::default(), &m).unwrap();
        assert_eq!(
            out.as_slice(),
            [2., 1., 4., 3., 4., 2., 8., 6.].map(r).as_slice()
        );
        // Tr(A B) = 2 + 3 = 5 for the pair (0, 0).
        let t = trace(&a, &b, &TracePairs::new(vec![(0, 0)]).unwrap()).unwrap();
        assert_eq!(t, r(5.0));
    }
}
