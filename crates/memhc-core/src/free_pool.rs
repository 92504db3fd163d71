//! The free pool: lazily released device buffers keyed by size (MemHC's `free_pool` table).
//!
//! A released object's buffers come here instead of going back to the driver; a later request
//! for the same number of bytes takes one (a *pool reuse*) and overwrites it. A pooled buffer
//! keeps the events of its last uses, so that the new owner's first write waits for them.
//! When memory runs short, the pool is drained (its buffers freed) before anything is evicted.

use std::collections::BTreeMap;

use crate::backend::{Backend, DeviceMemory};
use crate::hazards::Hazards;

/// A buffer waiting for reuse.
pub(crate) struct Pooled<B: Backend> {
    pub buffer: B::Buffer,
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
        let size = p.buffer.bytes();
        self.bytes += size;
        self.by_size.entry(size).or_default().push(p);
    }

    /// A buffer of exactly `bytes`, if one is pooled (the most recently released: its memory is
    /// the likeliest to be warm).
    pub fn take(&mut self, bytes: usize) -> Option<Pooled<B>> {
        let list = self.by_size.get_mut(&bytes)?;
        let p = list.pop()?;
        if list.is_empty() {
            self.by_size.remove(&bytes);
        }
        self.bytes -= bytes;
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

    /// Every pooled buffer with the size it is filed under.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Pooled<B>)> {
        self.by_size
            .iter()
            .flat_map(|(&size, list)| list.iter().map(move |p| (size, p)))
    }
}
