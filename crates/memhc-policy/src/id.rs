//! The identity of an object, as policies and the runtime name it.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

/// Handle of an object managed by a memhc runtime. Copying a handle never copies data.
///
/// It lives in this crate because a policy needs nothing else to know an object by; the
/// runtime (`memhc-core`) hands out these handles and re-exports the type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct ObjectId(pub(crate) u64);

impl ObjectId {
    /// The numeric value of the handle (unique within one runtime, assigned in creation order).
    pub fn index(self) -> u64 {
        self.0
    }

    /// A handle with a given numeric value. Policies and traces use ids that do not come from a
    /// runtime (for example in unit tests of a policy); a runtime only accepts the ids it made.
    pub fn from_index(index: u64) -> Self {
        ObjectId(index)
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// A [`Hasher`] for [`ObjectId`] keys: one multiplication (Fibonacci hashing), where the
/// standard library's SipHash spends tens of instructions. Ids are small integers handed out
/// in order, not attacker-chosen, so a hash-flooding defence buys nothing here.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    /// One multiplication too, for the other small integers the runtime keys tables by (a
    /// buffer's length in bytes), where the provided version would take each byte apart.
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// A hash map keyed by [`ObjectId`] with the cheap [`IdHasher`]: what every per-object table
/// on the hot path (the policies', the runtime's) uses.
pub type IdMap<V> = HashMap<ObjectId, V, BuildHasherDefault<IdHasher>>;

/// A hash set of [`ObjectId`]s with the cheap [`IdHasher`].
pub type IdSet = HashSet<ObjectId, BuildHasherDefault<IdHasher>>;

/// The dense part of an [`IdTable`] grows to cover an id below twice its length (or twice its
/// entries) plus this.
const DENSE_SLACK: usize = 1024;

/// The dense part of an [`IdTable`] covers no id at or above this (ids a runtime hands out stay
/// far below it).
const DENSE_MAX: usize = 1 << 27;

/// A map keyed by [`ObjectId`] for the per-object tables of the hot path: a `Vec` indexed by
/// the id, since a runtime hands ids out densely, in order. A lookup is an index, and objects
/// made one after another sit next to each other in memory, so a long queue walks its tables
/// in order instead of hashing into them at random (the cache misses that made the cost per
/// contraction grow with the queue).
///
/// The dense part grows geometrically: to an id below `2 * max(its length, entries) + 1024`
/// (and below 2^27). Ids out of that reach (ids that did not come from a runtime, say in a
/// policy's own tests, or arbitrary ones) go to a hash map instead, and move to the dense part
/// once it covers them, so arbitrary ids cost memory in proportion to the entries. Iteration
/// is in increasing id order over the dense part, then over the others in no order.
#[derive(Clone, Debug)]
pub struct IdTable<V> {
    dense: Vec<Option<V>>,
    /// Entries whose id is at least `dense.len()`.
    sparse: IdMap<V>,
    /// At least the largest index in `sparse` (0 when it is empty): when the dense part may
    /// cover it, every sparse entry moves there, so none stays sparse for long.
    sparse_max: usize,
    len: usize,
}

impl<V> Default for IdTable<V> {
    fn default() -> Self {
        IdTable {
            dense: Vec::new(),
            sparse: IdMap::default(),
            sparse_max: 0,
            len: 0,
        }
    }
}

impl<V> IdTable<V> {
    /// The position of `id` in the dense part, if it has one there.
    fn slot(&self, id: ObjectId) -> Option<usize> {
        usize::try_from(id.0).ok().filter(|&i| i < self.dense.len())
    }

    /// The value of `id`.
    pub fn get(&self, id: &ObjectId) -> Option<&V> {
        match self.slot(*id) {
            Some(i) => self.dense[i].as_ref(),
            None if self.sparse.is_empty() => None,
            None => self.sparse.get(id),
        }
    }

    /// The value of `id`, mutably.
    pub fn get_mut(&mut self, id: &ObjectId) -> Option<&mut V> {
        match self.slot(*id) {
            Some(i) => self.dense[i].as_mut(),
            None if self.sparse.is_empty() => None,
            None => self.sparse.get_mut(id),
        }
    }

    /// Whether `id` has a value.
    pub fn contains_key(&self, id: &ObjectId) -> bool {
        self.get(id).is_some()
    }

    /// Sets the value of `id`, returning the one it replaces.
    pub fn insert(&mut self, id: ObjectId, value: V) -> Option<V> {
        let index = usize::try_from(id.0).unwrap_or(usize::MAX);
        self.reserve(id);
        let old = match self.slot(id) {
            Some(i) => self.dense[i].replace(value),
            None => {
                self.sparse_max = self.sparse_max.max(index);
                self.sparse.insert(id, value)
            }
        };
        if old.is_none() {
            self.len += 1;
            if !self.sparse.is_empty() && self.sparse_max < self.dense_bound(0) {
                self.grow(self.sparse_max);
            }
        }
        old
    }

    /// Makes room for `id` in the dense part when it is within the dense part's reach, so that
    /// inserting it later moves and allocates nothing: a runtime calls this as it makes an
    /// object, so that its tables never grow on the launch path.
    pub fn reserve(&mut self, id: ObjectId) {
        let index = usize::try_from(id.0).unwrap_or(usize::MAX);
        if index >= self.dense.len() && index < self.dense_bound(1) {
            self.grow(index);
        }
    }

    /// The ids the dense part may grow to cover with `more` entries added.
    fn dense_bound(&self, more: usize) -> usize {
        self.len
            .saturating_add(more)
            .max(self.dense.len())
            .saturating_mul(2)
            .saturating_add(DENSE_SLACK)
            .min(DENSE_MAX)
    }

    /// Extends the dense part to cover `index` and as far as it may reach (so that it at least
    /// doubles, and growing costs O(1) per entry, amortised), unless the memory cannot be had;
    /// moves there the entries of the sparse part that it now covers.
    fn grow(&mut self, index: usize) {
        let end = self.dense_bound(0).max(index + 1);
        let more = end.saturating_sub(self.dense.len());
        if self.dense.try_reserve_exact(more).is_err() {
            return;
        }
        self.dense.resize_with(end, || None);
        if self.sparse.is_empty() {
            return;
        }
        // Every sparse id the dense part now covers, not only those up to `index`: one left
        // behind would be looked for in the dense part and not found.
        let covered = self.dense.len();
        let moved: Vec<ObjectId> = self
            .sparse
            .keys()
            .copied()
            .filter(|k| usize::try_from(k.0).is_ok_and(|k| k < covered))
            .collect();
        for k in moved {
            if let (Some(v), Ok(at)) = (self.sparse.remove(&k), usize::try_from(k.0)) {
                self.dense[at] = Some(v);
            }
        }
        if self.sparse.is_empty() {
            self.sparse_max = 0;
        }
    }

    /// Removes the value of `id`, returning it.
    pub fn remove(&mut self, id: &ObjectId) -> Option<V> {
        let old = match self.slot(*id) {
            Some(i) => self.dense[i].take(),
            None if self.sparse.is_empty() => None,
            None => self.sparse.remove(id),
        };
        if old.is_some() {
            self.len -= 1;
        }
        if self.sparse.is_empty() {
            self.sparse_max = 0;
        }
        old
    }

    /// Number of ids with a value.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no id has a value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Removes every value.
    pub fn clear(&mut self) {
        self.dense.clear();
        self.sparse.clear();
        self.sparse_max = 0;
        self.len = 0;
    }

    /// Every id with its value.
    pub fn iter(&self) -> impl Iterator<Item = (ObjectId, &V)> {
        self.dense
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.as_ref().map(|v| (ObjectId(i as u64), v)))
            .chain(self.sparse.iter().map(|(&k, v)| (k, v)))
    }

    /// Every id with a value.
    pub fn keys(&self) -> impl Iterator<Item = ObjectId> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// Removes every value, returning them with their ids.
    pub fn drain(&mut self) -> Vec<(ObjectId, V)> {
        let dense = std::mem::take(&mut self.dense);
        let mut out: Vec<(ObjectId, V)> = dense
            .into_iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (ObjectId(i as u64), v)))
            .collect();
        out.extend(self.sparse.drain());
        self.sparse_max = 0;
        self.len = 0;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table against a `HashMap`, on dense ids and on ids far apart, mixed.
    #[test]
    fn id_table_behaves_as_a_map() {
        let mut t = IdTable::default();
        let mut m = HashMap::new();
        let (mut x, mut most) = (7u64, 0);
        for step in 0..20_000u64 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let id = ObjectId(match step % 4 {
                0 => x >> 20,
                _ => (x >> 33) % 3000,
            });
            if (x >> 10) % 3 == 0 {
                assert_eq!(t.remove(&id), m.remove(&id));
            } else {
                assert_eq!(t.insert(id, step), m.insert(id, step));
            }
            assert_eq!(t.get(&id), m.get(&id));
            assert_eq!(t.len(), m.len());
            if step % 997 == 0 {
                assert!(m.iter().all(|(k, v)| t.get(k) == Some(v)), "step {step}");
            }
            most = most.max(m.len());
        }
        let mut got: Vec<_> = t.iter().map(|(k, &v)| (k, v)).collect();
        let mut want: Vec<_> = m.iter().map(|(&k, &v)| (k, v)).collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);
        assert!(t.dense.len() <= 4 * 3000 + 3 * DENSE_SLACK);
        assert!(most > 0);
        let mut drained = t.drain();
        drained.sort_unstable();
        assert_eq!(drained, want);
        assert!(t.is_empty() && t.get(&ObjectId(1)).is_none());
    }

    /// An id in the sparse part that the dense part comes to cover, when the id that made it
    /// grow is below it, moves with the others: before, only ids up to the one inserted moved,
    /// and this one became invisible (`get` looked in the dense part and found nothing).
    #[test]
    fn id_table_moves_every_sparse_id_the_dense_part_covers() {
        let mut t = IdTable::default();
        assert_eq!(t.insert(ObjectId(1027), 'a'), None);
        assert_eq!(t.insert(ObjectId(1_000_000), 'b'), None);
        assert_eq!(t.insert(ObjectId(0), 'c'), None);
        assert!(t.dense.len() > 1027, "the dense part grew past 1027");
        assert_eq!(t.get(&ObjectId(1027)), Some(&'a'));
        assert_eq!(t.get(&ObjectId(1_000_000)), Some(&'b'));
        assert_eq!(t.get(&ObjectId(0)), Some(&'c'));
        assert_eq!(t.insert(ObjectId(1027), 'd'), Some('a'));
        assert_eq!(t.len(), 3);
    }

    /// Ids arriving from the top down start in the sparse part and all end up dense.
    #[test]
    fn id_table_moves_sparse_ids_into_the_dense_part() {
        let mut t = IdTable::default();
        for i in (0..10_000u64).rev() {
            assert_eq!(t.insert(ObjectId(i), i), None);
        }
        assert!(t.sparse.is_empty() && t.len() == 10_000);
        assert!((0..10_000u64).all(|i| t.get(&ObjectId(i)) == Some(&i)));
        let keys: Vec<u64> = t.keys().map(ObjectId::index).collect();
        assert_eq!(keys, (0..10_000).collect::<Vec<_>>());
    }
}
