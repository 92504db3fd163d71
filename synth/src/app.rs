//! The `memhc-synth` command line: arguments, sweeps, runs, output. `main.rs` only calls
//! [`main`].

use std::path::PathBuf;
use std::process::ExitCode;

use crate::args::{parse_allocs, parse_modes, parse_policies, parse_sweep, points};
use crate::device::{BackendChoice, run_on};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use memhc_core::{Alloc, Mode, PolicyKind};

pub use crate::args::parse_bytes;

use crate::error::{Result, SynthError};
use crate::generate::{Dist, SynthParams, generate};
use crate::record::Record;
use crate::run::{Outcome, RunSpec, largest_working_set, miss_lower_bound, peak_without_eviction};
use crate::workload::{Analysis, Workload};
use crate::{file, plot, replay, report};

/// The synthetic workload of the MemHC paper: generate a queue of meson contractions, run it
/// with eviction policies and optimisation modes under a device budget, and report.
#[derive(Debug, Parser)]
#[command(name = "memhc-synth", version, about, long_about = None, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Replay vectors of equal-sized objects with room for K of them and print each policy's
    /// evictions, hits and misses: `trace --slots 4 --policy lru,pp-lru 'A B C D' 'E F A B'`.
    Trace {
        /// How many objects fit.
        #[arg(long)]
        slots: usize,
        /// Policies, comma separated, or `all`.
        #[arg(long, default_value = "lru,pp-lru,belady")]
        policy: String,
        /// Vectors: object names separated by spaces, one argument per vector.
        #[arg(required = true)]
        vectors: Vec<String>,
    },
}

#[derive(Debug, Args)]
struct RunArgs {
    /// N: each of the 16 spin components of a meson is N x N complex doubles.
    #[arg(long, default_value_t = 64)]
    tensor_size: usize,
    /// Contractions per vector.
    #[arg(long, default_value_t = 16)]
    vector_size: usize,
    /// Number of vectors.
    #[arg(long, default_value_t = 100)]
    vectors: usize,
    /// Repeated rate: the share of a vector's input slots that take an earlier node (0 to 1).
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    repeat: f64,
    /// How repeated nodes are chosen: uniform or gaussian.
    #[arg(long, default_value = "uniform")]
    dist: String,
    /// Oversubscription rate O >= 0: the device budget is peak / (1 + O), where peak is the
    /// most bytes the run holds resident when nothing is evicted. Default 0 (everything fits).
    #[arg(long, conflicts_with = "budget", allow_negative_numbers = true)]
    oversub: Option<f64>,
    /// Device budget in bytes (suffixes K, M, G allowed: 512M, 2G).
    #[arg(long, value_parser = parse_bytes)]
    budget: Option<u64>,
    /// Seed of the generator (runs repeat exactly).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Backend: host (CPU reference), cuda or rocm.
    #[arg(long, default_value = "host")]
    backend: String,
    /// Eviction policies, comma separated, or `all`: lru, pp-lru, random, mru, car, clock-pro,
    /// belady.
    #[arg(long, default_value = "lru")]
    policy: String,
    /// Modes, comma separated: naive, reorg, reorg-sync, optimal, or `all` for these four (the
    /// paper's Fig. 8); and unified, the managed-memory baseline, on a backend with managed
    /// memory and without oversubscription (on the host backend it exercises the flow and says
    /// nothing about GPU performance).
    #[arg(long, default_value = "optimal")]
    mode: String,
    /// Where device memory comes from, comma separated, or `all`: driver (every buffer a
    /// driver allocation, the paper), handover (an evicted buffer goes straight to the request
    /// that evicted it), arena (one driver allocation of the budget, sub-allocated). Default:
    /// each mode's own (handover in optimal, driver in the others).
    #[arg(long)]
    alloc: Option<String>,
    /// A pooled or handed-over buffer up to this many percent larger than a request may serve
    /// it (0: exact sizes, as the paper's free pool).
    #[arg(long, default_value_t = 0)]
    reuse_tolerance: u32,
    /// Streams the contractions of a vector are spread over.
    #[arg(long, default_value_t = 4)]
    streams: usize,
    /// Run every configuration this many times and report the median wall time (and GFLOPS);
    /// the counts are the same in every repetition.
    #[arg(long, default_value_t = 1)]
    runs: usize,
    /// Check every result against the reference implementation (slow: it recomputes all).
    #[arg(long)]
    verify: bool,
    /// Sweep a parameter: `repeat=0,0.5,1`, `vector-size=...`, `tensor-size=...`,
    /// `oversub=...`. Repeat the flag to sweep several (every combination runs).
    #[arg(long, value_name = "KEY=V1,V2,...")]
    sweep: Vec<String>,
    /// Write the records (one per point, policy and mode) as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the records as CSV.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Print per-vector averages laid out like the paper's Tables 1-3.
    #[arg(long)]
    paper_table: bool,
    /// Write SVG plots of the sweep (GFLOPS and evictions against the swept parameter).
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Run a workload file (memhc-workload/1, see docs/workload-format.md) instead of
    /// generating one.
    #[arg(long, value_name = "FILE", conflicts_with = "emit_workload")]
    workload: Option<PathBuf>,
    /// Write the generated workload to FILE and exit.
    #[arg(long, value_name = "FILE")]
    emit_workload: Option<PathBuf>,
    /// With --emit-workload: write node data as .npy files beside it instead of seeds.
    #[arg(long, requires = "emit_workload")]
    emit_npy: bool,
    /// Write the results (DIR/<id>.npy) and traces (DIR/traces.json) of the first run.
    #[arg(long, value_name = "DIR")]
    dump_results: Option<PathBuf>,
}

/// Unified memory is never oversubscribed: refuses a point whose budget is below its peak.
fn refuse_oversubscribed_unified(modes: &[Mode], prepared: &[Prepared]) -> Result<()> {
    if !modes.contains(&Mode::Unified) {
        return Ok(());
    }
    match prepared.iter().find(|p| p.budget < p.peak) {
        Some(p) => Err(SynthError::Usage(format!(
            "unified memory is never oversubscribed: --mode unified needs a budget of at least \
             the peak, {} bytes, but {} makes it {} bytes",
            p.peak,
            p.oversub
                .map_or_else(|| "--budget".to_owned(), |o| format!("--oversub {o}")),
            p.budget
        ))),
        None => Ok(()),
    }
}

/// Runs the tool on `args`; returns the exit code (0 ok, 1 a run failed, 2 bad input).
pub fn main(args: impl IntoIterator<Item = std::ffi::OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        // --help and --version print in full; an error is one line.
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let text = e.render().to_string();
            let line = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments");
            eprintln!(
                "memhc-synth: {} (see --help)",
                line.trim_start_matches("error: ")
            );
            return ExitCode::from(2);
        }
    };
    let outcome = match cli.command {
        Some(Command::Trace {
            slots,
            policy,
            vectors,
        }) => trace(slots, &policy, &vectors),
        None => synth(&cli.run),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memhc-synth: {e}");
            let input = matches!(
                e,
                SynthError::Workload(_) | SynthError::Usage(_) | SynthError::Io { .. }
            );
            ExitCode::from(if input { 2 } else { 1 })
        }
    }
}

fn trace(slots: usize, policy: &str, vectors: &[String]) -> Result<()> {
    let policies = parse_policies(policy)?;
    let vectors = replay::parse_vectors(vectors)?;
    for line in replay::replay(slots, &policies, &vectors)? {
        println!("{line}");
    }
    Ok(())
}

fn synth(a: &RunArgs) -> Result<()> {
    let dist: Dist = a.dist.parse()?;
    let policies = parse_policies(&a.policy)?;
    let modes = parse_modes(&a.mode)?;
    let allocs: Vec<Option<Alloc>> = match &a.alloc {
        Some(list) => parse_allocs(list)?.into_iter().map(Some).collect(),
        None => vec![None],
    };
    if a.reuse_tolerance > 100 {
        return Err(SynthError::Usage(format!(
            "--reuse-tolerance {}: at most 100 (percent)",
            a.reuse_tolerance
        )));
    }
    if modes.contains(&Mode::Unified) && allocs.contains(&Some(Alloc::Arena)) {
        return Err(SynthError::Usage(
            "--alloc arena does not apply to --mode unified (managed memory)".into(),
        ));
    }
    let backend: BackendChoice = a.backend.parse()?;
    backend.check()?;
    if a.streams == 0 {
        return Err(SynthError::Usage("--streams must be at least 1".into()));
    }
    if let Some(o) = a.oversub.filter(|o| !o.is_finite() || *o < 0.0) {
        return Err(SynthError::Usage(format!(
            "--oversub {o}: must be a number >= 0"
        )));
    }
    let sweeps = a
        .sweep
        .iter()
        .map(|s| parse_sweep(s))
        .collect::<Result<Vec<_>>>()?;
    if a.budget.is_some() && sweeps.iter().any(|s| s.key == "oversub") {
        return Err(SynthError::Usage(
            "--sweep oversub=... and --budget exclude each other".into(),
        ));
    }
    if sweeps.len() > 1 && a.plot.is_some() {
        return Err(SynthError::Usage(
            "--plot draws one swept parameter; give one --sweep".into(),
        ));
    }
    let base = SynthParams {
        tensor_size: a.tensor_size,
        vector_size: a.vector_size,
        vectors: a.vectors,
        repeat: a.repeat,
        dist,
        seed: a.seed,
    };
    let default_oversub = if a.budget.is_some() {
        None
    } else {
        Some(a.oversub.unwrap_or(0.0))
    };

    if let Some(path) = &a.emit_workload {
        let w = generate(&base)?;
        w.analyse()?;
        file::save(&w, path, a.emit_npy)?;
        eprintln!(
            "memhc-synth: wrote {} ({} nodes, {} vectors, {} results)",
            path.display(),
            w.nodes.len(),
            w.vectors.len(),
            w.results.len()
        );
        return Ok(());
    }

    let loaded = match &a.workload {
        Some(path) => {
            if sweeps.iter().any(|s| s.key != "oversub") {
                return Err(SynthError::Usage(
                    "with --workload only --sweep oversub=... applies (the file fixes the rest)"
                        .into(),
                ));
            }
            Some(file::load(path)?)
        }
        None => None,
    };

    if a.runs == 0 {
        return Err(SynthError::Usage("--runs must be at least 1".into()));
    }
    let mut prepared = Vec::new();
    for (params, oversub) in points(&base, default_oversub, &sweeps) {
        let workload = match &loaded {
            Some(w) => w.clone(),
            None => generate(&params)?,
        };
        prepared.push(Prepared::new(
            params,
            oversub,
            workload,
            a.budget,
            loaded.is_some(),
        )?);
    }
    refuse_oversubscribed_unified(&modes, &prepared)?;
    let runs_per_point = (policies.len() * modes.len() * allocs.len() * a.runs) as u64;
    let total: u64 = prepared
        .iter()
        .map(|p| p.workload.vectors.len() as u64)
        .sum::<u64>()
        * runs_per_point;
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} vectors {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );

    // The first run in a process pays for fresh memory and thread start-up: warm up with an
    // untimed run of the first configuration, so that the first record is not penalised.
    if let (Some(p), Some(&policy), Some(&mode)) =
        (prepared.first(), policies.first(), modes.first())
    {
        bar.set_message("warm-up");
        let spec = RunSpec {
            alloc: allocs.first().copied().flatten(),
            ..p.spec(policy, mode, a.streams, false)
        };
        run_on(backend, &p.workload, &p.analysis, &spec, &mut |_| {})?;
    }
    let mut records = Vec::new();
    let mut dumped = false;
    for p in &prepared {
        for (&mode, &alloc) in modes
            .iter()
            .flat_map(|m| allocs.iter().map(move |al| (m, al)))
        {
            let mut lower_bound = None;
            for &policy in &policies {
                bar.set_message(format!("{policy}/{mode}"));
                let spec = RunSpec {
                    alloc,
                    reuse_tolerance_percent: a.reuse_tolerance,
                    ..p.spec(policy, mode, a.streams, a.verify)
                };
                if p.analysis.equal_sizes && lower_bound.is_none() {
                    lower_bound = Some(miss_lower_bound(&p.workload, &p.analysis, &spec)?);
                }
                let outcome =
                    median_run(backend, p, &spec, a.runs, &bar).inspect_err(|_| bar.abandon())?;
                if let (Some(dir), false) = (&a.dump_results, dumped) {
                    file::dump_results(dir, &outcome.results, &outcome.traces)?;
                    dumped = true;
                }
                records.push(p.record(&a.backend, &spec, lower_bound, &outcome));
            }
        }
    }
    bar.finish_and_clear();

    print!("{}", report::table(&records));
    if a.paper_table {
        println!();
        print!("{}", report::paper_table(&records));
    }
    if let Some(path) = &a.json {
        report::write_json(path, &records)?;
    }
    if let Some(path) = &a.csv {
        report::write_csv(path, &records)?;
    }
    if let Some(dir) = &a.plot {
        let swept = sweeps.first().map_or("repeat", |s| s.key.as_str());
        for p in plot::write_plots(dir, &records, swept)? {
            eprintln!("memhc-synth: wrote {}", p.display());
        }
    }
    Ok(())
}

/// One point of a run, ready to run: its workload, analysis, peak and budget.
struct Prepared {
    params: SynthParams,
    oversub: Option<f64>,
    from_file: bool,
    workload: Workload,
    analysis: Analysis,
    peak: usize,
    budget: usize,
}

impl Prepared {
    /// Analyses the workload, finds its peak without eviction (a dry run), and derives the
    /// budget: `budget` bytes if given, else `peak / (1 + oversub)`. A budget that cannot hold
    /// one contraction is refused here, before anything runs.
    fn new(
        params: SynthParams,
        oversub: Option<f64>,
        workload: Workload,
        budget: Option<u64>,
        from_file: bool,
    ) -> Result<Self> {
        let analysis = workload.analyse()?;
        let peak = peak_without_eviction(&workload, &analysis)?;
        let budget = match (budget, oversub) {
            (Some(b), _) => b as usize,
            (None, o) => ((peak as f64) / (1.0 + o.unwrap_or(0.0))).floor() as usize,
        };
        let needed = largest_working_set(&workload, &analysis);
        if budget < needed {
            return Err(SynthError::Usage(format!(
                "a device budget of {budget} bytes cannot hold one contraction, which needs {needed} bytes"
            )));
        }
        Ok(Prepared {
            params,
            oversub,
            from_file,
            workload,
            analysis,
            peak,
            budget,
        })
    }

    fn spec(&self, policy: PolicyKind, mode: Mode, streams: usize, verify: bool) -> RunSpec {
        RunSpec {
            verify,
            ..RunSpec::new(policy, mode, self.budget, streams)
        }
    }

    /// The record of one run of this point.
    fn record(
        &self,
        backend: &str,
        spec: &RunSpec,
        miss_lower_bound: Option<u64>,
        o: &Outcome,
    ) -> Record {
        let s = &o.stats;
        let generated = !self.from_file;
        let p = &self.params;
        Record {
            policy: spec.policy.to_string(),
            mode: spec.mode.to_string(),
            alloc: Alloc::of(&spec.config()).to_string(),
            reuse_tolerance_percent: spec.reuse_tolerance_percent,
            backend: backend.to_owned(),
            tensor_size: if generated { p.tensor_size } else { 0 },
            vector_size: if generated { p.vector_size } else { 0 },
            vectors: self.workload.vectors.len(),
            repeat: if generated { p.repeat } else { 0.0 },
            dist: if generated {
                p.dist.to_string()
            } else {
                "file".into()
            },
            oversub: self.oversub,
            seed: if generated { p.seed } else { 0 },
            budget: spec.budget as u64,
            peak_no_eviction_bytes: self.peak as u64,
            allocations: s.allocations,
            pool_reuses: s.pool_reuses,
            handovers: s.handovers,
            arena_allocations: s.arena_allocations,
            pool_slack_bytes: s.pool_slack_bytes,
            fragmentation_evictions: s.fragmentation_evictions,
            arena_stranded_bytes: s.arena_stranded_bytes,
            arena_restarts: s.arena_restarts,
            hits: s.hits,
            misses: s.misses,
            hit_rate: s.hit_rate,
            evictions: s.evictions,
            writebacks: s.writebacks,
            h2d_bytes: s.h2d_bytes,
            d2h_bytes: s.d2h_bytes,
            peak_device_bytes: s.peak_device_bytes,
            flops: s.flops,
            gflops: o.gflops(),
            wall_s: o.wall_s,
            miss_lower_bound,
            verified: spec.verify.then_some(o.max_rel_error.is_some()),
            max_rel_error: o.max_rel_error,
        }
    }
}

/// Runs `spec` on point `p` `runs` times (the counts are the same every time) and keeps the
/// first outcome with the median wall time.
fn median_run(
    backend: BackendChoice,
    p: &Prepared,
    spec: &RunSpec,
    runs: usize,
    bar: &ProgressBar,
) -> Result<Outcome> {
    let mut walls = Vec::with_capacity(runs);
    let mut first: Option<Outcome> = None;
    for _ in 0..runs {
        let done = bar.position();
        let outcome = run_on(backend, &p.workload, &p.analysis, spec, &mut |v| {
            bar.set_position(done + v as u64)
        })?;
        walls.push(outcome.wall_s);
        first.get_or_insert(outcome);
    }
    let mut outcome = first.ok_or_else(|| SynthError::Usage("--runs must be at least 1".into()))?;
    walls.sort_by(f64::total_cmp);
    outcome.wall_s = walls[walls.len() / 2];
    Ok(outcome)
}
