//! Timing of the work the streams execute ([`Backend::set_timing`](memhc_backend::Backend::set_timing)):
//! each worker thread reads the host's monotonic clock when a copy or GEMM batch starts and
//! ends, relative to one origin for the whole backend.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use memhc_backend::timeline::{WorkKind, WorkSpan};

use super::stream::Job;

/// The switch and the spans recorded.
#[derive(Debug)]
pub(super) struct Timing {
    on: AtomicBool,
    origin: Instant,
    spans: Mutex<Vec<WorkSpan>>,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            on: AtomicBool::new(false),
            origin: Instant::now(),
            spans: Mutex::new(Vec::new()),
        }
    }
}

impl Timing {
    pub(super) fn set(&self, on: bool) {
        self.on.store(on, Ordering::Release);
    }

    pub(super) fn is_on(&self) -> bool {
        self.on.load(Ordering::Acquire)
    }

    pub(super) fn take(&self) -> Vec<WorkSpan> {
        std::mem::take(&mut *self.spans.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Nanoseconds since the origin, now.
    pub(super) fn now(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// `job`, recording when it starts and ends as work of `kind` on stream `stream`.
    pub(super) fn timed(timing: &Arc<Timing>, stream: u64, kind: WorkKind, job: Job) -> Job {
        let timing = Arc::clone(timing);
        Box::new(move || {
            let start = timing.now();
            let outcome = job();
            timing.record(stream, kind, start);
            outcome
        })
    }

    /// Records work of `kind` on stream `stream` that ran from `start_ns` until now.
    pub(super) fn record(&self, stream: u64, kind: WorkKind, start_ns: u64) {
        let span = WorkSpan {
            stream,
            kind,
            start_ns,
            end_ns: self.now().max(start_ns),
        };
        self.spans
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(span);
    }
}
