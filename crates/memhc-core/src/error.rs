//! Typed errors of the runtime.
//!
//! Two layers, as in the code: a [`BackendError`] (from `memhc-backend`) is what a device (or
//! the host reference device) reports about one call; an [`Error`] is what the runtime reports
//! to its caller, and wraps backend errors with [`Error::Backend`].

pub use memhc_backend::{BackendError, BackendOp};

use memhc_policy::ObjectId;

/// An error reported by the [`Runtime`](crate::Runtime).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A backend call failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The object id does not name a live object of this runtime.
    #[error("unknown object {0}")]
    UnknownObject(ObjectId),
    /// An object is read before anything was ever written to it.
    #[error(
        "object {0} holds no value (it was never written, or a failed launch that was writing \
         it left it undefined)"
    )]
    Uninitialized(ObjectId),
    /// A set of objects that must be resident at the same time cannot fit in the device budget,
    /// even after releasing every pooled buffer and evicting every evictable object.
    #[error(
        "working set does not fit: {needed} bytes needed at once, {available} bytes available \
         (device budget {budget} bytes)"
    )]
    DoesNotFit {
        /// Bytes that must be resident at once.
        needed: usize,
        /// Bytes that could be made available.
        available: usize,
        /// The device budget.
        budget: usize,
    },
    /// Arena mode ([`Config::arena`](crate::Config::arena)): the arena has `free` bytes, enough
    /// for the `needed` ones, but not in one piece (the largest free piece is `largest` bytes),
    /// and nothing is left to evict. A launch that meets this puts its own objects back, empties
    /// the arena and tries once more, so it reaches a caller only if that failed too.
    #[error(
        "the arena is fragmented: {needed} bytes needed in one piece, {free} bytes free but the          largest free piece has {largest}"
    )]
    Fragmented {
        /// Bytes asked for.
        needed: usize,
        /// Free bytes in the arena.
        free: usize,
        /// The largest free piece.
        largest: usize,
    },
    /// Unified memory mode: a managed allocation would take the runtime past its device budget,
    /// or past what the device has free. Managed memory is never evicted and never
    /// oversubscribed, so there is nothing to make room with.
    #[error(
        "unified memory is never oversubscribed: {requested} more bytes of managed memory on top \
         of the {held} bytes held exceed the {available} bytes available (device budget {budget} \
         bytes)"
    )]
    ManagedDoesNotFit {
        /// Bytes of the allocation asked for.
        requested: usize,
        /// Bytes of managed memory the runtime holds already.
        held: usize,
        /// Bytes the runtime may hold in all: the budget, or less if the device has less free.
        available: usize,
        /// The device budget.
        budget: usize,
    },
    /// Host data does not have the length the object's layout requires.
    #[error("data for {what} has {got} elements, but its layout needs {expected}")]
    LengthMismatch {
        /// Which object or call.
        what: String,
        /// Elements required by the layout.
        expected: usize,
        /// Elements supplied.
        got: usize,
    },
    /// A layout with zero components, zero-sized components or a size that overflows.
    #[error("invalid layout: {0}")]
    InvalidLayout(String),
    /// The same object appears twice in one launch's access list.
    #[error("object {0} is listed twice in one launch")]
    DuplicateAccess(ObjectId),
    /// A launch asked for a stream the runtime does not have.
    #[error("stream {stream} does not exist (the runtime has {streams} streams)")]
    NoSuchStream {
        /// The stream index asked for.
        stream: usize,
        /// How many streams the runtime has.
        streams: usize,
    },
    /// Work inside a launch tried to write an object the launch declared read-only, or used an
    /// index that is not one of the launch's accesses.
    #[error("launch misuse: {0}")]
    LaunchMisuse(String),
    /// An internal invariant was found broken (a bug in the runtime or in a policy); the
    /// operation was abandoned before it could corrupt anything.
    #[error("internal error: {0}")]
    Internal(String),
    /// A configuration value is out of range.
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    /// A policy name that is not one of the known policies.
    #[error(
        "unknown eviction policy '{0}' (known: lru, pp-lru, random, mru, car, clock-pro, belady)"
    )]
    UnknownPolicy(String),
    /// A mode name that is not one of the known modes.
    #[error("unknown mode '{0}' (known: naive, reorg, reorg-sync, optimal, unified)")]
    UnknownMode(String),
}

impl From<memhc_policy::UnknownPolicy> for Error {
    fn from(e: memhc_policy::UnknownPolicy) -> Self {
        Error::UnknownPolicy(e.0)
    }
}

/// Shorthand for results of runtime calls.
pub type Result<T, E = Error> = std::result::Result<T, E>;
