//! A sweep as a campaign (`memhc_campaign`): each point of the sweep is a work unit, handed
//! out by rank 0 to whichever rank asks (MPI ranks under `mpirun` in a build with
//! `--features mpi`; this one process otherwise), each completed point recorded in the journal
//! (`--journal DIR`) so that a rerun resumes, and every point's records gathered on rank 0 into
//! the same table, JSON, CSV and plots as a run in one process.
//!
//! Every rank parses the same command line; a unit's spec names its point and carries the
//! options that decide its records, so a rank started with other options refuses it, and a
//! record in the journal is reused only for the same point and options. The counts of a
//! point's records are the same wherever it runs; its times are those of the rank that ran it.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::ProgressBar;
use memhc_campaign::exact::{from_exact_str, to_exact_string};
use memhc_campaign::{
    CampaignError, Fault, Job, JobError, Journal, Progress, RankContext, Timing, Unit, World,
    launcher,
};
use serde::{Deserialize, Serialize};

use crate::record::Record;
use crate::runargs::RunArgs;
use crate::sweep::{Observed, Parsed, exit_code, present, refuse_oversubscribed_unified};

/// Whether this run is a distributed sweep: `--journal` given, or this process started as one
/// of several by an MPI launcher.
pub(crate) fn wanted(a: &RunArgs) -> bool {
    a.journal.is_some() || launcher().is_some_and(|(size, _)| size > 1)
}

/// What a unit of the sweep is: its point, the point's parameters, and the options that decide
/// its records.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct PointSpec {
    point: usize,
    tensor_size: usize,
    vector_size: usize,
    vectors: usize,
    repeat: f64,
    dist: String,
    seed: u64,
    oversub: Option<f64>,
    workload: Option<String>,
    budget: Option<u64>,
    plan: String,
}

/// The job every rank runs: prepare the point, run every configuration on it, return its
/// records (exact text).
struct SweepJob {
    parsed: Result<Parsed, String>,
    workload: Option<String>,
    warmed: AtomicBool,
}

impl SweepJob {
    fn parsed(&self) -> Result<&Parsed, JobError> {
        self.parsed.as_ref().map_err(|e| JobError(e.clone()))
    }

    /// The spec of point `i`.
    fn spec(&self, parsed: &Parsed, i: usize) -> Result<String, JobError> {
        let (p, oversub) = parsed
            .points
            .get(i)
            .ok_or_else(|| JobError(format!("the sweep has no point {i}")))?;
        let spec = PointSpec {
            point: i,
            tensor_size: p.tensor_size,
            vector_size: p.vector_size,
            vectors: p.vectors,
            repeat: p.repeat,
            dist: p.dist.to_string(),
            seed: p.seed,
            oversub: *oversub,
            workload: self.workload.clone(),
            budget: parsed.setup.budget,
            plan: format!("{:?}", parsed.plan),
        };
        to_exact_string(&spec).map_err(JobError::line)
    }
}

impl Job for SweepJob {
    fn setup(&self, _ctx: &RankContext) -> Result<(), JobError> {
        self.parsed().map(drop)
    }

    fn run(&self, spec: &str, _ctx: &RankContext) -> Result<String, JobError> {
        let parsed = self.parsed()?;
        let s: PointSpec = from_exact_str(spec).map_err(JobError::line)?;
        if self.spec(parsed, s.point)? != spec {
            return Err(JobError(
                "this rank was started with other options than rank 0".into(),
            ));
        }
        let p = parsed.prepare(s.point).map_err(JobError::line)?;
        refuse_oversubscribed_unified(&parsed.plan.modes, std::slice::from_ref(&p))
            .map_err(JobError::line)?;
        if !self.warmed.swap(true, Ordering::SeqCst) {
            parsed.plan.warm_up(&p).map_err(JobError::line)?;
        }
        let records = parsed
            .plan
            .run_point(
                &p,
                &ProgressBar::hidden(),
                &mut None,
                &mut Observed::default(),
            )
            .map_err(JobError::line)?;
        to_exact_string(&records).map_err(JobError::line)
    }
}

/// Runs the sweep of `a` as a campaign on this rank; returns the exit code (0 ok, 2 bad input,
/// 1 a run that failed or a lost rank).
pub(crate) fn main(a: &RunArgs) -> ExitCode {
    let world = match World::init("memhc-synth") {
        Ok(w) => w,
        Err(e) => {
            eprintln!("memhc-synth: {e}");
            return ExitCode::from(e.exit_code());
        }
    };
    let fault = Fault::from_env();
    let timeout = Duration::try_from_secs_f64(a.timeout)
        .ok()
        .filter(|t| !t.is_zero());
    let timing = Timing {
        fault: fault.as_ref().ok().copied().flatten(),
        ..Timing::with_timeout(timeout.unwrap_or(Duration::from_secs(120)))
    };
    let mut parse_error = None;
    let parsed = Parsed::new(a).and_then(|mut p| p.load(a).map(|()| p));
    let job = SweepJob {
        parsed: parsed.map_err(|e| {
            let text = e.to_string();
            parse_error = Some(e);
            text
        }),
        workload: a
            .workload
            .workload
            .as_ref()
            .map(|p| p.display().to_string()),
        warmed: AtomicBool::new(false),
    };
    if !world.is_master() {
        let _ = world.run_worker(&job, &timing);
        world.finish(&timing);
        return ExitCode::SUCCESS;
    }
    let fail = |world: World, code: u8, line: String| {
        eprintln!("memhc-synth: {line}");
        world.finish(&timing);
        ExitCode::from(code)
    };
    let prepared = (|| {
        if let Some(e) = parse_error {
            return Err((exit_code(&e), e.to_string()));
        }
        let usage = |e: CampaignError| (e.exit_code(), e.to_string());
        fault.map_err(usage)?;
        if timeout.is_none() {
            return Err((
                2,
                format!("--timeout {}: a positive number of seconds", a.timeout),
            ));
        }
        let parsed = job.parsed().map_err(|e| (2, e.0))?;
        let units = (0..parsed.points.len())
            .map(|i| {
                let p = &parsed.points[i].0;
                Ok(Unit {
                    key: format!("p{i:04}"),
                    spec: job.spec(parsed, i)?,
                    cost: (p.vectors * p.vector_size) as f64 * (p.tensor_size as f64).powi(3),
                })
            })
            .collect::<Result<Vec<_>, JobError>>()
            .map_err(|e| (2, e.0))?;
        let journal = a
            .journal
            .as_ref()
            .map(|d| Journal::open(d))
            .transpose()
            .map_err(usage)?;
        let results = match &journal {
            Some(j) => j.load(&units).map_err(usage)?,
            None => vec![None; units.len()],
        };
        Ok((units, journal, results))
    })();
    let (units, journal, mut results) = match prepared {
        Ok(p) => p,
        Err((code, line)) => {
            world.stop_all(&timing);
            return fail(world, code, line);
        }
    };
    let mut progress = |p: &Progress| {
        eprintln!(
            "memhc-synth: [{}/{}] point {} on rank {} in {:.2} s",
            p.done, p.total, p.key, p.rank, p.seconds
        );
    };
    let served = world.run_master(
        &job,
        &units,
        &mut results,
        journal.as_ref(),
        &timing,
        &mut progress,
    );
    let summary = match served {
        Ok(s) => s,
        Err(e) => return fail(world, e.exit_code(), e.to_string()),
    };
    let mut records: Vec<Record> = Vec::new();
    for (unit, r) in units.iter().zip(&results) {
        let text = r.as_deref().unwrap_or("[]");
        match from_exact_str::<Vec<Record>>(text) {
            Ok(rs) => records.extend(rs),
            Err(e) => return fail(world, 2, format!("point {}: {e}", unit.key)),
        }
    }
    let sweeps = job.parsed().map(|p| p.sweeps.clone()).unwrap_or_default();
    let mut observed = Observed::default();
    if let Err(e) = present(a, &records, &sweeps, &mut observed) {
        return fail(world, exit_code(&e), e.to_string());
    }
    observed.keep_outputs();
    eprintln!(
        "memhc-synth: {} points ({} from the journal) on {} rank{} ({}) in {:.2} s",
        units.len(),
        summary.skipped,
        world.context().ranks,
        if world.context().ranks == 1 { "" } else { "s" },
        world.transport(),
        summary.wall_seconds
    );
    world.finish(&timing);
    ExitCode::SUCCESS
}
