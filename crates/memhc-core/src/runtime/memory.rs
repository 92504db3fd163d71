//! The allocation path, eviction, write-back and disposal of device copies.

use num_complex::Complex64;

use super::{Entry, Runtime};
use crate::backend::{Backend, DeviceMemory, as_bytes_mut};
use crate::element_cache::{ElementCache, Resident};
use crate::error::{BackendError, Error, Result};
use crate::free_pool::Pooled;
use crate::hazards::Hazards;
use crate::object::{ObjectId, State};
use crate::policy::{IdMap, ResidentView};

fn missing_buffer(id: ObjectId) -> Error {
    Error::Internal(format!("resident object {id} has no buffer"))
}

/// The policy's view of the tables while it picks a victim.
struct View<'a, B: Backend> {
    cache: &'a ElementCache<B>,
    pinned: &'a [ObjectId],
    objects: &'a IdMap<Entry>,
}

impl<B: Backend> ResidentView for View<'_, B> {
    fn is_evictable(&self, id: ObjectId) -> bool {
        !self.pinned.contains(&id) && self.cache.contains(id)
    }

    fn is_dirty(&self, id: ObjectId) -> bool {
        self.objects
            .get(&id)
            .is_some_and(|e| e.life.kind() == State::DeviceDirty)
    }
}

impl<B: Backend> Runtime<B> {
    /// A device buffer of `bytes`, with the uses it still has in flight (non-empty only for a
    /// pool reuse): pool reuse, else a new allocation, else drain the pool, evict, and retry.
    /// `stream` is the stream any write-back is ordered on. With managed memory: a new
    /// managed allocation, or an error.
    pub(super) fn obtain_buffer(
        &mut self,
        bytes: usize,
        stream: usize,
    ) -> Result<(B::Buffer, Hazards<B>)> {
        if self.config.managed {
            return Ok((self.obtain_managed(bytes)?, Hazards::default()));
        }
        if self.config.lazy_release
            && let Some(p) = self.pool.take(bytes)
        {
            self.counters.pool_reuses += 1;
            return Ok((p.buffer, p.hazards));
        }
        loop {
            if self.used + bytes <= self.budget {
                match self.backend.alloc(bytes) {
                    Ok(buffer) => {
                        self.used += bytes;
                        return Ok((buffer, Hazards::default()));
                    }
                    // The device has less free memory than the budget says (another process,
                    // fragmentation): make room as if over budget.
                    Err(BackendError::OutOfMemory { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            if !self.pool.is_empty() {
                self.drain_pool()?;
                continue;
            }
            match self.choose_victim()? {
                Some(victim) => self.evict(victim, stream)?,
                None => {
                    let pinned = self.pinned_bytes();
                    let device_room = self
                        .backend
                        .mem_info()
                        .map(|m| m.free + self.used)
                        .unwrap_or(self.budget);
                    return Err(Error::DoesNotFit {
                        needed: pinned + bytes,
                        available: self.budget.min(device_room),
                        budget: self.budget,
                    });
                }
            }
        }
    }

    /// Bytes of resident objects the current launch is using.
    fn pinned_bytes(&self) -> usize {
        self.pinned
            .iter()
            .filter_map(|&id| self.cache.get(id))
            .map(Resident::bytes)
            .sum()
    }

    /// Asks the policy for a victim and checks its answer.
    fn choose_victim(&mut self) -> Result<Option<ObjectId>> {
        let view = View {
            cache: &self.cache,
            pinned: &self.pinned,
            objects: &self.objects,
        };
        let victim = self.policy.choose_victim(&view);
        match victim {
            Some(id) if !view.is_evictable(id) => Err(Error::Internal(format!(
                "policy {} chose {id}, which is not an evictable resident object",
                self.policy.name()
            ))),
            other => Ok(other),
        }
    }

    /// Evicts a resident object: writes it back first if the device copy is the only valid
    /// one (`WrittenBack`), waits for its in-flight work, frees its buffers (`Evicted`). If
    /// the write-back fails, the object stays resident and dirty.
    pub(super) fn evict(&mut self, id: ObjectId, stream: usize) -> Result<()> {
        if self.entry(id)?.life.kind() == State::DeviceDirty {
            let host = self.read_back(id, stream)?;
            let (life, log) = self.life_mut(id)?;
            life.written_back(host, log)?;
            self.counters.writebacks += 1;
        }
        if let Some(r) = self.cache.get(id) {
            r.hazards.settle(&self.backend)?;
        }
        // Refused (the object is not consistent), the eviction changes nothing.
        let (life, log) = self.life_mut(id)?;
        life.evicted(log)?;
        let Some(r) = self.cache.remove(id) else {
            return Err(Error::Internal(format!(
                "evicting {id}, which is not resident"
            )));
        };
        self.policy.on_evict(id);
        self.counters.evictions += 1;
        self.free_buffers(r.buffers)
    }

    /// On-demand (or eager) sync of a `DeviceDirty` object: its device copy becomes its host
    /// copy, and it becomes `Consistent` (`Synced`). On failure nothing changes.
    pub(super) fn sync_to_host(&mut self, id: ObjectId, stream: usize) -> Result<()> {
        let host = self.read_back(id, stream)?;
        let (life, log) = self.life_mut(id)?;
        life.synced(host, log)?;
        self.policy.on_synced(id);
        Ok(())
    }

    /// Reads the device copy of a resident object into a new host vector, ordered after its
    /// last write, on `stream` (with managed memory: the host reads it in place once its work
    /// is done). Changes no state: the caller takes `Synced` or `WrittenBack`.
    fn read_back(&self, id: ObjectId, stream: usize) -> Result<Vec<Complex64>> {
        if self.config.managed {
            return self.managed_read_back(id);
        }
        let layout = self.entry(id)?.layout;
        let r = self
            .cache
            .get(id)
            .ok_or_else(|| Error::Internal(format!("syncing {id}, which is not resident")))?;
        let s = &self.streams[stream];
        r.hazards.before_read(&self.backend, stream, s)?;
        let mut host = vec![Complex64::new(0.0, 0.0); layout.elems()];
        if r.packed {
            let whole = r.buffers.first().ok_or_else(|| missing_buffer(id))?;
            self.backend
                .copy_d2h(s, whole, 0, as_bytes_mut(&mut host))?;
        } else {
            for (chunk, buffer) in host.chunks_mut(layout.component_elems()).zip(&r.buffers) {
                self.backend.copy_d2h(s, buffer, 0, as_bytes_mut(chunk))?;
            }
        }
        Ok(host)
    }

    /// Drops the device copy of an object, if it has one: its buffers go to the free pool (or
    /// are freed). Callers take the object's transition (`HostWritten`, `Released`,
    /// `RolledBack`, `Uncached`).
    pub(super) fn drop_device_copy(&mut self, id: ObjectId) -> Result<()> {
        match self.cache.remove(id) {
            Some(r) => {
                self.policy.on_remove(id);
                self.dispose(r)
            }
            None => Ok(()),
        }
    }

    /// Returns a former device copy's buffers: to the free pool with their in-flight uses when
    /// lazy release is on, else freed once those uses have completed.
    pub(super) fn dispose(&mut self, r: Resident<B>) -> Result<()> {
        if self.config.lazy_release {
            for buffer in r.buffers {
                self.pool.put(Pooled {
                    buffer,
                    hazards: r.hazards.clone(),
                });
            }
            Ok(())
        } else {
            r.hazards.settle(&self.backend)?;
            self.free_buffers(r.buffers)
        }
    }

    /// Frees buffers whose uses have completed. Every buffer is consumed (and its bytes stop
    /// counting) even if a free fails; the first failure is reported.
    fn free_buffers(&mut self, buffers: Vec<B::Buffer>) -> Result<()> {
        let mut first = Ok(());
        for b in buffers {
            self.used -= b.bytes();
            if let Err(e) = self.backend.free(b) {
                first = first.and(Err(e.into()));
            }
        }
        first
    }

    /// Frees every pooled buffer (MemHC's step 4: the pool goes before anything is evicted).
    fn drain_pool(&mut self) -> Result<()> {
        let mut first = Ok(());
        for p in self.pool.drain() {
            let settled = p.hazards.settle(&self.backend);
            // A buffer whose uses cannot be confirmed complete must not be freed: keep it.
            if let Err(e) = settled {
                self.pool.put(p);
                first = first.and(Err(e.into()));
                continue;
            }
            first = first.and(self.free_buffers(vec![p.buffer]));
        }
        first
    }
}
