//! Any valid spin mapping, on random shapes, with both accumulation schemes and with packed and
//! unpacked nodes, equals the reference.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

use std::sync::Arc;

use hadron::{
    Accumulation, Contraction, Engine, HadronNode, NodeShape, SpinMapping, Term, reference,
};
use memhc_core::{Config, Runtime};
use memhc_host::host::HostBackend;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Case {
    a_spins: usize,
    b_spins: usize,
    out_spins: usize,
    terms: Vec<Term>,
    m: usize,
    k: usize,
    n: usize,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        1usize..7,
        1usize..7,
        1usize..7,
        1usize..7,
        1usize..7,
        1usize..7,
        any::<u64>(),
    )
        .prop_flat_map(|(a_spins, b_spins, out_spins, m, k, n, seed)| {
            let term =
                (0..out_spins, 0..a_spins, 0..b_spins).prop_map(|(o, a, b)| Term::new(o, a, b));
            proptest::collection::vec(term, 1..24).prop_map(move |mut terms| {
                let mut seen = std::collections::HashSet::new();
                terms.retain(|t| seen.insert(*t));
                Case {
                    a_spins,
                    b_spins,
                    out_spins,
                    terms,
                    m,
                    k,
                    n,
                    seed,
                }
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_valid_mapping_matches_the_reference(c in case(), packing in any::<bool>(), temporaries in any::<bool>()) {
        let mapping = Arc::new(SpinMapping::new(c.out_spins, c.terms.clone()).unwrap());
        let x = HadronNode::random(&NodeShape::new(c.a_spins, &[c.m, c.k]).unwrap(), c.seed);
        let y = HadronNode::random(&NodeShape::new(c.b_spins, &[c.k, c.n]).unwrap(), c.seed ^ 1);
        let config = Config { packing, ..Config::default() };
        let accumulation = if temporaries { Accumulation::Temporaries } else { Accumulation::Layered };
        let mut e = Engine::new(Runtime::new(HostBackend::new(16 << 20), config).unwrap())
            .with_accumulation(accumulation);
        let (a, b) = (e.register(x.clone()).unwrap(), e.register(y.clone()).unwrap());
        let out = e.contract(0, &Contraction::new(a, b, mapping.clone())).unwrap();
        let got = e.read(out).unwrap();
        let want = reference::contract(&x, &y, Default::default(), Default::default(), &mapping).unwrap();
        let err = reference::relative_error(&got, &want);
        prop_assert!(err <= 1e-12, "relative error {err:e}");
        e.runtime().audit().map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
}
