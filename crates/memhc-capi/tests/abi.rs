//! The C ABI called as C calls it: results against plain loops, and every misuse (null
//! handles and pointers, wrong sizes, double release, use after release, handles of the wrong
//! kind or runtime) answered with a status and a message, never a crash.
//!
//! Every `unsafe` block here calls an `extern "C"` function with arguments that satisfy its
//! documented contract (valid pointers to live locals, or null where the test is about null).
#![allow(unsafe_code)]

use std::ffi::{CStr, CString};
use std::ptr::{null, null_mut};

use memhc_capi::ffi::compute::*;
use memhc_capi::ffi::errors::*;
use memhc_capi::ffi::objects::*;
use memhc_capi::ffi::runtime::*;
use memhc_capi::{
    MemhcComplex as C, MemhcContraction, MemhcObject, MemhcPair, MemhcPlan, MemhcRuntime,
    MemhcStats, MemhcStatus as S, MemhcTerm,
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

fn value(i: usize, seed: f64) -> C {
    let x = i as f64 + seed;
    C {
        re: (x * 0.37).sin(),
        im: (x * 0.11).cos(),
    }
}

fn register(rt: MemhcRuntime, spins: usize, dims: &[usize], data: &[C]) -> (S, MemhcObject) {
    let mut o = MemhcObject::default();
    // SAFETY: the slices are live for the call; `o` is a local.
    let s = unsafe {
        memhc_register(
            rt,
            spins,
            dims.as_ptr(),
            dims.len(),
            data.as_ptr(),
            data.len(),
            &mut o,
        )
    };
    (s, o)
}

fn mul(x: C, y: C) -> C {
    C {
        re: x.re * y.re - x.im * y.im,
        im: x.re * y.im + x.im * y.re,
    }
}

#[test]
fn a_meson_contraction_and_trace_match_plain_loops() {
    let n = 6;
    let e = n * n;
    let rt = host(64 << 20);
    let x: Vec<C> = (0..16 * e).map(|i| value(i, 0.5)).collect();
    let y: Vec<C> = (0..16 * e).map(|i| value(i, 7.25)).collect();
    let (s, a) = register(rt, 16, &[n, n], &x);
    assert_eq!(s, S::Ok);
    let (_, b) = register(rt, 16, &[n, n], &y);
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
        unsafe { memhc_contract(rt, &c, 1, &mut out) },
        S::Ok,
        "{}",
        last()
    );
    let mut elems = 0;
    // SAFETY: pointer to a local.
    assert_eq!(unsafe { memhc_object_elements(rt, out, &mut elems) }, S::Ok);
    assert_eq!(elems, 16 * e);
    let mut got = vec![C::default(); elems];
    // SAFETY: `got` has `elems` elements.
    assert_eq!(
        unsafe { memhc_read(rt, out, got.as_mut_ptr(), got.len()) },
        S::Ok,
        "{}",
        last()
    );
    // Plain loops: out(al, ga)[i][j] = sum_be sum_k A(al, be)[i][k] B(be, ga)[k][j].
    let mut want = vec![C::default(); 16 * e];
    for al in 0..4 {
        for ga in 0..4 {
            for be in 0..4 {
                let (o, pa, pb) = ((4 * al + ga) * e, (4 * al + be) * e, (4 * be + ga) * e);
                for i in 0..n {
                    for j in 0..n {
                        for k in 0..n {
                            let p = mul(x[pa + i * n + k], y[pb + k * n + j]);
                            want[o + i * n + j].re += p.re;
                            want[o + i * n + j].im += p.im;
                        }
                    }
                }
            }
        }
    }
    let err: f64 = got
        .iter()
        .zip(&want)
        .map(|(g, w)| (g.re - w.re).powi(2) + (g.im - w.im).powi(2))
        .sum();
    let norm: f64 = want.iter().map(|w| w.re * w.re + w.im * w.im).sum();
    assert!((err / norm).sqrt() < 1e-12);
    // Tr(out * B) over spin and distillation indices, by loops over `want`.
    let mut t_want = C::default();
    for al in 0..4 {
        for be in 0..4 {
            let (pa, pb) = ((4 * al + be) * e, (4 * be + al) * e);
            for i in 0..n {
                for k in 0..n {
                    let p = mul(want[pa + i * n + k], y[pb + k * n + i]);
                    t_want.re += p.re;
                    t_want.im += p.im;
                }
            }
        }
    }
    let mut t = C::default();
    // SAFETY: pointer to a local.
    assert_eq!(
        unsafe { memhc_trace_meson4x4(rt, out, b, 0, &mut t) },
        S::Ok,
        "{}",
        last()
    );
    let scale = (t_want.re.powi(2) + t_want.im.powi(2)).sqrt();
    assert!(((t.re - t_want.re).powi(2) + (t.im - t_want.im).powi(2)).sqrt() <= 1e-12 * scale);
    // The same trace through explicit pairs.
    let pairs: Vec<MemhcPair> = (0..4)
        .flat_map(|al| {
            (0..4).map(move |be| MemhcPair {
                a: 4 * al + be,
                b: 4 * be + al,
            })
        })
        .collect();
    let mut t2 = C::default();
    // SAFETY: `pairs` is live; pointer to a local.
    assert_eq!(
        unsafe { memhc_trace(rt, out, b, pairs.as_ptr(), pairs.len(), 0, &mut t2) },
        S::Ok
    );
    assert!((t2.re - t.re).abs() <= 1e-12 * scale && (t2.im - t.im).abs() <= 1e-12 * scale);
    let mut stats = MemhcStats::default();
    // SAFETY: pointer to a local.
    assert_eq!(unsafe { memhc_get_stats(rt, &mut stats) }, S::Ok);
    assert_eq!(
        (stats.objects, stats.plans, stats.budget_bytes),
        (3, 1, 64 << 20)
    );
    assert!(stats.flops >= 64 * 8 * (n * n * n) as u64 && stats.misses > 0);
    assert_eq!(memhc_audit(rt), S::Ok, "{}", last());
    assert_eq!(memhc_release(rt, out), S::Ok);
    assert_eq!(memhc_plan_release(rt, plan), S::Ok);
    assert_eq!(memhc_runtime_destroy(rt), S::Ok);
    assert!(last().is_empty(), "a success clears the message");
}

#[test]
fn vectors_and_term_lists() {
    let rt = host(16 << 20);
    let (n, spins) = (3, 2);
    let x: Vec<C> = (0..spins * n * n).map(|i| value(i, 1.0)).collect();
    let (_, a) = register(rt, spins, &[n, n], &x);
    // out[0] = A[0] A[1] + A[1] A[0]; out[1] untouched (zero); out_spins from the argument.
    let terms = [
        MemhcTerm { out: 0, a: 0, b: 1 },
        MemhcTerm { out: 0, a: 1, b: 0 },
    ];
    let mut plan = MemhcPlan::default();
    // SAFETY: `terms` is live; pointer to a local.
    assert_eq!(
        unsafe { memhc_plan_create(rt, 2, terms.as_ptr(), 2, &mut plan) },
        S::Ok
    );
    let c = MemhcContraction {
        a,
        b: a,
        plan,
        a_split: 1,
        b_split: 1,
    };
    let cs = [c, c, c];
    let mut outs = [MemhcObject::default(); 3];
    // SAFETY: arrays live for the call.
    assert_eq!(
        unsafe { memhc_run_vector(rt, cs.as_ptr(), 3, outs.as_mut_ptr(), 3) },
        S::Ok,
        "{}",
        last()
    );
    let mut got = vec![C::default(); spins * n * n];
    // SAFETY: `got` has the object's elements.
    assert_eq!(
        unsafe { memhc_read(rt, outs[2], got.as_mut_ptr(), got.len()) },
        S::Ok
    );
    for i in 0..n {
        for j in 0..n {
            let mut w = C::default();
            for k in 0..n {
                for (p, q) in [(0, 1), (1, 0)] {
                    let m = mul(x[p * n * n + i * n + k], x[q * n * n + k * n + j]);
                    w.re += m.re;
                    w.im += m.im;
                }
            }
            let g = got[i * n + j];
            assert!((g.re - w.re).abs() < 1e-12 && (g.im - w.im).abs() < 1e-12);
            assert_eq!(got[n * n + i * n + j], C::default());
        }
    }
    let (mut sp, mut dims, mut rank) = (0, [0usize; 1], 0);
    // SAFETY: pointers to locals; `dims` has room for 1.
    let s = unsafe { memhc_object_shape(rt, outs[0], &mut sp, dims.as_mut_ptr(), 1, &mut rank) };
    expect(s, S::BufferTooSmall, "2 dimensions");
    assert_eq!((sp, rank), (2, 2));
    let mut dims = [0usize; 4];
    // SAFETY: as above, room for 4.
    let s = unsafe { memhc_object_shape(rt, outs[0], &mut sp, dims.as_mut_ptr(), 4, &mut rank) };
    assert_eq!((s, &dims[..2]), (S::Ok, &[3, 3][..]));
    assert_eq!(memhc_runtime_destroy(rt), S::Ok);
}

#[test]
fn null_handles_and_null_pointers_are_refused() {
    let null_rt = MemhcRuntime::default();
    expect(memhc_audit(null_rt), S::InvalidHandle, "null");
    expect(
        memhc_runtime_destroy(null_rt),
        S::InvalidHandle,
        "runtime handle is null",
    );
    let rt = host(1 << 20);
    expect(
        memhc_release(rt, MemhcObject::default()),
        S::InvalidHandle,
        "object handle is null",
    );
    expect(
        memhc_plan_release(rt, MemhcPlan::default()),
        S::InvalidHandle,
        "plan handle is null",
    );
    // SAFETY: every null pointer below is one the functions must refuse, not dereference.
    unsafe {
        expect(
            memhc_runtime_create(null(), null_mut()),
            S::NullPointer,
            "out",
        );
        let data = [C::default(); 4];
        let dims = [2usize, 2];
        let s = memhc_register(rt, 1, dims.as_ptr(), 2, data.as_ptr(), 4, null_mut());
        expect(s, S::NullPointer, "out");
        let mut o = MemhcObject::default();
        expect(
            memhc_register(rt, 1, null(), 2, data.as_ptr(), 4, &mut o),
            S::NullPointer,
            "dims",
        );
        expect(
            memhc_register(rt, 1, dims.as_ptr(), 2, null(), 4, &mut o),
            S::NullPointer,
            "data",
        );
        assert_eq!(
            o,
            MemhcObject::default(),
            "a failed call leaves its out-parameter"
        );
        expect(
            memhc_contract(rt, null(), 0, &mut o),
            S::NullPointer,
            "contraction",
        );
        expect(memhc_get_stats(rt, null_mut()), S::NullPointer, "out");
        expect(
            memhc_get_stats(null_rt, &mut MemhcStats::default()),
            S::InvalidHandle,
            "null",
        );
        let mut p = MemhcPlan::default();
        expect(
            memhc_plan_create(rt, 0, null(), 3, &mut p),
            S::NullPointer,
            "terms",
        );
        expect(
            memhc_plan_create(rt, 0, null(), 0, &mut p),
            S::InvalidArgument,
            "empty",
        );
        let mut t = C::default();
        let (_, a) = register(rt, 1, &dims, &data);
        expect(
            memhc_trace(rt, a, a, null(), 1, 0, &mut t),
            S::NullPointer,
            "pairs",
        );
        expect(
            memhc_trace_meson4x4(rt, MemhcObject::default(), a, 0, &mut t),
            S::InvalidHandle,
            "null",
        );
        expect(memhc_read(rt, a, null_mut(), 4), S::NullPointer, "out");
    }
    assert_eq!(memhc_runtime_destroy(rt), S::Ok);
}

#[test]
fn wrong_sizes_and_names_are_refused() {
    let rt = host(1 << 20);
    let data = [C::default(); 16];
    let (s, _) = register(rt, 2, &[2, 3], &data);
    expect(s, S::SizeMismatch, "12 elements");
    let (s, _) = register(rt, 0, &[2, 2], &data);
    expect(s, S::InvalidArgument, "0 spins");
    let (s, _) = register(rt, 1, &[], &data);
    expect(s, S::InvalidArgument, "dimension");
    let (s, _) = register(rt, usize::MAX, &[usize::MAX, 2], &data);
    expect(s, S::InvalidArgument, "overflow");
    let (_, a) = register(rt, 4, &[2, 2], &data);
    let mut small = [C::default(); 15];
    // SAFETY: `small` has 15 elements, as passed.
    let s = unsafe { memhc_read(rt, a, small.as_mut_ptr(), 15) };
    expect(s, S::SizeMismatch, "16 elements");
    // SAFETY: a zero-length read passes no memory.
    expect(
        unsafe { memhc_read(rt, a, null_mut(), 0) },
        S::SizeMismatch,
        "16 elements",
    );
    // A mapping reaching spin 9 of a 4-spin node; a stream that does not exist; bad splits.
    let terms = [MemhcTerm { out: 0, a: 9, b: 0 }];
    let mut p = MemhcPlan::default();
    // SAFETY: pointers to locals.
    unsafe {
        assert_eq!(memhc_plan_create(rt, 1, terms.as_ptr(), 1, &mut p), S::Ok);
        let dup = [terms[0], terms[0]];
        expect(
            memhc_plan_create(rt, 1, dup.as_ptr(), 2, &mut p),
            S::InvalidArgument,
            "duplicate",
        );
        let mut o = MemhcObject::default();
        let c = MemhcContraction {
            a,
            b: a,
            plan: p,
            a_split: 0,
            b_split: 0,
        };
        expect(
            memhc_contract(rt, &c, 0, &mut o),
            S::InvalidArgument,
            "spin 9",
        );
        let mut d = MemhcPlan::default();
        assert_eq!(memhc_plan_meson4x4(rt, &mut d), S::Ok);
        let c = MemhcContraction { plan: d, ..c };
        expect(
            memhc_contract(rt, &c, 0, &mut o),
            S::InvalidArgument,
            "spin",
        );
        let diag = [MemhcTerm { out: 0, a: 0, b: 0 }];
        assert_eq!(memhc_plan_create(rt, 0, diag.as_ptr(), 1, &mut d), S::Ok);
        let c = MemhcContraction { plan: d, ..c };
        expect(
            memhc_contract(rt, &c, 99, &mut o),
            S::InvalidArgument,
            "stream 99",
        );
        let c = MemhcContraction { a_split: 5, ..c };
        expect(
            memhc_contract(rt, &c, 0, &mut o),
            S::InvalidArgument,
            "split",
        );
        let c = MemhcContraction { a_split: 0, ..c };
        let mut outs = [MemhcObject::default(); 1];
        let cs = [c, c];
        expect(
            memhc_run_vector(rt, cs.as_ptr(), 2, outs.as_mut_ptr(), 1),
            S::SizeMismatch,
            "2 outputs",
        );
        let pairs = [MemhcPair { a: 0, b: 0 }, MemhcPair { a: 0, b: 0 }];
        let mut t = C::default();
        expect(
            memhc_trace(rt, a, a, pairs.as_ptr(), 2, 0, &mut t),
            S::InvalidArgument,
            "duplicate",
        );
        // A device of 1 MiB cannot hold a node of 2 MiB.
        let big = vec![C::default(); 128 * 1024];
        let (_, g) = register(rt, 1, &[256, 512], &big);
        let gg = MemhcContraction {
            a: g,
            b: g,
            plan: d,
            a_split: 0,
            b_split: 0,
        };
        let s = memhc_contract(rt, &gg, 0, &mut o);
        assert!(
            s == S::DoesNotFit || s == S::InvalidArgument,
            "{s:?}: {}",
            last()
        );
        let bad = |backend: &str, policy: &str, mode: &str| {
            let (b, p, m) = (
                CString::new(backend),
                CString::new(policy),
                CString::new(mode),
            );
            let (b, p, m) = (
                b.unwrap_or_default(),
                p.unwrap_or_default(),
                m.unwrap_or_default(),
            );
            let mut cfg = memhc_config_default();
            cfg.backend = b.as_ptr();
            cfg.policy = p.as_ptr();
            cfg.mode = m.as_ptr();
            let mut r = MemhcRuntime::default();
            let s = memhc_runtime_create(&cfg, &mut r);
            (s, r)
        };
        let (s, r) = bad("tpu", "lru", "optimal");
        expect(s, S::UnknownName, "tpu");
        assert_eq!(r, MemhcRuntime::default());
        expect(bad("host", "fifo", "optimal").0, S::UnknownName, "fifo");
        expect(bad("host", "lru", "fast").0, S::UnknownName, "fast");
        // The host backend has managed memory: the unified mode opens.
        let (s, r) = bad("host", "lru", "unified");
        assert_eq!((s, memhc_runtime_destroy(r)), (S::Ok, S::Ok));
        for gpu in ["cuda", "rocm"] {
            let (s, r) = bad(gpu, "lru", "optimal");
            if s == S::Ok {
                assert_eq!(memhc_runtime_destroy(r), S::Ok); // a machine with that GPU
            } else {
                expect(s, S::Unavailable, "");
            }
        }
        let mut cfg = memhc_config_default();
        let invalid = [0xffu8, 0];
        cfg.backend = invalid.as_ptr().cast();
        expect(
            memhc_runtime_create(&cfg, &mut MemhcRuntime::default()),
            S::UnknownName,
            "UTF-8",
        );
    }
    assert_eq!(memhc_audit(rt), S::Ok, "{}", last());
    assert_eq!(memhc_runtime_destroy(rt), S::Ok);
}

#[test]
fn double_release_use_after_release_and_foreign_handles() {
    let (rt, other) = (host(1 << 20), host(1 << 20));
    let data = [C { re: 1.0, im: 0.0 }; 4];
    let (_, a) = register(rt, 1, &[2, 2], &data);
    let (_, b) = register(other, 1, &[2, 2], &data);
    let mut p = MemhcPlan::default();
    // SAFETY: pointer to a local.
    assert_eq!(unsafe { memhc_plan_meson4x4(rt, &mut p) }, S::Ok);
    expect(memhc_release(rt, b), S::InvalidHandle, "another runtime");
    expect(
        memhc_release(rt, MemhcObject { handle: p.handle }),
        S::InvalidHandle,
        "is a plan handle, not an object handle",
    );
    expect(
        memhc_runtime_destroy(MemhcRuntime { handle: a.handle }),
        S::InvalidHandle,
        "not a runtime handle",
    );
    assert_eq!(memhc_release(rt, a), S::Ok);
    expect(memhc_release(rt, a), S::InvalidHandle, "released already");
    let mut buf = [C::default(); 4];
    // SAFETY: `buf` has 4 elements.
    expect(
        unsafe { memhc_read(rt, a, buf.as_mut_ptr(), 4) },
        S::InvalidHandle,
        "released already",
    );
    let mut t = C::default();
    // SAFETY: pointer to a local.
    expect(
        unsafe { memhc_trace_meson4x4(rt, a, a, 0, &mut t) },
        S::InvalidHandle,
        "released",
    );
    assert_eq!(memhc_plan_release(rt, p), S::Ok);
    expect(
        memhc_plan_release(rt, p),
        S::InvalidHandle,
        "released already",
    );
    assert_eq!(memhc_runtime_destroy(rt), S::Ok);
    expect(
        memhc_runtime_destroy(rt),
        S::InvalidHandle,
        "released already",
    );
    expect(memhc_audit(rt), S::InvalidHandle, "released already");
    // The objects of a destroyed runtime went with it.
    let (_, c) = register(other, 1, &[2, 2], &data);
    assert_eq!(memhc_release(other, c), S::Ok);
    assert_eq!(memhc_audit(other), S::Ok, "{}", last());
    assert_eq!(memhc_runtime_destroy(other), S::Ok);
}

#[test]
fn messages_per_thread_and_copies() {
    expect(
        memhc_audit(MemhcRuntime::default()),
        S::InvalidHandle,
        "null",
    );
    let mine = last();
    std::thread::spawn(|| assert!(last().is_empty(), "another thread's message is its own"))
        .join()
        .ok();
    assert_eq!(last(), mine);
    let mut needed = 0usize;
    // SAFETY: a null buffer of capacity 0 asks for the size; `needed` is a local.
    assert_eq!(
        unsafe { memhc_last_error_copy(null_mut(), 0, &mut needed) },
        S::BufferTooSmall
    );
    assert_eq!(needed, mine.len() + 1);
    let mut buf = vec![0 as std::ffi::c_char; needed];
    // SAFETY: `buf` has `needed` bytes.
    assert_eq!(
        unsafe { memhc_last_error_copy(buf.as_mut_ptr(), needed, null_mut()) },
        S::Ok
    );
    // SAFETY: the copy is NUL-terminated within `buf`.
    assert_eq!(
        unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy(),
        mine
    );
    assert_eq!(last(), mine, "reading the message keeps it");
    for (i, s) in memhc_capi::MemhcStatus::ALL.iter().enumerate() {
        // SAFETY: static strings.
        let name = unsafe { CStr::from_ptr(memhc_status_name(i as i32)) };
        assert_eq!(name.to_str().ok(), Some(s.name()));
    }
    // SAFETY: static strings.
    assert_eq!(
        unsafe { CStr::from_ptr(memhc_status_name(-4)) }
            .to_str()
            .ok(),
        Some("MEMHC_STATUS_UNKNOWN")
    );
    // SAFETY: static string.
    assert_eq!(
        unsafe { CStr::from_ptr(memhc_version()) }.to_str().ok(),
        Some(env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn runtimes_are_usable_from_many_threads() {
    let rt = host(8 << 20);
    let data: Vec<C> = (0..16 * 4).map(|i| value(i, 2.0)).collect();
    let (_, a) = register(rt, 16, &[2, 2], &data);
    let mut p = MemhcPlan::default();
    // SAFETY: pointer to a local.
    assert_eq!(unsafe { memhc_plan_meson4x4(rt, &mut p) }, S::Ok);
    let workers: Vec<_> = (0..4)
        .map(|w| {
            std::thread::spawn(move || {
                for _ in 0..10 {
                    let c = MemhcContraction {
                        a,
                        b: a,
                        plan: p,
                        a_split: 0,
                        b_split: 0,
                    };
                    let mut o = MemhcObject::default();
                    // SAFETY: pointers to locals.
                    assert_eq!(unsafe { memhc_contract(rt, &c, w % 4, &mut o) }, S::Ok);
                    assert_eq!(memhc_release(rt, o), S::Ok);
                }
            })
        })
        .collect();
    for w in workers {
        assert!(w.join().is_ok());
    }
    assert_eq!(memhc_audit(rt), S::Ok, "{}", last());
    assert_eq!(memhc_runtime_destroy(rt), S::Ok);
}
