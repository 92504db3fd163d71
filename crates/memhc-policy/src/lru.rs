//! Recency-ordered policies: least recently used (the paper's Algorithm 1) and its mirror,
//! most recently used (part of the paper's comparison set, Fig. 11).
//!
//! Resident objects are kept in recency order. [`Lru`] evicts from the old end, [`Mru`] from
//! the new end; in both, objects in use by the current launch are skipped and keep their place.
//! MRU is good for cyclic scans larger than memory and poor for recency-friendly traces.
//! The two differ only in the end the victim is taken from, so they are one type with the end
//! as a parameter.

use std::fmt;
use std::marker::PhantomData;

use super::recency::Recency;
use super::{EvictionPolicy, ResidentView};
use crate::ObjectId;

/// The end of the recency order a [`ByRecency`] policy takes its victims from.
pub trait VictimEnd: fmt::Debug + Default + Send {
    /// The policy's name, as [`PolicyKind`](crate::PolicyKind) parses it.
    const NAME: &'static str;
    /// Whether victims come from the most recently used end.
    const NEWEST: bool;
}

/// Victims are the least recently used: [`Lru`].
#[derive(Debug, Default)]
pub struct LeastRecent;

impl VictimEnd for LeastRecent {
    const NAME: &'static str = "lru";
    const NEWEST: bool = false;
}

/// Victims are the most recently used: [`Mru`].
#[derive(Debug, Default)]
pub struct MostRecent;

impl VictimEnd for MostRecent {
    const NAME: &'static str = "mru";
    const NEWEST: bool = true;
}

/// A policy that evicts from one end of the recency order.
#[derive(Debug, Default)]
pub struct ByRecency<E> {
    order: Recency,
    end: PhantomData<E>,
}

/// The LRU policy (the paper's Algorithm 1).
pub type Lru = ByRecency<LeastRecent>;

/// The MRU policy.
pub type Mru = ByRecency<MostRecent>;

impl<E: VictimEnd> ByRecency<E> {
    /// An empty recency order.
    pub fn new() -> Self {
        Self::default()
    }
}

impl<E: VictimEnd> EvictionPolicy for ByRecency<E> {
    fn name(&self) -> &'static str {
        E::NAME
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
        self.order.remove(id);
    }

    fn on_remove(&mut self, id: ObjectId) {
        self.order.remove(id);
    }

    fn choose_victim(&mut self, view: &dyn ResidentView) -> Option<ObjectId> {
        self.order.trim();
        if E::NEWEST {
            self.order.newest_first().find(|&id| view.is_evictable(id))
        } else {
            self.order.oldest_first().find(|&id| view.is_evictable(id))
        }
    }

    fn begin_vector(&mut self, resident_members: &[ObjectId]) {
        self.order.look_up(resident_members);
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
    fn lru_evicts_least_recently_used() {
        // 1 2 3, touch 1, then 4 evicts 2 (not 1).
        let out = simulate(&mut Lru::new(), 3, &[&[1, 2, 3], &[1], &[4]]);
        assert_eq!(out.evicted, vec![2]);
        assert_eq!((out.hits, out.misses), (1, 4));
    }

    #[test]
    fn mru_evicts_most_recently_used() {
        let out = simulate(&mut Mru::new(), 3, &[&[1, 2, 3], &[1], &[4], &[5]]);
        assert_eq!(out.evicted, vec![1, 4]);
    }
}
