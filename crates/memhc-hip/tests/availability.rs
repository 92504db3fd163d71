//! Construction on a machine without ROCm (or without an AMD GPU) is a one-line
//! `BackendError::Unavailable` that names what is missing, never a panic. This runs in CI,
//! where there is no ROCm. Where ROCm and a GPU are present, it says so and checks that
//! construction succeeds instead.

use memhc_core::{Backend, BackendError};
use memhc_hip::{GpuOptions, HipBackend};

#[test]
fn construction_without_rocm_is_a_one_line_unavailable_error() {
    match memhc_hip::probe() {
        Ok(p) => {
            eprintln!(
                "ROCm is present ({} device(s), HIP {}, rocBLAS {}): checking that construction succeeds",
                p.devices, p.runtime_library, p.blas_library
            );
            let b = HipBackend::new().unwrap_or_else(|e| panic!("construction failed: {e}"));
            assert!(b.name().starts_with("AMD "), "{}", b.name());
            let m = b
                .mem_info()
                .unwrap_or_else(|e| panic!("mem_info failed: {e}"));
            assert_eq!(m.total, b.budget());
        }
        Err(BackendError::Unavailable(why)) => {
            eprintln!("no usable ROCm and GPU here (as in CI): {why}");
            assert_eq!(why.lines().count(), 1, "not one line: {why:?}");
            assert!(
                why.contains("libamdhip64")
                    || why.contains("librocblas")
                    || why.contains("no AMD GPU")
                    || why.contains("no usable AMD GPU"),
                "names neither a library nor the device: {why}"
            );
            // Every way of constructing gives the same error, again and again (the failed
            // load is remembered, not retried into a panic).
            for attempt in [
                HipBackend::new(),
                HipBackend::new(),
                HipBackend::with_budget(1 << 30),
                HipBackend::with_options(GpuOptions::default().device(3).budget(1)),
            ] {
                match attempt {
                    Err(BackendError::Unavailable(w)) => assert_eq!(w, why),
                    Err(e) => panic!("expected Unavailable, got {e}"),
                    Ok(b) => panic!("constructed {} although the probe failed", b.name()),
                }
            }
            // The Display form is one line too, and says what it is.
            let shown = BackendError::Unavailable(why).to_string();
            assert!(shown.starts_with("backend unavailable: "), "{shown}");
            assert!(!shown.contains('\n'));
        }
        Err(e) => panic!("probe failed with {e}, expected Unavailable"),
    }
}

/// On this CI machine in particular (no ROCm installed anywhere), the error names the HIP
/// runtime library and where it was looked for.
#[test]
fn without_any_rocm_the_hip_runtime_is_named() {
    // Where a HIP runtime could be: the usual directories, LD_LIBRARY_PATH (cargo sets it for
    // tests, to its own directories), ROCM_PATH, and the ldconfig cache.
    let mut dirs: Vec<std::path::PathBuf> = [
        "/opt/rocm/lib",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
    ]
    .iter()
    .map(Into::into)
    .collect();
    if let Some(p) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    if let Some(r) = std::env::var_os("ROCM_PATH") {
        dirs.push(std::path::Path::new(&r).join("lib"));
    }
    let in_dirs = dirs.iter().any(|d| {
        std::fs::read_dir(d).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("libamdhip64"))
        })
    });
    let in_cache =
        std::fs::read("/etc/ld.so.cache").is_ok_and(|c| c.windows(11).any(|w| w == b"libamdhip64"));
    if in_dirs || in_cache {
        eprintln!("SKIPPED: a HIP runtime is installed here; the test above covers this machine");
        return;
    }
    match HipBackend::new() {
        Err(BackendError::Unavailable(why)) => {
            assert!(why.contains("libamdhip64 not found"), "{why}");
            assert!(why.contains("/opt/rocm/lib"), "{why}");
            assert!(why.contains("ROCM_PATH"), "{why}");
        }
        Err(e) => panic!("expected Unavailable, got {e}"),
        Ok(b) => panic!("constructed {} with no HIP runtime installed", b.name()),
    }
}
