//! Prefetch on whole queues: a run with prefetch gives the reference's results, its
//! statistics are what a dry run of the same queue predicts (so `memhc-synth plan`'s numbers
//! hold with prefetch too), it never holds more than the budget, and with Belady it misses no
//! more than the same run without prefetch.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

use memhc_core::{Mode, PolicyKind};
use memhc_host::host::HostBackend;
use memhc_workload::run::{RunSpec, dry_run, peak_without_eviction, run};
use memhc_workload::{Dist, SynthParams, Workload, generate};
use proptest::prelude::*;

fn workload(seed: u64, tensor_size: usize, vector_size: usize, vectors: usize) -> Workload {
    generate(&SynthParams {
        tensor_size,
        vector_size,
        vectors,
        repeat: 0.5,
        dist: Dist::Uniform,
        seed,
    })
    .unwrap()
}

/// Runs `w` at `oversub` with `policy`, with and without prefetch `window` uses ahead, on the
/// host backend (verified against the reference), and checks each run against its dry run.
/// With `expect_prefetch`, a run with prefetch that evicts must have prefetched something.
fn check(
    w: &Workload,
    oversub: f64,
    streams: usize,
    policy: PolicyKind,
    window: usize,
    expect_prefetch: bool,
) {
    let a = w.analyse().unwrap();
    let peak = peak_without_eviction(w, &a).unwrap();
    let budget = (peak as f64 / (1.0 + oversub)) as usize;
    let mut misses = Vec::new();
    for prefetch in [None, Some(window)] {
        let spec = RunSpec {
            verify: true,
            prefetch,
            ..RunSpec::new(policy, Mode::Optimal, budget, streams)
        };
        let label = format!("{policy} at {oversub}, prefetch {prefetch:?}");
        let predicted = dry_run(w, &a, spec.config());
        let real = run(HostBackend::new(budget), w, &a, &spec, &mut |_| {});
        let (predicted, real) = match (predicted, real) {
            (Ok(p), Ok(r)) => (p, r),
            (Err(_), Err(_)) => return, // does not fit either way
            (p, r) => panic!("{label}: dry run {p:?}, real run {:?}", r.map(|o| o.stats)),
        };
        assert_eq!(predicted, real.stats, "{label}");
        assert!(real.max_rel_error.unwrap() <= 1e-12, "{label}");
        assert!(real.stats.peak_device_bytes <= budget as u64, "{label}");
        misses.push(real.stats.misses);
        if expect_prefetch && prefetch.is_some() && real.stats.evictions > 0 {
            assert!(real.stats.prefetches > 0, "{label}: nothing prefetched");
        }
    }
    if policy == PolicyKind::Belady {
        assert!(misses[1] <= misses[0], "belady: {misses:?} (without, with)");
    }
}

#[test]
fn oversubscribed_runs_with_prefetch_are_right_and_predicted() {
    let w = workload(7, 4, 6, 10);
    for policy in [PolicyKind::Lru, PolicyKind::PpLru, PolicyKind::Belady] {
        for (oversub, streams, window) in [(0.5, 4, 6), (1.5, 2, 3), (3.0, 1, 12)] {
            check(&w, oversub, streams, policy, window, true);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Any small generated queue, oversubscription, number of streams, policy and window.
    #[test]
    fn prefetch_runs_hold_on_random_queues(
        seed in any::<u64>(),
        vector_size in 1usize..6,
        vectors in 1usize..6,
        oversub in 0.0f64..3.0,
        streams in 1usize..5,
        policy in proptest::sample::select(PolicyKind::ALL.to_vec()),
        window in 1usize..10,
    ) {
        // Evicting does not imply that there was anything to prefetch: with a window of one
        // use, the use ahead is the next contraction's first input, which a small queue may
        // always find resident (seed 14189140400630570396, vector size 1, 5 vectors, oversub
        // 0.073: one eviction, nothing to bring in). The fixed queue above checks that
        // prefetch happens.
        check(&workload(seed, 2, vector_size, vectors), oversub, streams, policy, window, false);
    }
}
