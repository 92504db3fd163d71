//! The device a correlator run goes to: `--backend host|cuda|rocm|model` (`model`: the modelled
//! H100 of `memhc_gpu::model`, no data, modelled time, reported on stderr; the environment
//! variable `MEMHC_MODEL` changes its parameters, e.g. `MEMHC_MODEL=h2d_bandwidth=25e9`). The
//! name is read and the backend opened by `memhc-select`; the GPU backends are compiled in by
//! this crate's features of the same names (they build without CUDA or ROCm and load their
//! libraries at run time); asking for one this build lacks, or one that cannot open here, is
//! a one-line error.

use std::time::Instant;

use hadron::Engine;
use memhc_campaign::corr::BackendRunner;
use memhc_core::backend::timeline::WorkSpan;
use memhc_core::{Backend, Config, EventLog, Runtime, Stats};
use memhc_corr::{Correlators, Plan, Progress};
use memhc_select::{BackendChoice, Build, Open, SelectError, WithBackend, dispatch};

/// The GPU backends this build of `memhc` has.
const BUILD: Build = Build {
    package: "memhc-cli",
    cuda: cfg!(feature = "cuda"),
    rocm: cfg!(feature = "rocm"),
};

/// A `memhc-select` error as one line naming `--backend`.
fn message(e: SelectError) -> String {
    match e {
        SelectError::UnknownBackend(_) => format!("--backend: {e}"),
        SelectError::NotBuilt { backend, .. } | SelectError::NoData(backend) => {
            format!("--backend {backend}: {e}")
        }
        other => other.to_string(),
    }
}

/// Parses `--backend`, refusing a GPU backend this build lacks with the command that builds
/// it, and checks that it can open here.
pub fn choose(name: &str) -> Result<BackendChoice, String> {
    let choice = BUILD.choose(name).map_err(message)?;
    memhc_select::check(choice).map_err(message)?;
    Ok(choice)
}

/// What one run gives.
pub struct Ran {
    /// The correlators.
    pub values: Correlators,
    /// The runtime's statistics.
    pub stats: Stats,
    /// With [`Config::events`]: the event log and the backend's timeline of its work.
    pub log: Option<(EventLog, Vec<WorkSpan>)>,
    /// Seconds of the queue: from its first stage to the end of the device's work
    /// ([`memhc_corr::Loaded::run`] and the final synchronisation), as memhc-synth's `wall_s`.
    pub wall_s: f64,
    /// Seconds from the runtime's creation on the opened backend to the queue's start
    /// ([`memhc_corr::load_onto`]: the nodes' values read or generated and registered, the
    /// products created, the future announced), without opening the backend (on a GPU,
    /// creating the context and the BLAS handle takes a large share of a small run).
    pub load_s: f64,
    /// On `--backend model`: the modelled makespan of the queue (from its start, as
    /// [`Ran::wall_s`]; the modelled set-up before it left out) and the modelled floor, seconds.
    pub model: Option<(f64, f64)>,
    /// The backend's timing clock when the queue started (on the model: the modelled set-up).
    queue_start_ns: Option<u64>,
}

/// One run of a plan, on whichever backend.
struct PlanRun<'a> {
    config: Config,
    pinned: bool,
    plan: &'a Plan,
    progress: &'a mut dyn FnMut(Progress),
}

impl WithBackend for PlanRun<'_> {
    type Output = Result<Ran, String>;

    fn run<B: Backend>(self, backend: B) -> Result<Ran, String> {
        let timed = self.config.events && backend.set_timing(true);
        let start = Instant::now();
        let rt = Runtime::new(backend, self.config).map_err(|e| e.to_string())?;
        let mut engine = Engine::new(rt);
        let loaded = memhc_corr::load_onto(self.plan, &mut engine, self.pinned)
            .map_err(|e| e.to_string())?;
        let load_s = start.elapsed().as_secs_f64();
        let queue_start_ns = engine.runtime().backend().timing_clock_ns();
        let queue = Instant::now();
        let values = loaded
            .run(self.plan, &mut engine, self.progress)
            .map_err(|e| e.to_string())?;
        engine
            .runtime_mut()
            .synchronize()
            .map_err(|e| e.to_string())?;
        let wall_s = queue.elapsed().as_secs_f64();
        let spans = match timed {
            true => engine.runtime().backend().take_timeline(),
            false => Vec::new(),
        };
        let log = engine.runtime_mut().take_events().map(|log| (log, spans));
        Ok(Ran {
            values,
            stats: engine.runtime().stats(),
            log,
            wall_s,
            load_s,
            model: None,
            queue_start_ns,
        })
    }
}

/// Runs `plan` once on a fresh backend of kind `choice` with `budget` bytes, under `config`,
/// with node data in the backend's page-locked host memory when `pinned`; returns the
/// correlators, the runtime's statistics, and with `config.events` its event log and the
/// backend's timeline. On the model, also the modelled makespan of the queue and the floor
/// ([`Ran::model`]), printed on stderr too.
pub fn run_on(
    choice: BackendChoice,
    budget: usize,
    config: Config,
    pinned: bool,
    plan: &Plan,
    progress: &mut dyn FnMut(Progress),
) -> Result<Ran, String> {
    let job = PlanRun {
        config,
        pinned,
        plan,
        progress,
    };
    let ran = dispatch(choice, &Open::budget(budget), job).map_err(message)?;
    let mut output = ran.output?;
    if let Some(whole) = ran.model {
        let (r, setup) = whole.from_queue_start(output.queue_start_ns);
        let makespan = r.makespan_s;
        eprintln!(
            "model: makespan {makespan:.6} s of the queue after {setup:.6} s of set-up, floor \
             {:.6} s (the floor is {:.1}% of the makespan; no data: the values written are not \
             results)",
            r.floor_s,
            100.0 * r.floor_s / makespan.max(f64::MIN_POSITIVE)
        );
        output.model = Some((makespan, r.floor_s));
    }
    Ok(output)
}

/// Every run's times, in the order they ran.
pub struct Times {
    /// Each run's [`Ran::wall_s`] (the queue).
    pub wall_s: Vec<f64>,
    /// Each run's [`Ran::load_s`] (loading before the queue).
    pub load_s: Vec<f64>,
}

impl Times {
    /// The median of `values` (the upper one of an even count; 0 for none).
    pub fn median(values: &[f64]) -> f64 {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
    }
}

/// Runs `plan` `runs` times (at least once), each on a fresh backend as [`run_on`] does, and
/// returns the first run (its correlators, statistics and event log: the counts are the same in
/// every run) with every run's times.
pub fn run_times(
    choice: BackendChoice,
    budget: usize,
    config: &Config,
    pinned: bool,
    plan: &Plan,
    runs: usize,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Ran, Times), String> {
    let first = run_on(choice, budget, config.clone(), pinned, plan, progress)?;
    let mut times = Times {
        wall_s: vec![first.wall_s],
        load_s: vec![first.load_s],
    };
    for _ in 1..runs {
        let ran = run_on(choice, budget, config.clone(), pinned, plan, progress)?;
        times.wall_s.push(ran.wall_s);
        times.load_s.push(ran.load_s);
    }
    Ok((first, times))
}

/// `memhc campaign`'s runner of `--backend NAME`: the host reference device, or a GPU
/// backend this build has, on the GPU of the rank's node-local rank (one GPU per rank).
pub fn campaign_runner(name: &str) -> Result<BackendRunner, String> {
    let choice = BUILD.choose(name).map_err(message)?;
    BackendRunner::new(choice).map_err(message)
}
