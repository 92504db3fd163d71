//! Each DRGPUM pattern, planted in a tiny program on the host backend, is found by the report,
//! at the distance and with the bytes planted; a clean program shows none; and the top two
//! memory peaks name the objects live at each.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: unwrap what must succeed

use memhc_core::{Access, Alloc, Config, Layout, Mode, ObjectId, Runtime};
use memhc_host::HostBackend;
use memhc_trace::{Finding, Pattern, Report, ReportOptions};
use num_complex::Complex64 as C;

/// Every object is one component of 4 elements: 64 bytes.
const BYTES: u64 = 64;

fn layout() -> Layout {
    Layout::new(1, 4).unwrap()
}

fn runtime(config: Config) -> Runtime<HostBackend> {
    Runtime::new(
        HostBackend::new(1 << 20),
        config.with_streams(1).with_events(true),
    )
    .unwrap()
}

fn input(rt: &mut Runtime<HostBackend>) -> ObjectId {
    rt.register(vec![C::new(1.0, 0.0); 4], layout()).unwrap()
}

/// A launch reading `reads` and writing `writes` (no GEMM: the report looks at uses).
fn step(rt: &mut Runtime<HostBackend>, reads: &[ObjectId], writes: &[ObjectId]) {
    let accesses: Vec<Access> = reads
        .iter()
        .map(|&o| Access::read(o))
        .chain(writes.iter().map(|&o| Access::write(o)))
        .collect();
    rt.launch(0, &accesses, |_| Ok(())).unwrap();
}

fn report(rt: &mut Runtime<HostBackend>) -> Report {
    Report::of(&rt.take_events().unwrap(), ReportOptions::default())
}

fn found(report: &Report, pattern: Pattern) -> Vec<Finding> {
    report.of_pattern(pattern).copied().collect()
}

/// Every pattern but `pattern` is absent.
fn only(report: &Report, pattern: Pattern) {
    for p in Pattern::ALL.into_iter().filter(|&p| p != pattern) {
        assert_eq!(found(report, p), [], "{} found", p.name());
    }
}

#[test]
fn a_clean_program_shows_no_pattern() {
    // (The modes without the free pool free a released object's memory, so a later
    // allocation of its size is redundant: those are not clean.)
    for alloc in Alloc::ALL {
        let mut rt = runtime(Config::default().with_alloc(alloc));
        let (a, b) = (input(&mut rt), input(&mut rt));
        let c = rt.create(layout()).unwrap();
        step(&mut rt, &[a, b], &[c]);
        rt.release(a).unwrap();
        rt.release(b).unwrap();
        let d = rt.create(layout()).unwrap();
        step(&mut rt, &[c], &[d]);
        rt.release(c).unwrap();
        assert_eq!(rt.read(d).unwrap().len(), 4);
        rt.release(d).unwrap();
        let r = report(&mut rt);
        assert_eq!(r.findings, [], "{alloc}");
    }
}

#[test]
fn late_deallocation_is_the_steps_from_the_last_use_to_the_release() {
    let mut rt = runtime(Config::default());
    let a = input(&mut rt);
    step(&mut rt, &[a], &[]); // queue 0: a's last use
    for _ in 0..3 {
        let x = input(&mut rt);
        step(&mut rt, &[x], &[]); // queues 1, 2, 3
        rt.release(x).unwrap();
    }
    rt.release(a).unwrap(); // at queue 3
    let r = report(&mut rt);
    let late = found(&r, Pattern::LateDeallocation);
    assert_eq!(late.len(), 1);
    assert_eq!((late[0].object, late[0].queue), (a, 0));
    assert_eq!((late[0].distance, late[0].bytes), (3, BYTES));
    only(&r, Pattern::LateDeallocation);
}

#[test]
fn temporary_idleness_needs_two_launches_between_uses() {
    let mut rt = runtime(Config::default());
    let a = input(&mut rt);
    step(&mut rt, &[a], &[]); // 0
    let x = input(&mut rt);
    step(&mut rt, &[x, a], &[]); // 1: one step after: not idle
    step(&mut rt, &[x], &[]); // 2
    step(&mut rt, &[x], &[]); // 3
    step(&mut rt, &[a, x], &[]); // 4: launches 2 and 3 ran between
    rt.release(a).unwrap();
    rt.release(x).unwrap();
    let r = report(&mut rt);
    let idle = found(&r, Pattern::TemporaryIdleness);
    assert_eq!(idle.len(), 1, "{idle:?}");
    assert_eq!((idle[0].object, idle[0].queue, idle[0].distance), (a, 1, 2));
    only(&r, Pattern::TemporaryIdleness);
}

#[test]
fn a_dead_write_is_a_value_overwritten_unread() {
    let mut rt = runtime(Config::default());
    let a = input(&mut rt);
    let c = rt.create(layout()).unwrap();
    step(&mut rt, &[a], &[c]); // 0: c written
    step(&mut rt, &[a], &[]); // 1
    step(&mut rt, &[a], &[c]); // 2: written again, nothing read it
    assert_eq!(rt.read(c).unwrap().len(), 4); // the second value is read
    rt.release(a).unwrap();
    rt.release(c).unwrap();
    let r = report(&mut rt);
    let dead = found(&r, Pattern::DeadWrite);
    assert_eq!(dead.len(), 1);
    assert_eq!((dead[0].object, dead[0].queue, dead[0].distance), (c, 0, 2));
    only(&r, Pattern::DeadWrite);

    // The host's write over a registered value nobody read is one too.
    let mut rt = runtime(Config::default());
    let a = input(&mut rt);
    rt.write(a, vec![C::new(2.0, 0.0); 4]).unwrap();
    step(&mut rt, &[a], &[]);
    rt.release(a).unwrap();
    let r = report(&mut rt);
    assert_eq!(found(&r, Pattern::DeadWrite).len(), 1);
    only(&r, Pattern::DeadWrite);
}

#[test]
fn a_leak_is_memory_held_when_the_log_ends() {
    let mut rt = runtime(Config::default());
    let a = input(&mut rt);
    step(&mut rt, &[a], &[]); // 0, never released
    let x = input(&mut rt);
    step(&mut rt, &[x], &[]); // 1
    rt.release(x).unwrap();
    let r = report(&mut rt);
    let leaks = found(&r, Pattern::Leak);
    assert_eq!(leaks.len(), 1);
    assert_eq!(
        (leaks[0].object, leaks[0].distance, leaks[0].bytes),
        (a, 1, BYTES)
    );
    only(&r, Pattern::Leak);
}

#[test]
fn naive_allocation_is_redundant_and_copies_repeat() {
    let mut rt = runtime(Config::for_mode(Mode::Naive));
    let (a, b) = (input(&mut rt), input(&mut rt));
    step(&mut rt, &[a], &[]); // 0: a allocated, copied in, freed after
    step(&mut rt, &[b], &[]); // 1: b allocated anew where a's memory was freed
    step(&mut rt, &[a], &[]); // 2: a copied in again
    rt.release(a).unwrap();
    rt.release(b).unwrap();
    let r = report(&mut rt);
    let redundant = found(&r, Pattern::RedundantAllocation);
    assert_eq!(redundant.len(), 2, "{redundant:?}");
    assert_eq!((redundant[0].object, redundant[0].other), (b, Some(a)));
    assert_eq!((redundant[0].queue, redundant[0].distance), (1, 1));
    assert_eq!((redundant[1].object, redundant[1].other), (a, Some(b)));
    let repeated = found(&r, Pattern::RepeatedCopy);
    assert_eq!(repeated.len(), 1);
    assert_eq!((repeated[0].object, repeated[0].queue), (a, 0));
    assert_eq!(repeated[0].distance, 2);
    assert_eq!(found(&r, Pattern::RefetchAfterEviction), []);

    // The same program in the optimal mode: one allocation each, one copy each.
    let mut rt = runtime(Config::default());
    let (a, b) = (input(&mut rt), input(&mut rt));
    step(&mut rt, &[a], &[]);
    step(&mut rt, &[b], &[]);
    step(&mut rt, &[a], &[]);
    rt.release(a).unwrap();
    rt.release(b).unwrap();
    let r = report(&mut rt);
    assert_eq!(found(&r, Pattern::RedundantAllocation), []);
    assert_eq!(found(&r, Pattern::RepeatedCopy), []);
}

#[test]
fn an_evicted_input_copied_in_again_is_a_refetch() {
    // Room for two objects: each launch evicts the previous one's.
    let mut rt = runtime(Config::default().with_budget(2 * BYTES as usize));
    let (a, b) = (input(&mut rt), input(&mut rt));
    step(&mut rt, &[a], &[]); // 0
    let x = input(&mut rt);
    step(&mut rt, &[b, x], &[]); // 1: a evicted
    rt.release(x).unwrap();
    step(&mut rt, &[a], &[]); // 2: a copied in again
    rt.release(a).unwrap();
    rt.release(b).unwrap();
    let r = report(&mut rt);
    let refetch = found(&r, Pattern::RefetchAfterEviction);
    assert_eq!(refetch.len(), 1, "{refetch:?}");
    assert_eq!(
        (refetch[0].object, refetch[0].queue, refetch[0].distance),
        (a, 1, 1)
    );
    assert_eq!(found(&r, Pattern::RepeatedCopy), []);
    assert_eq!(found(&r, Pattern::RedundantAllocation), []);
}

#[test]
fn a_prefetch_too_far_ahead_is_an_early_allocation_and_an_unused_one_is_found() {
    let mut rt = runtime(Config::default().with_prefetch(Some(6)));
    let (a, b, c) = (input(&mut rt), input(&mut rt), input(&mut rt));
    let outs: Vec<ObjectId> = (0..3).map(|_| rt.create(layout()).unwrap()).collect();
    rt.set_future(&[a, outs[0], b, outs[1], c, outs[2]])
        .unwrap();
    step(&mut rt, &[a], &[outs[0]]); // 0: b and c are prefetched after it
    step(&mut rt, &[b], &[outs[1]]); // 1
    rt.release(c).unwrap(); // c was never used
    for o in [a, b, outs[0], outs[1]] {
        rt.release(o).unwrap();
    }
    assert_eq!(rt.stats().prefetch_wasted, 1);
    let r = report(&mut rt);
    let early = found(&r, Pattern::EarlyAllocation);
    assert_eq!(early.len(), 1, "{early:?}");
    assert_eq!(
        (early[0].object, early[0].queue, early[0].distance),
        (b, 0, 1)
    );
    let unused = found(&r, Pattern::UnusedAllocation);
    assert_eq!(unused.len(), 1, "{unused:?}");
    assert_eq!((unused[0].object, unused[0].distance), (c, 1));
    // The launches' outputs were written and released unread: no dead write, since nothing
    // overwrote them.
    assert_eq!(found(&r, Pattern::DeadWrite), []);
}

#[test]
fn the_top_two_peaks_name_the_objects_live_at_each() {
    let config = Config {
        lazy_release: false,
        ..Config::default()
    };
    let mut rt = runtime(config);
    let (a, b) = (input(&mut rt), input(&mut rt));
    let c = rt.create(layout()).unwrap();
    step(&mut rt, &[a, b], &[c]); // a, b, c: 192 bytes
    rt.release(a).unwrap();
    rt.release(b).unwrap(); // c: 64
    let d = rt.create(layout()).unwrap();
    step(&mut rt, &[c], &[d]); // c, d: 128
    rt.release(c).unwrap();
    rt.release(d).unwrap();
    let r = report(&mut rt);
    assert_eq!(r.peaks.len(), 2);
    assert_eq!((r.peaks[0].held, r.peaks[0].queue), (3 * BYTES, 0));
    let live = |i: usize| {
        let mut o: Vec<ObjectId> = r.peaks[i].objects.iter().map(|&(o, _)| o).collect();
        o.sort();
        o
    };
    assert_eq!(live(0), [a, b, c]);
    assert_eq!((r.peaks[1].held, r.peaks[1].queue), (2 * BYTES, 1));
    assert_eq!(live(1), [c, d]);
    let text = r.text("test");
    assert!(text.contains("peak 1: 192 B in use"), "{text}");
    assert!(text.contains("late deallocation"), "{text}");
}
