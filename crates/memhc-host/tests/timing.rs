//! The host backend's timeline: off by default; on, every copy and GEMM batch a stream runs is
//! recorded once, with its kind and its stream, in stream order; the adaptors pass the switch
//! and the timeline through.

#![allow(clippy::unwrap_used)]

use memhc_backend::gemm::{DeviceRef, GemmItem, GemmShape};
use memhc_backend::instrumented::Instrumented;
use memhc_backend::timeline::{WorkKind, hidden_copy_share};
use memhc_backend::{Backend, ELEMENT_BYTES};
use memhc_host::HostBackend;

/// On `b`: a copy in on stream `copy`, a GEMM on stream `compute` after it, a copy back on
/// `copy` after the GEMM.
fn work<B: Backend>(b: &B, compute: &B::Stream, copy: &B::Stream) {
    let n = 8;
    let bytes = n * n * ELEMENT_BYTES;
    let x = b.alloc(3 * bytes).unwrap();
    b.copy_h2d(copy, &vec![0u8; bytes], &x, 0).unwrap();
    let copied = b.create_event().unwrap();
    b.record_event(&copied, copy).unwrap();
    b.wait_event(compute, &copied).unwrap();
    let item = GemmItem {
        a: DeviceRef::new(&x, 0),
        b: DeviceRef::new(&x, n * n),
        c: DeviceRef::new(&x, 2 * n * n),
    };
    b.gemm_batched(compute, &GemmShape::dense(n, n, n), &[item])
        .unwrap();
    let computed = b.create_event().unwrap();
    b.record_event(&computed, compute).unwrap();
    b.wait_event(copy, &computed).unwrap();
    let mut out = vec![0u8; bytes];
    b.copy_d2h(copy, &x, 2 * bytes, &mut out).unwrap();
    b.synchronize().unwrap();
    b.free(x).unwrap();
}

#[test]
fn timing_is_off_until_switched_on() {
    let b = HostBackend::new(1 << 20);
    let (s0, s1) = (b.create_stream().unwrap(), b.create_stream().unwrap());
    work(&b, &s0, &s1);
    assert!(b.take_timeline().is_empty());
}

#[test]
fn every_piece_of_work_is_recorded_in_stream_order() {
    let b = Instrumented::new(HostBackend::new(1 << 20));
    assert!(b.set_timing(true), "the host backend times its work");
    let (s0, s1) = (b.create_stream().unwrap(), b.create_stream().unwrap());
    work(&b, &s0, &s1);
    let mut spans = b.take_timeline();
    spans.sort_by_key(|s| s.start_ns);
    let kinds: Vec<WorkKind> = spans.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [WorkKind::CopyH2D, WorkKind::Compute, WorkKind::CopyD2H],
        "{spans:?}"
    );
    assert_eq!(spans[0].stream, spans[2].stream);
    assert_ne!(spans[0].stream, spans[1].stream);
    for w in spans.windows(2) {
        assert!(w[0].end_ns <= w[1].start_ns, "ordered by events: {spans:?}");
    }
    assert!(spans.iter().all(|s| s.start_ns <= s.end_ns));
    // Each copy waited for the other stream: nothing of it is hidden.
    assert_eq!(hidden_copy_share(&spans), Some(0.0));
    // Taken: the timeline starts afresh; switched off, nothing more is recorded.
    assert!(b.take_timeline().is_empty());
    b.set_timing(false);
    work(&b, &s0, &s1);
    assert!(b.take_timeline().is_empty());
}
