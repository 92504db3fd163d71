//! Plans, contractions, vectors, traces.

use super::{check_ptr, get, guard, put, slice, slice_mut};
use crate::api;
use crate::status::MemhcStatus;
use crate::types::{
    MemhcComplex, MemhcContraction, MemhcObject, MemhcPair, MemhcPlan, MemhcRuntime, MemhcTerm,
};

/// Creates a plan from a spin mapping given as `n_terms` terms (`out[t.out] += A[t.a] * B[t.b]`,
/// accumulated in the order given) producing `out_spins` output spins (0: the largest `out`
/// plus one; spins no term writes are zero), and stores its handle in `*out`. The terms are
/// copied. Refused with `MEMHC_STATUS_INVALID_ARGUMENT`: no terms, an output index out of
/// range, a term listed twice. Input spin indices are checked against the nodes by each
/// contraction.
///
/// # Safety
///
/// `terms` must point to `n_terms` readable `memhc_term`; `out` to a writable `memhc_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_plan_create(
    rt: MemhcRuntime,
    out_spins: usize,
    terms: *const MemhcTerm,
    n_terms: usize,
    out: *mut MemhcPlan,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        let terms = slice(terms, n_terms, "terms")?;
        put(out, api::plan(rt, out_spins, terms)?);
        Ok(())
    })
}

/// Creates the plan of the 4x4 spin-block product of two full-spin mesons (16 spins, spin
/// `s = 4 alpha + beta`): `out(alpha, gamma) += A(alpha, beta) * B(beta, gamma)`, 16 outputs
/// of 4 terms each, and stores its handle in `*out`.
///
/// # Safety
///
/// `out` must point to a writable `memhc_plan`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_plan_meson4x4(rt: MemhcRuntime, out: *mut MemhcPlan) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        put(out, api::plan_meson4x4(rt)?);
        Ok(())
    })
}

/// Releases a plan (its handle becomes stale). Contractions that used it are unaffected.
#[unsafe(no_mangle)]
pub extern "C" fn memhc_plan_release(rt: MemhcRuntime, plan: MemhcPlan) -> MemhcStatus {
    guard(|| api::plan_release(rt, plan))
}

/// Runs one contraction on stream `stream` (below the runtime's number of streams) into a new
/// object, whose handle goes to `*out`. The result stays on the device (no copy to the host)
/// until read; the call returns once the work is queued. The inputs stay valid and unchanged;
/// an input may be given as both A and B. Each output component is `m x n` with A's
/// components `m x k` and B's `k x n` in their views (else `MEMHC_STATUS_INVALID_ARGUMENT`).
/// The new object is owned by the caller: release it with `memhc_release`.
///
/// # Safety
///
/// `contraction` must point to a readable `memhc_contraction`; `out` to a writable
/// `memhc_object`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_contract(
    rt: MemhcRuntime,
    contraction: *const MemhcContraction,
    stream: usize,
    out: *mut MemhcObject,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        let c = get(contraction, "contraction")?;
        put(out, api::contract(rt, &c, stream)?);
        Ok(())
    })
}

/// Runs a vector of `n` independent contractions, contraction `i` on stream `i mod streams` so
/// that they run concurrently, after announcing their inputs to the eviction policy (`pp-lru`
/// protects the resident ones). The `n` new objects go to `outs[0..n]` in order; `outs_len`
/// must be `n` (else `MEMHC_STATUS_SIZE_MISMATCH`). On failure no handle is written; objects of
/// the contractions that completed before the failure stay in the runtime until it is
/// destroyed.
///
/// # Safety
///
/// `contractions` must point to `n` readable `memhc_contraction`; `outs` to `outs_len`
/// writable `memhc_object`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_run_vector(
    rt: MemhcRuntime,
    contractions: *const MemhcContraction,
    n: usize,
    outs: *mut MemhcObject,
    outs_len: usize,
) -> MemhcStatus {
    guard(|| {
        let cs = slice(contractions, n, "contractions")?;
        let outs = slice_mut(outs, outs_len, "outs")?;
        api::run_vector(rt, cs, outs)
    })
}

/// Computes `sum over (a, b) in pairs of Tr(A[a] * B[b])` (a trace over spin and distillation
/// indices) on the device on stream `stream`, with A's components `m x k` and B's `k x m`, and
/// stores the complex result in `*out`. `pairs` holds `n_pairs` pairs, none twice. The call
/// waits for the result; the objects stay on the device.
///
/// # Safety
///
/// `pairs` must point to `n_pairs` readable `memhc_pair`; `out` to a writable
/// `memhc_complex`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_trace(
    rt: MemhcRuntime,
    a: MemhcObject,
    b: MemhcObject,
    pairs: *const MemhcPair,
    n_pairs: usize,
    stream: usize,
    out: *mut MemhcComplex,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        let pairs = slice(pairs, n_pairs, "pairs")?;
        let t = api::trace(rt, a, b, Some(pairs), stream)?;
        put(out, MemhcComplex { re: t.re, im: t.im });
        Ok(())
    })
}

/// The full spin trace of two mesons, `memhc_trace` with the 16 pairs
/// `(4 alpha + beta, 4 beta + alpha)`: `Tr(A * B)` over spin and distillation indices.
///
/// # Safety
///
/// `out` must point to a writable `memhc_complex`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_trace_meson4x4(
    rt: MemhcRuntime,
    a: MemhcObject,
    b: MemhcObject,
    stream: usize,
    out: *mut MemhcComplex,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        let t = api::trace(rt, a, b, None, stream)?;
        put(out, MemhcComplex { re: t.re, im: t.im });
        Ok(())
    })
}
