//! Typed errors of the runtime and of backends.
//!
//! Two layers, as in the code: a [`BackendError`] is what a device (or the host reference
//! device) reports about one call; an [`Error`] is what the runtime reports to its caller, and
//! wraps backend errors with [`Error::Backend`].

use crate::object::ObjectId;

/// Which kind of backend call an error or an injected fault concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum BackendOp {
    /// Device allocation.
    Alloc,
    /// Device free.
    Free,
    /// Host-to-device copy.
    CopyH2D,
    /// Device-to-host copy.
    CopyD2H,
    /// Batched GEMM (pointer-array or strided), or batched matrix addition.
    Gemm,
    /// Stream or event creation, recording, waiting or synchronisation.
    Sync,
}

impl std::fmt::Display for BackendOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BackendOp::Alloc => "alloc",
            BackendOp::Free => "free",
            BackendOp::CopyH2D => "copy host-to-device",
            BackendOp::CopyD2H => "copy device-to-host",
            BackendOp::Gemm => "gemm",
            BackendOp::Sync => "stream/event",
        })
    }
}

/// An error reported by a [`Backend`](crate::Backend) call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// The device could not provide `requested` bytes. The runtime reacts to this one by
    /// releasing pooled buffers and evicting objects, then retrying.
    #[error("device out of memory: requested {requested} bytes, {free} bytes free")]
    OutOfMemory {
        /// Bytes asked for.
        requested: usize,
        /// Bytes the device reported free at the time.
        free: usize,
    },
    /// The arguments of a call are invalid (bad sizes, out-of-bounds ranges, aliasing).
    #[error("invalid argument to {op}: {reason}")]
    InvalidArgument {
        /// The call that was refused.
        op: BackendOp,
        /// What is wrong, in words.
        reason: String,
    },
    /// A buffer was freed while work that uses it had not completed. This is a bug in the
    /// caller (the runtime must wait on the buffer's events first); the host backend detects it.
    #[error("buffer {handle:#x} freed while {pending} operation(s) using it are still in flight")]
    BufferInUse {
        /// The buffer's handle.
        handle: u64,
        /// How many queued operations still reference it.
        pending: usize,
    },
    /// The backend cannot be used here: no driver, no library, no device.
    #[error("backend unavailable: {0}")]
    Unavailable(String),
    /// The backend does not offer what was asked of it (managed memory, say).
    #[error("not supported: {0}")]
    Unsupported(String),
    /// A driver or library call failed.
    #[error("{call} failed: {message}")]
    Driver {
        /// The library function that failed.
        call: &'static str,
        /// The library's description of the failure.
        message: String,
    },
    /// An operation that ran asynchronously on a stream failed; reported at the next
    /// synchronisation point.
    #[error("asynchronous {op} failed on stream: {message}")]
    Async {
        /// The kind of operation that failed.
        op: BackendOp,
        /// What went wrong.
        message: String,
    },
    /// A fault injected on purpose by [`FaultInjector`](crate::backend::fault::FaultInjector).
    #[error("injected fault in {op} (call #{call})")]
    Injected {
        /// The kind of call that was failed.
        op: BackendOp,
        /// The 1-based index of that call among calls of its kind.
        call: u64,
    },
}

impl BackendError {
    /// Shorthand for [`BackendError::InvalidArgument`].
    pub fn invalid(op: BackendOp, reason: impl Into<String>) -> Self {
        BackendError::InvalidArgument {
            op,
            reason: reason.into(),
        }
    }
}

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

/// Shorthand for results of runtime calls.
pub type Result<T, E = Error> = std::result::Result<T, E>;
