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
    /// * every resident object has the blocks its layout and packing call for, each at least as
    ///   large as needed and no larger than the reuse tolerance allows;
    /// * every host copy has the length of its object's layout (that an object has a host copy,
    ///   a device copy or a write-back in flight exactly when its state says so needs no check:
    ///   the state holds them, see [`lifecycle`](crate::lifecycle));
    /// * no lifecycle transition was ever refused;
    /// * every pooled block is filed under its own size, and the pool's running count and byte
    ///   total match its blocks;
    /// * the policy tracks exactly the resident objects;
    /// * no object is left pinned outside a launch;
    /// * with managed memory, nothing is pooled and nothing was ever evicted;
    /// * every prefetched object not yet used is resident and consistent, and only with
    ///   prefetch on, which adds exactly one (copy) stream.
    pub fn audit(&self) -> Result<(), AuditError> {
        let mut bad = Vec::new();

        let (budget, used, pool) = (self.space.budget, self.space.used, &self.space.pool);
        let resident_sum: usize = self.objects.resident().map(|(_, r)| r.bytes()).sum();
        let pooled_sum: usize = pool.iter().map(|(_, p)| p.block.bytes()).sum();
        if pooled_sum != pool.bytes() {
            bad.push(format!(
                "free pool total {} != sum of its buffers {pooled_sum}",
                pool.bytes()
            ));
        }
        let pooled_count = pool.iter().count();
        if pooled_count != pool.len() {
            bad.push(format!(
                "free pool count {} != its buffers {pooled_count}",
                pool.len()
            ));
        }
        if used != resident_sum + pooled_sum {
            bad.push(format!(
                "{used} bytes accounted, but resident {resident_sum} + pooled {pooled_sum} are live"
            ));
        }
        let live = self.backend.counters().live_bytes;
        let driver_bytes = match &self.space.arena {
            Some(arena) => arena.space.capacity(),
            None => used,
        };
        if live != driver_bytes as u64 {
            bad.push(format!(
                "the backend has {live} bytes allocated and not freed, the runtime accounts {}",
                driver_bytes
            ));
        }
        if used > budget {
            bad.push(format!("{used} bytes held, over the budget of {budget}"));
        }

        let mut handles: HashMap<u64, &'static str> = HashMap::new();
        let mut note = |h: u64, place: &'static str, bad: &mut Vec<String>| {
            if let Some(prev) = handles.insert(h, place) {
                bad.push(format!("buffer {h:#x} is held twice ({prev} and {place})"));
            }
        };
        let held = self
            .objects
            .resident()
            .flat_map(|(_, r)| r.blocks.iter().map(|b| (b, "a device copy")))
            .chain(pool.iter().map(|(_, p)| (&p.block, "free pool")));
        let mut ranges = Vec::new();
        for (block, place) in held {
            match (block, &self.space.arena) {
                (Block::Buffer(b), _) => note(b.handle(), place, &mut bad),
                (Block::Arena { offset, size }, Some(_)) => ranges.push((*offset, *size)),
                (Block::Arena { .. }, None) => {
                    bad.push(format!("{block:?} is held, but there is no arena"));
                }
            }
        }
        if let Some(arena) = &self.space.arena {
            if !handles.is_empty() {
                bad.push(format!(
                    "{} driver buffer(s) held besides the arena",
                    handles.len()
                ));
            }
            if arena.space.capacity() - arena.space.free_bytes() != used {
                bad.push(format!(
                    "the arena has {} of its {} bytes in use, the runtime accounts {used}",
                    arena.space.capacity() - arena.space.free_bytes(),
                    arena.space.capacity(),
                ));
            }
            bad.extend(arena.space.audit(ranges.into_iter()));
        }
        for (size, p) in pool.iter() {
            if p.block.bytes() != size {
                bad.push(format!(
                    "pooled {:?} of {} bytes is filed under {size}",
                    p.block,
                    p.block.bytes()
                ));
            }
        }

        for (id, e) in self.objects.iter() {
            let Some(r) = e.device() else {
                continue;
            };
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
        for (from, t, n) in self.objects.transitions.refused() {
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
        let cached: HashSet<ObjectId> = self.objects.resident().map(|(id, _)| id).collect();
        if tracked_set != cached {
            let mut missing: Vec<_> = cached.difference(&tracked_set).collect();
            let mut extra: Vec<_> = tracked_set.difference(&cached).collect();
            missing.sort();
            extra.sort();
            bad.push(format!(
                "policy {} is out of step with the resident objects: untracked {missing:?}, \
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

        if self.config.managed {
            if !pool.is_empty() {
                bad.push(format!(
                    "{} bytes pooled, but managed memory is freed at once",
                    pool.bytes()
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
