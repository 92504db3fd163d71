//! One layer of a spin mapping, with what every contraction that runs it needs worked out
//! once: whether it is a strided batch, and its table of components in the backend's operand
//! order.
//!
//! A contraction runs each layer of its mapping as one batched GEMM (see
//! [`SpinMapping::layers`](crate::SpinMapping::layers)). Working out how, for every
//! contraction anew, costs more than the runtime's whole bookkeeping for it; the mapping is
//! built once and used thousands of times, so it carries the answer.

use memhc_core::backend::components::ComponentTable;

use crate::rowmajor::blas_order;
use crate::term::Term;

/// One layer: terms in which every output appears at most once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    terms: Vec<Term>,
    strided: Option<Strided>,
    table: ComponentTable,
}

impl Layer {
    /// The layer of `terms` (no output twice; the mapping guarantees it).
    pub(crate) fn new(terms: Vec<Term>) -> Self {
        let strided = strided(&terms);
        let table = ComponentTable::new(terms.iter().map(|t| blas_order(t.a, t.b, t.out)));
        Layer {
            terms,
            strided,
            table,
        }
    }

    /// The terms, in accumulation order.
    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// The layer as a strided batch, if its terms advance by constant spin steps.
    pub fn strided(&self) -> Option<Strided> {
        self.strided
    }

    /// The layer's items as component indices in the backend's operand order (BLAS's A is the
    /// row-major B: see [`crate::rowmajor`]), for [`memhc_core::Launch::gemm_components`].
    pub fn table(&self) -> &ComponentTable {
        &self.table
    }
}

/// Items in a form a strided batch can express: item `i` uses spins `first + i * step` of the
/// output, A and B.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strided {
    /// The first term.
    pub first: Term,
    /// Spin steps between consecutive items, for the output, A and B.
    pub step: (usize, usize, usize),
    /// Number of items.
    pub count: usize,
}

/// Whether `terms` (in order) advance by constant, non-negative spin steps, so that one
/// strided batch can run them; `None` otherwise (and for fewer than two terms).
pub fn strided(terms: &[Term]) -> Option<Strided> {
    let (first, second) = (terms.first()?, terms.get(1)?);
    let step = (
        second.out.checked_sub(first.out)?,
        second.a.checked_sub(first.a)?,
        second.b.checked_sub(first.b)?,
    );
    if step.0 == 0 {
        return None; // two items writing one output
    }
    // Checked: indices come from callers and may be as large as usize::MAX (found by the C
    // ABI fuzzer: an overflow panic here was MEMHC_STATUS_INTERNAL).
    let at = |i: usize, base: usize, step: usize| i.checked_mul(step)?.checked_add(base);
    let regular = terms.iter().enumerate().all(|(i, t)| {
        match (
            at(i, first.out, step.0),
            at(i, first.a, step.1),
            at(i, first.b, step.2),
        ) {
            (Some(out), Some(a), Some(b)) => *t == Term::new(out, a, b),
            _ => false,
        }
    });
    regular.then_some(Strided {
        first: *first,
        step,
        count: terms.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_detection() {
        assert_eq!(
            strided(&[Term::new(0, 0, 0), Term::new(1, 1, 1), Term::new(2, 2, 2)]),
            Some(Strided {
                first: Term::new(0, 0, 0),
                step: (1, 1, 1),
                count: 3
            })
        );
        assert_eq!(
            strided(&[Term::new(0, 3, 1), Term::new(2, 3, 5)]).map(|s| s.step),
            Some((2, 0, 4))
        );
        assert_eq!(strided(&[Term::new(0, 0, 0)]), None);
        assert_eq!(strided(&[Term::new(1, 0, 0), Term::new(0, 1, 1)]), None);
        assert_eq!(
            strided(&[Term::new(0, 0, 0), Term::new(1, 1, 1), Term::new(3, 2, 2)]),
            None
        );
        // A step of usize::MAX overflows at the third term: not regular, and no panic.
        assert_eq!(
            strided(&[
                Term::new(0, 0, 0),
                Term::new(1, usize::MAX, 0),
                Term::new(2, 5, 0)
            ]),
            None
        );
    }

    #[test]
    fn the_table_is_in_blas_order() {
        // out[2] += A[0] B[1]: BLAS's A is our B (component 1), its B our A (component 0).
        let layer = Layer::new(vec![Term::new(2, 0, 1), Term::new(5, 3, 4)]);
        assert_eq!(layer.table().items(), &[[1, 0, 2], [4, 3, 5]]);
        assert_eq!(layer.table().needs(), [5, 4, 6]);
        assert!(layer.table().distinct_outputs());
        assert_eq!(layer.strided().map(|s| s.step), Some((3, 3, 3)));
    }
}
