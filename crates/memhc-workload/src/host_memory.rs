//! Host memory admission: the host bytes a run needs, worked out from the queue before any data
//! exists, and the bytes the machine has available, so that a run too large for the machine is
//! refused in one line instead of aborting on a failed allocation (or being killed) halfway.
//!
//! What a real run holds on the host ([`HostNeeds`]), from the queue alone:
//!
//! * **node values during the run**: every initial node is materialised when it is registered,
//!   all of them before the first vector; a produced node has a host copy once it is synced
//!   (read, written back, or copied out after each launch in the naive modes), and every value
//!   lives until the node is released after its last use (results: to the end). The most bytes
//!   of nodes alive at once bound what the runtime holds. Added to it: host-to-device copies
//!   staged in flight (the host backend copies the source when a copy is queued; at most the
//!   inputs of the largest vector are counted), and, at the end, the copies of the results
//!   returned to the caller;
//! * **verification** (`--verify`): the reference implementation recomputes the queue with the
//!   same life times, while the runtime still holds what it holds at the end;
//! * **the host backend's device memory**: its budget, or every object of the queue at once
//!   when that is less (it allocates on demand); zero on a GPU backend;
//! * **workload data**: values loaded from `.npy` files, held for the whole run.
//!
//! The total is the device memory plus the workload data plus the larger of the peak during
//! the run and the peak during verification, plus a fixed [`PROCESS_BYTES`] for the process
//! itself. On the default queue (100 vectors of 16 at N = 64, `--oversub 1`) it is within 1%
//! of the measured peak resident set, with and without `--verify`, and above it.
//!
//! What the machine has: on Linux, `MemAvailable` of `/proc/meminfo`, lowered to the room left
//! under a cgroup memory limit (v2 `memory.max`, or v1 `memory.limit_in_bytes`) when there is
//! one ([`available_host_memory`]). Elsewhere nothing is known and the caller skips the check
//! (`memhc-synth` takes `MEMHC_HOST_MEMORY` instead, when set). The reading of the system is
//! `hadron::admission`'s, shared with every other entry point. All arithmetic is exact in
//! `u128` and saturates at `u64::MAX` bytes, so no size overflows.

use std::collections::HashMap;

use hadron::{MatrixView, NodeShape};
use memhc_core::config::DEFAULT_HOST_POOL_BYTES;

use crate::error::{Error, Result, WorkloadError, human_bytes};
use crate::generate::SynthParams;
use crate::workload::{Analysis, NodeData, Step, Workload};

/// Bytes of one node's values.
pub fn node_bytes(shape: &NodeShape) -> u64 {
    // A NodeShape's layout was checked when it was made; a failure here cannot happen, and
    // would count as the largest size rather than as nothing.
    shape.layout().map_or(u64::MAX, |l| l.bytes() as u64)
}

/// Host memory of the process itself, beyond the values: code, thread stacks, the runtime's
/// and the allocator's bookkeeping (about 20 MiB measured on the default queue of 3200 nodes).
pub const PROCESS_BYTES: u64 = 64 << 20;

/// Bytes of one complex double.
const ELEMENT_BYTES: u128 = 16;

fn clamp(x: u128) -> u64 {
    u64::try_from(x).unwrap_or(u64::MAX)
}

/// Where a real run's host memory goes at its peak, in bytes. See the
/// [module documentation](self).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct HostNeeds {
    /// The host backend's device memory (its budget); zero on a GPU backend.
    pub device: u64,
    /// Values the workload itself holds (nodes loaded from files).
    pub workload_data: u64,
    /// The peak during the run: node values alive at once, staged copies, returned results.
    pub during_run: u64,
    /// The peak during verification (zero without it): the reference's values, with what the
    /// runtime holds at the end and the returned results.
    pub during_verify: u64,
    /// Released node values the runtime keeps for reuse (its host pool,
    /// [`Config::host_pool_bytes`](memhc_core::Config::host_pool_bytes) by default, and never
    /// more than all the node values).
    pub host_pool: u64,
    /// With the direct data path (`--host-memory pinned`): the pinned pool's room beyond the
    /// values it holds (those are counted above): one growth chunk
    /// ([`Config::pinned_chunk_bytes`](memhc_core::Config::pinned_chunk_bytes)) for
    /// fragmentation, and the page the pool probes the backend with. Zero otherwise.
    #[serde(skip_serializing_if = "is_zero")]
    pub pinned_pool: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

impl HostNeeds {
    /// The bytes needed at the peak: `device + workload_data + max(during_run, during_verify)
    /// + host_pool`, plus [`PROCESS_BYTES`].
    pub fn total(&self) -> u64 {
        PROCESS_BYTES
            .saturating_add(self.device)
            .saturating_add(self.workload_data)
            .saturating_add(self.during_run.max(self.during_verify))
            .saturating_add(self.host_pool)
            .saturating_add(self.pinned_pool)
    }

    /// The same needs for a run on the direct data path, whose pinned pool grows by chunks of
    /// `chunk` bytes: its first chunk holds the values ([`pinned_plan_bytes`]), and one more
    /// chunk is counted for fragmentation ([`HostNeeds::pinned_pool`]).
    pub fn with_pinned_pool(mut self, chunk: u64) -> Self {
        self.pinned_pool = chunk.saturating_add(4096);
        self
    }

    /// The parts in words, for messages: `node values during the run 25.8 GiB, the host
    /// backend's device budget 8.6 GiB, the process itself 64.0 MiB`.
    pub fn detail(&self) -> String {
        let parts = [
            ("node values during the run", self.during_run),
            ("verification", self.during_verify),
            ("the host backend's device budget", self.device),
            ("released values kept for reuse", self.host_pool),
            ("the pinned pool's spare chunk", self.pinned_pool),
            ("workload data", self.workload_data),
            ("the process itself", PROCESS_BYTES),
        ];
        parts
            .iter()
            .filter(|(_, b)| *b > 0)
            .map(|(what, b)| format!("{what} {}", human_bytes(*b)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The life of the queue's node values, in bytes (exact, in `u128`).
#[derive(Debug, Default)]
struct Lives {
    /// Most bytes of all node values alive at once.
    peak: u128,
    /// Most bytes of produced nodes' values alive at once.
    produced_peak: u128,
    /// Bytes alive after the last trace (results, and nodes never released).
    end: u128,
    /// Bytes of the results.
    results: u128,
    /// The largest sum of one vector's distinct inputs.
    largest_vector_inputs: u128,
    /// Every object of the queue at once: nodes, initial and produced, and traces' scratch.
    all: u128,
}

fn lives(w: &Workload, a: &Analysis) -> Lives {
    let bytes = |id: &str| a.shape(id).map_or(0, |s| u128::from(node_bytes(s)));
    // What is released after each vector, and after the traces.
    let mut after_vector: HashMap<usize, Vec<&str>> = HashMap::new();
    let mut after_traces: Vec<&str> = Vec::new();
    for id in (0..a.node_count()).filter_map(|i| a.id(i)) {
        let Some(step) = a.last_use(id) else {
            continue;
        };
        if w.results.iter().any(|r| r == id) {
            continue;
        }
        match step {
            Step::Contraction { vector, .. } => after_vector.entry(vector).or_default().push(id),
            Step::Trace(_) => after_traces.push(id),
            Step::Results => {}
        }
    }
    let mut l = Lives::default();
    let mut live: u128 = w
        .nodes
        .iter()
        .map(|n| u128::from(node_bytes(&n.shape)))
        .sum();
    let mut produced: u128 = 0;
    l.peak = live;
    for (v, vector) in w.vectors.iter().enumerate() {
        let mut inputs: Vec<&str> = vector
            .iter()
            .flat_map(|c| [c.a.as_str(), c.b.as_str()])
            .collect();
        inputs.sort_unstable();
        inputs.dedup();
        let input_bytes = inputs.iter().map(|id| bytes(id)).sum::<u128>();
        l.largest_vector_inputs = l.largest_vector_inputs.max(input_bytes);
        let out: u128 = vector.iter().map(|c| bytes(&c.out)).sum();
        live += out;
        produced += out;
        l.peak = l.peak.max(live);
        l.produced_peak = l.produced_peak.max(produced);
        for id in after_vector.get(&v).into_iter().flatten() {
            let b = bytes(id);
            live = live.saturating_sub(b);
            if a.produced_in(id).is_some() {
                produced = produced.saturating_sub(b);
            }
        }
    }
    for id in after_traces {
        live = live.saturating_sub(bytes(id));
    }
    l.end = live;
    l.results = w.results.iter().map(|id| bytes(id)).sum();
    let scratch: u128 = w
        .traces
        .iter()
        .map(|t| {
            let rows = a
                .shape(&t.a)
                .and_then(|s| s.matrix(MatrixView::default()).ok())
                .map_or(0, |(m, _)| m);
            t.pairs.pairs().len() as u128 * rows as u128 * ELEMENT_BYTES
        })
        .sum();
    l.all = (0..a.node_count())
        .filter_map(|i| a.shape_at(i))
        .map(|s| u128::from(node_bytes(s)))
        .sum::<u128>()
        + scratch;
    l
}

/// The host memory a real run of `w` needs: `device` is the host backend's budget (zero for a
/// GPU backend), `verify` whether results are checked against the reference. The host
/// backend allocates its device memory on demand, so a budget larger than every object of the
/// queue at once counts as that.
pub fn host_needs(w: &Workload, a: &Analysis, device: usize, verify: bool) -> HostNeeds {
    let l = lives(w, a);
    let device = clamp((device as u128).min(l.all));
    let staging = if device > 0 {
        l.largest_vector_inputs
    } else {
        0
    };
    let workload_data: u128 = w
        .nodes
        .iter()
        .filter(|n| matches!(n.data, NodeData::Values(_)))
        .map(|n| u128::from(node_bytes(&n.shape)))
        .sum();
    HostNeeds {
        device,
        workload_data: clamp(workload_data),
        during_run: clamp((l.peak + staging).max(l.end + l.results)),
        during_verify: if verify {
            clamp(l.end + l.results + l.peak)
        } else {
            0
        },
        host_pool: clamp(l.all.min(DEFAULT_HOST_POOL_BYTES as u128)),
        pinned_pool: 0,
    }
}

/// The bytes a real run on the direct data path holds in the backend's host memory at once,
/// from the queue alone: the node values alive at once, or at the end the values still held
/// and the results handed out, whichever is more. The pinned pool's first chunk
/// ([`Config::pinned_reserve_bytes`](memhc_core::Config::pinned_reserve_bytes)) is this
/// size, so that one page-locked allocation serves the run.
pub fn pinned_plan_bytes(w: &Workload, a: &Analysis) -> u64 {
    let l = lives(w, a);
    clamp(l.peak.max(l.end + l.results))
}

/// The host memory a dry run of `w` on the null backend touches: the host copies of produced
/// nodes it syncs or writes back (initial nodes are zeros that are never made,
/// [`HostCopy::zeros`](memhc_core::HostCopy::zeros): they cost no memory, whatever the
/// allocator). At most the produced nodes alive at once.
pub fn dry_run_needs(w: &Workload, a: &Analysis) -> u64 {
    clamp(lives(w, a).produced_peak)
}

/// Bytes of the queue's own bookkeeping per node and per contraction (ids, shapes, the
/// analysis' tables), rounded up from what the generator and [`Workload::analyse`] hold.
pub const BOOKKEEPING_BYTES: u64 = 512;

/// What [`generate`](crate::generate::generate) would make for `p`, worked out before
/// generating (the generator allocates per node), in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GeneratedBytes {
    /// The values of the initial nodes (made by a real run, not by a dry run).
    pub initial_values: u64,
    /// The queue itself: [`BOOKKEEPING_BYTES`] per node and per contraction.
    pub queue: u64,
}

/// The bytes of what [`generate`](crate::generate::generate) would make for `p`. A tensor size
/// whose node overflows the address space is refused, naming `--tensor-size`.
pub fn generated_bytes(p: &SynthParams) -> Result<GeneratedBytes> {
    let shape = NodeShape::meson(p.tensor_size).map_err(|_| {
        WorkloadError::at(
            format!("--tensor-size {}", p.tensor_size),
            format!(
                "a node of 16 components of {0} x {0} complex doubles does not fit in the \
                 address space",
                p.tensor_size
            ),
        )
    })?;
    let vector_size = u128::from(p.vector_size as u64);
    let vectors = u128::from(p.vectors as u64);
    let slots = 2 * vector_size;
    let repeated = u128::from(p.repeated_slots() as u64).min(slots);
    let nodes = repeated + vectors * (slots - repeated);
    let items = nodes + vectors * vector_size;
    Ok(GeneratedBytes {
        initial_values: clamp(nodes * u128::from(node_bytes(&shape))),
        queue: clamp(items * u128::from(BOOKKEEPING_BYTES)),
    })
}

/// Refuses `needed` bytes for `what` ("the run", "a dry run") when `available` is known and
/// smaller: a [`Error::HostMemory`] that says `detail`.
pub fn admit(what: &str, needed: u64, detail: &str, available: Option<u64>) -> Result<()> {
    match available {
        Some(available) if needed > available => Err(Error::HostMemory {
            what: what.to_owned(),
            needed,
            available,
            detail: detail.to_owned(),
        }),
        _ => Ok(()),
    }
}

pub use hadron::admission::available_host_memory;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::generate;

    #[test]
    fn the_generated_estimate_matches_the_generator() {
        let p = SynthParams {
            tensor_size: 3,
            vector_size: 4,
            vectors: 5,
            repeat: 0.25,
            ..SynthParams::default()
        };
        let w = generate(&p).unwrap();
        let one = node_bytes(&NodeShape::meson(3).unwrap());
        let made = generated_bytes(&p).unwrap();
        assert_eq!(made.initial_values, w.nodes.len() as u64 * one);
        let items = w.nodes.len() + w.vectors.iter().map(Vec::len).sum::<usize>();
        assert_eq!(made.queue, items as u64 * BOOKKEEPING_BYTES);
        let huge = SynthParams {
            tensor_size: usize::MAX / 2,
            ..p.clone()
        };
        assert!(generated_bytes(&huge).is_err());
        let many = SynthParams {
            tensor_size: 1 << 20,
            vectors: usize::MAX,
            ..p
        };
        let made = generated_bytes(&many).unwrap();
        assert_eq!((made.initial_values, made.queue), (u64::MAX, u64::MAX));
    }

    #[test]
    fn needs_count_every_part_once() {
        let p = SynthParams {
            tensor_size: 2,
            vector_size: 2,
            vectors: 3,
            repeat: 0.5,
            ..SynthParams::default()
        };
        let w = generate(&p).unwrap();
        let a = w.analyse().unwrap();
        let one = node_bytes(&NodeShape::meson(2).unwrap());
        let gpu = host_needs(&w, &a, 0, false);
        assert_eq!(gpu.device, 0);
        assert!(gpu.during_run >= w.nodes.len() as u64 * one);
        assert_eq!(gpu.during_verify, 0);
        let host = host_needs(&w, &a, 1000, true);
        assert_eq!(host.device, 1000);
        assert!(host.during_verify > 0 && host.total() > gpu.total());
        assert!(dry_run_needs(&w, &a) <= gpu.during_run);
        assert!(admit("the run", 10, "x", Some(9)).is_err());
        assert!(admit("the run", 10, "x", Some(10)).is_ok());
        assert!(admit("the run", u64::MAX, "x", None).is_ok());
    }
}
