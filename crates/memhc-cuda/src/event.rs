//! Events: shared handles to one CUDA event each.

use std::sync::Arc;

use cudarc::driver::sys::CUevent;
use memhc_core::BackendError;

use crate::context::Context;
use crate::driver;

/// A CUDA event without timing. Clones refer to the same event (the [`memhc_core::Backend`]
/// contract); it is destroyed when the last clone goes.
#[derive(Clone, Debug)]
pub struct CudaEvent(Arc<RawEvent>);

#[derive(Debug)]
struct RawEvent {
    raw: CUevent,
    ctx: Arc<Context>,
}

// SAFETY: an event handle may be recorded, waited on, queried and destroyed from any thread.
unsafe impl Send for RawEvent {}
// SAFETY: as above; the driver synchronises concurrent calls on one event.
unsafe impl Sync for RawEvent {}

impl CudaEvent {
    /// Creates an event in `ctx` (never recorded: it counts as complete).
    pub(crate) fn new(ctx: &Arc<Context>) -> Result<Self, BackendError> {
        ctx.bind()?;
        let raw = driver::event_create()?;
        Ok(CudaEvent(Arc::new(RawEvent {
            raw,
            ctx: Arc::clone(ctx),
        })))
    }

    /// The raw handle, valid while `self` lives.
    pub(crate) fn raw(&self) -> CUevent {
        self.0.raw
    }

    /// Whether the most recent record has completed.
    pub(crate) fn query(&self) -> Result<bool, BackendError> {
        self.0.ctx.bind()?;
        // SAFETY: the event lives as long as `self`.
        unsafe { driver::event_query(self.raw()) }
    }

    /// Blocks until the most recent record has completed.
    pub(crate) fn synchronize(&self) -> Result<(), BackendError> {
        self.0.ctx.bind()?;
        // SAFETY: the event lives as long as `self`.
        unsafe { driver::event_synchronize(self.raw()) }
    }
}

impl Drop for RawEvent {
    fn drop(&mut self) {
        if self.ctx.bind().is_ok() {
            // SAFETY: the last clone is going; an event may be destroyed before it completes.
            let _ = unsafe { driver::event_destroy(self.raw) };
        }
    }
}
