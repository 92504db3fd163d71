//! `memhc campaign MANIFEST --out FILE`: the whole command, for the `memhc` binary (which adds
//! its GPU backends as [`Runner`]s) and for the MPI tests. Every rank runs it; rank 0 reads the
//! manifest and the journal, hands the units out, gathers and writes the output; the others
//! run units. Errors are one line, printed once (by rank 0, or by the rank that aborts the
//! job), with exit code 2 for bad input and 1 for a lost rank.

use std::path::PathBuf;
use std::time::Duration;

use memhc_select::BackendChoice;
use serde::Serialize;

use crate::corr::CorrCampaign;
use crate::corr::gather::check_output;
use crate::corr::job::{CorrJob, Runner, admit_unit, unit_file, unit_plan};
use crate::corr::units::UnitSpec;
use crate::error::{CampaignError, Result};
use crate::fault::Fault;
use crate::journal::{Journal, write_atomic};
use crate::scheduler::{RankSummary, Summary};
use crate::worker::Timing;
use crate::world::World;

/// The options of `memhc campaign`.
#[derive(Clone, Debug, PartialEq)]
pub struct CampaignOptions {
    /// The manifest.
    pub manifest: PathBuf,
    /// The output (`.json` or `.csv`).
    pub out: PathBuf,
    /// The journal's directory (default: the output's path with `.journal` appended).
    pub journal: Option<PathBuf>,
    /// The longest any rank waits for another.
    pub timeout: Duration,
    /// Where to write a JSON summary of the run (ranks, units, times), if anywhere.
    pub summary: Option<PathBuf>,
    /// Print a line per unit done.
    pub progress: bool,
}

/// The JSON summary of a campaign run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSummary {
    /// What carried the messages (`mpi`, `none`).
    pub transport: &'static str,
    /// Ranks in all.
    pub ranks: usize,
    /// Units in the campaign.
    pub units: usize,
    /// Units run now.
    pub ran: usize,
    /// Units found in the journal.
    pub skipped: usize,
    /// Wall time of the scheduling loop, seconds.
    pub wall_seconds: f64,
    /// Per rank: units run and seconds spent on them.
    pub per_rank: Vec<RankLine>,
}

/// One rank in a [`RunSummary`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RankLine {
    /// Units it ran.
    pub units: usize,
    /// Seconds it spent on them.
    pub busy_seconds: f64,
}

impl From<&RankSummary> for RankLine {
    fn from(r: &RankSummary) -> Self {
        RankLine {
            units: r.units,
            busy_seconds: r.busy_seconds,
        }
    }
}

/// Runs the command on this rank with `runner`; returns the exit code.
pub fn main<R: Runner>(program: &str, runner: R, options: &CampaignOptions) -> u8 {
    let world = match World::init(program) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("{program}: {e}");
            return e.exit_code();
        }
    };
    let fault = Fault::from_env();
    let timing = Timing {
        fault: fault.as_ref().ok().copied().flatten(),
        ..Timing::with_timeout(options.timeout)
    };
    let backend = runner.choice();
    let job = CorrJob::new(runner);
    if !world.is_master() {
        // Everything a worker could get wrong (its device, a unit) goes to the master.
        let _ = world.run_worker(&job, &timing);
        world.finish(&timing);
        return 0;
    }
    let prepared = fault.and_then(|_| prepare(options, backend));
    let (campaign, journal, mut results, created) = match prepared {
        Ok(p) => p,
        Err(e) => {
            world.stop_all(&timing);
            eprintln!("{program}: {e}");
            world.finish(&timing);
            return e.exit_code();
        }
    };
    let mut progress = |p: &crate::scheduler::Progress| {
        if options.progress {
            eprintln!(
                "{program}: [{}/{}] {} on rank {} in {:.2} s",
                p.done, p.total, p.key, p.rank, p.seconds
            );
        }
    };
    let served = world.run_master(
        &job,
        campaign.units(),
        &mut results,
        Some(&journal),
        &timing,
        &mut progress,
    );
    let finished = served.and_then(|summary| {
        let values = campaign.gather(&results)?;
        values.write(&options.out)?;
        let line = report(&world, campaign.units().len(), &summary);
        if let Some(path) = &options.summary {
            let written = serde_json::to_vec_pretty(&line)
                .map_err(|e| CampaignError::io(path, e))
                .and_then(|text| write_atomic(path, &text));
            if let Err(e) = written {
                // A failing command leaves no output behind.
                let _ = std::fs::remove_file(&options.out);
                return Err(e);
            }
        }
        println!(
            "{program}: {} units ({} from the journal) on {} rank{} ({}) in {:.2} s -> {}",
            line.units,
            line.skipped,
            line.ranks,
            if line.ranks == 1 { "" } else { "s" },
            line.transport,
            line.wall_seconds,
            options.out.display()
        );
        Ok(())
    });
    let code = match finished {
        Ok(()) => 0,
        Err(e) => {
            if created {
                // A journal this run made and no unit completed in: nothing to restart from.
                // remove_dir removes only empty directories, so completed units stay.
                let _ = std::fs::remove_dir(journal.dir().join("units"));
                let _ = std::fs::remove_dir(journal.dir());
            }
            eprintln!("{program}: {e}");
            e.exit_code()
        }
    };
    world.finish(&timing);
    code
}

/// The campaign, its journal, the results found in it, and whether this run created the
/// journal's directory.
type Prepared = (CorrCampaign, Journal, Vec<Option<String>>, bool);

/// Checks everything that can be checked before the journal exists: the output's form, that
/// the summary's place can be written, the manifest, and every unit's admission (its file,
/// its plan under the budget, the host memory it needs; [`admit_unit`]). A campaign refused
/// here leaves nothing behind.
fn prepare(options: &CampaignOptions, backend: BackendChoice) -> Result<Prepared> {
    check_output(&options.out)?;
    if let Some(summary) = &options.summary {
        check_writable(summary)?;
    }
    let campaign = CorrCampaign::load(&options.manifest, backend.name())?;
    for unit in campaign.units() {
        let refuse = |m: String| CampaignError::Usage(format!("unit {}: {m}", unit.key));
        let spec: UnitSpec = serde_json::from_str(&unit.spec).map_err(|e| refuse(e.to_string()))?;
        let checked = unit_file(&spec).map_err(|e| refuse(e.to_string()))?;
        let (plan, budget) = unit_plan(&checked, &spec.run).map_err(|e| refuse(e.0))?;
        admit_unit(&plan, budget, backend).map_err(|e| refuse(e.0))?;
    }
    let dir = options.journal.clone().unwrap_or_else(|| {
        let mut d = options.out.clone().into_os_string();
        d.push(".journal");
        PathBuf::from(d)
    });
    let created = !dir.exists();
    let journal = Journal::open(&dir)?;
    let results = journal.load(campaign.units())?;
    Ok((campaign, journal, results, created))
}

/// Refuses a path a file cannot be created at (a directory that does not exist, `/proc/x`),
/// by creating and removing a probe beside it.
fn check_writable(path: &std::path::Path) -> Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| CampaignError::Usage(format!("{}: not a file name", path.display())))?;
    let mut probe_name = std::ffi::OsString::from(".");
    probe_name.push(name);
    probe_name.push(format!(".probe.{}", std::process::id()));
    let probe = path.with_file_name(probe_name);
    std::fs::write(&probe, b"").map_err(|e| CampaignError::io(path, e))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

fn report(world: &World, units: usize, s: &Summary) -> RunSummary {
    RunSummary {
        transport: world.transport(),
        ranks: world.context().ranks,
        units,
        ran: s.ran,
        skipped: s.skipped,
        wall_seconds: s.wall_seconds,
        per_rank: s.ranks.iter().map(RankLine::from).collect(),
    }
}
