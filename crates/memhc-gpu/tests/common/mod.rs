//! What the tests of the skeleton share: the fake device, and backends on it.

#![allow(dead_code, clippy::expect_used)]

pub mod fake;

use fake::{Fake, FakeConfig, Progress};
use memhc_gpu::{GpuBackend, GpuOptions, StagingLimits};

/// The backend on a fake device.
pub type FakeBackend = GpuBackend<Fake>;

/// A backend on a fresh fake device.
pub fn backend(config: FakeConfig, options: GpuOptions) -> FakeBackend {
    GpuBackend::on(Fake::new(config), options).expect("a backend on a fake device")
}

/// A backend on a fresh fake device that runs work `progress`-wise, with default options.
pub fn with_progress(progress: Progress) -> FakeBackend {
    backend(
        FakeConfig {
            progress,
            ..FakeConfig::default()
        },
        GpuOptions::default(),
    )
}

/// Staging limits that cut every copy of the tests into many pieces, with few in flight.
pub fn tiny_staging() -> StagingLimits {
    StagingLimits {
        chunk: 1000,
        idle_cap: 2 << 20,
        busy_cap: 2 << 20,
    }
}

/// Panics if the fake device saw anything a real one would punish.
pub fn assert_clean(b: &FakeBackend) {
    let v = b.api().stats().violations;
    assert!(v.is_empty(), "{v:#?}");
}
