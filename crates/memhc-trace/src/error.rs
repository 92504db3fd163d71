//! The errors of writing a trace, a report or a plot.

use std::path::{Path, PathBuf};

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// A file could not be written (or a plot drawn into it).
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl TraceError {
    /// The error of writing `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        TraceError::Io {
            path: path.to_owned(),
            source,
        }
    }
}

/// A result with a [`TraceError`].
pub type Result<T> = std::result::Result<T, TraceError>;
