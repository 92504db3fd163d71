//! Trace replay, for teaching and checking policies: vectors of named, equal-sized objects are
//! made resident one after another with room for `slots` of them, on the runtime itself (on
//! the null backend: no data), and each policy's evictions, hits and misses are counted.
//!
//! The MemHC paper's Fig. 6,
//! `memhc-synth replay --slots 4 --policy lru,pp-lru 'A B C D' 'E F A B'`, prints
//! `lru evictions=4 ...` and `pp-lru evictions=2 ...`.

use std::collections::HashMap;

use memhc_core::{Access, Config, Layout, ObjectId, PolicyKind, Runtime};
use memhc_host::null::NullBackend;

use crate::error::{Error, Result};

/// One policy's counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replayed {
    /// The policy.
    pub policy: PolicyKind,
    /// Objects evicted.
    pub evictions: u64,
    /// Uses that found the object resident.
    pub hits: u64,
    /// Uses that had to bring it in.
    pub misses: u64,
}

impl std::fmt::Display for Replayed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} evictions={} hits={} misses={}",
            self.policy, self.evictions, self.hits, self.misses
        )
    }
}

/// Splits command-line vectors (`"A B C D"`) into names, checking that each is non-empty and
/// names no object twice.
pub fn parse_vectors(args: &[String]) -> Result<Vec<Vec<String>>> {
    if args.is_empty() {
        return Err(Error::Usage(
            "trace needs at least one vector, such as 'A B C D'".into(),
        ));
    }
    args.iter()
        .enumerate()
        .map(|(i, arg)| {
            let names: Vec<String> = arg.split_whitespace().map(str::to_owned).collect();
            if names.is_empty() {
                return Err(Error::Usage(format!("vector {} is empty", i + 1)));
            }
            for (j, n) in names.iter().enumerate() {
                if names[..j].contains(n) {
                    return Err(Error::Usage(format!("vector {} names {n} twice", i + 1)));
                }
            }
            Ok(names)
        })
        .collect()
}

/// Replays `vectors` with room for `slots` objects under each policy.
pub fn replay(
    slots: usize,
    policies: &[PolicyKind],
    vectors: &[Vec<String>],
) -> Result<Vec<Replayed>> {
    if slots == 0 {
        return Err(Error::Usage("--slots must be at least 1".into()));
    }
    let layout = Layout::new(1, 1)?;
    policies
        .iter()
        .map(|&policy| {
            let config = Config::default()
                .with_policy(policy)
                .with_budget(slots * layout.bytes())
                .with_streams(1);
            let mut rt = Runtime::new(NullBackend::new(slots * layout.bytes()), config)?;
            let mut ids: HashMap<&str, ObjectId> = HashMap::new();
            for name in vectors.iter().flatten() {
                if !ids.contains_key(name.as_str()) {
                    ids.insert(name, rt.register(vec![Default::default()], layout)?);
                }
            }
            let future: Vec<ObjectId> = vectors.iter().flatten().map(|n| ids[n.as_str()]).collect();
            rt.set_future(&future)?;
            for v in vectors {
                let members: Vec<ObjectId> = v.iter().map(|n| ids[n.as_str()]).collect();
                rt.begin_vector(&members)?;
                for m in members {
                    rt.launch(0, &[Access::read(m)], |_| Ok(()))?;
                }
            }
            let s = rt.stats();
            Ok(Replayed {
                policy,
                evictions: s.evictions,
                hits: s.hits,
                misses: s.misses,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vectors(v: &[&str]) -> Vec<Vec<String>> {
        parse_vectors(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn fig6() {
        let r = replay(
            4,
            &[PolicyKind::Lru, PolicyKind::PpLru],
            &vectors(&["A B C D", "E F A B"]),
        )
        .unwrap();
        assert_eq!(r[0].to_string(), "lru evictions=4 hits=0 misses=8");
        assert_eq!(r[1].to_string(), "pp-lru evictions=2 hits=2 misses=6");
    }

    #[test]
    fn bad_vectors_are_refused() {
        assert!(parse_vectors(&[]).is_err());
        assert!(parse_vectors(&["A A".to_string()]).is_err());
        assert!(parse_vectors(&["  ".to_string()]).is_err());
        assert!(replay(0, &[PolicyKind::Lru], &vectors(&["A"])).is_err());
    }
}
