//! The plan's promises, checked against real runs on the host backend: every predicted
//! statistic is what a real run makes, at the plan's budget, for every policy and mode; at the
//! least budget without eviction a real run evicts nothing and one byte less evicts; at the
//! least budget that runs a real run completes and one byte less fails.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

use memhc_core::{Mode, PolicyKind};
use memhc_host::host::HostBackend;
use memhc_workload::run::{RunSpec, run};
use memhc_workload::{Dist, PlanSpec, Prediction, SynthParams, Workload, generate, plan};
use proptest::prelude::*;

/// A real run's specification (no verification: the counts are what is compared).
fn real(policy: PolicyKind, mode: Mode, budget: usize, streams: usize) -> RunSpec {
    RunSpec::new(policy, mode, budget, streams)
}

/// Plans `w` at `oversub` for every policy and mode, then runs each on the host backend.
fn check_plan_against_real_runs(w: &Workload, oversub: f64, streams: usize) {
    let a = w.analyse().unwrap();
    let peak = memhc_workload::run::peak_without_eviction(w, &a).unwrap();
    let budget = ((peak as f64) / (1.0 + oversub)).floor() as usize;
    let modes: Vec<Mode> = Mode::ALL.into_iter().chain([Mode::Unified]).collect();
    let spec = PlanSpec {
        policies: PolicyKind::ALL.to_vec(),
        modes,
        budget,
        streams,
    };
    let p = plan(w, &a, &spec).unwrap();
    assert_eq!(p.peak_without_eviction, peak);
    for m in &p.modes {
        assert!(m.least_budget_without_eviction <= m.peak_bytes);
        for pp in &m.policies {
            let label = format!("{} / {} at {budget} bytes", pp.policy, m.mode);
            let spec = real(pp.policy, m.mode, budget, streams);
            let got = run(HostBackend::new(budget), w, &a, &spec, &mut |_| {});
            match (&pp.prediction, got) {
                (Prediction::Runs(predicted), Ok(outcome)) => {
                    assert_eq!(*predicted, outcome.stats, "{label}");
                }
                (Prediction::DoesNotFit { .. }, Err(_)) => {}
                (want, got) => panic!(
                    "{label}: predicted {want:?}, got {:?}",
                    got.map(|o| o.stats)
                ),
            }
            assert!(
                pp.least_budget <= m.least_budget_without_eviction,
                "{label}"
            );
        }
    }
}

/// The least budgets, checked with real runs on the host backend for one policy per mode.
fn check_least_budgets(w: &Workload, streams: usize) {
    let a = w.analyse().unwrap();
    let modes: Vec<Mode> = Mode::ALL.into_iter().chain([Mode::Unified]).collect();
    let spec = PlanSpec {
        policies: vec![PolicyKind::Lru, PolicyKind::Belady],
        modes,
        budget: 1 << 30,
        streams,
    };
    let p = plan(w, &a, &spec).unwrap();
    for m in &p.modes {
        let go = |policy, budget: usize| {
            run(
                HostBackend::new(budget),
                w,
                &a,
                &real(policy, m.mode, budget, streams),
                &mut |_| {},
            )
        };
        let none = m.least_budget_without_eviction;
        let at = go(PolicyKind::Lru, none).unwrap();
        assert_eq!(at.stats.evictions, 0, "{}", m.mode);
        if let Ok(below) = go(PolicyKind::Lru, none - 1) {
            assert!(below.stats.evictions > 0, "{}: one byte less", m.mode);
        }
        for pp in &m.policies {
            let label = format!("{} / {}", pp.policy, m.mode);
            assert!(go(pp.policy, pp.least_budget).is_ok(), "{label}");
            assert!(go(pp.policy, pp.least_budget - 1).is_err(), "{label}");
        }
    }
}

fn small(seed: u64, repeat: f64, dist: Dist) -> Workload {
    generate(&SynthParams {
        tensor_size: 3,
        vector_size: 4,
        vectors: 6,
        repeat,
        dist,
        seed,
    })
    .unwrap()
}

#[test]
fn predictions_are_what_real_runs_make() {
    for (oversub, streams) in [(0.0, 4), (0.5, 4), (1.5, 1), (3.0, 2)] {
        check_plan_against_real_runs(&small(1, 0.5, Dist::Uniform), oversub, streams);
    }
}

#[test]
fn least_budgets_are_the_boundaries_of_real_runs() {
    check_least_budgets(&small(2, 0.5, Dist::Gaussian), 4);
    check_least_budgets(&small(3, 0.0, Dist::Uniform), 1);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Any small generated queue, any oversubscription, any number of streams.
    #[test]
    fn predictions_hold_on_random_queues(
        seed in any::<u64>(),
        r8 in 0usize..=8,
        vector_size in 1usize..6,
        vectors in 1usize..6,
        oversub in 0.0f64..3.0,
        streams in 1usize..5,
    ) {
        let w = generate(&SynthParams {
            tensor_size: 2,
            vector_size,
            vectors,
            repeat: r8 as f64 / 8.0,
            dist: Dist::Uniform,
            seed,
        })
        .unwrap();
        check_plan_against_real_runs(&w, oversub, streams);
    }
}
