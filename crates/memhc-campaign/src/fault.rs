//! The fault hook: makes one rank die or freeze in the middle of a campaign, for the tests of
//! restart and of lost ranks. Set by the environment variable [`FAULT_VAR`], e.g.
//! `MEMHC_CAMPAIGN_FAULT=exit,rank=2,after=1`: the worker of rank 2 completes one unit, and on
//! receiving its second it stops at once (`exit`: the process exits without a word, as a
//! killed rank would; `hang`: it stops answering, as a frozen node would).

use std::str::FromStr;

use crate::error::CampaignError;

/// The environment variable of the fault hook.
pub const FAULT_VAR: &str = "MEMHC_CAMPAIGN_FAULT";

/// What the faulty rank does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultAction {
    /// Stops at once, mid-unit, without another message (the process exits under MPI).
    Exit,
    /// Stops answering, without exiting.
    Hang,
}

/// A fault: rank `rank` does `action` on receiving a unit after completing `after` units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The rank it strikes.
    pub rank: usize,
    /// Units the rank completes first.
    pub after: usize,
    /// What it does then.
    pub action: FaultAction,
}

impl Fault {
    /// The fault set by [`FAULT_VAR`], if any.
    pub fn from_env() -> Result<Option<Fault>, CampaignError> {
        match std::env::var(FAULT_VAR) {
            Ok(v) if v.trim().is_empty() => Ok(None),
            Ok(v) => v.parse().map(Some),
            Err(_) => Ok(None),
        }
    }

    /// Whether it strikes the worker of `rank` that has completed `done` units.
    pub fn strikes(&self, rank: usize, done: usize) -> bool {
        self.rank == rank && self.after == done
    }
}

impl FromStr for Fault {
    type Err = CampaignError;

    /// `exit,rank=R,after=K` or `hang,rank=R,after=K` (`after` defaults to 0).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let usage = || {
            CampaignError::Usage(format!(
                "{FAULT_VAR}={s}: expected exit,rank=R,after=K or hang,rank=R,after=K"
            ))
        };
        let mut parts = s.split(',').map(str::trim);
        let action = match parts.next() {
            Some("exit") => FaultAction::Exit,
            Some("hang") => FaultAction::Hang,
            _ => return Err(usage()),
        };
        let (mut rank, mut after) = (None, 0);
        for part in parts {
            let (k, v) = part.split_once('=').ok_or_else(usage)?;
            let v: usize = v.trim().parse().map_err(|_| usage())?;
            match k.trim() {
                "rank" => rank = Some(v),
                "after" => after = v,
                _ => return Err(usage()),
            }
        }
        Ok(Fault {
            rank: rank.ok_or_else(usage)?,
            after,
            action,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_parse() {
        let f: Fault = "exit,rank=2,after=1".parse().unwrap();
        assert_eq!(
            f,
            Fault {
                rank: 2,
                after: 1,
                action: FaultAction::Exit
            }
        );
        assert!(f.strikes(2, 1) && !f.strikes(2, 0) && !f.strikes(1, 1));
        let h: Fault = "hang, rank=0".parse().unwrap();
        assert_eq!((h.action, h.after), (FaultAction::Hang, 0));
        for bad in [
            "",
            "boom,rank=1",
            "exit",
            "exit,rank=x",
            "exit,rank=1,when=2",
        ] {
            let e = bad.parse::<Fault>().unwrap_err().to_string();
            assert!(e.starts_with(FAULT_VAR), "{e}");
        }
    }
}
