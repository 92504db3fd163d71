//! # memhc-synth
//!
//! The synthetic workload of the MemHC paper (section 6.1), made precise in DESIGN.md
//! section 8, and the tool a performance engineer runs first: generate a queue of vectors of
//! meson contractions with a given repeated rate, vector size, tensor size and distribution;
//! run it with every selected eviction policy and optimisation mode under a budget derived from
//! an oversubscription rate; report the metrics (table, JSON, CSV, the paper's Tables 1-3,
//! plots); read and write workload files so that users can bring their own queues.

pub mod app;
pub mod device;
pub mod error;
pub mod file;
pub mod generate;
pub mod plot;
pub mod record;
pub mod replay;
pub mod report;
pub mod run;
pub mod workload;

pub use error::{Result, SynthError, WorkloadError};
pub use generate::{Dist, SynthParams, generate};
pub use record::Record;
pub use workload::{Analysis, ContractionSpec, NodeData, NodeSpec, TraceSpec, Workload};
