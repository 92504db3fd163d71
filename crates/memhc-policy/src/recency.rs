//! A recency order over object ids, shared by the LRU family: O(1) touch and removal,
//! amortised, and scans from either end.
//!
//! Each object carries the stamp of its last touch, and a queue holds `(stamp, id)` in touch
//! order. A touch writes the object's stamp and appends to the queue; the entry it had before
//! is left in place, stale (its stamp is no longer the object's), and skipped by the scans. A
//! removal forgets the stamp. The queue is compacted when stale entries outnumber live ones,
//! and stale entries at its ends are dropped before a victim is looked for, so every entry is
//! skipped or dropped O(1) times, amortised.
//!
//! Why not a doubly linked list: a touch in the middle of a list writes the object's links and
//! both its neighbours'; in a queue of hundreds of thousands of objects touched at random,
//! those are three cache misses per touch, where the stamp is one (the queue's end is hot).

use std::collections::VecDeque;
use std::num::NonZeroU64;

use crate::ObjectId;
use crate::id::IdTable;

/// Objects ordered from least to most recently used.
#[derive(Debug, Default)]
pub(super) struct Recency {
    /// The stamp of each present object's last touch (never zero: the first is 1, so a slot
    /// of the table is 8 bytes, not 16, and eight objects share a cache line).
    stamp: IdTable<NonZeroU64>,
    /// `(stamp, id)` in touch order, oldest first; an entry is live when its stamp is the
    /// object's.
    queue: VecDeque<(u64, ObjectId)>,
    /// The last stamp handed out (0 before the first).
    clock: u64,
}

/// The queue is compacted when it holds more than twice the live entries plus this.
const SLACK: usize = 64;

/// Whether the queue entry `(stamp, id)` is `id`'s last touch, per `stamps` (a free function, so
/// that compaction can call it while it changes the queue).
fn is_last_touch(stamps: &IdTable<NonZeroU64>, &(stamp, id): &(u64, ObjectId)) -> bool {
    stamps.get(&id).map(|s| s.get()) == Some(stamp)
}

impl Recency {
    /// Whether a queue entry is the object's last touch.
    fn live(&self, entry: &(u64, ObjectId)) -> bool {
        is_last_touch(&self.stamp, entry)
    }

    /// Makes room for `id`, not present yet (see [`IdTable::reserve`]).
    pub fn reserve(&mut self, id: ObjectId) {
        self.stamp.reserve(id);
    }

    /// Makes `id` the most recently used (inserting it if absent).
    pub fn touch(&mut self, id: ObjectId) {
        if let Some(&(stamp, newest)) = self.queue.back()
            && newest == id
            && self.live(&(stamp, id))
        {
            return;
        }
        let stamp = NonZeroU64::MIN.saturating_add(self.clock);
        self.clock = stamp.get();
        self.stamp.insert(id, stamp);
        self.queue.push_back((self.clock, id));
        self.compact();
    }

    /// Forgets `id`; returns whether it was present.
    pub fn remove(&mut self, id: ObjectId) -> bool {
        let present = self.stamp.remove(&id).is_some();
        self.compact();
        present
    }

    /// Drops every stale entry once they outnumber the live ones (plus [`SLACK`]): O(1) per
    /// touch or removal, amortised, since at least as many stale entries were made since the
    /// last compaction as live entries are kept.
    fn compact(&mut self) {
        if self.queue.len() > 2 * self.stamp.len() + SLACK {
            let stamps = &self.stamp;
            self.queue.retain(|e| is_last_touch(stamps, e));
        }
    }

    /// Drops the stale entries at both ends of the queue (before a scan: the entries a victim
    /// search walks past first).
    pub fn trim(&mut self) {
        while let Some(front) = self.queue.front()
            && !self.live(front)
        {
            self.queue.pop_front();
        }
        while let Some(back) = self.queue.back()
            && !self.live(back)
        {
            self.queue.pop_back();
        }
    }

    /// Whether `id` is present.
    pub fn contains(&self, id: ObjectId) -> bool {
        self.stamp.contains_key(&id)
    }

    /// Looks up the stamps of `ids`, all in one pass, and forgets them. On a long queue used at
    /// random, each touch waits on a cache miss for its object's stamp; a vector's objects are
    /// known before its launches run, and looked up together their loads overlap, so the
    /// touches that follow find the stamps in cache.
    pub fn look_up(&self, ids: &[ObjectId]) {
        let present = ids.iter().filter(|&&id| self.contains(id)).count();
        std::hint::black_box(present);
    }

    /// Least recently used first.
    pub fn oldest_first(&self) -> impl Iterator<Item = ObjectId> + '_ {
        self.queue
            .iter()
            .filter(|e| self.live(e))
            .map(|&(_, id)| id)
    }

    /// Most recently used first.
    pub fn newest_first(&self) -> impl Iterator<Item = ObjectId> + '_ {
        self.queue
            .iter()
            .rev()
            .filter(|e| self.live(e))
            .map(|&(_, id)| id)
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

    /// Against a plain list (move to the back on touch), over a long random sequence of
    /// touches, removals and trims: the same order from both ends, and a queue that stays
    /// within twice the live entries (plus slack).
    #[test]
    fn agrees_with_a_plain_list_and_stays_compact() {
        let mut r = Recency::default();
        let mut model: Vec<u64> = Vec::new();
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for step in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let id = x % 97;
            match x % 7 {
                0 => {
                    assert_eq!(r.remove(ObjectId(id)), model.contains(&id));
                    model.retain(|&m| m != id);
                }
                1 => r.trim(),
                _ => {
                    r.touch(ObjectId(id));
                    model.retain(|&m| m != id);
                    model.push(id);
                }
            }
            if step % 97 == 0 {
                assert_eq!(ids(&r), model, "step {step}");
                let newest: Vec<u64> = r.newest_first().map(ObjectId::index).collect();
                assert!(newest.iter().eq(model.iter().rev()), "step {step}");
            }
            assert!(r.queue.len() <= 2 * model.len() + SLACK + 1, "step {step}");
        }
    }
}
