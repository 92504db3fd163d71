//! DRGPUM's object-level patterns (Lin et al., ASPLOS 2023, section 3.1), found in a replayed
//! event log, plus the two redundancies of moving data that MemHC removes.
//!
//! DRGPUM's "data object" is a residency ([`replay`](mod@crate::replay)); its "GPU APIs that access
//! it" are the launches that use it, and distances are counted in queue steps (launches),
//! where DRGPUM counts GPU API calls. The patterns, with `d` the distance reported:
//!
//! * **early allocation**: the residency began `d >= 1` launches before the first launch that
//!   used it (memhc allocates in the launch that needs the memory, so only a prefetch made too
//!   far ahead does this; its copy in is part of placing the object, not a use);
//! * **late deallocation**: the residency ended `d >= 1` launches after the last launch that
//!   used it, and nothing uses the object again (a residency evicted and needed later is
//!   caching, not this);
//! * **redundant allocation** (within the size tolerance, 10%): the residency's memory came from
//!   a driver allocation although an earlier residency of about the same size had given all of
//!   its memory back to the driver after its last use and before this one's first (DRGPUM's
//!   one-pass pairing: each earlier residency is suggested once, the closest first); `d` is the
//!   queue steps from that free to this allocation. memhc's free pool and handover are this
//!   reuse, so a residency served by them is never a candidate, and neither is one whose
//!   memory served another object;
//! * **unused allocation**: no launch used the residency (a prefetch wasted, a launch that
//!   failed); `d` is how long it was held;
//! * **leak**: the residency was still open when the log ended; `d` is the queue steps since
//!   its last use (or its start);
//! * **temporary idleness**: at least `X` launches (2, as DRGPUM) ran between two consecutive
//!   uses while the object stayed resident; `d` is that number of launches;
//! * **dead write**: an object's value was written (by a launch, the host, or its
//!   registration) and written again `d` launches later with no read in between (a launch
//!   reading it, a copy back, a host read); the first write was dead;
//! * **repeated copy** (MemHC's duplication): a copy to the device of a value that had already
//!   been on the device, whose device copy the runtime had given up without being forced to
//!   (not kept after a launch, as the naive modes do); `d` is the steps since it was given up;
//! * **refetch after eviction**: the same, when the device copy had been evicted to make room
//!   (the cost of the budget, which the policy decides).
//!
//! Each finding carries the object, the queue index where the pattern starts, the distance and
//! the object's bytes.

use std::collections::HashMap;

use memhc_core::{EventKind, EventLog, ObjectId};

use crate::finding::{Finding, Pattern, ReportOptions};
use crate::replay::{EndCause, Replay, Residency, Source};

/// Every finding of `log` (replayed as `replay`), in the order of the patterns, then of queue.
pub(crate) fn find(log: &EventLog, replay: &Replay, options: &ReportOptions) -> Vec<Finding> {
    let mut out = Vec::new();
    residency_patterns(replay, options, &mut out);
    redundant_allocations(replay, options, &mut out);
    value_patterns(log, &mut out);
    out.sort_by_key(|f| (f.pattern, f.queue, f.object));
    out
}

fn finding(pattern: Pattern, r: &Residency, queue: u64, distance: u64) -> Finding {
    Finding {
        pattern,
        object: r.object,
        other: None,
        queue,
        distance,
        bytes: r.bytes,
    }
}

/// Early and late (de)allocation, unused allocations, leaks and temporary idleness.
fn residency_patterns(replay: &Replay, options: &ReportOptions, out: &mut Vec<Finding>) {
    // The last residency of each object that a launch used.
    let mut last_used: HashMap<ObjectId, usize> = HashMap::new();
    for (i, r) in replay.residencies.iter().enumerate() {
        if !r.uses.is_empty() {
            last_used.insert(r.object, i);
        }
    }
    for (i, r) in replay.residencies.iter().enumerate() {
        let (Some(first), Some(last)) = (r.uses.first(), r.uses.last()) else {
            let held_until = r.end.map_or(replay.last_queue, |(at, _)| at.queue);
            let d = held_until - r.start.queue;
            out.push(finding(Pattern::UnusedAllocation, r, r.start.queue, d));
            if r.end.is_none() {
                out.push(finding(Pattern::Leak, r, r.start.queue, d));
            }
            continue;
        };
        if first.queue > r.start.queue {
            let d = first.queue - r.start.queue;
            out.push(finding(Pattern::EarlyAllocation, r, r.start.queue, d));
        }
        match r.end {
            Some((at, _)) if last_used.get(&r.object) == Some(&i) && at.queue > last.queue => {
                let d = at.queue - last.queue;
                out.push(finding(Pattern::LateDeallocation, r, last.queue, d));
            }
            Some(_) => {}
            None => {
                let d = replay.last_queue - last.queue;
                out.push(finding(Pattern::Leak, r, r.start.queue, d));
            }
        }
        for pair in r.uses.windows(2) {
            let between = (pair[1].queue - pair[0].queue).saturating_sub(1);
            if between >= options.idle_steps {
                out.push(finding(
                    Pattern::TemporaryIdleness,
                    r,
                    pair[0].queue,
                    between,
                ));
            }
        }
    }
}

/// Whether sizes `a` and `b` are within `percent` of `b`.
fn close(a: u64, b: u64, percent: u32) -> bool {
    u128::from(a.abs_diff(b)) * 100 <= u128::from(b) * u128::from(percent)
}

/// Redundant allocations: DRGPUM's pairing, over residencies whose memory went back to the
/// driver (see the [module documentation](self)).
fn redundant_allocations(replay: &Replay, options: &ReportOptions, out: &mut Vec<Finding>) {
    let rs = &replay.residencies;
    let mut freed: Vec<usize> = (0..rs.len()).filter(|&i| rs[i].freed.is_some()).collect();
    freed.sort_by_key(|&i| rs[i].freed.map(|f| f.event));
    let mut freed = freed.into_iter().peekable();
    // Residencies whose memory is free to suggest, in the order it was freed.
    let mut available: Vec<usize> = Vec::new();
    for r in rs.iter().filter(|r| r.source == Source::Driver) {
        let Some(first) = r.uses.first() else {
            continue;
        };
        while let Some(&i) = freed.peek() {
            if rs[i].freed.is_some_and(|f| f.event < r.start.event) {
                available.push(i);
                freed.next();
            } else {
                break;
            }
        }
        let pick = available.iter().rposition(|&i| {
            let o = &rs[i];
            close(o.bytes, r.bytes, options.size_tolerance_percent)
                && o.uses.last().is_some_and(|u| u.queue < first.queue)
        });
        if let Some(p) = pick {
            let o = &rs[available.remove(p)];
            let from = o.freed.map_or(r.start.queue, |f| f.queue);
            out.push(Finding {
                other: Some(o.object),
                ..finding(
                    Pattern::RedundantAllocation,
                    r,
                    r.start.queue,
                    r.start.queue - from.min(r.start.queue),
                )
            });
        }
    }
}

/// What the value patterns keep per object.
#[derive(Default)]
struct Value {
    /// The last write not yet read: its queue index.
    unread_write: Option<u64>,
    /// Whether the current value has been on the device.
    been_on_device: bool,
    /// When and how the object's last device copy left.
    left: Option<(u64, EndCause)>,
}

/// Dead writes, repeated copies and refetches, from the log in order.
fn value_patterns(log: &EventLog, out: &mut Vec<Finding>) {
    let mut values: HashMap<ObjectId, Value> = HashMap::new();
    let mut sizes: HashMap<ObjectId, u64> = HashMap::new();
    let mut push = |pattern, object, queue, now: u64, sizes: &HashMap<ObjectId, u64>| {
        out.push(Finding {
            pattern,
            object,
            other: None,
            queue,
            distance: now - queue.min(now),
            bytes: sizes.get(&object).copied().unwrap_or(0),
        });
    };
    for e in &log.events {
        let Some(o) = e.object else { continue };
        let v = values.entry(o).or_default();
        let q = e.queue;
        let (read, write) = match e.kind {
            EventKind::Register => {
                sizes.insert(o, e.bytes);
                (false, true)
            }
            EventKind::Create => {
                sizes.insert(o, e.bytes);
                (false, false)
            }
            EventKind::Hit { read, write } | EventKind::Miss { read, write } => (read, write),
            EventKind::HostWrite => (false, true),
            EventKind::HostRead | EventKind::CopyD2H { .. } => (true, false),
            EventKind::CopyH2D { .. } => {
                if v.been_on_device
                    && let Some((when, cause)) = v.left
                {
                    let pattern = match cause {
                        EndCause::Evicted => Pattern::RefetchAfterEviction,
                        EndCause::Dropped => Pattern::RepeatedCopy,
                    };
                    push(pattern, o, when, q, &sizes);
                }
                v.been_on_device = true;
                (false, false)
            }
            EventKind::Evict => {
                v.left = Some((q, EndCause::Evicted));
                (false, false)
            }
            EventKind::Drop => {
                v.left = Some((q, EndCause::Dropped));
                (false, false)
            }
            EventKind::Release => {
                values.remove(&o);
                continue;
            }
            _ => (false, false),
        };
        if read {
            v.unread_write = None;
        }
        if write {
            if let Some(when) = v.unread_write {
                push(Pattern::DeadWrite, o, when, q, &sizes);
            }
            v.unread_write = Some(q);
            // A launch's write puts the new value on the device; the host's does not.
            v.been_on_device = matches!(e.kind, EventKind::Hit { .. } | EventKind::Miss { .. });
        }
    }
}
