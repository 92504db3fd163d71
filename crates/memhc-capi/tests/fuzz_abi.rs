//! Fuzzing the C ABI (issue 31): seeded sequences of calls with arbitrary arguments and
//! handles (live, released, forged, of another runtime), arbitrary sizes (spin counts, dims,
//! output spins, spin indices, streams, budgets: the "interesting" values 0, 1, 2^20, 2^40,
//! 2^62, 2^64 - 1 among small ones) and buffers of arbitrary lengths. Whatever the call, it
//! must return a status with a one-line message, never `MEMHC_STATUS_INTERNAL` (a panic
//! caught at the boundary), never abort the process.
//!
//! The driver is deterministic (a splitmix64 generator per case, cases numbered from 0) and
//! bounded so that CI spends seconds on it; `MEMHC_FUZZ_CASES=N` or `MEMHC_FUZZ_SECONDS=S` runs more (`memhc_testkit::fuzz`) (how the record in
//! `docs/results/2026-11-27-fuzz.md` was made). The regression corpus of this target is the
//! list of call sequences in `admission.rs`, each one an input the fuzzer or the issue found.
//!
//! Every `unsafe` block calls an `extern "C"` function with pointers to live local buffers of
//! at least the length passed (the contract the header states); only the values vary.
#![allow(unsafe_code)]

use memhc_testkit::fuzz::{self, Rng};
use std::ffi::CStr;

use memhc_capi::ffi::compute::*;
use memhc_capi::ffi::errors::*;
use memhc_capi::ffi::objects::*;
use memhc_capi::ffi::runtime::*;
use memhc_capi::{
    MemhcComplex as C, MemhcContraction, MemhcObject, MemhcPair, MemhcPlan, MemhcRuntime,
    MemhcStats, MemhcStatus as S, MemhcTerm,
};

/// The sizes the calls take.
trait Sizes {
    /// A size: mostly small, sometimes one of the values that break size arithmetic.
    fn size(&mut self) -> usize;
}

impl Sizes for Rng {
    fn size(&mut self) -> usize {
        const EDGES: [u64; 9] = [
            0,
            1,
            2,
            16,
            1 << 20,
            1 << 40,
            1 << 62,
            u64::MAX / 16 + 1,
            u64::MAX,
        ];
        if self.below_u64(4) == 0 {
            EDGES[self.below(EDGES.len())] as usize
        } else {
            self.below_u64(5) as usize
        }
    }
}

/// The last error, checked to be one line.
fn message() -> String {
    // SAFETY: memhc_last_error never returns null; the string lives until the next call.
    let m = unsafe { CStr::from_ptr(memhc_last_error()) }
        .to_string_lossy()
        .into_owned();
    assert!(!m.contains('\n'), "a message of several lines: {m}");
    m
}

/// A status a call may return: anything but an internal error, with a message when it failed.
#[track_caller]
fn check(s: S, what: &str) {
    let m = message();
    assert_ne!(s, S::Internal, "{what}: {m}");
    if s != S::Ok {
        assert!(!m.is_empty(), "{what}: {s:?} without a message");
    }
}

/// What a sequence has made so far (live or not: stale handles are inputs too).
#[derive(Default)]
struct Handles {
    runtimes: Vec<MemhcRuntime>,
    objects: Vec<MemhcObject>,
    plans: Vec<MemhcPlan>,
}

impl Handles {
    fn runtime(&self, r: &mut Rng) -> MemhcRuntime {
        match r.below_u64(8) {
            0 => MemhcRuntime {
                handle: r.next_u64(),
            },
            1 => MemhcRuntime::default(),
            _ => r.pick(&self.runtimes).unwrap_or_default(),
        }
    }

    fn object(&self, r: &mut Rng) -> MemhcObject {
        match r.below_u64(8) {
            0 => MemhcObject {
                handle: r.next_u64(),
            },
            _ => r.pick(&self.objects).unwrap_or_default(),
        }
    }

    fn plan(&self, r: &mut Rng) -> MemhcPlan {
        match r.below_u64(8) {
            0 => MemhcPlan {
                handle: r.next_u64(),
            },
            _ => r.pick(&self.plans).unwrap_or_default(),
        }
    }
}

/// One call, chosen and filled in by `r`.
fn step(r: &mut Rng, h: &mut Handles) {
    let rt = h.runtime(r);
    match r.below_u64(12) {
        0 => {
            let mut cfg = memhc_config_default();
            cfg.budget_bytes = match r.below_u64(3) {
                0 => r.size() as u64,
                _ => 1 << (10 + r.below_u64(14)),
            };
            cfg.streams = match r.below_u64(4) {
                0 => r.next_u64() as u32,
                _ => r.below_u64(6) as u32,
            };
            let mut out = MemhcRuntime::default();
            // SAFETY: pointers to locals.
            let s = unsafe { memhc_runtime_create(&cfg, &mut out) };
            check(s, "runtime_create");
            if s == S::Ok {
                h.runtimes.push(out);
            }
        }
        1 => {
            let spins = r.size();
            let rank = r.below_u64(4) as usize;
            let dims: Vec<usize> = (0..rank).map(|_| r.size()).collect();
            // A real buffer; `len` never exceeds it (the caller's contract), but need not match.
            let data = vec![C { re: 0.5, im: -0.25 }; r.below_u64(300) as usize];
            let len = r.below_u64(data.len() as u64 + 1) as usize;
            let exact = dims
                .iter()
                .try_fold(spins, |n, &d| n.checked_mul(d))
                .filter(|&n| n <= data.len());
            let len = match (r.below_u64(2), exact) {
                (0, Some(n)) => n,
                _ => len,
            };
            let mut out = MemhcObject::default();
            // SAFETY: `dims` and `data` are live with at least `rank` and `len` elements.
            let s = unsafe {
                memhc_register(
                    rt,
                    spins,
                    dims.as_ptr(),
                    dims.len(),
                    data.as_ptr(),
                    len,
                    &mut out,
                )
            };
            check(s, "register");
            if s == S::Ok {
                h.objects.push(out);
            }
        }
        2 | 3 => {
            let terms: Vec<MemhcTerm> = (0..1 + r.below_u64(5))
                .map(|_| MemhcTerm {
                    out: r.size(),
                    a: r.size(),
                    b: r.size(),
                })
                .collect();
            let mut out = MemhcPlan::default();
            // SAFETY: `terms` is live for the call; `out` is a local.
            let s =
                unsafe { memhc_plan_create(rt, r.size(), terms.as_ptr(), terms.len(), &mut out) };
            check(s, "plan_create");
            if s == S::Ok {
                h.plans.push(out);
            }
        }
        4 => {
            let mut out = MemhcPlan::default();
            // SAFETY: a local out-parameter.
            let s = unsafe { memhc_plan_meson4x4(rt, &mut out) };
            check(s, "plan_meson4x4");
            if s == S::Ok {
                h.plans.push(out);
            }
        }
        5 | 6 => {
            let c = MemhcContraction {
                a: h.object(r),
                b: h.object(r),
                plan: h.plan(r),
                a_split: r.size(),
                b_split: r.size(),
            };
            let mut out = MemhcObject::default();
            // SAFETY: pointers to locals.
            let s = unsafe { memhc_contract(rt, &c, r.size(), &mut out) };
            check(s, "contract");
            if s == S::Ok {
                h.objects.push(out);
            }
        }
        7 => {
            let cs: Vec<MemhcContraction> = (0..r.below_u64(4))
                .map(|_| MemhcContraction {
                    a: h.object(r),
                    b: h.object(r),
                    plan: h.plan(r),
                    a_split: 0,
                    b_split: 0,
                })
                .collect();
            let mut outs = vec![MemhcObject::default(); r.below_u64(5) as usize];
            // SAFETY: both arrays are live with the lengths passed.
            let s = unsafe {
                memhc_run_vector(rt, cs.as_ptr(), cs.len(), outs.as_mut_ptr(), outs.len())
            };
            check(s, "run_vector");
            if s == S::Ok {
                h.objects.extend(outs);
            }
        }
        8 => {
            let pairs: Vec<MemhcPair> = (0..r.below_u64(4))
                .map(|_| MemhcPair {
                    a: r.size(),
                    b: r.size(),
                })
                .collect();
            let mut out = C::default();
            // SAFETY: `pairs` is live; `out` is a local.
            let s = unsafe {
                memhc_trace(
                    rt,
                    h.object(r),
                    h.object(r),
                    pairs.as_ptr(),
                    pairs.len(),
                    r.size(),
                    &mut out,
                )
            };
            check(s, "trace");
        }
        9 => {
            let mut buf = vec![C::default(); r.below_u64(300) as usize];
            let len = r.below_u64(buf.len() as u64 + 1) as usize;
            // SAFETY: `buf` is live with at least `len` elements.
            let s = unsafe { memhc_read(rt, h.object(r), buf.as_mut_ptr(), len) };
            check(s, "read");
            let mut n = 0usize;
            // SAFETY: a local out-parameter.
            let s = unsafe { memhc_object_elements(rt, h.object(r), &mut n) };
            check(s, "object_elements");
        }
        10 => {
            check(memhc_release(rt, h.object(r)), "release");
            check(memhc_plan_release(rt, h.plan(r)), "plan_release");
            check(memhc_audit(rt), "audit");
            check(memhc_synchronize(rt), "synchronize");
            let mut stats = MemhcStats::default();
            // SAFETY: a local out-parameter.
            check(unsafe { memhc_get_stats(rt, &mut stats) }, "get_stats");
        }
        _ => {
            if r.below_u64(4) == 0 {
                check(memhc_runtime_destroy(rt), "runtime_destroy");
            }
        }
    }
}

#[test]
fn arbitrary_call_sequences_never_crash_nor_report_internal_errors() {
    for case in fuzz::cases("capi-calls", 300) {
        let mut r = Rng::new(case);
        let mut h = Handles::default();
        // Every sequence starts with a runtime, so that most calls reach past the handle check.
        let mut cfg = memhc_config_default();
        cfg.budget_bytes = 1 << 20;
        let mut rt = MemhcRuntime::default();
        // SAFETY: pointers to locals.
        assert_eq!(unsafe { memhc_runtime_create(&cfg, &mut rt) }, S::Ok);
        h.runtimes.push(rt);
        for _ in 0..40 {
            step(&mut r, &mut h);
        }
        for rt in h.runtimes {
            let _ = memhc_runtime_destroy(rt);
        }
    }
    // Nothing leaked a runtime past its destroy.
    assert_eq!(memhc_capi::api::live_runtimes(), 0);
}

#[test]
fn version_and_status_names_answer_any_value() {
    let mut r = Rng::new(7);
    for _ in 0..1000 {
        let code = r.next_u64() as i32;
        // SAFETY: memhc_status_name never returns null and its strings are static.
        let name = unsafe { CStr::from_ptr(memhc_status_name(code)) };
        assert!(name.to_bytes().starts_with(b"MEMHC_STATUS_"));
    }
}

/// Correlator files the correlator sequences open: valid, too large for any host, endless,
/// missing, a directory.
fn corr_files() -> Vec<std::ffi::CString> {
    let dir = std::env::temp_dir().join(format!("memhc-capi-fuzz-{}", std::process::id()));
    assert!(std::fs::create_dir_all(&dir).is_ok());
    let huge = dir.join("huge.corr.json");
    let text = r#"{"format": "memhc-corr/1",
 "nodes": [{"id": "a", "spins": 16, "dims": [1048576, 1048576], "time": 0, "data": {"seed": 1}}],
 "graphs": [{"id": "g", "loops": [{"nodes": ["a"]}]}],
 "correlators": [{"name": "C", "times": [{"source": 0, "sink": 0, "graphs": ["g"]}]}]}"#;
    assert!(std::fs::write(&huge, text).is_ok());
    let pion =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/pion.corr.json");
    [
        pion.display().to_string(),
        huge.display().to_string(),
        "/dev/zero".to_owned(),
        "/nonexistent.corr.json".to_owned(),
        dir.display().to_string(),
    ]
    .into_iter()
    .map(|p| std::ffi::CString::new(p).unwrap_or_default())
    .collect()
}

#[test]
fn arbitrary_correlator_call_sequences_never_crash() {
    use memhc_capi::ffi::corr::*;
    use memhc_capi::{MemhcCorr, MemhcCorrOptions, MemhcCorrResults, MemhcCorrTime};
    let files = corr_files();
    for case in fuzz::cases("capi-correlators", 300).divided_by(10) {
        let mut r = Rng::new(10_000 + case);
        let mut corrs: Vec<MemhcCorr> = Vec::new();
        let mut results: Vec<MemhcCorrResults> = Vec::new();
        for _ in 0..12 {
            let corr = match r.below_u64(6) {
                0 => MemhcCorr {
                    handle: r.next_u64(),
                },
                _ => r.pick(&corrs).unwrap_or_default(),
            };
            let res = match r.below_u64(6) {
                0 => MemhcCorrResults {
                    handle: r.next_u64(),
                },
                _ => r.pick(&results).unwrap_or_default(),
            };
            match r.below_u64(6) {
                0 | 1 => {
                    let options = MemhcCorrOptions {
                        sharing: r.next_u64() as i32,
                        file_order: r.next_u64() as i32,
                        vector_size: r.size(),
                    };
                    let path = &files[r.below_u64(files.len() as u64) as usize];
                    let mut out = MemhcCorr::default();
                    // SAFETY: a NUL-terminated string and pointers to locals.
                    let s = unsafe { memhc_corr_open(path.as_ptr(), &options, &mut out) };
                    check(s, "corr_open");
                    if s == S::Ok {
                        corrs.push(out);
                    }
                }
                2 => {
                    let mut cfg = memhc_config_default();
                    cfg.budget_bytes = match r.below_u64(3) {
                        0 => r.size() as u64,
                        _ => 1 << (10 + r.below_u64(14)),
                    };
                    cfg.streams = r.below_u64(5) as u32;
                    let mut out = MemhcCorrResults::default();
                    // SAFETY: pointers to locals.
                    let s = unsafe { memhc_corr_run(corr, &cfg, &mut out) };
                    check(s, "corr_run");
                    if s == S::Ok {
                        results.push(out);
                    }
                }
                3 => {
                    let index = r.size();
                    let mut n = 0usize;
                    // SAFETY: a local out-parameter.
                    check(unsafe { memhc_corr_results_len(res, index, &mut n) }, "len");
                    let mut times = vec![MemhcCorrTime::default(); r.below_u64(8) as usize];
                    let mut values = vec![C::default(); times.len()];
                    // SAFETY: both buffers are live with `times.len()` elements.
                    let s = unsafe {
                        memhc_corr_results_values(
                            res,
                            index,
                            times.as_mut_ptr(),
                            values.as_mut_ptr(),
                            times.len(),
                        )
                    };
                    check(s, "values");
                    let mut buf = vec![0 as std::ffi::c_char; r.below_u64(16) as usize];
                    let mut needed = 0usize;
                    // SAFETY: `buf` is live with its length; `needed` is a local.
                    let s = unsafe {
                        memhc_corr_results_name(
                            res,
                            index,
                            buf.as_mut_ptr(),
                            buf.len(),
                            &mut needed,
                        )
                    };
                    check(s, "name");
                }
                4 => {
                    let mut e = 0.0f64;
                    let other = r.pick(&results).unwrap_or_default();
                    // SAFETY: a local out-parameter.
                    check(
                        unsafe { memhc_corr_results_compare(res, other, &mut e) },
                        "compare",
                    );
                    let mut count = 0usize;
                    // SAFETY: a local out-parameter.
                    check(
                        unsafe { memhc_corr_results_count(res, &mut count) },
                        "count",
                    );
                }
                _ => {
                    if r.below_u64(2) == 0 {
                        check(memhc_corr_release(corr), "corr_release");
                    } else {
                        check(memhc_corr_results_release(res), "results_release");
                    }
                }
            }
        }
        for c in corrs {
            let _ = memhc_corr_release(c);
        }
        for x in results {
            let _ = memhc_corr_results_release(x);
        }
    }
}
