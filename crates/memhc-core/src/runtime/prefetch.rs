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
use super::memory::Victims;
use crate::backend::Backend;
use crate::device_copy::DeviceCopy;
use crate::error::Result;
use crate::events::EventKind;
use crate::hazards::Tagged;
use crate::object::{ObjectId, State};

impl<B: Backend> Runtime<B> {
    /// A launch is about to use `id` (prefetch or early read-back on): its planned use is
    /// consumed, a prefetch it
    /// finds is a prefetch hit, and a write-back still in flight lands first.
    pub(super) fn note_use(&mut self, id: ObjectId) -> Result<()> {
        if self.config.prefetch.is_none() && !self.config.early_read_back {
            return Ok(());
        }
        self.lookahead.consume(id);
        if self.config.prefetch.is_some() && self.objects.unmark_prefetched(id) {
            self.counters.prefetch_hits += 1;
        }
        if self.entry(id)?.life.kind() == State::WritingBack {
            self.land(id)?;
        }
        Ok(())
    }

    /// After a launch: prefetches the objects of the next uses (see the module documentation).
    /// Failures stop it and are not reported: the objects stay on the host.
    pub(super) fn prefetch_ahead(&mut self) {
        let (Some(p), Some(copy)) = (self.config.prefetch, self.copy_stream()) else {
            return;
        };
        let mut wanted = std::mem::take(&mut self.scratch.prefetch);
        wanted.clear();
        wanted.extend(self.lookahead.ahead(p.window).filter(|&(_, id)| {
            matches!(
                self.objects.state(id),
                Some(State::HostValid | State::WritingBack)
            )
        }));
        for &(_, id) in &wanted {
            if self.objects.is_resident(id) {
                continue; // listed twice in the window
            }
            let need = self.lookahead.next_use(id);
            match self.prefetch_one(id, need, copy) {
                Ok(true) => {}
                Ok(false) | Err(_) => break,
            }
        }
        self.scratch.prefetch = wanted;
    }

    /// Prefetches `id`, whose next use is at `need`, on stream `copy`. `Ok(false)`: no room
    /// without evicting something needed sooner (or nothing evictable); nothing changed but
    /// the free pool.
    fn prefetch_one(&mut self, id: ObjectId, need: u64, copy: usize) -> Result<bool> {
        if self.entry(id)?.life.kind() == State::WritingBack {
            self.land(id)?;
        }
        let layout = self.entry(id)?.layout;
        let (mut resident, count, size) = DeviceCopy::empty(layout, self.config.packing);
        self.events.serve(Some(id));
        for _ in 0..count {
            match self.obtain_block(size, copy, Victims::NeededAfter(need)) {
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
        // A copy from page-locked memory already ends with an event; a staged one gets one.
        let queued = self
            .copy_in(copy, id, &resident)
            .and_then(|after| match after {
                Some(ev) => Ok(ev),
                None => {
                    let ev = self.backend.create_event()?;
                    self.backend.record_event(&ev, &self.streams[copy])?;
                    Ok(ev)
                }
            });
        let s = &self.streams[copy];
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
        if let Err(refused) = life.prefetched(resident, log) {
            self.dispose(refused.input)?;
            return Err(refused.error.into());
        }
        self.policy.on_prefetch(id);
        if let Some(e) = self.objects.find_mut(id) {
            e.prefetched = true;
        }
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

    /// The prefetch invariants, for `audit()`: every object prefetched and not yet used is
    /// resident and consistent; without prefetch, nothing is.
    pub(super) fn audit_prefetch(&self, bad: &mut Vec<String>) {
        let mut prefetched = 0usize;
        for (id, e) in self.objects.iter().filter(|(_, e)| e.prefetched) {
            prefetched += 1;
            let state = e.life.kind();
            if state != State::Consistent {
                bad.push(format!(
                    "{id} is a prefetch still to be used, but is {state:?}"
                ));
            }
        }
        if self.config.prefetch.is_none() && prefetched > 0 {
            bad.push(format!(
                "{prefetched} prefetched object(s), but prefetch is off"
            ));
        }
        let streams = self.config.streams
            + usize::from(self.config.prefetch.is_some())
            + usize::from(self.config.early_read_back);
        if self.streams.len() != streams {
            bad.push(format!(
                "{} streams, the configuration calls for {streams}",
                self.streams.len()
            ));
        }
    }
}
