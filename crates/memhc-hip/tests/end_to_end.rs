//! The end-to-end fixtures (memhc-testkit) on the HIP backend: hadron contractions through the
//! runtime and synthetic queues in every mode, fitting and under memory pressure, every result
//! verified against the reference. Each test prints `SKIPPED <test>: <why>` and passes when the
//! backend cannot be constructed (no ROCm, no AMD GPU).

mod common;

memhc_testkit::backend_end_to_end_tests!(common::backend_with);
