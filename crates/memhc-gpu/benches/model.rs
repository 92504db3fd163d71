//! `cargo bench -p memhc-gpu --bench model`: the modelled H100 (`memhc_gpu::model`) at the
//! MemHC paper's Fig. 7 points (N = 384 and 192; repeated rate 0, 0.25, 0.5, 0.75 and 1 at
//! vector size 16; vector sizes 1-32 at repeated rate 1) and its Table 1 point (N = 384,
//! vector size 32, repeated rate 0.5, oversubscription 0.5, LRU), each in the optimal and the
//! naive mode: the modelled makespan against the modelled floor, for the schedule the runtime
//! issues with pageable host memory, and on the direct path (`direct`: page-locked node data
//! and results, early read-back, resting blocks, prefetch 12). No GPU and no data: the queue runs data-less, as memhc-synth's dry runs do,
//! with the GPU backend's own code over the modelled device.
//!
//! The parameters are [`ModelParams::h100`]'s, with the changes `MEMHC_MODEL` names
//! (`MEMHC_MODEL=pin_rate=30e9 cargo bench -p memhc-gpu --bench model`).
//!
//! 8 vectors per point (the H100 records' count; `MEMHC_MODEL_VECTORS` sets another), 4
//! streams, seed 1, uniform repeats: memhc-synth's defaults. Each point's floor is given twice:
//! the run's own (`max(flops / rate, its bytes in / bus, its bytes out / bus)`) and the
//! optimal mode's at that point, the compulsory traffic when nothing is evicted
//! (`vs optimal floor`), against which naive's extra copies count as lost time. `host %` is the
//! share of the makespan the host spent in staging copies and pinning during the queue,
//! `engine %` the share the busiest engine (H2D, D2H or the SMs) was busy, `set-up` the
//! modelled host time before the queue (page-locking node memory on the direct path), which
//! the makespan does not include (as `wall_s` does not include generating the nodes), and
//! `cpu B/B` the bytes the host copied (staging, both ways) per byte the device copied.

use std::time::Instant;

use memhc_core::{Mode, PolicyKind};
use memhc_gpu::model::{ModelParams, ModelReport, model_backend};
use memhc_workload::run::{RunSpec, peak_without_eviction, run_observed_in};
use memhc_workload::{Analysis, Dist, Order, SynthParams, Workload, generate};

type Error = Box<dyn std::error::Error>;

/// The run of `w` by memhc-synth's runner (`memhc_workload::run::run_observed_in`, in
/// `order`), on the modelled device: registration (on the direct path, `spec.pinned`, in
/// the backend's page-locked memory, with the pinned pool's first chunk sized from the plan),
/// the future, the vectors, the releases, the traces and the result reads, without data.
/// Returns the model's report with the makespan counted from the start of the queue (as
/// memhc-synth's `model_makespan_s`), and the modelled set-up before it, seconds. (Until
/// 2026-11-28 the bench had a copy of the runner, which did not size the pinned pool from the
/// plan: its direct path page-locked memory inside the queue.)
fn modelled(
    w: &Workload,
    a: &Analysis,
    spec: &RunSpec,
    order: Order,
) -> Result<(ModelReport, f64), Error> {
    let (backend, clock) = model_backend(ModelParams::from_env()?, spec.budget)?;
    let ran = run_observed_in(backend, w, a, spec, order, false, &mut |_| {})?;
    Ok(clock.report().from_queue_start(ran.outcome.queue_start_ns))
}

/// The schedules the bench compares: the paper's two modes as the runtime issues them with
/// pageable host memory (every copy staged), and the direct path: the optimal mode with node
/// data and results in page-locked memory, results read back early, released blocks resting,
/// and the inputs uploaded ahead on the copy stream (`--host-memory pinned --prefetch 12`),
/// issued in the queue's order (`direct`) and by the dependency graph (`direct-dep`,
/// `--order dependency`).
const SCHEDULES: [(&str, Mode, bool, Order); 4] = [
    ("optimal", Mode::Optimal, false, Order::Queue),
    ("naive", Mode::Naive, false, Order::Queue),
    ("direct", Mode::Optimal, true, Order::Queue),
    ("direct-dep", Mode::Optimal, true, Order::Dependency),
];

struct Point {
    n: usize,
    vector_size: usize,
    repeat: f64,
    oversub: f64,
}

fn main() -> Result<(), Error> {
    let vectors: usize = match std::env::var("MEMHC_MODEL_VECTORS") {
        Ok(v) => v.parse()?,
        Err(_) => 8,
    };
    let mut points = Vec::new();
    for n in [384, 192] {
        for repeat in [0.0, 0.25, 0.5, 0.75, 1.0] {
            points.push(Point {
                n,
                vector_size: 16,
                repeat,
                oversub: 0.0,
            });
        }
        for vector_size in [1, 2, 4, 8, 32] {
            points.push(Point {
                n,
                vector_size,
                repeat: 1.0,
                oversub: 0.0,
            });
        }
    }
    points.push(Point {
        n: 384,
        vector_size: 32,
        repeat: 0.5,
        oversub: 0.5,
    });
    let started = Instant::now();
    println!(
        "modelled H100 (memhc_gpu::model defaults{}), {vectors} vectors, 4 streams, LRU; times in ms",
        std::env::var("MEMHC_MODEL")
            .map(|s| format!(" with {s}"))
            .unwrap_or_default()
    );
    println!(
        "{:>4} {:>5} {:>6} {:>7} {:>10} {:>10} {:>9} {:>9} {:>9} {:>14} {:>8} {:>8} {:>8} {:>9} {:>8} {:>6} {:>6} {:>8} {:>8} {:>9}",
        "N",
        "vsize",
        "repeat",
        "oversub",
        "mode",
        "makespan",
        "floor",
        "mk/floor",
        "floor/mk",
        "vs opt. floor",
        "h2d",
        "d2h",
        "gemm",
        "host copy",
        "pinning",
        "pinned",
        "host %",
        "engine %",
        "set-up",
        "cpu B/B"
    );
    for p in &points {
        let params = SynthParams {
            tensor_size: p.n,
            vector_size: p.vector_size,
            vectors,
            repeat: p.repeat,
            dist: Dist::Uniform,
            seed: 1,
        };
        let w = generate(&params)?;
        let a = w.analyse()?;
        let peak = peak_without_eviction(&w, &a)?;
        let budget = (peak as f64 / (1.0 + p.oversub)).floor() as usize;
        let mut optimal_floor = None;
        for (name, mode, direct, order) in SCHEDULES {
            let spec = RunSpec {
                pinned: direct,
                prefetch: direct.then_some(12),
                ..RunSpec::new(PolicyKind::Lru, mode, budget, 4)
            };
            let (r, setup) = modelled(&w, &a, &spec, order)?;
            let point_floor = *optimal_floor.get_or_insert(r.floor_s);
            println!(
                "{:>4} {:>5} {:>6} {:>7} {:>10} {:>10.2} {:>9.2} {:>9.2} {:>9.3} {:>14.2} {:>8.1} {:>8.1} {:>8.1} {:>9.1} {:>8.1} {:>6} {:>6.1} {:>8.1} {:>8.1} {:>9.4}",
                p.n,
                p.vector_size,
                p.repeat,
                p.oversub,
                name,
                r.makespan_s * 1e3,
                r.floor_s * 1e3,
                r.makespan_s / r.floor_s,
                r.floor_s / r.makespan_s,
                r.makespan_s / point_floor,
                r.h2d_busy_s * 1e3,
                r.d2h_busy_s * 1e3,
                r.compute_busy_s * 1e3,
                r.host_copy_s * 1e3,
                r.host_pin_s * 1e3,
                r.pinned_buffers,
                // The queue's share: the set-up (page-locking node memory) comes before it.
                100.0 * (r.host_copy_s - setup).max(0.0) / r.makespan_s,
                100.0 * r.h2d_busy_s.max(r.d2h_busy_s).max(r.compute_busy_s) / r.makespan_s,
                setup * 1e3,
                r.staged_bytes as f64 / (r.h2d_bytes + r.d2h_bytes).max(1) as f64,
            );
        }
    }
    println!(
        "({} points, {:.1} s)",
        points.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
