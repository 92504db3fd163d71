//! The runtime's mechanisms one at a time, on the host backend: hits and misses, GPU-only
//! objects and on-demand sync, the free pool, packing, eviction with write-back, the paper's
//! modes, multi-stream dependencies, and the errors a caller can provoke.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use common::*;
use memhc_core::backend::gemm::{GemmItem, GemmShape};
use memhc_core::{
    Access, Alloc, Complex64, Config, Error, HostCopy, Layout, Mode, ObjectId, ObjectKind,
    PolicyKind, Runtime, State,
};
use memhc_host::host::HostBackend;

const MIB: usize = 1 << 20;

fn runtime(config: Config) -> Runtime<HostBackend> {
    Runtime::new(HostBackend::new(64 * MIB), config).unwrap()
}

/// Two host-backed inputs of layout `l` with random values from `seed`, and a GPU-only output
/// of the same layout.
struct Operands {
    a: ObjectId,
    b: ObjectId,
    c: ObjectId,
    av: Vec<Complex64>,
    bv: Vec<Complex64>,
}

fn operands(rt: &mut Runtime<HostBackend>, l: Layout, seed: u64) -> Operands {
    let mut g = rng(seed);
    let (av, bv) = (random(&mut g, l), random(&mut g, l));
    let a = rt.register(av.clone(), l).unwrap();
    let b = rt.register(bv.clone(), l).unwrap();
    let c = rt.create(l).unwrap();
    Operands { a, b, c, av, bv }
}

#[test]
fn repeated_inputs_are_hits_and_outputs_stay_on_the_device() {
    let mut rt = runtime(Config::default());
    let l = square(4, 6);
    let Operands { a, b, c, av, bv } = operands(&mut rt, l, 1);
    assert_eq!(rt.kind(c).unwrap(), ObjectKind::GpuOnly);
    assert_eq!(rt.state(c).unwrap(), State::Empty);

    multiply(&mut rt, 0, a, b, c).unwrap();
    let s = rt.stats();
    assert_eq!((s.hits, s.misses, s.allocations), (0, 3, 3));
    assert_eq!(s.h2d_bytes as usize, 2 * l.bytes());
    assert_eq!(s.d2h_bytes, 0, "a GPU-only result must not be copied back");
    assert_eq!(rt.state(c).unwrap(), State::DeviceDirty);
    assert_eq!(s.flops, 4 * 8 * 6 * 6 * 6);

    multiply(&mut rt, 1, a, b, c).unwrap();
    let s = rt.stats();
    assert_eq!(
        (s.hits, s.misses, s.allocations),
        (3, 3, 3),
        "second launch: all hits"
    );
    assert_eq!(s.h2d_bytes as usize, 2 * l.bytes(), "no copy for a hit");
    assert_eq!(s.hit_rate, 0.5);

    let got = rt.read(c).unwrap().to_vec();
    assert_close(&got, &product(&av, &bv, l), "c = a b");
    assert_eq!(rt.state(c).unwrap(), State::Consistent);
    assert_eq!(rt.stats().d2h_bytes as usize, l.bytes(), "read syncs once");
    rt.read(c).unwrap();
    assert_eq!(
        rt.stats().d2h_bytes as usize,
        l.bytes(),
        "a second read does not copy"
    );
    rt.audit().unwrap();
}

#[test]
fn zeros_never_made_are_copied_as_a_vector_of_zeros_and_stay_unmade() {
    // The same launches on a vector of zeros and on zeros never made: the same counts and
    // values, and the zeros are still unmade after their copies to the device.
    let l = square(4, 6);
    let zero = Complex64::new(0.0, 0.0);
    let mut made = runtime(Config::default());
    let mut lazy = runtime(Config::default());
    let bv = random(&mut rng(3), l);
    let a = made.register(vec![zero; l.elems()], l).unwrap();
    let z = lazy.register_host(HostCopy::zeros(l.elems()), l).unwrap();
    for rt in [&mut made, &mut lazy] {
        let b = rt.register(bv.clone(), l).unwrap();
        let c = rt.create(l).unwrap();
        multiply(rt, 0, a, b, c).unwrap();
        multiply(rt, 1, b, a, c).unwrap();
        assert_eq!(rt.read(c).unwrap(), vec![zero; l.elems()].as_slice());
        rt.audit().unwrap();
    }
    assert_eq!(a, z);
    assert_eq!(made.stats(), lazy.stats());
    let host = lazy.take_host(z).unwrap();
    assert!(host.is_unmade(), "{host:?}");
    assert_eq!(host.into_vec().unwrap(), vec![zero; l.elems()]);
    // Read in place, they are made.
    let z = lazy.register_host(HostCopy::zeros(l.elems()), l).unwrap();
    assert_eq!(lazy.read(z).unwrap(), vec![zero; l.elems()].as_slice());
    assert!(!lazy.take_host(z).unwrap().is_unmade());
}

#[test]
fn touching_records_changes_nothing() {
    // Resident and dirty (c), resident and consistent (a, b), released (d), unknown (e): a
    // touch of all of them leaves every count, state and value as it was.
    let mut rt = runtime(Config::default());
    let l = square(4, 6);
    let Operands { a, b, c, av, bv } = operands(&mut rt, l, 7);
    let d = rt.register(random(&mut rng(8), l), l).unwrap();
    multiply(&mut rt, 0, a, b, c).unwrap();
    rt.release(d).unwrap();
    let e = ObjectId::from_index(1 << 20);
    let before = (rt.stats(), [a, b, c].map(|id| rt.state(id).unwrap()));

    rt.touch_records(&[a, b, c, d, e, a]);

    assert_eq!(
        (rt.stats(), [a, b, c].map(|id| rt.state(id).unwrap())),
        before
    );
    assert!(rt.state(d).is_err(), "a released object stays released");
    rt.audit().unwrap();
    let got = rt.read(c).unwrap().to_vec();
    assert_close(&got, &product(&av, &bv, l), "c = a b");
}

#[test]
fn take_hands_over_the_value_and_releases_the_object() {
    let mut rt = runtime(Config::default());
    let l = square(4, 6);
    let Operands { a, b, c, av, bv } = operands(&mut rt, l, 7);

    // Taking a GPU-only object that was never written fails and leaves it alive.
    assert!(matches!(rt.take(c), Err(Error::Uninitialized(id)) if id == c));
    assert_eq!(rt.state(c).unwrap(), State::Empty);

    multiply(&mut rt, 0, a, b, c).unwrap();
    let got = rt.take(c).unwrap();
    assert_close(&got, &product(&av, &bv, l), "c = a b, taken");
    assert_eq!(rt.stats().d2h_bytes as usize, l.bytes(), "one copy back");
    assert!(matches!(rt.state(c), Err(Error::UnknownObject(id)) if id == c));
    assert!(matches!(rt.take(c), Err(Error::UnknownObject(id)) if id == c));

    // A host-valid input hands back what was registered; its device copy goes to the pool.
    let pooled = rt.stats().pool_reuses;
    assert_eq!(rt.take(a).unwrap(), av);
    let d = rt.create(l).unwrap();
    multiply(&mut rt, 0, b, b, d).unwrap();
    assert!(
        rt.stats().pool_reuses > pooled,
        "the taken object's buffer was reused"
    );
    rt.audit().unwrap();
}

#[test]
fn released_host_vectors_serve_later_copies_back_with_the_right_values() {
    let config = Config::default().with_host_pool(1 << 20, 0);
    let mut rt = runtime(config);
    let mut g = rng(11);
    let l = square(4, 6);
    let (av, bv, dv) = (random(&mut g, l), random(&mut g, l), random(&mut g, l));
    let a = rt.register(av.clone(), l).unwrap();
    let b = rt.register(bv.clone(), l).unwrap();
    let d = rt.register(dv.clone(), l).unwrap();
    let c = rt.create(l).unwrap();
    multiply(&mut rt, 0, a, b, c).unwrap();
    assert_eq!(rt.host_pool_bytes(), 0);

    // Released, a's host vector (holding a's values) is kept ...
    rt.release(a).unwrap();
    assert_eq!(rt.host_pool_bytes(), l.bytes());
    // ... and c's copy back lands in it: c's values, none of a's.
    assert_close(rt.read(c).unwrap(), &product(&av, &bv, l), "c = a b");
    assert_eq!(rt.host_pool_bytes(), 0, "the kept vector was used");

    // A taken value is the caller's: nothing goes to the pool.
    let e = rt.create(l).unwrap();
    multiply(&mut rt, 1, b, d, e).unwrap();
    assert_close(&rt.take(e).unwrap(), &product(&bv, &dv, l), "e = b d");
    assert_eq!(rt.host_pool_bytes(), 0);

    // A pool of zero bytes keeps nothing.
    let mut off = runtime(Config::default().with_host_pool(0, 0));
    let x = off.register(av, l).unwrap();
    off.release(x).unwrap();
    assert_eq!(off.host_pool_bytes(), 0);
    rt.audit().unwrap();
}

#[test]
fn released_buffers_are_reused_from_the_pool() {
    let mut rt = runtime(Config::default());
    let mut g = rng(2);
    let l = square(2, 5);
    let a = rt.register(random(&mut g, l), l).unwrap();
    let t = rt.create(l).unwrap();
    multiply(&mut rt, 0, a, a, t).unwrap();
    rt.release(t).unwrap();
    assert_eq!(rt.pooled_bytes(), l.bytes());
    assert!(matches!(rt.state(t), Err(Error::UnknownObject(_))));
    let u = rt.create(l).unwrap();
    multiply(&mut rt, 1, a, a, u).unwrap();
    let s = rt.stats();
    assert_eq!((s.allocations, s.pool_reuses), (2, 1));
    assert_eq!(rt.pooled_bytes(), 0);
    rt.audit().unwrap();
}

#[test]
fn without_lazy_release_buffers_are_freed() {
    let mut rt = runtime(Config {
        lazy_release: false,
        ..Config::default()
    });
    let mut g = rng(3);
    let l = square(2, 5);
    let a = rt.register(random(&mut g, l), l).unwrap();
    let t = rt.create(l).unwrap();
    multiply(&mut rt, 0, a, a, t).unwrap();
    rt.release(t).unwrap();
    assert_eq!(rt.pooled_bytes(), 0);
    assert_eq!(rt.stats().frees, 1);
    assert_eq!(
        rt.backend().used(),
        l.bytes(),
        "only a is left on the device"
    );
    rt.audit().unwrap();
}

#[test]
fn unpacked_objects_take_one_buffer_and_one_copy_per_component() {
    let mut rt = runtime(Config {
        packing: false,
        ..Config::default()
    });
    let l = square(16, 3);
    let Operands { a, b, c, av, bv } = operands(&mut rt, l, 4);
    multiply(&mut rt, 0, a, b, c).unwrap();
    let s = rt.stats();
    assert_eq!(s.allocations, 48);
    assert_eq!(s.h2d_copies, 32);
    assert_close(
        rt.read(c).unwrap(),
        &product(&av, &bv, l),
        "unpacked product",
    );
    assert_eq!(rt.stats().d2h_copies, 16);
    rt.audit().unwrap();
}

#[test]
fn packed_objects_expose_one_contiguous_range() {
    let mut rt = runtime(Config::default());
    let l = square(3, 2);
    let a = rt
        .register(vec![memhc_core::Complex64::new(1.0, 0.0); l.elems()], l)
        .unwrap();
    rt.launch(0, &[Access::read(a)], |launch| {
        let whole = launch.contiguous(0)?.expect("packed");
        assert_eq!(whole.offset, 0);
        assert_eq!(launch.component(0, 2)?.offset, 8);
        assert!(launch.component(0, 3).is_err());
        Ok(())
    })
    .unwrap();
}

#[test]
fn eviction_writes_back_device_only_objects_and_loses_nothing() {
    let l = square(2, 4);
    // Room for exactly three objects.
    let mut rt = runtime(Config::default().with_budget(3 * l.bytes()));
    let Operands { a, b, c, av, bv } = operands(&mut rt, l, 5);
    let d = rt.create(l).unwrap();
    multiply(&mut rt, 0, a, b, c).unwrap(); // a, b, c resident: full
    multiply(&mut rt, 0, c, c, d).unwrap(); // needs d: LRU evicts a (clean): no write-back
    let s = rt.stats();
    assert_eq!((s.evictions, s.writebacks), (1, 0));
    assert_eq!(rt.state(a).unwrap(), State::HostValid);
    multiply(&mut rt, 0, a, b, c).unwrap(); // a comes back; LRU victim: c is in use -> d
    let s = rt.stats();
    assert_eq!(s.evictions, 2);
    assert_eq!(
        s.writebacks, 1,
        "d was GPU-only: written back before it left"
    );
    assert_eq!(rt.state(d).unwrap(), State::HostValid);
    let cv = product(&av, &bv, l);
    assert_close(
        rt.read(d).unwrap(),
        &product(&cv, &cv, l),
        "d survived eviction",
    );
    assert_close(rt.read(c).unwrap(), &cv, "c");
    assert!(rt.used_bytes() <= rt.budget());
    rt.audit().unwrap();
}

#[test]
fn pool_is_drained_before_anything_is_evicted() {
    let small = square(1, 4);
    let big = square(2, 4);
    // The paper's allocation path: an evicted buffer is freed (no handover).
    let mut rt = runtime(
        Config::default()
            .with_budget(small.bytes() * 4)
            .with_alloc(Alloc::Driver),
    );
    let mut g = rng(6);
    let a = rt.register(random(&mut g, small), small).unwrap();
    let t = rt.create(small).unwrap();
    multiply(&mut rt, 0, a, a, t).unwrap();
    rt.release(t).unwrap(); // pool holds one small buffer; a resident
    let b = rt.register(random(&mut g, big), big).unwrap();
    touch(&mut rt, &[b]).unwrap(); // 1 + 1 + 2 = 4 small units: fits exactly, no drain
    assert_eq!(rt.pooled_bytes(), small.bytes());
    let c = rt.register(random(&mut g, small), small).unwrap();
    // c takes the pooled buffer (same size): a reuse, not a drain.
    touch(&mut rt, &[c]).unwrap();
    assert_eq!(rt.stats().pool_reuses, 1);
    let u = rt.create(small).unwrap();
    multiply(&mut rt, 0, c, c, u).unwrap(); // full: must evict (pool is empty)
    assert_eq!(rt.stats().evictions, 1);
    rt.release(u).unwrap(); // pool: one small buffer again
    let d = rt.register(random(&mut g, big), big).unwrap();
    let before = rt.stats();
    touch(&mut rt, &[d]).unwrap(); // needs 2 units: drain the pool first, then evict one more
    let after = rt.stats();
    assert_eq!(rt.pooled_bytes(), 0);
    assert_eq!(
        after.frees - before.frees,
        1 + (after.evictions - before.evictions)
    );
    rt.audit().unwrap();
}

#[test]
fn eager_sync_copies_every_output_back() {
    let mut rt = runtime(Config {
        on_demand_sync: false,
        ..Config::default()
    });
    let mut g = rng(7);
    let l = square(2, 3);
    let a = rt.register(random(&mut g, l), l).unwrap();
    let c = rt.create(l).unwrap();
    multiply(&mut rt, 0, a, a, c).unwrap();
    assert_eq!(rt.state(c).unwrap(), State::Consistent);
    assert_eq!(rt.stats().d2h_bytes as usize, l.bytes());
    rt.audit().unwrap();
}

/// The paper's four modes on the same chain of launches: same results, and the traffic each
/// mode is supposed to save.
#[test]
fn modes_differ_in_traffic_not_in_results() {
    let l = square(4, 5);
    let mut g = rng(8);
    let (av, bv) = (random(&mut g, l), random(&mut g, l));
    let run = |mode: Mode| {
        let mut rt = runtime(Config::for_mode(mode));
        let a = rt.register(av.clone(), l).unwrap();
        let b = rt.register(bv.clone(), l).unwrap();
        let c = rt.create(l).unwrap();
        let d = rt.create(l).unwrap();
        multiply(&mut rt, 0, a, b, c).unwrap();
        multiply(&mut rt, 1, c, b, d).unwrap();
        multiply(&mut rt, 2, a, d, c).unwrap();
        let resident_after = (rt.is_resident(a), rt.is_resident(c));
        let stats = rt.stats(); // before the read, which syncs c in the on-demand modes
        let value = rt.read(c).unwrap().to_vec();
        rt.audit().unwrap();
        (stats, resident_after, value)
    };
    let ab = product(&av, &bv, l);
    let expected = product(&av, &product(&ab, &bv, l), l);
    let (naive, reorg, reorg_sync, optimal) = (
        run(Mode::Naive),
        run(Mode::Reorg),
        run(Mode::ReorgSync),
        run(Mode::Optimal),
    );
    for (name, r) in [
        ("naive", &naive),
        ("reorg", &reorg),
        ("reorg-sync", &reorg_sync),
        ("optimal", &optimal),
    ] {
        assert_close(&r.2, &expected, name);
    }
    let (comps, bytes) = (l.components() as u64, l.bytes() as u64);
    // naive: per launch, every object in and out, one buffer per component.
    assert_eq!(
        naive.0.h2d_bytes,
        6 * bytes,
        "naive copies both inputs of every launch"
    );
    assert_eq!(
        naive.0.d2h_bytes,
        3 * bytes,
        "naive copies every output back"
    );
    assert_eq!(naive.0.allocations, 9 * comps);
    assert_eq!(naive.1, (false, false), "naive keeps nothing resident");
    // reorg: the same traffic in one buffer per object.
    assert_eq!(
        (reorg.0.h2d_bytes, reorg.0.d2h_bytes),
        (6 * bytes, 3 * bytes)
    );
    assert_eq!(reorg.0.allocations, 9);
    // reorg-sync: intermediates stay on the device; host-backed inputs are still re-copied.
    assert_eq!(
        reorg_sync.0.h2d_bytes,
        4 * bytes,
        "a and b are copied in at each use"
    );
    assert_eq!(reorg_sync.0.d2h_bytes, 0);
    assert_eq!(reorg_sync.1, (false, true));
    // optimal: a and b copied once, nothing copied back until the read.
    assert_eq!(optimal.0.h2d_bytes, 2 * bytes);
    assert_eq!(optimal.0.d2h_bytes, 0);
    assert_eq!(optimal.0.allocations, 4);
    assert_eq!(optimal.1, (true, true));
}

/// Work on one stream reads what a launch on another stream wrote: the launch's event orders
/// them. Chains over four streams, compared with the reference.
#[test]
fn launches_on_different_streams_respect_dependencies() {
    let l = square(4, 24);
    let mut rt = runtime(Config::default().with_streams(4));
    let mut g = rng(9);
    let mut values = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..4 {
        let v = random(&mut g, l);
        ids.push(rt.register(v.clone(), l).unwrap());
        values.push(v);
    }
    // Each step multiplies the previous result by an input, on the next stream.
    let mut acc_id = ids[0];
    let mut acc = values[0].clone();
    for step in 1..12 {
        let out = rt.create(l).unwrap();
        let k = step % 4;
        multiply(&mut rt, step % 4, acc_id, ids[k], out).unwrap();
        acc = product(&acc, &values[k], l);
        if acc_id != ids[0] {
            rt.release(acc_id).unwrap(); // its buffer is reused while the next step runs
        }
        acc_id = out;
    }
    assert_close(rt.read(acc_id).unwrap(), &acc, "cross-stream chain");
    rt.audit().unwrap();
}

/// Memory used by work still in flight is not reused, freed or evicted until that work is
/// done. The device is paused, so the first launch (stream 0, reading `a` and `b`) is certainly
/// still queued when `a` is overwritten from the host (its device copy is dropped: pooled or
/// freed) and a launch on stream 1 reuses `a`'s pooled buffer or, with a tight budget, evicts
/// `b`. Host waits block until another thread resumes the device.
#[test]
fn in_flight_work_keeps_its_memory() {
    let l = square(4, 16);
    let tight = 3 * l.bytes();
    let cases = [
        (true, 64 * MIB),
        (false, 64 * MIB),
        (true, tight),
        (false, tight),
    ];
    for (alloc, (lazy, budget)) in Alloc::ALL.into_iter().flat_map(|a| cases.map(|c| (a, c))) {
        let config = Config {
            lazy_release: lazy,
            ..Config::default()
                .with_budget(budget)
                .with_streams(2)
                .with_alloc(alloc)
        };
        let mut rt = runtime(config);
        let mut g = rng(10);
        let (av, bv) = (random(&mut g, l), random(&mut g, l));
        let a = rt.register(av.clone(), l).unwrap();
        let b = rt.register(bv.clone(), l).unwrap();
        let c = rt.create(l).unwrap();
        let dv = random(&mut g, l);
        let d = rt.register(dv.clone(), l).unwrap();
        let e = rt.create(l).unwrap();

        let pause = rt.backend().pause();
        multiply(&mut rt, 0, a, b, c).unwrap();
        let resume = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            drop(pause);
        });
        rt.write(a, bv.clone()).unwrap();
        multiply(&mut rt, 1, d, d, e).unwrap();
        resume.join().unwrap();

        let what = format!("{alloc}, lazy release {lazy}, budget {budget}");
        assert_close(rt.read(c).unwrap(), &product(&av, &bv, l), &what);
        assert_close(rt.read(e).unwrap(), &product(&dv, &dv, l), &what);
        if budget == tight {
            assert!(rt.stats().evictions > 0, "{what}: nothing was evicted");
        }
        rt.audit().unwrap();
    }
}

#[test]
fn host_writes_replace_the_value_everywhere() {
    let mut rt = runtime(Config::default());
    let mut g = rng(11);
    let l = square(1, 3);
    let (v1, v2) = (random(&mut g, l), random(&mut g, l));
    let a = rt.register(v1.clone(), l).unwrap();
    let c = rt.create(l).unwrap();
    multiply(&mut rt, 0, a, a, c).unwrap();
    rt.write(a, v2.clone()).unwrap();
    assert_eq!(rt.state(a).unwrap(), State::HostValid);
    assert!(!rt.is_resident(a));
    multiply(&mut rt, 0, a, a, c).unwrap();
    assert_close(rt.read(c).unwrap(), &product(&v2, &v2, l), "new value used");
    rt.write(c, v1.clone()).unwrap(); // a GPU-only object can be overwritten from the host too
    assert_eq!(rt.read(c).unwrap(), v1.as_slice());
    rt.audit().unwrap();
}

#[test]
fn misuse_returns_typed_errors_and_changes_nothing() {
    let l = square(2, 4);
    let mut rt = runtime(Config::default().with_budget(2 * l.bytes()).with_streams(2));
    let mut g = rng(12);
    let a = rt.register(random(&mut g, l), l).unwrap();
    let b = rt.register(random(&mut g, l), l).unwrap();
    let c = rt.create(l).unwrap();

    let err = multiply(&mut rt, 0, a, b, c).unwrap_err();
    assert_eq!(
        err,
        Error::DoesNotFit {
            needed: 3 * l.bytes(),
            available: 2 * l.bytes(),
            budget: 2 * l.bytes()
        }
    );
    assert!(
        err.to_string()
            .contains(&format!("{} bytes needed", 3 * l.bytes()))
    );

    assert_eq!(touch(&mut rt, &[c]).unwrap_err(), Error::Uninitialized(c));
    assert_eq!(rt.read(c).unwrap_err(), Error::Uninitialized(c));
    assert_eq!(
        touch(&mut rt, &[a, a]).unwrap_err(),
        Error::DuplicateAccess(a)
    );
    assert!(matches!(
        rt.launch(2, &[Access::read(a)], |_| Ok(())),
        Err(Error::NoSuchStream {
            stream: 2,
            streams: 2
        })
    ));
    assert!(matches!(
        rt.register(vec![], l),
        Err(Error::LengthMismatch {
            expected: 32,
            got: 0,
            ..
        })
    ));
    assert!(matches!(
        rt.write(a, vec![]),
        Err(Error::LengthMismatch { .. })
    ));
    // Writing into an object the launch only reads.
    let n = side(l);
    let misuse = rt.launch(0, &[Access::read(a), Access::read(b)], |launch| {
        let item = GemmItem {
            a: launch.component(0, 0)?,
            b: launch.component(0, 1)?,
            c: launch.component(1, 0)?,
        };
        launch.gemm_batched(&GemmShape::dense(n, n, n), &[item])
    });
    assert!(matches!(misuse, Err(Error::LaunchMisuse(m)) if m.contains("read-only")));
    assert!(matches!(
        rt.launch(0, &[Access::read(a)], |launch| launch
            .component(3, 0)
            .map(|_| ())),
        Err(Error::LaunchMisuse(_))
    ));
    rt.release(b).unwrap();
    assert_eq!(touch(&mut rt, &[b]).unwrap_err(), Error::UnknownObject(b));
    assert_eq!(rt.release(b).unwrap_err(), Error::UnknownObject(b));
    assert!(matches!(
        Runtime::new(HostBackend::new(MIB), Config::default().with_streams(0)),
        Err(Error::InvalidConfig(_))
    ));
    rt.audit().unwrap();
}

#[test]
fn a_failing_launch_reverts_what_it_was_writing() {
    let l = square(1, 3);
    let mut rt = runtime(Config::default());
    let mut g = rng(13);
    let v = random(&mut g, l);
    let a = rt.register(v.clone(), l).unwrap();
    let c = rt.create(l).unwrap();
    let failed = rt.launch(0, &[Access::read(a), Access::write(c)], |_| {
        Err(Error::LaunchMisuse("the work gave up".into()))
    });
    assert!(failed.is_err());
    assert_eq!(rt.state(c).unwrap(), State::Empty, "c never got a value");
    assert!(!rt.is_resident(c));
    // A host-backed object written by a failed launch keeps its host value.
    let failed = rt.launch(0, &[Access::read_write(a)], |_| {
        Err(Error::LaunchMisuse("again".into()))
    });
    assert!(failed.is_err());
    assert_eq!(rt.state(a).unwrap(), State::HostValid);
    assert_eq!(rt.read(a).unwrap(), v.as_slice());
    rt.audit().unwrap();
}

#[test]
fn every_policy_gives_the_same_results_under_pressure() {
    let l = square(2, 6);
    let mut g = rng(14);
    let inputs: Vec<_> = (0..6).map(|_| random(&mut g, l)).collect();
    for policy in PolicyKind::ALL {
        let mut rt = runtime(
            Config::default()
                .with_budget(4 * l.bytes())
                .with_policy(policy),
        );
        let ids: Vec<_> = inputs
            .iter()
            .map(|v| rt.register(v.clone(), l).unwrap())
            .collect();
        let mut outs = Vec::new();
        for i in 0..6 {
            let out = rt.create(l).unwrap();
            rt.begin_vector(&[ids[i], ids[(i + 2) % 6], out]).unwrap();
            multiply(&mut rt, i % 4, ids[i], ids[(i + 2) % 6], out).unwrap();
            outs.push(out);
            rt.audit().unwrap();
        }
        let s = rt.stats();
        assert!(s.evictions > 0 && s.writebacks > 0, "{policy}: {s:?}");
        for (i, &out) in outs.iter().enumerate() {
            let expected = product(&inputs[i], &inputs[(i + 2) % 6], l);
            assert_close(
                rt.read(out).unwrap(),
                &expected,
                &format!("{policy} output {i}"),
            );
        }
        rt.audit().unwrap();
    }
}

#[test]
fn layouts_are_validated() {
    assert!(matches!(Layout::new(0, 3), Err(Error::InvalidLayout(_))));
}
