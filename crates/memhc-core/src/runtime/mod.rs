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
mod copies;
mod host;
mod launch;
mod managed;
mod memory;
mod objects;
mod prefetch;
mod space;
mod work;
mod writeback;

use crate::arena::{Arena, SubAllocator};
use crate::backend::instrumented::Instrumented;
use crate::backend::{Backend, DeviceMemory};
use crate::block::Block;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::events::{EventKind, EventLog, Events};
use crate::free_pool::FreePool;
use crate::host_pool::HostPools;
use crate::lifecycle::{Left, Lifecycle, TransitionLog};
use crate::lookahead::Lookahead;
use crate::object::{Layout, ObjectId, ObjectKind, State};
use crate::policy::EvictionPolicy;
use crate::stats::{ArenaUsage, Stats};

pub use audit::AuditError;
use launch::Scratch;
use objects::{Entry, Objects};
use space::Space;
pub use work::{Components, Launch};

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
    early_read_backs: u64,
    /// Launches begun (the pool's clock for [`Config::reuse_delay`]).
    launches: u64,
}

/// The MemHC runtime on backend `B`. See the [module documentation](self).
///
/// Its parts, by what each owns: the device (`backend`, `streams`), the objects (`objects`:
/// one record per object, holding its host copy, device copy and write-back), the device
/// memory no object owns (`space`: budget, free pool, arena), the eviction order (`policy`,
/// with `pinned`, the objects a launch in progress protects), the future (`lookahead`), the
/// host memory kept for copies back (`host_pool`), and what is counted and logged
/// (`counters`, `events`).
pub struct Runtime<B: Backend> {
    backend: Instrumented<B>,
    /// The launch streams, then (prefetch on) the copy stream, then (early read-back on) the
    /// read-back stream.
    streams: Vec<B::Stream>,
    config: Config,
    objects: Objects<B>,
    space: Space<B>,
    policy: Box<dyn EvictionPolicy>,
    /// Objects a launch in progress is using: never evicted. A launch uses a handful of
    /// objects, so a list is the fastest set.
    pinned: Vec<ObjectId>,
    counters: CacheCounters,
    /// Lists launches and prefetches reuse.
    scratch: Scratch<B>,
    /// Prefetch on: the announced future and how far the run has come.
    lookahead: Lookahead,
    /// The event log's recorder ([`Config::events`]), or nothing.
    events: Events,
    /// Host vectors and host memory of released objects, for copies back to land in
    /// ([`Config::host_pool_bytes`], [`Config::pinned_pool_bytes`]).
    host_pool: HostPools<B>,
}

impl<B: Backend> std::fmt::Debug for Runtime<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("backend", &self.backend.name())
            .field("config", &self.config)
            .field("budget", &self.space.budget)
            .field("objects", &self.objects.len())
            .field("resident_bytes", &self.space.resident_bytes())
            .field("used", &self.space.used)
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
        // Prefetch on: one more stream, for copies; early read-back on: one for read-backs.
        let count = config.streams
            + usize::from(config.prefetch.is_some())
            + usize::from(config.early_read_back);
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
            objects: Objects::default(),
            space: Space {
                budget,
                used: 0,
                pool: FreePool::default(),
                arena,
            },
            policy,
            pinned: Vec::new(),
            counters: CacheCounters::default(),
            scratch: Scratch::default(),
            lookahead: Lookahead::default(),
            events,
            host_pool: HostPools::new(&config),
            config,
        })
    }

    /// The configuration the runtime was built with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The device budget in bytes.
    pub fn budget(&self) -> usize {
        self.space.budget
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
        self.space.used
    }

    /// In arena mode, how the arena is used now: its size, free bytes and largest free piece.
    pub fn arena_usage(&self) -> Option<ArenaUsage> {
        self.space.arena_usage()
    }

    /// Device bytes held by resident objects.
    pub fn resident_bytes(&self) -> usize {
        self.space.resident_bytes()
    }

    /// Device bytes held by the free pool.
    pub fn pooled_bytes(&self) -> usize {
        self.space.pool.bytes()
    }

    /// The eviction policy's name.
    pub fn policy_name(&self) -> &'static str {
        self.policy.name()
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

    /// Makes the next object: its record, in the state `life` starts it in, room for it in the
    /// policy's tables (so that the launch that makes it resident grows none), and its event.
    fn make(
        &mut self,
        event: EventKind,
        kind: ObjectKind,
        layout: Layout,
        life: impl FnOnce(&mut TransitionLog) -> Lifecycle<B>,
    ) -> ObjectId {
        // A tiled layout only where the copies and views can keep it (see `Layout`).
        let tileable = self.config.packing && !self.config.managed && self.backend.supports_tiles();
        let layout = if tileable { layout } else { layout.untiled() };
        let id = self.objects.make(kind, layout, life);
        self.policy.on_register(id);
        self.events
            .note(event, Some(id), None, layout.bytes(), None);
        id
    }

    fn entry(&self, id: ObjectId) -> Result<&Entry<B>> {
        self.objects.get(id)
    }

    /// An object's lifecycle, with the log its transitions are counted in.
    fn life_mut(&mut self, id: ObjectId) -> Result<(&mut Lifecycle<B>, &mut TransitionLog)> {
        self.objects.life_mut(id)
    }

    /// The layout of an object, as the runtime keeps it: tiled on the device only where the
    /// caller asked for it and the runtime can keep it (see [`Layout`]).
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
        self.objects.is_resident(id)
    }

    /// Number of live objects.
    pub fn object_count(&self) -> usize {
        self.objects.len()
    }

    /// Announces a vector of independent contractions about to run, so that the policy can
    /// protect its members that are resident (pre-protected LRU). Their records, and what the
    /// policy keeps on them, are touched in the same pass ([`Runtime::touch_records`]).
    pub fn begin_vector(&mut self, members: &[ObjectId]) -> Result<()> {
        let mut resident = Vec::with_capacity(members.len());
        let mut seen = self.policy.touch(members);
        for &id in members {
            let e = self.entry(id)?;
            seen = seen.wrapping_add(e.touch() as u64);
            if e.life.is_resident() {
                resident.push(id);
            }
        }
        std::hint::black_box(seen);
        self.policy.begin_vector(&resident);
        Ok(())
    }

    /// A hint that `ids` will be used or released soon: touches, in the CPU's caches, what that
    /// will read first (each object's record, the first element of its host copy, and what the
    /// policy keeps on it), all in one pass, so that their cache misses overlap instead of each
    /// waiting on the one before. Nothing is brought to the device: this is not a prefetch
    /// (that is [`Config::prefetch`](crate::Config::prefetch)), and was called `warm` before
    /// issue 28. On a long queue whose objects are drawn from its whole history, those records
    /// are cold, and a runner that knows what a vector will write and release can touch them
    /// while it announces the vector. Changes nothing; ids unknown or released are skipped.
    pub fn touch_records(&self, ids: &[ObjectId]) {
        let mut seen = self.policy.touch(ids);
        for id in ids {
            if let Some(e) = self.objects.find(*id) {
                seen = seen.wrapping_add(e.touch() as u64);
            }
        }
        // Keeps the reads: nothing else uses what they found.
        std::hint::black_box(seen);
    }

    /// Gives the policy the sequence of object uses to come: each launch's objects, in the
    /// order of its access list, launch after launch. Objects must exist already (create the
    /// intermediates up front). The `belady` policy uses it, and prefetch
    /// ([`Config::prefetch`]).
    pub fn set_future(&mut self, accesses: &[ObjectId]) -> Result<()> {
        if let Some(&bad) = accesses.iter().find(|&&id| !self.objects.contains(id)) {
            return Err(Error::UnknownObject(bad));
        }
        self.policy.set_future(accesses);
        if self.config.prefetch.is_some() || self.config.early_read_back {
            self.lookahead.set(accesses);
        }
        Ok(())
    }

    /// Host bytes the runtime keeps in vectors and page-locked buffers of released objects (and
    /// buffers page-locked ahead for announced results), for copies back from the device to
    /// reuse ([`Config::host_pool_bytes`] and [`Config::pinned_pool_bytes`] at most).
    pub fn host_pool_bytes(&self) -> usize {
        self.host_pool.bytes()
    }

    /// Every lifecycle transition the runtime's objects took, and any it refused (see
    /// [`lifecycle`](crate::lifecycle)).
    pub fn transitions(&self) -> &TransitionLog {
        &self.objects.transitions
    }

    /// The index of the copy stream (after the launch streams), when prefetch is on.
    fn copy_stream(&self) -> Option<usize> {
        self.config.prefetch.map(|_| self.config.streams)
    }

    /// The index of the read-back stream (after the copy stream, if any), when early read-back
    /// is on.
    fn read_back_stream(&self) -> Option<usize> {
        self.config
            .early_read_back
            .then(|| self.config.streams + usize::from(self.config.prefetch.is_some()))
    }

    /// `id` leaves the device: if a prefetch brought it in and nothing used it, that prefetch
    /// was wasted.
    fn forget_prefetch(&mut self, id: ObjectId) {
        if self.objects.unmark_prefetched(id) {
            self.counters.prefetch_wasted += 1;
        }
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
        let bytes = self.objects.find(id).map_or(0, |e| e.layout.bytes());
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
            early_read_backs: c.early_read_backs,
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

impl<B: Backend> Drop for Runtime<B> {
    fn drop(&mut self) {
        // Nothing can be reported from here: wait for the device, then return every buffer.
        let _ = self.backend.synchronize();
        let entries = self.objects.drain();
        let log = &mut self.objects.transitions;
        let resident: Vec<_> = entries
            .into_iter()
            .filter_map(|(_, e)| match e.life.released(log).1 {
                Left::Device(d) => Some(d),
                Left::Nothing | Left::WriteBack(_) => None,
            })
            .collect();
        let blocks = resident
            .into_iter()
            .flat_map(|d| d.blocks)
            .chain(self.space.pool.drain().into_iter().map(|p| p.block));
        for block in blocks {
            if let Block::Buffer(b) = block {
                let _ = self.backend.free(b);
            }
        }
        if let Some(arena) = self.space.arena.take() {
            let _ = self.backend.free(arena.buffer);
        }
    }
}
