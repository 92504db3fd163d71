//! Contractions: two input nodes, the matrix view each is contracted through, and a spin
//! mapping; and their validation into a [`ContractionSizes`] (the sizes every product has).

use std::sync::Arc;

use memhc_core::ObjectId;

use crate::error::{HadronError, Result};
use crate::mapping::SpinMapping;
use crate::node::NodeShape;
use crate::view::MatrixView;

/// One hadron contraction: `out[t.out] += A[t.a] · B[t.b]` for every term `t` of `mapping`,
/// with A's components seen through `a_view` and B's through `b_view`.
#[derive(Clone, Debug, PartialEq)]
pub struct Contraction {
    /// The left input.
    pub a: ObjectId,
    /// The right input.
    pub b: ObjectId,
    /// How A's components are seen as matrices.
    pub a_view: MatrixView,
    /// How B's components are seen as matrices.
    pub b_view: MatrixView,
    /// Which products accumulate where (shared: a workload uses a few mappings many times).
    pub mapping: Arc<SpinMapping>,
}

impl Contraction {
    /// A contraction with the default views (rows from the first dimension).
    pub fn new(a: ObjectId, b: ObjectId, mapping: Arc<SpinMapping>) -> Self {
        Contraction {
            a,
            b,
            a_view: MatrixView::default(),
            b_view: MatrixView::default(),
            mapping,
        }
    }

    /// The same contraction with other views.
    pub fn with_views(mut self, a_view: MatrixView, b_view: MatrixView) -> Self {
        self.a_view = a_view;
        self.b_view = b_view;
        self
    }
}

/// The sizes of a validated contraction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractionSizes {
    /// Rows of A's view and of each output component.
    pub m: usize,
    /// Columns of B's view and of each output component.
    pub n: usize,
    /// Columns of A's view, rows of B's view.
    pub k: usize,
    /// Elements of one component of A.
    pub a_elems: usize,
    /// Elements of one component of B.
    pub b_elems: usize,
    /// The output: the mapping's output spins, each `m x n`.
    pub out: NodeShape,
}

impl ContractionSizes {
    /// Validates a contraction of nodes shaped `a` and `b` and works out its sizes.
    pub fn new(
        a: &NodeShape,
        b: &NodeShape,
        a_view: MatrixView,
        b_view: MatrixView,
        mapping: &SpinMapping,
    ) -> Result<Self> {
        mapping.check_inputs(a.spins(), b.spins())?;
        let (m, k) = a.matrix(a_view)?;
        let (kb, n) = b.matrix(b_view)?;
        if k != kb {
            return Err(HadronError::ShapeMismatch(format!(
                "A's components are {m} x {k} and B's are {kb} x {n}: {k} columns against {kb} rows"
            )));
        }
        Ok(ContractionSizes {
            m,
            n,
            k,
            a_elems: a.component_elems(),
            b_elems: b.component_elems(),
            out: NodeShape::new(mapping.out_spins(), &[m, n])?,
        })
    }

    /// Elements of one output component.
    pub fn out_elems(&self) -> usize {
        self.m * self.n
    }

    /// Floating-point operations of the contraction: `8 m n k` per term (saturating at
    /// `u64::MAX`).
    pub fn flops(&self, mapping: &SpinMapping) -> u64 {
        [self.m, self.n, self.k, mapping.terms().len()]
            .iter()
            .fold(8u64, |acc, &x| acc.saturating_mul(x as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::Term;

    #[test]
    fn plans_and_mismatches() {
        let meson = NodeShape::meson(6).unwrap();
        let p = ContractionSizes::new(
            &meson,
            &meson,
            MatrixView::default(),
            MatrixView::default(),
            &SpinMapping::meson4x4(),
        )
        .unwrap();
        assert_eq!((p.m, p.n, p.k), (6, 6, 6));
        assert_eq!(p.out, NodeShape::meson(6).unwrap());
        assert_eq!(p.flops(&SpinMapping::meson4x4()), 64 * 8 * 216);

        // A baryon-like node (N, N, N) seen as N² x N against a meson N x N: (N² x N)(N x N).
        let baryon = NodeShape::new(2, &[3, 3, 3]).unwrap();
        let small = NodeShape::new(2, &[3, 3]).unwrap();
        let diag = SpinMapping::diagonal(2).unwrap();
        let p = ContractionSizes::new(
            &baryon,
            &small,
            MatrixView::split(2),
            MatrixView::default(),
            &diag,
        )
        .unwrap();
        assert_eq!((p.m, p.n, p.k, p.a_elems), (9, 3, 3, 27));
        // ... but not as N x N².
        assert!(matches!(
            ContractionSizes::new(
                &baryon,
                &small,
                MatrixView::split(1),
                MatrixView::default(),
                &diag
            ),
            Err(HadronError::ShapeMismatch(_))
        ));
        let wide = SpinMapping::new(1, vec![Term::new(0, 5, 0)]).unwrap();
        assert!(matches!(
            ContractionSizes::new(
                &small,
                &small,
                MatrixView::default(),
                MatrixView::default(),
                &wide
            ),
            Err(HadronError::SpinOutOfRange { .. })
        ));
    }
}
