//! A model of the runtime's eviction on a workload of equal-sized objects, for studying
//! policies from the inside (`docs/policies.md`; the `policy_probe` example prints it).
//!
//! The model replays a workload's object uses through any [`EvictionPolicy`], with room for
//! `slots` objects, the way the runner drives the runtime: `begin_vector` announces each
//! vector's resident inputs; a contraction's three objects (`a`, `b`, the output) are pinned
//! before the first is acquired; a miss evicts only when every slot holds a resident object
//! (released buffers wait in the free pool, which is drained before anything is evicted, so
//! they never cause an eviction); outputs are dirty until evicted (then written back);
//! every node is released after the vector of its last use, results only at the end. For
//! workloads whose nodes all have one size it makes exactly the runtime's decisions (the
//! tests check its counts against dry runs on the null backend), and it sees what the
//! runtime's statistics do not: which victims the current vector still needs, which are
//! dead, and where the vector's members sit in recency when a victim is chosen.

use std::collections::{BTreeMap, HashMap, HashSet};

use memhc_core::ObjectId;
use memhc_core::policy::{EvictionPolicy, ResidentView};

use crate::error::{Error, Result};
use crate::workload::Workload;

/// A workload's object uses, as ids numbered the way the runner creates them (the nodes in
/// order, then the outputs in queue order), so that policies that break ties by id decide
/// as they do in the runtime.
#[derive(Clone, Debug)]
pub struct UseTrace {
    /// Per vector, per contraction: `[a, b, output]`.
    pub vectors: Vec<Vec<[ObjectId; 3]>>,
    /// The nodes released after each vector.
    pub releases: Vec<Vec<ObjectId>>,
    /// The results: never used after they are produced, read at the end.
    pub results: HashSet<ObjectId>,
}

impl UseTrace {
    /// The uses of `w`. Fails on a workload that does not analyse, or whose contractions
    /// name an `a` or `b` equal to their output.
    pub fn new(w: &Workload) -> Result<Self> {
        let analysis = w.analyse()?;
        let mut ids: HashMap<&str, ObjectId> = HashMap::new();
        let names = w.nodes.iter().map(|n| n.id.as_str());
        for name in names.chain(w.vectors.iter().flatten().map(|c| c.out.as_str())) {
            let next = ObjectId::from_index(ids.len() as u64);
            ids.entry(name).or_insert(next);
        }
        let id = |name: &str| {
            ids.get(name)
                .copied()
                .ok_or_else(|| Error::Usage(format!("internal: no id for \"{name}\"")))
        };
        let mut vectors = Vec::with_capacity(w.vectors.len());
        let mut releases = Vec::with_capacity(w.vectors.len());
        for (v, vector) in w.vectors.iter().enumerate() {
            let mut list = Vec::with_capacity(vector.len());
            for c in vector {
                let uses = [id(&c.a)?, id(&c.b)?, id(&c.out)?];
                if uses[2] == uses[0] || uses[2] == uses[1] || uses[0] == uses[1] {
                    return Err(Error::Usage(format!(
                        "the model needs three distinct objects per contraction ({})",
                        c.out
                    )));
                }
                list.push(uses);
            }
            vectors.push(list);
            let released = analysis.release_after_vector(v);
            releases.push(
                released
                    .iter()
                    .map(|&i| {
                        analysis
                            .id(i)
                            .ok_or_else(|| Error::Usage(format!("internal: no node at index {i}")))
                    })
                    .map(|name| name.and_then(id))
                    .collect::<Result<_>>()?,
            );
        }
        let results = w.results.iter().map(|n| id(n)).collect::<Result<_>>()?;
        Ok(UseTrace {
            vectors,
            releases,
            results,
        })
    }

    /// The compulsory misses: the distinct objects used (every one misses once).
    pub fn compulsory(&self) -> u64 {
        let distinct: HashSet<ObjectId> =
            self.vectors.iter().flatten().flatten().copied().collect();
        distinct.len() as u64
    }

    /// The use sequence, as the runner gives it to `set_future`.
    pub fn future(&self) -> Vec<ObjectId> {
        self.vectors.iter().flatten().flatten().copied().collect()
    }

    /// How many vectors back each repeated input's previous use was (0 never happens: no
    /// node appears twice in a vector), in buckets `1`, `2..=4`, `5..=16`, `17..=64`, `> 64`.
    pub fn reuse_gaps(&self) -> [u64; 5] {
        let mut last: HashMap<ObjectId, usize> = HashMap::new();
        let mut counts = [0u64; 5];
        for (v, vector) in self.vectors.iter().enumerate() {
            for c in vector {
                for x in [c[0], c[1]] {
                    if let Some(&u) = last.get(&x) {
                        counts[match v - u {
                            0 | 1 => 0,
                            2..=4 => 1,
                            5..=16 => 2,
                            17..=64 => 3,
                            _ => 4,
                        }] += 1;
                    }
                }
            }
            for &x in vector.iter().flatten() {
                last.insert(x, v);
            }
        }
        counts
    }
}

/// What a policy did in the model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelRun {
    /// Uses that found the object resident.
    pub hits: u64,
    /// Uses that brought it in (outputs' first writes included).
    pub misses: u64,
    /// The victims, in order.
    pub victims: Vec<ObjectId>,
    /// Victims the current vector still had to use (the redundant evictions of the MemHC
    /// paper's Fig. 6, which pre-protection is for).
    pub near: u64,
    /// Victims never used again (results waiting for the final read).
    pub dead: u64,
    /// For every victim selection, where the least recently used of the current vector's
    /// still-pending resident inputs sat in recency, counted from the least recently used
    /// end: rank 0 (it is LRU's victim), 1..=3, 4..=15, >= 16, or none resident.
    pub pending_rank: [u64; 5],
}

impl ModelRun {
    /// Number of evictions.
    pub fn evictions(&self) -> u64 {
        self.victims.len() as u64
    }
}

/// Objects ordered by last use, least recent first.
#[derive(Default)]
struct Recency {
    clock: u64,
    by_time: BTreeMap<u64, ObjectId>,
    time_of: HashMap<ObjectId, u64>,
}

impl Recency {
    fn touch(&mut self, id: ObjectId) {
        self.remove(id);
        self.clock += 1;
        self.by_time.insert(self.clock, id);
        self.time_of.insert(id, self.clock);
    }

    fn remove(&mut self, id: ObjectId) {
        if let Some(t) = self.time_of.remove(&id) {
            self.by_time.remove(&t);
        }
    }

    /// Rank from the least recent end of the first object `wanted` accepts.
    fn first_rank(&self, wanted: impl Fn(ObjectId) -> bool) -> Option<usize> {
        self.by_time.values().position(|&id| wanted(id))
    }
}

/// The objects in use and the dirty ones, as the runtime shows them to a policy.
struct View<'a> {
    pinned: &'a HashSet<ObjectId>,
    dirty: &'a HashSet<ObjectId>,
}

impl ResidentView for View<'_> {
    fn is_evictable(&self, id: ObjectId) -> bool {
        !self.pinned.contains(&id)
    }

    fn is_dirty(&self, id: ObjectId) -> bool {
        self.dirty.contains(&id)
    }
}

/// Replays `t` through `policy` (fresh) with room for `slots` objects. Fails if the policy
/// finds no victim while one exists or names one that is not evictable, or if a
/// contraction's three objects do not fit.
pub fn replay_model(
    t: &UseTrace,
    policy: &mut dyn EvictionPolicy,
    slots: usize,
) -> Result<ModelRun> {
    if slots < 3 {
        return Err(Error::Usage(format!(
            "{slots} slots cannot hold one contraction's three objects"
        )));
    }
    policy.set_future(&t.future());
    let mut resident: HashSet<ObjectId> = HashSet::new();
    let mut dirty: HashSet<ObjectId> = HashSet::new();
    let mut recency = Recency::default();
    let mut run = ModelRun::default();
    for (v, vector) in t.vectors.iter().enumerate() {
        let mut pending: HashSet<ObjectId> = vector.iter().flat_map(|c| [c[0], c[1]]).collect();
        let announced: Vec<ObjectId> = vector
            .iter()
            .flat_map(|c| [c[0], c[1]])
            .filter(|m| resident.contains(m))
            .collect();
        policy.begin_vector(&announced);
        for c in vector {
            let pinned: HashSet<ObjectId> = c.iter().copied().collect();
            for &x in c {
                pending.remove(&x);
                if resident.contains(&x) {
                    run.hits += 1;
                    policy.on_hit(x);
                    recency.touch(x);
                    continue;
                }
                run.misses += 1;
                while resident.len() >= slots {
                    let rank = recency.first_rank(|id| pending.contains(&id));
                    run.pending_rank[match rank {
                        Some(0) => 0,
                        Some(1..=3) => 1,
                        Some(4..=15) => 2,
                        Some(_) => 3,
                        None => 4,
                    }] += 1;
                    let view = View {
                        pinned: &pinned,
                        dirty: &dirty,
                    };
                    let victim = policy.choose_victim(&view).ok_or_else(|| {
                        Error::Usage(format!("{}: no victim in vector {v}", policy.name()))
                    })?;
                    if pinned.contains(&victim) || !resident.remove(&victim) {
                        return Err(Error::Usage(format!(
                            "{}: {victim} is not an evictable resident object",
                            policy.name()
                        )));
                    }
                    policy.on_evict(victim);
                    recency.remove(victim);
                    dirty.remove(&victim); // written back first
                    run.victims.push(victim);
                    run.near += u64::from(pending.contains(&victim));
                    run.dead += u64::from(t.results.contains(&victim));
                }
                resident.insert(x);
                policy.on_insert(x);
                recency.touch(x);
            }
            dirty.insert(c[2]);
        }
        for &r in t.releases.get(v).into_iter().flatten() {
            dirty.remove(&r);
            if resident.remove(&r) {
                policy.on_remove(r);
                recency.remove(r);
            }
        }
    }
    Ok(run)
}
