//! The runtime's statistics, under the metric names reports use (`docs/architecture.md`,
//! "Workloads and metrics").
//!
//! Cache events (hits, misses, pool reuses, handovers, arena sub-allocations, evictions,
//! write-backs) are counted by the runtime; device traffic (driver allocations, bytes copied,
//! peak bytes, flops) by the [`Instrumented`](crate::backend::instrumented::Instrumented)
//! wrapper every call goes through.
//!
//! Where a request for device memory was served, one counter each: `pool_reuses` (the free
//! pool), `handovers` (the block of the object just evicted for it), `arena_allocations` (a new
//! range of the arena) or `allocations` (the driver). In arena mode `allocations` is 1, the
//! arena itself, and `peak_device_bytes` is the arena's size.

/// A snapshot of a runtime's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Stats {
    /// Driver allocations made (in arena mode, the arena's one).
    pub allocations: u64,
    /// Driver frees made.
    pub frees: u64,
    /// Requests served from the free pool instead of the driver or the arena.
    pub pool_reuses: u64,
    /// Requests served with the block of the object just evicted for them (handover), instead
    /// of freeing it and allocating anew. Each is an eviction too.
    pub handovers: u64,
    /// Requests served by a new range of the arena (arena mode), instead of the driver.
    pub arena_allocations: u64,
    /// Bytes by which the blocks that served requests exceeded them, summed over pool reuses
    /// and handovers (non-zero only with a reuse tolerance): memory held but not used.
    pub pool_slack_bytes: u64,
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
    /// Arena mode: evictions made while the arena had enough free bytes for the request, but
    /// not in one piece (the cost of fragmentation).
    pub fragmentation_evictions: u64,
    /// Arena mode: the most free bytes the arena held while failing a request they would have
    /// covered (fragmentation at its worst).
    pub arena_stranded_bytes: u64,
    /// Arena mode: launches that had to put their own objects back and start over because
    /// they had split the arena (see [`Error::Fragmented`](crate::Error::Fragmented)).
    pub arena_restarts: u64,
    /// Prefetch on: objects brought in ahead of their use on the copy stream (each one a
    /// host-to-device copy that no launch waited to start; not counted as misses).
    pub prefetches: u64,
    /// Prefetch on: uses that found their object resident because a prefetch brought it in
    /// (counted as hits too).
    pub prefetch_hits: u64,
    /// Prefetch on: prefetched objects that left the device (evicted, released, overwritten
    /// from the host) before any launch used them.
    pub prefetch_wasted: u64,
    /// Prefetch on: bytes brought in by prefetches (part of `h2d_bytes`).
    pub prefetch_bytes: u64,
    /// Prefetch on: write-backs issued asynchronously on the copy stream (part of
    /// `writebacks`).
    pub async_writebacks: u64,
    /// Early read-back on ([`Config::early_read_back`](crate::Config::early_read_back)):
    /// results copied back on the read-back stream right after their last writer (part of
    /// `d2h_bytes`; not evictions).
    pub early_read_backs: u64,
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

/// How the arena is used at one moment ([`Runtime::arena_usage`](crate::Runtime::arena_usage)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ArenaUsage {
    /// The arena's size in bytes.
    pub capacity: usize,
    /// Free bytes.
    pub free: usize,
    /// The largest free piece: `free - largest_free` bytes are usable only by smaller requests.
    pub largest_free: usize,
}
