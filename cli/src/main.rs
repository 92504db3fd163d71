//! `memhc`: correlation functions from a `memhc-corr/1` file. `memhc gen PRESET -o FILE`
//! writes a preset workload, `memhc plan FILE` prints the planner's report, `memhc run FILE`
//! plans, runs on the runtime and writes the correlators; `memhc campaign MANIFEST` runs many
//! configurations and time sources over MPI ranks (`mpirun -n K memhc campaign ...`, in a
//! build with `--features mpi`), restartable. Bad input: one line on stderr, exit code 2.
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

mod backend;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use memhc_core::{Config, Mode};
use memhc_corr::{Order, OutputForm, PlanOptions};
use memhc_corr_gen::file::{FileOptions, to_file};
use memhc_corr_gen::physics::TimePair;
use memhc_corr_gen::presets::{Preset, correlator_matrix};
use memhc_select::{BackendChoice, names, parse_bytes};
use memhc_trace::{Observe, Written};

/// With the `mimalloc` feature (the default), mimalloc is the process's allocator; without it,
/// the system's.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Correlation functions on memhc: generate a workload, plan it, run it.
#[derive(Debug, Parser)]
#[command(name = "memhc", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write a preset workload (a1_rhopi, f0d2, f0d4: the MemHC paper's Table 4).
    Gen {
        /// The preset.
        preset: String,
        /// N: each of a node's 16 spin components is N x N (default: the paper's).
        #[arg(long)]
        tensor_size: Option<usize>,
        /// Base seed of the node data.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Time sources, comma separated: the preset's time pairs (source 0, sinks t) are
        /// repeated at each source s as (s, s + t). Default: the preset's, source 0 only.
        #[arg(long, value_delimiter = ',')]
        sources: Vec<u32>,
        /// Where to write the file.
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Print the planner's report: contractions before and after sharing, flops, peak bytes.
    Plan {
        /// The correlator file.
        file: PathBuf,
        #[command(flatten)]
        planning: Planning,
    },
    /// Plan, run on the runtime, and write the correlators.
    Run {
        /// The correlator file.
        file: PathBuf,
        #[command(flatten)]
        planning: Planning,
        /// Eviction policies, comma separated, or `all`.
        #[arg(long, default_value = "lru")]
        policy: String,
        /// Modes, comma separated (naive, reorg, reorg-sync, optimal), or `all`.
        #[arg(long, default_value = "optimal")]
        mode: String,
        /// Streams.
        #[arg(long, default_value_t = 4)]
        streams: usize,
        /// Device budget in bytes: digits, then K, M, G or T (powers of 1024) with an optional
        /// B or iB (512M, 8GiB); default: the plan's peak (no eviction).
        #[arg(long, value_parser = parse_bytes)]
        budget: Option<u64>,
        /// Backend: host (the CPU reference device), cuda or rocm (with the build features of
        /// the same names).
        #[arg(long, default_value = "host")]
        backend: String,
        /// Where node data and results live on the host: `pageable` (vectors; on a GPU every
        /// copy is staged through page-locked buffers) or `pinned` (the backend's page-locked
        /// memory: node data loaded straight into it and uploaded in one DMA, the runtime's
        /// direct data path). Not with --mode unified.
        #[arg(long, default_value = "pageable")]
        host_memory: String,
        /// Prefetch: `off`, or a lookahead window in object uses (a contraction is three) for
        /// copies issued ahead of their use on a copy stream, with asynchronous write-back. On
        /// a GPU, with `--host-memory pinned`, the fast data path. Not with --mode unified.
        #[arg(long, default_value = "off")]
        prefetch: String,
        /// Run every policy and mode this many times and report the median wall time (the
        /// first run of a process also pays its page faults and pools' warm-up); the counts are
        /// the same in every run.
        #[arg(long, default_value_t = 1)]
        runs: usize,
        /// Write the correlators of the first run (.json, .csv, or .h5 with the `hdf5` feature).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Check every correlator against the independent dense reference (1e-12 relative).
        #[arg(long)]
        verify: bool,
        /// Write one JSON record per policy and mode (plan report and statistics, and the
        /// batched BLAS calls issued, `gemm_calls`).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write each run's timeline as a Chrome-trace JSON that Perfetto's UI opens (with
        /// several policies or modes, FILE gets `-<policy>-<mode>` before its extension).
        #[arg(long, value_name = "FILE")]
        timeline: Option<PathBuf>,
        /// Print each run's memory report (DRGPUM's patterns, the top two memory peaks) after
        /// its line of the table.
        #[arg(long)]
        report: bool,
    },
    /// Run a campaign: every configuration of a manifest (docs/campaign-format.md), in units
    /// of (configuration x block of time sources) handed out to MPI ranks (`mpirun -n K memhc
    /// campaign ...` in a build with `--features mpi`; one process otherwise), each completed
    /// unit recorded so that a rerun resumes; one output for all.
    Campaign {
        /// The campaign manifest (memhc-campaign/1).
        manifest: PathBuf,
        /// The output: .json (memhc-campaign-values/1) or .csv.
        #[arg(short, long)]
        out: PathBuf,
        /// The journal of completed units (default: the output's path + `.journal`).
        #[arg(long)]
        journal: Option<PathBuf>,
        /// Backend of every rank: host, cuda or rocm (GPU: the node-local rank's device).
        #[arg(long, default_value = "host")]
        backend: String,
        /// Seconds a rank waits for another before taking it as lost.
        #[arg(long, default_value_t = 120.0)]
        timeout: f64,
        /// Write a JSON summary (ranks, units, seconds per rank).
        #[arg(long)]
        summary: Option<PathBuf>,
        /// No line per unit done.
        #[arg(long)]
        quiet: bool,
    },
}

#[derive(Debug, clap::Args)]
struct Planning {
    /// Compute every loop on its own (no shared partial products).
    #[arg(long)]
    no_sharing: bool,
    /// Run the work in the file's order instead of the planner's.
    #[arg(long)]
    file_order: bool,
    /// Contractions per vector.
    #[arg(long, default_value_t = 16)]
    vector_size: usize,
}

impl Planning {
    fn options(&self) -> Result<PlanOptions, String> {
        if self.vector_size == 0 {
            return Err("--vector-size 0: a vector holds at least one contraction".into());
        }
        Ok(PlanOptions {
            sharing: !self.no_sharing,
            order: if self.file_order {
                Order::File
            } else {
                Order::Planned
            },
            vector_size: self.vector_size,
        })
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        // --help and --version print in full; an error is one line (found by the argument
        // fuzzer: clap's own errors were several lines, with a usage block).
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
            eprintln!("memhc: {} (see --help)", line.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    if let Command::Campaign {
        manifest,
        out,
        journal,
        backend,
        timeout,
        summary,
        quiet,
    } = cli.command
    {
        let runner = match backend::campaign_runner(&backend) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("memhc: {e}");
                return ExitCode::from(2);
            }
        };
        if !(timeout.is_finite() && timeout > 0.0) {
            eprintln!("memhc: --timeout {timeout}: must be a positive number of seconds");
            return ExitCode::from(2);
        }
        let options = memhc_campaign::corr::CampaignOptions {
            manifest,
            out,
            journal,
            timeout: Duration::from_secs_f64(timeout),
            summary,
            progress: !quiet,
        };
        return ExitCode::from(memhc_campaign::corr::command::main(
            "memhc", runner, &options,
        ));
    }
    match execute(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memhc: {}", e.lines().next().unwrap_or(""));
            ExitCode::from(2)
        }
    }
}

fn execute(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Gen {
            preset,
            tensor_size,
            seed,
            sources,
            out,
        } => {
            let p: Preset = preset.parse().map_err(|e| format!("{e}"))?;
            let n = tensor_size.unwrap_or(p.paper().tensor_size);
            if n == 0 {
                return Err("--tensor-size must be at least 1".into());
            }
            let g = if sources.is_empty() {
                p.generate()
            } else {
                correlator_matrix(&p.basis(), &at_sources(&p.times(), &sources)?)
            };
            let keys = BTreeMap::from([("channel".to_owned(), p.name().to_owned())]);
            let file = to_file(
                &g,
                &FileOptions {
                    tensor_size: n,
                    seed,
                    keys,
                },
            );
            memhc_corr::save(&file, &out).map_err(|e| e.to_string())?;
            println!(
                "{}: {} nodes, {} graphs, {} correlators, {} contractions without sharing, N = {n} -> {}",
                p,
                g.nodes.len(),
                g.graphs.len(),
                g.correlators.len(),
                g.contractions(),
                out.display()
            );
            Ok(())
        }
        Command::Plan { file, planning } => {
            // A plan makes no values: a file too large for this host is still planned.
            let checked = memhc_corr::io::load_for_planning(&file).map_err(|e| e.to_string())?;
            let plan =
                memhc_corr::plan(&checked, &planning.options()?).map_err(|e| e.to_string())?;
            println!(
                "{}",
                serde_json::to_string_pretty(&plan.report).map_err(|e| e.to_string())?
            );
            Ok(())
        }
        Command::Run {
            file,
            planning,
            policy,
            mode,
            streams,
            budget,
            backend,
            host_memory,
            prefetch,
            runs,
            out,
            verify,
            json,
            timeline,
            report,
        } => {
            if streams == 0 || streams > hadron::admission::MAX_STREAMS {
                return Err(format!(
                    "--streams {streams}: from 1 to {} streams",
                    hadron::admission::MAX_STREAMS
                ));
            }
            let backend = backend::choose(&backend)?;
            // Checked before anything runs: a bad --out must not cost a run.
            let out = out.map(|p| out_form(&p).map(|_| p)).transpose()?;
            let policies = names::policies(&policy).map_err(|e| format!("--policy: {e}"))?;
            let modes = names::modes(&mode).map_err(|e| format!("--mode: {e}"))?;
            let host_memory =
                names::host_memory(&host_memory).map_err(|e| format!("--host-memory: {e}"))?;
            let pinned = host_memory.is_pinned();
            if runs == 0 {
                return Err("--runs 0: at least one run".into());
            }
            let prefetch = match names::prefetches(&prefetch)
                .map_err(|e| format!("--prefetch: {e}"))?
                .as_slice()
            {
                [one] => *one,
                _ => return Err("--prefetch: one setting (off or a window)".into()),
            };
            if prefetch.is_some() && modes.contains(&Mode::Unified) {
                return Err("--prefetch does not apply to --mode unified (managed memory)".into());
            }
            if pinned && modes.contains(&Mode::Unified) {
                return Err(
                    "--host-memory pinned does not apply to --mode unified (managed \
                            memory is read in place)"
                        .into(),
                );
            }
            let observe = Observe {
                timeline,
                report,
                plot: None,
                several: policies.len() * modes.len() > 1,
            };
            let checked = memhc_corr::load(&file).map_err(|e| e.to_string())?;
            let plan =
                memhc_corr::plan(&checked, &planning.options()?).map_err(|e| e.to_string())?;
            let report = &plan.report;
            let budget = budget.unwrap_or(report.peak_bytes.max(1));
            // Admitted before anything is made or printed: the largest step must fit the
            // budget, the host must hold the values (and the host backend's device memory).
            let host_device = backend == BackendChoice::Host;
            memhc_corr::admit_run(&plan, budget, host_device).map_err(|e| e.to_string())?;
            let reference = if verify {
                Some(memhc_corr::reference::correlators(&checked).map_err(|e| e.to_string())?)
            } else {
                None
            };
            let mut records = Vec::new();
            let mut first = true;
            // A failing run leaves no output file behind.
            let mut written = Written::default();
            println!(
                "{:<8} {:<10} {:>9} {:>9} {:>12} {:>12} {:>8} {:>8} {:>10} {:>10}",
                "policy",
                "mode",
                "load_s",
                "wall_s",
                "h2d_bytes",
                "d2h_bytes",
                "hits",
                "misses",
                "evictions",
                "gemm_calls"
            );
            for &m in &modes {
                for &p in &policies {
                    let mut config = Config::for_mode(m);
                    config.policy = p;
                    config.streams = streams.max(1);
                    config.budget = Some(budget as usize);
                    config.events = observe.events();
                    if pinned {
                        config = config.with_direct_host(true);
                    }
                    config = config.with_prefetch(prefetch);
                    let bar = ProgressBar::new(plan.stages.len() as u64);
                    bar.set_style(
                        ProgressStyle::with_template("{bar:40} {pos}/{len} stages {elapsed}")
                            .unwrap_or_else(|_| ProgressStyle::default_bar()),
                    );
                    let (ran, times) = backend::run_times(
                        backend,
                        budget as usize,
                        &config,
                        pinned,
                        &plan,
                        runs,
                        &mut |pr| bar.set_position(pr.done as u64),
                    )?;
                    let backend::Ran {
                        values,
                        stats,
                        log,
                        model,
                        ..
                    } = ran;
                    let wall = backend::Times::median(&times.wall_s);
                    let load = backend::Times::median(&times.load_s);
                    bar.finish_and_clear();
                    println!(
                        "{:<8} {:<10} {:>9.3} {:>9.3} {:>12} {:>12} {:>8} {:>8} {:>10} {:>10}",
                        p.name(),
                        m.name(),
                        load,
                        wall,
                        stats.h2d_bytes,
                        stats.d2h_bytes,
                        stats.hits,
                        stats.misses,
                        stats.evictions,
                        stats.gemm_calls
                    );
                    if let Some((log, spans)) = &log {
                        let label = format!("{}-{}", p.name(), m.name());
                        let title = format!("{}/{}", p.name(), m.name());
                        let (text, files) = observe
                            .emit(&label, &title, log, spans, &mut written)
                            .map_err(|e| e.to_string())?;
                        if let Some(text) = text {
                            println!("\n{text}");
                        }
                        for f in files {
                            eprintln!("memhc: wrote {}", f.display());
                        }
                    }
                    if let Some(r) = &reference {
                        let err = values.max_relative_error(r);
                        if err > 1e-12 {
                            return Err(format!(
                                "verify: {} {}: the correlators differ from the dense reference by {err:e} relative (more than 1e-12)",
                                p.name(),
                                m.name()
                            ));
                        }
                    }
                    if first {
                        if let Some(path) = &out {
                            written.file(path);
                            values.write(path).map_err(|e| e.to_string())?;
                        }
                        first = false;
                    }
                    // `gemm_calls` at the top too: the batched BLAS calls the run issued, what
                    // issue 30 (one GEMM per meson contraction) is judged by.
                    let mut record = serde_json::json!({
                        "policy": p.name(), "mode": m.name(), "budget": budget, "wall_s": wall,
                        "host_memory": host_memory.name(), "prefetch": prefetch,
                        "runs": runs, "wall_s_runs": times.wall_s,
                        "load_s": load, "load_s_runs": times.load_s,
                        "gemm_calls": stats.gemm_calls, "plan": report, "stats": stats,
                    });
                    // On the model, as memhc-synth's records: the queue's modelled makespan (the
                    // model is deterministic: every run's is the first's).
                    if let (Some((makespan, floor)), Some(r)) = (model, record.as_object_mut()) {
                        r.insert("model_makespan_s".into(), makespan.into());
                        r.insert("model_floor_s".into(), floor.into());
                    }
                    records.push(record);
                }
            }
            if verify {
                println!("verified against the dense reference: every value within 1e-12 relative");
            }
            if let Some(path) = json {
                let text = serde_json::to_string_pretty(&records).map_err(|e| e.to_string())?;
                written.file(&path);
                std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            written.keep();
            Ok(())
        }
        Command::Campaign { .. } => Err("internal: campaign is run by main".into()),
    }
}

/// The preset's time pairs (all at source 0) repeated at each source: `(s, s + sink)`.
fn at_sources(times: &[TimePair], sources: &[u32]) -> Result<Vec<TimePair>, String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for &s in sources {
        if !seen.insert(s) {
            return Err(format!("--sources: {s} is listed twice"));
        }
        for t in times {
            let sink = s
                .checked_add(t.sink.saturating_sub(t.source))
                .ok_or_else(|| format!("--sources: {s} is too large"))?;
            out.push(TimePair { source: s, sink });
        }
    }
    Ok(out)
}

/// The forms `--out` writes.
/// The form `--out PATH` asks for, by its extension; an error for one this build cannot write.
fn out_form(path: &std::path::Path) -> Result<OutputForm, String> {
    OutputForm::of(path).map_err(|e| match e {
        memhc_corr::CorrError::Unavailable(m) => format!(
            "--out {m}; rebuild with `cargo build --release -p memhc-cli --features hdf5` \
             (needs libhdf5-dev)"
        ),
        other => format!("--out {other}"),
    })
}
