//! How a GPU backend is opened: which device, how much of its memory, and how copies are
//! staged. One type for every GPU backend.

use memhc_backend::{BackendError, BackendOp};

/// Bytes a backend leaves free below the card's free memory by default: the larger of
/// 512 MiB and 1/32 of it, for the BLAS library's workspace, the pointer tables and the
/// driver's own allocations.
pub fn default_margin(free: usize) -> usize {
    (free / 32).max(512 << 20)
}

/// The budget a GPU backend uses when not told: the card's free memory minus
/// [`default_margin`] (zero if the card has less free than that).
pub fn default_budget(free: usize) -> usize {
    free.saturating_sub(default_margin(free))
}

/// How host-to-device copies are staged through page-locked memory, per stream (see the
/// [crate documentation](crate) for why).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StagingLimits {
    /// The largest piece a copy is staged in, in bytes (> 0); default 8 MiB.
    pub chunk: usize,
    /// Idle staging bytes a stream keeps for reuse; default 64 MiB.
    pub idle_cap: usize,
    /// Staging bytes a stream may have in flight before a copy waits for the oldest piece to
    /// reach the device; default 256 MiB.
    pub busy_cap: usize,
}

impl Default for StagingLimits {
    fn default() -> Self {
        StagingLimits {
            chunk: 8 << 20,
            idle_cap: 64 << 20,
            busy_cap: 256 << 20,
        }
    }
}

/// When [`GpuBackend::adopt_pageable`](crate::GpuBackend::adopt_pageable) registers a caller's
/// pageable buffer (page-locks it in place, `cuMemHostRegister`) rather than leaving it to be
/// staged: when it is at least [`RegisterRule::min_bytes`] long and expected to be copied at
/// least [`RegisterRule::min_copies`] times.
///
/// The defaults come from the modelled H100 ([`ModelParams::h100`](crate::model::ModelParams::h100)),
/// whose registration rate is the H100's: registering and unregistering costs the host about
/// `bytes / register_rate` (8.2 GB/s), after which a copy is one DMA (55 GB/s); a staged copy
/// takes its staging, `bytes / staging_write_rate` (16.8 GB/s, split over threads; its DMAs
/// overlap it). Registration pays once the copies' savings exceed it: from the fourth copy on
/// ([`ModelParams::register_break_even`](crate::model::ModelParams::register_break_even)).
/// Measured on the H100 (`docs/results/2026-11-28-h100-3.md`, memhc-cuda's `register` bench):
/// the break-even is 3.1 copies at 8 MiB and 4.7 at 64 MiB (registered / staged at 4 copies:
/// 0.97 and 1.02; at 16 copies: 0.55 and 0.61), and 5.1 at 1 MiB, where the driver calls'
/// fixed costs weigh more: buffers below one staging chunk (8 MiB) are staged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterRule {
    /// The smallest buffer registered, bytes; default 8 MiB.
    pub min_bytes: usize,
    /// The fewest expected copies for which a buffer is registered; default 4. `usize::MAX`
    /// never registers.
    pub min_copies: usize,
}

impl Default for RegisterRule {
    fn default() -> Self {
        RegisterRule {
            min_bytes: 8 << 20,
            min_copies: 4,
        }
    }
}

impl RegisterRule {
    /// Whether a buffer of `bytes` expected to be copied `copies` times is registered.
    pub fn registers(&self, bytes: usize, copies: usize) -> bool {
        bytes >= self.min_bytes && copies >= self.min_copies
    }
}

/// How a host thread waits for the device (a stream, an event, the whole device) to finish:
/// the context's scheduling flag.
///
/// `Auto` leaves the choice to the driver (CUDA: spin while the process has no more active
/// contexts than the machine has cores, else yield). `Spin` keeps the thread on its core,
/// polling: the lowest latency, and a whole core busy for as long as the wait lasts. `Yield`
/// polls but gives the core up between polls. `Block` puts the thread to sleep on a driver
/// primitive until the device signals: no core is used while waiting (other ranks and threads
/// of the node get it), at the price of a wake-up latency (microseconds) per wait. memhc waits
/// only where a value is needed, at vector boundaries, and for staging slots.
///
/// CUDA sets the primary context's `CU_CTX_SCHED_*` flag and creates events with
/// `CU_EVENT_BLOCKING_SYNC` for `Block`; HIP calls `hipSetDeviceFlags` and creates events with
/// `hipEventBlockingSync`. Chosen by name with `MEMHC_GPU_WAIT` (`auto`, `spin`, `yield`, `block`) wherever memhc
/// opens a GPU backend by name (`memhc`, memhc-synth, C, Python).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HostWait {
    /// The driver's default.
    #[default]
    Auto,
    /// Poll without giving up the core.
    Spin,
    /// Poll, giving up the core between polls.
    Yield,
    /// Sleep until the device signals.
    Block,
}

impl HostWait {
    /// Every way, in the order the documentation lists them.
    pub const ALL: [HostWait; 4] = [
        HostWait::Auto,
        HostWait::Spin,
        HostWait::Yield,
        HostWait::Block,
    ];

    /// The name: `auto`, `spin`, `yield` or `block`.
    pub fn name(self) -> &'static str {
        match self {
            HostWait::Auto => "auto",
            HostWait::Spin => "spin",
            HostWait::Yield => "yield",
            HostWait::Block => "block",
        }
    }
}

/// How a GEMM call of one complex product is computed.
///
/// `Standard` is the BLAS's complex product (`cublasZgemm*`, `rocblas_zgemm*`: four real
/// products' worth of flops per complex product). `Gauss` computes a call of one product
/// (what a layered meson contraction on tiled nodes issues, one product of order `4N`) with
/// three real products instead of four (Gauss's trick, `cublasZgemm3m`): a quarter fewer
/// flops, and a rounding that differs from the standard product's (the real part is a
/// difference of two products, the imaginary part a product of sums less two products; the
/// conformance suite and `--verify` hold it to the same 1e-12 of the reference). Batched calls
/// are computed the standard way either way (cuBLAS has no batched three-product ZGEMM). A
/// backend without such a call (HIP; a cuBLAS without `cublasZgemm3m`) refuses `Gauss` when it
/// opens, in one line. Chosen by name with `MEMHC_GPU_GEMM` (`standard`, `gauss`) wherever
/// memhc opens a GPU backend by name. Not yet measured on a GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ComplexGemm {
    /// The BLAS's complex product.
    #[default]
    Standard,
    /// Three real products per complex product, for calls of one product.
    Gauss,
}

impl ComplexGemm {
    /// Every way, in the order the documentation lists them.
    pub const ALL: [ComplexGemm; 2] = [ComplexGemm::Standard, ComplexGemm::Gauss];

    /// The name: `standard` or `gauss`.
    pub fn name(self) -> &'static str {
        match self {
            ComplexGemm::Standard => "standard",
            ComplexGemm::Gauss => "gauss",
        }
    }
}

/// How a tiled copy between page-locked host memory and the device
/// ([`Backend::copy_h2d_async_tiled`](memhc_backend::Backend::copy_h2d_async_tiled) and
/// [`Backend::copy_d2h_async_tiled`](memhc_backend::Backend::copy_d2h_async_tiled)) is issued:
/// the layouts are [`memhc_backend::tiles`]'.
///
/// `PerComponent` issues one 2D copy per component (`cuMemcpy2DAsync`: `g²` driver calls per
/// object, 16 for a meson node); `PerColumn` one 3D copy per block column (`cuMemcpy3DAsync`:
/// `g` calls, 4 for a meson node), the same bytes to the same places. The host's cost of
/// issuing a copy is mostly per call, so `PerColumn` saves it where the host thread is the
/// bottleneck (small nodes). `PerComponent` stays the default until the 3D copies have run on
/// a GPU. Copies staged through the stream's buffers (from or into pageable memory) are 2D
/// copies either way. Chosen by name with `MEMHC_GPU_TILED` (`component`, `column`) wherever
/// memhc opens a GPU backend by name (the model backend included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TiledCopies {
    /// One 2D copy per component.
    #[default]
    PerComponent,
    /// One 3D copy per block column.
    PerColumn,
}

impl TiledCopies {
    /// Both, in the order the documentation lists them.
    pub const ALL: [TiledCopies; 2] = [TiledCopies::PerComponent, TiledCopies::PerColumn];

    /// The name: `component` or `column`.
    pub fn name(self) -> &'static str {
        match self {
            TiledCopies::PerComponent => "component",
            TiledCopies::PerColumn => "column",
        }
    }
}

/// Options of a [`GpuBackend`](crate::GpuBackend): which device, its budget, and staging.
/// Fields can be set directly or with the builder methods:
///
/// ```
/// use memhc_gpu::GpuOptions;
/// let options = GpuOptions::default().device(1).budget(8 << 30);
/// assert_eq!((options.device, options.budget), (1, Some(8 << 30)));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuOptions {
    /// The device ordinal, as the driver numbers the visible devices (0 unless told).
    pub device: usize,
    /// The bytes of device memory the backend may allocate (device and managed together).
    /// `None`: the device's free memory when the backend is created, minus
    /// [`default_margin`]. A budget above the free memory is refused.
    pub budget: Option<usize>,
    /// How copies are staged.
    pub staging: StagingLimits,
    /// When caller memory is registered rather than staged.
    pub register: RegisterRule,
    /// How host threads wait for the device.
    pub host_wait: HostWait,
    /// How a GEMM call of one complex product is computed.
    pub complex_gemm: ComplexGemm,
    /// How a tiled copy from or into page-locked host memory is issued.
    pub tiled: TiledCopies,
}

impl GpuOptions {
    /// Sets the device ordinal.
    pub fn device(mut self, index: usize) -> Self {
        self.device = index;
        self
    }

    /// Sets the budget in bytes (for oversubscription experiments on a card larger than the
    /// data).
    pub fn budget(mut self, bytes: usize) -> Self {
        self.budget = Some(bytes);
        self
    }

    /// Sets how host threads wait for the device.
    pub fn host_wait(mut self, wait: HostWait) -> Self {
        self.host_wait = wait;
        self
    }

    /// Sets how a GEMM call of one complex product is computed.
    pub fn complex_gemm(mut self, gemm: ComplexGemm) -> Self {
        self.complex_gemm = gemm;
        self
    }

    /// Sets how a tiled copy from or into page-locked host memory is issued.
    pub fn tiled(mut self, copies: TiledCopies) -> Self {
        self.tiled = copies;
        self
    }

    /// Sets the staging limits.
    pub fn staging(mut self, limits: StagingLimits) -> Self {
        self.staging = limits;
        self
    }

    /// The budget on a device of `kind` with `free` bytes free: the one asked for, which must
    /// be positive and at most `free` ([`BackendError::InvalidArgument`] otherwise), or
    /// [`default_budget`], which must be positive ([`BackendError::Unavailable`] otherwise).
    pub fn resolve_budget(&self, kind: &str, free: usize) -> Result<usize, BackendError> {
        match self.budget {
            Some(0) => Err(BackendError::invalid(
                BackendOp::Alloc,
                "a budget of zero bytes",
            )),
            Some(b) if b > free => Err(BackendError::invalid(
                BackendOp::Alloc,
                format!("a budget of {b} bytes, but the device has {free} bytes free"),
            )),
            Some(b) => Ok(b),
            None => match default_budget(free) {
                0 => Err(BackendError::Unavailable(format!(
                    "{kind} device {} has only {free} bytes free, less than the margin the \
                     backend leaves; give a budget explicitly",
                    self.device
                ))),
                b => Ok(b),
            },
        }
    }

    /// Checks the staging limits: a chunk of zero bytes is an invalid argument.
    pub fn validate(&self) -> Result<(), BackendError> {
        if self.staging.chunk == 0 {
            return Err(BackendError::invalid(
                BackendOp::CopyH2D,
                "a staging chunk of zero bytes",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_leaves_a_margin() {
        assert_eq!(default_budget(80 << 30), (80 << 30) - ((80 << 30) / 32));
        assert_eq!(default_budget(1 << 30), (1 << 30) - (512 << 20));
        assert_eq!(default_budget(100), 0);
        assert_eq!(default_margin(64 << 30), 2 << 30);
    }

    #[test]
    fn budgets_are_resolved_or_refused_in_one_line() {
        let o = GpuOptions::default();
        assert_eq!(o.resolve_budget("X", 4 << 30), Ok((4 << 30) - (512 << 20)));
        let e = o.resolve_budget("HIP", 100).err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some(
                "backend unavailable: HIP device 0 has only 100 bytes free, less than the \
                 margin the backend leaves; give a budget explicitly"
            )
        );
        assert_eq!(o.clone().budget(7).resolve_budget("X", 100), Ok(7));
        for b in [0, 101] {
            match o.clone().budget(b).resolve_budget("X", 100) {
                Err(BackendError::InvalidArgument { reason, .. }) => {
                    assert!(reason.contains("budget"), "{reason}");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_zero_chunk_is_refused() {
        let mut o = GpuOptions::default();
        assert!(o.validate().is_ok());
        o.staging.chunk = 0;
        assert!(matches!(
            o.validate(),
            Err(BackendError::InvalidArgument { .. })
        ));
    }
}
