//! CLOCK-Pro (Jiang, Chen and Zhang, USENIX ATC 2005): CLOCK with LIRS's reuse-distance
//! classification, so that pages used once (a scan) cannot flush a working set that is used
//! again and again.
//!
//! # The algorithm
//!
//! Every page the policy knows sits on one circular list, in the order of its last move to the
//! *list head*. A page is
//!
//! - **hot**: resident, with a small reuse distance; never replaced while hot;
//! - **cold** (resident): the pages replacement picks from;
//! - **non-resident cold**: an evicted cold page kept as history while its *test period* lasts.
//!
//! Each page has a reference bit, set by a hit. A cold page starts a test period when it comes in
//! (or when it is found referenced outside one); the test period ends once the page is older
//! than the oldest hot page, which is when HAND_hot (or HAND_test) sweeps past it. A cold page
//! re-used within its test period has a reuse distance smaller than some hot page's recency, so
//! it becomes hot.
//!
//! Three hands move clockwise, the same way round the list; the list head is the position just
//! behind HAND_hot ("moving HAND_hot forward is equivalent to leaving the page it moves by at
//! the list head"), so a page placed at the head is the last one every hand reaches.
//!
//! - **HAND_cold** looks for a victim. On a resident cold page: reference bit 0 → the victim (it
//!   stays on the list as non-resident if in its test period, otherwise it leaves the list);
//!   reference bit 1 and in its test period → the page becomes hot (bit cleared, moved to the
//!   head) and HAND_hot runs if there are now too many hot pages; reference bit 1 outside a test
//!   period → bit cleared, new test period, moved to the head. Hot and non-resident pages are
//!   passed over.
//! - **HAND_hot** runs while there are more hot pages than `m - m_c`. On a hot page with
//!   reference bit 1 it clears the bit (the page stays hot); on a hot page with bit 0 it demotes
//!   the page to cold (outside a test period). On a cold page it ends the test period, and drops
//!   the page from the list if it is non-resident (doing HAND_test's work). A hand standing on
//!   the page HAND_hot leaves is carried along with it, so that no hand ever lags behind the
//!   list head.
//! - **HAND_test** runs while more than `m` non-resident pages are kept: it ends the test
//!   periods of the cold pages it meets, dropping the non-resident ones.
//!
//! On a miss, a page that is non-resident and in its test period becomes hot and goes to the
//! head (then HAND_hot runs if needed); any other page comes in as a resident cold page in its
//! test period, at the head.
//!
//! `m_c`, the target number of resident cold pages, adapts as in the paper: it grows by one
//! when a cold page turns out to have been re-used within its test period, and shrinks by one
//! when a test period ends without a re-use. As the paper says, "the aforementioned cold pages
//! include resident and non-resident cold pages": `m_c` grows on a fault on a non-resident page
//! in its test period, and also when HAND_cold promotes a referenced resident cold page, or
//! HAND_hot / HAND_test end the test period of a resident cold page whose reference bit is set.
//! (Simplified variants that count only non-resident faults keep `m_c` lower.) Hot pages are
//! kept to at most `m - m_c`.
//!
//! # Adaptation to this runtime
//!
//! - **Memory size.** The runtime does not tell the policy how many pages fit. `m` is the
//!   largest number of resident objects seen so far (a high-water mark raised on each insert);
//!   with equal-sized objects this is the number of slots once memory has filled. `m` never
//!   shrinks. `m_c` starts at 1 (the paper leaves the initial value open, and `m` is unknown at
//!   the start, so a fraction of it is not available) and is kept in `[1, m - 1]` (`1` while
//!   `m < 2`). The number of non-resident pages never exceeds `m`.
//! - **Who evicts.** The runtime, not the policy, decides when to evict: it calls
//!   [`choose_victim`](EvictionPolicy::choose_victim) only when memory is short. HAND_cold's
//!   sweep runs there (it may promote, re-test and move pages, and run HAND_hot), but it stops
//!   *on* the victim without changing it: the victim only becomes non-resident (or leaves the
//!   list) in [`on_evict`](EvictionPolicy::on_evict), after which HAND_cold moves past it and
//!   HAND_test trims the history to `m`. If the eviction fails, the runtime says nothing and
//!   the page simply stays resident and cold (and HAND_cold's next candidate). [`on_insert`](EvictionPolicy::on_insert) is the
//!   miss path, [`on_hit`](EvictionPolicy::on_hit) sets the reference bit, and
//!   [`on_remove`](EvictionPolicy::on_remove) forgets the object entirely, non-resident
//!   history included.
//! - **Pinned objects.** HAND_cold passes over unreferenced cold pages that
//!   [`ResidentView::is_evictable`] rejects, leaving them as they are (a referenced one is still
//!   promoted or re-tested, which evicts nothing).
//! - **Termination.** The paper's HAND_cold loops until it finds a victim. Here the sweep is
//!   bounded (three times the list length); if it finds nothing, the victim is the first
//!   evictable resident page, a cold one from HAND_cold onwards if any, otherwise a hot one from
//!   HAND_hot onwards (evicted hot pages leave the list: they have no test period). `None` is
//!   returned only when no resident page is evictable.
//! - **All resident pages hot.** With objects of different sizes fewer than `m` may be resident,
//!   so every resident page can be hot. HAND_cold then has nothing to look at, and HAND_hot is
//!   run until it demotes one page, which gives HAND_cold a candidate.
//! - **HAND_hot stops lazily.** HAND_hot moves one page at a time and stops as soon as the hot
//!   count is within `m - m_c` again (ending test periods lowers `m_c`, which can make a
//!   demotion unnecessary), rather than always going on to rest on the next hot page; the test
//!   periods it would have ended on the way are ended on its next run.

mod list;

use super::{EvictionPolicy, ResidentView};
use crate::{IdMap, ObjectId};

/// Class of a page on the clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// Resident, small reuse distance.
    Hot,
    /// Resident, large reuse distance: a candidate for replacement.
    Cold,
    /// Evicted cold page kept as history during its test period.
    NonResident,
}

/// One page on the circular list (a slot of [`ClockPro::nodes`]).
#[derive(Clone, Copy, Debug)]
struct Node {
    id: ObjectId,
    status: Status,
    /// The reference bit.
    referenced: bool,
    /// Whether the page is in its test period (always true for a non-resident page, never for a
    /// hot one).
    in_test: bool,
    /// Previous node on the list (counter-clockwise).
    prev: usize,
    /// Next node on the list (clockwise, the way the hands move).
    next: usize,
}

/// The CLOCK-Pro policy: hot, cold and non-resident cold pages on one clock with three hands.
#[derive(Debug)]
pub struct ClockPro {
    /// Slab of list nodes; `free` lists the unused slots.
    nodes: Vec<Node>,
    free: Vec<usize>,
    /// Every page on the list (resident or not) and its slot.
    index: IdMap<usize>,
    /// The three hands (`None` only while the list is empty). The list head is just behind
    /// `hand_hot`.
    hand_hot: Option<usize>,
    hand_cold: Option<usize>,
    hand_test: Option<usize>,
    /// Number of hot, resident cold and non-resident cold pages.
    hot: usize,
    cold: usize,
    non_resident: usize,
    /// `m`: the most resident objects seen at once.
    memory: usize,
    /// `m_c`: the adaptive target number of resident cold pages.
    cold_target: usize,
}

impl Default for ClockPro {
    fn default() -> Self {
        Self::new()
    }
}

impl ClockPro {
    /// An empty clock, with `m` still unknown and `m_c` = 1.
    pub fn new() -> Self {
        ClockPro {
            nodes: Vec::new(),
            free: Vec::new(),
            index: IdMap::default(),
            hand_hot: None,
            hand_cold: None,
            hand_test: None,
            hot: 0,
            cold: 0,
            non_resident: 0,
            memory: 0,
            cold_target: 1,
        }
    }

    fn max_cold_target(&self) -> usize {
        self.memory.saturating_sub(1).max(1)
    }

    /// Adapts `m_c`: up when a cold page was re-used within its test period, down when a test
    /// period ended without a re-use.
    fn adapt(&mut self, reused: bool) {
        let target = if reused {
            self.cold_target.saturating_add(1)
        } else {
            self.cold_target.saturating_sub(1)
        };
        self.cold_target = target.max(1).min(self.max_cold_target());
    }

    /// The most hot pages allowed: `m - m_c`.
    fn hot_target(&self) -> usize {
        self.memory.saturating_sub(self.cold_target)
    }

    /// Ends the test period of the cold page `i` (resident or not), adapting `m_c`; a
    /// non-resident page leaves the list.
    fn end_test(&mut self, i: usize) {
        let Some(node) = self.nodes.get_mut(i) else {
            return;
        };
        match node.status {
            Status::Hot => {}
            Status::Cold => {
                if node.in_test {
                    node.in_test = false;
                    let reused = node.referenced;
                    self.adapt(reused);
                }
            }
            Status::NonResident => {
                let reused = node.referenced;
                self.adapt(reused);
                self.remove_node(i);
            }
        }
    }

    /// Turns the cold page `i` (resident, or non-resident on a fault) into a hot page at the
    /// list head. The caller adapts `m_c` and runs HAND_hot.
    fn make_hot(&mut self, i: usize) {
        let Some(node) = self.nodes.get_mut(i) else {
            return;
        };
        match node.status {
            Status::Hot => return,
            Status::Cold => self.cold = self.cold.saturating_sub(1),
            Status::NonResident => self.non_resident = self.non_resident.saturating_sub(1),
        }
        node.status = Status::Hot;
        node.referenced = false;
        node.in_test = false;
        self.hot += 1;
        self.move_to_head(i);
    }

    /// One step of HAND_hot; returns whether it demoted a hot page.
    fn step_hot(&mut self) -> bool {
        let Some(h) = self.hand_hot else {
            return false;
        };
        let Some(node) = self.nodes.get_mut(h) else {
            return false;
        };
        match node.status {
            Status::Hot if node.referenced => {
                node.referenced = false;
                self.advance_hot();
                false
            }
            Status::Hot => {
                node.status = Status::Cold;
                node.in_test = false;
                self.hot = self.hot.saturating_sub(1);
                self.cold += 1;
                self.advance_hot();
                true
            }
            Status::Cold => {
                self.end_test(h);
                self.advance_hot();
                false
            }
            // Leaves the list; `detach` has moved the hands on.
            Status::NonResident => {
                self.end_test(h);
                false
            }
        }
    }

    /// Runs HAND_hot while there are more than `m - m_c` hot pages.
    fn balance_hot(&mut self) {
        // Two laps suffice: the first clears every reference bit, the second demotes.
        let bound = 2 * self.index.len() + 2;
        for _ in 0..bound {
            if self.hot <= self.hot_target() {
                return;
            }
            self.step_hot();
        }
    }

    /// Runs HAND_hot until it has demoted one hot page; returns whether it did.
    fn demote_one(&mut self) -> bool {
        let bound = 2 * self.index.len() + 2;
        for _ in 0..bound {
            if self.hot == 0 {
                return false;
            }
            if self.step_hot() {
                return true;
            }
        }
        false
    }

    /// Runs HAND_test while more than `m` non-resident pages are kept.
    fn trim_non_resident(&mut self) {
        let bound = 2 * self.index.len() + 2;
        for _ in 0..bound {
            if self.non_resident <= self.memory {
                return;
            }
            let Some(t) = self.hand_test else {
                return;
            };
            match self.nodes.get(t).map(|n| (n.status, n.in_test)) {
                // Leaves the list; `detach` has moved the hands on.
                Some((Status::NonResident, _)) => self.end_test(t),
                Some((Status::Cold, true)) => {
                    self.end_test(t);
                    self.advance_test();
                }
                Some(_) => self.advance_test(),
                None => return,
            }
        }
    }

    /// The first evictable resident page: a cold one from HAND_cold on, else a hot one from
    /// HAND_hot on.
    fn first_evictable(&self, view: &dyn ResidentView) -> Option<ObjectId> {
        let scan = |start: Option<usize>, wanted: Status| {
            let mut i = start?;
            for _ in 0..self.index.len() {
                let node = self.nodes.get(i)?;
                if node.status == wanted && view.is_evictable(node.id) {
                    return Some(node.id);
                }
                i = node.next;
            }
            None
        };
        scan(self.hand_cold, Status::Cold).or_else(|| scan(self.hand_hot, Status::Hot))
    }

    // ---- test accessors ----------------------------------------------------------------------

    #[cfg(test)]
    fn status(&self, id: ObjectId) -> Option<Status> {
        self.index.get(&id).and_then(|&i| self.status_of(i))
    }

    /// Whether `id` is a hot page.
    #[cfg(test)]
    fn is_hot(&self, id: ObjectId) -> bool {
        self.status(id) == Some(Status::Hot)
    }

    /// Whether `id` is kept as a non-resident cold page in its test period.
    #[cfg(test)]
    fn is_non_resident(&self, id: ObjectId) -> bool {
        self.status(id) == Some(Status::NonResident)
    }

    /// Checks the list and the counters against each other; panics on a broken invariant.
    #[cfg(test)]
    fn check_invariants(&self) {
        use std::collections::HashSet;
        let n = self.index.len();
        assert_eq!(self.hot + self.cold + self.non_resident, n, "counts");
        assert!(
            self.non_resident <= self.memory,
            "{} non-resident pages, m = {}",
            self.non_resident,
            self.memory
        );
        assert!(self.hot + self.cold <= self.memory, "resident above m");
        assert!(self.cold_target >= 1 && self.cold_target <= self.max_cold_target());
        let Some(start) = self.hand_hot else {
            assert_eq!(n, 0, "no hands on a non-empty list");
            assert!(self.hand_cold.is_none() && self.hand_test.is_none());
            return;
        };
        let mut seen = HashSet::new();
        let (mut hot, mut cold, mut non_resident) = (0, 0, 0);
        let mut i = start;
        loop {
            let node = self.nodes[i];
            assert!(seen.insert(i), "node {i} visited twice");
            assert_eq!(self.index.get(&node.id), Some(&i), "index of {}", node.id);
            assert_eq!(self.nodes[node.next].prev, i, "links at {i}");
            match node.status {
                Status::Hot => {
                    hot += 1;
                    assert!(!node.in_test, "hot page in a test period");
                }
                Status::Cold => cold += 1,
                Status::NonResident => {
                    non_resident += 1;
                    assert!(node.in_test, "non-resident page out of its test period");
                    assert!(!node.referenced, "non-resident page referenced");
                }
            }
            i = node.next;
            if i == start {
                break;
            }
        }
        assert_eq!(seen.len(), n, "list length");
        assert_eq!(
            (hot, cold, non_resident),
            (self.hot, self.cold, self.non_resident)
        );
        for hand in [self.hand_cold, self.hand_test] {
            assert!(hand.is_some_and(|h| seen.contains(&h)), "hand off the list");
        }
    }
}

impl EvictionPolicy for ClockPro {
    fn name(&self) -> &'static str {
        "clock-pro"
    }

    fn on_insert(&mut self, id: ObjectId) {
        let known = self.index.get(&id).copied();
        let status = known.and_then(|i| self.status_of(i));
        if matches!(status, Some(Status::Hot | Status::Cold)) {
            // Already resident (not a miss): count it as a use.
            self.on_hit(id);
            return;
        }
        self.memory = self.memory.max(self.hot + self.cold + 1);
        self.cold_target = self.cold_target.max(1).min(self.max_cold_target());
        match known {
            // A fault on a non-resident page in its test period: it becomes hot.
            Some(i) => {
                self.make_hot(i);
                self.adapt(true);
                self.balance_hot();
            }
            // Any other miss: a resident cold page in its test period, at the list head.
            None => {
                let i = self.alloc(id);
                self.index.insert(id, i);
                self.cold += 1;
                self.attach_at_head(i);
            }
        }
    }

    fn on_hit(&mut self, id: ObjectId) {
        if let Some(node) = self.index.get(&id).and_then(|&i| self.nodes.get_mut(i))
            && node.status != Status::NonResident
        {
            node.referenced = true;
        }
    }

    fn on_evict(&mut self, id: ObjectId) {
        let Some(i) = self.index.get(&id).copied() else {
            return;
        };
        let Some(node) = self.nodes.get_mut(i) else {
            return;
        };
        match node.status {
            Status::Cold if node.in_test => {
                node.status = Status::NonResident;
                node.referenced = false;
                self.cold = self.cold.saturating_sub(1);
                self.non_resident += 1;
                if self.hand_cold == Some(i) {
                    self.advance_cold();
                }
                self.trim_non_resident();
            }
            // Out of its test period (or hot, after a fallback): no history to keep.
            Status::Cold | Status::Hot => self.remove_node(i),
            Status::NonResident => {}
        }
    }

    fn on_remove(&mut self, id: ObjectId) {
        if let Some(i) = self.index.get(&id).copied() {
            self.remove_node(i);
        }
    }

    fn choose_victim(&mut self, view: &dyn ResidentView) -> Option<ObjectId> {
        if self.hot + self.cold == 0 {
            return None;
        }
        let bound = 3 * self.index.len() + 3;
        for _ in 0..bound {
            if self.cold == 0 {
                // Every resident page is hot: HAND_hot demotes one for HAND_cold.
                if self.demote_one() {
                    continue;
                }
                break;
            }
            let Some(c) = self.hand_cold else {
                break;
            };
            let Some(node) = self.nodes.get_mut(c) else {
                break;
            };
            if node.status != Status::Cold {
                self.advance_cold();
                continue;
            }
            if node.referenced {
                node.referenced = false;
                if node.in_test {
                    // Re-used within its test period: hot, at the head.
                    self.make_hot(c);
                    self.adapt(true);
                    self.balance_hot();
                } else {
                    // Re-used after its test period: a new test period, at the head.
                    node.in_test = true;
                    self.move_to_head(c);
                }
                continue;
            }
            if view.is_evictable(node.id) {
                // HAND_cold stays on the victim until `on_evict`.
                return Some(node.id);
            }
            self.advance_cold();
        }
        self.first_evictable(view)
    }

    fn resident(&self) -> Vec<ObjectId> {
        self.index
            .iter()
            .filter(|&(_, &i)| matches!(self.status_of(i), Some(Status::Hot | Status::Cold)))
            .map(|(&id, _)| id)
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

    /// A view that pins some objects.
    struct Pinned(HashSet<ObjectId>);

    impl ResidentView for Pinned {
        fn is_evictable(&self, id: ObjectId) -> bool {
            !self.0.contains(&id)
        }
        fn is_dirty(&self, _: ObjectId) -> bool {
            false
        }
    }

    fn single(trace: &[u64]) -> Vec<&[u64]> {
        trace.iter().map(std::slice::from_ref).collect()
    }

    /// Scan resistance. Room for 10; a working set {1..5} is used three times round, then 30
    /// new objects are used once each (a scan), then the working set three times round again.
    ///
    /// LRU: the scan is longer than memory, so it pushes the whole working set out and the first
    /// round after it misses five times (20 hits). CLOCK-Pro: the working set's re-uses set the
    /// reference bits of cold pages still in their test periods, so the first eviction sweep
    /// (when the scan fills memory) makes all five hot; scan pages come in cold, are never
    /// re-used, and HAND_cold replaces only them, so every re-use of the working set hits
    /// (10 hits before the scan, 15 after).
    #[test]
    fn working_set_survives_a_scan_that_flushes_lru() {
        let working_set: Vec<u64> = (1..=5).collect();
        let mut trace = Vec::new();
        for _ in 0..3 {
            trace.extend(&working_set);
        }
        trace.extend(100..130);
        for _ in 0..3 {
            trace.extend(&working_set);
        }
        let lru = simulate(&mut Lru::new(), 10, &single(&trace));
        let mut policy = ClockPro::new();
        let clock = simulate(&mut policy, 10, &single(&trace));

        assert_eq!((lru.hits, lru.misses), (20, 40));
        assert_eq!((clock.hits, clock.misses), (25, 35));
        assert!(clock.hits > lru.hits);
        assert!(
            clock.evicted.iter().all(|&v| v >= 100),
            "{:?}",
            clock.evicted
        );
        assert!(working_set.iter().all(|&w| policy.is_hot(id(w))));
    }

    /// A cold page re-used within its test period becomes hot, on either path; one re-used
    /// after its test period has ended comes back cold.
    #[test]
    fn re_use_within_the_test_period_promotes_to_hot() {
        // Fault on a non-resident page: 4 evicts 1, which stays as a non-resident page in its
        // test period; 1 faults back in and becomes hot (2 is evicted for it). m_c grows.
        let mut policy = ClockPro::new();
        let out = simulate(&mut policy, 3, &single(&[1, 2, 3, 4]));
        assert_eq!(out.evicted, vec![1]);
        assert!(policy.is_non_resident(id(1)));
        assert!(!policy.resident().contains(&id(1)));
        let mut policy = ClockPro::new();
        let out = simulate(&mut policy, 3, &single(&[1, 2, 3, 4, 1]));
        assert_eq!(out.evicted, vec![1, 2]);
        assert!(policy.is_hot(id(1)));
        assert_eq!(policy.cold_target, 2);

        // Hit on a resident cold page: the reference bit set by the hit makes HAND_cold promote
        // 1 instead of evicting it when 4 needs room; 2 goes instead.
        let mut policy = ClockPro::new();
        let out = simulate(&mut policy, 3, &single(&[1, 2, 3, 1, 4]));
        assert_eq!((out.hits, out.evicted), (1, vec![2]));
        assert!(policy.is_hot(id(1)));
        assert!(!policy.is_hot(id(3)) && !policy.is_hot(id(4)));

        // Room for 2 keeps at most 2 non-resident pages: by the time 1 comes back its test
        // period is over and its history gone, so it is an ordinary cold miss.
        let mut policy = ClockPro::new();
        let out = simulate(&mut policy, 2, &single(&[1, 2, 3, 4, 5, 6, 1]));
        assert_eq!(out.evicted, vec![1, 2, 3, 4, 5]);
        assert_eq!(policy.status(id(1)), Some(Status::Cold));
    }

    /// Forwards to [`ClockPro`] and checks its invariants after every call.
    #[derive(Debug)]
    struct Checked {
        inner: ClockPro,
        max_hot: usize,
        max_non_resident: usize,
    }

    impl Checked {
        fn check(&mut self) {
            let p = &self.inner;
            assert!(
                p.non_resident <= p.memory,
                "{} > m = {}",
                p.non_resident,
                p.memory
            );
            p.check_invariants();
            self.max_hot = self.max_hot.max(p.hot);
            self.max_non_resident = self.max_non_resident.max(p.non_resident);
        }
    }

    impl EvictionPolicy for Checked {
        fn name(&self) -> &'static str {
            self.inner.name()
        }
        fn on_insert(&mut self, id: ObjectId) {
            self.inner.on_insert(id);
            self.check();
        }
        fn on_hit(&mut self, id: ObjectId) {
            self.inner.on_hit(id);
            self.check();
        }
        fn on_evict(&mut self, id: ObjectId) {
            self.inner.on_evict(id);
            self.check();
        }
        fn on_remove(&mut self, id: ObjectId) {
            self.inner.on_remove(id);
            self.check();
        }
        fn choose_victim(&mut self, view: &dyn ResidentView) -> Option<ObjectId> {
            let victim = self.inner.choose_victim(view);
            self.check();
            victim
        }
        fn resident(&self) -> Vec<ObjectId> {
            self.inner.resident()
        }
    }

    /// Random traces with some locality: `simulate` checks after every access that
    /// `resident()` is exactly the resident set (and that every victim is resident); the
    /// wrapper checks after every call that at most `m` non-resident pages are kept and that
    /// the list and counters agree.
    #[test]
    fn random_traces_keep_the_resident_set_and_bound_the_history() {
        use rand::{RngExt, SeedableRng};
        for seed in 0..6 {
            for slots in [1usize, 2, 3, 5, 8, 16] {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
                let hot_set = slots as u64;
                let universe = 4 * slots as u64 + 8;
                let vectors: Vec<Vec<u64>> = (0..400)
                    .map(|_| {
                        let len = rng.random_range(1..5);
                        let mut v: Vec<u64> = (0..len)
                            .map(|_| {
                                if rng.random_range(0..10) < 6 {
                                    rng.random_range(0..hot_set)
                                } else {
                                    rng.random_range(0..universe)
                                }
                            })
                            .collect();
                        v.sort();
                        v.dedup();
                        v
                    })
                    .collect();
                let refs: Vec<&[u64]> = vectors.iter().map(Vec::as_slice).collect();
                let accesses: usize = vectors.iter().map(Vec::len).sum();
                let mut policy = Checked {
                    inner: ClockPro::new(),
                    max_hot: 0,
                    max_non_resident: 0,
                };
                let out = simulate(&mut policy, slots, &refs);
                assert_eq!(
                    out.hits + out.misses,
                    accesses,
                    "seed {seed}, {slots} slots"
                );
                assert_eq!(policy.inner.memory, slots, "m is the number of slots");
                assert!(policy.max_non_resident > 0, "seed {seed}, {slots} slots");
                if slots > 1 {
                    assert!(policy.max_hot > 0, "seed {seed}, {slots} slots");
                }
            }
        }
    }

    /// The runtime's side of the protocol at random: pinned objects, evictions that fail (the
    /// victim stays resident and the policy hears nothing), removals of resident and of
    /// non-resident objects. Victims are always resident and unpinned, `None` comes only when
    /// everything resident is pinned, and the resident list stays exact.
    #[test]
    fn random_protocol_with_pins_failed_evictions_and_removals() {
        use rand::{RngExt, SeedableRng};
        use std::collections::BTreeSet;
        for seed in 0..8 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let slots = rng.random_range(1..8usize);
            let universe = 3 * slots as u64 + 4;
            let mut policy = Checked {
                inner: ClockPro::new(),
                max_hot: 0,
                max_non_resident: 0,
            };
            let mut resident = BTreeSet::new();
            for _ in 0..3000 {
                let o = id(rng.random_range(0..universe));
                if rng.random_range(0..20) == 0 {
                    resident.remove(&o);
                    policy.on_remove(o);
                } else if resident.contains(&o) {
                    policy.on_hit(o);
                } else {
                    let pins: HashSet<ObjectId> = resident
                        .iter()
                        .filter(|_| rng.random_range(0..4) == 0)
                        .copied()
                        .collect();
                    let view = Pinned(pins.clone());
                    let mut attempts = 0;
                    while resident.len() >= slots && attempts < 20 {
                        attempts += 1;
                        match policy.choose_victim(&view) {
                            Some(v) => {
                                assert!(resident.contains(&v), "victim {v} not resident");
                                assert!(!pins.contains(&v), "victim {v} pinned");
                                if rng.random_range(0..5) > 0 {
                                    resident.remove(&v);
                                    policy.on_evict(v);
                                }
                            }
                            None => {
                                assert!(resident.iter().all(|r| pins.contains(r)));
                                break;
                            }
                        }
                    }
                    if resident.len() < slots {
                        resident.insert(o);
                        policy.on_insert(o);
                    }
                }
                let mut tracked = policy.resident();
                tracked.sort();
                assert_eq!(tracked, resident.iter().copied().collect::<Vec<_>>());
            }
            assert!(policy.max_non_resident > 0, "seed {seed}");
        }
    }

    /// Pinned objects are never chosen; `None` only when nothing resident may be evicted.
    #[test]
    fn choose_victim_skips_objects_that_are_not_evictable() {
        let pinned = |ids: &[u64]| Pinned(ids.iter().map(|&i| id(i)).collect());

        let mut policy = ClockPro::new();
        for i in 1..=3 {
            policy.on_insert(id(i));
        }
        // 1 is HAND_cold's first candidate, but pinned.
        assert_eq!(policy.choose_victim(&pinned(&[1])), Some(id(2)));
        policy.on_evict(id(2));
        assert_eq!(policy.choose_victim(&pinned(&[1, 3])), None);
        assert_eq!(policy.choose_victim(&pinned(&[3])), Some(id(1)));
        policy.check_invariants();

        // Every resident page hot (fewer resident than m, as with objects of mixed sizes):
        // HAND_hot demotes for HAND_cold, or the first evictable page is taken.
        let mut policy = ClockPro::new();
        for i in 1..=3 {
            policy.on_insert(id(i));
        }
        policy.on_remove(id(3));
        for i in [1, 2] {
            let slot = policy.index[&id(i)];
            policy.make_hot(slot);
        }
        policy.check_invariants();
        assert_eq!(policy.choose_victim(&pinned(&[1])), Some(id(2)));
        assert_eq!(policy.choose_victim(&pinned(&[2])), Some(id(1)));
        assert_eq!(policy.choose_victim(&pinned(&[1, 2])), None);
        let victim = policy.choose_victim(&Everything);
        assert!(matches!(victim, Some(v) if v == id(1) || v == id(2)));
        policy.check_invariants();

        assert_eq!(ClockPro::new().choose_victim(&Everything), None);
    }

    /// `on_remove` forgets an object whether resident or kept as history; an evicted hot page
    /// (fallback) leaves no history.
    #[test]
    fn on_remove_forgets_resident_and_non_resident_pages() {
        let mut policy = ClockPro::new();
        let out = simulate(&mut policy, 3, &single(&[1, 2, 3, 4]));
        assert_eq!(out.evicted, vec![1]);
        assert!(policy.is_non_resident(id(1)));
        policy.on_remove(id(1));
        assert_eq!(policy.status(id(1)), None);
        policy.on_remove(id(3));
        let mut resident = policy.resident();
        resident.sort();
        assert_eq!(resident, vec![id(2), id(4)]);
        policy.check_invariants();
        // 1 comes back as a plain cold page: its history is gone.
        policy.on_insert(id(1));
        assert_eq!(policy.status(id(1)), Some(Status::Cold));
        // Removing everything leaves an empty clock.
        for i in [1, 2, 4] {
            policy.on_remove(id(i));
        }
        policy.check_invariants();
        assert!(policy.resident().is_empty());
        assert!(policy.hand_hot.is_none());
    }
}
