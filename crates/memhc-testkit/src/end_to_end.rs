//! End-to-end fixtures: the runtime, the hadron engine and the synthetic runner on a backend,
//! every result compared with the independent `hadron` reference.
//!
//! A backend's `tests/end_to_end.rs` invokes [`backend_end_to_end_tests!`](crate::backend_end_to_end_tests) with a closure that
//! builds the backend for a budget (`None`: the backend's default). The fixtures take the same
//! closure, so a backend that cannot be built here (no GPU) skips each test with its reason,
//! exactly as the conformance suite does.

use std::fmt;
use std::sync::Arc;

use hadron::{
    Accumulation, Contraction, Engine, HadronNode, MatrixView, NodeShape, SpinMapping, Term,
    TracePairs, reference,
};
use memhc_core::{Backend, Config, Mode, PolicyKind, Runtime};
use memhc_workload::run::{Outcome, RunSpec, peak_without_eviction, run};
use memhc_workload::{SynthParams, generate};

use crate::conformance::{Check, Failure, TOLERANCE, obtain};

fn fail(what: impl fmt::Display) -> Failure {
    Failure(what.to_string())
}

/// Meson contractions through the engine, in both accumulation schemes, with full (4x4) and
/// diagonal spin mappings at several sizes (1 to 64, odd ones included), each compared with
/// the reference; the runtime's audit is clean after each.
pub fn hadron_contractions_match_the_reference<B: Backend>(backend: B) -> Check {
    let rt = Runtime::new(backend, Config::default()).map_err(fail)?;
    let mut engine = Engine::new(rt);
    let meson = Arc::new(SpinMapping::meson4x4());
    let diagonal = Arc::new(SpinMapping::diagonal(4).map_err(fail)?);
    for acc in [Accumulation::Layered, Accumulation::Temporaries] {
        engine = engine.with_accumulation(acc);
        for (n, mapping) in [
            (1, &meson),
            (17, &meson),
            (33, &diagonal),
            (48, &meson),
            (64, &meson),
        ] {
            let shape = NodeShape::meson(n).map_err(fail)?;
            let seed = n as u64;
            let (x, y) = (
                HadronNode::random(&shape, seed),
                HadronNode::random(&shape, 1000 + seed),
            );
            let a = engine.register(x.clone()).map_err(fail)?;
            let b = engine.register(y.clone()).map_err(fail)?;
            let out = engine
                .contract(0, &Contraction::new(a, b, mapping.clone()))
                .map_err(|e| fail(format!("contract N={n} {acc:?}: {e}")))?;
            let got = engine.read(out).map_err(fail)?;
            let want = reference::contract(
                &x,
                &y,
                MatrixView::default(),
                MatrixView::default(),
                mapping,
            )
            .map_err(fail)?;
            let err = reference::relative_error(&got, &want);
            if err > TOLERANCE {
                return Err(fail(format!("{acc:?} N={n}: relative error {err:e}")));
            }
            engine
                .runtime()
                .audit()
                .map_err(|e| fail(format!("audit: {e}")))?;
            for id in [a, b, out] {
                engine.release(id).map_err(fail)?;
            }
        }
    }
    Ok(())
}

/// Tiled nodes (issue 30) on the backend, against the reference: a layered meson4x4
/// contraction is one BLAS call where the backend keeps meson nodes tiled (four where it does
/// not); non-square tiles; a tiled meson against a packed baryon seen as `N x N²`, with the
/// block product and a sparse mapping, in both accumulation schemes; and a trace of two tiled
/// nodes. The runtime's audit is clean after each.
pub fn tiled_nodes_match_the_reference<B: Backend>(backend: B) -> Check {
    let rt = Runtime::new(backend, Config::default()).map_err(fail)?;
    let mut engine = Engine::new(rt);
    let meson4x4 = Arc::new(SpinMapping::meson4x4());
    let sparse = Arc::new(
        SpinMapping::new(
            16,
            vec![
                Term::new(0, 5, 1),
                Term::new(0, 2, 2),
                Term::new(7, 7, 7),
                Term::new(15, 0, 3),
            ],
        )
        .map_err(fail)?,
    );
    let n = 5;
    let shape = |spins, dims: &[usize]| NodeShape::new(spins, dims).map_err(fail);
    let (meson, wide, narrow) = (
        shape(16, &[n, n])?,
        shape(16, &[3, n])?,
        shape(16, &[n, 2])?,
    );
    let baryon = shape(16, &[n, n, n])?;
    let none = MatrixView::default();
    let cases = [
        (&meson, &meson, none, &meson4x4, "meson4x4"),
        (&wide, &narrow, none, &meson4x4, "3 x 5 by 5 x 2 tiles"),
        (
            &meson,
            &baryon,
            MatrixView::split(1),
            &meson4x4,
            "meson by baryon",
        ),
        (
            &meson,
            &baryon,
            MatrixView::split(1),
            &sparse,
            "sparse, meson by baryon",
        ),
    ];
    for acc in [Accumulation::Layered, Accumulation::Temporaries] {
        engine = engine.with_accumulation(acc);
        for (i, (sa, sb, b_view, mapping, what)) in cases.iter().enumerate() {
            let x = HadronNode::random(sa, 10 + i as u64);
            let y = HadronNode::random(sb, 20 + i as u64);
            let a = engine.register(x.clone()).map_err(fail)?;
            let b = engine.register(y.clone()).map_err(fail)?;
            let before = engine.runtime().stats().gemm_calls;
            let c = Contraction::new(a, b, Arc::clone(mapping)).with_views(none, *b_view);
            let out = engine
                .contract(0, &c)
                .map_err(|e| fail(format!("contract {what} {acc:?}: {e}")))?;
            let calls = engine.runtime().stats().gemm_calls - before;
            let tiled = engine.runtime().layout(a).map_err(fail)?.tiles().is_some();
            if i == 0 && acc == Accumulation::Layered {
                let want = if tiled { 1 } else { 4 };
                if calls != want {
                    return Err(fail(format!(
                        "meson4x4 (tiled: {tiled}): {calls} BLAS calls, expected {want}"
                    )));
                }
            }
            let got = engine.read(out).map_err(fail)?;
            let want = reference::contract(&x, &y, none, *b_view, mapping).map_err(fail)?;
            let err = reference::relative_error(&got, &want);
            if err > TOLERANCE {
                return Err(fail(format!("{what} {acc:?}: relative error {err:e}")));
            }
            engine
                .runtime()
                .audit()
                .map_err(|e| fail(format!("audit: {e}")))?;
            for id in [a, b, out] {
                engine.release(id).map_err(fail)?;
            }
        }
    }
    let (x, y) = (HadronNode::random(&meson, 1), HadronNode::random(&meson, 2));
    let a = engine.register(x.clone()).map_err(fail)?;
    let b = engine.register(y.clone()).map_err(fail)?;
    let got = engine
        .trace(0, a, b, &TracePairs::meson4x4())
        .map_err(fail)?;
    let want = reference::trace(&x, &y, &TracePairs::meson4x4()).map_err(fail)?;
    if (got - want).norm() > TOLERANCE * want.norm() {
        return Err(fail(format!("trace of tiled nodes: {got} against {want}")));
    }
    Ok(())
}

/// A small synthetic queue: 12 vectors of 8 meson contractions at N = 16, repeated rate 1/2.
pub fn small_synthetic_params() -> SynthParams {
    SynthParams {
        tensor_size: 16,
        vector_size: 8,
        vectors: 12,
        repeat: 0.5,
        ..SynthParams::default()
    }
}

/// Runs [`small_synthetic_params`] on a backend built by `make` for a budget of the no-eviction
/// peak divided by `1 + oversub`, on 3 streams, with every result verified against the
/// reference, prefetching `prefetch` object uses ahead (`None`: off). When `oversub > 0` and
/// the mode caches, the run must have evicted. Returns the outcome, or `None` when `make`
/// cannot build a backend here (the test is skipped).
pub fn synthetic_run<B, E, F>(
    test: &str,
    make: F,
    mode: Mode,
    policy: PolicyKind,
    oversub: f64,
    prefetch: Option<usize>,
) -> Result<Option<Outcome>, Failure>
where
    B: Backend,
    E: fmt::Display,
    F: FnOnce(Option<usize>) -> Result<B, E>,
{
    let workload = generate(&small_synthetic_params()).map_err(fail)?;
    let analysis = workload.analyse().map_err(fail)?;
    let peak = peak_without_eviction(&workload, &analysis).map_err(fail)?;
    let budget = (peak as f64 / (1.0 + oversub)) as usize;
    let Some(backend) = obtain(test, || make(Some(peak))) else {
        return Ok(None);
    };
    let spec = RunSpec {
        policy,
        mode,
        budget,
        streams: 3,
        verify: true,
        alloc: None,
        reuse_tolerance_percent: 0,
        prefetch,
        // The runs that prefetch also take the direct data path (host memory of the backend,
        // early read-back): every fixture then covers both paths.
        pinned: prefetch.is_some() && mode != Mode::Unified,
    };
    let outcome = run(backend, &workload, &analysis, &spec, &mut |_| {})
        .map_err(|e| fail(format!("{test}: {e}")))?;
    let err = outcome.max_rel_error.unwrap_or(f64::INFINITY);
    if err > TOLERANCE {
        return Err(fail(format!("{test}: relative error {err:e}")));
    }
    if oversub > 0.0 && mode != Mode::Naive && outcome.stats.evictions == 0 {
        return Err(fail(format!("{test}: nothing was evicted")));
    }
    Ok(Some(outcome))
}

/// Every mode (the four explicit ones, and unified memory where the backend has managed
/// memory), everything fitting, with LRU.
pub fn synthetic_runs_in_every_mode<B, E, F>(make: F) -> Check
where
    B: Backend,
    E: fmt::Display,
    F: Fn(Option<usize>) -> Result<B, E>,
{
    for mode in Mode::ALL.into_iter().chain([Mode::Unified]) {
        let test = format!("synthetic {mode} lru");
        if mode == Mode::Unified {
            match obtain(&test, || make(None)) {
                Some(b) if b.supports_managed() => {}
                Some(b) => {
                    eprintln!("SKIPPED {test}: {} has no managed memory", b.name());
                    continue;
                }
                None => continue,
            }
        }
        synthetic_run(&test, &make, mode, PolicyKind::Lru, 0.0, None)?;
    }
    Ok(())
}

/// LRU, pre-protected LRU and Belady in the optimal mode, at twice the data the budget holds,
/// and pre-protected LRU in the naive mode at the same budget; LRU and Belady again with
/// prefetch (six uses ahead) and asynchronous write-back, which must have prefetched.
pub fn oversubscribed_synthetic_runs<B, E, F>(make: F) -> Check
where
    B: Backend,
    E: fmt::Display,
    F: Fn(Option<usize>) -> Result<B, E>,
{
    for (mode, policy) in [
        (Mode::Optimal, PolicyKind::Lru),
        (Mode::Optimal, PolicyKind::PpLru),
        (Mode::Optimal, PolicyKind::Belady),
        (Mode::Naive, PolicyKind::PpLru),
    ] {
        let test = format!("synthetic {mode} {policy} oversubscribed");
        synthetic_run(&test, &make, mode, policy, 1.0, None)?;
    }
    for policy in [PolicyKind::Lru, PolicyKind::Belady] {
        let test = format!("synthetic optimal {policy} oversubscribed with prefetch");
        if let Some(o) = synthetic_run(&test, &make, Mode::Optimal, policy, 1.0, Some(6))?
            && (o.stats.prefetches == 0 || o.stats.prefetch_hits == 0)
        {
            return Err(fail(format!(
                "{test}: {} prefetches, {} prefetch hits",
                o.stats.prefetches, o.stats.prefetch_hits
            )));
        }
    }
    Ok(())
}

/// Generates the end-to-end tests for a backend: `$make` is a closure from a budget
/// (`Option<usize>`, `None` for the backend's default) to `Result<B, E: Display>`; an error
/// skips the test with its reason. See the [module documentation](crate::end_to_end).
#[macro_export]
macro_rules! backend_end_to_end_tests {
    ($make:expr) => {
        #[test]
        fn hadron_contractions_match_the_reference() {
            if let Some(b) =
                $crate::conformance::obtain("hadron_contractions_match_the_reference", || {
                    ($make)(None)
                })
                && let Err(failure) = $crate::end_to_end::hadron_contractions_match_the_reference(b)
            {
                panic!("{failure}");
            }
        }

        #[test]
        fn tiled_nodes_match_the_reference() {
            if let Some(b) =
                $crate::conformance::obtain("tiled_nodes_match_the_reference", || ($make)(None))
                && let Err(failure) = $crate::end_to_end::tiled_nodes_match_the_reference(b)
            {
                panic!("{failure}");
            }
        }

        #[test]
        fn synthetic_runs_in_every_mode_match_the_reference() {
            if let Err(failure) = $crate::end_to_end::synthetic_runs_in_every_mode($make) {
                panic!("{failure}");
            }
        }

        #[test]
        fn oversubscribed_synthetic_runs_match_the_reference() {
            if let Err(failure) = $crate::end_to_end::oversubscribed_synthetic_runs($make) {
                panic!("{failure}");
            }
        }
    };
}
