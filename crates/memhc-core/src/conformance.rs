//! The backend conformance suite: what every [`Backend`] must do, checked against an
//! independent reference.
//!
//! Each check is a function taking any backend and returning a [`Failure`] that says what went
//! wrong. A backend crate runs them all by invoking [`backend_conformance_tests!`](crate::backend_conformance_tests) in a test
//! file with an expression that builds the backend:
//!
//! ```no_run
//! use memhc_core::backend::host::HostBackend;
//! memhc_core::backend_conformance_tests!(|| {
//!     Ok::<_, std::convert::Infallible>(HostBackend::new(64 << 20))
//! });
//! ```
//!
//! The expression must be a closure returning `Result<B, E>` with `E: Display`; when it
//! returns an error (no GPU, no driver), each test prints that it was skipped and why, and
//! passes. The host backend runs the suite in `tests/conformance_host.rs`.
//!
//! The GEMM reference here is a plain triple loop over the definition, on purpose: it is the
//! independent implementation results are compared against (relative Frobenius error at most
//! [`TOLERANCE`]), never a code path a backend uses.

use std::fmt;

use num_complex::Complex64;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::backend::gemm::{DeviceRef, GeamShape, GemmItem, GemmShape, Op, StridedBatch};
use crate::backend::{Backend, DeviceMemory, HostMemory, as_bytes, as_bytes_mut};
use crate::error::BackendError;
use crate::object::ELEMENT_BYTES;

/// Largest relative Frobenius error accepted between a backend's GEMM and the reference.
pub const TOLERANCE: f64 = 1e-12;

/// Why a check failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure(pub String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "backend conformance: {}", self.0)
    }
}

impl std::error::Error for Failure {}

impl From<BackendError> for Failure {
    fn from(e: BackendError) -> Self {
        Failure(format!("unexpected backend error: {e}"))
    }
}

/// Result of one check.
pub type Check = Result<(), Failure>;

fn ensure(cond: bool, msg: impl FnOnce() -> String) -> Check {
    if cond { Ok(()) } else { Err(Failure(msg())) }
}

/// Builds a backend for one test, or reports on stderr that the test is skipped and why.
pub fn obtain<B, E: fmt::Display>(test: &str, make: impl FnOnce() -> Result<B, E>) -> Option<B> {
    match make() {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("SKIPPED {test}: {e}");
            None
        }
    }
}

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

fn upload<B: Backend>(b: &B, s: &B::Stream, data: &[Complex64]) -> Result<B::Buffer, Failure> {
    let buf = b.alloc(data.len() * ELEMENT_BYTES)?;
    b.copy_h2d(s, as_bytes(data), &buf, 0)?;
    Ok(buf)
}

fn download<B: Backend>(b: &B, s: &B::Stream, buf: &B::Buffer) -> Result<Vec<Complex64>, Failure> {
    let mut out = vec![Complex64::new(0.0, 0.0); buf.bytes() / ELEMENT_BYTES];
    b.copy_d2h(s, buf, 0, as_bytes_mut(&mut out))?;
    Ok(out)
}

fn free_all<B: Backend>(b: &B, buffers: impl IntoIterator<Item = B::Buffer>) -> Check {
    for buf in buffers {
        b.free(buf)?;
    }
    Ok(())
}

/// `mem_info` reports a positive total and no more free memory than that.
pub fn mem_info_is_sane<B: Backend>(b: &B) -> Check {
    let m = b.mem_info()?;
    ensure(m.total > 0 && m.free <= m.total, || {
        format!("mem_info {m:?}")
    })
}

/// Allocations have the requested size and distinct handles; zero bytes is an invalid
/// argument; more than the device holds is out of memory; free succeeds.
pub fn alloc_and_free<B: Backend>(b: &B) -> Check {
    let x = b.alloc(1000)?;
    let y = b.alloc(24)?;
    ensure(x.bytes() == 1000 && y.bytes() == 24, || {
        format!("sizes {} and {}, asked 1000 and 24", x.bytes(), y.bytes())
    })?;
    ensure(x.handle() != y.handle(), || {
        "two live buffers share a handle".into()
    })?;
    ensure(
        matches!(b.alloc(0), Err(BackendError::InvalidArgument { .. })),
        || "a zero-byte allocation must be an invalid argument".into(),
    )?;
    let total = b.mem_info()?.total;
    match b.alloc(total.saturating_add(1)) {
        Err(BackendError::OutOfMemory { requested, .. })
            if requested == total.saturating_add(1) => {}
        Err(e) => {
            return Err(Failure(format!(
                "allocating more than the device: {e}, expected out of memory"
            )));
        }
        Ok(_) => return Err(Failure("allocating more than the device succeeded".into())),
    }
    free_all(b, [x, y])
}

/// Bytes copied in at an offset come back unchanged, for odd sizes too.
pub fn copy_round_trip<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let buf = b.alloc(4099)?;
    let pattern: Vec<u8> = (0..4099u32).map(|i| (i * 7 + 3) as u8).collect();
    b.copy_h2d(&s, &pattern, &buf, 0)?;
    let tail: Vec<u8> = (0..1001u32).map(|i| (i * 13) as u8).collect();
    b.copy_h2d(&s, &tail, &buf, 3000)?;
    let mut back = vec![0u8; 4099];
    b.copy_d2h(&s, &buf, 0, &mut back)?;
    let mut expected = pattern.clone();
    expected[3000..4001].copy_from_slice(&tail);
    ensure(back == expected, || "bytes changed on a round trip".into())?;
    let mut middle = vec![0u8; 17];
    b.copy_d2h(&s, &buf, 2990, &mut middle)?;
    ensure(middle[..] == expected[2990..3007], || {
        "an offset read differs".into()
    })?;
    // The source slice may be reused as soon as copy_h2d returns.
    let mut reused = vec![1u8; 64];
    b.copy_h2d(&s, &reused, &buf, 0)?;
    reused.fill(2);
    let mut first = vec![0u8; 64];
    b.copy_d2h(&s, &buf, 0, &mut first)?;
    ensure(first.iter().all(|&x| x == 1), || {
        "copy_h2d read its source after returning".into()
    })?;
    free_all(b, [buf])
}

/// An asynchronous copy back into backend host memory lands after the work before it on the
/// stream, and may be read once an event after it has completed; out-of-range requests are
/// refused.
pub fn copy_d2h_async_round_trip<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let mut rng = ChaCha8Rng::seed_from_u64(0xd2a5);
    let n = 40;
    let shape = GemmShape::dense(n, n, n);
    let a = random_elements(&mut rng, n * n);
    let ab = upload(b, &s, &a)?;
    let cb = b.alloc(n * n * ELEMENT_BYTES)?;
    let item = [GemmItem {
        a: DeviceRef::new(&ab, 0),
        b: DeviceRef::new(&ab, 0),
        c: DeviceRef::new(&cb, 0),
    }];
    b.gemm_batched(&s, &shape, &item)?;
    let bytes = n * n * ELEMENT_BYTES;
    let host = b.alloc_host(bytes + 32)?;
    ensure(host.bytes() == bytes + 32, || "host buffer size".into())?;
    b.copy_d2h_async(&s, &cb, 0, &host, 32, bytes)?;
    let done = b.create_event()?;
    b.record_event(&done, &s)?;
    b.event_synchronize(&done)?;
    let mut got = vec![Complex64::new(0.0, 0.0); n * n];
    host.read(32, as_bytes_mut(&mut got))?;
    let mut expected = vec![Complex64::new(0.0, 0.0); n * n];
    reference_gemm(&shape, &a, &a, &mut expected);
    let err = relative_error(&got, &expected);
    ensure(err <= TOLERANCE, || {
        format!("async copy back: relative error {err:e}")
    })?;
    let refused =
        |r: Result<(), BackendError>| matches!(r, Err(BackendError::InvalidArgument { .. }));
    ensure(
        refused(b.copy_d2h_async(&s, &cb, 0, &host, 64, bytes)),
        || "an async copy past the end of the host buffer was accepted".into(),
    )?;
    ensure(
        refused(b.copy_d2h_async(&s, &cb, 16, &host, 0, bytes)),
        || "an async copy past the end of the device buffer was accepted".into(),
    )?;
    ensure(refused(host.read(bytes, &mut [0u8; 64])), || {
        "a read past the end was accepted".into()
    })?;
    ensure(
        matches!(b.alloc_host(0), Err(BackendError::InvalidArgument { .. })),
        || "a zero-byte host allocation must be an invalid argument".into(),
    )?;
    b.synchronize()?;
    free_all(b, [ab, cb])
}

/// Copies that fall outside their buffer are invalid arguments, and change nothing.
pub fn copy_bounds_are_checked<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let buf = b.alloc(64)?;
    b.copy_h2d(&s, &[5u8; 64], &buf, 0)?;
    let refused =
        |r: Result<(), BackendError>| matches!(r, Err(BackendError::InvalidArgument { .. }));
    ensure(refused(b.copy_h2d(&s, &[0u8; 16], &buf, 56)), || {
        "h2d past the end accepted".into()
    })?;
    ensure(refused(b.copy_h2d(&s, &[0u8; 1], &buf, usize::MAX)), || {
        "h2d offset overflow accepted".into()
    })?;
    let mut out = [0u8; 16];
    ensure(refused(b.copy_d2h(&s, &buf, 50, &mut out)), || {
        "d2h past the end accepted".into()
    })?;
    let mut all = [0u8; 64];
    b.copy_d2h(&s, &buf, 0, &mut all)?;
    ensure(all.iter().all(|&x| x == 5), || {
        "a refused copy changed the buffer".into()
    })?;
    free_all(b, [buf])
}

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

/// Copy in, multiply, copy out on one stream, with no synchronisation in between: the stream's
/// order alone makes the result right.
pub fn stream_order_is_kept<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let mut rng = ChaCha8Rng::seed_from_u64(0x0bde);
    let n = 48;
    let shape = GemmShape::dense(n, n, n);
    let a = random_elements(&mut rng, n * n);
    let bb = random_elements(&mut rng, n * n);
    let ab = b.alloc(n * n * ELEMENT_BYTES)?;
    let bbuf = b.alloc(n * n * ELEMENT_BYTES)?;
    let cb = b.alloc(n * n * ELEMENT_BYTES)?;
    b.copy_h2d(&s, as_bytes(&a), &ab, 0)?;
    b.copy_h2d(&s, as_bytes(&bb), &bbuf, 0)?;
    let one = [GemmItem {
        a: DeviceRef::new(&ab, 0),
        b: DeviceRef::new(&bbuf, 0),
        c: DeviceRef::new(&cb, 0),
    }];
    b.gemm_batched(&s, &shape, &one)?;
    // Overwrite A right after: the GEMM must already have consumed the old A in stream order.
    b.copy_h2d(&s, as_bytes(&bb), &ab, 0)?;
    let got = download(b, &s, &cb)?;
    let mut expected = vec![Complex64::new(0.0, 0.0); n * n];
    reference_gemm(&shape, &a, &bb, &mut expected);
    let err = relative_error(&got, &expected);
    ensure(err <= TOLERANCE, || {
        format!("in-stream order broken: relative error {err:e}")
    })?;
    b.synchronize()?;
    free_all(b, [ab, bbuf, cb])
}

/// An event recorded on one stream orders another stream's work after it: a long chain of
/// GEMMs on stream 1 produces C, stream 2 waits on the event and reads C.
pub fn events_order_streams<B: Backend>(b: &B) -> Check {
    let s1 = b.create_stream()?;
    let s2 = b.create_stream()?;
    let mut rng = ChaCha8Rng::seed_from_u64(0xe7e7);
    let n = 96;
    let shape = GemmShape::dense(n, n, n);
    let a = random_elements(&mut rng, n * n);
    let x = random_elements(&mut rng, n * n);
    let mut ident = vec![Complex64::new(0.0, 0.0); n * n];
    for i in 0..n {
        ident[i + i * n] = Complex64::new(1.0, 0.0);
    }
    let ab = upload(b, &s1, &a)?;
    let p = upload(b, &s1, &x)?;
    let q = b.alloc(n * n * ELEMENT_BYTES)?;
    let ib = upload(b, &s2, &ident)?;
    let out = b.alloc(n * n * ELEMENT_BYTES)?;
    b.synchronize()?;
    // Stream 1: x <- a x, eight times, ping-ponging between p and q; the result ends in p.
    let steps = 8;
    for step in 0..steps {
        let (src, dst) = if step % 2 == 0 { (&p, &q) } else { (&q, &p) };
        b.gemm_batched(
            &s1,
            &shape,
            &[GemmItem {
                a: DeviceRef::new(&ab, 0),
                b: DeviceRef::new(src, 0),
                c: DeviceRef::new(dst, 0),
            }],
        )?;
    }
    let done = b.create_event()?;
    b.record_event(&done, &s1)?;
    b.wait_event(&s2, &done)?;
    b.gemm_batched(
        &s2,
        &shape,
        &[GemmItem {
            a: DeviceRef::new(&p, 0),
            b: DeviceRef::new(&ib, 0),
            c: DeviceRef::new(&out, 0),
        }],
    )?;
    let got = download(b, &s2, &out)?;
    let mut expected = x.clone();
    let mut tmp = vec![Complex64::new(0.0, 0.0); n * n];
    for _ in 0..steps {
        reference_gemm(&shape, &a, &expected, &mut tmp);
        std::mem::swap(&mut expected, &mut tmp);
    }
    let err = relative_error(&got, &expected);
    ensure(err <= 1e-10, || {
        format!("cross-stream wait broken: relative error {err:e}")
    })?;
    b.synchronize()?;
    free_all(b, [ab, p, q, ib, out])
}

/// An event never recorded is complete; a recorded one is complete after
/// `event_synchronize`; `stream_synchronize` and `synchronize` wait for queued work.
pub fn events_and_synchronisation<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let e = b.create_event()?;
    ensure(b.event_query(&e)?, || {
        "an unrecorded event is not complete".into()
    })?;
    let n = 64;
    let mut rng = ChaCha8Rng::seed_from_u64(0x5e5e);
    let a = random_elements(&mut rng, n * n);
    let ab = upload(b, &s, &a)?;
    let cb = b.alloc(n * n * ELEMENT_BYTES)?;
    let item = [GemmItem {
        a: DeviceRef::new(&ab, 0),
        b: DeviceRef::new(&ab, 0),
        c: DeviceRef::new(&cb, 0),
    }];
    b.gemm_batched(&s, &GemmShape::dense(n, n, n), &item)?;
    b.record_event(&e, &s)?;
    b.event_synchronize(&e)?;
    ensure(b.event_query(&e)?, || {
        "an event is not complete after event_synchronize".into()
    })?;
    b.gemm_batched(&s, &GemmShape::dense(n, n, n), &item)?;
    b.stream_synchronize(&s)?;
    b.gemm_batched(&s, &GemmShape::dense(n, n, n), &item)?;
    b.synchronize()?;
    // After synchronize, freeing is safe: nothing uses the buffers any more.
    free_all(b, [ab, cb])
}

/// Managed memory, where the backend has it (a backend without it passes, having said so with
/// [`Backend::supports_managed`], and its managed calls must then return
/// [`BackendError::Unsupported`]): written and read in place by the host, advised read-mostly,
/// prefetched, used as GEMM operands; in-place access to memory that is not managed and out of
/// bounds is refused; prefetching back to the host and reading there gives the same values.
pub fn managed_memory_round_trip<B: Backend>(b: &B) -> Check {
    if !b.supports_managed() {
        return ensure(
            matches!(b.alloc_managed(64), Err(BackendError::Unsupported(_))),
            || "a backend without managed memory must refuse alloc_managed as Unsupported".into(),
        );
    }
    let s = b.create_stream()?;
    let mut rng = ChaCha8Rng::seed_from_u64(0x3a4a);
    let shape = GemmShape::dense(7, 6, 5);
    let a = random_elements(&mut rng, 35);
    let bb = random_elements(&mut rng, 30);
    let managed = |data: &[Complex64]| -> Result<B::Buffer, Failure> {
        let buf = b.alloc_managed(data.len() * ELEMENT_BYTES)?;
        b.managed_write(&buf, 0, as_bytes(data))?;
        b.advise_read_mostly(&buf)?;
        Ok(buf)
    };
    let (ab, bbuf) = (managed(&a)?, managed(&bb)?);
    let cb = b.alloc_managed(42 * ELEMENT_BYTES)?;
    for buf in [&ab, &bbuf, &cb] {
        b.prefetch(&s, buf, crate::backend::Location::Device)?;
    }
    let item = [GemmItem {
        a: DeviceRef::new(&ab, 0),
        b: DeviceRef::new(&bbuf, 0),
        c: DeviceRef::new(&cb, 0),
    }];
    let shape = GemmShape {
        beta: Complex64::new(0.0, 0.0),
        ..shape
    };
    b.gemm_batched(&s, &shape, &item)?;
    b.prefetch(&s, &cb, crate::backend::Location::Host)?;
    b.stream_synchronize(&s)?;
    let mut got = vec![Complex64::new(0.0, 0.0); 42];
    b.managed_read(&cb, 0, as_bytes_mut(&mut got))?;
    let mut expected = vec![Complex64::new(0.0, 0.0); 42];
    reference_gemm(&shape, &a, &bb, &mut expected);
    let err = relative_error(&got, &expected);
    ensure(err <= TOLERANCE, || {
        format!("GEMM on managed memory: relative error {err:e}")
    })?;
    let mut tail = [0u8; 32];
    ensure(
        b.managed_read(&cb, 42 * ELEMENT_BYTES - 16, &mut tail)
            .is_err(),
        || "a managed read past the end was accepted".into(),
    )?;
    let plain = b.alloc(64)?;
    ensure(b.managed_write(&plain, 0, &[0u8; 16]).is_err(), || {
        "an in-place host write into device (not managed) memory was accepted".into()
    })?;
    free_all(b, [ab, bbuf, cb, plain])
}

/// Runs every check in order, stopping at the first failure.
pub fn run_all<B: Backend>(b: &B) -> Check {
    mem_info_is_sane(b)?;
    alloc_and_free(b)?;
    copy_round_trip(b)?;
    copy_bounds_are_checked(b)?;
    copy_d2h_async_round_trip(b)?;
    gemm_batched_matches_reference(b)?;
    gemm_strided_matches_reference(b)?;
    gemm_beta_semantics(b)?;
    geam_matches_reference(b)?;
    gemm_rejects_invalid_arguments(b)?;
    gemm_empty_is_a_no_op(b)?;
    stream_order_is_kept(b)?;
    events_order_streams(b)?;
    events_and_synchronisation(b)?;
    managed_memory_round_trip(b)
}

/// Generates one `#[test]` per conformance check, each building its backend with `$make` (a
/// closure returning `Result<B, E: Display>`); see the [module documentation](crate::conformance).
#[macro_export]
macro_rules! backend_conformance_tests {
    ($make:expr) => {
        $crate::backend_conformance_tests!(@each $make;
            mem_info_is_sane,
            alloc_and_free,
            copy_round_trip,
            copy_bounds_are_checked,
            copy_d2h_async_round_trip,
            gemm_batched_matches_reference,
            gemm_strided_matches_reference,
            gemm_beta_semantics,
            geam_matches_reference,
            gemm_rejects_invalid_arguments,
            gemm_empty_is_a_no_op,
            stream_order_is_kept,
            events_order_streams,
            events_and_synchronisation,
            managed_memory_round_trip,
        );
    };
    (@each $make:expr; $($check:ident),* $(,)?) => {
        $(
            #[test]
            fn $check() {
                if let Some(backend) = $crate::conformance::obtain(stringify!($check), $make) {
                    if let Err(failure) = $crate::conformance::$check(&backend) {
                        panic!("{failure}");
                    }
                }
            }
        )*
    };
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
