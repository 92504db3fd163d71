//! Where device memory comes from: handover, the arena and the reuse tolerance. With objects
//! of one size, the three allocation settings make the same hits, misses, evictions,
//! write-backs and copies, and differ only in where each block comes from; the arena calls the
//! driver once. A launch that splits the arena starts over and loses nothing. Blocks larger
//! than their object (reuse tolerance) or shared with other objects (the arena) are safe:
//! launches refuse operands that leave their object.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use common::*;
use memhc_core::backend::gemm::{GemmItem, GemmShape};
use memhc_core::{Access, Alloc, Config, Error, ObjectId, PolicyKind, Runtime, State, Stats};
use memhc_host::host::HostBackend;

fn runtime(config: Config) -> Runtime<HostBackend> {
    Runtime::new(HostBackend::new(1 << 22), config).unwrap()
}

/// Requests for device memory served, wherever from (in arena mode, the driver allocation is
/// the arena itself, not a request).
fn requests(s: &Stats, arena: bool) -> u64 {
    let driver = if arena { 0 } else { s.allocations };
    driver + s.pool_reuses + s.handovers + s.arena_allocations
}

/// A fixed queue of products of equal-sized objects under a tight budget: the statistics and
/// the final value of every output.
fn pressured(config: Config) -> (Stats, Vec<Vec<memhc_core::Complex64>>) {
    let l = square(2, 3);
    let mut rt = runtime(config.with_budget(5 * l.bytes()).with_streams(2));
    let mut g = rng(21);
    let inputs: Vec<ObjectId> = (0..8)
        .map(|_| rt.register(random(&mut g, l), l).unwrap())
        .collect();
    let mut outputs = Vec::new();
    for i in 0..40usize {
        let (a, b) = (inputs[(i * 5) % 8], inputs[(i * 3 + 1) % 8]);
        let out = rt.create(l).unwrap();
        multiply(&mut rt, i % 2, a, b, out).unwrap();
        outputs.push(out);
        if i % 3 == 0 {
            let gone = outputs.remove(outputs.len() / 2);
            rt.release(gone).unwrap();
        }
        rt.audit().unwrap();
    }
    let values = outputs
        .iter()
        .map(|&o| rt.read(o).unwrap().to_vec())
        .collect();
    rt.audit().unwrap();
    (rt.stats(), values)
}

#[test]
fn equal_sizes_make_the_same_evictions_in_every_allocation_setting() {
    for policy in [PolicyKind::Lru, PolicyKind::Belady, PolicyKind::Car] {
        for lazy in [true, false] {
            let base = Config {
                lazy_release: lazy,
                ..Config::default().with_policy(policy)
            };
            let (driver, want) = pressured(base.clone().with_alloc(Alloc::Driver));
            assert!(driver.evictions > 10 && driver.writebacks > 0, "{driver:?}");
            assert_eq!(driver.handovers + driver.arena_allocations, 0);
            for alloc in [Alloc::Handover, Alloc::Arena] {
                let what = format!("{policy}, lazy {lazy}, {alloc}");
                let (s, got) = pressured(base.clone().with_alloc(alloc));
                for (g, w) in got.iter().zip(&want) {
                    assert_close(g, w, &what);
                }
                let same = |s: &Stats| {
                    (
                        s.hits,
                        s.misses,
                        s.evictions,
                        s.writebacks,
                        s.h2d_bytes,
                        s.d2h_bytes,
                    )
                };
                assert_eq!(same(&s), same(&driver), "{what}");
                assert_eq!(
                    requests(&s, alloc == Alloc::Arena),
                    requests(&driver, false),
                    "{what}"
                );
                assert!(s.handovers > 0, "{what}: no handover");
                match alloc {
                    Alloc::Arena => {
                        assert_eq!((s.allocations, s.frees), (1, 0), "{what}");
                        assert_eq!(s.fragmentation_evictions + s.arena_restarts, 0, "{what}");
                    }
                    _ => assert_eq!(
                        s.allocations + s.handovers,
                        driver.allocations,
                        "{what}: each handover saves one allocation"
                    ),
                }
                assert_eq!(s.pool_slack_bytes, 0, "{what}: exact sizes");
            }
        }
    }
}

#[test]
fn a_launch_that_splits_the_arena_starts_over_and_loses_nothing() {
    let (small, big) = (square(1, 4), square(2, 4)); // 1 and 2 units of 256 bytes
    let unit = small.bytes();
    let config = Config::default()
        .with_budget(3 * unit)
        .with_alloc(Alloc::Arena)
        .with_policy(PolicyKind::Lru);
    let mut rt = runtime(config);
    let mut g = rng(22);
    let av = random(&mut g, small);
    let a = rt.register(av.clone(), small).unwrap();
    let x = rt.create(small).unwrap();
    multiply(&mut rt, 0, a, a, x).unwrap(); // a at unit 0, x at unit 1, device-only
    assert_eq!(rt.state(x).unwrap(), State::DeviceDirty);
    let yv = random(&mut g, big);
    let y = rt.register(yv.clone(), big).unwrap();
    // y needs two adjacent units. Evicting a leaves units 0 and 2 free around x, which the
    // launch pins: the arena is split. The launch puts x back (written back, as it is the only
    // copy) and starts over in an empty arena.
    rt.launch(0, &[Access::read_write(x), Access::read(y)], |_| Ok(()))
        .unwrap();
    let s = rt.stats();
    assert_eq!(s.arena_restarts, 1, "{s:?}");
    assert_eq!(s.arena_stranded_bytes, 2 * unit as u64);
    assert_eq!((s.evictions, s.writebacks), (2, 1), "a, then x");
    assert_eq!((s.allocations, s.frees), (1, 0));
    rt.audit().unwrap();
    assert_close(rt.read(x).unwrap(), &product(&av, &av, small), "x kept");
    assert_eq!(rt.read(y).unwrap(), yv.as_slice());
    let usage = rt.arena_usage().unwrap();
    assert_eq!((usage.capacity, usage.free), (3 * unit, 0));
    rt.audit().unwrap();
}

#[test]
fn fragmentation_costs_evictions_and_is_counted() {
    // Four small objects fill a 4-unit arena; releasing the ones at 0 and 2 leaves 2 units
    // free in two pieces, so a big object evicts although 2 units are free.
    let (small, big) = (square(1, 4), square(2, 4));
    let unit = small.bytes();
    let config = Config {
        lazy_release: false,
        ..Config::default()
            .with_budget(4 * unit)
            .with_alloc(Alloc::Arena)
    };
    let mut rt = runtime(config);
    let mut g = rng(23);
    let ids: Vec<ObjectId> = (0..4)
        .map(|_| rt.register(random(&mut g, small), small).unwrap())
        .collect();
    for &id in &ids {
        touch(&mut rt, &[id]).unwrap();
    }
    rt.release(ids[0]).unwrap();
    rt.release(ids[2]).unwrap();
    let usage = rt.arena_usage().unwrap();
    assert_eq!((usage.free, usage.largest_free), (2 * unit, unit));
    let bv = random(&mut g, big);
    let b = rt.register(bv.clone(), big).unwrap();
    touch(&mut rt, &[b]).unwrap(); // evicts the small object at unit 1 (least recent)
    let s = rt.stats();
    assert_eq!((s.evictions, s.fragmentation_evictions), (1, 1), "{s:?}");
    assert_eq!(s.arena_stranded_bytes, 2 * unit as u64);
    assert_eq!(s.arena_restarts, 0);
    assert!(!rt.is_resident(ids[1]) && rt.is_resident(ids[3]));
    assert_eq!(rt.read(b).unwrap(), bv.as_slice());
    rt.audit().unwrap();
}

#[test]
fn a_larger_pooled_block_serves_a_request_and_its_slack_is_off_limits() {
    let (small, big) = (square(1, 4), square(2, 4));
    let config = Config {
        reuse_tolerance_percent: 100,
        ..Config::default().with_budget(8 * small.bytes())
    };
    let mut rt = runtime(config);
    let mut g = rng(24);
    let v = random(&mut g, small);
    let a = rt.register(v.clone(), small).unwrap();
    touch(&mut rt, &[a]).unwrap();
    let b = rt.register(random(&mut g, big), big).unwrap();
    touch(&mut rt, &[b]).unwrap();
    rt.release(b).unwrap(); // the pool holds a block of twice a small object's size
    let t = rt.create(small).unwrap();
    multiply(&mut rt, 0, a, a, t).unwrap(); // t takes it
    let st = rt.stats();
    assert_eq!(
        (st.pool_reuses, st.pool_slack_bytes),
        (1, small.bytes() as u64)
    );
    assert_eq!(
        rt.resident_bytes(),
        small.bytes() + big.bytes(),
        "whole blocks are held"
    );
    assert_close(rt.read(t).unwrap(), &product(&v, &v, small), "t");
    rt.audit().unwrap();
    // An output that starts in t and runs on into the slack is refused, although the block
    // holds it; so is one in an object the launch only reads.
    let past = rt.launch(0, &[Access::read(a), Access::write(t)], |l| {
        let item = GemmItem {
            a: l.component(0, 0)?,
            b: l.component(0, 0)?,
            c: l.component(1, 0)?.offset_by(8),
        };
        l.gemm_batched(&GemmShape::dense(4, 4, 4), &[item])
    });
    assert!(
        matches!(&past, Err(Error::LaunchMisuse(m)) if m.contains("none of the launch's objects")),
        "{past:?}"
    );
    let read_only = rt.launch(0, &[Access::read(a), Access::write(t)], |l| {
        let item = GemmItem {
            a: l.component(1, 0)?,
            b: l.component(1, 0)?,
            c: l.component(0, 0)?,
        };
        l.gemm_batched(&GemmShape::dense(4, 4, 4), &[item])
    });
    assert!(
        matches!(&read_only, Err(Error::LaunchMisuse(m)) if m.contains("read-only")),
        "{read_only:?}"
    );
    assert_eq!(rt.read(a).unwrap(), v.as_slice());
    rt.audit().unwrap();
}

#[test]
fn in_the_arena_an_operand_cannot_reach_a_neighbour() {
    let l = square(1, 4);
    let config = Config::default()
        .with_budget(8 * l.bytes())
        .with_alloc(Alloc::Arena);
    let mut rt = runtime(config);
    let mut g = rng(25);
    let a = rt.register(random(&mut g, l), l).unwrap();
    let c = rt.create(l).unwrap();
    let d = rt.create(l).unwrap();
    // c and d are neighbours in the arena's one buffer: an output of c's size starting in the
    // middle of c runs into d.
    let r = rt.launch(
        0,
        &[Access::read(a), Access::write(c), Access::write(d)],
        |l| {
            let item = GemmItem {
                a: l.component(0, 0)?,
                b: l.component(0, 0)?,
                c: l.component(1, 0)?.offset_by(8),
            };
            l.gemm_batched(&GemmShape::dense(4, 4, 4), &[item])
        },
    );
    assert!(matches!(r, Err(Error::LaunchMisuse(_))), "{r:?}");
    assert_eq!(rt.state(c).unwrap(), State::Empty);
    assert_eq!(rt.stats().allocations, 1);
    rt.audit().unwrap();
}
