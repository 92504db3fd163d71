//! What a queue of stages holds in device memory when it runs on the runtime, computed from
//! the plan alone (no runtime, no data).
//!
//! The runtime makes an object resident at its first use (an input copied in, an output
//! written) and keeps it until the release after the stage of its last use; a trace also holds
//! a scratch object of `16 · pairs · rows` bytes (one complex number per pair and row) while it
//! runs. Within a stage the contractions run first, in order, then the traces. Two numbers
//! follow:
//!
//! * **the peak of live bytes** ([`Peaks::live`]): the most bytes of objects alive at once.
//!   This is the smallest budget under which nothing is ever evicted (the runtime drains its
//!   free pool before it evicts), and the number the planner's order minimises.
//! * **the peak with the free pool** ([`Peaks::with_pool`]): what the runtime's
//!   `peak_device_bytes` reads when the budget never binds. A released buffer goes to the free
//!   pool, which serves later requests of exactly its size and is drained only when the budget
//!   is reached; so each size of buffer is allocated as many times as objects of that size are
//!   ever alive at once, and the device holds `Σ over sizes of size · (most objects of that
//!   size alive at once)`. When every object has one size (and no trace's scratch is
//!   counted) this is the live peak; with several sizes it can be more.
//!
//! Both assume the optimal mode's packed objects (one buffer each), no reuse tolerance and no
//! arena; `tests/dry_run.rs` checks them against the runtime on the data-less `NullBackend`.

use std::collections::BTreeMap;

use super::Stage;
use super::order::{Job, Work};

/// The two peaks of a queue. See the [module documentation](self).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Peaks {
    /// The most bytes alive at once.
    pub live: u64,
    /// The device bytes with the free pool and a budget that never binds.
    pub with_pool: u64,
}

/// Live objects, by count and by size.
struct Live {
    alive: Vec<bool>,
    held: u64,
    peak: u64,
    /// Per size: (alive now, most alive at once).
    sizes: BTreeMap<u64, (u64, u64)>,
}

impl Live {
    fn new(objects: usize) -> Self {
        Live {
            alive: vec![false; objects],
            held: 0,
            peak: 0,
            sizes: BTreeMap::new(),
        }
    }

    fn grow(&mut self, bytes: u64) {
        self.held += bytes;
        let e = self.sizes.entry(bytes).or_insert((0, 0));
        e.0 += 1;
        e.1 = e.1.max(e.0);
    }

    fn shrink(&mut self, bytes: u64) {
        self.held -= bytes;
        if let Some(e) = self.sizes.get_mut(&bytes) {
            e.0 -= 1;
        }
    }

    fn touch(&mut self, work: &Work<'_>, o: usize) {
        if !self.alive[o] {
            self.alive[o] = true;
            self.grow(work.bytes[o]);
        }
    }

    fn release(&mut self, work: &Work<'_>, o: usize) {
        if self.alive[o] {
            self.alive[o] = false;
            self.shrink(work.bytes[o]);
        }
    }

    /// Runs one job: its inputs and output touched, its scratch held while it runs.
    fn job(&mut self, work: &Work<'_>, job: Job) {
        let (r, n) = work.reads(job);
        for &o in &r[..n] {
            self.touch(work, o);
        }
        if let Some(w) = work.writes(job) {
            self.touch(work, w);
        }
        let scratch = work.scratch(job);
        self.peak = self.peak.max(self.held + scratch);
        if scratch > 0 {
            self.grow(scratch);
            self.shrink(scratch);
        }
    }
}

/// The peaks of `stages`. See the [module documentation](self).
pub(super) fn peaks(work: &Work<'_>, stages: &[Stage]) -> Peaks {
    let mut live = Live::new(work.objects());
    for stage in stages {
        for &p in &stage.contractions {
            live.job(work, Job::Contract(p));
        }
        for &t in &stage.traces {
            live.job(work, Job::Trace(t));
        }
        for &op in &stage.release {
            live.release(work, work.obj(op));
        }
    }
    Peaks {
        live: live.peak,
        with_pool: live.sizes.iter().map(|(size, (_, most))| size * most).sum(),
    }
}
