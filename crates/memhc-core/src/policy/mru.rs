//! Most recently used: evicts the object used last. Good for cyclic scans larger than memory,
//! poor for recency-friendly traces; part of the paper's comparison set (Fig. 11).

use super::recency::Recency;
use super::{EvictionPolicy, ResidentView};
use crate::object::ObjectId;

/// The MRU policy.
#[derive(Debug, Default)]
pub struct Mru {
    order: Recency,
}

impl Mru {
    /// An empty MRU stack.
    pub fn new() -> Self {
        Self::default()
    }
}

impl EvictionPolicy for Mru {
    fn name(&self) -> &'static str {
        "mru"
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
        self.order.newest_first().find(|&id| view.is_evictable(id))
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
    fn evicts_most_recently_used() {
        let out = simulate(&mut Mru::new(), 3, &[&[1, 2, 3], &[1], &[4], &[5]]);
        assert_eq!(out.evicted, vec![1, 4]);
    }
}
