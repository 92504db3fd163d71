//! The MemHC paper's Fig. 6, on the runtime itself: six equal-sized host-backed objects, room
//! for four, one launch per object use.
//!
//! (a) (A,B,C,D) then (E,F,A,B): LRU evicts four times (A, B, then C, D to bring A, B back).
//! (b) the same under pre-protected LRU: A and B are protected, only C and D are evicted.
//! (c) (A,B,C,D) then (E,F,C,D) under pre-protected LRU: only A and B are evicted.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use common::*;
use memhc_core::{Config, ObjectId, PolicyKind, Runtime};
use memhc_host::host::HostBackend;

/// Runs the two vectors; returns the runtime and the six ids A..F.
fn run(policy: PolicyKind, second: [usize; 4]) -> (Runtime<HostBackend>, Vec<ObjectId>) {
    let l = square(1, 4);
    let config = Config::default()
        .with_budget(4 * l.bytes())
        .with_policy(policy);
    let mut rt = Runtime::new(HostBackend::new(1 << 20), config).unwrap();
    let mut g = rng(6);
    let ids: Vec<_> = (0..6)
        .map(|_| rt.register(random(&mut g, l), l).unwrap())
        .collect();
    for vector in [[0, 1, 2, 3], second] {
        let members: Vec<_> = vector.iter().map(|&i| ids[i]).collect();
        rt.begin_vector(&members).unwrap();
        for m in members {
            touch(&mut rt, &[m]).unwrap();
            rt.audit().unwrap();
        }
    }
    (rt, ids)
}

const EFAB: [usize; 4] = [4, 5, 0, 1];
const EFCD: [usize; 4] = [4, 5, 2, 3];

#[test]
fn fig6a_lru_evicts_four_times() {
    let (rt, _) = run(PolicyKind::Lru, EFAB);
    let s = rt.stats();
    assert_eq!(s.evictions, 4);
    assert_eq!((s.hits, s.misses), (0, 8));
}

#[test]
fn fig6b_pre_protected_lru_evicts_twice() {
    let (rt, ids) = run(PolicyKind::PpLru, EFAB);
    let s = rt.stats();
    assert_eq!(s.evictions, 2);
    assert_eq!((s.hits, s.misses), (2, 6));
    let resident: Vec<bool> = ids.iter().map(|&id| rt.is_resident(id)).collect();
    assert_eq!(
        resident,
        [true, true, false, false, true, true],
        "C and D evicted"
    );
}

#[test]
fn fig6c_pre_protected_lru_evicts_exactly_a_and_b() {
    let (rt, ids) = run(PolicyKind::PpLru, EFCD);
    assert_eq!(rt.stats().evictions, 2);
    let resident: Vec<bool> = ids.iter().map(|&id| rt.is_resident(id)).collect();
    assert_eq!(
        resident,
        [false, false, true, true, true, true],
        "A and B evicted"
    );
}

#[test]
fn fig6_belady_matches_the_optimum() {
    // With the future known, MIN also needs only two evictions on (E,F,A,B).
    let l = square(1, 4);
    let mut rt = Runtime::new(
        HostBackend::new(1 << 20),
        Config::default()
            .with_budget(4 * l.bytes())
            .with_policy(PolicyKind::Belady),
    )
    .unwrap();
    let mut g = rng(6);
    let ids: Vec<_> = (0..6)
        .map(|_| rt.register(random(&mut g, l), l).unwrap())
        .collect();
    let order: Vec<_> = [0, 1, 2, 3, 4, 5, 0, 1].iter().map(|&i| ids[i]).collect();
    rt.set_future(&order).unwrap();
    for id in order {
        touch(&mut rt, &[id]).unwrap();
    }
    assert_eq!(rt.stats().evictions, 2);
    rt.audit().unwrap();
}
