//! # memhc-corr
//!
//! Correlation functions on memhc. A physicist does not hand memhc one contraction at a
//! time: they hand it a whole set of correlators, each a weighted sum of Wick-contraction
//! graphs at many `(source, sink)` time pairs, each graph a product of traces of closed loops
//! of hadron nodes. This crate is where such a set comes in, is planned as one piece, runs on
//! the runtime, and goes out as correlators.
//!
//! **The file** ([`format`], [`load`], [`save`]): `memhc-corr/1`, JSON, documented for
//! outsiders in `docs/correlator-format.md`. Nodes carry their shape, their metadata (time
//! slice, operator, momentum, displacement) and their data: seeded by a generator anyone can
//! reproduce ([`seed`]: SplitMix64), a `.npy` file, or an HDF5 dataset (feature `hdf5`).
//!
//! **The model** ([`Model`]): the file checked. Every problem is one line that names the graph
//! and node ([`Invalid`], with a typed [`Problem`]): an unknown node, mismatched dims, a bad
//! spin mapping, a loop that does not close, a missing or short data file, a time pair with no
//! graphs.
#![forbid(unsafe_code)]

pub mod data;
pub mod error;
pub mod format;
#[cfg(feature = "hdf5")]
mod hdf5_out;
pub mod io;
pub mod model;
pub mod output;
pub mod plan;
pub mod reference;
pub mod run;
pub mod seed;
mod validate;

pub use data::write_npy;
pub use error::{CorrError, Invalid, Problem, Result};
pub use format::{
    CorrFile, CorrelatorSpec, DataSource, GraphSpec, LoopSpec, MappingSpec, NodeKind, NodeSpec,
    PairsSpec, TimePairSpec,
};
pub use io::{load, parse, save};
pub use model::{Correlator, Graph, Loop, LoopKind, Model, Node, TimePair};
pub use output::{CorrelatorValues, Correlators, Value};
pub use plan::{Operand, Order, Plan, PlanOptions, PlanReport, Stage, plan};
pub use run::{Progress, run};
pub use validate::is_valid_id;
