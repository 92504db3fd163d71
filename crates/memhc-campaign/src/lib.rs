//! # memhc-campaign
//!
//! A real campaign is hundreds of gauge configurations, each with many time sources. This
//! crate cuts such a campaign into **work units** and hands them to **ranks**: one rank per
//! GPU, many nodes, on MPI (feature `mpi`, rsmpi on the system's MPI), the engine the field
//! already runs on.
//!
//! * **Units** ([`Unit`], [`Job`]): for correlator files ([`corr`]), one unit is one
//!   configuration restricted to a block of time sources; for the synthetic workload, a point
//!   of a sweep (in `memhc-synth`). A unit is a spec (text) and a result (text); only these
//!   cross the network.
//! * **Dynamic scheduling** ([`scheduler`], [`worker`]): rank 0 is the master, and runs units
//!   too, on a thread; every worker asks for a unit, runs it, sends the result, asks again;
//!   larger units go first, so units of unequal cost still balance.
//! * **Restart** ([`Journal`]): the master records each completed unit atomically (temporary
//!   file, `fsync`, rename); a rerun skips the recorded units and gathers the same output, byte
//!   for byte ([`exact`]: results read back bit for bit).
//! * **Failure**: a unit that fails (bad input in its configuration) is reported once, with the
//!   rank that found it, after the other ranks finish theirs; a rank that goes silent (no result
//!   and no heartbeat within the timeout) stops the campaign with an error, and the MPI job is
//!   aborted: no rank waits forever ([`World`]).
//! * **Transport** ([`transport`]): two small traits, implemented in-process ([`inprocess`],
//!   threads and channels: the tests, and runs without MPI) and over MPI (`mpi`), so all the
//!   logic above is tested without MPI.
//!
//! `docs/distributed.md` says what crosses the network and what to expect on many nodes;
//! `docs/campaign-format.md` documents the manifest and the output.
#![forbid(unsafe_code)]

pub mod corr;
pub mod error;
pub mod exact;
pub mod fault;
pub mod inprocess;
pub mod job;
pub mod journal;
pub mod local;
pub mod message;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod scheduler;
pub mod transport;
pub mod worker;
pub mod world;

pub use error::{CampaignError, Result, TransportError};
pub use fault::{FAULT_VAR, Fault, FaultAction};
pub use job::{Job, JobError, RankContext, Unit, is_valid_key};
pub use journal::{Journal, write_atomic};
pub use local::run_local;
pub use message::Message;
pub use scheduler::{Progress, RankSummary, Summary, serve, stop_all};
pub use transport::{MasterLink, WorkerLink};
pub use worker::{Timing, WorkerEnd, work};
pub use world::{World, launcher};
