//! The allocation path (one, for launches and prefetches alike), eviction and the disposal of
//! device copies. (The copies in and back are in `copies.rs`, asynchronous write-back in
//! `writeback.rs`.)

use super::Runtime;
use super::objects::Objects;
use crate::arena::SubAllocator;
use crate::backend::Backend;
use crate::block::Block;
use crate::device_copy::DeviceCopy;
use crate::error::{BackendError, Error, Result};
use crate::events::EventKind;
use crate::free_pool::Pooled;
use crate::hazards::Hazards;
use crate::lifecycle::Left;
use crate::object::{ObjectId, State};
use crate::policy::ResidentView;

/// Which resident objects a request for device memory may evict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Victims {
    /// Any the policy chooses, but the launch's own: a launch must run.
    Any,
    /// None: a prefetch takes only memory that is free (a pooled block, a new one within the
    /// budget, or the pool drained), never an object's. An eviction for a prefetch would be
    /// one the run without prefetch need not make (`prefetch.rs`).
    Nothing,
}

/// The policy's view of the object table while it picks a victim.
struct View<'a, B: Backend> {
    objects: &'a Objects<B>,
    pinned: &'a [ObjectId],
}

impl<B: Backend> ResidentView for View<'_, B> {
    fn is_evictable(&self, id: ObjectId) -> bool {
        self.objects
            .find(id)
            .is_some_and(|e| e.life.is_resident() && !self.pinned.contains(&id))
    }

    fn is_dirty(&self, id: ObjectId) -> bool {
        self.objects.state(id) == Some(State::DeviceDirty)
    }
}

impl<B: Backend> Runtime<B> {
    /// A block of `bytes`, with the uses it still has in flight (non-empty for a pool reuse or
    /// a handover): pool reuse (within the reuse tolerance), else a new block (a driver
    /// allocation within the budget, or a range of the arena), else drain the pool, evict one
    /// of `victims` (handing its block over when it fits), and retry. `None` when no victim is
    /// left that `victims` allows. `stream` is the stream any write-back is ordered on. With
    /// managed memory: a new managed allocation, or an error.
    ///
    /// Launches ([`Victims::Any`]) and prefetches ([`Victims::Nothing`]) both come here:
    /// there is one allocation path.
    pub(super) fn obtain_block(
        &mut self,
        bytes: usize,
        stream: usize,
        victims: Victims,
    ) -> Result<Option<(Block<B>, Hazards<B>)>> {
        if self.config.managed {
            let buffer = self.obtain_managed(bytes)?;
            let block = Block::Buffer(buffer);
            self.events.block(EventKind::Alloc, bytes, block.id());
            return Ok(Some((block, Hazards::default())));
        }
        let limit = self.config.reuse_limit(bytes);
        let (now, delay) = (self.counters.launches, self.config.reuse_delay as u64);
        let rested = |p: &Pooled<B>| p.freed_at.saturating_add(delay) <= now;
        if self.config.lazy_release
            && let Some(p) = self.take_pooled(bytes, limit, rested)
        {
            return Ok(Some(p));
        }
        loop {
            if let Some(block) = self.new_block(bytes)? {
                return Ok(Some((block, Hazards::default())));
            }
            // No room for new memory: a block still resting serves before the pool is freed.
            if self.config.lazy_release
                && delay > 0
                && let Some(p) = self.take_pooled(bytes, limit, |_| true)
            {
                return Ok(Some(p));
            }
            if !self.space.pool.is_empty() {
                self.drain_pool()?;
                continue;
            }
            if victims == Victims::Nothing {
                return Ok(None);
            }
            let fragmented = self.note_fragmentation(bytes);
            let Some(victim) = self.choose_victim()? else {
                return Ok(None);
            };
            if fragmented {
                self.counters.fragmentation_evictions += 1;
            }
            if let Some(handed) = self.evict_for(victim, stream, bytes, limit)? {
                return Ok(Some(handed));
            }
        }
    }

    /// A pooled block for a request of `bytes` (up to `limit`) among those `eligible` allows,
    /// counted as a pool reuse, with the uses its new owner must wait for.
    fn take_pooled(
        &mut self,
        bytes: usize,
        limit: usize,
        eligible: impl Fn(&Pooled<B>) -> bool,
    ) -> Option<(Block<B>, Hazards<B>)> {
        let p = self.space.pool.take(bytes, limit, eligible)?;
        self.events
            .block(EventKind::PoolReuse, p.block.bytes(), p.block.id());
        self.counters.pool_reuses += 1;
        self.counters.pool_slack_bytes += (p.block.bytes() - bytes) as u64;
        Some((p.block, p.hazards))
    }

    /// A new block of `bytes` if there is room for one: a range of the arena, or a driver
    /// allocation within the budget. `None` when there is none (the arena has no free piece
    /// that large, the budget is spent, or the device is out of memory).
    pub(super) fn new_block(&mut self, bytes: usize) -> Result<Option<Block<B>>> {
        if let Some(arena) = &mut self.space.arena {
            let Some((offset, size)) = arena.space.alloc(bytes) else {
                return Ok(None);
            };
            self.space.used += size;
            self.counters.arena_allocations += 1;
            let block = Block::Arena { offset, size };
            self.events.block(EventKind::ArenaAlloc, size, block.id());
            return Ok(Some(block));
        }
        if self.space.used + bytes > self.space.budget {
            return Ok(None);
        }
        match self.backend.alloc(bytes) {
            Ok(buffer) => {
                self.space.used += bytes;
                let block = Block::Buffer(buffer);
                self.events.block(EventKind::Alloc, bytes, block.id());
                Ok(Some(block))
            }
            // The device has less free memory than the budget says (another process,
            // fragmentation): make room as if over budget.
            Err(BackendError::OutOfMemory { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// In arena mode, whether a request of `bytes` fails although the arena has that many bytes
    /// free (in pieces); notes the stranded bytes.
    fn note_fragmentation(&mut self, bytes: usize) -> bool {
        let Some(arena) = &self.space.arena else {
            return false;
        };
        let free = arena.space.free_bytes();
        if free < SubAllocator::rounded(bytes) {
            return false;
        }
        let c = &mut self.counters;
        c.arena_stranded_bytes = c.arena_stranded_bytes.max(free as u64);
        true
    }

    /// The error when nothing is left to evict for a request of `bytes`.
    pub(super) fn no_room(&self, bytes: usize) -> Error {
        let budget = self.space.budget;
        if let Some(arena) = &self.space.arena
            && arena.space.free_bytes() >= SubAllocator::rounded(bytes)
        {
            return Error::Fragmented {
                needed: bytes,
                free: arena.space.free_bytes(),
                largest: arena.space.largest_free(),
            };
        }
        let pinned = self.pinned_bytes();
        let device_room = if self.space.arena.is_some() {
            budget
        } else {
            self.backend
                .mem_info()
                .map(|m| m.free + self.space.used)
                .unwrap_or(budget)
        };
        Error::DoesNotFit {
            needed: pinned + bytes,
            available: budget.min(device_room),
            budget,
        }
    }

    /// Bytes of resident objects the current launch is using.
    fn pinned_bytes(&self) -> usize {
        self.pinned
            .iter()
            .filter_map(|&id| self.objects.device(id))
            .map(DeviceCopy::bytes)
            .sum()
    }

    /// Asks the policy for a victim among the resident objects the launch does not pin, and
    /// checks its answer.
    fn choose_victim(&mut self) -> Result<Option<ObjectId>> {
        let view = View {
            objects: &self.objects,
            pinned: &self.pinned,
        };
        let victim = self.policy.choose_victim(&view);
        match victim {
            Some(id) if !view.is_evictable(id) => Err(Error::Internal(format!(
                "policy {} chose {id}, which is not an evictable resident object",
                self.policy.name()
            ))),
            other => Ok(other),
        }
    }

    /// Evicts `victim` to make room for a request of `bytes` (at most `limit` bytes may serve
    /// it). With handover on, a block of the victim that fits is returned for the request and
    /// the others are freed; otherwise all are freed and `None` is returned.
    pub(super) fn evict_for(
        &mut self,
        victim: ObjectId,
        stream: usize,
        bytes: usize,
        limit: usize,
    ) -> Result<Option<(Block<B>, Hazards<B>)>> {
        let mut r = self.evict_resident(victim, stream)?;
        let fits = |b: &Block<B>| (bytes..=limit).contains(&b.bytes());
        let handed = match self.config.handover {
            true => r.blocks.iter().position(fits),
            false => None,
        };
        let Some(i) = handed else {
            self.settle_async(&r)?;
            self.free_blocks(r.blocks)?;
            return Ok(None);
        };
        let block = r.blocks.swap_remove(i);
        // The victim's other blocks (unpacked) are freed, after its uses.
        let freed = match r.blocks.is_empty() {
            true => Ok(()),
            false => self
                .settle_async(&r)
                .and_then(|()| self.free_blocks(r.blocks)),
        };
        if let Err(e) = freed {
            // The request fails; the block it would have had goes too.
            let _ = self.free_blocks([block]);
            return Err(e);
        }
        self.counters.handovers += 1;
        self.counters.pool_slack_bytes += (block.bytes() - bytes) as u64;
        self.events
            .block(EventKind::Handover, block.bytes(), block.id());
        // The victim's uses (and an asynchronous write-back) go with the block: its new user
        // waits for them.
        Ok(Some((block, r.hazards)))
    }

    /// Evicts a resident object and frees its blocks.
    pub(super) fn evict(&mut self, id: ObjectId, stream: usize) -> Result<()> {
        let r = self.evict_resident(id, stream)?;
        self.settle_async(&r)?;
        self.free_blocks(r.blocks)
    }

    /// With asynchronous write-back (prefetch on), an evicted copy's uses are not waited for by
    /// the eviction: wait for them before its blocks are freed.
    fn settle_async(&self, r: &DeviceCopy<B>) -> Result<()> {
        if self.config.prefetch.is_some() {
            r.hazards.settle(&self.backend)?;
        }
        Ok(())
    }

    /// Evicts a resident object: writes it back first if the device copy is the only valid
    /// one (`WrittenBack`), waits for its in-flight work, and takes it out of the element cache
    /// (`Evicted`). Returns its device copy, whose blocks the caller frees or hands over. If
    /// the write-back fails, the object stays resident and dirty.
    ///
    /// With prefetch on, the write-back is queued on the copy stream instead
    /// (`WriteBackIssued`, `writeback.rs`) and nothing is waited for: the device copy's hazards
    /// carry the victim's uses and the copy.
    fn evict_resident(&mut self, id: ObjectId, stream: usize) -> Result<DeviceCopy<B>> {
        let async_copy = self.copy_stream();
        if self.entry(id)?.life.kind() == State::DeviceDirty {
            if let Some(copy) = async_copy {
                return self.evict_async(id, copy);
            }
            let host = self.read_back(id, stream)?;
            self.note_copy_back(id, stream);
            let (life, log) = self.life_mut(id)?;
            life.written_back(host, log)?;
            self.counters.writebacks += 1;
            self.events
                .note(EventKind::WriteBack, Some(id), Some(stream), 0, None);
        }
        if let Some(d) = self.objects.device(id)
            && async_copy.is_none()
        {
            d.hazards.settle(&self.backend)?;
        }
        // Refused (the object is not consistent), the eviction changes nothing.
        let (life, log) = self.life_mut(id)?;
        let d = life.evicted(log)?;
        self.policy.on_evict(id);
        self.forget_prefetch(id);
        self.counters.evictions += 1;
        self.note_object(EventKind::Evict, id, Some(stream));
        Ok(d)
    }

    /// On-demand (or eager) sync of a `DeviceDirty` object: its device copy becomes its host
    /// copy, and it becomes `Consistent` (`Synced`). On failure nothing changes.
    pub(super) fn sync_to_host(&mut self, id: ObjectId, stream: usize) -> Result<()> {
        let host = self.read_back(id, stream)?;
        self.note_copy_back(id, stream);
        let (life, log) = self.life_mut(id)?;
        life.synced(host, log)?;
        self.events
            .note(EventKind::Sync, Some(id), Some(stream), 0, None);
        self.policy.on_synced(id);
        Ok(())
    }

    /// Disposes of what a transition took off the device side of `id` (`HostWritten`,
    /// `Released`): a device copy as [`Runtime::discard_device`] does, a write-back in flight
    /// once its copy has completed.
    pub(super) fn dispose_left(&mut self, id: ObjectId, left: Left<B>) -> Result<()> {
        match left {
            Left::Nothing => Ok(()),
            Left::Device(d) => self.discard_device(id, d),
            Left::WriteBack(w) => {
                self.discard_write_back(w);
                Ok(())
            }
        }
    }

    /// Disposes of the device copy a transition took from `id` other than by eviction
    /// (`HostWritten`, `Released`, `RolledBack`, `Uncached`): the policy forgets the object,
    /// an unused prefetch of it was wasted, and its blocks go to the free pool (or are freed).
    pub(super) fn discard_device(&mut self, id: ObjectId, d: DeviceCopy<B>) -> Result<()> {
        self.forget_prefetch(id);
        self.policy.on_remove(id);
        self.note_object(EventKind::Drop, id, None);
        self.dispose(d)
    }

    /// Returns a former device copy's blocks: to the free pool with their in-flight uses when
    /// lazy release is on, else freed once those uses have completed.
    pub(super) fn dispose(&mut self, mut r: DeviceCopy<B>) -> Result<()> {
        if self.config.lazy_release {
            // Every block keeps the object's uses; the last one takes them over.
            let mut blocks = r.blocks.into_iter().peekable();
            while let Some(block) = blocks.next() {
                let hazards = match blocks.peek() {
                    Some(_) => r.hazards.clone(),
                    None => std::mem::take(&mut r.hazards),
                };
                self.events.note(
                    EventKind::PoolPut,
                    None,
                    None,
                    block.bytes(),
                    Some(block.id()),
                );
                self.space.pool.put(Pooled {
                    block,
                    hazards,
                    freed_at: self.counters.launches,
                });
            }
            Ok(())
        } else {
            r.hazards.settle(&self.backend)?;
            self.free_blocks(r.blocks)
        }
    }

    /// Frees blocks whose uses have completed: driver buffers back to the driver, arena ranges
    /// back to the arena. Every block is consumed (and its bytes stop counting) even if a free
    /// fails; the first failure is reported.
    fn free_blocks(&mut self, blocks: impl IntoIterator<Item = Block<B>>) -> Result<()> {
        let mut first = Ok(());
        for block in blocks {
            self.space.used -= block.bytes();
            let kind = match block {
                Block::Buffer(_) => EventKind::Free,
                Block::Arena { .. } => EventKind::ArenaFree,
            };
            self.events
                .note(kind, None, None, block.bytes(), Some(block.id()));
            let freed = match block {
                Block::Buffer(b) => self.backend.free(b).map_err(Error::from),
                Block::Arena { offset, size } => match &mut self.space.arena {
                    Some(arena) => arena.space.release(offset, size).map_err(Error::Internal),
                    None => Err(Error::Internal(format!(
                        "arena bytes {offset}+{size} freed without an arena"
                    ))),
                },
            };
            first = first.and(freed);
        }
        first
    }

    /// Frees every pooled block (MemHC's step 4: the pool goes before anything is evicted).
    pub(super) fn drain_pool(&mut self) -> Result<()> {
        let mut first = Ok(());
        for p in self.space.pool.drain() {
            let settled = p.hazards.settle(&self.backend);
            // A block whose uses cannot be confirmed complete must not be freed: keep it.
            if let Err(e) = settled {
                self.space.pool.put(p);
                first = first.and(Err(e.into()));
                continue;
            }
            first = first.and(self.free_blocks([p.block]));
        }
        first
    }
}
