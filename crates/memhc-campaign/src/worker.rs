//! A worker's side of the protocol: get ready, ask for a unit, run it while sending heartbeats,
//! send its result, ask again, until told to stop. A worker never waits for the master longer
//! than the timeout: if no answer comes, the master is taken as lost and the worker stops with
//! an error.

use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use crate::error::{CampaignError, Result, TransportError};
use crate::fault::{Fault, FaultAction};
use crate::job::{Job, JobError, RankContext};
use crate::message::Message;
use crate::transport::WorkerLink;

/// How a campaign waits: the timeouts of both sides, the heartbeat, the fault hook.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// The longest a side waits for the other: the master for any message from a busy worker
    /// (its heartbeats or its result), a worker for the master's answer.
    pub timeout: Duration,
    /// How often a busy worker says it is alive (well under `timeout`).
    pub heartbeat: Duration,
    /// The fault hook (tests of restart and of lost ranks).
    pub fault: Option<Fault>,
}

impl Timing {
    /// `timeout`, with heartbeats at a fifth of it (at least every 10 ms, at most every 10 s).
    pub fn with_timeout(timeout: Duration) -> Self {
        let heartbeat = (timeout / 5).clamp(Duration::from_millis(10), Duration::from_secs(10));
        Timing {
            timeout,
            heartbeat,
            fault: None,
        }
    }
}

impl Default for Timing {
    /// A timeout of 120 s.
    fn default() -> Self {
        Timing::with_timeout(Duration::from_secs(120))
    }
}

/// How a worker ended, when it ended as asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkerEnd {
    /// Units it completed.
    pub units: usize,
    /// Whether a unit (or its setup) failed on it (the master reports it).
    pub failed: bool,
}

/// Runs the worker of `link` until the master stops it. Errors: the master lost (no answer
/// within the timeout), a broken link, or the fault hook.
pub fn work<L: WorkerLink>(
    link: &mut L,
    job: &dyn Job,
    ctx: &RankContext,
    timing: &Timing,
) -> Result<WorkerEnd> {
    let rank = link.rank();
    let transport = |source: TransportError| CampaignError::Transport { rank, source };
    let mut end = WorkerEnd {
        units: 0,
        failed: false,
    };
    let first = match job.setup(ctx) {
        Ok(()) => Message::Ready,
        Err(e) => {
            end.failed = true;
            Message::Failed {
                unit: None,
                message: e.0,
            }
        }
    };
    link.send(first).map_err(transport)?;
    loop {
        let message =
            link.recv(timing.timeout)
                .map_err(transport)?
                .ok_or(CampaignError::MasterLost {
                    rank,
                    waited: timing.timeout,
                })?;
        match message {
            Message::Stop => {
                link.send(Message::Bye).map_err(transport)?;
                return Ok(end);
            }
            Message::Assign { unit, key, spec } => {
                if let Some(f) = timing.fault.filter(|f| f.strikes(rank, end.units)) {
                    return Err(strike(link, f, &key));
                }
                let start = Instant::now();
                let reply = match run_with_heartbeats(link, job, &spec, ctx, unit, timing)? {
                    Ok(result) => {
                        end.units += 1;
                        Message::Done {
                            unit,
                            result,
                            seconds: start.elapsed().as_secs_f64(),
                        }
                    }
                    Err(e) => {
                        end.failed = true;
                        Message::Failed {
                            unit: Some(unit),
                            message: e.0,
                        }
                    }
                };
                link.send(reply).map_err(transport)?;
            }
            other => {
                return Err(transport(TransportError::Malformed {
                    rank: 0,
                    message: format!("a worker does not expect {other:?}"),
                }));
            }
        }
    }
}

/// Runs one unit on a thread of its own while this one sends a heartbeat every interval. A
/// panic in the job is the unit's failure, not the worker's.
fn run_with_heartbeats<L: WorkerLink>(
    link: &mut L,
    job: &dyn Job,
    spec: &str,
    ctx: &RankContext,
    unit: usize,
    timing: &Timing,
) -> Result<Result<String, JobError>> {
    let rank = link.rank();
    std::thread::scope(|s| {
        let (tx, rx) = channel();
        let handle = s.spawn(move || {
            let _ = tx.send(job.run(spec, ctx));
        });
        let outcome = loop {
            match rx.recv_timeout(timing.heartbeat) {
                Ok(r) => break r,
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(source) = link.send(Message::Heartbeat { unit }) {
                        // The unit's thread is joined when the scope ends.
                        return Err(CampaignError::Transport { rank, source });
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    break Err(JobError("the unit panicked".into()));
                }
            }
        };
        let _ = handle.join();
        Ok(outcome)
    })
}

/// The fault hook strikes: stop without a word (`exit`), or stop answering until the master is
/// gone (`hang`; under MPI the job is aborted around it).
fn strike<L: WorkerLink>(link: &mut L, f: Fault, key: &str) -> CampaignError {
    let rank = link.rank();
    if f.action == FaultAction::Hang {
        while link.master_alive() {
            let _ = link.recv(Duration::from_millis(20));
        }
    }
    CampaignError::Fault {
        rank,
        what: format!(
            "{} on unit {key} after {} units",
            match f.action {
                FaultAction::Exit => "exit",
                FaultAction::Hang => "hang",
            },
            f.after
        ),
    }
}
