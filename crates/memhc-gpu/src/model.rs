//! A modelled device: [`GpuBackend`] over [`ModelDevice`], a [`DeviceApi`](crate::DeviceApi)
//! that holds no data and gives every copy, GEMM and host-side staging step a modelled
//! duration on virtual clocks, so that a schedule can be judged without a GPU.
//!
//! # The model
//!
//! * **Clocks** ([`Clocks`]): one for the host, one per stream, and the busy times of three
//!   engines: one host-to-device copy engine, one device-to-host copy engine, and the SMs.
//!   Work on a stream starts at the latest of the end of the work before it on the stream, the
//!   events the stream waits for, the host's enqueue plus the launch latency, and the first
//!   moment its engine is free for its whole duration; copies on the two engines overlap each
//!   other and the GEMMs; two copies in one direction never overlap.
//! * **Durations** ([`ModelParams`]): a copy takes `latency + bytes / bandwidth`; a BLAS call
//!   its fixed time plus its flops at the rate of its shape, from a table by `N` (the measured
//!   H100 rates, interpolated); a GEAM its bytes at the device's memory bandwidth.
//! * **The host**: every driver call costs [`ModelParams::host_call_s`]; filling a staging
//!   buffer costs its bytes at [`ModelParams::staging_write_rate`], emptying one (page faults
//!   on the destination included) at [`ModelParams::staging_read_rate`], pinning a new buffer
//!   at [`ModelParams::pin_rate`]; a device allocation or free its fixed cost, a free waiting
//!   for the device first ([`ModelParams::free_synchronizes`]). The host waits (its clock
//!   jumps) where the backend's code waits: a synchronisation, a staging buffer's fence, a
//!   read-back. Because the device is run by [`GpuBackend`]'s own code, the staging in pieces,
//!   the in-flight cap, the pipelined read-back and the pointer-table uploads are today's
//!   exactly: the model judges the schedule the runtime issues now.
//! * **Not modelled**: work the host does between backend calls that no backend call shows
//!   (freeing the host copy of a released node: about 1.1 ms per 36 MiB node with glibc on
//!   the recorded host; the runtime's own bookkeeping, 1-2 µs per contraction). Managed
//!   memory: the model has none, so the unified-memory mode cannot run on it.
//!
//! # Output
//!
//! [`ModelClock::report`] gives the modelled makespan (from the device's opening to the end of
//! the last work, host or device) and the modelled floor,
//! `max(flops / rate at each GEMM call's shape, bytes in / H2D bandwidth, bytes out / D2H
//! bandwidth)` over the work the run issued (a call's rate is the one it runs at: the
//! one-product table for a call of one product, [`ModelParams::gemm_call_rate`]; so no run
//! beats its floor), with the totals behind them.

mod clock;
mod device;
mod params;

pub use clock::{Clocks, Engine, ModelReport};
pub use device::{
    ModelBlas, ModelClock, ModelDevice, ModelEvent, ModelMemory, ModelPinned, ModelStream,
};
pub use params::{GemmRate, ModelParams, SETTINGS_VAR};

use memhc_backend::BackendError;

use crate::{GpuBackend, GpuOptions};

/// The modelled GPU: the GPU backend's code over a modelled device.
pub type ModelBackend = GpuBackend<ModelDevice>;

/// A modelled device under `params` with a budget of `budget` bytes (at most
/// [`ModelParams::device_memory`]), and its clocks, from which the report is read after the
/// run.
pub fn model_backend(
    params: ModelParams,
    budget: usize,
) -> Result<(ModelBackend, ModelClock), BackendError> {
    model_backend_with(params, GpuOptions::default().budget(budget))
}

/// As [`model_backend`], with the GPU backend's `options` (budget, tiled copies, complex GEMM,
/// host waits) rather than the defaults.
pub fn model_backend_with(
    params: ModelParams,
    options: GpuOptions,
) -> Result<(ModelBackend, ModelClock), BackendError> {
    let device = ModelDevice::new(params)?;
    let clock = device.clock();
    let backend = GpuBackend::on(device, options)?;
    Ok((backend, clock))
}
