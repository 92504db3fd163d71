//! The object lifecycle under random programs: the runtime only ever takes the transitions of
//! the table (written out again here, independently of the library), never has one refused,
//! and each operation takes only the transitions it may: a host write exactly one
//! `HostWritten`, a release exactly one `Released`, a read at most one `Synced`, a launch
//! refused up front none. The transitions taken and the statistics tell the same story
//! (evictions, write-backs, copies), and what enters a state minus what leaves it is the
//! number of objects in it. The tables pass `audit()` after every step. The same programs run
//! in unified memory mode and with faults injected (which is where launches roll back).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use common::workload::{Action, config, creates, program, resolve, unified_config};
use common::{multiply, touch};
use memhc_core::backend::fault::{FaultInjector, FaultPlan};
use memhc_core::lifecycle::{Transition, TransitionLog};
use memhc_core::{Backend, BackendOp, Config, Error, ObjectId, Runtime, State};
use memhc_host::host::HostBackend;
use proptest::prelude::*;

use State::{Consistent, DeviceDirty, Empty, HostValid, WritingBack};
use Transition::*;

/// Every legal `(from, transition, to)`, as the table in `memhc_core::lifecycle` has it
/// (`None`: no object).
const LEGAL: [(Option<State>, Transition, Option<State>); 26] = [
    (None, Registered, Some(HostValid)),
    (None, Created, Some(Empty)),
    (Some(HostValid), CopiedIn, Some(Consistent)),
    (Some(HostValid), Prefetched, Some(Consistent)),
    (Some(DeviceDirty), WriteBackIssued, Some(WritingBack)),
    (Some(WritingBack), WriteBackLanded, Some(HostValid)),
    (Some(WritingBack), HostWritten, Some(HostValid)),
    (Some(WritingBack), Released, None),
    (Some(Empty), WrittenOnDevice, Some(DeviceDirty)),
    (Some(HostValid), WrittenOnDevice, Some(DeviceDirty)),
    (Some(Consistent), WrittenOnDevice, Some(DeviceDirty)),
    (Some(DeviceDirty), WrittenOnDevice, Some(DeviceDirty)),
    (Some(DeviceDirty), Synced, Some(Consistent)),
    (Some(DeviceDirty), WrittenBack, Some(Consistent)),
    (Some(Consistent), Evicted, Some(HostValid)),
    (Some(Consistent), Uncached, Some(HostValid)),
    (Some(DeviceDirty), RolledBack, Some(HostValid)),
    (Some(DeviceDirty), RolledBack, Some(Empty)),
    (Some(Empty), HostWritten, Some(HostValid)),
    (Some(HostValid), HostWritten, Some(HostValid)),
    (Some(Consistent), HostWritten, Some(HostValid)),
    (Some(DeviceDirty), HostWritten, Some(HostValid)),
    (Some(Empty), Released, None),
    (Some(HostValid), Released, None),
    (Some(Consistent), Released, None),
    (Some(DeviceDirty), Released, None),
];

/// `(from, transition, to, count)` taken between two snapshots of a log.
type Taken = Vec<(Option<State>, Transition, Option<State>, u64)>;

fn since(before: &TransitionLog, after: &TransitionLog) -> Taken {
    after
        .taken()
        .filter_map(|(f, t, to, n)| {
            let old = before
                .taken()
                .find(|&(f2, t2, to2, _)| (f2, t2, to2) == (f, t, to))
                .map_or(0, |x| x.3);
            (n > old).then_some((f, t, to, n - old))
        })
        .collect()
}

fn count(taken: &Taken, t: Transition) -> u64 {
    taken.iter().filter(|x| x.1 == t).map(|x| x.3).sum()
}

/// The transitions an action may take, and how many of each at most (`u64::MAX`: any number).
fn allowed(action: &Action, t: Transition) -> u64 {
    match (action, t) {
        // A launch: its objects are copied in, its output written (and synced eagerly, or
        // rolled back), other objects written back and evicted to make room, and without dedup
        // its consistent objects dropped after it.
        (Action::Multiply { .. }, WrittenOnDevice | Synced | RolledBack) => 1,
        // With prefetch on, launches also prefetch after them, write back asynchronously, and
        // wait for write-backs in flight of the objects they (or their prefetches) use.
        (
            Action::Multiply { .. } | Action::Touch(..),
            CopiedIn | WrittenBack | Evicted | Prefetched | WriteBackIssued | WriteBackLanded,
        ) => u64::MAX,
        (Action::Read(..), WriteBackLanded) => 1,
        (Action::Multiply { .. } | Action::Touch(..), Uncached) => 3,
        (Action::HostWrite(..), HostWritten) => 1,
        (Action::Release(..), Released) => 1,
        (Action::Read(..), Synced) => 1,
        _ => 0,
    }
}

/// Runs `action`, returning its outcome.
fn act<B: Backend>(rt: &mut Runtime<B>, streams: usize, action: &Action) -> Result<(), Error> {
    match action {
        Action::Multiply {
            a, b, out, stream, ..
        } => multiply(rt, stream % streams, *a, *b, *out),
        Action::Touch(ids, _) => touch(rt, ids),
        Action::HostWrite(id, data) => rt.write(*id, data.clone()),
        Action::Release(id) => rt.release(*id),
        Action::Read(id, _) => rt.read(*id).map(|_| ()),
        Action::BeginVector(ids) => rt.begin_vector(ids),
        Action::Register(..) | Action::Create(..) => Ok(()),
    }
}

/// The state of every object still alive.
fn states<B: Backend>(rt: &Runtime<B>, created: u64) -> Vec<(ObjectId, State)> {
    (0..created)
        .map(ObjectId::from_index)
        .filter_map(|id| rt.state(id).ok().map(|s| (id, s)))
        .collect()
}

/// Runs a resolved program and checks the lifecycle after every step; `arm` gets the backend
/// once the objects exist. `exact`: no faults, so every outcome is the model's and the state
/// each operation leaves is known.
fn check<B: Backend>(
    rt: &mut Runtime<B>,
    config: &Config,
    actions: &[Action],
    uses: &[ObjectId],
    arm: impl FnOnce(&B),
    exact: bool,
) -> Result<(), TestCaseError> {
    let mut created = 0u64;
    for action in actions.iter().filter(|a| creates(a)) {
        match action {
            Action::Register(_, layout, data) => rt.register(data.clone(), *layout).unwrap(),
            Action::Create(_, layout) => rt.create(*layout).unwrap(),
            _ => continue,
        };
        created += 1;
    }
    prop_assert_eq!(
        rt.transitions().count(Registered) + rt.transitions().count(Created),
        created
    );
    rt.set_future(uses).unwrap();
    arm(rt.backend());
    for (i, action) in actions.iter().enumerate().filter(|(_, a)| !creates(a)) {
        let before = rt.transitions().clone();
        let states_before = states(rt, created);
        let outcome = act(rt, config.streams, action);
        let taken = since(&before, rt.transitions());
        let at = format!("step {i} ({action:?}): {outcome:?}, took {taken:?}");

        prop_assert_eq!(rt.transitions().refused_total(), 0, "{}", at);
        for &(from, t, to, _) in &taken {
            prop_assert!(LEGAL.contains(&(from, t, to)), "illegal move, {}", at);
        }
        for t in Transition::ALL {
            prop_assert!(count(&taken, t) <= allowed(action, t), "{:?}, {}", t, at);
        }
        if let Err(e) = rt.audit() {
            prop_assert!(false, "{at}: {e}");
        }
        match (action, &outcome) {
            // Written or released even if dropping the device copy failed.
            (Action::HostWrite(id, _), _) => {
                prop_assert_eq!(count(&taken, HostWritten), 1, "{}", at);
                prop_assert_eq!(rt.state(*id).unwrap(), HostValid, "{}", at);
                prop_assert!(!rt.is_resident(*id), "{}", at);
            }
            (Action::Release(_), _) => prop_assert_eq!(count(&taken, Released), 1, "{}", at),
            // A launch or read refused up front changes nothing.
            (_, Err(Error::Uninitialized(_))) => prop_assert!(taken.is_empty(), "{}", at),
            _ => {}
        }
        if !exact {
            continue;
        }
        match action {
            Action::Read(id, Some(_)) => {
                let was = states_before.iter().find(|x| x.0 == *id).map(|x| x.1);
                let synced = u64::from(was == Some(DeviceDirty));
                prop_assert_eq!(count(&taken, Synced), synced, "{}", at);
                let now = rt.state(*id).unwrap();
                prop_assert!(matches!(now, HostValid | Consistent), "{now:?}, {at}");
            }
            Action::Multiply {
                out,
                expected: Some(_),
                ..
            } => {
                prop_assert!(outcome.is_ok(), "{}", at);
                prop_assert_eq!(count(&taken, WrittenOnDevice), 1, "{}", at);
                let want = match (config.on_demand_sync, config.dedup) {
                    (true, _) => DeviceDirty,
                    (false, true) => Consistent,
                    (false, false) => HostValid,
                };
                let now = rt.state(*out).unwrap();
                // With prefetch on, the prefetches after the launch may have brought the output
                // back in (caching off, and needed soon). The check also lets it have left the
                // device, which prefetches did until they stopped evicting (2026-11-28).
                let moved = config.prefetch.is_some()
                    && matches!(now, HostValid | WritingBack | Consistent)
                    && rt.is_resident(*out) == (now == Consistent);
                prop_assert!(now == want || moved, "{:?}, want {:?}, {}", now, want, at);
            }
            _ => {}
        }
    }

    // What entered each state, minus what left it, is in it now.
    let now = states(rt, created);
    for s in State::ALL {
        let log = rt.transitions();
        let into: u64 = log.taken().filter(|x| x.2 == Some(s)).map(|x| x.3).sum();
        let out: u64 = log.taken().filter(|x| x.0 == Some(s)).map(|x| x.3).sum();
        let here = now.iter().filter(|x| x.1 == s).count() as u64;
        prop_assert_eq!(into - out, here, "{:?}", s);
    }
    let log = rt.transitions();
    prop_assert_eq!(log.count(Released), created - now.len() as u64);
    // The transitions and the statistics agree.
    let stats = rt.stats();
    prop_assert_eq!(
        log.count(Evicted) + log.count(WriteBackIssued),
        stats.evictions
    );
    prop_assert_eq!(
        log.count(WrittenBack) + log.count(WriteBackIssued),
        stats.writebacks
    );
    prop_assert_eq!(log.count(WriteBackIssued), stats.async_writebacks);
    prop_assert_eq!(log.count(Prefetched), stats.prefetches);
    if config.managed {
        prop_assert_eq!(log.count(Evicted) + log.count(WrittenBack), 0);
    } else if exact && config.packing {
        // Packed: one copy per object each way, and only these transitions copy.
        prop_assert_eq!(
            log.count(CopiedIn) + log.count(Prefetched),
            stats.h2d_copies
        );
        prop_assert_eq!(
            log.count(Synced) + log.count(WrittenBack) + log.count(WriteBackIssued),
            stats.d2h_copies
        );
    }
    Ok(())
}

/// Random faults in every kind of backend call.
fn plan() -> impl Strategy<Value = FaultPlan> {
    let ops = [
        BackendOp::Alloc,
        BackendOp::Free,
        BackendOp::CopyH2D,
        BackendOp::CopyD2H,
        BackendOp::Gemm,
        BackendOp::Sync,
    ];
    (
        proptest::sample::subsequence(ops.to_vec(), 1..=ops.len()),
        0.01f64..0.2,
        any::<u64>(),
    )
        .prop_map(|(ops, p, seed)| FaultPlan::random(&ops, p, seed))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_take_only_legal_transitions(
        config in prop_oneof![3 => config(), 1 => unified_config()],
        steps in program(80),
    ) {
        let (actions, uses) = resolve(&steps);
        let mut rt = Runtime::new(HostBackend::new(1 << 24), config.clone()).unwrap();
        check(&mut rt, &config, &actions, &uses, |_| {}, true)?;
    }

    #[test]
    fn random_programs_with_faults_take_only_legal_transitions(
        config in prop_oneof![3 => config(), 1 => unified_config()],
        steps in program(80),
        plan in plan(),
    ) {
        let (actions, _) = resolve(&steps);
        let mut rt = Runtime::new(FaultInjector::new(HostBackend::new(1 << 24)), config.clone()).unwrap();
        check(&mut rt, &config, &actions, &[], |b| b.arm(plan), false)?;
    }
}

/// The property is not vacuous: over a few programs, with and without faults, every legal
/// move of the table is taken.
#[test]
fn programs_take_every_legal_transition() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut seen: Vec<(Option<State>, Transition, Option<State>)> = Vec::new();
    for case in 0..120 {
        let config = if case % 4 == 3 {
            unified_config().new_tree(&mut runner).unwrap().current()
        } else {
            config().new_tree(&mut runner).unwrap().current()
        };
        let steps = program(80).new_tree(&mut runner).unwrap().current();
        let (actions, uses) = resolve(&steps);
        let log = if case % 2 == 0 {
            let mut rt = Runtime::new(HostBackend::new(1 << 24), config.clone()).unwrap();
            check(&mut rt, &config, &actions, &uses, |_| {}, true).unwrap();
            rt.transitions().clone()
        } else {
            let plan = plan().new_tree(&mut runner).unwrap().current();
            let mut rt = Runtime::new(
                FaultInjector::new(HostBackend::new(1 << 24)),
                config.clone(),
            )
            .unwrap();
            check(&mut rt, &config, &actions, &[], |b| b.arm(plan), false).unwrap();
            rt.transitions().clone()
        };
        for (f, t, to, _) in log.taken() {
            if !seen.contains(&(f, t, to)) {
                seen.push((f, t, to));
            }
        }
    }
    let missing: Vec<_> = LEGAL.iter().filter(|m| !seen.contains(m)).collect();
    assert!(missing.is_empty(), "never taken: {missing:?}");
}
