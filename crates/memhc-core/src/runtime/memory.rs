//! The allocation path (one, for launches and prefetches alike), eviction, write-back and the
//! disposal of device copies.

use super::Runtime;
use super::objects::Objects;
use crate::arena::SubAllocator;
use crate::backend::{Backend, ELEMENT_BYTES, as_bytes, as_bytes_mut};
use crate::block::Block;
use crate::device_copy::DeviceCopy;
use crate::error::{BackendError, Error, Result};
use crate::events::EventKind;
use crate::free_pool::Pooled;
use crate::hazards::{Hazards, Tagged};
use crate::host_copy::HostCopy;
use crate::lifecycle::Left;
use crate::lookahead::NEVER;
use crate::object::{ObjectId, State};
use crate::policy::ResidentView;

/// Which resident objects a request for device memory may evict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Victims {
    /// Any the policy chooses, but the launch's own: a launch must run.
    Any,
    /// Only one the announced future needs after use `need` (or never), and never a prefetch
    /// still to be used: a prefetch for use `need` does no harm.
    NeededAfter(u64),
}

/// The policy's view of the object table while it picks a victim.
struct View<'a, B: Backend> {
    objects: &'a Objects<B>,
    pinned: &'a [ObjectId],
    /// Prefetches still to be used are not evictable.
    spare_prefetched: bool,
}

impl<B: Backend> ResidentView for View<'_, B> {
    fn is_evictable(&self, id: ObjectId) -> bool {
        self.objects.find(id).is_some_and(|e| {
            e.life.is_resident()
                && !(self.spare_prefetched && e.prefetched)
                && !self.pinned.contains(&id)
        })
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
    /// Launches ([`Victims::Any`]) and prefetches ([`Victims::NeededAfter`]) both come here:
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
            let fragmented = self.note_fragmentation(bytes);
            let Some(victim) = self.choose_victim(victims)? else {
                return Ok(None);
            };
            if let Victims::NeededAfter(need) = victims {
                let later = self.lookahead.next_use(victim);
                if later <= need && later != NEVER {
                    return Ok(None); // do no harm: the victim is needed first
                }
            }
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

    /// Asks the policy for a victim among those `victims` allows, and checks its answer.
    fn choose_victim(&mut self, victims: Victims) -> Result<Option<ObjectId>> {
        let view = View {
            objects: &self.objects,
            pinned: &self.pinned,
            spare_prefetched: victims != Victims::Any,
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

    /// Records the copy back of `id` that [`Runtime::read_back`] just made on `stream`.
    fn note_copy_back(&mut self, id: ObjectId, stream: usize) {
        if !self.events.is_on() {
            return;
        }
        let calls = self.objects.device(id).map_or(0, |r| r.blocks.len()) as u32;
        let on = (!self.config.managed).then_some(stream);
        self.note_object(EventKind::CopyD2H { calls }, id, on);
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

    /// Reads the device copy of a resident object into a host copy, ordered after its last
    /// write, on `stream`: a vector (from the host pool, or new), or with
    /// [`Config::pinned_results`](crate::Config::pinned_results) the backend's host memory (one
    /// DMA per block). With managed memory the host reads it in place once its work is done.
    /// Changes no state: the caller takes `Synced` or `WrittenBack`.
    fn read_back(&mut self, id: ObjectId, stream: usize) -> Result<HostCopy<B>> {
        let layout = self.entry(id)?.layout;
        if self.config.managed {
            let host = self.host_pool.vecs.take_vec(layout.elems());
            return self.managed_read_back(id, host).map(HostCopy::from);
        }
        if self.config.pinned_results {
            return self.read_back_pinned(id, stream);
        }
        let mut host = self.host_pool.vecs.take_vec(layout.elems());
        let r = self
            .objects
            .device(id)
            .ok_or_else(|| Error::Internal(format!("syncing {id}, which is not resident")))?;
        let s = &self.streams[stream];
        r.hazards.before_read(&self.backend, stream, s)?;
        let chunk = r.block_elems(&layout);
        for (values, block) in host.chunks_mut(chunk).zip(&r.blocks) {
            let (buffer, offset) = block
                .place(self.space.arena_buffer())
                .ok_or_else(|| Error::Internal(format!("{id} is in an arena that is not there")))?;
            match layout.tiles() {
                Some(t) => {
                    self.backend
                        .copy_d2h_tiled(s, buffer, offset, as_bytes_mut(values), &t)?
                }
                None => self
                    .backend
                    .copy_d2h(s, buffer, offset, as_bytes_mut(values))?,
            }
        }
        Ok(host.into())
    }

    /// [`Runtime::read_back`] into the backend's host memory: the copies are queued, then the
    /// host waits for the stream.
    fn read_back_pinned(&mut self, id: ObjectId, stream: usize) -> Result<HostCopy<B>> {
        let layout = self.entry(id)?.layout;
        let host = self.alloc_host(layout)?;
        let r = self
            .objects
            .device(id)
            .ok_or_else(|| Error::Internal(format!("syncing {id}, which is not resident")))?;
        let Some((dst, _)) = host.host_buffer() else {
            return Ok(host); // an empty object
        };
        let s = &self.streams[stream];
        let total = layout.bytes();
        let chunk = r.block_elems(&layout) * ELEMENT_BYTES;
        let queued = r
            .hazards
            .before_read(&self.backend, stream, s)
            .map_err(Error::from)
            .and_then(|()| {
                for (i, block) in r.blocks.iter().enumerate() {
                    let (buffer, offset) = placed(block, self.space.arena_buffer(), id)?;
                    let at = i * chunk;
                    let len = chunk.min(total.saturating_sub(at));
                    match layout.tiles() {
                        Some(t) => self
                            .backend
                            .copy_d2h_async_tiled(s, buffer, offset, dst, at, &t)?,
                        None => self
                            .backend
                            .copy_d2h_async(s, buffer, offset, dst, at, len)?,
                    }
                }
                Ok(())
            });
        // Done or failed, the copies queued must finish before the host memory or the blocks
        // move on.
        let finished = self.backend.stream_synchronize(s);
        queued?;
        finished?;
        Ok(host)
    }

    /// Queues the copy of an object's host values into its new device buffers.
    /// A host copy in the backend's host memory is copied in place, one DMA per block; a
    /// vector through the backend's staging.
    ///
    /// A copy from the backend's host memory is noted in the host copy as a read in flight
    /// (an event after it), so the memory is not reused for a copy back before it is done,
    /// whatever becomes of the device copy meanwhile; that event is returned, for a caller
    /// that needs one after the copy too (`None` after a staged copy, which records none).
    pub(super) fn copy_in(
        &mut self,
        stream: usize,
        id: ObjectId,
        r: &DeviceCopy<B>,
    ) -> Result<Option<B::Event>> {
        let e = self.entry(id)?;
        let Some(host) = e.life.host() else {
            return Err(Error::Uninitialized(id));
        };
        let s = &self.streams[stream];
        r.hazards.before_write(&self.backend, stream, s)?;
        let chunk = r.block_elems(&e.layout);
        let place = |block| placed(block, self.space.arena_buffer(), id);
        if let Some((src, elems)) = host.host_buffer() {
            let (total, chunk) = (elems * ELEMENT_BYTES, chunk * ELEMENT_BYTES);
            for (i, block) in r.blocks.iter().enumerate() {
                let (buffer, offset) = place(block)?;
                let at = i * chunk;
                let len = chunk.min(total.saturating_sub(at));
                match e.layout.tiles() {
                    Some(t) => self
                        .backend
                        .copy_h2d_async_tiled(s, src, at, buffer, offset, &t)?,
                    None => self
                        .backend
                        .copy_h2d_async(s, src, at, buffer, offset, len)?,
                }
            }
            let event = self.backend.create_event()?;
            self.backend.record_event(&event, s)?;
            if let Some(host) = self.objects.find_mut(id).and_then(|e| e.life.host_mut()) {
                let read = Tagged {
                    stream,
                    event: event.clone(),
                };
                host.note_read(&self.backend, read);
            }
            return Ok(Some(event));
        }
        let values = host.as_slice().unwrap_or_default();
        for (values, block) in values.chunks(chunk).zip(&r.blocks) {
            let (buffer, offset) = place(block)?;
            match e.layout.tiles() {
                Some(t) => self
                    .backend
                    .copy_h2d_tiled(s, as_bytes(values), buffer, offset, &t)?,
                None => self.backend.copy_h2d(s, as_bytes(values), buffer, offset)?,
            }
        }
        Ok(None)
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

/// Where `block` of object `id` lives: a buffer and an offset in it.
fn placed<'a, B: Backend>(
    block: &'a Block<B>,
    arena: Option<&'a B::Buffer>,
    id: ObjectId,
) -> Result<(&'a B::Buffer, usize)> {
    block
        .place(arena)
        .ok_or_else(|| Error::Internal(format!("{id} is in an arena that is not there")))
}
