//! The event log: everything the runtime does to device memory, one [`Event`] at a time, for a
//! timeline of the run and an object-level report of its memory inefficiencies (the
//! `memhc-trace` crate reads it).
//!
//! Off by default ([`Config::events`](crate::Config::events)); then the runtime holds `None`
//! where the recorder would be, and every place that records is one branch on it: no
//! allocation, no clock read, no formatting. On, the runtime records:
//!
//! * objects: [`EventKind::Register`], [`EventKind::Create`], [`EventKind::Release`], the
//!   host's [`EventKind::HostWrite`] and [`EventKind::HostRead`];
//! * launches: [`EventKind::LaunchBegin`], each object's use as [`EventKind::Hit`] or
//!   [`EventKind::Miss`] (with whether the launch reads and writes it), the launch's GEMM calls as one
//!   [`EventKind::Gemm`], and [`EventKind::LaunchEnd`];
//! * memory, block by block: driver allocations and frees ([`EventKind::Alloc`],
//!   [`EventKind::Free`]), arena ranges ([`EventKind::ArenaAlloc`], [`EventKind::ArenaFree`]),
//!   the free pool ([`EventKind::PoolPut`], [`EventKind::PoolReuse`]) and
//!   [`EventKind::Handover`];
//! * copies: [`EventKind::CopyH2D`] and [`EventKind::CopyD2H`], one per object copied (the
//!   backend calls it took are counted in the event);
//! * the cache: [`EventKind::Evict`], [`EventKind::WriteBack`] (synchronous),
//!   [`EventKind::WriteBackIssued`] and [`EventKind::WriteBackLanded`] (asynchronous),
//!   [`EventKind::Sync`] (on-demand or eager), [`EventKind::Prefetch`], and
//!   [`EventKind::Drop`] (a device copy given up without an eviction).
//!
//! Each event carries the object (where there is one), the stream (for work), the bytes, the
//! block (for memory events) and the **queue index**: the number of the launch in progress, or
//! of the last one begun. Launches are numbered from 0 in the order they are called (failed
//! ones included, those refused before they start excepted); events before the first launch
//! have 0. Distances in the report are differences of queue indices: queue steps.
//!
//! **Times.** Every event has the host's clock when the runtime recorded it (`t_ns`, from when
//! the log started). That is when a call was *issued*. When the backend times its work
//! ([`Backend::set_timing`](crate::Backend::set_timing)), its timeline gives when each copy and
//! GEMM batch *ran* on its stream; the log keeps what is needed to put both on one axis: the
//! number the backend gives each of the runtime's streams in timelines
//! ([`EventLog::stream_numbers`]) and the backend's timing clock when the log started
//! ([`EventLog::backend_clock_ns`]). Work on a stream runs in the order it was enqueued, so the
//! `n`-th timed span of a stream belongs to its `n`-th backend call.
//!
//! When a backend call fails part-way (a copy of an unpacked object whose fifth block fails),
//! the calls that succeeded are counted by the statistics but the event is not recorded: the
//! log records what completed as a whole.

use std::time::Instant;

use crate::object::ObjectId;

/// What happened. See the [module documentation](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum EventKind {
    /// A host-backed object was registered (`bytes`: its size).
    Register,
    /// A GPU-only object was created (`bytes`: its size).
    Create,
    /// The caller released the object.
    Release,
    /// The host replaced the object's values.
    HostWrite,
    /// The host read the object's values ([`Runtime::read`](crate::Runtime::read)).
    HostRead,
    /// A launch began on `stream`; `queue` is its number.
    LaunchBegin,
    /// The launch ended, enqueued (`ok`) or failed.
    LaunchEnd {
        /// Whether the launch succeeded.
        ok: bool,
    },
    /// A launch found the object resident.
    Hit {
        /// Whether the launch reads it.
        read: bool,
        /// Whether the launch writes it.
        write: bool,
    },
    /// A launch had to make the object resident.
    Miss {
        /// Whether the launch reads it.
        read: bool,
        /// Whether the launch writes it.
        write: bool,
    },
    /// A driver allocation of a block (`object`: what it is for; none for the arena itself).
    Alloc,
    /// A driver free of a block.
    Free,
    /// A range of the arena for the object (arena mode).
    ArenaAlloc,
    /// A range of the arena given back (arena mode).
    ArenaFree,
    /// A block went to the free pool (`object`: its last owner).
    PoolPut,
    /// A pooled block served the object.
    PoolReuse,
    /// The block of an object just evicted went straight to the object.
    Handover,
    /// The object's host values were copied to the device.
    CopyH2D {
        /// Backend copy calls it took (one per block).
        calls: u32,
    },
    /// The object's device values were copied to the host.
    CopyD2H {
        /// Backend copy calls it took (one per block).
        calls: u32,
    },
    /// A launch's GEMM and GEAM calls on `stream`.
    Gemm {
        /// Backend calls (each one batch, one span in a timeline).
        calls: u32,
        /// Floating-point operations (`8 m n k` per product).
        flops: u64,
    },
    /// The object was evicted to make room.
    Evict,
    /// An evicted device-only object was copied back first (synchronously).
    WriteBack,
    /// An evicted device-only object's copy back was queued on the copy stream.
    WriteBackIssued,
    /// An asynchronous write-back's data became the object's host copy.
    WriteBackLanded,
    /// The object's device copy was copied to the host (on-demand or eager sync).
    Sync,
    /// The object was brought in ahead of its use on the copy stream.
    Prefetch,
    /// The object's device copy was given up without an eviction (released, overwritten from
    /// the host, not kept after a launch in the naive modes, or rolled back).
    Drop,
}

/// One event of the log. See the [module documentation](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Event {
    /// When the runtime recorded it: host clock, nanoseconds since the log started.
    pub t_ns: u64,
    /// The queue index: the launch in progress, or the last one begun.
    pub queue: u64,
    /// What happened.
    pub kind: EventKind,
    /// The object, where there is one.
    pub object: Option<ObjectId>,
    /// The runtime's stream (launch streams from 0, then the copy stream), for work.
    pub stream: Option<u32>,
    /// Bytes: of the object, the block, or the copy.
    pub bytes: u64,
    /// The block, for memory events: the buffer's handle, or for an arena range its offset
    /// with the top bit set ([`ARENA_BLOCK`]).
    pub block: Option<u64>,
}

/// The bit that marks a block id as an arena range (its offset) rather than a buffer handle.
pub const ARENA_BLOCK: u64 = 1 << 63;

/// A run's events, and what is needed to put them beside the backend's timeline.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct EventLog {
    /// The events, in the order the runtime recorded them.
    pub events: Vec<Event>,
    /// Launch streams (numbered `0..launch_streams`).
    pub launch_streams: u32,
    /// The copy stream's number (prefetch on).
    pub copy_stream: Option<u32>,
    /// The device budget in bytes.
    pub budget: u64,
    /// For each of the runtime's streams, the number the backend's timeline gives it
    /// ([`WorkSpan::stream`](crate::backend::timeline::WorkSpan::stream)), when the backend
    /// times its work.
    pub stream_numbers: Vec<Option<u64>>,
    /// The backend's timing clock when the log started, when the backend times its work:
    /// a span's time minus this is on the log's axis.
    pub backend_clock_ns: Option<u64>,
}

/// What the runtime keeps while recording.
#[derive(Debug)]
pub(crate) struct Recorder {
    log: EventLog,
    origin: Instant,
    queue: u64,
    launches: u64,
    /// The object the allocation path is serving now (its block events name it).
    serving: Option<ObjectId>,
}

/// The runtime's recorder, or nothing (logging off). Every method is one branch when off.
#[derive(Debug, Default)]
pub(crate) struct Events(Option<Box<Recorder>>);

impl Events {
    /// A recorder for a runtime with `streams` streams (the last the copy stream if
    /// `copy_stream`), with the backend's stream numbers and clock.
    pub(crate) fn on(
        launch_streams: u32,
        copy_stream: Option<u32>,
        budget: u64,
        stream_numbers: Vec<Option<u64>>,
        backend_clock_ns: Option<u64>,
    ) -> Self {
        let origin = Instant::now();
        Events(Some(Box::new(Recorder {
            log: EventLog {
                events: Vec::new(),
                launch_streams,
                copy_stream,
                budget,
                stream_numbers,
                backend_clock_ns,
            },
            origin,
            queue: 0,
            launches: 0,
            serving: None,
        })))
    }

    /// Whether events are recorded.
    #[inline]
    pub(crate) fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// Records an event about `object` (none: the object being served).
    #[inline]
    pub(crate) fn note(
        &mut self,
        kind: EventKind,
        object: Option<ObjectId>,
        stream: Option<usize>,
        bytes: usize,
        block: Option<u64>,
    ) {
        if let Some(r) = &mut self.0 {
            r.push(kind, object, stream, bytes, block);
        }
    }

    /// Records a memory event for the block `block` of `bytes`, for the object being served.
    #[inline]
    pub(crate) fn block(&mut self, kind: EventKind, bytes: usize, block: u64) {
        if let Some(r) = &mut self.0 {
            r.push(kind, r.serving, None, bytes, Some(block));
        }
    }

    /// The allocation path is serving `object` now (`None`: no object).
    #[inline]
    pub(crate) fn serve(&mut self, object: Option<ObjectId>) {
        if let Some(r) = &mut self.0 {
            r.serving = object;
        }
    }

    /// A launch begins on `stream`: the next queue index.
    #[inline]
    pub(crate) fn begin_launch(&mut self, stream: usize) {
        if let Some(r) = &mut self.0 {
            r.begin_launch(stream);
        }
    }

    /// The log so far; recording goes on into an empty one.
    pub(crate) fn take(&mut self) -> Option<EventLog> {
        self.0.as_mut().map(|r| {
            let fresh = r.log.clone_meta();
            std::mem::replace(&mut r.log, fresh)
        })
    }

    /// The log so far.
    pub(crate) fn log(&self) -> Option<&EventLog> {
        self.0.as_ref().map(|r| &r.log)
    }
}

impl Recorder {
    // Out of line: with the log off, the places that record stay one test and a branch.
    #[cold]
    #[inline(never)]
    fn push(
        &mut self,
        kind: EventKind,
        object: Option<ObjectId>,
        stream: Option<usize>,
        bytes: usize,
        block: Option<u64>,
    ) {
        let t_ns = u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.log.events.push(Event {
            t_ns,
            queue: self.queue,
            kind,
            object,
            stream: stream.map(|s| s as u32),
            bytes: bytes as u64,
            block,
        });
    }
}

impl Recorder {
    #[cold]
    #[inline(never)]
    fn begin_launch(&mut self, stream: usize) {
        self.queue = self.launches;
        self.launches += 1;
        self.push(EventKind::LaunchBegin, None, Some(stream), 0, None);
    }
}

impl EventLog {
    /// Everything but the events.
    fn clone_meta(&self) -> EventLog {
        EventLog {
            events: Vec::new(),
            launch_streams: self.launch_streams,
            copy_stream: self.copy_stream,
            budget: self.budget,
            stream_numbers: self.stream_numbers.clone(),
            backend_clock_ns: self.backend_clock_ns,
        }
    }
}
