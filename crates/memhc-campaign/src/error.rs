//! Errors of a campaign: each one line, typed, and sorted into bad input (exit code 2) and
//! failures of the run itself (exit code 1).

use std::path::Path;
use std::time::Duration;

/// A message could not cross between ranks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// The peer's end is gone (an in-process peer dropped its link).
    #[error("rank {0} is gone")]
    Gone(usize),
    /// Bytes that are not a message of this protocol.
    #[error("a malformed message from rank {rank}: {message}")]
    Malformed {
        /// Who sent it.
        rank: usize,
        /// What is wrong with it.
        message: String,
    },
}

/// Why a campaign, or one rank of it, stopped.
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    /// Bad input found before any unit ran: the manifest, an option, a configuration file.
    #[error("{0}")]
    Usage(String),
    /// A file or directory could not be read or written.
    #[error("{place}: {message}")]
    Io {
        /// The path.
        place: String,
        /// What went wrong.
        message: String,
    },
    /// The completion records do not belong to this campaign, or one is unreadable.
    #[error("journal {place}: {message}")]
    Journal {
        /// The record or directory.
        place: String,
        /// What is wrong.
        message: String,
    },
    /// A unit failed on a rank (bad input in its configuration, or a run that failed); the
    /// other ranks finished their units, which are recorded, and stopped.
    #[error("rank {rank}, unit {unit}: {message}")]
    UnitFailed {
        /// The rank that ran it.
        rank: usize,
        /// The unit's key.
        unit: String,
        /// The rank's one-line error.
        message: String,
    },
    /// A rank stopped answering: no message (result or heartbeat) within the timeout.
    #[error("rank {rank} lost: no message for {:.1} s{}", waited.as_secs_f64(), running(unit))]
    RankLost {
        /// The rank.
        rank: usize,
        /// How long the master waited.
        waited: Duration,
        /// The unit it was running, if any.
        unit: Option<String>,
    },
    /// The master (rank 0) stopped answering a worker.
    #[error("rank {rank}: rank 0 lost: no reply for {:.1} s", waited.as_secs_f64())]
    MasterLost {
        /// The worker that noticed.
        rank: usize,
        /// How long it waited.
        waited: Duration,
    },
    /// The fault hook made this rank stop (tests of restart and of lost ranks).
    #[error("rank {rank}: stopped by the fault hook ({what})")]
    Fault {
        /// The rank.
        rank: usize,
        /// The fault.
        what: String,
    },
    /// A message could not be sent or read.
    #[error("rank {rank}: {source}")]
    Transport {
        /// The rank where it happened.
        rank: usize,
        /// What happened.
        source: TransportError,
    },
}

fn running(unit: &Option<String>) -> String {
    unit.as_ref()
        .map_or_else(String::new, |u| format!(" while running unit {u}"))
}

impl CampaignError {
    /// An I/O error at `path`.
    pub fn io(path: &Path, e: impl std::fmt::Display) -> Self {
        CampaignError::Io {
            place: path.display().to_string(),
            message: e.to_string(),
        }
    }

    /// The exit code a command line gives this error: 2 for bad input (the manifest, a
    /// configuration, the journal, a failed unit), 1 for a run that broke (a lost rank).
    pub fn exit_code(&self) -> u8 {
        match self {
            CampaignError::Usage(_)
            | CampaignError::Io { .. }
            | CampaignError::Journal { .. }
            | CampaignError::UnitFailed { .. } => 2,
            CampaignError::RankLost { .. }
            | CampaignError::MasterLost { .. }
            | CampaignError::Fault { .. }
            | CampaignError::Transport { .. } => 1,
        }
    }

    /// Whether other ranks may still be running or stuck, so that an MPI job must be aborted
    /// rather than finalised (a lost rank, a lost master, a broken link).
    pub fn needs_abort(&self) -> bool {
        self.exit_code() == 1
    }
}

/// A campaign result.
pub type Result<T, E = CampaignError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_one_line_and_sorted_by_exit_code() {
        let lost = CampaignError::RankLost {
            rank: 2,
            waited: Duration::from_millis(3000),
            unit: Some("c1.b0001".into()),
        };
        assert_eq!(
            lost.to_string(),
            "rank 2 lost: no message for 3.0 s while running unit c1.b0001"
        );
        assert_eq!(lost.exit_code(), 1);
        assert!(lost.needs_abort());
        let failed = CampaignError::UnitFailed {
            rank: 1,
            unit: "c3.b0000".into(),
            message: "c3.json: graph g7, loop 0: unknown node \"x\"".into(),
        };
        assert_eq!(failed.exit_code(), 2);
        assert!(!failed.needs_abort());
        assert!(
            failed
                .to_string()
                .starts_with("rank 1, unit c3.b0000: c3.json")
        );
    }
}
