/*
 * memhc.h: the C ABI of memhc, a GPU memory runtime for batched complex-double hadron
 * contractions (lattice-QCD correlation functions). Link libmemhc_capi (shared or static; the
 * static library also needs -lpthread -ldl -lm), or in CMake: find_package(memhc) and
 * target_link_libraries(app PRIVATE memhc::memhc).
 *
 * A SESSION
 *   memhc_config cfg = memhc_config_default();      // host backend, 1 GiB, lru, optimal
 *   cfg.budget_bytes = 8ull << 30; cfg.policy = "belady";
 *   memhc_runtime rt;  memhc_runtime_create(&cfg, &rt);
 *   memhc_object a, b; memhc_register(rt, 16, dims, 2, data, len, &a);   // copies data
 *   memhc_plan p;      memhc_plan_meson4x4(rt, &p);  // or memhc_plan_create(terms)
 *   memhc_contraction c = { a, b, p, 0, 0 };
 *   memhc_object out;  memhc_contract(rt, &c, 0, &out);   // result stays on the device
 *   memhc_read(rt, out, buf, len);                         // into the caller's buffer
 *   memhc_complex t;   memhc_trace_meson4x4(rt, out, b, 0, &t);
 *   memhc_release(rt, out); memhc_plan_release(rt, p); memhc_runtime_destroy(rt);
 *
 * ERRORS
 *   Every function that can fail returns a memhc_status: MEMHC_STATUS_OK (0) or the kind of
 *   failure. memhc_last_error() then returns one line explaining it (owned by memhc, valid
 *   until the next memhc call on the same thread; copy it with memhc_last_error_copy to keep
 *   it). A failed call leaves its out-parameters unchanged (except where documented: the rank
 *   of memhc_object_shape, the sizes of memhc_last_error_copy and memhc_corr_results_name)
 *   and changes nothing in the runtime, except that a failed contraction may have evicted or
 *   written back other objects (never losing a value). No C++ exception, Rust panic or signal ever leaves a memhc call:
 *   an internal bug is reported as MEMHC_STATUS_INTERNAL. Nothing is ever printed, except by
 *   an internal bug (a Rust panic message on stderr before MEMHC_STATUS_INTERNAL).
 *
 * HANDLES, OWNERSHIP AND LIFETIMES
 *   memhc_runtime, memhc_object, memhc_plan and memhc_host are 64-bit handles passed by
 *   value, not pointers; {0} is the null handle. Handles are checked on every call: a null
 *   handle, one released already (a double release, a use after release), one of another kind
 *   or one of another runtime is refused with MEMHC_STATUS_INVALID_HANDLE, never
 *   dereferenced. Every handle a call returns is owned by the caller until released
 *   (memhc_release, memhc_plan_release, memhc_host_register or memhc_host_free,
 *   memhc_runtime_destroy); destroying a runtime releases all its objects, plans and host
 *   buffers at once. memhc never keeps a pointer the caller passed: input arrays (data,
 *   dims, terms, pairs, contractions, configuration strings) are read or copied during the
 *   call and may be freed as soon as it returns; output buffers are written during the call
 *   only. memhc_register always copies (no borrowing of caller memory): the runtime owns its
 *   host copies, so that eviction can write results back into them. To avoid that copy, write
 *   into memory memhc owns (PAGE-LOCKED BUFFERS below). Strings memhc returns
 *   (memhc_last_error, memhc_status_name, memhc_version) are owned by memhc: never free them.
 *
 * POINTERS
 *   Pointer arguments must point to what their documentation says (memhc cannot check that
 *   memory is valid); memhc does check that they are not null where a value is needed
 *   (MEMHC_STATUS_NULL_POINTER), that they are aligned, and that lengths match the objects
 *   (MEMHC_STATUS_SIZE_MISMATCH). An array pointer may be null when its length is 0.
 *
 * THREAD SAFETY
 *   Every function may be called from any thread. Calls on one runtime are serialised by a
 *   lock inside it (one thread's call waits for another's to finish); calls on different
 *   runtimes run in parallel. A runtime may be created on one thread and used or destroyed on
 *   another. The last error is per thread. A runtime's own worker threads (one per stream on
 *   the host backend) never call back into the caller's code.
 *
 * DATA LAYOUT
 *   An object is `spins` components, each a row-major (C order) tensor of complex doubles,
 *   stored component after component ("packed order"). memhc_complex is laid out as C99
 *   `double _Complex` and C++ `std::complex<double>`, so arrays of those may be passed by a
 *   pointer cast.
 *
 * PAGE-LOCKED BUFFERS (no copy in, no copy out)
 *   memhc_host h;  memhc_host_alloc(rt, 16, dims, 2, &h);   // the backend's host memory
 *   memhc_complex *p; size_t n;  memhc_host_data(rt, h, &p, &n);
 *   fill p[0..n) in place;  memhc_object a;  memhc_host_register(rt, h, &a);   // no copy
 *   (h and p are dead from here: the runtime owns the memory)
 *   memhc_host r;  memhc_take_host(rt, out, &r);   // out released; with cfg.host_memory =
 *                                                  // "pinned" the read-back's memory, no copy
 *   memhc_host_data(rt, r, &p, &n);  read p[0..n);  memhc_host_free(rt, r);
 *   The pointer memhc_host_data gives is valid until the buffer is registered
 *   (memhc_host_register), freed (memhc_host_free) or its runtime destroyed; nothing else
 *   moves or frees it, and memhc does not read or write it between calls. On the host
 *   backend the buffer is ordinary memory and the same calls work.
 *
 * CORRELATORS
 *   A correlator file (memhc-corr/1, docs/correlator-format.md: hadron nodes, Wick graphs,
 *   correlators at (source, sink) time pairs) runs in a few calls:
 *     memhc_corr corr;  memhc_corr_open("pion.corr.json", NULL, &corr);  // load and plan
 *     memhc_corr_plan_report rep;  memhc_corr_plan(corr, &rep);          // before running
 *     memhc_corr_results res; memhc_corr_run(corr, &cfg, &res);  // NULL cfg: host, plan's peak
 *     size_t n; memhc_corr_results_count(res, &n);
 *     for each i < n: memhc_corr_results_name(res, i, buf, sizeof buf, NULL);
 *                     memhc_corr_results_len(res, i, &len);
 *                     memhc_corr_results_values(res, i, times, values, len);  // caller's arrays
 *     memhc_corr_results_write(res, "out.json");                  // .json, .csv (.h5: hdf5 builds)
 *     memhc_corr_results_release(res); memhc_corr_release(corr);
 *   A memhc_corr (a loaded, planned file) and a memhc_corr_results (the correlators of one
 *   run) are handles like the others, owned by the caller until released, but they belong to
 *   no runtime: memhc_corr_run makes its own runtime for the run and destroys it before it
 *   returns, and results stay valid after their memhc_corr is released. Both are immutable,
 *   so any number of threads may use one at once (runs of one file run in parallel). A file
 *   that cannot be read is MEMHC_STATUS_IO, one that is not valid MEMHC_STATUS_INVALID_FILE,
 *   with one line naming the file and the place (graph, loop, node).
 */

#ifndef MEMHC_H
#define MEMHC_H

/* Generated by cbindgen from crates/memhc-capi; do not edit. Regenerate: cargo run -p memhc-capi --example gen-header */

#include <stddef.h>
#include <stdint.h>

// What a memhc function returns: `MEMHC_STATUS_OK` (0) on success, otherwise the kind of
// failure; `memhc_last_error()` then explains it in one line. A status is a 32-bit integer on
// every platform; new codes may be added at the end in later versions, so treat any unknown
// non-zero value as a failure (`memhc_status_name` names every code).
enum memhc_status
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  // Success.
  MEMHC_STATUS_OK = 0,
  // A pointer argument that must not be null was null (an out-parameter, a string, or an
  // array with a non-zero length).
  MEMHC_STATUS_NULL_POINTER = 1,
  // A handle that is null, stale (released already: a double release or a use after
  // release), of the wrong kind, or from another runtime. Nothing was done.
  MEMHC_STATUS_INVALID_HANDLE = 2,
  // An argument out of range or inconsistent: a shape, a spin mapping, trace pairs, a
  // matrix split, a stream index, a configuration value, a misaligned pointer.
  MEMHC_STATUS_INVALID_ARGUMENT = 3,
  // A buffer whose length is not the one the object or the shape needs.
  MEMHC_STATUS_SIZE_MISMATCH = 4,
  // A backend, policy or mode name that is not known, or a string that is not UTF-8.
  MEMHC_STATUS_UNKNOWN_NAME = 5,
  // The backend cannot run here: not compiled into this library, or no driver, GPU
  // library or device. The message says which.
  MEMHC_STATUS_UNAVAILABLE = 6,
  // The objects one operation needs at once do not fit in the device budget, even after
  // evicting everything else.
  MEMHC_STATUS_DOES_NOT_FIT = 7,
  // An object read before it holds a value.
  MEMHC_STATUS_UNINITIALIZED = 8,
  // A device call (copy, GEMM, allocation) failed.
  MEMHC_STATUS_DEVICE = 9,
  // `memhc_audit` found an invariant of the runtime's tables broken (a bug in memhc).
  MEMHC_STATUS_AUDIT_FAILED = 10,
  // A caller's buffer is too small for what is asked (`memhc_last_error_copy`,
  // `memhc_object_shape`); the size needed is reported.
  MEMHC_STATUS_BUFFER_TOO_SMALL = 11,
  // A bug in memhc, caught before it could cross the boundary (an internal invariant, or a
  // Rust panic). A runtime that reports this from inside should be destroyed.
  MEMHC_STATUS_INTERNAL = 12,
  // A file that cannot be read or written: a correlator file that is missing or
  // unreadable, a results file in a directory that does not exist. The message names it.
  MEMHC_STATUS_IO = 13,
  // A correlator file that is not valid `memhc-corr/1` (JSON that does not parse, an
  // unknown node or graph, mismatched dims, a node data file missing or of the wrong shape):
  // one line naming the file and the place (graph, loop, node).
  MEMHC_STATUS_INVALID_FILE = 14,
  // Computed correlators that differ from the independent reference by more than the
  // tolerance (`memhc_corr_verify`).
  MEMHC_STATUS_VERIFY_FAILED = 15,
  // A name looked up that is not there (`memhc_corr_results_find`).
  MEMHC_STATUS_NOT_FOUND = 16,
  // A request larger than the host memory available (a spin count, a node, a correlator
  // file's data), refused before anything was allocated; `MEMHC_HOST_MEMORY` sets what is
  // available. Nothing was changed.
  MEMHC_STATUS_OUT_OF_HOST_MEMORY = 17,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum memhc_status memhc_status;
#else
typedef int32_t memhc_status;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// A runtime: one device budget on one backend, with its objects and plans. Obtained from
// `memhc_runtime_create`, given back with `memhc_runtime_destroy`. A handle is a number, not
// a pointer: copy it freely; `{0}` is the null handle. A handle that was destroyed is refused
// (`MEMHC_STATUS_INVALID_HANDLE`), never dereferenced.
typedef struct memhc_runtime {
  // Opaque: 0 for the null handle.
  uint64_t handle;
} memhc_runtime;

// One term of a spin mapping: `out[out] += A[a] * B[b]` (spin indices, from 0).
typedef struct memhc_term {
  // Output spin.
  size_t out;
  // Spin of A.
  size_t a;
  // Spin of B.
  size_t b;
} memhc_term;

// A plan of one runtime: a validated spin mapping (a list of terms), reusable by any number
// of contractions. Valid until `memhc_plan_release` or `memhc_runtime_destroy`; releasing a
// plan does not affect contractions that ran with it.
typedef struct memhc_plan {
  // Opaque: 0 for the null handle.
  uint64_t handle;
} memhc_plan;

// An object of one runtime: a hadron node (spin components of complex doubles), registered
// from host data or produced by a contraction. It belongs to the runtime that made it and is
// valid until `memhc_release` or `memhc_runtime_destroy`; a stale handle is refused, never
// dereferenced. Results stay on the device until read.
typedef struct memhc_object {
  // Opaque: 0 for the null handle.
  uint64_t handle;
} memhc_object;

// One contraction: `out[t.out] += A[t.a] * B[t.b]` for every term `t` of `plan`, each
// component seen as a row-major matrix whose rows are its first `split` dimensions (0 means
// 1: a meson component `N x N` is an `N x N` matrix; a baryon component `N x N x N` is
// `N x N^2` with split 1 or `N^2 x N` with split 2).
typedef struct memhc_contraction {
  // The left input.
  struct memhc_object a;
  // The right input.
  struct memhc_object b;
  // The spin mapping.
  struct memhc_plan plan;
  // Leading dimensions of A's components forming the rows (0: 1).
  size_t a_split;
  // Leading dimensions of B's components forming the rows (0: 1).
  size_t b_split;
} memhc_contraction;

// One pair of a trace: `Tr(A[a] * B[b])` is added to the result.
typedef struct memhc_pair {
  // Spin of A.
  size_t a;
  // Spin of B.
  size_t b;
} memhc_pair;

// A complex double: the same layout as C99's `double _Complex` and C++'s
// `std::complex<double>` (an array of either may be passed where an array of `memhc_complex`
// is expected, by a pointer cast).
typedef struct memhc_complex {
  // Real part.
  double re;
  // Imaginary part.
  double im;
} memhc_complex;

// How `memhc_corr_open` plans a correlator file. Start from `memhc_corr_options_default()`.
typedef struct memhc_corr_options {
  // Non-zero (default): share identical partial products and traces across all loops,
  // graphs and time pairs; 0: every loop on its own.
  int32_t sharing;
  // 0 (default): the planner's memory-aware order; non-zero: the file's order.
  int32_t file_order;
  // At most this many contractions per vector (stage); 0: 16.
  size_t vector_size;
} memhc_corr_options;

// A correlator file (`memhc-corr/1`), loaded with its node data and planned, from
// `memhc_corr_open`; given back with `memhc_corr_release`. It holds no runtime and no device
// memory: each `memhc_corr_run` opens its own runtime. Immutable once opened, so it may be
// used from several threads at once. `{0}` is the null handle; a released handle is refused
// (`MEMHC_STATUS_INVALID_HANDLE`), never dereferenced.
typedef struct memhc_corr {
  // Opaque: 0 for the null handle.
  uint64_t handle;
} memhc_corr;

// The planner's report of a correlator file (`memhc_corr_plan`).
typedef struct memhc_corr_plan_report {
  // 1 if partial products and traces are shared, else 0.
  int32_t sharing;
  // 1 if the work runs in the file's order, 0 in the planner's.
  int32_t file_order;
  // Loops of the used graphs (each occurrence).
  uint64_t loops;
  // Contractions if every loop were reduced on its own (the sum of `k - 2` over loops of
  // `k` nodes).
  uint64_t contractions_without_sharing;
  // Contractions the plan runs.
  uint64_t contractions;
  // Traces the plan runs.
  uint64_t traces;
  // `1 - contractions / contractions_without_sharing` (0 when there are none).
  double shared_fraction;
  // Floating-point operations of the plan's contractions and traces.
  uint64_t flops;
  // Stages (vectors of independent contractions).
  uint64_t stages;
  // Initial nodes the plan reads.
  uint64_t nodes;
  // Bytes of those nodes.
  uint64_t node_bytes;
  // The most bytes alive at once: the smallest device budget under which a run evicts
  // nothing, and the budget of a host run given none.
  uint64_t peak_bytes;
  // The same in the other order (the file's for a planned plan, and vice versa).
  uint64_t peak_bytes_other_order;
  // The device bytes the runtime holds at its peak when the budget never binds (released
  // buffers wait in the free pool for requests of their size).
  uint64_t peak_bytes_with_pool;
} memhc_corr_plan_report;

// How to create a runtime. Start from `memhc_config_default()` and change fields; strings are
// read during `memhc_runtime_create` only (the caller keeps ownership), and a null string
// means the default.
typedef struct memhc_config {
  // `"host"` (the CPU reference backend, default), `"cuda"` or `"rocm"` (GPU libraries are
  // loaded at run time: without them creation fails with `MEMHC_STATUS_UNAVAILABLE`).
  const char *backend;
  // Device bytes the runtime may hold; 0: the device's free memory on a GPU, 1 GiB on the
  // host backend (whose "device" is host memory taken as objects need it).
  uint64_t budget_bytes;
  // Eviction policy: `"lru"` (default), `"pp-lru"`, `"random"`, `"mru"`, `"car"`,
  // `"clock-pro"` or `"belady"`.
  const char *policy;
  // `"optimal"` (default: all of MemHC), `"naive"`, `"reorg"`, `"reorg-sync"`, or
  // `"unified"` (managed memory; GPU backends only).
  const char *mode;
  // Streams contractions are spread over; 0: 4.
  uint32_t streams;
  // Seed of the `random` policy.
  uint64_t seed;
  // Where results land on the host: `"pageable"` (default: ordinary memory) or `"pinned"`
  // (the backend's page-locked memory: a read-back is one DMA, and `memhc_take_host` hands
  // the result out there without a copy). Buffers from `memhc_host_alloc` are page-locked
  // either way. Not with the mode `"unified"`; null: `"pageable"`.
  const char *host_memory;
  // Prefetch: 0 (off, the default), or a lookahead window in object uses (a contraction is
  // three) within which copies are issued ahead of their use where the runtime knows the
  // future (`memhc_corr_run`). With `host_memory` `"pinned"` and 12, the fast data path on
  // a GPU. Not with the mode `"unified"`.
  uint32_t prefetch;
} memhc_config;

// The correlators of one run (or of the reference), from `memhc_corr_run` or
// `memhc_corr_reference`; given back with `memhc_corr_results_release`. The values are owned
// by the results, independent of the `memhc_corr` that made them (which may be released
// first) and of any runtime. Immutable, so they may be read from several threads at once.
typedef struct memhc_corr_results {
  // Opaque: 0 for the null handle.
  uint64_t handle;
} memhc_corr_results;

// One time pair of a correlator: its value is at `(source, sink)`.
typedef struct memhc_corr_time {
  // The source time slice.
  uint32_t source;
  // The sink time slice.
  uint32_t sink;
} memhc_corr_time;

// A host buffer of one runtime: a node's values in the backend's host memory (page-locked on
// a GPU, so that a copy to or from the device is one DMA; ordinary memory on the host
// backend). Made by `memhc_host_alloc` (for the caller to fill in place, then
// `memhc_host_register`: no copy) or `memhc_take_host` (a result, handed out where its
// read-back landed); its memory is reached through `memhc_host_data`. Owned by the caller
// until `memhc_host_register` (which takes it) or `memhc_host_free`, or until
// `memhc_runtime_destroy` frees it with its runtime; a stale handle is refused, never
// dereferenced.
typedef struct memhc_host {
  // Opaque: 0 for the null handle.
  uint64_t handle;
} memhc_host;

// A snapshot of a runtime's statistics (the metric names of memhc's reports).
typedef struct memhc_stats {
  // Driver allocations made (in arena mode, the arena's one).
  uint64_t allocations;
  // Driver frees made.
  uint64_t frees;
  // Requests for device memory served from the free pool.
  uint64_t pool_reuses;
  // Requests served with the block of the object just evicted for them.
  uint64_t handovers;
  // Requests served by a range of the arena (arena mode).
  uint64_t arena_allocations;
  // Object uses that found the object resident (no allocation, no copy).
  uint64_t hits;
  // Object uses that had to make the object resident.
  uint64_t misses;
  // `hits / (hits + misses)`, 0 when there were none.
  double hit_rate;
  // Objects evicted to make room.
  uint64_t evictions;
  // Evicted objects whose device copy was the only one, copied back first.
  uint64_t writebacks;
  // Bytes copied host to device.
  uint64_t h2d_bytes;
  // Bytes copied device to host.
  uint64_t d2h_bytes;
  // The most device bytes held at once.
  uint64_t peak_device_bytes;
  // Floating-point operations of all products (`8 m n k` each).
  uint64_t flops;
  // Batched GEMM calls.
  uint64_t gemm_calls;
  // Live objects of the runtime.
  uint64_t objects;
  // Live plans of the runtime.
  uint64_t plans;
  // The device budget in bytes.
  uint64_t budget_bytes;
} memhc_stats;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// Creates a plan from a spin mapping given as `n_terms` terms (`out[t.out] += A[t.a] * B[t.b]`,
// accumulated in the order given) producing `out_spins` output spins (0: the largest `out`
// plus one; spins no term writes are zero), and stores its handle in `*out`. The terms are
// copied. Refused with `MEMHC_STATUS_INVALID_ARGUMENT`: no terms, an output index out of
// range, a term listed twice. Input spin indices are checked against the nodes by each
// contraction.
//
// # Safety
//
// `terms` must point to `n_terms` readable `memhc_term`; `out` to a writable `memhc_plan`.
memhc_status memhc_plan_create(struct memhc_runtime rt,
                               size_t out_spins,
                               const struct memhc_term *terms,
                               size_t n_terms,
                               struct memhc_plan *out);

// Creates the plan of the 4x4 spin-block product of two full-spin mesons (16 spins, spin
// `s = 4 alpha + beta`): `out(alpha, gamma) += A(alpha, beta) * B(beta, gamma)`, 16 outputs
// of 4 terms each, and stores its handle in `*out`.
//
// # Safety
//
// `out` must point to a writable `memhc_plan`.
memhc_status memhc_plan_meson4x4(struct memhc_runtime rt, struct memhc_plan *out);

// Releases a plan (its handle becomes stale). Contractions that used it are unaffected.
memhc_status memhc_plan_release(struct memhc_runtime rt, struct memhc_plan plan);

// Runs one contraction on stream `stream` (below the runtime's number of streams) into a new
// object, whose handle goes to `*out`. The result stays on the device (no copy to the host)
// until read; the call returns once the work is queued. The inputs stay valid and unchanged;
// an input may be given as both A and B. Each output component is `m x n` with A's
// components `m x k` and B's `k x n` in their views (else `MEMHC_STATUS_INVALID_ARGUMENT`).
// The new object is owned by the caller: release it with `memhc_release`.
//
// # Safety
//
// `contraction` must point to a readable `memhc_contraction`; `out` to a writable
// `memhc_object`.
memhc_status memhc_contract(struct memhc_runtime rt,
                            const struct memhc_contraction *contraction,
                            size_t stream,
                            struct memhc_object *out);

// Runs a vector of `n` independent contractions, contraction `i` on stream `i mod streams` so
// that they run concurrently, after announcing their inputs to the eviction policy (`pp-lru`
// protects the resident ones). The `n` new objects go to `outs[0..n]` in order; `outs_len`
// must be `n` (else `MEMHC_STATUS_SIZE_MISMATCH`). On failure no handle is written; objects of
// the contractions that completed before the failure stay in the runtime until it is
// destroyed.
//
// # Safety
//
// `contractions` must point to `n` readable `memhc_contraction`; `outs` to `outs_len`
// writable `memhc_object`.
memhc_status memhc_run_vector(struct memhc_runtime rt,
                              const struct memhc_contraction *contractions,
                              size_t n,
                              struct memhc_object *outs,
                              size_t outs_len);

// Computes `sum over (a, b) in pairs of Tr(A[a] * B[b])` (a trace over spin and distillation
// indices) on the device on stream `stream`, with A's components `m x k` and B's `k x m`, and
// stores the complex result in `*out`. `pairs` holds `n_pairs` pairs, none twice. The call
// waits for the result; the objects stay on the device.
//
// # Safety
//
// `pairs` must point to `n_pairs` readable `memhc_pair`; `out` to a writable
// `memhc_complex`.
memhc_status memhc_trace(struct memhc_runtime rt,
                         struct memhc_object a,
                         struct memhc_object b,
                         const struct memhc_pair *pairs,
                         size_t n_pairs,
                         size_t stream,
                         struct memhc_complex *out);

// The full spin trace of two mesons, `memhc_trace` with the 16 pairs
// `(4 alpha + beta, 4 beta + alpha)`: `Tr(A * B)` over spin and distillation indices.
//
// # Safety
//
// `out` must point to a writable `memhc_complex`.
memhc_status memhc_trace_meson4x4(struct memhc_runtime rt,
                                  struct memhc_object a,
                                  struct memhc_object b,
                                  size_t stream,
                                  struct memhc_complex *out);

// The default planning options: sharing on, the planner's order, vectors of up to 16 (as
// `memhc run`). Never fails.
struct memhc_corr_options memhc_corr_options_default(void);

// Opens the correlator file at `path` (a `memhc-corr/1` JSON file, see
// docs/correlator-format.md; node data paths relative to its directory): reads and checks
// it, reads every node's data, plans it as `*options` says (null: `memhc_corr_options_default()`)
// and stores the handle in `*out`. Nothing runs yet and no device memory is taken.
//
// Errors: `MEMHC_STATUS_IO` when the file cannot be read; `MEMHC_STATUS_INVALID_FILE` when it
// is not valid (one line naming the file and the place: `pion.json: graph g7, loop 0:
// unknown node "pi_t9"`; also a node data file that is missing or of the wrong shape);
// `MEMHC_STATUS_NULL_POINTER` for a null `path` or `out`; `MEMHC_STATUS_UNKNOWN_NAME` when
// `path` is not UTF-8.
//
// Ownership: the handle is the caller's until `memhc_corr_release`; `path` and `options`
// are read during the call only.
//
// # Safety
//
// `path` must be a NUL-terminated string; `options` null or pointing to a readable
// `memhc_corr_options`; `out` pointing to a writable `memhc_corr`.
memhc_status memhc_corr_open(const char *path,
                             const struct memhc_corr_options *options,
                             struct memhc_corr *out);

// Stores the planner's report of an opened file in `*out`: contractions without and with
// sharing, traces, flops, stages, the initial nodes' bytes, and the peak of live bytes (the
// smallest budget under which a run evicts nothing).
//
// # Safety
//
// `out` must point to a writable `memhc_corr_plan_report`.
memhc_status memhc_corr_plan(struct memhc_corr corr, struct memhc_corr_plan_report *out);

// Runs the whole file on a fresh runtime made as `*config` says (null:
// `memhc_config_default()`: the host backend, lru, the optimal mode, 4 streams) and stores the
// correlators' handle in `*out`. The runtime exists only during the call: it is created,
// runs every stage, and is destroyed before the call returns.
//
// Budget: `config->budget_bytes`, or when it is 0, on the host backend the plan's peak of
// live bytes (`memhc_corr_plan_report.peak_bytes`, as `memhc run` does: nothing is evicted;
// NOT the 1 GiB a host runtime gets from `memhc_runtime_create`), and on a GPU the device's
// free memory.
//
// Errors: those of `memhc_runtime_create` for the configuration (`MEMHC_STATUS_UNKNOWN_NAME`,
// `MEMHC_STATUS_UNAVAILABLE`, ...), `MEMHC_STATUS_DOES_NOT_FIT` when a budget is too small for
// one contraction's working set, `MEMHC_STATUS_DEVICE`.
//
// Thread safety: several threads may run the same file at once (each run has its own
// runtime).
//
// # Safety
//
// `config` must be null or point to a valid `memhc_config` whose non-null strings are
// NUL-terminated; `out` must point to a writable `memhc_corr_results`.
memhc_status memhc_corr_run(struct memhc_corr corr,
                            const struct memhc_config *config,
                            struct memhc_corr_results *out);

// Computes the correlators with memhc's independent dense reference (every graph on its own,
// by plain products and traces on the host: no planner, no sharing, no runtime) and stores
// their handle in `*out`. Slow for large files; meant for checking.
//
// # Safety
//
// `out` must point to a writable `memhc_corr_results`.
memhc_status memhc_corr_reference(struct memhc_corr corr, struct memhc_corr_results *out);

// Checks `results` against the dense reference of the file (`memhc_corr_reference`) and
// stores the largest relative error over all values in `*max_relative_error` (which may be
// null). Above 1e-12 the call returns `MEMHC_STATUS_VERIFY_FAILED` (the message gives the
// error; `*max_relative_error` is not written).
//
// # Safety
//
// `max_relative_error` must be null or point to a writable `double`.
memhc_status memhc_corr_verify(struct memhc_corr corr,
                               struct memhc_corr_results results,
                               double *max_relative_error);

// Releases a correlator file: its handle becomes stale (a second release, or any later use,
// is `MEMHC_STATUS_INVALID_HANDLE`). Results made from it stay valid. A run in progress on
// another thread finishes normally.
memhc_status memhc_corr_release(struct memhc_corr corr);

// Stores the number of correlators in `*out` (indices `0 .. *out - 1`, in the file's order).
//
// # Safety
//
// `out` must point to a writable `size_t`.
memhc_status memhc_corr_results_count(struct memhc_corr_results results, size_t *out);

// Copies the name of correlator `index`, NUL-terminated, into the caller's buffer `buf` of
// `capacity` bytes, and stores the bytes it needs (name plus NUL) in `*needed` unless
// `needed` is null. `*needed` is written even when the buffer is too small: then nothing is
// copied and the call returns `MEMHC_STATUS_BUFFER_TOO_SMALL` (pass `buf` null and
// `capacity` 0 to ask the size). Names are ASCII letters, digits, `_`, `-` and `.`.
// An index not below the count is `MEMHC_STATUS_INVALID_ARGUMENT`.
//
// # Safety
//
// `buf` must point to `capacity` writable bytes (or be null with `capacity` 0); `needed`
// must be null or point to a writable `size_t`.
memhc_status memhc_corr_results_name(struct memhc_corr_results results,
                                     size_t index,
                                     char *buf,
                                     size_t capacity,
                                     size_t *needed);

// Stores the number of time pairs of correlator `index` in `*out`: the `n` that
// `memhc_corr_results_values` needs.
//
// # Safety
//
// `out` must point to a writable `size_t`.
memhc_status memhc_corr_results_len(struct memhc_corr_results results, size_t index, size_t *out);

// Copies correlator `index` into the caller's buffers: its time pairs into `times[0..n]` and
// its values into `values[0..n]`, in the file's order (`values[k]` is the value at
// `times[k]`). `n` must be exactly its number of time pairs (`memhc_corr_results_len`; else
// `MEMHC_STATUS_SIZE_MISMATCH` and nothing is written). Either buffer may be null to skip it.
//
// # Safety
//
// `times` must be null or point to `n` writable `memhc_corr_time`; `values` null or
// pointing to `n` writable `memhc_complex`.
memhc_status memhc_corr_results_values(struct memhc_corr_results results,
                                       size_t index,
                                       struct memhc_corr_time *times,
                                       struct memhc_complex *values,
                                       size_t n);

// Stores in `*index` the index of the correlator called `name`; `MEMHC_STATUS_NOT_FOUND`
// when there is none (the message lists the names there are).
//
// # Safety
//
// `name` must be a NUL-terminated string; `index` must point to a writable `size_t`.
memhc_status memhc_corr_results_find(struct memhc_corr_results results,
                                     const char *name,
                                     size_t *index);

// Stores in `*max_relative_error` the largest `|x - y| / |y|` (`|x - y|` where `y` is 0)
// over the values `x` of `results` against the values `y` of `other`: infinity when the two
// do not have the same correlators and time pairs. For example a run against
// `memhc_corr_reference`, or a run with sharing against one without.
//
// # Safety
//
// `max_relative_error` must point to a writable `double`.
memhc_status memhc_corr_results_compare(struct memhc_corr_results results,
                                        struct memhc_corr_results other,
                                        double *max_relative_error);

// Writes the correlators to the file `path` in the form its extension names
// (docs/correlator-format.md, section Results): `.json` (`memhc-corr-values/1`), `.csv`
// (`correlator,source,sink,re,im`), or `.h5` in a library built with the feature `hdf5`
// (otherwise `MEMHC_STATUS_UNAVAILABLE`). Another extension is
// `MEMHC_STATUS_INVALID_ARGUMENT`; a file that cannot be written `MEMHC_STATUS_IO`. An
// existing file is replaced.
//
// # Safety
//
// `path` must be a NUL-terminated string.
memhc_status memhc_corr_results_write(struct memhc_corr_results results, const char *path);

// Releases results: the handle becomes stale (a second release, or any later use, is
// `MEMHC_STATUS_INVALID_HANDLE`) and the values are freed. Buffers the caller filled from
// them stay the caller's.
memhc_status memhc_corr_results_release(struct memhc_corr_results results);

// The library's version, as a static NUL-terminated string (`"0.1.0"`). Never fails; the
// pointer is valid for the life of the program and must not be freed.
const char *memhc_version(void);

// The name of a status code as this header spells it (`"MEMHC_STATUS_DOES_NOT_FIT"`), or
// `"MEMHC_STATUS_UNKNOWN"` for a value this library does not know. Never fails; the string is
// static: valid for the life of the program, never freed by the caller. Does not change the
// last error.
const char *memhc_status_name(int32_t status);

// The message of the last failed memhc call on the calling thread, one line of UTF-8 without
// a trailing newline; the empty string after a successful call (or before any call). Never
// null, never fails.
//
// Lifetime: the pointer stays valid until the next memhc call on the same thread (which may
// replace the message) or until the thread ends; copy the text to keep it. It is owned by
// memhc: never free it. Each thread has its own message. This function, `memhc_last_error_copy`,
// `memhc_status_name` and `memhc_version` do not change it.
const char *memhc_last_error(void);

// Copies the calling thread's last error message, NUL-terminated, into the caller's buffer
// `buf` of `capacity` bytes, and stores the bytes it needs (message plus NUL) in `*needed`
// unless `needed` is null. With a buffer too small (or `buf` null and `capacity` 0, to ask
// the size) nothing is copied and `MEMHC_STATUS_BUFFER_TOO_SMALL` is returned. Does not
// change the last error.
//
// # Safety
//
// `buf` must point to `capacity` writable bytes (or be null with `capacity` 0); `needed` must
// be null or point to a writable `size_t`.
memhc_status memhc_last_error_copy(char *buf, size_t capacity, size_t *needed);

// Allocates host memory of the runtime's backend for a node of `spins` components of
// dimensions `dims[0] x ... x dims[rank-1]` (page-locked on a GPU: its upload is one DMA,
// with no staging copy; ordinary memory on the host backend) and stores its handle in
// `*out`. Fill it through `memhc_host_data`, then register it with `memhc_host_register`.
// The shape is checked as `memhc_register` checks it (`MEMHC_STATUS_INVALID_ARGUMENT`), and
// its bytes against the host's memory (`MEMHC_STATUS_OUT_OF_HOST_MEMORY`), before any memory
// is taken. What the buffer holds before it is written is unspecified.
//
// Ownership: the caller owns the buffer until `memhc_host_register` takes it or
// `memhc_host_free` frees it; `memhc_runtime_destroy` frees the runtime's buffers too.
//
// # Safety
//
// `dims` must point to `rank` readable `size_t`; `out` to a writable `memhc_host`.
memhc_status memhc_host_alloc(struct memhc_runtime rt,
                              size_t spins,
                              const size_t *dims,
                              size_t rank,
                              struct memhc_host *out);

// Stores a pointer to the buffer's values in `*data` and their number of complex elements in
// `*len` (`spins * dims[0] * ... * dims[rank-1]`, in packed order: component after component,
// each row-major). The caller may read and write `(*data)[0..*len]` in place.
//
// Lifetime: the pointer is valid until the buffer is registered (`memhc_host_register`),
// freed (`memhc_host_free`) or its runtime destroyed (`memhc_runtime_destroy`), whichever
// comes first; memhc neither moves the memory nor touches it between calls. Do not use it
// during a call that registers or frees the buffer. On a GPU this call first waits for the
// copies that use the buffer (a result's read-back), so a taken result reads complete.
//
// # Safety
//
// `data` must point to a writable `memhc_complex *`, `len` to a writable `size_t`.
memhc_status memhc_host_data(struct memhc_runtime rt,
                             struct memhc_host buffer,
                             struct memhc_complex **data,
                             size_t *len);

// Registers a host buffer as an object of its shape, without copying it, and stores the
// object's handle in `*out`: the buffer becomes the object's host copy, uploaded in one DMA
// when a contraction first needs it. The buffer's handle, and every pointer
// `memhc_host_data` gave for it, are dead from then on (the runtime owns the memory; a later
// use of the handle is `MEMHC_STATUS_INVALID_HANDLE`). A buffer of another runtime is
// `MEMHC_STATUS_INVALID_HANDLE`, and stays its runtime's.
//
// # Safety
//
// `out` must point to a writable `memhc_object`.
memhc_status memhc_host_register(struct memhc_runtime rt,
                                 struct memhc_host buffer,
                                 struct memhc_object *out);

// Hands an object's values out as a host buffer, stored in `*out`, and releases the object
// (its handle is stale from then on): a result whose only copy is on the device is read back
// first. In a runtime whose `memhc_config.host_memory` is `"pinned"`, the buffer is the
// page-locked memory the read-back landed in, handed over without a copy; otherwise the
// values are in ordinary memory. Read them through `memhc_host_data`, then free the buffer
// with `memhc_host_free` (or register it again as an input). If the read fails, the object is
// left as it was and `*out` unchanged.
//
// # Safety
//
// `out` must point to a writable `memhc_host`.
memhc_status memhc_take_host(struct memhc_runtime rt,
                             struct memhc_object object,
                             struct memhc_host *out);

// Frees a host buffer the caller owns (never registered, or from `memhc_take_host`): its
// handle and the pointers `memhc_host_data` gave are dead from then on; a second free is
// `MEMHC_STATUS_INVALID_HANDLE`.
memhc_status memhc_host_free(struct memhc_runtime rt, struct memhc_host buffer);

// Registers a hadron node from host data and stores its handle in `*out`: `spins` spin
// components, each a dense tensor of dimensions `dims[0] x ... x dims[rank-1]` (a meson:
// `spins` 16, `dims` {N, N}; a baryon: {N, N, N}), its `len` elements in `data` in packed
// order: component after component, each row-major (C order); `len` must be exactly
// `spins * dims[0] * ... * dims[rank-1]` (else `MEMHC_STATUS_SIZE_MISMATCH`). `rank` is 1
// to 8 and no dimension is 0 (else `MEMHC_STATUS_INVALID_ARGUMENT`).
//
// Ownership: the data is copied before the call returns; the caller may free or reuse
// `data` and `dims` at once (memhc never borrows a caller's buffer beyond a call). The copy
// goes to the device when a contraction first needs it.
//
// # Safety
//
// `dims` must point to `rank` readable `size_t`; `data` to `len` readable `memhc_complex`
// (or be null with `len` 0); `out` to a writable `memhc_object`.
memhc_status memhc_register(struct memhc_runtime rt,
                            size_t spins,
                            const size_t *dims,
                            size_t rank,
                            const struct memhc_complex *data,
                            size_t len,
                            struct memhc_object *out);

// Stores the number of complex elements of an object in `*out`: the `len` that `memhc_read`
// needs (`spins * dims[0] * ... * dims[rank-1]`).
//
// # Safety
//
// `out` must point to a writable `size_t`.
memhc_status memhc_object_elements(struct memhc_runtime rt,
                                   struct memhc_object object,
                                   size_t *out);

// The shape of an object: its spins in `*spins`, its rank (dimensions per component) in
// `*rank`, and the dimensions in `dims[0..rank]`. `*rank` is written even when `dims_capacity`
// is smaller than the rank, which then returns `MEMHC_STATUS_BUFFER_TOO_SMALL` without
// writing `dims` (call again with a larger array; a rank above 8 is unusual).
//
// # Safety
//
// `spins` and `rank` must point to writable `size_t`; `dims` to `dims_capacity` writable
// `size_t` (or be null with `dims_capacity` 0).
memhc_status memhc_object_shape(struct memhc_runtime rt,
                                struct memhc_object object,
                                size_t *spins,
                                size_t *dims,
                                size_t dims_capacity,
                                size_t *rank);

// Copies an object's values into the caller's buffer `out` of `len` elements, which must be
// exactly the object's number of elements (`memhc_object_elements`; else
// `MEMHC_STATUS_SIZE_MISMATCH` and nothing is written), in packed order (component after
// component, each row-major). A result whose only copy is on the device is copied back
// first and stays resident; the call waits for the work that writes it. A produced object
// whose contraction failed has no value: `MEMHC_STATUS_UNINITIALIZED`.
//
// # Safety
//
// `out` must point to `len` writable `memhc_complex` that nothing else uses during the call.
memhc_status memhc_read(struct memhc_runtime rt,
                        struct memhc_object object,
                        struct memhc_complex *out,
                        size_t len);

// Releases an object: its handle becomes stale (a second release, or any later use, is
// refused with `MEMHC_STATUS_INVALID_HANDLE`) and its device memory returns to the runtime's
// free pool. Objects must be released by the caller (or all at once by
// `memhc_runtime_destroy`); results not released stay on the device and count against the
// budget, though they may be evicted (written back to host memory first).
memhc_status memhc_release(struct memhc_runtime rt, struct memhc_object object);

// The default configuration: the host backend, a 1 GiB budget (`budget_bytes` 0), LRU, the
// optimal mode, 4 streams, seed 0, pageable results; every string null (its default). Never
// fails.
struct memhc_config memhc_config_default(void);

// Creates a runtime as `*config` says (null `config`: `memhc_config_default()`) and stores
// its handle in `*out`. The strings of the configuration are read during the call only.
// On failure `*out` is left unchanged: `MEMHC_STATUS_UNKNOWN_NAME` for an unknown backend,
// policy, mode or host memory, `MEMHC_STATUS_UNAVAILABLE` when the backend cannot open here (no GPU,
// driver or library: the message says which), `MEMHC_STATUS_INVALID_ARGUMENT` for a
// configuration out of range.
//
// The runtime is owned by the caller until `memhc_runtime_destroy`; a program that exits
// without destroying it leaks its memory only (no files or devices stay locked).
//
// # Safety
//
// `config` must be null or point to a valid `memhc_config` whose non-null strings are
// NUL-terminated; `out` must point to a writable `memhc_runtime`.
memhc_status memhc_runtime_create(const struct memhc_config *config,
                                  struct memhc_runtime *out);

// Destroys a runtime: waits for its work, returns its device memory, and makes its handle and
// the handles of all its objects and plans stale (later use is refused with
// `MEMHC_STATUS_INVALID_HANDLE`, as is a second destroy). If another thread is inside a call
// on the same runtime, that call finishes normally and the memory is returned when it does.
memhc_status memhc_runtime_destroy(struct memhc_runtime rt);

// Stores a snapshot of the runtime's statistics in `*out`.
//
// # Safety
//
// `out` must point to a writable `memhc_stats`.
memhc_status memhc_get_stats(struct memhc_runtime rt, struct memhc_stats *out);

// Checks every invariant of the runtime's tables (element cache, free pool, budget, object
// states) and that its handles match its objects: `MEMHC_STATUS_OK`, or
// `MEMHC_STATUS_AUDIT_FAILED` with every broken invariant in the message (a bug in memhc).
memhc_status memhc_audit(struct memhc_runtime rt);

// Blocks until all work of the runtime on all its streams has completed. Reads
// (`memhc_read`, `memhc_trace`) already wait for what they need; this is for timing.
memhc_status memhc_synchronize(struct memhc_runtime rt);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* MEMHC_H */
