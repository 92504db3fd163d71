//! The modelled device through the [`Backend`] trait: the GPU backend's own code over
//! [`ModelDevice`], with durations checked against ones computed here from the parameters.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use memhc_backend::gemm::{DeviceRef, GemmShape, StridedBatch};
use memhc_backend::timeline::WorkKind;
use memhc_backend::{Backend, BackendError, ELEMENT_BYTES};
use memhc_gpu::model::{GemmRate, ModelBackend, ModelClock, ModelParams, model_backend};

const MIB: usize = 1 << 20;

/// No host costs at all (staging, pinning and calls are free), no launch latency: only the
/// device's engines take time. Copies at 1 GB/s with 1 µs latency, GEMMs at 1 TFLOPS.
fn device_only() -> ModelParams {
    ModelParams {
        gemm_rates: vec![GemmRate {
            n: 1.0,
            tflops: 1.0,
        }],
        gemm_one_rates: Vec::new(),
        gemm_call_s: 0.0,
        h2d_bandwidth: 1e9,
        d2h_bandwidth: 1e9,
        copy_latency_s: 1e-6,
        h2d_copy_share: 1.0,
        d2h_copy_share: 1.0,
        h2d_duplex_share: 1.0,
        d2h_duplex_share: 1.0,
        launch_latency_s: 0.0,
        host_call_s: 0.0,
        staging_write_rate: 1e30,
        staging_write_rate_small: 1e30,
        staging_read_rate: 1e30,
        staging_read_rate_small: 1e30,
        pin_rate: 1e30,
        malloc_s: 0.0,
        free_s: 0.0,
        ..ModelParams::h100()
    }
}

fn open(params: ModelParams) -> (ModelBackend, ModelClock) {
    model_backend(params, 1 << 30).expect("a modelled device opens")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-6)
}

#[test]
fn it_is_a_data_less_backend_with_a_budget() {
    let (b, _) = open(ModelParams::h100());
    assert!(b.name().starts_with("model:"), "{}", b.name());
    assert_eq!(b.mem_info().unwrap().total, 1 << 30);
    assert!(matches!(
        b.alloc(2 << 30),
        Err(BackendError::OutOfMemory { .. })
    ));
    let x = b.alloc(MIB).unwrap();
    let s = b.create_stream().unwrap();
    assert!(
        b.copy_h2d(&s, &[0u8; 16], &x, MIB - 8).is_err(),
        "ranges are checked"
    );
    let mut out = [7u8; 8];
    b.copy_d2h(&s, &x, 0, &mut out).unwrap();
    assert_eq!(out, [7u8; 8], "no data moves");
    assert!(!b.supports_managed());
    assert!(
        model_backend(ModelParams::h100(), usize::MAX).is_err(),
        "beyond the card"
    );
}

#[test]
fn an_upload_takes_latency_plus_bytes_over_bandwidth() {
    let (b, clock) = open(device_only());
    let x = b.alloc(MIB).unwrap();
    let s = b.create_stream().unwrap();
    b.copy_h2d(&s, &vec![0u8; 1_000_000], &x, 0).unwrap();
    b.synchronize().unwrap();
    let r = clock.report();
    assert!(close(r.makespan_s, 1e-6 + 1e-3), "{r:?}");
    assert_eq!(r.h2d_bytes, 1_000_000);
    assert!(close(r.floor_s, 1e-3));
}

#[test]
fn uploads_on_two_streams_share_one_engine_and_overlap_a_download() {
    let one = 1e-6 + 1e-3; // 1 MB at 1 GB/s, plus the latency
    let (b, clock) = open(device_only());
    let (x, y) = (b.alloc(MIB).unwrap(), b.alloc(MIB).unwrap());
    let (s, t) = (b.create_stream().unwrap(), b.create_stream().unwrap());
    let data = vec![0u8; 1_000_000];
    b.copy_h2d(&s, &data, &x, 0).unwrap();
    b.copy_h2d(&t, &data, &y, 0).unwrap();
    b.synchronize().unwrap();
    assert!(
        close(clock.report().makespan_s, 2.0 * one),
        "{:?}",
        clock.report()
    );

    let (b, clock) = open(device_only());
    let (x, y) = (b.alloc(MIB).unwrap(), b.alloc(MIB).unwrap());
    let (s, t) = (b.create_stream().unwrap(), b.create_stream().unwrap());
    let host = b.alloc_host(1_000_000).unwrap();
    b.copy_h2d(&s, &data, &x, 0).unwrap();
    b.copy_d2h_async(&t, &y, 0, &host, 0, 1_000_000).unwrap();
    b.synchronize().unwrap();
    assert!(
        close(clock.report().makespan_s, one),
        "{:?}",
        clock.report()
    );
}

/// A strided batch of `count` products of `n x n x n` on `buffer` (A, B and C all in it).
fn gemm<B: Backend>(b: &B, s: &B::Stream, buffer: &B::Buffer, n: usize, count: usize) {
    let batch = StridedBatch {
        a: DeviceRef::new(buffer, 0),
        stride_a: 0,
        b: DeviceRef::new(buffer, 0),
        stride_b: 0,
        c: DeviceRef::new(buffer, n * n),
        stride_c: 0,
        count,
    };
    b.gemm_strided_batched(s, &GemmShape::dense(n, n, n), &batch)
        .unwrap();
}

#[test]
fn a_gemm_waiting_on_an_event_starts_after_it() {
    let (b, clock) = open(device_only());
    b.set_timing(true);
    let n = 250; // 8 * 250^3 = 1.25e8 flops: 125 µs at 1 TFLOPS
    let x = b.alloc(2 * n * n * ELEMENT_BYTES).unwrap();
    let y = b.alloc(4 * MIB).unwrap();
    let (s, t) = (b.create_stream().unwrap(), b.create_stream().unwrap());
    b.copy_h2d(&s, &vec![0u8; 4_000_000], &y, 0).unwrap(); // 4.001 ms
    let e = b.create_event().unwrap();
    b.record_event(&e, &s).unwrap();
    b.wait_event(&t, &e).unwrap();
    gemm(&b, &t, &x, n, 1);
    b.synchronize().unwrap();
    let spans = b.take_timeline();
    let copy = spans.iter().find(|w| w.kind == WorkKind::CopyH2D).unwrap();
    let compute = spans.iter().find(|w| w.kind == WorkKind::Compute).unwrap();
    assert!(compute.start_ns >= copy.end_ns, "{spans:?}");
    let r = clock.report();
    assert!(close(r.makespan_s, 4.001e-3 + 125e-6), "{r:?}");
    assert!(close(r.compute_floor_s, 125e-6));
    assert!(close(r.flops, 1.25e8));

    // Without the wait, the GEMM runs under the copy.
    let (b, clock) = open(device_only());
    let x = b.alloc(2 * n * n * ELEMENT_BYTES).unwrap();
    let y = b.alloc(4 * MIB).unwrap();
    let (s, t) = (b.create_stream().unwrap(), b.create_stream().unwrap());
    b.copy_h2d(&s, &vec![0u8; 4_000_000], &y, 0).unwrap();
    gemm(&b, &t, &x, n, 1);
    b.synchronize().unwrap();
    assert!(close(clock.report().makespan_s, 4.001e-3));
}

#[test]
fn staging_costs_the_host_and_overlaps_the_copy_of_the_piece_before() {
    // The host fills staging at 1 GB/s; the bus is 1000x faster. A 16 MiB upload is two
    // 8 MiB pieces: the second piece is filled while the first travels.
    let params = ModelParams {
        staging_write_rate: 1e9,
        h2d_bandwidth: 1e12,
        copy_latency_s: 0.0,
        ..device_only()
    };
    let (b, clock) = open(params);
    let x = b.alloc(16 * MIB).unwrap();
    let s = b.create_stream().unwrap();
    b.copy_h2d(&s, &vec![0u8; 16 * MIB], &x, 0).unwrap();
    b.synchronize().unwrap();
    let piece = (8 * MIB) as f64;
    let expected = 2.0 * piece / 1e9 + piece / 1e12;
    let r = clock.report();
    assert!(close(r.makespan_s, expected), "{r:?} against {expected}");
    assert!(close(r.host_copy_s, 2.0 * piece / 1e9));
}

#[test]
fn a_read_back_waits_for_its_pieces_and_empties_them_on_the_host() {
    // One 4 MiB piece: the copy (4 MiB at 1 GB/s), then the host empties it at 2 GB/s.
    let params = ModelParams {
        staging_read_rate: 2e9,
        staging_read_rate_small: 2e9,
        copy_latency_s: 0.0,
        ..device_only()
    };
    let (b, clock) = open(params);
    let x = b.alloc(4 * MIB).unwrap();
    let s = b.create_stream().unwrap();
    let mut out = vec![0u8; 4 * MIB];
    b.copy_d2h(&s, &x, 0, &mut out).unwrap();
    let bytes = (4 * MIB) as f64;
    let r = clock.report();
    assert!(close(r.makespan_s, bytes / 1e9 + bytes / 2e9), "{r:?}");
    assert!(
        close(clock.host_s(), r.makespan_s),
        "the host waited for it"
    );
}

#[test]
fn invalid_parameters_are_an_error_not_a_panic() {
    let params = ModelParams {
        d2h_bandwidth: -1.0,
        ..ModelParams::h100()
    };
    assert!(model_backend(params, 1 << 30).is_err());
}

#[test]
fn a_free_waits_for_the_device_unless_told_otherwise() {
    for synchronizes in [true, false] {
        let params = ModelParams {
            free_synchronizes: synchronizes,
            ..device_only()
        };
        let (b, clock) = open(params);
        let (x, y) = (b.alloc(MIB).unwrap(), b.alloc(MIB).unwrap());
        let s = b.create_stream().unwrap();
        b.copy_h2d(&s, &vec![0u8; 1_000_000], &x, 0).unwrap(); // 1.001 ms on the device
        b.free(y).unwrap();
        let expected = if synchronizes { 1e-6 + 1e-3 } else { 0.0 };
        assert!(
            close(clock.host_s(), expected),
            "{synchronizes}: {}",
            clock.host_s()
        );
    }
}

#[test]
fn a_geam_reads_two_matrices_and_writes_one_at_the_memory_bandwidth() {
    let params = ModelParams {
        device_bandwidth: 1e9,
        ..device_only()
    };
    let (b, clock) = open(params);
    let n = 100;
    let x = b.alloc(4 * n * n * ELEMENT_BYTES).unwrap();
    let s = b.create_stream().unwrap();
    let item = |i: usize| memhc_backend::gemm::GemmItem {
        a: DeviceRef::new(&x, 0),
        b: DeviceRef::new(&x, n * n),
        c: DeviceRef::new(&x, (2 + i) * n * n),
    };
    let shape = memhc_backend::gemm::GeamShape::dense_sum(n, n);
    b.geam_batched(&s, &shape, &[item(0), item(1)]).unwrap();
    b.synchronize().unwrap();
    // Two items, each 3 x 100 x 100 complex doubles (480,000 bytes) at 1 GB/s.
    assert!(
        close(clock.report().makespan_s, 2.0 * 480_000.0 / 1e9),
        "{:?}",
        clock.report()
    );
}

/// A tiled upload and read-back from page-locked memory (a meson node at N = 128: 4 x 4
/// components of 128 x 128) on the modelled H100: per block column the host makes 4 copy calls
/// each way instead of 16, the device moves the same bytes. The model charges a pitched copy,
/// 2D or 3D, as one call: the host's time across each tiled copy differs by 12 calls.
#[test]
fn tiled_copies_per_column_cost_the_host_g_calls_instead_of_g_squared() {
    use memhc_backend::tiles::Tiles;
    use memhc_gpu::model::ModelDevice;
    use memhc_gpu::{GpuBackend, GpuOptions, TiledCopies};
    let params = ModelParams {
        host_call_s: 1e-3,
        ..ModelParams::h100()
    };
    let t = Tiles::new(4, 128, 128).unwrap();
    let mut per = Vec::new();
    for how in [TiledCopies::PerComponent, TiledCopies::PerColumn] {
        let device = ModelDevice::new(params.clone()).unwrap();
        let clock = device.clock();
        let b = GpuBackend::on(device, GpuOptions::default().tiled(how)).unwrap();
        let s = b.create_stream().unwrap();
        let buf = b.alloc(t.bytes()).unwrap();
        let host = b.alloc_host(t.bytes()).unwrap();
        let out = b.alloc_host(t.bytes()).unwrap();
        b.synchronize().unwrap();
        let t0 = clock.host_s();
        b.copy_h2d_async_tiled(&s, &host, 0, &buf, 0, &t).unwrap();
        let t1 = clock.host_s();
        b.copy_d2h_async_tiled(&s, &buf, 0, &out, 0, &t).unwrap();
        let t2 = clock.host_s();
        b.synchronize().unwrap();
        let r = clock.report();
        assert_eq!(
            (r.h2d_bytes, r.d2h_bytes),
            (t.bytes() as u64, t.bytes() as u64)
        );
        per.push((t1 - t0, t2 - t1));
        b.free(buf).unwrap();
    }
    let ((up16, down16), (up4, down4)) = (per[0], per[1]);
    for (more, fewer) in [(up16, up4), (down16, down4)] {
        assert!(
            ((more - fewer) - 12.0 * params.host_call_s).abs() < 1e-9,
            "{per:?}"
        );
    }
}
