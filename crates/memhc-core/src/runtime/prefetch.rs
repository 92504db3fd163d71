//! Prefetch: bringing in, on the runtime's copy stream, the objects the next uses of the
//! announced future will read, while the launches already queued compute
//! ([`Config::prefetch`](crate::Config::prefetch)).
//!
//! After every successful launch the runtime walks the next `window` uses of the future. For
//! each object that is not resident and holds its value on the host, it obtains device memory
//! as the allocation path does, but from free memory only (free pool, a new block within the
//! budget, the pool drained; never an eviction), queues the copy on the copy stream and records
//! an event there: the launch that reads the object waits for that event through the object's
//! hazards, like any other write. The object is `Prefetched` (`HostValid` to `Consistent`) and
//! the policy hears `on_prefetch`, which consumes no use: the use itself is a hit later.
//!
//! Two rules keep it from doing harm, that is from making a launch evict what the run without
//! prefetch would not:
//!
//! * **the budget**: every block comes through the same accounting as the allocation path's,
//!   so prefetch never holds more than the budget;
//! * **free memory only, less what comes first**: a prefetch evicts nothing, and it takes a
//!   block only if what is left of the budget (less the resident objects; pooled blocks count
//!   as free) still holds every object the uses before it will bring in that no prefetch does
//!   (the outputs those launches write). Prefetching stops at the first object that does not
//!   fit so, until the next launch.
//!
//! Why not evict a victim needed later than the prefetched object (Cao et al.'s "do no harm",
//! which this module applied until 2026-11-28): that is harmless only when the run without
//! prefetch would have to evict by the time of the use anyway. With releases the runtime
//! cannot see coming (the caller releases objects after their last use, a correlator run after
//! each stage), it would usually find the memory free by then: on the correlator presets
//! a1_rhopi and f0d2 at the plan's peak as budget, prefetch's evictions (of objects released a
//! few launches later, or needed a few uses after the prefetched one, which then evicted the
//! next) and those of launches finding the memory prefetches took were the only evictions of
//! the run (`docs/results/2026-11-28-prefetch-budget.md`). Objects never used again count as
//! occupying their memory until released, which may leave a prefetch waiting for a release
//! (at a stage's end, say): that costs overlap, not an eviction. What the reservation cannot
//! see is memory the future does not announce: an object made after `set_future` and used
//! at once (a trace's scratch), or a resident copy a host write drops before its next use.
//! When the budget binds (the run without prefetch evicts too), memory is rarely free and
//! prefetch does little: whether evicting for it would replace an eviction the run makes
//! anyway depends on releases and on the policy's choice at the time of the use, which the
//! runtime does not know.
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
        let mut ahead = std::mem::take(&mut self.scratch.prefetch);
        ahead.clear();
        ahead.extend(self.lookahead.ahead(p.window));
        // Bytes the uses walked so far will need and that no prefetch brings in (outputs not
        // yet written): a prefetch further on leaves them free.
        let mut reserved = 0usize;
        for (i, &(_, id)) in ahead.iter().enumerate() {
            if self.objects.is_resident(id) || ahead[..i].iter().any(|&(_, o)| o == id) {
                continue; // resident, or listed twice in the window
            }
            let Some(e) = self.objects.find(id) else {
                break; // not an object of this runtime: the future is stale
            };
            match e.life.kind() {
                State::HostValid | State::WritingBack => {}
                _ => {
                    reserved = reserved.saturating_add(self.device_bytes(id));
                    continue;
                }
            }
            match self.prefetch_one(id, reserved, copy) {
                Ok(true) => {}
                Ok(false) | Err(_) => break,
            }
        }
        self.scratch.prefetch = ahead;
    }

    /// The device bytes `id` takes when resident (its blocks, without slack); 0 for an object
    /// the runtime does not know.
    fn device_bytes(&self, id: ObjectId) -> usize {
        self.objects.find(id).map_or(0, |e| {
            let (_, count, size) = DeviceCopy::<B>::empty(e.layout, self.config.packing);
            count.saturating_mul(size)
        })
    }

    /// Whether `bytes` more can be held for a prefetch with `reserved` bytes left for the uses
    /// before it: the budget less the resident objects' bytes (pooled blocks count as free:
    /// the pool is drained before anything is evicted).
    fn spare_for(&self, bytes: usize, reserved: usize) -> bool {
        let free = self
            .space
            .budget
            .saturating_sub(self.space.resident_bytes());
        bytes.saturating_add(reserved) <= free
    }

    /// Prefetches `id` on stream `copy` into memory that is free, leaving `reserved` bytes for
    /// the uses before it. `Ok(false)`: no such room (nothing is ever evicted for a prefetch);
    /// nothing changed but the free pool.
    fn prefetch_one(&mut self, id: ObjectId, reserved: usize, copy: usize) -> Result<bool> {
        let layout = self.entry(id)?.layout;
        let (mut resident, count, size) = DeviceCopy::empty(layout, self.config.packing);
        // A pooled block may be larger than asked, up to the reuse tolerance.
        let most = count.saturating_mul(self.config.reuse_limit(size));
        if !self.spare_for(most, reserved) {
            return Ok(false);
        }
        if self.entry(id)?.life.kind() == State::WritingBack {
            self.land(id)?;
        }
        self.events.serve(Some(id));
        for _ in 0..count {
            match self.obtain_block(size, copy, Victims::Nothing) {
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
