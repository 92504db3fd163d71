//! Completion markers of a [`GpuBackend`](crate::GpuBackend): events that follow the CUDA
//! rule that one never recorded is complete ([`GpuEvent`]), and the fences that say when a
//! staging buffer may be reused or a host buffer read.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use memhc_backend::BackendError;

use crate::api::DeviceApi;
use crate::staging::Completion;

/// An event recorded once, right after the device work that uses a staging buffer or writes a
/// host buffer, kept until that work has completed.
#[derive(Debug)]
pub(crate) struct Fence<D: DeviceApi> {
    event: D::Event,
    api: Arc<D>,
}

impl<D: DeviceApi> Fence<D> {
    /// Records a new fence on `stream`.
    pub(crate) fn record(api: &Arc<D>, stream: &D::Stream) -> Result<Self, BackendError> {
        let event = api.event_create()?;
        api.event_record(&event, stream)?;
        Ok(Fence {
            event,
            api: Arc::clone(api),
        })
    }
}

impl<D: DeviceApi> Completion for Fence<D> {
    fn query(&self) -> Result<bool, BackendError> {
        self.api.event_query(&self.event)
    }

    fn wait(&self) -> Result<(), BackendError> {
        self.api.event_synchronize(&self.event)
    }
}

/// A completion marker of a [`GpuBackend`](crate::GpuBackend); clones refer to the same event.
///
/// A wait concerns the most recent record at the time of the call. An event never recorded
/// counts as complete: this is tracked here rather than left to the driver (CUDA says so, and
/// HIP's answer for an unrecorded event has varied).
#[derive(Debug)]
pub struct GpuEvent<D: DeviceApi>(Arc<EventState<D>>);

#[derive(Debug)]
struct EventState<D: DeviceApi> {
    raw: D::Event,
    recorded: AtomicBool,
}

impl<D: DeviceApi> Clone for GpuEvent<D> {
    fn clone(&self) -> Self {
        GpuEvent(Arc::clone(&self.0))
    }
}

impl<D: DeviceApi> GpuEvent<D> {
    pub(crate) fn new(raw: D::Event) -> Self {
        GpuEvent(Arc::new(EventState {
            raw,
            recorded: AtomicBool::new(false),
        }))
    }

    /// The driver's event, for a record.
    pub(crate) fn raw(&self) -> &D::Event {
        &self.0.raw
    }

    /// Notes that the event has been recorded.
    pub(crate) fn mark_recorded(&self) {
        self.0.recorded.store(true, Ordering::Release);
    }

    /// The driver's event if it was ever recorded (`None`: it counts as complete).
    pub(crate) fn recorded(&self) -> Option<&D::Event> {
        self.0
            .recorded
            .load(Ordering::Acquire)
            .then_some(&self.0.raw)
    }
}
