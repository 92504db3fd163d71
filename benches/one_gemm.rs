//! Issue 30, phase 1: what one GEMM per meson contraction could gain on the host, measured
//! before the layout change.
//!
//! A meson contraction `out[4a+g] = Σ_b A[4a+b] B[4b+g]` (16 spin components of `N x N`) is
//! the product of two `4N x 4N` matrices whose `N x N` blocks are the spin components. For
//! N = 32, 64, 128, one group per N with three lines of the same arithmetic (`64 · 8 N³ =
//! 8 (4N)³` flops):
//!
//! * `contraction`: `Engine::contract_into` on the host backend with inputs and output
//!   resident (all hits after the warm-up), timed to the runtime's `synchronize`: one GEMM of
//!   order `4N` on tiled nodes since phase 2 (before it, four accumulating batched GEMMs of 16
//!   products, one per layer), plus the launch's bookkeeping;
//! * `faer-64-products`: bare faer doing the same 64 `N x N` products as 4 accumulating sets of
//!   16 (set `b`: `out[4a+g] (+)= A[4a+b] B[4b+g]`), each set as the host backend runs a batch
//!   of 16 small products: spread over rayon's threads, each product sequential inside;
//! * `faer-one-product`: bare faer doing one product of order `4N` on rayon's threads
//!   (`Par::rayon(0)`: faer's own parallel split, which the host backend used for this product
//!   before 2026-11-28);
//! * `faer-row-panels` (since 2026-11-28): bare faer doing the same product as the host backend
//!   now runs a large product on several threads: 2 panels of rows per thread, each a
//!   sequential faer product, spread over rayon's threads (`memhc-host`'s `gemm::panels`).
//!
//! All of them use rayon's global pool, all its threads (the host backend's default,
//! `HostBackend::new`). Before measuring, the setup checks that they compute the same numbers
//! (1e-12 relative). Throughput is in flops, so `Gelem/s` reads as GFLOPS.
//! `scripts/one-gemm-table.py` prints the ratios to `faer-64-products` per N from criterion's
//! `estimates.json` files; `docs/results/2026-11-27-one-gemm.md` has the runs. Phase 2 (the
//! tiled layout) compares two builds of this bench: `scripts/one-gemm-layout-runs.sh`,
//! `scripts/one-gemm-layout-table.py`, `docs/results/2026-11-27-one-gemm-layout.md`; the
//! host backend's split into panels (2026-11-28) the same way, with
//! `scripts/one-gemm-layout-host-table.py`, `docs/results/2026-11-28-host-one-gemm.md`.

#![allow(missing_docs, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use memhc::hadron::{Contraction, Engine, HadronNode, NodeShape, SpinMapping};
use memhc::{Config, Runtime};
use memhc_host::host::HostBackend;
use num_complex::Complex64;
use rayon::prelude::*;

/// Spin components of a meson node.
const SPINS: usize = 16;

/// One row-major `n x n` product `c (+)= a b`, as the engine asks it of a column-major BLAS:
/// `cᵀ (+)= bᵀ aᵀ` on the same buffers (see `hadron::rowmajor`).
fn row_major_product(c: &mut [Complex64], a: &[Complex64], b: &[Complex64], n: usize, add: bool) {
    let accum = if add { Accum::Add } else { Accum::Replace };
    matmul(
        MatMut::from_column_major_slice_mut(c, n, n),
        accum,
        MatRef::from_column_major_slice(b, n, n),
        MatRef::from_column_major_slice(a, n, n),
        Complex64::new(1.0, 0.0),
        Par::Seq,
    );
}

/// The 64 products as 4 accumulating sets of 16, each set spread over rayon's threads as the
/// host backend spreads a batch (`with_min_len(items / threads)`, rounded up).
fn sixty_four_products(out: &mut [Complex64], a: &[Complex64], b: &[Complex64], n: usize) {
    let e = n * n;
    let per_task = SPINS.div_ceil(rayon::current_num_threads());
    for layer in 0..4 {
        out.par_chunks_mut(e)
            .enumerate()
            .with_min_len(per_task)
            .for_each(|(s, c)| {
                let (row, col) = (s / 4, s % 4);
                let x = &a[(4 * row + layer) * e..][..e];
                let y = &b[(4 * layer + col) * e..][..e];
                row_major_product(c, x, y, n, layer > 0);
            });
    }
}

/// A node's 16 row-major components as one row-major `4N x 4N` matrix (component `4r+c` is
/// block `(r, c)`).
fn assemble(node: &[Complex64], n: usize) -> Vec<Complex64> {
    let big = 4 * n;
    let mut m = vec![Complex64::new(0.0, 0.0); big * big];
    for s in 0..SPINS {
        let (r, c) = (s / 4, s % 4);
        for i in 0..n {
            let row = &node[s * n * n + i * n..][..n];
            m[(r * n + i) * big + c * n..][..n].copy_from_slice(row);
        }
    }
    m
}

/// The one product of order `4N`, row-major `z = x y` (column-major `zᵀ = yᵀ xᵀ`), on rayon's
/// threads.
fn one_product(z: &mut [Complex64], x: &[Complex64], y: &[Complex64], big: usize) {
    matmul(
        MatMut::from_column_major_slice_mut(z, big, big),
        Accum::Replace,
        MatRef::from_column_major_slice(y, big, big),
        MatRef::from_column_major_slice(x, big, big),
        Complex64::new(1.0, 0.0),
        Par::rayon(0),
    );
}

/// The one product of order `4N` as the host backend runs it since 2026-11-28: two panels of
/// output rows per thread (of the column-major view), each a sequential product, spread over
/// rayon's threads.
fn row_panels(z: &mut [Complex64], x: &[Complex64], y: &[Complex64], big: usize) {
    let count = (2 * rayon::current_num_threads()).min(big / 32).max(1);
    MatMut::from_column_major_slice_mut(z, big, big)
        .par_row_partition_mut(count)
        .zip(MatRef::from_column_major_slice(y, big, big).par_row_partition(count))
        .with_max_len(1)
        .for_each(|(d, l)| {
            matmul(
                d,
                Accum::Replace,
                l,
                MatRef::from_column_major_slice(x, big, big),
                Complex64::new(1.0, 0.0),
                Par::Seq,
            )
        });
}

/// The largest difference between `got` and `want`, relative to the largest `|want|`.
fn rel_error(got: &[Complex64], want: &[Complex64]) -> f64 {
    let scale = want.iter().map(|v| v.norm()).fold(0.0, f64::max);
    let diff = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).norm())
        .fold(0.0, f64::max);
    diff / scale
}

fn one_gemm(c: &mut Criterion) {
    for n in [32usize, 64, 128] {
        let shape = NodeShape::meson(n).expect("shape");
        let node_bytes = shape.layout().expect("layout").bytes();
        let flops = 64 * 8 * (n as u64).pow(3);
        let x = HadronNode::random(&shape, 1);
        let y = HadronNode::random(&shape, 2);
        let (xs, ys) = (x.as_slice(), y.as_slice());

        // The engine, inputs and output resident after the first call.
        let rt =
            Runtime::new(HostBackend::new(8 * node_bytes), Config::default()).expect("runtime");
        let mut engine = Engine::new(rt);
        let a = engine.register(x.clone()).expect("register");
        let b = engine.register(y.clone()).expect("register");
        let out = engine.create(shape.clone()).expect("create");
        let contraction = Contraction::new(a, b, Arc::new(SpinMapping::meson4x4()));
        engine
            .contract_into(0, &contraction, out)
            .expect("contract");
        let by_engine = engine.read(out).expect("read");

        // The same numbers three ways, checked before anything is timed.
        let mut products = vec![Complex64::new(0.0, 0.0); SPINS * n * n];
        sixty_four_products(&mut products, xs, ys, n);
        let big = 4 * n;
        let (bx, by) = (assemble(xs, n), assemble(ys, n));
        let mut bz = vec![Complex64::new(0.0, 0.0); big * big];
        one_product(&mut bz, &bx, &by, big);
        let mut pz = vec![Complex64::new(0.0, 0.0); big * big];
        row_panels(&mut pz, &bx, &by, big);
        let e1 = rel_error(&products, by_engine.as_slice());
        let e2 = rel_error(&bz, &assemble(by_engine.as_slice(), n));
        let e3 = rel_error(&pz, &bz);
        assert!(
            e1 < 1e-12 && e2 < 1e-12 && e3 < 1e-12,
            "N = {n}: {e1:e}, {e2:e}, {e3:e}"
        );

        let mut group = c.benchmark_group(format!("one-gemm N={n}"));
        group.throughput(Throughput::Elements(flops));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(1));
        group.bench_function("contraction", |bench| {
            bench.iter(|| {
                engine
                    .contract_into(0, &contraction, out)
                    .expect("contract");
                engine.runtime_mut().synchronize().expect("sync");
            })
        });
        group.bench_function("faer-64-products", |bench| {
            bench.iter(|| sixty_four_products(&mut products, xs, ys, n))
        });
        group.bench_function("faer-one-product", |bench| {
            bench.iter(|| one_product(&mut bz, &bx, &by, big))
        });
        group.bench_function("faer-row-panels", |bench| {
            bench.iter(|| row_panels(&mut pz, &bx, &by, big))
        });
        group.finish();
    }
}

criterion_group!(benches, one_gemm);
criterion_main!(benches);
