//! Which backend a run goes to: `--backend host|cuda|rocm|model`, read by `memhc-select` (the
//! one place names are read) and opened by its dispatch. The GPU backends are compiled in by
//! this crate's features of the same names; without them, asking for one is a one-line usage
//! error that says how to rebuild. `model` is the modelled H100 of `memhc_gpu::model`: no
//! data, modelled time, always compiled; its runs report the modelled makespan and floor
//! ([`last_model_report`]). Its parameters are the measured H100's unless the environment
//! variable `MEMHC_MODEL` changes some (`MEMHC_MODEL=h2d_bandwidth=25e9,pin_rate=1e10`; see
//! `memhc_gpu::model::ModelParams::with_settings`).

use std::cell::Cell;

use memhc_core::Backend;
use memhc_gpu::model::ModelReport;
use memhc_select::{Build, Open, SelectError, WithBackend, dispatch};

pub use memhc_select::BackendChoice;

use crate::error::{Error, Result};
use crate::order::Order;
use crate::run::{RunSpec, Traced, run_observed_in};
use crate::workload::{Analysis, Workload};

/// The GPU backends this build of `memhc-synth` has.
const BUILD: Build = Build {
    package: "memhc-synth",
    cuda: cfg!(feature = "cuda"),
    rocm: cfg!(feature = "rocm"),
};

/// A `memhc-select` error as `memhc-synth` reports it: a backend that cannot open is a
/// runtime error, anything else a usage error naming `--backend`.
fn synth_error(e: SelectError) -> Error {
    match e {
        SelectError::Open(e) => memhc_core::Error::from(e).into(),
        SelectError::NotBuilt { backend, .. } => Error::Usage(format!("--backend {backend}: {e}")),
        other => Error::Usage(format!("--backend: {other}")),
    }
}

/// Parses `--backend`, refusing a GPU backend this build lacks, then checks that it can open
/// here (drivers, libraries, a device), before any work: a one-line error otherwise.
pub fn choose(name: &str) -> Result<BackendChoice> {
    let choice = BUILD.choose(name).map_err(synth_error)?;
    memhc_select::check(choice).map_err(synth_error)?;
    Ok(choice)
}

thread_local! {
    /// The model's report of the last run of `--backend model` on this thread.
    static MODELLED: Cell<Option<(ModelReport, f64)>> = const { Cell::new(None) };
}

/// The modelled makespan and floor of the last run [`run_on`] made on this thread, if it ran
/// on `--backend model` (`None` after a run on any other backend).
///
/// The makespan is counted from the start of the queue, as `wall_s` is; the second value is
/// the modelled time before it (the set-up: page-locking node memory), seconds, read from the
/// backend's timing clock when the queue started ([`Outcome::queue_start_ns`]).
///
/// [`Outcome::queue_start_ns`]: crate::run::Outcome::queue_start_ns
pub fn last_model_report() -> Option<(ModelReport, f64)> {
    MODELLED.with(Cell::get)
}

/// One observed run of a workload, on whichever backend.
struct ObservedRun<'a> {
    w: &'a Workload,
    a: &'a Analysis,
    spec: &'a RunSpec,
    order: Order,
    events: bool,
    progress: &'a mut dyn FnMut(usize),
}

impl WithBackend for ObservedRun<'_> {
    type Output = Result<Traced>;

    fn run<B: Backend>(self, backend: B) -> Result<Traced> {
        run_observed_in(
            backend,
            self.w,
            self.a,
            self.spec,
            self.order,
            self.events,
            self.progress,
        )
    }
}

/// Runs `w` on a fresh backend of kind `choice` whose budget is the run's, issued in `order`,
/// recording the runtime's event log if `events`. A GPU backend that cannot open (no driver, no device) is
/// reported in one line.
pub fn run_on(
    choice: BackendChoice,
    w: &Workload,
    a: &Analysis,
    spec: &RunSpec,
    order: Order,
    events: bool,
    progress: &mut dyn FnMut(usize),
) -> Result<Traced> {
    MODELLED.with(|m| m.set(None));
    let job = ObservedRun {
        w,
        a,
        spec,
        order,
        events,
        progress,
    };
    let ran = dispatch(
        BUILD.check(choice).map_err(synth_error)?,
        &Open::budget(spec.budget),
        job,
    )
    .map_err(synth_error)?;
    let traced = ran.output?;
    let queue_start = traced.outcome.queue_start_ns;
    let queue = ran.model.map(|whole| whole.from_queue_start(queue_start));
    MODELLED.with(|m| m.set(queue));
    Ok(traced)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_missing_backends_say_how_to_rebuild() {
        assert_eq!(choose("host").ok(), Some(BackendChoice::Host));
        for gpu in ["cuda", "rocm"] {
            match choose(gpu) {
                Ok(choice) => assert!(BUILD.has(choice) && choice.name() == gpu),
                Err(e) => {
                    let text = e.to_string();
                    let built = BUILD.has(gpu.parse().unwrap_or(BackendChoice::Host));
                    assert!(
                        built || text.contains(&format!("--features {gpu}")),
                        "{text}"
                    );
                    assert!(!text.contains('\n'));
                }
            }
        }
        assert_eq!(choose("model").ok(), Some(BackendChoice::Model));
        let e = choose("tpu")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.starts_with("--backend: unknown backend 'tpu'"), "{e}");
    }
}
