//! The skeleton's own duties, on the fake device: staging in chunks through reused buffers
//! with bounded page-locked memory, pointer tables uploaded in stream order, the budget,
//! events never recorded, host buffers whose reads wait, streams dropped with work queued, and
//! managed memory refused with its reason.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::fake::{FakeConfig, Progress};
use common::{assert_clean, backend, with_progress};
use memhc_core::backend::gemm::{DeviceRef, GemmItem, GemmShape};
use memhc_core::backend::{Backend, HostMemory, as_bytes, as_bytes_mut};
use memhc_core::{BackendError, Complex64, DeviceMemory};
use memhc_gpu::{GpuOptions, StagingLimits, default_budget};
use memhc_testkit::conformance::reference_gemm;

fn pattern(n: usize, seed: u32) -> Vec<u8> {
    (0..n as u32).map(|i| (i * 7 + seed) as u8).collect()
}

fn limits(chunk: usize, idle_cap: usize, busy_cap: usize) -> StagingLimits {
    StagingLimits {
        chunk,
        idle_cap,
        busy_cap,
    }
}

#[test]
fn copies_are_staged_in_chunks_through_reused_buffers() {
    let b = backend(
        FakeConfig::default(),
        GpuOptions::default().staging(limits(1000, 8 << 20, 1 << 30)),
    );
    let s = b.create_stream().unwrap();
    let buf = b.alloc(4099).unwrap();
    let data = pattern(4099, 3);
    b.copy_h2d(&s, &data, &buf, 0).unwrap();
    let stats = b.api().stats();
    assert_eq!(stats.h2d, vec![1000, 1000, 1000, 1000, 99]);
    // Nothing has run yet (the fake device is lazy): five pieces, five buffers in flight.
    assert_eq!(stats.host_allocs, 5);
    let mut back = vec![0u8; 4099];
    b.copy_d2h(&s, &buf, 0, &mut back).unwrap();
    assert_eq!(back, data);
    assert_eq!(b.api().stats().d2h, vec![1000, 1000, 1000, 1000, 99]);
    // The download is double-buffered: two more buffers, both made before the device ran
    // anything; from the third piece on, completed buffers were reused.
    assert_eq!(b.api().stats().host_allocs, 7);
    // Everything completed: the second upload and download reuse the same buffers.
    let again = pattern(4099, 11);
    b.copy_h2d(&s, &again, &buf, 0).unwrap();
    b.copy_d2h(&s, &buf, 0, &mut back).unwrap();
    assert_eq!(back, again);
    assert_eq!(b.api().stats().host_allocs, 7);
    // A copy at an offset lands at the offset, piece by piece.
    b.copy_h2d(&s, &data[..2500], &buf, 1599).unwrap();
    let mut tail = vec![0u8; 2500];
    b.copy_d2h(&s, &buf, 1599, &mut tail).unwrap();
    assert_eq!(tail, data[..2500]);
    b.free(buf).unwrap();
    drop(s);
    assert_clean(&b);
}

#[test]
fn page_locked_memory_stays_under_the_caps() {
    let mib = 1 << 20;
    let b = backend(
        FakeConfig::default(),
        GpuOptions::default().staging(limits(mib, mib, 2 * mib)),
    );
    let s = b.create_stream().unwrap();
    let size = 10 * mib + 17;
    let buf = b.alloc(size).unwrap();
    let data = pattern(size, 5);
    b.copy_h2d(&s, &data, &buf, 0).unwrap();
    // Eleven pieces, never more than two (2 MiB) in flight: the oldest was waited for and its
    // buffer reused, so only two buffers were ever made.
    let stats = b.api().stats();
    assert_eq!(stats.h2d.len(), 11);
    assert_eq!(stats.host_allocs, 2);
    assert!(stats.pinned_peak <= 2 * mib, "{}", stats.pinned_peak);
    let mut back = vec![0u8; size];
    b.copy_d2h(&s, &buf, 0, &mut back).unwrap();
    assert!(back == data, "the round trip changed the bytes");
    // Once idle, at most the idle cap is kept.
    b.stream_synchronize(&s).unwrap();
    assert!(b.api().stats().pinned_live <= 2 * mib);
    b.free(buf).unwrap();
    drop(s);
    assert_eq!(b.api().stats().pinned_live, 0);
    assert_clean(&b);
}

#[test]
fn pointer_tables_follow_stream_order_and_grow() {
    let b = with_progress(Progress::Lazy);
    let s = b.create_stream().unwrap();
    let n = 3;
    let shape = GemmShape::dense(n, n, n);
    let e = n * n;
    let a: Vec<Complex64> = (0..300 * e)
        .map(|i| Complex64::new(i as f64 % 7.0, (i % 3) as f64))
        .collect();
    let ab = b.alloc(300 * e * 16).unwrap();
    b.copy_h2d(&s, as_bytes(&a), &ab, 0).unwrap();
    let cb = b.alloc(300 * e * 16).unwrap();
    let item = |i: usize| GemmItem {
        a: DeviceRef::new(&ab, i * e),
        b: DeviceRef::new(&ab, (299 - i) * e),
        c: DeviceRef::new(&cb, i * e),
    };
    let mallocs = b.api().stats().mallocs;
    // Three batches queued back to back before anything runs: each uploads its table into
    // the stream's table after the GEMM before it has (in stream order) read the last one.
    b.gemm_batched(&s, &shape, &[item(0)]).unwrap();
    b.gemm_batched(&s, &shape, &[item(1), item(2)]).unwrap();
    assert_eq!(b.api().stats().mallocs, mallocs + 1, "one table of 4 KiB");
    // 300 items need 7200 bytes of table: a larger one replaces it.
    let all: Vec<_> = (3..300).map(item).collect();
    b.gemm_batched(&s, &shape, &all).unwrap();
    assert_eq!(b.api().stats().mallocs, mallocs + 2);
    assert_eq!(b.used(), 2 * 300 * e * 16, "tables are not counted");
    let mut got = vec![Complex64::new(0.0, 0.0); 300 * e];
    b.copy_d2h(&s, &cb, 0, as_bytes_mut(&mut got)).unwrap();
    for i in 0..300 {
        let mut want = vec![Complex64::new(0.0, 0.0); e];
        reference_gemm(
            &shape,
            &a[i * e..(i + 1) * e],
            &a[(299 - i) * e..(300 - i) * e],
            &mut want,
        );
        assert_eq!(got[i * e..(i + 1) * e], want[..], "item {i}");
    }
    assert_eq!(b.api().stats().batched, 3);
    drop(s);
    assert_clean(&b);
}

#[test]
fn the_budget_defaults_to_free_memory_less_the_margin() {
    let capacity = 64usize << 30;
    let config = FakeConfig {
        capacity,
        ..FakeConfig::default()
    };
    let b = backend(config, GpuOptions::default());
    assert_eq!(b.budget(), capacity - (2 << 30));
    assert_eq!(b.budget(), default_budget(capacity));
    let m = b.mem_info().unwrap();
    assert_eq!((m.free, m.total), (b.budget(), b.budget()));
    assert_eq!(b.device_mem_info().unwrap().total, capacity);
    let x = b.alloc(1000).unwrap();
    let y = b.alloc_managed(24).unwrap();
    assert_eq!(b.used(), 1024);
    assert_eq!(b.mem_info().unwrap().free, b.budget() - 1024);
    match b.alloc(b.budget()) {
        Err(BackendError::OutOfMemory { requested, free }) => {
            assert_eq!((requested, free), (b.budget(), b.budget() - 1024));
        }
        other => panic!("{other:?}"),
    }
    b.free(x).unwrap();
    drop(y);
    assert_eq!(b.used(), 0);

    let small = backend(config, GpuOptions::default().budget(1 << 20));
    assert_eq!(small.mem_info().unwrap().total, 1 << 20);
    assert!(
        small.name().contains("budget 1048576 bytes"),
        "{}",
        small.name()
    );
}

#[test]
fn impossible_budgets_are_refused() {
    let tiny = FakeConfig {
        capacity: 100 << 20,
        ..FakeConfig::default()
    };
    for budget in [0, 101 << 20] {
        let opened = memhc_gpu::GpuBackend::on(
            common::fake::Fake::new(tiny),
            GpuOptions::default().budget(budget),
        );
        match opened {
            Err(BackendError::InvalidArgument { reason, .. }) => {
                assert!(reason.contains("budget"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }
    match memhc_gpu::GpuBackend::on(common::fake::Fake::new(tiny), GpuOptions::default()) {
        Err(BackendError::Unavailable(why)) => {
            assert!(
                why.starts_with("fake device 0 has only 104857600 bytes free"),
                "{why}"
            );
            assert!(!why.contains('\n'));
        }
        other => panic!("{other:?}"),
    }
    let zero_chunk = GpuOptions::default().staging(limits(0, 0, 0));
    assert!(matches!(
        memhc_gpu::GpuBackend::on(common::fake::Fake::new(tiny), zero_chunk),
        Err(BackendError::InvalidArgument { .. })
    ));
}

#[test]
fn events_never_recorded_are_complete_and_recorded_ones_wait() {
    let b = with_progress(Progress::Lazy);
    let (s1, s2) = (b.create_stream().unwrap(), b.create_stream().unwrap());
    let e = b.create_event().unwrap();
    assert!(b.event_query(&e).unwrap());
    b.wait_event(&s2, &e).unwrap();
    b.event_synchronize(&e).unwrap();
    let buf = b.alloc(64).unwrap();
    b.copy_h2d(&s1, &[7u8; 64], &buf, 0).unwrap();
    b.record_event(&e, &s1).unwrap();
    let clone = e.clone();
    assert!(
        !b.event_query(&clone).unwrap(),
        "the lazy device ran nothing yet"
    );
    b.wait_event(&s2, &e).unwrap();
    let mut back = [0u8; 64];
    b.copy_d2h(&s2, &buf, 0, &mut back).unwrap();
    assert_eq!(back, [7u8; 64]);
    assert!(b.event_query(&e).unwrap());
    b.free(buf).unwrap();
    assert_clean(&b);
}

#[test]
fn host_buffers_wait_for_their_copies() {
    let b = with_progress(Progress::Lazy);
    let s = b.create_stream().unwrap();
    let buf = b.alloc(256).unwrap();
    let data = pattern(256, 1);
    b.copy_h2d(&s, &data, &buf, 0).unwrap();
    let host = b.alloc_host(512).unwrap();
    b.copy_d2h_async(&s, &buf, 0, &host, 0, 256).unwrap();
    b.copy_d2h_async(&s, &buf, 128, &host, 256, 128).unwrap();
    // Read without synchronising: the read waits for both copies.
    let mut got = vec![0u8; 384];
    host.read(0, &mut got).unwrap();
    assert_eq!(got[..256], data[..]);
    assert_eq!(got[256..], data[128..]);
    // Dropped with a copy pending: the drop waits for it.
    let pending = b.alloc_host(256).unwrap();
    b.copy_d2h_async(&s, &buf, 0, &pending, 0, 256).unwrap();
    drop(pending);
    assert!(matches!(
        b.alloc_host(0),
        Err(BackendError::InvalidArgument { .. })
    ));
    b.synchronize().unwrap();
    b.free(buf).unwrap();
    assert_clean(&b);
}

#[test]
fn a_stream_dropped_with_work_queued_finishes_it_first() {
    let b = with_progress(Progress::Lazy);
    let buf = b.alloc(4 << 20).unwrap();
    {
        let s = b.create_stream().unwrap();
        b.copy_h2d(&s, &pattern(4 << 20, 9), &buf, 0).unwrap();
        b.gemm_batched(
            &s,
            &GemmShape::dense(2, 2, 2),
            &[GemmItem {
                a: DeviceRef::new(&buf, 0),
                b: DeviceRef::new(&buf, 4),
                c: DeviceRef::new(&buf, 8),
            }],
        )
        .unwrap();
    }
    let s = b.create_stream().unwrap();
    let mut back = vec![0u8; 64];
    b.copy_d2h(&s, &buf, 1 << 20, &mut back).unwrap();
    assert_eq!(back, pattern(4 << 20, 9)[1 << 20..(1 << 20) + 64]);
    assert_clean(&b);
}

#[test]
fn without_managed_memory_every_managed_call_says_why() {
    let b = backend(
        FakeConfig {
            managed: false,
            ..FakeConfig::default()
        },
        GpuOptions::default(),
    );
    assert!(!b.supports_managed());
    let plain = b.alloc(64).unwrap();
    let s = b.create_stream().unwrap();
    let unsupported = |r: Result<(), BackendError>| match r {
        Err(BackendError::Unsupported(why)) => {
            assert!(
                why.ends_with(
                    "has no managed (unified) memory: this fake device was made without it"
                ),
                "{why}"
            );
        }
        other => panic!("{other:?}"),
    };
    unsupported(b.alloc_managed(64).map(drop));
    unsupported(b.managed_write(&plain, 0, &[0u8; 8]));
    unsupported(b.managed_read(&plain, 0, &mut [0u8; 8]));
    unsupported(b.advise_read_mostly(&plain));
    unsupported(b.prefetch(&s, &plain, memhc_core::Location::Device));
    // With managed memory, device memory is refused as not managed.
    let m = with_progress(Progress::Eager);
    let plain = m.alloc(64).unwrap();
    assert!(matches!(
        m.managed_write(&plain, 0, &[0u8; 8]),
        Err(BackendError::InvalidArgument { .. })
    ));
    let managed = m.alloc_managed(64).unwrap();
    assert!(managed.is_managed() && managed.bytes() == 64);
}
