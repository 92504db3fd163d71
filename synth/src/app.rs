//! The `memhc-synth` command line: the subcommands, and a run in one process; `plan` is in
//! [`planning`](crate::planning), what runs and plans share in [`args`](crate::args), a run's
//! options in `runargs.rs`, its sweep, points and output in `sweep.rs`, one prepared point in
//! `prepared.rs`, and a sweep over MPI ranks (`--journal`, or under `mpirun`) in
//! `distributed.rs`. `main.rs` only calls [`main`].

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use crate::args::{check_generated, usage};
use crate::error::Result;
use crate::generate::generate;
use crate::planning::{PlanArgs, plan_command};
use crate::replot::{PlotArgs, plot_command};
use crate::runargs::RunArgs;
use crate::sweep::{Observed, Parsed, exit_code, present, refuse_oversubscribed_unified};
use crate::{distributed, file, policy_replay, report};

/// The synthetic workload of the MemHC paper: generate a queue of meson contractions, run it
/// with eviction policies and optimisation modes under a device budget, and report; or plan
/// its memory without running it (`plan`); or plot saved records again (`plot`).
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
    Plan(Box<PlanArgs>),
    /// Draw the plots of `--plot` again from records saved with `--json`: `plot
    /// fig7.json --against repeat --where tensor-size=384 --out plots/`.
    ///
    /// Writes GFLOPS, evictions and misses against the parameter, one line per policy/mode
    /// series; `--where KEY=VALUE` (repeatable) keeps a slice of the records, and is required
    /// where a series has two records at one x value.
    Plot(PlotArgs),
    /// Replay vectors of equal-sized objects with room for K of them and print each policy's
    /// evictions, hits and misses: `replay --slots 4 --policy lru,pp-lru 'A B C D' 'E F A B'`
    /// (`trace`, its old name, still works).
    #[command(alias = "trace")]
    Replay {
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
        Some(Command::Replay {
            slots,
            policy,
            vectors,
        }) => replay(slots, &policy, &vectors),
        Some(Command::Plan(args)) => plan_command(&args),
        Some(Command::Plot(args)) => plot_command(&args),
        None if distributed::wanted(&cli.run) => return distributed::main(&cli.run),
        None => synth(&cli.run),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memhc-synth: {e}");
            ExitCode::from(exit_code(&e))
        }
    }
}

fn replay(slots: usize, policy: &str, vectors: &[String]) -> Result<()> {
    let policies = memhc_select::names::policies(policy).map_err(usage("--policy"))?;
    let vectors = policy_replay::parse_vectors(vectors)?;
    let lines = policy_replay::replay(slots, &policies, &vectors)?;
    report::to_stdout(&lines.iter().map(|l| format!("{l}\n")).collect::<String>())
}

fn synth(a: &RunArgs) -> Result<()> {
    let mut parsed = Parsed::new(a)?;
    if let Some(path) = &a.emit_workload {
        return emit(&parsed, path, a.emit_npy);
    }
    parsed.load(a)?;
    let prepared = (0..parsed.points.len())
        .map(|i| parsed.prepare(i))
        .collect::<Result<Vec<_>>>()?;
    let plan = &parsed.plan;
    refuse_oversubscribed_unified(&plan.modes, &prepared)?;
    let total: u64 = prepared
        .iter()
        .map(|p| p.workload.vectors.len() as u64)
        .sum::<u64>()
        * plan.runs_per_point();
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} vectors {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    if let Some(p) = prepared.first() {
        bar.set_message("warm-up");
        plan.warm_up(p)?;
    }
    let mut records = Vec::new();
    let mut dump = a.dump_results.as_deref();
    let mut observed = Observed::new(a, prepared.len(), plan.runs_per_point());
    let partial = a.json.as_deref().map(report::partial_path);
    for p in &prepared {
        records.extend(
            plan.run_point(p, &bar, &mut dump, &mut observed)
                .inspect_err(|_| bar.abandon())?,
        );
        if let Some(path) = &partial {
            report::write_json(path, &records)?;
        }
    }
    bar.finish_and_clear();
    present(a, &records, &parsed.sweeps, &mut observed)?;
    if let Some(path) = &partial {
        std::fs::remove_file(path).map_err(|e| crate::error::Error::io(path, e))?;
    }
    // Every output is complete: they stay (any error above removed them).
    observed.keep_outputs();
    Ok(())
}

/// `--emit-workload FILE`: writes the generated workload and exits.
fn emit(parsed: &Parsed, path: &std::path::Path, npy: bool) -> Result<()> {
    check_generated(
        "the workload",
        &parsed.base,
        false,
        parsed.setup.host_memory,
    )?;
    let w = generate(&parsed.base)?;
    w.analyse()?;
    file::save(&w, path, npy)?;
    eprintln!(
        "memhc-synth: wrote {} ({} nodes, {} vectors, {} results)",
        path.display(),
        w.nodes.len(),
        w.vectors.len(),
        w.results.len()
    );
    Ok(())
}
