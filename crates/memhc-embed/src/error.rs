//! Errors of an embedded session, sorted into kinds a C status code or a Python exception can
//! carry.

use hadron::HadronError;
use memhc_core::{BackendError, Error};
use memhc_corr::CorrError;
use memhc_select::{BytesError, SelectError};

/// What went wrong, in the few kinds a caller in another language branches on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// An argument out of range or inconsistent: a shape, a mapping, trace pairs, a view, a
    /// stream, a configuration value.
    InvalidArgument,
    /// A buffer whose length is not the one the object or shape needs.
    SizeMismatch,
    /// A name that is not one of the known backends, policies or modes, or a byte count that
    /// does not parse.
    UnknownName,
    /// The backend cannot run here: not compiled into this build, or no driver, library or
    /// device.
    Unavailable,
    /// The objects one operation needs at once do not fit in the device budget.
    DoesNotFit,
    /// An object read before it holds a value.
    Uninitialized,
    /// An object id that does not name a live object of the session.
    UnknownObject,
    /// A device call failed.
    Device,
    /// [`Session::audit`](crate::Session::audit) found an invariant broken.
    AuditFailed,
    /// A bug in memhc: an invariant found broken before it could corrupt anything.
    Internal,
    /// A file that cannot be read or written (missing, unreadable, a directory that does not
    /// exist): a correlator file, or a results file being written.
    Io,
    /// A correlator file that is not valid `memhc-corr/1` (JSON that does not parse, an
    /// unknown node or graph, mismatched dims, a missing or malformed node data file, ...):
    /// the message names the file and the place.
    InvalidFile,
    /// Computed correlators that differ from the independent reference by more than the
    /// tolerance ([`CorrRun::verify`](crate::CorrRun::verify)).
    VerifyFailed,
    /// A request larger than the host memory available (`hadron::admission`: a spin count, a
    /// node, a correlator file's data): refused before anything was allocated.
    OutOfHostMemory,
}

/// An error of an embedded session: a [`HadronError`] from the engine, or one of the session's
/// own.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// The engine or the runtime refused or failed.
    #[error(transparent)]
    Hadron(#[from] HadronError),
    /// The backend cannot run here (not compiled in, or not openable).
    #[error("{0}")]
    Unavailable(String),
    /// An unknown backend, policy or mode name, or an unparsable byte count.
    #[error("{0}")]
    UnknownName(String),
    /// An argument the session checks itself (lengths, shapes of buffers).
    #[error("{0}")]
    SizeMismatch(String),
    /// The audit found broken invariants, one line each.
    #[error("audit failed: {}", .0.join("; "))]
    Audit(Vec<String>),
    /// Loading, planning, running or writing correlators failed.
    #[error(transparent)]
    Corr(CorrError),
    /// Computed correlators differ from the reference by more than the tolerance.
    #[error("{0}")]
    VerifyFailed(String),
    /// An argument the session checks itself that is not a size (a file extension, a name,
    /// a host buffer of another session).
    #[error("{0}")]
    InvalidArgument(String),
    /// A bug in memhc: an invariant found broken before it could corrupt anything.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<CorrError> for EmbedError {
    /// The hadron and runtime failures inside a correlator run keep their own kinds (a budget
    /// too small is still [`ErrorKind::DoesNotFit`]); file problems become
    /// [`ErrorKind::Io`] or [`ErrorKind::InvalidFile`].
    fn from(e: CorrError) -> Self {
        match e {
            CorrError::Hadron(h) => EmbedError::Hadron(h),
            CorrError::Runtime(r) => r.into(),
            other => EmbedError::Corr(other),
        }
    }
}

impl From<Error> for EmbedError {
    fn from(e: Error) -> Self {
        EmbedError::Hadron(HadronError::Runtime(e))
    }
}

impl From<SelectError> for EmbedError {
    /// A name that reads as nothing (a backend, a policy, a mode, a byte count) is
    /// [`ErrorKind::UnknownName`]; a backend this build lacks, or one without data, is
    /// [`ErrorKind::Unavailable`]; a backend that did not open keeps its own kind.
    fn from(e: SelectError) -> Self {
        match e {
            SelectError::Open(e) => e.into(),
            SelectError::UnknownBackend(_)
            | SelectError::Bytes(_)
            | SelectError::UnknownName(_) => EmbedError::UnknownName(e.to_string()),
            other => EmbedError::Unavailable(other.to_string()),
        }
    }
}

impl From<BytesError> for EmbedError {
    /// [`ErrorKind::UnknownName`], as every name that does not read.
    fn from(e: BytesError) -> Self {
        EmbedError::UnknownName(e.to_string())
    }
}

impl From<BackendError> for EmbedError {
    fn from(e: BackendError) -> Self {
        Error::from(e).into()
    }
}

impl EmbedError {
    /// The kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            EmbedError::Hadron(HadronError::Runtime(e)) => runtime_kind(e),
            EmbedError::Hadron(HadronError::UnknownNode(_)) => ErrorKind::UnknownObject,
            EmbedError::Hadron(HadronError::OutOfHostMemory { .. }) => ErrorKind::OutOfHostMemory,
            EmbedError::Hadron(_) => ErrorKind::InvalidArgument,
            EmbedError::Unavailable(_) => ErrorKind::Unavailable,
            EmbedError::UnknownName(_) => ErrorKind::UnknownName,
            EmbedError::SizeMismatch(_) => ErrorKind::SizeMismatch,
            EmbedError::Audit(_) => ErrorKind::AuditFailed,
            EmbedError::Corr(e) => corr_kind(e),
            EmbedError::VerifyFailed(_) => ErrorKind::VerifyFailed,
            EmbedError::InvalidArgument(_) => ErrorKind::InvalidArgument,
            EmbedError::Internal(_) => ErrorKind::Internal,
        }
    }
}

fn corr_kind(e: &CorrError) -> ErrorKind {
    match e {
        CorrError::Io { .. } => ErrorKind::Io,
        CorrError::Json { .. } | CorrError::Invalid(_) => ErrorKind::InvalidFile,
        CorrError::Unavailable(_) => ErrorKind::Unavailable,
        CorrError::Hadron(h) => EmbedError::Hadron(h.clone()).kind(),
        CorrError::Runtime(r) => runtime_kind(r),
        _ => ErrorKind::InvalidArgument,
    }
}

fn runtime_kind(e: &Error) -> ErrorKind {
    match e {
        Error::Backend(BackendError::Unavailable(_) | BackendError::Unsupported(_)) => {
            ErrorKind::Unavailable
        }
        Error::Backend(_) => ErrorKind::Device,
        Error::UnknownObject(_) => ErrorKind::UnknownObject,
        Error::Uninitialized(_) => ErrorKind::Uninitialized,
        Error::DoesNotFit { .. } | Error::Fragmented { .. } | Error::ManagedDoesNotFit { .. } => {
            ErrorKind::DoesNotFit
        }
        Error::LengthMismatch { .. } => ErrorKind::SizeMismatch,
        Error::UnknownPolicy(_) | Error::UnknownMode(_) => ErrorKind::UnknownName,
        Error::Internal(_) => ErrorKind::Internal,
        _ => ErrorKind::InvalidArgument,
    }
}

/// Shorthand for results of a session.
pub type Result<T, E = EmbedError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use memhc_core::ObjectId;

    #[test]
    fn kinds() {
        let fit = Error::DoesNotFit {
            needed: 2,
            available: 1,
            budget: 1,
        };
        assert_eq!(EmbedError::from(fit).kind(), ErrorKind::DoesNotFit);
        let gone = EmbedError::Hadron(HadronError::UnknownNode(ObjectId::from_index(3)));
        assert_eq!(gone.kind(), ErrorKind::UnknownObject);
        let none = EmbedError::from(BackendError::Unavailable("no driver".into()));
        assert_eq!(none.kind(), ErrorKind::Unavailable);
        assert!(none.to_string().ends_with("no driver"));
        assert_eq!(
            EmbedError::Hadron(HadronError::Empty("spin mapping")).kind(),
            ErrorKind::InvalidArgument
        );
    }
}
