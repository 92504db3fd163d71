//! The conformance suite (memhc-testkit) on the CUDA backend. Each test prints `SKIPPED` and
//! the reason when this machine has no usable NVIDIA GPU; any other failure to open a device
//! that is there fails the test.

mod common;

memhc_testkit::backend_conformance_tests!(common::backend);

/// The whole suite on a backend with a small budget (256 MiB), run in one go.
#[test]
fn whole_suite_under_a_small_budget() {
    let b = memhc_testkit::conformance::obtain("whole_suite_under_a_small_budget", || {
        common::backend_with(Some(256 << 20))
    });
    if let Some(b) = b
        && let Err(failure) = memhc_testkit::conformance::run_all(&b)
    {
        panic!("{failure}");
    }
}

/// The suite with tiled copies per block column (`cuMemcpy3DAsync`, `TiledCopies::PerColumn`).
mod per_column {
    memhc_testkit::backend_conformance_tests!(|| super::common::backend_with_options(
        memhc_cuda::GpuOptions::default().tiled(memhc_cuda::TiledCopies::PerColumn)
    ));
}

/// The suite with GEMM calls of one product computed from three real products
/// (`cublasZgemm3m`, `ComplexGemm::Gauss`); skipped, saying why, where cuBLAS has none.
mod gauss {
    memhc_testkit::backend_conformance_tests!(|| super::common::backend_with_options(
        memhc_cuda::GpuOptions::default().complex_gemm(memhc_cuda::ComplexGemm::Gauss)
    ));
}
