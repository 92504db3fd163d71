//! The queue-aware policy is the optimum: on any sequence of equal-sized objects, `belady` has
//! no more misses than any other policy, run by the runtime itself (one launch per object use,
//! vectors announced, the future given to the policy).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use common::{random, rng, square, touch};
use memhc_core::{Config, ObjectId, PolicyKind, Runtime, Stats};
use memhc_host::host::HostBackend;
use proptest::prelude::*;

/// Runs `vectors` (object numbers) with room for `slots` objects; returns the statistics.
fn replay(policy: PolicyKind, slots: usize, objects: usize, vectors: &[Vec<usize>]) -> Stats {
    let l = square(1, 2);
    let config = Config::default()
        .with_budget(slots * l.bytes())
        .with_policy(policy)
        .with_seed(9);
    let mut rt = Runtime::new(HostBackend::new(1 << 20), config).unwrap();
    let mut g = rng(3);
    let ids: Vec<ObjectId> = (0..objects)
        .map(|_| rt.register(random(&mut g, l), l).unwrap())
        .collect();
    let future: Vec<ObjectId> = vectors.iter().flatten().map(|&i| ids[i]).collect();
    rt.set_future(&future).unwrap();
    for v in vectors {
        let members: Vec<_> = v.iter().map(|&i| ids[i]).collect();
        rt.begin_vector(&members).unwrap();
        for m in members {
            touch(&mut rt, &[m]).unwrap();
        }
    }
    rt.audit().unwrap();
    rt.stats()
}

fn trace() -> impl Strategy<Value = (usize, usize, Vec<Vec<usize>>)> {
    (1usize..7, 2usize..16).prop_flat_map(|(slots, objects)| {
        let vector = proptest::collection::btree_set(0..objects, 1..=slots.min(objects).max(1))
            .prop_map(|s| s.into_iter().collect::<Vec<_>>());
        (
            Just(slots),
            Just(objects),
            proptest::collection::vec(vector, 1..30),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn belady_never_misses_more((slots, objects, vectors) in trace()) {
        let best = replay(PolicyKind::Belady, slots, objects, &vectors);
        for policy in PolicyKind::ALL {
            let s = replay(policy, slots, objects, &vectors);
            prop_assert_eq!(s.hits + s.misses, best.hits + best.misses);
            prop_assert!(
                best.misses <= s.misses,
                "{} missed {} times, belady {}", policy, s.misses, best.misses
            );
        }
    }
}

/// On a loop larger than memory (the classic worst case of LRU), Belady keeps most of it.
#[test]
fn belady_beats_lru_on_a_loop() {
    let vectors: Vec<Vec<usize>> = (0..10).map(|_| (0..5).collect()).collect();
    let lru = replay(PolicyKind::Lru, 4, 5, &vectors);
    let belady = replay(PolicyKind::Belady, 4, 5, &vectors);
    assert_eq!(lru.hits, 0, "LRU thrashes on a loop one larger than memory");
    assert!(belady.hits >= 30, "belady hits {}", belady.hits);
}
