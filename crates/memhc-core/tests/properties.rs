//! Property tests: random programs of register / create / multiply / touch / host write /
//! release / read / vector boundaries, under random budgets, with every policy, every
//! combination of optimisation switches and one to three streams. After every step the
//! tables pass `audit()` and the budget holds; every read returns the last value written
//! (nothing is lost through eviction, reuse or write-back); where the event log is on, its
//! counts are the statistics' at the end. Unified memory runs the same
//! programs with managed memory and no budget pressure (it never evicts).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use common::workload::{Action, config, creates, program, resolve, unified_config};
use common::{assert_close, multiply, touch};
use memhc_core::{Config, Error, EventKind, EventLog, ObjectId, Runtime, Stats};
use memhc_host::host::HostBackend;
use proptest::prelude::*;

/// Runs a resolved program and checks it step by step. Object creation has no device effect,
/// so all objects are created first; then the policy gets the future use sequence.
fn check(config: Config, actions: &[Action], uses: &[ObjectId]) -> Result<(), TestCaseError> {
    let mut rt = Runtime::new(HostBackend::new(1 << 24), config.clone()).unwrap();
    check_with(&mut rt, &config, actions, uses)
}

fn check_with(
    rt: &mut Runtime<HostBackend>,
    config: &Config,
    actions: &[Action],
    uses: &[ObjectId],
) -> Result<(), TestCaseError> {
    let streams = config.streams;
    let budget = config.budget.unwrap_or(0);
    for action in actions.iter().filter(|a| creates(a)) {
        match action {
            // Every other host-backed object lives in the backend's host memory, filled in
            // place: copied in without staging, it must behave as a vector does.
            Action::Register(id, layout, data) if id.index() % 2 == 1 => {
                let mut host = rt.alloc_host(*layout).unwrap();
                host.as_mut_slice().unwrap().copy_from_slice(data);
                prop_assert_eq!(rt.register_host(host, *layout).unwrap(), *id)
            }
            Action::Register(id, layout, data) => {
                prop_assert_eq!(rt.register(data.clone(), *layout).unwrap(), *id)
            }
            Action::Create(id, layout) => prop_assert_eq!(rt.create(*layout).unwrap(), *id),
            _ => {}
        }
    }
    rt.set_future(uses).unwrap();
    // What the program reads is announced: with early read-back on, it is copied back as soon
    // as its last writer is queued.
    for action in actions {
        if let Action::Read(id, _) = action {
            rt.expect_read(*id).unwrap();
        }
    }
    for (i, action) in actions.iter().enumerate().filter(|(_, a)| !creates(a)) {
        match action {
            Action::Multiply {
                a,
                b,
                out,
                stream,
                expected,
            } => {
                let r = multiply(rt, stream % streams, *a, *b, *out);
                match expected {
                    Some(_) => prop_assert!(r.is_ok(), "step {i}: {r:?}"),
                    None => {
                        prop_assert!(matches!(r, Err(Error::Uninitialized(_))), "step {i}: {r:?}")
                    }
                }
            }
            Action::Touch(ids, ok) => {
                let r = touch(rt, ids);
                prop_assert_eq!(r.is_ok(), *ok, "step {}: {:?}", i, r);
            }
            Action::HostWrite(id, data) => rt.write(*id, data.clone()).unwrap(),
            Action::Release(id) => rt.release(*id).unwrap(),
            Action::Read(id, expected) => match (rt.read(*id), expected) {
                (Ok(got), Some(want)) => assert_close(got, want, &format!("step {i}: read {id}")),
                (Err(Error::Uninitialized(_)), None) => {}
                (r, want) => prop_assert!(false, "step {i}: read {id} gave {r:?}, model {want:?}"),
            },
            Action::BeginVector(ids) => rt.begin_vector(ids).unwrap(),
            Action::Register(..) | Action::Create(..) => {}
        }
        if let Err(e) = rt.audit() {
            prop_assert!(false, "step {i} ({action:?}): {e}");
        }
        prop_assert!(rt.used_bytes() <= budget);
    }
    if let Some(log) = rt.events() {
        prop_assert_eq!(log_totals(log), stats_totals(&rt.stats()));
    }
    Ok(())
}

/// What the statistics count, counted from an event log.
fn log_totals(log: &EventLog) -> [u64; 13] {
    let count =
        |f: &dyn Fn(&EventKind) -> bool| log.events.iter().filter(|e| f(&e.kind)).count() as u64;
    let bytes = |f: &dyn Fn(&EventKind) -> bool| {
        log.events
            .iter()
            .filter(|e| f(&e.kind))
            .map(|e| e.bytes)
            .sum::<u64>()
    };
    [
        count(&|k| *k == EventKind::Alloc),
        count(&|k| *k == EventKind::Free),
        count(&|k| *k == EventKind::PoolReuse),
        count(&|k| *k == EventKind::Handover),
        count(&|k| *k == EventKind::ArenaAlloc),
        count(&|k| matches!(k, EventKind::Hit { .. })),
        count(&|k| matches!(k, EventKind::Miss { .. })),
        count(&|k| *k == EventKind::Evict),
        count(&|k| matches!(k, EventKind::WriteBack | EventKind::WriteBackIssued)),
        count(&|k| *k == EventKind::Prefetch),
        bytes(&|k| matches!(k, EventKind::CopyH2D { .. })),
        bytes(&|k| matches!(k, EventKind::CopyD2H { .. })),
        log.events
            .iter()
            .map(|e| match e.kind {
                EventKind::Gemm { flops, .. } => flops,
                _ => 0,
            })
            .sum(),
    ]
}

fn stats_totals(s: &Stats) -> [u64; 13] {
    [
        s.allocations,
        s.frees,
        s.pool_reuses,
        s.handovers,
        s.arena_allocations,
        s.hits,
        s.misses,
        s.evictions,
        s.writebacks,
        s.prefetches,
        s.h2d_bytes,
        s.d2h_bytes,
        s.flops,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_keep_every_invariant(config in config(), steps in program(80)) {
        let (actions, uses) = resolve(&steps);
        check(config, &actions, &uses)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_in_unified_mode_keep_every_invariant(
        config in unified_config(),
        steps in program(80),
    ) {
        let (actions, uses) = resolve(&steps);
        let mut rt = Runtime::new(HostBackend::new(1 << 24), config.clone()).unwrap();
        check_with(&mut rt, &config, &actions, &uses)?;
        prop_assert_eq!(rt.stats().evictions, 0);
    }
}

/// The generator keeps the property test honest: its programs really launch contractions,
/// evict, write back, hit and prefetch (a change that made them trivial would fail here).
#[test]
fn programs_exercise_eviction_and_write_back() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut launches, mut evictions, mut writebacks, mut hits) = (0, 0, 0, 0);
    let (mut handovers, mut arena, mut restarts, mut slack) = (0, 0, 0, 0);
    let (mut prefetches, mut prefetch_hits, mut async_writebacks) = (0, 0, 0);
    let mut early_read_backs = 0;
    for _ in 0..80 {
        let config = config().new_tree(&mut runner).unwrap().current();
        let steps = program(80).new_tree(&mut runner).unwrap().current();
        let (actions, uses) = resolve(&steps);
        launches += actions
            .iter()
            .filter(|a| {
                matches!(
                    a,
                    Action::Multiply {
                        expected: Some(_),
                        ..
                    }
                )
            })
            .count();
        let mut rt = Runtime::new(HostBackend::new(1 << 24), config.clone()).unwrap();
        check_with(&mut rt, &config, &actions, &uses).unwrap();
        let s = rt.stats();
        evictions += s.evictions;
        writebacks += s.writebacks;
        hits += s.hits;
        handovers += s.handovers;
        arena += s.arena_allocations;
        restarts += s.arena_restarts;
        slack += s.pool_slack_bytes;
        prefetches += s.prefetches;
        prefetch_hits += s.prefetch_hits;
        async_writebacks += s.async_writebacks;
        early_read_backs += s.early_read_backs;
    }
    assert!(
        early_read_backs > 10,
        "only {early_read_backs} early read-backs"
    );
    assert!(
        prefetches > 50 && prefetch_hits > 30 && async_writebacks > 10,
        "{prefetches} prefetches, {prefetch_hits} prefetch hits, {async_writebacks} asynchronous \
         write-backs"
    );
    assert!(
        handovers > 20 && arena > 100 && restarts > 0 && slack > 0,
        "{handovers} handovers, {arena} arena allocations, {restarts} restarts, {slack} slack bytes"
    );
    assert!(launches > 300, "only {launches} launches");
    assert!(
        evictions > 100 && writebacks > 30 && hits > 200,
        "{evictions} evictions, {writebacks} write-backs, {hits} hits"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The data-less backend drives the runtime exactly as a real one does: on the same
    /// program, every statistic is identical (so dry runs of a queue tell the truth).
    #[test]
    fn the_null_backend_reproduces_every_statistic(
        config in prop_oneof![3 => config(), 1 => unified_config()],
        steps in program(80),
    ) {
        use memhc_host::null::NullBackend;
        let (actions, uses) = resolve(&steps);
        let mut host = Runtime::new(HostBackend::new(1 << 24), config.clone()).unwrap();
        check_with(&mut host, &config, &actions, &uses)?;
        let mut null = Runtime::new(NullBackend::new(1 << 24), config.clone()).unwrap();
        for action in actions.iter().filter(|a| creates(a)) {
            match action {
                Action::Register(_, layout, data) => { null.register(data.clone(), *layout).unwrap(); }
                Action::Create(_, layout) => { null.create(*layout).unwrap(); }
                _ => {}
            }
        }
        null.set_future(&uses).unwrap();
        for action in &actions {
            if let Action::Read(id, _) = action {
                null.expect_read(*id).unwrap();
            }
        }
        for action in actions.iter().filter(|a| !creates(a)) {
            // Outcomes must match the host run's (values aside: the null backend has none).
            let _ = match action {
                Action::Multiply { a, b, out, stream, .. } => multiply(&mut null, stream % config.streams, *a, *b, *out).map(|_| ()),
                Action::Touch(ids, _) => touch(&mut null, ids),
                Action::HostWrite(id, data) => null.write(*id, data.clone()),
                Action::Release(id) => null.release(*id),
                Action::Read(id, _) => null.read(*id).map(|_| ()),
                Action::BeginVector(ids) => null.begin_vector(ids),
                Action::Register(..) | Action::Create(..) => Ok(()),
            };
            null.audit().map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        prop_assert_eq!(null.stats(), host.stats());
    }
}
