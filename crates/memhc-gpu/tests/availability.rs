//! Opening a `GpuBackend`: a device the device API cannot open is a one-line
//! `BackendError::Unavailable`, the same from every constructor; one it can open is described
//! by `name()`.

#![allow(clippy::unwrap_used)]

mod common;

use common::assert_clean;
use common::fake::Fake;
use memhc_core::{Backend, BackendError};
use memhc_gpu::{GpuBackend, GpuOptions, HostWait};

#[test]
fn an_absent_device_is_a_one_line_unavailable_error() {
    for attempt in [
        GpuBackend::<Fake>::with_options(GpuOptions::default().device(1)),
        GpuBackend::<Fake>::with_options(GpuOptions::default().device(3).budget(1)),
    ] {
        match attempt {
            Err(BackendError::Unavailable(why)) => {
                assert!(why.starts_with("no fake device "), "{why}");
                assert_eq!(why.lines().count(), 1, "{why:?}");
            }
            other => panic!("expected Unavailable, got {other:?}"),
        }
    }
}

#[test]
fn a_present_device_opens_and_says_what_it_is() {
    let b = GpuBackend::<Fake>::new().unwrap();
    assert!(b.name().starts_with("fake device"), "{}", b.name());
    assert_eq!(b.device_name(), "fake device");
    assert_eq!(b.mem_info().unwrap().total, b.budget());
    let b = GpuBackend::<Fake>::with_budget(1 << 30).unwrap();
    assert_eq!(b.budget(), 1 << 30);
    assert_clean(&b);
}

#[test]
fn the_way_to_wait_reaches_the_device_it_opens() {
    for wait in [
        HostWait::Auto,
        HostWait::Spin,
        HostWait::Yield,
        HostWait::Block,
    ] {
        let b = GpuBackend::<Fake>::with_options(GpuOptions::default().host_wait(wait))
            .expect("the fake device opens");
        assert_eq!(b.api().host_wait(), wait);
    }
    assert_eq!(GpuOptions::default().host_wait, HostWait::Auto);
}
