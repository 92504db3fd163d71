//! `Runtime::audit`: every invariant of the tables, checked from scratch (in the manner of
//! Grid's `MemoryManager::Audit`).

use std::collections::{HashMap, HashSet};

use super::Runtime;
use crate::backend::{Backend, DeviceMemory};
use crate::block::Block;
use crate::object::ObjectId;

/// The invariants an audit found broken, one line each.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("runtime audit failed:\n  {}", .0.join("\n  "))]
pub struct AuditError(pub Vec<String>);

impl<B: Backend> Runtime<B> {
    /// Checks every invariant of the runtime's tables:
    ///
    /// * the bytes accounted equal the sum of live blocks (resident plus pooled), and the
    ///   bytes the backend wrapper saw allocated and not freed (in arena mode: the arena alone);
    /// * the budget is respected;
    /// * no buffer is held twice (in the element cache and the free pool, or twice in either);
    /// * in arena mode, every block is a range of the arena, and the ranges held and the free
    ///   ones are disjoint, the free ones merged, and together cover the arena exactly; without
    ///   an arena, no block claims to be in one;
    /// * every resident object is live, in a resident state, and has the blocks its layout and
    ///   packing call for, each at least as large as needed and no larger than the reuse
    ///   tolerance allows; every object in a resident state is in the element cache;
    /// * every host copy has the length of its object's layout (that an object has a host copy
    ///   exactly when its state says so needs no check: the state holds it, see
    ///   [`lifecycle`](crate::lifecycle));
    /// * no lifecycle transition was ever refused;
    /// * every pooled block is filed under its own size, and the pool's running count and byte
    ///   total match its blocks;
    /// * the policy tracks exactly the resident objects;
    /// * no object is left pinned outside a launch;
    /// * with managed memory, nothing is pooled and nothing was ever evicted;
    /// * every prefetched object not yet used is resident and consistent, and only with
    ///   prefetch on, which adds exactly one (copy) stream;
    /// * exactly the `WritingBack` objects have a write-back in flight, and none is resident.
    pub fn audit(&self) -> Result<(), AuditError> {
        let mut bad = Vec::new();

        let resident_sum: usize = self.cache.iter().map(|(_, r)| r.bytes()).sum();
        let pooled_sum: usize = self.pool.iter().map(|(_, p)| p.block.bytes()).sum();
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
        let pooled_count = self.pool.iter().count();
        if pooled_count != self.pool.len() {
            bad.push(format!(
                "free pool count {} != its buffers {pooled_count}",
                self.pool.len()
            ));
        }
        if self.used != resident_sum + pooled_sum {
            bad.push(format!(
                "{} bytes accounted, but resident {resident_sum} + pooled {pooled_sum} are live",
                self.used
            ));
        }
        let live = self.backend.counters().live_bytes;
        let driver_bytes = match &self.arena {
            Some(arena) => arena.space.capacity(),
            None => self.used,
        };
        if live != driver_bytes as u64 {
            bad.push(format!(
                "the backend has {live} bytes allocated and not freed, the runtime accounts {}",
                driver_bytes
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
        let held = self
            .cache
            .iter()
            .flat_map(|(_, r)| r.blocks.iter().map(|b| (b, "element cache")))
            .chain(self.pool.iter().map(|(_, p)| (&p.block, "free pool")));
        let mut ranges = Vec::new();
        for (block, place) in held {
            match (block, &self.arena) {
                (Block::Buffer(b), _) => note(b.handle(), place, &mut bad),
                (Block::Arena { offset, size }, Some(_)) => ranges.push((*offset, *size)),
                (Block::Arena { .. }, None) => {
                    bad.push(format!("{block:?} is held, but there is no arena"));
                }
            }
        }
        if let Some(arena) = &self.arena {
            if !handles.is_empty() {
                bad.push(format!(
                    "{} driver buffer(s) held besides the arena",
                    handles.len()
                ));
            }
            if arena.space.capacity() - arena.space.free_bytes() != self.used {
                bad.push(format!(
                    "the arena has {} of its {} bytes in use, the runtime accounts {}",
                    arena.space.capacity() - arena.space.free_bytes(),
                    arena.space.capacity(),
                    self.used
                ));
            }
            bad.extend(arena.space.audit(ranges.into_iter()));
        }
        for (size, p) in self.pool.iter() {
            if p.block.bytes() != size {
                bad.push(format!(
                    "pooled {:?} of {} bytes is filed under {size}",
                    p.block,
                    p.block.bytes()
                ));
            }
        }

        for (id, r) in self.cache.iter() {
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
            let (count, each) = if r.packed {
                (1, l.bytes())
            } else {
                (l.components(), l.component_bytes())
            };
            let limit = self.config.reuse_limit(each);
            let shape_ok = r.blocks.len() == count
                && r.blocks.iter().all(|b| (each..=limit).contains(&b.bytes()));
            if !shape_ok || r.packed != self.config.packing {
                bad.push(format!(
                    "{id}: {} block(s) of {} bytes (packed: {}) do not match its layout {l:?} \
                     with packing {} (blocks of {each} to {limit} bytes)",
                    r.blocks.len(),
                    r.bytes(),
                    r.packed,
                    self.config.packing
                ));
            }
        }
        for (id, e) in self.objects.iter() {
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
        let cached: HashSet<ObjectId> = self.cache.iter().map(|(id, _)| id).collect();
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

        self.audit_prefetch(&mut bad);
        self.audit_write_backs(&mut bad);

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
