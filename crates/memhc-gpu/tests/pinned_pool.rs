//! The runtime's pinned pool and its registration of pageable memory, on the fake device
//! (memhc-core's `PinnedArena` and `Runtime::offer_for_registration` over
//! `GpuBackend::host_piece` and `adopt_host`): host objects and results are pieces of a few
//! large page-locked allocations, sized from the plan, grown by chunks, reused once the copies
//! that use a range are done, and all given back when the run and its results are gone; a
//! large pageable node uploaded often is registered once, copied in one DMA each time (no
//! byte staged) and unregistered when released. Every result is checked against the
//! reference, and the fake device checks that no piece overlaps a live one and that no
//! page-locked memory is touched or freed while a copy uses it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::fake::{FakeConfig, Progress};
use hadron::{Contraction, Engine, HadronNode, NodeShape, SpinMapping, reference};
use memhc_core::{Config, Mode, ObjectId, Runtime};
use memhc_gpu::{GpuOptions, RegisterRule};

const MIB: usize = 1 << 20;
const PAGE: usize = 4096;

/// A meson node at N = 24: 147,456 bytes, 36 pages.
fn shape() -> NodeShape {
    NodeShape::meson(24).unwrap()
}

fn node_bytes() -> usize {
    shape().layout().unwrap().bytes()
}

/// `node`'s values written into page-locked memory from the engine, registered.
fn register_pinned<B: memhc_core::Backend>(engine: &mut Engine<B>, node: &HadronNode) -> ObjectId {
    let mut host = engine.alloc_host(&shape()).unwrap();
    host.as_mut_slice()
        .unwrap()
        .copy_from_slice(&node.clone().into_vec());
    assert!(host.is_pooled(), "a piece of the pinned pool");
    engine.register_host(shape(), host).unwrap()
}

fn expected(x: &HadronNode, y: &HadronNode, m: &SpinMapping) -> HadronNode {
    reference::contract(x, y, Default::default(), Default::default(), m).unwrap()
}

#[test]
fn host_objects_and_results_are_pieces_of_one_chunk_sized_from_the_plan_and_all_go_back() {
    let b = common::backend(
        FakeConfig::default(),
        GpuOptions::default().budget(64 * MIB),
    );
    let fake = b.api().clone();
    // The plan: six inputs and three results at once.
    let plan = 9 * node_bytes();
    let config = Config::default()
        .with_direct_host(true)
        .with_pinned_pool(plan, MIB);
    let mut engine = Engine::new(Runtime::new(b, config).unwrap());
    let m = Arc::new(SpinMapping::meson4x4());
    let nodes: Vec<HadronNode> = (0..6).map(|i| HadronNode::random(&shape(), i)).collect();
    let ids: Vec<ObjectId> = nodes
        .iter()
        .map(|n| register_pinned(&mut engine, n))
        .collect();
    let mut outs = Vec::new();
    for i in 0..3 {
        let out = engine.create(shape()).unwrap();
        engine.runtime_mut().expect_read(out).unwrap();
        outs.push(out);
        let c = Contraction::new(ids[2 * i], ids[2 * i + 1], m.clone());
        engine.contract_into(i, &c, out).unwrap();
    }
    let pool = engine.runtime().pinned_pool();
    assert_eq!(pool.chunks, 1, "one chunk holds the plan");
    assert_eq!(pool.bytes, plan, "sized from the plan");
    let piece = node_bytes().next_multiple_of(PAGE);
    assert_eq!(
        pool.free_bytes,
        plan - 9 * piece,
        "nine pieces of whole pages cut"
    );
    let mut taken = Vec::new();
    for (i, &out) in outs.iter().enumerate() {
        let (_, host) = engine.take_host(out).unwrap();
        assert!(
            host.is_pinned() && host.is_pooled(),
            "a result handed out where it landed"
        );
        let got = HadronNode::from_vec(&shape(), host.into_vec().unwrap()).unwrap();
        let want = expected(&nodes[2 * i], &nodes[2 * i + 1], &m);
        assert!(reference::relative_error(&got, &want) <= 1e-12);
        taken.push(engine.alloc_host(&shape()).unwrap());
    }
    for id in ids {
        engine.release(id).unwrap();
    }
    engine.runtime_mut().synchronize().unwrap();
    engine.runtime().audit().unwrap();
    let s = fake.stats();
    // The probe (one page, once) and the chunk: two page-locked allocations for 12 buffers.
    assert_eq!(s.host_allocs, 2, "{s:?}");
    assert!(s.host_pieces >= 12, "{}", s.host_pieces);
    drop(engine);
    assert!(
        fake.stats().pinned_live >= plan,
        "buffers the caller still holds keep their chunk"
    );
    drop(taken);
    let s = fake.stats();
    assert_eq!(
        (s.pinned_live, s.pieces_live),
        (0, 0),
        "everything given back"
    );
    assert!(s.violations.is_empty(), "{:#?}", s.violations);
}

#[test]
fn the_pool_grows_by_chunks_and_cuts_freed_ranges_again() {
    let b = common::backend(
        FakeConfig::default(),
        GpuOptions::default().budget(64 * MIB),
    );
    let fake = b.api().clone();
    let piece = node_bytes().next_multiple_of(PAGE);
    // No plan: chunks of two pieces and a half.
    let config = Config::default().with_pinned_pool(0, 2 * piece + piece / 2);
    let mut rt = Runtime::new(b, config).unwrap();
    let layout = shape().layout().unwrap();
    let held: Vec<_> = (0..5).map(|_| rt.alloc_host(layout).unwrap()).collect();
    let pool = rt.pinned_pool();
    assert_eq!(pool.chunks, 3, "five pieces, two to a chunk");
    assert_eq!(pool.free_bytes, 3 * (piece / 2) + piece);
    drop(held);
    assert_eq!(rt.pinned_pool().free_bytes, rt.pinned_pool().bytes);
    let again: Vec<_> = (0..6).map(|_| rt.alloc_host(layout).unwrap()).collect();
    assert_eq!(
        rt.pinned_pool().chunks,
        3,
        "freed ranges are cut again: no new chunk"
    );
    assert_eq!(fake.stats().host_allocs, 4, "the probe and three chunks");
    drop(again);
    drop(rt);
    let s = fake.stats();
    assert_eq!((s.pinned_live, s.pieces_live), (0, 0));
    assert!(s.violations.is_empty(), "{:#?}", s.violations);
}

#[test]
fn a_range_is_cut_again_only_after_the_copies_that_use_it() {
    // Lazy progress: copies run only when something waits for them; kept buffers off, so a
    // released node's piece goes back to the pool at once, while its upload may be queued.
    let b = common::backend(
        FakeConfig {
            progress: Progress::Lazy,
            ..FakeConfig::default()
        },
        GpuOptions::default().budget(64 * MIB),
    );
    let fake = b.api().clone();
    let piece = node_bytes().next_multiple_of(PAGE);
    let config = Config {
        pinned_pool_bytes: 0,
        ..Config::default().with_pinned_pool(0, 2 * piece)
    };
    let mut engine = Engine::new(Runtime::new(b, config).unwrap());
    let m = Arc::new(SpinMapping::meson4x4());
    let mut nodes: Vec<HadronNode> = Vec::new();
    let mut results = Vec::new();
    for round in 0..4 {
        let (x, y) = (
            HadronNode::random(&shape(), 2 * round),
            HadronNode::random(&shape(), 2 * round + 1),
        );
        let (a, b) = (
            register_pinned(&mut engine, &x),
            register_pinned(&mut engine, &y),
        );
        let out = engine
            .contract(round as usize % 2, &Contraction::new(a, b, m.clone()))
            .unwrap();
        // Released with their uploads still queued: the next round's pieces take their ranges.
        engine.release(a).unwrap();
        engine.release(b).unwrap();
        results.push(out);
        nodes.push(x);
        nodes.push(y);
    }
    for (i, out) in results.into_iter().enumerate() {
        let got = engine.read(out).unwrap();
        let want = expected(&nodes[2 * i], &nodes[2 * i + 1], &m);
        assert!(reference::relative_error(&got, &want) <= 1e-12, "round {i}");
    }
    engine.runtime().audit().unwrap();
    assert_eq!(
        engine.runtime().pinned_pool().chunks,
        1,
        "one chunk, reused every round"
    );
    drop(engine);
    let s = fake.stats();
    assert!(s.violations.is_empty(), "{:#?}", s.violations);
    assert_eq!((s.pinned_live, s.pieces_live), (0, 0));
}

/// A naive-mode run (every use uploads) of one node `x` used `uses` times against fresh
/// nodes, with `rule`; with `future`, the runtime is told the queue first and keeps it (early
/// read-back on: the runtime follows the future only where prefetch or early read-back uses
/// it). The copy counters, the fake device's registrations, and every result checked.
fn naive_run(
    rule: RegisterRule,
    uses: usize,
    future: bool,
) -> (memhc_gpu::CopyStats, usize, usize) {
    let options = GpuOptions {
        register: rule,
        ..GpuOptions::default().budget(64 * MIB)
    };
    let b = common::backend(FakeConfig::default(), options);
    let fake = b.api().clone();
    let config = Config {
        early_read_back: future,
        ..Config::for_mode(Mode::Naive)
    };
    let mut engine = Engine::new(Runtime::new(b, config).unwrap());
    let m = Arc::new(SpinMapping::meson4x4());
    let x = HadronNode::random(&shape(), 100);
    let ys: Vec<HadronNode> = (0..uses as u64)
        .map(|i| HadronNode::random(&shape(), i))
        .collect();
    let xid = engine.register(x.clone()).unwrap();
    let yids: Vec<ObjectId> = ys
        .iter()
        .map(|y| engine.register(y.clone()).unwrap())
        .collect();
    let outs: Vec<ObjectId> = (0..uses).map(|_| engine.create(shape()).unwrap()).collect();
    let cs: Vec<Contraction> = yids
        .iter()
        .map(|&y| Contraction::new(xid, y, m.clone()))
        .collect();
    if future {
        let plan: Vec<ObjectId> = cs
            .iter()
            .zip(&outs)
            .flat_map(|(c, &o)| Engine::<memhc_gpu::GpuBackend<common::fake::Fake>>::uses(c, o))
            .collect();
        engine.runtime_mut().set_future(&plan).unwrap();
    }
    for (c, &out) in cs.iter().zip(&outs) {
        engine.contract_into(0, c, out).unwrap();
    }
    for (i, &out) in outs.iter().enumerate() {
        let got = engine.read(out).unwrap();
        assert!(reference::relative_error(&got, &expected(&x, &ys[i], &m)) <= 1e-12);
    }
    assert_eq!(
        engine.read(xid).unwrap(),
        x,
        "the registered node's values unchanged"
    );
    let copies = engine.runtime().backend().copy_stats();
    let live = fake.stats().registered_live;
    engine.release(xid).unwrap();
    engine.runtime_mut().synchronize().unwrap();
    engine.runtime().audit().unwrap();
    let s = fake.stats();
    assert!(s.violations.is_empty(), "{:#?}", s.violations);
    assert_eq!(s.registered_live, 0, "unregistered when released");
    assert_eq!(s.registrations, s.unregistrations);
    (copies, s.registrations, live)
}

#[test]
fn a_large_pageable_node_uploaded_often_is_registered_once_and_never_staged() {
    let bytes = node_bytes() as u64;
    let rule = RegisterRule {
        min_bytes: 64 << 10,
        min_copies: 3,
    };
    let never = RegisterRule {
        min_copies: usize::MAX,
        ..rule
    };
    // The future says x is used four times: registered before its first upload.
    let (on, registrations, live) = naive_run(rule, 4, true);
    let (off, none, _) = naive_run(never, 4, true);
    assert_eq!((registrations, none), (1, 0));
    assert_eq!(live, node_bytes(), "x registered while alive");
    assert_eq!(
        on.direct_h2d_bytes,
        4 * bytes,
        "x uploaded four times, one DMA each"
    );
    assert_eq!(off.direct_h2d_bytes, 0);
    assert_eq!(
        off.staged_h2d_bytes - on.staged_h2d_bytes,
        4 * bytes,
        "none of x's bytes staged once registered (the y's are staged either way)"
    );
    // Used twice only: the rule says no.
    let (twice, registrations, _) = naive_run(rule, 2, true);
    assert_eq!((registrations, twice.direct_h2d_bytes), (0, 0));
    // No future: registered at the upload where the uploads so far reach the rule's count.
    let (online, registrations, _) = naive_run(rule, 4, false);
    assert_eq!(registrations, 1);
    assert_eq!(
        online.direct_h2d_bytes,
        2 * bytes,
        "uploads three and four by DMA"
    );
}

#[test]
fn a_node_uploaded_once_is_not_registered_in_the_optimal_mode() {
    let options = GpuOptions {
        register: RegisterRule {
            min_bytes: 64 << 10,
            min_copies: 2,
        },
        ..GpuOptions::default().budget(64 * MIB)
    };
    let b = common::backend(FakeConfig::default(), options);
    let fake = b.api().clone();
    let mut engine = Engine::new(Runtime::new(b, Config::default()).unwrap());
    let m = Arc::new(SpinMapping::meson4x4());
    let x = engine.register(HadronNode::random(&shape(), 1)).unwrap();
    let ys: Vec<ObjectId> = (0..3)
        .map(|i| {
            engine
                .register(HadronNode::random(&shape(), 10 + i))
                .unwrap()
        })
        .collect();
    for &y in &ys {
        engine
            .contract(0, &Contraction::new(x, y, m.clone()))
            .unwrap();
    }
    engine.runtime_mut().synchronize().unwrap();
    assert_eq!(
        fake.stats().registrations,
        0,
        "resident after its one upload"
    );
    assert_eq!(engine.runtime().backend().copy_stats().direct_h2d_bytes, 0);
}
