//! The object table: one record per object, in two dense tables indexed by id.
//!
//! A record holds everything the runtime knows about its object, in two parts:
//!
//! * the **hot part** ([`Hot`], one cache line, aligned): what every hit, miss and eviction
//!   reads first: the object's state, kind and layout, whether a prefetch brought it in that
//!   no launch has used yet, whether the caller will read it, and how often its host vector
//!   was uploaded;
//! * the **cold part**: its [lifecycle](crate::lifecycle), which carries the host copy, the
//!   device copy with the work in flight on it, or a write-back in flight.
//!
//! The lifecycle is the state: the hot part's copy of its kind is written by this table after
//! every change of the lifecycle ([`LifeMut::step`]), and [`Runtime::audit`](super::Runtime::audit)
//! checks that the two agree for every object. A question about state (is it resident, dirty,
//! evictable, being written back) reads the hot line only; the cold part is read where its data
//! is needed (the device copy's blocks, the host copy's values). MemHC's element cache is the
//! set of records whose state holds a device copy; there is no third table keyed by the same id
//! to keep in step.
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

/// The hot part of an object's record: what a hit, a miss or an eviction reads first, in one
/// cache line (aligned to one, so that it never straddles two).
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub(super) struct Hot {
    pub layout: Layout,
    pub kind: ObjectKind,
    /// The lifecycle's state, as [`Lifecycle::kind`] gives it; written only by
    /// [`LifeMut::step`] (and when the object is made).
    state: State,
    /// Prefetch on: a prefetch brought the object in and no launch has used it yet.
    pub prefetched: bool,
    /// The caller will read it ([`Runtime::expect_read`](super::Runtime::expect_read)).
    pub read_expected: bool,
    /// Uploads of its host vector so far, for registration in place
    /// ([`Runtime::offer_for_registration`](super::Runtime::offer_for_registration)).
    pub uploads: u32,
}

impl Hot {
    /// The object's state.
    pub fn state(&self) -> State {
        self.state
    }

    /// Whether the object is resident (its state holds a device copy).
    pub fn is_resident(&self) -> bool {
        self.state.is_resident()
    }
}

/// An object's lifecycle, to change: the hot part's state follows each change.
pub(super) struct LifeMut<'a, B: Backend> {
    life: &'a mut Lifecycle<B>,
    state: &'a mut State,
}

impl<'a, B: Backend> LifeMut<'a, B> {
    /// Takes a transition with `f` (or refuses it: the lifecycle then stays as it was), then
    /// writes the state the lifecycle is in into the hot part.
    pub fn step<T>(self, f: impl FnOnce(&mut Lifecycle<B>) -> T) -> T {
        let out = f(self.life);
        *self.state = self.life.kind();
        out
    }

    /// The host copy, in the states where it is valid, to change in place (no transition).
    pub fn host_mut(self) -> Option<&'a mut HostCopy<B>> {
        self.life.host_mut()
    }
}

/// Every live object's record, the count of transitions taken, and write-backs whose objects
/// are gone.
pub(super) struct Objects<B: Backend> {
    /// The hot part of every record.
    hot: IdTable<Hot>,
    /// The cold part: every object's lifecycle, the same ids as `hot`.
    cold: IdTable<Lifecycle<B>>,
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
            hot: IdTable::default(),
            cold: IdTable::default(),
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
        self.hot.insert(
            id,
            Hot {
                layout,
                kind,
                state: life.kind(),
                prefetched: false,
                read_expected: false,
                uploads: 0,
            },
        );
        self.cold.insert(id, life);
        id
    }

    /// The hot part of `id`'s record, or `UnknownObject`.
    pub fn get(&self, id: ObjectId) -> Result<&Hot> {
        self.hot.get(&id).ok_or(Error::UnknownObject(id))
    }

    /// The hot part of `id`'s record, if it is live.
    pub fn find(&self, id: ObjectId) -> Option<&Hot> {
        self.hot.get(&id)
    }

    /// The hot part of `id`'s record to change, or [`Error::UnknownObject`]. (Its state
    /// changes only with the lifecycle: [`Objects::life_mut`].)
    pub fn get_mut(&mut self, id: ObjectId) -> Result<&mut Hot> {
        self.hot.get_mut(&id).ok_or(Error::UnknownObject(id))
    }

    /// An object's lifecycle (the cold part of its record), or `UnknownObject`.
    pub fn life(&self, id: ObjectId) -> Result<&Lifecycle<B>> {
        self.cold.get(&id).ok_or(Error::UnknownObject(id))
    }

    /// An object's lifecycle, to change, with the log its transitions are counted in.
    pub fn life_mut(&mut self, id: ObjectId) -> Result<(LifeMut<'_, B>, &mut TransitionLog)> {
        match (self.hot.get_mut(&id), self.cold.get_mut(&id)) {
            (Some(hot), Some(life)) => Ok((
                LifeMut {
                    life,
                    state: &mut hot.state,
                },
                &mut self.transitions,
            )),
            _ => Err(Error::UnknownObject(id)),
        }
    }

    /// The host copy of `id` to change in place (no transition), if it is live and holds one.
    pub fn host_mut(&mut self, id: ObjectId) -> Option<&mut HostCopy<B>> {
        self.cold.get_mut(&id).and_then(Lifecycle::host_mut)
    }

    /// The state of `id`, if it is live.
    pub fn state(&self, id: ObjectId) -> Option<State> {
        self.hot.get(&id).map(Hot::state)
    }

    /// The device copy of `id`, if it is live and resident.
    pub fn device(&self, id: ObjectId) -> Option<&DeviceCopy<B>> {
        self.cold.get(&id).and_then(Lifecycle::device)
    }

    /// The device copy of `id` to record work on, if it is live and resident.
    pub fn device_mut(&mut self, id: ObjectId) -> Option<&mut DeviceCopy<B>> {
        self.cold.get_mut(&id).and_then(Lifecycle::device_mut)
    }

    /// Whether `id` is live and resident.
    pub fn is_resident(&self, id: ObjectId) -> bool {
        self.hot.get(&id).is_some_and(Hot::is_resident)
    }

    /// Whether `id` is live.
    pub fn contains(&self, id: ObjectId) -> bool {
        self.hot.contains_key(&id)
    }

    /// Takes `id`'s record out of the tables: its hot part and its lifecycle.
    pub fn remove(&mut self, id: ObjectId) -> Option<(Hot, Lifecycle<B>)> {
        let hot = self.hot.remove(&id);
        let life = self.cold.remove(&id);
        hot.zip(life)
    }

    /// Clears `id`'s prefetch mark; whether it had one.
    pub fn unmark_prefetched(&mut self, id: ObjectId) -> bool {
        self.hot
            .get_mut(&id)
            .is_some_and(|e| std::mem::replace(&mut e.prefetched, false))
    }

    /// Number of live objects.
    pub fn len(&self) -> usize {
        self.hot.len()
    }

    /// Every live object's record: its hot part and its lifecycle (a record missing its
    /// lifecycle, which no change of the tables leaves, is skipped).
    pub fn iter(&self) -> impl Iterator<Item = (ObjectId, &Hot, &Lifecycle<B>)> {
        self.hot
            .iter()
            .filter_map(|(id, h)| self.cold.get(&id).map(|l| (id, h, l)))
    }

    /// Every resident object's device copy.
    pub fn resident(&self) -> impl Iterator<Item = (ObjectId, &DeviceCopy<B>)> {
        self.cold
            .iter()
            .filter_map(|(id, l)| l.device().map(|d| (id, d)))
    }

    /// The objects whose hot part's state is not their lifecycle's, and the lifecycles with no
    /// hot part: `(id, hot state, lifecycle state)` (for the audit; empty when all is well).
    pub fn disagreements(&self) -> Vec<(ObjectId, Option<State>, Option<State>)> {
        let mut bad: Vec<_> = self
            .hot
            .iter()
            .map(|(id, h)| (id, Some(h.state), self.cold.get(&id).map(Lifecycle::kind)))
            .filter(|(_, h, l)| h != l)
            .collect();
        bad.extend(
            self.cold
                .iter()
                .filter(|(id, _)| !self.hot.contains_key(id))
                .map(|(id, l)| (id, None, Some(l.kind()))),
        );
        bad
    }

    /// Reads what a launch or a release of `id` reads first, from each part of its record (its
    /// state and layout, its device copy, the first element of its host copy), and returns a
    /// value that depends on all of it, so that the reads are kept
    /// ([`Runtime::touch_records`](super::Runtime::touch_records)); 0 for an unknown id.
    pub fn touch(&self, id: ObjectId) -> usize {
        let Some(h) = self.hot.get(&id) else {
            return 0;
        };
        let life = self.cold.get(&id);
        let host = life.and_then(Lifecycle::host).and_then(HostCopy::as_slice);
        let first = host.and_then(<[Complex64]>::first);
        let host = first.map_or(0, |c| usize::from(c.re == 0.0));
        let device = life
            .and_then(Lifecycle::device)
            .map_or(0, |d| d.blocks.len());
        (h.state as usize) ^ h.layout.bytes() ^ usize::from(h.prefetched) ^ host ^ device
    }

    /// Empties the tables, handing back every object's lifecycle (the runtime is being
    /// dropped).
    pub fn drain(&mut self) -> Vec<(ObjectId, Lifecycle<B>)> {
        let _ = self.hot.drain();
        self.cold.drain()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hot part of a record is one cache line, and a slot of its table too (the
    /// state's spare values mark an empty slot): what a question about an object's state costs
    /// in cache lines.
    #[test]
    fn the_hot_part_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Hot>(), 64);
        assert_eq!(std::mem::align_of::<Hot>(), 64);
        assert_eq!(std::mem::size_of::<Option<Hot>>(), 64);
        let cold = std::mem::size_of::<Lifecycle<memhc_host::NullBackend>>();
        eprintln!("hot part: 64 bytes; cold part (Lifecycle<NullBackend>): {cold} bytes");
        assert!(cold <= 128, "{cold} bytes");
    }

    /// The hot part's state follows every transition taken through [`LifeMut::step`], a
    /// refused one included (the state is then unchanged), and a record whose two parts
    /// disagree is reported.
    #[test]
    fn the_hot_state_follows_the_lifecycle() {
        type B = memhc_host::NullBackend;
        let mut objects = Objects::<B>::default();
        let layout = Layout::new(1, 3).expect("layout");
        let data = vec![Complex64::new(1.0, 0.0); 3];
        let id = objects.make(ObjectKind::HostBacked, layout, |log| {
            Lifecycle::registered(data.into(), log)
        });
        let gpu = objects.make(ObjectKind::GpuOnly, layout, Lifecycle::created);
        assert_eq!(objects.state(id), Some(State::HostValid));
        assert_eq!(objects.state(gpu), Some(State::Empty));
        let (life, log) = objects.life_mut(id).expect("live");
        let written = life.step(|l| l.written_on_device(None, log));
        assert!(
            written.is_err(),
            "not resident: a write needs device memory"
        );
        assert_eq!(objects.state(id), Some(State::HostValid));
        let fresh = crate::device_copy::DeviceCopy::<B> {
            blocks: smallvec::smallvec![crate::block::Block::Arena {
                offset: 0,
                size: 48
            }],
            packed: true,
            hazards: crate::hazards::Hazards::default(),
        };
        let (life, log) = objects.life_mut(id).expect("live");
        let old = life.step(|l| l.written_on_device(Some(fresh), log));
        assert!(matches!(old, Ok(Some(_))));
        assert_eq!(objects.state(id), Some(State::DeviceDirty));
        assert!(objects.is_resident(id) && !objects.is_resident(gpu));
        assert!(objects.disagreements().is_empty());
        if let Some(h) = objects.hot.get_mut(&gpu) {
            h.state = State::Consistent;
        }
        assert_eq!(
            objects.disagreements(),
            [(gpu, Some(State::Consistent), Some(State::Empty))]
        );
    }
}
