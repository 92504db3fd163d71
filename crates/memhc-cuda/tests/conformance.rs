//! The conformance suite (memhc-testkit) on the CUDA backend. Each test prints `SKIPPED` and
//! the reason when this machine has no usable NVIDIA GPU; any other failure to open a device
//! that is there fails the test.

mod common;

memhc_testkit::backend_conformance_tests!(common::backend);
