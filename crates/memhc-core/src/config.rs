//! Runtime configuration: the device budget, the eviction policy, the number of streams, and
//! one switch per MemHC optimisation, so that the paper's baselines are this same code with
//! switches off (see [`Mode`]), plus the managed-memory switch of the unified memory baseline.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;
use crate::policy::PolicyKind;

/// The optimisation sets the paper compares (its Fig. 8), and the unified memory baseline, by
/// name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// "MemHC Naive": one allocation per component, every input copied in and every output
    /// copied out for every launch, everything freed after.
    Naive,
    /// "Data Reorg": as naive, but each object is one contiguous allocation.
    Reorg,
    /// "Data Reorg + Sync": packing, and GPU-only objects stay on the device until read.
    ReorgSync,
    /// "MemHC Optimal": packing, on-demand sync, duplication-aware caching and lazy release.
    Optimal,
    /// The unified memory baseline: every object is one managed allocation that stays
    /// allocated until released (the driver migrates it; the runtime never evicts, and never
    /// asks for more than the budget), with read-mostly advice on inputs, a prefetch to the
    /// device before every launch, and the host reading each result in place right after the
    /// launch that writes it, where the naive code copies it out. It needs a backend with
    /// managed memory ([`Backend::supports_managed`](crate::Backend::supports_managed)).
    ///
    /// In the statistics, managed allocations count as allocations, and the bytes the host
    /// writes into or reads from managed memory as host-to-device and device-to-host bytes.
    Unified,
}

impl Mode {
    /// The paper's four explicit modes (its Fig. 8; `all` on command lines), from the least to
    /// the most optimised. [`Mode::Unified`] is not among them: it needs managed memory.
    pub const ALL: [Mode; 4] = [Mode::Naive, Mode::Reorg, Mode::ReorgSync, Mode::Optimal];

    /// The name used on command lines and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Naive => "naive",
            Mode::Reorg => "reorg",
            Mode::ReorgSync => "reorg-sync",
            Mode::Optimal => "optimal",
            Mode::Unified => "unified",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Mode::ALL
            .into_iter()
            .chain([Mode::Unified])
            .find(|m| m.name() == s)
            .ok_or_else(|| Error::UnknownMode(s.to_owned()))
    }
}

/// Where device memory comes from, by the names `memhc-synth --alloc` uses: the three settings
/// of [`Config::handover`] and [`Config::arena`] worth comparing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Alloc {
    /// Every buffer is a driver allocation; an eviction frees the victim's buffers and the
    /// request allocates anew (the paper's Algorithm 1).
    Driver,
    /// Driver allocations, but an eviction hands the victim's buffer straight to the request
    /// that caused it when it fits.
    Handover,
    /// One driver allocation of the whole budget when the runtime starts, sub-allocated (with
    /// handover).
    Arena,
}

impl Alloc {
    /// Every setting, in the order reports list them.
    pub const ALL: [Alloc; 3] = [Alloc::Driver, Alloc::Handover, Alloc::Arena];

    /// The name used on command lines and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Alloc::Driver => "driver",
            Alloc::Handover => "handover",
            Alloc::Arena => "arena",
        }
    }

    /// The setting a configuration amounts to (an arena with or without handover is `arena`).
    pub fn of(config: &Config) -> Alloc {
        match (config.arena, config.handover) {
            (true, _) => Alloc::Arena,
            (false, true) => Alloc::Handover,
            (false, false) => Alloc::Driver,
        }
    }
}

impl fmt::Display for Alloc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Alloc {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Alloc::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| {
                Error::InvalidConfig(format!(
                    "unknown allocation mode '{s}' (known: driver, handover, arena)"
                ))
            })
    }
}

/// Prefetch and asynchronous write-back ([`Config::prefetch`]): beyond the paper, because the
/// queue is known in advance (`Runtime::set_future`).
///
/// After every launch the runtime looks `window` object uses ahead in the announced future
/// and brings in, on a copy stream of its own, the host-valid objects those uses will read,
/// while the launches already queued compute. It never exceeds the budget and evicts nothing:
/// it takes only free memory, leaving room for the outputs that the launches before the
/// object's use write, and stops at the first object that does not fit so, until the next
/// launch.
/// With prefetch on, evicting a device-only object copies it back asynchronously on the copy
/// stream: its block moves on with the copy's event (whoever reuses it waits for it), and the
/// object's host copy lands when something needs it. See `docs/prefetch.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Prefetch {
    /// How far to look ahead, in object uses (each launch's objects, in access order, as
    /// `Runtime::set_future` lists them; a meson contraction is three). At least 1.
    pub window: usize,
}

impl Prefetch {
    /// Prefetch `window` object uses ahead.
    pub fn new(window: usize) -> Self {
        Prefetch { window }
    }
}

/// How a [`Runtime`](crate::Runtime) manages device memory.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Config {
    /// Device bytes the runtime may hold (resident objects plus pooled buffers). `None`: the
    /// device's free memory when the runtime is created.
    pub budget: Option<usize>,
    /// The eviction policy.
    pub policy: PolicyKind,
    /// Seed of the random policy.
    pub seed: u64,
    /// Number of streams launches can be spread over (at least 1).
    pub streams: usize,
    /// Duplication-aware management: keep host-backed objects resident between launches, so
    /// that a repeated input is a hit (no allocation, no copy). Off: every launch copies its
    /// host-backed inputs in again and drops them after.
    pub dedup: bool,
    /// Lazy release: a released buffer goes to the free pool for reuse by an allocation of the
    /// same size. Off: it is freed at once.
    pub lazy_release: bool,
    /// Data reorganisation: each object is one contiguous device buffer with per-component
    /// views. Off: one buffer per component.
    pub packing: bool,
    /// On-demand synchronisation: an object written on the device stays there (GPU-only) until
    /// the caller reads it or eviction forces a write-back. Off: it is copied back to the host
    /// after every launch that writes it.
    pub on_demand_sync: bool,
    /// Unified memory ([`Mode::Unified`]): objects live in managed memory, which the host
    /// writes and reads in place and the device gets by prefetch; nothing is ever evicted, and
    /// an allocation beyond the budget is an error ([`Error::ManagedDoesNotFit`]). Needs a
    /// backend with managed memory, packing on and lazy release off.
    pub managed: bool,
    /// Handover: when the allocation path evicts an object to make room, the victim's buffer
    /// goes straight to the request that caused the eviction if it fits (it still counts as an
    /// eviction), instead of being freed while the request allocates anew. Off: the paper's
    /// Algorithm 1.
    pub handover: bool,
    /// Reuse tolerance, in percent: a pooled or handed-over buffer up to this much larger than
    /// a request may serve it (the excess is counted in [`Stats::pool_slack_bytes`](crate::Stats::pool_slack_bytes)).
    /// 0: exact sizes only, as the paper's free pool. At most 100.
    pub reuse_tolerance_percent: u32,
    /// Arena mode: one driver allocation of the whole budget when the runtime starts, from which
    /// every object's memory is sub-allocated (best fit, neighbours coalesced on release), so
    /// that the driver is never called again. Not with managed memory.
    pub arena: bool,
    /// Prefetch of the known future's inputs on a copy stream, and asynchronous write-back of
    /// evicted device-only objects ([`Prefetch`]). `None` (every mode's default): objects are
    /// fetched on demand and written back synchronously, as in the paper. Not with managed
    /// memory.
    pub prefetch: Option<Prefetch>,
    /// Record an event log of everything the runtime does to device memory
    /// ([`events`](crate::events), [`Runtime::take_events`](crate::Runtime::take_events)):
    /// for a timeline and an inefficiency report. Off (every mode's default), recording costs
    /// one branch per place that would record.
    pub events: bool,
    /// Host bytes of released objects' vectors kept for reuse by copies back from the device
    /// (results read, write-backs), so that such a copy lands in pages already mapped instead
    /// of faulting in new ones, and a release does not unmap its pages. 0: none kept. Default
    /// 256 MiB in every mode (it changes nothing on the device).
    pub host_pool_bytes: usize,
    /// The smallest vector the host pool keeps, in bytes (default 256: below that the pool's
    /// entry would weigh a tenth of the vector). Small vectors are worth keeping: a new one is
    /// zeroed memory the allocator took back long ago, cold on a long queue, so each copy back
    /// of a small object into a new vector costs a cache miss per line before the copy writes
    /// it. Of vectors below 1 MiB, the pool keeps 256 at most (enough for the next copies back,
    /// few enough that its lists stay in cache).
    pub host_pool_min_bytes: usize,
    /// Copies back from the device (a result read, a write-back) land in the backend's host
    /// memory ([`Backend::alloc_host`](crate::Backend::alloc_host): page-locked on a GPU) and
    /// stay there as the object's host copy, handed out without a copy
    /// ([`Runtime::take_host`](crate::Runtime::take_host)): one DMA, no staging, no page
    /// fault. Off (every mode's default): they land in vectors, through the backend's staging.
    pub pinned_results: bool,
    /// Bytes of the backend's host memory, freed by released objects, kept for the next copies
    /// back and [`Runtime::alloc_host`](crate::Runtime::alloc_host) (a new page-locked
    /// allocation pins every page: on the H100 host, 3 GB/s). Default 4 GiB.
    pub pinned_pool_bytes: usize,
    /// The first chunk of the pinned pool, bytes: new host memory of the backend
    /// ([`Runtime::alloc_host`](crate::Runtime::alloc_host), copies back with
    /// [`Config::pinned_results`]) is cut from a few large allocations instead of one each
    /// (where the backend cuts pieces: [`Backend::host_piece`](crate::Backend::host_piece)).
    /// Set it from the plan (the host bytes the run holds at once: memhc-workload's
    /// `pinned_plan_bytes`) so that one chunk serves the whole run; 0 (the default): the
    /// first chunk is [`Config::pinned_chunk_bytes`] too.
    pub pinned_reserve_bytes: usize,
    /// The pinned pool grows by chunks of this many bytes (or the buffer asked for, when it is
    /// larger). 0: no pool, each buffer its own allocation. Default 256 MiB.
    pub pinned_chunk_bytes: usize,
    /// Results announced with [`Runtime::expect_read`](crate::Runtime::expect_read) are copied
    /// back on a stream of their own as soon as the launch that writes them last is queued
    /// (the announced future, [`Runtime::set_future`](crate::Runtime::set_future), says which
    /// launch that is), so that read-backs overlap the launches after it; their device memory
    /// goes back to the pool once the copy is done. Off (every mode's default): a result is
    /// copied back when it is read. Not with managed memory.
    pub early_read_back: bool,
    /// Launches a block released to the free pool rests before the pool hands it out again
    /// while new memory still fits the budget (past the budget it serves at once, before the
    /// pool is emptied). On a GPU the block's last uses (a launch, a copy back) are likely
    /// still running for the next few launches, and a write to it would wait for them: with a
    /// rest of about the number of streams, new work lands in memory nothing is using, so
    /// uploads overlap the copies back and the launches before them. 0 (every mode's
    /// default): at once, as the paper's pool. Deterministic: it counts launches, it does not
    /// ask the device.
    pub reuse_delay: usize,
}

/// [`Config::pinned_pool_bytes`] by default.
pub const DEFAULT_PINNED_POOL_BYTES: usize = 4 << 30;

/// [`Config::pinned_chunk_bytes`] by default.
pub const DEFAULT_PINNED_CHUNK_BYTES: usize = 256 << 20;

/// [`Config::host_pool_bytes`] by default.
pub const DEFAULT_HOST_POOL_BYTES: usize = 256 << 20;

/// [`Config::host_pool_min_bytes`] by default.
pub const DEFAULT_HOST_POOL_MIN_BYTES: usize = 256;

impl Default for Config {
    /// All optimisations on, LRU, 4 streams, the whole device.
    fn default() -> Self {
        Config::for_mode(Mode::Optimal)
    }
}

impl Config {
    /// The switches of one of the modes; LRU, 4 streams, the whole device.
    ///
    /// [`Mode::Unified`] keeps objects allocated between launches (dedup: managed memory is
    /// migrated by the driver, never evicted), packs them, frees released ones at once, and
    /// syncs every result to the host right after the launch that writes it, as naive does.
    ///
    /// [`Mode::Optimal`] hands evicted buffers over ([`Config::handover`]); the paper's
    /// baselines do not. No mode uses an arena or a reuse tolerance by default.
    pub fn for_mode(mode: Mode) -> Self {
        let (dedup, lazy_release, packing, on_demand_sync) = match mode {
            Mode::Naive => (false, false, false, false),
            Mode::Reorg => (false, false, true, false),
            Mode::ReorgSync => (false, false, true, true),
            Mode::Optimal => (true, true, true, true),
            Mode::Unified => (true, false, true, false),
        };
        Config {
            budget: None,
            policy: PolicyKind::Lru,
            seed: 0,
            streams: 4,
            dedup,
            lazy_release,
            packing,
            on_demand_sync,
            managed: mode == Mode::Unified,
            handover: mode == Mode::Optimal,
            reuse_tolerance_percent: 0,
            arena: false,
            prefetch: None,
            events: false,
            host_pool_bytes: DEFAULT_HOST_POOL_BYTES,
            host_pool_min_bytes: DEFAULT_HOST_POOL_MIN_BYTES,
            pinned_results: false,
            pinned_pool_bytes: DEFAULT_PINNED_POOL_BYTES,
            pinned_reserve_bytes: 0,
            pinned_chunk_bytes: DEFAULT_PINNED_CHUNK_BYTES,
            early_read_back: false,
            reuse_delay: 0,
        }
    }

    /// The same configuration with the direct data path on or off: copies back land in the
    /// backend's host memory ([`Config::pinned_results`]), announced results are read back
    /// as soon as they are written ([`Config::early_read_back`]), and released blocks rest as
    /// many launches as there are streams ([`Config::reuse_delay`]; set the streams first).
    pub fn with_direct_host(mut self, on: bool) -> Self {
        self.pinned_results = on;
        self.early_read_back = on;
        self.reuse_delay = if on { self.streams } else { 0 };
        self
    }

    /// The same configuration with the pinned pool's first chunk `reserve` bytes (the plan's)
    /// and later chunks `chunk` bytes ([`Config::pinned_reserve_bytes`],
    /// [`Config::pinned_chunk_bytes`]); `chunk` 0 turns the pool off.
    pub fn with_pinned_pool(mut self, reserve: usize, chunk: usize) -> Self {
        self.pinned_reserve_bytes = reserve;
        self.pinned_chunk_bytes = chunk;
        self
    }

    /// The same configuration keeping up to `bytes` of released host vectors of at least
    /// `min_bytes` each for reuse ([`Config::host_pool_bytes`]); `bytes` 0 keeps none.
    pub fn with_host_pool(mut self, bytes: usize, min_bytes: usize) -> Self {
        self.host_pool_bytes = bytes;
        self.host_pool_min_bytes = min_bytes;
        self
    }

    /// The same configuration recording an event log, or not.
    pub fn with_events(mut self, on: bool) -> Self {
        self.events = on;
        self
    }

    /// The same configuration with prefetch (and asynchronous write-back) `window` object uses
    /// ahead, or without (`None`).
    pub fn with_prefetch(mut self, window: Option<usize>) -> Self {
        self.prefetch = window.map(Prefetch::new);
        self
    }

    /// The same configuration getting its memory as `alloc` says.
    pub fn with_alloc(mut self, alloc: Alloc) -> Self {
        self.handover = alloc != Alloc::Driver;
        self.arena = alloc == Alloc::Arena;
        self
    }

    /// The largest buffer that may serve a request of `bytes` ([`Config::reuse_tolerance_percent`]).
    pub fn reuse_limit(&self, bytes: usize) -> usize {
        let extra = bytes as u128 * u128::from(self.reuse_tolerance_percent) / 100;
        bytes.saturating_add(usize::try_from(extra).unwrap_or(usize::MAX))
    }

    /// The same configuration with a device budget in bytes.
    pub fn with_budget(mut self, bytes: usize) -> Self {
        self.budget = Some(bytes);
        self
    }

    /// The same configuration with another policy.
    pub fn with_policy(mut self, policy: PolicyKind) -> Self {
        self.policy = policy;
        self
    }

    /// The same configuration with another number of streams.
    pub fn with_streams(mut self, streams: usize) -> Self {
        self.streams = streams;
        self
    }

    /// The same configuration with another seed for the random policy.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Checks the values that have a range.
    pub fn validate(&self) -> Result<(), Error> {
        if self.streams == 0 {
            return Err(Error::InvalidConfig("streams must be at least 1".into()));
        }
        if self.budget == Some(0) {
            return Err(Error::InvalidConfig(
                "the device budget must be positive".into(),
            ));
        }
        if self.managed && (!self.packing || self.lazy_release) {
            return Err(Error::InvalidConfig(
                "managed memory needs packing on and lazy release off".into(),
            ));
        }
        if self.managed && self.arena {
            return Err(Error::InvalidConfig(
                "managed memory is not sub-allocated: the arena needs managed memory off".into(),
            ));
        }
        if self.managed && self.prefetch.is_some() {
            return Err(Error::InvalidConfig(
                "managed memory is migrated by the driver: prefetch needs managed memory off"
                    .into(),
            ));
        }
        if self.managed && (self.early_read_back || self.pinned_results) {
            return Err(Error::InvalidConfig(
                "managed memory is read in place: early read-back and pinned results need \
                 managed memory off"
                    .into(),
            ));
        }
        if self.prefetch.is_some_and(|p| p.window == 0) {
            return Err(Error::InvalidConfig(
                "a prefetch window must be at least one object use".into(),
            ));
        }
        if self.reuse_tolerance_percent > 100 {
            return Err(Error::InvalidConfig(format!(
                "a reuse tolerance of {}% is more than 100%",
                self.reuse_tolerance_percent
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_set_switches() {
        for m in Mode::ALL.into_iter().chain([Mode::Unified]) {
            assert_eq!(m.name().parse::<Mode>().unwrap(), m);
        }
        assert!(
            !Mode::ALL.contains(&Mode::Unified),
            "`all` means the explicit modes"
        );
        assert!(matches!("fast".parse::<Mode>(), Err(Error::UnknownMode(_))));
        let naive = Config::for_mode(Mode::Naive);
        assert!(!naive.dedup && !naive.lazy_release && !naive.packing && !naive.on_demand_sync);
        let rs = Config::for_mode(Mode::ReorgSync);
        assert!(rs.packing && rs.on_demand_sync && !rs.dedup && !rs.lazy_release);
        let opt = Config::default();
        assert!(opt.dedup && opt.lazy_release && opt.packing && opt.on_demand_sync);
        assert!(Mode::ALL.iter().all(|&m| !Config::for_mode(m).managed));
        let uni = Config::for_mode(Mode::Unified);
        assert!(uni.managed && uni.dedup && uni.packing);
        assert!(!uni.lazy_release && !uni.on_demand_sync);
    }

    #[test]
    fn ranges_are_checked() {
        assert!(Config::default().with_streams(0).validate().is_err());
        assert!(Config::default().with_budget(0).validate().is_err());
        assert!(Config::default().validate().is_ok());
        assert!(Config::for_mode(Mode::Unified).validate().is_ok());
        let pooled = Config {
            lazy_release: true,
            ..Config::for_mode(Mode::Unified)
        };
        assert!(matches!(pooled.validate(), Err(Error::InvalidConfig(_))));
        let unpacked = Config {
            packing: false,
            ..Config::for_mode(Mode::Unified)
        };
        assert!(unpacked.validate().is_err());
        let arena = Config::for_mode(Mode::Unified).with_alloc(Alloc::Arena);
        assert!(matches!(arena.validate(), Err(Error::InvalidConfig(_))));
        let loose = Config {
            reuse_tolerance_percent: 101,
            ..Config::default()
        };
        assert!(loose.validate().is_err());
        assert!(Config::default().with_prefetch(Some(0)).validate().is_err());
        assert!(Config::default().with_prefetch(Some(3)).validate().is_ok());
        let managed = Config::for_mode(Mode::Unified).with_prefetch(Some(3));
        assert!(matches!(managed.validate(), Err(Error::InvalidConfig(_))));
        assert!(
            Mode::ALL
                .iter()
                .chain([&Mode::Unified])
                .all(|&m| Config::for_mode(m).prefetch.is_none())
        );
    }

    #[test]
    fn allocation_settings() {
        for a in Alloc::ALL {
            assert_eq!(a.name().parse::<Alloc>().unwrap(), a);
            assert_eq!(Alloc::of(&Config::default().with_alloc(a)), a);
        }
        assert!("slab".parse::<Alloc>().is_err());
        assert!(Config::default().handover && !Config::default().arena);
        assert!(
            Mode::ALL[..3]
                .iter()
                .all(|&m| !Config::for_mode(m).handover)
        );
        let c = Config {
            reuse_tolerance_percent: 25,
            ..Config::default()
        };
        assert_eq!(
            (c.reuse_limit(100), Config::default().reuse_limit(100)),
            (125, 100)
        );
    }
}
