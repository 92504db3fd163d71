//! The runtime on `GpuBackend<Fake>`: hadron contractions against the independent reference,
//! and a synthetic queue under memory pressure with every result verified, on a device that
//! runs work only when the runtime waits for it. This is the path a GPU run takes, minus the
//! GPU.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::fake::{Fake, FakeConfig, Progress};
use common::tiny_staging;
use hadron::{Accumulation, Contraction, Engine, HadronNode, NodeShape, SpinMapping, reference};
use memhc_core::{Config, Mode, PolicyKind, Runtime};
use memhc_gpu::{ComplexGemm, GpuBackend, GpuOptions};
use memhc_workload::run::{RunSpec, peak_without_eviction, run};
use memhc_workload::{SynthParams, generate};

/// Contracts random meson nodes of each size in `sizes` (seeds from `seed`) on `engine` and
/// checks each result against the reference to 1e-12.
fn contract_and_check<B: memhc_core::Backend>(
    engine: &mut Engine<B>,
    sizes: &[usize],
    seed: u64,
    what: &str,
) {
    let mapping = Arc::new(SpinMapping::meson4x4());
    for &n in sizes {
        let shape = NodeShape::meson(n).unwrap();
        let (x, y) = (
            HadronNode::random(&shape, seed + n as u64),
            HadronNode::random(&shape, seed + 1000 + n as u64),
        );
        let a = engine.register(x.clone()).unwrap();
        let bb = engine.register(y.clone()).unwrap();
        let out = engine
            .contract(0, &Contraction::new(a, bb, mapping.clone()))
            .unwrap();
        let got = engine.read(out).unwrap();
        let want =
            reference::contract(&x, &y, Default::default(), Default::default(), &mapping).unwrap();
        let err = reference::relative_error(&got, &want);
        assert!(err <= 1e-12, "N={n} {what}: relative error {err:e}");
    }
}

#[test]
fn meson_contractions_match_the_reference() {
    for acc in [Accumulation::Layered, Accumulation::Temporaries] {
        let b = common::backend(
            FakeConfig::default(),
            GpuOptions::default()
                .budget(64 << 20)
                .staging(tiny_staging()),
        );
        let fake = b.api().clone();
        let rt = Runtime::new(b, Config::default()).unwrap();
        let mut engine = Engine::new(rt).with_accumulation(acc);
        contract_and_check(&mut engine, &[1, 17, 33], 0, &format!("{acc:?}"));
        engine.runtime().audit().unwrap();
        drop(engine);
        let v = fake.stats().violations;
        assert!(v.is_empty(), "{v:#?}");
    }
}

/// With `ComplexGemm::Gauss`, a layered meson contraction (tiled nodes: one product of order
/// 4N) is one complex GEMM of three real products, whose rounding (the fake computes it as
/// `cublasZgemm3m` does) stays within 1e-12 of the reference; temporaries' batched calls are
/// computed the standard way.
#[test]
fn three_product_gemms_match_the_reference() {
    for acc in [Accumulation::Layered, Accumulation::Temporaries] {
        let b = common::backend(
            FakeConfig::default(),
            GpuOptions::default()
                .budget(64 << 20)
                .complex_gemm(ComplexGemm::Gauss),
        );
        let fake = b.api().clone();
        let rt = Runtime::new(b, Config::default()).unwrap();
        let mut engine = Engine::new(rt).with_accumulation(acc);
        let sizes = [1, 17, 33];
        contract_and_check(&mut engine, &sizes, 5000, &format!("gauss {acc:?}"));
        let gauss = fake.stats().gauss;
        match acc {
            Accumulation::Layered => assert_eq!(gauss, sizes.len(), "one per contraction"),
            _ => assert_eq!(gauss, 0, "batched calls stay standard"),
        }
        engine.runtime().audit().unwrap();
        drop(engine);
        let v = fake.stats().violations;
        assert!(v.is_empty(), "{v:#?}");
    }
}

/// A device without a three-product GEMM refuses `ComplexGemm::Gauss` when the backend opens.
#[test]
fn gauss_is_refused_where_the_device_has_none() {
    let without = FakeConfig {
        gauss: false,
        ..FakeConfig::default()
    };
    let err = GpuBackend::on(
        Fake::new(without),
        GpuOptions::default().complex_gemm(ComplexGemm::Gauss),
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(err.contains("gauss") && !err.contains('\n'), "{err}");
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
    let workload = generate(&params).unwrap();
    let analysis = workload.analyse().unwrap();
    let peak = peak_without_eviction(&workload, &analysis).unwrap();
    for (policy, mode, progress) in [
        (PolicyKind::Lru, Mode::Optimal, Progress::Lazy),
        (PolicyKind::PpLru, Mode::Naive, Progress::OnQuery),
        (PolicyKind::Belady, Mode::Optimal, Progress::Lazy),
        (PolicyKind::Lru, Mode::Unified, Progress::Lazy),
    ] {
        let spec = RunSpec {
            policy,
            mode,
            // Half the peak: with caching on, the runtime must evict to finish.
            budget: if mode == Mode::Unified {
                peak
            } else {
                peak / 2
            },
            streams: 2,
            verify: true,
            alloc: None,
            reuse_tolerance_percent: 0,
            prefetch: None,
            // Belady's run takes the direct data path: page-locked node data, early read-back.
            pinned: policy == PolicyKind::Belady,
        };
        let fake = Fake::new(FakeConfig {
            progress,
            ..FakeConfig::default()
        });
        let b = GpuBackend::on(fake.clone(), GpuOptions::default().budget(spec.budget)).unwrap();
        let outcome = run(b, &workload, &analysis, &spec, &mut |_| {})
            .unwrap_or_else(|e| panic!("{policy}/{mode}: {e}"));
        let err = outcome.max_rel_error.unwrap_or(f64::INFINITY);
        assert!(err <= 1e-10, "{policy}/{mode}: relative error {err:e}");
        if mode == Mode::Optimal {
            assert!(
                outcome.stats.evictions > 0,
                "{policy}/{mode}: nothing was evicted"
            );
        }
        let v = fake.stats().violations;
        assert!(v.is_empty(), "{policy}/{mode}: {v:#?}");
    }
}

/// The end-to-end fixtures every backend runs (memhc-testkit), on the fake device with copies
/// staged in small pieces: contractions in both accumulation schemes, synthetic runs in every
/// mode (unified memory included), and oversubscribed runs under three policies.
mod shared {
    use std::convert::Infallible;

    use super::common::fake::FakeConfig;
    use super::common::{FakeBackend, backend, tiny_staging};
    use memhc_gpu::GpuOptions;

    fn make(budget: Option<usize>) -> Result<FakeBackend, Infallible> {
        let options = GpuOptions::default().staging(tiny_staging());
        let options = match budget {
            Some(bytes) => options.budget(bytes),
            None => options.budget(256 << 20),
        };
        Ok(backend(FakeConfig::default(), options))
    }

    memhc_testkit::backend_end_to_end_tests!(make);
}
