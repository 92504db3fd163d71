//! Belady's MIN, the queue-aware policy: with the future access sequence known (the planner
//! fixes it before anything runs), evict the resident object whose next use is furthest away;
//! an object never used again goes first, a clean one before a dirty one.
//!
//! For objects of equal size and demand fetching, MIN misses no more often than any other
//! policy, so its miss count on a sequence is the lower bound every other policy is reported
//! against.
//!
//! The future is a list of object uses in order. Each `on_insert` / `on_hit` of an object
//! consumes that object's next listed use, so the policy needs no global cursor and degrades
//! gracefully when the run deviates from the plan: an object used more often than planned
//! simply looks "never used again".

use std::collections::{BTreeSet, HashMap, VecDeque};

use super::{EvictionPolicy, ResidentView};
use crate::ObjectId;

/// Key of an object never used again: larger than every position.
const NEVER: u64 = u64::MAX;

/// The Belady (MIN) policy.
#[derive(Debug, Default)]
pub struct Belady {
    /// Remaining use positions of every object in the plan, soonest first.
    uses: HashMap<ObjectId, VecDeque<u64>>,
    /// Resident objects keyed by their next use.
    by_next_use: BTreeSet<(u64, ObjectId)>,
    next_use: HashMap<ObjectId, u64>,
}

impl Belady {
    /// A policy with no future known yet (until [`EvictionPolicy::set_future`], every object
    /// counts as never used again).
    pub fn new() -> Self {
        Self::default()
    }

    fn key(&self, id: ObjectId) -> u64 {
        self.uses
            .get(&id)
            .and_then(|q| q.front().copied())
            .unwrap_or(NEVER)
    }

    fn reposition(&mut self, id: ObjectId) {
        self.forget(id);
        let k = self.key(id);
        self.by_next_use.insert((k, id));
        self.next_use.insert(id, k);
    }

    /// Marks the next planned use of `id` as done.
    fn consume(&mut self, id: ObjectId) {
        if let Some(q) = self.uses.get_mut(&id) {
            q.pop_front();
        }
    }

    fn forget(&mut self, id: ObjectId) {
        if let Some(k) = self.next_use.remove(&id) {
            self.by_next_use.remove(&(k, id));
        }
    }
}

impl EvictionPolicy for Belady {
    fn name(&self) -> &'static str {
        "belady"
    }

    fn on_insert(&mut self, id: ObjectId) {
        self.consume(id);
        self.reposition(id);
    }

    fn on_hit(&mut self, id: ObjectId) {
        self.consume(id);
        self.reposition(id);
    }

    fn on_evict(&mut self, id: ObjectId) {
        self.forget(id);
    }

    fn on_remove(&mut self, id: ObjectId) {
        self.forget(id);
    }

    fn choose_victim(&mut self, view: &dyn ResidentView) -> Option<ObjectId> {
        // Objects never used again tie: prefer one that needs no write-back.
        let mut never_dirty = None;
        for &(k, id) in self.by_next_use.iter().rev() {
            if !view.is_evictable(id) {
                continue;
            }
            if k != NEVER {
                return Some(never_dirty.unwrap_or(id));
            }
            if !view.is_dirty(id) {
                return Some(id);
            }
            never_dirty.get_or_insert(id);
        }
        never_dirty
    }

    fn set_future(&mut self, accesses: &[ObjectId]) {
        self.uses.clear();
        for (pos, &id) in accesses.iter().enumerate() {
            self.uses.entry(id).or_default().push_back(pos as u64);
        }
        let resident: Vec<_> = self.next_use.keys().copied().collect();
        for id in resident {
            self.reposition(id);
        }
    }

    fn resident(&self) -> Vec<ObjectId> {
        self.next_use.keys().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::simulate;
    use super::*;

    #[test]
    fn evicts_the_furthest_next_use() {
        // Room for 3: 1 2 3, then 4 must evict; next uses: 1 soon, 2 later, 3 never.
        let out = simulate(&mut Belady::new(), 3, &[&[1, 2, 3], &[4], &[1], &[2]]);
        assert_eq!(out.evicted, vec![3]);
        // Textbook example (Silberschatz): 7 0 1 2 0 3 0 4 2 3 0 3 2 1 2 0 1 7 0 1 with 3
        // frames gives 9 faults under OPT.
        let refs = [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1];
        let singles: Vec<&[u64]> = refs.iter().map(std::slice::from_ref).collect();
        assert_eq!(simulate(&mut Belady::new(), 3, &singles).misses, 9);
    }

    struct DirtyOdd;
    impl ResidentView for DirtyOdd {
        fn is_evictable(&self, _: ObjectId) -> bool {
            true
        }
        fn is_dirty(&self, id: ObjectId) -> bool {
            id.0 % 2 == 1
        }
    }

    #[test]
    fn clean_before_dirty_when_nothing_is_used_again() {
        let mut p = Belady::new();
        p.set_future(&[ObjectId(1), ObjectId(2), ObjectId(3)]);
        for i in 1..=3 {
            p.on_insert(ObjectId(i));
        }
        assert_eq!(p.choose_victim(&DirtyOdd), Some(ObjectId(2)));
        p.on_evict(ObjectId(2));
        assert!(matches!(p.choose_victim(&DirtyOdd), Some(ObjectId(1 | 3))));
    }
}
