//! The host's side of the objects: values registered from host memory (a vector, or the
//! backend's host memory filled in place), read, taken, written and released, and the results
//! the caller announces it will read.

use num_complex::Complex64;

use super::Runtime;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::events::EventKind;
use crate::hazards::Hazards;
use crate::host_copy::HostCopy;
use crate::lifecycle::{Left, Lifecycle};
use crate::object::{Layout, ObjectId, ObjectKind, State};

impl<B: Backend> Runtime<B> {
    /// Registers host data as a host-backed object of `layout` (components back to back).
    pub fn register(&mut self, data: Vec<Complex64>, layout: Layout) -> Result<ObjectId> {
        self.register_host(data.into(), layout)
    }

    /// Host memory of the backend for the values of an object of `layout`
    /// ([`Backend::alloc_host`]: page-locked on a GPU), for the caller to fill in place
    /// ([`HostCopy::as_mut_slice`]) and register ([`Runtime::register_host`]): the object is
    /// then copied to the device in one DMA, with no staging copy and no page fault. Memory
    /// that released objects held is reused ([`Config::pinned_pool_bytes`](crate::Config::pinned_pool_bytes)); what it holds
    /// before the caller writes it is unspecified.
    pub fn alloc_host(&mut self, layout: Layout) -> Result<HostCopy<B>> {
        let bytes = layout.bytes();
        if bytes == 0 {
            return Ok(Vec::new().into());
        }
        let held = self.host_pool.take_buffer(bytes, &self.backend)?;
        HostCopy::from_held(held, layout.elems())
    }

    /// The pinned pool the backend's host memory is cut from
    /// ([`Config::pinned_chunk_bytes`](crate::Config::pinned_chunk_bytes)): its chunks' bytes
    /// (what it holds of the host's memory), their number and their free bytes.
    pub fn pinned_pool(&self) -> crate::PinnedPoolStats {
        self.host_pool.pinned_pool()
    }

    /// Before an upload of `id`'s values: if they are a vector, offers it to the backend for
    /// registration in place ([`Backend::adopt_host`]: page-locked where the backend's rule
    /// says it pays, so that this upload and every later one is a DMA with no staging), with
    /// the copies it expects: the uploads so far and the planned uses left (at least one:
    /// this upload), where the runtime follows the announced future (prefetch or early
    /// read-back on; counted up to [`LOOKAHEAD_USES`]). Without deduplication (the paper's
    /// naive modes) every use uploads, so all of them count; with it, a first upload is taken
    /// as the only one, and an object uploaded again (it was evicted) is expected to upload
    /// once per use left. Without a future, a vector is registered at the upload where the
    /// uploads so far reach the backend's count (online, as in ski rental).
    pub(super) fn offer_for_registration(&mut self, id: ObjectId) -> Result<()> {
        let e = self.objects.get_mut(id)?;
        let pageable = e
            .life
            .host()
            .is_some_and(|h| !h.is_pinned() && !h.is_empty());
        if !pageable {
            return Ok(());
        }
        let before = e.uploads as usize;
        e.uploads = e.uploads.saturating_add(1);
        let ahead = self.lookahead.uses_left(id, LOOKAHEAD_USES).max(1);
        let copies = if !self.config.dedup || before > 0 {
            before + ahead
        } else {
            1
        };
        let (life, _) = self.objects.life_mut(id)?;
        if let Some(host) = life.host_mut() {
            host.adopt(&self.backend, copies);
        }
        Ok(())
    }

    /// Registers a host copy (a vector, or host memory from [`Runtime::alloc_host`]) as a
    /// host-backed object of `layout` (components back to back).
    pub fn register_host(&mut self, data: HostCopy<B>, layout: Layout) -> Result<ObjectId> {
        check_len(self.objects.next_id(), &layout, data.len())?;
        Ok(
            self.make(EventKind::Register, ObjectKind::HostBacked, layout, |log| {
                Lifecycle::registered(data, log)
            }),
        )
    }

    /// The host values of an object, copied from the device first if the device holds the only
    /// valid copy (on-demand sync). The object stays resident.
    pub fn read(&mut self, id: ObjectId) -> Result<&[Complex64]> {
        match self.entry(id)?.life.kind() {
            State::Empty => return Err(Error::Uninitialized(id)),
            State::DeviceDirty => self.sync_to_host(id, 0)?,
            State::WritingBack => self.land(id)?,
            State::HostValid | State::Consistent => {}
        }
        self.note_object(EventKind::HostRead, id, None);
        // (A copy in from host memory may still be reading it: the backend waits for it.)
        let (life, _) = self.life_mut(id)?;
        let Some(host) = life.host_mut() else {
            return Err(Error::Uninitialized(id));
        };
        Ok(host.as_mut_slice()?)
    }

    /// Announces that the caller will read `id` (a result) once the launches writing it are
    /// queued: with [`Config::early_read_back`](crate::Config::early_read_back) on, it is copied back as soon as the last of
    /// them is (see [`Runtime::set_future`]). With [`Config::pinned_results`](crate::Config::pinned_results) on, the host
    /// memory its copy back will land in is allocated now, into the pool
    /// ([`Config::pinned_pool_bytes`](crate::Config::pinned_pool_bytes) permitting): page-locking it is set-up, done before the
    /// queue runs rather than in the middle of it. Changes nothing else.
    pub fn expect_read(&mut self, id: ObjectId) -> Result<()> {
        let e = self.objects.get_mut(id)?;
        let (bytes, first) = (e.layout.bytes(), !e.read_expected);
        e.read_expected = true;
        if self.config.pinned_results && first && bytes > 0 && self.host_pool.can_keep(bytes) {
            let held = self.host_pool.new_buffer(bytes, &self.backend)?;
            self.host_pool.put_held(held, Hazards::default());
        }
        Ok(())
    }

    /// The host values of an object, handed over, and the object released: [`Runtime::read`]
    /// then [`Runtime::release`] without copying the values (a result read once, at the end of
    /// its life, costs one copy from the device, not two). If the read fails, the object is
    /// left as it was; if giving its device memory back fails, it is gone as after
    /// [`Runtime::release`], and the error is returned.
    pub fn take(&mut self, id: ObjectId) -> Result<Vec<Complex64>> {
        self.take_host(id)?.into_vec()
    }

    /// [`Runtime::take`], handing over the host copy where it is: a vector, or the backend's
    /// host memory a copy back landed in ([`Config::pinned_results`](crate::Config::pinned_results)), without copying it.
    pub fn take_host(&mut self, id: ObjectId) -> Result<HostCopy<B>> {
        self.read(id)?;
        let (host, uses) = self
            .remove(id, Keep::Caller)?
            .ok_or_else(|| Error::Internal(format!("{id} was read but holds no host copy")))?;
        uses.settle(&self.backend)?;
        Ok(host)
    }

    /// Replaces an object's values from the host. A device copy, now stale, is dropped (its
    /// buffers go to the free pool, or are freed).
    pub fn write(&mut self, id: ObjectId, data: Vec<Complex64>) -> Result<()> {
        let layout = self.entry(id)?.layout;
        check_len(id, &layout, data.len())?;
        let (life, log) = self.life_mut(id)?;
        let left = life.host_written(data.into(), log)?;
        self.events
            .note(EventKind::HostWrite, Some(id), None, layout.bytes(), None);
        self.dispose_left(id, left)
    }

    /// Releases an object: it is gone, and its device buffers go to the free pool (or are
    /// freed when lazy release is off).
    pub fn release(&mut self, id: ObjectId) -> Result<()> {
        self.remove(id, Keep::Pool).map(drop)
    }

    /// Releases `id`; its host copy, if it holds one, goes where `keep` says, with the work
    /// that may still read it (a copy in from the backend's host memory). If giving its device
    /// memory back fails, the object is gone all the same, its host copy dropped, and the error
    /// returned.
    fn remove(&mut self, id: ObjectId, keep: Keep) -> Result<Option<(HostCopy<B>, Hazards<B>)>> {
        let Some(entry) = self.objects.remove(id) else {
            return Err(Error::UnknownObject(id));
        };
        let bytes = entry.layout.bytes();
        if entry.prefetched {
            self.counters.prefetch_wasted += 1;
        }
        let (host, left) = entry.life.released(&mut self.objects.transitions);
        let uses = match (&host, &left) {
            (Some(h), Left::Device(d)) if h.is_pinned() => d.hazards.clone(),
            _ => Hazards::default(),
        };
        self.dispose_left(id, left)?;
        self.events
            .note(EventKind::Release, Some(id), None, bytes, None);
        match (host, keep) {
            (Some(h), Keep::Pool) => {
                self.host_pool.put(h, uses);
                Ok(None)
            }
            (host, _) => Ok(host.map(|h| (h, uses))),
        }
    }
}

/// The most planned uses [`Runtime::offer_for_registration`] counts ahead: more changes no
/// rule's answer.
pub(crate) const LOOKAHEAD_USES: usize = 64;

/// Where [`Runtime::remove`] puts a released object's host copy.
#[derive(Clone, Copy)]
enum Keep {
    /// In the host pools, for a later copy back to land in.
    Pool,
    /// Handed to the caller.
    Caller,
}

/// Checks that `got` values fill object `id` of `layout` (the message is formatted only when
/// they do not).
fn check_len(id: ObjectId, layout: &Layout, got: usize) -> Result<()> {
    if got != layout.elems() {
        return Err(Error::LengthMismatch {
            what: format!("object {id}"),
            expected: layout.elems(),
            got,
        });
    }
    Ok(())
}
