//! The generator's promises (`docs/architecture.md`, "Workloads and metrics"): the repeated
//! share of every vector is exact, no node appears twice in one vector, a seed reproduces a
//! run, r = 0 and r = 1 are valid, the workload it makes is consistent, and `recent:K` draws
//! its repeats from the nodes new in the last K vectors only.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

use std::collections::{HashMap, HashSet};

use memhc_workload::{Dist, SynthParams, generate};
use proptest::prelude::*;

fn dist() -> impl Strategy<Value = Dist> {
    prop_oneof![
        Just(Dist::Uniform),
        Just(Dist::Gaussian),
        (1usize..5).prop_map(Dist::Recent),
    ]
}

fn params() -> impl Strategy<Value = SynthParams> {
    (1usize..9, 1usize..12, 0usize..=8, dist(), any::<u64>()).prop_map(
        |(vs, vectors, r8, dist, seed)| SynthParams {
            tensor_size: 2,
            vector_size: vs,
            vectors,
            repeat: r8 as f64 / 8.0,
            dist,
            seed,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn repeated_share_is_exact_and_vectors_have_no_duplicates(p in params()) {
        let w = generate(&p).unwrap();
        w.analyse().unwrap();
        let slots = 2 * p.vector_size;
        let repeated = (p.repeat * slots as f64).round() as usize;
        prop_assert_eq!(w.vectors.len(), p.vectors);
        // The first `repeated` initial nodes are the history before vector 0.
        let mut history: HashSet<String> = w.nodes.iter().take(repeated).map(|n| n.id.clone()).collect();
        for (v, vector) in w.vectors.iter().enumerate() {
            prop_assert_eq!(vector.len(), p.vector_size);
            let inputs: Vec<&String> = vector.iter().flat_map(|c| [&c.a, &c.b]).collect();
            let distinct: HashSet<&String> = inputs.iter().copied().collect();
            prop_assert_eq!(distinct.len(), slots, "vector {} uses a node twice", v);
            let earlier = inputs.iter().filter(|id| history.contains(**id)).count();
            prop_assert_eq!(earlier, repeated, "vector {}", v);
            history.extend(inputs.into_iter().cloned());
            history.extend(vector.iter().map(|c| c.out.clone()));
        }
        // Results are exactly the outputs never used again.
        let used: HashSet<&str> = w.vectors.iter().flatten().flat_map(|c| [c.a.as_str(), c.b.as_str()]).collect();
        for r in &w.results {
            prop_assert!(!used.contains(r.as_str()));
        }
        let outputs = w.vectors.iter().flatten().filter(|c| !used.contains(c.out.as_str())).count();
        prop_assert_eq!(w.results.len(), outputs);
    }

    #[test]
    fn a_seed_reproduces_a_run(p in params()) {
        prop_assert_eq!(generate(&p).unwrap(), generate(&p).unwrap());
    }

    /// With `recent:K`, every repeated input of vector `v` is among the nodes new in vectors
    /// `v - K .. v` (the initial nodes counting as new before vector 0), or, where those are
    /// fewer than the vector repeats, among the last that many nodes of the history.
    #[test]
    fn recent_repeats_come_from_the_last_k_vectors(
        (p, k) in (params(), 1usize..5).prop_map(|(p, k)| (SynthParams { dist: Dist::Recent(k), ..p }, k))
    ) {
        let w = generate(&p).unwrap();
        let repeated = p.repeated_slots();
        // The history in order of first appearance, and where each vector's new nodes begin.
        let mut position: HashMap<String, usize> = HashMap::new();
        for n in w.nodes.iter().take(repeated) {
            position.insert(n.id.clone(), position.len());
        }
        let mut starts = Vec::new();
        for (v, vector) in w.vectors.iter().enumerate() {
            let len = position.len();
            let from = if v >= k { starts[v - k] } else { 0 };
            let from = usize::min(from, len - repeated);
            starts.push(len);
            let slots = vector.iter().map(|c| &c.a).chain(vector.iter().map(|c| &c.b));
            for id in slots {
                match position.get(id) {
                    Some(&i) => prop_assert!(i >= from, "vector {}: {} at {} < {}", v, id, i, from),
                    None => {
                        position.insert(id.clone(), position.len());
                    }
                }
            }
            for c in vector {
                position.insert(c.out.clone(), position.len());
            }
        }
    }
}

#[test]
fn seeds_and_distributions_matter() {
    let p = SynthParams {
        tensor_size: 2,
        vector_size: 8,
        vectors: 20,
        ..SynthParams::default()
    };
    let other_seed = SynthParams {
        seed: 2,
        ..p.clone()
    };
    let gaussian = SynthParams {
        dist: Dist::Gaussian,
        ..p.clone()
    };
    let recent = SynthParams {
        dist: Dist::Recent(2),
        ..p.clone()
    };
    assert_ne!(generate(&p).unwrap(), generate(&other_seed).unwrap());
    assert_ne!(generate(&p).unwrap(), generate(&gaussian).unwrap());
    assert_ne!(generate(&p).unwrap(), generate(&recent).unwrap());
}

#[test]
fn edge_rates_and_bad_parameters() {
    for repeat in [0.0, 1.0] {
        let p = SynthParams {
            tensor_size: 2,
            vector_size: 4,
            vectors: 6,
            repeat,
            ..SynthParams::default()
        };
        let w = generate(&p).unwrap();
        w.analyse().unwrap();
        // r = 0: every input is new; r = 1: only the 8 warm-up nodes are initial nodes.
        let expected_nodes = if repeat == 0.0 { 6 * 8 } else { 8 };
        assert_eq!(w.nodes.len(), expected_nodes);
    }
    for bad in [
        SynthParams {
            repeat: 1.5,
            ..SynthParams::default()
        },
        SynthParams {
            repeat: -0.1,
            ..SynthParams::default()
        },
        SynthParams {
            vector_size: 0,
            ..SynthParams::default()
        },
        SynthParams {
            tensor_size: 0,
            ..SynthParams::default()
        },
        SynthParams {
            dist: Dist::Recent(0),
            ..SynthParams::default()
        },
    ] {
        let e = generate(&bad).unwrap_err();
        assert!(e.to_string().starts_with("--"), "{e}");
    }
}
