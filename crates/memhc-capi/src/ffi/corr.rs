//! Correlator files: open (load and plan), plan report, run, reference, results.

use std::ffi::c_char;

use super::runtime::config_options;
use super::{check_ptr, get, guard, put, slice_mut, string};
use crate::api::corr;
use crate::status::{Failure, MemhcStatus};
use crate::types::{
    MemhcComplex, MemhcConfig, MemhcCorr, MemhcCorrOptions, MemhcCorrPlanReport, MemhcCorrResults,
    MemhcCorrTime,
};
use memhc_embed::Complex64;

/// The default planning options: sharing on, the planner's order, vectors of up to 16 (as
/// `memhc run`). Never fails.
#[unsafe(no_mangle)]
pub extern "C" fn memhc_corr_options_default() -> MemhcCorrOptions {
    MemhcCorrOptions {
        sharing: 1,
        file_order: 0,
        vector_size: 0,
    }
}

fn required<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, Failure> {
    string(ptr, what)?.ok_or_else(|| Failure::null(what))
}

/// Opens the correlator file at `path` (a `memhc-corr/1` JSON file, see
/// docs/correlator-format.md; node data paths relative to its directory): reads and checks
/// it, reads every node's data, plans it as `*options` says (null: `memhc_corr_options_default()`)
/// and stores the handle in `*out`. Nothing runs yet and no device memory is taken.
///
/// Errors: `MEMHC_STATUS_IO` when the file cannot be read; `MEMHC_STATUS_INVALID_FILE` when it
/// is not valid (one line naming the file and the place: `pion.json: graph g7, loop 0:
/// unknown node "pi_t9"`; also a node data file that is missing or of the wrong shape);
/// `MEMHC_STATUS_NULL_POINTER` for a null `path` or `out`; `MEMHC_STATUS_UNKNOWN_NAME` when
/// `path` is not UTF-8.
///
/// Ownership: the handle is the caller's until `memhc_corr_release`; `path` and `options`
/// are read during the call only.
///
/// # Safety
///
/// `path` must be a NUL-terminated string; `options` null or pointing to a readable
/// `memhc_corr_options`; `out` pointing to a writable `memhc_corr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_corr_open(
    path: *const c_char,
    options: *const MemhcCorrOptions,
    out: *mut MemhcCorr,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        let path = required(path, "path")?;
        let options = if options.is_null() {
            memhc_corr_options_default()
        } else {
            get(options, "options")?
        };
        put(out, corr::open(path, &options)?);
        Ok(())
    })
}

/// Stores the planner's report of an opened file in `*out`: contractions without and with
/// sharing, traces, flops, stages, the initial nodes' bytes, and the peak of live bytes (the
/// smallest budget under which a run evicts nothing).
///
/// # Safety
///
/// `out` must point to a writable `memhc_corr_plan_report`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_corr_plan(
    corr: MemhcCorr,
    out: *mut MemhcCorrPlanReport,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        put(out, corr::plan_report(corr)?);
        Ok(())
    })
}

/// Runs the whole file on a fresh runtime made as `*config` says (null:
/// `memhc_config_default()`: the host backend, lru, the optimal mode, 4 streams) and stores the
/// correlators' handle in `*out`. The runtime exists only during the call: it is created,
/// runs every stage, and is destroyed before the call returns.
///
/// Budget: `config->budget_bytes`, or when it is 0, on the host backend the plan's peak of
/// live bytes (`memhc_corr_plan_report.peak_bytes`, as `memhc run` does: nothing is evicted;
/// NOT the 1 GiB a host runtime gets from `memhc_runtime_create`), and on a GPU the device's
/// free memory.
///
/// Errors: those of `memhc_runtime_create` for the configuration (`MEMHC_STATUS_UNKNOWN_NAME`,
/// `MEMHC_STATUS_UNAVAILABLE`, ...), `MEMHC_STATUS_DOES_NOT_FIT` when a budget is too small for
/// one contraction's working set, `MEMHC_STATUS_DEVICE`.
///
/// Thread safety: several threads may run the same file at once (each run has its own
/// runtime).
///
/// # Safety
///
/// `config` must be null or point to a valid `memhc_config` whose non-null strings are
/// NUL-terminated; `out` must point to a writable `memhc_corr_results`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_corr_run(
    corr: MemhcCorr,
    config: *const MemhcConfig,
    out: *mut MemhcCorrResults,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        put(out, corr::run(corr, &config_options(config)?)?);
        Ok(())
    })
}

/// Computes the correlators with memhc's independent dense reference (every graph on its own,
/// by plain products and traces on the host: no planner, no sharing, no runtime) and stores
/// their handle in `*out`. Slow for large files; meant for checking.
///
/// # Safety
///
/// `out` must point to a writable `memhc_corr_results`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_corr_reference(
    corr: MemhcCorr,
    out: *mut MemhcCorrResults,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        put(out, corr::reference(corr)?);
        Ok(())
    })
}

/// Checks `results` against the dense reference of the file (`memhc_corr_reference`) and
/// stores the largest relative error over all values in `*max_relative_error` (which may be
/// null). Above 1e-12 the call returns `MEMHC_STATUS_VERIFY_FAILED` (the message gives the
/// error; `*max_relative_error` is not written).
///
/// # Safety
///
/// `max_relative_error` must be null or point to a writable `double`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_corr_verify(
    corr: MemhcCorr,
    results: MemhcCorrResults,
    max_relative_error: *mut f64,
) -> MemhcStatus {
    guard(|| {
        if !max_relative_error.is_null() {
            check_ptr(max_relative_error.cast_const(), "max_relative_error")?;
        }
        let err = corr::verify(corr, results)?;
        put(max_relative_error, err);
        Ok(())
    })
}

/// Releases a correlator file: its handle becomes stale (a second release, or any later use,
/// is `MEMHC_STATUS_INVALID_HANDLE`). Results made from it stay valid. A run in progress on
/// another thread finishes normally.
#[unsafe(no_mangle)]
pub extern "C" fn memhc_corr_release(corr: MemhcCorr) -> MemhcStatus {
    guard(|| corr::release(corr))
}

/// Stores the number of correlators in `*out` (indices `0 .. *out - 1`, in the file's order).
///
/// # Safety
///
/// `out` must point to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_corr_results_count(
    results: MemhcCorrResults,
    out: *mut usize,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        put(out, corr::count(results)?);
        Ok(())
    })
}

/// Copies the name of correlator `index`, NUL-terminated, into the caller's buffer `buf` of
/// `capacity` bytes, and stores the bytes it needs (name plus NUL) in `*needed` unless
/// `needed` is null. `*needed` is written even when the buffer is too small: then nothing is
/// copied and the call returns `MEMHC_STATUS_BUFFER_TOO_SMALL` (pass `buf` null and
/// `capacity` 0 to ask the size). Names are ASCII letters, digits, `_`, `-` and `.`.
/// An index not below the count is `MEMHC_STATUS_INVALID_ARGUMENT`.
///
/// # Safety
///
/// `buf` must point to `capacity` writable bytes (or be null with `capacity` 0); `needed`
/// must be null or point to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_corr_results_name(
    results: MemhcCorrResults,
    index: usize,
    buf: *mut c_char,
    capacity: usize,
    needed: *mut usize,
) -> MemhcStatus {
    guard(|| {
        if !needed.is_null() {
            check_ptr(needed.cast_const(), "needed")?;
        }
        let name = corr::name(results, index)?;
        let size = name.len() + 1;
        put(needed, size);
        if capacity < size {
            return Err(Failure::new(
                MemhcStatus::BufferTooSmall,
                format!(
                    "the name of correlator {index} needs {size} bytes, the buffer has {capacity}"
                ),
            ));
        }
        let out = slice_mut(buf.cast::<u8>(), capacity, "buf")?;
        if let Some((text, rest)) = out.split_at_mut_checked(name.len()) {
            text.copy_from_slice(name.as_bytes());
            if let Some(nul) = rest.first_mut() {
                *nul = 0;
            }
        }
        Ok(())
    })
}

/// Stores the number of time pairs of correlator `index` in `*out`: the `n` that
/// `memhc_corr_results_values` needs.
///
/// # Safety
///
/// `out` must point to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_corr_results_len(
    results: MemhcCorrResults,
    index: usize,
    out: *mut usize,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        put(out, corr::len(results, index)?);
        Ok(())
    })
}

/// Copies correlator `index` into the caller's buffers: its time pairs into `times[0..n]` and
/// its values into `values[0..n]`, in the file's order (`values[k]` is the value at
/// `times[k]`). `n` must be exactly its number of time pairs (`memhc_corr_results_len`; else
/// `MEMHC_STATUS_SIZE_MISMATCH` and nothing is written). Either buffer may be null to skip it.
///
/// # Safety
///
/// `times` must be null or point to `n` writable `memhc_corr_time`; `values` null or
/// pointing to `n` writable `memhc_complex`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_corr_results_values(
    results: MemhcCorrResults,
    index: usize,
    times: *mut MemhcCorrTime,
    values: *mut MemhcComplex,
    n: usize,
) -> MemhcStatus {
    guard(|| {
        let times = match times.is_null() {
            true => None,
            false => Some(slice_mut(times, n, "times")?),
        };
        let values = match values.is_null() {
            true => None,
            false => Some(slice_mut(values.cast::<Complex64>(), n, "values")?),
        };
        corr::values(results, index, times, values, n)
    })
}

/// Stores in `*index` the index of the correlator called `name`; `MEMHC_STATUS_NOT_FOUND`
/// when there is none (the message lists the names there are).
///
/// # Safety
///
/// `name` must be a NUL-terminated string; `index` must point to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_corr_results_find(
    results: MemhcCorrResults,
    name: *const c_char,
    index: *mut usize,
) -> MemhcStatus {
    guard(|| {
        check_ptr(index.cast_const(), "index")?;
        let name = required(name, "name")?;
        put(index, corr::find(results, name)?);
        Ok(())
    })
}

/// Stores in `*max_relative_error` the largest `|x - y| / |y|` (`|x - y|` where `y` is 0)
/// over the values `x` of `results` against the values `y` of `other`: infinity when the two
/// do not have the same correlators and time pairs. For example a run against
/// `memhc_corr_reference`, or a run with sharing against one without.
///
/// # Safety
///
/// `max_relative_error` must point to a writable `double`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_corr_results_compare(
    results: MemhcCorrResults,
    other: MemhcCorrResults,
    max_relative_error: *mut f64,
) -> MemhcStatus {
    guard(|| {
        check_ptr(max_relative_error.cast_const(), "max_relative_error")?;
        put(max_relative_error, corr::compare(results, other)?);
        Ok(())
    })
}

/// Writes the correlators to the file `path` in the form its extension names
/// (docs/correlator-format.md, section Results): `.json` (`memhc-corr-values/1`), `.csv`
/// (`correlator,source,sink,re,im`), or `.h5` in a library built with the feature `hdf5`
/// (otherwise `MEMHC_STATUS_UNAVAILABLE`). Another extension is
/// `MEMHC_STATUS_INVALID_ARGUMENT`; a file that cannot be written `MEMHC_STATUS_IO`. An
/// existing file is replaced.
///
/// # Safety
///
/// `path` must be a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_corr_results_write(
    results: MemhcCorrResults,
    path: *const c_char,
) -> MemhcStatus {
    guard(|| {
        let path = required(path, "path")?;
        corr::write(results, path)
    })
}

/// Releases results: the handle becomes stale (a second release, or any later use, is
/// `MEMHC_STATUS_INVALID_HANDLE`) and the values are freed. Buffers the caller filled from
/// them stay the caller's.
#[unsafe(no_mangle)]
pub extern "C" fn memhc_corr_results_release(results: MemhcCorrResults) -> MemhcStatus {
    guard(|| corr::results_release(results))
}
