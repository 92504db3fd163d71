//! Correlator traces: after the last reduction of a graph, the trace over spin and
//! distillation indices gives the number physicists read,
//! `trace(A, B, pairs) = Σ_(a, b) in pairs  Tr(A[a] · B[b])`.

use std::collections::HashSet;

use crate::error::{HadronError, Operand, Result};

/// Which spin components of A and B are paired in a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracePairs {
    pairs: Vec<(usize, usize)>,
}

impl TracePairs {
    /// Pairs `(a, b)`, each at most once; at least one.
    pub fn new(pairs: Vec<(usize, usize)>) -> Result<Self> {
        if pairs.is_empty() {
            return Err(HadronError::Empty("trace pairs"));
        }
        let mut seen = HashSet::with_capacity(pairs.len());
        if let Some(&(a, b)) = pairs.iter().find(|p| !seen.insert(**p)) {
            return Err(HadronError::DuplicatePair(a, b));
        }
        Ok(TracePairs { pairs })
    }

    /// The full spin trace of two mesons: `4 alpha + beta` of A with `4 beta + alpha` of B.
    pub fn meson4x4() -> Self {
        let pairs = (0..4)
            .flat_map(|alpha| (0..4).map(move |beta| (4 * alpha + beta, 4 * beta + alpha)))
            .collect();
        TracePairs { pairs }
    }

    /// The pairs.
    pub fn pairs(&self) -> &[(usize, usize)] {
        &self.pairs
    }

    /// Checks the indices against nodes of `a_spins` and `b_spins` spins.
    pub fn check(&self, a_spins: usize, b_spins: usize) -> Result<()> {
        for &(a, b) in &self.pairs {
            if a >= a_spins {
                return Err(HadronError::SpinOutOfRange {
                    operand: Operand::A,
                    index: a,
                    spins: a_spins,
                });
            }
            if b >= b_spins {
                return Err(HadronError::SpinOutOfRange {
                    operand: Operand::B,
                    index: b,
                    spins: b_spins,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meson_pairing() {
        let p = TracePairs::meson4x4();
        assert_eq!(p.pairs().len(), 16);
        assert!(
            p.pairs().contains(&(1, 4))
                && p.pairs().contains(&(4, 1))
                && p.pairs().contains(&(5, 5))
        );
        assert!(TracePairs::new(vec![(0, 0), (0, 0)]).is_err());
        assert!(TracePairs::new(vec![]).is_err());
        assert!(p.check(16, 15).is_err());
    }
}
