//! A runtime described by names and numbers: what a C struct or Python keywords give.

use memhc_core::{Config, Mode, PolicyKind};
use memhc_select::{HostMemoryKind, names, parse_bytes_usize};

use crate::error::{EmbedError, Result};

pub use memhc_select::{BackendChoice, DEFAULT_HOST_BUDGET};

/// Everything needed to open a [`Session`](crate::Session).
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Which backend.
    pub backend: BackendChoice,
    /// Device bytes the runtime may hold. `None`: the device's free memory on a GPU, and
    /// [`DEFAULT_HOST_BUDGET`] on the host backend (whose "device" is that many bytes of host
    /// memory, taken as objects need it).
    pub budget: Option<usize>,
    /// The eviction policy.
    pub policy: PolicyKind,
    /// The optimisation set ([`Mode::Optimal`]: all of MemHC).
    pub mode: Mode,
    /// Streams contractions are spread over (at least 1).
    pub streams: usize,
    /// Seed of the random policy.
    pub seed: u64,
    /// Where results land on the host: [`HostMemoryKind::Pageable`] (vectors) or
    /// [`HostMemoryKind::Pinned`] (the backend's page-locked memory, which
    /// [`Session::take_host`](crate::Session::take_host) hands out without a copy; the
    /// runtime's direct data path, `Config::with_direct_host`).
    /// Buffers from [`Session::alloc_host`](crate::Session::alloc_host) are the backend's
    /// host memory either way. Not with [`Mode::Unified`].
    pub host_memory: HostMemoryKind,
    /// Prefetch: `None` (off), or a lookahead window in object uses (at least 1; a contraction
    /// is three) within which the runtime issues copies ahead of their use, where it knows
    /// the future (a correlator run, [`CorrRun::run`](crate::CorrRun::run)). With
    /// [`HostMemoryKind::Pinned`], the fast data path on a GPU. Not with [`Mode::Unified`].
    pub prefetch: Option<usize>,
}

impl Default for Options {
    /// The host backend with [`DEFAULT_HOST_BUDGET`], LRU, the optimal mode, 4 streams.
    fn default() -> Self {
        Options {
            backend: BackendChoice::Host,
            budget: None,
            policy: PolicyKind::Lru,
            mode: Mode::Optimal,
            streams: 4,
            seed: 0,
            host_memory: HostMemoryKind::Pageable,
            prefetch: None,
        }
    }
}

impl Options {
    /// The host backend with a budget of `bytes`, otherwise the defaults.
    pub fn host(bytes: usize) -> Self {
        Options {
            budget: Some(bytes),
            ..Options::default()
        }
    }

    /// The same options with results in `host_memory` (a name: `pageable` or `pinned`,
    /// read by `memhc-select`; `None` keeps the current one).
    pub fn with_host_memory(mut self, host_memory: Option<&str>) -> Result<Self> {
        if let Some(name) = host_memory {
            self.host_memory = names::host_memory(name)?;
        }
        Ok(self)
    }

    /// The same options with prefetch `window` (`None`: off; a window must be at least 1).
    pub fn with_prefetch(mut self, window: Option<usize>) -> Result<Self> {
        if window == Some(0) {
            return Err(EmbedError::InvalidArgument(
                "prefetch window 0: at least 1 object use, or none (off)".into(),
            ));
        }
        self.prefetch = window;
        Ok(self)
    }

    /// Options from names, each `None` for its default: a backend (`host`, `cuda`, `rocm`), a
    /// budget (`"8G"`, `"512MiB"`: `memhc_select::bytes`' grammar, powers of 1024), a policy (`lru`, `pp-lru`, `random`, `mru`,
    /// `car`, `clock-pro`, `belady`) and a mode (`naive`, `reorg`, `reorg-sync`, `optimal`,
    /// `unified`).
    pub fn from_names(
        backend: Option<&str>,
        budget: Option<&str>,
        policy: Option<&str>,
        mode: Option<&str>,
    ) -> Result<Self> {
        let mut o = Options::default();
        if let Some(b) = backend {
            o.backend = b.parse()?;
        }
        if let Some(b) = budget {
            o.budget = Some(parse_bytes_usize(b)?);
        }
        if let Some(p) = policy {
            o.policy = names::policy(p)?;
        }
        if let Some(m) = mode {
            o.mode = names::mode(m)?;
        }
        Ok(o)
    }

    /// The runtime configuration these options describe (validated).
    ///
    /// More than [`hadron::admission::MAX_STREAMS`] streams is
    /// [`ErrorKind::InvalidArgument`](crate::ErrorKind): the host backend runs a thread per
    /// stream.
    pub fn config(&self) -> Result<Config> {
        if self.streams > hadron::admission::MAX_STREAMS {
            return Err(EmbedError::InvalidArgument(format!(
                "{} streams: at most {}",
                self.streams,
                hadron::admission::MAX_STREAMS
            )));
        }
        if self.host_memory.is_pinned() && self.mode == Mode::Unified {
            return Err(EmbedError::InvalidArgument(
                "pinned host memory does not apply to the unified mode (managed memory is \
                 read in place)"
                    .into(),
            ));
        }
        let mut c = Config::for_mode(self.mode)
            .with_policy(self.policy)
            .with_streams(self.streams)
            .with_seed(self.seed);
        if self.host_memory.is_pinned() {
            c = c.with_direct_host(true);
        }
        c = c.with_prefetch(self.prefetch);
        c.budget = self.budget;
        if self.backend == BackendChoice::Host {
            c.budget = Some(self.budget.unwrap_or(DEFAULT_HOST_BUDGET));
        }
        c.validate()?;
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn byte_counts() {
        let budget = |b| Options::from_names(None, Some(b), None, None).map(|o| o.budget);
        assert_eq!(budget("8G").ok(), Some(Some(8 << 30)));
        assert_eq!(budget("8GiB").ok(), Some(Some(8 << 30)));
        assert_eq!(budget("512MiB").ok(), Some(Some(512 << 20)));
        assert_eq!(budget(" 4k ").ok(), Some(Some(4096)));
        assert_eq!(budget("100").ok(), Some(Some(100)));
        assert_eq!(budget("100B").ok(), Some(Some(100)));
        for bad in ["", "0", "G", "-1", "1.5G", "8X", "99999999999999999999T"] {
            let e = budget(bad).err().map(|e| e.kind());
            assert_eq!(e, Some(ErrorKind::UnknownName), "{bad}");
        }
    }

    #[test]
    fn names() {
        let o = Options::from_names(Some("host"), Some("8G"), Some("belady"), Some("naive"))
            .ok()
            .unwrap_or_default();
        assert_eq!(o.budget, Some(8 << 30));
        assert_eq!((o.policy, o.mode), (PolicyKind::Belady, Mode::Naive));
        for (b, p, m) in [
            (Some("tpu"), None, None),
            (Some("hip"), None, None),
            (None, Some("fifo"), None),
            (None, None, Some("fast")),
        ] {
            let e = Options::from_names(b, None, p, m).err().map(|e| e.kind());
            assert_eq!(e, Some(ErrorKind::UnknownName));
        }
        let zero = Options {
            streams: 0,
            ..Options::default()
        };
        assert_eq!(
            zero.config().err().map(|e| e.kind()),
            Some(ErrorKind::InvalidArgument)
        );
        assert_eq!(
            Options::default().config().ok().and_then(|c| c.budget),
            Some(DEFAULT_HOST_BUDGET)
        );
        let pinned = Options::default().with_host_memory(Some("pinned"));
        let config = pinned.as_ref().ok().and_then(|o| o.config().ok());
        assert!(config.is_some_and(|c| c.pinned_results && c.early_read_back));
        assert!(
            Options::default()
                .config()
                .is_ok_and(|c| !c.pinned_results && !c.early_read_back)
        );
        let bad = Options::default().with_host_memory(Some("locked"));
        assert_eq!(bad.err().map(|e| e.kind()), Some(ErrorKind::UnknownName));
        let unified = Options {
            mode: Mode::Unified,
            host_memory: HostMemoryKind::Pinned,
            ..Options::default()
        };
        assert_eq!(
            unified.config().err().map(|e| e.kind()),
            Some(ErrorKind::InvalidArgument)
        );
    }

    #[test]
    fn prefetch() {
        let on = Options::default().with_prefetch(Some(12));
        let config = on.as_ref().ok().and_then(|o| o.config().ok());
        assert!(config.is_some_and(|c| c.prefetch.is_some()));
        assert!(
            Options::default()
                .config()
                .is_ok_and(|c| c.prefetch.is_none())
        );
        let zero = Options::default().with_prefetch(Some(0));
        assert_eq!(
            zero.err().map(|e| e.kind()),
            Some(ErrorKind::InvalidArgument)
        );
        let unified = Options {
            mode: Mode::Unified,
            prefetch: Some(6),
            ..Options::default()
        };
        assert_eq!(
            unified.config().err().map(|e| e.kind()),
            Some(ErrorKind::InvalidArgument)
        );
    }
}
