//! The element cache: object -> resident device memory (MemHC's `element_cache` table).
//!
//! A packed object owns one block holding all its components back to back (the paper's "head
//! of contiguous memory" whose children are the component views); an unpacked object owns one
//! block per component. A block is a driver buffer or an arena range ([`Block`]). Asking for an
//! object found here is a hit: no allocation, no copy.

use smallvec::SmallVec;

use crate::backend::gemm::DeviceRef;
use crate::backend::{Backend, ELEMENT_BYTES};
use crate::block::Block;
use crate::hazards::Hazards;
use crate::object::{Layout, ObjectId};
use crate::policy::IdTable;

/// The blocks of one object: a packed object's one block is held inline, so that making an
/// object resident allocates no host memory (an unpacked object's list of components does).
pub(crate) type Blocks<B> = SmallVec<[Block<B>; 1]>;

/// The device copy of one object.
pub(crate) struct Resident<B: Backend> {
    /// One block (packed) or one per component (unpacked).
    pub blocks: Blocks<B>,
    /// Whether `blocks` is one contiguous block of all components.
    pub packed: bool,
    /// Work in flight on these buffers.
    pub hazards: Hazards<B>,
}

impl<B: Backend> Resident<B> {
    /// No blocks yet, room for those `layout` needs: one of the whole object when `packed`,
    /// else one per component. Returns it with that count and the size of each block.
    pub fn empty(layout: Layout, packed: bool) -> (Self, usize, usize) {
        let (count, size) = if packed {
            (1, layout.bytes())
        } else {
            (layout.components(), layout.component_bytes())
        };
        let resident = Resident {
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
            (self.blocks.first()?, c * layout.component_elems())
        } else {
            (self.blocks.get(c)?, 0)
        };
        let (buffer, offset) = block.place(arena)?;
        Some(DeviceRef::new(buffer, offset / ELEMENT_BYTES + within))
    }
}

/// The table of resident objects.
pub(crate) struct ElementCache<B: Backend> {
    map: IdTable<Resident<B>>,
    bytes: usize,
}

impl<B: Backend> Default for ElementCache<B> {
    fn default() -> Self {
        ElementCache {
            map: IdTable::default(),
            bytes: 0,
        }
    }
}

impl<B: Backend> ElementCache<B> {
    pub fn contains(&self, id: ObjectId) -> bool {
        self.map.contains_key(&id)
    }

    pub fn get(&self, id: ObjectId) -> Option<&Resident<B>> {
        self.map.get(&id)
    }

    pub fn get_mut(&mut self, id: ObjectId) -> Option<&mut Resident<B>> {
        self.map.get_mut(&id)
    }

    /// Makes room for `id` (a new object), so that its insertion allocates nothing.
    pub fn reserve(&mut self, id: ObjectId) {
        self.map.reserve(id);
    }

    /// Records `id` as resident in `r`. An object is never resident twice: a previous entry is
    /// returned to the caller, which must dispose of it.
    pub fn insert(&mut self, id: ObjectId, r: Resident<B>) -> Option<Resident<B>> {
        self.bytes += r.bytes();
        let old = self.map.insert(id, r);
        if let Some(o) = &old {
            self.bytes -= o.bytes();
        }
        old
    }

    pub fn remove(&mut self, id: ObjectId) -> Option<Resident<B>> {
        let r = self.map.remove(&id)?;
        self.bytes -= r.bytes();
        Some(r)
    }

    /// Bytes held by resident objects (kept as a running total; the audit recomputes it).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = (ObjectId, &Resident<B>)> {
        self.map.iter()
    }

    /// Empties the table.
    pub fn drain(&mut self) -> Vec<(ObjectId, Resident<B>)> {
        self.bytes = 0;
        self.map.drain()
    }
}
