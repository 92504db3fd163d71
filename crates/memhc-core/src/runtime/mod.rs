//! The runtime: owns device memory on behalf of its caller, exactly as MemHC section 5
//! describes, on any [`Backend`].
//!
//! The caller registers host data ([`Runtime::register`], host-backed objects) and creates
//! intermediates ([`Runtime::create`], GPU-only objects), then runs work with
//! [`Runtime::launch`]: it names the objects the work uses and how (read, write, both), and gets
//! device views of them to enqueue GEMMs on one of the runtime's streams. The runtime decides
//! where every object lives:
//!
//! * **element cache**: a resident object is a hit: no allocation, no copy;
//! * **allocation path**: free-pool reuse of a block of the same size (or within the reuse
//!   tolerance), else a new block (a driver allocation, or a range of the arena in arena mode),
//!   else (over budget, arena full, or out of device memory) drain the free pool, then evict
//!   objects in the order the [eviction policy](crate::policy) chooses until the request fits,
//!   handing the victim's block straight to the request when it fits (handover);
//! * **eviction** writes a device-only (dirty) object back to the host first, and merely drops
//!   the device copy of a clean one; nothing is ever lost;
//! * **on-demand sync**: an object written on the device is copied to the host only when the
//!   caller reads it ([`Runtime::read`]) or eviction forces it;
//! * **release** ([`Runtime::release`]) moves the buffers to the free pool (or frees them);
//! * **prefetch** ([`Config::prefetch`]): after each launch, the objects the next uses of the
//!   announced future read are brought in on a copy stream, within the budget and evicting
//!   only what is needed later (`prefetch.rs`); evicted device-only objects are then written
//!   back asynchronously on that stream (`writeback.rs`);
//! * **unified memory** ([`Config::managed`]): objects in managed memory, never evicted,
//!   written and read in place by the host and prefetched to the device by every launch
//!   (`managed.rs`);
//! * **dependencies**: every allocation carries the events of the work using it; streams wait
//!   on them before conflicting work, and the host waits on them before memory is freed, so an
//!   object in use by in-flight work is never evicted, reused or freed early.
//!
//! Every change of an object's state is a named transition of the
//! [object lifecycle](crate::lifecycle), which holds the host copy inside the states where it is
//! valid and counts every transition in [`Runtime::transitions`].
//!
//! [`Runtime::audit`] checks every invariant of the tables; tests call it after every step.

mod audit;
mod launch;
mod managed;
mod memory;
mod prefetch;
mod work;
mod writeback;

use num_complex::Complex64;

use crate::arena::{Arena, SubAllocator};
use crate::backend::instrumented::Instrumented;
use crate::backend::{Backend, DeviceMemory};
use crate::block::Block;
use crate::config::Config;
use crate::element_cache::ElementCache;
use crate::error::{Error, Result};
use crate::events::{EventKind, EventLog, Events};
use crate::free_pool::FreePool;
use crate::host_pool::HostPool;
use crate::lifecycle::{Lifecycle, TransitionLog};
use crate::lookahead::Lookahead;
use crate::object::{Layout, ObjectId, ObjectKind, State};
use crate::policy::{EvictionPolicy, IdMap, IdSet, IdTable};
use crate::stats::{ArenaUsage, Stats};

pub use audit::AuditError;
use launch::Scratch;
pub use work::{Components, Launch};

/// What the runtime knows about one object besides its device copy.
#[derive(Debug)]
struct Entry {
    kind: ObjectKind,
    layout: Layout,
    /// The state, holding the host copy where it is valid; changed only by its transitions.
    life: Lifecycle,
}

/// Cache events, counted by the runtime (device traffic is counted by [`Instrumented`]).
#[derive(Clone, Copy, Debug, Default)]
struct CacheCounters {
    hits: u64,
    misses: u64,
    pool_reuses: u64,
    handovers: u64,
    arena_allocations: u64,
    pool_slack_bytes: u64,
    evictions: u64,
    writebacks: u64,
    fragmentation_evictions: u64,
    arena_stranded_bytes: u64,
    arena_restarts: u64,
    prefetches: u64,
    prefetch_hits: u64,
    prefetch_wasted: u64,
    prefetch_bytes: u64,
    async_writebacks: u64,
}

/// The MemHC runtime on backend `B`. See the [module documentation](self).
pub struct Runtime<B: Backend> {
    backend: Instrumented<B>,
    /// The launch streams, then (prefetch on) the copy stream.
    streams: Vec<B::Stream>,
    config: Config,
    budget: usize,
    objects: IdTable<Entry>,
    cache: ElementCache<B>,
    pool: FreePool<B>,
    /// The arena, in arena mode.
    arena: Option<Arena<B>>,
    policy: Box<dyn EvictionPolicy>,
    /// Bytes held in blocks (driver buffers, or arena ranges): resident plus pooled.
    used: usize,
    /// Objects a launch in progress is using: never evicted. A launch uses a handful of
    /// objects, so a list is the fastest set.
    pinned: Vec<ObjectId>,
    counters: CacheCounters,
    /// Every lifecycle transition taken or refused.
    transitions: TransitionLog,
    next_id: u64,
    /// Lists launches reuse.
    scratch: Scratch,
    /// Prefetch on: the announced future and how far the run has come.
    lookahead: Lookahead,
    /// Prefetch on: objects a prefetch brought in that no launch has used yet.
    prefetched: IdSet,
    /// Prefetch on: the list of uses to prefetch, reused from launch to launch.
    scratch_prefetch: Vec<(u64, ObjectId)>,
    /// Write-backs in flight, by object (`WritingBack`).
    pending: IdMap<writeback::Pending<B>>,
    /// Write-backs no longer needed whose completion could not be confirmed: their host memory
    /// is kept until the runtime is dropped.
    orphans: Vec<writeback::Pending<B>>,
    /// The event log's recorder ([`Config::events`]), or nothing.
    events: Events,
    /// Host vectors of released objects, for copies back to land in
    /// ([`Config::host_pool_bytes`]).
    host_pool: HostPool,
}

impl<B: Backend> std::fmt::Debug for Runtime<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("backend", &self.backend.name())
            .field("config", &self.config)
            .field("budget", &self.budget)
            .field("objects", &self.objects.len())
            .field("resident", &self.cache.len())
            .field("used", &self.used)
            .finish()
    }
}

impl<B: Backend> Runtime<B> {
    /// A runtime on `backend`. The device budget is `config.budget`, or the device's free
    /// memory now if that is `None`. Unified memory (`config.managed`) on a backend without
    /// managed memory is refused with [`Error::InvalidConfig`].
    pub fn new(backend: B, config: Config) -> Result<Self> {
        config.validate()?;
        if config.managed && !backend.supports_managed() {
            return Err(Error::InvalidConfig(format!(
                "unified memory needs managed memory, and the {} has none",
                backend.name()
            )));
        }
        let backend = Instrumented::new(backend);
        let budget = match config.budget {
            Some(b) => b,
            None => backend.mem_info()?.free,
        };
        // Prefetch on: one more stream, for copies.
        let count = config.streams + usize::from(config.prefetch.is_some());
        let streams = (0..count)
            .map(|_| backend.create_stream())
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let mut events = match config.events {
            true => Events::on(
                config.streams as u32,
                config.prefetch.map(|_| config.streams as u32),
                budget as u64,
                streams.iter().map(|s| backend.stream_number(s)).collect(),
                backend.timing_clock_ns(),
            ),
            false => Events::default(),
        };
        let arena = if config.arena {
            let buffer = backend.alloc(budget)?;
            events.block(EventKind::Alloc, budget, buffer.handle());
            Some(Arena {
                buffer,
                space: SubAllocator::new(budget),
            })
        } else {
            None
        };
        let policy = config.policy.build(config.seed);
        Ok(Runtime {
            backend,
            streams,
            budget,
            objects: IdTable::default(),
            cache: ElementCache::default(),
            pool: FreePool::default(),
            arena,
            policy,
            used: 0,
            pinned: Vec::new(),
            counters: CacheCounters::default(),
            transitions: TransitionLog::default(),
            next_id: 0,
            scratch: Scratch::default(),
            lookahead: Lookahead::default(),
            prefetched: IdSet::default(),
            scratch_prefetch: Vec::new(),
            pending: IdMap::default(),
            orphans: Vec::new(),
            events,
            host_pool: HostPool::new(config.host_pool_bytes, config.host_pool_min_bytes),
            config,
        })
    }

    /// The configuration the runtime was built with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The device budget in bytes.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// The backend (for inspection; all work goes through the runtime).
    pub fn backend(&self) -> &B {
        self.backend.inner()
    }

    /// Number of streams launches can use (with prefetch on, the runtime has one more, for
    /// copies, which launches cannot name).
    pub fn streams(&self) -> usize {
        self.config.streams
    }

    /// Device bytes held now: resident objects plus pooled blocks (in arena mode, the bytes of
    /// the arena in use).
    pub fn used_bytes(&self) -> usize {
        self.used
    }

    /// In arena mode, how the arena is used now: its size, free bytes and largest free piece.
    pub fn arena_usage(&self) -> Option<ArenaUsage> {
        self.arena.as_ref().map(|a| ArenaUsage {
            capacity: a.space.capacity(),
            free: a.space.free_bytes(),
            largest_free: a.space.largest_free(),
        })
    }

    /// The arena's buffer, in arena mode.
    fn arena_buffer(&self) -> Option<&B::Buffer> {
        self.arena.as_ref().map(|a| &a.buffer)
    }

    /// Device bytes held by resident objects.
    pub fn resident_bytes(&self) -> usize {
        self.cache.bytes()
    }

    /// Device bytes held by the free pool.
    pub fn pooled_bytes(&self) -> usize {
        self.pool.bytes()
    }

    /// The eviction policy's name.
    pub fn policy_name(&self) -> &'static str {
        self.policy.name()
    }

    /// Registers host data as a host-backed object of `layout` (components back to back).
    pub fn register(&mut self, data: Vec<Complex64>, layout: Layout) -> Result<ObjectId> {
        check_len(ObjectId::from_index(self.next_id), &layout, data.len())?;
        Ok(
            self.make(EventKind::Register, ObjectKind::HostBacked, layout, |log| {
                Lifecycle::registered(data, log)
            }),
        )
    }

    /// Creates a GPU-only object of `layout`. It holds no value, and uses no memory, until a
    /// launch writes it.
    pub fn create(&mut self, layout: Layout) -> Result<ObjectId> {
        Ok(self.make(
            EventKind::Create,
            ObjectKind::GpuOnly,
            layout,
            Lifecycle::created,
        ))
    }

    /// Makes the next object: its id, room for it in the per-object tables (the element
    /// cache's and the policy's, so that the launch that makes it resident grows none), its
    /// event, and its entry with the lifecycle `life` starts it in.
    fn make(
        &mut self,
        event: EventKind,
        kind: ObjectKind,
        layout: Layout,
        life: impl FnOnce(&mut TransitionLog) -> Lifecycle,
    ) -> ObjectId {
        let id = ObjectId::from_index(self.next_id);
        self.next_id += 1;
        self.cache.reserve(id);
        self.policy.on_register(id);
        self.events
            .note(event, Some(id), None, layout.bytes(), None);
        let life = life(&mut self.transitions);
        self.objects.insert(id, Entry { kind, layout, life });
        id
    }

    fn entry(&self, id: ObjectId) -> Result<&Entry> {
        self.objects.get(&id).ok_or(Error::UnknownObject(id))
    }

    /// An object's lifecycle, with the log its transitions are counted in.
    fn life_mut(&mut self, id: ObjectId) -> Result<(&mut Lifecycle, &mut TransitionLog)> {
        let e = self.objects.get_mut(&id).ok_or(Error::UnknownObject(id))?;
        Ok((&mut e.life, &mut self.transitions))
    }

    /// The layout of an object.
    pub fn layout(&self, id: ObjectId) -> Result<Layout> {
        Ok(self.entry(id)?.layout)
    }

    /// The state of an object.
    pub fn state(&self, id: ObjectId) -> Result<State> {
        Ok(self.entry(id)?.life.kind())
    }

    /// Whether an object is host-backed or GPU-only.
    pub fn kind(&self, id: ObjectId) -> Result<ObjectKind> {
        Ok(self.entry(id)?.kind)
    }

    /// Whether an object has a device copy now.
    pub fn is_resident(&self, id: ObjectId) -> bool {
        self.cache.contains(id)
    }

    /// Number of live objects.
    pub fn object_count(&self) -> usize {
        self.objects.len()
    }

    /// Announces a vector of independent contractions about to run, so that the policy can
    /// protect its members that are resident (pre-protected LRU).
    pub fn begin_vector(&mut self, members: &[ObjectId]) -> Result<()> {
        let mut resident = Vec::with_capacity(members.len());
        for &id in members {
            self.entry(id)?;
            if self.cache.contains(id) {
                resident.push(id);
            }
        }
        self.policy.begin_vector(&resident);
        Ok(())
    }

    /// A hint that `ids` will be used or released soon: reads what that will read first (each
    /// object's entry, its element-cache record, the first element of its host copy), all in
    /// one pass, so that their cache misses overlap instead of each waiting on the one before.
    /// On a long queue whose objects are drawn from its whole history, those records are cold,
    /// and a runner that knows what a vector will release can warm them while it announces the
    /// vector. Changes nothing; ids unknown or released are skipped.
    pub fn warm(&self, ids: &[ObjectId]) {
        let mut seen = 0usize;
        for id in ids {
            if let Some(e) = self.objects.get(id) {
                // The allocator writes there when a released object's copy is freed.
                let first = e.life.host().and_then(<[Complex64]>::first);
                seen += first.map_or(0, |c| usize::from(c.re == 0.0));
            }
            seen += usize::from(self.cache.contains(*id));
        }
        // Keeps the reads: nothing else uses what they found.
        std::hint::black_box(seen);
    }

    /// Gives the policy the sequence of object uses to come: each launch's objects, in the
    /// order of its access list, launch after launch. Objects must exist already (create the
    /// intermediates up front). The `belady` policy uses it, and prefetch
    /// ([`Config::prefetch`]).
    pub fn set_future(&mut self, accesses: &[ObjectId]) -> Result<()> {
        if let Some(&bad) = accesses.iter().find(|id| !self.objects.contains_key(id)) {
            return Err(Error::UnknownObject(bad));
        }
        self.policy.set_future(accesses);
        if self.config.prefetch.is_some() {
            self.lookahead.set(accesses);
        }
        Ok(())
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
        self.entry(id)?.life.host().ok_or(Error::Uninitialized(id))
    }

    /// The host values of an object, handed over, and the object released: [`Runtime::read`]
    /// then [`Runtime::release`] without copying the values (a result read once, at the end of
    /// its life, costs one copy from the device, not two). If the read fails, the object is
    /// left as it was; if giving its device memory back fails, it is gone as after
    /// [`Runtime::release`], and the error is returned.
    pub fn take(&mut self, id: ObjectId) -> Result<Vec<Complex64>> {
        self.read(id)?;
        self.remove(id)?
            .ok_or_else(|| Error::Internal(format!("{id} was read but holds no host copy")))
    }

    /// Replaces an object's values from the host. A device copy, now stale, is dropped (its
    /// buffers go to the free pool, or are freed).
    pub fn write(&mut self, id: ObjectId, data: Vec<Complex64>) -> Result<()> {
        let layout = self.entry(id)?.layout;
        check_len(id, &layout, data.len())?;
        let dropped = self.drop_device_copy(id);
        let (life, log) = self.life_mut(id)?;
        life.host_written(data, log)?;
        self.events
            .note(EventKind::HostWrite, Some(id), None, layout.bytes(), None);
        dropped
    }

    /// Releases an object: it is gone, and its device buffers go to the free pool (or are
    /// freed when lazy release is off).
    pub fn release(&mut self, id: ObjectId) -> Result<()> {
        let host = self.remove(id)?;
        if let Some(v) = host {
            self.host_pool.put(v);
        }
        Ok(())
    }

    /// Releases `id` and hands back its host copy, if it holds one.
    fn remove(&mut self, id: ObjectId) -> Result<Option<Vec<Complex64>>> {
        let bytes = self.entry(id)?.layout.bytes();
        let dropped = self.drop_device_copy(id);
        let host = self
            .objects
            .remove(&id)
            .and_then(|e| e.life.released(&mut self.transitions));
        self.events
            .note(EventKind::Release, Some(id), None, bytes, None);
        dropped.map(|()| host)
    }

    /// Host bytes the runtime keeps in vectors of released objects, for copies back from the
    /// device to reuse ([`Config::host_pool_bytes`] at most).
    pub fn host_pool_bytes(&self) -> usize {
        self.host_pool.bytes()
    }

    /// Every lifecycle transition the runtime's objects took, and any it refused (see
    /// [`lifecycle`](crate::lifecycle)).
    pub fn transitions(&self) -> &TransitionLog {
        &self.transitions
    }

    /// Records an event about object `id` (its bytes: its size) when the log is on; off, no
    /// lookup is made.
    #[inline]
    fn note_object(&mut self, kind: EventKind, id: ObjectId, stream: Option<usize>) {
        if self.events.is_on() {
            self.note_object_on(kind, id, stream);
        }
    }

    #[cold]
    #[inline(never)]
    fn note_object_on(&mut self, kind: EventKind, id: ObjectId, stream: Option<usize>) {
        let bytes = self.objects.get(&id).map_or(0, |e| e.layout.bytes());
        self.events.note(kind, Some(id), stream, bytes, None);
    }

    /// The event log recorded so far ([`Config::events`]; `None` when off).
    pub fn events(&self) -> Option<&EventLog> {
        self.events.log()
    }

    /// Takes the event log recorded so far ([`Config::events`]; `None` when off); recording
    /// goes on into an empty log, with queue indices going on from where they were.
    pub fn take_events(&mut self) -> Option<EventLog> {
        self.events.take()
    }

    /// Blocks until all work on all streams has completed.
    pub fn synchronize(&mut self) -> Result<()> {
        self.backend.synchronize()?;
        Ok(())
    }

    /// A snapshot of the statistics.
    pub fn stats(&self) -> Stats {
        let d = self.backend.counters();
        let c = self.counters;
        Stats {
            allocations: d.allocations,
            frees: d.frees,
            pool_reuses: c.pool_reuses,
            handovers: c.handovers,
            arena_allocations: c.arena_allocations,
            pool_slack_bytes: c.pool_slack_bytes,
            hits: c.hits,
            misses: c.misses,
            hit_rate: Stats::compute_hit_rate(c.hits, c.misses),
            evictions: c.evictions,
            writebacks: c.writebacks,
            fragmentation_evictions: c.fragmentation_evictions,
            arena_stranded_bytes: c.arena_stranded_bytes,
            arena_restarts: c.arena_restarts,
            prefetches: c.prefetches,
            prefetch_hits: c.prefetch_hits,
            prefetch_wasted: c.prefetch_wasted,
            prefetch_bytes: c.prefetch_bytes,
            async_writebacks: c.async_writebacks,
            h2d_bytes: d.h2d_bytes,
            d2h_bytes: d.d2h_bytes,
            h2d_copies: d.h2d_copies,
            d2h_copies: d.d2h_copies,
            peak_device_bytes: d.peak_device_bytes,
            flops: d.flops,
            gemm_calls: d.gemm_calls,
        }
    }
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

impl<B: Backend> Drop for Runtime<B> {
    fn drop(&mut self) {
        // Nothing can be reported from here: wait for the device, then return every buffer.
        let _ = self.backend.synchronize();
        let blocks = self
            .cache
            .drain()
            .into_iter()
            .flat_map(|(_, r)| r.blocks)
            .chain(self.pool.drain().into_iter().map(|p| p.block));
        for block in blocks {
            if let Block::Buffer(b) = block {
                let _ = self.backend.free(b);
            }
        }
        if let Some(arena) = self.arena.take() {
            let _ = self.backend.free(arena.buffer);
        }
    }
}
