//! Which backend a run goes to: `--backend host|cuda|rocm|model`. The GPU backends are compiled
//! in by this crate's features of the same names; without them, asking for one is a one-line
//! usage error that says how to rebuild. `model` is the modelled H100 of `memhc_gpu::model`:
//! no data, modelled time, always compiled; its runs report the modelled makespan and floor
//! ([`last_model_report`]). Its parameters are the measured H100's unless the environment
//! variable `MEMHC_MODEL` changes some (`MEMHC_MODEL=h2d_bandwidth=25e9,pin_rate=1e10`; see
//! `memhc_gpu::model::ModelParams::with_settings`).

use std::cell::Cell;

use std::str::FromStr;

use memhc_gpu::model::{ModelParams, ModelReport, model_backend};
use memhc_host::host::HostBackend;

use crate::error::{Result, SynthError};
use crate::run::{RunSpec, Traced, run_observed};
use crate::workload::{Analysis, Workload};

/// The backend of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendChoice {
    /// The host reference backend (no GPU).
    Host,
    /// The NVIDIA backend (feature `cuda`).
    Cuda,
    /// The AMD backend (feature `rocm`).
    Rocm,
    /// The modelled H100 (`memhc_gpu::model`): no data, modelled time.
    Model,
}

impl BackendChoice {
    /// The name used on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            BackendChoice::Host => "host",
            BackendChoice::Cuda => "cuda",
            BackendChoice::Rocm => "rocm",
            BackendChoice::Model => "model",
        }
    }

    /// Whether this build can run it.
    pub fn compiled(self) -> bool {
        match self {
            BackendChoice::Host | BackendChoice::Model => true,
            BackendChoice::Cuda => cfg!(feature = "cuda"),
            BackendChoice::Rocm => cfg!(feature = "rocm"),
        }
    }
}

impl FromStr for BackendChoice {
    type Err = SynthError;

    /// Parses `host`, `cuda`, `rocm` or `model`, refusing a GPU backend this build lacks.
    fn from_str(s: &str) -> Result<Self> {
        let choice = match s {
            "host" => BackendChoice::Host,
            "cuda" => BackendChoice::Cuda,
            "rocm" => BackendChoice::Rocm,
            "model" => BackendChoice::Model,
            other => {
                return Err(SynthError::Usage(format!(
                    "--backend {other}: unknown backend (host, cuda, rocm or model)"
                )));
            }
        };
        if !choice.compiled() {
            return Err(SynthError::Usage(format!(
                "--backend {s}: this build has no {s} backend; rebuild with `--features {s}` \
                 (cargo run --release -p memhc-synth --features {s} -- ...)"
            )));
        }
        Ok(choice)
    }
}

impl BackendChoice {
    /// Checks, before any work, that the backend can open here (drivers, libraries, a
    /// device): a one-line error otherwise.
    pub fn check(self) -> Result<()> {
        match self {
            BackendChoice::Host | BackendChoice::Model => Ok(()),
            #[cfg(feature = "cuda")]
            BackendChoice::Cuda => memhc_cuda::CudaBackend::new()
                .map(drop)
                .map_err(|e| memhc_core::Error::from(e).into()),
            #[cfg(feature = "rocm")]
            BackendChoice::Rocm => memhc_hip::probe()
                .map(drop)
                .map_err(|e| memhc_core::Error::from(e).into()),
            #[allow(unreachable_patterns)]
            other => Err(not_compiled(other)),
        }
    }
}

fn not_compiled(choice: BackendChoice) -> SynthError {
    SynthError::Usage(format!(
        "--backend {}: not compiled into this build",
        choice.name()
    ))
}

thread_local! {
    /// The model's report of the last run of `--backend model` on this thread.
    static MODELLED: Cell<Option<(ModelReport, f64)>> = const { Cell::new(None) };
}

/// The model's report of the last run [`run_on`] made on this thread, if it ran on `--backend
/// model` (`None` after a run on any other backend), its makespan counted from the start of
/// the queue; and the modelled host time before that start (the set-up: page-locking node
/// memory), seconds.
pub fn last_model_report() -> Option<(ModelReport, f64)> {
    MODELLED.with(Cell::get)
}

/// Runs `w` on a fresh backend of kind `choice` whose budget is the run's, recording the
/// runtime's event log if `events`. A GPU backend that cannot open (no driver, no device) is
/// reported in one line.
pub fn run_on(
    choice: BackendChoice,
    w: &Workload,
    a: &Analysis,
    spec: &RunSpec,
    events: bool,
    progress: &mut dyn FnMut(usize),
) -> Result<Traced> {
    MODELLED.with(|m| m.set(None));
    match choice {
        BackendChoice::Host => {
            run_observed(HostBackend::new(spec.budget), w, a, spec, events, progress)
        }
        BackendChoice::Model => {
            let params = ModelParams::from_env().map_err(memhc_core::Error::from)?;
            let (backend, clock) =
                model_backend(params, spec.budget).map_err(memhc_core::Error::from)?;
            // The runner reports 0 vectors done as the queue starts: the set-up ends there.
            let mut setup = None;
            let mut timed = |v: usize| {
                if setup.is_none() {
                    setup = Some(clock.report().makespan_s);
                }
                progress(v)
            };
            let traced = run_observed(backend, w, a, spec, events, &mut timed)?;
            let setup = setup.unwrap_or(0.0);
            let whole = clock.report();
            let queue = ModelReport {
                makespan_s: whole.makespan_s - setup,
                ..whole
            };
            MODELLED.with(|m| m.set(Some((queue, setup))));
            Ok(traced)
        }
        #[cfg(feature = "cuda")]
        BackendChoice::Cuda => {
            let backend = memhc_cuda::CudaBackend::with_budget(spec.budget)
                .map_err(memhc_core::Error::from)?;
            run_observed(backend, w, a, spec, events, progress)
        }
        #[cfg(feature = "rocm")]
        BackendChoice::Rocm => {
            let backend =
                memhc_hip::HipBackend::with_budget(spec.budget).map_err(memhc_core::Error::from)?;
            run_observed(backend, w, a, spec, events, progress)
        }
        #[allow(unreachable_patterns)]
        other => Err(not_compiled(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_missing_backends_say_how_to_rebuild() {
        assert_eq!(
            "host".parse::<BackendChoice>().ok(),
            Some(BackendChoice::Host)
        );
        for gpu in ["cuda", "rocm"] {
            match gpu.parse::<BackendChoice>() {
                Ok(choice) => assert!(choice.compiled() && choice.name() == gpu),
                Err(e) => {
                    let text = e.to_string();
                    assert!(text.contains(&format!("--features {gpu}")), "{text}");
                    assert!(!text.contains('\n'));
                }
            }
        }
        assert_eq!(
            "model".parse::<BackendChoice>().ok(),
            Some(BackendChoice::Model)
        );
        assert!(BackendChoice::Model.compiled() && BackendChoice::Model.check().is_ok());
        assert!("tpu".parse::<BackendChoice>().is_err());
    }
}
