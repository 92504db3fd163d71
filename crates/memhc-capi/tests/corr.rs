//! The correlator calls of the C ABI called as C calls them: values against a value computed
//! outside memhc (the worked example of `docs/correlator-format.md`) and against the dense
//! reference, and every misuse (null handles and pointers, wrong sizes, short name buffers,
//! double release, use after release, handles of the wrong kind, missing and bad files)
//! answered with a status and a one-line message, never a crash.
//!
//! Every `unsafe` block here calls an `extern "C"` function with arguments that satisfy its
//! documented contract (valid pointers to live locals, or null where the test is about null).
#![allow(unsafe_code)]

use std::ffi::{CStr, CString, c_char};
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};

use memhc_capi::ffi::corr::*;
use memhc_capi::ffi::runtime::memhc_config_default;
use memhc_capi::{
    MemhcComplex as C, MemhcCorr, MemhcCorrPlanReport, MemhcCorrResults, MemhcCorrTime,
    MemhcStatus as S,
};

/// The example at the top of `docs/correlator-format.md`; the page gives its value,
/// `C_pi_pi(0, 3) = 1.799883872368158 + 5.709077811681285i`, computed outside memhc.
const DOC_EXAMPLE: &str = r#"{
  "format": "memhc-corr/1",
  "nodes": [
    {"id": "a", "spins": 16, "dims": [1, 1], "time": 0, "data": {"seed": 1}},
    {"id": "b", "spins": 16, "dims": [1, 1], "time": 3, "data": {"seed": 2}},
    {"id": "c", "spins": 16, "dims": [1, 1], "time": 3, "data": {"seed": 3}}
  ],
  "graphs": [
    {"id": "g0", "loops": [{"nodes": ["a", "b"]}]},
    {"id": "g1", "coefficient": [0.5, 0.0], "loops": [{"nodes": ["a", "b", "c"]}]},
    {"id": "g2", "coefficient": [-1.0, 0.0], "loops": [{"nodes": ["a"]}, {"nodes": ["c"]}]}
  ],
  "correlators": [
    {"name": "C_pi_pi", "times": [{"source": 0, "sink": 3, "graphs": ["g0", "g1", "g2"]}]}
  ]
}"#;

mod common;
use common::{expect, last};

fn scratch() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "memhc-capi-corr-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(std::fs::create_dir_all(&dir).is_ok());
    dir
}

fn c_path(p: &Path) -> CString {
    CString::new(p.display().to_string()).unwrap_or_default()
}

fn pion() -> CString {
    c_path(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/pion.corr.json"))
}

fn open(path: &CString) -> (S, MemhcCorr) {
    let mut h = MemhcCorr::default();
    // SAFETY: a NUL-terminated string, null options (the defaults), a local out-parameter.
    let s = unsafe { memhc_corr_open(path.as_ptr(), null(), &mut h) };
    (s, h)
}

fn run(h: MemhcCorr) -> (S, MemhcCorrResults) {
    let mut r = MemhcCorrResults::default();
    // SAFETY: null configuration (the defaults), a local out-parameter.
    let s = unsafe { memhc_corr_run(h, null(), &mut r) };
    (s, r)
}

fn read(r: MemhcCorrResults, i: usize) -> (Vec<MemhcCorrTime>, Vec<C>) {
    let mut n = 0usize;
    // SAFETY: a local out-parameter.
    assert_eq!(
        unsafe { memhc_corr_results_len(r, i, &mut n) },
        S::Ok,
        "{}",
        last()
    );
    let mut t = vec![MemhcCorrTime::default(); n];
    let mut v = vec![C::default(); n];
    // SAFETY: both buffers have `n` elements.
    let s = unsafe { memhc_corr_results_values(r, i, t.as_mut_ptr(), v.as_mut_ptr(), n) };
    assert_eq!(s, S::Ok, "{}", last());
    (t, v)
}

fn name(r: MemhcCorrResults, i: usize) -> String {
    let mut buf = [0 as c_char; 64];
    // SAFETY: `buf` has 64 bytes; `needed` may be null.
    let s = unsafe { memhc_corr_results_name(r, i, buf.as_mut_ptr(), buf.len(), null_mut()) };
    assert_eq!(s, S::Ok, "{}", last());
    // SAFETY: the name was written NUL-terminated within `buf`.
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

fn compare(a: MemhcCorrResults, b: MemhcCorrResults) -> f64 {
    let mut err = f64::NAN;
    // SAFETY: a local out-parameter.
    let s = unsafe { memhc_corr_results_compare(a, b, &mut err) };
    assert_eq!(s, S::Ok, "{}", last());
    err
}

#[test]
fn the_documented_example_gives_the_documented_value() {
    let dir = scratch();
    let file = dir.join("doc.json");
    assert!(std::fs::write(&file, DOC_EXAMPLE).is_ok());
    let (s, h) = open(&c_path(&file));
    assert_eq!(s, S::Ok, "{}", last());
    let (s, r) = run(h);
    assert_eq!(s, S::Ok, "{}", last());
    assert_eq!(name(r, 0), "C_pi_pi");
    let (t, v) = read(r, 0);
    assert_eq!(t, [MemhcCorrTime { source: 0, sink: 3 }]);
    let (re, im) = (1.799883872368158, 5.709077811681285);
    let err = ((v[0].re - re).powi(2) + (v[0].im - im).powi(2)).sqrt() / re.hypot(im);
    assert!(err <= 1e-12, "{v:?}");
    assert_eq!(memhc_corr_results_release(r), S::Ok);
    assert_eq!(memhc_corr_release(h), S::Ok);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_example_file_runs_reads_and_verifies() {
    let (s, h) = open(&pion());
    assert_eq!(s, S::Ok, "{}", last());
    let mut rep = MemhcCorrPlanReport::default();
    // SAFETY: a local out-parameter.
    assert_eq!(unsafe { memhc_corr_plan(h, &mut rep) }, S::Ok);
    assert_eq!((rep.sharing, rep.file_order), (1, 0));
    assert_eq!((rep.traces, rep.contractions_without_sharing), (6, 3));
    assert!(rep.contractions <= 3 && rep.flops > 0 && rep.nodes == 4);
    assert_eq!(rep.node_bytes, 4 * 16 * 4 * 4 * 16);
    assert!(rep.peak_bytes >= rep.node_bytes / 4);
    let (s, r) = run(h);
    assert_eq!(s, S::Ok, "{}", last());
    let mut count = 0;
    // SAFETY: a local out-parameter.
    assert_eq!(unsafe { memhc_corr_results_count(r, &mut count) }, S::Ok);
    assert_eq!(count, 2);
    assert_eq!(
        (name(r, 0), name(r, 1)),
        ("C_pi_pi".into(), "C_pi_3pt".into())
    );
    let (t, _) = read(r, 0);
    assert_eq!(
        t,
        [
            MemhcCorrTime { source: 0, sink: 2 },
            MemhcCorrTime { source: 0, sink: 3 }
        ]
    );
    let mut i = 9;
    let wanted = CString::new("C_pi_3pt").unwrap_or_default();
    // SAFETY: a NUL-terminated string and a local out-parameter.
    assert_eq!(
        unsafe { memhc_corr_results_find(r, wanted.as_ptr(), &mut i) },
        S::Ok
    );
    assert_eq!(i, 1);
    // Against the dense reference, through both calls.
    let mut reference = MemhcCorrResults::default();
    // SAFETY: a local out-parameter.
    assert_eq!(unsafe { memhc_corr_reference(h, &mut reference) }, S::Ok);
    assert!(compare(r, reference) <= 1e-12);
    assert_eq!(read(r, 1).0, read(reference, 1).0);
    let mut err = f64::NAN;
    // SAFETY: a local out-parameter, then null (allowed).
    assert_eq!(unsafe { memhc_corr_verify(h, r, &mut err) }, S::Ok);
    assert!(err <= 1e-12);
    // SAFETY: null is allowed.
    assert_eq!(unsafe { memhc_corr_verify(h, r, null_mut()) }, S::Ok);
    // Without sharing, in file order, under Belady with a budget below the peak.
    let mut opts = memhc_corr_options_default();
    opts.sharing = 0;
    opts.file_order = 1;
    opts.vector_size = 1;
    let mut plain = MemhcCorr::default();
    let path = pion();
    // SAFETY: valid string, options and out-parameter.
    assert_eq!(
        unsafe { memhc_corr_open(path.as_ptr(), &opts, &mut plain) },
        S::Ok
    );
    let mut cfg = memhc_config_default();
    let belady = CString::new("belady").unwrap_or_default();
    cfg.policy = belady.as_ptr();
    cfg.budget_bytes = rep.node_bytes;
    cfg.streams = 2;
    let mut plain_r = MemhcCorrResults::default();
    // SAFETY: a valid configuration whose strings outlive the call; a local out-parameter.
    let s = unsafe { memhc_corr_run(plain, &cfg, &mut plain_r) };
    assert_eq!(s, S::Ok, "{}", last());
    assert!(compare(plain_r, reference) <= 1e-12);
    // The direct data path: page-locked node data, copies issued ahead; the same values.
    let pinned = CString::new("pinned").unwrap_or_default();
    cfg.host_memory = pinned.as_ptr();
    cfg.prefetch = 6;
    let mut direct_r = MemhcCorrResults::default();
    // SAFETY: as above.
    let s = unsafe { memhc_corr_run(plain, &cfg, &mut direct_r) };
    assert_eq!(s, S::Ok, "{}", last());
    assert!(compare(direct_r, reference) <= 1e-12);
    assert_eq!(memhc_corr_results_release(direct_r), S::Ok);
    // Prefetch does not apply to managed memory.
    let unified = CString::new("unified").unwrap_or_default();
    cfg.mode = unified.as_ptr();
    cfg.host_memory = std::ptr::null();
    let mut refused = MemhcCorrResults::default();
    // SAFETY: as above.
    let s = unsafe { memhc_corr_run(plain, &cfg, &mut refused) };
    assert_eq!(s, S::InvalidArgument, "{}", last());
    // Results outlive the file they came from.
    assert_eq!(memhc_corr_release(h), S::Ok);
    assert_eq!(read(r, 0).1.len(), 2);
    for x in [r, reference, plain_r] {
        assert_eq!(memhc_corr_results_release(x), S::Ok);
    }
    assert_eq!(memhc_corr_release(plain), S::Ok);
}

#[test]
fn null_handles_null_pointers_and_wrong_kinds_are_refused() {
    let mut rep = MemhcCorrPlanReport::default();
    let mut n = 0usize;
    // SAFETY: local out-parameters throughout; nulls where the test is about null.
    unsafe {
        expect(
            memhc_corr_plan(MemhcCorr::default(), &mut rep),
            S::InvalidHandle,
            "null",
        );
        expect(
            memhc_corr_results_count(MemhcCorrResults::default(), &mut n),
            S::InvalidHandle,
            "null",
        );
        let mut h = MemhcCorr::default();
        expect(
            memhc_corr_open(null(), null(), &mut h),
            S::NullPointer,
            "path",
        );
        let path = pion();
        expect(
            memhc_corr_open(path.as_ptr(), null(), null_mut()),
            S::NullPointer,
            "out",
        );
        assert_eq!(h, MemhcCorr::default(), "a failed call writes nothing");
    }
    let (_, h) = open(&pion());
    let (_, r) = run(h);
    // SAFETY: as above.
    unsafe {
        expect(memhc_corr_plan(h, null_mut()), S::NullPointer, "out");
        expect(memhc_corr_run(h, null(), null_mut()), S::NullPointer, "out");
        expect(
            memhc_corr_results_count(r, null_mut()),
            S::NullPointer,
            "out",
        );
        expect(
            memhc_corr_results_find(r, null(), &mut n),
            S::NullPointer,
            "name",
        );
        expect(memhc_corr_results_write(r, null()), S::NullPointer, "path");
        let mut err = 0.0;
        expect(
            memhc_corr_results_compare(r, MemhcCorrResults::default(), &mut err),
            S::InvalidHandle,
            "null",
        );
        // A results handle where a file handle belongs, and the other way round.
        expect(
            memhc_corr_plan(MemhcCorr { handle: r.handle }, &mut rep),
            S::InvalidHandle,
            "not a correlator file handle",
        );
        expect(
            memhc_corr_results_count(MemhcCorrResults { handle: h.handle }, &mut n),
            S::InvalidHandle,
            "is a correlator file handle",
        );
        // Both buffers null: nothing to copy, but the length is still checked.
        assert_eq!(
            memhc_corr_results_values(r, 0, null_mut(), null_mut(), 2),
            S::Ok
        );
    }
    assert_eq!(memhc_corr_results_release(r), S::Ok);
    assert_eq!(memhc_corr_release(h), S::Ok);
}

#[test]
fn wrong_sizes_short_buffers_and_indices() {
    let (_, h) = open(&pion());
    let (_, r) = run(h);
    let mut t = [MemhcCorrTime::default(); 3];
    let mut v = [C::default(); 3];
    // SAFETY: the buffers have 3 elements, more than any length passed; locals otherwise.
    unsafe {
        expect(
            memhc_corr_results_values(r, 0, t.as_mut_ptr(), v.as_mut_ptr(), 3),
            S::SizeMismatch,
            "2 time pairs",
        );
        expect(
            memhc_corr_results_values(r, 0, t.as_mut_ptr(), v.as_mut_ptr(), 0),
            S::SizeMismatch,
            "the buffers 0",
        );
        assert_eq!(v[0], C::default(), "nothing written");
        expect(
            memhc_corr_results_values(r, 1, null_mut(), v.as_mut_ptr(), 1),
            S::Ok,
            "",
        );
        assert_ne!(v[0], C::default());
        expect(
            memhc_corr_results_values(r, 2, t.as_mut_ptr(), v.as_mut_ptr(), 1),
            S::InvalidArgument,
            "out of range",
        );
        let mut n = 0;
        expect(
            memhc_corr_results_len(r, 7, &mut n),
            S::InvalidArgument,
            "there are 2",
        );
        // The name: ask the size, then a short buffer, then an exact one.
        let mut needed = 0usize;
        expect(
            memhc_corr_results_name(r, 1, null_mut(), 0, &mut needed),
            S::BufferTooSmall,
            "needs 9 bytes",
        );
        assert_eq!(needed, "C_pi_3pt".len() + 1);
        let mut short = [b'#' as c_char; 4];
        needed = 0;
        expect(
            memhc_corr_results_name(r, 1, short.as_mut_ptr(), short.len(), &mut needed),
            S::BufferTooSmall,
            "the buffer has 4",
        );
        assert_eq!(needed, 9);
        assert!(short.iter().all(|&c| c == b'#' as c_char), "nothing copied");
        let mut exact = vec![b'#' as c_char; needed];
        assert_eq!(
            memhc_corr_results_name(r, 1, exact.as_mut_ptr(), exact.len(), null_mut()),
            S::Ok
        );
        assert_eq!(
            CStr::from_ptr(exact.as_ptr()).to_str().ok(),
            Some("C_pi_3pt")
        );
        let missing = CString::new("C_rho_rho").unwrap_or_default();
        let mut i = 5;
        expect(
            memhc_corr_results_find(r, missing.as_ptr(), &mut i),
            S::NotFound,
            "no correlator named \"C_rho_rho\" (there are: C_pi_pi, C_pi_3pt)",
        );
        assert_eq!(i, 5);
    }
    assert_eq!(memhc_corr_results_release(r), S::Ok);
    assert_eq!(memhc_corr_release(h), S::Ok);
}

#[test]
fn double_release_and_use_after_release() {
    let (_, h) = open(&pion());
    let (_, r) = run(h);
    assert_eq!(memhc_corr_results_release(r), S::Ok);
    expect(
        memhc_corr_results_release(r),
        S::InvalidHandle,
        "released already",
    );
    let mut n = 0;
    // SAFETY: a local out-parameter.
    expect(
        unsafe { memhc_corr_results_count(r, &mut n) },
        S::InvalidHandle,
        "released already",
    );
    assert_eq!(memhc_corr_release(h), S::Ok);
    expect(memhc_corr_release(h), S::InvalidHandle, "released already");
    let mut r2 = MemhcCorrResults::default();
    // SAFETY: a local out-parameter.
    expect(
        unsafe { memhc_corr_run(h, null(), &mut r2) },
        S::InvalidHandle,
        "released already",
    );
    // SAFETY: as above.
    expect(
        unsafe { memhc_corr_reference(h, &mut r2) },
        S::InvalidHandle,
        "released already",
    );
    assert_eq!(r2, MemhcCorrResults::default());
}

#[test]
fn missing_and_bad_files_and_bad_runs() {
    let dir = scratch();
    let absent = c_path(&dir.join("absent.json"));
    let (s, h) = open(&absent);
    expect(s, S::Io, "absent.json");
    assert_eq!(h, MemhcCorr::default());
    let bad = dir.join("bad.json");
    let text = DOC_EXAMPLE.replace(r#"["a", "b", "c"]"#, r#"["a", "b", "x"]"#);
    assert!(std::fs::write(&bad, text).is_ok());
    let (s, _) = open(&c_path(&bad));
    expect(
        s,
        S::InvalidFile,
        "bad.json: graph g1, loop 0: unknown node \"x\"",
    );
    let npy = dir.join("npy.json");
    let text = DOC_EXAMPLE.replace(r#"{"seed": 3}"#, r#"{"npy": "c.npy"}"#);
    assert!(std::fs::write(&npy, text).is_ok());
    let (s, _) = open(&c_path(&npy));
    expect(s, S::InvalidFile, "node c");
    let broken = dir.join("broken.json");
    assert!(std::fs::write(&broken, "{\"format\": ").is_ok());
    let (s, _) = open(&c_path(&broken));
    expect(s, S::InvalidFile, "broken.json");

    let (_, h) = open(&pion());
    let mut cfg = memhc_config_default();
    let fifo = CString::new("fifo").unwrap_or_default();
    cfg.policy = fifo.as_ptr();
    let mut r = MemhcCorrResults::default();
    // SAFETY: a valid configuration whose strings outlive the call; a local out-parameter.
    expect(
        unsafe { memhc_corr_run(h, &cfg, &mut r) },
        S::UnknownName,
        "fifo",
    );
    let mut cfg = memhc_config_default();
    cfg.budget_bytes = 1024;
    // SAFETY: as above.
    expect(
        unsafe { memhc_corr_run(h, &cfg, &mut r) },
        S::DoesNotFit,
        "",
    );
    assert_eq!(r, MemhcCorrResults::default());

    // Writing: by extension; a directory that does not exist is an I/O error.
    let (_, r) = run(h);
    let out = c_path(&dir.join("c.json"));
    // SAFETY: NUL-terminated strings.
    unsafe {
        assert_eq!(
            memhc_corr_results_write(r, out.as_ptr()),
            S::Ok,
            "{}",
            last()
        );
        let text = std::fs::read_to_string(dir.join("c.json")).unwrap_or_default();
        assert!(text.contains("memhc-corr-values/1") && text.contains("C_pi_3pt"));
        let csv = c_path(&dir.join("c.csv"));
        assert_eq!(memhc_corr_results_write(r, csv.as_ptr()), S::Ok);
        let txt = c_path(&dir.join("c.txt"));
        expect(
            memhc_corr_results_write(r, txt.as_ptr()),
            S::InvalidArgument,
            "unknown extension 'txt'",
        );
        let nowhere = c_path(&dir.join("no/such/dir/c.json"));
        expect(
            memhc_corr_results_write(r, nowhere.as_ptr()),
            S::Io,
            "no/such/dir",
        );
        let h5 = c_path(&dir.join("c.h5"));
        expect(
            memhc_corr_results_write(r, h5.as_ptr()),
            S::Unavailable,
            "hdf5",
        );
    }
    assert_eq!(memhc_corr_results_release(r), S::Ok);
    assert_eq!(memhc_corr_release(h), S::Ok);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn one_file_runs_on_many_threads_at_once() {
    let (s, h) = open(&pion());
    assert_eq!(s, S::Ok);
    let mut reference = MemhcCorrResults::default();
    // SAFETY: a local out-parameter.
    assert_eq!(unsafe { memhc_corr_reference(h, &mut reference) }, S::Ok);
    let workers: Vec<_> = (0..3)
        .map(|_| {
            std::thread::spawn(move || {
                let (s, r) = run(h);
                assert_eq!(s, S::Ok, "{}", last());
                let err = compare(r, reference);
                assert_eq!(memhc_corr_results_release(r), S::Ok);
                err
            })
        })
        .collect();
    for w in workers {
        assert!(w.join().map(|e| e <= 1e-12).unwrap_or(false));
    }
    assert_eq!(memhc_corr_results_release(reference), S::Ok);
    assert_eq!(memhc_corr_release(h), S::Ok);
}
