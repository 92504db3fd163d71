//! CAR, Clock with Adaptive Replacement (Bansal and Modha, FAST 2004).
//!
//! Resident objects live on one of two clocks, each object with a reference bit:
//!
//! * **T1** (recency) holds objects seen once recently; a miss that no ghost list remembers
//!   enters at T1's tail with its bit clear.
//! * **T2** (frequency) holds objects seen at least twice recently: an object on T1 whose bit
//!   is found set by the hand, or an object that comes back while its id is still on a ghost
//!   list.
//!
//! Two LRU ghost lists remember the ids (no data) of recently evicted objects: **B1** those
//! evicted from T1, **B2** those evicted from T2. The target size `p` of T1 adapts: a miss on
//! an id in B1 means T1 was too small and raises `p` by `max(1, |B2| / |B1|)` (at most to
//! `c`); a miss on an id in B2 lowers it by `max(1, |B1| / |B2|)` (at least to 0). Either way
//! the object enters at T2's tail with its bit clear. A hit only sets the reference bit.
//!
//! Replacement (the paper's `replace()`) sweeps a hand: while `|T1| >= max(1, p)` it looks at
//! T1's head, otherwise at T2's. A head with its bit clear is the victim; a head with its bit
//! set gets its bit cleared and moves to T2's tail (from either clock), and the sweep goes on.
//! On a miss of an id no ghost list holds, the directory is trimmed before the id enters T1:
//! the LRU id of B1 goes if `|T1| + |B1|` has reached `c`, else the LRU id of B2 if
//! `|T1| + |T2| + |B1| + |B2|` has reached `2c`, so that `|T1| + |B1| <= c` and the four lists
//! together hold at most `2c` ids.
//!
//! # Adaptation to this runtime
//!
//! * **Capacity.** The policy is not told the cache size `c`, and objects need not be of
//!   equal size. `c` is the largest number of resident objects seen so far, updated on every
//!   insert; for equal-sized objects that is the number of slots once memory has filled. The
//!   bounds above and the cap on `p` use the current `c`.
//! * **Who decides to evict.** The runtime, not the policy, decides when memory is short: it
//!   calls [`choose_victim`](EvictionPolicy::choose_victim), which runs the sweep and leaves
//!   the victim in place, and then [`on_evict`](EvictionPolicy::on_evict) once the eviction
//!   succeeded, which moves the victim to the MRU end of B1 or B2. If the eviction fails the
//!   runtime says nothing and the object stays resident (the sweep's bit clearing and moves
//!   to T2 stand, as they would after a pass of the paper's hand). A miss may follow several
//!   evictions (large objects) or none (free memory), so the paper's "cache full" test before
//!   the directory trim is replaced by the trim's own conditions, which are equivalent when
//!   objects are equal-sized and never removed.
//! * **Misses and hits.** [`on_insert`](EvictionPolicy::on_insert) is the paper's miss path
//!   after `replace()`: the ghost lookup, the adaptation of `p`, the directory trim and the
//!   insertion. [`on_hit`](EvictionPolicy::on_hit) sets the reference bit.
//! * **Removal.** [`on_remove`](EvictionPolicy::on_remove) (an object released or overwritten
//!   on the host) forgets the id completely: it leaves no ghost, and a ghost id that is
//!   removed is dropped too.
//! * **Objects in use.** The hand treats an object that
//!   [`ResidentView::is_evictable`] rejects like any other, except that it never picks it:
//!   a set bit is still cleared and the object moved to T2's tail (that is aging, not
//!   eviction), but an object with its bit clear is passed over and keeps its place, so it is
//!   the first candidate again once released (as the LRU policies keep the place of the
//!   objects they skip). When every object left on the clock `p` points at is in use, the
//!   sweep goes on with the other clock, so it finds a victim whenever any resident object is
//!   evictable, and returns `None` only when none is. The sweep is also bounded by a step
//!   count it cannot reach; past it, the first evictable object of T1 then T2 is returned.
//! * **Integer target.** `p` is an integer, and the ratios `|B2| / |B1|` and `|B1| / |B2|`
//!   are rounded down before the `max(1, ...)`.
//!
//! # Representation
//!
//! Each list is a [`VecDeque`] of `(id, ticket)` slots, head (clock hand, or LRU end of a
//! ghost list) at the front, and a map gives every id its list, its current ticket and its
//! reference bit. Moving an id (to a clock's tail, to a ghost list, or off the directory)
//! gives it a new slot and leaves the old one stale; stale slots are skipped and compacted
//! away once they outnumber live ones, so every call costs amortised O(1) besides the
//! sweep, which costs O(1) per object it passes.

use std::collections::VecDeque;

use super::{EvictionPolicy, ResidentView};
use crate::{IdMap, ObjectId};

/// Stale slots a list may carry beyond as many as it has live ones before it is compacted.
const COMPACT_SLACK: usize = 16;

/// One of CAR's four lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    /// Resident, seen once recently (a clock).
    T1 = 0,
    /// Resident, seen at least twice recently (a clock).
    T2 = 1,
    /// Ghost ids evicted from T1 (LRU).
    B1 = 2,
    /// Ghost ids evicted from T2 (LRU).
    B2 = 3,
}

impl List {
    fn index(self) -> usize {
        self as usize
    }

    fn is_resident(self) -> bool {
        matches!(self, List::T1 | List::T2)
    }
}

/// Where an id is and, if resident, its reference bit.
#[derive(Clone, Copy, Debug)]
struct Entry {
    list: List,
    /// Identifies the id's live slot on `list`; older slots of the id are stale.
    ticket: u64,
    referenced: bool,
}

/// One list in order, head first, possibly with stale slots.
#[derive(Debug, Default)]
struct Queue {
    slots: VecDeque<(ObjectId, u64)>,
    /// Number of live slots.
    live: usize,
}

/// Whether `slot` on `list` is the live position of its id.
fn is_live(entries: &IdMap<Entry>, list: List, (id, ticket): (ObjectId, u64)) -> bool {
    entries
        .get(&id)
        .is_some_and(|e| e.list == list && e.ticket == ticket)
}

/// CAR, Clock with Adaptive Replacement (Bansal and Modha, 2004): resident objects on a
/// recency clock T1 and a frequency clock T2 with reference bits, ghost lists B1 and B2 of
/// recently evicted ids, and a target size for T1 that ghost hits adapt. The cache size is
/// taken as the most objects ever resident at once; objects in use are passed over.
#[derive(Debug, Default)]
pub struct Car {
    /// T1, T2, B1, B2, indexed by [`List::index`].
    lists: [Queue; 4],
    /// Every id on a list.
    entries: IdMap<Entry>,
    next_ticket: u64,
    /// Target size of T1, in `0..=c`.
    p: usize,
    /// Cache size in objects: the most objects ever resident at once.
    c: usize,
}

impl Car {
    /// An empty CAR policy: no resident object, no ghost, `p = 0`, `c = 0`.
    pub fn new() -> Self {
        Self::default()
    }

    fn len(&self, list: List) -> usize {
        self.lists[list.index()].live
    }

    fn list_of(&self, id: ObjectId) -> Option<List> {
        self.entries.get(&id).map(|e| e.list)
    }

    /// Number of ids on all four lists.
    fn directory_len(&self) -> usize {
        self.lists.iter().map(|q| q.live).sum()
    }

    /// Puts `id` at the tail of `list` (leaving its previous slot, if any, stale).
    fn push_back(&mut self, id: ObjectId, list: List, referenced: bool) {
        let ticket = self.next_ticket;
        self.next_ticket = self.next_ticket.wrapping_add(1);
        let entry = Entry {
            list,
            ticket,
            referenced,
        };
        if let Some(old) = self.entries.insert(id, entry) {
            let q = &mut self.lists[old.list.index()];
            q.live = q.live.saturating_sub(1);
        }
        let q = &mut self.lists[list.index()];
        q.slots.push_back((id, ticket));
        q.live += 1;
    }

    /// Takes `id` off its list, if it is on one.
    fn detach(&mut self, id: ObjectId) -> Option<Entry> {
        let entry = self.entries.remove(&id)?;
        let q = &mut self.lists[entry.list.index()];
        q.live = q.live.saturating_sub(1);
        self.compact(entry.list);
        Some(entry)
    }

    /// Drops stale slots at the head of `list`, and all of them once there are too many.
    /// Never called during a sweep, whose hands are positions in the slots.
    fn compact(&mut self, list: List) {
        let q = &mut self.lists[list.index()];
        while let Some(&slot) = q.slots.front() {
            if is_live(&self.entries, list, slot) {
                break;
            }
            q.slots.pop_front();
        }
        if q.slots.len() > 2 * q.live + COMPACT_SLACK {
            let entries = &self.entries;
            q.slots.retain(|&slot| is_live(entries, list, slot));
        }
    }

    /// Live ids of `list`, head first.
    fn live_ids(&self, list: List) -> impl Iterator<Item = ObjectId> + '_ {
        self.lists[list.index()]
            .slots
            .iter()
            .filter(move |&&slot| is_live(&self.entries, list, slot))
            .map(|&(id, _)| id)
    }

    /// Discards the head (LRU end) of a ghost list.
    fn discard_lru(&mut self, list: List) -> Option<ObjectId> {
        let id = self.live_ids(list).next()?;
        self.detach(id);
        Some(id)
    }

    /// The paper's cache directory replacement before a new id enters T1, with `c` already
    /// counting the new object: afterwards `|T1| + |B1| < c` and the directory holds fewer
    /// than `2c` ids.
    fn trim_directory(&mut self) {
        let c = self.c;
        while self.len(List::T1) + self.len(List::B1) >= c {
            if self.discard_lru(List::B1).is_none() {
                break;
            }
        }
        // Under the paper's invariants this only runs when the loop above did not (the
        // `elseif`), and B2 is not empty then; the fallback to B1 guards against the
        // impossible.
        while self.directory_len() >= c.saturating_mul(2) {
            let discarded = self
                .discard_lru(List::B2)
                .or_else(|| self.discard_lru(List::B1));
            if discarded.is_none() {
                break;
            }
        }
    }

    /// The paper's `replace()` without the demotion (that is `on_evict`): see the module
    /// documentation for objects in use.
    fn sweep(&mut self, view: &dyn ResidentView) -> Option<ObjectId> {
        // Hands: positions in the slots of T1 and T2. Every step advances one of them or
        // returns. T1 never grows during a sweep; T2 grows by at most one slot per resident
        // object (each one's bit is cleared at most once), so the budget is never reached.
        let mut hands = [0usize; 2];
        let live = self.len(List::T1) + self.len(List::T2);
        let slots = self.lists[0].slots.len() + self.lists[1].slots.len();
        let budget = slots + 2 * live + 1;
        for _ in 0..budget {
            let t1_passed = hands[0] >= self.lists[0].slots.len();
            let t2_passed = hands[1] >= self.lists[1].slots.len();
            let list = match (t1_passed, t2_passed) {
                // Everything left on either clock is in use with its bit clear.
                (true, true) => return None,
                (false, true) => List::T1,
                (true, false) => List::T2,
                (false, false) if self.len(List::T1) >= self.p.max(1) => List::T1,
                (false, false) => List::T2,
            };
            let hand = &mut hands[list.index()];
            let Some(&slot) = self.lists[list.index()].slots.get(*hand) else {
                continue;
            };
            *hand += 1;
            let (id, ticket) = slot;
            let Some(entry) = self.entries.get(&id).copied() else {
                continue;
            };
            if entry.list != list || entry.ticket != ticket {
                continue; // stale slot
            }
            if entry.referenced {
                // Second chance: clear the bit, move to T2's tail (from T1 or from T2).
                self.push_back(id, List::T2, false);
            } else if view.is_evictable(id) {
                return Some(id);
            }
            // Otherwise in use: the hand passes it, it keeps its place.
        }
        self.live_ids(List::T1)
            .chain(self.live_ids(List::T2))
            .find(|&id| view.is_evictable(id))
    }

    /// The target size of T1.
    #[cfg(test)]
    fn target(&self) -> usize {
        self.p
    }

    /// The cache size the policy assumes.
    #[cfg(test)]
    fn capacity(&self) -> usize {
        self.c
    }

    /// Live ids of `list`, head first.
    #[cfg(test)]
    fn ids(&self, list: List) -> Vec<u64> {
        self.live_ids(list).map(|id| id.0).collect()
    }

    /// Panics unless the lists and the map agree and CAR's bounds hold.
    #[cfg(test)]
    fn check_invariants(&self) {
        for list in [List::T1, List::T2, List::B1, List::B2] {
            let ids = self.ids(list);
            assert_eq!(ids.len(), self.len(list), "{list:?}: live count");
            let on_list = self.entries.values().filter(|e| e.list == list).count();
            assert_eq!(ids.len(), on_list, "{list:?}: map and slots disagree");
            let mut dedup = ids.clone();
            dedup.sort();
            dedup.dedup();
            assert_eq!(dedup.len(), ids.len(), "{list:?}: an id twice");
        }
        assert!(
            self.entries
                .values()
                .all(|e| e.list.is_resident() || !e.referenced),
            "a ghost with its reference bit set"
        );
        let (t1, t2, b1, b2) = (
            self.len(List::T1),
            self.len(List::T2),
            self.len(List::B1),
            self.len(List::B2),
        );
        let c = self.c;
        assert!(t1 + t2 <= c, "|T1| + |T2| = {} > c = {c}", t1 + t2);
        assert!(t1 + b1 <= c, "|T1| + |B1| = {} > c = {c}", t1 + b1);
        assert!(t1 + t2 + b1 + b2 <= 2 * c, "directory over 2c = {}", 2 * c);
        assert!(self.p <= c, "p = {} > c = {c}", self.p);
    }
}

impl EvictionPolicy for Car {
    fn name(&self) -> &'static str {
        "car"
    }

    fn on_insert(&mut self, id: ObjectId) {
        let ghost = match self.list_of(id) {
            Some(List::T1 | List::T2) => {
                // Already resident: the runtime would not do this; count it as a hit.
                self.on_hit(id);
                return;
            }
            other => other,
        };
        let resident = self.len(List::T1) + self.len(List::T2);
        self.c = self.c.max(resident.saturating_add(1));
        match ghost {
            Some(List::B1) => {
                let delta = (self.len(List::B2) / self.len(List::B1).max(1)).max(1);
                self.p = self.p.saturating_add(delta).min(self.c);
                self.detach(id);
                self.push_back(id, List::T2, false);
            }
            Some(List::B2) => {
                let delta = (self.len(List::B1) / self.len(List::B2).max(1)).max(1);
                self.p = self.p.saturating_sub(delta);
                self.detach(id);
                self.push_back(id, List::T2, false);
            }
            _ => {
                self.trim_directory();
                self.push_back(id, List::T1, false);
            }
        }
    }

    fn on_hit(&mut self, id: ObjectId) {
        if let Some(e) = self.entries.get_mut(&id) {
            e.referenced |= e.list.is_resident();
        }
    }

    fn on_evict(&mut self, id: ObjectId) {
        let ghost = match self.list_of(id) {
            Some(List::T1) => List::B1,
            Some(List::T2) => List::B2,
            _ => return,
        };
        self.detach(id);
        self.push_back(id, ghost, false);
    }

    fn on_remove(&mut self, id: ObjectId) {
        self.detach(id);
    }

    fn choose_victim(&mut self, view: &dyn ResidentView) -> Option<ObjectId> {
        let victim = self.sweep(view);
        self.compact(List::T1);
        self.compact(List::T2);
        victim
    }

    fn resident(&self) -> Vec<ObjectId> {
        self.live_ids(List::T1)
            .chain(self.live_ids(List::T2))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::super::Lru;
    use super::super::testing::{Everything, simulate};
    use super::*;

    fn id(i: u64) -> ObjectId {
        ObjectId(i)
    }

    /// Objects whose number is in the set are in use.
    struct Pinned(HashSet<u64>);

    impl ResidentView for Pinned {
        fn is_evictable(&self, id: ObjectId) -> bool {
            !self.0.contains(&id.0)
        }
        fn is_dirty(&self, _: ObjectId) -> bool {
            false
        }
    }

    #[test]
    fn first_time_objects_leave_in_fifo_order_and_become_ghosts() {
        let mut car = Car::new();
        let out = simulate(&mut car, 3, &[&[1, 2, 3, 4, 5]]);
        assert_eq!(out.evicted, vec![1, 2]);
        assert_eq!(car.capacity(), 3);
        assert_eq!(car.ids(List::T1), vec![3, 4, 5]);
        // |T1| + |B1| <= c leaves no room for ghosts while T1 fills the cache.
        assert_eq!(car.ids(List::B1), Vec::<u64>::new());
        car.check_invariants();
    }

    /// Room for 4. A working set {1, 2, 3} is used three times, then 8 objects are each used
    /// once (a scan), then the working set is used three times again.
    ///
    /// LRU: the scan pushes the working set out (4 new objects suffice), so its first use
    /// after the scan misses 3 times. Hits: 6 before, 6 after.
    ///
    /// CAR: the working set sits in T1 with its bits set when the scan begins; the first
    /// replacement moves it to T2 and evicts the scan's first object, and from then on each
    /// scan object, alone in T1 with its bit clear and `|T1| >= max(1, p)` with `p = 0`,
    /// evicts the previous one. The working set never leaves. Hits: 6 before, 9 after.
    #[test]
    fn a_scan_does_not_flush_the_working_set() {
        let ws: &[u64] = &[1, 2, 3];
        let scan: &[u64] = &[10, 11, 12, 13, 14, 15, 16, 17];
        let trace: &[&[u64]] = &[ws, ws, ws, scan, ws, ws, ws];
        let lru = simulate(&mut Lru::new(), 4, trace);
        let mut car = Car::new();
        let out = simulate(&mut car, 4, trace);
        assert_eq!((lru.hits, lru.misses), (12, 14));
        assert_eq!((out.hits, out.misses), (15, 11));
        assert!(out.hits > lru.hits);
        assert!(
            out.evicted.iter().all(|v| !ws.contains(v)),
            "{:?}",
            out.evicted
        );
        let mut t2 = car.ids(List::T2);
        t2.sort();
        assert_eq!(t2, ws);
        car.check_invariants();
    }

    /// A miss with the cache full: evict CAR's choice, then insert `x`. Returns the victim.
    fn miss(car: &mut Car, x: u64) -> u64 {
        let victim = car.choose_victim(&Everything).expect("a victim");
        car.on_evict(victim);
        car.on_insert(id(x));
        car.check_invariants();
        victim.0
    }

    /// Room for 4: 1 and 2 are used twice (bits set), 3 and 4 once. The miss on 5 sweeps 1
    /// and 2 into T2 and evicts 3 (T1's head, bit clear) into B1. The miss on 3 evicts 4 into
    /// B1 and finds 3 there: `p` rises by `max(1, |B2| / |B1|) = max(1, 0 / 2) = 1` and 3
    /// enters T2.
    #[test]
    fn a_ghost_hit_in_b1_raises_the_target() {
        let before = [1, 2, 1, 2, 3, 4, 5];
        let mut car = Car::new();
        let out = simulate(&mut car, 4, &[&before]);
        assert_eq!(out.evicted, vec![3]);
        assert_eq!(car.ids(List::B1), vec![3]);
        assert_eq!(car.target(), 0);

        let mut car = Car::new();
        let out = simulate(&mut car, 4, &[&before, &[3]]);
        assert_eq!(out.evicted, vec![3, 4]);
        assert_eq!((out.hits, out.misses), (2, 6));
        assert_eq!(car.target(), 1, "a ghost hit in B1 raises p");
        assert_eq!(car.ids(List::T1), vec![5]);
        assert_eq!(car.ids(List::T2), vec![1, 2, 3]);
        assert_eq!(car.ids(List::B1), vec![4]);
        car.check_invariants();
    }

    /// Drives the policy by hand with room for 4 and checks every state: two ghost hits in
    /// B1 take `p` to 2, T2 then loses two objects to B2 (T1 being under target), and a
    /// ghost hit in B2 brings `p` back down by `max(1, |B1| / |B2|) = 1`.
    #[test]
    fn a_ghost_hit_in_b2_lowers_the_target() {
        let mut car = Car::new();
        for i in 1..=4 {
            car.on_insert(id(i));
        }
        car.on_hit(id(1));
        car.on_hit(id(2));
        assert_eq!(miss(&mut car, 5), 3); // 1 and 2 swept into T2
        assert_eq!(miss(&mut car, 3), 4); // ghost hit in B1
        assert_eq!(car.target(), 1);
        assert_eq!(miss(&mut car, 4), 5); // |T1| = 1 >= p: 5 goes; ghost hit in B1
        assert_eq!(car.target(), 2);
        assert_eq!(car.ids(List::T1), Vec::<u64>::new());
        assert_eq!(car.ids(List::T2), vec![1, 2, 3, 4]);
        assert_eq!(car.ids(List::B1), vec![5]);
        assert_eq!(miss(&mut car, 6), 1); // |T1| = 0 < p: T2's head goes to B2
        assert_eq!(miss(&mut car, 7), 2); // |T1| = 1 < p: again
        assert_eq!(car.ids(List::B2), vec![1, 2]);
        assert_eq!(car.ids(List::T1), vec![6, 7]);
        assert_eq!(miss(&mut car, 1), 6); // |T1| = 2 >= p: 6 goes; ghost hit in B2
        assert_eq!(car.target(), 1, "a ghost hit in B2 lowers p");
        assert_eq!(car.ids(List::T1), vec![7]);
        assert_eq!(car.ids(List::T2), vec![3, 4, 1]);
        assert_eq!(car.ids(List::B1), vec![5, 6]);
        assert_eq!(car.ids(List::B2), vec![2]);
        // A referenced T2 head gets a second chance: its bit is cleared and it goes to
        // T2's tail. |T1| = 1 >= p = 1, so T1's 7 goes first...
        car.on_hit(id(3));
        assert_eq!(miss(&mut car, 8), 7);
        // ...then |T1| = 1 >= 1 again: 8 goes, and 2, still in B2, comes back with
        // |B1| / |B2| = 4: p drops by 4, to 0.
        assert_eq!(miss(&mut car, 2), 8);
        assert_eq!(car.ids(List::B1), vec![5, 6, 7, 8]);
        assert_eq!(car.target(), 0);
        // T1 empty: sweep T2 = [3*, 4, 1, 2]: 3 to the tail with its bit cleared, 4 goes to
        // B2. 9 is new and |T1| + |B1| = c: B1's LRU id, 5, is discarded.
        assert_eq!(miss(&mut car, 9), 4);
        assert_eq!(car.ids(List::T1), vec![9]);
        assert_eq!(car.ids(List::T2), vec![1, 2, 3]);
        assert_eq!(car.ids(List::B1), vec![6, 7, 8]);
        assert_eq!(car.ids(List::B2), vec![4]);
    }

    #[test]
    fn in_use_objects_are_passed_over_and_keep_their_place() {
        let mut car = Car::new();
        for i in 1..=4 {
            car.on_insert(id(i));
        }
        car.on_hit(id(2));
        // 1 is in use: the hand passes it; 2 has its bit set and moves to T2; 3 goes.
        let view = Pinned(HashSet::from([1]));
        assert_eq!(car.choose_victim(&view), Some(id(3)));
        assert_eq!(car.ids(List::T1), vec![1, 3, 4]);
        assert_eq!(car.ids(List::T2), vec![2]);
        // Say that eviction failed: the runtime reports nothing and 3 stays resident.
        // Everything is in use: no victim, and the lists are unchanged.
        let all = Pinned(HashSet::from([1, 2, 3, 4]));
        assert_eq!(car.choose_victim(&all), None);
        assert_eq!(car.ids(List::T1), vec![1, 3, 4]);
        assert_eq!(car.ids(List::T2), vec![2]);
        // Only the T2 object is free: the sweep falls through to T2 although T1 is large.
        let t1_busy = Pinned(HashSet::from([1, 3, 4]));
        assert_eq!(car.choose_victim(&t1_busy), Some(id(2)));
        car.on_evict(id(2));
        assert_eq!(car.ids(List::B2), vec![2]);
        // Released, 1 is the first candidate again.
        assert_eq!(car.choose_victim(&Everything), Some(id(1)));
        car.check_invariants();
        let mut resident = car.resident();
        resident.sort();
        assert_eq!(resident, vec![id(1), id(3), id(4)]);
    }

    #[test]
    fn removal_leaves_no_ghost() {
        let mut car = Car::new();
        // Room for 2: the miss on 3 sweeps 1 (bit set) into T2 and evicts 2 into B1.
        simulate(&mut car, 2, &[&[1, 2, 1, 3]]);
        assert_eq!(
            (car.ids(List::T1), car.ids(List::T2), car.ids(List::B1)),
            (vec![3], vec![1], vec![2])
        );
        // Removing a resident object leaves no ghost; removing a ghost drops it.
        for i in 1..=3 {
            car.on_remove(id(i));
        }
        assert!(car.resident().is_empty());
        assert!(car.entries.is_empty());
        car.check_invariants();
        car.on_hit(id(1)); // unknown: ignored
        car.on_evict(id(1)); // unknown: ignored
        assert!(car.entries.is_empty());
    }

    fn random_vectors(seed: u64, len: usize, universe: u64) -> Vec<Vec<u64>> {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..len)
            .map(|_| {
                let n = rng.random_range(1..5);
                // A skewed draw: half the uses from a small hot set.
                let mut v: Vec<u64> = (0..n)
                    .map(|_| {
                        if rng.random_range(0..2) == 0 {
                            rng.random_range(0..universe / 4 + 1)
                        } else {
                            rng.random_range(0..universe)
                        }
                    })
                    .collect();
                v.sort();
                v.dedup();
                v
            })
            .collect()
    }

    #[test]
    fn random_traces_keep_the_resident_set_exact() {
        for (seed, slots, universe) in [(1, 4, 16), (2, 8, 64), (3, 16, 40), (4, 1, 5)] {
            let vectors = random_vectors(seed, 2000, universe);
            let refs: Vec<&[u64]> = vectors.iter().map(Vec::as_slice).collect();
            let mut car = Car::new();
            // `simulate` compares `resident()` with the real resident set after every miss.
            let out = simulate(&mut car, slots, &refs);
            let accesses: usize = vectors.iter().map(Vec::len).sum();
            assert_eq!(out.hits + out.misses, accesses);
            assert_eq!(car.capacity(), slots);
            car.check_invariants();
        }
    }

    /// Random inserts, hits, removals and evictions with random objects in use and random
    /// failed evictions, checking the invariants and the resident set after every call.
    #[test]
    fn random_protocol_keeps_invariants() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut car = Car::new();
        let mut resident: HashSet<u64> = HashSet::new();
        let mut slots = 6;
        let mut targets = HashSet::new();
        for step in 0..20_000 {
            if step % 5000 == 4999 {
                slots += 3; // more memory: c grows
            }
            let x = rng.random_range(0..30);
            match rng.random_range(0..10) {
                0 => {
                    car.on_remove(id(x));
                    resident.remove(&x);
                }
                _ if resident.contains(&x) => car.on_hit(id(x)),
                _ => {
                    // Evict until there is room (sometimes one more, as with large objects).
                    let extra = usize::from(rng.random_range(0..8) == 0);
                    while resident.len() + extra >= slots && !resident.is_empty() {
                        let busy: HashSet<u64> = resident
                            .iter()
                            .copied()
                            .filter(|_| rng.random_range(0..4) == 0)
                            .collect();
                        let view = Pinned(busy.clone());
                        match car.choose_victim(&view) {
                            Some(v) => {
                                assert!(resident.contains(&v.0), "victim {v} not resident");
                                assert!(!busy.contains(&v.0), "victim {v} in use");
                                if rng.random_range(0..6) == 0 {
                                    continue; // the eviction failed
                                }
                                resident.remove(&v.0);
                                car.on_evict(v);
                            }
                            None => {
                                assert_eq!(busy.len(), resident.len(), "a free object missed");
                            }
                        }
                        car.check_invariants();
                    }
                    resident.insert(x);
                    car.on_insert(id(x));
                }
            }
            car.check_invariants();
            targets.insert(car.target());
            let mut tracked: Vec<u64> = car.resident().iter().map(|i| i.0).collect();
            tracked.sort();
            let mut actual: Vec<u64> = resident.iter().copied().collect();
            actual.sort();
            assert_eq!(tracked, actual, "step {step}");
        }
        assert!(targets.len() > 2, "p hardly moved: {targets:?}");
    }
}
