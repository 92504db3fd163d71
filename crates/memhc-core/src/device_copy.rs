//! What an object holds on the device: its device copy ([`DeviceCopy`]), or, while it leaves
//! the device dirty with prefetch on, the write-back bringing its value home ([`WriteBack`]).
//!
//! Both live inside the object's [lifecycle](crate::lifecycle) state, the way its host copy
//! does: MemHC's `element_cache` table (object -> resident device memory) is the set of objects
//! whose state holds a `DeviceCopy`, so residency and state can never disagree. Asking for an
//! object that holds one is a hit: no allocation, no copy.
//!
//! A packed object owns one block holding all its components back to back (the paper's "head
//! of contiguous memory" whose children are the component views); an unpacked object owns one
//! block per component. A block is a driver buffer or an arena range ([`Block`]).

use smallvec::SmallVec;

use crate::backend::gemm::DeviceRef;
use crate::backend::{Backend, ELEMENT_BYTES};
use crate::block::Block;
use crate::hazards::{Hazards, Tagged};
use crate::object::Layout;

/// The blocks of one object: a packed object's one block is held inline, so that making an
/// object resident allocates no host memory (an unpacked object's list of components does).
pub(crate) type Blocks<B> = SmallVec<[Block<B>; 1]>;

/// The device copy of one object: its blocks and the work in flight on them.
pub(crate) struct DeviceCopy<B: Backend> {
    /// One block (packed) or one per component (unpacked).
    pub blocks: Blocks<B>,
    /// Whether `blocks` is one contiguous block of all components.
    pub packed: bool,
    /// Work in flight on these buffers.
    pub hazards: Hazards<B>,
}

impl<B: Backend> DeviceCopy<B> {
    /// No blocks yet, room for those `layout` needs: one of the whole object when `packed`,
    /// else one per component. Returns it with that count and the size of each block.
    pub fn empty(layout: Layout, packed: bool) -> (Self, usize, usize) {
        let (count, size) = if packed {
            (1, layout.bytes())
        } else {
            (layout.components(), layout.component_bytes())
        };
        let resident = DeviceCopy {
            blocks: SmallVec::with_capacity(count),
            packed,
            hazards: Hazards::default(),
        };
        (resident, count, size)
    }

    /// Bytes held (with any slack beyond what the layout needs).
    pub fn bytes(&self) -> usize {
        self.blocks.iter().map(Block::bytes).sum()
    }

    /// Elements of each block the object uses: all of them (packed) or one component's.
    pub fn block_elems(&self, layout: &Layout) -> usize {
        if self.packed {
            layout.elems()
        } else {
            layout.component_elems()
        }
    }

    /// Where component `c` of an object of `layout` starts (`arena`: the arena's buffer, for
    /// blocks in it).
    pub fn component<'a>(
        &'a self,
        layout: &Layout,
        c: usize,
        arena: Option<&'a B::Buffer>,
    ) -> Option<DeviceRef<'a, B::Buffer>> {
        if c >= layout.components() {
            return None;
        }
        let (block, within) = if self.packed {
            (self.blocks.first()?, layout.component_offset(c))
        } else {
            (self.blocks.get(c)?, 0)
        };
        let (buffer, offset) = block.place(arena)?;
        Some(DeviceRef::new(buffer, offset / ELEMENT_BYTES + within))
    }
}

/// A write-back in flight (prefetch on): the device copy of a dirty object was evicted with its
/// copy to the host queued on the copy stream. Holds the host memory the copy fills and the
/// event recorded after it; the object is `WritingBack` until its value is needed and the
/// copy is waited for (`WriteBackLanded`).
pub(crate) struct WriteBack<B: Backend> {
    /// Host memory the backend allocated for asynchronous copies (pinned, on a GPU).
    pub buffer: B::HostBuffer,
    /// Where it came from (a piece of the pinned pool: its range, given back after the memory).
    pub origin: crate::host_copy::Origin,
    /// Recorded on the copy stream after the copy.
    pub event: Tagged<B>,
}

impl<B: Backend> std::fmt::Debug for DeviceCopy<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceCopy")
            .field("blocks", &self.blocks)
            .field("packed", &self.packed)
            .field("hazards", &self.hazards)
            .finish()
    }
}

impl<B: Backend> std::fmt::Debug for WriteBack<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteBack")
            .field("stream", &self.event.stream)
            .finish()
    }
}
