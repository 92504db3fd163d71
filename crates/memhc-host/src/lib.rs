//! # memhc-host
//!
//! The two backends that run on a CPU, so that everything above the
//! [`Backend`](memhc_backend::Backend) trait builds, runs and is tested on a machine with no
//! GPU:
//!
//! * [`HostBackend`] ([`host`]): the reference device. "Device" memory is host memory under a
//!   hard byte budget, work runs asynchronously on one worker thread per stream, and GEMM goes
//!   through faer. It is deliberately strict (NaN-filled new memory, frees of buffers still in
//!   use refused, every argument validated) so that a mistake in the runtime fails a CPU test
//!   instead of surfacing only on a GPU.
//! * [`NullBackend`] ([`null`]): holds no data at all. It accounts memory and validates every
//!   call as a real backend does, so a dry run of a queue on it gives the runtime's exact memory
//!   behaviour (peak bytes, allocations, evictions, the Belady lower bound) in a fraction of the
//!   time.
//!
//! Both pass the shared conformance suite (`memhc-testkit`), the null one only its
//! non-numerical checks.

#![forbid(unsafe_code)]

pub mod host;
pub mod null;

pub use host::HostBackend;
pub use null::NullBackend;
