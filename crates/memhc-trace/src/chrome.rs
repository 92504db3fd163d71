//! The timeline as a Chrome trace (the JSON "Trace Event Format" that Perfetto's UI and
//! `chrome://tracing` open): `{"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}`.
//!
//! One process, `memhc`, with:
//!
//! * **one track per stream** (thread `tid = stream + 1`, named `stream N` or `copy stream`):
//!   every copy and every launch's GEMMs as a complete event (`"ph": "X"`), timed by the
//!   backend's timeline where it has one ([`work`](mod@crate::work)); category `copy` (names
//!   `h2d #N`, `d2h #N`) or `compute` (name `gemm`), with the object, bytes, flops, calls and
//!   queue index in `args`;
//! * **the runtime's track** (`tid = 0`, named `runtime`): what happens to memory and objects
//!   as instant events (`"ph": "i"`, thread scope) named after the event kind (`alloc`, `free`,
//!   `pool_reuse`, `pool_put`, `handover`, `arena_alloc`, `arena_free`, `hit`, `miss`, `evict`,
//!   `writeback`, `writeback_issued`, `writeback_landed`, `sync`, `prefetch`, `drop`,
//!   `register`, `create`, `release`, `host_write`, `host_read`), with object, bytes, block,
//!   stream and queue index in `args`;
//! * **a counter track** `device bytes` (`"ph": "C"`) with the series `in_use`, `pooled` and
//!   `pinned` ([`replay`](mod@crate::replay));
//! * **object lifetimes** as async slices (`"ph": "b"` / `"e"`, category `object`, one `id`
//!   per residency, named `#N` after the object), from the first block to the eviction or drop (or the end of
//!   the trace), with the bytes, source and end in `args`;
//! * **dependencies** as flow arrows (`"ph": "s"` / `"f"` with `"bp": "e"`, category `dep`):
//!   from the work that put an object's value on the device (its copy in, or the GEMMs of the
//!   launch that wrote it) to each later piece of work that reads it (a launch's GEMMs, a copy
//!   back).
//!
//! Times are microseconds (`ts`, `dur`) on the log's axis, with nanosecond precision.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use memhc_core::backend::timeline::WorkSpan;
use memhc_core::{EventKind, EventLog, ObjectId};
use serde_json::{Value, json};

use crate::error::{Result, TraceError};
use crate::replay::Replay;
use crate::work::{Work, WorkItem, items};

/// The process id of every event.
const PID: u32 = 1;

/// Microseconds, from nanoseconds.
fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// The instant-event name of an event kind, or `None` for work and launch boundaries.
pub fn instant_name(kind: &EventKind) -> Option<&'static str> {
    Some(match kind {
        EventKind::Register => "register",
        EventKind::Create => "create",
        EventKind::Release => "release",
        EventKind::HostWrite => "host_write",
        EventKind::HostRead => "host_read",
        EventKind::Hit { .. } => "hit",
        EventKind::Miss { .. } => "miss",
        EventKind::Alloc => "alloc",
        EventKind::Free => "free",
        EventKind::ArenaAlloc => "arena_alloc",
        EventKind::ArenaFree => "arena_free",
        EventKind::PoolPut => "pool_put",
        EventKind::PoolReuse => "pool_reuse",
        EventKind::Handover => "handover",
        EventKind::Evict => "evict",
        EventKind::WriteBack => "writeback",
        EventKind::WriteBackIssued => "writeback_issued",
        EventKind::WriteBackLanded => "writeback_landed",
        EventKind::Sync => "sync",
        EventKind::Prefetch => "prefetch",
        EventKind::Drop => "drop",
        EventKind::LaunchBegin
        | EventKind::LaunchEnd { .. }
        | EventKind::CopyH2D { .. }
        | EventKind::CopyD2H { .. }
        | EventKind::Gemm { .. } => return None,
    })
}

/// The trace of `log`, with work timed by `spans` where they match, as a JSON value.
pub fn trace(log: &EventLog, spans: &[WorkSpan]) -> Value {
    let work = items(log, spans);
    let replay = Replay::of(log);
    let mut events = Vec::with_capacity(log.events.len() * 2);
    metadata(log, &mut events);
    for item in &work {
        events.push(slice(item));
    }
    for e in &log.events {
        let Some(name) = instant_name(&e.kind) else {
            continue;
        };
        let mut args = json!({ "queue": e.queue, "bytes": e.bytes });
        if let Some(o) = e.object {
            args["object"] = json!(o.index());
        }
        if let Some(b) = e.block {
            args["block"] = json!(format!("{b:#x}"));
        }
        if let Some(s) = e.stream {
            args["stream"] = json!(s);
        }
        if let EventKind::Hit { read, write } | EventKind::Miss { read, write } = e.kind {
            args["read"] = json!(read);
            args["write"] = json!(write);
        }
        events.push(json!({
            "name": name, "cat": "runtime", "ph": "i", "s": "t",
            "ts": us(e.t_ns), "pid": PID, "tid": 0, "args": args,
        }));
    }
    for s in &replay.samples {
        events.push(json!({
            "name": "device bytes", "ph": "C", "ts": us(s.t_ns), "pid": PID,
            "args": { "in_use": s.in_use, "pooled": s.pooled, "pinned": s.pinned },
        }));
    }
    let end_ns = log
        .events
        .last()
        .map_or(0, |e| e.t_ns)
        .max(work.iter().map(|w| w.end_ns).max().unwrap_or(0));
    for (i, r) in replay.residencies.iter().enumerate() {
        let id = format!("{i:#x}");
        let name = r.object.to_string();
        let (end, cause) = match r.end {
            Some((at, cause)) => (at.t_ns, json!(cause)),
            None => (end_ns, json!("held at the end")),
        };
        events.push(json!({
            "name": name, "cat": "object", "ph": "b", "id": id, "ts": us(r.start.t_ns),
            "pid": PID, "tid": 0,
            "args": { "object": r.object.index(), "bytes": r.bytes, "source": r.source,
                      "prefetched": r.prefetched, "uses": r.uses.len(), "end": cause },
        }));
        events.push(json!({
            "name": name, "cat": "object", "ph": "e", "id": id, "ts": us(end), "pid": PID,
            "tid": 0,
        }));
    }
    flows(log, &work, &mut events);
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "producer": "memhc",
            "budget_bytes": log.budget,
            "launch_streams": log.launch_streams,
            "copy_stream": log.copy_stream,
            "timed_work": work.iter().filter(|w| w.timed).count(),
            "untimed_work": work.iter().filter(|w| !w.timed).count(),
        },
    })
}

/// Writes the trace of `log` (see [`trace`]) to `path`.
pub fn write(path: &Path, log: &EventLog, spans: &[WorkSpan]) -> Result<()> {
    let value = trace(log, spans);
    let io = |e| TraceError::io(path, e);
    let mut out = BufWriter::new(File::create(path).map_err(io)?);
    serde_json::to_writer(&mut out, &value).map_err(|e| TraceError::io(path, e.into()))?;
    out.flush().map_err(io)
}

/// The process and thread names.
fn metadata(log: &EventLog, events: &mut Vec<Value>) {
    let name = |tid: u32, name: String| {
        json!({ "name": "thread_name", "ph": "M", "pid": PID, "tid": tid,
                "args": { "name": name } })
    };
    events.push(json!({ "name": "process_name", "ph": "M", "pid": PID,
                        "args": { "name": "memhc" } }));
    events.push(name(0, "runtime".into()));
    for s in 0..log.launch_streams {
        events.push(name(s + 1, format!("stream {s}")));
    }
    if let Some(c) = log.copy_stream {
        events.push(name(c + 1, "copy stream".into()));
    }
}

/// An object as the trace names it (`#12`), as reports do.
fn object_name(o: Option<ObjectId>) -> String {
    o.map_or_else(|| "?".into(), |o| o.to_string())
}

/// A piece of work as a complete event.
fn slice(w: &WorkItem) -> Value {
    let (name, cat) = match (w.work, w.object) {
        (Work::Gemm, _) => ("gemm".to_owned(), "compute"),
        (Work::CopyH2D, o) => (format!("h2d {}", object_name(o)), "copy"),
        (Work::CopyD2H, o) => (format!("d2h {}", object_name(o)), "copy"),
    };
    let mut args = json!({ "queue": w.queue, "calls": w.calls, "timed": w.timed });
    match w.work {
        Work::Gemm => args["flops"] = json!(w.flops),
        _ => {
            args["bytes"] = json!(w.bytes);
            args["object"] = json!(w.object.map(ObjectId::index));
        }
    }
    json!({
        "name": name, "cat": cat, "ph": "X", "ts": us(w.start_ns),
        "dur": us(w.end_ns - w.start_ns), "pid": PID, "tid": w.stream + 1, "args": args,
    })
}

/// Flow arrows from the work that put each object's value on the device to the work that reads
/// it (see the [module documentation](self)).
fn flows(log: &EventLog, work: &[WorkItem], events: &mut Vec<Value>) {
    let by_event: HashMap<usize, usize> =
        work.iter().enumerate().map(|(i, w)| (w.event, i)).collect();
    // The work that produced each object's device value.
    let mut producer: HashMap<ObjectId, usize> = HashMap::new();
    // The objects of the launch in progress, as its hits and misses named them.
    let mut accesses: Vec<(ObjectId, bool, bool)> = Vec::new();
    let mut next_id = 0u64;
    let mut arrow = |from: usize, to: usize, object: ObjectId, events: &mut Vec<Value>| {
        let (a, b) = (&work[from], &work[to]);
        let name = object.to_string();
        events.push(
            json!({ "name": name, "cat": "dep", "ph": "s", "id": next_id,
                            "ts": us(a.start_ns), "pid": PID, "tid": a.stream + 1 }),
        );
        events.push(
            json!({ "name": name, "cat": "dep", "ph": "f", "bp": "e", "id": next_id,
                            "ts": us(b.start_ns), "pid": PID, "tid": b.stream + 1 }),
        );
        next_id += 1;
    };
    for (i, e) in log.events.iter().enumerate() {
        match e.kind {
            EventKind::LaunchBegin => accesses.clear(),
            EventKind::Hit { read, write } | EventKind::Miss { read, write } => {
                if let Some(o) = e.object {
                    accesses.push((o, read, write));
                }
            }
            // Every object is acquired (and copied in) before the launch's work is enqueued.
            EventKind::Gemm { .. } => {
                let Some(&g) = by_event.get(&i) else { continue };
                for &(o, read, write) in &accesses {
                    if read && let Some(&p) = producer.get(&o) {
                        arrow(p, g, o, events);
                    }
                    if write {
                        producer.insert(o, g);
                    }
                }
            }
            EventKind::CopyH2D { .. } => {
                if let (Some(o), Some(&w)) = (e.object, by_event.get(&i)) {
                    producer.insert(o, w);
                }
            }
            EventKind::CopyD2H { .. } => {
                if let (Some(o), Some(&w)) = (e.object, by_event.get(&i))
                    && let Some(&p) = producer.get(&o)
                {
                    arrow(p, w, o, events);
                }
            }
            EventKind::Evict | EventKind::Drop | EventKind::HostWrite | EventKind::Release => {
                if let Some(o) = e.object {
                    producer.remove(&o);
                }
            }
            _ => {}
        }
    }
}
