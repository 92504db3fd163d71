//! One meson4x4 hadron contraction (16 output spins, 64 products) on the host backend, next to
//! the bare GEMM rate of the same backend for the same 64 products, in the same run.
//!
//! * `bare-gemm`: one `gemm_batched` call of 64 independent `N x N x N` products on a host
//!   stream, timed to `stream_synchronize`;
//! * `layered`: `Engine::contract_into` with inputs and output resident (all hits): four
//!   batched GEMMs accumulating with `beta = 1`, plus the launch's bookkeeping;
//! * `temporaries`: the paper's scheme: 64 products into a temporary, then batched additions.
//!
//! Throughput is in flops (`8 N³` per product), so `Gelem/s` reads as GFLOPS; the ratio of a
//! contraction line to `bare-gemm` is the contraction's efficiency (MemHC, Fig. 10b: 0.61-0.95
//! of cuBLAS ZGEMM on a P100).

#![allow(missing_docs, clippy::expect_used)]

use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memhc::backend::gemm::{DeviceRef, GemmItem, GemmShape};
use memhc::backend::{Backend, as_bytes};
use memhc::hadron::{Accumulation, Contraction, Engine, HadronNode, NodeShape, SpinMapping};
use memhc::{Config, Runtime};
use memhc_host::host::HostBackend;

fn contraction_rate(c: &mut Criterion) {
    for n in [64usize, 128] {
        let shape = NodeShape::meson(n).expect("shape");
        let node_bytes = shape.layout().expect("layout").bytes();
        let flops = 64 * 8 * (n as u64).pow(3);
        let mut group = c.benchmark_group(format!("meson4x4 N={n}"));
        group.throughput(Throughput::Elements(flops));
        group.sample_size(20);

        let x = HadronNode::random(&shape, 1);
        let y = HadronNode::random(&shape, 2);

        // The bare rate: 64 products A[i] B[i] -> C[i] in one batched call.
        let backend = HostBackend::new(4 * node_bytes + (64 << 20));
        let stream = backend.create_stream().expect("stream");
        let (ab, bb) = (
            backend.alloc(4 * node_bytes).expect("alloc"),
            backend.alloc(4 * node_bytes).expect("alloc"),
        );
        let cb = backend.alloc(4 * node_bytes).expect("alloc");
        let four = |v: &[num_complex::Complex64]| v.repeat(4);
        backend
            .copy_h2d(&stream, as_bytes(&four(x.as_slice())), &ab, 0)
            .expect("copy");
        backend
            .copy_h2d(&stream, as_bytes(&four(y.as_slice())), &bb, 0)
            .expect("copy");
        let e = n * n;
        let items: Vec<_> = (0..64)
            .map(|i| GemmItem {
                a: DeviceRef::new(&ab, i * e),
                b: DeviceRef::new(&bb, i * e),
                c: DeviceRef::new(&cb, i * e),
            })
            .collect();
        let gemm = GemmShape::dense(n, n, n);
        group.bench_function("bare-gemm", |bench| {
            bench.iter(|| {
                backend.gemm_batched(&stream, &gemm, &items).expect("gemm");
                backend.stream_synchronize(&stream).expect("sync");
            })
        });

        for (name, acc) in [
            ("layered", Accumulation::Layered),
            ("temporaries", Accumulation::Temporaries),
        ] {
            let rt = Runtime::new(HostBackend::new(64 * node_bytes), Config::default())
                .expect("runtime");
            let mut engine = Engine::new(rt).with_accumulation(acc);
            let a = engine.register(x.clone()).expect("register");
            let b = engine.register(y.clone()).expect("register");
            let out = engine.create(shape.clone()).expect("create");
            let contraction = Contraction::new(a, b, Arc::new(SpinMapping::meson4x4()));
            group.bench_function(name, |bench| {
                bench.iter(|| {
                    engine
                        .contract_into(0, &contraction, out)
                        .expect("contract");
                    engine.runtime_mut().synchronize().expect("sync");
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, contraction_rate);
criterion_main!(benches);
