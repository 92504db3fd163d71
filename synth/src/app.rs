//! The `memhc-synth` command line: arguments, sweeps, runs, output; `plan` is in
//! [`planning`](crate::planning), what runs and plans share in [`args`](crate::args), one
//! prepared point in `prepared.rs`. `main.rs` only calls [`main`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use memhc_core::Mode;

use crate::args::{ConfigArgs, WorkloadArgs, check_generated, host_memory, parse_policies};
use crate::device::{BackendChoice, run_on};
use crate::error::{Result, SynthError};
use crate::generate::{SynthParams, generate};
use crate::observe::Observe;
use crate::planning::{PlanArgs, plan_command};
use crate::prepared::{PointSetup, Prepared, median_run};
use crate::run::{RunSpec, miss_lower_bound};
use crate::{file, plot, replay, report};

/// The synthetic workload of the MemHC paper: generate a queue of meson contractions, run it
/// with eviction policies and optimisation modes under a device budget, and report; or plan
/// its memory without running it (`plan`).
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
    /// Plan device memory exactly, without running: `plan --tensor-size 32 --policy all
    /// --oversub 1`.
    ///
    /// Takes the workload and configuration options of a run, and prints, from dry runs of
    /// the runtime on a data-less backend: each mode's peak without eviction and least budget
    /// without eviction; each policy's least budget that runs at all; what a run at the budget
    /// will count (allocations, pool reuses, hits, misses, evictions, write-backs, bytes moved,
    /// peak), exactly; and the host memory a run needs.
    Plan(PlanArgs),
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
    #[command(flatten)]
    workload: WorkloadArgs,
    #[command(flatten)]
    config: ConfigArgs,
    /// Backend: host (CPU reference), cuda or rocm.
    #[arg(long, default_value = "host")]
    backend: String,
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
    /// Write SVG plots of the sweep (GFLOPS and evictions against the swept parameter), and of
    /// each run its device memory over time (`memory-<run>.svg`) and its timeline
    /// (`timeline-<run>.svg`), from the runtime's event log.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Write each run's timeline as a Chrome-trace JSON that Perfetto's UI opens: a track per
    /// stream, device bytes, object lifetimes and dependencies (from the runtime's event log;
    /// with several runs, FILE gets each run's label before its extension).
    #[arg(long, value_name = "FILE")]
    timeline: Option<PathBuf>,
    /// Print each run's memory report after the table: DRGPUM's object-level inefficiency
    /// patterns with their distances in queue steps and bytes, and the two highest memory
    /// peaks with the objects live at each (from the runtime's event log).
    #[arg(long)]
    report: bool,
    /// Write the generated workload to FILE and exit.
    #[arg(long, value_name = "FILE", conflicts_with = "workload")]
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

/// One swept parameter and its values.
#[derive(Clone, Debug, PartialEq)]
struct Sweep {
    key: String,
    values: Vec<f64>,
}

fn parse_sweep(s: &str) -> Result<Sweep> {
    let usage = |why: &str| SynthError::Usage(format!("--sweep {s}: {why}"));
    let (key, list) = s
        .split_once('=')
        .ok_or_else(|| usage("expected KEY=V1,V2,..."))?;
    if !["repeat", "vector-size", "tensor-size", "oversub"].contains(&key) {
        return Err(usage(
            "the key must be repeat, vector-size, tensor-size or oversub",
        ));
    }
    let values = list
        .split(',')
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .map_err(|_| usage(&format!("'{v}' is not a number")))
        })
        .collect::<Result<Vec<_>>>()?;
    if values.is_empty() {
        return Err(usage("no values"));
    }
    let integral = key != "repeat" && key != "oversub";
    if let Some(v) = values
        .iter()
        .find(|v| !v.is_finite() || **v < 0.0 || (integral && v.fract() != 0.0))
    {
        return Err(usage(&format!("{v} is not a valid {key}")));
    }
    Ok(Sweep {
        key: key.to_owned(),
        values,
    })
}

/// Every combination of the swept values, applied to the base parameters.
fn points(
    base: &SynthParams,
    oversub: Option<f64>,
    sweeps: &[Sweep],
) -> Vec<(SynthParams, Option<f64>)> {
    let mut out = vec![(base.clone(), oversub)];
    for sweep in sweeps {
        out = out
            .into_iter()
            .flat_map(|(p, o)| {
                sweep.values.iter().map(move |&v| {
                    let mut p = p.clone();
                    let mut o = o;
                    match sweep.key.as_str() {
                        "repeat" => p.repeat = v,
                        "vector-size" => p.vector_size = v as usize,
                        "tensor-size" => p.tensor_size = v as usize,
                        _ => o = Some(v),
                    }
                    (p, o)
                })
            })
            .collect();
    }
    out
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
        Some(Command::Plan(args)) => plan_command(&args),
        None => synth(&cli.run),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memhc-synth: {e}");
            let input = matches!(
                e,
                SynthError::Workload(_)
                    | SynthError::Usage(_)
                    | SynthError::Io { .. }
                    | SynthError::HostMemory { .. }
            );
            ExitCode::from(if input { 2 } else { 1 })
        }
    }
}

fn trace(slots: usize, policy: &str, vectors: &[String]) -> Result<()> {
    let policies = parse_policies(policy)?;
    let vectors = replay::parse_vectors(vectors)?;
    let lines = replay::replay(slots, &policies, &vectors)?;
    report::to_stdout(&lines.iter().map(|l| format!("{l}\n")).collect::<String>())
}

fn synth(a: &RunArgs) -> Result<()> {
    let (policies, modes) = a.config.parse()?;
    let allocs = a.config.allocs(&modes)?;
    let prefetches = a.config.prefetches(&modes)?;
    let backend: BackendChoice = a.backend.parse()?;
    backend.check()?;
    let sweeps = a
        .sweep
        .iter()
        .map(|s| parse_sweep(s))
        .collect::<Result<Vec<_>>>()?;
    if a.config.budget.is_some() && sweeps.iter().any(|s| s.key == "oversub") {
        return Err(SynthError::Usage(
            "--sweep oversub=... and --budget exclude each other".into(),
        ));
    }
    if sweeps.len() > 1 && a.plot.is_some() {
        return Err(SynthError::Usage(
            "--plot draws one swept parameter; give one --sweep".into(),
        ));
    }
    let base = a.workload.params()?;
    let default_oversub = if a.config.budget.is_some() {
        None
    } else {
        Some(a.config.oversub.unwrap_or(0.0))
    };
    let available = host_memory()?;

    if let Some(path) = &a.emit_workload {
        check_generated("the workload", &base, false, available)?;
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

    let loaded = match &a.workload.workload {
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
    let setup = PointSetup {
        budget: a.config.budget,
        from_file: loaded.is_some(),
        backend,
        verify: a.verify,
        host_memory: available,
    };
    let mut prepared = Vec::new();
    for (params, oversub) in points(&base, default_oversub, &sweeps) {
        let workload = match &loaded {
            Some(w) => w.clone(),
            None => {
                check_generated("the run", &params, true, available)?;
                generate(&params)?
            }
        };
        prepared.push(Prepared::new(params, oversub, workload, &setup)?);
    }
    refuse_oversubscribed_unified(&modes, &prepared)?;
    let runs_per_point =
        (policies.len() * modes.len() * allocs.len() * prefetches.len() * a.runs) as u64;
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
            prefetch: prefetches.first().copied().flatten(),
            ..p.spec(policy, mode, a.config.streams, false)
        };
        run_on(backend, &p.workload, &p.analysis, &spec, false, &mut |_| {})?;
    }
    let observe = Observe {
        timeline: a.timeline.clone(),
        report: a.report,
        plot: a.plot.clone(),
        several: prepared.len() * policies.len() * modes.len() * allocs.len() * prefetches.len()
            > 1,
    };
    let mut reports = Vec::new();
    let mut written = Vec::new();
    let mut records = Vec::new();
    let mut dumped = false;
    for p in &prepared {
        for (&mode, &alloc) in modes
            .iter()
            .flat_map(|m| allocs.iter().map(move |al| (m, al)))
        {
            let mut lower_bound = None;
            for (&policy, &prefetch) in policies
                .iter()
                .flat_map(|p| prefetches.iter().map(move |pf| (p, pf)))
            {
                bar.set_message(format!("{policy}/{mode}"));
                let spec = RunSpec {
                    alloc,
                    reuse_tolerance_percent: a.config.reuse_tolerance,
                    prefetch,
                    ..p.spec(policy, mode, a.config.streams, a.verify)
                };
                if p.analysis.equal_sizes && lower_bound.is_none() {
                    lower_bound = Some(miss_lower_bound(&p.workload, &p.analysis, &spec)?);
                }
                let traced = median_run(backend, p, &spec, a.runs, observe.events(), &bar)
                    .inspect_err(|_| bar.abandon())?;
                let outcome = &traced.outcome;
                if let (Some(dir), false) = (&a.dump_results, dumped) {
                    file::dump_results(dir, &outcome.results, &outcome.traces)?;
                    dumped = true;
                }
                let record = p.record(&a.backend, &spec, lower_bound, outcome);
                if observe.events() {
                    let (label, title) = run_label(&record, prepared.len() > 1);
                    let (text, files) =
                        observe.emit(&label, &title, &traced.events, &traced.timeline)?;
                    reports.extend(text);
                    written.extend(files);
                }
                records.push(record);
            }
        }
    }
    bar.finish_and_clear();

    report::to_stdout(&report::table(&records))?;
    for text in &reports {
        report::to_stdout(&format!("\n{text}"))?;
    }
    for path in &written {
        eprintln!("memhc-synth: wrote {}", path.display());
    }
    if a.paper_table {
        report::to_stdout(&format!("\n{}", report::paper_table(&records)))?;
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

/// A run's label in file names (`lru-optimal-driver-pf6-N32-r0.5-o1.5`: policy, mode,
/// allocation, prefetch, and with several points the point) and its title in reports.
fn run_label(r: &crate::record::Record, several_points: bool) -> (String, String) {
    let mut label = format!("{}-{}-{}", r.policy, r.mode, r.alloc);
    if let Some(w) = r.prefetch {
        label.push_str(&format!("-pf{w}"));
    }
    if several_points {
        label.push_str(&format!(
            "-N{}-v{}-r{}",
            r.tensor_size, r.vector_size, r.repeat
        ));
        if let Some(o) = r.oversub {
            label.push_str(&format!("-o{o}"));
        }
    }
    let title = format!(
        "{}/{} ({}), N = {}, repeat {}, oversub {}",
        r.policy,
        r.mode,
        r.alloc,
        r.tensor_size,
        r.repeat,
        r.oversub.map_or("-".into(), |o| o.to_string())
    );
    (label, title)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_combine() {
        let s = [
            parse_sweep("repeat=0,1").unwrap(),
            parse_sweep("oversub=0.5,1.5").unwrap(),
        ];
        let pts = points(&SynthParams::default(), Some(0.0), &s);
        assert_eq!(pts.len(), 4);
        assert_eq!((pts[3].0.repeat, pts[3].1), (1.0, Some(1.5)));
        assert!(parse_sweep("speed=1").is_err());
        assert!(parse_sweep("vector-size=1.5").is_err());
        assert!(parse_sweep("repeat").is_err());
    }
}
