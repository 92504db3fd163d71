//! What a backend reports about one call: [`BackendError`], and the kind of call it concerns,
//! [`BackendOp`].

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
    /// A fault injected on purpose by [`FaultInjector`](crate::fault::FaultInjector).
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
