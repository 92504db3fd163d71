//! The copies between an object's host copy and its device copy: in (`copy_in`, before a
//! launch or a prefetch) and back (`read_back`, for a sync or an eviction), block by block,
//! through the backend's staging or, for host memory the backend allocated, one DMA per block.

use super::Runtime;
use crate::backend::{Backend, ELEMENT_BYTES, as_bytes, as_bytes_mut};
use crate::block::Block;
use crate::device_copy::DeviceCopy;
use crate::error::{Error, Result};
use crate::events::EventKind;
use crate::hazards::Tagged;
use crate::host_copy::HostCopy;
use crate::object::ObjectId;

impl<B: Backend> Runtime<B> {
    /// Records the copy back of `id` that [`Runtime::read_back`] just made on `stream`.
    pub(super) fn note_copy_back(&mut self, id: ObjectId, stream: usize) {
        if !self.events.is_on() {
            return;
        }
        let calls = self.objects.device(id).map_or(0, |r| r.blocks.len()) as u32;
        let on = (!self.config.managed).then_some(stream);
        self.note_object(EventKind::CopyD2H { calls }, id, on);
    }

    /// Reads the device copy of a resident object into a host copy, ordered after its last
    /// write, on `stream`: a vector (from the host pool, or new), or with
    /// [`Config::pinned_results`](crate::Config::pinned_results) the backend's host memory (one
    /// DMA per block). With managed memory the host reads it in place once its work is done.
    /// Changes no state: the caller takes `Synced` or `WrittenBack`.
    pub(super) fn read_back(&mut self, id: ObjectId, stream: usize) -> Result<HostCopy<B>> {
        let layout = self.entry(id)?.layout;
        if self.config.managed {
            let host = self.host_pool.vecs.take_vec(layout.elems())?;
            return self.managed_read_back(id, host).map(HostCopy::from);
        }
        if self.config.pinned_results {
            return self.read_back_pinned(id, stream);
        }
        let mut host = self.host_pool.vecs.take_vec(layout.elems())?;
        let r = self
            .objects
            .device(id)
            .ok_or_else(|| Error::Internal(format!("syncing {id}, which is not resident")))?;
        let s = &self.streams[stream];
        r.hazards.before_read(&self.backend, stream, s)?;
        let chunk = r.block_elems(&layout);
        for (values, block) in host.chunks_mut(chunk).zip(&r.blocks) {
            let (buffer, offset) = placed(block, self.space.arena_buffer(), id)?;
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
        self.offer_for_registration(id)?;
        let e = self.entry(id)?;
        let chunk = r.block_elems(&e.layout);
        if let Some(h) = e.life.host().filter(|h| h.is_unmade()) {
            // Zeros not made yet: staged from the zero buffer, a piece at a time.
            let longest = chunk.min(h.len());
            self.host_pool.grow_zeros(longest)?;
        }
        let e = self.entry(id)?;
        let Some(host) = e.life.host() else {
            return Err(Error::Uninitialized(id));
        };
        let s = &self.streams[stream];
        r.hazards.before_write(&self.backend, stream, s)?;
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
        let Some(pieces) = host.staged_pieces(chunk, self.host_pool.zeros()) else {
            return Err(Error::Internal(format!(
                "{id}: host memory without a buffer to copy from"
            )));
        };
        for (values, block) in pieces.zip(&r.blocks) {
            let values = values?;
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
