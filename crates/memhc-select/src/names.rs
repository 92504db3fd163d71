//! Policies, modes and allocation settings by name, one or a comma-separated list.
//!
//! Each name belongs to the type it names (`PolicyKind::name`, `Mode::name`, `Alloc::name`
//! in the runtime's crates, which say which names exist); this module reads the lists command
//! lines take: names separated by commas, spaces around each ignored, or `all`.
//!
//! * policies: `lru`, `pp-lru`, `random`, `mru`, `car`, `clock-pro`, `belady`; `all` is every
//!   one ([`PolicyKind::ALL`]);
//! * modes: `naive`, `reorg`, `reorg-sync`, `optimal`, `unified`; `all` is the paper's four
//!   explicit ones ([`Mode::ALL`], without `unified`);
//! * allocation settings: `driver`, `handover`, `arena`; `all` is the three ([`Alloc::ALL`]);
//! * where node data and results live on the host ([`HostMemoryKind`]): `pageable` or `pinned`
//!   (`memhc-synth --host-memory`, `memhc run --host-memory`, the embedding layer's options);
//! * prefetch settings ([`prefetches`]): `off`, or a lookahead window of at least one object
//!   use (`memhc-synth --prefetch`, `memhc run --prefetch`);
//! * how host threads wait for a GPU ([`host_wait`]): `auto`, `spin`, `yield`, `block`, read
//!   from the environment variable [`HOST_WAIT_VAR`] when a GPU backend is opened by name;
//! * how a GPU computes a GEMM of one complex product ([`complex_gemm`]): `standard`, `gauss`,
//!   read from [`COMPLEX_GEMM_VAR`] likewise;
//! * how a GPU issues a tiled copy from or into page-locked memory ([`tiled_copies`]):
//!   `component`, `column`, read from [`TILED_VAR`] likewise (the model backend too).

use std::str::FromStr;

use memhc_core::{Alloc, Mode, PolicyKind};
use memhc_gpu::{ComplexGemm, HostWait, TiledCopies};

use crate::error::{Result, SelectError};

/// One eviction policy by name.
pub fn policy(name: &str) -> Result<PolicyKind> {
    one(name)
}

/// One mode by name.
pub fn mode(name: &str) -> Result<Mode> {
    one(name)
}

/// One allocation setting by name.
pub fn alloc(name: &str) -> Result<Alloc> {
    one(name)
}

/// The policies of a list, or of `all`.
pub fn policies(list: &str) -> Result<Vec<PolicyKind>> {
    many(list, &PolicyKind::ALL)
}

/// The modes of a list, or of `all` (naive, reorg, reorg-sync, optimal).
pub fn modes(list: &str) -> Result<Vec<Mode>> {
    many(list, &Mode::ALL)
}

/// The allocation settings of a list, or of `all`.
pub fn allocs(list: &str) -> Result<Vec<Alloc>> {
    many(list, &Alloc::ALL)
}

/// Where node data and results live on the host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HostMemoryKind {
    /// Vectors in ordinary memory: on a GPU every copy is staged through page-locked buffers
    /// and results are read at the end.
    #[default]
    Pageable,
    /// The backend's host memory (page-locked on a GPU): node data filled in place and
    /// uploaded in one DMA, results read back into it as soon as their last writer is queued
    /// (`Config::with_direct_host`).
    Pinned,
}

impl HostMemoryKind {
    /// Both, in the order the help lists them.
    pub const ALL: [HostMemoryKind; 2] = [HostMemoryKind::Pageable, HostMemoryKind::Pinned];

    /// The name: `pageable` or `pinned`.
    pub fn name(self) -> &'static str {
        match self {
            HostMemoryKind::Pageable => "pageable",
            HostMemoryKind::Pinned => "pinned",
        }
    }

    /// Whether it is [`HostMemoryKind::Pinned`].
    pub fn is_pinned(self) -> bool {
        self == HostMemoryKind::Pinned
    }
}

impl std::fmt::Display for HostMemoryKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where node data and results live on the host, by name: `pageable` or `pinned` (spaces
/// around it ignored).
pub fn host_memory(name: &str) -> Result<HostMemoryKind> {
    let name = name.trim();
    HostMemoryKind::ALL
        .into_iter()
        .find(|k| k.name() == name)
        .ok_or_else(|| {
            SelectError::UnknownName(format!("unknown host memory '{name}' (pageable or pinned)"))
        })
}

/// Prefetch settings, a comma-separated list: `off` (`None`) or a lookahead window in object
/// uses of at least 1 (`Some(window)`; a meson contraction is three uses), spaces around each
/// ignored.
pub fn prefetches(list: &str) -> Result<Vec<Option<usize>>> {
    list.split(',')
        .map(|p| match p.trim() {
            "off" => Ok(None),
            w => match w.parse::<usize>() {
                Ok(n) if n > 0 => Ok(Some(n)),
                _ => Err(SelectError::UnknownName(format!(
                    "'{w}': a prefetch window of at least 1 object use, or off"
                ))),
            },
        })
        .collect()
}

fn one<T: FromStr>(name: &str) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    name.trim()
        .parse()
        .map_err(|e: T::Err| SelectError::UnknownName(e.to_string()))
}

fn many<T: FromStr + Copy>(list: &str, all: &[T]) -> Result<Vec<T>>
where
    T::Err: std::fmt::Display,
{
    if list.trim() == "all" {
        return Ok(all.to_vec());
    }
    list.split(',').map(one).collect()
}

/// The environment variable that says how host threads wait for a GPU ([`host_wait`]):
/// read by [`AnyBackend::open`](crate::AnyBackend::open) for the CUDA and ROCm backends.
pub const HOST_WAIT_VAR: &str = "MEMHC_GPU_WAIT";

/// How host threads wait for a GPU, by name: `auto` (the driver's default), `spin`, `yield` or
/// `block` ([`HostWait`]; spaces around it ignored).
pub fn host_wait(name: &str) -> Result<HostWait> {
    among(
        name,
        &HostWait::ALL,
        |w| w.name(),
        HOST_WAIT_VAR,
        "way to wait",
        "auto, spin, yield or block",
    )
}

/// [`host_wait`] of [`HOST_WAIT_VAR`], or [`HostWait::Auto`] where it is not set.
pub fn host_wait_from_env() -> Result<HostWait> {
    from_env(HOST_WAIT_VAR, host_wait, HostWait::Auto)
}

/// The environment variable that says how a GPU computes a GEMM of one complex product
/// ([`complex_gemm`]): read by [`AnyBackend::open`](crate::AnyBackend::open) for the CUDA and
/// ROCm backends.
pub const COMPLEX_GEMM_VAR: &str = "MEMHC_GPU_GEMM";

/// How a GPU computes a GEMM of one complex product, by name: `standard` (the BLAS's) or
/// `gauss` (three real products; [`ComplexGemm`]; spaces around it ignored).
pub fn complex_gemm(name: &str) -> Result<ComplexGemm> {
    among(
        name,
        &ComplexGemm::ALL,
        |g| g.name(),
        COMPLEX_GEMM_VAR,
        "complex GEMM",
        "standard or gauss",
    )
}

/// [`complex_gemm`] of [`COMPLEX_GEMM_VAR`], or [`ComplexGemm::Standard`] where it is not set.
pub fn complex_gemm_from_env() -> Result<ComplexGemm> {
    from_env(COMPLEX_GEMM_VAR, complex_gemm, ComplexGemm::Standard)
}

/// The one of `all` whose name is `name` (spaces around it ignored), or a one-line error that
/// names the variable `var`, what it sets (`what`) and the names there are (`names`).
fn among<T: Copy>(
    name: &str,
    all: &[T],
    name_of: fn(T) -> &'static str,
    var: &str,
    what: &str,
    names: &str,
) -> Result<T> {
    let name = name.trim();
    all.iter()
        .copied()
        .find(|&t| name_of(t) == name)
        .ok_or_else(|| {
            SelectError::UnknownName(format!("{var}: unknown {what} '{name}' ({names})"))
        })
}

/// The setting `var` names, read by `parse`, or `unset` where the variable is not set.
fn from_env<T>(var: &str, parse: fn(&str) -> Result<T>, unset: T) -> Result<T> {
    match std::env::var(var) {
        Ok(name) => parse(&name),
        Err(std::env::VarError::NotPresent) => Ok(unset),
        Err(std::env::VarError::NotUnicode(_)) => Err(SelectError::UnknownName(format!(
            "{var} is not valid Unicode"
        ))),
    }
}

/// The environment variable that says how a GPU issues a tiled copy from or into page-locked
/// memory ([`tiled_copies`]): read by [`AnyBackend::open`](crate::AnyBackend::open) for the
/// model, CUDA and ROCm backends.
pub const TILED_VAR: &str = "MEMHC_GPU_TILED";

/// How a GPU issues a tiled copy from or into page-locked memory, by name: `component` (one 2D
/// copy per component, the default) or `column` (one 3D copy per block column)
/// ([`TiledCopies`]; spaces around it ignored).
pub fn tiled_copies(name: &str) -> Result<TiledCopies> {
    among(
        name,
        &TiledCopies::ALL,
        |t| t.name(),
        TILED_VAR,
        "way to issue tiled copies",
        "component or column",
    )
}

/// [`tiled_copies`] of [`TILED_VAR`], or [`TiledCopies::PerComponent`] where it is not set.
pub fn tiled_copies_from_env() -> Result<TiledCopies> {
    from_env(TILED_VAR, tiled_copies, TiledCopies::PerComponent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_names_and_lists() {
        assert_eq!(policy("belady"), Ok(PolicyKind::Belady));
        assert_eq!(policy(" pp-lru "), Ok(PolicyKind::PpLru));
        assert_eq!(mode("reorg-sync"), Ok(Mode::ReorgSync));
        assert_eq!(mode("unified"), Ok(Mode::Unified));
        assert_eq!(alloc("arena"), Ok(Alloc::Arena));
        assert_eq!(
            policies("lru, belady"),
            Ok(vec![PolicyKind::Lru, PolicyKind::Belady])
        );
        assert_eq!(policies("all").map(|p| p.len()), Ok(7));
        assert_eq!(
            modes("all"),
            Ok(vec![
                Mode::Naive,
                Mode::Reorg,
                Mode::ReorgSync,
                Mode::Optimal
            ])
        );
        assert_eq!(
            modes("optimal,unified"),
            Ok(vec![Mode::Optimal, Mode::Unified])
        );
        assert_eq!(
            allocs("all"),
            Ok(vec![Alloc::Driver, Alloc::Handover, Alloc::Arena])
        );
    }

    #[test]
    fn prefetch_settings() {
        assert_eq!(prefetches("off, 12,1"), Ok(vec![None, Some(12), Some(1)]));
        for bad in ["0", "-3", "many", ""] {
            let e = prefetches(bad).err().map(|e| e.to_string());
            assert!(
                e.as_deref()
                    .is_some_and(|t| t.contains("a prefetch window of at least 1")),
                "{bad}: {e:?}"
            );
        }
    }

    #[test]
    fn unknown_names_say_which_exist() {
        let text = |r: Result<Vec<PolicyKind>>| r.err().map(|e| e.to_string());
        assert!(
            text(policies("lru,lfu")).is_some_and(|t| t.contains("unknown eviction policy 'lfu'"))
        );
        let m = modes("fast").err().map(|e| e.to_string());
        assert!(m.is_some_and(|t| t.contains("unknown mode 'fast'")));
        let a = allocs("slab").err().map(|e| e.to_string());
        assert!(a.is_some_and(|t| t.contains("unknown allocation mode 'slab'")));
        assert!(policies("").is_err() && modes("optimal,").is_err());
    }

    #[test]
    fn host_memory_names() {
        assert_eq!(host_memory("pageable"), Ok(HostMemoryKind::Pageable));
        assert_eq!(host_memory(" pinned "), Ok(HostMemoryKind::Pinned));
        assert_eq!(HostMemoryKind::default(), HostMemoryKind::Pageable);
        for bad in ["", "locked", "Pinned", "pinned,pageable"] {
            let e = host_memory(bad).err().map(|e| e.to_string());
            assert!(
                e.as_ref()
                    .is_some_and(|t| t.contains("unknown host memory") && !t.contains('\n')),
                "{bad}: {e:?}"
            );
        }
    }

    #[test]
    fn complex_gemms_by_name() {
        assert_eq!(complex_gemm(" gauss ").ok(), Some(ComplexGemm::Gauss));
        assert_eq!(complex_gemm("standard").ok(), Some(ComplexGemm::Standard));
        let err = complex_gemm("3m")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("MEMHC_GPU_GEMM") && err.contains("'3m'") && !err.contains('\n'),
            "{err}"
        );
    }

    #[test]
    fn host_waits_by_name() {
        assert_eq!(host_wait(" block ").ok(), Some(HostWait::Block));
        assert_eq!(host_wait("spin").ok(), Some(HostWait::Spin));
        assert_eq!(host_wait("yield").ok(), Some(HostWait::Yield));
        assert_eq!(host_wait("auto").ok(), Some(HostWait::Auto));
        let err = host_wait("sleep")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("MEMHC_GPU_WAIT") && err.contains("'sleep'"),
            "{err}"
        );
    }

    #[test]
    fn tiled_copies_by_name() {
        assert_eq!(tiled_copies("component"), Ok(TiledCopies::PerComponent));
        assert_eq!(tiled_copies(" column "), Ok(TiledCopies::PerColumn));
        assert_eq!(TiledCopies::default(), TiledCopies::PerComponent);
        for bad in ["", "columns", "Column", "3d", "component,column"] {
            let err = tiled_copies(bad)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                err.contains("MEMHC_GPU_TILED")
                    && err.contains(&format!("'{}'", bad.trim()))
                    && err.contains("component or column")
                    && !err.contains('\n'),
                "{bad}: {err}"
            );
        }
    }
}
