//! One term of a spin mapping: `out[out] += A[a] · B[b]`.

/// One term: `out[out] += A[a] · B[b]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Term {
    /// Output spin.
    pub out: usize,
    /// Spin of A.
    pub a: usize,
    /// Spin of B.
    pub b: usize,
}

impl Term {
    /// The term `out[out] += A[a] · B[b]`.
    pub fn new(out: usize, a: usize, b: usize) -> Self {
        Term { out, a, b }
    }
}
