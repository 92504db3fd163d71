//! # memhc-workload
//!
//! Queues of hadron contractions for the memhc runtime, and the one function that runs a queue
//! under a policy, a mode and a budget:
//!
//! * [`generate`](mod@generate): the synthetic workload of the MemHC paper (section 6.1), made precise:
//!   vectors of meson contractions with a given repeated rate, vector size, tensor size and
//!   distribution, all seeded;
//! * [`workload`]: the in-memory queue ([`Workload`]) and its [`Analysis`] (ids, shapes,
//!   producers, last uses);
//! * [`file`](mod@file): workload files (`memhc-workload/1`, see `docs/workload-format.md`), with
//!   complex128 `.npy` data;
//! * [`run`]: one run of a queue on any backend, verified against the `hadron` reference on
//!   request, and the dry runs on the null backend that give the peak without eviction and the
//!   Belady lower bound on misses;
//! * [`order`]: the order in which a run issues its contractions: the queue's, or the
//!   dependency graph's (a list schedule on estimated upload and GEMM times);
//! * [`plan`](mod@plan): exact memory planning without data: peaks, least budgets and the
//!   statistics a run will make, from dry runs on the null backend;
//! * [`host_memory`]: the host memory a run needs, worked out before any data exists, and what
//!   the machine has available (admission);
//! * [`policy_replay`]: replays of vectors of equal-sized objects through the policies (the
//!   paper's Fig. 6; the `memhc-synth replay` command);
//! * [`eviction_model`]: an exact model of the runtime's eviction on a workload of equal-sized
//!   objects, through any policy, that shows what each victim was (`docs/policies.md`);
//! * [`error`]: one-line errors that say where the problem is.
//!
//! The `memhc-synth` tool is the command line over this crate; backend test suites
//! (`memhc-testkit`) use it for their end-to-end runs, which is why it depends on no GPU
//! backend.

#![forbid(unsafe_code)]

pub mod error;
pub mod eviction_model;
pub mod file;
pub mod generate;
pub mod host_memory;
pub mod order;
pub mod plan;
pub mod policy_replay;
pub mod run;
pub mod workload;

pub use error::{Error, Result, WorkloadError, human_bytes};
pub use generate::{Dist, SynthParams, generate};
pub use order::Order;
pub use plan::{MemoryPlan, PlanSpec, Prediction, plan};
pub use workload::{Analysis, ContractionSpec, NodeData, NodeSpec, TraceSpec, Workload};
