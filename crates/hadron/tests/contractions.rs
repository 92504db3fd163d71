//! Contractions and traces on the runtime against the independent reference: every kind of
//! mapping, both accumulation schemes, packed and unpacked nodes, unified memory, baryon-style
//! views, sizes that are not powers of two, chains, vectors on several streams, every eviction
//! policy under memory pressure, FLOP accounting, and the errors of bad input.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

use std::sync::Arc;

use hadron::{
    Accumulation, Contraction, Engine, HadronError, HadronNode, MatrixView, NodeShape, Operand,
    SpinMapping, Term, TracePairs, reference,
};
use memhc_core::{Config, Mode, PolicyKind, Runtime};
use memhc_host::host::HostBackend;

const TOL: f64 = 1e-12;

fn engine(config: Config, accumulation: Accumulation) -> Engine<HostBackend> {
    let rt = Runtime::new(HostBackend::new(256 << 20), config).unwrap();
    Engine::new(rt).with_accumulation(accumulation)
}

fn variants() -> Vec<(Config, Accumulation)> {
    let unpacked = Config {
        packing: false,
        ..Config::default()
    };
    vec![
        (Config::default(), Accumulation::Layered),
        (Config::default(), Accumulation::Temporaries),
        (unpacked.clone(), Accumulation::Layered),
        (unpacked, Accumulation::Temporaries),
        (Config::for_mode(Mode::Unified), Accumulation::Layered),
        (Config::for_mode(Mode::Unified), Accumulation::Temporaries),
    ]
}

/// Contracts `x` and `y` on the engine and checks the result against the reference.
fn check(
    e: &mut Engine<HostBackend>,
    x: &HadronNode,
    y: &HadronNode,
    views: (MatrixView, MatrixView),
    mapping: &Arc<SpinMapping>,
    what: &str,
) -> f64 {
    let a = e.register(x.clone()).unwrap();
    let b = e.register(y.clone()).unwrap();
    let c = Contraction::new(a, b, mapping.clone()).with_views(views.0, views.1);
    let out = e.contract(0, &c).unwrap();
    let got = e.read(out).unwrap();
    let want = reference::contract(x, y, views.0, views.1, mapping).unwrap();
    let err = reference::relative_error(&got, &want);
    assert!(err <= TOL, "{what}: relative error {err:e}");
    e.runtime().audit().unwrap();
    err
}

#[test]
fn meson4x4_at_sizes_that_are_not_powers_of_two() {
    let mapping = Arc::new(SpinMapping::meson4x4());
    for (config, acc) in variants() {
        let mut e = engine(config.clone(), acc);
        for n in [1, 3, 17, 24] {
            let shape = NodeShape::meson(n).unwrap();
            let (x, y) = (
                HadronNode::random(&shape, n as u64),
                HadronNode::random(&shape, 100 + n as u64),
            );
            check(
                &mut e,
                &x,
                &y,
                Default::default(),
                &mapping,
                &format!("meson4x4 N={n} {acc:?} packed={}", config.packing),
            );
        }
    }
}

#[test]
fn regular_irregular_sparse_and_rectangular_mappings() {
    let diag = Arc::new(SpinMapping::diagonal(5).unwrap());
    // Sparse and irregular: outputs 1 and 4 get no term (they must come out zero), output 2 gets
    // three terms, inputs are reused across outputs.
    let sparse = Arc::new(
        SpinMapping::new(
            5,
            vec![
                Term::new(2, 0, 3),
                Term::new(0, 4, 4),
                Term::new(2, 1, 1),
                Term::new(3, 0, 0),
                Term::new(2, 4, 0),
            ],
        )
        .unwrap(),
    );
    // A regular pattern with a zero step (the same A for every item): strided with stride 0.
    let fan = Arc::new(SpinMapping::new(4, (0..4).map(|s| Term::new(s, 2, s)).collect()).unwrap());
    for (config, acc) in variants() {
        let mut e = engine(config.clone(), acc);
        let what = format!("{acc:?} packed={}", config.packing);
        // Rectangular components: A 5 spins of 7 x 3, B 5 spins of 3 x 11.
        let sa = NodeShape::new(5, &[7, 3]).unwrap();
        let sb = NodeShape::new(5, &[3, 11]).unwrap();
        let (x, y) = (HadronNode::random(&sa, 1), HadronNode::random(&sb, 2));
        check(
            &mut e,
            &x,
            &y,
            Default::default(),
            &diag,
            &format!("diagonal {what}"),
        );
        check(
            &mut e,
            &x,
            &y,
            Default::default(),
            &sparse,
            &format!("sparse {what}"),
        );
        check(
            &mut e,
            &x,
            &y,
            Default::default(),
            &fan,
            &format!("fan {what}"),
        );
    }
}

#[test]
fn baryon_components_through_matrix_views() {
    let n = 5;
    let baryon = NodeShape::new(4, &[n, n, n]).unwrap();
    let meson = NodeShape::new(4, &[n, n]).unwrap();
    let diag = Arc::new(SpinMapping::diagonal(4).unwrap());
    let cross = Arc::new(
        SpinMapping::new(
            2,
            vec![Term::new(0, 0, 1), Term::new(0, 3, 2), Term::new(1, 2, 0)],
        )
        .unwrap(),
    );
    for (config, acc) in variants() {
        let mut e = engine(config.clone(), acc);
        let what = format!("{acc:?} packed={}", config.packing);
        let (x, y, z) = (
            HadronNode::random(&baryon, 3),
            HadronNode::random(&baryon, 4),
            HadronNode::random(&meson, 5),
        );
        // (N² x N) (N x N): a baryon's last index contracted with a meson.
        check(
            &mut e,
            &x,
            &z,
            (MatrixView::split(2), MatrixView::split(1)),
            &diag,
            &format!("N²xN·NxN {what}"),
        );
        // (N x N²) (N² x N): two baryons, two indices contracted.
        check(
            &mut e,
            &x,
            &y,
            (MatrixView::split(1), MatrixView::split(2)),
            &cross,
            &format!("NxN²·N²xN {what}"),
        );
    }
}

#[test]
fn chains_feed_outputs_into_later_contractions_across_streams() {
    let n = 9;
    let shape = NodeShape::meson(n).unwrap();
    let mapping = Arc::new(SpinMapping::meson4x4());
    for (config, acc) in variants() {
        let mut e = engine(config.with_streams(3), acc);
        let inputs: Vec<_> = (0..3).map(|i| HadronNode::random(&shape, 40 + i)).collect();
        let ids: Vec<_> = inputs
            .iter()
            .map(|x| e.register(x.clone()).unwrap())
            .collect();
        let (mut acc_id, mut acc_val) = (ids[0], inputs[0].clone());
        for step in 1..7 {
            let k = step % 3;
            let c = Contraction::new(acc_id, ids[k], mapping.clone());
            let out = e.contract(step % 3, &c).unwrap(); // each step on another stream
            acc_val = reference::contract(
                &acc_val,
                &inputs[k],
                Default::default(),
                Default::default(),
                &mapping,
            )
            .unwrap();
            if step > 1 {
                e.release(acc_id).unwrap(); // released while the next step may still read it
            }
            acc_id = out;
        }
        let got = e.read(acc_id).unwrap();
        let err = reference::relative_error(&got, &acc_val);
        assert!(err <= 1e-11, "{acc:?}: chain relative error {err:e}");
        e.runtime().audit().unwrap();
    }
}

/// Vectors of contractions on four streams, with a device budget that holds only a few nodes:
/// every policy evicts and writes back, and every output still equals the reference.
#[test]
fn vectors_under_memory_pressure_with_every_policy() {
    let n = 6;
    let shape = NodeShape::meson(n).unwrap();
    let node_bytes = shape.layout().unwrap().bytes();
    let mapping = Arc::new(SpinMapping::meson4x4());
    let inputs: Vec<_> = (0..8).map(|i| HadronNode::random(&shape, 70 + i)).collect();
    for policy in PolicyKind::ALL {
        for acc in [Accumulation::Layered, Accumulation::Temporaries] {
            // One contraction at a time must fit: with temporaries, 2 inputs, the output and a
            // 64-component scratch (4 nodes' worth). Sixteen outputs that are never released
            // cannot all stay: dirty outputs must be written back, whatever the policy.
            let budget = 8 * node_bytes;
            let config = Config::default()
                .with_budget(budget)
                .with_policy(policy)
                .with_streams(4);
            let mut e = engine(config, acc);
            let ids: Vec<_> = inputs
                .iter()
                .map(|x| e.register(x.clone()).unwrap())
                .collect();
            let mut expected = Vec::new();
            let mut outs = Vec::new();
            for v in 0..4 {
                let pairs: Vec<(usize, usize)> = (0..4)
                    .map(|i| ((v + i) % 8, (3 * v + 2 * i + 1) % 8))
                    .collect();
                let vector: Vec<_> = pairs
                    .iter()
                    .map(|&(p, q)| Contraction::new(ids[p], ids[q], mapping.clone()))
                    .collect();
                outs.extend(e.run_vector(&vector).unwrap());
                for &(p, q) in &pairs {
                    expected.push(
                        reference::contract(
                            &inputs[p],
                            &inputs[q],
                            Default::default(),
                            Default::default(),
                            &mapping,
                        )
                        .unwrap(),
                    );
                }
                e.runtime().audit().unwrap();
            }
            let s = e.runtime().stats();
            assert!(
                s.evictions > 0 && s.writebacks > 0,
                "{policy} {acc:?}: {s:?}"
            );
            for (i, (&out, want)) in outs.iter().zip(&expected).enumerate() {
                let got = e.read(out).unwrap();
                let err = reference::relative_error(&got, want);
                assert!(
                    err <= TOL,
                    "{policy} {acc:?} output {i}: relative error {err:e}"
                );
            }
        }
    }
}

#[test]
fn traces_match_the_reference() {
    let mapping = Arc::new(SpinMapping::meson4x4());
    for (config, acc) in variants() {
        let mut e = engine(config, acc);
        for n in [2, 13] {
            let shape = NodeShape::meson(n).unwrap();
            let (x, y) = (HadronNode::random(&shape, 7), HadronNode::random(&shape, 8));
            let (a, b) = (
                e.register(x.clone()).unwrap(),
                e.register(y.clone()).unwrap(),
            );
            let out = e
                .contract(0, &Contraction::new(a, b, mapping.clone()))
                .unwrap();
            let got = e.trace(1, out, b, &TracePairs::meson4x4()).unwrap();
            let ab = reference::contract(&x, &y, Default::default(), Default::default(), &mapping)
                .unwrap();
            let want = reference::trace(&ab, &y, &TracePairs::meson4x4()).unwrap();
            assert!(
                (got - want).norm() <= TOL * want.norm(),
                "N={n}: {got} vs {want}"
            );
            // Rectangular: A m x k against B k x m.
            let sa = NodeShape::new(2, &[3, 8]).unwrap();
            let sb = NodeShape::new(3, &[8, 3]).unwrap();
            let (p, q) = (HadronNode::random(&sa, 9), HadronNode::random(&sb, 10));
            let (pa, qb) = (
                e.register(p.clone()).unwrap(),
                e.register(q.clone()).unwrap(),
            );
            let pairs = TracePairs::new(vec![(0, 2), (1, 0), (1, 1)]).unwrap();
            let got = e.trace(0, pa, qb, &pairs).unwrap();
            let want = reference::trace(&p, &q, &pairs).unwrap();
            assert!((got - want).norm() <= TOL * want.norm());
        }
        e.runtime().audit().unwrap();
    }
}

#[test]
fn baryon_traces_through_matrix_views() {
    // A (2 spins of 3 x 4 x 5) seen as 3 x 20, B (2 spins of 4 x 5 x 3) seen as 20 x 3:
    // Σ_pairs Σ_(i,j,k) A[a][i, j, k] B[b][j, k, i], against plain index loops.
    let (sa, sb) = (
        NodeShape::new(2, &[3, 4, 5]).unwrap(),
        NodeShape::new(2, &[4, 5, 3]).unwrap(),
    );
    let (x, y) = (HadronNode::random(&sa, 21), HadronNode::random(&sb, 22));
    let pairs = TracePairs::new(vec![(0, 1), (1, 1), (1, 0)]).unwrap();
    let mut want = num_complex::Complex64::new(0.0, 0.0);
    for &(pa, pb) in pairs.pairs() {
        let (xa, yb) = (x.component(pa), y.component(pb));
        for i in 0..3 {
            for j in 0..4 {
                for k in 0..5 {
                    want += xa[[i, j, k]] * yb[[j, k, i]];
                }
            }
        }
    }
    let (v1, v2) = (MatrixView::split(1), MatrixView::split(2));
    let r = reference::trace_with_views(&x, v1, &y, v2, &pairs).unwrap();
    assert!((r - want).norm() <= TOL * want.norm(), "{r} vs {want}");
    for (config, acc) in variants() {
        let mut e = engine(config, acc);
        let (a, b) = (
            e.register(x.clone()).unwrap(),
            e.register(y.clone()).unwrap(),
        );
        let got = e.trace_with_views(0, a, v1, b, v2, &pairs).unwrap();
        assert!((got - want).norm() <= TOL * want.norm(), "{got} vs {want}");
        // The other orientation is the same trace: B (20 x 3) against A (3 x 20).
        let swapped =
            TracePairs::new(pairs.pairs().iter().map(|&(p, q)| (q, p)).collect()).unwrap();
        let got = e.trace_with_views(1, b, v2, a, v1, &swapped).unwrap();
        assert!((got - want).norm() <= TOL * want.norm(), "{got} vs {want}");
        // Views that do not chain are refused.
        assert!(matches!(
            e.trace_with_views(0, a, v2, b, v2, &pairs),
            Err(HadronError::ShapeMismatch(_))
        ));
        e.runtime().audit().unwrap();
    }
}

#[test]
fn flops_are_counted_per_product_term() {
    let n = 10;
    let shape = NodeShape::meson(n).unwrap();
    let mapping = Arc::new(SpinMapping::meson4x4());
    for acc in [Accumulation::Layered, Accumulation::Temporaries] {
        let mut e = engine(Config::default(), acc);
        let a = e.register(HadronNode::random(&shape, 1)).unwrap();
        let b = e.register(HadronNode::random(&shape, 2)).unwrap();
        let c = Contraction::new(a, b, mapping.clone());
        let plan = e.sizes(&c).unwrap();
        e.contract(0, &c).unwrap();
        assert_eq!(e.runtime().stats().flops, 64 * 8 * (n * n * n) as u64);
        assert_eq!(plan.flops(&mapping), 64 * 8 * (n * n * n) as u64);
    }
}

#[test]
fn bad_input_gets_clear_errors() {
    let mut e = engine(Config::default(), Accumulation::Layered);
    let meson = NodeShape::meson(4).unwrap();
    let small = NodeShape::new(4, &[4, 4]).unwrap();
    let odd = NodeShape::new(16, &[5, 4]).unwrap();
    let a = e.register(HadronNode::random(&meson, 1)).unwrap();
    let s = e.register(HadronNode::random(&small, 2)).unwrap();
    let o = e.register(HadronNode::random(&odd, 3)).unwrap();
    let mapping = Arc::new(SpinMapping::meson4x4());
    // meson4x4 needs 16 spins of B; its first term beyond B's 4 spins uses B[4].
    assert!(matches!(
        e.contract(0, &Contraction::new(a, s, mapping.clone())),
        Err(HadronError::SpinOutOfRange {
            operand: Operand::B,
            index: 4,
            spins: 4
        })
    ));
    // 4 columns of A against 5 rows of B.
    let err = e
        .contract(0, &Contraction::new(a, o, mapping.clone()))
        .unwrap_err();
    assert!(
        matches!(&err, HadronError::ShapeMismatch(m) if m.contains("4 columns against 5 rows")),
        "{err}"
    );
    // A split that a rank-2 component does not have.
    assert!(matches!(
        e.contract(
            0,
            &Contraction::new(a, a, mapping.clone())
                .with_views(MatrixView::split(2), MatrixView::default())
        ),
        Err(HadronError::BadView { split: 2, rank: 2 })
    ));
    // Output aliasing an input; output of the wrong shape.
    assert!(matches!(
        e.contract_into(0, &Contraction::new(a, a, mapping.clone()), a),
        Err(HadronError::OutputIsInput(_))
    ));
    assert!(matches!(
        e.contract_into(0, &Contraction::new(a, a, mapping.clone()), o),
        Err(HadronError::ShapeMismatch(_))
    ));
    // Traces: indices and shapes.
    assert!(matches!(
        e.trace(0, a, s, &TracePairs::meson4x4()),
        Err(HadronError::SpinOutOfRange { .. })
    ));
    assert!(matches!(
        e.trace(0, o, o, &TracePairs::new(vec![(0, 0)]).unwrap()),
        Err(HadronError::ShapeMismatch(_))
    ));
    // A node released or never made here.
    e.release(s).unwrap();
    assert!(matches!(e.read(s), Err(HadronError::UnknownNode(_))));
    // Nothing above left anything behind.
    e.runtime().audit().unwrap();
    assert_eq!(e.runtime().object_count(), 2);
}

/// With the future given through `Engine::uses`, Belady misses less than LRU on a queue of
/// contractions whose inputs recur.
#[test]
fn belady_plans_a_contraction_queue() {
    let shape = NodeShape::meson(4).unwrap();
    let node = shape.layout().unwrap().bytes();
    let mapping = Arc::new(SpinMapping::meson4x4());
    let inputs: Vec<_> = (0..6).map(|i| HadronNode::random(&shape, i)).collect();
    let queue: Vec<(usize, usize)> = (0..24).map(|i| (i % 6, (i * 5 + 1) % 6)).collect();
    let misses = |policy: PolicyKind| {
        let config = Config::default().with_budget(5 * node).with_policy(policy);
        let mut e = engine(config, Accumulation::Layered);
        let ids: Vec<_> = inputs
            .iter()
            .map(|x| e.register(x.clone()).unwrap())
            .collect();
        let outs: Vec<_> = queue
            .iter()
            .map(|_| e.create(shape.clone()).unwrap())
            .collect();
        let cs: Vec<_> = queue
            .iter()
            .map(|&(p, q)| Contraction::new(ids[p], ids[q], mapping.clone()))
            .collect();
        let future: Vec<_> = cs
            .iter()
            .zip(&outs)
            .flat_map(|(c, &o)| Engine::<HostBackend>::uses(c, o))
            .collect();
        e.runtime_mut().set_future(&future).unwrap();
        for (c, &o) in cs.iter().zip(&outs) {
            e.contract_into(0, c, o).unwrap();
        }
        e.runtime().audit().unwrap();
        e.runtime().stats().misses
    };
    let (lru, belady) = (misses(PolicyKind::Lru), misses(PolicyKind::Belady));
    // 42 against 56 on this queue: the plan is used, not merely accepted.
    assert!(belady < lru, "belady {belady} misses, lru {lru}");
}
