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

use crate::adaptor::{Adaptor, Call, Hooks};
use crate::{Backend, BackendError, BackendOp};

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

/// The state of a [`FaultInjector`]: its [`Hooks`].
#[derive(Debug)]
pub struct Faults {
    state: Mutex<Armed>,
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

/// The fault-injecting wrapper: an [`Adaptor`] with [`Faults`] as hooks. See the
/// [module documentation](self).
pub type FaultInjector<B> = Adaptor<B, Faults>;

impl<B> Adaptor<B, Faults> {
    /// Wraps `inner`; it fails nothing until [`FaultInjector::arm`] is called.
    pub fn new(inner: B) -> Self {
        Adaptor::with_hooks(
            inner,
            Faults {
                state: Mutex::new(Armed {
                    plan: FaultPlan::never(),
                    rng: ChaCha8Rng::seed_from_u64(0),
                    watched_calls: 0,
                    per_op_calls: Vec::new(),
                    injected: 0,
                    suspended: false,
                }),
            },
        )
    }

    /// Installs a plan and restarts the count of watched calls.
    pub fn arm(&self, plan: FaultPlan) {
        let mut s = self.hooks().lock();
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
        self.hooks().lock().suspended = suspended;
    }

    /// How many faults were injected so far.
    pub fn injected(&self) -> u64 {
        self.hooks().lock().injected
    }
}

impl Faults {
    fn lock(&self) -> std::sync::MutexGuard<'_, Armed> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Hooks for Faults {
    fn name(&self, inner: String) -> String {
        format!("{inner} with fault injection")
    }

    /// Counts a call of kind `op` and decides whether it fails.
    fn before<B: Backend>(&self, inner: &B, call: &Call) -> Result<(), BackendError> {
        let op = call.op();
        let mut s = self.lock();
        if s.suspended {
            return Ok(());
        }
        let n = match s.per_op_calls.iter_mut().find(|(o, _)| *o == op) {
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
        if let (true, Call::Alloc { bytes } | Call::AllocManaged { bytes }) =
            (s.plan.alloc_as_oom, *call)
        {
            let free = inner.mem_info().map(|m| m.free).unwrap_or(0);
            return Err(BackendError::OutOfMemory {
                requested: bytes,
                free,
            });
        }
        Err(BackendError::Injected { op, call: n })
    }
}
