//! The C types of the header: handles, the configuration, and the plain structs calls take.
//!
//! These are the Rust definitions cbindgen turns into `include/memhc.h`; their doc comments
//! are the header's.

/// A runtime: one device budget on one backend, with its objects and plans. Obtained from
/// `memhc_runtime_create`, given back with `memhc_runtime_destroy`. A handle is a number, not
/// a pointer: copy it freely; `{0}` is the null handle. A handle that was destroyed is refused
/// (`MEMHC_STATUS_INVALID_HANDLE`), never dereferenced.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MemhcRuntime {
    /// Opaque: 0 for the null handle.
    pub handle: u64,
}

/// An object of one runtime: a hadron node (spin components of complex doubles), registered
/// from host data or produced by a contraction. It belongs to the runtime that made it and is
/// valid until `memhc_release` or `memhc_runtime_destroy`; a stale handle is refused, never
/// dereferenced. Results stay on the device until read.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MemhcObject {
    /// Opaque: 0 for the null handle.
    pub handle: u64,
}

/// A plan of one runtime: a validated spin mapping (a list of terms), reusable by any number
/// of contractions. Valid until `memhc_plan_release` or `memhc_runtime_destroy`; releasing a
/// plan does not affect contractions that ran with it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MemhcPlan {
    /// Opaque: 0 for the null handle.
    pub handle: u64,
}

/// A host buffer of one runtime: a node's values in the backend's host memory (page-locked on
/// a GPU, so that a copy to or from the device is one DMA; ordinary memory on the host
/// backend). Made by `memhc_host_alloc` (for the caller to fill in place, then
/// `memhc_host_register`: no copy) or `memhc_take_host` (a result, handed out where its
/// read-back landed); its memory is reached through `memhc_host_data`. Owned by the caller
/// until `memhc_host_register` (which takes it) or `memhc_host_free`, or until
/// `memhc_runtime_destroy` frees it with its runtime; a stale handle is refused, never
/// dereferenced.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MemhcHost {
    /// Opaque: 0 for the null handle.
    pub handle: u64,
}

/// A complex double: the same layout as C99's `double _Complex` and C++'s
/// `std::complex<double>` (an array of either may be passed where an array of `memhc_complex`
/// is expected, by a pointer cast).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MemhcComplex {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

/// One term of a spin mapping: `out[out] += A[a] * B[b]` (spin indices, from 0).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemhcTerm {
    /// Output spin.
    pub out: usize,
    /// Spin of A.
    pub a: usize,
    /// Spin of B.
    pub b: usize,
}

/// One pair of a trace: `Tr(A[a] * B[b])` is added to the result.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemhcPair {
    /// Spin of A.
    pub a: usize,
    /// Spin of B.
    pub b: usize,
}

/// One contraction: `out[t.out] += A[t.a] * B[t.b]` for every term `t` of `plan`, each
/// component seen as a row-major matrix whose rows are its first `split` dimensions (0 means
/// 1: a meson component `N x N` is an `N x N` matrix; a baryon component `N x N x N` is
/// `N x N^2` with split 1 or `N^2 x N` with split 2).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemhcContraction {
    /// The left input.
    pub a: MemhcObject,
    /// The right input.
    pub b: MemhcObject,
    /// The spin mapping.
    pub plan: MemhcPlan,
    /// Leading dimensions of A's components forming the rows (0: 1).
    pub a_split: usize,
    /// Leading dimensions of B's components forming the rows (0: 1).
    pub b_split: usize,
}

/// How to create a runtime. Start from `memhc_config_default()` and change fields; strings are
/// read during `memhc_runtime_create` only (the caller keeps ownership), and a null string
/// means the default.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemhcConfig {
    /// `"host"` (the CPU reference backend, default), `"cuda"` or `"rocm"` (GPU libraries are
    /// loaded at run time: without them creation fails with `MEMHC_STATUS_UNAVAILABLE`).
    pub backend: *const std::ffi::c_char,
    /// Device bytes the runtime may hold; 0: the device's free memory on a GPU, 1 GiB on the
    /// host backend (whose "device" is host memory taken as objects need it).
    pub budget_bytes: u64,
    /// Eviction policy: `"lru"` (default), `"pp-lru"`, `"random"`, `"mru"`, `"car"`,
    /// `"clock-pro"` or `"belady"`.
    pub policy: *const std::ffi::c_char,
    /// `"optimal"` (default: all of MemHC), `"naive"`, `"reorg"`, `"reorg-sync"`, or
    /// `"unified"` (managed memory; GPU backends only).
    pub mode: *const std::ffi::c_char,
    /// Streams contractions are spread over; 0: 4.
    pub streams: u32,
    /// Seed of the `random` policy.
    pub seed: u64,
    /// Where results land on the host: `"pageable"` (default: ordinary memory) or `"pinned"`
    /// (the backend's page-locked memory: a read-back is one DMA, and `memhc_take_host` hands
    /// the result out there without a copy). Buffers from `memhc_host_alloc` are page-locked
    /// either way. Not with the mode `"unified"`; null: `"pageable"`.
    pub host_memory: *const std::ffi::c_char,
    /// Prefetch: 0 (off, the default), or a lookahead window in object uses (a contraction is
    /// three) within which copies are issued ahead of their use where the runtime knows the
    /// future (`memhc_corr_run`). With `host_memory` `"pinned"` and 12, the fast data path on
    /// a GPU. Not with the mode `"unified"`.
    pub prefetch: u32,
}

/// A snapshot of a runtime's statistics (the metric names of memhc's reports).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MemhcStats {
    /// Driver allocations made (in arena mode, the arena's one).
    pub allocations: u64,
    /// Driver frees made.
    pub frees: u64,
    /// Requests for device memory served from the free pool.
    pub pool_reuses: u64,
    /// Requests served with the block of the object just evicted for them.
    pub handovers: u64,
    /// Requests served by a range of the arena (arena mode).
    pub arena_allocations: u64,
    /// Object uses that found the object resident (no allocation, no copy).
    pub hits: u64,
    /// Object uses that had to make the object resident.
    pub misses: u64,
    /// `hits / (hits + misses)`, 0 when there were none.
    pub hit_rate: f64,
    /// Objects evicted to make room.
    pub evictions: u64,
    /// Evicted objects whose device copy was the only one, copied back first.
    pub writebacks: u64,
    /// Bytes copied host to device.
    pub h2d_bytes: u64,
    /// Bytes copied device to host.
    pub d2h_bytes: u64,
    /// The most device bytes held at once.
    pub peak_device_bytes: u64,
    /// Floating-point operations of all products (`8 m n k` each).
    pub flops: u64,
    /// Batched GEMM calls.
    pub gemm_calls: u64,
    /// Live objects of the runtime.
    pub objects: u64,
    /// Live plans of the runtime.
    pub plans: u64,
    /// The device budget in bytes.
    pub budget_bytes: u64,
}

/// A correlator file (`memhc-corr/1`), loaded with its node data and planned, from
/// `memhc_corr_open`; given back with `memhc_corr_release`. It holds no runtime and no device
/// memory: each `memhc_corr_run` opens its own runtime. Immutable once opened, so it may be
/// used from several threads at once. `{0}` is the null handle; a released handle is refused
/// (`MEMHC_STATUS_INVALID_HANDLE`), never dereferenced.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MemhcCorr {
    /// Opaque: 0 for the null handle.
    pub handle: u64,
}

/// The correlators of one run (or of the reference), from `memhc_corr_run` or
/// `memhc_corr_reference`; given back with `memhc_corr_results_release`. The values are owned
/// by the results, independent of the `memhc_corr` that made them (which may be released
/// first) and of any runtime. Immutable, so they may be read from several threads at once.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MemhcCorrResults {
    /// Opaque: 0 for the null handle.
    pub handle: u64,
}

/// How `memhc_corr_open` plans a correlator file. Start from `memhc_corr_options_default()`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemhcCorrOptions {
    /// Non-zero (default): share identical partial products and traces across all loops,
    /// graphs and time pairs; 0: every loop on its own.
    pub sharing: i32,
    /// 0 (default): the planner's memory-aware order; non-zero: the file's order.
    pub file_order: i32,
    /// At most this many contractions per vector (stage); 0: 16.
    pub vector_size: usize,
}

/// The planner's report of a correlator file (`memhc_corr_plan`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MemhcCorrPlanReport {
    /// 1 if partial products and traces are shared, else 0.
    pub sharing: i32,
    /// 1 if the work runs in the file's order, 0 in the planner's.
    pub file_order: i32,
    /// Loops of the used graphs (each occurrence).
    pub loops: u64,
    /// Contractions if every loop were reduced on its own (the sum of `k - 2` over loops of
    /// `k` nodes).
    pub contractions_without_sharing: u64,
    /// Contractions the plan runs.
    pub contractions: u64,
    /// Traces the plan runs.
    pub traces: u64,
    /// `1 - contractions / contractions_without_sharing` (0 when there are none).
    pub shared_fraction: f64,
    /// Floating-point operations of the plan's contractions and traces.
    pub flops: u64,
    /// Stages (vectors of independent contractions).
    pub stages: u64,
    /// Initial nodes the plan reads.
    pub nodes: u64,
    /// Bytes of those nodes.
    pub node_bytes: u64,
    /// The most bytes alive at once: the smallest device budget under which a run evicts
    /// nothing, and the budget of a host run given none.
    pub peak_bytes: u64,
    /// The same in the other order (the file's for a planned plan, and vice versa).
    pub peak_bytes_other_order: u64,
    /// The device bytes the runtime holds at its peak when the budget never binds (released
    /// buffers wait in the free pool for requests of their size).
    pub peak_bytes_with_pool: u64,
}

/// One time pair of a correlator: its value is at `(source, sink)`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemhcCorrTime {
    /// The source time slice.
    pub source: u32,
    /// The sink time slice.
    pub sink: u32,
}
