//! Streams and events: order within a stream, order across streams through events, and
//! synchronisation.

use num_complex::Complex64;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use memhc_backend::gemm::{DeviceRef, GemmItem, GemmShape};
use memhc_backend::{Backend, ELEMENT_BYTES, as_bytes};

use super::*;

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
