//! Prefetch: bringing in, on the runtime's copy stream, the objects the next uses of the
//! announced future will read, while the launches already queued compute
//! ([`Config::prefetch`](crate::Config::prefetch)).
//!
//! After every successful launch the runtime walks the next `window` uses of the future. For
//! each object that is not resident and holds its value on the host, it obtains device memory
//! as the allocation path does (free pool, a new block within the budget, the pool drained,
//! then evictions with handover), queues the copy on the copy stream and records an event
//! there: the launch that reads the object waits for that event through the object's hazards,
//! like any other write. The object is `Prefetched` (`HostValid` to `Consistent`) and the policy
//! hears `on_prefetch`, which consumes no use: the use itself is a hit later.
//!
//! Two rules keep it from doing harm:
//!
//! * **the budget**: every block comes through the same accounting as the allocation path's,
//!   so prefetch never holds more than the budget;
//! * **do no harm**: a victim is evicted for a prefetch only if its next use comes after the
//!   prefetched object's next use; when the policy's victim is needed sooner (or is a launch's
//!   or another prefetch's object), prefetching stops until the next launch.
//!
//! Prefetching is advisory: a failure (a refused allocation or copy) stops it for this launch
//! and leaves the object on the host, to be fetched on demand; every table stays exact. A
//! prefetched object that leaves the device before its use (evicted by a launch, released,
//! overwritten from the host) is counted as wasted; its blocks go where any object's go.

use super::Runtime;
use crate::backend::Backend;
use crate::block::Block;
use crate::element_cache::Resident;
use crate::error::Result;
use crate::events::EventKind;
use crate::hazards::{Hazards, Tagged};
use crate::lookahead::NEVER;
use crate::object::{ObjectId, State};

impl<B: Backend> Runtime<B> {
    /// The index of the copy stream (after the launch streams), when prefetch is on.
    pub(super) fn copy_stream(&self) -> Option<usize> {
        self.config.prefetch.map(|_| self.config.streams)
    }

    /// A launch is about to use `id` (prefetch on): its planned use is consumed, a prefetch it
    /// finds is a prefetch hit, and a write-back still in flight lands first.
    pub(super) fn note_use(&mut self, id: ObjectId) -> Result<()> {
        if self.config.prefetch.is_none() {
            return Ok(());
        }
        self.lookahead.consume(id);
        if self.prefetched.remove(&id) {
            self.counters.prefetch_hits += 1;
        }
        if self.entry(id)?.life.kind() == State::WritingBack {
            self.land(id)?;
        }
        Ok(())
    }

    /// `id` leaves the device: if a prefetch brought it in and nothing used it, that prefetch
    /// was wasted.
    pub(super) fn forget_prefetch(&mut self, id: ObjectId) {
        if self.prefetched.remove(&id) {
            self.counters.prefetch_wasted += 1;
        }
    }

    /// After a launch: prefetches the objects of the next uses (see the module documentation).
    /// Failures stop it and are not reported: the objects stay on the host.
    pub(super) fn prefetch_ahead(&mut self) {
        let (Some(p), Some(copy)) = (self.config.prefetch, self.copy_stream()) else {
            return;
        };
        let mut wanted = std::mem::take(&mut self.scratch_prefetch);
        wanted.clear();
        wanted.extend(self.lookahead.ahead(p.window).filter(|&(_, id)| {
            !self.cache.contains(id)
                && self
                    .objects
                    .get(&id)
                    .is_some_and(|e| matches!(e.life.kind(), State::HostValid | State::WritingBack))
        }));
        if !wanted.is_empty() {
            // The prefetcher never evicts another prefetch that is still to be used.
            self.pinned.extend(self.prefetched.iter().copied());
            for &(_, id) in &wanted {
                if self.cache.contains(id) {
                    continue; // listed twice in the window
                }
                let need = self.lookahead.next_use(id);
                match self.prefetch_one(id, need, copy) {
                    Ok(true) => self.pinned.push(id),
                    Ok(false) | Err(_) => break,
                }
            }
            self.pinned.clear();
        }
        self.scratch_prefetch = wanted;
    }

    /// Prefetches `id`, whose next use is at `need`, on stream `copy`. `Ok(false)`: no room
    /// without evicting something needed sooner (or nothing evictable); nothing changed but
    /// the free pool.
    fn prefetch_one(&mut self, id: ObjectId, need: u64, copy: usize) -> Result<bool> {
        if self.entry(id)?.life.kind() == State::WritingBack {
            self.land(id)?;
        }
        let layout = self.entry(id)?.layout;
        let (mut resident, count, size) = Resident::empty(layout, self.config.packing);
        self.events.serve(Some(id));
        for _ in 0..count {
            match self.prefetch_block(size, need, copy) {
                Ok(Some((block, hazards))) => {
                    resident.blocks.push(block);
                    resident.hazards.absorb(hazards);
                }
                Ok(None) => {
                    self.dispose(resident)?;
                    return Ok(false);
                }
                Err(e) => {
                    self.dispose(resident)?;
                    return Err(e);
                }
            }
        }
        let s = &self.streams[copy];
        let queued = self.copy_in(copy, id, &resident).and_then(|()| {
            let ev = self.backend.create_event()?;
            self.backend.record_event(&ev, s)?;
            Ok(ev)
        });
        let event = match queued {
            Ok(ev) => ev,
            Err(e) => {
                // Part of the copy may be queued: let it finish before the blocks move on.
                self.backend.stream_synchronize(s)?;
                self.dispose(resident)?;
                return Err(e);
            }
        };
        let calls = resident.blocks.len() as u32;
        self.events.note(
            EventKind::CopyH2D { calls },
            Some(id),
            Some(copy),
            layout.bytes(),
            None,
        );
        resident.hazards.set_write(Tagged {
            stream: copy,
            event,
        });
        let (life, log) = self.life_mut(id)?;
        if let Err(e) = life.prefetched(log) {
            self.dispose(resident)?;
            return Err(e.into());
        }
        if let Some(old) = self.cache.insert(id, resident) {
            // Unreachable: `id` was not resident. Keep the tables exact anyway.
            self.dispose(old)?;
        }
        self.policy.on_prefetch(id);
        self.prefetched.insert(id);
        self.counters.prefetches += 1;
        self.counters.prefetch_bytes += layout.bytes() as u64;
        self.events.note(
            EventKind::Prefetch,
            Some(id),
            Some(copy),
            layout.bytes(),
            None,
        );
        Ok(true)
    }

    /// A block of `bytes` for a prefetch whose next use is at `need`: the allocation path's
    /// steps, except that a victim is evicted only if it is needed later than `need`.
    fn prefetch_block(
        &mut self,
        bytes: usize,
        need: u64,
        copy: usize,
    ) -> Result<Option<(Block<B>, Hazards<B>)>> {
        let limit = self.config.reuse_limit(bytes);
        if self.config.lazy_release
            && let Some(p) = self.pool.take(bytes, limit)
        {
            self.events
                .block(EventKind::PoolReuse, p.block.bytes(), p.block.id());
            self.counters.pool_reuses += 1;
            self.counters.pool_slack_bytes += (p.block.bytes() - bytes) as u64;
            return Ok(Some((p.block, p.hazards)));
        }
        loop {
            if let Some(block) = self.new_block(bytes)? {
                return Ok(Some((block, Hazards::default())));
            }
            if !self.pool.is_empty() {
                self.drain_pool()?;
                continue;
            }
            let Some(victim) = self.choose_victim()? else {
                return Ok(None);
            };
            let later = self.lookahead.next_use(victim);
            if later <= need && later != NEVER {
                return Ok(None); // do no harm: the victim is needed first
            }
            if let Some(handed) = self.evict_for(victim, copy, bytes, limit)? {
                return Ok(Some(handed));
            }
        }
    }

    /// The prefetch invariants, for `audit()`: every object prefetched and not yet used is
    /// resident and consistent; without prefetch, nothing is.
    pub(super) fn audit_prefetch(&self, bad: &mut Vec<String>) {
        for &id in &self.prefetched {
            let state = self.objects.get(&id).map(|e| e.life.kind());
            if state != Some(State::Consistent) || !self.cache.contains(id) {
                bad.push(format!(
                    "{id} is a prefetch still to be used, but is {state:?} (resident: {})",
                    self.cache.contains(id)
                ));
            }
        }
        if self.config.prefetch.is_none() && !self.prefetched.is_empty() {
            bad.push(format!(
                "{} prefetched object(s), but prefetch is off",
                self.prefetched.len()
            ));
        }
        let streams = self.config.streams + usize::from(self.config.prefetch.is_some());
        if self.streams.len() != streams {
            bad.push(format!(
                "{} streams, the configuration calls for {streams}",
                self.streams.len()
            ));
        }
    }
}
