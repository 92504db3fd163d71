//! Timing of the work a [`GpuBackend`](crate::GpuBackend) enqueues
//! ([`Backend::set_timing`](memhc_backend::Backend::set_timing)): while timing is on, every copy
//! and every GEMM or GEAM batch is bracketed by two timing events on its stream, and a span's
//! times are the elapsed times from one base event, recorded when timing was first switched
//! on, to those two. Timing events are recycled once their span has been read; with timing
//! off, nothing is recorded.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use memhc_backend::BackendError;
use memhc_backend::timeline::{WorkKind, WorkSpan};

use crate::api::DeviceApi;

/// At most this many idle timing events are kept for reuse.
const SPARE_CAP: usize = 256;

/// The start of a piece of timed work: its event, recorded on its stream before the enqueue.
#[derive(Debug)]
pub(crate) struct Mark<D: DeviceApi>(D::Event);

/// A piece of work whose end may not have completed yet.
#[derive(Debug)]
struct Pending<D: DeviceApi> {
    stream: u64,
    kind: WorkKind,
    start: D::Event,
    end: D::Event,
}

/// The clock: the base event and the stream it (and each reading of the clock) is recorded on.
#[derive(Debug)]
struct Clock<D: DeviceApi> {
    // Field order is drop order: the event before the stream it was recorded on.
    base: D::Event,
    stream: D::Stream,
}

#[derive(Debug)]
struct State<D: DeviceApi> {
    clock: Option<Clock<D>>,
    pending: Vec<Pending<D>>,
    spare: Vec<D::Event>,
}

/// The switch, the clock, the spans in flight and the spare timing events.
#[derive(Debug)]
pub(crate) struct Timing<D: DeviceApi> {
    on: AtomicBool,
    state: Mutex<State<D>>,
}

impl<D: DeviceApi> Default for Timing<D> {
    fn default() -> Self {
        Timing {
            on: AtomicBool::new(false),
            state: Mutex::new(State {
                clock: None,
                pending: Vec::new(),
                spare: Vec::new(),
            }),
        }
    }
}

/// Nanoseconds from a number of milliseconds (negative, as a driver may report for events a
/// hair apart, is 0).
fn ns(ms: f32) -> u64 {
    let ns = (f64::from(ms) * 1e6).round();
    if ns.is_finite() && ns > 0.0 {
        ns as u64
    } else {
        0
    }
}

impl<D: DeviceApi> Timing<D> {
    fn state(&self) -> MutexGuard<'_, State<D>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Switches timing on or off. On, the first time, creates the clock (a stream and the base
    /// event, recorded on it); returns false, and stays off, if that fails.
    pub(crate) fn set(&self, api: &Arc<D>, on: bool) -> bool {
        if !on {
            self.on.store(false, Ordering::Release);
            return true;
        }
        let mut state = self.state();
        if state.clock.is_none() {
            let clock = api.stream_create().and_then(|stream| {
                let base = api.timing_event_create()?;
                api.event_record(&base, &stream)?;
                Ok(Clock { base, stream })
            });
            match clock {
                Ok(clock) => state.clock = Some(clock),
                Err(_) => return false,
            }
        }
        self.on.store(true, Ordering::Release);
        true
    }

    fn is_on(&self) -> bool {
        self.on.load(Ordering::Acquire)
    }

    /// A timing event: a spare one, or a new one.
    fn event(&self, api: &D) -> Result<D::Event, BackendError> {
        match self.state().spare.pop() {
            Some(event) => Ok(event),
            None => api.timing_event_create(),
        }
    }

    /// Keeps `event` for reuse, or drops it past the cap.
    fn recycle(state: &mut State<D>, event: D::Event) {
        if state.spare.len() < SPARE_CAP {
            state.spare.push(event);
        }
    }

    /// With timing on, records the start of a piece of work on `stream`; off, does nothing.
    pub(crate) fn begin(
        &self,
        api: &D,
        stream: &D::Stream,
    ) -> Result<Option<Mark<D>>, BackendError> {
        if !self.is_on() {
            return Ok(None);
        }
        let event = self.event(api)?;
        match api.event_record(&event, stream) {
            Ok(()) => Ok(Some(Mark(event))),
            Err(e) => {
                Self::recycle(&mut self.state(), event);
                Err(e)
            }
        }
    }

    /// Records the end of the work `mark` began (if any) on `stream`, as work of `kind` on
    /// stream number `number`, once `enqueued` (the enqueueing) succeeded; a failed enqueue
    /// records nothing and gives the start event back.
    pub(crate) fn end<T>(
        &self,
        api: &D,
        stream: &D::Stream,
        number: u64,
        kind: WorkKind,
        mark: Option<Mark<D>>,
        enqueued: Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        let Some(Mark(start)) = mark else {
            return enqueued;
        };
        if enqueued.is_err() {
            Self::recycle(&mut self.state(), start);
            return enqueued;
        }
        let recorded = self.event(api).and_then(|end| {
            api.event_record(&end, stream)?;
            Ok(end)
        });
        let mut state = self.state();
        match recorded {
            Ok(end) => {
                state.pending.push(Pending {
                    stream: number,
                    kind,
                    start,
                    end,
                });
                enqueued
            }
            Err(e) => {
                Self::recycle(&mut state, start);
                Err(e)
            }
        }
    }

    /// The spans whose end has completed, in the order they were enqueued; the others stay
    /// pending. A span whose events cannot be read is dropped.
    pub(crate) fn take(&self, api: &D) -> Vec<WorkSpan> {
        let mut state = self.state();
        let pending = std::mem::take(&mut state.pending);
        let Some(base) = state.clock.as_ref().map(|c| &c.base) else {
            return Vec::new();
        };
        let mut spans = Vec::new();
        let mut still = Vec::new();
        let mut done = Vec::new();
        for p in pending {
            match api.event_query(&p.end) {
                Ok(false) => still.push(p),
                Ok(true) => {
                    // The duration from the span's own two events: a float of milliseconds
                    // since the base loses microseconds once a run is minutes long, and only
                    // the start needs to be placed against the base.
                    let times = api.event_elapsed_ms(base, &p.start).and_then(|s| {
                        let d = api.event_elapsed_ms(&p.start, &p.end)?;
                        Ok((ns(s), ns(s).saturating_add(ns(d))))
                    });
                    if let Ok((start_ns, end_ns)) = times {
                        spans.push(WorkSpan {
                            stream: p.stream,
                            kind: p.kind,
                            start_ns,
                            end_ns: end_ns.max(start_ns),
                        });
                    }
                    done.push(p);
                }
                // The driver cannot say: the span is lost, its events dropped.
                Err(_) => drop(p),
            }
        }
        state.pending = still;
        for p in done {
            Self::recycle(&mut state, p.start);
            Self::recycle(&mut state, p.end);
        }
        spans
    }

    /// The clock now: a timing event recorded on the clock's stream, waited for, against the
    /// base. `None` before timing was first switched on, or if the driver fails.
    pub(crate) fn now(&self, api: &D) -> Option<u64> {
        // Not started: no clock, and no event made.
        self.state().clock.as_ref()?;
        let event = self.event(api).ok()?;
        let mut state = self.state();
        let clock = state.clock.as_ref()?;
        let reading = api
            .event_record(&event, &clock.stream)
            .and_then(|()| api.event_synchronize(&event))
            .and_then(|()| api.event_elapsed_ms(&clock.base, &event));
        Self::recycle(&mut state, event);
        reading.ok().map(ns)
    }
}

#[cfg(test)]
mod tests {
    use super::ns;

    #[test]
    fn milliseconds_become_nanoseconds() {
        assert_eq!(ns(0.001), 1_000);
        assert_eq!(ns(2.5), 2_500_000);
        assert_eq!(ns(-0.5), 0);
        assert_eq!(ns(f32::NAN), 0);
    }
}
