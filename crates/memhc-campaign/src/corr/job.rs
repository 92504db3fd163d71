//! Running one unit of a correlator campaign on a rank: read the configuration's file, shift
//! its seeds, restrict it to the unit's time sources, check it (node data included), plan it
//! and run it on the rank's device. The result is the unit's correlators, as exact text.
//!
//! Where the plan runs is a [`Runner`]: [`BackendRunner`], any backend with data that
//! `memhc-select` opens (the host here; a GPU when the program is built with one, each rank on
//! the GPU of its node-local rank).

use std::path::Path;

use hadron::Engine;
use memhc_core::{Backend, Config, Runtime};
use memhc_corr::{CheckedFile, CorrError, Correlators, Plan};
use memhc_select::{BackendChoice, Device, Open, SelectError, WithBackend, dispatch};

use crate::corr::manifest::RunSettings;
use crate::corr::units::{UnitSpec, reseed, restrict};
use crate::exact::to_exact_string;
use crate::job::{Job, JobError, RankContext};

/// Runs a correlator plan on a device.
pub trait Runner: Sync {
    /// The backend.
    fn choice(&self) -> BackendChoice;

    /// The backend's name (`host`, `cuda`, `rocm`), as in unit specs.
    fn name(&self) -> &str {
        self.choice().name()
    }

    /// Checks, once per rank, that the device opens here.
    fn check(&self, ctx: &RankContext) -> Result<(), JobError> {
        let _ = ctx;
        Ok(())
    }

    /// Runs `plan` under `config` on a fresh device of `budget` bytes (the GPU of this rank).
    fn run(
        &self,
        plan: &Plan,
        config: Config,
        budget: usize,
        ctx: &RankContext,
    ) -> Result<Correlators, JobError>;
}

impl<R: Runner + ?Sized> Runner for Box<R> {
    fn choice(&self) -> BackendChoice {
        (**self).choice()
    }

    fn name(&self) -> &str {
        (**self).name()
    }

    fn check(&self, ctx: &RankContext) -> Result<(), JobError> {
        (**self).check(ctx)
    }

    fn run(
        &self,
        plan: &Plan,
        config: Config,
        budget: usize,
        ctx: &RankContext,
    ) -> Result<Correlators, JobError> {
        (**self).run(plan, config, budget, ctx)
    }
}

/// Runs `plan` on `backend` under `config`.
pub fn run_on<B: Backend>(
    backend: B,
    config: Config,
    plan: &Plan,
) -> Result<Correlators, JobError> {
    let rt = Runtime::new(backend, config).map_err(JobError::line)?;
    let mut engine = Engine::new(rt);
    memhc_corr::run(plan, &mut engine, &mut |_| {}).map_err(JobError::line)
}

/// A plan run, on whichever backend.
struct PlanRun<'a> {
    plan: &'a Plan,
    config: Config,
}

impl WithBackend for PlanRun<'_> {
    type Output = Result<Correlators, JobError>;

    fn run<B: Backend>(self, backend: B) -> Result<Correlators, JobError> {
        run_on(backend, self.config, self.plan)
    }
}

/// Runs plans on the backend of a [`BackendChoice`] (through `memhc-select`'s dispatch): the
/// host reference device, or a GPU backend, on the GPU `local_rank mod devices` of the rank's
/// node (one GPU per rank).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackendRunner(BackendChoice);

impl BackendRunner {
    /// The runner of `choice`, refusing a backend without data (the model computes no
    /// correlators).
    pub fn new(choice: BackendChoice) -> Result<Self, SelectError> {
        match choice.has_data() {
            true => Ok(BackendRunner(choice)),
            false => Err(SelectError::NoData(choice.name())),
        }
    }

    /// The host reference backend.
    pub fn host() -> Self {
        BackendRunner(BackendChoice::Host)
    }
}

impl Default for BackendRunner {
    /// The host reference backend.
    fn default() -> Self {
        BackendRunner::host()
    }
}

impl Runner for BackendRunner {
    fn choice(&self) -> BackendChoice {
        self.0
    }

    fn check(&self, _ctx: &RankContext) -> Result<(), JobError> {
        memhc_select::check(self.0).map_err(JobError::line)
    }

    fn run(
        &self,
        plan: &Plan,
        config: Config,
        budget: usize,
        ctx: &RankContext,
    ) -> Result<Correlators, JobError> {
        let open = Open {
            budget: Some(budget),
            device: Device::OfLocalRank(ctx.local_rank),
        };
        dispatch(self.0, &open, PlanRun { plan, config })
            .map_err(JobError::line)?
            .output
    }
}

/// The job of a correlator campaign: each unit a [`UnitSpec`], run through a [`Runner`].
#[derive(Clone, Debug, Default)]
pub struct CorrJob<R> {
    runner: R,
}

impl<R: Runner> CorrJob<R> {
    /// A job that runs its units on `runner`.
    pub fn new(runner: R) -> Self {
        CorrJob { runner }
    }
}

/// The checked file of a unit: its file read, seeds shifted, restricted to its sources, and
/// checked against the file's directory (node data included). Errors name the file.
pub fn unit_file(spec: &UnitSpec) -> Result<CheckedFile, CorrError> {
    let name = spec.file.display().to_string();
    let text =
        hadron::admission::read_text_bounded(&spec.file, hadron::admission::MAX_TEXT_FILE_BYTES)
            .map_err(|e| CorrError::io(&spec.file, e))?;
    let mut file = memhc_corr::io::parse_file(&text, &name)?;
    if let Some(seed) = spec.seed {
        reseed(&mut file, seed);
    }
    let file = restrict(&file, &spec.sources);
    let dir = spec.file.parent().unwrap_or(Path::new(""));
    CheckedFile::new(file, dir).map_err(|e| match e {
        CorrError::Invalid(i) => CorrError::Invalid(i.within(name)),
        other => other,
    })
}

/// The plan of a unit, and the budget it runs with (the settings', or the plan's peak).
pub fn unit_plan(checked: &CheckedFile, run: &RunSettings) -> Result<(Plan, usize), JobError> {
    let plan = memhc_corr::plan(checked, &run.plan_options()).map_err(JobError::line)?;
    let budget = match &run.budget {
        Some(b) => b.get().map_err(JobError)?,
        None => plan.report.peak_bytes.max(1),
    };
    Ok((plan, usize::try_from(budget).unwrap_or(usize::MAX)))
}

/// Refuses a unit whose plan cannot run under `budget` on `backend`, before
/// any value is made ([`memhc_corr::admit_run`]: the largest step must fit the budget, and
/// the host must hold the values the run reads, plus the device memory on the host backend).
pub fn admit_unit(plan: &Plan, budget: usize, backend: BackendChoice) -> Result<(), JobError> {
    let host_device = backend == BackendChoice::Host;
    memhc_corr::admit_run(plan, budget as u64, host_device).map_err(JobError::line)
}

impl<R: Runner> Job for CorrJob<R> {
    fn setup(&self, ctx: &RankContext) -> Result<(), JobError> {
        self.runner.check(ctx)
    }

    fn run(&self, spec: &str, ctx: &RankContext) -> Result<String, JobError> {
        let spec: UnitSpec =
            serde_json::from_str(spec).map_err(|e| JobError(format!("a bad unit spec: {e}")))?;
        if spec.backend != self.runner.name() {
            return Err(JobError(format!(
                "the unit is for the {} backend, this rank runs {}",
                spec.backend,
                self.runner.name()
            )));
        }
        let checked = unit_file(&spec).map_err(JobError::line)?;
        let (plan, budget) = unit_plan(&checked, &spec.run)?;
        admit_unit(&plan, budget, self.runner.choice())?;
        let values = self
            .runner
            .run(&plan, spec.run.config(budget), budget, ctx)?;
        to_exact_string(&values).map_err(JobError::line)
    }
}
