//! Why does pre-protected LRU help or not? A probe of the eviction policies on the synthetic
//! workload, used by `docs/policies.md`.
//!
//! It generates the workload as `memhc-synth` does, then replays its object uses through each
//! policy in a model of the runtime with room for `slots` equal-sized objects: the three
//! objects of a contraction are pinned while it acquires them, `begin_vector` announces each
//! vector's resident inputs, nodes are released after their last use (results are kept to the
//! end), and a miss evicts only when every slot holds a resident object. Each policy's misses
//! are checked against a dry run of the real runtime on the null backend at the same budget,
//! so the model is exact; what it adds is a look inside:
//!
//! * `near`: evictions of an object the current vector still has to use (the redundant
//!   evictions of the paper's Fig. 6, which pre-protection exists to avoid);
//! * `dead`: evictions of a result, an object never used again (only its final read is left);
//! * `tail`: where the oldest resident member of the current vector that is still to be used
//!   sits in recency when a victim is chosen, counted from the least recently used end
//!   (0 = it is LRU's victim); the shares with rank 0, 1..=3, 4..=15, >= 16, and "none"
//!   (no such member is resident);
//! * `gap`: for every repeated input, how many vectors back its previous use was (shares of
//!   1, 2..=4, 5..=16, 17..=64, > 64), against the budget in vectors of new objects.
//!
//! ```text
//! cargo run --release -p memhc-workload --example policy_probe -- \
//!     --dist uniform --vector-size 8 --repeat 0.5 --oversub 0.5 --slots 16,24,64
//! ```
//!
//! Every flag is optional: `--tensor-size N` (8), `--vector-size V` (8), `--vectors K` (100),
//! `--repeat r` (0.5), `--dist D` (uniform), `--seed S` (1), `--policy LIST` (lru, pp-lru,
//! car, clock-pro, belady), `--slots LIST` and `--oversub LIST` (budgets: slots directly, or
//! `peak / (1 + O)` as `memhc-synth --oversub` sets them; default `--oversub 0.5`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::error::Error;

use memhc_core::policy::{EvictionPolicy, ObjectId, ResidentView};
use memhc_core::{Mode, PolicyKind};
use memhc_host::null::NullBackend;
use memhc_workload::run::{RunSpec, peak_without_eviction, run};
use memhc_workload::{Dist, SynthParams, Workload, generate};

type Res<T> = Result<T, Box<dyn Error>>;

/// A recency order (least recent first) with ranks from the old end.
#[derive(Default)]
struct Shadow {
    clock: u64,
    by_time: BTreeMap<u64, ObjectId>,
    time_of: HashMap<ObjectId, u64>,
}

impl Shadow {
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
    /// Rank from the least recently used end of the first id in the order that `wanted`
    /// accepts.
    fn first_rank(&self, wanted: impl Fn(ObjectId) -> bool) -> Option<usize> {
        self.by_time.values().position(|&id| wanted(id))
    }
}

/// The objects in use, and the dirty ones (outputs not yet written back).
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

/// What one policy did.
#[derive(Default)]
struct Probe {
    hits: u64,
    misses: u64,
    evictions: u64,
    near: u64,
    dead: u64,
    /// Victim selections by the tail rank of the oldest pending member: 0, 1-3, 4-15, 16+,
    /// none.
    tail: [u64; 5],
}

/// The object uses of `w` as ids: per vector, per contraction `[a, b, out]`; the releases
/// after each vector; the results.
struct Trace {
    vectors: Vec<Vec<[ObjectId; 3]>>,
    releases: Vec<Vec<ObjectId>>,
    results: HashSet<ObjectId>,
}

fn trace(w: &Workload) -> Res<Trace> {
    let a = w.analyse()?;
    // Numbered as the runner registers them: the nodes, then the outputs in queue order
    // (Belady breaks ties by id).
    let mut ids: HashMap<String, ObjectId> = HashMap::new();
    let names = w.nodes.iter().map(|n| &n.id);
    for name in names.chain(w.vectors.iter().flatten().map(|c| &c.out)) {
        let next = ObjectId::from_index(ids.len() as u64);
        ids.entry(name.clone()).or_insert(next);
    }
    let id = |name: &str| {
        ids.get(name)
            .copied()
            .unwrap_or(ObjectId::from_index(u64::MAX))
    };
    let vectors = w
        .vectors
        .iter()
        .map(|v| v.iter().map(|c| [id(&c.a), id(&c.b), id(&c.out)]).collect())
        .collect();
    let releases = (0..w.vectors.len())
        .map(|v| {
            a.release_after_vector(v, &w.results)
                .iter()
                .map(|n| id(n))
                .collect()
        })
        .collect();
    let results = w.results.iter().map(|n| id(n)).collect();
    Ok(Trace {
        vectors,
        releases,
        results,
    })
}

/// Replays `t` through `kind` with room for `slots` objects.
fn replay(t: &Trace, kind: PolicyKind, slots: usize) -> Res<Probe> {
    let mut policy: Box<dyn EvictionPolicy> = kind.build(0);
    let future: Vec<ObjectId> = t.vectors.iter().flatten().flatten().copied().collect();
    policy.set_future(&future);
    let mut resident: HashSet<ObjectId> = HashSet::new();
    let mut dirty: HashSet<ObjectId> = HashSet::new();
    let mut shadow = Shadow::default();
    let mut p = Probe::default();
    for (v, vector) in t.vectors.iter().enumerate() {
        let members: Vec<ObjectId> = vector.iter().flat_map(|c| [c[0], c[1]]).collect();
        let mut pending: HashSet<ObjectId> = members.iter().copied().collect();
        let announced: Vec<ObjectId> = members
            .iter()
            .copied()
            .filter(|m| resident.contains(m))
            .collect();
        policy.begin_vector(&announced);
        for c in vector {
            // The runtime pins every object of a launch before acquiring the first.
            let pinned: HashSet<ObjectId> = c.iter().copied().collect();
            for &x in c {
                pending.remove(&x);
                if resident.contains(&x) {
                    p.hits += 1;
                    policy.on_hit(x);
                    shadow.touch(x);
                    continue;
                }
                p.misses += 1;
                while resident.len() >= slots {
                    let rank = shadow.first_rank(|id| pending.contains(&id));
                    p.tail[match rank {
                        Some(0) => 0,
                        Some(1..=3) => 1,
                        Some(4..=15) => 2,
                        Some(_) => 3,
                        None => 4,
                    }] += 1;
                    let victim = policy
                        .choose_victim(&View {
                            pinned: &pinned,
                            dirty: &dirty,
                        })
                        .ok_or_else(|| format!("{kind}: no victim in vector {v}"))?;
                    if !resident.remove(&victim) || pinned.contains(&victim) {
                        return Err(format!("{kind}: bad victim {victim}").into());
                    }
                    policy.on_evict(victim);
                    shadow.remove(victim);
                    dirty.remove(&victim); // written back first
                    p.evictions += 1;
                    p.near += u64::from(pending.contains(&victim));
                    p.dead += u64::from(t.results.contains(&victim));
                }
                resident.insert(x);
                policy.on_insert(x);
                shadow.touch(x);
            }
            dirty.insert(c[2]);
        }
        for &r in &t.releases[v] {
            dirty.remove(&r);
            if resident.remove(&r) {
                policy.on_remove(r);
                shadow.remove(r);
            }
        }
    }
    Ok(p)
}

/// Shares of the gaps (in vectors) between a repeated input's use and its previous use.
fn gaps(t: &Trace) -> [f64; 5] {
    let mut last: HashMap<ObjectId, usize> = HashMap::new();
    let mut counts = [0u64; 5];
    for (v, vector) in t.vectors.iter().enumerate() {
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
        for c in vector {
            for x in c {
                last.insert(*x, v);
            }
        }
    }
    let total = counts.iter().sum::<u64>().max(1) as f64;
    counts.map(|c| c as f64 / total)
}

fn share(part: u64, whole: u64) -> String {
    format!("{:.0}%", 100.0 * part as f64 / whole.max(1) as f64)
}

fn list<T: std::str::FromStr>(s: &str) -> Res<Vec<T>>
where
    T::Err: Error + 'static,
{
    s.split(',')
        .map(|x| Ok(x.trim().parse::<T>()?))
        .collect::<Result<_, Box<dyn Error>>>()
}

fn main() -> Res<()> {
    let mut p = SynthParams {
        tensor_size: 8,
        vector_size: 8,
        ..SynthParams::default()
    };
    let mut policies = vec![
        PolicyKind::Lru,
        PolicyKind::PpLru,
        PolicyKind::Car,
        PolicyKind::ClockPro,
        PolicyKind::Belady,
    ];
    let (mut slots, mut oversub): (Vec<usize>, Vec<f64>) = (Vec::new(), Vec::new());
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let [flag, value] = pair else {
            return Err(format!("{} needs a value", pair[0]).into());
        };
        match flag.as_str() {
            "--tensor-size" => p.tensor_size = value.parse()?,
            "--vector-size" => p.vector_size = value.parse()?,
            "--vectors" => p.vectors = value.parse()?,
            "--repeat" => p.repeat = value.parse()?,
            "--seed" => p.seed = value.parse()?,
            "--dist" => p.dist = value.parse::<Dist>()?,
            "--policy" => policies = list(value)?,
            "--slots" => slots = list(value)?,
            "--oversub" => oversub = list(value)?,
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    if slots.is_empty() && oversub.is_empty() {
        oversub.push(0.5);
    }
    let w = generate(&p)?;
    let a = w.analyse()?;
    let t = trace(&w)?;
    let object = 16 * p.tensor_size * p.tensor_size * 16;
    let peak = peak_without_eviction(&w, &a)?;
    let mut budgets: Vec<(String, usize)> = slots.iter().map(|&s| (String::new(), s)).collect();
    for o in oversub {
        let budget = (peak as f64 / (1.0 + o)) as usize;
        budgets.push((format!(" (oversub {o})"), budget / object));
    }
    let compulsory = p.repeated_slots() + p.vectors * (3 * p.vector_size - p.repeated_slots());
    let per_vector = 3 * p.vector_size - p.repeated_slots();
    let g = gaps(&t);
    println!(
        "dist {} repeat {} V {} vectors {}: {} objects, {} new per vector, peak without \
         eviction {} objects; gap of repeated inputs 1: {:.0}%, 2-4: {:.0}%, 5-16: {:.0}%, \
         17-64: {:.0}%, >64: {:.0}%",
        p.dist,
        p.repeat,
        p.vector_size,
        p.vectors,
        compulsory,
        per_vector,
        peak / object,
        100.0 * g[0],
        100.0 * g[1],
        100.0 * g[2],
        100.0 * g[3],
        100.0 * g[4]
    );
    println!(
        "{:>5} {:>6} {:<9} {:>6} {:>6} {:>6} {:>6} {:>5} {:>5}  tail rank of oldest pending member: 0 / 1-3 / 4-15 / 16+ / none",
        "slots", "vecs", "policy", "misses", "x_comp", "evict", "runtm", "near", "dead"
    );
    for (label, s) in budgets {
        for &kind in &policies {
            let probe = replay(&t, kind, s)?;
            let spec = RunSpec {
                policy: kind,
                mode: Mode::Optimal,
                budget: s * object,
                streams: 4,
                verify: false,
            };
            let real = run(NullBackend::new(s * object), &w, &a, &spec, &mut |_| {})?;
            let sel: u64 = probe.tail.iter().sum();
            println!(
                "{:>5} {:>6.1} {:<9} {:>6} {:>6.3} {:>6} {:>6} {:>5} {:>5}  {} / {} / {} / {} / {}{label}",
                s,
                s as f64 / per_vector as f64,
                kind.name(),
                probe.misses,
                probe.misses as f64 / compulsory as f64,
                probe.evictions,
                if (real.stats.misses, real.stats.evictions) == (probe.misses, probe.evictions) {
                    "same".to_string()
                } else {
                    format!("{}/{}", real.stats.misses, real.stats.evictions)
                },
                share(probe.near, probe.evictions),
                share(probe.dead, probe.evictions),
                share(probe.tail[0], sel),
                share(probe.tail[1], sel),
                share(probe.tail[2], sel),
                share(probe.tail[3], sel),
                share(probe.tail[4], sel),
            );
            debug_assert_eq!(
                probe.hits + probe.misses,
                3 * (p.vectors * p.vector_size) as u64
            );
        }
    }
    Ok(())
}
