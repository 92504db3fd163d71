//! Random programs against the runtime, for property tests.
//!
//! A program is a list of [`Step`]s that name objects by position in the list of live objects.
//! [`resolve`] turns it into concrete [`Action`]s with the values every read must return,
//! by running it on a plain model (a map from object to value, or to "no value"). The
//! runtime's ids are predictable (the k-th object created is `ObjectId::from_index(k)`), so
//! the future access sequence can be given to the Belady policy before anything runs.

use std::collections::HashMap;

use memhc_core::{Complex64, Config, Layout, Mode, ObjectId, PolicyKind, Prefetch};
use proptest::prelude::*;

use super::{product, random, rng};

/// The layouts objects are drawn from (square components, so any two objects of one layout
/// can be multiplied).
pub fn layouts() -> [Layout; 3] {
    [
        super::square(1, 2),
        super::square(2, 2),
        super::square(2, 3),
    ]
}

/// One step, naming objects by index (modulo the number of live objects).
#[derive(Clone, Debug)]
pub enum Step {
    Register {
        layout: usize,
        seed: u64,
    },
    Create {
        layout: usize,
    },
    /// `out = a * b` with `b` among the objects of `a`'s layout, and `out` a new GPU-only
    /// object (`None`) or another object of that layout.
    Multiply {
        a: usize,
        b: usize,
        out: Option<usize>,
        stream: usize,
    },
    Touch {
        objects: Vec<usize>,
    },
    HostWrite {
        object: usize,
        seed: u64,
    },
    Release {
        object: usize,
    },
    Read {
        object: usize,
    },
    BeginVector {
        objects: Vec<usize>,
    },
}

/// A step with everything resolved: ids, data, expected outcome.
#[derive(Clone, Debug)]
pub enum Action {
    Register(ObjectId, Layout, Vec<Complex64>),
    Create(ObjectId, Layout),
    /// `out = a * b`; `expected` is `None` when an input has no value (the launch must fail
    /// with `Uninitialized` and change nothing).
    Multiply {
        a: ObjectId,
        b: ObjectId,
        out: ObjectId,
        stream: usize,
        expected: Option<Vec<Complex64>>,
    },
    /// Make objects resident for reading; `ok` is false when one has no value.
    Touch(Vec<ObjectId>, bool),
    HostWrite(ObjectId, Vec<Complex64>),
    Release(ObjectId),
    /// Read an object; `None`: it must fail with `Uninitialized`.
    Read(ObjectId, Option<Vec<Complex64>>),
    BeginVector(Vec<ObjectId>),
}

fn step() -> impl Strategy<Value = Step> {
    let idx = 0usize..64;
    prop_oneof![
        3 => (0usize..3, any::<u64>()).prop_map(|(layout, seed)| Step::Register { layout, seed }),
        2 => (0usize..3).prop_map(|layout| Step::Create { layout }),
        8 => (idx.clone(), idx.clone(), proptest::option::weighted(0.3, idx.clone()), 0usize..3)
            .prop_map(|(a, b, out, stream)| Step::Multiply { a, b, out, stream }),
        2 => proptest::collection::vec(idx.clone(), 1..4).prop_map(|objects| Step::Touch { objects }),
        1 => (idx.clone(), any::<u64>()).prop_map(|(object, seed)| Step::HostWrite { object, seed }),
        1 => idx.clone().prop_map(|object| Step::Release { object }),
        2 => idx.clone().prop_map(|object| Step::Read { object }),
        1 => proptest::collection::vec(idx, 1..6).prop_map(|objects| Step::BeginVector { objects }),
    ]
}

/// Programs of up to `max` steps that start by registering a few objects.
pub fn program(max: usize) -> impl Strategy<Value = Vec<Step>> {
    let start = proptest::collection::vec(
        (0usize..3, any::<u64>()).prop_map(|(layout, seed)| Step::Register { layout, seed }),
        2..5,
    );
    (start, proptest::collection::vec(step(), 1..max)).prop_map(|(mut s, rest)| {
        s.extend(rest);
        s
    })
}

/// Runs `steps` on the model; returns the actions (ending with a read of every live object),
/// and the sequence of object uses (each successful launch's objects in access order) for the
/// Belady policy.
pub fn resolve(steps: &[Step]) -> (Vec<Action>, Vec<ObjectId>) {
    let shapes = layouts();
    let mut live: Vec<ObjectId> = Vec::new();
    let mut layout_of: HashMap<ObjectId, Layout> = HashMap::new();
    let mut value: HashMap<ObjectId, Option<Vec<Complex64>>> = HashMap::new();
    let mut next = 0u64;
    let mut actions = Vec::new();
    let mut uses = Vec::new();
    let pick = |live: &[ObjectId], i: usize| live[i % live.len()];
    for s in steps {
        match s {
            Step::Register { layout, seed } => {
                let id = ObjectId::from_index(next);
                next += 1;
                let l = shapes[*layout];
                let data = random(&mut rng(*seed), l);
                live.push(id);
                layout_of.insert(id, l);
                value.insert(id, Some(data.clone()));
                actions.push(Action::Register(id, l, data));
            }
            Step::Create { layout } => {
                let id = ObjectId::from_index(next);
                next += 1;
                let l = shapes[*layout];
                live.push(id);
                layout_of.insert(id, l);
                value.insert(id, None);
                actions.push(Action::Create(id, l));
            }
            _ if live.is_empty() => {}
            Step::Multiply { a, b, out, stream } => {
                let a = pick(&live, *a);
                let l = layout_of[&a];
                let same: Vec<ObjectId> =
                    live.iter().copied().filter(|x| layout_of[x] == l).collect();
                let b = pick(&same, *b);
                let others: Vec<ObjectId> =
                    same.iter().copied().filter(|&x| x != a && x != b).collect();
                let out = match out {
                    Some(o) if !others.is_empty() => pick(&others, *o),
                    _ => {
                        let id = ObjectId::from_index(next);
                        next += 1;
                        live.push(id);
                        layout_of.insert(id, l);
                        value.insert(id, None);
                        actions.push(Action::Create(id, l));
                        id
                    }
                };
                let expected = match (&value[&a], &value[&b]) {
                    (Some(x), Some(y)) => Some(product(x, y, l)),
                    _ => None,
                };
                if let Some(v) = &expected {
                    uses.push(a);
                    if b != a {
                        uses.push(b);
                    }
                    uses.push(out);
                    value.insert(out, Some(v.clone()));
                }
                actions.push(Action::Multiply {
                    a,
                    b,
                    out,
                    stream: *stream,
                    expected,
                });
            }
            Step::Touch { objects } => {
                let mut ids: Vec<_> = objects.iter().map(|&i| pick(&live, i)).collect();
                ids.sort();
                ids.dedup();
                let ok = ids.iter().all(|id| value[id].is_some());
                if ok {
                    uses.extend(&ids);
                }
                actions.push(Action::Touch(ids, ok));
            }
            Step::HostWrite { object, seed } => {
                let id = pick(&live, *object);
                let data = random(&mut rng(*seed), layout_of[&id]);
                value.insert(id, Some(data.clone()));
                actions.push(Action::HostWrite(id, data));
            }
            Step::Release { object } => {
                let id = pick(&live, *object);
                live.retain(|&x| x != id);
                value.remove(&id);
                actions.push(Action::Release(id));
            }
            Step::Read { object } => {
                let id = pick(&live, *object);
                actions.push(Action::Read(id, value[&id].clone()));
            }
            Step::BeginVector { objects } => {
                let mut ids: Vec<_> = objects.iter().map(|&i| pick(&live, i)).collect();
                ids.dedup();
                actions.push(Action::BeginVector(ids));
            }
        }
    }
    // Finally, every live object is read back.
    for id in live {
        actions.push(Action::Read(id, value[&id].clone()));
    }
    (actions, uses)
}

/// Whether an action only creates an object (no device effect, so it can run early).
pub fn creates(action: &Action) -> bool {
    matches!(action, Action::Register(..) | Action::Create(..))
}

/// The largest object.
pub fn largest_object() -> usize {
    layouts().iter().map(Layout::bytes).max().unwrap_or(0)
}

/// The most bytes one action needs resident at once.
pub fn largest_working_set() -> usize {
    3 * layouts().iter().map(Layout::bytes).max().unwrap_or(0)
}

/// Device-memory configurations: every policy, every combination of optimisation switches,
/// one to three streams, and budgets from the largest working set up; driver allocations or
/// an arena, with and without handover, with exact reuse or a reuse tolerance; with and
/// without prefetch; with and without a host pool.
pub fn config() -> impl Strategy<Value = Config> {
    (
        proptest::sample::select(PolicyKind::ALL.to_vec()),
        any::<[bool; 4]>(),
        1usize..4,
        0usize..8,
        any::<u64>(),
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
                seed,
                [handover, arena],
                tolerance,
                prefetch,
            )| Config {
                budget: Some(largest_working_set() + extra * largest_object()),
                policy,
                seed,
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
                // Half the programs record the event log (it must change nothing).
                events: seed % 2 == 1,
                // Half keep released host vectors for copies back to land in, whatever their
                // size (a stale value would show as a wrong result); the others keep none.
                host_pool_bytes: if seed % 4 < 2 { 1 << 20 } else { 0 },
                host_pool_min_bytes: 0,
                // Half land copies back in the backend's host memory (a quarter of those with
                // no pool for it), and half read announced results back early: both must
                // change no value.
                pinned_results: (seed >> 2) % 2 == 1,
                pinned_pool_bytes: if (seed >> 3) % 4 == 0 { 0 } else { 1 << 20 },
                // The pinned pool: off, or small chunks (on the host backend it cuts no
                // pieces: nothing may change).
                pinned_reserve_bytes: 0,
                pinned_chunk_bytes: if (seed >> 7) % 2 == 0 { 0 } else { 1 << 16 },
                early_read_back: (seed >> 5) % 2 == 1,
                // Released blocks rest zero to three launches before the pool hands them out.
                reuse_delay: ((seed >> 6) % 4) as usize,
            },
        )
}

/// Prefetch: off (most often), or on with a window of one to nine object uses.
pub fn prefetch() -> impl Strategy<Value = Option<Prefetch>> {
    proptest::option::weighted(0.4, (1usize..10).prop_map(Prefetch::new))
}

/// Reuse tolerances: exact sizes (most often), enough for a 64-byte buffer to serve a 48-byte
/// request, or double.
pub fn reuse_tolerance() -> impl Strategy<Value = u32> {
    prop_oneof![2 => Just(0u32), 1 => Just(40u32), 1 => Just(100u32)]
}

/// Unified memory on one to three streams, with and without dedup and on-demand sync, and a
/// budget no program reaches (managed memory is never evicted: a program that needs more fails).
pub fn unified_config() -> impl Strategy<Value = Config> {
    (1usize..4, any::<bool>(), any::<bool>()).prop_map(|(streams, dedup, sync)| Config {
        dedup,
        on_demand_sync: sync,
        ..Config::for_mode(Mode::Unified)
            .with_budget(1 << 20)
            .with_streams(streams)
            .with_events(dedup)
    })
}
