//! End to end on the HIP backend: hadron contractions through the runtime against the
//! independent reference, and a small synthetic queue under memory pressure with every result
//! verified. Each test prints `SKIPPED: <why>` and passes when the backend cannot be
//! constructed (no ROCm, no AMD GPU).

use std::sync::Arc;

use hadron::{Accumulation, Contraction, Engine, HadronNode, NodeShape, SpinMapping, reference};
use memhc_core::{Config, Mode, PolicyKind, Runtime};
use memhc_hip::HipBackend;
use memhc_synth::run::{RunSpec, peak_without_eviction, run};
use memhc_synth::{SynthParams, generate};

/// The backend with `budget` bytes, or `None` after printing why the test is skipped.
fn backend(test: &str, budget: usize) -> Option<HipBackend> {
    match HipBackend::with_budget(budget) {
        Ok(b) => {
            eprintln!("{test}: on {}", memhc_core::Backend::name(&b));
            Some(b)
        }
        Err(e) => {
            eprintln!("SKIPPED: {test}: {e}");
            None
        }
    }
}

#[test]
fn meson_contractions_match_the_reference() {
    let mapping = Arc::new(SpinMapping::meson4x4());
    for acc in [Accumulation::Layered, Accumulation::Temporaries] {
        let Some(b) = backend("meson_contractions_match_the_reference", 256 << 20) else {
            return;
        };
        let rt = Runtime::new(b, Config::default()).unwrap_or_else(|e| panic!("runtime: {e}"));
        let mut engine = Engine::new(rt).with_accumulation(acc);
        for n in [1, 17, 64] {
            let shape = NodeShape::meson(n).unwrap_or_else(|e| panic!("shape: {e}"));
            let (x, y) = (
                HadronNode::random(&shape, n as u64),
                HadronNode::random(&shape, 1000 + n as u64),
            );
            let a = engine.register(x.clone()).unwrap_or_else(|e| panic!("{e}"));
            let bb = engine.register(y.clone()).unwrap_or_else(|e| panic!("{e}"));
            let out = engine
                .contract(0, &Contraction::new(a, bb, mapping.clone()))
                .unwrap_or_else(|e| panic!("contract N={n} {acc:?}: {e}"));
            let got = engine.read(out).unwrap_or_else(|e| panic!("read: {e}"));
            let want =
                reference::contract(&x, &y, Default::default(), Default::default(), &mapping)
                    .unwrap_or_else(|e| panic!("reference: {e}"));
            let err = reference::relative_error(&got, &want);
            assert!(err <= 1e-12, "N={n} {acc:?}: relative error {err:e}");
        }
        engine
            .runtime()
            .audit()
            .unwrap_or_else(|e| panic!("audit: {e}"));
    }
}

#[test]
fn a_synthetic_queue_under_memory_pressure_verifies() {
    let params = SynthParams {
        tensor_size: 16,
        vector_size: 4,
        vectors: 6,
        repeat: 0.5,
        ..SynthParams::default()
    };
    let workload = generate(&params).unwrap_or_else(|e| panic!("generate: {e}"));
    let analysis = workload
        .analyse()
        .unwrap_or_else(|e| panic!("analyse: {e}"));
    let peak = peak_without_eviction(&workload, &analysis).unwrap_or_else(|e| panic!("peak: {e}"));
    for (policy, mode) in [
        (PolicyKind::Lru, Mode::Optimal),
        (PolicyKind::PpLru, Mode::Naive),
        (PolicyKind::Belady, Mode::Optimal),
    ] {
        // Half the peak: with caching on, the runtime must evict to finish.
        let spec = RunSpec {
            policy,
            mode,
            budget: peak / 2,
            streams: 2,
            verify: true,
        };
        let Some(b) = backend("a_synthetic_queue_under_memory_pressure_verifies", peak) else {
            return;
        };
        let outcome = run(b, &workload, &analysis, &spec, &mut |_| {})
            .unwrap_or_else(|e| panic!("{policy}/{mode}: {e}"));
        let err = outcome.max_rel_error.unwrap_or(f64::INFINITY);
        assert!(err <= 1e-10, "{policy}/{mode}: relative error {err:e}");
        if mode == Mode::Optimal {
            // The cache holds more than half the peak, so it must evict (naive keeps nothing).
            assert!(
                outcome.stats.evictions > 0,
                "{policy}/{mode}: nothing was evicted"
            );
        }
    }
}
