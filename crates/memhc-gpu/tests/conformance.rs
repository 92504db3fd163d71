//! memhc-testkit's conformance suite on `GpuBackend<Fake>`: the code both GPU backends share, on
//! a device that runs queued work only when something waits for it (and, for comparison, on
//! one that runs it at once, and on one that also runs it when queried), with copies in many
//! small pieces, and without managed memory.

#![allow(clippy::expect_used)]

mod common;

use std::convert::Infallible;

use common::fake::{FakeConfig, Progress};
use common::{FakeBackend, backend, tiny_staging, with_progress};
use memhc_gpu::GpuOptions;

fn made(progress: Progress) -> Result<FakeBackend, Infallible> {
    Ok(with_progress(progress))
}

mod lazy {
    memhc_testkit::backend_conformance_tests!(|| super::made(super::Progress::Lazy));
}

mod on_query {
    memhc_testkit::backend_conformance_tests!(|| super::made(super::Progress::OnQuery));
}

mod eager {
    memhc_testkit::backend_conformance_tests!(|| super::made(super::Progress::Eager));
}

mod small_pieces {
    use super::*;
    memhc_testkit::backend_conformance_tests!(|| Ok::<_, Infallible>(backend(
        FakeConfig::default(),
        GpuOptions::default().staging(tiny_staging()),
    )));
}

/// Every one-product GEMM computed with three real products (`ComplexGemm::Gauss`), held to
/// the suite's tolerances.
mod gauss {
    use super::*;
    memhc_testkit::backend_conformance_tests!(|| Ok::<_, Infallible>(backend(
        FakeConfig::default(),
        GpuOptions::default().complex_gemm(memhc_gpu::ComplexGemm::Gauss),
    )));
}

mod without_managed_memory {
    use super::*;
    memhc_testkit::backend_conformance_tests!(|| Ok::<_, Infallible>(backend(
        FakeConfig {
            managed: false,
            ..FakeConfig::default()
        },
        GpuOptions::default(),
    )));
}

/// The whole suite on one backend with a small budget (256 MiB), in one go.
#[test]
fn whole_suite_under_a_small_budget() {
    let b = backend(
        FakeConfig::default(),
        GpuOptions::default().budget(256 << 20),
    );
    if let Err(failure) = memhc_testkit::conformance::run_all(&b) {
        panic!("{failure}");
    }
    common::assert_clean(&b);
}
