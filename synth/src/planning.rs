//! `memhc-synth plan`: exact memory planning without data. It takes a run's workload and
//! configuration options and prints, from dry runs of the real runtime on the null backend
//! ([`plan`](mod@crate::plan)), each mode's peak without eviction and least budget without
//! eviction, each policy's least budget that runs, and for the budget given the statistics a
//! run will make; plus the host memory a run needs. A table on stdout, or JSON (`--json`).

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::args::{ConfigArgs, WorkloadArgs, check_generated, host_memory};
use crate::error::{Error, Result, human_bytes};
use crate::file;
use crate::generate::generate;
use crate::host_memory::{HostNeeds, admit, dry_run_needs, host_needs};
use crate::order::Order;
use crate::plan::{MemoryPlan, PlanSpec, Prediction, plan};
use crate::report::{render, to_stdout};
use crate::run::peak_without_eviction;
use crate::workload::Workload;

/// The options of `memhc-synth plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    workload: WorkloadArgs,
    #[command(flatten)]
    config: ConfigArgs,
    /// Print the plan as JSON on stdout instead of the table; with FILE, write it there and
    /// print the table.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    json: Option<PathBuf>,
}

/// Where the workload came from, for the output.
#[derive(Debug, Serialize)]
#[serde(tag = "source", rename_all = "lowercase")]
enum Source {
    Generated {
        tensor_size: usize,
        vector_size: usize,
        vectors: usize,
        repeat: f64,
        dist: String,
        seed: u64,
    },
    File {
        path: PathBuf,
    },
}

/// The host memory a real run at the plan's budget needs.
#[derive(Debug, Serialize)]
struct HostMemory {
    /// On the host backend (its device memory is host memory).
    host_backend: HostNeeds,
    /// On the host backend with `--verify`.
    host_backend_verify: HostNeeds,
    /// On a GPU backend.
    gpu_backend: HostNeeds,
    /// What the machine has available, when known.
    available: Option<u64>,
}

/// Everything `plan` prints.
#[derive(Debug, Serialize)]
struct Output {
    workload: Source,
    nodes: usize,
    contractions: usize,
    contraction_flops: u64,
    oversub: Option<f64>,
    #[serde(flatten)]
    plan: MemoryPlan,
    host_memory: HostMemory,
}

/// Refuses the run options `plan` cannot predict yet, instead of ignoring them: its dry runs
/// use each mode's own allocation, no prefetch, exact reuse and the queue's order, so
/// `--alloc`, `--prefetch` (other than `off`), `--reuse-tolerance` (other than 0) and `--order`
/// (other than `queue`) would make a prediction of a run that is not the one asked for. Values that do not parse are refused as in a run.
fn refuse_unpredicted(config: &ConfigArgs, modes: &[memhc_core::Mode]) -> Result<()> {
    let allocs = config.allocs(modes)?;
    let prefetches = config.prefetches(modes)?;
    let cannot = |flag: String| -> Result<()> {
        Err(Error::Usage(format!(
            "{flag}: plan cannot predict it yet (its dry runs use each mode's own allocation, \
             no prefetch, exact reuse and the queue's order); run without it, or run the workload to measure"
        )))
    };
    if let Some(list) = config
        .alloc
        .as_deref()
        .filter(|_| allocs.iter().any(Option::is_some))
    {
        return cannot(format!("--alloc {list}"));
    }
    if let Some(list) = config
        .prefetch
        .as_deref()
        .filter(|_| prefetches.iter().any(Option::is_some))
    {
        return cannot(format!("--prefetch {list}"));
    }
    if config.reuse_tolerance != 0 {
        return cannot(format!("--reuse-tolerance {}", config.reuse_tolerance));
    }
    if config.order()? != Order::Queue {
        return cannot(format!("--order {}", config.order));
    }
    Ok(())
}

/// Runs `memhc-synth plan`.
pub fn plan_command(args: &PlanArgs) -> Result<()> {
    let (policies, modes) = args.config.parse()?;
    refuse_unpredicted(&args.config, &modes)?;
    let available = host_memory()?;
    let (source, w) = match &args.workload.workload {
        Some(path) => (Source::File { path: path.clone() }, file::load(path)?),
        None => {
            let p = args.workload.params()?;
            check_generated("the plan", &p, false, available)?;
            let w = generate(&p)?;
            let source = Source::Generated {
                tensor_size: p.tensor_size,
                vector_size: p.vector_size,
                vectors: p.vectors,
                repeat: p.repeat,
                dist: p.dist.to_string(),
                seed: p.seed,
            };
            (source, w)
        }
    };
    let a = w.analyse()?;
    // Dry runs make no node values, but they do keep host copies of what they sync.
    let needed = dry_run_needs(&w, &a);
    admit(
        "the plan",
        needed,
        &format!(
            "host copies its dry runs make of produced nodes {}",
            human_bytes(needed)
        ),
        available,
    )?;
    let peak = peak_without_eviction(&w, &a)?;
    let oversub = match args.config.budget {
        Some(_) => None,
        None => Some(args.config.oversub.unwrap_or(0.0)),
    };
    let budget = match args.config.budget {
        Some(b) => usize::try_from(b).unwrap_or(usize::MAX),
        None => ((peak as f64) / (1.0 + oversub.unwrap_or(0.0))).floor() as usize,
    }
    .max(1);
    let spec = PlanSpec {
        policies,
        modes,
        budget,
        streams: args.config.streams,
    };
    let planned = plan(&w, &a, &spec)?;
    let output = Output {
        workload: source,
        nodes: w.nodes.len(),
        contractions: w.vectors.iter().map(Vec::len).sum(),
        contraction_flops: a.contraction_flops,
        oversub,
        host_memory: HostMemory {
            host_backend: host_needs(&w, &a, budget, false),
            host_backend_verify: host_needs(&w, &a, budget, true),
            gpu_backend: host_needs(&w, &a, 0, false),
            available,
        },
        plan: planned,
    };
    let json = || {
        serde_json::to_string_pretty(&output)
            .map_err(|e| Error::Usage(format!("cannot encode the plan as JSON: {e}")))
    };
    match &args.json {
        Some(path) if path.as_os_str() == "-" => to_stdout(&(json()? + "\n")),
        Some(path) => {
            std::fs::write(path, json()? + "\n").map_err(|e| Error::io(path, e))?;
            to_stdout(&table(&output, &w))
        }
        None => to_stdout(&table(&output, &w)),
    }
}

/// Bytes exactly, and in words: `665420800 bytes (634.6 MiB)`.
fn bytes(b: usize) -> String {
    format!("{b} bytes ({})", human_bytes(b as u64))
}

/// The plan as text: what the workload is, its budgets, then one line per mode and policy.
fn table(o: &Output, w: &Workload) -> String {
    let p = &o.plan;
    let mut out = String::new();
    let what = match &o.workload {
        Source::Generated {
            tensor_size,
            vector_size,
            vectors,
            repeat,
            dist,
            seed,
        } => format!(
            "{vectors} vectors of {vector_size} contractions at N = {tensor_size}, repeat \
             {repeat} ({dist}), seed {seed}"
        ),
        Source::File { path } => format!("{} ({} vectors)", path.display(), w.vectors.len()),
    };
    out += &format!(
        "workload: {what}: {} initial nodes, {} contractions\n",
        o.nodes, o.contractions
    );
    out += &format!(
        "peak without eviction: {} (optimal mode, released buffers freed at once; the \
         basis of --oversub)\n",
        bytes(p.peak_without_eviction)
    );
    out += &format!(
        "largest contraction: {} of inputs and output resident at once\n",
        bytes(p.largest_working_set)
    );
    let basis = match o.oversub {
        Some(r) => format!("--oversub {r}"),
        None => "--budget".into(),
    };
    out += &format!(
        "budget: {} ({basis}), {} streams\n",
        bytes(p.budget),
        p.streams
    );
    let hm = &o.host_memory;
    out += &format!(
        "host memory of a run at this budget: {} on the host backend ({} with --verify), {} on \
         a GPU backend{}\n\n",
        human_bytes(hm.host_backend.total()),
        human_bytes(hm.host_backend_verify.total()),
        human_bytes(hm.gpu_backend.total()),
        hm.available
            .map_or(String::new(), |b| format!("; {} available", human_bytes(b)))
    );
    let header = [
        "mode",
        "policy",
        "peak_B",
        "no_evict_B",
        "least_B",
        "allocs",
        "reuses",
        "hits",
        "misses",
        "hit_rate",
        "evict",
        "wback",
        "h2d_MiB",
        "d2h_MiB",
        "peak_MiB",
    ];
    let mib = |b: u64| format!("{:.1}", b as f64 / (1 << 20) as f64);
    let mut rows = Vec::new();
    for m in &p.modes {
        for pp in &m.policies {
            let mut row = vec![
                m.mode.to_string(),
                pp.policy.to_string(),
                m.peak_bytes.to_string(),
                m.least_budget_without_eviction.to_string(),
                pp.least_budget.to_string(),
            ];
            match &pp.prediction {
                Prediction::Runs(s) => row.extend([
                    s.allocations.to_string(),
                    s.pool_reuses.to_string(),
                    s.hits.to_string(),
                    s.misses.to_string(),
                    format!("{:.1}%", 100.0 * s.hit_rate),
                    s.evictions.to_string(),
                    s.writebacks.to_string(),
                    mib(s.h2d_bytes),
                    mib(s.d2h_bytes),
                    mib(s.peak_device_bytes),
                ]),
                Prediction::DoesNotFit { .. } => {
                    row.push("does-not-fit".into());
                    row.extend(std::iter::repeat_n("-".to_owned(), header.len() - 6));
                }
            }
            rows.push(row);
        }
    }
    out += &render(&header, &rows);
    out += "\n\
        peak_B      the most device bytes the mode holds when the budget never binds\n\
        no_evict_B  the least budget at which the mode evicts nothing (any policy)\n\
        least_B     the least budget at which the policy runs at all (below: does not fit)\n\
        the rest    what a run at the budget above counts, exactly (dry runs of the runtime)\n";
    out
}
