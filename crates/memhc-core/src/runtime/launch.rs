//! Launches: making a set of objects resident, ordering work on them after earlier work, and
//! recording what the new work does to them.

use smallvec::SmallVec;

use super::Runtime;
use super::memory::Victims;
use super::work::{Bound, Launch};
use crate::backend::Backend;
use crate::device_copy::DeviceCopy;
use crate::error::{Error, Result};
use crate::events::EventKind;
use crate::hazards::Tagged;
use crate::host_copy::HostCopy;
use crate::lookahead::NEVER;
use crate::object::{Access, ObjectId, State};
use crate::policy::IdSet;

/// How to undo what a launch did to an object it writes, if the launch fails.
pub(super) struct Undo<B: Backend> {
    id: ObjectId,
    host: Option<HostCopy<B>>,
    /// Whether the object was resident before the launch (a hit).
    was_resident: bool,
}

/// The lists a launch builds, kept by the runtime between launches so that their memory is
/// reused (all are empty outside a launch).
pub(super) struct Scratch<B: Backend> {
    /// How to undo the launch's writes.
    undo: Vec<Undo<B>>,
    /// The objects acquired, and whether the launch writes each.
    acquired: Vec<(ObjectId, bool)>,
    /// Prefetch on: the uses to prefetch after the launch.
    pub prefetch: Vec<(u64, ObjectId)>,
}

impl<B: Backend> Default for Scratch<B> {
    fn default() -> Self {
        Scratch {
            undo: Vec::new(),
            acquired: Vec::new(),
            prefetch: Vec::new(),
        }
    }
}

impl<B: Backend> Runtime<B> {
    /// Runs `work` on stream `stream` with `accesses` resident.
    ///
    /// Every object is made resident first (a hit, or a miss: pool reuse or allocation, with
    /// evictions as needed, and a copy from the host for objects the work reads); the stream
    /// then waits on earlier work that conflicts; `work` enqueues GEMMs through the
    /// [`Launch`]; finally one event is recorded and attached to every object. The call returns
    /// once the work is enqueued, not when it completes.
    ///
    /// Objects written by the launch become device-only (`DeviceDirty`), or are copied back at
    /// once when on-demand sync is off. If the launch fails, each object it was writing reverts
    /// to its previous host value if it had one, and holds no value otherwise; every other
    /// object is unaffected.
    pub fn launch<F>(&mut self, stream: usize, accesses: &[Access], work: F) -> Result<()>
    where
        F: FnOnce(&mut Launch<'_, B>) -> Result<()>,
    {
        self.check_launch(stream, accesses)?;
        self.counters.launches += 1;
        self.events.begin_launch(stream);
        self.pinned.extend(accesses.iter().map(|a| a.object));
        // The launch's lists live in the runtime between launches: no allocation per launch.
        let mut undo = std::mem::take(&mut self.scratch.undo);
        let mut acquired = std::mem::take(&mut self.scratch.acquired);
        let mut outcome = self.acquire_all(stream, accesses, &mut undo, &mut acquired);
        if matches!(outcome, Err(Error::Fragmented { .. })) {
            // Arena mode: the launch's own objects split the arena so that the next one fits in
            // no gap. Nothing has run yet: put them back, empty the arena, and start over.
            self.counters.arena_restarts += 1;
            outcome = self
                .make_way(stream, &mut undo, &mut acquired)
                .and_then(|()| self.acquire_all(stream, accesses, &mut undo, &mut acquired));
        }
        if outcome.is_ok() {
            outcome = self.order_and_run(stream, accesses, work);
        }
        // A launch that failed may not have made its stream wait for every earlier use of its
        // objects: their histories must be kept, not replaced by its event.
        let fenced = self.fence_launch(stream, &acquired, outcome.is_ok());
        self.pinned.clear();
        let outcome = outcome.and(fenced);
        let settled = match &outcome {
            Ok(()) => self.after_success(stream, accesses),
            Err(_) => self.after_failure(&mut undo),
        };
        let dropped = self.drop_uncached(accesses);
        if outcome.is_ok() {
            self.prefetch_ahead();
        }
        if self.events.is_on() {
            self.events.serve(None);
            let ok = outcome.is_ok() && settled.is_ok() && dropped.is_ok();
            self.events
                .note(EventKind::LaunchEnd { ok }, None, Some(stream), 0, None);
        }
        undo.clear();
        acquired.clear();
        self.scratch.undo = undo;
        self.scratch.acquired = acquired;
        outcome.and(settled).and(dropped)
    }

    /// Validates a launch before it changes anything.
    fn check_launch(&self, stream: usize, accesses: &[Access]) -> Result<()> {
        if stream >= self.config.streams {
            return Err(Error::NoSuchStream {
                stream,
                streams: self.config.streams,
            });
        }
        let mut needed = 0usize;
        // Launches name a handful of objects: comparing each with those before it is cheaper
        // than hashing, up to a point.
        let mut seen = (accesses.len() > 16).then(IdSet::default);
        for (i, a) in accesses.iter().enumerate() {
            let e = self.entry(a.object)?;
            let repeated = match &mut seen {
                Some(set) => !set.insert(a.object),
                None => accesses[..i].iter().any(|b| b.object == a.object),
            };
            if repeated {
                return Err(Error::DuplicateAccess(a.object));
            }
            if a.mode.reads() && !e.life.kind().has_value() {
                return Err(Error::Uninitialized(a.object));
            }
            needed = needed.saturating_add(e.layout.bytes());
        }
        let budget = self.space.budget;
        if needed > budget {
            return Err(Error::DoesNotFit {
                needed,
                available: budget,
                budget,
            });
        }
        Ok(())
    }

    /// Makes every object of the launch resident, recording in `acquired` each object that is
    /// and whether the launch writes its device copy (a copy-in counts), so that the launch's
    /// event is attached to it even if a later object fails.
    fn acquire_all(
        &mut self,
        stream: usize,
        accesses: &[Access],
        undo: &mut Vec<Undo<B>>,
        acquired: &mut Vec<(ObjectId, bool)>,
    ) -> Result<()> {
        for a in accesses {
            let was_resident = self.objects.is_resident(a.object);
            let (copied_in, written) = self.acquire(stream, *a)?;
            acquired.push((a.object, copied_in || a.mode.writes()));
            if let Some(host) = written {
                undo.push(Undo {
                    id: a.object,
                    host,
                    was_resident,
                });
            }
        }
        Ok(())
    }

    /// Undoes a launch's acquisitions before any of its work has run, and empties the arena:
    /// each object it was writing goes back to its previous value (an object that was
    /// device-only keeps its device copy, which nothing has overwritten, and is written back
    /// like the others); then every object of the launch still resident is evicted and the
    /// free pool drained. Everything else was evicted already, so the arena is left empty.
    fn make_way(
        &mut self,
        stream: usize,
        undo: &mut Vec<Undo<B>>,
        acquired: &mut Vec<(ObjectId, bool)>,
    ) -> Result<()> {
        // The copies in queued so far must finish before their blocks move on.
        self.fence_launch(stream, acquired, false)?;
        acquired.clear();
        for u in undo.drain(..) {
            if u.host.is_none() && u.was_resident {
                continue; // device-only before the launch: evicted (written back) below
            }
            let (life, log) = self.life_mut(u.id)?;
            let d = life.rolled_back(u.host, log)?;
            self.discard_device(u.id, d)?;
        }
        for id in self.pinned.clone() {
            if self.objects.is_resident(id) {
                self.evict(id, stream)?;
            }
        }
        self.drain_pool()
    }

    /// Makes one object resident: a hit, or a miss served by the allocation path, followed by a
    /// copy from the host when the launch reads the object; then, if the launch writes it,
    /// takes `WrittenOnDevice`. Returns whether it queued a copy on the stream (a managed
    /// copy-in is the host's, complete on return) and, for a write, the host copy the object
    /// held before (what a failed launch rolls back to).
    fn acquire(
        &mut self,
        stream: usize,
        access: Access,
    ) -> Result<(bool, Option<Option<HostCopy<B>>>)> {
        let id = access.object;
        self.note_use(id)?;
        let (read, write) = (access.mode.reads(), access.mode.writes());
        if self.entry(id)?.life.is_resident() {
            self.counters.hits += 1;
            self.note_object(EventKind::Hit { read, write }, id, Some(stream));
            self.policy.on_hit(id);
            return Ok((false, self.written_on_device(id, write, None)?));
        }
        self.counters.misses += 1;
        self.note_object(EventKind::Miss { read, write }, id, Some(stream));
        self.events.serve(Some(id));
        let (mut fresh, count, size) =
            DeviceCopy::empty(self.entry(id)?.layout, self.config.packing);
        for _ in 0..count {
            match self.obtain_block(size, stream, Victims::Any) {
                Ok(Some((block, hazards))) => {
                    fresh.blocks.push(block);
                    fresh.hazards.absorb(hazards);
                }
                Ok(None) => {
                    let refused = self.no_room(size);
                    self.dispose(fresh)?;
                    return Err(refused);
                }
                Err(e) => {
                    self.dispose(fresh)?;
                    return Err(e);
                }
            }
        }
        if !read {
            let before = self.written_on_device(id, true, Some(fresh))?;
            self.policy.on_insert(id);
            return Ok((false, before));
        }
        let copied = if self.config.managed {
            self.managed_copy_in(id, &fresh, !write)
        } else {
            self.copy_in(stream, id, &fresh).map(drop)
        };
        if let Err(e) = copied {
            // Part of the copy may be queued: let it finish before the buffers move on.
            self.backend.stream_synchronize(&self.streams[stream])?;
            self.dispose(fresh)?;
            return Err(e);
        }
        let (life, log) = self.life_mut(id)?;
        if let Err(refused) = life.copied_in(fresh, log) {
            self.backend.stream_synchronize(&self.streams[stream])?;
            self.dispose(refused.input)?;
            return Err(refused.error.into());
        }
        let calls = self.objects.device(id).map_or(0, |d| d.blocks.len()) as u32;
        let on = (!self.config.managed).then_some(stream);
        self.note_object(EventKind::CopyH2D { calls }, id, on);
        self.policy.on_insert(id);
        Ok((
            !self.config.managed,
            self.written_on_device(id, write, None)?,
        ))
    }

    /// If `write`, takes `WrittenOnDevice` on `id` (`fresh`: the device memory obtained for it
    /// when it was not resident) and returns the host copy it held before; else nothing.
    fn written_on_device(
        &mut self,
        id: ObjectId,
        write: bool,
        fresh: Option<DeviceCopy<B>>,
    ) -> Result<Option<Option<HostCopy<B>>>> {
        if !write {
            return Ok(None);
        }
        let (life, log) = self.life_mut(id)?;
        match life.written_on_device(fresh, log) {
            Ok(host) => Ok(Some(host)),
            Err(refused) => {
                if let Some(d) = refused.input {
                    self.dispose(d)?;
                }
                Err(refused.error.into())
            }
        }
    }

    /// Orders the stream after conflicting earlier work (and, with managed memory, prefetches
    /// each object to the device), then lets `work` enqueue.
    fn order_and_run<F>(&mut self, stream: usize, accesses: &[Access], work: F) -> Result<()>
    where
        F: FnOnce(&mut Launch<'_, B>) -> Result<()>,
    {
        let s = &self.streams[stream];
        let mut objects = SmallVec::with_capacity(accesses.len());
        for a in accesses {
            let e = self.entry(a.object)?;
            let r = e.device().ok_or_else(|| {
                Error::Internal(format!("{} is not resident in its launch", a.object))
            })?;
            if a.mode.writes() {
                r.hazards.before_write(&self.backend, stream, s)?;
            } else {
                r.hazards.before_read(&self.backend, stream, s)?;
            }
            if self.config.managed {
                self.prefetch_to_device(s, r)?;
            }
            objects.push(Bound::new(*a, e.layout, r, self.space.arena_buffer()));
        }
        // With the event log on, the launch's GEMM calls are what the counters gained.
        let before = match self.events.is_on() {
            true => Some(self.gemm_counts()),
            false => None,
        };
        let mut launch = Launch {
            backend: &self.backend,
            stream: s,
            arena: self.space.arena_buffer(),
            objects,
        };
        let done = work(&mut launch);
        drop(launch); // it borrows the runtime, which the event log needs back
        if let Some(before) = before {
            self.note_gemms(stream, before);
        }
        done
    }

    /// GEMM and GEAM calls so far, and their flops.
    #[cold]
    #[inline(never)]
    fn gemm_counts(&self) -> (u64, u64) {
        let c = self.backend.counters();
        (c.gemm_calls + c.geam_calls, c.flops)
    }

    /// Records the GEMM calls made since the counts were `before`.
    #[cold]
    #[inline(never)]
    fn note_gemms(&mut self, stream: usize, before: (u64, u64)) {
        let (calls, flops) = self.gemm_counts();
        if calls > before.0 {
            let kind = EventKind::Gemm {
                calls: (calls - before.0) as u32,
                flops: flops - before.1,
            };
            self.events.note(kind, None, Some(stream), 0, None);
        }
    }

    /// Records one event after everything the launch queued and attaches it to its objects:
    /// as a write to those it wrote (or copied in), as a read to the others. If the event cannot
    /// be recorded, waits for the stream instead, so that no buffer is left with untracked work.
    ///
    /// A write replaces an object's history only if the launch is `ordered`: its stream waited
    /// for every earlier use of every object (the launch got past `order_and_run`'s
    /// waits). Otherwise a wait may have failed or never been queued (an output whose block
    /// came from the free pool still in use by another stream), and the write is added to the
    /// history instead, which keeps the earlier uses for the next user to wait on.
    fn fence_launch(
        &mut self,
        stream: usize,
        acquired: &[(ObjectId, bool)],
        ordered: bool,
    ) -> Result<()> {
        if acquired.is_empty() {
            return Ok(());
        }
        let s = &self.streams[stream];
        let recorded = self
            .backend
            .create_event()
            .and_then(|ev| self.backend.record_event(&ev, s).map(|()| ev));
        let event = match recorded {
            Ok(ev) => Tagged { stream, event: ev },
            Err(e) => {
                self.backend.stream_synchronize(s)?;
                return Err(e.into());
            }
        };
        for &(id, wrote) in acquired {
            let Some(r) = self.objects.device_mut(id) else {
                continue;
            };
            if wrote && ordered {
                r.hazards.set_write(event.clone());
            } else if wrote {
                r.hazards.add_write(event.clone());
            } else {
                r.hazards.add_read(&self.backend, event.clone());
            }
        }
        Ok(())
    }

    /// After a successful launch: eager write-back when on-demand sync is off; else, with
    /// early read-back on, the read-back of each result it wrote for the last time.
    fn after_success(&mut self, stream: usize, accesses: &[Access]) -> Result<()> {
        if !self.config.on_demand_sync {
            for a in accesses.iter().filter(|a| a.mode.writes()) {
                self.sync_to_host(a.object, stream)?;
            }
            return Ok(());
        }
        let Some(copy) = self.read_back_stream() else {
            return Ok(());
        };
        for a in accesses.iter().filter(|a| a.mode.writes()) {
            let done = self
                .objects
                .find(a.object)
                .is_some_and(|e| e.read_expected && e.life.kind() == State::DeviceDirty)
                && self.lookahead.next_use(a.object) == NEVER;
            if done {
                self.read_back_early(a.object, copy)?;
            }
        }
        Ok(())
    }

    /// After a failed launch: objects it was writing lose their device copy and go back to
    /// their previous host value, or to no value.
    fn after_failure(&mut self, undo: &mut Vec<Undo<B>>) -> Result<()> {
        let mut first = Ok(());
        for u in undo.drain(..) {
            let Ok((life, log)) = self.life_mut(u.id) else {
                continue;
            };
            match life.rolled_back(u.host, log) {
                Ok(d) => first = first.and(self.discard_device(u.id, d)),
                Err(refused) => first = first.and(Err(refused.into())),
            }
        }
        first
    }

    /// Without duplication-aware management, a launch's objects whose host copy is valid do
    /// not stay resident after it.
    fn drop_uncached(&mut self, accesses: &[Access]) -> Result<()> {
        if self.config.dedup {
            return Ok(());
        }
        let mut first = Ok(());
        for a in accesses {
            if self.objects.state(a.object) != Some(State::Consistent) {
                continue;
            }
            let Ok((life, log)) = self.life_mut(a.object) else {
                continue;
            };
            match life.uncached(log) {
                Ok(d) => first = first.and(self.discard_device(a.object, d)),
                Err(e) => first = first.and(Err(e.into())),
            }
        }
        first
    }
}
