//! The identity of an object, as policies and the runtime name it.

use std::fmt;

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
