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

use std::collections::BinaryHeap;
use std::num::NonZeroU64;

use smallvec::SmallVec;

use super::{EvictionPolicy, ResidentView};
use crate::{IdSet, IdTable, ObjectId};

/// Key of an object never used again: larger than every position.
const NEVER: u64 = u64::MAX;

/// What `next_use` holds for an object never used again that a victim search found dirty (its
/// key is still [`NEVER`]; this marks its class).
const NEVER_DIRTY: u64 = u64::MAX - 1;

/// A key (a position, [`NEVER`] or [`NEVER_DIRTY`]) as the per-object tables hold it: with its
/// top bit flipped, so that it is never zero and a table slot (`Option<Packed>`) takes 8 bytes,
/// not 16. On a long queue those tables outgrow the caches, and a slot half the size is half
/// the memory a lookup at random draws from. A position is an index into a slice, below 2^63,
/// so only 2^63 itself, which no position reaches, has no packed form: it packs as [`NEVER`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Packed(NonZeroU64);

const FLIP: u64 = 1 << 63;

impl Packed {
    /// [`NEVER`], packed.
    const NEVER: NonZeroU64 = NonZeroU64::MIN.saturating_add((NEVER ^ FLIP) - 1);

    fn new(key: u64) -> Self {
        Packed(NonZeroU64::new(key ^ FLIP).unwrap_or(Self::NEVER))
    }

    fn get(self) -> u64 {
        self.0.get() ^ FLIP
    }
}

/// The Belady (MIN) policy.
///
/// The plan is a next-use table built once, in linear time, by [`EvictionPolicy::set_future`]:
/// for every position of the access sequence, the position of the same object's next use. An
/// object's next use is a cursor into that table, advanced in O(1) by each use. Resident objects
/// are kept ordered, so a victim is found in O(log n), amortised, in three lazy max-heaps:
///
/// * objects with a next use, keyed by it;
/// * objects never used again, by id, in two classes: those not known to be dirty, and those
///   seen dirty when a victim was last chosen. A victim search classifies the first lazily
///   (each object moves at most once per use or sync), so preferring a clean object among the
///   never-used costs no scan of the dirty ones.
///
/// A change pushes the object's new entry and leaves the old one in place, stale: an entry is
/// live while `next_use` holds its key (or its class). Where a search tree would remove the old
/// entry and insert the new, two walks down a tree of every resident object, cache misses on a
/// long queue, a push moves an entry up a level or two on average. A victim search drops the
/// stale entries it meets at the top, and the heaps are compacted when stale entries outnumber
/// the resident objects.
#[derive(Debug, Default)]
pub struct Belady {
    /// For every position of the planned sequence, the position of the next use of the same
    /// object ([`NEVER`] if none).
    next_at: Vec<u64>,
    /// Every planned object's next unconsumed use ([`NEVER`] once all are consumed).
    cursor: IdTable<Packed>,
    /// Resident objects with a next use, keyed by it, the furthest on top.
    by_next_use: BinaryHeap<(u64, ObjectId)>,
    /// Resident objects never used again, not seen dirty, the highest id on top.
    never_clean: BinaryHeap<ObjectId>,
    /// Resident objects never used again, seen dirty (and not synced since).
    never_dirty: BinaryHeap<ObjectId>,
    /// Every resident object's key: its next use, [`NEVER`], or [`NEVER_DIRTY`].
    next_use: IdTable<Packed>,
}

/// The highest entry of `heap` that is live and evictable, left in the heap; the stale entries
/// above it are dropped, and the live ones that are not evictable (a launch pins a handful) are
/// put back, so it may no longer be on top.
fn top_evictable<T: Ord + Copy>(
    heap: &mut BinaryHeap<T>,
    live: impl Fn(&T) -> bool,
    evictable: impl Fn(&T) -> bool,
) -> Option<T> {
    // Inline: a victim search allocates nothing for the handful of busy entries.
    let mut busy: SmallVec<[T; 8]> = SmallVec::new();
    let mut found = None;
    while let Some(&top) = heap.peek() {
        if !live(&top) {
            heap.pop();
        } else if !evictable(&top) {
            busy.extend(heap.pop());
        } else {
            found = Some(top);
            break;
        }
    }
    heap.extend(busy);
    found
}

/// The key `next_use` holds for `id`, unpacked: a heap entry of `id` under another key is
/// stale.
fn live_key(next_use: &IdTable<Packed>, id: ObjectId) -> Option<u64> {
    next_use.get(&id).map(|k| k.get())
}

impl Belady {
    /// A policy with no future known yet (until [`EvictionPolicy::set_future`], every object
    /// counts as never used again).
    pub fn new() -> Self {
        Self::default()
    }

    fn key(&self, id: ObjectId) -> u64 {
        self.cursor.get(&id).map_or(NEVER, |c| c.get())
    }

    fn reposition(&mut self, id: ObjectId) {
        let old = self.forget(id);
        let k = self.key(id);
        // The key first: compaction keeps the entries that match it.
        self.next_use.insert(id, Packed::new(k));
        // With the same key, the entry pushed for it is still live.
        if old != Some(k) {
            if k == NEVER {
                self.never_clean.push(id);
            } else {
                self.by_next_use.push((k, id));
            }
            self.compact();
        }
    }

    /// Drops the stale heap entries once they outnumber the resident objects (plus a slack):
    /// O(1) per change, amortised, since that many changes pushed entries since the last time.
    ///
    /// An entry can also come back to life: an object evicted and then prefetched returns to
    /// its old key, one found dirty and then synced to the clean class. Its old entries are
    /// then live next to the new one. Each object is live in one heap only, so when more live
    /// entries remain than resident objects, one entry per object is kept; without this, an
    /// object cycling so would pile up entries that no compaction drops.
    fn compact(&mut self) {
        let entries = self.by_next_use.len() + self.never_clean.len() + self.never_dirty.len();
        if entries <= 2 * self.next_use.len() + 64 {
            return;
        }
        let next_use = &self.next_use;
        let live = |id: &ObjectId, k: u64| live_key(next_use, *id) == Some(k);
        self.by_next_use.retain(|(k, id)| live(id, *k));
        self.never_clean.retain(|id| live(id, NEVER));
        self.never_dirty.retain(|id| live(id, NEVER_DIRTY));
        let entries = self.by_next_use.len() + self.never_clean.len() + self.never_dirty.len();
        if entries > next_use.len() {
            let mut kept = IdSet::default();
            self.by_next_use.retain(|(_, id)| kept.insert(*id));
            self.never_clean.retain(|id| kept.insert(*id));
            self.never_dirty.retain(|id| kept.insert(*id));
        }
    }

    /// Marks the next planned use of `id` as done.
    fn consume(&mut self, id: ObjectId) {
        if let Some(c) = self.cursor.get_mut(&id)
            && c.get() != NEVER
        {
            *c = Packed::new(
                usize::try_from(c.get())
                    .ok()
                    .and_then(|p| self.next_at.get(p))
                    .copied()
                    .unwrap_or(NEVER),
            );
        }
    }

    /// Stops tracking `id`; returns what `next_use` held. Its heap entries turn stale.
    fn forget(&mut self, id: ObjectId) -> Option<u64> {
        self.next_use.remove(&id).map(Packed::get)
    }
}

impl EvictionPolicy for Belady {
    fn name(&self) -> &'static str {
        "belady"
    }

    fn on_register(&mut self, id: ObjectId) {
        self.next_use.reserve(id);
    }

    fn on_insert(&mut self, id: ObjectId) {
        self.consume(id);
        self.reposition(id);
    }

    fn on_hit(&mut self, id: ObjectId) {
        self.consume(id);
        self.reposition(id);
    }

    fn on_prefetch(&mut self, id: ObjectId) {
        // Resident ahead of its next use, which stays its key.
        self.reposition(id);
    }

    fn on_evict(&mut self, id: ObjectId) {
        let _ = self.forget(id);
    }

    fn on_remove(&mut self, id: ObjectId) {
        let _ = self.forget(id);
    }

    fn on_synced(&mut self, id: ObjectId) {
        if let Some(k) = self.next_use.get_mut(&id)
            && k.get() == NEVER_DIRTY
        {
            *k = Packed::new(NEVER);
            self.never_clean.push(id);
            self.compact();
        }
    }

    fn choose_victim(&mut self, view: &dyn ResidentView) -> Option<ObjectId> {
        // Objects never used again go first, the highest id first; among them one that needs
        // no write-back. Dirty ones met on the way move to the dirty class for good (until a
        // sync or a use), so each is looked at once.
        loop {
            let next_use = &self.next_use;
            let top = top_evictable(
                &mut self.never_clean,
                |id| live_key(next_use, *id) == Some(NEVER),
                |&id| view.is_evictable(id),
            );
            match top {
                Some(id) if view.is_dirty(id) => {
                    // Its clean entry turns stale (busy entries may sit above it again).
                    self.next_use.insert(id, Packed::new(NEVER_DIRTY));
                    self.never_dirty.push(id);
                }
                Some(id) => return Some(id),
                None => break,
            }
        }
        let next_use = &self.next_use;
        if let Some(id) = top_evictable(
            &mut self.never_dirty,
            |id| live_key(next_use, *id) == Some(NEVER_DIRTY),
            |&id| view.is_evictable(id),
        ) {
            return Some(id);
        }
        top_evictable(
            &mut self.by_next_use,
            |(k, id)| live_key(next_use, *id) == Some(*k),
            |&(_, id)| view.is_evictable(id),
        )
        .map(|(_, id)| id)
    }

    fn set_future(&mut self, accesses: &[ObjectId]) {
        // One pass from the end: the next use after each position, and each object's first.
        self.cursor.clear();
        self.next_at = vec![NEVER; accesses.len()];
        for (pos, &id) in accesses.iter().enumerate().rev() {
            if let Some(later) = self.cursor.insert(id, Packed::new(pos as u64)) {
                self.next_at[pos] = later.get();
            }
        }
        let resident: Vec<_> = self.next_use.keys().collect();
        self.by_next_use.clear();
        self.never_clean.clear();
        self.never_dirty.clear();
        for id in resident {
            let _ = self.forget(id);
            self.reposition(id);
        }
    }

    fn touch(&self, ids: &[ObjectId]) -> u64 {
        // A use reads the object's cursor, the next use after it, and its key.
        let read = |id: &ObjectId| {
            let at = self.key(*id);
            let after = usize::try_from(at).ok().and_then(|p| self.next_at.get(p));
            let key = self.next_use.get(id).map_or(0, |k| k.get());
            after.copied().unwrap_or(0) ^ key
        };
        ids.iter().map(read).fold(0, u64::wrapping_add)
    }

    fn resident(&self) -> Vec<ObjectId> {
        self.next_use.keys().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::simulate;
    use super::*;

    #[test]
    fn keys_pack_into_eight_bytes_and_back() {
        assert_eq!(std::mem::size_of::<Option<Packed>>(), 8);
        for key in [0, 1, 41, (1 << 63) - 1, NEVER_DIRTY, NEVER] {
            assert_eq!(Packed::new(key).get(), key);
        }
        // The one value with no packed form, reached by no position, reads as never used.
        assert_eq!(Packed::new(1 << 63).get(), NEVER);
    }

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

    #[test]
    fn touching_changes_no_victim() {
        // Two policies see the same uses; one is also touched, on known and unknown objects,
        // before each: every victim is the same, and a touch reads what a use reads.
        let seq: Vec<ObjectId> = [1, 2, 3, 1, 4, 2, 5, 1, 3, 6, 2].map(ObjectId).to_vec();
        let (mut plain, mut touched) = (Belady::new(), Belady::new());
        plain.set_future(&seq);
        touched.set_future(&seq);
        let mut resident: Vec<ObjectId> = Vec::new();
        for &id in &seq {
            touched.touch(&[id, ObjectId(99), ObjectId(2)]);
            for p in [&mut plain, &mut touched] {
                match resident.contains(&id) {
                    true => p.on_hit(id),
                    false => p.on_insert(id),
                }
            }
            if !resident.contains(&id) {
                resident.push(id);
            }
            if resident.len() > 3 {
                let victim = plain.choose_victim(&BusyBy(0));
                assert_eq!(touched.choose_victim(&BusyBy(0)), victim);
                let victim = victim.expect("a victim among four");
                resident.retain(|&r| r != victim);
                plain.on_evict(victim);
                touched.on_evict(victim);
            }
        }
        assert_eq!(touched.touch(&[]), 0);
        assert_eq!(touched.touch(&[ObjectId(3)]), plain.touch(&[ObjectId(3)]));
    }

    /// Evictable unless `id + step` is a multiple of 5: a different set of busy objects at each
    /// step. Objects whose id is a multiple of 3 are dirty.
    struct BusyBy(u64);
    impl ResidentView for BusyBy {
        fn is_evictable(&self, id: ObjectId) -> bool {
            !(id.0 + self.0).is_multiple_of(5)
        }
        fn is_dirty(&self, id: ObjectId) -> bool {
            id.0.is_multiple_of(3)
        }
    }

    /// On random sequences, with busy and dirty objects and prefetches, every victim is the one
    /// a brute-force search picks: among the evictable resident objects, one never used again
    /// (clean before dirty, the highest id), else the one whose next use is furthest. This exercises the heap's
    /// stale entries, compaction and the busy entries it puts back.
    #[test]
    fn victims_match_a_brute_force_search() {
        // Half the uses from 40 long-lived objects, half from a window of 16 that slides over
        // fresh ones: objects keep dying, so the never-used classes stay busy too.
        let (slots, len) = (12usize, 4000usize);
        let mut x = 12_345u64;
        let mut next = || {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            x >> 33
        };
        let seq: Vec<ObjectId> = (0..len as u64)
            .map(|t| match next() % 2 {
                0 => ObjectId(next() % 40),
                _ => ObjectId(40 + t / 8 + next() % 16),
            })
            .collect();
        let objects = 40 + len as u64 / 8 + 16;
        let next_use = |id: ObjectId, from: usize| {
            seq[from..]
                .iter()
                .position(|&o| o == id)
                .map_or(NEVER, |p| (from + p) as u64)
        };
        let mut p = Belady::new();
        (0..objects).for_each(|i| p.on_register(ObjectId(i)));
        p.set_future(&seq);
        let mut resident: Vec<ObjectId> = Vec::new();
        let mut evictions = 0;
        for (t, &id) in seq.iter().enumerate() {
            if resident.contains(&id) {
                p.on_hit(id);
                continue;
            }
            if resident.len() >= slots {
                let view = BusyBy(t as u64);
                let candidates = resident.iter().copied().filter(|&r| view.is_evictable(r));
                // Never used again and clean, then never used again and dirty (each the highest
                // id), then the furthest next use.
                let want = candidates.max_by_key(|&r| match next_use(r, t) {
                    NEVER => (2 - u64::from(view.is_dirty(r)), r.0),
                    k => (0, k),
                });
                let got = p.choose_victim(&view);
                assert_eq!(got, want, "step {t}");
                let victim = got.expect("a victim");
                resident.retain(|&r| r != victim);
                p.on_evict(victim);
                evictions += 1;
            }
            resident.push(id);
            p.on_insert(id);
            // Now and then, bring in the object used next (a prefetch) when there is room.
            if let Some(&ahead) = seq.get(t + 1)
                && t.is_multiple_of(7)
                && resident.len() < slots
                && !resident.contains(&ahead)
            {
                resident.push(ahead);
                p.on_prefetch(ahead);
            }
        }
        assert!(evictions > 500, "only {evictions} evictions");
        let mut tracked = p.resident();
        tracked.sort();
        resident.sort();
        assert_eq!(tracked, resident);
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

    /// Objects 1..=3 never used again; `dirty` are dirty, `busy` are not evictable.
    struct States {
        dirty: Vec<u64>,
        busy: Vec<u64>,
    }
    impl ResidentView for States {
        fn is_evictable(&self, id: ObjectId) -> bool {
            !self.busy.contains(&id.0)
        }
        fn is_dirty(&self, id: ObjectId) -> bool {
            self.dirty.contains(&id.0)
        }
    }

    /// An object evicted and prefetched back, over and over, keeps its key (no use consumes
    /// it), so each time its old entries come back to life next to the new one: compaction
    /// keeps one per object, so the heaps stay bounded by the resident objects.
    #[test]
    fn revived_entries_do_not_pile_up() {
        let mut p = Belady::new();
        p.set_future(&[1, 2, 3, 1, 2, 3].map(ObjectId));
        for i in 1..=3 {
            p.on_insert(ObjectId(i));
        }
        let all = States {
            dirty: vec![],
            busy: vec![],
        };
        for _ in 0..1000 {
            assert_eq!(p.choose_victim(&all), Some(ObjectId(3)));
            p.on_evict(ObjectId(3));
            p.on_prefetch(ObjectId(3));
        }
        let entries = p.by_next_use.len() + p.never_clean.len() + p.never_dirty.len();
        assert!(
            entries <= 2 * 3 + 64 + 1,
            "{entries} heap entries for 3 objects"
        );
        let mut tracked = p.resident();
        tracked.sort();
        assert_eq!(tracked, [1, 2, 3].map(ObjectId));
    }

    #[test]
    fn a_synced_object_counts_as_clean_again() {
        let mut p = Belady::new();
        for i in 1..=3 {
            p.on_insert(ObjectId(i));
        }
        let first = States {
            dirty: vec![2, 3],
            busy: vec![],
        };
        assert_eq!(p.choose_victim(&first), Some(ObjectId(1)));
        // 2 is written back to the host: among 2 and 3 (1 busy), 2 needs no write-back.
        p.on_synced(ObjectId(2));
        let second = States {
            dirty: vec![3],
            busy: vec![1],
        };
        assert_eq!(p.choose_victim(&second), Some(ObjectId(2)));
        // Without clean candidates the highest dirty one goes, before any object used again.
        p.set_future(&[ObjectId(4), ObjectId(1), ObjectId(4)]);
        p.on_insert(ObjectId(4));
        let third = States {
            dirty: vec![2, 3],
            busy: vec![],
        };
        assert_eq!(p.choose_victim(&third), Some(ObjectId(3)));
        let mut tracked = p.resident();
        tracked.sort();
        assert_eq!(tracked, [1, 2, 3, 4].map(ObjectId));
    }
}
