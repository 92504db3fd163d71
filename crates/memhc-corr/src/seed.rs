//! Seeded node data, defined so that anyone can reproduce it without a Rust random-number
//! library: SplitMix64 (Steele, Lea and Flood, 2014), two draws per element, in C order.
//!
//! ```text
//! state = seed
//! next():  state += 0x9E3779B97F4A7C15;  z = state;
//!          z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
//!          z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
//!          return z ^ (z >> 31)                      (all mod 2^64)
//! uniform() = (next() >> 11) * 2^-52 - 1             (exact, in [-1, 1))
//! element k (C order) = uniform() + i uniform()       (real part drawn first)
//! ```

use num_complex::Complex64;

/// The SplitMix64 generator. See the [module documentation](self).
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A double uniform in `[-1, 1)`: `(next >> 11) · 2^-52 − 1`, computed exactly.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 52) as f64) - 1.0
    }

    /// The next complex element: real part first.
    pub fn complex(&mut self) -> Complex64 {
        let re = self.uniform();
        let im = self.uniform();
        Complex64::new(re, im)
    }
}

/// `len` seeded elements from `seed`, in order.
pub fn values(seed: u64, len: usize) -> Vec<Complex64> {
    let mut g = SplitMix64::new(seed);
    (0..len).map(|_| g.complex()).collect()
}

/// [`values`] written into `out` (its length is the count): the same elements, in place.
pub fn fill(seed: u64, out: &mut [Complex64]) {
    let mut g = SplitMix64::new(seed);
    for z in out {
        *z = g.complex();
    }
}

/// [`values`], with the memory reserved fallibly first: a `len` the allocator cannot give is
/// an error, not an abort of the process.
pub fn try_values(
    seed: u64,
    len: usize,
) -> Result<Vec<Complex64>, std::collections::TryReserveError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)?;
    let mut g = SplitMix64::new(seed);
    v.extend((0..len).map(|_| g.complex()));
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filling_in_place_gives_the_same_values() {
        let mut out = vec![Complex64::new(9.0, 9.0); 5];
        fill(42, &mut out);
        assert_eq!(out, values(42, 5));
    }

    #[test]
    fn the_documented_check_values() {
        // The published SplitMix64 output for seed 0, and the values docs/correlator-format.md
        // gives (computed there with a few lines of Python integer arithmetic).
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(SplitMix64::new(0).uniform(), 0.7666216164272852);
        let v = values(1, 2);
        assert_eq!(
            v[0],
            Complex64::new(0.1331231503445618, 0.49156351452540226)
        );
        assert_eq!(
            v[1],
            Complex64::new(0.9420055071735924, -0.11128156588845584)
        );
        assert_eq!(try_values(1, 2).ok(), Some(v));
        assert!(try_values(1, usize::MAX).is_err());
        assert!(
            values(7, 1000)
                .iter()
                .all(|z| (-1.0..1.0).contains(&z.re) && (-1.0..1.0).contains(&z.im))
        );
    }
}
