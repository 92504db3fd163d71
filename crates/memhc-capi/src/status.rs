//! Status codes, and the failures behind them.

use memhc_embed::{EmbedError, ErrorKind};

/// What a memhc function returns: `MEMHC_STATUS_OK` (0) on success, otherwise the kind of
/// failure; `memhc_last_error()` then explains it in one line. A status is a 32-bit integer on
/// every platform; new codes may be added at the end in later versions, so treat any unknown
/// non-zero value as a failure (`memhc_status_name` names every code).
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemhcStatus {
    /// Success.
    Ok = 0,
    /// A pointer argument that must not be null was null (an out-parameter, a string, or an
    /// array with a non-zero length).
    NullPointer = 1,
    /// A handle that is null, stale (released already: a double release or a use after
    /// release), of the wrong kind, or from another runtime. Nothing was done.
    InvalidHandle = 2,
    /// An argument out of range or inconsistent: a shape, a spin mapping, trace pairs, a
    /// matrix split, a stream index, a configuration value, a misaligned pointer.
    InvalidArgument = 3,
    /// A buffer whose length is not the one the object or the shape needs.
    SizeMismatch = 4,
    /// A backend, policy or mode name that is not known, or a string that is not UTF-8.
    UnknownName = 5,
    /// The backend cannot run here: not compiled into this library, or no driver, GPU
    /// library or device. The message says which.
    Unavailable = 6,
    /// The objects one operation needs at once do not fit in the device budget, even after
    /// evicting everything else.
    DoesNotFit = 7,
    /// An object read before it holds a value.
    Uninitialized = 8,
    /// A device call (copy, GEMM, allocation) failed.
    Device = 9,
    /// `memhc_audit` found an invariant of the runtime's tables broken (a bug in memhc).
    AuditFailed = 10,
    /// A caller's buffer is too small for what is asked (`memhc_last_error_copy`,
    /// `memhc_object_shape`); the size needed is reported.
    BufferTooSmall = 11,
    /// A bug in memhc, caught before it could cross the boundary (an internal invariant, or a
    /// Rust panic). A runtime that reports this from inside should be destroyed.
    Internal = 12,
    /// A file that cannot be read or written: a correlator file that is missing or
    /// unreadable, a results file in a directory that does not exist. The message names it.
    Io = 13,
    /// A correlator file that is not valid `memhc-corr/1` (JSON that does not parse, an
    /// unknown node or graph, mismatched dims, a node data file missing or of the wrong shape):
    /// one line naming the file and the place (graph, loop, node).
    InvalidFile = 14,
    /// Computed correlators that differ from the independent reference by more than the
    /// tolerance (`memhc_corr_verify`).
    VerifyFailed = 15,
    /// A name looked up that is not there (`memhc_corr_results_find`).
    NotFound = 16,
    /// A request larger than the host memory available (a spin count, a node, a correlator
    /// file's data), refused before anything was allocated; `MEMHC_HOST_MEMORY` sets what is
    /// available. Nothing was changed.
    OutOfHostMemory = 17,
}

impl MemhcStatus {
    /// The name of the code as the header spells it.
    pub fn name(self) -> &'static str {
        match self {
            MemhcStatus::Ok => "MEMHC_STATUS_OK",
            MemhcStatus::NullPointer => "MEMHC_STATUS_NULL_POINTER",
            MemhcStatus::InvalidHandle => "MEMHC_STATUS_INVALID_HANDLE",
            MemhcStatus::InvalidArgument => "MEMHC_STATUS_INVALID_ARGUMENT",
            MemhcStatus::SizeMismatch => "MEMHC_STATUS_SIZE_MISMATCH",
            MemhcStatus::UnknownName => "MEMHC_STATUS_UNKNOWN_NAME",
            MemhcStatus::Unavailable => "MEMHC_STATUS_UNAVAILABLE",
            MemhcStatus::DoesNotFit => "MEMHC_STATUS_DOES_NOT_FIT",
            MemhcStatus::Uninitialized => "MEMHC_STATUS_UNINITIALIZED",
            MemhcStatus::Device => "MEMHC_STATUS_DEVICE",
            MemhcStatus::AuditFailed => "MEMHC_STATUS_AUDIT_FAILED",
            MemhcStatus::BufferTooSmall => "MEMHC_STATUS_BUFFER_TOO_SMALL",
            MemhcStatus::Internal => "MEMHC_STATUS_INTERNAL",
            MemhcStatus::Io => "MEMHC_STATUS_IO",
            MemhcStatus::InvalidFile => "MEMHC_STATUS_INVALID_FILE",
            MemhcStatus::VerifyFailed => "MEMHC_STATUS_VERIFY_FAILED",
            MemhcStatus::NotFound => "MEMHC_STATUS_NOT_FOUND",
            MemhcStatus::OutOfHostMemory => "MEMHC_STATUS_OUT_OF_HOST_MEMORY",
        }
    }

    /// Every code, in order.
    pub const ALL: [MemhcStatus; 18] = [
        MemhcStatus::Ok,
        MemhcStatus::NullPointer,
        MemhcStatus::InvalidHandle,
        MemhcStatus::InvalidArgument,
        MemhcStatus::SizeMismatch,
        MemhcStatus::UnknownName,
        MemhcStatus::Unavailable,
        MemhcStatus::DoesNotFit,
        MemhcStatus::Uninitialized,
        MemhcStatus::Device,
        MemhcStatus::AuditFailed,
        MemhcStatus::BufferTooSmall,
        MemhcStatus::Internal,
        MemhcStatus::Io,
        MemhcStatus::InvalidFile,
        MemhcStatus::VerifyFailed,
        MemhcStatus::NotFound,
        MemhcStatus::OutOfHostMemory,
    ];
}

/// A failed call: its status and the one-line message `memhc_last_error` gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The status returned.
    pub status: MemhcStatus,
    /// The explanation.
    pub message: String,
}

impl Failure {
    /// A failure of `status` explained by `message`.
    pub fn new(status: MemhcStatus, message: impl Into<String>) -> Self {
        Failure {
            status,
            message: message.into(),
        }
    }

    /// A null pointer where `what` was expected.
    pub fn null(what: &str) -> Self {
        Failure::new(
            MemhcStatus::NullPointer,
            format!("{what} is a null pointer"),
        )
    }

    /// A refused handle.
    pub fn handle(message: String) -> Self {
        Failure::new(MemhcStatus::InvalidHandle, message)
    }

    /// An argument out of range.
    pub fn argument(message: impl Into<String>) -> Self {
        Failure::new(MemhcStatus::InvalidArgument, message)
    }
}

impl From<EmbedError> for Failure {
    fn from(e: EmbedError) -> Self {
        let status = match e.kind() {
            ErrorKind::InvalidArgument => MemhcStatus::InvalidArgument,
            ErrorKind::SizeMismatch => MemhcStatus::SizeMismatch,
            ErrorKind::UnknownName => MemhcStatus::UnknownName,
            ErrorKind::Unavailable => MemhcStatus::Unavailable,
            ErrorKind::DoesNotFit => MemhcStatus::DoesNotFit,
            ErrorKind::Uninitialized => MemhcStatus::Uninitialized,
            ErrorKind::UnknownObject => MemhcStatus::InvalidHandle,
            ErrorKind::Device => MemhcStatus::Device,
            ErrorKind::AuditFailed => MemhcStatus::AuditFailed,
            ErrorKind::Internal => MemhcStatus::Internal,
            ErrorKind::Io => MemhcStatus::Io,
            ErrorKind::InvalidFile => MemhcStatus::InvalidFile,
            ErrorKind::VerifyFailed => MemhcStatus::VerifyFailed,
            ErrorKind::OutOfHostMemory => MemhcStatus::OutOfHostMemory,
        };
        Failure::new(status, e.to_string())
    }
}

impl From<memhc_embed::hadron::HadronError> for Failure {
    fn from(e: memhc_embed::hadron::HadronError) -> Self {
        EmbedError::from(e).into()
    }
}

/// Shorthand for the results of the safe layer.
pub type Outcome<T> = Result<T, Failure>;
