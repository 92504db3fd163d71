//! Asynchronous write-back (prefetch on, [`Config::prefetch`](crate::Config::prefetch)):
//! evicting a device-only object queues its copy back on the copy stream instead of waiting
//! for it.
//!
//! The copy goes into host memory the backend allocated for asynchronous copies (pinned, on a
//! GPU), after the object's last write (the copy stream waits on it). An event recorded after
//! the copy is added to the evicted blocks' hazards as a read, so whoever gets those blocks next
//! (a handover, the free pool) waits for the copy before overwriting them, and a block is freed
//! only once it has completed. The object is `WritingBack` (`WriteBackIssued`) until something
//! needs its value: a launch, a read or a prefetch waits for the event and takes the data as
//! its host copy (`WriteBackLanded`). A host write or a release of the object waits for the copy
//! before the host memory is dropped. If queuing the copy fails, the object stays resident and
//! device-only, as with a synchronous write-back: nothing is ever lost.

use super::Runtime;
use crate::backend::{Backend, ELEMENT_BYTES, HostMemory, as_bytes_mut};
use crate::element_cache::Resident;
use crate::error::{Error, Result};
use crate::events::EventKind;
use crate::hazards::Tagged;
use crate::object::ObjectId;

/// A write-back in flight: the host memory it fills and the event after it.
pub(super) struct Pending<B: Backend> {
    buffer: B::HostBuffer,
    event: Tagged<B>,
}

impl<B: Backend> Runtime<B> {
    /// Evicts device-only `id` with its write-back queued on the copy stream `copy` (see the
    /// module documentation). Returns its device copy, whose hazards include the write-back:
    /// the caller settles them before freeing the blocks, or hands them on with the blocks.
    pub(super) fn evict_async(&mut self, id: ObjectId, copy: usize) -> Result<Resident<B>> {
        let layout = self.entry(id)?.layout;
        let r = self
            .cache
            .get(id)
            .ok_or_else(|| Error::Internal(format!("writing back {id}, which is not resident")))?;
        let s = &self.streams[copy];
        let chunk = r.block_elems(&layout) * ELEMENT_BYTES;
        let queued = r
            .hazards
            .before_read(&self.backend, copy, s)
            .map_err(Error::from)
            .and_then(|()| Ok(self.backend.alloc_host(layout.bytes())?))
            .and_then(|buffer| {
                for (i, block) in r.blocks.iter().enumerate() {
                    let (src, offset) = block.place(self.arena_buffer()).ok_or_else(|| {
                        Error::Internal(format!("{id} is in an arena that is not there"))
                    })?;
                    self.backend
                        .copy_d2h_async(s, src, offset, &buffer, i * chunk, chunk)?;
                }
                let event = self.backend.create_event()?;
                self.backend.record_event(&event, s)?;
                Ok((buffer, event))
            });
        let calls = r.blocks.len() as u32;
        let (buffer, event) = match queued {
            Ok(done) => done,
            Err(e) => {
                // Copies into the host memory may be queued: let them finish before it goes.
                self.backend.stream_synchronize(s)?;
                return Err(e);
            }
        };
        let bytes = layout.bytes();
        self.events.note(
            EventKind::CopyD2H { calls },
            Some(id),
            Some(copy),
            bytes,
            None,
        );
        let event = Tagged {
            stream: copy,
            event,
        };
        let (life, log) = self.life_mut(id)?;
        if let Err(e) = life.write_back_issued(log) {
            self.orphans.push(Pending { buffer, event });
            return Err(e.into());
        }
        self.pending.insert(
            id,
            Pending {
                buffer,
                event: event.clone(),
            },
        );
        let Some(mut r) = self.cache.remove(id) else {
            return Err(Error::Internal(format!(
                "evicting {id}, which is not resident"
            )));
        };
        r.hazards.add_read(&self.backend, event);
        self.policy.on_evict(id);
        self.forget_prefetch(id);
        self.counters.writebacks += 1;
        self.counters.async_writebacks += 1;
        self.counters.evictions += 1;
        self.events
            .note(EventKind::WriteBackIssued, Some(id), Some(copy), 0, None);
        self.events
            .note(EventKind::Evict, Some(id), Some(copy), bytes, None);
        Ok(r)
    }

    /// Waits for the write-back of `id` (which is `WritingBack`) and makes its data the host
    /// copy (`WriteBackLanded`). On failure the write-back stays pending, to be waited for again.
    pub(super) fn land(&mut self, id: ObjectId) -> Result<()> {
        let layout = self.entry(id)?.layout;
        let Some(p) = self.pending.remove(&id) else {
            return Err(Error::Internal(format!(
                "{id} is being written back, but no write-back is in flight"
            )));
        };
        let mut host = self.host_pool.take(layout.elems());
        let read = self
            .backend
            .event_synchronize(&p.event.event)
            .and_then(|()| p.buffer.read(0, as_bytes_mut(&mut host)));
        if let Err(e) = read {
            self.pending.insert(id, p);
            return Err(e.into());
        }
        let (life, log) = self.life_mut(id)?;
        life.write_back_landed(host, log)?;
        self.events.note(
            EventKind::WriteBackLanded,
            Some(id),
            None,
            layout.bytes(),
            None,
        );
        Ok(())
    }

    /// `id` is overwritten from the host or released: a write-back still in flight is no longer
    /// needed, but its host memory is dropped only once the copy into it has completed (kept
    /// until the runtime is dropped if that cannot be confirmed).
    pub(super) fn discard_write_back(&mut self, id: ObjectId) {
        if let Some(p) = self.pending.remove(&id)
            && self.backend.event_synchronize(&p.event.event).is_err()
        {
            self.orphans.push(p);
        }
    }

    /// The write-back invariants, for `audit()`: exactly the `WritingBack` objects have a
    /// write-back in flight.
    pub(super) fn audit_write_backs(&self, bad: &mut Vec<String>) {
        for (id, e) in self.objects.iter() {
            let writing = e.life.kind() == crate::object::State::WritingBack;
            if writing != self.pending.contains_key(&id) {
                bad.push(format!(
                    "{id} is {:?}, but {} write-back is in flight",
                    e.life.kind(),
                    if writing { "no" } else { "a" }
                ));
            }
            if writing && self.cache.contains(id) {
                bad.push(format!("{id} is being written back, but is resident"));
            }
        }
        if let Some(&id) = self
            .pending
            .keys()
            .find(|id| !self.objects.contains_key(id))
        {
            bad.push(format!(
                "a write-back of {id}, which is not a live object, is in flight"
            ));
        }
    }
}
