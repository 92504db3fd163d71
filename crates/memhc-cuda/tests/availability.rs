//! Opening the backend: on a machine without a driver, a device or cuBLAS, construction
//! returns `BackendError::Unavailable` with a one-line reason and never panics (this is what
//! CI checks, having no GPU); on a machine with a GPU it opens and describes the device.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use memhc_core::{Backend, BackendError};
use memhc_cuda::{CudaBackend, GpuOptions};

#[test]
fn construction_says_why_it_cannot_open() {
    match CudaBackend::new() {
        Ok(backend) => {
            let name = backend.name();
            println!("opened: {name}");
            assert!(name.starts_with("cuda: "), "{name}");
            assert!(name.contains("libcublas"), "{name}");
            let info = backend.api().info();
            assert!(backend.budget() < info.free_bytes && backend.budget() > 0);
            assert_eq!(backend.mem_info().unwrap().total, backend.budget());
        }
        Err(BackendError::Unavailable(reason)) => {
            println!("SKIPPED the device checks (as expected without a GPU): {reason}");
            assert!(!reason.is_empty() && !reason.contains('\n'), "{reason:?}");
            assert!(
                ["driver", "device", "cuBLAS", "libcuda", "libcublas"]
                    .iter()
                    .any(|w| reason.contains(w)),
                "the reason names what is missing: {reason}"
            );
        }
        Err(other) => panic!("expected Unavailable or a backend, got {other:?}"),
    }
}

#[test]
fn the_probe_agrees_with_construction() {
    match (memhc_cuda::probe(), CudaBackend::new()) {
        (Ok(p), Ok(_)) => {
            assert!(p.devices > 0);
            assert!(p.blas_library.contains("libcublas"), "{p:?}");
        }
        (Err(BackendError::Unavailable(a)), Err(BackendError::Unavailable(b))) => {
            assert_eq!(a, b, "the backend reports the probe's reason");
            assert!(!a.contains('\n'));
        }
        (p, b) => panic!("probe {p:?} but construction {:?}", b.map(|b| b.name())),
    }
}

#[test]
fn every_constructor_fails_the_same_clear_way_or_checks_its_arguments() {
    let available = CudaBackend::new().is_ok();
    let zero = CudaBackend::with_budget(0);
    let huge = CudaBackend::with_budget(usize::MAX);
    let absent = CudaBackend::with_options(GpuOptions::default().device(1 << 20));
    for result in [zero, huge, absent] {
        match result {
            Err(BackendError::Unavailable(reason)) => {
                assert!(!reason.contains('\n'));
                // A missing device ordinal is "unavailable" too, with a GPU or without.
                if available {
                    assert!(reason.contains("no CUDA device"), "{reason}");
                }
            }
            Err(BackendError::InvalidArgument { reason, .. }) => {
                assert!(available, "arguments are only checked once a device opened");
                assert!(reason.contains("budget"), "{reason}");
            }
            Err(other) => panic!("unexpected error {other:?}"),
            Ok(_) => panic!("a zero, impossible or absent-device budget was accepted"),
        }
    }
}
