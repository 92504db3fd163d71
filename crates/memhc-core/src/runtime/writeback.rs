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
use crate::device_copy::{DeviceCopy, WriteBack};
use crate::error::{Error, Result};
use crate::events::EventKind;
use crate::hazards::{Hazards, Tagged};
use crate::host_copy::Held;
use crate::object::ObjectId;

impl<B: Backend> Runtime<B> {
    /// Evicts device-only `id` with its write-back queued on the copy stream `copy` (see the
    /// module documentation). Returns its device copy, whose hazards include the write-back:
    /// the caller settles them before freeing the blocks, or hands them on with the blocks.
    pub(super) fn evict_async(&mut self, id: ObjectId, copy: usize) -> Result<DeviceCopy<B>> {
        self.write_back_async(id, copy, true)
    }

    /// Early read-back ([`Config::early_read_back`](crate::Config::early_read_back)): result
    /// `id`, device-only and never used again on the device, is copied back on the read-back
    /// stream `copy` right after the launch that wrote it last, and its device memory goes to
    /// the free pool behind the copy (or is freed once it is done). Not an eviction: the
    /// policy forgets the object as after a release.
    pub(super) fn read_back_early(&mut self, id: ObjectId, copy: usize) -> Result<()> {
        let d = self.write_back_async(id, copy, false)?;
        self.dispose(d)
    }

    /// The write-back of device-only `id` queued on stream `copy`, for an eviction
    /// (`evicting`) or an early read-back.
    fn write_back_async(
        &mut self,
        id: ObjectId,
        copy: usize,
        evicting: bool,
    ) -> Result<DeviceCopy<B>> {
        let layout = self.entry(id)?.layout;
        let r = self
            .objects
            .device(id)
            .ok_or_else(|| Error::Internal(format!("writing back {id}, which is not resident")))?;
        let s = &self.streams[copy];
        let chunk = r.block_elems(&layout) * ELEMENT_BYTES;
        let queued = r
            .hazards
            .before_read(&self.backend, copy, s)
            .map_err(Error::from)
            .and_then(|()| Ok(self.host_pool.take_buffer(layout.bytes(), &self.backend)?))
            .and_then(|Held { buffer, origin }| {
                for (i, block) in r.blocks.iter().enumerate() {
                    let (src, offset) =
                        block.place(self.space.arena_buffer()).ok_or_else(|| {
                            Error::Internal(format!("{id} is in an arena that is not there"))
                        })?;
                    match layout.tiles() {
                        Some(t) => self.backend.copy_d2h_async_tiled(
                            s,
                            src,
                            offset,
                            &buffer,
                            i * chunk,
                            &t,
                        )?,
                        None => self.backend.copy_d2h_async(
                            s,
                            src,
                            offset,
                            &buffer,
                            i * chunk,
                            chunk,
                        )?,
                    }
                }
                let event = self.backend.create_event()?;
                self.backend.record_event(&event, s)?;
                Ok((buffer, origin, event))
            });
        let calls = r.blocks.len() as u32;
        let (buffer, origin, event) = match queued {
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
        let write_back = WriteBack {
            buffer,
            origin,
            event: event.clone(),
        };
        let (life, log) = self.life_mut(id)?;
        let mut r = match life.write_back_issued(write_back, log) {
            Ok(r) => r,
            Err(refused) => {
                self.objects.orphans.push(refused.input);
                return Err(refused.error.into());
            }
        };
        r.hazards.add_read(&self.backend, event);
        self.forget_prefetch(id);
        if evicting {
            self.events
                .note(EventKind::WriteBackIssued, Some(id), Some(copy), 0, None);
            self.policy.on_evict(id);
            self.counters.writebacks += 1;
            self.counters.async_writebacks += 1;
            self.counters.evictions += 1;
            self.events
                .note(EventKind::Evict, Some(id), Some(copy), bytes, None);
        } else {
            self.policy.on_remove(id);
            self.counters.early_read_backs += 1;
            self.events
                .note(EventKind::Drop, Some(id), Some(copy), bytes, None);
        }
        Ok(r)
    }

    /// Waits for the write-back of `id` (which is `WritingBack`) and makes its data the host
    /// copy (`WriteBackLanded`). On failure the write-back stays pending, to be waited for again.
    /// With [`Config::pinned_results`](crate::Config::pinned_results) the write-back's host
    /// memory becomes the host copy as it is (no copy out of it).
    pub(super) fn land(&mut self, id: ObjectId) -> Result<()> {
        let e = self.objects.get(id)?;
        let layout = e.layout;
        let w = e.life.write_back().ok_or_else(|| {
            Error::Internal(format!(
                "{id} is being written back, but no write-back is in flight"
            ))
        })?;
        self.backend.event_synchronize(&w.event.event)?;
        if self.config.pinned_results {
            let (life, log) = self.life_mut(id)?;
            life.write_back_kept(layout.elems(), log)?;
        } else {
            let mut host = self.host_pool.vecs.take_vec(layout.elems())?;
            w.buffer.read(0, as_bytes_mut(&mut host))?;
            let (life, log) = self.life_mut(id)?;
            // The copy has completed and is copied out: its host memory goes back to the pool.
            let w = life.write_back_landed(host.into(), log)?;
            self.host_pool.put_held(
                Held {
                    buffer: w.buffer,
                    origin: w.origin,
                },
                Hazards::default(),
            );
        }
        self.events.note(
            EventKind::WriteBackLanded,
            Some(id),
            None,
            layout.bytes(),
            None,
        );
        Ok(())
    }

    /// A write-back no longer needed (its object was overwritten from the host or released):
    /// its host memory is dropped only once the copy into it has completed (kept until the
    /// runtime is dropped if that cannot be confirmed).
    pub(super) fn discard_write_back(&mut self, w: WriteBack<B>) {
        if self.backend.event_synchronize(&w.event.event).is_err() {
            self.objects.orphans.push(w);
        } else {
            let held = Held {
                buffer: w.buffer,
                origin: w.origin,
            };
            self.host_pool.put_held(held, Hazards::default());
        }
    }
}
