//! The arena ([`Config::arena`](crate::Config::arena)): one driver allocation of the whole
//! budget, made when the runtime starts, from which every object's memory is sub-allocated, so
//! that the driver is never called again.
//!
//! Free space is a set of disjoint ranges, kept twice: by offset (to coalesce a released range
//! with its neighbours) and by size (best fit: the smallest free range that holds a request,
//! the lowest one on ties, carved from its start). Both are O(log n). Requests are rounded up
//! to [`ARENA_ALIGN`], one element: what complex-f64 BLAS needs, and what every object's size is
//! a multiple of already, so nothing is lost to rounding.
//!
//! With objects of one size, carving from the start keeps every range on a multiple of that
//! size, so a request fails exactly when the driver path's budget check would: the arena makes
//! the same evictions. With mixed sizes it can fail while enough bytes are free in pieces
//! (fragmentation); the runtime then evicts more, and counts it.

use std::collections::{BTreeMap, BTreeSet};

use crate::backend::{Backend, ELEMENT_BYTES};

/// Alignment and granularity of sub-allocations.
pub(crate) const ARENA_ALIGN: usize = ELEMENT_BYTES;

/// Best-fit sub-allocation of `capacity` bytes. See the [module documentation](self).
#[derive(Debug)]
pub(crate) struct SubAllocator {
    capacity: usize,
    free_bytes: usize,
    /// Free ranges: offset -> size.
    by_offset: BTreeMap<usize, usize>,
    /// The same ranges as (size, offset).
    by_size: BTreeSet<(usize, usize)>,
}

impl SubAllocator {
    /// `capacity` bytes, all free.
    pub fn new(capacity: usize) -> Self {
        let mut s = SubAllocator {
            capacity,
            free_bytes: 0,
            by_offset: BTreeMap::new(),
            by_size: BTreeSet::new(),
        };
        s.insert(0, capacity);
        s
    }

    fn insert(&mut self, offset: usize, size: usize) {
        if size > 0 {
            self.by_offset.insert(offset, size);
            self.by_size.insert((size, offset));
            self.free_bytes += size;
        }
    }

    fn remove(&mut self, offset: usize, size: usize) {
        self.by_offset.remove(&offset);
        self.by_size.remove(&(size, offset));
        self.free_bytes -= size;
    }

    /// The size a request of `bytes` takes.
    pub fn rounded(bytes: usize) -> usize {
        bytes
            .max(1)
            .div_ceil(ARENA_ALIGN)
            .saturating_mul(ARENA_ALIGN)
    }

    /// A range for `bytes`: `(offset, size)` with `size` the rounded request, or `None` if no
    /// free range is large enough.
    pub fn alloc(&mut self, bytes: usize) -> Option<(usize, usize)> {
        let size = Self::rounded(bytes);
        let &(have, offset) = self.by_size.range((size, 0)..).next()?;
        self.remove(offset, have);
        self.insert(offset + size, have - size);
        Some((offset, size))
    }

    /// Gives back a range [`SubAllocator::alloc`] returned, merging it with free neighbours.
    /// Refuses a range outside the arena or overlapping free space (which would be a bug in
    /// the runtime), leaving everything as it was.
    pub fn release(&mut self, offset: usize, size: usize) -> Result<(), String> {
        let end = offset
            .checked_add(size)
            .filter(|&e| e <= self.capacity && size > 0)
            .ok_or_else(|| format!("arena bytes {offset}+{size} are not a range of the arena"))?;
        let before = self
            .by_offset
            .range(..=offset)
            .next_back()
            .map(|(&o, &s)| (o, s));
        let after = self.by_offset.range(offset..).next().map(|(&o, &s)| (o, s));
        if before.is_some_and(|(o, s)| o + s > offset) || after.is_some_and(|(o, _)| o < end) {
            return Err(format!(
                "arena bytes {offset}..{end} are released but overlap free space"
            ));
        }
        let (mut start, mut stop) = (offset, end);
        if let Some((o, s)) = before.filter(|&(o, s)| o + s == offset) {
            self.remove(o, s);
            start = o;
        }
        if let Some((o, s)) = after.filter(|&(o, _)| o == end) {
            self.remove(o, s);
            stop = o + s;
        }
        self.insert(start, stop - start);
        Ok(())
    }

    /// The arena's size.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Free bytes.
    pub fn free_bytes(&self) -> usize {
        self.free_bytes
    }

    /// The largest free range.
    pub fn largest_free(&self) -> usize {
        self.by_size.last().map_or(0, |&(s, _)| s)
    }

    /// Checks the free ranges and the `allocated` ones (every block held, resident or
    /// pooled) from scratch: disjoint, coalesced, within the arena, the two indexes agreeing,
    /// and together covering the arena exactly. One line per problem.
    pub fn audit(&self, allocated: impl Iterator<Item = (usize, usize)>) -> Vec<String> {
        let mut bad = Vec::new();
        let mirrored: BTreeSet<(usize, usize)> =
            self.by_offset.iter().map(|(&o, &s)| (s, o)).collect();
        if mirrored != self.by_size {
            bad.push("the arena's free ranges by size and by offset disagree".to_owned());
        }
        let free_sum: usize = self.by_offset.values().sum();
        if free_sum != self.free_bytes {
            bad.push(format!(
                "the arena counts {} free bytes, its free ranges hold {free_sum}",
                self.free_bytes
            ));
        }
        // (offset, size, free?) of every range, in offset order.
        let mut ranges: Vec<(usize, usize, bool)> = allocated.map(|(o, s)| (o, s, false)).collect();
        ranges.extend(self.by_offset.iter().map(|(&o, &s)| (o, s, true)));
        ranges.sort_unstable();
        let mut covered = 0usize;
        let mut previous: Option<(usize, usize, bool)> = None;
        for &(o, s, free) in &ranges {
            if s == 0 || o.checked_add(s).is_none_or(|e| e > self.capacity) {
                bad.push(format!(
                    "arena range {o}+{s} is empty or past the arena's {} bytes",
                    self.capacity
                ));
            }
            if let Some((po, ps, pfree)) = previous {
                if po + ps > o {
                    bad.push(format!("arena ranges {po}+{ps} and {o}+{s} overlap"));
                }
                if pfree && free && po + ps == o {
                    bad.push(format!(
                        "free arena ranges {po}+{ps} and {o}+{s} are not merged"
                    ));
                }
            }
            covered += s;
            previous = Some((o, s, free));
        }
        if covered != self.capacity {
            bad.push(format!(
                "the arena's {} bytes are not covered exactly: held and free ranges add up to \
                 {covered}",
                self.capacity
            ));
        }
        bad
    }
}

/// The arena: its driver buffer and the sub-allocator over it.
pub(crate) struct Arena<B: Backend> {
    /// The one driver allocation.
    pub buffer: B::Buffer,
    /// Its free space.
    pub space: SubAllocator,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_fit_carves_and_coalesces() {
        let mut a = SubAllocator::new(160);
        let x = a.alloc(32).unwrap();
        let y = a.alloc(40).unwrap(); // rounded to 48
        let z = a.alloc(16).unwrap();
        assert_eq!((x, y, z), ((0, 32), (32, 48), (80, 16)));
        assert_eq!((a.free_bytes(), a.largest_free()), (64, 64));
        a.release(32, 48).unwrap();
        // Free: 32..80 (48) and 96..160 (64): a 48-byte request takes the exact fit.
        assert_eq!(a.alloc(48), Some((32, 48)));
        assert_eq!(a.alloc(80), None);
        a.release(0, 32).unwrap();
        a.release(80, 16).unwrap();
        a.release(32, 48).unwrap();
        assert_eq!((a.free_bytes(), a.largest_free()), (160, 160));
        assert!(a.audit(std::iter::empty()).is_empty());
    }

    #[test]
    fn bad_releases_are_refused_and_the_audit_sees_holes() {
        let mut a = SubAllocator::new(64);
        let x = a.alloc(16).unwrap();
        assert!(a.release(16, 16).is_err(), "overlaps free space");
        assert!(a.release(60, 16).is_err(), "past the end");
        assert!(a.audit([x].into_iter()).is_empty());
        assert!(
            !a.audit(std::iter::empty()).is_empty(),
            "16 bytes unaccounted"
        );
        assert!(!a.audit([x, x].into_iter()).is_empty(), "held twice");
    }

    #[test]
    fn equal_sizes_fail_exactly_when_the_budget_would() {
        // 10 slots of 48 bytes and a 20-byte tail: any order of allocations and releases
        // keeps every range on a multiple of 48.
        let mut a = SubAllocator::new(500);
        let mut held = Vec::new();
        let mut state = 7u64;
        for _ in 0..2000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if state >> 62 == 0 && !held.is_empty() {
                let i = (state >> 20) as usize % held.len();
                let (o, s) = held.swap_remove(i);
                a.release(o, s).unwrap();
            } else {
                let got = a.alloc(48);
                assert_eq!(got.is_some(), (held.len() + 1) * 48 <= 500);
                held.extend(got);
            }
        }
    }
}
