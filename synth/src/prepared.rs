//! One point of a run (`memhc-synth` without a subcommand), ready to run: its workload,
//! analysis, peak without eviction and budget, admitted against the host memory it needs; and
//! the median of repeated runs of it.

use indicatif::ProgressBar;
use memhc_core::{Alloc, Mode, PolicyKind};

use crate::device::{BackendChoice, run_on};
use crate::error::{Error, Result};
use crate::generate::SynthParams;
use crate::host_memory::{admit, host_needs};
use crate::order::Order;
use crate::record::Record;
use crate::run::{Outcome, RunSpec, Traced, largest_working_set, peak_without_eviction};
use crate::workload::{Analysis, Workload};

/// One point of a run, ready to run: its workload, analysis, peak and budget.
pub(crate) struct Prepared {
    params: SynthParams,
    pub(crate) oversub: Option<f64>,
    from_file: bool,
    pub(crate) workload: Workload,
    pub(crate) analysis: Analysis,
    pub(crate) peak: usize,
    pub(crate) budget: usize,
}

/// Where a point comes from and how it will run, for [`Prepared::new`].
pub(crate) struct PointSetup {
    /// `--budget`, if given.
    pub budget: Option<u64>,
    /// Whether the workload came from a file.
    pub from_file: bool,
    /// The backend the runs go to.
    pub backend: BackendChoice,
    /// Whether results are verified.
    pub verify: bool,
    /// The host memory available, when known.
    pub host_memory: Option<u64>,
    /// Whether a run uses an arena (`--alloc arena`): the host backend then takes its whole
    /// budget of host memory at once, not only what the queue holds.
    pub arena: bool,
    /// Whether the runs take the direct data path (`--host-memory pinned`): the pinned pool's
    /// spare chunk then counts against the host memory.
    pub pinned: bool,
}

impl Prepared {
    /// Analyses the workload, admits it against the host memory a run needs, finds its peak
    /// without eviction (a dry run), derives the budget (`--budget` bytes if given, else
    /// `peak / (1 + oversub)`), and admits the run again with the host backend's device memory.
    /// A budget that cannot hold one contraction, and a workload that puts nothing on the
    /// device, are refused here, before anything runs.
    pub(crate) fn new(
        params: SynthParams,
        oversub: Option<f64>,
        workload: Workload,
        setup: &PointSetup,
    ) -> Result<Self> {
        let analysis = workload.analyse()?;
        let admit_run = |device: usize| {
            let mut needs = host_needs(&workload, &analysis, device, setup.verify);
            if setup.arena && setup.backend == BackendChoice::Host {
                // One allocation of the whole budget, however little the queue holds.
                needs.device = device as u64;
            }
            if setup.pinned {
                needs =
                    needs.with_pinned_pool(memhc_core::config::DEFAULT_PINNED_CHUNK_BYTES as u64);
            }
            admit("the run", needs.total(), &needs.detail(), setup.host_memory)
        };
        // The dry run below touches less than the run without its device memory.
        admit_run(0)?;
        let peak = peak_without_eviction(&workload, &analysis)?;
        if peak == 0 {
            return Err(Error::Usage(
                "the workload puts nothing on the device (no contractions, no traces): \
                 nothing to run"
                    .into(),
            ));
        }
        let budget = match (setup.budget, oversub) {
            (Some(b), _) => usize::try_from(b).unwrap_or(usize::MAX),
            (None, o) => ((peak as f64) / (1.0 + o.unwrap_or(0.0))).floor() as usize,
        };
        let needed = largest_working_set(&workload, &analysis);
        if budget < needed {
            return Err(Error::Usage(format!(
                "a device budget of {budget} bytes cannot hold one contraction, which needs {needed} bytes"
            )));
        }
        if setup.backend == BackendChoice::Host {
            admit_run(budget)?;
        }
        Ok(Prepared {
            params,
            oversub,
            from_file: setup.from_file,
            workload,
            analysis,
            peak,
            budget,
        })
    }

    pub(crate) fn spec(
        &self,
        policy: PolicyKind,
        mode: Mode,
        streams: usize,
        verify: bool,
    ) -> RunSpec {
        RunSpec {
            verify,
            ..RunSpec::new(policy, mode, self.budget, streams)
        }
    }

    /// The record of one run of this point.
    pub(crate) fn record(
        &self,
        backend: &str,
        spec: &RunSpec,
        miss_lower_bound: Option<u64>,
        o: &Outcome,
        runs: &Runs,
    ) -> Record {
        let s = &o.stats;
        let generated = !self.from_file;
        let p = &self.params;
        let modelled = crate::device::last_model_report();
        Record {
            policy: spec.policy.to_string(),
            mode: spec.mode.to_string(),
            alloc: Alloc::of(&spec.config()).to_string(),
            reuse_tolerance_percent: spec.reuse_tolerance_percent,
            prefetch: spec.prefetch,
            // The queue's; a caller that issued in another order says so.
            order: Order::Queue.to_string(),
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
            prefetches: s.prefetches,
            prefetch_hits: s.prefetch_hits,
            prefetch_wasted: s.prefetch_wasted,
            prefetch_bytes: s.prefetch_bytes,
            async_writebacks: s.async_writebacks,
            pinned: spec.pinned,
            early_read_backs: s.early_read_backs,
            copy_hidden_share: o.copy_hidden_share,
            h2d_bytes: s.h2d_bytes,
            d2h_bytes: s.d2h_bytes,
            peak_device_bytes: s.peak_device_bytes,
            flops: s.flops,
            gemm_calls: s.gemm_calls,
            gflops: o.gflops(),
            wall_s: o.wall_s,
            wall_s_runs: runs.wall_s.clone(),
            cpu_s: o.cpu_s,
            cpu_s_runs: runs.cpu_s.clone(),
            device_compute_s: o.device_compute_s,
            miss_lower_bound,
            verified: spec.verify.then_some(o.max_rel_error.is_some()),
            max_rel_error: o.max_rel_error,
            model_makespan_s: modelled.map(|(m, _)| m.makespan_s),
            model_setup_s: modelled.map(|(_, setup)| setup),
            model_floor_s: modelled.map(|(m, _)| m.floor_s),
        }
    }
}

/// The times of every run of one configuration, in the order they ran.
#[derive(Debug, Default)]
pub(crate) struct Runs {
    /// Wall time of each run, seconds.
    pub(crate) wall_s: Vec<f64>,
    /// Process CPU time of each run, seconds (empty where the platform cannot say).
    pub(crate) cpu_s: Vec<f64>,
}

/// Runs `spec` on point `p` `runs` times (the counts are the same every time), recording the
/// event log if `events`, and keeps the first run (its outcome, log and timeline) with the
/// times (wall, CPU, device compute) of the run of median wall time, and every run's times.
pub(crate) fn median_run(
    backend: BackendChoice,
    p: &Prepared,
    spec: &RunSpec,
    order: Order,
    runs: usize,
    events: bool,
    bar: &ProgressBar,
) -> Result<(Traced, Runs)> {
    // Each run's times: wall, process CPU and device compute, taken together from one run.
    let mut times = Vec::with_capacity(runs);
    let mut first: Option<Traced> = None;
    for _ in 0..runs {
        let done = bar.position();
        let traced = run_on(
            backend,
            &p.workload,
            &p.analysis,
            spec,
            order,
            events,
            &mut |v| bar.set_position(done + v as u64),
        )?;
        let o = &traced.outcome;
        times.push((o.wall_s, o.cpu_s, o.device_compute_s));
        first.get_or_insert(traced);
    }
    let mut first = first.ok_or_else(|| Error::Usage("--runs must be at least 1".into()))?;
    let every = Runs {
        wall_s: times.iter().map(|t| t.0).collect(),
        cpu_s: times.iter().filter_map(|t| t.1).collect(),
    };
    times.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (wall_s, cpu_s, device_compute_s) = times[times.len() / 2];
    first.outcome.wall_s = wall_s;
    first.outcome.cpu_s = cpu_s;
    first.outcome.device_compute_s = device_compute_s;
    Ok((first, every))
}
