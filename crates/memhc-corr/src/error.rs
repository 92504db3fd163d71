//! Errors: every problem with a file is one line that names its place (the graph, loop and
//! node, or the node, or the correlator and time pair), and a typed [`Problem`] a program can
//! match on.

use std::fmt;

/// What is wrong with a correlator file. See [`Invalid`] for where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Problem {
    /// The `format` key names another format or version.
    #[error("unknown format \"{0}\": this version reads \"memhc-corr/1\"")]
    UnknownFormat(String),
    /// An id or name that is not allowed.
    #[error(
        "id \"{0}\" is not allowed: ids are ASCII letters, digits, '_', '-' and '.', not starting with '.'"
    )]
    BadId(String),
    /// The same id twice among nodes, graphs or correlators.
    #[error("\"{0}\" is defined twice")]
    DuplicateId(String),
    /// A node id that no node has.
    #[error("unknown node \"{0}\"")]
    UnknownNode(String),
    /// A graph id that no graph has.
    #[error("unknown graph \"{0}\"")]
    UnknownGraph(String),
    /// A node whose spins or dims are unusable (zero, none, too large).
    #[error("bad shape: {0}")]
    BadShape(String),
    /// Adjacent nodes of a loop whose matrices cannot be multiplied, or a node of the wrong
    /// shape for its mapping.
    #[error("mismatched dims: {0}")]
    MismatchedDims(String),
    /// A matrix view that a node's rank does not have, or a list of views of the wrong length.
    #[error("bad view: {0}")]
    BadView(String),
    /// A spin mapping or trace pairing that is not valid for its nodes.
    #[error("bad spin mapping: {0}")]
    BadSpinMapping(String),
    /// A loop whose last node cannot be closed onto its first by the trace, or a loop too
    /// short for its mappings.
    #[error("the loop does not close: {0}")]
    LoopNotClosed(String),
    /// A node's data file is missing, unreadable, of the wrong type or shape, or short.
    #[error("{0}")]
    Data(String),
    /// A time pair that sums no graph.
    #[error("no graphs")]
    NoGraphs,
    /// A graph with no loops, or a file section that must not be empty.
    #[error("{0} is empty")]
    Empty(&'static str),
    /// The same `(source, sink)` twice in one correlator.
    #[error("the time pair is listed twice")]
    DuplicateTimePair,
    /// Something the format allows that this version cannot compute yet.
    #[error("not supported yet: {0}")]
    NotSupported(String),
}

/// A problem and its place in a file: `FILE: PLACE: PROBLEM`, one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// The file, when known.
    pub file: Option<String>,
    /// Where: `graph g7, loop 0, node b (position 2)`, `node b`, `correlator C, time pair (0, 3)`.
    pub place: String,
    /// What.
    pub problem: Problem,
}

impl Invalid {
    /// `problem` at `place`.
    pub fn at(place: impl Into<String>, problem: Problem) -> Self {
        Invalid {
            file: None,
            place: place.into(),
            problem,
        }
    }

    /// The same problem, in `file`.
    pub fn within(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line = match &self.file {
            Some(file) => format!("{file}: {}: {}", self.place, self.problem),
            None => format!("{}: {}", self.place, self.problem),
        };
        // One line, whatever a name or a system message holds.
        f.write_str(&line.replace(['\n', '\r'], " "))
    }
}

impl std::error::Error for Invalid {}

/// An error of this crate.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CorrError {
    /// A file that cannot be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The system's message.
        message: String,
    },
    /// JSON that does not parse into the format: `FILE: line L column C: what`.
    #[error("{place}: {message}")]
    Json {
        /// The file and position.
        place: String,
        /// What serde says.
        message: String,
    },
    /// A file that parses but is not valid.
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// A request too large to allocate or count.
    #[error("too large: {0}")]
    TooLarge(String),
    /// A plan or option that does not fit the checked file or runtime it is used with.
    #[error("{0}")]
    Usage(String),
    /// Something this build was compiled without (HDF5 output without the feature `hdf5`).
    #[error("{0}")]
    Unavailable(String),
    /// The hadron layer failed.
    #[error(transparent)]
    Hadron(#[from] hadron::HadronError),
    /// The runtime failed.
    #[error(transparent)]
    Runtime(#[from] memhc_core::Error),
}

impl CorrError {
    /// An I/O error on `path`.
    pub fn io(path: &std::path::Path, e: impl fmt::Display) -> Self {
        CorrError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    }

    /// The [`Problem`], when this is an invalid file.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            CorrError::Invalid(i) => Some(&i.problem),
            _ => None,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = CorrError> = std::result::Result<T, E>;
