//! Pre-protected LRU: the paper's Algorithm 2.
//!
//! Before a vector of contractions runs, its members that are already resident are marked
//! protected. When the LRU victim is protected, it is moved to the most-recently-used end and
//! loses its protection (so protection delays eviction once, and cannot livelock); the scan
//! then continues. Objects the current launch is using are skipped in place, as in [`Lru`].
//!
//! One refinement over the paper's listing: each vector replaces the previous protected set
//! instead of adding to it. The paper protects per vector ("limiting the prediction range into
//! vector size"); a flag left over from an earlier vector in which nothing had to be evicted
//! would otherwise protect an object the current vector does not use.
//!
//! [`Lru`]: super::Lru

use super::recency::Recency;
use super::{EvictionPolicy, ResidentView};
use crate::{IdSet, ObjectId};

/// The pre-protected LRU policy.
#[derive(Debug, Default)]
pub struct PreProtectedLru {
    order: Recency,
    protected: IdSet,
}

impl PreProtectedLru {
    /// An empty queue with nothing protected.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `id` is protected now.
    pub fn is_protected(&self, id: ObjectId) -> bool {
        self.protected.contains(&id)
    }

    fn forget(&mut self, id: ObjectId) {
        self.order.remove(id);
        self.protected.remove(&id);
    }
}

impl EvictionPolicy for PreProtectedLru {
    fn name(&self) -> &'static str {
        "pp-lru"
    }

    fn on_register(&mut self, id: ObjectId) {
        self.order.reserve(id);
    }

    fn on_insert(&mut self, id: ObjectId) {
        self.order.touch(id);
    }

    fn on_hit(&mut self, id: ObjectId) {
        self.order.touch(id);
    }

    fn on_evict(&mut self, id: ObjectId) {
        self.forget(id);
    }

    fn on_remove(&mut self, id: ObjectId) {
        self.forget(id);
    }

    fn choose_victim(&mut self, view: &dyn ResidentView) -> Option<ObjectId> {
        // Each protected object is moved at most once (it loses its flag), so at most two
        // passes over the queue are needed.
        self.order.trim();
        loop {
            let candidate = self
                .order
                .oldest_first()
                .find(|&id| view.is_evictable(id))?;
            if self.protected.remove(&candidate) {
                self.order.touch(candidate);
                continue;
            }
            return Some(candidate);
        }
    }

    fn begin_vector(&mut self, resident_members: &[ObjectId]) {
        self.protected.clear();
        self.protected.extend(
            resident_members
                .iter()
                .copied()
                .filter(|&id| self.order.contains(id)),
        );
    }

    fn resident(&self) -> Vec<ObjectId> {
        self.order.ids()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::simulate;
    use super::*;

    #[test]
    fn protected_member_survives_where_lru_evicts_it() {
        // Room for 2: (1,2) then (3,1). LRU evicts 1 for 3, then 2 for 1; pre-protected LRU
        // keeps 1 (protected at the start of the second vector) and evicts only 2.
        let trace: &[&[u64]] = &[&[1, 2], &[3, 1]];
        assert_eq!(
            simulate(&mut crate::Lru::new(), 2, trace).evicted,
            vec![1, 2]
        );
        assert_eq!(
            simulate(&mut PreProtectedLru::new(), 2, trace).evicted,
            vec![2]
        );
    }

    #[test]
    fn protection_is_spent_once() {
        // Room for 2: (1,2) then (3,4,1). 3 finds protected 1 at the LRU end: it moves and
        // loses its flag, 2 goes. 4 then evicts 1, which is no longer protected.
        let out = simulate(&mut PreProtectedLru::new(), 2, &[&[1, 2], &[3, 4, 1]]);
        assert_eq!(out.evicted, vec![2, 1, 3]);
    }

    #[test]
    fn protection_does_not_outlive_its_vector() {
        let mut p = PreProtectedLru::new();
        for i in 1..=3 {
            p.on_insert(ObjectId(i));
        }
        p.begin_vector(&[ObjectId(1)]);
        assert!(p.is_protected(ObjectId(1)));
        p.begin_vector(&[ObjectId(2)]);
        assert!(!p.is_protected(ObjectId(1)) && p.is_protected(ObjectId(2)));
        // A member that is not resident is not protected.
        p.begin_vector(&[ObjectId(9)]);
        assert!(!p.is_protected(ObjectId(9)));
    }
}
