//! Replaying an event log: device memory over time (in use, pooled, pinned), and each object's
//! **residencies**, the periods during which it held device memory.
//!
//! A residency is DRGPUM's "data object" in memhc's terms: it begins when the runtime gives an
//! object device memory (the first block of a miss or a prefetch: a driver allocation, a pooled
//! block, a handed-over block or an arena range) and ends when the object gives it up (an
//! eviction, or a drop: released, overwritten from the host, not kept after a launch in the
//! naive modes). Its *uses* are the launches that named it (hits and misses); the copy that
//! fills it is part of making it resident, not a use. A residency still open when the log ends
//! has no end.
//!
//! Memory is replayed block by block: a block is in use from the event that gives it to an
//! object until it goes to the free pool or back to the driver; pooled from then until the pool
//! hands it out or frees it. Pinned bytes are those of the objects the launch in progress has
//! acquired so far (they cannot be evicted until it ends).

use std::collections::HashMap;

use memhc_core::{EventKind, EventLog, ObjectId};

/// Device bytes after one event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MemorySample {
    /// The index of the event in the log.
    pub event: usize,
    /// Its time (host clock, nanoseconds since the log started).
    pub t_ns: u64,
    /// Its queue index.
    pub queue: u64,
    /// Bytes of blocks held by objects.
    pub in_use: u64,
    /// Bytes of blocks in the free pool.
    pub pooled: u64,
    /// Bytes of the objects the launch in progress holds.
    pub pinned: u64,
}

impl MemorySample {
    /// Bytes held: in use plus pooled.
    pub fn held(&self) -> u64 {
        self.in_use + self.pooled
    }
}

/// Where a residency's first block came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A driver allocation (or a managed one).
    Driver,
    /// The free pool.
    Pool,
    /// The block of an object just evicted.
    Handover,
    /// A range of the arena.
    Arena,
    /// No block event was seen (the log started while the object was resident).
    Unknown,
}

/// How a residency ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndCause {
    /// Evicted to make room.
    Evicted,
    /// Given up without an eviction (released, overwritten, not kept, rolled back).
    Dropped,
}

/// A launch's use of a resident object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Use {
    /// The event (the hit or miss).
    pub event: usize,
    /// The launch.
    pub queue: u64,
    /// Whether the launch reads the object.
    pub read: bool,
    /// Whether the launch writes it.
    pub write: bool,
}

/// Where and when something happened: an event's index, queue index and time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct At {
    /// The event's index in the log.
    pub event: usize,
    /// Its queue index.
    pub queue: u64,
    /// Its time (nanoseconds since the log started).
    pub t_ns: u64,
}

/// One period during which an object held device memory. See the [module documentation](self).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Residency {
    /// The object.
    pub object: ObjectId,
    /// The object's size in bytes.
    pub bytes: u64,
    /// When it began.
    pub start: At,
    /// Where its first block came from.
    pub source: Source,
    /// Whether a prefetch brought it in.
    pub prefetched: bool,
    /// The launches that used it, in order.
    pub uses: Vec<Use>,
    /// The copies from the host that filled it (event indices).
    pub copies_in: Vec<usize>,
    /// When and how it ended; `None`: still resident when the log ended.
    pub end: Option<(At, EndCause)>,
    /// When the last of its blocks went back to the driver (or the arena), if all did without
    /// serving another object.
    pub freed: Option<At>,
    /// Whether one of its blocks went on to serve another object (free pool or handover).
    pub passed_on: bool,
}

/// A block's state during the replay.
#[derive(Clone, Copy, Debug)]
struct BlockState {
    bytes: u64,
    /// The residency that holds it, or held it last.
    owner: Option<usize>,
    pooled: bool,
}

/// A replayed log: memory over time and every residency.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Replay {
    /// Device bytes after every event that changed them, in order.
    pub samples: Vec<MemorySample>,
    /// Every residency, in the order they began.
    pub residencies: Vec<Residency>,
    /// Object sizes, from their registration or creation.
    pub sizes: HashMap<ObjectId, u64>,
    /// Bytes of driver allocations for no object (the arena).
    pub arena_bytes: u64,
    /// The queue index of the last event (0 for an empty log).
    pub last_queue: u64,
}

/// The replay's running state.
#[derive(Default)]
struct State {
    replay: Replay,
    blocks: HashMap<u64, BlockState>,
    /// Each object's open residency.
    open: HashMap<ObjectId, usize>,
    /// Blocks each residency holds now, and blocks it held last that are not yet freed.
    held: Vec<(u32, u32)>,
    in_use: u64,
    pooled: u64,
    pinned: u64,
}

impl Replay {
    /// Replays `log`.
    pub fn of(log: &EventLog) -> Replay {
        let mut s = State::default();
        for (i, e) in log.events.iter().enumerate() {
            let at = At {
                event: i,
                queue: e.queue,
                t_ns: e.t_ns,
            };
            let before = (s.in_use, s.pooled, s.pinned);
            s.apply(at, e.kind, e.object, e.bytes, e.block);
            if before != (s.in_use, s.pooled, s.pinned) {
                s.replay.samples.push(MemorySample {
                    event: i,
                    t_ns: e.t_ns,
                    queue: e.queue,
                    in_use: s.in_use,
                    pooled: s.pooled,
                    pinned: s.pinned,
                });
            }
            s.replay.last_queue = e.queue;
        }
        s.replay
    }

    /// The residencies open at event `event` (begun at or before it, not ended before it).
    pub fn live_at(&self, event: usize) -> impl Iterator<Item = &Residency> {
        self.residencies.iter().filter(move |r| {
            r.start.event <= event && r.end.is_none_or(|(end, _)| end.event > event)
        })
    }
}

impl State {
    fn apply(
        &mut self,
        at: At,
        kind: EventKind,
        object: Option<ObjectId>,
        bytes: u64,
        block: Option<u64>,
    ) {
        match kind {
            EventKind::Register | EventKind::Create => {
                if let Some(o) = object {
                    self.replay.sizes.insert(o, bytes);
                }
            }
            EventKind::LaunchBegin | EventKind::LaunchEnd { .. } => self.pinned = 0,
            EventKind::Hit { read, write } | EventKind::Miss { read, write } => {
                let Some(o) = object else { return };
                let r = self.residency(o, at, matches!(kind, EventKind::Miss { .. }));
                self.replay.residencies[r].uses.push(Use {
                    event: at.event,
                    queue: at.queue,
                    read,
                    write,
                });
                self.pinned += bytes;
            }
            EventKind::Alloc | EventKind::ArenaAlloc => {
                let (Some(id), Some(o)) = (block, object) else {
                    self.replay.arena_bytes += bytes;
                    return;
                };
                let source = match kind {
                    EventKind::Alloc => Source::Driver,
                    _ => Source::Arena,
                };
                self.in_use += bytes;
                self.give(id, bytes, o, at, source);
            }
            EventKind::PoolReuse => {
                let (Some(id), Some(o)) = (block, object) else {
                    return;
                };
                if let Some(b) = self.blocks.get_mut(&id).filter(|b| b.pooled) {
                    b.pooled = false;
                    self.pooled -= b.bytes;
                    self.in_use += b.bytes;
                }
                self.give(id, bytes, o, at, Source::Pool);
            }
            EventKind::Handover => {
                if let (Some(id), Some(o)) = (block, object) {
                    self.give(id, bytes, o, at, Source::Handover);
                }
            }
            EventKind::PoolPut => {
                let Some(b) = block.and_then(|id| self.blocks.get_mut(&id)) else {
                    return;
                };
                if !b.pooled {
                    b.pooled = true;
                    self.in_use -= b.bytes;
                    self.pooled += b.bytes;
                    let owner = b.owner;
                    self.leave(owner, at);
                }
            }
            EventKind::Free | EventKind::ArenaFree => {
                let Some(b) = block.and_then(|id| self.blocks.remove(&id)) else {
                    return;
                };
                if b.pooled {
                    self.pooled -= b.bytes;
                } else {
                    self.in_use -= b.bytes;
                    self.leave(b.owner, at);
                }
                if let Some(r) = b.owner {
                    self.held[r].1 = self.held[r].1.saturating_sub(1);
                    let res = &mut self.replay.residencies[r];
                    if self.held[r].1 == 0 && !res.passed_on {
                        res.freed = Some(at);
                    }
                }
            }
            EventKind::CopyH2D { .. } => {
                if let Some(&r) = object.and_then(|o| self.open.get(&o)) {
                    self.replay.residencies[r].copies_in.push(at.event);
                }
            }
            EventKind::Prefetch => {
                if let Some(&r) = object.and_then(|o| self.open.get(&o)) {
                    self.replay.residencies[r].prefetched = true;
                }
            }
            EventKind::Evict => self.end(object, at, EndCause::Evicted),
            EventKind::Drop => self.end(object, at, EndCause::Dropped),
            _ => {}
        }
    }

    /// The open residency of `o`, opened at `at` if there is none.
    fn residency(&mut self, o: ObjectId, at: At, miss: bool) -> usize {
        if let Some(&r) = self.open.get(&o) {
            return r;
        }
        let r = self.replay.residencies.len();
        self.replay.residencies.push(Residency {
            object: o,
            bytes: self.replay.sizes.get(&o).copied().unwrap_or(0),
            start: at,
            source: if miss {
                Source::Driver
            } else {
                Source::Unknown
            },
            prefetched: false,
            uses: Vec::new(),
            copies_in: Vec::new(),
            end: None,
            freed: None,
            passed_on: false,
        });
        self.held.push((0, 0));
        self.open.insert(o, r);
        r
    }

    /// Block `id` of `bytes` now serves object `o` (its source, if it is the first).
    fn give(&mut self, id: u64, bytes: u64, o: ObjectId, at: At, source: Source) {
        let r = self.residency(o, at, true);
        let previous = self.blocks.insert(
            id,
            BlockState {
                bytes,
                owner: Some(r),
                pooled: false,
            },
        );
        if let Some(old) = previous.and_then(|b| b.owner)
            && old != r
        {
            let held = &mut self.held[old];
            held.0 = held.0.saturating_sub(1);
            held.1 = held.1.saturating_sub(1);
            self.replay.residencies[old].passed_on = true;
        }
        let (now, last) = &mut self.held[r];
        if *now == 0 && *last == 0 {
            self.replay.residencies[r].source = source;
        }
        *now += 1;
        *last += 1;
        if self.replay.residencies[r].bytes == 0 {
            self.replay.residencies[r].bytes = bytes;
        }
    }

    /// A block leaves residency `owner` (to the pool or the driver). A residency left with no
    /// block ends there, as a drop (a launch that failed after acquiring it).
    fn leave(&mut self, owner: Option<usize>, at: At) {
        let Some(r) = owner else { return };
        let now = &mut self.held[r].0;
        *now = now.saturating_sub(1);
        if *now == 0 && self.replay.residencies[r].end.is_none() {
            let object = self.replay.residencies[r].object;
            self.end(Some(object), at, EndCause::Dropped);
        }
    }

    /// Ends the open residency of `object`.
    fn end(&mut self, object: Option<ObjectId>, at: At, cause: EndCause) {
        if let Some(r) = object.and_then(|o| self.open.remove(&o)) {
            self.replay.residencies[r].end = Some((at, cause));
        }
    }
}
