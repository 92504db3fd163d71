//! Issue 31: no input kills the caller. Each size that comes from the caller or a file is
//! refused with a typed status before memory is taken: the spin counts of a plan, the nodes of
//! a correlator file, a budget smaller than one step of a run, the largest spin index. Each
//! case was a SIGABRT ("memory allocation of ... bytes failed"), a wrap past a range check, or
//! `MEMHC_STATUS_INTERNAL` ("capacity overflow") before.
//!
//! Every `unsafe` block here calls an `extern "C"` function with arguments that satisfy its
//! documented contract (valid pointers to live locals).
#![allow(unsafe_code)]

use std::ffi::CString;
use std::path::PathBuf;
use std::ptr::null;

use memhc_capi::ffi::compute::*;
use memhc_capi::ffi::corr::*;
use memhc_capi::ffi::objects::*;
use memhc_capi::ffi::runtime::*;
use memhc_capi::{
    MemhcComplex as C, MemhcContraction, MemhcCorr, MemhcCorrResults, MemhcObject, MemhcPlan,
    MemhcRuntime, MemhcStatus as S, MemhcTerm,
};

mod common;
use common::{expect, last};

fn host(budget: u64) -> MemhcRuntime {
    let mut cfg = memhc_config_default();
    cfg.budget_bytes = budget;
    let mut rt = MemhcRuntime::default();
    // SAFETY: valid pointers to locals.
    let s = unsafe { memhc_runtime_create(&cfg, &mut rt) };
    assert_eq!(s, S::Ok, "{}", last());
    rt
}

fn plan(rt: MemhcRuntime, out_spins: usize, terms: &[MemhcTerm]) -> (S, MemhcPlan) {
    let mut p = MemhcPlan::default();
    // SAFETY: the terms are live for the call; `p` is a local.
    let s = unsafe { memhc_plan_create(rt, out_spins, terms.as_ptr(), terms.len(), &mut p) };
    (s, p)
}

fn term(out: usize, a: usize, b: usize) -> MemhcTerm {
    MemhcTerm { out, a, b }
}

#[test]
fn huge_output_spins_are_refused_not_aborted() {
    let rt = host(1 << 20);
    // An output index of 2^40 asks for 2^40 + 1 output spins: 40 TiB of tables on the host.
    let (s, _) = plan(rt, 0, &[term(1 << 40, 0, 0)]);
    expect(s, S::OutOfHostMemory, "host memory");
    let (s, _) = plan(rt, 1 << 40, &[term(0, 0, 0)]);
    expect(s, S::OutOfHostMemory, "1099511627776 output spins");
    // 2^62 spins overflow the byte count: a bad argument, not an internal error.
    let (s, _) = plan(rt, 0, &[term(1 << 62, 0, 0)]);
    expect(s, S::InvalidArgument, "too large");
    let (s, _) = plan(rt, 1 << 62, &[term(0, 0, 0)]);
    expect(s, S::InvalidArgument, "too large");
    let (s, _) = plan(rt, 0, &[term(usize::MAX, 0, 0)]);
    expect(s, S::InvalidArgument, "too large");
    // Nothing changed: the runtime still works, and holds no plan.
    let (s, p) = plan(rt, 0, &[term(0, 0, 0)]);
    assert_eq!(s, S::Ok, "{}", last());
    assert_eq!(memhc_plan_release(rt, p), S::Ok);
    assert_eq!(memhc_runtime_destroy(rt), S::Ok);
}

#[test]
fn thousands_of_streams_are_refused_not_spawned() {
    // A worker thread per stream on the host backend: 30000 aborted the process.
    for streams in [30000u32, u32::MAX] {
        let mut cfg = memhc_config_default();
        cfg.budget_bytes = 1 << 20;
        cfg.streams = streams;
        let mut rt = MemhcRuntime::default();
        // SAFETY: valid pointers to locals.
        let s = unsafe { memhc_runtime_create(&cfg, &mut rt) };
        expect(s, S::InvalidArgument, "at most 1024");
    }
}

#[test]
fn the_largest_spin_index_is_out_of_range_not_wrapped() {
    let rt = host(1 << 20);
    let data = [C { re: 1.0, im: 0.5 }; 4];
    let dims = [2usize, 2];
    let mut a = MemhcObject::default();
    // SAFETY: the slices are live for the call; `a` is a local.
    let s = unsafe {
        memhc_register(
            rt,
            1,
            dims.as_ptr(),
            dims.len(),
            data.as_ptr(),
            data.len(),
            &mut a,
        )
    };
    assert_eq!(s, S::Ok, "{}", last());
    for t in [term(0, usize::MAX, 0), term(0, 0, usize::MAX)] {
        let (s, p) = plan(rt, 1, &[t]);
        assert_eq!(s, S::Ok, "{}", last());
        let c = MemhcContraction {
            a,
            b: a,
            plan: p,
            ..MemhcContraction::default()
        };
        let mut out = MemhcObject::default();
        // SAFETY: valid pointers to locals.
        let s = unsafe { memhc_contract(rt, &c, 0, &mut out) };
        expect(s, S::InvalidArgument, "18446744073709551615");
        assert_eq!(memhc_plan_release(rt, p), S::Ok);
    }
    assert_eq!(memhc_runtime_destroy(rt), S::Ok);
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("memhc-capi-admission-{}", std::process::id()));
    assert!(std::fs::create_dir_all(&dir).is_ok());
    dir.join(name)
}

/// A file of one seeded node of 16 spins of `n x n`, traced alone (one loop of one node).
fn one_node_file(name: &str, n: u64) -> CString {
    let text = format!(
        r#"{{"format": "memhc-corr/1",
  "nodes": [{{"id": "a", "spins": 16, "dims": [{n}, {n}], "time": 0, "data": {{"seed": 1}}}}],
  "graphs": [{{"id": "g", "loops": [{{"nodes": ["a"]}}]}}],
  "correlators": [{{"name": "C", "times": [{{"source": 0, "sink": 0, "graphs": ["g"]}}]}}]}}"#
    );
    let path = scratch(name);
    assert!(std::fs::write(&path, text).is_ok());
    CString::new(path.display().to_string()).unwrap_or_default()
}

fn open(path: &CString) -> (S, MemhcCorr) {
    let mut h = MemhcCorr::default();
    // SAFETY: a NUL-terminated string, null options (the defaults), a local out-parameter.
    let s = unsafe { memhc_corr_open(path.as_ptr(), null(), &mut h) };
    (s, h)
}

#[test]
fn a_file_that_could_never_run_is_refused_when_opened() {
    // 16 x 2^20 x 2^20 complex doubles: 256 TiB of values.
    let (s, _) = open(&one_node_file("huge.corr.json", 1 << 20));
    expect(s, S::OutOfHostMemory, "host memory");
    // dims whose product overflows the address space.
    let (s, _) = open(&one_node_file("overflow.corr.json", 1 << 40));
    assert!(
        matches!(s, S::InvalidFile | S::InvalidArgument),
        "{s:?}: {}",
        last()
    );
}

#[test]
fn a_budget_smaller_than_one_step_does_not_fit_before_anything_is_made() {
    // 16 x 256 x 256 x 16 B = 16 MiB of one node; a 1 MiB budget can never hold it.
    let (s, h) = open(&one_node_file("big.corr.json", 256));
    assert_eq!(s, S::Ok, "{}", last());
    let mut cfg = memhc_config_default();
    cfg.budget_bytes = 1 << 20;
    let mut r = MemhcCorrResults::default();
    // SAFETY: valid pointers to locals.
    let s = unsafe { memhc_corr_run(h, &cfg, &mut r) };
    expect(s, S::DoesNotFit, "");
    assert_eq!(memhc_corr_release(h), S::Ok);
}
