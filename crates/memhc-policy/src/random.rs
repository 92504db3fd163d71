//! Random replacement: a uniformly chosen evictable resident object, from a seeded generator
//! so that runs repeat.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{EvictionPolicy, ResidentView};
use crate::{IdMap, ObjectId};

/// The random policy.
#[derive(Debug)]
pub struct RandomPolicy {
    rng: ChaCha8Rng,
    ids: Vec<ObjectId>,
    slot: IdMap<usize>,
}

impl RandomPolicy {
    /// A policy drawing from a generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        RandomPolicy {
            rng: ChaCha8Rng::seed_from_u64(seed),
            ids: Vec::new(),
            slot: IdMap::default(),
        }
    }

    fn forget(&mut self, id: ObjectId) {
        if let Some(i) = self.slot.remove(&id) {
            self.ids.swap_remove(i);
            if let Some(&moved) = self.ids.get(i) {
                self.slot.insert(moved, i);
            }
        }
    }
}

impl EvictionPolicy for RandomPolicy {
    fn name(&self) -> &'static str {
        "random"
    }

    fn on_insert(&mut self, id: ObjectId) {
        if !self.slot.contains_key(&id) {
            self.slot.insert(id, self.ids.len());
            self.ids.push(id);
        }
    }

    fn on_hit(&mut self, _: ObjectId) {}

    fn on_evict(&mut self, id: ObjectId) {
        self.forget(id);
    }

    fn on_remove(&mut self, id: ObjectId) {
        self.forget(id);
    }

    fn choose_victim(&mut self, view: &dyn ResidentView) -> Option<ObjectId> {
        // Start at a random position and take the first evictable object from there on, so that
        // a pinned object never makes the draw fail.
        let n = self.ids.len();
        if n == 0 {
            return None;
        }
        let start = self.rng.random_range(0..n);
        (0..n)
            .map(|k| self.ids[(start + k) % n])
            .find(|&id| view.is_evictable(id))
    }

    fn resident(&self) -> Vec<ObjectId> {
        self.ids.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::simulate;
    use super::*;

    #[test]
    fn seeded_runs_repeat_and_seeds_differ() {
        let trace: Vec<&[u64]> = vec![&[1, 2, 3, 4], &[5, 6, 7, 8], &[1, 5, 9, 2], &[3, 7, 10, 11]];
        let run = |seed| simulate(&mut RandomPolicy::new(seed), 4, &trace).evicted;
        assert_eq!(run(1), run(1));
        assert!(
            (2..20).any(|s| run(s) != run(1)),
            "different seeds never differ"
        );
    }
}
