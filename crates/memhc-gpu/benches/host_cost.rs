//! `cargo bench -p memhc-gpu --bench host_cost`: the host's CPU time per contraction on the
//! fake device (issue 29, deliverable 4), split into the runtime's bookkeeping, CPU copies
//! (staging, both ways) and page faults, with the bytes the CPU copied per byte the device
//! copied, for today's optimal schedule (pageable host memory: every copy staged) and the
//! direct path (page-locked host objects: `--host-memory pinned --prefetch 12`), at N = 128 and
//! N = 384; and the modelled H100's device time for the same queue (`memhc_gpu::model`), so
//! that the ratio host CPU / device time can be read against the target (at most 0.5
//! with page-locked objects).
//!
//! # Method
//!
//! The queue is memhc-synth's (`memhc_workload::run`'s order: registration, outputs created up
//! front, the future, vectors on `i mod 4` streams, releases, traces, results taken), with the
//! nodes' values generated before the clock starts (into page-locked memory on the direct
//! path). The window is the queue: from the first vector to the final synchronisation,
//! results taken (handed over, not copied), as memhc-synth's `wall_s` and `cpu_s`.
//!
//! * **Total**: CPU time of the whole process over the window (user + system, every thread:
//!   `clock_gettime(CLOCK_PROCESS_CPUTIME_ID)` through `cpu_time`), not wall time.
//! * **Fake device work, left out**: the fake device runs its queued copies (host memory to
//!   its "device" vectors) and fills new device memory on the host's threads; a GPU does that
//!   work, so its thread CPU time (metered around each piece of work: one copy call, 2D and
//!   3D ones included, is one piece, as it is one call to a driver) is subtracted. GEMMs do
//!   not compute (`FakeConfig::compute` off): the reference GEMM at N = 384 would take minutes,
//!   and it is device work too.
//! * **CPU copies**: thread CPU time inside the host's copies into and out of page-locked
//!   buffers (the staging `memcpy`s, `PinnedAllocation::write` and `read`), less the page
//!   faults taken inside them (counted in the next column).
//! * **Page faults**: minor faults of the process over the window (`/proc/self/stat`), less
//!   those inside the fake device's work and its pinning, times a per-fault cost measured
//!   before the runs: first touch of a fresh 64 MiB vector less a second touch, over its
//!   faults (the median of five trials; each printed as a `calibration` line).
//! * **Pinning**: thread CPU time of the fake device making page-locked buffers (a GPU's
//!   `cuMemHostAlloc`; the fake fills a vector instead: not representative, shown apart).
//! * **Meter**: the meters' own reads (`/proc/thread-self/stat` and the thread clock, twice per
//!   metered call), measured per call in the same round and subtracted.
//! * **Bookkeeping**: the rest: the runtime, the engine, the GPU backend's own code (budget,
//!   fences, pointer tables, pools), the fake device's queue handling, and freeing released
//!   host copies (`munmap` of a node's vector, pageable only).
//!
//! Bytes: the GPU backend's own counters ([`memhc_gpu::CopyStats`]).
//!
//! The runtime's pinned pool (memhc-core's `Config::pinned_chunk_bytes`) has its first chunk
//! sized from the plan on the direct path (`pinned_plan_bytes`, as memhc-synth's runner), and
//! every run prints a `pool` line: the page-locked allocations the fake device made over the
//! whole run (set-up included), the pieces cut from them, and the pool's chunks at the end.
//!
//! Before the rounds, `register` lines give the modelled time of 1 to 12 uploads of an 8 MiB
//! and a 36 MiB pageable buffer, staged every time (through a warm staging pool) or registered
//! once
//! (`GpuBackend::register_pageable`) and copied in one DMA each, and whether the default
//! [`memhc_gpu::RegisterRule`] registers it: the rule checked against the model.
//!
//! Each round runs every point pageable then pinned, or pinned then pageable (alternating by
//! round); `MEMHC_HOST_COST_ROUNDS` (default 6) rounds. Every run prints one `raw` line; the
//! summary (median, min, max over rounds) follows. The modelled device time is one
//! deterministic run per point and schedule on `ModelDevice` (H100 defaults, `MEMHC_MODEL`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/fake/mod.rs"]
mod fake;

use std::time::Instant;

use fake::meter::{self, Meter};
use fake::{Fake, FakeConfig, Progress};
use hadron::{Contraction, Engine};
use memhc_backend::Backend;
use memhc_core::{Config, HostCopy, Mode, ObjectId, PinnedPoolStats, PolicyKind, Runtime};
use memhc_gpu::model::{ModelParams, model_backend};
use memhc_gpu::{CopyStats, GpuBackend, GpuOptions};
use memhc_workload::host_memory::pinned_plan_bytes;
use memhc_workload::run::{RunSpec, peak_without_eviction};
use memhc_workload::{Analysis, Dist, SynthParams, Workload, generate};

type Error = Box<dyn std::error::Error>;

/// The run of `w` as memhc-synth's runner issues it. With `real`, node values are generated
/// (into the backend's host memory on the direct path); without, nothing is written (the
/// model). `window` is called with `true` when the queue starts and `false` when it ends.
fn run_queue<B: Backend>(
    engine: &mut Engine<B>,
    w: &Workload,
    a: &Analysis,
    pinned: bool,
    real: bool,
    window: &mut dyn FnMut(&Engine<B>, bool),
) -> Result<usize, Error> {
    let mut ids: Vec<ObjectId> = Vec::with_capacity(a.node_count());
    for n in &w.nodes {
        if pinned {
            let mut host = engine.alloc_host(&n.shape)?;
            if real {
                n.data.materialise_into(host.as_mut_slice()?);
            }
            ids.push(engine.register_host(n.shape.clone(), host)?);
        } else if real {
            ids.push(engine.register(n.data.materialise(&n.shape))?);
        } else {
            let zeros = HostCopy::zeros(n.shape.spins() * n.shape.component_elems());
            ids.push(engine.register_host(n.shape.clone(), zeros)?);
        }
    }
    for i in ids.len()..a.node_count() {
        let shape = a.shape_at(i).ok_or("a node without a shape")?;
        ids.push(engine.create(shape.clone())?);
    }
    let id = |i: usize| ids.get(i).copied().ok_or("a node not created");
    let mut vectors = Vec::with_capacity(w.vectors.len());
    for (v, vector) in w.vectors.iter().enumerate() {
        let mut list = Vec::with_capacity(vector.len());
        for (c, n) in vector.iter().zip(a.vector_nodes(v)) {
            let contraction = Contraction::new(id(n.a)?, id(n.b)?, c.mapping.clone())
                .with_views(c.a_view, c.b_view);
            list.push((contraction, id(n.out)?));
        }
        vectors.push(list);
    }
    let mut traced = Vec::with_capacity(w.traces.len());
    for t in 0..w.traces.len() {
        let (ta, tb) = a.trace_nodes(t).ok_or("a trace not analysed")?;
        traced.push((id(ta)?, id(tb)?));
    }
    let mut future = Vec::new();
    for (c, out) in vectors.iter().flatten() {
        future.extend(Engine::<B>::uses(c, *out));
    }
    for &(ta, tb) in &traced {
        future.push(ta);
        if tb != ta {
            future.push(tb);
        }
    }
    engine.runtime_mut().set_future(&future)?;
    for &node in a.result_nodes() {
        engine.runtime_mut().expect_read(id(node)?)?;
    }
    let streams = engine.runtime().streams();
    let mut members = Vec::new();
    let mut releasing = Vec::new();
    let mut contractions = 0;
    let mut taken = Vec::new();
    window(engine, true);
    for (v, vector) in vectors.iter().enumerate() {
        members.clear();
        members.extend(vector.iter().flat_map(|(c, _)| [c.a, c.b]));
        engine.runtime_mut().begin_vector(&members)?;
        releasing.clear();
        for &node in a.release_after_vector(v) {
            releasing.push(id(node)?);
        }
        engine.touch_records(&releasing);
        for (i, (c, out)) in vector.iter().enumerate() {
            engine.contract_into(i % streams, c, *out)?;
            contractions += 1;
        }
        for &r in &releasing {
            engine.release(r)?;
        }
    }
    for (t, (spec, &(ta, tb))) in w.traces.iter().zip(&traced).enumerate() {
        engine.trace(0, ta, tb, &spec.pairs)?;
        for &node in a.release_after_trace(t) {
            engine.release(id(node)?)?;
        }
    }
    for &node in a.result_nodes() {
        // Handed over where it landed, not copied; dropped after the window.
        taken.push(engine.take_host(id(node)?)?);
    }
    engine.runtime_mut().synchronize()?;
    window(engine, false);
    drop(taken);
    Ok(contractions)
}

/// One point of the bench.
struct Point {
    n: usize,
    vectors: usize,
}

/// A schedule: its name and whether host objects are page-locked (the direct path).
const SCHEDULES: [(&str, bool); 2] = [("pageable", false), ("pinned", true)];

fn spec(budget: usize, pinned: bool) -> RunSpec {
    RunSpec {
        pinned,
        prefetch: pinned.then_some(12),
        ..RunSpec::new(PolicyKind::Lru, Mode::Optimal, budget, 4)
    }
}

/// The runtime's configuration for the run: the spec's, with the pinned pool's first chunk
/// sized from the plan on the direct path (as memhc-synth's runner does).
fn config(w: &Workload, a: &Analysis, budget: usize, pinned: bool) -> Config {
    let mut config = spec(budget, pinned).config();
    if pinned {
        config.pinned_reserve_bytes = pinned_plan_bytes(w, a) as usize;
    }
    config
}

/// The modelled queue time of the run and its floor, seconds.
fn modelled(w: &Workload, a: &Analysis, budget: usize, pinned: bool) -> Result<(f64, f64), Error> {
    let (backend, clock) = model_backend(ModelParams::from_env()?, budget)?;
    backend.set_timing(true);
    let mut engine = Engine::new(Runtime::new(backend, config(w, a, budget, pinned))?);
    let mut start = 0.0;
    run_queue(&mut engine, w, a, pinned, false, &mut |_, begin| {
        if begin {
            start = clock.report().makespan_s;
        }
    })?;
    let r = clock.report();
    Ok((r.makespan_s - start, r.floor_s))
}

/// What one fake-device run measured over its window.
#[derive(Default)]
struct Measured {
    wall_s: f64,
    cpu_s: f64,
    faults: u64,
    host_copy: Meter,
    device_work: Meter,
    pinning: Meter,
    copies: CopyStats,
    /// The runtime's pinned pool at the end of the queue.
    pool: PinnedPoolStats,
    /// Page-locked allocations the fake device made in the whole run (set-up included), and
    /// pieces cut from them.
    host_allocs: usize,
    host_pieces: usize,
}

fn sub(a: Meter, b: Meter) -> Meter {
    Meter {
        calls: a.calls - b.calls,
        bytes: a.bytes - b.bytes,
        cpu_ns: a.cpu_ns - b.cpu_ns,
        faults: a.faults - b.faults,
    }
}

fn measured(
    w: &Workload,
    a: &Analysis,
    budget: usize,
    pinned: bool,
) -> Result<(usize, Measured), Error> {
    let fake = Fake::new(FakeConfig {
        capacity: budget + (1 << 30),
        progress: Progress::Eager,
        compute: false,
        meter: true,
        ..FakeConfig::default()
    });
    let backend = GpuBackend::on(fake.clone(), GpuOptions::default().budget(budget))?;
    let mut engine = Engine::new(Runtime::new(backend, config(w, a, budget, pinned))?);
    let mut m = Measured::default();
    let (mut wall, mut cpu) = (None, None);
    let mut faults = 0;
    let mut stats0 = fake.stats();
    let mut copies0 = CopyStats::default();
    let contractions = run_queue(&mut engine, w, a, pinned, true, &mut |e, begin| {
        let backend = e.runtime().backend();
        if begin {
            stats0 = fake.stats();
            copies0 = backend.copy_stats();
            faults = meter::process_minor_faults().unwrap_or(0);
            wall = Some(Instant::now());
            cpu = cpu_time::ProcessTime::try_now().ok();
        } else {
            m.cpu_s = cpu
                .and_then(|c| c.try_elapsed().ok())
                .map_or(f64::NAN, |d| d.as_secs_f64());
            m.wall_s = wall.map_or(f64::NAN, |t| t.elapsed().as_secs_f64());
            m.faults = meter::process_minor_faults().unwrap_or(0) - faults;
            let s = fake.stats();
            m.host_copy = sub(s.host_copy, stats0.host_copy);
            m.device_work = sub(s.device_work, stats0.device_work);
            m.pinning = sub(s.pinning, stats0.pinning);
            m.copies = backend.copy_stats().since(&copies0);
        }
    })?;
    m.pool = engine.runtime().pinned_pool();
    drop(engine);
    let s = fake.stats();
    (m.host_allocs, m.host_pieces) = (s.host_allocs, s.host_pieces);
    let v = fake.stats().violations;
    if !v.is_empty() {
        return Err(format!("fake device violations: {v:?}").into());
    }
    Ok((contractions, m))
}

/// The modelled time (seconds) of `copies` uploads of a pageable buffer of `bytes`: staged
/// each time (through a staging pool already warm), or registered once
/// (`GpuBackend::register_pageable`) and copied in one DMA each.
fn modelled_uploads(bytes: usize, copies: usize, register: bool) -> Result<f64, Error> {
    let (b, clock) = model_backend(ModelParams::from_env()?, 1 << 30)?;
    let stream = b.create_stream()?;
    let device = b.alloc(bytes)?;
    // Staging in its steady state: the stream's pool already holds the buffers these copies
    // use (pinning them is a one-off of the backend, not of this buffer).
    let warm = vec![0u8; bytes];
    for _ in 0..copies {
        b.copy_h2d(&stream, &warm, &device, 0)?;
    }
    b.synchronize()?;
    let start = clock.report().makespan_s;
    if register {
        let host = b
            .register_pageable(vec![0u64; bytes / 8])
            .map_err(|e| e.error.to_string())?;
        for _ in 0..copies {
            b.copy_h2d_async(&stream, &host, 0, &device, 0, bytes)?;
        }
        b.synchronize()?;
        b.release_pageable(host)?;
    } else {
        let memory = vec![0u8; bytes];
        for _ in 0..copies {
            b.copy_h2d(&stream, &memory, &device, 0)?;
        }
    }
    b.synchronize()?;
    Ok(clock.report().makespan_s - start)
}

/// One run's host CPU per contraction, split (µs), as `scripts/host-cost-table.py` computes it
/// from the raw line.
struct Split {
    contractions: f64,
    host: f64,
    bookkeeping: f64,
    copies: f64,
    faults: f64,
    bytes_ratio: f64,
}

impl Split {
    fn of(m: &Measured, contractions: usize, fault_s: f64, meter_s: f64) -> Split {
        let c = contractions as f64;
        let device = m.device_work.cpu_ns as f64 * 1e-9;
        let calls = m.host_copy.calls + m.device_work.calls + m.pinning.calls;
        let host = m.cpu_s - device - calls as f64 * meter_s;
        let host_faults = m.faults as f64 - (m.device_work.faults + m.pinning.faults) as f64;
        let faults = host_faults * fault_s;
        let copies = m.host_copy.cpu_ns as f64 * 1e-9 - m.host_copy.faults as f64 * fault_s;
        let pinning = m.pinning.cpu_ns as f64 * 1e-9;
        let us = 1e6 / c;
        Split {
            contractions: c,
            host: host * us,
            bookkeeping: (host - copies - faults - pinning) * us,
            copies: copies * us,
            faults: faults * us,
            bytes_ratio: m.copies.host_per_device_byte(),
        }
    }
}

/// Per-fault cost (seconds): first touch of a fresh 64 MiB vector less a second touch, over
/// the faults the first took (thread CPU time and thread faults). Run before anything else:
/// later, the allocator may hand out memory already touched (no faults to measure).
fn fault_cost() -> (f64, u64) {
    const BYTES: usize = 64 << 20;
    let mut v: Vec<u8> = std::hint::black_box(Vec::with_capacity(BYTES));
    let f0 = meter::thread_minor_faults().unwrap_or(0);
    let t0 = cpu_time::ThreadTime::now();
    v.resize(BYTES, 1);
    std::hint::black_box(&mut v);
    let first = t0.elapsed().as_secs_f64();
    let faults = meter::thread_minor_faults().unwrap_or(0) - f0;
    let t1 = cpu_time::ThreadTime::now();
    v.fill(2);
    std::hint::black_box(&mut v);
    let second = t1.elapsed().as_secs_f64();
    println!("calibration faults={faults} first_touch_s={first:.6e} second_touch_s={second:.6e}");
    ((first - second).max(0.0) / faults.max(1) as f64, faults)
}

/// The meters' own cost per metered call (seconds of process CPU): a start and an end reading.
fn meter_cost() -> f64 {
    const CALLS: u32 = 2000;
    let mut m = Meter::default();
    let t = cpu_time::ProcessTime::now();
    for _ in 0..CALLS {
        m.add(meter::now(), 0);
    }
    std::hint::black_box(m);
    t.elapsed().as_secs_f64() / f64::from(CALLS)
}

fn main() -> Result<(), Error> {
    let rounds: usize = match std::env::var("MEMHC_HOST_COST_ROUNDS") {
        Ok(v) => v.parse()?,
        Err(_) => 6,
    };
    let points = [Point { n: 128, vectors: 8 }, Point { n: 384, vectors: 2 }];
    let started = Instant::now();
    // The per-fault cost: the median of five trials, before the runs (see `fault_cost`).
    let mut trials: Vec<f64> = (0..5).map(|_| fault_cost().0).collect();
    trials.sort_by(f64::total_cmp);
    let fault_s = trials[2];
    println!(
        "host_cost: fake device (data-carrying, GEMMs not computed), {rounds} rounds, vector size 16, repeat 0.5, seed 1, 4 streams, LRU, budget = no-eviction peak; CPU = process user+sys over the queue"
    );
    let mut prepared = Vec::new();
    let mut models: Vec<(usize, &str, f64)> = Vec::new();
    for p in &points {
        let params = SynthParams {
            tensor_size: p.n,
            vector_size: 16,
            vectors: p.vectors,
            repeat: 0.5,
            dist: Dist::Uniform,
            seed: 1,
        };
        let w = generate(&params)?;
        let a = w.analyse()?;
        let budget = peak_without_eviction(&w, &a)?;
        for (name, pinned) in SCHEDULES {
            let (makespan, floor) = modelled(&w, &a, budget, pinned)?;
            models.push((p.n, name, makespan));
            println!(
                "model N={} vectors={} schedule={name} nodes={} budget_bytes={budget} makespan_s={makespan:.6e} floor_s={floor:.6e}",
                p.n,
                p.vectors,
                w.nodes.len(),
            );
        }
        prepared.push((p, w, a, budget));
    }
    println!(
        "raw round N schedule contractions wall_s cpu_s faults fault_cost_s meter_cost_s copy_calls copy_bytes copy_cpu_s copy_faults device_calls device_cpu_s device_faults pin_calls pin_cpu_s pin_faults staged_h2d staged_d2h direct_h2d direct_d2h"
    );
    // Registration against staging on the modelled H100, and what the rule decides.
    let rule = GpuOptions::default().register;
    for bytes in [8 << 20, 36 << 20] {
        for copies in 1..=12 {
            println!(
                "register bytes={bytes} copies={copies} staged_s={:.6e} registered_s={:.6e} rule_registers={}",
                modelled_uploads(bytes, copies, false)?,
                modelled_uploads(bytes, copies, true)?,
                rule.registers(bytes, copies),
            );
        }
    }
    let mut summary: Vec<((usize, &str), Vec<Split>)> = Vec::new();
    for round in 0..rounds {
        let meter_s = meter_cost();
        for (p, w, a, budget) in &prepared {
            let mut order = SCHEDULES;
            if round % 2 == 1 {
                order.reverse();
            }
            for (name, pinned) in order {
                let (contractions, m) = measured(w, a, *budget, pinned)?;
                let split = Split::of(&m, contractions, fault_s, meter_s);
                match summary.iter_mut().find(|(k, _)| *k == (p.n, name)) {
                    Some((_, rows)) => rows.push(split),
                    None => summary.push(((p.n, name), vec![split])),
                }
                let c = &m.copies;
                println!(
                    "raw {round} {} {name} {contractions} {:.6e} {:.6e} {} {fault_s:.6e} {meter_s:.6e} {} {} {:.6e} {} {} {:.6e} {} {} {:.6e} {} {} {} {} {}",
                    p.n,
                    m.wall_s,
                    m.cpu_s,
                    m.faults,
                    m.host_copy.calls,
                    m.host_copy.bytes,
                    m.host_copy.cpu_ns as f64 * 1e-9,
                    m.host_copy.faults,
                    m.device_work.calls,
                    m.device_work.cpu_ns as f64 * 1e-9,
                    m.device_work.faults,
                    m.pinning.calls,
                    m.pinning.cpu_ns as f64 * 1e-9,
                    m.pinning.faults,
                    c.staged_h2d_bytes,
                    c.staged_d2h_bytes,
                    c.direct_h2d_bytes,
                    c.direct_d2h_bytes,
                );
                println!(
                    "pool round={round} N={} schedule={name} host_allocs={} host_pieces={} chunks={} chunk_bytes={} free_bytes={}",
                    p.n,
                    m.host_allocs,
                    m.host_pieces,
                    m.pool.chunks,
                    m.pool.bytes,
                    m.pool.free_bytes,
                );
            }
        }
    }
    println!(
        "summary: median (min-max) over {rounds} rounds, µs of host CPU per contraction; the fake device's own work and the meters left out (see the bench's documentation)"
    );
    println!(
        "{:>4} {:>9} {:>24} {:>24} {:>24} {:>24} {:>9} {:>12} {:>11}",
        "N",
        "schedule",
        "host",
        "bookkeeping",
        "CPU copies",
        "page faults",
        "cpu B/B",
        "model µs",
        "host/model"
    );
    for ((n, name), rows) in &summary {
        let col = |f: &dyn Fn(&Split) -> f64| {
            let mut v: Vec<f64> = rows.iter().map(f).collect();
            v.sort_by(f64::total_cmp);
            let median = if v.len() % 2 == 1 {
                v[v.len() / 2]
            } else {
                (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
            };
            (median, v[0], v[v.len() - 1])
        };
        let show = |(m, lo, hi): (f64, f64, f64)| format!("{m:.1} ({lo:.1}-{hi:.1})");
        let host = col(&|s| s.host);
        let model = models
            .iter()
            .find(|(mn, mname, _)| mn == n && mname == name)
            .map_or(f64::NAN, |m| m.2 * 1e6 / rows[0].contractions);
        println!(
            "{n:>4} {name:>9} {:>24} {:>24} {:>24} {:>24} {:>9.4} {model:>12.1} {:>11.3}",
            show(host),
            show(col(&|s| s.bookkeeping)),
            show(col(&|s| s.copies)),
            show(col(&|s| s.faults)),
            col(&|s| s.bytes_ratio).0,
            host.0 / model,
        );
    }
    println!("({:.1} s)", started.elapsed().as_secs_f64());
    Ok(())
}
