//! A runtime described by names and numbers: what a C struct or Python keywords give.

use std::str::FromStr;

use memhc_core::{Config, Mode, PolicyKind};

use crate::error::{EmbedError, Result};

/// The backend a session runs on, by the names `memhc-synth --backend` uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendName {
    /// The host reference backend: the CPU plays a device of `budget` bytes.
    Host,
    /// The NVIDIA backend (feature `cuda`; CUDA is loaded at run time).
    Cuda,
    /// The AMD backend (feature `rocm`; HIP and rocBLAS are loaded at run time).
    Rocm,
}

impl BackendName {
    /// `host`, `cuda` or `rocm`.
    pub fn name(self) -> &'static str {
        match self {
            BackendName::Host => "host",
            BackendName::Cuda => "cuda",
            BackendName::Rocm => "rocm",
        }
    }

    /// Whether this build has the backend compiled in (it may still fail to open at run time
    /// without a driver or a device).
    pub fn compiled(self) -> bool {
        match self {
            BackendName::Host => true,
            BackendName::Cuda => cfg!(feature = "cuda"),
            BackendName::Rocm => cfg!(feature = "rocm"),
        }
    }
}

impl FromStr for BackendName {
    type Err = EmbedError;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "host" => Ok(BackendName::Host),
            "cuda" => Ok(BackendName::Cuda),
            "rocm" => Ok(BackendName::Rocm),
            other => Err(EmbedError::UnknownName(format!(
                "unknown backend '{other}' (known: host, cuda, rocm)"
            ))),
        }
    }
}

/// The host backend's device size when no budget is given: 1 GiB.
pub const DEFAULT_HOST_BUDGET: usize = 1 << 30;

/// Everything needed to open a [`Session`](crate::Session).
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Which backend.
    pub backend: BackendName,
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
}

impl Default for Options {
    /// The host backend with [`DEFAULT_HOST_BUDGET`], LRU, the optimal mode, 4 streams.
    fn default() -> Self {
        Options {
            backend: BackendName::Host,
            budget: None,
            policy: PolicyKind::Lru,
            mode: Mode::Optimal,
            streams: 4,
            seed: 0,
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

    /// Options from names, each `None` for its default: a backend (`host`, `cuda`, `rocm`), a
    /// budget (`"8G"`, see [`parse_bytes`]), a policy (`lru`, `pp-lru`, `random`, `mru`,
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
            o.budget = Some(parse_bytes(b)?);
        }
        if let Some(p) = policy {
            o.policy = p
                .parse::<PolicyKind>()
                .map_err(|e| EmbedError::UnknownName(memhc_core::Error::from(e).to_string()))?;
        }
        if let Some(m) = mode {
            o.mode = m
                .parse::<Mode>()
                .map_err(|e| EmbedError::UnknownName(e.to_string()))?;
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
        let mut c = Config::for_mode(self.mode)
            .with_policy(self.policy)
            .with_streams(self.streams)
            .with_seed(self.seed);
        c.budget = self.budget;
        if self.backend == BackendName::Host {
            c.budget = Some(self.budget.unwrap_or(DEFAULT_HOST_BUDGET));
        }
        c.validate()?;
        Ok(c)
    }
}

/// Parses a byte count: digits with an optional `K`, `M`, `G` or `T` suffix (powers of 1024),
/// optionally followed by `B` or `iB` (`"8G"`, `"512MiB"`, `"1048576"`). Zero is refused.
pub fn parse_bytes(s: &str) -> Result<usize> {
    let bad = || {
        EmbedError::UnknownName(format!(
            "'{s}' is not a positive number of bytes (digits, then K, M, G or T)"
        ))
    };
    let t = s.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(bad()),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1usize.checked_shl(shift)?))
        .filter(|&n| n > 0)
        .ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn byte_counts() {
        assert_eq!(parse_bytes("8G").ok(), Some(8 << 30));
        assert_eq!(parse_bytes("512MiB").ok(), Some(512 << 20));
        assert_eq!(parse_bytes(" 4k ").ok(), Some(4096));
        assert_eq!(parse_bytes("100").ok(), Some(100));
        assert_eq!(parse_bytes("100B").ok(), Some(100));
        for bad in ["", "0", "G", "-1", "1.5G", "8X", "99999999999999999999T"] {
            let e = parse_bytes(bad).err().map(|e| e.kind());
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
    }
}
