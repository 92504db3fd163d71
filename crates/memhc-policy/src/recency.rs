//! A recency order over object ids, shared by the LRU family: O(1) touch and removal (a doubly
//! linked list threaded through a table indexed by id), and scans from either end.

use crate::ObjectId;
use crate::id::IdTable;

/// The neighbours of one object in the order.
#[derive(Clone, Copy, Debug)]
struct Links {
    /// The next older object.
    older: Option<ObjectId>,
    /// The next newer object.
    newer: Option<ObjectId>,
}

/// Objects ordered from least to most recently used.
#[derive(Debug, Default)]
pub(super) struct Recency {
    links: IdTable<Links>,
    /// The least recently used.
    oldest: Option<ObjectId>,
    /// The most recently used.
    newest: Option<ObjectId>,
}

impl Recency {
    /// Makes `id` the most recently used (inserting it if absent).
    pub fn touch(&mut self, id: ObjectId) {
        if self.newest == Some(id) {
            return;
        }
        self.remove(id);
        let links = Links {
            older: self.newest,
            newer: None,
        };
        if let Some(n) = self.newest.and_then(|n| self.links.get_mut(&n)) {
            n.newer = Some(id);
        }
        self.links.insert(id, links);
        self.newest = Some(id);
        if self.oldest.is_none() {
            self.oldest = Some(id);
        }
    }

    /// Forgets `id`; returns whether it was present.
    pub fn remove(&mut self, id: ObjectId) -> bool {
        let Some(Links { older, newer }) = self.links.remove(&id) else {
            return false;
        };
        match older.and_then(|o| self.links.get_mut(&o)) {
            Some(o) => o.newer = newer,
            None => self.oldest = newer,
        }
        match newer.and_then(|n| self.links.get_mut(&n)) {
            Some(n) => n.older = older,
            None => self.newest = older,
        }
        true
    }

    /// Whether `id` is present.
    pub fn contains(&self, id: ObjectId) -> bool {
        self.links.contains_key(&id)
    }

    /// Least recently used first.
    pub fn oldest_first(&self) -> impl Iterator<Item = ObjectId> + '_ {
        std::iter::successors(self.oldest, |id| self.links.get(id).and_then(|l| l.newer))
    }

    /// Most recently used first.
    pub fn newest_first(&self) -> impl Iterator<Item = ObjectId> + '_ {
        std::iter::successors(self.newest, |id| self.links.get(id).and_then(|l| l.older))
    }

    /// All ids, least recently used first.
    pub fn ids(&self) -> Vec<ObjectId> {
        self.oldest_first().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(r: &Recency) -> Vec<u64> {
        r.ids().into_iter().map(ObjectId::index).collect()
    }

    #[test]
    fn touch_and_remove_keep_the_order() {
        let mut r = Recency::default();
        for i in [1, 2, 3, 4] {
            r.touch(ObjectId(i));
        }
        assert_eq!(ids(&r), [1, 2, 3, 4]);
        r.touch(ObjectId(2));
        assert_eq!(ids(&r), [1, 3, 4, 2]);
        r.touch(ObjectId(2));
        assert_eq!(ids(&r), [1, 3, 4, 2]);
        assert!(r.remove(ObjectId(1)) && !r.remove(ObjectId(1)));
        assert!(r.remove(ObjectId(2)));
        assert_eq!(ids(&r), [3, 4]);
        let newest: Vec<u64> = r.newest_first().map(ObjectId::index).collect();
        assert_eq!(newest, [4, 3]);
        assert!(r.remove(ObjectId(3)) && r.remove(ObjectId(4)));
        assert!(ids(&r).is_empty() && r.newest_first().next().is_none());
        r.touch(ObjectId(9));
        assert_eq!(ids(&r), [9]);
        assert!(r.contains(ObjectId(9)) && !r.contains(ObjectId(3)));
    }
}
