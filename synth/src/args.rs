//! What a run and a plan share on the command line: the workload (generated or from a file),
//! the configuration (policies, modes, streams, budget), their parsers, and the host memory
//! admission that refuses, in one line, a workload too large for the machine.

use std::path::PathBuf;

use clap::Args;
use memhc_core::{Alloc, Mode, PolicyKind};
use memhc_select::{SelectError, names, parse_bytes};

use crate::error::human_bytes;
use crate::error::{Error, Result};
use crate::generate::{Dist, SynthParams};
use crate::host_memory::{admit, available_host_memory, generated_bytes};
use crate::order::Order;

/// The environment variable that sets the host memory available to a run (bytes, with an
/// optional K, M, G or T suffix, as `--budget`), instead of what the system says; `off` skips the check.
pub const HOST_MEMORY_VAR: &str = "MEMHC_HOST_MEMORY";

/// The most streams a run takes ([`hadron::admission::MAX_STREAMS`]).
pub use hadron::admission::MAX_STREAMS;

/// The workload: generated (the MemHC paper's synthetic queue), or read from a file. The
/// generator's options conflict with `--workload` (the file fixes them).
#[derive(Debug, Args)]
pub struct WorkloadArgs {
    /// N: each of the 16 spin components of a meson is N x N complex doubles.
    #[arg(long, default_value_t = 64, conflicts_with = "workload")]
    pub tensor_size: usize,
    /// Contractions per vector.
    #[arg(long, default_value_t = 16, conflicts_with = "workload")]
    pub vector_size: usize,
    /// Number of vectors.
    #[arg(long, default_value_t = 100, conflicts_with = "workload")]
    pub vectors: usize,
    /// Repeated rate: the share of a vector's input slots that take an earlier node (0 to 1).
    #[arg(
        long,
        default_value_t = 0.5,
        allow_negative_numbers = true,
        conflicts_with = "workload"
    )]
    pub repeat: f64,
    /// How repeated nodes are chosen: uniform, gaussian, or recent:K (new in the last K vectors).
    #[arg(long, default_value = "uniform", conflicts_with = "workload")]
    pub dist: String,
    /// Seed of the generator (runs repeat exactly).
    #[arg(long, default_value_t = 1, conflicts_with = "workload")]
    pub seed: u64,
    /// Take the workload from a file (memhc-workload/1, see docs/workload-format.md) instead
    /// of generating one.
    #[arg(long, value_name = "FILE")]
    pub workload: Option<PathBuf>,
}

impl WorkloadArgs {
    /// The generator's parameters (checked when generating).
    pub fn params(&self) -> Result<SynthParams> {
        Ok(SynthParams {
            tensor_size: self.tensor_size,
            vector_size: self.vector_size,
            vectors: self.vectors,
            repeat: self.repeat,
            dist: self.dist.parse::<Dist>()?,
            seed: self.seed,
        })
    }
}

/// How to run: policies, modes, streams, and the device budget.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Eviction policies, comma separated, or `all`: lru, pp-lru, random, mru, car, clock-pro,
    /// belady.
    #[arg(long, default_value = "lru")]
    pub policy: String,
    /// Modes, comma separated: naive, reorg, reorg-sync, optimal, or `all` for these four (the
    /// paper's Fig. 8); and unified, the managed-memory baseline, on a backend with managed
    /// memory and without oversubscription (on the host backend it exercises the flow and says
    /// nothing about GPU performance).
    #[arg(long, default_value = "optimal")]
    pub mode: String,
    /// Streams the contractions of a vector are spread over.
    #[arg(long, default_value_t = 4)]
    pub streams: usize,
    /// The order in which contractions are issued: `queue` (vector after vector, contraction
    /// i of a vector on stream i mod streams) or `dependency` (by the dependency graph: next
    /// the contraction whose inputs are estimated ready soonest, uploads in the order of first
    /// use, each on the stream estimated free first; later vectors' contractions may run
    /// before earlier ones'). The values are the same either way.
    #[arg(long, default_value = "queue")]
    pub order: String,
    /// Where device memory comes from, comma separated, or `all`: driver (every buffer a
    /// driver allocation, the paper), handover (an evicted buffer goes straight to the request
    /// that evicted it), arena (one driver allocation of the budget, sub-allocated). Default:
    /// each mode's own (handover in optimal, driver in the others).
    #[arg(long)]
    pub alloc: Option<String>,
    /// A pooled or handed-over buffer up to this many percent larger than a request may serve
    /// it (0: exact sizes, as the paper's free pool).
    #[arg(long, default_value_t = 0)]
    pub reuse_tolerance: u32,
    /// Prefetch settings, comma separated: `off`, or a lookahead window in object uses (a
    /// meson contraction is three) for prefetch on a copy stream with asynchronous write-back.
    /// `off,6` runs each configuration both ways. Default: off.
    #[arg(long)]
    pub prefetch: Option<String>,
    /// Where node data and results live on the host: `pageable` (vectors; on a GPU every copy
    /// is staged through page-locked buffers, results are read at the end) or `pinned` (the
    /// backend's page-locked memory: nodes generated straight into it and uploaded in one DMA,
    /// results read back into it as soon as their last writer is queued). Not with
    /// `--mode unified`.
    #[arg(long, default_value = "pageable")]
    pub host_memory: String,
    /// Oversubscription rate O >= 0: the device budget is peak / (1 + O), where peak is the
    /// most bytes the run holds resident when nothing is evicted. Default 0 (everything fits).
    #[arg(long, conflicts_with = "budget", allow_negative_numbers = true)]
    pub oversub: Option<f64>,
    /// Device budget in bytes: digits, then K, M, G or T (powers of 1024) with an optional B
    /// or iB: 512M, 2G, 8GiB.
    #[arg(long, value_parser = parse_bytes)]
    pub budget: Option<u64>,
}

impl ConfigArgs {
    /// The policies, the modes, and a check of the streams and the oversubscription rate.
    pub fn parse(&self) -> Result<(Vec<PolicyKind>, Vec<Mode>)> {
        let policies = names::policies(&self.policy).map_err(usage("--policy"))?;
        let modes = names::modes(&self.mode).map_err(usage("--mode"))?;
        if self.streams == 0 {
            return Err(Error::Usage("--streams must be at least 1".into()));
        }
        if self.streams > MAX_STREAMS {
            return Err(Error::Usage(format!(
                "--streams {}: at most {MAX_STREAMS} (the host backend runs a thread per stream)",
                self.streams
            )));
        }
        if let Some(o) = self.oversub.filter(|o| !o.is_finite() || *o < 0.0) {
            return Err(Error::Usage(format!(
                "--oversub {o}: must be a number >= 0"
            )));
        }
        if self.reuse_tolerance > 100 {
            return Err(Error::Usage(format!(
                "--reuse-tolerance {}: at most 100 (percent)",
                self.reuse_tolerance
            )));
        }
        Ok((policies, modes))
    }

    /// The allocation settings of `--alloc` (`[None]`: each mode's own), refusing an arena
    /// for the unified mode among `modes`.
    pub fn allocs(&self, modes: &[Mode]) -> Result<Vec<Option<Alloc>>> {
        let allocs: Vec<Option<Alloc>> = match &self.alloc {
            Some(list) => names::allocs(list)
                .map_err(usage("--alloc"))?
                .into_iter()
                .map(Some)
                .collect(),
            None => vec![None],
        };
        if modes.contains(&Mode::Unified) && allocs.contains(&Some(Alloc::Arena)) {
            return Err(Error::Usage(
                "--alloc arena does not apply to --mode unified (managed memory)".into(),
            ));
        }
        Ok(allocs)
    }
}

impl ConfigArgs {
    /// The issue order of `--order`.
    pub fn order(&self) -> Result<Order> {
        self.order
            .parse::<Order>()
            .map_err(|e| Error::Usage(format!("--order: {e}")))
    }

    /// Whether `--host-memory pinned` was asked for, refusing it with `--mode unified`.
    pub fn pinned(&self, modes: &[Mode]) -> Result<bool> {
        let pinned = names::host_memory(&self.host_memory)
            .map_err(usage("--host-memory"))?
            .is_pinned();
        if pinned && modes.contains(&Mode::Unified) {
            return Err(Error::Usage(
                "--host-memory pinned does not apply to --mode unified (managed memory is read \
                 in place)"
                    .into(),
            ));
        }
        Ok(pinned)
    }

    /// The prefetch settings of `--prefetch` (`[None]`: off), refusing prefetch in the unified
    /// mode among `modes`.
    pub fn prefetches(&self, modes: &[Mode]) -> Result<Vec<Option<usize>>> {
        let settings = match &self.prefetch {
            Some(list) => memhc_select::names::prefetches(list).map_err(usage("--prefetch"))?,
            None => vec![None],
        };
        if modes.contains(&Mode::Unified) && settings.iter().any(Option::is_some) {
            return Err(Error::Usage(
                "--prefetch does not apply to --mode unified (managed memory)".into(),
            ));
        }
        Ok(settings)
    }
}

/// A `memhc-select` error as a usage error of `option` (`--policy: unknown eviction policy
/// 'lfu' (known: ...)`).
pub fn usage(option: &'static str) -> impl Fn(SelectError) -> Error {
    move |e| Error::Usage(format!("{option}: {e}"))
}

/// The host memory available, in bytes: `MEMHC_HOST_MEMORY` when set (`off`: unknown, so no
/// check), else what the system says ([`available_host_memory`]; unknown off Linux).
pub fn host_memory() -> Result<Option<u64>> {
    match std::env::var(HOST_MEMORY_VAR) {
        Ok(v) if v.trim() == "off" => Ok(None),
        Ok(v) => parse_bytes(&v)
            .map(Some)
            .map_err(|e| Error::Usage(format!("{HOST_MEMORY_VAR}: {e}"))),
        Err(_) => Ok(available_host_memory()),
    }
}

/// Checks generator parameters before anything is generated: at least one vector, a tensor
/// size whose nodes fit in the address space, and a queue that fits in `available` host
/// memory, with the values of its initial nodes when `materialised` (a real run makes them; a
/// plan does not). `what` needs the memory, for the message: "the run", "the plan".
pub fn check_generated(
    what: &str,
    p: &SynthParams,
    materialised: bool,
    available: Option<u64>,
) -> Result<()> {
    if p.vectors == 0 {
        return Err(Error::Usage(
            "--vectors 0: a run needs at least one vector".into(),
        ));
    }
    let made = generated_bytes(p)?;
    let mut detail = format!("the queue itself {}", human_bytes(made.queue));
    let mut needed = made.queue;
    if materialised {
        needed = needed.saturating_add(made.initial_values);
        detail = format!(
            "the values of the initial nodes alone {}, {detail}",
            human_bytes(made.initial_values)
        );
    }
    admit(what, needed, &detail, available)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_parameters_are_checked_before_generating() {
        let p = SynthParams::default();
        assert!(check_generated("the run", &p, true, None).is_ok());
        let none = SynthParams {
            vectors: 0,
            ..p.clone()
        };
        assert!(check_generated("the run", &none, false, None).is_err());
        assert!(matches!(
            check_generated("the run", &p, true, Some(16 << 20)),
            Err(Error::HostMemory { .. })
        ));
        // A plan materialises no values: 16 MiB holds the default queue's bookkeeping.
        assert!(check_generated("the plan", &p, false, Some(16 << 20)).is_ok());
    }
}
