//! Exact memory planning without data: dry runs of the real runtime on the null backend
//! ([`memhc_host::null::NullBackend`], which holds no values and does no arithmetic but
//! accounts device memory and validates every call exactly like a device).
//!
//! For a queue, [`plan`] works out
//!
//! * the **peak without eviction** of each mode: the most device bytes a run holds when the
//!   budget never binds (a dry run with no limit; pooled buffers included where lazy release
//!   keeps them);
//! * the **least budget without eviction** of each mode: the smallest budget at which a run
//!   evicts nothing (the policy is never asked, so this is the same for every policy);
//! * the **least budget that runs** of each policy and mode: below it the runtime stops with
//!   [`memhc_core::Error::DoesNotFit`] (or [`memhc_core::Error::ManagedDoesNotFit`] in unified mode);
//! * a **prediction** for the budget asked about, per policy and mode: the statistics a real
//!   run makes (allocations, pool reuses, hits, misses, evictions, write-backs, bytes moved,
//!   peak, flops), or the error it stops with.
//!
//! The predictions are exact, not modelled: they are the runtime's own counts on a backend
//! that does everything but the arithmetic, and the counts depend on the queue and the
//! configuration only, never on values or timing (`memhc-core`'s property test
//! `the_null_backend_reproduces_every_statistic`; this crate's `tests/plan.rs` checks the
//! predictions against real runs on the host backend). They hold for any backend whose device
//! has the budget free.
//!
//! The two least budgets are found by dry runs: first at a computed candidate, then one byte
//! below it; when the candidate runs and one byte less does not, the candidate is the answer
//! (two dry runs). The candidates: for "without eviction", the peak of a dry run with no limit
//! and lazy release off (whenever the budget allows the live objects plus one new buffer, the
//! runtime frees the pool instead of evicting, so the pool never needs room of its own); for
//! "runs", the largest working set of one contraction (its inputs and output are pinned
//! together: no budget can be smaller), or in unified mode, where nothing is ever evicted, the
//! least budget without eviction. Should a candidate not be confirmed, a binary search over
//! budgets with dry runs finds the boundary between the largest budget known to fail and the
//! smallest known to run; both properties are monotone in the budget (a larger budget only
//! drains the pool less often, and a launch's working set does not depend on the budget).

use memhc_core::{Config, Mode, PolicyKind, Stats};

use crate::error::{Error, Result};
use crate::run::{dry_run, largest_working_set, peak_without_eviction};
use crate::workload::{Analysis, Workload};

/// What to plan for.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanSpec {
    /// The eviction policies.
    pub policies: Vec<PolicyKind>,
    /// The modes.
    pub modes: Vec<Mode>,
    /// The device budget the predictions are for, in bytes.
    pub budget: usize,
    /// Streams (as in a run: contraction `i` of a vector on stream `i mod streams`).
    pub streams: usize,
}

/// What a run at the plan's budget does.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum Prediction {
    /// It runs to the end, with these statistics.
    Runs(Stats),
    /// It stops: the budget cannot hold what must be resident at once. The runtime's message.
    DoesNotFit {
        /// The runtime's error, in words.
        message: String,
    },
}

impl Prediction {
    /// The statistics, when the run completes.
    pub fn stats(&self) -> Option<&Stats> {
        match self {
            Prediction::Runs(s) => Some(s),
            Prediction::DoesNotFit { .. } => None,
        }
    }
}

/// The plan of one policy in one mode.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PolicyPlan {
    /// The policy.
    pub policy: PolicyKind,
    /// The least budget at which a run completes (evicting as needed), in bytes.
    pub least_budget: usize,
    /// What a run at the plan's budget does.
    pub prediction: Prediction,
}

/// The plan of one mode.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ModePlan {
    /// The mode.
    pub mode: Mode,
    /// The most device bytes a run holds when the budget never binds.
    pub peak_bytes: usize,
    /// The least budget at which a run evicts nothing (the same for every policy).
    pub least_budget_without_eviction: usize,
    /// One plan per policy, in the order asked.
    pub policies: Vec<PolicyPlan>,
}

/// A whole plan. See the [module documentation](self).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MemoryPlan {
    /// The peak without eviction that `--oversub` divides: optimal mode, one stream, released
    /// buffers freed at once ([`peak_without_eviction`]).
    pub peak_without_eviction: usize,
    /// The bytes of the largest contraction's inputs and output ([`largest_working_set`]).
    pub largest_working_set: usize,
    /// The budget of the predictions.
    pub budget: usize,
    /// Streams.
    pub streams: usize,
    /// One plan per mode, in the order asked.
    pub modes: Vec<ModePlan>,
}

/// A dry run that reports running out of room as `Ok(Err(..))`, and any other failure as an
/// error.
fn attempt(w: &Workload, a: &Analysis, config: Config) -> Result<Result<Stats, memhc_core::Error>> {
    match dry_run(w, a, config) {
        Ok(stats) => Ok(Ok(stats)),
        Err(e) => match does_not_fit(&e) {
            Some(e) => Ok(Err(e.clone())),
            None => Err(e),
        },
    }
}

/// The runtime's "does not fit" error inside `e`, if that is what it is.
fn does_not_fit(e: &Error) -> Option<&memhc_core::Error> {
    let runtime = match e {
        Error::Runtime(e) => e,
        Error::Hadron(hadron::HadronError::Runtime(e)) => e,
        _ => return None,
    };
    matches!(
        runtime,
        memhc_core::Error::DoesNotFit { .. } | memhc_core::Error::ManagedDoesNotFit { .. }
    )
    .then_some(runtime)
}

/// The least budget in `1..=upper` at which `ok` holds, given that it holds at `upper`:
/// `hint`, when `ok(hint)` and not `ok(hint - 1)`; else a binary search.
pub fn least_budget(
    hint: usize,
    upper: usize,
    ok: &mut dyn FnMut(usize) -> Result<bool>,
) -> Result<usize> {
    let upper = upper.max(1);
    let hint = hint.clamp(1, upper);
    // Invariant: `lo` fails (0 always does: no budget), `hi` runs.
    let (mut lo, mut hi) = if ok(hint)? {
        if hint == 1 || !ok(hint - 1)? {
            return Ok(hint);
        }
        (0, hint - 1)
    } else {
        (hint, upper)
    };
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

/// Plans `w` as `spec` says. See the [module documentation](self). A queue that puts nothing
/// on the device has nothing to plan and is refused.
pub fn plan(w: &Workload, a: &Analysis, spec: &PlanSpec) -> Result<MemoryPlan> {
    let peak = peak_without_eviction(w, a)?;
    if peak == 0 {
        return Err(Error::Usage(
            "the workload puts nothing on the device (no contractions, no traces): nothing to \
             plan"
                .into(),
        ));
    }
    let working_set = largest_working_set(w, a);
    let mut modes = Vec::with_capacity(spec.modes.len());
    for &mode in &spec.modes {
        let base = Config::for_mode(mode).with_streams(spec.streams);
        let peak_bytes = dry_run(w, a, base.clone())?.peak_device_bytes as usize;
        let hint = if base.lazy_release {
            let unpooled = Config {
                lazy_release: false,
                ..base.clone()
            };
            dry_run(w, a, unpooled)?.peak_device_bytes as usize
        } else {
            peak_bytes
        };
        let without_eviction = least_budget(hint, peak_bytes, &mut |b| {
            Ok(attempt(w, a, base.clone().with_budget(b))?.is_ok_and(|s| s.evictions == 0))
        })?;
        let mut policies = Vec::with_capacity(spec.policies.len());
        for &policy in &spec.policies {
            let config = base.clone().with_policy(policy);
            let hint = if config.managed {
                without_eviction
            } else {
                working_set
            };
            let least_budget = least_budget(hint, without_eviction, &mut |b| {
                Ok(attempt(w, a, config.clone().with_budget(b))?.is_ok())
            })?;
            let prediction = match attempt(w, a, config.with_budget(spec.budget))? {
                Ok(stats) => Prediction::Runs(stats),
                Err(e) => Prediction::DoesNotFit {
                    message: e.to_string(),
                },
            };
            policies.push(PolicyPlan {
                policy,
                least_budget,
                prediction,
            });
        }
        modes.push(ModePlan {
            mode,
            peak_bytes,
            least_budget_without_eviction: without_eviction,
            policies,
        });
    }
    Ok(MemoryPlan {
        peak_without_eviction: peak,
        largest_working_set: working_set,
        budget: spec.budget,
        streams: spec.streams,
        modes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_budget_confirms_a_good_hint_and_searches_past_a_bad_one() {
        let mut calls = 0;
        let mut at_least_37 = |b: usize| {
            calls += 1;
            Ok(b >= 37)
        };
        assert_eq!(least_budget(37, 100, &mut at_least_37).unwrap(), 37);
        assert_eq!(calls, 2, "a right hint costs two tries");
        for hint in [0, 1, 10, 36, 38, 99, 100, 1000] {
            assert_eq!(
                least_budget(hint, 100, &mut |b| Ok(b >= 37)).unwrap(),
                37,
                "{hint}"
            );
        }
        assert_eq!(least_budget(5, 100, &mut |_| Ok(true)).unwrap(), 1);
        assert_eq!(least_budget(5, 100, &mut |b| Ok(b >= 100)).unwrap(), 100);
        assert!(least_budget(5, 100, &mut |_| Err(Error::Usage("x".into()))).is_err());
    }
}
