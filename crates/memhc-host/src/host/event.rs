//! Host events: generation counters that stream workers advance.
//!
//! Recording an event bumps its `recorded` generation and queues a job on the stream that
//! raises `completed` to that generation. A wait captures the `recorded` generation at the time
//! of the call (CUDA semantics: the most recent record), so a wait only ever depends on work
//! that was already queued, and waits cannot form a cycle.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

#[derive(Debug, Default)]
struct Generations {
    recorded: u64,
    completed: u64,
}

#[derive(Debug, Default)]
struct EventState {
    gens: Mutex<Generations>,
    changed: Condvar,
}

/// A completion marker of the host backend. Clones share the same event.
#[derive(Clone, Debug, Default)]
pub struct HostEvent(Arc<EventState>);

impl HostEvent {
    fn lock(&self) -> MutexGuard<'_, Generations> {
        self.0.gens.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts a new record; returns the generation the stream job must complete.
    pub(super) fn begin_record(&self) -> u64 {
        let mut g = self.lock();
        g.recorded += 1;
        g.recorded
    }

    /// Called by the stream worker when it reaches the record.
    pub(super) fn complete(&self, generation: u64) {
        let mut g = self.lock();
        g.completed = g.completed.max(generation);
        drop(g);
        self.0.changed.notify_all();
    }

    /// The generation a wait issued now must wait for.
    pub(super) fn target(&self) -> u64 {
        self.lock().recorded
    }

    /// Whether generation `target` has completed.
    pub(super) fn reached(&self, target: u64) -> bool {
        self.lock().completed >= target
    }

    /// Blocks until generation `target` has completed.
    pub(super) fn wait_for(&self, target: u64) {
        let mut g = self.lock();
        while g.completed < target {
            g = self.0.changed.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }
}
