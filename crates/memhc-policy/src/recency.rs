//! A recency order over object ids, shared by the LRU family: O(log n) touch, removal and
//! scans from either end.

use std::collections::{BTreeMap, HashMap};

use crate::ObjectId;

/// Objects ordered from least to most recently used.
#[derive(Debug, Default)]
pub(super) struct Recency {
    clock: u64,
    by_time: BTreeMap<u64, ObjectId>,
    time_of: HashMap<ObjectId, u64>,
}

impl Recency {
    /// Makes `id` the most recently used (inserting it if absent).
    pub fn touch(&mut self, id: ObjectId) {
        self.remove(id);
        self.clock += 1;
        self.by_time.insert(self.clock, id);
        self.time_of.insert(id, self.clock);
    }

    /// Forgets `id`; returns whether it was present.
    pub fn remove(&mut self, id: ObjectId) -> bool {
        match self.time_of.remove(&id) {
            Some(t) => {
                self.by_time.remove(&t);
                true
            }
            None => false,
        }
    }

    /// Whether `id` is present.
    pub fn contains(&self, id: ObjectId) -> bool {
        self.time_of.contains_key(&id)
    }

    /// Least recently used first.
    pub fn oldest_first(&self) -> impl Iterator<Item = ObjectId> + '_ {
        self.by_time.values().copied()
    }

    /// Most recently used first.
    pub fn newest_first(&self) -> impl Iterator<Item = ObjectId> + '_ {
        self.by_time.values().rev().copied()
    }

    /// All ids, least recently used first.
    pub fn ids(&self) -> Vec<ObjectId> {
        self.oldest_first().collect()
    }
}
