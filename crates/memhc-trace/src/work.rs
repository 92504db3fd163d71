//! The work of a run on its streams: every copy and every launch's GEMMs from the event log,
//! timed by the backend's timeline where it has one.
//!
//! A stream runs its work in the order it was enqueued, and a backend that times its work
//! records one span per copy or GEMM call ([`WorkSpan`]). So the spans of the backend stream
//! that is the runtime's stream `s` ([`EventLog::stream_numbers`]), in the order they started,
//! belong to the work events of stream `s` in the order they were logged, each event taking as
//! many spans as it made calls. Span times are put on the log's axis by subtracting the
//! backend's clock when the log started ([`EventLog::backend_clock_ns`]).
//!
//! Where that cannot be done (the backend does not time its work, or a stream's spans do not
//! add up to its calls, for instance because the timeline was taken at another moment than the
//! log), the work keeps its issue time and no duration, and says so (`timed: false`).

use std::collections::HashMap;

use memhc_core::backend::timeline::WorkSpan;
use memhc_core::{EventKind, EventLog, ObjectId};

/// What a piece of work was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Work {
    /// An object copied host to device.
    CopyH2D,
    /// An object copied device to host.
    CopyD2H,
    /// A launch's GEMM (and GEAM) calls.
    Gemm,
}

/// One piece of work on a stream.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct WorkItem {
    /// The event in the log.
    pub event: usize,
    /// What it was.
    pub work: Work,
    /// The runtime's stream.
    pub stream: u32,
    /// The object copied (none for GEMMs).
    pub object: Option<ObjectId>,
    /// The queue index.
    pub queue: u64,
    /// Bytes copied (0 for GEMMs).
    pub bytes: u64,
    /// Floating-point operations (0 for copies).
    pub flops: u64,
    /// Backend calls.
    pub calls: u32,
    /// When it started: the first call's span, else the issue time (log axis, ns).
    pub start_ns: u64,
    /// When it ended: the last call's span, else the issue time.
    pub end_ns: u64,
    /// Whether the times come from the backend's timeline.
    pub timed: bool,
}

/// Every piece of work of `log` on a stream, in log order, timed by `spans` where they match
/// (see the [module documentation](self)).
pub fn items(log: &EventLog, spans: &[WorkSpan]) -> Vec<WorkItem> {
    let mut items: Vec<WorkItem> = log
        .events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let (work, calls, flops) = match e.kind {
                EventKind::CopyH2D { calls } => (Work::CopyH2D, calls, 0),
                EventKind::CopyD2H { calls } => (Work::CopyD2H, calls, 0),
                EventKind::Gemm { calls, flops } => (Work::Gemm, calls, flops),
                _ => return None,
            };
            let stream = e.stream?;
            Some(WorkItem {
                event: i,
                work,
                stream,
                object: e.object,
                queue: e.queue,
                bytes: if work == Work::Gemm { 0 } else { e.bytes },
                flops,
                calls,
                start_ns: e.t_ns,
                end_ns: e.t_ns,
                timed: false,
            })
        })
        .collect();
    let Some(origin) = log.backend_clock_ns else {
        return items;
    };
    let mut by_number: HashMap<u64, Vec<&WorkSpan>> = HashMap::new();
    for s in spans {
        by_number.entry(s.stream).or_default().push(s);
    }
    for (stream, number) in log.stream_numbers.iter().enumerate() {
        let Some(mut spans) = number.and_then(|n| by_number.remove(&n)) else {
            continue;
        };
        spans.sort_by_key(|s| (s.start_ns, s.end_ns));
        let mine: Vec<usize> = (0..items.len())
            .filter(|&i| items[i].stream as usize == stream)
            .collect();
        let calls: usize = mine.iter().map(|&i| items[i].calls as usize).sum();
        if calls != spans.len() {
            continue;
        }
        let mut next = spans.iter();
        for &i in &mine {
            let taken: Vec<&&WorkSpan> = next.by_ref().take(items[i].calls as usize).collect();
            if let (Some(first), Some(last)) = (taken.first(), taken.last()) {
                let item = &mut items[i];
                item.start_ns = first.start_ns.saturating_sub(origin);
                item.end_ns = last.end_ns.saturating_sub(origin).max(item.start_ns);
                item.timed = true;
            }
        }
    }
    items
}
