//! The runtime's own cost per contraction: the synthetic workload at N = 2 (vector size 16,
//! repeated rate 1/2) on the null backend, which does no arithmetic and moves no data, so what
//! is timed is the bookkeeping of the runner, the runtime and the policy alone.
//!
//! Cases: 4,000, 32,000 and 256,000 contractions; LRU and Belady; everything fitting (budget =
//! the peak without eviction) and oversubscribed (budget = peak / 2.5), all in the optimal
//! mode on 4 streams. The time criterion reports is **per contraction**: each iteration is one
//! whole run (its `wall_s`: the vectors, traces and result reads, not the registration of the
//! nodes before them), divided by the number of contractions. The `analyse` group times
//! [`Workload::analyse`](memhc_workload::Workload::analyse), the planning of the queue, per
//! contraction too.
//!
//! `cargo bench -p memhc-workload --bench overhead`. Environment:
//!
//! * `MEMHC_OVERHEAD_SIZES=4000,32000` runs only these queue lengths;
//! * `MEMHC_OVERHEAD_CASES=lru/fits,belady` runs only the cases whose name contains one of
//!   these;
//! * `MEMHC_OVERHEAD_ONCE=1` skips criterion and times each case once (for code too slow to
//!   sample at 256,000 contractions), printing one line per case, with the CPU time too, and
//!   (Linux) the minor page faults per contraction and the share of the thread's CPU time spent
//!   in the kernel over the same vectors (clock ticks: coarse on a short run);
//! * `MEMHC_OVERHEAD_CLOCK=cpu` makes criterion time the CPU time the thread spends in the
//!   vectors (after the first, per contraction) instead of the run's wall time: the same
//!   bookkeeping, without the time the thread waits for a core on a busy machine (work on a
//!   sibling hyperthread or in the shared caches still slows the thread's own CPU time).
//!   The clock is the thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`), which the kernel brings
//!   up to date when it is read. (Until 2026-11-28 it was `/proc/thread-self/schedstat`, which
//!   for a running thread moves only at the scheduler's tick, 4 ms on the machine this was
//!   measured on: a 4,000-contraction window is a few ms long, and it read about half the
//!   true cost there; docs/results/2026-11-28-overhead-clock.md.)
//!
//! The bench runs under mimalloc, the allocator memhc-synth and memhc ship with (their
//! `mimalloc` feature): the release of a run's objects frees their host data, and glibc's
//! malloc made the cost 14-26% higher at 256,000 contractions
//! (docs/results/2026-11-26-overhead/overhead-mimalloc-experiment.md). A program that embeds
//! memhc brings its own allocator.

#![allow(missing_docs, clippy::expect_used)]

use std::time::{Duration, Instant};

use criterion::Criterion;
use memhc_core::{Mode, PolicyKind};
use memhc_host::NullBackend;
use memhc_workload::run::{RunSpec, peak_without_eviction, run};
use memhc_workload::{Analysis, SynthParams, Workload, generate};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const VECTOR_SIZE: usize = 16;

/// The queue lengths to run.
fn sizes() -> Vec<usize> {
    match std::env::var("MEMHC_OVERHEAD_SIZES") {
        Ok(s) => s.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        Err(_) => vec![4_000, 32_000, 256_000],
    }
}

/// A planned queue of `contractions` contractions and its budget without eviction.
struct Queue {
    contractions: usize,
    workload: Workload,
    analysis: Analysis,
    peak: usize,
}

fn queue(contractions: usize) -> Queue {
    let params = SynthParams {
        tensor_size: 2,
        vector_size: VECTOR_SIZE,
        vectors: contractions / VECTOR_SIZE,
        repeat: 0.5,
        ..SynthParams::default()
    };
    let workload = generate(&params).expect("workload");
    let analysis = workload.analyse().expect("analysis");
    let peak = peak_without_eviction(&workload, &analysis).expect("peak");
    Queue {
        contractions,
        workload,
        analysis,
        peak,
    }
}

/// The cases of one queue: (name, policy, budget).
fn cases(q: &Queue) -> Vec<(String, PolicyKind, usize)> {
    let wanted: Option<Vec<String>> = std::env::var("MEMHC_OVERHEAD_CASES")
        .ok()
        .map(|s| s.split(',').map(|x| x.trim().to_owned()).collect());
    let mut out = Vec::new();
    for policy in [PolicyKind::Lru, PolicyKind::Belady] {
        for (fit, budget) in [
            ("fits", q.peak),
            ("oversub1.5", (q.peak as f64 / 2.5) as usize),
        ] {
            let name = format!("{policy}/{fit}");
            if wanted
                .as_ref()
                .is_none_or(|w| w.iter().any(|x| name.contains(x.as_str())))
            {
                out.push((name, policy, budget));
            }
        }
    }
    out
}

/// Nanoseconds the calling thread has run on a CPU, exact when read (the thread's CPU clock),
/// if the system says.
fn cpu_ns() -> Option<u64> {
    let t = cpu_time::ThreadTime::try_now().ok()?.as_duration();
    u64::try_from(t.as_nanos()).ok()
}

/// The calling thread's minor page faults and its user and system CPU time in clock ticks
/// (Linux: fields 10, 14 and 15 of `/proc/thread-self/stat`), if the system says.
fn thread_stat() -> Option<[u64; 3]> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3)?.parse().ok();
    Some([field(10)?, field(14)?, field(15)?])
}

/// What one run costs per contraction: its wall time (`wall_s`: vectors, traces, result
/// reads) divided by its contractions, and the CPU time the thread spent from the end of the
/// first vector to the end of the last, divided by the contractions in between (the null
/// backend runs everything on the calling thread, so this is the bookkeeping alone, however
/// busy the machine).
struct Cost {
    wall: Duration,
    cpu: Option<Duration>,
    /// Minor page faults per contraction over the same vectors as `cpu`.
    faults: Option<f64>,
    /// The share of the thread's CPU time spent in the kernel over those vectors.
    system: Option<f64>,
}

/// Whether criterion should time CPU (`MEMHC_OVERHEAD_CLOCK=cpu`) rather than wall time.
fn cpu_clock() -> bool {
    std::env::var("MEMHC_OVERHEAD_CLOCK").is_ok_and(|c| c == "cpu")
}

/// One run's cost per contraction.
fn per_contraction(q: &Queue, policy: PolicyKind, budget: usize) -> Duration {
    let c = cost(q, policy, budget, false);
    match (cpu_clock(), c.cpu) {
        (true, Some(cpu)) => cpu,
        _ => c.wall,
    }
}

/// One run's cost; with `stats`, its page faults and kernel share too (`MEMHC_OVERHEAD_ONCE`).
fn cost(q: &Queue, policy: PolicyKind, budget: usize, stats: bool) -> Cost {
    let spec = RunSpec {
        policy,
        mode: Mode::Optimal,
        budget,
        streams: 4,
        verify: false,
        alloc: None,
        reuse_tolerance_percent: 0,
        prefetch: None,
        pinned: false,
    };
    let vectors = q.workload.vectors.len();
    let (mut first, mut last) = (None, None);
    let (mut first_stat, mut last_stat) = (None, None);
    // The clock is read after the first and the last vector only, so as not to slow the run.
    let o = run(
        NullBackend::new(budget),
        &q.workload,
        &q.analysis,
        &spec,
        &mut |v| {
            // The counts are read outside the clock's window, and only when asked for.
            if v == 1 {
                first_stat = stats.then(thread_stat).flatten();
                first = cpu_ns();
            } else if v == vectors {
                last = cpu_ns();
                last_stat = stats.then(thread_stat).flatten();
            }
        },
    )
    .expect("run");
    let between = (vectors.saturating_sub(1) * VECTOR_SIZE).max(1) as u64;
    let counted = first_stat.zip(last_stat);
    let faults = counted.map(|(a, b)| b[0].saturating_sub(a[0]) as f64 / between as f64);
    let system = counted.and_then(|(a, b)| {
        let (user, sys) = (b[1].saturating_sub(a[1]), b[2].saturating_sub(a[2]));
        (user + sys > 0).then(|| sys as f64 / (user + sys) as f64)
    });
    Cost {
        faults,
        system,
        wall: Duration::from_secs_f64(o.wall_s / q.contractions as f64),
        cpu: first
            .zip(last)
            .map(|(a, b)| Duration::from_nanos(b.saturating_sub(a) / between)),
    }
}

fn once() {
    for n in sizes() {
        let q = queue(n);
        let start = Instant::now();
        q.workload.analyse().expect("analysis");
        let analyse = start.elapsed().as_secs_f64() / n as f64;
        println!(
            "{n:>7} contractions: analyse {:8.3} us/contraction",
            analyse * 1e6
        );
        for (name, policy, budget) in cases(&q) {
            let c = cost(&q, policy, budget, true);
            let cpu = c
                .cpu
                .map_or("-".into(), |t| format!("{:.3}", t.as_secs_f64() * 1e6));
            let faults = c.faults.map_or("-".into(), |f| format!("{f:.4}"));
            let system = c
                .system
                .map_or("-".into(), |s| format!("{:.1}%", 100.0 * s));
            println!(
                "{n:>7} contractions: {name:<18} wall {:8.3} us/contraction, cpu {cpu:>8} us/contraction, \
                 minor faults {faults:>7}/contraction, kernel {system:>6} of cpu",
                c.wall.as_secs_f64() * 1e6
            );
        }
    }
}

fn bench(c: &mut Criterion) {
    for n in sizes() {
        let q = queue(n);
        let mut group = c.benchmark_group(format!("overhead/{n}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_secs(2));
        for (name, policy, budget) in cases(&q) {
            group.bench_function(name, |b| {
                b.iter_custom(|iters| {
                    (0..iters)
                        .map(|_| per_contraction(&q, policy, budget))
                        .sum()
                })
            });
        }
        group.bench_function("analyse", |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let start = Instant::now();
                        std::hint::black_box(q.workload.analyse().expect("analysis"));
                        start.elapsed() / n as u32
                    })
                    .sum()
            })
        });
        group.finish();
    }
}

fn main() {
    if std::env::var_os("MEMHC_OVERHEAD_ONCE").is_some() {
        once();
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
