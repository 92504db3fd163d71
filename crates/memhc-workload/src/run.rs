//! Running a workload: on a backend, with a policy and a mode, under a budget; with the
//! no-eviction peak and the Belady lower bound worked out by dry runs on the null backend (the
//! runtime's own code, no data), and results checked against the reference on request.

use std::time::Instant;

use hadron::{Contraction, Engine, HadronNode, reference};
use memhc_core::backend::timeline::{WorkSpan, compute_busy_ns, hidden_copy_share};
use memhc_core::{
    Alloc, Backend, Complex64, Config, EventLog, HostCopy, Mode, ObjectId, PolicyKind, Runtime,
    Stats,
};
use memhc_host::null::NullBackend;

use crate::error::{Error, Result};
use crate::order::{Order, internal, schedule};
use crate::workload::{Analysis, Workload, materialise_all_into};

/// How to run a workload.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// The eviction policy.
    pub policy: PolicyKind,
    /// The optimisation mode.
    pub mode: Mode,
    /// The device budget in bytes.
    pub budget: usize,
    /// Streams (contraction `i` of a vector runs on stream `i mod streams`; issued in the
    /// dependency order, [`run_observed_in`], each on the stream estimated free first).
    pub streams: usize,
    /// Whether to check every result and trace against the reference implementation.
    pub verify: bool,
    /// Where device memory comes from; `None`: the mode's own setting (handover in the optimal
    /// mode, the driver in the paper's baselines).
    pub alloc: Option<Alloc>,
    /// The runtime's reuse tolerance in percent (0: exact sizes, as the paper's free pool).
    pub reuse_tolerance_percent: u32,
    /// Prefetch (and asynchronous write-back) this many object uses ahead; `None`: off.
    pub prefetch: Option<usize>,
    /// The direct data path: node values are generated straight into the backend's host
    /// memory (page-locked on a GPU: uploaded in one DMA, no staging), results are read back
    /// as soon as their last writer is queued, into that memory, and handed out from it
    /// ([`Config::with_direct_host`]). Off: vectors, staged, results read at the end.
    pub pinned: bool,
}

impl RunSpec {
    /// A run of `policy` in `mode` under `budget` on `streams` streams, unverified, with the
    /// mode's own allocation setting and exact reuse.
    pub fn new(policy: PolicyKind, mode: Mode, budget: usize, streams: usize) -> Self {
        RunSpec {
            policy,
            mode,
            budget,
            streams,
            verify: false,
            alloc: None,
            reuse_tolerance_percent: 0,
            prefetch: None,
            pinned: false,
        }
    }

    /// The runtime configuration of this run.
    pub fn config(&self) -> Config {
        let config = Config {
            reuse_tolerance_percent: self.reuse_tolerance_percent,
            ..Config::for_mode(self.mode)
                .with_policy(self.policy)
                .with_budget(self.budget)
                .with_streams(self.streams)
                .with_prefetch(self.prefetch)
                .with_direct_host(self.pinned)
        };
        match self.alloc {
            Some(a) => config.with_alloc(a),
            None => config,
        }
    }
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The runtime's statistics.
    pub stats: Stats,
    /// Wall time of the vectors, traces and result reads, seconds.
    pub wall_s: f64,
    /// The results, by id, in the workload's order.
    pub results: Vec<(String, HadronNode)>,
    /// The traces, in order: `(a, b, value)`.
    pub traces: Vec<(String, String, Complex64)>,
    /// The largest relative error against the reference (when verified).
    pub max_rel_error: Option<f64>,
    /// The share of copy time during which a GEMM ran on another stream, from the backend's
    /// timeline (`None`: the backend cannot time its work, or nothing was copied).
    pub copy_hidden_share: Option<f64>,
    /// CPU time of the whole process over the same span as `wall_s`, seconds: the host's side
    /// of the run (the runtime, the engine, staging copies on every thread), `None` where the
    /// platform cannot say. Against [`Outcome::device_compute_s`], it says whether the host
    /// keeps the device busy.
    pub cpu_s: Option<f64>,
    /// The time during which the backend computed (GEMM and GEAM batches) on some stream,
    /// from its timeline, seconds: the union of its compute spans, so that work overlapping
    /// on two streams counts once (`None`: the backend cannot time its work).
    pub device_compute_s: Option<f64>,
    /// The backend's timing clock ([`Backend::timing_clock_ns`]) when the queue started, after
    /// the nodes were registered (`None`: the backend cannot time its work). On the modelled
    /// device it is the modelled set-up: what the host did before the first contraction.
    pub queue_start_ns: Option<u64>,
}

impl Outcome {
    /// `flops / wall_s / 1e9`.
    pub fn gflops(&self) -> f64 {
        if self.wall_s > 0.0 {
            self.stats.flops as f64 / self.wall_s / 1e9
        } else {
            0.0
        }
    }
}

/// The most bytes the workload holds on the device at once when nothing is ever evicted (and
/// released buffers are freed at once): a dry run on the null backend.
pub fn peak_without_eviction(w: &Workload, a: &Analysis) -> Result<usize> {
    let config = Config {
        lazy_release: false,
        streams: 1,
        ..Config::for_mode(Mode::Optimal).with_alloc(Alloc::Driver)
    };
    let mut engine = Engine::new(Runtime::new(NullBackend::new(usize::MAX / 2), config)?);
    execute(&mut engine, w, a, Order::Queue, false, &mut |_| {})?;
    Ok(engine.runtime().stats().peak_device_bytes as usize)
}

/// The misses of the Belady policy on the same queue, mode and budget: the lower bound on the
/// misses of every policy (when all nodes have the same size). A dry run on the null backend.
pub fn miss_lower_bound(w: &Workload, a: &Analysis, spec: &RunSpec) -> Result<u64> {
    miss_lower_bound_in(w, a, spec, Order::Queue)
}

/// [`miss_lower_bound`] of a run issued in `order` (Belady's future is the order issued).
pub fn miss_lower_bound_in(
    w: &Workload,
    a: &Analysis,
    spec: &RunSpec,
    order: Order,
) -> Result<u64> {
    let config = spec.config().with_policy(PolicyKind::Belady);
    let mut engine = Engine::new(Runtime::new(NullBackend::new(spec.budget), config)?);
    execute(&mut engine, w, a, order, false, &mut |_| {})?;
    Ok(engine.runtime().stats().misses)
}

/// The bytes one contraction needs resident at once (its inputs and output): no budget can be
/// smaller.
pub fn largest_working_set(w: &Workload, a: &Analysis) -> usize {
    let _ = w;
    let bytes = |i: usize| {
        a.shape_at(i)
            .and_then(|s| s.layout().ok())
            .map_or(0, |l| l.bytes())
    };
    a.contraction_nodes()
        .map(|c| bytes(c.a) + if c.b == c.a { 0 } else { bytes(c.b) } + bytes(c.out))
        .max()
        .unwrap_or(0)
}

/// Runs `w` on `backend` as `spec` says. `progress` is called after each vector with the
/// number of vectors done. Unified mode on a backend without managed memory is refused.
pub fn run<B: Backend>(
    backend: B,
    w: &Workload,
    a: &Analysis,
    spec: &RunSpec,
    progress: &mut dyn FnMut(usize),
) -> Result<Outcome> {
    run_observed(backend, w, a, spec, false, progress).map(|t| t.outcome)
}

/// A run with its event log ([`run_traced`]).
#[derive(Clone, Debug)]
pub struct Traced {
    /// What the run produced.
    pub outcome: Outcome,
    /// The runtime's event log, from its creation to the end of the run.
    pub events: EventLog,
    /// The backend's timeline of the run's work (empty if the backend cannot time its work).
    pub timeline: Vec<WorkSpan>,
}

/// [`run`] with the runtime's event log on ([`Config::events`]): the outcome, the log and the
/// backend's timeline, from which `memhc-trace` makes a timeline and a report.
pub fn run_traced<B: Backend>(
    backend: B,
    w: &Workload,
    a: &Analysis,
    spec: &RunSpec,
    progress: &mut dyn FnMut(usize),
) -> Result<Traced> {
    run_observed(backend, w, a, spec, true, progress)
}

/// [`run_traced`] if `events`, else [`run`] with an empty event log (the backend's timeline is
/// taken either way): for callers that choose at run time.
pub fn run_observed<B: Backend>(
    backend: B,
    w: &Workload,
    a: &Analysis,
    spec: &RunSpec,
    events: bool,
    progress: &mut dyn FnMut(usize),
) -> Result<Traced> {
    run_observed_in(backend, w, a, spec, Order::Queue, events, progress)
}

/// [`run_observed`] with the contractions issued in `order` (the values are the same either
/// way; the runtime's future, for Belady, prefetch and early read-back, is the order issued).
pub fn run_observed_in<B: Backend>(
    backend: B,
    w: &Workload,
    a: &Analysis,
    spec: &RunSpec,
    order: Order,
    events: bool,
    progress: &mut dyn FnMut(usize),
) -> Result<Traced> {
    if spec.mode == Mode::Unified && !backend.supports_managed() {
        return Err(Error::Usage(format!(
            "--mode unified needs managed memory, which the {} does not have",
            backend.name()
        )));
    }
    if spec.verify && !backend.holds_values() {
        return Err(Error::Usage(format!(
            "--verify needs a backend that computes: the {} keeps no values (it counts or \
             models the work); verify on the host backend or a GPU",
            backend.name()
        )));
    }
    let needed = largest_working_set(w, a);
    if spec.budget < needed {
        return Err(Error::Usage(format!(
            "a device budget of {} bytes cannot hold one contraction, which needs {needed} bytes",
            spec.budget
        )));
    }
    // Timing first: the event log notes the backend's timing clock when the runtime starts.
    let timed = backend.set_timing(true);
    let mut config = spec.config().with_events(events);
    if spec.pinned {
        // The pinned pool's first chunk holds what the plan says the run holds at once.
        let plan = crate::host_memory::pinned_plan_bytes(w, a);
        config.pinned_reserve_bytes = usize::try_from(plan).unwrap_or(usize::MAX);
    }
    let mut engine = Engine::new(Runtime::new(backend, config)?);
    let done = execute(&mut engine, w, a, order, true, progress)?;
    let timeline = match timed {
        true => engine.runtime().backend().take_timeline(),
        false => Vec::new(),
    };
    let copy_hidden_share = hidden_copy_share(&timeline);
    let device_compute_s = (!timeline.is_empty()).then(|| compute_busy_ns(&timeline) as f64 * 1e-9);
    let max_rel_error = if spec.verify {
        Some(verify(w, a, &done.results, &done.traces)?)
    } else {
        None
    };
    engine
        .runtime()
        .audit()
        .map_err(|e| Error::Usage(e.to_string()))?;
    let outcome = Outcome {
        stats: engine.runtime().stats(),
        wall_s: done.wall_s,
        results: done.results,
        traces: done.traces,
        max_rel_error,
        copy_hidden_share,
        cpu_s: done.cpu_s,
        device_compute_s,
        queue_start_ns: done.queue_start_ns,
    };
    Ok(Traced {
        outcome,
        events: engine.runtime_mut().take_events().unwrap_or_default(),
        timeline: if events { timeline } else { Vec::new() },
    })
}

/// `n` zeros for a node's values to be generated into. An allocation the system refuses
/// (more address space than it will hand out) is an error, not an abort.
fn zeroed_values(n: usize) -> Result<Vec<Complex64>> {
    n.checked_mul(2)
        .and_then(|parts| bytemuck::allocation::try_zeroed_vec::<f64>(parts).ok())
        .map(bytemuck::allocation::cast_vec)
        .ok_or_else(|| {
            Error::Usage(format!(
                "a run cannot reserve address space for a node of {n} complex doubles"
            ))
        })
}

struct Executed {
    queue_start_ns: Option<u64>,
    wall_s: f64,
    cpu_s: Option<f64>,
    results: Vec<(String, HadronNode)>,
    traces: Vec<(String, String, Complex64)>,
}

/// Registers the initial nodes, creates every output up front (so that the future is exact for
/// Belady), then runs the contractions in `order` (batch after batch, [`schedule`]: in the
/// queue's order, vector after vector), the traces and the result reads, releasing every node
/// after its last use. The future given to the runtime is the order issued. A real run
/// (`real`) materialises the nodes' values and reads the results back; a dry run registers
/// zeros that are never made ([`HostCopy::zeros`]: they cost no memory).
///
/// Nodes are known by their index in the analysis from here on: the queue runs without a
/// single string lookup.
fn execute<B: Backend>(
    engine: &mut Engine<B>,
    w: &Workload,
    a: &Analysis,
    order: Order,
    real: bool,
    progress: &mut dyn FnMut(usize),
) -> Result<Executed> {
    let mut ids: Vec<ObjectId> = Vec::with_capacity(a.node_count());
    let pinned = engine.runtime().config().pinned_results;
    // A backend that keeps no values (null, the modelled GPU) gets zeros whose memory is never
    // made: generating values it would drop is most of a large run's host time.
    let fill = real && engine.runtime().backend().holds_values();
    if real && pinned {
        // Generated straight into the backend's host memory, on every core: uploaded without
        // staging.
        let mut hosts = Vec::with_capacity(w.nodes.len());
        for n in &w.nodes {
            hosts.push(engine.alloc_host(&n.shape)?);
        }
        if fill {
            let mut jobs = Vec::with_capacity(hosts.len());
            for (n, host) in w.nodes.iter().zip(hosts.iter_mut()) {
                jobs.push((&n.data, host.as_mut_slice()?));
            }
            materialise_all_into(jobs);
        }
        for (n, host) in w.nodes.iter().zip(hosts) {
            ids.push(engine.register_host(n.shape.clone(), host)?);
        }
    } else if fill {
        // The values, generated on every core.
        let mut values = Vec::with_capacity(w.nodes.len());
        for n in &w.nodes {
            values.push(zeroed_values(n.shape.spins() * n.shape.component_elems())?);
        }
        let jobs = w.nodes.iter().zip(values.iter_mut());
        materialise_all_into(jobs.map(|(n, v)| (&n.data, v.as_mut_slice())).collect());
        for (n, v) in w.nodes.iter().zip(values) {
            ids.push(engine.register(HadronNode::from_vec(&n.shape, v)?)?);
        }
    } else {
        // Zeros never made (a dry run's nodes and a backend's that keeps no values cost no
        // memory, whatever the allocator): vectors all the same to the runtime (pageable).
        for n in &w.nodes {
            let zeros = HostCopy::zeros(n.shape.spins() * n.shape.component_elems());
            ids.push(engine.register_host(n.shape.clone(), zeros)?);
        }
    }
    // Outputs are numbered after the initial nodes, in queue order: create them in that order.
    for i in ids.len()..a.node_count() {
        let shape = a
            .shape_at(i)
            .ok_or_else(|| internal(format!("node {i} has no shape")))?;
        ids.push(engine.create(shape.clone())?);
    }
    let lookup = |i: usize| {
        ids.get(i)
            .copied()
            .ok_or_else(|| internal(format!("node {i} was not created")))
    };
    let mut contractions: Vec<Vec<(Contraction, ObjectId)>> = Vec::with_capacity(w.vectors.len());
    for (v, vector) in w.vectors.iter().enumerate() {
        let nodes = a.vector_nodes(v);
        if nodes.len() != vector.len() {
            return Err(internal(format!("vector {v} was not analysed")));
        }
        let mut list = Vec::with_capacity(vector.len());
        for (c, n) in vector.iter().zip(nodes) {
            let contraction = Contraction::new(lookup(n.a)?, lookup(n.b)?, c.mapping.clone())
                .with_views(c.a_view, c.b_view);
            list.push((contraction, lookup(n.out)?));
        }
        contractions.push(list);
    }
    let mut traced = Vec::with_capacity(w.traces.len());
    for t in 0..w.traces.len() {
        let (ta, tb) = a
            .trace_nodes(t)
            .ok_or_else(|| internal(format!("trace {t} was not analysed")))?;
        traced.push((ta, tb, lookup(ta)?, lookup(tb)?));
    }
    let streams = engine.runtime().streams();
    let batches = schedule(w, a, order, streams)?;
    let issued = |is: &crate::order::Issued| {
        let c = contractions.get(is.vector).and_then(|v| v.get(is.index));
        c.ok_or_else(|| internal("an issued contraction is not in the queue".into()))
    };
    let mut future = Vec::new();
    for is in batches.iter().flat_map(|b| &b.issued) {
        let (c, out) = issued(is)?;
        future.extend(Engine::<B>::uses(c, *out));
    }
    for &(_, _, ta, tb) in &traced {
        future.push(ta);
        if tb != ta {
            future.push(tb);
        }
    }
    engine.runtime_mut().set_future(&future)?;
    // The results are announced: with early read-back on, each is copied back as soon as the
    // launch that writes it last is queued.
    for &node in a.result_nodes() {
        engine.runtime_mut().expect_read(lookup(node)?)?;
    }

    let start = Instant::now();
    let cpu_start = cpu_time::ProcessTime::try_now().ok();
    let mut members: Vec<ObjectId> = Vec::new();
    let mut releasing: Vec<ObjectId> = Vec::new();
    let mut touching: Vec<ObjectId> = Vec::new();
    let queue_start_ns = engine.runtime().backend().timing_clock_ns();
    progress(0);
    let mut reported = 0;
    for batch in &batches {
        members.clear();
        touching.clear();
        for is in &batch.issued {
            let (c, out) = issued(is)?;
            members.extend([c.a, c.b]);
            touching.push(*out);
        }
        engine.runtime_mut().begin_vector(&members)?;
        // What the batch writes and releases, drawn from the whole history: their records are
        // cold, and touched together their misses overlap (10-13% of the cost at 256k
        // contractions for the releases alone). (`begin_vector` touches the inputs.)
        releasing.clear();
        for &node in &batch.release {
            releasing.push(lookup(node)?);
        }
        touching.extend_from_slice(&releasing);
        engine.touch_records(&touching);
        for is in &batch.issued {
            let (c, out) = issued(is)?;
            engine.contract_into(is.stream, c, *out)?;
        }
        for &id in &releasing {
            engine.release(id)?;
        }
        if batch.vectors_done > reported {
            reported = batch.vectors_done;
            progress(reported);
        }
    }
    let mut traces = Vec::with_capacity(w.traces.len());
    for (t, (spec, &(_, _, ta, tb))) in w.traces.iter().zip(&traced).enumerate() {
        let value = engine.trace(0, ta, tb, &spec.pairs)?;
        traces.push((spec.a.clone(), spec.b.clone(), value));
        for &node in a.release_after_trace(t) {
            engine.release(lookup(node)?)?;
        }
    }
    let mut taken = Vec::with_capacity(w.results.len());
    for (name, &node) in w.results.iter().zip(a.result_nodes()) {
        let node_id = lookup(node)?;
        // Read, the result is the host's: its device memory goes back (to the pool), and its
        // host copy is handed over, not copied (in the backend's host memory, on the direct
        // path).
        if real {
            let host = engine.take_host(node_id)?;
            // A backend that keeps no values has nothing to hand out: its host memory goes
            // back untouched.
            if fill {
                taken.push((name.clone(), host));
            }
        } else {
            engine.runtime_mut().sync_host(node_id)?; // the copy back still counts
            engine.release(node_id)?;
        }
    }
    engine.runtime_mut().synchronize()?;
    let wall_s = start.elapsed().as_secs_f64();
    let cpu_s = cpu_start
        .and_then(|t| t.try_elapsed().ok())
        .map(|d| d.as_secs_f64());
    // The caller of a run gets nodes: results in host memory are copied out after the clock.
    let mut results = Vec::with_capacity(taken.len());
    for (name, (shape, host)) in taken {
        results.push((name, HadronNode::from_vec(&shape, host.into_vec()?)?));
    }
    Ok(Executed {
        queue_start_ns,
        wall_s,
        cpu_s,
        results,
        traces,
    })
}

/// Recomputes every result and trace with the reference implementation, on the host, and
/// returns the largest relative error; fails if one exceeds 1e-12.
pub fn verify(
    w: &Workload,
    a: &Analysis,
    results: &[(String, HadronNode)],
    traces: &[(String, String, Complex64)],
) -> Result<f64> {
    const TOLERANCE: f64 = 1e-12;
    // Values by node index, computed in queue order; dropped after their last use like on
    // the device.
    let mut values: Vec<Option<HadronNode>> = vec![None; a.node_count()];
    for (slot, n) in values.iter_mut().zip(&w.nodes) {
        *slot = Some(n.data.materialise(&n.shape));
    }
    let missing = |what: &str| Error::Verification(format!("\"{what}\" has no reference value"));
    let value = |values: &[Option<HadronNode>], i: usize| -> Result<HadronNode> {
        values
            .get(i)
            .and_then(Option::as_ref)
            .cloned()
            .ok_or_else(|| missing(a.id(i).unwrap_or("?")))
    };
    for (v, vector) in w.vectors.iter().enumerate() {
        let mut produced = Vec::with_capacity(vector.len());
        for (c, n) in vector.iter().zip(a.vector_nodes(v)) {
            let get = |i: usize| {
                values
                    .get(i)
                    .and_then(Option::as_ref)
                    .ok_or_else(|| missing(a.id(i).unwrap_or("?")))
            };
            let out = reference::contract(get(n.a)?, get(n.b)?, c.a_view, c.b_view, &c.mapping)?;
            produced.push((n.out, out));
        }
        for (i, out) in produced {
            if let Some(slot) = values.get_mut(i) {
                *slot = Some(out);
            }
        }
        for &i in a.release_after_vector(v) {
            if let Some(slot) = values.get_mut(i) {
                *slot = None;
            }
        }
    }
    let mut worst = 0.0f64;
    for (name, got) in results {
        let want = a
            .index_of(name)
            .and_then(|i| values.get(i))
            .and_then(Option::as_ref)
            .ok_or_else(|| missing(name))?;
        let err = reference::relative_error(got, want);
        worst = worst.max(err);
        if err > TOLERANCE || err.is_nan() {
            return Err(Error::Verification(format!(
                "result \"{name}\" differs from the reference: relative error {err:e}"
            )));
        }
    }
    for (t, ((ta, tb, got), spec)) in traces.iter().zip(&w.traces).enumerate() {
        let (ia, ib) = a
            .trace_nodes(t)
            .ok_or_else(|| internal(format!("trace {t} was not analysed")))?;
        let (x, y) = (value(&values, ia)?, value(&values, ib)?);
        let want = reference::trace(&x, &y, &spec.pairs)?;
        let err = (got - want).norm() / want.norm().max(f64::MIN_POSITIVE);
        worst = worst.max(err);
        if err > TOLERANCE || err.is_nan() {
            return Err(Error::Verification(format!(
                "trace ({ta}, {tb}) differs from the reference: relative error {err:e}"
            )));
        }
    }
    Ok(worst)
}

/// A dry run of `w` on the null backend under `config` (no budget: no limit): the runtime's own
/// code without data. Its statistics are those a real run with the same configuration makes,
/// on any backend whose device has the budget free: the counts depend on the queue and the
/// configuration, never on the values or on timing.
pub fn dry_run(w: &Workload, a: &Analysis, config: Config) -> Result<Stats> {
    let capacity = config.budget.unwrap_or(usize::MAX / 2);
    let mut engine = Engine::new(Runtime::new(NullBackend::new(capacity), config)?);
    execute(&mut engine, w, a, Order::Queue, false, &mut |_| {})?;
    Ok(engine.runtime().stats())
}
