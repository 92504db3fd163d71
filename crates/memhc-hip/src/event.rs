//! Events: an owning wrapper of `hipEvent_t`, the backend's [`HipEvent`] (shared by its clones,
//! with the CUDA rule that an event never recorded counts as complete), and the fences that
//! tell when a staging buffer or a pointer table may be reused.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use memhc_core::BackendError;

use crate::check::{self, Libs};
use crate::ffi::{HipEventT, HipStreamT};

/// One `hipEvent_t` (created without timing), destroyed on drop.
#[derive(Debug)]
pub(crate) struct RawEvent {
    event: HipEventT,
    libs: Libs,
}

// SAFETY: a HIP event handle may be used from any thread: the HIP runtime synchronises its own
// use of it, and this wrapper only passes the handle to HIP.
unsafe impl Send for RawEvent {}
// SAFETY: as above; no method mutates Rust-side state.
unsafe impl Sync for RawEvent {}

impl RawEvent {
    /// A new event on the current device.
    pub(crate) fn new(libs: Libs) -> Result<Self, BackendError> {
        Ok(RawEvent {
            event: check::event_create(libs)?,
            libs,
        })
    }

    /// Records the event on `stream`.
    ///
    /// # Safety
    /// `stream` is a live stream.
    pub(crate) unsafe fn record(&self, stream: HipStreamT) -> Result<(), BackendError> {
        // SAFETY: the event is live (owned); the caller guarantees the stream.
        unsafe { check::event_record(self.libs, self.event, stream) }
    }

    /// Whether the most recent record has completed.
    pub(crate) fn query(&self) -> Result<bool, BackendError> {
        // SAFETY: the event is live (owned).
        unsafe { check::event_query(self.libs, self.event) }
    }

    /// Waits for the most recent record.
    pub(crate) fn synchronize(&self) -> Result<(), BackendError> {
        // SAFETY: the event is live (owned).
        unsafe { check::event_synchronize(self.libs, self.event) }
    }

    /// The raw handle, for `hipStreamWaitEvent`.
    pub(crate) fn handle(&self) -> HipEventT {
        self.event
    }
}

impl Drop for RawEvent {
    fn drop(&mut self) {
        // SAFETY: the event is owned and destroyed only here. A failure cannot be reported
        // from a destructor; the handle is gone either way.
        let _ = unsafe { check::event_destroy(self.libs, self.event) };
    }
}

/// A fence: an event recorded once, right after the work that uses a staging buffer or a
/// pointer table, shared by the pools that hold those until it completes.
pub(crate) type Fence = Arc<RawEvent>;

/// Records a new fence on `stream`.
///
/// # Safety
/// `stream` is a live stream.
pub(crate) unsafe fn fence(libs: Libs, stream: HipStreamT) -> Result<Fence, BackendError> {
    let event = RawEvent::new(libs)?;
    // SAFETY: the caller guarantees the stream.
    unsafe { event.record(stream)? };
    Ok(Arc::new(event))
}

/// A completion marker of the HIP backend; clones refer to the same event.
///
/// Waiting on it follows HIP's (and CUDA's) rule: a wait concerns the most recent record at
/// the time of the call. An event never recorded counts as complete; this is tracked here
/// rather than left to the HIP runtime, whose answer for an unrecorded event has varied.
#[derive(Clone, Debug)]
pub struct HipEvent(Arc<EventState>);

#[derive(Debug)]
struct EventState {
    raw: RawEvent,
    recorded: AtomicBool,
}

impl HipEvent {
    pub(crate) fn new(libs: Libs) -> Result<Self, BackendError> {
        Ok(HipEvent(Arc::new(EventState {
            raw: RawEvent::new(libs)?,
            recorded: AtomicBool::new(false),
        })))
    }

    /// Records the event on `stream`.
    ///
    /// # Safety
    /// `stream` is a live stream.
    pub(crate) unsafe fn record(&self, stream: HipStreamT) -> Result<(), BackendError> {
        // SAFETY: the caller guarantees the stream.
        unsafe { self.0.raw.record(stream)? };
        self.0.recorded.store(true, Ordering::Release);
        Ok(())
    }

    /// The raw event if it was ever recorded (`None`: it counts as complete).
    pub(crate) fn recorded(&self) -> Option<&RawEvent> {
        self.0
            .recorded
            .load(Ordering::Acquire)
            .then_some(&self.0.raw)
    }

    /// Whether the most recent record has completed.
    pub(crate) fn query(&self) -> Result<bool, BackendError> {
        self.recorded().map_or(Ok(true), RawEvent::query)
    }

    /// Waits for the most recent record.
    pub(crate) fn synchronize(&self) -> Result<(), BackendError> {
        self.recorded().map_or(Ok(()), RawEvent::synchronize)
    }
}
