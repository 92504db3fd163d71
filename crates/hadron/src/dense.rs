//! The independent reference for correlators: every graph evaluated on its own, as plain
//! dense `4r x 4c` complex matrices multiplied by triple loops and traced by a loop over the
//! diagonal. No sharing, no cache, no runtime, no backend, no planner, no batching: the
//! definitions of `docs/correlator-format.md`, written as directly as possible.
//!
//! A full-spin node (16 components, spin `s = 4 alpha + beta`) whose components are seen as
//! `r x c` matrices is the big matrix `M[alpha r + i, beta c + j] = node[4 alpha + beta][i, j]`
//! ([`big_matrix`]; a baryon's rank-3 components through a [`MatrixView`], `N x N²` or
//! `N² x N`: [`big_matrix_view`]). A meson loop's value is `Tr(M_1 M_2 ... M_k)`; a loop with
//! explicit spin mappings is folded left to right with [`crate::reference::contract`] and
//! closed with [`crate::reference::trace_with_views`]; a graph's value is its coefficient
//! times the product of its loops' values. Each node of a loop comes with its view
//! ([`Factor`]; [`loop_value`] and [`graph_value`] take the default view of every node).

use ndarray::Array2;
use num_complex::Complex64;

use crate::error::{HadronError, Result};
use crate::mapping::SpinMapping;
use crate::node::HadronNode;
use crate::trace::TracePairs;
use crate::view::MatrixView;

/// How a loop's products are taken: all `meson4x4` (a product of big matrices) or explicit
/// mappings (one per contraction, in order) and closing pairs.
#[derive(Clone, Copy, Debug)]
pub enum LoopSpins<'a> {
    /// Every product `meson4x4` and the `meson4x4` trace.
    Meson,
    /// Explicit mappings (`nodes.len() - 2`) and pairs.
    Explicit {
        /// The mappings, one per contraction.
        mappings: &'a [&'a SpinMapping],
        /// The closing pairs.
        trace: &'a TracePairs,
    },
}

/// A node of a loop and the view its components are seen through.
pub type Factor<'a> = (&'a HadronNode, MatrixView);

/// The big `4r x 4c` matrix of a full-spin meson node with `r x c` components.
pub fn big_matrix(node: &HadronNode) -> Result<Array2<Complex64>> {
    if node.shape().dims().len() != 2 {
        return Err(HadronError::BadNode(format!(
            "a big matrix needs 16 spins of rank-2 components, not {:?}",
            node.shape()
        )));
    }
    big_matrix_view(node, MatrixView::default())
}

/// The big `4r x 4c` matrix of a full-spin node whose components, seen through `view`, are
/// `r x c` (a baryon's `N x N x N` as `N x N²` or `N² x N`).
pub fn big_matrix_view(node: &HadronNode, view: MatrixView) -> Result<Array2<Complex64>> {
    let shape = node.shape();
    if shape.spins() != 16 {
        return Err(HadronError::BadNode(format!(
            "a big matrix needs 16 spins, not {shape:?}"
        )));
    }
    let (r, c) = shape.matrix(view)?;
    let mut m = Array2::zeros((4 * r, 4 * c));
    for alpha in 0..4 {
        for beta in 0..4 {
            let block = node.matrix(4 * alpha + beta, view)?;
            for i in 0..r {
                for j in 0..c {
                    m[[alpha * r + i, beta * c + j]] = block[[i, j]];
                }
            }
        }
    }
    Ok(m)
}

/// `x · y` by the textbook triple loop.
pub fn matmul(x: &Array2<Complex64>, y: &Array2<Complex64>) -> Result<Array2<Complex64>> {
    let ((m, k), (k2, n)) = (x.dim(), y.dim());
    if k != k2 {
        return Err(HadronError::ShapeMismatch(format!(
            "{m} x {k} times {k2} x {n}"
        )));
    }
    let mut out = Array2::zeros((m, n));
    for i in 0..m {
        for j in 0..n {
            let mut sum = Complex64::new(0.0, 0.0);
            for l in 0..k {
                sum += x[[i, l]] * y[[l, j]];
            }
            out[[i, j]] = sum;
        }
    }
    Ok(out)
}

/// The trace of a square matrix.
pub fn trace_of(x: &Array2<Complex64>) -> Result<Complex64> {
    let (m, n) = x.dim();
    if m != n {
        return Err(HadronError::ShapeMismatch(format!(
            "the trace of a {m} x {n} matrix"
        )));
    }
    Ok((0..m).map(|i| x[[i, i]]).sum())
}

/// The value of one loop through `nodes` (in order, each seen through its default view).
pub fn loop_value(nodes: &[&HadronNode], spins: LoopSpins<'_>) -> Result<Complex64> {
    let factors: Vec<Factor<'_>> = nodes.iter().map(|&n| (n, MatrixView::default())).collect();
    loop_value_with_views(&factors, spins)
}

/// The value of one loop through `factors` (in order, each node seen through its view).
pub fn loop_value_with_views(factors: &[Factor<'_>], spins: LoopSpins<'_>) -> Result<Complex64> {
    let Some((&(first, first_view), rest)) = factors.split_first() else {
        return Err(HadronError::Empty("loop"));
    };
    match spins {
        LoopSpins::Meson => {
            let mut product = big_matrix_view(first, first_view)?;
            for &(n, view) in rest {
                product = matmul(&product, &big_matrix_view(n, view)?)?;
            }
            trace_of(&product)
        }
        LoopSpins::Explicit { mappings, trace } => {
            let Some((last, middle)) = rest.split_last() else {
                return Err(HadronError::Empty("loop with explicit mappings (one node)"));
            };
            if mappings.len() != middle.len() {
                return Err(HadronError::ShapeMismatch(format!(
                    "{} mappings for {} contractions",
                    mappings.len(),
                    middle.len()
                )));
            }
            // P_1 is the first node through its view; every product is rank 2, seen plainly.
            let (mut product, mut view) = (first.clone(), first_view);
            for (&(n, n_view), m) in middle.iter().zip(mappings) {
                product = crate::reference::contract(&product, n, view, n_view, m)?;
                view = MatrixView::default();
            }
            let &(last, last_view) = last;
            crate::reference::trace_with_views(&product, view, last, last_view, trace)
        }
    }
}

/// A graph's value: `coefficient` times the product of its loops' values (default views).
pub fn graph_value(
    coefficient: Complex64,
    loops: &[(Vec<&HadronNode>, LoopSpins<'_>)],
) -> Result<Complex64> {
    let mut value = coefficient;
    for (nodes, spins) in loops {
        value *= loop_value(nodes, *spins)?;
    }
    Ok(value)
}

/// A graph's value: `coefficient` times the product of its loops' values, every node of a
/// loop seen through its view.
pub fn graph_value_with_views(
    coefficient: Complex64,
    loops: &[(Vec<Factor<'_>>, LoopSpins<'_>)],
) -> Result<Complex64> {
    let mut value = coefficient;
    for (factors, spins) in loops {
        value *= loop_value_with_views(factors, *spins)?;
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::NodeShape;

    fn seeded(seed: u64) -> HadronNode {
        HadronNode::random(&NodeShape::meson(2).unwrap(), seed)
    }

    #[test]
    fn meson_loops_are_cyclic_and_match_the_spin_trace() {
        let (a, b, c) = (seeded(1), seeded(2), seeded(3));
        let abc = loop_value(&[&a, &b, &c], LoopSpins::Meson).unwrap();
        let bca = loop_value(&[&b, &c, &a], LoopSpins::Meson).unwrap();
        let cba = loop_value(&[&c, &b, &a], LoopSpins::Meson).unwrap();
        assert!((abc - bca).norm() < 1e-12 * abc.norm());
        assert!(
            (abc - cba).norm() > 1e-3 * abc.norm(),
            "reversal is not a symmetry"
        );
        // Against the spin-block path: contract(a, b) meson4x4, then the meson4x4 trace with c.
        let m = SpinMapping::meson4x4();
        let v = MatrixView::default();
        let ab = crate::reference::contract(&a, &b, v, v, &m).unwrap();
        let t = crate::reference::trace(&ab, &c, &TracePairs::meson4x4()).unwrap();
        assert!((abc - t).norm() < 1e-12 * abc.norm());
        let ms = [&m];
        let explicit = LoopSpins::Explicit {
            mappings: &ms,
            trace: &TracePairs::meson4x4(),
        };
        let e = loop_value(&[&a, &b, &c], explicit).unwrap();
        assert!((abc - e).norm() < 1e-12 * abc.norm());
    }

    #[test]
    fn baryon_loops_through_views() {
        // Tr(B1 as N x N² · B2 as N² x N) = Σ_(α, β) Σ_(i, j, k) B1[4α+β][i,j,k] B2[4β+α][j,k,i].
        let shape = NodeShape::new(16, &[2, 3, 2]).unwrap();
        let other = NodeShape::new(16, &[3, 2, 2]).unwrap();
        let (b1, b2) = (HadronNode::random(&shape, 5), HadronNode::random(&other, 6));
        let mut want = Complex64::new(0.0, 0.0);
        for alpha in 0..4 {
            for beta in 0..4 {
                let (x, y) = (
                    b1.component(4 * alpha + beta),
                    b2.component(4 * beta + alpha),
                );
                for i in 0..2 {
                    for j in 0..3 {
                        for k in 0..2 {
                            want += x[[i, j, k]] * y[[j, k, i]];
                        }
                    }
                }
            }
        }
        let (v1, v2) = (MatrixView::split(1), MatrixView::split(2));
        let got = loop_value_with_views(&[(&b1, v1), (&b2, v2)], LoopSpins::Meson).unwrap();
        assert!((got - want).norm() < 1e-12 * want.norm(), "{got} vs {want}");
        // The same loop with explicit meson4x4 pairs, and rotated.
        let pairs = TracePairs::meson4x4();
        let explicit = LoopSpins::Explicit {
            mappings: &[],
            trace: &pairs,
        };
        let e = loop_value_with_views(&[(&b1, v1), (&b2, v2)], explicit).unwrap();
        let r = loop_value_with_views(&[(&b2, v2), (&b1, v1)], LoopSpins::Meson).unwrap();
        assert!((e - want).norm() < 1e-12 * want.norm() && (r - want).norm() < 1e-12 * want.norm());
        // Views that do not chain are refused; rank-3 nodes have no default big matrix.
        assert!(loop_value_with_views(&[(&b1, v1), (&b2, v1)], LoopSpins::Meson).is_err());
        assert!(big_matrix(&b1).is_err());
    }

    #[test]
    fn a_hand_computed_graph() {
        // N = 1: each node is a 4 x 4 matrix; take diagonal ones: Tr(A B) = Σ a_i b_i.
        let r = |x: f64| Complex64::new(x, 0.0);
        let shape = NodeShape::meson(1).unwrap();
        let diag = |d: [f64; 4]| {
            let mut v = vec![r(0.0); 16];
            for (alpha, x) in d.iter().enumerate() {
                v[5 * alpha] = r(*x);
            }
            HadronNode::from_vec(&shape, v).unwrap()
        };
        let (a, b) = (diag([1., 2., 3., 4.]), diag([1., 1., 2., 0.5]));
        let g = graph_value(
            r(-2.0),
            &[
                (vec![&a, &b], LoopSpins::Meson),
                (vec![&b], LoopSpins::Meson),
            ],
        )
        .unwrap();
        // Tr(A B) = 1 + 2 + 6 + 2 = 11; Tr(B) = 4.5; -2 * 11 * 4.5 = -99.
        assert_eq!(g, r(-99.0));
    }
}
