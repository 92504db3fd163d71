//! A small fixed synthetic workload on the host backend, `optimal` against `naive` in the same
//! run (MemHC Fig. 8's two ends): 20 vectors of 8 meson4x4 contractions at N = 32, repeated rate
//! 1/2, everything fitting on the "device" (oversubscription 0).
//!
//! Throughput is in flops, so `Gelem/s` reads as GFLOPS; the ratio of the two lines is the
//! speedup of all of MemHC's optimisations over the naive explicit scheme on this backend. The
//! time measured is the run's own wall time (vectors, traces, reading the results back), not
//! the generation of the input values.

#![allow(missing_docs, clippy::expect_used)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memhc::{Mode, PolicyKind};
use memhc_host::host::HostBackend;
use memhc_synth::run::{RunSpec, peak_without_eviction, run};
use memhc_synth::{SynthParams, generate};

fn optimal_against_naive(c: &mut Criterion) {
    let params = SynthParams {
        tensor_size: 32,
        vector_size: 8,
        vectors: 20,
        repeat: 0.5,
        ..SynthParams::default()
    };
    let workload = generate(&params).expect("workload");
    let analysis = workload.analyse().expect("analysis");
    let budget = peak_without_eviction(&workload, &analysis).expect("peak");
    let mut group = c.benchmark_group("synthetic N=32 vsize=8 vectors=20 repeat=0.5");
    group.throughput(Throughput::Elements(analysis.contraction_flops));
    group.sample_size(10);
    for mode in [Mode::Optimal, Mode::Naive] {
        let spec = RunSpec {
            policy: PolicyKind::Lru,
            mode,
            budget,
            streams: 4,
            verify: false,
            alloc: None,
            reuse_tolerance_percent: 0,
            prefetch: None,
            pinned: false,
        };
        // Timed: the run itself (vectors, traces, reading the results), as `wall_s` reports it,
        // not the generation of the nodes' random values before it.
        group.bench_function(mode.name(), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let o = run(
                            HostBackend::new(budget),
                            &workload,
                            &analysis,
                            &spec,
                            &mut |_| {},
                        )
                        .expect("run");
                        std::time::Duration::from_secs_f64(o.wall_s)
                    })
                    .sum()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, optimal_against_naive);
criterion_main!(benches);
