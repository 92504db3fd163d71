//! A range of a shared chunk of memory, held while something uses it and given back when it is
//! dropped: what a piece of the pinned pool (`host_pool/pinned.rs`) carries in its host copy
//! (`host_copy.rs`). On its own so that the host copy, which holds one, and the pool, which
//! makes them, do not import each other.

use std::sync::{Arc, Mutex};

use crate::arena::SubAllocator;

/// A piece's range in its chunk; dropping it gives the range back.
#[derive(Debug)]
pub(crate) struct Lease {
    free: Arc<Mutex<SubAllocator>>,
    offset: usize,
    size: usize,
}

impl Lease {
    /// The range `offset..offset + size` of `free`, which the caller has just allocated there.
    pub(crate) fn new(free: Arc<Mutex<SubAllocator>>, offset: usize, size: usize) -> Self {
        Lease { free, offset, size }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        // A refusal would mean the range was given back twice: nothing more to free.
        let _ = free.release(self.offset, self.size);
    }
}
