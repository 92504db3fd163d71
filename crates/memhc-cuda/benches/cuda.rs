//! The GPU benchmarks of issue 5, on the CUDA backend. Every figure is meant to be read as a
//! ratio against a baseline measured in the same run (`scripts/gpu-ratios.py` computes them
//! from criterion's estimates). Without a GPU each group prints `SKIPPED` and the reason.
//!
//! * `contraction/N=<n>`: one meson4x4 contraction (16 output spins, 64 products, batch 64) by
//!   the hadron engine (`layered`, `temporaries`) against one `cublasZgemmStridedBatched` of
//!   the same 64 products (`zgemm-strided`). MemHC Fig. 10b: 0.614-0.948 of cuBLAS, mean
//!   0.736; our target is >= 0.95. `zgemm-strided-x4` issues what `layered` issues, without
//!   the runtime: four strided calls of 16 products into the same 16 outputs, the last three
//!   accumulating. Its gap to `zgemm-strided` is the cost of four calls instead of one; the gap
//!   from it to `layered` is the runtime's own. `zgemm-one` is one ZGEMM of order `4N`, the
//!   same flops: what `layered` issues since meson nodes are tiled on the device (issue 30,
//!   `docs/results/2026-11-27-one-gemm-layout.md`), so `layered` against it is the runtime's
//!   cost and `zgemm-one` against `zgemm-strided` the layout's gain. `zgemm3m-one` is that
//!   product with three real products instead of four (`cublasZgemm3m`,
//!   `ComplexGemm::Gauss`), and `layered-gauss` the contraction on a backend opened with it
//!   (`MEMHC_GPU_GEMM=gauss`); both are left out, with a line saying why, where cuBLAS has no
//!   `cublasZgemm3m`.
//! * `fig7/N=<n>/vsize=<v>/repeat=<r>`: the synthetic workload end to end, `optimal` against
//!   `naive` and `unified` (managed memory), at the points of MemHC Fig. 7 (N = 384 and 192,
//!   vector size 16 with repeated rate 0 to 1; vector sizes 1 to 32 at repeated rate 1).
//!   Paper: 2.18-3.62x over unified memory at N = 384, up to 10.73x at N = 192.
//! * `table<k>/...`: oversubscribed runs (budget below the card's memory), `lru`, `pp-lru` and
//!   `belady`, at the parameters of MemHC Tables 1-3 (N = 384; oversubscription 0.5, repeated
//!   rate 1/2, vector sizes 8-64; vector size 64 with oversubscription 0.5-1.5; vector size 64
//!   with repeated rate 0.25-1). Evictions and misses per policy are printed once per point.
//!
//! * `register/bytes=<s>`: a caller's pageable buffer of `s` bytes copied to the device `k`
//!   times (k = 1, 4, 16): staged through page-locked buffers (`staged-xk`, what the backend
//!   does without registration) against registered in place first (`registered-xk`:
//!   `cuMemHostRegister`, `k` DMAs, unregistering, all timed). Where registered beats staged
//!   is the rule `GpuBackend::adopt_pageable` should follow (today's, from the model: at least
//!   8 MiB and 9 copies; issue 29). Throughput is bytes copied: `Gelem/s` reads as GB/s.
//!
//! Throughput is in flops, so criterion's `Gelem/s` reads as GFLOPS. The synthetic groups time
//! a run's own wall time (vectors, traces, results read back), not the generation of its
//! inputs or the opening of the device. `MEMHC_BENCH_VECTORS` sets the vectors per synthetic
//! run (default 20); `MEMHC_BENCH_GROUPS` (comma separated: `contraction`, `register`, `fig7`,
//! `tables`)
//! limits which groups even prepare their inputs (criterion's filter only skips the timing).

#![allow(missing_docs, clippy::expect_used, clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use hadron::{Accumulation, Contraction, Engine, HadronNode, NodeShape, SpinMapping};
use memhc_core::backend::gemm::{DeviceRef, GemmShape, StridedBatch};
use memhc_core::backend::{Backend, as_bytes};
use memhc_core::{BackendError, Config, Mode, PolicyKind, Runtime};
use memhc_cuda::CudaBackend;
use memhc_cuda::{ComplexGemm, GpuOptions};
use memhc_workload::run::{RunSpec, peak_without_eviction, run};
use memhc_workload::{SynthParams, Workload, generate};

/// Whether `MEMHC_BENCH_GROUPS` (unset: all) names `group`.
fn enabled(group: &str) -> bool {
    std::env::var("MEMHC_BENCH_GROUPS").map_or(true, |g| g.split(',').any(|x| x.trim() == group))
}

/// The backend, or `None` after printing why the group is skipped (or that it is not selected).
fn open(group: &str, budget: Option<usize>) -> Option<CudaBackend> {
    if !enabled(group) {
        eprintln!("not selected by MEMHC_BENCH_GROUPS: {group}");
        return None;
    }
    let opened = match budget {
        Some(b) => CudaBackend::with_budget(b),
        None => CudaBackend::new(),
    };
    match opened {
        Ok(b) => Some(b),
        Err(BackendError::Unavailable(reason)) => {
            eprintln!("SKIPPED {group}: {reason}");
            None
        }
        Err(e) => panic!("{group}: the CUDA backend failed to open: {e}"),
    }
}

fn contraction(c: &mut Criterion) {
    let Some(backend) = open("contraction", None) else {
        return;
    };
    eprintln!("device: {}", backend.name());
    let mut engine = Engine::new(Runtime::new(backend, Config::default()).unwrap());
    // A second backend whose one-product GEMMs take three real products (`zgemm3m-one`,
    // `layered-gauss`), where cuBLAS has them.
    let gauss = CudaBackend::with_options(GpuOptions::default().complex_gemm(ComplexGemm::Gauss));
    let mut gauss = match gauss {
        Ok(g) => Some(Engine::new(Runtime::new(g, Config::default()).unwrap())),
        Err(e) => {
            eprintln!("no zgemm3m-one, layered-gauss: {e}");
            None
        }
    };
    for n in [128usize, 192, 256, 384] {
        let shape = NodeShape::meson(n).unwrap();
        let flops = 64 * 8 * (n as u64).pow(3);
        let mut group = c.benchmark_group(format!("contraction/N={n}"));
        group.throughput(Throughput::Elements(flops));
        group.sample_size(30);
        group.warm_up_time(Duration::from_secs(1));
        group.measurement_time(Duration::from_secs(3));
        let x = HadronNode::random(&shape, 1);
        let y = HadronNode::random(&shape, 2);

        // The baseline: 64 independent N x N x N products in one strided call.
        {
            let b = engine.runtime().backend();
            let stream = b.create_stream().unwrap();
            let e = n * n;
            let four = |v: &[num_complex::Complex64]| v.repeat(4);
            let (ab, bb, cb) = (
                b.alloc(64 * e * 16).unwrap(),
                b.alloc(64 * e * 16).unwrap(),
                b.alloc(64 * e * 16).unwrap(),
            );
            b.copy_h2d(&stream, as_bytes(&four(x.as_slice())), &ab, 0)
                .unwrap();
            b.copy_h2d(&stream, as_bytes(&four(y.as_slice())), &bb, 0)
                .unwrap();
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
            group.bench_function("zgemm-strided", |bench| {
                bench.iter(|| {
                    b.gemm_strided_batched(&stream, &gemm, &batch).unwrap();
                    b.stream_synchronize(&stream).unwrap();
                })
            });
            // Four layers of 16 products each, as `layered` issues them: layer `l` multiplies
            // products 16 l .. 16 l + 15 into outputs 0 .. 15, accumulating after the first.
            let layer = |l: usize| StridedBatch {
                a: DeviceRef::new(&ab, 16 * l * e),
                stride_a: e,
                b: DeviceRef::new(&bb, 16 * l * e),
                stride_b: e,
                c: DeviceRef::new(&cb, 0),
                stride_c: e,
                count: 16,
            };
            let layers: Vec<_> = (0..4).map(layer).collect();
            let accumulate = gemm.with_beta(num_complex::Complex64::new(1.0, 0.0));
            group.bench_function("zgemm-strided-x4", |bench| {
                bench.iter(|| {
                    for (l, batch) in layers.iter().enumerate() {
                        let shape = if l == 0 { &gemm } else { &accumulate };
                        b.gemm_strided_batched(&stream, shape, batch).unwrap();
                    }
                    b.stream_synchronize(&stream).unwrap();
                })
            });
            // One product of order 4N (issue 30): the two nodes as whole 4N x 4N matrices, what
            // `layered` issues on tiled nodes (one call, no pointer table).
            let whole = GemmShape::dense(4 * n, 4 * n, 4 * n);
            let one = whole_product(&ab, &bb, &cb);
            group.bench_function("zgemm-one", |bench| {
                bench.iter(|| {
                    b.gemm_strided_batched(&stream, &whole, &one).unwrap();
                    b.stream_synchronize(&stream).unwrap();
                })
            });
            // The same product of order 4N with three real products, on the second backend.
            if let Some(g) = gauss.as_ref().map(|g| g.runtime().backend()) {
                let gs = g.create_stream().unwrap();
                let bytes = 16 * e * 16;
                let (ga, gb, gc) = (
                    g.alloc(bytes).unwrap(),
                    g.alloc(bytes).unwrap(),
                    g.alloc(bytes).unwrap(),
                );
                g.copy_h2d(&gs, as_bytes(x.as_slice()), &ga, 0).unwrap();
                g.copy_h2d(&gs, as_bytes(y.as_slice()), &gb, 0).unwrap();
                let one3m = whole_product(&ga, &gb, &gc);
                group.bench_function("zgemm3m-one", |bench| {
                    bench.iter(|| {
                        g.gemm_strided_batched(&gs, &whole, &one3m).unwrap();
                        g.stream_synchronize(&gs).unwrap();
                    })
                });
                g.stream_synchronize(&gs).unwrap();
                for buf in [ga, gb, gc] {
                    g.free(buf).unwrap();
                }
            }
            b.stream_synchronize(&stream).unwrap();
            for buf in [ab, bb, cb] {
                b.free(buf).unwrap();
            }
        }

        engine = time_contraction(
            &mut group,
            engine,
            (&x, &y),
            &[
                ("layered", Accumulation::Layered),
                ("temporaries", Accumulation::Temporaries),
            ],
        );
        gauss = gauss.map(|g| {
            time_contraction(
                &mut group,
                g,
                (&x, &y),
                &[("layered-gauss", Accumulation::Layered)],
            )
        });
        group.finish();
    }
}

/// One product of the whole `4N x 4N` matrices in `a` and `b` into `c`: a strided batch of
/// one item (what a layered meson contraction issues on tiled nodes).
fn whole_product<'a, M>(a: &'a M, b: &'a M, c: &'a M) -> StridedBatch<'a, M> {
    StridedBatch {
        a: DeviceRef::new(a, 0),
        stride_a: 0,
        b: DeviceRef::new(b, 0),
        stride_b: 0,
        c: DeviceRef::new(c, 0),
        stride_c: 0,
        count: 1,
    }
}

/// Times the meson contraction of `x` and `y` on `engine` under each named accumulation of
/// `runs`, then releases its nodes and gives the engine back.
fn time_contraction(
    group: &mut BenchmarkGroup<'_, WallTime>,
    mut engine: Engine<CudaBackend>,
    (x, y): (&HadronNode, &HadronNode),
    runs: &[(&str, Accumulation)],
) -> Engine<CudaBackend> {
    let a = engine.register(x.clone()).unwrap();
    let b = engine.register(y.clone()).unwrap();
    let out = engine.create(x.shape()).unwrap();
    let contraction = Contraction::new(a, b, Arc::new(SpinMapping::meson4x4()));
    for &(name, acc) in runs {
        engine = engine.with_accumulation(acc);
        group.bench_function(name, |bench| {
            bench.iter(|| {
                engine.contract_into(0, &contraction, out).unwrap();
                engine.runtime_mut().synchronize().unwrap();
            })
        });
    }
    for id in [a, b, out] {
        engine.release(id).unwrap();
    }
    engine
}

fn register(c: &mut Criterion) {
    if !enabled("register") {
        eprintln!("not selected by MEMHC_BENCH_GROUPS: register");
        return;
    }
    // A backend that registers whatever it is offered, so that both ways can be timed at every
    // size and count (the default rule would stage the small ones).
    let always = memhc_cuda::RegisterRule {
        min_bytes: 0,
        min_copies: 0,
    };
    let options = memhc_cuda::GpuOptions {
        register: always,
        ..memhc_cuda::GpuOptions::default()
    };
    let b = match CudaBackend::with_options(options) {
        Ok(b) => b,
        Err(BackendError::Unavailable(reason)) => {
            eprintln!("SKIPPED register: {reason}");
            return;
        }
        Err(e) => panic!("register: the CUDA backend failed to open: {e}"),
    };
    let stream = b.create_stream().unwrap();
    for mib in [1usize, 8, 64] {
        let bytes = mib << 20;
        let dst = b.alloc(bytes).unwrap();
        // Caller memory for registration: pageable, fresh per iteration, touched, not zeros.
        let filled = || -> Vec<u64> {
            (0..bytes / 8)
                .map(|i| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .collect()
        };
        // The staged copies read a complex vector of the same bytes (what callers hold).
        let pageable: Vec<num_complex::Complex64> = (0..bytes / 16)
            .map(|i| num_complex::Complex64::new(i as f64, -(i as f64)))
            .collect();
        let mut group = c.benchmark_group(format!("register/bytes={bytes}"));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(2));
        for copies in [1usize, 4, 16] {
            group.throughput(Throughput::Elements((bytes * copies) as u64));
            group.bench_function(format!("staged-x{copies}"), |bench| {
                bench.iter(|| {
                    for _ in 0..copies {
                        b.copy_h2d(&stream, as_bytes(&pageable), &dst, 0).unwrap();
                    }
                    b.stream_synchronize(&stream).unwrap();
                })
            });
            group.bench_function(format!("registered-x{copies}"), |bench| {
                bench.iter_batched(
                    filled,
                    |memory| {
                        let host = b
                            .adopt_host(memory, copies)
                            .unwrap_or_else(|_| panic!("{bytes} bytes were not registered"));
                        for _ in 0..copies {
                            b.copy_h2d_async(&stream, &host, 0, &dst, 0, bytes).unwrap();
                        }
                        b.stream_synchronize(&stream).unwrap();
                        drop(host);
                    },
                    criterion::BatchSize::PerIteration,
                )
            });
        }
        group.finish();
        b.free(dst).unwrap();
    }
}

fn vectors() -> usize {
    std::env::var("MEMHC_BENCH_VECTORS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
}

/// One synthetic point: the workload, its flops and its no-eviction peak.
fn point(tensor_size: usize, vector_size: usize, repeat: f64) -> (Workload, u64, usize) {
    let params = SynthParams {
        tensor_size,
        vector_size,
        vectors: vectors(),
        repeat,
        ..SynthParams::default()
    };
    let w = generate(&params).unwrap();
    let a = w.analyse().unwrap();
    let peak = peak_without_eviction(&w, &a).unwrap();
    (w, a.contraction_flops, peak)
}

/// Times `spec` on `w` (a fresh backend per run, untimed), criterion-style.
fn bench_runs(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    label: &str,
    w: &Workload,
    spec: &RunSpec,
) {
    let a = w.analyse().unwrap();
    let mut printed = false;
    group.bench_function(label, |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let backend = CudaBackend::with_budget(spec.budget).unwrap();
                    let o = run(backend, w, &a, spec, &mut |_| {}).unwrap();
                    if !printed {
                        eprintln!(
                            "{label}: evictions {} misses {} hits {} allocations {} h2d {} B d2h {} B",
                            o.stats.evictions,
                            o.stats.misses,
                            o.stats.hits,
                            o.stats.allocations,
                            o.stats.h2d_bytes,
                            o.stats.d2h_bytes
                        );
                        printed = true;
                    }
                    Duration::from_secs_f64(o.wall_s)
                })
                .sum()
        })
    });
}

fn small_group<'a>(
    c: &'a mut Criterion,
    name: String,
    flops: u64,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(flops));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    group
}

fn fig7(c: &mut Criterion) {
    if open("fig7", None).is_none() {
        return;
    }
    let modes = [Mode::Optimal, Mode::Naive, Mode::Unified];
    let mut points = Vec::new();
    for n in [384usize, 192] {
        for r in [0.0, 0.25, 0.5, 0.75, 1.0] {
            points.push((n, 16, r));
        }
        for v in [1usize, 2, 4, 8, 32] {
            points.push((n, v, 1.0));
        }
    }
    for (n, v, r) in points {
        let (w, flops, peak) = point(n, v, r);
        let mut group = small_group(c, format!("fig7/N={n}/vsize={v}/repeat={r}"), flops);
        for &mode in &modes {
            let spec = RunSpec {
                policy: PolicyKind::Lru,
                mode,
                budget: peak,
                streams: 4,
                verify: false,
                alloc: None,
                reuse_tolerance_percent: 0,
                prefetch: None,
                pinned: false,
            };
            bench_runs(&mut group, mode.name(), &w, &spec);
        }
        group.finish();
    }
}

fn tables(c: &mut Criterion) {
    if open("tables", None).is_none() {
        return;
    }
    let n = 384;
    let mut points = Vec::new();
    for v in [8usize, 16, 32, 64] {
        points.push(("table1", v, 0.5, 0.5));
    }
    for o in [0.5, 1.0, 1.5] {
        points.push(("table2", 64, 0.5, o));
    }
    for r in [0.25, 0.5, 0.75, 1.0] {
        points.push(("table3", 64, r, 0.5));
    }
    for (table, v, r, o) in points {
        let (w, flops, peak) = point(n, v, r);
        let budget = (peak as f64 / (1.0 + o)) as usize;
        let mut group = small_group(
            c,
            format!("{table}/N={n}/vsize={v}/repeat={r}/oversub={o}"),
            flops,
        );
        for policy in [PolicyKind::Lru, PolicyKind::PpLru, PolicyKind::Belady] {
            let spec = RunSpec {
                policy,
                mode: Mode::Optimal,
                budget,
                streams: 4,
                verify: false,
                alloc: None,
                reuse_tolerance_percent: 0,
                prefetch: None,
                pinned: false,
            };
            bench_runs(&mut group, policy.name(), &w, &spec);
        }
        group.finish();
    }
}

criterion_group!(benches, contraction, register, fig7, tables);
criterion_main!(benches);
