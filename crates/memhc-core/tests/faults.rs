//! Fault injection: random programs run on a backend that fails allocations, copies, GEMMs,
//! frees and event calls at random. Every failure comes back as an error (never a panic), the
//! tables pass `audit()` after every step, and no object's value is lost or corrupted: after a
//! failed launch, its output holds its old value, no value, or (when only the copy back after
//! the work failed) the new one, never anything else; every other object is untouched. The
//! same holds in unified memory mode, where the faults hit managed allocations, the host's
//! in-place writes and reads, and prefetches.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use std::collections::HashMap;

use common::workload::{
    Action, creates, largest_object, largest_working_set, prefetch, program, resolve,
    reuse_tolerance,
};
use common::{multiply, product, touch};
use memhc_core::backend::fault::{FaultInjector, FaultPlan};
use memhc_core::{
    BackendError, BackendOp, Complex64, Config, Error, Mode, ObjectId, PolicyKind, Runtime,
};
use memhc_host::host::HostBackend;
use memhc_testkit::conformance::{TOLERANCE, relative_error};
use proptest::prelude::*;

const ALL_OPS: [BackendOp; 6] = [
    BackendOp::Alloc,
    BackendOp::Free,
    BackendOp::CopyH2D,
    BackendOp::CopyD2H,
    BackendOp::Gemm,
    BackendOp::Sync,
];

fn same(x: &[Complex64], y: &[Complex64]) -> bool {
    relative_error(x, y) <= TOLERANCE
}

/// An error a fault may legitimately cause.
fn injected(e: &Error, oom: bool) -> bool {
    match e {
        Error::Backend(BackendError::Injected { .. }) => true,
        // An out-of-memory fault with nothing left to evict (or, in unified mode, never any).
        Error::DoesNotFit { .. } | Error::ManagedDoesNotFit { .. } => oom,
        _ => false,
    }
}

type Rt = Runtime<FaultInjector<HostBackend>>;

/// The value the runtime holds for `id` now, read with faults disarmed (`None`: no value).
fn current(rt: &mut Rt, id: ObjectId) -> Option<Vec<Complex64>> {
    match rt.read(id) {
        Ok(v) => Some(v.to_vec()),
        Err(Error::Uninitialized(_)) => None,
        Err(e) => panic!("reading {id} with faults disarmed: {e}"),
    }
}

fn run(
    config: Config,
    actions: &[Action],
    uses: &[ObjectId],
    plan: FaultPlan,
) -> Result<u64, TestCaseError> {
    let oom = plan.alloc_as_oom;
    let streams = config.streams;
    let budget = config.budget.unwrap_or(0);
    let mut rt: Rt = Runtime::new(FaultInjector::new(HostBackend::new(1 << 24)), config).unwrap();
    let mut model: HashMap<ObjectId, Option<Vec<Complex64>>> = HashMap::new();
    for action in actions.iter().filter(|a| creates(a)) {
        match action {
            Action::Register(_, layout, data) => {
                let id = rt.register(data.clone(), *layout).unwrap();
                model.insert(id, Some(data.clone()));
            }
            Action::Create(_, layout) => {
                let id = rt.create(*layout).unwrap();
                model.insert(id, None);
            }
            _ => {}
        }
    }
    // The future as the model has it (prefetch and Belady use it; faults make the run deviate).
    rt.set_future(uses).unwrap();
    rt.backend().arm(plan.clone());
    for (i, action) in actions.iter().enumerate().filter(|(_, a)| !creates(a)) {
        let failed: Option<Error> = match action {
            Action::Multiply {
                a, b, out, stream, ..
            } => {
                let inputs = model[a].clone().zip(model[b].clone());
                let r = multiply(&mut rt, stream % streams, *a, *b, *out);
                match (inputs, r) {
                    (None, Err(Error::Uninitialized(_))) => None,
                    (None, r) => {
                        return Err(TestCaseError::fail(format!(
                            "step {i}: {r:?} with an input unset"
                        )));
                    }
                    (Some((x, y)), Ok(())) => {
                        model.insert(*out, Some(product(&x, &y, rt.layout(*out).unwrap())));
                        None
                    }
                    (Some((x, y)), Err(e)) => {
                        rt.backend().suspend(true);
                        let new = product(&x, &y, rt.layout(*out).unwrap());
                        let old = model[out].clone();
                        let now = current(&mut rt, *out);
                        let fine = match (&now, &old) {
                            (None, _) => true,
                            (Some(v), Some(o)) if same(v, o) => true,
                            (Some(v), _) => same(v, &new),
                        };
                        prop_assert!(
                            fine,
                            "step {i}: after {e}, the output holds neither its old value, nor none, nor the new one"
                        );
                        model.insert(*out, now);
                        rt.backend().suspend(false);
                        Some(e)
                    }
                }
            }
            Action::Touch(ids, _) => {
                let ready = ids.iter().all(|id| model[id].is_some());
                match touch(&mut rt, ids) {
                    Err(Error::Uninitialized(_)) if !ready => None,
                    Ok(()) if ready => None,
                    Err(e) if ready => Some(e),
                    r => return Err(TestCaseError::fail(format!("step {i}: touch {r:?}"))),
                }
            }
            Action::HostWrite(id, data) => {
                // The host value is replaced even if dropping the stale device copy fails.
                model.insert(*id, Some(data.clone()));
                rt.write(*id, data.clone()).err()
            }
            Action::Release(id) => {
                model.remove(id);
                rt.release(*id).err()
            }
            Action::Read(id, _) => match (rt.read(*id), &model[id]) {
                (Ok(v), Some(want)) => {
                    prop_assert!(same(v, want), "step {i}: read {id} differs from the model");
                    None
                }
                (Err(Error::Uninitialized(_)), None) => None,
                (Err(e), Some(_)) => Some(e),
                (r, want) => {
                    return Err(TestCaseError::fail(format!(
                        "step {i}: read {r:?}, model {want:?}"
                    )));
                }
            },
            Action::BeginVector(ids) => rt.begin_vector(ids).err(),
            Action::Register(..) | Action::Create(..) => None,
        };
        if let Some(e) = failed {
            prop_assert!(
                injected(&e, oom),
                "step {i} ({action:?}) failed with {e}, not an injected fault"
            );
        }
        if let Err(e) = rt.audit() {
            prop_assert!(false, "step {i} ({action:?}): {e}");
        }
        prop_assert!(rt.used_bytes() <= budget);
    }
    // Nothing was lost: every object holds the model's value.
    rt.backend().disarm();
    let ids: Vec<ObjectId> = model.keys().copied().collect();
    for id in ids {
        let now = current(&mut rt, id);
        match (&now, &model[&id]) {
            (None, None) => {}
            (Some(v), Some(w)) => prop_assert!(same(v, w), "{id} lost its value"),
            _ => prop_assert!(false, "{id}: runtime {now:?}, model {:?}", model[&id]),
        }
    }
    rt.audit().map_err(|e| TestCaseError::fail(e.to_string()))?;
    Ok(rt.backend().injected())
}

fn config() -> impl Strategy<Value = Config> {
    (
        proptest::sample::select(PolicyKind::ALL.to_vec()),
        any::<[bool; 4]>(),
        1usize..4,
        0usize..8,
        any::<[bool; 2]>(),
        reuse_tolerance(),
        prefetch(),
    )
        .prop_map(
            |(
                policy,
                [dedup, lazy, packing, sync],
                streams,
                extra,
                [handover, arena],
                tolerance,
                prefetch,
            )| {
                Config {
                    budget: Some(largest_working_set() + extra * largest_object()),
                    policy,
                    seed: 1,
                    streams,
                    dedup,
                    lazy_release: lazy,
                    packing,
                    on_demand_sync: sync,
                    managed: false,
                    handover,
                    reuse_tolerance_percent: tolerance,
                    arena,
                    prefetch,
                    // Recording the event log must change nothing under failures either.
                    events: extra % 2 == 1,
                    // Nor may recycled host vectors (a failed copy back drops its vector).
                    host_pool_bytes: if streams == 2 { 0 } else { 1 << 20 },
                    host_pool_min_bytes: 0,
                    // Nor copies back into the backend's host memory, nor early read-backs.
                    pinned_results: extra % 3 == 1,
                    pinned_pool_bytes: 1 << 20,
                    pinned_reserve_bytes: 0,
                    pinned_chunk_bytes: 1 << 20,
                    early_read_back: extra % 4 >= 2,
                    reuse_delay: extra % 3,
                }
            },
        )
}

/// Unified memory on one to three streams, with a budget no program reaches.
fn unified_config() -> impl Strategy<Value = Config> {
    (1usize..4).prop_map(|streams| {
        Config::for_mode(Mode::Unified)
            .with_budget(1 << 20)
            .with_streams(streams)
    })
}

fn plan() -> impl Strategy<Value = FaultPlan> {
    (
        proptest::sample::subsequence(ALL_OPS.to_vec(), 1..=ALL_OPS.len()),
        0.01f64..0.2,
        any::<u64>(),
        any::<bool>(),
    )
        .prop_map(|(ops, p, seed, oom)| {
            let plan = FaultPlan::random(&ops, p, seed);
            if oom { plan.alloc_as_oom() } else { plan }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn faults_are_reported_and_lose_nothing(
        config in prop_oneof![3 => config(), 1 => unified_config()],
        steps in program(80),
        plan in plan(),
    ) {
        let (actions, uses) = resolve(&steps);
        run(config, &actions, &uses, plan)?;
    }
}

/// Each kind of call fails, alone, at the first, second, ... tenth opportunity of a fixed
/// program; all of the above holds every time, and the faults really happened.
#[test]
fn every_kind_of_fault_at_every_early_point() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut steps = Vec::new();
    for _ in 0..4 {
        steps.extend(program(80).new_tree(&mut runner).unwrap().current());
    }
    let (actions, uses) = resolve(&steps);
    for op in ALL_OPS {
        let mut injected = 0;
        for n in 1..=10 {
            for config in [
                Config::default().with_budget(largest_working_set() + 2 * largest_object()),
                Config::default()
                    .with_budget(largest_working_set() + 2 * largest_object())
                    .with_prefetch(Some(4)),
                Config::for_mode(Mode::Naive)
                    .with_budget(largest_working_set() + 2 * largest_object()),
                Config::for_mode(Mode::Unified).with_budget(1 << 20),
            ] {
                injected += run(config, &actions, &uses, FaultPlan::nth(&[op], n)).unwrap();
            }
        }
        // A kind of call may be too rare in one of the configurations to reach the tenth one.
        assert!(
            (10..=40).contains(&injected),
            "{op}: {injected} of 40 planned faults happened"
        );
    }
}
