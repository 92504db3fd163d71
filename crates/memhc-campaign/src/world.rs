//! The process's place in a campaign, for a command line: one process (no MPI), or one rank of
//! an MPI job (feature `mpi`, when started by `mpirun`, `mpiexec` or `srun`). Rank 0 is the
//! master and also runs units on a thread of its own; the other ranks are workers.
//!
//! This is where the process-level decisions are made, so a command stays short: a rank that
//! loses its peers prints one line and aborts the MPI job (`MPI_Abort` ends every rank within
//! the launcher's own time), the fault hook's `exit` ends the process at once as a killed rank
//! would, and a build without MPI started as one of several processes refuses to run (each
//! would otherwise run the whole campaign).

use crate::error::{CampaignError, Result};
use crate::fault::FaultAction;
use crate::inprocess::{InProcessWorker, links};
use crate::job::{Job, JobError, RankContext, Unit};
use crate::journal::Journal;
use crate::scheduler::{Progress, Summary, serve};
use crate::transport::MasterLink;
use crate::worker::{Timing, WorkerEnd, work};

/// The exit code of a rank stopped by the fault hook's `exit` (as if killed by SIGKILL).
pub const FAULT_EXIT_CODE: i32 = 137;

enum Inner {
    Single,
    #[cfg(feature = "mpi")]
    Mpi(crate::mpi::MpiWorld),
}

/// This process in a campaign. See the [module documentation](self).
pub struct World {
    program: String,
    ctx: RankContext,
    inner: Inner,
}

/// The size and rank a launcher gave this process, if it was started by one.
pub fn launcher() -> Option<(usize, usize)> {
    let var = |k: &str| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
    };
    let size = var("OMPI_COMM_WORLD_SIZE").or_else(|| var("PMI_SIZE"))?;
    let rank = var("OMPI_COMM_WORLD_RANK")
        .or_else(|| var("PMI_RANK"))
        .unwrap_or(0);
    Some((size, rank))
}

impl World {
    /// Starts this process's part: MPI when built with the `mpi` feature and started by a
    /// launcher, else one process. `program` prefixes the lines this prints (`memhc`).
    ///
    /// Without the `mpi` feature, a process started as one of several by a launcher is
    /// refused: the launcher's rank 0 returns the error, the others exit with code 2 at once,
    /// so the line is printed once.
    pub fn init(program: &str) -> Result<World> {
        let started = launcher().is_some() || std::env::var_os("PMIX_RANK").is_some();
        #[cfg(feature = "mpi")]
        if started {
            let mpi = crate::mpi::MpiWorld::init()?;
            return Ok(World {
                program: program.to_owned(),
                ctx: mpi.context(),
                inner: Inner::Mpi(mpi),
            });
        }
        if let Some((size, rank)) = launcher().filter(|&(size, _)| size > 1) {
            if rank > 0 {
                std::process::exit(2);
            }
            return Err(CampaignError::Usage(format!(
                "started as one of {size} processes (mpirun?), but this build has no MPI: \
                 rebuild with `--features mpi` (needs an MPI library and libclang)"
            )));
        }
        let _ = started;
        Ok(World {
            program: program.to_owned(),
            ctx: RankContext::single(),
            inner: Inner::Single,
        })
    }

    /// Where this rank is.
    pub fn context(&self) -> RankContext {
        self.ctx
    }

    /// Whether this is rank 0, the master.
    pub fn is_master(&self) -> bool {
        self.ctx.rank == 0
    }

    /// `mpi` or `none`: what carries the messages.
    pub fn transport(&self) -> &'static str {
        match self.inner {
            Inner::Single => "none",
            #[cfg(feature = "mpi")]
            Inner::Mpi(_) => "mpi",
        }
    }

    /// The master's part (rank 0): runs every unit without a result in `results` on all ranks,
    /// this one included (on a thread), recording each in `journal`; see [`serve`]. A lost
    /// rank under MPI is printed and the job aborted here; otherwise errors are returned after
    /// every worker has stopped.
    pub fn run_master(
        &self,
        job: &dyn Job,
        units: &[Unit],
        results: &mut [Option<String>],
        journal: Option<&Journal>,
        timing: &Timing,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<Summary> {
        let (local, mut own) = links(1);
        let own = own.pop();
        match &self.inner {
            Inner::Single => {
                self.serve_with_own(local, own, job, units, results, journal, timing, progress)
            }
            #[cfg(feature = "mpi")]
            Inner::Mpi(mpi) => self.serve_with_own(
                mpi.master_link(local),
                own,
                job,
                units,
                results,
                journal,
                timing,
                progress,
            ),
        }
    }

    /// The master could not set the campaign up: tells every worker to stop, so that the job
    /// ends cleanly and the error is printed once, by the master.
    pub fn stop_all(&self, timing: &Timing) {
        let mut none: [Option<String>; 0] = [];
        let quiet = Timing {
            fault: None,
            ..*timing
        };
        let _ = self.run_master(&Idle, &[], &mut none, None, &quiet, &mut |_| {});
    }

    /// A worker's part (ranks `1..`): runs units until the master stops it. A lost master is
    /// printed and the job aborted here; a unit that fails is reported by the master, not here.
    pub fn run_worker(&self, job: &dyn Job, timing: &Timing) -> Result<WorkerEnd> {
        match &self.inner {
            Inner::Single => {
                let _ = (job, timing);
                Err(CampaignError::Usage(
                    "a single process has no worker part".into(),
                ))
            }
            #[cfg(feature = "mpi")]
            Inner::Mpi(mpi) => {
                let mut link = mpi.worker_link();
                let r = work(&mut link, job, &self.ctx, timing);
                if let Err(e) = &r {
                    self.fail(e, timing);
                }
                r
            }
        }
    }

    /// Ends this rank's part: under MPI, waits (without spinning, at most the timeout) for
    /// every rank, then finalises MPI.
    pub fn finish(self, timing: &Timing) {
        match self.inner {
            Inner::Single => {}
            #[cfg(feature = "mpi")]
            Inner::Mpi(mpi) => mpi.barrier(timing.timeout),
        }
        let _ = timing;
    }

    #[allow(clippy::too_many_arguments)]
    fn serve_with_own<L: MasterLink>(
        &self,
        mut link: L,
        own: Option<InProcessWorker>,
        job: &dyn Job,
        units: &[Unit],
        results: &mut [Option<String>],
        journal: Option<&Journal>,
        timing: &Timing,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<Summary> {
        let ctx = self.ctx;
        let program = self.program.as_str();
        std::thread::scope(|s| {
            // The own worker's thread makes no MPI call (MPI_THREAD_FUNNELED): of its errors,
            // only the fault hook's `exit` is acted on there.
            let handle = own.map(|mut own| {
                s.spawn(move || {
                    let r = work(&mut own, job, &ctx, timing);
                    if let Err(e) = &r {
                        exit_on_fault(program, e, timing);
                    }
                    r
                })
            });
            let served = serve(&mut link, units, results, journal, timing.timeout, progress);
            if let Err(e) = &served {
                self.fail(e, timing);
            }
            drop(link);
            if let Some(h) = handle {
                let _ = h.join();
            }
            served
        })
    }

    /// What a rank does on an error of its own: the fault hook's `exit` ends the process at
    /// once; under MPI, an error that leaves ranks running or stuck is printed and the job
    /// aborted. Anything else returns, to be reported by the caller.
    fn fail(&self, e: &CampaignError, timing: &Timing) {
        exit_on_fault(&self.program, e, timing);
        #[cfg(feature = "mpi")]
        if let Inner::Mpi(mpi) = &self.inner
            && e.needs_abort()
        {
            eprintln!("{}: {e}", self.program);
            mpi.abort(e.exit_code());
        }
    }
}

/// The fault hook's `exit` ends the process at once, as a killed rank would end.
fn exit_on_fault(program: &str, e: &CampaignError, timing: &Timing) {
    if matches!(e, CampaignError::Fault { .. })
        && timing.fault.is_some_and(|f| f.action == FaultAction::Exit)
    {
        eprintln!("{program}: {e}");
        std::process::exit(FAULT_EXIT_CODE);
    }
}

/// The job of a master that has nothing to hand out.
struct Idle;

impl Job for Idle {
    fn run(&self, _spec: &str, _ctx: &RankContext) -> Result<String, JobError> {
        Err(JobError("no work".into()))
    }
}
