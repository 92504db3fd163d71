//! One meson4x4 hadron contraction (16 output spins, 64 products of `N x N` matrices) on the
//! HIP backend, against one `rocblas_zgemm_strided_batched` of the same 64 products, at
//! N = 128, 256, 384 (MemHC Fig. 10b compares the same two on cuBLAS):
//!
//! * `strided-zgemm`: the 64 products `A[i] B[i] -> C[i]` in one strided call, timed to
//!   `stream_synchronize`: the bare rate of the library;
//! * `layered`, `temporaries`: `Engine::contract_into` with inputs and output resident (all
//!   hits), timed to the runtime's synchronisation, for both accumulation schemes.
//!
//! Throughput is in flops (`8 N³` per product), so `Gelem/s` reads as GFLOPS. After each size
//! the ratio contraction / strided ZGEMM (time per call, median of a few calls) is printed: the
//! contraction's efficiency. Without ROCm or an AMD GPU the bench prints why and measures
//! nothing.

#![allow(missing_docs, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hadron::{Accumulation, Contraction, Engine, HadronNode, NodeShape, SpinMapping};
use memhc_core::backend::gemm::{DeviceRef, GemmShape, StridedBatch};
use memhc_core::backend::{Backend, as_bytes};
use memhc_core::{Config, Runtime};
use memhc_hip::HipBackend;

/// Median time of `reps` calls of `f`, after one call to warm up.
fn median(reps: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut t: Vec<Duration> = (0..reps)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    t.sort();
    t[reps / 2]
}

fn contraction_against_strided_zgemm(c: &mut Criterion) {
    if let Err(e) = HipBackend::new() {
        eprintln!("SKIPPED: the HIP benches need ROCm and an AMD GPU: {e}");
        return;
    }
    for n in [128usize, 256, 384] {
        let shape = NodeShape::meson(n).expect("shape");
        let node_bytes = shape.layout().expect("layout").bytes();
        let flops = 64 * 8 * (n as u64).pow(3);
        let mut group = c.benchmark_group(format!("hip meson4x4 N={n}"));
        group.throughput(Throughput::Elements(flops));
        group.sample_size(10);
        let x = HadronNode::random(&shape, 1);
        let y = HadronNode::random(&shape, 2);

        // The bare rate: 64 products in one strided call, operands back to back.
        let bare = HipBackend::with_budget(12 * node_bytes + (64 << 20)).expect("backend");
        let stream = bare.create_stream().expect("stream");
        let four = |v: &[num_complex::Complex64]| v.repeat(4);
        let (ab, bb, cb) = (
            bare.alloc(4 * node_bytes).expect("alloc"),
            bare.alloc(4 * node_bytes).expect("alloc"),
            bare.alloc(4 * node_bytes).expect("alloc"),
        );
        bare.copy_h2d(&stream, as_bytes(&four(x.as_slice())), &ab, 0)
            .expect("copy");
        bare.copy_h2d(&stream, as_bytes(&four(y.as_slice())), &bb, 0)
            .expect("copy");
        let e = n * n;
        let batch = StridedBatch {
            a: DeviceRef::new(&ab, 0),
            stride_a: e,
            b: DeviceRef::new(&bb, 0),
            stride_b: e,
            c: DeviceRef::new(&cb, 0),
            stride_c: e,
            count: 64,
        };
        let gemm = GemmShape::dense(n, n, n);
        let mut strided = || {
            bare.gemm_strided_batched(&stream, &gemm, &batch)
                .expect("gemm");
            bare.stream_synchronize(&stream).expect("sync");
        };
        group.bench_function("strided-zgemm", |bench| bench.iter(&mut strided));
        let bare_time = median(9, &mut strided);

        for (name, acc) in [
            ("layered", Accumulation::Layered),
            ("temporaries", Accumulation::Temporaries),
        ] {
            let backend = HipBackend::with_budget(72 * node_bytes).expect("backend");
            let rt = Runtime::new(backend, Config::default()).expect("runtime");
            let mut engine = Engine::new(rt).with_accumulation(acc);
            let a = engine.register(x.clone()).expect("register");
            let b = engine.register(y.clone()).expect("register");
            let out = engine.create(shape.clone()).expect("create");
            let contraction = Contraction::new(a, b, Arc::new(SpinMapping::meson4x4()));
            let mut contract = || {
                engine
                    .contract_into(0, &contraction, out)
                    .expect("contract");
                engine.runtime_mut().synchronize().expect("sync");
            };
            group.bench_function(name, |bench| bench.iter(&mut contract));
            let t = median(9, &mut contract);
            eprintln!(
                "hip meson4x4 N={n} {name}: {:.3} ms, strided ZGEMM {:.3} ms, efficiency {:.2}",
                t.as_secs_f64() * 1e3,
                bare_time.as_secs_f64() * 1e3,
                bare_time.as_secs_f64() / t.as_secs_f64()
            );
        }
        group.finish();
        bare.synchronize().expect("sync");
        for buf in [ab, bb, cb] {
            bare.free(buf).expect("free");
        }
    }
}

criterion_group!(benches, contraction_against_strided_zgemm);
criterion_main!(benches);
