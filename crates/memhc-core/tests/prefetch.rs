//! Prefetch and asynchronous write-back ([`Config::prefetch`]): the rules that keep prefetch
//! harmless, checked on small queues whose outcome is worked out by hand, and on random
//! programs against the same programs without prefetch.
//!
//! * prefetch brings in what the next uses read, within the budget, and a launch finds it
//!   resident (a prefetch hit);
//! * it evicts nothing, and leaves free the memory that the uses before its own will need (the
//!   outputs they write): a queue evicts no more with prefetch than without, where prefetch
//!   once evicted objects the caller was about to release, or took an output's room;
//! * a prefetched object released or never used is counted as wasted and leaks nothing;
//! * an evicted device-only object is written back asynchronously (`WritingBack`) and its value
//!   survives;
//! * with Belady, prefetch never adds misses, and the data-less backend reproduces every
//!   statistic of a run with prefetch.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use common::workload::{Action, config, creates, program, resolve};
use common::{assert_close, multiply, random, rng, square, touch};
use memhc_core::{Access, Backend, Config, ObjectId, PolicyKind, Runtime, State};
use memhc_host::host::HostBackend;
use memhc_host::null::NullBackend;
use proptest::prelude::*;

/// Objects of one layout (1 component of 2x2: 64 bytes).
fn layout() -> memhc_core::Layout {
    square(1, 2)
}

/// A runtime with room for `slots` objects, prefetching `window` uses ahead, with `objects`
/// registered objects of random values.
fn setup(
    policy: PolicyKind,
    slots: usize,
    window: usize,
    objects: usize,
) -> (Runtime<HostBackend>, Vec<ObjectId>) {
    let bytes = layout().bytes();
    let config = Config::default()
        .with_policy(policy)
        .with_budget(slots * bytes)
        .with_streams(1)
        .with_prefetch(Some(window));
    let mut rt = Runtime::new(HostBackend::new(1 << 20), config).unwrap();
    let ids = (0..objects)
        .map(|i| {
            rt.register(random(&mut rng(i as u64), layout()), layout())
                .unwrap()
        })
        .collect();
    (rt, ids)
}

/// Reads `id` alone, in a launch of its own.
fn use_one<B: Backend>(rt: &mut Runtime<B>, id: ObjectId) {
    rt.launch(0, &[Access::read(id)], |_| Ok(())).unwrap();
    rt.audit().unwrap();
}

#[test]
fn the_next_inputs_are_brought_in_and_found_resident() {
    // Room for 4; the queue reads a, b, c, d one by one: after the first launch, the window
    // of 3 brings in b, c and d, and every later launch is a prefetch hit.
    let (mut rt, ids) = setup(PolicyKind::Lru, 4, 3, 4);
    rt.set_future(&ids).unwrap();
    use_one(&mut rt, ids[0]);
    for &id in &ids[1..] {
        assert!(rt.is_resident(id), "{id} was not prefetched");
        assert_eq!(rt.state(id).unwrap(), State::Consistent);
    }
    for &id in &ids[1..] {
        use_one(&mut rt, id);
    }
    let s = rt.stats();
    assert_eq!((s.misses, s.hits), (1, 3));
    assert_eq!(
        (s.prefetches, s.prefetch_hits, s.prefetch_wasted),
        (3, 3, 0)
    );
    assert_eq!(s.prefetch_bytes, 3 * layout().bytes() as u64);
    assert_eq!(s.h2d_copies, 4, "every object copied in once");
    assert!(s.peak_device_bytes <= rt.budget() as u64);
}

#[test]
fn prefetch_evicts_nothing() {
    // Room for 3. The queue: a, b, c, a, d, b. The first launch brings in b and c (there is
    // room). After the third launch {a, b, c} is resident and the window (a, d) wants d: there
    // is no free memory, and a prefetch evicts nothing (not even b, needed after d, or with
    // Belady c, never used again): d waits for its launch, which evicts as without prefetch.
    for policy in [PolicyKind::Lru, PolicyKind::Belady] {
        let queue = |rt: &mut Runtime<HostBackend>, ids: &[ObjectId], _: bool| {
            let [a, b, c, d] = [ids[0], ids[1], ids[2], ids[3]];
            rt.set_future(&[a, b, c, a, d, b]).unwrap();
            for id in [a, b, c, a] {
                use_one(rt, id);
            }
            assert!(rt.is_resident(a) && rt.is_resident(b) && rt.is_resident(c));
            assert!(
                !rt.is_resident(d),
                "{policy:?}: d evicted something to come in"
            );
            for id in [d, b] {
                use_one(rt, id);
            }
            for (i, &id) in ids.iter().enumerate() {
                assert_close(rt.read(id).unwrap(), &value(i as u64), "an input");
            }
        };
        let without = run_queue(policy, 3, 4, None, queue);
        let with = run_queue(policy, 3, 4, Some(2), queue);
        assert_eq!((with.prefetches, with.prefetch_hits), (2, 2), "{policy:?}");
        assert_eq!(with.evictions, without.evictions, "{policy:?}");
        assert_eq!(with.misses + 2, without.misses, "{policy:?}");
    }
}

#[test]
fn a_prefetch_released_or_never_used_leaks_nothing() {
    let (mut rt, ids) = setup(PolicyKind::Lru, 4, 3, 4);
    rt.set_future(&ids).unwrap();
    use_one(&mut rt, ids[0]);
    assert!(rt.is_resident(ids[1]) && rt.is_resident(ids[2]));
    rt.release(ids[1]).unwrap();
    rt.write(ids[2], random(&mut rng(99), layout())).unwrap();
    rt.audit().unwrap();
    let s = rt.stats();
    assert_eq!((s.prefetches, s.prefetch_wasted), (3, 2));
    // Their blocks are pooled, not lost; ids[3] stays prefetched and unused to the end.
    assert_eq!(rt.resident_bytes(), 2 * layout().bytes());
    assert_eq!(rt.used_bytes(), rt.resident_bytes() + rt.pooled_bytes());
    assert_eq!(rt.backend().used(), rt.used_bytes());
    rt.synchronize().unwrap();
    rt.audit().unwrap();
}

#[test]
fn an_evicted_result_is_written_back_asynchronously_and_kept() {
    // Room for 3: out = a * a, then b, c and d are read, which pushes out off the device with
    // its write-back in flight; reading it gives the product.
    let (mut rt, ids) = setup(PolicyKind::Lru, 3, 1, 4);
    let out = rt.create(layout()).unwrap();
    let [a, b, c, d] = [ids[0], ids[1], ids[2], ids[3]];
    rt.set_future(&[a, out, b, c, d]).unwrap();
    multiply(&mut rt, 0, a, a, out).unwrap();
    for id in [b, c, d] {
        use_one(&mut rt, id);
    }
    assert!(!rt.is_resident(out));
    assert_eq!(rt.state(out).unwrap(), State::WritingBack);
    let s = rt.stats();
    assert_eq!((s.writebacks, s.async_writebacks), (1, 1));
    let x = random(&mut rng(0), layout());
    let want = common::product(&x, &x, layout());
    assert_close(rt.read(out).unwrap(), &want, "out after its write-back");
    assert_eq!(rt.state(out).unwrap(), State::HostValid);
    rt.audit().unwrap();
}

/// The statistics of `queue` run on a fresh runtime (`policy`, room for `slots` objects, one
/// stream, `objects` registered objects of random values) with prefetch `window` uses ahead
/// (or off), after `audit()`.
fn run_queue(
    policy: PolicyKind,
    slots: usize,
    objects: usize,
    window: Option<usize>,
    queue: impl FnOnce(&mut Runtime<HostBackend>, &[ObjectId], bool),
) -> memhc_core::Stats {
    let bytes = layout().bytes();
    let config = Config::default()
        .with_policy(policy)
        .with_budget(slots * bytes)
        .with_streams(1)
        .with_prefetch(window);
    let mut rt = Runtime::new(HostBackend::new(1 << 20), config).unwrap();
    let ids: Vec<_> = (0..objects)
        .map(|i| {
            rt.register(random(&mut rng(i as u64), layout()), layout())
                .unwrap()
        })
        .collect();
    queue(&mut rt, &ids, window.is_some());
    rt.synchronize().unwrap();
    rt.audit().unwrap();
    rt.stats()
}

/// The values of registered object `i` (see [`run_queue`]).
fn value(i: u64) -> Vec<memhc_core::Complex64> {
    random(&mut rng(i), layout())
}

#[test]
fn prefetch_does_not_evict_what_the_caller_releases_next() {
    // Room for 4. x = a * b, then the caller releases a and b (as a vector's end does), then
    // y = c * d. Without prefetch nothing is evicted: a's and b's blocks serve c and d. The
    // old rule prefetched c into the free slot and evicted a (never used again, but not yet
    // released) for d: one eviction the run without prefetch does not have.
    let queue = |rt: &mut Runtime<HostBackend>, ids: &[ObjectId], prefetch: bool| {
        let [a, b, c, d] = [ids[0], ids[1], ids[2], ids[3]];
        let (x, y) = (rt.create(layout()).unwrap(), rt.create(layout()).unwrap());
        rt.set_future(&[a, b, x, c, d, y]).unwrap();
        multiply(rt, 0, a, b, x).unwrap();
        if prefetch {
            assert!(rt.is_resident(c), "c was not prefetched into the free slot");
            assert!(rt.is_resident(a) && rt.is_resident(b), "a prefetch evicted");
        }
        rt.release(a).unwrap();
        rt.release(b).unwrap();
        multiply(rt, 0, c, d, y).unwrap();
        let want = |p: u64, q: u64| common::product(&value(p), &value(q), layout());
        assert_close(rt.read(x).unwrap(), &want(0, 1), "x");
        assert_close(rt.read(y).unwrap(), &want(2, 3), "y");
    };
    let without = run_queue(PolicyKind::Lru, 4, 4, None, queue);
    let with = run_queue(PolicyKind::Lru, 4, 4, Some(3), queue);
    assert_eq!(without.evictions, 0);
    assert_eq!(
        with.evictions, without.evictions,
        "prefetch added evictions"
    );
    // The overlap is kept: c came in ahead and its use was a hit.
    assert_eq!((with.prefetches, with.prefetch_hits), (1, 1));
    assert_eq!(with.misses + 1, without.misses);
}

#[test]
fn prefetch_leaves_room_for_the_outputs_written_before_its_use() {
    // Room for 4. x = a * b, y = a * x, then the caller releases a, b and x, then z = c * y.
    // Without prefetch nothing is evicted. After the first launch the window (a, x, y, c, y,
    // z) holds y, an output the second launch writes before c is used: the free slot is y's.
    // The old rule prefetched c into it, and the second launch evicted b for y.
    let queue = |rt: &mut Runtime<HostBackend>, ids: &[ObjectId], _: bool| {
        let [a, b, c] = [ids[0], ids[1], ids[2]];
        let [x, y, z] = [(); 3].map(|()| rt.create(layout()).unwrap());
        rt.set_future(&[a, b, x, a, x, y, c, y, z]).unwrap();
        multiply(rt, 0, a, b, x).unwrap();
        assert!(!rt.is_resident(c), "c took the slot y is written to");
        multiply(rt, 0, a, x, y).unwrap();
        for id in [a, b, x] {
            rt.release(id).unwrap();
        }
        multiply(rt, 0, c, y, z).unwrap();
        let xv = common::product(&value(0), &value(1), layout());
        let yv = common::product(&value(0), &xv, layout());
        assert_close(rt.read(y).unwrap(), &yv, "y");
        let zv = common::product(&value(2), &yv, layout());
        assert_close(rt.read(z).unwrap(), &zv, "z");
    };
    let without = run_queue(PolicyKind::Lru, 4, 3, None, queue);
    let with = run_queue(PolicyKind::Lru, 4, 3, Some(6), queue);
    assert_eq!(without.evictions, 0);
    assert_eq!(
        with.evictions, without.evictions,
        "prefetch added evictions"
    );
    assert_eq!(with.prefetch_wasted, 0);
}

/// Runs a resolved program on `rt` (the outcomes are checked by the property tests; here only
/// the statistics matter).
fn drive<B: Backend>(rt: &mut Runtime<B>, streams: usize, actions: &[Action], uses: &[ObjectId]) {
    for action in actions.iter().filter(|a| creates(a)) {
        match action {
            Action::Register(_, layout, data) => {
                rt.register(data.clone(), *layout).unwrap();
            }
            Action::Create(_, layout) => {
                rt.create(*layout).unwrap();
            }
            _ => {}
        }
    }
    rt.set_future(uses).unwrap();
    for action in actions.iter().filter(|a| !creates(a)) {
        let _ = match action {
            Action::Multiply {
                a, b, out, stream, ..
            } => multiply(rt, stream % streams, *a, *b, *out),
            Action::Touch(ids, _) => touch(rt, ids),
            Action::HostWrite(id, data) => rt.write(*id, data.clone()),
            Action::Release(id) => rt.release(*id),
            Action::Read(id, _) => rt.read(*id).map(|_| ()),
            Action::BeginVector(ids) => rt.begin_vector(ids),
            Action::Register(..) | Action::Create(..) => Ok(()),
        };
        rt.audit().unwrap();
        assert!(rt.used_bytes() <= rt.budget());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// With Belady, a run with prefetch misses and evicts no more than the same run without
    /// (a prefetch takes only memory that no use before its own needs). Without an arena: in
    /// an arena, prefetch changes where ranges fall, so fragmentation, and with it evictions and
    /// restarts (which count their uses twice), differ by layout, not by policy.
    #[test]
    fn with_belady_prefetch_never_adds_misses(
        config in config(),
        window in 1usize..12,
        steps in program(80),
    ) {
        let (actions, uses) = resolve(&steps);
        let base = Config { prefetch: None, arena: false, ..config.with_policy(PolicyKind::Belady) };
        let mut without = Runtime::new(NullBackend::new(1 << 24), base.clone()).unwrap();
        drive(&mut without, base.streams, &actions, &uses);
        let with_config = base.clone().with_prefetch(Some(window));
        let mut with = Runtime::new(NullBackend::new(1 << 24), with_config.clone()).unwrap();
        drive(&mut with, base.streams, &actions, &uses);
        let (w, wo) = (with.stats(), without.stats());
        prop_assert!(w.misses <= wo.misses, "{} misses with prefetch, {} without", w.misses, wo.misses);
        prop_assert!(
            w.evictions <= wo.evictions,
            "{} evictions with prefetch, {} without", w.evictions, wo.evictions
        );
        // Every use is a hit or a miss either way.
        prop_assert_eq!(w.hits + w.misses, wo.hits + wo.misses);
        prop_assert!(w.prefetch_hits <= w.prefetches);
        prop_assert!(w.peak_device_bytes <= base.budget.unwrap() as u64);
    }
}

#[test]
fn prefetch_and_write_back_never_wait_for_the_device() {
    // The device is paused: nothing queued runs. Room for 3; the queue: out = a * a, then b,
    // c, d one by one. Prefetch brings in b (the free slot); then the launch of c evicts a,
    // still read by the queued GEMM (its block goes to c with that use attached), and that of
    // d evicts out, still being written (its write-back is queued after the GEMM on the copy
    // stream). If any of this waited for the device the test would stall until the watchdog
    // resumes it, and `out` would not be in flight.
    let (mut rt, ids) = setup(PolicyKind::Lru, 3, 1, 4);
    let out = rt.create(layout()).unwrap();
    let [a, b, c, d] = [ids[0], ids[1], ids[2], ids[3]];
    rt.set_future(&[a, out, b, c, d]).unwrap();
    let pause = rt.backend().pause();
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let stalled = wait
            .recv_timeout(std::time::Duration::from_secs(20))
            .is_err();
        drop(pause);
        stalled
    });
    multiply(&mut rt, 0, a, a, out).unwrap();
    for id in [b, c, d] {
        use_one(&mut rt, id);
    }
    // Still paused: the write-back of out cannot have run.
    let in_flight = rt.state(out).unwrap() == State::WritingBack;
    let s = rt.stats();
    done.send(()).unwrap();
    assert!(
        !watchdog.join().unwrap(),
        "the runtime waited for the paused device"
    );
    assert!(in_flight, "out is not being written back");
    assert_eq!(
        (s.prefetches, s.prefetch_hits, s.async_writebacks),
        (1, 1, 1)
    );
    assert_eq!(s.handovers, 2);
    let x = random(&mut rng(0), layout());
    assert_close(
        rt.read(out).unwrap(),
        &common::product(&x, &x, layout()),
        "out",
    );
    for (i, id) in [b, c, d].into_iter().enumerate() {
        let want = random(&mut rng(i as u64 + 1), layout());
        assert_close(rt.read(id).unwrap(), &want, "an input");
    }
    rt.audit().unwrap();
}
