//! `Runtime::audit`: every invariant of the tables, checked from scratch (in the manner of
//! Grid's `MemoryManager::Audit`).

use std::collections::{HashMap, HashSet};

use super::Runtime;
use crate::backend::{Backend, DeviceMemory};
use crate::object::ObjectId;

/// The invariants an audit found broken, one line each.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("runtime audit failed:\n  {}", .0.join("\n  "))]
pub struct AuditError(pub Vec<String>);

impl<B: Backend> Runtime<B> {
    /// Checks every invariant of the runtime's tables:
    ///
    /// * the bytes accounted equal the sum of live buffers (resident plus pooled), and the
    ///   bytes the backend wrapper saw allocated and not freed;
    /// * the budget is respected;
    /// * no buffer is held twice (in the element cache and the free pool, or twice in either);
    /// * every resident object is live, in a resident state, and has the buffers its layout and
    ///   packing call for; every object in a resident state is in the element cache;
    /// * every host copy has the length of its object's layout (that an object has a host copy
    ///   exactly when its state says so needs no check: the state holds it, see
    ///   [`lifecycle`](crate::lifecycle));
    /// * no lifecycle transition was ever refused;
    /// * every pooled buffer is filed under its own size;
    /// * the policy tracks exactly the resident objects;
    /// * no object is left pinned outside a launch;
    /// * with managed memory, nothing is pooled and nothing was ever evicted.
    pub fn audit(&self) -> Result<(), AuditError> {
        let mut bad = Vec::new();

        let resident_sum: usize = self.cache.iter().map(|(_, r)| r.bytes()).sum();
        let pooled_sum: usize = self.pool.iter().map(|(_, p)| p.buffer.bytes()).sum();
        if resident_sum != self.cache.bytes() {
            bad.push(format!(
                "element cache total {} != sum of its buffers {resident_sum}",
                self.cache.bytes()
            ));
        }
        if pooled_sum != self.pool.bytes() {
            bad.push(format!(
                "free pool total {} != sum of its buffers {pooled_sum}",
                self.pool.bytes()
            ));
        }
        if self.used != resident_sum + pooled_sum {
            bad.push(format!(
                "{} bytes accounted, but resident {resident_sum} + pooled {pooled_sum} are live",
                self.used
            ));
        }
        let live = self.backend.counters().live_bytes;
        if live != self.used as u64 {
            bad.push(format!(
                "the backend has {live} bytes allocated and not freed, the runtime accounts {}",
                self.used
            ));
        }
        if self.used > self.budget {
            bad.push(format!(
                "{} bytes held, over the budget of {}",
                self.used, self.budget
            ));
        }

        let mut handles: HashMap<u64, &'static str> = HashMap::new();
        let mut note = |h: u64, place: &'static str, bad: &mut Vec<String>| {
            if let Some(prev) = handles.insert(h, place) {
                bad.push(format!("buffer {h:#x} is held twice ({prev} and {place})"));
            }
        };
        for (_, r) in self.cache.iter() {
            for b in &r.buffers {
                note(b.handle(), "element cache", &mut bad);
            }
        }
        for (size, p) in self.pool.iter() {
            note(p.buffer.handle(), "free pool", &mut bad);
            if p.buffer.bytes() != size {
                bad.push(format!(
                    "pooled buffer {:#x} of {} bytes is filed under {size}",
                    p.buffer.handle(),
                    p.buffer.bytes()
                ));
            }
        }

        for (&id, r) in self.cache.iter() {
            let Some(e) = self.objects.get(&id) else {
                bad.push(format!("{id} is resident but is not a live object"));
                continue;
            };
            if !e.life.kind().is_resident() {
                bad.push(format!(
                    "{id} is resident but its state is {:?}",
                    e.life.kind()
                ));
            }
            let l = &e.layout;
            let shape_ok = if r.packed {
                r.buffers.len() == 1 && r.bytes() == l.bytes()
            } else {
                r.buffers.len() == l.components()
                    && r.buffers.iter().all(|b| b.bytes() == l.component_bytes())
            };
            if !shape_ok || r.packed != self.config.packing {
                bad.push(format!(
                    "{id}: {} buffer(s) of {} bytes (packed: {}) do not match its layout {l:?} \
                     with packing {}",
                    r.buffers.len(),
                    r.bytes(),
                    r.packed,
                    self.config.packing
                ));
            }
        }
        for (&id, e) in &self.objects {
            let state = e.life.kind();
            if state.is_resident() && !self.cache.contains(id) {
                bad.push(format!("{id} is {state:?} but not in the element cache"));
            }
            if let Some(h) = e.life.host()
                && h.len() != e.layout.elems()
            {
                bad.push(format!(
                    "{id}: host copy of {} elements, layout needs {}",
                    h.len(),
                    e.layout.elems()
                ));
            }
        }
        for (from, t, n) in self.transitions.refused() {
            bad.push(format!(
                "the lifecycle refused {t:?} from {from:?} {n} time(s)"
            ));
        }

        let tracked = self.policy.resident();
        let tracked_set: HashSet<ObjectId> = tracked.iter().copied().collect();
        if tracked_set.len() != tracked.len() {
            bad.push(format!(
                "policy {} lists an object twice",
                self.policy.name()
            ));
        }
        let cached: HashSet<ObjectId> = self.cache.iter().map(|(&id, _)| id).collect();
        if tracked_set != cached {
            let mut missing: Vec<_> = cached.difference(&tracked_set).collect();
            let mut extra: Vec<_> = tracked_set.difference(&cached).collect();
            missing.sort();
            extra.sort();
            bad.push(format!(
                "policy {} is out of step with the element cache: untracked {missing:?}, \
                 not resident {extra:?}",
                self.policy.name()
            ));
        }
        if !self.pinned.is_empty() {
            bad.push(format!(
                "{} object(s) left pinned outside a launch",
                self.pinned.len()
            ));
        }

        if self.config.managed {
            if !self.pool.is_empty() {
                bad.push(format!(
                    "{} bytes pooled, but managed memory is freed at once",
                    self.pool.bytes()
                ));
            }
            if self.counters.evictions > 0 {
                bad.push(format!(
                    "{} eviction(s), but managed memory is never evicted",
                    self.counters.evictions
                ));
            }
        }

        if bad.is_empty() {
            Ok(())
        } else {
            Err(AuditError(bad))
        }
    }
}
