//! The hadron and synthetic end-to-end paths on the CUDA backend, against the independent
//! reference: contractions in every accumulation scheme and mapping kind, and whole synthetic
//! runs in every mode (unified memory included), fitting and oversubscribed. Each test prints `SKIPPED` and the reason
//! when this machine has no usable NVIDIA GPU.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use hadron::{
    Accumulation, Contraction, Engine, HadronNode, MatrixView, NodeShape, SpinMapping, reference,
};
use memhc_core::{Config, Mode, PolicyKind, Runtime};
use memhc_synth::run::{RunSpec, peak_without_eviction, run};
use memhc_synth::{SynthParams, generate};

const TOL: f64 = 1e-12;

#[test]
fn hadron_contractions_match_the_reference() {
    let Some(backend) = common::backend_or_skip("hadron_contractions_match_the_reference") else {
        return;
    };
    let name = {
        use memhc_core::Backend;
        backend.name()
    };
    println!("on {name}");
    let rt = Runtime::new(backend, Config::default()).unwrap();
    let mut engine = Engine::new(rt);
    for acc in [Accumulation::Layered, Accumulation::Temporaries] {
        engine = engine.with_accumulation(acc);
        for (n, mapping) in [
            (48, SpinMapping::meson4x4()),
            (33, SpinMapping::diagonal(4).unwrap()),
            (64, SpinMapping::meson4x4()),
        ] {
            let shape = NodeShape::meson(n).unwrap();
            let (x, y) = (HadronNode::random(&shape, 7), HadronNode::random(&shape, 8));
            let mapping = Arc::new(mapping);
            let a = engine.register(x.clone()).unwrap();
            let b = engine.register(y.clone()).unwrap();
            let c = Contraction::new(a, b, mapping.clone());
            let out = engine.contract(0, &c).unwrap();
            let got = engine.read(out).unwrap();
            let want = reference::contract(
                &x,
                &y,
                MatrixView::default(),
                MatrixView::default(),
                &mapping,
            )
            .unwrap();
            let err = reference::relative_error(&got, &want);
            assert!(err <= TOL, "{acc:?} N={n}: relative error {err:e}");
            engine.runtime().audit().unwrap();
            for id in [a, b, out] {
                engine.release(id).unwrap();
            }
        }
    }
}

fn synthetic(mode: Mode, policy: PolicyKind, oversub: f64) {
    let test = format!("synthetic {mode} {policy:?} oversub {oversub}");
    let Some(backend) = common::backend_or_skip(&test) else {
        return;
    };
    let params = SynthParams {
        tensor_size: 48,
        vector_size: 8,
        vectors: 12,
        repeat: 0.5,
        ..SynthParams::default()
    };
    let workload = generate(&params).unwrap();
    let analysis = workload.analyse().unwrap();
    let peak = peak_without_eviction(&workload, &analysis).unwrap();
    let spec = RunSpec {
        policy,
        mode,
        budget: (peak as f64 / (1.0 + oversub)) as usize,
        streams: 4,
        verify: true,
    };
    let outcome = run(backend, &workload, &analysis, &spec, &mut |_| {}).unwrap();
    let err = outcome.max_rel_error.unwrap();
    assert!(err <= TOL, "{test}: relative error {err:e}");
    if oversub > 0.0 {
        assert!(outcome.stats.evictions > 0, "{test}: nothing was evicted");
    }
    println!(
        "{test}: {:.1} GFLOPS, {:?}",
        outcome.gflops(),
        outcome.stats
    );
}

#[test]
fn synthetic_runs_in_every_mode_match_the_reference() {
    for mode in Mode::ALL.into_iter().chain([Mode::Unified]) {
        synthetic(mode, PolicyKind::Lru, 0.0);
    }
}

#[test]
fn oversubscribed_synthetic_runs_match_the_reference() {
    for policy in [PolicyKind::Lru, PolicyKind::PpLru, PolicyKind::Belady] {
        synthetic(Mode::Optimal, policy, 1.0);
    }
}
