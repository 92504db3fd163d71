//! One measured run: the parameters of its point, the policy and mode, and the metrics under
//! the names in `docs/architecture.md` ("Workloads and metrics"). JSON and CSV files hold one
//! record per run, flat.

use serde::{Deserialize, Serialize};

/// One run of one point with one policy and mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Eviction policy.
    pub policy: String,
    /// Optimisation mode (naive, reorg, reorg-sync, optimal, unified).
    pub mode: String,
    /// Where device memory came from (driver, handover, arena).
    pub alloc: String,
    /// The reuse tolerance in percent (0: exact sizes).
    pub reuse_tolerance_percent: u32,
    /// Prefetch window in object uses (`None`: prefetch off).
    pub prefetch: Option<usize>,
    /// The order contractions were issued in (`queue` or `dependency`); left out of a record
    /// of the queue's order, the default.
    #[serde(default = "queue_order", skip_serializing_if = "is_queue_order")]
    pub order: String,
    /// Backend (host, cuda, rocm).
    pub backend: String,
    /// `N` (generated workloads; 0 for a workload file).
    pub tensor_size: usize,
    /// Contractions per vector (generated workloads; 0 for a workload file).
    pub vector_size: usize,
    /// Number of vectors.
    pub vectors: usize,
    /// Repeated rate (generated workloads).
    pub repeat: f64,
    /// `uniform`, `gaussian`, or `file`.
    pub dist: String,
    /// Oversubscription rate, when the budget was derived from it.
    pub oversub: Option<f64>,
    /// Seed of the generator.
    pub seed: u64,
    /// Device budget in bytes.
    pub budget: u64,
    /// The most bytes the run holds resident when nothing is evicted (the budget's basis).
    pub peak_no_eviction_bytes: u64,
    /// Driver allocations made (in arena mode, the arena's one).
    pub allocations: u64,
    /// Requests served from the free pool.
    pub pool_reuses: u64,
    /// Requests served with the block of the object just evicted for them.
    pub handovers: u64,
    /// Requests served by a new range of the arena.
    pub arena_allocations: u64,
    /// Bytes by which reused or handed-over blocks exceeded their requests, summed.
    pub pool_slack_bytes: u64,
    /// Arena mode: evictions made only because the free bytes were in pieces.
    pub fragmentation_evictions: u64,
    /// Arena mode: the most free bytes that could not serve a request they would have covered.
    pub arena_stranded_bytes: u64,
    /// Arena mode: launches that started over after splitting the arena.
    pub arena_restarts: u64,
    /// Object uses that found the object resident.
    pub hits: u64,
    /// Object uses that had to make it resident.
    pub misses: u64,
    /// `hits / (hits + misses)`.
    pub hit_rate: f64,
    /// Objects evicted.
    pub evictions: u64,
    /// Evicted device-only objects copied back first.
    pub writebacks: u64,
    /// Objects prefetched on the copy stream.
    pub prefetches: u64,
    /// Uses that found their object resident because of a prefetch.
    pub prefetch_hits: u64,
    /// Prefetched objects that left the device unused.
    pub prefetch_wasted: u64,
    /// Bytes prefetched.
    pub prefetch_bytes: u64,
    /// Write-backs issued asynchronously on the copy stream.
    pub async_writebacks: u64,
    /// `--host-memory pinned`: the node data and results live in the backend's page-locked
    /// memory.
    #[serde(default)]
    pub pinned: bool,
    /// Results read back right after their last writer (`--host-memory pinned`).
    #[serde(default)]
    pub early_read_backs: u64,
    /// The share of copy time during which a GEMM ran on another stream (backends that time
    /// their work).
    pub copy_hidden_share: Option<f64>,
    /// Bytes copied host to device.
    pub h2d_bytes: u64,
    /// Bytes copied device to host.
    pub d2h_bytes: u64,
    /// The most device bytes held at once.
    pub peak_device_bytes: u64,
    /// Floating-point operations of all GEMMs (`8 m n k` per product).
    pub flops: u64,
    /// Batched BLAS calls the run issued (GEMM, pointer-array or strided; `Stats::gemm_calls`):
    /// today a meson contraction is 4 of them (one per layer of 16 products).
    #[serde(default)]
    pub gemm_calls: u64,
    /// `flops / wall_s / 1e9`.
    pub gflops: f64,
    /// Wall time of the run (vectors, traces, reading the results), seconds.
    pub wall_s: f64,
    /// Wall time of every run of this configuration (`--runs`), in the order they ran, seconds:
    /// `wall_s` is their median.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wall_s_runs: Vec<f64>,
    /// CPU time of the process over the same span, seconds, all threads (`None`: the
    /// platform cannot say): the host's share of the run.
    pub cpu_s: Option<f64>,
    /// `cpu_s` of every run, in the order they ran (empty where the platform cannot say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_s_runs: Vec<f64>,
    /// The time during which the device computed (GEMM and GEAM batches) on some stream, from
    /// its timeline, seconds (`None`: the backend cannot time its work).
    pub device_compute_s: Option<f64>,
    /// Misses of the Belady policy on the same queue and budget (equal-sized nodes only): the
    /// lower bound for every policy.
    pub miss_lower_bound: Option<u64>,
    /// Whether every result matched the reference implementation (`None`: not checked).
    pub verified: Option<bool>,
    /// The largest relative error against the reference, when checked.
    pub max_rel_error: Option<f64>,
    /// `--backend model`: the modelled makespan of the run on the modelled H100, seconds: from
    /// the start of the queue (as `wall_s`) to its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_makespan_s: Option<f64>,
    /// `--backend model`: modelled host time before the queue starts, seconds (page-locking
    /// the node data's memory, with `--host-memory pinned`; not part of the makespan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_setup_s: Option<f64>,
    /// `--backend model`: the modelled floor of the run, `max(flops / rate, bytes in / bus,
    /// bytes out / bus)` over the work it issued, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_floor_s: Option<f64>,
}

/// The default order of a record that names none.
fn queue_order() -> String {
    "queue".into()
}

/// Whether a record's order is the queue's (the default, not written).
fn is_queue_order(order: &str) -> bool {
    order == "queue"
}

/// The parameters [`Record::parameter`] knows, by their command-line names.
pub const PARAMETERS: [&str; 5] = ["repeat", "vector-size", "tensor-size", "oversub", "vectors"];

impl Record {
    /// The value of a swept parameter by its command-line name ([`PARAMETERS`]), for plots and
    /// tables.
    pub fn parameter(&self, name: &str) -> Option<f64> {
        Some(match name {
            "repeat" => self.repeat,
            "vector-size" => self.vector_size as f64,
            "tensor-size" => self.tensor_size as f64,
            "oversub" => self.oversub?,
            "vectors" => self.vectors as f64,
            _ => return None,
        })
    }

    /// A label for the record's series in plots: `policy/mode` (`policy/mode/alloc` when the
    /// allocation setting is not the mode's own), with `/pfW` when prefetching `W` uses ahead
    /// and `/dependency` when issued in the dependency order.
    pub fn series(&self) -> String {
        let own = if self.mode == "optimal" {
            "handover"
        } else {
            "driver"
        };
        let base = if self.alloc == own {
            format!("{}/{}", self.policy, self.mode)
        } else {
            format!("{}/{}/{}", self.policy, self.mode, self.alloc)
        };
        let base = match self.prefetch {
            Some(w) => format!("{base}/pf{w}"),
            None => base,
        };
        if is_queue_order(&self.order) {
            base
        } else {
            format!("{base}/{}", self.order)
        }
    }
}
