//! The dependency order (`memhc_workload::order`): on generated workloads every schedule is a
//! valid issue order (each contraction once, every input produced before it is used, every node
//! released once, after its last use, and never used again; batches of independent
//! contractions on existing streams), the queue's order is the queue; and runs in the
//! dependency order give the reference's results in every mode and policy, fitting and
//! oversubscribed, on pageable and page-locked host memory.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

use std::collections::HashSet;

use memhc_core::{Mode, PolicyKind};
use memhc_host::host::HostBackend;
use memhc_workload::order::{Batch, Order, schedule};
use memhc_workload::run::{RunSpec, peak_without_eviction, run_observed_in};
use memhc_workload::{Analysis, Dist, SynthParams, Workload, generate};
use proptest::prelude::*;

fn workload(p: &SynthParams) -> (Workload, Analysis) {
    let w = generate(p).unwrap();
    let a = w.analyse().unwrap();
    (w, a)
}

fn params(vector_size: usize, vectors: usize, repeat: f64, dist: Dist, seed: u64) -> SynthParams {
    SynthParams {
        tensor_size: 2,
        vector_size,
        vectors,
        repeat,
        dist,
        seed,
    }
}

/// Checks `batches` as an issue order of `w` on `streams` streams; returns the contractions in
/// issue order as `(vector, index)`.
fn check_valid(
    w: &Workload,
    a: &Analysis,
    batches: &[Batch],
    streams: usize,
) -> Vec<(usize, usize)> {
    let initial = w.nodes.len();
    let mut exists: Vec<bool> = (0..a.node_count()).map(|i| i < initial).collect();
    let mut released = vec![false; a.node_count()];
    let mut seen = HashSet::new();
    let mut order = Vec::new();
    for (b, batch) in batches.iter().enumerate() {
        let mut made_here = HashSet::new();
        for is in &batch.issued {
            assert!(
                is.stream < streams,
                "batch {b}: stream {} of {streams}",
                is.stream
            );
            assert!(
                seen.insert((is.vector, is.index)),
                "({}, {}) issued twice",
                is.vector,
                is.index
            );
            let n = a.vector_nodes(is.vector)[is.index];
            for x in [n.a, n.b] {
                assert!(exists[x], "batch {b}: node {x} used before it is produced");
                assert!(!released[x], "batch {b}: node {x} used after its release");
                assert!(
                    !made_here.contains(&x),
                    "batch {b}: node {x} made and used in one batch"
                );
            }
            assert!(!exists[n.out], "node {} produced twice", n.out);
            exists[n.out] = true;
            made_here.insert(n.out);
            order.push((is.vector, is.index));
        }
        for &x in &batch.release {
            assert!(!released[x], "node {x} released twice");
            assert!(exists[x], "node {x} released before it exists");
            released[x] = true;
        }
    }
    let total: usize = w.vectors.iter().map(Vec::len).sum();
    assert_eq!(order.len(), total, "every contraction once");
    // What is released is what the queue releases after its vectors, no more, no less.
    let want: HashSet<usize> = (0..w.vectors.len())
        .flat_map(|v| a.release_after_vector(v).iter().copied())
        .collect();
    let got: HashSet<usize> = (0..a.node_count()).filter(|&x| released[x]).collect();
    assert_eq!(got, want);
    // Traces and results still find their nodes.
    for t in 0..w.traces.len() {
        let (x, y) = a.trace_nodes(t).unwrap();
        assert!(!released[x] && !released[y], "trace {t}'s nodes released");
    }
    for &r in a.result_nodes() {
        assert!(!released[r], "result {r} released");
    }
    order
}

#[test]
fn the_queue_order_is_the_queue() {
    let (w, a) = workload(&params(5, 7, 0.5, Dist::Uniform, 3));
    let batches = schedule(&w, &a, Order::Queue, 3).unwrap();
    assert_eq!(batches.len(), w.vectors.len());
    for (v, b) in batches.iter().enumerate() {
        let got: Vec<(usize, usize, usize)> = b
            .issued
            .iter()
            .map(|i| (i.vector, i.index, i.stream))
            .collect();
        let want: Vec<(usize, usize, usize)> =
            (0..w.vectors[v].len()).map(|i| (v, i, i % 3)).collect();
        assert_eq!(got, want);
        assert_eq!(b.release, a.release_after_vector(v));
    }
    check_valid(&w, &a, &batches, 3);
}

#[test]
fn the_dependency_order_issues_later_vectors_early() {
    // At repeat 1 every input after the first vector is a node seen before: some of vector 1's
    // contractions read only nodes that are on the device before vector 0 is all in.
    let (w, a) = workload(&params(16, 8, 1.0, Dist::Uniform, 1));
    let batches = schedule(&w, &a, Order::Dependency, 4).unwrap();
    let order = check_valid(&w, &a, &batches, 4);
    let first_of_v0_last = order.iter().rposition(|&(v, _)| v == 0).unwrap();
    assert!(
        order[..first_of_v0_last].iter().any(|&(v, _)| v > 0),
        "no later vector's contraction runs before vector 0's last: {order:?}"
    );
    // Several streams are used, none left out.
    let streams: HashSet<usize> = batches
        .iter()
        .flat_map(|b| &b.issued)
        .map(|i| i.stream)
        .collect();
    assert_eq!(streams.len(), 4);
}

/// For each `k`, how many contractions can run once the first `k` initial nodes, in the order
/// the contractions in `order` first read them (the runtime uploads in that order), are on the
/// device: those whose inputs are all uploaded or made by contractions that can run.
fn runnable_after_uploads(w: &Workload, a: &Analysis, order: &[(usize, usize)]) -> Vec<usize> {
    let initial = w.nodes.len();
    let mut uploads = Vec::new();
    let mut seen = HashSet::new();
    for &(v, i) in order {
        let n = a.vector_nodes(v)[i];
        for x in [n.a, n.b] {
            if x < initial && seen.insert(x) {
                uploads.push(x);
            }
        }
    }
    let queue: Vec<_> = a.contraction_nodes().copied().collect();
    (0..=uploads.len())
        .map(|k| {
            let mut there = vec![false; a.node_count()];
            for &x in &uploads[..k] {
                there[x] = true;
            }
            // Queue order is a topological order: one pass.
            let mut count = 0;
            for n in &queue {
                if there[n.a] && there[n.b] {
                    there[n.out] = true;
                    count += 1;
                }
            }
            count
        })
        .collect()
}

#[test]
fn the_dependency_order_uploads_what_lets_the_most_contractions_run() {
    // Repeat 1, the Fig. 7 shape: 32 nodes to upload, vector 0 reads each once. Uploading in
    // the order of first use lets one contraction run every other upload at first; the
    // dependency order's plan uploads what lets the most run.
    let (mut ours, mut queue_order) = (0, 0);
    for seed in 1..=4 {
        let (w, a) = workload(&params(16, 8, 1.0, Dist::Uniform, seed));
        let queue = check_valid(&w, &a, &schedule(&w, &a, Order::Queue, 4).unwrap(), 4);
        let batches = schedule(&w, &a, Order::Dependency, 4).unwrap();
        let dependency = check_valid(&w, &a, &batches, 4);
        let (q, d) = (
            runnable_after_uploads(&w, &a, &queue),
            runnable_after_uploads(&w, &a, &dependency),
        );
        assert_eq!(d.len(), 33, "seed {seed}: 32 uploads");
        // While the first half is uploaded (the fill, where the SMs wait for uploads): the
        // contractions that can run, summed over the uploads.
        let half = |c: &[usize]| c[..=16].iter().sum::<usize>();
        ours += half(&d);
        queue_order += half(&q);
    }
    // 1,040 against 556 with the plan; 735 with the earlier choice of uploads (of the
    // contractions that need uploads, those needing the fewest bytes first).
    assert!(
        4 * ours >= 7 * queue_order,
        "{ours} runnable over the first halves against the queue order's {queue_order}"
    );
}

#[test]
fn orders_are_named_and_parsed() {
    for o in Order::ALL {
        assert_eq!(o.name().parse::<Order>().unwrap(), o);
        assert_eq!(o.to_string(), o.name());
    }
    assert_eq!(Order::default(), Order::Queue);
    let e = "fifo".parse::<Order>().unwrap_err().to_string();
    assert!(e.contains("queue or dependency"), "{e}");
}

fn dist() -> impl Strategy<Value = Dist> {
    prop_oneof![
        Just(Dist::Uniform),
        Just(Dist::Gaussian),
        (1usize..4).prop_map(Dist::Recent),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_dependency_order_is_valid(
        vs in 1usize..10, vectors in 1usize..12, r8 in 0usize..=8, dist in dist(),
        seed in any::<u64>(), streams in 1usize..6,
    ) {
        let (w, a) = workload(&params(vs, vectors, r8 as f64 / 8.0, dist, seed));
        for order in Order::ALL {
            let batches = schedule(&w, &a, order, streams).unwrap();
            check_valid(&w, &a, &batches, streams);
        }
    }
}

/// Runs `w` in the dependency order on the host backend, verified against the reference, with
/// `policy` in `mode` at `oversub` (the budget from the queue's peak, as `memhc-synth` sets
/// it), and checks that it stays within the budget. A run the budget refuses must be refused
/// in the queue's order too.
fn check_run(
    w: &Workload,
    mode: Mode,
    policy: PolicyKind,
    oversub: f64,
    pinned: bool,
    prefetch: Option<usize>,
) {
    let a = w.analyse().unwrap();
    let peak = peak_without_eviction(w, &a).unwrap();
    let budget = (peak as f64 / (1.0 + oversub)) as usize;
    let spec = RunSpec {
        verify: true,
        pinned,
        prefetch,
        ..RunSpec::new(policy, mode, budget, 3)
    };
    let label = format!("{policy}/{mode} at {oversub}, pinned {pinned}, prefetch {prefetch:?}");
    let run = |order| {
        run_observed_in(
            HostBackend::new(budget),
            w,
            &a,
            &spec,
            order,
            false,
            &mut |_| {},
        )
        .map(|t| t.outcome)
    };
    match run(Order::Dependency) {
        Ok(o) => {
            let err = o.max_rel_error.expect("verified");
            assert!(err <= 1e-12, "{label}: error {err}");
            assert_eq!(o.results.len(), w.results.len(), "{label}");
            assert_eq!(o.traces.len(), w.traces.len(), "{label}");
            assert!(o.stats.peak_device_bytes <= budget as u64, "{label}");
            // The initial nodes went to the device (managed memory counts the host's writes).
            assert!(o.stats.h2d_bytes > 0, "{label}: nothing uploaded");
        }
        Err(e) => {
            let q = run(Order::Queue);
            assert!(
                q.is_err(),
                "{label}: the dependency order fails ({e}) where the queue's runs"
            );
        }
    }
}

#[test]
fn dependency_runs_match_the_reference_in_every_mode_and_policy() {
    let p = SynthParams {
        tensor_size: 4,
        ..params(6, 8, 0.75, Dist::Uniform, 11)
    };
    let w = generate(&p).unwrap();
    for mode in [Mode::Naive, Mode::Reorg, Mode::ReorgSync, Mode::Optimal] {
        for policy in PolicyKind::ALL {
            for oversub in [0.0, 0.5, 1.5] {
                check_run(&w, mode, policy, oversub, false, None);
            }
        }
    }
    // Managed memory fits or is refused: everything fits here.
    check_run(&w, Mode::Unified, PolicyKind::Lru, 0.0, false, None);
}

#[test]
fn dependency_runs_match_the_reference_on_the_direct_path() {
    let p = SynthParams {
        tensor_size: 4,
        ..params(8, 8, 1.0, Dist::Gaussian, 5)
    };
    let w = generate(&p).unwrap();
    for policy in [PolicyKind::Lru, PolicyKind::PpLru, PolicyKind::Belady] {
        for oversub in [0.0, 0.5] {
            for prefetch in [None, Some(12)] {
                check_run(&w, Mode::Optimal, policy, oversub, true, prefetch);
            }
        }
    }
}
