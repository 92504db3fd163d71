//! Errors of the workload layer (generating, reading, writing, running and planning queues),
//! and so of `memhc-synth`, which re-exports them: each is one line that says where the
//! problem is. The crate's error is [`Error`] (called `SynthError` before issue 28, after the
//! tool that first had it).

use std::path::PathBuf;

/// A problem in a workload (generated or read from a file), with the place it is at.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{place}: {message}")]
pub struct WorkloadError {
    /// Where: a file and a JSON path (`work.json: vectors[2][0].b`), or a parameter.
    pub place: String,
    /// What is wrong.
    pub message: String,
}

impl WorkloadError {
    /// An error at `place`.
    pub fn at(place: impl Into<String>, message: impl Into<String>) -> Self {
        WorkloadError {
            place: place.into(),
            message: message.into(),
        }
    }

    /// The same error, with `prefix: ` before its place (a file name, say).
    pub fn within(mut self, prefix: &str) -> Self {
        self.place = format!("{prefix}: {}", self.place);
        self
    }
}

/// Everything that can stop a workload: generating, reading, writing, running or planning one
/// (and so everything that stops `memhc-synth`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A bad workload or workload file.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// Parameters that cannot work together.
    #[error("{0}")]
    Usage(String),
    /// The runtime failed.
    #[error(transparent)]
    Runtime(#[from] memhc_core::Error),
    /// The hadron layer failed.
    #[error(transparent)]
    Hadron(#[from] hadron::HadronError),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A result did not match the reference implementation.
    #[error("verification failed: {0}")]
    Verification(String),
    /// A run needs more host memory than the machine has available: refused before any data
    /// is made (see [`host_memory`](crate::host_memory)). Bad input, like a usage error.
    #[error(
        "{what} needs {} of host memory ({detail}), {} available",
        human_bytes(*.needed),
        human_bytes(*.available)
    )]
    HostMemory {
        /// What needs it: "the run", "a dry run".
        what: String,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
        /// Where the bytes go, in words.
        detail: String,
    },
}

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// A byte count for people, in powers of 1024 with one decimal: `512 B`, `1.5 KiB`,
/// `23.1 GiB`, `2.3 TiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Shorthand for results of the tool.
pub type Result<T, E = Error> = std::result::Result<T, E>;
