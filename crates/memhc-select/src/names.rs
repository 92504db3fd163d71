//! Policies, modes and allocation settings by name, one or a comma-separated list.
//!
//! Each name belongs to the type it names (`PolicyKind::name`, `Mode::name`, `Alloc::name`
//! in the runtime's crates, which say which names exist); this module reads the lists command
//! lines take: names separated by commas, spaces around each ignored, or `all`.
//!
//! * policies: `lru`, `pp-lru`, `random`, `mru`, `car`, `clock-pro`, `belady`; `all` is every
//!   one ([`PolicyKind::ALL`]);
//! * modes: `naive`, `reorg`, `reorg-sync`, `optimal`, `unified`; `all` is the paper's four
//!   explicit ones ([`Mode::ALL`], without `unified`);
//! * allocation settings: `driver`, `handover`, `arena`; `all` is the three ([`Alloc::ALL`]).

use std::str::FromStr;

use memhc_core::{Alloc, Mode, PolicyKind};

use crate::error::{Result, SelectError};

/// One eviction policy by name.
pub fn policy(name: &str) -> Result<PolicyKind> {
    one(name)
}

/// One mode by name.
pub fn mode(name: &str) -> Result<Mode> {
    one(name)
}

/// One allocation setting by name.
pub fn alloc(name: &str) -> Result<Alloc> {
    one(name)
}

/// The policies of a list, or of `all`.
pub fn policies(list: &str) -> Result<Vec<PolicyKind>> {
    many(list, &PolicyKind::ALL)
}

/// The modes of a list, or of `all` (naive, reorg, reorg-sync, optimal).
pub fn modes(list: &str) -> Result<Vec<Mode>> {
    many(list, &Mode::ALL)
}

/// The allocation settings of a list, or of `all`.
pub fn allocs(list: &str) -> Result<Vec<Alloc>> {
    many(list, &Alloc::ALL)
}

fn one<T: FromStr>(name: &str) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    name.trim()
        .parse()
        .map_err(|e: T::Err| SelectError::UnknownName(e.to_string()))
}

fn many<T: FromStr + Copy>(list: &str, all: &[T]) -> Result<Vec<T>>
where
    T::Err: std::fmt::Display,
{
    if list.trim() == "all" {
        return Ok(all.to_vec());
    }
    list.split(',').map(one).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_names_and_lists() {
        assert_eq!(policy("belady"), Ok(PolicyKind::Belady));
        assert_eq!(policy(" pp-lru "), Ok(PolicyKind::PpLru));
        assert_eq!(mode("reorg-sync"), Ok(Mode::ReorgSync));
        assert_eq!(mode("unified"), Ok(Mode::Unified));
        assert_eq!(alloc("arena"), Ok(Alloc::Arena));
        assert_eq!(
            policies("lru, belady"),
            Ok(vec![PolicyKind::Lru, PolicyKind::Belady])
        );
        assert_eq!(policies("all").map(|p| p.len()), Ok(7));
        assert_eq!(
            modes("all"),
            Ok(vec![
                Mode::Naive,
                Mode::Reorg,
                Mode::ReorgSync,
                Mode::Optimal
            ])
        );
        assert_eq!(
            modes("optimal,unified"),
            Ok(vec![Mode::Optimal, Mode::Unified])
        );
        assert_eq!(
            allocs("all"),
            Ok(vec![Alloc::Driver, Alloc::Handover, Alloc::Arena])
        );
    }

    #[test]
    fn unknown_names_say_which_exist() {
        let text = |r: Result<Vec<PolicyKind>>| r.err().map(|e| e.to_string());
        assert!(
            text(policies("lru,lfu")).is_some_and(|t| t.contains("unknown eviction policy 'lfu'"))
        );
        let m = modes("fast").err().map(|e| e.to_string());
        assert!(m.is_some_and(|t| t.contains("unknown mode 'fast'")));
        let a = allocs("slab").err().map(|e| e.to_string());
        assert!(a.is_some_and(|t| t.contains("unknown allocation mode 'slab'")));
        assert!(policies("").is_err() && modes("optimal,").is_err());
    }
}
