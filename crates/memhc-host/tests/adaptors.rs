//! The adaptors of `memhc-backend` around the host backend: fault injection fails exactly the
//! planned call and nothing else happens on the inner backend; statistics count what passed.

#![allow(clippy::unwrap_used)]

use memhc_backend::fault::{FaultInjector, FaultPlan};
use memhc_backend::instrumented::Instrumented;
use memhc_backend::{Backend, BackendError, BackendOp};
use memhc_host::HostBackend;

#[test]
fn nth_call_fails_once_and_does_nothing() {
    let b = FaultInjector::new(HostBackend::new(1 << 20));
    b.arm(FaultPlan::nth(&[BackendOp::Alloc], 2));
    let x = b.alloc(64).unwrap();
    let e = b.alloc(64).unwrap_err();
    assert_eq!(
        e,
        BackendError::Injected {
            op: BackendOp::Alloc,
            call: 2
        }
    );
    assert_eq!(b.inner().used(), 64, "the failed call must not allocate");
    let y = b.alloc(64).unwrap();
    assert_eq!(b.injected(), 1);
    b.free(x).unwrap();
    b.free(y).unwrap();
}

#[test]
fn oom_flavour_and_random_plans_are_reproducible() {
    let b = FaultInjector::new(HostBackend::new(1 << 20));
    b.arm(FaultPlan::nth(&[BackendOp::Alloc], 1).alloc_as_oom());
    assert!(matches!(
        b.alloc(8),
        Err(BackendError::OutOfMemory { requested: 8, .. })
    ));
    let pattern = |seed| {
        b.arm(FaultPlan::random(&[BackendOp::Alloc], 0.5, seed));
        (0..32)
            .map(|_| b.alloc(16).map(|buf| b.free(buf)).is_ok())
            .collect::<Vec<_>>()
    };
    assert_eq!(pattern(7), pattern(7));
    assert!(pattern(7).iter().any(|ok| !ok) && pattern(7).iter().any(|ok| *ok));
}

#[test]
fn counters_count_successful_calls_and_free_always_releases_live_bytes() {
    let b = Instrumented::new(FaultInjector::new(HostBackend::new(1 << 20)));
    let s = b.create_stream().unwrap();
    let x = b.alloc(64).unwrap();
    let y = b.alloc(32).unwrap();
    b.copy_h2d(&s, &[0u8; 16], &x, 0).unwrap();
    let mut out = [0u8; 8];
    b.copy_d2h(&s, &x, 0, &mut out).unwrap();
    // A refused free still releases the buffer underneath: live bytes drop, frees do not count.
    b.inner().arm(FaultPlan::nth(&[BackendOp::Free], 1));
    assert!(matches!(
        b.free(y),
        Err(BackendError::Injected {
            op: BackendOp::Free,
            call: 1
        })
    ));
    assert_eq!(b.inner().inner().used(), 64);
    // A refused allocation counts nothing.
    b.inner().arm(FaultPlan::nth(&[BackendOp::Alloc], 1));
    assert!(b.alloc(8).is_err());
    let c = b.counters();
    assert_eq!((c.allocations, c.frees), (2, 0));
    assert_eq!((c.live_bytes, c.peak_device_bytes), (64, 96));
    assert_eq!(
        (c.h2d_copies, c.h2d_bytes, c.d2h_copies, c.d2h_bytes),
        (1, 16, 1, 8)
    );
    assert!(b.name().ends_with("with fault injection"), "{}", b.name());
    b.free(x).unwrap();
    assert_eq!(b.counters().frees, 1);
}
