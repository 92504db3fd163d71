//! The device and its primary context, shared by everything the backend creates.

use cudarc::driver::sys::{CUcontext, CUctx_flags, CUdevice};
use memhc_backend::BackendError;
use memhc_gpu::HostWait;

use crate::driver;

/// One device's primary context, retained for as long as any object of the backend lives
/// (every owning type holds an `Arc` of it), and made current on whichever thread calls in.
#[derive(Debug)]
pub struct Context {
    ordinal: i32,
    device: CUdevice,
    raw: CUcontext,
    wait: HostWait,
}

// SAFETY: a CUDA context is a process-wide driver object that any thread may make current and
// use; this type only hands out its handle to driver calls.
unsafe impl Send for Context {}
// SAFETY: as above; the driver serialises what needs serialising inside a context.
unsafe impl Sync for Context {}

impl Context {
    /// Retains device `ordinal`'s primary context, its host threads waiting as `wait` says
    /// (`Auto` leaves the context's flags as they are), and makes it current.
    pub fn retain(ordinal: i32, wait: HostWait) -> Result<Self, BackendError> {
        let device = driver::device(ordinal)?;
        let sched = match wait {
            HostWait::Auto => None,
            HostWait::Spin => Some(CUctx_flags::CU_CTX_SCHED_SPIN),
            HostWait::Yield => Some(CUctx_flags::CU_CTX_SCHED_YIELD),
            HostWait::Block => Some(CUctx_flags::CU_CTX_SCHED_BLOCKING_SYNC),
        };
        if let Some(flag) = sched {
            driver::primary_ctx_set_flags(device, flag as u32)?;
        }
        let raw = driver::primary_ctx_retain(device)?;
        let ctx = Context {
            ordinal,
            device,
            raw,
            wait,
        };
        ctx.bind()?;
        Ok(ctx)
    }

    /// Makes the context current on the calling thread (the driver's calls act on the current
    /// context). Cheap: every entry point of the backend calls it.
    pub fn bind(&self) -> Result<(), BackendError> {
        // SAFETY: `raw` stays retained until `self` is dropped.
        unsafe { driver::set_current(self.raw) }
    }

    /// Whether host threads sleep while they wait (events are then created to block too).
    pub fn blocks(&self) -> bool {
        self.wait == HostWait::Block
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> i32 {
        self.ordinal
    }

    /// The device handle.
    pub fn device(&self) -> CUdevice {
        self.device
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: paired with the retain in `Context::retain`; every object of the context
        // holds an `Arc<Context>`, so all of them are gone by now.
        let _ = unsafe { driver::primary_ctx_release(self.device) };
    }
}
