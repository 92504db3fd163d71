//! The free pool: lazily released device blocks keyed by size (MemHC's `free_pool` table).
//!
//! A released object's blocks (driver buffers or arena ranges) come here instead of going back
//! to the driver or the arena; a later request for the same number of bytes takes one (a *pool
//! reuse*) and overwrites it; with a reuse tolerance, the smallest pooled block from the
//! request's size up to its limit. A pooled block keeps the events of its last uses, so that
//! the new owner's first write waits for them. When memory runs short, the pool is drained
//! (its blocks freed) before anything is evicted.

use std::collections::BTreeMap;

use crate::backend::Backend;
use crate::block::Block;
use crate::hazards::Hazards;

/// A block waiting for reuse.
pub(crate) struct Pooled<B: Backend> {
    pub block: Block<B>,
    pub hazards: Hazards<B>,
    /// The runtime's launch count when the block was pooled (its rest, for
    /// [`Config::reuse_delay`](crate::Config::reuse_delay)).
    pub freed_at: u64,
}

/// The table of released buffers.
///
/// A size's list stays in the table, with its capacity, when it empties, so that a steady
/// state of releases and reuses of the same sizes allocates no host memory for the lists; the
/// table holds one list per distinct size ever pooled (a workload has a handful).
pub(crate) struct FreePool<B: Backend> {
    by_size: BTreeMap<usize, Vec<Pooled<B>>>,
    bytes: usize,
    /// Blocks held.
    count: usize,
}

impl<B: Backend> Default for FreePool<B> {
    fn default() -> Self {
        FreePool {
            by_size: BTreeMap::new(),
            bytes: 0,
            count: 0,
        }
    }
}

impl<B: Backend> FreePool<B> {
    pub fn put(&mut self, p: Pooled<B>) {
        let size = p.block.bytes();
        self.bytes += size;
        self.count += 1;
        self.by_size.entry(size).or_default().push(p);
    }

    /// A block of at least `bytes` and at most `limit` bytes among those `eligible` allows
    /// (those that have rested long enough), if one is pooled: the smallest such size, and of
    /// that size the most recently released (its memory is the likeliest to be warm).
    /// `limit == bytes` asks for the exact size. The choice depends on the order of releases
    /// only, never on the device's progress, so that a run's counts are the same on every
    /// backend (in an arena, which block is reused shapes the fragmentation to come).
    pub fn take(
        &mut self,
        bytes: usize,
        limit: usize,
        eligible: impl Fn(&Pooled<B>) -> bool,
    ) -> Option<Pooled<B>> {
        let (size, list, at) = if limit <= bytes {
            // The exact size (no reuse tolerance): one lookup, no range walk.
            let list = self.by_size.get_mut(&bytes)?;
            let at = list.iter().rposition(&eligible)?;
            (bytes, list, at)
        } else {
            self.by_size
                .range_mut(bytes..=limit)
                .find_map(|(&size, list)| {
                    let at = list.iter().rposition(&eligible)?;
                    Some((size, list, at))
                })?
        };
        // Most often the newest block has rested (always, without a reuse delay): a pop.
        let p = if at + 1 == list.len() {
            list.pop()?
        } else {
            list.remove(at)
        };
        self.bytes -= size;
        self.count -= 1;
        Some(p)
    }

    /// Removes every buffer.
    pub fn drain(&mut self) -> Vec<Pooled<B>> {
        self.bytes = 0;
        let mut out = Vec::with_capacity(self.count);
        self.count = 0;
        for list in self.by_size.values_mut() {
            out.append(list);
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Blocks held (running count; the audit recomputes it).
    pub fn len(&self) -> usize {
        self.count
    }

    /// Bytes held (running total; the audit recomputes it).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Every pooled block with the size it is filed under.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Pooled<B>)> {
        self.by_size
            .iter()
            .flat_map(|(&size, list)| list.iter().map(move |p| (size, p)))
    }
}
