//! What a campaign runs: [`Unit`]s, each described by a text the master sends to a worker,
//! and the [`Job`] a worker runs them with. A unit's result is text too (JSON for the jobs of
//! this workspace), which is what crosses back and what the journal records.

/// Where a rank runs: its rank among all, and its place among the ranks of its node (which
/// chooses its GPU: one GPU per rank).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankContext {
    /// This rank (0 is the master, which also runs units).
    pub rank: usize,
    /// Ranks in all.
    pub ranks: usize,
    /// This rank among the ranks of its node.
    pub local_rank: usize,
    /// Ranks on this node.
    pub local_ranks: usize,
}

impl RankContext {
    /// The one rank of a campaign without MPI.
    pub fn single() -> Self {
        RankContext {
            rank: 0,
            ranks: 1,
            local_rank: 0,
            local_ranks: 1,
        }
    }

    /// The GPU this rank uses among `devices` on its node: its node-local rank, wrapped round
    /// when there are more ranks on the node than devices (`devices = 0` is taken as 1).
    pub fn device(&self, devices: usize) -> usize {
        self.local_rank % devices.max(1)
    }
}

/// A unit failed on a worker; the one-line message is what the master reports.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JobError(pub String);

impl JobError {
    /// The first line of `e`'s message.
    pub fn line(e: impl std::fmt::Display) -> Self {
        let text = e.to_string();
        JobError(text.lines().next().unwrap_or("").to_owned())
    }
}

/// What a worker runs. Implementations must be deterministic: the same spec gives the same
/// result, byte for byte, on any rank (that is what makes a restarted campaign identical to an
/// uninterrupted one).
pub trait Job: Sync {
    /// Gets this rank ready (for example: checks that its backend opens). Called once per
    /// worker, before it asks for a unit; a failure is reported once, with the rank.
    fn setup(&self, ctx: &RankContext) -> Result<(), JobError> {
        let _ = ctx;
        Ok(())
    }

    /// Runs the unit described by `spec`; returns its result.
    fn run(&self, spec: &str, ctx: &RankContext) -> Result<String, JobError>;
}

/// One unit of work, as the master knows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Unit {
    /// Its name: unique in the campaign, a file name in the journal (ASCII letters, digits,
    /// `_`, `-`, `.`, not starting with `.`).
    pub key: String,
    /// What to run, for [`Job::run`]. A completion record is reused only for the same spec.
    pub spec: String,
    /// An estimate of its cost (any unit): larger units are handed out first, so that a long
    /// one does not start last. Equal costs keep the given order.
    pub cost: f64,
}

/// Whether `key` may name a unit: 1 to 200 ASCII letters, digits, `_`, `-` and `.`, not
/// starting with `.`.
pub fn is_valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 200
        && !key.starts_with('.')
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_is_the_node_local_rank_wrapped_round() {
        let ctx = RankContext {
            rank: 5,
            ranks: 8,
            local_rank: 1,
            local_ranks: 4,
        };
        assert_eq!(ctx.device(4), 1);
        assert_eq!(ctx.device(1), 0);
        assert_eq!(ctx.device(0), 0);
        assert_eq!(RankContext::single().device(8), 0);
    }

    #[test]
    fn keys_are_file_names() {
        assert!(is_valid_key("cfg1000.b0003"));
        assert!(is_valid_key("p0007"));
        for bad in ["", ".hidden", "a/b", "a b", "ü", &"x".repeat(201)] {
            assert!(!is_valid_key(bad), "{bad}");
        }
        assert_eq!(JobError::line("one\ntwo").0, "one");
    }
}
