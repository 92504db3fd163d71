//! Launches: making a set of objects resident, ordering work on them after earlier work, and
//! recording what the new work does to them.

use super::Runtime;
use crate::backend::gemm::{DeviceRef, GeamShape, GemmItem, GemmShape, StridedBatch};
use crate::backend::instrumented::Instrumented;
use crate::backend::{Backend, DeviceMemory, as_bytes};
use crate::element_cache::Resident;
use crate::error::{Error, Result};
use crate::hazards::{Hazards, Tagged};
use crate::object::{Access, Layout, ObjectId, State};
use crate::policy::IdSet;

/// The device side of a launch: views of its objects, and GEMM calls on its stream.
///
/// Views are obtained by the index of the object in the launch's access list. Only objects
/// the launch declared as written may be GEMM outputs, and only the launch's objects may be
/// operands.
pub struct Launch<'r, B: Backend> {
    backend: &'r Instrumented<B>,
    stream: &'r B::Stream,
    objects: Vec<(Access, Layout, &'r Resident<B>)>,
}

impl<'r, B: Backend> Launch<'r, B> {
    /// Number of objects in the launch.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether the launch has no objects.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    fn object(&self, index: usize) -> Result<&(Access, Layout, &'r Resident<B>)> {
        self.objects.get(index).ok_or_else(|| {
            Error::LaunchMisuse(format!(
                "object index {index}, but the launch has {} objects",
                self.objects.len()
            ))
        })
    }

    /// The layout of object `index`.
    pub fn layout(&self, index: usize) -> Result<Layout> {
        Ok(self.object(index)?.1)
    }

    /// Where component `component` of object `index` starts on the device.
    pub fn component(&self, index: usize, component: usize) -> Result<DeviceRef<'r, B::Buffer>> {
        let &(access, layout, resident) = self.object(index)?;
        resident.component(&layout, component).ok_or_else(|| {
            Error::LaunchMisuse(format!(
                "component {component} of {} (it has {})",
                access.object,
                layout.components()
            ))
        })
    }

    /// The whole object `index` as one contiguous range (components back to back), if it is
    /// packed; `None` in unpacked mode.
    pub fn contiguous(&self, index: usize) -> Result<Option<DeviceRef<'r, B::Buffer>>> {
        let &(_, _, resident) = self.object(index)?;
        Ok(match resident.buffers.as_slice() {
            [whole] if resident.packed => Some(DeviceRef::new(whole, 0)),
            _ => None,
        })
    }

    /// Checks that every output is in an object the launch writes and every input in one of
    /// its objects.
    fn check_operands<'a>(
        &self,
        inputs: impl Iterator<Item = &'a B::Buffer>,
        outputs: impl Iterator<Item = &'a B::Buffer>,
    ) -> Result<()>
    where
        B::Buffer: 'a,
    {
        let owner = |buffer: &B::Buffer| {
            self.objects
                .iter()
                .find(|(_, _, r)| r.buffers.iter().any(|b| b.handle() == buffer.handle()))
                .map(|(a, _, _)| *a)
        };
        for b in inputs {
            if owner(b).is_none() {
                return Err(Error::LaunchMisuse(format!(
                    "an input in buffer {:#x}, which belongs to none of the launch's objects",
                    b.handle()
                )));
            }
        }
        for b in outputs {
            match owner(b) {
                Some(a) if a.mode.writes() => {}
                Some(a) => {
                    return Err(Error::LaunchMisuse(format!(
                        "an output in {}, which the launch declared read-only",
                        a.object
                    )));
                }
                None => {
                    return Err(Error::LaunchMisuse(format!(
                        "an output in buffer {:#x}, which belongs to none of the launch's objects",
                        b.handle()
                    )));
                }
            }
        }
        Ok(())
    }

    /// [`Launch::check_operands`] for the A, B and C of every item.
    fn check_items(&self, items: &[GemmItem<'_, B::Buffer>]) -> Result<()> {
        self.check_operands(
            items.iter().flat_map(|i| [i.a.buffer, i.b.buffer]),
            items.iter().map(|i| i.c.buffer),
        )
    }

    /// Enqueues a pointer-array batch on the launch's stream.
    pub fn gemm_batched(&self, shape: &GemmShape, items: &[GemmItem<'_, B::Buffer>]) -> Result<()> {
        self.check_items(items)?;
        self.backend.gemm_batched(self.stream, shape, items)?;
        Ok(())
    }

    /// Enqueues a batch of matrix additions on the launch's stream.
    pub fn geam_batched(&self, shape: &GeamShape, items: &[GemmItem<'_, B::Buffer>]) -> Result<()> {
        self.check_items(items)?;
        self.backend.geam_batched(self.stream, shape, items)?;
        Ok(())
    }

    /// Enqueues a strided batch on the launch's stream.
    pub fn gemm_strided_batched(
        &self,
        shape: &GemmShape,
        batch: &StridedBatch<'_, B::Buffer>,
    ) -> Result<()> {
        self.check_operands(
            [batch.a.buffer, batch.b.buffer].into_iter(),
            std::iter::once(batch.c.buffer),
        )?;
        self.backend
            .gemm_strided_batched(self.stream, shape, batch)?;
        Ok(())
    }
}

/// How to undo what a launch did to an object it writes, if the launch fails.
pub(super) struct Undo {
    id: ObjectId,
    host: Option<Vec<num_complex::Complex64>>,
}

/// The lists a launch builds, kept by the runtime between launches so that their memory is
/// reused (both are empty outside a launch).
#[derive(Default)]
pub(super) struct Scratch {
    /// How to undo the launch's writes.
    undo: Vec<Undo>,
    /// The objects acquired, and whether the launch writes each.
    acquired: Vec<(ObjectId, bool)>,
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
        self.pinned.extend(accesses.iter().map(|a| a.object));
        // The launch's lists live in the runtime between launches: no allocation per launch.
        let mut undo = std::mem::take(&mut self.scratch.undo);
        let mut acquired = std::mem::take(&mut self.scratch.acquired);
        let mut outcome = self.acquire_all(stream, accesses, &mut undo, &mut acquired);
        if outcome.is_ok() {
            outcome = self.order_and_run(stream, accesses, work);
        }
        let fenced = self.fence_launch(stream, &acquired);
        self.pinned.clear();
        let outcome = outcome.and(fenced);
        let settled = match &outcome {
            Ok(()) => self.after_success(stream, accesses),
            Err(_) => self.after_failure(&mut undo),
        };
        let dropped = self.drop_uncached(accesses);
        undo.clear();
        acquired.clear();
        self.scratch = Scratch { undo, acquired };
        outcome.and(settled).and(dropped)
    }

    /// Validates a launch before it changes anything.
    fn check_launch(&self, stream: usize, accesses: &[Access]) -> Result<()> {
        if stream >= self.streams.len() {
            return Err(Error::NoSuchStream {
                stream,
                streams: self.streams.len(),
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
        if needed > self.budget {
            return Err(Error::DoesNotFit {
                needed,
                available: self.budget,
                budget: self.budget,
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
        undo: &mut Vec<Undo>,
        acquired: &mut Vec<(ObjectId, bool)>,
    ) -> Result<()> {
        for a in accesses {
            let copied_in = self.acquire(stream, *a)?;
            acquired.push((a.object, copied_in || a.mode.writes()));
            if a.mode.writes() {
                let (life, log) = self.life_mut(a.object)?;
                let host = life.written_on_device(log)?;
                undo.push(Undo { id: a.object, host });
            }
        }
        Ok(())
    }

    /// Makes one object resident: a hit, or a miss served by the allocation path, followed by a
    /// copy from the host when the launch reads the object. Returns whether it queued that copy
    /// on the stream (a managed copy-in is the host's, complete on return).
    fn acquire(&mut self, stream: usize, access: Access) -> Result<bool> {
        let id = access.object;
        if self.cache.contains(id) {
            self.counters.hits += 1;
            self.policy.on_hit(id);
            return Ok(false);
        }
        self.counters.misses += 1;
        let layout = self.entry(id)?.layout;
        let packed = self.config.packing;
        let (count, size) = if packed {
            (1, layout.bytes())
        } else {
            (layout.components(), layout.component_bytes())
        };
        let mut resident = Resident {
            buffers: Vec::with_capacity(count),
            packed,
            hazards: Hazards::default(),
        };
        for _ in 0..count {
            match self.obtain_buffer(size, stream) {
                Ok((buffer, hazards)) => {
                    resident.buffers.push(buffer);
                    resident.hazards.absorb(hazards);
                }
                Err(e) => {
                    self.dispose(resident)?;
                    return Err(e);
                }
            }
        }
        let copy_in = access.mode.reads();
        if copy_in {
            let copied = if self.config.managed {
                self.managed_copy_in(id, &resident, !access.mode.writes())
            } else {
                self.copy_in(stream, id, &resident)
            };
            let copied = copied.and_then(|()| {
                let (life, log) = self.life_mut(id)?;
                Ok(life.copied_in(log)?)
            });
            if let Err(e) = copied {
                // Part of the copy may be queued: let it finish before the buffers move on.
                self.backend.stream_synchronize(&self.streams[stream])?;
                self.dispose(resident)?;
                return Err(e);
            }
        }
        if let Some(old) = self.cache.insert(id, resident) {
            // Unreachable: `id` was not resident. Keep the tables exact anyway.
            self.dispose(old)?;
        }
        self.policy.on_insert(id);
        Ok(copy_in && !self.config.managed)
    }

    /// Queues the copy of an object's host values into its new device buffers.
    fn copy_in(&self, stream: usize, id: ObjectId, r: &Resident<B>) -> Result<()> {
        let e = self.entry(id)?;
        let host = e.life.host().ok_or(Error::Uninitialized(id))?;
        let s = &self.streams[stream];
        r.hazards.before_write(&self.backend, stream, s)?;
        if r.packed {
            let whole = r
                .buffers
                .first()
                .ok_or_else(|| Error::Internal(format!("{id} has no buffer")))?;
            self.backend.copy_h2d(s, as_bytes(host), whole, 0)?;
        } else {
            for (chunk, buffer) in host.chunks(e.layout.component_elems()).zip(&r.buffers) {
                self.backend.copy_h2d(s, as_bytes(chunk), buffer, 0)?;
            }
        }
        Ok(())
    }

    /// Orders the stream after conflicting earlier work (and, with managed memory, prefetches
    /// each object to the device), then lets `work` enqueue.
    fn order_and_run<F>(&mut self, stream: usize, accesses: &[Access], work: F) -> Result<()>
    where
        F: FnOnce(&mut Launch<'_, B>) -> Result<()>,
    {
        let s = &self.streams[stream];
        let mut objects = Vec::with_capacity(accesses.len());
        for a in accesses {
            let r = self.cache.get(a.object).ok_or_else(|| {
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
            let layout = self.entry(a.object)?.layout;
            objects.push((*a, layout, r));
        }
        let mut launch = Launch {
            backend: &self.backend,
            stream: s,
            objects,
        };
        work(&mut launch)
    }

    /// Records one event after everything the launch queued and attaches it to its objects:
    /// as a write to those it wrote (or copied in), as a read to the others. If the event cannot
    /// be recorded, waits for the stream instead, so that no buffer is left with untracked work.
    fn fence_launch(&mut self, stream: usize, acquired: &[(ObjectId, bool)]) -> Result<()> {
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
            let Some(r) = self.cache.get_mut(id) else {
                continue;
            };
            if wrote {
                r.hazards.set_write(event.clone());
            } else {
                r.hazards.add_read(&self.backend, event.clone());
            }
        }
        Ok(())
    }

    /// After a successful launch: eager write-back when on-demand sync is off.
    fn after_success(&mut self, stream: usize, accesses: &[Access]) -> Result<()> {
        if self.config.on_demand_sync {
            return Ok(());
        }
        for a in accesses.iter().filter(|a| a.mode.writes()) {
            self.sync_to_host(a.object, stream)?;
        }
        Ok(())
    }

    /// After a failed launch: objects it was writing lose their device copy and go back to
    /// their previous host value, or to no value.
    fn after_failure(&mut self, undo: &mut Vec<Undo>) -> Result<()> {
        let mut first = Ok(());
        for u in undo.drain(..) {
            first = first.and(self.drop_device_copy(u.id));
            if let Ok((life, log)) = self.life_mut(u.id) {
                first = first.and(life.rolled_back(u.host, log).map_err(Error::from));
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
            let consistent = self
                .objects
                .get(&a.object)
                .is_some_and(|e| e.life.kind() == State::Consistent);
            if consistent {
                first = first.and(self.drop_device_copy(a.object));
                if let Ok((life, log)) = self.life_mut(a.object) {
                    first = first.and(life.uncached(log).map_err(Error::from));
                }
            }
        }
        first
    }
}
