//! The unified memory baseline ([`Mode::Unified`](crate::Mode::Unified)): what the runtime
//! does differently when [`Config::managed`](crate::Config::managed) is on.
//!
//! * **Allocation**: each object is one managed allocation, counted against the budget like
//!   device memory. There is no free pool and no eviction (the driver migrates managed memory;
//!   the runtime never oversubscribes it): an allocation beyond the budget, or one the device
//!   refuses, is [`Error::ManagedDoesNotFit`].
//! * **Copy-in**: the host writes the object's values into its buffer in place, once no work
//!   uses the buffer, then advises the driver that an input the launch only reads is read-mostly.
//! * **Launch**: every object is prefetched to the device on the launch's stream, after the
//!   waits on earlier work and before the work.
//! * **Sync to host**: the host waits for all work on the object, then reads it in place into
//!   the object's host copy: the "host touching results" of the baseline.
//!
//! The object's state changes through the same [lifecycle](crate::lifecycle) transitions as
//! with device memory: the runtime takes `CopiedIn` after `managed_copy_in` and
//! `Synced` after `managed_read_back`; nothing here assigns a state.

use num_complex::Complex64;

use super::Runtime;
use crate::backend::{Backend, HostMemory, Location, as_bytes, as_bytes_mut};
use crate::block::Block;
use crate::device_copy::DeviceCopy;
use crate::error::{BackendError, Error, Result};
use crate::object::ObjectId;

/// The one managed buffer of a resident object.
fn whole<B: Backend>(id: ObjectId, r: &DeviceCopy<B>) -> Result<&B::Buffer> {
    match r.blocks.as_slice() {
        [Block::Buffer(whole)] if r.packed => Ok(whole),
        _ => Err(Error::Internal(format!(
            "{id} is not one managed buffer ({} blocks, packed: {})",
            r.blocks.len(),
            r.packed
        ))),
    }
}

impl<B: Backend> Runtime<B> {
    /// A new managed buffer of `bytes`, within the budget and what the device has free.
    pub(super) fn obtain_managed(&mut self, bytes: usize) -> Result<B::Buffer> {
        let (budget, used) = (self.space.budget, self.space.used);
        let refuse = |free: Option<usize>, held: usize| Error::ManagedDoesNotFit {
            requested: bytes,
            held,
            available: free.map_or(budget, |f| budget.min(held + f)),
            budget,
        };
        if used + bytes > budget {
            return Err(refuse(None, used));
        }
        match self.backend.alloc_managed(bytes) {
            Ok(buffer) => {
                self.space.used += bytes;
                Ok(buffer)
            }
            Err(BackendError::OutOfMemory { free, .. }) => Err(refuse(Some(free), used)),
            Err(e) => Err(e.into()),
        }
    }

    /// The host writes object `id`'s values into its managed buffer in place, after any work
    /// on it, then advises read-mostly if `read_only` (the launch does not write it).
    pub(super) fn managed_copy_in(
        &mut self,
        id: ObjectId,
        r: &DeviceCopy<B>,
        read_only: bool,
    ) -> Result<()> {
        if let Some(h) = self.entry(id)?.life.host().filter(|h| h.is_unmade()) {
            // Zeros not made yet: written from the zero buffer.
            let elems = h.len();
            self.host_pool.grow_zeros(elems)?;
        }
        let Some(host) = self.entry(id)?.life.host() else {
            return Err(Error::Uninitialized(id));
        };
        let buffer = whole(id, r)?;
        r.hazards.settle(&self.backend)?;
        match (host.as_slice(), host.host_buffer()) {
            (Some(values), _) => self.backend.managed_write(buffer, 0, as_bytes(values))?,
            (None, None) if host.is_unmade() => {
                let zeros = self.host_pool.zeros().get(..host.len()).ok_or_else(|| {
                    Error::Internal(format!("{id}: the zero buffer is shorter than it"))
                })?;
                self.backend.managed_write(buffer, 0, as_bytes(zeros))?
            }
            // Host memory of the backend: read through it (the copies into it are done).
            (None, Some((src, elems))) => {
                let mut values = vec![Complex64::new(0.0, 0.0); elems];
                src.read(0, as_bytes_mut(&mut values))?;
                self.backend.managed_write(buffer, 0, as_bytes(&values))?;
            }
            (None, None) => return Err(Error::Uninitialized(id)),
        }
        if read_only {
            self.backend.advise_read_mostly(buffer)?;
        }
        Ok(())
    }

    /// Queues the migration of a resident object to the device on stream `stream`.
    pub(super) fn prefetch_to_device(&self, stream: &B::Stream, r: &DeviceCopy<B>) -> Result<()> {
        for block in &r.blocks {
            if let Block::Buffer(buffer) = block {
                self.backend.prefetch(stream, buffer, Location::Device)?;
            }
        }
        Ok(())
    }

    /// The host waits for all work on object `id`, then reads its managed buffer in place into
    /// `host` (a vector of its length, overwritten whole). Changes no state: the caller takes
    /// the transition.
    pub(super) fn managed_read_back(
        &self,
        id: ObjectId,
        mut host: Vec<Complex64>,
    ) -> Result<Vec<Complex64>> {
        let r = self
            .objects
            .device(id)
            .ok_or_else(|| Error::Internal(format!("syncing {id}, which is not resident")))?;
        let buffer = whole(id, r)?;
        r.hazards.settle(&self.backend)?;
        self.backend
            .managed_read(buffer, 0, as_bytes_mut(&mut host))?;
        Ok(host)
    }
}
