//! A backend wrapper that fails chosen calls on purpose, to test that the runtime reports the
//! error, keeps its tables consistent and loses no data.
//!
//! A [`FaultInjector`] counts the calls of each [`BackendOp`] it watches and fails one of them
//! according to its [`FaultPlan`]: the n-th call, or each call with a seeded probability. A
//! failed call does nothing at all on the inner backend (it is refused before it is forwarded)
//! and returns [`BackendError::Injected`], or [`BackendError::OutOfMemory`] for an allocation
//! when the plan says so (which exercises the runtime's evict-and-retry path instead).

use std::sync::Mutex;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::gemm::{GeamShape, GemmItem, GemmShape, StridedBatch};
use super::{Backend, Location, MemInfo};
use crate::error::{BackendError, BackendOp};

/// When to fail.
#[derive(Clone, Debug, PartialEq)]
pub enum Trigger {
    /// Never (the wrapper only counts).
    Never,
    /// The n-th watched call (1-based, counting all watched kinds together), once.
    Nth(u64),
    /// Each watched call independently with this probability, from a seeded generator.
    Random {
        /// Probability of failing one call, in `[0, 1]`.
        probability: f64,
        /// Seed of the generator.
        seed: u64,
    },
}

/// Which calls to watch and when to fail one.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultPlan {
    /// The kinds of call that count and may fail.
    pub ops: Vec<BackendOp>,
    /// When to fail.
    pub trigger: Trigger,
    /// Fail allocations with [`BackendError::OutOfMemory`] instead of
    /// [`BackendError::Injected`].
    pub alloc_as_oom: bool,
}

impl FaultPlan {
    /// A plan that never fails.
    pub fn never() -> Self {
        FaultPlan {
            ops: Vec::new(),
            trigger: Trigger::Never,
            alloc_as_oom: false,
        }
    }

    /// Fail the `n`-th call among `ops`.
    pub fn nth(ops: &[BackendOp], n: u64) -> Self {
        FaultPlan {
            ops: ops.to_vec(),
            trigger: Trigger::Nth(n),
            alloc_as_oom: false,
        }
    }

    /// Fail each call among `ops` with `probability`, reproducibly from `seed`.
    pub fn random(ops: &[BackendOp], probability: f64, seed: u64) -> Self {
        FaultPlan {
            ops: ops.to_vec(),
            trigger: Trigger::Random { probability, seed },
            alloc_as_oom: false,
        }
    }

    /// The same plan, failing allocations as out-of-memory.
    pub fn alloc_as_oom(mut self) -> Self {
        self.alloc_as_oom = true;
        self
    }
}

#[derive(Debug)]
struct Armed {
    plan: FaultPlan,
    rng: ChaCha8Rng,
    watched_calls: u64,
    per_op_calls: Vec<(BackendOp, u64)>,
    injected: u64,
    suspended: bool,
}

/// The fault-injecting wrapper. See the [module documentation](self).
#[derive(Debug)]
pub struct FaultInjector<B> {
    inner: B,
    state: Mutex<Armed>,
}

impl<B: Backend> FaultInjector<B> {
    /// Wraps `inner`; it fails nothing until [`FaultInjector::arm`] is called.
    pub fn new(inner: B) -> Self {
        FaultInjector {
            inner,
            state: Mutex::new(Armed {
                plan: FaultPlan::never(),
                rng: ChaCha8Rng::seed_from_u64(0),
                watched_calls: 0,
                per_op_calls: Vec::new(),
                injected: 0,
                suspended: false,
            }),
        }
    }

    /// Installs a plan and restarts the count of watched calls.
    pub fn arm(&self, plan: FaultPlan) {
        let mut s = self.lock();
        let seed = match plan.trigger {
            Trigger::Random { seed, .. } => seed,
            _ => 0,
        };
        s.rng = ChaCha8Rng::seed_from_u64(seed);
        s.plan = plan;
        s.watched_calls = 0;
    }

    /// Stops failing calls.
    pub fn disarm(&self) {
        self.arm(FaultPlan::never());
    }

    /// Suspends (`true`) or resumes (`false`) the plan without resetting it: while suspended,
    /// calls are neither counted nor failed (for example while a test inspects the runtime).
    pub fn suspend(&self, suspended: bool) {
        self.lock().suspended = suspended;
    }

    /// How many faults were injected so far.
    pub fn injected(&self) -> u64 {
        self.lock().injected
    }

    /// The wrapped backend.
    pub fn inner(&self) -> &B {
        &self.inner
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Armed> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts a call of kind `op` and decides whether it fails.
    fn gate(&self, op: BackendOp, bytes: usize) -> Result<(), BackendError> {
        let mut s = self.lock();
        if s.suspended {
            return Ok(());
        }
        let call = match s.per_op_calls.iter_mut().find(|(o, _)| *o == op) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                s.per_op_calls.push((op, 1));
                1
            }
        };
        if !s.plan.ops.contains(&op) {
            return Ok(());
        }
        s.watched_calls += 1;
        let fail = match s.plan.trigger {
            Trigger::Never => false,
            Trigger::Nth(n) => s.watched_calls == n,
            Trigger::Random { probability, .. } => s.rng.random_bool(probability.clamp(0.0, 1.0)),
        };
        if !fail {
            return Ok(());
        }
        s.injected += 1;
        if op == BackendOp::Alloc && s.plan.alloc_as_oom {
            let free = self.inner.mem_info().map(|m| m.free).unwrap_or(0);
            return Err(BackendError::OutOfMemory {
                requested: bytes,
                free,
            });
        }
        Err(BackendError::Injected { op, call })
    }
}

impl<B: Backend> Backend for FaultInjector<B> {
    type Buffer = B::Buffer;
    type Stream = B::Stream;
    type Event = B::Event;
    type HostBuffer = B::HostBuffer;

    fn name(&self) -> String {
        format!("{} with fault injection", self.inner.name())
    }

    fn mem_info(&self) -> Result<MemInfo, BackendError> {
        self.inner.mem_info()
    }

    fn alloc(&self, bytes: usize) -> Result<Self::Buffer, BackendError> {
        self.gate(BackendOp::Alloc, bytes)?;
        self.inner.alloc(bytes)
    }

    fn free(&self, buffer: Self::Buffer) -> Result<(), BackendError> {
        // An injected free failure must not leak: the buffer is still released underneath.
        let gate = self.gate(BackendOp::Free, 0);
        let result = self.inner.free(buffer);
        gate.and(result)
    }

    fn create_stream(&self) -> Result<Self::Stream, BackendError> {
        self.inner.create_stream()
    }

    fn create_event(&self) -> Result<Self::Event, BackendError> {
        self.inner.create_event()
    }

    fn record_event(&self, event: &Self::Event, stream: &Self::Stream) -> Result<(), BackendError> {
        self.gate(BackendOp::Sync, 0)?;
        self.inner.record_event(event, stream)
    }

    fn wait_event(&self, stream: &Self::Stream, event: &Self::Event) -> Result<(), BackendError> {
        self.gate(BackendOp::Sync, 0)?;
        self.inner.wait_event(stream, event)
    }

    fn event_query(&self, event: &Self::Event) -> Result<bool, BackendError> {
        self.inner.event_query(event)
    }

    fn event_synchronize(&self, event: &Self::Event) -> Result<(), BackendError> {
        self.inner.event_synchronize(event)
    }

    fn stream_synchronize(&self, stream: &Self::Stream) -> Result<(), BackendError> {
        self.inner.stream_synchronize(stream)
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.inner.synchronize()
    }

    fn copy_h2d(
        &self,
        stream: &Self::Stream,
        src: &[u8],
        dst: &Self::Buffer,
        dst_offset: usize,
    ) -> Result<(), BackendError> {
        self.gate(BackendOp::CopyH2D, src.len())?;
        self.inner.copy_h2d(stream, src, dst, dst_offset)
    }

    fn alloc_host(&self, bytes: usize) -> Result<Self::HostBuffer, BackendError> {
        self.inner.alloc_host(bytes)
    }

    fn copy_d2h_async(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &Self::HostBuffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        self.gate(BackendOp::CopyD2H, len)?;
        self.inner
            .copy_d2h_async(stream, src, src_offset, dst, dst_offset, len)
    }

    fn copy_d2h(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        self.gate(BackendOp::CopyD2H, dst.len())?;
        self.inner.copy_d2h(stream, src, src_offset, dst)
    }

    fn gemm_batched(
        &self,
        stream: &Self::Stream,
        shape: &GemmShape,
        items: &[GemmItem<'_, Self::Buffer>],
    ) -> Result<(), BackendError> {
        self.gate(BackendOp::Gemm, 0)?;
        self.inner.gemm_batched(stream, shape, items)
    }

    fn geam_batched(
        &self,
        stream: &Self::Stream,
        shape: &GeamShape,
        items: &[GemmItem<'_, Self::Buffer>],
    ) -> Result<(), BackendError> {
        self.gate(BackendOp::Gemm, 0)?;
        self.inner.geam_batched(stream, shape, items)
    }

    fn gemm_strided_batched(
        &self,
        stream: &Self::Stream,
        shape: &GemmShape,
        batch: &StridedBatch<'_, Self::Buffer>,
    ) -> Result<(), BackendError> {
        self.gate(BackendOp::Gemm, 0)?;
        self.inner.gemm_strided_batched(stream, shape, batch)
    }

    fn supports_managed(&self) -> bool {
        self.inner.supports_managed()
    }

    fn alloc_managed(&self, bytes: usize) -> Result<Self::Buffer, BackendError> {
        self.gate(BackendOp::Alloc, bytes)?;
        self.inner.alloc_managed(bytes)
    }

    fn managed_write(
        &self,
        dst: &Self::Buffer,
        dst_offset: usize,
        src: &[u8],
    ) -> Result<(), BackendError> {
        self.gate(BackendOp::CopyH2D, src.len())?;
        self.inner.managed_write(dst, dst_offset, src)
    }

    fn managed_read(
        &self,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        self.gate(BackendOp::CopyD2H, dst.len())?;
        self.inner.managed_read(src, src_offset, dst)
    }

    fn prefetch(
        &self,
        stream: &Self::Stream,
        buffer: &Self::Buffer,
        to: Location,
    ) -> Result<(), BackendError> {
        self.gate(BackendOp::Sync, 0)?;
        self.inner.prefetch(stream, buffer, to)
    }

    fn advise_read_mostly(&self, buffer: &Self::Buffer) -> Result<(), BackendError> {
        self.inner.advise_read_mostly(buffer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::host::HostBackend;

    #[test]
    fn nth_call_fails_once_and_does_nothing() {
        let b = FaultInjector::new(HostBackend::new(1 << 20));
        b.arm(FaultPlan::nth(&[BackendOp::Alloc], 2));
        let x = b.alloc(64).unwrap();
        let e = b.alloc(64).unwrap_err();
        assert_eq!(
            e,
            BackendError::Injected {
                op: BackendOp::Alloc,
                call: 2
            }
        );
        assert_eq!(b.inner().used(), 64, "the failed call must not allocate");
        let y = b.alloc(64).unwrap();
        assert_eq!(b.injected(), 1);
        b.free(x).unwrap();
        b.free(y).unwrap();
    }

    #[test]
    fn oom_flavour_and_random_plans_are_reproducible() {
        let b = FaultInjector::new(HostBackend::new(1 << 20));
        b.arm(FaultPlan::nth(&[BackendOp::Alloc], 1).alloc_as_oom());
        assert!(matches!(
            b.alloc(8),
            Err(BackendError::OutOfMemory { requested: 8, .. })
        ));
        let pattern = |seed| {
            b.arm(FaultPlan::random(&[BackendOp::Alloc], 0.5, seed));
            (0..32)
                .map(|_| b.alloc(16).map(|buf| b.free(buf)).is_ok())
                .collect::<Vec<_>>()
        };
        assert_eq!(pattern(7), pattern(7));
        assert!(pattern(7).iter().any(|ok| !ok) && pattern(7).iter().any(|ok| *ok));
    }
}
