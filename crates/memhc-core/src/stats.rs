//! The runtime's statistics, under the metric names reports use (`docs/architecture.md`,
//! "Workloads and metrics").
//!
//! Cache events (hits, misses, pool reuses, evictions, write-backs) are counted by the runtime;
//! device traffic (allocations, bytes copied, peak bytes, flops) by the
//! [`Instrumented`](crate::backend::instrumented::Instrumented) wrapper every call goes through.

/// A snapshot of a runtime's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Stats {
    /// Device allocations made.
    pub allocations: u64,
    /// Device frees made.
    pub frees: u64,
    /// Allocations served from the free pool instead of the device.
    pub pool_reuses: u64,
    /// Object uses that found the object resident (no allocation, no copy).
    pub hits: u64,
    /// Object uses that had to make the object resident.
    pub misses: u64,
    /// `hits / (hits + misses)`, 0 when there were none.
    pub hit_rate: f64,
    /// Objects evicted to make room.
    pub evictions: u64,
    /// Evicted objects whose device copy was the only valid one and had to be copied back.
    pub writebacks: u64,
    /// Bytes copied host to device.
    pub h2d_bytes: u64,
    /// Bytes copied device to host.
    pub d2h_bytes: u64,
    /// Host-to-device copy calls.
    pub h2d_copies: u64,
    /// Device-to-host copy calls.
    pub d2h_copies: u64,
    /// The most device bytes held at once.
    pub peak_device_bytes: u64,
    /// Floating-point operations of all GEMM items (`8 m n k` each).
    pub flops: u64,
    /// Batched GEMM calls.
    pub gemm_calls: u64,
}

impl Stats {
    /// `hits / (hits + misses)`, 0 when there were none.
    pub fn compute_hit_rate(hits: u64, misses: u64) -> f64 {
        if hits + misses == 0 {
            0.0
        } else {
            hits as f64 / (hits + misses) as f64
        }
    }
}
