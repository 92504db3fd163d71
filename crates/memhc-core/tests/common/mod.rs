//! Helpers shared by the runtime's integration tests: random data, the reference product, and
//! a launch that multiplies two objects component by component.

#![allow(dead_code)]

pub mod workload;

use memhc_core::backend::gemm::{GemmItem, GemmShape};
use memhc_core::{Access, Backend, Complex64, Layout, ObjectId, Result, Runtime};
use memhc_testkit::conformance::{random_elements, reference_gemm};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// A seeded generator.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// Random values for an object of `layout`.
pub fn random(rng: &mut ChaCha8Rng, layout: Layout) -> Vec<Complex64> {
    random_elements(rng, layout.elems())
}

/// A layout of `spins` components, each an `n x n` matrix.
pub fn square(spins: usize, n: usize) -> Layout {
    Layout::new(spins, n * n).unwrap()
}

/// The side of the square components of `layout`.
pub fn side(layout: Layout) -> usize {
    let n = (layout.component_elems() as f64).sqrt().round() as usize;
    assert_eq!(n * n, layout.component_elems(), "components are not square");
    n
}

/// `out[c] = a[c] * b[c]` for every component, by the reference GEMM.
pub fn product(a: &[Complex64], b: &[Complex64], layout: Layout) -> Vec<Complex64> {
    let n = side(layout);
    let e = layout.component_elems();
    let mut out = vec![Complex64::new(0.0, 0.0); layout.elems()];
    for c in 0..layout.components() {
        reference_gemm(
            &GemmShape::dense(n, n, n),
            &a[c * e..(c + 1) * e],
            &b[c * e..(c + 1) * e],
            &mut out[c * e..(c + 1) * e],
        );
    }
    out
}

/// Launches `out[c] = a[c] * b[c]` for every component on `stream` (one batched GEMM).
/// `a` and `b` may be the same object.
pub fn multiply<B: Backend>(
    rt: &mut Runtime<B>,
    stream: usize,
    a: ObjectId,
    b: ObjectId,
    out: ObjectId,
) -> Result<()> {
    let layout = rt.layout(out)?;
    let n = side(layout);
    let mut accesses = vec![Access::read(a)];
    let bi = if b == a {
        0
    } else {
        accesses.push(Access::read(b));
        1
    };
    let oi = accesses.len();
    accesses.push(Access::write(out));
    rt.launch(stream, &accesses, |l| {
        let items = (0..layout.components())
            .map(|c| {
                Ok(GemmItem {
                    a: l.component(0, c)?,
                    b: l.component(bi, c)?,
                    c: l.component(oi, c)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        l.gemm_batched(&GemmShape::dense(n, n, n), &items)
    })
}

/// A launch that only makes `objects` resident for reading, and does nothing.
pub fn touch<B: Backend>(rt: &mut Runtime<B>, objects: &[ObjectId]) -> Result<()> {
    let accesses: Vec<_> = objects.iter().map(|&o| Access::read(o)).collect();
    rt.launch(0, &accesses, |_| Ok(()))
}

/// Asserts two value lists agree to the project's tolerance.
pub fn assert_close(got: &[Complex64], expected: &[Complex64], what: &str) {
    let err = memhc_testkit::conformance::relative_error(got, expected);
    assert!(
        err <= memhc_testkit::conformance::TOLERANCE,
        "{what}: relative error {err:e}"
    );
}
