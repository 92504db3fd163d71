//! The options of a run (`memhc-synth` without a subcommand): the workload, the
//! configuration, the backend, sweeps, outputs, and the campaign options of a distributed
//! sweep.

use std::path::PathBuf;

use clap::Args;

use crate::args::{ConfigArgs, WorkloadArgs};

/// The options of a run.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) workload: WorkloadArgs,
    #[command(flatten)]
    pub(crate) config: ConfigArgs,
    /// Backend: host (CPU reference), cuda or rocm.
    #[arg(long, default_value = "host")]
    pub(crate) backend: String,
    /// Run every configuration this many times and report the median wall time (and GFLOPS);
    /// the counts are the same in every repetition.
    #[arg(long, default_value_t = 1)]
    pub(crate) runs: usize,
    /// Check every result against the reference implementation (slow: it recomputes all).
    #[arg(long)]
    pub(crate) verify: bool,
    /// Sweep a parameter: `repeat=0,0.5,1`, `vector-size=...`, `tensor-size=...`,
    /// `oversub=...`. Repeat the flag to sweep several (every combination runs).
    #[arg(long, value_name = "KEY=V1,V2,...")]
    pub(crate) sweep: Vec<String>,
    /// Write the records (one per point, policy and mode) as JSON. While the sweep runs,
    /// `FILE.partial` holds the records of the points done so far (rewritten after each
    /// point, removed once FILE is written): a sweep stopped part way keeps what it measured.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    /// Write the records as CSV.
    #[arg(long, value_name = "FILE")]
    pub(crate) csv: Option<PathBuf>,
    /// Print per-vector averages laid out like the paper's Tables 1-3.
    #[arg(long)]
    pub(crate) paper_table: bool,
    /// Write SVG plots of the sweep (GFLOPS and evictions against the swept parameter), and of
    /// each run its device memory over time (`memory-<run>.svg`) and its timeline
    /// (`timeline-<run>.svg`), from the runtime's event log.
    #[arg(long, value_name = "DIR")]
    pub(crate) plot: Option<PathBuf>,
    /// Write each run's timeline as a Chrome-trace JSON that Perfetto's UI opens: a track per
    /// stream, device bytes, object lifetimes and dependencies (from the runtime's event log;
    /// with several runs, FILE gets each run's label before its extension).
    #[arg(long, value_name = "FILE")]
    pub(crate) timeline: Option<PathBuf>,
    /// Print each run's memory report after the table: DRGPUM's object-level inefficiency
    /// patterns with their distances in queue steps and bytes, and the two highest memory
    /// peaks with the objects live at each (from the runtime's event log).
    #[arg(long)]
    pub(crate) report: bool,
    /// Write the generated workload to FILE and exit.
    #[arg(long, value_name = "FILE", conflicts_with = "workload")]
    pub(crate) emit_workload: Option<PathBuf>,
    /// With --emit-workload: write node data as .npy files beside it instead of seeds.
    #[arg(long, requires = "emit_workload")]
    pub(crate) emit_npy: bool,
    /// Write the results (`DIR/<id>.npy`) and traces (`DIR/traces.json`) of the first run.
    #[arg(long, value_name = "DIR")]
    pub(crate) dump_results: Option<PathBuf>,
    /// Run the sweep as a campaign: its points handed out to MPI ranks (`mpirun -n K
    /// memhc-synth ...` in a build with `--features mpi`; one process otherwise), each
    /// completed point recorded in DIR so that a rerun resumes (see docs/distributed.md).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["emit_workload", "dump_results"])]
    pub(crate) journal: Option<PathBuf>,
    /// With --journal (or under mpirun): seconds a rank waits for another before taking it as
    /// lost.
    #[arg(long, default_value_t = 120.0, value_name = "SECONDS")]
    pub(crate) timeout: f64,
}
