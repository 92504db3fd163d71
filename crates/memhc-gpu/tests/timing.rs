//! The GPU backend's timeline, on the fake device, whose virtual clock advances only as work
//! runs (1 us per copy piece, 5 us per GEMM or GEAM batch): off by default, and then no timing
//! event is made; on, every copy and GEMM batch is one span with its kind and its stream, in
//! stream order, measured from the base event; spans still in flight stay pending; timing
//! events are recycled and none outlives the backend.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::fake::{FakeConfig, Progress};
use common::{FakeBackend, assert_clean, backend, tiny_staging, with_progress};
use memhc_core::backend::Backend;
use memhc_core::backend::gemm::{
    DeviceRef, GeamShape, GemmItem, GemmShape, StridedBatch, validate_geam,
};
use memhc_core::backend::timeline::{WorkKind, WorkSpan, hidden_copy_share};
use memhc_gpu::{GpuOptions, GpuStream};

use common::fake::Fake;

const N: usize = 8;
const MATRIX: usize = N * N * 16;

/// As the host backend's timing test: a copy in on `copy`, a GEMM on `compute` after it (an
/// event between them), a copy back on `copy` after the GEMM.
fn work(b: &FakeBackend, compute: &GpuStream<Fake>, copy: &GpuStream<Fake>) {
    let x = b.alloc(3 * MATRIX).unwrap();
    b.copy_h2d(copy, &vec![1u8; 2 * MATRIX], &x, 0).unwrap();
    let copied = b.create_event().unwrap();
    b.record_event(&copied, copy).unwrap();
    b.wait_event(compute, &copied).unwrap();
    let item = GemmItem {
        a: DeviceRef::new(&x, 0),
        b: DeviceRef::new(&x, N * N),
        c: DeviceRef::new(&x, 2 * N * N),
    };
    b.gemm_batched(compute, &GemmShape::dense(N, N, N), &[item])
        .unwrap();
    let computed = b.create_event().unwrap();
    b.record_event(&computed, compute).unwrap();
    b.wait_event(copy, &computed).unwrap();
    let mut out = vec![0u8; MATRIX];
    b.copy_d2h(copy, &x, 2 * MATRIX, &mut out).unwrap();
    b.synchronize().unwrap();
    b.free(x).unwrap();
}

fn span(stream: u64, kind: WorkKind, start_ns: u64, end_ns: u64) -> WorkSpan {
    WorkSpan {
        stream,
        kind,
        start_ns,
        end_ns,
    }
}

/// Every span ends after it starts, and on each stream the spans follow each other.
fn assert_ordered(spans: &[WorkSpan]) {
    assert!(spans.iter().all(|s| s.start_ns <= s.end_ns), "{spans:?}");
    let mut streams: Vec<u64> = spans.iter().map(|s| s.stream).collect();
    streams.sort_unstable();
    streams.dedup();
    for stream in streams {
        let on: Vec<&WorkSpan> = spans.iter().filter(|s| s.stream == stream).collect();
        for w in on.windows(2) {
            assert!(w[0].end_ns <= w[1].start_ns, "stream {stream}: {spans:?}");
        }
    }
}

#[test]
fn timing_is_off_until_switched_on_and_then_costs_nothing() {
    let b = with_progress(Progress::Lazy);
    let (s0, s1) = (b.create_stream().unwrap(), b.create_stream().unwrap());
    let events = b.api().stats().events_created;
    work(&b, &s0, &s1);
    assert!(b.take_timeline().is_empty());
    assert_eq!(b.timing_clock_ns(), None, "no clock before timing is on");
    let stats = b.api().stats();
    assert_eq!(stats.timing_events_created, 0, "no timing event while off");
    // The work's own events: two recorded by `work`, and a fence after each of the three
    // staged copies (in, the GEMM's pointer table, back).
    assert_eq!(stats.events_created - events, 2 + 3);
    drop((s0, s1));
    assert_clean(&b);
}

#[test]
fn copies_and_gemms_are_spans_with_their_kinds_streams_and_times() {
    let b = with_progress(Progress::Lazy);
    assert!(b.set_timing(true), "the GPU backend times its work");
    let (s0, s1) = (b.create_stream().unwrap(), b.create_stream().unwrap());
    let (n0, n1) = (b.stream_number(&s0).unwrap(), b.stream_number(&s1).unwrap());
    assert_ne!(n0, n1, "each stream has its own number");
    work(&b, &s0, &s1);
    let spans = b.take_timeline();
    // On the virtual clock: the copy in (one piece, 1 us) runs first, then the compute
    // stream's pointer-table upload (1 us, not part of the GEMM's span) and GEMM (5 us), then
    // the copy back (1 us).
    assert_eq!(
        spans,
        [
            span(n1, WorkKind::CopyH2D, 0, 1_000),
            span(n0, WorkKind::Compute, 2_000, 7_000),
            span(n1, WorkKind::CopyD2H, 7_000, 8_000),
        ],
    );
    assert_ordered(&spans);
    // The copy stream waited for the GEMM and the GEMM for the copy: nothing is hidden.
    assert_eq!(hidden_copy_share(&spans), Some(0.0));
    // Taken: the timeline starts afresh.
    assert!(b.take_timeline().is_empty());
    let now = b.timing_clock_ns().unwrap();
    assert!(now >= 8_000, "the clock is past every span: {now}");
    // Switched off: nothing more is recorded, and no timing event is made.
    b.set_timing(false);
    let made = b.api().stats().timing_events_created;
    work(&b, &s0, &s1);
    assert!(b.take_timeline().is_empty());
    assert_eq!(b.api().stats().timing_events_created, made);
    drop((s0, s1));
    assert_clean(&b);
}

#[test]
fn every_copy_form_and_batch_form_is_one_span() {
    let b = backend(
        FakeConfig::default(),
        GpuOptions::default().staging(tiny_staging()),
    );
    assert!(b.set_timing(true));
    let s = b.create_stream().unwrap();
    let n = b.stream_number(&s).unwrap();
    let x = b.alloc(4 * MATRIX).unwrap();
    // 2048 bytes in pieces of 1000: three copies, one span.
    b.copy_h2d(&s, &vec![3u8; 2 * MATRIX], &x, 0).unwrap();
    let shape = GemmShape::dense(N, N, N);
    let batch = StridedBatch {
        a: DeviceRef::new(&x, 0),
        b: DeviceRef::new(&x, N * N),
        c: DeviceRef::new(&x, 2 * N * N),
        stride_a: 0,
        stride_b: 0,
        stride_c: 0,
        count: 1,
    };
    b.gemm_strided_batched(&s, &shape, &batch).unwrap();
    let geam = GeamShape::dense_sum(N, N);
    let item = GemmItem {
        a: DeviceRef::new(&x, 0),
        b: DeviceRef::new(&x, N * N),
        c: DeviceRef::new(&x, 3 * N * N),
    };
    validate_geam(&geam, &[item]).unwrap();
    b.geam_batched(&s, &geam, &[item]).unwrap();
    let host = b.alloc_host(MATRIX).unwrap();
    b.copy_d2h_async(&s, &x, 3 * MATRIX, &host, 0, MATRIX)
        .unwrap();
    // 1024 bytes in pieces of 1000: two copies, one span.
    let mut out = vec![0u8; MATRIX];
    b.copy_d2h(&s, &x, 2 * MATRIX, &mut out).unwrap();
    b.synchronize().unwrap();
    let spans = b.take_timeline();
    assert_eq!(
        spans,
        [
            span(n, WorkKind::CopyH2D, 0, 3_000),
            span(n, WorkKind::Compute, 3_000, 8_000),
            span(n, WorkKind::Compute, 8_000, 13_000),
            span(n, WorkKind::CopyD2H, 13_000, 14_000),
            span(n, WorkKind::CopyD2H, 14_000, 16_000),
        ]
    );
    assert_ordered(&spans);
    // One stream: its copies are never hidden, but the share is defined.
    assert_eq!(hidden_copy_share(&spans), Some(0.0));
    drop(host);
    drop(s);
    assert_clean(&b);
}

#[test]
fn spans_still_in_flight_stay_pending() {
    let b = with_progress(Progress::Lazy);
    assert!(b.set_timing(true));
    let s = b.create_stream().unwrap();
    let x = b.alloc(MATRIX).unwrap();
    b.copy_h2d(&s, &vec![5u8; MATRIX], &x, 0).unwrap();
    // Nothing has run on the lazy device: the span is not complete.
    assert!(b.take_timeline().is_empty());
    b.stream_synchronize(&s).unwrap();
    let spans = b.take_timeline();
    assert_eq!(spans.len(), 1, "{spans:?}");
    assert_eq!(spans[0].kind, WorkKind::CopyH2D);
    assert_eq!(spans[0].end_ns - spans[0].start_ns, 1_000);
    drop(s);
    assert_clean(&b);
}

#[test]
fn copies_on_one_stream_overlap_compute_on_another_by_the_clock() {
    let b = with_progress(Progress::Eager);
    assert!(b.set_timing(true));
    let (s0, s1) = (b.create_stream().unwrap(), b.create_stream().unwrap());
    work(&b, &s0, &s1);
    let spans = b.take_timeline();
    assert_eq!(spans.len(), 3, "{spans:?}");
    assert_ordered(&spans);
    let share = hidden_copy_share(&spans).expect("copy time was recorded");
    assert!((0.0..=1.0).contains(&share), "{share}");
    drop((s0, s1));
    assert_clean(&b);
}

#[test]
fn timing_events_are_recycled_and_none_outlives_the_backend() {
    let b = with_progress(Progress::Lazy);
    assert!(b.set_timing(true));
    let s = b.create_stream().unwrap();
    let x = b.alloc(MATRIX).unwrap();
    for _ in 0..50 {
        b.copy_h2d(&s, &vec![7u8; MATRIX], &x, 0).unwrap();
        b.stream_synchronize(&s).unwrap();
        assert_eq!(b.take_timeline().len(), 1);
    }
    // The base event, and one start and one end event used over and over.
    assert_eq!(b.api().stats().timing_events_created, 3);
    let api = b.api().clone();
    b.free(x).unwrap();
    drop(s);
    assert_clean(&b);
    drop(b);
    assert_eq!(api.stats().events_live, 0, "every event was destroyed");
}

/// The conformance suite's results do not change with timing on.
mod timed {
    use std::convert::Infallible;

    use super::common::fake::Progress;
    use super::common::{FakeBackend, with_progress};
    use memhc_core::backend::Backend;

    fn made(progress: Progress) -> Result<FakeBackend, Infallible> {
        let b = with_progress(progress);
        assert!(b.set_timing(true));
        Ok(b)
    }

    mod lazy {
        memhc_testkit::backend_conformance_tests!(|| super::made(super::Progress::Lazy));
    }

    mod eager {
        memhc_testkit::backend_conformance_tests!(|| super::made(super::Progress::Eager));
    }
}
