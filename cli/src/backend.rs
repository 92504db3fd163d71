//! The device a correlator run goes to: `--backend host|cuda|rocm|model` (`model`: the modelled
//! H100 of `memhc_gpu::model`, no data, modelled time, reported on stderr; the environment
//! variable `MEMHC_MODEL` changes its parameters, e.g. `MEMHC_MODEL=h2d_bandwidth=25e9`). The
//! GPU backends are compiled in by this crate's features of the same names (they build without
//! CUDA or ROCm and load their libraries at run time); asking for one this build lacks, or one
//! that cannot open here, is a one-line error.

use hadron::Engine;
use memhc_campaign::corr::{HostRunner, Runner};
use memhc_core::backend::timeline::WorkSpan;
use memhc_core::{Backend, Config, EventLog, Runtime, Stats};
use memhc_corr::{Correlators, Plan, Progress};
use memhc_gpu::model::{ModelParams, model_backend};
use memhc_host::HostBackend;
use memhc_synth::device::BackendChoice;

/// Parses `--backend`, refusing a GPU backend this build lacks with the command that builds it.
pub fn choose(name: &str) -> Result<BackendChoice, String> {
    match name {
        "host" => Ok(BackendChoice::Host),
        "model" => Ok(BackendChoice::Model),
        "cuda" if cfg!(feature = "cuda") => Ok(BackendChoice::Cuda),
        "rocm" if cfg!(feature = "rocm") => Ok(BackendChoice::Rocm),
        "cuda" | "rocm" => Err(format!(
            "--backend {name}: this build has no {name} backend; rebuild with \
             `cargo build --release -p memhc-cli --features {name}`"
        )),
        other => Err(format!(
            "--backend {other}: unknown backend (host, cuda, rocm or model)"
        )),
    }
}

/// What one run gives: the correlators, the runtime's statistics, and (with
/// [`Config::events`]) its event log with the backend's timeline of its work.
pub type Ran = (Correlators, Stats, Option<(EventLog, Vec<WorkSpan>)>);

/// Runs `plan` once on a fresh backend of kind `choice` with `budget` bytes, under `config`;
/// returns the correlators, the runtime's statistics, and with `config.events` its event log
/// and the backend's timeline.
pub fn run_on(
    choice: BackendChoice,
    budget: usize,
    config: Config,
    plan: &Plan,
    progress: &mut dyn FnMut(Progress),
) -> Result<Ran, String> {
    match choice {
        BackendChoice::Host => run(HostBackend::new(budget), config, plan, progress),
        BackendChoice::Model => {
            let (backend, clock) = ModelParams::from_env()
                .and_then(|params| model_backend(params, budget))
                .map_err(|e| memhc_core::Error::from(e).to_string())?;
            let ran = run(backend, config, plan, progress)?;
            let r = clock.report();
            eprintln!(
                "model: makespan {:.6} s, floor {:.6} s (the floor is {:.1}% of the makespan; \
                 no data: the values written are not results)",
                r.makespan_s,
                r.floor_s,
                100.0 * r.floor_s / r.makespan_s.max(f64::MIN_POSITIVE)
            );
            Ok(ran)
        }
        #[cfg(feature = "cuda")]
        BackendChoice::Cuda => {
            let backend = memhc_cuda::CudaBackend::with_budget(budget)
                .map_err(|e| memhc_core::Error::from(e).to_string())?;
            run(backend, config, plan, progress)
        }
        #[cfg(feature = "rocm")]
        BackendChoice::Rocm => {
            let backend = memhc_hip::HipBackend::with_budget(budget)
                .map_err(|e| memhc_core::Error::from(e).to_string())?;
            run(backend, config, plan, progress)
        }
        #[allow(unreachable_patterns)]
        other => Err(format!(
            "--backend {}: not compiled into this build",
            other.name()
        )),
    }
}

fn run<B: Backend>(
    backend: B,
    config: Config,
    plan: &Plan,
    progress: &mut dyn FnMut(Progress),
) -> Result<Ran, String> {
    let timed = config.events && backend.set_timing(true);
    let rt = Runtime::new(backend, config).map_err(|e| e.to_string())?;
    let mut engine = Engine::new(rt);
    let values = memhc_corr::run(plan, &mut engine, progress).map_err(|e| e.to_string())?;
    engine
        .runtime_mut()
        .synchronize()
        .map_err(|e| e.to_string())?;
    let spans = match timed {
        true => engine.runtime().backend().take_timeline(),
        false => Vec::new(),
    };
    let log = engine.runtime_mut().take_events().map(|log| (log, spans));
    Ok((values, engine.runtime().stats(), log))
}

/// `memhc campaign`'s runner of `--backend NAME`: the host reference device, or a GPU
/// backend this build has, on the GPU of the rank's node-local rank (one GPU per rank).
pub fn campaign_runner(name: &str) -> Result<Box<dyn Runner>, String> {
    match choose(name)? {
        BackendChoice::Host => Ok(Box::new(HostRunner)),
        BackendChoice::Model => Err(
            "--backend model: campaigns need a device with data; model one run with \
             `memhc run --backend model`"
                .into(),
        ),
        #[cfg(feature = "cuda")]
        BackendChoice::Cuda => Ok(Box::new(gpu::CudaRunner)),
        #[cfg(feature = "rocm")]
        BackendChoice::Rocm => Ok(Box::new(gpu::RocmRunner)),
        #[allow(unreachable_patterns)]
        other => Err(format!(
            "--backend {}: not compiled into this build",
            other.name()
        )),
    }
}

#[cfg(any(feature = "cuda", feature = "rocm"))]
mod gpu {
    use memhc_campaign::corr::{Runner, run_on};
    use memhc_campaign::{JobError, RankContext};
    use memhc_core::Config;
    use memhc_corr::{Correlators, Plan};

    fn unavailable(e: memhc_core::BackendError) -> JobError {
        JobError::line(memhc_core::Error::from(e))
    }

    /// A campaign runner on the GPU `local_rank mod devices` of one GPU backend crate (the
    /// two crates have the same `probe`, `GpuOptions` and `with_options`).
    macro_rules! gpu_runner {
        ($feature:literal, $runner:ident, $krate:ident, $backend:ident, $doc:literal) => {
            #[doc = $doc]
            #[cfg(feature = $feature)]
            pub struct $runner;

            #[cfg(feature = $feature)]
            impl Runner for $runner {
                fn name(&self) -> &str {
                    $feature
                }

                fn check(&self, _ctx: &RankContext) -> Result<(), JobError> {
                    $krate::probe().map(drop).map_err(unavailable)
                }

                fn run(
                    &self,
                    plan: &Plan,
                    config: Config,
                    budget: usize,
                    ctx: &RankContext,
                ) -> Result<Correlators, JobError> {
                    let devices = $krate::probe().map_err(unavailable)?.devices;
                    let options = $krate::GpuOptions::default()
                        .device(ctx.device(devices))
                        .budget(budget);
                    let backend = $krate::$backend::with_options(options).map_err(unavailable)?;
                    run_on(backend, config, plan)
                }
            }
        };
    }

    gpu_runner!(
        "cuda",
        CudaRunner,
        memhc_cuda,
        CudaBackend,
        "CUDA on the GPU `local_rank mod devices`."
    );
    gpu_runner!(
        "rocm",
        RocmRunner,
        memhc_hip,
        HipBackend,
        "ROCm on the GPU `local_rank mod devices`."
    );
}
