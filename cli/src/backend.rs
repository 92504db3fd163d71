//! The device a correlator run goes to: `--backend host|cuda|rocm`. The GPU backends are
//! compiled in by this crate's features of the same names (they build without CUDA or ROCm and
//! load their libraries at run time); asking for one this build lacks, or one that cannot open
//! here, is a one-line error.

use hadron::Engine;
use memhc_core::backend::timeline::WorkSpan;
use memhc_core::{Backend, Config, EventLog, Runtime, Stats};
use memhc_corr::{Correlators, Plan, Progress};
use memhc_host::HostBackend;
use memhc_synth::device::BackendChoice;

/// Parses `--backend`, refusing a GPU backend this build lacks with the command that builds it.
pub fn choose(name: &str) -> Result<BackendChoice, String> {
    match name {
        "host" => Ok(BackendChoice::Host),
        "cuda" if cfg!(feature = "cuda") => Ok(BackendChoice::Cuda),
        "rocm" if cfg!(feature = "rocm") => Ok(BackendChoice::Rocm),
        "cuda" | "rocm" => Err(format!(
            "--backend {name}: this build has no {name} backend; rebuild with \
             `cargo build --release -p memhc-cli --features {name}`"
        )),
        other => Err(format!(
            "--backend {other}: unknown backend (host, cuda or rocm)"
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
