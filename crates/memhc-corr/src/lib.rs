//! # memhc-corr
//!
//! Correlation functions on memhc. A physicist does not hand memhc one contraction at a
//! time: they hand it a whole set of correlators, each a weighted sum of Wick-contraction
//! graphs at many `(source, sink)` time pairs, each graph a product of traces of closed loops
//! of hadron nodes. This crate is where such a set comes in, is planned as one piece, runs on
//! the runtime, and goes out as correlators.
//!
//! **The file** ([`mod@format`], [`load`], [`save`]): `memhc-corr/1`, JSON, documented for
//! outsiders in `docs/correlator-format.md`. Nodes carry their shape, their metadata (time
//! slice, operator, momentum, displacement) and their data: seeded by a generator anyone can
//! reproduce ([`seed`]: SplitMix64), a `.npy` file, or an HDF5 dataset (feature `hdf5`).
//!
//! **The checked file** ([`CheckedFile`]): the file, checked. Every problem is one line that
//! names the graph and node ([`Invalid`], with a typed [`Problem`]): an unknown node, mismatched
//! dims, a bad spin mapping, a loop that does not close, a missing or short data file, a time
//! pair with no graphs.
//!
//! **The plan** ([`plan()`], [`PlanOptions`], [`Plan`]): each loop's reduction order chosen by
//! a cost model (flops, then intermediate bytes, amortised over the loops that share a
//! product); identical partial products and traces found through canonical keys (factor
//! sequences for products, by associativity; least rotations for traces, by cyclicity; never
//! reversals; a factor is a node and the matrix view it is seen through, so baryons are
//! planned like mesons) and computed once; a memory-aware order (list schedules, one time
//! pair at a time, that keep the peak of live bytes low); stages of independent
//! contractions, as wide as that peak allows; a release after every object's last use; the
//! exact future for Belady; and a [`PlanReport`] (contractions before and after sharing,
//! flops, the peak of live bytes in the planner's order and in the file's, and the device
//! peak with the runtime's free pool, both exactly what the runtime holds).
//!
//! **The run** ([`run()`]): the plan on a [`hadron::Engine`] over any backend, policy and mode;
//! the traces' values assembled into [`Correlators`], written as JSON, CSV or (feature `hdf5`)
//! HDF5. [`reference::correlators`] computes the same values with `hadron::dense`, graph by
//! graph, for checking.
#![forbid(unsafe_code)]

pub mod admit;
pub mod checked;
pub mod data;
pub mod error;
pub mod format;
#[cfg(feature = "hdf5")]
mod hdf5_out;
pub mod io;
pub mod output;
pub mod plan;
pub mod reference;
pub mod run;
pub mod seed;
mod validate;

pub use admit::{admit_file, admit_run, largest_step_bytes};
pub use checked::{CheckedFile, Correlator, Graph, Loop, LoopKind, Node, TimePair};
pub use data::write_npy;
pub use error::{CorrError, Invalid, Problem, Result};
pub use format::{
    CorrFile, CorrelatorSpec, DataSource, GraphSpec, LoopSpec, MappingSpec, NodeKind, NodeSpec,
    PairsSpec, TimePairSpec,
};
pub use io::{load, parse, save};
pub use output::{CorrelatorValues, Correlators, OutputForm, Value};
pub use plan::{Operand, Order, Plan, PlanOptions, PlanReport, Stage, plan};
pub use run::{Loaded, Progress, load_onto, run, run_with};
pub use validate::is_valid_id;
