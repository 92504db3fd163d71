//! The eviction model (`memhc_workload::eviction_model`) against the runtime, and what it shows about
//! CAR and CLOCK-Pro (`docs/policies.md`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

use std::collections::{HashSet, VecDeque};

use memhc_core::policy::{Car, ClockPro, EvictionPolicy, ObjectId, ResidentView};
use memhc_core::{Mode, PolicyKind};
use memhc_host::null::NullBackend;
use memhc_workload::eviction_model::{UseTrace, replay_model};
use memhc_workload::run::{RunSpec, peak_without_eviction, run};
use memhc_workload::{Dist, SynthParams, Workload, generate};

/// Bytes of one meson node at tensor size `n`.
fn node_bytes(n: usize) -> usize {
    16 * n * n * 16
}

fn params(vector_size: usize, dist: Dist) -> SynthParams {
    SynthParams {
        tensor_size: 2,
        vector_size,
        vectors: 100,
        repeat: 0.5,
        dist,
        seed: 1,
    }
}

/// Slots of the budget `memhc-synth --oversub o` sets.
fn oversub_slots(w: &Workload, o: f64) -> usize {
    let peak = peak_without_eviction(w, &w.analyse().unwrap()).unwrap();
    (peak as f64 / (1.0 + o)) as usize / node_bytes(2)
}

/// The model makes the runtime's decisions: the same misses and evictions as a dry run of the
/// runtime at the same budget, for every policy, at budgets from one contraction up.
#[test]
fn the_model_counts_what_the_runtime_counts() {
    for dist in [Dist::Uniform, Dist::Gaussian, Dist::Recent(2)] {
        let p = SynthParams {
            vectors: 30,
            ..params(4, dist)
        };
        let w = generate(&p).unwrap();
        let a = w.analyse().unwrap();
        let t = UseTrace::new(&w).unwrap();
        for slots in [3, 7, 12, 20, oversub_slots(&w, 0.5)] {
            for kind in PolicyKind::ALL {
                let m = replay_model(&t, kind.build(0).as_mut(), slots).unwrap();
                let spec = RunSpec::new(kind, Mode::Optimal, slots * node_bytes(2), 4);
                let budget = spec.budget;
                let real = run(NullBackend::new(budget), &w, &a, &spec, &mut |_| {})
                    .unwrap()
                    .stats;
                assert_eq!(
                    (m.hits, m.misses, m.evictions()),
                    (real.hits, real.misses, real.evictions),
                    "{dist} {slots} slots {kind}"
                );
                assert!(m.misses >= t.compulsory());
            }
        }
    }
}

/// CLOCK with permanent promotion: resident objects seen once wait on a FIFO clock; one
/// that is hit while there is promoted when the hand reaches it, an object that comes back
/// after its eviction is promoted at once, and a promoted object is never a victim while
/// the clock holds an evictable one. Nothing adapts, nothing is bounded. This is what CAR
/// and CLOCK-Pro both reduce to when their adaptive parts never decide a victim.
#[derive(Debug, Default)]
struct ClockWithPromotion {
    clock: VecDeque<ObjectId>,
    referenced: HashSet<ObjectId>,
    promoted: Vec<ObjectId>,
    evicted: HashSet<ObjectId>,
}

impl ClockWithPromotion {
    fn forget(&mut self, id: ObjectId) {
        self.clock.retain(|&x| x != id);
        self.promoted.retain(|&x| x != id);
        self.referenced.remove(&id);
    }
}

impl EvictionPolicy for ClockWithPromotion {
    fn name(&self) -> &'static str {
        "clock-with-promotion"
    }
    fn on_insert(&mut self, id: ObjectId) {
        if self.evicted.remove(&id) {
            self.promoted.push(id);
        } else {
            self.clock.push_back(id);
        }
    }
    fn on_hit(&mut self, id: ObjectId) {
        if self.clock.contains(&id) {
            self.referenced.insert(id);
        }
    }
    fn on_evict(&mut self, id: ObjectId) {
        self.forget(id);
        self.evicted.insert(id);
    }
    fn on_remove(&mut self, id: ObjectId) {
        self.forget(id);
        self.evicted.remove(&id);
    }
    fn choose_victim(&mut self, view: &dyn ResidentView) -> Option<ObjectId> {
        let mut i = 0;
        while let Some(&id) = self.clock.get(i) {
            if self.referenced.remove(&id) {
                self.clock.remove(i);
                self.promoted.push(id);
            } else if view.is_evictable(id) {
                return Some(id);
            } else {
                i += 1;
            }
        }
        self.promoted
            .iter()
            .copied()
            .find(|&id| view.is_evictable(id))
    }
    fn resident(&self) -> Vec<ObjectId> {
        self.clock.iter().chain(&self.promoted).copied().collect()
    }
}

fn victims(t: &UseTrace, policy: &mut dyn EvictionPolicy, slots: usize) -> Vec<ObjectId> {
    replay_model(t, policy, slots).unwrap().victims
}

/// Why CAR and CLOCK-Pro print the same counts at every point of the Table 1 sweep
/// (`--tensor-size 8 --sweep vector-size=8,16,32 --repeat 0.5 --oversub 0.5`): there the
/// budget holds some 23 vectors' worth of new objects, mostly results that are never used
/// again, so the hand always finds an unreferenced once-seen object. CAR's sweep never
/// leaves T1 (`|T1| >= p` throughout) and CLOCK-Pro's HAND_hot never runs (never more than
/// `m - m_c` hot pages), so neither adaptation decides anything; objects promoted to T2 or
/// made hot stay until they are released; and an object that comes back after an eviction
/// is promoted at once (a B1 ghost hit, a fault on a non-resident page in its test period)
/// or, where CAR's smaller ghost list has forgotten it, released before the hand comes round
/// to it. Both then evict exactly as CLOCK with permanent promotion does: the same victims,
/// in the same order. With a smaller budget the adaptive parts do decide, and the two
/// differ. (The runtime's free pool plays no part: it is drained before any eviction, so a
/// policy is asked for a victim only with every slot resident, and the high-water mark both
/// take as the cache size is the true number of slots.)
#[test]
fn car_and_clock_pro_coincide_only_where_neither_adapts() {
    for v in [8, 16, 32] {
        let w = generate(&params(v, Dist::Uniform)).unwrap();
        let t = UseTrace::new(&w).unwrap();
        let slots = oversub_slots(&w, 0.5);
        assert!(slots > 20 * 2 * v, "the budget holds {slots} objects");
        let reference = victims(&t, &mut ClockWithPromotion::default(), slots);
        assert!(!reference.is_empty());
        assert_eq!(
            victims(&t, &mut Car::new(), slots),
            reference,
            "car, V = {v}"
        );
        assert_eq!(
            victims(&t, &mut ClockPro::new(), slots),
            reference,
            "clock-pro, V = {v}"
        );
    }
    let w = generate(&params(8, Dist::Uniform)).unwrap();
    let t = UseTrace::new(&w).unwrap();
    for slots in [16, 64, 150] {
        let car = replay_model(&t, &mut Car::new(), slots).unwrap();
        let clock_pro = replay_model(&t, &mut ClockPro::new(), slots).unwrap();
        assert_ne!(car.misses, clock_pro.misses, "{slots} slots");
    }
}
