//! The object table: one record per object, in one dense table indexed by id.
//!
//! A record holds everything the runtime knows about its object: its kind and layout, its
//! [lifecycle](crate::lifecycle) state (which carries the host copy, the device copy with the
//! work in flight on it, or a write-back in flight), whether a prefetch brought it in that
//! no launch has used yet, and how often its host vector was uploaded. MemHC's element cache
//! is the set of records whose state holds a device copy; there is no second table keyed by
//! the same id to keep in step, and a repeated input costs one lookup, not one per table.
//!
//! Ids are dense and handed out in order, so records made one after another sit side by side.

use num_complex::Complex64;

use crate::backend::Backend;
use crate::device_copy::{DeviceCopy, WriteBack};
use crate::error::{Error, Result};
use crate::host_copy::HostCopy;
use crate::lifecycle::{Lifecycle, TransitionLog};
use crate::object::{Layout, ObjectId, ObjectKind, State};
use crate::policy::IdTable;

/// What the runtime knows about one object.
#[derive(Debug)]
pub(super) struct Entry<B: Backend> {
    pub layout: Layout,
    pub kind: ObjectKind,
    /// Prefetch on: a prefetch brought the object in and no launch has used it yet.
    pub prefetched: bool,
    /// The caller will read it ([`Runtime::expect_read`](super::Runtime::expect_read)).
    pub read_expected: bool,
    /// Uploads of its host vector so far, for registration in place
    /// ([`Runtime::offer_for_registration`](super::Runtime::offer_for_registration)); kept
    /// here, in the record's padding, rather than in a table of its own that a copy in would
    /// hash into and grow.
    pub uploads: u32,
    /// The state, holding the host copy, the device copy or the write-back in flight where
    /// each exists; changed only by its transitions.
    pub life: Lifecycle<B>,
}

impl<B: Backend> Entry<B> {
    /// The device copy, if the object is resident.
    pub fn device(&self) -> Option<&DeviceCopy<B>> {
        self.life.device()
    }

    /// Reads what a launch or a release of the object reads first, from each part of the
    /// record (its state, its layout, its device copy, the first element of its host copy),
    /// and returns a value that depends on all of it, so that the reads are kept
    /// ([`Runtime::touch_records`](super::Runtime::touch_records)). A record spans three
    /// cache lines: reading one field brings in one of them only.
    pub fn touch(&self) -> usize {
        let host = self.life.host().and_then(HostCopy::as_slice);
        let first = host.and_then(<[Complex64]>::first);
        let host = first.map_or(0, |c| usize::from(c.re == 0.0));
        let device = self.device().map_or(0, |d| d.blocks.len());
        (self.life.kind() as usize)
            ^ self.layout.bytes()
            ^ usize::from(self.prefetched)
            ^ host
            ^ device
    }
}

/// Every live object's record, the count of transitions taken, and write-backs whose objects
/// are gone.
pub(super) struct Objects<B: Backend> {
    table: IdTable<Entry<B>>,
    next_id: u64,
    /// Every lifecycle transition taken or refused.
    pub transitions: TransitionLog,
    /// Write-backs no longer needed whose completion could not be confirmed: their host memory
    /// is kept until the runtime is dropped.
    pub orphans: Vec<WriteBack<B>>,
}

impl<B: Backend> Default for Objects<B> {
    fn default() -> Self {
        Objects {
            table: IdTable::default(),
            next_id: 0,
            transitions: TransitionLog::default(),
            orphans: Vec::new(),
        }
    }
}

impl<B: Backend> Objects<B> {
    /// The id the next object will get.
    pub fn next_id(&self) -> ObjectId {
        ObjectId::from_index(self.next_id)
    }

    /// Makes the next object, in the state `life` starts it in, and returns its id.
    pub fn make(
        &mut self,
        kind: ObjectKind,
        layout: Layout,
        life: impl FnOnce(&mut TransitionLog) -> Lifecycle<B>,
    ) -> ObjectId {
        let id = self.next_id();
        self.next_id += 1;
        let life = life(&mut self.transitions);
        self.table.insert(
            id,
            Entry {
                layout,
                kind,
                prefetched: false,
                read_expected: false,
                uploads: 0,
                life,
            },
        );
        id
    }

    /// The record of `id`, or `UnknownObject`.
    pub fn get(&self, id: ObjectId) -> Result<&Entry<B>> {
        match self.table.get(&id) {
            Some(e) => Ok(e),
            None => Err(Error::UnknownObject(id)),
        }
    }

    /// The record of `id`, if it is live.
    pub fn find(&self, id: ObjectId) -> Option<&Entry<B>> {
        self.table.get(&id)
    }

    /// The record of `id` to change, if it is live.
    pub fn find_mut(&mut self, id: ObjectId) -> Option<&mut Entry<B>> {
        self.table.get_mut(&id)
    }

    /// The record of `id` to change, or [`Error::UnknownObject`].
    pub fn get_mut(&mut self, id: ObjectId) -> Result<&mut Entry<B>> {
        self.table.get_mut(&id).ok_or(Error::UnknownObject(id))
    }

    /// An object's lifecycle, with the log its transitions are counted in.
    pub fn life_mut(&mut self, id: ObjectId) -> Result<(&mut Lifecycle<B>, &mut TransitionLog)> {
        let Some(e) = self.table.get_mut(&id) else {
            return Err(Error::UnknownObject(id));
        };
        Ok((&mut e.life, &mut self.transitions))
    }

    /// The state of `id`, if it is live.
    pub fn state(&self, id: ObjectId) -> Option<State> {
        self.table.get(&id).map(|e| e.life.kind())
    }

    /// The device copy of `id`, if it is live and resident.
    pub fn device(&self, id: ObjectId) -> Option<&DeviceCopy<B>> {
        self.table.get(&id).and_then(Entry::device)
    }

    /// The device copy of `id` to record work on, if it is live and resident.
    pub fn device_mut(&mut self, id: ObjectId) -> Option<&mut DeviceCopy<B>> {
        self.table.get_mut(&id).and_then(|e| e.life.device_mut())
    }

    /// Whether `id` is live and resident.
    pub fn is_resident(&self, id: ObjectId) -> bool {
        self.table.get(&id).is_some_and(|e| e.life.is_resident())
    }

    /// Whether `id` is live.
    pub fn contains(&self, id: ObjectId) -> bool {
        self.table.contains_key(&id)
    }

    /// Takes `id`'s record out of the table.
    pub fn remove(&mut self, id: ObjectId) -> Option<Entry<B>> {
        self.table.remove(&id)
    }

    /// Clears `id`'s prefetch mark; whether it had one.
    pub fn unmark_prefetched(&mut self, id: ObjectId) -> bool {
        self.table
            .get_mut(&id)
            .is_some_and(|e| std::mem::replace(&mut e.prefetched, false))
    }

    /// Number of live objects.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Every live object's record.
    pub fn iter(&self) -> impl Iterator<Item = (ObjectId, &Entry<B>)> {
        self.table.iter()
    }

    /// Every resident object's device copy.
    pub fn resident(&self) -> impl Iterator<Item = (ObjectId, &DeviceCopy<B>)> {
        self.table
            .iter()
            .filter_map(|(id, e)| e.device().map(|d| (id, d)))
    }

    /// Empties the table, handing back every record (the runtime is being dropped).
    pub fn drain(&mut self) -> Vec<(ObjectId, Entry<B>)> {
        self.table.drain()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record is what a use of a cold object costs in cache lines: keep it in three.
    #[test]
    fn a_record_fits_three_cache_lines() {
        let bytes = std::mem::size_of::<Entry<memhc_host::NullBackend>>();
        eprintln!("Entry<NullBackend>: {bytes} bytes");
        assert!(bytes <= 192, "{bytes} bytes");
    }
}
