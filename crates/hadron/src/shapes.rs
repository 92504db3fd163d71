//! The shapes of an engine's nodes, interned: each distinct [`NodeShape`] is stored once, and
//! a node holds a 4-byte index to it.
//!
//! Every contraction reads the shapes of its nodes, and a long queue draws those nodes from
//! hundreds of thousands: with an 80-byte shape per node, the table outgrew the caches and each
//! read was a miss to memory. A queue has few distinct shapes (one per kind of node: meson,
//! baryon, each size of the distillation basis), so the distinct ones stay in cache, and the
//! per-node table (4 bytes a node, 16 nodes to a cache line) stays small.

use std::collections::HashMap;
use std::num::NonZeroU32;

use memhc_core::ObjectId;
use memhc_core::policy::IdTable;

use crate::node::NodeShape;

/// The shape of every live node, by id. See the [module documentation](self).
#[derive(Debug, Default)]
pub(crate) struct ShapeTable {
    /// The distinct shapes seen, in the order first seen; never shrinks (there are few).
    distinct: Vec<NodeShape>,
    /// Where each distinct shape sits in `distinct`.
    index: HashMap<NodeShape, NonZeroU32>,
    /// One plus the position in `distinct` of each live node's shape.
    of: IdTable<NonZeroU32>,
}

impl ShapeTable {
    /// Notes that node `id` has `shape`. `None` when the table holds `u32::MAX - 1` distinct
    /// shapes already and this is a new one (no queue comes near).
    pub fn insert(&mut self, id: ObjectId, shape: NodeShape) -> Option<()> {
        let slot = match self.index.get(&shape) {
            Some(&slot) => slot,
            None => {
                let slot = u32::try_from(self.distinct.len() + 1)
                    .ok()
                    .and_then(NonZeroU32::new)?;
                self.distinct.push(shape.clone());
                self.index.insert(shape, slot);
                slot
            }
        };
        self.of.insert(id, slot);
        Some(())
    }

    /// The shape of node `id`, if it is live.
    pub fn get(&self, id: ObjectId) -> Option<&NodeShape> {
        let slot = *self.of.get(&id)?;
        self.distinct.get(slot.get() as usize - 1)
    }

    /// Forgets node `id` (its shape stays interned for the nodes to come).
    pub fn remove(&mut self, id: ObjectId) {
        self.of.remove(&id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(spins: usize, dims: &[usize]) -> NodeShape {
        NodeShape::new(spins, dims).expect("a valid shape")
    }

    #[test]
    fn nodes_of_one_shape_share_it_and_keep_their_own() {
        let mut t = ShapeTable::default();
        let (a, b, c) = (
            ObjectId::from_index(0),
            ObjectId::from_index(1),
            ObjectId::from_index(7),
        );
        t.insert(a, shape(16, &[4, 4])).expect("room");
        t.insert(b, shape(64, &[4, 4, 4])).expect("room");
        t.insert(c, shape(16, &[4, 4])).expect("room");
        assert_eq!(t.distinct.len(), 2);
        assert_eq!(t.get(a), Some(&shape(16, &[4, 4])));
        assert_eq!(t.get(b), Some(&shape(64, &[4, 4, 4])));
        assert_eq!(t.get(c), Some(&shape(16, &[4, 4])));
        assert_eq!(t.get(ObjectId::from_index(2)), None);
    }

    #[test]
    fn a_removed_node_is_gone_and_the_others_stay() {
        let mut t = ShapeTable::default();
        let (a, b) = (ObjectId::from_index(3), ObjectId::from_index(4));
        t.insert(a, shape(16, &[2, 2])).expect("room");
        t.insert(b, shape(16, &[2, 2])).expect("room");
        t.remove(a);
        assert_eq!(t.get(a), None);
        assert_eq!(t.get(b), Some(&shape(16, &[2, 2])));
        // A node made again under the same shape finds it interned.
        t.insert(a, shape(16, &[2, 2])).expect("room");
        assert_eq!(t.distinct.len(), 1);
        assert_eq!(t.get(a), Some(&shape(16, &[2, 2])));
    }
}
