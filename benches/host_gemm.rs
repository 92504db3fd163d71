//! The host backend's GEMM rate next to faer's own, in the same run.
//!
//! For complex n x n matrices (n = 256, 384) and for a meson-like batch (64 products at
//! n = 128), each benchmark group has two lines:
//!
//! * `faer`: `faer::linalg::matmul::matmul` called directly, on all of rayon's threads;
//! * `host-backend`: the same products through `Backend::gemm_batched` on a stream of the host
//!   backend (validation, queueing to the stream's worker, buffer locks), timed until
//!   `stream_synchronize` returns.
//!
//! Throughput is reported in "elements" per second where one element is one floating-point
//! operation (`8 m n k` per complex product), so criterion's `Gelem/s` reads as GFLOPS. The
//! ratio of the two lines is the host backend's overhead over bare faer.

#![allow(missing_docs, clippy::expect_used)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use memhc::backend::gemm::{DeviceRef, GemmItem, GemmShape};
use memhc::backend::{Backend, as_bytes};
use memhc::conformance::random_elements;
use memhc_host::host::HostBackend;
use num_complex::Complex64;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn gemm_rate(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for (n, batch) in [(256usize, 1usize), (384, 1), (128, 64)] {
        let elems = n * n;
        let a = random_elements(&mut rng, elems * batch);
        let b = random_elements(&mut rng, elems * batch);
        let flops = 8 * (n as u64).pow(3) * batch as u64;
        let mut group = c.benchmark_group(format!("zgemm n={n} batch={batch}"));
        group.throughput(Throughput::Elements(flops));
        group.sample_size(20);

        let mut out = vec![Complex64::new(0.0, 0.0); elems * batch];
        group.bench_function(BenchmarkId::new("faer", n), |bench| {
            bench.iter(|| {
                for i in 0..batch {
                    let r = i * elems..(i + 1) * elems;
                    matmul(
                        MatMut::from_column_major_slice_mut(&mut out[r.clone()], n, n),
                        Accum::Replace,
                        MatRef::from_column_major_slice(&a[r.clone()], n, n),
                        MatRef::from_column_major_slice(&b[r], n, n),
                        Complex64::new(1.0, 0.0),
                        Par::rayon(0),
                    );
                }
            })
        });

        let backend = HostBackend::new(3 * elems * batch * 16 + (1 << 20));
        let stream = backend.create_stream().expect("stream");
        let bytes = elems * batch * 16;
        let (ab, bb, cb) = (
            backend.alloc(bytes).expect("alloc"),
            backend.alloc(bytes).expect("alloc"),
            backend.alloc(bytes).expect("alloc"),
        );
        backend
            .copy_h2d(&stream, as_bytes(&a), &ab, 0)
            .expect("copy");
        backend
            .copy_h2d(&stream, as_bytes(&b), &bb, 0)
            .expect("copy");
        let items: Vec<_> = (0..batch)
            .map(|i| GemmItem {
                a: DeviceRef::new(&ab, i * elems),
                b: DeviceRef::new(&bb, i * elems),
                c: DeviceRef::new(&cb, i * elems),
            })
            .collect();
        let shape = GemmShape::dense(n, n, n);
        group.bench_function(BenchmarkId::new("host-backend", n), |bench| {
            bench.iter(|| {
                backend.gemm_batched(&stream, &shape, &items).expect("gemm");
                backend.stream_synchronize(&stream).expect("sync");
            })
        });
        group.finish();
    }
}

criterion_group!(benches, gemm_rate);
criterion_main!(benches);
