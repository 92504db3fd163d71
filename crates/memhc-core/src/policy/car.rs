//! PLACEHOLDER until the real implementation lands: behaves as LRU.

use super::recency::Recency;
use super::{EvictionPolicy, ResidentView};
use crate::object::ObjectId;

/// Placeholder.
#[derive(Debug, Default)]
pub struct Car {
    order: Recency,
}

impl Car {
    /// Placeholder.
    pub fn new() -> Self {
        Self::default()
    }
}

impl EvictionPolicy for Car {
    fn name(&self) -> &'static str {
        "car"
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
