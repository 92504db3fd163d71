//! Blocks: the device memory behind one object (packed) or one component (unpacked). A block is
//! either a driver allocation of its own or a range of the arena ([`Config::arena`]); everything
//! above this file (element cache, free pool, launches, copies) handles blocks alike.
//!
//! A block may be larger than what its owner asked for: a pooled or handed-over buffer within
//! the reuse tolerance ([`Config::reuse_tolerance_percent`]) serves a smaller request. Views
//! are offsets from the block's start and never reach past the owner's own size, which
//! launches check ([`Launch`](crate::Launch)), so the slack at the end is never touched.
//!
//! [`Config::arena`]: crate::Config::arena
//! [`Config::reuse_tolerance_percent`]: crate::Config::reuse_tolerance_percent

use crate::backend::{Backend, DeviceMemory};

/// Device memory held for an object or a component.
pub(crate) enum Block<B: Backend> {
    /// A driver allocation of its own.
    Buffer(B::Buffer),
    /// `size` bytes of the arena, from byte `offset`.
    Arena {
        /// Where it starts in the arena.
        offset: usize,
        /// Its size.
        size: usize,
    },
}

impl<B: Backend> Block<B> {
    /// Bytes held.
    pub fn bytes(&self) -> usize {
        match self {
            Block::Buffer(b) => b.bytes(),
            Block::Arena { size, .. } => *size,
        }
    }

    /// The buffer the block lies in and the byte offset where it starts in it: its own buffer
    /// at 0, or the arena's buffer (`arena`) at its offset. `None` for an arena block when no
    /// arena buffer is given.
    pub fn place<'a>(&'a self, arena: Option<&'a B::Buffer>) -> Option<(&'a B::Buffer, usize)> {
        match self {
            Block::Buffer(b) => Some((b, 0)),
            Block::Arena { offset, .. } => arena.map(|a| (a, *offset)),
        }
    }

    /// The block's id in the event log: the buffer's handle, or the arena offset with
    /// [`ARENA_BLOCK`](crate::events::ARENA_BLOCK) set.
    pub fn id(&self) -> u64 {
        match self {
            Block::Buffer(b) => b.handle(),
            Block::Arena { offset, .. } => *offset as u64 | crate::events::ARENA_BLOCK,
        }
    }

    /// How the audit names the block: the buffer's handle, or the arena range.
    pub fn describe(&self) -> String {
        match self {
            Block::Buffer(b) => format!("buffer {:#x}", b.handle()),
            Block::Arena { offset, size } => format!("arena bytes {offset}..{}", offset + size),
        }
    }
}

impl<B: Backend> std::fmt::Debug for Block<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}
