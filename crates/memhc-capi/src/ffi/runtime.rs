//! Runtimes: configuration, creation, destruction, statistics, audit.

use super::{check_ptr, get, guard, put, string};
use memhc_embed::Options;

use crate::api;
use crate::status::{MemhcStatus, Outcome};
use crate::types::{MemhcConfig, MemhcRuntime, MemhcStats};

/// The default configuration: the host backend, a 1 GiB budget (`budget_bytes` 0), LRU, the
/// optimal mode, 4 streams, seed 0, pageable results; every string null (its default). Never
/// fails.
#[unsafe(no_mangle)]
pub extern "C" fn memhc_config_default() -> MemhcConfig {
    MemhcConfig {
        backend: std::ptr::null(),
        budget_bytes: 0,
        policy: std::ptr::null(),
        mode: std::ptr::null(),
        streams: 0,
        seed: 0,
        host_memory: std::ptr::null(),
        prefetch: 0,
    }
}

/// Creates a runtime as `*config` says (null `config`: `memhc_config_default()`) and stores
/// its handle in `*out`. The strings of the configuration are read during the call only.
/// On failure `*out` is left unchanged: `MEMHC_STATUS_UNKNOWN_NAME` for an unknown backend,
/// policy, mode or host memory, `MEMHC_STATUS_UNAVAILABLE` when the backend cannot open here (no GPU,
/// driver or library: the message says which), `MEMHC_STATUS_INVALID_ARGUMENT` for a
/// configuration out of range.
///
/// The runtime is owned by the caller until `memhc_runtime_destroy`; a program that exits
/// without destroying it leaks its memory only (no files or devices stay locked).
///
/// # Safety
///
/// `config` must be null or point to a valid `memhc_config` whose non-null strings are
/// NUL-terminated; `out` must point to a writable `memhc_runtime`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_runtime_create(
    config: *const MemhcConfig,
    out: *mut MemhcRuntime,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        let rt = api::create(&config_options(config)?)?;
        put(out, rt);
        Ok(())
    })
}

/// Destroys a runtime: waits for its work, returns its device memory, and makes its handle and
/// the handles of all its objects and plans stale (later use is refused with
/// `MEMHC_STATUS_INVALID_HANDLE`, as is a second destroy). If another thread is inside a call
/// on the same runtime, that call finishes normally and the memory is returned when it does.
#[unsafe(no_mangle)]
pub extern "C" fn memhc_runtime_destroy(rt: MemhcRuntime) -> MemhcStatus {
    guard(|| api::destroy(rt))
}

/// Stores a snapshot of the runtime's statistics in `*out`.
///
/// # Safety
///
/// `out` must point to a writable `memhc_stats`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_get_stats(rt: MemhcRuntime, out: *mut MemhcStats) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        put(out, api::stats(rt)?);
        Ok(())
    })
}

/// Checks every invariant of the runtime's tables (element cache, free pool, budget, object
/// states) and that its handles match its objects: `MEMHC_STATUS_OK`, or
/// `MEMHC_STATUS_AUDIT_FAILED` with every broken invariant in the message (a bug in memhc).
#[unsafe(no_mangle)]
pub extern "C" fn memhc_audit(rt: MemhcRuntime) -> MemhcStatus {
    guard(|| api::audit(rt))
}

/// Blocks until all work of the runtime on all its streams has completed. Reads
/// (`memhc_read`, `memhc_trace`) already wait for what they need; this is for timing.
#[unsafe(no_mangle)]
pub extern "C" fn memhc_synchronize(rt: MemhcRuntime) -> MemhcStatus {
    guard(|| api::synchronize(rt))
}

/// The options a `memhc_config` describes (null: [`memhc_config_default`]); the strings it
/// points to are read during the call only.
pub(super) fn config_options(config: *const MemhcConfig) -> Outcome<Options> {
    let c = if config.is_null() {
        memhc_config_default()
    } else {
        get(config, "config")?
    };
    api::options(
        string(c.backend, "config.backend")?,
        string(c.policy, "config.policy")?,
        string(c.mode, "config.mode")?,
        c.budget_bytes,
        c.streams,
        c.seed,
    )?
    .with_host_memory(string(c.host_memory, "config.host_memory")?)
    .and_then(|o| o.with_prefetch((c.prefetch > 0).then_some(c.prefetch as usize)))
    .map_err(Into::into)
}
