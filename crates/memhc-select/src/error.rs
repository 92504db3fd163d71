//! What goes wrong when a name is read or a backend opened: [`SelectError`], one line each.

use memhc_core::BackendError;

use crate::bytes::BytesError;

/// A name that reads as nothing known, a backend this build lacks, or one that cannot open.
///
/// Every message is one line and names what was given. Command lines put the option before
/// it (`--backend: unknown backend 'tpu' (...)`); the embedding layer sorts the variants into
/// its error kinds (an unknown name, or a backend unavailable here).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectError {
    /// Not one of the backends' names ([`BackendChoice::ALL`](crate::BackendChoice::ALL));
    /// holds the name given.
    #[error("unknown backend '{0}' (host, model, cuda or rocm)")]
    UnknownBackend(String),
    /// A backend the program was built without: how to rebuild it with the backend.
    #[error(
        "this build has no {backend} backend; rebuild with `--features {backend}` \
         (cargo build --release -p {package} --features {backend})"
    )]
    NotBuilt {
        /// The backend asked for, by name.
        backend: &'static str,
        /// The package to rebuild (`memhc-cli`, `memhc-synth`, ...).
        package: &'static str,
    },
    /// A backend that makes no data (the modelled H100) where values are needed.
    #[error(
        "the {0} backend models time and holds no data, so it computes no values; model a run \
         with `memhc run --backend model` or `memhc-synth --backend model`"
    )]
    NoData(&'static str),
    /// The backend did not open here: no driver, library or device, or a bad budget. The
    /// backend's own one-line reason.
    #[error(transparent)]
    Open(#[from] BackendError),
    /// A byte count that does not read ([`crate::bytes`]).
    #[error(transparent)]
    Bytes(#[from] BytesError),
    /// An unknown eviction policy, mode or allocation setting: the message of the type that
    /// owns the names (`unknown eviction policy 'lfu' (known: ...)`).
    #[error("{0}")]
    UnknownName(String),
}

/// A result with a [`SelectError`].
pub type Result<T> = std::result::Result<T, SelectError>;
