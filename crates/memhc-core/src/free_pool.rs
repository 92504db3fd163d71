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
}

/// The table of released buffers.
pub(crate) struct FreePool<B: Backend> {
    by_size: BTreeMap<usize, Vec<Pooled<B>>>,
    bytes: usize,
}

impl<B: Backend> Default for FreePool<B> {
    fn default() -> Self {
        FreePool {
            by_size: BTreeMap::new(),
            bytes: 0,
        }
    }
}

impl<B: Backend> FreePool<B> {
    pub fn put(&mut self, p: Pooled<B>) {
        let size = p.block.bytes();
        self.bytes += size;
        self.by_size.entry(size).or_default().push(p);
    }

    /// A block of at least `bytes` and at most `limit` bytes, if one is pooled: the smallest
    /// such size, and of that size the most recently released (its memory is the likeliest to
    /// be warm). `limit == bytes` asks for the exact size.
    pub fn take(&mut self, bytes: usize, limit: usize) -> Option<Pooled<B>> {
        let (&size, list) = self.by_size.range_mut(bytes..=limit.max(bytes)).next()?;
        let p = list.pop()?;
        if list.is_empty() {
            self.by_size.remove(&size);
        }
        self.bytes -= size;
        Some(p)
    }

    /// Removes every buffer.
    pub fn drain(&mut self) -> Vec<Pooled<B>> {
        self.bytes = 0;
        std::mem::take(&mut self.by_size)
            .into_values()
            .flatten()
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.by_size.is_empty()
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
