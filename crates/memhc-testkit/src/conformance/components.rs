//! Batches by component ([`Backend::gemm_components`]): the same products as the pointer-array
//! batch of the same items, against the reference, and the same refusals.

use num_complex::Complex64;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use memhc_backend::Backend;
use memhc_backend::components::{ComponentBatch, ComponentTable, Strip};
use memhc_backend::gemm::{DeviceRef, GemmShape};

use super::*;

/// Three strips of `count` components of `n x n`, `stride` apart, after a gap: A and B in one
/// buffer (as two nodes of an arena would be), C in another.
struct Layout {
    gap: usize,
    stride: usize,
    count: usize,
}

impl Layout {
    fn start(&self, strip: usize) -> usize {
        self.gap + strip * (self.gap + self.count * self.stride)
    }
    fn len(&self, strips: usize) -> usize {
        self.start(strips)
    }
}

/// A batch by component matches the reference for an irregular table with distinct outputs (a
/// layer of a sparse spin mapping) on padded strips, then accumulates a second table into the
/// same outputs with `beta = 1` (how a contraction's layers build up its outputs).
pub fn gemm_components_matches_reference<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let mut rng = ChaCha8Rng::seed_from_u64(0xc0de);
    let n = 3;
    let layout = Layout {
        gap: 7,
        stride: n * n + 2,
        count: 6,
    };
    let inputs = random_elements(&mut rng, layout.len(2));
    let outputs = random_elements(&mut rng, layout.len(1));
    let inb = upload(b, &s, &inputs)?;
    let outb = upload(b, &s, &outputs)?;
    let strip = |buffer, which: usize| Strip {
        start: DeviceRef::new(buffer, layout.start(which)),
        stride: layout.stride,
        count: layout.count,
    };
    let first = ComponentTable::new([(5, 0, 3), (1, 4, 0), (2, 2, 5), (0, 5, 1)]);
    let second = ComponentTable::new([(3, 3, 0), (4, 1, 3)]);
    let alpha = Complex64::new(rng.random_range(-2.0..2.0), 0.5);
    let mut expected = outputs.clone();
    for (table, beta) in [(&first, 0.0), (&second, 1.0)] {
        let shape = GemmShape {
            alpha,
            beta: Complex64::new(beta, 0.0),
            ..GemmShape::dense(n, n, n)
        };
        let batch = ComponentBatch {
            a: strip(&inb, 0),
            b: strip(&inb, 1),
            c: strip(&outb, 0),
            table,
        };
        b.gemm_components(&s, &shape, &batch)?;
        for &[x, y, z] in table.items() {
            let at = |which: usize, c: usize| layout.start(which) + c * layout.stride;
            let (a0, b0, c0) = (at(0, x), at(1, y), at(0, z));
            reference_gemm(
                &shape,
                &inputs[a0..a0 + n * n],
                &inputs[b0..b0 + n * n],
                &mut expected[c0..c0 + n * n],
            );
        }
    }
    let got = download(b, &s, &outb)?;
    let err = relative_error(&got, &expected);
    ensure(err <= TOLERANCE, || {
        format!("gemm_components: relative error {err:e}")
    })?;
    free_all(b, [inb, outb])
}

/// A batch by component whose table reaches past a strip, whose strip runs out of its buffer,
/// or whose outputs overlap an input, is refused with [`BackendError::InvalidArgument`], as the
/// pointer-array batch of the same items would be.
pub fn gemm_components_rejects_invalid_batches<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let n = 2;
    let elems = n * n;
    let buffer = upload(b, &s, &vec![Complex64::new(1.0, 0.0); 8 * elems])?;
    let other = upload(b, &s, &vec![Complex64::new(0.0, 0.0); 4 * elems])?;
    let shape = GemmShape::dense(n, n, n);
    let strip = |buf, first: usize, count| Strip {
        start: DeviceRef::new(buf, first),
        stride: elems,
        count,
    };
    let table = ComponentTable::new([(0, 1, 0), (1, 0, 1)]);
    let cases = [
        // C's strip is one component short for the table.
        (
            "a table past its strip",
            strip(&buffer, 0, 2),
            strip(&buffer, 2 * elems, 2),
            strip(&other, 0, 1),
        ),
        // C's strip claims more than its buffer holds.
        (
            "a strip out of its buffer",
            strip(&buffer, 0, 2),
            strip(&buffer, 2 * elems, 2),
            strip(&other, 3 * elems, 2),
        ),
        // C's strip is A's: an output overlapping an input.
        (
            "outputs overlapping inputs",
            strip(&buffer, 0, 2),
            strip(&buffer, 2 * elems, 2),
            strip(&buffer, 0, 2),
        ),
    ];
    for (what, a, bb, c) in cases {
        let batch = ComponentBatch {
            a,
            b: bb,
            c,
            table: &table,
        };
        let result = b.gemm_components(&s, &shape, &batch);
        ensure(
            matches!(result, Err(BackendError::InvalidArgument { .. })),
            || format!("gemm_components accepted {what}: {result:?}"),
        )?;
    }
    b.synchronize()?;
    free_all(b, [buffer, other])
}
