//! A campaign in one process: the master on the calling thread, `ranks` workers on threads of
//! their own, linked in-process. The same scheduling, heartbeats, timeouts, journal and fault
//! hook as over MPI; this is what the tests of the protocol run, and what runs a campaign on a
//! machine without MPI (with one worker).

use crate::error::{CampaignError, Result};
use crate::inprocess::links;
use crate::job::{Job, RankContext, Unit};
use crate::journal::Journal;
use crate::scheduler::{Progress, Summary, serve};
use crate::transport::WorkerLink;
use crate::worker::{Timing, WorkerEnd, work};

/// Runs `units` on `ranks` worker threads (worker `r` is rank `r` of a one-node job) and the
/// master on this thread; see [`serve`] for `results`, `journal` and the errors. When the
/// master fails, the workers are cut off (their links go) and joined before this returns.
pub fn run_local(
    job: &dyn Job,
    units: &[Unit],
    results: &mut [Option<String>],
    journal: Option<&Journal>,
    ranks: usize,
    timing: &Timing,
    progress: &mut dyn FnMut(&Progress),
) -> Result<(Summary, Vec<Result<WorkerEnd>>)> {
    let ranks = ranks.max(1);
    let (mut master, workers) = links(ranks);
    std::thread::scope(|s| {
        let handles: Vec<_> = workers
            .into_iter()
            .map(|mut link| {
                let ctx = RankContext {
                    rank: link.rank(),
                    ranks,
                    local_rank: link.rank(),
                    local_ranks: ranks,
                };
                s.spawn(move || work(&mut link, job, &ctx, timing))
            })
            .collect();
        let served = serve(
            &mut master,
            units,
            results,
            journal,
            timing.timeout,
            progress,
        );
        drop(master);
        let ends = handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(CampaignError::Usage("a worker thread panicked".into()))
                })
            })
            .collect();
        served.map(|summary| (summary, ends))
    })
}
