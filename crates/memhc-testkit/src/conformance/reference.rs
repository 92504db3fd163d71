//! The independent reference the checks compare against: GEMM by its definition, the
//! relative error, random inputs.

use num_complex::Complex64;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use memhc_backend::gemm::{GemmShape, Op};

/// `C = alpha op(A) op(B) + beta C` by the definition, for column-major operands starting at
/// the beginning of each slice. `C` is not read when `beta` is zero.
pub fn reference_gemm(s: &GemmShape, a: &[Complex64], b: &[Complex64], c: &mut [Complex64]) {
    let at = |i: usize, l: usize| match s.op_a {
        Op::N => a[i + l * s.lda],
        Op::T => a[l + i * s.lda],
        Op::C => a[l + i * s.lda].conj(),
    };
    let bt = |l: usize, j: usize| match s.op_b {
        Op::N => b[l + j * s.ldb],
        Op::T => b[j + l * s.ldb],
        Op::C => b[j + l * s.ldb].conj(),
    };
    let zero = Complex64::new(0.0, 0.0);
    for j in 0..s.n {
        for i in 0..s.m {
            let mut acc = zero;
            for l in 0..s.k {
                acc += at(i, l) * bt(l, j);
            }
            let old = if s.beta == zero {
                zero
            } else {
                s.beta * c[i + j * s.ldc]
            };
            c[i + j * s.ldc] = s.alpha * acc + old;
        }
    }
}

/// `‖x − y‖_F / ‖y‖_F` (or `‖x‖_F` when `y` is zero).
pub fn relative_error(x: &[Complex64], y: &[Complex64]) -> f64 {
    let diff: f64 = x.iter().zip(y).map(|(p, q)| (p - q).norm_sqr()).sum();
    let norm: f64 = y.iter().map(Complex64::norm_sqr).sum();
    if norm == 0.0 {
        diff.sqrt()
    } else {
        (diff / norm).sqrt()
    }
}

/// `n` random complex numbers with parts uniform in [-1, 1).
pub fn random_elements(rng: &mut ChaCha8Rng, n: usize) -> Vec<Complex64> {
    (0..n)
        .map(|_| Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_gemm_by_hand() {
        // [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50], column-major.
        let r = |x: f64| Complex64::new(x, 0.0);
        let a = [r(1.0), r(3.0), r(2.0), r(4.0)];
        let b = [r(5.0), r(7.0), r(6.0), r(8.0)];
        let mut c = [r(f64::NAN); 4];
        reference_gemm(&GemmShape::dense(2, 2, 2), &a, &b, &mut c);
        assert_eq!(c, [r(19.0), r(43.0), r(22.0), r(50.0)]);
        // Conjugate transpose of A = [i 0; 0 1] is [-i 0; 0 1].
        let ai = [Complex64::new(0.0, 1.0), r(0.0), r(0.0), r(1.0)];
        let shape = GemmShape {
            op_a: Op::C,
            ..GemmShape::dense(2, 2, 2)
        };
        reference_gemm(&shape, &ai, &b, &mut c);
        assert_eq!(c[0], Complex64::new(0.0, -5.0));
        assert_eq!(c[3], r(8.0));
    }

    #[test]
    fn relative_error_is_relative() {
        let y = [Complex64::new(3.0, 4.0)]; // norm 5
        let x = [Complex64::new(3.0, 4.5)];
        assert!((relative_error(&x, &y) - 0.1).abs() < 1e-15);
        assert_eq!(relative_error(&y, &y), 0.0);
    }
}
