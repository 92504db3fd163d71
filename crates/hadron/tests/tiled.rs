//! Tiled nodes (a node of `g²` spin components of one matrix shape kept on the device as one
//! matrix of `g x g` tiles): which nodes the runtime tiles, the one GEMM of a layered block
//! product, and every mix of tiled and packed operands (non-square tiles, baryon views,
//! sparse mappings, both accumulation schemes, traces), each against the independent
//! reference.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

use std::sync::Arc;

use hadron::{
    Accumulation, Contraction, Engine, HadronNode, MatrixView, NodeShape, SpinMapping, Term,
    TracePairs, reference,
};
use memhc_core::{Config, Mode, ObjectId, Runtime};
use memhc_host::host::HostBackend;
use memhc_host::null::NullBackend;

const TOL: f64 = 1e-12;

fn engine(config: Config, accumulation: Accumulation) -> Engine<HostBackend> {
    let rt = Runtime::new(HostBackend::new(256 << 20), config).unwrap();
    Engine::new(rt).with_accumulation(accumulation)
}

fn tiled<B: memhc_core::Backend>(e: &Engine<B>, id: ObjectId) -> bool {
    e.runtime().layout(id).unwrap().tiles().is_some()
}

/// Contracts `x` and `y` through `views` with `mapping` and checks against the reference;
/// returns the BLAS calls the contraction made.
fn check(
    e: &mut Engine<HostBackend>,
    (x, y): (&HadronNode, &HadronNode),
    views: (MatrixView, MatrixView),
    mapping: &Arc<SpinMapping>,
    what: &str,
) -> u64 {
    let a = e.register(x.clone()).unwrap();
    let b = e.register(y.clone()).unwrap();
    let before = e.runtime().stats().gemm_calls;
    let c = Contraction::new(a, b, mapping.clone()).with_views(views.0, views.1);
    let out = e.contract(0, &c).unwrap();
    let calls = e.runtime().stats().gemm_calls - before;
    let got = e.read(out).unwrap();
    let want = reference::contract(x, y, views.0, views.1, mapping).unwrap();
    let err = reference::relative_error(&got, &want);
    assert!(err <= TOL, "{what}: relative error {err:e}");
    e.runtime().audit().unwrap();
    calls
}

#[test]
fn square_spin_grids_of_matrices_are_tiled_where_the_runtime_can_keep_them() {
    let meson = HadronNode::random(&NodeShape::meson(3).unwrap(), 1);
    let four = HadronNode::random(&NodeShape::new(4, &[2, 5]).unwrap(), 2);
    let baryon = HadronNode::random(&NodeShape::new(16, &[2, 2, 2]).unwrap(), 3);
    let odd = HadronNode::random(&NodeShape::new(3, &[2, 2]).unwrap(), 4);
    let mut e = engine(Config::default(), Accumulation::Layered);
    let ids: Vec<_> = [&meson, &four, &baryon, &odd]
        .into_iter()
        .map(|n| e.register(n.clone()).unwrap())
        .collect();
    let got: Vec<bool> = ids.iter().map(|&id| tiled(&e, id)).collect();
    assert_eq!(got, [true, true, false, false]);
    // Unpacked objects and managed memory keep the packed layout; so does a backend without
    // tiled copies. The null backend has them.
    let unpacked = Config {
        packing: false,
        ..Config::default()
    };
    for config in [unpacked, Config::for_mode(Mode::Unified)] {
        let mut e = engine(config, Accumulation::Layered);
        let id = e.register(meson.clone()).unwrap();
        assert!(!tiled(&e, id));
    }
    let rt = Runtime::new(NullBackend::new(1 << 20), Config::default()).unwrap();
    let mut e = Engine::new(rt);
    let id = e.register(meson.clone()).unwrap();
    assert!(tiled(&e, id));
}

#[test]
fn a_layered_block_product_of_tiled_nodes_is_one_gemm() {
    let mapping = Arc::new(SpinMapping::meson4x4());
    let unpacked = Config {
        packing: false,
        ..Config::default()
    };
    for n in [1, 2, 7, 16] {
        let shape = NodeShape::meson(n).unwrap();
        let (x, y) = (HadronNode::random(&shape, 5), HadronNode::random(&shape, 6));
        let v = Default::default();
        let mut e = engine(Config::default(), Accumulation::Layered);
        assert_eq!(check(&mut e, (&x, &y), v, &mapping, "tiled"), 1, "N={n}");
        // Unpacked, the layers: four batches.
        let mut e = engine(unpacked.clone(), Accumulation::Layered);
        assert_eq!(check(&mut e, (&x, &y), v, &mapping, "unpacked"), 4, "N={n}");
    }
    // Non-square tiles: A's 4 x 3 against B's 3 x 5, every node tiled, still one GEMM.
    let (sa, sb) = (
        NodeShape::new(16, &[4, 3]).unwrap(),
        NodeShape::new(16, &[3, 5]).unwrap(),
    );
    let (x, y) = (HadronNode::random(&sa, 7), HadronNode::random(&sb, 8));
    let mut e = engine(Config::default(), Accumulation::Layered);
    let v = Default::default();
    assert_eq!(check(&mut e, (&x, &y), v, &mapping, "4x3 by 3x5"), 1);
    // A 3 x 3 block product of 9-spin nodes.
    let mut terms = Vec::new();
    for (a, b, g) in (0..27).map(|i| (i / 9, (i / 3) % 3, i % 3)) {
        terms.push(Term::new(3 * a + g, 3 * a + b, 3 * b + g));
    }
    let three = Arc::new(SpinMapping::new(9, terms).unwrap());
    let s9 = NodeShape::new(9, &[4, 4]).unwrap();
    let (x, y) = (HadronNode::random(&s9, 9), HadronNode::random(&s9, 10));
    assert_eq!(check(&mut e, (&x, &y), v, &three, "3x3 grid"), 1);
}

#[test]
fn tiled_and_packed_operands_mix_in_every_mapping_and_scheme() {
    let meson4x4 = Arc::new(SpinMapping::meson4x4());
    let sparse = Arc::new(
        SpinMapping::new(
            16,
            vec![
                Term::new(0, 5, 1),
                Term::new(0, 2, 2),
                Term::new(7, 7, 7),
                Term::new(15, 0, 3),
                Term::new(3, 15, 0),
            ],
        )
        .unwrap(),
    );
    let diagonal = Arc::new(SpinMapping::diagonal(16).unwrap());
    let (n, none) = (3, MatrixView::default());
    let meson = NodeShape::meson(n).unwrap();
    // A baryon B (16 spins of N x N x N, packed) seen as N x N²: the output's 16 components
    // are N x N², tiled with non-square tiles, from a tiled A and a packed B.
    let baryon = NodeShape::new(16, &[n, n, n]).unwrap();
    let cases = [
        (&meson, &meson, none, &meson4x4, "meson4x4"),
        (&meson, &meson, none, &sparse, "sparse"),
        (&meson, &meson, none, &diagonal, "diagonal"),
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
            "sparse, baryon",
        ),
    ];
    for acc in [Accumulation::Layered, Accumulation::Temporaries] {
        let mut e = engine(Config::default(), acc);
        for (i, (sa, sb, bv, mapping, what)) in cases.iter().enumerate() {
            let x = HadronNode::random(sa, 20 + i as u64);
            let y = HadronNode::random(sb, 40 + i as u64);
            check(
                &mut e,
                (&x, &y),
                (none, *bv),
                mapping,
                &format!("{what} {acc:?}"),
            );
        }
    }
}

#[test]
fn traces_of_tiled_nodes_match_the_reference() {
    let mut e = engine(Config::default(), Accumulation::Layered);
    let n = 5;
    let meson = NodeShape::meson(n).unwrap();
    let (x, y) = (HadronNode::random(&meson, 1), HadronNode::random(&meson, 2));
    let (a, b) = (
        e.register(x.clone()).unwrap(),
        e.register(y.clone()).unwrap(),
    );
    assert!(tiled(&e, a) && tiled(&e, b));
    let sparse = TracePairs::new(vec![(0, 0), (1, 4), (6, 9), (15, 3)]).unwrap();
    for pairs in [TracePairs::meson4x4(), sparse] {
        let before = e.runtime().stats().gemm_calls;
        let got = e.trace(0, a, b, &pairs).unwrap();
        assert_eq!(
            e.runtime().stats().gemm_calls - before,
            1,
            "a trace is one call"
        );
        let want = reference::trace(&x, &y, &pairs).unwrap();
        assert!((got - want).norm() <= TOL * want.norm(), "{got} vs {want}");
    }
    // A tiled A (16 spins of 2 x 3) against a packed B (2 spins of 3 x 2).
    let (sa, sb) = (
        NodeShape::new(16, &[2, 3]).unwrap(),
        NodeShape::new(2, &[3, 2]).unwrap(),
    );
    let (p, q) = (HadronNode::random(&sa, 3), HadronNode::random(&sb, 4));
    let (pa, qb) = (
        e.register(p.clone()).unwrap(),
        e.register(q.clone()).unwrap(),
    );
    assert!(tiled(&e, pa) && !tiled(&e, qb));
    let pairs = TracePairs::new(vec![(0, 1), (5, 0), (15, 1)]).unwrap();
    let got = e.trace(0, pa, qb, &pairs).unwrap();
    let want = reference::trace(&p, &q, &pairs).unwrap();
    assert!((got - want).norm() <= TOL * want.norm(), "{got} vs {want}");
    e.runtime().audit().unwrap();
}
