//! # memhc-policy
//!
//! Eviction policies: one trait, one file per policy, chosen at run time by name. This crate
//! knows nothing of devices, buffers or bytes: a policy orders [`ObjectId`]s and, when memory is
//! short, names the one to evict. The runtime in `memhc-core` does the rest.
//!
//! The runtime keeps a policy informed of every change to the set of resident objects and
//! asks it for a victim when an allocation does not fit:
//!
//! | call | when |
//! |------|------|
//! | [`on_register`](EvictionPolicy::on_register) | an object was made (not resident yet): room for it in per-object tables |
//! | [`on_insert`](EvictionPolicy::on_insert) | an object became resident (a miss) |
//! | [`on_hit`](EvictionPolicy::on_hit) | a resident object was used again (a hit) |
//! | [`on_prefetch`](EvictionPolicy::on_prefetch) | an object became resident ahead of its use (a prefetch; its use comes later as a hit) |
//! | [`choose_victim`](EvictionPolicy::choose_victim) | memory is short: pick an evictable resident object |
//! | [`on_evict`](EvictionPolicy::on_evict) | the object just chosen has left the device |
//! | [`on_remove`](EvictionPolicy::on_remove) | a resident object left for another reason (released, overwritten on the host, dropped after use when caching is off) |
//! | [`on_synced`](EvictionPolicy::on_synced) | a resident object's device copy was copied to the host: it is no longer dirty |
//! | [`begin_vector`](EvictionPolicy::begin_vector) | a vector of contractions is about to run; its members that are resident are passed (pre-protected LRU) |
//! | [`set_future`](EvictionPolicy::set_future) | the whole future access sequence is known (Belady) |
//!
//! `choose_victim` must only return an object that is resident and that
//! [`ResidentView::is_evictable`] accepts; if it returns one, the runtime evicts it and then
//! calls `on_evict`, unless the eviction fails, in which case the object stays resident and the
//! policy hears nothing more about it. [`EvictionPolicy::resident`] lists what the policy
//! believes is resident, which `Runtime::audit` compares with the element cache.
//!
//! Policies count objects, not bytes, as the paper's do.
//!
//! ## Adding a policy
//!
//! Write one file implementing [`EvictionPolicy`], add a [`PolicyKind`] variant with its name
//! and its arm in [`PolicyKind::build`], and add it to [`PolicyKind::ALL`]: every runtime
//! property test, fault test and `memhc-synth --policy all` then exercises it, and the tests
//! check it never beats [`Belady`].

#![forbid(unsafe_code)]

mod belady;
mod car;
mod clock_pro;
mod id;
mod lru;
mod pp_lru;
mod random;
mod recency;

use std::fmt;
use std::str::FromStr;

pub use belady::Belady;
pub use car::Car;
pub use clock_pro::ClockPro;
pub use id::{IdHasher, IdMap, IdSet, IdTable, ObjectId};
pub use lru::{ByRecency, LeastRecent, Lru, MostRecent, Mru, VictimEnd};
pub use pp_lru::PreProtectedLru;
pub use random::RandomPolicy;

/// What the runtime tells a policy about a resident object when the policy picks a victim.
pub trait ResidentView {
    /// Whether the object may be evicted now (false while a launch is using it).
    fn is_evictable(&self, id: ObjectId) -> bool;
    /// Whether evicting the object requires writing it back to the host first.
    fn is_dirty(&self, id: ObjectId) -> bool;
}

/// An eviction policy. See the [module documentation](self) for the protocol.
pub trait EvictionPolicy: Send + fmt::Debug {
    /// The policy's name, as [`PolicyKind`] parses it.
    fn name(&self) -> &'static str;

    /// `id` was just made (registered or created) and is not resident yet. A policy with a
    /// per-object table makes room for it here, so that the launch that makes it resident
    /// grows no table. The provided version does nothing.
    fn on_register(&mut self, id: ObjectId) {
        let _ = id;
    }

    /// `id` became resident.
    fn on_insert(&mut self, id: ObjectId);

    /// `id` was resident and was used again.
    fn on_hit(&mut self, id: ObjectId);

    /// `id` became resident ahead of its next use (a prefetch): unlike
    /// [`on_insert`](EvictionPolicy::on_insert), no use of the future is consumed; the use
    /// itself comes later, as [`on_hit`](EvictionPolicy::on_hit). The provided version treats
    /// it as an insertion.
    fn on_prefetch(&mut self, id: ObjectId) {
        self.on_insert(id);
    }

    /// `id`, returned by the last `choose_victim`, has been evicted.
    fn on_evict(&mut self, id: ObjectId);

    /// `id` stopped being resident for a reason other than eviction; forget it.
    fn on_remove(&mut self, id: ObjectId);

    /// `id`, resident, was dirty and has been copied to the host: evicting it no longer needs a
    /// write-back. (An object becomes dirty only through a launch that uses it, which the
    /// policy hears of as `on_insert` or `on_hit`.)
    fn on_synced(&mut self, id: ObjectId) {
        let _ = id;
    }

    /// Picks a resident object to evict among those `view` says are evictable, or `None` if
    /// there is none.
    fn choose_victim(&mut self, view: &dyn ResidentView) -> Option<ObjectId>;

    /// A vector of independent contractions is about to run; `resident_members` are its
    /// objects that are resident now.
    fn begin_vector(&mut self, resident_members: &[ObjectId]) {
        let _ = resident_members;
    }

    /// A hint that `ids` are used or removed soon: reads, in one pass, what that will read of
    /// the policy's own tables, so that on a long queue the cache misses of objects drawn from
    /// its whole history overlap instead of each waiting on the one before. Changes nothing;
    /// returns a value that depends on what it read, only so that the reads are kept. The
    /// default reads nothing.
    fn touch(&self, ids: &[ObjectId]) -> u64 {
        let _ = ids;
        0
    }

    /// The sequence of object uses to come, in order (each launch's objects in its access
    /// order). Every later `on_insert` / `on_hit` consumes the next use of that object.
    fn set_future(&mut self, accesses: &[ObjectId]) {
        let _ = accesses;
    }

    /// The objects the policy believes are resident, in any order.
    fn resident(&self) -> Vec<ObjectId>;
}

/// The policies the runtime can be built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyKind {
    /// Least recently used (the paper's Algorithm 1).
    Lru,
    /// Pre-protected LRU (the paper's Algorithm 2).
    PpLru,
    /// A uniformly random resident object (seeded).
    Random,
    /// Most recently used.
    Mru,
    /// Clock with adaptive replacement (Bansal and Modha, 2004).
    Car,
    /// CLOCK-Pro (Jiang, Chen and Zhang, 2005).
    ClockPro,
    /// Belady's MIN on the known future: evict the object used furthest ahead.
    Belady,
}

impl PolicyKind {
    /// Every policy, in the order reports list them.
    pub const ALL: [PolicyKind; 7] = [
        PolicyKind::Lru,
        PolicyKind::PpLru,
        PolicyKind::Random,
        PolicyKind::Mru,
        PolicyKind::Car,
        PolicyKind::ClockPro,
        PolicyKind::Belady,
    ];

    /// The name used on command lines and in reports.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Lru => "lru",
            PolicyKind::PpLru => "pp-lru",
            PolicyKind::Random => "random",
            PolicyKind::Mru => "mru",
            PolicyKind::Car => "car",
            PolicyKind::ClockPro => "clock-pro",
            PolicyKind::Belady => "belady",
        }
    }

    /// A new policy of this kind. `seed` drives the random policy and nothing else.
    pub fn build(self, seed: u64) -> Box<dyn EvictionPolicy> {
        match self {
            PolicyKind::Lru => Box::new(Lru::new()),
            PolicyKind::PpLru => Box::new(PreProtectedLru::new()),
            PolicyKind::Random => Box::new(RandomPolicy::new(seed)),
            PolicyKind::Mru => Box::new(Mru::new()),
            PolicyKind::Car => Box::new(Car::new()),
            PolicyKind::ClockPro => Box::new(ClockPro::new()),
            PolicyKind::Belady => Box::new(Belady::new()),
        }
    }
}

impl fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A policy name that is not one of [`PolicyKind::ALL`]; holds the name given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown eviction policy '{0}' (known: lru, pp-lru, random, mru, car, clock-pro, belady)")]
pub struct UnknownPolicy(pub String);

impl FromStr for PolicyKind {
    type Err = UnknownPolicy;

    fn from_str(s: &str) -> Result<Self, UnknownPolicy> {
        PolicyKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownPolicy(s.to_owned()))
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! A tiny cache simulator for unit tests of single policies: equal-sized objects, `slots`
    //! of them fit, every access is a read, nothing is ever pinned or dirty.

    use super::*;
    use std::collections::HashSet;

    pub struct Everything;

    impl ResidentView for Everything {
        fn is_evictable(&self, _: ObjectId) -> bool {
            true
        }
        fn is_dirty(&self, _: ObjectId) -> bool {
            false
        }
    }

    /// Result of a simulation: hits, misses, and the evicted objects in order.
    #[derive(Debug, Default, PartialEq, Eq)]
    pub struct Outcome {
        pub hits: usize,
        pub misses: usize,
        pub evicted: Vec<u64>,
    }

    /// Runs `vectors` (lists of object numbers) through `policy` with room for `slots`.
    pub fn simulate(policy: &mut dyn EvictionPolicy, slots: usize, vectors: &[&[u64]]) -> Outcome {
        let future: Vec<ObjectId> = vectors
            .iter()
            .flat_map(|v| v.iter().map(|&i| ObjectId(i)))
            .collect();
        // Objects are made before they are used, as a runtime makes them: every one is
        // announced first (in order of first use, each once).
        let mut made = HashSet::new();
        for &id in &future {
            if made.insert(id) {
                policy.on_register(id);
            }
        }
        policy.set_future(&future);
        let mut resident = HashSet::new();
        let mut out = Outcome::default();
        for v in vectors {
            let members: Vec<_> = v
                .iter()
                .map(|&i| ObjectId(i))
                .filter(|id| resident.contains(id))
                .collect();
            policy.begin_vector(&members);
            for &i in v.iter() {
                let id = ObjectId(i);
                if resident.contains(&id) {
                    out.hits += 1;
                    policy.on_hit(id);
                    continue;
                }
                out.misses += 1;
                while resident.len() >= slots {
                    let victim = policy.choose_victim(&Everything).expect("a victim");
                    assert!(resident.remove(&victim), "victim {victim} is not resident");
                    policy.on_evict(victim);
                    out.evicted.push(victim.0);
                }
                resident.insert(id);
                policy.on_insert(id);
                let mut tracked = policy.resident();
                tracked.sort();
                let mut actual: Vec<_> = resident.iter().copied().collect();
                actual.sort();
                assert_eq!(tracked, actual, "policy lost track of the resident set");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::testing::simulate;
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in PolicyKind::ALL {
            assert_eq!(k.name().parse::<PolicyKind>().unwrap(), k);
            assert_eq!(k.build(1).name(), k.name());
        }
        assert!(matches!(
            "lfu".parse::<PolicyKind>(),
            Err(UnknownPolicy(s)) if s == "lfu"
        ));
    }

    /// The paper's Fig. 6: room for four; (A,B,C,D) then (E,F,A,B).
    #[test]
    fn fig6_at_policy_level() {
        let (a, b, c, d, e, f) = (1, 2, 3, 4, 5, 6);
        let first: &[u64] = &[a, b, c, d];
        let lru = simulate(&mut Lru::new(), 4, &[first, &[e, f, a, b]]);
        assert_eq!(lru.evicted, vec![a, b, c, d]);
        let pp = simulate(&mut PreProtectedLru::new(), 4, &[first, &[e, f, a, b]]);
        assert_eq!(pp.evicted, vec![c, d]);
        let pp_c = simulate(&mut PreProtectedLru::new(), 4, &[first, &[e, f, c, d]]);
        assert_eq!(pp_c.evicted, vec![a, b]);
    }

    /// Every policy keeps its resident list exact and always finds a victim.
    #[test]
    fn every_policy_survives_a_long_random_trace() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(42);
        let vectors: Vec<Vec<u64>> = (0..200)
            .map(|_| {
                let mut v: Vec<u64> = (0..4).map(|_| rng.random_range(0..24)).collect();
                v.sort();
                v.dedup();
                v
            })
            .collect();
        let refs: Vec<&[u64]> = vectors.iter().map(|v| v.as_slice()).collect();
        let distinct = {
            let mut all: Vec<u64> = vectors.iter().flatten().copied().collect();
            all.sort();
            all.dedup();
            all.len()
        };
        let belady = simulate(&mut Belady::new(), 6, &refs).misses;
        for k in PolicyKind::ALL {
            let out = simulate(k.build(3).as_mut(), 6, &refs);
            assert_eq!(
                out.hits + out.misses,
                vectors.iter().map(Vec::len).sum::<usize>()
            );
            assert!(
                out.misses >= distinct,
                "{k}: fewer misses than distinct objects"
            );
            assert!(
                belady <= out.misses,
                "{k}: {} misses, belady {belady}",
                out.misses
            );
        }
    }
}
