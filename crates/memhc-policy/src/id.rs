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
}

/// A hash map keyed by [`ObjectId`] with the cheap [`IdHasher`]: what every per-object table
/// on the hot path (the policies', the runtime's) uses.
pub type IdMap<V> = HashMap<ObjectId, V, BuildHasherDefault<IdHasher>>;

/// A hash set of [`ObjectId`]s with the cheap [`IdHasher`].
pub type IdSet = HashSet<ObjectId, BuildHasherDefault<IdHasher>>;
