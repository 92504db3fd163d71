//! Page-locked host buffers through the C ABI, as C calls it: a node filled in place and
//! registered without a copy, a result taken without a copy, checked against plain loops; and
//! every misuse (a registered or freed buffer, another runtime's, a bad shape, a null pointer)
//! answered with a status and a message.
//!
//! Every `unsafe` block here calls an `extern "C"` function with arguments that satisfy its
//! documented contract, or reads memory `memhc_host_data` lent and that is still alive.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::ptr::null_mut;

use memhc_capi::ffi::compute::*;
use memhc_capi::ffi::host::*;
use memhc_capi::ffi::objects::*;
use memhc_capi::ffi::runtime::*;
use memhc_capi::{
    MemhcComplex as C, MemhcContraction, MemhcHost, MemhcObject, MemhcPlan, MemhcRuntime,
    MemhcStatus as S,
};

mod common;
use common::{expect, last};

fn runtime(host_memory: Option<&str>) -> Result<MemhcRuntime, S> {
    let name = host_memory.map(|h| CString::new(h).unwrap_or_default());
    let mut cfg = memhc_config_default();
    cfg.budget_bytes = 64 << 20;
    cfg.host_memory = name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr());
    let mut rt = MemhcRuntime::default();
    // SAFETY: valid pointers to locals; the name lives until the call returns.
    match unsafe { memhc_runtime_create(&cfg, &mut rt) } {
        S::Ok => Ok(rt),
        s => Err(s),
    }
}

fn alloc(rt: MemhcRuntime, spins: usize, dims: &[usize]) -> (S, MemhcHost) {
    let mut h = MemhcHost::default();
    // SAFETY: `dims` is live for the call; `h` is a local.
    let s = unsafe { memhc_host_alloc(rt, spins, dims.as_ptr(), dims.len(), &mut h) };
    (s, h)
}

/// The buffer's memory, as `memhc_host_data` lends it.
fn data<'a>(rt: MemhcRuntime, h: MemhcHost) -> Result<&'a mut [C], S> {
    let (mut p, mut n) = (null_mut(), 0);
    // SAFETY: out-pointers to locals.
    match unsafe { memhc_host_data(rt, h, &mut p, &mut n) } {
        // SAFETY: memhc lends `n` elements at `p` until the buffer is registered or freed,
        // which each caller does only after its last use of the slice.
        S::Ok => Ok(unsafe { std::slice::from_raw_parts_mut(p, n) }),
        s => Err(s),
    }
}

fn value(i: usize, seed: f64) -> C {
    let x = i as f64 + seed;
    C {
        re: (x * 0.29).sin(),
        im: (x * 0.13).cos(),
    }
}

/// The meson 4x4 contraction of `x` and `y` (16 components of `n x n`) by plain loops:
/// `out(al, ga) = sum_be A(al, be) B(be, ga)`.
fn meson(x: &[C], y: &[C], n: usize) -> Vec<C> {
    let e = n * n;
    let mut want = vec![C::default(); 16 * e];
    for al in 0..4 {
        for ga in 0..4 {
            for be in 0..4 {
                let (o, pa, pb) = ((4 * al + ga) * e, (4 * al + be) * e, (4 * be + ga) * e);
                for i in 0..n {
                    for j in 0..n {
                        for k in 0..n {
                            let (a, b) = (x[pa + i * n + k], y[pb + k * n + j]);
                            want[o + i * n + j].re += a.re * b.re - a.im * b.im;
                            want[o + i * n + j].im += a.re * b.im + a.im * b.re;
                        }
                    }
                }
            }
        }
    }
    want
}

fn relative_error(got: &[C], want: &[C]) -> f64 {
    assert_eq!(got.len(), want.len());
    let err: f64 = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g.re - w.re).powi(2) + (g.im - w.im).powi(2))
        .sum();
    let norm: f64 = want.iter().map(|w| w.re * w.re + w.im * w.im).sum();
    (err / norm).sqrt()
}

/// Fills a new buffer with `values` in place and registers it.
fn register_filled(rt: MemhcRuntime, n: usize, values: &[C]) -> MemhcObject {
    let (s, h) = alloc(rt, 16, &[n, n]);
    assert_eq!(s, S::Ok, "{}", last());
    let memory = data(rt, h).unwrap_or_default();
    assert_eq!(memory.len(), values.len());
    memory.copy_from_slice(values);
    let mut o = MemhcObject::default();
    // SAFETY: out-pointer to a local.
    assert_eq!(
        unsafe { memhc_host_register(rt, h, &mut o) },
        S::Ok,
        "{}",
        last()
    );
    // The handle is dead: its memory is the runtime's now.
    expect(
        data(rt, h).err().unwrap_or(S::Ok),
        S::InvalidHandle,
        "released already",
    );
    o
}

fn contract(rt: MemhcRuntime, a: MemhcObject, b: MemhcObject) -> MemhcObject {
    let mut plan = MemhcPlan::default();
    // SAFETY: out-pointer to a local.
    assert_eq!(unsafe { memhc_plan_meson4x4(rt, &mut plan) }, S::Ok);
    let c = MemhcContraction {
        a,
        b,
        plan,
        a_split: 0,
        b_split: 0,
    };
    let mut out = MemhcObject::default();
    // SAFETY: pointers to locals.
    assert_eq!(
        unsafe { memhc_contract(rt, &c, 0, &mut out) },
        S::Ok,
        "{}",
        last()
    );
    assert_eq!(memhc_plan_release(rt, plan), S::Ok);
    out
}

fn take(rt: MemhcRuntime, o: MemhcObject) -> (S, MemhcHost) {
    let mut h = MemhcHost::default();
    // SAFETY: out-pointer to a local.
    let s = unsafe { memhc_take_host(rt, o, &mut h) };
    (s, h)
}

#[test]
fn filled_in_place_and_taken_without_a_copy_match_plain_loops() {
    let n = 5;
    let x: Vec<C> = (0..16 * n * n).map(|i| value(i, 0.25)).collect();
    let y: Vec<C> = (0..16 * n * n).map(|i| value(i, 3.5)).collect();
    let want = meson(&x, &y, n);
    for host_memory in [None, Some("pageable"), Some("pinned")] {
        let rt = runtime(host_memory).unwrap_or_default();
        let (a, b) = (register_filled(rt, n, &x), register_filled(rt, n, &y));
        let out = contract(rt, a, b);
        let (s, r) = take(rt, out);
        assert_eq!(s, S::Ok, "{}", last());
        // The object is released: its handle is stale.
        let mut elems = 0;
        // SAFETY: out-pointer to a local.
        let s = unsafe { memhc_object_elements(rt, out, &mut elems) };
        expect(s, S::InvalidHandle, "released already");
        let got = data(rt, r).unwrap_or_default();
        assert!(relative_error(got, &want) < 1e-12, "{host_memory:?}");
        // A taken result registers again as an input: out * b, against the loops.
        let mut again = MemhcObject::default();
        // SAFETY: out-pointer to a local.
        assert_eq!(unsafe { memhc_host_register(rt, r, &mut again) }, S::Ok);
        let twice = contract(rt, again, b);
        let (s, r2) = take(rt, twice);
        assert_eq!(s, S::Ok, "{}", last());
        let got2 = data(rt, r2).unwrap_or_default().to_vec();
        assert!(relative_error(&got2, &meson(&want, &y, n)) < 1e-12);
        assert_eq!(memhc_host_free(rt, r2), S::Ok);
        expect(
            memhc_host_free(rt, r2),
            S::InvalidHandle,
            "released already",
        );
        // The inputs read back as the caller wrote them.
        let mut back = vec![C::default(); x.len()];
        // SAFETY: `back` has `x.len()` elements.
        let s = unsafe { memhc_read(rt, a, back.as_mut_ptr(), back.len()) };
        assert_eq!(s, S::Ok);
        assert_eq!(back, x);
        assert_eq!(memhc_audit(rt), S::Ok, "{}", last());
        assert_eq!(memhc_runtime_destroy(rt), S::Ok);
    }
}

#[test]
fn misuse_is_a_status_and_a_message() {
    let rt = runtime(Some("pinned")).unwrap_or_default();
    let other = runtime(None).unwrap_or_default();
    // Shapes are checked before memory is taken.
    expect(alloc(rt, 0, &[2, 2]).0, S::InvalidArgument, "spin");
    expect(alloc(rt, 16, &[2, 0]).0, S::InvalidArgument, "");
    expect(alloc(rt, 16, &[]).0, S::InvalidArgument, "");
    let huge = alloc(rt, 16, &[1 << 21, 1 << 21, 1 << 21]).0;
    assert!(
        matches!(huge, S::InvalidArgument | S::OutOfHostMemory),
        "{huge:?}: {}",
        last()
    );
    let mut h = MemhcHost::default();
    // SAFETY: a null `dims` with rank 2 is the misuse under test; `h` is a local.
    expect(
        unsafe { memhc_host_alloc(rt, 16, std::ptr::null(), 2, &mut h) },
        S::NullPointer,
        "dims",
    );
    // SAFETY: a null out-pointer is the misuse under test.
    let s = unsafe { memhc_host_alloc(rt, 16, [2usize, 2].as_ptr(), 2, null_mut()) };
    expect(s, S::NullPointer, "out");
    let (_, h) = alloc(rt, 1, &[3]);
    let mut n = 0;
    // SAFETY: a null `data` is the misuse under test.
    expect(
        unsafe { memhc_host_data(rt, h, null_mut(), &mut n) },
        S::NullPointer,
        "data",
    );
    // Another runtime's buffer is refused, and stays its runtime's.
    let mut o = MemhcObject::default();
    // SAFETY: out-pointer to a local.
    let s = unsafe { memhc_host_register(other, h, &mut o) };
    expect(s, S::InvalidHandle, "another runtime");
    assert!(data(rt, h).is_ok());
    // An object handle is not a host handle, nor the reverse.
    let (_, h2) = alloc(rt, 1, &[3]);
    // SAFETY: out-pointer to a local.
    assert_eq!(unsafe { memhc_host_register(rt, h2, &mut o) }, S::Ok);
    expect(
        memhc_host_free(rt, MemhcHost { handle: o.handle }),
        S::InvalidHandle,
        "object",
    );
    expect(
        memhc_release(rt, MemhcObject { handle: h.handle }),
        S::InvalidHandle,
        "host buffer",
    );
    expect(take(rt, MemhcObject::default()).0, S::InvalidHandle, "");
    assert_eq!(memhc_host_free(rt, h), S::Ok);
    assert_eq!(memhc_audit(rt), S::Ok, "{}", last());
    // Destroying the runtime frees its buffers: their handles are refused afterwards.
    let (_, left) = alloc(rt, 1, &[3]);
    assert_eq!(memhc_runtime_destroy(rt), S::Ok);
    expect(memhc_host_free(rt, left), S::InvalidHandle, "");
    assert_eq!(memhc_runtime_destroy(other), S::Ok);
    // Names: an unknown host memory, and pinned with the unified mode.
    expect(
        runtime(Some("locked")).err().unwrap_or(S::Ok),
        S::UnknownName,
        "unknown host memory",
    );
    let unified = CString::new("unified").unwrap_or_default();
    let pinned = CString::new("pinned").unwrap_or_default();
    let mut cfg = memhc_config_default();
    cfg.mode = unified.as_ptr();
    cfg.host_memory = pinned.as_ptr();
    let mut rt = MemhcRuntime::default();
    // SAFETY: valid pointers to locals.
    let s = unsafe { memhc_runtime_create(&cfg, &mut rt) };
    expect(s, S::InvalidArgument, "unified");
}
