//! The device memory the runtime holds that no object owns, and its accounting: the budget,
//! the bytes held in blocks, the free pool and the arena.

use crate::arena::Arena;
use crate::backend::Backend;
use crate::free_pool::FreePool;
use crate::stats::ArenaUsage;

/// The runtime's device memory outside its objects' records.
pub(super) struct Space<B: Backend> {
    /// The device budget in bytes.
    pub budget: usize,
    /// Bytes held in blocks (driver buffers, or arena ranges): resident plus pooled.
    pub used: usize,
    /// Released blocks waiting for reuse.
    pub pool: FreePool<B>,
    /// The arena, in arena mode.
    pub arena: Option<Arena<B>>,
}

impl<B: Backend> Space<B> {
    /// The arena's buffer, in arena mode.
    pub fn arena_buffer(&self) -> Option<&B::Buffer> {
        self.arena.as_ref().map(|a| &a.buffer)
    }

    /// In arena mode, how the arena is used now.
    pub fn arena_usage(&self) -> Option<ArenaUsage> {
        self.arena.as_ref().map(|a| ArenaUsage {
            capacity: a.space.capacity(),
            free: a.space.free_bytes(),
            largest_free: a.space.largest_free(),
        })
    }

    /// Bytes held by resident objects: every block held is resident or pooled.
    pub fn resident_bytes(&self) -> usize {
        self.used - self.pool.bytes()
    }
}
