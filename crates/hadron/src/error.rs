//! Errors of the hadron layer.

use memhc_core::ObjectId;

use crate::term::Term;

/// Which operand of a contraction an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// The left input.
    A,
    /// The right input.
    B,
    /// The output.
    Out,
}

impl std::fmt::Display for Operand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Operand::A => "A",
            Operand::B => "B",
            Operand::Out => "the output",
        })
    }
}

/// An error of the hadron layer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum HadronError {
    /// The runtime refused or failed.
    #[error(transparent)]
    Runtime(#[from] memhc_core::Error),
    /// A spin index beyond the number of spins of its node.
    #[error("spin {index} of {operand} is out of range: it has {spins} spins")]
    SpinOutOfRange {
        /// The node the index refers to.
        operand: Operand,
        /// The index.
        index: usize,
        /// How many spins that node has.
        spins: usize,
    },
    /// The same term listed twice in a mapping.
    #[error("duplicate term out[{}] += A[{}] B[{}]", .0.out, .0.a, .0.b)]
    DuplicateTerm(Term),
    /// A mapping with no terms, or pairs with no pair.
    #[error("empty {0}: it needs at least one term")]
    Empty(&'static str),
    /// The matrix views of two operands cannot be multiplied, or a trace pairs matrices whose
    /// product is not square.
    #[error("shape mismatch: {0}")]
    ShapeMismatch(String),
    /// A matrix view that does not split the component's dimensions.
    #[error("matrix view splitting after {split} of {rank} dimensions: the split must be between 1 and {}", .rank.saturating_sub(1).max(1))]
    BadView {
        /// Dimensions that form the rows.
        split: usize,
        /// Dimensions of the component.
        rank: usize,
    },
    /// A node shape or data that is not usable (no spins, a zero dimension, data of the wrong
    /// length or layout).
    #[error("bad node: {0}")]
    BadNode(String),
    /// A contraction whose output is one of its inputs.
    #[error("the output {0} is also an input of the contraction")]
    OutputIsInput(ObjectId),
    /// The same pair listed twice in trace pairs.
    #[error("duplicate trace pair (A[{0}], B[{1}])")]
    DuplicatePair(usize, usize),
    /// An object id this engine did not register or create, or that was released.
    #[error("unknown node {0}")]
    UnknownNode(ObjectId),
    /// A size from the caller that overflows the address space, or a host memory setting
    /// that does not parse (a bad argument: nothing was allocated).
    #[error("too large: {0}")]
    TooLarge(String),
    /// A request larger than the host memory available
    /// ([`admission`](crate::admission)); nothing was allocated.
    #[error(
        "{what} needs {} of host memory, more than the {} available (MEMHC_HOST_MEMORY sets what is available)",
        human_bytes(*.needed),
        human_bytes(*.available)
    )]
    OutOfHostMemory {
        /// What needs the memory.
        what: String,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
}

/// A byte count in words: `572.2 GiB`.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Shorthand for results of the hadron layer.
pub type Result<T, E = HadronError> = std::result::Result<T, E>;
