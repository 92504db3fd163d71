//! The master's side of the protocol: hand out units dynamically, one at a time to whichever
//! worker asks, largest estimated cost first, so that units of unequal cost still balance;
//! record each result in the journal the moment it arrives; stop everyone when the work is
//! done or a unit fails; and never wait for a worker longer than the timeout.
//!
//! When a unit fails (bad input in its configuration), the failure is kept (the first one
//! only, with its rank), no new unit is handed out, the units already running finish and are
//! recorded, and every worker is stopped: nothing computed is lost, and the error is reported
//! once. When a worker goes silent for longer than the timeout (no heartbeat, no result), it is
//! lost: [`serve`] returns at once with [`CampaignError::RankLost`], and the caller must tear
//! the job down (`MPI_Abort`), since the lost rank cannot be asked to stop.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::error::{CampaignError, Result, TransportError};
use crate::job::Unit;
use crate::journal::Journal;
use crate::message::Message;
use crate::transport::MasterLink;

/// One unit done, as reported to the progress callback.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress<'a> {
    /// Units done, including those found in the journal.
    pub done: usize,
    /// Units in all.
    pub total: usize,
    /// The unit just done.
    pub key: &'a str,
    /// The rank that ran it.
    pub rank: usize,
    /// Seconds it took there.
    pub seconds: f64,
}

/// What one rank did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RankSummary {
    /// Units it completed.
    pub units: usize,
    /// Seconds it spent on them.
    pub busy_seconds: f64,
}

/// What a campaign did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Units run now.
    pub ran: usize,
    /// Units found complete in the journal and skipped.
    pub skipped: usize,
    /// Per rank.
    pub ranks: Vec<RankSummary>,
    /// Wall time of the scheduling loop, seconds.
    pub wall_seconds: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// Not heard from yet.
    Starting,
    /// Running a unit.
    Busy(usize),
    /// Told to stop; its `Bye` not yet in.
    Stopping,
    /// Gone, as asked.
    Stopped,
}

struct Peer {
    state: State,
    last: Instant,
}

/// Runs the master until every worker has stopped. `results[i]` holds the result of unit `i`
/// when it is complete (on entry: those found in the journal, which are not run again); each
/// new result is recorded in `journal` (if any) before the next unit goes out to its worker.
pub fn serve<L: MasterLink>(
    link: &mut L,
    units: &[Unit],
    results: &mut [Option<String>],
    journal: Option<&Journal>,
    timeout: Duration,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Summary> {
    let start = Instant::now();
    if results.len() != units.len() {
        return Err(CampaignError::Usage(format!(
            "{} results for {} units",
            results.len(),
            units.len()
        )));
    }
    let mut keys = std::collections::HashSet::new();
    if let Some(u) = units.iter().find(|u| !keys.insert(u.key.as_str())) {
        return Err(CampaignError::Usage(format!(
            "two units are named {}",
            u.key
        )));
    }
    let n = link.workers();
    let mut queue = pending(units, results);
    let mut summary = Summary {
        skipped: units.len() - queue.len(),
        ranks: vec![RankSummary::default(); n],
        ..Summary::default()
    };
    let mut done = summary.skipped;
    let mut peers: Vec<Peer> = (0..n)
        .map(|_| Peer {
            state: State::Starting,
            last: start,
        })
        .collect();
    let mut failure: Option<CampaignError> = None;
    let mut journal = journal;
    let transport = |source: TransportError| CampaignError::Transport { rank: 0, source };

    while peers.iter().any(|p| p.state != State::Stopped) {
        let now = Instant::now();
        let mut wait = timeout;
        for (rank, p) in peers.iter().enumerate() {
            if p.state == State::Stopped {
                continue;
            }
            let silent = now.saturating_duration_since(p.last);
            if silent >= timeout {
                let unit = match p.state {
                    State::Busy(u) => Some(units[u].key.clone()),
                    _ => None,
                };
                return Err(CampaignError::RankLost {
                    rank,
                    waited: silent,
                    unit,
                });
            }
            wait = wait.min(timeout - silent);
        }
        let Some((rank, message)) = link.recv(wait).map_err(transport)? else {
            continue;
        };
        let Some(peer) = peers.get_mut(rank) else {
            return Err(transport(TransportError::Malformed {
                rank,
                message: format!("no such rank (there are {n})"),
            }));
        };
        peer.last = Instant::now();
        let state = peer.state;
        match message {
            Message::Heartbeat { .. } => continue,
            Message::Bye => {
                peer.state = State::Stopped;
                continue;
            }
            Message::Ready => {}
            Message::Done {
                unit,
                result,
                seconds,
            } => {
                if state != State::Busy(unit) {
                    return Err(unexpected(rank, "a result it was not asked for"));
                }
                if let Some(j) = journal
                    && let Err(e) = j.record(&units[unit], &result, rank, seconds)
                {
                    // The journal cannot be written: stop handing out work, finish as for a
                    // failed unit (everything running is still received), and write no more.
                    journal = None;
                    failure.get_or_insert(e);
                    queue.clear();
                }
                results[unit] = Some(result);
                done += 1;
                summary.ran += 1;
                summary.ranks[rank].units += 1;
                summary.ranks[rank].busy_seconds += seconds;
                progress(&Progress {
                    done,
                    total: units.len(),
                    key: &units[unit].key,
                    rank,
                    seconds,
                });
            }
            Message::Failed { unit, message } => {
                if failure.is_none() {
                    let key = match unit {
                        Some(u) if state == State::Busy(u) => units[u].key.clone(),
                        Some(_) => return Err(unexpected(rank, "a failure of a unit not its own")),
                        None => "(setup)".to_owned(),
                    };
                    failure = Some(CampaignError::UnitFailed {
                        rank,
                        unit: key,
                        message,
                    });
                }
                queue.clear();
            }
            other => return Err(unexpected(rank, &format!("{other:?}"))),
        }
        // The worker asks for work (Ready, Done, Failed): the next unit, or stop.
        let next = match queue.pop_front() {
            Some(u) if failure.is_none() => Message::Assign {
                unit: u,
                key: units[u].key.clone(),
                spec: units[u].spec.clone(),
            },
            _ => Message::Stop,
        };
        peers[rank].state = match &next {
            Message::Assign { unit, .. } => State::Busy(*unit),
            _ => State::Stopping,
        };
        link.send(rank, next).map_err(transport)?;
    }
    summary.wall_seconds = start.elapsed().as_secs_f64();
    match failure {
        Some(e) => Err(e),
        None => Ok(summary),
    }
}

/// Tells every worker to stop without giving it any work (the master could not set up the
/// campaign), and waits, within the timeout, for each to say goodbye.
pub fn stop_all<L: MasterLink>(link: &mut L, timeout: Duration) -> Result<()> {
    let mut none: [Option<String>; 0] = [];
    match serve(link, &[], &mut none, None, timeout, &mut |_| {}) {
        Ok(_) | Err(CampaignError::UnitFailed { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

/// The units still to run, largest cost first (equal costs in their given order).
fn pending(units: &[Unit], results: &[Option<String>]) -> VecDeque<usize> {
    let mut todo: Vec<usize> = (0..units.len())
        .filter(|&i| results.get(i).is_none_or(Option::is_none))
        .collect();
    todo.sort_by(|&a, &b| units[b].cost.total_cmp(&units[a].cost));
    todo.into()
}

fn unexpected(rank: usize, what: &str) -> CampaignError {
    CampaignError::Transport {
        rank: 0,
        source: TransportError::Malformed {
            rank,
            message: format!("unexpected from a worker: {what}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(key: &str, cost: f64) -> Unit {
        Unit {
            key: key.into(),
            spec: key.into(),
            cost,
        }
    }

    #[test]
    fn pending_units_go_largest_first_and_skip_completed_ones() {
        let units = [
            unit("a", 1.0),
            unit("b", 5.0),
            unit("c", 1.0),
            unit("d", 5.0),
        ];
        let results = [None, None, Some("done".into()), None];
        assert_eq!(pending(&units, &results), VecDeque::from([1, 3, 0]));
    }

    #[test]
    fn units_must_have_distinct_names_and_a_result_slot_each() {
        let (mut master, _workers) = crate::inprocess::links(1);
        let t = Duration::from_millis(10);
        let twice = [unit("a", 1.0), unit("a", 2.0)];
        let e = serve(&mut master, &twice, &mut [None, None], None, t, &mut |_| {});
        assert_eq!(e.unwrap_err().to_string(), "two units are named a");
        let e = serve(&mut master, &twice[..1], &mut [], None, t, &mut |_| {});
        assert!(e.unwrap_err().to_string().contains("0 results for 1 units"));
    }
}
