//! Spin mappings (MemHC's "batch-spin mappings"): which products of spin components of the two
//! inputs accumulate into which spin component of the output.
//!
//! A mapping is a list of terms `(out, a, b)` meaning `out[out] += A[a] · B[b]`. Any list is
//! accepted as long as it is valid: every index in range, no term twice. The named mapping
//! [`SpinMapping::meson4x4`] is the 4x4 spin-block product of two mesons (16 outputs of four
//! terms each: a batch of 64 products).
//!
//! For execution the terms are split into [`layers`](SpinMapping::layers) in which every output
//! appears at most once: layer `l` holds the `l`-th term of each output, so one batched GEMM
//! per layer accumulates with `beta = 0` in layer 0 and `beta = 1` after, with no temporaries.

use std::collections::HashSet;

use crate::admission::{SMALL_BYTES, admit_host};
use crate::error::{HadronError, Operand, Result};

pub use crate::layer::{Layer, Strided, strided};
pub use crate::term::Term;

/// Host bytes a mapping keeps per output spin at most: its count of terms per output, the
/// uncovered list, and [`SpinMapping::terms_by_output`]'s empty list (five words).
const BYTES_PER_OUT_SPIN: u64 = 40;

/// A validated spin mapping. See the [module documentation](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpinMapping {
    out_spins: usize,
    terms: Vec<Term>,
    /// [`SpinMapping::layers`], worked out once (every contraction uses them).
    layers: Vec<Layer>,
    /// [`SpinMapping::uncovered`], worked out once.
    uncovered: Vec<usize>,
    /// The spins of A and B the terms reach (largest index plus one), so that
    /// [`SpinMapping::check_inputs`] is O(1) when the inputs are large enough.
    reach: (usize, usize),
    /// [`SpinMapping::block_product`], worked out once.
    block: Option<usize>,
}

impl SpinMapping {
    /// A mapping producing `out_spins` output spins from `terms` (in the order given, which
    /// is the order products accumulate in). Fails on an empty list, an output index out of
    /// range, or a repeated term. Input indices are checked against the nodes at contraction
    /// time ([`SpinMapping::check_inputs`]).
    ///
    /// The mapping keeps a few words per output spin, so `out_spins` is admitted against the
    /// host memory first ([`admit_host`]): a count whose tables cannot fit is refused with
    /// [`HadronError::OutOfHostMemory`] (or [`HadronError::TooLarge`] past the address space)
    /// before anything is allocated.
    pub fn new(out_spins: usize, terms: Vec<Term>) -> Result<Self> {
        if terms.is_empty() {
            return Err(HadronError::Empty("spin mapping"));
        }
        let bytes = (out_spins as u64)
            .checked_mul(BYTES_PER_OUT_SPIN)
            .ok_or_else(|| {
                HadronError::TooLarge(format!(
                    "a spin mapping of {out_spins} output spins exceeds the address space"
                ))
            })?;
        if bytes >= SMALL_BYTES {
            admit_host(
                &format!("a spin mapping of {out_spins} output spins"),
                bytes,
            )?;
        }
        let mut seen = HashSet::with_capacity(terms.len());
        for t in &terms {
            if t.out >= out_spins {
                return Err(HadronError::SpinOutOfRange {
                    operand: Operand::Out,
                    index: t.out,
                    spins: out_spins,
                });
            }
            if !seen.insert(*t) {
                return Err(HadronError::DuplicateTerm(*t));
            }
        }
        Ok(Self::with_terms(out_spins, terms))
    }

    /// The mapping of valid `terms`, with its layers and uncovered outputs worked out.
    fn with_terms(out_spins: usize, terms: Vec<Term>) -> Self {
        let mut seen = vec![0usize; out_spins];
        let mut layers: Vec<Vec<Term>> = Vec::new();
        for t in &terms {
            let l = seen[t.out];
            seen[t.out] += 1;
            if layers.len() <= l {
                layers.push(Vec::new());
            }
            layers[l].push(*t);
        }
        let uncovered = (0..out_spins).filter(|&s| seen[s] == 0).collect();
        let reach = terms.iter().fold((0, 0), |(a, b), t| {
            // Saturating: an index of usize::MAX reaches past every node, and
            // check_inputs then names it instead of wrapping to 0.
            (a.max(t.a.saturating_add(1)), b.max(t.b.saturating_add(1)))
        });
        SpinMapping {
            block: block_product(out_spins, &terms),
            reach,
            out_spins,
            terms,
            layers: layers.into_iter().map(Layer::new).collect(),
            uncovered,
        }
    }

    /// `Some(g)` when the terms are exactly the `g x g` spin-block product
    /// `out[g a + e] += A[g a + b] · B[g b + e]` (each `(a, b, e)` once, in any order, `g ≥ 2`):
    /// the product of the two nodes seen as `g x g` block matrices, which on tiled nodes
    /// ([`memhc_core::Tiles`]) is one GEMM. [`SpinMapping::meson4x4`] is `Some(4)`.
    pub fn block_product(&self) -> Option<usize> {
        self.block
    }

    /// A mapping whose number of output spins is the largest output index plus one.
    /// An output index of `usize::MAX` has no count above it: [`HadronError::TooLarge`].
    pub fn from_terms(terms: Vec<Term>) -> Result<Self> {
        let mut out_spins = 0usize;
        for t in &terms {
            let reach = t.out.checked_add(1).ok_or_else(|| {
                HadronError::TooLarge(format!(
                    "output spin {}: no spin count is larger than it",
                    t.out
                ))
            })?;
            out_spins = out_spins.max(reach);
        }
        Self::new(out_spins, terms)
    }

    /// The 4x4 spin-block product of two full-spin mesons: with `s = 4 alpha + beta`,
    /// `out(alpha, gamma) += A(alpha, beta) · B(beta, gamma)`: 16 outputs, 4 terms each.
    pub fn meson4x4() -> Self {
        let mut terms = Vec::with_capacity(64);
        for alpha in 0..4 {
            for gamma in 0..4 {
                for beta in 0..4 {
                    terms.push(Term::new(
                        4 * alpha + gamma,
                        4 * alpha + beta,
                        4 * beta + gamma,
                    ));
                }
            }
        }
        Self::with_terms(16, terms)
    }

    /// `out[s] = A[s] · B[s]` for `s` below `spins`: a regular mapping (one strided batch).
    pub fn diagonal(spins: usize) -> Result<Self> {
        Self::new(spins, (0..spins).map(|s| Term::new(s, s, s)).collect())
    }

    /// Number of output spins.
    pub fn out_spins(&self) -> usize {
        self.out_spins
    }

    /// The terms, in accumulation order.
    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// Checks the input indices against inputs of `a_spins` and `b_spins` spins: in O(1) when
    /// they are in range, else the first term out of range is named.
    pub fn check_inputs(&self, a_spins: usize, b_spins: usize) -> Result<()> {
        if self.reach.0 <= a_spins && self.reach.1 <= b_spins {
            return Ok(());
        }
        for t in &self.terms {
            if t.a >= a_spins {
                return Err(HadronError::SpinOutOfRange {
                    operand: Operand::A,
                    index: t.a,
                    spins: a_spins,
                });
            }
            if t.b >= b_spins {
                return Err(HadronError::SpinOutOfRange {
                    operand: Operand::B,
                    index: t.b,
                    spins: b_spins,
                });
            }
        }
        Ok(())
    }

    /// The terms split into layers in which each output appears at most once: layer `l` holds
    /// the `l`-th term (in accumulation order) of every output that has one. Every output of a
    /// layer `l > 0` also appears in layer 0, so layer 0 is every output's first. Each layer
    /// carries how it runs ([`Layer::strided`], [`Layer::table`]).
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// Output spins no term writes (they are set to zero).
    pub fn uncovered(&self) -> &[usize] {
        &self.uncovered
    }

    /// For each output spin, the positions (in [`SpinMapping::terms`]) of its terms, in order.
    pub fn terms_by_output(&self) -> Vec<Vec<usize>> {
        let mut by = vec![Vec::new(); self.out_spins];
        for (i, t) in self.terms.iter().enumerate() {
            by[t.out].push(i);
        }
        by
    }
}

/// The `g` of [`SpinMapping::block_product`]: `out_spins = g²`, `g³` terms (distinct, as every
/// mapping's are), each of the form `(g a + e, g a + b, g b + e)` with `a, b, e < g`.
fn block_product(out_spins: usize, terms: &[Term]) -> Option<usize> {
    let g = out_spins.isqrt();
    if g < 2 || g * g != out_spins || terms.len() != g * out_spins {
        return None;
    }
    let block = |t: &Term| {
        let (out, a, b) = (
            (t.out / g, t.out % g),
            (t.a / g, t.a % g),
            (t.b / g, t.b % g),
        );
        t.a < out_spins && t.b < out_spins && out.0 == a.0 && a.1 == b.0 && b.1 == out.1
    };
    terms.iter().all(block).then_some(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_products_are_recognised_by_their_terms_alone() {
        assert_eq!(SpinMapping::meson4x4().block_product(), Some(4));
        // The 3 x 3 block product, built here term by term and reversed: still one.
        let mut terms = Vec::new();
        for (a, b, e) in (0..27).map(|i| (i / 9, (i / 3) % 3, i % 3)) {
            terms.push(Term::new(3 * a + e, 3 * a + b, 3 * b + e));
        }
        terms.reverse();
        let m = SpinMapping::new(9, terms.clone()).expect("mapping");
        assert_eq!(m.block_product(), Some(3));
        // One term fewer, or one changed, or a 2 x 2 product declared with 9 outputs: not one.
        let short = SpinMapping::new(9, terms[1..].to_vec()).expect("mapping");
        assert_eq!(short.block_product(), None);
        let mut changed = terms.clone();
        changed[0] = Term::new(0, 0, 1);
        let changed = SpinMapping::new(9, changed).expect("mapping");
        assert_eq!(changed.block_product(), None);
        assert_eq!(
            SpinMapping::diagonal(16).expect("diag").block_product(),
            None
        );
    }

    #[test]
    fn meson4x4_is_the_block_product() {
        let m = SpinMapping::meson4x4();
        assert_eq!((m.out_spins(), m.terms().len()), (16, 64));
        // out(0,0) = A(0,0)B(0,0) + A(0,1)B(1,0) + A(0,2)B(2,0) + A(0,3)B(3,0), as in the paper.
        let first: Vec<_> = m
            .terms()
            .iter()
            .filter(|t| t.out == 0)
            .map(|t| (t.a, t.b))
            .collect();
        assert_eq!(first, vec![(0, 0), (1, 4), (2, 8), (3, 12)]);
        let layers = m.layers();
        assert_eq!(layers.len(), 4);
        assert!(layers.iter().all(|l| l.terms().len() == 16));
        for l in layers {
            let outs: HashSet<_> = l.terms().iter().map(|t| t.out).collect();
            assert_eq!(outs.len(), 16, "an output twice in one layer");
        }
        assert!(m.uncovered().is_empty());
        assert!(m.check_inputs(16, 16).is_ok());
        assert!(matches!(
            m.check_inputs(16, 15),
            Err(HadronError::SpinOutOfRange {
                operand: Operand::B,
                index: 15,
                spins: 15
            })
        ));
    }

    #[test]
    fn irregular_mappings_layer_and_validate() {
        let m = SpinMapping::new(
            5,
            vec![
                Term::new(3, 0, 1),
                Term::new(0, 2, 2),
                Term::new(3, 1, 0),
                Term::new(3, 2, 2),
            ],
        )
        .unwrap();
        let layers = m.layers();
        assert_eq!(layers.len(), 3);
        assert_eq!(layers[0].terms(), [Term::new(3, 0, 1), Term::new(0, 2, 2)]);
        assert_eq!(layers[2].terms(), [Term::new(3, 2, 2)]);
        assert_eq!(m.uncovered(), vec![1, 2, 4]);
        assert_eq!(m.terms_by_output()[3], vec![0, 2, 3]);
        assert!(matches!(
            SpinMapping::new(2, vec![]),
            Err(HadronError::Empty(_))
        ));
        assert!(matches!(
            SpinMapping::new(2, vec![Term::new(2, 0, 0)]),
            Err(HadronError::SpinOutOfRange {
                operand: Operand::Out,
                ..
            })
        ));
        assert!(matches!(
            SpinMapping::new(2, vec![Term::new(1, 0, 0), Term::new(1, 0, 0)]),
            Err(HadronError::DuplicateTerm(_))
        ));
        assert_eq!(
            SpinMapping::from_terms(vec![Term::new(6, 0, 0)])
                .unwrap()
                .out_spins(),
            7
        );
    }

    #[test]
    fn huge_spin_counts_are_refused_before_any_allocation() {
        // 2^40 output spins: 40 TiB of tables, more than any host has.
        let t = vec![Term::new(0, 0, 0)];
        assert!(matches!(
            SpinMapping::new(1 << 40, t.clone()),
            Err(HadronError::OutOfHostMemory { needed, .. }) if needed == 40 << 40
        ));
        // 2^62 x 40 bytes overflows 64 bits: a bad argument.
        assert!(matches!(
            SpinMapping::new(1 << 62, t.clone()),
            Err(HadronError::TooLarge(_))
        ));
        // An output index of 2^40 asks for 2^40 + 1 spins.
        assert!(matches!(
            SpinMapping::from_terms(vec![Term::new(1 << 40, 0, 0)]),
            Err(HadronError::OutOfHostMemory { .. })
        ));
        assert!(matches!(
            SpinMapping::from_terms(vec![Term::new(usize::MAX, 0, 0)]),
            Err(HadronError::TooLarge(_))
        ));
    }

    #[test]
    fn the_largest_spin_index_does_not_wrap_past_the_range_check() {
        let m = SpinMapping::new(1, vec![Term::new(0, usize::MAX, 0)]).unwrap();
        assert_eq!(
            m.check_inputs(16, 16),
            Err(HadronError::SpinOutOfRange {
                operand: Operand::A,
                index: usize::MAX,
                spins: 16
            })
        );
        let m = SpinMapping::new(1, vec![Term::new(0, 0, usize::MAX)]).unwrap();
        assert!(matches!(
            m.check_inputs(16, 16),
            Err(HadronError::SpinOutOfRange {
                operand: Operand::B,
                ..
            })
        ));
    }

    #[test]
    fn regular_layers_are_strided() {
        let d = SpinMapping::diagonal(4).unwrap();
        assert_eq!(
            d.layers()[0].strided(),
            Some(Strided {
                first: Term::new(0, 0, 0),
                step: (1, 1, 1),
                count: 4
            })
        );
        let m = SpinMapping::meson4x4();
        assert_eq!(m.layers()[0].strided(), None);
    }
}
