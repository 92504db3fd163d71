//! Batched GEMM and GEAM against the reference: pointer-array, strided, beta, invalid
//! arguments, empty batches.

use num_complex::Complex64;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use memhc_backend::gemm::{DeviceRef, GeamShape, GemmItem, GemmShape, Op, StridedBatch};
use memhc_backend::{Backend, BackendError, ELEMENT_BYTES};

use super::*;

/// One random GEMM case: operands at offsets in shared buffers, padded leading dimensions.
struct Case {
    shape: GemmShape,
    a: Vec<Complex64>,
    b: Vec<Complex64>,
    c: Vec<Complex64>,
}

fn random_case(rng: &mut ChaCha8Rng, op_a: Op, op_b: Op) -> Case {
    let (m, n, k) = (
        rng.random_range(1..9),
        rng.random_range(1..9),
        rng.random_range(1..9),
    );
    let mut shape = GemmShape {
        op_a,
        op_b,
        ..GemmShape::dense(m, n, k)
    };
    shape.lda = shape.a_stored().0 + rng.random_range(0..3);
    shape.ldb = shape.b_stored().0 + rng.random_range(0..3);
    shape.ldc = m + rng.random_range(0..3);
    shape.alpha = Complex64::new(rng.random_range(-2.0..2.0), rng.random_range(-2.0..2.0));
    shape.beta = Complex64::new(rng.random_range(-2.0..2.0), rng.random_range(-2.0..2.0));
    let (ea, eb, ec) = (shape.a_extent(), shape.b_extent(), shape.c_extent());
    Case {
        a: random_elements(rng, ea),
        b: random_elements(rng, eb),
        c: random_elements(rng, ec),
        shape,
    }
}

/// Pointer-array batches match the reference for every combination of operations, with
/// non-square shapes, padded leading dimensions, offsets into shared buffers, and general
/// alpha and beta.
pub fn gemm_batched_matches_reference<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let mut rng = ChaCha8Rng::seed_from_u64(0x6e6d);
    for op_a in [Op::N, Op::T, Op::C] {
        for op_b in [Op::N, Op::T, Op::C] {
            // One shape per batch: three items whose operands sit at offsets in two buffers.
            let base = random_case(&mut rng, op_a, op_b);
            let shape = base.shape;
            let cases: Vec<Case> = (0..3)
                .map(|_| Case {
                    shape,
                    a: random_elements(&mut rng, shape.a_extent()),
                    b: random_elements(&mut rng, shape.b_extent()),
                    c: random_elements(&mut rng, shape.c_extent()),
                })
                .collect();
            let gap = 5;
            let ec = shape.c_extent();
            // Inputs: all A then all B in one buffer; outputs in another, each after a gap.
            let mut inputs = Vec::new();
            let mut a_off = Vec::new();
            let mut b_off = Vec::new();
            for c in &cases {
                inputs.extend(std::iter::repeat_n(Complex64::new(9.0, 9.0), gap));
                a_off.push(inputs.len());
                inputs.extend_from_slice(&c.a);
            }
            for c in &cases {
                inputs.extend(std::iter::repeat_n(Complex64::new(9.0, 9.0), gap));
                b_off.push(inputs.len());
                inputs.extend_from_slice(&c.b);
            }
            let mut outputs = Vec::new();
            let mut c_off = Vec::new();
            for c in &cases {
                outputs.extend(std::iter::repeat_n(Complex64::new(7.0, 7.0), gap));
                c_off.push(outputs.len());
                outputs.extend_from_slice(&c.c);
            }
            let inb = upload(b, &s, &inputs)?;
            let outb = upload(b, &s, &outputs)?;
            // Items in reverse order, so that item i is not simply "the i-th of everything".
            let items: Vec<GemmItem<'_, B::Buffer>> = (0..cases.len())
                .rev()
                .map(|i| GemmItem {
                    a: DeviceRef::new(&inb, a_off[i]),
                    b: DeviceRef::new(&inb, b_off[i]),
                    c: DeviceRef::new(&outb, c_off[i]),
                })
                .collect();
            b.gemm_batched(&s, &shape, &items)?;
            let got = download(b, &s, &outb)?;
            let mut expected = outputs.clone();
            for (i, c) in cases.iter().enumerate() {
                reference_gemm(&shape, &c.a, &c.b, &mut expected[c_off[i]..c_off[i] + ec]);
            }
            let err = relative_error(&got, &expected);
            ensure(err <= TOLERANCE, || {
                format!("batched {op_a:?}{op_b:?} {shape:?}: relative error {err:e}")
            })?;
            free_all(b, [inb, outb])?;
        }
    }
    Ok(())
}

/// Strided batches match the reference (including padding between items).
pub fn gemm_strided_matches_reference<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let mut rng = ChaCha8Rng::seed_from_u64(0x5747);
    for (op_a, op_b) in [(Op::N, Op::N), (Op::T, Op::C), (Op::C, Op::N)] {
        let shape = random_case(&mut rng, op_a, op_b).shape;
        let count = 5;
        let (sa, sb, sc) = (
            shape.a_extent() + 3,
            shape.b_extent() + 1,
            shape.c_extent() + 2,
        );
        let a = random_elements(&mut rng, sa * count);
        let bb = random_elements(&mut rng, sb * count);
        let c = random_elements(&mut rng, sc * count);
        let (ab, bbuf, cb) = (upload(b, &s, &a)?, upload(b, &s, &bb)?, upload(b, &s, &c)?);
        let batch = StridedBatch {
            a: DeviceRef::new(&ab, 0),
            stride_a: sa,
            b: DeviceRef::new(&bbuf, 0),
            stride_b: sb,
            c: DeviceRef::new(&cb, 0),
            stride_c: sc,
            count,
        };
        b.gemm_strided_batched(&s, &shape, &batch)?;
        let got = download(b, &s, &cb)?;
        let mut expected = c.clone();
        for i in 0..count {
            reference_gemm(
                &shape,
                &a[i * sa..],
                &bb[i * sb..],
                &mut expected[i * sc..i * sc + shape.c_extent()],
            );
        }
        let err = relative_error(&got, &expected);
        ensure(err <= TOLERANCE, || {
            format!("strided {op_a:?}{op_b:?}: relative error {err:e}")
        })?;
        free_all(b, [ab, bbuf, cb])?;
    }
    Ok(())
}

/// With `beta = 0`, C is overwritten without being read (NaN in C does not leak into the
/// result); with `beta = 1`, the product is accumulated.
pub fn gemm_beta_semantics<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let mut rng = ChaCha8Rng::seed_from_u64(0xbe7a);
    let shape = GemmShape::dense(6, 5, 4);
    let a = random_elements(&mut rng, 24);
    let bb = random_elements(&mut rng, 20);
    let nan = vec![Complex64::new(f64::NAN, f64::NAN); 30];
    let (ab, bbuf, cb) = (
        upload(b, &s, &a)?,
        upload(b, &s, &bb)?,
        upload(b, &s, &nan)?,
    );
    let item = [GemmItem {
        a: DeviceRef::new(&ab, 0),
        b: DeviceRef::new(&bbuf, 0),
        c: DeviceRef::new(&cb, 0),
    }];
    b.gemm_batched(&s, &shape, &item)?;
    let once = download(b, &s, &cb)?;
    let mut expected = vec![Complex64::new(0.0, 0.0); 30];
    reference_gemm(&shape, &a, &bb, &mut expected);
    ensure(
        once.iter().all(|z| z.re.is_finite() && z.im.is_finite()),
        || "beta = 0 read the NaN in C".into(),
    )?;
    ensure(relative_error(&once, &expected) <= TOLERANCE, || {
        "beta = 0 result wrong".into()
    })?;
    b.gemm_batched(&s, &shape.with_beta(Complex64::new(1.0, 0.0)), &item)?;
    let twice = download(b, &s, &cb)?;
    let doubled: Vec<_> = expected.iter().map(|z| z * 2.0).collect();
    ensure(relative_error(&twice, &doubled) <= TOLERANCE, || {
        "beta = 1 did not accumulate".into()
    })?;
    free_all(b, [ab, bbuf, cb])
}

/// Batched matrix additions match the definition, with padded leading dimensions, in place
/// (C = A) and with a zero scale (that operand not read, so NaN there does not leak); partial
/// overlaps are refused.
pub fn geam_matches_reference<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let mut rng = ChaCha8Rng::seed_from_u64(0x6ea3);
    let (m, n) = (5, 3);
    let shape = GeamShape {
        lda: 7,
        ldb: 6,
        ldc: 5,
        alpha: Complex64::new(0.5, -1.0),
        beta: Complex64::new(2.0, 0.25),
        ..GeamShape::dense_sum(m, n)
    };
    let (ea, eb, ec) = (2 * 7 + 5, 2 * 6 + 5, 2 * 5 + 5);
    let av = random_elements(&mut rng, 2 * ea);
    let bv = random_elements(&mut rng, 2 * eb);
    let (ab, bb) = (upload(b, &s, &av)?, upload(b, &s, &bv)?);
    let cb = b.alloc(2 * ec * ELEMENT_BYTES)?;
    let items: Vec<_> = (0..2)
        .map(|i| GemmItem {
            a: DeviceRef::new(&ab, i * ea),
            b: DeviceRef::new(&bb, i * eb),
            c: DeviceRef::new(&cb, i * ec),
        })
        .collect();
    b.geam_batched(&s, &shape, &items)?;
    let got = download(b, &s, &cb)?;
    let mut expected = vec![Complex64::new(0.0, 0.0); 2 * ec];
    for i in 0..2 {
        for col in 0..n {
            for row in 0..m {
                expected[i * ec + row + col * 5] = shape.alpha * av[i * ea + row + col * 7]
                    + shape.beta * bv[i * eb + row + col * 6];
            }
        }
    }
    ensure(relative_error(&got, &expected) <= TOLERANCE, || {
        "geam result wrong".into()
    })?;
    // In place: C = 1 * C + 1 * B, with C = A exactly.
    let dense = GeamShape::dense_sum(m, n);
    let x = upload(b, &s, &av[..15])?;
    let y = upload(b, &s, &bv[..15])?;
    b.geam_batched(
        &s,
        &dense,
        &[GemmItem {
            a: DeviceRef::new(&x, 0),
            b: DeviceRef::new(&y, 0),
            c: DeviceRef::new(&x, 0),
        }],
    )?;
    let sum = download(b, &s, &x)?;
    let want: Vec<_> = av[..15].iter().zip(&bv[..15]).map(|(p, q)| p + q).collect();
    ensure(relative_error(&sum, &want) <= TOLERANCE, || {
        "in-place geam wrong".into()
    })?;
    // beta = 0: B is not read.
    let nan = upload(b, &s, &[Complex64::new(f64::NAN, 0.0); 15])?;
    let copy = GeamShape {
        beta: Complex64::new(0.0, 0.0),
        ..dense
    };
    b.geam_batched(
        &s,
        &copy,
        &[GemmItem {
            a: DeviceRef::new(&y, 0),
            b: DeviceRef::new(&nan, 0),
            c: DeviceRef::new(&x, 0),
        }],
    )?;
    let copied = download(b, &s, &x)?;
    ensure(relative_error(&copied, &bv[..15]) <= TOLERANCE, || {
        "geam with beta = 0 read B".into()
    })?;
    let partial = b.geam_batched(
        &s,
        &dense,
        &[GemmItem {
            a: DeviceRef::new(&x, 1),
            b: DeviceRef::new(&y, 0),
            c: DeviceRef::new(&x, 0),
        }],
    );
    ensure(
        matches!(partial, Err(BackendError::InvalidArgument { .. })),
        || "geam with C partly overlapping A was accepted".into(),
    )?;
    b.synchronize()?;
    free_all(b, [ab, bb, cb, x, y, nan])
}

/// Bad leading dimensions, operands past the end of a buffer and outputs that overlap inputs
/// or each other are refused before anything runs.
pub fn gemm_rejects_invalid_arguments<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let x = b.alloc(64 * ELEMENT_BYTES)?;
    let y = b.alloc(64 * ELEMENT_BYTES)?;
    let shape = GemmShape::dense(4, 4, 4); // 16 elements per operand
    // Operands A and B in x; C in y (`in_x == false`) or in x.
    let item = |a: usize, bo: usize, in_x: bool, c: usize| GemmItem {
        a: DeviceRef::new(&x, a),
        b: DeviceRef::new(&x, bo),
        c: DeviceRef::new(if in_x { &x } else { &y }, c),
    };
    let refused =
        |r: Result<(), BackendError>| matches!(r, Err(BackendError::InvalidArgument { .. }));
    let bad_ld = GemmShape { lda: 3, ..shape };
    ensure(
        refused(b.gemm_batched(&s, &bad_ld, &[item(0, 16, false, 0)])),
        || "lda < m accepted".into(),
    )?;
    ensure(
        refused(b.gemm_batched(&s, &shape, &[item(50, 0, false, 0)])),
        || "A past the end accepted".into(),
    )?;
    ensure(
        refused(b.gemm_batched(&s, &shape, &[item(0, 16, false, 60)])),
        || "C past the end accepted".into(),
    )?;
    ensure(
        refused(b.gemm_batched(&s, &shape, &[item(0, 16, true, 8)])),
        || "C overlapping A accepted".into(),
    )?;
    ensure(
        refused(b.gemm_batched(&s, &shape, &[item(0, 16, false, 0), item(32, 16, false, 8)])),
        || "overlapping outputs accepted".into(),
    )?;
    let strided = StridedBatch {
        a: DeviceRef::new(&x, 0),
        stride_a: 16,
        b: DeviceRef::new(&x, 0),
        stride_b: 16,
        c: DeviceRef::new(&y, 0),
        stride_c: 16,
        count: 5, // needs 80 elements
    };
    ensure(
        refused(b.gemm_strided_batched(&s, &shape, &strided)),
        || "strided batch past the end accepted".into(),
    )?;
    b.synchronize()?;
    free_all(b, [x, y])
}

/// An empty batch, or a shape with no rows, is accepted and does nothing.
pub fn gemm_empty_is_a_no_op<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let c = upload(b, &s, &[Complex64::new(3.0, 0.0); 4])?;
    b.gemm_batched(&s, &GemmShape::dense(2, 2, 2), &[])?;
    let empty = GemmShape {
        m: 0,
        ..GemmShape::dense(2, 2, 2)
    };
    b.gemm_batched(
        &s,
        &empty,
        &[GemmItem {
            a: DeviceRef::new(&c, 0),
            b: DeviceRef::new(&c, 0),
            c: DeviceRef::new(&c, 0),
        }],
    )?;
    let got = download(b, &s, &c)?;
    ensure(got.iter().all(|z| *z == Complex64::new(3.0, 0.0)), || {
        "an empty GEMM wrote C".into()
    })?;
    free_all(b, [c])
}
