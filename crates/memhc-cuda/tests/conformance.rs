//! The memhc-core conformance suite on the CUDA backend. Each test prints `SKIPPED` and the
//! reason when this machine has no usable NVIDIA GPU; any other failure to open a device that
//! is there fails the test.

#![allow(clippy::expect_used)]

mod common;

memhc_core::backend_conformance_tests!(common::backend);
