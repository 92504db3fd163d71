//! The end-to-end fixtures (memhc-testkit) on the CUDA backend: hadron contractions in every
//! accumulation scheme and mapping kind, and whole synthetic runs in every mode (unified memory
//! included), fitting and oversubscribed, all against the independent reference. Each test
//! prints `SKIPPED` and the reason when this machine has no usable NVIDIA GPU.

mod common;

memhc_testkit::backend_end_to_end_tests!(common::backend_with);
