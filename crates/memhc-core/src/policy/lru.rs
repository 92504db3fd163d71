//! Least recently used: the paper's Algorithm 1.
//!
//! Resident objects are kept in recency order; the victim is the least recently used object
//! that may be evicted now (objects in use by the current launch are skipped and keep their
//! place).

use super::recency::Recency;
use super::{EvictionPolicy, ResidentView};
use crate::object::ObjectId;

/// The LRU policy.
#[derive(Debug, Default)]
pub struct Lru {
    order: Recency,
}

impl Lru {
    /// An empty LRU queue.
    pub fn new() -> Self {
        Self::default()
    }
}

impl EvictionPolicy for Lru {
    fn name(&self) -> &'static str {
        "lru"
    }

    fn on_insert(&mut self, id: ObjectId) {
        self.order.touch(id);
    }

    fn on_hit(&mut self, id: ObjectId) {
        self.order.touch(id);
    }

    fn on_evict(&mut self, id: ObjectId) {
        self.order.remove(id);
    }

    fn on_remove(&mut self, id: ObjectId) {
        self.order.remove(id);
    }

    fn choose_victim(&mut self, view: &dyn ResidentView) -> Option<ObjectId> {
        self.order.oldest_first().find(|&id| view.is_evictable(id))
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
    fn evicts_least_recently_used() {
        // 1 2 3, touch 1, then 4 evicts 2 (not 1).
        let out = simulate(&mut Lru::new(), 3, &[&[1, 2, 3], &[1], &[4]]);
        assert_eq!(out.evicted, vec![2]);
        assert_eq!((out.hits, out.misses), (1, 4));
    }
}
