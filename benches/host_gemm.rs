//! The host backend's GEMM rate next to faer's own, in the same run.
//!
//! For one complex n x n product (n = 256, 384), each group has two lines:
//!
//! * `faer`: `faer::linalg::matmul::matmul` called directly, on all of rayon's threads;
//! * `host-backend`: the same product through `Backend::gemm_batched` on a stream of the host
//!   backend (validation, queueing to the stream's worker, buffer locks), timed until
//!   `stream_synchronize` returns.
//!
//! For a meson-like batch, 64 independent products of n x n (n = 32, 64, 128), each group has
//! three lines:
//!
//! * `faer-items-parallel`: bare faer, the 64 products spread over rayon's threads, each product
//!   sequential inside (`Par::Seq`);
//! * `faer-items-in-turn`: bare faer, one product after another, each on all of rayon's threads;
//! * `host-backend`: the 64 products in one `Backend::gemm_batched` call, as above.
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
use rayon::prelude::*;

/// One column-major n x n product `out = a b` with faer.
fn product(out: &mut [Complex64], a: &[Complex64], b: &[Complex64], n: usize, par: Par) {
    matmul(
        MatMut::from_column_major_slice_mut(out, n, n),
        Accum::Replace,
        MatRef::from_column_major_slice(a, n, n),
        MatRef::from_column_major_slice(b, n, n),
        Complex64::new(1.0, 0.0),
        par,
    );
}

/// The host backend doing `batch` products of n x n in one batched call, as a benchmark
/// line of `group`.
fn host_backend_line(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    n: usize,
    batch: usize,
    a: &[Complex64],
    b: &[Complex64],
) {
    let elems = n * n;
    let backend = HostBackend::new(3 * elems * batch * 16 + (1 << 20));
    let stream = backend.create_stream().expect("stream");
    let bytes = elems * batch * 16;
    let (ab, bb, cb) = (
        backend.alloc(bytes).expect("alloc"),
        backend.alloc(bytes).expect("alloc"),
        backend.alloc(bytes).expect("alloc"),
    );
    backend
        .copy_h2d(&stream, as_bytes(a), &ab, 0)
        .expect("copy");
    backend
        .copy_h2d(&stream, as_bytes(b), &bb, 0)
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
}

/// 64 products of n x n: bare faer with the products in parallel, bare faer one product at a
/// time, and the host backend's batched GEMM.
fn batched_rate(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let batch = 64;
    for n in [32usize, 64, 128] {
        let elems = n * n;
        let a = random_elements(&mut rng, elems * batch);
        let b = random_elements(&mut rng, elems * batch);
        let mut group = c.benchmark_group(format!("zgemm batch={batch} n={n}"));
        group.throughput(Throughput::Elements(8 * (n as u64).pow(3) * batch as u64));
        group.sample_size(20);
        let mut out = vec![Complex64::new(0.0, 0.0); elems * batch];
        group.bench_function(BenchmarkId::new("faer-items-parallel", n), |bench| {
            bench.iter(|| {
                out.par_chunks_mut(elems)
                    .zip(a.par_chunks(elems).zip(b.par_chunks(elems)))
                    .for_each(|(o, (x, y))| product(o, x, y, n, Par::Seq));
            })
        });
        group.bench_function(BenchmarkId::new("faer-items-in-turn", n), |bench| {
            bench.iter(|| {
                for ((o, x), y) in out
                    .chunks_mut(elems)
                    .zip(a.chunks(elems))
                    .zip(b.chunks(elems))
                {
                    product(o, x, y, n, Par::rayon(0));
                }
            })
        });
        host_backend_line(&mut group, n, batch, &a, &b);
        group.finish();
    }
}

fn gemm_rate(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for (n, batch) in [(256usize, 1usize), (384, 1)] {
        let elems = n * n;
        let a = random_elements(&mut rng, elems * batch);
        let b = random_elements(&mut rng, elems * batch);
        let flops = 8 * (n as u64).pow(3) * batch as u64;
        let mut group = c.benchmark_group(format!("zgemm n={n} batch={batch}"));
        group.throughput(Throughput::Elements(flops));
        group.sample_size(20);

        let mut out = vec![Complex64::new(0.0, 0.0); elems * batch];
        group.bench_function(BenchmarkId::new("faer", n), |bench| {
            bench.iter(|| product(&mut out, &a, &b, n, Par::rayon(0)))
        });
        host_backend_line(&mut group, n, batch, &a, &b);
        group.finish();
    }
}

criterion_group!(benches, gemm_rate, batched_rate);
criterion_main!(benches);
